/* Tests of the synthetic trees of `poolsched bench fair-share` (src/bench/bench_workload.h):
 * a benchmark is only as good as its workload, so its promises are checked here. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bench/bench_workload.h"

static const struct ps_bench_fs_params normal = {.seed = 1, .pools = 1000, .operations = 10000, .nodes = 10000};

static bool is_set(const struct ps_resources_opt *opt, int resource)
{
    return (opt->set >> resource) & 1u;
}

static void test_rejects_sizes_out_of_range(void **state)
{
    (void)state;
    struct ps_bench_fs_workload w;
    struct ps_error err;
    struct ps_bench_fs_params p = normal;
    p.pools = 2;
    ps_error_init(&err);
    assert_int_equal(ps_bench_fs_workload_init(&w, &p, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pools: 2"));
    assert_null(w.elems);
    ps_bench_fs_workload_release(&w);

    p = normal;
    p.operations = 0;
    ps_error_init(&err);
    assert_int_equal(ps_bench_fs_workload_init(&w, &p, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "operations: 0"));

    p = normal;
    p.nodes = 9;
    ps_error_init(&err);
    assert_int_equal(ps_bench_fs_workload_init(&w, &p, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "nodes: 9"));
}

static bool same_input(const struct ps_fs_element_input *a, const struct ps_fs_element_input *b)
{
    return a->kind == b->kind && a->parent == b->parent && strcmp(a->name, b->name) == 0 &&
           a->weight == b->weight && a->weight_specified == b->weight_specified &&
           a->max_share_ratio == b->max_share_ratio &&
           ps_resources_equal(a->resource_limits, b->resource_limits) &&
           ps_resources_equal(a->filter_limits, b->filter_limits) && a->pool == b->pool &&
           ps_resources_equal(a->demand, b->demand) && ps_resources_equal(a->usage, b->usage) &&
           a->start_time_ms == b->start_time_ms && a->pending_job_count == b->pending_job_count &&
           a->is_gang == b->is_gang;
}

static bool same_pool_input(const struct ps_fs_pool_input *a, const struct ps_fs_pool_input *b)
{
    return a->mode == b->mode && a->fifo_sort_count == b->fifo_sort_count &&
           memcmp(a->fifo_sort, b->fifo_sort, sizeof a->fifo_sort) == 0 &&
           a->strong_guarantee.set == b->strong_guarantee.set &&
           ps_resources_equal(a->strong_guarantee.r, b->strong_guarantee.r) &&
           a->guarantee_type == b->guarantee_type && a->resource_flow.set == b->resource_flow.set &&
           ps_resources_equal(a->resource_flow.r, b->resource_flow.r) &&
           a->burst_guarantee.set == b->burst_guarantee.set &&
           ps_resources_equal(a->burst_guarantee.r, b->burst_guarantee.r) &&
           a->relaxed_share_multiplier_limit == b->relaxed_share_multiplier_limit &&
           a->can_accept_free_volume == b->can_accept_free_volume &&
           a->should_distribute_free_volume_among_children == b->should_distribute_free_volume_among_children &&
           memcmp(&a->accumulated_volume, &b->accumulated_volume, sizeof a->accumulated_volume) == 0 &&
           a->last_integral_share_ratio == b->last_integral_share_ratio;
}

static void test_same_seed_same_tree(void **state)
{
    (void)state;
    struct ps_bench_fs_workload a, b, c;
    struct ps_bench_fs_params other = normal;
    other.seed = 2;
    assert_int_equal(ps_bench_fs_workload_init(&a, &normal, NULL), 0);
    assert_int_equal(ps_bench_fs_workload_init(&b, &normal, NULL), 0);
    assert_int_equal(ps_bench_fs_workload_init(&c, &other, NULL), 0);
    assert_int_equal(a.count, b.count);
    int differ = 0;
    for (int i = 0; i < a.count; i++) {
        assert_true(same_input(&a.elems[i].in, &b.elems[i].in));
        differ += !same_input(&a.elems[i].in, &c.elems[i].in);
    }
    for (int i = 0; i <= a.pools; i++) {
        assert_int_equal(a.elems[i].in.pool, i);
        assert_true(same_pool_input(&a.fs_pools[i].in, &b.fs_pools[i].in));
    }
    assert_true(differ > a.count / 2);
    ps_bench_fs_workload_release(&a);
    ps_bench_fs_workload_release(&b);
    ps_bench_fs_workload_release(&c);
    assert_null(a.elems);
}

static int depth(const struct ps_bench_fs_workload *w, int i)
{
    int d = 0;
    for (; i > 0; i = w->elems[i].in.parent)
        d++;
    return d;
}

static void test_three_levels_of_pools_then_operations(void **state)
{
    (void)state;
    struct ps_bench_fs_workload w;
    assert_int_equal(ps_bench_fs_workload_init(&w, &normal, NULL), 0);
    assert_int_equal(w.count, 1 + 1000 + 10000);
    assert_int_equal(w.elems[0].in.kind, PS_ELEM_ROOT);
    assert_int_equal(w.elems[0].in.parent, -1);
    assert_string_equal(w.elems[0].in.name, "<Root>");
    int per_level[PS_BENCH_FS_LEVELS + 1] = {0};
    for (int i = 1; i <= w.pools; i++) {
        const struct ps_fs_element_input *in = &w.elems[i].in;
        assert_int_equal(in->kind, PS_ELEM_POOL);
        assert_in_range(in->parent, 0, i - 1);
        int d = depth(&w, i);
        assert_in_range(d, 1, PS_BENCH_FS_LEVELS);
        per_level[d]++;
    }
    for (int l = 1; l <= PS_BENCH_FS_LEVELS; l++)
        assert_int_equal(per_level[l], w.summary.pools_per_level[l - 1]);
    assert_int_equal(per_level[1], 10);
    for (int i = w.pools + 1; i < w.count; i++) {
        assert_int_equal(w.elems[i].in.kind, PS_ELEM_OPERATION);
        assert_in_range(w.elems[i].in.parent, 1, w.pools);
        assert_true(w.elems[i].in.start_time_ms < w.now_ms);
    }
    ps_bench_fs_workload_release(&w);
}

/* Children's strong guarantees fit their parent's, and the root's children fit the cluster
 * with the burst guarantees on top. */
