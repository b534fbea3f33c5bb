/* kernel/exp/hrtimer_cost.c - `hrtimer-cost`: TSC cycles, in the guest, for the hrtimer
 * operations, on every one-shot device (an hrtimer base on each in turn; the tick is stopped
 * so that its device can be measured too). Two variants, side by side:
 *
 * `batch` (the source's way: NuttX's figures are averages over a million operations). A
 * loop of the operation runs in chunks, each timed by one pair of ordered TSC reads, each
 * chunk long enough (CHUNK_NS) that the pair's own cost, measured and subtracted, is a small
 * fraction of a cycle per operation; BATCHES batches of up to 1e6 / BATCHES operations each
 * (fewer where one operation is a device write that takes microseconds, cut at batch_ns).
 * `mean_cyc` is the mean of the batches' means and `uncertainty_cyc` half their spread; a
 * mean within its uncertainty of zero says so (`below_resolution`) instead of printing a
 * number it cannot support. Because the clock is read once a chunk, this gives real cycle
 * counts even where a clock read costs thousands (a hypervisor that traps RDTSC). Rows:
 *   queue_insert        tq_insert() alone, deadlines in increasing order
 *   restart             hrtimer_start() of a queued timer, behind the head (no interrupt
 *                       pair: ticklab's hrtimer calls take none; NuttX's "about 13")
 *   restart_irqsave     the same inside irq_save() / irq_restore(), as NuttX's restart
 *                       takes its interrupt pair (its 48)
 *   cancel_restart      hrtimer_cancel() then hrtimer_start(), behind the head, no pair
 *   cancel_restart_irqsave  the two inside one irq_save() / irq_restore() pair (NuttX's 73,
 *                       "including the synchronization")
 *   restart_reprogram   hrtimer_start() of the head timer to a new earliest deadline: the
 *                       device is reprogrammed every time (the source: over 1000)
 *   program_device      clockevent_program_ns() alone: one device write
 * and once, device-independent, irq_save_restore (NuttX's 35). The experiment runs with
 * interrupts off, so the pair's restore sets nothing back on: the same pair in every row.
 *
 * `per_op` (ticklab's: the spread, not just the mean). Each operation timed alone between
 * two ordered TSC reads with interrupts off; the pair's cost is included and reported beside
 * it (`pair_cyc`), so where a clock read is expensive these figures are mostly the read:
 *   start_no_reprogram   start a timer behind an earlier one (the queue only)
 *   cancel_no_reprogram  cancel that timer
 *   cancel_restart       cancel and start it again, still behind the head
 *   start_reprogram      start a timer ahead of the head: the device is reprogrammed
 *   cancel_reprogram     cancel that head: the device is reprogrammed for the old head
 *   program_device       clockevent_program_ns() alone
 * Every deadline is seconds ahead of now when it is set (the head 10 s, a timer ahead of it
 * 5 s, one behind it 20 s, re-read from the clock every chunk), so no operation ever times
 * a timer that has already expired. */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "ticklab/fmt.h"
#include "kernel/exp/harness.h"
#include "kernel/report/console.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/timers.h"
#include "ticklab/hrtimer.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"
#include "ticklab/tqueue.h"

#define MAX_OPS 10000u
#define SLOTS 4u
#define BATCHES 5u
#define BATCH_TOTAL_OPS 1000000ull     /* the source's count, over all batches */
#define CHUNK_NS 2000000ull            /* each chunk timed by one pair: 2 ms */
#define INSERT_SLOTS 4096u
#define HEAD_AHEAD_NS   10000000000ull
#define AHEAD_NS         5000000000ull
#define BEHIND_NS       20000000000ull

static uint64_t cost[MAX_OPS];
static struct hrtimer head, t;
static struct hrtimer_base tmp_base;
static bool virtual_time;              /* the TSC counts instructions (QEMU -icount) */
static struct tq insert_q;
static struct hrtimer insert_nodes[INSERT_SLOTS];
static uint64_t pair_cyc;              /* median cost of the ordered TSC pair, measured here */

