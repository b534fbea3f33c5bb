/* kernel/exp/wakeup_latency.c - `wakeup-latency`: for every one-shot clock event device,
 * how late after its deadline the CPU gets there, four ways:
 *   irq              the device programmed directly (clockevent_program_ns): deadline ->
 *                    the interrupt entry stub's RDTSC (irq_entry_tsc(), trap.h)
 *   event            the same interrupt: deadline -> the device's event function
 *   hrtimer_irq      an hrtimer on that device: deadline -> the interrupt entry stub
 *   callback         the same: deadline -> the hrtimer's callback
 * For the direct path the deadline is time_ns() taken just before the device is programmed
 * plus the delay asked, so the figure includes the cost of programming it; for the hrtimer
 * path it is the timer's expiry. The entry time in ns is the handler's time_ns() less the
 * TSC cycles since the entry stub (converted with the calibrated TSC rate). Delays are
 * pseudo-random in 2..300 us so nothing phase-locks with anything periodic; the tick is off.
 * A wake-up that never comes within 100 ms + 10x its delay (by the TSC) is counted in
 * `lost` and the series goes on; three in a row, or more than 5 % + 10 in all, end it with
 * an `error` record.
 * A handler run before its deadline is asked about (the device says whether its event has
 * happened: clockevent_pending): an interrupt left from an earlier programming while the
 * device still counts towards this one is `stale`, not a sample, and the real one follows;
 * an event the device says happened before its deadline (beyond the clock mappings'
 * tolerance) is an early expiry, a defect of the kit: counted in `early_fires` with the
 * worst in `early_max_ns`, and the run ends `failed`. Through an hrtimer the base does the
 * asking (hrtimer_interrupt_came_early): a callback run from an interrupt that came before
 * its deadline (the base looped until the timer was due) is not a sample either.
 * Each is measured twice: waiting in HLT (`"wait":"hlt"`, an idle CPU: the figures include
 * waking from HLT) and polling with interrupts on (`"wait":"poll"`, a busy CPU).
 *
 * Under -icount the guest's time is its instruction count: these figures are then the
 * number of guest instructions between the deadline and each point, exact and repeatable.
 * For scale: Linux 6.1 on the same QEMU settings wakes a cyclictest thread in
 * 3.8 us on average (p99 4.35 us); its timerlat tracer sees the timer IRQ handler 0.73 us
 * after the deadline (p99 0.78 us). */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "kernel/arch/trap.h"
#include "kernel/config.h"
#include "kernel/exp/harness.h"
#include "kernel/exp/verdict.h"
#include "kernel/report/console.h"
#include "ticklab/clockevent.h"
#include "ticklab/stampmap.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/idle.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "kernel/timers/timers.h"
#include "ticklab/hrtimer.h"
#include "ticklab/hist.h"
#include "ticklab/hotpath.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"

#define MAX_SAMPLES 20000u
/* A p99.9 from fewer samples is the nearest rank of under one sample: the series' max, or
 * next to it. Below this it is not written. */
#define P999_MIN_SAMPLES 1000u
#define HIST_LO_SHIFT 4u          /* buckets 0, 16, 32, ... ns */
#define HIST_N 22u                /* ... the last from 2^24 ns = 16.8 ms up */
#define MIN_DELAY_NS 2000ull
#define MAX_DELAY_NS 300000ull

static int64_t lat_a[MAX_SAMPLES], lat_b[MAX_SAMPLES];   /* entry, handler/callback */
static uint32_t half_width[MAX_SAMPLES];                  /* each sample's +- in ns */
static volatile bool fired, sampled;
static uint64_t deadline_ns, armed_ns;
static unsigned n_done, n_stale, n_lost, n_early_fires, n_map_disagree;
static uint64_t early_max_ns;
static struct hrtimer_base *cur_base;     /* the hrtimer series' base, NULL: direct */
static struct clockevent *cur_dev;
static const struct clocksource *tsc_cs;   /* the TSC, whose stamps are mapped */
static uint64_t res_ns;          /* one count of time_ns()'s clocksource, in ns (rounded up) */
#define MAX_LOST_IN_A_ROW 3u
#define MAX_LOST(n) ((n) / 20 + 10)     /* a series loses at most 5 % + 10 */
static struct hrtimer_base tmp_base;
static struct hrtimer timer;

