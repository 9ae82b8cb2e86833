/* The tree document's text with cached pool fragments (persist_tree.c): what a cached build
 * writes is what a fresh build writes, after every kind of pool change, and it holds the
 * values set (checked against the values the test set, not against the builder's output). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/pool_tree.h"
#include "io/json_value.h"
#include "value_helpers.h"
#include "server/persist.h"

static struct ps_pool_tree *tree;
static struct ps_persist_cache *cache;

static void check(int rc, struct ps_error *err)
{
    if (rc != 0)
        fail_msg("%s", err->msg);
}

static void create(const char *name, const char *parent, const char *attrs)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value v = json(attrs);
    check(ps_pool_tree_create_pool(tree, name, parent, &v, &err), &err);
    ps_value_release(&v);
}

static void set(const char *pool, const char *key, const char *value)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value v = json(value);
    check(ps_pool_tree_set_pool_attr(tree, pool, key, &v, &err), &err);
    ps_value_release(&v);
}

/* The document built with the cache, after checking it equals one built without. */
static json_t *doc(void)
{
    char *cached = ps_persist_tree_text(tree, &cache);
    char *fresh = ps_persist_tree_text(tree, NULL);
    assert_non_null(cached);
    assert_non_null(fresh);
    assert_string_equal(cached, fresh);
    json_t *d = json_loads(cached, 0, NULL);
    assert_non_null(d);
    free(cached);
    free(fresh);
    return d;
}

static const json_t *pool_of(const json_t *d, const char *name)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(d, "pools"), i, p)
        if (strcmp(json_string_value(json_object_get(p, "name")), name) == 0)
            return p;
    return NULL;
}

static double weight(const json_t *d, const char *pool)
{
    const json_t *p = pool_of(d, pool);
    assert_non_null(p);
    return json_number_value(json_object_get(p, "weight"));
}

static const char *parent(const json_t *d, const char *pool)
{
    const json_t *p = pool_of(d, pool);
    assert_non_null(p);
    return json_string_value(json_object_get(p, "parent"));
}

static int setup(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value v = json("{}");
    tree = ps_pool_tree_new("physical", &v, &err);
    ps_value_release(&v);
    assert_non_null(tree);
    cache = NULL;
    create("a", NULL, "{\"weight\": 2}");
    create("b", "a", "{\"weight\": 3, \"max_operation_count\": 7}");
    create("c", NULL, "{}");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ps_persist_cache_free(cache);
    ps_pool_tree_free(tree);
    return 0;
}

static void set_attr_is_written(void **state)
{
    (void)state;
    json_t *d = doc();
    assert_true(weight(d, "b") == 3.0);
    json_decref(d);
    set("b", "weight", "5");   /* b's fragment is cached now: a stale one would still say 3 */
    d = doc();
    assert_true(weight(d, "b") == 5.0);
    assert_true(weight(d, "a") == 2.0);
    assert_int_equal(json_integer_value(json_object_get(pool_of(d, "b"), "max_operation_count")), 7);
    json_decref(d);
}

static void apply_attrs_is_written(void **state)
{
    (void)state;
    json_decref(doc());
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value m = json("{\"weight\": 9}");
    check(ps_pool_tree_apply_pool_attrs(tree, "c", &m, &err), &err);
    ps_value_release(&m);
    json_t *d = doc();
    assert_true(weight(d, "c") == 9.0);
    json_decref(d);
}

static void move_remove_recreate(void **state)
{
    (void)state;
    json_decref(doc());
    struct ps_error err;
    ps_error_init(&err);
    check(ps_pool_tree_move_pool(tree, "b", "c", &err), &err);
    json_t *d = doc();
    assert_string_equal(parent(d, "b"), "c");
    json_decref(d);
    check(ps_pool_tree_remove_pool(tree, "b", &err), &err);
    d = doc();
    assert_null(pool_of(d, "b"));
    json_decref(d);
    create("b", "a", "{\"weight\": 4}");   /* same name, maybe the same memory: a new config */
    d = doc();
    assert_true(weight(d, "b") == 4.0);
    assert_null(json_object_get(pool_of(d, "b"), "max_operation_count"));
    json_decref(d);
}

/* The dynamic state is written afresh each time, and reads back as a tree (a restart). */
static void dynamic_state_and_reload(void **state)
{
    (void)state;
    json_decref(doc());
    struct ps_pool *b = ps_pool_tree_find_pool(tree, "b");
    b->accumulated_volume.v[PS_RES_CPU] = 12.5;
    b->dynamic.below_fair_share_since_ms = 1234;
    json_t *d = doc();
    assert_true(json_real_value(json_object_get(
                    json_object_get(pool_of(d, "b"), "accumulated_resource_volume"), "cpu")) == 12.5);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(d, "below_fair_share_since"), "b")),
                     1234);
    json_t *config = json_deep_copy(json_object_get(d, "config"));
    json_object_set(config, "pools", json_object_get(d, "pools"));
    struct ps_value v;
    struct ps_error err;
    ps_error_init(&err);
    check(ps_json_to_value(config, &v, &err), &err);
    struct ps_pool_tree *back = ps_pool_tree_new("physical", &v, &err);
    if (!back)
        fail_msg("%s", err.msg);
    ps_value_release(&v);
    json_decref(config);
    struct ps_pool *b2 = ps_pool_tree_find_pool(back, "b");
    assert_non_null(b2);
    assert_true(b2->accumulated_volume.v[PS_RES_CPU] == 12.5);
    assert_string_equal(b2->parent->name, "a");
    ps_pool_tree_free(back);
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(set_attr_is_written, setup, teardown),
        cmocka_unit_test_setup_teardown(apply_attrs_is_written, setup, teardown),
        cmocka_unit_test_setup_teardown(move_remove_recreate, setup, teardown),
        cmocka_unit_test_setup_teardown(dynamic_state_and_reload, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
