#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/op_spec.h"
#include "core/pool_config.h"
#include "value_helpers.h"

static const char *const expected_defaults =
    "{\"weight\": null, \"max_share_ratio\": null, \"strong_guarantee_resources\": {},"
    " \"resource_limits\": {}, \"scheduling_tag_filter\": \"\", \"mode\": \"fair_share\","
    " \"max_running_operation_count\": null, \"max_operation_count\": null,"
    " \"fifo_sort_parameters\": [\"weight\", \"start_time\"], \"fifo_pool_scheduling_order\": null,"
    " \"forbid_immediate_operations\": false,"
    " \"create_ephemeral_subpools\": false,"
    " \"ephemeral_subpool_config\": null,"
    " \"integral_guarantees\": {\"guarantee_type\": \"none\", \"resource_flow\": {},"
    "                          \"burst_guarantee_resources\": {}, \"relaxed_share_multiplier_limit\": null,"
    "                          \"can_accept_free_volume\": true,"
    "                          \"should_distribute_free_volume_among_children\": null},"
    " \"fair_share_starvation_timeout\": null, \"fair_share_starvation_tolerance\": null,"
    " \"non_preemptible_resource_usage_threshold\": {}, \"enable_aggressive_starvation\": null,"
    " \"allow_aggressive_preemption\": null, \"allow_normal_preemption\": null,"
    " \"allow_regular_allocations_on_ssd_nodes\": null, \"enable_lightweight_operations\": null,"
    " \"config_preset\": null,"
    " \"offloading_settings\": {}, \"acl\": [], \"inherit_acl\": true,"
    " \"enable_fair_share_truncation_in_fifo_pool\": null,"
    " \"use_pool_satisfaction_for_scheduling\": null,"
    " \"infer_children_weights_from_historic_usage\": false,"
    " \"historic_usage_config\": {\"aggregation_mode\": \"none\", \"ema_alpha\": 1},"
    " \"compute_promised_guarantee_fair_share\": false, \"allowed_profiling_tags\": []}";

static void test_defaults_of_every_key(void **state)
{
    (void)state;
    struct ps_pool_config cfg;
    assert_int_equal(ps_pool_config_init(&cfg), 0);
    struct ps_value actual, expected = json(expected_defaults);
    assert_int_equal(ps_pool_config_to_value(&cfg, &actual), 0);
    assert_int_equal(ps_pool_config_key_count(), expected.count);
    for (int i = 0; i < expected.count; i++) {
        const struct ps_value *got = ps_value_find(&actual, expected.keys[i]);
        if (!got || !ps_value_equal(got, &expected.items[i]))
            fail_msg("default of %s differs", expected.keys[i]);
        assert_string_equal(ps_pool_config_key_name(i), expected.keys[i]);
    }
    /* Unset limits mean the tree's per-pool defaults, read at the time of use. */
    struct ps_tree_config tree;
    ps_tree_config_init(&tree);
    assert_int_equal(ps_pool_config_max_running(&cfg, &tree), 50);
    assert_int_equal(ps_pool_config_max_operations(&cfg, &tree), 50);
    tree.max_running_operation_count_per_pool = 7;
    assert_int_equal(ps_pool_config_max_running(&cfg, &tree), 7);
    ps_tree_config_release(&tree);
    ps_value_release(&actual);
    ps_value_release(&expected);
    ps_pool_config_release(&cfg);
}

struct bad_case {
    const char *key;
    const char *value;
    const char *reason;
};

