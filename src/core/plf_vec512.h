/* plf_vec512.h — AVX-512 helpers for share-vector functions (dim 5), shared by the composition
 * and the compression kernels (not a public API).
 *
 * A point of a share-vector function is six doubles (x, v0..v4): one 512-bit register with
 * lanes 0..5 (lanes 6 and 7 are zero). The builder's comparisons with its last two points and
 * the five-component interpolation are then a few instructions each. Every lane performs the
 * operations of the scalar code (plf_impl.h) on the same operands in the same order, and packed
 * operations round like scalar ones, so the bits are the same; lane 0 (x) of a computed value
 * is replaced by the argument.
 *
 * Only functions compiled for the target below may call these (the kernel table of
 * isa_kernels.h chooses those). */
#ifndef PS_CORE_PLF_VEC512_H
#define PS_CORE_PLF_VEC512_H

#if defined(__x86_64__) && defined(__GNUC__)
#define PLF_HAVE_VEC512 1

#include <immintrin.h>
#include <stdbool.h>

#include "core/plf.h"
#include "core/plf_impl.h"

#define PLF_TARGET512 __attribute__((target("avx512f,avx512vl,avx512dq")))
#define PLF_INLINE512 static inline __attribute__((always_inline)) PLF_TARGET512

enum { PLF5_STRIDE = PS_PLF_MAX_DIM + 1, PLF5_LANES = 0x3f, PLF5_VALUES = 0x3e };

PLF_INLINE512 __m512d pt5_load(const double *p)
{
    return _mm512_maskz_loadu_pd(PLF5_LANES, p);
}

PLF_INLINE512 void pt5_store(double *p, __m512d v)
{
    _mm512_mask_storeu_pd(p, PLF5_LANES, v);
}

/* The point (x, values of v's lanes 1..5). */
PLF_INLINE512 __m512d pt5_with_x(__m512d v, double x)
{
    return _mm512_mask_mov_pd(v, 1, _mm512_set1_pd(x));
}

/* A builder of a share-vector function that keeps its last two points in registers: the
 * comparisons of append_d need no loads, and no load waits for a store just made. The points
 * live in b->a as usual; vb5_finish publishes the count. */
struct vb5 {
    struct ps_plf_buf *b;
    double *a;
    int n, cap;
    __m512d l, m;  /* points n - 2 and n - 1 (when they exist) */
    unsigned lm;   /* lanes where l and m are equal (when n >= 2) */
};

PLF_INLINE512 void vb5_start(struct vb5 *vb, struct ps_plf_buf *b)
{
    vb->b = b;
    vb->a = b->a;
    vb->n = b->n;
    vb->cap = b->cap;
    vb->l = vb->m = _mm512_setzero_pd();
    if (b->n >= 1)
        vb->m = pt5_load(b->a + (size_t)(b->n - 1) * PLF5_STRIDE);
    if (b->n >= 2)
        vb->l = pt5_load(b->a + (size_t)(b->n - 2) * PLF5_STRIDE);
    vb->lm = _mm512_cmp_pd_mask(vb->l, vb->m, _CMP_EQ_OQ);
}

PLF_INLINE512 void vb5_finish(struct vb5 *vb)
{
    vb->b->n = vb->n;
}

/* The rules of append_d below on comparison masks: lm has the lanes where l and m are equal, mp
 * those where m and p are (vb5_add and plf_ops.c's vf5_add, which feeds the compression, and their
 * AVX2 forms in plf_vec256.h and plf_ops.c: no target of its own, so both levels inline it). */
enum vb5_rule { VB5_PUSH, VB5_DROP, VB5_MOVE };

static inline __attribute__((always_inline)) enum vb5_rule vb5_rule(unsigned lm, unsigned mp)
{
    unsigned right_vertical = mp & 1, right_flat = (mp & PLF5_VALUES) == PLF5_VALUES;
    unsigned left_vertical = lm & 1, left_flat = (lm & PLF5_VALUES) == PLF5_VALUES;
    if (right_vertical & right_flat)
        return VB5_DROP;
    if ((left_vertical & left_flat) | (left_vertical & right_vertical) |
        ((left_vertical ^ 1) & left_flat & (right_vertical ^ 1) & right_flat))
        return VB5_MOVE;
    return VB5_PUSH;
}

/* buf_add_point_d(b, 5, p[0], p + 1) for a point in a register, with the rules of append_d:
 * with m the last point and l the one before,
 *   drop when (x, v) repeats m,
 *   move m when l-m is a point segment, l-m and m-p are both vertical, or both horizontal,
 *   push otherwise. */
