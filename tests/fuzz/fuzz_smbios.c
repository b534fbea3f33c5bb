/* tests/fuzz/fuzz_smbios.c - libFuzzer target for drivers/smbios.c (build: tests/fuzz/fuzz.mk).
 *
 * The input is fake physical memory as for fuzz_acpi.c: one flags byte, then regions
 *     u32 phys, u16 length, length bytes           (little-endian; the last may be cut short)
 * each in a buffer of exactly its size (tests/host/acpi_fixture.c). Flags:
 *     bit 0  the first region is the loader's copy of an entry point, not memory
 *     bit 1  recompute the checksums of every entry point ("_SM_", "_SM3_") at the start of
 *            a region or of the copy, so that mutations reach the structure walk
 *     bit 2  the second region's address is the EFI system table's
 * Seeds: tests/fuzz/smbios_seeds.py. Besides memory errors, the target aborts when the
 * result breaks one of the parser's promises. */
#include <stdlib.h>
#include <string.h>

#include "acpi_fixture.h"
#include "smbios_build.h"
#include "ticklab/smbios.h"

#define FLAG_COPY          1u
#define FLAG_FIX_CHECKSUMS 2u
#define FLAG_EFI_SYSTAB    4u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise is a crash the fuzzer keeps, like a memory error. */
#define check(cond) ((cond) ? (void)0 : abort())

/* NUL-terminated within its array, printable ASCII only. */
static void check_str(const char *s)
{
    const char *nul = memchr(s, 0, SMBIOS_STR_MAX + 1);
    check(nul != NULL);
    size_t n = (size_t)(nul - s);
    for (size_t i = 0; i < n; i++)
        check(s[i] >= 0x20 && s[i] < 0x7f);
}

static void check_result(const struct smbios_info *s)
{
    check((s->source == SMBIOS_NONE) == (s->reason != NULL));
    check(s->structures <= SMBIOS_MAX_STRUCTURES);
    if (s->source == SMBIOS_NONE)
        check(s->structures == 0 && !s->has_system && !s->has_bios && s->processors == 0);
    else
        check(s->table_phys != 0 && s->table_bytes != 0 &&
              s->table_bytes <= SMBIOS_TABLE_MAX_BYTES);
    check(!s->end_of_table || s->walk_reason == NULL);
    const char *strs[] = { s->bios.vendor, s->bios.version, s->bios.date,
                           s->system.manufacturer, s->system.product, s->system.version,
                           s->system.sku, s->system.family, s->baseboard.manufacturer,
                           s->baseboard.product, s->baseboard.version,
                           s->processor.manufacturer, s->processor.version };
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        check_str(strs[i]);
}

static void fix(uint8_t *p, size_t len)
{
    if (len >= 0x18 && memcmp(p, "_SM3_", 5) == 0)
        sm_fix_eps3(p);
    else if (len >= 0x1F && memcmp(p, "_SM_", 4) == 0)
        sm_fix_eps2(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fake_mem fm = { 0 };
    uint8_t flags = size ? data[0] : 0;
    if (size)
        fake_load_regions(&fm, data + 1, size - 1, flags & FLAG_COPY);
    for (unsigned i = 0; (flags & FLAG_FIX_CHECKSUMS) && i < fm.n; i++)
        fix(fm.regions[i].bytes, fm.regions[i].len);
    if ((flags & FLAG_FIX_CHECKSUMS) && fm.rsdp_copy)
        fix(fm.rsdp_copy, fm.rsdp_copy_len);
    struct smbios_where w = { .n_copies = fm.rsdp_copy ? 1 : 0 };
    w.copy[0] = fm.rsdp_copy;
    w.copy_len[0] = fm.rsdp_copy_len;
    if ((flags & FLAG_EFI_SYSTAB) && fm.n >= 2)
        w.efi_systab = fm.regions[1].phys;
    struct acpi_mem a = fake_mem_acpi(&fm);
    struct smbios_mem m = { a.map, a.ctx };
    struct smbios_info *s = malloc(sizeof(*s));
    smbios_parse(&m, &w, s);
    check_result(s);
    free(s);
    fake_mem_free(&fm);
    return 0;
}
