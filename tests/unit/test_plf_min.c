/* ps_plf_pointwise_min (plf_min.c) against a verbatim copy of the walk it replaced (plf_ops.c
 * as of lead3 52f7de7, a test-only reference: merged walk, limits of both functions at every
 * critical point), on random scalar functions with jumps, flat pieces, equal values, shared
 * arguments, crossings, -0.0, huge and non-finite values, differing domains and many points,
 * both argument orders: the same points, bit for bit. And its parts: the register builder
 * (plf_emit.h) against the buffer's own, the crossing search (plf_cross.c) at every vector
 * level against the bisection it reproduces. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/bisect.h"
#include "core/plf.h"
#include "core/isa.h"
#include "core/plf_cross.h"
#include "core/plf_emit.h"
#include "core/plf_impl.h"
#include "isa_test_util.h"
#include "test_rng.h"

/* ---- the reference: src/core/plf_ops.c at lead3 52f7de7, renamed --------------------------- */

/* A copy on purpose (as are its helpers below, which resemble plf_min.c's and
 * fs_operation_fsbs.c's): the differential reference must not follow later changes of the
 * kernels it checks, so do not replace it with the src/core code it looks like. */

/* The old walk's scalar segment and its value (struct sseg, sseg_value) moved unchanged to
 * core/plf_cross.h as struct ps_plf_sseg and ps_plf_sseg_value; the copy uses those. (Upstream's
 * segment reader they reproduce is pinned by test_plf_reference.c's pointwise minimum.) */

static struct ps_plf_sseg scalar_segment(const struct ps_plf *f, int i)
{
    struct ps_plf_sseg s = {X(f, i), V(f, i)[0], X(f, i + 1), V(f, i + 1)[0]};
    return s;
}

struct crossing {
    const struct ps_plf_sseg *lo, *hi;
};

static bool below_or_equal(double x, void *arg)
{
    const struct crossing *c = arg;
    return ps_plf_sseg_value(c->lo, x) <= ps_plf_sseg_value(c->hi, x);
}

/* seg_limits_d for a scalar function stored as (x, v) pairs; p points at the segment's left
 * point. */
PLF_INLINE void scalar_limits(const double *p, double x, double *left, double *right)
{
    if (p[0] == p[2]) {
        *left = p[1];
        *right = p[3];
        return;
    }
    double lv = p[1], rv = p[3];
    double v;
    if (lv == rv && !(lv == 0.0 && signbit(lv)))
        v = lv;
    else
        v = lerp(lv, rv, seg_param(x, p[0], p[2]));
    *left = *right = v;
}

/* cursor_segment_at_d for dim 1 on raw storage: a is the function, last = n - 2. */
PLF_INLINE int scalar_segment_at(const double *a, int last, int i, double x)
{
    while (i < last && a[2 * (i + 1)] < x)
        i++;
    if (i < last && a[2 * (i + 1)] == x && a[2 * (i + 2)] == x && a[2 * (i + 1) + 1] != a[2 * (i + 2) + 1])
        i++;
    return i;
}

/* scalar_segment_at(b) from the merge positions: the points [n0, n1) are those at b and the
 * ones before n0 lie before b (the segment cursor is never past n0 - 1), so the walk stops at
 * n0 - 1 (or the last segment), and steps onto a vertical segment when two points at b have
 * different values. */
PLF_INLINE int merged_segment(const double *a, int last, int n0, int n1)
{
    if (n1 - n0 >= 2 && a[2 * n0 + 1] != a[2 * n0 + 3])
        return n0;
    return n0 - 1 < last ? n0 - 1 : last;
}

