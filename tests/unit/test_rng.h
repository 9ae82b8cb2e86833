/* test_rng.h — the xorshift64 generator (shifts 13, 7, 17) the randomised unit tests draw
 * from, with the uniform double and the bounded int made of it; a state must start non-zero. */
#ifndef PS_TEST_RNG_H
#define PS_TEST_RNG_H

#include <stdint.h>

static inline uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A double in [0, 1): the top 53 bits. */
static inline double rng_uniform(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/* An int in [0, n), n > 0. */
static inline int rng_pick(uint64_t *s, int n)
{
    return (int)(rng_next(s) % (uint64_t)n);
}

#endif
