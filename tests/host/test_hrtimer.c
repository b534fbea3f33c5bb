/* tests/host/test_hrtimer.c - the hrtimer core (lib/time/hrtimer.c) on a fake clock and a
 * fake one-shot clock event device (1 GHz: cycles are ns), model-checked against a
 * reference: an array of timers with (queued, expires, seq), the head being the queued one
 * with the smallest (expires, seq). The model check runs twice: on the fake clock (every
 * programming a delay), and on the real timekeeping path (hrtimer_clock_time_ns, time_ns()
 * on a registered counter, a CE_ABS device armed by absolute counts). Then the device rules
 * (reprogram only on a head change, hangs, storms), one base per device with no cap, the
 * claim, and the rescue of a lost event. */
#include "ticklab/hrtimer.h"

#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/errno.h"
#include "tests/host/test.h"

/* ---- fakes --------------------------------------------------------------------------- */

static uint64_t fake_now;
static uint64_t clock_jump;          /* added to fake_now at every read (hang tests) */
static uint64_t fake_now_fn(void)
{
    fake_now += clock_jump;
    return fake_now;
}
static const struct hrtimer_clock fake_clock = { "fake", fake_now_fn, false };

static int dev_etime;                /* set_next_event/set_next_abs always fail with -ETIME */
static uint64_t dev_calls, dev_last_cyc, dev_shutdowns, dev_abs_calls, dev_last_abs;
static bool dev_armed, dev_last_was_abs;
static int fake_set_next(struct clockevent *ce, uint64_t cyc)
{
    (void)ce;
    dev_calls++;
    if (dev_etime)
        return -ETIME;
    dev_last_cyc = cyc;
    dev_last_was_abs = false;
    dev_armed = true;
    return 0;
}
static int fake_set_abs(struct clockevent *ce, uint64_t cs_cyc)
{
    (void)ce;
    dev_calls++;
    dev_abs_calls++;
    if (dev_etime)
        return -ETIME;
    dev_last_abs = cs_cyc;
    dev_last_was_abs = true;
    dev_armed = true;
    return 0;
}
static int fake_oneshot(struct clockevent *ce)
{
    (void)ce;
    return 0;
}
static int fake_shutdown(struct clockevent *ce)
{
    (void)ce;
    dev_shutdowns++;
    dev_armed = false;
    return 0;
}

static struct clockevent make_dev(const char *name, uint64_t min_cyc, uint64_t max_cyc)
{
    return (struct clockevent){ .name = name, .features = CE_ONESHOT, .freq_hz = 1000000000,
                                .min_delta_cyc = min_cyc, .max_delta_cyc = max_cyc,
                                .set_next_event = fake_set_next,
                                .set_state_oneshot = fake_oneshot,
                                .set_state_shutdown = fake_shutdown, .usable = true };
}

static struct clockevent dev;
static struct hrtimer_base base;
#define NT 64

/* The device's interrupt: a one-shot that fired holds nothing any more. Like an HPET
 * comparator's level status bit, an interrupt of an absolute arming whose count the counter
 * has reached proves it (clockevent_handle_irq_reached: the core then passes the arming's
 * moment when it was exact); any other interrupt (early, stale, of a relative arming)
 * proves nothing. */
static void fire_device(void)
{
    bool proves = dev_armed && dev_last_was_abs && fake_now >= dev_last_abs;
    dev_armed = false;
    if (proves) {
        clockevent_handle_irq_reached(&dev);
        return;
    }
    dev.reached_ns = 0;
    clockevent_handle_irq(&dev);
}

static void reset_dev_log(void)
{
    clock_jump = 0;
    dev_etime = 0;
    dev_calls = dev_last_cyc = dev_shutdowns = dev_abs_calls = dev_last_abs = 0;
    dev_armed = dev_last_was_abs = false;
}

static void setup(uint64_t min_cyc, uint64_t max_cyc)
{
    clockevent_test_reset();
    dev = make_dev("fake", min_cyc, max_cyc);
    fake_now = 1000;
    reset_dev_log();
    CHECK_EQ_I64(hrtimer_base_init(&base, &dev, &fake_clock, NT), 0);
}

/* The real timekeeping path: time_ns() on a registered 64-bit counter at 1 GHz that reads
 * fake_now (selected at fake_now 0, so time_ns() == fake_now exactly), and a CE_ABS device
 * comparing against that counter, registered (the core keeps its ns limits), under a base
 * on hrtimer_clock_time_ns: every deadline at least min_delta away is armed by its count. */
static uint64_t ns_counter_reads;
static uint64_t ns_counter_read(const struct clocksource *cs)
{
    (void)cs;
    ns_counter_reads++;
    return fake_now;
}
static struct clocksource ns_counter;

