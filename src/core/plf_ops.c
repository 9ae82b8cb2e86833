/* plf_ops.c — sorting of critical points and the composition of piecewise-linear functions,
 * with the same sampling points as upstream: the generic composition, and for share vectors the
 * composition fused with the compression (AVX-512 and AVX2 forms). The sum is in plf_sum.c, the
 * pointwise minimum in plf_min.c, the compression on its own in plf_compress.c. */
#include "core/plf.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "core/bisect.h"
#include "core/isa_kernels.h"
#include "core/plf_impl.h"
#include "core/plf_vec256.h"
#include "core/plf_vec512.h"

/* ---- sorting ------------------------------------------------------------------------------ */

/* Records of `width` doubles compared lexicographically on their first `keys` doubles. */
static inline bool rec_less(const double *a, const double *b, int keys)
{
    for (int k = 0; k < keys; k++) {
        if (a[k] < b[k])
            return true;
        if (b[k] < a[k])
            return false;
    }
    return false;
}

/* Natural merge sort: the inputs here are concatenations of a few sorted runs (the critical
 * points of each summand), so merging runs is close to linear. Stable. */
static void sort_records(struct ps_plf_ctx *ctx, double *xs, int n, int width)
{
    if (n < 2)
        return;
    int descents = 0;
    for (int i = 1; i < n; i++)
        if (rec_less(xs + (size_t)i * width, xs + (size_t)(i - 1) * width, width))
            descents++;
    if (descents == 0)
        return;
    if (!ps_plf_ctx_reserve_tmp(ctx, n * width) || !ps_plf_ctx_reserve_cursors(ctx, descents + 2))
        return;
    int *runs = ctx->cursors;
    int nruns = 0;
    runs[nruns++] = 0;
    for (int i = 1; i < n; i++)
        if (rec_less(xs + (size_t)i * width, xs + (size_t)(i - 1) * width, width))
            runs[nruns++] = i;
    runs[nruns] = n;
    double *src = xs, *dst = ctx->tmp;
    while (nruns > 1) {
        int out = 0;
        for (int r = 0; r < nruns; r += 2) {
            int a = runs[r], mid, b;
            if (r + 1 < nruns) {
                mid = runs[r + 1];
                b = runs[r + 2];
            } else {
                mid = b = runs[r + 1];
            }
            int i = a, j = mid, k = a;
            while (i < mid && j < b) {
                const double *take;
                if (rec_less(src + (size_t)j * width, src + (size_t)i * width, width))
                    take = src + (size_t)j++ * width;
                else
                    take = src + (size_t)i++ * width;
                for (int w = 0; w < width; w++)
                    dst[(size_t)k * width + w] = take[w];
                k++;
            }
            for (; i < mid; i++, k++)
                for (int w = 0; w < width; w++)
                    dst[(size_t)k * width + w] = src[(size_t)i * width + w];
            for (; j < b; j++, k++)
                for (int w = 0; w < width; w++)
                    dst[(size_t)k * width + w] = src[(size_t)j * width + w];
            runs[out++] = a;
        }
        runs[out] = n;
        nruns = out;
        double *t = src;
        src = dst;
        dst = t;
    }
    if (src != xs)
        memcpy(xs, src, (size_t)n * width * sizeof *xs);
}

void ps_plf_sort_pairs(struct ps_plf_ctx *ctx, double *xs, int n)
{
    sort_records(ctx, xs, n, 2);
}

int ps_plf_clear_and_sort(struct ps_plf_ctx *ctx, double *xs, int n, double lo, double hi)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!(xs[i] < lo || xs[i] > hi))
            xs[k++] = xs[i];
    sort_records(ctx, xs, k, 1);
    if (k == 0)
        return 0;
    int u = 1;
    for (int i = 1; i < k; i++)
        if (!(xs[i] == xs[u - 1]))
            xs[u++] = xs[i];
    return u;
}

/* ---- pointwise minimum: plf_min.c -------------------------------------------------------- */

/* ---- composition -------------------------------------------------------------------------- */

