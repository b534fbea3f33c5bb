/* tests/host/test_smbios.c - drivers/smbios.c on crafted tables: each way an entry point or
 * a structure can be damaged, the three places an entry point comes from, and the fields
 * that must never be read (serial numbers, UUID). Memory is the fake of acpi_fixture.h:
 * each region a buffer of exactly its size, so a read past what was mapped trips ASan. */
#include <stdlib.h>

#include "acpi_fixture.h"
#include "smbios_build.h"
#include "ticklab/smbios.h"
#include "test.h"

#define TABLE_PHYS  0x7FFE0000ull
#define AREA_PHYS   0xF0000ull
#define AREA_BYTES  0x10000u
#define EPS2_AT     0xF5A40u
#define EPS3_AT     0xF5A20u
#define SYSTAB_PHYS 0x7F000000ull
#define CT_PHYS     0x7F001000ull

static const char SERIAL[] = "SECRET-SERIAL-0042";
static const uint8_t UUID[16] = { 0xde, 0xad, 0xbe, 0xef, 0x11, 0x22, 0x33, 0x44,
                                  0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc };

/* A PC's usual set: BIOS, system (with serial and UUID), board (with serial), chassis, two
 * processor sockets of which one is populated, End-of-Table. */
static void typical(struct sm_table *t)
{
    sm_begin(t);
    uint8_t bios[0x18] = { 0, 0x18, 0, 0, 1, 2, 0, 0xE8, 3, 0 };
    bios[0x14] = 5, bios[0x15] = 17;
    sm_struct(t, bios, sizeof(bios), (const char *[]){ "Vendor Inc.", "1.07   ",
                                                       "03/14/2024", NULL });
    uint8_t sys[0x1B] = { 1, 0x1B, 1, 0, 1, 2, 3, 4 };
    memcpy(sys + 8, UUID, 16);
    sys[0x19] = 5, sys[0x1A] = 6;
    sm_struct(t, sys, sizeof(sys), (const char *[]){ "Maker", "Box 9000", "rev B", SERIAL,
                                                     "SKU-7", "Box", NULL });
    uint8_t board[0x0F] = { 2, 0x0F, 2, 0, 1, 2, 3, 4, 5 };
    sm_struct(t, board, sizeof(board), (const char *[]){ "BoardCo", "B-1", "1.0", SERIAL,
                                                         "asset-99", NULL });
    uint8_t chassis[0x09] = { 3, 0x09, 3, 0, 1, 0x83 };   /* lock bit + desktop */
    sm_struct(t, chassis, sizeof(chassis), (const char *[]){ "Maker", NULL });
    uint8_t empty_cpu[0x28] = { 4, 0x28, 4, 0, 1 };        /* socket not populated */
    sm_struct(t, empty_cpu, sizeof(empty_cpu), (const char *[]){ "CPU0", NULL });
    uint8_t cpu[0x28] = { 4, 0x28, 5, 0, 1, 3, 0xC6, 2 };
    cpu[0x10] = 3, cpu[0x14] = 0xB8, cpu[0x15] = 0x0B;     /* 3000 MHz */
    cpu[0x18] = 0x41, cpu[0x23] = 8;
    sm_struct(t, cpu, sizeof(cpu), (const char *[]){ "CPU1", "GenuineIntel",
                                                     "Intel(R) Core(TM) i7 \x01 test", NULL });
    sm_end(t);
}

/* One test's machine: the typical table and its entry points, edited by the test before
 * run() puts them in fake memory and parses. */
enum { EPS2 = 1, EPS3 = 2 };
struct fixture {
    struct sm_table t;
    uint8_t eps2[SMBIOS_EPS2_BYTES], eps3[SMBIOS_EPS3_BYTES];
    unsigned in_area;           /* EPS2 | EPS3: the entry points put in the BIOS area */
    bool table_mapped;
    struct fake_mem fm;
    struct smbios_where where;
    struct smbios_info info;
};

static void prepare(struct fixture *f, unsigned in_area)
{
    memset(f, 0, sizeof(*f));
    typical(&f->t);
    sm_eps2(f->eps2, 2, 8, TABLE_PHYS, (uint16_t)f->t.len, 7);
    sm_eps3(f->eps3, 3, 6, TABLE_PHYS, (uint32_t)f->t.len);
    f->in_area = in_area;
    f->table_mapped = true;
}

