/* template_pool_tree_config_map (tree_template.h): matching, priorities, the tree's own keys
 * over the templates, and all-or-nothing changes across trees (strategy.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/pool_tree.h"
#include "core/strategy.h"
#include "core/tree_template.h"
#include "value_helpers.h"

static const char templates_json[] =
    "{\"custom_\": {\"priority\": 1, \"filter\": \"custom_.*\","
    "              \"config\": {\"enable_aggressive_starvation\": true,"
    "                          \"max_running_operation_count\": 21,"
    "                          \"integral_guarantees\": {\"smooth_period\": 5000}}},"
    " \"pool\": {\"priority\": 70, \"filter\": \".*pool.*\","
    "           \"config\": {\"max_running_operation_count\": 93,"
    "                       \"max_running_operation_count_per_pool\": 70,"
    "                       \"integral_guarantees\": {\"pool_capacity_saturation_period\": 7000}}},"
    " \"exact\": {\"priority\": 5, \"filter\": \"pool\", \"config\": {\"max_operation_count\": 9}},"
    " \"none\": {\"priority\": 1000, \"filter\": \".*not_matched.*\","
    "           \"config\": {\"max_running_operation_count\": 88888}}}";

static void test_compile_matches_whole_names_by_priority(void **state)
{
    (void)state;
    struct ps_value map = json(templates_json), out;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_tree_templates_check(&map, &err), 0);
    assert_int_equal(ps_tree_templates_compile(&map, "custom_pool_tree", &out), 0);
    struct ps_value want = json("{\"enable_aggressive_starvation\": true, \"max_running_operation_count\": 93,"
                                " \"integral_guarantees\": {\"smooth_period\": 5000,"
                                "                          \"pool_capacity_saturation_period\": 7000},"
                                " \"max_running_operation_count_per_pool\": 70}");
    assert_true(ps_value_equal(&out, &want));   /* "exact" needs the whole name */
    ps_value_release(&out);
    ps_value_release(&want);
    assert_int_equal(ps_tree_templates_compile(&map, "pool", &out), 0);
    assert_non_null(ps_value_find(&out, "max_operation_count"));
    ps_value_release(&out);
    assert_int_equal(ps_tree_templates_compile(&map, "physical", &out), 0);
    assert_int_equal(out.count, 0);
    ps_value_release(&out);
    ps_value_release(&map);
}

