#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/operation.h"
#include "core/pool_acl.h"
#include "core/pool_tree.h"
#include "value_helpers.h"

static struct ps_pool_tree *new_tree(const char *config)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(config ? config : "{}");
    struct ps_pool_tree *tree = ps_pool_tree_new("physical", &doc, &err);
    ps_value_release(&doc);
    if (!tree)
        fail_msg("tree: %s", err.msg);
    return tree;
}

static void create(struct ps_pool_tree *tree, const char *name, const char *parent, const char *attrs)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(attrs ? attrs : "{}");
    if (ps_pool_tree_create_pool(tree, name, parent, &doc, &err) != 0)
        fail_msg("create %s: %s", name, err.msg);
    ps_value_release(&doc);
}

static int try_start(struct ps_pool_tree *tree, const char *id, const char *user, const char *pool,
                     int64_t start_ms, struct ps_tree_op **op, struct ps_error *err)
{
    struct ps_tree_op_settings settings;
    memset(&settings, 0, sizeof settings);
    settings.pool = pool;
    ps_error_init(err);
    /* check and add must agree */
    struct ps_error check_err;
    ps_error_init(&check_err);
    int check = ps_pool_tree_check_operation(tree, id, user, &settings, &check_err);
    int rc = ps_pool_tree_add_operation(tree, id, user, start_ms, &settings, op, err);
    assert_int_equal(check, rc);
    if (rc != 0)
        assert_string_equal(check_err.msg, err->msg);
    return rc;
}

static struct ps_tree_op *start(struct ps_pool_tree *tree, const char *id, const char *user, const char *pool,
                                int64_t start_ms)
{
    struct ps_error err;
    struct ps_tree_op *op = NULL;
    if (try_start(tree, id, user, pool, start_ms, &op, &err) != 0)
        fail_msg("start %s: %s", id, err.msg);
    return op;
}

static void finish(struct ps_pool_tree *tree, const char *id)
{
    struct ps_error err;
    ps_error_init(&err);
    if (ps_pool_tree_remove_operation(tree, id, &err) != 0)
        fail_msg("finish %s: %s", id, err.msg);
}

/* parent max_running 2 with two children: the third operation stays pending with a reason
 * naming the parent; finishing one starts the oldest pending operation. */
static void test_running_limit_at_parent(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(NULL);
    create(tree, "parent", NULL, "{\"max_running_operation_count\": 2}");
    create(tree, "c1", "parent", NULL);
    create(tree, "c2", "parent", NULL);
    struct ps_pool *parent = ps_pool_tree_find_pool(tree, "parent");
    struct ps_tree_op *a = start(tree, "a", "u", "c1", 10);
    struct ps_tree_op *b = start(tree, "b", "u", "c2", 20);
    struct ps_tree_op *c = start(tree, "c", "u", "c1", 40);
    struct ps_tree_op *d = start(tree, "d", "u", "c2", 30);   /* older than c */
    assert_true(a->running && b->running);
    assert_false(c->running);
    assert_false(d->running);
    assert_ptr_equal(c->pending_by, parent);
    assert_ptr_equal(d->pending_by, parent);
    assert_int_equal(parent->operation_count, 4);
    assert_int_equal(parent->running_operation_count, 2);
    assert_int_equal(ps_pool_tree_find_pool(tree, "c1")->operation_count, 2);
    assert_int_equal(ps_pool_tree_root(tree)->operation_count, 4);
    assert_int_equal(ps_pool_tree_root(tree)->running_operation_count, 2);
    assert_int_equal(ps_pool_tree_pending_count(tree), 2);
    assert_ptr_equal(ps_pool_tree_pending_at(tree, 0), d);   /* start order */
    assert_ptr_equal(ps_pool_tree_pending_at(tree, 1), c);

    finish(tree, "a");
    assert_true(d->running);        /* the oldest pending, although in the other child */
    assert_false(c->running);
    assert_int_equal(ps_pool_tree_last_started_count(tree), 1);
    assert_ptr_equal(ps_pool_tree_last_started(tree, 0), d);
    assert_int_equal(parent->running_operation_count, 2);
    assert_int_equal(parent->operation_count, 3);

    /* Finishing a pending operation starts nothing. */
    finish(tree, "c");
    assert_int_equal(ps_pool_tree_last_started_count(tree), 0);
    assert_int_equal(parent->operation_count, 2);
    ps_pool_tree_free(tree);
}

