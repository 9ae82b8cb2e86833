/* plf_sum.c — the pointwise sum of piecewise-linear functions (upstream's Sum).
 *
 * Upstream samples every critical point of every summand and adds the summands' left (and
 * right) limits there in array order. Here the loops are interchanged: each summand in turn
 * walks the sorted critical points once and adds its left limit into a per-point accumulator.
 * Every accumulator still receives ((0 + v0) + v1) + ... in array order, so the sums are the
 * same bits, but a summand's walk is a tight merge of its segments with the points (no reader
 * state per summand, no pass over all summands at every point).
 *
 * The critical points come from plf_sum_points.c (a merge of the summands' sorted runs).
 *
 * Right limits differ from left ones only where a summand jumps. Those points are flagged and
 * their right sums are computed afterwards the same way (summand by summand, each walking the
 * flagged points with the same segment choice, upstream's SegmentAt), which gives what summing
 * the right limits in the same pass would.
 *
 * The left sums are kept as structure of arrays (component d of point q at acc[d * st + q]), so
 * that a summand's segment, which covers ~15 consecutive points on average in the bench, is one
 * vector operation per component for 4 (AVX2) or 8 (AVX-512) points at a time: each lane performs
 * seg_param and lerp's operations on its own point in the same order as the scalar code (both
 * lerp forms and a select on t < 0.5, the x == l and x == r shortcuts as selects), so the bits
 * are the same at every ISA level. */
#include "core/plf.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/isa_kernels.h"
#include "core/plf_impl.h"
#include "core/plf_sum_points.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SUM_WIDE 1
#endif

/* The vector kernels read and write blocks of 8 points starting at a multiple of 8 below k:
 * the point array has 8 readable slots after the last point (+inf, which no segment covers)
 * and each accumulator row has at least 8 slots of slack. */
enum { SUM_PAD = 8 };

struct sum_acc {
    double *left;  /* dim rows of st doubles, 64-byte aligned */
    size_t st;
    double *right; /* the right sums at the flagged points, point-major */
};

static bool reserve_acc(struct ps_plf_ctx *ctx, int points, int dim, struct sum_acc *a)
{
    size_t st = ((size_t)points + SUM_PAD + 7) & ~(size_t)7;
    size_t need = (size_t)dim * st + (size_t)points * (size_t)dim + 8;
    if (need > ctx->acc_cap) {
        size_t cap = ps_plf_grow_capacity(ctx->acc_cap, need);
        double *p = realloc(ctx->acc, cap * sizeof *p);
        if (!p) {
            ctx->oom = true;
            return false;
        }
        ctx->acc = p;
        ctx->acc_cap = cap;
    }
    if (points > ctx->split_cap) {
        int cap = (int)ps_plf_grow_capacity((size_t)ctx->split_cap, (size_t)points);
        unsigned char *s = realloc(ctx->split, (size_t)cap);
        if (s)
            ctx->split = s;
        int *idx = realloc(ctx->split_idx, (size_t)cap * sizeof *idx);
        if (idx)
            ctx->split_idx = idx;
        if (!s || !idx) {
            ctx->oom = true;
            return false;
        }
        ctx->split_cap = cap;
    }
    /* Aligned rows: a block's load then finds the previous segment's store of the same block
     * (store forwarding) instead of a partial overlap. */
    uintptr_t base = ((uintptr_t)ctx->acc + 63) & ~(uintptr_t)63;
    a->left = (double *)base;
    a->st = st;
    a->right = a->left + (size_t)dim * st;
    return true;
}

/* ---- scalar kernel (baseline ISA and dimensions other than 5) ------------------------------- */

/* Adds f's left limits at pts[0..k) (sorted, inside f's domain) to acc and flags the points
 * where f jumps. The segment at x is upstream's SegmentAt: the first segment whose right end
 * is >= x, or the vertical segment starting at x when there is one. */
PLF_INLINE void add_summand(double *restrict acc, size_t st, unsigned char *restrict split, const struct ps_plf *f,
                            const double *restrict pts, int k, int dim)
{
    const int s = dim + 1;
    const double *p = f->a;                             /* left point of the segment */
    const double *last = f->a + (size_t)(f->n - 1) * s; /* last point */
    int q = 0;
    while (q < k) {
        double x = pts[q];
        const double *r = p + s;
        if (r < last && r[0] < x) {
            do {
                p = r;
                r += s;
            } while (r < last && r[0] < x);
        }
        if (r < last && r[0] == x && r[s] == x && !values_equal(r + 1, r + s + 1, dim)) {
            p = r;
            r += s;
        }
        double *out = acc + q;
        const double *lv = p + 1, *rv = r + 1;
        if (p[0] == r[0]) {
            /* A jump (or a single point): the right limit is added later. */
            split[q] = 1;
            for (int d = 0; d < dim; d++)
                out[(size_t)d * st] += lv[d];
            q++;
            continue;
        }
        /* Every point before the segment's right end uses the same segment: no cursor work. */
        double l = p[0], rb = r[0];
        if (flat_values(lv, rv, dim)) {
            do {
                for (int d = 0; d < dim; d++)
                    out[(size_t)d * st] += lv[d];
                out++;
                q++;
            } while (q < k && pts[q] < rb);
            /* The point at the right end (if any) comes back through the cursor: it may sit at
             * a jump. Its value on this segment would be rv == lv anyway. */
            continue;
        }
        do {
            double v[PS_PLF_MAX_DIM];
            lerp_values(v, lv, rv, seg_param(pts[q], l, rb), dim);
            for (int d = 0; d < dim; d++)
                out[(size_t)d * st] += v[d];
            out++;
            q++;
        } while (q < k && pts[q] < rb);
    }
}

