/* plf_impl.h — inline internals shared by plf.c and plf_ops.c (not a public API). */
#ifndef PS_CORE_PLF_IMPL_H
#define PS_CORE_PLF_IMPL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/plf.h"

#define PLF_INLINE static inline __attribute__((always_inline))

/* Every helper takes the dimension as an argument so that the hot loops, called with a literal
 * 1 or 5, are specialised by the compiler. */

PLF_INLINE bool values_equal(const double *a, const double *b, int dim)
{
    for (int r = 0; r < dim; r++)
        if (a[r] != b[r])
            return false;
    return true;
}

PLF_INLINE double XD(const struct ps_plf *f, int dim, int i)
{
    return f->a[(size_t)i * (size_t)(dim + 1)];
}

PLF_INLINE const double *VD(const struct ps_plf *f, int dim, int i)
{
    return f->a + (size_t)i * (size_t)(dim + 1) + 1;
}

static inline double X(const struct ps_plf *f, int i)
{
    return XD(f, f->dim, i);
}

static inline const double *V(const struct ps_plf *f, int i)
{
    return VD(f, f->dim, i);
}

PLF_INLINE bool seg_vertical_d(const struct ps_plf *f, int dim, int i)
{
    return XD(f, dim, i) == XD(f, dim, i + 1) && !values_equal(VD(f, dim, i), VD(f, dim, i + 1), dim);
}

static inline bool seg_vertical(const struct ps_plf *f, int i)
{
    return seg_vertical_d(f, f->dim, i);
}

/* Both forms are computed and one is selected: the same operations on the same operands (so the
 * same bits), but no branch on t, which is as good as random at the points sampled here. */
PLF_INLINE double lerp(double lv, double rv, double t)
{
    double d = rv - lv;
    double from_left = lv + d * t;
    double from_right = rv - d * (1 - t);
#if defined(__SSE2__)
    __m128d mask = _mm_cmplt_sd(_mm_set_sd(t), _mm_set_sd(0.5));
    __m128d pick = _mm_or_pd(_mm_and_pd(mask, _mm_set_sd(from_left)), _mm_andnot_pd(mask, _mm_set_sd(from_right)));
    return _mm_cvtsd_f64(pick);
#else
    return t < 0.5 ? from_left : from_right;
#endif
}

PLF_INLINE void copy_values(double *dst, const double *src, int dim)
{
    for (int k = 0; k < dim; k++)
        dst[k] = src[k];
}

/* True when interpolation between lv and rv gives lv for every t, so the division can be
 * skipped: equal values, but not a negative zero (the formula turns -0 + 0 into +0). */
PLF_INLINE bool flat_values(const double *lv, const double *rv, int dim)
{
    for (int k = 0; k < dim; k++)
        if (lv[k] != rv[k] || (lv[k] == 0.0 && signbit(lv[k])))
            return false;
    return true;
}

/* Interpolation parameter of x in a non-vertical segment [l, r]. The division gives exactly 1
 * at x == r and +0 at x == l (the domains are finite, so r - l is a finite positive number):
 * those cases, common at critical points, skip it with the same bits. */
PLF_INLINE double seg_param(double x, double l, double r)
{
    if (x == r)
        return 1.0;
    if (x == l)
        return 0.0;
    return (x - l) / (r - l);
}

/* out[k] = lerp(lv[k], rv[k], t) for every component. Share vectors (five components, in the
 * loops specialised for them) go two components at a time: packed SSE2 operations round like scalar ones, and the choice t < 0.5
 * is the same for every component, so the bits are those of lerp per component. */
PLF_INLINE void lerp_values(double *out, const double *lv, const double *rv, double t, int dim)
{
#if defined(__SSE2__)
    if (__builtin_constant_p(dim) && dim == 5) {
        __m128d tt = _mm_set1_pd(t), omt = _mm_set1_pd(1 - t);
        __m128d mask = _mm_cmplt_pd(tt, _mm_set1_pd(0.5));
        for (int k = 0; k < 4; k += 2) {
            __m128d a = _mm_loadu_pd(lv + k), b = _mm_loadu_pd(rv + k);
            __m128d d = _mm_sub_pd(b, a);
            __m128d from_left = _mm_add_pd(a, _mm_mul_pd(d, tt));
            __m128d from_right = _mm_sub_pd(b, _mm_mul_pd(d, omt));
            _mm_storeu_pd(out + k, _mm_or_pd(_mm_and_pd(mask, from_left), _mm_andnot_pd(mask, from_right)));
        }
        out[4] = lerp(lv[4], rv[4], t);
        return;
    }
#endif
    for (int k = 0; k < dim; k++)
        out[k] = lerp(lv[k], rv[k], t);
}

/* Interpolation inside segment i (which must not be vertical). */
PLF_INLINE void seg_interp_d(const struct ps_plf *f, int dim, int i, double x, double *out)
{
    const double *lv = VD(f, dim, i), *rv = VD(f, dim, i + 1);
    if (flat_values(lv, rv, dim)) {
        copy_values(out, lv, dim);
        return;
    }
    double l = XD(f, dim, i), r = XD(f, dim, i + 1);
    lerp_values(out, lv, rv, seg_param(x, l, r), dim);
}

