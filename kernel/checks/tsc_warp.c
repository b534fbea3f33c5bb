/* kernel/checks/tsc_warp.c - see tsc_warp.h. */
#include "kernel/checks/tsc_warp.h"

#include "kernel/intr/intr.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/smp/smp.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/idle.h"
#include "ticklab/fmt.h"
#include "ticklab/io.h"
#include "ticklab/kstring.h"
#include "ticklab/lapic.h"
#include "ticklab/stats.h"
#include "ticklab/units.h"

#define BOOT_ROUNDS 64u

static struct pingpong {
    enum tsc_warp_mode mode;
    unsigned rounds;
    uint32_t apic_a, apic_b;
    volatile unsigned turn;          /* 1: b's turn; 2: a's turn */
    volatile uint64_t t1, t2;
    struct tsc_warp_result res;      /* written by a */
} pp;
static uint64_t rtts[TSC_WARP_MAX_ROUNDS];

/* Waits for turn == want: HLT until an IPI, or spinning; bounded by this CPU's TSC.
 * Interrupts off on entry and return. */
static bool await(enum tsc_warp_mode m, unsigned want, uint64_t bound_cyc)
{
    uint64_t c0 = rdtsc();
    while (pp.turn != want) {
        if (rdtsc() - c0 > bound_cyc)
            return false;
        if (m == TSC_WARP_IPI)
            cpu_wait_irq();
        else
            cpu_relax();
    }
    return true;
}

static void tell(enum tsc_warp_mode m, uint32_t apic, unsigned turn)
{
    pp.turn = turn;
    if (m == TSC_WARP_IPI)
        lapic_send_ipi(intr_apic(), apic, VEC_SMP_WAKE);
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
    struct tsc_warp_result *r = &pp.res;
    unsigned long f = irq_save();
    uint64_t bound = tsc_ns_to_cyc(100000000ull);
    r->rtt_min_cyc = UINT64_MAX;
    for (unsigned i = 0; i < pp.rounds; i++) {
        uint64_t t1 = rdtsc_ordered();
        pp.t1 = t1;
        tell(pp.mode, pp.apic_b, 1);
        if (!await(pp.mode, 2, bound)) {
            r->timed_out = true;
            break;
        }
        uint64_t t2 = pp.t2, t3 = rdtsc_ordered();
        if (t2 < t1 || t3 < t2) {
            r->backward++;
            uint64_t step = t2 < t1 ? t1 - t2 : t2 - t3;
            if (step > r->max_backward_cyc)
                r->max_backward_cyc = step;
        }
        uint64_t rtt = t3 - t1;
        rtts[r->rounds++] = rtt;
        if (rtt < r->rtt_min_cyc) {
            r->rtt_min_cyc = rtt;
            r->offset_cyc = (int64_t)(t2 - t1) - (int64_t)(rtt / 2);
        }
    }
    irq_restore(f);
}

void tsc_warp_pair(unsigned a, unsigned b, enum tsc_warp_mode mode, unsigned rounds,
                   struct tsc_warp_result *out)
{
    memset(&pp, 0, sizeof(pp));
    pp.mode = mode;
    pp.rounds = rounds > TSC_WARP_MAX_ROUNDS ? TSC_WARP_MAX_ROUNDS : rounds;
    pp.apic_a = cpu_locals[a].apic_id;
    pp.apic_b = cpu_locals[b].apic_id;
    uint64_t bound_ns = NSEC_PER_SEC + (uint64_t)pp.rounds * 200000ull;
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
    stats_u64(rtts, pp.res.rounds, &st);
    *out = pp.res;
    if (!out->rounds)
        out->rtt_min_cyc = 0;
    out->rtt_p50_cyc = (uint64_t)st.median;
    out->timed_out |= rc || rc_b || out->rounds < pp.rounds;
}

void tsc_warp_members(struct json *j, unsigned a, unsigned b, const struct tsc_warp_result *r)
{
    json_u64(j, "cpu_a", a);
    json_u64(j, "cpu_b", b);
    json_str(j, "clock", "tsc");
    json_u64(j, "rounds", r->rounds);
    json_u64(j, "backward_steps", r->backward);
    json_u64(j, "max_backward_cyc", r->max_backward_cyc);
    json_i64(j, "offset_cyc", r->offset_cyc);
    json_u64(j, "offset_uncertainty_cyc", r->rtt_min_cyc / 2);
}

bool tsc_warp_check(void)
{
    uint64_t warps = 0, max_step = 0;
    unsigned worst = 0;
    for (unsigned c = 1; c < CPU_MAX; c++) {
        if (!cpu_locals[c].online)
            continue;
        struct tsc_warp_result r;
        unsigned long f = irq_save();
        tsc_warp_pair(0, c, TSC_WARP_IPI, BOOT_ROUNDS, &r);
        irq_restore(f);
        struct rec rec;
        rec_begin(&rec, "tsc_warp_check");
        tsc_warp_members(&rec.j, 0, c, &r);
        json_bool(&rec.j, "timed_out", r.timed_out);
        rec_emit(&rec);
        if (r.backward) {
            warps += r.backward;
            if (r.max_backward_cyc > max_step) {
                max_step = r.max_backward_cyc;
                worst = c;
            }
        }
    }
    if (!warps)
        return true;
    static char why[120];
    fmt_snprintf(why, sizeof(why), "the TSC warps between CPUs: %llu backward step(s), up to "
                 "%llu cycles (boot CPU against CPU %u)", (unsigned long long)warps,
                 (unsigned long long)max_step, worst);
    clocks_demote_tsc(why);
    return false;
}
