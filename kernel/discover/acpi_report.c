/* kernel/discover/acpi_report.c - see acpi_report.h. The parser (drivers/acpi.c) reads
 * physical memory only through kernel_map(); this file turns what it found into records. */
#include "kernel/discover/acpi_report.h"

#include "kernel/arch/paging.h"
#include "kernel/config.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/kstring.h"

#define FOUR_GIB (1ull << 32)

/* Items per record for each MADT list, chosen so that a record full of worst-case items
 * (10-digit numbers, the longest names) stays under REC_MAX: see docs/report-format.md. */
#define MADT_CPUS_PER_REC      24
#define MADT_IOAPICS_PER_REC   4
#define MADT_OVERRIDES_PER_REC 8
#define MADT_NMIS_PER_REC      4

/* Raw bytes per acpi_dump record: 2 hex digits each plus ~120 bytes of keys < REC_MAX. */
#define DUMP_CHUNK_BYTES 768

struct acpi_info acpi_facts;

/* Below 4 GiB the direct map already covers everything; above, phys_map() maps on demand. */
const void *firmware_map(void *ctx, uint64_t phys, size_t len)
{
    (void)ctx;
    if (len == 0 || phys > UINT64_MAX - len)
        return NULL;
    if (phys + len <= FOUR_GIB)
        return phys_to_virt(phys);
    return phys_map(phys, len);
}

static const struct acpi_mem kernel_mem = { firmware_map, NULL };

static const char *rsdp_source_name(const struct boot_info *boot, enum acpi_rsdp_source s)
{
    switch (s) {
    case ACPI_RSDP_LOADER:
        return boot_path_name(boot->path);
    case ACPI_RSDP_EBDA:
        return "ebda";
    case ACPI_RSDP_BIOS_ROM:
        return "bios_rom";
    default:
        return "absent";
    }
}

/* ---- the table list ----------------------------------------------------------------------- */

static void table_record(const struct acpi_table *t)
{
    struct rec r;
    rec_begin(&r, "acpi");
    json_str(&r.j, "sig", t->sig);
    json_hex(&r.j, "phys", t->phys);
    json_u64(&r.j, "length", t->length);
    json_u64(&r.j, "revision", t->revision);
    json_str(&r.j, "oem_id", t->oem_id);
    json_bool(&r.j, "ok", t->ok);
    json_bool(&r.j, "used", t->used);
    json_str(&r.j, "reason", t->reason);
    rec_emit(&r);
    kprintf("    %-4s %#12llx %7u bytes rev %-3u %-6s %s%s%s\n", t->sig[0] ? t->sig : "?",
            (unsigned long long)t->phys, t->length, t->revision, t->oem_id,
            t->ok ? (t->used ? "ok, used" : "ok") : "REJECTED", t->reason ? ": " : "",
            t->reason ? t->reason : "");
}

static void summary_record(const struct boot_info *boot, const struct acpi_info *a)
{
    unsigned ok = 0;
    for (unsigned i = 0; i < a->n_tables; i++)
        ok += a->tables[i].ok;
    bool found = a->rsdp.source != ACPI_RSDP_NONE;
    struct rec r;
    rec_begin(&r, "acpi_summary");
    json_str(&r.j, "rsdp_source", rsdp_source_name(boot, a->rsdp.source));
    json_str(&r.j, "rsdp_reason", a->rsdp.reason);
    json_str(&r.j, "rsdp_copy_reason", a->rsdp.copy_reason);
    if (found && a->rsdp.source != ACPI_RSDP_LOADER)
        json_hex(&r.j, "rsdp_phys", a->rsdp.phys);
    else
        json_null(&r.j, "rsdp_phys");
    json_u64(&r.j, "revision", a->rsdp.revision);
    json_str(&r.j, "oem_id", found ? a->rsdp.oem_id : NULL);
    json_hex(&r.j, "rsdt", a->rsdp.rsdt_phys);
    json_hex(&r.j, "xsdt", a->rsdp.xsdt_phys);
    json_bool(&r.j, "xsdt_used", a->xsdt_used);
    json_str(&r.j, "root_note", a->root_note);
    json_u64(&r.j, "tables", a->n_tables + a->tables_dropped);
    json_u64(&r.j, "tables_ok", ok);
    json_u64(&r.j, "tables_rejected", a->n_tables - ok);
    json_u64(&r.j, "tables_dropped", a->tables_dropped);
    rec_emit(&r);
}

