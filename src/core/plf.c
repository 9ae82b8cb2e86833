/* plf.c — builder, reading and unary transformations of piecewise-linear functions. */
#include "core/plf.h"
#include "core/plf_emit.h"
#include "core/isa_kernels.h"
#include "core/plf_impl.h"
#include "core/plf_vec512.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- context and builder ---------------------------------------------------------------- */

void ps_plf_ctx_init(struct ps_plf_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
}

void ps_plf_ctx_release(struct ps_plf_ctx *ctx)
{
    free(ctx->pts);
    free(ctx->tmp);
    free(ctx->pairs);
    free(ctx->cursors);
    free(ctx->acc);
    free(ctx->split);
    free(ctx->split_idx);
    memset(ctx, 0, sizeof *ctx);
}

/* ctx's scratch arrays grow by ps_plf_grow_capacity: the array p with *cap items of `size` bytes
 * to at least n items. The new array, or NULL (and ctx->oom) with p and *cap left as they were. */
static void *ctx_grow(struct ps_plf_ctx *ctx, void *p, int *cap, int n, size_t size)
{
    int c = (int)ps_plf_grow_capacity((size_t)*cap, (size_t)n);
    void *q = realloc(p, (size_t)c * size);
    if (!q) {
        ctx->oom = true;
        return NULL;
    }
    *cap = c;
    return q;
}

bool ps_plf_ctx_reserve_points(struct ps_plf_ctx *ctx, int n)
{
    if (n <= ctx->pts_cap)
        return true;
    double *p = ctx_grow(ctx, ctx->pts, &ctx->pts_cap, n, sizeof *p);
    if (p)
        ctx->pts = p;
    return p != NULL;
}

bool ps_plf_ctx_reserve_tmp(struct ps_plf_ctx *ctx, int n)
{
    if (n <= ctx->tmp_cap)
        return true;
    double *p = ctx_grow(ctx, ctx->tmp, &ctx->tmp_cap, n, sizeof *p);
    if (p)
        ctx->tmp = p;
    return p != NULL;
}

bool ps_plf_ctx_reserve_pairs(struct ps_plf_ctx *ctx, int n)
{
    if (n <= ctx->pairs_cap)
        return true;
    double *p = ctx_grow(ctx, ctx->pairs, &ctx->pairs_cap, n, sizeof *p);
    if (p)
        ctx->pairs = p;
    return p != NULL;
}

bool ps_plf_ctx_reserve_cursors(struct ps_plf_ctx *ctx, int n)
{
    if (n <= ctx->cursors_cap)
        return true;
    int *p = ctx_grow(ctx, ctx->cursors, &ctx->cursors_cap, n, sizeof *p);
    if (p)
        ctx->cursors = p;
    return p != NULL;
}

void ps_plf_buf_init(struct ps_plf_buf *b, int dim, bool *oom)
{
    b->a = NULL;
    b->n = 0;
    b->cap = 0;
    b->dim = dim;
    b->cap_d = 0;
    b->oom = oom;
}

void ps_plf_buf_release(struct ps_plf_buf *b)
{
    free(b->a);
    b->a = NULL;
    b->n = b->cap = 0;
    b->cap_d = 0;
}

bool ps_plf_buf_reserve(struct ps_plf_buf *b, int points)
{
    if (points <= b->cap)
        return true;
    /* Capacity is counted in doubles, so a scalar builder holds 16 bytes per point and a
     * builder that switches between scalar and vector use keeps its memory. */
    size_t stride = (size_t)(b->dim + 1);
    size_t need = (size_t)points * stride;
    size_t cap = ps_plf_grow_capacity(b->cap_d, need);
    double *a = realloc(b->a, cap * sizeof *a);
    if (!a) {
        *b->oom = true;
        return false;
    }
    b->a = a;
    b->cap_d = cap;
    b->cap = (int)(cap / stride);
    return true;
}

static inline double *bpt(struct ps_plf_buf *b, int i)
{
    return b->a + (size_t)i * (size_t)(b->dim + 1);
}

static void push_raw(struct ps_plf_buf *b, double x, const double *v)
{
    if (b->dim == 1)
        push_raw_d(b, 1, x, v);
    else if (b->dim == PS_PLF_MAX_DIM)
        push_raw_d(b, PS_PLF_MAX_DIM, x, v);
    else
        push_raw_d(b, b->dim, x, v);
}

