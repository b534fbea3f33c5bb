/* tests/host/test_wheel.c - lib/time/wheel.c: unit cases, then a model check that drives
 * the wheel and a sorted array of (expires, id) side by side through a million random
 * add/mod/del/advance operations, with callbacks that add, mod and del timers themselves.
 *
 * Jiffies start just below a wrap (2^32, and 2^64) as the kernel starts them, so every run
 * crosses one, and with it a cascade of every level (both are multiples of 64^5). */
#include <stdlib.h>

#include "ticklab/wheel.h"
#include "test.h"

#define HZ_250        250u
#define BELOW_2_32    ((1ull << 32) - 5 * HZ_250)    /* the kernel's start: 5 s before */
#define BELOW_2_64    (0ull - 5 * HZ_250)

static bool before(uint64_t a, uint64_t b)
{
    return (int64_t)(a - b) < 0;
}

/* ---- unit cases: a probe timer that records its runs and then does one thing ----------- */

enum probe_action { P_NOTHING, P_PERIODIC, P_REARM_NOW, P_DEL_OTHER, P_ADD_OTHER_NOW,
                    P_NESTED_ADVANCE };

struct probe {
    struct wheel_timer t;
    struct wheel *w;
    enum probe_action action;
    uint64_t period;           /* P_PERIODIC */
    struct probe *other;       /* P_DEL_OTHER, P_ADD_OTHER_NOW */
    unsigned runs;
    uint64_t ran_on;           /* the jiffy being processed when it last ran: clk - 1 */
    uint64_t ran_expires;      /* its expires when it last ran */
};

static void probe_fn(struct wheel_timer *t, void *ctx)
{
    struct probe *p = ctx;

    CHECK(t == &p->t);
    CHECK(!wheel_timer_pending(t));
    p->runs++;
    p->ran_on = p->w->clk - 1;
    p->ran_expires = t->expires;
    switch (p->action) {
    case P_PERIODIC:       wheel_add(p->w, t, t->expires + p->period); break;
    case P_REARM_NOW:      wheel_add(p->w, t, p->w->clk - 1); break;
    case P_DEL_OTHER:      wheel_del(p->w, &p->other->t); break;
    case P_ADD_OTHER_NOW:  wheel_add(p->w, &p->other->t, p->w->clk - 1); break;
    case P_NESTED_ADVANCE: CHECK_EQ_U64(wheel_advance(p->w, p->w->clk + 1000), 0); break;
    case P_NOTHING:        break;
    }
}

static void probe_init(struct probe *p, struct wheel *w, enum probe_action action)
{
    *p = (struct probe){ .w = w, .action = action };
    wheel_timer_init(&p->t, probe_fn, p);
}

static struct wheel uw;    /* 6 KB: static, not on the test's stack */

TEST(wheel_runs_on_its_jiffy_across_32bit_wrap)
{
    struct probe p[5];
    uint64_t delta[5] = { 0, 1, 63, 64, 5 * HZ_250 + 7 };   /* the last lands past 2^32 */

    wheel_init(&uw, BELOW_2_32);
    for (int i = 0; i < 5; i++) {
        probe_init(&p[i], &uw, P_NOTHING);
        wheel_add(&uw, &p[i].t, BELOW_2_32 + delta[i]);
    }
    CHECK_EQ_U64(wheel_pending(&uw), 5);
    for (uint64_t now = BELOW_2_32; now != BELOW_2_32 + 2000; now++) {
        wheel_advance(&uw, now);
        for (int i = 0; i < 5; i++)
            CHECK_EQ_U64(p[i].runs, !before(now, BELOW_2_32 + delta[i]));
    }
    for (int i = 0; i < 5; i++)
        CHECK_EQ_U64(p[i].ran_on, BELOW_2_32 + delta[i]);
    CHECK_EQ_U64(wheel_pending(&uw), 0);
}

/* The hard requirement: 1 s at HZ=250 is 250 jiffies (level 1), and it fires on
 * jiffy 250, not rounded up to level 1's 64-jiffy granularity. */
