/* Vector HDRF: strong guarantees (inference, adjustment, alerts), limits, weights, FIFO order,
 * gang operations and input validation. */
#include "fs_test_util.h"

static bool has_alert(const struct t_tree *t, const char *needle)
{
    for (int i = 0; i < ps_fs_update_alert_count(t->u); i++)
        if (strstr(ps_fs_update_alert(t->u, i), needle))
            return true;
    return false;
}

static void test_strong_guarantee_adjustment_to_total(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool_sg(t, 0, "strongA", 30.0);
    int b = t_pool_sg(t, 0, "strongB", 90.0);
    t_op(t, a, "a", t_total100());
    t_op(t, b, "b", t_total100());
    t_run(t);
    T_EQ(t_unit(0.25), t_fs(t, a)->strong_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, a)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, a)->weight_proportional);
    T_EQ(t_unit(0.75), t_fs(t, b)->strong_guarantee);
    T_EQ(t_unit(0.0), t_fs(t, b)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, b)->weight_proportional);
    /* Overcommit is an alert, not an error. */
    assert_true(has_alert(t, "strong guarantees and burst guarantees exceed total cluster resources"));
    assert_true(has_alert(t, "strong guarantees and resource flows exceed total cluster resources"));
    t_free(t);
}

static void test_strong_guarantee_adjustment_with_large_pool(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool_sg(t, 0, "strongA", 30.0);
    int b = t_pool_sg(t, 0, "strongB", 120.0);
    t_op(t, a, "a", t_total100());
    t_op(t, b, "b", t_total100());
    t_run(t);
    T_EQ(t_unit(0.2), t_fs(t, a)->strong_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, a)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, a)->weight_proportional);
    T_EQ(t_unit(0.8), t_fs(t, b)->strong_guarantee);
    T_EQ(t_unit(0.0), t_fs(t, b)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, b)->weight_proportional);
    t_free(t);
}

static void test_strong_plus_burst_adjustment_to_total(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int strong = t_pool_sg(t, 0, "strong", 90.0);
    int burst = t_integral(t, 0, "burst", PS_GUARANTEE_BURST, 60.0, 60.0, -1);
    t_op(t, strong, "s", t_total100());
    t_op(t, burst, "b", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    /* One factor scales the strong guarantees and the burst ratios alike: 0.9 : 0.6. */
    T_NEAR(t_unit(0.6), t_fs(t, strong)->strong_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, strong)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, strong)->weight_proportional);
    T_EQ(t_unit(0.0), t_fs(t, burst)->strong_guarantee);
    T_NEAR(t_unit(0.4), t_fs(t, burst)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, burst)->weight_proportional);
    assert_true(has_alert(t, "burst guarantees exceed"));
    /* The orchid keeps the specified ratio. */
    T_DOUBLE_NEAR(0.6, t->p[burst].out.specified_burst_ratio, 1e-15);
    t_free(t);
}

static void test_limits_lower_than_strong_guarantee(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int parent = t_pool_sg(t, 0, "strongParent", 100.0);
    t->e[parent].in.resource_limits.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 50.0);
    int child = t_pool_sg(t, parent, "strongChild", 100.0);
    t_op(t, child, "op", t_total100());
    t_run(t);
    T_EQ(t_unit(0.5), t_fs(t, parent)->strong_guarantee);
    T_NEAR(t_unit(0.5), t_fs(t, parent)->total);
    T_EQ(t_unit(0.5), t_fs(t, child)->strong_guarantee);
    T_NEAR(t_unit(0.5), t_fs(t, child)->total);
    t_free(t);
}