static const struct bad_case bad_cases[] = {
    {"weight", "-1", "must be in [1.4901161193847656e-08, 67108864]"},
    {"weight", "0", "must be in"},
    {"weight", "1e9", "must be in"},
    {"weight", "\"heavy\"", "must be a number"},
    {"max_share_ratio", "1.5", "must be in [0, 1]"},
    {"strong_guarantee_resources", "{\"cpu\": -1}", "must be a non-negative number"},
    {"min_share_resources", "{\"gpu\": 0.5}", "must be an integer"},
    {"strong_guarantee_resources", "[1]", "must be a map of resources"},
    {"resource_limits", "{\"disk\": 5}", "unknown resource"},
    {"scheduling_tag_filter", "\"a |\"", "invalid formula"},
    {"scheduling_tag", "\"1abc\"", "invalid formula"},
    {"mode", "\"lifo\"", "must be one of fair_share, fifo"},
    {"max_running_operation_count", "-1", "must be >= 0"},
    {"max_operation_count", "2.5", "must be an integer"},
    {"fifo_sort_parameters", "[]", "must not be empty"},
    {"fifo_sort_parameters", "[\"size\"]", "must be one of weight, start_time, pending_job_count"},
    {"fifo_sort_parameters", "[\"weight\", \"weight\"]", "is listed twice"},
    {"fifo_pool_scheduling_order", "\"lifo\"", "must be one of satisfaction, fifo"},
    {"forbid_immediate_operations", "\"true\"", "must be a boolean"},
    {"enable_lightweight_operations", "1", "must be a boolean"},
    {"create_ephemeral_subpools", "1", "must be a boolean"},
    {"ephemeral_subpool_config", "{\"mode\": \"lifo\"}", "must be one of fair_share, fifo"},
    {"ephemeral_subpool_config/max_operation_count", "-1", "must be >= 0"},
    {"ephemeral_subpool_config", "{\"weight\": 2}", "unknown key"},
    {"integral_guarantees", "{\"guarantee_type\": \"strong\"}", "must be one of none, burst, relaxed"},
    {"integral_guarantees/resource_flow", "{\"cpu\": -3}", "must be a non-negative number"},
    {"integral_guarantees/burst_guarantee_resources", "5", "must be a map of resources"},
    {"integral_guarantees/relaxed_share_multiplier_limit", "11", "must be in [1, 10]"},
    {"integral_guarantees/can_accept_free_volume", "0", "must be a boolean"},
    {"integral_guarantees/should_distribute_free_volume_among_children", "\"yes\"", "must be a boolean"},
    {"fair_share_starvation_timeout", "-1", "must be >= 0"},
    {"fair_share_preemption_timeout", "0.5", "must be an integer"},
    {"fair_share_starvation_tolerance", "2", "must be in [0, 1]"},
    {"non_preemptible_resource_usage_threshold", "{\"memory\": -1}", "must be a non-negative number"},
    {"enable_aggressive_starvation", "0", "must be a boolean"},
    {"allow_aggressive_preemption", "\"yes\"", "must be a boolean"},
    {"allow_aggressive_starvation_preemption", "1", "must be a boolean"},
    {"allow_normal_preemption", "1", "must be a boolean"},
    {"allow_regular_allocations_on_ssd_nodes", "\"no\"", "must be a boolean"},
    {"acl", "\"alice\"", "acl: must be a list of ACEs"},
    {"acl", "[\"alice\"]", "acl/0: an ACE must be a map"},
    {"inherit_acl", "1", "must be a boolean"},
    {"config_preset", "5", "must be a string"},
    {"offloading_settings", "5", "must be a map"},
    {"enable_fair_share_truncation_in_fifo_pool", "1", "must be a boolean"},
    {"use_pool_satisfaction_for_scheduling", "\"yes\"", "must be a boolean"},
    {"infer_children_weights_from_historic_usage", "0", "must be a boolean"},
    {"historic_usage_config", "{\"aggregation_mode\": \"mean\"}",
     "must be one of none, exponential_moving_average"},
    {"historic_usage_config/ema_alpha", "-1", "must be >= 0"},
    {"compute_promised_guarantee_fair_share", "1", "must be a boolean"},
    {"allowed_profiling_tags", "\"tag\"", "must be a list of strings"},
};

/* A key that is not a pool setting is a custom attribute: stored as given, read back, listed
 * by to_value, copied, removed by null; a path inside one is refused and changes nothing. */