static enum hrtimer_restart on_timer(struct hrtimer *h)
{
    (void)h;
    return HRTIMER_NORESTART;
}

#define TIME(stmt) ({ uint64_t c0_ = rdtsc_ordered(); stmt; rdtsc_ordered() - c0_; })

static uint64_t measure_pair(void)
{
    static uint64_t p[257];
    for (unsigned i = 0; i < 257; i++)
        p[i] = TIME((void)0);
    struct stats st;
    stats_u64(p, 257, &st);
    return (uint64_t)st.median;
}

/* ---- per_op ---------------------------------------------------------------------------- */

/* What one TSC count is here: under QEMU's -icount the TSC counts guest instructions (one per
 * ns at shift 0), on a CPU it counts cycles; NuttX's published figures are cycles. */
static const char *unit_word(void)
{
    return virtual_time ? "instructions" : "cycles";
}

/* A result row's first keys, the same for both variants: op, device, variant, clock, n. */
static void row_begin(struct rec *r, const char *op, const char *device, const char *variant,
                      uint64_t n)
{
    exp_result_begin(r);
    json_str(&r->j, "op", op);
    json_str(&r->j, "device", device);
    json_str(&r->j, "variant", variant);
    json_str(&r->j, "clock", "tsc");
    /* What a "cycle" is here: under QEMU's -icount the TSC counts guest instructions (one
     * per ns at shift 0), on a CPU it counts cycles; NuttX's published figures are cycles. */
    json_str(&r->j, "unit", virtual_time ? "instructions" : "tsc_cycles");
    json_u64(&r->j, "n", n);
}

static void per_op_record(const char *op, const char *device, unsigned n)
{
    struct stats st;
    stats_u64(cost, n, &st);
    struct rec r;
    row_begin(&r, op, device, "per_op", n);
    json_u64(&r.j, "pair_cyc", pair_cyc);
    json_stats(&r.j, "%s_cyc", "min median p99 max", &st);
    rec_emit(&r);
    kprintf("  %-22s %-13s per_op  %9llu %9llu %9llu\n", op, device, (unsigned long long)st.min,
            (unsigned long long)st.median, (unsigned long long)st.p99);
}

/* n starts of t at deadline_ns + i, each timed and then cancelled, and n cancels, each
 * timed after its start: with a deadline behind the head (no reprogramming) or ahead of
 * every other timer (each start and cancel reprograms the device). */
static void start_and_cancel(struct hrtimer_base *b, uint64_t deadline_ns, unsigned n,
                             const char *start_op, const char *cancel_op)
{
    for (unsigned i = 0; i < n; i++) {
        cost[i] = TIME(hrtimer_start(b, &t, deadline_ns + i, HRTIMER_MODE_ABS));
        hrtimer_cancel(b, &t);
    }
    per_op_record(start_op, b->dev->name, n);
    for (unsigned i = 0; i < n; i++) {
        hrtimer_start(b, &t, deadline_ns + i, HRTIMER_MODE_ABS);
        cost[i] = TIME(hrtimer_cancel(b, &t));
    }
    per_op_record(cancel_op, b->dev->name, n);
}

static void per_op(struct hrtimer_base *b, unsigned n)
{
    const char *dev = b->dev->name;
    uint64_t now = time_ns();
    uint64_t ahead = now + AHEAD_NS, behind = now + BEHIND_NS;
    start_and_cancel(b, behind, n, "start_no_reprogram", "cancel_no_reprogram");
    hrtimer_start(b, &t, behind, HRTIMER_MODE_ABS);
    for (unsigned i = 0; i < n; i++)
        cost[i] = TIME(hrtimer_cancel(b, &t); hrtimer_start(b, &t, behind + i, HRTIMER_MODE_ABS));
    per_op_record("cancel_restart", dev, n);
    hrtimer_cancel(b, &t);
    uint64_t programs0 = b->stats.reprograms;
    start_and_cancel(b, ahead, n, "start_reprogram", "cancel_reprogram");
    if (b->stats.reprograms - programs0 != 4ull * n)
        rec_error(exp_current(), "the reprogramming starts and cancels did not each reprogram "
                                 "the device once");
    for (unsigned i = 0; i < n; i++)
        cost[i] = TIME(clockevent_program_ns(b->dev, 5000000ull + i));
    per_op_record("program_device", dev, n);
}

