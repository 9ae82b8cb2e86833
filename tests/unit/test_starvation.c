#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/starvation.h"

static struct ps_share sh(double x)
{
    return (struct ps_share){{x, x, 0.0, x, 0.0}};
}

/* root(0) -> pool(1) -> op(2); op: fair 0.5, demand 1, usage u. */
static void tree(struct ps_starvation_element e[3], double usage)
{
    ps_starvation_element_init(&e[0], PS_ELEM_ROOT, -1);
    ps_starvation_element_init(&e[1], PS_ELEM_POOL, 0);
    ps_starvation_element_init(&e[2], PS_ELEM_OPERATION, 1);
    e[0].fair_share = sh(1.0);
    e[0].demand_share = sh(1.0);
    e[0].usage_share = sh(1.0);
    for (int i = 1; i < 3; i++) {
        e[i].fair_share = sh(0.5);
        e[i].demand_share = sh(1.0);
        e[i].usage_share = sh(usage);
    }
    e[2].pending_count = 100;
}

static void set_usage(struct ps_starvation_element e[3], double usage)
{
    e[1].usage_share = e[2].usage_share = sh(usage);
}

static void test_tolerance_and_timeouts(void **state)
{
    (void)state;
    struct ps_starvation_config cfg;
    ps_starvation_config_init(&cfg);
    struct ps_starvation_element e[3];
    struct ps_error err = {0};
    tree(e, 0.45);   /* 0.45 >= 0.5 x 0.8: normal */
    int changed = -1;
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 1000, &changed, &err), 0);
    assert_int_equal(e[2].status, PS_STATUS_NORMAL);
    assert_int_equal(e[2].below_fair_share_since_ms, PS_STARVATION_NEVER);
    assert_int_equal(changed, 0);

    set_usage(e, 0.39);   /* below 0.4 */
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 2000, &changed, &err), 0);
    assert_int_equal(e[2].status, PS_STATUS_BELOW_FAIR_SHARE);
    assert_int_equal(e[2].below_fair_share_since_ms, 2000);
    assert_int_equal(e[2].starvation, PS_NON_STARVING);
    /* Exactly the timeout later: not yet (strictly after). */
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 32000, &changed, &err), 0);
    assert_int_equal(e[2].starvation, PS_NON_STARVING);
    assert_int_equal(e[2].lowest_starving_ancestor, -1);
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 32001, &changed, &err), 0);
    assert_int_equal(e[2].starvation, PS_STARVING);
    assert_int_equal(e[1].starvation, PS_STARVING);
    assert_int_equal(changed, 2);
    assert_int_equal(e[2].lowest_starving_ancestor, 2);
    assert_int_equal(e[1].lowest_starving_ancestor, 1);
    assert_int_equal(e[2].lowest_aggressively_starving_ancestor, -1);
    /* Aggressive starvation is off by default. */
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 500000, &changed, &err), 0);
    assert_int_equal(e[2].starvation, PS_STARVING);
    assert_int_equal(changed, 0);
    /* Recovery resets at once. */
    set_usage(e, 0.5);
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 500001, &changed, &err), 0);
    assert_int_equal(e[2].starvation, PS_NON_STARVING);
    assert_int_equal(e[2].previous_starvation, PS_STARVING);
    assert_int_equal(e[2].below_fair_share_since_ms, PS_STARVATION_NEVER);
    assert_int_equal(changed, 2);
    assert_string_equal(ps_starvation_status_name(e[2].previous_starvation), "starving");
}

static void test_aggressive_when_enabled(void **state)
{
    (void)state;
    struct ps_starvation_config cfg;
    ps_starvation_config_init(&cfg);
    cfg.enable_aggressive_starvation = true;
    struct ps_starvation_element e[3];
    struct ps_error err = {0};
    tree(e, 0.1);
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 0, NULL, &err), 0);
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 120000, NULL, &err), 0);
    assert_int_equal(e[2].starvation, PS_STARVING);
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 120001, NULL, &err), 0);
    assert_int_equal(e[2].starvation, PS_AGGRESSIVELY_STARVING);
    assert_int_equal(e[2].lowest_aggressively_starving_ancestor, 2);
    assert_int_equal(e[1].lowest_aggressively_starving_ancestor, 1);
    /* A pool can switch it off for its subtree. */
    e[1].spec.has_enable_aggressive = true;
    e[1].spec.enable_aggressive = false;
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 120002, NULL, &err), 0);
    assert_int_equal(e[2].starvation, PS_STARVING);
}