static void test_custom_attributes(void **state)
{
    (void)state;
    struct ps_pool_config cfg, copy;
    ps_pool_config_init(&cfg);
    struct ps_value v = json("{\"a\": [1, \"x\"]}"), got, all;
    struct ps_error err;
    ps_error_init(&err);
    assert_false(ps_pool_config_is_setting("some_attr"));
    assert_true(ps_pool_config_is_setting("min_share_resources/cpu"));
    assert_int_equal(ps_pool_config_set(&cfg, "some_attr", &v, &err), 0);
    assert_int_equal(ps_pool_config_get(&cfg, "some_attr", &got, &err), 0);
    assert_true(ps_value_equal(&got, &v));
    ps_value_release(&got);
    assert_int_equal(ps_pool_config_to_value(&cfg, &all), 0);
    assert_non_null(ps_value_find(&all, "some_attr"));
    ps_value_release(&all);
    assert_int_equal(ps_pool_config_set(&cfg, "some_attr/a", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "some_attr"));
    /* the keys of a stored pool document are no custom attributes */
    ps_error_init(&err);
    assert_int_equal(ps_pool_config_set(&cfg, "parent", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "parent: reserved"));
    assert_int_equal(ps_pool_config_copy(&copy, &cfg), 0);
    ps_pool_config_release(&cfg);
    assert_int_equal(ps_pool_config_get(&copy, "some_attr", &got, &err), 0);
    assert_true(ps_value_equal(&got, &v));
    ps_value_release(&got);
    assert_int_equal(ps_pool_config_set(&copy, "some_attr", NULL, &err), 0);
    assert_int_equal(ps_pool_config_get(&copy, "some_attr", &got, &err), PS_EINVAL);
    ps_value_release(&v);
    ps_pool_config_release(&copy);
}

/* offloading_settings entries are checked with the config (offloading_settings.h): each names the key,
 * the value and the reason; a good one passes. */
static void test_offloading_settings_validated(void **state)
{
    (void)state;
    static const struct {
        const char *value, *reason;
    } cases[] = {
        {"{\"cloud\": 5}", "offloading_settings/cloud: must be a map"},
        {"{\"cloud\": {\"weight\": 0}}", "offloading_settings/cloud: weight: must be in"},
        {"{\"cloud\": {\"pool\": 7}}", "offloading_settings/cloud: pool: must be a string"},
        {"{\"cloud\": {\"resource_limits\": {\"cpu\": -1}}}",
         "offloading_settings/cloud: resource_limits"},
        {"{\"cloud\": {\"pol\": \"x\"}}", "offloading_settings/cloud: pol: unknown key"},
        {"{\"bad tree\": {}}", "offloading_settings/bad tree"},
        {"{\"cloud\": {\"pool\": \"a b\"}}", "offloading_settings/cloud: pool"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ps_pool_config cfg;
        ps_pool_config_init(&cfg);
        struct ps_value v = json(cases[i].value);
        struct ps_error err;
        ps_error_init(&err);
        assert_int_equal(ps_pool_config_set(&cfg, "offloading_settings", &v, &err), 0);
        ps_error_init(&err);
        if (ps_pool_config_validate(&cfg, &err) != PS_EINVAL || !strstr(err.msg, cases[i].reason))
            fail_msg("%s: %s", cases[i].value, err.msg);
        ps_value_release(&v);
        ps_pool_config_release(&cfg);
    }
    struct ps_pool_config cfg;
    ps_pool_config_init(&cfg);
    struct ps_value v = json("{\"cloud\": {\"pool\": \"p\", \"weight\": 0.5, \"tentative\": true,"
                             " \"resource_limits\": {\"cpu\": 4}}, \"other\": {\"pool\": \"\"}}");
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_config_set(&cfg, "offloading_settings", &v, &err), 0);
    assert_int_equal(ps_pool_config_validate(&cfg, &err), 0);
    ps_value_release(&v);
    ps_pool_config_release(&cfg);
}

