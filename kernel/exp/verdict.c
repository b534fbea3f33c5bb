/* kernel/exp/verdict.c - see verdict.h. Every claim is drawn from figures measured in this
 * run and names them in "evidence" (record type, and for results the experiment and the keys
 * that pick the row); a claim whose figures were not measured says so instead. */
#include "kernel/exp/verdict.h"

#include "ticklab/tick.h"

#include "kernel/discover/cpu_report.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/smp/smp.h"
#include "kernel/timers/ce_devices.h"
#include "kernel/timers/clocks.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"
#include "ticklab/lapic_timer.h"
#include "ticklab/stats.h"

/* The claims as sent, for the on-screen summary. */
#define MAX_CLAIMS 10
static char claims[MAX_CLAIMS][480];    /* as long as the longest claim text built here */
static const char *claim_topics[MAX_CLAIMS];
static unsigned n_claims;

/* What a comparative claim rests on: whether it decided, by which method, the intervals of
 * the figures compared, and for the tick rate the rates its cost bounds give. */
#define MAX_INTERVALS VERDICT_MAX_DEVICES
struct basis {
    bool comparative;
    bool decided;
    const char *method;
    unsigned n;
    struct {
        char what[48];
        int64_t value, lo, hi;
    } iv[MAX_INTERVALS];
    uint64_t hz_safe, hz_over;        /* tick_rate; 0: none */
};

static const char METHOD_P99[] =
    "order-statistic 95 % interval of each p99 (distribution-free: ranks 1.96 binomial "
    "standard deviations either side of 0.99 n); decided only when the intervals do not "
    "overlap";

static void basis_add(struct basis *b, const struct verdict_wake *w)
{
    if (b->n >= MAX_INTERVALS)
        return;
    fmt_snprintf(b->iv[b->n].what, sizeof(b->iv[0].what), "%s callback p99", w->dev->name);
    b->iv[b->n].value = w->cb_p99_ns;
    b->iv[b->n].lo = w->cb_p99_lo_ns;
    b->iv[b->n].hi = w->cb_p99_hi_ns;
    b->n++;
}

static void claim_on(const char *topic, const char *choice, const char *text, const char *ev1,
                     const char *ev2, const struct basis *b)
{
    struct rec r;
    rec_begin(&r, "verdict");
    json_str(&r.j, "topic", topic);
    json_str(&r.j, "choice", choice);
    json_str(&r.j, "claim", text);
    json_arr_open(&r.j, "evidence");
    if (ev1)
        json_elem_str(&r.j, ev1);
    if (ev2)
        json_elem_str(&r.j, ev2);
    json_arr_close(&r.j);
    if (b && b->comparative) {
        json_bool(&r.j, "decided", b->decided);
        json_str(&r.j, "method", b->method);
        json_arr_open(&r.j, "intervals");
        for (unsigned i = 0; i < b->n; i++) {
            json_obj_open(&r.j, 0);
            json_str(&r.j, "what", b->iv[i].what);
            json_i64(&r.j, "value_ns", b->iv[i].value);
            json_i64(&r.j, "lo_ns", b->iv[i].lo);
            json_i64(&r.j, "hi_ns", b->iv[i].hi);
            json_obj_close(&r.j);
        }
        json_arr_close(&r.j);
        if (b->hz_safe)
            json_u64(&r.j, "hz_safe", b->hz_safe);
        if (b->hz_over)
            json_u64(&r.j, "hz_over", b->hz_over);
    }
    rec_emit(&r);
    kprintf("  %-12s %s\n", topic, text);
    if (n_claims < MAX_CLAIMS) {
        claim_topics[n_claims] = topic;
        k_strlcpy(claims[n_claims++], text, sizeof(claims[0]));
    }
}

static void claim(const char *topic, const char *choice, const char *text, const char *ev1,
                  const char *ev2)
{
    claim_on(topic, choice, text, ev1, ev2, 0);
}

/* Where device i's callback p99 stands against device k's: -1 wholly below (faster), +1
 * wholly above, 0 too close to call. */
static int order(const struct verdict_wake *a, const struct verdict_wake *b)
{
    return stats_interval_order(a->cb_p99_lo_ns, a->cb_p99_hi_ns, b->cb_p99_lo_ns,
                                b->cb_p99_hi_ns);
}

