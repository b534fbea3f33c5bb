/* tests/host/test_abs_program.c - absolute programming: timekeeping_cycles_at() (the count
 * at which time_ns() reaches a moment, lib/time/clocksource.c) checked against time_ns()
 * itself on fake counters, and clockevent_program_abs_ns() (lib/time/clockevent.c)
 * choosing set_next_abs, the min-delta rule, its -ETIME fallback, and the relative path. */
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/errno.h"
#include "rng.h"
#include "test.h"

static uint64_t count;            /* the fake counter's true count */
static uint64_t mask;
static uint64_t fake_read(const struct clocksource *cs)
{
    (void)cs;
    return count & mask;
}
static struct clocksource cs, other;

static void source(uint64_t freq_hz, unsigned bits, uint64_t start)
{
    timekeeping_test_reset();
    mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
    count = start;
    cs = (struct clocksource){ .name = "fake", .read = fake_read, .mask = mask,
                               .freq_hz = freq_hz, .rating = 100, .usable = true };
    other = (struct clocksource){ .name = "other", .read = fake_read, .mask = mask,
                                  .freq_hz = freq_hz, .rating = 1, .usable = true };
    REQUIRE(clocksource_register(&cs) == 0);
    REQUIRE(clocksource_register(&other) == 0);
    REQUIRE(clocksource_select("fake", NULL, 0) == &cs);
}

/* time_ns() when the counter reads `at` (a count of the current epoch, i.e. >= count). */
static uint64_t ns_at_count(uint64_t at)
{
    uint64_t saved = count;
    count = at;
    uint64_t ns = time_ns();
    count = saved;
    return ns;
}

/* For HPET-, TSC- and PM-timer-like rates, after folds that leave sub-ns remainders: the
 * count returned reaches the moment and the count before it does not, for 20000 random
 * moments up to 50 ms ahead, across a 32-bit wrap. */
TEST(timekeeping_cycles_at_is_the_first_count_reaching_the_moment)
{
    static const uint64_t freqs[] = { 100000000, 14318180, 2100000000, 3579545, 1000000000 };
    rng_seed(0x616273ull);
    for (unsigned f = 0; f < sizeof(freqs) / sizeof(freqs[0]); f++) {
        source(freqs[f], freqs[f] == 3579545 ? 24 : 32, 0xffffffffull - 5000000);
        for (int fold = 0; fold < 20; fold++) {
            count += 7777 + (uint64_t)fold * 131;       /* leave remainders in base_frac */
            timekeeping_accumulate();
            uint64_t now = time_ns();
            for (int i = 0; i < 1000; i++) {
                uint64_t span = freqs[f] == 3579545 ? 4000000 : 50000000;   /* PM: 24 bits */
                uint64_t ns = now + 1 + rng() % span;
                uint64_t cyc;
                if (!CHECK_EQ_I64(timekeeping_cycles_at(ns, &cs, &cyc), 0))
                    return;
                /* cyc is a counter value: bring it back to the true count near `count` */
                uint64_t at = count + ((cyc - (count & mask)) & mask);
                if (!CHECK(ns_at_count(at) >= ns) || !CHECK(ns_at_count(at - 1) < ns)) {
                    printf("    f=%llu ns=%llu cyc=%llu\n", (unsigned long long)freqs[f],
                           (unsigned long long)ns, (unsigned long long)cyc);
                    return;
                }
            }
        }
    }
}

TEST(timekeeping_cycles_at_refuses_other_sources_and_the_past)
{
    uint64_t cyc = 0;
    source(100000000, 64, 1000);
    count += 100000;
    timekeeping_accumulate();
    uint64_t now = time_ns();
    CHECK_EQ_I64(timekeeping_cycles_at(now + 1000, &other, &cyc), -ENODEV);
    CHECK_EQ_I64(timekeeping_cycles_at(now, &cs, &cyc), -ETIME);      /* not after the base */
    CHECK_EQ_I64(timekeeping_cycles_at(now - 5, &cs, &cyc), -ETIME);
    CHECK_EQ_I64(timekeeping_cycles_at(now + 1000, &cs, &cyc), 0);
    CHECK_EQ_U64(cyc, count + 100);                                   /* 10 ns per cycle */
    /* beyond what one fold can hold */
    CHECK_EQ_I64(timekeeping_cycles_at(now + 1000000000000000000ull, &cs, &cyc), -ERANGE);
}

/* timekeeping_target_at() is for sources read in line, 64 bits wide: one whose driver must
 * be called (this fake's) is -ENODEV, so a device armed in line falls back to the general
 * way; the generation it hands out is the mapping's, and a new rate moves it on. */
