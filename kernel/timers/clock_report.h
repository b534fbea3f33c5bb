/* kernel/timers/clock_report.h - the clock records and their human table. */
#ifndef TICKLAB_TIME_CLOCK_REPORT_H
#define TICKLAB_TIME_CLOCK_REPORT_H
#include "ticklab/calibrate.h"
#include "ticklab/clocksource.h"
#include "ticklab/cs_measure.h"
#include "kernel/checks/wrapcheck.h"

/* A `clocksource` or `clockevent` record for a device that is absent or unusable before it
 * could be measured: name, present false, usable false, reason; and the human line. */
void report_absent_device(const char *record_type, const char *name, const char *reason);
void clock_report_absent(const char *name, const char *reason);
void clock_report_calibration(const struct cal_result *r);
void clock_report_source(const struct clocksource *cs, const struct cs_measure *m,
                         const struct wrap_result *w);
void clock_report_selected(const struct clocksource *cs, const char *requested,
                           const char *why);
/* "+12.345" from parts per billion, as ppm with three decimals. */
void format_ppb_as_ppm(char *buf, unsigned size, int64_t ppb);

#endif
