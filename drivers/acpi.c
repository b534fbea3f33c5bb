/* drivers/acpi.c - see acpi.h.
 *
 * Every field is read from a copy: copy_in() moves a table's (or entry's) bytes into a local
 * packed struct and zero-fills what the table does not have. That keeps reads in bounds by
 * construction and sidesteps alignment; the length checks still decide what a zero means. */
#include "ticklab/acpi.h"

#include "ticklab/kstring.h"

#define EBDA_SEG_PHYS    0x40Eu     /* BIOS data area word: EBDA segment (paragraphs) */
#define EBDA_SCAN_BYTES  1024u      /* ACPI 5.2.5.1: the RSDP is in the EBDA's first KiB */
#define EBDA_LOWEST      0x500u     /* above the BIOS data area: anything lower is garbage */
#define LOW_MEM_END      0xA0000u   /* the EBDA lies below the VGA hole */
#define BIOS_ROM_START   0xE0000u
#define BIOS_ROM_END     0x100000u
#define RSDP_ALIGN_BYTES 16u
#define IO_PORT_MAX      0xFFFFu

/* Fields present in a table of len bytes. */
#define HAS_FIELD(type, field, len) \
    ((len) >= offsetof(type, field) + sizeof(((type *)0)->field))

enum fact { FACT_MADT, FACT_HPET, FACT_FADT, FACT_DMAR, FACT_SPCR, FACT_MCFG, FACT_COUNT };
static const char fact_sig[FACT_COUNT][5] = { "APIC", "HPET", "FACP", "DMAR", "SPCR", "MCFG" };

struct parser {
    const struct acpi_mem *mem;
    struct acpi_info *out;
    bool decoded[FACT_COUNT];   /* a table of that signature was verified and decoded */
    struct acpi_table scratch;  /* stands in for a list entry once the list is full */
};

/* ---- helpers ------------------------------------------------------------------------------ */

static const uint8_t *map(const struct acpi_mem *m, uint64_t phys, size_t len)
{
    if (len == 0 || phys > UINT64_MAX - len)
        return NULL;
    return m->map(m->ctx, phys, len);
}

static uint8_t sum8(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    for (size_t i = 0; i < n; i++)
        s = (uint8_t)(s + p[i]);
    return s;
}

/* Copies min(src_len, dst_size) bytes and zero-fills the rest of dst. */
static void copy_in(void *dst, size_t dst_size, const void *src, size_t src_len)
{
    memset(dst, 0, dst_size);
    memcpy(dst, src, src_len < dst_size ? src_len : dst_size);
}

/* n bytes of a firmware string into dst[n + 1], non-printable bytes as '?'. */
static void printable(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
    dst[n] = 0;
}

/* ---- RSDP --------------------------------------------------------------------------------- */

/* The loader's copy, seen as memory at physical address 0 .. len. */
struct copy_ctx {
    const uint8_t *bytes;
    size_t len;
};

static const void *copy_map(void *ctx, uint64_t phys, size_t len)
{
    const struct copy_ctx *c = ctx;
    if (phys > c->len || len > c->len - phys)
        return NULL;
    return c->bytes + phys;
}

/* Revision >= 2: the extended part. Only 20 readable bytes (a loader that copied the v1
 * part of a v2 RSDP) is accepted as v1: *len_out stays 20 and the XSDT is not used. */
static const char *rsdp_v2_check(const struct acpi_mem *m, uint64_t phys, struct acpi_rsdp *rs,
                                 uint32_t *len_out)
{
    const uint8_t *p = map(m, phys, ACPI_RSDP_V2_BYTES);
    if (!p)
        return NULL;
    copy_in(rs, sizeof(*rs), p, ACPI_RSDP_V2_BYTES);
    if (rs->length < ACPI_RSDP_V2_BYTES)
        return "length shorter than RSDP v2";
    if (rs->length > ACPI_RSDP_MAX_BYTES)
        return "length over cap";
    p = map(m, phys, rs->length);
    if (!p)
        return "length past mapped area";
    if (sum8(p, rs->length) != 0)
        return "extended checksum";
    *len_out = rs->length;
    return NULL;
}