/* ---- batch ----------------------------------------------------------------------------- */

enum batch_op { B_INSERT, B_RESTART, B_RESTART_IRQ, B_CANCEL_RESTART, B_CANCEL_RESTART_IRQ,
                B_RESTART_REPROGRAM, B_PROGRAM, B_IRQ };

static struct hrtimer_base *bb;         /* the base the batch ops run on */

/* One chunk of n operations, timed by one pair (its cost subtracted), deadlines from a fresh
 * read of the clock. The loop bodies are written out so that each operation inlines as it
 * would in the source's loop. */
static uint64_t chunk(enum batch_op op, uint64_t n)
{
    uint64_t now = time_ns(), c0, c1;
    uint64_t behind = now + BEHIND_NS, ahead = now + AHEAD_NS;
    switch (op) {
    case B_INSERT: {
        uint64_t total = 0;
        for (uint64_t done = 0; done < n; ) {
            uint64_t k = n - done < INSERT_SLOTS ? n - done : INSERT_SLOTS;
            tq_init(&insert_q, INSERT_SLOTS);
            for (uint64_t i = 0; i < k; i++)
                insert_nodes[i].node = (struct tq_node){ 0 };
            c0 = rdtsc_ordered();
            for (uint64_t i = 0; i < k; i++)
                tq_insert(&insert_q, &insert_nodes[i].node, behind + i);
            c1 = rdtsc_ordered();
            total += c1 - c0 > pair_cyc ? c1 - c0 - pair_cyc : 0;
            done += k;
        }
        return total;
    }
    case B_RESTART:
        hrtimer_start(bb, &t, behind, HRTIMER_MODE_ABS);
        c0 = rdtsc_ordered();
        for (uint64_t i = 0; i < n; i++)
            hrtimer_start(bb, &t, behind + i, HRTIMER_MODE_ABS);
        c1 = rdtsc_ordered();
        hrtimer_cancel(bb, &t);
        break;
    case B_RESTART_IRQ:
        hrtimer_start(bb, &t, behind, HRTIMER_MODE_ABS);
        c0 = rdtsc_ordered();
        for (uint64_t i = 0; i < n; i++) {
            unsigned long f = irq_save();
            hrtimer_start(bb, &t, behind + i, HRTIMER_MODE_ABS);
            irq_restore(f);
        }
        c1 = rdtsc_ordered();
        hrtimer_cancel(bb, &t);
        break;
    case B_CANCEL_RESTART_IRQ:
        hrtimer_start(bb, &t, behind, HRTIMER_MODE_ABS);
        c0 = rdtsc_ordered();
        for (uint64_t i = 0; i < n; i++) {
            unsigned long f = irq_save();
            hrtimer_cancel(bb, &t);
            hrtimer_start(bb, &t, behind + i, HRTIMER_MODE_ABS);
            irq_restore(f);
        }
        c1 = rdtsc_ordered();
        hrtimer_cancel(bb, &t);
        break;
    case B_CANCEL_RESTART:
        hrtimer_start(bb, &t, behind, HRTIMER_MODE_ABS);
        c0 = rdtsc_ordered();
        for (uint64_t i = 0; i < n; i++) {
            hrtimer_cancel(bb, &t);
            hrtimer_start(bb, &t, behind + i, HRTIMER_MODE_ABS);
        }
        c1 = rdtsc_ordered();
        hrtimer_cancel(bb, &t);
        break;
    case B_RESTART_REPROGRAM:
        hrtimer_start(bb, &t, ahead, HRTIMER_MODE_ABS);
        c0 = rdtsc_ordered();
        for (uint64_t i = 1; i <= n; i++)
            hrtimer_start(bb, &t, ahead + i, HRTIMER_MODE_ABS);
        c1 = rdtsc_ordered();
        hrtimer_cancel(bb, &t);
        break;
    case B_PROGRAM:
        c0 = rdtsc_ordered();
        for (uint64_t i = 0; i < n; i++)
            clockevent_program_ns(bb->dev, 5000000ull + i);
        c1 = rdtsc_ordered();
        break;
    case B_IRQ:
    default:
        c0 = rdtsc_ordered();
        for (uint64_t i = 0; i < n; i++) {
            unsigned long f = irq_save();
            irq_restore(f);
        }
        c1 = rdtsc_ordered();
        break;
    }
    return c1 - c0 > pair_cyc ? c1 - c0 - pair_cyc : 0;
}

