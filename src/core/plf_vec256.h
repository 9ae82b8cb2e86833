/* plf_vec256.h — AVX2 forms of plf_vec512.h's share-vector helpers (dim 5), for the fused
 * composition and compression on CPUs without AVX-512 (not a public API).
 *
 * A point (x, v0..v4) is two 256-bit registers: a = (x, v0, v1, v2), b = (v3, v4, 0, 0).
 * Comparison masks are built in plf_vec512.h's layout (bit k for double k of the point, bits
 * 6 and 7 for the zero pad), so the merge rules (vb5_rule) and the stream's bookkeeping are
 * the same code. Every lane performs the operations of the scalar code on the same operands
 * in the same order and packed operations round like scalar ones, so the bits are the same.
 * No FMA (the target is avx2 alone). */
#ifndef PS_CORE_PLF_VEC256_H
#define PS_CORE_PLF_VEC256_H

#include "core/plf_vec512.h"

#if defined(PLF_HAVE_VEC512)
#define PLF_HAVE_VEC256 1

#define PLF_TARGET256 __attribute__((target("avx2")))
#define PLF_INLINE256 static inline __attribute__((always_inline)) PLF_TARGET256

struct p5 {
    __m256d a, b;
};

PLF_INLINE256 struct p5 p5_load(const double *p)
{
    struct p5 r = {_mm256_loadu_pd(p), _mm256_zextpd128_pd256(_mm_loadu_pd(p + 4))};
    return r;
}

/* Six doubles exactly: some builders live in arena memory sized for their points. */
PLF_INLINE256 void p5_store(double *p, struct p5 v)
{
    _mm256_storeu_pd(p, v.a);
    _mm_storeu_pd(p + 4, _mm256_castpd256_pd128(v.b));
}

PLF_INLINE256 struct p5 p5_zero(void)
{
    struct p5 r = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    return r;
}

PLF_INLINE256 double p5_x(struct p5 v)
{
    return _mm_cvtsd_f64(_mm256_castpd256_pd128(v.a));
}

PLF_INLINE256 struct p5 p5_with_x(struct p5 v, double x)
{
    v.a = _mm256_blend_pd(v.a, _mm256_set1_pd(x), 1);
    return v;
}

#define P5_BIN(name, op)                                        \
    PLF_INLINE256 struct p5 name(struct p5 u, struct p5 v)     \
    {                                                           \
        struct p5 r = {op(u.a, v.a), op(u.b, v.b)};             \
        return r;                                               \
    }
P5_BIN(p5_add, _mm256_add_pd)
P5_BIN(p5_sub, _mm256_sub_pd)
P5_BIN(p5_mul, _mm256_mul_pd)
#undef P5_BIN

PLF_INLINE256 struct p5 p5_set1(double d)
{
    struct p5 r = {_mm256_set1_pd(d), _mm256_set1_pd(d)};
    return r;
}

/* Lane-wise comparison as all-ones / zero lanes, and as plf_vec512.h's bit mask. */
#define p5_cmp(u, v, pred) \
    ((struct p5){_mm256_cmp_pd((u).a, (v).a, (pred)), _mm256_cmp_pd((u).b, (v).b, (pred))})

PLF_INLINE256 unsigned p5_bits(struct p5 m)
{
    return (unsigned)_mm256_movemask_pd(m.a) | (unsigned)_mm256_movemask_pd(m.b) << 4;
}

#define p5_cmp_mask(u, v, pred) p5_bits(p5_cmp(u, v, pred))

/* v where m is set, else u. */
PLF_INLINE256 struct p5 p5_select(struct p5 u, struct p5 v, struct p5 m)
{
    struct p5 r = {_mm256_blendv_pd(u.a, v.a, m.a), _mm256_blendv_pd(u.b, v.b, m.b)};
    return r;
}

/* vb5 with points in two registers. */
struct vb5y {
    struct ps_plf_buf *b;
    double *a;
    int n, cap;
    struct p5 l, m;
    unsigned lm;
};

