/* tests/host/test_acpi.c - drivers/acpi.c against the tables QEMU's firmware really builds
 * (tests/host/fixtures/acpi, captured with dump=acpi) and against broken variants of them
 * made in memory. Every region sits in a buffer of exactly its size (acpi_fixture.c), so
 * ASan turns any read past what the parser mapped into a failure.
 *
 * The expected facts are those in /work/shared/notes/qemu-facts.md: LAPIC 0xFEE00000, IOAPIC
 * id 0 at 0xFEC00000 (GSI base 0), IRQ0 -> GSI 2, IRQ 5/9/10/11 level-triggered, HPET at
 * 0xFED00000 with 3 comparators, PM timer at port 0x608 counting 24 bits. */
#include <stdlib.h>

#include "acpi_fixture.h"
#include "test.h"

#define NEW_TABLE_PHYS 0x20000000u   /* above every fixture region: a free spot */

/* ---- helpers ------------------------------------------------------------------------------ */

static const struct acpi_table *find_table(const struct acpi_info *a, const char *sig)
{
    for (unsigned i = 0; i < a->n_tables; i++)
        if (strcmp(a->tables[i].sig, sig) == 0)
            return &a->tables[i];
    return NULL;
}

static const struct acpi_override *find_override(const struct acpi_madt *m, unsigned irq)
{
    for (unsigned i = 0; i < m->n_overrides; i++)
        if (m->overrides[i].irq == irq)
            return &m->overrides[i];
    return NULL;
}

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* A table under construction: header, then bytes appended. */
struct tbuf {
    uint8_t b[4096];
    size_t len;
};

static void tb_begin(struct tbuf *t, const char *sig)
{
    memset(t, 0, sizeof(*t));
    memcpy(t->b, sig, 4);
    t->b[8] = 1;                        /* revision */
    memcpy(t->b + 10, "TICKLB", 6);
    t->len = ACPI_HEADER_BYTES;
}

static void tb_put(struct tbuf *t, const void *bytes, size_t n)
{
    memcpy(t->b + t->len, bytes, n);
    t->len += n;
}

static void tb_finish(struct tbuf *t)
{
    uint8_t s = 0;
    put32(t->b + 4, (uint32_t)t->len);
    t->b[9] = 0;
    for (size_t i = 0; i < t->len; i++)
        s = (uint8_t)(s + t->b[i]);
    t->b[9] = (uint8_t)-s;
}

static void region_replace(struct fake_region *r, const void *bytes, size_t len)
{
    free(r->bytes);
    r->bytes = malloc(len);
    memcpy(r->bytes, bytes, len);
    r->len = len;
}

/* Replaces the root table's entries (RSDT: 4-byte addresses) and fixes its checksum. */
static void rsdt_set_entries(struct fake_mem *fm, const uint32_t *addrs, unsigned n)
{
    struct fake_region *r = fake_find(fm, "RSDT");
    struct tbuf t;
    tb_begin(&t, "RSDT");
    memcpy(t.b, r->bytes, ACPI_HEADER_BYTES);
    for (unsigned i = 0; i < n; i++)
        tb_put(&t, &addrs[i], 4);
    tb_finish(&t);
    region_replace(r, t.b, t.len);
}

/* Moves table sig to NEW_TABLE_PHYS with new contents; the RSDT follows. */
static void table_swap(struct fake_mem *fm, const char *sig, const struct tbuf *t)
{
    struct fake_region *r = fake_find(fm, sig), *root = fake_find(fm, "RSDT");
    for (size_t off = ACPI_HEADER_BYTES; off + 4 <= root->len; off += 4)
        if (get32(root->bytes + off) == r->phys)
            put32(root->bytes + off, NEW_TABLE_PHYS);
    fake_fix_table_checksum(root);
    region_replace(r, t->b, t->len);
    r->phys = NEW_TABLE_PHYS;
}

/* The fixture parsed after edit(fm) ran; NULL (and a failed check) if it would not load. */
static struct acpi_info *parse_edited(const char *fixture, void (*edit)(struct fake_mem *))
{
    struct fake_mem fm;
    if (!CHECK(fixture_load(fixture, &fm) == 0))
        return NULL;
    if (edit)
        edit(&fm);
    struct acpi_info *a = fake_parse(&fm);
    fake_mem_free(&fm);
    return a;
}

/* ---- the fixtures as captured ------------------------------------------------------------- */

