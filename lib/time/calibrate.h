/* lib/time/calibrate.h - measuring one counter's frequency against another, and choosing
 * the TSC frequency among the methods that produced one. docs/calibration.md is the long
 * form: methods, windows, what the uncertainty means, the choosing rule, the record keys.
 *
 * Pure logic: the counters come in as read functions (a struct clocksource for the reference,
 * a struct cal_target for the counter being measured), so the same code measures the TSC
 * against the PIT's channel 2 (16 bits, 1,193,182 Hz), the HPET (32 or 64 bits, ~100 MHz on
 * QEMU) or the ACPI PM timer (24/32 bits, 3,579,545 Hz), and the LAPIC timer against the
 * calibrated TSC. No floating point, no allocation, no locks; interrupts are the caller's
 * business (run with interrupts off: an interrupt inside an endpoint is a stall, see below).
 *
 * The measurement (calibrate_pair):
 *  - An endpoint is three reads: target, reference, target. The reference was read somewhere
 *    between the two target reads (the "bracket", t2 - t1 target cycles), and its value
 *    changed at most one reference tick before it was read. The endpoint's target time is
 *    taken as the bracket's midpoint.
 *  - Stalls: an SMI, an emulator stall or an interrupt inside an endpoint makes its bracket
 *    long. A bracket is a stall when it is more than CAL_STALL_FACTOR times the shortest
 *    bracket seen in this measurement AND longer than CAL_STALL_FLOOR_NS; the endpoint is
 *    then sampled again, at most CAL_MAX_RETRIES times per measurement (all causes
 *    together), counted in cal_result.retries. When the budget is spent the last sample is
 *    used as it is: its long bracket is in the stated uncertainty, not hidden.
 *  - The window: between the endpoints both counters are polled back to back and their
 *    masked deltas summed, so a reference narrower than the window (a 16-bit PIT wraps every
 *    54.9 ms, a 24-bit PM timer every 4.69 s) is counted across any number of wraps. The wait
 *    ends when the summed reference reaches window_ns.
 *  - A lost wrap: if one poll-to-poll gap is long enough (by the ratio measured so far) for
 *    either counter to have moved more than a quarter of its wrap, a wrap may have gone
 *    unseen. When the target is 64 bits wide and the window already holds a quarter wrap of
 *    reference ticks, the target's gap, by that ratio, counts the whole wraps if it does so
 *    unambiguously (within a quarter wrap with its error bound): they are added and counted
 *    in cal_result.wraps_inferred. Otherwise the whole window is started again (a retry).
 *  - Bounds (STYLE 5: a wait on hardware is bounded by a different clock): the target
 *    bounds the wait to 2 * window_ns + CAL_WAIT_SLACK_NS at the target's max_hz, and a
 *    reference that has not moved at all after CAL_NO_PROGRESS_NS (at max_hz) is declared
 *    dead; both end in -ETIMEDOUT. If the target does not move either, the poll count ends
 *    it: CAL_STUCK_POLLS polls while the reference has not moved, and 1 poll per
 *    CAL_MIN_POLL_NS of the bound overall.
 *
 * The result:
 *   freq_hz        = round(target_cyc * ref_hz / ref_cyc)   (mul_div_u64_round: 128-bit)
 *   uncertainty    = (bracket_start + bracket_end + 2 reference ticks in target cycles)
 *                    / target_cyc, in ppb, rounded up, plus the reference's own stated
 *                    uncertainty (ref_uncertainty_ppb). A worst-case bound, not a standard
 *                    deviation: the strict bound with midpoints is half the bracket term,
 *                    so the statement is conservative by about 2x.
 * The reference's frequency is taken as exact (ref->freq_hz, else ref->nominal_hz) unless the
 * caller states ref_uncertainty_ppb: the PIT, HPET and PM timer run from crystals with tens
 * to hundreds of ppm tolerance that no measurement on one machine can see; their mutual
 * disagreement (calibrate_choose) is the evidence of it.
 *
 * Overflow limits: window_ns <= CAL_MAX_WINDOW_NS (60 s), frequencies <=
 * CLOCKSOURCE_MAX_FREQ_HZ (2^40), so every product below stays inside the 128-bit
 * intermediates of lib/muldiv.h. */
#ifndef TICKLAB_KERNEL_TIME_CALIBRATE_H
#define TICKLAB_KERNEL_TIME_CALIBRATE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/clocksource.h"

#define CAL_MIN_WINDOW_NS   100000ull                /* 100 us */
#define CAL_MAX_WINDOW_NS   (60ull * NSEC_PER_SEC)
#define CAL_DEFAULT_WINDOW_NS (100ull * 1000000ull)  /* 100 ms: see docs/calibration.md */
#define CAL_REF_MIN_HZ      1000u     /* slower references cannot be told from dead ones
                                         within CAL_NO_PROGRESS_NS */
#define CAL_REF_MIN_MASK    0xFFull   /* at least 8 bits: a quarter wrap must be > 1 tick */

#define CAL_WARMUP_SAMPLES  4         /* endpoints sampled first, only to learn the fastest
                                         bracket (and to warm caches and the TLB) */
