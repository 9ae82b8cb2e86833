/* The tree model driving the real engine: build -> fair share update -> apply, then the
 * starvation check, as the scheduler loop will. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "core/fair_share.h"
#include "core/nodes.h"
#include "core/op_spec.h"
#include "core/operation.h"
#include "core/pool_tree.h"
#include "core/tree_fs.h"
#include "core/tree_starvation.h"
#include "value_helpers.h"

struct world {
    struct ps_pool_tree *tree;
    struct ps_node *node;
    struct ps_tree_fs fs;
    struct ps_fs_update *update;
};

static struct ps_resources whole_cluster(void)
{
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_USER_SLOTS] = 100;
    r.v[PS_RES_CPU] = 100 * PS_CPU_SCALE;
    r.v[PS_RES_MEMORY] = 1000;
    return r;
}

static void world_init(struct world *w, const char *pools)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(pools);
    w->tree = ps_pool_tree_new("physical", &doc, &err);
    ps_value_release(&doc);
    if (!w->tree)
        fail_msg("%s", err.msg);
    struct ps_resources total = whole_cluster();
    const char *tags[] = {"internal"};
    w->node = ps_node_new("n1", tags, 1, &total, &err);
    assert_int_equal(ps_pool_tree_add_node(w->tree, w->node, &err), 0);
    ps_tree_fs_init(&w->fs);
    w->update = ps_fs_update_new();
    assert_non_null(w->update);
}

static void world_release(struct world *w)
{
    ps_fs_update_free(w->update);
    ps_tree_fs_release(&w->fs);
    ps_pool_tree_free(w->tree);
    ps_node_free(w->node);
}

static struct ps_tree_op *start(struct world *w, const char *id, const char *pool, int64_t start_ms)
{
    struct ps_tree_op_settings s;
    memset(&s, 0, sizeof s);
    s.pool = pool;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_tree_op *op;
    if (ps_pool_tree_add_operation(w->tree, id, "user", start_ms, &s, &op, &err) != 0)
        fail_msg("%s", err.msg);
    op->demand = whole_cluster();
    op->pending_job_count = 100;
    return op;
}

static void fair_share_update(struct world *w, int64_t now_ms)
{
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_build_fs(w->tree, &w->fs, now_ms, &err), 0);
    if (ps_fs_update_run(w->update, w->fs.elems, w->fs.count, w->fs.fs_pools, w->fs.pool_count, &w->fs.options, &w->fs.input, &err) != 0)
        fail_msg("update: %s", err.msg);
    assert_int_equal(ps_pool_tree_apply_fs(w->tree, &w->fs, &err), 0);
}

/* semantics.md 1.7: strong guarantees 0.6 and 0.2 with equal weights give 0.7 / 0.3 under
 * vector HDRF (guarantee plus a weight-proportional remainder). */
static void test_guarantees_through_the_engine(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "{\"pools\": [{\"name\": \"a\", \"strong_guarantee_resources\": {\"cpu\": 60}},"
                   "            {\"name\": \"b\", \"strong_guarantee_resources\": {\"cpu\": 20}}]}");
    struct ps_tree_op *oa = start(&w, "oa", "a", 1);
    struct ps_tree_op *ob = start(&w, "ob", "b", 2);
    fair_share_update(&w, 1000);
    struct ps_pool *a = ps_pool_tree_find_pool(w.tree, "a"), *b = ps_pool_tree_find_pool(w.tree, "b");
    assert_true(a->dynamic.valid && b->dynamic.valid);
    assert_true(fabs(a->dynamic.fair_share_ratio - 0.7) < 1e-6);
    assert_true(fabs(b->dynamic.fair_share_ratio - 0.3) < 1e-6);
    assert_true(fabs(oa->dynamic.fair_share_ratio - 0.7) < 1e-6);
    assert_true(fabs(ob->dynamic.fair_share_ratio - 0.3) < 1e-6);
    assert_true(fabs(a->dynamic.guaranteed_ratio - 0.6) < 1e-9);
    assert_true(fabs(a->dynamic.min_share_ratio - 0.6) < 1e-9);
    assert_true(fabs(a->dynamic.demand_ratio - 1.0) < 1e-9);
    assert_true(a->dynamic.usage_ratio == 0.0);
    assert_true(fabs(ps_pool_tree_root(w.tree)->dynamic.fair_share_ratio - 1.0) < 1e-6);

    /* Starvation: nobody uses anything, so both are below fair share; after the timeout they
     * starve. */
    struct ps_starvation_config config;
    ps_tree_config_starvation_config(ps_pool_tree_config(w.tree), &config);
    assert_int_equal(config.timeout_ms, 30000);
    struct ps_starvation_element elems[8];
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_build_starvation(w.tree, &w.fs, elems, &err), 0);
    assert_int_equal(ps_starvation_update(elems, w.fs.count, &config, 1000, NULL, &err), 0);
    assert_int_equal(ps_pool_tree_apply_starvation(w.tree, &w.fs, elems, &err), 0);
    assert_int_equal(oa->dynamic.status, PS_STATUS_BELOW_FAIR_SHARE);
    assert_int_equal(oa->dynamic.starvation, PS_NON_STARVING);
    assert_true(oa->dynamic.below_fair_share_since_ms == 1000);
    /* the since-time survives a rebuild */
    fair_share_update(&w, 40000);
    assert_int_equal(ps_pool_tree_build_starvation(w.tree, &w.fs, elems, &err), 0);
    assert_true(elems[oa->fs_index].below_fair_share_since_ms == 1000);
    int changed = 0;
    assert_int_equal(ps_starvation_update(elems, w.fs.count, &config, 40000, &changed, &err), 0);
    assert_int_equal(ps_pool_tree_apply_starvation(w.tree, &w.fs, elems, &err), 0);
    assert_int_equal(oa->dynamic.starvation, PS_STARVING);
    assert_true(changed > 0);
    /* a suspended operation is not schedulable, hence normal */
    oa->suspended = true;
    assert_int_equal(ps_pool_tree_build_starvation(w.tree, &w.fs, elems, &err), 0);
    assert_false(elems[oa->fs_index].schedulable);
    /* the scheduling stages' options */
    struct ps_sched_options so;
    ps_pool_tree_sched_options(w.tree, &so);
    assert_int_equal(so.total.v[PS_RES_CPU], 100 * PS_CPU_SCALE);
    assert_false(so.fifo_order_in_fifo_pools);
    assert_non_null(so.filter_eval);
    struct ps_value order = ps_value_string("fifo");
    assert_int_equal(ps_pool_tree_set_config(w.tree, "fifo_pool_scheduling_order", &order, &err), 0);
    ps_value_release(&order);
    ps_pool_tree_sched_options(w.tree, &so);
    assert_true(so.fifo_order_in_fifo_pools);
    /* a changed tree is refused */
    start(&w, "late", "a", 3);
    assert_int_equal(ps_pool_tree_build_starvation(w.tree, &w.fs, elems, &err), PS_ESTATE);
    world_release(&w);
}