static bool setup_time_ns(void)
{
    timekeeping_test_reset();
    clockevent_test_reset();
    fake_now = 0;
    ns_counter = (struct clocksource){ .name = "fake_ns", .read = ns_counter_read,
                                       .mask = CLOCKSOURCE_MASK(64), .freq_hz = 1000000000,
                                       .rating = 1, .usable = true };
    if (!CHECK_EQ_I64(clocksource_register(&ns_counter), 0) ||
        !CHECK(clocksource_select("fake_ns", NULL, 0) == &ns_counter))
        return false;
    fake_now = 1000;
    dev = make_dev("fake_abs", 1, UINT64_MAX / 2);
    dev.features |= CE_ABS;
    dev.set_next_abs = fake_set_abs;
    dev.abs_cs = &ns_counter;
    reset_dev_log();
    return CHECK_EQ_U64(time_ns(), 1000) && CHECK_EQ_I64(clockevent_register(&dev), 0) &&
           CHECK_EQ_I64(hrtimer_base_init(&base, &dev, &hrtimer_clock_time_ns, NT), 0);
}

/* ---- the model ------------------------------------------------------------------------- */

struct mtimer {
    struct hrtimer t;                /* first: the callback casts back */
    int id;
    bool queued;                     /* reference state */
    uint64_t expires, seq;
    uint64_t period;                 /* 0: one-shot; else forward + RESTART */
    int side;                        /* callback side effect: 0 none, 1 start other, 2 cancel */
};
static struct mtimer mt[NT];
static uint64_t gseq, rng = 88172645463325252ull;
static uint64_t exp_reprograms, exp_shutdowns, exp_fired;
static bool ref_armed;
static uint64_t ref_armed_ns;
static uint64_t model_errors;
static bool on_time_ns;              /* the model runs on time_ns() with a CE_ABS device */

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static struct mtimer *ref_head(void)
{
    struct mtimer *h = NULL;
    for (int i = 0; i < NT; i++)
        if (mt[i].queued && (!h || mt[i].expires < h->expires ||
                             (mt[i].expires == h->expires && mt[i].seq < h->seq)))
            h = &mt[i];
    return h;
}

static void ref_start(struct mtimer *m, uint64_t expires)
{
    m->queued = true;
    m->expires = expires;
    m->seq = ++gseq;
}

static void merr(bool ok)
{
    if (!ok)
        model_errors++;
}

/* The device was just programmed for `expires`: by its count (time_ns() and a deadline at
 * least the device's 1 ns minimum ahead), else by the delay (at least one cycle). */
static void check_armed_for(uint64_t expires)
{
    uint64_t d = expires > fake_now ? expires - fake_now : 0;
    if (on_time_ns && d > 0)
        merr(dev_last_was_abs && dev_last_abs == expires);
    else
        merr(!dev_last_was_abs && dev_last_cyc == (d ? d : 1));
}

static enum hrtimer_restart model_cb(struct hrtimer *t)
{
    struct mtimer *m = (struct mtimer *)(void *)t, *h = ref_head();

    merr(h == m);                           /* deadline order, then insertion order */
    merr(fake_now >= t->expires_ns);        /* never early */
    merr(base.running == t && !hrtimer_queued(t));
    m->queued = false;
    exp_fired++;
    if (m->side) {
        struct mtimer *o = &mt[rnd() % NT];
        if (o != m) {
            if (m->side == 1) {
                uint64_t e = fake_now + 1 + rnd() % 5000;   /* strictly after now */
                merr(hrtimer_start(&base, &o->t, e, HRTIMER_MODE_ABS) == 0);
                ref_start(o, e);
            } else {
                merr(hrtimer_cancel(&base, &o->t) == o->queued);
                o->queued = false;
            }
        }
    }
    if (m->period) {
        uint64_t old = t->expires_ns, n = hrtimer_forward(t, fake_now, m->period);
        merr(n >= 1 && t->expires_ns > fake_now && t->expires_ns - old == n * m->period &&
             t->expires_ns - m->period <= fake_now);
        ref_start(m, t->expires_ns);        /* queued after any side-effect start */
        return HRTIMER_RESTART;
    }
    return HRTIMER_NORESTART;
}

/* Expected device activity after an operation outside the interrupt. */
static void ref_outside(void)
{
    struct mtimer *h = ref_head();
    if (!h) {
        if (ref_armed)
            exp_shutdowns++;
        ref_armed = false;
    } else if (!ref_armed || h->expires != ref_armed_ns) {
        exp_reprograms++;
        ref_armed = true;
        ref_armed_ns = h->expires;
        check_armed_for(h->expires);
    }
}

static void ref_after_interrupt(void)
{
    struct mtimer *h = ref_head();
    merr(!h || h->expires > fake_now);      /* nothing due left behind */
    if (!h) {
        ref_armed = false;                  /* fired, holds nothing: left in one-shot mode */
    } else {
        exp_reprograms++;
        ref_armed = true;
        ref_armed_ns = h->expires;
        check_armed_for(h->expires);
    }
}

static uint64_t rand_deadline(void)
{
    switch (rnd() % 8) {
    case 0: return fake_now > 500 ? fake_now - rnd() % 500 : 0;     /* in the past */
    case 1: return fake_now;
    case 2: return fake_now + rnd() % 4;                            /* equal deadlines */
    default: return fake_now + rnd() % 20000;
    }
}

