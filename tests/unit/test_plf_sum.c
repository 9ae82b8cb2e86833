/* The summand-major sum (plf_sum.c) against the point-major walk it replaced: at every critical
 * point (ps_plf_clear_and_sort of all summands' points), every summand in array order through
 * upstream's SegmentAt traverser, left and right sums kept side by side. Many summands with
 * shared breakpoints, jumps (also at the bounds), flat pieces, negative zeros (also as domain
 * bounds, where the first summand's zero must win), long segments over many points and
 * different domains; results must agree to the bit at every vector level the CPU has (the
 * five-component kernels are vectorised across points). Also the packed interpolation of five
 * components against the scalar formula. */
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

#include "core/isa.h"
#include "core/plf.h"
#include "core/plf_impl.h"
#include "isa_test_util.h"
#include "plf_test_util.h"

#define MAX_SUMMANDS 24

struct env {
    bool oom;
    struct ps_plf_ctx ctx;
    struct ps_plf_buf want, got;
    struct ps_plf_buf parts[MAX_SUMMANDS];
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
    ps_plf_buf_init(&v->want, 1, &v->oom);
    ps_plf_buf_init(&v->got, 1, &v->oom);
    for (int i = 0; i < MAX_SUMMANDS; i++)
        ps_plf_buf_init(&v->parts[i], 1, &v->oom);
    v->rng = 0x243f6a8885a308d3ull;
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    struct env *v = *state;
    ps_plf_ctx_release(&v->ctx);
    ps_plf_buf_release(&v->want);
    ps_plf_buf_release(&v->got);
    for (int i = 0; i < MAX_SUMMANDS; i++)
        ps_plf_buf_release(&v->parts[i]);
    test_free(v);
    return 0;
}

/* A non-decreasing function on [left, right]: arguments on a grid of 1/32 (so summands share
 * breakpoints) or off it, jumps, flat pieces, and values that may start at -0. */
static void random_function(struct env *v, struct ps_plf_buf *b, int dim, double left, double right)
{
    ps_plf_buf_clear(b, dim);
    /* Few points make long segments (over many vector blocks of the sum's points). */
    int n = 2 + (int)(next_random(v) % (next_random(v) % 3 == 0 ? 4 : 40));
    double x = left, val[PS_PLF_MAX_DIM] = {0};
    for (int r = 0; r < dim; r++)
        val[r] = next_random(v) % 4 == 0 ? -0.0 : (double)(next_random(v) % 3) / 7.0;
    ps_plf_add_point(b, x, val);
    for (int i = 1; i < n && x < right; i++) {
        int kind = (int)(next_random(v) % 6);
        double nx;
        if (kind == 0)
            nx = x;  /* a jump */
        else if (kind == 1)
            nx = x + (right - x) * (double)(next_random(v) % 1000) / 3000.0;
        else
            nx = ceil(x * 32.0 + (double)(next_random(v) % 4)) / 32.0;
        if (nx > right || i == n - 1)
            nx = right;
        for (int r = 0; r < dim; r++) {
            if (kind == 2)
                continue;  /* flat */
            double step = (double)(next_random(v) % 4) / 16.0;
            if (next_random(v) % 3 == 0)
                step += (double)(next_random(v) % 1000) * 1e-9;
            val[r] += step;
        }
        ps_plf_add_point(b, nx, val);
        x = nx;
    }
    if (b->n < 2 || ps_plf_right_bound(&(struct ps_plf){b->a, b->n, dim}) < right)
        ps_plf_add_point(b, right, val);
}

/* The point-major sum (the implementation before plf_sum.c). */
static void point_major_sum(struct ps_plf_ctx *ctx, struct ps_plf_buf *dst, const struct ps_plf *fs, int count)
{
    int dim = fs[0].dim;
    ps_plf_buf_clear(dst, dim);
    double lo = -DBL_MAX, hi = DBL_MAX;
    int total = 0;
    for (int i = 0; i < count; i++) {
        lo = fmax(lo, ps_plf_left_bound(&fs[i]));
        hi = fmin(hi, ps_plf_right_bound(&fs[i]));
        total += fs[i].n;
    }
    double *pts = malloc((size_t)total * sizeof *pts);
    assert_non_null(pts);
    int k = 0;
    for (int i = 0; i < count; i++)
        k += ps_plf_critical_points(&fs[i], pts + k);
    k = ps_plf_clear_and_sort(ctx, pts, k, lo, hi);
    struct ps_plf_cursor cur[MAX_SUMMANDS] = {{0}};
    for (int p = 0; p < k; p++) {
        double x = pts[p], left[PS_PLF_MAX_DIM] = {0}, right[PS_PLF_MAX_DIM] = {0};
        bool split = false;
        for (int i = 0; i < count; i++) {
            int s = cursor_segment_at(&fs[i], &cur[i], x);
            double l[PS_PLF_MAX_DIM], r[PS_PLF_MAX_DIM];
            if (X(&fs[i], s) == X(&fs[i], s + 1)) {
                copy_values(l, V(&fs[i], s), dim);
                copy_values(r, V(&fs[i], s + 1), dim);
                split = true;
            } else {
                seg_interp(&fs[i], s, x, l);
                copy_values(r, l, dim);
            }
            for (int d = 0; d < dim; d++) {
                left[d] += l[d];
                right[d] += r[d];
            }
        }
        ps_plf_add_point(dst, x, left);
        if (split)
            ps_plf_add_point(dst, x, right);
    }
    free(pts);
}

