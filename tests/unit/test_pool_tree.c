#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/nodes.h"
#include "core/operation.h"
#include "core/pool_tree.h"
#include "value_helpers.h"

static struct ps_pool_tree *new_tree(void)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_pool_tree *tree = ps_pool_tree_new("physical", NULL, &err);
    assert_non_null(tree);
    return tree;
}

static void create(struct ps_pool_tree *tree, const char *name, const char *parent, const char *attrs)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(attrs ? attrs : "{}");
    int rc = ps_pool_tree_create_pool(tree, name, parent, &doc, &err);
    if (rc != 0)
        fail_msg("create %s: %s", name, err.msg);
    ps_value_release(&doc);
}

/* A canonical dump of the whole tree (structure, configs, counts) to compare before/after. */
static void dump(struct ps_pool_tree *tree, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        struct ps_value v;
        ps_pool_config_to_value(&p->config, &v);
        char text[2048];
        ps_value_describe(&v, text, sizeof text);
        len += (size_t)snprintf(buf + len, size - len, "%s<%s>%d/%d/%d/%d%s:%s;", p->name, p->parent->name,
                                p->operation_count, p->running_operation_count, p->child_pool_count,
                                p->child_operation_count, p->ephemeral ? "e" : "", text);
        ps_value_release(&v);
    }
    struct ps_value c;
    ps_tree_config_to_value(ps_pool_tree_config(tree), &c);
    char text[4096];
    snprintf(buf + len, size - len, "tree:%s", ps_value_describe(&c, text, sizeof text));
    ps_value_release(&c);
}

static void test_create_find_and_order(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree();
    create(tree, "research", NULL, "{\"weight\": 2}");
    create(tree, "prod", "<Root>", NULL);
    create(tree, "ml", "research", "{\"mode\": \"fifo\"}");
    assert_int_equal(ps_pool_tree_pool_count(tree), 3);
    assert_string_equal(ps_pool_tree_pool_at(tree, 0)->name, "research");
    assert_string_equal(ps_pool_tree_pool_at(tree, 2)->name, "ml");
    struct ps_pool *ml = ps_pool_tree_find_pool(tree, "ml");
    assert_non_null(ml);
    assert_ptr_equal(ml->parent, ps_pool_tree_find_pool(tree, "research"));
    assert_true(ps_pool_tree_find_pool(tree, "<Root>")->is_root);
    assert_int_equal(ps_pool_tree_find_pool(tree, "research")->child_pool_count, 1);
    assert_int_equal(ps_pool_tree_root(tree)->child_pool_count, 2);

    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pool(tree, "prod", NULL, NULL, &err), PS_EEXIST);
    assert_string_equal(err.msg, "pool \"prod\" already exists in pool tree \"physical\"");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pool(tree, "x", "nope", NULL, &err), PS_ENOENT);
    assert_non_null(strstr(err.msg, "parent pool \"nope\" does not exist"));
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pool(tree, "a$b", NULL, NULL, &err), PS_EINVAL);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pool(tree, "<Root>", NULL, NULL, &err), PS_EINVAL);
    ps_error_init(&err);
    struct ps_value bad = json("{\"weight\": -1}");
    assert_int_equal(ps_pool_tree_create_pool(tree, "y", NULL, &bad, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pool \"y\": weight: must be in [1.4901161193847656e-08, 67108864], got -1");
    assert_null(ps_pool_tree_find_pool(tree, "y"));
    ps_value_release(&bad);

    struct ps_value got;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_get_pool_attr(tree, "research", "weight", &got, &err), 0);
    assert_true(got.number == 2);
    ps_pool_tree_free(tree);
}

struct refusal {
    const char *what;
    const char *reason;
};

