/* tests/host/test_clockevent.c - lib/time/clockevent.c with fake devices whose callbacks
 * are test code: ns -> cycle rounding that never fires early, the min/max clamp, the -ETIME
 * retry (then success, and forever), registration checks, selection rules (rating, name,
 * CPU, shared hardware), the device object (every callback gets its device; the state calls
 * apart from the per-event call), ownership (claim, release, hardware shared through ->hw,
 * never through names), and the periodic rounding for a PIT (1,193,182 Hz), a LAPIC-like
 * 1 GHz and an HPET-like 100 MHz timer. */
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/errno.h"
#include "test.h"

typedef unsigned __int128 u128;

#define PIT_HZ_NOMINAL 1193182u
#define NS_PER_S 1000000000ull

/* What the fake devices were asked to do. The state is shared (the tests that need two
 * devices tell them apart by last_ce: every callback receives its device). */
#define LOG_MAX 16
static struct {
    unsigned next_calls, abs_calls, periodic_calls, oneshot_calls, shutdowns;
    uint64_t next_log[LOG_MAX];
    uint64_t last_period_cyc, last_abs_cyc;
    struct clockevent *last_ce;
    int etime_left;            /* set_next_event says -ETIME this many more times; -1: forever */
    int next_err, periodic_err, oneshot_err;   /* a driver error to return instead (0: none) */
} dev;

static int dev_set_next(struct clockevent *ce, uint64_t delta_cyc)
{
    dev.last_ce = ce;
    if (dev.next_calls < LOG_MAX)
        dev.next_log[dev.next_calls] = delta_cyc;
    dev.next_calls++;
    if (dev.next_err)
        return dev.next_err;
    if (dev.etime_left != 0) {
        if (dev.etime_left > 0)
            dev.etime_left--;
        return -ETIME;
    }
    return 0;
}

static int dev_set_abs(struct clockevent *ce, uint64_t cs_cyc)
{
    dev.last_ce = ce;
    dev.abs_calls++;
    dev.last_abs_cyc = cs_cyc;
    return 0;
}

static int dev_set_periodic(struct clockevent *ce, uint64_t period_cyc)
{
    dev.last_ce = ce;
    dev.periodic_calls++;
    dev.last_period_cyc = period_cyc;
    return dev.periodic_err;
}

static int dev_set_oneshot(struct clockevent *ce)
{
    dev.last_ce = ce;
    dev.oneshot_calls++;
    return dev.oneshot_err;
}

static int dev_shutdown(struct clockevent *ce)
{
    dev.last_ce = ce;
    dev.shutdowns++;
    return 0;
}

/* What an absolute device compares against (never read here). */
static struct clocksource abs_src = { .name = "abs_src" };

static struct clockevent make(const char *name, unsigned features, uint64_t freq_hz,
                              uint64_t min_cyc, uint64_t max_cyc, int rating)
{
    return (struct clockevent){
        .name = name, .features = features, .freq_hz = freq_hz,
        .min_delta_cyc = min_cyc, .max_delta_cyc = max_cyc,
        .set_state_periodic = dev_set_periodic, .set_state_oneshot = dev_set_oneshot,
        .set_state_shutdown = dev_shutdown, .set_next_event = dev_set_next,
        .set_next_abs = (features & CE_ABS) ? dev_set_abs : 0,
        .abs_cs = (features & CE_ABS) ? &abs_src : 0,
        .rating = rating, .usable = true,
    };
}

static void fresh(void)
{
    clockevent_test_reset();
    memset(&dev, 0, sizeof(dev));
}

/* ---- conversions ------------------------------------------------------------------------ */

TEST(clockevent_ns_to_cyc_rounds_up)
{
    struct clockevent pit = make("pit", CE_ONESHOT, PIT_HZ_NOMINAL, 1, 65535, 100);
    struct clockevent lapic = make("lapic", CE_ONESHOT, NS_PER_S, 1, UINT32_MAX, 150);
    struct clockevent hpet = make("hpet", CE_ONESHOT, 100000000, 1, UINT32_MAX, 120);

    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&pit, 0), 0);
    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&pit, 1), 1);
    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&pit, 838), 1);    /* 0.99989 cycles */
    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&pit, 839), 2);    /* 1.00108 cycles */
    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&pit, 1000000), 1194);   /* 1193.182 */
    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&pit, NS_PER_S), PIT_HZ_NOMINAL);   /* exact */
    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&lapic, 12345), 12345);
    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&hpet, 10), 1);
    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&hpet, 11), 2);
    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&hpet, 1234567), 123457);
}

/* For many delays and rates: the cycles last at least the delay, one cycle fewer would not. */
TEST(clockevent_ns_to_cyc_never_early_and_minimal)
{
    static const uint64_t freqs[] = { 32768, PIT_HZ_NOMINAL, 3579545, 14318180, 100000000,
                                      NS_PER_S, 2100000000, 3999999999ull };
    uint64_t x = 0x9E3779B97F4A7C15ull;

    for (unsigned f = 0; f < sizeof(freqs) / sizeof(freqs[0]); f++) {
        struct clockevent ce = make("x", CE_ONESHOT, freqs[f], 1, 1, 0);
        for (int i = 0; i < 2000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t ns = x >> (x % 40 + 4);    /* up to 2^60 ns, many sizes */
            uint64_t cyc = clockevent_ns_to_cyc_up(&ce, ns);
            u128 want = (u128)ns * freqs[f];
            if (!CHECK((u128)cyc * NS_PER_S >= want) ||
                !CHECK(cyc == 0 || (u128)(cyc - 1) * NS_PER_S < want))
                return;
        }
    }
}

TEST(clockevent_ns_to_cyc_saturates)
{
    struct clockevent tsc = make("tsc", CE_ONESHOT, 4000000000ull, 1, 1, 0);

    CHECK_EQ_U64(clockevent_ns_to_cyc_up(&tsc, UINT64_MAX), UINT64_MAX);
}

TEST(clockevent_cyc_to_ns_nearest)
{
    struct clockevent pit = make("pit", CE_ONESHOT, PIT_HZ_NOMINAL, 1, 65535, 100);
    struct clockevent none = make("none", CE_ONESHOT, 0, 1, 1, 0);

    CHECK_EQ_U64(clockevent_cyc_to_ns(&pit, 1193), 999847);      /* 999,847.47 */
    CHECK_EQ_U64(clockevent_cyc_to_ns(&pit, 11932), 10000151);   /* 10,000,150.86 */
    CHECK_EQ_U64(clockevent_cyc_to_ns(&pit, 65536), 54925401);   /* 54,925,401.1: the longest */
    CHECK_EQ_U64(clockevent_cyc_to_ns(&none, 5), UINT64_MAX);
}

