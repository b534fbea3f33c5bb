/* kernel/checks/wrapcheck.h - a run across at least two wraps of a narrow counter, checking
 * that no wrap is lost: the counter's accumulated masked deltas, converted with its own
 * frequency, must match the elapsed time the TSC saw (both calibrated). A lost wrap shows as
 * an error of one whole wrap (tens of percent); the pass bound is 0.1 %. */
#ifndef TICKLAB_TIME_WRAPCHECK_H
#define TICKLAB_TIME_WRAPCHECK_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clocksource.h"

#define WRAPCHECK_MAX_RUN_NS  30000000000ull   /* two wraps must fit in 30 s */
#define WRAPCHECK_PASS_PPB    1000000           /* 0.1 % */

struct wrap_result {
    const char *status;        /* "ok", "lost", "skipped", "off" */
    const char *reason;        /* skipped/off: why */
    uint64_t run_ns;           /* by the TSC */
    uint64_t counter_ns;       /* by the counter, accumulated */
    uint64_t wraps;            /* whole wraps crossed */
    uint64_t reads;
    int64_t err_ppb;           /* (counter_ns - run_ns) / run_ns */
    bool halted;               /* waited in HLT between reads (PIT IRQ0 wake-ups) */
};

void wrapcheck_run(const struct clocksource *cs, bool enabled, struct wrap_result *out);

#endif
