/* plf_ops.c — n-ary operations on piecewise-linear functions: sum, pointwise minimum,
 * composition and compression, with the same sampling points and summation order as upstream. */
#include "core/plf.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "core/bisect.h"

/* ---- sorting ------------------------------------------------------------------------------ */

static bool reserve_tmp(struct ps_plf_ctx *ctx, int n)
{
    if (n <= ctx->tmp_cap)
        return true;
    int cap = ctx->tmp_cap ? ctx->tmp_cap : 64;
    while (cap < n)
        cap *= 2;
    double *p = realloc(ctx->tmp, (size_t)cap * sizeof *p);
    if (!p) {
        ctx->oom = true;
        return false;
    }
    ctx->tmp = p;
    ctx->tmp_cap = cap;
    return true;
}

static bool reserve_cursors(struct ps_plf_ctx *ctx, int n)
{
    if (n <= ctx->cursors_cap)
        return true;
    int cap = ctx->cursors_cap ? ctx->cursors_cap : 64;
    while (cap < n)
        cap *= 2;
    int *p = realloc(ctx->cursors, (size_t)cap * sizeof *p);
    if (!p) {
        ctx->oom = true;
        return false;
    }
    ctx->cursors = p;
    ctx->cursors_cap = cap;
    return true;
}

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
    if (!reserve_tmp(ctx, n * width) || !reserve_cursors(ctx, descents + 2))
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
                if (rec_less(src + (size_t)j * width, src + (size_t)i * width, width))
                    memcpy(dst + (size_t)k++ * width, src + (size_t)j++ * width, (size_t)width * sizeof *src);
                else
                    memcpy(dst + (size_t)k++ * width, src + (size_t)i++ * width, (size_t)width * sizeof *src);
            }
            if (i < mid)
                memcpy(dst + (size_t)k * width, src + (size_t)i * width, (size_t)(mid - i) * width * sizeof *src);
            k += mid - i;
            if (j < b)
                memcpy(dst + (size_t)k * width, src + (size_t)j * width, (size_t)(b - j) * width * sizeof *src);
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

/* ---- helpers on views --------------------------------------------------------------------- */

static inline double X(const struct ps_plf *f, int i)
{
    return f->a[(size_t)i * (size_t)(f->dim + 1)];
}

static inline const double *V(const struct ps_plf *f, int i)
{
    return f->a + (size_t)i * (size_t)(f->dim + 1) + 1;
}

static inline double lerp(double lv, double rv, double t)
{
    return t < 0.5 ? lv + (rv - lv) * t : rv - (rv - lv) * (1 - t);
}

/* A scalar segment (l, lv) - (r, rv). */
struct sseg {
    double l, lv, r, rv;
};

static inline double sseg_value(const struct sseg *s, double x)
{
    if (s->l == s->r)
        return s->lv;
    double t = (x - s->l) / (s->r - s->l);
    return lerp(s->lv, s->rv, t);
}

static struct sseg scalar_segment(const struct ps_plf *f, int i)
{
    struct sseg s = {X(f, i), V(f, i)[0], X(f, i + 1), V(f, i + 1)[0]};
    return s;
}

/* Upstream RightSegmentAt traverser: the last segment with a left end <= x. */
static int cursor_right_segment(const struct ps_plf *f, int *cur, double x)
{
    while (*cur + 1 <= f->n - 2 && X(f, *cur + 1) <= x)
        (*cur)++;
    return *cur;
}

/* ---- sum ---------------------------------------------------------------------------------- */

void ps_plf_sum(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *fs, int count)
{
    int dim = fs[0].dim;
    ps_plf_buf_clear(dst, dim);
    double lo = -DBL_MAX, hi = DBL_MAX;
    int total = 0;
    for (int i = 0; i < count; i++) {
        if (X(&fs[i], 0) > lo)
            lo = X(&fs[i], 0);
        if (X(&fs[i], fs[i].n - 1) < hi)
            hi = X(&fs[i], fs[i].n - 1);
        total += fs[i].n;
    }
    if (!ps_plf_ctx_reserve_points(ctx, total) || !reserve_cursors(ctx, count))
        return;
    int k = 0;
    for (int i = 0; i < count; i++)
        k += ps_plf_critical_points(&fs[i], ctx->pts + k);
    k = ps_plf_clear_and_sort(ctx, ctx->pts, k, lo, hi);
    /* sort_records may have used the cursor array for runs; (re)initialise it now. */
    if (!reserve_cursors(ctx, count))
        return;
    struct ps_plf_cursor *cur = (struct ps_plf_cursor *)ctx->cursors;
    for (int i = 0; i < count; i++)
        cur[i].seg = 0;
    double left[PS_PLF_MAX_DIM], right[PS_PLF_MAX_DIM], cl[PS_PLF_MAX_DIM], cr[PS_PLF_MAX_DIM];
    for (int p = 0; p < k; p++) {
        double x = ctx->pts[p];
        for (int d = 0; d < dim; d++)
            left[d] = right[d] = 0.0;
        for (int i = 0; i < count; i++) {
            ps_plf_cursor_limits_at(&fs[i], &cur[i], x, cl, cr);
            for (int d = 0; d < dim; d++) {
                left[d] += cl[d];
                right[d] += cr[d];
            }
        }
        ps_plf_add_point(dst, x, left);
        ps_plf_add_point(dst, x, right);
    }
}

