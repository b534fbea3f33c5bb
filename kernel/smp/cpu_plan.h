/* kernel/smp/cpu_plan.h - which CPUs the MADT really lists, and which of them ticklab starts.
 *
 * Real firmware's MADT is not a clean list of CPUs (ACPI 6.5 5.2.12.2 and 5.2.12.12; Linux
 * filters the same cases in acpi_parse_lapic() and acpi_parse_x2apic()):
 *  - one CPU can appear twice: a type 0 (Local APIC) and a type 9 (Local x2APIC) entry with
 *    the same APIC ID, or the same type twice. Started twice, the second INIT would reset a
 *    CPU already running ticklab. A CPU is counted once, by the first enabled entry for its
 *    ID; every other entry for it is dropped with a reason;
 *  - APIC ID 0xFF in a type 0 entry is not a CPU: in xAPIC mode it is the broadcast
 *    destination (an INIT to it resets every other CPU), and ACPI puts CPUs with IDs from 255
 *    up in type 9 entries. 0xFFFFFFFF in a type 9 entry is the x2APIC broadcast;
 *  - an ID above 0xFE cannot be reached while the local APIC runs in xAPIC mode (its ICR
 *    destination has 8 bits);
 *  - a disabled entry is a CPU that is not there, unless its Online Capable flag (ACPI 6.3,
 *    bit 1; MADT revision 5 and later: Linux ignores the bit in older tables, where it was
 *    reserved) says it may be brought up later. Neither is started.
 * Then, when there are more CPUs than ticklab starts, the ones started are spread over the
 * packages and their cores (thread 0 of each core first, packages in turn), with APIC IDs
 * split by the boot CPU's CPUID topology widths, so a two-socket machine is measured on both
 * sockets. Pure: reads only its arguments. */
#ifndef TICKLAB_SMP_CPU_PLAN_H
#define TICKLAB_SMP_CPU_PLAN_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/acpi.h"
#include "ticklab/cpuid.h"

#define CPU_PLAN_MAX_DROPS 32   /* dropped entries kept with their reason; more are counted */

struct cpu_plan_cpu {
    uint32_t apic_id, uid;
    unsigned entry;             /* its index in the MADT's CPU list (acpi_madt.cpus) */
    bool x2apic_entry;          /* from a type 9 entry */
    bool bsp;                   /* the CPU running this */
    uint32_t package, core, thread;   /* from the APIC ID and the topology widths */
    bool chosen;                /* to be started (the boot CPU: always) */
    const char *reason;         /* !chosen: why not (set by cpu_plan_choose) */
};

struct cpu_plan_drop {
    unsigned entry;             /* index in acpi_madt.cpus */
    uint32_t apic_id;
    bool x2apic_entry;
    const char *reason;
};

struct cpu_plan {
    struct cpu_plan_cpu cpus[ACPI_MAX_CPUS];   /* enabled, distinct, reachable; the boot CPU first */
    unsigned n_cpus;
    struct cpu_plan_drop drops[CPU_PLAN_MAX_DROPS];
    unsigned n_drops, drops_over;   /* kept, and beyond CPU_PLAN_MAX_DROPS (counted only) */
    unsigned duplicates, broadcast_ids, unreachable, disabled, online_capable;
    bool bsp_listed;            /* the MADT names the boot CPU (if not, it is added) */
    unsigned packages;          /* distinct packages among cpus[] */
    unsigned n_chosen;
};

/* Builds the list from m (NULL or not present: the boot CPU alone). x2apic_mode: the local
 * APIC runs in x2APIC mode (IDs over 0xFE reachable); madt_revision: the table header's
 * (Online Capable is honoured from 5 on); topo: the boot CPU's widths. */
void cpu_plan_build(const struct acpi_madt *m, uint8_t madt_revision, uint32_t bsp_apic_id,
                    bool x2apic_mode, const struct cpu_topology *topo, struct cpu_plan *p);

/* Chooses at most max_cpus (the boot CPU included; at least 1), spread: thread 0 of every
 * core before any second thread, the n-th core of every package before any (n+1)-th,
 * packages in turn. The others get `reason` limit_reason. */
void cpu_plan_choose(struct cpu_plan *p, unsigned max_cpus, const char *limit_reason);

#endif
