/* test_rng.h — the xorshift64 generator (shifts 13, 7, 17) the randomised unit tests draw
 * from; a state must start non-zero. */
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

#endif
