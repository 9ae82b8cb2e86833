#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/nodes.h"
#include "core/operation.h"
#include "core/pending.h"
#include "core/pool_tree.h"
#include "core/schedule.h"
#include "core/tree_fs.h"
#include "value_helpers.h"

struct fixture {
    struct ps_pool_tree *tree;
    struct ps_node *nodes[4];
    int node_count;
};

static void create(struct ps_pool_tree *tree, const char *name, const char *parent, const char *attrs)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value doc = json(attrs ? attrs : "{}");
    if (ps_pool_tree_create_pool(tree, name, parent, &doc, &err) != 0)
        fail_msg("create %s: %s", name, err.msg);
    ps_value_release(&doc);
}

static struct ps_tree_op *start(struct ps_pool_tree *tree, const char *id, const char *pool, int64_t start_ms,
                                const char *filter)
{
    struct ps_tree_op_settings s;
    memset(&s, 0, sizeof s);
    s.pool = pool;
    s.scheduling_tag_filter = filter;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_tree_op *op = NULL;
    if (ps_pool_tree_add_operation(tree, id, "user", start_ms, &s, &op, &err) != 0)
        fail_msg("start %s: %s", id, err.msg);
    return op;
}

static void add_node(struct fixture *f, const char *id, const char *tag1, const char *tag2, double cpu)
{
    const char *tags[2] = {tag1, tag2};
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, cpu);
    r.v[PS_RES_USER_SLOTS] = (int64_t)cpu;
    r.v[PS_RES_MEMORY] = (int64_t)cpu * 1000;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_node *n = ps_node_new(id, tags, tag2 ? 2 : 1, &r, &err);
    assert_non_null(n);
    assert_int_equal(ps_pool_tree_add_node(f->tree, n, &err), 0);
    f->nodes[f->node_count++] = n;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value cfg = json("{\"integral_guarantees\": {\"smooth_period\": 30000},"
                               " \"enable_improved_fair_share_by_fit_factor_computation\": true}");
    f->tree = ps_pool_tree_new("physical", &cfg, &err);
    ps_value_release(&cfg);
    add_node(f, "n1", "ssd", NULL, 10);
    add_node(f, "n2", "ssd", "gpu", 20);
    add_node(f, "n3", "hdd", NULL, 40);
    create(f->tree, "research", NULL,
           "{\"weight\": 2, \"max_share_ratio\": 0.5, \"strong_guarantee_resources\": {\"cpu\": 10},"
           " \"resource_limits\": {\"cpu\": 50}, \"scheduling_tag_filter\": \"ssd\","
           " \"integral_guarantees\": {\"resource_flow\": {\"cpu\": 2}, \"burst_guarantee_resources\": {\"cpu\": 10}}}");
    create(f->tree, "prod", NULL, "{\"mode\": \"fifo\", \"fifo_sort_parameters\": [\"start_time\", \"weight\"],"
                                  " \"max_running_operation_count\": 2, \"integral_guarantees\":"
                                  " {\"can_accept_free_volume\": false, \"should_distribute_free_volume_among_children\": true}}");
    create(f->tree, "burst", "research",
           "{\"integral_guarantees\": {\"guarantee_type\": \"burst\", \"resource_flow\": {\"cpu\": 1},"
           " \"burst_guarantee_resources\": {\"cpu\": 5}, \"relaxed_share_multiplier_limit\": 2}}");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    ps_pool_tree_free(f->tree);
    for (int i = 0; i < f->node_count; i++)
        ps_node_free(f->nodes[i]);
    free(f);
    return 0;
}

