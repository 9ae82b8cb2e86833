/* The sum's critical points (plf_sum_points.c: the summands' runs merged) against what the sum
 * did before: every summand's ps_plf_critical_points concatenated, then ps_plf_clear_and_sort
 * on the common domain. Shared arguments, jumps (repeated arguments), -0 and +0 (the earlier
 * summand's zero must win, also at the domain's ends), points outside the common domain,
 * disjoint domains and many summands; the results must agree to the bit. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/plf.h"
#include "core/plf_sum_points.h"
#include "test_rng.h"

enum { MAX_SUMMANDS = 64, MAX_POINTS = 48, PAD = 8 };

struct env {
    struct ps_plf_ctx ctx, ref;
    double data[MAX_SUMMANDS][MAX_POINTS * (PS_PLF_MAX_DIM + 1)];
    struct ps_plf fs[MAX_SUMMANDS];
    double want[MAX_SUMMANDS * MAX_POINTS];
    uint64_t rng;
};

static int setup(void **state)
{
    struct env *v = test_calloc(1, sizeof *v);
    ps_plf_ctx_init(&v->ctx);
    ps_plf_ctx_init(&v->ref);
    v->rng = 0x13198a2e03707344ull;
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    ps_plf_ctx_release(&v->ctx);
    ps_plf_ctx_release(&v->ref);
    test_free(v);
    return 0;
}

/* An argument on a coarse grid (so summands share them), with a sign for zero. */
static double grid_x(struct env *v, double from)
{
    double x = from + (double)(rng_next(&v->rng) % 5) / 8.0;
    if (x == 0.0 && rng_next(&v->rng) % 2)
        x = -0.0;
    return x;
}

/* mode 0: domains from about 0; 1: from below 0 (zeros inside the common domain); 2: ending at
 * +0 or -0 (a zero as the upper end). */
static void random_summand(struct env *v, int i, int dim, int mode)
{
    double *a = v->data[i];
    int n = 2 + (int)(rng_next(&v->rng) % (rng_next(&v->rng) % 4 == 0 ? MAX_POINTS - 1 : 10));
    double x = rng_next(&v->rng) % 3 == 0 ? grid_x(v, -0.25) : (rng_next(&v->rng) % 2 ? 0.0 : -0.0);
    if (mode == 1)
        x = -0.125 - (double)(rng_next(&v->rng) % 3) / 8.0;
    for (int j = 0; j < n; j++) {
        a[(size_t)j * (dim + 1)] = x;
        for (int d = 0; d < dim; d++)
            a[(size_t)j * (dim + 1) + 1 + d] = (double)j;
        uint64_t r = rng_next(&v->rng) % 8;
        if (r == 0)
            continue; /* a jump: the same argument again */
        if (r == 1)
            x += (double)(rng_next(&v->rng) % 1000) / 7777.0; /* off the grid */
        else
            x = grid_x(v, floor(x * 8.0) / 8.0 + 0.125);
    }
    if (mode == 2) {
        /* Shift so that the last argument is zero (x - x is +0), then maybe make it -0. */
        double end = a[(size_t)(n - 1) * (dim + 1)];
        for (int j = 0; j < n; j++)
            a[(size_t)j * (dim + 1)] -= end;
        if (rng_next(&v->rng) % 2)
            for (int j = n - 1; j >= 0 && a[(size_t)j * (dim + 1)] == 0.0; j--)
                a[(size_t)j * (dim + 1)] = -0.0;
    }
    v->fs[i] = (struct ps_plf){a, n, dim};
}

static void test_points_match_clear_and_sort(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 20000; round++) {
        int dim = round % 2 ? PS_PLF_MAX_DIM : 1;
        int count = 1 + (int)(rng_next(&v->rng) % (round % 10 == 0 ? MAX_SUMMANDS : 16));
        double lo = -DBL_MAX, hi = DBL_MAX;
        int total = 0;
        for (int i = 0; i < count; i++) {
            random_summand(v, i, dim, round % 3);
            if (ps_plf_left_bound(&v->fs[i]) > lo)
                lo = ps_plf_left_bound(&v->fs[i]);
            if (ps_plf_right_bound(&v->fs[i]) < hi)
                hi = ps_plf_right_bound(&v->fs[i]);
            total += v->fs[i].n;
        }
        int k = 0;
        for (int i = 0; i < count; i++)
            k += ps_plf_critical_points(&v->fs[i], v->want + k);
        k = ps_plf_clear_and_sort(&v->ref, v->want, k, lo, hi);
        int got = ps_plf_sum_points(&v->ctx, v->fs, count, total, lo, hi, PAD);
        assert_false(v->ctx.oom);
        if (got != k || (k > 0 && memcmp(v->want, v->ctx.pts, (size_t)k * sizeof *v->want) != 0))
            fail_msg("round %d: %d points, want %d", round, got, k);
        for (int i = 0; i < (got > 0 ? PAD : 0); i++)
            v->ctx.pts[got + i] = 0.0; /* the promised slack is writable */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_points_match_clear_and_sort, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
