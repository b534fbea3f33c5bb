/* kernel/discover/smbios_report.c - see smbios_report.h. The parser (drivers/smbios.c)
 * reads memory only through firmware_map() (acpi_report.h); this file turns what it found into a record. */
#include "kernel/discover/smbios_report.h"

#include "kernel/discover/acpi_report.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"
#include "ticklab/smbios.h"

/* Escaped bytes of one SMBIOS string in the record: 13 strings of at most this, with their
 * keys, stay well under REC_MAX whatever the strings hold. */
#define STR_OUT_MAX 72

static struct smbios_info facts;

/* The loader's copy is named by the boot path that brought it (as the RSDP's is). */
static const char *source_name(const struct boot_info *boot, enum smbios_source s)
{
    static const char *const names[] = {
        [SMBIOS_NONE] = "absent", [SMBIOS_EFI_TABLE] = "efi_config_table",
        [SMBIOS_BIOS_SCAN] = "bios_scan",
    };
    return s == SMBIOS_LOADER ? boot_path_name(boot->path) : names[s];
}

static void str(struct json *j, const char *key, const char *s)
{
    json_strn(j, key, s, json_escaped_prefix(s, k_strlen(s), STR_OUT_MAX));
}

/* One object of strings (or null when its structure was not in the table). */
struct str_field {
    const char *key;
    size_t at;                  /* offsetof the smbios_str in struct smbios_info */
};
#define FIELD(key, member) { key, offsetof(struct smbios_info, member) }
static const struct str_field system_fields[] = {
    FIELD("manufacturer", system.manufacturer), FIELD("product", system.product),
    FIELD("version", system.version), FIELD("sku", system.sku), FIELD("family", system.family),
};
static const struct str_field board_fields[] = {
    FIELD("manufacturer", baseboard.manufacturer), FIELD("product", baseboard.product),
    FIELD("version", baseboard.version),
};
static const struct str_field bios_fields[] = {
    FIELD("vendor", bios.vendor), FIELD("version", bios.version), FIELD("date", bios.date),
};
static const struct str_field cpu_fields[] = {
    FIELD("manufacturer", processor.manufacturer), FIELD("version", processor.version),
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Opens the object when present (the caller adds more members and closes it). */
static bool strings_object(struct json *j, const char *name, bool present,
                           const struct str_field *f, size_t n, const struct smbios_info *s)
{
    if (!present) {
        json_null(j, name);
        return false;
    }
    json_obj_open(j, name);
    for (size_t i = 0; i < n; i++)
        str(j, f[i].key, (const char *)s + f[i].at);
    return true;
}

static void identity_members(struct json *j, const struct smbios_info *s)
{
    if (strings_object(j, "system", s->has_system, system_fields, N(system_fields), s))
        json_obj_close(j);
    if (strings_object(j, "baseboard", s->has_baseboard, board_fields, N(board_fields), s))
        json_obj_close(j);
    if (strings_object(j, "bios", s->has_bios, bios_fields, N(bios_fields), s)) {
        char rel[8];
        fmt_snprintf(rel, sizeof(rel), "%u.%u", s->bios.release_major, s->bios.release_minor);
        json_str(j, "release", s->bios.release_major != 0xFF ? rel : NULL);
        json_obj_close(j);
    }
    if (s->has_chassis)
        json_u64(j, "chassis_type", s->chassis_type);
    else
        json_null(j, "chassis_type");
    json_u64(j, "processors", s->processors);
    if (strings_object(j, "processor", s->processors > 0, cpu_fields, N(cpu_fields), s)) {
        json_u64(j, "max_speed_mhz", s->processor.max_speed_mhz);
        json_u64(j, "cores", s->processor.cores);
        json_obj_close(j);
    }
}

/* Where the tables are and how the walk went. */
static void table_members(struct json *j, const struct smbios_info *s)
{
    char version[16];
    fmt_snprintf(version, sizeof(version), "%u.%u", s->major, s->minor);
    json_str(j, "entry_point", s->eps64 ? "3.0" : "2.1");
    json_str(j, "version", version);
    if (s->source == SMBIOS_LOADER)
        json_null(j, "eps_phys");
    else
        json_hex(j, "eps_phys", s->eps_phys);
    json_hex(j, "table_phys", s->table_phys);
    json_u64(j, "table_bytes", s->table_bytes);
    json_u64(j, "structures", s->structures);
    json_bool(j, "end_of_table", s->end_of_table);
    json_str(j, "walk_reason", s->walk_reason);
    json_u64(j, "bad_string_refs", s->bad_string_refs);
}

static void record(const struct boot_info *boot, const struct smbios_info *s)
{
    bool found = s->source != SMBIOS_NONE;
    struct rec r;
    rec_begin(&r, "smbios");
    json_bool(&r.j, "present", found);
    json_str(&r.j, "source", source_name(boot, s->source));
    json_str(&r.j, "reason", s->reason);
    json_str(&r.j, "copy_reason", s->copy_reason);
    json_str(&r.j, "efi_reason", s->efi_reason);
    json_str(&r.j, "passed_over", s->passed_over);
    if (found) {
        table_members(&r.j, s);
        identity_members(&r.j, s);
    }
    json_str(&r.j, "withheld", "serial numbers, asset tags and the system UUID: never sent");
    rec_emit(&r);
}

static void text(const struct boot_info *boot, const struct smbios_info *s)
{
    if (s->source == SMBIOS_NONE) {
        kprintf("  smbios      none: %s%s%s%s%s\n", s->reason,
                s->copy_reason ? "; loader's copy: " : "", s->copy_reason ? s->copy_reason : "",
                s->efi_reason ? "; " : "", s->efi_reason ? s->efi_reason : "");
        return;
    }
    kprintf("  smbios      %u.%u from %s, %u structures%s%s\n", s->major, s->minor,
            source_name(boot, s->source), s->structures, s->walk_reason ? "; walk stopped: " : "",
            s->walk_reason ? s->walk_reason : "");
    kprintf("  machine     %s %s %s; board %s%s%s; BIOS %s %s %s\n", s->system.manufacturer,
            s->system.product, s->system.version,
            s->has_baseboard ? s->baseboard.manufacturer : "none",
            s->has_baseboard ? " " : "", s->baseboard.product, s->bios.vendor, s->bios.version,
            s->bios.date);
}

void smbios_inventory(const struct boot_info *boot)
{
    struct smbios_where where = { .efi_systab = boot->efi_systab };
    for (unsigned i = 0; i < boot->n_smbios && i < SMBIOS_MAX_COPIES; i++) {
        where.copy[i] = boot->smbios[i].bytes;
        where.copy_len[i] = boot->smbios[i].len;
        where.n_copies++;
    }
    const struct smbios_mem mem = { firmware_map, NULL };
    smbios_parse(&mem, &where, &facts);
    record(boot, &facts);
    text(boot, &facts);
}