static void old_pointwise_min(struct ps_plf_buf *dst, const struct ps_plf *f, const struct ps_plf *g)
{
    ps_plf_buf_clear(dst, 1);
    const double *fa_ = f->a, *ga_ = g->a;
    const int fn = f->n, gn = g->n, flast = fn - 2, glast = gn - 2;
    double lo = fa_[0] > ga_[0] ? fa_[0] : ga_[0];
    double hi = fa_[2 * (fn - 1)] < ga_[2 * (gn - 1)] ? fa_[2 * (fn - 1)] : ga_[2 * (gn - 1)];
    /* The critical points are the sorted union of both functions' arguments in [lo, hi] (what
     * upstream's ClearAndSortCriticalPoints makes of the two lists), generated one at a time:
     * lo, then each time the smallest argument of either function above the previous point. */
    if (lo > hi)
        return;
    int nf = 0, ng = 0;  /* first points with an argument above the current critical point */
    double a = lo;
    while (nf < fn && fa_[2 * nf] <= a)
        nf++;
    while (ng < gn && ga_[2 * ng] <= a)
        ng++;
    /* One walk over the critical points with both limits of both functions at each. Upstream
     * samples the same points (plus the crossings) and tests each interval with the segments
     * right of its start, whose values there are the right limits and at the interval's end the
     * left limits, so every value is computed once. */
    int sf = scalar_segment_at(fa_, flast, 0, a);
    int sg = scalar_segment_at(ga_, glast, 0, a);
    double fl, fr, gl, gr;
    scalar_limits(fa_ + 2 * sf, a, &fl, &fr);
    scalar_limits(ga_ + 2 * sg, a, &gl, &gr);
    for (;;) {
        double l = gl < fl ? gl : fl, r = gr < fr ? gr : fr;
        buf_add_point_d(dst, 1, a, &l);
        if (r != l)
            buf_add_point_d(dst, 1, a, &r);
        /* The next critical point. */
        double b;
        if (nf < fn && (ng >= gn || fa_[2 * nf] <= ga_[2 * ng]))
            b = fa_[2 * nf];
        else if (ng < gn)
            b = ga_[2 * ng];
        else
            break;
        if (b > hi)
            break;
        /* Every point before nf (ng) lies at or before a < b and the one at nf is at or after b:
         * the points the merge passes now, [nf0, nf), are the ones at b. */
        int nf0 = nf, ng0 = ng;
        while (nf < fn && fa_[2 * nf] <= b)
            nf++;
        while (ng < gn && ga_[2 * ng] <= b)
            ng++;
        /* The segments right of a: points before nf0 (ng0) are the ones at or before a. */
        int rf = (sf + 1 < nf0 && sf + 1 <= flast) ? sf + 1 : sf;
        int rg = (sg + 1 < ng0 && sg + 1 <= glast) ? sg + 1 : sg;
        double fa = fr, ga = gr;
        sf = merged_segment(fa_, flast, nf0, nf);
        sg = merged_segment(ga_, glast, ng0, ng);
        scalar_limits(fa_ + 2 * sf, b, &fl, &fr);
        scalar_limits(ga_ + 2 * sg, b, &gl, &gr);
        double x0 = a;
        a = b;
        /* std::minmax: g is the minimum only when strictly smaller; equal values never cross. */
        if (fa == ga)
            continue;
        bool g_lower = ga < fa;
        double lo_b = g_lower ? gl : fl, hi_b = g_lower ? fl : gl;
        if (!(lo_b > hi_b))
            continue;
        struct ps_plf_sseg segf = scalar_segment(f, rf), segg = scalar_segment(g, rg);
        struct crossing c = {g_lower ? &segg : &segf, g_lower ? &segf : &segg};
        double x = ps_bisect_inverse_lower_bound(x0, b, below_or_equal, &c);
        if (!(x > x0))
            continue;
        double vf = ps_plf_sseg_value(&segf, x), vg = ps_plf_sseg_value(&segg, x);
        double m = vg < vf ? vg : vf;
        buf_add_point_d(dst, 1, x, &m);
    }
}


/* ---- random functions ---------------------------------------------------------------------- */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

/* Values from a small grid shared by both functions (equal values, ties at crossings), signed
 * zeros, sometimes an off-grid value (crossings strictly inside intervals) and rarely a huge or
 * non-finite one. */
static double random_value(int wild)
{
    uint64_t k = rng_next(&rng_state) % 100;
    if (wild && k < 2)
        return k == 0 ? INFINITY : NAN;
    if (wild && k < 5)
        return (k % 2 ? -1.0 : 1.0) * DBL_MAX;
    if (k < 12)
        return -0.0;
    if (k < 20)
        return 0.0;
    if (k < 40)
        return (double)(rng_next(&rng_state) % 2001) * 1e-4 - 0.1;
    return (double)(rng_next(&rng_state) % 9) / 8.0 - 0.25;
}

static double random_bound(void)
{
    static const double b[] = {-0.0, 0.0, 0.0, 0.125, -0.25, 0.5};
    return b[rng_next(&rng_state) % (sizeof b / sizeof b[0])];
}

