/* kernel/exp/itimer_error.c - `itimer-error`: periodic timers of 10000, 9998 and 1000 us on a
 * PIT tick at HZ=1000, which the PIT really makes at 1193 input clocks = 999,847 ns
 * (1000.152 Hz). Two ways:
 *  - `tick`: the old itimer. The period is rounded UP to whole ticks so that it never
 *    fires early (ceil(10,000,000 / 999,847) = 11 ticks), and each expiry re-arms the wheel
 *    timer that many jiffies ahead. The rounding is systematic: 10000 us becomes 10.998 ms
 *    (9.07 % fewer signals than asked), 1000 us becomes 2 ticks (50 % fewer), 9998 us
 *    becomes 10 ticks = 9.998 ms (0.005 % fewer).
 *  - `ns`: an hrtimer forwarded by exactly its period from its previous expiry.
 * Then the source's own kind of count, CPU time sampled at each tick, as ITIMER_PROF counts
 * it: a busy loop runs for the source's 7.12 s (its "real time elapsed") and every tick that
 * interrupts it charges one tick of CPU time to it (a wheel timer re-armed each jiffy, run
 * by the tick's interrupt); the three periods count on that one loop together:
 *  - `prof_tick`: the unpatched kernel's rounding, each interval rounded up to whole ticks
 *    of CPU time (10000 us: a signal every 11 charged ticks);
 *  - `prof_ns`: the patched kernel as the source describes it ("It change intervals
 *    measurement resolutions and correct times when signal is generated"): the interval kept
 *    in ns, a signal at the first tick whose charged CPU time (ticks x tick_ns) reaches the
 *    next multiple of the period, so consecutive signals may come a tick early or late.
 * What ticklab does not have: processes, user and system time, signals; its "CPU time" is
 * the loop's ticks, and the three timers share one loop where the source ran three.
 * The published figures (Gruszka's itimer patches, LKML): -9.3 %, -0.2 % and -50.4 % before
 * them; -0.1 %, -0.2 % and -0.1 % after (10000, 9998 and 1000 us), counted over 7.12 s, 7.12 s
 * and 7.19 s (before) of a busy loop.
 *
 * Per timer: `counted` expiries in a window from arming to the last expiry (time_ns), the
 * `expected` number of periods in that window, and `error_pct` = counted/expected - 1.
 *
 * Beside it, what the error should be and what else took expiries away, so that a figure
 * off the prediction says why instead of standing as the machine's:
 *  - tick mode: `predicted_pct` = period / (interval_ticks * tick) - 1, the whole-tick
 *    rounding. Ticks whose interrupts came late (a VM's exits, lost ticks caught up) make a
 *    wheel timer run on a later jiffy than its own, and re-armed from there its next period
 *    is longer: `late_jiffies` sums that lateness, and `accounted_pct` is the error with
 *    those jiffies taken out of the window. It matches the prediction to within
 *    `tolerance_pct` (the window's quantisation: one tick, one wake-up) unless jiffies did
 *    not keep time with time_ns, which `why` then says.
 *  - ns mode: predicted 0. A callback that runs more than a period late is forwarded past
 *    the periods it missed (hrtimer_forward): `overruns` counts them, and `accounted_pct`
 *    counts them as expiries. */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "kernel/exp/harness.h"
#include "kernel/report/console.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "kernel/timers/ce_devices.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/timers.h"
#include "ticklab/hrtimer.h"
#include "ticklab/tick.h"
#include "ticklab/wheel.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"

#define N_TIMERS 3u
/* The source's busy loop lasted 7.12 s ("Meanwhile real time elapsed: 7.12 s"). */
#define PROF_WINDOW_NS 7120000000ull
#define PROF_SPIN_BLOCKS 256u           /* NOP blocks between two looks at the TSC */

static const uint64_t periods_us[N_TIMERS] = { 10000, 9998, 1000 };

struct itimer {
    struct hrtimer h;             /* first member */
    struct wheel_timer w;
    uint64_t period_ns, ticks;    /* ticks: the tick-mode interval in jiffies */
    uint64_t start_ns, last_ns;
    uint64_t start_jiffies, last_jiffies, late_jiffies, overruns;
    volatile unsigned counted;
    bool stop;
};

static struct itimer its[N_TIMERS];