static void test_build_order_and_fields(void **state)
{
    struct fixture *f = *state;
    struct ps_pool_tree *t = f->tree;
    struct ps_tree_op *r2 = start(t, "r2", "research", 200, NULL);
    struct ps_tree_op *r1b = start(t, "r1b", "research", 100, "gpu");
    struct ps_tree_op *r1a = start(t, "r1a", "research", 100, NULL);
    struct ps_tree_op *p1 = start(t, "p1", "prod", 5, NULL);
    struct ps_tree_op *p2 = start(t, "p2", "prod", 6, NULL);
    struct ps_tree_op *p3 = start(t, "p3", "prod", 7, NULL);   /* pending: not in the build */
    struct ps_tree_op *b1 = start(t, "b1", "burst", 1, NULL);
    assert_false(p3->running);
    r1a->demand.v[PS_RES_CPU] = 700;
    r1a->usage.v[PS_RES_CPU] = 300;
    r1a->pending_job_count = 4;
    r1a->is_gang = true;
    r1a->weight = 3;
    r1a->weight_specified = true;
    struct ps_pool *burst = ps_pool_tree_find_pool(t, "burst");
    burst->accumulated_volume.v[PS_RES_CPU] = 600;
    burst->last_integral_share_ratio = 0.25;

    struct ps_tree_fs fs;
    ps_tree_fs_init(&fs);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_build_fs(t, &fs, 3600000, &err), 0);
    /* root; its children research, prod; research's: burst, r1a, r1b, r2; prod's: p1, p2; burst's: b1 */
    const char *names[] = {"<Root>", "research", "prod", "burst", "r1a", "r1b", "r2", "p1", "p2", "b1"};
    const int parents[] = {-1, 0, 0, 1, 1, 1, 1, 2, 2, 3};
    assert_int_equal(fs.count, 10);
    for (int i = 0; i < fs.count; i++) {
        assert_string_equal(fs.elems[i].in.name, names[i]);
        assert_int_equal(fs.elems[i].in.parent, parents[i]);
        assert_true(fs.elems[i].in.parent < i);
        assert_true((fs.pools[i] == NULL) != (fs.ops[i] == NULL));
        if (fs.pools[i])
            assert_int_equal(fs.pools[i]->fs_index, i);
        else
            assert_int_equal(fs.ops[i]->fs_index, i);
    }
    assert_int_equal(p3->fs_index, -1);
    assert_int_equal(fs.elems[0].in.kind, PS_ELEM_ROOT);
    assert_int_equal(fs.elems[1].in.kind, PS_ELEM_POOL);
    assert_int_equal(fs.elems[4].in.kind, PS_ELEM_OPERATION);
    assert_ptr_equal(fs.ops[4], r1a);
    assert_ptr_equal(fs.ops[5], r1b);
    assert_ptr_equal(fs.ops[6], r2);
    assert_ptr_equal(fs.ops[7], p1);
    assert_ptr_equal(fs.ops[8], p2);
    assert_ptr_equal(fs.ops[9], b1);

    /* root */
    const struct ps_fs_element_input *in = &fs.elems[0].in;
    assert_true(in->weight == 1.0 && in->max_share_ratio == 1.0);
    assert_int_equal(in->resource_limits.v[PS_RES_CPU], PS_RES_INFINITE);
    /* research */
    in = &fs.elems[1].in;
    assert_true(in->weight == 2.0 && in->weight_specified);
    assert_true(in->max_share_ratio == 0.5);
    assert_int_equal(in->resource_limits.v[PS_RES_CPU], 5000);
    assert_int_equal(in->resource_limits.v[PS_RES_MEMORY], PS_RES_INFINITE);
    assert_int_equal(in->filter_limits.v[PS_RES_CPU], 3000);        /* n1 + n2 have ssd */
    assert_int_equal(in->filter_limits.v[PS_RES_MEMORY], 30000);
    assert_int_equal(fs.fs_pools[in->pool].in.strong_guarantee.set, 1u << PS_RES_CPU);
    assert_int_equal(fs.fs_pools[in->pool].in.strong_guarantee.r.v[PS_RES_CPU], 1000);
    assert_int_equal(fs.fs_pools[in->pool].in.mode, PS_MODE_FAIR_SHARE);
    assert_int_equal(fs.fs_pools[in->pool].in.fifo_sort_count, 2);
    /* prod */
    in = &fs.elems[2].in;
    assert_false(in->weight_specified);
    assert_true(in->weight == 1.0);
    assert_int_equal(fs.fs_pools[in->pool].in.mode, PS_MODE_FIFO);
    assert_int_equal(fs.fs_pools[in->pool].in.fifo_sort[0], PS_FIFO_START_TIME);
    assert_int_equal(fs.fs_pools[in->pool].in.fifo_sort[1], PS_FIFO_WEIGHT);
    assert_int_equal(in->filter_limits.v[PS_RES_CPU], PS_RES_INFINITE);   /* no filter */
    assert_false(fs.fs_pools[in->pool].in.can_accept_free_volume);
    assert_int_equal(fs.fs_pools[in->pool].in.should_distribute_free_volume_among_children, 1);
    /* burst */
    in = &fs.elems[3].in;
    assert_int_equal(fs.fs_pools[in->pool].in.guarantee_type, PS_GUARANTEE_BURST);
    assert_int_equal(fs.fs_pools[in->pool].in.resource_flow.r.v[PS_RES_CPU], 100);
    assert_int_equal(fs.fs_pools[in->pool].in.burst_guarantee.r.v[PS_RES_CPU], 500);
    assert_true(fs.fs_pools[in->pool].in.relaxed_share_multiplier_limit == 2.0);
    assert_true(fs.fs_pools[in->pool].in.accumulated_volume.v[PS_RES_CPU] == 600);
    assert_true(fs.fs_pools[in->pool].in.can_accept_free_volume);                            /* default true */
    assert_int_equal(fs.fs_pools[in->pool].in.should_distribute_free_volume_among_children, -1);   /* the tree's */
    assert_true(fs.fs_pools[in->pool].in.last_integral_share_ratio == 0.25);
    /* operations */
    in = &fs.elems[4].in;
    assert_int_equal(in->demand.v[PS_RES_CPU], 700);
    assert_int_equal(in->usage.v[PS_RES_CPU], 300);
    assert_int_equal(in->pending_job_count, 4);
    assert_true(in->is_gang);
    assert_true(in->weight == 3 && in->weight_specified);
    assert_int_equal(in->start_time_ms, 100);
    assert_int_equal(fs.elems[5].in.filter_limits.v[PS_RES_CPU], 2000);   /* "gpu": n2 */
    assert_int_equal(fs.elems[6].in.filter_limits.v[PS_RES_CPU], PS_RES_INFINITE);

    /* input and options */
    assert_int_equal(fs.input.total.v[PS_RES_CPU], 7000);
    assert_int_equal(fs.input.now_ms, 3600000);
    assert_false(fs.input.has_previous_update);
    assert_int_equal(fs.options.integral_smooth_period_ms, 30000);
    assert_true(fs.options.enable_improved_fair_share_by_fit_factor_computation);
    assert_false(fs.options.should_distribute_free_volume_among_children);

    /* pool usage follows operations */
    assert_int_equal(ps_pool_tree_find_pool(t, "research")->usage.v[PS_RES_CPU], 300);
    assert_int_equal(ps_pool_tree_root(t)->usage.v[PS_RES_CPU], 300);

    /* a rebuild of an unchanged tree reuses the buffers */
    struct ps_fs_element *elems = fs.elems;
    assert_int_equal(ps_pool_tree_build_fs(t, &fs, 3601000, &err), 0);
    assert_ptr_equal(fs.elems, elems);
    assert_int_equal(fs.count, 10);
    ps_tree_fs_release(&fs);
}