TEST(wheel_one_second_at_hz250_fires_on_time)
{
    for (uint64_t start = BELOW_2_32 - 300; before(start, BELOW_2_32 + 300); start += 7) {
        struct probe p;
        wheel_init(&uw, start);
        probe_init(&p, &uw, P_NOTHING);
        wheel_add(&uw, &p.t, start + HZ_250);
        for (uint64_t now = start; p.runs == 0 && now != start + 2 * HZ_250; now++)
            wheel_advance(&uw, now);
        REQUIRE(p.runs == 1);
        CHECK_EQ_U64(p.ran_on - (start + HZ_250), 0);   /* <= 1 is the requirement */
    }
}

TEST(wheel_catches_up_lost_ticks_in_order_and_never_early)
{
    struct probe per, one;

    wheel_init(&uw, BELOW_2_64);
    probe_init(&per, &uw, P_PERIODIC);
    per.period = 7;
    probe_init(&one, &uw, P_NOTHING);
    wheel_add(&uw, &per.t, BELOW_2_64 + 7);
    wheel_add(&uw, &one.t, BELOW_2_64 + 5000);
    /* 100 jiffies lost at once: the periodic timer runs once per period passed. */
    CHECK_EQ_U64(wheel_advance(&uw, BELOW_2_64 + 100), 100 / 7);
    CHECK_EQ_U64(per.ran_on, BELOW_2_64 + 98);
    CHECK_EQ_U64(uw.clk, BELOW_2_64 + 101);
    CHECK_EQ_U64(one.runs, 0);
    /* A tickless sleep across the 64-bit wrap: one fires exactly on its jiffy. */
    wheel_advance(&uw, BELOW_2_64 + 4999);
    CHECK_EQ_U64(one.runs, 0);
    wheel_advance(&uw, BELOW_2_64 + 6000);
    CHECK_EQ_U64(one.runs, 1);
    CHECK_EQ_U64(one.ran_on, BELOW_2_64 + 5000);
    CHECK_EQ_U64(per.runs, 6000 / 7);
}

TEST(wheel_rearm_for_now_from_callback_runs_next_advance_not_in_a_loop)
{
    struct probe p;

    wheel_init(&uw, BELOW_2_32);
    probe_init(&p, &uw, P_REARM_NOW);
    wheel_add(&uw, &p.t, BELOW_2_32 + 3);
    CHECK_EQ_U64(wheel_advance(&uw, BELOW_2_32 + 3), 1);
    CHECK(wheel_timer_pending(&p.t));
    /* Same now again: it is due (expires <= now), so it runs, once. */
    CHECK_EQ_U64(wheel_advance(&uw, BELOW_2_32 + 3), 1);
    CHECK_EQ_U64(wheel_advance(&uw, BELOW_2_32 + 50), 1);
    CHECK_EQ_U64(p.runs, 3);
    CHECK_EQ_U64(p.ran_expires, BELOW_2_32 + 3);    /* re-armed for the jiffy then processed */
    CHECK(wheel_del(&uw, &p.t));
    CHECK_EQ_U64(wheel_advance(&uw, BELOW_2_32 + 51), 0);
}

