/* plf.h — piecewise-linear functions of one argument, as YTsaurus's TPiecewiseLinearFunction.
 *
 * A function is a polyline of n >= 2 points (x, value[dim]) with non-decreasing x; segment i joins
 * point i and point i + 1. Two points with the same x form a vertical segment: a discontinuity.
 * Functions are left-continuous: at a discontinuity the value is the left limit. The value type is
 * a vector of `dim` doubles (1 for scalar functions, PS_RES_COUNT for share vectors).
 *
 * Storage is a flat double array, stride dim + 1 (x first). A `struct ps_plf` is a read-only view;
 * a `struct ps_plf_buf` is a growable builder that merges segments exactly as upstream's
 * TPiecewiseLinearFunctionBuilder does (points are dropped, consecutive horizontal or vertical
 * segments are merged), because those merges change which segment answers a query and so the
 * bits of the results.
 *
 * Allocation failures never abort: they set *oom of the builder or context, and the operations
 * keep going on whatever they have, so callers check the flag after a step.
 *
 * Interpolation inside a segment uses t = (x - L) / (R - L) and
 * t < 0.5 ? lv + (rv - lv) * t : rv - (rv - lv) * (1 - t), which is monotone and exact at both
 * ends (upstream's formula, needed for bit-exact results).
 */
#ifndef PS_CORE_PLF_H
#define PS_CORE_PLF_H

#include <stdbool.h>
#include <stddef.h>

#define PS_PLF_MAX_DIM 5

/* A read-only function; valid while its storage lives. */
struct ps_plf {
    const double *a;  /* n * (dim + 1) doubles */
    int n;            /* number of points; >= 2 for a valid function */
    int dim;
};

/* A growable builder; reuse it across calls to avoid allocations. */
struct ps_plf_buf {
    double *a;
    int n;
    int cap;          /* in points of the current dimension */
    int dim;
    size_t cap_d;     /* allocated doubles */
    bool *oom;        /* set on allocation failure; not owned */
};

/* Scratch space shared by the operations below (critical point lists, sort buffers). */
struct ps_plf_ctx {
    bool oom;
    double *pts;
    int pts_cap;
    double *tmp;
    int tmp_cap;
    double *pairs;        /* (argument, inner value) pairs of Compose */
    int pairs_cap;
    int *cursors;
    int cursors_cap;
    double *acc;          /* Sum: the left sums at every critical point, then the right ones */
    size_t acc_cap;       /* in doubles */
    unsigned char *split; /* Sum: whether some summand jumps at the critical point */
    int *split_idx;       /* Sum: the indices of those points */
    int split_cap;
};

/* A monotone reader: queries must come with non-decreasing x. */
struct ps_plf_cursor {
    int seg;
};

void ps_plf_ctx_init(struct ps_plf_ctx *ctx);
void ps_plf_ctx_release(struct ps_plf_ctx *ctx);

void ps_plf_buf_init(struct ps_plf_buf *b, int dim, bool *oom);
void ps_plf_buf_release(struct ps_plf_buf *b);
static inline void ps_plf_buf_clear(struct ps_plf_buf *b, int dim)
{
    b->n = 0;
    b->dim = dim;
    b->cap = (int)(b->cap_d / (size_t)(dim + 1));
}
static inline struct ps_plf ps_plf_buf_view(const struct ps_plf_buf *b)
{
    struct ps_plf f = {b->a, b->n, b->dim};
    return f;
}

/* The capacity to grow to when `need` exceeds `cap`: need plus an eighth. The update sizes its
 * buffers by the largest element of the tree once and then reuses them, so doubling would only
 * leave up to half of each buffer unused for good; an eighth still bounds the reallocations of
 * a tree that grows slowly. */
static inline size_t ps_plf_grow_capacity(size_t cap, size_t need)
{
    return cap >= need ? cap : need + need / 8 + 16;
}

/* Grows a builder to hold at least `points` points; false (and *oom) on failure. */
bool ps_plf_buf_reserve(struct ps_plf_buf *b, int points);

/* Builder primitives (upstream AddPoint and PushSegment). v has dim components. */
void ps_plf_add_point(struct ps_plf_buf *b, double x, const double *v);
void ps_plf_push_segment(struct ps_plf_buf *b, double x0, const double *v0, double x1, const double *v1);

/* ---- reading ------------------------------------------------------------------------------ */

static inline const double *ps_plf_pt(const struct ps_plf *f, int i)
{
    return f->a + (size_t)i * (size_t)(f->dim + 1);
}
static inline double ps_plf_left_bound(const struct ps_plf *f) { return f->a[0]; }
static inline double ps_plf_right_bound(const struct ps_plf *f) { return ps_plf_pt(f, f->n - 1)[0]; }
static inline const double *ps_plf_left_value(const struct ps_plf *f) { return f->a + 1; }
static inline const double *ps_plf_right_value(const struct ps_plf *f) { return ps_plf_pt(f, f->n - 1) + 1; }

