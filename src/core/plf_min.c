/* plf_min.c — the pointwise minimum of two scalar functions, with upstream's sampling points.
 *
 * Upstream walks the sorted union of both functions' arguments, takes both limits of both
 * functions at each and, between two points where the lower function changes, adds the crossing
 * found by bisection. This walk computes the same values with less work per point: at a point
 * of one function only (the usual case) that function's limits are its stored values (what the
 * interpolation at a segment's end gives, checked case by case in own_limits) and the other's is
 * one interpolation strictly inside a segment (inner_limits); the output goes through the
 * builder's rules with the last two points in registers (plf_emit.h), the crossings through
 * ps_plf_crossing (plf_cross.c). On the pools' folds of `bench fair-share` (2,200 folds replayed
 * with hot inputs): 1.25-1.3x faster than the walk it replaces (lead3 52f7de7), and 1.13x more
 * in round 2 (lead3 d7365b0 -> min2: next arguments carried across steps, a single owner point
 * without the duplicate merge, the rare crossing out of line, the SSE2 emitter), same bits
 * (tests/unit/test_plf_min.c compares them on random functions at every ISA level).
 *
 * Tried and lost (min2): the other function's values at a run of owner points computed 4 or 8
 * at a time (AVX2/AVX-512) ahead of the walk, 0.85-0.9x: the runs average 2.3 points; an owner
 * chosen by selects instead of a branch, 0.75x: the branch is predicted well enough, the selects
 * serialise the cursor updates; the crossing test as one branch, 1.0x; inner_limits' flat test
 * as one branch, 0.96x. */
#include "core/plf.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/plf_cross.h"
#include "core/plf_emit.h"
#include "core/plf_impl.h"
#include "core/plf_min.h"

/* ---- one segment ---------------------------------------------------------------------------- */

static struct ps_plf_sseg scalar_segment(const double *a, int i)
{
    struct ps_plf_sseg s = {a[2 * i], a[2 * i + 1], a[2 * i + 2], a[2 * i + 3]};
    return s;
}

/* seg_limits_d for a scalar function stored as (x, v) pairs; p points at the segment's left
 * point. */
PLF_INLINE void scalar_limits(const double *p, double x, double *left, double *right)
{
    if (p[0] == p[2]) {
        *left = p[1];
        *right = p[3];
        return;
    }
    double lv = p[1], rv = p[3];
    double v;
    if (lv == rv && !(lv == 0.0 && signbit(lv)))
        v = lv;
    else
        v = lerp(lv, rv, seg_param(x, p[0], p[2]));
    *left = *right = v;
}

/* cursor_segment_at_d for dim 1 on raw storage: a is the function, last = n - 2. */
PLF_INLINE int scalar_segment_at(const double *a, int last, int i, double x)
{
    while (i < last && a[2 * (i + 1)] < x)
        i++;
    if (i < last && a[2 * (i + 1)] == x && a[2 * (i + 2)] == x && a[2 * (i + 1) + 1] != a[2 * (i + 2) + 1])
        i++;
    return i;
}

/* ---- the minimum ---------------------------------------------------------------------------- */

/* scalar_segment_at(b) from the merge positions: the points [n0, n1) are those at b and the
 * ones before n0 lie before b (the segment cursor is never past n0 - 1), so the walk stops at
 * n0 - 1 (or the last segment), and steps onto a vertical segment when two points at b have
 * different values. */
PLF_INLINE int merged_segment(const double *a, int last, int n0, int n1)
{
    if (n1 - n0 >= 2 && a[2 * n0 + 1] != a[2 * n0 + 3])
        return n0;
    return n0 - 1 < last ? n0 - 1 : last;
}

/* Both limits at b of a function with points [n0, n1) at b (n1 > n0) on its segment seg
 * (merged_segment): the values of a vertical segment, else scalar_limits at the right end of
 * segment n0 - 1 (never vertical: its left point lies before b). There seg_param gives exactly
 * 1, so lerp takes rv - d * (1 - 1) with d = rv - lv: rv itself when d is finite (d * 0 is a
 * zero) and rv is not a zero (rv - 0 could flip a zero's sign); a flat segment's left value is
 * then rv bit for bit. Zeros and an infinite or NaN d (huge or non-finite values) take the
 * full formula. */
