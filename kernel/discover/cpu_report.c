/* kernel/discover/cpu_report.c - see cpu_report.h. */
#include "kernel/discover/cpu_report.h"

#include "ticklab/amd_de_cfg.h"

#include "kernel/report/console.h"
#include "kernel/report/record.h"

struct cpu_info cpu_facts;

static void leaf15_members(struct json *j, const struct cpu_info *c)
{
    json_obj_open(j, "leaf15");
    json_bool(j, "valid", c->leaf15_valid);
    json_u64(j, "denominator", c->leaf15_denominator);
    json_u64(j, "numerator", c->leaf15_numerator);
    json_u64(j, "crystal_hz", c->leaf15_crystal_hz);
    if (c->leaf15_valid)
        json_u64(j, "tsc_hz", c->leaf15_tsc_hz);
    else
        json_str(j, "reason", c->leaf15_reason);
    json_obj_close(j);
}

static void leaf16_members(struct json *j, const struct cpu_info *c)
{
    json_obj_open(j, "leaf16");
    json_bool(j, "valid", c->leaf16_valid);
    json_u64(j, "base_mhz", c->leaf16_base_mhz);
    json_u64(j, "max_mhz", c->leaf16_max_mhz);
    json_u64(j, "bus_mhz", c->leaf16_bus_mhz);
    if (!c->leaf16_valid)
        json_str(j, "reason", c->leaf16_reason);
    json_obj_close(j);
}

static void topology_members(struct json *j, const struct cpu_topology *t)
{
    json_obj_open(j, "topology");
    json_str(j, "source", t->valid ? t->source : NULL);
    if (t->valid) {
        json_u64(j, "smt_shift", t->smt_shift);
        json_u64(j, "package_shift", t->pkg_shift);
    } else {
        json_str(j, "reason", t->reason);
    }
    json_obj_close(j);
}

void cpu_inventory(void)
{
    struct cpu_info *c = &cpu_facts;
    cpu_probe(c);

    struct rec r;
    rec_begin(&r, "cpu");
    json_str(&r.j, "vendor", c->vendor);
    json_str(&r.j, "brand", c->brand);
    json_u64(&r.j, "family", c->family);
    json_u64(&r.j, "model", c->model);
    json_u64(&r.j, "stepping", c->stepping);
    json_bool(&r.j, "hypervisor", c->hypervisor);
    json_str(&r.j, "hypervisor_signature", c->hv_signature);
    json_bool(&r.j, "tsc", c->tsc);
    json_bool(&r.j, "rdtscp", c->rdtscp);
    json_bool(&r.j, "invariant_tsc", c->invariant_tsc);
    json_bool(&r.j, "tsc_deadline", c->tsc_deadline);
    json_bool(&r.j, "x2apic", c->x2apic);
    json_bool(&r.j, "arat", c->arat);
    json_bool(&r.j, "apic", c->apic);
    json_u64(&r.j, "initial_apic_id", c->initial_apic_id);
    leaf15_members(&r.j, c);
    leaf16_members(&r.j, c);
    json_bool(&r.j, "smi_count_readable", c->smi_count_readable);
    if (c->smi_count_readable)
        json_u64(&r.j, "smi_count", c->smi_count);
    if (c->microcode_valid)
        json_hex(&r.j, "microcode", c->microcode);
    else
        json_null(&r.j, "microcode");
    json_str(&r.j, "microcode_reason", c->microcode_reason);
    topology_members(&r.j, &c->topo);
    rec_emit(&r);

    kprintf("  cpu         %s family %u model %u stepping %u%s%s\n", c->vendor, c->family,
            c->model, c->stepping, c->hypervisor ? ", hypervisor " : "",
            c->hypervisor ? c->hv_signature : "");
    if (c->brand[0])
        kprintf("              %s\n", c->brand);
    if (c->microcode_valid)
        kprintf("  microcode   %#x%s\n", c->microcode,
                c->hypervisor ? " (as the hypervisor reports it)" : "");
    else
        kprintf("  microcode   unknown: %s\n", c->microcode_reason);
    if (c->topo.valid)
        kprintf("  topology    APIC ID: thread %u bit(s), package from bit %u (%s)\n",
                c->topo.smt_shift, c->topo.pkg_shift, c->topo.source);
    else
        kprintf("  topology    unknown: %s\n", c->topo.reason);
    kprintf("  cpu timers  TSC %s, invariant %s, RDTSCP %s, TSC-deadline %s, x2APIC %s, ARAT %s\n",
            c->tsc ? "yes" : "no", c->invariant_tsc ? "yes" : "no", c->rdtscp ? "yes" : "no",
            c->tsc_deadline ? "yes" : "no", c->x2apic ? "yes" : "no", c->arat ? "yes" : "no");
    kprintf("  cpuid 0x15  %s\n", c->leaf15_valid ? "valid" : c->leaf15_reason);
    kprintf("  cpuid 0x16  %s\n", c->leaf16_valid ? "valid" : c->leaf16_reason);
}

static const char *const lfence_state_names[] = { "always", "already", "set", "unreadable",
                                                   "not_taken" };

void cpu_lfence_fix(bool report)
{
    struct lfence_fix f;
    lfence_make_serialising(&cpu_facts, &f);
    if (!report)
        return;
    struct rec r;
    rec_begin(&r, "lfence");
    json_str(&r.j, "vendor", cpu_facts.vendor);
    json_u64(&r.j, "family", cpu_facts.family);
    json_bool(&r.j, "applies", f.applies);
    json_str(&r.j, "state", lfence_state_names[f.state]);
    if (f.known)
        json_bool(&r.j, "serialising", f.serialising);
    else
        json_null(&r.j, "serialising");
    if (f.applies && f.state != LFENCE_UNREADABLE) {
        json_hex(&r.j, "de_cfg_before", f.before);
        json_hex(&r.j, "de_cfg_after", f.after);
    }
    json_str(&r.j, "reason", f.reason);
    rec_emit(&r);
    kprintf("  lfence      %s\n", f.reason);
}
