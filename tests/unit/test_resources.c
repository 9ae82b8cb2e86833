#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/error.h"
#include "core/resources.h"

static void test_cpu_is_fixed_point(void **state)
{
    (void)state;
    /* 11.17 cores is exact: stored as 1117 hundredths. */
    assert_int_equal(ps_res_from_double(PS_RES_CPU, 11.17), 1117);
    assert_int_equal(ps_res_from_double(PS_RES_CPU, 11.06), 1106);
    assert_int_equal(ps_res_from_double(PS_RES_MEMORY, 1048576000.0), 1048576000);
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_CPU] = 1117;
    assert_true(ps_res_get(&r, PS_RES_CPU) == 11.17);
}

static void test_share_division_rules(void **state)
{
    (void)state;
    struct ps_resources total = ps_resources_zero();
    total.v[PS_RES_CPU] = 100 * PS_CPU_SCALE;
    total.v[PS_RES_MEMORY] = 1000;
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_CPU] = 25 * PS_CPU_SCALE;
    r.v[PS_RES_MEMORY] = 500;
    r.v[PS_RES_GPU] = 1; /* total gpu is 0 */
    struct ps_share s = ps_resources_to_share(&r, &total, 0.0, 1.0);
    assert_true(s.v[PS_RES_CPU] == 0.25);
    assert_true(s.v[PS_RES_MEMORY] == 0.5);
    assert_true(s.v[PS_RES_GPU] == 1.0);      /* x/0 -> one_div_zero */
    assert_true(s.v[PS_RES_NETWORK] == 0.0);  /* 0/0 -> zero_div_zero */
    s = ps_resources_to_share(&r, &total, 0.0, 0.0);
    assert_true(s.v[PS_RES_GPU] == 0.0);
    assert_int_equal(ps_dominant_resource(&r, &total), PS_RES_MEMORY);
    assert_int_equal(ps_dominant_resource(&(struct ps_resources){{0}}, &total), PS_RES_CPU);
}

static void test_vector_ops(void **state)
{
    (void)state;
    struct ps_resources a = {{1, 200, 0, 10, 0}};
    struct ps_resources b = {{2, 100, 0, 10, 1}};
    assert_false(ps_resources_fit(a, b));
    assert_true(ps_resources_fit(ps_resources_min(a, b), b));
    struct ps_resources m = ps_resources_max(a, b);
    assert_int_equal(m.v[PS_RES_CPU], 200);
    assert_int_equal(m.v[PS_RES_NETWORK], 1);
    assert_true(ps_resources_equal(ps_resources_sub(ps_resources_add(a, b), b), a));
    assert_true(ps_share_dominates(ps_share_fill(0.5), ps_share_fill(0.5)));
    assert_false(ps_share_strictly_dominates(ps_share_fill(0.5), ps_share_fill(0.5)));
    assert_true(ps_share_max_component((struct ps_share){{0.1, 0.7, 0, 0.2, 0}}) == 0.7);
    assert_int_equal(ps_resource_from_name("memory"), PS_RES_MEMORY);
    assert_int_equal(ps_resource_from_name("disk"), -1);
}

static void test_volume_ratio(void **state)
{
    (void)state;
    struct ps_resources total = {{100, 100 * PS_CPU_SCALE, 0, 1000, 0}};
    struct ps_resources flow = {{10, 10 * PS_CPU_SCALE, 0, 100, 0}};
    struct ps_volume v = ps_volume_from_resources(&flow, 60.0);
    assert_true(v.v[PS_RES_CPU] == 600.0);
    assert_true(ps_volume_min_ratio(&v, &total) == 6.0);
}

static void test_first_error_wins(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_error_set(&err, PS_EINVAL, "pools[%d].weight: %s", 2, "must be positive"), PS_EINVAL);
    ps_error_set(&err, PS_ENOENT, "later");
    ps_error_prefix(&err, "snapshot");
    assert_int_equal(err.code, PS_EINVAL);
    assert_string_equal(err.msg, "snapshot: pools[2].weight: must be positive");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_is_fixed_point),
        cmocka_unit_test(test_share_division_rules),
        cmocka_unit_test(test_vector_ops),
        cmocka_unit_test(test_volume_ratio),
        cmocka_unit_test(test_first_error_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