PLF_INLINE void own_limits(const double *a, int seg, int n0, double b, double *left, double *right)
{
    const double *p = a + 2 * seg;
    if (seg == n0) {
        *left = p[1];
        *right = p[3];
        return;
    }
    double v = p[3];
    if (v != 0.0 && fabs(v - p[1]) <= DBL_MAX) {
        *left = *right = v;
        return;
    }
    scalar_limits(p, b, left, right);
}

/* own_limits for a function with one point at b (the usual case): merged_segment is then the
 * segment ending there (n0 - 1, at most last since n0 < n), at p, never vertical. */
PLF_INLINE void single_limits(const double *p, double b, double *left, double *right)
{
    double v = p[3];
    if (v != 0.0 && fabs(v - p[1]) <= DBL_MAX) {
        *left = *right = v;
        return;
    }
    scalar_limits(p, b, left, right);
}

/* The step of the walk to b, the next argument of the function a (n points, last = n - 2) and of
 * it alone: its cursor *pn (its first point at b) moves past its points at b, *px gets the next
 * argument after them (or infinity), *ps its segment at b and *pl, *pr its limits there. */
PLF_INLINE void owner_step(const double *a, int n, int last, double b, int *pn, double *px, int *ps, double *pl,
                           double *pr)
{
    int n0 = *pn, k = n0 + 1;
    double x = k < n ? a[2 * k] : INFINITY;
    if (__builtin_expect(x > b, 1)) {
        *ps = n0 - 1;
        single_limits(a + 2 * (n0 - 1), b, pl, pr);
    } else {
        while (k < n && a[2 * k] <= b)
            k++;
        x = k < n ? a[2 * k] : INFINITY;
        *ps = merged_segment(a, last, n0, k);
        own_limits(a, *ps, n0, b, pl, pr);
    }
    *pn = k;
    *px = x;
}

/* The value at b strictly inside the non-vertical segment at p (p[0] < b < p[2]): what
 * scalar_limits gives there, without its tests for the ends. */
PLF_INLINE void inner_limits(const double *p, double b, double *v)
{
    double lv = p[1], rv = p[3];
    if (lv == rv && !(lv == 0.0 && signbit(lv)))
        *v = lv;
    else
        *v = lerp(lv, rv, (b - p[0]) / (p[2] - p[0]));
}

/* The crossing between x0 and b, where the lower function changes (rare: about one step in
 * 700 on the pools' folds), on the segments rf of f and rg of g: those after the cursors'
 * segments at x0 when they still begin before b (cursor_segment_at's step in upstream's
 * search). Out of line, so that the walk keeps its state in registers. False when the search
 * finds no point after x0. */
static __attribute__((noinline)) bool crossing(const double *fa_, const double *ga_, int rf, int rg, bool g_lower,
                                               double x0, double b, double *x, double *v)
{
    struct ps_plf_sseg segf = scalar_segment(fa_, rf), segg = scalar_segment(ga_, rg);
    double c = ps_plf_crossing(g_lower ? &segg : &segf, g_lower ? &segf : &segg, x0, b);
    if (!(c > x0))
        return false;
    double vf = ps_plf_sseg_value(&segf, c), vg = ps_plf_sseg_value(&segg, c);
    *x = c;
    *v = vg < vf ? vg : vf;
    return true;
}

