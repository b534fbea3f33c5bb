/* lib/time/cs_measure.h - what a clocksource really delivers, measured at boot: the cost
 * of one read, the smallest step it shows, and whether it ever runs backwards. All costs are
 * in TSC cycles (the only clock cheap enough to time a single read). */
#ifndef TICKLAB_TIME_CS_MEASURE_H
#define TICKLAB_TIME_CS_MEASURE_H
#include <stdint.h>

#include "ticklab/clocksource.h"

struct cs_measure {
    uint32_t reads;                   /* samples behind the cost and resolution figures */
    uint64_t cost_min_cyc, cost_median_cyc, cost_p99_cyc;   /* one read, pair overhead removed */
    uint64_t tsc_pair_overhead_cyc;   /* median of two back-to-back ordered TSC reads */
    uint64_t resolution_cyc;          /* smallest non-zero step between successive reads, in
                                         the source's own counts (0: never moved) */
    uint64_t mono_reads, backward_steps;
    uint64_t largest_backward_cyc;    /* in source counts */
    uint64_t elapsed_tsc_cyc;         /* how long the monotonicity run took */
};

/* Times `reads` reads (at most CS_MEASURE_MAX_READS) between two reads of `tsc` (the TSC's
 * clocksource, whose read is ordered; the cost of a pair alone is measured and taken off),
 * then runs `mono_reads` back-to-back reads looking for a step backwards: a masked delta
 * above half the mask is a backward step (no real interval between two adjacent reads is
 * half a wrap). */
#define CS_MEASURE_MAX_READS 4096u
void cs_measure(const struct clocksource *cs, const struct clocksource *tsc, uint32_t reads,
                uint64_t mono_reads, struct cs_measure *out);

#endif
