/* Vector HDRF: integral guarantees (burst and relaxed pools, accumulated volumes) from upstream's
 * fair_share_update_ut.cpp and the integral volume tests of the scheduler's element tests. */
#include <math.h>
#include "fs_test_util.h"

static void test_relaxed_pool_simple(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int relaxed = t_integral(t, 0, "relaxed", PS_GUARANTEE_RELAXED, 10.0, -1, 10.0);
    int op = t_op(t, relaxed, "op", t_times(t_total100(), 0.3));
    t_with_previous_minute(t);
    t_run(t);
    T_NEAR(t_unit(0.3), t_fs(t, op)->weight_proportional);
    T_NEAR(t_unit(0.3), t_fs(t, op)->total);
    T_EQ(t_unit(0.1), t_fs(t, relaxed)->strong_guarantee);
    T_EQ(t_unit(0.1), t_fs(t, relaxed)->integral_guarantee);
    T_NEAR(t_unit(0.1), t_fs(t, relaxed)->weight_proportional);
    T_NEAR(t_unit(0.3), t_fs(t, relaxed)->total);
    T_NEAR(t_unit(0.1), t_fs(t, 0)->strong_guarantee);
    T_EQ(t_unit(0.1), t_fs(t, 0)->integral_guarantee);
    T_NEAR(t_unit(0.1), t_fs(t, 0)->weight_proportional);
    T_NEAR(t_unit(0.3), t_fs(t, 0)->total);
    t_free(t);
}

static void test_relaxed_pool_with_increased_multiplier_limit(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_integral(t, 0, "defaultRelaxed", PS_GUARANTEE_RELAXED, 10.0, -1, -1);
    int b = t_integral(t, 0, "increasedLimitRelaxed", PS_GUARANTEE_RELAXED, 10.0, -1, -1);
    t->p[b].in.relaxed_share_multiplier_limit = 5.0;
    t_op(t, a, "x", t_total100());
    t_op(t, b, "y", t_total100());
    t->p[a].in.accumulated_volume = t_huge_volume();
    t->p[b].in.accumulated_volume = t_huge_volume();
    t_run(t);
    T_NEAR(t_unit(0.3), t_fs(t, a)->integral_guarantee);  /* the tree's default multiplier is 3 */
    T_NEAR(t_unit(0.5), t_fs(t, b)->integral_guarantee);
    t_free(t);
}

static void test_burst_pool_simple(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int burst = t_integral(t, 0, "burst", PS_GUARANTEE_BURST, 10.0, 10.0, 10.0);
    int op = t_op(t, burst, "op", t_times(t_total100(), 0.3));
    t_with_previous_minute(t);
    t_run(t);
    T_NEAR(t_unit(0.3), t_fs(t, op)->weight_proportional);
    T_NEAR(t_unit(0.3), t_fs(t, op)->total);
    T_EQ(t_unit(0.1), t_fs(t, burst)->strong_guarantee);
    T_EQ(t_unit(0.1), t_fs(t, burst)->integral_guarantee);
    T_NEAR(t_unit(0.1), t_fs(t, burst)->weight_proportional);
    T_NEAR(t_unit(0.3), t_fs(t, burst)->total);
    T_EQ(t_unit(0.1), t_fs(t, 0)->strong_guarantee);
    T_EQ(t_unit(0.1), t_fs(t, 0)->integral_guarantee);
    T_NEAR(t_unit(0.1), t_fs(t, 0)->weight_proportional);
    T_NEAR(t_unit(0.3), t_fs(t, 0)->total);
    /* The integral share is what is consumed from the volume next time. */
    T_DOUBLE_NEAR(0.1, t->p[burst].in.last_integral_share_ratio, 1e-12);
    t_free(t);
}

static void test_accumulated_volume_provides_more(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int relaxed = t_integral(t, 0, "relaxed", PS_GUARANTEE_RELAXED, 10.0, -1, -1);
    t_with_previous_minute(t);
    t_run(t);  /* accumulates a minute of flow */
    T_DOUBLE_NEAR(600.0, t->p[relaxed].in.accumulated_volume.v[PS_RES_CPU], 0.0);

    int op = t_op(t, relaxed, "op", t_times(t_total100(), 0.3));
    t->input.previous_update_time_ms = t->input.now_ms;
    t->input.now_ms += 60000;
    t_run(t);
    T_NEAR(t_unit(0.3), t_fs(t, op)->weight_proportional);
    T_NEAR(t_unit(0.3), t_fs(t, op)->total);
    T_EQ(ps_share_fill(0.0), t_fs(t, relaxed)->strong_guarantee);
    /* Twice the share of the flow: two minutes of volume. */
    T_NEAR(t_unit(0.2), t_fs(t, relaxed)->integral_guarantee);
    T_NEAR(t_unit(0.1), t_fs(t, relaxed)->weight_proportional);
    t_free(t);
}