/* Cursor versions of LeftLimitAt and RightLimitAt for increasing x. */
PLF_INLINE void cursor_left_limit_d(const struct ps_plf *f, int dim, int *cur, double x, double *out)
{
    int i = *cur, last = f->n - 2;
    while (i < last && XD(f, dim, i + 1) < x)
        i++;
    *cur = i;
    seg_left_limit_d(f, dim, i, x, out);
}

PLF_INLINE void cursor_right_limit_d(const struct ps_plf *f, int dim, int *cur, double x, double *out)
{
    int i = *cur;
    while (i + 1 <= f->n - 2 && XD(f, dim, i + 1) <= x)
        i++;
    *cur = i;
    seg_right_limit_d(f, dim, i, x, out);
}

/* The (argument, inner value) pairs of a composition in upstream's sorted order: g's points
 * and the extra points where g crosses a critical point of f strictly inside one of its tilted
 * segments. g is non-decreasing, so those extras lie between the segment's end points in both
 * coordinates and the sorted order is a walk along g that emits each tilted segment's extras
 * after its left point: one merge of g's segments with f's critical points (upstream sorts the
 * two lists; on ties g's pair would come first, but an extra never ties with a point of g, its
 * inner value being strictly inside). Returns the number of pairs, or -1 when g decreases
 * somewhere (or has a NaN value), which compose_pairs_merge handles. */
static int compose_pairs(double *out, const struct ps_plf *f, const struct ps_plf *g)
{
    const double *fa = f->a, *ga = g->a;
    const int fn = f->n, gn = g->n;
    const size_t fs = (size_t)f->dim + 1;
    int k = 0, q = 0;
    for (int i = 0; i < gn; i++) {
        double x0 = ga[2 * i], y0 = ga[2 * i + 1];
        out[2 * k] = x0;
        out[2 * k + 1] = y0;
        k++;
        if (i + 1 == gn)
            break;
        double x1 = ga[2 * i + 2], y1 = ga[2 * i + 3];
        if (!(y1 >= y0))
            return -1;
        if (x0 == x1 || y0 == y1)
            continue;
        /* f's critical points (its arguments without repeats) strictly between y0 and y1. */
        while (q < fn && fa[(size_t)q * fs] <= y0)
            q++;
        while (q < fn && fa[(size_t)q * fs] < y1) {
            double y = fa[(size_t)q * fs];
            double t = (y - y0) / (y1 - y0);
            out[2 * k] = lerp(x0, x1, t);
            out[2 * k + 1] = y;
            k++;
            while (q < fn && fa[(size_t)q * fs] == y)
                q++;
        }
    }
    return k;
}

/* Segment of the transposed g that upstream's SegmentAt would pick for argument y; y must not
 * decrease between calls with the same cursor. */
static int inverse_segment_at(const struct ps_plf *g, int *cur, double y)
{
    int i = *cur, last = g->n - 2;
    while (i < last && VD(g, 1, i + 1)[0] < y)
        i++;
    if (i < last && VD(g, 1, i + 1)[0] == y && VD(g, 1, i + 2)[0] == y && XD(g, 1, i + 1) != XD(g, 1, i + 2))
        i++;
    *cur = i;
    return i;
}

/* compose_pairs for any g, as upstream: the extras found by looking up each critical point of
 * f in g (into extra), then merged with g's points (into out); on ties g's pair comes first, as
 * in a stable merge. */
static int compose_pairs_merge(double *out, double *extra, const struct ps_plf *f, const struct ps_plf *g)
{
    int nextra = 0;
    double ymin = V(g, 0)[0], ymax = V(g, g->n - 1)[0];
    int inv = 0;
    /* f's critical points (ps_plf_critical_points: the left bound and each larger argument)
     * straight from its points; they increase, so the ones above g's range end the walk. */
    double prev = 0.0;
    for (int q = 0; q < f->n; q++) {
        double y = X(f, q);
        if (q > 0 && !(y > prev))
            continue;
        prev = y;
        if (y > ymax)
            break;
        if (!(y >= ymin && y <= ymax))
            continue;
        int i = inverse_segment_at(g, &inv, y);
        double x0 = XD(g, 1, i), x1 = XD(g, 1, i + 1), y0 = VD(g, 1, i)[0], y1 = VD(g, 1, i + 1)[0];
        bool tilted = x0 != x1 && y0 != y1;
        if (tilted && y != y0 && y != y1) {
            double t = (y - y0) / (y1 - y0);
            extra[2 * nextra] = lerp(x0, x1, t);
            extra[2 * nextra + 1] = y;
            nextra++;
        }
    }
    int ig = 0, ie = 0, k = 0;
    while (ig < g->n || ie < nextra) {
        bool from_g = ie >= nextra;
        if (!from_g && ig < g->n) {
            double ex = extra[2 * ie], ey = extra[2 * ie + 1];
            double gx = XD(g, 1, ig), gy = VD(g, 1, ig)[0];
            from_g = !(ex < gx || (ex == gx && ey < gy));
        }
        const double *src = from_g ? g->a + 2 * ig++ : extra + 2 * ie++;
        out[2 * k] = src[0];
        out[2 * k + 1] = src[1];
        k++;
    }
    return k;
}

