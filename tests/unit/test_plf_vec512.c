/* Differential tests of the share-vector kernels that have wide forms (composition and
 * compression, plf_vec512.h): at every ISA level the CPU has, the results must be those of the
 * baseline form to the bit, on random functions with negative zeros, repeated points, vertical
 * jumps, flat pieces, tiny steps near the compression's epsilon and many points. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/isa.h"
#include "core/plf.h"
#include "isa_test_util.h"
#include "plf_test_util.h"

struct env {
    bool oom;
    struct ps_plf_ctx ctx;
    struct ps_plf_buf f, g, want, got, want2, got2;
    uint64_t rng;
};

static int setup(void **state)
{
    struct env *v = test_calloc(1, sizeof *v);
    ps_plf_ctx_init(&v->ctx);
    struct ps_plf_buf *bufs[] = {&v->f, &v->g, &v->want, &v->got, &v->want2, &v->got2};
    for (int i = 0; i < 6; i++)
        ps_plf_buf_init(bufs[i], 1, &v->oom);
    v->rng = 0x5851f42d4c957f2dull;
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    ps_plf_ctx_release(&v->ctx);
    struct ps_plf_buf *bufs[] = {&v->f, &v->g, &v->want, &v->got, &v->want2, &v->got2};
    for (int i = 0; i < 6; i++)
        ps_plf_buf_release(bufs[i]);
    ps_isa_cap(PS_ISA_AVX512);
    test_free(v);
    return 0;
}

static uint64_t rnd(struct env *v, uint64_t n)
{
    return rng_next(&v->rng) % n;
}

/* A step for a moving component: mostly none, an epsilon-sized one or a coarse one, so that
 * flat pieces, compressible runs and ties all happen. */
static double random_step(struct env *v)
{
    static const double steps[] = {0.0, 0.0, 1e-16, 3e-15, 0.125, 0.25, 1.0 / 3.0};
    return steps[rnd(v, sizeof steps / sizeof steps[0])];
}

/* A share-vector function on [0, 2] through the builder: some components constant (+0, -0 or
 * 0.25), the others non-decreasing; jumps, flat pieces, repeated points. */
static void random_share_function(struct env *v, struct ps_plf_buf *b, int max_points)
{
    ps_plf_buf_clear(b, 5);
    double val[5];
    int moving[5];
    for (int r = 0; r < 5; r++) {
        int kind = (int)rnd(v, 4);
        moving[r] = kind >= 2;
        val[r] = kind == 0 ? -0.0 : (kind == 1 ? 0.25 : (rnd(v, 2) ? -0.0 : 0.0));
    }
    int n = 2 + (int)rnd(v, (uint64_t)max_points);
    double x = 0.0, dx = 2.0 / (double)n;
    ps_plf_add_point(b, x, val);
    for (int i = 1; i < n; i++) {
        int kind = (int)rnd(v, 7);
        double nx = x + dx * (double)rnd(v, 3);
        if (kind == 0)
            nx = x;  /* a jump (or a repeated point when no value moves) */
        if (nx > 2.0 || i == n - 1)
            nx = 2.0;
        for (int r = 0; r < 5; r++)
            if (moving[r] && kind != 1)
                val[r] += random_step(v);
        ps_plf_add_point(b, nx, val);
        x = nx;
    }
    if (b->n < 2 || b->a[(size_t)(b->n - 1) * 6] < 2.0)
        ps_plf_add_point(b, 2.0, val);
    ps_plf_trim_right(b);
}

/* A non-decreasing scalar g on [0, 1] into [0, 2] whose values often hit f's arguments (where
 * the composition takes right limits), f's ends, and each other. */