static void batch(enum batch_op op, const char *name, const char *device, uint64_t batch_ns)
{
    /* chunk size: as many operations as fit CHUNK_NS, from a trial of 64 */
    uint64_t trial = chunk(op, 64);
    uint64_t per = trial / 64 ? trial / 64 : 1;
    uint64_t n = tsc_ns_to_cyc(CHUNK_NS) / per;
    uint64_t want = BATCH_TOTAL_OPS / BATCHES;
    n = n < 64 ? 64 : n > want ? want : n;
    uint64_t limit = tsc_ns_to_cyc(batch_ns);
    int64_t mean_e2[BATCHES];
    uint64_t ops = 0, reprograms0 = bb ? bb->stats.reprograms : 0;
    unsigned got = 0;
    for (unsigned k = 0; k < BATCHES && exp_budget_left(); k++) {
        uint64_t cyc = 0, done = 0, t0 = rdtsc();
        while (done < want && rdtsc() - t0 < limit) {
            uint64_t m = want - done < n ? want - done : n;
            cyc += chunk(op, m);
            done += m;
        }
        mean_e2[got++] = (int64_t)(cyc * 100 / done);
        ops += done;
    }
    if (!got)
        return;
    struct stats st;
    stats_i64(mean_e2, got, &st);
    int64_t unc_e2 = (st.max - st.min + 1) / 2;
    /* one chunk's pair-cost error (the pair varies by a few cycles) spread over its ops */
    int64_t res_e2 = (int64_t)((pair_cyc / 4 + 1) * 100 / n);
    if (res_e2 > unc_e2)
        unc_e2 = res_e2;
    bool below = st.mean <= unc_e2;
    struct rec r;
    row_begin(&r, name, device, "batch", ops);
    json_u64(&r.j, "batches", got);
    json_u64(&r.j, "chunk_ops", n);
    json_u64(&r.j, "pair_cyc", pair_cyc);
    json_fixed(&r.j, "mean_cyc", st.mean, 2);
    json_fixed(&r.j, "uncertainty_cyc", unc_e2, 2);
    json_bool(&r.j, "below_resolution", below);
    if (op == B_RESTART_REPROGRAM && bb)
        json_u64(&r.j, "reprograms", bb->stats.reprograms - reprograms0);
    rec_emit(&r);
    if (below) {
        char u[24];
        kprintf("  %-22s %-13s batch   below resolution (+-%s) over %llu\n", name,
                device, fmt_fixed(u, sizeof(u), unc_e2, 2, false), (unsigned long long)ops);
    } else {
        char m[24], u[24];
        kprintf("  %-22s %-13s batch   %9s +- %s %s (mean of %llu)\n", name, device,
                fmt_fixed(m, sizeof(m), st.mean, 2, false), fmt_fixed(u, sizeof(u), unc_e2, 2, false),
                unit_word(), (unsigned long long)ops);
    }
}

