#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
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

/* ps_starvation_next_change_ms against ps_starvation_update itself, on random trees (pools
 * with their own timeouts and aggressive starvation, operations with few pending allocations,
 * pool starvation on and off): with the inputs unchanged, every check before the time it gives
 * changes nothing, and the check at that time changes some status. */
static uint64_t rnd_state = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state % n;
}

enum { NEXT_N = 9 };

static void random_usage(struct ps_starvation_element *e)
{
    for (int i = 1; i < NEXT_N; i++)
        e[i].usage_share = sh((double)rnd(60) / 100.0);
}

static void test_next_change_matches_the_checks(void **state)
{
    (void)state;
    struct ps_error err = {0};
    int changes = 0, never = 0;
    for (int trial = 0; trial < 400; trial++) {
        struct ps_starvation_config cfg;
        ps_starvation_config_init(&cfg);
        cfg.enable_pool_starvation = rnd(4) != 0;
        cfg.enable_aggressive_starvation = rnd(2) != 0;
        cfg.timeout_ms = 1000 * (int64_t)(1 + rnd(40));
        cfg.aggressive_timeout_ms = 1000 * (int64_t)(1 + rnd(80));
        if (rnd(2))
            cfg.allocation_count_preemption_timeout_coefficient = 10.0;
        struct ps_starvation_element e[NEXT_N], copy[NEXT_N];
        ps_starvation_element_init(&e[0], PS_ELEM_ROOT, -1);
        e[0].fair_share = e[0].demand_share = e[0].usage_share = sh(1.0);
        for (int i = 1; i < NEXT_N; i++) {
            bool pool = i < 4;
            ps_starvation_element_init(&e[i], pool ? PS_ELEM_POOL : PS_ELEM_OPERATION,
                                       pool ? (int)rnd((uint64_t)i) : 1 + (int)rnd(3));
            e[i].fair_share = sh(0.5);
            e[i].demand_share = sh(1.0);
            e[i].pending_count = (int64_t)rnd(20);
            if (rnd(3) == 0) {
                e[i].spec.has_timeout = true;
                e[i].spec.timeout_ms = (int64_t)rnd(50000);
            }
            if (rnd(3) == 0) {
                e[i].spec.has_aggressive_timeout = true;
                e[i].spec.aggressive_timeout_ms = (int64_t)rnd(90000);
            }
            if (pool && rnd(3) == 0) {
                e[i].spec.has_enable_aggressive = true;
                e[i].spec.enable_aggressive = rnd(2) != 0;
            }
        }
        /* a history: the usage moves at a few random times */
        int64_t now = 0;
        for (int step = 0; step < 1 + (int)rnd(4); step++) {
            random_usage(e);
            now += (int64_t)rnd(60000);
            assert_int_equal(ps_starvation_update(e, NEXT_N, &cfg, now, NULL, &err), 0);
        }
        int64_t due = ps_starvation_next_change_ms(e, NEXT_N, &cfg, now);
        assert_true(due > now);
        int64_t last = due == INT64_MAX ? now + 1000000 : due - 1;
        int64_t probes[3] = {now + 1, now + (last - now) / 2, last};
        for (int k = 0; k < 3 && last > now; k++) {   /* the checks strictly between */
            memcpy(copy, e, sizeof e);
            int changed = -1;
            assert_int_equal(ps_starvation_update(copy, NEXT_N, &cfg, probes[k], &changed, &err), 0);
            assert_int_equal(changed, 0);
        }
        if (due == INT64_MAX) {
            never++;
            continue;
        }
        memcpy(copy, e, sizeof e);
        int changed = 0;
        assert_int_equal(ps_starvation_update(copy, NEXT_N, &cfg, due, &changed, &err), 0);
        assert_true(changed > 0);
        changes++;
    }
    /* both outcomes were exercised */
    assert_true(changes >= 50);
    assert_true(never >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tolerance_and_timeouts),
        cmocka_unit_test(test_aggressive_when_enabled),
        cmocka_unit_test(test_demand_satisfiable_uses_tolerance_one),
        cmocka_unit_test(test_blocked_resources),
        cmocka_unit_test(test_pool_starvation_disabled_and_overrides),
        cmocka_unit_test(test_next_change_matches_the_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
