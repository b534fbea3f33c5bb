/* kernel/checks/hrt_check.h - the hrtimers on the machine: one base on a one-shot clock event
 * device other than the tick's (reprogrammed per event), and a check that starts N timers at
 * pseudo-random deadlines (fixed seed) and times each callback with time_ns(). One
 * `hrtimer_check` record: fired in order, never early, lateness, reprograms. */
#ifndef TICKLAB_TIME_HRT_CHECK_H
#define TICKLAB_TIME_HRT_CHECK_H
#include <stdint.h>

#define HRT_CHECK_MAX 1000u

/* Chooses the device and sets up the base; reports `hrtimer_base`. Call after the tick
 * started. */
void hrtimers_init(void);
void hrt_check_run(uint64_t timers);
/* The kernel's hrtimer base, or NULL when hrtimers_init() found no device. */
struct hrtimer_base *hrtimers_base(void);

#endif
