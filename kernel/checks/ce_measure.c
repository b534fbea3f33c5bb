/* kernel/checks/ce_measure.c - see ce_measure.h. */
#include "kernel/checks/ce_measure.h"

#include "ticklab/io.h"
#include "kernel/discover/irq_check.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/ce_search.h"
#include "ticklab/clockevent.h"
#include "kernel/timers/ce_devices.h"
#include "kernel/timers/clocks.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/errno.h"
#include "ticklab/muldiv.h"
#include "ticklab/stats.h"

#define FIRE_CHECK_NS     1000000ull      /* the one-shot (or period) of the fire check */
#define FIRE_BOUND_NS     200000000ull    /* ... must arrive within 200 ms, by the TSC */
#define COST_SAMPLES      512
#define COST_DELTA_NS     10000000ull     /* programmed far ahead, then shut down */

static volatile uint64_t fired;
static uint64_t cost[COST_SAMPLES];

static void count_event(struct clockevent *ce)
{
    (void)ce;
    fired++;
}

/* Waits until `fired` moves past `before` or bound_ns passes on the TSC. */
static bool wait_fire(uint64_t before, uint64_t bound_ns)
{
    uint64_t t0 = rdtsc(), bound = tsc_ns_to_cyc(bound_ns);
    while (fired == before) {
        if (rdtsc() - t0 > bound)
            return false;
        timekeeping_accumulate();      /* see idle.c: no tick runs yet */
    }
    return true;
}

/* A period of at least ns that a periodic-only device surely makes: its shortest period
 * times a power of two (the RTC makes only power-of-two rates). */
static uint64_t periodic_probe_cyc(const struct clockevent *ce, uint64_t ns)
{
    uint64_t want = clockevent_ns_to_cyc_up(ce, ns), p = ce->min_delta_cyc ? ce->min_delta_cyc : 1;
    while (p < want && p * 2 <= ce->max_delta_cyc)
        p *= 2;
    return p;
}

/* Through the core, so an -ETIME (an emulator stalled between reading the counter and
 * writing the comparator) is retried as in normal use; a second attempt absorbs one lost
 * event under a loaded emulator. Only two silent attempts make a device unusable. */
static bool fire_check(struct clockevent *ce, unsigned *attempts)
{
    for (unsigned attempt = 0; attempt < 2; attempt++) {
        *attempts = attempt + 1;
        uint64_t before = fired;
        int rc;
        if (ce->features & CE_ONESHOT)
            rc = clockevent_program_ns(ce, FIRE_CHECK_NS);
        else
            rc = clockevent_set_state(ce, CE_STATE_PERIODIC,
                                      periodic_probe_cyc(ce, FIRE_CHECK_NS));
        bool ok = rc == 0 && wait_fire(before, FIRE_BOUND_NS);
        clockevent_shutdown(ce);
        if (ok)
            return true;
    }
    return false;
}

/* Under virtual time (QEMU -icount) every device's events follow the TSC exactly, but QEMU
 * runs the RTC on the host's clock unless told -rtc clock=vm: then its events come at
 * whatever pace the emulation keeps, and whatever waits on them differs from run to run.
 * A periodic-only device's period, timed over VT_PERIODS events by the TSC, tells: off by
 * more than VT_TOLERANCE_PCT, the device is not used. Returns the reason, or NULL. */
#define VT_PERIODS 4u
#define VT_TOLERANCE_PCT 1u
#define VT_PERIOD_NS 1000000ull
static const char *virtual_time_problem(struct clockevent *ce)
{
    uint64_t period_cyc = periodic_probe_cyc(ce, VT_PERIOD_NS);
    uint64_t expect_ns = mul_div_u64(VT_PERIODS * period_cyc, NSEC_PER_SEC, ce->freq_hz);
    if (clockevent_set_state(ce, CE_STATE_PERIODIC, period_cyc) != 0)
        return 0;
    uint64_t t0 = 0, before = fired;
    bool ok = wait_fire(before, FIRE_BOUND_NS);
    if (ok) {
        t0 = rdtsc();
        before = fired;
        for (unsigned i = 0; ok && i < VT_PERIODS; i++)
            ok = wait_fire(before + i, FIRE_BOUND_NS);
    }
    uint64_t took_ns = ok ? tsc_cyc_to_ns(rdtsc() - t0) : 0;
    clockevent_shutdown(ce);
    if (!ok)
        return "its periodic events stopped while timed against virtual time";
    uint64_t off = took_ns > expect_ns ? took_ns - expect_ns : expect_ns - took_ns;
    return off * 100 > expect_ns * VT_TOLERANCE_PCT
               ? "its events do not follow virtual time (QEMU -icount without -rtc clock=vm: "
                 "it runs on the host's clock); not used, so that nothing measured depends on "
                 "the host's pace"
               : 0;
}

static uint64_t events_seen(void *ctx)
{
    (void)ctx;
    return fired;
}

