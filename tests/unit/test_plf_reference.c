/* Differential tests: the optimised PLF operations against straightforward implementations
 * written the way upstream's code is (collect critical points, sort, sample every point through
 * the builder), on random functions with jumps, flat pieces and crossings. Results must agree
 * to the bit, since the fair share numbers depend on it. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/bisect.h"
#include "core/plf.h"
#include "plf_test_util.h"

#define MAXP 256

struct env {
    bool oom;
    struct ps_plf_ctx ctx;
    struct ps_plf_buf a, b, c, d, e, f, g;
    struct ps_plf_buf parts[4];
    uint64_t rng;
};

static uint64_t next_random(struct env *v)
{
    return rng_next(&v->rng);
}

static int setup(void **state)
{
    struct env *v = test_calloc(1, sizeof *v);
    ps_plf_ctx_init(&v->ctx);
    struct ps_plf_buf *bufs[] = {&v->a, &v->b, &v->c, &v->d, &v->e, &v->f, &v->g};
    for (int i = 0; i < 7; i++)
        ps_plf_buf_init(bufs[i], 1, &v->oom);
    for (int i = 0; i < 4; i++)
        ps_plf_buf_init(&v->parts[i], 1, &v->oom);
    v->rng = 0x9e3779b97f4a7c15ull;
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    ps_plf_ctx_release(&v->ctx);
    struct ps_plf_buf *bufs[] = {&v->a, &v->b, &v->c, &v->d, &v->e, &v->f, &v->g};
    for (int i = 0; i < 7; i++)
        ps_plf_buf_release(bufs[i]);
    for (int i = 0; i < 4; i++)
        ps_plf_buf_release(&v->parts[i]);
    test_free(v);
    return 0;
}

/* A random non-decreasing function on [0, right] with jumps and flat pieces; values come from
 * a coarse grid plus noise so that ties and crossings happen. */
static void random_function(struct env *v, struct ps_plf_buf *b, int dim, double right)
{
    ps_plf_buf_clear(b, dim);
    int n = 2 + (int)(next_random(v) % 9);
    double x = 0.0, val[PS_PLF_MAX_DIM] = {0};
    ps_plf_add_point(b, x, val);
    for (int i = 1; i < n; i++) {
        int kind = (int)(next_random(v) % 5);
        double nx = i == n - 1 ? right : x + (right - x) * (double)(1 + next_random(v) % 7) / 16.0;
        if (kind == 0)
            nx = x;  /* a jump */
        if (nx > right)
            nx = right;
        for (int r = 0; r < dim; r++) {
            if (kind == 1)
                continue;  /* flat */
            double step = (double)(next_random(v) % 4) / 8.0;
            if (next_random(v) % 3 == 0)
                step += (double)(next_random(v) % 1000) * 1e-7;
            val[r] += step;
        }
        ps_plf_add_point(b, nx, val);
        x = nx;
    }
    if (b->n < 2 || ps_plf_pt(&(struct ps_plf){b->a, b->n, dim}, b->n - 1)[0] < right)
        ps_plf_add_point(b, right, val);  /* a flat end up to the right bound */
    ps_plf_trim_right(b);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y ? 1 : 0);
}

static int sorted_unique(double *xs, int n, double lo, double hi)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (xs[i] >= lo && xs[i] <= hi)
            xs[k++] = xs[i];
    qsort(xs, (size_t)k, sizeof *xs, cmp_double);
    int u = 0;
    for (int i = 0; i < k; i++)
        if (u == 0 || xs[i] != xs[u - 1])
            xs[u++] = xs[i];
    return u;
}

/* ---- reference implementations ------------------------------------------------------------ */

