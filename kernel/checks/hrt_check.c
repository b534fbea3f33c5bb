/* kernel/checks/hrt_check.c - see hrt_check.h. */
#include "kernel/checks/hrt_check.h"

#include "ticklab/io.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/clockevent.h"
#include "kernel/timers/clocks.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "kernel/timers/idle.h"
#include "kernel/timers/timers.h"
#include "ticklab/hrtimer.h"
#include "ticklab/tick.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"

#define SPAN_NS 100000000ull          /* deadlines within 100 ms ... */
#define SETUP_NS 1000000ull           /* ... after 1 ms: starting 1000 timers with interrupts
                                         off takes ~0.3 ms under icount; a deadline inside
                                         that window would measure the setup, not the timer */

static struct hrtimer timers[HRT_CHECK_MAX];
static uint64_t fired_ns[HRT_CHECK_MAX];
static uint64_t order[HRT_CHECK_MAX];
static int64_t late[HRT_CHECK_MAX];
static volatile unsigned n_fired;

static enum hrtimer_restart on_timer(struct hrtimer *t)
{
    unsigned i = (unsigned)(t - timers);
    fired_ns[i] = time_ns();
    order[n_fired++] = i;
    return HRTIMER_NORESTART;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static unsigned out_of_order(unsigned n)
{
    unsigned bad = 0;
    for (unsigned k = 1; k < n; k++)
        bad += timers[order[k]].expires_ns < timers[order[k - 1]].expires_ns;
    return bad;
}

static void report(const struct hrtimer_base *base, unsigned n, uint64_t reprograms,
                   struct stats *st, unsigned early)
{
    struct rec r;
    rec_begin(&r, "hrtimer_check");
    json_str(&r.j, "device", base->dev->name);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "timers", n);
    json_u64(&r.j, "fired", n_fired);
    json_u64(&r.j, "out_of_order", out_of_order(n_fired));
    json_u64(&r.j, "early", early);
    json_stats(&r.j, "late_%s_ns", "min p50 p99 max", st);
    json_u64(&r.j, "reprograms", reprograms);
    json_u64(&r.j, "hangs", base->stats.hangs);
    json_u64(&r.j, "storms", base->stats.storm_detected);
    json_u64(&r.j, "proven", base->stats.proven);
    rec_emit(&r);
    kprintf("  hrtimers    %u/%u fired on %s, %u early, late min %lld p50 %lld p99 %lld max "
            "%lld ns, %llu reprograms\n", n_fired, n, base->dev->name, early, (long long)st->min,
            (long long)st->median, (long long)st->p99, (long long)st->max,
            (unsigned long long)reprograms);
}

void hrt_check_run(uint64_t count)
{
    unsigned n = count > HRT_CHECK_MAX ? HRT_CHECK_MAX : (unsigned)count;
    struct hrtimer_base *base = timers_base();
    if (!n || !base)
        return;
    uint64_t seed = 0x68727469636bull;       /* "hrtick" */
    unsigned long flags = irq_save();
    n_fired = 0;
    uint64_t reprograms0 = base->stats.reprograms, t0 = time_ns();
    for (unsigned i = 0; i < n; i++) {
        memset(&timers[i], 0, sizeof(timers[i]));
        timers[i].fn = on_timer;
        hrtimer_start(base, &timers[i], t0 + SETUP_NS + lcg(&seed) % SPAN_NS, HRTIMER_MODE_ABS);
    }
    uint64_t c0 = rdtsc(), bound = tsc_ns_to_cyc(SPAN_NS * 4 + 100000000ull);
    halt_backup_start(base->dev);
    while (n_fired < n && rdtsc() - c0 < bound)
        halt_once();
    halt_backup_stop();
    for (unsigned i = 0; i < n; i++)
        hrtimer_cancel(base, &timers[i]);
    irq_restore(flags);

    unsigned early = 0;
    struct stats st = { 0 };
    for (unsigned k = 0; k < n_fired; k++) {
        unsigned i = (unsigned)order[k];
        late[k] = (int64_t)(fired_ns[i] - timers[i].expires_ns);
        early += late[k] < 0;
    }
    stats_i64(late, n_fired, &st);
    report(base, n, base->stats.reprograms - reprograms0, &st, early);
    if (n_fired != n)
        rec_error("hrtimer_check", "not every hrtimer fired within the bound");
}