static void set_share(struct ps_share *s, double cpu, double memory)
{
    *s = ps_share_fill(0.0);
    s->v[PS_RES_CPU] = cpu;
    s->v[PS_RES_MEMORY] = memory;
}

static void test_apply_results(void **state)
{
    struct fixture *f = *state;
    struct ps_pool_tree *t = f->tree;
    struct ps_tree_op *op = start(t, "op", "research", 1, NULL);
    struct ps_tree_fs fs;
    ps_tree_fs_init(&fs);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_build_fs(t, &fs, 1000, &err), 0);
    assert_false(op->dynamic.valid);
    /* What the engine would write (it clears the outputs first; the build leaves them). */
    for (int i = 0; i < fs.count; i++)
        memset(&fs.elems[i].out, 0, sizeof fs.elems[i].out);
    for (int i = 0; i < fs.pool_count; i++)
        memset(&fs.fs_pools[i].out, 0, sizeof fs.fs_pools[i].out);
    int ri = ps_pool_tree_find_pool(t, "research")->fs_index;
    int bi = ps_pool_tree_find_pool(t, "burst")->fs_index;
    int oi = op->fs_index;
    struct ps_fs_element_output *out = &fs.elems[ri].out;
    set_share(&out->fair_share.total, 0.3, 0.1);
    set_share(&out->usage_share, 0.05, 0.2);
    set_share(&out->demand_share, 0.6, 0.4);
    set_share(&fs.fs_pools[fs.elems[ri].in.pool].out.strong_guarantee_share, 10.0 / 70.0, 10.0 / 70.0);
    out->dominant_resource = PS_RES_MEMORY;
    set_share(&fs.elems[oi].out.fair_share.total, 0.25, 0.0);
    fs.elems[oi].out.dominant_resource = PS_RES_CPU;
    fs.fs_pools[fs.elems[bi].in.pool].in.accumulated_volume.v[PS_RES_CPU] = 1234.5;
    fs.fs_pools[fs.elems[bi].in.pool].in.last_integral_share_ratio = 0.125;
    assert_int_equal(ps_pool_tree_apply_fs(t, &fs, &err), 0);

    struct ps_pool *research = ps_pool_tree_find_pool(t, "research");
    assert_true(research->dynamic.valid);
    assert_true(research->dynamic.fair_share_ratio == 0.3);
    assert_true(research->dynamic.usage_ratio == 0.2);
    assert_true(research->dynamic.demand_ratio == 0.6);
    assert_true(research->dynamic.guaranteed_ratio == 10.0 / 70.0);
    assert_true(research->dynamic.min_share_ratio == 10.0 / 70.0);   /* specified cpu 10 of 70 */
    assert_int_equal(research->dynamic.dominant_resource, PS_RES_MEMORY);
    assert_true(research->dynamic.fs.fair_share.total.v[PS_RES_CPU] == 0.3);
    assert_int_equal(research->dynamic.starvation, PS_NON_STARVING);
    assert_true(research->dynamic.below_fair_share_since_ms == PS_STARVATION_NEVER);
    assert_true(op->dynamic.valid);
    assert_true(op->dynamic.fair_share_ratio == 0.25);
    struct ps_pool *burst = ps_pool_tree_find_pool(t, "burst");
    assert_true(burst->accumulated_volume.v[PS_RES_CPU] == 1234.5);
    assert_true(burst->last_integral_share_ratio == 0.125);

    /* The next build carries the integral state and the previous update time. */
    assert_int_equal(ps_pool_tree_build_fs(t, &fs, 2000, &err), 0);
    assert_true(fs.fs_pools[fs.elems[bi].in.pool].in.accumulated_volume.v[PS_RES_CPU] == 1234.5);
    assert_true(fs.input.has_previous_update);
    assert_int_equal(fs.input.previous_update_time_ms, 1000);

    /* A tree change between build and apply is refused, nothing copied. */
    struct ps_tree_op *late = start(t, "late", "prod", 5, NULL);
    fs.fs_pools[fs.elems[bi].in.pool].in.accumulated_volume.v[PS_RES_CPU] = 1.0;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_apply_fs(t, &fs, &err), PS_ESTATE);
    assert_non_null(strstr(err.msg, "build again"));
    assert_true(burst->accumulated_volume.v[PS_RES_CPU] == 1234.5);
    assert_false(late->dynamic.valid);
    ps_tree_fs_release(&fs);
}

