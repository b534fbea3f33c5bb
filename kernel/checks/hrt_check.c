/* kernel/checks/hrt_check.c - see hrt_check.h. */
#include "kernel/checks/hrt_check.h"

#include "ticklab/io.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/clockevent.h"
#include "kernel/timers/clocks.h"
#include "ticklab/clocksource.h"
#include "kernel/timers/halt.h"
#include "ticklab/hrtimer.h"
#include "ticklab/tick.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"

#define SPAN_NS 100000000ull          /* deadlines within 100 ms ... */
#define SETUP_NS 1000000ull           /* ... after 1 ms: starting 1000 timers with interrupts
                                         off takes ~0.3 ms under icount; a deadline inside
                                         that window would measure the setup, not the timer */

static struct hrtimer_base base;
static struct tq_slot slots[HRT_CHECK_MAX];
static struct hrtimer timers[HRT_CHECK_MAX];
static uint64_t fired_ns[HRT_CHECK_MAX];
static uint64_t order[HRT_CHECK_MAX];
static int64_t late[HRT_CHECK_MAX];
static volatile unsigned n_fired;
static bool ready;

static bool shares_hardware(const char *a, const char *b)
{
    bool la = !k_strcmp(a, "lapic") || !k_strcmp(a, "tsc_deadline");
    bool lb = !k_strcmp(b, "lapic") || !k_strcmp(b, "tsc_deadline");
    return !k_strcmp(a, b) || (la && lb);
}

/* The best one-shot device that the tick does not use. */
static struct clockevent *choose(void)
{
    const struct tick_info *ti = tick_info();
    struct clockevent *best = 0;
    for (struct clockevent *ce = clockevent_list(); ce; ce = ce->next) {
        if (!ce->usable || !(ce->features & CE_ONESHOT))
            continue;
        if (tick_running() && shares_hardware(ce->name, ti->dev->name))
            continue;
        if (!best || ce->rating > best->rating)
            best = ce;
    }
    return best;
}

struct hrtimer_base *hrtimers_base(void)
{
    return ready ? &base : 0;
}

void hrtimers_init(void)
{
    struct clockevent *dev = choose();
    struct rec r;
    rec_begin(&r, "hrtimer_base");
    if (dev && hrtimer_base_init(&base, dev, time_ns, slots, HRT_CHECK_MAX) == 0) {
        ready = true;
        json_str(&r.j, "device", dev->name);
        json_str(&r.j, "queue", "heap");
        json_u64(&r.j, "capacity", HRT_CHECK_MAX);
        kprintf("  hrtimers    on %s (one-shot, reprogrammed when the earliest deadline "
                "changes)\n", dev->name);
    } else {
        json_str(&r.j, "device", 0);
        json_str(&r.j, "reason", "no one-shot device apart from the tick's");
        kprintf("  hrtimers    none: no one-shot device apart from the tick's\n");
    }
    rec_emit(&r);
}

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

static void report(unsigned n, uint64_t reprograms, struct stats *st, unsigned early)
{
    struct rec r;
    rec_begin(&r, "hrtimer_check");
    json_str(&r.j, "device", base.dev->name);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "timers", n);
    json_u64(&r.j, "fired", n_fired);
    json_u64(&r.j, "out_of_order", out_of_order(n_fired));
    json_u64(&r.j, "early", early);
    json_i64(&r.j, "late_min_ns", st->min);
    json_i64(&r.j, "late_p50_ns", st->median);
    json_i64(&r.j, "late_p99_ns", st->p99);
    json_i64(&r.j, "late_max_ns", st->max);
    json_u64(&r.j, "reprograms", reprograms);
    json_u64(&r.j, "hangs", base.hangs);
    json_u64(&r.j, "storms", base.storm_detected);
    rec_emit(&r);
    kprintf("  hrtimers    %u/%u fired on %s, %u early, late min %lld p50 %lld p99 %lld max "
            "%lld ns, %llu reprograms\n", n_fired, n, base.dev->name, early, (long long)st->min,
            (long long)st->median, (long long)st->p99, (long long)st->max,
            (unsigned long long)reprograms);
}

void hrt_check_run(uint64_t count)
{
    unsigned n = count > HRT_CHECK_MAX ? HRT_CHECK_MAX : (unsigned)count;
    if (!n || !ready)
        return;
    n_fired = 0;
    uint64_t seed = 0x68727469636bull;       /* "hrtick" */
    unsigned long flags = irq_save();
    n_fired = 0;
    uint64_t reprograms0 = base.reprograms, t0 = time_ns();
    for (unsigned i = 0; i < n; i++) {
        memset(&timers[i], 0, sizeof(timers[i]));
        timers[i].fn = on_timer;
        hrtimer_start(&base, &timers[i], t0 + SETUP_NS + lcg(&seed) % SPAN_NS, HRTIMER_MODE_ABS);
    }
    uint64_t c0 = rdtsc(), bound = tsc_ns_to_cyc(SPAN_NS * 4 + 100000000ull);
    halt_backup_start(base.dev->name);
    while (n_fired < n && rdtsc() - c0 < bound)
        halt_once();
    halt_backup_stop();
    for (unsigned i = 0; i < n; i++)
        hrtimer_cancel(&base, &timers[i]);
    irq_restore(flags);

    unsigned early = 0;
    struct stats st = { 0 };
    for (unsigned k = 0; k < n_fired; k++) {
        unsigned i = (unsigned)order[k];
        late[k] = (int64_t)(fired_ns[i] - timers[i].expires_ns);
        early += late[k] < 0;
    }
    stats_i64(late, n_fired, &st);
    report(n, base.reprograms - reprograms0, &st, early);
    if (n_fired != n)
        rec_error("hrtimer_check", "not every hrtimer fired within the bound");
}
