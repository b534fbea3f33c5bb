/* kernel/exp/itimer_error.c - `itimer-error`: periodic timers of 10000, 9998 and 1000 us on a
 * PIT tick at HZ=1000, which the PIT really makes at 1193 input clocks = 999,847 ns
 * (1000.152 Hz). Two ways:
 *  - `tick`: the old itimer. The period is rounded UP to whole ticks so that it never
 *    fires early (ceil(10,000,000 / 999,847) = 11 ticks), and each expiry re-arms the wheel
 *    timer that many jiffies ahead. The rounding is systematic: 10000 us becomes 10.998 ms
 *    (9.07 % fewer signals than asked), 1000 us becomes 2 ticks (50 % fewer), 9998 us
 *    becomes 10 ticks = 9.998 ms (0.005 % fewer).
 *  - `ns`: an hrtimer forwarded by exactly its period from its previous expiry.
 * The published figures (Linux, before and after the hrtimer rework): -9.3 %, -0.2 % and
 * -50.4 % before; within -0.1 % after.
 *
 * Per timer: `counted` expiries in a window from arming to the last expiry (time_ns), the
 * `expected` number of periods in that window, and `error_pct` = counted/expected - 1. */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "kernel/exp/harness.h"
#include "kernel/report/console.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "kernel/timers/timers.h"
#include "ticklab/hrtimer.h"
#include "ticklab/tick.h"
#include "ticklab/wheel.h"
#include "ticklab/kstring.h"

#define N_TIMERS 3u

static const uint64_t periods_us[N_TIMERS] = { 10000, 9998, 1000 };

struct itimer {
    struct hrtimer h;             /* first member */
    struct wheel_timer w;
    uint64_t period_ns, ticks;    /* ticks: the tick-mode interval in jiffies */
    uint64_t start_ns, last_ns;
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
    if (!it->stop)
        timer_add(&kernel_wheel, &it->w, jiffies + it->ticks);
}

static enum hrtimer_restart on_hrtimer(struct hrtimer *h)
{
    struct itimer *it = (struct itimer *)h;
    uint64_t now = time_ns();
    it->last_ns = now;
    it->counted++;
    if (it->stop)
        return HRTIMER_NORESTART;
    hrtimer_forward(h, now, it->period_ns);
    return HRTIMER_RESTART;
}

static void report(const char *mode, const struct itimer *it, const char *device,
                   uint64_t tick_ns)
{
    uint64_t window = it->last_ns > it->start_ns ? it->last_ns - it->start_ns : 0;
    int64_t asked = (int64_t)it->counted * (int64_t)it->period_ns;
    int64_t err_e4 = window ? (asked - (int64_t)window) * 1000000 / (int64_t)window : 0;
    uint64_t expected_e3 = window * 1000ull / it->period_ns;
    struct rec r;
    exp_result_begin(&r);
    json_str(&r.j, "mode", mode);
    json_str(&r.j, "device", device);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "tick_ns", tick_ns);
    json_u64(&r.j, "period_us", it->period_ns / 1000);
    if (!k_strcmp(mode, "tick"))
        json_u64(&r.j, "interval_ticks", it->ticks);
    json_u64(&r.j, "window_ns", window);
    json_u64(&r.j, "counted", it->counted);
    json_fixed(&r.j, "expected", (int64_t)expected_e3, 3);
    json_fixed(&r.j, "error_pct", err_e4, 4);
    rec_emit(&r);
    kprintf("  %-4s %6llu us  %6u counted  %7llu.%03llu expected  %+lld.%04lld %%\n", mode,
            (unsigned long long)(it->period_ns / 1000), it->counted,
            (unsigned long long)(expected_e3 / 1000), (unsigned long long)(expected_e3 % 1000),
            (long long)(err_e4 / 10000), (long long)((err_e4 < 0 ? -err_e4 : err_e4) % 10000));
}

static void run(void)
{
    uint64_t run_ns = exp_size(2000, 20000, 60000) * 1000000ull;
    struct clockevent *pit = clockevent_find("pit", 0);
    const char *want = pit && pit->usable && (pit->features & CE_PERIODIC) ? "pit" : 0;
    if (!exp_tick_set(1000000ull, want))
        return;
    const struct tick_info *ti = tick_info();
    if (!want)
        kprintf("  (no usable PIT: the tick stays on %s)\n", ti->dev->name);
    kprintf("\nitimer-error: periodic timers on a %s tick at HZ=1000 (period %llu ns); %llu s "
            "per mode\n", ti->dev->name, (unsigned long long)ti->period_ns,
            (unsigned long long)(run_ns / 1000000000ull));

    /* tick mode: periods rounded up to whole ticks, re-armed from each expiry's jiffy */
    unsigned long flags = irq_save();
    uint64_t t0 = time_ns();
    for (unsigned i = 0; i < N_TIMERS; i++) {
        struct itimer *it = &its[i];
        memset(it, 0, sizeof(*it));
        it->period_ns = periods_us[i] * 1000ull;
        it->ticks = (it->period_ns + ti->period_ns - 1) / ti->period_ns;
        it->start_ns = it->last_ns = t0;
        timer_init(&it->w, on_wheel, it);
        timer_add(&kernel_wheel, &it->w, jiffies + it->ticks);
    }
    exp_sleep_until(t0 + run_ns, ti->dev, "itimer tick mode");
    for (unsigned i = 0; i < N_TIMERS; i++) {
        its[i].stop = true;
        timer_del(&kernel_wheel, &its[i].w);
    }
    irq_restore(flags);
    for (unsigned i = 0; i < N_TIMERS; i++)
        report("tick", &its[i], ti->dev->name, ti->period_ns);

    /* ns mode: hrtimers forwarded by exactly their period */
    struct hrtimer_base *base = timers_base();
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
    flags = irq_save();
    t0 = time_ns();
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
    .summary = "periodic timers rounded to whole PIT ticks against ns-accurate hrtimers",
    .run = run,
};