static void run(struct fixture *f)
{
    uint8_t *area = calloc(1, AREA_BYTES);
    if (f->in_area & EPS2)
        memcpy(area + (EPS2_AT - AREA_PHYS), f->eps2, SMBIOS_EPS2_BYTES);
    if (f->in_area & EPS3)
        memcpy(area + (EPS3_AT - AREA_PHYS), f->eps3, SMBIOS_EPS3_BYTES);
    fake_region_add(&f->fm, AREA_PHYS, area, AREA_BYTES);
    free(area);
    if (f->table_mapped)
        fake_region_add(&f->fm, TABLE_PHYS, f->t.b, f->t.len);
    struct acpi_mem a = fake_mem_acpi(&f->fm);
    struct smbios_mem m = { a.map, a.ctx };
    smbios_parse(&m, &f->where, &f->info);
}

static void done(struct fixture *f)
{
    fake_mem_free(&f->fm);
}

static void check_typical(const struct smbios_info *s)
{
    CHECK_EQ_STR(s->bios.vendor, "Vendor Inc.");
    CHECK_EQ_STR(s->bios.version, "1.07");               /* trailing padding gone */
    CHECK_EQ_STR(s->bios.date, "03/14/2024");
    CHECK_EQ_U64(s->bios.release_major, 5);
    CHECK_EQ_U64(s->bios.release_minor, 17);
    CHECK_EQ_STR(s->system.manufacturer, "Maker");
    CHECK_EQ_STR(s->system.product, "Box 9000");
    CHECK_EQ_STR(s->system.version, "rev B");
    CHECK_EQ_STR(s->system.sku, "SKU-7");
    CHECK_EQ_STR(s->system.family, "Box");
    CHECK_EQ_STR(s->baseboard.manufacturer, "BoardCo");
    CHECK_EQ_STR(s->baseboard.product, "B-1");
    CHECK_EQ_STR(s->baseboard.version, "1.0");
    CHECK_EQ_U64(s->chassis_type, 3);
    CHECK_EQ_U64(s->processors, 1);
    CHECK_EQ_STR(s->processor.manufacturer, "GenuineIntel");
    CHECK_EQ_STR(s->processor.version, "Intel(R) Core(TM) i7 ? test");
    CHECK_EQ_U64(s->processor.max_speed_mhz, 3000);
    CHECK_EQ_U64(s->processor.cores, 8);
    CHECK_EQ_U64(s->structures, 7);
    CHECK(s->end_of_table);
    CHECK_EQ_STR(s->walk_reason, NULL);
    CHECK_EQ_U64(s->bad_string_refs, 0);
}

/* Found at eps_phys (0: a loader copy) by `source`, and the typical table decoded whole. */
static void expect_typical(struct fixture *f, enum smbios_source source, uint64_t eps_phys)
{
    CHECK_EQ_U64(f->info.source, source);
    CHECK_EQ_U64(f->info.eps_phys, eps_phys);
    check_typical(&f->info);
    done(f);
}

TEST(smbios_2x_found_by_the_bios_scan)
{
    struct fixture f;
    prepare(&f, EPS2);
    run(&f);
    CHECK(!f.info.eps64);
    CHECK_EQ_U64(f.info.major, 2);
    CHECK_EQ_U64(f.info.minor, 8);
    CHECK_EQ_U64(f.info.table_phys, TABLE_PHYS);
    CHECK_EQ_U64(f.info.table_bytes, f.t.len);
    CHECK_EQ_STR(f.info.reason, NULL);
    CHECK_EQ_STR(f.info.passed_over, NULL);
    expect_typical(&f, SMBIOS_BIOS_SCAN, EPS2_AT);
}

static bool contains(const uint8_t *hay, size_t n, const void *needle, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return true;
    return false;
}

TEST(smbios_never_reads_serials_or_the_uuid)
{
    struct fixture f;
    prepare(&f, EPS3);
    run(&f);
    CHECK_EQ_U64(f.info.source, SMBIOS_BIOS_SCAN);
    CHECK(f.info.has_system && f.info.has_baseboard);
    const uint8_t *raw = (const uint8_t *)&f.info;
    size_t n = sizeof(f.info);
    CHECK(!contains(raw, n, SERIAL, 6));
    CHECK(!contains(raw, n, "asset", 5));
    CHECK(!contains(raw, n, UUID, 4) && !contains(raw, n, UUID + 8, 4));
    done(&f);
}

