/* kernel/exp/tick_overhead.c - `tick-overhead`: the CPU the periodic tick takes. A fixed
 * empty loop (N iterations of nothing, timed by one pair of TSC reads around it) runs with
 * the tick at 100 us, 300 us, 1 ms, 3 ms and 10 ms, and what the loop lost against a baseline
 * is the tick's cost. Two baselines, two variants:
 *   faithful  against the loop under the 10 ms tick, as the 1998 source measured (10.2 % at
 *             100 us, 3.1 % at 1 ms; the 10 ms row is the baseline itself);
 *   ticklab   against the loop with no tick at all (tickless: no interrupt can come).
 * Every figure comes from `repeats` rounds, each running the baseline and the tick's loop
 * back to back, so that a slow moment of the host hits both alike: the estimate is the
 * median of the rounds' differences, and its uncertainty the spread of those differences.
 * When the estimate is within its uncertainty of zero, the row says so (`below_resolution`,
 * the overhead at most `overhead_bound_pct`) instead of printing a figure the repeats do not
 * support: the tick cannot make the loop faster, so a difference below zero is noise.
 *
 * A second run, the loop reading the TSC with the interrupt path's timestamps on
 * (irq_probe, kernel/arch/trap.h), splits each tick interrupt in TSC cycles (kept apart from
 * the timed loops, so the overhead holds neither the stamps nor the bookkeeping):
 *   entry    the loop's last TSC read before the interrupt -> the entry stub's RDTSC
 *            (the CPU's interrupt delivery plus the stub's first instructions);
 *   handler  entry -> return to the stub, less the EOI (dispatch, device acknowledgement,
 *            the tick's work: jiffies, timekeeping, the wheel);
 *   eoi      the interrupt controller's end-of-interrupt write;
 *   return   the return to the stub -> the loop's first TSC read after it (register
 *            restore and IRETQ).
 * Each part includes a few instructions of the loop or of the probe itself. */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "ticklab/fmt.h"
#include "kernel/arch/trap.h"
#include "kernel/exp/harness.h"
#include "kernel/exp/verdict.h"
#include "kernel/report/console.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/timers.h"
#include "ticklab/tick.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"

#define MAX_SPLITS 32768u
#define MAX_REPEATS 15u
#define FAITHFUL_BASE_NS 10000000ull      /* the source's baseline: the 10 ms tick */

static const uint64_t ticks_ns[] = { 100000, 300000, 1000000, 3000000, 10000000 };
#define N_TICKS (sizeof(ticks_ns) / sizeof(ticks_ns[0]))

static uint64_t split[4][MAX_SPLITS];     /* entry, handler, eoi, return */
static unsigned n_split;

/* The fixed empty loop: n iterations of nothing with interrupts on, timed by one pair of
 * ordered TSC reads; its length in ns. The empty asm keeps each iteration (and makes none
 * of it a clock read, which a hypervisor may trap). */
static uint64_t busy_loop(uint64_t n, uint64_t *ticks)
{
    unsigned long flags = irq_save();
    uint64_t t0_ticks = timers_tick_info()->ticks;
    irq_enable();
    uint64_t t0 = rdtsc_ordered();
    for (uint64_t i = 0; i < n; i++)
        __asm__ volatile("" ::: "memory");
    uint64_t t1 = rdtsc_ordered();
    irq_disable();
    *ticks = timers_tick_info()->ticks - t0_ticks;
    irq_restore(flags);
    return tsc_cyc_to_ns(t1 - t0);
}

/* TSC reads for span_cyc cycles with the interrupt path's timestamps on, splitting every
 * interrupt that arrives while it runs (up to MAX_SPLITS of them). */
static void split_loop(uint64_t span_cyc)
{
    unsigned long flags = irq_save();
    irq_probe.on = irq_probe.split = true;
    uint64_t seq = irq_probe.seq;
    irq_enable();
    uint64_t prev = rdtsc(), t0 = prev;
    while (prev - t0 < span_cyc) {
        uint64_t now = rdtsc();
        if (irq_probe.seq != seq) {
            seq = irq_probe.seq;
            uint64_t b = irq_probe.eoi_begin_tsc, e = irq_entry_tsc(b),
                     d = irq_probe.eoi_end_tsc, x = irq_probe.exit_tsc;
            /* The interrupt came between the last two reads, or just after this one (then
             * this read is the last before it, and the next is the first after). */
            uint64_t before = prev, after = now;
            if (now < x) {
                before = now;
                after = now = rdtsc();
            }
            /* only a set that lies wholly between the two reads (one interrupt, whole) */
            if (before <= e && e <= b && b <= d && d <= x && x <= after && n_split < MAX_SPLITS) {
                split[0][n_split] = e - before;
                split[1][n_split] = (x - e) - (d - b);
                split[2][n_split] = d - b;
                split[3][n_split] = after - x;
                n_split++;
            }
        }
        prev = now;
    }
    irq_disable();
    irq_probe.on = irq_probe.split = false;
    irq_restore(flags);
}