TEST(wheel_del_from_callback_of_another_timer)
{
    struct probe a, same_jiffy, later, fresh;

    wheel_init(&uw, BELOW_2_32);
    probe_init(&a, &uw, P_DEL_OTHER);
    probe_init(&same_jiffy, &uw, P_NOTHING);
    a.other = &same_jiffy;
    wheel_add(&uw, &a.t, BELOW_2_32 + 10);
    wheel_add(&uw, &same_jiffy.t, BELOW_2_32 + 10);   /* after a on the same slot list */
    wheel_advance(&uw, BELOW_2_32 + 100);
    CHECK_EQ_U64(a.runs, 1);
    CHECK_EQ_U64(same_jiffy.runs, 0);
    CHECK_EQ_U64(wheel_pending(&uw), 0);

    probe_init(&later, &uw, P_NOTHING);
    a.other = &later;
    wheel_add(&uw, &a.t, BELOW_2_32 + 200);
    wheel_add(&uw, &later.t, BELOW_2_32 + 9000);       /* level 2 */
    wheel_advance(&uw, BELOW_2_32 + 20000);
    CHECK_EQ_U64(later.runs, 0);

    probe_init(&fresh, &uw, P_NOTHING);
    probe_init(&a, &uw, P_ADD_OTHER_NOW);
    a.other = &fresh;
    wheel_add(&uw, &a.t, BELOW_2_32 + 20001);
    wheel_advance(&uw, BELOW_2_32 + 20001);
    CHECK_EQ_U64(fresh.runs, 0);                       /* added for now: next advance */
    wheel_advance(&uw, BELOW_2_32 + 20002);
    CHECK_EQ_U64(fresh.runs, 1);
    CHECK_EQ_U64(fresh.ran_expires, BELOW_2_32 + 20001);
}

TEST(wheel_add_for_now_and_for_the_past)
{
    struct probe now_before, now_after, past;

    wheel_init(&uw, BELOW_2_64);
    probe_init(&now_before, &uw, P_NOTHING);
    probe_init(&now_after, &uw, P_NOTHING);
    probe_init(&past, &uw, P_NOTHING);
    wheel_add(&uw, &now_before.t, BELOW_2_64);          /* init's now: not yet processed */
    CHECK_EQ_U64(wheel_advance(&uw, BELOW_2_64), 1);
    wheel_add(&uw, &now_after.t, BELOW_2_64);           /* already processed */
    wheel_add(&uw, &past.t, BELOW_2_64 - 1000000);
    uint64_t e;
    CHECK(wheel_next_expiry(&uw, &e));
    CHECK_EQ_U64(e, BELOW_2_64 - 1000000);
    CHECK_EQ_U64(wheel_advance(&uw, BELOW_2_64), 2);
    CHECK_EQ_U64(now_after.runs + past.runs, 2);
    CHECK(!wheel_next_expiry(&uw, &e));
}

TEST(wheel_huge_delays_are_clamped_and_still_exact)
{
    struct probe far, farther, beyond_half;
    uint64_t start = BELOW_2_32, e;

    wheel_init(&uw, start);
    probe_init(&far, &uw, P_NOTHING);
    probe_init(&farther, &uw, P_NOTHING);
    probe_init(&beyond_half, &uw, P_NOTHING);
    wheel_add(&uw, &far.t, start + WHEEL_RANGE_JIFFIES + 12345);
    wheel_add(&uw, &farther.t, start + (1ull << 45) + 3);
    CHECK_EQ_U64(far.t.level, WHEEL_LEVELS - 1);
    CHECK(wheel_next_expiry(&uw, &e));
    CHECK_EQ_U64(e, start + WHEEL_RANGE_JIFFIES + 12345);
    /* 2^63 or more ahead cannot be told from the past (signed difference): due now. */
    wheel_add(&uw, &beyond_half.t, start + (1ull << 63));
    CHECK_EQ_U64(wheel_advance(&uw, start), 1);
    CHECK_EQ_U64(beyond_half.runs, 1);

    wheel_advance(&uw, start + WHEEL_RANGE_JIFFIES + 12344);
    CHECK_EQ_U64(far.runs, 0);
    wheel_advance(&uw, start + WHEEL_RANGE_JIFFIES + 12345);
    CHECK_EQ_U64(far.runs, 1);
    /* Sleeps of 2^35 jiffies up to the jiffy before: re-clamped at each top-level cascade,
     * never run, and next_expiry stays exact. */
    uint64_t due = start + (1ull << 45) + 3;
    for (uint64_t now = start; before(now, due - 1);) {
        now = due - 1 - now > (1ull << 35) ? now + (1ull << 35) : due - 1;
        wheel_advance(&uw, now);
        CHECK_EQ_U64(farther.runs, 0);
        CHECK(wheel_next_expiry(&uw, &e) && e == due);
    }
    wheel_advance(&uw, start + (1ull << 45) + 3);
    CHECK_EQ_U64(farther.runs, 1);
    CHECK_EQ_U64(farther.ran_on, start + (1ull << 45) + 3);
}

