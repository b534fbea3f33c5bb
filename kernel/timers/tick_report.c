/* kernel/timers/tick_report.c - the tick's records (kernel glue: the library's tick.c writes
 * no records). See tick_report.h. */
#include "kernel/timers/tick_report.h"

#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/timers/clocks.h"
#include "ticklab/io.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/errno.h"
#include "ticklab/tick.h"

/* The measurement starts at the fourth handler run and is known from eight periods after it
 * (tick_measured_period_ps); over MEASURE_PERIODS a clocksource count of 10 ns is 0.1 ns of
 * the period. The wait is bounded by the TSC (200 ms): a slower tick gets fewer periods, one
 * below HZ=60 or a silent device none. */
#define MEASURE_PERIODS 100u
#define MEASURE_MAX_NS  200000000ull

/* Waits, interrupts on (NOP blocks: no HLT, no PAUSE, as the window alignment waits), until
 * the tick's period has been measured by time_ns() over MEASURE_PERIODS periods or the
 * bound has passed; the period then (0: not measured). */
static uint64_t measured_period_ps(const struct tick *tk)
{
    const struct tick_info *t = tick_info(tk);
    uint64_t bound_ns = t->period_ns * (MEASURE_PERIODS + 8);
    if (!t->dev || bound_ns > MEASURE_MAX_NS)
        bound_ns = MEASURE_MAX_NS;
    uint64_t c0 = rdtsc(), bound = tsc_ns_to_cyc(bound_ns);
    unsigned long flags = irq_save();
    irq_enable();
    while (t->measured_periods < MEASURE_PERIODS && rdtsc() - c0 < bound)
        cpu_nop_block();
    irq_disable();
    irq_restore(flags);
    return tick_measured_period_ps(tk);
}

void tick_report_start(const struct tick *tk)
{
    const struct tick_info *t = tick_info(tk);
    uint64_t ps = measured_period_ps(tk);
    /* The real rate, with three decimals: 1e12 / period_ns milli-Hz. */
    uint64_t mhz = t->period_ns ? (1000000000000ull + t->period_ns / 2) / t->period_ns : 0;
    struct rec r;
    rec_begin(&r, "tick");
    json_str(&r.j, "device", t->dev ? t->dev->name : 0);
    json_str(&r.j, "mode", t->periodic ? "periodic" : "oneshot_rearm");
    json_u64(&r.j, "hz_requested", t->hz);
    json_u64(&r.j, "period_ns", t->period_ns);
    /* period_ns and hz_nominal: the device's whole cycles at its frequency as the kit
     * knows it (calibrated or nominal: clockevent.freq_source); the measured rate comes in
     * tick_stats, from the handler runs against time_ns() */
    json_str(&r.j, "period_from", "device_cycles");
    json_fixed(&r.j, "hz_nominal", (int64_t)mhz, 3);
    json_fixed(&r.j, "hz_actual", (int64_t)mhz, 3);
    json_u64(&r.j, "jiffies_start", t->jiffies_start);
    /* what the device really makes, which may differ from its cycles at its frequency:
     * QEMU's periodic LAPIC timer counts initial count + 1 */
    if (ps) {
        json_fixed(&r.j, "period_measured_ns", (int64_t)ps, 3);
        json_fixed(&r.j, "hz_measured", (int64_t)((1000000000000000ull + ps / 2) / ps), 3);
        json_u64(&r.j, "measured_periods", t->measured_periods);
        json_str(&r.j, "measured_by", "time_ns");
    }
    if (t->passed_over) {
        json_str(&r.j, "passed_over", t->passed_over);
        json_i64(&r.j, "passed_over_err", t->passed_over_rc);
    }
    rec_emit(&r);
    kprintf("  tick        %s %s at HZ=%llu: period %llu ns = %llu.%03llu Hz as the hardware "
            "makes it\n", t->dev ? t->dev->name : "-", t->periodic ? "periodic" : "one-shot re-armed",
            (unsigned long long)t->hz, (unsigned long long)t->period_ns,
            (unsigned long long)(mhz / 1000), (unsigned long long)(mhz % 1000));
    if (ps)
        kprintf("              measured by time_ns: %llu.%03llu ns\n",
                (unsigned long long)(ps / 1000), (unsigned long long)(ps % 1000));
    if (t->passed_over)
        kprintf("              not on %s, the best rated: %s (%d)\n", t->passed_over,
                t->passed_over_rc == -EBUSY ? "in use" : "it refused", t->passed_over_rc);
}

void tick_report_stats(const struct tick *tk)
{
    const struct tick_info *t = tick_info(tk);
    struct rec r;
    rec_begin(&r, "tick_stats");
    json_str(&r.j, "device", t->dev ? t->dev->name : 0);
    json_u64(&r.j, "ticks", t->ticks);
    json_u64(&r.j, "ticks_all_starts", t->ticks_all_starts);
    json_u64(&r.j, "period_ns", t->period_ns);
    uint64_t ps = tick_measured_period_ps(tk);
    if (ps) {
        json_fixed(&r.j, "period_measured_ns", (int64_t)ps, 3);
        json_fixed(&r.j, "hz_measured", (int64_t)((1000000000000000ull + ps / 2) / ps), 3);
        json_u64(&r.j, "measured_periods", t->measured_periods);
        json_str(&r.j, "measured_by", "time_ns");
    }
    json_u64(&r.j, "lost", t->lost);
    json_u64(&r.j, "lost_all_starts", t->lost_earlier_starts + t->lost);
    json_u64(&r.j, "late", t->late);
    json_u64(&r.j, "never_came", t->lost - t->late);
    json_u64(&r.j, "early", t->early);
    json_u64(&r.j, "jiffies_start", t->jiffies_start);
    json_u64(&r.j, "jiffies_end", tk->jiffies);
    json_bool(&r.j, "crossed_32bit_wrap", (t->jiffies_start >> 32) != (tk->jiffies >> 32));
    json_u64(&r.j, "max_gap_ns", t->max_gap_ns);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "rearm_retries", t->rearm_retries);
    json_u64(&r.j, "nohz_stops", t->nohz_stops);
    json_u64(&r.j, "idle_skipped", t->idle_skipped);
    json_u64(&r.j, "failures", t->failures);
    json_u64(&r.j, "rescued", t->rescued);
    json_bool(&r.j, "stalled", t->stalled);
    rec_emit(&r);
    if (t->failures)
        rec_error("tick", "the tick's device could not be armed at times: the tick stopped "
                          "until a rescue (tick_stats.failures)");

    struct timekeeping_stats k;
    timekeeping_get_stats(&k);
    rec_begin(&r, "timekeeping");
    json_u64(&r.j, "accumulates", k.accumulates);
    json_u64(&r.j, "late", k.late);
    json_u64(&r.j, "max_delta_cyc", k.max_delta_cyc);
    json_u64(&r.j, "limit_cyc", k.limit_cyc);
    json_u64(&r.j, "busy_skips", k.busy_skips);
    json_u64(&r.j, "switches", k.switches);
    json_u64(&r.j, "behind_reads", k.behind_reads);
    json_u64(&r.j, "wraps_recovered", k.wraps_recovered);
    rec_emit(&r);
    if (k.wraps_recovered)
        kprintf("  time_ns(): %llu whole wrap(s) of %s came between two folds; the TSC counted "
                "them\n", (unsigned long long)k.wraps_recovered,
                clocksource_current() ? clocksource_current()->name : "-");
}