static void check_qemu_madt(const struct acpi_madt *m)
{
    CHECK(m->present);
    CHECK_EQ_U64(m->lapic_addr, 0xFEE00000u);
    CHECK(m->pcat_compat);
    CHECK_EQ_U64(m->n_cpus, 1);
    CHECK(m->cpus[0].enabled);
    CHECK_EQ_U64(m->n_ioapics, 1);
    CHECK_EQ_U64(m->ioapics[0].id, 0);
    CHECK_EQ_U64(m->ioapics[0].addr, 0xFEC00000u);
    CHECK_EQ_U64(m->ioapics[0].gsi_base, 0);
    const struct acpi_override *o = find_override(m, 0);
    if (CHECK(o != NULL))
        CHECK_EQ_U64(o->gsi, 2);
    static const unsigned level_irqs[] = { 5, 9, 10, 11 };
    for (unsigned i = 0; i < 4; i++) {
        o = find_override(m, level_irqs[i]);
        if (CHECK(o != NULL))
            CHECK_EQ_U64(o->trigger, ACPI_TRIG_LEVEL);
    }
    CHECK_EQ_STR(m->walk_reason, NULL);
    CHECK_EQ_U64(m->unknown_entries + m->short_entries, 0);
}

static void check_qemu_hpet(const struct acpi_hpet_info *h)
{
    CHECK(h->present);
    CHECK_EQ_STR(h->reason, NULL);
    CHECK_EQ_U64(h->addr, 0xFED00000u);
    CHECK_EQ_U64(h->comparators, 3);
    CHECK(h->counter_64bit);
    CHECK(h->legacy_capable);
}

static void check_qemu_pm_timer(const struct acpi_fadt_info *f)
{
    CHECK(f->present);
    CHECK(f->pm_timer_present);
    CHECK_EQ_STR(f->pm_timer_reason, NULL);
    CHECK_EQ_U64(f->pm_timer_port, 0x608);
    CHECK(!f->pm_timer_32bit);
}

static void check_all_tables_ok(const struct acpi_info *a)
{
    for (unsigned i = 0; i < a->n_tables; i++)
        if (!a->tables[i].ok)
            CHECK_EQ_STR(a->tables[i].reason, "(no reason: the table should pass)");
    CHECK_EQ_U64(a->tables_dropped, 0);
}

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
    memcpy(r->bytes, "XXXX", 4);
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

/* ---- one table broken, the others kept ---------------------------------------------------- */

static void break_hpet(struct fake_mem *fm)
{
    fake_find(fm, "HPET")->bytes[44] ^= 0x10;   /* an address byte */
}

TEST(acpi_table_bad_checksum_rejected_others_kept)
{
    struct acpi_info *a = parse_edited("q35-seabios", break_hpet);
    REQUIRE(a);
    const struct acpi_table *t = find_table(a, "HPET");
    if (CHECK(t)) {
        CHECK(!t->ok);
        CHECK(!t->used);
        CHECK_EQ_STR(t->reason, "checksum");
    }
    CHECK(!a->hpet.present);
    CHECK_EQ_STR(a->hpet.reason, "table rejected");
    CHECK_EQ_STR(a->hpet.table_reason, "checksum");
    check_qemu_madt(&a->madt);
    check_qemu_pm_timer(&a->fadt);
    CHECK(find_table(a, "MCFG") && find_table(a, "MCFG")->ok);
    free(a);
}

static void madt_length_short(struct fake_mem *fm)
{
    put32(fake_find(fm, "APIC")->bytes + 4, 20);
}

static void madt_length_past(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "APIC");
    put32(r->bytes + 4, (uint32_t)r->len + 1);
}

static void madt_length_huge(struct fake_mem *fm)
{
    put32(fake_find(fm, "APIC")->bytes + 4, 0x7FFFFFFFu);
}

static void check_madt_rejected(void (*edit)(struct fake_mem *), const char *reason)
{
    struct acpi_info *a = parse_edited("q35-seabios", edit);
    REQUIRE(a);
    CHECK(!a->madt.present);
    CHECK_EQ_STR(a->madt.reason, "table rejected");
    CHECK_EQ_STR(a->madt.table_reason, reason);
    check_qemu_hpet(&a->hpet);
    free(a);
}

TEST(acpi_table_length_checks)
{
    check_madt_rejected(madt_length_short, "length shorter than header");
    check_madt_rejected(madt_length_past, "length past mapped area");
    check_madt_rejected(madt_length_huge, "length over 1 MiB cap");
}

