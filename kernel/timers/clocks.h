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
    struct hpet *hpet_block;         /* the HPET the "hpet" clocksource counts on; NULL:
                                        absent (its comparators are the clock events') */
    uint64_t tsc_hz;                 /* chosen calibration, 0: none succeeded */
    uint64_t tsc_uncertainty_ppb;
    const char *tsc_method_ref;      /* the reference the chosen value came from */
    uint64_t lapic_hz;               /* LAPIC timer input clock (divide 1), 0: unknown */
    uint64_t lapic_uncertainty_ppb;
    /* clocks_report_environment(): */
    const char *hypervisor;          /* cpu_hypervisor_name(): "none", "kvm", "tcg", ... */
    uint64_t rdtsc_cost_cyc;         /* median of back-to-back RDTSC pairs */
    bool rdtsc_trapped;
    bool virtual_time;               /* TCG with a TSC of exactly 1 GHz: QEMU's -icount, so
                                        every figure is an instruction count (a guess the
                                        record names as one) */
    /* A clock event device whose events do not follow virtual time (the RTC under QEMU
     * -icount without -rtc clock=vm: it runs on the host's clock), found by
     * kernel/checks/ce_measure.c; NULL: none. It is not used, and the environment record
     * names it: what counted its events may differ from run to run. */
    const char *off_virtual_time;
};

extern struct clock_facts clock_facts;

/* Registers every counter, calibrates the TSC and the LAPIC timer, measures each source's
 * reads, and selects the one time_ns() runs on (sends the `calibration` records). Needs
 * the inventory (cpu_facts, acpi_facts). -ENODEV when no clocksource is usable at all:
 * the caller decides what that means for the run. */
int clocks_init(void);
/* What clocks_init() measured of cs (read cost, resolution, monotonicity), NULL if not. */
struct cs_measure;
const struct cs_measure *clocks_measure_of(const struct clocksource *cs);
/* The TSC is not one clock on every CPU (reason: what showed it): it is taken out of use
 * (clocksource_demote) and a `clocksource_demoted` record says from what to what and why. */
void clocks_demote_tsc(const char *reason);

/* Under QEMU's TCG (CPUID signature). */
bool clocks_under_tcg(void);
/* TCG with a TSC calibrated at 1 GHz within 1 ppm: QEMU's -icount (clock_facts.virtual_time
 * says the same once clocks_report_environment() ran). False before clocks_init(). */
bool clocks_virtual_time(void);

/* The `environment` record: the hypervisor by its CPUID signature, what one RDTSC costs
 * (and whether that means the hypervisor traps it), what one read of each clocksource
 * costs in ns. After clocks_init() (the read costs are its measurements). */
void clocks_report_environment(void);

/* The `clocksource_selected` record: what time_ns() runs on, and why if not as asked. */
void clocks_report_selected(void);

/* TSC cycles <-> ns with the chosen calibration (0 before one exists); cycles to ns rounds to
 * the nearest ns (3 cycles at 1.0000004 GHz are 3 ns, not 2). */
uint64_t tsc_cyc_to_ns(uint64_t cyc);
/* ns as TSC cycles at the calibrated rate; while there is none, at 10 GHz (a bound: a wait
 * of that many cycles lasts at least ns on any CPU). */
uint64_t tsc_ns_to_cyc(uint64_t ns);

#endif