static uint64_t median_of(unsigned part)
{
    if (!n_split)
        return 0;
    struct stats st;
    stats_u64(split[part], n_split, &st);
    return (uint64_t)st.median;
}

/* One tick rate's rounds: per round the no-tick loop, the 10 ms tick's loop and this rate's
 * loop, back to back. */
struct rounds {
    unsigned n;
    int64_t none_ns[MAX_REPEATS], base10_ns[MAX_REPEATS], with_ns[MAX_REPEATS];
    uint64_t ticks[MAX_REPEATS];        /* tick interrupts taken during the ticked loop */
};

/* A loop whose ticks did not all come (the host held the guest, or the device lost them):
 * more than 2 % + 2 of the periods it lasted went without an interrupt. Its time then
 * holds fewer ticks than it says and the cost per tick is not a measurement. */
static bool ticks_went_missing(uint64_t arrived, uint64_t expected)
{
    return arrived + expected / 50 + 2 < expected;
}

static bool one_round(struct rounds *rs, uint64_t tick_ns, uint64_t n)
{
    uint64_t ticks;
    unsigned k = rs->n;
    exp_tick_off();
    rs->none_ns[k] = (int64_t)busy_loop(n, &ticks);
    if (!exp_tick_set(FAITHFUL_BASE_NS, 0))
        return false;
    rs->base10_ns[k] = (int64_t)busy_loop(n, &ticks);
    if (tick_ns != FAITHFUL_BASE_NS && !exp_tick_set(tick_ns, 0))
        return false;
    rs->with_ns[k] = (int64_t)busy_loop(n, &rs->ticks[k]);
    rs->n++;
    return true;
}

/* Median of with - base over the rounds, and the spread of those differences (max - min,
 * at least the TSC-to-ns step of 1 ns): what the rounds support, no more. */
static void difference(const struct rounds *rs, const int64_t *base, int64_t *est, int64_t *unc,
                       int64_t *base_med)
{
    int64_t d[MAX_REPEATS], b[MAX_REPEATS];
    for (unsigned i = 0; i < rs->n; i++) {
        d[i] = rs->with_ns[i] - base[i];
        b[i] = base[i];
    }
    struct stats sd, sb;
    stats_i64(d, rs->n, &sd);
    stats_i64(b, rs->n, &sb);
    *est = sd.median;
    *unc = sd.max - sd.min > 1 ? sd.max - sd.min : 1;
    *base_med = sb.median;
}

/* The median of the ticked loops themselves (what was measured, never a sum that could
 * fall below zero). */
static int64_t with_median(const struct rounds *rs)
{
    int64_t w[MAX_REPEATS];
    for (unsigned i = 0; i < rs->n; i++)
        w[i] = rs->with_ns[i];
    struct stats sw;
    stats_i64(w, rs->n, &sw);
    return sw.median;
}

/* The row of a loop whose figure cannot be true: what happened, and the counts that show it. */
/* The keys every row has, measured or invalid: what ran and the raw counts. */
static void row_keys(struct json *j, const char *variant, uint64_t period_ns,
                     const struct tick_info *ti, uint64_t n, const struct rounds *rs,
                     int64_t base_med, uint64_t ticks, uint64_t expected)
{
    json_str(j, "variant", variant);
    json_str(j, "baseline", !k_strcmp(variant, "faithful") ? "tick_10ms" : "no_tick");
    json_u64(j, "tick_ns", period_ns);
    json_str(j, "device", ti->dev->name);
    json_str(j, "mode", ti->periodic ? "periodic" : "oneshot");
    json_str(j, "clock", "tsc");
    json_u64(j, "iterations", n);
    json_u64(j, "repeats", rs->n);
    json_u64(j, "loop_ns", (uint64_t)with_median(rs));
    json_u64(j, "baseline_ns", (uint64_t)base_med);
    json_u64(j, "ticks", ticks);
    json_u64(j, "ticks_expected", expected);
}

