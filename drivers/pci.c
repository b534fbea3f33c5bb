/* drivers/pci.c - see pci.h. */
#include "ticklab/pci.h"

#include "ticklab/io.h"
#include "ticklab/kstring.h"

#define PCI_ADDR_PORT   0xCF8
#define PCI_DATA_PORT   0xCFC
#define   PCI_ADDR_ENABLE (1u << 31)

#define PCI_ID          0x00    /* vendor (low 16), device (high 16) */
#define PCI_CMD         0x04    /* command (low 16), status (high 16: write-1-to-clear) */
#define   CMD_IO        (1u << 0)
#define   CMD_MEM       (1u << 1)
#define PCI_CLASS       0x08    /* revision, prog-if, subclass, class */
#define PCI_HEADER      0x0C    /* byte 2: header type */
#define   HDR_MULTIFN   0x80
#define   HDR_TYPE_MASK 0x7F
#define PCI_BAR0        0x10
#define PCI_BARS        6       /* type 0 header */
#define   BAR_IO        (1u << 0)
#define   BAR_MEM_TYPE  0x6     /* bits 2:1: 00 32-bit, 10 64-bit */
#define   BAR_MEM_64    0x4

#define PCI_DEVS        32
#define PCI_FNS         8
#define IO_PORT_LAST_UART 0xFFF8u

/* ---- configuration space ------------------------------------------------------------------ */

static uint32_t port_addr(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    return PCI_ADDR_ENABLE | (uint32_t)bus << 16 | (uint32_t)(dev & 31) << 11 |
           (uint32_t)(fn & 7) << 8 | (off & 0xFC);
}

static uintptr_t ecam_addr(const struct pci_cfg *c, uint8_t bus, uint8_t dev, uint8_t fn,
                           uint16_t off)
{
    return c->ecam + ((uintptr_t)(bus - c->start_bus) << 20) + ((uintptr_t)(dev & 31) << 15) +
           ((uintptr_t)(fn & 7) << 12) + (off & 0xFFC);
}

static bool in_range(const struct pci_cfg *c, uint8_t bus)
{
    return c->method == PCI_CFG_PORTS || (bus >= c->start_bus && bus <= c->end_bus);
}

uint32_t pci_read32(const struct pci_cfg *c, uint8_t bus, uint8_t dev, uint8_t fn,
                    uint16_t off)
{
    if (!in_range(c, bus))
        return 0xFFFFFFFFu;
    if (c->method == PCI_CFG_ECAM)
        return mmio_read32(ecam_addr(c, bus, dev, fn, off));
    unsigned long f = irq_save();     /* the address/data pair is one access */
    outl(PCI_ADDR_PORT, port_addr(bus, dev, fn, off));
    uint32_t v = inl(PCI_DATA_PORT);
    irq_restore(f);
    return v;
}

void pci_write32(const struct pci_cfg *c, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off,
                 uint32_t v)
{
    if (!in_range(c, bus))
        return;
    if (c->method == PCI_CFG_ECAM) {
        mmio_write32(ecam_addr(c, bus, dev, fn, off), v);
        return;
    }
    unsigned long f = irq_save();
    outl(PCI_ADDR_PORT, port_addr(bus, dev, fn, off));
    outl(PCI_DATA_PORT, v);
    irq_restore(f);
}

/* ---- the walk ----------------------------------------------------------------------------- */

/* The first usable BAR into s; false when there is none. */
static bool first_bar(const struct pci_cfg *c, struct pci_serial *s)
{
    for (unsigned i = 0; i < PCI_BARS; i++) {
        uint32_t lo = pci_read32(c, s->bus, s->dev, s->fn, (uint16_t)(PCI_BAR0 + 4 * i));
        if (lo & BAR_IO) {
            uint32_t port = lo & ~3u;
            if (port != 0 && port <= IO_PORT_LAST_UART) {
                s->bar = (uint8_t)i, s->io = true, s->addr = port;
                return true;
            }
            continue;
        }
        uint64_t addr = lo & ~0xFu;
        bool is64 = (lo & BAR_MEM_TYPE) == BAR_MEM_64;
        if (is64) {
            if (i + 1 == PCI_BARS)
                break;                /* a 64-bit BAR cannot start in the last slot */
            addr |= (uint64_t)pci_read32(c, s->bus, s->dev, s->fn,
                                         (uint16_t)(PCI_BAR0 + 4 * (i + 1))) << 32;
        }
        if (addr != 0) {
            s->bar = (uint8_t)i, s->io = false, s->bar64 = is64, s->addr = addr;
            return true;
        }
        if (is64)
            i++;                      /* its upper half is not a BAR of its own */
    }
    return false;
}

static void enable_decode(const struct pci_cfg *c, struct pci_serial *s)
{
    uint32_t want = s->io ? CMD_IO : CMD_MEM;
    uint32_t cmd = pci_read32(c, s->bus, s->dev, s->fn, PCI_CMD) & 0xFFFF;
    if (cmd & want)
        return;
    /* Status bits written as 0: they are write-1-to-clear, so nothing changes there. */
    pci_write32(c, s->bus, s->dev, s->fn, PCI_CMD, cmd | want);
    s->decode_enabled = true;
}