static void test_bad_values_name_key_value_reason(void **state)
{
    (void)state;
    struct ps_pool_config cfg;
    ps_pool_config_init(&cfg);
    struct ps_value before;
    ps_pool_config_to_value(&cfg, &before);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        if (!c->reason)
            continue;
        struct ps_value v = json(c->value);
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_pool_config_set(&cfg, c->key, &v, &err);
        if (rc != PS_EINVAL)
            fail_msg("%s = %s was accepted (rc %d)", c->key, c->value, rc);
        if (!strstr(err.msg, c->key) || !strstr(err.msg, c->reason))
            fail_msg("message for %s = %s: %s", c->key, c->value, err.msg);
        struct ps_value after;
        ps_pool_config_to_value(&cfg, &after);
        if (!ps_value_equal(&before, &after))
            fail_msg("%s = %s changed the config", c->key, c->value);
        ps_value_release(&after);
        ps_value_release(&v);
    }
    for (int k = 0; k < ps_pool_config_key_count(); k++) {
        const char *key = ps_pool_config_key_name(k);
        bool found = false;
        for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
            found = found || (bad_cases[i].reason && strncmp(bad_cases[i].key, key, strlen(key)) == 0);
        if (!found)
            fail_msg("no bad-value case for %s", key);
    }
    /* allow_normal_preemption: */
    struct ps_value v = ps_value_number(1);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_config_set(&cfg, "allow_normal_preemption", &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "allow_normal_preemption: must be a boolean, got 1");
    ps_value_release(&before);
    ps_pool_config_release(&cfg);
}

