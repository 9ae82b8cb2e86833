/* plf_cross.h — where the lower of two scalar segments stops being lower (the pointwise minimum's
 * crossing search; not a public API). */
#ifndef PS_CORE_PLF_CROSS_H
#define PS_CORE_PLF_CROSS_H

#include <stdbool.h>

#include "core/isa_kernels.h"
#include "core/plf_impl.h"

/* A scalar segment (l, lv) - (r, rv). */
struct ps_plf_sseg {
    double l, lv, r, rv;
};

/* The segment's value at x as upstream's segment reader computes it: the left value of a vertical
 * or flat one, else the interpolation with the plain division (no shortcuts at the ends). */
static inline double ps_plf_sseg_value(const struct ps_plf_sseg *s, double x)
{
    if (s->l == s->r)
        return s->lv;
    if (flat_values(&s->lv, &s->rv, 1))
        return s->lv;
    double t = (x - s->l) / (s->r - s->l);
    return lerp(s->lv, s->rv, t);
}

/* ps_bisect_inverse_lower_bound(x0, x1, value(lo, x) <= value(hi, x)): the same bisection over
 * the doubles' ordered bits, bit for bit. From AVX2 up the predicate is evaluated at the
 * midpoints of the next two halvings at once and then the same path is taken. */
static inline double ps_plf_crossing(const struct ps_plf_sseg *lo, const struct ps_plf_sseg *hi, double x0, double x1)
{
    return ps_kernels()->crossing(lo, hi, x0, x1);
}

#endif
