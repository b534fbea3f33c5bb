/* kernel/timers/tick_report.h - the tick's `tick` and `tick_stats` records
 * (docs/report-format.md), from tick_info(). */
#ifndef TICKLAB_KERNEL_TIME_TICK_REPORT_H
#define TICKLAB_KERNEL_TIME_TICK_REPORT_H

struct tick;

/* One `tick` record (device, real period) and the human line. */
void tick_report_start(const struct tick *t);
/* One `tick_stats` record: ticks, lost, wrap crossed. */
void tick_report_stats(const struct tick *t);

#endif
