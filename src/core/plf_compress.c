/* plf_compress.c — upstream's compression of piecewise-linear functions: runs of segments that
 * stay within epsilon of a straight line in every component become one segment.
 *
 * The walk keeps, per component, the steepest lower and the flattest upper bound direction
 * from the run's start and stops the run where the joined segment leaves them. Share vectors
 * (five components) take most of the time of the fair share update's compression, so they have
 * a branch-free SSE2 path doing the same operations two components at a time (packed SSE2
 * operations round like scalar ones, so the bits are the same). */
#include "core/plf.h"

#include <stdbool.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/isa_kernels.h"
#include "core/plf_impl.h"
#include "core/plf_vec512.h"

/* Sign of the cross product of the direction vectors (db, dv) of two segments. */
PLF_INLINE int cross_sign(double adb, double adv, double bdb, double bdv)
{
    double cross = adb * bdv - bdb * adv;
    return cross > 0 ? 1 : (cross < 0 ? -1 : 0);
}

/* Upper and lower bound directions of one resource: the segments from the accumulated start to
 * an end lifted or lowered by epsilon, as (width, rise). */
struct bound {
    double top_db, top_dv, bottom_db, bottom_dv;
};

PLF_INLINE void compress_run(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon, int dim)
{
    int nseg = src->n - 1;
    /* A component that is constant over the whole function never stops a merge: its joined
     * segments are horizontal and lie strictly between bounds of slopes +-eps / width. Only
     * the others are checked (in order, as upstream stops at the first blocking one). */
    int active[PS_PLF_MAX_DIM], nactive = 0;
    for (int r = 0; r < dim; r++) {
        bool constant = epsilon > 0;
        for (int i = 1; i < src->n && constant; i++)
            constant = VD(src, dim, i)[r] == VD(src, dim, 0)[r];
        if (!constant)
            active[nactive++] = r;
    }
    struct bound b[PS_PLF_MAX_DIM];
    int start = 0, end = 1;
    for (int q = 0; q < nactive; q++) {
        int r = active[q];
        double db = XD(src, dim, 1) - XD(src, dim, 0);
        double lv = VD(src, dim, 0)[r], rv = VD(src, dim, 1)[r];
        b[r].top_db = b[r].bottom_db = db;
        b[r].top_dv = (rv + epsilon) - lv;
        b[r].bottom_dv = (rv - epsilon) - lv;
    }
    for (int i = 1; i < nseg; i++) {
        bool extend = true;
        double x0 = XD(src, dim, start), x1 = XD(src, dim, i + 1);
        double db = x1 - x0;
        for (int q = 0; q < nactive; q++) {
            int r = active[q];
            double lv = VD(src, dim, start)[r], rv = VD(src, dim, i + 1)[r];
            double dv = rv - lv;
            double top_dv = (rv + epsilon) - lv, bottom_dv = (rv - epsilon) - lv;
            if (cross_sign(db, top_dv, b[r].top_db, b[r].top_dv) > 0) {
                b[r].top_db = db;
                b[r].top_dv = top_dv;
            }
            if (cross_sign(db, bottom_dv, b[r].bottom_db, b[r].bottom_dv) < 0) {
                b[r].bottom_db = db;
                b[r].bottom_dv = bottom_dv;
            }
            if (cross_sign(b[r].bottom_db, b[r].bottom_dv, db, dv) <= 0 ||
                cross_sign(b[r].top_db, b[r].top_dv, db, dv) >= 0) {
                extend = false;
                break;
            }
        }
        if (extend) {
            end = i + 1;
            continue;
        }
        buf_push_segment_d(dst, dim, XD(src, dim, start), VD(src, dim, start), XD(src, dim, end),
                           VD(src, dim, end));
        start = i;
        end = i + 1;
        double sdb = XD(src, dim, i + 1) - XD(src, dim, i);
        for (int q = 0; q < nactive; q++) {
            int r = active[q];
            double lv = VD(src, dim, i)[r], rv = VD(src, dim, i + 1)[r];
            b[r].top_db = b[r].bottom_db = sdb;
            b[r].top_dv = (rv + epsilon) - lv;
            b[r].bottom_dv = (rv - epsilon) - lv;
        }
    }
    buf_push_segment_d(dst, dim, XD(src, dim, start), VD(src, dim, start), XD(src, dim, end), VD(src, dim, end));
}