static void ref_sum(struct ps_plf_buf *dst, const struct ps_plf *fs, int count)
{
    int dim = fs[0].dim;
    double pts[MAXP * 4];
    int k = 0;
    double lo = -1e300, hi = 1e300;
    for (int i = 0; i < count; i++) {
        k += ps_plf_critical_points(&fs[i], pts + k);
        lo = fmax(lo, ps_plf_left_bound(&fs[i]));
        hi = fmin(hi, ps_plf_right_bound(&fs[i]));
    }
    k = sorted_unique(pts, k, lo, hi);
    ps_plf_buf_clear(dst, dim);
    for (int p = 0; p < k; p++) {
        double left[PS_PLF_MAX_DIM] = {0}, right[PS_PLF_MAX_DIM] = {0}, l[PS_PLF_MAX_DIM], r[PS_PLF_MAX_DIM];
        for (int i = 0; i < count; i++) {
            ps_plf_limits_at(&fs[i], pts[p], l, r);
            for (int d = 0; d < dim; d++) {
                left[d] += l[d];
                right[d] += r[d];
            }
        }
        ps_plf_add_point(dst, pts[p], left);
        ps_plf_add_point(dst, pts[p], right);
    }
}

/* The segment upstream's RightSegmentAt returns: the last one starting at or before x. */
static void ref_right_segment(const struct ps_plf *f, double x, double *s)
{
    int i = 0;
    while (i + 1 <= f->n - 2 && ps_plf_pt(f, i + 1)[0] <= x)
        i++;
    s[0] = ps_plf_pt(f, i)[0];
    s[1] = ps_plf_pt(f, i)[1];
    s[2] = ps_plf_pt(f, i + 1)[0];
    s[3] = ps_plf_pt(f, i + 1)[1];
}

static double ref_seg_value(const double *s, double x)
{
    if (s[0] == s[2])
        return s[1];
    double t = (x - s[0]) / (s[2] - s[0]);
    return t < 0.5 ? s[1] + (s[3] - s[1]) * t : s[3] - (s[3] - s[1]) * (1 - t);
}

struct ref_crossing {
    const double *lo, *hi;
};

static bool ref_below(double x, void *arg)
{
    const struct ref_crossing *c = arg;
    return ref_seg_value(c->lo, x) <= ref_seg_value(c->hi, x);
}

static void ref_pointwise_min(struct ps_plf_buf *dst, const struct ps_plf *f, const struct ps_plf *g)
{
    double lo = fmax(ps_plf_left_bound(f), ps_plf_left_bound(g));
    double hi = fmin(ps_plf_right_bound(f), ps_plf_right_bound(g));
    double pts[MAXP * 4];
    int k = ps_plf_critical_points(f, pts);
    k += ps_plf_critical_points(g, pts + k);
    k = sorted_unique(pts, k, lo, hi);
    int initial = k;
    for (int i = 1; i < initial; i++) {
        double a = pts[i - 1], b = pts[i], sf[4], sg[4];
        ref_right_segment(f, a, sf);
        ref_right_segment(g, a, sg);
        struct ref_crossing c = {sf, sg};
        if (ref_seg_value(sg, a) < ref_seg_value(sf, a)) {
            c.lo = sg;
            c.hi = sf;
        }
        if (ref_seg_value(c.lo, a) < ref_seg_value(c.hi, a) && ref_seg_value(c.lo, b) > ref_seg_value(c.hi, b))
            pts[k++] = ps_bisect_inverse_lower_bound(a, b, ref_below, &c);
    }
    k = sorted_unique(pts, k, lo, hi);
    ps_plf_buf_clear(dst, 1);
    for (int i = 0; i < k; i++) {
        double fl, fr, gl, gr;
        ps_plf_limits_at(f, pts[i], &fl, &fr);
        ps_plf_limits_at(g, pts[i], &gl, &gr);
        double l = gl < fl ? gl : fl, r = gr < fr ? gr : fr;
        ps_plf_add_point(dst, pts[i], &l);
        ps_plf_add_point(dst, pts[i], &r);
    }
}

struct pair {
    double x, y;
};

static int cmp_pair(const void *a, const void *b)
{
    const struct pair *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    if (p->y != q->y)
        return p->y < q->y ? -1 : 1;
    return 0;
}

