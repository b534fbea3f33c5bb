/* drivers/ioapic.c - see ioapic.h. */
#include "ticklab/ioapic.h"

#include "ticklab/io.h"
#include "ticklab/errno.h"

#define IOREGSEL 0x00
#define IOWIN    0x10
#define REG_ID   0x00
#define REG_VER  0x01
#define REG_REDIR(pin) (0x10 + 2 * (pin))    /* low half; high half at +1 */
#define   REDIR_MASKED     IOAPIC_ENTRY_MASKED
#define   REDIR_LEVEL      (1ull << 15)
#define   REDIR_ACTIVE_LOW (1ull << 13)
#define   REDIR_DEST_SHIFT 56

static uint32_t rd(struct ioapic *io, uint32_t reg)
{
    mmio_write32(io->mmio + IOREGSEL, reg);
    return mmio_read32(io->mmio + IOWIN);
}

static void wr(struct ioapic *io, uint32_t reg, uint32_t v)
{
    mmio_write32(io->mmio + IOREGSEL, reg);
    mmio_write32(io->mmio + IOWIN, v);
}

uint64_t ioapic_read_entry(struct ioapic *io, unsigned pin)
{
    return rd(io, REG_REDIR(pin)) | (uint64_t)rd(io, REG_REDIR(pin) + 1) << 32;
}

int ioapic_probe(struct ioapic *io, uintptr_t mmio, uint32_t gsi_base)
{
    io->mmio = mmio;
    io->gsi_base = gsi_base;
    uint32_t ver = rd(io, REG_VER);
    if (ver == 0xFFFFFFFFu)
        return -ENODEV;
    io->version = ver & 0xFF;
    io->pins = ((ver >> 16) & 0xFF) + 1;
    io->id = (rd(io, REG_ID) >> 24) & 0xF;
    if (io->pins < 16 || io->pins > 240)   /* a real part has 24..120; 0xFF..: empty bus */
        return -ENODEV;
    return 0;
}

int ioapic_init(struct ioapic *io, uintptr_t mmio, uint32_t gsi_base)
{
    int rc = ioapic_probe(io, mmio, gsi_base);
    if (rc)
        return rc;
    for (unsigned pin = 0; pin < io->pins; pin++)
        ioapic_mask(io, pin);
    return 0;
}

int ioapic_route(struct ioapic *io, unsigned pin, uint8_t vector, uint8_t dest_apic_id,
                 enum irq_trigger trigger, enum irq_polarity polarity)
{
    if (pin >= io->pins || vector < 32)
        return -EINVAL;
    uint64_t e = vector | REDIR_MASKED | (uint64_t)dest_apic_id << REDIR_DEST_SHIFT;
    if (trigger == TRIGGER_LEVEL)
        e |= REDIR_LEVEL;
    if (polarity == POLARITY_LOW)
        e |= REDIR_ACTIVE_LOW;
    wr(io, REG_REDIR(pin), (uint32_t)e);          /* masked while the halves disagree */
    wr(io, REG_REDIR(pin) + 1, (uint32_t)(e >> 32));
    return 0;
}

void ioapic_mask(struct ioapic *io, unsigned pin)
{
    wr(io, REG_REDIR(pin), rd(io, REG_REDIR(pin)) | (uint32_t)REDIR_MASKED);
}

void ioapic_unmask(struct ioapic *io, unsigned pin)
{
    wr(io, REG_REDIR(pin), rd(io, REG_REDIR(pin)) & ~(uint32_t)REDIR_MASKED);
}