/* A summand's domain: from 0 (either sign) or a little above, to 1 or a little beyond. */
static void random_domain(struct env *v, double *left, double *right)
{
    *left = next_random(v) % 4 == 0 ? (double)(next_random(v) % 3) / 16.0 : 0.0;
    if (*left == 0.0 && next_random(v) % 3 == 0)
        *left = -0.0;
    *right = 1.0 + (double)(next_random(v) % 3) / 4.0;
}

/* The new sum of the count views against the point-major walk, to the bit. */
static void check_sum(struct env *v, const struct ps_plf *views, int count, int round)
{
    point_major_sum(&v->ctx, &v->want, views, count);
    ps_plf_sum(&v->ctx, &v->got, views, count);
    assert_false(v->oom || v->ctx.oom);
    assert_same(&v->want, &v->got, round, "sum");
}

static void sum_matches_point_major(struct env *v, int rounds)
{
    static const int dims[] = {1, 5, 3, 5};
    for (int round = 0; round < rounds; round++) {
        int dim = dims[round % 4];
        int count = 1 + (int)(next_random(v) % MAX_SUMMANDS);
        struct ps_plf views[MAX_SUMMANDS];
        for (int i = 0; i < count; i++) {
            double left, right;
            random_domain(v, &left, &right);
            random_function(v, &v->parts[i], dim, left, right);
            views[i] = ps_plf_buf_view(&v->parts[i]);
        }
        check_sum(v, views, count, round);
    }
}

/* One entry per vector level (ISA_LEVEL_TESTS below). */
static void test_sum_matches_point_major(void **state)
{
    struct env *v = *state;
    AT_ISA_TEST_LEVEL(isa) {
        assert_int_equal(ps_isa_level(), isa);
        sum_matches_point_major(v, 4000);
    }
}

/* The values at a summand's next point: a component in zero (may be NULL) is ±0 all along, one
 * past flat_from or at random keeps its value (a zero may turn into the other zero: equal, not
 * the same bits), the others rise. */
static void next_values(struct env *v, double val[5], const bool *zero, bool flat)
{
    for (int r = 0; r < 5; r++) {
        if (zero && zero[r]) {
            val[r] = next_random(v) % 2 ? -0.0 : 0.0;
            continue;
        }
        if (flat || next_random(v) % 4 == 0) {
            if (val[r] == 0.0 && next_random(v) % 3 == 0)
                val[r] = -val[r];
            continue;
        }
        val[r] += (double)(next_random(v) % 4) / 16.0 + (double)(next_random(v) % 1000) * 1e-9;
    }
}

/* The summand reaches its domain's right end. */
static void close_function(struct ps_plf_buf *b, double right, const double val[5])
{
    if (ps_plf_right_bound(&(struct ps_plf){b->a, b->n, 5}) < right)
        ps_plf_add_point(b, right, val);
}

/* Small summands as children of leaf pools are (at most 8 points, no jumps: the AVX-512
 * kernel that picks each lane's segment from the points held in registers): flat pieces, flat
 * ends (also the whole function), values +0 and -0 next to each other in flat pieces, points
 * on and off the shared grid, some summands with jumps or more points in between. */