/* Verifies the RSDP at phys; fills *r only when it passes. Returns the failed check. */
static const char *rsdp_check(const struct acpi_mem *m, uint64_t phys, struct acpi_rsdp_info *r)
{
    struct acpi_rsdp rs;
    uint32_t len = ACPI_RSDP_V1_BYTES;
    const uint8_t *p = map(m, phys, ACPI_RSDP_V1_BYTES);
    if (!p)
        return "not readable";
    if (memcmp(p, "RSD PTR ", 8) != 0)
        return "signature mismatch";
    if (sum8(p, ACPI_RSDP_V1_BYTES) != 0)
        return "checksum";
    copy_in(&rs, sizeof(rs), p, ACPI_RSDP_V1_BYTES);
    if (rs.revision >= 2) {
        const char *why = rsdp_v2_check(m, phys, &rs, &len);
        if (why)
            return why;
    }
    r->phys = phys;
    r->length = len;
    r->revision = rs.revision;
    printable(r->oem_id, rs.oem_id, sizeof(rs.oem_id));
    r->rsdt_phys = rs.rsdt_addr;
    r->xsdt_phys = len >= ACPI_RSDP_V2_BYTES ? rs.xsdt_addr : 0;
    return NULL;
}

/* Searches [start, end) on 16-byte boundaries. A candidate with the signature that fails a
 * check is skipped (a stray "RSD PTR " in BIOS code); the first such check is kept. */
static bool rsdp_scan(const struct acpi_mem *m, uint64_t start, uint64_t end,
                      struct acpi_rsdp_info *r, const char **first_fail)
{
    for (uint64_t p = start; p + ACPI_RSDP_V1_BYTES <= end; p += RSDP_ALIGN_BYTES) {
        const uint8_t *s = map(m, p, 8);
        if (!s || memcmp(s, "RSD PTR ", 8) != 0)
            continue;
        const char *why = rsdp_check(m, p, r);
        if (!why)
            return true;
        if (!*first_fail)
            *first_fail = why;
    }
    return false;
}

static bool rsdp_scan_ebda(const struct acpi_mem *m, struct acpi_rsdp_info *r,
                           const char **first_fail)
{
    const uint8_t *seg = map(m, EBDA_SEG_PHYS, 2);
    if (!seg)
        return false;
    uint64_t base = (uint64_t)(seg[0] | seg[1] << 8) << 4;
    if (base < EBDA_LOWEST || base >= LOW_MEM_END)
        return false;
    uint64_t end = base + EBDA_SCAN_BYTES < LOW_MEM_END ? base + EBDA_SCAN_BYTES : LOW_MEM_END;
    return rsdp_scan(m, base, end, r, first_fail);
}

static bool rsdp_find(const struct acpi_mem *m, const void *copy, size_t copy_len,
                      struct acpi_rsdp_info *r)
{
    const char *first_fail = NULL;
    if (copy_len) {
        struct copy_ctx c = { copy, copy_len };
        struct acpi_mem cm = { copy_map, &c };
        r->copy_reason = rsdp_check(&cm, 0, r);
        if (!r->copy_reason) {
            r->source = ACPI_RSDP_LOADER;
            r->phys = 0;
            return true;
        }
    }
    if (rsdp_scan_ebda(m, r, &first_fail)) {
        r->source = ACPI_RSDP_EBDA;
        return true;
    }
    if (rsdp_scan(m, BIOS_ROM_START, BIOS_ROM_END, r, &first_fail)) {
        r->source = ACPI_RSDP_BIOS_ROM;
        return true;
    }
    r->source = ACPI_RSDP_NONE;
    r->reason = first_fail ? first_fail : "not found";
    return false;
}

/* ---- tables ------------------------------------------------------------------------------- */

static struct acpi_table *table_slot(struct parser *ps, uint64_t phys)
{
    struct acpi_info *o = ps->out;
    struct acpi_table *t = &ps->scratch;
    if (o->n_tables < ACPI_MAX_TABLES)
        t = &o->tables[o->n_tables++];
    else
        o->tables_dropped++;
    memset(t, 0, sizeof(*t));
    t->phys = phys;
    return t;
}

/* Maps and verifies the table at t->phys (want_sig: its required signature, or NULL).
 * The header is copied into t for the report before it is verified. */
