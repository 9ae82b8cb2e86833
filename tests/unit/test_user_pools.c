/* The user-to-default-parent-pool map (core/user_pools.h): where new ephemeral pools go, how
 * existing ones follow a changed map, and what is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/strategy.h"
#include "core/user_pools.h"
#include "value_helpers.h"

static struct ps_strategy *setup_strategy(const char *tree_config)
{
    struct ps_strategy *s = ps_strategy_new();
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(tree_config);
    if (ps_strategy_add_tree(s, "physical", &doc, &err) != 0)
        fail_msg("tree: %s", err.msg);
    ps_value_release(&doc);
    ps_strategy_set_default_tree(s, "physical", NULL);
    return s;
}

static void pool(struct ps_strategy *s, const char *name, const char *attrs)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(attrs ? attrs : "{}");
    if (ps_pool_tree_create_pool(ps_strategy_find_tree(s, "physical"), name, NULL, &doc, &err) != 0)
        fail_msg("pool %s: %s", name, err.msg);
    ps_value_release(&doc);
}

static int set_map(struct ps_strategy *s, const char *map, struct ps_error *err)
{
    ps_error_init(err);
    struct ps_value doc = json(map);
    int rc = ps_strategy_set_user_default_pools(s, &doc, true, err);
    ps_value_release(&doc);
    return rc;
}

static void start(struct ps_strategy *s, const char *id, const char *user, const char *spec)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(spec ? spec : "{}");
    if (ps_strategy_start_operation(s, id, user, 0, &doc, NULL, &err) != 0)
        fail_msg("operation %s: %s", id, err.msg);
    ps_value_release(&doc);
}

static const char *parent_of(struct ps_strategy *s, const char *name)
{
    struct ps_pool *p = ps_pool_tree_find_pool(ps_strategy_find_tree(s, "physical"), name);
    return p && p->parent ? p->parent->name : "(none)";
}

/* upstream: test_ephemeral_pool_is_created_in_user_default_parent_pool and
 * test_nonexistent_pools_are_created_in_default_user_pool, in the engine. */
static void test_new_ephemeral_pools_go_under_the_users_pool(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_strategy(
        "{\"use_user_default_parent_pool_map\": true, \"max_ephemeral_pools_per_user\": 2}");
    pool(s, "default_for_u", NULL);
    struct ps_error err;
    assert_int_equal(set_map(s, "{\"u\": \"default_for_u\"}", &err), 0);
    start(s, "op1", "u", NULL);
    start(s, "op2", "u", "{\"pool\": \"nonexistent\"}");
    start(s, "op3", "v", NULL);   /* a user the map does not name */
    assert_string_equal(parent_of(s, "u"), "default_for_u");
    assert_string_equal(parent_of(s, "nonexistent"), "default_for_u");
    assert_string_equal(parent_of(s, "v"), "<Root>");
    struct ps_pool *p = ps_pool_tree_find_pool(ps_strategy_find_tree(s, "physical"), "default_for_u");
    assert_int_equal(p->operation_count, 2);
    ps_strategy_free(s);
}

static void test_the_option_off_ignores_the_map(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_strategy("{}");
    pool(s, "default_for_u", NULL);
    struct ps_error err;
    assert_int_equal(set_map(s, "{\"u\": \"default_for_u\", \"w\": \"nowhere\"}", &err), 0);
    start(s, "op1", "u", NULL);
    assert_string_equal(parent_of(s, "u"), "<Root>");
    ps_strategy_free(s);
}

/* upstream: test_change_in_user_default_parent_pool_map_changes_parent_of_existing_ephemeral_pool;
 * the pool takes its new parent's ephemeral_subpool_config. */
static void test_a_new_map_moves_existing_ephemeral_pools(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_strategy("{\"use_user_default_parent_pool_map\": true}");
    pool(s, "default_for_u",
         "{\"ephemeral_subpool_config\": {\"mode\": \"fifo\", \"max_operation_count\": 7}}");
    start(s, "op1", "u", NULL);
    assert_string_equal(parent_of(s, "u"), "<Root>");
    struct ps_error err;
    assert_int_equal(set_map(s, "{\"u\": \"default_for_u\"}", &err), 0);
    assert_string_equal(parent_of(s, "u"), "default_for_u");
    struct ps_pool_tree *tree = ps_strategy_find_tree(s, "physical");
    struct ps_pool *u = ps_pool_tree_find_pool(tree, "u");
    assert_int_equal(u->config.mode, PS_MODE_FIFO);
    assert_int_equal(ps_pool_max_operations(u), 7);
    assert_int_equal(ps_pool_tree_find_pool(tree, "default_for_u")->operation_count, 1);
    assert_int_equal(ps_pool_tree_root(tree)->operation_count, 1);
    /* a user the map no longer names keeps its pool where it is, as upstream */
    assert_int_equal(set_map(s, "{}", &err), 0);
    assert_string_equal(parent_of(s, "u"), "default_for_u");
    ps_strategy_free(s);
}

