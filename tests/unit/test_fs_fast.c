/* The fast forms of src/core/fs_fast.h against the library forms they replace, bit for bit, on
 * random and edge-case inputs. (They have no ISA-specific paths: the packed divisions are plain
 * SSE2, which every x86-64 level has.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/fs_fast.h"
#include "test_rng.h"

enum { DIM = PS_PLF_MAX_DIM, MAXN = 24 };

/* A value drawn among zeros of both signs, repeats of the previous one and random numbers. */
static double draw_value(uint64_t *s, double previous)
{
    switch (rng_pick(s, 6)) {
    case 0:
        return 0.0;
    case 1:
        return -0.0;
    case 2:
        return previous;
    default:
        return rng_pick(s, 1000) / 997.0;
    }
}

/* Non-decreasing arguments with repeats (vertical jumps), flat runs and equal points. */
static void random_function(uint64_t *s, double *a, int n)
{
    double x = rng_pick(s, 3) == 0 ? 0.0 : rng_pick(s, 100) / 101.0 - 0.3;
    for (int i = 0; i < n; i++) {
        if (i > 0 && rng_pick(s, 4) != 0)
            x += rng_pick(s, 3) == 0 ? 1e-300 : rng_pick(s, 100) / 211.0;
        double *p = a + (size_t)i * (DIM + 1);
        p[0] = x;
        for (int r = 0; r < DIM; r++) {
            double prev = i > 0 ? p[r + 1 - (DIM + 1)] : 0.0;
            p[1 + r] = rng_pick(s, 3) == 0 && i > 0 ? prev : draw_value(s, prev);
        }
    }
}

static void check_value_at(const struct ps_plf *f, double x)
{
    double want[DIM], got[DIM];
    ps_plf_value_at(f, x, want);
    fs_small_value_at(f, x, got);
    if (memcmp(want, got, sizeof want) != 0)
        fail_msg("n %d at %.17g: value %.17g, fast form %.17g", f->n, x, want[0], got[0]);
}

static void test_small_value_at_matches_value_at(void **state)
{
    (void)state;
    uint64_t s = 0x5eed1234abcdULL;
    double a[MAXN * (DIM + 1)];
    for (int round = 0; round < 20000; round++) {
        int n = rng_pick(&s, MAXN + 1);
        random_function(&s, a, n);
        struct ps_plf f = {a, n, DIM};
        /* every point's argument, the midpoints, outside both ends, zeros, NaN */
        for (int i = 0; i < n; i++) {
            double xi = a[(size_t)i * (DIM + 1)];
            check_value_at(&f, xi);
            check_value_at(&f, nextafter(xi, -INFINITY));
            check_value_at(&f, nextafter(xi, INFINITY));
            if (i + 1 < n)
                check_value_at(&f, (xi + a[(size_t)(i + 1) * (DIM + 1)]) / 2);
        }
        check_value_at(&f, -1.0);
        check_value_at(&f, 2.0);
        check_value_at(&f, 0.0);
        check_value_at(&f, -0.0);
        check_value_at(&f, 1.0);
        check_value_at(&f, NAN);
        check_value_at(&f, rng_pick(&s, 1000) / 999.0);
    }
}

static int64_t draw_resource(uint64_t *s)
{
    switch (rng_pick(s, 6)) {
    case 0:
        return 0;
    case 1:
        return PS_RES_INFINITE;
    case 2:
        return (int64_t)rng_next(s) % ((int64_t)1 << 52);
    default:
        return rng_pick(s, 100000);
    }
}

static void test_operation_shares_match_library(void **state)
{
    (void)state;
    uint64_t s = 0x0ddba11cafeULL;
    for (int round = 0; round < 200000; round++) {
        struct ps_resources total, usage, demand, limits;
        for (int r = 0; r < PS_RES_COUNT; r++) {
            total.v[r] = rng_pick(&s, 4) == 0 ? 0 : draw_resource(&s);
            usage.v[r] = draw_resource(&s);
            demand.v[r] = draw_resource(&s);
            limits.v[r] = draw_resource(&s);
        }
        struct fs_total_divisors t;
        fs_total_divisors_init(&t, &total);
        struct ps_share us, ds, ls;
        fs_operation_shares(&t, &usage, &demand, &limits, &us, &ds, &ls);
        struct ps_share want_u = ps_resources_to_share(&usage, &total, 0.0, 0.0);
        struct ps_share want_d = ps_resources_to_share(&demand, &total, 0.0, 0.0);
        struct ps_share want_l = ps_resources_to_share(&limits, &total, 0.0, 0.0);
        if (memcmp(&us, &want_u, sizeof us) || memcmp(&ds, &want_d, sizeof ds) || memcmp(&ls, &want_l, sizeof ls))
            fail_msg("round %d: shares differ", round);
        assert_int_equal(fs_dominant_of_share(&t, &us), ps_dominant_resource(&usage, &total));
        assert_int_equal(fs_dominant_of_share(&t, &ds), ps_dominant_resource(&demand, &total));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_value_at_matches_value_at),
        cmocka_unit_test(test_operation_shares_match_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