static void model_check(bool time_ns_abs)
{
    long ops = 1000000;
    on_time_ns = time_ns_abs;
    if (time_ns_abs)
        REQUIRE(setup_time_ns());
    else
        setup(1, UINT64_MAX / 2);
    gseq = exp_reprograms = exp_shutdowns = exp_fired = model_errors = 0;
    ref_armed = false;
    for (int i = 0; i < NT; i++) {
        mt[i] = (struct mtimer){ .t = { .fn = model_cb }, .id = i };
        mt[i].period = i % 4 == 0 ? 1 + rnd() % 3000 : 0;
        if (i % 7 == 1)
            mt[i].period = 1;                /* period 1 ns: overruns */
        mt[i].side = i % 5 == 2 ? 1 : i % 5 == 3 ? 2 : 0;
    }
    for (long op = 0; op < ops; op++) {
        struct mtimer *m = &mt[rnd() % NT];
        unsigned r = rnd() % 16;
        if (r < 6) {
            uint64_t e = rand_deadline();
            merr(hrtimer_start(&base, &m->t, e, HRTIMER_MODE_ABS) == 0);
            ref_start(m, e);
            ref_outside();
        } else if (r < 8) {
            uint64_t d = rnd() % 20000;
            merr(hrtimer_start(&base, &m->t, d, HRTIMER_MODE_REL) == 0);
            ref_start(m, fake_now + d);
            ref_outside();
        } else if (r < 11) {
            merr(hrtimer_cancel(&base, &m->t) == m->queued);
            m->queued = false;
            ref_outside();
        } else if (r < 12) {
            fake_now += rnd() % 3000;         /* time passes, no interrupt yet */
            if (on_time_ns && rnd() % 4 == 0)
                timekeeping_accumulate();     /* and the tick folds it in now and then */
        } else {
            /* The device fires at its deadline, or late, or spuriously early. */
            if (r < 14 && dev_armed && ref_armed)
                fake_now = ref_armed_ns > fake_now ? ref_armed_ns : fake_now;
            else
                fake_now += rnd() % 6000;
            fire_device();
            ref_after_interrupt();
        }
        merr(tq_count(&base.q) == (uint32_t)0 + (uint32_t)({
                 int c = 0;
                 for (int i = 0; i < NT; i++)
                     c += mt[i].queued;
                 c;
             }));
        if (model_errors) {
            CHECK_EQ_U64(model_errors, 0);
            printf("    first model error at op %ld\n", op);
            return;
        }
    }
    /* Nothing lost: one-shots still queued all fire once time runs far enough. */
    for (int i = 0; i < NT; i++)
        mt[i].period = 0, mt[i].side = 0;
    fake_now += 1000000;
    fire_device();
    ref_after_interrupt();
    CHECK(ref_head() == NULL);
    CHECK(tq_empty(&base.q));
    CHECK_EQ_U64(model_errors, 0);
    CHECK_EQ_U64(base.stats.reprograms, exp_reprograms);
    CHECK_EQ_U64(base.stats.shutdowns, exp_shutdowns);
    CHECK_EQ_U64(base.stats.expired, exp_fired);
    CHECK_EQ_U64(base.stats.hangs + base.stats.retries + base.stats.storm_detected + base.stats.program_errors, 0);
    CHECK(exp_fired > 100000);
    CHECK(!dev_armed);
    if (time_ns_abs) {
        /* The absolute branch is the one taken, not the relative fallback; the interrupts
         * that proved their moment ran their due timers without a clock read before them,
         * and the model found none of them early or out of order. */
        CHECK(dev.abs_programs > exp_reprograms / 2);
        CHECK(base.stats.proven > base.stats.interrupts / 10);
        CHECK_EQ_U64(dev.abs_programs, dev_abs_calls);
        CHECK(dev.programs >= exp_reprograms);
        timekeeping_test_reset();
    }
    on_time_ns = false;
}

TEST(hrtimer_model_check)
{
    model_check(false);
}

/* The same million operations on the real timekeeping path: hrtimer_clock_time_ns, time_ns()
 * on a registered counter, a CE_ABS device against it (clockevent_program_abs_ns). */
TEST(hrtimer_model_check_on_time_ns_abs)
{
    model_check(true);
}

/* ---- forward --------------------------------------------------------------------------- */

