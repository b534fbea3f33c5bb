/* tests/host/acpi_fixture.h - fake physical memory for the ACPI parser, and the loader of
 * the fixtures captured from QEMU (tests/host/fixtures/acpi/<name>/manifest).
 *
 * Each region lives in its own malloc'd buffer of exactly its length, and map() hands out
 * a pointer only when the whole range asked for lies inside one region: a parser read past
 * what it mapped is a heap overflow that ASan reports. Also used by tests/fuzz/fuzz_acpi.c. */
#ifndef TICKLAB_TESTS_HOST_ACPI_FIXTURE_H
#define TICKLAB_TESTS_HOST_ACPI_FIXTURE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/acpi.h"

#define FAKE_MAX_REGIONS 32

struct fake_region {
    uint64_t phys;
    size_t len;
    uint8_t *bytes;
    char sig[5];              /* the first 4 bytes when it holds a table, "RSDP" for one */
};

struct fake_mem {
    struct fake_region regions[FAKE_MAX_REGIONS];
    unsigned n;
    uint8_t *rsdp_copy;       /* the loader's copy (rsdp_copy in the manifest), or NULL */
    size_t rsdp_copy_len;
    unsigned maps, map_misses; /* map() calls, and those answered NULL */
};

/* Loads tests/host/fixtures/acpi/<name>. Returns 0, or -1 after printing why. */
int fixture_load(const char *name, struct fake_mem *fm);
void fake_mem_free(struct fake_mem *fm);
struct acpi_mem fake_mem_acpi(struct fake_mem *fm);
/* Adds a copy of bytes as a region at phys. Returns the region, or NULL when full. */
struct fake_region *fake_region_add(struct fake_mem *fm, uint64_t phys, const void *bytes,
                                    size_t len);
/* The first region whose sig matches ("APIC", "RSDP", ...), or NULL. */
struct fake_region *fake_find(struct fake_mem *fm, const char *sig);
/* Makes the table in r sum to zero again (header byte 9) after an edit. */
void fake_fix_table_checksum(struct fake_region *r);
/* The same for an RSDP: byte 8 over 20 bytes, and byte 32 over its length when r has it. */
void fake_fix_rsdp_checksums(uint8_t *rsdp, size_t len);
/* Fuzzer input as fake memory: regions `u32 phys, u16 length, length bytes` (little-endian;
 * the last may be cut short). With first_is_copy the first region is the loader's copy
 * (rsdp_copy), not memory. */
#define FAKE_REGION_HEAD_BYTES 6u
void fake_load_regions(struct fake_mem *fm, const uint8_t *data, size_t size, bool first_is_copy);
/* Parses fm (its loader copy included) into a heap-allocated acpi_info; free() it. */
struct acpi_info *fake_parse(struct fake_mem *fm);

#endif