/* ---- program_ns: rounding, clamping, -ETIME ---------------------------------------------- */

TEST(clockevent_program_rounds_up_to_cycles)
{
    static struct clockevent hpet;

    fresh();
    hpet = make("hpet", CE_ONESHOT, 100000000, 1, UINT32_MAX, 120);
    REQUIRE(clockevent_register(&hpet) == 0);
    CHECK_EQ_I64(clockevent_program_ns(&hpet, 1234567), 0);
    CHECK_EQ_U64(dev.next_log[0], 123457);     /* 1,234,570 ns: 3 ns late, never early */
    CHECK_EQ_U64(hpet.programs, 1);
    CHECK_EQ_U64(hpet.clamped_short + hpet.clamped_long, 0);
}

TEST(clockevent_program_clamps_to_min_and_max)
{
    static struct clockevent pit;

    fresh();
    pit = make("pit", CE_ONESHOT, PIT_HZ_NOMINAL, 5, 65535, 100);
    REQUIRE(clockevent_register(&pit) == 0);
    CHECK_EQ_I64(clockevent_program_ns(&pit, 0), 0);           /* a past deadline */
    CHECK_EQ_I64(clockevent_program_ns(&pit, 1000), 0);        /* 2 cycles < 5 */
    CHECK_EQ_I64(clockevent_program_ns(&pit, NS_PER_S), 0);    /* 1193182 > 65535 */
    CHECK_EQ_I64(clockevent_program_ns(&pit, 4191), 0);        /* 5.0006 -> 6, no clamp */
    CHECK_EQ_U64(dev.next_log[0], 5);
    CHECK_EQ_U64(dev.next_log[1], 5);
    CHECK_EQ_U64(dev.next_log[2], 65535);
    CHECK_EQ_U64(dev.next_log[3], 6);
    CHECK_EQ_U64(pit.clamped_short, 2);
    CHECK_EQ_U64(pit.clamped_long, 1);
    CHECK_EQ_U64(pit.programs, 4);
}

/* min_delta_cyc 0 means "not measured": the core still never asks for 0 cycles. */
TEST(clockevent_program_unmeasured_min_uses_one_cycle)
{
    static struct clockevent ce;

    fresh();
    ce = make("lapic", CE_ONESHOT, NS_PER_S, 0, UINT32_MAX, 150);
    REQUIRE(clockevent_register(&ce) == 0);
    CHECK_EQ_I64(clockevent_program_ns(&ce, 0), 0);
    CHECK_EQ_U64(dev.next_log[0], 1);
    CHECK_EQ_U64(ce.clamped_short, 1);
}

TEST(clockevent_program_etime_retries_then_succeeds)
{
    static struct clockevent hpet;

    fresh();
    hpet = make("hpet", CE_ONESHOT, 100000000, 10, 1000000, 120);
    REQUIRE(clockevent_register(&hpet) == 0);
    dev.etime_left = 3;
    CHECK_EQ_I64(clockevent_program_ns(&hpet, 5000), 0);
    REQUIRE(dev.next_calls == 4);
    CHECK_EQ_U64(dev.next_log[0], 500);     /* as asked */
    CHECK_EQ_U64(dev.next_log[1], 10);      /* then min_delta, doubling */
    CHECK_EQ_U64(dev.next_log[2], 20);
    CHECK_EQ_U64(dev.next_log[3], 40);
    CHECK_EQ_U64(hpet.etime_retries, 3);
    CHECK_EQ_U64(hpet.etime_failures, 0);
    CHECK_EQ_U64(hpet.programs, 1);
}

TEST(clockevent_program_etime_forever_fails_bounded)
{
    static struct clockevent hpet;

    fresh();
    hpet = make("hpet", CE_ONESHOT, 100000000, 10, 1000000, 120);
    REQUIRE(clockevent_register(&hpet) == 0);
    dev.etime_left = -1;
    CHECK_EQ_I64(clockevent_program_ns(&hpet, 0), -ETIME);
    CHECK_EQ_U64(dev.next_calls, 1 + CLOCKEVENT_ETIME_RETRIES);
    CHECK_EQ_U64(dev.next_log[CLOCKEVENT_ETIME_RETRIES], 10u << (CLOCKEVENT_ETIME_RETRIES - 1));
    CHECK_EQ_U64(hpet.etime_retries, CLOCKEVENT_ETIME_RETRIES);
    CHECK_EQ_U64(hpet.etime_failures, 1);
    /* The next request starts over: the bound is per request, not a lifetime budget. */
    dev.etime_left = 1;
    CHECK_EQ_I64(clockevent_program_ns(&hpet, 0), 0);
    CHECK_EQ_U64(hpet.etime_failures, 1);
}

/* Doubling stops at max_delta_cyc instead of asking for a delta the device cannot take. */
TEST(clockevent_program_etime_doubling_capped_at_max)
{
    static struct clockevent ce;

    fresh();
    ce = make("short", CE_ONESHOT, NS_PER_S, 10, 50, 1);
    REQUIRE(clockevent_register(&ce) == 0);
    dev.etime_left = -1;
    CHECK_EQ_I64(clockevent_program_ns(&ce, 30), -ETIME);
    CHECK_EQ_U64(dev.next_log[1], 10);
    CHECK_EQ_U64(dev.next_log[2], 20);
    CHECK_EQ_U64(dev.next_log[3], 40);
    CHECK_EQ_U64(dev.next_log[4], 50);
    CHECK_EQ_U64(dev.next_log[5], 50);
}

TEST(clockevent_program_passes_driver_errors_without_retry)
{
    static struct clockevent ce;

    fresh();
    ce = make("x", CE_ONESHOT, NS_PER_S, 1, 1000, 1);
    REQUIRE(clockevent_register(&ce) == 0);
    dev.next_err = -EINVAL;
    CHECK_EQ_I64(clockevent_program_ns(&ce, 100), -EINVAL);
    CHECK_EQ_U64(dev.next_calls, 1);
    CHECK_EQ_U64(ce.etime_retries, 0);
}

