/* tests/host/rng.h - the tests' fixed-seed random numbers (xorshift64*), shared so that
 * every run of every test sees the same sequence. Header-only: each test file gets its own
 * state. */
#ifndef TICKLAB_TESTS_HOST_RNG_H
#define TICKLAB_TESTS_HOST_RNG_H
#include <stdint.h>

/* xorshift64*: a fixed seed makes every run test the same numbers. */
static uint64_t rng_state __attribute__((unused));

static inline void rng_seed(uint64_t seed)
{
    rng_state = seed;
}

static inline uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* A random value of random bit length (0..64 bits), so small, large and near-overflow
 * operands all come up often. */
static inline uint64_t rng_bits(void)
{
    unsigned bits = (unsigned)(rng() % 65);

    return bits == 0 ? 0 : rng() >> (64 - bits);
}


#endif
