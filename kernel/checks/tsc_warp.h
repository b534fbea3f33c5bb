/* kernel/checks/tsc_warp.h - is the TSC one clock on every CPU? A ping-pong of TSC reads
 * between two CPUs where each read happens after the other CPU's previous one (a message
 * chain: a reads t1 and tells b; b reads t2 and tells a; a reads t3). On one clock
 * t1 <= t2 <= t3 always; a step backwards is a TSC warp, measured in cycles (the Linux warp
 * test's idea). The offset of b against a is estimated from the round with the shortest
 * round trip, t2 - (t1 + t3) / 2, to within half that trip.
 *
 * Two ways to pass the message: IPI (the waiting CPU halts and an IPI wakes it: works
 * everywhere, including QEMU's one-CPU-at-a-time icount mode, but the round trip is
 * microseconds on real machines) and SPIN (both spin on a shared variable: round trips of
 * ~100 ns on real CPUs, so small warps show; not under an emulator, where a spinning
 * virtual CPU keeps the other from running).
 *
 * tsc_warp_check() runs at boot, once the other CPUs are up: a short IPI ping-pong between
 * the boot CPU and each other CPU; a warp takes the TSC out of time_ns() (a
 * `clocksource_demoted` record says why), since time_ns() on another CPU would otherwise
 * read behind the boot CPU's folds. */
#ifndef TICKLAB_CHECKS_TSC_WARP_H
#define TICKLAB_CHECKS_TSC_WARP_H
#include <stdbool.h>
#include <stdint.h>

enum tsc_warp_mode { TSC_WARP_IPI, TSC_WARP_SPIN };

#define TSC_WARP_MAX_ROUNDS 100000u

struct tsc_warp_result {
    uint64_t rounds;              /* completed */
    uint64_t backward;            /* rounds with a step backwards */
    uint64_t max_backward_cyc;
    int64_t offset_cyc;           /* b - a, from the shortest round trip */
    uint64_t rtt_min_cyc, rtt_p50_cyc;
    bool timed_out;               /* a round or a CPU did not answer within its bound */
};

/* One ping-pong of `rounds` (<= TSC_WARP_MAX_ROUNDS) between online CPUs a and b (a may be
 * the boot CPU), every wait bounded by the TSC. Boot CPU, interrupts off. */
void tsc_warp_pair(unsigned a, unsigned b, enum tsc_warp_mode mode, unsigned rounds,
                   struct tsc_warp_result *out);

/* A pair's figures as record members: cpu_a, cpu_b, clock, rounds, backward_steps,
 * max_backward_cyc, offset_cyc, offset_uncertainty_cyc. */
struct json;
void tsc_warp_members(struct json *j, unsigned a, unsigned b, const struct tsc_warp_result *r);

/* The boot check: 64 IPI rounds between the boot CPU and each other online CPU, a
 * `tsc_warp_check` record per pair; on any warp the TSC is demoted. Returns false on a
 * warp. Nothing to do (true) with one CPU. */
bool tsc_warp_check(void);

#endif
