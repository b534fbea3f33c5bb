/* tests/host/test_acpi.c - drivers/acpi.c against the tables QEMU's firmware really builds
 * (tests/host/fixtures/acpi, captured with dump=acpi) and against broken variants of them
 * made in memory. Every region sits in a buffer of exactly its size (acpi_fixture.c), so
 * ASan turns any read past what the parser mapped into a failure.
 *
 * The expected facts are those in /work/shared/notes/qemu-facts.md: LAPIC 0xFEE00000, IOAPIC
 * id 0 at 0xFEC00000 (GSI base 0), IRQ0 -> GSI 2, IRQ 5/9/10/11 level-triggered, HPET at
 * 0xFED00000 with 3 comparators, PM timer at port 0x608 counting 24 bits. */
#include <stdlib.h>

#include "acpi_edit.h"
#include "test.h"

TEST(acpi_fixture_q35_seabios)
{
    struct acpi_info *a = parse_edited("q35-seabios", NULL);
    REQUIRE(a);
    CHECK_EQ_U64(a->rsdp.source, ACPI_RSDP_BIOS_ROM);
    CHECK_EQ_U64(a->rsdp.revision, 0);
    CHECK(!a->xsdt_used);
    CHECK_EQ_STR(a->root_note, NULL);
    check_all_tables_ok(a);
    CHECK(find_table(a, "MCFG") != NULL);
    CHECK(find_table(a, "DSDT") != NULL);
    check_qemu_madt(&a->madt);
    check_qemu_hpet(&a->hpet);
    check_qemu_pm_timer(&a->fadt);
    CHECK(a->fadt.pm_timer_from_x);
    CHECK(a->fadt.iapc_valid);
    free(a);
}

TEST(acpi_fixture_pc_seabios)
{
    struct acpi_info *a = parse_edited("pc-seabios", NULL);
    REQUIRE(a);
    CHECK_EQ_U64(a->rsdp.source, ACPI_RSDP_BIOS_ROM);
    CHECK(!a->xsdt_used);
    check_all_tables_ok(a);
    CHECK(find_table(a, "MCFG") == NULL);
    check_qemu_madt(&a->madt);
    check_qemu_hpet(&a->hpet);
    check_qemu_pm_timer(&a->fadt);
    /* QEMU's pc machine builds an ACPI 1.0 FADT: 116 bytes, no X_ fields, IAPC reserved. */
    CHECK_EQ_U64(a->fadt.length, ACPI_FADT_V1_BYTES);
    CHECK_EQ_U64(a->fadt.revision, 1);
    CHECK(!a->fadt.pm_timer_from_x);
    CHECK(!a->fadt.iapc_valid);
    free(a);
}

TEST(acpi_fixture_q35_ovmf)
{
    struct acpi_info *a = parse_edited("q35-ovmf", NULL);
    REQUIRE(a);
    CHECK_EQ_U64(a->rsdp.source, ACPI_RSDP_LOADER);
    CHECK_EQ_U64(a->rsdp.revision, 2);
    CHECK_EQ_U64(a->rsdp.length, ACPI_RSDP_V2_BYTES);
    CHECK(a->xsdt_used);
    CHECK_EQ_STR(a->root_note, NULL);
    check_all_tables_ok(a);
    const struct acpi_table *x = find_table(a, "XSDT"), *r = find_table(a, "RSDT");
    if (CHECK(x && r)) {
        CHECK(x->used);
        CHECK(!r->used);
    }
    check_qemu_madt(&a->madt);
    check_qemu_hpet(&a->hpet);
    check_qemu_pm_timer(&a->fadt);
    free(a);
}

TEST(acpi_fixture_q35_nohpet)
{
    struct acpi_info *a = parse_edited("q35-nohpet", NULL);
    REQUIRE(a);
    check_all_tables_ok(a);
    CHECK(!a->hpet.present);
    CHECK_EQ_STR(a->hpet.reason, "no table");
    CHECK_EQ_STR(a->hpet.table_reason, NULL);
    check_qemu_madt(&a->madt);
    check_qemu_pm_timer(&a->fadt);
    free(a);
}

