#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/tree_config.h"
#include "value_helpers.h"

/* Every canonical key with its documented default (tree_config.h). */
static const char *const expected_defaults =
    "{\"nodes_filter\": \"\", \"max_operation_count\": 50000, \"max_operation_count_per_pool\": 50,"
    " \"max_running_operation_count\": 2000, \"max_running_operation_count_per_pool\": 50,"
    " \"default_parent_pool\": \"<Root>\", \"enable_pool_starvation\": true,"
    " \"forbid_immediate_operations_in_root\": true, \"max_ephemeral_pools_per_user\": 1,"
    " \"use_user_default_parent_pool_map\": false,"
    " \"fair_share_starvation_timeout\": 30000, \"fair_share_aggressive_starvation_timeout\": 120000,"
    " \"fair_share_starvation_tolerance\": 0.8, \"enable_aggressive_starvation\": false,"
    " \"min_share_preemption_timeout\": 15000, \"non_preemptible_resource_usage_threshold\": {},"
    " \"preemption_satisfaction_threshold\": 1, \"aggressive_preemption_satisfaction_threshold\": 0.2,"
    " \"preemptive_scheduling_backoff\": 5000, \"allocation_preemption_timeout\": 10000,"
    " \"allocation_graceful_preemption_timeout\": 60000,"
    " \"waiting_for_resources_on_node_timeout\": null,"
    " \"max_unpreemptible_running_allocation_count\": null, \"enable_conditional_preemption\": true,"
    " \"preemption_check_starvation\": true, \"preemption_check_satisfaction\": true,"
    " \"allow_aggressive_preemption_for_gang_operations\": true,"
    " \"allocation_count_preemption_timeout_coefficient\": 1,"
    " \"scheduling_preemption_priority_scope\": \"operation_and_ancestors\","
    " \"fifo_pool_scheduling_order\": \"satisfaction\","
    " \"integral_guarantees\": {\"smooth_period\": 60000, \"pool_capacity_saturation_period\": 86400000,"
    "                          \"relaxed_share_multiplier_limit\": 3},"
    " \"enable_step_function_for_gang_operations\": true,"
    " \"enable_improved_fair_share_by_fit_factor_computation\": false,"
    " \"infer_weight_from_guarantees_share_multiplier\": null, \"main_resource\": \"cpu\","
    " \"node_reconnection_timeout\": 300000, \"allowed_node_resources_overcommit_duration\": 15000,"
    " \"fair_share_update_period\": 1000,"
    " \"should_distribute_free_volume_among_children\": false,"
    " \"enable_fair_share_truncation_in_fifo_pool\": false,"
    " \"max_schedulable_element_count_in_fifo_pool\": null,"
    " \"enable_guarantee_priority_scheduling\": false,"
    " \"min_spare_allocation_resources_on_node\": {\"user_slots\": 1, \"cpu\": 1, \"memory\": 268435456},"
    " \"necessary_resources_for_operation\": [], \"non_tentative_operation_types\": [],"
    " \"enable_limiting_ancestor_check\": true,"
    " \"ssd_priority_preemption\": {\"enable\": false, \"node_tag_filter\": \"\", \"medium_names\": []},"
    " \"per_pool_satisfaction_digest\": {\"absolute_precision\": 0.01, \"lower_bound\": 0,"
    " \"upper_bound\": 1, \"default_value\": null},"
    " \"per_pool_satisfaction_profiling_quantiles\": [0.01, 0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75,"
    " 0.9, 0.95, 0.99], \"pool_config_presets\": {},"
    " \"acl\": [], \"inherit_acl\": true}";

static void test_defaults_of_every_key(void **state)
{
    (void)state;
    struct ps_tree_config cfg;
    assert_int_equal(ps_tree_config_init(&cfg), 0);
    struct ps_value actual, expected = json(expected_defaults);
    assert_int_equal(ps_tree_config_to_value(&cfg, &actual), 0);
    assert_int_equal(actual.count, expected.count);
    assert_int_equal(ps_tree_config_key_count(), expected.count);
    for (int i = 0; i < expected.count; i++) {
        const struct ps_value *got = ps_value_find(&actual, expected.keys[i]);
        if (!got || !ps_value_equal(got, &expected.items[i]))
            fail_msg("default of %s differs", expected.keys[i]);
        assert_string_equal(ps_tree_config_key_name(i), expected.keys[i]);
    }
    /* The struct fields match the table. */
    assert_int_equal(cfg.max_running_operation_count, 2000);
    assert_int_equal(cfg.fair_share_update_period_ms, 1000);
    assert_int_equal(cfg.allowed_node_resources_overcommit_duration_ms, 15000);
    assert_int_equal(cfg.integral_guarantees.pool_capacity_saturation_period_ms, 86400000);
    assert_false(cfg.max_unpreemptible_running_allocation_count.set);
    ps_value_release(&actual);
    ps_value_release(&expected);
    ps_tree_config_release(&cfg);
}

