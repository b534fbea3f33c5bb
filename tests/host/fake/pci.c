/* tests/host/fake/pci.c - see pci.h. */
#include "fake.h"
#include "pci.h"

#include <string.h>

static struct {
    struct { uint8_t bus, dev, fn; bool ghost; uint8_t cfg[256]; } f[FAKE_PCI_MAX];
    unsigned n;
    uint32_t addr;                  /* the last value written to 0xCF8 */
    bool ports, ecam;
    uint64_t ecam_base;
    uint8_t start_bus;
    uint64_t reads;
    fake_pci_write_hook hook;
    void *hook_ctx;
} p;

static uint8_t *find(uint8_t bus, uint8_t dev, uint8_t fn)
{
    for (unsigned i = 0; i < p.n; i++)
        if (p.f[i].bus == bus && p.f[i].dev == dev && (p.f[i].fn == fn || p.f[i].ghost))
            return p.f[i].cfg;
    return NULL;
}

static uint32_t cfg_read(uint8_t bus, uint8_t dev, uint8_t fn, unsigned off)
{
    p.reads++;
    uint8_t *c = find(bus, dev, fn);
    uint32_t v = 0xFFFFFFFFu;
    if (c && off < 256)
        memcpy(&v, c + (off & ~3u), 4);
    return v;
}

static void cfg_write_n(uint8_t bus, uint8_t dev, uint8_t fn, unsigned off, uint32_t v,
                        unsigned size)
{
    uint8_t *c = find(bus, dev, fn);
    if (c && off < 256) {
        memcpy(c + off, &v, size);
        if (p.hook)
            p.hook(p.hook_ctx, c, off, size);
    }
}

static void cfg_write(uint8_t bus, uint8_t dev, uint8_t fn, unsigned off, uint32_t v)
{
    cfg_write_n(bus, dev, fn, off & ~3u, v, 4);
}

static uint64_t port_rd(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx;
    if (off == 0 && size == 4)
        return p.addr;
    if (off == 4 && size == 4 && (p.addr & 0x80000000u))
        return cfg_read((uint8_t)(p.addr >> 16), (p.addr >> 11) & 31, (p.addr >> 8) & 7,
                        p.addr & 0xFC);
    return 0xFFFFFFFFu;
}

static void port_wr(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx;
    if (off == 0 && size == 4)
        p.addr = (uint32_t)v;
    else if (off == 4 && size == 4 && (p.addr & 0x80000000u))
        cfg_write((uint8_t)(p.addr >> 16), (p.addr >> 11) & 31, (p.addr >> 8) & 7,
                  p.addr & 0xFC, (uint32_t)v);
    else if (off >= 4 && size == 1 && (p.addr & 0x80000000u))
        cfg_write_n((uint8_t)(p.addr >> 16), (p.addr >> 11) & 31, (p.addr >> 8) & 7,
                    (p.addr & 0xFC) + (unsigned)(off - 4), (uint32_t)v, 1);
    else
        fake_fault("PCI configuration access of %u bytes at 0xCF8+%u", size, (unsigned)off);
}

static uint64_t ecam_rd(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx;
    if (size != 4)
        fake_fault("ECAM read of %u bytes", size);
    return cfg_read((uint8_t)(p.start_bus + (off >> 20)), (off >> 15) & 31, (off >> 12) & 7,
                    off & 0xFFF);
}

static void ecam_wr(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx;
    if (size != 4)
        fake_fault("ECAM write of %u bytes", size);
    cfg_write((uint8_t)(p.start_bus + (off >> 20)), (off >> 15) & 31, (off >> 12) & 7,
              off & 0xFFF, (uint32_t)v);
}

static const struct fake_io_ops port_ops = { port_rd, port_wr }, ecam_ops = { ecam_rd, ecam_wr };

uint8_t *fake_pci_add(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t vendor, uint16_t device,
                      uint32_t class_code, uint8_t header_type)
{
    if (p.n == FAKE_PCI_MAX)
        return NULL;
    memset(&p.f[p.n], 0, sizeof(p.f[p.n]));
    p.f[p.n].bus = bus, p.f[p.n].dev = dev, p.f[p.n].fn = fn;
    uint8_t *c = p.f[p.n++].cfg;
    memcpy(c, &vendor, 2);
    memcpy(c + 2, &device, 2);
    c[0x09] = (uint8_t)class_code;
    c[0x0A] = (uint8_t)(class_code >> 8);
    c[0x0B] = (uint8_t)(class_code >> 16);
    c[0x0E] = header_type;
    return c;
}

void fake_pci_ghost(uint8_t bus, uint8_t dev)
{
    for (unsigned i = 0; i < p.n; i++)
        if (p.f[i].bus == bus && p.f[i].dev == dev)
            p.f[i].ghost = true;
}

void fake_pci_attach_ports(void)
{
    p.ports = fake_port_register(0xCF8, 8, &port_ops, NULL) == 0;
}

void fake_pci_attach_ecam(uint64_t base, uint8_t start_bus, uint8_t end_bus)
{
    p.ecam_base = base;
    p.start_bus = start_bus;
    p.ecam = fake_mmio_register(base, (uint64_t)(end_bus - start_bus + 1) << 20, &ecam_ops,
                                NULL) == 0;
}

void fake_pci_on_write(fake_pci_write_hook hook, void *ctx)
{
    p.hook = hook;
    p.hook_ctx = ctx;
}

uint64_t fake_pci_reads(void)
{
    return p.reads;
}

void fake_pci_reset(void)
{
    if (p.ports)
        fake_port_unregister(0xCF8);
    if (p.ecam)
        fake_mmio_unregister(p.ecam_base);
    memset(&p, 0, sizeof(p));
}
