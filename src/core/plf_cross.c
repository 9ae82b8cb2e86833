/* plf_cross.c — the crossing search of the pointwise minimum.
 *
 * Bisection over ordered bits takes up to 64 halvings, each waiting on two divisions and a
 * branch that goes either way. The halvings' midpoints only depend on the predicate's earlier
 * answers, so the wide form computes the three midpoints the next two halvings could visit,
 * evaluates the predicate at all of them in one 4-lane pass (every lane performs
 * ps_plf_sseg_value's operations on its argument, so each answer is the scalar one) and then
 * takes the same two halvings with selects. A step needs b - a >= 4, so that both halvings
 * happen (each leaves at least half the interval, rounded down); the last ones run one at a
 * time. Measured per call on random segment pairs: base ~3000-4500 TSC ticks, this ~1300-2700;
 * three halvings per step (7 midpoints, one 8-lane or two 4-lane passes) were no faster (zmm
 * divisions are slow on this CPU), so AVX-512 takes this form too. */
#include "core/plf_cross.h"

#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "core/bisect.h"

struct pair {
    const struct ps_plf_sseg *lo, *hi;
};

static bool below_or_equal(double x, void *arg)
{
    const struct pair *c = arg;
    return ps_plf_sseg_value(c->lo, x) <= ps_plf_sseg_value(c->hi, x);
}

/* ps_ordered_bits_to_double, inline. */
static inline double from_ordered_bits(uint64_t bits)
{
    uint64_t sign = (uint64_t)1 << 63;
    uint64_t raw = (bits & sign) ? (bits & ~sign) : ~bits;
    double value;
    memcpy(&value, &raw, sizeof value);
    return value;
}

/* The midpoints of a binary tree of halvings of (a, b): node 1 halves (a, b), node 2k the part
 * below node k's midpoint (the predicate failed there), node 2k + 1 the part above. */
static inline void midpoints(uint64_t a, uint64_t b, int nodes, double *xs, uint64_t *mid)
{
    uint64_t lo[8], hi[8];
    lo[1] = a;
    hi[1] = b;
    for (int k = 1; k <= nodes; k++) {
        mid[k] = lo[k] + ((hi[k] - lo[k]) >> 1);
        xs[k - 1] = from_ordered_bits(mid[k]);
        if (2 * k + 1 <= nodes) {
            lo[2 * k] = lo[k];
            hi[2 * k] = mid[k];
            lo[2 * k + 1] = mid[k];
            hi[2 * k + 1] = hi[k];
        }
    }
}

/* The halvings from node 1 down `levels` levels, with the predicate's answers (bit k - 1 for
 * node k); selects rather than branches, which would be as good as random. */
static inline void descend(uint64_t *a, uint64_t *b, const uint64_t *mid, unsigned answers, int levels)
{
    unsigned node = 1;
    uint64_t na = *a, nb = *b;
    for (int l = 0; l < levels; l++) {
        unsigned bit = (answers >> (node - 1)) & 1u;
        uint64_t m = mid[node], keep = (uint64_t)0 - (uint64_t)bit;
        na = (m & keep) | (na & ~keep);
        nb = (nb & keep) | (m & ~keep);
        node = 2 * node + bit;
    }
    *a = na;
    *b = nb;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* ps_plf_sseg_value at four (eight) arguments: the segment's case is the same for every lane. */
__attribute__((target("avx2"))) static inline __m256d value4(const struct ps_plf_sseg *s, __m256d x)
{
    if (s->l == s->r || flat_values(&s->lv, &s->rv, 1))
        return _mm256_set1_pd(s->lv);
    __m256d t = _mm256_div_pd(_mm256_sub_pd(x, _mm256_set1_pd(s->l)), _mm256_set1_pd(s->r - s->l));
    __m256d lv = _mm256_set1_pd(s->lv), rv = _mm256_set1_pd(s->rv), d = _mm256_set1_pd(s->rv - s->lv);
    __m256d from_left = _mm256_add_pd(lv, _mm256_mul_pd(d, t));
    __m256d from_right = _mm256_sub_pd(rv, _mm256_mul_pd(d, _mm256_sub_pd(_mm256_set1_pd(1.0), t)));
    return _mm256_blendv_pd(from_right, from_left, _mm256_cmp_pd(t, _mm256_set1_pd(0.5), _CMP_LT_OQ));
}

__attribute__((target("avx2"))) static void halve_avx2(const struct pair *c, uint64_t *a, uint64_t *b)
{
    while (*b - *a >= 4) {
        double xs[4];
        uint64_t mid[4];
        midpoints(*a, *b, 3, xs, mid);
        xs[3] = xs[0];
        __m256d x = _mm256_loadu_pd(xs);
        /* <= is false on NaN, as _CMP_LE_OQ. */
        __m256d le = _mm256_cmp_pd(value4(c->lo, x), value4(c->hi, x), _CMP_LE_OQ);
        descend(a, b, mid, (unsigned)_mm256_movemask_pd(le), 2);
    }
}

/* ps_bisect_inverse_lower_bound's steps, with the wide halvings in its loop. */
double ps_plf_crossing_avx2(const struct ps_plf_sseg *lo, const struct ps_plf_sseg *hi, double x0, double x1)
{
    struct pair c = {lo, hi};
    if (x0 == x1)
        return x0;
    uint64_t a = ps_double_to_ordered_bits(x0), b = ps_double_to_ordered_bits(x1);
    if (below_or_equal(x1, &c))
        return x1;
    halve_avx2(&c, &a, &b);
    while (a + 1 < b) {
        uint64_t mid = a + ((b - a) >> 1);
        if (below_or_equal(ps_ordered_bits_to_double(mid), &c))
            a = mid;
        else
            b = mid;
    }
    return ps_ordered_bits_to_double(a);
}

#endif

double ps_plf_crossing_base(const struct ps_plf_sseg *lo, const struct ps_plf_sseg *hi, double x0, double x1)
{
    struct pair c = {lo, hi};
    return ps_bisect_inverse_lower_bound(x0, x1, below_or_equal, &c);
}