/* Each refused change must leave the whole tree byte-for-byte as it was. */
static void test_whole_tree_validation_leaves_tree_unchanged(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree();
    create(tree, "parent", NULL, "{\"strong_guarantee_resources\": {\"cpu\": 10, \"memory\": 1000},"
                                 " \"integral_guarantees\": {\"burst_guarantee_resources\": {\"cpu\": 5}}}");
    create(tree, "c1", "parent", "{\"strong_guarantee_resources\": {\"cpu\": 6},"
                                 " \"integral_guarantees\": {\"burst_guarantee_resources\": {\"cpu\": 2}}}");
    create(tree, "c2", "parent", "{\"strong_guarantee_resources\": {\"cpu\": 3}}");
    create(tree, "fifo", NULL, "{\"mode\": \"fifo\"}");
    create(tree, "integral", NULL, "{\"integral_guarantees\": {\"guarantee_type\": \"burst\","
                                   " \"burst_guarantee_resources\": {\"cpu\": 5}, \"resource_flow\": {\"cpu\": 1}}}");
    create(tree, "other", NULL, NULL);
    char before[16384], after[16384];
    dump(tree, before, sizeof before);

    struct ps_error err;
    struct ps_value v;

    /* children's explicit guarantees exceed the parent's: names both pools */
    ps_error_init(&err);
    v = json("{\"cpu\": 2}");
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "c2", "strong_guarantee_resources", &v, &err), 0);
    ps_value_release(&v);
    dump(tree, before, sizeof before);
    ps_error_init(&err);
    v = json("{\"cpu\": 5}");
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "c2", "strong_guarantee_resources", &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pool \"c2\": strong_guarantee_resources/cpu: 5 would make the children of "
                                 "pool \"parent\" guarantee 11 in total, more than its own 10");
    ps_value_release(&v);
    dump(tree, after, sizeof after);
    assert_string_equal(before, after);

    /* a new child with too much */
    ps_error_init(&err);
    v = json("{\"strong_guarantee_resources\": {\"cpu\": 2.5}}");
    assert_int_equal(ps_pool_tree_create_pool(tree, "c3", "parent", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pool \"c3\""));
    assert_non_null(strstr(err.msg, "pool \"parent\""));
    ps_value_release(&v);
    dump(tree, after, sizeof after);
    assert_string_equal(before, after);

    /* lowering the parent below its children */
    ps_error_init(&err);
    v = ps_value_number(7.5);
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "parent", "strong_guarantee_resources/cpu", &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pool \"parent\": strong_guarantee_resources/cpu: 7.5 is less than the sum of its "
                                 "children's guarantees 8 (child pool \"c1\" and others)");
    /* removing a resource the children use (cpu: the main resource rule comes first) */
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "parent", "strong_guarantee_resources/cpu", NULL, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "the main resource cpu must be set"));
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "parent", "integral_guarantees/burst_guarantee_resources", NULL,
                                                &err), PS_EINVAL);
    assert_string_equal(err.msg, "pool \"parent\": integral_guarantees/burst_guarantee_resources/cpu must stay set "
                                 "because its child pool \"c1\" sets it");
    dump(tree, after, sizeof after);
    assert_string_equal(before, after);

    /* a child guarantees a resource its parent does not */
    ps_error_init(&err);
    v = json("{\"cpu\": 1, \"user_slots\": 1}");
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "c1", "strong_guarantee_resources", &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pool \"c1\": strong_guarantee_resources/user_slots is set but its parent pool "
                                 "\"parent\" does not set it");
    ps_value_release(&v);

    /* the main resource rule */
    ps_error_init(&err);
    v = json("{\"memory\": 100}");
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "other", "strong_guarantee_resources", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "the main resource cpu must be set"));
    ps_value_release(&v);

    /* burst guarantees sum */
    ps_error_init(&err);
    v = json("{\"cpu\": 6}");
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "c1", "integral_guarantees/burst_guarantee_resources", &v, &err),
                     PS_EINVAL);
    assert_non_null(strstr(err.msg, "integral_guarantees/burst_guarantee_resources/cpu"));
    ps_value_release(&v);

    /* fifo pools have no child pools, either way round */
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pool(tree, "under_fifo", "fifo", NULL, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pool \"under_fifo\": its parent pool \"fifo\" is in fifo mode and cannot have child pools");
    ps_error_init(&err);
    v = ps_value_string("fifo");
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "parent", "mode", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "cannot be in fifo mode"));
    ps_value_release(&v);

    /* integral pools cannot have integral children */
    ps_error_init(&err);
    v = json("{\"integral_guarantees\": {\"resource_flow\": {\"cpu\": 1}}}");
    assert_int_equal(ps_pool_tree_create_pool(tree, "sub", "integral", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "its parent pool \"integral\" is an integral pool"));
    ps_value_release(&v);

    /* pool-level rules through the tree */
    ps_error_init(&err);
    v = json("{\"max_operation_count\": 1, \"max_running_operation_count\": 2}");
    assert_int_equal(ps_pool_tree_apply_pool_attrs(tree, "other", &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pool \"other\": max_operation_count: must be greater than or equal to "
                                 "max_running_operation_count (2), got 1");
    ps_value_release(&v);

    /* moves: under a descendant, under fifo, into a parent that cannot take its guarantee */
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_move_pool(tree, "parent", "c1", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "under itself or its descendant \"c1\""));
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_move_pool(tree, "other", "fifo", &err), PS_EINVAL);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_move_pool(tree, "c1", "other", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "is set but its parent pool \"other\" does not set it"));

    /* a tree config change that breaks a pool: main_resource */
    ps_error_init(&err);
    v = ps_value_string("memory");
    assert_int_equal(ps_pool_tree_set_config(tree, "main_resource", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "the main resource memory must be set"));
    ps_value_release(&v);

    /* removals */
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_remove_pool(tree, "parent", &err), PS_ESTATE);
    assert_string_equal(err.msg, "pool \"parent\" cannot be removed: it has 2 child pools");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_remove_pool(tree, "<Root>", &err), PS_EINVAL);

    dump(tree, after, sizeof after);
    assert_string_equal(before, after);
    ps_pool_tree_free(tree);
}