/* Operations started in the same millisecond wait in registration order, not id order: the
 * service submits many in one millisecond, and ids are random. */
static void test_pending_same_millisecond_in_registration_order(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(NULL);
    create(tree, "a", NULL, "{\"max_running_operation_count\": 1}");
    struct ps_tree_op *first = start(tree, "z-first", "u", "a", 5);
    struct ps_tree_op *second = start(tree, "m-second", "u", "a", 5);
    struct ps_tree_op *third = start(tree, "a-third", "u", "a", 5);
    assert_true(first->running);
    assert_ptr_equal(ps_pool_tree_pending_at(tree, 0), second);
    assert_ptr_equal(ps_pool_tree_pending_at(tree, 1), third);
    finish(tree, "z-first");
    assert_true(second->running);
    assert_false(third->running);
    ps_pool_tree_free(tree);
}

/* Pending in start order even across different blocking pools, and the lowest blocking pool
 * is named. */
static void test_blocking_pool_is_the_lowest(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree("{\"max_running_operation_count\": 3}");
    create(tree, "top", NULL, "{\"max_running_operation_count\": 10}");
    create(tree, "mid", "top", "{\"max_running_operation_count\": 1}");
    create(tree, "low", "mid", NULL);
    create(tree, "other", NULL, NULL);
    struct ps_tree_op *a = start(tree, "a", "u", "low", 1);
    struct ps_tree_op *b = start(tree, "b", "u", "low", 2);
    assert_true(a->running);
    assert_ptr_equal(b->pending_by, ps_pool_tree_find_pool(tree, "mid"));
    struct ps_tree_op *c = start(tree, "c", "u", "other", 3);
    struct ps_tree_op *d = start(tree, "d", "u", "other", 4);
    assert_true(c->running && d->running);
    /* The root limit (3) is reached now. */
    struct ps_tree_op *e = start(tree, "e", "u", "other", 5);
    assert_ptr_equal(e->pending_by, ps_pool_tree_root(tree));
    /* When a frees room at mid and the root, the oldest pending (b) takes the root slot. */
    finish(tree, "a");
    assert_true(b->running);
    assert_false(e->running);
    assert_ptr_equal(e->pending_by, ps_pool_tree_root(tree));
    ps_pool_tree_free(tree);
}

/* max_operation_count at an ancestor level refuses the start, naming that pool. */
static void test_operation_count_refused_at_ancestor(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(NULL);
    create(tree, "org", NULL, "{\"max_operation_count\": 2, \"max_running_operation_count\": 1}");
    create(tree, "team", "org", "{\"max_operation_count\": 10}");
    start(tree, "a", "u", "team", 1);
    start(tree, "b", "u", "team", 2);   /* pending: org's running limit is 1 */
    struct ps_error err;
    struct ps_tree_op *op = NULL;
    assert_int_equal(try_start(tree, "c", "u", "team", 3, &op, &err), PS_ELIMIT);
    assert_null(op);
    assert_string_equal(err.msg, "limit for the number of concurrent operations 2 for pool \"org\" in pool "
                                 "tree \"physical\" has been reached");
    assert_int_equal(ps_pool_tree_find_pool(tree, "org")->operation_count, 2);
    assert_null(ps_pool_tree_find_operation(tree, "c"));
    /* The root's limit is the tree's max_operation_count. */
    struct ps_value v = ps_value_number(2);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_config(tree, "max_operation_count", &v, &err), 0);
    create(tree, "elsewhere", NULL, NULL);
    assert_int_equal(try_start(tree, "d", "u", "elsewhere", 4, &op, &err), PS_ELIMIT);
    assert_non_null(strstr(err.msg, "for pool \"<Root>\""));
    /* Finishing makes room again. */
    finish(tree, "a");
    assert_int_equal(try_start(tree, "d", "u", "elsewhere", 4, &op, &err), 0);
    /* duplicate ids */
    assert_int_equal(try_start(tree, "d", "u", "elsewhere", 5, &op, &err), PS_EEXIST);
    ps_pool_tree_free(tree);
}