static void summary_text(const struct boot_info *boot, const struct acpi_info *a)
{
    if (a->rsdp.source == ACPI_RSDP_NONE) {
        kprintf("  acpi        no RSDP: %s%s%s\n", a->rsdp.reason,
                a->rsdp.copy_reason ? "; loader's copy: " : "",
                a->rsdp.copy_reason ? a->rsdp.copy_reason : "");
        return;
    }
    kprintf("  acpi        RSDP rev %u (%s) from %s, %s used, %u tables%s%s\n",
            a->rsdp.revision, a->rsdp.oem_id, rsdp_source_name(boot, a->rsdp.source),
            a->xsdt_used ? "XSDT" : "RSDT", a->n_tables + a->tables_dropped,
            a->root_note ? "; " : "", a->root_note ? a->root_note : "");
}

/* ---- MADT --------------------------------------------------------------------------------- */

/* Part `part` of each list: items [part * per, (part + 1) * per). */
static void madt_cpus(struct json *j, const struct acpi_madt *m, unsigned part)
{
    unsigned idx = 0;
    json_arr_open(j, "cpus");
    for (unsigned i = 0; i < m->n_cpus; i++) {
        if (!m->cpus[i].enabled)
            continue;
        if (idx / MADT_CPUS_PER_REC == part)
            json_elem_u64(j, m->cpus[i].apic_id);
        idx++;
    }
    json_arr_close(j);
}

static void madt_ioapics(struct json *j, const struct acpi_madt *m, unsigned part)
{
    json_arr_open(j, "ioapics");
    for (unsigned i = part * MADT_IOAPICS_PER_REC;
         i < m->n_ioapics && i < (part + 1) * MADT_IOAPICS_PER_REC; i++) {
        json_obj_open(j, NULL);
        json_u64(j, "id", m->ioapics[i].id);
        json_hex(j, "addr", m->ioapics[i].addr);
        json_u64(j, "gsi_base", m->ioapics[i].gsi_base);
        json_obj_close(j);
    }
    json_arr_close(j);
}

static void madt_overrides(struct json *j, const struct acpi_madt *m, unsigned part)
{
    json_arr_open(j, "overrides");
    for (unsigned i = part * MADT_OVERRIDES_PER_REC;
         i < m->n_overrides && i < (part + 1) * MADT_OVERRIDES_PER_REC; i++) {
        const struct acpi_override *o = &m->overrides[i];
        json_obj_open(j, NULL);
        json_u64(j, "bus", o->bus);
        json_u64(j, "irq", o->irq);
        json_u64(j, "gsi", o->gsi);
        json_str(j, "polarity", acpi_polarity_name(o->polarity));
        json_str(j, "trigger", acpi_trigger_name(o->trigger));
        json_obj_close(j);
    }
    json_arr_close(j);
}

static void madt_nmis(struct json *j, const struct acpi_madt *m, unsigned part)
{
    json_arr_open(j, "nmis");
    for (unsigned i = part * MADT_NMIS_PER_REC;
         i < m->n_nmis && i < (part + 1) * MADT_NMIS_PER_REC; i++) {
        const struct acpi_nmi *n = &m->nmis[i];
        json_obj_open(j, NULL);
        json_str(j, "kind", acpi_nmi_kind_name(n->kind));
        if (n->kind == ACPI_NMI_SOURCE)
            json_u64(j, "gsi", n->gsi);
        else {
            json_u64(j, "uid", n->uid);
            json_u64(j, "lint", n->lint);
        }
        json_str(j, "polarity", acpi_polarity_name(n->polarity));
        json_str(j, "trigger", acpi_trigger_name(n->trigger));
        json_obj_close(j);
    }
    json_arr_close(j);
}

static unsigned parts_for(unsigned n, unsigned per)
{
    return n ? (n + per - 1) / per : 1;
}

