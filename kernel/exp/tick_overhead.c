/* kernel/exp/tick_overhead.c - `tick-overhead`: the CPU the periodic tick takes. A fixed
 * empty loop (N iterations of reading the TSC) is timed with no tick at all (tickless: no
 * interrupt can come), then with the tick at 100 us, 300 us, 1 ms, 3 ms and 10 ms; what the
 * loop lost is the tick's cost. The published 1998 figures: 10.2 % at 100 us, 3.1 % at 1 ms.
 *
 * A second run of the same reads, with the interrupt path's timestamps on (irq_probe,
 * kernel/arch/trap.h), splits each tick interrupt in TSC cycles (kept out of the timed runs,
 * so the overhead holds neither the stamps nor the bookkeeping):
 *   entry    the loop's last TSC read before the interrupt -> the entry stub's RDTSC
 *            (the CPU's interrupt delivery plus the stub's first instructions);
 *   handler  entry -> return to the stub, less the EOI (dispatch, device acknowledgement,
 *            the tick's work: jiffies, timekeeping, the wheel);
 *   eoi      the interrupt controller's end-of-interrupt write;
 *   return   the return to the stub -> the loop's first TSC read after it (register
 *            restore and IRETQ).
 * Each part includes a few instructions of the loop or of the probe itself. The loop's time
 * is the minimum over the repeats (the least disturbed run). */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "kernel/arch/trap.h"
#include "kernel/exp/harness.h"
#include "kernel/exp/verdict.h"
#include "kernel/report/console.h"
#include "kernel/timers/clocks.h"
#include "ticklab/tick.h"
#include "ticklab/stats.h"

#define MAX_SPLITS 4096u

static const uint64_t ticks_ns[] = { 100000, 300000, 1000000, 3000000, 10000000 };
#define N_TICKS (sizeof(ticks_ns) / sizeof(ticks_ns[0]))

static uint64_t split[4][MAX_SPLITS];     /* entry, handler, eoi, return */
static unsigned n_split;

/* The fixed empty loop: n TSC reads with interrupts on, nothing else; its length in TSC
 * cycles. */
static uint64_t plain_loop(uint64_t n)
{
    unsigned long flags = irq_save();
    irq_enable();
    uint64_t t0 = rdtsc(), last = t0;
    for (uint64_t i = 0; i < n; i++)
        last = rdtsc();
    irq_disable();
    irq_restore(flags);
    return last - t0;       /* RDTSC is a volatile asm: the loop cannot be optimised away */
}

/* The same reads with the interrupt path's timestamps on, to split each interrupt that
 * arrives while it runs (kept apart from the timed loop: neither the probe's stamps nor this
 * bookkeeping counts in the overhead). */