static struct ps_tree_op *start(struct ps_pool_tree *tree, const char *id, const char *user, const char *pool,
                                 int64_t start_ms)
{
    struct ps_tree_op_settings settings;
    memset(&settings, 0, sizeof settings);
    settings.pool = pool;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_tree_op *op = NULL;
    if (ps_pool_tree_add_operation(tree, id, user, start_ms, &settings, &op, &err) != 0)
        fail_msg("start %s: %s", id, err.msg);
    return op;
}

static void test_move_and_remove(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree();
    create(tree, "a", NULL, "{\"strong_guarantee_resources\": {\"cpu\": 10}, \"max_running_operation_count\": 1}");
    create(tree, "b", NULL, "{\"strong_guarantee_resources\": {\"cpu\": 10}}");
    create(tree, "leaf", "a", "{\"strong_guarantee_resources\": {\"cpu\": 4}}");
    struct ps_tree_op *op1 = start(tree, "op1", "alice", "leaf", 1);
    struct ps_tree_op *op2 = start(tree, "op2", "alice", "leaf", 2);
    struct ps_pool *a = ps_pool_tree_find_pool(tree, "a"), *b = ps_pool_tree_find_pool(tree, "b");
    struct ps_pool *leaf = ps_pool_tree_find_pool(tree, "leaf"), *root = ps_pool_tree_root(tree);
    assert_true(op1->running);
    assert_false(op2->running);
    assert_ptr_equal(op2->pending_by, a);
    assert_int_equal(a->operation_count, 2);
    assert_int_equal(a->running_operation_count, 1);
    assert_int_equal(root->operation_count, 2);

    struct ps_error err;
    ps_error_init(&err);

    /* Moving the subtree moves its counts; room under b lets the pending operation run. */
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_move_pool(tree, "leaf", "b", &err), 0);
    assert_ptr_equal(leaf->parent, b);
    assert_int_equal(a->operation_count, 0);
    assert_int_equal(a->running_operation_count, 0);
    assert_int_equal(a->child_pool_count, 0);
    assert_int_equal(b->operation_count, 2);
    assert_int_equal(b->running_operation_count, 2);
    assert_int_equal(root->operation_count, 2);
    assert_int_equal(root->running_operation_count, 2);
    assert_true(op2->running);
    assert_int_equal(ps_pool_tree_last_started_count(tree), 1);
    assert_ptr_equal(ps_pool_tree_last_started(tree, 0), op2);

    assert_int_equal(ps_pool_tree_remove_operation(tree, "op1", &err), 0);
    assert_int_equal(ps_pool_tree_remove_operation(tree, "op2", &err), 0);
    assert_int_equal(root->operation_count, 0);
    assert_int_equal(ps_pool_tree_remove_pool(tree, "leaf", &err), 0);
    assert_null(ps_pool_tree_find_pool(tree, "leaf"));
    assert_int_equal(b->child_pool_count, 0);
    assert_int_equal(ps_pool_tree_pool_count(tree), 2);
    assert_int_equal(ps_pool_tree_remove_pool(tree, "leaf", &err), PS_ENOENT);
    ps_pool_tree_free(tree);
}