static void test_pool_level_rules(void **state)
{
    (void)state;
    struct {
        const char *doc;
        const char *reason;   /* NULL: valid */
    } cases[] = {
        {"{\"max_operation_count\": 5, \"max_running_operation_count\": 6}",
         "max_operation_count: must be greater than or equal to max_running_operation_count (6), got 5"},
        {"{\"max_operation_count\": 6, \"max_running_operation_count\": 6}", NULL},
        {"{\"mode\": \"fifo\", \"create_ephemeral_subpools\": true}",
         "create_ephemeral_subpools: a pool in fifo mode cannot create ephemeral subpools"},
        {"{\"integral_guarantees\": {\"guarantee_type\": \"relaxed\", \"burst_guarantee_resources\": {\"cpu\": 1}}}",
         "cannot be specified for guarantee_type \"relaxed\""},
        {"{\"integral_guarantees\": {\"guarantee_type\": \"burst\", \"burst_guarantee_resources\": {\"cpu\": 1}}}", NULL},
        {"{\"ephemeral_subpool_config\": {\"max_operation_count\": 1, \"max_running_operation_count\": 2}}",
         "ephemeral_subpool_config/max_operation_count"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ps_pool_config cfg;
        ps_pool_config_init(&cfg);
        struct ps_value doc = json(cases[i].doc);
        struct ps_error err;
        ps_error_init(&err);
        assert_int_equal(ps_pool_config_apply(&cfg, &doc, &err), 0);
        int rc = ps_pool_config_validate(&cfg, &err);
        if (cases[i].reason) {
            assert_int_equal(rc, PS_EINVAL);
            if (!strstr(err.msg, cases[i].reason))
                fail_msg("%s: %s", cases[i].doc, err.msg);
        } else {
            assert_int_equal(rc, 0);
        }
        ps_value_release(&doc);
        ps_pool_config_release(&cfg);
    }
}

static void test_groups_and_ephemeral_config(void **state)
{
    (void)state;
    struct ps_pool_config parent;
    ps_pool_config_init(&parent);
    struct ps_error err;
    ps_error_init(&err);
    /* A sub-key makes the optional group present. */
    struct ps_value v = ps_value_number(3);
    assert_int_equal(ps_pool_config_set(&parent, "ephemeral_subpool_config/max_running_operation_count", &v, &err), 0);
    assert_true(parent.has_ephemeral_subpool_config);
    struct ps_value doc = json("{\"mode\": \"fifo\", \"resource_limits\": {\"cpu\": 4}, \"max_operation_count\": 9}");
    assert_int_equal(ps_pool_config_set(&parent, "ephemeral_subpool_config", &doc, &err), 0);
    /* Setting the whole group replaced it: max_running_operation_count is unset again. */
    assert_false(parent.ephemeral_subpool_config.max_running_operation_count.set);
    struct ps_pool_config child;
    assert_int_equal(ps_pool_config_init_ephemeral(&child, &parent), 0);
    assert_int_equal(child.mode, PS_MODE_FIFO);
    assert_int_equal(child.resource_limits.r.v[PS_RES_CPU], 400);
    assert_true(child.max_operation_count.set && child.max_operation_count.value == 9);
    assert_false(child.max_running_operation_count.set);
    ps_pool_config_release(&child);
    /* null removes the group. */
    struct ps_value null = ps_value_null();
    assert_int_equal(ps_pool_config_set(&parent, "ephemeral_subpool_config", &null, &err), 0);
    assert_false(parent.has_ephemeral_subpool_config);
    struct ps_value got;
    assert_int_equal(ps_pool_config_get(&parent, "ephemeral_subpool_config", &got, &err), 0);
    assert_int_equal(got.type, PS_VALUE_NULL);
    /* Resource sub-paths. */
    v = ps_value_number(12.345);
    assert_int_equal(ps_pool_config_set(&parent, "strong_guarantee_resources/cpu", &v, &err), 0);
    assert_int_equal(parent.strong_guarantee_resources.r.v[PS_RES_CPU], 1235);   /* 2 decimals */
    assert_int_equal(ps_pool_config_get(&parent, "min_share_resources", &got, &err), 0);
    assert_true(ps_value_find(&got, "cpu")->number == 12.35);
    ps_value_release(&got);
    ps_value_release(&doc);
    ps_pool_config_release(&parent);
}

static void test_pool_names(void **state)
{
    (void)state;
    struct ps_error err;
    const char *good[] = {"research", "a", "A-b_c:d", "x123"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ps_error_init(&err);
        assert_int_equal(ps_pool_name_check("name", good[i], &err), 0);
    }
    const char *bad[] = {"", "<Root>", "a$b", "a b", "a/b", "ä"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ps_error_init(&err);
        assert_int_equal(ps_pool_name_check("name", bad[i], &err), PS_EINVAL);
        assert_non_null(strstr(err.msg, "name"));
    }
    char long_name[PS_POOL_NAME_MAX + 2];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    ps_error_init(&err);
    assert_int_equal(ps_pool_name_check("name", long_name, &err), PS_EINVAL);
    long_name[PS_POOL_NAME_MAX] = '\0';
    assert_int_equal(ps_pool_name_check("name", long_name, &err), 0);
}

static void test_operation_spec(void **state)
{
    (void)state;
    struct ps_operation_spec spec;
    assert_int_equal(ps_operation_spec_init(&spec), 0);
    struct ps_value doc = json(
        "{\"pool\": \"research\", \"weight\": 2, \"resource_limits\": {\"user_slots\": 200, \"cpu\": 10},"
        " \"pool_trees\": [\"physical\", \"gpu\"], \"tasks\": {\"map\": {}},"
        " \"scheduling_options_per_pool_tree\": {\"gpu\": {\"pool\": \"gpu_pool\", \"weight\": 5,"
        "     \"resource_limits\": {\"cpu\": 3}, \"tentative\": true}}}");
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), 0);
    struct ps_tree_op_settings s;
    ps_operation_spec_settings(&spec, "physical", &s);
    assert_string_equal(s.pool, "research");
    assert_true(s.weight.value == 2);
    assert_int_equal(s.resource_limits.r.v[PS_RES_USER_SLOTS], 200);
    ps_operation_spec_settings(&spec, "gpu", &s);
    assert_string_equal(s.pool, "gpu_pool");
    assert_true(s.weight.value == 5);
    assert_int_equal(s.resource_limits.r.v[PS_RES_CPU], 300);         /* per tree */
    assert_int_equal(s.resource_limits.r.v[PS_RES_USER_SLOTS], 200);  /* from the spec */

    struct ps_operation_spec copy;
    assert_int_equal(ps_operation_spec_copy(&copy, &spec), 0);
    struct ps_value a, b;
    ps_operation_spec_to_value(&spec, &a);
    ps_operation_spec_to_value(&copy, &b);
    assert_true(ps_value_equal(&a, &b));
    ps_value_release(&a);
    ps_value_release(&b);
    ps_operation_spec_release(&copy);

    /* Bad per-tree values name the tree and key; nothing changes. */
    struct ps_value bad = json("{\"weight\": 3, \"scheduling_options_per_pool_tree\": {\"gpu\": {\"weight\": 0}}}");
    ps_error_init(&err);
    assert_int_equal(ps_operation_spec_apply(&spec, &bad, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "scheduling_options_per_pool_tree/gpu"));
    assert_non_null(strstr(err.msg, "weight"));
    assert_true(spec.weight.value == 2);
    ps_value_release(&bad);
    bad = json("{\"pool\": \"\"}");
    ps_error_init(&err);
    assert_int_equal(ps_operation_spec_apply(&spec, &bad, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pool: must not be empty, got \"\"");
    ps_value_release(&bad);
    ps_value_release(&doc);
    ps_operation_spec_release(&spec);
}

