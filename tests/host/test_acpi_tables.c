/* tests/host/test_acpi_tables.c - drivers/acpi.c with one table broken at a time (length,
 * checksum, duplicates, caps), MADT entries, the HPET and FADT decoders, and regressions.
 * The fixtures as captured, the RSDP and the root tables: test_acpi.c. */
#include <stdlib.h>

#include "acpi_edit.h"
#include "test.h"

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