#if defined(__SSE2__)
/* compress_run for share vectors. Pairs of adjacent components are the lanes of up to three
 * registers (struct share_lanes). Every lane computes the same cross products as compress_run, as
 * differences of the same products, and tests them the same way (an unordered compare is
 * false, like cross_sign's zero for NaN). A run stops when any active lane blocks: the scalar
 * loop stops at the first one and skips the bound updates of the ones after it, but a stop
 * resets every bound, so those updates are never read. Inactive lanes are computed but never
 * block, as compress_run never checks them. */
struct share_bounds {
    __m128d top_db[3], top_dv[3], bottom_db[3], bottom_dv[3];
};

/* The lanes: ng groups of two components from off[k] (a lone last component with a zero
 * pad), covering the active components; most share vectors have one constant component, so
 * two groups often do. */
struct share_lanes {
    int off[3];
};

PLF_INLINE void load_lanes(const double *p, const struct share_lanes *l, int ng, __m128d v[3])
{
    for (int k = 0; k < ng; k++)
        v[k] = l->off[k] < PS_PLF_MAX_DIM - 1 ? _mm_loadu_pd(p + l->off[k]) : _mm_load_sd(p + l->off[k]);
}

/* The bounds of a run that starts with the segment from lv to the point at p (width db). */
PLF_INLINE void reset_share_bounds(struct share_bounds *b, const struct share_lanes *l, int ng, const __m128d lv[3],
                                   const double *p, double db, __m128d eps)
{
    __m128d rv[3];
    load_lanes(p, l, ng, rv);
    for (int k = 0; k < ng; k++) {
        b->top_db[k] = b->bottom_db[k] = _mm_set1_pd(db);
        b->top_dv[k] = _mm_sub_pd(_mm_add_pd(rv[k], eps), lv[k]);
        b->bottom_dv[k] = _mm_sub_pd(_mm_sub_pd(rv[k], eps), lv[k]);
    }
}

PLF_INLINE __m128d select_pd(__m128d mask, __m128d yes, __m128d no)
{
    return _mm_or_pd(_mm_and_pd(mask, yes), _mm_andnot_pd(mask, no));
}

PLF_INLINE void compress_lanes(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon, int active,
                               const struct share_lanes *l, int ng)
{
    enum { STRIDE = PS_PLF_MAX_DIM + 1 };
    const double *a = src->a;
    int n = src->n;
    __m128d eps = _mm_set1_pd(epsilon);
    struct share_bounds b;
    __m128d lv[3];
    int start = 0, end = 1;
    double x0 = a[0];
    load_lanes(a + 1, l, ng, lv);
    reset_share_bounds(&b, l, ng, lv, a + STRIDE + 1, a[STRIDE] - x0, eps);
    for (int i = 1; i < n - 1; i++) {
        const double *p = a + (size_t)(i + 1) * STRIDE;
        double db = p[0] - x0;
        __m128d dbv = _mm_set1_pd(db), rv[3];
        load_lanes(p + 1, l, ng, rv);
        int ok = 0;
        for (int k = 0; k < ng; k++) {
            __m128d dv = _mm_sub_pd(rv[k], lv[k]);
            __m128d top_dv = _mm_sub_pd(_mm_add_pd(rv[k], eps), lv[k]);
            __m128d bottom_dv = _mm_sub_pd(_mm_sub_pd(rv[k], eps), lv[k]);
            /* cross_sign(db, top_dv, top) > 0: the new upper bound is flatter. */
            __m128d c = _mm_sub_pd(_mm_mul_pd(dbv, b.top_dv[k]), _mm_mul_pd(b.top_db[k], top_dv));
            __m128d m = _mm_cmpgt_pd(c, _mm_setzero_pd());
            b.top_db[k] = select_pd(m, dbv, b.top_db[k]);
            b.top_dv[k] = select_pd(m, top_dv, b.top_dv[k]);
            /* cross_sign(db, bottom_dv, bottom) < 0: the new lower bound is steeper. */
            c = _mm_sub_pd(_mm_mul_pd(dbv, b.bottom_dv[k]), _mm_mul_pd(b.bottom_db[k], bottom_dv));
            m = _mm_cmplt_pd(c, _mm_setzero_pd());
            b.bottom_db[k] = select_pd(m, dbv, b.bottom_db[k]);
            b.bottom_dv[k] = select_pd(m, bottom_dv, b.bottom_dv[k]);
            /* The joined segment is strictly above the lower and below the upper bound. */
            __m128d above = _mm_sub_pd(_mm_mul_pd(b.bottom_db[k], dv), _mm_mul_pd(dbv, b.bottom_dv[k]));
            __m128d below = _mm_sub_pd(_mm_mul_pd(b.top_db[k], dv), _mm_mul_pd(dbv, b.top_dv[k]));
            __m128d inside = _mm_and_pd(_mm_cmpgt_pd(above, _mm_setzero_pd()), _mm_cmplt_pd(below, _mm_setzero_pd()));
            ok |= _mm_movemask_pd(inside) << l->off[k];
        }
        if ((active & ~ok) == 0) {
            end = i + 1;
            continue;
        }
        const double *s = a + (size_t)start * STRIDE, *e = a + (size_t)end * STRIDE;
        buf_push_segment_d(dst, PS_PLF_MAX_DIM, s[0], s + 1, e[0], e + 1);
        start = i;
        end = i + 1;
        s = a + (size_t)i * STRIDE;
        x0 = s[0];
        load_lanes(s + 1, l, ng, lv);
        reset_share_bounds(&b, l, ng, lv, p + 1, p[0] - x0, eps);
    }
    const double *s = a + (size_t)start * STRIDE, *e = a + (size_t)end * STRIDE;
    buf_push_segment_d(dst, PS_PLF_MAX_DIM, s[0], s + 1, e[0], e + 1);
}