TEST(smbios_3x_preferred_when_both_are_there)
{
    struct fixture f;
    prepare(&f, EPS2 | EPS3);
    /* 3.0 gives a maximum: the walk ends at End-of-Table, before the zeros after it */
    sm_eps3(f.eps3, 3, 6, TABLE_PHYS, (uint32_t)f.t.len + 200);
    f.t.len += 200;
    run(&f);
    CHECK(f.info.eps64);
    CHECK_EQ_U64(f.info.major, 3);
    CHECK_EQ_U64(f.info.minor, 6);
    expect_typical(&f, SMBIOS_BIOS_SCAN, EPS3_AT);
}

TEST(smbios_damaged_3x_entry_point_falls_back_to_2x_and_says_so)
{
    struct fixture f;
    prepare(&f, EPS2 | EPS3);
    f.eps3[0x0C] ^= 0x40;                       /* the maximum size, checksum not redone */
    run(&f);
    CHECK(!f.info.eps64);
    CHECK_EQ_STR(f.info.passed_over, "checksum");
    expect_typical(&f, SMBIOS_BIOS_SCAN, EPS2_AT);
}

/* Nothing usable: the reason is `why`, and nothing was decoded. */
static void expect_none(struct fixture *f, const char *why)
{
    CHECK_EQ_U64(f->info.source, SMBIOS_NONE);
    CHECK_EQ_STR(f->info.reason, why);
    CHECK_EQ_U64(f->info.structures, 0);
    CHECK(!f->info.has_system);
    done(f);
}

/* The 2.x entry point alone, changed by `edit`: the check that must fail. */
static void eps2_rejected(void (*edit)(uint8_t *eps), const char *why)
{
    struct fixture f;
    prepare(&f, EPS2);
    edit(f.eps2);
    run(&f);
    expect_none(&f, why);
}

static void flip_table_len(uint8_t *e) { e[0x16] ^= 1; }
static void bad_length(uint8_t *e) { e[0x05] = 0x40; sm_fix_eps2(e); }
static void bad_dmi(uint8_t *e) { e[0x11] = 'X'; e[0x04] = 0; e[0x04] = (uint8_t)-sm_sum(e, 0x1F); }
static void bad_dmi_sum(uint8_t *e) { e[0x16] ^= 1; e[0x04] = 0; e[0x04] = (uint8_t)-sm_sum(e, 0x1F); }
static void zero_addr(uint8_t *e) { memset(e + 0x18, 0, 4); sm_fix_eps2(e); }
static void zero_len(uint8_t *e) { memset(e + 0x16, 0, 2); sm_fix_eps2(e); }
static void far_addr(uint8_t *e) { e[0x1B] = 0x10; sm_fix_eps2(e); }

TEST(smbios_entry_point_checksum_rejected)
{
    eps2_rejected(flip_table_len, "checksum");
}

TEST(smbios_entry_point_length_rejected)
{
    eps2_rejected(bad_length, "length");
}

TEST(smbios_intermediate_anchor_rejected)
{
    eps2_rejected(bad_dmi, "intermediate anchor");
}

TEST(smbios_intermediate_checksum_rejected)
{
    eps2_rejected(bad_dmi_sum, "intermediate checksum");
}

TEST(smbios_table_address_zero_rejected)
{
    eps2_rejected(zero_addr, "table address zero");
}

TEST(smbios_table_length_zero_rejected)
{
    eps2_rejected(zero_len, "table length zero");
}

TEST(smbios_table_not_mapped_rejected)
{
    eps2_rejected(far_addr, "table not readable");
}

TEST(smbios_3x_table_over_the_cap_rejected)
{
    struct fixture f;
    prepare(&f, EPS3);
    sm_eps3(f.eps3, 3, 0, TABLE_PHYS, SMBIOS_TABLE_MAX_BYTES + 1);
    run(&f);
    expect_none(&f, "table length over cap");
}

TEST(smbios_nothing_in_the_bios_area_is_not_found)
{
    struct fixture f;
    prepare(&f, 0);
    run(&f);
    expect_none(&f, "not found");
}

