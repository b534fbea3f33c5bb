/* kernel/checks/tick_check.c - see tick_check.h. */
#include "kernel/checks/tick_check.h"

#include "ticklab/io.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/timers/clocks.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "kernel/timers/idle.h"
#include "ticklab/tick.h"
#include "kernel/timers/timers.h"

static struct {
    struct wheel_timer timer;
    uint64_t added_ns, expires, fired_jiffies, fired_ns;
    volatile bool fired;
} one_second;

static void on_one_second(struct wheel_timer *t, void *ctx)
{
    (void)t, (void)ctx;
    one_second.fired_jiffies = timers_jiffies();
    one_second.fired_ns = time_ns();
    one_second.fired = true;
}

void tick_check_run(uint64_t run_ms)
{
    const struct tick_info *ti = timers_tick_info();
    if (!run_ms || !timers_tick_running())
        return;
    unsigned long flags = irq_save();
    uint64_t j0 = timers_jiffies_sync();
    uint64_t ticks0 = ti->ticks, lost0 = ti->lost, late0 = ti->late, early0 = ti->early,
             t0 = time_ns();
    one_second.added_ns = t0;
    wheel_timer_init(&one_second.timer, on_one_second, 0);
    one_second.expires = timers_wheel_add(&one_second.timer, ti->hz, WHEEL_EXACT);

    /* The tick wakes the HLT every period, the backup one-shot at the latest every 50 ms;
     * the TSC bounds the whole wait. */
    uint64_t bound_cyc = tsc_ns_to_cyc(run_ms * 1000000ull) * 2 + tsc_ns_to_cyc(100000000ull);
    uint64_t c0 = rdtsc();
    halt_backup_start(ti->dev);
    uint64_t wakes0 = halt_backup_wakes();
    while (time_ns() - t0 < run_ms * 1000000ull && rdtsc() - c0 < bound_cyc)
        halt_once();
    halt_backup_stop();
    uint64_t elapsed = time_ns() - t0;
    if (!one_second.fired)
        timers_wheel_del(&one_second.timer);
    irq_restore(flags);

    uint64_t ticks = ti->ticks - ticks0;
    struct rec r;
    rec_begin(&r, "tick_check");
    json_str(&r.j, "device", ti->dev->name);
    json_u64(&r.j, "hz", ti->hz);
    json_u64(&r.j, "period_ns", ti->period_ns);
    json_u64(&r.j, "run_ns", elapsed);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "ticks", ticks);
    json_u64(&r.j, "expected_ticks", elapsed / ti->period_ns);
    json_u64(&r.j, "lost", ti->lost - lost0);
    json_u64(&r.j, "late", ti->late - late0);
    json_u64(&r.j, "early", ti->early - early0);
    json_u64(&r.j, "jiffies_start", j0);
    json_u64(&r.j, "jiffies_end", timers_jiffies());
    json_bool(&r.j, "crossed_32bit_wrap", (j0 >> 32) != (timers_jiffies() >> 32));
    json_bool(&r.j, "wheel_1s_fired", one_second.fired);
    json_u64(&r.j, "backup_wakes", halt_backup_wakes() - wakes0);
    if (one_second.fired) {
        json_i64(&r.j, "wheel_1s_late_jiffies",
                 (int64_t)(one_second.fired_jiffies - one_second.expires));
        json_i64(&r.j, "wheel_1s_interval_ns",
                 (int64_t)(one_second.fired_ns - one_second.added_ns));
        json_i64(&r.j, "wheel_1s_error_ns",
                 (int64_t)(one_second.fired_ns - one_second.added_ns) - 1000000000ll);
    }
    rec_emit(&r);
    kprintf("  tick check  %llu ticks in %llu ns (expected %llu), %llu lost; 1 s wheel timer %s"
            " %lld ns late\n", (unsigned long long)ticks, (unsigned long long)elapsed,
            (unsigned long long)(elapsed / ti->period_ns), (unsigned long long)(ti->lost - lost0),
            one_second.fired ? "fired" : "did NOT fire",
            one_second.fired ? (long long)(one_second.fired_ns - one_second.added_ns) -
                                   1000000000ll : 0);
}

