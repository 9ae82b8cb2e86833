/* Vector HDRF: the basic upstream cases (fair_share_update_ut.cpp), each run with the improved
 * fit factor computation off and on, as upstream's TEST_P does. EQ where upstream asserts
 * EXPECT_EQ, 1e-7 where it asserts EXPECT_RV_NEAR. */
#include "fs_test_util.h"

static void test_simple(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    int c = t_pool(t, 0, "PoolC"), d = t_pool(t, 0, "PoolD");
    t->p[c].in.mode = PS_MODE_FIFO;
    t->p[d].in.mode = PS_MODE_FIFO;
    struct ps_resources demand = t_res(10, 10, 100);
    int ops[4];
    for (int i = 0; i < 4; i++)
        ops[i] = t_op(t, i < 2 ? a : c, "op", demand);
    t_weight(t, ops[2], 10.0);  /* FIFO order of operations 2 and 3 */
    t_run(t);

    struct ps_share op_demand = ps_resources_to_share(&demand, &t->input.total, 0, 0);
    struct ps_share pool_demand = ps_share_scale(op_demand, 2.0);
    struct ps_share total_demand = ps_share_scale(op_demand, 4.0);
    T_NEAR(total_demand, t->e[0].out.demand_share);
    T_NEAR(pool_demand, t->e[a].out.demand_share);
    T_NEAR(ps_share_fill(0), t->e[b].out.demand_share);
    T_NEAR(pool_demand, t->e[c].out.demand_share);
    T_NEAR(ps_share_fill(0), t->e[d].out.demand_share);
    T_NEAR(total_demand, t_fs(t, 0)->total);
    T_NEAR(pool_demand, t_fs(t, a)->total);
    T_NEAR(ps_share_fill(0), t_fs(t, b)->total);
    T_NEAR(pool_demand, t_fs(t, c)->total);
    T_NEAR(ps_share_fill(0), t_fs(t, d)->total);
    for (int i = 0; i < 4; i++) {
        T_NEAR(op_demand, t->e[ops[i]].out.demand_share);
        T_NEAR(op_demand, t_fs(t, ops[i])->total);
    }
    assert_int_equal(t->e[ops[2]].out.fifo_index, 0);
    assert_int_equal(t->e[ops[3]].out.fifo_index, 1);
    t_free(t);
}

static void test_resource_limits(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool(t, 0, "PoolA");
    int b = t_pool(t, a, "PoolB");
    struct ps_resources total = t->input.total;
    struct ps_share total_limits = ps_resources_to_share(&total, &total, 0, 0);
    t_run(t);
    T_EQ(total_limits, t->e[0].out.limits_share);
    T_EQ(total_limits, t->e[a].out.limits_share);
    T_EQ(total_limits, t->e[b].out.limits_share);

    struct ps_resources limits = t_res(60, 70, 800);
    t->e[a].in.resource_limits = limits;
    t_run(t);
    T_EQ(total_limits, t->e[0].out.limits_share);
    T_EQ(ps_resources_to_share(&limits, &total, 0, 0), t->e[a].out.limits_share);
    T_EQ(t_vec(0.6, 0.7, 0, 7.62939453125e-07, 0), t->e[a].out.limits_share);
    /* A child's limits share is not capped by its parent's limits. */
    T_EQ(total_limits, t->e[b].out.limits_share);
    t_free(t);
}

static void test_fractional_resource_limits(void **state)
{
    struct ps_resources total = t_res(10, 11.17, 100 * MB);
    struct t_tree *t = t_new(total, T_IMPROVED(state));
    int a = t_pool(t, 0, "PoolA");
    struct ps_resources limits = t_res(10, 11.06, 99 * MB);
    t->e[a].in.resource_limits = limits;
    t_run(t);
    T_EQ(ps_resources_to_share(&total, &total, 0, 0), t->e[0].out.limits_share);
    T_EQ(ps_resources_to_share(&limits, &total, 0, 0), t->e[a].out.limits_share);
    /* cpu is fixed point: 11.06 / 11.17 as doubles of the exact two-decimal values. */
    assert_true(t->e[a].out.limits_share.v[PS_RES_CPU] == 11.06 / 11.17);
    t_free(t);
}

static void test_empty_tree(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    t_run(t);
    T_EQ(ps_share_fill(0), t_fs(t, 0)->total);
    T_EQ(ps_share_fill(0), t_fs(t, a)->total);
    T_EQ(ps_share_fill(0), t_fs(t, b)->total);
    t_free(t);
}

static void test_one_large_operation(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    int x = t_op(t, a, "X", t_res(200, 200, 4000 * MB));
    t_run(t);
    struct ps_share expected = t_vec(0.5, 0.5, 0.0, 1.0, 0.0);
    T_EQ(expected, t_fs(t, 0)->total);
    T_EQ(expected, t_fs(t, a)->total);
    T_EQ(expected, t_fs(t, x)->total);
    T_EQ(ps_share_fill(0), t_fs(t, b)->total);
    t_free(t);
}

