#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/nodes.h"
#include "core/strategy.h"
#include "value_helpers.h"

static struct ps_resources res(int slots, double cpu, int64_t memory)
{
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_USER_SLOTS] = slots;
    r.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, cpu);
    r.v[PS_RES_MEMORY] = memory;
    return r;
}

static void add_tree(struct ps_strategy *s, const char *name, const char *config)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(config ? config : "{}");
    if (ps_strategy_add_tree(s, name, &doc, &err) != 0)
        fail_msg("tree %s: %s", name, err.msg);
    ps_value_release(&doc);
}

static int node(struct ps_strategy *s, const char *id, const char *tags, struct ps_resources limits,
                struct ps_error *err)
{
    /* tags: space-separated */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", tags);
    const char *list[8];
    int n = 0;
    for (char *t = strtok(buf, " "); t && n < 8; t = strtok(NULL, " "))
        list[n++] = t;
    ps_error_init(err);
    return ps_strategy_register_node(s, id, list, n, &limits, err);
}

static void test_nodes_join_one_tree(void **state)
{
    (void)state;
    struct ps_strategy *s = ps_strategy_new();
    add_tree(s, "physical", "{\"nodes_filter\": \"internal\"}");
    add_tree(s, "gpu", "{\"nodes_filter\": \"gpu & !internal\"}");
    struct ps_error err;
    assert_int_equal(node(s, "n1", "internal ssd", res(10, 10, 100), &err), 0);
    assert_int_equal(node(s, "n2", "internal", res(10, 20, 100), &err), 0);
    assert_int_equal(node(s, "g1", "gpu", res(4, 8, 50), &err), 0);
    assert_int_equal(node(s, "lonely", "external", res(1, 1, 1), &err), 0);
    struct ps_pool_tree *physical = ps_strategy_find_tree(s, "physical");
    struct ps_pool_tree *gpu = ps_strategy_find_tree(s, "gpu");
    assert_ptr_equal(ps_strategy_find_node(s, "n1")->tree, physical);
    assert_ptr_equal(ps_strategy_find_node(s, "g1")->tree, gpu);
    /* a node matching no tree is accepted but belongs to none */
    assert_null(ps_strategy_find_node(s, "lonely")->tree);
    assert_int_equal(ps_strategy_node_count(s), 4);
    struct ps_resources total = ps_pool_tree_total_resources(physical);
    assert_int_equal(total.v[PS_RES_CPU], 3000);
    assert_int_equal(total.v[PS_RES_USER_SLOTS], 20);
    assert_int_equal(ps_pool_tree_total_resources(gpu).v[PS_RES_CPU], 800);

    /* overlapping trees: a node matching both is refused, naming both */
    add_tree(s, "ssd", "{\"nodes_filter\": \"ssd2\"}");
    assert_int_equal(node(s, "bad", "internal ssd2", res(1, 1, 1), &err), PS_EINVAL);
    assert_string_equal(err.msg, "node \"bad\" matches the nodes_filter of two pool trees, \"physical\" and \"ssd\", "
                                 "and cannot be registered");
    assert_null(ps_strategy_find_node(s, "bad"));
    assert_int_equal(ps_strategy_node_count(s), 4);

    /* a tree (or a filter change) that would make a registered node match two trees */
    struct ps_value doc = json("{\"nodes_filter\": \"ssd\"}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_add_tree(s, "fast", &doc, &err), PS_EINVAL);
    assert_string_equal(err.msg, "node \"n1\" would belong to two pool trees, \"physical\" and \"fast\": their "
                                 "nodes_filter must not overlap");
    assert_null(ps_strategy_find_tree(s, "fast"));
    struct ps_value f = ps_value_string("ssd | external");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_config(ps_strategy_find_tree(s, "ssd"), "nodes_filter", &f, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "node \"n1\" would belong to two pool trees"));
    assert_string_equal(ps_pool_tree_config(ps_strategy_find_tree(s, "ssd"))->nodes_filter, "ssd2");
    ps_value_release(&f);
    /* a filter change that picks up a lonely node and releases others */
    f = ps_value_string("external");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_config(ps_strategy_find_tree(s, "ssd"), "nodes_filter", &f, &err), 0);
    assert_ptr_equal(ps_strategy_find_node(s, "lonely")->tree, ps_strategy_find_tree(s, "ssd"));
    ps_value_release(&f);
    f = ps_value_string("internal & !ssd");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_config(physical, "nodes_filter", &f, &err), 0);
    assert_null(ps_strategy_find_node(s, "n1")->tree);
    assert_int_equal(ps_pool_tree_total_resources(physical).v[PS_RES_CPU], 2000);
    ps_value_release(&f);

    /* re-registration with new tags moves a node; unregistration removes it */
    assert_int_equal(node(s, "n1", "internal", res(10, 5, 100), &err), 0);
    assert_ptr_equal(ps_strategy_find_node(s, "n1")->tree, physical);
    assert_int_equal(ps_pool_tree_total_resources(physical).v[PS_RES_CPU], 2500);
    assert_int_equal(ps_strategy_node_count(s), 4);
    ps_error_init(&err);
    assert_int_equal(ps_strategy_unregister_node(s, "n2", &err), 0);
    assert_int_equal(ps_pool_tree_total_resources(physical).v[PS_RES_CPU], 500);
    assert_int_equal(ps_strategy_unregister_node(s, "n2", &err), PS_ENOENT);
    ps_value_release(&doc);
    ps_strategy_free(s);
}