/* An operation's satisfaction ratio after each apply is its local ratio of that apply's
 * outputs, whether they changed (usage, fair share or demand alone) or not. */
static void test_apply_satisfaction_follows_outputs(void **state)
{
    struct fixture *f = *state;
    struct ps_pool_tree *t = f->tree;
    struct ps_tree_op *op = start(t, "op", "research", 1, NULL);
    struct ps_tree_fs fs;
    ps_tree_fs_init(&fs);
    struct ps_error err;
    ps_error_init(&err);
    double usage[] = {0.1, 0.1, 0.3, 0.3, 0.3, 0.3};
    double fair[] = {0.25, 0.25, 0.25, 0.4, 0.4, 0.4};
    double demand[] = {0.5, 0.5, 0.5, 0.5, 0.2, 0.2};
    for (int k = 0; k < 6; k++) {
        assert_int_equal(ps_pool_tree_build_fs(t, &fs, 1000 * (k + 1), &err), 0);
        for (int i = 0; i < fs.count; i++)
            memset(&fs.elems[i].out, 0, sizeof fs.elems[i].out);
        struct ps_fs_element_output *o = &fs.elems[op->fs_index].out;
        set_share(&o->usage_share, usage[k], usage[k]);
        set_share(&o->fair_share.total, fair[k], fair[k]);
        set_share(&o->demand_share, demand[k], demand[k]);
        assert_int_equal(ps_pool_tree_apply_fs(t, &fs, &err), 0);
        double want = ps_sched_satisfaction_ratio(&o->usage_share, &o->fair_share.total,
                                                  &o->demand_share);
        assert_true(op->dynamic.satisfaction_ratio == want);
        assert_true(ps_pool_tree_find_pool(t, "research")->dynamic.satisfaction_ratio == want);
    }
    ps_tree_fs_release(&fs);
}