static void random_inner_function(struct env *v, struct ps_plf_buf *b, const struct ps_plf *f, int max_points)
{
    ps_plf_buf_clear(b, 1);
    int n = 2 + (int)rnd(v, (uint64_t)max_points);
    double x = 0.0, y = rnd(v, 4) == 0 ? 0.0 : (double)rnd(v, 8) / 16.0;
    ps_plf_add_point(b, x, &y);
    for (int i = 1; i < n; i++) {
        int kind = (int)rnd(v, 6);
        double nx = kind == 0 ? x : x + (1.0 - x) * (double)(1 + rnd(v, 7)) / 64.0;
        if (i == n - 1)
            nx = 1.0;
        double ny = y;
        if (kind == 2) {
            double fx = ps_plf_pt(f, (int)rnd(v, (uint64_t)f->n))[0];
            ny = fx > y ? fx : y;
        } else if (kind != 1) {
            ny = y + (double)rnd(v, 5) / 32.0 + (rnd(v, 3) == 0 ? 1e-9 : 0.0);
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

/* Raw points (not through the builder): repeated and vertical points, negative zeros and
 * values that are not monotone, which the compression must treat alike at every level. */
static void random_raw_function(struct env *v, struct ps_plf_buf *b, int max_points)
{
    static const double vals[] = {0.0, -0.0, 1e-16, 0.25, 0.5, 1.0, 2.0 / 3.0};
    ps_plf_buf_clear(b, 5);
    int n = 2 + (int)rnd(v, (uint64_t)max_points);
    if (!ps_plf_buf_reserve(b, n))
        fail_msg("out of memory");
    double x = 0.0;
    for (int i = 0; i < n; i++) {
        double *p = b->a + (size_t)i * 6;
        x += rnd(v, 3) == 0 ? 0.0 : (double)(1 + rnd(v, 4)) / 16.0;
        p[0] = x;
        for (int r = 0; r < 5; r++)
            p[1 + r] = i > 0 && rnd(v, 2) ? p[1 + r - 6] : vals[rnd(v, sizeof vals / sizeof vals[0])];
    }
    b->n = n;
}

static void compose_at(struct env *v, enum ps_isa isa, struct ps_plf_buf *dst)
{
    ps_isa_cap(isa);
    struct ps_plf f = ps_plf_buf_view(&v->f), g = ps_plf_buf_view(&v->g);
    ps_plf_compose(&v->ctx, dst, &f, &g);
}

static void compress_at(enum ps_isa isa, struct ps_plf_buf *dst, const struct ps_plf_buf *src, double eps)
{
    ps_isa_cap(isa);
    struct ps_plf s = ps_plf_buf_view(src);
    ps_plf_compress(dst, &s, eps);
}

static void test_compose_and_compress_match_baseline(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 4000; round++) {
        int many = round % 10 == 0 ? 400 : 24;
        random_share_function(v, &v->f, many);
        struct ps_plf f = ps_plf_buf_view(&v->f);
        random_inner_function(v, &v->g, &f, many);
        double eps = round % 5 == 0 ? 0.0 : 1e-15;
        compose_at(v, PS_ISA_BASE, &v->want);
        compress_at(PS_ISA_BASE, &v->want2, &v->want, eps);
        AT_ISA_TEST_LEVEL(isa) {
            compose_at(v, (enum ps_isa)isa, &v->got);
            assert_same(&v->want, &v->got, round, "compose");
            compress_at((enum ps_isa)isa, &v->got2, &v->got, eps);
            assert_same(&v->want2, &v->got2, round, "compress of the composition");
        }
    }
    assert_false(v->oom || v->ctx.oom);
}

static void test_compress_raw_matches_baseline(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 4000; round++) {
        random_raw_function(v, &v->f, round % 10 == 0 ? 300 : 20);
        double eps = round % 3 == 0 ? 0.0 : (round % 3 == 1 ? 1e-15 : 0.1);
        compress_at(PS_ISA_BASE, &v->want, &v->f, eps);
        AT_ISA_TEST_LEVEL(isa) {
            compress_at((enum ps_isa)isa, &v->got, &v->f, eps);
            assert_same(&v->want, &v->got, round, "compress");
        }
    }
    assert_false(v->oom);
}

/* Runs of (nearly) collinear segments, where the cross products of the compression are zero
 * or a rounding error away from it and the bounds' tie rules decide. */
static void test_compress_linear_runs(void **state)
{
    struct env *v = *state;
    static const double slopes[] = {1.0 / 3.0, 0.1, 7.0, 0.0, -0.0, 1e-15};
    for (int round = 0; round < 2000; round++) {
        int n = 3 + (int)rnd(v, 60);
        double dx = (double)(1 + rnd(v, 9)) / (double)(1 + rnd(v, 10));
        ps_plf_buf_clear(&v->f, 5);
        if (!ps_plf_buf_reserve(&v->f, n))
            fail_msg("out of memory");
        double slope[5];
        for (int r = 0; r < 5; r++)
            slope[r] = slopes[rnd(v, sizeof slopes / sizeof slopes[0])];
        for (int i = 0; i < n; i++) {
            double *p = v->f.a + (size_t)i * 6;
            if (rnd(v, 8) == 0 && i > 0)
                for (int r = 0; r < 5; r++)
                    slope[r] = slopes[rnd(v, sizeof slopes / sizeof slopes[0])];
            p[0] = (double)i * dx;
            for (int r = 0; r < 5; r++)
                p[1 + r] = slope[r] * p[0];
        }
        v->f.n = n;
        double eps = round % 3 == 0 ? 0.0 : (round % 3 == 1 ? 1e-15 : 1e-3);
        compress_at(PS_ISA_BASE, &v->want, &v->f, eps);
        AT_ISA_TEST_LEVEL(isa) {
            compress_at((enum ps_isa)isa, &v->got, &v->f, eps);
            assert_same(&v->want, &v->got, round, "compress of linear runs");
        }
    }
}

/* The smallest inputs: two-point f and g (the builders' first points take their own path). */
static void test_smallest_inputs(void **state)
{
    struct env *v = *state;
    const double zero[5] = {0.0, -0.0, 0.0, -0.0, 0.0}, one[5] = {1.0, -0.0, 0.5, 0.0, 0.25};
    double y0 = 0.0, y1 = 2.0;
    ps_plf_buf_clear(&v->f, 5);
    ps_plf_push_segment(&v->f, 0.0, zero, 2.0, one);
    ps_plf_buf_clear(&v->g, 1);
    ps_plf_push_segment(&v->g, 0.0, &y0, 1.0, &y1);
    compose_at(v, PS_ISA_BASE, &v->want);
    compress_at(PS_ISA_BASE, &v->want2, &v->f, 1e-15);
    AT_ISA_TEST_LEVEL(isa) {
        compose_at(v, (enum ps_isa)isa, &v->got);
        assert_same(&v->want, &v->got, 0, "compose");
        compress_at((enum ps_isa)isa, &v->got2, &v->f, 1e-15);
        assert_same(&v->want2, &v->got2, 0, "compress");
    }
}

/* The failure messages of the fused composition and compression name the level (each level has
 * its own kernel: a point in one 512-bit register, or in two 256-bit ones). */
static const char *const isa_names[] = {"compose_compress (base)", "compose_compress (avx2)",
                                        "compose_compress (avx512)"};

/* The fused composition and compression (ps_plf_compose_compress), and the composition alone,
 * against the composition and the compression one after the other at the baseline level. Some share functions get a
 * constant component of 100, where 100 + 1e-15 rounds to 100: the compression never checks
 * that component, but the stream checks every component, and must notice that this one
 * failed its test and fall back. Also g with a jump at its end, of one argument, or
 * decreasing somewhere. */
static void test_compose_compress_matches_two_steps(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 6000; round++) {
        int many = round % 10 == 0 ? 400 : (round % 3 == 0 ? 3 : 24);
        random_share_function(v, &v->f, many);
        if (round % 4 == 1) {
            int r = (int)rnd(v, 5);
            for (int i = 0; i < v->f.n; i++)
                v->f.a[(size_t)i * 6 + 1 + (size_t)r] = 100.0;
        }
        struct ps_plf f = ps_plf_buf_view(&v->f);
        random_inner_function(v, &v->g, &f, many);
        /* A jump at g's end (the composition ends vertical and is trimmed), or a g of one
         * argument (the trimmed composition keeps two points). */
        if (round % 7 == 3 || round % 11 == 5) {
            if (round % 11 == 5)
                ps_plf_buf_clear(&v->g, 1);
            double y0 = v->g.n ? v->g.a[(size_t)(v->g.n - 1) * 2 + 1] : (double)rnd(v, 8) / 8.0;
            double y1 = y0 + (double)(1 + rnd(v, 8)) / 8.0;
            y1 = y1 > 2.0 ? 2.0 : y1;
            ps_plf_add_point(&v->g, 1.0, &y0);
            ps_plf_add_point(&v->g, 1.0, &y1);
        }
        /* A g that decreases somewhere (the pairs are then merged as upstream's). */
        if (round % 13 == 7 && v->g.n >= 3) {
            int k = 1 + (int)rnd(v, (uint64_t)(v->g.n - 2));
            v->g.a[2 * (size_t)k + 1] = v->g.a[2 * (size_t)k - 1] * 0.5;
        }
        struct ps_plf g = ps_plf_buf_view(&v->g);
        static const double epss[] = {0.0, 1e-15, 1e-15, 0.1};
        double eps = epss[round % 4 == 1 ? 1 : rnd(v, 4)];
        compose_at(v, PS_ISA_BASE, &v->want);
        compress_at(PS_ISA_BASE, &v->want2, &v->want, eps);
        FOR_BASE_THEN_ISA_TEST_LEVEL(isa) {
            ps_plf_compose_compress(&v->ctx, &v->got2, &v->got, &f, &g, eps);
            assert_same(&v->want2, &v->got2, round, isa_names[isa]);
            ps_plf_compose(&v->ctx, &v->got, &f, &g);
            assert_same(&v->want, &v->got, round, "compose");
        }
    }
    assert_false(v->oom || v->ctx.oom);
}