void ps_plf_sum_summand5_base(double *restrict acc, size_t st, unsigned char *restrict split,
                              const struct ps_plf *f, const double *restrict pts, int k)
{
    add_summand(acc, st, split, f, pts, k, PS_PLF_MAX_DIM);
}

/* ---- vector kernels (five components) ----------------------------------------------------- */

#if SUM_WIDE
/* The segment choice of add_summand, and in addition whether the point at the segment's right
 * end may be taken with the segment: add_summand sends it back through the cursor, which keeps
 * the segment (and gives t = 1 there) unless a vertical segment starts at that end. */
PLF_INLINE const double *seek5(const double **pp, const double *last, double x, bool *take_end)
{
    enum { S = PS_PLF_MAX_DIM + 1 };
    const double *p = *pp, *r = p + S;
    while (r < last && r[0] < x) {
        p = r;
        r += S;
    }
    bool jump = r < last && r[S] == r[0] && !values_equal(r + 1, r + S + 1, PS_PLF_MAX_DIM);
    if (jump && r[0] == x) {
        p = r;
        r += S;
    }
    *pp = p;
    *take_end = !jump;
    return r;
}

PLF_INLINE void add_point5(double *restrict acc, size_t st, int q, const double *v)
{
    for (int d = 0; d < PS_PLF_MAX_DIM; d++)
        acc[(size_t)d * st + q] += v[d];
}

/* The flat end of the block kernels: every point from b to k takes the values c. Plain C,
 * vectorized by the compiler at each kernel's level (the sums are the same per point). */
PLF_INLINE void add_flat_end5(double *restrict acc, size_t st, int b, int k, const double *c)
{
    for (int d = 0; d < PS_PLF_MAX_DIM; d++) {
        double *row = acc + (size_t)d * st, v = c[d];
        for (int q = b; q < k; q++)
            row[q] += v;
    }
}

__attribute__((target("avx512f,avx512vl,avx512dq"))) static void
add_summand5_avx512(double *restrict acc, size_t st, unsigned char *restrict split, const struct ps_plf *f,
                    const double *restrict pts, int k)
{
    enum { D = PS_PLF_MAX_DIM, S = D + 1 };
    const double *p = f->a;
    const double *last = f->a + (size_t)(f->n - 1) * S;
    const __m512d one = _mm512_set1_pd(1.0), half = _mm512_set1_pd(0.5), zero = _mm512_setzero_pd();
    int q = 0;
    while (q < k) {
        bool take_end;
        const double *r = seek5(&p, last, pts[q], &take_end);
        const double *lv = p + 1, *rv = r + 1;
        if (p[0] == r[0]) {
            split[q] = 1;
            add_point5(acc, st, q, lv);
            q++;
            continue;
        }
        const __m512d vr = _mm512_set1_pd(r[0]);
        const __mmask8 eq_ok = take_end ? 0xff : 0;
        int b = q & ~7;
        __mmask8 from = (__mmask8)(0xffu << (q - b));
        __m512d c[D], dv[D];
        bool flat = flat_values(lv, rv, D);
        if (flat) {
            for (int d = 0; d < D; d++)
                c[d] = _mm512_set1_pd(lv[d]);
        } else {
            for (int d = 0; d < D; d++)
                dv[d] = _mm512_set1_pd(rv[d] - lv[d]);
        }
        const __m512d vl = _mm512_set1_pd(p[0]), vw = _mm512_set1_pd(r[0] - p[0]);
        for (;;) {
            __m512d x = _mm512_loadu_pd(pts + b);
            __mmask8 m = (__mmask8)((_mm512_cmp_pd_mask(x, vr, _CMP_LT_OQ) |
                                     (_mm512_cmp_pd_mask(x, vr, _CMP_EQ_OQ) & eq_ok)) &
                                    from);
            if (m == 0) {
                q = b;
                break;
            }
            double *row = acc + b;
            if (flat) {
                for (int d = 0; d < D; d++, row += st) {
                    __m512d a = _mm512_load_pd(row);
                    _mm512_store_pd(row, _mm512_mask_add_pd(a, m, a, c[d]));
                }
            } else {
                __m512d t = _mm512_div_pd(_mm512_sub_pd(x, vl), vw);
                t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, vl, _CMP_EQ_OQ), t, zero);
                t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, vr, _CMP_EQ_OQ), t, one);
                __m512d omt = _mm512_sub_pd(one, t);
                __mmask8 left = _mm512_cmp_pd_mask(t, half, _CMP_LT_OQ);
                for (int d = 0; d < D; d++, row += st) {
                    __m512d lo = _mm512_set1_pd(lv[d]), hi = _mm512_set1_pd(rv[d]);
                    __m512d from_left = _mm512_add_pd(lo, _mm512_mul_pd(dv[d], t));
                    __m512d from_right = _mm512_sub_pd(hi, _mm512_mul_pd(dv[d], omt));
                    __m512d v = _mm512_mask_blend_pd(left, from_right, from_left);
                    __m512d a = _mm512_load_pd(row);
                    _mm512_store_pd(row, _mm512_mask_add_pd(a, m, a, v));
                }
            }
            if (!(m & 0x80)) {
                q = b + 32 - __builtin_clz((unsigned)m);
                break;
            }
            b += 8;
            from = 0xff;
        }
    }
}

