/* kernel/timers/clock_report.h - the clock records and their human table. */
#ifndef TICKLAB_TIME_CLOCK_REPORT_H
#define TICKLAB_TIME_CLOCK_REPORT_H
#include "ticklab/calibrate.h"
#include "ticklab/clocksource.h"
#include "ticklab/cs_measure.h"

/* What a run across two wraps of a source found (kernel/checks/wrapcheck.h runs it); the
 * `clocksource` record carries it. */
struct wrap_result {
    const char *status;        /* "ok", "lost", "skipped", "off" */
    const char *reason;        /* skipped/off: why */
    uint64_t run_ns;           /* by the TSC */
    uint64_t counter_ns;       /* by the counter, accumulated */
    uint64_t wraps;            /* whole wraps crossed */
    uint64_t reads;
    int64_t err_ppb;           /* (counter_ns - run_ns) / run_ns */
    bool halted;               /* waited in HLT between reads (backup wake-ups, idle.h) */
};

/* A `clocksource` or `clockevent` record for a device that is absent or unusable before it
 * could be measured: name, present false, usable false, reason; and the human line. */
void report_absent_device(const char *record_type, const char *name, const char *reason);
void clock_report_absent(const char *name, const char *reason);
void clock_report_calibration(const struct cal_result *r);
/* The width of each register access a source's reads make, said in its record as
 * access_bits (the HPET's: 32 or 64). One source. */
void clock_report_access_bits(const struct clocksource *cs, unsigned bits);
void clock_report_source(const struct clocksource *cs, const struct cs_measure *m,
                         const struct wrap_result *w);
void clock_report_selected(const struct clocksource *cs, const char *requested,
                           const char *why);
/* "+12.345" from parts per billion, as ppm with three decimals. */
void format_ppb_as_ppm(char *buf, unsigned size, int64_t ppb);

#endif
