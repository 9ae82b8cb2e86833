#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/preemptible.h"

static struct ps_resources r3(int64_t slots, int64_t cpu, int64_t mem)
{
    return (struct ps_resources){{slots, cpu * PS_CPU_SCALE, 0, mem, 0}};
}

static struct ps_share sh(double slots, double cpu, double mem)
{
    return (struct ps_share){{slots, cpu, 0.0, mem, 0.0}};
}

/* Upstream TestUpdatePreemptibleAllocationsList: 10 nodes of {10 slots, 10 cpu, 100 memory},
 * 150 running allocations {1, 1, 10} plus 10 pending: demand share 1.6, fair share 1.0;
 * thresholds 0.5 (aggressive, the fixture's value) and 1.0. */
static void test_upstream_150_allocations(void **state)
{
    (void)state;
    struct ps_preemptible_config cfg;
    ps_preemptible_config_init(&cfg);
    cfg.aggressive_threshold = 0.5;
    cfg.threshold = 1.0;
    cfg.total = r3(100, 100, 1000);
    struct ps_preemptible *p = ps_preemptible_new(&cfg);
    assert_non_null(p);
    struct ps_error err = {0};
    for (int i = 0; i < 150; i++)
        assert_int_equal(ps_preemptible_add(p, 1000 + i, i, r3(1, 1, 10), &err), 0);
    struct ps_share fair = sh(1.0, 1.0, 1.0), demand = sh(1.6, 1.6, 1.6);
    ps_preemptible_update(p, &fair, &demand, &cfg);
    for (int i = 0; i < 150; i++) {
        int want = i < 50 ? PS_ALLOC_NON_PREEMPTIBLE
                 : i < 100 ? PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE : PS_ALLOC_PREEMPTIBLE;
        assert_int_equal(ps_preemptible_class(p, 1000 + i), want);
    }
    assert_int_equal(ps_preemptible_count(p, PS_ALLOC_PREEMPTIBLE), 50);
    assert_true(ps_resources_equal(ps_preemptible_usage(p, PS_ALLOC_NON_PREEMPTIBLE),
                                   r3(50, 50, 500)));
    /* Same classification when the fair share arrives first and allocations one by one. */
    struct ps_preemptible *q = ps_preemptible_new(&cfg);
    ps_preemptible_update(q, &fair, &demand, &cfg);
    for (int i = 0; i < 150; i++)
        assert_int_equal(ps_preemptible_add(q, 1000 + i, i, r3(1, 1, 10), &err), 0);
    for (int i = 0; i < 150; i++)
        assert_int_equal(ps_preemptible_class(q, 1000 + i), ps_preemptible_class(p, 1000 + i));
    /* Removing an old allocation shifts one allocation across each boundary. */
    assert_int_equal(ps_preemptible_remove(q, 1000, &err), 0);
    assert_int_equal(ps_preemptible_class(q, 1000), -1);
    assert_int_equal(ps_preemptible_class(q, 1050), PS_ALLOC_NON_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_class(q, 1100), PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_class(q, 1101), PS_ALLOC_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_running_count(q), 149);
    ps_preemptible_free(p);
    ps_preemptible_free(q);
}

/* Upstream DoNotPreemptAllocationsIfFairShareRatioEqualToDemandRatio: one node {100, 100, 100},
 * 4 allocations {0 slots, 10 cpu, 10 memory}: fair share = demand share = 0.4 in cpu and
 * memory. Nothing is preemptible; 0-1 non-preemptible, 2-3 aggressively preemptible; after
 * allocation 0 grows to {20, 20}, only it stays non-preemptible. */
static void test_upstream_fair_share_equals_demand(void **state)
{
    (void)state;
    struct ps_preemptible_config cfg;
    ps_preemptible_config_init(&cfg);
    cfg.aggressive_threshold = 0.5;
    cfg.total = r3(100, 100, 100);
    struct ps_preemptible *p = ps_preemptible_new(&cfg);
    struct ps_error err = {0};
    for (int i = 0; i < 4; i++)
        assert_int_equal(ps_preemptible_add(p, i, i, r3(0, 10, 10), &err), 0);
    struct ps_share fair = sh(0.0, 0.4, 0.4);
    ps_preemptible_update(p, &fair, &fair, &cfg);
    assert_false(ps_preemptible_is_preemptible(p));
    int want[4] = {0, 0, 1, 1};
    for (int i = 0; i < 4; i++)
        assert_int_equal(ps_preemptible_class(p, i), want[i]);
    assert_int_equal(ps_preemptible_set_usage(p, 0, r3(0, 20, 20), &err), 0);
    int want2[4] = {0, 1, 1, 1};
    for (int i = 0; i < 4; i++)
        assert_int_equal(ps_preemptible_class(p, i), want2[i]);
    assert_int_equal(ps_preemptible_count(p, PS_ALLOC_PREEMPTIBLE), 0);
    ps_preemptible_free(p);
}

