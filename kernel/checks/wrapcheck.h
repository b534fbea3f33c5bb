/* kernel/checks/wrapcheck.h - a run across at least two wraps of a narrow counter, checking
 * that no wrap is lost: the counter's accumulated masked deltas, converted with its own
 * frequency, must match the elapsed time the TSC saw (both calibrated). A lost wrap shows as
 * an error of one whole wrap (tens of percent); the pass bound is 0.1 %. */
#ifndef TICKLAB_TIME_WRAPCHECK_H
#define TICKLAB_TIME_WRAPCHECK_H
#include <stdbool.h>
#include <stdint.h>

#include "kernel/timers/clock_report.h"
#include "ticklab/clocksource.h"

#define WRAPCHECK_MAX_RUN_NS  30000000000ull   /* two wraps must fit in 30 s */
#define WRAPCHECK_PASS_PPB    1000000           /* 0.1 % */

/* After the clock event devices are up (the halts need a backup wake-up). */
void wrapcheck_run(const struct clocksource *cs, bool enabled, struct wrap_result *out);
/* Every registered source: its wrap run (wrapcheck=on, or profiles other than quick), then
 * its `clocksource` record (measurements from clocks_init), then `clocksource_selected`. */
void wrapcheck_report_all(void);

#endif