TEST(clockevent_program_needs_oneshot_and_usable)
{
    static struct clockevent periodic, absolute, off;

    fresh();
    periodic = make("periodic", CE_PERIODIC, NS_PER_S, 1, 1000, 1);
    absolute = make("absolute", CE_ONESHOT | CE_ABS, NS_PER_S, 1, 1000, 1);
    off = make("off", CE_ONESHOT, NS_PER_S, 1, 1000, 1);
    off.usable = false;
    REQUIRE(clockevent_register(&periodic) == 0);
    REQUIRE(clockevent_register(&absolute) == 0);
    REQUIRE(clockevent_register(&off) == 0);
    CHECK_EQ_I64(clockevent_program_ns(&periodic, 100), -ENOTSUP);
    CHECK_EQ_I64(clockevent_program_ns(&off, 100), -ENODEV);
    CHECK_EQ_I64(clockevent_program_ns(&absolute, 100), 0);   /* a delay: set_next_event */
    CHECK_EQ_U64(dev.next_calls, 1);
    CHECK_EQ_U64(dev.abs_calls, 0);
    CHECK(periodic.state == CE_STATE_SHUTDOWN && off.state == CE_STATE_SHUTDOWN);
}

/* ---- periodic ---------------------------------------------------------------------------- */

/* The PIT divides 1,193,182 Hz by a whole count: HZ=1000 gets 1193 cycles, 999,847 ns,
 * 1000.152 Hz. Pinned for each HZ the command line offers. */
TEST(clockevent_periodic_pit_rounds_to_whole_cycles)
{
    static const struct { uint64_t hz, cyc, actual_ns; } want[] = {
        { 100, 11932, 10000151 },     /* 11931.82 -> 11932: 99.998 Hz */
        { 250, 4773, 4000228 },       /* 4772.728 -> 4773: 249.986 Hz */
        { 1000, 1193, 999847 },       /* 1193.182 -> 1193: 1000.152 Hz */
        { 10000, 119, 99733 },        /* 119.3182 -> 119: 10026.7 Hz */
    };
    static struct clockevent pit;

    fresh();
    pit = make("pit", CE_PERIODIC | CE_ONESHOT, PIT_HZ_NOMINAL, 2, 65536, 100);
    REQUIRE(clockevent_register(&pit) == 0);
    for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        uint64_t actual = 0;
        CHECK_EQ_I64(clockevent_set_periodic_ns(&pit, NS_PER_S / want[i].hz, &actual), 0);
        CHECK_EQ_U64(dev.last_period_cyc, want[i].cyc);
        CHECK_EQ_U64(actual, want[i].actual_ns);
    }
    CHECK_EQ_U64(pit.programs, 4);
}

TEST(clockevent_periodic_range_limits)
{
    static struct clockevent pit;
    uint64_t actual = 77;

    fresh();
    pit = make("pit", CE_PERIODIC, PIT_HZ_NOMINAL, 2, 65536, 100);
    REQUIRE(clockevent_register(&pit) == 0);
    CHECK_EQ_I64(clockevent_set_periodic_ns(&pit, NS_PER_S / 18, &actual), -ERANGE);  /* 66288 */
    CHECK_EQ_I64(clockevent_set_periodic_ns(&pit, 1000, &actual), -ERANGE);   /* 1.19 -> 1 */
    CHECK_EQ_I64(clockevent_set_periodic_ns(&pit, 0, &actual), -ERANGE);
    CHECK_EQ_I64(clockevent_set_periodic_ns(&pit, UINT64_MAX, &actual), -ERANGE);
    CHECK_EQ_U64(actual, 77);                 /* untouched on failure */
    CHECK_EQ_U64(dev.periodic_calls, 0);
    CHECK_EQ_I64(clockevent_set_periodic_ns(&pit, NS_PER_S / 19, &actual), 0);   /* 62799 */
    CHECK_EQ_U64(dev.last_period_cyc, 62799);
    CHECK_EQ_I64(clockevent_set_periodic_ns(&pit, 54925401, NULL), 0);           /* 65536 */
    CHECK_EQ_U64(dev.last_period_cyc, 65536);
}

TEST(clockevent_periodic_lapic_1ghz_and_hpet_100mhz)
{
    static struct clockevent lapic, hpet;
    uint64_t actual;

    fresh();
    lapic = make("lapic", CE_PERIODIC | CE_ONESHOT, NS_PER_S, 1, UINT32_MAX, 150);
    hpet = make("hpet", CE_PERIODIC | CE_ONESHOT, 100000000, 1, UINT32_MAX, 120);
    REQUIRE(clockevent_register(&lapic) == 0);
    REQUIRE(clockevent_register(&hpet) == 0);

    CHECK_EQ_I64(clockevent_set_periodic_ns(&lapic, 1000000, &actual), 0);
    CHECK_EQ_U64(dev.last_period_cyc, 1000000);
    CHECK_EQ_U64(actual, 1000000);            /* 1 GHz: every ns is a cycle, exact */
    CHECK_EQ_I64(clockevent_set_periodic_ns(&lapic, NS_PER_S / 3, &actual), 0);
    CHECK_EQ_U64(actual, 333333333);

    CHECK_EQ_I64(clockevent_set_periodic_ns(&hpet, 1000000, &actual), 0);
    CHECK_EQ_U64(dev.last_period_cyc, 100000);
    CHECK_EQ_U64(actual, 1000000);
    CHECK_EQ_I64(clockevent_set_periodic_ns(&hpet, NS_PER_S / 3, &actual), 0);
    CHECK_EQ_U64(dev.last_period_cyc, 33333333);   /* 33,333,333.3 */
    CHECK_EQ_U64(actual, 333333330);
    CHECK_EQ_I64(clockevent_set_periodic_ns(&hpet, 15, &actual), 0);   /* 1.5 -> 2 */
    CHECK_EQ_U64(actual, 20);
}

TEST(clockevent_periodic_needs_feature_and_passes_errors)
{
    static struct clockevent oneshot, ce;
    uint64_t actual = 5;

    fresh();
    oneshot = make("oneshot", CE_ONESHOT, NS_PER_S, 1, 1000000, 1);
    ce = make("ce", CE_PERIODIC, NS_PER_S, 1, 1000000, 1);
    REQUIRE(clockevent_register(&oneshot) == 0);
    REQUIRE(clockevent_register(&ce) == 0);
    CHECK_EQ_I64(clockevent_set_periodic_ns(&oneshot, 1000, &actual), -ENOTSUP);
    dev.periodic_err = -EINVAL;
    CHECK_EQ_I64(clockevent_set_periodic_ns(&ce, 1000, &actual), -EINVAL);
    CHECK_EQ_U64(actual, 5);
    ce.usable = false;
    CHECK_EQ_I64(clockevent_set_periodic_ns(&ce, 1000, &actual), -ENODEV);
}