static const char *table_check(const struct acpi_mem *m, struct acpi_table *t,
                               const char *want_sig, const uint8_t **bytes)
{
    struct acpi_header h;
    if (t->phys == 0)
        return "null address";
    const uint8_t *p = map(m, t->phys, ACPI_HEADER_BYTES);
    if (!p)
        return "header not readable";
    copy_in(&h, sizeof(h), p, ACPI_HEADER_BYTES);
    printable(t->sig, h.signature, sizeof(h.signature));
    printable(t->oem_id, h.oem_id, sizeof(h.oem_id));
    t->length = h.length;
    t->revision = h.revision;
    if (h.length < ACPI_HEADER_BYTES)
        return "length shorter than header";
    if (h.length > ACPI_TABLE_MAX_BYTES)
        return "length over 1 MiB cap";
    p = map(m, t->phys, h.length);
    if (!p)
        return "length past mapped area";
    /* Everything below uses this mapping only, so its header must be the one just checked:
     * memory that reads differently the second time (firmware tables that overlap, or
     * change under us) would otherwise pass the checks with one copy and be parsed from
     * another. Found by the fuzzer (regression: acpi_header_changed_between_maps). */
    struct acpi_header again;
    copy_in(&again, sizeof(again), p, ACPI_HEADER_BYTES);
    if (memcmp(&again, &h, sizeof(h)) != 0)
        return "header changed between reads";
    if (sum8(p, h.length) != 0)
        return "checksum";
    if (want_sig && memcmp(h.signature, want_sig, 4) != 0)
        return "signature mismatch";
    *bytes = p;
    return NULL;
}

/* Lists the table at phys and returns its verified bytes, or NULL. */
static const uint8_t *table_get(struct parser *ps, uint64_t phys, const char *want_sig,
                                struct acpi_table **slot)
{
    const uint8_t *bytes = NULL;
    struct acpi_table *t = table_slot(ps, phys);
    t->reason = table_check(ps->mem, t, want_sig, &bytes);
    t->ok = t->reason == NULL;
    *slot = t;
    return t->ok ? bytes : NULL;
}

/* ---- MADT --------------------------------------------------------------------------------- */

/* Each decoded type's layout size; 0: not decoded. */
static const uint8_t madt_min_len[] = {
    [ACPI_MADT_LAPIC] = sizeof(struct acpi_madt_lapic),
    [ACPI_MADT_IOAPIC] = sizeof(struct acpi_madt_ioapic),
    [ACPI_MADT_OVERRIDE] = sizeof(struct acpi_madt_override),
    [ACPI_MADT_NMI_SOURCE] = sizeof(struct acpi_madt_nmi_src),
    [ACPI_MADT_LAPIC_NMI] = sizeof(struct acpi_madt_lapic_nmi),
    [ACPI_MADT_LAPIC_ADDR] = sizeof(struct acpi_madt_lapic_addr),
    [ACPI_MADT_X2APIC] = sizeof(struct acpi_madt_x2apic),
    [ACPI_MADT_X2APIC_NMI] = sizeof(struct acpi_madt_x2apic_nmi),
};

union madt_entry {
    struct acpi_madt_lapic lapic;
    struct acpi_madt_ioapic ioapic;
    struct acpi_madt_override ovr;
    struct acpi_madt_nmi_src nmi_src;
    struct acpi_madt_lapic_nmi lapic_nmi;
    struct acpi_madt_lapic_addr addr;
    struct acpi_madt_x2apic x2apic;
    struct acpi_madt_x2apic_nmi x2apic_nmi;
};

static void madt_cpu(struct acpi_madt *m, uint32_t apic_id, uint32_t uid, uint32_t flags,
                     bool x2apic)
{
    if (m->n_cpus == ACPI_MAX_CPUS) {
        m->cpus_dropped++;
        return;
    }
    m->cpus[m->n_cpus++] = (struct acpi_cpu){
        .apic_id = apic_id, .uid = uid, .x2apic = x2apic,
        .enabled = flags & ACPI_MADT_CPU_ENABLED,
        .online_capable = flags & ACPI_MADT_CPU_ONLINE_CAPABLE,
    };
}

static void madt_ioapic(struct acpi_madt *m, const struct acpi_madt_ioapic *e)
{
    if (m->n_ioapics == ACPI_MAX_IOAPICS) {
        m->ioapics_dropped++;
        return;
    }
    m->ioapics[m->n_ioapics++] =
        (struct acpi_ioapic){ .id = e->id, .addr = e->addr, .gsi_base = e->gsi_base };
}