static void ref_compose(struct ps_plf_buf *dst, const struct ps_plf *f, const struct ps_plf *g)
{
    struct pair pairs[MAXP * 4];
    int np = 0;
    for (int j = 0; j < g->n; j++)
        pairs[np++] = (struct pair){ps_plf_pt(g, j)[0], ps_plf_pt(g, j)[1]};
    double crit[MAXP];
    int nf = ps_plf_critical_points(f, crit);
    for (int q = 0; q < nf; q++) {
        double y = crit[q];
        if (!(y >= ps_plf_pt(g, 0)[1] && y <= ps_plf_pt(g, g->n - 1)[1]))
            continue;
        /* SegmentAt on the transposed g */
        int i = 0;
        while (ps_plf_pt(g, i + 1)[1] < y)
            i++;
        if (i + 1 <= g->n - 2 && ps_plf_pt(g, i + 1)[1] == y && ps_plf_pt(g, i + 2)[1] == y &&
            ps_plf_pt(g, i + 1)[0] != ps_plf_pt(g, i + 2)[0])
            i++;
        double x0 = ps_plf_pt(g, i)[0], x1 = ps_plf_pt(g, i + 1)[0];
        double y0 = ps_plf_pt(g, i)[1], y1 = ps_plf_pt(g, i + 1)[1];
        if (x0 != x1 && y0 != y1 && y != y0 && y != y1) {
            double t = (y - y0) / (y1 - y0);
            pairs[np++] = (struct pair){t < 0.5 ? x0 + (x1 - x0) * t : x1 - (x1 - x0) * (1 - t), y};
        }
    }
    qsort(pairs, (size_t)np, sizeof *pairs, cmp_pair);
    ps_plf_buf_clear(dst, f->dim);
    double v[PS_PLF_MAX_DIM];
    for (int i = 0; i < np; i++) {
        if (i == 0 || pairs[i - 1].x != pairs[i].x) {
            ps_plf_value_at(f, pairs[i].y, v);
            ps_plf_add_point(dst, pairs[i].x, v);
        }
        if (i + 1 == np || pairs[i + 1].x != pairs[i].x) {
            if (i + 1 < np && pairs[i + 1].y > pairs[i].y)
                ps_plf_right_limit_at(f, pairs[i].y, v);
            else
                ps_plf_value_at(f, pairs[i].y, v);
            ps_plf_add_point(dst, pairs[i].x, v);
        }
    }
    ps_plf_trim_right(dst);
}

static int ref_cross(const double *a, const double *b)
{
    double c = (a[2] - a[0]) * (b[3] - b[1]) - (b[2] - b[0]) * (a[3] - a[1]);
    return c > 0 ? 1 : (c < 0 ? -1 : 0);
}

static void ref_compress(struct ps_plf_buf *dst, const struct ps_plf *src, double eps)
{
    int dim = src->dim;
    ps_plf_buf_clear(dst, dim);
    double top[PS_PLF_MAX_DIM][4], bottom[PS_PLF_MAX_DIM][4];
    int start = 0, end = 1;
#define SEG(out, from, to, r, lift)                                                                \
    do {                                                                                           \
        (out)[0] = ps_plf_pt(src, from)[0];                                                        \
        (out)[1] = ps_plf_pt(src, from)[1 + (r)];                                                  \
        (out)[2] = ps_plf_pt(src, to)[0];                                                          \
        (out)[3] = ps_plf_pt(src, to)[1 + (r)] + (lift);                                           \
    } while (0)
    for (int r = 0; r < dim; r++) {
        SEG(top[r], 0, 1, r, eps);
        SEG(bottom[r], 0, 1, r, -eps);
    }
    for (int i = 1; i + 1 < src->n; i++) {
        bool extend = true;
        for (int r = 0; r < dim; r++) {
            double joined[4], ct[4], cb[4];
            SEG(joined, start, i + 1, r, 0.0);
            SEG(ct, start, i + 1, r, eps);
            SEG(cb, start, i + 1, r, -eps);
            if (ref_cross(ct, top[r]) > 0)
                memcpy(top[r], ct, sizeof ct);
            if (ref_cross(cb, bottom[r]) < 0)
                memcpy(bottom[r], cb, sizeof cb);
            if (ref_cross(bottom[r], joined) <= 0 || ref_cross(top[r], joined) >= 0) {
                extend = false;
                break;
            }
        }
        if (extend) {
            end = i + 1;
        } else {
            ps_plf_push_segment(dst, ps_plf_pt(src, start)[0], ps_plf_pt(src, start) + 1, ps_plf_pt(src, end)[0],
                                ps_plf_pt(src, end) + 1);
            start = i;
            end = i + 1;
            for (int r = 0; r < dim; r++) {
                SEG(top[r], i, i + 1, r, eps);
                SEG(bottom[r], i, i + 1, r, -eps);
            }
        }
    }
#undef SEG
    ps_plf_push_segment(dst, ps_plf_pt(src, start)[0], ps_plf_pt(src, start) + 1, ps_plf_pt(src, end)[0],
                        ps_plf_pt(src, end) + 1);
}