static void random_function(struct ps_plf_buf *b, int wild, int max_points)
{
    ps_plf_buf_clear(b, 1);
    double left = random_bound();
    double right = 1.0 - (double)(rng_next(&rng_state) % 4) / 8.0;
    int n = 1 + (int)(rng_next(&rng_state) % (uint64_t)max_points);
    double x = left, v = random_value(wild);
    ps_plf_add_point(b, x, &v);
    for (int i = 1; i < n; i++) {
        int kind = (int)(rng_next(&rng_state) % 6);
        /* x on a 1/32 grid (shared critical points), sometimes off it */
        double step = max_points > 12 ? 1.0 / 4096.0 : 1.0 / 32.0;
        double nx = x + (double)(1 + rng_next(&rng_state) % 8) * step;
        if (rng_next(&rng_state) % 4 == 0)
            nx = x + (double)(1 + rng_next(&rng_state) % 1000) * step * 3e-3;
        if (kind == 0)
            nx = x; /* a jump */
        if (nx > right)
            nx = right;
        if (kind != 1) /* kind 1: flat */
            v = random_value(wild);
        ps_plf_add_point(b, nx, &v);
        x = nx;
    }
    if (x < right) {
        if (rng_next(&rng_state) % 2)
            v = random_value(wild);
        ps_plf_add_point(b, right, &v);
    }
    if (b->n < 2) {
        v = random_value(wild);
        ps_plf_add_point(b, right, &v);
    }
}

static void check_many(int rounds, int wild, int max_points)
{
    bool oom = false;
    struct ps_plf_ctx ctx;
    struct ps_plf_buf fb, gb, want, got;
    ps_plf_ctx_init(&ctx);
    ps_plf_buf_init(&fb, 1, &oom);
    ps_plf_buf_init(&gb, 1, &oom);
    ps_plf_buf_init(&want, 1, &oom);
    ps_plf_buf_init(&got, 1, &oom);
    /* at the entry's vector level (the crossing search has one form per level): a third of the
     * rounds each, as when the levels took turns */
    rounds = (rounds + 2) / 3;
    for (int round = 0; round < rounds; round++) {
        random_function(&fb, wild, max_points);
        random_function(&gb, wild, max_points);
        struct ps_plf f = ps_plf_buf_view(&fb), g = ps_plf_buf_view(&gb);
        if (f.n < 2 || g.n < 2)
            continue;
        old_pointwise_min(&want, &f, &g);
        ps_plf_pointwise_min(&ctx, &got, &f, &g);
        assert_false(oom);
        if (want.n != got.n || memcmp(want.a, got.a, (size_t)want.n * 2 * sizeof(double)) != 0)
            fail_msg("round %d (wild %d): %d points wanted, %d got, or different bits", round, wild, want.n,
                     got.n);
        /* and the other argument order */
        old_pointwise_min(&want, &g, &f);
        ps_plf_pointwise_min(&ctx, &got, &g, &f);
        if (want.n != got.n || memcmp(want.a, got.a, (size_t)want.n * 2 * sizeof(double)) != 0)
            fail_msg("round %d (wild %d, swapped): different result", round, wild);
    }
    ps_plf_buf_release(&fb);
    ps_plf_buf_release(&gb);
    ps_plf_buf_release(&want);
    ps_plf_buf_release(&got);
    ps_plf_ctx_release(&ctx);
}

static void test_min_matches_previous_finite(void **state)
{
    (void)state;
    check_many(200000, 0, 12);
}

/* Long functions: long runs of one function's points between two of the other's. */
static void test_min_matches_previous_many_points(void **state)
{
    (void)state;
    check_many(4000, 0, 600);
}

static void test_min_matches_previous_wild(void **state)
{
    (void)state;
    check_many(50000, 1, 12);
}

/* ps_plf_emit (plf_emit.h) against the builder's ps_plf_add_point on random point sequences
 * with repeated arguments and values (vertical and flat runs, repeated points), signed zeros
 * and NaN: the same points, bit for bit. */
