/* lib/muldiv.c - exact a*b/c through a 128-bit product, with no libgcc helpers.
 *
 * gcc turns "unsigned __int128 / uint64_t" into a call to __udivti3, which a freestanding
 * kernel does not have; so the 128/64 division below is long division in base 2^32, where
 * each quotient digit comes from one hardware 64/64 DIV and at most two corrections. */
#include "ticklab/muldiv.h"

#define DIGIT_BITS 32
#define DIGIT_BASE (1ull << DIGIT_BITS)
#define DIGIT_MASK (DIGIT_BASE - 1)

uint64_t mul_div_u64_ceil(uint64_t a, uint64_t b, uint64_t c)
{
    if ((a | b) >> 32 == 0 && c) {
        uint64_t p = a * b;
        return p / c + (p % c != 0);
    }
    uint64_t q;
    if (!mul_div_u64_checked(a, b, c, &q))
        return UINT64_MAX;
    /* The floor is the answer only if the division was exact. */
    if ((unsigned __int128)q * c != (unsigned __int128)a * b)
        return q == UINT64_MAX ? UINT64_MAX : q + 1;
    return q;
}

uint32_t fls64(uint64_t x)
{
    /* __builtin_clzll is an instruction (BSR/LZCNT) on x86-64, not a library call; it is
     * undefined for 0, hence the test. */
    return x ? 64u - (uint32_t)__builtin_clzll(x) : 0u;
}

/* One step of the long division: the quotient digit of (top * 2^32 + next) / v, where v is
 * normalised (bit 63 set), top < v, and next < 2^32; *rem receives the remainder (< v).
 *
 * Knuth's estimate qhat = top / v_hi is never too small and at most 2 too large once v is
 * normalised. With a two-digit divisor his refinement test is exact: top * 2^32 + next -
 * qhat * v = rhat * 2^32 + next - qhat * v_lo, so "qhat * v_lo > rhat * 2^32 + next" means
 * precisely "qhat is too big". Once rhat reaches 2^32 that test can no longer hold (qhat *
 * v_lo < 2^64), which is why the loop may stop there; and qhat is below 2^32 by then (a
 * qhat of 2^32 or 2^32+1 leaves rhat < v_lo, so it is decremented first). */
static uint32_t div_digit(uint64_t top, uint64_t next, uint64_t v, uint64_t *rem)
{
    uint64_t v_hi = v >> DIGIT_BITS, v_lo = v & DIGIT_MASK;
    uint64_t qhat = top / v_hi;
    uint64_t rhat = top - qhat * v_hi;

    while (qhat >= DIGIT_BASE || qhat * v_lo > (rhat << DIGIT_BITS) + next) {
        qhat--;
        rhat += v_hi;
        if (rhat >= DIGIT_BASE)
            break;
    }
    /* The true remainder is below v < 2^64, so computing it modulo 2^64 is exact. */
    *rem = (top << DIGIT_BITS) + next - qhat * v;
    return (uint32_t)qhat;
}

/* floor((hi * 2^64 + lo) / d) for d != 0 and hi < d (so the quotient fits 64 bits). */
static uint64_t div_128_by_64(uint64_t hi, uint64_t lo, uint64_t d)
{
    /* Normalise: shift so d's top bit is set, which makes Knuth's estimate close. The
     * shifted dividend's top 64 bits stay below the shifted d because hi < d. */
    uint32_t norm = 64u - fls64(d);
    uint64_t v = d << norm;
    uint64_t top = norm ? (hi << norm) | (lo >> (64u - norm)) : hi;
    uint64_t low = lo << norm;
    uint64_t rem;

    uint64_t q_hi = div_digit(top, low >> DIGIT_BITS, v, &rem);
    uint64_t q_lo = div_digit(rem, low & DIGIT_MASK, v, &rem);
    return (q_hi << DIGIT_BITS) | q_lo;
}

/* floor((a * b + add) / c); add < 2^64 cannot overflow the 128-bit sum, because
 * a * b <= (2^64 - 1)^2 = 2^128 - 2^65 + 1. */
static bool mul_add_div(uint64_t a, uint64_t b, uint64_t add, uint64_t c, uint64_t *out)
{
    unsigned __int128 n = (unsigned __int128)a * b + add;
    uint64_t hi = (uint64_t)(n >> 64), lo = (uint64_t)n;

    if (c == 0 || hi >= c) {        /* the quotient would be >= 2^64 */
        *out = UINT64_MAX;
        return false;
    }
    /* The common case (a product under 2^64: a delay under 18 s at 1 GHz) is one hardware
     * division; programming a timer sits on this path, so it matters. */
    *out = hi ? div_128_by_64(hi, lo, c) : lo / c;
    return true;
}

bool mul_div_u64_checked(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    return mul_add_div(a, b, 0, c, out);
}

uint64_t mul_div_u64(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t q;

    mul_add_div(a, b, 0, c, &q);
    return q;
}

bool mul_div_u64_round_checked(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
    return mul_add_div(a, b, c / 2, c, out);
}

uint64_t mul_div_u64_round(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t q;

    mul_add_div(a, b, c / 2, c, &q);
    return q;
}