/* ---- comparisons --------------------------------------------------------------------------- */

static void test_sum_matches_reference(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 300; round++) {
        int dim = round % 2 ? 5 : 1;
        int count = 1 + (int)(next_random(v) % 4);
        struct ps_plf views[4];
        for (int i = 0; i < count; i++) {
            random_function(v, &v->parts[i], dim, 1.0 + (double)(next_random(v) % 3) / 4);
            views[i] = ps_plf_buf_view(&v->parts[i]);
        }
        ref_sum(&v->a, views, count);
        ps_plf_sum(&v->ctx, &v->b, views, count);
        assert_same(&v->a, &v->b, round, "sum");
    }
}

static void test_pointwise_min_matches_reference(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 1000; round++) {
        random_function(v, &v->c, 1, 1.0);
        random_function(v, &v->d, 1, 1.0);
        struct ps_plf f = ps_plf_buf_view(&v->c), g = ps_plf_buf_view(&v->d);
        ref_pointwise_min(&v->a, &f, &g);
        ps_plf_pointwise_min(&v->ctx, &v->b, &f, &g);
        assert_same(&v->a, &v->b, round, "pointwise min");
    }
}

static void test_compose_matches_reference(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 1000; round++) {
        int dim = round % 2 ? 5 : 1;
        random_function(v, &v->c, dim, 2.0);
        /* g: non-decreasing into [0, 2] */
        random_function(v, &v->d, 1, 1.0);
        struct ps_plf g0 = ps_plf_buf_view(&v->d);
        double top = ps_plf_right_value(&g0)[0];
        ps_plf_buf_clear(&v->e, 1);
        for (int i = 0; i < g0.n; i++) {
            double y = top > 0 ? ps_plf_pt(&g0, i)[1] * (2.0 / top) : 0.0;
            if (y > 2.0)
                y = 2.0;
            ps_plf_add_point(&v->e, ps_plf_pt(&g0, i)[0], &y);
        }
        struct ps_plf f = ps_plf_buf_view(&v->c), g = ps_plf_buf_view(&v->e);
        ref_compose(&v->a, &f, &g);
        ps_plf_compose(&v->ctx, &v->b, &f, &g);
        assert_same(&v->a, &v->b, round, "compose");
    }
}

static void test_compress_matches_reference(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 1000; round++) {
        int dim = round % 2 ? 5 : 1;
        random_function(v, &v->c, dim, 1.0);
        struct ps_plf f = ps_plf_buf_view(&v->c);
        double eps = round % 3 == 0 ? 0.0 : 1e-15;
        ref_compress(&v->a, &f, eps);
        ps_plf_compress(&v->b, &f, eps);
        assert_same(&v->a, &v->b, round, "compress");
    }
}

/* A share-vector-like f on [0, 2] for the composition chain: some components constant (+0.0,
 * -0.0 or another value, so the compression skips them), the others non-decreasing with jumps,
 * flat pieces and tiny steps near the compression's epsilon. */