/* Value (the left limit) at x, in out[dim]. */
void ps_plf_value_at(const struct ps_plf *f, double x, double *out);
/* Scalar shortcut. */
double ps_plf_scalar_at(const struct ps_plf *f, double x);
/* Left and right limits at x (they differ at a discontinuity). */
void ps_plf_limits_at(const struct ps_plf *f, double x, double *left, double *right);
/* Right limit at x. */
void ps_plf_right_limit_at(const struct ps_plf *f, double x, double *out);

/* Cursor versions for increasing x (amortised O(1)). */
void ps_plf_cursor_limits_at(const struct ps_plf *f, struct ps_plf_cursor *c, double x,
                             double *left, double *right);
void ps_plf_cursor_value_at(const struct ps_plf *f, struct ps_plf_cursor *c, double x, double *out);

/* Critical points of f (its left bound and every larger segment end), appended to out. */
int ps_plf_critical_points(const struct ps_plf *f, double *out);

/* ---- unary transformations (into a builder; src must not alias dst) ---------------------- */

/* Component r of a vector function, as a scalar function. */
void ps_plf_extract_component(struct ps_plf_buf *dst, const struct ps_plf *src, int r);
/* g(x) = f(x * scale), i.e. every bound divided by scale. */
void ps_plf_scale_argument(struct ps_plf_buf *dst, const struct ps_plf *src, double scale);
/* Bounds + dx, values + dv (dv may be NULL for zero, added as +0.0 like upstream). */
void ps_plf_shift(struct ps_plf_buf *dst, const struct ps_plf *src, double dx, const double *dv);
/* Extends the domain to [new_left, new_right] with constants (NULL: the end values). */
void ps_plf_extend(struct ps_plf_buf *dst, const struct ps_plf *src, double new_left,
                   const double *left_value, double new_right, const double *right_value);
/* Restricts a scalar or vector function to [lo, hi] (upstream Narrow = f + Constant(lo, hi, 0)). */
void ps_plf_narrow(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *src,
                   double lo, double hi);

/* One resource of the max fit factor by suggestion of the vector HDRF update, fused:
 * component r of fsbff (a non-decreasing share by fit factor), transposed (fit factor by share),
 * narrowed to [guarantee, limit] (both first clamped to the component's range as upstream
 * does), trimmed on the left, shifted by -guarantee, extended to 1 and trimmed; the same points
 * as upstream's chain Transpose().Narrow().TrimLeft().Shift().ExtendRight(1.0).Trim().
 * t1 and t2 are scratch builders; the result is in dst. */
void ps_plf_max_fit_factor_component(struct ps_plf_buf *t1, struct ps_plf_buf *t2, struct ps_plf_buf *dst,
                                     const struct ps_plf *fsbff, int r, double limit, double guarantee);

/* In-place edits of a builder's function. */
void ps_plf_transpose(struct ps_plf_buf *b);   /* dim 1 only: swap x and value */
void ps_plf_trim_left(struct ps_plf_buf *b);   /* drop a vertical first segment */
void ps_plf_trim_right(struct ps_plf_buf *b);  /* drop a vertical last segment */

/* ---- n-ary operations (plf_ops.c) -------------------------------------------------------- */

/* Pointwise sum over the intersection of the domains, summed in array order. */
void ps_plf_sum(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *fs, int count);
/* Pointwise minimum of two scalar functions, with their crossing points added. */
void ps_plf_pointwise_min(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *f,
                          const struct ps_plf *g);
/* h(x) = f(g(x)) for a non-decreasing scalar g whose values lie in f's domain; trimmed. */
void ps_plf_compose(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *f,
                    const struct ps_plf *g);
/* Merges runs of segments that stay within epsilon of a straight line in every component. */
void ps_plf_compress(struct ps_plf_buf *dst, const struct ps_plf *src, double epsilon);
/* ps_plf_compress of ps_plf_compose into dst (tmp may receive the composition; either way the
 * result is the same to the bit). */
void ps_plf_compose_compress(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, struct ps_plf_buf *tmp,
                             const struct ps_plf *f, const struct ps_plf *g, double epsilon);

/* Sorts n pairs (xs[2k], xs[2k+1]) lexicographically (stable). */
void ps_plf_sort_pairs(struct ps_plf_ctx *ctx, double *xs, int n);

/* Sorts xs[0..n) ascending, keeps values in [lo, hi], drops duplicates; returns the new count. */
int ps_plf_clear_and_sort(struct ps_plf_ctx *ctx, double *xs, int n, double lo, double hi);

/* Grow ctx->pts (ctx->tmp, ctx->pairs) to hold at least n doubles, ctx->cursors n ints, by
 * ps_plf_grow_capacity; false (and ctx->oom) on failure. */
bool ps_plf_ctx_reserve_points(struct ps_plf_ctx *ctx, int n);
bool ps_plf_ctx_reserve_tmp(struct ps_plf_ctx *ctx, int n);
bool ps_plf_ctx_reserve_pairs(struct ps_plf_ctx *ctx, int n);
bool ps_plf_ctx_reserve_cursors(struct ps_plf_ctx *ctx, int n);

#endif