PLF_INLINE512 void vb5_add(struct vb5 *vb, __m512d p)
{
    /* Growth only when full, as push_raw_d: the masked store writes six doubles, and some
     * builders live in arena memory sized for their points, which must never be realloc'd. */
    if (__builtin_expect(vb->n >= vb->cap, 0)) {
        vb->b->n = vb->n;
        if (!ps_plf_buf_reserve(vb->b, vb->n + 1))
            return;  /* push_raw_d also loses the point (and the builder reports oom) */
        vb->a = vb->b->a;
        vb->cap = vb->b->cap;
    }
    if (__builtin_expect(vb->n < 2, 0)) {
        pt5_store(vb->a + (size_t)vb->n * PLF5_STRIDE, p);
        vb->lm = _mm512_cmp_pd_mask(vb->m, p, _CMP_EQ_OQ);
        vb->l = vb->m;
        vb->m = p;
        vb->n++;
        return;
    }
    unsigned mp = _mm512_cmp_pd_mask(vb->m, p, _CMP_EQ_OQ);
    enum vb5_rule rule = vb5_rule(vb->lm, mp);
    if (rule == VB5_DROP)
        return;
    if (rule == VB5_MOVE) {
        pt5_store(vb->a + (size_t)(vb->n - 1) * PLF5_STRIDE, p);
        vb->lm = _mm512_cmp_pd_mask(vb->l, p, _CMP_EQ_OQ);
        vb->m = p;
        return;
    }
    /* A new point: the comparison just made is the next call's left one. */
    pt5_store(vb->a + (size_t)vb->n * PLF5_STRIDE, p);
    vb->n++;
    vb->lm = mp;
    vb->l = vb->m;
    vb->m = p;
}

/* seg_left_limit_d (right = false) or seg_right_limit_d (right = true) of the segment whose
 * left point is at pp, at argument y; lane 0 of the result is meaningless. (A form without
 * branches, with the division always done, was slower: the branches are well predicted and
 * break the dependency chains.) */
PLF_INLINE512 __m512d seg5_limit(const double *pp, double y, bool right)
{
    __m512d lo = pt5_load(pp), hi = pt5_load(pp + PLF5_STRIDE);
    double l = pp[0], r = pp[PLF5_STRIDE];
    /* flat_values: equal values, none a negative zero (fpclass 0x04). */
    unsigned eq = _mm512_cmp_pd_mask(lo, hi, _CMP_EQ_OQ) & ~(unsigned)_mm512_fpclass_pd_mask(lo, 0x04);
    bool flat = (eq & PLF5_VALUES) == PLF5_VALUES;
    if (l == r)
        return right ? hi : lo;
    if (flat)
        return lo;
    /* seg_param with its shortcuts as selects (in vector registers, or the compiler makes them
     * branches again): samples at f's arguments (t = 1) and inside segments alternate at
     * random. */
    __m128d yy = _mm_set_sd(y), ll = _mm_set_sd(l), rr = _mm_set_sd(r);
    __m128d t = _mm_div_sd(_mm_sub_sd(yy, ll), _mm_sub_sd(rr, ll));
    t = _mm_mask_mov_pd(t, _mm_cmp_sd_mask(yy, ll, _CMP_EQ_OQ), _mm_setzero_pd());
    t = _mm_mask_mov_pd(t, _mm_cmp_sd_mask(yy, rr, _CMP_EQ_OQ), _mm_set_sd(1.0));
    __mmask8 left_form = _mm_cmp_sd_mask(t, _mm_set_sd(0.5), _CMP_LT_OQ) ? 0xff : 0;
    /* lerp_values: both forms, chosen by t < 0.5 for every component. */
    __m512d d = _mm512_sub_pd(hi, lo);
    __m512d from_left = _mm512_add_pd(lo, _mm512_mul_pd(d, _mm512_broadcastsd_pd(t)));
    __m512d from_right = _mm512_sub_pd(hi, _mm512_mul_pd(d, _mm512_broadcastsd_pd(_mm_sub_sd(_mm_set_sd(1.0), t))));
    return _mm512_mask_mov_pd(from_right, left_form, from_left);
}


/* compress_share_avx512 (plf_compress.c) as a stream: the points of the source arrive one at a
 * time (cz5_feed), so a producer that finalizes points in order can hand them over without
 * storing them. The run state lives in registers: the run's start point s, the last point e
 * (the run's current end) and the bounds.
 *
 * The whole-function pass of compress_share_avx512 (which components differ from the first
 * point: the others are not checked) cannot be done before the points have all arrived, so
 * every component is checked and the stream records the components that ever failed the test
 * (blocked). A component the batch form does not check only changes a decision where it
 * fails the test while the checked ones pass, so when no unchecked component ever failed
 * (cz5_exact) every decision, and so the output, is the batch form's; otherwise the caller
 * redoes the compression in batch. */
