/* lib/time/tick.c - see tick.h. */
#include "ticklab/tick.h"

#include "ticklab/io.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/errno.h"
#include "ticklab/fmt.h"
#include "ticklab/hotpath.h"
#include "ticklab/muldiv.h"

_Static_assert(__builtin_offsetof(struct tick_info, measured_periods) ==
                   __builtin_offsetof(struct tick_info, measured_last_ns) + sizeof(uint64_t),
               "the fast run writes measured_last_ns and measured_periods as a pair");

/* The grid point ref: its whole ns, its 1/65536 ns, and both set. */
static inline uint64_t ref_ns(const struct tick *t)
{
    return (uint64_t)(t->ref_q >> 64);
}
static inline uint32_t ref_frac(const struct tick *t)
{
    return (uint32_t)((uint64_t)t->ref_q >> 48);
}
static inline void ref_set(struct tick *t, uint64_t ns, uint32_t frac)
{
    t->ref_q = (unsigned __int128)ns << 64 | (unsigned __int128)frac << 48;
}

/* Whole periods from the grid point to now (none when now is before it). */
static uint64_t periods_to(const struct tick *t, uint64_t now)
{
    if (now <= ref_ns(t))
        return 0;
    uint64_t d = now - ref_ns(t);
    uint64_t q16 = (t->period_int << 16) | t->period_frac;
    if (d < (1ull << 47))
        return ((d << 16) - ref_frac(t)) / q16;
    return d / (t->period_int + 1);        /* days of idle: a period's fraction no longer
                                              matters; the next look corrects it */
}

/* The first times at which periods_to() reaches 1 and 2: the grid points after ref, rounded
 * up to whole ns (periods_to(now) >= k exactly when now >= ref + ceil((k * period + ref_frac)
 * in 1/65536 ns)). The tick's fast run (one period, account()) needs only these. */
static void grid_next(struct tick *t)
{
    uint64_t q16 = (t->period_int << 16) | t->period_frac;
    uint64_t f1 = q16 + ref_frac(t);
    t->next_ns = ref_ns(t) + ((f1 + 0xFFFF) >> 16);
    t->next2_ns = ref_ns(t) + ((f1 + q16 + 0xFFFF) >> 16);
    t->period_q = (unsigned __int128)t->period_int << 64 | (unsigned __int128)t->period_frac << 48;
    t->two_up_q = 2 * t->period_q + UINT64_MAX;
}

/* advance(t, 1), the tick's fast run, without its multiplications: ref moves by exactly one
 * period (a 128-bit add of period_q), so the grid point one period after the new ref is the
 * one two periods after the old, next2_ns, and only next2_ns is computed: the new ref plus
 * two periods, rounded up to whole ns (two_up_q's 2^64 - 1 carries any fraction into the
 * high half), as grid_next() computes it in 1/65536 ns. */
static inline uint64_t advance_one(struct tick *t)
{
    unsigned __int128 ref = t->ref_q + t->period_q;
    t->ref_q = ref;
    uint64_t j = t->jiffies + 1;
    t->jiffies = j;
    t->next_ns = t->next2_ns;
    t->next2_ns = (uint64_t)((ref + t->two_up_q) >> 64);
#ifdef TICKLAB_HOSTED
    /* The host tests hold every fast run to grid_next()'s own figures. */
    uint64_t next = t->next_ns, next2 = t->next2_ns;
    grid_next(t);
    if (next != t->next_ns || next2 != t->next2_ns)
        __builtin_trap();
#endif
    return j;
}

static inline void advance(struct tick *t, uint64_t n)
{
    uint64_t frac = n * t->period_frac + ref_frac(t);
    ref_set(t, ref_ns(t) + n * t->period_int + (frac >> 16), (uint32_t)(frac & 0xFFFF));
    t->jiffies += n;
    grid_next(t);
}

/* The measured period starts at the first run with a new period from this one on (the
 * fourth: past the first runs' cold paths). */
#define MEASURE_FROM 4