static unsigned madt_parts(const struct acpi_madt *m)
{
    unsigned enabled = 0, parts = 1, p;
    for (unsigned i = 0; i < m->n_cpus; i++)
        enabled += m->cpus[i].enabled;
    if ((p = parts_for(enabled, MADT_CPUS_PER_REC)) > parts)
        parts = p;
    if ((p = parts_for(m->n_ioapics, MADT_IOAPICS_PER_REC)) > parts)
        parts = p;
    if ((p = parts_for(m->n_overrides, MADT_OVERRIDES_PER_REC)) > parts)
        parts = p;
    if ((p = parts_for(m->n_nmis, MADT_NMIS_PER_REC)) > parts)
        parts = p;
    return parts;
}

static void madt_lists(struct json *j, const struct acpi_madt *m, unsigned part)
{
    madt_cpus(j, m, part);
    madt_ioapics(j, m, part);
    madt_overrides(j, m, part);
    madt_nmis(j, m, part);
}

static void madt_scalars(struct json *j, const struct acpi_madt *m, unsigned parts)
{
    unsigned disabled = 0;
    for (unsigned i = 0; i < m->n_cpus; i++)
        disabled += !m->cpus[i].enabled;
    json_hex(j, "lapic_addr", m->lapic_addr);
    json_bool(j, "lapic_addr_overridden", m->lapic_addr_overridden);
    json_bool(j, "pcat_compat", m->pcat_compat);
    json_hex(j, "flags", m->flags);
    json_u64(j, "cpus_disabled", disabled);
    json_u64(j, "entries", m->entries);
    json_u64(j, "unknown_entries", m->unknown_entries);
    json_u64(j, "short_entries", m->short_entries);
    json_u64(j, "dropped", m->cpus_dropped + m->ioapics_dropped + m->overrides_dropped +
                               m->nmis_dropped);
    json_str(j, "walk_reason", m->walk_reason);
    json_u64(j, "parts", parts);
}

static void madt_text(const struct acpi_madt *m)
{
    if (!m->present) {
        kprintf("  madt        absent: %s%s%s\n", m->reason, m->table_reason ? ": " : "",
                m->table_reason ? m->table_reason : "");
        return;
    }
    kprintf("  madt        LAPIC %#llx, %u CPU(s), %u IOAPIC(s), %u override(s)%s%s\n",
            (unsigned long long)m->lapic_addr, m->n_cpus, m->n_ioapics, m->n_overrides,
            m->pcat_compat ? ", 8259 pair present" : "", m->walk_reason ? " (walk stopped)" : "");
    for (unsigned i = 0; i < m->n_ioapics; i++)
        kprintf("                IOAPIC id %u at %#x, GSI base %u\n", m->ioapics[i].id,
                m->ioapics[i].addr, m->ioapics[i].gsi_base);
    for (unsigned i = 0; i < m->n_overrides; i++)
        kprintf("                IRQ %u -> GSI %u, %s, %s\n", m->overrides[i].irq,
                m->overrides[i].gsi, acpi_polarity_name(m->overrides[i].polarity),
                acpi_trigger_name(m->overrides[i].trigger));
}

static void madt_records(const struct acpi_madt *m)
{
    struct rec r;
    rec_begin(&r, "madt");
    json_bool(&r.j, "present", m->present);
    json_str(&r.j, "reason", m->reason);
    json_str(&r.j, "table_reason", m->table_reason);
    if (m->present) {
        unsigned parts = madt_parts(m);
        madt_scalars(&r.j, m, parts);
        madt_lists(&r.j, m, 0);
        rec_emit(&r);
        for (unsigned part = 1; part < parts; part++) {
            rec_begin(&r, "madt_more");
            json_u64(&r.j, "part", part);
            madt_lists(&r.j, m, part);
            rec_emit(&r);
        }
    } else {
        rec_emit(&r);
    }
    madt_text(m);
}

/* ---- HPET and FADT ------------------------------------------------------------------------ */