void ps_plf_min_walk(struct ps_plf_buf *dst, const double *fa_, int fn, const double *ga_, int gn, int skip)
{
    const int flast = fn - 2, glast = gn - 2;
    double lo = fa_[0] > ga_[0] ? fa_[0] : ga_[0];
    double hi = fa_[2 * (fn - 1)] < ga_[2 * (gn - 1)] ? fa_[2 * (fn - 1)] : ga_[2 * (gn - 1)];
    if (lo > hi)
        return;
    int nf = 0, ng = 0; /* first points with an argument above the current critical point */
    double a = lo;
    if (skip > 0) {
        memcpy(dst->a, fa_, (size_t)skip * 2 * sizeof *fa_);
        dst->n = skip;
        a = fa_[2 * skip];
        nf = ng = skip;
    }
    while (nf < fn && fa_[2 * nf] <= a)
        nf++;
    while (ng < gn && ga_[2 * ng] <= a)
        ng++;
    int sf = scalar_segment_at(fa_, flast, skip > 0 ? skip - 1 : 0, a);
    int sg = scalar_segment_at(ga_, glast, skip > 0 ? skip - 1 : 0, a);
    double fl, fr, gl, gr;
    scalar_limits(fa_ + 2 * sf, a, &fl, &fr);
    scalar_limits(ga_ + 2 * sg, a, &gl, &gr);
    struct ps_plf_emitter e = ps_plf_emit_start(dst);
    /* The next points' arguments, kept across steps: a step moves one cursor (usually). */
    double xf = nf < fn ? fa_[2 * nf] : INFINITY, xg = ng < gn ? ga_[2 * ng] : INFINITY;
    for (;;) {
        double l = gl < fl ? gl : fl, r = gr < fr ? gr : fr;
        ps_plf_emit(&e, a, l);
        if (r != l)
            ps_plf_emit(&e, a, r);
        /* The next critical point: the smaller next argument (f's on a tie, as upstream). When
         * one function alone has points there (the usual case), its limits come from them and
         * the other's cursor stands on the segment ending at its next point (merged_segment
         * with no points at b): that point lies after b and the one before at or before the
         * previous critical point, so b is strictly inside. The other function has a next
         * point: else its last argument, at least hi, is before b and the walk has ended. */
        double b;
        int nf0 = nf, ng0 = ng;
        int sf0 = sf, sg0 = sg;
        double fa = fr, ga = gr;
        if (xf < xg) {
            b = xf;
            if (b > hi)
                break;
            owner_step(fa_, fn, flast, b, &nf, &xf, &sf, &fl, &fr);
            sg = ng0 - 1;
            inner_limits(ga_ + 2 * sg, b, &gl);
            gr = gl;
        } else if (xg < xf) {
            b = xg;
            if (b > hi)
                break;
            owner_step(ga_, gn, glast, b, &ng, &xg, &sg, &gl, &gr);
            sf = nf0 - 1;
            inner_limits(fa_ + 2 * sf, b, &fl);
            fr = fl;
        } else {
            if (!(nf < fn))
                break;
            b = xf;
            if (b > hi)
                break;
            while (nf < fn && fa_[2 * nf] <= b)
                nf++;
            while (ng < gn && ga_[2 * ng] <= b)
                ng++;
            xf = nf < fn ? fa_[2 * nf] : INFINITY;
            xg = ng < gn ? ga_[2 * ng] : INFINITY;
            sf = merged_segment(fa_, flast, nf0, nf);
            sg = merged_segment(ga_, glast, ng0, ng);
            own_limits(fa_, sf, nf0, b, &fl, &fr);
            own_limits(ga_, sg, ng0, b, &gl, &gr);
        }
        double x0 = a;
        a = b;
        /* std::minmax: g is the minimum only when strictly smaller; equal values never cross. */
        if (fa == ga)
            continue;
        bool g_lower = ga < fa;
        double lo_b = g_lower ? gl : fl, hi_b = g_lower ? fl : gl;
        if (!(lo_b > hi_b))
            continue;
        double x, v;
        if (crossing(fa_, ga_, (sf0 + 1 < nf0 && sf0 + 1 <= flast) ? sf0 + 1 : sf0,
                     (sg0 + 1 < ng0 && sg0 + 1 <= glast) ? sg0 + 1 : sg0, g_lower, x0, b, &x, &v))
            ps_plf_emit(&e, x, v);
    }
    ps_plf_emit_end(&e);
}

void ps_plf_pointwise_min(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *f,
                          const struct ps_plf *g)
{
    (void)ctx;
    ps_plf_buf_clear(dst, 1);
    ps_plf_min_walk(dst, f->a, f->n, g->a, g->n, 0);
}