static void rsdt_null_and_wild_entries(struct fake_mem *fm)
{
    struct fake_region *root = fake_find(fm, "RSDT");
    uint32_t addrs[16];
    unsigned n = (unsigned)(root->len - ACPI_HEADER_BYTES) / 4;
    memcpy(addrs, root->bytes + ACPI_HEADER_BYTES, n * 4);
    addrs[n++] = 0;             /* a null entry */
    addrs[n++] = 0xFFFFFFF0u;   /* nothing there */
    rsdt_set_entries(fm, addrs, n);
}

TEST(acpi_root_null_and_unmapped_entries_listed)
{
    struct acpi_info *a = parse_edited("q35-seabios", rsdt_null_and_wild_entries);
    REQUIRE(a);
    REQUIRE(a->n_tables >= 3);
    /* The DSDT comes last; the two bad entries just before it. */
    CHECK_EQ_STR(a->tables[a->n_tables - 3].reason, "null address");
    CHECK_EQ_STR(a->tables[a->n_tables - 2].reason, "header not readable");
    CHECK_EQ_STR(a->tables[a->n_tables - 1].sig, "DSDT");
    check_qemu_madt(&a->madt);
    free(a);
}

/* 70 entries: 69 x WAET, then the HPET. The list keeps 64; the HPET is still decoded. */
static void rsdt_too_many(struct fake_mem *fm)
{
    uint32_t addrs[70];
    for (unsigned i = 0; i < 69; i++)
        addrs[i] = (uint32_t)fake_find(fm, "WAET")->phys;
    addrs[69] = (uint32_t)fake_find(fm, "HPET")->phys;
    rsdt_set_entries(fm, addrs, 70);
}

TEST(acpi_table_list_cap_counts_dropped)
{
    struct acpi_info *a = parse_edited("q35-seabios", rsdt_too_many);
    REQUIRE(a);
    CHECK_EQ_U64(a->n_tables, ACPI_MAX_TABLES);
    CHECK_EQ_U64(a->tables_dropped, 1 + 70 - ACPI_MAX_TABLES);   /* RSDT counts too */
    check_qemu_hpet(&a->hpet);
    free(a);
}

/* A second MADT, listed after the first, with another LAPIC address. */
static void madt_twice(struct fake_mem *fm)
{
    struct fake_region *m = fake_find(fm, "APIC"), *root = fake_find(fm, "RSDT");
    struct tbuf t;
    memcpy(t.b, m->bytes, m->len);
    t.len = m->len;
    put32(t.b + 36, 0xFEE10000u);
    tb_finish(&t);
    fake_region_add(fm, NEW_TABLE_PHYS, t.b, t.len);
    uint32_t addrs[16];
    unsigned n = (unsigned)(root->len - ACPI_HEADER_BYTES) / 4;
    memcpy(addrs, root->bytes + ACPI_HEADER_BYTES, n * 4);
    addrs[n++] = NEW_TABLE_PHYS;
    rsdt_set_entries(fm, addrs, n);
}

TEST(acpi_duplicate_table_first_used)
{
    struct acpi_info *a = parse_edited("q35-seabios", madt_twice);
    REQUIRE(a);
    CHECK_EQ_U64(a->madt.lapic_addr, 0xFEE00000u);
    unsigned seen = 0;
    for (unsigned i = 0; i < a->n_tables; i++) {
        const struct acpi_table *t = &a->tables[i];
        if (strcmp(t->sig, "APIC") != 0)
            continue;
        CHECK(t->ok);
        CHECK_EQ_U64(t->used, seen == 0);
        CHECK_EQ_STR(t->reason, seen == 0 ? NULL : "duplicate, first used");
        seen++;
    }
    CHECK_EQ_U64(seen, 2);
    free(a);
}

/* ---- MADT entries ------------------------------------------------------------------------- */

static void madt_entry_len0(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "APIC");
    r->bytes[sizeof(struct acpi_madt_fixed) + 1] = 0;
    fake_fix_table_checksum(r);
}

TEST(acpi_madt_entry_length_zero_stops_walk)
{
    struct acpi_info *a = parse_edited("q35-seabios", madt_entry_len0);
    REQUIRE(a);
    CHECK(a->madt.present);
    CHECK_EQ_STR(a->madt.walk_reason, "entry length under 2");
    CHECK_EQ_U64(a->madt.lapic_addr, 0xFEE00000u);
    CHECK_EQ_U64(a->madt.entries, 0);
    CHECK_EQ_U64(a->madt.n_cpus, 0);
    free(a);
}

