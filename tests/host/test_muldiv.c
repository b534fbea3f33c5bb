/* tests/host/test_muldiv.c - lib/muldiv.c against unsigned __int128: the 128/64 division
 * behind every frequency and conversion computation, at edge values and 1e6 random triples. */
#include <stdlib.h>

#include "ticklab/muldiv.h"
#include "rng.h"
#include "test.h"

typedef unsigned __int128 u128;

#define U64_MAX UINT64_MAX
#define P32 (1ull << 32)
#define P63 (1ull << 63)

/* ---- mul_div_u64 ------------------------------------------------------------------------ */

/* Checks all four entry points for one triple against unsigned __int128 division. */
static bool check_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
    bool ok = true;
    uint64_t got;

    if (c == 0) {
        ok &= CHECK(!mul_div_u64_checked(a, b, c, &got)) && CHECK_EQ_U64(got, U64_MAX);
        ok &= CHECK(!mul_div_u64_round_checked(a, b, c, &got)) && CHECK_EQ_U64(got, U64_MAX);
        ok &= CHECK_EQ_U64(mul_div_u64(a, b, c), U64_MAX);
        return ok;
    }
    u128 floor_q = (u128)a * b / c;
    u128 round_q = ((u128)a * b + c / 2) / c;
    bool floor_fits = floor_q <= U64_MAX, round_fits = round_q <= U64_MAX;

    ok &= CHECK_EQ_U64(mul_div_u64_checked(a, b, c, &got), floor_fits);
    ok &= CHECK_EQ_U64(got, floor_fits ? (uint64_t)floor_q : U64_MAX);
    ok &= CHECK_EQ_U64(mul_div_u64(a, b, c), floor_fits ? (uint64_t)floor_q : U64_MAX);
    ok &= CHECK_EQ_U64(mul_div_u64_round_checked(a, b, c, &got), round_fits);
    ok &= CHECK_EQ_U64(got, round_fits ? (uint64_t)round_q : U64_MAX);
    ok &= CHECK_EQ_U64(mul_div_u64_round(a, b, c), round_fits ? (uint64_t)round_q : U64_MAX);
    if (!ok)
        printf("    a=%#" PRIx64 " b=%#" PRIx64 " c=%#" PRIx64 "\n", a, b, c);
    return ok;
}

static const uint64_t edge_values[] = {
    0, 1, 2, 3, 1000, 1000000000, 3579545, P32 - 1, P32, P32 + 1, 0xffffffffffull,
    P63 - 1, P63, P63 + 1, U64_MAX - 1, U64_MAX, 0x8000000080000000ull, 0xffffffff00000000ull,
};
#define N_EDGE (sizeof(edge_values) / sizeof(edge_values[0]))

TEST(muldiv_edge_values_all_combinations)
{
    for (size_t i = 0; i < N_EDGE; i++)
        for (size_t j = 0; j < N_EDGE; j++)
            for (size_t k = 0; k < N_EDGE; k++)
                if (!check_muldiv(edge_values[i], edge_values[j], edge_values[k]))
                    return;
}

TEST(muldiv_named_cases)
{
    uint64_t q;

    CHECK_EQ_U64(mul_div_u64(U64_MAX, U64_MAX, U64_MAX), U64_MAX);      /* fits exactly */
    CHECK(mul_div_u64_checked(U64_MAX, U64_MAX, U64_MAX, &q));
    CHECK(!mul_div_u64_checked(U64_MAX, U64_MAX, U64_MAX - 1, &q));     /* 2^64 + 1 */
    CHECK(!mul_div_u64_checked(P32, P32, 1, &q));                       /* exactly 2^64 */
    CHECK(mul_div_u64_checked(P32, P32 - 1, 1, &q) && q == U64_MAX - P32 + 1);
    CHECK_EQ_U64(mul_div_u64(3000000000ull, 1000000000ull, 3000000000ull), 1000000000ull);
    CHECK_EQ_U64(mul_div_u64_round(5, 1, 2), 3);                         /* halves go up */
    CHECK_EQ_U64(mul_div_u64_round(7, 1, 3), 2);
    CHECK_EQ_U64(mul_div_u64_round(8, 1, 3), 3);
    CHECK(mul_div_u64_checked(U64_MAX, 2, 2, &q) && q == U64_MAX);
    CHECK(mul_div_u64_round_checked(U64_MAX, 4, 4, &q) && q == U64_MAX);
    /* Rounding can be what overflows: a*b/c in [2^64 - 1/2, 2^64) (found by search). */
    CHECK(mul_div_u64_checked(1005, 0xfeb9f34380a3065eull, 1000, &q) && q == U64_MAX);
    CHECK(!mul_div_u64_round_checked(1005, 0xfeb9f34380a3065eull, 1000, &q));
    CHECK(!mul_div_u64_round_checked(1000000002, 0xfffffff768fa0c36ull, 1000000000, &q));
    CHECK(!mul_div_u64_round_checked(P63 + 2, U64_MAX - 1, P63 + 1, &q));
}

