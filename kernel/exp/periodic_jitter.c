/* kernel/exp/periodic_jitter.c - `periodic-jitter`: ten periodic hrtimers at once, then one
 * alone, as the source ran them: at a resolution of 5000 ns ten with periods T = 500 + 13*i
 * us (i = 0..9); at 800 ns ten with T = 600 + 13*i us, then one alone at T = 600 us; per timer
 * the interval between consecutive callbacks (time_ns) and its spread around T. ticklab adds
 * the finest resolution the device allows (one device cycle) with the 800 ns sets; hres_ns=
 * on the command line replaces the two resolutions by one. The published figures (Linux
 * 2.6.16.28 high-resolution timers on a Pentium 4): a standard deviation of 4.587-4.760 us
 * with ten tasks at 5000 ns, 4.177-4.379 us at 800 ns, 1.663 us alone.
 *
 * The resolution as a kernel of that time applied it: a clock event device is armed with a
 * delay counted in its own units from the moment it is programmed, so each re-arm's delay
 * (ideal expiry - now) is rounded up to whole hres_ns units. Each timer keeps its ideal
 * expiries start + k*T, so the resolution shows as jitter (an expiry late by less than
 * hres_ns) and never as drift. The figures still follow T mod hres_ns: where every callback
 * comes the same L ns after its expiry (under -icount), the rounding's phase moves by
 * (L - T) mod hres_ns each period, and the stddev is hres_ns * sqrt(p(1 - p)) with p that
 * phase step over hres_ns (at 5000 ns lowest where T mod 5 us is 0, never above hres_ns / 2).
 * A real machine's varying L spreads the phase instead. A callback that finds its next
 * expiry already past skips whole periods and counts them as overruns. */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "kernel/config.h"
#include "kernel/exp/harness.h"
#include "kernel/report/console.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "kernel/timers/timers.h"
#include "ticklab/hrtimer.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"

#define TIMERS       10u
#define MAX_SAMPLES  16384u
#define HIST_LO_NS   (-20000)
#define HIST_STEP_NS 1000
#define HIST_BINS    42u          /* [0]: below -20 us, [1..40]: 1 us each, [41]: >= +20 us */

struct ptimer {
    struct hrtimer t;             /* first member */
    uint64_t period_ns, ideal_ns, last_ns;
    uint64_t overruns;
    unsigned n;                   /* intervals recorded */
    bool started;
    int32_t dev[MAX_SAMPLES];     /* interval - period, ns (clamped to +-2 s) */
};

static struct ptimer timers[TIMERS];
static uint64_t grid_ns;          /* 0: no grid */
static volatile bool stop;
static int64_t scratch[MAX_SAMPLES];

/* The expiry armed at `now` for `ideal`: the delay rounded up to whole resolution units. */
static uint64_t on_grid(uint64_t ideal, uint64_t now)
{
    if (!grid_ns || ideal <= now)
        return ideal;
    uint64_t d = ideal - now, r = d % grid_ns;
    return r ? ideal + (grid_ns - r) : ideal;
}

static enum hrtimer_restart on_timer(struct hrtimer *h)
{
    struct ptimer *p = (struct ptimer *)h;
    uint64_t now = time_ns();
    if (p->started && p->n < MAX_SAMPLES) {
        int64_t d = (int64_t)(now - p->last_ns) - (int64_t)p->period_ns;
        if (d > 2000000000)
            d = 2000000000;
        if (d < -2000000000)
            d = -2000000000;
        p->dev[p->n++] = (int32_t)d;
    }
    p->started = true;
    p->last_ns = now;
    if (stop || p->n >= MAX_SAMPLES)
        return HRTIMER_NORESTART;
    p->ideal_ns += p->period_ns;
    while (p->ideal_ns <= now) {
        p->ideal_ns += p->period_ns;
        p->overruns++;
    }
    h->expires_ns = on_grid(p->ideal_ns, time_ns());
    return HRTIMER_RESTART;
}

static void report(const char *set, unsigned idx, uint64_t hres_ns, const char *device)
{
    struct ptimer *p = &timers[idx];
    unsigned n = p->n;
    uint64_t hist[HIST_BINS] = { 0 };
    unsigned in5 = 0, in10 = 0;
    for (unsigned k = 0; k < n; k++) {
        int64_t d = p->dev[k];
        scratch[k] = d;
        in5 += d >= -5000 && d <= 5000;
        in10 += d >= -10000 && d <= 10000;
        int64_t b = d < HIST_LO_NS ? 0 : 1 + (d - HIST_LO_NS) / HIST_STEP_NS;
        hist[b > (int64_t)HIST_BINS - 1 ? HIST_BINS - 1 : (unsigned)b]++;
    }
    struct stats st;
    stats_i64(scratch, n, &st);
    struct rec r;
    exp_result_begin(&r);
    json_str(&r.j, "set", set);
    json_u64(&r.j, "timer", idx);
    json_str(&r.j, "device", device);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "hres_ns", hres_ns);
    json_bool(&r.j, "grid", grid_ns != 0);
    json_u64(&r.j, "period_ns", p->period_ns);
    json_u64(&r.j, "samples", n);
    json_i64(&r.j, "avg_ns", (int64_t)p->period_ns + st.mean);
    json_u64(&r.j, "stddev_ns", st.stddev);
    json_i64(&r.j, "min_ns", n ? (int64_t)p->period_ns + st.min : 0);
    json_i64(&r.j, "max_ns", n ? (int64_t)p->period_ns + st.max : 0);
    json_fixed(&r.j, "p_within_5us", n ? (int64_t)in5 * 10000 / n : 0, 4);
    json_fixed(&r.j, "p_within_10us", n ? (int64_t)in10 * 10000 / n : 0, 4);
    json_u64(&r.j, "overruns", p->overruns);
    json_obj_open(&r.j, "hist");
    json_i64(&r.j, "lo_ns", HIST_LO_NS);
    json_u64(&r.j, "bucket_ns", HIST_STEP_NS);
    json_arr_open(&r.j, "counts");
    for (unsigned b = 0; b < HIST_BINS; b++)
        json_elem_u64(&r.j, hist[b]);
    json_arr_close(&r.j);
    json_obj_close(&r.j);
    rec_emit(&r);
    kprintf("  %-5s %6llu  %6llu  %7u  %9lld  %7llu  %6u.%02u%%  %6u.%02u%%\n", set,
            (unsigned long long)hres_ns, (unsigned long long)(p->period_ns / 1000), n,
            (long long)((int64_t)p->period_ns + st.mean), (unsigned long long)st.stddev,
            n ? in5 * 100 / n : 0, n ? in5 * 10000 / n % 100 : 0, n ? in10 * 100 / n : 0,
            n ? in10 * 10000 / n % 100 : 0);
}