static void test_strong_pool_vs_burst_pool(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int burst = t_integral(t, 0, "burst", PS_GUARANTEE_BURST, 100.0, 50.0, -1);
    int strong = t_pool_sg(t, 0, "strong", 50.0);
    t_op(t, burst, "b", t_total100());
    t_op(t, strong, "s", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_NEAR(t_unit(0.5), t_fs(t, strong)->strong_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, strong)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, strong)->weight_proportional);
    T_NEAR(t_unit(0.0), t_fs(t, burst)->strong_guarantee);
    T_NEAR(t_unit(0.5), t_fs(t, burst)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, burst)->weight_proportional);
    T_NEAR(t_unit(0.5), t_fs(t, 0)->strong_guarantee);
    T_NEAR(t_unit(0.5), t_fs(t, 0)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, 0)->weight_proportional);
    t_free(t);
}

static void test_strong_pool_vs_relaxed_pool(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int strong = t_pool_sg(t, 0, "strong", 50.0);
    int relaxed = t_integral(t, 0, "relaxed", PS_GUARANTEE_RELAXED, 100.0, -1, -1);
    t_op(t, strong, "s", t_total100());
    t_op(t, relaxed, "r", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_NEAR(t_unit(0.5), t_fs(t, strong)->strong_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, strong)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, strong)->weight_proportional);
    T_NEAR(t_unit(0.0), t_fs(t, relaxed)->strong_guarantee);
    T_NEAR(t_unit(0.5), t_fs(t, relaxed)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, relaxed)->weight_proportional);
    T_NEAR(t_unit(0.5), t_fs(t, 0)->strong_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, 0)->weight_proportional);
    t_free(t);
}

static void test_burst_gets_all_relaxed_none(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int burst = t_integral(t, 0, "burst", PS_GUARANTEE_BURST, 100.0, 100.0, -1);
    int relaxed = t_integral(t, 0, "relaxed", PS_GUARANTEE_RELAXED, 100.0, -1, -1);
    t_op(t, burst, "b", t_total100());
    t_op(t, relaxed, "r", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_NEAR(t_unit(0.0), t_fs(t, burst)->strong_guarantee);
    T_NEAR(t_unit(1.0), t_fs(t, burst)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, burst)->weight_proportional);
    T_NEAR(t_unit(0.0), t_fs(t, relaxed)->total);
    T_NEAR(t_unit(0.0), t_fs(t, 0)->strong_guarantee);
    T_NEAR(t_unit(1.0), t_fs(t, 0)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, 0)->weight_proportional);
    t_free(t);
}

static void test_burst_gets_burst_guarantee_only_relaxed_gets_remaining(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int burst = t_integral(t, 0, "burst", PS_GUARANTEE_BURST, 100.0, 50.0, -1);
    int relaxed = t_integral(t, 0, "relaxed", PS_GUARANTEE_RELAXED, 100.0, -1, -1);
    t_op(t, burst, "b", t_total100());
    t_op(t, relaxed, "r", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_NEAR(t_unit(0.0), t_fs(t, burst)->strong_guarantee);
    T_NEAR(t_unit(0.5), t_fs(t, burst)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, burst)->weight_proportional);
    T_NEAR(t_unit(0.0), t_fs(t, relaxed)->strong_guarantee);
    T_NEAR(t_unit(0.5), t_fs(t, relaxed)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, relaxed)->weight_proportional);
    T_NEAR(t_unit(0.0), t_fs(t, 0)->strong_guarantee);
    T_NEAR(t_unit(1.0), t_fs(t, 0)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, 0)->weight_proportional);
    t_free(t);
}