/* Whether the next handler run can be the fast one (tick_event's own few instructions):
 * the tick not stopped for idle, no period owed to tick_sync(), the device periodic, the
 * last arming not failed, and the measured period running (its first run taken), over
 * (stopped for idle once) or not due yet (before run MEASURE_FROM, which tick_event itself
 * sends the whole way). Anything else sends the run the whole way (tick_event_slow), which
 * handles every case. Each change of those conditions ends here. */
static bool fast_run_allowed(const struct tick *t)
{
    const struct tick_info *ti = &t->info;
    return !t->nohz_stopped && !t->owed && ti->periodic && !ti->stalled &&
           (ti->nohz_stops != 0 || ti->measured_first_ns != 0 || ti->ticks < MEASURE_FROM - 1);
}

/* The fast run's bound, set from the tick as it is now: next_ns the true grid point when
 * the next run may be the fast one, else UINT64_MAX (so that tick_event's one range check
 * of now also checks all of fast_run_allowed()); and where the fast run writes the measured
 * period (the tick_info fields while measuring; nowhere that is read once it is over). */
static void set_fast_bound(struct tick *t)
{
    struct tick_info *ti = &t->info;
    grid_next(t);
    if (!fast_run_allowed(t))
        t->next_ns = UINT64_MAX;
    t->measure_to = ti->nohz_stops == 0 && ti->measured_first_ns ? &ti->measured_last_ns
                                                                 : t->measure_void;
}

void tick_sync(struct tick *t)
{
    unsigned long flags = irq_save();
    if (t->running) {
        uint64_t n = periods_to(t, time_ns());
        advance(t, n);
        t->owed += n;
        set_fast_bound(t);
    }
    irq_restore(flags);
}

/* One-shot mode: the next tick at start + k * period. A re-arm that cannot be made (the
 * device said -ETIME through every retry, or refused) gets one more try a whole period
 * from now, which cannot have passed; if that fails too the tick has stopped, and says so
 * in `failures` and `stalled` instead of dying in silence. */
static void rearm(struct tick *t)
{
    struct tick_info *ti = &t->info;
    t->next_deadline_ns += ti->period_ns;
    uint64_t now = time_ns();
    /* A late tick (lost periods, a rescue) skips the grid points already passed: armed for
     * each of them in turn, the device would fire back to back, once per missed period. */
    if (t->next_deadline_ns <= now)
        t->next_deadline_ns += ((now - t->next_deadline_ns) / ti->period_ns + 1) * ti->period_ns;
    uint64_t delta = t->next_deadline_ns - now;
    if (clockevent_program_ns(ti->dev, delta) == 0)
        return;
    ti->rearm_retries++;
    t->next_deadline_ns = now + ti->period_ns;
    if (clockevent_program_ns(ti->dev, ti->period_ns) == 0)
        return;
    ti->failures++;
    ti->stalled = true;
}

static void restart_periodic(struct tick *t)
{
    uint64_t p;
    if (clockevent_set_periodic_ns(t->info.dev, t->info.period_ns, &p) != 0) {
        t->info.failures++;
        t->info.stalled = true;
    }
}

static void restart_after_idle(struct tick *t, uint64_t now)
{
    t->nohz_stopped = false;
    if (t->info.periodic) {
        restart_periodic(t);
    } else {
        t->next_deadline_ns = now;
        rearm(t);
    }
}

/* The measured period: from the fourth handler run with a new period, until the first stop
 * for idle. */
static void measure(struct tick *t, uint64_t now)
{
    struct tick_info *ti = &t->info;
    if (!ti->measured_first_ns) {
        ti->measured_first_ns = now;
        ti->measured_periods = 0;
        t->measured_j0 = t->jiffies;
    } else {
        ti->measured_last_ns = now;
        ti->measured_periods = t->jiffies - t->measured_j0;
    }
}

/* account()'s fast run, for the tick's own handler: not idle, none owed, one period
 * passed: nothing lost, late or early. false (nothing done) otherwise. */