static void serial_function(const struct pci_cfg *c, struct pci_scan *o, uint8_t bus,
                            uint8_t dev, uint8_t fn, uint32_t id, uint32_t class_reg)
{
    if (o->n == PCI_SERIAL_MAX) {
        o->dropped++;
        return;
    }
    struct pci_serial *s = &o->s[o->n++];
    *s = (struct pci_serial){ .bus = bus, .dev = dev, .fn = fn, .vendor = (uint16_t)id,
                              .device = (uint16_t)(id >> 16),
                              .prog_if = (uint8_t)(class_reg >> 8) };
    uint8_t htype = (uint8_t)(pci_read32(c, bus, dev, fn, PCI_HEADER) >> 16) & HDR_TYPE_MASK;
    if (htype != 0 || !first_bar(c, s)) {
        s->reason = "no usable BAR";
        return;
    }
    s->usable = true;
    enable_decode(c, s);
}

/* Function fn of dev: counted, and kept when it is a 16550. false: nothing answers. */
static bool function(const struct pci_cfg *c, struct pci_scan *o, uint8_t bus, uint8_t dev,
                     uint8_t fn)
{
    uint32_t id = pci_read32(c, bus, dev, fn, PCI_ID);
    if ((id & 0xFFFF) == 0xFFFF || (id & 0xFFFF) == 0)
        return false;
    o->functions++;
    uint32_t cls = pci_read32(c, bus, dev, fn, PCI_CLASS);
    if ((cls >> 24) == PCI_CLASS_COMM && ((cls >> 16) & 0xFF) == PCI_SUBCLASS_SERIAL &&
        ((cls >> 8) & 0xFF) <= PCI_PROGIF_16550_MAX)
        serial_function(c, o, bus, dev, fn, id, cls);
    return true;
}

void pci_find_serial(const struct pci_cfg *c, struct pci_scan *out)
{
    memset(out, 0, sizeof(*out));
    unsigned first = c->method == PCI_CFG_ECAM ? c->start_bus : 0;
    unsigned last = c->method == PCI_CFG_ECAM ? c->end_bus : 255;
    for (unsigned bus = first; bus <= last; bus++) {
        bool any = false;
        for (uint8_t dev = 0; dev < PCI_DEVS; dev++) {
            if (!function(c, out, (uint8_t)bus, dev, 0))
                continue;
            any = true;
            uint8_t hdr = (uint8_t)(pci_read32(c, (uint8_t)bus, dev, 0, PCI_HEADER) >> 16);
            for (uint8_t fn = 1; (hdr & HDR_MULTIFN) && fn < PCI_FNS; fn++)
                function(c, out, (uint8_t)bus, dev, fn);
        }
        out->buses_with_devices += any;
    }
}

bool pci_find_id(const struct pci_cfg *c, uint8_t bus, uint16_t vendor, uint16_t device,
                 uint8_t *dev, uint8_t *fn)
{
    uint32_t want = (uint32_t)device << 16 | vendor;
    for (uint8_t d = 0; d < PCI_DEVS; d++) {
        uint32_t id = pci_read32(c, bus, d, 0, PCI_ID);
        if ((id & 0xFFFF) == 0xFFFF || (id & 0xFFFF) == 0)
            continue;
        uint8_t hdr = (uint8_t)(pci_read32(c, bus, d, 0, PCI_HEADER) >> 16);
        for (uint8_t f = 0; f < ((hdr & HDR_MULTIFN) ? PCI_FNS : 1); f++) {
            if (pci_read32(c, bus, d, f, PCI_ID) != want)
                continue;
            *dev = d;
            *fn = f;
            return true;
        }
    }
    return false;
}

uint64_t pci_bar_mem(const struct pci_cfg *c, uint8_t bus, uint8_t dev, uint8_t fn, unsigned i)
{
    if (i >= PCI_BARS)
        return 0;
    uint32_t lo = pci_read32(c, bus, dev, fn, (uint16_t)(PCI_BAR0 + 4 * i));
    if (lo & BAR_IO)
        return 0;
    uint64_t addr = lo & ~0xFu;
    if ((lo & BAR_MEM_TYPE) == BAR_MEM_64) {
        if (i + 1 == PCI_BARS)
            return 0;
        addr |= (uint64_t)pci_read32(c, bus, dev, fn, (uint16_t)(PCI_BAR0 + 4 * (i + 1))) << 32;
    }
    return addr;
}

void pci_enable_mem(const struct pci_cfg *c, uint8_t bus, uint8_t dev, uint8_t fn)
{
    uint32_t cmd = pci_read32(c, bus, dev, fn, PCI_CMD) & 0xFFFF;
    if (!(cmd & CMD_MEM))
        pci_write32(c, bus, dev, fn, PCI_CMD, cmd | CMD_MEM);
}
