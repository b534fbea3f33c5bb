/* lib/muldiv.h - a*b/c with a 128-bit intermediate, for converting between clocks.
 *
 * Every cycle <-> nanosecond conversion outside the time core's hot path is a
 * "count * rate / other rate": 3e9 cycles * 1e9 ns overflows 64 bits long before the result
 * does. These functions form the full 128-bit product and divide it by a 64-bit divisor
 * exactly. The kernel links no libgcc, so the 128/64 division is written out here (Knuth's
 * algorithm D with 32-bit digits, on the CPU's 64/64 divide); the 64x64->128 product is a
 * single MUL that gcc emits inline for unsigned __int128.
 *
 * Limits: exact for every input. When the quotient does not fit 64 bits (or c is 0) the
 * _checked forms return false and store UINT64_MAX; the plain forms saturate to UINT64_MAX.
 * Cost: one MUL, two 64-bit DIVs and a few corrections; no loops over bits. */
#ifndef TICKLAB_LIB_MULDIV_H
#define TICKLAB_LIB_MULDIV_H
#include <stdbool.h>
#include <stdint.h>

/* floor(a * b / c). Returns false (and *out = UINT64_MAX) if c == 0 or the result is
 * 2^64 or more. */
bool mul_div_u64_checked(uint64_t a, uint64_t b, uint64_t c, uint64_t *out);
/* floor(a * b / c), saturated to UINT64_MAX on overflow or c == 0. */
uint64_t mul_div_u64(uint64_t a, uint64_t b, uint64_t c);

/* a * b / c rounded to nearest, halves rounded up: floor((a*b + floor(c/2)) / c).
 * Same failure rules as above (rounding up can itself reach 2^64). */
bool mul_div_u64_round_checked(uint64_t a, uint64_t b, uint64_t c, uint64_t *out);
uint64_t mul_div_u64_round(uint64_t a, uint64_t b, uint64_t c);

/* ceil(a * b / c): the fewest whole units that last at least a * b / c (cycles for a
 * delay that must not end early), saturated to UINT64_MAX on overflow or c == 0. When a and
 * b both fit 32 bits (every real delay and rate) it is one multiply and one division. */
uint64_t mul_div_u64_ceil(uint64_t a, uint64_t b, uint64_t c);

/* Bit length: 0 for 0, 1 for 1, 64 for anything >= 2^63 ("find last set", 1-based). */
uint32_t fls64(uint64_t x);

#endif