static void invalid_row(const char *variant, uint64_t period_ns, const struct tick_info *ti,
                        uint64_t n, const struct rounds *rs, int64_t base_med, uint64_t ticks,
                        uint64_t expected, const char *why)
{
    struct rec r;
    exp_invalid_begin(&r, why);
    row_keys(&r.j, variant, period_ns, ti, n, rs, base_med, ticks, expected);
    rec_emit(&r);
    kprintf("  %-8s %8llu %8llu  not a measurement: %s\n", variant,
            (unsigned long long)period_ns, (unsigned long long)ticks, why);
}

static void report_row(const char *variant, uint64_t period_ns, const struct tick_info *ti,
                       uint64_t n, const struct rounds *rs, const int64_t *base,
                       const uint64_t med[4], uint64_t split_ticks, int64_t *ppm_out,
                       int64_t *per_tick_out, int64_t *bound_out, int64_t *lo_out)
{
    int64_t est, unc, base_med;
    difference(rs, base, &est, &unc, &base_med);
    uint64_t ticks = 0, expected = 0;
    unsigned held = 0;
    for (unsigned i = 0; i < rs->n; i++) {
        uint64_t want = rs->with_ns[i] > 0 ? (uint64_t)rs->with_ns[i] / period_ns : 0;
        ticks += rs->ticks[i];
        expected += want;
        held += ticks_went_missing(rs->ticks[i], want);
    }
    ticks = rs->n ? ticks / rs->n : 0;
    expected = rs->n ? expected / rs->n : 0;
    /* Against the 10 ms tick the difference is the cost of the ticks beyond the baseline's
     * own (its loop at 10 ms took base_med / 10 ms of them): per tick, of those. */
    uint64_t extra_ticks = ticks;
    if (!k_strcmp(variant, "faithful")) {
        uint64_t base_ticks = base_med > 0 ? (uint64_t)base_med / 10000000ull : 0;
        extra_ticks = ticks > base_ticks ? ticks - base_ticks : 0;
    }
    bool below = est <= unc;
    int64_t ppm = base_med > 0 ? est * 1000000 / base_med : 0;
    int64_t unc_ppm = base_med > 0 ? unc * 1000000 / base_med : 0;
    int64_t per_tick = extra_ticks ? est / (int64_t)extra_ticks : 0;
    int64_t unc_tick = extra_ticks ? unc / (int64_t)extra_ticks : unc;
    char why[160] = "";
    if (held)
        fmt_snprintf(why, sizeof(why), "ticks went missing in %u of %u loops (%llu of %llu "
                     "arrived, median): the host held the guest or the device lost them",
                     held, rs->n, (unsigned long long)ticks, (unsigned long long)expected);
    else if (!below && per_tick >= (int64_t)period_ns)
        fmt_snprintf(why, sizeof(why), "a tick would cost %lld ns, more than its %llu ns "
                     "period: the loop was disturbed", (long long)per_tick,
                     (unsigned long long)period_ns);
    if (why[0]) {
        invalid_row(variant, period_ns, ti, n, rs, base_med, ticks, expected, why);
        *ppm_out = *per_tick_out = *bound_out = -1;
        if (lo_out)
            *lo_out = -1;
        return;
    }
    struct rec r;
    exp_result_begin(&r);
    row_keys(&r.j, variant, period_ns, ti, n, rs, base_med, ticks, expected);
    json_u64(&r.j, "ticks_beyond_baseline", extra_ticks);
    json_bool(&r.j, "below_resolution", below);
    json_fixed(&r.j, "overhead_pct", below ? 0 : ppm, 4);     /* 1 ppm = 0.0001 % */
    json_fixed(&r.j, "overhead_uncertainty_pct", unc_ppm, 4);
    json_fixed(&r.j, "overhead_bound_pct", below ? unc_ppm : ppm + unc_ppm, 4);
    json_i64(&r.j, "per_tick_ns", below ? 0 : per_tick);
    json_i64(&r.j, "per_tick_uncertainty_ns", unc_tick);
    if (med) {
        json_u64(&r.j, "split_ticks", split_ticks);
        json_u64(&r.j, "split_samples", n_split);
        json_u64(&r.j, "entry_cyc", med[0]);
        json_u64(&r.j, "handler_cyc", med[1]);
        json_u64(&r.j, "eoi_cyc", med[2]);
        json_u64(&r.j, "return_cyc", med[3]);
        json_u64(&r.j, "total_cyc", med[0] + med[1] + med[2] + med[3]);
    }
    rec_emit(&r);
    if (below) {
        char u[24];
        kprintf("  %-8s %8llu %8llu  below resolution (at most %s%%, +-%lld ns/tick)\n",
                variant, (unsigned long long)period_ns, (unsigned long long)ticks,
                fmt_fixed(u, sizeof(u), unc_ppm, 4, false), (long long)unc_tick);
    } else {
        char p[24], u[24];
        kprintf("  %-8s %8llu %8llu  %8s%% +-%s  %7lld +-%lld ns/tick", variant,
                (unsigned long long)period_ns, (unsigned long long)ticks,
                fmt_fixed(p, sizeof(p), ppm, 4, false), fmt_fixed(u, sizeof(u), unc_ppm, 4, false),
                (long long)per_tick, (long long)unc_tick);
    }
    if (med && !below)
        kprintf("  %5llu %7llu %3llu %6llu\n", (unsigned long long)med[0],
                (unsigned long long)med[1], (unsigned long long)med[2],
                (unsigned long long)med[3]);
    else if (!below)
        kprintf("\n");
    *ppm_out = below ? 0 : ppm;
    *per_tick_out = below ? 0 : per_tick;
    *bound_out = (below ? 0 : per_tick) + unc_tick;
    if (lo_out)
        *lo_out = below || per_tick <= unc_tick ? 0 : per_tick - unc_tick;
}

