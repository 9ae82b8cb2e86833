/* Lightweight operations (pool_tree.h, ps_pool_lightweight_enabled): counts at every level,
 * the running limit they bypass, and what a config change, an operation move and a pool move do. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/strategy.h"
#include "value_helpers.h"

/* upstream's pools: root {5 operations, 2 running} with pool and lightweight_pool. */
static struct ps_strategy *setup_pools(void)
{
    struct ps_strategy *s = ps_strategy_new();
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_strategy_add_tree(s, "t", NULL, &err), 0);
    ps_strategy_set_default_tree(s, "t", NULL);
    struct ps_pool_tree *tree = ps_strategy_find_tree(s, "t");
    struct ps_value a = json("{\"max_operation_count\": 5, \"max_running_operation_count\": 2}");
    struct ps_value b = json("{}");
    struct ps_value c = json("{\"mode\": \"fifo\", \"enable_lightweight_operations\": true}");
    assert_int_equal(ps_pool_tree_create_pool(tree, "root", NULL, &a, &err), 0);
    assert_int_equal(ps_pool_tree_create_pool(tree, "pool", "root", &b, &err), 0);
    assert_int_equal(ps_pool_tree_create_pool(tree, "lw", "root", &c, &err), 0);
    ps_value_release(&a);
    ps_value_release(&b);
    ps_value_release(&c);
    return s;
}

static int start(struct ps_strategy *s, const char *id, const char *pool)
{
    struct ps_error err;
    ps_error_init(&err);
    char spec[128];
    snprintf(spec, sizeof spec, "{\"pool\": \"%s\"}", pool);
    struct ps_value doc = json(spec);
    int rc = ps_strategy_start_operation(s, id, "u", 0, &doc, NULL, &err);
    ps_value_release(&doc);
    return rc;
}

static void counts(struct ps_strategy *s, const char *name, int total, int running, int lw)
{
    struct ps_pool *p = ps_pool_tree_find_pool(ps_strategy_find_tree(s, "t"), name);
    assert_non_null(p);
    if (p->operation_count != total || p->running_operation_count != running ||
        p->lightweight_running_operation_count != lw)
        fail_msg("%s: (%d, %d, %d), want (%d, %d, %d)", name, p->operation_count,
                 p->running_operation_count, p->lightweight_running_operation_count, total,
                 running, lw);
}

static bool is_lightweight(struct ps_strategy *s, const char *id)
{
    struct ps_tree_op *op = ps_pool_tree_find_operation(ps_strategy_find_tree(s, "t"), id);
    return op->running && op->lightweight;
}

static enum ps_operation_state state_of(struct ps_strategy *s, const char *id)
{
    return ps_strategy_find_operation(s, id)->state;
}

static void set_attr(struct ps_strategy *s, const char *pool, const char *key, struct ps_value v)
{
    struct ps_error err;
    ps_error_init(&err);
    if (ps_pool_tree_set_pool_attr(ps_strategy_find_tree(s, "t"), pool, key, &v, &err) != 0)
        fail_msg("%s/@%s: %s", pool, key, err.msg);
    ps_value_release(&v);
}

static int move_op(struct ps_strategy *s, const char *id, const char *pool)
{
    struct ps_error err;
    ps_error_init(&err);
    char params[128];
    snprintf(params, sizeof params, "{\"pool\": \"%s\"}", pool);
    struct ps_value doc = json(params);
    int rc = ps_strategy_update_operation(s, id, &doc, &err);
    ps_value_release(&doc);
    return rc;
}

static void test_lightweight_operations_bypass_the_running_limit(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_pools();
    assert_int_equal(start(s, "b", "pool"), 0);
    const char *ids[] = {"l1", "l2", "l3", "l4"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(start(s, ids[i], "lw"), 0);
        assert_int_equal(state_of(s, ids[i]), PS_OP_RUNNING);
        assert_true(is_lightweight(s, ids[i]));
    }
    assert_false(is_lightweight(s, "b"));
    assert_int_equal(start(s, "sixth", "lw"), PS_ELIMIT);   /* max_operation_count still counts */
    counts(s, "pool", 1, 1, 0);
    counts(s, "lw", 4, 0, 4);
    counts(s, "root", 5, 1, 4);
    counts(s, "<Root>", 5, 1, 4);
    ps_strategy_free(s);
}