TEST(hrtimer_forward_edges)
{
    struct hrtimer t = { .expires_ns = 100 };
    CHECK_EQ_U64(hrtimer_forward(&t, 50, 10), 0);           /* not expired */
    CHECK_EQ_U64(t.expires_ns, 100);
    CHECK_EQ_U64(hrtimer_forward(&t, 100, 0), 0);           /* interval 0 */
    CHECK_EQ_U64(t.expires_ns, 100);
    CHECK_EQ_U64(hrtimer_forward(&t, 100, 10), 1);          /* now == expires: moves */
    CHECK_EQ_U64(t.expires_ns, 110);
    CHECK_EQ_U64(hrtimer_forward(&t, 129, 10), 2);
    CHECK_EQ_U64(t.expires_ns, 130);
    CHECK_EQ_U64(hrtimer_forward(&t, 1000000, 1), 1000000 - 130 + 1);   /* period 1 ns */
    CHECK_EQ_U64(t.expires_ns, 1000001);
    t.expires_ns = 0;                                      /* far in the past */
    CHECK_EQ_U64(hrtimer_forward(&t, UINT64_C(1) << 63, 1000), ((UINT64_C(1) << 63) / 1000) + 1);
    CHECK_EQ_U64(t.expires_ns, ((UINT64_C(1) << 63) / 1000 + 1) * 1000);
    t.expires_ns = 5;
    CHECK_EQ_U64(hrtimer_forward(&t, UINT64_C(1) << 63, UINT64_C(1) << 63), 1);
    CHECK_EQ_U64(t.expires_ns, (UINT64_C(1) << 63) + 5);
    t.expires_ns = UINT64_C(1) << 63;                      /* next step is past 2^64 */
    CHECK_EQ_U64(hrtimer_forward(&t, UINT64_C(1) << 63, UINT64_C(1) << 63), 1);
    CHECK_EQ_U64(t.expires_ns, UINT64_MAX);
    t.expires_ns = UINT64_MAX - 10;
    CHECK_EQ_U64(hrtimer_forward(&t, UINT64_MAX - 5, 100), 1);
    CHECK_EQ_U64(t.expires_ns, UINT64_MAX);
    t.expires_ns = 0;                                      /* 2^64 intervals: saturates */
    CHECK_EQ_U64(hrtimer_forward(&t, UINT64_MAX, 1), UINT64_MAX);
    CHECK_EQ_U64(t.expires_ns, UINT64_MAX);
    t.expires_ns = 1;
    CHECK_EQ_U64(hrtimer_forward(&t, UINT64_MAX, UINT64_MAX), 1);
    CHECK_EQ_U64(t.expires_ns, UINT64_MAX);
}

/* ---- device programming ---------------------------------------------------------------- */

static int fired;
static enum hrtimer_restart count_cb(struct hrtimer *t)
{
    (void)t;
    fired++;
    return HRTIMER_NORESTART;
}

TEST(hrtimer_reprogram_only_on_head_change)
{
    struct hrtimer a = { .fn = count_cb }, b = { .fn = count_cb }, c = { .fn = count_cb };
    setup(1, UINT64_MAX / 2);
    fired = 0;
    CHECK_EQ_I64(hrtimer_start(&base, &a, 5000, HRTIMER_MODE_ABS), 0);
    CHECK_EQ_U64(base.stats.reprograms, 1);
    CHECK_EQ_U64(dev_last_cyc, 4000);
    CHECK_EQ_I64(hrtimer_start(&base, &b, 6000, HRTIMER_MODE_ABS), 0);   /* not head */
    CHECK_EQ_I64(hrtimer_start(&base, &c, 5000, HRTIMER_MODE_ABS), 0);   /* tie: not head */
    CHECK_EQ_U64(base.stats.reprograms, 1);
    CHECK(hrtimer_cancel(&base, &a));        /* head goes, same deadline remains */
    CHECK_EQ_U64(base.stats.reprograms, 1);
    CHECK(hrtimer_cancel(&base, &c));        /* head deadline moves to 6000 */
    CHECK_EQ_U64(base.stats.reprograms, 2);
    CHECK_EQ_U64(dev_last_cyc, 5000);
    CHECK(!hrtimer_cancel(&base, &c));
    CHECK(hrtimer_cancel(&base, &b));
    CHECK_EQ_U64(base.stats.shutdowns, 1);
    CHECK(!dev_armed);
    CHECK_EQ_I64(hrtimer_start(&base, &a, 10, HRTIMER_MODE_ABS), 0);     /* past: min delta */
    CHECK_EQ_U64(dev_last_cyc, 1);
    fake_now = 2000;
    fire_device();
    CHECK_EQ_I64(fired, 1);
    /* Empty after the interrupt: the fired one-shot is left in ONESHOT, not shut down, so
     * the next start is one device write and no state change. */
    CHECK_EQ_U64(base.stats.shutdowns, 1);
    CHECK(dev.state == CE_STATE_ONESHOT);
    uint64_t changes = dev.state_changes, calls = dev_calls;
    CHECK_EQ_I64(hrtimer_start(&base, &b, 5000, HRTIMER_MODE_ABS), 0);
    CHECK_EQ_U64(dev.state_changes, changes);
    CHECK_EQ_U64(dev_calls, calls + 1);
    CHECK(hrtimer_cancel(&base, &b));
    CHECK_EQ_I64(hrtimer_start(&base, &a, 10, 7), -EINVAL);
    CHECK_EQ_I64(hrtimer_start(&base, &a, UINT64_MAX, HRTIMER_MODE_REL), 0);  /* saturates */
    CHECK_EQ_U64(a.expires_ns, UINT64_MAX);
}

/* ---- hangs and storms ------------------------------------------------------------------- */