static void test_all_kinds_share_weight_proportional(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int strong = t_pool_sg(t, 0, "strong", 10.0);
    int burst = t_integral(t, 0, "burst", PS_GUARANTEE_BURST, 10.0, 10.0, 0.0);
    int relaxed = t_integral(t, 0, "relaxed", PS_GUARANTEE_RELAXED, 10.0, -1, 0.0);
    t_weight(t, relaxed, 2.0);
    int none = t_pool_sg(t, 0, "noGuarantee", 0.0);
    t_weight(t, none, 3.0);
    t_op(t, strong, "s", t_total100());
    t_op(t, burst, "b", t_total100());
    t_op(t, relaxed, "r", t_total100());
    t_op(t, none, "n", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_EQ(t_unit(0.1), t_fs(t, strong)->strong_guarantee);
    T_EQ(t_unit(0.0), t_fs(t, strong)->integral_guarantee);
    T_NEAR(t_unit(0.1), t_fs(t, strong)->weight_proportional);
    T_EQ(t_unit(0.0), t_fs(t, burst)->strong_guarantee);
    T_EQ(t_unit(0.1), t_fs(t, burst)->integral_guarantee);
    T_NEAR(t_unit(0.1), t_fs(t, burst)->weight_proportional);
    T_EQ(t_unit(0.0), t_fs(t, relaxed)->strong_guarantee);
    T_EQ(t_unit(0.1), t_fs(t, relaxed)->integral_guarantee);
    T_NEAR(t_unit(0.2), t_fs(t, relaxed)->weight_proportional);
    T_EQ(t_unit(0.0), t_fs(t, none)->strong_guarantee);
    T_EQ(t_unit(0.0), t_fs(t, none)->integral_guarantee);
    T_NEAR(t_unit(0.3), t_fs(t, none)->weight_proportional);
    T_NEAR(t_unit(0.1), t_fs(t, 0)->strong_guarantee);
    T_EQ(t_unit(0.2), t_fs(t, 0)->integral_guarantee);
    T_NEAR(t_unit(0.7), t_fs(t, 0)->weight_proportional);
    t_free(t);
}

static void test_two_relaxed_pools_share_proportional_to_volume(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_integral(t, 0, "relaxedA", PS_GUARANTEE_RELAXED, 100.0, -1, -1);
    int b = t_integral(t, 0, "relaxedB", PS_GUARANTEE_RELAXED, 100.0, -1, -1);
    t_op(t, a, "a", t_total100());
    t_op(t, b, "b", t_total100());
    /* 10% and 30% of the cluster for a minute. */
    t->p[a].in.accumulated_volume = t_volume(t_times(t_one_percent(), 10.0), 60.0);
    t->p[b].in.accumulated_volume = t_volume(t_times(t_one_percent(), 30.0), 60.0);
    t_run(t);
    T_EQ(t_unit(0.0), t_fs(t, a)->strong_guarantee);
    T_NEAR(t_unit(0.1), t_fs(t, a)->integral_guarantee);
    T_NEAR(t_unit(0.3), t_fs(t, a)->weight_proportional);
    T_EQ(t_unit(0.0), t_fs(t, b)->strong_guarantee);
    T_NEAR(t_unit(0.3), t_fs(t, b)->integral_guarantee);
    T_NEAR(t_unit(0.3), t_fs(t, b)->weight_proportional);
    T_NEAR(t_unit(0.0), t_fs(t, 0)->strong_guarantee);
    T_NEAR(t_unit(0.4), t_fs(t, 0)->integral_guarantee);
    T_NEAR(t_unit(0.6), t_fs(t, 0)->weight_proportional);
    t_free(t);
}

static void test_integral_pools_with_parent(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    /* guarantee_type none: the parent's own flow and burst are ignored. */
    int parent = t_integral(t, 0, "parent", PS_GUARANTEE_NONE, 100.0, 100.0, -1);
    int burst = t_integral(t, parent, "burst", PS_GUARANTEE_BURST, 50.0, 100.0, -1);
    int relaxed = t_integral(t, parent, "relaxed", PS_GUARANTEE_RELAXED, 50.0, -1, -1);
    t_op(t, burst, "b", t_total100());
    t_op(t, relaxed, "r", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_EQ(t_unit(0.0), t_fs(t, burst)->strong_guarantee);
    T_EQ(t_unit(0.5), t_fs(t, burst)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, burst)->weight_proportional);
    T_EQ(t_unit(0.0), t_fs(t, relaxed)->strong_guarantee);
    T_EQ(t_unit(0.5), t_fs(t, relaxed)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, relaxed)->weight_proportional);
    T_EQ(t_unit(0.0), t_fs(t, parent)->strong_guarantee);
    T_EQ(t_unit(1.0), t_fs(t, parent)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, parent)->weight_proportional);
    T_NEAR(t_unit(0.0), t_fs(t, 0)->strong_guarantee);
    T_EQ(t_unit(1.0), t_fs(t, 0)->integral_guarantee);
    T_EQ(t_unit(0.0), t_fs(t, 0)->weight_proportional);
    assert_true(t->p[parent].out.specified_resource_flow_ratio == 0.0);
    assert_true(t->p[parent].out.total_resource_flow_ratio == 1.0);
    t_free(t);
}