PLF_INLINE void compose_build(struct ps_plf_buf *dst, const struct ps_plf *f, const double *pairs, int total,
                              int dim)
{
    double v[PS_PLF_MAX_DIM];
    int cl = 0, cr = 0;
    double px = 0.0, x = 0.0, y = 0.0, nx = 0.0, ny = 0.0;
    if (total == 0)
        return;
    x = pairs[0];
    y = pairs[1];
    for (int i = 0; i < total; i++) {
        if (i + 1 < total) {
            nx = pairs[2 * i + 2];
            ny = pairs[2 * i + 3];
        }
        bool added = false;
        if (i == 0 || px != x) {
            /* Upstream picks LeftLimitAt or ValueAt here; for left-continuous functions they
             * are the same. */
            cursor_left_limit_d(f, dim, &cl, y, v);
            buf_add_point_d(dst, dim, x, v);
            added = true;
        }
        if (i + 1 == total || nx != x) {
            bool right = i + 1 < total && ny > y;
            /* The point just added is (x, v) and the builder drops a repeat of it (once it has
             * two points), so the second sample can be skipped when it has the same value: the
             * left limit again, or the right limit of the segment cl when y lies strictly
             * inside it (X(cl) <= y holds as cl only passes points below some earlier y, and
             * the right cursor, never past cl, stops at cl too). Most pairs are such points. */
            if (added && dst->n >= 2 && (!right || XD(f, dim, cl + 1) > y)) {
                px = x;
                x = nx;
                y = ny;
                continue;
            }
            if (right)
                cursor_right_limit_d(f, dim, &cr, y, v);
            else
                cursor_left_limit_d(f, dim, &cl, y, v);
            buf_add_point_d(dst, dim, x, v);
        }
        px = x;
        x = nx;
        y = ny;
    }
}

#if defined(PLF_HAVE_VEC512)
/* compose_build's samples of f at the pair (x, y) for the vector builders below, cl and cr the
 * cursors of the left and right limits. The cursor steps are scalar and shared by the AVX-512
 * and AVX2 forms: the segment (its left point) of the left limit at y. */
PLF_INLINE const double *compose_left_seg(const double *fa, int flast, int *cl, double y)
{
    while (*cl < flast && fa[(size_t)(*cl + 1) * PLF5_STRIDE] < y)
        (*cl)++;
    return fa + (size_t)*cl * PLF5_STRIDE;
}

/* The segment of the second sample, at the last pair of an argument: the right limit's when the
 * next pair's value is larger (right), else the left one's. NULL when it is skipped: after a
 * first sample at x (kept: the builder holds two points) when it would repeat that one (see
 * compose_build). */
PLF_INLINE const double *compose_right_seg(const double *fa, int flast, int *cl, int *cr, bool kept, bool right,
                                           double y)
{
    if (kept && (!right || fa[(size_t)(*cl + 1) * PLF5_STRIDE] > y))
        return NULL;
    if (!right)
        return compose_left_seg(fa, flast, cl, y);
    while (*cr + 1 <= flast && fa[(size_t)(*cr + 1) * PLF5_STRIDE] <= y)
        (*cr)++;
    return fa + (size_t)*cr * PLF5_STRIDE;
}