static void small_function(struct env *v, struct ps_plf_buf *b, double left, double right)
{
    ps_plf_buf_clear(b, 5);
    int n = 2 + (int)(next_random(v) % 7);
    double x = left, val[5];
    bool zero[5]; /* a component that is ±0 all along (a resource the summand does not use) */
    for (int r = 0; r < 5; r++) {
        zero[r] = next_random(v) % 3 == 0;
        val[r] = zero[r] || next_random(v) % 4 == 0 ? (next_random(v) % 2 ? -0.0 : 0.0)
                                                     : (double)(next_random(v) % 3) / 7.0;
    }
    ps_plf_add_point(b, x, val);
    int flat_from = 1 + (int)(next_random(v) % (unsigned)n);
    for (int i = 1; i < n; i++) {
        double nx = i == n - 1 ? right : x + (right - x) * (double)(1 + next_random(v) % 999) / 2000.0;
        if (next_random(v) % 2)
            nx = ceil(nx * 32.0) / 32.0;
        if (!(nx > x) || nx > right)
            break;
        next_values(v, val, zero, i >= flat_from);
        ps_plf_add_point(b, nx, val);
        x = nx;
    }
    close_function(b, right, val);
}

/* rounds sums at every vector level, each of 1 to few summands (or, half the time, up to
 * MAX_SUMMANDS) on random domains, made by make, checked against the reference. */
typedef void (*summand_fn)(struct env *v, struct ps_plf_buf *b, double left, double right);

static void random_sums(struct env *v, int rounds, int few, summand_fn make)
{
    AT_ISA_TEST_LEVEL(isa) {
        for (int round = 0; round < rounds; round++) {
            int count = 1 + (int)(next_random(v) % (next_random(v) % 2 ? (unsigned)few : MAX_SUMMANDS));
            struct ps_plf views[MAX_SUMMANDS];
            for (int i = 0; i < count; i++) {
                double left, right;
                random_domain(v, &left, &right);
                make(v, &v->parts[i], left, right);
                views[i] = ps_plf_buf_view(&v->parts[i]);
            }
            check_sum(v, views, count, round);
        }
    }
}

/* One in 16 a general function, else a small one. */
static void small_mix(struct env *v, struct ps_plf_buf *b, double left, double right)
{
    if (next_random(v) % 16 == 0)
        random_function(v, b, 5, left, right);
    else
        small_function(v, b, left, right);
}

static void test_sum_small_summands(void **state)
{
    random_sums(*state, 20000, 3, small_mix);
}

/* Larger summands without jumps (the AVX-512 kernel over a window of the summand's points, up
 * to 256 points; beyond it the segment kernel): 9-300 points, on a grid of 1/1024 (shared with
 * other summands, so some blocks hold many breakpoints of one summand) or off it, flat pieces
 * and flat ends, values +0 and -0 next to each other. */
static void large_function(struct env *v, struct ps_plf_buf *b, double left, double right)
{
    ps_plf_buf_clear(b, 5);
    int n = 9 + (int)(next_random(v) % (next_random(v) % 4 == 0 ? 292 : 40));
    double x = left, val[5];
    for (int r = 0; r < 5; r++)
        val[r] = next_random(v) % 3 == 0 ? (next_random(v) % 2 ? -0.0 : 0.0) : (double)(next_random(v) % 3) / 7.0;
    ps_plf_add_point(b, x, val);
    int flat_from = 1 + (int)(next_random(v) % (unsigned)n);
    double step = (right - left) / (double)n;
    for (int i = 1; i < n; i++) {
        double nx = i == n - 1 ? right : x + step * (double)(1 + next_random(v) % 1000) / 600.0;
        if (next_random(v) % 2)
            nx = ceil(nx * 1024.0) / 1024.0;
        if (!(nx > x) || nx > right)
            break;
        next_values(v, val, NULL, i >= flat_from);
        ps_plf_add_point(b, nx, val);
        x = nx;
    }
    close_function(b, right, val);
}

/* One in 8 a general function, one in 8 a small one, else a large one. */
static void large_mix(struct env *v, struct ps_plf_buf *b, double left, double right)
{
    int kind = (int)(next_random(v) % 8);
    if (kind == 0)
        random_function(v, b, 5, left, right);
    else if (kind == 1)
        small_function(v, b, left, right);
    else
        large_function(v, b, left, right);
}

static void test_sum_large_summands(void **state)
{
    random_sums(*state, 4000, 6, large_mix);
}

/* Zeros of both signs where the small summands' kernel takes shortcuts: at a breakpoint (the
 * segment ending there gives v - d * 0 with its own d), and a last segment that is horizontal
 * by value but starts at -0 (not flat for add_summand, so interpolated). (The accumulators
 * start at +0, and +0 + -0 is +0, so a summand's zero sign never reaches the sum: this guards
 * that the kernels keep it so.) */
