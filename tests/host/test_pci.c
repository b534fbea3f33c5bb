/* tests/host/test_pci.c - the PCI walk for 16550s (drivers/pci.c) against a fake
 * configuration space (tests/host/fake/pci.c): cards with I/O and memory BARs, a
 * multi-function device, a single-function "ghost", a card behind a bridge on bus 5,
 * decoding left off by the firmware, and nothing at all. */
#include "fake/fake.h"
#include "ticklab/pci.h"
#include "test.h"

#define CLASS_16550   0x070002u
#define CLASS_MODEM   0x070302u
#define CLASS_BRIDGE  0x060400u
#define CLASS_HOST    0x060000u
#define ECAM_BASE     0xB0000000ull

static const struct pci_cfg ports = { .method = PCI_CFG_PORTS };

static void bar(uint8_t *cfg, unsigned i, uint32_t v)
{
    memcpy(cfg + 0x10 + 4 * i, &v, 4);
}

static uint16_t command(const uint8_t *cfg)
{
    uint16_t c;
    memcpy(&c, cfg + 4, 2);
    return c;
}

/* q35's host bridge, an I/O-BAR card at 00:03.0 (QEMU's pci-serial), a 64-bit memory-BAR
 * card above 4 GiB behind a bridge (bus 5), decoding off on the second. */
static uint8_t *io_card, *mem_card;

static void two_cards(void)
{
    fake_reset();
    fake_pci_add(0, 0, 0, 0x8086, 0x29C0, CLASS_HOST, 0);
    io_card = fake_pci_add(0, 3, 0, 0x1B36, 0x0002, CLASS_16550, 0);
    bar(io_card, 0, 0xC001);
    io_card[4] = 0x01;                                   /* I/O decoding on */
    uint8_t *br = fake_pci_add(0, 0x1C, 0, 0x8086, 0x2940, CLASS_BRIDGE, 1);
    br[0x19] = 5;
    mem_card = fake_pci_add(5, 0, 0, 0x1415, 0xC158, CLASS_16550, 0);
    bar(mem_card, 0, 0x0000000C);                        /* 64-bit, prefetchable, low 0 */
    bar(mem_card, 1, 0x00000001);                        /* upper half: 0x1_0000_0000 + */
    bar(mem_card, 0, 0xFE00000C);
}

TEST(pci_finds_io_and_mmio_16550_cards_behind_a_bridge)
{
    two_cards();
    fake_pci_attach_ports();
    struct pci_scan s;
    pci_find_serial(&ports, &s);
    REQUIRE(s.n == 2);
    CHECK_EQ_U64(s.functions, 4);
    CHECK_EQ_U64(s.buses_with_devices, 2);
    CHECK(s.s[0].usable && s.s[0].io);
    CHECK_EQ_U64(s.s[0].addr, 0xC000);
    CHECK_EQ_U64(s.s[0].dev, 3);
    CHECK_EQ_U64(s.s[0].vendor, 0x1B36);
    CHECK_EQ_U64(s.s[0].prog_if, 2);
    CHECK(!s.s[0].decode_enabled);
    CHECK(s.s[1].usable && !s.s[1].io && s.s[1].bar64);
    CHECK_EQ_U64(s.s[1].addr, 0x1FE000000ull);
    CHECK_EQ_U64(s.s[1].bus, 5);
    CHECK(s.s[1].decode_enabled);                        /* the firmware left it off */
    CHECK_EQ_U64(command(mem_card) & 2, 2);
    /* bounded: 256 buses x 32 devices, plus a few reads per function found */
    CHECK(fake_pci_reads() <= 256 * 32 + 64);
}