/* The second quotient digit's estimate needs both corrections when the divisor's low digit
 * is large and the high digit is at its normalised minimum: aim many cases there. */
TEST(muldiv_knuth_correction_paths)
{
    rng_seed(0x6b6e757468ull);
    for (int i = 0; i < 100000; i++) {
        uint64_t c = (P63 | (rng() & 0xffffffffull)) >> (rng() % 40);
        uint64_t a = rng(), b = rng();
        if (c == 0)
            c = 1;
        /* a*b reduced below c * 2^64 half of the time, so the quotient fits */
        if (rng() & 1)
            b = (uint64_t)(((u128)c << 64) / ((u128)a + 1) & U64_MAX);
        if (!check_muldiv(a, b, c))
            return;
    }
}

TEST(muldiv_one_million_random_triples)
{
    rng_seed(0x7469636b6c6162ull);   /* "ticklab" */
    for (int i = 0; i < 1000000; i++)
        if (!check_muldiv(rng_bits(), rng_bits(), rng_bits()))
            return;
}

TEST(muldiv_fls64)
{
    CHECK_EQ_U64(fls64(0), 0);
    CHECK_EQ_U64(fls64(U64_MAX), 64);
    for (unsigned k = 0; k < 64; k++) {
        CHECK_EQ_U64(fls64(1ull << k), k + 1);
        CHECK_EQ_U64(fls64((1ull << k) - 1), k);
        CHECK_EQ_U64(fls64((1ull << k) | 1), k + 1);
    }
}


/* ceil(a * b / c), against the 128-bit reference, on both of its paths (a and b under 2^32:
 * one multiply; otherwise the full division), exact quotients included, saturated. */
static bool check_ceil(uint64_t a, uint64_t b, uint64_t c)
{
    unsigned __int128 p = (unsigned __int128)a * b;
    unsigned __int128 want = c ? p / c + (p % c != 0) : (unsigned __int128)UINT64_MAX + 1;
    uint64_t w = want > UINT64_MAX ? UINT64_MAX : (uint64_t)want;
    uint64_t got = mul_div_u64_ceil(a, b, c);
    if (got == w)
        return true;
    return test_fail(__FILE__, __LINE__, "ceil(%llu * %llu / %llu) = %llu, want %llu",
                     (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
                     (unsigned long long)got, (unsigned long long)w);
}

TEST(muldiv_ceil_both_paths_exact_and_saturated)
{
    CHECK_EQ_U64(mul_div_u64_ceil(1000000, 1193182, 1000000000), 1194);  /* 1 ms of PIT */
    CHECK_EQ_U64(mul_div_u64_ceil(1000000, 1000000000, 1000000000), 1000000);   /* exact */
    CHECK_EQ_U64(mul_div_u64_ceil(1, 1, 0), UINT64_MAX);
    CHECK_EQ_U64(mul_div_u64_ceil(UINT64_MAX, 2, 1), UINT64_MAX);
    CHECK_EQ_U64(mul_div_u64_ceil(UINT64_MAX, 1, 1), UINT64_MAX);
    rng_seed(0x6365696cull);
    for (int i = 0; i < 200000; i++) {
        uint64_t a = rng_bits(), b = rng_bits(), c = rng_bits();
        if (!check_ceil(a, b, c) || !check_ceil(a & 0xffffffffu, b & 0xffffffffu, c) ||
            !check_ceil(a, b, c ? c : 1))
            return;
    }
}