/* The left limit, taken when x is a new argument. */
PLF_INLINE512 __m512d compose_left5(const double *fa, int flast, int *cl, double x, double y)
{
    return pt5_with_x(seg5_limit(compose_left_seg(fa, flast, cl, y), y, false), x);
}

/* The second sample; false when it is skipped. */
PLF_INLINE512 bool compose_right5(const double *fa, int flast, int *cl, int *cr, bool kept, bool right, double x,
                                  double y, __m512d *p)
{
    const double *pp = compose_right_seg(fa, flast, cl, cr, kept, right, y);
    if (!pp)
        return false;
    *p = pt5_with_x(seg5_limit(pp, y, right), x);
    return true;
}

/* compose_build for share vectors with the points in registers (plf_vec512.h): the same
 * samples in the same order, the builder's merges decided by vector compares. */
static PLF_TARGET512 void compose_build5_avx512(struct ps_plf_buf *dst, const struct ps_plf *f,
                                                const double *pairs, int total)
{
    const double *fa = f->a;
    const int flast = f->n - 2;
    int cl = 0, cr = 0;
    double px = 0.0, x = 0.0, y = 0.0, nx = 0.0, ny = 0.0;
    if (total == 0)
        return;
    struct vb5 vb;
    vb5_start(&vb, dst);
    x = pairs[0];
    y = pairs[1];
    for (int i = 0; i < total; i++) {
        if (i + 1 < total) {
            nx = pairs[2 * i + 2];
            ny = pairs[2 * i + 3];
        }
        bool added = false;
        if (i == 0 || px != x) {
            vb5_add(&vb, compose_left5(fa, flast, &cl, x, y));
            added = true;
        }
        __m512d p;
        if ((i + 1 == total || nx != x) && compose_right5(fa, flast, &cl, &cr, added && vb.n >= 2, i + 1 < total && ny > y, x, y, &p))
            vb5_add(&vb, p);
        px = x;
        x = nx;
        y = ny;
    }
    vb5_finish(&vb);
}

/* compose_build5_avx512 followed by compress_share_avx512 without the composed function in
 * memory: the composition's builder keeps only its last two points, and a point is final (no
 * later merge of append_d touches it) once another one is pushed after it, so that is when it
 * goes to the compression's stream (struct cz5); the last point goes after the composition's
 * trim_right. Returns false when the stream cannot vouch for the batch compression's result
 * (cz5_finish). */
struct vf5 {
    __m512d l, m;  /* points n - 2 and n - 1 (when they exist) */
    unsigned lm;   /* lanes where l and m are equal (when n >= 2) */
    int n;
};

/* vb5_add, handing a point that becomes final to the compression (a copy of its steps with the
 * stores replaced by cz5_feed; the merge rules are shared: vb5_rule). */
PLF_INLINE512 void vf5_add(struct vf5 *vb, struct cz5 *z, __m512d p)
{
    if (__builtin_expect(vb->n < 2, 0)) {
        if (vb->n == 1)
            cz5_feed(z, vb->m, _mm_cvtsd_f64(_mm512_castpd512_pd128(vb->m)));
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
        vb->lm = _mm512_cmp_pd_mask(vb->l, p, _CMP_EQ_OQ);
        vb->m = p;
        return;
    }
    cz5_feed(z, vb->m, _mm_cvtsd_f64(_mm512_castpd512_pd128(vb->m)));
    vb->n++;
    vb->lm = mp;
    vb->l = vb->m;
    vb->m = p;
}

/* ps_plf_trim_right on the builder's last two points, then the last point to the stream. */
PLF_INLINE512 void vf5_finish(struct vf5 *vb, struct cz5 *z)
{
    if (vb->n == 0)
        return;
    if (vb->n >= 2) {
        /* seg_vertical: equal arguments, some value not equal (NaN included). */
        bool vertical = (vb->lm & 1) && (vb->lm & PLF5_VALUES) != PLF5_VALUES;
        if (vertical) {
            if (vb->n > 2)
                return;  /* the last point is dropped; l went to the stream already */
            vb->m = _mm512_mask_mov_pd(vb->l, 1, vb->m);  /* l's values at m's argument */
        }
    }
    cz5_feed(z, vb->m, _mm_cvtsd_f64(_mm512_castpd512_pd128(vb->m)));
}