static uint64_t split_loop(uint64_t n)
{
    unsigned long flags = irq_save();
    irq_probe.on = irq_probe.split = true;
    uint64_t seq = irq_probe.seq;
    irq_enable();
    uint64_t prev = rdtsc(), t0 = prev;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t now = rdtsc();
        if (irq_probe.seq != seq) {
            seq = irq_probe.seq;
            uint64_t e = irq_probe.entry_tsc, b = irq_probe.eoi_begin_tsc,
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
    return prev - t0;
}

static uint64_t timed_loop(uint64_t n, unsigned repeats, uint64_t *ticks)
{
    uint64_t best = UINT64_MAX, ticks0 = tick_info()->ticks;
    for (unsigned r = 0; r < repeats; r++) {
        uint64_t c = plain_loop(n);
        if (c < best)
            best = c;
    }
    *ticks = (tick_info()->ticks - ticks0) / repeats;
    return tsc_cyc_to_ns(best);
}

static uint64_t median_of(unsigned part)
{
    if (!n_split)
        return 0;
    struct stats st;
    stats_u64(split[part], n_split, &st);
    return (uint64_t)st.median;
}

static void run(void)
{
    uint64_t target_ns = exp_size(50, 1000, 5000) * 1000000ull;
    unsigned repeats = (unsigned)exp_size(1, 3, 10);
    exp_tick_off();
    /* size the loop: 100000 iterations timed, scaled to the target */
    uint64_t ticks;
    uint64_t probe_ns = timed_loop(100000, 1, &ticks);
    uint64_t n = probe_ns ? target_ns * 100000ull / probe_ns : 100000ull;
    n_split = 0;
    uint64_t base_ns = timed_loop(n, repeats, &ticks);
    kprintf("\ntick-overhead: an empty loop of %llu iterations, %llu ns with no tick (TSC)\n",
            (unsigned long long)n, (unsigned long long)base_ns);
    kprintf("  tick ns   loop ns    ticks  overhead   per tick ns  entry handler eoi return "
            "(median TSC cycles)\n");
    struct rec r;
    exp_result_begin(&r);
    json_u64(&r.j, "tick_ns", 0);
    json_str(&r.j, "clock", "tsc");
    json_u64(&r.j, "iterations", n);
    json_u64(&r.j, "loop_ns", base_ns);
    json_u64(&r.j, "baseline_ns", base_ns);
    json_u64(&r.j, "ticks", ticks);
    json_fixed(&r.j, "overhead_pct", 0, 4);
    rec_emit(&r);
    findings.n_tick = 0;
    for (unsigned t = 0; t < N_TICKS; t++) {
        if (!exp_tick_set(ticks_ns[t], 0))
            continue;
        const struct tick_info *ti = tick_info();
        uint64_t loop_ns = timed_loop(n, repeats, &ticks);
        n_split = 0;
        uint64_t split_ticks0 = ti->ticks;
        split_loop(n);
        uint64_t split_ticks = ti->ticks - split_ticks0;
        int64_t lost = (int64_t)loop_ns - (int64_t)base_ns;
        int64_t ppm = base_ns ? lost * 1000000 / (int64_t)base_ns : 0;
        int64_t per_tick = ticks ? lost / (int64_t)ticks : 0;
        uint64_t med[4];
        for (unsigned p = 0; p < 4; p++)
            med[p] = median_of(p);
        exp_result_begin(&r);
        json_u64(&r.j, "tick_ns", ti->period_ns);
        json_str(&r.j, "device", ti->dev->name);
        json_str(&r.j, "mode", ti->periodic ? "periodic" : "oneshot");
        json_str(&r.j, "clock", "tsc");
        json_u64(&r.j, "iterations", n);
        json_u64(&r.j, "loop_ns", loop_ns);
        json_u64(&r.j, "baseline_ns", base_ns);
        json_u64(&r.j, "ticks", ticks);
        json_fixed(&r.j, "overhead_pct", ppm, 4);     /* 1 ppm = 0.0001 % */
        json_i64(&r.j, "per_tick_ns", per_tick);
        json_u64(&r.j, "split_ticks", split_ticks);
        json_u64(&r.j, "split_samples", n_split);
        json_u64(&r.j, "entry_cyc", med[0]);
        json_u64(&r.j, "handler_cyc", med[1]);
        json_u64(&r.j, "eoi_cyc", med[2]);
        json_u64(&r.j, "return_cyc", med[3]);
        json_u64(&r.j, "total_cyc", med[0] + med[1] + med[2] + med[3]);
        rec_emit(&r);
        kprintf("  %8llu %9llu %8llu  %3lld.%04lld%%  %9lld     %5llu %7llu %3llu %6llu\n",
                (unsigned long long)ti->period_ns, (unsigned long long)loop_ns,
                (unsigned long long)ticks, (long long)(ppm / 10000),
                (long long)((ppm < 0 ? -ppm : ppm) % 10000), (long long)per_tick,
                (unsigned long long)med[0], (unsigned long long)med[1],
                (unsigned long long)med[2], (unsigned long long)med[3]);
        if (findings.n_tick < FINDINGS_MAX_TICKS) {
            findings.tick_device = ti->dev->name;
            findings.tick[findings.n_tick].tick_ns = ti->period_ns;
            findings.tick[findings.n_tick].overhead_ppm = ppm;
            findings.tick[findings.n_tick].per_tick_ns = per_tick;
            findings.n_tick++;
        }
        exp_progress("tick size done", false);
    }
}

const struct experiment exp_tick_overhead = {
    .name = "tick-overhead",
    .summary = "CPU lost to the periodic tick at 100 us .. 10 ms, and one tick's cost split",
    .run = run,
};
