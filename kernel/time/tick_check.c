/* kernel/time/tick_check.c - see tick_check.h. */
#include "kernel/time/tick_check.h"

#include "drivers/io.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/time/clocks.h"
#include "kernel/time/clocksource.h"
#include "kernel/time/halt.h"
#include "kernel/time/tick.h"

struct wheel kernel_wheel;

static struct {
    struct wheel_timer timer;
    uint64_t added_ns, expires, fired_jiffies, fired_ns;
    volatile bool fired;
} one_second;

static void wheel_hook(uint64_t now)
{
    wheel_advance(&kernel_wheel, now);
}

void kernel_wheel_start(void)
{
    wheel_init(&kernel_wheel, jiffies);
    tick_set_hook(wheel_hook);
}

static void on_one_second(struct wheel_timer *t, void *ctx)
{
    (void)t, (void)ctx;
    one_second.fired_jiffies = jiffies;
    one_second.fired_ns = time_ns();
    one_second.fired = true;
}

void tick_check_run(uint64_t run_ms)
{
    const struct tick_info *ti = tick_info();
    if (!run_ms || !tick_running())
        return;
    unsigned long flags = irq_save();
    uint64_t ticks0 = ti->ticks, lost0 = ti->lost, j0 = jiffies, t0 = time_ns();
    one_second.added_ns = t0;
    one_second.expires = j0 + ti->hz;
    timer_init(&one_second.timer, on_one_second, 0);
    timer_add(&kernel_wheel, &one_second.timer, one_second.expires);

    /* The tick wakes the HLT every period, the backup one-shot at the latest every 50 ms;
     * the TSC bounds the whole wait. */
    uint64_t bound_cyc = tsc_ns_to_cyc(run_ms * 1000000ull) * 2 + tsc_ns_to_cyc(100000000ull);
    uint64_t c0 = rdtsc();
    halt_backup_start(ti->dev->name);
    uint64_t wakes0 = halt_backup_wakes();
    while (time_ns() - t0 < run_ms * 1000000ull && rdtsc() - c0 < bound_cyc)
        halt_once();
    halt_backup_stop();
    uint64_t elapsed = time_ns() - t0;
    if (!one_second.fired)
        timer_del(&kernel_wheel, &one_second.timer);
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
    json_u64(&r.j, "jiffies_start", j0);
    json_u64(&r.j, "jiffies_end", jiffies);
    json_bool(&r.j, "crossed_32bit_wrap", (j0 >> 32) != (jiffies >> 32));
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