static void madt_override(struct acpi_madt *m, const struct acpi_madt_override *e)
{
    if (m->n_overrides == ACPI_MAX_OVERRIDES) {
        m->overrides_dropped++;
        return;
    }
    m->overrides[m->n_overrides++] = (struct acpi_override){
        .bus = e->bus, .irq = e->irq, .gsi = e->gsi,
        .polarity = (enum acpi_polarity)(e->flags & 3),
        .trigger = (enum acpi_trigger)((e->flags >> 2) & 3),
    };
}

static void madt_nmi(struct acpi_madt *m, enum acpi_nmi_kind kind, uint32_t gsi, uint32_t uid,
                     uint8_t lint, uint16_t flags)
{
    if (m->n_nmis == ACPI_MAX_NMIS) {
        m->nmis_dropped++;
        return;
    }
    m->nmis[m->n_nmis++] = (struct acpi_nmi){
        .kind = kind, .gsi = gsi, .uid = uid, .lint = lint,
        .polarity = (enum acpi_polarity)(flags & 3),
        .trigger = (enum acpi_trigger)((flags >> 2) & 3),
    };
}

static void madt_entry(struct acpi_madt *m, const uint8_t *e, uint8_t len)
{
    union madt_entry u;
    uint8_t type = e[0];
    m->entries++;
    if (type >= sizeof(madt_min_len) || madt_min_len[type] == 0) {
        m->unknown_entries++;
        return;
    }
    if (len < madt_min_len[type]) {
        m->short_entries++;
        return;
    }
    copy_in(&u, sizeof(u), e, len);
    switch (type) {
    case ACPI_MADT_LAPIC:
        madt_cpu(m, u.lapic.apic_id, u.lapic.uid, u.lapic.flags, false);
        break;
    case ACPI_MADT_X2APIC:
        madt_cpu(m, u.x2apic.x2apic_id, u.x2apic.uid, u.x2apic.flags, true);
        break;
    case ACPI_MADT_IOAPIC:
        madt_ioapic(m, &u.ioapic);
        break;
    case ACPI_MADT_OVERRIDE:
        madt_override(m, &u.ovr);
        break;
    case ACPI_MADT_NMI_SOURCE:
        madt_nmi(m, ACPI_NMI_SOURCE, u.nmi_src.gsi, 0, 0, u.nmi_src.flags);
        break;
    case ACPI_MADT_LAPIC_NMI:
        madt_nmi(m, ACPI_NMI_LAPIC, 0, u.lapic_nmi.uid == 0xFF ? UINT32_MAX : u.lapic_nmi.uid,
                 u.lapic_nmi.lint, u.lapic_nmi.flags);
        break;
    case ACPI_MADT_X2APIC_NMI:
        madt_nmi(m, ACPI_NMI_X2APIC, 0, u.x2apic_nmi.uid, u.x2apic_nmi.lint,
                 u.x2apic_nmi.flags);
        break;
    case ACPI_MADT_LAPIC_ADDR:
        m->lapic_addr = u.addr.addr;
        m->lapic_addr_overridden = true;
        break;
    }
}

static void madt_decode(struct acpi_info *o, const uint8_t *t, uint32_t len)
{
    struct acpi_madt *m = &o->madt;
    struct acpi_madt_fixed f;
    if (len < sizeof(f)) {
        m->reason = "shorter than MADT fields";
        return;
    }
    copy_in(&f, sizeof(f), t, len);
    m->present = true;
    m->revision = f.h.revision;
    m->flags = f.flags;
    m->pcat_compat = f.flags & ACPI_MADT_PCAT_COMPAT;
    m->lapic_addr = f.lapic_addr;    /* a type 5 entry below may replace it */
    for (uint32_t off = sizeof(f); off < len; off += t[off + 1]) {
        if (len - off < 2) {
            m->walk_reason = "entry past table end";
            break;
        }
        if (t[off + 1] < 2) {
            m->walk_reason = "entry length under 2";
            break;
        }
        if (t[off + 1] > len - off) {
            m->walk_reason = "entry past table end";
            break;
        }
        madt_entry(m, t + off, t[off + 1]);
    }
}

/* ---- HPET --------------------------------------------------------------------------------- */

