/* tests/host/test_spcr.c - ACPI's SPCR: crafted tables decoded alone
 * (acpi_spcr_decode) and added to the q35 fixture to go through acpi_parse's checks. */
#include <stdlib.h>

#include "acpi_edit.h"
#include "ticklab/spcr.h"
#include "test.h"

/* An SPCR's body (what follows the header), revision 2/3 layout. */
struct spcr_spec {
    uint8_t revision, type, space, bit_width, access, baud_code, irq_type, irq;
    uint64_t addr;
    uint16_t pci_device, pci_vendor;
    uint8_t bus, dev, fn;
    uint32_t clock_hz;
};

static void spcr_table(struct tbuf *t, const struct spcr_spec *s)
{
    uint8_t b[SPCR_FIELDS_BYTES - ACPI_HEADER_BYTES];
    memset(b, 0, sizeof(b));
    b[0] = s->type;
    b[4] = s->space, b[5] = s->bit_width, b[6] = 0, b[7] = s->access;
    memcpy(b + 8, &s->addr, 8);
    b[16] = s->irq_type, b[17] = s->irq;
    b[22] = s->baud_code;
    b[24] = 1;                                    /* one stop bit */
    memcpy(b + 28, &s->pci_device, 2);
    memcpy(b + 30, &s->pci_vendor, 2);
    b[32] = s->bus, b[33] = s->dev, b[34] = s->fn;
    memcpy(b + 40, &s->clock_hz, 4);
    tb_begin(t, "SPCR");
    t->b[8] = s->revision;
    tb_put(t, b, sizeof(b));
    tb_finish(t);
}

static const struct spcr_spec com2 = {
    .revision = 2, .type = SPCR_IF_16550, .space = ACPI_GAS_IO, .bit_width = 8, .access = 1,
    .addr = 0x2F8, .baud_code = 7, .irq_type = SPCR_IRQ_8259 | SPCR_IRQ_IOAPIC, .irq = 3,
    .pci_device = 0xFFFF, .pci_vendor = 0xFFFF,
};

static struct acpi_spcr_info decode(const struct spcr_spec *s, size_t cut)
{
    struct tbuf t;
    spcr_table(&t, s);
    struct acpi_spcr_info o = { 0 };
    acpi_spcr_decode(&o, t.b, (uint32_t)(cut ? cut : t.len));
    return o;
}

TEST(spcr_com2_io_at_115200)
{
    struct acpi_spcr_info o = decode(&com2, 0);
    CHECK(o.present);
    CHECK_EQ_STR(o.reason, NULL);
    CHECK_EQ_U64(o.space, ACPI_GAS_IO);
    CHECK_EQ_U64(o.addr, 0x2F8);
    CHECK_EQ_U64(o.stride, 1);
    CHECK_EQ_U64(o.access_bytes, 1);
    CHECK_EQ_U64(o.baud, 115200);
    CHECK_EQ_U64(o.irq, 3);
    CHECK_EQ_U64(o.irq_type, 3);
    CHECK_EQ_U64(o.pci_device, 0xFFFF);
    CHECK_EQ_U64(o.clock_hz, 0);                 /* revision 2: no clock field */
}

TEST(spcr_mmio_stride4_dword_with_clock)
{
    struct spcr_spec s = { .revision = 3, .type = SPCR_IF_16550_GAS, .space = ACPI_GAS_MEMORY,
                           .bit_width = 32, .access = 3, .addr = 0xFE032000, .baud_code = 0,
                           .pci_device = 0x9DA8, .pci_vendor = 0x8086, .bus = 0, .dev = 0x1E,
                           .fn = 0, .clock_hz = 1843200 * 32 };
    struct acpi_spcr_info o = decode(&s, 0);
    CHECK(o.present);
    CHECK_EQ_U64(o.space, ACPI_GAS_MEMORY);
    CHECK_EQ_U64(o.addr, 0xFE032000);
    CHECK_EQ_U64(o.stride, 4);
    CHECK_EQ_U64(o.access_bytes, 4);
    CHECK_EQ_U64(o.baud, 0);                     /* as is */
    CHECK_EQ_STR(o.note, NULL);
    CHECK_EQ_U64(o.clock_hz, 58982400);
    CHECK_EQ_U64(o.pci_vendor, 0x8086);
    CHECK_EQ_U64(o.pci_dev, 0x1E);
}

