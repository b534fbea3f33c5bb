/* drivers/ioapic.h - the I/O APIC (Intel 82093AA data sheet; ICH/PCH data sheets).
 *
 * Two registers in the MMIO window: IOREGSEL (+0x00) selects, IOWIN (+0x10) reads or writes.
 * A redirection entry is 64 bits written as two halves; the half holding the mask bit is
 * written so that the entry is never live with a half-written vector: unmasked last. The
 * caller maps the window (uncached) and passes its address. */
#ifndef TICKLAB_DRIVERS_IOAPIC_H
#define TICKLAB_DRIVERS_IOAPIC_H
#include <stdbool.h>
#include <stdint.h>

struct ioapic {
    uintptr_t mmio;
    uint32_t gsi_base;          /* from the MADT */
    uint8_t id, version;
    unsigned pins;              /* redirection entries */
};

enum irq_trigger { TRIGGER_EDGE, TRIGGER_LEVEL };
enum irq_polarity { POLARITY_HIGH, POLARITY_LOW };

#define IOAPIC_ENTRY_MASKED (1ull << 16)   /* a redirection entry's mask bit */

/* Reads ID and version, touching nothing. -ENODEV when the window reads all ones (no
 * IOAPIC there) or reports an impossible entry count. */
int ioapic_probe(struct ioapic *io, uintptr_t mmio, uint32_t gsi_base);
/* ioapic_probe(), then masks every pin. */
int ioapic_init(struct ioapic *io, uintptr_t mmio, uint32_t gsi_base);
/* Programs pin -> vector, fixed delivery, physical destination dest_apic_id (xAPIC: 8-bit),
 * left masked. -EINVAL for a pin the IOAPIC does not have or a vector below 32. */
int ioapic_route(struct ioapic *io, unsigned pin, uint8_t vector, uint8_t dest_apic_id,
                 enum irq_trigger trigger, enum irq_polarity polarity);
void ioapic_mask(struct ioapic *io, unsigned pin);
void ioapic_unmask(struct ioapic *io, unsigned pin);
uint64_t ioapic_read_entry(struct ioapic *io, unsigned pin);

#endif