static void measure(struct hrtimer_base *b, unsigned n, uint64_t batch_ns)
{
    const char *dev = b->dev->name;
    unsigned long flags = irq_save();
    uint64_t now = time_ns();
    memset(&head, 0, sizeof(head));
    memset(&t, 0, sizeof(t));
    head.fn = t.fn = on_timer;
    hrtimer_start(b, &head, now + HEAD_AHEAD_NS, HRTIMER_MODE_ABS);
    bb = b;
    batch(B_RESTART, "restart", dev, batch_ns);
    batch(B_RESTART_IRQ, "restart_irqsave", dev, batch_ns);
    batch(B_CANCEL_RESTART, "cancel_restart", dev, batch_ns);
    batch(B_CANCEL_RESTART_IRQ, "cancel_restart_irqsave", dev, batch_ns);
    batch(B_RESTART_REPROGRAM, "restart_reprogram", dev, batch_ns);
    batch(B_PROGRAM, "program_device", dev, batch_ns);
    /* the head again, afresh: the batches moved the device */
    hrtimer_cancel(b, &head);
    hrtimer_start(b, &head, time_ns() + HEAD_AHEAD_NS, HRTIMER_MODE_ABS);
    per_op(b, n);
    hrtimer_cancel(b, &head);
    bb = 0;
    /* leave the device armed for nothing: the base's own state says "not armed" */
    clockevent_shutdown(b->dev);
    b->armed = false;
    irq_restore(flags);
}

static void skip(const char *device, const char *reason)
{
    struct rec r;
    exp_skip_begin(&r, reason);
    json_str(&r.j, "op", "start_reprogram");
    json_str(&r.j, "device", device);
    rec_emit(&r);
}

static void run(const struct exp_env *env)
{
    virtual_time = env->clocks->virtual_time;
    unsigned n = (unsigned)exp_size(1000, MAX_OPS, MAX_OPS);
    uint64_t batch_ns = exp_size(50, 200, 500) * 1000000ull;
    struct hrtimer_base *main_base = env->base;
    exp_tick_off();
    pair_cyc = measure_pair();
    kprintf("\nhrtimer-cost: TSC counts per operation (%s%s); batch: the mean over up to %llu "
            "operations (%u batches, one TSC pair a chunk, its %llu subtracted), "
            "per_op: %u each timed alone (the pair included)\n", unit_word(),
            virtual_time ? " under virtual time, not the cycles NuttX's figures are"
                                     : "",
            (unsigned long long)BATCH_TOTAL_OPS, BATCHES, (unsigned long long)pair_cyc, n);
    kprintf("  op                     device        variant       min    median       p99\n");
    unsigned long flags = irq_save();
    batch(B_INSERT, "queue_insert", "none", batch_ns);
    batch(B_IRQ, "irq_save_restore", "none", batch_ns);
    irq_restore(flags);
    for (struct clockevent *ce = clockevent_list(); ce && exp_budget_left(); ce = ce->next) {
        if (ce->cpu != 0)
            continue;                /* another CPU's own device: not this CPU's to program */
        if (!ce->usable || !(ce->features & CE_ONESHOT)) {
            skip(ce->name, !ce->usable ? (ce->unusable_reason ? ce->unusable_reason
                                                              : "unusable")
                                       : "no one-shot mode");
            continue;
        }
        exp_phase("%s", ce->name);
        if (main_base && main_base->dev == ce) {
            measure(main_base, n, batch_ns);
            continue;
        }
        if (hrtimer_base_init(&tmp_base, ce, &hrtimer_clock_time_ns, SLOTS) != 0) {
            skip(ce->name, "the device or its hardware is in use");
            continue;
        }
        measure(&tmp_base, n, batch_ns);
        hrtimer_base_release(&tmp_base);
    }
    for (unsigned i = 0; i < n; i++)
        cost[i] = TIME(unsigned long f = irq_save(); irq_restore(f));
    per_op_record("irq_save_restore", "none", n);
}

const struct experiment exp_hrtimer_cost = {
    .name = "hrtimer-cost",
    .summary = "TSC cycles to start, cancel and restart an hrtimer, with and without "
               "reprogramming each device: means over 1e6 operations (batch) and each "
               "operation alone (per_op)",
    .rows = "op device variant",
    .run = run,
    .budget_s = { 20, 150, 1800 },
};