static inline __attribute__((always_inline)) bool account_fast(struct tick *t, uint64_t now)
{
    struct tick_info *ti = &t->info;
    if (!__builtin_expect(!t->nohz_stopped && !t->owed && now >= t->next_ns &&
                          now < t->next2_ns, 1))
        return false;
    uint64_t gap = now - t->last_ns;
    t->last_ns = now;
    if (gap > ti->max_gap_ns)
        ti->max_gap_ns = gap;
    advance_one(t);
    if (ti->nohz_stops == 0 && ti->ticks >= MEASURE_FROM)
        measure(t, now);
    return true;
}

/* A handler run at `now`: jiffies move to the last grid point passed, never further, so a
 * jiffy never stands for a time still to come (a jiffies timeout cannot end early by
 * time_ns(), even on a device faster than the clocksource says: its extra interrupts are
 * counted early instead). Two or more periods at once: the interrupts of all but one never
 * came (lost). None: an interrupt for a period already counted, which either came late
 * after being counted lost (held past the next edge, or re-injected by a hypervisor: KVM
 * delivers missed periodic interrupts late: `late`, so lost - late never came), or is one
 * more than the device should make, or one a fast device made before its grid point
 * (`early`). Periods tick_sync() added count here, when their interrupt comes. While
 * stopped for idle the periods passed were not wanted: skipped, not lost. */
static void account(struct tick *t, uint64_t now, bool was_idle)
{
    struct tick_info *ti = &t->info;
    if (!was_idle && account_fast(t, now))
        return;
    uint64_t gap = now - t->last_ns;
    t->last_ns = now;
    if (gap > ti->max_gap_ns && !was_idle)
        ti->max_gap_ns = gap;
    uint64_t j_before = t->jiffies;
    uint64_t n = periods_to(t, now);
    advance(t, n);
    n += t->owed;
    t->owed = 0;
    if (!was_idle && t->jiffies != j_before && ti->nohz_stops == 0 && ti->ticks >= MEASURE_FROM)
        measure(t, now);
    if (was_idle) {
        ti->idle_skipped += n ? n - 1 : 0;
    } else if (n == 0) {
        if (ti->lost > ti->late)
            ti->late++;
        else
            ti->early++;
    } else {
        ti->lost += n - 1;
    }
}

/* Every handler run but the fast one (ticks and ticks_all_starts already counted): the
 * one-shot re-arm, the first runs and the start of the measured period, lost, late and
 * early interrupts, periods owed to tick_sync(), the wake-up from idle, a failed arming. */
static __attribute__((noinline)) void tick_event_slow(struct tick *t, uint64_t now)
{
    grid_next(t);                   /* next_ns may hold set_fast_bound()'s UINT64_MAX */
    t->info.stalled = false;
    if (account_fast(t, now)) {
        if (!t->info.periodic)
            rearm(t);
    } else {
        bool was_idle = t->nohz_stopped;
        account(t, now, was_idle);
        if (was_idle)
            restart_after_idle(t, now);
        else if (!t->info.periodic)
            rearm(t);
    }
    set_fast_bound(t);
    if (t->wheel)
        wheel_advance(t->wheel, t->jiffies);
}

#ifdef TICKLAB_HOSTED
/* The host tests hold every fast run to the conditions account_fast() and the measure
 * would have checked, and set_fast_bound() to grid_next()'s own figures. */
uint64_t tick_test_fast_runs;

static void fast_run_check(struct tick *t, uint64_t now)
{
    tick_test_fast_runs++;
    const struct tick_info *ti = &t->info;
    uint64_t next = t->next_ns, next2 = t->next2_ns;
    grid_next(t);
    bool measuring = ti->nohz_stops == 0 && ti->ticks >= MEASURE_FROM;
    if (next != t->next_ns || next2 != t->next2_ns || t->nohz_stopped || t->owed ||
        !ti->periodic || ti->stalled || !(now >= t->next_ns && now < t->next2_ns) ||
        (measuring && !ti->measured_first_ns) ||
        t->measure_to != (measuring ? &ti->measured_last_ns : t->measure_void))
        __builtin_trap();
}
#endif

