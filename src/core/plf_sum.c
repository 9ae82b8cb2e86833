/* plf_sum.c — the pointwise sum of piecewise-linear functions (upstream's Sum).
 *
 * Upstream samples every critical point of every summand and adds the summands' left (and
 * right) limits there in array order. Here the loops are interchanged: each summand in turn
 * walks the sorted critical points once and adds its left limit into a per-point accumulator.
 * Every accumulator still receives ((0 + v0) + v1) + ... in array order, so the sums are the
 * same bits, but a summand's walk is a tight merge of its segments with the points (no reader
 * state per summand, no pass over all summands at every point).
 *
 * Right limits differ from left ones only where a summand jumps. Those points are flagged and
 * their right sums are computed afterwards the same way (summand by summand, each walking the
 * flagged points with the same segment choice, upstream's SegmentAt), which gives what summing
 * the right limits in the same pass would. */
#include "core/plf.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "core/plf_impl.h"

static bool reserve_acc(struct ps_plf_ctx *ctx, int points, int dim)
{
    size_t need = 2 * (size_t)points * (size_t)dim;
    if (need > ctx->acc_cap) {
        size_t cap = ps_plf_grow_capacity(ctx->acc_cap, need);
        double *a = realloc(ctx->acc, cap * sizeof *a);
        if (!a) {
            ctx->oom = true;
            return false;
        }
        ctx->acc = a;
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
    return true;
}

/* out[d] += lerp(lv[d], rv[d], t) */
PLF_INLINE void add_lerp(double *restrict out, const double *lv, const double *rv, double t, int dim)
{
    double v[PS_PLF_MAX_DIM];
    lerp_values(v, lv, rv, t, dim);
    for (int d = 0; d < dim; d++)
        out[d] += v[d];
}

/* Adds f's left limits at pts[0..k) (sorted, inside f's domain) to acc and flags the points
 * where f jumps. The segment at x is upstream's SegmentAt: the first segment whose right end
 * is >= x, or the vertical segment starting at x when there is one. */
PLF_INLINE void add_summand(double *restrict acc, unsigned char *restrict split, const struct ps_plf *f,
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
        double *out = acc + (size_t)q * dim;
        const double *lv = p + 1, *rv = r + 1;
        if (p[0] == r[0]) {
            /* A jump (or a single point): the right limit is added later. */
            split[q] = 1;
            for (int d = 0; d < dim; d++)
                out[d] += lv[d];
            q++;
            continue;
        }
        /* Every point before the segment's right end uses the same segment: no cursor work. */
        double l = p[0], rb = r[0];
        if (flat_values(lv, rv, dim)) {
            do {
                for (int d = 0; d < dim; d++)
                    out[d] += lv[d];
                out += dim;
                q++;
            } while (q < k && pts[q] < rb);
            /* The point at the right end (if any) comes back through the cursor: it may sit at
             * a jump. Its value on this segment would be rv == lv anyway. */
            continue;
        }
        do {
            add_lerp(out, lv, rv, seg_param(pts[q], l, rb), dim);
            out += dim;
            q++;
        } while (q < k && pts[q] < rb);
    }
}

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
            add_lerp(out, lv, rv, seg_param(x, p[0], r[0]), dim);
        }
    }
}

PLF_INLINE void sum_build(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *fs, int count,
                          const double *pts, int k, int dim)
{
    double *acc = ctx->acc;
    unsigned char *split = ctx->split;
    memset(acc, 0, (size_t)k * (size_t)dim * sizeof *acc);
    memset(split, 0, (size_t)k);
    for (int i = 0; i < count; i++)
        add_summand(acc, split, &fs[i], pts, k, dim);
    /* The right sums at the points where some summand jumps, summand by summand. */
    int *idx = ctx->split_idx, m = 0;
    for (int p = 0; p < k; p++)
        if (split[p])
            idx[m++] = p;
    double *racc = acc + (size_t)k * dim;
    if (m > 0) {
        memset(racc, 0, (size_t)m * (size_t)dim * sizeof *racc);
        for (int i = 0; i < count; i++)
            add_right_limits(racc, &fs[i], pts, idx, m, dim);
    }
    for (int p = 0, j = 0; p < k; p++) {
        buf_add_point_d(dst, dim, pts[p], acc + (size_t)p * dim);
        /* Without a jump the right sum is the left one, and a second, equal point would be a
         * point segment, which the builder drops. */
        if (split[p])
            buf_add_point_d(dst, dim, pts[p], racc + (size_t)j++ * dim);
    }
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
    if (!ps_plf_ctx_reserve_points(ctx, total))
        return;
    int k = 0;
    for (int i = 0; i < count; i++)
        k += ps_plf_critical_points(&fs[i], ctx->pts + k);
    k = ps_plf_clear_and_sort(ctx, ctx->pts, k, lo, hi);
    if (k == 0 || !reserve_acc(ctx, k, dim))
        return;
    if (dim == PS_PLF_MAX_DIM)
        sum_build(ctx, dst, fs, count, ctx->pts, k, PS_PLF_MAX_DIM);
    else if (dim == 1)
        sum_build(ctx, dst, fs, count, ctx->pts, k, 1);
    else
        sum_build(ctx, dst, fs, count, ctx->pts, k, dim);
}
