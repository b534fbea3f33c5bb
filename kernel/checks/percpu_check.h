/* kernel/checks/percpu_check.h - each application processor's own timers, checked: on every
 * online CPU but the boot CPU, ten hrtimers 1 ms apart on that CPU's local APIC timer, and
 * again on its own HPET comparator where it has one; each callback notes which CPU ran it.
 * One `percpu_timer_check` record per CPU and device: all fired, all on their own CPU,
 * never early. */
#ifndef TICKLAB_TIME_PERCPU_CHECK_H
#define TICKLAB_TIME_PERCPU_CHECK_H
#include <stdbool.h>

/* False when an online CPU's LAPIC timer base is missing or its timers did not all fire on
 * it (each case has its record and an `error` record): the run must not end "ok" then. A
 * CPU without an HPET comparator of its own is no failure (the HPET has only so many). */
bool percpu_check_run(void);

#endif