static void test_strong_and_relaxed_vs_relaxed(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int sr = t_integral(t, 0, "strong_and_relaxed", PS_GUARANTEE_RELAXED, 100.0, -1, 40.0);
    int relaxed = t_integral(t, 0, "relaxed", PS_GUARANTEE_RELAXED, 100.0, -1, -1);
    t_op(t, sr, "sr", t_total100());
    t_op(t, relaxed, "r", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_EQ(t_unit(0.4), t_fs(t, sr)->strong_guarantee);
    T_NEAR(t_unit(0.3), t_fs(t, sr)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, sr)->weight_proportional);
    T_EQ(t_unit(0.0), t_fs(t, relaxed)->strong_guarantee);
    T_NEAR(t_unit(0.3), t_fs(t, relaxed)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, relaxed)->weight_proportional);
    T_NEAR(t_unit(0.4), t_fs(t, 0)->strong_guarantee);
    T_NEAR(t_unit(0.6), t_fs(t, 0)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, 0)->weight_proportional);
    t_free(t);
}

static void test_parent_without_guarantee_limits_lower_than_child_burst(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int parent = t_pool_sg(t, 0, "limitedParent", 0.0);
    t->e[parent].in.resource_limits.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 50.0);
    int burst = t_integral(t, parent, "burst", PS_GUARANTEE_BURST, 100.0, 100.0, 0.0);
    t_op(t, burst, "op", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_EQ(t_unit(0.5), t_fs(t, burst)->integral_guarantee);
    T_NEAR(t_unit(0.5), t_fs(t, burst)->total);
    t_free(t);
}

static void test_parent_with_guarantee_limits_lower_than_child_burst(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int parent = t_pool_sg(t, 0, "limitedParent", 50.0);
    t->e[parent].in.resource_limits.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 50.0);
    int burst = t_integral(t, parent, "burst", PS_GUARANTEE_BURST, 10.0, 10.0, 0.0);
    t_op(t, burst, "op", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    T_EQ(t_unit(0.0), t_fs(t, burst)->strong_guarantee);
    /* No integral share: it would violate the parent's limits. */
    T_EQ(t_unit(0.0), t_fs(t, burst)->integral_guarantee);
    T_NEAR(t_unit(0.5), t_fs(t, burst)->weight_proportional);
    t_free(t);
}

static void test_adjust_proposed_integral_share_on_burst_pools(void **state)
{
    /* upstream TestCrashInAdjustProposedIntegralShareOnUpdateBurstPoolIntegralShares */
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int parent = t_pool_sg(t, 0, "parent", 50.0);
    t->e[parent].in.resource_limits = t_res(100, 55, 1000 * MB);
    int b1 = t_integral(t, parent, "pool1", PS_GUARANTEE_BURST, 10.0, 10.0, -1);
    int b2 = t_integral(t, parent, "pool2", PS_GUARANTEE_BURST, 10.0, 10.0, -1);
    t_op(t, b1, "op1", t_res(5, 5, 50 * MB));
    t_op(t, b2, "op2", t_res(5, 5, 50 * MB));
    t_with_previous_minute(t);
    t_run(t);
    /* The first pool fills the gap between the parent's limit and guarantee. */
    T_EQ(t_unit(0.0), t_fs(t, b1)->strong_guarantee);
    T_EQ(t_unit(0.05), t_fs(t, b1)->integral_guarantee);
    T_NEAR(t_unit(0.0), t_fs(t, b1)->weight_proportional);
    T_EQ(t_unit(0.0), t_fs(t, b2)->strong_guarantee);
    T_EQ(t_unit(0.0), t_fs(t, b2)->integral_guarantee);
    T_NEAR(t_unit(0.05), t_fs(t, b2)->weight_proportional);
    t_free(t);
}