/* ---- RSDP --------------------------------------------------------------------------------- */

static void break_rsdp_v1(struct fake_mem *fm)
{
    fake_find(fm, "RSDP")->bytes[9] ^= 0x20;   /* an OEM id byte */
}

TEST(acpi_rsdp_bad_checksum_rejected)
{
    struct acpi_info *a = parse_edited("q35-seabios", break_rsdp_v1);
    REQUIRE(a);
    CHECK_EQ_U64(a->rsdp.source, ACPI_RSDP_NONE);
    CHECK_EQ_STR(a->rsdp.reason, "checksum");
    CHECK_EQ_U64(a->n_tables, 0);
    CHECK_EQ_STR(a->madt.reason, "no table");
    CHECK_EQ_STR(a->fadt.pm_timer_reason, "no FADT");
    free(a);
}

static void break_copy_v1(struct fake_mem *fm)
{
    fm->rsdp_copy[9] ^= 0x20;
}

static void break_copy_extended(struct fake_mem *fm)
{
    fm->rsdp_copy[33] ^= 0x01;   /* reserved: covered by the extended checksum only */
}

TEST(acpi_rsdp_copy_bad_checksums_rejected)
{
    struct acpi_info *a = parse_edited("q35-ovmf", break_copy_v1);
    REQUIRE(a);
    CHECK_EQ_STR(a->rsdp.copy_reason, "checksum");
    CHECK_EQ_U64(a->rsdp.source, ACPI_RSDP_NONE);
    CHECK_EQ_STR(a->rsdp.reason, "not found");   /* the fixture has no BIOS areas */
    free(a);
    a = parse_edited("q35-ovmf", break_copy_extended);
    REQUIRE(a);
    CHECK_EQ_STR(a->rsdp.copy_reason, "extended checksum");
    CHECK_EQ_U64(a->rsdp.source, ACPI_RSDP_NONE);
    CHECK_EQ_U64(a->n_tables, 0);
    free(a);
}

static void copy_length_short(struct fake_mem *fm)
{
    put32(fm->rsdp_copy + 20, 24);
    fake_fix_rsdp_checksums(fm->rsdp_copy, fm->rsdp_copy_len);
}

static void copy_length_past(struct fake_mem *fm)
{
    put32(fm->rsdp_copy + 20, 40);   /* the copy holds 36 */
    fake_fix_rsdp_checksums(fm->rsdp_copy, fm->rsdp_copy_len);
}

static void copy_length_huge(struct fake_mem *fm)
{
    put32(fm->rsdp_copy + 20, 0xFFFFFFF0u);
    fake_fix_rsdp_checksums(fm->rsdp_copy, fm->rsdp_copy_len);
}

TEST(acpi_rsdp_bad_length_rejected)
{
    struct acpi_info *a = parse_edited("q35-ovmf", copy_length_short);
    REQUIRE(a);
    CHECK_EQ_STR(a->rsdp.copy_reason, "length shorter than RSDP v2");
    free(a);
    a = parse_edited("q35-ovmf", copy_length_past);
    REQUIRE(a);
    CHECK_EQ_STR(a->rsdp.copy_reason, "length past mapped area");
    free(a);
    a = parse_edited("q35-ovmf", copy_length_huge);
    REQUIRE(a);
    CHECK_EQ_STR(a->rsdp.copy_reason, "length over cap");
    free(a);
}

static void copy_v1_part_only(struct fake_mem *fm)
{
    fm->rsdp_copy_len = ACPI_RSDP_V1_BYTES;   /* as a loader giving only the v1 bytes */
}

TEST(acpi_rsdp_v2_copy_of_20_bytes_uses_rsdt)
{
    struct acpi_info *a = parse_edited("q35-ovmf", copy_v1_part_only);
    REQUIRE(a);
    CHECK_EQ_U64(a->rsdp.source, ACPI_RSDP_LOADER);
    CHECK_EQ_U64(a->rsdp.length, ACPI_RSDP_V1_BYTES);
    CHECK_EQ_U64(a->rsdp.xsdt_phys, 0);
    CHECK(!a->xsdt_used);
    CHECK_EQ_STR(a->root_note, "RSDP v2 fields not readable: RSDT used");
    CHECK(a->madt.present && a->hpet.present && a->fadt.present);
    free(a);
}

