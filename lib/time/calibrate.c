/* lib/time/calibrate.c - one counter's frequency against another, and the choice among
 * methods. The rules (stalls, wraps, bounds, uncertainty, choice) are stated in calibrate.h
 * and docs/calibration.md; the comments here say why the code is shaped the way it is. */
#include "ticklab/calibrate.h"

#include "ticklab/errno.h"
#include "ticklab/kstring.h"
#include "ticklab/muldiv.h"

#define PPB 1000000000ull   /* parts per billion in one */

const char *cal_status_name(enum cal_status s)
{
    switch (s) {
    case CAL_OK:   return "ok";
    case CAL_SKIP: return "skip";
    case CAL_FAIL: return "fail";
    }
    return "?";
}

static void result_init(struct cal_result *out, const char *target, const char *method,
                        const char *ref, bool measured)
{
    memset(out, 0, sizeof(*out));
    out->target = target;
    out->method = method;
    out->ref = ref;
    out->measured = measured;
}

static int set_status(struct cal_result *out, enum cal_status status, int err,
                      const char *reason)
{
    out->status = status;
    out->err = err;
    out->reason = reason;
    return err;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* ---- the measurement ------------------------------------------------------------------- */

struct limits {
    uint64_t window_ref_cyc;   /* the wait ends when the summed reference reaches this */
    uint64_t bound_cyc;        /* target cycles the whole wait may take */
    uint64_t stuck_cyc;        /* target cycles the reference may stand still after start */
    uint64_t max_polls;        /* the last resort when the target does not move either */
};

struct run {
    const struct cal_target *tg;
    const struct clocksource *ref;
    uint64_t floor_cyc;        /* CAL_STALL_FLOOR_NS in target cycles at max_hz */
    uint64_t min_bracket_cyc;  /* fastest bracket seen so far */
    uint32_t retries;
    uint64_t polls;
    /* Since the current window's start endpoint: the last values read and the sums of the
     * masked deltas. sum_t counts from the start endpoint's first target read. */
    uint64_t last_t, last_r, sum_t, sum_r;
    uint32_t wraps_inferred;   /* reference wraps a long gap hid, counted by the target */
    const char *why;           /* the failure's reason */
};

struct endpoint {
    uint64_t t1, r, t2, bracket_cyc;
};

/* Target, reference, target: the reference was read inside [t1, t2]. */
static void sample(struct run *c, struct endpoint *e)
{
    e->t1 = cs_read(c->tg->cs);
    e->r = cs_read(c->ref);
    e->t2 = cs_read(c->tg->cs);
    e->bracket_cyc = cs_delta(c->tg->cs, e->t2, e->t1);
    if (e->bracket_cyc < c->min_bracket_cyc)
        c->min_bracket_cyc = e->bracket_cyc;
}

static bool is_stall(const struct run *c, uint64_t bracket_cyc)
{
    if (bracket_cyc <= c->floor_cyc || c->min_bracket_cyc > UINT64_MAX / CAL_STALL_FACTOR)
        return false;
    return bracket_cyc > c->min_bracket_cyc * CAL_STALL_FACTOR;
}

/* Whether a poll gap could hide a wrap: by the ratio measured so far, either counter moved
 * more than a quarter of its wrap while the other moved gap_*. A masked delta cannot tell
 * d from d + wrap, so a longer gap (an SMI, a host preemption of the emulator, a debugger)
 * may have lost whole wraps; the quarter leaves room for the ratio's early coarseness. The
 * check needs some reference ticks first; a stall before them goes unnoticed (see the doc). */
static bool gap_may_hide_wrap(const struct run *c, uint64_t gap_t, uint64_t gap_r)
{
    if (c->sum_r < CAL_RATIO_MIN_REF_CYC || c->sum_t == 0)
        return false;
    uint64_t as_ref_cyc = mul_div_u64(gap_t, c->sum_r, c->sum_t);
    uint64_t as_target_cyc = mul_div_u64(gap_r, c->sum_t, c->sum_r);

    return as_ref_cyc > c->ref->mask / 4 || as_target_cyc > c->tg->cs->mask / 4;
}

/* A gap that may have hidden wraps of a narrow reference, measured by a 64-bit target (the
 * TSC, which no gap can wrap): once the window has a quarter wrap of reference ticks, the
 * ratio so far predicts the reference ticks in the gap well enough to count the whole wraps
 * in it. The reference's own delta still gives the phase; the target only picks how many
 * periods to add, and only when the prediction, with its error bound (4 reference ticks and
 * 4 fastest brackets over the window so far, scaled to the gap), falls within a quarter
 * wrap of one count. Otherwise the window is restarted as before. So a run in which the
 * reader is away for more than a quarter wrap again and again (an emulator's thread on a
 * loaded host: the 16-bit PIT wraps every 54.9 ms) still ends, and exactly. */
static bool infer_wraps(struct run *c, uint64_t gap_t, uint64_t *gap_r)
{
    uint64_t period = c->ref->mask + 1;
    if (c->tg->cs->mask != UINT64_MAX || c->ref->mask == UINT64_MAX ||
        c->sum_r <= c->ref->mask / 4 || c->sum_t == 0)
        return false;
    uint64_t pred, err_r, err_t;
    if (!mul_div_u64_checked(gap_t, c->sum_r, c->sum_t, &pred) ||
        !mul_div_u64_checked(pred, 4, c->sum_r, &err_r) ||
        !mul_div_u64_checked(pred, 4 * (c->min_bracket_cyc + 1), c->sum_t, &err_t))
        return false;
    uint64_t err = err_r + err_t + 2;
    if (pred < *gap_r || err >= period / 4)
        return false;
    uint64_t k = (pred - *gap_r + period / 2) / period;
    if (k == 0 || k > UINT32_MAX)
        return false;
    uint64_t got = *gap_r + k * period;
    uint64_t off = got > pred ? got - pred : pred - got;
    if (off + err >= period / 4)
        return false;
    *gap_r = got;
    c->wraps_inferred += (uint32_t)k;
    return true;
}

/* Adds one pair of reads. Returns false when the gap may have hidden a wrap that could not
 * be counted. */
static bool advance(struct run *c, uint64_t t, uint64_t r)
{
    uint64_t gap_t = cs_delta(c->tg->cs, t, c->last_t);
    uint64_t gap_r = cs_delta(c->ref, r, c->last_r);
    bool ok = !gap_may_hide_wrap(c, gap_t, gap_r) || infer_wraps(c, gap_t, &gap_r);

    c->sum_t = sat_add(c->sum_t, gap_t);
    c->sum_r = sat_add(c->sum_r, gap_r);
    c->last_t = t;
    c->last_r = r;
    c->polls++;
    return ok;
}

/* A stalled start sample is dropped whole: nothing has been summed from it yet. */
static void start_window(struct run *c, struct endpoint *e)
{
    for (;;) {
        sample(c, e);
        if (!is_stall(c, e->bracket_cyc) || c->retries >= CAL_MAX_RETRIES)
            break;
        c->retries++;
    }
    c->last_t = e->t2;
    c->last_r = e->r;
    c->sum_t = e->bracket_cyc;
    c->sum_r = 0;
    c->wraps_inferred = 0;
}

static int timed_out(struct run *c, const char *why)
{
    c->why = why;
    return -ETIMEDOUT;
}

/* Polls until the summed reference covers the window. Reference first, then target: the
 * target gap then contains the reference gap's later part, so a stall shows in this poll's
 * or the next poll's check before the window can end on a wrong sum. */
static int wait_window(struct run *c, const struct limits *lim)
{
    for (uint64_t polls = 0; c->sum_r < lim->window_ref_cyc; polls++) {
        if (c->sum_r == 0 && polls >= CAL_STUCK_POLLS)
            return timed_out(c, "neither counter moved (poll cap)");
        if (polls >= lim->max_polls)
            return timed_out(c, "window not reached within the poll cap");
        uint64_t r = cs_read(c->ref);
        uint64_t t = cs_read(c->tg->cs);
        if (!advance(c, t, r))
            return -EAGAIN;
        if (c->sum_r == 0 && c->sum_t > lim->stuck_cyc)
            return timed_out(c, "reference does not count");
        if (c->sum_t > lim->bound_cyc)
            return timed_out(c, "reference did not cover the window within the bound");
    }
    return 0;
}

/* A stalled end sample is dropped before anything is summed from it: its reference value
 * may sit after a stall long enough to hide a wrap, which the next sample's gap check then
 * sees as one long gap. The kept sample is summed up to t2 (the reference was read before
 * t2, so the checked target gap covers the reference gap). */
static int end_window(struct run *c, struct endpoint *e)
{
    for (;;) {
        sample(c, e);
        if (!is_stall(c, e->bracket_cyc) || c->retries >= CAL_MAX_RETRIES)
            break;
        c->retries++;
    }
    return advance(c, e->t2, e->r) ? 0 : -EAGAIN;
}

static int check_args(const struct cal_target *tg, const struct clocksource *ref,
                      uint64_t ref_hz, uint64_t window_ns, const char **why)
{
    if (!tg->cs->read || tg->cs->mask == 0)
        *why = "target has no read function or mask";
    else if (tg->max_hz == 0 || tg->max_hz > CLOCKSOURCE_MAX_FREQ_HZ)
        *why = "target max_hz out of range";
    else if (!ref->read || ref->mask < CAL_REF_MIN_MASK)
        *why = "reference has no read function or is narrower than 8 bits";
    else if (ref_hz < CAL_REF_MIN_HZ || ref_hz > CLOCKSOURCE_MAX_FREQ_HZ)
        *why = "reference frequency unknown or out of range";
    else if (window_ns < CAL_MIN_WINDOW_NS || window_ns > CAL_MAX_WINDOW_NS)
        *why = "window outside 100 us .. 60 s";
    else
        return 0;
    return -EINVAL;
}

static void set_limits(struct limits *lim, uint64_t max_hz, uint64_t ref_hz,
                       uint64_t window_ns)
{
    uint64_t bound_ns = 2 * window_ns + CAL_WAIT_SLACK_NS;

    lim->window_ref_cyc = mul_div_u64_ceil(window_ns, ref_hz, NSEC_PER_SEC);
    lim->bound_cyc = mul_div_u64_ceil(bound_ns, max_hz, NSEC_PER_SEC);
    lim->stuck_cyc = mul_div_u64_ceil(CAL_NO_PROGRESS_NS, max_hz, NSEC_PER_SEC);
    lim->max_polls = bound_ns / CAL_MIN_POLL_NS;
}

/* The uncertainty bound of the measurement alone, in ppb, rounded up. */
static uint64_t measured_ppb(uint64_t span_t, uint64_t span_r, uint64_t b0, uint64_t b1)
{
    uint64_t tick_cyc = span_t / span_r + (span_t % span_r != 0);
    uint64_t unc_cyc = sat_add(sat_add(b0, b1), sat_add(tick_cyc, tick_cyc));

    return mul_div_u64_ceil(unc_cyc, PPB, span_t);
}

/* Relative errors compose as (1 + a)(1 + b) - 1 = a + b + ab; the product term is rounded
 * up so the sum stays a bound. */
static uint64_t combine_ppb(uint64_t a, uint64_t b)
{
    return sat_add(sat_add(a, b), mul_div_u64_ceil(a, b, PPB));
}

static int finish(struct run *c, const struct endpoint *e0, const struct endpoint *e1,
                  uint64_t ref_hz, uint64_t ref_unc_ppb, struct cal_result *out)
{
    /* sum_t runs from e0.t1 to e1.t2; the midpoints are t1 + bracket / 2 at both ends. */
    uint64_t head = e0->bracket_cyc / 2, tail = e1->bracket_cyc - e1->bracket_cyc / 2;
    uint64_t span_r = c->sum_r;

    out->bracket_start_cyc = e0->bracket_cyc;
    out->bracket_end_cyc = e1->bracket_cyc;
    out->ref_cyc = span_r;
    if (c->sum_t <= head + tail)
        return set_status(out, CAL_FAIL, -EIO, "target did not count");
    uint64_t span_t = c->sum_t - head - tail;
    uint64_t freq_hz;
    out->target_cyc = span_t;
    if (!mul_div_u64_round_checked(span_t, ref_hz, span_r, &freq_hz) || freq_hz > c->tg->max_hz)
        return set_status(out, CAL_FAIL, -ERANGE, "frequency above the target's max_hz");
    if (freq_hz == 0)
        return set_status(out, CAL_FAIL, -EIO, "target did not count");
    out->freq_hz = freq_hz;
    out->window_ns = mul_div_u64_round(span_r, NSEC_PER_SEC, ref_hz);
    out->uncertainty_ppb = combine_ppb(measured_ppb(span_t, span_r, e0->bracket_cyc,
                                                    e1->bracket_cyc), ref_unc_ppb);
    return set_status(out, CAL_OK, 0, NULL);
}

int calibrate_pair(const struct cal_target *target, const struct clocksource *ref,
                   uint64_t ref_uncertainty_ppb, uint64_t window_ns, struct cal_result *out)
{
    result_init(out, target && target->cs && target->cs->name ? target->cs->name : "?",
                "measured", ref && ref->name ? ref->name : "none", true);
    if (!target || !target->cs)
        return set_status(out, CAL_FAIL, -EINVAL, "no target");
    if (!ref)
        return set_status(out, CAL_SKIP, -ENODEV, "no reference");
    uint64_t ref_hz = ref->freq_hz ? ref->freq_hz : ref->nominal_hz;
    const char *why = NULL;
    if (check_args(target, ref, ref_hz, window_ns, &why) < 0)
        return set_status(out, CAL_FAIL, -EINVAL, why);

    struct limits lim;
    set_limits(&lim, target->max_hz, ref_hz, window_ns);
    struct run c = {
        .tg = target, .ref = ref, .min_bracket_cyc = UINT64_MAX,
        .floor_cyc = mul_div_u64_ceil(CAL_STALL_FLOOR_NS, target->max_hz, NSEC_PER_SEC),
    };
    struct endpoint e0, e1;
    for (unsigned i = 0; i < CAL_WARMUP_SAMPLES; i++)
        sample(&c, &e0);

    int rc;
    for (;;) {
        start_window(&c, &e0);
        rc = wait_window(&c, &lim);
        if (rc == 0)
            rc = end_window(&c, &e1);
        if (rc != -EAGAIN)
            break;
        if (c.retries >= CAL_MAX_RETRIES) {
            rc = -EIO;
            c.why = "poll gaps long enough to lose a wrap; retries exhausted";
            break;
        }
        c.retries++;
    }
    out->retries = c.retries;
    out->polls = c.polls;
    out->wraps_inferred = c.wraps_inferred;
    out->bracket_min_cyc = c.min_bracket_cyc;
    if (rc < 0)
        return set_status(out, CAL_FAIL, rc, c.why);
    return finish(&c, &e0, &e1, ref_hz, ref_uncertainty_ppb, out);
}

int calibrate_tsc(const struct clocksource *ref, const struct clocksource *tsc,
                  uint64_t window_ns, struct cal_result *out)
{
    const struct cal_target t = { .cs = tsc, .max_hz = CAL_TSC_MAX_HZ };

    return calibrate_pair(&t, ref, 0, window_ns, out);
}

/* ---- what the CPU states ---------------------------------------------------------------- */

int calibrate_from_cpuid15(uint64_t crystal_hz, uint32_t numerator, uint32_t denominator,
                           const char *invalid, struct cal_result *out)
{
    uint64_t freq_hz;

    result_init(out, "tsc", "cpuid15", "crystal", false);
    if (invalid)
        return set_status(out, CAL_SKIP, -ENOTSUP, invalid);
    /* cpu_probe() has checked these; a hand-made set might not have. */
    if (!mul_div_u64_round_checked(crystal_hz, numerator, denominator, &freq_hz) ||
        freq_hz == 0)
        return set_status(out, CAL_SKIP, -ENOTSUP, "leaf 0x15 ratio gives no frequency");
    out->freq_hz = freq_hz;
    /* + the rounding to whole Hz: at most 0.5 Hz */
    out->uncertainty_ppb = CAL_CRYSTAL_TOL_PPB + mul_div_u64_ceil(1, PPB, 2 * freq_hz);
    return set_status(out, CAL_OK, 0, NULL);
}

int calibrate_from_cpuid16(uint32_t base_mhz, const char *invalid, struct cal_result *out)
{
    result_init(out, "tsc", "cpuid16", "nominal", false);
    if (invalid || base_mhz == 0)
        return set_status(out, CAL_SKIP, -ENOTSUP, invalid ? invalid : "leaf 0x16 not valid");
    uint64_t freq_hz = (uint64_t)base_mhz * 1000000u;
    out->freq_hz = freq_hz;
    /* The leaf states whole MHz: the true value is within 0.5 MHz of it, on a crystal. */
    out->uncertainty_ppb = mul_div_u64_ceil(500000u, PPB, freq_hz) + CAL_CRYSTAL_TOL_PPB;
    return set_status(out, CAL_OK, 0, NULL);
}

int calibrate_from_user(const char *target, uint64_t freq_hz, struct cal_result *out)
{
    result_init(out, target, "cmdline", "user", false);
    out->user = true;
    if (freq_hz == 0)
        return set_status(out, CAL_SKIP, -EINVAL, "a frequency of 0 Hz");
    out->freq_hz = freq_hz;
    return set_status(out, CAL_OK, 0, NULL);
}

/* ---- the choice ------------------------------------------------------------------------- */

int64_t calibrate_ppb_diff(uint64_t freq_hz, uint64_t ref_hz)
{
    if (ref_hz == 0)
        return 0;
    bool below = freq_hz < ref_hz;
    /* Rounding the magnitude half up is rounding the signed value half away from zero. */
    uint64_t mag = mul_div_u64_round(below ? ref_hz - freq_hz : freq_hz - ref_hz, PPB, ref_hz);

    if (mag > (uint64_t)INT64_MAX)
        return below ? INT64_MIN : INT64_MAX;
    return below ? -(int64_t)mag : (int64_t)mag;
}

static int pick(const struct cal_result *r, size_t n, bool measured, bool user)
{
    int best = -1;

    for (size_t i = 0; i < n; i++) {
        if (r[i].status != CAL_OK || r[i].measured != measured || r[i].user != user)
            continue;
        /* Strictly smaller: a tie keeps the earlier, preferred entry. */
        if (best < 0 || r[i].uncertainty_ppb < r[best].uncertainty_ppb)
            best = (int)i;
    }
    return best;
}

int calibrate_choose(struct cal_result *results, size_t n)
{
    int best = pick(results, n, false, true);

    if (best < 0)
        best = pick(results, n, true, false);
    if (best < 0)
        best = pick(results, n, false, false);
    for (size_t i = 0; i < n; i++) {
        struct cal_result *r = &results[i];
        r->chosen = (int)i == best;
        r->applied_hz = r->chosen ? calibrate_roundest(r->freq_hz, r->uncertainty_ppb) : 0;
        r->disagreement_ppb = 0;
        r->agrees = false;
        if (best < 0 || r->status != CAL_OK)
            continue;
        const struct cal_result *c = &results[best];
        int64_t d = calibrate_ppb_diff(r->freq_hz, c->freq_hz);
        uint64_t mag = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
        r->disagreement_ppb = d;
        r->agrees = mag <= sat_add(r->uncertainty_ppb, c->uncertainty_ppb);
    }
    return best < 0 ? -ENODEV : best;
}

uint64_t calibrate_roundest(uint64_t freq_hz, uint64_t uncertainty_ppb)
{
    uint64_t d = mul_div_u64(freq_hz, uncertainty_ppb, NSEC_PER_SEC);
    if (!d)
        return freq_hz;
    uint64_t lo = freq_hz > d ? freq_hz - d : 1, hi = freq_hz + d < freq_hz ? UINT64_MAX
                                                                           : freq_hz + d;
    /* the largest power of ten with a multiple in [lo, hi]: 1 always has one */
    uint64_t p = 1;
    while (p <= hi / 10 && (hi / (p * 10)) * (p * 10) >= lo)
        p *= 10;
    uint64_t below = (freq_hz / p) * p, above = below + p;
    bool below_ok = below >= lo, above_ok = above <= hi && above > below;
    if (below_ok && (!above_ok || freq_hz - below <= above - freq_hz))
        return below;
    return above;
}