static void test_user_pools_under_default_parent(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree("{\"default_parent_pool\": \"users\", \"max_ephemeral_pools_per_user\": 2}");
    create(tree, "users", NULL, "{\"ephemeral_subpool_config\": {\"max_running_operation_count\": 1,"
                                " \"resource_limits\": {\"cpu\": 8}}}");
    /* no pool in the spec: the user's name; the pool does not exist: ephemeral under users */
    struct ps_tree_op *a = start(tree, "a", "alice", NULL, 1);
    struct ps_pool *alice = ps_pool_tree_find_pool(tree, "alice");
    assert_non_null(alice);
    assert_ptr_equal(a->pool, alice);
    assert_true(alice->ephemeral && alice->ephemeral_in_default_parent);
    assert_string_equal(alice->ephemeral_user, "alice");
    assert_ptr_equal(alice->parent, ps_pool_tree_find_pool(tree, "users"));
    /* its config comes from the default parent's ephemeral_subpool_config */
    assert_int_equal(ps_pool_max_running_operations(alice), 1);
    assert_int_equal(alice->config.resource_limits.r.v[PS_RES_CPU], 800);
    start(tree, "b", "alice", "adhoc", 2);   /* a second ephemeral pool: limit 2 */
    struct ps_error err;
    struct ps_tree_op *op;
    assert_int_equal(try_start(tree, "c", "alice", "third", 3, &op, &err), PS_ELIMIT);
    assert_string_equal(err.msg, "cannot create ephemeral pool \"third\": the limit of 2 ephemeral pools for user "
                                 "\"alice\" in pool tree \"physical\" has been reached");
    /* Using an existing pool (even another user's ephemeral one) creates nothing. */
    start(tree, "c", "alice", "alice", 3);
    start(tree, "d", "bob", "adhoc", 4);
    assert_int_equal(ps_pool_tree_find_pool(tree, "adhoc")->operation_count, 2);
    /* bad names for new pools */
    assert_int_equal(try_start(tree, "e", "bob", "no spaces", 5, &op, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pool: a pool name may contain only"));
    /* Pools vanish with their last operation. */
    finish(tree, "a");
    assert_non_null(ps_pool_tree_find_pool(tree, "alice"));
    finish(tree, "c");
    assert_null(ps_pool_tree_find_pool(tree, "alice"));
    finish(tree, "b");
    assert_non_null(ps_pool_tree_find_pool(tree, "adhoc"));   /* bob's operation is still there */
    finish(tree, "d");
    assert_null(ps_pool_tree_find_pool(tree, "adhoc"));
    assert_int_equal(ps_pool_tree_pool_count(tree), 1);
    /* alice may create pools again */
    start(tree, "f", "alice", "x", 6);
    ps_pool_tree_free(tree);
}

static void test_ephemeral_subpools(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(NULL);
    create(tree, "research", NULL, "{\"create_ephemeral_subpools\": true,"
                                   " \"ephemeral_subpool_config\": {\"mode\": \"fifo\", \"max_operation_count\": 1}}");
    struct ps_tree_op *a = start(tree, "a", "alice", "research", 1);
    struct ps_pool *sub = ps_pool_tree_find_pool(tree, "research$alice");
    assert_non_null(sub);
    assert_ptr_equal(a->pool, sub);
    assert_true(sub->ephemeral);
    assert_false(sub->ephemeral_in_default_parent);   /* not counted per user */
    assert_int_equal(sub->config.mode, PS_MODE_FIFO);
    assert_int_equal(ps_pool_max_operations(sub), 1);
    struct ps_error err;
    struct ps_tree_op *op;
    assert_int_equal(try_start(tree, "b", "alice", "research", 2, &op, &err), PS_ELIMIT);
    assert_non_null(strstr(err.msg, "for pool \"research$alice\""));
    start(tree, "c", "bob", "research", 3);
    assert_non_null(ps_pool_tree_find_pool(tree, "research$bob"));
    assert_int_equal(ps_pool_tree_find_pool(tree, "research")->operation_count, 2);
    /* Reconfiguring the parent reconfigures its ephemeral children. */
    struct ps_value v = ps_value_number(5);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "research", "ephemeral_subpool_config/max_operation_count", &v,
                                                &err), 0);
    assert_int_equal(ps_pool_max_operations(sub), 5);
    start(tree, "b", "alice", "research", 4);
    finish(tree, "a");
    finish(tree, "b");
    assert_null(ps_pool_tree_find_pool(tree, "research$alice"));
    /* a fifo pool with create_ephemeral_subpools is refused */
    ps_error_init(&err);
    struct ps_value s = ps_value_string("fifo");
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "research", "mode", &s, &err), PS_EINVAL);
    ps_value_release(&s);
    ps_pool_tree_free(tree);
}