static void test_inferred_strong_guarantees(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), false);
    int top = t_pool_sg(t, 0, "top", 10.0);
    int parent = t_pool_sg(t, 0, "parent", 40.0);
    t->p[parent].in.strong_guarantee.r.v[PS_RES_MEMORY] = 100 * MB;
    t->p[parent].in.strong_guarantee.set |= 1u << PS_RES_MEMORY;
    int a = t_pool_sg(t, parent, "a", 20.0);
    int b = t_pool_sg(t, parent, "b", 20.0);
    t->p[b].in.strong_guarantee.r.v[PS_RES_MEMORY] = 80 * MB;
    t->p[b].in.strong_guarantee.set |= 1u << PS_RES_MEMORY;
    t_run(t);
    /* Unspecified resources follow cpu: {cpu=10} of 100 is 10% of everything. */
    T_EQ(t_unit(0.1), t->p[top].out.strong_guarantee_share);
    assert_true(ps_resources_equal(t->p[top].out.inferred_strong_guarantee, t_res(10, 10, 100 * MB)));
    assert_true(ps_resources_equal(t->p[parent].out.inferred_strong_guarantee, t_res(40, 40, 100 * MB)));
    /* Below the root, inferred values are scaled to the parent's residual: a would get
     * 20/40 x 100 MB = 50 MB but only 100 - 80 MB is left. */
    assert_true(ps_resources_equal(t->p[a].out.inferred_strong_guarantee, t_res(20, 20, 20 * MB)));
    assert_true(ps_resources_equal(t->p[b].out.inferred_strong_guarantee, t_res(20, 20, 80 * MB)));
    t_free(t);
}

/* An explicit guarantee so far above the cluster that its inferred memory (cpu ratio 1e11 x
 * 1000 MB) leaves int64: upstream's static_cast is undefined there (x86 makes it INT64_MIN, a
 * negative guarantee share); poolsched saturates it at PS_RES_INFINITE (fs_guarantees.c,
 * set_resource), and the adjustment to the total then scales every resource by the same
 * factor, with its alert. Found by fuzz_snapshot (its corpus keeps the input,
 * snapshot/huge-guarantee.json). */
static void test_inferred_guarantee_beyond_int64(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), false);
    int huge = t_pool_sg(t, 0, "huge", 1e13);
    t_op(t, huge, "op", t_total100());
    t_run(t);
    const struct ps_fs_pool_output *out = &t->p[huge].out;
    assert_true(out->inferred_strong_guarantee.v[PS_RES_MEMORY] == PS_RES_INFINITE);
    assert_true(out->inferred_strong_guarantee.v[PS_RES_USER_SLOTS] == 10000000000000LL);
    for (int r = 0; r < PS_RES_COUNT; r++) {
        assert_true(out->strong_guarantee_share.v[r] >= 0.0);
        assert_true(out->strong_guarantee_share.v[r] <= 1.0);
    }
    T_DOUBLE_NEAR(1.0, out->strong_guarantee_share.v[PS_RES_CPU], 1e-12);
    T_DOUBLE_NEAR(1.0, out->strong_guarantee_share.v[PS_RES_USER_SLOTS], 1e-12);
    assert_true(out->strong_guarantee_share.v[PS_RES_MEMORY] > 0.0);
    assert_true(has_alert(t, "strong guarantees and resource flows exceed total cluster resources"));
    t_free(t);
}

static void t_set(struct ps_resources_opt *sg, int r, int64_t v)
{
    sg->r.v[r] = v;
    sg->set |= 1u << r;
}

/* An operation's spec strong_guarantee_resources, as upstream's current vector HDRF: it counts
 * in its parent's inference like a pool's (its explicit memory lowers the residual; its cpu
 * makes it an implicit taker of memory that scales its siblings down), but the operation gets
 * no strong guarantee share: nothing of its fair share is strong guarantee. */
