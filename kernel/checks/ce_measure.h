/* kernel/checks/ce_measure.h - what each clock event device really does, measured on the
 * running machine: does it fire at all (bounded by the TSC), the smallest delta that fires
 * every time (found by search, then used as the device's min_delta_cyc), and what one
 * programming costs in TSC cycles. One `clockevent` record per device. */
#ifndef TICKLAB_TIME_CE_MEASURE_H
#define TICKLAB_TIME_CE_MEASURE_H

void ce_measure_all(void);

#endif