static void test_ephemeral_pool_becomes_explicit(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree();
    create(tree, "team", NULL, NULL);
    struct ps_tree_op *op = start(tree, "op1", "alice", NULL, 1);   /* pool "alice" is ephemeral */
    struct ps_pool *alice = ps_pool_tree_find_pool(tree, "alice");
    assert_non_null(alice);
    assert_true(alice->ephemeral && alice->ephemeral_in_default_parent);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value v = ps_value_number(3);
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "alice", "weight", &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "is ephemeral"));
    assert_int_equal(ps_pool_tree_move_pool(tree, "alice", "team", &err), PS_EINVAL);

    struct ps_value attrs = json("{\"weight\": 3}");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pool(tree, "alice", "team", &attrs, &err), 0);
    assert_ptr_equal(ps_pool_tree_find_pool(tree, "alice"), alice);   /* the same pool, now explicit */
    assert_false(alice->ephemeral);
    assert_ptr_equal(alice->parent, ps_pool_tree_find_pool(tree, "team"));
    assert_ptr_equal(op->pool, alice);
    assert_int_equal(ps_pool_tree_find_pool(tree, "team")->operation_count, 1);
    assert_true(alice->config.weight.value == 3);
    ps_value_release(&attrs);
    /* It no longer vanishes with its last operation. */
    assert_int_equal(ps_pool_tree_remove_operation(tree, "op1", &err), 0);
    assert_non_null(ps_pool_tree_find_pool(tree, "alice"));
    ps_pool_tree_free(tree);
}

/* A removed pool with operations stays, ephemeral, until they end (upstream's pools update). */
static void test_removed_pool_with_operations_turns_ephemeral(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value cfg = json("{\"default_parent_pool\": \"research\"}");
    struct ps_pool_tree *tree = ps_pool_tree_new("physical", &cfg, &err);
    ps_value_release(&cfg);
    create(tree, "research", NULL, "{\"ephemeral_subpool_config\": {\"max_operation_count\": 3}}");
    create(tree, "p", NULL, "{\"weight\": 5, \"max_running_operation_count\": 1}");
    struct ps_tree_op *op1 = start(tree, "op1", "alice", "p", 1);
    struct ps_tree_op *op2 = start(tree, "op2", "alice", "p", 2);
    struct ps_pool *p = ps_pool_tree_find_pool(tree, "p");
    struct ps_pool *research = ps_pool_tree_find_pool(tree, "research");
    assert_true(op1->running);
    assert_false(op2->running);

    assert_int_equal(ps_pool_tree_remove_pool(tree, "p", &err), 0);
    assert_ptr_equal(ps_pool_tree_find_pool(tree, "p"), p);
    assert_true(p->ephemeral);
    assert_ptr_equal(p->parent, research);
    assert_false(p->config.weight.set);
    assert_true(p->config.max_operation_count.set && p->config.max_operation_count.value == 3);
    assert_int_equal(research->operation_count, 2);
    assert_ptr_equal(op1->pool, p);
    assert_true(op2->running);   /* its own running limit is gone with its config */
    /* an ephemeral pool with operations is not removed again */
    assert_int_equal(ps_pool_tree_remove_pool(tree, "p", &err), PS_ESTATE);
    assert_int_equal(ps_pool_tree_remove_operation(tree, "op1", &err), 0);
    assert_non_null(ps_pool_tree_find_pool(tree, "p"));
    assert_int_equal(ps_pool_tree_remove_operation(tree, "op2", &err), 0);
    assert_null(ps_pool_tree_find_pool(tree, "p"));
    assert_int_equal(research->child_pool_count, 0);

    /* the default parent itself goes under the root */
    start(tree, "op3", "alice", "research", 3);
    assert_int_equal(ps_pool_tree_remove_pool(tree, "research", &err), 0);
    assert_true(research->ephemeral);
    assert_ptr_equal(research->parent, ps_pool_tree_root(tree));
    ps_pool_tree_free(tree);
}