/* ---- tickless idle ---------------------------------------------------------------------- */

static struct {
    struct wheel_timer timer;
    uint64_t expires, fired_jiffies, fired_ns;
    volatile bool fired;
} half_way;

static void on_half_way(struct wheel_timer *t, void *ctx)
{
    (void)t, (void)ctx;
    half_way.fired_jiffies = timers_jiffies();
    half_way.fired_ns = time_ns();
    half_way.fired = true;
}

/* When the tick may sleep until: the time of the next wheel timer's jiffy on the tick's
 * grid, or the end of the idle stretch. */
static uint64_t next_wake_ns(uint64_t end_ns)
{
    uint64_t e;
    if (!timers_wheel_next(&e))
        return end_ns;
    if ((int64_t)(e - timers_jiffies()) <= 0)
        return 0;
    uint64_t at = timers_jiffy_ns(e);
    return at < end_ns ? at : end_ns;
}

void idle_check_run(uint64_t run_ms, bool nohz)
{
    const struct tick_info *ti = timers_tick_info();
    if (!run_ms || !timers_tick_running())
        return;
    unsigned long flags = irq_save();
    uint64_t j0 = timers_jiffies_sync();
    uint64_t t0 = time_ns(), end = t0 + run_ms * 1000000ull, ticks0 = ti->ticks;
    uint64_t stops0 = ti->nohz_stops, skipped0 = ti->idle_skipped;
    uint64_t half_ns = run_ms * 500000ull;
    half_way.fired = false;
    wheel_timer_init(&half_way.timer, on_half_way, 0);
    half_way.expires = timers_wheel_add(&half_way.timer,
                                        (half_ns + ti->period_ns - 1) / ti->period_ns,
                                        WHEEL_EXACT);

    uint64_t c0 = rdtsc(), bound_cyc = tsc_ns_to_cyc(run_ms * 2000000ull + 100000000ull);
    halt_backup_start(ti->dev);
    uint64_t wakes0 = halt_backup_wakes();
    while (time_ns() < end && rdtsc() - c0 < bound_cyc) {
        if (nohz && !timers_tick_nohz_stopped()) {
            uint64_t until = next_wake_ns(end);
            if (until)
                timers_tick_nohz_stop(until);
        }
        halt_once();
    }
    timers_tick_nohz_restart();
    halt_backup_stop();
    uint64_t elapsed = time_ns() - t0;
    if (!half_way.fired)
        timers_wheel_del(&half_way.timer);
    irq_restore(flags);

    struct rec r;
    rec_begin(&r, "idle_check");
    json_bool(&r.j, "nohz", nohz);
    json_str(&r.j, "device", ti->dev->name);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "run_ns", elapsed);
    json_u64(&r.j, "tick_interrupts", ti->ticks - ticks0);
    json_u64(&r.j, "jiffies_advanced", timers_jiffies() - j0);
    json_u64(&r.j, "expected_jiffies", elapsed / ti->period_ns);
    json_u64(&r.j, "nohz_stops", ti->nohz_stops - stops0);
    json_u64(&r.j, "idle_skipped", ti->idle_skipped - skipped0);
    json_u64(&r.j, "backup_wakes", halt_backup_wakes() - wakes0);
    json_bool(&r.j, "wheel_timer_fired", half_way.fired);
    if (half_way.fired) {
        json_i64(&r.j, "wheel_timer_late_jiffies",
                 (int64_t)(half_way.fired_jiffies - half_way.expires));
        json_i64(&r.j, "wheel_timer_error_ns", (int64_t)(half_way.fired_ns - t0) -
                                                   (int64_t)((half_way.expires - j0) *
                                                             ti->period_ns));
    }
    rec_emit(&r);
    kprintf("  idle check  nohz=%s: %llu tick interrupts in %llu ns idle, jiffies +%llu; "
            "wheel timer %s\n", nohz ? "on" : "off", (unsigned long long)(ti->ticks - ticks0),
            (unsigned long long)elapsed, (unsigned long long)(timers_jiffies() - j0),
            half_way.fired ? "fired" : "did NOT fire");
}