#define CAL_STALL_FACTOR    8         /* a bracket > 8x the fastest seen ... */
#define CAL_STALL_FLOOR_NS  2000u     /* ... and > 2 us (at the target's max_hz) is a stall:
                                         below that, a slow read is ordinary jitter, and a
                                         bracket that short costs little accuracy anyway */
#define CAL_MAX_RETRIES     8         /* re-sampled endpoints + restarted windows */
#define CAL_WAIT_SLACK_NS   (10ull * 1000000ull)     /* added to 2 * window for the bound */
#define CAL_NO_PROGRESS_NS  (10ull * 1000000ull)     /* 10 ms: >= 10 ticks of any reference */
#define CAL_MIN_POLL_NS     20u       /* no pair of reads is faster: sizes the poll cap */
#define CAL_STUCK_POLLS     (1u << 20)
#define CAL_RATIO_MIN_REF_CYC 16u     /* reference ticks before the measured ratio is used
                                         to look for lost wraps (a coarser ratio is off by
                                         more than the quarter-wrap margin allows) */

/* The TSC as a target: 64 bits, and no CPU's TSC runs faster than 10 GHz (the plausibility
 * bound drivers/cpuid.c also applies). */
#define CAL_TSC_MAX_HZ      10000000000ull

/* Crystal tolerance assumed for frequencies the CPU states (CPUID 0x15, 0x16): the crystal
 * is exact by definition in 0x15, but firmware can misreport it and real crystals are
 * specified to tens of ppm; 100 ppm unless something better is known. */
#define CAL_CRYSTAL_TOL_PPB 100000u

enum cal_status {
    CAL_OK = 0,     /* freq_hz and uncertainty_ppb are valid */
    CAL_SKIP,       /* the method does not apply here (no leaf, no reference): reason says */
    CAL_FAIL,       /* it applied and failed (dead reference, timeout): err, reason say */
};
const char *cal_status_name(enum cal_status s);   /* "ok", "skip", "fail" */

/* The counter being measured. It must count up; a down-counter's read function returns
 * mask - count (the LAPIC timer: periodic mode with initial count 0xFFFFFFFF, read as
 * 0xFFFFFFFF - current count; its reload period is 2^32 - 1, not 2^32, so each reload
 * inside a window loses one count in 2^32: 0.0002 ppm, negligible). */
struct cal_target {
    const struct clocksource *cs;   /* the counter (its name becomes cal_result.target: "tsc",
                                       "lapic"); read through cs_read(), its mask wraps it */
    uint64_t max_hz;            /* an upper bound on its frequency: turns the time limits
                                   (wait bound, stall floor) into target cycles. Too high
                                   only makes the limits longer in real time. */
};

struct cal_result {
    const char *target;         /* "tsc", "lapic" */
    const char *method;         /* "measured", "cpuid15", "cpuid16", "cmdline" */
    const char *ref;            /* measured: the reference's clocksource name ("pit",
                                   "hpet", "acpi_pm", "tsc"); cpuid15: "crystal";
                                   cpuid16: "nominal"; cmdline: "user" */
    bool measured;              /* a window against a reference, not a stated value */
    bool user;                  /* the user's word on the command line (tsc_hz=, lapic_hz=):
                                   calibrate_choose() takes it before anything measured */
    enum cal_status status;
    int err;                    /* 0, or a negative errno when status is CAL_FAIL */
    const char *reason;         /* static string; NULL when status is CAL_OK */

    uint64_t freq_hz;           /* rounded to the nearest Hz */
    uint64_t uncertainty_ppb;   /* bound on |freq_hz - true| / true, see the top of file */

    /* measured only (0 otherwise) */
    uint64_t window_ns;         /* the window actually used, by the reference */
    uint64_t ref_cyc;           /* reference ticks across the window */
    uint64_t target_cyc;        /* target cycles between the endpoint midpoints */
    uint64_t bracket_start_cyc; /* endpoint brackets, target cycles */
    uint64_t bracket_end_cyc;
    uint64_t bracket_min_cyc;   /* fastest bracket seen: the stall threshold's base */
    uint32_t retries;           /* re-sampled endpoints + restarted windows */
    uint64_t polls;             /* reads of the pair, all attempts together */
    uint32_t wraps_inferred;    /* reference wraps inside long gaps, counted by the target
                                   (the kept window only; calibrate.c infer_wraps) */

    /* filled by calibrate_choose() */
    bool chosen;
    uint64_t applied_hz;        /* the chosen one: the rate applied, calibrate_roundest() of
                                   freq_hz and its uncertainty; 0 for the others */
    int64_t disagreement_ppb;   /* (freq - chosen) / chosen, status CAL_OK only */
    bool agrees;                /* |disagreement| <= own + chosen uncertainty */
};