/* The fused kernels on edge inputs: f with raw points (repeated and vertical points, negative
 * zeros, values that go down), g constant, g of one argument, g stepping onto f's arguments, and
 * many points; against the two steps at the baseline level. */
static void test_compose_compress_edge_inputs(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 4000; round++) {
        random_raw_function(v, &v->f, round % 10 == 0 ? 300 : 12);
        /* The raw arguments, scaled onto [0, 2] (where g's values lie). */
        double top = v->f.a[(size_t)(v->f.n - 1) * 6];
        for (int i = 0; i < v->f.n && top > 0; i++)
            v->f.a[(size_t)i * 6] = v->f.a[(size_t)i * 6] * 2.0 / top;
        struct ps_plf f = ps_plf_buf_view(&v->f);
        ps_plf_buf_clear(&v->g, 1);
        int kind = round % 4;
        int n = 2 + (int)rnd(v, round % 10 == 0 ? 200 : 10);
        double y = (double)rnd(v, 4) / 4.0;
        for (int i = 0; i < n; i++) {
            double x = kind == 1 ? 0.5 : (double)i / (double)(n - 1);
            if (kind == 2) {
                double fx = f.a[(size_t)rnd(v, (uint64_t)f.n) * 6];
                y = fx > y ? fx : y;
            } else if (kind == 3) {
                y += (double)rnd(v, 3) / 8.0;
            }
            y = y > 2.0 ? 2.0 : y;
            ps_plf_add_point(&v->g, x, &y);
        }
        struct ps_plf g = ps_plf_buf_view(&v->g);
        static const double epss[] = {0.0, 1e-15, 0.1};
        double eps = epss[rnd(v, 3)];
        compose_at(v, PS_ISA_BASE, &v->want);
        compress_at(PS_ISA_BASE, &v->want2, &v->want, eps);
        FOR_BASE_THEN_ISA_TEST_LEVEL(isa) {
            ps_plf_compose_compress(&v->ctx, &v->got2, &v->got, &f, &g, eps);
            assert_same(&v->want2, &v->got2, round, isa_names[isa]);
        }
    }
    assert_false(v->oom || v->ctx.oom);
}