static void test_guarantees_fit(void **state)
{
    (void)state;
    struct ps_bench_fs_workload w;
    assert_int_equal(ps_bench_fs_workload_init(&w, &normal, NULL), 0);
    int64_t children_sg[1 + 1000] = {0};
    int strong = 0, burst = 0, relaxed = 0;
    int64_t burst_cpu = 0;
    for (int i = 1; i <= w.pools; i++) {
        const struct ps_fs_element_input *in = &w.elems[i].in;
        const struct ps_fs_pool_input *pin = &w.fs_pools[in->pool].in;
        if (pin->strong_guarantee.set) {
            strong++;
            assert_true(is_set(&pin->strong_guarantee, PS_RES_CPU));
            assert_true(pin->strong_guarantee.r.v[PS_RES_CPU] > 0);
            assert_true(in->parent == 0 || w.fs_pools[in->parent].in.strong_guarantee.set);
            children_sg[in->parent] += pin->strong_guarantee.r.v[PS_RES_CPU];
        }
        if (pin->guarantee_type != PS_GUARANTEE_NONE) {
            for (int a = in->parent; a > 0; a = w.elems[a].in.parent)
                assert_int_equal(w.fs_pools[a].in.guarantee_type, PS_GUARANTEE_NONE);
            assert_true(is_set(&pin->resource_flow, PS_RES_CPU));
            double flow_ratio = 0;   /* the largest ratio over the resources given */
            for (int r = 0; r < PS_RES_COUNT; r++) {
                double ratio = (double)pin->resource_flow.r.v[r] / (double)w.total.v[r];
                if (is_set(&pin->resource_flow, r) && ratio > flow_ratio)
                    flow_ratio = ratio;
            }
            for (int r = 0; r < PS_RES_COUNT; r++) {
                double capacity = flow_ratio * 86400.0 * ps_res_get(&w.total, r);
                assert_true(pin->accumulated_volume.v[r] >= 0);
                assert_true(pin->accumulated_volume.v[r] <= capacity * (1 + 1e-12));
            }
        }
        if (pin->guarantee_type == PS_GUARANTEE_BURST) {
            burst++;
            assert_true(is_set(&pin->burst_guarantee, PS_RES_CPU));
            assert_true(pin->burst_guarantee.r.v[PS_RES_CPU] >= pin->resource_flow.r.v[PS_RES_CPU]);
            burst_cpu += pin->burst_guarantee.r.v[PS_RES_CPU];
        }
        relaxed += pin->guarantee_type == PS_GUARANTEE_RELAXED;
    }
    for (int i = 1; i <= w.pools; i++)
        if (children_sg[i] > 0)
            assert_true(children_sg[i] <= w.fs_pools[i].in.strong_guarantee.r.v[PS_RES_CPU]);
    assert_true(children_sg[0] + burst_cpu <= w.total.v[PS_RES_CPU]);
    assert_in_range(strong, 95, 105);
    assert_int_equal(strong, w.summary.strong_guarantee_pools);
    assert_int_equal(burst, 50);
    assert_int_equal(relaxed, 50);
    ps_bench_fs_workload_release(&w);
}