/* "p99 2.92 ms [2.80, 3.05]": the interval's ends in the figure's unit */
static size_t p99_text(char *t, size_t len, const struct verdict_wake *w)
{
    char v[24], lo[24], hi[24];
    return (size_t)fmt_snprintf(t, len, "p99 %s [%s, %s]", fmt_ns(v, sizeof(v), w->cb_p99_ns),
                                fmt_ns_in(lo, sizeof(lo), w->cb_p99_lo_ns, w->cb_p99_ns, false),
                                fmt_ns_in(hi, sizeof(hi), w->cb_p99_hi_ns, w->cb_p99_ns, false));
}

unsigned verdict_claims(const char **topic, const char **text, unsigned max)
{
    unsigned n = n_claims < max ? n_claims : max;
    for (unsigned i = 0; i < n; i++) {
        topic[i] = claim_topics[i];
        text[i] = claims[i];
    }
    return n;
}

/* The wake-up figures of the last report, for verdict_wake_cb_p99(). */
static struct verdict_wake last_wake[VERDICT_MAX_DEVICES];
static unsigned n_last_wake;

int64_t verdict_wake_cb_p99(const char *name, size_t len)
{
    for (unsigned i = 0; i < n_last_wake; i++) {
        const struct clockevent *d = last_wake[i].dev;
        if (last_wake[i].measured && d && k_strlen(d->name) == len &&
            !k_strncmp(d->name, name, len))
            return last_wake[i].cb_p99_ns;
    }
    return -1;
}

static int find_wake(const struct verdict_input *in, const struct clockevent *dev)
{
    for (unsigned i = 0; dev && i < in->wake.n; i++)
        if (in->wake.dev[i].measured && in->wake.dev[i].dev == dev)
            return (int)i;
    return -1;
}

/* "result:NAME" and more words, for the evidence of a claim from an experiment's part. */
static const char *evidence(char *buf, size_t len, const char *from, const char *more)
{
    fmt_snprintf(buf, len, "result:%s%s", from ? from : "?", more ? more : "");
    return buf;
}

/* What a TSC count is here: a cycle on a CPU, a guest instruction under virtual time. */
static const char *tsc_counts(void)
{
    return clock_facts.virtual_time ? "TSC counts (instructions)" : "TSC cycles";
}

/* What the machine is, and what reading a clock costs on it: the cloud user's question. */
static void environment_claim(void)
{
    const char *hv = clock_facts.hypervisor ? clock_facts.hypervisor : "unknown";
    const char *what = !k_strcmp(hv, "none") ? "no hypervisor seen (bare metal, or one that hides)"
                       : !k_strcmp(hv, "kvm") ? "KVM guest: figures include VM exits"
                       : !k_strcmp(hv, "tcg") ? (clock_facts.virtual_time
                                                     ? "QEMU emulation with a TSC of exactly 1 GHz "
                                                       "(-icount, likely): figures are instruction "
                                                       "counts"
                                                     : "QEMU emulation (TCG): figures are the "
                                                       "emulator's, on a real-time host")
                       : "a hypervisor: figures include its exits";
    char text[240];
    size_t n = (size_t)fmt_snprintf(text, sizeof(text), "%s; one RDTSC costs %llu %s (%llu ns)%s; "
                                    "a clock read:", what,
                                    (unsigned long long)clock_facts.rdtsc_cost_cyc, tsc_counts(),
                                    (unsigned long long)tsc_cyc_to_ns(clock_facts.rdtsc_cost_cyc),
                                    clock_facts.rdtsc_trapped ? ", trapped: every TSC read is a VM exit"
                                                              : "");
    const char *cheapest = 0;
    uint64_t best = 0;
    for (struct clocksource *cs = clocksource_list(); cs && n < sizeof(text) - 24; cs = cs->next) {
        if (!cs->usable || !cs->read_cost_cyc)
            continue;
        uint64_t ns = tsc_cyc_to_ns(cs->read_cost_cyc);
        n += (size_t)fmt_snprintf(text + n, sizeof(text) - n, " %s %llu ns", cs->name,
                                  (unsigned long long)ns);
        if (!cheapest || ns < best) {
            cheapest = cs->name;
            best = ns;
        }
    }
    if (cheapest && n < sizeof(text) - 20)
        fmt_snprintf(text + n, sizeof(text) - n, " (cheapest %s)", cheapest);
    claim("environment", clock_facts.rdtsc_trapped ? "rdtsc_trapped" : hv, text, "environment",
          "clocksource");
}

