/* kernel/smp/cpu_plan.c - see cpu_plan.h. */
#include "kernel/smp/cpu_plan.h"

#define XAPIC_BROADCAST  0xFFu
#define X2APIC_BROADCAST 0xFFFFFFFFu
#define MADT_REV_ONLINE_CAPABLE 5   /* ACPI 6.3's MADT, which defined the flag */

static void drop(struct cpu_plan *p, unsigned entry, const struct acpi_cpu *a, const char *why)
{
    if (p->n_drops == CPU_PLAN_MAX_DROPS) {
        p->drops_over++;
        return;
    }
    p->drops[p->n_drops++] = (struct cpu_plan_drop){
        .entry = entry, .apic_id = a->apic_id, .x2apic_entry = a->x2apic, .reason = why,
    };
}

static int find(const struct cpu_plan *p, uint32_t apic_id)
{
    for (unsigned i = 0; i < p->n_cpus; i++)
        if (p->cpus[i].apic_id == apic_id)
            return (int)i;
    return -1;
}

static void add(struct cpu_plan *p, unsigned entry, const struct acpi_cpu *a, uint32_t bsp_id)
{
    p->cpus[p->n_cpus++] = (struct cpu_plan_cpu){
        .apic_id = a->apic_id, .uid = a->uid, .entry = entry, .x2apic_entry = a->x2apic,
        .bsp = a->apic_id == bsp_id,
    };
}

/* Why entry a names no CPU to start, or NULL; counted in p when count. A disabled entry for
 * a CPU that another entry lists enabled is only a duplicate. */
static const char *unusable(struct cpu_plan *p, const struct acpi_cpu *a, bool x2apic_mode,
                            bool online_capable_defined, bool count)
{
    unsigned *n;
    const char *why;
    if (!a->x2apic && a->apic_id == XAPIC_BROADCAST)
        n = &p->broadcast_ids, why = "type 0 entry with APIC ID 0xff: the xAPIC broadcast, not a CPU";
    else if (a->x2apic && a->apic_id == X2APIC_BROADCAST)
        n = &p->broadcast_ids, why = "type 9 entry with APIC ID 0xffffffff: the x2APIC broadcast, "
                                     "not a CPU";
    else if (!a->enabled && find(p, a->apic_id) >= 0)
        n = &p->duplicates, why = "duplicate (disabled) of an enabled entry with the same APIC ID";
    else if (!a->enabled && online_capable_defined && a->online_capable)
        n = &p->online_capable, why = "disabled, online capable: may be brought up later, not "
                                      "started at boot";
    else if (!a->enabled)
        n = &p->disabled, why = "disabled: not present";
    else if (!x2apic_mode && a->apic_id >= XAPIC_BROADCAST)
        n = &p->unreachable, why = "APIC ID over 0xfe: unreachable with the local APIC in xAPIC "
                                   "mode";
    else
        return 0;
    if (count)
        (*n)++;
    return why;
}

/* The same APIC ID again: the CPU is counted once, by its first enabled entry. */
static bool duplicate(struct cpu_plan *p, unsigned entry, const struct acpi_cpu *a)
{
    int k = find(p, a->apic_id);
    if (k < 0)
        return false;
    p->duplicates++;
    drop(p, entry, a, p->cpus[k].x2apic_entry != a->x2apic
                          ? "duplicate: the same APIC ID as an earlier entry of the other type "
                            "(type 0 and type 9)"
                          : "duplicate: the same APIC ID as an earlier entry");
    return true;
}

static void place(struct cpu_plan *p, const struct cpu_topology *topo)
{
    p->packages = 0;
    for (unsigned i = 0; i < p->n_cpus; i++) {
        struct cpu_plan_cpu *c = &p->cpus[i];
        c->package = cpu_topo_package(topo, c->apic_id);
        c->core = cpu_topo_core(topo, c->apic_id);
        c->thread = cpu_topo_thread(topo, c->apic_id);
        bool seen = false;
        for (unsigned j = 0; j < i && !seen; j++)
            seen = p->cpus[j].package == c->package;
        p->packages += !seen;
    }
}