struct bad_case {
    const char *key;
    const char *value;     /* JSON */
    const char *reason;    /* a substring of the message */
};

static const struct bad_case bad_cases[] = {
    {"nodes_filter", "\"a & (\"", "invalid formula"},
    {"nodes_filter", "5", "must be a string"},
    {"max_operation_count", "0", "must be >"},
    {"max_operation_count", "1.5", "must be an integer"},
    {"max_operation_count_per_pool", "-1", "must be >"},
    {"max_running_operation_count", "\"many\"", "must be an integer"},
    {"max_running_operation_count_per_pool", "0", "must be >"},
    {"default_parent_pool", "\"\"", "must not be empty"},
    {"default_parent_pool", "\"a$b\"", "'$' is reserved"},
    {"enable_pool_starvation", "1", "must be a boolean"},
    {"forbid_immediate_operations_in_root", "\"yes\"", "must be a boolean"},
    {"max_ephemeral_pools_per_user", "0", "must be >= 1"},
    {"max_ephemeral_pool_per_user", "0", "must be >= 1"},
    {"use_user_default_parent_pool_map", "\"on\"", "must be a boolean"},
    {"fair_share_starvation_timeout", "-5", "must be >= 0"},
    {"fair_share_preemption_timeout", "0.5", "must be an integer"},
    {"fair_share_aggressive_starvation_timeout", "-1", "must be >= 0"},
    {"fair_share_starvation_tolerance", "1.5", "must be in [0, 1]"},
    {"enable_aggressive_starvation", "\"no\"", "must be a boolean"},
    {"min_share_preemption_timeout", "-1", "must be >= 0"},
    {"non_preemptible_resource_usage_threshold", "{\"cpu\": -1}", "must be a non-negative number"},
    {"non_preemptible_resource_usage_threshold", "{\"disk\": 1}", "unknown resource"},
    {"non_preemptible_resource_usage_threshold", "{\"user_slots\": 1.5}", "must be an integer"},
    {"preemption_satisfaction_threshold", "0", "must be >"},
    {"aggressive_preemption_satisfaction_threshold", "-0.1", "must be >= 0"},
    {"preemptive_scheduling_backoff", "-1", "must be >= 0"},
    {"allocation_preemption_timeout", "-1", "must be >= 0"},
    {"job_interrupt_timeout", "true", "must be an integer"},
    {"allocation_graceful_preemption_timeout", "-1", "must be >= 0"},
    {"max_unpreemptible_running_allocation_count", "-1", "must be >= 0"},
    {"waiting_for_resources_on_node_timeout", "-1", "must be >= 0"},
    {"enable_conditional_preemption", "0", "must be a boolean"},
    {"preemption_check_starvation", "1", "must be a boolean"},
    {"preemption_check_satisfaction", "\"yes\"", "must be a boolean"},
    {"enable_limiting_ancestor_check", "1", "must be a boolean"},
    {"allow_aggressive_preemption_for_gang_operations", "[]", "must be a boolean"},
    {"allocation_count_preemption_timeout_coefficient", "0.5", "must be >= 1"},
    {"scheduling_preemption_priority_scope", "\"everything\"", "must be one of operation_and_ancestors, operation_only"},
    {"fifo_pool_scheduling_order", "\"random\"", "must be one of satisfaction, fifo"},
    {"integral_guarantees", "{\"smooth_period\": 0}", "must be >"},
    {"integral_guarantees/pool_capacity_saturation_period", "-1", "must be >"},
    {"integral_guarantees/relaxed_share_multiplier_limit", "0.5", "must be >= 1"},
    {"integral_guarantees/nonsense", "1", "unknown key"},
    {"enable_step_function_for_gang_operations", "\"on\"", "must be a boolean"},
    {"enable_improved_fair_share_by_fit_factor_computation", "1", "must be a boolean"},
    {"infer_weight_from_guarantees_share_multiplier", "0.5", "must be >= 1"},
    {"main_resource", "\"disk\"", "must be one of user_slots, cpu, gpu, memory, network"},
    {"necessary_resources_for_operation", "[\"gpus\"]", "must be a resource name"},
    {"non_tentative_operation_types", "[\"mapreduce\"]", "must be an operation type"},
    {"node_reconnection_timeout", "-1", "must be >= 0"},
    {"allowed_node_resources_overcommit_duration", "-1", "must be >= 0"},
    {"fair_share_update_period", "5", "must be in [10, 60000]"},
    {"fair_share_update_period", "60001", "must be in [10, 60000]"},
    {"should_distribute_free_volume_among_children", "1", "must be a boolean"},
    {"enable_fair_share_truncation_in_fifo_pool", "\"yes\"", "must be a boolean"},
    {"max_schedulable_element_count_in_fifo_pool", "0", "must be > 0"},
    {"enable_guarantee_priority_scheduling", "0", "must be a boolean"},
    {"min_spare_allocation_resources_on_node", "{\"cpu\": -1}", "must be a non-negative number"},
    {"min_spare_job_resources_on_node", "{\"disk\": 1}", "unknown resource"},
    {"ssd_priority_preemption", "{\"enable\": 1}", "must be a boolean"},
    {"ssd_priority_preemption/node_tag_filter", "\"a &\"", "ssd_priority_preemption/node_tag_filter"},
    {"ssd_priority_preemption/medium_names", "[1]", "must be a string"},
    {"per_pool_satisfaction_digest", "{\"absolute_precision\": 0}", "must be > 0"},
    {"per_pool_satisfaction_digest", "{\"upper_bound\": -1}",
     "upper_bound -1 must be greater than or equal to lower_bound 0"},
    {"per_pool_satisfaction_digest", "{\"absolute_precision\": 0.00001}", "is more than 10000"},
    {"per_pool_satisfaction_digest", "{\"default_value\": 2}", "default_value"},
    {"per_pool_satisfaction_digest/lower_bound", "\"low\"", "must be a number"},
    {"per_pool_satisfaction_profiling_quantiles", "[0.5, 1.5]", "must be in [0, 1]"},
    {"per_pool_satisfaction_profiling_quantiles", "[-0.1]", "must be in [0, 1]"},
    {"per_pool_satisfaction_profiling_quantiles", "0.5", "must be a list of numbers"},
    {"pool_config_presets", "[1]", "must be a map"},
    {"acl", "{}", "acl: must be a list of ACEs"},
    {"inherit_acl", "\"yes\"", "must be a boolean"},
    {"per_pool_satisfaction_profiling_quantiles",
     "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]", "must have at most 20 items"},
    {"no_such_key", "1", "unknown key of the pool tree config"},
};