/* Small summands (most children of leaf pools are operations with ~5 points): at most 8
 * points, arguments strictly increasing (so no jumps and no point segments) and finite values.
 * The kernel goes block by block over all k points with no branch per segment: the segment of
 * each lane is the number of inner breakpoints below its point (upstream's SegmentAt: the first
 * segment whose right end is >= x, which is not vertical here), and its ends and values are
 * picked from the summand's points held in registers. Every lane then performs seg_param and
 * lerp as add_summand does, flat segments included: for equal finite values lv == rv, not -0,
 * d = rv - lv is +0, so lv + d * t is lv and rv - d * (1 - t) is rv (t is in [0, 1]), the
 * value the flat path adds; a segment with a -0 value is not flat for add_summand either.
 *
 * lerp's two forms become one: rv - d * (1 - t) is rv + d * -(1 - t) exactly (IEEE defines
 * a - b as a + (-b), and rounding is symmetric in sign), so each lane adds d * s to b with
 * (b, s) = (lv, t) or (rv, -(1 - t)) by t < 0.5: one pick of b from the values and one of d
 * from the segments' differences (v[j + 1] - v[j], the same subtraction) per component. */
__attribute__((target("avx512f,avx512vl,avx512dq"), always_inline)) static inline void small5_blocks(double *restrict acc, size_t st, const double *restrict pts, int k, int nb,
                              const double *brk, __m512d xs, const __m512d *vs, const __m512d *ds,
                              double xm, const double *c)
{
    enum { D = PS_PLF_MAX_DIM };
    const __m512i one_i = _mm512_set1_epi64(1);
    const __m512d one = _mm512_set1_pd(1.0), half = _mm512_set1_pd(0.5), zero = _mm512_setzero_pd();
    const __m512d neg = _mm512_set1_pd(-0.0);
    /* The accumulator rows have slack after k: the last block's lanes past k (+inf) write
     * there, and nothing reads them. */
    int b = 0;
    for (; b < k && pts[b] < xm; b += 8) {
        __m512d x = _mm512_loadu_pd(pts + b);
        __m512i i0 = _mm512_setzero_si512();
        for (int j = 0; j < nb; j++)
            i0 = _mm512_mask_add_epi64(i0, _mm512_cmp_pd_mask(_mm512_set1_pd(brk[j]), x, _CMP_LT_OQ), i0, one_i);
        __m512i i1 = _mm512_add_epi64(i0, one_i);
        __m512d l = _mm512_permutexvar_pd(i0, xs), r = _mm512_permutexvar_pd(i1, xs);
        __m512d t = _mm512_div_pd(_mm512_sub_pd(x, l), _mm512_sub_pd(r, l));
        t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, l, _CMP_EQ_OQ), t, zero);
        t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, r, _CMP_EQ_OQ), t, one);
        __mmask8 left = _mm512_cmp_pd_mask(t, half, _CMP_LT_OQ);
        __m512d sm = _mm512_mask_blend_pd(left, _mm512_xor_pd(_mm512_sub_pd(one, t), neg), t);
        __m512i ib = _mm512_mask_blend_epi64(left, i1, i0);
        double *row = acc + b;
        for (int d = 0; d < D; d++, row += st) {
            __m512d base = _mm512_permutexvar_pd(ib, vs[d]), dv = _mm512_permutexvar_pd(i0, ds[d]);
            __m512d v = _mm512_add_pd(base, _mm512_mul_pd(dv, sm));
            _mm512_store_pd(row, _mm512_add_pd(_mm512_load_pd(row), v));
        }
    }
    /* The flat end: from xm on, every point takes c (see add_small5_avx512). */
    add_flat_end5(acc, st, b, k, c);
}