/* Called first thing in the handler or callback: ns from the deadline to the entry stub
 * and to this call. Both are TSC stamps (the stub's, and one taken here), mapped into
 * time_ns() time through pairs of readings of the two clocks taken together, so that the
 * clock reads themselves are not in the figures.
 *
 * How exact the mapping is (lib/time/stampmap.h). One pair: time_ns() read in it is the
 * clocksource count's start (the count runs res_ns), sampled at some instant between the
 * TSC reads `a` and `c` right before and after it (time_ns_bracket); so a stamp x's time
 * lies between t - (c - x) and t + res - (a - x), res_ns plus the pair's width (10 ns of
 * HPET count plus the few ns of the pair under icount). Pairs taken at other phases of the
 * count cut that interval from either side: up to BRACKET_MAX pairs, each after a wait of
 * 0..9 turns of an empty loop in a scrambled order (so that even under -icount, where
 * everything repeats to the instruction, the pairs fall at different phases of the count:
 * a wait growing by one turn a pair covered half the phases), stopping once the
 * interval is as narrow as a pair itself (or, where a pair is far wider than a count, as on
 * a PC reading an HPET in a microsecond, after BRACKET_MIN: phases gain nothing there). The
 * estimate is the interval's middle, the sample's resolution half its width. Pairs with no
 * instant in common (counted in `map_disagreements`) leave the narrowest pair's interval.
 * The row's `resolution_ns` is the p99 of the samples' half widths, `resolution_max_ns` the
 * widest. */
#define BRACKET_MIN 3
#define BRACKET_MAX 16
static void early_fire(uint64_t early_ns)
{
    n_early_fires++;
    if (early_ns > early_max_ns)
        early_max_ns = early_ns;
}

/* The stamp `here` is the first thing the callback or event handler does (on_timer,
 * on_event: no frame of their own before it); the rest is apart, so that its own register
 * saves come after the stamp, not before it (before them, 7 instructions of the sampler
 * would count as latency). */
static __attribute__((noinline)) void sample(uint64_t here)
{
    struct stampmap m;
    uint64_t t = 0;
    stampmap_start(&m);
    for (unsigned i = 0; i < BRACKET_MAX; i++) {
        if (i >= BRACKET_MIN && (stampmap_settled(&m, 1) || res_ns * 4 <= m.min_pair_ns))
            break;
        for (unsigned k = 0; k < i * 7 % 10; k++)   /* a wait: the next pair's phase */
            __asm__ volatile("" ::: "memory");
        uint64_t a, c, ti = time_ns_bracket(tsc_cs, &a, &c);
        if (i == 0)
            t = ti;
        stampmap_add(&m, ti, res_ns ? res_ns : 1, tsc_cyc_to_ns(a - here),
                     tsc_cyc_to_ns(c - here));
    }
    n_map_disagree += m.disagree;
    uint64_t width, now = stampmap_at(&m, &width);
    uint64_t entry = now - tsc_cyc_to_ns(here - irq_entry_tsc(here));
    if (!irq_probe.in_irq) {
        /* Run by hand, not by an interrupt: the hrtimer core rescued a timer whose
         * interrupt never came (or came too late), and the entry stamp belongs to some earlier
         * interrupt. Not a sample: counted as lost, and the wait ends. */
        n_lost++;
        fired = true;
        return;
    }
    if (cur_base && hrtimer_interrupt_came_early(cur_base)) {
        /* The interrupt running this callback came before the deadline (the base counted
         * it as stale or early and looped until the timer was due): its entry is not this
         * timer's. Not a sample; the wait ends (the timer has run). */
        fired = true;
        return;
    }
    if (t < deadline_ns) {
        /* Before its deadline even by a clock read taken after it began. The device says
         * whether its event has happened: if not, an interrupt left over from an earlier
         * programming (latched before the device was shut down): counted, and the real one
         * follows. If it has, it fired early: a defect. (Not by `now`: a mapping error of
         * a few ns must never throw away a genuine wake-up.) */
        uint64_t early = cur_base ? 0 : clockevent_early_by(cur_dev, deadline_ns, armed_ns,
                                                              time_ns);
        if (early) {
            early_fire(early);
            fired = true;
            return;
        }
        n_stale++;
        return;
    }
    if (entry + width / 2 < deadline_ns) {
        /* On time by the clock read here, but the interrupt ENTERED before the deadline
         * (beyond the sample's resolution): its entry stamp belongs to an interrupt from an
         * earlier programming (or an early one) whose handler was held up past the deadline
         * (a vCPU descheduled between the stub and the handler's clock read: seen under
         * nested KVM, 1.1 ms). Not this deadline's wake-up: counted as stale, excluded. On
         * the direct path the device may still have the real event to come: wait for it. */
        n_stale++;
        if (!cur_base && clockevent_pending(cur_dev) == 1)
            return;
        fired = true;
        return;
    }
    sampled = true;
    if (n_done < MAX_SAMPLES) {
        lat_a[n_done] = (int64_t)(entry - deadline_ns);
        lat_b[n_done] = (int64_t)(now - deadline_ns);
        half_width[n_done] = (uint32_t)((width + 1) / 2);
    }
    fired = true;
}