static void clocksource_claim(const char *asked)
{
    struct clocksource *cs = clocksource_current();
    char text[200];
    if (!cs) {
        claim("clocksource", 0, "no usable clock source", "clocksource", 0);
        return;
    }
    fmt_snprintf(text, sizeof(text),
                 "%s: %s (rating %d), read in %u %s (median); time_ns() runs on it",
                 cs->name, asked && asked[0] ? "chosen by clocksource= on the command line"
                                              : "the highest-rated usable source",
                 cs->rating, cs->read_cost_cyc, tsc_counts());
    char ev[48];
    fmt_snprintf(ev, sizeof(ev), "clocksource:name=%s", cs->name);
    claim("clocksource", cs->name, text, "clocksource_selected", ev);
}

/* The device whose hrtimer callback p99 is lowest, decided only when its interval lies
 * below every other device's. */
static void claim_clockevent(const struct verdict_input *in)
{
    const struct verdict_wake *w = in->wake.dev;
    int best = -1;
    for (unsigned i = 0; i < in->wake.n; i++)
        if (w[i].measured && (best < 0 || w[i].cb_p99_ns < w[best].cb_p99_ns))
            best = (int)i;
    char text[300], ev[64];
    if (best < 0) {
        fmt_snprintf(text, sizeof(text), "not measured: %s did not run or found no device",
                     in->wake.from ? in->wake.from : "no experiment");
        claim("clockevent", 0, text, 0, 0);
        return;
    }
    struct basis b = { .comparative = true, .decided = true, .method = METHOD_P99 };
    basis_add(&b, &w[best]);
    int close = -1;                   /* a device best cannot be told from */
    for (unsigned i = 0; i < in->wake.n; i++) {
        if ((int)i == best || !w[i].measured)
            continue;
        basis_add(&b, &w[i]);
        if (order(&w[best], &w[i]) != -1 && close < 0)
            close = (int)i;
    }
    b.decided = close < 0;
    size_t n;
    if (b.decided) {
        char p50[24], irq[24];
        n = (size_t)fmt_snprintf(text, sizeof(text), "%s wakes fastest here: hrtimer callback "
                                 "p50 %s, ", w[best].dev->name,
                                 fmt_ns(p50, sizeof(p50), w[best].cb_p50_ns));
        n += p99_text(text + n, sizeof(text) - n, &w[best]);
        fmt_snprintf(text + n, sizeof(text) - n, " after the deadline (interrupt entry p99 "
                     "%s)%s", fmt_ns(irq, sizeof(irq), w[best].irq_p99_ns),
                     b.n > 1 ? "; below every other device's interval" : "; the only one");
    } else {
        n = (size_t)fmt_snprintf(text, sizeof(text), "too close to call here: %s ",
                                 w[best].dev->name);
        n += p99_text(text + n, sizeof(text) - n, &w[best]);
        n += (size_t)fmt_snprintf(text + n, sizeof(text) - n, " against %s ",
                                  w[close].dev->name);
        n += p99_text(text + n, sizeof(text) - n, &w[close]);
        fmt_snprintf(text + n, sizeof(text) - n, ": the 95 %% intervals overlap");
    }
    claim_on("clockevent", b.decided ? w[best].dev->name : "too_close", text,
             evidence(ev, sizeof(ev), in->wake.from, ":path=callback"), 0, &b);
}

/* text + note (NULL: nothing), within size. */
static void add_note(char *text, size_t size, const char *note)
{
    size_t n = k_strlen(text);
    if (note && n < size)
        k_strlcpy(text + n, note, size - n);
}

/* Would `dev` (the boot CPU's HPET comparator, its TSC-deadline timer) help against the best
 * of the others: by how much at p99. note: a sentence appended to the claim, or NULL. */
