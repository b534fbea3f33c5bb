/* kernel/time/tick_check.c - see tick_check.h. */
#include "kernel/time/tick_check.h"

#include "drivers/io.h"
#include "drivers/lapic.h"
#include "drivers/lapic_timer.h"
#include "drivers/pit8254.h"
#include "kernel/intr/intr.h"
#include "lib/kstring.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/time/clocks.h"
#include "kernel/time/clocksource.h"
#include "kernel/time/tick.h"

struct wheel kernel_wheel;

static struct {
    struct wheel_timer timer;
    uint64_t added_ns, expires, fired_jiffies, fired_ns;
    volatile bool fired;
} one_second;

/* Every HLT here has a second wake-up on a device other than the tick's, so that a tick
 * that stops (a device that dies, an emulator whose RTC runs on another clock) ends in a
 * report, not a hang: the LAPIC timer one-shot, or the PIT's when the LAPIC is the tick. */
#define BACKUP_WAKE_NS 50000000ull
static struct intr_route backup_route;
static bool backup_on_pit;
static volatile uint64_t backup_wakes;

static void backup_irq(struct trap_frame *tf, void *ctx)
{
    (void)tf, (void)ctx;
    backup_wakes++;
    if (backup_on_pit)
        intr_eoi(&backup_route);
    else
        lapic_eoi();
}

static bool backup_start(const char *tick_device)
{
    backup_on_pit = !k_strcmp(tick_device, "lapic") || !k_strcmp(tick_device, "tsc_deadline");
    if (backup_on_pit)
        return intr_route_isa(0, VEC_ISA_BASE + 0, backup_irq, 0, &backup_route) == 0;
    return clock_facts.lapic_hz && irq_set_handler(VEC_BACKUP_WAKE, backup_irq, 0) == 0;
}

static void backup_arm(void)
{
    if (backup_on_pit) {
        pit_ch0_oneshot(PIT_MAX_COUNT - 1);          /* 54.9 ms */
        intr_unmask(&backup_route);
    } else {
        uint64_t cyc = BACKUP_WAKE_NS * (clock_facts.lapic_hz / 1000000) / 1000;
        lapic_timer_oneshot(VEC_BACKUP_WAKE, cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc, 1);
    }
}

static void backup_stop(void)
{
    if (backup_on_pit) {
        pit_ch0_stop();
        intr_release(&backup_route);
    } else {
        lapic_timer_stop();
        irq_clear_handler(VEC_BACKUP_WAKE);
    }
}

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
    bool backup = backup_start(ti->dev->name);
    backup_wakes = 0;
    while (time_ns() - t0 < run_ms * 1000000ull && rdtsc() - c0 < bound_cyc) {
        if (backup)
            backup_arm();
        irq_enable();
        cpu_halt();
        irq_disable();
    }
    if (backup)
        backup_stop();
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
    json_u64(&r.j, "backup_wakes", backup_wakes);
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