static void test_operation_guarantee_counts_only_in_inference(void **state)
{
    (void)state;
    /* Explicit: parent {cpu 40, memory 100 MB}; op {cpu 20, memory 80 MB} leaves 20 MB for a,
     * which would infer 20/40 x 100 MB = 50 MB. */
    struct t_tree *t = t_new(t_total100(), false);
    int parent = t_pool_sg(t, 0, "parent", 40.0);
    t_set(&t->p[parent].in.strong_guarantee, PS_RES_MEMORY, 100 * MB);
    int a = t_pool_sg(t, parent, "a", 20.0);
    int op = t_op(t, parent, "op", t_res(40, 40, 400 * MB));
    t_set(&t->e[op].in.strong_guarantee, PS_RES_CPU, ps_res_from_double(PS_RES_CPU, 20.0));
    t_set(&t->e[op].in.strong_guarantee, PS_RES_MEMORY, 80 * MB);
    t_run(t);
    assert_true(ps_resources_equal(t->p[a].out.inferred_strong_guarantee, t_res(20, 20, 20 * MB)));
    T_EQ(t_unit(0.0), t->e[op].out.fair_share.strong_guarantee);
    assert_true(t->e[op].out.fair_share.total.v[PS_RES_CPU] > 0.0);
    t_free(t);

    /* Implicit: op {cpu 20} would take 20/40 x 100 MB of memory like a; with b's explicit
     * 60 MB the residual is 40 MB, so a and op share it: a gets 20 MB (40 MB without op). */
    t = t_new(t_total100(), false);
    parent = t_pool_sg(t, 0, "parent", 40.0);
    t_set(&t->p[parent].in.strong_guarantee, PS_RES_MEMORY, 100 * MB);
    a = t_pool_sg(t, parent, "a", 20.0);
    int b = t_pool(t, parent, "b");
    t_set(&t->p[b].in.strong_guarantee, PS_RES_MEMORY, 60 * MB);
    op = t_op(t, parent, "op", t_res(40, 40, 400 * MB));
    t_set(&t->e[op].in.strong_guarantee, PS_RES_CPU, ps_res_from_double(PS_RES_CPU, 20.0));
    t_run(t);
    assert_true(ps_resources_equal(t->p[a].out.inferred_strong_guarantee, t_res(20, 20, 20 * MB)));
    assert_true(ps_resources_equal(t->p[b].out.inferred_strong_guarantee, t_res(0, 0, 60 * MB)));
    T_EQ(t_unit(0.0), t->e[op].out.fair_share.strong_guarantee);

    /* A negative value is refused by name. */
    t->e[op].in.strong_guarantee.r.v[PS_RES_CPU] = -1;
    ps_error_init(&t->err);
    assert_int_equal(ps_fs_update_run(t->u, t->e, t->n, t->p, t->n, &t->opt, &t->input, &t->err), PS_EINVAL);
    assert_non_null(strstr(t->err.msg, "operation op: strong_guarantee_resources/cpu is negative"));
    t_free(t);
}

static void test_weight_inference(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), false);
    t->opt.infer_weight_from_guarantees_share_multiplier = 2.0;
    int a = t_pool_sg(t, 0, "a", 10.0);
    int b = t_pool_sg(t, 0, "b", 30.0);
    int c = t_pool(t, 0, "c");
    int d = t_pool_sg(t, 0, "d", 30.0);
    t_weight(t, d, 7.0);
    t_op(t, a, "x", t_total100());
    t_op(t, b, "y", t_total100());
    t_run(t);
    /* (guarantee share + flow) x multiplier / the parent's (root: 0.7). */
    T_DOUBLE_NEAR(0.1 * 2 / 0.7, t->e[a].out.weight, 1e-12);
    T_DOUBLE_NEAR(0.3 * 2 / 0.7, t->e[b].out.weight, 1e-12);
    T_DOUBLE_NEAR(1.0, t->e[c].out.weight, 0.0);  /* no guarantee: 1 */
    T_DOUBLE_NEAR(7.0, t->e[d].out.weight, 0.0);  /* specified wins */
    /* The shares follow the weights: 1 : 3 between a and b. */
    double sa = t_fs(t, a)->total.v[PS_RES_CPU], sb = t_fs(t, b)->total.v[PS_RES_CPU];
    T_DOUBLE_NEAR(1.0, sa + sb, 1e-9);
    T_DOUBLE_NEAR(0.1 + 0.6 / 4, sa, 1e-7);
    t_free(t);
}

