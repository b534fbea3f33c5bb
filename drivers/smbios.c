/* drivers/smbios.c - see smbios.h. Offsets are DSP0134's; every read of a structure's
 * field is checked against the structure's own length first (older versions have fewer
 * fields, and a field the structure does not have reads as absent, never past it). */
#include "ticklab/smbios.h"

#include "ticklab/kstring.h"

/* 2.1 entry point (DSP0134 5.2.1) */
#define EPS2_OFF_CHECKSUM     0x04
#define EPS2_OFF_LENGTH       0x05
#define EPS2_OFF_MAJOR        0x06
#define EPS2_OFF_MINOR        0x07
#define EPS2_OFF_DMI_ANCHOR   0x10    /* "_DMI_" */
#define EPS2_DMI_BYTES        15      /* 0x10..0x1E: the intermediate checksum's span */
#define EPS2_OFF_TABLE_LEN    0x16    /* u16 */
#define EPS2_OFF_TABLE_ADDR   0x18    /* u32 */
#define EPS2_OFF_STRUCTURES   0x1C    /* u16 */
#define EPS2_MIN_LENGTH       0x1E    /* 2.1's own text said 0x1E: tolerated */

/* 3.0 entry point (DSP0134 5.2.2) */
#define EPS3_OFF_CHECKSUM     0x05
#define EPS3_OFF_LENGTH       0x06
#define EPS3_OFF_MAJOR        0x07
#define EPS3_OFF_MINOR        0x08
#define EPS3_OFF_DOCREV       0x09
#define EPS3_OFF_TABLE_MAX    0x0C    /* u32 */
#define EPS3_OFF_TABLE_ADDR   0x10    /* u64 */

#define BIOS_SCAN_START       0xF0000u
#define BIOS_SCAN_END         0x100000u
#define EPS_ALIGN_BYTES       16u

/* Structure header (6.1.2) */
#define HDR_OFF_TYPE          0
#define HDR_OFF_LENGTH        1
#define HDR_BYTES             4

#define TYPE_BIOS             0
#define  BIOS_OFF_VENDOR          0x04    /* string */
#define  BIOS_OFF_VERSION         0x05    /* string */
#define  BIOS_OFF_DATE            0x08    /* string */
#define  BIOS_OFF_RELEASE_MAJOR   0x14    /* 2.4+; 0xFF: not given */
#define  BIOS_OFF_RELEASE_MINOR   0x15
#define TYPE_SYSTEM           1
#define  SYSTEM_OFF_MANUFACTURER  0x04
#define  SYSTEM_OFF_PRODUCT       0x05
#define  SYSTEM_OFF_VERSION       0x06
                                          /* 0x07 serial, 0x08..0x17 UUID: never read */
#define  SYSTEM_OFF_SKU           0x19    /* 2.4+ */
#define  SYSTEM_OFF_FAMILY        0x1A    /* 2.4+ */
#define TYPE_BASEBOARD        2
#define  BOARD_OFF_MANUFACTURER   0x04
#define  BOARD_OFF_PRODUCT        0x05
#define  BOARD_OFF_VERSION        0x06    /* 0x07 serial, 0x08 asset tag: never read */
#define TYPE_CHASSIS          3
#define  CHASSIS_OFF_TYPE         0x05    /* bit 7: lock present */
#define  CHASSIS_TYPE_MASK        0x7F
#define TYPE_PROCESSOR        4
#define  CPU_OFF_MANUFACTURER     0x07
#define  CPU_OFF_VERSION          0x10
#define  CPU_OFF_MAX_SPEED        0x14    /* u16, MHz */
#define  CPU_OFF_STATUS           0x18
#define   CPU_STATUS_POPULATED    (1u << 6)
#define  CPU_OFF_CORES            0x23    /* 2.5+; 0xFF: see Core Count 2 (not read) */
#define TYPE_END              127

/* UEFI 2.10 4.3: EFI_SYSTEM_TABLE on x86-64 */
#define EFI_ST_SIGNATURE      0x5453595320494249ull    /* "IBI SYST" */
#define EFI_ST_OFF_N_TABLES   104     /* UINTN NumberOfTableEntries */
#define EFI_ST_OFF_TABLES     112     /* EFI_CONFIGURATION_TABLE *ConfigurationTable */
#define EFI_ST_BYTES          120
#define EFI_CT_ENTRY_BYTES    24      /* EFI_GUID VendorGuid, VOID *VendorTable */
#define EFI_CT_MAX_ENTRIES    256     /* firmware lists a dozen or two */

