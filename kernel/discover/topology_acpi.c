/* kernel/discover/topology_acpi.c - see topology_acpi.h. */
#include "kernel/discover/topology_acpi.h"

#include "ticklab/kstring.h"

/* The MADT keeps MPS INTI flags as two 2-bit fields; the topology keeps them packed. */
static uint16_t inti_flags(enum acpi_polarity pol, enum acpi_trigger trig)
{
    return (uint16_t)(((unsigned)pol & 3u) | (((unsigned)trig & 3u) << 2));
}

void topology_from_acpi(const struct acpi_info *a, struct intr_topology *t, unsigned *dropped)
{
    const struct acpi_madt *m = &a->madt;
    memset(t, 0, sizeof(*t));
    *dropped = 0;
    if (!m->present)
        return;
    t->valid = true;
    t->lapic_addr = m->lapic_addr;
    t->pcat_compat = m->pcat_compat;
    for (unsigned i = 0; i < m->n_ioapics; i++) {
        if (t->n_ioapics == TOPO_MAX_IOAPICS) {
            (*dropped)++;
            continue;
        }
        t->ioapics[t->n_ioapics++] = (struct topo_ioapic){
            .id = m->ioapics[i].id, .addr = m->ioapics[i].addr,
            .gsi_base = m->ioapics[i].gsi_base };
    }
    for (unsigned i = 0; i < m->n_overrides; i++) {
        const struct acpi_override *o = &m->overrides[i];
        if (o->bus != 0 || o->irq > 15)
            continue;                      /* only ISA IRQs are routed by override */
        if (t->n_overrides == TOPO_MAX_OVERRIDES) {
            (*dropped)++;
            continue;
        }
        t->overrides[t->n_overrides++] = (struct topo_override){
            .isa_irq = o->irq, .gsi = o->gsi, .inti_flags = inti_flags(o->polarity, o->trigger) };
    }
    for (unsigned i = 0; i < m->n_nmis; i++) {
        const struct acpi_nmi *n = &m->nmis[i];
        if (n->kind == ACPI_NMI_SOURCE)
            continue;                      /* an IOAPIC pin wired to NMI: not ours to touch */
        if (t->n_nmis == TOPO_MAX_NMIS) {
            (*dropped)++;
            continue;
        }
        bool all = n->kind == ACPI_NMI_LAPIC ? (n->uid & 0xFF) == 0xFF : n->uid == 0xFFFFFFFFu;
        t->nmis[t->n_nmis++] = (struct topo_nmi){
            .lint = n->lint, .inti_flags = inti_flags(n->polarity, n->trigger), .all_cpus = all };
    }
}
