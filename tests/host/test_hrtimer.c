/* tests/host/test_hrtimer.c - the hrtimer core (libticklab/time/hrtimer.c) on a fake clock and a
 * fake one-shot clock event device (1 GHz: cycles are ns), model-checked against a
 * reference: an array of timers with (queued, expires, seq), the head being the queued one
 * with the smallest (expires, seq). */
#include "ticklab/hrtimer.h"

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

static int dev_etime;                /* set_next always fails with -ETIME */
static uint64_t dev_calls, dev_last_cyc, dev_shutdowns;
static bool dev_armed;
static int fake_set_next(uint64_t cyc)
{
    dev_calls++;
    if (dev_etime)
        return -ETIME;
    dev_last_cyc = cyc;
    dev_armed = true;
    return 0;
}
static void fake_shutdown(void)
{
    dev_shutdowns++;
    dev_armed = false;
}

static struct clockevent dev;
static struct hrtimer_base base;
#define NT 64
static struct tq_slot slots[NT];

static void setup(uint64_t min_cyc, uint64_t max_cyc)
{
    dev = (struct clockevent){ .name = "fake", .features = CE_ONESHOT, .freq_hz = 1000000000,
                               .min_delta_cyc = min_cyc, .max_delta_cyc = max_cyc,
                               .set_next = fake_set_next, .shutdown = fake_shutdown,
                               .usable = true };
    fake_now = 1000;
    clock_jump = 0;
    dev_etime = 0;
    dev_calls = dev_last_cyc = dev_shutdowns = 0;
    dev_armed = false;
    CHECK_EQ_I64(hrtimer_base_init(&base, &dev, fake_now_fn, slots, NT), 0);
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
        uint64_t d = h->expires > fake_now ? h->expires - fake_now : 0;
        merr(dev_last_cyc == (d ? d : 1));
    }
}

