/* drivers/smbios.h - the SMBIOS tables: which PC this is (system, baseboard, BIOS,
 * processor), from the entry point the loader copied, the EFI configuration table, or the
 * BIOS area.
 *
 * Follows the DMTF System Management BIOS Reference Specification, DSP0134 3.6.0: 5.2.1
 * the 2.1 (32-bit) entry point "_SM_", 5.2.2 the 3.0 (64-bit) entry point "_SM3_", 6.1 the
 * structure header and string set, 7.1 BIOS Information (type 0), 7.2 System Information
 * (type 1), 7.3 Baseboard (type 2), 7.4 System Enclosure (type 3), 7.5 Processor (type 4),
 * 7.45 End-of-Table (type 127); UEFI 2.10 4.3 and 4.6 for the system table and its
 * configuration table (the SMBIOS and SMBIOS3 GUIDs).
 *
 * A pure parser: like drivers/acpi.c it reads memory only through the caller's map(), so
 * host tests hand it buffers of exactly the size asked for and ASan sees any read beyond.
 *
 * Trust nothing: an entry point is used only when its anchor, length and checksum (and for
 * 2.x the "_DMI_" intermediate anchor and its checksum) pass; its table only when the
 * address is not zero, the length is not zero and at most SMBIOS_TABLE_MAX_BYTES, and the
 * whole length can be mapped. Every structure must fit in the table with its string set
 * (ended by two NULs inside the table); the walk stops at the first that does not
 * (walk_reason) and keeps what came before. Strings are copied at most SMBIOS_STR_MAX
 * bytes, non-printable bytes as '?'.
 *
 * Serial numbers, asset tags and the system UUID are never read into the result: what
 * leaves the machine identifies its model and firmware, not the unit.
 *
 * Quirks handled:
 *  - SMBIOS 2.1 firmware that says its entry point is 0x1E bytes (the 2.1 document's own
 *    error): accepted; the intermediate part is read at its fixed offsets either way.
 *  - Both entry points present (most firmware since 2015): the 3.0 one is tried first, as
 *    Linux does; when it fails a check the 2.x one is used and the failure kept.
 *  - 3.0's length is a maximum, not the table's size: the walk ends at End-of-Table.
 *
 * Reason strings are stable (they appear in records, docs/report-format.md):
 *  entry point: "not found", "not readable", "anchor", "length", "checksum",
 *               "intermediate anchor", "intermediate checksum", "table address zero",
 *               "table length zero", "table length over cap", "table not readable"
 *  EFI:         "efi system table not readable", "efi system table signature",
 *               "efi configuration table not readable", "no smbios entry in the efi
 *               configuration table"
 *  walk:        "structure length under 4", "structure past table end",
 *               "strings past table end", "more structures than the cap" */
#ifndef TICKLAB_DRIVERS_SMBIOS_H
#define TICKLAB_DRIVERS_SMBIOS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Returns a pointer to the bytes at [phys, phys + len), or NULL when any of them is not
 * readable. Pointers stay valid until smbios_parse() returns. */
struct smbios_mem {
    const void *(*map)(void *ctx, uint64_t phys, size_t len);
    void *ctx;
};

#define SMBIOS_EPS2_BYTES      0x1Fu     /* the 2.1 entry point, as 2.1..2.8 define it */
#define SMBIOS_EPS3_BYTES      0x18u     /* the 3.0 entry point */
#define SMBIOS_EPS_MAX_BYTES   0x20u     /* a copy is kept up to this */
#define SMBIOS_TABLE_MAX_BYTES (1u << 20) /* real tables are a few KiB */
#define SMBIOS_MAX_STRUCTURES  4096u
#define SMBIOS_STR_MAX         64u       /* the 2.x limit on a string's significant bytes */

enum smbios_source {
    SMBIOS_NONE,
    SMBIOS_LOADER,       /* the loader's copy (Multiboot2 tag 13, or ticklab.efi's) */
    SMBIOS_EFI_TABLE,    /* the EFI configuration table, from the system table's address */
    SMBIOS_BIOS_SCAN,    /* 0xF0000..0xFFFFF on 16-byte boundaries */
};

/* Where to look, in this order: each loader copy, the EFI configuration table, the BIOS
 * area. */
#define SMBIOS_MAX_COPIES 2
struct smbios_where {
    const uint8_t *copy[SMBIOS_MAX_COPIES];
    size_t copy_len[SMBIOS_MAX_COPIES];
    unsigned n_copies;
    uint64_t efi_systab;        /* the EFI system table's physical address; 0: none */
};

typedef char smbios_str[SMBIOS_STR_MAX + 1];

struct smbios_info {
    enum smbios_source source;
    const char *reason;         /* source NONE: the first check a candidate failed, or
                                   "not found" */
    const char *copy_reason;    /* a loader copy failed this check */
    const char *efi_reason;     /* the EFI configuration table gave nothing: why */
    const char *passed_over;    /* an entry point tried before the one used failed this
                                   check (a damaged 3.0 one beside a good 2.x one) */
    uint64_t eps_phys;          /* where the entry point is; 0 for a loader copy */
    bool eps64;                 /* the 3.0 entry point ("_SM3_") */
    uint8_t major, minor, docrev;
    uint64_t table_phys;
    uint32_t table_bytes;       /* 2.x: the table's length; 3.0: its maximum size */
    uint16_t declared_structures;   /* 2.x only: the entry point's count */

    unsigned structures;        /* structures walked (End-of-Table included) */
    bool end_of_table;          /* a type 127 structure ended the walk */
    const char *walk_reason;    /* the walk stopped at damage: structures before it kept */
    unsigned bad_string_refs;   /* string numbers beyond their structure's string set */

    bool has_bios, has_system, has_baseboard, has_chassis;
    struct {
        smbios_str vendor, version, date;
        uint8_t release_major, release_minor;   /* 0xFF: not given (before 2.4) */
    } bios;
    struct {
        smbios_str manufacturer, product, version, sku, family;
    } system;
    struct {
        smbios_str manufacturer, product, version;
    } baseboard;
    uint8_t chassis_type;       /* 7.4.1: 3 desktop, 9 laptop, 0x17 rack mount, ... */
    unsigned processors;        /* type 4 structures whose socket is populated */
    struct {
        smbios_str manufacturer, version;
        uint16_t max_speed_mhz; /* 0: unknown */
        uint8_t cores;          /* 0: unknown (before 2.5, or not given) */
    } processor;                /* the first populated one */
};

/* Finds and decodes the tables into *out. Never fails: what is missing or broken is
 * described in *out. */
void smbios_parse(const struct smbios_mem *mem, const struct smbios_where *where,
                  struct smbios_info *out);

#endif