TEST(pci_walk_through_ecam_sees_the_same)
{
    two_cards();
    fake_pci_attach_ecam(ECAM_BASE, 0, 255);
    const struct pci_cfg ecam = { .method = PCI_CFG_ECAM, .ecam = (uintptr_t)ECAM_BASE,
                                  .ecam_phys = ECAM_BASE, .start_bus = 0, .end_bus = 255 };
    struct pci_scan s;
    pci_find_serial(&ecam, &s);
    REQUIRE(s.n == 2);
    CHECK_EQ_U64(s.s[0].addr, 0xC000);
    CHECK_EQ_U64(s.s[1].addr, 0x1FE000000ull);
    CHECK_EQ_U64(fake_stats.port_reads, 0);
}

TEST(pci_multifunction_and_ghost_devices)
{
    fake_reset();
    /* a two-port card: function 0 a modem, functions 1 and 2 16550s with I/O BARs */
    fake_pci_add(0, 4, 0, 0x125B, 0x9100, CLASS_MODEM, 0x80);
    bar(fake_pci_add(0, 4, 1, 0x125B, 0x9100, CLASS_16550, 0), 0, 0xD001);
    uint8_t *f2 = fake_pci_add(0, 4, 2, 0x125B, 0x9100, CLASS_16550, 0);
    bar(f2, 0, 0);                                       /* an empty BAR0, then I/O BAR1 */
    bar(f2, 1, 0xD101);
    /* a single-function card that answers every function number */
    bar(fake_pci_add(0, 6, 0, 0x1415, 0x9501, CLASS_16550, 0), 0, 0xE001);
    fake_pci_ghost(0, 6);
    fake_pci_attach_ports();
    struct pci_scan s;
    pci_find_serial(&ports, &s);
    REQUIRE(s.n == 3);
    CHECK_EQ_U64(s.functions, 4);
    CHECK_EQ_U64(s.s[0].fn, 1);
    CHECK_EQ_U64(s.s[0].addr, 0xD000);
    CHECK_EQ_U64(s.s[1].fn, 2);
    CHECK_EQ_U64(s.s[1].bar, 1);
    CHECK_EQ_U64(s.s[1].addr, 0xD100);
    CHECK_EQ_U64(s.s[2].dev, 6);
    CHECK_EQ_U64(s.s[2].fn, 0);                          /* once, not eight times */
}

TEST(pci_no_usable_bar_and_empty_buses)
{
    fake_reset();
    fake_pci_attach_ports();
    struct pci_scan s;
    pci_find_serial(&ports, &s);                         /* nothing at all */
    CHECK_EQ_U64(s.n, 0);
    CHECK_EQ_U64(s.functions, 0);
    CHECK_EQ_U64(s.buses_with_devices, 0);
    CHECK_EQ_U64(fake_pci_reads(), 256 * 32);
    fake_reset();
    uint8_t *c = fake_pci_add(2, 0, 0, 0x1234, 0x5678, CLASS_16550, 0);
    bar(c, 5, 0x4);                                      /* a 64-bit BAR in the last slot */
    fake_pci_attach_ports();
    pci_find_serial(&ports, &s);
    REQUIRE(s.n == 1);
    CHECK(!s.s[0].usable);
    CHECK_EQ_STR(s.s[0].reason, "no usable BAR");
    CHECK_EQ_U64(command(c), 0);                         /* nothing turned on */
}

TEST(pci_ecam_range_bounds_the_walk)
{
    fake_reset();
    bar(fake_pci_add(0x40, 1, 0, 0x1B36, 0x0002, CLASS_16550, 0), 0, 0xC001);
    fake_pci_attach_ecam(ECAM_BASE, 0x40, 0x43);
    const struct pci_cfg ecam = { .method = PCI_CFG_ECAM, .ecam = (uintptr_t)ECAM_BASE,
                                  .ecam_phys = ECAM_BASE, .start_bus = 0x40, .end_bus = 0x43 };
    struct pci_scan s;
    pci_find_serial(&ecam, &s);
    REQUIRE(s.n == 1);
    CHECK_EQ_U64(s.s[0].bus, 0x40);
    CHECK(fake_pci_reads() <= 4 * 32 + 16);
    CHECK_EQ_U64(fake_stats.unknown_mmio_reads, 0);
}