static void test_filter_limits(void **state)
{
    (void)state;
    struct ps_strategy *s = ps_strategy_new();
    add_tree(s, "t", "{\"nodes_filter\": \"dc1\"}");
    struct ps_error err;
    node(s, "a", "dc1 ssd", res(1, 10, 100), &err);
    node(s, "b", "dc1 ssd gpu", res(2, 20, 200), &err);
    node(s, "c", "dc1", res(4, 40, 400), &err);
    node(s, "d", "dc2 ssd", res(8, 80, 800), &err);   /* not in the tree */
    struct ps_pool_tree *t = ps_strategy_find_tree(s, "t");
    struct ps_formula *f = NULL;
    assert_int_equal(ps_formula_parse("ssd & !gpu", &f, &err), 0);
    struct ps_resources limits = ps_pool_tree_filter_limits(t, f);
    assert_int_equal(limits.v[PS_RES_CPU], 1000);
    assert_int_equal(limits.v[PS_RES_MEMORY], 100);
    assert_int_equal(ps_pool_tree_filter_node_count(t, f), 1);
    /* recomputed when nodes change */
    node(s, "e", "dc1 ssd", res(1, 5, 10), &err);
    limits = ps_pool_tree_filter_limits(t, f);
    assert_int_equal(limits.v[PS_RES_CPU], 1500);
    assert_int_equal(ps_pool_tree_filter_node_count(t, f), 2);
    ps_formula_free(f);
    assert_int_equal(ps_formula_parse("ssd", &f, &err), 0);
    assert_int_equal(ps_pool_tree_filter_limits(t, f).v[PS_RES_USER_SLOTS], 4);
    ps_formula_free(f);
    assert_int_equal(ps_formula_parse("nothing", &f, &err), 0);
    assert_true(ps_resources_is_zero(ps_pool_tree_filter_limits(t, f)));
    assert_int_equal(ps_pool_tree_filter_node_count(t, f), 0);
    ps_formula_free(f);
    /* no filter: unlimited */
    assert_int_equal(ps_pool_tree_filter_limits(t, NULL).v[PS_RES_CPU], PS_RES_INFINITE);
    assert_int_equal(ps_pool_tree_total_resources(t).v[PS_RES_CPU], 7500);
    ps_strategy_free(s);
}

/* The componentwise maximum of the limits of a filter's nodes is cached with the limits and
 * recomputed after every node change: added, re-registered, changed in place, unregistered. */