static void test_emit_matches_builder(void **state)
{
    (void)state;
    bool oom = false;
    struct ps_plf_buf want, got;
    ps_plf_buf_init(&want, 1, &oom);
    ps_plf_buf_init(&got, 1, &oom);
    static const double values[] = {0.0, -0.0, 1.0, 1.0, 0.5, -2.0, 3.25};
    for (int round = 0; round < 100000; round++) {
        int n = (int)(rng_next(&rng_state) % 40);
        ps_plf_buf_clear(&want, 1);
        ps_plf_buf_clear(&got, 1);
        struct ps_plf_emitter e = ps_plf_emit_start(&got);
        double x = 0.0;
        for (int i = 0; i < n; i++) {
            uint64_t k = rng_next(&rng_state) % 8;
            if (k >= 3)
                x += (double)(1 + rng_next(&rng_state) % 4) * 0.125; /* else a repeated argument */
            double ax = x == 0.0 && rng_next(&rng_state) % 2 ? -0.0 : x;
            double v = rng_next(&rng_state) % 50 == 0 ? NAN : values[rng_next(&rng_state) % 7];
            ps_plf_add_point(&want, ax, &v);
            ps_plf_emit(&e, ax, v);
        }
        ps_plf_emit_end(&e);
        assert_false(oom);
        if (want.n != got.n || memcmp(want.a, got.a, (size_t)want.n * 2 * sizeof(double)) != 0)
            fail_msg("round %d: %d points wanted, %d got, or different bits", round, want.n, got.n);
    }
    ps_plf_buf_release(&want);
    ps_plf_buf_release(&got);
}

/* ps_plf_crossing at every vector level the CPU has against ps_bisect_inverse_lower_bound with
 * the old walk's predicate (below_or_equal), on random segment pairs: vertical,
 * flat, signed-zero, equal and huge values, intervals from a few ulps to wide ones, both signs;
 * the predicate need not be monotone, the path must be the same. */
static double random_end(void)
{
    static const double v[] = {0.0, -0.0, 0.25, 1.0, -1.0, 0.1, DBL_MAX, -DBL_MAX, 1e-300};
    uint64_t k = rng_next(&rng_state) % 4;
    if (k == 0)
        return v[rng_next(&rng_state) % (sizeof v / sizeof v[0])];
    return (double)(int64_t)(rng_next(&rng_state) % 20001 - 10000) * 1e-4;
}

static void random_sseg(struct ps_plf_sseg *s, double l, double r)
{
    s->l = l;
    s->r = rng_next(&rng_state) % 10 == 0 ? l : r;
    s->lv = random_end();
    s->rv = rng_next(&rng_state) % 8 == 0 ? s->lv : random_end();
}

static void test_crossing_matches_bisection(void **state)
{
    (void)state;
    AT_ISA_TEST_LEVEL(level) {
        for (int round = 0; round < 200000; round++) {
            double x0 = random_end(), x1;
            uint64_t k = rng_next(&rng_state) % 4;
            if (k == 0)
                x1 = nextafter(nextafter(x0, INFINITY), INFINITY); /* a few ulps */
            else if (k == 1)
                x1 = x0 + (double)(rng_next(&rng_state) % 100) * 1e-12;
            else
                x1 = x0 + (double)(rng_next(&rng_state) % 1000) * 1e-3;
            if (!(x0 <= x1) || !isfinite(x1))
                continue;
            struct ps_plf_sseg a, b;
            random_sseg(&a, x0 - (double)(rng_next(&rng_state) % 3) * 0.5, x1 + (double)(rng_next(&rng_state) % 3) * 0.5);
            random_sseg(&b, x0 - (double)(rng_next(&rng_state) % 3) * 0.25, x1 + (double)(rng_next(&rng_state) % 3) * 0.25);
            struct crossing c = {&a, &b};
            double want = ps_bisect_inverse_lower_bound(x0, x1, below_or_equal, &c);
            double got = ps_plf_crossing(&a, &b, x0, x1);
            if (memcmp(&want, &got, sizeof want) != 0)
                fail_msg("level %d round %d: crossing %a wanted, %a got", level, round, want, got);
        }
    }
}

ISA_LEVEL_TESTS(test_min_matches_previous_finite)
ISA_LEVEL_TESTS(test_min_matches_previous_wild)
ISA_LEVEL_TESTS(test_min_matches_previous_many_points)
ISA_LEVEL_TESTS(test_crossing_matches_bisection)

int main(void)
{
    const struct CMUnitTest tests[] = {
        ISA_LEVEL_ENTRIES(test_min_matches_previous_finite, NULL, NULL),
        ISA_LEVEL_ENTRIES(test_min_matches_previous_wild, NULL, NULL),
        ISA_LEVEL_ENTRIES(test_min_matches_previous_many_points, NULL, NULL),
        cmocka_unit_test(test_emit_matches_builder),
        ISA_LEVEL_ENTRIES(test_crossing_matches_bisection, NULL, NULL),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