__attribute__((target("avx512f,avx512vl,avx512dq"))) static bool
add_small5_avx512(double *restrict acc, size_t st, const struct ps_plf *f, const double *restrict pts, int k)
{
    enum { D = PS_PLF_MAX_DIM, S = D + 1 };
    int n = f->n;
    if (n < 2 || n > 8)
        return false;
    const __mmask8 have = (__mmask8)((1u << n) - 1);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i gi = _mm512_mullo_epi64(lane, _mm512_set1_epi64(S));
    const __m512i next = _mm512_add_epi64(lane, _mm512_set1_epi64(1));
    __m512d xs = _mm512_mask_i64gather_pd(_mm512_setzero_pd(), have, gi, f->a, 8);
    __m512d vs[D], ds[D];
    __mmask8 bad = 0;
    for (int d = 0; d < D; d++) {
        vs[d] = _mm512_mask_i64gather_pd(_mm512_setzero_pd(), have, _mm512_add_epi64(gi, _mm512_set1_epi64(d + 1)),
                                         f->a, 8);
        bad |= _mm512_fpclass_pd_mask(vs[d], 0x99); /* NaN or infinity */
        ds[d] = _mm512_sub_pd(_mm512_permutexvar_pd(next, vs[d]), vs[d]);
    }
    /* x[j] < x[j + 1] for j < n - 1 */
    __mmask8 inc = _mm512_cmp_pd_mask(xs, _mm512_permutexvar_pd(next, xs), _CMP_LT_OQ);
    if ((bad & have) || (inc & (have >> 1)) != (have >> 1))
        return false;
    double brk[6]; /* the inner breakpoints x[1..n-2] */
    for (int j = 0; j + 2 < n; j++)
        brk[j] = f->a[(size_t)(j + 1) * S];
    /* The flat end: from the start x[m] of the last run of flat segments (flat_values, so
     * no value -0 but maybe the very last), every point takes v[m]: inside the run the flat
     * path's lv (equal values that are not -0 have the same bits), at x[m] itself, the right
     * end of the non-flat segment m - 1, lerp's v[m] - d * 0, which is v[m] as it is not -0. */
    int m = n - 1;
    while (m > 0 && flat_values(f->a + (size_t)(m - 1) * S + 1, f->a + (size_t)m * S + 1, D))
        m--;
    double xm = m < n - 1 ? f->a[(size_t)m * S] : INFINITY;
    const double *c = f->a + (size_t)m * S + 1;
    switch (n - 2) { /* the number of inner breakpoints as a constant */
    case 0: small5_blocks(acc, st, pts, k, 0, brk, xs, vs, ds, xm, c); break;
    case 1: small5_blocks(acc, st, pts, k, 1, brk, xs, vs, ds, xm, c); break;
    case 2: small5_blocks(acc, st, pts, k, 2, brk, xs, vs, ds, xm, c); break;
    case 3: small5_blocks(acc, st, pts, k, 3, brk, xs, vs, ds, xm, c); break;
    case 4: small5_blocks(acc, st, pts, k, 4, brk, xs, vs, ds, xm, c); break;
    case 5: small5_blocks(acc, st, pts, k, 5, brk, xs, vs, ds, xm, c); break;
    default: small5_blocks(acc, st, pts, k, 6, brk, xs, vs, ds, xm, c); break;
    }
    return true;
}

/* Larger summands of the same shape (arguments strictly increasing, finite arguments and
 * values), as the pools' functions the root sums are: ~100 points over ~220 critical points,
 * so add_summand5_avx512 would spend a segment's setup and a block's vector work on ~2 points.
 * Here every block of 8 points is one pass, as in small5_blocks, over a window of the summand's
 * points copied to rows per component (structure of arrays, WIN_MAX points at most). Every
 * breakpoint of f inside the common domain is one of the sum's points (they are the merge of
 * all summands' breakpoints, distinct), so the block's 8 points hold at most 7 of f's inner
 * breakpoints at or after its first point and below its last: with s0 the number of inner
 * breakpoints below the block's first point, each lane's segment is s0 plus the count of
 * f's points s0 + 1 .. s0 + 8 below its own (the last point, at or after hi, and the +inf
 * padding never are, but for the padding lanes past k, which write to the rows' slack), and
 * its ends are two of the 16 points from s0 on. The lanes then do small5_blocks' operations. */
enum { WIN_MAX = 256, WIN_PAD = 16 };

/* f's points as rows (xs and one row per component, pad points of +inf and 0 after them, as
 * far as the kernel reads); false when an argument or a value is not finite or the arguments do
 * not strictly increase. Plain C: both window kernels (AVX-512 and AVX2) take these rows. */
