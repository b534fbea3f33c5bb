/* kernel/timers/clocks.h - bringing up every counter the machine has as a clocksource,
 * calibrating the TSC against each reference and the LAPIC timer against the TSC, measuring
 * what each source delivers, and choosing the one time_ns() runs on. Reports `clocksource`,
 * `calibration` and `clocksource_selected` records (docs/report-format.md). */
#ifndef TICKLAB_TIME_CLOCKS_H
#define TICKLAB_TIME_CLOCKS_H
#include <stdint.h>

#include "ticklab/clocksource.h"

struct clock_facts {
    struct clocksource *tsc, *hpet, *acpi_pm, *pit, *lapic;   /* NULL: absent */
    uint64_t tsc_hz;                 /* chosen calibration, 0: none succeeded */
    uint64_t tsc_uncertainty_ppb;
    const char *tsc_method_ref;      /* the reference the chosen value came from */
    uint64_t lapic_hz;               /* LAPIC timer input clock (divide 1), 0: unknown */
    uint64_t lapic_uncertainty_ppb;
};

extern struct clock_facts clock_facts;

/* Needs the inventory (cpu_facts, acpi_facts) and the interrupt layer (for the wrap runs'
 * wake-ups). Marks the run failed when no clocksource is usable at all. */
void clocks_init(void);

/* TSC cycles <-> ns with the chosen calibration (0 before one exists). */
uint64_t tsc_cyc_to_ns(uint64_t cyc);
uint64_t tsc_ns_to_cyc(uint64_t ns);

#endif