static void test_sum_small_signed_zeros(void **state)
{
    struct env *v = *state;
    static const double z[3] = {0.0, -0.0, 1.0};
    AT_ISA_TEST_LEVEL(isa) {
        for (int code = 0; code < 3 * 3 * 3 * 3; code++) {
            int c = code;
            double a[4][6];
            for (int i = 0; i < 4; i++) {
                a[i][0] = (double)i / 3.0;
                for (int r = 0; r < 4; r++)
                    a[i][1 + r] = i == 3 ? 2.0 : (double)(i + r) / 8.0;
                a[i][5] = z[c % 3];
                c /= 3;
            }
            struct ps_plf f = {&a[0][0], 4, 5};
            if (code % 2)
                copy_values(a[3] + 1, a[2] + 1, 4); /* a last segment flat but for the zero */
            point_major_sum(&v->ctx, &v->want, &f, 1);
            ps_plf_sum(&v->ctx, &v->got, &f, 1);
            assert_same(&v->want, &v->got, code, "sum");
        }
    }
}

/* A summand whose domain is one point (a vertical segment only) and sums of a single function. */
static void test_sum_degenerate_summands(void **state)
{
    struct env *v = *state;
    double a[] = {0.5, 1.0, 0.5, 2.0}, b[] = {0.0, 0.0, 1.0, 1.0};
    struct ps_plf views[2] = {{a, 2, 1}, {b, 2, 1}};
    point_major_sum(&v->ctx, &v->want, views, 2);
    ps_plf_sum(&v->ctx, &v->got, views, 2);
    assert_same(&v->want, &v->got, 0, "sum");
    assert_int_equal(v->got.n, 2);
    point_major_sum(&v->ctx, &v->want, views + 1, 1);
    ps_plf_sum(&v->ctx, &v->got, views + 1, 1);
    assert_same(&v->want, &v->got, 1, "sum");
    /* Jumps at the first point that cancel: the builder keeps the second, equal point there
     * (a one-point function takes any point), and a later equal right sum is dropped. */
    double c[] = {0.0, 0.0, 0.0, 1.0, 0.5, 1.0, 0.5, 2.0, 1.0, 2.0};
    double d[] = {0.0, 1.0, 0.0, 0.0, 0.5, 0.0, 0.5, -1.0, 1.0, -1.0};
    struct ps_plf cancel[2] = {{c, 5, 1}, {d, 5, 1}};
    point_major_sum(&v->ctx, &v->want, cancel, 2);
    ps_plf_sum(&v->ctx, &v->got, cancel, 2);
    assert_same(&v->want, &v->got, 2, "sum");
    double e[] = {0.5, 2.0, 0.5, 1.0};
    struct ps_plf point[2] = {{a, 2, 1}, {e, 2, 1}};
    point_major_sum(&v->ctx, &v->want, point, 2);
    ps_plf_sum(&v->ctx, &v->got, point, 2);
    assert_same(&v->want, &v->got, 3, "sum");
    assert_int_equal(v->got.n, 2);
}

/* The two-at-a-time interpolation of share vectors against lerp per component, around t = 0.5
 * (where the formula switches) and with negative zeros. */
static void test_lerp_values_matches_scalar(void **state)
{
    struct env *v = *state;
    for (int round = 0; round < 100000; round++) {
        double lv[5], rv[5], got[5];
        for (int k = 0; k < 5; k++) {
            uint64_t r = next_random(v);
            lv[k] = r % 7 == 0 ? -0.0 : (double)(r % 100000) / 3.0e4;
            rv[k] = r % 5 == 0 ? lv[k] : lv[k] + (double)(next_random(v) % 100000) / 7.0e4;
        }
        double t = (double)(next_random(v) % 1000001) / 1.0e6;
        if (round % 10 == 0)
            t = nextafter(0.5, round % 20 == 0 ? 0.0 : 1.0);
        if (round % 30 == 0)
            t = 0.5;
        lerp_values(got, lv, rv, t, 5);
        for (int k = 0; k < 5; k++) {
            double want = lerp(lv[k], rv[k], t);
            if (memcmp(&want, &got[k], sizeof want) != 0)
                fail_msg("component %d differs in round %d", k, round);
        }
    }
}

ISA_LEVEL_TESTS(test_sum_matches_point_major)
ISA_LEVEL_TESTS(test_sum_small_summands)
ISA_LEVEL_TESTS(test_sum_small_signed_zeros)
ISA_LEVEL_TESTS(test_sum_large_summands)

int main(void)
{
    const struct CMUnitTest tests[] = {
        ISA_LEVEL_ENTRIES(test_sum_matches_point_major, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sum_degenerate_summands, setup, teardown),
        ISA_LEVEL_ENTRIES(test_sum_small_summands, setup, teardown),
        ISA_LEVEL_ENTRIES(test_sum_small_signed_zeros, setup, teardown),
        ISA_LEVEL_ENTRIES(test_sum_large_summands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lerp_values_matches_scalar, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