static void test_effective_limits(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool(t, 0, "a");
    t->e[a].in.max_share_ratio = 0.5;
    int b = t_pool(t, 0, "b");
    t->e[b].in.filter_limits = t_res(30, 20, 500 * MB);
    int x = t_op(t, a, "x", t_total100());
    t_op(t, b, "y", t_total100());
    int z = t_op(t, a, "z", t_total100());
    t->e[z].in.resource_limits = t_res(100, 10, 1000 * MB);
    t_run(t);
    T_EQ(t_unit(0.5), t->e[a].out.limits_share);
    T_EQ(t_vec(0.3, 0.2, 0, 0.5, 0), t->e[b].out.limits_share);
    assert_true(ps_resources_equal(t->e[b].out.resource_limits, t_res(30, 20, 500 * MB)));
    /* Infinite limits are capped by the total. */
    assert_true(ps_resources_equal(t->e[x].out.resource_limits, t_total100()));
    T_NEAR(t_unit(0.5), t_fs(t, a)->total);
    T_NEAR(t_vec(0.2, 0.2, 0, 0.2, 0), t_fs(t, b)->total);
    T_NEAR(t_vec(0.1, 0.1, 0, 0.1, 0), t_fs(t, z)->total);
    T_NEAR(t_vec(0.4, 0.4, 0, 0.4, 0), t_fs(t, x)->total);
    t_free(t);
}

static void test_fifo_order_and_shares(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int fifo = t_pool(t, 0, "fifo");
    t->p[fifo].in.mode = PS_MODE_FIFO;
    int late = t_op(t, fifo, "late", t_times(t_total100(), 0.4));
    t->e[late].in.start_time_ms = 300;
    int early = t_op(t, fifo, "early", t_times(t_total100(), 0.4));
    t->e[early].in.start_time_ms = 100;
    int tie1 = t_op(t, fifo, "tie1", t_times(t_total100(), 0.4));
    t->e[tie1].in.start_time_ms = 200;
    int tie2 = t_op(t, fifo, "tie2", t_times(t_total100(), 0.4));
    t->e[tie2].in.start_time_ms = 200;
    t_run(t);
    /* Default parameters [weight, start_time]; equal keys keep the array order. */
    assert_int_equal(t->e[early].out.fifo_index, 0);
    assert_int_equal(t->e[tie1].out.fifo_index, 1);
    assert_int_equal(t->e[tie2].out.fifo_index, 2);
    assert_int_equal(t->e[late].out.fifo_index, 3);
    assert_int_equal(t->e[fifo].out.fifo_index, -1);
    T_NEAR(t_unit(0.4), t_fs(t, early)->total);
    T_NEAR(t_unit(0.4), t_fs(t, tie1)->total);
    T_NEAR(t_unit(0.2), t_fs(t, tie2)->total);
    T_NEAR(t_unit(0.0), t_fs(t, late)->total);

    /* Heavier first, then fewer pending jobs. */
    t->p[fifo].in.fifo_sort[0] = PS_FIFO_WEIGHT;
    t->p[fifo].in.fifo_sort[1] = PS_FIFO_PENDING_JOB_COUNT;
    t->p[fifo].in.fifo_sort_count = 2;
    t_weight(t, late, 2.0);
    t->e[early].in.pending_job_count = 5;
    t->e[tie1].in.pending_job_count = 3;
    t->e[tie2].in.pending_job_count = 4;
    t_run(t);
    assert_int_equal(t->e[late].out.fifo_index, 0);
    assert_int_equal(t->e[tie1].out.fifo_index, 1);
    assert_int_equal(t->e[tie2].out.fifo_index, 2);
    assert_int_equal(t->e[early].out.fifo_index, 3);
    T_NEAR(t_unit(0.4), t_fs(t, late)->total);
    T_NEAR(t_unit(0.0), t_fs(t, early)->total);
    t_free(t);
}