static void test_config_changes_reaccount(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_pools();
    assert_int_equal(start(s, "l1", "lw"), 0);
    assert_int_equal(start(s, "l2", "lw"), 0);
    assert_int_equal(start(s, "l3", "lw"), 0);
    assert_int_equal(start(s, "p1", "pool"), 0);
    assert_int_equal(start(s, "p2", "pool"), 0);
    counts(s, "root", 5, 2, 3);
    /* off: counted as regular again, over root's limit of 2 */
    set_attr(s, "lw", "enable_lightweight_operations", ps_value_bool(false));
    counts(s, "lw", 3, 3, 0);
    counts(s, "root", 5, 5, 0);
    assert_false(is_lightweight(s, "l1"));
    /* enabled but not fifo: not effective */
    set_attr(s, "lw", "mode", ps_value_string("fair_share"));
    set_attr(s, "lw", "enable_lightweight_operations", ps_value_bool(true));
    counts(s, "lw", 3, 3, 0);
    set_attr(s, "lw", "mode", ps_value_string("fifo"));
    counts(s, "lw", 3, 0, 3);
    counts(s, "root", 5, 2, 3);
    assert_true(is_lightweight(s, "l1"));
    ps_strategy_free(s);
}

static void test_pending_operations_run_when_their_pool_turns_lightweight(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_pools();
    assert_int_equal(start(s, "r1", "pool"), 0);
    assert_int_equal(start(s, "r2", "pool"), 0);
    assert_int_equal(start(s, "q1", "pool"), 0);
    assert_int_equal(start(s, "q2", "pool"), 0);
    assert_int_equal(state_of(s, "q1"), PS_OP_PENDING);
    /* a pending operation moved into a lightweight pool runs, whatever root's limit */
    assert_int_equal(move_op(s, "q1", "lw"), 0);
    assert_int_equal(state_of(s, "q1"), PS_OP_RUNNING);
    assert_true(is_lightweight(s, "q1"));
    counts(s, "pool", 3, 2, 0);
    set_attr(s, "pool", "mode", ps_value_string("fifo"));
    set_attr(s, "pool", "enable_lightweight_operations", ps_value_bool(true));
    assert_int_equal(state_of(s, "q2"), PS_OP_RUNNING);
    assert_true(is_lightweight(s, "q2"));
    counts(s, "pool", 3, 0, 3);
    counts(s, "root", 4, 0, 4);
    ps_strategy_free(s);
}

static void test_moves(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_pools();
    assert_int_equal(start(s, "l1", "lw"), 0);
    assert_int_equal(start(s, "l2", "lw"), 0);
    assert_int_equal(start(s, "l3", "lw"), 0);
    assert_int_equal(move_op(s, "l1", "pool"), 0);
    assert_int_equal(move_op(s, "l2", "pool"), 0);
    assert_false(is_lightweight(s, "l1"));
    counts(s, "root", 3, 2, 1);
    /* a lightweight operation does not count as running in root: root's limit refuses it */
    assert_int_equal(move_op(s, "l3", "pool"), PS_ELIMIT);
    /* moving the pool moves its lightweight count along */
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_move_pool(ps_strategy_find_tree(s, "t"), "lw", "pool", &err), 0);
    counts(s, "pool", 3, 2, 1);
    counts(s, "root", 3, 2, 1);
    assert_int_equal(ps_pool_tree_move_pool(ps_strategy_find_tree(s, "t"), "lw", "<Root>", &err), 0);
    counts(s, "pool", 2, 2, 0);
    counts(s, "root", 2, 2, 0);
    counts(s, "<Root>", 3, 2, 1);
    /* finishing a lightweight operation takes it off every level */
    assert_int_equal(ps_strategy_finish_operation(s, "l3", PS_OP_COMPLETED, 1, &err), 0);
    counts(s, "<Root>", 2, 2, 0);
    counts(s, "lw", 0, 0, 0);
    ps_strategy_free(s);
}

/* enable_lightweight_operations may come from the pool's config preset (upstream's
 * TPoolPresetConfig has it), as the other preset keys: the pool's own value wins. */
static void test_from_a_preset(void **state)
{
    (void)state;
    struct ps_strategy *s = setup_pools();
    struct ps_pool_tree *tree = ps_strategy_find_tree(s, "t");
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value presets = json("{\"lw\": {\"enable_lightweight_operations\": true}}");
    assert_int_equal(ps_pool_tree_set_config(tree, "pool_config_presets", &presets, &err), 0);
    struct ps_value c = json("{\"mode\": \"fifo\", \"config_preset\": \"lw\"}");
    assert_int_equal(ps_pool_tree_create_pool(tree, "by_preset", "root", &c, &err), 0);
    assert_int_equal(start(s, "a", "by_preset"), 0);
    assert_true(is_lightweight(s, "a"));
    counts(s, "by_preset", 1, 0, 1);
    /* an explicit false on the pool overrides the preset */
    struct ps_value off = ps_value_bool(false);
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "by_preset", "enable_lightweight_operations",
                                                &off, &err), 0);
    assert_false(is_lightweight(s, "a"));
    counts(s, "by_preset", 1, 1, 0);
    ps_value_release(&presets);
    ps_value_release(&c);
    ps_strategy_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lightweight_operations_bypass_the_running_limit),
        cmocka_unit_test(test_config_changes_reaccount),
        cmocka_unit_test(test_pending_operations_run_when_their_pool_turns_lightweight),
        cmocka_unit_test(test_moves),
        cmocka_unit_test(test_from_a_preset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