/* ---- registration ------------------------------------------------------------------------ */

TEST(clockevent_register_checks_promises)
{
    static struct clockevent bad, good, dup, other_cpu;

    fresh();
    CHECK_EQ_I64(clockevent_register(NULL), -EINVAL);
    bad = make("", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);          /* no name */
    bad = make("b", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    bad.set_state_shutdown = NULL;
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);
    bad = make("b", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    bad.set_next_event = NULL;
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);
    bad = make("b", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    bad.set_state_oneshot = NULL;
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);
    bad = make("b", CE_PERIODIC, NS_PER_S, 1, 10, 1);
    bad.set_state_periodic = NULL;
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);
    bad = make("b", CE_ONESHOT | CE_ABS, NS_PER_S, 1, 10, 1);
    bad.set_next_abs = NULL;
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);
    bad = make("b", CE_ONESHOT | CE_ABS, NS_PER_S, 1, 10, 1);
    bad.abs_cs = NULL;                                         /* absolute against what? */
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);
    bad = make("b", CE_PERIODIC | CE_ABS, NS_PER_S, 1, 10, 1); /* ABS is a one-shot kind */
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);
    bad = make("b", CE_ONESHOT, NS_PER_S, 11, 10, 1);          /* min > max */
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);
    bad = make("b", CE_PERIODIC, NS_PER_S, 0, 0, 1);           /* no max */
    CHECK_EQ_I64(clockevent_register(&bad), -EINVAL);
    CHECK(clockevent_list() == NULL);

    good = make("good", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    good.events = 99;
    CHECK_EQ_I64(clockevent_register(&good), 0);
    CHECK_EQ_U64(good.events, 0);                              /* counters start at 0 */
    CHECK_EQ_I64(clockevent_register(&good), -EBUSY);
    dup = make("good", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    CHECK_EQ_I64(clockevent_register(&dup), -EBUSY);           /* the name is taken on cpu 0 */
    other_cpu = make("good", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    other_cpu.cpu = 1;
    CHECK_EQ_I64(clockevent_register(&other_cpu), 0);          /* ... but not on cpu 1 */
    CHECK(clockevent_list() == &good && good.next == &other_cpu && other_cpu.next == NULL);
    CHECK(clockevent_find("good", 0) == &good);
    CHECK(clockevent_find("good", 1) == &other_cpu);
    CHECK(clockevent_find("good", 2) == NULL);
    CHECK(clockevent_find("bad", 0) == NULL);
    CHECK(clockevent_find(NULL, 0) == NULL);
}

static void leftover_handler(struct clockevent *ce) { (void)ce; }

/* Register puts a device in SHUTDOWN with no owner and every statistic at zero, whatever
 * the struct held, and computes the ns limits the core keeps off the per-event path. */
TEST(clockevent_register_starts_shut_down_unowned_and_zeroed)
{
    static struct clockevent ce;
    static int someone;

    fresh();
    ce = make("x", CE_ONESHOT | CE_PERIODIC, 100000000, 3, 1000, 1);
    ce.state = CE_STATE_ONESHOT;
    ce.event = leftover_handler;                   /* garbage the driver left */
    ce.owner = &someone;
    ce.programs = ce.abs_programs = ce.state_changes = ce.clamped_short = 5;
    ce.clamped_long = ce.etime_retries = ce.etime_failures = ce.events = 5;
    REQUIRE(clockevent_register(&ce) == 0);
    CHECK(ce.state == CE_STATE_SHUTDOWN);
    CHECK(ce.event == NULL && ce.owner == NULL);
    CHECK_EQ_U64(ce.programs + ce.abs_programs + ce.state_changes + ce.clamped_short, 0);
    CHECK_EQ_U64(ce.clamped_long + ce.etime_retries + ce.etime_failures + ce.events, 0);
    CHECK_EQ_U64(ce.min_delta_ns, 30);             /* 3 cycles at 100 MHz */
    CHECK_EQ_U64(ce.max_delta_ns, 10000);
    CHECK_EQ_U64(dev.oneshot_calls + dev.periodic_calls + dev.next_calls, 0);
}

TEST(clockevent_register_lists_unusable_with_reason)
{
    static struct clockevent nofreq, nomode, driver_no, driver_why;

    fresh();
    nofreq = make("nofreq", CE_ONESHOT, 0, 1, 10, 1);
    nomode = make("nomode", 0, NS_PER_S, 0, 0, 1);
    driver_no = make("driver_no", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    driver_no.usable = false;
    driver_why = make("driver_why", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    driver_why.usable = false;
    driver_why.unusable_reason = "comparator stuck";
    REQUIRE(clockevent_register(&nofreq) == 0);
    REQUIRE(clockevent_register(&nomode) == 0);
    REQUIRE(clockevent_register(&driver_no) == 0);
    REQUIRE(clockevent_register(&driver_why) == 0);
    CHECK(!nofreq.usable && !nomode.usable);
    CHECK_EQ_STR(nofreq.unusable_reason, "no frequency (freq_hz 0)");
    CHECK_EQ_STR(nomode.unusable_reason, "offers neither periodic nor one-shot events");
    CHECK_EQ_STR(driver_no.unusable_reason, "not marked usable by its driver");
    CHECK_EQ_STR(driver_why.unusable_reason, "comparator stuck");
    CHECK(clockevent_list() == &nofreq && nofreq.next == &nomode &&
          nomode.next == &driver_no && driver_no.next == &driver_why);
}

/* ---- selection --------------------------------------------------------------------------- */

static struct clockevent sel_pit, sel_lapic, sel_hpet, sel_rtc, sel_dl, sel_broken;

static void selection_machine(void)
{
    fresh();
    sel_pit = make("pit", CE_PERIODIC | CE_ONESHOT, PIT_HZ_NOMINAL, 2, 65535, 100);
    sel_lapic = make("lapic", CE_PERIODIC | CE_ONESHOT | CE_STOPS_IN_IDLE, NS_PER_S, 1,
                     UINT32_MAX, 150);
    sel_hpet = make("hpet", CE_ONESHOT, 100000000, 1, UINT32_MAX, 150);  /* ties lapic */
    sel_rtc = make("rtc", CE_PERIODIC, 32768, 4, 16384, 10);
    sel_dl = make("tsc_deadline", CE_ONESHOT | CE_ABS, 2100000000, 1, UINT32_MAX, 200);
    sel_broken = make("broken", CE_PERIODIC | CE_ONESHOT, NS_PER_S, 1, 100, 500);
    sel_broken.usable = false;
    sel_broken.unusable_reason = "never fires";
    clockevent_register(&sel_pit);
    clockevent_register(&sel_lapic);
    clockevent_register(&sel_hpet);
    clockevent_register(&sel_rtc);
    clockevent_register(&sel_dl);
    clockevent_register(&sel_broken);
}

TEST(clockevent_select_best_rating_with_features)
{
    char why[128];

    selection_machine();
    CHECK(clockevent_select(NULL, 0, 0, NULL, why, sizeof(why)) == &sel_dl);
    CHECK_EQ_STR(why, "");
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, NULL, why, sizeof(why)) == &sel_dl);
    CHECK(clockevent_select(NULL, CE_PERIODIC, 0, NULL, why, sizeof(why)) == &sel_lapic);
    /* lapic and hpet tie at 150: the first registered wins */
    sel_dl.usable = false;
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, NULL, why, sizeof(why)) == &sel_lapic);
    CHECK(clockevent_select(NULL, CE_PERIODIC | CE_ONESHOT, 0, NULL, NULL, 0) == &sel_lapic);
    CHECK_EQ_STR(why, "");
}