/* Measures target's frequency over window_ns of ref. ref_uncertainty_ppb is the reference's
 * own frequency uncertainty (0: take it as exact; for the LAPIC against the TSC: the TSC's
 * calibration uncertainty), added into the result. Returns 0 (out->status CAL_OK) or:
 *   -EINVAL     bad arguments (window outside CAL_MIN/MAX_WINDOW_NS, reference slower than
 *               CAL_REF_MIN_HZ or narrower than 8 bits, missing read, max_hz out of range)
 *   -ETIMEDOUT  the reference did not cover the window within the target's bound, or did
 *               not move at all, or the poll cap ran out (neither counter moved)
 *   -EIO        the target did not count, or every retry found a lost-wrap gap
 *   -ERANGE     the measured frequency is above target->max_hz
 * ref == NULL gives CAL_SKIP ("no reference") and -ENODEV. out is always filled in. */
int calibrate_pair(const struct cal_target *target, const struct clocksource *ref,
                   uint64_t ref_uncertainty_ppb, uint64_t window_ns, struct cal_result *out);

/* calibrate_pair() with the TSC as the target (its clocksource; at most CAL_TSC_MAX_HZ) and
 * the reference taken as exact. The TSC's read should be ordered (LFENCE; RDTSC, as
 * drivers/tsc.c reads it) so a bracket cannot start early. */
int calibrate_tsc(const struct clocksource *ref, const struct clocksource *tsc,
                  uint64_t window_ns, struct cal_result *out);

/* TSC frequency from CPUID leaf 0x15, as drivers/cpuid.c decoded it: crystal_hz * numerator /
 * denominator, rounded to the nearest Hz; uncertainty CAL_CRYSTAL_TOL_PPB (+ 1 ppb for the
 * rounding). invalid: NULL when the leaf is valid, else why not: CAL_SKIP with that reason
 * and -ENOTSUP (so too a ratio that gives no frequency). Returns 0 or -ENOTSUP. */
int calibrate_from_cpuid15(uint64_t crystal_hz, uint32_t numerator, uint32_t denominator,
                           const char *invalid, struct cal_result *out);

/* TSC frequency from CPUID leaf 0x16: the base frequency in whole MHz, a name-plate value.
 * uncertainty = 0.5 MHz / base (the rounding to whole MHz) + CAL_CRYSTAL_TOL_PPB (the crystal
 * it is derived from): 338,096 ppb at 2100 MHz. invalid (or a base of 0): CAL_SKIP with the
 * reason, -ENOTSUP. */
int calibrate_from_cpuid16(uint32_t base_mhz, const char *invalid, struct cal_result *out);

/* A frequency the user states on the command line (tsc_hz=, lapic_hz=): method "cmdline",
 * ref "user", not measured, uncertainty 0 (the user's claim: ticklab cannot bound it), and
 * chosen before anything else, so that two runs can share one rate whatever their own
 * calibrations measured (comparing two builds in exact mode, or a machine none of whose
 * references can be trusted). 0 Hz: CAL_SKIP, -EINVAL. */
int calibrate_from_user(const char *target, uint64_t freq_hz, struct cal_result *out);

/* Chooses one frequency among results for the same target, by the rule:
 *   0. a result the user stated (calibrate_from_user), the first one;
 *   1. among the measured results with status CAL_OK, the smallest uncertainty_ppb;
 *   2. only if there is none: among the stated (CPUID) results with status CAL_OK, the
 *      smallest uncertainty_ppb;
 *   ties go to the lower index, so callers list methods in their order of preference.
 * A measurement is preferred even when its bound is wider than a CPUID value's, because it is
 * evidence about this machine, while CPUID is a claim that firmware and hypervisors are known
 * to get wrong (QEMU TCG: leaves absent; some VMs: zeros or the host's values).
 * The chosen one's applied_hz is calibrate_roundest() of it (the rate to apply).
 * Then, for every CAL_OK result: chosen, disagreement_ppb = round((freq - chosen_freq) * 1e9
 * / chosen_freq), halves away from zero, saturated to the int64 range, and agrees; results
 * not CAL_OK get chosen = false, disagreement_ppb = 0, agrees = false.
 * Returns the chosen index, or -ENODEV when no result is CAL_OK. */
int calibrate_choose(struct cal_result *results, size_t n);

/* round((freq_hz - ref_hz) * 1e9 / ref_hz), halves away from zero, saturated; ref_hz 0
 * gives 0. Exposed for the report and for tests. */
int64_t calibrate_ppb_diff(uint64_t freq_hz, uint64_t ref_hz);

/* The rate to apply from a measurement of freq_hz +- uncertainty_ppb: the roundest one the
 * measurement cannot tell from it. The interval [freq - d, freq + d], d = freq x
 * uncertainty / 1e9 (rounded down), holds multiples of some largest power of ten; of those,
 * the one nearest freq_hz (the lower on a tie). Any rate in the interval is as well founded
 * as freq_hz itself; the roundest does not move with the phase at which the measurement
 * happened to start, so two runs on one machine apply the same rate whenever their
 * intervals share it (under QEMU -icount, where the TSC runs at exactly 1 GHz, always).
 * uncertainty 0: freq_hz itself. */
uint64_t calibrate_roundest(uint64_t freq_hz, uint64_t uncertainty_ppb);

#endif