/* Turning create_ephemeral_subpools off moves the subpools' operations into the hub at once
 * (running stay running, pending stay pending, the hub's limit holds) and removes the subpools;
 * the moves are listed. */
static void test_stale_subpools_flattened(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(NULL);
    create(tree, "hub", NULL, "{\"create_ephemeral_subpools\": true, \"max_running_operation_count\": 1}");
    create(tree, "other", NULL, "{\"create_ephemeral_subpools\": true}");
    struct ps_tree_op *a = start(tree, "a", "alice", "hub", 1);
    struct ps_tree_op *b = start(tree, "b", "bob", "hub", 2);
    struct ps_tree_op *c = start(tree, "c", "carol", "other", 3);
    assert_true(a->running);
    assert_false(b->running);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value off = ps_value_bool(false);
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "hub", "create_ephemeral_subpools", &off, &err), 0);
    struct ps_pool *hub = ps_pool_tree_find_pool(tree, "hub");
    assert_ptr_equal(a->pool, hub);
    assert_ptr_equal(b->pool, hub);
    assert_true(a->running);
    assert_false(b->running);
    assert_ptr_equal(b->pending_by, hub);
    assert_int_equal(hub->running_operation_count, 1);
    assert_int_equal(hub->operation_count, 2);
    assert_int_equal(hub->child_operation_count, 2);
    assert_null(ps_pool_tree_find_pool(tree, "hub$alice"));
    assert_null(ps_pool_tree_find_pool(tree, "hub$bob"));
    assert_int_equal(ps_pool_tree_last_moved_count(tree), 2);
    /* another hub keeps its subpool */
    assert_string_equal(c->pool->name, "other$carol");
    finish(tree, "a");
    assert_true(b->running);
    ps_pool_tree_free(tree);
}

static void test_forbidden_and_acl(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(NULL);
    /* prod: only alice and bob (no inheritance from the tree's default of `users`) */
    create(tree, "prod", NULL,
           "{\"forbid_immediate_operations\": true, \"inherit_acl\": false,"
           " \"acl\": [{\"action\": \"allow\", \"subjects\": [\"alice\", \"bob\"],"
           " \"permissions\": [\"use\"]}]}");
    /* etl: bob is denied (deny wins over prod's allow) */
    create(tree, "etl", "prod",
           "{\"acl\": [{\"action\": \"deny\", \"subjects\": [\"bob\"], \"permissions\": [\"use\"]}]}");
    create(tree, "open", "prod", NULL);
    struct ps_error err;
    struct ps_tree_op *op;
    assert_int_equal(try_start(tree, "a", "alice", "prod", 1, &op, &err), PS_EINVAL);
    assert_string_equal(err.msg, "starting operations immediately in pool \"prod\" of pool tree \"physical\" is "
                                 "forbidden (forbid_immediate_operations)");
    /* subpools are fine */
    start(tree, "a", "alice", "etl", 1);
    assert_int_equal(try_start(tree, "b", "bob", "etl", 2, &op, &err), PS_EPERM);
    assert_string_equal(err.msg, "Access denied for user \"bob\": \"use\" permission for node "
                                 "//sys/pool_trees/physical/prod/etl is denied for \"bob\" by ACE at "
                                 "node //sys/pool_trees/physical/prod/etl");
    start(tree, "b", "bob", "open", 2);
    /* carol is not in prod's acl, so not in open's either */
    ps_error_init(&err);
    assert_int_equal(try_start(tree, "c", "carol", "open", 3, &op, &err), PS_EPERM);
    assert_string_equal(err.msg, "Access denied for user \"carol\": \"use\" permission for node "
                                 "//sys/pool_trees/physical/prod/open is not allowed by any matching ACE");
    /* the root: forbidden by default */
    assert_int_equal(try_start(tree, "r", "alice", "<Root>", 4, &op, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "forbid_immediate_operations_in_root"));
    struct ps_value no = ps_value_bool(false);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_config(tree, "forbid_immediate_operations_in_root", &no, &err), 0);
    op = start(tree, "r", "alice", "<Root>", 4);
    assert_true(op->pool->is_root);
    assert_true(op->running);
    assert_int_equal(ps_pool_tree_root(tree)->child_operation_count, 1);
    ps_pool_tree_free(tree);
}