static void test_tree_config_changes(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value cfg = json("{\"max_running_operation_count_per_pool\": 1, \"nodes_filter\": \"internal\"}");
    struct ps_pool_tree *tree = ps_pool_tree_new("physical", &cfg, &err);
    ps_value_release(&cfg);
    assert_non_null(tree);
    assert_int_equal(ps_pool_tree_config(tree)->max_running_operation_count_per_pool, 1);
    assert_non_null(ps_pool_tree_nodes_filter(tree));
    create(tree, "p", NULL, NULL);
    struct ps_tree_op *op1 = start(tree, "op1", "u", "p", 1);
    struct ps_tree_op *op2 = start(tree, "op2", "u", "p", 2);
    assert_true(op1->running);
    assert_false(op2->running);
    /* Raising the tree's per-pool default lets the pending operation run. */
    struct ps_value v = ps_value_number(2);
    assert_int_equal(ps_pool_tree_set_config(tree, "max_running_operation_count_per_pool", &v, &err), 0);
    assert_true(op2->running);
    assert_int_equal(ps_pool_tree_last_started_count(tree), 1);
    /* A bad config document changes nothing. */
    struct ps_value bad = json("{\"max_operation_count\": 3, \"nodes_filter\": \"a &\"}");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_apply_config(tree, &bad, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pool tree \"physical\": nodes_filter"));
    assert_int_equal(ps_pool_tree_config(tree)->max_operation_count, 50000);
    ps_value_release(&bad);
    /* Bad names and configs at creation. */
    ps_error_init(&err);
    assert_null(ps_pool_tree_new("bad name", NULL, &err));
    assert_int_equal(err.code, PS_EINVAL);
    bad = json("{\"max_operation_count\": 0}");
    ps_error_init(&err);
    assert_null(ps_pool_tree_new("t", &bad, &err));
    assert_non_null(strstr(err.msg, "max_operation_count"));
    ps_value_release(&bad);
    ps_pool_tree_free(tree);
}