TEST(clockevent_select_named_device)
{
    char why[128];

    selection_machine();
    CHECK(clockevent_select("rtc", CE_PERIODIC, 0, NULL, why, sizeof(why)) == &sel_rtc);
    CHECK_EQ_STR(why, "");
    CHECK(clockevent_select("pit", CE_ONESHOT, 0, NULL, why, sizeof(why)) == &sel_pit);
    CHECK_EQ_STR(why, "");
}

TEST(clockevent_select_named_but_refused_explains)
{
    char why[128];

    selection_machine();
    CHECK(clockevent_select("nope", CE_PERIODIC, 0, NULL, why, sizeof(why)) == &sel_lapic);
    CHECK_EQ_STR(why, "clockevent=nope: no such device here (registered: pit, lapic, hpet, rtc, "
                      "tsc_deadline, broken); using lapic");
    CHECK(clockevent_select("broken", CE_PERIODIC, 0, NULL, why, sizeof(why)) == &sel_lapic);
    CHECK_EQ_STR(why, "clockevent=broken: unusable (never fires); using lapic");
    CHECK(clockevent_select("rtc", CE_ONESHOT, 0, NULL, why, sizeof(why)) == &sel_dl);
    CHECK_EQ_STR(why, "clockevent=rtc: lacks ONESHOT; using tsc_deadline");
    CHECK(clockevent_select("hpet", CE_PERIODIC | CE_ABS, 0, NULL, why, sizeof(why)) == NULL);
    CHECK_EQ_STR(why, "clockevent=hpet: lacks PERIODIC|ABS; using none usable");
    /* a short buffer is cut, not overrun */
    CHECK(clockevent_select("nope", CE_PERIODIC, 0, NULL, why, 12) == &sel_lapic);
    CHECK_EQ_STR(why, "clockevent=");
}

TEST(clockevent_select_none_usable)
{
    char why[128];

    fresh();
    CHECK(clockevent_select(NULL, CE_PERIODIC, 0, NULL, why, sizeof(why)) == NULL);
    CHECK_EQ_STR(why, "no usable clockevent with PERIODIC");
    CHECK(clockevent_select(NULL, 0, 0, NULL, why, sizeof(why)) == NULL);
    CHECK_EQ_STR(why, "no usable clockevent");
    CHECK(clockevent_select("pit", 0, 0, NULL, why, sizeof(why)) == NULL);
    CHECK_EQ_STR(why, "clockevent=pit: no such device here (none registered); using none usable");
}

TEST(clockevent_feature_names_joined)
{
    char buf[64];

    CHECK_EQ_STR(clockevent_feature_names(CE_PERIODIC | CE_ONESHOT | CE_ABS | CE_PERCPU |
                                          CE_STOPS_IN_IDLE, buf, sizeof(buf)),
                 "PERIODIC|ONESHOT|ABS|PERCPU|STOPS_IN_IDLE");
    CHECK_EQ_STR(clockevent_feature_names(CE_ONESHOT, buf, sizeof(buf)), "ONESHOT");
    CHECK_EQ_STR(clockevent_feature_names(0, buf, sizeof(buf)), "");
    CHECK_EQ_STR(clockevent_feature_names(CE_PERIODIC | CE_ONESHOT, buf, 12), "PERIODIC|ON");
    CHECK_EQ_STR(clockevent_feature_names(CE_PERIODIC | CE_ONESHOT, buf, 9), "PERIODIC");
}

/* ---- events ------------------------------------------------------------------------------ */

static unsigned handler_calls;
static struct clockevent *handler_saw;

static void count_event(struct clockevent *ce)
{
    handler_calls++;
    handler_saw = ce;
}

TEST(clockevent_handle_irq_counts_and_calls_event)
{
    static struct clockevent ce;
    static int owner;

    fresh();
    ce = make("x", CE_ONESHOT, NS_PER_S, 1, 10, 1);
    REQUIRE(clockevent_register(&ce) == 0);
    clockevent_handle_irq(&ce);               /* no owner yet: counted only */
    REQUIRE(clockevent_claim(&ce, count_event, &owner) == 0);
    handler_calls = 0;
    clockevent_handle_irq(&ce);
    clockevent_handle_irq(&ce);
    CHECK_EQ_U64(ce.events, 3);
    CHECK_EQ_U64(handler_calls, 2);
    CHECK(handler_saw == &ce);
    CHECK(ce.owner == &owner);
}

/* ---- the device object: callbacks, states ------------------------------------------------ */

/* A driver's struct around its device, as the PIT's, an HPET channel's, a LAPIC's. */
struct chip {
    int id;
    struct clockevent ce;
    int last_seen;
};

static int chip_next(struct clockevent *ce, uint64_t delta_cyc)
{
    struct chip *c = clockevent_container(ce, struct chip, ce);
    c->last_seen = (int)delta_cyc;
    return 0;
}

static int chip_state(struct clockevent *ce)
{
    (void)ce;
    return 0;
}

/* Every callback receives its own device, and the driver's struct is found from it: two
 * chips of one driver need no trampolines and no globals. */
