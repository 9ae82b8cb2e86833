/* plf_ops.c — n-ary operations on piecewise-linear functions: pointwise minimum and composition,
 * with the same sampling points as upstream (the sum is in plf_sum.c, compression in
 * plf_compress.c). */
#include "core/plf.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "core/bisect.h"
#include "core/plf_impl.h"

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

/* The (argument, inner value) pairs of a composition in sorted order: g's points merged with
 * the extra points where g crosses a critical point of f. Both lists are sorted, so one merge
 * is upstream's sort; on ties g's pair comes first, as in a stable merge. */
struct pair_stream {
    const struct ps_plf *g;
    const double *extra;
    int ig, ie, nextra;
};

static inline void next_pair(struct pair_stream *st, double *x, double *y)
{
    const struct ps_plf *g = st->g;
    bool from_g = st->ie >= st->nextra;
    if (!from_g && st->ig < g->n) {
        double ex = st->extra[2 * st->ie], ey = st->extra[2 * st->ie + 1];
        double gx = XD(g, 1, st->ig), gy = VD(g, 1, st->ig)[0];
        from_g = !(ex < gx || (ex == gx && ey < gy));
    }
    if (from_g) {
        *x = XD(g, 1, st->ig);
        *y = VD(g, 1, st->ig)[0];
        st->ig++;
    } else {
        *x = st->extra[2 * st->ie];
        *y = st->extra[2 * st->ie + 1];
        st->ie++;
    }
}

PLF_INLINE void compose_build(struct ps_plf_buf *dst, const struct ps_plf *f, const struct ps_plf *g,
                              const double *extra, int nextra, int dim)
{
    struct pair_stream st = {g, extra, 0, 0, nextra};
    int total = g->n + nextra;
    double v[PS_PLF_MAX_DIM];
    int cl = 0, cr = 0;
    double px = 0.0, x = 0.0, y = 0.0, nx = 0.0, ny = 0.0;
    if (total == 0)
        return;
    next_pair(&st, &x, &y);
    for (int i = 0; i < total; i++) {
        if (i + 1 < total)
            next_pair(&st, &nx, &ny);
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

void ps_plf_compose(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *f,
                    const struct ps_plf *g)
{
    int dim = f->dim;
    ps_plf_buf_clear(dst, dim);
    if (!reserve_pairs(ctx, f->n))
        return;
    double *extra = ctx->pairs;
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
    if (dim == PS_PLF_MAX_DIM)
        compose_build(dst, f, g, extra, nextra, PS_PLF_MAX_DIM);
    else if (dim == 1)
        compose_build(dst, f, g, extra, nextra, 1);
    else
        compose_build(dst, f, g, extra, nextra, dim);
    ps_plf_trim_right(dst);
}