static void hpet_record(const struct acpi_hpet_info *h)
{
    struct rec r;
    rec_begin(&r, "hpet_table");
    json_bool(&r.j, "present", h->present);
    json_str(&r.j, "reason", h->reason);
    json_str(&r.j, "table_reason", h->table_reason);
    if (h->decoded) {
        json_hex(&r.j, "address", h->addr);
        json_u64(&r.j, "address_space", h->addr_space);
        json_u64(&r.j, "hpet_number", h->hpet_number);
        json_u64(&r.j, "comparators", h->comparators);
        json_bool(&r.j, "counter_64bit", h->counter_64bit);
        json_bool(&r.j, "legacy_capable", h->legacy_capable);
        json_hex(&r.j, "pci_vendor", h->pci_vendor);
        json_u64(&r.j, "hw_rev", h->hw_rev);
        json_u64(&r.j, "min_tick", h->min_tick);
        json_u64(&r.j, "page_protection", h->page_protection);
    }
    rec_emit(&r);
    if (h->present)
        kprintf("  hpet table  %#llx, %u comparators, %s counter%s, vendor %#x\n",
                (unsigned long long)h->addr, h->comparators, h->counter_64bit ? "64-bit" : "32-bit",
                h->legacy_capable ? ", legacy-replacement capable" : "", h->pci_vendor);
    else
        kprintf("  hpet table  absent: %s%s%s\n", h->reason, h->table_reason ? ": " : "",
                h->table_reason ? h->table_reason : "");
}

static void fadt_iapc(struct json *j, const struct acpi_fadt_info *f)
{
    if (!f->iapc_valid) {
        json_null(j, "iapc_boot_arch");
        return;
    }
    json_hex(j, "iapc_boot_arch", f->iapc_boot_arch);
    json_bool(j, "legacy_devices", f->iapc_boot_arch & ACPI_IAPC_LEGACY_DEVICES);
    json_bool(j, "i8042", f->iapc_boot_arch & ACPI_IAPC_8042);
    json_bool(j, "vga_absent", f->iapc_boot_arch & ACPI_IAPC_VGA_ABSENT);
    json_bool(j, "msi_unsupported", f->iapc_boot_arch & ACPI_IAPC_MSI_UNSUPPORTED);
    json_bool(j, "cmos_rtc_absent", f->iapc_boot_arch & ACPI_IAPC_CMOS_RTC_ABSENT);
}

static void fadt_fields(struct json *j, const struct acpi_fadt_info *f)
{
    json_u64(j, "revision", f->revision);
    json_u64(j, "length", f->length);
    json_bool(j, "pm_timer_present", f->pm_timer_present);
    json_str(j, "pm_timer_reason", f->pm_timer_reason);
    json_hex(j, "pm_timer_port", f->pm_timer_port);
    json_bool(j, "pm_timer_32bit", f->pm_timer_32bit);
    json_str(j, "pm_timer_source", f->pm_timer_from_x ? "X_PM_TMR_BLK" : "PM_TMR_BLK");
    json_hex(j, "pm_tmr_blk", f->pm_tmr_blk);
    json_u64(j, "pm_tmr_len", f->pm_tmr_len);
    json_hex(j, "x_pm_tmr_blk", f->x_pm_tmr_addr);
    json_str(j, "x_pm_tmr_note", f->x_pm_tmr_note);
    json_u64(j, "sci_irq", f->sci_irq);
    json_u64(j, "century", f->century);
    json_hex(j, "flags", f->flags);
    json_bool(j, "hw_reduced", f->hw_reduced);
    json_hex(j, "dsdt", f->dsdt_phys);
    fadt_iapc(j, f);
}

static void fadt_record(const struct acpi_fadt_info *f)
{
    struct rec r;
    rec_begin(&r, "fadt");
    json_bool(&r.j, "present", f->present);
    json_str(&r.j, "reason", f->reason);
    json_str(&r.j, "table_reason", f->table_reason);
    if (f->present)
        fadt_fields(&r.j, f);
    rec_emit(&r);
    if (!f->present)
        kprintf("  fadt        absent: %s%s%s\n", f->reason, f->table_reason ? ": " : "",
                f->table_reason ? f->table_reason : "");
    else if (f->pm_timer_present)
        kprintf("  pm timer    port %#x, %s (FADT rev %u)\n", f->pm_timer_port,
                f->pm_timer_32bit ? "32-bit" : "24-bit", f->revision);
    else
        kprintf("  pm timer    absent: %s\n", f->pm_timer_reason);
}