/* A clamped timer sits in the top-level slot that cascades last; once the clock passes a
 * top-level boundary, an in-range timer can land in the slot after it while expiring
 * earlier. next_expiry must look past the first non-empty top-level slot. */
TEST(wheel_next_expiry_looks_past_a_clamped_timer)
{
    struct probe x, y;
    uint64_t start = BELOW_2_32 + 1, e;              /* 1249 jiffies before 2^32 = 4 << 30 */
    uint64_t y_due = (68ull << 30) + 5;              /* block 68: the slot after x's */

    wheel_init(&uw, start);
    probe_init(&x, &uw, P_NOTHING);
    probe_init(&y, &uw, P_NOTHING);
    wheel_add(&uw, &x.t, start + (1ull << 40));      /* clamped into block 4 + 63 */
    CHECK_EQ_U64(x.t.slot, 67 % WHEEL_SLOTS);
    wheel_advance(&uw, (4ull << 30) + 1000);
    wheel_add(&uw, &y.t, y_due);
    CHECK_EQ_U64(y.t.level, WHEEL_LEVELS - 1);
    CHECK_EQ_U64(y.t.slot, 68 % WHEEL_SLOTS);
    CHECK(wheel_next_expiry(&uw, &e));
    CHECK_EQ_U64(e, y_due);
    wheel_advance(&uw, y_due - 1);
    CHECK_EQ_U64(y.runs, 0);
    wheel_advance(&uw, y_due);
    CHECK_EQ_U64(y.ran_on, y_due);
    CHECK_EQ_U64(x.runs, 0);
    CHECK(wheel_next_expiry(&uw, &e));
    CHECK_EQ_U64(e, start + (1ull << 40));
}

TEST(wheel_cascade_boundaries_exact)
{
    struct probe p[WHEEL_LEVELS][3];

    wheel_init(&uw, BELOW_2_64 + 1);
    for (unsigned l = 1; l < WHEEL_LEVELS; l++) {
        uint64_t unit = 1ull << (WHEEL_SLOT_BITS * l);
        for (int k = 0; k < 3; k++) {
            probe_init(&p[l][k], &uw, P_NOTHING);
            wheel_add(&uw, &p[l][k].t, BELOW_2_64 + 1 + unit - 1 + (uint64_t)k);
        }
    }
    /* Sleep to each expiry minus one, then one jiffy: it must run on that jiffy. */
    for (unsigned l = 1; l < WHEEL_LEVELS; l++) {
        uint64_t unit = 1ull << (WHEEL_SLOT_BITS * l);
        for (int k = 0; k < 3; k++) {
            uint64_t due = BELOW_2_64 + 1 + unit - 1 + (uint64_t)k;
            wheel_advance(&uw, due - 1);
            CHECK_EQ_U64(p[l][k].runs, 0);
            wheel_advance(&uw, due);
            CHECK_EQ_U64(p[l][k].runs, 1);
            CHECK_EQ_U64(p[l][k].ran_on, due);
        }
    }
    CHECK(uw.stats.moved > 0);
}

TEST(wheel_mod_del_pending_semantics)
{
    struct wheel_timer zeroed = { 0 };
    struct probe p;

    wheel_init(&uw, 0);
    CHECK(!wheel_del(&uw, &zeroed));                    /* a zero-filled timer is idle */
    probe_init(&p, &uw, P_NOTHING);
    CHECK(!wheel_timer_pending(&p.t));
    CHECK(!wheel_mod(&uw, &p.t, 100));
    CHECK(wheel_mod(&uw, &p.t, 50));
    wheel_add(&uw, &p.t, 70);                           /* add of a pending timer moves it */
    CHECK_EQ_U64(wheel_pending(&uw), 1);
    wheel_advance(&uw, 69);
    CHECK_EQ_U64(p.runs, 0);
    wheel_advance(&uw, 70);
    CHECK_EQ_U64(p.ran_on, 70);
    wheel_add(&uw, &p.t, 80);
    CHECK(wheel_del(&uw, &p.t));
    CHECK(!wheel_del(&uw, &p.t));
    wheel_advance(&uw, 200);
    CHECK_EQ_U64(p.runs, 1);
    CHECK(!wheel_next_expiry(&uw, &(uint64_t){ 0 }));
}