static bool wait_ops(void *ctx, uint64_t before, uint64_t bound_ns)
{
    (void)ctx;
    return wait_fire(before, bound_ns);
}

static const struct ce_search_ops search_ops = { events_seen, wait_ops, 0 };

/* What one event's programming costs: the per-event call alone (the state is set once,
 * before the samples), in TSC cycles around it. */
static void program_cost(struct clockevent *ce, struct stats *out)
{
    uint64_t delta = clockevent_ns_to_cyc_up(ce, COST_DELTA_NS);
    if (delta > ce->max_delta_cyc)
        delta = ce->max_delta_cyc;
    bool oneshot = (ce->features & CE_ONESHOT) != 0;
    if (oneshot)
        clockevent_program_cyc(ce, delta);
    for (unsigned i = 0; i < COST_SAMPLES; i++) {
        uint64_t t0 = rdtsc_ordered();
        if (oneshot)
            clockevent_program_cyc(ce, delta);
        else
            clockevent_set_state(ce, CE_STATE_PERIODIC, periodic_probe_cyc(ce, COST_DELTA_NS));
        cost[i] = rdtsc_ordered() - t0;
    }
    clockevent_shutdown(ce);
    stats_u64(cost, COST_SAMPLES, out);
}

static void features_member(struct json *j, unsigned f)
{
    json_arr_open(j, "features");
    if (f & CE_PERIODIC)
        json_elem_str(j, "periodic");
    if (f & CE_ONESHOT)
        json_elem_str(j, "oneshot");
    if (f & CE_ABS)
        json_elem_str(j, "abs");
    if (f & CE_PERCPU)
        json_elem_str(j, "percpu");
    if (f & CE_STOPS_IN_IDLE)
        json_elem_str(j, "stops_in_idle");
    json_arr_close(j);
}

static void measure_one(struct clockevent *ce)
{
    uint32_t etime = 0;
    struct stats c = { 0 };
    unsigned long flags = irq_save();
    if (clockevent_claim(ce, count_event, (void *)&cost)) {
        irq_restore(flags);
        return;
    }
    irq_enable();
    unsigned attempts = 0;
    bool fires = fire_check(ce, &attempts);
    if (fires && (ce->features & CE_ONESHOT))
        clockevent_set_min_delta(ce, ce_search_min_delta(ce, &search_ops, &etime));
    if (fires)
        program_cost(ce, &c);
    const char *off = fires && clock_facts.virtual_time && !(ce->features & CE_ONESHOT)
                          ? virtual_time_problem(ce)
                          : 0;
    irq_disable();
    clockevent_release(ce);
    irq_restore(flags);
    if (!(ce->features & CE_PERCPU))
        irq_proof_note(ce->name, fires);     /* a routed device's interrupt, end to end */
    if (!fires) {
        ce->usable = false;
        ce->unusable_reason = "never fired within 200 ms (by the TSC)";
    } else if (off) {
        ce->usable = false;
        ce->unusable_reason = off;
        clock_facts.off_virtual_time = ce->name;
    }

    struct rec r;
    rec_begin(&r, "clockevent");
    json_str(&r.j, "name", ce->name);
    json_bool(&r.j, "present", true);
    json_bool(&r.j, "usable", ce->usable);
    if (!ce->usable)
        json_str(&r.j, "reason", ce->unusable_reason);
    features_member(&r.j, ce->features);
    json_i64(&r.j, "rating", ce->rating);
    json_u64(&r.j, "freq_hz", ce->freq_hz);
    json_u64(&r.j, "max_delta_cyc", ce->max_delta_cyc);
    json_u64(&r.j, "fire_check_attempts", attempts);
    ce_devices_describe(&r.j, ce);
    if (fires) {
        json_u64(&r.j, "min_delta_cyc", ce->min_delta_cyc);
        json_u64(&r.j, "min_delta_ns", ce->min_delta_ns);
        json_u64(&r.j, "search_etime", etime);
        json_stats(&r.j, "program_cost_%s_tsc_cyc", "min median p99", &c);
    }
    rec_emit(&r);
    if (fires)
        kprintf("  %-12s %10llu Hz  min delta %llu cyc (%llu ns)  program %lld/%lld/%lld TSC cyc\n",
                ce->name, (unsigned long long)ce->freq_hz,
                (unsigned long long)ce->min_delta_cyc,
                (unsigned long long)ce->min_delta_ns,
                (long long)c.min, (long long)c.median, (long long)c.p99);
    else
        kprintf("  %-12s NOT usable: %s\n", ce->name, ce->unusable_reason);
}

void ce_measure_all(void)
{
    if (!clock_facts.tsc_hz) {
        rec_error("clockevent", "no calibrated TSC: clock event devices cannot be measured");
        return;
    }
    for (struct clockevent *ce = clockevent_list(); ce; ce = ce->next)
        if (ce->usable && ce->cpu == 0)
            measure_one(ce);
}
