/* kernel/discover/cpu_report.h - the `cpu` record and its human line. */
#ifndef TICKLAB_DISCOVER_CPU_REPORT_H
#define TICKLAB_DISCOVER_CPU_REPORT_H
#include <stdbool.h>

#include "ticklab/cpuid.h"

extern struct cpu_info cpu_facts;

/* Probes the boot CPU into cpu_facts and reports it. */
void cpu_inventory(void);

/* LFENCE made dispatch-serialising on this CPU where it needs it (AMD families 10h-17h,
 * drivers/amd_de_cfg.h), as Linux does on every CPU; report: the boot CPU's `lfence`
 * record. */
void cpu_lfence_fix(bool report);

#endif
