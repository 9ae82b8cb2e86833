/* plf.c — builder, reading and unary transformations of piecewise-linear functions. */
#include "core/plf.h"

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
    memset(ctx, 0, sizeof *ctx);
}

bool ps_plf_ctx_reserve_points(struct ps_plf_ctx *ctx, int n)
{
    if (n <= ctx->pts_cap)
        return true;
    int cap = ctx->pts_cap ? ctx->pts_cap : 64;
    while (cap < n)
        cap *= 2;
    double *p = realloc(ctx->pts, (size_t)cap * sizeof *p);
    if (!p) {
        ctx->oom = true;
        return false;
    }
    ctx->pts = p;
    ctx->pts_cap = cap;
    return true;
}

void ps_plf_buf_init(struct ps_plf_buf *b, int dim, bool *oom)
{
    b->a = NULL;
    b->n = 0;
    b->cap = 0;
    b->dim = dim;
    b->oom = oom;
}

void ps_plf_buf_release(struct ps_plf_buf *b)
{
    free(b->a);
    b->a = NULL;
    b->n = b->cap = 0;
}

static bool buf_reserve(struct ps_plf_buf *b, int points)
{
    if (points <= b->cap)
        return true;
    int cap = b->cap ? b->cap : 16;
    while (cap < points)
        cap *= 2;
    /* Capacity is kept for the largest dimension so a buffer can switch between scalar and
     * vector use without shrinking. */
    double *a = realloc(b->a, (size_t)cap * (PS_PLF_MAX_DIM + 1) * sizeof *a);
    if (!a) {
        *b->oom = true;
        return false;
    }
    b->a = a;
    b->cap = cap;
    return true;
}

static inline double *bpt(struct ps_plf_buf *b, int i)
{
    return b->a + (size_t)i * (size_t)(b->dim + 1);
}

static inline bool values_equal(const double *a, const double *b, int dim)
{
    for (int r = 0; r < dim; r++)
        if (a[r] != b[r])
            return false;
    return true;
}

static void push_raw(struct ps_plf_buf *b, double x, const double *v)
{
    if (!buf_reserve(b, b->n + 1))
        return;
    double *p = bpt(b, b->n);
    p[0] = x;
    memcpy(p + 1, v, (size_t)b->dim * sizeof *v);
    b->n++;
}

static void set_last(struct ps_plf_buf *b, double x, const double *v)
{
    double *p = bpt(b, b->n - 1);
    p[0] = x;
    memcpy(p + 1, v, (size_t)b->dim * sizeof *v);
}

/* Appends the segment from the last point to (x, v), merging like upstream's PushSegmentImpl:
 * a new point segment is dropped, a point segment at the end is replaced, and two vertical or
 * two horizontal segments in a row become one. Requires b->n >= 1. */
static void append(struct ps_plf_buf *b, double x, const double *v)
{
    if (b->n == 1) {
        push_raw(b, x, v);
        return;
    }
    const double *l = bpt(b, b->n - 2);
    const double *m = bpt(b, b->n - 1);
    int dim = b->dim;
    bool right_vertical_x = m[0] == x;
    bool right_flat = values_equal(m + 1, v, dim);
    if (right_vertical_x && right_flat)
        return;
    bool left_vertical_x = l[0] == m[0];
    bool left_flat = values_equal(l + 1, m + 1, dim);
    if (left_vertical_x && left_flat) {
        set_last(b, x, v);
        return;
    }
    if (left_vertical_x && right_vertical_x) {
        set_last(b, x, v);
        return;
    }
    if (!left_vertical_x && left_flat && !right_vertical_x && right_flat) {
        set_last(b, x, v);
        return;
    }
    push_raw(b, x, v);
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

static inline double X(const struct ps_plf *f, int i)
{
    return f->a[(size_t)i * (size_t)(f->dim + 1)];
}

static inline const double *V(const struct ps_plf *f, int i)
{
    return f->a + (size_t)i * (size_t)(f->dim + 1) + 1;
}

static inline bool seg_vertical(const struct ps_plf *f, int i)
{
    return X(f, i) == X(f, i + 1) && !values_equal(V(f, i), V(f, i + 1), f->dim);
}

static inline double lerp(double lv, double rv, double t)
{
    return t < 0.5 ? lv + (rv - lv) * t : rv - (rv - lv) * (1 - t);
}

/* Interpolation inside segment i (which must not be vertical). */
static void seg_interp(const struct ps_plf *f, int i, double x, double *out)
{
    double l = X(f, i), r = X(f, i + 1);
    double t = (x - l) / (r - l);
    const double *lv = V(f, i), *rv = V(f, i + 1);
    for (int k = 0; k < f->dim; k++)
        out[k] = lerp(lv[k], rv[k], t);
}

static void seg_left_limit(const struct ps_plf *f, int i, double x, double *out)
{
    if (X(f, i) == X(f, i + 1))
        memcpy(out, V(f, i), (size_t)f->dim * sizeof *out);
    else
        seg_interp(f, i, x, out);
}

static void seg_right_limit(const struct ps_plf *f, int i, double x, double *out)
{
    if (X(f, i) == X(f, i + 1))
        memcpy(out, V(f, i + 1), (size_t)f->dim * sizeof *out);
    else
        seg_interp(f, i, x, out);
}

static void seg_limits(const struct ps_plf *f, int i, double x, double *left, double *right)
{
    if (X(f, i) == X(f, i + 1)) {
        memcpy(left, V(f, i), (size_t)f->dim * sizeof *left);
        memcpy(right, V(f, i + 1), (size_t)f->dim * sizeof *right);
    } else {
        seg_interp(f, i, x, left);
        memcpy(right, left, (size_t)f->dim * sizeof *right);
    }
}

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
    int last = f->n - 2;
    int i = c->seg;
    while (i < last && X(f, i + 1) < x)
        i++;
    if (i < last && X(f, i + 1) == x && seg_vertical(f, i + 1))
        i++;
    c->seg = i;
    seg_limits(f, i, x, left, right);
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

void ps_plf_scale_argument(struct ps_plf_buf *dst, const struct ps_plf *src, double scale)
{
    ps_plf_buf_clear(dst, src->dim);
    for (int i = 0; i + 1 < src->n; i++)
        ps_plf_push_segment(dst, X(src, i) / scale, V(src, i), X(src, i + 1) / scale, V(src, i + 1));
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
    for (int i = 0; i + 1 < src->n; i++)
        ps_plf_push_segment(dst, X(src, i), V(src, i), X(src, i + 1), V(src, i + 1));
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
