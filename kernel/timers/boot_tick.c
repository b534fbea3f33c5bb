/* kernel/timers/boot_tick.c - the boot CPU's tick and the wheel on it: the only code that
 * holds them. Everybody else (the experiments, the checks, the summary) reaches them through
 * the calls in timers.h. */
#include "kernel/timers/timers.h"

#include "kernel/report/record.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/idle.h"
#include "kernel/timers/tick_report.h"
#include "ticklab/clockevent.h"
#include "ticklab/fmt.h"
#include "ticklab/io.h"
#include "ticklab/tick.h"
#include "ticklab/timekeeping.h"

static struct wheel wheel;
static struct tick tick;

/* A new wheel on the running tick's jiffies (after the tick changed rate or device). */
static void wheel_restart(void)
{
    wheel_init(&wheel, tick.jiffies);
    tick.wheel = &wheel;
}

uint64_t timers_wheel_add(struct wheel_timer *t, uint64_t ticks, enum wheel_rounding how)
{
    unsigned long flags = irq_save();
    tick_sync(&tick);
    uint64_t j = tick.jiffies;
    uint64_t expires = how == WHEEL_LINUX ? wheel_linux_expiry(j, j + ticks) : j + ticks;
    wheel_add(&wheel, t, expires);
    irq_restore(flags);
    return expires;
}

bool timers_wheel_del(struct wheel_timer *t)
{
    return wheel_del(&wheel, t);
}

bool timers_wheel_next(uint64_t *expires)
{
    return wheel_next_expiry(&wheel, expires);
}

bool timers_wheel_pending(void)
{
    return wheel_pending(&wheel) != 0;
}

static void tick_error(const char *requested, const char *reason, const char *action)
{
    struct rec r;
    rec_begin(&r, "error");
    json_str(&r.j, "what", "clockevent");
    json_str(&r.j, "requested", requested);
    json_str(&r.j, "reason", reason);
    json_str(&r.j, "action", action);
    rec_emit(&r);
}

struct clockevent *timers_device_named(const char *name, const char *what)
{
    if (!name || !name[0])
        return 0;
    struct clockevent *ce = clockevent_find(name, 0);
    if (!ce) {
        char names[96], why[192];
        clockevent_names(0, names, sizeof(names));
        fmt_snprintf(why, sizeof(why), "%s=%s: no such device here (%s%s)", what, name,
                     names[0] ? "registered: " : "none registered", names);
        tick_error(name, why, "the best usable device is used");
    }
    return ce;
}

int timers_tick_start(uint64_t *hz, const char *device, bool oneshot)
{
    char why[128] = "";
    struct clockevent *prefer = timers_device_named(device, "clockevent");
    tick.cpu = 0;
    halt_set_tick(&tick);
    int rc = tick_start(&tick, *hz, prefer, oneshot, why, sizeof(why));
    if (prefer && why[0])
        tick_error(prefer->name, why, rc ? "no tick" : "best usable device used");
    if (rc && *hz != TICK_DEFAULT_HZ) {
        /* hz outside what any device makes: say so, tick at the default. */
        struct rec r;
        rec_begin(&r, "error");
        json_str(&r.j, "what", "hz");
        json_u64(&r.j, "requested", *hz);
        json_i64(&r.j, "err", rc);
        json_str(&r.j, "action", "default " TICK_DEFAULT_HZ_TEXT " used");
        rec_emit(&r);
        *hz = TICK_DEFAULT_HZ;
        rc = tick_start(&tick, *hz, prefer, oneshot, why, sizeof(why));
    }
    if (rc) {
        rec_error("tick", "no clock event device can drive the tick");
        return rc;
    }
    wheel_restart();
    tick_report_start(&tick);
    return 0;
}

/* ---- what the others read of the tick ---------------------------------------------------- */

const struct tick_info *timers_tick_info(void)
{
    return tick_info(&tick);
}

bool timers_tick_running(void)
{
    return tick_running(&tick);
}

