/* lib/time/clockevent.c - the registry of clock event devices, their owners and
 * states, their selection, and programming them in ns with the min/max guard and the -ETIME
 * retry. See clockevent.h. */
#include "ticklab/clockevent.h"

#include "ticklab/clocksource.h"   /* NSEC_PER_SEC */
#include "ticklab/errno.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"
#include "ticklab/muldiv.h"
#include "ticklab/timekeeping.h"

#define CE_ANY_MODE (CE_PERIODIC | CE_ONESHOT)

static const char REASON_NO_FREQ[] = "no frequency (freq_hz 0)";
static const char REASON_NO_MODE[] = "offers neither periodic nor one-shot events";
static const char REASON_DRIVER[] = "not marked usable by its driver";

static struct clockevent *ce_list;

/* ---- conversions ------------------------------------------------------------------------ */

uint64_t clockevent_ns_to_cyc_up(const struct clockevent *ce, uint64_t delta_ns)
{
    return mul_div_u64_ceil(delta_ns, ce->freq_hz, NSEC_PER_SEC);
}

uint64_t clockevent_cyc_to_ns(const struct clockevent *ce, uint64_t cyc)
{
    return mul_div_u64_round(cyc, NSEC_PER_SEC, ce->freq_hz);
}

/* The shortest delta the core asks for: a delta of 0 cycles means nothing to a device. */
static uint64_t shortest_cyc(const struct clockevent *ce)
{
    return ce->min_delta_cyc ? ce->min_delta_cyc : 1;
}

/* The ns figures of the delta limits, computed when they change, not per event. */
/* ns -> cycles by a multiply and a shift, for the per-event path: M = ceil(f * 2^s / 1e9)
 * with the largest s (at most 63) that keeps M in 64 bits. For d < 2^s, d * M / 2^s lies in
 * [d*f/1e9, d*f/1e9 + 1), so its floor q is floor(d*f/1e9) or one more, and one exact
 * 128-bit comparison (q * 1e9 < d * f) makes it the exact ceiling either way: the same
 * figure as clockevent_ns_to_cyc_up(), in a few instructions instead of a division. */
static void update_ns_cyc(struct clockevent *ce)
{
    ce->ns_cyc_freq = 0;
    for (uint32_t sh = 63; ce->freq_hz && sh >= 32; sh--) {
        uint64_t m = mul_div_u64_ceil(ce->freq_hz, 1ull << sh, NSEC_PER_SEC);
        if (m != UINT64_MAX) {
            ce->ns_cyc_mult = m;
            ce->ns_cyc_shift = sh;
            ce->ns_cyc_freq = ce->freq_hz;
            return;
        }
    }
}

static inline uint64_t ns_to_cyc_up_fast(const struct clockevent *ce, uint64_t d)
{
    if (__builtin_expect(ce->ns_cyc_freq == ce->freq_hz && ce->freq_hz &&
                         (d >> ce->ns_cyc_shift) == 0, 1)) {
        uint64_t q = (uint64_t)(((unsigned __int128)d * ce->ns_cyc_mult) >> ce->ns_cyc_shift);
        if ((unsigned __int128)q * NSEC_PER_SEC < (unsigned __int128)d * ce->freq_hz)
            q++;
        return q;
    }
    return clockevent_ns_to_cyc_up(ce, d);
}

static void update_limits_ns(struct clockevent *ce)
{
    update_ns_cyc(ce);
    if (!ce->freq_hz) {
        ce->min_delta_ns = ce->max_delta_ns = UINT64_MAX;
        return;
    }
    /* up: the delta lasts at least this long */
    ce->min_delta_ns = mul_div_u64_ceil(shortest_cyc(ce), NSEC_PER_SEC, ce->freq_hz);
    ce->max_delta_ns = clockevent_cyc_to_ns(ce, ce->max_delta_cyc);
}

int clockevent_set_min_delta(struct clockevent *ce, uint64_t min_delta_cyc)
{
    if (min_delta_cyc == 0 || min_delta_cyc > ce->max_delta_cyc)
        return -EINVAL;
    ce->min_delta_cyc = min_delta_cyc;
    update_limits_ns(ce);
    return 0;
}