static void helps_claim(const struct verdict_input *in, const char *topic,
                        const struct clockevent *dev, const char *note)
{
    const struct verdict_wake *w = in->wake.dev;
    char text[460], route[64], on[80], ev[64];
    ce_devices_route_text(dev, route, sizeof(route));
    fmt_snprintf(on, sizeof(on), "%s%s%s%s", dev ? dev->name : "", route[0] ? " (" : "", route,
                 route[0] ? ")" : "");
    int d = find_wake(in, dev);
    if (d < 0) {
        if (!dev)
            fmt_snprintf(text, sizeof(text), "not measured: no usable clock event device of "
                         "that kind (its clockevent record says why)");
        else if (!dev->usable && dev->unusable_reason)
            fmt_snprintf(text, sizeof(text), "not measured: %s", dev->unusable_reason);
        else
            fmt_snprintf(text, sizeof(text), "not measured: %s has no samples from it",
                         in->wake.from ? in->wake.from : "no experiment");
        add_note(text, sizeof(text), note);
        claim(topic, "unknown", text, "clockevent", 0);
        return;
    }
    evidence(ev, sizeof(ev), in->wake.from, ":path=callback");
    /* Helps when its interval lies below every other device's; does not when another's
     * lies wholly below its own; otherwise too close to call. */
    struct basis b = { .comparative = true, .method = METHOD_P99 };
    basis_add(&b, &w[d]);
    int other = -1, beaten_by = -1, close = -1;
    for (unsigned i = 0; i < in->wake.n; i++) {
        if ((int)i == d || !w[i].measured)
            continue;
        basis_add(&b, &w[i]);
        if (other < 0 || w[i].cb_p99_ns < w[other].cb_p99_ns)
            other = (int)i;
        int o = order(&w[d], &w[i]);
        if (o == 1 && (beaten_by < 0 || w[i].cb_p99_ns < w[beaten_by].cb_p99_ns))
            beaten_by = (int)i;
        if (o == 0 && close < 0)
            close = (int)i;
    }
    if (other < 0) {
        fmt_snprintf(text, sizeof(text), "%s is the only one-shot device measured: nothing to "
                     "compare with", on);
        add_note(text, sizeof(text), note);
        claim(topic, "only", text, ev, 0);
        return;
    }
    const char *choice;
    int vs;
    size_t n;
    if (beaten_by >= 0) {
        choice = "no";
        vs = beaten_by;
        n = (size_t)fmt_snprintf(text, sizeof(text), "does not help: hrtimer callback ");
    } else if (close < 0) {
        choice = "helps";
        vs = other;
        n = (size_t)fmt_snprintf(text, sizeof(text), "helps: hrtimer callback ");
    } else {
        choice = "too_close";
        vs = close;
        n = (size_t)fmt_snprintf(text, sizeof(text), "too close to call here: hrtimer callback ");
    }
    b.decided = choice[0] != 't';
    n += p99_text(text + n, sizeof(text) - n, &w[d]);
    n += (size_t)fmt_snprintf(text + n, sizeof(text) - n, " on %s against ", on);
    n += p99_text(text + n, sizeof(text) - n, &w[vs]);
    n += (size_t)fmt_snprintf(text + n, sizeof(text) - n, " on %s", w[vs].dev->name);
    if (!b.decided)
        fmt_snprintf(text + n, sizeof(text) - n, ": the 95 %% intervals overlap");
    add_note(text, sizeof(text), note);
    claim_on(topic, choice, text, ev, 0, &b);
}

/* TSC-deadline on a CPU that Linux's errata table names (lapic_timer.h): with a microcode
 * below the fix, its interrupts may come late or not at all, so the device was not used and
 * no latency of it is published; under a hypervisor (or with the revision unreadable) the
 * microcode is unknown, and the measured figures carry that note. */