static void test_change_operation_pool(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(NULL);
    create(tree, "a", NULL, "{\"max_running_operation_count\": 1, \"max_operation_count\": 3}");
    create(tree, "a1", "a", NULL);
    create(tree, "a2", "a", NULL);
    create(tree, "b", NULL, "{\"max_operation_count\": 1}");
    struct ps_tree_op *x = start(tree, "x", "u", "a1", 1);
    struct ps_tree_op *y = start(tree, "y", "u", "a2", 2);
    assert_false(y->running);
    struct ps_error err;
    ps_error_init(&err);
    /* Within a: the common ancestor a is not re-checked (it is full for running, not for count). */
    assert_int_equal(ps_pool_tree_change_operation_pool(tree, "x", "a2", &err), 0);
    assert_ptr_equal(x->pool, ps_pool_tree_find_pool(tree, "a2"));
    /* As upstream (ChangeParent, then OnOperationAddedToPool): the moved operation is attached
     * again before pending operations are re-checked, so it keeps its running slot. */
    assert_true(x->running);
    assert_false(y->running);
    /* Moving y to b frees nothing but runs y. */
    assert_int_equal(ps_pool_tree_change_operation_pool(tree, "y", "b", &err), 0);
    assert_true(y->running);
    assert_int_equal(ps_pool_tree_find_pool(tree, "a")->operation_count, 1);
    assert_int_equal(ps_pool_tree_find_pool(tree, "b")->operation_count, 1);
    /* b is full now */
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_check_operation_pool(tree, "x", "b", &err), PS_ELIMIT);
    assert_int_equal(ps_pool_tree_change_operation_pool(tree, "x", "b", &err), PS_ELIMIT);
    assert_ptr_equal(x->pool, ps_pool_tree_find_pool(tree, "a2"));
    /* a pool at its running limit refuses a move (the operation would turn pending with its
     * jobs still running), as upstream's ValidateAllOperationsCountsOnPoolChange */
    create(tree, "c", NULL, "{\"max_running_operation_count\": 0}");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_change_operation_pool(tree, "x", "c", &err), PS_ELIMIT);
    assert_non_null(strstr(err.msg, "running operations"));
    assert_ptr_equal(x->pool, ps_pool_tree_find_pool(tree, "a2"));
    assert_true(x->running);
    /* into a new ephemeral pool, which the old one does not outlive */
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_change_operation_pool(tree, "x", "scratch", &err), 0);
    assert_true(ps_pool_tree_find_pool(tree, "scratch")->ephemeral);
    assert_int_equal(ps_pool_tree_change_operation_pool(tree, "x", "a1", &err), 0);
    assert_null(ps_pool_tree_find_pool(tree, "scratch"));
    assert_int_equal(ps_pool_tree_change_operation_pool(tree, "nope", "a1", &err), PS_ENOENT);
    ps_pool_tree_free(tree);
}

/* A running operation moved under an ancestor above a lowered running limit stays running,
 * counted in its new pool, and the move is no start (the one rule of a move, as a stale
 * subpool's operations going to the hub). */
static void test_move_keeps_running(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(NULL);
    create(tree, "a", NULL, "{\"max_running_operation_count\": 2}");
    create(tree, "a1", "a", NULL);
    create(tree, "a2", "a", NULL);
    struct ps_tree_op *x = start(tree, "x", "u", "a1", 1);
    struct ps_tree_op *z = start(tree, "z", "u", "a2", 2);
    struct ps_value one = ps_value_number(1);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "a", "max_running_operation_count", &one, &err), 0);
    assert_true(x->running && z->running);   /* a lowered limit stops nothing */
    assert_int_equal(ps_pool_tree_change_operation_pool(tree, "x", "a2", &err), 0);
    assert_ptr_equal(x->pool, ps_pool_tree_find_pool(tree, "a2"));
    assert_true(x->running);
    assert_null(x->pending_by);
    assert_int_equal(ps_pool_tree_pending_count(tree), 0);
    assert_int_equal(ps_pool_tree_last_started_count(tree), 0);
    assert_int_equal(ps_pool_tree_find_pool(tree, "a2")->running_operation_count, 2);
    assert_int_equal(ps_pool_tree_find_pool(tree, "a")->running_operation_count, 2);
    ps_pool_tree_free(tree);
}