TEST(timekeeping_target_at_needs_an_in_line_64bit_source)
{
    struct timekeeping_target tg;
    source(100000000, 64, 1000);
    count += 100000;
    timekeeping_accumulate();
    uint64_t now = time_ns();
    CHECK_EQ_I64(timekeeping_target_at(now + 1000, &tg), -ENODEV);
    uint32_t gen = timekeeping_mapping_gen;
    REQUIRE(clocksource_set_freq(&cs, 100000000) == 0);
    CHECK(timekeeping_mapping_gen != gen);
    gen = timekeeping_mapping_gen;
    count += 100000;
    timekeeping_accumulate();                     /* a fold keeps the mapping */
    CHECK_EQ_U64(timekeeping_mapping_gen, gen);
}

/* ---- clockevent_program_abs_ns ------------------------------------------------------------ */

static uint64_t abs_armed, rel_armed;
static int abs_rc, abs_calls, rel_calls;
static int dev_abs(struct clockevent *ce, uint64_t c) { (void)ce; abs_calls++; abs_armed = c; return abs_rc; }
static int dev_rel(struct clockevent *ce, uint64_t d) { (void)ce; rel_calls++; rel_armed = d; return 0; }
static int dev_state(struct clockevent *ce) { (void)ce; return 0; }

/* A comparator against `against` at 100 MHz (10 ns per cycle), registered. */
static void comparator(struct clockevent *ce, const struct clocksource *against,
                       uint64_t min_cyc)
{
    clockevent_test_reset();
    *ce = (struct clockevent){ .name = "cmp", .features = CE_ONESHOT | CE_ABS,
                               .freq_hz = 100000000, .min_delta_cyc = min_cyc,
                               .max_delta_cyc = 1000000, .set_next_event = dev_rel,
                               .set_state_oneshot = dev_state, .set_state_shutdown = dev_state,
                               .set_next_abs = dev_abs, .abs_cs = against, .usable = true };
    REQUIRE(clockevent_register(ce) == 0);
    abs_calls = rel_calls = 0;
    abs_rc = 0;
    abs_armed = rel_armed = 0;
}

/* A device that compares against the counter time_ns() runs on is armed with the exact
 * count (set_next_abs); one whose moment has passed (-ETIME) falls back to the shortest
 * relative delay; beyond max_delta the relative delay is used; against another clock the
 * count is mapped through a pair of readings. */
TEST(clockevent_program_abs_uses_the_count_when_it_can)
{
    static struct clockevent ce;
    source(100000000, 64, 5000);
    count += 12345;
    timekeeping_accumulate();
    uint64_t now = time_ns();
    comparator(&ce, &cs, 3);
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now + 5000, now), 0);
    CHECK_EQ_I64(abs_calls, 1);
    CHECK_EQ_I64(rel_calls, 0);
    CHECK_EQ_U64(abs_armed, count + 500);
    CHECK_EQ_U64(ce.abs_programs, 1);

    abs_rc = -ETIME;                               /* passed while being written */
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now + 5000, now), 0);
    CHECK_EQ_I64(rel_calls, 1);
    CHECK_EQ_U64(rel_armed, 3);                    /* the shortest delay */

    abs_rc = 0;
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now + 20000000, now), 0);  /* > max_delta */
    CHECK_EQ_I64(rel_calls, 2);
    CHECK_EQ_U64(rel_armed, 1000000);

    /* time_ns() does not run on its counter: the count is mapped through a pair of readings
     * (both fakes read the same count here, `other` at 1 MHz: 1 us per count) */
    other.freq_hz = 1000000;
    ce.abs_cs = &other;
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now + 5000, now), 0);
    CHECK_EQ_I64(abs_calls, 3);
    CHECK_EQ_U64(abs_armed, count + 5 + 1);        /* 5 us = 5 counts, +1 never early */
}

/* A deadline closer than the measured minimum (or already past) goes the relative way with
 * min_delta: arming the comparator for it would race the write; the minimum holds here as
 * on the relative path, and the short deadline is counted as clamped. */
TEST(clockevent_program_abs_closer_than_min_delta_goes_relative_and_clamps)
{
    static struct clockevent ce;
    source(100000000, 64, 5000);
    count += 1000000;                              /* 10 ms in: a past deadline fits */
    uint64_t now = time_ns();
    comparator(&ce, &cs, 30);                      /* 300 ns */
    CHECK_EQ_U64(ce.min_delta_ns, 300);
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now + 299, now), 0);
    CHECK_EQ_I64(abs_calls, 0);
    CHECK_EQ_I64(rel_calls, 1);
    CHECK_EQ_U64(rel_armed, 30);
    CHECK_EQ_U64(ce.clamped_short, 1);
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now - 1000, now), 0);   /* past */
    CHECK_EQ_I64(abs_calls, 0);
    CHECK_EQ_U64(rel_armed, 30);
    CHECK_EQ_U64(ce.clamped_short, 2);
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now + 300, now), 0);    /* exactly min */
    CHECK_EQ_I64(abs_calls, 1);
    CHECK_EQ_U64(abs_armed, count + 30);
    CHECK_EQ_U64(ce.programs, 3);
    CHECK_EQ_U64(ce.abs_programs, 1);
}