/* An operation's spec min_share_resources (op_spec.h) through the tree model and its dry-run
 * copy into the engine: it lowers the sibling pool's inferred memory guarantee (fair_share.h)
 * and gives the operation no guarantee (min_share_ratio 0, as upstream's current code). */
static void test_operation_spec_guarantee_reaches_the_engine(void **state)
{
    (void)state;
    static const char *pools =
        "{\"pools\": [{\"name\": \"p\", \"strong_guarantee_resources\": {\"cpu\": 40, \"memory\": 100}},"
        " {\"name\": \"a\", \"parent\": \"p\", \"strong_guarantee_resources\": {\"cpu\": 20}}]}";
    struct world w;
    world_init(&w, pools);
    struct ps_operation_spec spec;
    assert_int_equal(ps_operation_spec_init(&spec), 0);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json("{\"pool\": \"p\", \"min_share_resources\": {\"cpu\": 20, \"memory\": 80}}");
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, &err), 0);
    ps_value_release(&doc);
    struct ps_tree_op_settings s;
    ps_operation_spec_settings(&spec, "physical", &s);
    struct ps_tree_op *op;
    if (ps_pool_tree_add_operation(w.tree, "op", "user", 1, &s, &op, &err) != 0)
        fail_msg("%s", err.msg);
    op->demand = whole_cluster();
    op->pending_job_count = 100;
    start(&w, "oa", "a", 2);
    fair_share_update(&w, 1000);
    const struct ps_pool *a = ps_pool_tree_find_pool(w.tree, "a");
    /* 100 - 80 left for a, which would infer 20/40 x 100 = 50 */
    assert_int_equal(a->fs_pool.inferred_strong_guarantee.v[PS_RES_MEMORY], 20);
    assert_true(op->dynamic.valid);
    assert_true(op->dynamic.min_share_ratio == 0.0);
    assert_true(op->dynamic.fair_share_ratio > 0.0);

    /* The dry run's copy carries it. */
    doc = json(pools);
    struct ps_pool_tree *copy = ps_pool_tree_new("physical", &doc, &err);
    ps_value_release(&doc);
    assert_non_null(copy);
    assert_int_equal(ps_pool_tree_clone_state(copy, w.tree, &err), 0);
    struct ps_tree_op *cop = ps_pool_tree_find_operation(copy, "op");
    assert_non_null(cop);
    assert_int_equal(cop->strong_guarantee_resources.r.v[PS_RES_MEMORY], 80);
    assert_true(cop->strong_guarantee_resources.set >> PS_RES_CPU & 1);
    ps_pool_tree_clone_free(copy);
    ps_operation_spec_release(&spec);
    world_release(&w);
}