/* Scaling the argument and extending (the children's views) copy every segment through the
 * builder, vectorized for share vectors: on builder-made and raw functions (repeats, jumps,
 * negative zeros), with scales that make neighbouring arguments round together. */
static void test_scale_and_extend_match_baseline(void **state)
{
    struct env *v = *state;
    static const double scales[] = {1.0, 3.0, 0.5, 7.0, 1e300, 1e308};
    for (int round = 0; round < 4000; round++) {
        if (round % 2)
            random_share_function(v, &v->f, round % 10 == 1 ? 300 : 20);
        else
            random_raw_function(v, &v->f, round % 10 == 0 ? 300 : 20);
        struct ps_plf f = ps_plf_buf_view(&v->f);
        double scale = scales[rnd(v, sizeof scales / sizeof scales[0])];
        double lv[5] = {0.0, -0.0, 0.25, 1.0, 0.5}, rv[5] = {1.0, 1.0, -0.0, 2.0, 0.25};
        bool ends = rnd(v, 2);
        double left = -(double)rnd(v, 2), right = 2.0 + (double)rnd(v, 2);
        FOR_BASE_THEN_ISA_TEST_LEVEL(isa) {
            struct ps_plf_buf *s1 = isa == PS_ISA_BASE ? &v->want : &v->got;
            struct ps_plf_buf *s2 = isa == PS_ISA_BASE ? &v->want2 : &v->got2;
            ps_plf_scale_argument(s1, &f, scale);
            struct ps_plf scaled = ps_plf_buf_view(s1);
            if (scaled.n >= 1)
                ps_plf_extend(s2, &scaled, left, ends ? lv : NULL, right, ends ? rv : NULL);
            else
                ps_plf_buf_clear(s2, 5);
            if (isa != PS_ISA_BASE) {
                assert_same(&v->want, &v->got, round, "scale_argument");
                assert_same(&v->want2, &v->got2, round, "extend");
            }
        }
    }
    assert_false(v->oom);
}

