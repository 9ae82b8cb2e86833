/* Pool config presets (pool_preset.h): a preset under the pool's explicit config, kept apart
 * from it; upstream's checks and messages for a preset a pool cannot use. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/pool_preset.h"
#include "core/pool_tree.h"
#include "value_helpers.h"

static struct ps_pool_tree *new_tree(void)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_pool_tree *tree = ps_pool_tree_new("default", NULL, &err);
    assert_non_null(tree);
    return tree;
}

static int set_tree(struct ps_pool_tree *tree, const char *key, const char *value_json,
                    struct ps_error *err)
{
    ps_error_init(err);
    struct ps_value v = json(value_json);
    int rc = ps_pool_tree_set_config(tree, key, &v, err);
    ps_value_release(&v);
    return rc;
}

static int set_pool(struct ps_pool_tree *tree, const char *pool, const char *key,
                    const char *value_json, struct ps_error *err)
{
    ps_error_init(err);
    struct ps_value v = json(value_json);
    int rc = ps_pool_tree_set_pool_attr(tree, pool, key, &v, err);
    ps_value_release(&v);
    return rc;
}

static void create(struct ps_pool_tree *tree, const char *name, const char *attrs)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(attrs);
    if (ps_pool_tree_create_pool(tree, name, NULL, &doc, &err) != 0)
        fail_msg("create %s: %s", name, err.msg);
    ps_value_release(&doc);
}

static const char presets[] =
    "{\"presetA\": {\"fair_share_starvation_tolerance\": 0.6},"
    " \"presetB\": {\"fair_share_starvation_tolerance\": 0.5, \"fair_share_starvation_timeout\": 2000}}";

/* The steps of upstream's TestSchedulerPoolConfigPresets::test_presets
 * (tests/upstream/pools_presets.sh) on the engine: the effective config takes the preset where
 * the pool sets nothing, what was set on the pool stays as it was set. */
/* The preset table is a block of the pool config table (pool_config.c): exactly upstream's
 * TPoolPresetConfig keys, with the pool config's own entries. */
static void test_preset_keys_are_upstreams(void **state)
{
    (void)state;
    static const char *const want[] = {
        "fair_share_starvation_timeout", "fair_share_starvation_tolerance",
        "non_preemptible_resource_usage_threshold", "enable_aggressive_starvation",
        "allow_aggressive_preemption", "allow_normal_preemption",
        "allow_regular_allocations_on_ssd_nodes", "enable_lightweight_operations"};
    assert_int_equal(ps_pool_preset_table.count, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < ps_pool_preset_table.count; i++) {
        assert_string_equal(ps_pool_preset_table.attrs[i].name, want[i]);
        assert_ptr_equal(ps_attr_find(&ps_pool_config_table, want[i]), &ps_pool_preset_table.attrs[i]);
    }
}