static HOT_PATH void on_event(struct clockevent *ce)
{
    (void)ce;
    sample(rdtsc());
}

static HOT_PATH enum hrtimer_restart on_timer(struct hrtimer *t)
{
    (void)t;
    sample(rdtsc());
    return HRTIMER_NORESTART;
}

/* What the verdict takes: each device's hrtimer path, from the series that counts (the HLT
 * series, or the poll series when this run never halts). */
static struct {
    struct verdict_wake dev[VERDICT_MAX_DEVICES];
    unsigned n;
} found;
static bool verdict_series;        /* this series' hrtimer rows feed `found` */

/* samples=: per device and path (0: the profile's); raw_samples=on|off: the samples records
 * (an index into onoff: 0 is on). */
static uint64_t samples_word;
static unsigned raw_samples_word;
static const char *const onoff[] = { "on", "off", NULL };
static struct cmdline_opt options[] = {
    { .key = "raw_samples", .type = CMDLINE_ENUM, .dest = &raw_samples_word, .choices = onoff,
      .accepted = "on or off" },
    { .key = "samples", .type = CMDLINE_UINT, .dest = &samples_word, .min = 10, .max = 20000,
      .accepted = "10..20000 (wakeup-latency samples per device)" },
};

/* A sample below zero whose interval still holds zero is "0, below resolution"; one whose
 * whole interval is before the deadline came early: a defect of the kit (the run fails). */
/* ---- raw samples (docs/report-format.md, `samples`) ---------------------------------------- */

#define VLQ_ALPHABET "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
#define SAMPLES_PER_REC 200u    /* at most; fewer when the digits would not fit */
#define VLQ_MAX 1500u           /* characters of vlq a record carries: the rest of its 2048 */

static unsigned vlq_len(uint64_t x)
{
    unsigned n = 1;
    while (x >= 32) {
        x >>= 5;
        n++;
    }
    return n;
}

static size_t vlq_put(char *out, uint64_t x)
{
    size_t n = 0;
    while (x >= 32) {
        out[n++] = VLQ_ALPHABET[32 + (x & 31)];
        x >>= 5;
    }
    out[n++] = VLQ_ALPHABET[x];
    return n;
}

/* The row's samples, in records of up to SAMPLES_PER_REC values each: each record's
 * smallest value as base_ns and the offsets from it as base-32 digits, as many values as
 * keep the digits within VLQ_MAX. A row with no sample sends one empty record. */
static void send_samples(const char *device, const char *path, const char *wait,
                         const int64_t *s, unsigned n)
{
    static char vlq[VLQ_MAX + 16];
    unsigned first = 0;
    do {
        int64_t base = n ? s[first] : 0;
        unsigned count = 0;
        size_t len = 0;
        while (first + count < n && count < SAMPLES_PER_REC) {
            int64_t x = s[first + count], nb = x < base ? x : base;
            size_t nl = 0;
            if (nb != base)             /* a new smallest value moves every offset */
                for (unsigned i = 0; i < count; i++)
                    nl += vlq_len((uint64_t)(s[first + i] - nb));
            else
                nl = len;
            nl += vlq_len((uint64_t)(x - nb));
            if (nl > VLQ_MAX && count)
                break;
            base = nb;
            len = nl;
            count++;
        }
        size_t k = 0;
        for (unsigned i = 0; i < count; i++)
            k += vlq_put(vlq + k, (uint64_t)(s[first + i] - base));
        vlq[k] = 0;
        struct rec r;
        rec_begin(&r, "samples");
        json_str(&r.j, "exp", exp_current());
        json_str(&r.j, "device", device);
        json_str(&r.j, "path", path);
        json_str(&r.j, "wait", wait);
        json_str(&r.j, "clock", "time_ns");
        json_u64(&r.j, "series_samples", n);
        json_u64(&r.j, "first_seq", first);
        json_u64(&r.j, "count", count);
        json_i64(&r.j, "base_ns", base);
        json_str(&r.j, "vlq", vlq);
        rec_emit(&r);
        first += count;
    } while (first < n);
}