/* The SeaBIOS RSDP moved into an EBDA at 0x9FC00, named by the BIOS data area word. */
static void rsdp_into_ebda(struct fake_mem *fm)
{
    static const uint8_t seg[2] = { 0xC0, 0x9F };   /* 0x9FC0 << 4 = 0x9FC00 */
    fake_region_add(fm, 0x40E, seg, sizeof(seg));
    fake_find(fm, "RSDP")->phys = 0x9FC00 + 0x40;
}

TEST(acpi_rsdp_found_in_ebda)
{
    struct acpi_info *a = parse_edited("q35-seabios", rsdp_into_ebda);
    REQUIRE(a);
    CHECK_EQ_U64(a->rsdp.source, ACPI_RSDP_EBDA);
    CHECK_EQ_U64(a->rsdp.phys, 0x9FC40);
    CHECK(a->madt.present);
    free(a);
}

static void rsdp_gone(struct fake_mem *fm)
{
    fake_find(fm, "RSDP")->phys = 0x70000;   /* outside both areas searched */
}

TEST(acpi_rsdp_absent_says_not_found)
{
    struct acpi_info *a = parse_edited("q35-seabios", rsdp_gone);
    REQUIRE(a);
    CHECK_EQ_U64(a->rsdp.source, ACPI_RSDP_NONE);
    CHECK_EQ_STR(a->rsdp.reason, "not found");
    CHECK_EQ_STR(a->hpet.reason, "no table");
    free(a);
}

/* ---- root tables -------------------------------------------------------------------------- */

static void break_rsdt(struct fake_mem *fm)
{
    fake_find(fm, "RSDT")->bytes[20] ^= 0x01;
}

TEST(acpi_rsdt_bad_checksum_rejected)
{
    struct acpi_info *a = parse_edited("q35-seabios", break_rsdt);
    REQUIRE(a);
    const struct acpi_table *t = find_table(a, "RSDT");
    if (CHECK(t)) {
        CHECK(!t->ok);
        CHECK_EQ_STR(t->reason, "checksum");
    }
    CHECK_EQ_STR(a->root_note, "no valid RSDT or XSDT");
    CHECK_EQ_U64(a->n_tables, 1);
    CHECK(!a->madt.present);
    CHECK_EQ_STR(a->madt.reason, "no table");
    free(a);
}

static void break_xsdt(struct fake_mem *fm)
{
    fake_find(fm, "XSDT")->bytes[20] ^= 0x01;
}

TEST(acpi_xsdt_bad_falls_back_to_rsdt)
{
    struct acpi_info *a = parse_edited("q35-ovmf", break_xsdt);
    REQUIRE(a);
    const struct acpi_table *x = find_table(a, "XSDT"), *r = find_table(a, "RSDT");
    if (CHECK(x && r)) {
        CHECK(!x->ok);
        CHECK_EQ_STR(x->reason, "checksum");
        CHECK(r->ok && r->used);
    }
    CHECK(!a->xsdt_used);
    CHECK_EQ_STR(a->root_note, "XSDT rejected: RSDT used");
    check_qemu_madt(&a->madt);
    check_qemu_hpet(&a->hpet);
    check_qemu_pm_timer(&a->fadt);
    free(a);
}

static void rsdt_wrong_signature(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "RSDT");
    memcpy(r->bytes, "ZZZZ", 4);   /* no table has this signature */
    fake_fix_table_checksum(r);
}

TEST(acpi_rsdt_signature_mismatch_rejected)
{
    struct acpi_info *a = parse_edited("q35-seabios", rsdt_wrong_signature);
    REQUIRE(a);
    CHECK_EQ_U64(a->n_tables, 1);
    CHECK_EQ_STR(a->tables[0].reason, "signature mismatch");
    CHECK_EQ_STR(a->root_note, "no valid RSDT or XSDT");
    free(a);
}