static void on_wheel(struct wheel_timer *w, void *ctx)
{
    struct itimer *it = ctx;
    (void)w;
    it->last_ns = time_ns();
    it->counted++;
    /* synced as timers_wheel_add will: the late ticks counted where it re-arms */
    uint64_t j = timers_jiffies_sync();
    it->late_jiffies += j - it->w.expires;
    it->last_jiffies = j;
    if (!it->stop)
        timers_wheel_add(&it->w, it->ticks, WHEEL_EXACT);
}

static enum hrtimer_restart on_hrtimer(struct hrtimer *h)
{
    struct itimer *it = (struct itimer *)h;
    uint64_t now = time_ns();
    it->last_ns = now;
    it->counted++;
    if (it->stop)
        return HRTIMER_NORESTART;
    uint64_t periods = hrtimer_forward(h, now, it->period_ns);
    if (periods > 1)
        it->overruns += periods - 1;
    return HRTIMER_RESTART;
}

/* ---- CPU time, sampled at each tick (prof modes) ------------------------------------------ */

struct prof {
    uint64_t period_ns;
    uint64_t incr_ticks, expires_ticks;   /* prof_tick: the interval in whole ticks */
    uint64_t next_ns;                     /* prof_ns: the next multiple of the period */
    unsigned counted_tick, counted_ns;
};

static struct prof profs[N_TIMERS];
static struct wheel_timer prof_sampler;
static volatile bool prof_in_loop, prof_stop;
static uint64_t prof_cpu_ticks, prof_tick_ns;

/* Each tick: the loop is what it interrupted, so the loop's CPU time grows by one tick, and
 * each timer whose CPU time has come counts a signal (one a tick at most, as a tick-driven
 * check sends one). */
static void on_prof_tick(struct wheel_timer *w, void *ctx)
{
    (void)ctx;
    if (prof_in_loop) {
        prof_cpu_ticks++;
        uint64_t cpu_ns = prof_cpu_ticks * prof_tick_ns;
        for (unsigned i = 0; i < N_TIMERS; i++) {
            struct prof *p = &profs[i];
            if (prof_cpu_ticks >= p->expires_ticks) {
                p->counted_tick++;
                p->expires_ticks += p->incr_ticks;
            }
            if (cpu_ns >= p->next_ns) {
                p->counted_ns++;
                p->next_ns += p->period_ns;
            }
        }
    }
    if (!prof_stop)
        timers_wheel_add(w, 1, WHEEL_EXACT);
}

/* The source's test_func: nothing but CPU, interrupts on, until window_ns of the TSC. */
static void busy_loop(uint64_t window_ns)
{
    uint64_t c0 = rdtsc(), len = tsc_ns_to_cyc(window_ns);
    irq_enable();
    while (rdtsc() - c0 < len)
        for (unsigned i = 0; i < PROF_SPIN_BLOCKS; i++)
            cpu_nop_block();
    irq_disable();
}

static int64_t pct_e4(int64_t num, int64_t den)
{
    return den ? (num - den) * 1000000 / den : 0;
}

/* A row's first keys, the same for both kinds of count; interval_ticks only for a count in
 * whole ticks (ticks 0: none). */
static void row_head(struct rec *r, const char *mode, const char *device, uint64_t tick_ns,
                     uint64_t period_ns, uint64_t ticks, uint64_t window)
{
    exp_result_begin(r);
    json_str(&r->j, "mode", mode);
    json_str(&r->j, "device", device);
    json_str(&r->j, "clock", "time_ns");
    json_u64(&r->j, "tick_ns", tick_ns);
    json_u64(&r->j, "period_us", period_ns / 1000);
    if (ticks)
        json_u64(&r->j, "interval_ticks", ticks);
    json_u64(&r->j, "window_ns", window);
}

/* The count matches its prediction when the error, with what the run reports taken into
 * account, lies within the tolerance of the window (and there was a window and a count). */
static bool within(int64_t accounted_e4, int64_t predicted_e4, int64_t tol_e4, uint64_t window,
                   unsigned counted)
{
    int64_t off_e4 = accounted_e4 - predicted_e4;
    return window && counted && (off_e4 < 0 ? -off_e4 : off_e4) <= tol_e4;
}