/* compose_pairs as a generator: the same pairs in the same order, without storing them (they
 * are mostly g's own points). fail is set where compose_pairs returns -1. */
struct pairs_gen {
    const double *ga, *fa;
    int gn, fn, gi, q;
    bool extras, fail;
    double x0, y0, x1, y1;
};

PLF_INLINE bool pairs_next(struct pairs_gen *p, double *x, double *y)
{
    if (p->extras) {
        if (p->q < p->fn && p->fa[(size_t)p->q * PLF5_STRIDE] < p->y1) {
            double fy = p->fa[(size_t)p->q * PLF5_STRIDE];
            double t = (fy - p->y0) / (p->y1 - p->y0);
            *x = lerp(p->x0, p->x1, t);
            *y = fy;
            while (p->q < p->fn && p->fa[(size_t)p->q * PLF5_STRIDE] == fy)
                p->q++;
            return true;
        }
        p->extras = false;
    }
    if (p->gi >= p->gn)
        return false;
    const double *gp = p->ga + 2 * (size_t)p->gi++;
    double x0 = gp[0], y0 = gp[1];
    *x = x0;
    *y = y0;
    if (p->gi < p->gn) {
        double x1 = gp[2], y1 = gp[3];
        if (!(y1 >= y0)) {
            p->fail = true;
            p->gi = p->gn;  /* the caller starts over with compose_pairs_merge */
            return true;
        }
        if (x0 != x1 && y0 != y1) {
            while (p->q < p->fn && p->fa[(size_t)p->q * PLF5_STRIDE] <= y0)
                p->q++;
            p->extras = true;
            p->x0 = x0;
            p->y0 = y0;
            p->x1 = x1;
            p->y1 = y1;
        }
    }
    return true;
}

/* With pairs == NULL the pairs come from pairs_gen over g (false when g decreases somewhere). */
static PLF_TARGET512 bool compose_compress5_avx512(struct ps_plf_buf *dst, const struct ps_plf *f,
                                                   const struct ps_plf *g, const double *pairs, int total,
                                                   double epsilon)
{
    const double *fa = f->a;
    const int flast = f->n - 2;
    int cl = 0, cr = 0;
    double px = 0.0, x = 0.0, y = 0.0, nx = 0.0, ny = 0.0;
    struct pairs_gen gen = {g->a, fa, g->n, f->n, 0, 0, false, false, 0.0, 0.0, 0.0, 0.0};
    int next = 0;  /* index of the next stored pair */
#define NEXT_PAIR(px_, py_)                                                                              \
    (pairs ? (next < total ? ((px_) = pairs[2 * next], (py_) = pairs[2 * next + 1], next++, true) : false) \
           : pairs_next(&gen, &(px_), &(py_)))
    struct cz5 z;
    cz5_start(&z, dst, epsilon);
    struct vf5 vb = {_mm512_setzero_pd(), _mm512_setzero_pd(), 0, 0};
    if (!NEXT_PAIR(x, y))
        return cz5_finish(&z);
    vb.lm = _mm512_cmp_pd_mask(vb.l, vb.m, _CMP_EQ_OQ);
    bool has_next = NEXT_PAIR(nx, ny), first = true;
    for (;;) {
        bool added = false;
        if (first || px != x) {
            vf5_add(&vb, &z, compose_left5(fa, flast, &cl, x, y));
            added = true;
        }
        __m512d p;
        if ((!has_next || nx != x) && compose_right5(fa, flast, &cl, &cr, added && vb.n >= 2, has_next && ny > y, x, y, &p))
            vf5_add(&vb, &z, p);
        if (!has_next)
            break;
        px = x;
        x = nx;
        y = ny;
        first = false;
        has_next = NEXT_PAIR(nx, ny);
    }
#undef NEXT_PAIR
    if (gen.fail)
        return false;
    vf5_finish(&vb, &z);
    return cz5_finish(&z);
}

#if defined(PLF_HAVE_VEC256)
/* compose_left5, compose_right5, vf5 and compose_compress5_avx512 for CPUs with AVX2 but not
 * AVX-512: the same steps with a point in two registers (plf_vec256.h). */
