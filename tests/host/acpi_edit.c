/* tests/host/acpi_edit.c - see acpi_edit.h. */
#include "acpi_edit.h"

#include <stdlib.h>
#include <string.h>

#include "test.h"
/* ---- helpers ------------------------------------------------------------------------------ */

const struct acpi_table *find_table(const struct acpi_info *a, const char *sig)
{
    for (unsigned i = 0; i < a->n_tables; i++)
        if (strcmp(a->tables[i].sig, sig) == 0)
            return &a->tables[i];
    return NULL;
}

const struct acpi_override *find_override(const struct acpi_madt *m, unsigned irq)
{
    for (unsigned i = 0; i < m->n_overrides; i++)
        if (m->overrides[i].irq == irq)
            return &m->overrides[i];
    return NULL;
}

void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}



void tb_begin(struct tbuf *t, const char *sig)
{
    memset(t, 0, sizeof(*t));
    memcpy(t->b, sig, 4);
    t->b[8] = 1;                        /* revision */
    memcpy(t->b + 10, "TICKLB", 6);
    t->len = ACPI_HEADER_BYTES;
}

void tb_put(struct tbuf *t, const void *bytes, size_t n)
{
    memcpy(t->b + t->len, bytes, n);
    t->len += n;
}

void tb_finish(struct tbuf *t)
{
    uint8_t s = 0;
    put32(t->b + 4, (uint32_t)t->len);
    t->b[9] = 0;
    for (size_t i = 0; i < t->len; i++)
        s = (uint8_t)(s + t->b[i]);
    t->b[9] = (uint8_t)-s;
}

void region_replace(struct fake_region *r, const void *bytes, size_t len)
{
    free(r->bytes);
    r->bytes = malloc(len);
    memcpy(r->bytes, bytes, len);
    r->len = len;
}

/* Replaces the root table's entries (RSDT: 4-byte addresses) and fixes its checksum. */
void rsdt_set_entries(struct fake_mem *fm, const uint32_t *addrs, unsigned n)
{
    struct fake_region *r = fake_find(fm, "RSDT");
    struct tbuf t;
    tb_begin(&t, "RSDT");
    memcpy(t.b, r->bytes, ACPI_HEADER_BYTES);
    for (unsigned i = 0; i < n; i++)
        tb_put(&t, &addrs[i], 4);
    tb_finish(&t);
    region_replace(r, t.b, t.len);
}

bool table_add(struct fake_mem *fm, const struct tbuf *t)
{
    if (!fake_region_add(fm, NEW_TABLE_PHYS, t->b, t->len))
        return false;
    struct fake_region *root = fake_find(fm, "RSDT");
    uint32_t addrs[64];
    unsigned n = (unsigned)((root->len - ACPI_HEADER_BYTES) / 4);
    if (n >= 63)
        return false;
    for (unsigned i = 0; i < n; i++)
        addrs[i] = get32(root->bytes + ACPI_HEADER_BYTES + 4 * i);
    addrs[n] = NEW_TABLE_PHYS;
    rsdt_set_entries(fm, addrs, n + 1);
    return true;
}

/* Moves table sig to NEW_TABLE_PHYS with new contents; the RSDT follows. */
void table_swap(struct fake_mem *fm, const char *sig, const struct tbuf *t)
{
    struct fake_region *r = fake_find(fm, sig), *root = fake_find(fm, "RSDT");
    for (size_t off = ACPI_HEADER_BYTES; off + 4 <= root->len; off += 4)
        if (get32(root->bytes + off) == r->phys)
            put32(root->bytes + off, NEW_TABLE_PHYS);
    fake_fix_table_checksum(root);
    region_replace(r, t->b, t->len);
    r->phys = NEW_TABLE_PHYS;
}

/* The fixture parsed after edit(fm) ran; NULL (and a failed check) if it would not load. */
struct acpi_info *parse_edited(const char *fixture, void (*edit)(struct fake_mem *))
{
    struct fake_mem fm;
    if (!CHECK(fixture_load(fixture, &fm) == 0))
        return NULL;
    if (edit)
        edit(&fm);
    struct acpi_info *a = fake_parse(&fm);
    fake_mem_free(&fm);
    return a;
}

/* ---- the fixtures as captured ------------------------------------------------------------- */

void check_qemu_madt(const struct acpi_madt *m)
{
    CHECK(m->present);
    CHECK_EQ_U64(m->lapic_addr, 0xFEE00000u);
    CHECK(m->pcat_compat);
    CHECK_EQ_U64(m->n_cpus, 1);
    CHECK(m->cpus[0].enabled);
    CHECK_EQ_U64(m->n_ioapics, 1);
    CHECK_EQ_U64(m->ioapics[0].id, 0);
    CHECK_EQ_U64(m->ioapics[0].addr, 0xFEC00000u);
    CHECK_EQ_U64(m->ioapics[0].gsi_base, 0);
    const struct acpi_override *o = find_override(m, 0);
    if (CHECK(o != NULL))
        CHECK_EQ_U64(o->gsi, 2);
    static const unsigned level_irqs[] = { 5, 9, 10, 11 };
    for (unsigned i = 0; i < 4; i++) {
        o = find_override(m, level_irqs[i]);
        if (CHECK(o != NULL))
            CHECK_EQ_U64(o->trigger, ACPI_TRIG_LEVEL);
    }
    CHECK_EQ_STR(m->walk_reason, NULL);
    CHECK_EQ_U64(m->unknown_entries + m->short_entries, 0);
}

void check_qemu_hpet(const struct acpi_hpet_info *h)
{
    CHECK(h->present);
    CHECK_EQ_STR(h->reason, NULL);
    CHECK_EQ_U64(h->addr, 0xFED00000u);
    CHECK_EQ_U64(h->comparators, 3);
    CHECK(h->counter_64bit);
    CHECK(h->legacy_capable);
}

void check_qemu_pm_timer(const struct acpi_fadt_info *f)
{
    CHECK(f->present);
    CHECK(f->pm_timer_present);
    CHECK_EQ_STR(f->pm_timer_reason, NULL);
    CHECK_EQ_U64(f->pm_timer_port, 0x608);
    CHECK(!f->pm_timer_32bit);
}

void check_all_tables_ok(const struct acpi_info *a)
{
    for (unsigned i = 0; i < a->n_tables; i++)
        if (!a->tables[i].ok)
            CHECK_EQ_STR(a->tables[i].reason, "(no reason: the table should pass)");
    CHECK_EQ_U64(a->tables_dropped, 0);
}