/* out[key] equals the JSON value text want. */
static void assert_key(const struct ps_value *out, const char *key, const char *want)
{
    struct ps_value w = json(want);
    const struct ps_value *got = ps_value_find(out, key);
    assert_non_null(got);
    assert_true(ps_value_equal(got, &w));
    ps_value_release(&w);
}

/* preemption_mode and max_unpreemptible_allocation_count (with upstream's older names): defaults,
 * parsing, the engine's view, bad values (nothing applied), not per tree. */
static void test_operation_spec_preemption(void **state)
{
    (void)state;
    struct ps_operation_spec spec;
    assert_int_equal(ps_operation_spec_init(&spec), 0);
    bool graceful = true;
    int max = 0;
    ps_operation_spec_preempt_settings(&spec, &graceful, &max);
    assert_false(graceful);
    assert_int_equal(max, -1);
    struct ps_value out;
    assert_int_equal(ps_operation_spec_to_value(&spec, &out), 0);
    assert_key(&out, "preemption_mode", "\"normal\"");
    assert_key(&out, "max_unpreemptible_allocation_count", "null");
    ps_value_release(&out);

    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc =
        json("{\"preemption_mode\": \"graceful\", \"max_unpreemptible_job_count\": 7}");
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), 0);
    ps_value_release(&doc);
    assert_int_equal(spec.preemption_mode, PS_PREEMPTION_MODE_GRACEFUL);
    assert_true(spec.max_unpreemptible_allocation_count.set);
    ps_operation_spec_preempt_settings(&spec, &graceful, &max);
    assert_true(graceful);
    assert_int_equal(max, 7);
    assert_int_equal(ps_operation_spec_to_value(&spec, &out), 0);
    assert_key(&out, "preemption_mode", "\"graceful\"");
    assert_key(&out, "max_unpreemptible_allocation_count", "7");
    assert_null(ps_value_find(&out, "max_unpreemptible_job_count"));   /* canonical name only */
    ps_value_release(&out);
    doc = json("{\"max_unpreemptable_job_count\": 0}");
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), 0);
    ps_value_release(&doc);
    ps_operation_spec_preempt_settings(&spec, &graceful, &max);
    assert_int_equal(max, 0);
    doc = json("{\"max_unpreemptible_allocation_count\": 1e12}");   /* clamped for the engine */
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), 0);
    ps_value_release(&doc);
    ps_operation_spec_preempt_settings(&spec, &graceful, &max);
    assert_int_equal(max, INT32_MAX);

    /* Bad values: one message naming key, value and reason; nothing applied (the valid
     * preemption_mode before the bad count is not kept either). */
    static const struct {
        const char *doc, *msg;
    } bad[] = {
        {"{\"preemption_mode\": \"soft\"}",
         "preemption_mode: must be one of normal, graceful, got \"soft\""},
        {"{\"preemption_mode\": true}", "preemption_mode"},
        {"{\"preemption_mode\": \"normal\", \"max_unpreemptible_allocation_count\": -1}",
         "max_unpreemptible_allocation_count: must be >= 0, got -1"},
        {"{\"max_unpreemptible_job_count\": 2.5}",
         "max_unpreemptible_job_count: must be an integer, got 2.5"},
        {"{\"max_unpreemptible_allocation_count\": \"3\"}", "max_unpreemptible_allocation_count"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        doc = json(bad[i].doc);
        ps_error_init(&err);
        assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), PS_EINVAL);
        assert_non_null(strstr(err.msg, bad[i].msg));
        ps_value_release(&doc);
        assert_int_equal(spec.preemption_mode, PS_PREEMPTION_MODE_GRACEFUL);
        assert_true(spec.max_unpreemptible_allocation_count.set);
        assert_int_equal(spec.max_unpreemptible_allocation_count.value, 1000000000000);
    }

    /* null resets to the defaults. */
    doc = json("{\"preemption_mode\": null, \"max_unpreemptible_allocation_count\": null}");
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), 0);
    ps_value_release(&doc);
    ps_operation_spec_preempt_settings(&spec, &graceful, &max);
    assert_false(graceful);
    assert_int_equal(max, -1);

    /* Upstream has them per operation only: per-tree options do not carry them. */
    doc = json("{\"scheduling_options_per_pool_tree\": {\"gpu\": {\"preemption_mode\": \"graceful\","
               " \"max_unpreemptible_job_count\": 1}}}");
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), 0);
    ps_value_release(&doc);
    ps_operation_spec_preempt_settings(&spec, &graceful, &max);
    assert_false(graceful);
    assert_int_equal(max, -1);
    assert_int_equal(ps_operation_spec_to_value(&spec, &out), 0);
    const struct ps_value *per_tree = ps_value_find(&out, "scheduling_options_per_pool_tree");
    const struct ps_value *gpu = ps_value_find(per_tree, "gpu");
    assert_non_null(gpu);
    assert_null(ps_value_find(gpu, "preemption_mode"));
    ps_value_release(&out);
    ps_operation_spec_release(&spec);
}