TEST(clockevent_callbacks_receive_their_device)
{
    static struct chip a, b;

    fresh();
    a = (struct chip){ .id = 1 };
    b = (struct chip){ .id = 2 };
    a.ce = (struct clockevent){ .name = "chip", .cpu = 0, .features = CE_ONESHOT,
                                .freq_hz = NS_PER_S, .min_delta_cyc = 1, .max_delta_cyc = 1000,
                                .set_state_oneshot = chip_state,
                                .set_state_shutdown = chip_state, .set_next_event = chip_next,
                                .usable = true };
    b.ce = a.ce;
    b.ce.cpu = 1;
    REQUIRE(clockevent_register(&a.ce) == 0);
    REQUIRE(clockevent_register(&b.ce) == 0);
    CHECK_EQ_I64(clockevent_program_ns(&a.ce, 11), 0);
    CHECK_EQ_I64(clockevent_program_ns(&b.ce, 22), 0);
    CHECK_EQ_I64(a.last_seen, 11);
    CHECK_EQ_I64(b.last_seen, 22);
    struct clockevent *volatile cb = &b.ce;        /* at run time, not folded away */
    CHECK(clockevent_container(cb, struct chip, ce) == &b);
}

/* The mode setup is the state call's: the first programming enters ONESHOT once, and every
 * later one is the per-event call alone (what the hardware needs for one event). */
TEST(clockevent_program_enters_oneshot_once_then_only_per_event_calls)
{
    static struct clockevent ce;

    fresh();
    ce = make("x", CE_ONESHOT | CE_PERIODIC, NS_PER_S, 1, 1000000, 1);
    REQUIRE(clockevent_register(&ce) == 0);
    CHECK(ce.state == CE_STATE_SHUTDOWN);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_I64(clockevent_program_ns(&ce, 1000 + (uint64_t)i), 0);
    CHECK(ce.state == CE_STATE_ONESHOT);
    CHECK_EQ_U64(dev.oneshot_calls, 1);
    CHECK_EQ_U64(dev.next_calls, 10);
    CHECK_EQ_U64(dev.shutdowns + dev.periodic_calls, 0);
    CHECK_EQ_U64(ce.state_changes, 1);
    CHECK_EQ_U64(ce.programs, 10);
    /* After a shutdown the next programming enters ONESHOT again. */
    clockevent_shutdown(&ce);
    CHECK(ce.state == CE_STATE_SHUTDOWN);
    CHECK_EQ_I64(clockevent_program_ns(&ce, 1000), 0);
    CHECK_EQ_U64(dev.oneshot_calls, 2);
    CHECK_EQ_U64(dev.shutdowns, 1);
    CHECK_EQ_U64(ce.state_changes, 3);
}

/* The core's one door to the state calls: a mode is entered from SHUTDOWN only (the core
 * shuts the device down first), a state it lacks is refused, a refused state call leaves
 * it in SHUTDOWN, PERIODIC always restarts with its period, shutdown always succeeds. */
TEST(clockevent_set_state_transitions)
{
    static struct clockevent ce, oneshot_only, off;

    fresh();
    ce = make("x", CE_ONESHOT | CE_PERIODIC, NS_PER_S, 1, 1000000, 1);
    oneshot_only = make("y", CE_ONESHOT, NS_PER_S, 1, 1000000, 1);
    off = make("z", CE_ONESHOT | CE_PERIODIC, NS_PER_S, 1, 1000000, 1);
    off.usable = false;
    REQUIRE(clockevent_register(&ce) == 0);
    REQUIRE(clockevent_register(&oneshot_only) == 0);
    REQUIRE(clockevent_register(&off) == 0);

    CHECK_EQ_I64(clockevent_set_state(&ce, CE_STATE_ONESHOT, 0), 0);
    CHECK_EQ_I64(clockevent_set_state(&ce, CE_STATE_ONESHOT, 0), 0);     /* no-op */
    CHECK_EQ_U64(dev.oneshot_calls, 1);
    CHECK_EQ_U64(dev.shutdowns, 0);
    CHECK_EQ_I64(clockevent_set_state(&ce, CE_STATE_PERIODIC, 500), 0);  /* via SHUTDOWN */
    CHECK_EQ_U64(dev.shutdowns, 1);
    CHECK_EQ_U64(dev.last_period_cyc, 500);
    CHECK_EQ_I64(clockevent_set_state(&ce, CE_STATE_PERIODIC, 700), 0);  /* restarts */
    CHECK_EQ_U64(dev.periodic_calls, 2);
    CHECK_EQ_U64(dev.last_period_cyc, 700);
    CHECK(ce.state == CE_STATE_PERIODIC);
    CHECK_EQ_STR(clockevent_state_name(ce.state), "periodic");

    dev.oneshot_err = -EIO;
    unsigned shut = dev.shutdowns;
    CHECK_EQ_I64(clockevent_set_state(&ce, CE_STATE_ONESHOT, 0), -EIO);
    CHECK(ce.state == CE_STATE_SHUTDOWN);
    CHECK(dev.shutdowns >= shut + 2);         /* before the call, and after its refusal */
    dev.oneshot_err = 0;

    CHECK_EQ_I64(clockevent_set_state(&oneshot_only, CE_STATE_PERIODIC, 500), -ENOTSUP);
    CHECK(oneshot_only.state == CE_STATE_SHUTDOWN);
    CHECK_EQ_I64(clockevent_set_state(&off, CE_STATE_ONESHOT, 0), -ENODEV);
    CHECK_EQ_I64(clockevent_set_state(&off, CE_STATE_SHUTDOWN, 0), 0);   /* always */
    CHECK_EQ_STR(clockevent_state_name(CE_STATE_SHUTDOWN), "shutdown");
    CHECK_EQ_STR(clockevent_state_name(CE_STATE_ONESHOT), "oneshot");
}

/* A periodic device asked for a one-shot leaves PERIODIC through SHUTDOWN. */
TEST(clockevent_program_from_periodic_shuts_down_first)
{
    static struct clockevent ce;

    fresh();
    ce = make("x", CE_ONESHOT | CE_PERIODIC, NS_PER_S, 1, 1000000, 1);
    REQUIRE(clockevent_register(&ce) == 0);
    REQUIRE(clockevent_set_periodic_ns(&ce, 1000, NULL) == 0);
    CHECK(ce.state == CE_STATE_PERIODIC);
    CHECK_EQ_U64(dev.shutdowns, 0);
    CHECK_EQ_I64(clockevent_program_ns(&ce, 100), 0);
    CHECK(ce.state == CE_STATE_ONESHOT);
    CHECK_EQ_U64(dev.shutdowns, 1);
    CHECK_EQ_U64(dev.oneshot_calls, 1);
}