static void random_share_function(struct env *v, struct ps_plf_buf *b)
{
    ps_plf_buf_clear(b, 5);
    double val[5];
    int moving[5];
    for (int r = 0; r < 5; r++) {
        int kind = (int)(next_random(v) % 4);
        moving[r] = kind >= 2;
        val[r] = kind == 0 ? -0.0 : (kind == 1 ? 0.25 : (next_random(v) % 2 ? -0.0 : 0.0));
    }
    int n = 2 + (int)(next_random(v) % 24);
    double x = 0.0;
    ps_plf_add_point(b, x, val);
    for (int i = 1; i < n; i++) {
        int kind = (int)(next_random(v) % 6);
        double nx = x + (double)(next_random(v) % 4) / 16.0;
        if (kind == 0)
            nx = x;  /* a jump */
        if (nx > 2.0 || i == n - 1)
            nx = 2.0;
        for (int r = 0; r < 5; r++) {
            if (!moving[r] || kind == 1)
                continue;  /* constant, or a flat piece */
            int step = (int)(next_random(v) % 5);
            val[r] += step == 0 ? 0.0 : (step == 1 ? 1e-16 : (step == 2 ? 3e-15 : (double)step / 8.0));
        }
        ps_plf_add_point(b, nx, val);
        x = nx;
    }
    if (b->n < 2 || b->a[(size_t)(b->n - 1) * 6] < 2.0)
        ps_plf_add_point(b, 2.0, val);
    ps_plf_trim_right(b);
}

/* A non-decreasing scalar g on [0, 1] into [0, 2] with jumps and flat pieces, whose values often
 * hit f's arguments (where the composition takes right limits) and f's ends. */
static void random_inner_function(struct env *v, struct ps_plf_buf *b, const struct ps_plf *f)
{
    ps_plf_buf_clear(b, 1);
    int n = 2 + (int)(next_random(v) % 16);
    double x = 0.0, y = next_random(v) % 4 == 0 ? 0.0 : (double)(next_random(v) % 8) / 16.0;
    ps_plf_add_point(b, x, &y);
    for (int i = 1; i < n; i++) {
        int kind = (int)(next_random(v) % 6);
        double nx = kind == 0 ? x : x + (1.0 - x) * (double)(1 + next_random(v) % 7) / 16.0;
        if (i == n - 1)
            nx = 1.0;
        double ny = y;
        if (kind == 2) {
            double fx = ps_plf_pt(f, (int)(next_random(v) % (uint64_t)f->n))[0];
            ny = fx > y ? fx : y;  /* onto an argument of f */
        } else if (kind != 1) {
            ny = y + (double)(next_random(v) % 5) / 16.0 + (next_random(v) % 3 == 0 ? 1e-9 : 0.0);
        }
        if (ny > 2.0)
            ny = 2.0;
        ps_plf_add_point(b, nx, &ny);
        x = nx;
        y = ny;
    }
    if (b->n < 2 || b->a[(size_t)(b->n - 1) * 2] < 1.0)
        ps_plf_add_point(b, 1.0, &y);
}

/* Fair share by suggestion is compose then compress on share vectors: the optimised pair must
 * give the bits of the reference implementations, eps as in fs_internal.h. */
static void test_compose_compress_chain_matches_reference(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 3000; round++) {
        random_share_function(v, &v->c);
        struct ps_plf f = ps_plf_buf_view(&v->c);
        random_inner_function(v, &v->d, &f);
        struct ps_plf g = ps_plf_buf_view(&v->d);
        double eps = round % 5 == 0 ? 0.0 : 1e-15;
        ref_compose(&v->e, &f, &g);
        struct ps_plf composed = ps_plf_buf_view(&v->e);
        ref_compress(&v->a, &composed, eps);
        ps_plf_compose(&v->ctx, &v->f, &f, &g);
        assert_same(&v->e, &v->f, round, "compose in the chain");
        composed = ps_plf_buf_view(&v->f);
        ps_plf_compress(&v->b, &composed, eps);
        assert_same(&v->a, &v->b, round, "compose then compress");
    }
    assert_false(v->oom || v->ctx.oom);
}