static void test_proposed_integral_share_precision_error(void **state)
{
    /* upstream TestProposedIntegralSharePrecisionError (YT-16653): real numbers. */
    struct ps_resources total = t_res(2404350, 285040.54, 1139022499379170);
    total.v[PS_RES_NETWORK] = 534300;
    struct t_tree *t = t_new(total, T_IMPROVED(state));
    int integral_root = t_pool_sg(t, 0, "integralRoot", 473159.00);
    int burst = t_integral(t, integral_root, "burstPool", PS_GUARANTEE_BURST, 525.0, 3150.0, 0.0);
    int relaxed1 = t_integral(t, integral_root, "firstRelaxedPool", PS_GUARANTEE_RELAXED, 3500.0, -1, 5158.0);
    t_integral(t, integral_root, "secondRelaxedPool", PS_GUARANTEE_RELAXED, 117.0, -1, -1);
    t_pool_sg(t, 0, "normalPool", 23071.0);
    t_integral(t, 0, "fakeBurstPool", PS_GUARANTEE_BURST, 0.0, 11700.0, -1);
    t->e[integral_root].in.resource_limits.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 50000.00);

    struct ps_volume bv = {{0}};
    bv.v[PS_RES_USER_SLOTS] = 413098315.744941;
    bv.v[PS_RES_CPU] = 45360000.00;
    bv.v[PS_RES_MEMORY] = 2.1341920521797664e+17;
    bv.v[PS_RES_NETWORK] = 91794223.939665511;
    t->p[burst].in.accumulated_volume = bv;
    struct ps_volume rv = {{0}};
    rv.v[PS_RES_USER_SLOTS] = 2541466175.1648531;
    rv.v[PS_RES_CPU] = 302400000.00;
    rv.v[PS_RES_MEMORY] = 1.3032554324247532e+18;
    rv.v[PS_RES_NETWORK] = 564751061.14774621;
    t->p[relaxed1].in.accumulated_volume = rv;

    static const double cpu[] = {60, 30, 14, 18, 60, 60, 140, 18, 18, 28, 18, 42};
    static const int slots[] = {2, 1, 1, 2, 2, 2, 2, 5, 2, 2, 2, 2};
    static const int64_t memory[] = {3813532248, 1823451694, 1570583626, 2972646113, 382413122943, 3813532249,
                                     11268640098, 2972646107, 2972646122, 3141167254, 2972646125, 3090478642};
    for (int k = 0; k < 12; k++)
        t_op(t, burst, "b", t_res(slots[k], cpu[k], memory[k]));
    t_op(t, relaxed1, "r", t_res(101836, 99835.63, 99376091257090));
    t_run(t);
    const struct ps_fs_element_output *out = &t->e[integral_root].out;
    const struct ps_fs_pool_output *pout = &t->p[integral_root].out;
    assert_true(ps_share_dominates(out->limits_share,
                                   ps_share_add(pout->strong_guarantee_share, pout->proposed_integral_share)));
    /* Guarantees exceed the cluster: alerted, not an error. */
    assert_true(ps_fs_update_alert_count(t->u) >= 1);
    t_free(t);
}

static void test_relaxed_pool_with_guarantee_overcommitment(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool_sg(t, 0, "poolA", 60.0);
    int x = t_op(t, a, "opA", t_times(t_total100(), 0.6));
    t->e[x].in.usage = t_times(t_total100(), 0.6);
    int b = t_pool_sg(t, 0, "poolB", 50.0);
    int y = t_op(t, b, "opB", t_times(t_total100(), 0.5));
    t->e[y].in.usage = t_times(t_total100(), 0.5);
    int relaxed = t_integral(t, 0, "relaxed", PS_GUARANTEE_RELAXED, 10.0, -1, -1);
    t_op(t, relaxed, "opR", t_times(t_total100(), 0.1));
    t->p[relaxed].in.accumulated_volume = t_huge_volume();
    t_with_previous_minute(t);
    t_run(t);
    /* Nothing is left for the relaxed pool; the update still succeeds. */
    T_NEAR(t_unit(0.0), t_fs(t, relaxed)->integral_guarantee);
    t_free(t);
}

/* ---- accumulated volumes --------------------------------------------------------------------- */