static void test_check_refuses_with_reasons(void **state)
{
    (void)state;
    static const struct {
        const char *map;
        const char *msg;
    } cases[] = {
        {"{\"pool\": {\"priority\": 70, \"filter\": \"a\"}, \"custom_\": {\"priority\": 70, \"filter\": \"b\"}}",
         "\"template_pool_tree_config_map\" has equal priority for templates \"pool\" and \"custom_\""},
        {"{\"t\": {\"priority\": 1, \"filter\": \"(\"}}", "template_pool_tree_config_map/t/filter"},
        {"{\"t\": {\"priority\": 1.5}}", "template_pool_tree_config_map/t/priority: must be an integer"},
        {"{\"t\": {\"priority\": 1, \"fliter\": \"a\"}}", "template_pool_tree_config_map/t/fliter: unknown key"},
        {"{\"t\": {\"priority\": 1, \"config\": {\"max_operation_count\": 0}}}",
         "template_pool_tree_config_map/t/config: max_operation_count"},
        {"[1]", "template_pool_tree_config_map: must be a map"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ps_value map = json(cases[i].map);
        struct ps_error err;
        ps_error_init(&err);
        if (ps_tree_templates_check(&map, &err) != PS_EINVAL || !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: %s", i, err.msg);
        ps_value_release(&map);
    }
}

static int set_templates(struct ps_strategy *s, const char *map_json, struct ps_error *err)
{
    ps_error_init(err);
    struct ps_value map = json(map_json);
    int rc = ps_strategy_set_tree_templates(s, &map, err);
    ps_value_release(&map);
    return rc;
}

/* The tree's own keys win over every template; a key it lets go of falls back to the
 * templates'; trees added later get the templates too. */
static void test_trees_under_templates(void **state)
{
    (void)state;
    struct ps_error err;
    struct ps_strategy *s = ps_strategy_new();
    assert_int_equal(set_templates(s, templates_json, &err), 0);
    struct ps_value cfg = json("{\"max_running_operation_count_per_pool\": 180}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_add_tree(s, "custom_pool_tree", &cfg, &err), 0);
    ps_value_release(&cfg);
    struct ps_pool_tree *tree = ps_strategy_find_tree(s, "custom_pool_tree");
    const struct ps_tree_config *c = ps_pool_tree_config(tree);
    assert_int_equal(c->max_running_operation_count_per_pool, 180);
    assert_int_equal(c->max_running_operation_count, 93);
    assert_true(c->enable_aggressive_starvation);
    assert_int_equal(c->integral_guarantees.smooth_period_ms, 5000);
    /* the tree's explicit config is what was set on it */
    assert_int_equal(ps_pool_tree_explicit_config(tree)->count, 1);

    struct ps_value v = ps_value_null();
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_config(tree, "max_running_operation_count_per_pool", &v, &err), 0);
    assert_int_equal(ps_pool_tree_config(tree)->max_running_operation_count_per_pool, 70);
    assert_int_equal(ps_pool_tree_explicit_config(tree)->count, 0);
    v = ps_value_number(20);
    assert_int_equal(ps_pool_tree_set_config(tree, "max_running_operation_count", &v, &err), 0);
    assert_int_equal(ps_pool_tree_config(tree)->max_running_operation_count, 20);

    /* new templates reach the tree; its own key stays */
    assert_int_equal(set_templates(s, "{\"all\": {\"priority\": 0, \"filter\": \".*\","
                                      " \"config\": {\"max_running_operation_count\": 30,"
                                      "             \"max_operation_count_per_pool\": 40}}}", &err), 0);
    c = ps_pool_tree_config(tree);
    assert_int_equal(c->max_running_operation_count, 20);
    assert_int_equal(c->max_operation_count_per_pool, 40);
    assert_int_equal(c->max_running_operation_count_per_pool, 50);
    assert_false(c->enable_aggressive_starvation);
    ps_strategy_free(s);
}

/* The scheduler config's tree defaults (ps_strategy_set_tree_defaults): beneath the templates
 * and the tree's own keys, for the trees present and those added later; a bad value is refused
 * and changes nothing. */
static void test_tree_defaults_beneath_templates(void **state)
{
    (void)state;
    struct ps_error err;
    struct ps_strategy *s = ps_strategy_new();
    struct ps_value cfg = json("{}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_add_tree(s, "a", &cfg, &err), 0);
    struct ps_value d = json("{\"allowed_node_resources_overcommit_duration\": 600000,"
                             " \"max_running_operation_count\": 7}");
    assert_int_equal(ps_strategy_set_tree_defaults(s, &d, &err), 0);
    ps_value_release(&d);
    struct ps_pool_tree *a = ps_strategy_find_tree(s, "a");
    assert_int_equal(ps_pool_tree_config(a)->allowed_node_resources_overcommit_duration_ms, 600000);
    assert_int_equal(ps_pool_tree_explicit_config(a)->count, 0);
    /* a template's key wins over the default, the tree's own over both */
    assert_int_equal(set_templates(s, "{\"all\": {\"priority\": 0, \"filter\": \".*\","
                                      " \"config\": {\"max_running_operation_count\": 30}}}", &err), 0);
    assert_int_equal(ps_pool_tree_config(a)->max_running_operation_count, 30);
    assert_int_equal(ps_pool_tree_config(a)->allowed_node_resources_overcommit_duration_ms, 600000);
    struct ps_value own = json("{\"allowed_node_resources_overcommit_duration\": 1000}");
    assert_int_equal(ps_strategy_add_tree(s, "b", &own, &err), 0);
    ps_value_release(&own);
    assert_int_equal(ps_pool_tree_config(ps_strategy_find_tree(s, "b"))->allowed_node_resources_overcommit_duration_ms,
                     1000);
    d = json("{\"allowed_node_resources_overcommit_duration\": -1}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_set_tree_defaults(s, &d, &err), PS_EINVAL);
    ps_value_release(&d);
    assert_int_equal(ps_pool_tree_config(a)->allowed_node_resources_overcommit_duration_ms, 600000);
    ps_value_release(&cfg);
    ps_strategy_free(s);
}

/* Templates a tree cannot take are refused for every tree: the trees already changed go back. */
static void test_refused_templates_change_no_tree(void **state)
{
    (void)state;
    struct ps_error err;
    struct ps_strategy *s = ps_strategy_new();
    ps_error_init(&err);
    assert_int_equal(ps_strategy_add_tree(s, "a", NULL, &err), 0);
    assert_int_equal(ps_strategy_add_tree(s, "b", NULL, &err), 0);
    struct ps_value attrs = json("{\"strong_guarantee_resources\": {\"cpu\": 1}}");
    assert_int_equal(ps_pool_tree_create_pool(ps_strategy_find_tree(s, "b"), "p", NULL, &attrs, &err), 0);
    ps_value_release(&attrs);
    assert_int_equal(set_templates(s, "{\"t\": {\"priority\": 0, \"filter\": \".*\","
                                      " \"config\": {\"max_operation_count_per_pool\": 7}}}", &err), 0);
    /* main_resource gpu breaks b's pool: refused, a keeps its config */
    assert_int_equal(set_templates(s, "{\"t\": {\"priority\": 0, \"filter\": \".*\","
                                      " \"config\": {\"main_resource\": \"gpu\"}}}", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pool tree \"b\""));
    for (int i = 0; i < 2; i++) {
        const struct ps_tree_config *c = ps_pool_tree_config(ps_strategy_tree_at(s, i));
        assert_int_equal(c->main_resource, PS_RES_CPU);
        assert_int_equal(c->max_operation_count_per_pool, 7);
    }
    struct ps_value want = json("{\"t\": {\"priority\": 0, \"filter\": \".*\","
                                " \"config\": {\"max_operation_count_per_pool\": 7}}}");
    assert_true(ps_value_equal(ps_strategy_tree_templates(s), &want));
    ps_value_release(&want);
    ps_strategy_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_matches_whole_names_by_priority),
        cmocka_unit_test(test_check_refuses_with_reasons),
        cmocka_unit_test(test_trees_under_templates),
        cmocka_unit_test(test_tree_defaults_beneath_templates),
        cmocka_unit_test(test_refused_templates_change_no_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
