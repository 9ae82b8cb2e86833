/* Piecewise-linear functions and the IEEE bisection under the vector HDRF update. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/bisect.h"
#include "core/plf.h"

static bool below_03(double x, void *ctx)
{
    (void)ctx;
    return x <= 0.3;
}

static bool square_below_2(double x, void *ctx)
{
    (void)ctx;
    return x * x <= 2.0;
}

static void test_bisection_is_bitwise(void **state)
{
    (void)state;
    const double values[] = {-INFINITY, -1e300, -1.0, -DBL_MIN, -0.0, 0.0, 4.9e-324, DBL_MIN, 0.5, 1.0, 1e300, INFINITY};
    int n = (int)(sizeof values / sizeof values[0]);
    for (int i = 1; i < n; i++) {
        assert_true(ps_double_to_ordered_bits(values[i - 1]) < ps_double_to_ordered_bits(values[i]));
        uint64_t b = ps_double_to_ordered_bits(values[i]);
        double back = ps_ordered_bits_to_double(b);
        assert_memory_equal(&back, &values[i], sizeof back);
    }
    /* Neighbouring doubles are neighbouring integers. */
    assert_true(ps_double_to_ordered_bits(nextafter(1.0, 2.0)) == ps_double_to_ordered_bits(1.0) + 1);
    assert_true(ps_bisect_inverse_lower_bound(0.0, 1.0, below_03, NULL) == 0.3);
    double r = ps_bisect_inverse_lower_bound(0.0, 2.0, square_below_2, NULL);
    assert_true(r * r <= 2.0);
    double up = nextafter(r, 3.0);
    assert_true(up * up > 2.0);
    assert_true(ps_bisect_inverse_lower_bound(0.5, 0.5, below_03, NULL) == 0.5);
    assert_true(ps_bisect_inverse_lower_bound(0.0, 0.25, below_03, NULL) == 0.25);
}

struct fixture {
    bool oom;
    struct ps_plf_ctx ctx;
    struct ps_plf_buf b[4];
};

static int setup(void **state)
{
    struct fixture *f = test_calloc(1, sizeof *f);
    ps_plf_ctx_init(&f->ctx);
    for (int i = 0; i < 4; i++)
        ps_plf_buf_init(&f->b[i], 1, &f->oom);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    ps_plf_ctx_release(&f->ctx);
    for (int i = 0; i < 4; i++)
        ps_plf_buf_release(&f->b[i]);
    test_free(f);
    return 0;
}

static void scalar_points(struct ps_plf_buf *b, const double *xy, int n)
{
    ps_plf_buf_clear(b, 1);
    for (int i = 0; i < n; i++)
        ps_plf_add_point(b, xy[2 * i], &xy[2 * i + 1]);
}

static void test_builder_merges_like_upstream(void **state)
{
    struct fixture *f = *state;
    /* (0,0) (1,0) (2,0): two horizontal segments become one; (2,0) again: a point, dropped;
     * (2,1) (2,3): two vertical segments become one; then a tilted segment. */
    const double xy[] = {0, 0, 1, 0, 2, 0, 2, 0, 2, 1, 2, 3, 3, 4};
    scalar_points(&f->b[0], xy, 7);
    struct ps_plf g = ps_plf_buf_view(&f->b[0]);
    assert_int_equal(g.n, 4);
    const double expect[] = {0, 0, 2, 0, 2, 3, 3, 4};
    assert_memory_equal(g.a, expect, sizeof expect);
    /* A single point function stays a point segment. */
    ps_plf_buf_clear(&f->b[1], 1);
    double v = 5;
    ps_plf_push_segment(&f->b[1], 1, &v, 1, &v);
    assert_int_equal(f->b[1].n, 2);
}

