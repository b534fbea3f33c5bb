/* kernel/exp/verdict.h - the verdict: the best clock source and clock event device on this
 * machine and why, whether the HPET or TSC-deadline would help and by how much, the tick
 * rate the measured overhead allows, whether the TSC is one clock on every CPU and whether
 * the machine steals time. Each claim is one `verdict` record that names the records behind
 * it (docs/report-format.md).
 *
 * The verdict knows no experiment: each one that has something to say fills its part of a
 * struct verdict_input from its own figures (struct experiment's summarize), and names
 * itself as that part's source. */
#ifndef TICKLAB_EXP_VERDICT_H
#define TICKLAB_EXP_VERDICT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct clockevent;

#define VERDICT_MAX_DEVICES 6
#define VERDICT_MAX_TICKS 8

/* One one-shot device's wake-ups through the hrtimer path. */
struct verdict_wake {
    const struct clockevent *dev;          /* the device (its name only for the text) */
    int64_t irq_p50_ns, irq_p99_ns;        /* deadline -> interrupt entry */
    int64_t cb_p50_ns, cb_p99_ns;          /* deadline -> hrtimer callback */
    int64_t cb_p99_lo_ns, cb_p99_hi_ns;    /* 95 % interval of the callback p99
                                              (stats_quantile_interval) */
    unsigned samples;                      /* of the callback series */
    bool measured;                         /* the callback series had samples */
};

/* What one tick costs at one tick size. */
struct verdict_tick {
    uint64_t tick_ns;
    int64_t overhead_ppm;                  /* of the loop's time, parts per million */
    int64_t per_tick_ns;                   /* loop time lost per tick interrupt (0 when
                                              below resolution) */
    int64_t per_tick_bound_ns;             /* ... at most this: estimate + uncertainty */
    int64_t per_tick_lo_ns;                /* ... at least this: estimate - uncertainty, 0
                                              when that is not above zero */
};

/* Each part: `from`, the experiment that gives it (its name, set whether it ran or not:
 * NULL only when no experiment gives that part), and its figures, all zero when it did
 * not run. */
struct verdict_input {
    struct {
        const char *from;
        struct verdict_wake dev[VERDICT_MAX_DEVICES];
        unsigned n;
    } wake;
    struct {
        const char *from;
        const char *device;                /* the tick's device */
        struct verdict_tick at[VERDICT_MAX_TICKS];
        unsigned n;                        /* tick sizes with a valid figure */
    } tick;
    struct {
        const char *from;
        const char *topic;                 /* the verdict record's topic for it */
        bool done;
        unsigned pairs;
        uint64_t backward, max_backward_cyc;
        int64_t max_abs_offset_cyc;
        uint64_t offset_uncertainty_cyc;   /* the largest half round trip among the pairs */
    } tsc;
    struct {
        const char *from;
        bool done;
        uint64_t gaps, max_gap_ns, window_ns;
    } stalls;
};

/* The `verdict` records and the human summary, from what the experiments gave;
 * clocksource_asked: the clocksource= word ("" or NULL: none). */
void verdict_report(const struct verdict_input *in, const char *clocksource_asked);
/* The claims verdict_report() made (topic, one sentence), at most max; returns how many. */
unsigned verdict_claims(const char **topic, const char **text, unsigned max);
/* The callback p99 of the device named by the first len bytes of name, from the figures
 * verdict_report() was given; -1 when that device was not measured. */
int64_t verdict_wake_cb_p99(const char *name, size_t len);

#endif