/* The typical table damaged by `edit` at its third structure: the two before are kept. */
static void walk_damaged(void (*edit)(struct sm_table *t), const char *why)
{
    struct fixture f;
    prepare(&f, EPS3);
    edit(&f.t);
    sm_eps3(f.eps3, 3, 2, TABLE_PHYS, (uint32_t)f.t.len);
    run(&f);
    CHECK_EQ_U64(f.info.source, SMBIOS_BIOS_SCAN);
    CHECK_EQ_STR(f.info.walk_reason, why);
    CHECK_EQ_U64(f.info.structures, 2);
    CHECK(!f.info.end_of_table);
    CHECK_EQ_STR(f.info.bios.vendor, "Vendor Inc.");
    CHECK_EQ_STR(f.info.system.product, "Box 9000");
    CHECK(!f.info.has_baseboard);
    done(&f);
}

static void third_length_3(struct sm_table *t) { t->b[sm_offset_of(t, 2) + 1] = 3; }
static void third_length_huge(struct sm_table *t) { t->b[sm_offset_of(t, 2) + 1] = 0xFF; }
static void cut_in_strings(struct sm_table *t) { t->len = sm_offset_of(t, 2) + 0x12; }

TEST(smbios_structure_length_under_4_stops_the_walk)
{
    walk_damaged(third_length_3, "structure length under 4");
}

TEST(smbios_structure_past_the_table_stops_the_walk)
{
    walk_damaged(third_length_huge, "structure past table end");
}

TEST(smbios_strings_past_the_table_stop_the_walk)
{
    walk_damaged(cut_in_strings, "strings past table end");
}

/* A table of its own (t filled by the test), reached by a 2.x entry point. */
static void run_own_table(struct fixture *f, uint16_t structures)
{
    sm_eps2(f->eps2, 2, 3, TABLE_PHYS, (uint16_t)f->t.len, structures);
    f->in_area = EPS2;
    run(f);
}

TEST(smbios_string_numbers_past_the_set_are_empty_and_counted)
{
    struct fixture f;
    prepare(&f, 0);
    sm_begin(&f.t);
    uint8_t sys[0x08] = { 1, 0x08, 1, 0, 1, 2, 9, 0 };    /* version is string 9 of 2 */
    sm_struct(&f.t, sys, sizeof(sys), (const char *[]){ "A", "B", NULL });
    uint8_t board[0x08] = { 2, 0x08, 2, 0, 1, 0, 0, 0 };  /* strings named, none given */
    sm_struct(&f.t, board, sizeof(board), (const char *[]){ NULL });
    sm_end(&f.t);
    run_own_table(&f, 3);
    CHECK_EQ_STR(f.info.system.manufacturer, "A");
    CHECK_EQ_STR(f.info.system.product, "B");
    CHECK_EQ_STR(f.info.system.version, "");
    CHECK_EQ_STR(f.info.system.sku, "");                /* a 2.0 structure has no SKU */
    CHECK_EQ_STR(f.info.baseboard.manufacturer, "");
    CHECK_EQ_U64(f.info.bad_string_refs, 2);
    CHECK_EQ_U64(f.info.bios.release_major, 0xFF);    /* no type 0 */
    done(&f);
}

TEST(smbios_long_string_capped_at_64)
{
    char longs[200];
    memset(longs, 'x', sizeof(longs) - 1);
    longs[sizeof(longs) - 1] = 0;
    struct fixture f;
    prepare(&f, 0);
    sm_begin(&f.t);
    uint8_t sys[0x08] = { 1, 0x08, 1, 0, 1, 0, 0, 0 };
    sm_struct(&f.t, sys, sizeof(sys), (const char *[]){ longs, NULL });
    sm_end(&f.t);
    run_own_table(&f, 2);
    CHECK_EQ_U64(strlen(f.info.system.manufacturer), SMBIOS_STR_MAX);
    done(&f);
}

TEST(smbios_2x_count_ends_a_table_without_end_of_table)
{
    struct fixture f;
    prepare(&f, EPS2);
    f.t.len = sm_offset_of(&f.t, 6);                   /* End-of-Table cut off */
    sm_eps2(f.eps2, 2, 8, TABLE_PHYS, (uint16_t)f.t.len, 6);
    run(&f);
    CHECK_EQ_U64(f.info.structures, 6);
    CHECK(!f.info.end_of_table);
    CHECK_EQ_STR(f.info.walk_reason, NULL);
    CHECK_EQ_STR(f.info.processor.manufacturer, "GenuineIntel");
    done(&f);
}