/* upstream TestGangOperations (TEST_F, improved off). */
static void test_gang_operations(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), false);
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    t_gang(t, a, "X", t_res(60, 60, 600 * MB));
    int y = t_gang(t, b, "Y", t_res(60, 60, 600 * MB));

    t->opt.enable_step_function_for_gang_operations = false;
    t_run(t);
    T_EQ(t_vec(1.0, 1.0, 0.0, 1.0, 0.0), t_fs(t, 0)->total);
    T_EQ(t_vec(0.5, 0.5, 0.0, 0.5, 0.0), t_fs(t, a)->total);
    T_EQ(t_vec(0.5, 0.5, 0.0, 0.5, 0.0), t_fs(t, b)->total);

    t->opt.enable_step_function_for_gang_operations = true;
    t_run(t);
    T_EQ(t_vec(0.0, 0.0, 0.0, 0.0, 0.0), t_fs(t, 0)->total);
    T_EQ(t_vec(0.0, 0.0, 0.0, 0.0, 0.0), t_fs(t, a)->total);
    T_EQ(t_vec(0.0, 0.0, 0.0, 0.0, 0.0), t_fs(t, b)->total);

    t->input.total = t_times(t_total100(), 2.0);
    t_run(t);
    T_EQ(t_vec(0.6, 0.6, 0.0, 0.6, 0.0), t_fs(t, 0)->total);
    T_EQ(t_vec(0.3, 0.3, 0.0, 0.3, 0.0), t_fs(t, a)->total);
    T_EQ(t_vec(0.3, 0.3, 0.0, 0.3, 0.0), t_fs(t, b)->total);

    t->input.total = t_total100();
    t->e[y].in.demand = t_res(45, 45, 450 * MB);
    t_run(t);
    T_EQ(t_vec(0.45, 0.45, 0.0, 0.45, 0.0), t_fs(t, 0)->total);
    T_EQ(t_vec(0.0, 0.0, 0.0, 0.0, 0.0), t_fs(t, a)->total);
    T_EQ(t_vec(0.45, 0.45, 0.0, 0.45, 0.0), t_fs(t, b)->total);
    t_free(t);
}

static void test_gang_operations_improved(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), true);
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    t_gang(t, a, "X", t_res(60, 60, 600 * MB));
    t_gang(t, b, "Y", t_res(60, 60, 600 * MB));
    t_run(t);
    /* Steps are taken one child at a time, in children order. */
    T_EQ(t_vec(0.6, 0.6, 0.0, 0.6, 0.0), t_fs(t, 0)->total);
    T_EQ(t_vec(0.6, 0.6, 0.0, 0.6, 0.0), t_fs(t, a)->total);
    T_EQ(t_vec(0.0, 0.0, 0.0, 0.0, 0.0), t_fs(t, b)->total);
    t_free(t);
}

static void test_gang_operations_with_skewed_resources(void **state)
{
    (void)state;
    /* As upstream's test: the second gang ends up with an empty demand. */
    struct t_tree *t = t_new(t_total100(), true);
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    t_gang(t, a, "X", t_res(50, 60, 100 * MB));
    t_gang(t, b, "Y", ps_resources_zero());
    t_run(t);
    T_EQ(t_vec(0.5, 0.6, 0.0, 0.1, 0.0), t_fs(t, 0)->total);
    T_EQ(t_vec(0.5, 0.6, 0.0, 0.1, 0.0), t_fs(t, a)->total);
    T_EQ(t_vec(0.0, 0.0, 0.0, 0.0, 0.0), t_fs(t, b)->total);
    t_free(t);
}