static void compress_share(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon)
{
    enum { STRIDE = PS_PLF_MAX_DIM + 1 };
    const double *a = src->a;
    /* The components that differ from the first point somewhere (all of them without a
     * tolerance, as compress_run); != is true for NaN there, as here. */
    struct share_lanes all = {{0, 2, 4}};
    __m128d first[3], differ[3] = {_mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd()};
    load_lanes(a + 1, &all, 3, first);
    for (int i = 1; i < src->n; i++) {
        __m128d v[3];
        load_lanes(a + (size_t)i * STRIDE + 1, &all, 3, v);
        for (int k = 0; k < 3; k++)
            differ[k] = _mm_or_pd(differ[k], _mm_cmpneq_pd(v[k], first[k]));
    }
    int active = _mm_movemask_pd(differ[0]) | _mm_movemask_pd(differ[1]) << 2 | (_mm_movemask_pd(differ[2]) & 1) << 4;
    if (!(epsilon > 0))
        active = 0x1f;
    struct share_lanes l;
    int ng = 0;
    for (int r = 0; r < PS_PLF_MAX_DIM;) {
        if (!(active & 1 << r)) {
            r++;
            continue;
        }
        l.off[ng++] = r;
        r += 2;
    }
    /* Literal group counts, so that the group loops unroll. */
    if (ng == 3)
        compress_lanes(dst, src, epsilon, active, &l, 3);
    else if (ng == 2)
        compress_lanes(dst, src, epsilon, active, &l, 2);
    else if (ng == 1)
        compress_lanes(dst, src, epsilon, active, &l, 1);
    else
        compress_lanes(dst, src, epsilon, active, &l, 0);  /* nothing to check: one segment */
}
#endif

#if defined(PLF_HAVE_VEC512)
/* compress_lanes with the five components in the lanes 1..5 of one register (lane 0 holds the
 * argument and 6, 7 zeros: computed, never tested), and the builder of plf_vec512.h. The
 * products per component are those of compress_lanes; the sign of a difference of two products
 * a - b is tested as a > b (or a < b), which is the same test: with gradual underflow (no
 * fast-math here) a - b is zero only when a == b, rounding keeps its sign, and a NaN or
 * inf - inf fails both. This takes the subtraction off the chain of bound updates that each
 * step waits for. */
