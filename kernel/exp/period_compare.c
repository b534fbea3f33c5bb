/* kernel/exp/period_compare.c - `period-compare`: a 1 s periodic hrtimer (forwarded by its
 * period from its own expiry) beside a 1 s wheel timer re-armed in its callback with
 * jiffies + HZ, the classic way. Per period: the interval between callbacks by time_ns() and
 * its error against 1 s. The published Linux figures: hrtimer errors within about +-1 ms,
 * the jiffies timer +24 ms per period at HZ=250. Here the jiffies timer's error is the tick
 * period's rounding times HZ (the PIT at HZ=250 makes 4000.25 us: +62.5 us per second) plus
 * nothing else: the wheel runs a timer on its exact jiffy. */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "kernel/config.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/timers/clocks.h"
#include "ticklab/clocksource.h"
#include "kernel/timers/halt.h"
#include "kernel/timers/timers.h"
#include "ticklab/hrtimer.h"
#include "ticklab/tick.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"

#define PERIOD_NS   1000000000ull
#define MAX_PERIODS 32u

static struct {
    uint64_t stamp[MAX_PERIODS + 1];
    volatile unsigned n;
    unsigned want;
} hr, jf;
static struct hrtimer hrt;
static struct wheel_timer wt;

static enum hrtimer_restart on_hrtimer(struct hrtimer *t)
{
    uint64_t now = time_ns();
    if (hr.n <= hr.want)
        hr.stamp[hr.n++] = now;
    if (hr.n > hr.want)
        return HRTIMER_NORESTART;
    hrtimer_forward(t, now, PERIOD_NS);
    return HRTIMER_RESTART;
}

static void on_wheel(struct wheel_timer *t, void *ctx)
{
    (void)ctx;
    if (jf.n <= jf.want)
        jf.stamp[jf.n++] = time_ns();
    if (jf.n <= jf.want)
        timer_add(&kernel_wheel, t, jiffies + tick_info()->hz);
}

static void report(const char *timer, uint64_t *stamp, unsigned n)
{
    int64_t err[MAX_PERIODS];
    unsigned periods = n ? n - 1 : 0;
    for (unsigned i = 0; i < periods; i++)
        err[i] = (int64_t)(stamp[i + 1] - stamp[i]) - (int64_t)PERIOD_NS;
    struct rec r;
    rec_begin(&r, "result");
    json_str(&r.j, "exp", "period-compare");
    json_str(&r.j, "timer", timer);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "samples", periods);
    json_u64(&r.j, "period_ns", PERIOD_NS);
    json_arr_open(&r.j, "err_ns");
    for (unsigned i = 0; i < periods; i++)
        json_elem_i64(&r.j, err[i]);
    json_arr_close(&r.j);
    struct stats st;
    stats_i64(err, periods, &st);
    json_i64(&r.j, "err_mean_ns", st.mean);
    json_u64(&r.j, "err_stddev_ns", st.stddev);
    json_i64(&r.j, "err_min_ns", st.min);
    json_i64(&r.j, "err_max_ns", st.max);
    rec_emit(&r);
    kprintf("  %-8s %2u periods of 1 s: error mean %lld ns, stddev %llu, min %lld, max %lld\n",
            timer, periods, (long long)st.mean, (unsigned long long)st.stddev, (long long)st.min,
            (long long)st.max);
}

static void run(void)
{
    struct hrtimer_base *base = timers_base();
    if (!base || !tick_running()) {
        rec_error("period-compare", "needs the tick and an hrtimer device");
        return;
    }
    unsigned want = cfg.profile == PROFILE_QUICK ? 4 : MAX_PERIODS;
    kprintf("\nperiod-compare: a 1 s hrtimer and a 1 s jiffies timer (HZ=%llu, tick on %s)\n",
            (unsigned long long)tick_info()->hz, tick_info()->dev->name);
    unsigned long flags = irq_save();
    hr.n = jf.n = 0;
    hr.want = jf.want = want;
    uint64_t t0 = time_ns();
    hr.stamp[hr.n++] = t0;
    jf.stamp[jf.n++] = t0;
    memset(&hrt, 0, sizeof(hrt));
    hrt.fn = on_hrtimer;
    hrtimer_start(base, &hrt, t0 + PERIOD_NS, HRTIMER_MODE_ABS);
    timer_init(&wt, on_wheel, 0);
    timer_add(&kernel_wheel, &wt, jiffies + tick_info()->hz);

    /* HLT until both have their periods; the TSC bounds the wait (2x + 5 s). */
    uint64_t c0 = rdtsc(), bound = tsc_ns_to_cyc((want * 2 + 5) * PERIOD_NS);
    halt_backup_start(base->dev);
    while ((hr.n <= want || jf.n <= want) && rdtsc() - c0 < bound)
        halt_once();
    halt_backup_stop();
    hrtimer_cancel(base, &hrt);
    timer_del(&kernel_wheel, &wt);
    irq_restore(flags);
    report("hrtimer", hr.stamp, hr.n);
    report("jiffies", jf.stamp, jf.n);
    if (hr.n <= want || jf.n <= want)
        rec_error("period-compare", "a timer stopped coming before its periods were done");
}

const struct experiment exp_period_compare = {
    .name = "period-compare",
    .summary = "a 1 s periodic hrtimer and a 1 s jiffies timer, error per period",
    .run = run,
};