static void report(const char *mode, const struct itimer *it, const char *device,
                   uint64_t tick_ns)
{
    bool tick = !k_strcmp(mode, "tick");
    uint64_t window = it->last_ns > it->start_ns ? it->last_ns - it->start_ns : 0;
    int64_t asked = (int64_t)it->counted * (int64_t)it->period_ns;
    int64_t err_e4 = pct_e4(asked, (int64_t)window);
    uint64_t expected_e3 = window * 1000ull / it->period_ns;
    /* the prediction, and the error with what the run reports taken into account */
    int64_t predicted_e4 = tick ? pct_e4((int64_t)it->period_ns, (int64_t)(it->ticks * tick_ns))
                                : 0;
    uint64_t late_ns = it->late_jiffies * tick_ns;
    int64_t accounted_e4 = tick
        ? pct_e4(asked, window > late_ns ? (int64_t)(window - late_ns) : 0)
        : pct_e4((int64_t)(it->counted + it->overruns) * (int64_t)it->period_ns, (int64_t)window);
    /* the window is known to a tick (armed mid-tick) and a wake-up: its share of it */
    int64_t tol_e4 = window ? (int64_t)((tick_ns + tick_ns / 2) * 1000000ull / window) : 0;
    bool matches = within(accounted_e4, predicted_e4, tol_e4, window, it->counted);
    struct rec r;
    row_head(&r, mode, device, tick_ns, it->period_ns, tick ? it->ticks : 0, window);
    json_u64(&r.j, "counted", it->counted);
    json_fixed(&r.j, "expected", (int64_t)expected_e3, 3);
    json_fixed(&r.j, "error_pct", err_e4, 4);
    json_fixed(&r.j, "predicted_pct", predicted_e4, 4);
    if (tick) {
        json_u64(&r.j, "late_jiffies", it->late_jiffies);
        json_u64(&r.j, "jiffies", it->last_jiffies - it->start_jiffies);
    } else {
        json_u64(&r.j, "overruns", it->overruns);
    }
    json_fixed(&r.j, "accounted_pct", accounted_e4, 4);
    json_fixed(&r.j, "tolerance_pct", tol_e4, 4);
    json_bool(&r.j, "matches_prediction", matches);
    if (!matches) {
        char why[160];
        if (!it->counted || !window) {
            k_strlcpy(why, "no expiry came in the window", sizeof(why));
        } else if (tick) {
            /* jiffies against time: the window's jiffies at the tick's period */
            uint64_t jns = (it->last_jiffies - it->start_jiffies) * tick_ns;
            int64_t drift_e4 = pct_e4((int64_t)jns, (int64_t)window);
            char d[24];
            fmt_snprintf(why, sizeof(why), "jiffies ran %s %% off time_ns in the window "
                         "(late wake-ups beyond the tolerance, or the tick's period is not what "
                         "the clock measures)", fmt_fixed(d, sizeof(d), drift_e4, 4, true));
        } else {
            fmt_snprintf(why, sizeof(why), "callbacks ran late by more than the tolerance "
                         "without missing a whole period (%llu overruns counted)",
                         (unsigned long long)it->overruns);
        }
        json_str(&r.j, "why", why);
    }
    rec_emit(&r);
    char e[24], a[24];
    kprintf("  %-4s %6llu us  %6u counted  %7llu.%03llu expected  %s %%", mode,
            (unsigned long long)(it->period_ns / 1000), it->counted,
            (unsigned long long)(expected_e3 / 1000), (unsigned long long)(expected_e3 % 1000),
            fmt_fixed(e, sizeof(e), err_e4, 4, true));
    if (tick ? it->late_jiffies != 0 : it->overruns != 0)
        kprintf("  (%s %% with %llu %s accounted)", fmt_fixed(a, sizeof(a), accounted_e4, 4, true),
                (unsigned long long)(tick ? it->late_jiffies : it->overruns),
                tick ? "late jiffies" : "overruns");
    kprintf("%s\n", matches ? "" : "  NOT the prediction");
}