static void test_bad_values_name_key_value_reason(void **state)
{
    (void)state;
    struct ps_tree_config cfg;
    assert_int_equal(ps_tree_config_init(&cfg), 0);
    struct ps_value before;
    assert_int_equal(ps_tree_config_to_value(&cfg, &before), 0);
    int checked = 0;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        if (!c->reason)
            continue;
        struct ps_value v = json(c->value);
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_tree_config_set(&cfg, c->key, &v, &err);
        if (rc != PS_EINVAL)
            fail_msg("%s = %s was accepted (rc %d)", c->key, c->value, rc);
        if (!strstr(err.msg, c->key))
            fail_msg("message for %s does not name the key: %s", c->key, err.msg);
        if (!strstr(err.msg, c->reason))
            fail_msg("message for %s lacks \"%s\": %s", c->key, c->reason, err.msg);
        struct ps_value after;
        assert_int_equal(ps_tree_config_to_value(&cfg, &after), 0);
        if (!ps_value_equal(&before, &after))
            fail_msg("%s = %s changed the config", c->key, c->value);
        ps_value_release(&after);
        ps_value_release(&v);
        checked++;
    }
    assert_true(checked >= 40);
    /* Every canonical key has at least one bad case. */
    for (int k = 0; k < ps_tree_config_key_count(); k++) {
        const char *key = ps_tree_config_key_name(k);
        bool found = false;
        for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
            found = found || strncmp(bad_cases[i].key, key, strlen(key)) == 0;
        if (!found)
            fail_msg("no bad-value case for %s", key);
    }
    ps_value_release(&before);
    ps_tree_config_release(&cfg);
}