static void test_preset_under_explicit_config(void **state)
{
    (void)state;
    struct ps_error err;
    struct ps_pool_tree *tree = new_tree();
    create(tree, "pool", "{\"fair_share_starvation_timeout\": 1000}");
    struct ps_pool *pool = ps_pool_tree_find_pool(tree, "pool");
    assert_int_equal(set_tree(tree, "pool_config_presets", presets, &err), 0);

    assert_int_equal(set_pool(tree, "pool", "config_preset", "\"presetA\"", &err), 0);
    assert_true(pool->config.fair_share_starvation_tolerance.set);
    assert_true(pool->config.fair_share_starvation_tolerance.value == 0.6);
    assert_int_equal(pool->config.fair_share_starvation_timeout_ms.value, 1000);
    assert_null(pool->preset_issue);
    /* Cypress reads what was set on the pool */
    struct ps_value got;
    assert_int_equal(ps_pool_tree_get_pool_attr(tree, "pool", "fair_share_starvation_tolerance", &got, &err), 0);
    assert_int_equal(got.type, PS_VALUE_NULL);
    assert_int_equal(ps_pool_tree_get_pool_attr(tree, "pool", "config_preset", &got, &err), 0);
    assert_string_equal(got.string, "presetA");
    ps_value_release(&got);

    assert_int_equal(set_pool(tree, "pool", "config_preset", "\"presetB\"", &err), 0);
    assert_true(pool->config.fair_share_starvation_tolerance.value == 0.5);
    assert_int_equal(pool->config.fair_share_starvation_timeout_ms.value, 1000);   /* the pool's own */

    assert_int_equal(set_pool(tree, "pool", "fair_share_starvation_timeout", "null", &err), 0);
    assert_int_equal(pool->config.fair_share_starvation_timeout_ms.value, 2000);   /* the preset's */
    assert_false(pool->explicit_config.fair_share_starvation_timeout_ms.set);

    /* a new value of the preset reaches every pool using it */
    assert_int_equal(set_tree(tree, "pool_config_presets/presetB",
                              "{\"fair_share_starvation_timeout\": 3000}", &err), 0);
    assert_int_equal(pool->config.fair_share_starvation_timeout_ms.value, 3000);
    assert_false(pool->config.fair_share_starvation_tolerance.set);

    /* without config_preset the pool is back to its own config */
    assert_int_equal(set_pool(tree, "pool", "config_preset", "null", &err), 0);
    assert_false(pool->config.fair_share_starvation_timeout_ms.set);
    assert_null(pool->config.config_preset);
    ps_pool_tree_free(tree);
}

/* An explicit value wins even where it equals the default; resources merge per resource. */
static void test_explicit_wins_per_key_and_resource(void **state)
{
    (void)state;
    struct ps_error err;
    struct ps_pool_tree *tree = new_tree();
    assert_int_equal(set_tree(tree, "pool_config_presets",
                              "{\"p\": {\"allow_normal_preemption\": false,"
                              " \"allow_regular_jobs_on_ssd_nodes\": false,"
                              " \"non_preemptible_resource_usage_threshold\": {\"cpu\": 2, \"user_slots\": 3}}}",
                              &err), 0);
    create(tree, "pool", "{\"config_preset\": \"p\", \"allow_normal_preemption\": true,"
                         " \"non_preemptible_resource_usage_threshold\": {\"cpu\": 1}}");
    const struct ps_pool *pool = ps_pool_tree_find_pool(tree, "pool");
    assert_true(pool->config.allow_normal_preemption.set && pool->config.allow_normal_preemption.value);
    assert_true(pool->config.allow_regular_allocations_on_ssd_nodes.set &&
                !pool->config.allow_regular_allocations_on_ssd_nodes.value);
    const struct ps_resources_opt *t = &pool->config.non_preemptible_resource_usage_threshold;
    assert_int_equal(t->set, (1u << PS_RES_CPU) | (1u << PS_RES_USER_SLOTS));
    assert_int_equal(ps_res_get(&t->r, PS_RES_CPU), ps_res_get(&pool->explicit_config.non_preemptible_resource_usage_threshold.r, PS_RES_CPU));
    assert_int_equal(ps_res_get(&t->r, PS_RES_USER_SLOTS), 3);
    assert_int_equal(pool->explicit_config.non_preemptible_resource_usage_threshold.set, 1u << PS_RES_CPU);
    ps_pool_tree_free(tree);
}

/* Upstream accepts a bad preset and a missing one, and says why the pool cannot use it; the pool
 * then runs with its own config. */