/* ---- registry --------------------------------------------------------------------------- */

static bool promises_kept(const struct clockevent *ce)
{
    if (!ce->name || !ce->name[0] || !ce->set_state_shutdown)
        return false;
    if ((ce->features & CE_PERIODIC) && !ce->set_state_periodic)
        return false;
    if ((ce->features & CE_ONESHOT) && (!ce->set_state_oneshot || !ce->set_next_event))
        return false;
    if ((ce->features & CE_ABS) &&
        (!(ce->features & CE_ONESHOT) || !ce->set_next_abs || !ce->abs_cs))
        return false;
    if ((ce->features & CE_ANY_MODE) &&
        (ce->max_delta_cyc == 0 || ce->min_delta_cyc > ce->max_delta_cyc))
        return false;
    return true;
}

int clockevent_register(struct clockevent *ce)
{
    struct clockevent **tail = &ce_list;

    if (!ce || !promises_kept(ce))
        return -EINVAL;
    for (; *tail; tail = &(*tail)->next)
        if (*tail == ce || (k_strcmp((*tail)->name, ce->name) == 0 && (*tail)->cpu == ce->cpu))
            return -EBUSY;

    if (ce->freq_hz == 0 || !(ce->features & CE_ANY_MODE)) {
        ce->usable = false;
        ce->unusable_reason = ce->freq_hz == 0 ? REASON_NO_FREQ : REASON_NO_MODE;
    }
    if (!ce->usable && !ce->unusable_reason)
        ce->unusable_reason = REASON_DRIVER;
    ce->state = CE_STATE_SHUTDOWN;
    ce->event = 0;
    ce->owner = 0;
    update_limits_ns(ce);
    ce->events = ce->programs = ce->abs_programs = ce->state_changes = 0;
    ce->clamped_short = ce->clamped_long = ce->etime_retries = ce->etime_failures = 0;
    ce->abs_exact_ns = ce->reached_ns = 0;
    ce->abs_exact_gen = 0;
    ce->cs_cyc_from_hz = ce->cs_cyc_to_hz = 0;      /* worked out at the first use */
    ce->inline_programs = 0;
    ce->next = NULL;
    *tail = ce;
    return 0;
}

struct clockevent *clockevent_list(void)
{
    return ce_list;
}