/* The tick's quiet case (wheel_advance_quiet; host builds trap on a quiet call that the
 * long way's conditions would not allow): with nothing pending every call is quiet and moves
 * clk past now; a timer filed sends the next call the long way (it finds the next event),
 * then the calls are quiet up to the timer's jiffy, which goes the long way and runs it; a
 * removal ends the window too; a now behind clk goes the long way and changes nothing. */
TEST(wheel_quiet_calls_move_clk_and_leave_events_to_the_long_way)
{
    static struct wheel w;
    struct probe p;
    uint64_t j = BELOW_2_32;

    wheel_init(&w, j);
    probe_init(&p, &w, P_NOTHING);
    for (; j < BELOW_2_32 + 1000; j++) {
        CHECK(wheel_advance_quiet(&w, j));
        CHECK_EQ_U64(w.clk, j + 1);
    }
    wheel_add(&w, &p.t, j + 50);                /* level 0: no cascade before it */
    CHECK(!wheel_advance_quiet(&w, j));         /* the next event is not known yet */
    CHECK_EQ_U64(wheel_advance(&w, j), 0);
    CHECK_EQ_U64(w.clk, j + 1);
    for (j++; j < BELOW_2_32 + 1050; j++)
        CHECK(wheel_advance_quiet(&w, j));
    CHECK(!wheel_advance_quiet(&w, j));         /* the timer's jiffy */
    CHECK_EQ_U64(w.clk, j);
    CHECK_EQ_U64(wheel_advance(&w, j), 1);
    CHECK_EQ_U64(p.ran_on, j);
    CHECK(wheel_advance_quiet(&w, ++j));        /* nothing pending again */
    wheel_add(&w, &p.t, j + 1000);
    CHECK_EQ_U64(wheel_advance(&w, ++j), 0);
    CHECK(wheel_advance_quiet(&w, ++j));
    CHECK(wheel_del(&w, &p.t));                  /* none pending: quiet for good */
    CHECK(wheel_advance_quiet(&w, j + 5000));
    CHECK_EQ_U64(w.clk, j + 5001);
    CHECK(!wheel_advance_quiet(&w, j));          /* behind clk: the long way, no change */
    CHECK_EQ_U64(wheel_advance(&w, j), 0);
    CHECK_EQ_U64(w.clk, j + 5001);
    CHECK_EQ_U64(p.runs, 1);
}

TEST(wheel_nested_advance_from_callback_does_nothing)
{
    struct probe nest, victim;

    wheel_init(&uw, 10);
    probe_init(&nest, &uw, P_NESTED_ADVANCE);
    probe_init(&victim, &uw, P_NOTHING);
    wheel_add(&uw, &nest.t, 20);
    wheel_add(&uw, &victim.t, 500);
    wheel_advance(&uw, 20);
    CHECK_EQ_U64(victim.runs, 0);
    CHECK_EQ_U64(uw.clk, 21);
}

/* ---- the model check -------------------------------------------------------------------- */

#define MC_TIMERS     1024
#define MC_OPS        1000000u
#define MC_SEED       0x7469636b6c616230ull     /* "ticklab0" */

struct mc_timer {
    struct wheel_timer t;
    bool pending;        /* the model's view from here down */
    uint64_t expires;
    bool behind;         /* added behind the clock: runs first thing in call tag + 1 */
    uint64_t tag;        /* advance calls started when it was added */
    unsigned level;      /* where the wheel.h table puts it, for the lateness bound */
};

struct mc_entry {
    int64_t key;         /* expires - origin: ordered, wrap or not, within +-2^62 */
    unsigned id;
};