static bool window_rows5(const struct ps_plf *f, double *restrict xs, double (*restrict vs)[WIN_MAX + WIN_PAD],
                         int pad)
{
    enum { D = PS_PLF_MAX_DIM, S = D + 1 };
    int n = f->n;
    const double *a = f->a;
    bool ok = true;
    for (int j = 0; j < n; j++, a += S) {
        xs[j] = a[0];
        ok &= isfinite(a[0]);
        for (int d = 0; d < D; d++) {
            vs[d][j] = a[1 + d];
            ok &= isfinite(a[1 + d]);
        }
    }
    if (!ok)
        return false;
    for (int j = n; j < n + pad; j++) {
        xs[j] = INFINITY;
        for (int d = 0; d < D; d++)
            vs[d][j] = 0.0;
    }
    bool inc = true;
    for (int j = 0; j + 1 < n; j++)
        inc &= xs[j] < xs[j + 1];
    return inc;
}

/* The start m of the last run of flat segments (see add_small5_avx512): from xs[m] on (+inf when
 * the last segment is not flat) every point takes the values of point m. */
static int window_flat_end(const struct ps_plf *f)
{
    enum { D = PS_PLF_MAX_DIM, S = D + 1 };
    int m = f->n - 1;
    while (m > 0 && flat_values(f->a + (size_t)(m - 1) * S + 1, f->a + (size_t)m * S + 1, D))
        m--;
    return m;
}

__attribute__((target("avx512f,avx512vl,avx512dq"))) static bool
add_window5_avx512(double *restrict acc, size_t st, const struct ps_plf *f, const double *restrict pts, int k)
{
    enum { D = PS_PLF_MAX_DIM, S = D + 1 };
    int n = f->n;
    if (n < 2 || n > WIN_MAX)
        return false;
    double xs[WIN_MAX + WIN_PAD] __attribute__((aligned(64)));
    double vs[D][WIN_MAX + WIN_PAD] __attribute__((aligned(64)));
    if (!window_rows5(f, xs, vs, WIN_PAD))
        return false;
    /* The flat end, as in add_small5_avx512. */
    int m = window_flat_end(f);
    double xm = m < n - 1 ? xs[m] : INFINITY;
    const __m512i one_i = _mm512_set1_epi64(1);
    const __m512d one = _mm512_set1_pd(1.0), half = _mm512_set1_pd(0.5), zero = _mm512_setzero_pd();
    const __m512d neg = _mm512_set1_pd(-0.0);
    int s0 = 0, b = 0;
    for (; b < k && pts[b] < xm; b += 8) {
        while (s0 + 1 < n - 1 && xs[s0 + 1] < pts[b])
            s0++;
        __m512d x = _mm512_loadu_pd(pts + b);
        __m512i i0 = _mm512_setzero_si512();
        for (int j = 1; j <= 8; j++)
            i0 = _mm512_mask_add_epi64(i0, _mm512_cmp_pd_mask(_mm512_set1_pd(xs[s0 + j]), x, _CMP_LT_OQ), i0, one_i);
        __m512i i1 = _mm512_add_epi64(i0, one_i);
        __m512d x0 = _mm512_loadu_pd(xs + s0), x1 = _mm512_loadu_pd(xs + s0 + 8);
        __m512d l = _mm512_permutex2var_pd(x0, i0, x1), r = _mm512_permutex2var_pd(x0, i1, x1);
        __m512d t = _mm512_div_pd(_mm512_sub_pd(x, l), _mm512_sub_pd(r, l));
        t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, l, _CMP_EQ_OQ), t, zero);
        t = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, r, _CMP_EQ_OQ), t, one);
        __mmask8 left = _mm512_cmp_pd_mask(t, half, _CMP_LT_OQ);
        __m512d sm = _mm512_mask_blend_pd(left, _mm512_xor_pd(_mm512_sub_pd(one, t), neg), t);
        double *row = acc + b;
        for (int d = 0; d < D; d++, row += st) {
            __m512d v0 = _mm512_loadu_pd(vs[d] + s0), v1 = _mm512_loadu_pd(vs[d] + s0 + 8);
            __m512d lv = _mm512_permutex2var_pd(v0, i0, v1), rv = _mm512_permutex2var_pd(v0, i1, v1);
            __m512d base = _mm512_mask_blend_pd(left, rv, lv), dv = _mm512_sub_pd(rv, lv);
            __m512d v = _mm512_add_pd(base, _mm512_mul_pd(dv, sm));
            _mm512_store_pd(row, _mm512_add_pd(_mm512_load_pd(row), v));
        }
    }
    add_flat_end5(acc, st, b, k, f->a + (size_t)m * S + 1);
    return true;
}

void ps_plf_sum_summand5_avx512(double *restrict acc, size_t st, unsigned char *restrict split,
                                const struct ps_plf *f, const double *restrict pts, int k)
{
    if (!add_small5_avx512(acc, st, f, pts, k) && !add_window5_avx512(acc, st, f, pts, k))
        add_summand5_avx512(acc, st, split, f, pts, k);
}