/* The allocation crossing a bound stays on the less preemptible side; a big threshold change
 * moves allocations across both boundaries in one update. */
static void test_boundaries_and_threshold_change(void **state)
{
    (void)state;
    struct ps_preemptible_config cfg;
    ps_preemptible_config_init(&cfg);
    cfg.aggressive_threshold = 0.2;
    cfg.total = r3(100, 100, 1000);
    struct ps_preemptible *p = ps_preemptible_new(&cfg);
    struct ps_error err = {0};
    for (int i = 0; i < 10; i++)   /* 3 cpu each: 0.03 of the cluster */
        assert_int_equal(ps_preemptible_add(p, i, i, r3(1, 3, 10), &err), 0);
    struct ps_share fair = sh(0.1, 0.1, 0.1), demand = sh(0.5, 0.5, 0.5);
    ps_preemptible_update(p, &fair, &demand, &cfg);
    /* aggressive bound 0.02 cpu: before #0 0 < 0.02 -> NP; before #1 0.03 -> AP.
     * regular bound 0.1: before #3 0.09 < 0.1 -> AP; before #4 0.12 -> P. */
    int want[10] = {0, 1, 1, 1, 2, 2, 2, 2, 2, 2};
    for (int i = 0; i < 10; i++)
        assert_int_equal(ps_preemptible_class(p, i), want[i]);
    struct ps_share big = sh(0.5, 0.5, 0.5);
    cfg.aggressive_threshold = 0.5;   /* bound 0.25 */
    ps_preemptible_update(p, &big, &demand, &cfg);
    /* fair == demand: every resource is blocked, so "below" means below on ANY resource; the
     * slot share before #9 (0.09) is below 0.25 although cpu (0.27) is not: all stay NP. */
    for (int i = 0; i < 10; i++)
        assert_int_equal(ps_preemptible_class(p, i), PS_ALLOC_NON_PREEMPTIBLE);
    struct ps_share demand_big = sh(0.6, 0.6, 0.6);
    ps_preemptible_update(p, &big, &demand_big, &cfg);
    /* Not blocked: cpu decides; before #8 0.24 < 0.25 -> NP, before #9 0.27 -> AP. */
    for (int i = 0; i < 9; i++)
        assert_int_equal(ps_preemptible_class(p, i), PS_ALLOC_NON_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_class(p, 9), PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE);
    cfg.aggressive_threshold = 0.0;
    demand = sh(0.9, 0.9, 0.9);
    ps_preemptible_update(p, &fair, &demand, &cfg);
    int want3[10] = {1, 1, 1, 1, 2, 2, 2, 2, 2, 2};
    for (int i = 0; i < 10; i++)
        assert_int_equal(ps_preemptible_class(p, i), want3[i]);
    int64_t ids[10];
    assert_int_equal(ps_preemptible_list(p, PS_ALLOC_PREEMPTIBLE, ids, 10), 6);
    assert_int_equal(ids[0], 4);
    assert_int_equal(ids[5], 9);
    ps_preemptible_free(p);
}

/* non_preemptible_resource_usage_threshold keeps allocations non-preemptible while the usage
 * before them is strictly below it. */
static void test_non_preemptible_usage_threshold(void **state)
{
    (void)state;
    struct ps_preemptible_config cfg;
    ps_preemptible_config_init(&cfg);
    cfg.total = r3(100, 100, 1000);
    cfg.has_non_preemptible_usage_threshold = true;
    cfg.non_preemptible_usage_threshold = r3(4, 4, 1000);
    cfg.non_preemptible_usage_threshold.v[PS_RES_GPU] = PS_RES_INFINITE;     /* unset keys */
    cfg.non_preemptible_usage_threshold.v[PS_RES_NETWORK] = PS_RES_INFINITE;
    struct ps_preemptible *p = ps_preemptible_new(&cfg);
    struct ps_error err = {0};
    struct ps_share fair = sh(0.01, 0.01, 0.01), demand = sh(0.5, 0.5, 0.5);
    ps_preemptible_update(p, &fair, &demand, &cfg);
    for (int i = 0; i < 8; i++)
        assert_int_equal(ps_preemptible_add(p, i, i, r3(1, 1, 10), &err), 0);
    /* usage before #3 is 3 < 4 -> NP; before #4 is 4, not below -> P. */
    for (int i = 0; i < 8; i++)
        assert_int_equal(ps_preemptible_class(p, i),
                         i < 4 ? PS_ALLOC_NON_PREEMPTIBLE : PS_ALLOC_PREEMPTIBLE);
    ps_preemptible_free(p);
}