/* EFI_GUID as it lies in memory: u32, u16, u16 little-endian, then 8 bytes in order. */
static const uint8_t guid_smbios3[16] = { 0x44, 0x15, 0xfd, 0xf2, 0x94, 0x97, 0x2c, 0x4a,
                                          0x99, 0x2e, 0xe5, 0xbb, 0xcf, 0x20, 0xe3, 0x94 };
static const uint8_t guid_smbios[16] = { 0x31, 0x2d, 0x9d, 0xeb, 0x88, 0x2d, 0xd3, 0x11,
                                         0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d };

/* ---- helpers ------------------------------------------------------------------------------ */

/* NULL for an empty or wrapping range, without asking the caller. */
static const uint8_t *map(const struct smbios_mem *m, uint64_t phys, size_t len)
{
    return len && phys <= UINT64_MAX - len ? m->map(m->ctx, phys, len) : NULL;
}

/* DSP0134's checksums: the bytes of the span add up to zero. */
static bool sums_to_zero(const uint8_t *p, size_t n)
{
    unsigned sum = 0;
    while (n--)
        sum += *p++;
    return (sum & 0xFF) == 0;
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* ---- entry points ------------------------------------------------------------------------- */

/* What the two entry points share: an anchor, a length byte and a checksum over that
 * length. */
struct eps_kind {
    const char *anchor;
    uint8_t anchor_bytes, off_length, min_length, max_length;
};
static const struct eps_kind eps2_kind = { "_SM_", 4, EPS2_OFF_LENGTH, EPS2_MIN_LENGTH,
                                           SMBIOS_EPS2_BYTES };
static const struct eps_kind eps3_kind = { "_SM3_", 5, EPS3_OFF_LENGTH, SMBIOS_EPS3_BYTES,
                                           SMBIOS_EPS_MAX_BYTES };

/* The entry point at p, len bytes of it readable: the failed check, or NULL. */
static const char *eps_check(const uint8_t *p, size_t len, const struct eps_kind *k)
{
    if (len < k->min_length || len <= k->off_length)
        return "not readable";
    if (memcmp(p, k->anchor, k->anchor_bytes) != 0)
        return "anchor";
    uint8_t n = p[k->off_length];
    if (n < k->min_length || n > k->max_length || n > len)
        return "length";
    return sums_to_zero(p, n) ? NULL : "checksum";
}

/* 2.x: the intermediate "_DMI_" part is read at its fixed offsets whatever the length. */
static const char *eps2_check(const uint8_t *p, size_t len, struct smbios_info *o)
{
    const char *why = eps_check(p, len, &eps2_kind);
    if (why)
        return why;
    if (len < SMBIOS_EPS2_BYTES)
        return "not readable";
    if (memcmp(p + EPS2_OFF_DMI_ANCHOR, "_DMI_", 5) != 0)
        return "intermediate anchor";
    if (!sums_to_zero(p + EPS2_OFF_DMI_ANCHOR, EPS2_DMI_BYTES))
        return "intermediate checksum";
    o->eps64 = false;
    o->major = p[EPS2_OFF_MAJOR];
    o->minor = p[EPS2_OFF_MINOR];
    o->docrev = 0;
    o->table_bytes = rd16(p + EPS2_OFF_TABLE_LEN);
    o->table_phys = rd32(p + EPS2_OFF_TABLE_ADDR);
    o->declared_structures = rd16(p + EPS2_OFF_STRUCTURES);
    return NULL;
}

static const char *eps3_check(const uint8_t *p, size_t len, struct smbios_info *o)
{
    const char *why = eps_check(p, len, &eps3_kind);
    if (!why) {
        o->eps64 = true;
        o->major = p[EPS3_OFF_MAJOR];
        o->minor = p[EPS3_OFF_MINOR];
        o->docrev = p[EPS3_OFF_DOCREV];
        o->table_bytes = rd32(p + EPS3_OFF_TABLE_MAX);
        o->table_phys = rd64(p + EPS3_OFF_TABLE_ADDR);
        o->declared_structures = 0;
    }
    return why;
}

static const char *table_check(const struct smbios_mem *m, const struct smbios_info *o,
                               const uint8_t **table)
{
    if (o->table_phys == 0)
        return "table address zero";
    if (o->table_bytes == 0)
        return "table length zero";
    if (o->table_bytes > SMBIOS_TABLE_MAX_BYTES)
        return "table length over cap";
    *table = map(m, o->table_phys, o->table_bytes);
    return *table ? NULL : "table not readable";
}

/* An entry point (either kind, by its anchor) and its table: NULL when both pass, and then
 * *table is the mapped structure table and *o holds the entry point's fields. */
static const char *candidate(const struct smbios_mem *m, const uint8_t *p, size_t len,
                             struct smbios_info *o, const uint8_t **table)
{
    struct smbios_info t = *o;
    const char *why = len >= 5 && memcmp(p, "_SM3_", 5) == 0 ? eps3_check(p, len, &t)
                                                              : eps2_check(p, len, &t);
    if (!why)
        why = table_check(m, &t, table);
    if (!why)
        *o = t;
    return why;
}

static void keep_first(const char **first, const char *why)
{
    if (why && !*first)
        *first = why;
}

static const char *at_phys(const struct smbios_mem *m, uint64_t phys, struct smbios_info *o,
                           const uint8_t **table)
{
    const uint8_t *p = map(m, phys, SMBIOS_EPS2_BYTES);
    size_t len = SMBIOS_EPS2_BYTES;
    if (!p) {
        p = map(m, phys, SMBIOS_EPS3_BYTES);     /* a 3.0 one at the very end of memory */
        len = SMBIOS_EPS3_BYTES;
    }
    if (!p)
        return "not readable";
    const char *why = candidate(m, p, len, o, table);
    if (!why)
        o->eps_phys = phys;
    return why;
}

/* The configuration table's SMBIOS3 entry, then its SMBIOS entry. */
static bool from_efi(const struct smbios_mem *m, uint64_t systab, struct smbios_info *o,
                     const uint8_t **table, const char **first)
{
    const uint8_t *st = map(m, systab, EFI_ST_BYTES);
    if (!st) {
        o->efi_reason = "efi system table not readable";
        return false;
    }
    if (rd64(st) != EFI_ST_SIGNATURE) {
        o->efi_reason = "efi system table signature";
        return false;
    }
    uint64_t n = rd64(st + EFI_ST_OFF_N_TABLES);
    n = n < EFI_CT_MAX_ENTRIES ? n : EFI_CT_MAX_ENTRIES;
    const uint8_t *ct = n ? map(m, rd64(st + EFI_ST_OFF_TABLES), n * EFI_CT_ENTRY_BYTES) : NULL;
    if (!ct) {
        o->efi_reason = "efi configuration table not readable";
        return false;
    }
    const uint8_t *guids[2] = { guid_smbios3, guid_smbios };
    bool listed = false;
    for (unsigned g = 0; g < 2; g++) {
        for (uint64_t i = 0; i < n; i++) {
            const uint8_t *e = ct + i * EFI_CT_ENTRY_BYTES;
            if (memcmp(e, guids[g], 16) != 0)
                continue;
            listed = true;
            const char *why = at_phys(m, rd64(e + 16), o, table);
            if (!why)
                return true;
            keep_first(first, why);
        }
    }
    if (!listed)
        o->efi_reason = "no smbios entry in the efi configuration table";
    return false;
}

/* 16-byte boundaries of the BIOS area: every "_SM3_" first, then every "_SM_". */
static bool from_bios(const struct smbios_mem *m, struct smbios_info *o, const uint8_t **table,
                      const char **first)
{
    static const char *const anchors[2] = { "_SM3_", "_SM_" };
    for (unsigned a = 0; a < 2; a++) {
        size_t alen = k_strlen(anchors[a]);
        for (uint64_t p = BIOS_SCAN_START; p + SMBIOS_EPS3_BYTES <= BIOS_SCAN_END;
             p += EPS_ALIGN_BYTES) {
            const uint8_t *s = map(m, p, alen);
            if (!s || memcmp(s, anchors[a], alen) != 0)
                continue;
            const char *why = at_phys(m, p, o, table);
            if (!why)
                return true;
            keep_first(first, why);
        }
    }
    return false;
}

static const uint8_t *find(const struct smbios_mem *m, const struct smbios_where *w,
                           struct smbios_info *o)
{
    const uint8_t *table = NULL;
    const char *first = NULL;
    unsigned n = w->n_copies < SMBIOS_MAX_COPIES ? w->n_copies : SMBIOS_MAX_COPIES;
    for (unsigned i = 0; i < n; i++) {
        if (!w->copy[i] || !w->copy_len[i])
            continue;
        const char *why = candidate(m, w->copy[i], w->copy_len[i], o, &table);
        if (!why) {
            o->source = SMBIOS_LOADER;
            o->passed_over = o->copy_reason;
            return table;
        }
        keep_first(&o->copy_reason, why);
    }
    if (w->efi_systab && from_efi(m, w->efi_systab, o, &table, &first))
        o->source = SMBIOS_EFI_TABLE;
    else if (from_bios(m, o, &table, &first))
        o->source = SMBIOS_BIOS_SCAN;
    if (table) {
        o->passed_over = o->copy_reason ? o->copy_reason : first;
        return table;
    }
    o->source = SMBIOS_NONE;
    o->reason = first ? first : "not found";
    return NULL;
}

/* ---- structures --------------------------------------------------------------------------- */

struct structure {
    const uint8_t *f;           /* the formatted area, header included */
    uint8_t len;                /* its length */
    const uint8_t *strings;     /* the string set, without its final NUL */
    size_t strings_len;
};

/* The string whose number is at offset off of s, into dst (empty: none, or a number past
 * the string set). */
static void string_at(struct smbios_info *o, const struct structure *s, uint8_t off,
                      smbios_str dst)
{
    dst[0] = 0;
    if (off >= s->len || s->f[off] == 0)
        return;
    unsigned want = s->f[off];
    size_t at = 0;
    for (unsigned k = 1; k < want && at < s->strings_len; k++)
        at += k_strnlen((const char *)s->strings + at, s->strings_len - at) + 1;
    if (at >= s->strings_len) {
        o->bad_string_refs++;
        return;
    }
    size_t n = k_strnlen((const char *)s->strings + at, s->strings_len - at);
    while (n > 0 && s->strings[at + n - 1] == ' ')
        n--;                    /* firmware pads to a fixed width */
    n = n < SMBIOS_STR_MAX ? n : SMBIOS_STR_MAX;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s->strings[at + i];
        dst[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    dst[n] = 0;
}

static uint8_t byte_at(const struct structure *s, uint8_t off, uint8_t absent)
{
    return off < s->len ? s->f[off] : absent;
}

static void decode_processor(struct smbios_info *o, const struct structure *s)
{
    if (!(byte_at(s, CPU_OFF_STATUS, 0) & CPU_STATUS_POPULATED))
        return;
    if (o->processors++)
        return;
    string_at(o, s, CPU_OFF_MANUFACTURER, o->processor.manufacturer);
    string_at(o, s, CPU_OFF_VERSION, o->processor.version);
    if (s->len >= CPU_OFF_MAX_SPEED + 2)
        o->processor.max_speed_mhz = rd16(s->f + CPU_OFF_MAX_SPEED);
    uint8_t cores = byte_at(s, CPU_OFF_CORES, 0);
    o->processor.cores = cores == 0xFF ? 0 : cores;
}

/* The strings of types 0..3 read, by type and offset, into the result. */
static const struct {
    uint8_t type, off;
    size_t at;                  /* offsetof the smbios_str in struct smbios_info */
} string_fields[] = {
    { TYPE_BIOS, BIOS_OFF_VENDOR, offsetof(struct smbios_info, bios.vendor) },
    { TYPE_BIOS, BIOS_OFF_VERSION, offsetof(struct smbios_info, bios.version) },
    { TYPE_BIOS, BIOS_OFF_DATE, offsetof(struct smbios_info, bios.date) },
    { TYPE_SYSTEM, SYSTEM_OFF_MANUFACTURER, offsetof(struct smbios_info, system.manufacturer) },
    { TYPE_SYSTEM, SYSTEM_OFF_PRODUCT, offsetof(struct smbios_info, system.product) },
    { TYPE_SYSTEM, SYSTEM_OFF_VERSION, offsetof(struct smbios_info, system.version) },
    { TYPE_SYSTEM, SYSTEM_OFF_SKU, offsetof(struct smbios_info, system.sku) },
    { TYPE_SYSTEM, SYSTEM_OFF_FAMILY, offsetof(struct smbios_info, system.family) },
    { TYPE_BASEBOARD, BOARD_OFF_MANUFACTURER, offsetof(struct smbios_info, baseboard.manufacturer) },
    { TYPE_BASEBOARD, BOARD_OFF_PRODUCT, offsetof(struct smbios_info, baseboard.product) },
    { TYPE_BASEBOARD, BOARD_OFF_VERSION, offsetof(struct smbios_info, baseboard.version) },
};

static bool *seen_flag(struct smbios_info *o, uint8_t type)
{
    switch (type) {
    case TYPE_BIOS: return &o->has_bios;
    case TYPE_SYSTEM: return &o->has_system;
    case TYPE_BASEBOARD: return &o->has_baseboard;
    case TYPE_CHASSIS: return &o->has_chassis;
    default: return NULL;
    }
}

/* The first structure of each of types 0..3 is the machine's (a second type 1 would be a
 * firmware bug; a second type 2 is a daughter board). */
static void decode(struct smbios_info *o, const struct structure *s)
{
    uint8_t type = s->f[HDR_OFF_TYPE];
    if (type == TYPE_PROCESSOR) {
        decode_processor(o, s);
        return;
    }
    bool *seen = seen_flag(o, type);
    if (!seen || *seen)
        return;
    *seen = true;
    for (size_t i = 0; i < sizeof(string_fields) / sizeof(string_fields[0]); i++)
        if (string_fields[i].type == type)
            string_at(o, s, string_fields[i].off, (char *)o + string_fields[i].at);
    if (type == TYPE_BIOS) {
        o->bios.release_major = byte_at(s, BIOS_OFF_RELEASE_MAJOR, 0xFF);
        o->bios.release_minor = byte_at(s, BIOS_OFF_RELEASE_MINOR, 0xFF);
    } else if (type == TYPE_CHASSIS) {
        o->chassis_type = byte_at(s, CHASSIS_OFF_TYPE, 0) & CHASSIS_TYPE_MASK;
    }
}

/* Walks [t, t + len): each structure's formatted area, then its strings up to two NULs. */
static void walk(struct smbios_info *o, const uint8_t *t, size_t len)
{
    size_t off = 0;
    while (off + HDR_BYTES <= len) {
        if (o->structures == SMBIOS_MAX_STRUCTURES) {
            o->walk_reason = "more structures than the cap";
            return;
        }
        struct structure s = { .f = t + off, .len = t[off + HDR_OFF_LENGTH] };
        if (s.len < HDR_BYTES) {
            o->walk_reason = "structure length under 4";
            return;
        }
        if (s.len > len - off) {
            o->walk_reason = "structure past table end";
            return;
        }
        size_t p = off + s.len;
        while (p + 1 < len && !(t[p] == 0 && t[p + 1] == 0))
            p++;
        if (p + 1 >= len) {
            o->walk_reason = "strings past table end";
            return;
        }
        s.strings = t + off + s.len;
        s.strings_len = p - (off + s.len);
        o->structures++;
        decode(o, &s);
        off = p + 2;
        if (s.f[HDR_OFF_TYPE] == TYPE_END) {
            o->end_of_table = true;
            return;
        }
        /* 2.x: the entry point's count ends the table when End-of-Table is missing */
        if (!o->eps64 && o->declared_structures && o->structures == o->declared_structures)
            return;
    }
}

void smbios_parse(const struct smbios_mem *mem, const struct smbios_where *where,
                  struct smbios_info *out)
{
    memset(out, 0, sizeof(*out));
    out->bios.release_major = out->bios.release_minor = 0xFF;
    const uint8_t *table = find(mem, where, out);
    if (table)
        walk(out, table, out->table_bytes);
}
