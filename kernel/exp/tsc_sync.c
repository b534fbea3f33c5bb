/* kernel/exp/tsc_sync.c - `tsc-sync`: is the TSC the same clock on every CPU? For every pair
 * of online CPUs, the TSC ping-pong of kernel/checks/tsc_warp.h, by IPI and (on real
 * machines) by spinning, at the profile's size: backward steps (warps) and the offset of
 * each CPU against the other. A warp takes the TSC out of time_ns(), as the boot check
 * does. Plus IA32_TSC_ADJUST of each CPU where the MSR is readable. */
#include "kernel/exp/experiment.h"

#include "kernel/checks/tsc_warp.h"

#include "kernel/smp/smp.h"
#include "kernel/config.h"
#include "kernel/exp/harness.h"
#include "kernel/exp/verdict.h"
#include "kernel/report/console.h"
#include "kernel/report/stop.h"
#include "kernel/timers/clocks.h"
#include "ticklab/io.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"
#include "ticklab/lapic.h"
#include "ticklab/stats.h"

#define MSR_TSC_ADJUST 0x3Bu

static uint64_t warps_seen, worst_step;
/* What the verdict takes: the IPI pairs' figures, summed over the pairs (summarize). */
static struct {
    bool done;
    unsigned pairs;
    uint64_t backward, max_backward_cyc, offset_uncertainty_cyc;
    int64_t max_abs_offset_cyc;
} found;

static void pair(unsigned a, unsigned b, enum tsc_warp_mode m, unsigned rounds)
{
    struct tsc_warp_result pp;
    tsc_warp_pair(a, b, m, rounds, &pp);
    struct rec r;
    exp_result_begin(&r);
    json_str(&r.j, "mode", m == TSC_WARP_IPI ? "ipi" : "spin");
    tsc_warp_members(&r.j, a, b, &pp);
    json_u64(&r.j, "rtt_min_cyc", pp.rtt_min_cyc);
    json_u64(&r.j, "rtt_p50_cyc", pp.rtt_p50_cyc);
    rec_emit(&r);
    kprintf("  cpu %u -> %u  %-4s %6llu rounds  %llu backward (max %llu cyc)  offset %lld +- %llu "
            "cyc  rtt min %llu p50 %llu\n", a, b, m == TSC_WARP_IPI ? "ipi" : "spin",
            (unsigned long long)pp.rounds, (unsigned long long)pp.backward,
            (unsigned long long)pp.max_backward_cyc, (long long)pp.offset_cyc,
            (unsigned long long)(pp.rtt_min_cyc / 2), (unsigned long long)pp.rtt_min_cyc,
            (unsigned long long)pp.rtt_p50_cyc);
    warps_seen += pp.backward;
    if (pp.max_backward_cyc > worst_step)
        worst_step = pp.max_backward_cyc;
    if (m == TSC_WARP_IPI && pp.rounds) {
        found.done = true;
        found.pairs++;
        found.backward += pp.backward;
        if (pp.max_backward_cyc > found.max_backward_cyc)
            found.max_backward_cyc = pp.max_backward_cyc;
        int64_t abs_off = pp.offset_cyc < 0 ? -pp.offset_cyc : pp.offset_cyc;
        if (abs_off > found.max_abs_offset_cyc)
            found.max_abs_offset_cyc = abs_off;
        if (pp.rtt_min_cyc / 2 > found.offset_uncertainty_cyc)
            found.offset_uncertainty_cyc = pp.rtt_min_cyc / 2;
    }
    if (pp.timed_out)
        rec_error(exp_current(), "a ping-pong round did not complete within its bound");
}

static void read_adjust(void *arg)
{
    uint64_t *out = arg;
    if (rdmsr_safe(MSR_TSC_ADJUST, &out[0]) == 0)
        out[1] = 1;
}

static void run(const struct exp_env *env)
{
    (void)env;
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
    unsigned rounds = (unsigned)exp_size(100, 10000, TSC_WARP_MAX_ROUNDS);
    warps_seen = worst_step = 0;
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
    bool spin_ok = !stop_under_qemu();
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n && exp_budget_left(); j++) {
            exp_phase("cpus %u and %u", online[i], online[j]);
            unsigned long f = irq_save();
            pair(online[i], online[j], TSC_WARP_IPI, rounds);
            if (spin_ok)
                pair(online[i], online[j], TSC_WARP_SPIN,
                     rounds * 10 < TSC_WARP_MAX_ROUNDS ? rounds * 10 : TSC_WARP_MAX_ROUNDS);
            irq_restore(f);
        }
    if (warps_seen) {
        static char why[120];
        fmt_snprintf(why, sizeof(why), "tsc-sync found %llu backward step(s) between CPUs, up "
                     "to %llu cycles", (unsigned long long)warps_seen,
                     (unsigned long long)worst_step);
        clocks_demote_tsc(why);
    }
    if (!spin_ok) {
        struct rec r;
        exp_skip_begin(&r, "under an emulator a spinning virtual CPU can keep the other "
                           "from running: spin mode runs on real machines only");
        json_str(&r.j, "mode", "spin");
        rec_emit(&r);
    }
}

static void summarize(struct verdict_input *v)
{
    v->tsc.from = "tsc-sync";
    v->tsc.topic = "tsc_sync";
    v->tsc.done = found.done;
    v->tsc.pairs = found.pairs;
    v->tsc.backward = found.backward;
    v->tsc.max_backward_cyc = found.max_backward_cyc;
    v->tsc.max_abs_offset_cyc = found.max_abs_offset_cyc;
    v->tsc.offset_uncertainty_cyc = found.offset_uncertainty_cyc;
}

const struct experiment exp_tsc_sync = {
    .name = "tsc-sync",
    .summary = "TSC ping-pong between every pair of CPUs: backward steps and offsets",
    .rows = "cpu cpu_a cpu_b mode",
    .run = run,
    .summarize = summarize,
    .budget_s = { 15, 60, 600 },
};