TEST(hrtimer_hang_device_always_etime)
{
    struct hrtimer a = { .fn = count_cb };
    setup(100, 1000000);
    fired = 0;
    dev_etime = 1;
    /* Start: -ETIME after the retries, so the handler runs by hand and gives up bounded. */
    CHECK_EQ_I64(hrtimer_start(&base, &a, 5000, HRTIMER_MODE_ABS), 0);
    CHECK_EQ_U64(base.stats.interrupts, 1);
    CHECK_EQ_U64(base.stats.hangs, 1);
    CHECK_EQ_U64(base.stats.retries, HRTIMER_MAX_TRIES - 1);
    CHECK_EQ_U64(base.stats.reprograms, 1 + HRTIMER_MAX_TRIES + 1);
    CHECK_EQ_I64(fired, 0);
    CHECK(!base.armed && !base.in_interrupt);
    CHECK(dev_calls <= (uint64_t)(1 + CLOCKEVENT_ETIME_RETRIES) * base.stats.reprograms);
    fake_now = 6000;
    clockevent_handle_irq(&dev);
    CHECK_EQ_I64(fired, 1);
    CHECK_EQ_U64(base.stats.hangs, 1);             /* empty after running: nothing to program */
}

static enum hrtimer_restart slow_cb(struct hrtimer *t)
{
    fired++;
    hrtimer_forward(t, fake_now, 100);       /* the clock keeps outrunning the period */
    return HRTIMER_RESTART;
}

TEST(hrtimer_hang_clock_jumps)
{
    struct hrtimer a = { .fn = slow_cb };
    setup(1, UINT64_MAX / 2);
    fired = 0;
    CHECK_EQ_I64(hrtimer_start(&base, &a, 2000, HRTIMER_MODE_ABS), 0);
    fake_now = 2000;
    clock_jump = 1000;                       /* every read of the clock moves 1 us */
    clockevent_handle_irq(&dev);
    clock_jump = 0;
    CHECK_EQ_U64(base.stats.hangs, 1);
    CHECK_EQ_I64(fired, HRTIMER_MAX_TRIES);
    CHECK(base.stats.max_hang_ns >= 1000 * HRTIMER_MAX_TRIES);
    CHECK(base.hang_pending && base.armed);
    CHECK_EQ_U64(dev_last_cyc, base.stats.max_hang_ns);   /* breathe as long as it hung */
    /* While the breathing delay is armed, a new earlier head does not reprogram. */
    uint64_t rp = base.stats.reprograms;
    struct hrtimer b = { .fn = count_cb };
    CHECK_EQ_I64(hrtimer_start(&base, &b, fake_now + 1, HRTIMER_MODE_ABS), 0);
    CHECK_EQ_U64(base.stats.reprograms, rp);
    fake_now += base.stats.max_hang_ns;
    clockevent_handle_irq(&dev);
    CHECK(!base.hang_pending);
    CHECK_EQ_U64(base.stats.hangs, 1);
}

static enum hrtimer_restart rearm_past_cb(struct hrtimer *t)
{
    fired++;
    (void)t;                                 /* expiry unchanged: due again at once */
    return HRTIMER_RESTART;
}

/* A timer that re-arms itself in the past, under storm limit `limit`: one interrupt runs it
 * `fired_want` times, counts one storm, and leaves the rest min delta later. */
static void check_storm(uint32_t limit, int64_t fired_want)
{
    struct hrtimer a = { .fn = rearm_past_cb };
    setup(1, UINT64_MAX / 2);
    fired = 0;
    base.storm_limit = limit;
    CHECK_EQ_I64(hrtimer_start(&base, &a, 1500, HRTIMER_MODE_ABS), 0);
    fake_now = 2000;
    clockevent_handle_irq(&dev);
    CHECK_EQ_I64(fired, fired_want);
    CHECK_EQ_U64(base.stats.storm_detected, 1);
    CHECK(hrtimer_queued(&a) && base.armed);
    CHECK_EQ_U64(dev_last_cyc, 1);           /* the rest runs min delta later */
    CHECK(hrtimer_cancel(&base, &a));
}

TEST(hrtimer_storm_bounded)
{
    check_storm(50, 50);
}

/* The head always runs (nothing is tested before its callback): a limit of 1 lets through
 * the head alone, and so does 0, which counts as 1. */
TEST(hrtimer_storm_limit_0_and_1_run_the_head_alone)
{
    check_storm(1, 1);
    check_storm(0, 1);
}

/* ---- several bases ---------------------------------------------------------------------- */

static int fired_a, fired_b;
static void on_event_nothing(struct clockevent *ce) { (void)ce; }
static enum hrtimer_restart on_a(struct hrtimer *t)
{
    (void)t;
    fired_a++;
    return HRTIMER_NORESTART;
}
static enum hrtimer_restart on_b(struct hrtimer *t)
{
    (void)t;
    fired_b++;
    return HRTIMER_NORESTART;
}

/* Two bases on two devices (the experiments put a base on each device in turn beside the
 * kernel's own): each device's event runs its own base only; releasing one gives its device
 * back (no handler, shut down) and leaves the other working; a base initialised again on the
 * same device keeps its claim. */