static void test_settings(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(NULL);
    create(tree, "p", NULL, NULL);
    struct ps_tree_op_settings s;
    memset(&s, 0, sizeof s);
    s.pool = "p";
    s.weight = (struct ps_opt_double){true, 3};
    s.resource_limits.set = 1u << PS_RES_CPU;
    s.resource_limits.r.v[PS_RES_CPU] = 500;
    s.scheduling_tag_filter = "ssd & !gpu";
    s.is_gang = true;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_tree_op *op;
    assert_int_equal(ps_pool_tree_add_operation(tree, "a", "u", 7, &s, &op, &err), 0);
    assert_true(op->weight == 3 && op->weight_specified);
    assert_true(op->max_share_ratio == 1.0);
    assert_int_equal(op->resource_limits.v[PS_RES_CPU], 500);
    assert_int_equal(op->resource_limits.v[PS_RES_MEMORY], PS_RES_INFINITE);
    assert_string_equal(op->scheduling_tag_filter, "ssd & !gpu");
    assert_non_null(op->filter);
    assert_true(op->is_gang);
    assert_int_equal(op->start_time_ms, 7);
    s.scheduling_tag_filter = "a &";
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_update_operation(tree, "a", &s, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "scheduling_tag_filter"));
    assert_string_equal(op->scheduling_tag_filter, "ssd & !gpu");
    s.scheduling_tag_filter = NULL;
    s.weight.set = false;
    assert_int_equal(ps_pool_tree_update_operation(tree, "a", &s, &err), 0);
    assert_null(op->filter);
    assert_false(op->weight_specified);
    s.weight = (struct ps_opt_double){true, 0};
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_add_operation(tree, "b", "u", 7, &s, &op, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "weight"));
    ps_pool_tree_free(tree);
}


/* The chain of a pool: its ancestors, the tree, //sys/pool_trees (pool_acl.h). */
static void test_pool_acl_chain(void **state)
{
    (void)state;
    struct ps_pool_tree *tree = new_tree(
        "{\"default_parent_pool\": \"a\", \"acl\": [{\"action\": \"allow\","
        " \"subjects\": [\"devs\"], \"permissions\": [\"write\"]}]}");
    create(tree, "a", NULL, NULL);
    create(tree, "b", "a", NULL);
    const struct ps_pool *b = ps_pool_tree_find_pool(tree, "b");
    static const char *const devs[] = {"alice"};
    static const struct ps_acl_group g[] = {{"devs", 1, devs}};
    static const struct ps_acl_groups groups = {1, g};
    struct ps_pool_access access = {&groups, NULL, NULL};
    /* the tree's ACE reaches b through a; the default root ACL gives use to users */
    assert_int_equal(ps_pool_acl_check(&access, tree, b, "alice", PS_PERM_WRITE), PS_ACL_ALLOW);
    assert_int_equal(ps_pool_acl_check(&access, tree, b, "carol", PS_PERM_WRITE), PS_ACL_DENY);
    /* the acting superuser (an admin token's user) is allowed everything, no one else */
    struct ps_pool_access acting = {&groups, NULL, "carol"};
    assert_int_equal(ps_pool_acl_check(&acting, tree, b, "carol", PS_PERM_WRITE), PS_ACL_ALLOW);
    assert_int_equal(ps_pool_acl_require(&acting, tree, b, "carol", PS_PERM_ADMINISTER, NULL), 0);
    assert_int_equal(ps_pool_acl_check(&acting, tree, b, "dave", PS_PERM_WRITE), PS_ACL_DENY);
    assert_int_equal(ps_pool_acl_check(&access, tree, b, "carol", PS_PERM_USE), PS_ACL_ALLOW);
    assert_int_equal(ps_pool_acl_check(NULL, tree, b, "alice", PS_PERM_WRITE), PS_ACL_DENY);
    /* the tree's inherit_acl cuts //sys/pool_trees off */
    struct ps_value no = ps_value_bool(false);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_config(tree, "inherit_acl", &no, &err), 0);
    ps_error_init(&err);
    assert_int_equal(ps_pool_acl_require(&access, tree, b, "carol", PS_PERM_USE, &err), PS_EPERM);
    assert_string_equal(err.msg, "Access denied for user \"carol\": \"use\" permission for node "
                                 "//sys/pool_trees/physical/a/b is not allowed by any matching ACE");
    /* an ephemeral pool (alice's, under the default parent a) inherits from its parent */
    struct ps_tree_op *op = NULL;
    assert_int_equal(try_start(tree, "x", "alice", NULL, 1, &op, &err), PS_EPERM);
    /* checked on the parent: the ephemeral pool does not exist yet */
    assert_string_equal(err.msg, "Access denied for user \"alice\": \"use\" permission for node "
                                 "//sys/pool_trees/physical/a is not allowed by any matching ACE");
    struct ps_value acl = json("[{\"action\": \"allow\", \"subjects\": [\"users\"],"
                               " \"permissions\": [\"use\"]}]");
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_set_pool_attr(tree, "a", "acl", &acl, &err), 0);
    ps_value_release(&acl);
    op = start(tree, "x", "alice", NULL, 1);
    assert_true(op->pool->ephemeral);
    /* the root's ACL decides for //sys/pool_trees itself */
    assert_int_equal(ps_pool_acl_check(&access, NULL, NULL, "carol", PS_PERM_USE), PS_ACL_ALLOW);
    assert_int_equal(ps_pool_acl_check(&access, NULL, NULL, "carol", PS_PERM_WRITE), PS_ACL_DENY);
    ps_pool_tree_free(tree);
}