static void deadline_claim(const struct verdict_input *in)
{
    struct lapic_deadline_erratum e;
    char text[240], note[160];
    lapic_timer_deadline_erratum(&cpu_facts, &e);
    if (cpu_facts.tsc_deadline && e.affected) {
        fmt_snprintf(text, sizeof(text),
                     "not measured: known erratum on this microcode (0x%x; minimum 0x%x; "
                     "Linux's table): its interrupts may come late or not at all, which is "
                     "the erratum, not this CPU's latency", cpu_facts.microcode, e.min_microcode);
        claim("tsc_deadline", "erratum", text, "cpu", "clockevent:name=tsc_deadline");
        return;
    }
    if (cpu_facts.tsc_deadline && e.unknown)
        fmt_snprintf(note, sizeof(note), "; this model has a TSC-deadline erratum below "
                     "microcode 0x%x (Linux's table) and the microcode here is %s", e.min_microcode,
                     cpu_facts.hypervisor ? "the hypervisor's: whether it applies is unknown"
                                          : "unreadable: whether it applies is unknown");
    helps_claim(in, "tsc_deadline", ce_devices_deadline(0),
                cpu_facts.tsc_deadline && e.unknown ? note : NULL);
}

static void tick_claim(const struct verdict_input *in)
{
    const char *device = in->tick.device ? in->tick.device : "?";
    char text[260], choice[24], ev[48], costs[24], los[24], his[24];
    if (!in->tick.n) {
        fmt_snprintf(text, sizeof(text), "not measured: %s did not run, or none of its rows was "
                     "valid (ticks went missing: its results say how many)",
                     in->tick.from ? in->tick.from : "no experiment");
        claim("tick_rate", 0, text, 0, 0);
        return;
    }
    evidence(ev, sizeof(ev), in->tick.from, 0);
    /* One tick's cost, as an interval: at each tick size the repeats bound it to the
     * estimate +- their spread; the median over the tick sizes of the upper ends, and of
     * the lower ends. The upper end gives the rate that surely keeps the tick under 1 % of
     * the CPU (hz_safe), the lower end, when above zero, the rate beyond which it surely
     * costs more (hz_over). */
    int64_t hi[VERDICT_MAX_TICKS], lo[VERDICT_MAX_TICKS], est[VERDICT_MAX_TICKS];
    unsigned n = in->tick.n;
    for (unsigned i = 0; i < n; i++) {
        hi[i] = in->tick.at[i].per_tick_bound_ns;
        lo[i] = in->tick.at[i].per_tick_lo_ns;
        est[i] = in->tick.at[i].per_tick_ns;
    }
    sort_i64(hi, n);
    sort_i64(lo, n);
    sort_i64(est, n);
    int64_t cost = hi[n / 2] > 0 ? hi[n / 2] : 1, floor = lo[n / 2] > 0 ? lo[n / 2] : 0;
    struct basis b = { .comparative = true,
                       .method = "the spread of the repeats: at each tick size one tick's "
                                 "cost lies within the estimate +- the range of the repeats' "
                                 "differences; the median over the tick sizes of each end" };
    fmt_snprintf(b.iv[0].what, sizeof(b.iv[0].what), "one tick on %s", device);
    b.iv[0].value = est[n / 2];
    b.iv[0].lo = floor;
    b.iv[0].hi = cost;
    b.n = 1;
    if (cost >= 1000000) {
        /* A tick that may cost a whole millisecond: the repeats disagree too much (a VM's
         * exits, a loaded host) for any rate to be claimed from them. */
        fmt_snprintf(text, sizeof(text),
                     "not supported by the evidence: the repeats on %s bound one tick's cost "
                     "only by %s, a whole period at HZ=1000 or more, so no rate is claimed",
                     device, fmt_ns(costs, sizeof(costs), cost));
        claim_on("tick_rate", "unknown", text, ev, 0, &b);
        return;
    }
    b.decided = true;
    uint64_t hz_safe = 10000000ull / (uint64_t)cost;        /* 1 % of 1e9 ns per second */
    /* ticklab's tick goes no faster than TICK_MIN_PERIOD_NS: no claim beyond what it ran */
    uint64_t hz_max = NSEC_PER_SEC / TICK_MIN_PERIOD_NS;
    bool capped = hz_safe > hz_max;
    if (capped)
        hz_safe = hz_max;
    b.hz_safe = hz_safe;
    b.hz_over = floor > 0 ? 10000000ull / (uint64_t)floor + 1 : 0;
    int64_t ppm_1000 = cost;      /* at HZ=1000: cost ns x 1000 per s / 1e9 ns, in ppm */
    char pct[24];
    size_t m = (size_t)fmt_snprintf(text, sizeof(text),
                 "one tick on %s costs %s, within [%s, %s] (the repeats' spread): at "
                 "most %s %% of the CPU at HZ=1000; HZ=%llu%s or less keeps it under 1 %%",
                 device, fmt_ns(costs, sizeof(costs), est[n / 2]),
                 fmt_ns_in(los, sizeof(los), floor, est[n / 2], false),
                 fmt_ns_in(his, sizeof(his), cost, est[n / 2], false),
                 fmt_fixed(pct, sizeof(pct), ppm_1000, 4, false),
                 (unsigned long long)hz_safe, capped ? " (ticklab's fastest tick)" : "");
    if (b.hz_over)
        fmt_snprintf(text + m, sizeof(text) - m, "; from HZ=%llu on it surely costs more",
                     (unsigned long long)b.hz_over);
    fmt_snprintf(choice, sizeof(choice), "%llu", (unsigned long long)hz_safe);
    claim_on("tick_rate", choice, text, ev, 0, &b);
}