static void test_reconnection_makes_filter_limits_infinite(void **state)
{
    struct fixture *f = *state;
    struct ps_tree_fs fs;
    ps_tree_fs_init(&fs);
    struct ps_error err;
    ps_pool_tree_set_connect_time(f->tree, 10000);
    assert_int_equal(ps_pool_tree_build_fs(f->tree, &fs, 10000 + 299999, &err), 0);
    assert_int_equal(fs.elems[1].in.filter_limits.v[PS_RES_CPU], PS_RES_INFINITE);
    assert_int_equal(ps_pool_tree_build_fs(f->tree, &fs, 10000 + 300000, &err), 0);
    assert_int_equal(fs.elems[1].in.filter_limits.v[PS_RES_CPU], 3000);
    ps_tree_fs_release(&fs);
}

static void assert_same_input(const struct ps_fs_element_input *a, const struct ps_fs_element_input *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->parent, b->parent);
    assert_string_equal(a->name, b->name);
    assert_true(a->weight == b->weight);
    assert_int_equal(a->weight_specified, b->weight_specified);
    assert_int_equal(a->is_gang, b->is_gang);
    assert_int_equal(a->pool, b->pool);
    assert_true(a->max_share_ratio == b->max_share_ratio);
    assert_memory_equal(&a->resource_limits, &b->resource_limits, sizeof a->resource_limits);
    assert_memory_equal(&a->filter_limits, &b->filter_limits, sizeof a->filter_limits);
    assert_memory_equal(&a->demand, &b->demand, sizeof a->demand);
    assert_memory_equal(&a->usage, &b->usage, sizeof a->usage);
    assert_int_equal(a->start_time_ms, b->start_time_ms);
    assert_int_equal(a->pending_job_count, b->pending_job_count);
    assert_int_equal(a->strong_guarantee.set, b->strong_guarantee.set);
    assert_memory_equal(&a->strong_guarantee.r, &b->strong_guarantee.r, sizeof a->strong_guarantee.r);
}

/* A build at an unchanged generation keeps the elements and writes every input again: the
 * same array as a build from scratch, with the inputs changed in between. */
static void test_kept_build_equals_fresh_build(void **state)
{
    struct fixture *f = *state;
    struct ps_pool_tree *t = f->tree;
    create(t, "history", NULL, "{\"infer_children_weights_from_historic_usage\": true}");
    create(t, "weighed", "history", "{\"weight\": 3}");
    struct ps_tree_op *r1 = start(t, "r1", "research", 100, NULL);
    start(t, "r2", "research", 200, "gpu");
    start(t, "b1", "burst", 1, NULL);
    struct ps_tree_fs kept, fresh;
    ps_tree_fs_init(&kept);
    ps_tree_fs_init(&fresh);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_build_fs(t, &kept, 1000, &err), 0);
    assert_false(kept.kept);

    r1->usage.v[PS_RES_CPU] = 300;
    r1->demand.v[PS_RES_CPU] = 900;
    r1->pending_job_count = 6;
    struct ps_pool *burst = ps_pool_tree_find_pool(t, "burst");
    burst->accumulated_volume.v[PS_RES_CPU] = 700;
    burst->last_integral_share_ratio = 0.5;
    /* a weight from historic usage moves without a new config */
    struct ps_pool *weighed = ps_pool_tree_find_pool(t, "weighed");
    weighed->historic_usage.average = 1.0;
    assert_int_equal(ps_pool_tree_build_fs(t, &kept, 2000, &err), 0);
    assert_true(kept.kept);
    assert_int_equal(ps_pool_tree_build_fs(t, &fresh, 2000, &err), 0);
    assert_false(fresh.kept);
    assert_int_equal(kept.count, fresh.count);
    for (int i = 0; i < kept.count; i++) {
        assert_same_input(&kept.elems[i].in, &fresh.elems[i].in);
        assert_ptr_equal(kept.pools[i], fresh.pools[i]);
        assert_ptr_equal(kept.ops[i], fresh.ops[i]);
        if (kept.pools[i]) {
            const struct ps_fs_pool_input *a = &kept.fs_pools[kept.elems[i].in.pool].in;
            const struct ps_fs_pool_input *b = &fresh.fs_pools[fresh.elems[i].in.pool].in;
            assert_memory_equal(&a->accumulated_volume, &b->accumulated_volume, sizeof a->accumulated_volume);
            assert_true(a->last_integral_share_ratio == b->last_integral_share_ratio);
            assert_int_equal(a->mode, b->mode);
            assert_int_equal(a->guarantee_type, b->guarantee_type);
        }
    }
    assert_int_equal(kept.elems[r1->fs_index].in.usage.v[PS_RES_CPU], 300);
    assert_int_equal(kept.input.now_ms, 2000);
    assert_true(kept.elems[weighed->fs_index].in.weight == 1.5);
    assert_int_equal(ps_pool_tree_find_pool(t, "research")->usage.v[PS_RES_CPU], 300);
    assert_int_equal(ps_pool_tree_root(t)->usage.v[PS_RES_CPU], 300);

    /* a structural change: built from scratch */
    start(t, "r3", "research", 50, NULL);
    assert_int_equal(ps_pool_tree_build_fs(t, &kept, 3000, &err), 0);
    assert_false(kept.kept);
    assert_int_equal(kept.count, fresh.count + 1);
    ps_tree_fs_release(&kept);
    ps_tree_fs_release(&fresh);
}