static void hpet_decode(struct acpi_info *o, const uint8_t *t, uint32_t len)
{
    struct acpi_hpet_info *h = &o->hpet;
    struct acpi_hpet_desc d;
    if (len < sizeof(d)) {
        h->reason = "shorter than HPET table";
        return;
    }
    copy_in(&d, sizeof(d), t, len);
    h->decoded = true;
    h->addr = d.base.address;
    h->addr_space = d.base.space;
    h->block_id = d.block_id;
    h->hw_rev = ACPI_HPET_ID_REV(d.block_id);
    h->comparators = ACPI_HPET_ID_COMPARATORS(d.block_id);
    h->counter_64bit = d.block_id & ACPI_HPET_ID_COUNTER_64;
    h->legacy_capable = d.block_id & ACPI_HPET_ID_LEGACY_CAPABLE;
    h->pci_vendor = (uint16_t)ACPI_HPET_ID_VENDOR(d.block_id);
    h->hpet_number = d.hpet_number;
    h->min_tick = d.min_tick;
    h->page_protection = d.page_protection;
    if (d.base.space != ACPI_GAS_MEMORY)
        h->reason = "address not in system memory space";
    else if (d.base.address == 0)
        h->reason = "address zero";
    else
        h->present = true;
}

/* ---- FADT --------------------------------------------------------------------------------- */

/* X_PM_TMR_BLK when it is a usable system-I/O port, else PM_TMR_BLK. */
static void fadt_pm_timer(struct acpi_fadt_info *f, const struct acpi_fadt_fields *ff,
                          uint32_t len)
{
    f->pm_tmr_blk = ff->pm_tmr_blk;
    f->pm_tmr_len = ff->pm_tmr_len;
    f->pm_timer_32bit = ff->flags & ACPI_FADT_TMR_VAL_EXT;
    if (HAS_FIELD(struct acpi_fadt_fields, x_pm_tmr_blk, len))
        f->x_pm_tmr_addr = ff->x_pm_tmr_blk.address;
    if (f->hw_reduced) {
        f->pm_timer_reason = "hardware-reduced ACPI";
        return;
    }
    if (f->x_pm_tmr_addr) {
        if (ff->x_pm_tmr_blk.space != ACPI_GAS_IO)
            f->x_pm_tmr_note = "X_PM_TMR_BLK not in system I/O space";
        else if (f->x_pm_tmr_addr > IO_PORT_MAX)
            f->x_pm_tmr_note = "X_PM_TMR_BLK port over 0xffff";
        else {
            f->pm_timer_port = (uint16_t)f->x_pm_tmr_addr;
            f->pm_timer_from_x = true;
            f->pm_timer_present = true;
            return;
        }
    }
    if (ff->pm_tmr_blk == 0)
        f->pm_timer_reason = "no PM timer block";
    else if (ff->pm_tmr_blk > IO_PORT_MAX)
        f->pm_timer_reason = "port over 0xffff";
    else if (ff->pm_tmr_len != 4)
        f->pm_timer_reason = "PM_TMR_LEN is not 4";
    else {
        f->pm_timer_port = (uint16_t)ff->pm_tmr_blk;
        f->pm_timer_present = true;
    }
}

/* One PM1 control block's port: the X_ form when it holds a system-I/O port, else the
 * 32-bit field; 0 (and *note) when neither is a port. */
static uint16_t fadt_cnt_port(const struct acpi_gas *x, bool has_x, uint32_t legacy,
                              const char **note)
{
    if (has_x && x->address) {
        if (x->space == ACPI_GAS_IO && x->address <= IO_PORT_MAX)
            return (uint16_t)x->address;
        *note = x->space != ACPI_GAS_IO ? "X_PM1x_CNT_BLK not in system I/O space"
                                         : "X_PM1x_CNT_BLK port over 0xffff";
    }
    if (legacy > IO_PORT_MAX) {
        *note = "PM1x_CNT_BLK port over 0xffff";
        return 0;
    }
    return (uint16_t)legacy;
}

static void fadt_mode(struct acpi_fadt_info *f, const struct acpi_fadt_fields *ff, uint32_t len)
{
    f->smi_cmd = ff->smi_cmd;
    f->acpi_enable = ff->acpi_enable;
    f->acpi_disable = ff->acpi_disable;
    f->pm1_cnt_len = ff->pm1_cnt_len;
    f->pm1a_cnt_port = fadt_cnt_port(&ff->x_pm1a_cnt_blk,
                                     HAS_FIELD(struct acpi_fadt_fields, x_pm1a_cnt_blk, len),
                                     ff->pm1a_cnt_blk, &f->pm1_cnt_note);
    f->pm1b_cnt_port = fadt_cnt_port(&ff->x_pm1b_cnt_blk,
                                     HAS_FIELD(struct acpi_fadt_fields, x_pm1b_cnt_blk, len),
                                     ff->pm1b_cnt_blk, &f->pm1_cnt_note);
}