ISA_WIDE_LEVEL_TESTS(test_compose_and_compress_match_baseline)
ISA_WIDE_LEVEL_TESTS(test_compress_raw_matches_baseline)
ISA_WIDE_LEVEL_TESTS(test_compress_linear_runs)
ISA_WIDE_LEVEL_TESTS(test_smallest_inputs)
ISA_WIDE_LEVEL_TESTS(test_compose_compress_matches_two_steps)
ISA_WIDE_LEVEL_TESTS(test_compose_compress_edge_inputs)
ISA_WIDE_LEVEL_TESTS(test_scale_and_extend_match_baseline)

int main(void)
{
    const struct CMUnitTest tests[] = {
        ISA_WIDE_LEVEL_ENTRIES(test_compose_and_compress_match_baseline, setup, teardown),
        ISA_WIDE_LEVEL_ENTRIES(test_compress_raw_matches_baseline, setup, teardown),
        ISA_WIDE_LEVEL_ENTRIES(test_compress_linear_runs, setup, teardown),
        ISA_WIDE_LEVEL_ENTRIES(test_smallest_inputs, setup, teardown),
        ISA_WIDE_LEVEL_ENTRIES(test_compose_compress_matches_two_steps, setup, teardown),
        ISA_WIDE_LEVEL_ENTRIES(test_compose_compress_edge_inputs, setup, teardown),
        ISA_WIDE_LEVEL_ENTRIES(test_scale_and_extend_match_baseline, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