static void madt_last_entry_past_end(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "APIC");
    size_t off = sizeof(struct acpi_madt_fixed), last = off;
    while (off < r->len) {
        last = off;
        off += r->bytes[off + 1];
    }
    r->bytes[last + 1] = (uint8_t)(r->len - last + 1);
    fake_fix_table_checksum(r);
}

TEST(acpi_madt_entry_past_end_stops_walk)
{
    struct acpi_info *a = parse_edited("q35-seabios", madt_last_entry_past_end);
    REQUIRE(a);
    CHECK(a->madt.present);
    CHECK_EQ_STR(a->madt.walk_reason, "entry past table end");
    /* QEMU's last entry is the LAPIC NMI: everything before it is kept. */
    CHECK_EQ_U64(a->madt.n_cpus, 1);
    CHECK_EQ_U64(a->madt.n_ioapics, 1);
    CHECK_EQ_U64(a->madt.n_overrides, 5);
    CHECK_EQ_U64(a->madt.n_nmis, 0);
    free(a);
}

static void madt_begin(struct tbuf *t, uint32_t lapic_addr)
{
    uint32_t fixed[2] = { lapic_addr, ACPI_MADT_PCAT_COMPAT };
    tb_begin(t, "APIC");
    tb_put(t, fixed, sizeof(fixed));
}

/* x2APIC, address override, NMIs, an unknown and a short entry, and a trailing byte. */
static void madt_synthetic(struct fake_mem *fm)
{
    struct tbuf t;
    struct acpi_madt_x2apic x2 = { ACPI_MADT_X2APIC, 16, 0, 300, ACPI_MADT_CPU_ENABLED, 7 };
    struct acpi_madt_lapic cpu_off = { ACPI_MADT_LAPIC, 8, 2, 5, ACPI_MADT_CPU_ONLINE_CAPABLE };
    struct acpi_madt_lapic_addr ov = { ACPI_MADT_LAPIC_ADDR, 12, 0, 0x1FEE00000ull };
    struct acpi_madt_nmi_src ns = { ACPI_MADT_NMI_SOURCE, 8, 0xF, 9 };   /* low, level */
    struct acpi_madt_x2apic_nmi xn = { ACPI_MADT_X2APIC_NMI, 12, 0x5, 0xFFFFFFFFu, 1, { 0 } };
    static const uint8_t unknown[4] = { 0x7F, 4, 0, 0 }, short_ioapic[8] = { 1, 8 };
    madt_begin(&t, 0xFEE00000u);
    tb_put(&t, &x2, sizeof(x2));
    tb_put(&t, &cpu_off, sizeof(cpu_off));
    tb_put(&t, &ov, sizeof(ov));
    tb_put(&t, &ns, sizeof(ns));
    tb_put(&t, &xn, sizeof(xn));
    tb_put(&t, unknown, sizeof(unknown));
    tb_put(&t, short_ioapic, sizeof(short_ioapic));
    tb_put(&t, "\x00", 1);
    tb_finish(&t);
    table_swap(fm, "APIC", &t);
}

TEST(acpi_madt_entry_kinds)
{
    struct acpi_info *a = parse_edited("q35-seabios", madt_synthetic);
    REQUIRE(a);
    const struct acpi_madt *m = &a->madt;
    CHECK(m->present);
    CHECK_EQ_U64(m->lapic_addr, 0x1FEE00000ull);
    CHECK(m->lapic_addr_overridden);
    REQUIRE(m->n_cpus == 2);
    CHECK(m->cpus[0].x2apic && m->cpus[0].enabled);
    CHECK_EQ_U64(m->cpus[0].apic_id, 300);
    CHECK_EQ_U64(m->cpus[0].uid, 7);
    CHECK(!m->cpus[1].enabled && m->cpus[1].online_capable);
    CHECK_EQ_U64(m->cpus[1].apic_id, 5);
    CHECK_EQ_U64(m->cpus[1].uid, 2);
    REQUIRE(m->n_nmis == 2);
    CHECK_EQ_U64(m->nmis[0].kind, ACPI_NMI_SOURCE);
    CHECK_EQ_U64(m->nmis[0].gsi, 9);
    CHECK_EQ_U64(m->nmis[0].polarity, ACPI_POL_LOW);
    CHECK_EQ_U64(m->nmis[0].trigger, ACPI_TRIG_LEVEL);
    CHECK_EQ_U64(m->nmis[1].kind, ACPI_NMI_X2APIC);
    CHECK_EQ_U64(m->nmis[1].uid, 0xFFFFFFFFu);
    CHECK_EQ_U64(m->nmis[1].lint, 1);
    CHECK_EQ_U64(m->unknown_entries, 1);
    CHECK_EQ_U64(m->short_entries, 1);
    CHECK_EQ_U64(m->n_ioapics, 0);
    CHECK_EQ_STR(m->walk_reason, "entry past table end");   /* the lone trailing byte */
    free(a);
}