static void tsc_claim(const struct verdict_input *in)
{
    char text[360], cpus[96], ev[48];
    if (!in->tsc.done) {
        fmt_snprintf(text, sizeof(text), "not measured: %s did not run or one CPU is online",
                     in->tsc.from ? in->tsc.from : "no experiment");
        claim(in->tsc.topic ? in->tsc.topic : "tsc", 0, text, 0, 0);
        return;
    }
    smp_coverage(cpus, sizeof(cpus));
    bool synced = in->tsc.backward == 0 &&
                  (uint64_t)in->tsc.max_abs_offset_cyc <= in->tsc.offset_uncertainty_cyc;
    fmt_snprintf(text, sizeof(text),
                 "%s: %llu backward steps over %u CPU pairs (largest %llu cycles); largest "
                 "offset %lld cycles, to within %llu; covered: %s", synced
                 ? "one clock on every CPU started" : "the CPUs' TSCs differ",
                 (unsigned long long)in->tsc.backward, in->tsc.pairs,
                 (unsigned long long)in->tsc.max_backward_cyc,
                 (long long)in->tsc.max_abs_offset_cyc,
                 (unsigned long long)in->tsc.offset_uncertainty_cyc, cpus);
    claim(in->tsc.topic ? in->tsc.topic : "tsc", synced ? "synchronized" : "warped", text,
          evidence(ev, sizeof(ev), in->tsc.from, ":mode=ipi"), 0);
}

static void stalls_claim(const struct verdict_input *in)
{
    char text[200], ev[48];
    if (!in->stalls.done) {
        fmt_snprintf(text, sizeof(text), "not measured: %s did not run",
                     in->stalls.from ? in->stalls.from : "no experiment");
        claim("stalls", 0, text, 0, 0);
        return;
    }
    char longest[24];
    fmt_snprintf(text, sizeof(text), "%llu gaps with interrupts off in %llu ms, the longest "
                 "%s%s", (unsigned long long)in->stalls.gaps,
                 (unsigned long long)(in->stalls.window_ns / 1000000ull),
                 fmt_ns(longest, sizeof(longest), (int64_t)in->stalls.max_gap_ns),
                 in->stalls.gaps ? ": latency figures include the machine's own stalls"
                                 : ": the machine does not steal time");
    claim("stalls", in->stalls.gaps ? "stalls" : "quiet", text,
          evidence(ev, sizeof(ev), in->stalls.from, 0), 0);
}

void verdict_report(const struct verdict_input *in, const char *clocksource_asked)
{
    n_last_wake = in->wake.n < VERDICT_MAX_DEVICES ? in->wake.n : VERDICT_MAX_DEVICES;
    for (unsigned i = 0; i < n_last_wake; i++)
        last_wake[i] = in->wake.dev[i];
    kprintf("\nVerdict (each line from this run's figures)\n");
    environment_claim();
    clocksource_claim(clocksource_asked);
    claim_clockevent(in);
    helps_claim(in, "hpet", ce_devices_hpet_of(0, 0), NULL);
    deadline_claim(in);
    tick_claim(in);
    stalls_claim(in);
    tsc_claim(in);
}