static void fadt_decode(struct acpi_info *o, const uint8_t *t, uint32_t len)
{
    struct acpi_fadt_info *f = &o->fadt;
    struct acpi_fadt_fields ff;
    copy_in(&ff, sizeof(ff), t, len);
    f->length = len;
    f->revision = ff.h.revision;
    if (len < ACPI_FADT_V1_BYTES) {
        f->reason = "shorter than ACPI 1.0 FADT";
        f->pm_timer_reason = "no FADT";
        return;
    }
    f->present = true;
    f->pm_timer_reason = NULL;
    f->flags = ff.flags;
    f->hw_reduced = ff.flags & ACPI_FADT_HW_REDUCED;
    f->sci_irq = ff.sci_int;
    f->century = ff.century;
    f->iapc_valid = ff.h.revision >= 2;
    f->iapc_boot_arch = f->iapc_valid ? ff.iapc_boot_arch : 0;
    f->dsdt_phys = ff.dsdt;
    if (HAS_FIELD(struct acpi_fadt_fields, x_dsdt, len) && ff.x_dsdt)
        f->dsdt_phys = ff.x_dsdt;
    fadt_pm_timer(f, &ff, len);
    fadt_mode(f, &ff, len);
}

/* ---- the walk ----------------------------------------------------------------------------- */

/* The fact a signature feeds: where its reason strings live. */
/* ---- DMAR --------------------------------------------------------------------------------- */

static void dmar_decode(struct acpi_info *o, const uint8_t *t, uint32_t len)
{
    struct acpi_dmar_info *d = &o->dmar;
    struct acpi_dmar_fixed f;
    if (len < offsetof(struct acpi_dmar_fixed, reserved)) {
        d->reason = "shorter than DMAR fields";
        return;
    }
    copy_in(&f, sizeof(f), t, len);
    d->present = true;
    d->host_addr_width = f.host_addr_width;
    d->flags = f.flags;
    d->intr_remap = f.flags & ACPI_DMAR_INTR_REMAP;
    d->x2apic_opt_out = f.flags & ACPI_DMAR_X2APIC_OPT_OUT;
}

static void spcr_decode(struct acpi_info *o, const uint8_t *t, uint32_t len)
{
    acpi_spcr_decode(&o->spcr, t, len);
}

static void mcfg_decode(struct acpi_info *o, const uint8_t *t, uint32_t len)
{
    acpi_mcfg_decode(&o->mcfg, t, len);
}

struct fact_ref {
    const char **reason, **table_reason;
};

static struct fact_ref fact_ref(struct acpi_info *o, enum fact k)
{
    if (k == FACT_MADT)
        return (struct fact_ref){ &o->madt.reason, &o->madt.table_reason };
    if (k == FACT_HPET)
        return (struct fact_ref){ &o->hpet.reason, &o->hpet.table_reason };
    if (k == FACT_DMAR)
        return (struct fact_ref){ &o->dmar.reason, &o->dmar.table_reason };
    if (k == FACT_SPCR)
        return (struct fact_ref){ &o->spcr.reason, &o->spcr.table_reason };
    if (k == FACT_MCFG)
        return (struct fact_ref){ &o->mcfg.reason, &o->mcfg.table_reason };
    return (struct fact_ref){ &o->fadt.reason, &o->fadt.table_reason };
}

/* A table of a decoded signature: the first that verifies is used; a rejected one is only
 * blamed while no good one has been found. */
static void fact_table(struct parser *ps, enum fact k, struct acpi_table *t, const uint8_t *p)
{
    static void (*const decode[FACT_COUNT])(struct acpi_info *, const uint8_t *, uint32_t) = {
        madt_decode, hpet_decode, fadt_decode, dmar_decode, spcr_decode, mcfg_decode,
    };
    struct fact_ref f = fact_ref(ps->out, k);
    if (!p) {
        if (!ps->decoded[k]) {
            *f.reason = "table rejected";
            *f.table_reason = t->reason;
        }
        return;
    }
    if (ps->decoded[k]) {
        t->reason = "duplicate, first used";
        return;
    }
    ps->decoded[k] = true;
    t->used = true;
    *f.reason = NULL;
    *f.table_reason = NULL;
    decode[k](ps->out, p, t->length);
}

