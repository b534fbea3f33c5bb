/* kernel/summary.h - the last screen of a run, for a PC without a serial port: the
 * machine, the clocks chosen, the verdict's claims and the end status, on the screen console
 * only (the serial stream has all of it as records), laid out to fit one screen so that a
 * photograph of it is the report. */
#ifndef TICKLAB_REPORT_SUMMARY_H
#define TICKLAB_REPORT_SUMMARY_H
#include <stdbool.h>

void summary_show(bool ok, unsigned records);

#endif