/* clockevent_program_cyc is the raw path for measuring the device: no clamp to min_delta,
 * no -ETIME retry, the device's own answer. */
TEST(clockevent_program_cyc_is_raw)
{
    static struct clockevent ce;

    fresh();
    ce = make("x", CE_ONESHOT, NS_PER_S, 10, 1000, 1);
    REQUIRE(clockevent_register(&ce) == 0);
    CHECK_EQ_I64(clockevent_program_cyc(&ce, 2), 0);
    CHECK_EQ_U64(dev.next_log[0], 2);
    dev.etime_left = 1;
    CHECK_EQ_I64(clockevent_program_cyc(&ce, 3), -ETIME);
    CHECK_EQ_U64(dev.next_calls, 2);
    CHECK_EQ_U64(ce.etime_retries + ce.clamped_short, 0);
    CHECK_EQ_U64(ce.programs, 2);
    CHECK(ce.state == CE_STATE_ONESHOT);
}

/* The measured minimum replaces the driver's floor, and the ns figures follow it. */
TEST(clockevent_set_min_delta_keeps_the_ns_limits)
{
    static struct clockevent ce;

    fresh();
    ce = make("x", CE_ONESHOT, 100000000, 1, 1000, 1);
    REQUIRE(clockevent_register(&ce) == 0);
    CHECK_EQ_U64(ce.min_delta_ns, 10);
    CHECK_EQ_I64(clockevent_set_min_delta(&ce, 25), 0);
    CHECK_EQ_U64(ce.min_delta_cyc, 25);
    CHECK_EQ_U64(ce.min_delta_ns, 250);
    CHECK_EQ_U64(ce.max_delta_ns, 10000);
    CHECK_EQ_I64(clockevent_set_min_delta(&ce, 0), -EINVAL);
    CHECK_EQ_I64(clockevent_set_min_delta(&ce, 1001), -EINVAL);
    CHECK_EQ_U64(ce.min_delta_cyc, 25);
    /* 3 cycles of the PIT are 2514.3 ns: rounded up, a delta that long is never short */
    ce = make("pit", CE_ONESHOT, PIT_HZ_NOMINAL, 1, 65535, 1);
    fresh();
    REQUIRE(clockevent_register(&ce) == 0);
    CHECK_EQ_I64(clockevent_set_min_delta(&ce, 3), 0);
    CHECK_EQ_U64(ce.min_delta_ns, 2515);
    CHECK_EQ_U64(clockevent_program_ns(&ce, 1000), 0);         /* 1.19 -> 2 < 3 */
    CHECK_EQ_U64(dev.next_log[0], 3);
    CHECK_EQ_U64(ce.clamped_short, 1);
}

/* ---- owners: claim, release, shared hardware -------------------------------------------- */

static int owner_a, owner_b;
static void other_event(struct clockevent *ce) { (void)ce; }

/* Two devices on one piece of hardware (the LAPIC timer's one-shot and TSC-deadline modes):
 * owning one makes the other unavailable, to every owner; releasing gives both back. */
TEST(clockevent_claim_refuses_a_device_whose_hw_is_owned)
{
    static struct clockevent one, two, alone;
    static int timer;                         /* the shared hardware */

    fresh();
    one = make("one", CE_ONESHOT | CE_PERIODIC, NS_PER_S, 1, 1000, 150);
    two = make("two", CE_ONESHOT, NS_PER_S, 1, 1000, 200);
    alone = make("alone", CE_ONESHOT, NS_PER_S, 1, 1000, 100);
    one.hw = two.hw = &timer;
    REQUIRE(clockevent_register(&one) == 0);
    REQUIRE(clockevent_register(&two) == 0);
    REQUIRE(clockevent_register(&alone) == 0);
    CHECK(clockevent_shares_hw(&one, &two));
    CHECK(!clockevent_shares_hw(&one, &alone));
    CHECK(clockevent_is_free(&one) && clockevent_is_free(&two));

    CHECK_EQ_I64(clockevent_claim(&one, count_event, &owner_a), 0);
    CHECK(one.event == count_event && one.owner == &owner_a);
    CHECK(!clockevent_is_free(&one));
    CHECK(!clockevent_is_free(&two));                  /* its hardware is taken */
    CHECK(clockevent_is_free(&alone));
    CHECK_EQ_I64(clockevent_claim(&two, count_event, &owner_b), -EBUSY);
    CHECK_EQ_I64(clockevent_claim(&two, count_event, &owner_a), -EBUSY);   /* even so */
    CHECK_EQ_I64(clockevent_claim(&one, count_event, &owner_b), -EBUSY);
    CHECK(two.event == NULL && two.owner == NULL);
    /* The owner claiming again changes its handler only. */
    CHECK_EQ_I64(clockevent_claim(&one, other_event, &owner_a), 0);
    CHECK(one.event == other_event && one.owner == &owner_a);

    REQUIRE(clockevent_program_ns(&one, 100) == 0);
    unsigned shut = dev.shutdowns;
    clockevent_release(&one);
    CHECK(one.event == NULL && one.owner == NULL);
    CHECK(one.state == CE_STATE_SHUTDOWN);
    CHECK_EQ_U64(dev.shutdowns, shut + 1);             /* released shut down */
    CHECK(clockevent_is_free(&one) && clockevent_is_free(&two));
    CHECK_EQ_I64(clockevent_claim(&two, count_event, &owner_b), 0);
    CHECK(!clockevent_is_free(&one));
    clockevent_release(&two);
}

TEST(clockevent_claim_refuses_unusable_and_missing_handler)
{
    static struct clockevent off, ce;

    fresh();
    off = make("off", CE_ONESHOT, NS_PER_S, 1, 1000, 1);
    off.usable = false;
    ce = make("ce", CE_ONESHOT, NS_PER_S, 1, 1000, 1);
    REQUIRE(clockevent_register(&off) == 0);
    REQUIRE(clockevent_register(&ce) == 0);
    CHECK_EQ_I64(clockevent_claim(&off, count_event, &owner_a), -ENODEV);
    CHECK(!clockevent_is_free(&off));
    CHECK_EQ_I64(clockevent_claim(&ce, NULL, &owner_a), -EINVAL);
    CHECK_EQ_I64(clockevent_claim(NULL, count_event, &owner_a), -EINVAL);
    CHECK(clockevent_is_free(&ce));
    clockevent_release(NULL);                          /* harmless */
}

/* Sharing is the hw pointer's business, never a name's: devices called "lapic" and
 * "tsc_deadline" on separate hardware are independent, devices with unrelated names on one
 * piece of hardware exclude each other, and no hw means sharing nothing but itself. */