/* Generations of different trees never meet: a build from a freed tree never passes for one of
 * a tree created later at the same address. */
static void test_trees_have_their_own_generations(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value cfg = json("{}");
    struct ps_pool_tree *a = ps_pool_tree_new("a", &cfg, &err);
    struct ps_pool_tree *b = ps_pool_tree_new("b", &cfg, &err);
    ps_value_release(&cfg);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(ps_pool_tree_generation(a) != ps_pool_tree_generation(b));
    ps_pool_tree_free(a);
    ps_pool_tree_free(b);
}

static const char *reason_text(struct ps_pool_tree *t, const struct ps_tree_op *op, enum ps_pending_reason expected)
{
    static char buf[256];
    struct ps_pending_info info;
    ps_pool_tree_pending_reason(t, op, &info);
    if (info.reason != expected)
        fail_msg("%s: reason %s, expected %s", op->id, ps_pending_reason_id(info.reason),
                 ps_pending_reason_id(expected));
    ps_pending_format(&info, buf, sizeof buf);
    return buf;
}

static void test_pending_reasons(void **state)
{
    struct fixture *f = *state;
    struct ps_pool_tree *t = f->tree;
    start(t, "p1", "prod", 1, NULL);
    start(t, "p2", "prod", 2, NULL);
    struct ps_tree_op *p3 = start(t, "p3", "prod", 3, NULL);
    assert_string_equal(reason_text(t, p3, PS_PENDING_MAX_RUNNING_OPERATIONS),
                        "max_running_operation_count of pool \"prod\" reached (2 of 2)");
    p3->suspended = true;
    assert_string_equal(reason_text(t, p3, PS_PENDING_SUSPENDED), "operation suspended");

    struct ps_tree_op *nf = start(t, "nf", "research", 4, "tpu");
    assert_string_equal(reason_text(t, nf, PS_PENDING_NO_MATCHING_NODE), "no node matches scheduling_tag_filter \"tpu\"");
    create(t, "tpus", NULL, "{\"scheduling_tag_filter\": \"tpu | gpu2\"}");
    struct ps_tree_op *pf = start(t, "pf", "tpus", 5, NULL);
    assert_string_equal(reason_text(t, pf, PS_PENDING_NO_MATCHING_NODE),
                        "no node matches scheduling_tag_filter \"tpu | gpu2\" of pool \"tpus\"");

    struct ps_tree_op *ol = start(t, "ol", "research", 6, NULL);
    ol->resource_limits.v[PS_RES_MEMORY] = 100;
    ol->usage.v[PS_RES_MEMORY] = 100;
    assert_string_equal(reason_text(t, ol, PS_PENDING_OPERATION_RESOURCE_LIMITS),
                        "resource_limits of the operation reached (memory)");
    ol->usage.v[PS_RES_MEMORY] = 99;
    /* research's limit is cpu 50; its usage comes from all its running operations */
    struct ps_tree_op *b = start(t, "b", "burst", 7, NULL);
    b->usage.v[PS_RES_CPU] = 3000;
    ol->usage.v[PS_RES_CPU] = 2000;
    ps_pool_tree_update_pool_usage(t);
    assert_string_equal(reason_text(t, ol, PS_PENDING_POOL_RESOURCE_LIMITS),
                        "resource_limits of pool \"research\" reached (cpu)");
    assert_string_equal(reason_text(t, b, PS_PENDING_POOL_RESOURCE_LIMITS),
                        "resource_limits of pool \"research\" reached (cpu)");
    ol->usage.v[PS_RES_CPU] = 0;
    ps_pool_tree_update_pool_usage(t);
    assert_string_equal(reason_text(t, ol, PS_PENDING_WAITING_FAIR_SHARE_UPDATE), "waiting for fair share update");
    ol->dynamic.valid = true;
    reason_text(t, ol, PS_PENDING_NONE);

    /* the reasons only the scheduler decides, formatted here */
    struct ps_pending_info info = {.reason = PS_PENDING_USAGE_AT_FAIR_SHARE, .resource = -1};
    char buf[128];
    ps_pending_format(&info, buf, sizeof buf);
    assert_string_equal(buf, "usage at fair share");
    info.reason = PS_PENDING_FRAGMENTED;
    ps_pending_format(&info, buf, sizeof buf);
    assert_string_equal(buf, "node resources fragmented");
    assert_string_equal(ps_pending_reason_id(PS_PENDING_FRAGMENTED), "resources_fragmented");
    assert_string_equal(ps_pending_reason_id(PS_PENDING_NO_NODE_FITS), "no_node_fits");
    assert_string_equal(ps_pending_reason_id(PS_PENDING_NO_FREE_RESOURCES), "no_free_resources");
    assert_string_equal(ps_pending_reason_id(PS_PENDING_WAITING_HEARTBEAT), "waiting_for_heartbeat");
    info.reason = PS_PENDING_NO_FREE_RESOURCES;
    info.tree = "physical";
    ps_pending_format(&info, buf, sizeof buf);
    assert_string_equal(buf, "no node of pool tree \"physical\" has free resources for the next job");
    info.reason = PS_PENDING_NO_NODE_FITS;
    ps_pending_format(&info, buf, sizeof buf);
    assert_string_equal(buf, "no node of pool tree \"physical\" is large enough for the next job");
    info.reason = PS_PENDING_WAITING_HEARTBEAT;
    ps_pending_format(&info, buf, sizeof buf);
    assert_string_equal(buf, "waiting for a node heartbeat");
    assert_string_equal(ps_pending_reason_id(PS_PENDING_REASON_COUNT), "unknown");

    /* a tree without nodes */
    struct ps_error err;
    ps_error_init(&err);
    struct ps_pool_tree *empty = ps_pool_tree_new("empty", NULL, &err);
    struct ps_tree_op_settings s;
    memset(&s, 0, sizeof s);
    struct ps_tree_op *op;
    assert_int_equal(ps_pool_tree_add_operation(empty, "x", "u", 0, &s, &op, &err), 0);
    assert_string_equal(reason_text(empty, op, PS_PENDING_NO_NODES), "pool tree \"empty\" has no nodes");
    ps_pool_tree_free(empty);
}