static void test_demand_satisfiable_uses_tolerance_one(void **state)
{
    (void)state;
    struct ps_starvation_config cfg;
    ps_starvation_config_init(&cfg);
    struct ps_starvation_element e[3];
    struct ps_error err = {0};
    tree(e, 0.45);
    e[2].demand_share = sh(0.5);   /* fair share covers demand: tolerance 1 */
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 0, NULL, &err), 0);
    assert_int_equal(e[2].status, PS_STATUS_BELOW_FAIR_SHARE);
    assert_int_equal(e[1].status, PS_STATUS_NORMAL);   /* pools keep 0.8 */
    e[2].schedulable = false;
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 0, NULL, &err), 0);
    assert_int_equal(e[2].status, PS_STATUS_NORMAL);
}

static void test_blocked_resources(void **state)
{
    (void)state;
    struct ps_starvation_config cfg;
    ps_starvation_config_init(&cfg);
    struct ps_starvation_element e[3];
    struct ps_error err = {0};
    tree(e, 0.1);
    /* memory blocked (fair >= demand): only slots and cpu must be below. */
    e[2].fair_share.v[PS_RES_MEMORY] = 0.2;
    e[2].demand_share.v[PS_RES_MEMORY] = 0.2;
    e[2].usage_share.v[PS_RES_MEMORY] = 0.9;
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 0, NULL, &err), 0);
    assert_int_equal(e[2].status, PS_STATUS_BELOW_FAIR_SHARE);
    e[2].usage_share.v[PS_RES_CPU] = 0.45;
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 0, NULL, &err), 0);
    assert_int_equal(e[2].status, PS_STATUS_NORMAL);
}

static void test_pool_starvation_disabled_and_overrides(void **state)
{
    (void)state;
    struct ps_starvation_config cfg;
    ps_starvation_config_init(&cfg);
    cfg.enable_pool_starvation = false;
    struct ps_starvation_element e[3];
    struct ps_error err = {0};
    tree(e, 0.1);
    e[1].spec.has_timeout = true;
    e[1].spec.timeout_ms = 10000;
    e[1].spec.has_tolerance = true;
    e[1].spec.tolerance = 0.9;
    e[2].spec.has_timeout = true;
    e[2].spec.timeout_ms = 5000;      /* max(parent 10 s, 5 s) = 10 s */
    e[2].spec.has_tolerance = true;
    e[2].spec.tolerance = 0.5;        /* min(0.9, 0.5) = 0.5 */
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 0, NULL, &err), 0);
    assert_int_equal(e[2].effective_timeout_ms, 10000);
    assert_true(e[2].effective_tolerance == 0.5);
    assert_true(e[1].effective_tolerance == 0.9);
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 10001, NULL, &err), 0);
    assert_int_equal(e[2].starvation, PS_STARVING);
    assert_int_equal(e[1].starvation, PS_NON_STARVING);
    assert_int_equal(e[1].status, PS_STATUS_BELOW_FAIR_SHARE);
    assert_int_equal(e[1].lowest_starving_ancestor, -1);
    assert_int_equal(e[2].lowest_starving_ancestor, 2);
    /* tolerance 0.5: usage 0.26 >= 0.25 is normal for the operation. */
    set_usage(e, 0.26);
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 10002, NULL, &err), 0);
    assert_int_equal(e[2].status, PS_STATUS_NORMAL);
    /* Few pending allocations shorten the timeout: coefficient 10, pending 5 -> x0.5. */
    cfg.allocation_count_preemption_timeout_coefficient = 10.0;
    e[2].pending_count = 5;
    set_usage(e, 0.1);
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 20000, NULL, &err), 0);
    assert_int_equal(e[2].effective_timeout_ms, 5000);
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 25001, NULL, &err), 0);
    assert_int_equal(e[2].starvation, PS_STARVING);
    /* Bad input. */
    e[2].spec.tolerance = -1.0;
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 0, NULL, &err), PS_EINVAL);
    e[2].spec.tolerance = 0.5;
    e[2].parent = 2;
    assert_int_equal(ps_starvation_update(e, 3, &cfg, 0, NULL, &err), PS_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tolerance_and_timeouts),
        cmocka_unit_test(test_aggressive_when_enabled),
        cmocka_unit_test(test_demand_satisfiable_uses_tolerance_one),
        cmocka_unit_test(test_blocked_resources),
        cmocka_unit_test(test_pool_starvation_disabled_and_overrides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