static void test_one_small_operation(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    int x = t_op(t, a, "X", t_res(30, 30, 600 * MB));
    t_run(t);
    struct ps_share expected = t_vec(0.3, 0.3, 0.0, 0.6, 0.0);
    T_EQ(expected, t_fs(t, 0)->total);
    T_EQ(expected, t_fs(t, a)->total);
    T_EQ(expected, t_fs(t, x)->total);
    T_EQ(ps_share_fill(0), t_fs(t, b)->total);
    t_free(t);
}

static void test_two_complementary_operations(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    int x = t_op(t, a, "X", t_res(100, 100, 2000 * MB));
    int y = t_op(t, a, "Y", t_res(100, 200, 1000 * MB));
    t_run(t);
    T_NEAR(t_vec(2.0 / 3, 1.0, 0.0, 1.0, 0.0), t_fs(t, 0)->total);
    T_NEAR(t_vec(2.0 / 3, 1.0, 0.0, 1.0, 0.0), t_fs(t, a)->total);
    T_NEAR(t_vec(1.0 / 3, 1.0 / 3, 0.0, 2.0 / 3, 0.0), t_fs(t, x)->total);
    T_NEAR(t_vec(1.0 / 3, 2.0 / 3, 0.0, 1.0 / 3, 0.0), t_fs(t, y)->total);
    T_NEAR(ps_share_fill(0), t_fs(t, b)->total);
    t_free(t);
}

static void test_complex_case(void **state)
{
    struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    int x = t_op(t, a, "X", t_res(10, 10, 200 * MB));
    int y = t_op(t, a, "Y", t_res(1000, 3000, 10000 * MB));
    int z = t_op(t, b, "Z", t_res(2000, 2000, 100000 * MB));
    t_run(t);
    /* Memory is saturated first. */
    T_NEAR(t_vec(16.0 / 40, 30.0 / 40, 0.0, 40.0 / 40, 0.0), t_fs(t, 0)->total);
    T_NEAR(t_vec(11.0 / 40, 25.0 / 40, 0.0, 15.0 / 40, 0.0), t_fs(t, a)->total);
    T_NEAR(t_vec(5.0 / 40, 5.0 / 40, 0.0, 25.0 / 40, 0.0), t_fs(t, b)->total);
    T_NEAR(t_vec(4.0 / 40, 4.0 / 40, 0.0, 8.0 / 40, 0.0), t_fs(t, x)->total);
    T_NEAR(t_vec(7.0 / 40, 21.0 / 40, 0.0, 7.0 / 40, 0.0), t_fs(t, y)->total);
    T_NEAR(t_vec(5.0 / 40, 5.0 / 40, 0.0, 25.0 / 40, 0.0), t_fs(t, z)->total);
    t_free(t);
}

static struct ps_resources non_continuous_total(void)
{
    struct ps_resources total = t_res(100000, 100, 100 * GB);
    total.v[PS_RES_NETWORK] = 100;
    return total;
}

static void test_non_continuous_fair_share(void **state)
{
    struct t_tree *t = t_new(non_continuous_total(), T_IMPROVED(state));
    int a = t_pool(t, 0, "PoolA"), b = t_pool(t, 0, "PoolB");
    struct ps_resources dx = t_res(10, 10, 10 * GB), dy = t_res(1000, 1000, 1000 * GB);
    dx.v[PS_RES_NETWORK] = 40;
    int x = t_op(t, a, "X", dx);
    t_weight(t, x, 10.0);
    int y = t_op(t, a, "Y", dy);
    t_run(t);
    T_NEAR(t_vec(0.001, 1.0, 0.0, 1.0, 0.4), t_fs(t, 0)->total);
    T_NEAR(t_vec(0.001, 1.0, 0.0, 1.0, 0.4), t_fs(t, a)->total);
    T_NEAR(ps_share_fill(0), t_fs(t, b)->total);
    T_NEAR(t_vec(0.0001, 0.1, 0.0, 0.1, 0.4), t_fs(t, x)->total);
    T_NEAR(t_vec(0.0009, 0.9, 0.0, 0.9, 0.0), t_fs(t, y)->total);
    t_free(t);
}

static void test_non_continuous_fair_share_function_is_left_continuous(void **state)
{
    struct t_tree *t = t_new(non_continuous_total(), T_IMPROVED(state));
    /* A fake root to carry a cpu limit. */
    int fake = t_pool(t, 0, "FakeRoot");
    int a = t_pool(t, fake, "PoolA"), b = t_pool(t, fake, "PoolB");
    t->e[fake].in.resource_limits.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, 40.0);
    struct ps_resources dx = t_res(10, 10, 10 * GB), dy = t_res(1000, 1000, 1000 * GB);
    dx.v[PS_RES_NETWORK] = 40;
    int x = t_op(t, a, "X", dx);
    t_weight(t, x, 10.0);
    int y = t_op(t, a, "Y", dy);
    t_run(t);
    /* 0.4 is a discontinuity of the root's FSBS: poolA gets its left limit there, although the
     * right limit would fit. */
    struct ps_share expected = t_vec(0.00014, 0.14, 0.0, 0.14, 0.4);
    T_NEAR(expected, t_fs(t, 0)->total);
    T_NEAR(expected, t_fs(t, fake)->total);
    T_NEAR(expected, t_fs(t, a)->total);
    T_NEAR(ps_share_fill(0), t_fs(t, b)->total);
    T_NEAR(t_vec(0.0001, 0.1, 0.0, 0.1, 0.4), t_fs(t, x)->total);
    T_NEAR(t_vec(0.00004, 0.04, 0.0, 0.04, 0.0), t_fs(t, y)->total);
    t_free(t);
}