PLF_INLINE256 struct p5 compose_left5y(const double *fa, int flast, int *cl, double x, double y)
{
    return p5_with_x(seg5y_limit(compose_left_seg(fa, flast, cl, y), y, false), x);
}

PLF_INLINE256 bool compose_right5y(const double *fa, int flast, int *cl, int *cr, bool kept, bool right, double x,
                                   double y, struct p5 *p)
{
    const double *pp = compose_right_seg(fa, flast, cl, cr, kept, right, y);
    if (!pp)
        return false;
    *p = p5_with_x(seg5y_limit(pp, y, right), x);
    return true;
}

struct vf5y {
    struct p5 l, m;
    unsigned lm;
    int n;
};

PLF_INLINE256 void vf5y_add(struct vf5y *vb, struct cz5y *z, struct p5 p)
{
    if (__builtin_expect(vb->n < 2, 0)) {
        if (vb->n == 1)
            cz5y_feed(z, vb->m, p5_x(vb->m));
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
        vb->lm = p5_cmp_mask(vb->l, p, _CMP_EQ_OQ);
        vb->m = p;
        return;
    }
    cz5y_feed(z, vb->m, p5_x(vb->m));
    vb->n++;
    vb->lm = mp;
    vb->l = vb->m;
    vb->m = p;
}

PLF_INLINE256 void vf5y_finish(struct vf5y *vb, struct cz5y *z)
{
    if (vb->n == 0)
        return;
    if (vb->n >= 2) {
        bool vertical = (vb->lm & 1) && (vb->lm & PLF5_VALUES) != PLF5_VALUES;
        if (vertical) {
            if (vb->n > 2)
                return;
            vb->m.b = vb->l.b;  /* l's values at m's argument */
            vb->m.a = _mm256_blend_pd(vb->l.a, vb->m.a, 1);
        }
    }
    cz5y_feed(z, vb->m, p5_x(vb->m));
}

static PLF_TARGET256 bool compose_compress5_avx2(struct ps_plf_buf *dst, const struct ps_plf *f,
                                                 const struct ps_plf *g, const double *pairs, int total,
                                                 double epsilon)
{
    const double *fa = f->a;
    const int flast = f->n - 2;
    int cl = 0, cr = 0;
    double px = 0.0, x = 0.0, y = 0.0, nx = 0.0, ny = 0.0;
    struct pairs_gen gen = {g->a, fa, g->n, f->n, 0, 0, false, false, 0.0, 0.0, 0.0, 0.0};
    int next = 0;
#define NEXT_PAIR(px_, py_)                                                                              \
    (pairs ? (next < total ? ((px_) = pairs[2 * next], (py_) = pairs[2 * next + 1], next++, true) : false) \
           : pairs_next(&gen, &(px_), &(py_)))
    struct cz5y z;
    cz5y_start(&z, dst, epsilon);
    struct vf5y vb = {p5_zero(), p5_zero(), 0, 0};
    if (!NEXT_PAIR(x, y))
        return cz5y_finish(&z);
    vb.lm = p5_cmp_mask(vb.l, vb.m, _CMP_EQ_OQ);
    bool has_next = NEXT_PAIR(nx, ny), first = true;
    for (;;) {
        bool added = false;
        if (first || px != x) {
            vf5y_add(&vb, &z, compose_left5y(fa, flast, &cl, x, y));
            added = true;
        }
        struct p5 p;
        if ((!has_next || nx != x) && compose_right5y(fa, flast, &cl, &cr, added && vb.n >= 2, has_next && ny > y, x, y, &p))
            vf5y_add(&vb, &z, p);
        if (!has_next)
            break;
        px = x;
        x = nx;
        y = ny;
        first = false;
        has_next = NEXT_PAIR(nx, ny);
    }
#undef NEXT_PAIR
    if (gen.fail)
        return false;
    vf5y_finish(&vb, &z);
    return cz5y_finish(&z);
}
#endif
#endif

#if defined(PLF_HAVE_VEC512)
void ps_plf_compose_build5_avx512(struct ps_plf_buf *dst, const struct ps_plf *f, const double *pairs, int total)
{
    compose_build5_avx512(dst, f, pairs, total);
}
#endif