static void test_filter_max_limits(void **state)
{
    (void)state;
    struct ps_strategy *s = ps_strategy_new();
    add_tree(s, "t", "{\"nodes_filter\": \"dc1\"}");
    struct ps_error err;
    node(s, "a", "dc1 ssd", res(1, 30, 100), &err);
    node(s, "b", "dc1 ssd gpu", res(2, 20, 200), &err);
    node(s, "c", "dc1", res(4, 10, 400), &err);
    node(s, "d", "dc2 ssd", res(8, 80, 800), &err);   /* not in the tree */
    struct ps_pool_tree *t = ps_strategy_find_tree(s, "t");
    struct ps_formula *f = NULL, *none = NULL;
    assert_int_equal(ps_formula_parse("ssd", &f, &err), 0);
    assert_int_equal(ps_formula_parse("nothing", &none, &err), 0);
    struct ps_resources max;
    assert_int_equal(ps_pool_tree_filter_max_limits(t, f, &max), 2);
    assert_true(ps_resources_equal(max, res(2, 30, 200)));
    assert_int_equal(ps_pool_tree_filter_max_limits(t, NULL, &max), 3);
    assert_true(ps_resources_equal(max, res(4, 30, 400)));
    assert_int_equal(ps_pool_tree_filter_max_limits(t, none, &max), 0);
    assert_true(ps_resources_is_zero(max));
    /* a node joins */
    node(s, "e", "dc1 ssd", res(1, 5, 1000), &err);
    assert_int_equal(ps_pool_tree_filter_max_limits(t, f, &max), 3);
    assert_true(ps_resources_equal(max, res(2, 30, 1000)));
    assert_int_equal(ps_pool_tree_filter_max_limits(t, NULL, &max), 4);
    assert_true(ps_resources_equal(max, res(4, 30, 1000)));
    /* changed in place (the simulator's node resources event) */
    ps_strategy_find_node(s, "a")->resource_limits.v[PS_RES_USER_SLOTS] = 16;
    ps_pool_tree_nodes_changed(t);
    assert_int_equal(ps_pool_tree_filter_max_limits(t, f, &max), 3);
    assert_true(ps_resources_equal(max, res(16, 30, 1000)));
    assert_int_equal(ps_pool_tree_filter_max_limits(t, NULL, &max), 4);
    assert_true(ps_resources_equal(max, res(16, 30, 1000)));
    /* re-registered with other limits, then gone */
    node(s, "a", "dc1 ssd", res(1, 1, 1), &err);
    assert_int_equal(ps_pool_tree_filter_max_limits(t, f, &max), 3);
    assert_true(ps_resources_equal(max, res(2, 20, 1000)));
    ps_error_init(&err);
    assert_int_equal(ps_strategy_unregister_node(s, "e", &err), 0);
    assert_int_equal(ps_pool_tree_filter_max_limits(t, f, &max), 2);
    assert_true(ps_resources_equal(max, res(2, 20, 200)));
    assert_int_equal(ps_pool_tree_filter_max_limits(t, NULL, &max), 3);
    assert_true(ps_resources_equal(max, res(4, 20, 400)));
    ps_formula_free(f);
    ps_formula_free(none);
    ps_strategy_free(s);
}

