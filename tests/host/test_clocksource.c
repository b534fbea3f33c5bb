/* tests/host/test_clocksource.c - lib/time/clocksource.c against 128-bit references:
 * mult/shift over each counter's whole valid range. The time core on fake counters is in
 * test_timekeeping.c; lib/muldiv.c in test_muldiv.c. */
#include <stdlib.h>

#include "ticklab/clocksource.h"
#include "ticklab/errno.h"
#include "ticklab/muldiv.h"
#include "rng.h"
#include "test.h"

typedef unsigned __int128 u128;

#define U64_MAX UINT64_MAX
#define P32 (1ull << 32)
#define P63 (1ull << 63)

/* ---- clocks_calc_mult_shift ------------------------------------------------------------- */

static const uint64_t test_freqs[] = {
    32768, 1193182, 3579545, 14318180, 100000000, 1000000000, 2100000000, 3999999000,
    5000000000ull,
};
#define N_FREQS (sizeof(test_freqs) / sizeof(test_freqs[0]))

static u128 exact_ns(uint64_t cyc, uint64_t freq_hz)
{
    return (u128)cyc * NSEC_PER_SEC / freq_hz;
}

/* floor(ns * f / 1e9): the cycles whose exact duration is at most ns. */
static uint64_t cycles_within(uint64_t ns, uint64_t freq_hz)
{
    u128 c = (u128)ns * freq_hz / NSEC_PER_SEC;

    return c > U64_MAX ? U64_MAX : (uint64_t)c;
}

/* One conversion, checked: no 64-bit overflow and within 1 ns of exact. */
static bool check_point(uint64_t f, uint32_t mult, uint32_t shift, uint64_t cyc)
{
    u128 prod = (u128)cyc * mult;
    u128 got = prod >> shift, want = exact_ns(cyc, f);
    u128 err = got > want ? got - want : want - got;

    if (CHECK(prod <= U64_MAX) && CHECK(err <= 1))
        return true;
    printf("    f=%" PRIu64 " mult=%u shift=%u cyc=%" PRIu64 " err=%" PRIu64 "\n", f, mult,
           shift, cyc, (uint64_t)err);
    return false;
}

/* The test's own statement of the valid range for (f, shift), from the derivation, in
 * 128-bit arithmetic: 0 if mult is not in 1..2^32-1, else the longest range in ns. */
static uint64_t ref_range_ns(uint64_t f, uint32_t shift, uint32_t *mult_out)
{
    u128 ideal = (u128)NSEC_PER_SEC << shift;
    u128 m = (ideal + f / 2) / f;

    if (m == 0 || m > UINT32_MAX)
        return 0;
    u128 scaled = m * f;
    u128 d = scaled > ideal ? scaled - ideal : ideal - scaled;
    u128 err_cyc = d ? ((u128)f << shift) / d : (u128)U64_MAX;
    u128 ovf_cyc = U64_MAX / m;
    u128 cyc = err_cyc < ovf_cyc ? err_cyc : ovf_cyc;
    u128 ns = cyc * NSEC_PER_SEC / f;

    *mult_out = (uint32_t)m;
    return ns > U64_MAX ? U64_MAX : (uint64_t)ns;
}

/* Every property the header promises, for one request. */
static void check_calc(uint64_t f, uint64_t want)
{
    uint32_t mult = 0, shift = 0, ref_mult;
    uint64_t max_ns = 0;

    if (!CHECK_EQ_I64(clocks_calc_mult_shift(f, want, &mult, &shift, &max_ns), 0))
        return;
    CHECK(mult >= 1);
    CHECK(shift <= 63);
    CHECK(max_ns >= 1 && max_ns <= want);

    /* The choice: what the test's own arithmetic says about every shift. */
    uint64_t range = ref_range_ns(f, shift, &ref_mult);
    CHECK_EQ_U64(ref_mult, mult);
    CHECK(range >= max_ns);
    if (max_ns == want) {
        for (uint32_t s = shift + 1; s < 64; s++)           /* no larger shift reaches it */
            CHECK(ref_range_ns(f, s, &ref_mult) < want);
    } else {
        for (uint32_t s = 0; s < 64; s++)                   /* nothing reaches further */
            CHECK(ref_range_ns(f, s, &ref_mult) <= max_ns);
        CHECK_EQ_U64(range, max_ns);
    }

    /* Conversions over the whole range. */
    uint64_t max_cyc = cycles_within(max_ns, f);
    uint64_t points[] = { 0, 1, 2, 3, max_cyc / 2, max_cyc - 1, max_cyc, f - 1, f, f + 1 };
    for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
        if (points[i] <= max_cyc && !check_point(f, mult, shift, points[i]))
            return;
    for (unsigned k = 0; k < 64 && (1ull << k) <= max_cyc; k++)
        if (!check_point(f, mult, shift, 1ull << k) ||
            !check_point(f, mult, shift, (1ull << k) - 1))
            return;
    for (int i = 0; i < 20000; i++)
        if (!check_point(f, mult, shift, max_cyc == U64_MAX ? rng() : rng() % (max_cyc + 1)))
            return;
    for (int i = 0; i < 2000; i++)                          /* the top of the range */
        if (!check_point(f, mult, shift, max_cyc - (rng() % (max_cyc < 1000000 ? max_cyc + 1
                                                                             : 1000000))))
            return;

    /* The first overflowing delta lies beyond the stated range. */
    u128 first_overflow = (u128)U64_MAX / mult + 1;
    CHECK(first_overflow > max_cyc);
}

TEST(calc_mult_shift_test_frequencies_longest_range)
{
    rng_seed(1);
    for (size_t i = 0; i < N_FREQS; i++)
        check_calc(test_freqs[i], U64_MAX);
}