PLF_INLINE void seg_left_limit_d(const struct ps_plf *f, int dim, int i, double x, double *out)
{
    if (XD(f, dim, i) == XD(f, dim, i + 1))
        copy_values(out, VD(f, dim, i), dim);
    else
        seg_interp_d(f, dim, i, x, out);
}

PLF_INLINE void seg_right_limit_d(const struct ps_plf *f, int dim, int i, double x, double *out)
{
    if (XD(f, dim, i) == XD(f, dim, i + 1))
        copy_values(out, VD(f, dim, i + 1), dim);
    else
        seg_interp_d(f, dim, i, x, out);
}

/* Left and right limits inside segment i; returns whether they differ (a vertical segment). */
PLF_INLINE bool seg_limits_d(const struct ps_plf *f, int dim, int i, double x, double *left, double *right)
{
    if (XD(f, dim, i) == XD(f, dim, i + 1)) {
        copy_values(left, VD(f, dim, i), dim);
        copy_values(right, VD(f, dim, i + 1), dim);
        return true;
    }
    seg_interp_d(f, dim, i, x, left);
    copy_values(right, left, dim);
    return false;
}

static inline void seg_interp(const struct ps_plf *f, int i, double x, double *out)
{
    seg_interp_d(f, f->dim, i, x, out);
}

static inline void seg_left_limit(const struct ps_plf *f, int i, double x, double *out)
{
    seg_left_limit_d(f, f->dim, i, x, out);
}

static inline void seg_right_limit(const struct ps_plf *f, int i, double x, double *out)
{
    seg_right_limit_d(f, f->dim, i, x, out);
}

static inline void seg_limits(const struct ps_plf *f, int i, double x, double *left, double *right)
{
    seg_limits_d(f, f->dim, i, x, left, right);
}

/* Upstream's traverser SegmentAt: amortised O(1) for increasing x. */
PLF_INLINE int cursor_segment_at_d(const struct ps_plf *f, int dim, struct ps_plf_cursor *c, double x)
{
    int last = f->n - 2;
    int i = c->seg;
    while (i < last && XD(f, dim, i + 1) < x)
        i++;
    if (i < last && XD(f, dim, i + 1) == x && seg_vertical_d(f, dim, i + 1))
        i++;
    c->seg = i;
    return i;
}

static inline int cursor_segment_at(const struct ps_plf *f, struct ps_plf_cursor *c, double x)
{
    return cursor_segment_at_d(f, f->dim, c, x);
}

PLF_INLINE double *bpt_d(struct ps_plf_buf *b, int dim, int i)
{
    return b->a + (size_t)i * (size_t)(dim + 1);
}

PLF_INLINE void push_raw_d(struct ps_plf_buf *b, int dim, double x, const double *v)
{
    if (b->n >= b->cap && !ps_plf_buf_reserve(b, b->n + 1))
        return;
    double *p = bpt_d(b, dim, b->n);
    p[0] = x;
    for (int k = 0; k < dim; k++)
        p[1 + k] = v[k];
    b->n++;
}

/* Appends the segment from the last point to (x, v), merging like upstream's PushSegmentImpl:
 * a new point segment is dropped, a point segment at the end is replaced, and two vertical or
 * two horizontal segments in a row become one. Requires b->n >= 1. */
PLF_INLINE void append_d(struct ps_plf_buf *b, int dim, double x, const double *v)
{
    if (b->n == 1) {
        push_raw_d(b, dim, x, v);
        return;
    }
    double *l = bpt_d(b, dim, b->n - 2);
    double *m = bpt_d(b, dim, b->n - 1);
    bool right_vertical_x = m[0] == x;
    bool right_flat = values_equal(m + 1, v, dim);
    if (right_vertical_x && right_flat)
        return;
    bool left_vertical_x = l[0] == m[0];
    bool left_flat = values_equal(l + 1, m + 1, dim);
    /* A point on the left, two verticals, or two horizontals: the last point moves. */
    if ((left_vertical_x && left_flat) || (left_vertical_x && right_vertical_x) ||
        (!left_vertical_x && left_flat && !right_vertical_x && right_flat)) {
        m[0] = x;
        for (int k = 0; k < dim; k++)
            m[1 + k] = v[k];
        return;
    }
    push_raw_d(b, dim, x, v);
}

/* AddPoint and PushSegment of upstream's builder, specialised by dimension. */
PLF_INLINE void buf_add_point_d(struct ps_plf_buf *b, int dim, double x, const double *v)
{
    if (b->n == 0)
        push_raw_d(b, dim, x, v);
    else
        append_d(b, dim, x, v);
}

PLF_INLINE void buf_push_segment_d(struct ps_plf_buf *b, int dim, double x0, const double *v0, double x1,
                                   const double *v1)
{
    if (b->n == 0)
        push_raw_d(b, dim, x0, v0);
    append_d(b, dim, x1, v1);
}

#endif