/* A copy of add_summand5_avx512 on 4 lanes (blendv masks for mask registers): C has no templates
 * over vector types, and a macro would hide the lane-by-lane argument for the bits. */
__attribute__((target("avx2"))) static void add_summand5_avx2(double *restrict acc, size_t st,
                                                              unsigned char *restrict split,
                                                              const struct ps_plf *f,
                                                              const double *restrict pts, int k)
{
    enum { D = PS_PLF_MAX_DIM, S = D + 1 };
    const double *p = f->a;
    const double *last = f->a + (size_t)(f->n - 1) * S;
    const __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5), zero = _mm256_setzero_pd();
    const __m256d lane = _mm256_set_pd(3.0, 2.0, 1.0, 0.0);
    int q = 0;
    while (q < k) {
        bool take_end;
        const double *r = seek5(&p, last, pts[q], &take_end);
        const double *lv = p + 1, *rv = r + 1;
        if (p[0] == r[0]) {
            split[q] = 1;
            add_point5(acc, st, q, lv);
            q++;
            continue;
        }
        const __m256d vr = _mm256_set1_pd(r[0]);
        const __m256d eq_ok = _mm256_castsi256_pd(_mm256_set1_epi64x(take_end ? -1 : 0));
        int b = q & ~3;
        __m256d from = _mm256_cmp_pd(lane, _mm256_set1_pd((double)(q - b)), _CMP_GE_OQ);
        __m256d c[D], dv[D];
        bool flat = flat_values(lv, rv, D);
        if (flat) {
            for (int d = 0; d < D; d++)
                c[d] = _mm256_set1_pd(lv[d]);
        } else {
            for (int d = 0; d < D; d++)
                dv[d] = _mm256_set1_pd(rv[d] - lv[d]);
        }
        const __m256d vl = _mm256_set1_pd(p[0]), vw = _mm256_set1_pd(r[0] - p[0]);
        for (;;) {
            __m256d x = _mm256_loadu_pd(pts + b);
            __m256d mv = _mm256_and_pd(
                _mm256_or_pd(_mm256_cmp_pd(x, vr, _CMP_LT_OQ), _mm256_and_pd(_mm256_cmp_pd(x, vr, _CMP_EQ_OQ), eq_ok)),
                from);
            int m = _mm256_movemask_pd(mv);
            if (m == 0) {
                q = b;
                break;
            }
            double *row = acc + b;
            if (flat) {
                for (int d = 0; d < D; d++, row += st) {
                    __m256d a = _mm256_load_pd(row);
                    _mm256_store_pd(row, _mm256_blendv_pd(a, _mm256_add_pd(a, c[d]), mv));
                }
            } else {
                __m256d t = _mm256_div_pd(_mm256_sub_pd(x, vl), vw);
                t = _mm256_blendv_pd(t, zero, _mm256_cmp_pd(x, vl, _CMP_EQ_OQ));
                t = _mm256_blendv_pd(t, one, _mm256_cmp_pd(x, vr, _CMP_EQ_OQ));
                __m256d omt = _mm256_sub_pd(one, t);
                __m256d left = _mm256_cmp_pd(t, half, _CMP_LT_OQ);
                for (int d = 0; d < D; d++, row += st) {
                    __m256d lo = _mm256_set1_pd(lv[d]), hi = _mm256_set1_pd(rv[d]);
                    __m256d from_left = _mm256_add_pd(lo, _mm256_mul_pd(dv[d], t));
                    __m256d from_right = _mm256_sub_pd(hi, _mm256_mul_pd(dv[d], omt));
                    __m256d v = _mm256_blendv_pd(from_right, from_left, left);
                    __m256d a = _mm256_load_pd(row);
                    _mm256_store_pd(row, _mm256_blendv_pd(a, _mm256_add_pd(a, v), mv));
                }
            }
            if (!(m & 0x8)) {
                q = b + 32 - __builtin_clz((unsigned)m);
                break;
            }
            b += 4;
            from = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
        }
    }
}

/* AVX2 has no variable permute of doubles: lane indices i (0..3) become the float lanes
 * 2i, 2i + 1 for pick4. */
__attribute__((target("avx2"), always_inline)) static inline __m256i pick4_index(__m256i idx)
{
    __m256i t = _mm256_slli_epi64(idx, 1);
    return _mm256_add_epi64(_mm256_or_si256(t, _mm256_slli_epi64(t, 32)), _mm256_set1_epi64x((long long)1 << 32));
}

/* Lane i of v at the index pick4_index gave for lane i. */
__attribute__((target("avx2"), always_inline)) static inline __m256d pick4(__m256d v, __m256i pair)
{
    return _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(v), pair));
}