/* Relative tolerance above 1, absolute below. */
static void assert_volume_near(struct ps_volume expected, struct ps_volume actual, double tol)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (!(fabs(expected.v[r] - actual.v[r]) <= tol * fmax(1.0, fabs(expected.v[r]))))
            fail_msg("volume %s: %.17g, expected %.17g", ps_resource_name(r), actual.v[r], expected.v[r]);
}

static struct ps_volume volume_sum(struct ps_volume a, struct ps_volume b)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        a.v[r] += b.v[r];
    return a;
}

/* An ancestor without guarantees that passes overflow down, with an acceptable (1% flow) and an
 * overflowed (10% flow, huge volume) relaxed child. */
static struct t_tree *overflow_tree(int *acceptable, int *overflowed, int64_t period_ms)
{
    struct t_tree *t = t_new(t_total100(), false);
    int ancestor = t_integral(t, 0, "ancestor", PS_GUARANTEE_NONE, 100.0, 100.0, -1);
    t->p[ancestor].in.should_distribute_free_volume_among_children = 1;
    *acceptable = t_integral(t, ancestor, "acceptablePool", PS_GUARANTEE_RELAXED, 1.0, -1, -1);
    *overflowed = t_integral(t, ancestor, "overflowedPool", PS_GUARANTEE_RELAXED, 10.0, -1, -1);
    t->p[*overflowed].in.accumulated_volume = t_huge_volume();
    t->input.has_previous_update = true;
    t->input.previous_update_time_ms = t->input.now_ms - period_ms;
    return t;
}

static void test_volume_overflow_distribution_simple(void **state)
{
    (void)state;
    int acceptable, overflowed;
    struct t_tree *t = overflow_tree(&acceptable, &overflowed, 10000);
    t_run(t);
    struct ps_volume self = t_volume(t_one_percent(), 10.0);
    struct ps_volume overflow = t_volume(t_times(t_one_percent(), 10.0), 10.0);
    assert_volume_near(volume_sum(self, overflow), t->p[acceptable].out.accumulated_resource_volume, 1e-6);
    /* The overflowed pool is cut back to where it was. */
    assert_volume_near(t_huge_volume(), t->p[overflowed].out.accumulated_resource_volume, 0.0);
    t_free(t);
}

static void test_volume_overflow_distribution_with_minimal_volume_shares(void **state)
{
    (void)state;
    int acceptable, overflowed;
    struct t_tree *t = overflow_tree(&acceptable, &overflowed, 1);
    t_run(t);
    struct ps_volume expected = volume_sum(t_volume(t_one_percent(), 0.001),
                                           t_volume(t_times(t_one_percent(), 10.0), 0.001));
    struct ps_volume actual = t->p[acceptable].out.accumulated_resource_volume;
    /* cpu is fixed point: a millisecond of 1% rounds to nothing, of 10% to one hundredth. */
    assert_true(expected.v[PS_RES_CPU] == actual.v[PS_RES_CPU]);
    assert_true(actual.v[PS_RES_CPU] == 0.01);
    T_DOUBLE_NEAR(expected.v[PS_RES_MEMORY], actual.v[PS_RES_MEMORY], 1.0);
    T_DOUBLE_NEAR(expected.v[PS_RES_USER_SLOTS], actual.v[PS_RES_USER_SLOTS], 1e-6);
    T_DOUBLE_NEAR(expected.v[PS_RES_NETWORK], actual.v[PS_RES_NETWORK], 1e-6);
    T_DOUBLE_NEAR(expected.v[PS_RES_GPU], actual.v[PS_RES_GPU], 1e-6);
    t_free(t);
}

static void test_volume_overflow_distribution_if_pool_does_not_accept_it(void **state)
{
    (void)state;
    int acceptable, overflowed;
    struct t_tree *t = overflow_tree(&acceptable, &overflowed, 10000);
    t->p[acceptable].in.can_accept_free_volume = false;
    t_run(t);
    assert_volume_near(t_volume(t_one_percent(), 10.0), t->p[acceptable].out.accumulated_resource_volume, 1e-6);
    t_free(t);
}