static void test_message_names_the_value(void **state)
{
    (void)state;
    struct ps_tree_config cfg;
    ps_tree_config_init(&cfg);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value v = ps_value_number(1.5);
    assert_int_equal(ps_tree_config_set(&cfg, "fair_share_starvation_tolerance", &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "fair_share_starvation_tolerance: must be in [0, 1], got 1.5");
    ps_error_init(&err);
    struct ps_value s = ps_value_string("random");
    assert_int_equal(ps_tree_config_set(&cfg, "fifo_pool_scheduling_order", &s, &err), PS_EINVAL);
    assert_string_equal(err.msg, "fifo_pool_scheduling_order: must be one of satisfaction, fifo, got \"random\"");
    ps_value_release(&s);
    ps_tree_config_release(&cfg);
}

static void test_aliases_and_paths(void **state)
{
    (void)state;
    struct ps_tree_config cfg;
    ps_tree_config_init(&cfg);
    struct ps_value doc = json("{\"fair_share_preemption_timeout\": 45000, \"max_ephemeral_pool_per_user\": 3,"
                               " \"job_interrupt_timeout\": 7000, \"max_unpreemptable_running_job_count\": 4,"
                               " \"infer_weight_from_min_share_ratio_multiplier\": 2,"
                               " \"total_resource_limits_consider_delay\": 1000,"
                               " \"job_count_preemption_timeout_coefficient\": 2.5,"
                               " \"integral_guarantees/smooth_period\": 30000,"
                               " \"non_preemptible_resource_usage_threshold/cpu\": 1.5,"
                               " \"fair_share_aggressive_starvation_timeout\": 50000}");
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_tree_config_apply(&cfg, &doc, &err), 0);
    assert_int_equal(cfg.fair_share_starvation_timeout_ms, 45000);
    assert_int_equal(cfg.max_ephemeral_pools_per_user, 3);
    assert_int_equal(cfg.allocation_preemption_timeout_ms, 7000);
    assert_true(cfg.max_unpreemptible_running_allocation_count.set);
    assert_int_equal(cfg.max_unpreemptible_running_allocation_count.value, 4);
    assert_true(cfg.infer_weight_from_guarantees_share_multiplier.value == 2.0);
    assert_int_equal(cfg.node_reconnection_timeout_ms, 1000);
    assert_true(cfg.allocation_count_preemption_timeout_coefficient == 2.5);
    assert_int_equal(cfg.integral_guarantees.smooth_period_ms, 30000);
    assert_int_equal(cfg.integral_guarantees.pool_capacity_saturation_period_ms, 86400000);
    assert_int_equal(cfg.non_preemptible_resource_usage_threshold.r.v[PS_RES_CPU], 150);
    /* min_share_preemption_timeout is separate, not an alias. */
    assert_int_equal(cfg.min_share_preemption_timeout_ms, 15000);

    /* Upstream's postprocessing: user_slots of the threshold from the allocation count. */
    struct ps_resources_opt t = ps_tree_config_non_preemptible_threshold(&cfg);
    assert_int_equal(t.r.v[PS_RES_USER_SLOTS], 4);
    assert_true(t.set & (1u << PS_RES_USER_SLOTS));

    struct ps_value got;
    assert_int_equal(ps_tree_config_get(&cfg, "integral_guarantees/smooth_period", &got, &err), 0);
    assert_true(got.type == PS_VALUE_NUMBER && got.number == 30000);
    assert_int_equal(ps_tree_config_get(&cfg, "non_preemptible_resource_usage_threshold/cpu", &got, &err), 0);
    assert_true(got.number == 1.5);
    assert_int_equal(ps_tree_config_get(&cfg, "max_unpreemptible_running_job_count", &got, &err), 0);
    assert_true(got.number == 4);

    /* null resets to the default; unset optional reads as null. */
    assert_int_equal(ps_tree_config_set(&cfg, "max_unpreemptible_running_allocation_count", NULL, &err), 0);
    assert_int_equal(ps_tree_config_get(&cfg, "max_unpreemptible_running_allocation_count", &got, &err), 0);
    assert_int_equal(got.type, PS_VALUE_NULL);
    struct ps_value null = ps_value_null();
    assert_int_equal(ps_tree_config_set(&cfg, "integral_guarantees", &null, &err), 0);
    assert_int_equal(cfg.integral_guarantees.smooth_period_ms, 60000);
    ps_value_release(&doc);
    ps_tree_config_release(&cfg);
}