/* The handler. The fast run (one period passed, nothing else to do: set_fast_bound()) is done here
 * in a few instructions: one range check of now, the gap, one grid step, the measured
 * period's two stores, and the wheel's quiet case; every other goes the whole way, and so
 * does run MEASURE_FROM, which may start the measured period. */
HOT_PATH static void tick_event(struct clockevent *ce)
{
    struct tick *t = ce->owner;
    uint64_t now = timekeeping_tick_ns();
    t->info.ticks++;
    t->info.ticks_all_starts++;
    /* ticks read back through a volatile lvalue: the count stays one add to memory, and the
     * test one load and compare, instead of a load, add and store kept for it */
    if (__builtin_expect(now < t->next_ns || now >= t->next2_ns, 0) ||
        __builtin_expect(*(volatile uint64_t *)&t->info.ticks == MEASURE_FROM, 0)) {
        tick_event_slow(t, now);
        return;
    }
#ifdef TICKLAB_HOSTED
    fast_run_check(t, now);
#endif
    uint64_t gap = now - t->last_ns;
    t->last_ns = now;
    if (gap > t->info.max_gap_ns)
        t->info.max_gap_ns = gap;
    uint64_t j = advance_one(t);
    uint64_t *m = t->measure_to;    /* measure(): the last run and the periods to it */
    m[0] = now;
    m[1] = j - t->measured_j0;
    struct wheel *w = t->wheel;
    if (w && !wheel_advance_quiet(w, j))
        wheel_advance(w, j);
}

bool tick_nohz_stop(struct tick *t, uint64_t until_ns)
{
    if (!t->running || t->nohz_stopped || !(t->info.dev->features & CE_ONESHOT))
        return false;
    uint64_t now = time_ns();
    if (until_ns <= now + 2 * t->info.period_ns)
        return false;                  /* not worth stopping for less than two ticks */
    if (clockevent_program_ns(t->info.dev, until_ns - now) != 0) {
        /* The device could not be armed that far: the tick goes on as it was. */
        restart_after_idle(t, now);
        set_fast_bound(t);
        return false;
    }
    t->nohz_stopped = true;
    t->info.nohz_stops++;
    set_fast_bound(t);
    return true;
}

void tick_nohz_restart(struct tick *t)
{
    if (!t->running || !t->nohz_stopped)
        return;
    unsigned long flags = irq_save();
    clockevent_shutdown(t->info.dev);
    uint64_t now = time_ns();
    account(t, now, true);
    timekeeping_accumulate();
    restart_after_idle(t, now);
    set_fast_bound(t);
    if (t->wheel)
        wheel_advance(t->wheel, t->jiffies);
    irq_restore(flags);
}

bool tick_nohz_stopped(const struct tick *t)
{
    return t->nohz_stopped;
}

uint64_t tick_measured_period_ps(const struct tick *t)
{
    const struct tick_info *ti = &t->info;
    if (ti->measured_periods < 8 || ti->measured_last_ns <= ti->measured_first_ns)
        return 0;
    return mul_div_u64_round(ti->measured_last_ns - ti->measured_first_ns, 1000,
                             ti->measured_periods);
}

uint64_t tick_last_ns(const struct tick *t)
{
    return t->last_ns;
}

uint64_t tick_jiffies_ns(struct tick *t, uint64_t j)
{
    unsigned long flags = irq_save();
    int64_t k = (int64_t)(j - t->jiffies);
    uint64_t at = ref_ns(t);
    if (k > 0) {
        uint64_t frac = (uint64_t)k * t->period_frac + ref_frac(t);
        at += (uint64_t)k * t->period_int + (frac >> 16);
    } else if (k < 0) {
        at -= (uint64_t)-k * t->period_int + (((uint64_t)-k * t->period_frac) >> 16);
    }
    irq_restore(flags);
    return at;
}

