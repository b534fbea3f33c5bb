/* tests/host/smbios_build.h - SMBIOS tables and entry points made byte by byte, with their
 * checksums (DSP0134 5.2.1, 5.2.2, 6.1), for the parser's tests and the fuzzer's seeds. */
#ifndef TICKLAB_TESTS_HOST_SMBIOS_BUILD_H
#define TICKLAB_TESTS_HOST_SMBIOS_BUILD_H
#include <stddef.h>
#include <stdint.h>

#define SM_TABLE_BYTES 4096
#define SM_MAX_STRUCTS 64

struct sm_table {
    uint8_t b[SM_TABLE_BYTES];
    size_t len;
    size_t off[SM_MAX_STRUCTS];   /* where each structure starts */
    unsigned n;
};

void sm_begin(struct sm_table *t);
/* A structure: its formatted area (header included; its length byte is what the bytes
 * say), then the strings (a NULL-ended list; none gives the two NULs alone). */
void sm_struct(struct sm_table *t, const uint8_t *formatted, size_t len, const char **strings);
/* End-of-Table (type 127). */
void sm_end(struct sm_table *t);
size_t sm_offset_of(const struct sm_table *t, unsigned i);

uint8_t sm_sum(const uint8_t *p, size_t n);
/* A 2.1 entry point (31 bytes) and a 3.0 one (24 bytes), checksums right. */
void sm_eps2(uint8_t *e, uint8_t major, uint8_t minor, uint32_t table_phys, uint16_t table_len,
             uint16_t structures);
void sm_eps3(uint8_t *e, uint8_t major, uint8_t minor, uint64_t table_phys, uint32_t table_max);
/* Both checksums of a 2.1 entry point again, after an edit. */
void sm_fix_eps2(uint8_t *e);
void sm_fix_eps3(uint8_t *e);

/* The EFI configuration table's GUIDs as they lie in memory. */
extern const uint8_t sm_guid_smbios[16], sm_guid_smbios3[16];
#define SM_GUID_SMBIOS  sm_guid_smbios
#define SM_GUID_SMBIOS3 sm_guid_smbios3

#endif