static void test_interpolation_and_left_continuity(void **state)
{
    struct fixture *f = *state;
    /* 0 -> 1 on [0, 3], a jump to 2 at 3, then 2 -> 5 on [3, 4]. */
    const double xy[] = {0, 0, 3, 1, 3, 2, 4, 5};
    scalar_points(&f->b[0], xy, 4);
    struct ps_plf g = ps_plf_buf_view(&f->b[0]);
    assert_true(ps_plf_scalar_at(&g, 1.0) == 0.0 + (1.0 - 0.0) * (1.0 / 3));
    /* t >= 0.5 interpolates from the right end. */
    assert_true(ps_plf_scalar_at(&g, 2.0) == 1.0 - (1.0 - 0.0) * (1 - 2.0 / 3));
    assert_true(ps_plf_scalar_at(&g, 0.0) == 0.0);
    /* Left-continuous: the value at the jump is the left limit. */
    assert_true(ps_plf_scalar_at(&g, 3.0) == 1.0);
    double l, r;
    ps_plf_limits_at(&g, 3.0, &l, &r);
    assert_true(l == 1.0 && r == 2.0);
    ps_plf_right_limit_at(&g, 3.0, &r);
    assert_true(r == 2.0);
    assert_true(ps_plf_scalar_at(&g, 4.0) == 5.0);
    struct ps_plf_cursor c = {0};
    ps_plf_cursor_limits_at(&g, &c, 1.5, &l, &r);
    assert_true(l == r && l == 0.5);
    ps_plf_cursor_limits_at(&g, &c, 3.0, &l, &r);
    assert_true(l == 1.0 && r == 2.0);
}

static void test_transpose_narrow_trim_extend(void **state)
{
    struct fixture *f = *state;
    /* share by fit factor: flat 0 on [0, 1], then 0 -> 0.6 on [1, 2]. */
    const double xy[] = {0, 0, 1, 0, 2, 0.6};
    scalar_points(&f->b[0], xy, 3);
    ps_plf_transpose(&f->b[0]);  /* fit factor by share: vertical at 0, then 1 -> 2 on [0, 0.6] */
    struct ps_plf t = ps_plf_buf_view(&f->b[0]);
    ps_plf_narrow(&f->ctx, &f->b[1], &t, 0.0, 0.3);
    ps_plf_trim_left(&f->b[1]);
    struct ps_plf n = ps_plf_buf_view(&f->b[1]);
    assert_int_equal(n.n, 2);
    assert_true(ps_plf_left_bound(&n) == 0.0 && ps_plf_right_bound(&n) == 0.3);
    assert_true(ps_plf_scalar_at(&n, 0.0) == 1.0);
    assert_true(ps_plf_scalar_at(&n, 0.3) == 1.5);
    ps_plf_extend(&f->b[2], &n, 0.0, NULL, 1.0, NULL);
    struct ps_plf e = ps_plf_buf_view(&f->b[2]);
    assert_true(ps_plf_right_bound(&e) == 1.0);
    assert_true(ps_plf_scalar_at(&e, 0.9) == 1.5);
    double ten = 10;
    ps_plf_extend(&f->b[3], &n, 0.0, NULL, 1.0, &ten);  /* with a jump at the old end */
    struct ps_plf j = ps_plf_buf_view(&f->b[3]);
    assert_true(ps_plf_scalar_at(&j, 0.3) == 1.5);
    assert_true(ps_plf_scalar_at(&j, 0.31) == 10.0);
    ps_plf_trim_right(&f->b[3]);  /* not vertical at the end: unchanged */
    assert_int_equal(f->b[3].n, j.n);
}