static void report(const char *device, const char *path, const char *wait, int64_t *v,
                   unsigned n, bool hrt, bool callback)
{
    static uint64_t widths[MAX_SAMPLES];
    uint64_t hist[HIST_N] = { 0 };
    unsigned early = 0, below = 0;
    for (unsigned i = 0; i < n; i++) {
        widths[i] = half_width[i];
        if (v[i] < 0 && v[i] + (int64_t)half_width[i] >= 0) {
            v[i] = 0;
            below++;
        }
        if (v[i] < 0)
            early++;
        else
            hist[hist_log2_index((uint64_t)v[i], HIST_LO_SHIFT, HIST_N)]++;
    }
    struct stats st, rs;
    stats_u64(widths, n, &rs);             /* sorts widths; then they hold a sorted copy */
    int64_t *sorted = (int64_t *)widths;   /* of v, so that v keeps the order of the */
    for (unsigned i = 0; i < n; i++)       /* wake-ups for the samples records */
        sorted[i] = v[i];
    stats_i64(sorted, n, &st);
    int64_t p99_lo, p99_hi;                /* where the population's p99 lies, 95 % */
    stats_quantile_interval(sorted, n, 990, &p99_lo, &p99_hi);
    struct rec r;
    exp_result_begin(&r);
    json_str(&r.j, "device", device);
    json_str(&r.j, "path", path);
    json_str(&r.j, "wait", wait);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "samples", n);
    json_u64(&r.j, "early", early);
    json_u64(&r.j, "stale", n_stale);
    json_u64(&r.j, "early_fires", n_early_fires);
    if (n_early_fires)
        json_u64(&r.j, "early_max_ns", early_max_ns);
    json_u64(&r.j, "lost", n_lost);
    json_u64(&r.j, "resolution_ns", (uint64_t)rs.p99);
    json_u64(&r.j, "resolution_max_ns", (uint64_t)rs.max);
    json_u64(&r.j, "map_disagreements", n_map_disagree);
    json_u64(&r.j, "below_resolution", below);
    json_stats(&r.j, "%s_ns", "min p50 p99", &st);
    json_i64(&r.j, "p99_lo_ns", p99_lo);
    json_i64(&r.j, "p99_hi_ns", p99_hi);
    if (n >= P999_MIN_SAMPLES)
        json_stats(&r.j, "%s_ns", "p999", &st);
    json_stats(&r.j, "%s_ns", "max mean", &st);
    json_obj_open(&r.j, "hist");
    json_arr_open(&r.j, "edges_ns");
    for (unsigned k = 0; k < HIST_N; k++)
        json_elem_u64(&r.j, hist_log2_edge(k, HIST_LO_SHIFT));
    json_arr_close(&r.j);
    json_arr_open(&r.j, "counts");
    for (unsigned k = 0; k < HIST_N; k++)
        json_elem_u64(&r.j, hist[k]);
    json_arr_close(&r.j);
    json_obj_close(&r.j);
    rec_emit(&r);
    if (raw_samples_word == 0)
        send_samples(device, path, wait, v, n);
    char p999[24] = "       -";
    if (n >= P999_MIN_SAMPLES)
        fmt_snprintf(p999, sizeof(p999), "%8lld", (long long)st.p999);
    kprintf("  %-13s %-12s %-4s %6u %8lld %8lld %8lld %s %9lld  +-%llu\n", device, path, wait,
            n, (long long)st.min, (long long)st.median, (long long)st.p99, p999,
            (long long)st.max, (unsigned long long)rs.p99);
    if (early)
        exp_defect("a timer fired before its deadline (beyond the clock's resolution)",
                   device);

    struct verdict_wake *vw = found.n ? &found.dev[found.n - 1] : 0;
    if (hrt && n && verdict_series && vw && vw->dev == cur_dev) {
        if (callback) {
            vw->cb_p50_ns = st.median;
            vw->cb_p99_ns = st.p99;
            vw->cb_p99_lo_ns = p99_lo;
            vw->cb_p99_hi_ns = p99_hi;
            vw->samples = n;
            vw->measured = true;
        } else {
            vw->irq_p50_ns = st.median;
            vw->irq_p99_ns = st.p99;
        }
    }
}