/* A fifo pool is never a default parent: the tree's default_parent_pool takes over. */
static void test_a_fifo_pool_falls_back_to_the_default_parent(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_strategy(
        "{\"use_user_default_parent_pool_map\": true, \"default_parent_pool\": \"research\"}");
    pool(s, "research", NULL);
    pool(s, "queue", "{\"mode\": \"fifo\"}");
    struct ps_error err;
    assert_int_equal(set_map(s, "{\"u\": \"queue\"}", &err), 0);
    start(s, "op1", "u", NULL);
    assert_string_equal(parent_of(s, "u"), "research");
    ps_strategy_free(s);
}

static void test_bad_maps_are_refused_and_change_nothing(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_strategy("{\"use_user_default_parent_pool_map\": true}");
    pool(s, "a", NULL);
    struct ps_error err;
    assert_int_equal(set_map(s, "{\"u\": \"a\"}", &err), 0);
    assert_int_equal(set_map(s, "{\"u\": \"a\", \"v\": \"missing\"}", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "user_to_default_pool/v"));
    assert_non_null(strstr(err.msg, "\"missing\" is missing in pool tree \"physical\""));
    assert_null(ps_strategy_user_default_pool(s, "v"));
    assert_string_equal(ps_strategy_user_default_pool(s, "u"), "a");
    assert_int_equal(set_map(s, "[\"a\"]", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "must be a map"));
    assert_int_equal(set_map(s, "{\"u\": 5}", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "user_to_default_pool/u: must be a pool name"));
    assert_int_equal(set_map(s, "{\"u\": \"a$b\"}", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "user_to_default_pool/u"));
    assert_string_equal(ps_strategy_user_default_pool(s, "u"), "a");
    /* an ephemeral pool is no default parent either */
    start(s, "op1", "w", NULL);
    assert_int_equal(set_map(s, "{\"u\": \"w\"}", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "\"w\" is ephemeral"));
    /* null clears */
    ps_error_init(&err);
    struct ps_value null = ps_value_null();
    assert_int_equal(ps_strategy_set_user_default_pools(s, &null, true, &err), 0);
    assert_null(ps_strategy_user_default_pool(s, "u"));
    ps_strategy_free(s);
}

/* Turning the option on checks the current map against the tree and moves existing pools. */
static void test_turning_the_option_on(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_strategy("{}");
    pool(s, "a", NULL);
    struct ps_error err;
    assert_int_equal(set_map(s, "{\"u\": \"a\", \"v\": \"b\"}", &err), 0);
    start(s, "op1", "u", NULL);
    struct ps_pool_tree *tree = ps_strategy_find_tree(s, "physical");
    struct ps_value on = ps_value_bool(true);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_config(tree, "use_user_default_parent_pool_map", &on, &err),
                     PS_EINVAL);
    assert_non_null(strstr(err.msg, "use_user_default_parent_pool_map"));
    assert_non_null(strstr(err.msg, "\"b\" is missing"));
    assert_false(ps_pool_tree_config(tree)->use_user_default_parent_pool_map);
    assert_string_equal(parent_of(s, "u"), "<Root>");
    pool(s, "b", NULL);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_config(tree, "use_user_default_parent_pool_map", &on, &err), 0);
    assert_string_equal(parent_of(s, "u"), "a");
    ps_strategy_free(s);
}

/* Moving an ephemeral pool away from a pool at its running limit lets its pending operation run. */
static void test_a_move_may_start_pending_operations(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_strategy(
        "{\"use_user_default_parent_pool_map\": true, \"default_parent_pool\": \"busy\"}");
    pool(s, "busy", "{\"max_running_operation_count\": 1}");
    pool(s, "free", NULL);
    start(s, "op1", "u", "{\"pool\": \"busy\"}");
    start(s, "op2", "v", NULL);
    assert_string_equal(parent_of(s, "v"), "busy");
    assert_int_equal(ps_strategy_find_operation(s, "op2")->state, PS_OP_PENDING);
    struct ps_error err;
    assert_int_equal(set_map(s, "{\"v\": \"free\"}", &err), 0);
    assert_string_equal(parent_of(s, "v"), "free");
    assert_int_equal(ps_strategy_find_operation(s, "op2")->state, PS_OP_RUNNING);
    assert_int_equal(ps_strategy_activated_count(s), 1);
    ps_strategy_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_ephemeral_pools_go_under_the_users_pool),
        cmocka_unit_test(test_the_option_off_ignores_the_map),
        cmocka_unit_test(test_a_new_map_moves_existing_ephemeral_pools),
        cmocka_unit_test(test_a_fifo_pool_falls_back_to_the_default_parent),
        cmocka_unit_test(test_bad_maps_are_refused_and_change_nothing),
        cmocka_unit_test(test_turning_the_option_on),
        cmocka_unit_test(test_a_move_may_start_pending_operations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