static void test_pointwise_min_adds_crossings(void **state)
{
    struct fixture *f = *state;
    const double a[] = {0, 0, 1, 1};
    const double b[] = {0, 0.5, 1, 0.25};
    scalar_points(&f->b[0], a, 2);
    scalar_points(&f->b[1], b, 2);
    struct ps_plf fa = ps_plf_buf_view(&f->b[0]), fb = ps_plf_buf_view(&f->b[1]);
    ps_plf_pointwise_min(&f->ctx, &f->b[2], &fa, &fb);
    struct ps_plf m = ps_plf_buf_view(&f->b[2]);
    assert_int_equal(m.n, 3);
    double x = ps_plf_pt(&m, 1)[0];
    assert_true(fabs(x - 0.4) < 1e-15);
    for (double t = 0; t <= 1.0; t += 0.125) {
        double expected = fmin(ps_plf_scalar_at(&fa, t), ps_plf_scalar_at(&fb, t));
        assert_true(fabs(ps_plf_scalar_at(&m, t) - expected) < 1e-15);
    }
}

static void test_compose_matches_pointwise(void **state)
{
    struct fixture *f = *state;
    /* f: vector of two components on [0, 2]; g: scalar non-decreasing into [0, 2]. */
    ps_plf_buf_clear(&f->b[0], 2);
    const double p0[] = {0, 0}, p1[] = {0.5, 0.1}, p2[] = {0.5, 0.7}, p3[] = {1.0, 1.0};
    ps_plf_add_point(&f->b[0], 0.0, p0);
    ps_plf_add_point(&f->b[0], 1.0, p1);
    ps_plf_add_point(&f->b[0], 1.5, p2);
    ps_plf_add_point(&f->b[0], 2.0, p3);
    const double gxy[] = {0, 0, 0.4, 1.2, 1, 2};
    scalar_points(&f->b[1], gxy, 3);
    struct ps_plf ff = ps_plf_buf_view(&f->b[0]), g = ps_plf_buf_view(&f->b[1]);
    ps_plf_compose(&f->ctx, &f->b[2], &ff, &g);
    struct ps_plf h = ps_plf_buf_view(&f->b[2]);
    assert_true(ps_plf_left_bound(&h) == 0.0 && ps_plf_right_bound(&h) == 1.0);
    for (double x = 0.0; x <= 1.0; x += 1.0 / 64) {
        double expected[2], actual[2];
        ps_plf_value_at(&ff, ps_plf_scalar_at(&g, x), expected);
        ps_plf_value_at(&h, x, actual);
        assert_true(fabs(expected[0] - actual[0]) < 1e-12);
        assert_true(fabs(expected[1] - actual[1]) < 1e-12);
    }
}

static void test_compress_merges_collinear_segments(void **state)
{
    struct fixture *f = *state;
    ps_plf_buf_clear(&f->b[0], 1);
    /* Collinear but for an ulp at 0.5, then a bend. Points are pushed as segments so nothing merges. */
    double y0 = 0, y1 = 0.25, y2 = 0.5 + 1e-16, y3 = 0.75, y4 = 0.8;
    ps_plf_push_segment(&f->b[0], 0, &y0, 0.25, &y1);
    ps_plf_push_segment(&f->b[0], 0.25, &y1, 0.5, &y2);
    ps_plf_push_segment(&f->b[0], 0.5, &y2, 0.75, &y3);
    ps_plf_push_segment(&f->b[0], 0.75, &y3, 1.0, &y4);
    assert_int_equal(f->b[0].n, 5);
    struct ps_plf src = ps_plf_buf_view(&f->b[0]);
    ps_plf_compress(&f->b[1], &src, 1e-15);
    struct ps_plf c = ps_plf_buf_view(&f->b[1]);
    assert_int_equal(c.n, 3);
    assert_true(ps_plf_pt(&c, 1)[0] == 0.75);
    ps_plf_compress(&f->b[2], &src, 0.0);  /* no tolerance: the tiny bend stays */
    assert_true(f->b[2].n > 3);
}

/* The engine builds a FIFO pool's function as the concatenation of its children's, each lifted
 * by the full shares before it (upstream's fast path); upstream's default is the generic sum of
 * the shifted, extended children. They must agree to the bit. */