static void prof_report(const char *mode, const struct prof *p, const char *device,
                        uint64_t window, uint64_t lost)
{
    bool tick = !k_strcmp(mode, "prof_tick");
    unsigned counted = tick ? p->counted_tick : p->counted_ns;
    int64_t asked = (int64_t)counted * (int64_t)p->period_ns;
    int64_t err_e4 = pct_e4(asked, (int64_t)window);
    uint64_t expected_e3 = window * 1000ull / p->period_ns;
    int64_t predicted_e4 = tick ? pct_e4((int64_t)p->period_ns,
                                         (int64_t)(p->incr_ticks * prof_tick_ns)) : 0;
    /* against the CPU time the loop was charged: a tick that never came charged nothing */
    uint64_t cpu_ns = prof_cpu_ticks * prof_tick_ns;
    int64_t accounted_e4 = pct_e4(asked, (int64_t)cpu_ns);
    /* the last interval is cut by the window's end, and the first tick falls anywhere in
     * the first period: one interval and one tick of the window */
    uint64_t step = tick ? p->incr_ticks * prof_tick_ns : p->period_ns;
    int64_t tol_e4 = window ? (int64_t)((step + prof_tick_ns) * 1000000ull / window) : 0;
    bool matches = within(accounted_e4, predicted_e4, tol_e4, window, counted);
    struct rec r;
    row_head(&r, mode, device, prof_tick_ns, p->period_ns, tick ? p->incr_ticks : 0, window);
    json_u64(&r.j, "cpu_ticks", prof_cpu_ticks);
    json_u64(&r.j, "lost_ticks", lost);
    json_u64(&r.j, "counted", counted);
    json_fixed(&r.j, "expected", (int64_t)expected_e3, 3);
    json_fixed(&r.j, "error_pct", err_e4, 4);
    json_fixed(&r.j, "predicted_pct", predicted_e4, 4);
    json_fixed(&r.j, "accounted_pct", accounted_e4, 4);
    json_fixed(&r.j, "tolerance_pct", tol_e4, 4);
    json_bool(&r.j, "matches_prediction", matches);
    if (!matches) {
        char why[160];
        fmt_snprintf(why, sizeof(why), "%llu ticks charged to the loop in %llu ns (%llu lost): "
                     "the counts are the ticks', the window the clock's",
                     (unsigned long long)prof_cpu_ticks, (unsigned long long)window,
                     (unsigned long long)lost);
        json_str(&r.j, "why", why);
    }
    rec_emit(&r);
    char e[24];
    kprintf("  %-9s %6llu us  %6u counted  %7llu.%03llu expected  %s %%%s\n", mode,
            (unsigned long long)(p->period_ns / 1000), counted,
            (unsigned long long)(expected_e3 / 1000), (unsigned long long)(expected_e3 % 1000),
            fmt_fixed(e, sizeof(e), err_e4, 4, true), matches ? "" : "  NOT the prediction");
}

/* The source's program: the three periods count CPU time sampled at each tick while a busy
 * loop runs for the source's 7.12 s. */
static void prof_modes(const struct tick_info *ti)
{
    exp_phase("CPU-time modes, %llu.%02llu s busy loop",
              (unsigned long long)(PROF_WINDOW_NS / NSEC_PER_SEC),
              (unsigned long long)(PROF_WINDOW_NS % NSEC_PER_SEC / 10000000ull));
    unsigned long flags = irq_save();
    prof_tick_ns = ti->period_ns;
    prof_cpu_ticks = 0;
    prof_in_loop = prof_stop = false;
    for (unsigned i = 0; i < N_TIMERS; i++) {
        struct prof *p = &profs[i];
        memset(p, 0, sizeof(*p));
        p->period_ns = periods_us[i] * 1000ull;
        p->incr_ticks = (p->period_ns + prof_tick_ns - 1) / prof_tick_ns;
        p->expires_ticks = p->incr_ticks;
        p->next_ns = p->period_ns;
    }
    wheel_timer_init(&prof_sampler, on_prof_tick, 0);
    timers_wheel_add(&prof_sampler, 1, WHEEL_EXACT);
    uint64_t lost0 = ti->lost - ti->late;
    uint64_t t0 = time_ns();
    prof_in_loop = true;
    busy_loop(PROF_WINDOW_NS);
    prof_in_loop = false;
    uint64_t window = time_ns() - t0;
    prof_stop = true;
    timers_wheel_del(&prof_sampler);
    uint64_t lost = ti->lost - ti->late - lost0;
    irq_restore(flags);
    for (unsigned i = 0; i < N_TIMERS; i++)
        prof_report("prof_tick", &profs[i], ti->dev->name, window, lost);
    for (unsigned i = 0; i < N_TIMERS; i++)
        prof_report("prof_ns", &profs[i], ti->dev->name, window, lost);
}