/* add_window5_avx512 on 4 lanes. A block's 4 points hold at most 3 of f's inner breakpoints at
 * or after its first point and below its last (the argument of add_window5_avx512), so each
 * lane's segment is s0 + i, i the count of f's points s0 + 1 .. s0 + 3 below its point, and
 * its ends are the points s0 + i and s0 + 1 + i: lane i of the rows loaded from s0 and from
 * s0 + 1, picked in registers. (Padding lanes past k, +inf, write to the rows' slack, which
 * nothing reads.) Each lane then performs add_window5_avx512's operations in the same order, so
 * the bits are the same. */
__attribute__((target("avx2"))) static bool add_window5_avx2(double *restrict acc, size_t st, const struct ps_plf *f,
                                                             const double *restrict pts, int k)
{
    enum { D = PS_PLF_MAX_DIM };
    int n = f->n;
    if (n < 2 || n > WIN_MAX)
        return false;
    double xs[WIN_MAX + WIN_PAD] __attribute__((aligned(32)));
    double vs[D][WIN_MAX + WIN_PAD] __attribute__((aligned(32)));
    if (!window_rows5(f, xs, vs, 4))   /* a block reads up to 4 points past s0 <= n - 2 */
        return false;
    int m = window_flat_end(f);
    double xm = m < n - 1 ? xs[m] : INFINITY;
    const __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5), zero = _mm256_setzero_pd();
    const __m256d neg = _mm256_set1_pd(-0.0);
    int s0 = 0, b = 0;
    for (; b < k && pts[b] < xm; b += 4) {
        while (s0 + 1 < n - 1 && xs[s0 + 1] < pts[b])
            s0++;
        __m256d x = _mm256_loadu_pd(pts + b);
        /* minus the count: each compare is -1 where true */
        __m256i i0 = _mm256_setzero_si256();
        for (int j = 1; j <= 3; j++)
            i0 = _mm256_sub_epi64(i0, _mm256_castpd_si256(_mm256_cmp_pd(_mm256_set1_pd(xs[s0 + j]), x, _CMP_LT_OQ)));
        __m256i pi = pick4_index(i0);
        __m256d l = pick4(_mm256_loadu_pd(xs + s0), pi), r = pick4(_mm256_loadu_pd(xs + s0 + 1), pi);
        __m256d t = _mm256_div_pd(_mm256_sub_pd(x, l), _mm256_sub_pd(r, l));
        t = _mm256_blendv_pd(t, zero, _mm256_cmp_pd(x, l, _CMP_EQ_OQ));
        t = _mm256_blendv_pd(t, one, _mm256_cmp_pd(x, r, _CMP_EQ_OQ));
        __m256d left = _mm256_cmp_pd(t, half, _CMP_LT_OQ);
        __m256d sm = _mm256_blendv_pd(_mm256_xor_pd(_mm256_sub_pd(one, t), neg), t, left);
        double *row = acc + b;
        for (int d = 0; d < D; d++, row += st) {
            __m256d lv = pick4(_mm256_loadu_pd(vs[d] + s0), pi), rv = pick4(_mm256_loadu_pd(vs[d] + s0 + 1), pi);
            __m256d base = _mm256_blendv_pd(rv, lv, left), dv = _mm256_sub_pd(rv, lv);
            __m256d v = _mm256_add_pd(base, _mm256_mul_pd(dv, sm));
            _mm256_store_pd(row, _mm256_add_pd(_mm256_load_pd(row), v));
        }
    }
    add_flat_end5(acc, st, b, k, f->a + (size_t)m * (D + 1) + 1);
    return true;
}

void ps_plf_sum_summand5_avx2(double *restrict acc, size_t st, unsigned char *restrict split,
                              const struct ps_plf *f, const double *restrict pts, int k)
{
    if (!add_window5_avx2(acc, st, f, pts, k))
        add_summand5_avx2(acc, st, split, f, pts, k);
}
#endif

/* ---- right limits and the output ---------------------------------------------------------- */

/* Adds f's right limits at the flagged points pts[idx[0..m)] (increasing) to racc, with the
 * same segment choice as add_summand. */
PLF_INLINE void add_right_limits(double *restrict racc, const struct ps_plf *f, const double *restrict pts,
                                 const int *idx, int m, int dim)
{
    const int s = dim + 1;
    const double *p = f->a;
    const double *last = f->a + (size_t)(f->n - 1) * s;
    for (int j = 0; j < m; j++) {
        double x = pts[idx[j]];
        const double *r = p + s;
        while (r < last && r[0] < x) {
            p = r;
            r += s;
        }
        if (r < last && r[0] == x && r[s] == x && !values_equal(r + 1, r + s + 1, dim)) {
            p = r;
            r += s;
        }
        double *out = racc + (size_t)j * dim;
        const double *lv = p + 1, *rv = r + 1;
        if (p[0] == r[0]) {
            for (int d = 0; d < dim; d++)
                out[d] += rv[d];
        } else if (flat_values(lv, rv, dim)) {
            for (int d = 0; d < dim; d++)
                out[d] += lv[d];
        } else {
            double v[PS_PLF_MAX_DIM];
            lerp_values(v, lv, rv, seg_param(x, p[0], r[0]), dim);
            for (int d = 0; d < dim; d++)
                out[d] += v[d];
        }
    }
}