TEST(spcr_legacy_access_size_zero_is_bytes_and_reserved_baud_kept)
{
    struct spcr_spec s = com2;
    s.access = 0, s.baud_code = 5;
    struct acpi_spcr_info o = decode(&s, 0);
    CHECK(o.present);
    CHECK_EQ_U64(o.access_bytes, 1);
    CHECK_EQ_U64(o.baud, 0);
    CHECK_EQ_STR(o.note, "reserved baud rate code: the firmware's divisor kept");
}

TEST(spcr_unsupported_interface_and_layouts_refused)
{
    struct spcr_spec s = com2;
    s.type = 0x03;                                /* ARM PL011 */
    struct acpi_spcr_info o = decode(&s, 0);
    CHECK(!o.present && o.decoded);
    CHECK_EQ_U64(o.interface_type, 3);
    CHECK_EQ_STR(o.reason, "interface type not 16550-compatible");
    s = com2, s.space = 2;                        /* PCI config space */
    CHECK_EQ_STR(decode(&s, 0).reason, "address space not memory or I/O");
    s = com2, s.addr = 0;
    CHECK_EQ_STR(decode(&s, 0).reason, "address zero");
    s = com2, s.access = 2;                       /* 16-bit registers */
    CHECK_EQ_STR(decode(&s, 0).reason, "access size not byte or dword");
    s = com2, s.access = 3;                       /* dword access to I/O ports */
    CHECK_EQ_STR(decode(&s, 0).reason, "access size not byte or dword");
    s = com2, s.addr = 0xFFFC;
    CHECK_EQ_STR(decode(&s, 0).reason, "I/O port over 0xffff");
}

TEST(spcr_short_table_decodes_nothing)
{
    struct acpi_spcr_info o = decode(&com2, 60);
    CHECK(!o.present && !o.decoded);
    CHECK_EQ_STR(o.reason, "shorter than SPCR fields");
}

/* Through acpi_parse: the table added to QEMU's q35 tables. */
static struct spcr_spec added;
static bool corrupt;

static void add_spcr(struct fake_mem *fm)
{
    struct tbuf t;
    spcr_table(&t, &added);
    if (corrupt)
        t.b[40] ^= 0x10;
    REQUIRE(table_add(fm, &t));
}

TEST(spcr_through_acpi_parse_and_checksum_refused)
{
    struct acpi_info *a = parse_edited("q35-seabios", NULL);
    REQUIRE(a);
    CHECK(!a->spcr.present);
    CHECK_EQ_STR(a->spcr.reason, "no table");
    CHECK(a->mcfg.present);                       /* q35 has ECAM at 0xB0000000 */
    CHECK_EQ_U64(a->mcfg.e[0].base, 0xB0000000);
    CHECK_EQ_U64(a->mcfg.e[0].end_bus, 0xFF);
    free(a);
    added = com2, corrupt = false;
    a = parse_edited("q35-seabios", add_spcr);
    REQUIRE(a);
    CHECK(a->spcr.present);
    CHECK_EQ_U64(a->spcr.addr, 0x2F8);
    check_qemu_madt(&a->madt);
    free(a);
    corrupt = true;
    a = parse_edited("q35-seabios", add_spcr);
    REQUIRE(a);
    CHECK(!a->spcr.present && !a->spcr.decoded);
    CHECK_EQ_STR(a->spcr.reason, "table rejected");
    CHECK_EQ_STR(a->spcr.table_reason, "checksum");
    free(a);
    corrupt = false;
}
