/* kernel/exp/verdict.h - what the experiments found, kept for the verdict: the best clock
 * source and clock event device on this machine and why, whether the HPET or TSC-deadline
 * would help and by how much, and the tick rate the measured overhead allows. Each claim is
 * one `verdict` record that names the records behind it (docs/report-format.md). */
#ifndef TICKLAB_EXP_VERDICT_H
#define TICKLAB_EXP_VERDICT_H
#include <stdbool.h>
#include <stdint.h>

struct clockevent;

#define FINDINGS_MAX_DEVICES 6
#define FINDINGS_MAX_TICKS 8

struct findings {
    /* wakeup-latency, per one-shot device: the hrtimer path on it */
    struct {
        const struct clockevent *dev;          /* the device (its name only for the text) */
        int64_t irq_p50_ns, irq_p99_ns;        /* deadline -> interrupt entry */
        int64_t cb_p50_ns, cb_p99_ns;          /* deadline -> hrtimer callback */
        int64_t cb_p99_lo_ns, cb_p99_hi_ns;    /* 95 % interval of the callback p99
                                                  (stats_quantile_interval) */
        unsigned samples;                      /* of the callback series */
        bool measured;                         /* the callback series had samples */
    } wake[FINDINGS_MAX_DEVICES];
    unsigned n_wake;
    /* tick-overhead, per tick size */
    const char *tick_device;
    struct {
        uint64_t tick_ns;
        int64_t overhead_ppm;                  /* of the loop's time, parts per million */
        int64_t per_tick_ns;                   /* loop time lost per tick interrupt (0 when
                                                  below resolution) */
        int64_t per_tick_bound_ns;             /* ... at most this: estimate + uncertainty */
        int64_t per_tick_lo_ns;                /* ... at least this: estimate - uncertainty,
                                                  0 when that is not above zero */
    } tick[FINDINGS_MAX_TICKS];
    unsigned n_tick;
    /* tsc-sync */
    bool tsc_sync_done;
    unsigned tsc_pairs;
    uint64_t tsc_backward, tsc_max_backward_cyc;
    int64_t tsc_max_abs_offset_cyc;
    uint64_t tsc_offset_uncertainty_cyc;     /* the largest half round trip among the pairs */
    /* hwlat */
    bool hwlat_done;
    uint64_t hwlat_gaps, hwlat_max_gap_ns, hwlat_window_ns;
};

extern struct findings findings;

/* The `verdict` records and the human summary, from what ran. */
void verdict_report(void);
/* The claims verdict_report() made (topic, one sentence), at most max; returns how many. */
unsigned verdict_claims(const char **topic, const char **text, unsigned max);

#endif