static void table_visit(struct parser *ps, uint64_t phys)
{
    struct acpi_table *t;
    const uint8_t *p = table_get(ps, phys, NULL, &t);
    for (enum fact k = 0; k < FACT_COUNT; k++)
        if (memcmp(t->sig, fact_sig[k], 4) == 0)
            fact_table(ps, k, t, p);
}

/* Entries are little-endian addresses of entry_bytes (4: RSDT, 8: XSDT); x86 is
 * little-endian, so the low bytes of a zeroed uint64_t take them as they are. */
static void root_walk(struct parser *ps, const uint8_t *root, size_t entry_bytes)
{
    struct acpi_header h;
    copy_in(&h, sizeof(h), root, ACPI_HEADER_BYTES);
    size_t n = (h.length - ACPI_HEADER_BYTES) / entry_bytes;
    for (size_t i = 0; i < n; i++) {
        uint64_t phys = 0;
        memcpy(&phys, root + ACPI_HEADER_BYTES + i * entry_bytes, entry_bytes);
        table_visit(ps, phys);
    }
}

static const char *root_note(const struct acpi_rsdp_info *r)
{
    if (r->revision < 2)
        return NULL;
    if (r->length < ACPI_RSDP_V2_BYTES)
        return "RSDP v2 fields not readable: RSDT used";
    if (r->xsdt_phys == 0)
        return "XSDT address zero: RSDT used";
    return "XSDT rejected: RSDT used";
}

/* Both roots are verified and listed (a fixture then holds both); the XSDT wins. */
static void roots(struct parser *ps)
{
    struct acpi_info *o = ps->out;
    struct acpi_table *xt = NULL, *rt = NULL;
    const uint8_t *xsdt = NULL, *rsdt = NULL;
    if (o->rsdp.xsdt_phys)
        xsdt = table_get(ps, o->rsdp.xsdt_phys, "XSDT", &xt);
    if (o->rsdp.rsdt_phys || !xsdt)
        rsdt = table_get(ps, o->rsdp.rsdt_phys, "RSDT", &rt);
    if (xsdt) {
        xt->used = true;
        o->xsdt_used = true;
        root_walk(ps, xsdt, sizeof(uint64_t));
    } else if (rsdt) {
        rt->used = true;
        o->root_note = root_note(&o->rsdp);
        root_walk(ps, rsdt, sizeof(uint32_t));
    } else {
        o->root_note = "no valid RSDT or XSDT";
    }
}

/* The DSDT is listed and verified (AML is not decoded: a later scan may want it). */
static void dsdt(struct parser *ps)
{
    struct acpi_table *t;
    if (ps->out->fadt.present && ps->out->fadt.dsdt_phys)
        table_get(ps, ps->out->fadt.dsdt_phys, "DSDT", &t);
}

void acpi_parse(const struct acpi_mem *mem, const void *rsdp_copy, size_t rsdp_copy_len,
                struct acpi_info *out)
{
    struct parser ps = { .mem = mem, .out = out };
    memset(out, 0, sizeof(*out));
    out->madt.reason = out->hpet.reason = out->fadt.reason = out->dmar.reason = "no table";
    out->spcr.reason = out->mcfg.reason = "no table";
    out->fadt.pm_timer_reason = "no FADT";
    if (!rsdp_find(mem, rsdp_copy, rsdp_copy_len, &out->rsdp))
        return;
    roots(&ps);
    dsdt(&ps);
}

/* ---- small helpers for users -------------------------------------------------------------- */

bool acpi_hpet_period_ok(uint32_t period_fs, const char **reason)
{
    const char *why = NULL;
    if (period_fs < ACPI_HPET_PERIOD_MIN_FS)
        why = "period under 100000 fs";
    else if (period_fs > ACPI_HPET_PERIOD_MAX_FS)
        why = "period over 100000000 fs";
    if (reason)
        *reason = why;
    return why == NULL;
}

const char *acpi_polarity_name(enum acpi_polarity p)
{
    static const char *const names[] = { "conforms", "high", "reserved", "low" };
    return names[p & 3];
}

const char *acpi_trigger_name(enum acpi_trigger t)
{
    static const char *const names[] = { "conforms", "edge", "reserved", "level" };
    return names[t & 3];
}

const char *acpi_nmi_kind_name(enum acpi_nmi_kind k)
{
    return k == ACPI_NMI_SOURCE ? "source" : k == ACPI_NMI_LAPIC ? "lapic" : "x2apic";
}
