/* bench_rng.h — the small deterministic PRNG of the benchmarks' workload generators.
 *
 * xoshiro256** seeded through splitmix64 (both public-domain algorithms by Blackman and
 * Vigna, written out here). Integer arithmetic only and no libm, so the same seed builds the
 * same workload on every platform and compiler: a figure in docs/performance.md can be
 * reproduced from its seed. Not for anything that needs unpredictability.
 */
#ifndef PS_BENCH_BENCH_RNG_H
#define PS_BENCH_BENCH_RNG_H

#include <stdbool.h>
#include <stdint.h>

struct ps_bench_rng {
    uint64_t s[4];
};

static inline uint64_t ps_bench_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static inline void ps_bench_rng_seed(struct ps_bench_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng->s[i] = ps_bench_splitmix64(&seed);
}

static inline uint64_t ps_bench_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t ps_bench_rng_next(struct ps_bench_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = ps_bench_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ps_bench_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1), 53 random bits. */
static inline double ps_bench_rng_unit(struct ps_bench_rng *rng)
{
    return (double)(ps_bench_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n) for n > 0; rejection sampling removes the modulo bias. */
static inline uint64_t ps_bench_rng_below(struct ps_bench_rng *rng, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = ps_bench_rng_next(rng);
    while (x >= limit);
    return x % n;
}

/* Uniform in [lo, hi). */
static inline double ps_bench_rng_range(struct ps_bench_rng *rng, double lo, double hi)
{
    return lo + (hi - lo) * ps_bench_rng_unit(rng);
}

/* True with probability p. */
static inline bool ps_bench_rng_chance(struct ps_bench_rng *rng, double p)
{
    return ps_bench_rng_unit(rng) < p;
}

/* One element of a table, uniformly: PS_BENCH_PICK(rng, table). */
#define PS_BENCH_PICK(rng, table) \
    ((table)[ps_bench_rng_below((rng), sizeof(table) / sizeof((table)[0]))])

#endif