static void test_volume_overflow_distribution_with_limited_acceptable_pool(void **state)
{
    (void)state;
    int empty, overflowed;
    struct t_tree *t = overflow_tree(&empty, &overflowed, 10000);
    /* A third child, 1% flow, three units of volume short of its capacity. */
    int limited = t_integral(t, t->e[empty].in.parent, "limitedAcceptablePool", PS_GUARANTEE_RELAXED, 1.0, -1, -1);
    struct ps_volume unit = t_volume(t_one_percent(), 10.0);
    struct ps_volume full = t_volume(t_times(t_total100(), 0.01), 86400.0);
    struct ps_volume start = full;
    for (int r = 0; r < PS_RES_COUNT; r++)
        start.v[r] -= 3 * unit.v[r];
    t->p[limited].in.accumulated_volume = start;
    t_run(t);
    /* 1 unit of its own flow + 2 from the overflow: full. */
    assert_volume_near(full, t->p[limited].out.accumulated_resource_volume, 1e-6);
    /* 1 unit of its own + the remaining 8. */
    struct ps_volume nine = unit;
    for (int r = 0; r < PS_RES_COUNT; r++)
        nine.v[r] *= 9;
    assert_volume_near(nine, t->p[empty].out.accumulated_resource_volume, 1e-6);
    t_free(t);
}

static void test_no_distribution_without_the_option(void **state)
{
    (void)state;
    int acceptable, overflowed;
    struct t_tree *t = overflow_tree(&acceptable, &overflowed, 10000);
    t->p[t->e[acceptable].in.parent].in.should_distribute_free_volume_among_children = -1;  /* tree: false */
    t_run(t);
    assert_volume_near(t_volume(t_one_percent(), 10.0), t->p[acceptable].out.accumulated_resource_volume, 1e-6);
    t->opt.should_distribute_free_volume_among_children = true;
    t->p[acceptable].in.accumulated_volume = (struct ps_volume){{0}};
    t->p[overflowed].in.accumulated_volume = t_huge_volume();
    t_run(t);
    struct ps_volume expected = volume_sum(t_volume(t_one_percent(), 10.0), t_volume(t_times(t_one_percent(), 10.0), 10.0));
    assert_volume_near(expected, t->p[acceptable].out.accumulated_resource_volume, 1e-6);
    t_free(t);
}

static void test_pool_capacity_does_not_decrease_existing_volume(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), false);
    int relaxed = t_integral(t, 0, "relaxed", PS_GUARANTEE_RELAXED, 100.0, -1, -1);
    t->p[relaxed].in.accumulated_volume = t_huge_volume();
    t->input.has_previous_update = true;
    t->input.previous_update_time_ms = t->input.now_ms - 1000;
    t_run(t);
    assert_volume_near(t_huge_volume(), t->p[relaxed].out.accumulated_resource_volume, 0.0);
    t_free(t);
}

static void test_volume_refill_consume_and_capacity(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), false);
    int burst = t_integral(t, 0, "burst", PS_GUARANTEE_BURST, 10.0, 30.0, -1);
    t_op(t, burst, "op", t_total100());
    /* Before any update with a previous time: nothing accumulates. */
    t_run(t);
    assert_true(t->p[burst].out.accumulated_resource_ratio_volume == 0.0);
    assert_true(t->p[burst].out.estimated_burst_usage_duration_seconds == 0.0);

    /* Ten minutes of 10% flow: 60 cluster-seconds. */
    t->input.has_previous_update = true;
    t->input.previous_update_time_ms = t->input.now_ms - 600000;
    t_run(t);
    T_DOUBLE_NEAR(60.0, t->p[burst].out.accumulated_resource_ratio_volume, 1e-9);
    T_DOUBLE_NEAR(6000.0, t->p[burst].out.accumulated_resource_volume.v[PS_RES_CPU], 0.0);
    /* The pool gets min(burst ratio, volume ratio / 60 s) = 0.3 and will consume it. */
    T_NEAR(t_unit(0.3), t_fs(t, burst)->integral_guarantee);
    T_DOUBLE_NEAR(0.3, t->p[burst].in.last_integral_share_ratio, 1e-12);
    /* Orchid: ratios, capacity = flow x 1 day, duration = volume / (burst - flow). */
    T_DOUBLE_NEAR(0.3, t->p[burst].out.specified_burst_ratio, 1e-15);
    T_DOUBLE_NEAR(0.1, t->p[burst].out.specified_resource_flow_ratio, 1e-15);
    T_DOUBLE_NEAR(0.3, t->p[burst].out.total_burst_ratio, 1e-15);
    T_DOUBLE_NEAR(0.1, t->p[0].out.total_resource_flow_ratio, 1e-15);
    T_DOUBLE_NEAR(864000.0, t->p[burst].out.integral_pool_capacity.v[PS_RES_CPU], 0.0);
    T_DOUBLE_NEAR(864000.0, t->p[burst].out.integral_pool_capacity.v[PS_RES_USER_SLOTS], 0.0);
    T_DOUBLE_NEAR(60.0 / 0.2, t->p[burst].out.estimated_burst_usage_duration_seconds, 1e-9);

    /* A minute later: +0.1 x 60 s of flow, -0.3 x 60 s consumed. */
    t->input.previous_update_time_ms = t->input.now_ms;
    t->input.now_ms += 60000;
    t_run(t);
    T_DOUBLE_NEAR(60.0 + 6.0 - 18.0, t->p[burst].out.accumulated_resource_ratio_volume, 1e-9);
    T_DOUBLE_NEAR(4800.0, t->p[burst].out.accumulated_resource_volume.v[PS_RES_CPU], 0.0);
    t_free(t);
}