PLF_INLINE256 void vb5y_start(struct vb5y *vb, struct ps_plf_buf *b)
{
    vb->b = b;
    vb->a = b->a;
    vb->n = b->n;
    vb->cap = b->cap;
    vb->l = vb->m = p5_zero();
    if (b->n >= 1)
        vb->m = p5_load(b->a + (size_t)(b->n - 1) * PLF5_STRIDE);
    if (b->n >= 2)
        vb->l = p5_load(b->a + (size_t)(b->n - 2) * PLF5_STRIDE);
    vb->lm = p5_cmp_mask(vb->l, vb->m, _CMP_EQ_OQ);
}

PLF_INLINE256 void vb5y_finish(struct vb5y *vb)
{
    vb->b->n = vb->n;
}

/* vb5_add. */
PLF_INLINE256 void vb5y_add(struct vb5y *vb, struct p5 p)
{
    if (__builtin_expect(vb->n >= vb->cap, 0)) {
        vb->b->n = vb->n;
        if (!ps_plf_buf_reserve(vb->b, vb->n + 1))
            return;
        vb->a = vb->b->a;
        vb->cap = vb->b->cap;
    }
    if (__builtin_expect(vb->n < 2, 0)) {
        p5_store(vb->a + (size_t)vb->n * PLF5_STRIDE, p);
        vb->lm = p5_cmp_mask(vb->m, p, _CMP_EQ_OQ);
        vb->l = vb->m;
        vb->m = p;
        vb->n++;
        return;
    }
    unsigned mp = p5_cmp_mask(vb->m, p, _CMP_EQ_OQ);
    enum vb5_rule rule = vb5_rule(vb->lm, mp);
    if (rule == VB5_DROP)
        return;
    if (rule == VB5_MOVE) {
        p5_store(vb->a + (size_t)(vb->n - 1) * PLF5_STRIDE, p);
        vb->lm = p5_cmp_mask(vb->l, p, _CMP_EQ_OQ);
        vb->m = p;
        return;
    }
    p5_store(vb->a + (size_t)vb->n * PLF5_STRIDE, p);
    vb->n++;
    vb->lm = mp;
    vb->l = vb->m;
    vb->m = p;
}

/* seg5_limit. */
PLF_INLINE256 struct p5 seg5y_limit(const double *pp, double y, bool right)
{
    struct p5 lo = p5_load(pp), hi = p5_load(pp + PLF5_STRIDE);
    double l = pp[0], r = pp[PLF5_STRIDE];
    /* flat_values: equal values, none a negative zero (zero with the sign bit set). */
    unsigned eq = p5_cmp_mask(lo, hi, _CMP_EQ_OQ);
    unsigned negzero = p5_cmp_mask(lo, p5_zero(), _CMP_EQ_OQ) &
                       ((unsigned)_mm256_movemask_pd(lo.a) | (unsigned)_mm256_movemask_pd(lo.b) << 4);
    bool flat = ((eq & ~negzero) & PLF5_VALUES) == PLF5_VALUES;
    if (l == r)
        return right ? hi : lo;
    if (flat)
        return lo;
    /* seg_param with its shortcuts as selects. */
    __m128d yy = _mm_set_sd(y), ll = _mm_set_sd(l), rr = _mm_set_sd(r);
    __m128d t = _mm_div_sd(_mm_sub_sd(yy, ll), _mm_sub_sd(rr, ll));
    t = _mm_blendv_pd(t, _mm_setzero_pd(), _mm_cmpeq_sd(yy, ll));
    t = _mm_blendv_pd(t, _mm_set_sd(1.0), _mm_cmpeq_sd(yy, rr));
    bool left_form = _mm_cvtsd_f64(t) < 0.5;
    /* lerp_values: both forms, chosen by t < 0.5 for every component. */
    struct p5 d = p5_sub(hi, lo);
    __m256d tt = _mm256_broadcastsd_pd(t), ut = _mm256_broadcastsd_pd(_mm_sub_sd(_mm_set_sd(1.0), t));
    struct p5 tv = {tt, tt}, uv = {ut, ut};
    struct p5 from_left = p5_add(lo, p5_mul(d, tv));
    struct p5 from_right = p5_sub(hi, p5_mul(d, uv));
    return left_form ? from_left : from_right;
}