/* ---- pointwise minimum -------------------------------------------------------------------- */

struct crossing {
    const struct sseg *lo, *hi;
};

static bool below_or_equal(double x, void *arg)
{
    const struct crossing *c = arg;
    return sseg_value(c->lo, x) <= sseg_value(c->hi, x);
}

void ps_plf_pointwise_min(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *f,
                          const struct ps_plf *g)
{
    ps_plf_buf_clear(dst, 1);
    double lo = X(f, 0) > X(g, 0) ? X(f, 0) : X(g, 0);
    double hi = X(f, f->n - 1) < X(g, g->n - 1) ? X(f, f->n - 1) : X(g, g->n - 1);
    int cap = 2 * (f->n + g->n) + 2;
    if (!ps_plf_ctx_reserve_points(ctx, cap))
        return;
    double *pts = ctx->pts;
    int k = ps_plf_critical_points(f, pts);
    k += ps_plf_critical_points(g, pts + k);
    k = ps_plf_clear_and_sort(ctx, pts, k, lo, hi);
    int initial = k;
    int cf = 0, cg = 0;
    for (int i = 1; i < initial; i++) {
        double a = pts[i - 1], b = pts[i];
        struct sseg sf = scalar_segment(f, cursor_right_segment(f, &cf, a));
        struct sseg sg = scalar_segment(g, cursor_right_segment(g, &cg, a));
        /* std::minmax: the second is the minimum only when strictly smaller. */
        struct crossing c;
        if (sseg_value(&sg, a) < sseg_value(&sf, a)) {
            c.lo = &sg;
            c.hi = &sf;
        } else {
            c.lo = &sf;
            c.hi = &sg;
        }
        if (sseg_value(c.lo, a) < sseg_value(c.hi, a) && sseg_value(c.lo, b) > sseg_value(c.hi, b))
            pts[k++] = ps_bisect_inverse_lower_bound(a, b, below_or_equal, &c);
    }
    k = ps_plf_clear_and_sort(ctx, pts, k, lo, hi);
    struct ps_plf_cursor uf = {0}, ug = {0};
    for (int i = 0; i < k; i++) {
        double x = pts[i];
        double fl, fr, gl, gr;
        ps_plf_cursor_limits_at(f, &uf, x, &fl, &fr);
        ps_plf_cursor_limits_at(g, &ug, x, &gl, &gr);
        double l = gl < fl ? gl : fl;
        double r = gr < fr ? gr : fr;
        ps_plf_add_point(dst, x, &l);
        ps_plf_add_point(dst, x, &r);
    }
}

/* ---- composition -------------------------------------------------------------------------- */

static bool reserve_pairs(struct ps_plf_ctx *ctx, int n)
{
    if (2 * n <= ctx->pairs_cap)
        return true;
    int cap = ctx->pairs_cap ? ctx->pairs_cap : 128;
    while (cap < 2 * n)
        cap *= 2;
    double *p = realloc(ctx->pairs, (size_t)cap * sizeof *p);
    if (!p) {
        ctx->oom = true;
        return false;
    }
    ctx->pairs = p;
    ctx->pairs_cap = cap;
    return true;
}

/* Segment of the transposed g that upstream's SegmentAt would pick for argument y. */
static int inverse_segment_at(const struct ps_plf *g, double y)
{
    int lo = 1, hi = g->n - 1;  /* first point with value >= y */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (V(g, mid)[0] < y)
            lo = mid + 1;
        else
            hi = mid;
    }
    int i = lo - 1;
    if (i + 1 <= g->n - 2 && V(g, i + 1)[0] == y && V(g, i + 2)[0] == y && X(g, i + 1) != X(g, i + 2))
        i++;
    return i;
}