static void test_multiple_gang_operations(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), true);
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    t->p[a].in.mode = PS_MODE_FIFO;
    t->p[b].in.mode = PS_MODE_FIFO;
    struct ps_resources d = t_res(30, 30, 300 * MB);
    int a1 = t_gang(t, a, "A1", d), a2 = t_gang(t, a, "A2", d);
    int b1 = t_gang(t, b, "B1", d), b2 = t_gang(t, b, "B2", d);
    t_run(t);
    T_NEAR(t_vec(0.9, 0.9, 0.0, 0.9, 0.0), t_fs(t, 0)->total);
    T_NEAR(t_vec(0.6, 0.6, 0.0, 0.6, 0.0), t_fs(t, a)->total);
    T_NEAR(t_vec(0.3, 0.3, 0.0, 0.3, 0.0), t_fs(t, b)->total);
    T_NEAR(t_vec(0.3, 0.3, 0.0, 0.3, 0.0), t_fs(t, a1)->total);
    T_NEAR(t_vec(0.3, 0.3, 0.0, 0.3, 0.0), t_fs(t, a2)->total);
    T_NEAR(t_vec(0.3, 0.3, 0.0, 0.3, 0.0), t_fs(t, b1)->total);
    T_NEAR(t_vec(0.0, 0.0, 0.0, 0.0, 0.0), t_fs(t, b2)->total);
    t_free(t);
}

static void test_usage_is_served_first(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool(t, 0, "a"), b = t_pool(t, 0, "b");
    int x = t_op(t, a, "x", t_times(t_total100(), 0.8));
    t->e[x].in.usage = t_times(t_total100(), 0.7);
    t_op(t, b, "y", t_times(t_total100(), 0.8));
    t_run(t);
    /* Equal weights split the cluster; usage only shapes the function below fit factor 1. */
    T_NEAR(t_unit(0.5), t_fs(t, x)->total);
    T_NEAR(t_unit(0.7), t->e[x].out.usage_share);
    assert_int_equal(t->e[x].out.dominant_resource, PS_RES_USER_SLOTS);
    t_free(t);
}

static void test_deterministic_and_reusable(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int p = t_pool_sg(t, 0, "p", 20);
    int q = t_integral(t, 0, "q", PS_GUARANTEE_BURST, 5, 20, -1);
    for (int i = 0; i < 40; i++) {
        int op = t_op(t, i % 2 ? p : q, "op", t_res(1 + i, 1.5 * i + 0.25, (int64_t)(i + 1) * 7 * MB));
        t_weight(t, op, 1.0 + (i % 5));
        t->e[op].in.usage = t_res(i / 2, 0.5 * i, (int64_t)(i / 3) * MB);
    }
    t_with_previous_minute(t);
    struct ps_fs_element_output first[64];
    struct ps_volume volume = t->p[q].in.accumulated_volume;
    t_run(t);
    for (int i = 0; i < t->n; i++)
        first[i] = t->e[i].out;
    t->p[q].in.accumulated_volume = volume;
    t->p[q].in.last_integral_share_ratio = 0;
    t_run(t);
    for (int i = 0; i < t->n; i++)
        assert_memory_equal(&first[i], &t->e[i].out, sizeof first[i]);
    t_free(t);
}