/* A move to another tree: the subtree with its attributes, all or nothing. */
static void test_move_to_other_tree(void **state)
{
    (void)state;
    struct ps_pool_tree *a = new_tree(NULL), *b = new_tree(NULL);
    create(a, "nirvana", NULL, "{\"weight\": 3}");
    create(a, "child", "nirvana", "{\"max_operation_count\": 7}");
    create(b, "logfeller", NULL, NULL);
    create(b, "child", NULL, NULL);
    struct ps_error err;
    ps_error_init(&err);
    /* a name of the subtree taken there: refused, nothing changed */
    assert_int_equal(ps_pool_tree_move_pool_to_tree(a, "nirvana", b, "logfeller", "nirvana", &err),
                     PS_EEXIST);
    assert_non_null(strstr(err.msg, "\"child\""));
    assert_non_null(ps_pool_tree_find_pool(a, "child"));
    assert_null(ps_pool_tree_find_pool(b, "nirvana"));
    assert_int_equal(ps_pool_tree_pool_count(b), 2);
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_remove_pool(b, "child", &err), 0);
    /* an operation in the subtree: refused */
    struct ps_tree_op *op = start(a, "op", "u", "child", 1);
    assert_int_equal(ps_pool_tree_move_pool_to_tree(a, "nirvana", b, "logfeller", "n2", &err),
                     PS_ESTATE);
    ps_pool_tree_remove_operation(a, op->id, NULL);
    /* moved, renamed, with its child and their attributes */
    ps_error_init(&err);
    int mv = ps_pool_tree_move_pool_to_tree(a, "nirvana", b, "logfeller", "n2", &err);
    if (mv != 0)
        fail_msg("move: %s", err.msg);
    assert_int_equal(ps_pool_tree_pool_count(a), 0);
    struct ps_pool *n2 = ps_pool_tree_find_pool(b, "n2"), *child = ps_pool_tree_find_pool(b, "child");
    assert_non_null(n2);
    assert_string_equal(n2->parent->name, "logfeller");
    assert_ptr_equal(child->parent, n2);
    assert_true(n2->config.weight.set && n2->config.weight.value == 3);
    assert_true(child->config.max_operation_count.set && child->config.max_operation_count.value == 7);
    ps_pool_tree_free(a);
    ps_pool_tree_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_limit_at_parent),
        cmocka_unit_test(test_pending_same_millisecond_in_registration_order),
        cmocka_unit_test(test_blocking_pool_is_the_lowest),
        cmocka_unit_test(test_operation_count_refused_at_ancestor),
        cmocka_unit_test(test_user_pools_under_default_parent),
        cmocka_unit_test(test_ephemeral_subpools),
        cmocka_unit_test(test_stale_subpools_flattened),
        cmocka_unit_test(test_forbidden_and_acl),
        cmocka_unit_test(test_pool_acl_chain),
        cmocka_unit_test(test_change_operation_pool),
        cmocka_unit_test(test_move_keeps_running),
        cmocka_unit_test(test_settings),
        cmocka_unit_test(test_move_to_other_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