static void test_bad_presets_are_issues_not_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *presets;
        const char *issue;
    } cases[] = {
        /* the preset of upstream's TestSchedulerPoolConfigPresets::test_preset_with_forbidden_option */
        {"{\"preset\": {\"mode\": \"fifo\"}}",
         "Config of preset \"preset\" contains unrecognized options: mode"},
        /* the preset of upstream's TestSchedulerPoolConfigPresets::test_preset_with_unrecognized_option */
        {"{\"preset\": {\"ffair_share_starvation_timeout\": \"fifo\"}}",
         "Config of preset \"preset\" contains unrecognized options: ffair_share_starvation_timeout"},
        /* the preset of upstream's TestSchedulerPoolConfigPresets::test_preset_with_incorrect_option */
        {"{\"preset\": {\"fair_share_starvation_timeout\": -10}}",
         "Config of preset \"preset\" failed to load as TPoolPresetConfig: "
         "fair_share_starvation_timeout: must be >= 0, got -10"},
        {"{\"preset\": 5}", "Config of preset \"preset\" failed to load as TPoolPresetConfig"},
        {"{\"other\": {}}", "Config preset \"preset\" is not found"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ps_error err;
        struct ps_pool_tree *tree = new_tree();
        create(tree, "pool", "{\"fair_share_starvation_tolerance\": 0.7}");
        assert_int_equal(set_tree(tree, "pool_config_presets", cases[i].presets, &err), 0);
        assert_int_equal(set_pool(tree, "pool", "config_preset", "\"preset\"", &err), 0);
        const struct ps_pool *pool = ps_pool_tree_find_pool(tree, "pool");
        if (!pool->preset_issue || strncmp(pool->preset_issue, cases[i].issue, strlen(cases[i].issue)) != 0)
            fail_msg("case %zu: issue %s", i, pool->preset_issue ? pool->preset_issue : "(none)");
        assert_true(pool->config.fair_share_starvation_tolerance.value == 0.7);
        assert_false(pool->config.fair_share_starvation_timeout_ms.set);
        /* mending the preset mends the pool */
        assert_int_equal(set_tree(tree, "pool_config_presets",
                                  "{\"preset\": {\"fair_share_starvation_timeout\": 10}}", &err), 0);
        assert_null(pool->preset_issue);
        assert_int_equal(pool->config.fair_share_starvation_timeout_ms.value, 10);
        ps_pool_tree_free(tree);
    }
}

/* A refused change of a pool keeps both its configs; transfer_pool_resources changes what was
 * set on the pools and keeps their presets under it. */
static void test_refusals_and_transfers_keep_the_split(void **state)
{
    (void)state;
    struct ps_error err;
    struct ps_pool_tree *tree = new_tree();
    assert_int_equal(set_tree(tree, "pool_config_presets", presets, &err), 0);
    create(tree, "a", "{\"config_preset\": \"presetB\", \"strong_guarantee_resources\": {\"cpu\": 4}}");
    create(tree, "b", "{}");
    const struct ps_pool *a = ps_pool_tree_find_pool(tree, "a");
    assert_int_equal(set_pool(tree, "a", "max_operation_count", "-1", &err), PS_EINVAL);
    assert_int_equal(a->config.fair_share_starvation_timeout_ms.value, 2000);
    assert_string_equal(a->explicit_config.config_preset, "presetB");

    struct ps_value delta = json("{\"strong_guarantee_resources\": {\"cpu\": 1}}");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_transfer_resources(tree, "a", "b", &delta, &err), 0);
    ps_value_release(&delta);
    assert_int_equal(ps_res_get(&a->explicit_config.strong_guarantee_resources.r, PS_RES_CPU),
                     ps_res_get(&a->config.strong_guarantee_resources.r, PS_RES_CPU));
    assert_int_equal(a->config.fair_share_starvation_timeout_ms.value, 2000);
    assert_false(a->explicit_config.fair_share_starvation_timeout_ms.set);
    ps_pool_tree_free(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preset_keys_are_upstreams),
        cmocka_unit_test(test_preset_under_explicit_config),
        cmocka_unit_test(test_explicit_wins_per_key_and_resource),
        cmocka_unit_test(test_bad_presets_are_issues_not_refusals),
        cmocka_unit_test(test_refusals_and_transfers_keep_the_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