bool tick_overdue(const struct tick *t, uint64_t now_ns)
{
    return t->running && !t->nohz_stopped &&
           now_ns > t->last_ns + 4 * t->info.period_ns + TICK_OVERDUE_NS;
}

void tick_rescue(struct tick *t)
{
    unsigned long flags = irq_save();
    if (t->running && !t->nohz_stopped) {
        t->info.rescued++;
        clockevent_shutdown(t->info.dev);
        tick_event(t->info.dev);
        if (t->info.periodic)
            restart_periodic(t);
        set_fast_bound(t);
    }
    irq_restore(flags);
}

/* ---- starting: the device choice ------------------------------------------------------- */

/* The mode a device ticks in: periodic if it has it and one-shot was not asked for, else
 * re-armed one-shots; -1 when it has neither that could. */
static int mode_for(const struct clockevent *ce, bool oneshot)
{
    if (!oneshot && (ce->features & CE_PERIODIC))
        return CE_STATE_PERIODIC;
    return ce->features & CE_ONESHOT ? CE_STATE_ONESHOT : -1;
}

/* Claims ce and starts it at period_ns in its mode; on failure ce is released. */
static int start_on(struct tick *t, struct clockevent *ce, uint64_t period_ns, bool oneshot)
{
    struct tick_info *ti = &t->info;
    uint64_t all = ti->ticks_all_starts, lost = ti->lost_earlier_starts + ti->lost;
    *ti = (struct tick_info){ .ticks_all_starts = all, .lost_earlier_starts = lost, .dev = ce,
                              .hz = tick_hz_of_period(period_ns),
                              .periodic = mode_for(ce, oneshot) == CE_STATE_PERIODIC };
    ti->jiffies_start = (1ull << 32) - JIFFIES_BEFORE_WRAP_S * ti->hz;
    t->jiffies = ti->jiffies_start;
    t->nohz_stopped = false;

    unsigned long flags = irq_save();
    int rc = clockevent_claim(ce, tick_event, t);
    if (rc == 0) {
        t->last_ns = t->next_deadline_ns = time_ns();
        ref_set(t, t->last_ns, 0);
        t->owed = 0;
        if (ti->periodic) {
            rc = clockevent_set_periodic_ns(ce, period_ns, &ti->period_ns);
            /* the period to 1/65536 ns, from the whole device cycles it counts */
            uint64_t cyc = mul_div_u64_round(period_ns, ce->freq_hz, NSEC_PER_SEC);
            uint64_t q16 = mul_div_u64_round(cyc << 16, NSEC_PER_SEC, ce->freq_hz);
            t->period_int = q16 >> 16;
            t->period_frac = (uint32_t)(q16 & 0xFFFF);
        } else {
            ti->period_ns = period_ns;
            t->period_int = period_ns;
            t->period_frac = 0;
            t->next_deadline_ns += period_ns;
            rc = clockevent_program_ns(ce, period_ns);
        }
        set_fast_bound(t);
        if (rc)
            clockevent_release(ce);
    }
    t->running = rc == 0;
    irq_restore(flags);
    return rc;
}

/* Whether ce is one the tick may take: on t's CPU, free, with a mode it could tick in. */
static bool candidate(const struct tick *t, const struct clockevent *ce, bool oneshot)
{
    return ce->cpu == t->cpu && clockevent_is_free(ce) && mode_for(ce, oneshot) >= 0;
}