static void append(struct ps_plf_buf *b, double x, const double *v)
{
    if (b->dim == 1)
        append_d(b, 1, x, v);
    else if (b->dim == PS_PLF_MAX_DIM)
        append_d(b, PS_PLF_MAX_DIM, x, v);
    else
        append_d(b, b->dim, x, v);
}

void ps_plf_add_point(struct ps_plf_buf *b, double x, const double *v)
{
    if (b->n == 0)
        push_raw(b, x, v);
    else
        append(b, x, v);
}

void ps_plf_push_segment(struct ps_plf_buf *b, double x0, const double *v0, double x1, const double *v1)
{
    if (b->n == 0)
        push_raw(b, x0, v0);
    append(b, x1, v1);
}

/* ---- reading ------------------------------------------------------------------------------ */

/* The first segment whose right end is >= x (upstream LeftSegmentAt). */
static int left_segment(const struct ps_plf *f, double x)
{
    int lo = 1, hi = f->n - 1;  /* search points 1..n-1 for the first with X >= x */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (X(f, mid) < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* The last segment whose left end is <= x (upstream RightSegmentAt). */
static int right_segment(const struct ps_plf *f, double x)
{
    int lo = 0, hi = f->n - 2;  /* last point index in [0, n-2] with X <= x */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (X(f, mid) <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int segment_at(const struct ps_plf *f, double x)
{
    int i = left_segment(f, x);
    if (i + 1 <= f->n - 2 && X(f, i + 1) == x && seg_vertical(f, i + 1))
        i++;
    return i;
}

void ps_plf_value_at(const struct ps_plf *f, double x, double *out)
{
    if (f->n < 2) {
        memset(out, 0, (size_t)f->dim * sizeof *out);
        return;
    }
    if (f->dim == PS_PLF_MAX_DIM)
        seg_left_limit_d(f, PS_PLF_MAX_DIM, left_segment(f, x), x, out);
    else
        seg_left_limit(f, left_segment(f, x), x, out);
}

double ps_plf_scalar_at(const struct ps_plf *f, double x)
{
    double v = 0.0;
    ps_plf_value_at(f, x, &v);
    return v;
}

void ps_plf_limits_at(const struct ps_plf *f, double x, double *left, double *right)
{
    if (f->n < 2) {
        memset(left, 0, (size_t)f->dim * sizeof *left);
        memset(right, 0, (size_t)f->dim * sizeof *right);
        return;
    }
    seg_limits(f, segment_at(f, x), x, left, right);
}

void ps_plf_right_limit_at(const struct ps_plf *f, double x, double *out)
{
    if (f->n < 2) {
        memset(out, 0, (size_t)f->dim * sizeof *out);
        return;
    }
    seg_right_limit(f, right_segment(f, x), x, out);
}

void ps_plf_cursor_limits_at(const struct ps_plf *f, struct ps_plf_cursor *c, double x,
                             double *left, double *right)
{
    if (f->n < 2) {
        memset(left, 0, (size_t)f->dim * sizeof *left);
        memset(right, 0, (size_t)f->dim * sizeof *right);
        return;
    }
    seg_limits(f, cursor_segment_at(f, c, x), x, left, right);
}

void ps_plf_cursor_value_at(const struct ps_plf *f, struct ps_plf_cursor *c, double x, double *out)
{
    if (f->n < 2) {
        memset(out, 0, (size_t)f->dim * sizeof *out);
        return;
    }
    int last = f->n - 2;
    int i = c->seg;
    while (i < last && X(f, i + 1) < x)
        i++;
    c->seg = i;
    seg_left_limit(f, i, x, out);
}

int ps_plf_critical_points(const struct ps_plf *f, double *out)
{
    if (f->n < 1)
        return 0;
    int k = 0;
    double last = X(f, 0);
    out[k++] = last;
    for (int j = 1; j < f->n; j++) {
        double x = X(f, j);
        if (x > last) {
            out[k++] = x;
            last = x;
        }
    }
    return k;
}

/* ---- unary transformations ---------------------------------------------------------------- */

void ps_plf_extract_component(struct ps_plf_buf *dst, const struct ps_plf *src, int r)
{
    ps_plf_buf_clear(dst, 1);
    for (int i = 0; i + 1 < src->n; i++)
        ps_plf_push_segment(dst, X(src, i), V(src, i) + r, X(src, i + 1), V(src, i + 1) + r);
}

/* The segment copies of scale_argument and extend, with the builder specialised by dimension
 * (share vectors, in every fair share update's children views, and scalars). */
PLF_INLINE void scale_argument_d(struct ps_plf_buf *dst, const struct ps_plf *src, double scale, int dim)
{
    for (int i = 0; i + 1 < src->n; i++)
        buf_push_segment_d(dst, dim, XD(src, dim, i) / scale, VD(src, dim, i), XD(src, dim, i + 1) / scale,
                           VD(src, dim, i + 1));
}

PLF_INLINE void copy_segments_d(struct ps_plf_buf *dst, const struct ps_plf *src, int dim)
{
    for (int i = 0; i + 1 < src->n; i++)
        buf_push_segment_d(dst, dim, XD(src, dim, i), VD(src, dim, i), XD(src, dim, i + 1), VD(src, dim, i + 1));
}

#if defined(PLF_HAVE_VEC512)
/* scale_argument_d (divide) or copy_segments_d for share vectors with the builder of
 * plf_vec512.h: its merges decided by vector compares on the last two points in registers, the
 * same decisions as append_d's. */
static PLF_TARGET512 void copy_segments5_avx512(struct ps_plf_buf *dst, const struct ps_plf *src, bool divide,
                                                double scale)
{
    struct vb5 vb;
    vb5_start(&vb, dst);
    const double *a = src->a;
    for (int i = 0; i + 1 < src->n; i++) {
        const double *p = a + (size_t)i * PLF5_STRIDE;
        if (__builtin_expect(vb.n == 0, 0)) {
            __m512d v = pt5_load(p);
            vb5_add(&vb, divide ? pt5_with_x(v, p[0] / scale) : v);
        }
        __m512d v = pt5_load(p + PLF5_STRIDE);
        vb5_add(&vb, divide ? pt5_with_x(v, p[PLF5_STRIDE] / scale) : v);
    }
    vb5_finish(&vb);
}

void ps_plf_scale_argument5_avx512(struct ps_plf_buf *dst, const struct ps_plf *src, double scale)
{
    copy_segments5_avx512(dst, src, true, scale);
}

void ps_plf_copy_segments5_avx512(struct ps_plf_buf *dst, const struct ps_plf *src)
{
    copy_segments5_avx512(dst, src, false, 1.0);
}
#endif

void ps_plf_scale_argument5_base(struct ps_plf_buf *dst, const struct ps_plf *src, double scale)
{
    scale_argument_d(dst, src, scale, PS_PLF_MAX_DIM);
}

void ps_plf_copy_segments5_base(struct ps_plf_buf *dst, const struct ps_plf *src)
{
    copy_segments_d(dst, src, PS_PLF_MAX_DIM);
}

void ps_plf_scale_argument(struct ps_plf_buf *dst, const struct ps_plf *src, double scale)
{
    ps_plf_buf_clear(dst, src->dim);
    if (src->dim == PS_PLF_MAX_DIM)
        ps_kernels()->scale_argument5(dst, src, scale);
    else if (src->dim == 1)
        scale_argument_d(dst, src, scale, 1);
    else
        scale_argument_d(dst, src, scale, src->dim);
}

void ps_plf_shift(struct ps_plf_buf *dst, const struct ps_plf *src, double dx, const double *dv)
{
    int dim = src->dim;
    double l[PS_PLF_MAX_DIM], r[PS_PLF_MAX_DIM];
    ps_plf_buf_clear(dst, dim);
    for (int i = 0; i + 1 < src->n; i++) {
        const double *lv = V(src, i), *rv = V(src, i + 1);
        for (int k = 0; k < dim; k++) {
            double d = dv ? dv[k] : 0.0;
            l[k] = lv[k] + d;
            r[k] = rv[k] + d;
        }
        ps_plf_push_segment(dst, X(src, i) + dx, l, X(src, i + 1) + dx, r);
    }
}

void ps_plf_extend(struct ps_plf_buf *dst, const struct ps_plf *src, double new_left,
                   const double *left_value, double new_right, const double *right_value)
{
    int dim = src->dim;
    double lb = X(src, 0), rb = X(src, src->n - 1);
    const double *lv = left_value ? left_value : V(src, 0);
    const double *rv = right_value ? right_value : V(src, src->n - 1);
    ps_plf_buf_clear(dst, dim);
    if (new_left < lb) {
        ps_plf_push_segment(dst, new_left, lv, lb, lv);
        if (!values_equal(lv, V(src, 0), dim))
            ps_plf_push_segment(dst, lb, lv, lb, V(src, 0));
    }
    if (dim == PS_PLF_MAX_DIM)
        ps_kernels()->copy_segments5(dst, src);
    else if (dim == 1)
        copy_segments_d(dst, src, 1);
    else
        copy_segments_d(dst, src, dim);
    if (rb < new_right) {
        const double *last = V(src, src->n - 1);
        if (!values_equal(rv, last, dim))
            ps_plf_push_segment(dst, rb, last, rb, rv);
        ps_plf_push_segment(dst, rb, rv, new_right, rv);
    }
}

void ps_plf_narrow(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *src,
                   double lo, double hi)
{
    int dim = src->dim;
    ps_plf_buf_clear(dst, dim);
    if (!ps_plf_ctx_reserve_points(ctx, src->n + 2))
        return;
    int k = ps_plf_critical_points(src, ctx->pts);
    ctx->pts[k++] = lo;
    ctx->pts[k++] = hi;
    double left_bound = X(src, 0) > lo ? X(src, 0) : lo;
    double right_bound = X(src, src->n - 1) < hi ? X(src, src->n - 1) : hi;
    k = ps_plf_clear_and_sort(ctx, ctx->pts, k, left_bound, right_bound);
    struct ps_plf_cursor c = {0};
    double l[PS_PLF_MAX_DIM], r[PS_PLF_MAX_DIM];
    for (int i = 0; i < k; i++) {
        double x = ctx->pts[i];
        ps_plf_cursor_limits_at(src, &c, x, l, r);
        /* Upstream adds the zero constant; +0.0 normalises negative zeros the same way. */
        for (int j = 0; j < dim; j++) {
            l[j] = l[j] + 0.0;
            r[j] = r[j] + 0.0;
        }
        ps_plf_add_point(dst, x, l);
        ps_plf_add_point(dst, x, r);
    }
}

void ps_plf_transpose(struct ps_plf_buf *b)
{
    for (int i = 0; i < b->n; i++) {
        double *p = bpt(b, i);
        double t = p[0];
        p[0] = p[1];
        p[1] = t;
    }
}

void ps_plf_trim_left(struct ps_plf_buf *b)
{
    if (b->n < 2)
        return;
    struct ps_plf f = ps_plf_buf_view(b);
    if (!seg_vertical(&f, 0))
        return;
    int stride = b->dim + 1;
    if (b->n > 2) {
        memmove(b->a, b->a + stride, (size_t)(b->n - 1) * (size_t)stride * sizeof *b->a);
        b->n--;
    } else {
        memcpy(b->a + 1, b->a + stride + 1, (size_t)b->dim * sizeof *b->a);
    }
}

void ps_plf_trim_right(struct ps_plf_buf *b)
{
    if (b->n < 2)
        return;
    struct ps_plf f = ps_plf_buf_view(b);
    if (!seg_vertical(&f, b->n - 2))
        return;
    if (b->n > 2) {
        b->n--;
    } else {
        double *p1 = bpt(b, 1);
        memcpy(p1 + 1, b->a + 1, (size_t)b->dim * sizeof *b->a);
    }
}

/* ---- fused max fit factor component ------------------------------------------------------- */

/* The first point index with x > value (n if none). */
static int first_point_above(const struct ps_plf *f, double value)
{
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (X(f, mid) <= value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Upstream's Narrow of the transposed component t to [g, limit] into b: the limits at g, every
 * point strictly inside, the limits at limit; a point that the sampling of upstream's Narrow
 * would add twice is dropped by the builder anyway. Only the junctions go through the
 * builder's merge rules: the points in between come from a canonical function, where no merge
 * applies, and are copied. Values get +0.0 (upstream adds the zero constant). */
static void mffc_narrow(struct ps_plf_buf *b, const struct ps_plf *t, double g, double limit)
{
    ps_plf_buf_clear(b, 1);
    double l, rr;
    seg_limits(t, segment_at(t, g), g, &l, &rr);
    l += 0.0;
    rr += 0.0;
    buf_add_point_d(b, 1, g, &l);
    buf_add_point_d(b, 1, g, &rr);
    if (limit > g) {
        int j = first_point_above(t, g);
        int end = j;
        while (end < t->n && X(t, end) < limit)
            end++;
        /* Two points through the builder: rounding at g can make the first piece flat where
         * the original was not, and then it merges with a flat piece after it. */
        for (int first = 0; first < 2 && j < end; first++, j++) {
            double v = V(t, j)[0] + 0.0;
            buf_add_point_d(b, 1, X(t, j), &v);
        }
        if (j < end && ps_plf_buf_reserve(b, b->n + (end - j))) {
            double *out = bpt(b, b->n);
            for (int q = j; q < end; q++) {
                *out++ = X(t, q);
                *out++ = V(t, q)[0] + 0.0;
            }
            b->n += end - j;
        }
        seg_limits(t, segment_at(t, limit), limit, &l, &rr);
        l += 0.0;
        rr += 0.0;
        buf_add_point_d(b, 1, limit, &l);
        buf_add_point_d(b, 1, limit, &rr);
    }
}

/* TrimLeft without moving the points: a vertical first segment is skipped (the view starts one
 * point later), or collapsed to its top when it is the only one. */
static struct ps_plf mffc_trim_left(struct ps_plf_buf *b)
{
    struct ps_plf nw = ps_plf_buf_view(b);
    if (nw.n >= 2 && seg_vertical(&nw, 0)) {
        if (nw.n > 2) {
            nw.a += 2;
            nw.n--;
        } else {
            b->a[1] = b->a[3];
        }
    }
    return nw;
}

void ps_plf_max_fit_factor_component(struct ps_plf_buf *t1, struct ps_plf_buf *t2, struct ps_plf_buf *dst,
                                     const struct ps_plf *fsbff, int r, double limit, double guarantee)
{
    /* Transposition commutes with the builder's merges (they are symmetric in vertical and
     * horizontal), so the component is built transposed in one pass. */
    ps_plf_buf_clear(t1, 1);
    if (fsbff->n >= 2) {
        /* push_segment of each segment: the first adds both ends, the others their right end. */
        struct ps_plf_emitter e = ps_plf_emit_start(t1);
        for (int i = 0; i < fsbff->n; i++)
            ps_plf_emit(&e, V(fsbff, i)[r], X(fsbff, i));
        ps_plf_emit_end(&e);
    }
    struct ps_plf t = ps_plf_buf_view(t1);
    if (t.n < 2)
        return;
    double lv = V(fsbff, 0)[r], rv = V(fsbff, fsbff->n - 1)[r];
    limit = limit < lv ? lv : limit;
    limit = rv < limit ? rv : limit;
    double g = guarantee < lv ? lv : guarantee;
    g = limit < g ? limit : g;

    /* Narrow into dst, trim left and shift by -g there in place; when two arguments collapse
     * under the shift (rare), narrow again into t2 and shift through the builder. */
    mffc_narrow(dst, &t, g, limit);
    struct ps_plf nw = mffc_trim_left(dst);
    /* x + -g is x itself, bit for bit, when g is +0.0 (not -0.0: -0.0 + 0.0 is +0.0). */
    bool identity = g == 0.0 && !signbit(g);
    if (nw.n < 2) {
        dst->n = 0; /* as the builder's shift of a single point */
    } else if (!identity || nw.a != dst->a) {
        /* One pass: the shifted points are written in place (reads at or after the writes)
         * while looking for two different arguments that the shift makes equal (never when g
         * is a zero); then the pass is void and the old second buffer takes over. The values
         * were normalised by the narrowing (+0.0 is idempotent). */
        bool collapsed = false;
        double *out = dst->a;
        double px = nw.a[0], ps = px + -g;
        out[0] = ps;
        out[1] = nw.a[1];
        for (int i = 1; i < nw.n; i++) {
            double x = nw.a[2 * i], xs = x + -g;
            collapsed |= (px != x) & (ps == xs);
            out[2 * i] = xs;
            out[2 * i + 1] = nw.a[2 * i + 1];
            px = x;
            ps = xs;
        }
        dst->n = nw.n;
        if (collapsed) {
            mffc_narrow(t2, &t, g, limit);
            nw = mffc_trim_left(t2);
            ps_plf_buf_clear(dst, 1);
            for (int i = 0; i + 1 < nw.n; i++) {
                double a = V(&nw, i)[0] + 0.0, b = V(&nw, i + 1)[0] + 0.0;
                buf_push_segment_d(dst, 1, X(&nw, i) + -g, &a, X(&nw, i + 1) + -g, &b);
            }
        }
    }
    /* Extend to 1 with the last value (a copy through a builder is the identity, so the tail
     * is appended in place) and trim. */
    if (dst->n >= 2) {
        double rb = bpt(dst, dst->n - 1)[0];
        if (rb < 1.0) {
            double v = bpt(dst, dst->n - 1)[1];
            buf_push_segment_d(dst, 1, rb, &v, 1.0, &v);
        }
    }
    ps_plf_trim_right(dst);
}