static PLF_TARGET512 void compress_share_avx512(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon)
{
    const double *a = src->a;
    int n = src->n;
    __m512d first = pt5_load(a);
    unsigned differ = 0;
    for (int i = 1; i < n; i++)
        differ |= _mm512_cmp_pd_mask(pt5_load(a + (size_t)i * PLF5_STRIDE), first, _CMP_NEQ_UQ);
    unsigned active = epsilon > 0 ? differ & PLF5_VALUES : PLF5_VALUES;
    const __m512d eps = _mm512_set1_pd(epsilon);
    struct vb5 vb;
    vb5_start(&vb, dst);
    int start = 0, end = 1;
    double x0 = a[0];
    __m512d lv = first, rv = pt5_load(a + PLF5_STRIDE);
    __m512d top_db = _mm512_set1_pd(a[PLF5_STRIDE] - x0), bottom_db = top_db;
    __m512d top_dv = _mm512_sub_pd(_mm512_add_pd(rv, eps), lv);
    __m512d bottom_dv = _mm512_sub_pd(_mm512_sub_pd(rv, eps), lv);
    for (int i = 1; i < n - 1; i++) {
        const double *p = a + (size_t)(i + 1) * PLF5_STRIDE;
        __m512d dbv = _mm512_set1_pd(p[0] - x0);
        rv = pt5_load(p);
        __m512d dv = _mm512_sub_pd(rv, lv);
        __m512d new_top = _mm512_sub_pd(_mm512_add_pd(rv, eps), lv);
        __m512d new_bottom = _mm512_sub_pd(_mm512_sub_pd(rv, eps), lv);
        /* cross_sign(db, top_dv, top) > 0: the new upper bound is flatter. */
        __mmask8 m = _mm512_cmp_pd_mask(_mm512_mul_pd(dbv, top_dv), _mm512_mul_pd(top_db, new_top), _CMP_GT_OQ);
        top_db = _mm512_mask_mov_pd(top_db, m, dbv);
        top_dv = _mm512_mask_mov_pd(top_dv, m, new_top);
        /* cross_sign(db, bottom_dv, bottom) < 0: the new lower bound is steeper. */
        m = _mm512_cmp_pd_mask(_mm512_mul_pd(dbv, bottom_dv), _mm512_mul_pd(bottom_db, new_bottom), _CMP_LT_OQ);
        bottom_db = _mm512_mask_mov_pd(bottom_db, m, dbv);
        bottom_dv = _mm512_mask_mov_pd(bottom_dv, m, new_bottom);
        /* The joined segment is strictly above the lower and below the upper bound. */
        unsigned inside = _mm512_cmp_pd_mask(_mm512_mul_pd(bottom_db, dv), _mm512_mul_pd(dbv, bottom_dv), _CMP_GT_OQ) &
                          _mm512_cmp_pd_mask(_mm512_mul_pd(top_db, dv), _mm512_mul_pd(dbv, top_dv), _CMP_LT_OQ);
        if ((active & ~inside) == 0) {
            end = i + 1;
            continue;
        }
        if (vb.n == 0)
            vb5_add(&vb, pt5_load(a + (size_t)start * PLF5_STRIDE));
        vb5_add(&vb, pt5_load(a + (size_t)end * PLF5_STRIDE));
        start = i;
        end = i + 1;
        const double *s = a + (size_t)i * PLF5_STRIDE;
        x0 = s[0];
        lv = pt5_load(s);
        top_db = bottom_db = _mm512_set1_pd(p[0] - x0);
        top_dv = _mm512_sub_pd(_mm512_add_pd(rv, eps), lv);
        bottom_dv = _mm512_sub_pd(_mm512_sub_pd(rv, eps), lv);
    }
    if (vb.n == 0)
        vb5_add(&vb, pt5_load(a + (size_t)start * PLF5_STRIDE));
    vb5_add(&vb, pt5_load(a + (size_t)end * PLF5_STRIDE));
    vb5_finish(&vb);
}

void ps_plf_compress5_avx512(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon)
{
    compress_share_avx512(dst, src, epsilon);
}
#endif

void ps_plf_compress5_base(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon)
{
#if defined(__SSE2__)
    compress_share(dst, src, epsilon);
#else
    compress_run(dst, src, epsilon, PS_PLF_MAX_DIM);
#endif
}

void ps_plf_compress(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon)
{
    int dim = src->dim;
    ps_plf_buf_clear(dst, dim);
    if (src->n < 2)
        return;
    if (dim == PS_PLF_MAX_DIM)
        ps_kernels()->compress5(dst, src, epsilon);
    else if (dim == 1)
        compress_run(dst, src, epsilon, 1);
    else
        compress_run(dst, src, epsilon, dim);
}