/* Regression: an -ETIME from set_next_abs retried the relative way counted `programs` twice
 * (one request, two counts), so programs no longer matched the requests made. */
TEST(clockevent_program_abs_etime_fallback_counts_programs_once)
{
    static struct clockevent ce;
    source(100000000, 64, 5000);
    uint64_t now = time_ns();
    comparator(&ce, &cs, 3);
    abs_rc = -ETIME;
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now + 5000, now), 0);
    CHECK_EQ_I64(abs_calls, 1);
    CHECK_EQ_I64(rel_calls, 1);
    CHECK_EQ_U64(rel_armed, 3);
    CHECK_EQ_U64(ce.programs, 1);
    CHECK_EQ_U64(ce.abs_programs, 1);
    CHECK_EQ_U64(ce.etime_retries, 1);
    CHECK_EQ_U64(ce.etime_failures, 0);
}

/* Regression: register zeroed every statistic but abs_programs, though the header says
 * register zeroes them all. */
TEST(clockevent_register_zeroes_abs_programs)
{
    static struct clockevent ce;
    source(100000000, 64, 5000);
    clockevent_test_reset();
    ce = (struct clockevent){ .name = "cmp", .features = CE_ONESHOT | CE_ABS,
                              .freq_hz = 100000000, .min_delta_cyc = 3,
                              .max_delta_cyc = 1000000, .set_next_event = dev_rel,
                              .set_state_oneshot = dev_state, .set_state_shutdown = dev_state,
                              .set_next_abs = dev_abs, .abs_cs = &cs, .usable = true,
                              .abs_programs = 7, .programs = 9 };
    REQUIRE(clockevent_register(&ce) == 0);
    CHECK_EQ_U64(ce.abs_programs, 0);
    CHECK_EQ_U64(ce.programs, 0);
}

/* Without CE_ABS the delay is taken from a FRESH time_ns() read inside the call, not from
 * the caller's now_ns: whatever ran between the caller's read and the call (here 20 us)
 * must not be added to the wait. */
TEST(clockevent_program_abs_without_abs_reads_the_clock_fresh)
{
    static struct clockevent ce;
    source(100000000, 64, 5000);
    count += 10000000;                             /* 100 ms in */
    uint64_t now = time_ns();
    comparator(&ce, &cs, 3);
    ce.features &= ~CE_ABS;                        /* a relative-only device */
    count += 2000;                                 /* 20 us pass after the caller's read */
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now + 50000, now), 0);
    CHECK_EQ_I64(abs_calls, 0);
    CHECK_EQ_I64(rel_calls, 1);
    CHECK_EQ_U64(rel_armed, 3000);                 /* 30 us left, not 50 */
    /* An ABS device beyond its max takes the fresh clock too. */
    comparator(&ce, &cs, 3);
    count += 1000;                                 /* 10 us */
    CHECK_EQ_I64(clockevent_program_abs_ns(&ce, now + 40000, now - 20000000), 0);
    CHECK_EQ_I64(abs_calls, 0);
    CHECK_EQ_U64(rel_armed, 1000);                 /* 40 - 30 us, at 10 ns per cycle */
}

/* time_ns_paired(): the same time as time_ns() at the same count, and the other clock read
 * after the counter, in the same pass. */
static uint64_t order_log[4], order_n;
static uint64_t logged_read(const struct clocksource *cs)
{
    (void)cs;
    order_log[order_n++ & 3] = 1;
    return count & mask;
}
static uint64_t other_clock(const struct clocksource *cs)
{
    (void)cs;
    order_log[order_n++ & 3] = 2;
    return 777;
}
static const struct clocksource other_cs = { .name = "other", .read = other_clock,
                                            .mask = 0xFFFF };

TEST(time_ns_paired_reads_the_counter_then_the_other_clock)
{
    source(100000000, 64, 1000);
    count += 123456;
    uint64_t want = time_ns();
    cs.read = logged_read;
    order_n = 0;
    uint64_t other_val = 0;
    CHECK_EQ_U64(time_ns_paired(&other_cs, &other_val), want);
    CHECK_EQ_U64(other_val, 777);
    CHECK_EQ_U64(order_n, 2);
    CHECK_EQ_U64(order_log[0], 1);
    CHECK_EQ_U64(order_log[1], 2);
}
