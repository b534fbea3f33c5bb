/* kernel/exp/verdict.c - see verdict.h. Every claim is drawn from figures measured in this
 * run and names them in "evidence" (record type, and for results the experiment and the keys
 * that pick the row); a claim whose figures were not measured says so instead. */
#include "kernel/exp/verdict.h"

#include "ticklab/tick.h"

#include "kernel/config.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/timers/ce_devices.h"
#include "kernel/timers/clocks.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"
#include "ticklab/lapic_timer.h"

struct findings findings;

/* The claims as sent, for the on-screen summary. */
#define MAX_CLAIMS 10
static char claims[MAX_CLAIMS][240];
static const char *claim_topics[MAX_CLAIMS];
static unsigned n_claims;

static void claim(const char *topic, const char *choice, const char *text, const char *ev1,
                  const char *ev2)
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
    rec_emit(&r);
    kprintf("  %-12s %s\n", topic, text);
    if (n_claims < MAX_CLAIMS) {
        claim_topics[n_claims] = topic;
        k_strlcpy(claims[n_claims++], text, sizeof(claims[0]));
    }
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

static int find_wake(const struct clockevent *dev)
{
    for (unsigned i = 0; dev && i < findings.n_wake; i++)
        if (findings.wake[i].measured && findings.wake[i].dev == dev)
            return (int)i;
    return -1;
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
    size_t n = (size_t)fmt_snprintf(text, sizeof(text), "%s; one RDTSC costs %llu cycles (%llu ns)%s; "
                                    "a clock read:", what,
                                    (unsigned long long)clock_facts.rdtsc_cost_cyc,
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

static void clocksource_claim(void)
{
    struct clocksource *cs = clocksource_current();
    char text[200];
    if (!cs) {
        claim("clocksource", 0, "no usable clock source", "clocksource", 0);
        return;
    }
    fmt_snprintf(text, sizeof(text),
                 "%s: %s (rating %d), read in %u TSC cycles (median); time_ns() runs on it",
                 cs->name, cfg.clocksource[0] ? "chosen by clocksource= on the command line"
                                              : "the highest-rated usable source",
                 cs->rating, cs->read_cost_cyc);
    char ev[48];
    fmt_snprintf(ev, sizeof(ev), "clocksource:name=%s", cs->name);
    claim("clocksource", cs->name, text, "clocksource_selected", ev);
}

/* The device whose hrtimer callback p99 is lowest. */
static void claim_clockevent(void)
{
    int best = -1;
    for (unsigned i = 0; i < findings.n_wake; i++)
        if (findings.wake[i].measured &&
            (best < 0 || findings.wake[i].cb_p99_ns < findings.wake[best].cb_p99_ns))
            best = (int)i;
    if (best < 0) {
        claim("clockevent", 0, "not measured: wakeup-latency did not run or found no device",
              0, 0);
        return;
    }
    int next = -1;
    for (unsigned i = 0; i < findings.n_wake; i++)
        if ((int)i != best && findings.wake[i].measured && (next < 0 || findings.wake[i].cb_p99_ns < findings.wake[next].cb_p99_ns))
            next = (int)i;
    char text[240], ev[64];
    size_t n = (size_t)fmt_snprintf(text, sizeof(text),
                 "%s wakes fastest here: hrtimer callback p50 %lld ns, p99 %lld ns after the "
                 "deadline (interrupt entry p99 %lld ns)", findings.wake[best].dev->name,
                 (long long)findings.wake[best].cb_p50_ns, (long long)findings.wake[best].cb_p99_ns,
                 (long long)findings.wake[best].irq_p99_ns);
    if (next >= 0)
        fmt_snprintf(text + n, sizeof(text) - n, "; next %s, p99 %lld ns slower",
                     findings.wake[next].dev->name,
                     (long long)(findings.wake[next].cb_p99_ns - findings.wake[best].cb_p99_ns));
    fmt_snprintf(ev, sizeof(ev), "result:wakeup-latency:path=callback");
    claim("clockevent", findings.wake[best].dev->name, text, ev, 0);
}

/* Would `dev` (the boot CPU's HPET comparator, its TSC-deadline timer) help against the best
 * of the others: by how much at p99. note: a sentence added to the claim, or NULL. */
static void helps_claim(const char *topic, const struct clockevent *dev, const char *note)
{
    char text[300], route[64], on[80];
    const char *choice, *evidence = "result:wakeup-latency:path=callback";
    ce_devices_route_text(dev, route, sizeof(route));
    fmt_snprintf(on, sizeof(on), "%s%s%s%s", dev ? dev->name : "", route[0] ? " (" : "", route,
                 route[0] ? ")" : "");
    int d = find_wake(dev), other = -1;
    for (unsigned i = 0; d >= 0 && i < findings.n_wake; i++)
        if ((int)i != d && findings.wake[i].measured && (other < 0 || findings.wake[i].cb_p99_ns < findings.wake[other].cb_p99_ns))
            other = (int)i;
    if (d < 0) {
        fmt_snprintf(text, sizeof(text), "not measured: %s",
                     !dev ? "no usable clock event device of that kind (its clockevent record "
                            "says why)"
                          : !dev->usable && dev->unusable_reason ? dev->unusable_reason
                                                                 : "wakeup-latency has no samples from it");
        choice = "unknown";
        evidence = "clockevent";
    } else if (other < 0) {
        fmt_snprintf(text, sizeof(text), "%s is the only one-shot device measured: nothing to "
                     "compare with", on);
        choice = "only";
    } else {
        int64_t gain = findings.wake[other].cb_p99_ns - findings.wake[d].cb_p99_ns;
        fmt_snprintf(text, sizeof(text),
                     "%s: hrtimer callback p99 %lld ns on %s against %lld ns on %s (%s%lld ns)",
                     gain > 0 ? "helps" : "does not help", (long long)findings.wake[d].cb_p99_ns,
                     on, (long long)findings.wake[other].cb_p99_ns, findings.wake[other].dev->name,
                     gain > 0 ? "better by " : "worse or equal by ",
                     (long long)(gain > 0 ? gain : -gain));
        choice = gain > 0 ? "helps" : "no";
    }
    if (note) {
        size_t n = k_strlen(text);
        k_strlcpy(text + n, note, sizeof(text) - n);
    }
    claim(topic, choice, text, evidence, 0);
}

/* TSC-deadline on a CPU that Linux's errata table names (lapic_timer.h): with a microcode
 * below the fix, its interrupts may come late or not at all, so the device was not used and
 * no latency of it is published; under a hypervisor the microcode is unknown, and the
 * measured figures carry that note. */
static void deadline_claim(void)
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
    helps_claim("tsc_deadline", ce_devices_deadline(0),
                cpu_facts.tsc_deadline && e.unknown ? note : NULL);
}

static void tick_claim(void)
{
    if (!findings.n_tick) {
        claim("tick_rate", 0, "not measured: tick-overhead did not run", 0, 0);
        return;
    }
    /* The cost of one tick: the median over the tick sizes of what each supports at most
     * (estimate + uncertainty), so the claim is never more than the repeats allow. */
    int64_t per[FINDINGS_MAX_TICKS];
    unsigned n = findings.n_tick;
    for (unsigned i = 0; i < n; i++)
        per[i] = findings.tick[i].per_tick_bound_ns;
    for (unsigned i = 1; i < n; i++)
        for (unsigned k = i; k > 0 && per[k - 1] > per[k]; k--) {
            int64_t x = per[k];
            per[k] = per[k - 1];
            per[k - 1] = x;
        }
    int64_t cost = per[n / 2] > 0 ? per[n / 2] : 1;
    char text[220], choice[24];
    if (cost >= 1000000) {
        /* A tick that may cost a whole millisecond: the repeats disagree too much (a VM's
         * exits, a loaded host) for any rate to be claimed from them. */
        fmt_snprintf(text, sizeof(text),
                     "not supported by the evidence: the repeats on %s bound one tick's cost "
                     "only by %lld ns, a whole period at HZ=1000 or more, so no rate is claimed",
                     findings.tick_device ? findings.tick_device : "?", (long long)cost);
        claim("tick_rate", "unknown", text, "result:tick-overhead", 0);
        return;
    }
    uint64_t hz_1pct = 10000000ull / (uint64_t)cost;        /* 1 % of 1e9 ns per second */
    /* ticklab's tick goes no faster than TICK_MIN_PERIOD_NS: no claim beyond what it ran */
    uint64_t hz_max = NSEC_PER_SEC / TICK_MIN_PERIOD_NS;
    bool capped = hz_1pct > hz_max;
    if (capped)
        hz_1pct = hz_max;
    int64_t ppm_1000 = cost;      /* at HZ=1000: cost ns x 1000 per s / 1e9 ns, in ppm */
    char pct[24];
    fmt_snprintf(text, sizeof(text),
                 "one tick on %s costs at most %lld ns (the repeats' bound), %s %% of "
                 "the CPU at HZ=1000; up to HZ=%llu%s keeps it under 1 %%",
                 findings.tick_device ? findings.tick_device : "?", (long long)cost,
                 fmt_fixed(pct, sizeof(pct), ppm_1000, 4, false),
                 (unsigned long long)hz_1pct, capped ? " (ticklab's fastest tick)" : "");
    fmt_snprintf(choice, sizeof(choice), "%llu", (unsigned long long)hz_1pct);
    claim("tick_rate", choice, text, "result:tick-overhead", 0);
}

static void tsc_claim(void)
{
    char text[240];
    if (!findings.tsc_sync_done) {
        claim("tsc_sync", 0, "not measured: tsc-sync did not run or one CPU is online", 0, 0);
        return;
    }
    bool synced = findings.tsc_backward == 0 &&
                  (uint64_t)findings.tsc_max_abs_offset_cyc <= findings.tsc_offset_uncertainty_cyc;
    fmt_snprintf(text, sizeof(text),
                 "%s: %llu backward steps over %u CPU pairs (largest %llu cycles); largest "
                 "offset %lld cycles, to within %llu", synced ? "one clock on every CPU"
                                                              : "the CPUs' TSCs differ",
                 (unsigned long long)findings.tsc_backward, findings.tsc_pairs,
                 (unsigned long long)findings.tsc_max_backward_cyc,
                 (long long)findings.tsc_max_abs_offset_cyc,
                 (unsigned long long)findings.tsc_offset_uncertainty_cyc);
    claim("tsc_sync", synced ? "synchronized" : "warped", text, "result:tsc-sync:mode=ipi", 0);
}

static void hwlat_claim(void)
{
    if (!findings.hwlat_done) {
        claim("stalls", 0, "not measured: hwlat did not run", 0, 0);
        return;
    }
    char text[200];
    fmt_snprintf(text, sizeof(text), "%llu gaps with interrupts off in %llu ms, the longest "
                 "%llu ns%s", (unsigned long long)findings.hwlat_gaps,
                 (unsigned long long)(findings.hwlat_window_ns / 1000000ull),
                 (unsigned long long)findings.hwlat_max_gap_ns,
                 findings.hwlat_gaps ? ": latency figures include the machine's own stalls"
                                     : ": the machine does not steal time");
    claim("stalls", findings.hwlat_gaps ? "stalls" : "quiet", text, "result:hwlat", 0);
}

void verdict_report(void)
{
    kprintf("\nVerdict (each line from this run's figures)\n");
    environment_claim();
    clocksource_claim();
    claim_clockevent();
    helps_claim("hpet", ce_devices_hpet_of(0, 0), NULL);
    deadline_claim();
    tick_claim();
    hwlat_claim();
    tsc_claim();
}