TEST(hrtimer_bases_one_per_device)
{
    setup(1, 1000000000);
    static struct clockevent dev2;
    static struct hrtimer_base base2;
    dev2 = make_dev("fake2", 1, 1000000000);
    CHECK_EQ_I64(hrtimer_base_init(&base2, &dev2, &fake_clock, 4), 0);
    CHECK(dev.owner == &base && dev2.owner == &base2);
    static struct hrtimer ta, tb;
    ta = (struct hrtimer){ .fn = on_a };
    tb = (struct hrtimer){ .fn = on_b };
    fired_a = fired_b = 0;
    CHECK_EQ_I64(hrtimer_start(&base, &ta, 2000, HRTIMER_MODE_ABS), 0);
    CHECK_EQ_I64(hrtimer_start(&base2, &tb, 2000, HRTIMER_MODE_ABS), 0);
    fake_now = 2500;
    clockevent_handle_irq(&dev2);
    CHECK_EQ_I64(fired_b, 1);
    CHECK_EQ_I64(fired_a, 0);
    CHECK(hrtimer_queued(&ta));
    clockevent_handle_irq(&dev);
    CHECK_EQ_I64(fired_a, 1);

    hrtimer_base_release(&base2);
    CHECK(dev2.event == NULL && dev2.owner == NULL);
    CHECK(dev2.state == CE_STATE_SHUTDOWN);
    CHECK(dev.event != NULL);
    CHECK_EQ_I64(hrtimer_start(&base, &ta, 3000, HRTIMER_MODE_ABS), 0);
    fake_now = 3500;
    clockevent_handle_irq(&dev);
    CHECK_EQ_I64(fired_a, 2);

    /* Initialising a base again on its own device is allowed: it keeps the claim. */
    for (int i = 0; i < 8; i++)
        CHECK_EQ_I64(hrtimer_base_init(&base, &dev, &fake_clock, NT), 0);
    CHECK(dev.owner == &base);
    hrtimer_base_release(&base);
    CHECK(dev.owner == NULL);
}

/* No registry and no cap: a base per device for as many devices as there are (20 here, more
 * than the 8 CPUs the old fixed table of 8 failed at), each device's event finding its own
 * base through ce->owner. */
#define MANY 20
static struct clockevent many_dev[MANY];
static struct hrtimer_base many_base[MANY];
static struct hrtimer many_timer[MANY];
static int many_fired[MANY];

static enum hrtimer_restart on_many(struct hrtimer *t)
{
    many_fired[t - many_timer]++;
    return HRTIMER_NORESTART;
}

TEST(hrtimer_bases_per_device_have_no_cap)
{
    setup(1, 1000000000);
    for (int i = 0; i < MANY; i++) {
        many_dev[i] = make_dev("many", 1, 1000000000);
        many_dev[i].cpu = (unsigned)i;            /* one per CPU, as the kernel does */
        REQUIRE(clockevent_register(&many_dev[i]) == 0);
        CHECK_EQ_I64(hrtimer_base_init(&many_base[i], &many_dev[i], &fake_clock, 2), 0);
        CHECK(many_dev[i].owner == &many_base[i]);
        many_timer[i] = (struct hrtimer){ .fn = on_many };
        many_fired[i] = 0;
        CHECK_EQ_I64(hrtimer_start(&many_base[i], &many_timer[i], 2000 + 10 * (uint64_t)i,
                                   HRTIMER_MODE_ABS), 0);
    }
    fake_now = 5000;
    for (int i = MANY - 1; i >= 0; i--) {
        clockevent_handle_irq(&many_dev[i]);      /* its event: its base, nobody else's */
        for (int j = 0; j < MANY; j++)
            if (!CHECK_EQ_I64(many_fired[j], j >= i ? 1 : 0))
                return;
    }
    for (int i = 0; i < MANY; i++) {
        CHECK_EQ_U64(many_base[i].stats.interrupts, 1);
        hrtimer_base_release(&many_base[i]);
    }
}

/* The base claims its device: one owned by someone else (a check, the tick), or whose
 * hardware another owned device shares, is refused; so is an unusable one. */
TEST(hrtimer_base_init_refuses_a_device_owned_by_someone_else)
{
    static struct clockevent mode_a, mode_b, off;
    static struct hrtimer_base b1, b2;
    static int someone, timer;

    setup(1, 1000000000);
    hrtimer_base_release(&base);
    CHECK_EQ_I64(clockevent_claim(&dev, on_event_nothing, &someone), 0);
    CHECK_EQ_I64(hrtimer_base_init(&b1, &dev, &fake_clock, 2), -EBUSY);
    CHECK(dev.owner == &someone);
    clockevent_release(&dev);
    CHECK_EQ_I64(hrtimer_base_init(&b1, &dev, &fake_clock, 2), 0);
    CHECK_EQ_I64(hrtimer_base_init(&b2, &dev, &fake_clock, 2), -EBUSY);   /* b1's */
    hrtimer_base_release(&b1);

    mode_a = make_dev("mode_a", 1, 1000000000);
    mode_b = make_dev("mode_b", 1, 1000000000);
    mode_a.hw = mode_b.hw = &timer;
    REQUIRE(clockevent_register(&mode_a) == 0);
    REQUIRE(clockevent_register(&mode_b) == 0);
    CHECK_EQ_I64(hrtimer_base_init(&b1, &mode_a, &fake_clock, 2), 0);
    CHECK_EQ_I64(hrtimer_base_init(&b2, &mode_b, &fake_clock, 2), -EBUSY);
    hrtimer_base_release(&b1);
    CHECK_EQ_I64(hrtimer_base_init(&b2, &mode_b, &fake_clock, 2), 0);
    hrtimer_base_release(&b2);

    off = make_dev("off", 1, 1000000000);
    off.usable = false;
    CHECK_EQ_I64(hrtimer_base_init(&b1, &off, &fake_clock, 2), -ENODEV);
    CHECK_EQ_I64(hrtimer_base_init(&b1, &off, NULL, 2), -EINVAL);
    CHECK_EQ_I64(hrtimer_base_init(&b1, NULL, &fake_clock, 2), -EINVAL);
    CHECK_EQ_I64(hrtimer_base_init(&b1, &mode_a, &fake_clock, 0), -EINVAL);
}