TEST(smbios_loader_copy_used_first)
{
    struct fixture f;
    prepare(&f, EPS2);
    f.where.copy[0] = f.eps3;
    f.where.copy_len[0] = sizeof(f.eps3);
    f.where.n_copies = 1;
    run(&f);
    CHECK(f.info.eps64);
    CHECK_EQ_STR(f.info.copy_reason, NULL);
    expect_typical(&f, SMBIOS_LOADER, 0);
}

TEST(smbios_damaged_loader_copies_fall_back_to_the_bios_area)
{
    struct fixture f;
    prepare(&f, EPS2);
    uint8_t cut[20];
    memcpy(cut, f.eps3, sizeof(cut));
    f.where.copy[0] = cut;                              /* a copy cut short */
    f.where.copy_len[0] = sizeof(cut);
    f.eps3[5] ^= 1;
    f.where.copy[1] = f.eps3;                           /* and one whose checksum fails */
    f.where.copy_len[1] = sizeof(f.eps3);
    f.where.n_copies = 2;
    run(&f);
    CHECK_EQ_STR(f.info.copy_reason, "not readable");
    CHECK_EQ_STR(f.info.passed_over, "not readable");
    expect_typical(&f, SMBIOS_BIOS_SCAN, EPS2_AT);
}

/* An EFI system table at SYSTAB_PHYS whose configuration table lists another vendor's GUID,
 * then each of `guids` pointing at `at`. */
static void efi_tables(struct fixture *f, const uint8_t *const *guids, unsigned n, uint64_t at,
                       const char *signature)
{
    uint8_t st[120] = { 0 }, ct[4 * 24] = { 0 };
    memcpy(st, signature, 8);
    uint64_t entries = n + 1, ct_phys = CT_PHYS;
    memcpy(st + 104, &entries, 8);
    memcpy(st + 112, &ct_phys, 8);
    memset(ct, 0x5A, 16);
    for (unsigned i = 0; i < n; i++) {
        memcpy(ct + 24 * (i + 1), guids[i], 16);
        memcpy(ct + 24 * (i + 1) + 16, &at, 8);
    }
    fake_region_add(&f->fm, SYSTAB_PHYS, st, sizeof(st));
    fake_region_add(&f->fm, CT_PHYS, ct, 24 * entries);
    f->where.efi_systab = SYSTAB_PHYS;
}

TEST(smbios_from_the_efi_configuration_table)
{
    struct fixture f;
    prepare(&f, 0);
    fake_region_add(&f.fm, 0x7F002000, f.eps3, sizeof(f.eps3));
    efi_tables(&f, (const uint8_t *const[]){ SM_GUID_SMBIOS3 }, 1, 0x7F002000, "IBI SYST");
    run(&f);
    CHECK_EQ_STR(f.info.efi_reason, NULL);
    expect_typical(&f, SMBIOS_EFI_TABLE, 0x7F002000);
}

TEST(smbios_efi_system_table_with_a_bad_signature_is_not_used)
{
    struct fixture f;
    prepare(&f, EPS2);
    efi_tables(&f, (const uint8_t *const[]){ SM_GUID_SMBIOS }, 1, EPS2_AT, "IBI SYSX");
    run(&f);
    CHECK_EQ_U64(f.info.source, SMBIOS_BIOS_SCAN);
    CHECK_EQ_STR(f.info.efi_reason, "efi system table signature");
    done(&f);
}

TEST(smbios_efi_configuration_table_without_smbios_says_so)
{
    struct fixture f;
    prepare(&f, 0);
    efi_tables(&f, NULL, 0, 0, "IBI SYST");
    run(&f);
    CHECK_EQ_STR(f.info.efi_reason, "no smbios entry in the efi configuration table");
    expect_none(&f, "not found");
}

TEST(smbios_efi_entry_pointing_at_garbage_is_the_reason)
{
    struct fixture f;
    prepare(&f, 0);
    uint8_t junk[32] = "_SM3_ but nothing else right";
    fake_region_add(&f.fm, 0x7F002000, junk, sizeof(junk));
    efi_tables(&f, (const uint8_t *const[]){ SM_GUID_SMBIOS3, SM_GUID_SMBIOS }, 2, 0x7F002000,
               "IBI SYST");
    run(&f);
    expect_none(&f, "length");
}
