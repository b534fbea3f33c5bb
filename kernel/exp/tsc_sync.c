/* kernel/exp/tsc_sync.c - `tsc-sync`: is the TSC the same clock on every CPU? For every pair
 * of online CPUs (a, b), a ping-pong of TSC reads where each read happens after the other
 * CPU's previous one (a message chain: a reads t1 and tells b; b reads t2 and tells a; a reads
 * t3). On one clock t1 <= t2 <= t3 always; a step backwards is a TSC warp, measured in cycles
 * (the Linux warp test's idea). The offset of b against a is estimated from the round with
 * the shortest round trip, t2 - (t1 + t3) / 2, to within half that trip.
 *
 * Two ways to pass the message: `ipi` (the waiting CPU halts and an IPI wakes it: works
 * everywhere, including QEMU's one-CPU-at-a-time icount mode, but the round trip is
 * microseconds on real machines) and `spin` (both spin on a shared variable: round trips of
 * ~100 ns on real CPUs, so small warps show; not run under an emulator, where a spinning
 * virtual CPU keeps the other from running). Plus IA32_TSC_ADJUST of each CPU where the MSR
 * is readable. */
#include "kernel/exp/experiment.h"

#include "kernel/arch/smp.h"
#include "kernel/config.h"
#include "kernel/exp/harness.h"
#include "kernel/exp/verdict.h"
#include "kernel/report/console.h"
#include "kernel/run.h"
#include "kernel/timers/clocks.h"
#include "ticklab/io.h"
#include "ticklab/kstring.h"
#include "ticklab/lapic.h"
#include "ticklab/stats.h"

#define MSR_TSC_ADJUST 0x3Bu
#define MAX_ROUNDS 100000u

enum mode { IPI, SPIN };

static struct pingpong {
    enum mode mode;
    unsigned rounds;
    uint32_t apic_a, apic_b;
    volatile unsigned turn;          /* 1: b's turn; 2: a's turn; 3: b gives up */
    volatile uint64_t t1, t2;
    /* results, written by a */
    uint64_t backward, max_backward_cyc, rtt_min, done;
    int64_t offset_cyc;
    bool timed_out;
} pp;
static uint64_t rtts[MAX_ROUNDS];

/* Waits for *turn == want: HLT until an IPI (ipi) or spinning (spin); bounded by this CPU's
 * TSC. Interrupts off on entry and return. */
static bool await(enum mode m, unsigned want, uint64_t bound_cyc)
{
    uint64_t c0 = rdtsc();
    while (pp.turn != want) {
        if (rdtsc() - c0 > bound_cyc)
            return false;
        if (m == IPI)
            __asm__ volatile("sti; hlt; cli" ::: "memory");
        else
            cpu_relax();
    }
    return true;
}

static void tell(enum mode m, uint32_t apic, unsigned turn)
{
    pp.turn = turn;
    if (m == IPI)
        lapic_send_ipi(apic, VEC_SMP_WAKE);
}

static void side_b(void *arg)
{
    (void)arg;
    unsigned long f = irq_save();
    uint64_t bound = tsc_ns_to_cyc(100000000ull);
    for (unsigned i = 0; i < pp.rounds; i++) {
        if (!await(pp.mode, 1, bound))
            break;
        pp.t2 = rdtsc_ordered();
        tell(pp.mode, pp.apic_a, 2);
    }
    irq_restore(f);
}

static void side_a(void *arg)
{
    (void)arg;
    unsigned long f = irq_save();
    uint64_t bound = tsc_ns_to_cyc(100000000ull);
    pp.rtt_min = UINT64_MAX;
    for (unsigned i = 0; i < pp.rounds; i++) {
        uint64_t t1 = rdtsc_ordered();
        pp.t1 = t1;
        tell(pp.mode, pp.apic_b, 1);
        if (!await(pp.mode, 2, bound)) {
            pp.timed_out = true;
            break;
        }
        uint64_t t2 = pp.t2, t3 = rdtsc_ordered();
        if (t2 < t1 || t3 < t2) {
            pp.backward++;
            uint64_t step = t2 < t1 ? t1 - t2 : t2 - t3;
            if (step > pp.max_backward_cyc)
                pp.max_backward_cyc = step;
        }
        uint64_t rtt = t3 - t1;
        rtts[pp.done++] = rtt;
        if (rtt < pp.rtt_min) {
            pp.rtt_min = rtt;
            pp.offset_cyc = (int64_t)(t2 - t1) - (int64_t)(rtt / 2);
        }
    }
    irq_restore(f);
}