/* What the verdict takes: one tick's cost at each tick size with a valid figure. */
static struct {
    const char *device;
    struct verdict_tick at[VERDICT_MAX_TICKS];
    unsigned n;
} found;

static void run(const struct exp_env *env)
{
    (void)env;
    uint64_t target_ns = exp_size(50, 500, 2000) * 1000000ull;
    unsigned repeats = (unsigned)exp_size(5, 9, MAX_REPEATS);
    exp_tick_off();
    /* size the loop: 100000 iterations timed, scaled to the target */
    uint64_t ticks;
    uint64_t probe_ns = busy_loop(100000, &ticks);
    uint64_t n = probe_ns ? target_ns * 100000ull / probe_ns : 100000ull;
    kprintf("\ntick-overhead: an empty loop of %llu iterations (about %llu ms), %u rounds per tick "
            "size (TSC)\n", (unsigned long long)n, (unsigned long long)(target_ns / 1000000ull),
            repeats);
    kprintf("  variant   tick ns    ticks  overhead +- unc   per tick +- unc  entry handler eoi "
            "return (median TSC cycles)\n");
    found.n = 0;
    for (unsigned t = 0; t < N_TICKS && exp_budget_left(); t++) {
        exp_phase("tick %llu ns", (unsigned long long)ticks_ns[t]);
        static struct rounds rs;
        rs.n = 0;
        for (unsigned k = 0; k < repeats && exp_budget_left(); k++)
            if (!one_round(&rs, ticks_ns[t], n))
                break;
        if (!rs.n || !exp_tick_set(ticks_ns[t], 0))
            continue;
        const struct tick_info *ti = timers_tick_info();
        n_split = 0;
        uint64_t split_ticks0 = ti->ticks;
        split_loop(tsc_ns_to_cyc(target_ns));
        uint64_t split_ticks = ti->ticks - split_ticks0;
        uint64_t med[4];
        for (unsigned p = 0; p < 4; p++)
            med[p] = median_of(p);
        int64_t ppm, per_tick, bound, lo, ppm_f, per_tick_f, bound_f;
        report_row("ticklab", ti->period_ns, ti, n, &rs, rs.none_ns, med, split_ticks, &ppm,
                   &per_tick, &bound, &lo);
        if (ticks_ns[t] != FAITHFUL_BASE_NS)
            report_row("faithful", ti->period_ns, ti, n, &rs, rs.base10_ns, 0, 0, &ppm_f,
                       &per_tick_f, &bound_f, 0);
        if (per_tick >= 0 && found.n < VERDICT_MAX_TICKS) {
            found.device = ti->dev->name;
            found.at[found.n++] = (struct verdict_tick){ .tick_ns = ti->period_ns,
                                                         .overhead_ppm = ppm,
                                                         .per_tick_ns = per_tick,
                                                         .per_tick_bound_ns = bound,
                                                         .per_tick_lo_ns = lo };
        }
    }
}

static void summarize(struct verdict_input *v)
{
    v->tick.from = "tick-overhead";
    v->tick.device = found.device;
    for (unsigned i = 0; i < found.n; i++)
        v->tick.at[i] = found.at[i];
    v->tick.n = found.n;
}

const struct experiment exp_tick_overhead = {
    .name = "tick-overhead",
    .summary = "CPU lost to the periodic tick at 100 us .. 10 ms (against no tick, and against "
               "the 10 ms tick as the 1998 source), and one tick's cost split",
    .rows = "variant tick_ns mode",
    .run = run,
    .summarize = summarize,
    .budget_s = { 30, 200, 1800 },
};