/* A reason ps_pending_text_fixed calls fixed formats to the same text whatever else the info
 * says (hosts skip formatting it again); every other reason's text names something. */
static void test_pending_text_fixed(void **state)
{
    (void)state;
    for (int r = PS_PENDING_NONE; r < PS_PENDING_REASON_COUNT; r++) {
        struct ps_pending_info a = {.reason = r, .resource = -1};
        struct ps_pending_info b = {.reason = r, .pool = "p", .filter = "f", .tree = "t",
                                    .count = 3, .limit = 2, .resource = PS_RES_CPU};
        char ta[256], tb[256];
        ps_pending_format(&a, ta, sizeof ta);
        ps_pending_format(&b, tb, sizeof tb);
        if (ps_pending_text_fixed((enum ps_pending_reason)r))
            assert_string_equal(ta, tb);
        else
            assert_string_not_equal(ta, tb);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_build_order_and_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_apply_results, setup, teardown),
        cmocka_unit_test_setup_teardown(test_apply_satisfaction_follows_outputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconnection_makes_filter_limits_infinite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kept_build_equals_fresh_build, setup, teardown),
        cmocka_unit_test(test_trees_have_their_own_generations),
        cmocka_unit_test_setup_teardown(test_pending_reasons, setup, teardown),
        cmocka_unit_test(test_pending_text_fixed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