static void test_cross_key_rules(void **state)
{
    (void)state;
    struct ps_tree_config cfg;
    ps_tree_config_init(&cfg);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value v = ps_value_number(0.1);
    /* threshold 0.1 < aggressive 0.2: refused, unchanged */
    assert_int_equal(ps_tree_config_set(&cfg, "preemption_satisfaction_threshold", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "aggressive_preemption_satisfaction_threshold"));
    assert_true(cfg.preemption_satisfaction_threshold == 1.0);
    /* ... but fine as one document that lowers both, in either order. */
    struct ps_value doc = json("{\"preemption_satisfaction_threshold\": 0.1,"
                               " \"aggressive_preemption_satisfaction_threshold\": 0.05}");
    ps_error_init(&err);
    assert_int_equal(ps_tree_config_apply(&cfg, &doc, &err), 0);
    assert_true(cfg.aggressive_preemption_satisfaction_threshold == 0.05);
    ps_value_release(&doc);

    ps_error_init(&err);
    v = ps_value_number(1000);
    assert_int_equal(ps_tree_config_set(&cfg, "fair_share_aggressive_starvation_timeout", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "fair_share_starvation_timeout"));
    assert_int_equal(cfg.fair_share_aggressive_starvation_timeout_ms, 120000);

    /* upstream's postprocessor: enabling SSD priority preemption needs a node tag filter */
    ps_error_init(&err);
    v = ps_value_bool(true);
    assert_int_equal(ps_tree_config_set(&cfg, "ssd_priority_preemption/enable", &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "ssd_priority_preemption/enable: SSD node tag filter must be "
                                 "non-empty when SSD priority preemption is enabled");
    assert_false(cfg.ssd_priority_preemption.enable);
    doc = json("{\"ssd_priority_preemption\": {\"enable\": true, \"node_tag_filter\": \"ssd_tag\","
               " \"medium_names\": [\"ssd_slots\"]}}");
    ps_error_init(&err);
    assert_int_equal(ps_tree_config_apply(&cfg, &doc, &err), 0);
    assert_true(cfg.ssd_priority_preemption.enable);
    assert_int_equal(cfg.ssd_priority_preemption.medium_names.count, 1);
    assert_string_equal(cfg.ssd_priority_preemption.medium_names.items[0], "ssd_slots");
    ps_value_release(&doc);

    /* A bad document changes nothing even if its first keys were fine. */
    doc = json("{\"max_operation_count\": 7, \"main_resource\": \"disk\"}");
    ps_error_init(&err);
    assert_int_equal(ps_tree_config_apply(&cfg, &doc, &err), PS_EINVAL);
    assert_int_equal(cfg.max_operation_count, 50000);
    ps_value_release(&doc);
    ps_tree_config_release(&cfg);
}

static void test_fs_options(void **state)
{
    (void)state;
    struct ps_tree_config cfg;
    ps_tree_config_init(&cfg);
    struct ps_fs_options o;
    ps_tree_config_fs_options(&cfg, &o);
    assert_int_equal(o.main_resource, PS_RES_CPU);
    assert_int_equal(o.integral_pool_capacity_saturation_period_ms, 86400000);
    assert_int_equal(o.integral_smooth_period_ms, 60000);
    assert_true(o.relaxed_share_multiplier_limit == 3.0);
    assert_true(o.enable_step_function_for_gang_operations);
    assert_false(o.enable_improved_fair_share_by_fit_factor_computation);
    assert_true(o.infer_weight_from_guarantees_share_multiplier == 0.0);
    ps_tree_config_release(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_of_every_key),
        cmocka_unit_test(test_bad_values_name_key_value_reason),
        cmocka_unit_test(test_message_names_the_value),
        cmocka_unit_test(test_aliases_and_paths),
        cmocka_unit_test(test_cross_key_rules),
        cmocka_unit_test(test_fs_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