/* The DMAR's flags (the IOMMU itself is not used): whether firmware opts out of x2APIC. */
static void dmar_record(const struct acpi_dmar_info *d)
{
    struct rec r;
    rec_begin(&r, "dmar");
    json_bool(&r.j, "present", d->present);
    json_str(&r.j, "reason", d->reason);
    json_str(&r.j, "table_reason", d->table_reason);
    if (d->present) {
        json_u64(&r.j, "host_address_width", d->host_addr_width + 1u);
        json_hex(&r.j, "flags", d->flags);
        json_bool(&r.j, "intr_remap", d->intr_remap);
        json_bool(&r.j, "x2apic_opt_out", d->x2apic_opt_out);
    }
    rec_emit(&r);
    if (d->present)
        kprintf("  dmar        flags %#x%s%s\n", d->flags,
                d->intr_remap ? ", interrupt remapping" : "",
                d->x2apic_opt_out ? ", x2APIC opt-out" : "");
}

/* ---- dump=acpi ---------------------------------------------------------------------------- */

static void dump_chunk(const char *sig, uint64_t phys, const uint8_t *p, size_t off, size_t n,
                       size_t total)
{
    static const char digits[] = "0123456789abcdef";
    char hex[DUMP_CHUNK_BYTES * 2];
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[p[off + i] >> 4];
        hex[2 * i + 1] = digits[p[off + i] & 15];
    }
    struct rec r;
    rec_begin(&r, "acpi_dump");
    json_str(&r.j, "sig", sig);
    json_hex(&r.j, "phys", phys);
    json_u64(&r.j, "offset", off);
    json_u64(&r.j, "total", total);
    json_strn(&r.j, "hex", hex, 2 * n);
    rec_emit(&r);
}

static void dump_region(const char *sig, uint64_t phys, const uint8_t *p, size_t len)
{
    for (size_t off = 0; off < len; off += DUMP_CHUNK_BYTES)
        dump_chunk(sig, phys, p, off, len - off < DUMP_CHUNK_BYTES ? len - off : DUMP_CHUNK_BYTES,
                   len);
}

/* A table's length to dump: its claim when plausible, else at least the header. */
static size_t dump_length(const struct acpi_table *t)
{
    if (t->length < ACPI_HEADER_BYTES || t->length > ACPI_TABLE_MAX_BYTES)
        return ACPI_HEADER_BYTES;
    return t->length;
}

/* The bytes as the parser saw them: a table's whole claimed length when that is mappable,
 * else its header; the RSDP from the loader's copy (phys 0) or from memory. */
static void dump_records(const struct boot_info *boot, const struct acpi_info *a)
{
    const uint8_t *p = NULL;
    if (a->rsdp.source == ACPI_RSDP_LOADER)
        p = boot->rsdp;
    else if (a->rsdp.source != ACPI_RSDP_NONE)
        p = firmware_map(NULL, a->rsdp.phys, a->rsdp.length);
    if (p)
        dump_region("RSDP", a->rsdp.phys, p, a->rsdp.length);
    for (unsigned i = 0; i < a->n_tables; i++) {
        const struct acpi_table *t = &a->tables[i];
        size_t len = dump_length(t);
        if (t->phys == 0)
            continue;
        p = firmware_map(NULL, t->phys, len);
        if (!p) {
            len = ACPI_HEADER_BYTES;
            p = firmware_map(NULL, t->phys, len);
        }
        if (p)
            dump_region(t->sig, t->phys, p, len);
    }
}

void acpi_tables_parse(const struct boot_info *boot, struct acpi_info *out)
{
    acpi_parse(&kernel_mem, boot->rsdp, boot->rsdp_len, out);
}

void acpi_inventory(const struct boot_info *boot, struct acpi_info *out)
{
    summary_record(boot, out);
    summary_text(boot, out);
    for (unsigned i = 0; i < out->n_tables; i++)
        table_record(&out->tables[i]);
    madt_records(&out->madt);
    hpet_record(&out->hpet);
    fadt_record(&out->fadt);
    dmar_record(&out->dmar);
    if (cfg.dump_acpi)
        dump_records(boot, out);
}