/* Runs `count` timers (periods from `periods`) for run_ns, then reports them as `set`. */
static void run_set(struct hrtimer_base *base, const char *set, const uint64_t *periods,
                    unsigned count, uint64_t run_ns, uint64_t hres_ns)
{
    unsigned long flags = irq_save();
    stop = false;
    uint64_t t0 = time_ns() + 1000000ull;         /* 1 ms to start them all */
    for (unsigned i = 0; i < count; i++) {
        struct ptimer *p = &timers[i];
        memset(&p->t, 0, sizeof(p->t));
        p->t.fn = on_timer;
        p->period_ns = periods[i];
        p->ideal_ns = t0 + periods[i];
        p->n = 0;
        p->overruns = 0;
        p->started = false;
        hrtimer_start(base, &p->t, on_grid(p->ideal_ns, time_ns()), HRTIMER_MODE_ABS);
    }
    /* The periodic timers themselves wake the HLT loop every half millisecond. */
    exp_sleep_until(t0 + run_ns, base->dev, "periodic timers");
    stop = true;
    for (unsigned i = 0; i < count; i++)
        hrtimer_cancel(base, &timers[i].t);
    irq_restore(flags);
    for (unsigned i = 0; i < count; i++)
        report(set, i, hres_ns, base->dev->name);
}

/* hres_ns=: one deadline grid instead of the source's two (0: 5000 and 800 ns). */
static uint64_t hres_word_ns;
static struct cmdline_opt options[] = {
    { .key = "hres_ns", .type = CMDLINE_UINT, .dest = &hres_word_ns, .min = 1, .max = 1000000,
      .accepted = "1..1000000 (ns: periodic-jitter's deadline grid)" },
};

static void run(const struct exp_env *env)
{
    struct hrtimer_base *base = env->base;
    if (!base) {
        struct rec r;
        exp_skip_begin(&r, "no hrtimer device (a one-shot device apart from the tick's)");
        rec_emit(&r);
        return;
    }
    /* The source's runs: at 5000 ns ten timers at T = 500+13i us; at 800 ns ten at
     * T = 600+13i us, then one alone at 600 us. ticklab adds the finest resolution (one
     * device cycle) with the 800 ns kernel's sets; hres_ns= replaces the two kernels' by one
     * at that resolution with the 800 ns sets. */
    struct { uint64_t hres, first_us; bool alone; } sets[3] = {
        { 5000, 500, false }, { 800, 600, true }, { 0, 600, true },
    };
    unsigned n_sets = 3;
    if (hres_word_ns) {
        sets[0].hres = hres_word_ns;
        sets[0].first_us = 600;
        sets[0].alone = true;
        sets[1] = sets[2];
        n_sets = 2;
    }
    uint64_t ten[TIMERS], alone[1] = { 600000ull };
    uint64_t run_ns = exp_size(300, 8000, 8000) * 1000000ull;
    uint64_t finest = (NSEC_PER_SEC + base->dev->freq_hz - 1) / base->dev->freq_hz;
    kprintf("\nperiodic-jitter: 10 periodic hrtimers at once, then 1 alone, on %s (%llu ms each)\n",
            base->dev->name, (unsigned long long)(run_ns / 1000000ull));
    kprintf("  set   hres ns  T us  samples     avg ns  stdev ns  within 5us  within 10us\n");
    for (unsigned g = 0; g < n_sets && exp_budget_left(); g++) {
        grid_ns = sets[g].hres;
        uint64_t hres = grid_ns ? grid_ns : finest;
        for (unsigned i = 0; i < TIMERS; i++)
            ten[i] = (sets[g].first_us + 13ull * i) * 1000ull;
        exp_phase("resolution %llu ns", (unsigned long long)hres);
        run_set(base, "ten", ten, TIMERS, run_ns, hres);
        if (sets[g].alone)
            run_set(base, "alone", alone, 1, run_ns, hres);
    }
    grid_ns = 0;
}

const struct experiment exp_periodic_jitter = {
    .name = "periodic-jitter",
    .summary = "ten concurrent periodic hrtimers, then one alone: interval spread per timer",
    .rows = "set timer hres_ns grid period_ns",
    .options = options,
    .n_options = sizeof(options) / sizeof(options[0]),
    .run = run,
    .budget_s = { 20, 200, 3600 },
};