struct cz5 {
    struct vb5 vb;
    int n;             /* points fed */
    unsigned differ;   /* lanes where some point differs from the first */
    unsigned blocked;  /* lanes that failed the test at some step */
    double x0;         /* argument of s */
    __m512d first, s, e, eps, top_db, top_dv, bottom_db, bottom_dv;
    double epsilon;
};

PLF_INLINE512 void cz5_start(struct cz5 *z, struct ps_plf_buf *dst, double epsilon)
{
    vb5_start(&z->vb, dst);
    z->n = 0;
    z->differ = z->blocked = 0;
    z->epsilon = epsilon;
    z->eps = _mm512_set1_pd(epsilon);
    z->x0 = 0.0;
    z->first = z->s = z->e = z->top_db = z->top_dv = z->bottom_db = z->bottom_dv = _mm512_setzero_pd();
}

/* The next point p (lanes 6 and 7 zero) and its argument x (lane 0). */
PLF_INLINE512 void cz5_feed(struct cz5 *z, __m512d p, double x)
{
    if (__builtin_expect(z->n < 2, 0)) {
        if (z->n == 0) {
            z->first = z->s = p;
            z->x0 = x;
        } else {
            z->differ |= _mm512_cmp_pd_mask(p, z->first, _CMP_NEQ_UQ);
            z->top_db = z->bottom_db = _mm512_set1_pd(x - z->x0);
            z->top_dv = _mm512_sub_pd(_mm512_add_pd(p, z->eps), z->s);
            z->bottom_dv = _mm512_sub_pd(_mm512_sub_pd(p, z->eps), z->s);
        }
        z->e = p;
        z->n++;
        return;
    }
    z->n++;
    z->differ |= _mm512_cmp_pd_mask(p, z->first, _CMP_NEQ_UQ);
    __m512d dbv = _mm512_set1_pd(x - z->x0);
    __m512d dv = _mm512_sub_pd(p, z->s);
    __m512d new_top = _mm512_sub_pd(_mm512_add_pd(p, z->eps), z->s);
    __m512d new_bottom = _mm512_sub_pd(_mm512_sub_pd(p, z->eps), z->s);
    __mmask8 m = _mm512_cmp_pd_mask(_mm512_mul_pd(dbv, z->top_dv), _mm512_mul_pd(z->top_db, new_top), _CMP_GT_OQ);
    z->top_db = _mm512_mask_mov_pd(z->top_db, m, dbv);
    z->top_dv = _mm512_mask_mov_pd(z->top_dv, m, new_top);
    m = _mm512_cmp_pd_mask(_mm512_mul_pd(dbv, z->bottom_dv), _mm512_mul_pd(z->bottom_db, new_bottom), _CMP_LT_OQ);
    z->bottom_db = _mm512_mask_mov_pd(z->bottom_db, m, dbv);
    z->bottom_dv = _mm512_mask_mov_pd(z->bottom_dv, m, new_bottom);
    unsigned inside = _mm512_cmp_pd_mask(_mm512_mul_pd(z->bottom_db, dv), _mm512_mul_pd(dbv, z->bottom_dv), _CMP_GT_OQ) &
                      _mm512_cmp_pd_mask(_mm512_mul_pd(z->top_db, dv), _mm512_mul_pd(dbv, z->top_dv), _CMP_LT_OQ);
    unsigned fail = PLF5_VALUES & ~inside;
    z->blocked |= fail;
    if (fail == 0) {
        z->e = p;
        return;
    }
    if (z->vb.n == 0)
        vb5_add(&z->vb, z->s);
    vb5_add(&z->vb, z->e);
    z->s = z->e;
    z->x0 = _mm_cvtsd_f64(_mm512_castpd512_pd128(z->e));
    z->top_db = z->bottom_db = _mm512_set1_pd(x - z->x0);
    z->top_dv = _mm512_sub_pd(_mm512_add_pd(p, z->eps), z->s);
    z->bottom_dv = _mm512_sub_pd(_mm512_sub_pd(p, z->eps), z->s);
    z->e = p;
}

/* Ends the stream; false when the batch form may differ (see struct cz5): then dst holds
 * garbage and the caller compresses in batch. */
PLF_INLINE512 bool cz5_finish(struct cz5 *z)
{
    unsigned active = z->epsilon > 0 ? z->differ & PLF5_VALUES : PLF5_VALUES;
    if (z->blocked & ~active)
        return false;
    if (z->n >= 2) {
        if (z->vb.n == 0)
            vb5_add(&z->vb, z->s);
        vb5_add(&z->vb, z->e);
    }
    vb5_finish(&z->vb);
    return true;
}

#endif
#endif
