/* kernel/exp/hwlat.c - `hwlat`: time the machine takes away from a CPU that has interrupts
 * off. The TSC is read in a tight loop with interrupts disabled; any step between two
 * consecutive reads above the threshold (10 us by default, hwlat_threshold_ns=) is a gap:
 * an SMI, firmware, a hypervisor or emulator stall. MSR_SMI_COUNT (0x34, Intel) is read
 * before and after where the CPU has it, so SMIs can be told apart from other stalls.
 * Nothing can interrupt the loop, so the tick is irrelevant and left off. */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "kernel/arch/machine_events.h"
#include "kernel/config.h"
#include "kernel/exp/harness.h"
#include "kernel/exp/verdict.h"
#include "kernel/report/console.h"
#include "kernel/timers/clocks.h"

#define MSR_SMI_COUNT 0x34u
#define WINDOWS_MAX 1000u

struct window {
    uint64_t gaps, max_gap_cyc, total_gap_cyc, reads;
    uint64_t nmi, nmi_cyc;      /* NMIs taken inside the window, and their handler's time:
                                   each is latency the machine imposed (Linux's hwlat tracer
                                   counts them per sample the same way) */
};

static struct window one_window(uint64_t window_cyc, uint64_t threshold_cyc)
{
    struct window w = { 0 };
    unsigned long flags = irq_save();
    const volatile struct window_counts *mine = &machine_events[machine_events_cpu()];
    uint64_t nmi0 = mine->nmi, nmi_cyc0 = mine->nmi_cyc;
    uint64_t start = rdtsc(), prev = start;
    while (prev - start < window_cyc) {
        uint64_t now = rdtsc();
        uint64_t d = now - prev;
        if (d > threshold_cyc) {
            w.gaps++;
            w.total_gap_cyc += d;
            if (d > w.max_gap_cyc)
                w.max_gap_cyc = d;
        }
        w.reads++;
        prev = now;
    }
    w.nmi = mine->nmi - nmi0;
    w.nmi_cyc = mine->nmi_cyc - nmi_cyc0;
    irq_restore(flags);
    return w;
}

/* hwlat_threshold_ns=: the gap that counts. */
static uint64_t threshold_word_ns = 10000;
static struct cmdline_opt options[] = {
    { .key = "hwlat_threshold_ns", .type = CMDLINE_UINT, .dest = &threshold_word_ns,
      .min = 100, .max = 100000000, .accepted = "100..100000000 (ns)" },
};

/* What the verdict takes from this run (summarize). */
static struct stalls_found {
    bool done;
    uint64_t gaps, max_gap_ns, window_ns;
} found;

static void run(const struct exp_env *env)
{
    (void)env;
    uint64_t window_ns = exp_size(50, 1000, 1000) * 1000000ull;
    unsigned windows = (unsigned)exp_size(2, 10, WINDOWS_MAX);
    uint64_t threshold_ns = threshold_word_ns;
    exp_tick_off();
    uint64_t smi0 = 0, smi1 = 0;
    bool smi = rdmsr_safe(MSR_SMI_COUNT, &smi0) == 0;
    kprintf("\nhwlat: interrupts off, TSC read in a loop, %u windows of %llu ms; gaps over %llu "
            "ns\n", windows, (unsigned long long)(window_ns / 1000000ull),
            (unsigned long long)threshold_ns);
    uint64_t window_cyc = tsc_ns_to_cyc(window_ns), threshold_cyc = tsc_ns_to_cyc(threshold_ns);
    struct window all = { 0 };
    for (unsigned i = 0; i < windows && exp_budget_left(); i++) {
        if (i % 10 == 0)
            exp_phase("windows %u..%u of %u", i + 1, i + 10 < windows ? i + 10 : windows,
                      windows);
        struct window w = one_window(window_cyc, threshold_cyc);
        all.gaps += w.gaps;
        all.total_gap_cyc += w.total_gap_cyc;
        all.reads += w.reads;
        all.nmi += w.nmi;
        all.nmi_cyc += w.nmi_cyc;
        if (w.max_gap_cyc > all.max_gap_cyc)
            all.max_gap_cyc = w.max_gap_cyc;
    }
    if (smi)
        smi = rdmsr_safe(MSR_SMI_COUNT, &smi1) == 0;
    uint64_t max_gap_ns = tsc_cyc_to_ns(all.max_gap_cyc);
    struct rec r;
    exp_result_begin(&r);
    json_str(&r.j, "clock", "tsc");
    json_u64(&r.j, "window_ns", window_ns);
    json_u64(&r.j, "windows", windows);
    json_u64(&r.j, "threshold_ns", threshold_ns);
    json_u64(&r.j, "reads", all.reads);
    json_u64(&r.j, "gaps", all.gaps);
    json_u64(&r.j, "max_gap_ns", max_gap_ns);
    json_u64(&r.j, "total_gap_ns", tsc_cyc_to_ns(all.total_gap_cyc));
    if (smi)
        json_u64(&r.j, "smi_delta", smi1 - smi0);
    else
        json_null(&r.j, "smi_delta");
    json_bool(&r.j, "smi_count_readable", smi);
    if (all.nmi) {      /* only when some came: a quiet run's row is what it always was */
        json_u64(&r.j, "nmi_count", all.nmi);
        json_u64(&r.j, "nmi_total_ns", tsc_cyc_to_ns(all.nmi_cyc));
    }
    rec_emit(&r);
    kprintf("  %llu gaps over %llu ns in %llu ms, longest %llu ns; SMIs: %s\n",
            (unsigned long long)all.gaps, (unsigned long long)threshold_ns,
            (unsigned long long)(window_ns * windows / 1000000ull),
            (unsigned long long)max_gap_ns, smi ? "counted" : "MSR_SMI_COUNT not readable");
    if (smi)
        kprintf("  SMI count went up by %llu\n", (unsigned long long)(smi1 - smi0));
    if (all.nmi)
        kprintf("  %llu NMI(s) inside the windows, %llu ns in their handler\n",
                (unsigned long long)all.nmi, (unsigned long long)tsc_cyc_to_ns(all.nmi_cyc));
    found = (struct stalls_found){ true, all.gaps, max_gap_ns, window_ns * windows };
}

static void summarize(struct verdict_input *v)
{
    v->stalls.from = "hwlat";
    v->stalls.done = found.done;
    v->stalls.gaps = found.gaps;
    v->stalls.max_gap_ns = found.max_gap_ns;
    v->stalls.window_ns = found.window_ns;
}

const struct experiment exp_hwlat = {
    .name = "hwlat",
    .summary = "interrupts off, TSC in a tight loop: gaps the machine takes (SMIs, stalls)",
    .rows = "window_ns threshold_ns",
    .options = options,
    .n_options = sizeof(options) / sizeof(options[0]),
    .run = run,
    .summarize = summarize,
    .budget_s = { 10, 60, 3600 },
};