static void pair(unsigned a, unsigned b, enum mode m, unsigned rounds)
{
    memset(&pp, 0, sizeof(pp));
    pp.mode = m;
    pp.rounds = rounds;
    pp.apic_a = cpu_locals[a].apic_id;
    pp.apic_b = cpu_locals[b].apic_id;
    uint64_t bound_ns = 1000000000ull + (uint64_t)rounds * 200000ull;
    int rc = smp_post(b, side_b, 0);
    if (!rc && a) {
        rc = smp_post(a, side_a, 0);
        if (!rc)
            rc = smp_wait(a, bound_ns);
    } else if (!rc) {
        side_a(0);
    }
    int rc_b = smp_wait(b, bound_ns);
    struct stats st = { 0 };
    stats_u64(rtts, pp.done, &st);
    struct rec r;
    exp_result_begin(&r);
    json_u64(&r.j, "cpu_a", a);
    json_u64(&r.j, "cpu_b", b);
    json_str(&r.j, "mode", m == IPI ? "ipi" : "spin");
    json_str(&r.j, "clock", "tsc");
    json_u64(&r.j, "rounds", pp.done);
    json_u64(&r.j, "backward_steps", pp.backward);
    json_u64(&r.j, "max_backward_cyc", pp.max_backward_cyc);
    json_i64(&r.j, "offset_cyc", pp.offset_cyc);
    json_u64(&r.j, "offset_uncertainty_cyc", pp.done ? pp.rtt_min / 2 : 0);
    json_u64(&r.j, "rtt_min_cyc", pp.done ? pp.rtt_min : 0);
    json_u64(&r.j, "rtt_p50_cyc", (uint64_t)st.median);
    rec_emit(&r);
    kprintf("  cpu %u -> %u  %-4s %6llu rounds  %llu backward (max %llu cyc)  offset %lld +- %llu "
            "cyc  rtt min %llu p50 %llu\n", a, b, m == IPI ? "ipi" : "spin",
            (unsigned long long)pp.done, (unsigned long long)pp.backward,
            (unsigned long long)pp.max_backward_cyc, (long long)pp.offset_cyc,
            (unsigned long long)(pp.done ? pp.rtt_min / 2 : 0),
            (unsigned long long)(pp.done ? pp.rtt_min : 0), (unsigned long long)st.median);
    if (m == IPI && pp.done) {
        findings.tsc_sync_done = true;
        findings.tsc_pairs++;
        findings.tsc_backward += pp.backward;
        if (pp.max_backward_cyc > findings.tsc_max_backward_cyc)
            findings.tsc_max_backward_cyc = pp.max_backward_cyc;
        int64_t abs_off = pp.offset_cyc < 0 ? -pp.offset_cyc : pp.offset_cyc;
        if (abs_off > findings.tsc_max_abs_offset_cyc)
            findings.tsc_max_abs_offset_cyc = abs_off;
        if (pp.rtt_min / 2 > findings.tsc_offset_uncertainty_cyc)
            findings.tsc_offset_uncertainty_cyc = pp.rtt_min / 2;
    }
    if (rc || rc_b || pp.timed_out || pp.done < rounds)
        rec_error(exp_current(), "a ping-pong round did not complete within its bound");
}

static void read_adjust(void *arg)
{
    uint64_t *out = arg;
    if (rdmsr_safe(MSR_TSC_ADJUST, &out[0]) == 0)
        out[1] = 1;
}

static void run(void)
{
    unsigned online[CPU_MAX], n = 0;
    for (unsigned i = 0; i < CPU_MAX; i++)
        if (cpu_locals[i].online)
            online[n++] = i;
    if (n < 2) {
        struct rec r;
        exp_skip_begin(&r, "one CPU online: nothing to compare");
        json_str(&r.j, "mode", "ipi");
        rec_emit(&r);
        kprintf("\ntsc-sync: skip, one CPU online\n");
        return;
    }
    unsigned rounds = (unsigned)exp_size(100, 10000, MAX_ROUNDS);
    kprintf("\ntsc-sync: TSC ping-pong between every pair of %u CPUs (TSC cycles)\n", n);
    for (unsigned k = 0; k < n; k++) {
        uint64_t adj[2] = { 0, 0 };
        unsigned long f = irq_save();
        smp_call(online[k], read_adjust, adj, 100000000ull);
        irq_restore(f);
        struct rec r;
        exp_result_begin(&r);
        json_u64(&r.j, "cpu", online[k]);
        if (adj[1])
            json_i64(&r.j, "tsc_adjust", (int64_t)adj[0]);
        else
            json_null(&r.j, "tsc_adjust");
        rec_emit(&r);
    }
    bool spin_ok = !running_under_qemu();
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++) {
            unsigned long f = irq_save();
            pair(online[i], online[j], IPI, rounds);
            if (spin_ok)
                pair(online[i], online[j], SPIN, rounds * 10 < MAX_ROUNDS ? rounds * 10
                                                                          : MAX_ROUNDS);
            irq_restore(f);
            exp_progress("pair done", false);
        }
    if (!spin_ok) {
        struct rec r;
        exp_skip_begin(&r, "under an emulator a spinning virtual CPU can keep the other "
                           "from running: spin mode runs on real machines only");
        json_str(&r.j, "mode", "spin");
        rec_emit(&r);
    }
}

const struct experiment exp_tsc_sync = {
    .name = "tsc-sync",
    .summary = "TSC ping-pong between every pair of CPUs: backward steps and offsets",
    .run = run,
};
