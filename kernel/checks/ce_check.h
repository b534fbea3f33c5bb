/* kernel/checks/ce_check.h - each clock event device fires N periodic events at (about) 1 ms
 * and N one-shots at pseudo-random deltas (fixed seed, so runs repeat); every event is
 * timed with time_ns() (the selected clocksource). One `clockevent_check` record per device
 * and mode: counts, and the error of each interval / the lateness of each one-shot.
 * Waits are in HLT with a backup wake-up on another device (kernel/timers/idle.h). */
#ifndef TICKLAB_TIME_CE_CHECK_H
#define TICKLAB_TIME_CE_CHECK_H
#include <stdint.h>

#define CE_CHECK_MAX_EVENTS 1000u

void ce_check_all(uint64_t events);

#endif
