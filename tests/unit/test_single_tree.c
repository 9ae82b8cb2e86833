/* schedule_in_single_tree's choice (core/single_tree.h): the tree with the largest reserve of
 * the operation's pool after its demand, trees where it would wait skipped, the guarantee rule
 * and the fallbacks. Two trees "a" and "b" of one node each (4 cpu, 4 slots), pool "research"
 * in both; each tree's fair share update is run by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/fair_share.h"
#include "core/op_spec.h"
#include "core/pool_tree.h"
#include "core/single_tree.h"
#include "core/strategy.h"
#include "core/tree_fs.h"
#include "value_helpers.h"

static void update(struct ps_pool_tree *tree)
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
}

static struct ps_strategy *cluster(void)
{
    struct ps_strategy *s = ps_strategy_new();
    struct ps_error err;
    ps_error_init(&err);
    const char *names[] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        char cfg[128];
        snprintf(cfg, sizeof cfg, "{\"nodes_filter\": \"%s\", \"pools\": [{\"name\": \"research\"}]}",
                 names[i]);
        struct ps_value doc = json(cfg);
        assert_int_equal(ps_strategy_add_tree(s, names[i], &doc, &err), 0);
        ps_value_release(&doc);
        struct ps_resources r = ps_resources_zero();
        r.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 4);
        r.v[PS_RES_USER_SLOTS] = 4;
        r.v[PS_RES_MEMORY] = (int64_t)16 << 30;
        const char *tags[] = {names[i]};
        assert_int_equal(ps_strategy_register_node(s, names[i], tags, 1, &r, &err), 0);
    }
    return s;
}

static void update_all(struct ps_strategy *s)
{
    for (int i = 0; i < ps_strategy_tree_count(s); i++)
        update(ps_strategy_tree_at(s, i));
}

/* The chosen tree's name for spec text, or the error code with its message in *msg. */
static const char *choose(struct ps_strategy *s, const char *spec_text, int *rc, char *msg)
{
    struct ps_operation_spec spec;
    assert_int_equal(ps_operation_spec_init(&spec), 0);
    struct ps_value doc = json(spec_text);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), 0);
    ps_value_release(&doc);
    struct ps_resources demand = ps_resources_zero();
    demand.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 2);
    demand.v[PS_RES_USER_SLOTS] = 2;
    int best = -1;
    *rc = ps_strategy_choose_single_tree(s, &spec, "alice", demand, &best, &err);
    if (msg)
        snprintf(msg, 256, "%.200s", err.msg);
    static char name[16];
    snprintf(name, sizeof name, "%s", best >= 0 ? spec.pool_trees.items[best] : "-");
    ps_operation_spec_release(&spec);
    return name;
}

#define BOTH "{\"pool\": \"research\", \"pool_trees\": [\"a\", \"b\"], \"schedule_in_single_tree\": true"

static void busy(struct ps_strategy *s, const char *id, const char *tree)
{
    char text[128];
    snprintf(text, sizeof text, "{\"pool\": \"research\", \"pool_trees\": [\"%s\"]}", tree);
    struct ps_value doc = json(text);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_operation *op = NULL;
    assert_int_equal(ps_strategy_start_operation(s, id, "bob", 1, &doc, &op, &err), 0);
    ps_value_release(&doc);
    struct ps_tree_op *m = ps_operation_membership(op, tree);
    m->demand.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 2);
    m->demand.v[PS_RES_USER_SLOTS] = 2;
    m->pending_job_count = 2;
}

static void test_choice(void **state)
{
    (void)state;
    struct ps_strategy *s = cluster();
    int rc;
    char msg[256];
    /* before any update there is no pool state: the first tree */
    assert_string_equal(choose(s, BOTH "}", &rc, NULL), "a");
    assert_int_equal(rc, 0);
    update_all(s);
    /* equal trees: the first */
    assert_string_equal(choose(s, BOTH "}", &rc, NULL), "a");
    /* demand in a's research: b */
    busy(s, "x", "a");
    update_all(s);
    assert_string_equal(choose(s, BOTH "}", &rc, NULL), "b");
    /* a strong guarantee in a's research outweighs that demand: a */
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value g = json("{\"cpu\": 4, \"user_slots\": 4}");
    assert_int_equal(ps_pool_tree_set_pool_attr(ps_strategy_find_tree(s, "a"), "research",
                                                "strong_guarantee_resources", &g, &err), 0);
    ps_value_release(&g);
    update_all(s);
    assert_string_equal(choose(s, BOTH "}", &rc, NULL), "a");
    /* only guaranteed trees count with consider_guarantees_for_single_tree */
    assert_string_equal(choose(s, BOTH ", \"consider_guarantees_for_single_tree\": true}", &rc, NULL), "a");
    assert_string_equal(choose(s, "{\"pool\": \"research\", \"pool_trees\": [\"b\"], "
                                  "\"consider_guarantees_for_single_tree\": true}", &rc, msg), "-");
    assert_int_equal(rc, PS_EINVAL);
    assert_non_null(strstr(msg, "Found no best tree for operation"));
    /* a's research full (max_running_operation_count 1, x runs there): b although a is better */
    struct ps_value one = json("1");
    assert_int_equal(ps_pool_tree_set_pool_attr(ps_strategy_find_tree(s, "a"), "research",
                                                "max_running_operation_count", &one, &err), 0);
    ps_value_release(&one);
    assert_string_equal(choose(s, BOTH "}", &rc, NULL), "b");
    /* an unknown tree */
    choose(s, "{\"pool_trees\": [\"a\", \"zz\"], \"schedule_in_single_tree\": true}", &rc, msg);
    assert_int_equal(rc, PS_ENOENT);
    ps_strategy_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_choice)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