/* The fused max fit factor component against upstream's chain of operations. */
static void test_max_fit_factor_component_matches_chain(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 1000; round++) {
        random_function(v, &v->c, 5, 2.0);
        struct ps_plf fsbff = ps_plf_buf_view(&v->c);
        int r = (int)(next_random(v) % 5);
        double lv = ps_plf_left_value(&fsbff)[r], rv = ps_plf_right_value(&fsbff)[r];
        double limit = lv + (rv - lv) * (double)(next_random(v) % 6) / 4.0;
        double guarantee = lv + (rv - lv) * (double)(next_random(v) % 5) / 6.0;
        /* upstream */
        ps_plf_extract_component(&v->a, &fsbff, r);
        struct ps_plf comp = ps_plf_buf_view(&v->a);
        double l = limit < ps_plf_left_value(&comp)[0] ? ps_plf_left_value(&comp)[0] : limit;
        l = ps_plf_right_value(&comp)[0] < l ? ps_plf_right_value(&comp)[0] : l;
        double g = guarantee < ps_plf_left_value(&comp)[0] ? ps_plf_left_value(&comp)[0] : guarantee;
        g = l < g ? l : g;
        ps_plf_transpose(&v->a);
        comp = ps_plf_buf_view(&v->a);
        ps_plf_narrow(&v->ctx, &v->d, &comp, g, l);
        ps_plf_trim_left(&v->d);
        struct ps_plf narrowed = ps_plf_buf_view(&v->d);
        ps_plf_shift(&v->e, &narrowed, -g, NULL);
        struct ps_plf shifted = ps_plf_buf_view(&v->e);
        ps_plf_extend(&v->f, &shifted, ps_plf_left_bound(&shifted), NULL, 1.0, NULL);
        ps_plf_trim_right(&v->f);
        /* fused */
        ps_plf_max_fit_factor_component(&v->a, &v->d, &v->b, &fsbff, r, limit, guarantee);
        assert_same(&v->f, &v->b, round, "max fit factor component");
    }
}

/* fs_functions.c skips the component chain of an identically zero component (of either sign)
 * and takes the neutral constant (0, top) - (1, top) instead: the fused chain must give exactly
 * that, whatever the limit and the guarantee. */
static void test_max_fit_factor_component_of_zero_resource(void **state)
{
    struct env *v = *state;
    static const double tops[] = {0.5, 1.0, 2.0, 3.0, 1.25};
    static const double bounds[] = {0.0, -0.0, 0.3, 1.0, 1e-9, 2.5};
    for (int round = 0; round < 1000; round++) {
        double top = tops[next_random(v) % 5];
        random_function(v, &v->c, 5, top);
        int r = (int)(next_random(v) % 5);
        for (int i = 0; i < v->c.n; i++)
            v->c.a[(size_t)i * 6 + 1 + (size_t)r] = next_random(v) % 2 ? 0.0 : -0.0;
        struct ps_plf fsbff = ps_plf_buf_view(&v->c);
        assert_true(ps_plf_left_bound(&fsbff) < ps_plf_right_bound(&fsbff));
        double limit = bounds[next_random(v) % 6], guarantee = bounds[next_random(v) % 6];
        ps_plf_max_fit_factor_component(&v->a, &v->d, &v->b, &fsbff, r, limit, guarantee);
        ps_plf_buf_clear(&v->f, 1);
        ps_plf_add_point(&v->f, 0.0, &top);
        ps_plf_add_point(&v->f, 1.0, &top);
        assert_same(&v->f, &v->b, round, "max fit factor component of a zero resource");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sum_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pointwise_min_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compose_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compress_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compose_compress_chain_matches_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_fit_factor_component_matches_chain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_fit_factor_component_of_zero_resource, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