/* n samples on ce, directly (base NULL) or through base. */
static unsigned collect(struct clockevent *ce, struct hrtimer_base *base, unsigned n,
                        uint64_t *seed)
{
    uint64_t min_delay = ce->min_delta_ns + MIN_DELAY_NS;
    n_done = n_stale = n_lost = n_early_fires = n_map_disagree = 0;
    early_max_ns = 0;
    cur_base = base;
    cur_dev = ce;
    uint64_t stale0 = base ? base->stats.stale : 0, early0 = base ? base->stats.early_fires : 0;
    if (base)
        base->stats.early_max_ns = 0;
    unsigned lost_in_a_row = 0, tries = 0;
    unsigned long flags = irq_save();
    while (n_done < n && exp_budget_left() && tries++ < 2 * n + 20) {
        /* a device slower to arm than the range (nested KVM's HPET: 0.5 ms) gets the
         * same span above its own minimum */
        uint64_t delay = exp_rand_range(seed, min_delay,
                                        min_delay < MAX_DELAY_NS ? MAX_DELAY_NS
                                                                 : min_delay + MAX_DELAY_NS);
        fired = sampled = false;
        if (base) {
            memset(&timer, 0, sizeof(timer));
            timer.fn = on_timer;
            armed_ns = time_ns();
            deadline_ns = armed_ns + delay;
            hrtimer_start(base, &timer, deadline_ns, HRTIMER_MODE_ABS);
        } else {
            armed_ns = time_ns();
            deadline_ns = armed_ns + delay;
            if (clockevent_program_ns(ce, delay) != 0) {
                rec_error(exp_current(), "the device could not be armed");
                break;
            }
        }
        if (!exp_wait_quiet(&fired, 100000000ull + 10 * delay, ce)) {
            /* An interrupt that never came (plain QEMU TCG drops the odd PIT one-shot):
             * counted in `lost`, the sample skipped; three in a row end the series. */
            if (base)
                hrtimer_cancel(base, &timer);
            clockevent_shutdown(ce);
            n_lost++;
            if (++lost_in_a_row >= MAX_LOST_IN_A_ROW || n_lost > MAX_LOST(n)) {
                rec_error(exp_current(), n_lost > MAX_LOST(n)
                                             ? "more than 5 % of the wake-ups never came: "
                                               "series ended"
                                             : "three wake-ups in a row never came: series "
                                               "ended");
                break;
            }
            continue;
        }
        lost_in_a_row = 0;
        if (sampled)
            n_done++;
    }
    irq_restore(flags);
    if (n_done < n && tries > 2 * n + 20) {
        char what[120];
        fmt_snprintf(what, sizeof(what), "series ended after %u tries with %u of %u samples: "
                     "the other wake-ups were stale or early", tries - 1, n_done, n);
        rec_error(exp_current(), what);
    }
    if (base) {
        /* the base told stale from early at each interrupt that came before its moment */
        n_stale = (unsigned)(base->stats.stale - stale0);
        n_early_fires = (unsigned)(base->stats.early_fires - early0);
        early_max_ns = base->stats.early_max_ns;
    }
    cur_base = 0;
    return n_done;
}

/* Events the device says came before their deadline: a defect, named with how early. */
static void say_early_fires(const char *device, const char *series)
{
    if (!n_early_fires)
        return;
    char what[128];
    fmt_snprintf(what, sizeof(what), "%s series: %u event(s) the device says came early, the "
                 "earliest %llu ns before its deadline", series, n_early_fires,
                 (unsigned long long)early_max_ns);
    exp_defect(what, device);
}

static void skip(const char *device, const char *reason)
{
    if (exp_poll_waits && !idle_polls())
        return;                        /* said once, in the first pass */
    struct rec r;
    exp_skip_begin(&r, reason);
    json_str(&r.j, "device", device);
    json_str(&r.j, "path", "irq");
    rec_emit(&r);
    kprintf("  %-13s skip: %s\n", device, reason);
}