uint64_t timers_jiffies(void)
{
    return tick.jiffies;
}

uint64_t timers_jiffies_sync(void)
{
    tick_sync(&tick);
    return tick.jiffies;
}

uint64_t timers_jiffy_ns(uint64_t j)
{
    return tick_jiffies_ns(&tick, j);
}

uint64_t timers_tick_period_ps(void)
{
    return tick_measured_period_ps(&tick);
}

void timers_tick_nohz_stop(uint64_t until_ns)
{
    tick_nohz_stop(&tick, until_ns);
}

void timers_tick_nohz_restart(void)
{
    tick_nohz_restart(&tick);
}

bool timers_tick_nohz_stopped(void)
{
    return tick_nohz_stopped(&tick);
}

/* ---- changing it -------------------------------------------------------------------------- */

void timers_tick_stop(void)
{
    tick_stop(&tick);
}

int timers_tick_restart(uint64_t period_ns, struct clockevent *device, bool oneshot, char *why,
                        size_t why_len)
{
    tick_stop(&tick);
    int rc = tick_start_ns(&tick, period_ns, device, oneshot, why, why_len);
    if (rc == 0)
        wheel_restart();
    return rc;
}

void timers_tick_finish(void)
{
    tick_stop(&tick);
    if (tick_info(&tick)->dev)
        tick_report_stats(&tick);
}

/* Where the grid point's work may end past its target: the wait loop's few instructions,
 * the fold (timekeeping_accumulate: ~150, a compare or two more or less by the run's
 * history), or an interrupt taken just before the end. Beyond this the pad is not made
 * (that window then starts a little late, and exact mode may differ from run to run). */
#define ALIGN_PAD_NS 255

/* The tick is stopped (with interrupts on, so that nothing of it stays pending), the TSC
 * waited for up to its next grid point, and the tick started again there, on its device
 * and rate: every window starts on the same phase of the tick, of the HPET and of the RTC
 * (WINDOW_GRID_NS says which clocks are whole in the grid). Under QEMU -icount (shift=0)
 * the few ns by which the wait overshoots are padded to a constant with NOPs. With wheel
 * timers pending the tick keeps running (restarting it would move their jiffies). */
void timers_align_to_grid(uint64_t grid_ns)
{
    bool restart = tick_running(&tick) && !wheel_pending(&wheel);
    const struct tick_info *ti = tick_info(&tick);
    struct clockevent *dev = ti->dev;
    uint64_t period_ns = ti->period_ns;
    bool oneshot = !ti->periodic;
    unsigned long flags = irq_save();
    if (restart)
        tick_stop(&tick);
    irq_enable();
    /* The tick folds the clocksource into time_ns() once so many cycles have passed since
     * the last fold (timekeeping_tick_ns), and that fold costs the tick it falls in some
     * instructions: so the last fold must stand at a known place too. One here (it leaves a
     * short delta for the next), and one at the grid point, inside the padded stretch. */
    timekeeping_accumulate();
    uint64_t grid = tsc_ns_to_cyc(grid_ns);
    uint64_t target = (rdtsc() / grid + 1) * grid;
    /* NOPs, not PAUSE: under the emulator a PAUSE leaves the CPU loop, and few TSC reads
     * (each ends a translation block); the last stretch reads it on every pass. */
    while ((int64_t)(rdtsc() - (target - 2 * ALIGN_PAD_NS)) < 0)
        cpu_nop_block();
    while ((int64_t)(rdtsc() - target) < 0)
        ;
    irq_disable();
    timekeeping_accumulate();
    uint64_t late = rdtsc() - target;
    if (clock_facts.virtual_time && late < ALIGN_PAD_NS)
        cpu_nops((unsigned)(ALIGN_PAD_NS - late));
    if (restart) {
        char why[128];
        if (tick_start_ns(&tick, period_ns, dev, oneshot, why, sizeof(why)) != 0)
            rec_error("tick", "the tick could not be restarted at a window's start");
        wheel_restart();
    }
    irq_restore(flags);
}
