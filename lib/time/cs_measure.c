/* lib/time/cs_measure.c - see cs_measure.h. */
#include "ticklab/cs_measure.h"

#include "ticklab/kstring.h"
#include "ticklab/stats.h"

static uint64_t samples[CS_MEASURE_MAX_READS];

static uint64_t pair_overhead(const struct clocksource *tsc, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t0 = cs_read(tsc);
        uint64_t t1 = cs_read(tsc);
        samples[i] = t1 - t0;
    }
    sort_u64(samples, n);
    return percentile_sorted_u64(samples, n, 500);
}

static void read_cost(const struct clocksource *cs, const struct clocksource *tsc, uint32_t n,
                      struct cs_measure *out)
{
    uint64_t prev = cs_read(cs), step_min = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t0 = cs_read(tsc);
        uint64_t v = cs_read(cs);
        uint64_t t1 = cs_read(tsc);
        uint64_t step = cs_delta(cs, v, prev);
        if (step && step <= cs->mask / 2 && (!step_min || step < step_min))
            step_min = step;
        prev = v;
        uint64_t c = t1 - t0;
        samples[i] = c > out->tsc_pair_overhead_cyc ? c - out->tsc_pair_overhead_cyc : 0;
    }
    out->resolution_cyc = step_min;
    sort_u64(samples, n);
    out->cost_min_cyc = samples[0];
    out->cost_median_cyc = percentile_sorted_u64(samples, n, 500);
    out->cost_p99_cyc = percentile_sorted_u64(samples, n, 990);
}

static void monotonicity(const struct clocksource *cs, const struct clocksource *tsc, uint64_t n,
                         struct cs_measure *out)
{
    uint64_t t0 = cs_read(tsc), prev = cs_read(cs);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = cs_read(cs);
        uint64_t step = cs_delta(cs, v, prev);
        if (step > cs->mask / 2) {
            uint64_t back = cs_delta(cs, prev, v);
            out->backward_steps++;
            if (back > out->largest_backward_cyc)
                out->largest_backward_cyc = back;
        }
        prev = v;
    }
    out->mono_reads = n;
    out->elapsed_tsc_cyc = cs_read(tsc) - t0;
}

void cs_measure(const struct clocksource *cs, const struct clocksource *tsc, uint32_t reads,
                uint64_t mono_reads, struct cs_measure *out)
{
    memset(out, 0, sizeof(*out));
    if (reads > CS_MEASURE_MAX_READS)
        reads = CS_MEASURE_MAX_READS;
    if (reads == 0)
        reads = 1;
    out->reads = reads;
    out->tsc_pair_overhead_cyc = pair_overhead(tsc, reads);
    read_cost(cs, tsc, reads, out);
    monotonicity(cs, tsc, mono_reads, out);
}