/* The output: the left sum at every point, and the right sum after it at the flagged points,
 * through the builder's merges (append_d), which here reduce to a few flags kept in registers
 * instead of reads of the last two points. The points are distinct and come left then right, so
 * for the new point (x, v) and the last point m (which has v's values in prev):
 * - a left point is never at m's x: it moves m (replaces it) when the last segment is vertical
 *   and a point (lvx && lflat), or horizontal and v equals m (lflat && flat); the last segment
 *   is then not vertical, and horizontal when v equals m;
 * - a right point is at m's x (m is its left point): it is dropped when equal to m, else pushed
 *   (moving needs a vertical last segment, and m's, ending in a left point, is not). The builder
 *   pushes any second point (the one-point case). The last segment is then vertical.
 * Every point is written at its slot with its own bits, as append_d writes it. */
PLF_INLINE void build_output(struct ps_plf_buf *dst, const double *pts, int k, int dim, const double *acc,
                             size_t st, const unsigned char *split, const double *racc, int m)
{
    if (!ps_plf_buf_reserve(dst, k + m))
        return;
    const size_t s = (size_t)dim + 1;
    double *o = dst->a;
    double prev[PS_PLF_MAX_DIM] = {0};
    int u = 0;
    bool lvx = false, lflat = false;
    for (int p = 0, j = 0; p < k; p++) {
        double v[PS_PLF_MAX_DIM];
        bool flat = true;
        for (int d = 0; d < dim; d++) {
            v[d] = acc[(size_t)d * st + p];
            flat &= v[d] == prev[d];
        }
        bool move = u >= 2 && (lvx ? lflat : lflat && flat);
        u -= move;
        double *w = o + (size_t)u * s;
        w[0] = pts[p];
        for (int d = 0; d < dim; d++)
            w[1 + d] = prev[d] = v[d];
        u++;
        lvx = false;
        lflat = flat;
        if (split[p]) {
            const double *r = racc + (size_t)j++ * dim;
            bool same = values_equal(prev, r, dim);
            if (u == 1 || !same) {
                w = o + (size_t)u * s;
                w[0] = pts[p];
                for (int d = 0; d < dim; d++)
                    w[1 + d] = prev[d] = r[d];
                u++;
                lvx = true;
                lflat = same;
            }
        }
    }
    dst->n = u;
}

PLF_INLINE void sum_build(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *fs, int count,
                          const double *pts, int k, int dim, const struct sum_acc *a, ps_sum_summand5_fn *add5)
{
    double *acc = a->left;
    size_t st = a->st;
    unsigned char *split = ctx->split;
    memset(acc, 0, (size_t)dim * st * sizeof *acc);
    memset(split, 0, (size_t)k);
    for (int i = 0; i < count; i++) {
        if (add5)
            add5(acc, st, split, &fs[i], pts, k);
        else
            add_summand(acc, st, split, &fs[i], pts, k, dim);
    }
    /* The right sums at the points where some summand jumps, summand by summand. */
    int *idx = ctx->split_idx, m = 0;
    for (int p = 0; p < k; p++)
        if (split[p])
            idx[m++] = p;
    double *racc = a->right;
    if (m > 0) {
        memset(racc, 0, (size_t)m * (size_t)dim * sizeof *racc);
        for (int i = 0; i < count; i++)
            add_right_limits(racc, &fs[i], pts, idx, m, dim);
    }
    build_output(dst, pts, k, dim, acc, st, split, racc, m);
}

void ps_plf_sum(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *fs, int count)
{
    int dim = fs[0].dim;
    ps_plf_buf_clear(dst, dim);
    double lo = -DBL_MAX, hi = DBL_MAX;
    int total = 0;
    for (int i = 0; i < count; i++) {
        if (ps_plf_left_bound(&fs[i]) > lo)
            lo = ps_plf_left_bound(&fs[i]);
        if (ps_plf_right_bound(&fs[i]) < hi)
            hi = ps_plf_right_bound(&fs[i]);
        total += fs[i].n;
    }
    int k = ps_plf_sum_points(ctx, fs, count, total, lo, hi, SUM_PAD);
    struct sum_acc a;
    if (k <= 0 || !reserve_acc(ctx, k, dim, &a))
        return;
    for (int i = 0; i < SUM_PAD; i++)
        ctx->pts[k + i] = INFINITY;
    if (dim == PS_PLF_MAX_DIM)
        sum_build(ctx, dst, fs, count, ctx->pts, k, PS_PLF_MAX_DIM, &a, ps_kernels()->sum_summand5);
    else if (dim == 1)
        sum_build(ctx, dst, fs, count, ctx->pts, k, 1, &a, NULL);
    else
        sum_build(ctx, dst, fs, count, ctx->pts, k, dim, &a, NULL);
}