static void test_pools_from_a_document(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    /* The scenario shape: tree keys plus a pools list, a child listed before its parent. */
    struct ps_value doc = json("{\"default_parent_pool\": \"research\", \"pools\": ["
                               " {\"name\": \"x\", \"parent\": \"research\"},"
                               " {\"name\": \"prod\", \"weight\": 3, \"accumulated_resource_volume\": {\"cpu\": 600.5}},"
                               " {\"name\": \"research\", \"parent\": \"<Root>\", \"max_running_operation_count\": 4},"
                               " {\"name\": \"y\", \"parent\": \"research\"}]}");
    struct ps_pool_tree *tree = ps_pool_tree_new("physical", &doc, &err);
    if (!tree)
        fail_msg("%s", err.msg);
    ps_value_release(&doc);
    assert_string_equal(ps_pool_tree_config(tree)->default_parent_pool, "research");
    assert_int_equal(ps_pool_tree_pool_count(tree), 4);
    const char *order[] = {"prod", "research", "x", "y"};   /* siblings keep list order */
    for (int i = 0; i < 4; i++)
        assert_string_equal(ps_pool_tree_pool_at(tree, i)->name, order[i]);
    assert_ptr_equal(ps_pool_tree_find_pool(tree, "x")->parent, ps_pool_tree_find_pool(tree, "research"));
    assert_true(ps_pool_tree_find_pool(tree, "prod")->config.weight.value == 3);
    assert_true(ps_pool_tree_find_pool(tree, "prod")->accumulated_volume.v[PS_RES_CPU] == 600.5);
    assert_int_equal(ps_pool_max_running_operations(ps_pool_tree_find_pool(tree, "research")), 4);
    assert_ptr_equal(ps_pool_tree_default_parent(tree), ps_pool_tree_find_pool(tree, "research"));

    /* Atomic: a bad entry removes what this call created. */
    char before[16384], after[16384];
    dump(tree, before, sizeof before);
    struct ps_value pools = json("[{\"name\": \"a\"}, {\"name\": \"b\", \"parent\": \"a\"},"
                                 " {\"name\": \"c\", \"weight\": 0}]");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pools(tree, &pools, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pools[2]: pool \"c\": weight: must be in [1.4901161193847656e-08, 67108864], got 0");
    dump(tree, after, sizeof after);
    assert_string_equal(before, after);
    ps_value_release(&pools);
    pools = json("[{\"name\": \"orphan\", \"parent\": \"nowhere\"}]");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pools(tree, &pools, &err), PS_ENOENT);
    assert_non_null(strstr(err.msg, "parent pool \"nowhere\""));
    ps_value_release(&pools);
    pools = json("[{\"name\": \"v\", \"accumulated_resource_volume\": {\"cpu\": -1}}]");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pools(tree, &pools, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pools[0]: accumulated_resource_volume/cpu: must be a non-negative number");
    assert_null(ps_pool_tree_find_pool(tree, "v"));
    ps_value_release(&pools);
    pools = json("[{\"weight\": 1}]");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pools(tree, &pools, &err), PS_EINVAL);
    assert_string_equal(err.msg, "pools[0]: name: must be a string");
    ps_value_release(&pools);
    pools = json("[{\"name\": \"prod\"}]");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_create_pools(tree, &pools, &err), PS_EEXIST);
    ps_value_release(&pools);
    ps_pool_tree_free(tree);

    /* A bad pool in the tree document: no tree. */
    doc = json("{\"pools\": [{\"name\": \"f\", \"mode\": \"fifo\"}, {\"name\": \"g\", \"parent\": \"f\"}]}");
    ps_error_init(&err);
    assert_null(ps_pool_tree_new("t", &doc, &err));
    assert_non_null(strstr(err.msg, "pool tree \"t\": pools[1]: pool \"g\": its parent pool \"f\" is in fifo mode"));
    ps_value_release(&doc);
}

static void test_standalone_nodes_follow_the_filter(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree();
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_CPU] = 100;
    const char *a_tags[] = {"a"}, *b_tags[] = {"b"};
    struct ps_error err;
    ps_error_init(&err);
    struct ps_node *a = ps_node_new("na", a_tags, 1, &r, &err);
    struct ps_node *b = ps_node_new("nb", b_tags, 1, &r, &err);
    assert_int_equal(ps_pool_tree_add_node(tree, a, &err), 0);
    assert_int_equal(ps_pool_tree_add_node(tree, b, &err), 0);
    assert_int_equal(ps_pool_tree_add_node(tree, b, &err), PS_EEXIST);
    assert_int_equal(ps_pool_tree_total_resources(tree).v[PS_RES_CPU], 200);
    struct ps_value f = ps_value_string("a");
    assert_int_equal(ps_pool_tree_set_config(tree, "nodes_filter", &f, &err), 0);
    ps_value_release(&f);
    assert_int_equal(ps_pool_tree_node_count(tree), 1);
    assert_ptr_equal(ps_pool_tree_node_at(tree, 0), a);
    assert_null(b->tree);
    assert_int_equal(ps_pool_tree_total_resources(tree).v[PS_RES_CPU], 100);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_add_node(tree, b, &err), PS_EINVAL);
    assert_string_equal(err.msg, "node \"nb\" does not match the nodes_filter \"a\" of pool tree \"physical\"");
    ps_pool_tree_free(tree);
    assert_null(a->tree);
    ps_node_free(a);
    ps_node_free(b);
}

