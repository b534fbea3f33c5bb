/* kernel/intr/intr.h - interrupt plumbing: the LAPIC, the IOAPICs, the 8259s, vectors.
 *
 * Device interrupts go IOAPIC -> LAPIC when the MADT describes an IOAPIC that answers; the
 * 8259s are then masked and only their spurious IRQ7/IRQ15 are watched. Without a usable
 * IOAPIC the 8259s deliver ISA IRQs (vectors 0x20..0x2F). A device that writes its own
 * message (an MSI: an HPET comparator's FSB delivery) gets a vector and the message to
 * send, no pin (intr_route_msi). A route remembers which path it took, so drivers unmask
 * and acknowledge through intr_* without knowing. */
#ifndef TICKLAB_INTR_INTR_H
#define TICKLAB_INTR_INTR_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/cpuid.h"
#include "ticklab/lapic.h"
#include "kernel/arch/trap.h"
#include "kernel/intr/topology.h"

/* Vector plan. Higher vectors win at the LAPIC (priority class = vector >> 4). */
#define VEC_PIC_BASE     0x20   /* 8259 IRQ0..15 (masked, spurious only, or the fallback) */
#define VEC_ISA_BASE     0x30   /* ISA IRQ n through the IOAPIC: 0x30 + n */
#define VEC_GSI_BASE     0x40   /* other GSIs and messages (HPET comparators): allocated
                                   from here, one vector each, never handed out twice */
#define VEC_GSI_LAST     0xDF
#define VEC_LAPIC_TIMER  0xF0
#define VEC_SELFTEST     0xFD
#define VEC_LAPIC_ERROR  0xFE
#define VEC_SPURIOUS     0xFF   /* low nibble all ones: required by older xAPICs */

enum intr_path { INTR_NONE, INTR_IOAPIC, INTR_PIC, INTR_MSI };

struct intr_route {
    enum intr_path path;
    uint8_t vector;
    uint32_t msi_addr, msi_data;  /* MSI path: the message the device writes (SDM 11.11) */
    uint32_t gsi;             /* IOAPIC path */
    int ioapic;               /* index, IOAPIC path */
    unsigned pin;             /* IOAPIC pin, or 8259 IRQ */
    enum irq_trigger trigger;
    enum irq_polarity polarity;
};

struct intr_stats {
    uint64_t lapic_spurious, lapic_errors, pic_spurious7, pic_spurious15, pic_unexpected;
    uint32_t last_esr;
};

/* Brings up the LAPIC (x2APIC as lapic_choose_x2apic() decides from CPUID, the mode the
 * firmware handed over in, and dmar_x2apic_opt_out: the DMAR's flag) and every IOAPIC the
 * topology names, masks the 8259s, installs the spurious/error handlers, and proves
 * delivery with a self IPI (bounded by the TSC). Reports `lapic`, `ioapic` and `interrupts`
 * records. Returns 0 or a negative errno when the LAPIC could not be enabled. */
int intr_init(const struct intr_topology *topo, const struct cpu_info *cpu,
              bool dmar_x2apic_opt_out);

/* Masks every entry of every IOAPIC the topology names, before anything else touches
 * interrupts (kernel/discover/hpet_boot.c: before the HPET's legacy route is cleared, which
 * can raise a spurious interrupt on some chipsets). Returns how many were left unmasked. */
unsigned intr_mask_ioapics(const struct intr_topology *topo);

/* Routes ISA IRQ irq (0..15) to vector and installs fn. Left masked. -EBUSY when its IOAPIC
 * pin is routed already (one owner per pin, until intr_release()). */
int intr_route_isa(unsigned irq, uint8_t vector, irq_handler_fn fn, void *ctx,
                   struct intr_route *out);
/* Routes GSI gsi (IOAPIC only) to a newly allocated vector, delivered to the CPU with
 * dest_apic_id (the boot CPU's, or an application processor's for its own HPET comparator). -ENOTSUP for an id over 255 (no interrupt remapping). */
int intr_route_gsi_to(uint32_t gsi, enum irq_trigger trigger, enum irq_polarity polarity,
                      uint32_t dest_apic_id, irq_handler_fn fn, void *ctx,
                      struct intr_route *out);
/* A vector for a device that sends its own message (MSI), delivered to the CPU with
 * dest_apic_id, with fn installed: out->msi_addr = 0xFEE00000 | dest << 12 (physical
 * destination), out->msi_data = the vector (fixed delivery, edge). The device must write
 * exactly that. There is no pin to mask: intr_mask()/intr_unmask() do nothing on this path
 * (the device's own enable is its mask). -ENODEV before intr_init() or without a local APIC,
 * -ENOTSUP for an id over 255 (no interrupt remapping), -EBUSY when no vector is left. */
int intr_route_msi(uint32_t dest_apic_id, irq_handler_fn fn, void *ctx,
                   struct intr_route *out);
void intr_unmask(const struct intr_route *r);
void intr_mask(const struct intr_route *r);
/* End of interrupt for a routed line (LAPIC EOI, or 8259 EOI). */
void intr_eoi(const struct intr_route *r);
/* EOI to the local APIC for its own interrupts (the LAPIC timer); timed like intr_eoi when
 * irq_probe.on (trap.h). */
void intr_eoi_local(void);
/* The boot CPU's local APIC as intr_init() set it up (the other CPUs copy it). */
uint64_t intr_lapic_phys(void);
bool intr_lapic_x2apic(void);
/* How every CPU reaches its local APIC (lapic_init() on the boot CPU filled it): what the
 * LAPIC driver's functions take. */
const struct lapic *intr_apic(void);
/* Whether the MADT states an override for ISA IRQ irq. */
bool intr_isa_overridden(unsigned irq);
/* From now on ISA IRQ irq is routed to gsi: a route a test proved where the MADT says
 * nothing (irq_check: QEMU's microvm wires the PIT to GSI 2 without an override). */
void intr_learn_isa_gsi(unsigned irq, uint32_t gsi);
/* The boot CPU's APIC ID, where interrupts are delivered by default. */
uint32_t intr_lapic_id(void);
/* Releases the route: masked, handler removed. */
void intr_release(struct intr_route *r);

const struct intr_stats *intr_stats(void);
/* One `irq_stats` record: per-vector counts and the spurious/error counters. */
void intr_report_stats(void);

#endif
