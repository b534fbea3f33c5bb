/* kernel/report/console_report.h - what the output path cost the run: a `console_phase`
 * record per phase (the longest interrupts-off stretch of the output path, console time in
 * all and inside measurement windows), the run's totals in `console_cost`, and the cost of
 * one scroll of the screen (`screen_scroll`). docs/report-format.md has the keys. */
#ifndef TICKLAB_REPORT_CONSOLE_REPORT_H
#define TICKLAB_REPORT_CONSOLE_REPORT_H

#include <stdint.h>

/* The TSC's cycles-to-ns conversion (until it is given, the ns keys read 0). */
void console_report_clock(uint64_t (*tsc_cyc_to_ns)(uint64_t cyc));
/* Ends a phase: its `console_phase` record (exp: the experiment or "boot"/"run"). */
void console_phase_report(const char *exp, const char *phase);
/* Draws the whole screen once from the console's RAM copy, timed on the TSC. */
void console_measure_scroll(void);
/* The run's totals (after the last phase), then the screen's own drawing statistics. */
void console_report_run(void);

#endif