TEST(calc_mult_shift_test_frequencies_common_requests)
{
    static const uint64_t wants[] = { 1, 1000, 1000000, 100000000, NSEC_PER_SEC,
                                      4686902000ull, 600 * NSEC_PER_SEC };

    rng_seed(2);
    for (size_t i = 0; i < N_FREQS; i++)
        for (size_t j = 0; j < sizeof(wants) / sizeof(wants[0]); j++)
            check_calc(test_freqs[i], wants[j]);
}

TEST(calc_mult_shift_random_frequencies)
{
    rng_seed(3);
    for (int i = 0; i < 300; i++) {
        uint64_t f = 1 + rng() % CLOCKSOURCE_MAX_FREQ_HZ;
        check_calc(f >> (rng() % 40) | 1, 1 + (rng() >> (rng() % 64)));
    }
}

/* The longest range per test frequency, pinned: if the search or the bound changes, these
 * move and the report's figures with them. The shape: with a 32-bit mult the rate is
 * resolved to about 2^-33 at worst, so an inexact frequency keeps the 1-ns bound for a few
 * seconds (2^32 ns at worst), more when rounding is kind; exact ratios (32768 Hz, 100 MHz,
 * 1 GHz) are limited by overflow only. */
TEST(calc_mult_shift_ranges_are_what_we_report)
{
    static const struct {
        uint64_t freq_hz;
        uint32_t mult, shift;
        uint64_t max_ns;
    } pinned[] = {
        { 32768ull, 1953125u, 6, 288230376151702880ull },
        { 1193182ull, 3515225674u, 22, 27118110229ull },
        { 3579545ull, 2343484437u, 23, 8748750190ull },
        { 14318180ull, 2343484437u, 25, 8748750260ull },
        { 100000000ull, 10u, 0, 18446744073709551610ull },
        { 1000000000ull, 1u, 0, 18446744073709551615ull },
        { 2100000000ull, 1022611261u, 31, 8589934591ull },
        { 3999999000ull, 1073742092u, 32, 2465407852ull },
        { 5000000000ull, 858993459u, 32, 4294967296ull },
    };

    for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++) {
        uint32_t mult, shift;
        uint64_t max_ns;

        REQUIRE(clocks_calc_mult_shift(pinned[i].freq_hz, U64_MAX, &mult, &shift,
                                       &max_ns) == 0);
        CHECK_EQ_U64(mult, pinned[i].mult);
        CHECK_EQ_U64(shift, pinned[i].shift);
        CHECK_EQ_U64(max_ns, pinned[i].max_ns);
        CHECK(max_ns >= 2 * NSEC_PER_SEC);
    }
}

TEST(calc_mult_shift_boundary_inputs)
{
    uint32_t mult = 0xabababab, shift = 0xcdcdcdcd;
    uint64_t max_ns = 0xefefefef;

    CHECK_EQ_I64(clocks_calc_mult_shift(0, NSEC_PER_SEC, &mult, &shift, &max_ns), -EINVAL);
    CHECK_EQ_I64(clocks_calc_mult_shift(1000, 0, &mult, &shift, &max_ns), -EINVAL);
    CHECK_EQ_I64(clocks_calc_mult_shift(CLOCKSOURCE_MAX_FREQ_HZ + 1, 1, &mult, &shift,
                                        &max_ns), -EINVAL);
    CHECK_EQ_I64(clocks_calc_mult_shift(P63, 1, &mult, &shift, &max_ns), -EINVAL);
    CHECK_EQ_I64(clocks_calc_mult_shift(U64_MAX, 1, &mult, &shift, &max_ns), -EINVAL);
    /* untouched on error */
    CHECK_EQ_U64(mult, 0xabababab);
    CHECK_EQ_U64(shift, 0xcdcdcdcd);
    CHECK_EQ_U64(max_ns, 0xefefefef);

    /* Extremes that must work, both as frequency and as requested range. */
    static const uint64_t freqs[] = { 1, 2, 3, P32 - 1, P32, P32 + 1, CLOCKSOURCE_MAX_FREQ_HZ,
                                      CLOCKSOURCE_MAX_FREQ_HZ - 1 };
    static const uint64_t wants[] = { 1, 2, P32 - 1, P32, P63, U64_MAX };
    rng_seed(4);
    for (size_t i = 0; i < sizeof(freqs) / sizeof(freqs[0]); i++)
        for (size_t j = 0; j < sizeof(wants) / sizeof(wants[0]); j++)
            check_calc(freqs[i], wants[j]);

    /* 1 Hz: every mult 1e9 << s is exact, so the largest shift that fits wins a request it
     * can meet, and the smallest mult the longest range. */
    REQUIRE(clocks_calc_mult_shift(1, NSEC_PER_SEC, &mult, &shift, &max_ns) == 0);
    CHECK_EQ_U64(mult, 4000000000u);
    CHECK_EQ_U64(shift, 2);
    CHECK_EQ_U64(max_ns, NSEC_PER_SEC);
    REQUIRE(clocks_calc_mult_shift(1, U64_MAX, &mult, &shift, &max_ns) == 0);
    CHECK_EQ_U64(mult, 1000000000u);
    CHECK_EQ_U64(shift, 0);
    CHECK_EQ_U64(max_ns, U64_MAX / NSEC_PER_SEC * NSEC_PER_SEC);
    /* 1 GHz: the identity, exact everywhere. */
    REQUIRE(clocks_calc_mult_shift(NSEC_PER_SEC, NSEC_PER_SEC, &mult, &shift, &max_ns) == 0);
    CHECK_EQ_U64((u128)mult, (u128)1 << shift);
}