static void ns_mode(struct hrtimer_base *base, uint64_t run_ns, const struct tick_info *ti);

static void run(const struct exp_env *env)
{
    uint64_t run_ns = exp_size(2000, 20000, 60000) * 1000000ull;
    /* The source's setup: the tick on the PIT. */
    struct clockevent *pit = ce_devices_pit();
    struct clockevent *want = pit && pit->usable && (pit->features & CE_PERIODIC) ? pit : 0;
    if (!exp_tick_set(1000000ull, want))
        return;
    const struct tick_info *ti = timers_tick_info();
    if (!want)
        kprintf("  (no usable PIT: the tick stays on %s)\n", ti->dev->name);
    kprintf("\nitimer-error: periodic timers on a %s tick at HZ=1000 (period %llu ns); %llu s "
            "per mode\n", ti->dev->name, (unsigned long long)ti->period_ns,
            (unsigned long long)(run_ns / NSEC_PER_SEC));

    /* tick mode: periods rounded up to whole ticks, re-armed from each expiry's jiffy */
    exp_phase("tick mode, %llu s", (unsigned long long)(run_ns / NSEC_PER_SEC));
    unsigned long flags = irq_save();
    uint64_t j0 = timers_jiffies_sync();
    uint64_t t0 = time_ns();
    for (unsigned i = 0; i < N_TIMERS; i++) {
        struct itimer *it = &its[i];
        memset(it, 0, sizeof(*it));
        it->period_ns = periods_us[i] * 1000ull;
        it->ticks = (it->period_ns + ti->period_ns - 1) / ti->period_ns;
        it->start_ns = it->last_ns = t0;
        it->start_jiffies = it->last_jiffies = j0;
        wheel_timer_init(&it->w, on_wheel, it);
        timers_wheel_add(&it->w, it->ticks, WHEEL_EXACT);
    }
    exp_sleep_until(t0 + run_ns, ti->dev, "itimer tick mode");
    for (unsigned i = 0; i < N_TIMERS; i++) {
        its[i].stop = true;
        timers_wheel_del(&its[i].w);
    }
    irq_restore(flags);
    for (unsigned i = 0; i < N_TIMERS; i++)
        report("tick", &its[i], ti->dev->name, ti->period_ns);

    ns_mode(env->base, run_ns, ti);
    if (exp_budget_left())
        prof_modes(ti);
}

/* ns mode: hrtimers forwarded by exactly their period */
static void ns_mode(struct hrtimer_base *base, uint64_t run_ns, const struct tick_info *ti)
{
    exp_phase("ns mode, %llu s", (unsigned long long)(run_ns / NSEC_PER_SEC));
    if (!base) {
        for (unsigned i = 0; i < N_TIMERS; i++) {
            struct rec r;
            exp_skip_begin(&r, "no hrtimer device (a one-shot device apart from the tick's)");
            json_str(&r.j, "mode", "ns");
            json_u64(&r.j, "period_us", periods_us[i]);
            rec_emit(&r);
        }
        return;
    }
    unsigned long flags = irq_save();
    uint64_t t0 = time_ns();
    for (unsigned i = 0; i < N_TIMERS; i++) {
        struct itimer *it = &its[i];
        memset(it, 0, sizeof(*it));
        it->period_ns = periods_us[i] * 1000ull;
        it->start_ns = it->last_ns = t0;
        it->h.fn = on_hrtimer;
        hrtimer_start(base, &it->h, t0 + it->period_ns, HRTIMER_MODE_ABS);
    }
    exp_sleep_until(t0 + run_ns, base->dev, "itimer ns mode");
    for (unsigned i = 0; i < N_TIMERS; i++) {
        its[i].stop = true;
        hrtimer_cancel(base, &its[i].h);
    }
    irq_restore(flags);
    for (unsigned i = 0; i < N_TIMERS; i++)
        report("ns", &its[i], base->dev->name, ti->period_ns);
}

const struct experiment exp_itimer_error = {
    .name = "itimer-error",
    .summary = "periodic timers rounded to whole PIT ticks against ns-accurate hrtimers, and "
               "the same counted on CPU time sampled at each tick (ITIMER_PROF)",
    .rows = "mode period_us",
    .run = run,
    .budget_s = { 15, 60, 600 },
};