/* The total and maximum follow each registration without a rescan (tree_nodes.c): the sum
 * saturates at an unlimited resource and the maximum is per resource. */
static void test_node_totals_follow_registrations(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree();
    struct ps_error err;
    ps_error_init(&err);
    struct ps_node *n[3];
    int64_t cpu[3] = {100, 40, 7}, mem[3] = {5, 900, PS_RES_INFINITE};
    for (int i = 0; i < 3; i++) {
        struct ps_resources r = ps_resources_zero();
        r.v[PS_RES_CPU] = cpu[i];
        r.v[PS_RES_MEMORY] = mem[i];
        char id[8];
        snprintf(id, sizeof id, "n%d", i);
        n[i] = ps_node_new(id, NULL, 0, &r, &err);
        assert_non_null(n[i]);
    }
    struct ps_resources max;
    assert_int_equal(ps_pool_tree_filter_max_limits(tree, NULL, &max), 0);
    assert_int_equal(max.v[PS_RES_CPU], 0);
    assert_int_equal(ps_pool_tree_add_node(tree, n[0], &err), 0);
    assert_int_equal(ps_pool_tree_add_node(tree, n[1], &err), 0);
    assert_int_equal(ps_pool_tree_total_resources(tree).v[PS_RES_CPU], 140);
    assert_int_equal(ps_pool_tree_total_resources(tree).v[PS_RES_MEMORY], 905);
    assert_int_equal(ps_pool_tree_filter_max_limits(tree, NULL, &max), 2);
    assert_int_equal(max.v[PS_RES_CPU], 100);
    assert_int_equal(max.v[PS_RES_MEMORY], 900);
    assert_int_equal(ps_pool_tree_add_node(tree, n[2], &err), 0);
    assert_int_equal(ps_pool_tree_total_resources(tree).v[PS_RES_CPU], 147);
    assert_int_equal(ps_pool_tree_total_resources(tree).v[PS_RES_MEMORY], PS_RES_INFINITE);
    ps_pool_tree_remove_node(tree, n[2]);
    assert_int_equal(ps_pool_tree_total_resources(tree).v[PS_RES_MEMORY], 905);
    ps_pool_tree_remove_node(tree, n[0]);
    assert_int_equal(ps_pool_tree_add_node(tree, n[0], &err), 0);
    assert_int_equal(ps_pool_tree_total_resources(tree).v[PS_RES_CPU], 140);
    assert_int_equal(ps_pool_tree_filter_max_limits(tree, NULL, &max), 2);
    assert_int_equal(max.v[PS_RES_MEMORY], 900);
    ps_pool_tree_free(tree);
    for (int i = 0; i < 3; i++)
        ps_node_free(n[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_find_and_order),
        cmocka_unit_test(test_whole_tree_validation_leaves_tree_unchanged),
        cmocka_unit_test(test_move_and_remove),
        cmocka_unit_test(test_ephemeral_pool_becomes_explicit),
        cmocka_unit_test(test_removed_pool_with_operations_turns_ephemeral),
        cmocka_unit_test(test_tree_config_changes),
        cmocka_unit_test(test_pools_from_a_document),
        cmocka_unit_test(test_standalone_nodes_follow_the_filter),
        cmocka_unit_test(test_node_totals_follow_registrations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