/* 300 CPUs and 40 overrides: over the caps. */
static void madt_over_caps(struct fake_mem *fm)
{
    static struct tbuf t;   /* 2.8 KiB: off the stack */
    struct acpi_madt_lapic cpu = { ACPI_MADT_LAPIC, 8, 0, 0, ACPI_MADT_CPU_ENABLED };
    struct acpi_madt_override o = { ACPI_MADT_OVERRIDE, 10, 0, 0, 0, 0 };
    madt_begin(&t, 0xFEE00000u);
    for (unsigned i = 0; i < 300; i++) {
        cpu.apic_id = (uint8_t)i;
        tb_put(&t, &cpu, sizeof(cpu));
    }
    for (unsigned i = 0; i < 40; i++) {
        o.irq = (uint8_t)i;
        tb_put(&t, &o, sizeof(o));
    }
    tb_finish(&t);
    table_swap(fm, "APIC", &t);
}

TEST(acpi_madt_caps_count_dropped)
{
    struct acpi_info *a = parse_edited("q35-seabios", madt_over_caps);
    REQUIRE(a);
    CHECK(a->madt.present);
    CHECK_EQ_U64(a->madt.n_cpus, ACPI_MAX_CPUS);
    CHECK_EQ_U64(a->madt.cpus_dropped, 300 - ACPI_MAX_CPUS);
    CHECK_EQ_U64(a->madt.n_overrides, ACPI_MAX_OVERRIDES);
    CHECK_EQ_U64(a->madt.overrides_dropped, 40 - ACPI_MAX_OVERRIDES);
    CHECK_EQ_STR(a->madt.walk_reason, NULL);
    free(a);
}

/* ---- HPET and FADT ------------------------------------------------------------------------ */

static void hpet_in_io_space(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "HPET");
    r->bytes[offsetof(struct acpi_hpet_desc, base)] = ACPI_GAS_IO;
    fake_fix_table_checksum(r);
}

TEST(acpi_hpet_address_in_io_space_rejected)
{
    struct acpi_info *a = parse_edited("q35-seabios", hpet_in_io_space);
    REQUIRE(a);
    CHECK(!a->hpet.present);
    CHECK(a->hpet.decoded);
    CHECK_EQ_STR(a->hpet.reason, "address not in system memory space");
    CHECK_EQ_STR(a->hpet.table_reason, NULL);
    CHECK(find_table(a, "HPET")->ok);
    free(a);
}

static void hpet_short(struct fake_mem *fm)
{
    struct tbuf t;
    tb_begin(&t, "HPET");
    tb_put(&t, "\x01\xa2\x86\x80", 4);   /* only the block ID */
    tb_finish(&t);
    table_swap(fm, "HPET", &t);
}

TEST(acpi_hpet_table_too_short_rejected)
{
    struct acpi_info *a = parse_edited("q35-seabios", hpet_short);
    REQUIRE(a);
    CHECK(!a->hpet.present);
    CHECK_EQ_STR(a->hpet.reason, "shorter than HPET table");
    free(a);
}

TEST(acpi_hpet_period_bounds)
{
    const char *why = "unset";
    CHECK(!acpi_hpet_period_ok(99999, &why));
    CHECK_EQ_STR(why, "period under 100000 fs");
    CHECK(acpi_hpet_period_ok(100000, &why));
    CHECK_EQ_STR(why, NULL);
    CHECK(acpi_hpet_period_ok(100000000, &why));
    CHECK(!acpi_hpet_period_ok(100000001, &why));
    CHECK_EQ_STR(why, "period over 100000000 fs");
    CHECK(!acpi_hpet_period_ok(0, NULL));
    CHECK(acpi_hpet_period_ok(10000000, NULL));   /* QEMU's 100 MHz */
}