void cpu_plan_build(const struct acpi_madt *m, uint8_t madt_revision, uint32_t bsp_apic_id,
                    bool x2apic_mode, const struct cpu_topology *topo, struct cpu_plan *p)
{
    *p = (struct cpu_plan){ 0 };
    bool oc = madt_revision >= MADT_REV_ONLINE_CAPABLE;
    unsigned n = m && m->present ? m->n_cpus : 0;
    p->cpus[p->n_cpus++] = (struct cpu_plan_cpu){ .apic_id = bsp_apic_id, .bsp = true,
                                                  .entry = UINT32_MAX };
    /* the usable entries first, so that a disabled entry can be told from a duplicate */
    for (unsigned i = 0; i < n; i++) {
        const struct acpi_cpu *a = &m->cpus[i];
        if (unusable(p, a, x2apic_mode, oc, false))
            continue;
        if (a->apic_id == bsp_apic_id && !p->bsp_listed) {
            p->bsp_listed = true;
            p->cpus[0].uid = a->uid, p->cpus[0].entry = i, p->cpus[0].x2apic_entry = a->x2apic;
        } else if (!duplicate(p, i, a)) {
            if (p->n_cpus < ACPI_MAX_CPUS)
                add(p, i, a, bsp_apic_id);
            else
                drop(p, i, a, "over the list's cap of 256 CPUs");   /* the boot CPU unlisted */
        }
    }
    for (unsigned i = 0; i < n; i++) {
        const char *why = unusable(p, &m->cpus[i], x2apic_mode, oc, true);
        if (why)
            drop(p, i, &m->cpus[i], why);
    }
    place(p, topo);
    p->n_chosen = p->n_cpus;
    for (unsigned i = 0; i < p->n_cpus; i++)
        p->cpus[i].chosen = true;
}

/* The spread key of every CPU: (thread rank within its core, core rank within its package,
 * package rank), each rank the order of first appearance in the list, then the list index. */
static void spread_keys(const struct cpu_plan *p, uint64_t *key)
{
    static unsigned first_pkg[ACPI_MAX_CPUS], first_core[ACPI_MAX_CPUS];
    for (unsigned i = 0; i < p->n_cpus; i++) {
        const struct cpu_plan_cpu *c = &p->cpus[i];
        first_pkg[i] = first_core[i] = i;
        for (unsigned j = i; j-- > 0;) {
            if (p->cpus[j].package != c->package)
                continue;
            first_pkg[i] = j;
            if (p->cpus[j].core == c->core)
                first_core[i] = j;
        }
    }
    for (unsigned i = 0; i < p->n_cpus; i++) {
        uint64_t pkg = 0, core = 0, thread = 0;
        for (unsigned j = 0; j < i; j++) {
            pkg += first_pkg[j] == j && j < first_pkg[i];
            core += first_core[j] == j && first_pkg[j] == first_pkg[i] && j < first_core[i];
            thread += first_core[j] == first_core[i];
        }
        key[i] = thread << 48 | core << 32 | pkg << 16 | i;
    }
}

void cpu_plan_choose(struct cpu_plan *p, unsigned max_cpus, const char *limit_reason)
{
    static uint64_t key[ACPI_MAX_CPUS];
    if (max_cpus < 1)
        max_cpus = 1;
    spread_keys(p, key);
    p->n_chosen = 0;
    for (unsigned i = 0; i < p->n_cpus; i++) {
        unsigned before = 0;            /* CPUs preferred to this one, the boot CPU first */
        for (unsigned j = 0; j < p->n_cpus; j++)
            before += j != i && (p->cpus[j].bsp || (!p->cpus[i].bsp && key[j] < key[i]));
        p->cpus[i].chosen = p->cpus[i].bsp || before < max_cpus;
        p->cpus[i].reason = p->cpus[i].chosen ? 0 : limit_reason;
        p->n_chosen += p->cpus[i].chosen;
    }
}