static void ref_after_interrupt(void)
{
    struct mtimer *h = ref_head();
    merr(!h || h->expires > fake_now);      /* nothing due left behind */
    if (!h) {
        exp_shutdowns++;
        ref_armed = false;
    } else {
        exp_reprograms++;
        ref_armed = true;
        ref_armed_ns = h->expires;
        merr(dev_last_cyc == h->expires - fake_now);
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

TEST(hrtimer_model_check)
{
    long ops = 1000000;
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
        } else {
            /* The device fires at its deadline, or late, or spuriously early. */
            if (r < 14 && dev_armed && ref_armed)
                fake_now = ref_armed_ns > fake_now ? ref_armed_ns : fake_now;
            else
                fake_now += rnd() % 6000;
            clockevent_handle_irq(&dev);
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
    clockevent_handle_irq(&dev);
    ref_after_interrupt();
    CHECK(ref_head() == NULL);
    CHECK(tq_empty(&base.q));
    CHECK_EQ_U64(model_errors, 0);
    CHECK_EQ_U64(base.reprograms, exp_reprograms);
    CHECK_EQ_U64(base.shutdowns, exp_shutdowns);
    CHECK_EQ_U64(base.expired, exp_fired);
    CHECK_EQ_U64(base.hangs + base.retries + base.storm_detected + base.program_errors, 0);
    CHECK(exp_fired > 100000);
    CHECK(!dev_armed);
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
    CHECK_EQ_U64(base.reprograms, 1);
    CHECK_EQ_U64(dev_last_cyc, 4000);
    CHECK_EQ_I64(hrtimer_start(&base, &b, 6000, HRTIMER_MODE_ABS), 0);   /* not head */
    CHECK_EQ_I64(hrtimer_start(&base, &c, 5000, HRTIMER_MODE_ABS), 0);   /* tie: not head */
    CHECK_EQ_U64(base.reprograms, 1);
    CHECK(hrtimer_cancel(&base, &a));        /* head goes, same deadline remains */
    CHECK_EQ_U64(base.reprograms, 1);
    CHECK(hrtimer_cancel(&base, &c));        /* head deadline moves to 6000 */
    CHECK_EQ_U64(base.reprograms, 2);
    CHECK_EQ_U64(dev_last_cyc, 5000);
    CHECK(!hrtimer_cancel(&base, &c));
    CHECK(hrtimer_cancel(&base, &b));
    CHECK_EQ_U64(base.shutdowns, 1);
    CHECK(!dev_armed);
    CHECK_EQ_I64(hrtimer_start(&base, &a, 10, HRTIMER_MODE_ABS), 0);     /* past: min delta */
    CHECK_EQ_U64(dev_last_cyc, 1);
    fake_now = 2000;
    clockevent_handle_irq(&dev);
    CHECK_EQ_I64(fired, 1);
    CHECK_EQ_U64(base.shutdowns, 2);
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
    CHECK_EQ_U64(base.interrupts, 1);
    CHECK_EQ_U64(base.hangs, 1);
    CHECK_EQ_U64(base.retries, HRTIMER_MAX_TRIES - 1);
    CHECK_EQ_U64(base.reprograms, 1 + HRTIMER_MAX_TRIES + 1);
    CHECK_EQ_I64(fired, 0);
    CHECK(!base.armed && !base.in_interrupt);
    CHECK(dev_calls <= (uint64_t)(1 + CLOCKEVENT_ETIME_RETRIES) * base.reprograms);
    fake_now = 6000;
    clockevent_handle_irq(&dev);
    CHECK_EQ_I64(fired, 1);
    CHECK_EQ_U64(base.hangs, 1);             /* empty after running: nothing to program */
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
    CHECK_EQ_U64(base.hangs, 1);
    CHECK_EQ_I64(fired, HRTIMER_MAX_TRIES);
    CHECK(base.max_hang_ns >= 1000 * HRTIMER_MAX_TRIES);
    CHECK(base.hang_pending && base.armed);
    CHECK_EQ_U64(dev_last_cyc, base.max_hang_ns);   /* breathe as long as it hung */
    /* While the breathing delay is armed, a new earlier head does not reprogram. */
    uint64_t rp = base.reprograms;
    struct hrtimer b = { .fn = count_cb };
    CHECK_EQ_I64(hrtimer_start(&base, &b, fake_now + 1, HRTIMER_MODE_ABS), 0);
    CHECK_EQ_U64(base.reprograms, rp);
    fake_now += base.max_hang_ns;
    clockevent_handle_irq(&dev);
    CHECK(!base.hang_pending);
    CHECK_EQ_U64(base.hangs, 1);
}

static enum hrtimer_restart rearm_past_cb(struct hrtimer *t)
{
    fired++;
    (void)t;                                 /* expiry unchanged: due again at once */
    return HRTIMER_RESTART;
}

TEST(hrtimer_storm_bounded)
{
    struct hrtimer a = { .fn = rearm_past_cb };
    setup(1, UINT64_MAX / 2);
    fired = 0;
    base.storm_limit = 50;
    CHECK_EQ_I64(hrtimer_start(&base, &a, 1500, HRTIMER_MODE_ABS), 0);
    fake_now = 2000;
    clockevent_handle_irq(&dev);
    CHECK_EQ_I64(fired, 50);
    CHECK_EQ_U64(base.storm_detected, 1);
    CHECK(hrtimer_queued(&a) && base.armed);
    CHECK_EQ_U64(dev_last_cyc, 1);           /* the rest runs min delta later */
    CHECK(hrtimer_cancel(&base, &a));
}

/* ---- several bases ---------------------------------------------------------------------- */

static int fired_a, fired_b;
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
 * same device replaces itself rather than taking a second slot; the table has a limit. */
TEST(hrtimer_bases_one_per_device)
{
    setup(1, 1000000000);
    static struct clockevent dev2;
    static struct hrtimer_base base2;
    static struct tq_slot slots2[4];
    dev2 = dev;
    dev2.name = "fake2";
    CHECK_EQ_I64(hrtimer_base_init(&base2, &dev2, fake_now_fn, slots2, 4), 0);
    static struct hrtimer ta, tb;
    ta = (struct hrtimer){ .fn = on_a };
    tb = (struct hrtimer){ .fn = on_b };
    fired_a = fired_b = 0;
    CHECK_EQ_I64(hrtimer_start(&base, &ta, 2000, HRTIMER_MODE_ABS), 0);
    CHECK_EQ_I64(hrtimer_start(&base2, &tb, 2000, HRTIMER_MODE_ABS), 0);
    fake_now = 2500;
    dev2.event(&dev2);
    CHECK_EQ_I64(fired_b, 1);
    CHECK_EQ_I64(fired_a, 0);
    CHECK(hrtimer_queued(&ta));
    dev.event(&dev);
    CHECK_EQ_I64(fired_a, 1);

    hrtimer_base_release(&base2);
    CHECK(dev2.event == NULL);
    CHECK(dev.event != NULL);
    CHECK_EQ_I64(hrtimer_start(&base, &ta, 3000, HRTIMER_MODE_ABS), 0);
    fake_now = 3500;
    dev.event(&dev);
    CHECK_EQ_I64(fired_a, 2);

    /* re-initialising the same base does not use another slot: 8 inits of one base, then
     * 7 more bases on 7 more devices fit; the 8th other base does not */
    for (int i = 0; i < 8; i++)
        CHECK_EQ_I64(hrtimer_base_init(&base, &dev, fake_now_fn, slots, NT), 0);
    static struct clockevent devs[8];
    static struct hrtimer_base bases[8];
    static struct tq_slot sl[8][2];
    for (int i = 0; i < 8; i++) {
        devs[i] = dev;
        int rc = hrtimer_base_init(&bases[i], &devs[i], fake_now_fn, sl[i], 2);
        CHECK_EQ_I64(rc, i < HRTIMER_MAX_BASES - 1 ? 0 : -EBUSY);
    }
    for (int i = 0; i < 8; i++)
        hrtimer_base_release(&bases[i]);
    hrtimer_base_release(&base);
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
    CHECK_EQ_U64(base.rescued, 1);
    CHECK(!hrtimer_rescue(&base, 1000));       /* nothing queued any more */
    CHECK_EQ_U64(base.rescued, 1);
}