static void test_operations_across_trees(void **state)
{
    (void)state;
    struct ps_strategy *s = ps_strategy_new();
    add_tree(s, "physical", NULL);
    add_tree(s, "gpu", NULL);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json("{\"x\": 1}");
    assert_int_equal(ps_strategy_start_operation(s, "op0", "alice", 0, &doc, NULL, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pool_trees: the spec names no pool trees and there is no default tree");
    ps_value_release(&doc);
    assert_int_equal(ps_strategy_set_default_tree(s, "physical", &err), 0);
    assert_int_equal(ps_strategy_set_default_tree(s, "nope", &err), PS_ENOENT);
    assert_string_equal(ps_strategy_default_tree(s), "physical");

    struct ps_pool_tree *physical = ps_strategy_find_tree(s, "physical");
    struct ps_pool_tree *gpu = ps_strategy_find_tree(s, "gpu");
    ps_error_init(&err);
    doc = json("{\"max_running_operation_count\": 1}");
    assert_int_equal(ps_pool_tree_create_pool(gpu, "gpu_pool", NULL, &doc, &err), 0);
    ps_value_release(&doc);

    /* op1: default tree, user pool */
    struct ps_operation *op1 = NULL;
    ps_error_init(&err);
    assert_int_equal(ps_strategy_start_operation(s, "op1", "alice", 10, NULL, &op1, &err), 0);
    assert_int_equal(op1->state, PS_OP_RUNNING);
    assert_int_equal(op1->tree_count, 1);
    assert_string_equal(op1->tree_names[0], "physical");
    assert_int_equal(ps_strategy_activated_count(s), 1);
    assert_ptr_equal(ps_strategy_activated(s, 0), op1);
    assert_non_null(ps_pool_tree_find_pool(physical, "alice"));

    /* op2 and op3 in both trees with per-tree pools; gpu_pool runs one at a time */
    doc = json("{\"pool\": \"shared\", \"pool_trees\": [\"physical\", \"gpu\"], \"weight\": 2,"
               " \"scheduling_options_per_pool_tree\": {\"gpu\": {\"pool\": \"gpu_pool\", \"weight\": 7}}}");
    struct ps_operation *op2 = NULL, *op3 = NULL;
    ps_error_init(&err);
    assert_int_equal(ps_strategy_start_operation(s, "op2", "bob", 20, &doc, &op2, &err), 0);
    assert_int_equal(op2->state, PS_OP_RUNNING);
    assert_int_equal(ps_strategy_start_operation(s, "op3", "bob", 30, &doc, &op3, &err), 0);
    /* running in physical, pending in gpu: running (it schedules in physical), as upstream
     * enables an operation in each tree separately */
    assert_int_equal(op3->state, PS_OP_RUNNING);
    assert_int_equal(ps_strategy_activated_count(s), 1);
    assert_ptr_equal(ps_strategy_activated(s, 0), op3);
    struct ps_tree_op *m = ps_operation_membership(op3, "physical");
    assert_true(m->running);
    assert_string_equal(m->pool->name, "shared");
    assert_true(m->weight == 2);
    m = ps_operation_membership(op3, "gpu");
    assert_false(m->running);
    assert_string_equal(m->pool->name, "gpu_pool");
    assert_true(m->weight == 7);
    assert_ptr_equal(m->user_data, op3);

    /* a refusal in one tree leaves every tree untouched */
    ps_value_release(&doc);
    doc = json("{\"pool_trees\": [\"physical\", \"gpu\"], \"scheduling_options_per_pool_tree\": "
               "{\"gpu\": {\"pool\": \"<Root>\"}}}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_start_operation(s, "op4", "carol", 40, &doc, NULL, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "forbid_immediate_operations_in_root"));
    assert_null(ps_strategy_find_operation(s, "op4"));
    assert_null(ps_pool_tree_find_pool(physical, "carol"));
    assert_null(ps_pool_tree_find_operation(physical, "op4"));
    ps_value_release(&doc);
    doc = json("{\"pool_trees\": [\"nope\"]}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_start_operation(s, "op4", "carol", 40, &doc, NULL, &err), PS_ENOENT);
    ps_value_release(&doc);
    doc = json("{\"pool_trees\": [\"gpu\", \"gpu\"]}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_start_operation(s, "op4", "carol", 40, &doc, NULL, &err), PS_EINVAL);
    ps_value_release(&doc);
    doc = json("{\"weight\": -1}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_start_operation(s, "op4", "carol", 40, &doc, NULL, &err), PS_EINVAL);
    assert_string_equal(err.msg, "operation \"op4\": spec: weight: must be in [1.4901161193847656e-08, 67108864], got -1");
    ps_value_release(&doc);
    ps_error_init(&err);
    assert_int_equal(ps_strategy_start_operation(s, "op1", "carol", 40, NULL, NULL, &err), PS_EEXIST);

    /* finishing op2 lets op3 run in gpu too; it was running already: no new activation */
    ps_error_init(&err);
    assert_int_equal(ps_strategy_finish_operation(s, "op2", PS_OP_COMPLETED, 50, &err), 0);
    assert_int_equal(op2->state, PS_OP_COMPLETED);
    assert_int_equal(op2->finish_time_ms, 50);
    assert_null(ps_operation_membership(op2, "gpu"));
    assert_int_equal(op3->state, PS_OP_RUNNING);
    assert_true(ps_operation_membership(op3, "gpu")->running);
    assert_int_equal(ps_strategy_activated_count(s), 0);
    assert_int_equal(ps_strategy_finish_operation(s, "op2", PS_OP_FAILED, 60, &err), PS_ESTATE);
    assert_int_equal(ps_strategy_finish_operation(s, "op3", PS_OP_RUNNING, 60, &err), PS_EINVAL);

    /* a tree with an operation that runs only in it cannot be removed (the host aborts such
     * operations first); one that also runs elsewhere loses the tree and keeps running */
    ps_value_release(&doc);
    doc = json("{\"pool_trees\": [\"gpu\"]}");
    struct ps_operation *op5 = NULL;
    assert_int_equal(ps_strategy_start_operation(s, "op5", "dave", 60, &doc, &op5, &err), 0);
    ps_error_init(&err);
    assert_int_equal(ps_strategy_remove_tree(s, "gpu", &err), PS_ESTATE);
    assert_string_equal(err.msg, "pool tree \"gpu\" cannot be removed: 1 operations run only in "
                                 "it (\"op5\", ...): abort them first");
    assert_int_equal(ps_strategy_finish_operation(s, "op5", PS_OP_ABORTED, 65, &err), 0);
    assert_int_equal(ps_strategy_forget_operation(s, "op5", &err), 0);
    assert_int_equal(ps_strategy_remove_tree(s, "gpu", &err), 0);
    assert_int_equal(ps_strategy_tree_count(s), 1);
    assert_int_equal(op3->state, PS_OP_RUNNING);
    assert_null(ps_operation_membership(op3, "gpu"));
    assert_non_null(ps_operation_membership(op3, "physical"));
    /* finished operations can be forgotten */
    ps_error_init(&err);
    assert_int_equal(ps_strategy_forget_operation(s, "op3", &err), PS_ESTATE);
    assert_int_equal(ps_strategy_finish_operation(s, "op3", PS_OP_ABORTED, 70, &err), 0);
    assert_int_equal(ps_strategy_forget_operation(s, "op2", &err), 0);
    assert_null(ps_strategy_find_operation(s, "op2"));
    assert_int_equal(ps_strategy_operation_count(s), 2);
    ps_value_release(&doc);
    ps_strategy_free(s);
}

static void test_update_and_suspend(void **state)
{
    (void)state;
    struct ps_strategy *s = ps_strategy_new();
    /* the scenario's tree document: config keys and a pools list */
    add_tree(s, "physical", "{\"max_operation_count\": 100, \"pools\": [{\"name\": \"small\","
                            " \"max_running_operation_count\": 1}, {\"name\": \"big\"}]}");
    struct ps_error err;
    ps_error_init(&err);
    ps_strategy_set_default_tree(s, "physical", &err);
    struct ps_pool_tree *t = ps_strategy_find_tree(s, "physical");
    assert_int_equal(ps_pool_tree_pool_count(t), 2);
    assert_int_equal(ps_pool_tree_config(t)->max_operation_count, 100);
    struct ps_value doc = json("{\"pool\": \"small\"}");
    struct ps_operation *a, *b;
    ps_strategy_start_operation(s, "a", "u", 1, &doc, &a, &err);
    ps_strategy_start_operation(s, "b", "u", 2, &doc, &b, &err);
    ps_value_release(&doc);
    assert_int_equal(b->state, PS_OP_PENDING);
    /* moving b to another pool makes it run: an activation */
    doc = json("{\"pool\": \"big\", \"weight\": 4}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_update_operation(s, "b", &doc, &err), 0);
    ps_value_release(&doc);
    assert_int_equal(b->state, PS_OP_RUNNING);
    assert_int_equal(ps_strategy_activated_count(s), 1);
    struct ps_tree_op *m = ps_operation_membership(b, "physical");
    assert_string_equal(m->pool->name, "big");
    assert_true(m->weight == 4);
    assert_string_equal(b->spec.pool, "big");
    /* a refused update changes nothing */
    doc = json("{\"pool\": \"<Root>\", \"weight\": 1}");
    ps_error_init(&err);
    assert_int_equal(ps_strategy_update_operation(s, "b", &doc, &err), PS_EINVAL);
    ps_value_release(&doc);
    assert_true(m->weight == 4);
    assert_string_equal(m->pool->name, "big");
    doc = json("{\"pool_trees\": [\"x\"]}");
    assert_int_equal(ps_strategy_update_operation(s, "b", &doc, &err), PS_EINVAL);
    ps_value_release(&doc);
    /* suspension is a flag the pending reason reports */
    assert_int_equal(ps_strategy_suspend_operation(s, "a", true, &err), 0);
    assert_true(ps_operation_membership(a, "physical")->suspended);
    assert_int_equal(ps_strategy_suspend_operation(s, "zzz", true, &err), PS_ENOENT);
    /* raising a limit through the tree directly also reports activations */
    doc = json("{\"pool\": \"small\"}");
    struct ps_operation *c;
    ps_strategy_start_operation(s, "c", "u", 3, &doc, &c, &err);
    ps_value_release(&doc);
    assert_int_equal(c->state, PS_OP_PENDING);
    struct ps_value v = ps_value_number(2);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_pool_attr(t, "small", "max_running_operation_count", &v, &err), 0);
    assert_int_equal(c->state, PS_OP_RUNNING);
    assert_int_equal(ps_strategy_activated_count(s), 1);
    assert_ptr_equal(ps_strategy_activated(s, 0), c);
    ps_strategy_free(s);
}

/* Nodes with an unlimited resource (a scenario's omitted key) make the tree total and the
 * filter limits unlimited instead of overflowing int64 after a few nodes. */
static void test_unlimited_node_resources_saturate(void **state)
{
    (void)state;
    struct ps_strategy *s = ps_strategy_new();
    add_tree(s, "t", NULL);
    struct ps_error err;
    char id[16];
    for (int i = 0; i < 8; i++) {
        struct ps_resources r = res(1, 2, 100);
        r.v[PS_RES_NETWORK] = PS_RES_INFINITE;
        snprintf(id, sizeof id, "n%d", i);
        assert_int_equal(node(s, id, i % 2 ? "ssd" : "hdd", r, &err), 0);
    }
    struct ps_pool_tree *t = ps_strategy_find_tree(s, "t");
    struct ps_resources total = ps_pool_tree_total_resources(t);
    assert_int_equal(total.v[PS_RES_NETWORK], PS_RES_INFINITE);
    assert_int_equal(total.v[PS_RES_CPU], 1600);
    struct ps_formula *f = NULL;
    assert_int_equal(ps_formula_parse("ssd", &f, &err), 0);
    struct ps_resources limits = ps_pool_tree_filter_limits(t, f);
    assert_int_equal(limits.v[PS_RES_NETWORK], PS_RES_INFINITE);
    assert_int_equal(limits.v[PS_RES_MEMORY], 400);
    ps_formula_free(f);
    ps_strategy_free(s);
}

/* Nodes with equal tags (in order) share a tag set id; other tags, another order, or a tag
 * that joins two ("a b" against "a" "b" in one) do not. Re-registration with other tags takes
 * the id of its new set, and ids are never reused. */
static void test_tag_sets_interned(void **state)
{
    (void)state;
    struct ps_strategy *s = ps_strategy_new();
    add_tree(s, "physical", NULL);
    struct ps_error err;
    assert_int_equal(node(s, "n1", "dc1", res(1, 1, 1), &err), 0);
    assert_int_equal(node(s, "n2", "dc1 gpu", res(1, 1, 1), &err), 0);
    assert_int_equal(node(s, "n3", "dc1", res(1, 1, 1), &err), 0);
    assert_int_equal(node(s, "n4", "gpu dc1", res(1, 1, 1), &err), 0);
    assert_int_equal(node(s, "n5", "", res(1, 1, 1), &err), 0);
    const char *joined[] = {"dc1 gpu"};
    struct ps_resources limits = res(1, 1, 1);
    assert_int_equal(ps_strategy_register_node(s, "n6", joined, 1, &limits, &err), 0);
    int t1 = ps_strategy_find_node(s, "n1")->tagset, t2 = ps_strategy_find_node(s, "n2")->tagset;
    assert_int_equal(ps_strategy_find_node(s, "n3")->tagset, t1);
    assert_int_not_equal(t1, t2);
    int t4 = ps_strategy_find_node(s, "n4")->tagset, t5 = ps_strategy_find_node(s, "n5")->tagset;
    int t6 = ps_strategy_find_node(s, "n6")->tagset;
    assert_true(t4 != t1 && t4 != t2 && t5 != t1 && t5 != t2 && t5 != t4);
    assert_true(t6 != t1 && t6 != t2 && t6 != t4 && t6 != t5);
    assert_int_equal(ps_strategy_tagset_count(s), 5);
    assert_int_equal(node(s, "n3", "dc1 gpu", res(1, 1, 1), &err), 0);
    assert_int_equal(ps_strategy_find_node(s, "n3")->tagset, t2);
    assert_int_equal(node(s, "n1", "dc2", res(1, 1, 1), &err), 0);
    assert_int_equal(ps_strategy_find_node(s, "n1")->tagset, 5);
    assert_int_equal(ps_strategy_tagset_count(s), 6);
    ps_strategy_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_join_one_tree),
        cmocka_unit_test(test_tag_sets_interned),
        cmocka_unit_test(test_unlimited_node_resources_saturate),
        cmocka_unit_test(test_filter_limits),
        cmocka_unit_test(test_filter_max_limits),
        cmocka_unit_test(test_operations_across_trees),
        cmocka_unit_test(test_update_and_suspend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
