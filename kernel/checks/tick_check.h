/* kernel/checks/tick_check.h - runs the tick for a while and checks what it delivered: the
 * number of ticks against the elapsed time (time_ns), lost ticks, the jiffies wrap, and a
 * wheel timer of one second (HZ jiffies) against its expiry. One `tick_check` record. */
#ifndef TICKLAB_TIME_TICK_CHECK_H
#define TICKLAB_TIME_TICK_CHECK_H
#include <stdbool.h>
#include <stdint.h>

/* Waits run_ms in HLT with the tick running; nothing when run_ms is 0. */
void tick_check_run(uint64_t run_ms);
/* Idles run_ms in HLT with a wheel timer half way, the tick stopped between events when
 * nohz: one `idle_check` record (tick interrupts taken, jiffies caught up, the timer's
 * lateness). */
void idle_check_run(uint64_t run_ms, bool nohz);

#endif