static void test_fifo_concatenation_equals_sum(void **state)
{
    struct fixture *f = *state;
    enum { KIDS = 4, DIM = 5 };
    struct ps_plf_buf kids[KIDS], shifted[KIDS];
    struct ps_plf views[KIDS];
    for (int k = 0; k < KIDS; k++) {
        ps_plf_buf_init(&kids[k], DIM, &f->oom);
        ps_plf_buf_init(&shifted[k], DIM, &f->oom);
        ps_plf_buf_clear(&kids[k], DIM);
        double v[DIM] = {0};
        ps_plf_add_point(&kids[k], 0.0, v);
        for (int s = 1; s <= 3; s++) {
            for (int r = 0; r < DIM; r++)
                v[r] += (r == 2 || r == 4) ? 0.0 : 0.01 * (k + 1) * (r + s) / 7.0;
            ps_plf_add_point(&kids[k], s / 3.0 - (s == 2 ? 0.1 * k : 0.0), v);
        }
    }
    /* Generic: child k shifted by k and extended to [0, KIDS], summed. */
    for (int k = 0; k < KIDS; k++) {
        struct ps_plf kv = ps_plf_buf_view(&kids[k]);
        ps_plf_shift(&f->b[0], &kv, (double)k, NULL);
        struct ps_plf sv = ps_plf_buf_view(&f->b[0]);
        ps_plf_extend(&shifted[k], &sv, 0.0, NULL, (double)KIDS, NULL);
        views[k] = ps_plf_buf_view(&shifted[k]);
    }
    struct ps_plf_buf sum, concat;
    ps_plf_buf_init(&sum, DIM, &f->oom);
    ps_plf_buf_init(&concat, DIM, &f->oom);
    ps_plf_sum(&f->ctx, &sum, views, KIDS);
    /* Fast: concatenation with prefix sums. */
    ps_plf_buf_clear(&concat, DIM);
    double prefix[DIM] = {0}, l[DIM], r[DIM];
    for (int k = 0; k < KIDS; k++) {
        struct ps_plf kv = ps_plf_buf_view(&kids[k]);
        for (int i = 0; i + 1 < kv.n; i++) {
            const double *p = ps_plf_pt(&kv, i), *q = ps_plf_pt(&kv, i + 1);
            for (int j = 0; j < DIM; j++) {
                l[j] = p[1 + j] + prefix[j];
                r[j] = q[1 + j] + prefix[j];
            }
            ps_plf_push_segment(&concat, p[0] + k, l, q[0] + k, r);
        }
        for (int j = 0; j < DIM; j++)
            prefix[j] += ps_plf_right_value(&kv)[j];
    }
    assert_false(f->oom);
    assert_int_equal(sum.n, concat.n);
    assert_memory_equal(sum.a, concat.a, (size_t)sum.n * (DIM + 1) * sizeof(double));
    for (int k = 0; k < KIDS; k++) {
        ps_plf_buf_release(&kids[k]);
        ps_plf_buf_release(&shifted[k]);
    }
    ps_plf_buf_release(&sum);
    ps_plf_buf_release(&concat);
}

static void test_clear_and_sort(void **state)
{
    struct fixture *f = *state;
    double xs[] = {3, 1, 2, 2, 5, -1, 4, 1, 0};
    int n = ps_plf_clear_and_sort(&f->ctx, xs, 9, 0, 4);
    const double expect[] = {0, 1, 2, 3, 4};
    assert_int_equal(n, 5);
    assert_memory_equal(xs, expect, sizeof expect);
    double pairs[] = {2, 1, 1, 5, 2, 0, 1, 4};
    ps_plf_sort_pairs(&f->ctx, pairs, 4);
    const double sorted[] = {1, 4, 1, 5, 2, 0, 2, 1};
    assert_memory_equal(pairs, sorted, sizeof sorted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bisection_is_bitwise),
        cmocka_unit_test_setup_teardown(test_builder_merges_like_upstream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interpolation_and_left_continuity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transpose_narrow_trim_extend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pointwise_min_adds_crossings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compose_matches_pointwise, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compress_merges_collinear_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_concatenation_equals_sum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clear_and_sort, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