/* Integral state lives in the pool between updates. */
static void test_integral_volume_carried_across_updates(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "{\"pools\": [{\"name\": \"burst\", \"integral_guarantees\": {\"guarantee_type\": \"burst\","
                   " \"resource_flow\": {\"cpu\": 1}, \"burst_guarantee_resources\": {\"cpu\": 20}}}]}");
    start(&w, "op", "burst", 1);
    struct ps_pool *burst = ps_pool_tree_find_pool(w.tree, "burst");
    fair_share_update(&w, 0);   /* no previous update: nothing accrues */
    assert_true(burst->accumulated_volume.v[PS_RES_CPU] == 0.0);
    fair_share_update(&w, 60000);
    /* 60 s of 1 cpu of flow (nothing consumed: the first update gave no integral share) */
    assert_true(fabs(burst->accumulated_volume.v[PS_RES_CPU] - 60.0) < 1e-6);
    assert_true(burst->fs_pool.specified_resource_flow_ratio > 0.0);
    assert_int_equal(w.fs.input.previous_update_time_ms, 0);
    /* and the next build hands it back to the engine */
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_build_fs(w.tree, &w.fs, 120000, &err), 0);
    assert_true(fabs(w.fs.fs_pools[w.fs.elems[burst->fs_index].in.pool].in.accumulated_volume.v[PS_RES_CPU] - 60.0) < 1e-6);
    assert_int_equal(w.fs.input.previous_update_time_ms, 60000);
    world_release(&w);
}

static void test_preempt_config(void **state)
{
    (void)state;
    struct ps_tree_config cfg;
    ps_tree_config_init(&cfg);
    struct ps_preempt_config p;
    ps_tree_config_preempt_config(&cfg, &p);
    assert_true(p.preemption_satisfaction_threshold == 1.0);
    assert_true(p.aggressive_preemption_satisfaction_threshold == 0.2);
    assert_int_equal(p.max_unpreemptible_running_allocation_count, -1);
    assert_int_equal(p.preemptive_scheduling_backoff_ms, 5000);
    cfg.max_unpreemptible_running_allocation_count = (struct ps_opt_int){true, 10};
    cfg.enable_conditional_preemption = false;
    ps_tree_config_preempt_config(&cfg, &p);
    assert_int_equal(p.max_unpreemptible_running_allocation_count, 10);
    assert_false(p.enable_conditional_preemption);
    struct ps_pool_config pool;
    ps_pool_config_init(&pool);
    struct ps_starvation_settings s;
    ps_pool_config_starvation_settings(&pool, &s);
    assert_false(s.has_tolerance || s.has_timeout || s.has_enable_aggressive || s.has_aggressive_timeout);
    pool.fair_share_starvation_tolerance = (struct ps_opt_double){true, 0.5};
    pool.enable_aggressive_starvation = (struct ps_opt_bool){true, true};
    ps_pool_config_starvation_settings(&pool, &s);
    assert_true(s.has_tolerance && s.tolerance == 0.5);
    assert_true(s.has_enable_aggressive && s.enable_aggressive);
    ps_pool_config_release(&pool);
    ps_tree_config_release(&cfg);
}

static void test_non_preemptible_threshold_levels(void **state)
{
    (void)state;
    struct world w;
    world_init(&w, "{\"max_unpreemptible_running_allocation_count\": 3, \"pools\": ["
                   " {\"name\": \"p\", \"non_preemptible_resource_usage_threshold\": {\"cpu\": 4}},"
                   " {\"name\": \"c\", \"parent\": \"p\"}, {\"name\": \"q\"}]}");
    struct ps_tree_op *in_c = start(&w, "in_c", "c", 1);
    struct ps_tree_op *in_q = start(&w, "in_q", "q", 2);
    struct ps_preemptible_config pc;
    ps_tree_op_preemptible_config(in_c, &pc);   /* from pool p */
    assert_true(pc.has_non_preemptible_usage_threshold);
    assert_int_equal(pc.non_preemptible_usage_threshold.v[PS_RES_CPU], 400);
    assert_int_equal(pc.non_preemptible_usage_threshold.v[PS_RES_USER_SLOTS], PS_RES_INFINITE);
    assert_int_equal(pc.total.v[PS_RES_CPU], 100 * PS_CPU_SCALE);
    assert_true(pc.threshold == 1.0 && pc.aggressive_threshold == 0.2);
    ps_tree_op_preemptible_config(in_q, &pc);   /* the tree's: user_slots from the count */
    assert_true(pc.has_non_preemptible_usage_threshold);
    assert_int_equal(pc.non_preemptible_usage_threshold.v[PS_RES_USER_SLOTS], 3);
    assert_int_equal(pc.non_preemptible_usage_threshold.v[PS_RES_CPU], PS_RES_INFINITE);
    in_q->non_preemptible_resource_usage_threshold.set = 1u << PS_RES_MEMORY;   /* the spec's */
    in_q->non_preemptible_resource_usage_threshold.r.v[PS_RES_MEMORY] = 7;
    ps_tree_op_preemptible_config(in_q, &pc);
    assert_int_equal(pc.non_preemptible_usage_threshold.v[PS_RES_MEMORY], 7);
    assert_int_equal(pc.non_preemptible_usage_threshold.v[PS_RES_USER_SLOTS], PS_RES_INFINITE);
    world_release(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guarantees_through_the_engine),
        cmocka_unit_test(test_operation_spec_guarantee_reaches_the_engine),
        cmocka_unit_test(test_integral_volume_carried_across_updates),
        cmocka_unit_test(test_preempt_config),
        cmocka_unit_test(test_non_preemptible_threshold_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