void ps_plf_compose(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *f,
                    const struct ps_plf *g)
{
    int dim = f->dim;
    ps_plf_buf_clear(dst, dim);
    if (!reserve_pairs(ctx, g->n + f->n) || !ps_plf_ctx_reserve_points(ctx, f->n))
        return;
    double *pairs = ctx->pairs;
    int np = 0;
    for (int j = 0; j < g->n; j++) {
        pairs[2 * np] = X(g, j);
        pairs[2 * np + 1] = V(g, j)[0];
        np++;
    }
    int nf = ps_plf_critical_points(f, ctx->pts);
    double ymin = V(g, 0)[0], ymax = V(g, g->n - 1)[0];
    for (int q = 0; q < nf; q++) {
        double y = ctx->pts[q];
        if (!(y >= ymin && y <= ymax))
            continue;
        int i = inverse_segment_at(g, y);
        double x0 = X(g, i), x1 = X(g, i + 1), y0 = V(g, i)[0], y1 = V(g, i + 1)[0];
        bool tilted = x0 != x1 && y0 != y1;
        if (tilted && y != y0 && y != y1) {
            double t = (y - y0) / (y1 - y0);
            pairs[2 * np] = lerp(x0, x1, t);
            pairs[2 * np + 1] = y;
            np++;
        }
    }
    sort_records(ctx, pairs, np, 2);
    double v[PS_PLF_MAX_DIM];
    for (int i = 0; i < np; i++) {
        double x = pairs[2 * i], y = pairs[2 * i + 1];
        if (i == 0 || pairs[2 * (i - 1)] != x) {
            /* Upstream picks LeftLimitAt or ValueAt here; for left-continuous functions they
             * are the same. */
            ps_plf_value_at(f, y, v);
            ps_plf_add_point(dst, x, v);
        }
        if (i + 1 == np || pairs[2 * (i + 1)] != x) {
            if (i + 1 < np && pairs[2 * (i + 1) + 1] > y)
                ps_plf_right_limit_at(f, y, v);
            else
                ps_plf_value_at(f, y, v);
            ps_plf_add_point(dst, x, v);
        }
    }
    ps_plf_trim_right(dst);
}

/* ---- compression -------------------------------------------------------------------------- */

/* Sign of the cross product of the direction vectors of two scalar segments. */
static int compare_segments(const struct sseg *a, const struct sseg *b)
{
    double adb = a->r - a->l, adv = a->rv - a->lv;
    double bdb = b->r - b->l, bdv = b->rv - b->lv;
    double cross = adb * bdv - bdb * adv;
    if (cross > 0)
        return 1;
    if (cross < 0)
        return -1;
    return 0;
}

static void component_segment(const struct ps_plf *f, int from, int to, int r, struct sseg *s)
{
    s->l = X(f, from);
    s->lv = V(f, from)[r];
    s->r = X(f, to);
    s->rv = V(f, to)[r];
}

static void bounds_of(const struct sseg *s, double eps, struct sseg *top, struct sseg *bottom)
{
    *top = *s;
    top->rv = s->rv + eps;
    *bottom = *s;
    bottom->rv = s->rv - eps;
}

void ps_plf_compress(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon)
{
    int dim = src->dim;
    ps_plf_buf_clear(dst, dim);
    int nseg = src->n - 1;
    if (nseg < 1)
        return;
    struct sseg top[PS_PLF_MAX_DIM], bottom[PS_PLF_MAX_DIM];
    int start = 0, end = 1;
    for (int r = 0; r < dim; r++) {
        struct sseg s;
        component_segment(src, 0, 1, r, &s);
        bounds_of(&s, epsilon, &top[r], &bottom[r]);
    }
    for (int i = 1; i < nseg; i++) {
        bool extend = true;
        for (int r = 0; r < dim; r++) {
            struct sseg joined, ctop, cbottom;
            component_segment(src, start, i + 1, r, &joined);
            bounds_of(&joined, epsilon, &ctop, &cbottom);
            if (compare_segments(&ctop, &top[r]) > 0)
                top[r] = ctop;
            if (compare_segments(&cbottom, &bottom[r]) < 0)
                bottom[r] = cbottom;
            if (compare_segments(&bottom[r], &joined) <= 0 || compare_segments(&top[r], &joined) >= 0) {
                extend = false;
                break;
            }
        }
        if (extend) {
            end = i + 1;
        } else {
            ps_plf_push_segment(dst, X(src, start), V(src, start), X(src, end), V(src, end));
            start = i;
            end = i + 1;
            for (int r = 0; r < dim; r++) {
                struct sseg s;
                component_segment(src, i, i + 1, r, &s);
                bounds_of(&s, epsilon, &top[r], &bottom[r]);
            }
        }
    }
    ps_plf_push_segment(dst, X(src, start), V(src, start), X(src, end), V(src, end));
}