/* cz5 (plf_vec512.h) with points in two registers. */
struct cz5y {
    struct vb5y vb;
    int n;
    unsigned differ, blocked;
    double x0;
    struct p5 first, s, e, eps, top_db, top_dv, bottom_db, bottom_dv;
    double epsilon;
};

PLF_INLINE256 void cz5y_start(struct cz5y *z, struct ps_plf_buf *dst, double epsilon)
{
    vb5y_start(&z->vb, dst);
    z->n = 0;
    z->differ = z->blocked = 0;
    z->epsilon = epsilon;
    z->eps = p5_set1(epsilon);
    z->x0 = 0.0;
    z->first = z->s = z->e = z->top_db = z->top_dv = z->bottom_db = z->bottom_dv = p5_zero();
}

PLF_INLINE256 void cz5y_feed(struct cz5y *z, struct p5 p, double x)
{
    if (__builtin_expect(z->n < 2, 0)) {
        if (z->n == 0) {
            z->first = z->s = p;
            z->x0 = x;
        } else {
            z->differ |= p5_cmp_mask(p, z->first, _CMP_NEQ_UQ);
            z->top_db = z->bottom_db = p5_set1(x - z->x0);
            z->top_dv = p5_sub(p5_add(p, z->eps), z->s);
            z->bottom_dv = p5_sub(p5_sub(p, z->eps), z->s);
        }
        z->e = p;
        z->n++;
        return;
    }
    z->n++;
    z->differ |= p5_cmp_mask(p, z->first, _CMP_NEQ_UQ);
    struct p5 dbv = p5_set1(x - z->x0);
    struct p5 dv = p5_sub(p, z->s);
    struct p5 new_top = p5_sub(p5_add(p, z->eps), z->s);
    struct p5 new_bottom = p5_sub(p5_sub(p, z->eps), z->s);
    struct p5 m = p5_cmp(p5_mul(dbv, z->top_dv), p5_mul(z->top_db, new_top), _CMP_GT_OQ);
    z->top_db = p5_select(z->top_db, dbv, m);
    z->top_dv = p5_select(z->top_dv, new_top, m);
    m = p5_cmp(p5_mul(dbv, z->bottom_dv), p5_mul(z->bottom_db, new_bottom), _CMP_LT_OQ);
    z->bottom_db = p5_select(z->bottom_db, dbv, m);
    z->bottom_dv = p5_select(z->bottom_dv, new_bottom, m);
    unsigned inside = p5_cmp_mask(p5_mul(z->bottom_db, dv), p5_mul(dbv, z->bottom_dv), _CMP_GT_OQ) &
                      p5_cmp_mask(p5_mul(z->top_db, dv), p5_mul(dbv, z->top_dv), _CMP_LT_OQ);
    unsigned fail = PLF5_VALUES & ~inside;
    z->blocked |= fail;
    if (fail == 0) {
        z->e = p;
        return;
    }
    if (z->vb.n == 0)
        vb5y_add(&z->vb, z->s);
    vb5y_add(&z->vb, z->e);
    z->s = z->e;
    z->x0 = p5_x(z->e);
    z->top_db = z->bottom_db = p5_set1(x - z->x0);
    z->top_dv = p5_sub(p5_add(p, z->eps), z->s);
    z->bottom_dv = p5_sub(p5_sub(p, z->eps), z->s);
    z->e = p;
}

PLF_INLINE256 bool cz5y_finish(struct cz5y *z)
{
    unsigned active = z->epsilon > 0 ? z->differ & PLF5_VALUES : PLF5_VALUES;
    if (z->blocked & ~active)
        return false;
    if (z->n >= 2) {
        if (z->vb.n == 0)
            vb5y_add(&z->vb, z->s);
        vb5y_add(&z->vb, z->e);
    }
    vb5y_finish(&z->vb);
    return true;
}

#endif
#endif
