/* kernel/checks/hrt_check.h - a check of the kernel's main hrtimer base (kernel/timers/
 * timers.h): N timers at pseudo-random deadlines (fixed seed), each callback timed with
 * time_ns(). One `hrtimer_check` record: fired in order, never early, lateness, reprograms. */
#ifndef TICKLAB_TIME_HRT_CHECK_H
#define TICKLAB_TIME_HRT_CHECK_H
#include <stdint.h>

#define HRT_CHECK_MAX 1000u

void hrt_check_run(uint64_t timers);

#endif