static void x_pm_timer_in_memory(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "FACP");
    r->bytes[offsetof(struct acpi_fadt_fields, x_pm_tmr_blk)] = ACPI_GAS_MEMORY;
    fake_fix_table_checksum(r);
}

TEST(acpi_fadt_x_pm_timer_not_io_falls_back)
{
    struct acpi_info *a = parse_edited("q35-seabios", x_pm_timer_in_memory);
    REQUIRE(a);
    check_qemu_pm_timer(&a->fadt);
    CHECK(!a->fadt.pm_timer_from_x);
    CHECK_EQ_STR(a->fadt.x_pm_tmr_note, "X_PM_TMR_BLK not in system I/O space");
    free(a);
}

static void pm_tmr_len_2(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "FACP");
    r->bytes[offsetof(struct acpi_fadt_fields, pm_tmr_len)] = 2;
    fake_fix_table_checksum(r);
}

static void tmr_val_ext(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "FACP");
    r->bytes[offsetof(struct acpi_fadt_fields, flags) + 1] |= ACPI_FADT_TMR_VAL_EXT >> 8;
    fake_fix_table_checksum(r);
}

static void hw_reduced(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "FACP");
    r->bytes[offsetof(struct acpi_fadt_fields, flags) + 2] |= ACPI_FADT_HW_REDUCED >> 16;
    fake_fix_table_checksum(r);
}

static void fadt_truncated(struct fake_mem *fm)
{
    struct fake_region *r = fake_find(fm, "FACP");
    put32(r->bytes + 4, 100);
    fake_fix_table_checksum(r);
}

TEST(acpi_fadt_pm_timer_variants)
{
    struct acpi_info *a = parse_edited("pc-seabios", pm_tmr_len_2);
    REQUIRE(a);
    CHECK(!a->fadt.pm_timer_present);
    CHECK_EQ_STR(a->fadt.pm_timer_reason, "PM_TMR_LEN is not 4");
    free(a);
    a = parse_edited("pc-seabios", tmr_val_ext);
    REQUIRE(a);
    CHECK(a->fadt.pm_timer_present && a->fadt.pm_timer_32bit);
    free(a);
    a = parse_edited("q35-seabios", hw_reduced);
    REQUIRE(a);
    CHECK(a->fadt.hw_reduced && !a->fadt.pm_timer_present);
    CHECK_EQ_STR(a->fadt.pm_timer_reason, "hardware-reduced ACPI");
    free(a);
    a = parse_edited("q35-seabios", fadt_truncated);
    REQUIRE(a);
    CHECK(!a->fadt.present);
    CHECK_EQ_STR(a->fadt.reason, "shorter than ACPI 1.0 FADT");
    CHECK_EQ_STR(a->fadt.pm_timer_reason, "no FADT");
    CHECK(find_table(a, "DSDT") == NULL);   /* found only through the FADT */
    free(a);
}

/* ---- regression: acpi_header_changed_between_maps ---------------------------------------- */

/* Found by the fuzzer: the header was checked from a 36-byte mapping and the table parsed
 * from a longer one; where two readings of the same address differ, the checks passed on one
 * copy and the walk ran over the other, past its end. Here the MADT's address first resolves
 * to a region holding only its header (added first, so the fake finds it first for short
 * reads), and the full-length read to one whose header says something else. */
static void madt_header_differs(struct fake_mem *fm)
{
    struct fake_region *m = fake_find(fm, "APIC");
    uint8_t other[4096];
    memcpy(other, m->bytes, m->len);
    put32(other + 4, (uint32_t)m->len - 8);     /* another length in the long copy */
    /* Make the short region the first match: move the real MADT to the end of the list. */
    struct fake_region saved = *m;
    *m = fm->regions[--fm->n];
    fake_region_add(fm, saved.phys, saved.bytes, ACPI_HEADER_BYTES);
    struct fake_region *longer = fake_region_add(fm, saved.phys, other, saved.len);
    fake_fix_table_checksum(longer);
    free(saved.bytes);
}

TEST(acpi_header_changed_between_maps)
{
    struct acpi_info *a = parse_edited("q35-seabios", madt_header_differs);
    REQUIRE(a);
    const struct acpi_table *t = find_table(a, "APIC");
    if (CHECK(t)) {
        CHECK(!t->ok);
        CHECK_EQ_STR(t->reason, "header changed between reads");
    }
    CHECK(!a->madt.present);
    free(a);
}