TEST(clockevent_shares_hw_by_pointer_never_by_name)
{
    static struct clockevent lapic, deadline, a, b, n1, n2;
    static int hw_lapic, hw_deadline, hw_ab;

    fresh();
    lapic = make("lapic", CE_ONESHOT, NS_PER_S, 1, 1000, 150);
    deadline = make("tsc_deadline", CE_ONESHOT, NS_PER_S, 1, 1000, 200);
    lapic.hw = &hw_lapic;
    deadline.hw = &hw_deadline;
    a = make("a", CE_ONESHOT, NS_PER_S, 1, 1000, 1);
    b = make("b", CE_ONESHOT, NS_PER_S, 1, 1000, 1);
    a.hw = b.hw = &hw_ab;
    n1 = make("same", CE_ONESHOT, NS_PER_S, 1, 1000, 1);
    n2 = make("same", CE_ONESHOT, NS_PER_S, 1, 1000, 1);
    n2.cpu = 1;
    REQUIRE(clockevent_register(&lapic) == 0);
    REQUIRE(clockevent_register(&deadline) == 0);
    REQUIRE(clockevent_register(&a) == 0);
    REQUIRE(clockevent_register(&b) == 0);
    REQUIRE(clockevent_register(&n1) == 0);
    REQUIRE(clockevent_register(&n2) == 0);

    CHECK(!clockevent_shares_hw(&lapic, &deadline));
    CHECK(clockevent_shares_hw(&a, &b) && clockevent_shares_hw(&b, &a));
    CHECK(!clockevent_shares_hw(&n1, &n2));            /* same name, no hw: independent */
    CHECK(clockevent_shares_hw(&n1, &n1));             /* a device shares with itself */
    CHECK(!clockevent_shares_hw(&n1, NULL) && !clockevent_shares_hw(NULL, &n1));
    CHECK_EQ_I64(clockevent_claim(&lapic, count_event, &owner_a), 0);
    CHECK_EQ_I64(clockevent_claim(&deadline, count_event, &owner_b), 0);
    CHECK_EQ_I64(clockevent_claim(&n1, count_event, &owner_a), 0);
    CHECK_EQ_I64(clockevent_claim(&n2, count_event, &owner_b), 0);
    CHECK_EQ_I64(clockevent_claim(&a, count_event, &owner_a), 0);
    CHECK_EQ_I64(clockevent_claim(&b, count_event, &owner_b), -EBUSY);
}

/* select never hands out a device that shares hardware with `avoid` (the backup for a
 * wait on the LAPIC timer must not be its TSC-deadline mode), nor one that is owned or
 * whose hardware is, and it explains a named device it could not honour. */
TEST(clockevent_select_never_returns_a_device_sharing_hw_with_avoid)
{
    static struct clockevent lapic, deadline, hpet, pit;
    static int timer;
    char why[128];

    fresh();
    lapic = make("lapic", CE_ONESHOT | CE_PERIODIC, NS_PER_S, 1, 1000, 150);
    deadline = make("tsc_deadline", CE_ONESHOT | CE_ABS, NS_PER_S, 1, 1000, 200);
    lapic.hw = deadline.hw = &timer;
    hpet = make("hpet", CE_ONESHOT, NS_PER_S, 1, 1000, 120);
    pit = make("pit", CE_ONESHOT | CE_PERIODIC, NS_PER_S, 1, 1000, 100);
    REQUIRE(clockevent_register(&lapic) == 0);
    REQUIRE(clockevent_register(&deadline) == 0);
    REQUIRE(clockevent_register(&hpet) == 0);
    REQUIRE(clockevent_register(&pit) == 0);

    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, NULL, why, sizeof(why)) == &deadline);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, &lapic, why, sizeof(why)) == &hpet);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, &deadline, why, sizeof(why)) == &hpet);
    CHECK(clockevent_select(NULL, CE_PERIODIC, 0, &deadline, why, sizeof(why)) == &pit);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, &hpet, why, sizeof(why)) == &deadline);
    /* Named, but sharing with avoid: refused, with the reason. */
    CHECK(clockevent_select("lapic", CE_ONESHOT, 0, &deadline, why, sizeof(why)) == &hpet);
    CHECK_EQ_STR(why, "clockevent=lapic: in use (it or its hardware); using hpet");

    /* Owned devices, and devices whose hardware is owned, are not offered. */
    REQUIRE(clockevent_claim(&lapic, count_event, &owner_a) == 0);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, NULL, why, sizeof(why)) == &hpet);
    CHECK(clockevent_select("tsc_deadline", CE_ONESHOT, 0, NULL, why, sizeof(why)) == &hpet);
    CHECK_EQ_STR(why, "clockevent=tsc_deadline: in use (it or its hardware); using hpet");
    REQUIRE(clockevent_claim(&hpet, count_event, &owner_b) == 0);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, &pit, why, sizeof(why)) == NULL);
    CHECK_EQ_STR(why, "no usable clockevent with ONESHOT");
    /* Selecting claims nothing and changes no device. */
    CHECK(pit.event == NULL && pit.state == CE_STATE_SHUTDOWN);
}

/* Selection is per CPU: a device whose interrupt goes to another CPU is never offered. */
TEST(clockevent_select_only_devices_of_that_cpu)
{
    static struct clockevent l0, l1, pit;

    fresh();
    l0 = make("lapic", CE_ONESHOT | CE_PERCPU, NS_PER_S, 1, 1000, 150);
    l1 = make("lapic", CE_ONESHOT | CE_PERCPU, NS_PER_S, 1, 1000, 150);
    l1.cpu = 1;
    pit = make("pit", CE_ONESHOT, NS_PER_S, 1, 1000, 100);
    REQUIRE(clockevent_register(&l0) == 0);
    REQUIRE(clockevent_register(&l1) == 0);
    REQUIRE(clockevent_register(&pit) == 0);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 0, NULL, NULL, 0) == &l0);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 1, NULL, NULL, 0) == &l1);
    CHECK(clockevent_select("lapic", CE_ONESHOT, 1, NULL, NULL, 0) == &l1);
    CHECK(clockevent_select("pit", CE_ONESHOT, 1, NULL, NULL, 0) == &l1);
    CHECK(clockevent_select(NULL, CE_ONESHOT, 2, NULL, NULL, 0) == NULL);
    CHECK(clockevent_select(NULL, CE_PERCPU, 0, NULL, NULL, 0) == &l0);
}