/* A flow ratio far beyond the cluster (any finite double is accepted): the capacity, total x
 * ratio in each resource's units, saturates at the int64 range instead of overflowing the
 * conversion (undefined behaviour, which the sanitizer build stops on; found by fuzz_snapshot). */
static void test_huge_flow_ratio_saturates_capacity(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), false);
    int burst = t_integral(t, 0, "burst", PS_GUARANTEE_BURST, 1e25, 1e25, -1);
    t_op(t, burst, "op", t_total100());
    t_run(t);
    double cap = t->p[burst].out.integral_pool_capacity.v[PS_RES_MEMORY];   /* 1e9 x ~2e14 */
    assert_true(isfinite(cap) && cap >= 9.2e18);
    t_free(t);
}

static void test_nested_integral_pools_are_alerted(void **state)
{
    (void)state;
    struct t_tree *t = t_new(t_total100(), false);
    int outer = t_integral(t, 0, "outer", PS_GUARANTEE_RELAXED, 20.0, -1, -1);
    int middle = t_pool(t, outer, "middle");
    int inner = t_integral(t, middle, "inner", PS_GUARANTEE_BURST, 10.0, 30.0, -1);
    t_op(t, inner, "op", t_total100());
    t_with_previous_minute(t);
    t_run(t);
    assert_int_equal(ps_fs_update_alert_count(t->u), 1);
    assert_non_null(strstr(ps_fs_update_alert(t->u, 0), "integral pool inner is nested in integral pool outer"));
    t_free(t);
}

#define BOTH(f) cmocka_unit_test_prestate(f, &t_improved_off), cmocka_unit_test_prestate(f, &t_improved_on)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_relaxed_pool_simple),
        BOTH(test_relaxed_pool_with_increased_multiplier_limit),
        BOTH(test_burst_pool_simple),
        BOTH(test_accumulated_volume_provides_more),
        BOTH(test_strong_pool_vs_burst_pool),
        BOTH(test_strong_pool_vs_relaxed_pool),
        BOTH(test_burst_gets_all_relaxed_none),
        BOTH(test_burst_gets_burst_guarantee_only_relaxed_gets_remaining),
        BOTH(test_all_kinds_share_weight_proportional),
        BOTH(test_two_relaxed_pools_share_proportional_to_volume),
        BOTH(test_integral_pools_with_parent),
        BOTH(test_strong_and_relaxed_vs_relaxed),
        BOTH(test_parent_without_guarantee_limits_lower_than_child_burst),
        BOTH(test_parent_with_guarantee_limits_lower_than_child_burst),
        BOTH(test_adjust_proposed_integral_share_on_burst_pools),
        BOTH(test_proposed_integral_share_precision_error),
        BOTH(test_relaxed_pool_with_guarantee_overcommitment),
        cmocka_unit_test(test_volume_overflow_distribution_simple),
        cmocka_unit_test(test_volume_overflow_distribution_with_minimal_volume_shares),
        cmocka_unit_test(test_volume_overflow_distribution_if_pool_does_not_accept_it),
        cmocka_unit_test(test_volume_overflow_distribution_with_limited_acceptable_pool),
        cmocka_unit_test(test_no_distribution_without_the_option),
        cmocka_unit_test(test_pool_capacity_does_not_decrease_existing_volume),
        cmocka_unit_test(test_volume_refill_consume_and_capacity),
        cmocka_unit_test(test_huge_flow_ratio_saturates_capacity),
        cmocka_unit_test(test_nested_integral_pools_are_alerted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