char *clockevent_names(unsigned cpu, char *buf, size_t buf_len)
{
    size_t used = 0;
    if (buf_len == 0)
        return buf;
    buf[0] = '\0';
    for (struct clockevent *ce = ce_list; ce; ce = ce->next) {
        if (ce->cpu != cpu || used >= buf_len)
            continue;
        int n = fmt_snprintf(buf + used, buf_len - used, "%s%s", used ? ", " : "", ce->name);
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

struct clockevent *clockevent_find(const char *name, unsigned cpu)
{
    for (struct clockevent *ce = ce_list; ce && name; ce = ce->next)
        if (ce->cpu == cpu && k_strcmp(ce->name, name) == 0)
            return ce;
    return NULL;
}

/* ---- owners ----------------------------------------------------------------------------- */

bool clockevent_shares_hw(const struct clockevent *a, const struct clockevent *b)
{
    return a && b && (a == b || (a->hw && a->hw == b->hw));
}

/* The owned device that ce's hardware is taken by (ce itself included), or NULL. */
static const struct clockevent *taken_by(const struct clockevent *ce, const void *owner)
{
    if (ce->event && ce->owner != owner)
        return ce;
    if (!ce->hw)
        return NULL;
    for (const struct clockevent *o = ce_list; o; o = o->next)
        if (o != ce && o->hw == ce->hw && o->event)
            return o;
    return NULL;
}

bool clockevent_is_free(const struct clockevent *ce)
{
    return ce && ce->usable && !ce->event && !taken_by(ce, NULL);
}

int clockevent_claim(struct clockevent *ce, clockevent_handler event, void *owner)
{
    if (!ce || !event)
        return -EINVAL;
    if (!ce->usable)
        return -ENODEV;
    if (taken_by(ce, owner))
        return -EBUSY;
    ce->owner = owner;
    ce->event = event;
    return 0;
}

void clockevent_release(struct clockevent *ce)
{
    if (!ce)
        return;
    clockevent_shutdown(ce);
    ce->event = 0;
    ce->owner = 0;
}

/* ---- selection -------------------------------------------------------------------------- */

static const struct {
    unsigned bit;
    const char *name;
} feature_name[] = {
    { CE_PERIODIC, "PERIODIC" },
    { CE_ONESHOT, "ONESHOT" },
    { CE_ABS, "ABS" },
    { CE_PERCPU, "PERCPU" },
    { CE_STOPS_IN_IDLE, "STOPS_IN_IDLE" },
};

char *clockevent_feature_names(unsigned features, char *buf, size_t buf_len)
{
    size_t used = 0;

    if (buf_len == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(feature_name) / sizeof(feature_name[0]); i++) {
        if (!(features & feature_name[i].bit) || used >= buf_len)
            continue;
        int n = fmt_snprintf(buf + used, buf_len - used, "%s%s", used ? "|" : "",
                             feature_name[i].name);
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

const char *clockevent_state_name(enum clockevent_state s)
{
    switch (s) {
    case CE_STATE_PERIODIC: return "periodic";
    case CE_STATE_ONESHOT: return "oneshot";
    default: return "shutdown";
    }
}

static bool qualifies(const struct clockevent *ce, unsigned need, unsigned cpu,
                      const struct clockevent *avoid)
{
    return ce->cpu == cpu && (ce->features & need) == need && clockevent_is_free(ce) &&
           !clockevent_shares_hw(ce, avoid);
}

static struct clockevent *best_with(unsigned need, unsigned cpu, const struct clockevent *avoid)
{
    struct clockevent *best = NULL;

    for (struct clockevent *ce = ce_list; ce; ce = ce->next)
        if (qualifies(ce, need, cpu, avoid) && (!best || ce->rating > best->rating))
            best = ce;
    return best;
}

/* One line for the error record: why the named device was not taken, and what was. */
static void explain(char *why, size_t why_len, const char *name, unsigned need, unsigned cpu,
                    const struct clockevent *asked, const struct clockevent *got)
{
    const char *using = got ? got->name : "none usable";
    char lacks[48];

    char names[96];
    if (!asked) {
        clockevent_names(cpu, names, sizeof(names));
        fmt_snprintf(why, why_len, "clockevent=%s: no such device here (%s%s); using %s", name,
                     names[0] ? "registered: " : "none registered", names, using);
    } else if (!asked->usable) {
        fmt_snprintf(why, why_len, "clockevent=%s: unusable (%s); using %s", name,
                     asked->unusable_reason ? asked->unusable_reason : "no reason given",
                     using);
    } else if ((asked->features & need) != need) {
        clockevent_feature_names(need & ~asked->features, lacks, sizeof(lacks));
        fmt_snprintf(why, why_len, "clockevent=%s: lacks %s; using %s", name, lacks, using);
    } else {
        fmt_snprintf(why, why_len, "clockevent=%s: in use (it or its hardware); using %s",
                     name, using);
    }
}

struct clockevent *clockevent_select(const char *name, unsigned need, unsigned cpu,
                                     const struct clockevent *avoid, char *why,
                                     size_t why_len)
{
    struct clockevent *asked = name ? clockevent_find(name, cpu) : NULL;
    struct clockevent *pick =
        asked && qualifies(asked, need, cpu, avoid) ? asked : best_with(need, cpu, avoid);
    char needs[48];

    if (!why || why_len == 0)
        return pick;
    why[0] = '\0';
    if (name && (!asked || pick != asked)) {
        explain(why, why_len, name, need, cpu, asked, pick);
    } else if (!pick) {
        clockevent_feature_names(need, needs, sizeof(needs));
        fmt_snprintf(why, why_len, "no usable clockevent%s%s", needs[0] ? " with " : "",
                     needs);
    }
    return pick;
}

/* ---- states ----------------------------------------------------------------------------- */

int clockevent_set_state(struct clockevent *ce, enum clockevent_state s, uint64_t period_cyc)
{
    int err;

    ce->abs_exact_ns = 0;
    if (s == CE_STATE_SHUTDOWN) {
        if (ce->state != CE_STATE_SHUTDOWN)
            ce->state_changes++;
        ce->set_state_shutdown(ce);
        ce->state = CE_STATE_SHUTDOWN;
        return 0;
    }
    if (!ce->usable)
        return -ENODEV;
    if (s == CE_STATE_ONESHOT) {
        if (!(ce->features & CE_ONESHOT))
            return -ENOTSUP;
        if (ce->state == CE_STATE_ONESHOT)
            return 0;
        if (ce->state != CE_STATE_SHUTDOWN)
            ce->set_state_shutdown(ce);   /* drivers enter a mode from SHUTDOWN only */
        err = ce->set_state_oneshot(ce);
    } else {
        if (!(ce->features & CE_PERIODIC))
            return -ENOTSUP;
        if (ce->state != CE_STATE_SHUTDOWN)
            ce->set_state_shutdown(ce);
        err = ce->set_state_periodic(ce, period_cyc);
    }
    ce->state_changes++;
    if (err) {
        ce->set_state_shutdown(ce);
        ce->state = CE_STATE_SHUTDOWN;
        return err;
    }
    ce->state = s;
    return 0;
}

/* ---- programming ------------------------------------------------------------------------ */

/* In ONESHOT, ready for set_next_event: 0, or why not. */
static int enter_oneshot(struct clockevent *ce)
{
    if (ce->state == CE_STATE_ONESHOT)
        return 0;
    return clockevent_set_state(ce, CE_STATE_ONESHOT, 0);
}

static uint64_t clamp_delta(struct clockevent *ce, uint64_t cyc)
{
    if (cyc < shortest_cyc(ce)) {
        ce->clamped_short++;
        return shortest_cyc(ce);
    }
    if (cyc > ce->max_delta_cyc) {
        ce->clamped_long++;
        return ce->max_delta_cyc;
    }
    return cyc;
}

/* The moment passed while the device was being programmed. Ask for the shortest delta it
 * takes, and double it on every further -ETIME: a slow bus or an SMI that ate one attempt
 * is likely to eat a short one again, so each try leaves more room. */
static int retry_after_etime(struct clockevent *ce)
{
    uint64_t cyc = shortest_cyc(ce);

    for (int i = 0; i < CLOCKEVENT_ETIME_RETRIES; i++) {
        ce->etime_retries++;
        int err = ce->set_next_event(ce, cyc);
        if (err != -ETIME)
            return err;
        cyc = cyc > ce->max_delta_cyc / 2 ? ce->max_delta_cyc : cyc * 2;
    }
    ce->etime_failures++;
    return -ETIME;
}

/* The relative path, once the device is known to be in ONESHOT and the request counted. */
static int program_delta(struct clockevent *ce, uint64_t delta_ns)
{
    ce->abs_exact_ns = 0;
    int err = ce->set_next_event(ce, clamp_delta(ce, ns_to_cyc_up_fast(ce, delta_ns)));
    return err == -ETIME ? retry_after_etime(ce) : err;
}

int clockevent_program_ns(struct clockevent *ce, uint64_t delta_ns)
{
    int err = enter_oneshot(ce);

    if (err)
        return err;
    ce->programs++;
    return program_delta(ce, delta_ns);
}

int clockevent_pending(struct clockevent *ce)
{
    if (!ce->pending || ce->state != CE_STATE_ONESHOT)
        return -ENOTSUP;
    return ce->pending(ce) ? 1 : 0;
}

uint64_t clockevent_early_by(struct clockevent *ce, uint64_t deadline_ns, uint64_t armed_at_ns,
                             uint64_t (*now_ns)(void))
{
    uint64_t delay = deadline_ns > armed_at_ns ? deadline_ns - armed_at_ns : 0;
    bool fired = clockevent_pending(ce) == 0;
    uint64_t after = now_ns();
    if (fired && after < deadline_ns &&
        deadline_ns - after > CLOCKEVENT_EARLY_TOLERANCE_NS(delay))
        return deadline_ns - after;
    return 0;
}

int clockevent_program_cyc(struct clockevent *ce, uint64_t cyc)
{
    int err = enter_oneshot(ce);

    if (err)
        return err;
    ce->programs++;
    ce->abs_exact_ns = 0;
    return ce->set_next_event(ce, cyc);
}

/* The count of cs at which time_ns() reaches abs_ns: exact when time_ns() runs on cs;
 * otherwise mapped through one pair of readings of both clocks taken together, at cs's
 * stated rate (over a wait of milliseconds a rate error of ppm is nanoseconds). */
static int abs_count(const struct clocksource *cs, uint64_t abs_ns, uint64_t *cyc, bool *exact)
{
    int rc = timekeeping_cycles_at(abs_ns, cs, cyc);
    *exact = rc == 0;
    if (rc != -ENODEV || !cs->freq_hz || !cs->read)
        return rc;
    uint64_t c, t = time_ns_paired(cs, &c);
    if (abs_ns <= t)
        return -ETIME;
    uint64_t d;
    if (!mul_div_u64_checked(abs_ns - t, cs->freq_hz, NSEC_PER_SEC, &d))
        return -ERANGE;
    *cyc = (c + d + 1) & cs->mask;       /* +1: the cycle in progress, so never early */
    return 0;
}

/* ---- the in-line relative arming (count_reg) ---------------------------------------------
 *
 * A device that counts a delay from its write fires (write time) + count / f_dev later. The
 * general way reads time_ns(), subtracts, converts ns to device cycles and calls the driver:
 * about 90 instructions between the clock read and the write on the LAPIC, each of them a
 * ns of lateness at every wake-up. Here the moment is first turned into the count of
 * time_ns()'s counter at which time_ns() reaches it (exactly: timekeeping_target_at), and
 * everything else prepared; after the read there is only d = target - now counter cycles,
 * d * f_dev / f_cs rounded up by a multiply, an add and a shift, the clamps, and the write.
 * Never early against time_ns()'s own counter at the stated rates (the same assumption the
 * general way makes): the device counts at least d counter cycles' worth, and the counter
 * then reads at least the target. At most one device cycle late by the rounding, for a
 * fraction d / 2^shift of the armings. */

/* M = ceil(f_dev * 2^s / f_cs) with the largest s (at most 63) keeping M in 64 bits; d is
 * taken up to cs_cyc_max, the most whose count (one over at worst) stays within
 * max_delta_cyc (beyond: max_delta_cyc, an early event the owner sees and re-arms). false:
 * no such M (a rate of 0). */
static bool update_cs_cyc(struct clockevent *ce, uint64_t f_cs)
{
    ce->cs_cyc_from_hz = 0;
    if (!f_cs || !ce->freq_hz)
        return false;
    for (uint32_t sh = 63; sh >= 8; sh--) {
        uint64_t m = mul_div_u64_ceil(ce->freq_hz, 1ull << sh, f_cs);
        if (m == UINT64_MAX || m == 0)
            continue;
        ce->cs_cyc_mult = m;
        ce->cs_cyc_shift = sh;
        ce->cs_cyc_max = mul_div_u64(ce->max_delta_cyc - 1, f_cs, ce->freq_hz);
        if (ce->cs_cyc_max >> sh)
            ce->cs_cyc_max = (1ull << sh) - 1;      /* keeps the rounding under one cycle */
        ce->cs_cyc_from_hz = f_cs;
        ce->cs_cyc_to_hz = ce->freq_hz;
        return true;
    }
    return false;
}

/* 0 when the device was armed here; -EAGAIN: the general way (no in-line counter, a moment
 * not after the last fold, rates it cannot convert, or a mapping that changed meanwhile:
 * then the general way arms again over this write). */
static inline __attribute__((always_inline)) int program_count_at(struct clockevent *ce,
                                                                  uint64_t abs_ns)
{
    struct timekeeping_target tg;
    if (timekeeping_target_at(abs_ns, &tg) != 0)
        return -EAGAIN;
    if (__builtin_expect(ce->cs_cyc_from_hz != tg.freq_hz || ce->cs_cyc_to_hz != ce->freq_hz,
                         0) && !update_cs_cyc(ce, tg.freq_hz))
        return -EAGAIN;
    const uint64_t mult = ce->cs_cyc_mult, round = (1ull << ce->cs_cyc_shift) - 1;
    const uint64_t dmax = ce->cs_cyc_max, lo = shortest_cyc(ce);
    const uint32_t sh = ce->cs_cyc_shift;
    const struct io_reg32 reg = ce->count_reg;      /* in registers before the read */
    uint64_t cnt;
    int clamped = 0;

    uint64_t d = tg.cyc - io_counter_read(&tg.counter);     /* a 64-bit counter: no mask */
    if (__builtin_expect(d - 1 < dmax, 1)) {                /* 1 <= d <= dmax */
        cnt = mul_add_shr_u64(d, mult, round, sh);
        if (__builtin_expect(cnt < lo, 0)) {
            cnt = lo;
            clamped = -1;
        }
    } else if ((int64_t)d <= 0) {
        cnt = lo;                                           /* the moment has passed */
        clamped = -1;
    } else {
        cnt = ce->max_delta_cyc;
        clamped = 1;
    }
    io_reg32_write(&reg, (uint32_t)cnt);

    ce->inline_programs++;
    if (clamped < 0)
        ce->clamped_short++;
    else if (clamped > 0)
        ce->clamped_long++;
    if (__builtin_expect(__atomic_load_n(&timekeeping_mapping_gen, __ATOMIC_ACQUIRE) != tg.gen,
                         0))
        return -EAGAIN;
    return 0;
}

int clockevent_program_abs_ns(struct clockevent *ce, uint64_t abs_ns, uint64_t now_ns)
{
    int err = enter_oneshot(ce);
    uint64_t cyc;

    if (err)
        return err;
    ce->programs++;
    if (ce->features & CE_ABS) {
        /* Closer than the measured minimum: the relative path clamps to it. */
        uint64_t wait_ns = abs_ns > now_ns ? abs_ns - now_ns : 0;
        if (wait_ns < ce->min_delta_ns)
            return program_delta(ce, 0);
        uint32_t gen = __atomic_load_n(&timekeeping_mapping_gen, __ATOMIC_ACQUIRE);
        bool exact;
        if (wait_ns < ce->max_delta_ns &&
            abs_count(ce->abs_cs, abs_ns, &cyc, &exact) == 0) {
            ce->abs_programs++;
            /* Before the write: an interrupt of this arming may come as soon as it lands. */
            ce->abs_exact_ns = exact ? abs_ns : 0;
            ce->abs_exact_gen = gen;
            err = ce->set_next_abs(ce, cyc);
            if (err != -ETIME) {
                if (err)
                    ce->abs_exact_ns = 0;
                return err;
            }
            ce->etime_retries++;
            return program_delta(ce, 0);
        }
    }
    /* Relative: the clock read as late as possible, so that only the conversion and the
     * device write lie between it and the moment the device starts counting. */
    if (ce->count_reg.kind != IO_REG_NONE) {
        ce->abs_exact_ns = 0;
        if (program_count_at(ce, abs_ns) == 0)
            return 0;
    }
    uint64_t now = time_ns();
    return program_delta(ce, abs_ns > now ? abs_ns - now : 0);
}

int clockevent_set_periodic_ns(struct clockevent *ce, uint64_t period_ns,
                               uint64_t *actual_period_ns)
{
    uint64_t cyc;

    if (!(ce->features & CE_PERIODIC))
        return -ENOTSUP;
    if (!ce->usable)
        return -ENODEV;
    /* Nearest, not up: a periodic tick's error accumulates either way, and nearest keeps
     * it smallest. mul_div_u64_round saturates, which the range check then refuses. */
    cyc = mul_div_u64_round(period_ns, ce->freq_hz, NSEC_PER_SEC);
    if (cyc < shortest_cyc(ce) || cyc > ce->max_delta_cyc)
        return -ERANGE;
    ce->programs++;
    int err = clockevent_set_state(ce, CE_STATE_PERIODIC, cyc);
    if (err)
        return err;
    if (actual_period_ns)
        *actual_period_ns = clockevent_cyc_to_ns(ce, cyc);
    return 0;
}

#ifdef TICKLAB_HOSTED
void clockevent_test_reset(void)
{
    ce_list = NULL;
}
#endif
