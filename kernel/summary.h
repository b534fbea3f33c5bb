/* kernel/summary.h - the last screen of a run, for a PC without a serial port: the
 * machine, the clocks chosen, the verdict's claims and the end status, on the screen console
 * only (the serial stream has all of it as records), laid out to fit one screen so that a
 * photograph of it is the report. */
#ifndef TICKLAB_REPORT_SUMMARY_H
#define TICKLAB_REPORT_SUMMARY_H
#include <stdbool.h>
#include <stddef.h>

void summary_show(bool ok, unsigned records);
/* The verdict in one line of at most n - 1 characters, for every QR page: the timer the
 * verdict chose with its callback p99, the clocksource, the tick's cost ("verdict: timer
 * hpet (callback p99 133 ns) | clock hpet | one tick on lapic costs 126 ns"); when that is
 * wider than n - 1, its last parts are left out whole. Returns its length. */
size_t summary_verdict_line(char *buf, size_t n);

#endif