/* strong_guarantee_resources (alias min_share_resources), upstream's TSchedulableConfig key of
 * an operation spec: recognised (no unrecognized_spec), validated (nothing applied on a bad
 * value), kept under its canonical name; the guarantee itself is not given (op_spec.h). */
static void test_operation_spec_strong_guarantee(void **state)
{
    (void)state;
    struct ps_operation_spec spec;
    assert_int_equal(ps_operation_spec_init(&spec), 0);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json("{\"min_share_resources\": {\"cpu\": 1, \"user_slots\": 6}}");
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), 0);
    struct ps_value unrec;
    assert_int_equal(ps_operation_spec_unrecognized(&doc, &unrec), 0);
    assert_int_equal(unrec.type, PS_VALUE_MAP);
    assert_null(ps_value_find(&unrec, "min_share_resources"));
    ps_value_release(&unrec);
    ps_value_release(&doc);
    assert_true(spec.strong_guarantee_resources.set >> PS_RES_CPU & 1);
    assert_true(spec.strong_guarantee_resources.set >> PS_RES_USER_SLOTS & 1);
    assert_false(spec.strong_guarantee_resources.set >> PS_RES_MEMORY & 1);
    assert_int_equal(spec.strong_guarantee_resources.r.v[PS_RES_USER_SLOTS], 6);
    struct ps_value out;
    assert_int_equal(ps_operation_spec_to_value(&spec, &out), 0);
    assert_key(&out, "strong_guarantee_resources", "{\"cpu\": 1, \"user_slots\": 6}");
    assert_null(ps_value_find(&out, "min_share_resources"));   /* canonical name only */
    ps_value_release(&out);

    doc = json("{\"weight\": 2, \"strong_guarantee_resources\": {\"cpu\": -1}}");
    ps_error_init(&err);
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "strong_guarantee_resources"));
    assert_non_null(strstr(err.msg, "-1"));
    ps_value_release(&doc);
    assert_false(spec.weight.set);
    assert_int_equal(spec.strong_guarantee_resources.r.v[PS_RES_USER_SLOTS], 6);
    ps_operation_spec_release(&spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_of_every_key),
        cmocka_unit_test(test_bad_values_name_key_value_reason),
        cmocka_unit_test(test_custom_attributes),
        cmocka_unit_test(test_offloading_settings_validated),
        cmocka_unit_test(test_pool_level_rules),
        cmocka_unit_test(test_groups_and_ephemeral_config),
        cmocka_unit_test(test_pool_names),
        cmocka_unit_test(test_operation_spec),
        cmocka_unit_test(test_operation_spec_preemption),
        cmocka_unit_test(test_operation_spec_strong_guarantee),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