/* A device event that never comes: the queue would stall forever. hrtimer_rescue() runs the
 * overdue head once it is more than the grace late, counts it, and leaves a timer that is
 * not yet that late alone. */
TEST(hrtimer_rescue_runs_a_lost_event_once_overdue)
{
    setup(1, 1000000000);
    static struct hrtimer t;
    t = (struct hrtimer){ .fn = on_a };
    fired_a = 0;
    CHECK_EQ_I64(hrtimer_start(&base, &t, 5000, HRTIMER_MODE_ABS), 0);
    fake_now = 5000 + 999;                     /* due, but within the 1000 ns grace */
    CHECK(!hrtimer_rescue(&base, 1000));
    CHECK_EQ_I64(fired_a, 0);
    fake_now = 5000 + 1000;                    /* the event was lost: rescued */
    CHECK(hrtimer_rescue(&base, 1000));
    CHECK_EQ_I64(fired_a, 1);
    CHECK_EQ_U64(base.stats.rescued, 1);
    CHECK(!hrtimer_rescue(&base, 1000));       /* nothing queued any more */
    CHECK_EQ_U64(base.stats.rescued, 1);
}

/* ---- interrupts before the armed moment ---------------------------------------------- */

static int dev_pending_answer;       /* what the fake device says: 1 still counting, 0 fired */
static int fake_pending(struct clockevent *ce)
{
    (void)ce;
    return dev_pending_answer;
}
static bool came_early_in_cb;
static enum hrtimer_restart note_early_cb(struct hrtimer *t)
{
    (void)t;
    fired++;
    came_early_in_cb = hrtimer_interrupt_came_early(&base);
    return HRTIMER_NORESTART;
}

/* An interrupt 30 us before the moment the device was armed for: when the device says it
 * still counts towards that moment, the interrupt was left from an earlier programming
 * (stale); when it says its event happened, the device fired early (early_fires, with how
 * early). Neither runs the timer, and the device is armed again for its moment. A timer
 * that the interrupt's loop then runs (the moment passed while it reprogrammed) knows its
 * interrupt came early, so a latency from that interrupt's entry is not taken for its own.
 * Within HRTIMER_EARLY_TOLERANCE_NS (the clock mappings' error) it is neither. */
TEST(hrtimer_interrupt_before_its_moment_is_stale_or_early)
{
    static struct hrtimer t;
    setup(1, 1000000000);
    dev.pending = fake_pending;
    fired = 0;
    t = (struct hrtimer){ .fn = note_early_cb };
    CHECK_EQ_I64(hrtimer_start(&base, &t, 101000, HRTIMER_MODE_ABS), 0);   /* 100 us ahead */
    CHECK_EQ_I64(clockevent_pending(&dev), 0);          /* the fake says 0 until told */
    fake_now = 71000;
    dev_pending_answer = 1;
    fire_device();
    CHECK_EQ_I64(fired, 0);
    CHECK_EQ_U64(base.stats.spurious, 1);
    CHECK_EQ_U64(base.stats.stale, 1);
    CHECK_EQ_U64(base.stats.early_fires, 0);
    CHECK(dev_armed && dev_last_cyc == 30000);          /* armed again for its moment */

    dev_pending_answer = 0;
    fire_device();
    CHECK_EQ_I64(fired, 0);
    CHECK_EQ_U64(base.stats.stale, 1);
    CHECK_EQ_U64(base.stats.early_fires, 1);
    CHECK_EQ_U64(base.stats.early_max_ns, 30000);

    /* 1 us early against a 100 us delay: within the tolerance (1 us + 2000 ppm) */
    CHECK_EQ_I64(hrtimer_start(&base, &t, 171000, HRTIMER_MODE_ABS), 0);
    fake_now = 171000 - 1000;
    fire_device();
    CHECK_EQ_U64(base.stats.early_fires, 1);
    CHECK_EQ_U64(base.stats.stale, 2);          /* counted with what the device cannot tell apart */

    /* the loop runs the timer after an early entry: the clock passes the moment while the
     * device is reprogrammed */
    fake_now = 168000;
    clock_jump = 2000;                                  /* reads: 170000 (early), 172000 */
    fire_device();
    clock_jump = 0;
    CHECK_EQ_I64(fired, 1);
    CHECK(came_early_in_cb);
    CHECK(!hrtimer_interrupt_came_early(&base));        /* over with the interrupt */
}