static void run(const struct exp_env *env)
{
    tsc_cs = env->clocks->tsc;
    unsigned n = samples_word ? (unsigned)samples_word : (unsigned)exp_size(P999_MIN_SAMPLES, 10000, MAX_SAMPLES);
    uint64_t seed = 0x77616b65ull;     /* "wake" */
    struct hrtimer_base *main_base = env->base;
    const struct clocksource *cs = clocksource_current();
    res_ns = cs && cs->freq_hz ? (NSEC_PER_SEC + cs->freq_hz - 1) / cs->freq_hz : 0;
    exp_tick_off();
    kprintf("\nwakeup-latency: deadline -> interrupt entry / handler, ns by time_ns, %u "
            "samples each\n", n);
    kprintf("  device        path         wait samples      min      p50      p99     p999       max\n");
    found.n = 0;
    irq_probe.on = true;                 /* entry times from the stub */
    for (unsigned w = 0; w < 2; w++) {
      exp_poll_waits = w == 1;
      const char *wait = exp_poll_waits ? "poll" : "hlt";
      /* The verdict's figures come from the HLT series, or from the poll series when this
       * run never halts (idle=, idle.h): an HLT series there would be a poll by another
       * name. */
      verdict_series = idle_polls() ? w == 1 : w == 0;
      for (struct clockevent *ce = clockevent_list(); ce && exp_budget_left(); ce = ce->next) {
        if (ce->cpu != 0)
            continue;                  /* another CPU's own: measured on that CPU */
        if (!exp_poll_waits && idle_polls()) {
            struct rec r;
            exp_skip_begin(&r, idle_reason());
            json_str(&r.j, "device", ce->name);
            json_str(&r.j, "wait", "hlt");
            rec_emit(&r);
            kprintf("  %-13s hlt  skip: %s\n", ce->name, idle_name());
            continue;
        }
        exp_phase("%s, %s", ce->name, wait);
        if (!ce->usable) {
            skip(ce->name, ce->unusable_reason ? ce->unusable_reason : "unusable");
            continue;
        }
        if (!(ce->features & CE_ONESHOT)) {
            skip(ce->name, "no one-shot mode");
            continue;
        }
        /* The main base lends its device for the direct series. */
        bool is_main = main_base && main_base->dev == ce;
        if (is_main)
            timers_base_lend();
        /* direct */
        if (clockevent_claim(ce, on_event, &timer) != 0) {
            skip(ce->name, "the device or its hardware is in use");
            if (is_main)
                timers_base_return();
            continue;
        }
        unsigned got = collect(ce, 0, n, &seed);
        clockevent_release(ce);
        if (is_main)
            timers_base_return();
        report(ce->name, "irq", wait, lat_a, got, false, false);
        report(ce->name, "event", wait, lat_b, got, false, false);
        say_early_fires(ce->name, "direct");
        /* through an hrtimer base on it */
        struct hrtimer_base *b = is_main ? main_base : &tmp_base;
        if (!is_main && (hrtimer_base_init(&tmp_base, ce, &hrtimer_clock_time_ns, 2) != 0 ||
                         timers_watch(&tmp_base) != 0))
            continue;
        if (verdict_series && found.n < VERDICT_MAX_DEVICES)
            found.dev[found.n++] = (struct verdict_wake){ .dev = ce };
        got = collect(ce, b, n, &seed);
        if (!is_main) {
            timers_unwatch(&tmp_base);
            hrtimer_base_release(&tmp_base);
        }
        report(ce->name, "hrtimer_irq", wait, lat_a, got, true, false);
        report(ce->name, "callback", wait, lat_b, got, true, true);
        say_early_fires(ce->name, "hrtimer");
      }
    }
    exp_poll_waits = false;
    irq_probe.on = false;
}

static void summarize(struct verdict_input *v)
{
    v->wake.from = "wakeup-latency";
    for (unsigned i = 0; i < found.n; i++)
        v->wake.dev[i] = found.dev[i];
    v->wake.n = found.n;
}

const struct experiment exp_wakeup_latency = {
    .name = "wakeup-latency",
    .summary = "deadline to interrupt entry and to the callback, per one-shot device",
    .rows = "device path wait",
    .options = options,
    .n_options = sizeof(options) / sizeof(options[0]),
    .run = run,
    .summarize = summarize,
    .budget_s = { 60, 300, 3600 },
};