/* Usage fits demand and the cluster; gang operations run all or nothing; the tree has the
 * features the benchmark promises. */
static void test_operations_are_consistent(void **state)
{
    (void)state;
    struct ps_bench_fs_workload w;
    assert_int_equal(ps_bench_fs_workload_init(&w, &normal, NULL), 0);
    struct ps_resources usage = ps_resources_zero();
    int gang = 0, fifo = 0, saturated_ops = 0;
    for (int i = 1; i <= w.pools; i++)
        fifo += w.fs_pools[i].in.mode == PS_MODE_FIFO;
    for (int i = w.pools + 1; i < w.count; i++) {
        const struct ps_fs_element_input *in = &w.elems[i].in;
        assert_false(ps_resources_is_zero(in->demand));
        assert_true(ps_resources_fit(ps_resources_zero(), in->usage));
        assert_true(ps_resources_fit(in->usage, in->demand));
        assert_true(in->pending_job_count >= 0);
        if (in->is_gang) {
            gang++;
            assert_true(ps_resources_is_zero(in->usage) || ps_resources_equal(in->usage, in->demand));
        }
        saturated_ops += !ps_resources_is_zero(in->usage) && ps_resources_equal(in->usage, in->demand);
        usage = ps_resources_add(usage, in->usage);
    }
    assert_true(ps_resources_fit(usage, w.total));
    assert_true(w.summary.usage.v[PS_RES_CPU] > 0.5);
    assert_true(w.summary.demand.v[PS_RES_CPU] > 1.0);
    assert_int_equal(gang, w.summary.gang_operations);
    assert_int_equal(fifo, w.summary.fifo_pools);
    assert_true(gang > 0 && fifo > 0 && saturated_ops > 0);
    assert_true(w.summary.idle_pools > 0 && w.summary.gpu_pools > 0 && w.summary.limited_pools > 0);
    ps_bench_fs_workload_release(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rejects_sizes_out_of_range),
        cmocka_unit_test(test_same_seed_same_tree),
        cmocka_unit_test(test_three_levels_of_pools_then_operations),
        cmocka_unit_test(test_guarantees_fit),
        cmocka_unit_test(test_operations_are_consistent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
