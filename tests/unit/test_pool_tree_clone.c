/* The dry run's copy of a tree (pool_tree.h, ps_pool_tree_clone_state): it carries the
 * operations and nodes of the original, changes to it leave the original alone, and the
 * borrowed nodes stay the original's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/fair_share.h"
#include "core/nodes.h"
#include "core/operation.h"
#include "core/pool_tree.h"
#include "core/tree_fs.h"
#include "value_helpers.h"

static const char *const POOLS = "{\"pools\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}";

static struct ps_tree_op *start(struct ps_pool_tree *tree, const char *id, const char *pool)
{
    struct ps_tree_op_settings s;
    memset(&s, 0, sizeof s);
    s.pool = pool;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_tree_op *op = NULL;
    if (ps_pool_tree_add_operation(tree, id, "user", 1, &s, &op, &err) != 0)
        fail_msg("start %s: %s", id, err.msg);
    op->demand.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 8);
    op->demand.v[PS_RES_USER_SLOTS] = 8;
    op->pending_job_count = 8;
    return op;
}

static double fair_share(struct ps_pool_tree *tree, const char *pool)
{
    struct ps_tree_fs fs;
    ps_tree_fs_init(&fs);
    struct ps_fs_update *u = ps_fs_update_new();
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_build_fs(tree, &fs, 1000, &err), 0);
    assert_int_equal(ps_fs_update_run(u, fs.elems, fs.count, fs.fs_pools, fs.pool_count,
                                      &fs.options, &fs.input, &err), 0);
    assert_int_equal(ps_pool_tree_apply_fs(tree, &fs, &err), 0);
    ps_fs_update_free(u);
    ps_tree_fs_release(&fs);
    return ps_pool_tree_find_pool(tree, pool)->dynamic.fair_share_ratio;
}

static struct ps_pool_tree *copy_of(struct ps_pool_tree *tree)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(POOLS);
    struct ps_pool_tree *copy = ps_pool_tree_new(ps_pool_tree_name(tree), &doc, &err);
    ps_value_release(&doc);
    assert_non_null(copy);
    if (ps_pool_tree_clone_state(copy, tree, &err) != 0)
        fail_msg("clone: %s", err.msg);
    return copy;
}

static void test_copy_changes_alone(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(POOLS);
    struct ps_pool_tree *tree = ps_pool_tree_new("physical", &doc, &err);
    ps_value_release(&doc);
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 4);
    r.v[PS_RES_USER_SLOTS] = 8;
    r.v[PS_RES_MEMORY] = 1 << 30;
    const char *tags[1] = {"ssd"};
    struct ps_node *n = ps_node_new("n1", tags, 1, &r, &err);
    assert_int_equal(ps_pool_tree_add_node(tree, n, &err), 0);
    start(tree, "op-a", "a");
    start(tree, "op-b", "b");
    assert_true(fabs(fair_share(tree, "a") - 0.5) < 1e-6);

    struct ps_pool_tree *copy = copy_of(tree);
    assert_int_equal(ps_pool_tree_operation_count(copy), 2);
    struct ps_tree_op *ca = ps_pool_tree_find_operation(copy, "op-a");
    assert_non_null(ca);
    assert_string_equal(ca->pool->name, "a");
    assert_true(ca->running);
    assert_int_equal(ca->pending_job_count, 8);
    assert_true(ps_resources_equal(ps_pool_tree_total_resources(copy),
                                   ps_pool_tree_total_resources(tree)));
    assert_ptr_equal(n->tree, tree);   /* borrowed, not taken */

    struct ps_value w = json("3");
    assert_int_equal(ps_pool_tree_set_pool_attr(copy, "a", "weight", &w, &err), 0);
    ps_value_release(&w);
    assert_true(fabs(fair_share(copy, "a") - 0.75) < 1e-6);
    assert_true(fabs(fair_share(copy, "b") - 0.25) < 1e-6);
    assert_false(ps_pool_tree_find_pool(tree, "a")->config.weight.set);
    assert_true(fabs(fair_share(tree, "a") - 0.5) < 1e-6);

    /* a nodes_filter on the standalone copy never takes n1 from the original (the copy lets
     * go only of its own nodes) */
    struct ps_value f = json("\"gpu\"");
    assert_int_equal(ps_pool_tree_set_config(copy, "nodes_filter", &f, &err), 0);
    ps_value_release(&f);
    assert_ptr_equal(n->tree, tree);
    ps_pool_tree_reclaim_nodes(tree);
    assert_ptr_equal(n->tree, tree);
    ps_pool_tree_clone_free(copy);
    assert_ptr_equal(n->tree, tree);
    assert_int_equal(ps_pool_tree_node_count(tree), 1);

    /* only a fresh tree takes a copy */
    struct ps_pool_tree *twice = copy_of(tree);
    assert_int_not_equal(ps_pool_tree_clone_state(twice, tree, &err), 0);
    ps_pool_tree_clone_free(twice);

    ps_pool_tree_free(tree);
    ps_node_free(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_copy_changes_alone)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
