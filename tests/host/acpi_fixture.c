/* tests/host/acpi_fixture.c - see acpi_fixture.h. */
#include "acpi_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURE_DIR "tests/host/fixtures/acpi"

static const void *fake_map(void *ctx, uint64_t phys, size_t len)
{
    struct fake_mem *fm = ctx;
    fm->maps++;
    for (unsigned i = 0; i < fm->n; i++) {
        const struct fake_region *r = &fm->regions[i];
        if (phys >= r->phys && phys - r->phys <= r->len && len <= r->len - (phys - r->phys))
            return r->bytes + (phys - r->phys);
    }
    fm->map_misses++;
    return NULL;
}

struct acpi_mem fake_mem_acpi(struct fake_mem *fm)
{
    return (struct acpi_mem){ fake_map, fm };
}

struct fake_region *fake_region_add(struct fake_mem *fm, uint64_t phys, const void *bytes,
                                    size_t len)
{
    if (fm->n == FAKE_MAX_REGIONS)
        return NULL;
    struct fake_region *r = &fm->regions[fm->n++];
    r->phys = phys;
    r->len = len;
    r->bytes = malloc(len ? len : 1);   /* malloc(0) may return NULL */
    memcpy(r->bytes, bytes, len);
    memset(r->sig, 0, sizeof(r->sig));
    if (len >= 8 && memcmp(bytes, "RSD PTR ", 8) == 0)
        memcpy(r->sig, "RSDP", 4);
    else if (len >= 4)
        memcpy(r->sig, bytes, 4);
    return r;
}

void fake_mem_free(struct fake_mem *fm)
{
    for (unsigned i = 0; i < fm->n; i++)
        free(fm->regions[i].bytes);
    free(fm->rsdp_copy);
    memset(fm, 0, sizeof(*fm));
}

struct fake_region *fake_find(struct fake_mem *fm, const char *sig)
{
    for (unsigned i = 0; i < fm->n; i++)
        if (strcmp(fm->regions[i].sig, sig) == 0)
            return &fm->regions[i];
    return NULL;
}

static uint8_t sum8(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    while (n--)
        s = (uint8_t)(s + *p++);
    return s;
}

void fake_fix_table_checksum(struct fake_region *r)
{
    if (r->len < ACPI_HEADER_BYTES)
        return;
    uint32_t len;
    memcpy(&len, r->bytes + 4, 4);
    if (len > r->len)
        len = (uint32_t)r->len;
    r->bytes[9] = 0;
    r->bytes[9] = (uint8_t)-sum8(r->bytes, len);
}

void fake_fix_rsdp_checksums(uint8_t *rsdp, size_t len)
{
    if (len < ACPI_RSDP_V1_BYTES)
        return;
    rsdp[8] = 0;
    rsdp[8] = (uint8_t)-sum8(rsdp, ACPI_RSDP_V1_BYTES);
    if (len < ACPI_RSDP_V2_BYTES || rsdp[15] < 2)
        return;
    uint32_t ext;
    memcpy(&ext, rsdp + 20, 4);
    if (ext > len)
        ext = (uint32_t)len;
    rsdp[32] = 0;
    rsdp[32] = (uint8_t)-sum8(rsdp, ext);
}

static uint8_t *read_file(const char *path, size_t want)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = malloc(want ? want : 1);
    size_t got = f ? fread(buf, 1, want, f) : 0;
    int extra = f ? fgetc(f) : EOF;
    if (f)
        fclose(f);
    if (got != want || extra != EOF) {
        fprintf(stderr, "acpi_fixture: %s: expected %zu bytes\n", path, want);
        free(buf);
        return NULL;
    }
    return buf;
}

/* One manifest line: kind file phys length. */
static int load_line(struct fake_mem *fm, const char *dir, const char *line)
{
    char kind[16], file[128], path[512];
    unsigned long long phys;
    size_t len;
    if (sscanf(line, "%15s %127s %llx %zu", kind, file, &phys, &len) != 4)
        return -1;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    uint8_t *bytes = read_file(path, len);
    if (!bytes)
        return -1;
    if (strcmp(kind, "rsdp_copy") == 0) {
        fm->rsdp_copy = bytes;
        fm->rsdp_copy_len = len;
        return 0;
    }
    struct fake_region *r = fake_region_add(fm, phys, bytes, len);
    free(bytes);
    return r ? 0 : -1;
}

int fixture_load(const char *name, struct fake_mem *fm)
{
    char dir[256], path[300], line[512];
    memset(fm, 0, sizeof(*fm));
    snprintf(dir, sizeof(dir), "%s/%s", FIXTURE_DIR, name);
    snprintf(path, sizeof(path), "%s/manifest", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "acpi_fixture: cannot open %s (run from the repository root)\n", path);
        return -1;
    }
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f))
        if (line[0] != '#' && line[0] != '\n' && load_line(fm, dir, line) != 0) {
            fprintf(stderr, "acpi_fixture: %s: bad line: %s", path, line);
            rc = -1;
        }
    fclose(f);
    if (rc)
        fake_mem_free(fm);
    return rc;
}

struct acpi_info *fake_parse(struct fake_mem *fm)
{
    struct acpi_info *info = malloc(sizeof(*info));
    struct acpi_mem m = fake_mem_acpi(fm);
    acpi_parse(&m, fm->rsdp_copy, fm->rsdp_copy_len, info);
    return info;
}

void fake_load_regions(struct fake_mem *fm, const uint8_t *data, size_t size, bool first_is_copy)
{
    size_t pos = 0;
    while (size - pos >= FAKE_REGION_HEAD_BYTES && fm->n < FAKE_MAX_REGIONS) {
        uint32_t phys;
        uint16_t len;
        memcpy(&phys, data + pos, 4);
        memcpy(&len, data + pos + 4, 2);
        pos += FAKE_REGION_HEAD_BYTES;
        size_t n = len < size - pos ? len : size - pos;
        if (first_is_copy && !fm->rsdp_copy) {
            fm->rsdp_copy = malloc(n ? n : 1);
            memcpy(fm->rsdp_copy, data + pos, n);
            fm->rsdp_copy_len = n;
        } else {
            fake_region_add(fm, phys, data + pos, n);
        }
        pos += n;
    }
}
