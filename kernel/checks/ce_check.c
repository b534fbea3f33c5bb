/* kernel/checks/ce_check.c - see ce_check.h. */
#include "kernel/checks/ce_check.h"

#include "ticklab/io.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/clockevent.h"
#include "kernel/timers/clocks.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "kernel/timers/idle.h"
#include "ticklab/stats.h"

#define PERIOD_NS       1000000ull
#define ONESHOT_SPAN_NS 1000000ull      /* one-shot deltas: min delta .. min delta + 1 ms */

static uint64_t stamp[CE_CHECK_MAX_EVENTS + 1];
static int64_t sample[CE_CHECK_MAX_EVENTS];
static volatile unsigned n_stamps, want_stamps;

static void on_event(struct clockevent *ce)
{
    (void)ce;
    if (n_stamps < want_stamps)
        stamp[n_stamps++] = time_ns();
}

/* Deterministic deltas: the same sequence on every run (a 64-bit LCG, Knuth's constants). */
static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static bool wait_stamps(struct clockevent *ce, unsigned want, uint64_t bound_ns)
{
    uint64_t c0 = rdtsc(), bound = tsc_ns_to_cyc(bound_ns);
    halt_backup_start(ce);           /* without one, halt_once() polls with interrupts on */
    while (n_stamps < want && rdtsc() - c0 < bound)
        halt_once();
    halt_backup_stop();
    return n_stamps >= want;
}

static uint64_t start_periodic(struct clockevent *ce)
{
    uint64_t actual = 0;
    if (clockevent_set_periodic_ns(ce, PERIOD_NS, &actual) == 0)
        return actual;
    /* Devices that make only some periods (the RTC: powers of two): the nearest one above. */
    uint64_t p = ce->min_delta_cyc ? ce->min_delta_cyc : 1;
    while (clockevent_cyc_to_ns(ce, p) < PERIOD_NS && p * 2 <= ce->max_delta_cyc)
        p *= 2;
    return clockevent_set_state(ce, CE_STATE_PERIODIC, p) == 0 ? clockevent_cyc_to_ns(ce, p) : 0;
}

static void report(struct clockevent *ce, const char *mode, unsigned expected, unsigned got,
                   uint64_t period_ns, struct stats *st, unsigned early)
{
    struct rec r;
    rec_begin(&r, "clockevent_check");
    json_str(&r.j, "device", ce->name);
    json_str(&r.j, "mode", mode);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "expected", expected);
    json_u64(&r.j, "events", got);
    if (period_ns)
        json_u64(&r.j, "period_ns", period_ns);
    json_str(&r.j, "measure", period_ns ? "interval_minus_period_ns" : "lateness_ns");
    json_stats(&r.j, "%s_ns", "min p50 p99 max mean stddev", st);
    json_u64(&r.j, "early", early);
    rec_emit(&r);
    kprintf("  %-6s %-8s %4u/%-4u events  %s min %lld p50 %lld p99 %lld max %lld ns\n",
            ce->name, mode, got, expected, period_ns ? "interval error" : "lateness",
            (long long)st->min, (long long)st->median, (long long)st->p99, (long long)st->max);
}

static void check_periodic(struct clockevent *ce, unsigned n)
{
    struct stats st = { 0 };
    n_stamps = 0;
    want_stamps = n + 1;
    if (clockevent_claim(ce, on_event, &stamp))
        return;
    uint64_t period = start_periodic(ce);
    bool ok = period && wait_stamps(ce, n + 1, (n + 2) * PERIOD_NS * 4 + 100000000ull);
    clockevent_release(ce);
    unsigned got = n_stamps ? n_stamps - 1 : 0;
    for (unsigned i = 0; i < got; i++)
        sample[i] = (int64_t)(stamp[i + 1] - stamp[i]) - (int64_t)period;
    stats_i64(sample, got, &st);
    report(ce, "periodic", n, got, period, &st, 0);
    if (!ok)
        rec_error("clockevent_check", ce->name);
}

static void check_oneshot(struct clockevent *ce, unsigned n)
{
    struct stats st = { 0 };
    uint64_t seed = 0x7469636B6C6162ull;      /* "ticklab" */
    uint64_t min_ns = ce->min_delta_ns;
    unsigned got = 0, early = 0;
    if (clockevent_claim(ce, on_event, &stamp))
        return;
    for (unsigned i = 0; i < n; i++) {
        uint64_t delta = min_ns + lcg(&seed) % ONESHOT_SPAN_NS;
        n_stamps = 0;
        want_stamps = 1;
        uint64_t t0 = time_ns();
        if (clockevent_program_ns(ce, delta) || !wait_stamps(ce, 1, delta * 4 + 100000000ull))
            break;
        int64_t late = (int64_t)(stamp[0] - t0) - (int64_t)delta;
        early += late < 0;
        sample[got++] = late;
    }
    clockevent_release(ce);
    stats_i64(sample, got, &st);
    report(ce, "oneshot", n, got, 0, &st, early);
    if (got != n)
        rec_error("clockevent_check", ce->name);
}

void ce_check_all(uint64_t events)
{
    unsigned n = events > CE_CHECK_MAX_EVENTS ? CE_CHECK_MAX_EVENTS : (unsigned)events;
    if (!n || !clock_facts.tsc_hz)
        return;
    unsigned long flags = irq_save();
    for (struct clockevent *ce = clockevent_list(); ce; ce = ce->next) {
        if (ce->cpu != 0 || !clockevent_is_free(ce))
            continue;
        if (ce->features & CE_PERIODIC)
            check_periodic(ce, n);
        if (ce->features & CE_ONESHOT)
            check_oneshot(ce, n);
    }
    irq_restore(flags);
}