void ps_plf_compose_build5_base(struct ps_plf_buf *dst, const struct ps_plf *f, const double *pairs, int total)
{
    compose_build(dst, f, pairs, total, PS_PLF_MAX_DIM);
}

void ps_plf_compose(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *f,
                    const struct ps_plf *g)
{
    int dim = f->dim;
    ps_plf_buf_clear(dst, dim);
    /* The pairs (at most one per point of g and per point of f), then the fallback's extras. */
    if (!ps_plf_ctx_reserve_pairs(ctx, 2 * (g->n + 2 * f->n)))
        return;
    double *pairs = ctx->pairs;
    int total = compose_pairs(pairs, f, g);
    if (total < 0)
        total = compose_pairs_merge(pairs, pairs + 2 * ((size_t)g->n + (size_t)f->n), f, g);
    if (dim == PS_PLF_MAX_DIM)
        ps_kernels()->compose_build5(dst, f, pairs, total);
    else if (dim == 1)
        compose_build(dst, f, pairs, total, 1);
    else
        compose_build(dst, f, pairs, total, dim);
    ps_plf_trim_right(dst);
}

/* The composition into tmp, then its compression into dst. */
static void compose_then_compress(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                                  const struct ps_plf *f, const struct ps_plf *g, double epsilon)
{
    ps_plf_compose(ctx, tmp, f, g);
    struct ps_plf composed = ps_plf_buf_view(tmp);
    ps_plf_compress(dst, &composed, epsilon);
}

void ps_plf_compose_compress5_base(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                                   const struct ps_plf *f, const struct ps_plf *g, double epsilon)
{
    compose_then_compress(ctx, dst, tmp, f, g, epsilon);
}

#if defined(PLF_HAVE_VEC256)
/* The fused kernel of the level: a point in one 512-bit register, or in two 256-bit ones. */
PLF_INLINE bool compose_compress5(bool wide512, struct ps_plf_buf *dst, const struct ps_plf *f,
                                  const struct ps_plf *g, const double *pairs, int total, double epsilon)
{
    if (wide512)
        return compose_compress5_avx512(dst, f, g, pairs, total, epsilon);
    return compose_compress5_avx2(dst, f, g, pairs, total, epsilon);
}

/* The fused kernel on g's own points, or on the pairs merged as upstream's where g decreases
 * somewhere; the two steps where the stream could not vouch for the compression. */
PLF_INLINE void compose_compress_fused(bool wide512, struct ps_plf_ctx *ctx, struct ps_plf_buf *dst,
                                       struct ps_plf_buf *tmp, const struct ps_plf *f, const struct ps_plf *g,
                                       double epsilon)
{
    ps_plf_buf_clear(dst, PS_PLF_MAX_DIM);
    if (compose_compress5(wide512, dst, f, g, NULL, 0, epsilon))
        return;
    if (!ps_plf_ctx_reserve_pairs(ctx, 2 * (g->n + 2 * f->n)))
        return;
    double *pairs = ctx->pairs;
    int total = compose_pairs(pairs, f, g);
    if (total < 0) {
        total = compose_pairs_merge(pairs, pairs + 2 * ((size_t)g->n + (size_t)f->n), f, g);
        ps_plf_buf_clear(dst, PS_PLF_MAX_DIM);
        if (compose_compress5(wide512, dst, f, g, pairs, total, epsilon))
            return;
    }
    compose_then_compress(ctx, dst, tmp, f, g, epsilon);
}

void ps_plf_compose_compress5_avx512(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                                     const struct ps_plf *f, const struct ps_plf *g, double epsilon)
{
    compose_compress_fused(true, ctx, dst, tmp, f, g, epsilon);
}

void ps_plf_compose_compress5_avx2(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                                   const struct ps_plf *f, const struct ps_plf *g, double epsilon)
{
    compose_compress_fused(false, ctx, dst, tmp, f, g, epsilon);
}
#endif

void ps_plf_compose_compress(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                             const struct ps_plf *f, const struct ps_plf *g, double epsilon)
{
    if (f->dim == PS_PLF_MAX_DIM)
        ps_kernels()->compose_compress5(ctx, dst, tmp, f, g, epsilon);
    else
        compose_then_compress(ctx, dst, tmp, f, g, epsilon);
}