static void test_zero_cluster(void **state)
{
    struct t_tree *t = t_new(ps_resources_zero(), T_IMPROVED(state));
    int a = t_integral(t, 0, "a", PS_GUARANTEE_RELAXED, 10, -1, 5);
    int x = t_op(t, a, "x", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_EQ(ps_share_fill(0), t_fs(t, x)->total);
    T_EQ(ps_share_fill(0), t_fs(t, 0)->total);
    t_free(t);
}

static void expect_invalid(struct t_tree *t, const char *needle)
{
    ps_error_init(&t->err);
    int rc = ps_fs_update_run(t->u, t->e, t->n, t->p, t->n, &t->opt, &t->input, &t->err);
    assert_int_equal(rc, PS_EINVAL);
    if (!strstr(t->err.msg, needle))
        fail_msg("error '%s' does not mention '%s'", t->err.msg, needle);
}

static void test_validation(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), false);
    int a = t_pool(t, 0, "poolA");
    int op = t_op(t, a, "opX", t_total100());

    t->e[a].in.weight = NAN;
    expect_invalid(t, "poolA: weight");
    t->e[a].in.weight = -1;
    expect_invalid(t, "poolA: weight");
    t->e[a].in.weight = 1;

    t->e[op].in.max_share_ratio = 1.5;
    expect_invalid(t, "opX: max_share_ratio");
    t->e[op].in.max_share_ratio = 1;

    t->e[a].in.parent = 2;
    expect_invalid(t, "poolA");
    t->e[a].in.parent = 0;

    t->e[op].in.demand.v[PS_RES_CPU] = -1;
    expect_invalid(t, "opX: demand");
    t->e[op].in.demand = t_total100();

    t->p[a].in.relaxed_share_multiplier_limit = 11;
    expect_invalid(t, "relaxed_share_multiplier_limit");
    t->p[a].in.relaxed_share_multiplier_limit = 0;

    /* Every pool and the root names its own entry of the pools array. */
    t->e[a].in.pool = t->n;
    expect_invalid(t, "poolA: pool index 3 is outside the pools array (3 entries)");
    t->e[a].in.pool = -1;
    expect_invalid(t, "poolA: pool index -1");
    t->e[a].in.pool = 0;
    expect_invalid(t, "poolA: pool index 0 is named by another pool");
    t->e[a].in.pool = a;

    t->p[a].in.mode = PS_MODE_FIFO;
    int sub = t_pool(t, a, "subpool");
    expect_invalid(t, "subpool");
    t->p[a].in.mode = PS_MODE_FAIR_SHARE;
    (void)sub;

    t->e[0].in.kind = PS_ELEM_POOL;
    expect_invalid(t, "root");
    t->e[0].in.kind = PS_ELEM_ROOT;

    t->e[sub].in.parent = op;
    expect_invalid(t, "is an operation");
    t->e[sub].in.parent = a;

    t->opt.integral_smooth_period_ms = 0;
    expect_invalid(t, "smooth_period");
    t->opt.integral_smooth_period_ms = 60000;

    t->p[a].in.strong_guarantee.set = 1u << PS_RES_MEMORY;
    t->p[a].in.strong_guarantee.r.v[PS_RES_MEMORY] = -5;
    expect_invalid(t, "strong_guarantee_resources/memory");
    t->p[a].in.strong_guarantee.set = 0;

    t_run(t);  /* valid again */
    t_free(t);
}

#define BOTH(f) cmocka_unit_test_prestate(f, &t_improved_off), cmocka_unit_test_prestate(f, &t_improved_on)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_strong_guarantee_adjustment_to_total),
        BOTH(test_strong_guarantee_adjustment_with_large_pool),
        BOTH(test_strong_plus_burst_adjustment_to_total),
        BOTH(test_limits_lower_than_strong_guarantee),
        cmocka_unit_test(test_inferred_strong_guarantees),
        cmocka_unit_test(test_inferred_guarantee_beyond_int64),
        cmocka_unit_test(test_operation_guarantee_counts_only_in_inference),
        cmocka_unit_test(test_weight_inference),
        BOTH(test_effective_limits),
        BOTH(test_fifo_order_and_shares),
        cmocka_unit_test(test_gang_operations),
        cmocka_unit_test(test_gang_operations_improved),
        cmocka_unit_test(test_gang_operations_with_skewed_resources),
        cmocka_unit_test(test_multiple_gang_operations),
        BOTH(test_usage_is_served_first),
        BOTH(test_deterministic_and_reusable),
        BOTH(test_zero_cluster),
        cmocka_unit_test(test_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