/* Why the preferred device was not used, for the caller's record. */
static void explain(char *why, size_t why_len, const struct clockevent *prefer, bool oneshot,
                    uint64_t period_ns, int rc, const struct clockevent *used)
{
    const char *on = used ? used->name : "none";
    if (!why || !why_len)
        return;
    if (!prefer->usable)
        fmt_snprintf(why, why_len, "clockevent=%s: unusable (%s); ticking on %s", prefer->name,
                     prefer->unusable_reason ? prefer->unusable_reason : "no reason given", on);
    else if (mode_for(prefer, oneshot) < 0)
        fmt_snprintf(why, why_len, "clockevent=%s: lacks ONESHOT; ticking on %s", prefer->name,
                     on);
    else if (prefer->cpu != 0 || !clockevent_is_free(prefer))
        fmt_snprintf(why, why_len, "clockevent=%s: in use (it or its hardware); ticking on %s",
                     prefer->name, on);
    else
        fmt_snprintf(why, why_len, "clockevent=%s cannot tick at %llu ns (error %d); ticking "
                     "on %s", prefer->name, (unsigned long long)period_ns, rc, on);
}

int tick_start_ns(struct tick *t, uint64_t period_ns, struct clockevent *prefer, bool oneshot,
                  char *why, size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
    if (period_ns < TICK_MIN_PERIOD_NS || period_ns > TICK_MAX_PERIOD_NS)
        return -ERANGE;
    tick_stop(t);
    /* The device the tick would take if nothing stood in the way: said when it does not. */
    struct clockevent *top = 0;
    int top_rc = -EBUSY;
    for (int pass = oneshot ? 1 : 0; pass < 2 && !top; pass++) {
        unsigned need = pass == 0 ? CE_PERIODIC : CE_ONESHOT;
        for (struct clockevent *ce = clockevent_list(); ce; ce = ce->next)
            if (ce->usable && ce->cpu == t->cpu && (ce->features & need) == need &&
                (!top || ce->rating > top->rating))
                top = ce;
    }
    int rc = -ENODEV, prefer_rc = -ENODEV;
    if (prefer && candidate(t, prefer, oneshot)) {
        prefer_rc = rc = start_on(t, prefer, period_ns, oneshot);
        if (rc == 0)
            return 0;
    }
    /* The best by rating that can: periodic devices first (unless oneshot), then one-shot;
     * each refusal (a period outside its range) moves on to the next, in the order of
     * (rating, registration). */
    for (int pass = oneshot ? 1 : 0; pass < 2; pass++) {
        unsigned need = pass == 0 ? CE_PERIODIC : CE_ONESHOT;
        int last_rating = 0;
        unsigned last_i = 0;
        for (bool first = true;; first = false) {
            struct clockevent *best = 0;
            unsigned i = 0, best_i = 0;
            for (struct clockevent *ce = clockevent_list(); ce; ce = ce->next, i++) {
                bool after = first || ce->rating < last_rating ||
                             (ce->rating == last_rating && i > last_i);
                if (after && ce != prefer && (ce->features & need) == need &&
                    candidate(t, ce, pass == 1) && (!best || ce->rating > best->rating)) {
                    best = ce;
                    best_i = i;
                }
            }
            if (!best)
                break;
            last_rating = best->rating;
            last_i = best_i;
            rc = start_on(t, best, period_ns, pass == 1);
            if (best == top)
                top_rc = rc;
            if (rc == 0) {
                if (prefer)
                    explain(why, why_len, prefer, oneshot, period_ns, prefer_rc, best);
                else if (top && best != top) {
                    t->info.passed_over = top->name;
                    t->info.passed_over_rc = top_rc;
                }
                return 0;
            }
        }
    }
    if (prefer)
        explain(why, why_len, prefer, oneshot, period_ns, prefer_rc, 0);
    return rc;
}

int tick_start(struct tick *t, uint64_t hz, struct clockevent *prefer, bool oneshot, char *why,
               size_t why_len)
{
    if (hz == 0)
        return -EINVAL;
    return tick_start_ns(t, tick_period_of_hz(hz), prefer, oneshot, why, why_len);
}

void tick_stop(struct tick *t)
{
    if (!t->running)
        return;
    t->nohz_stopped = false;
    unsigned long flags = irq_save();
    clockevent_release(t->info.dev);
    t->running = false;
    irq_restore(flags);
}

bool tick_running(const struct tick *t)
{
    return t->running;
}