/* Not upstream: the example of the DRF paper (Ghodsi et al., NSDI 2011), continuous version:
 * A's tasks need <1 cpu, 4 GB>, B's <3 cpu, 1 GB> on <9 cpu, 18 GB>; both dominant shares 2/3. */
static void test_drf_paper_example(void **state)
{
    struct t_tree *t = t_new(t_res(1000, 9, 18 * GB), T_IMPROVED(state));
    int a = t_pool(t, 0, "A"), b = t_pool(t, 0, "B");
    int x = t_op(t, a, "a", t_res(100, 100, 400 * GB));
    int y = t_op(t, b, "b", t_res(100, 300, 100 * GB));
    t_run(t);
    T_DOUBLE_NEAR(2.0 / 3, t_fs(t, x)->total.v[PS_RES_MEMORY], 1e-6);
    T_DOUBLE_NEAR(2.0 / 3, t_fs(t, y)->total.v[PS_RES_CPU], 1e-6);
    T_DOUBLE_NEAR(1.0 / 3, t_fs(t, x)->total.v[PS_RES_CPU], 1e-6);
    T_DOUBLE_NEAR(2.0 / 3 / 6, t_fs(t, y)->total.v[PS_RES_MEMORY], 1e-6);
    t_free(t);
}

static void test_imprecise_composition(void **state)
{
    /* Reconstructed upstream from a core dump (YT-13864): fair share must stay within the cluster. */
    struct t_tree *t = t_new(t_res(3, 3, 8316576848), T_IMPROVED(state));
    int pool = t_pool_sg(t, 0, "Pool", 3.0);
    int a = t_op(t, pool, "A", t_res(2, 2, 805306368));
    t->e[a].in.usage = t_res(2, 2, 805306368);
    t_op(t, pool, "B", t_res(3, 3, 1207959552));
    t_run(t);
    assert_false(ps_share_dominates(ps_share_fill(1.0), t_fs(t, pool)->total));
    t_free(t);
}

/* Upstream's TruncateFairShareInFifoPools: in a FIFO pool that truncates (its own setting, else
 * the tree's option), a gang operation whose fair share does not cover its demand gets 0, and
 * the pool and the root lose that share; without truncation it keeps the rest. */
static void test_fifo_truncation(void **state)
{
    for (int mode = 0; mode < 3; mode++) {   /* off, the pool's setting, the tree's option */
        struct t_tree *t = t_new(t_total100(), T_IMPROVED(state));
        t->opt.enable_step_function_for_gang_operations = false;
        t->opt.enable_fair_share_truncation_in_fifo_pool = mode == 2;
        int p = t_pool(t, 0, "fifo");
        t->p[p].in.mode = PS_MODE_FIFO;
        if (mode == 1)
            t->p[p].in.enable_fair_share_truncation_in_fifo_pool = 1;
        int a = t_gang(t, p, "A", t_res(60, 60, 600 * MB));
        int b = t_gang(t, p, "B", t_res(60, 60, 600 * MB));
        t_run(t);
        struct ps_share first = t_vec(0.6, 0.6, 0.0, 0.6, 0.0);
        T_NEAR(first, t_fs(t, a)->total);
        if (mode == 0) {
            T_NEAR(t_vec(0.4, 0.4, 0.0, 0.4, 0.0), t_fs(t, b)->total);
            T_NEAR(ps_share_fill(1.0), ps_share_add(t_fs(t, p)->total, t_vec(0.0, 0.0, 1.0, 0.0, 1.0)));
        } else {
            T_EQ(ps_share_fill(0), t_fs(t, b)->total);
            T_NEAR(first, t_fs(t, p)->total);
            T_NEAR(first, t_fs(t, 0)->total);
        }
        t_free(t);
    }
}

#define BOTH(f) cmocka_unit_test_prestate(f, &t_improved_off), cmocka_unit_test_prestate(f, &t_improved_on)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_simple),
        BOTH(test_resource_limits),
        BOTH(test_fractional_resource_limits),
        BOTH(test_empty_tree),
        BOTH(test_one_large_operation),
        BOTH(test_one_small_operation),
        BOTH(test_two_complementary_operations),
        BOTH(test_complex_case),
        BOTH(test_non_continuous_fair_share),
        BOTH(test_non_continuous_fair_share_function_is_left_continuous),
        BOTH(test_drf_paper_example),
        BOTH(test_imprecise_composition),
        BOTH(test_fifo_truncation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