static struct {
    struct wheel w;
    struct mc_timer tm[MC_TIMERS];
    struct mc_entry sorted[MC_TIMERS];
    size_t n;
    uint64_t origin, clk, now, calls, rng;
    bool in_call, saw_jiffy;      /* saw_jiffy: a slot timer ran in this call already */
    uint64_t runs_in_call, last_jiffy;
    uint64_t ops, runs, max_late[WHEEL_LEVELS];
    unsigned failures;
} mc;

static uint64_t mc_rand(void)
{
    uint64_t z = (mc.rng += 0x9e3779b97f4a7c15ull);   /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t mc_below(uint64_t n)
{
    return mc_rand() % n;
}

/* Stops the flood after a few failures: one bug would otherwise print a million lines. */
static bool mc_check(bool ok, const char *what, unsigned id)
{
    if (!ok && mc.failures++ < 10)
        test_fail(__FILE__, __LINE__, "op %" PRIu64 " timer %u: %s", mc.ops, id, what);
    return ok;
}

static size_t mc_find(int64_t key, unsigned id)
{
    size_t lo = 0, hi = mc.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct mc_entry *e = &mc.sorted[mid];
        if (e->key < key || (e->key == key && e->id < id))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void mc_forget(unsigned id)
{
    struct mc_timer *m = &mc.tm[id];
    size_t i = mc_find((int64_t)(m->expires - mc.origin), id);

    if (!mc_check(i < mc.n && mc.sorted[i].id == id, "model lost track", id))
        return;
    memmove(&mc.sorted[i], &mc.sorted[i + 1], (mc.n - i - 1) * sizeof(mc.sorted[0]));
    mc.n--;
    m->pending = false;
}

static void mc_remember(unsigned id)
{
    struct mc_timer *m = &mc.tm[id];
    int64_t key = (int64_t)(m->expires - mc.origin);
    size_t i = mc_find(key, id);

    memmove(&mc.sorted[i + 1], &mc.sorted[i], (mc.n - i) * sizeof(mc.sorted[0]));
    mc.sorted[i] = (struct mc_entry){ key, id };
    mc.n++;
    m->pending = true;
}

static unsigned table_level(uint64_t delta)
{
    unsigned l = 0;
    while (l + 1 < WHEEL_LEVELS && delta >= 1ull << (WHEEL_SLOT_BITS * (l + 1)))
        l++;
    return l;
}

static void mc_arm(unsigned id, uint64_t expires)
{
    struct mc_timer *m = &mc.tm[id];
    bool was = m->pending;

    if (was)
        mc_forget(id);
    m->expires = expires;
    m->behind = before(expires, mc.clk);
    m->tag = mc.calls;
    m->level = m->behind ? 0 : table_level(expires - mc.clk);
    mc_remember(id);
    mc_check(wheel_mod(&mc.w, &m->t, expires) == was, "wheel_mod's pending", id);
}

static void mc_del(unsigned id)
{
    bool was = mc.tm[id].pending;

    if (was)
        mc_forget(id);
    mc_check(wheel_del(&mc.w, &mc.tm[id].t) == was, "wheel_del's pending", id);
}

/* Mostly near, some on level boundaries, some in the past, a few beyond the wheel. */
static int64_t mc_delta(void)
{
    uint64_t r = mc_below(100);

    if (r < 5)
        return 0;
    if (r < 12)
        return -(int64_t)(1 + mc_below(r < 9 ? 4 : 1u << 20));
    if (r < 40)
        return (int64_t)(1 + mc_below(63));
    if (r < 60)
        return (int64_t)(64 + mc_below(4096 - 64));
    if (r < 86)
        return (int64_t)(1 + mc_below(1u << 20));
    if (r < 99) {
        uint64_t unit = 1ull << (WHEEL_SLOT_BITS * (1 + mc_below(WHEEL_LEVELS - 1)));
        return (int64_t)(unit - 1 + mc_below(3));
    }
    if (mc_below(2))
        return (int64_t)((1ull << 30) + mc_below(WHEEL_RANGE_JIFFIES - (1ull << 30)));
    return (int64_t)(WHEEL_RANGE_JIFFIES - 2 + mc_below(1ull << 40));     /* clamped */
}

static void mc_random_arm(void)
{
    mc_arm((unsigned)mc_below(MC_TIMERS), mc.clk - 1 + (uint64_t)mc_delta());
}

/* Checks one run against the model, then maybe re-arms itself or touches another timer. */
static void mc_fn(struct wheel_timer *t, void *ctx)
{
    unsigned id = (unsigned)(uintptr_t)ctx;
    struct mc_timer *m = &mc.tm[id];

    mc.runs++;
    mc.runs_in_call++;
    if (!mc_check(mc.in_call && m->pending, "ran while not pending (twice, or deleted)", id))
        return;
    mc_check(t->expires == m->expires, "ran with another expiry (mod did not move it)", id);
    mc_check(!before(mc.now, m->expires), "ran early", id);
    if (m->behind) {
        mc_check(mc.calls == m->tag + 1 && !mc.saw_jiffy, "expired-list timer out of turn",
                 id);
    } else {
        uint64_t jiffy = mc.w.clk - 1, late = jiffy - m->expires;
        mc_check(!before(jiffy, mc.last_jiffy), "jiffies processed out of order", id);
        mc_check(late <= WHEEL_MAX_LATE_JIFFIES, "later than its level's bound", id);
        if (!before(late, mc.max_late[m->level]))
            mc.max_late[m->level] = late;
        mc.saw_jiffy = true;
        mc.last_jiffy = jiffy;
        mc.clk = jiffy + 1;
    }
    mc_check(mc.w.clk == mc.clk, "the wheel's clock", id);
    mc_forget(id);

    uint64_t r = mc_below(100);
    if (r < 20)
        mc_arm(id, m->expires + 1 + mc_below(300));       /* periodic */
    else if (r < 30)
        mc_arm(id, mc.clk - 1 + (uint64_t)mc_delta());     /* relative to "now" */
    else if (r < 40)
        mc_del((unsigned)mc_below(MC_TIMERS));
    else if (r < 50)
        mc_random_arm();
}

/* After advance(now): nothing due may be left but what callbacks added behind the clock. */
static void mc_check_nothing_lost(void)
{
    for (size_t i = 0; i < mc.n; i++) {
        const struct mc_timer *m = &mc.tm[mc.sorted[i].id];
        if (before(mc.now, m->expires))
            break;
        mc_check(m->behind && m->tag == mc.calls, "due but not run (lost or late)",
                 mc.sorted[i].id);
    }
    mc_check(wheel_pending(&mc.w) == mc.n, "wheel_pending", 0);
}

static void mc_advance(uint64_t by)
{
    mc.now += by;
    mc.calls++;
    mc.in_call = true;
    mc.saw_jiffy = false;
    mc.runs_in_call = 0;
    mc.last_jiffy = mc.clk - 1;
    unsigned ran = wheel_advance(&mc.w, mc.now);
    mc.in_call = false;
    mc_check(ran == mc.runs_in_call, "wheel_advance's count", 0);
    if (!before(mc.now, mc.clk))
        mc.clk = mc.now + 1;
    mc_check(mc.w.clk == mc.clk, "the wheel's clock after advance", 0);
    mc_check_nothing_lost();
}

static void mc_check_next_expiry(void)
{
    uint64_t e;
    bool any = wheel_next_expiry(&mc.w, &e);

    if (!mc_check(any == (mc.n > 0), "wheel_next_expiry says none", 0) || !any)
        return;
    /* The contract is "never later"; this wheel promises exact, so test exact. */
    mc_check(e == mc.origin + (uint64_t)mc.sorted[0].key, "wheel_next_expiry", 0);
}

/* Mostly single ticks, sometimes a few lost, rarely a long tickless sleep. */
static uint64_t mc_advance_by(void)
{
    uint64_t r = mc_below(1000);

    if (r < 3)
        return 0;
    if (r < 900)
        return 1;
    if (r < 985)
        return 2 + mc_below(63);
    if (r < 997)
        return 65 + mc_below(1u << 14);
    if (r < 999)
        return 1 + mc_below(1u << 21);
    return 1 + mc_below(1ull << 31);      /* crosses top-level cascades */
}

static void mc_op(void)
{
    uint64_t r = mc_below(100);

    if (r < 55)
        mc_advance(mc_advance_by());
    else if (r < 80)
        mc_random_arm();
    else if (r < 95)
        mc_del((unsigned)mc_below(MC_TIMERS));
    else
        mc_check_next_expiry();
}

static void model_check(uint64_t start, uint64_t seed)
{
    memset(&mc, 0, sizeof(mc));
    mc.rng = seed;
    mc.origin = start;
    mc.clk = start;
    mc.now = start - 1;
    wheel_init(&mc.w, start);
    for (unsigned id = 0; id < MC_TIMERS; id++)
        wheel_timer_init(&mc.tm[id].t, mc_fn, (void *)(uintptr_t)id);
    for (mc.ops = 0; mc.ops < MC_OPS && mc.failures == 0; mc.ops++) {
        mc_op();
        if (mc.ops % 64 == 0)
            mc_check_next_expiry();
    }
    /* Drain: everything but the clamped far timers runs within 2^21 jiffies. */
    mc_advance(1u << 21);
    CHECK(mc.runs > MC_OPS / 10);
    CHECK(mc.w.stats.moved > 0);
    for (unsigned l = 0; l < WHEEL_LEVELS; l++)
        CHECK_EQ_U64(mc.max_late[l], 0);
    CHECK_EQ_U64(mc.failures, 0);
}

TEST(wheel_model_check_from_below_2_32)
{
    model_check(BELOW_2_32, MC_SEED);
}

TEST(wheel_model_check_from_below_2_64)
{
    model_check(BELOW_2_64, MC_SEED ^ 0x64);
}

/* Linux's rounding, hand-computed: level 0 (under 63 ticks ahead) runs one jiffy after its
 * expiry; a 1 s timer at HZ=250 (250 ticks) is in level 1 (granularity 8), and re-armed from
 * a callback on a multiple of 8 runs 256 ticks later: 1.024 s, the published +24 ms per
 * period. At HZ=1000 (1000 ticks, level 2, granularity 64) the same 1 s is 1024 ticks. */
TEST(wheel_linux_expiry_rounds_as_linux_does)
{
    CHECK_EQ_U64(wheel_linux_expiry(100, 110), 111);
    CHECK_EQ_U64(wheel_linux_expiry(100, 162), 163);            /* delta 62: level 0 */
    CHECK_EQ_U64(wheel_linux_expiry(100, 163), 168);            /* delta 63: level 1 */
    CHECK_EQ_U64(wheel_linux_expiry(0, 250), 256);
    CHECK_EQ_U64(wheel_linux_expiry(256, 506), 512);            /* period 256 from here on */
    CHECK_EQ_U64(wheel_linux_expiry(3, 253), 256);              /* first add mid-granule */
    CHECK_EQ_U64(wheel_linux_expiry(1024, 2024), 2048);         /* HZ=1000: 1024 ticks */
    CHECK_EQ_U64(wheel_linux_expiry(0, 503), 504);              /* delta 503: level 1 */
    CHECK_EQ_U64(wheel_linux_expiry(0, 504), 512);              /* delta 504: level 2 */
    /* past the jiffies wrap of 32 bits, and far levels stay at or after the expiry */
    uint64_t clk = (1ull << 32) - 5;
    CHECK_EQ_U64(wheel_linux_expiry(clk, clk + 250), ((clk + 250) >> 3 << 3) + 8);
    for (uint64_t d = 0; d < 100000; d += 37) {
        uint64_t e = wheel_linux_expiry(12345, 12345 + d);
        CHECK(e > 12345 + d);
    }
}