/* A base lent and taken back (kernel/timers: an experiment drives the device directly)
 * keeps its statistics, so counts taken across the loan never go backwards. */
TEST(hrtimer_base_reclaim_keeps_the_statistics)
{
    static struct hrtimer t;
    setup(1, 1000000000);
    fired = 0;
    t = (struct hrtimer){ .fn = count_cb };
    CHECK_EQ_I64(hrtimer_start(&base, &t, 5000, HRTIMER_MODE_ABS), 0);
    fake_now = 6000;
    fire_device();
    fire_device();                                      /* nothing due: spurious */
    CHECK_EQ_U64(base.stats.interrupts, 2);
    CHECK_EQ_U64(base.stats.spurious, 1);
    hrtimer_base_release(&base);
    CHECK(clockevent_is_free(&dev));
    CHECK_EQ_I64(hrtimer_base_reclaim(&base, NT), 0);
    CHECK(!clockevent_is_free(&dev));
    CHECK_EQ_U64(base.stats.interrupts, 2);
    CHECK_EQ_U64(base.stats.spurious, 1);
    CHECK_EQ_U64(base.stats.expired, 1);
    CHECK(tq_first(&base.q) == NULL);
    CHECK_EQ_I64(hrtimer_start(&base, &t, 9000, HRTIMER_MODE_ABS), 0);
    fake_now = 9000;
    fire_device();
    CHECK_EQ_U64(base.stats.expired, 2);
}

/* An interrupt that proves its exact absolute arming (the counter reached the count, as an
 * HPET comparator's level status bit says) runs the head with no clock read before the
 * callback; the clock is read after it only when timers are left. Once time_ns()'s mapping
 * changed (a new rate, here), the count no longer stands for the moment: the clock is read
 * first, as for any interrupt. A proven moment before the head's deadline runs nothing. */
static uint64_t reads_at_cb;
static int proven_fired;
static enum hrtimer_restart note_reads_cb(struct hrtimer *t)
{
    (void)t;
    reads_at_cb = ns_counter_reads;
    proven_fired++;
    return HRTIMER_NORESTART;
}

TEST(hrtimer_proven_interrupt_reads_no_clock_before_its_callback)
{
    static struct hrtimer t, later;
    REQUIRE(setup_time_ns());
    proven_fired = 0;
    t = (struct hrtimer){ .fn = note_reads_cb };
    later = (struct hrtimer){ .fn = note_reads_cb };
    REQUIRE(hrtimer_start(&base, &t, 5000, HRTIMER_MODE_ABS) == 0);
    CHECK(dev_last_was_abs && dev_last_abs == 5000);
    CHECK_EQ_U64(dev.abs_exact_ns, 5000);
    fake_now = 5003;
    uint64_t reads0 = ns_counter_reads;
    fire_device();
    CHECK_EQ_I64(proven_fired, 1);
    CHECK_EQ_U64(reads_at_cb, reads0);                  /* none before the callback */
    CHECK_EQ_U64(ns_counter_reads, reads0);             /* nor after: nothing left */
    CHECK_EQ_U64(base.stats.proven, 1);
    CHECK_EQ_U64(dev.abs_exact_ns, 0);                  /* the arming is spent */

    /* two queued: the first's callback without a read, then one read to arm the second */
    REQUIRE(hrtimer_start(&base, &t, 9000, HRTIMER_MODE_ABS) == 0);
    REQUIRE(hrtimer_start(&base, &later, 20000, HRTIMER_MODE_ABS) == 0);
    fake_now = 9000;
    reads0 = ns_counter_reads;
    fire_device();
    CHECK_EQ_I64(proven_fired, 2);
    CHECK_EQ_U64(reads_at_cb, reads0);
    CHECK(ns_counter_reads > reads0);
    CHECK(dev_armed && dev_last_abs == 20000);
    CHECK_EQ_U64(base.stats.proven, 2);

    /* the mapping changed after the arming: the clock is read before the callback */
    REQUIRE(clocksource_set_freq(&ns_counter, 1000000000) == 0);
    fake_now = 20000;
    reads0 = ns_counter_reads;
    fire_device();
    CHECK_EQ_I64(proven_fired, 3);
    CHECK(reads_at_cb > reads0);
    CHECK_EQ_U64(base.stats.proven, 2);
    CHECK_EQ_U64(base.stats.interrupts, 3);

    /* a relative arming (closer than min delta: the delay path) proves nothing */
    dev.min_delta_ns = 100;
    REQUIRE(hrtimer_start(&base, &t, fake_now + 50, HRTIMER_MODE_ABS) == 0);
    CHECK(!dev_last_was_abs);
    CHECK_EQ_U64(dev.abs_exact_ns, 0);
    fake_now += 100;
    fire_device();
    CHECK_EQ_I64(proven_fired, 4);
    CHECK_EQ_U64(base.stats.proven, 2);
    CHECK_EQ_U64(base.stats.early_fires + base.stats.spurious, 0);
}