static void test_errors_and_table(void **state)
{
    (void)state;
    struct ps_preemptible_config cfg;
    ps_preemptible_config_init(&cfg);
    cfg.total = r3(1000, 1000, 10000);
    struct ps_preemptible *p = ps_preemptible_new(&cfg);
    struct ps_error err = {0};
    assert_int_equal(ps_preemptible_add(p, 7, 0, r3(1, 1, 1), &err), 0);
    assert_int_equal(ps_preemptible_add(p, 7, 0, r3(1, 1, 1), &err), PS_EINVAL);
    assert_int_equal(ps_preemptible_remove(p, 8, &err), PS_EINVAL);
    assert_int_equal(ps_preemptible_add(p, 9, 0, r3(-1, 1, 1), &err), PS_EINVAL);
    /* Many ids with removals in between: the id table stays consistent. */
    for (int64_t i = 100; i < 600; i++)
        assert_int_equal(ps_preemptible_add(p, i * 64, i, r3(1, 1, 1), &err), 0);
    for (int64_t i = 100; i < 600; i += 3)
        assert_int_equal(ps_preemptible_remove(p, i * 64, &err), 0);
    for (int64_t i = 100; i < 600; i++)
        assert_int_equal(ps_preemptible_class(p, i * 64) >= 0, (i - 100) % 3 != 0);
    int total = 0;
    for (int c = 0; c < PS_ALLOC_CLASS_COUNT; c++)
        total += ps_preemptible_count(p, (enum ps_alloc_class)c);
    assert_int_equal(total, ps_preemptible_running_count(p));
    ps_preemptible_free(p);
    ps_preemptible_free(NULL);
}

/* The slot hint: a slot in use that holds the id gives its class; a hint to another
 * allocation's slot, out of range, or to the slot of a removed allocation (which keeps its old
 * id) is ignored and the id is looked up. */
static void test_slot_hint(void **state)
{
    (void)state;
    struct ps_preemptible_config cfg;
    ps_preemptible_config_init(&cfg);
    cfg.aggressive_threshold = 0.5;
    cfg.total = r3(4, 4, 40);
    struct ps_preemptible *p = ps_preemptible_new(&cfg);
    assert_non_null(p);
    struct ps_error err = {0};
    assert_int_equal(ps_preemptible_slot(p, 1), -1);
    for (int i = 0; i < 4; i++)
        assert_int_equal(ps_preemptible_add(p, 1 + i, i, r3(1, 1, 10), &err), 0);
    struct ps_share fair = sh(0.5, 0.5, 0.5), demand = sh(1.0, 1.0, 1.0);
    ps_preemptible_update(p, &fair, &demand, &cfg);   /* 1 NP, 2 AP, 3-4 P */
    int slot[4];
    for (int i = 0; i < 4; i++) {
        slot[i] = ps_preemptible_slot(p, 1 + i);
        assert_true(slot[i] >= 0);
        assert_int_equal(ps_preemptible_class_at(p, 1 + i, slot[i]), ps_preemptible_class(p, 1 + i));
    }
    assert_int_equal(ps_preemptible_class_at(p, 1, slot[0]), PS_ALLOC_NON_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_class_at(p, 1, slot[3]), PS_ALLOC_NON_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_class_at(p, 4, -1), PS_ALLOC_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_class_at(p, 4, 1 << 20), PS_ALLOC_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_remove(p, 4, &err), 0);
    assert_int_equal(ps_preemptible_class_at(p, 4, slot[3]), -1);
    assert_int_equal(ps_preemptible_slot(p, 4), -1);
    /* the freed slot is reused by the next allocation: the old hint now names another id */
    assert_int_equal(ps_preemptible_add(p, 5, 5, r3(1, 1, 10), &err), 0);
    assert_int_equal(ps_preemptible_slot(p, 5), slot[3]);
    assert_int_equal(ps_preemptible_class_at(p, 4, slot[3]), -1);
    assert_int_equal(ps_preemptible_class_at(p, 5, slot[3]), ps_preemptible_class(p, 5));
    ps_preemptible_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream_150_allocations),
        cmocka_unit_test(test_upstream_fair_share_equals_demand),
        cmocka_unit_test(test_boundaries_and_threshold_change),
        cmocka_unit_test(test_non_preemptible_usage_threshold),
        cmocka_unit_test(test_errors_and_table),
        cmocka_unit_test(test_slot_hint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
