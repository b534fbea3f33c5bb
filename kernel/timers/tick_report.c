/* kernel/timers/tick_report.c - the tick's records (kernel glue: the library's tick.c writes
 * no records). See tick_report.h. */
#include "kernel/timers/tick_report.h"

#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/tick.h"

void tick_report_start(void)
{
    const struct tick_info *t = tick_info();
    /* The real rate, with three decimals: 1e12 / period_ns milli-Hz. */
    uint64_t mhz = t->period_ns ? (1000000000000ull + t->period_ns / 2) / t->period_ns : 0;
    struct rec r;
    rec_begin(&r, "tick");
    json_str(&r.j, "device", t->dev ? t->dev->name : 0);
    json_str(&r.j, "mode", t->periodic ? "periodic" : "oneshot_rearm");
    json_u64(&r.j, "hz_requested", t->hz);
    json_u64(&r.j, "period_ns", t->period_ns);
    json_fixed(&r.j, "hz_actual", (int64_t)mhz, 3);
    json_u64(&r.j, "jiffies_start", t->jiffies_start);
    rec_emit(&r);
    kprintf("  tick        %s %s at HZ=%llu: period %llu ns = %llu.%03llu Hz as the hardware "
            "makes it\n", t->dev ? t->dev->name : "-", t->periodic ? "periodic" : "one-shot re-armed",
            (unsigned long long)t->hz, (unsigned long long)t->period_ns,
            (unsigned long long)(mhz / 1000), (unsigned long long)(mhz % 1000));
}

void tick_report_stats(void)
{
    const struct tick_info *t = tick_info();
    struct rec r;
    rec_begin(&r, "tick_stats");
    json_str(&r.j, "device", t->dev ? t->dev->name : 0);
    json_u64(&r.j, "ticks", t->ticks);
    json_u64(&r.j, "lost", t->lost);
    json_u64(&r.j, "early", t->early);
    json_u64(&r.j, "jiffies_start", t->jiffies_start);
    json_u64(&r.j, "jiffies_end", jiffies);
    json_bool(&r.j, "crossed_32bit_wrap", (t->jiffies_start >> 32) != (jiffies >> 32));
    json_u64(&r.j, "max_gap_ns", t->max_gap_ns);
    json_u64(&r.j, "rearm_retries", t->rearm_retries);
    json_u64(&r.j, "nohz_stops", t->nohz_stops);
    json_u64(&r.j, "idle_skipped", t->idle_skipped);
    rec_emit(&r);
}
