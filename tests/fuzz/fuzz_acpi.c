/* tests/fuzz/fuzz_acpi.c - libFuzzer target for drivers/acpi.c (build: tests/fuzz/fuzz.mk).
 *
 * The input is a fake physical memory: one flags byte, then regions
 *     u32 phys, u16 length, length bytes           (little-endian; the last may be cut short)
 * each put in a buffer of exactly its size (tests/host/acpi_fixture.c), so ASan reports any
 * read past what the parser mapped. Flags:
 *     bit 0  the first region is the loader's RSDP copy, not memory
 *     bit 1  recompute every RSDP and table checksum before parsing, so that mutations get
 *            past the checksums into the decoders (a fuzzer rarely guesses a checksum)
 * Seeds are the QEMU fixtures (tests/host/fixtures/acpi/extract.py --seed). Besides memory
 * errors, the target aborts when the result breaks one of the parser's promises. */
#include <stdlib.h>
#include <string.h>

#include "acpi_fixture.h"

#define FLAG_RSDP_COPY     1u
#define FLAG_FIX_CHECKSUMS 2u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

static void check_str(const char *s, size_t cap)
{
    check(memchr(s, 0, cap) != NULL);
}

/* Present facts have no reason; absent ones always have one. */
static void check_fact(int present, const char *reason)
{
    check(present ? reason == NULL : reason != NULL);
}

static void check_tables(const struct acpi_info *a)
{
    check(a->n_tables <= ACPI_MAX_TABLES);
    for (unsigned i = 0; i < a->n_tables; i++) {
        const struct acpi_table *t = &a->tables[i];
        check_str(t->sig, sizeof(t->sig));
        check_str(t->oem_id, sizeof(t->oem_id));
        check(t->ok || t->reason != NULL);
        check(!t->used || t->ok);
        check(!t->ok || (t->length >= ACPI_HEADER_BYTES && t->length <= ACPI_TABLE_MAX_BYTES));
    }
}

static void check_madt(const struct acpi_madt *m)
{
    check_fact(m->present, m->reason);
    check(m->n_cpus <= ACPI_MAX_CPUS && m->n_ioapics <= ACPI_MAX_IOAPICS);
    check(m->n_overrides <= ACPI_MAX_OVERRIDES && m->n_nmis <= ACPI_MAX_NMIS);
    for (unsigned i = 0; i < m->n_overrides; i++)
        check(acpi_polarity_name(m->overrides[i].polarity) &&
              acpi_trigger_name(m->overrides[i].trigger));
}

static void check_result(const struct acpi_info *a)
{
    check((a->rsdp.source == ACPI_RSDP_NONE) == (a->rsdp.reason != NULL));
    check(a->rsdp.source != ACPI_RSDP_NONE || a->n_tables == 0);
    check_str(a->rsdp.oem_id, sizeof(a->rsdp.oem_id));
    check_tables(a);
    check_madt(&a->madt);
    check_fact(a->hpet.present, a->hpet.reason);
    check(!a->hpet.present || (a->hpet.addr != 0 && a->hpet.addr_space == ACPI_GAS_MEMORY));
    check_fact(a->fadt.present, a->fadt.reason);
    check_fact(a->fadt.pm_timer_present, a->fadt.pm_timer_reason);
    check(!a->fadt.pm_timer_present || a->fadt.pm_timer_port != 0);
}

static void fix_checksums(struct fake_mem *fm)
{
    for (unsigned i = 0; i < fm->n; i++) {
        struct fake_region *r = &fm->regions[i];
        if (strcmp(r->sig, "RSDP") == 0)
            fake_fix_rsdp_checksums(r->bytes, r->len);
        else
            fake_fix_table_checksum(r);
    }
    if (fm->rsdp_copy)
        fake_fix_rsdp_checksums(fm->rsdp_copy, fm->rsdp_copy_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fake_mem fm;
    if (size < 1)
        return 0;
    memset(&fm, 0, sizeof(fm));
    fake_load_regions(&fm, data + 1, size - 1, data[0] & FLAG_RSDP_COPY);
    if (data[0] & FLAG_FIX_CHECKSUMS)
        fix_checksums(&fm);
    struct acpi_info *a = fake_parse(&fm);
    check_result(a);
    free(a);
    fake_mem_free(&fm);
    return 0;
}
