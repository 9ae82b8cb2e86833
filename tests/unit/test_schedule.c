#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/schedule.h"

/* ---- helpers ---------------------------------------------------------------------------- */

#define MAX_ELEMS 256
#define GIB (1024LL * 1024 * 1024)

struct tree {
    struct ps_fs_element e[MAX_ELEMS];
    struct ps_fs_pool p[MAX_ELEMS];   /* element i names p[i] when it is a pool */
    struct ps_sched_operation ops[MAX_ELEMS];
    int n;
};

/* Cluster total: 100 slots, 100 cpu, 100 GiB. */
static struct ps_resources total_res(void)
{
    return (struct ps_resources){{100, 100 * PS_CPU_SCALE, 0, 100 * GIB, 0}};
}

static struct ps_resources res(int64_t slots, double cpu, int64_t mem_gib)
{
    return (struct ps_resources){{slots, (int64_t)(cpu * PS_CPU_SCALE + 0.5), 0, mem_gib * GIB, 0}};
}

/* fair share x in slots, cpu and memory; demand 1 there (nothing blocked). */
static int add(struct tree *t, enum ps_element_kind kind, int parent, double fair)
{
    int i = t->n++;
    struct ps_fs_element *e = &t->e[i];
    memset(e, 0, sizeof *e);
    e->in.kind = kind;
    e->in.parent = parent;
    e->in.pool = i;
    memset(&t->p[i], 0, sizeof t->p[i]);
    t->p[i].in.mode = PS_MODE_FAIR_SHARE;
    e->in.start_time_ms = i;
    e->out.fair_share.total = (struct ps_share){{fair, fair, 0, fair, 0}};
    e->out.demand_share = (struct ps_share){{1, 1, 0, 1, 0}};
    e->out.resource_limits = ps_resources_infinite();
    e->out.fifo_index = -1;
    memset(&t->ops[i], 0, sizeof t->ops[i]);
    return i;
}

static int add_op(struct tree *t, int parent, double fair, int64_t pending, struct ps_resources a)
{
    int i = add(t, PS_ELEM_OPERATION, parent, fair);
    t->ops[i] = (struct ps_sched_operation){.runnable = true, .pending_count = pending, .allocation = a};
    return i;
}

/* A filter for tests: a node matches iff it has `tag`. Counts evaluations. */
struct test_filter {
    const char *tag;
    int evaluations;
};

static bool test_filter_eval(const struct ps_formula *f, const char *const *tags, int n)
{
    struct test_filter *tf = (struct test_filter *)(uintptr_t)f;
    tf->evaluations++;
    for (int i = 0; i < n; i++)
        if (strcmp(tags[i], tf->tag) == 0)
            return true;
    return false;
}

static const struct ps_formula *as_filter(struct test_filter *tf)
{
    return (const struct ps_formula *)(void *)tf;
}

static struct ps_sched_options opts(void)
{
    struct ps_sched_options o;
    ps_sched_options_init(&o);
    o.total = total_res();
    o.min_spare = ps_resources_zero();
    o.filter_eval = test_filter_eval;
    o.generation = 1;
    return o;
}

static struct ps_sched_snapshot *build(struct tree *t, const struct ps_sched_options *o)
{
    struct ps_sched_snapshot *s = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_sched_snapshot_new(t->e, t->n, t->p, t->n, t->ops, o, &s, &err);
    if (rc)
        fail_msg("snapshot: %s", err.msg);
    return s;
}

static struct ps_sched_node node_of(int64_t id, struct ps_resources limits)
{
    struct ps_sched_node n;
    memset(&n, 0, sizeof n);
    n.id = id;
    n.limits = limits;
    n.usage = ps_resources_zero();
    return n;
}

static void heartbeat(struct ps_sched_snapshot *s, struct ps_sched_node *n, struct ps_sched_result *r)
{
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_schedule_heartbeat(s, n, 0, r, &err);
    if (rc)
        fail_msg("heartbeat: %s", err.msg);
    n->usage = r->node_usage;
}

/* Fills `count` nodes of 10 slots / 10 cpu / 10 GiB with one heartbeat each. */
static void fill_nodes(struct ps_sched_snapshot *s, int count, struct ps_sched_result *r)
{
    for (int k = 0; k < count; k++) {
        struct ps_sched_node n = node_of(k, res(10, 10, 10));
        heartbeat(s, &n, r);
    }
}

static int64_t cpu_of(const struct ps_sched_snapshot *s, int i)
{
    return ps_sched_usage(s, i).v[PS_RES_CPU] / PS_CPU_SCALE;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_satisfaction_ratio_cases(void **state)
{
    (void)state;
    struct ps_share demand = {{1, 1, 0, 1, 0}};
    struct ps_share fair = {{0.5, 0.5, 0, 0.5, 0}};
    struct ps_share usage = {{0.25, 0.1, 0, 0.2, 0}};
    /* below fair share, nothing blocked: max over non-blocked of usage / fair */
    assert_true(ps_sched_satisfaction_ratio(&usage, &fair, &demand) == 0.5);
    /* above in one resource: max ratio, >= 1 */
    usage.v[PS_RES_MEMORY] = 0.75;
    assert_true(ps_sched_satisfaction_ratio(&usage, &fair, &demand) == 1.5);
    /* zero fair share: infinite */
    struct ps_share zero = ps_share_fill(0);
    assert_true(ps_sched_satisfaction_ratio(&usage, &zero, &demand) == PS_SCHED_INFINITE_SATISFACTION);
    /* everything blocked (fair >= demand): min component, 0/0 -> 1 */
    struct ps_share small_demand = {{0.5, 0.5, 0, 0.5, 0}};
    struct ps_share u2 = {{0.25, 0.1, 0, 0.2, 0}};
    assert_true(ps_sched_satisfaction_ratio(&u2, &fair, &small_demand) == 0.2);
}

static void split_follows_fair_share(double fa, double fb)
{
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int a = add(&t, PS_ELEM_POOL, 0, fa);
    int b = add(&t, PS_ELEM_POOL, 0, fb);
    add_op(&t, a, fa, 1000, res(1, 1, 1));
    add_op(&t, b, fb, 1000, res(1, 1, 1));
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);
    fill_nodes(s, 10, &r);
    int64_t ua = cpu_of(s, a), ub = cpu_of(s, b);
    assert_int_equal(ua + ub, 100);
    assert_true(ua >= (int64_t)(fa * 100) - 1 && ua <= (int64_t)(fa * 100 + 0.5) + 1);
    assert_true(ub >= (int64_t)(fb * 100) - 1 && ub <= (int64_t)(fb * 100 + 0.5) + 1);
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

static void test_usage_split_follows_fair_share(void **state)
{
    (void)state;
    split_follows_fair_share(0.5, 0.5);
    split_follows_fair_share(0.75, 0.25);
    split_follows_fair_share(0.3, 0.7);
}

static void test_strict_order_by_satisfaction(void **state)
{
    (void)state;
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int x = add_op(&t, 0, 0.2, 10, res(1, 1, 1));
    int y = add_op(&t, 0, 0.3, 10, res(1, 1, 1));
    int z = add_op(&t, 0, 0.5, 10, res(1, 1, 1));
    /* satisfaction: x 10/20 = 0.5, y 9/30 = 0.3, z 20/50 = 0.4 */
    t.e[x].in.usage = res(10, 10, 10);
    t.e[y].in.usage = res(9, 9, 9);
    t.e[z].in.usage = res(20, 20, 20);
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *s = build(&t, &o);
    assert_true(ps_sched_local_satisfaction(s, y) < ps_sched_local_satisfaction(s, z));
    struct ps_sched_result r;
    ps_sched_result_init(&r);
    /* Room for exactly 4 allocations: y (0.3 -> 0.333), y (0.333 -> 0.367), y (-> 0.4), then
     * z and y tie at 0.4... y is at 12/30 = 0.4, z at 20/50 = 0.4: tie by FIFO index -1 == -1,
     * start time: z was created later, so y. */
    struct ps_sched_node n = node_of(1, res(4, 4, 4));
    heartbeat(s, &n, &r);
    assert_int_equal(r.allocation_count, 4);
    for (int k = 0; k < 4; k++)
        assert_int_equal(r.allocations[k].op, y);
    /* One more slot: y is at 13/30 = 0.433, z at 0.4, x at 0.5 -> z. */
    struct ps_sched_node n2 = node_of(2, res(1, 1, 1));
    heartbeat(s, &n2, &r);
    assert_int_equal(r.allocation_count, 1);
    assert_int_equal(r.allocations[0].op, z);
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

static void fifo_pool_run(bool fifo_order, int64_t *first, int64_t *second)
{
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int p = add(&t, PS_ELEM_POOL, 0, 1.0);
    t.p[p].in.mode = PS_MODE_FIFO;
    int o1 = add_op(&t, p, 0.5, 6, res(1, 1, 1));
    int o2 = add_op(&t, p, 0.5, 100, res(1, 1, 1));
    t.e[o1].out.fifo_index = 0;
    t.e[o2].out.fifo_index = 1;
    struct ps_sched_options o = opts();
    o.fifo_order_in_fifo_pools = fifo_order;
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);
    struct ps_sched_node n = node_of(1, res(8, 8, 8));
    heartbeat(s, &n, &r);
    *first = cpu_of(s, o1);
    *second = cpu_of(s, o2);
    if (fifo_order) {   /* the first operation takes everything it can before the second */
        for (int k = 0; k < 6; k++)
            assert_int_equal(r.allocations[k].op, o1);
        assert_int_equal(ps_sched_operation_reason(s, o1, NULL), PS_SCHED_NO_PENDING);
    }
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

static void test_fifo_pool_order(void **state)
{
    (void)state;
    int64_t a, b;
    fifo_pool_run(true, &a, &b);
    assert_int_equal(a, 6);
    assert_int_equal(b, 2);
    fifo_pool_run(false, &a, &b);   /* satisfaction order: equal fair shares alternate */
    assert_int_equal(a, 4);
    assert_int_equal(b, 4);
}

static void test_tag_filter(void **state)
{
    (void)state;
    struct test_filter gpu = {"gpu", 0};
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int g = add_op(&t, 0, 0.9, 100, res(1, 1, 1));   /* most unsatisfied: always surfaces */
    t.ops[g].filter = as_filter(&gpu);
    int c = add_op(&t, 0, 0.1, 100, res(1, 1, 1));
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);
    struct ps_sched_filter_cache *cache = ps_sched_filter_cache_new();
    const char *plain_tags[] = {"ssd", "rack1"};
    for (int k = 0; k < 5; k++) {
        struct ps_sched_node n = node_of(k, res(4, 4, 4));
        n.tags = plain_tags;
        n.tag_count = 2;
        n.filter_cache = cache;   /* the same node heartbeating repeatedly */
        heartbeat(s, &n, &r);
        for (int j = 0; j < r.allocation_count; j++)
            assert_int_equal(r.allocations[j].op, c);
        assert_int_equal(r.allocation_count, 4);
        /* g surfaces first and is switched off; c fills the node and is then too big for it */
        assert_int_equal(r.skip_count, 2);
        assert_int_equal(r.skips[0].op, g);
        assert_int_equal(r.skips[0].reason, PS_SCHED_FILTER_MISMATCH);
        assert_int_equal(r.skips[1].op, c);
        assert_int_equal(r.skips[1].reason, PS_SCHED_NODE_RESOURCES);
    }
    assert_int_equal(gpu.evaluations, 1);   /* cached across heartbeats of one node */
    assert_int_equal(cpu_of(s, g), 0);
    assert_int_equal(ps_sched_operation_reason(s, g, NULL), PS_SCHED_FILTER_MISMATCH);

    const char *gpu_tags[] = {"gpu"};
    struct ps_sched_node n = node_of(99, res(4, 4, 4));
    n.tags = gpu_tags;
    n.tag_count = 1;
    heartbeat(s, &n, &r);
    assert_int_equal(r.allocation_count, 4);
    for (int j = 0; j < 4; j++)
        assert_int_equal(r.allocations[j].op, g);
    /* the last thing that stopped g: the gpu node became full */
    assert_int_equal(ps_sched_operation_reason(s, g, NULL), PS_SCHED_NODE_RESOURCES);
    ps_sched_filter_cache_free(cache);
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

static void test_nested_pool_limits(void **state)
{
    (void)state;
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int a = add(&t, PS_ELEM_POOL, 0, 0.8);
    t.e[a].out.resource_limits = res(100, 3, 100);   /* 3 cpu */
    int b = add(&t, PS_ELEM_POOL, a, 0.8);
    int oa = add_op(&t, b, 0.8, 100, res(1, 1, 1));
    int oc = add_op(&t, 0, 0.2, 100, res(1, 1, 1));
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);
    fill_nodes(s, 2, &r);
    assert_int_equal(cpu_of(s, a), 3);
    assert_int_equal(cpu_of(s, b), 3);
    assert_int_equal(cpu_of(s, oc), 17);
    int where = -2;
    assert_int_equal(ps_sched_operation_reason(s, oa, &where), PS_SCHED_LIMITS);
    assert_int_equal(where, a);
    /* Finishing one allocation frees room under the limit again. */
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_sched_allocation_finished(s, oa, res(1, 1, 1), &err), 0);
    struct ps_sched_node n = node_of(7, res(10, 10, 10));
    heartbeat(s, &n, &r);
    assert_int_equal(cpu_of(s, a), 3);
    assert_int_equal(r.allocations[0].op, oa);
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

static void test_allocation_bigger_than_node(void **state)
{
    (void)state;
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int big = add_op(&t, 0, 0.9, 1000000, res(1, 20, 1));
    int small = add_op(&t, 0, 0.1, 3, res(1, 1, 1));
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);
    struct ps_sched_node n = node_of(1, res(10, 10, 10));
    heartbeat(s, &n, &r);
    assert_int_equal(r.allocation_count, 3);
    for (int j = 0; j < 3; j++)
        assert_int_equal(r.allocations[j].op, small);
    assert_int_equal(cpu_of(s, big), 0);
    assert_int_equal(r.candidates_considered, 4);   /* big once, then small three times */
    assert_int_equal(ps_sched_operation_reason(s, big, NULL), PS_SCHED_NODE_RESOURCES);
    assert_int_equal(ps_sched_pending(s, big), 1000000);
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

static void test_zero_pending_not_considered(void **state)
{
    (void)state;
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int idle = add_op(&t, 0, 0.9, 0, res(1, 1, 1));
    int stopped = add_op(&t, 0, 0.9, 5, res(1, 1, 1));
    t.ops[stopped].runnable = false;
    int busy = add_op(&t, 0, 0.1, 5, res(1, 1, 1));
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);
    struct ps_sched_node n = node_of(1, res(10, 10, 10));
    heartbeat(s, &n, &r);
    assert_int_equal(r.allocation_count, 5);
    assert_int_equal(r.candidates_considered, 5);
    assert_int_equal(r.skip_count, 0);
    assert_int_equal(cpu_of(s, busy), 5);
    assert_int_equal(ps_sched_operation_reason(s, idle, NULL), PS_SCHED_NO_PENDING);
    assert_int_equal(ps_sched_operation_reason(s, stopped, NULL), PS_SCHED_NOT_RUNNABLE);
    /* Becoming runnable puts it back. */
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_sched_set_runnable(s, stopped, true, &err), 0);
    struct ps_sched_node n2 = node_of(2, res(2, 2, 2));
    heartbeat(s, &n2, &r);
    assert_int_equal(r.allocation_count, 2);
    assert_int_equal(r.allocations[0].op, stopped);
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

static void test_min_spare_resources(void **state)
{
    (void)state;
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    add_op(&t, 0, 1.0, 100, res(1, 0.5, 1));
    struct ps_sched_options o = opts();
    o.min_spare = res(0, 1, 0);   /* at least one free cpu to start anything */
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);
    struct ps_sched_node n = node_of(1, res(100, 4, 100));
    heartbeat(s, &n, &r);
    /* 0.5 cpu each; stops once less than 1 cpu is free: 4 -> ... -> 0.5 free after 7 */
    assert_int_equal(r.allocation_count, 7);
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

/* The extension point for preemptive stages: only eligible operations, extra resources, one
 * allocation at most. */
static bool only_op(void *ctx, const struct ps_sched_snapshot *snap, int op)
{
    (void)snap;
    return op == *(int *)ctx;
}

static void test_stage_extension_point(void **state)
{
    (void)state;
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int a = add_op(&t, 0, 0.9, 10, res(1, 4, 1));   /* would be first in a regular stage */
    int starving = add_op(&t, 0, 0.1, 10, res(1, 4, 1));
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);
    struct ps_sched_node n = node_of(1, res(10, 10, 10));
    n.usage = res(2, 8, 2);                          /* 2 cpu free: nothing fits */
    heartbeat(s, &n, &r);
    assert_int_equal(r.allocation_count, 0);
    assert_int_equal(r.skip_count, 2);              /* both: node resources */
    r.node_usage = n.usage;
    struct ps_sched_stage stage = {
        .extra = res(0, 4, 0), .eligible = only_op, .ctx = &starving, .max_allocations = 1,
    };
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_schedule_stage(s, &n, &stage, &r, &err), 0);
    assert_int_equal(r.allocation_count, 1);
    assert_int_equal(r.allocations[0].op, starving);
    assert_int_equal(r.skip_count, 3);              /* the stage appends to the result */
    assert_int_equal(r.skips[2].op, a);
    assert_int_equal(r.skips[2].reason, PS_SCHED_INELIGIBLE);
    /* ineligibility is not a reason to report: a's last reason is still the node */
    assert_int_equal(ps_sched_operation_reason(s, a, NULL), PS_SCHED_NODE_RESOURCES);
    /* the stage's switch-offs are undone: a is a candidate again */
    struct ps_sched_node n2 = node_of(2, res(10, 10, 10));
    heartbeat(s, &n2, &r);
    assert_int_equal(r.allocations[0].op, a);
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

/* A stage with a candidate list settles a heartbeat where no eligible operation can start
 * without the descent: the same outcome as the descent (nothing started, one skip per active
 * eligible operation with its reason), and the descent's own result when one can start. */
static bool flagged(void *ctx, const struct ps_sched_snapshot *snap, int op)
{
    (void)snap;
    return ((const bool *)ctx)[op];
}

static void test_stage_candidates(void **state)
{
    (void)state;
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int pool = add(&t, PS_ELEM_POOL, 0, 0.8);
    int a = add_op(&t, pool, 0.9, 10, res(1, 1, 1));   /* ineligible, first in the order */
    int b = add_op(&t, pool, 0.5, 10, res(1, 4, 1));   /* eligible: never fits the node */
    int c = add_op(&t, pool, 0.3, 10, res(1, 3, 1));   /* eligible: fits with the extra only */
    int d = add_op(&t, pool, 0.7, 0, res(1, 1, 1));    /* eligible, nothing pending */
    bool ok[16] = {false};
    ok[b] = ok[c] = ok[d] = true;
    int list[] = {a, b, c, d};                           /* a superset of the eligible */
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *with = build(&t, &o), *without = build(&t, &o);
    struct ps_sched_node n = node_of(1, res(10, 10, 10));
    n.usage = res(2, 8, 2);                              /* 2 cpu free */
    struct ps_error err;
    ps_error_init(&err);
    for (int fits = 0; fits < 2; fits++) {
        struct ps_sched_stage stage = {
            .extra = res(0, fits ? 1 : 0, 0), .eligible = flagged, .ctx = ok,
            .max_allocations = 1, .candidate_count = 4,
        };
        struct ps_sched_result r1, r2;
        ps_sched_result_init(&r1);
        ps_sched_result_init(&r2);
        r1.node_usage = r2.node_usage = n.usage;
        assert_int_equal(ps_schedule_stage(without, &n, &stage, &r2, &err), 0);
        stage.candidates = list;
        assert_int_equal(ps_schedule_stage(with, &n, &stage, &r1, &err), 0);
        assert_int_equal(r1.allocation_count, fits);
        assert_int_equal(r2.allocation_count, fits);
        if (fits) {
            assert_int_equal(r1.allocations[0].op, c);
            assert_int_equal(r2.allocations[0].op, c);
        }
        if (fits) {   /* c can start: the descent ran, skips and all */
            assert_int_equal(r1.skip_count, r2.skip_count);
            for (int k = 0; k < r1.skip_count; k++) {
                assert_int_equal(r1.skips[k].op, r2.skips[k].op);
                assert_int_equal(r1.skips[k].reason, r2.skips[k].reason);
            }
        } else {      /* the descent also records a (ineligible); the list b and c, never d */
            int eligible_skips = 0;
            for (int k = 0; k < r2.skip_count; k++)
                eligible_skips += r2.skips[k].reason != PS_SCHED_INELIGIBLE;
            assert_int_equal(r1.skip_count, eligible_skips);
            assert_int_equal(r1.skip_count, 2);
            assert_int_equal(r1.skips[0].op, b);
            assert_int_equal(r1.skips[0].reason, PS_SCHED_NODE_RESOURCES);
            assert_int_equal(r1.skips[1].op, c);
            assert_int_equal(r1.skips[1].reason, PS_SCHED_NODE_RESOURCES);
        }
        for (int op = a; op <= d; op++)
            assert_int_equal(ps_sched_operation_reason(with, op, NULL),
                             ps_sched_operation_reason(without, op, NULL));
        assert_int_equal(ps_sched_pending(with, c), ps_sched_pending(without, c));
        ps_sched_result_release(&r1);
        ps_sched_result_release(&r2);
    }
    ps_sched_snapshot_free(with);
    ps_sched_snapshot_free(without);
}

/* ---- randomized consistency ------------------------------------------------------------- */

struct rng {
    uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

static int rng_int(struct rng *r, int n)
{
    return (int)(rng_next(r) % (uint64_t)n);
}

struct run_log {
    int ops[20000];
    int count;
    /* every heartbeat's skips, each heartbeat's sorted by operation: op, reason, element,
     * unsatisfied resources */
    int skips[4][200000];
    int skip_count;
    int settled;   /* heartbeats that started nothing and skipped something */
    int reasons[2][8000];   /* after every round, each operation's last reason and element */
    int reason_count;
};

/* Everything returns true: a stage with this predicate always descends (the regular stage
 * settles a heartbeat that starts nothing without the descent). */
static bool every_op(void *ctx, const struct ps_sched_snapshot *snap, int op)
{
    (void)ctx;
    (void)snap;
    (void)op;
    return true;
}

static void log_skips(struct run_log *log, const struct ps_sched_result *r)
{
    if (r->allocation_count == 0 && r->skip_count > 0)
        log->settled++;
    int from = log->skip_count;
    for (int k = 0; k < r->skip_count && log->skip_count < 200000; k++) {
        int at = log->skip_count++;
        const struct ps_sched_skip *x = &r->skips[k];
        while (at > from && log->skips[0][at - 1] > x->op) {
            for (int f = 0; f < 4; f++)
                log->skips[f][at] = log->skips[f][at - 1];
            at--;
        }
        log->skips[0][at] = x->op;
        log->skips[1][at] = (int)x->reason;
        log->skips[2][at] = x->element;
        log->skips[3][at] = (int)x->unsatisfied;
    }
}

/* Builds a random tree, runs heartbeats with finishes in between, checks the invariants and
 * logs the allocation order. */
static void random_run(uint64_t seed, bool descend, struct run_log *log)
{
    static struct test_filter filters[2] = {{"gpu", 0}, {"ssd", 0}};
    struct rng g = {seed};
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int pools[12];
    int np = 0;
    for (int k = 0; k < 12; k++) {
        int parent = (k < 4 || rng_int(&g, 2)) ? 0 : pools[rng_int(&g, np)];
        int p = add(&t, PS_ELEM_POOL, parent, 0.05 + 0.05 * rng_int(&g, 5));
        if (rng_int(&g, 3) == 0)
            t.e[p].out.resource_limits = res(1000, 2 + rng_int(&g, 20), 1000);
        if (rng_int(&g, 4) == 0) {
            t.p[p].in.mode = PS_MODE_FIFO;
        }
        pools[np++] = p;
    }
    int opsv[100];
    int nops = 0;
    for (int k = 0; k < 100; k++) {
        int parent = pools[rng_int(&g, np)];
        int o = add_op(&t, parent, 0.01 * (1 + rng_int(&g, 5)), rng_int(&g, 4) ? rng_int(&g, 50) : 0,
                       res(1, 0.25 * (1 + rng_int(&g, 16)), 1 + rng_int(&g, 3)));
        t.e[o].out.fifo_index = t.p[parent].in.mode == PS_MODE_FIFO ? k : -1;
        if (rng_int(&g, 5) == 0)
            t.ops[o].filter = as_filter(&filters[rng_int(&g, 2)]);
        if (rng_int(&g, 3) == 0)
            t.e[o].out.resource_limits = res(1000, 1 + rng_int(&g, 10), 1000);
        opsv[nops++] = o;
    }
    /* Pools in FIFO mode hold operations only (as upstream); move pool children out. */
    for (int i = 1; i < t.n; i++)
        if (t.e[i].in.kind == PS_ELEM_POOL && t.p[t.e[i].in.parent].in.mode == PS_MODE_FIFO)
            t.p[t.e[i].in.parent].in.mode = PS_MODE_FAIR_SHARE;
    struct ps_sched_options o = opts();
    o.fifo_order_in_fifo_pools = seed & 1;
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);

    enum { NODES = 30 };
    struct ps_sched_node nodes[NODES];
    static struct ps_resources used[NODES][MAX_ELEMS];   /* per node, per operation */
    memset(used, 0, sizeof used);
    const char *tagsets[3][1] = {{"gpu"}, {"ssd"}, {"none"}};
    for (int k = 0; k < NODES; k++) {
        nodes[k] = node_of(k, res(8 + rng_int(&g, 8), 4 + rng_int(&g, 12), 8 + rng_int(&g, 24)));
        nodes[k].tags = tagsets[k % 3];
        nodes[k].tag_count = 1;
    }
    struct ps_error err;
    log->count = 0;
    log->skip_count = 0;
    log->settled = 0;
    log->reason_count = 0;
    for (int round = 0; round < 40; round++) {
        for (int k = 0; k < NODES; k++) {
            if (descend) {
                struct ps_sched_stage all = {.extra = ps_resources_zero(), .eligible = every_op};
                ps_sched_result_clear(&r);
                r.node_usage = nodes[k].usage;
                ps_error_init(&err);
                assert_int_equal(ps_schedule_stage(s, &nodes[k], &all, &r, &err), 0);
                nodes[k].usage = r.node_usage;
            } else {
                heartbeat(s, &nodes[k], &r);
            }
            log_skips(log, &r);
            assert_true(ps_resources_fit(nodes[k].usage, nodes[k].limits));
            for (int j = 0; j < r.allocation_count; j++) {
                int op = r.allocations[j].op;
                const char *need = t.ops[op].filter
                    ? ((struct test_filter *)(uintptr_t)t.ops[op].filter)->tag : NULL;
                if (need)
                    assert_string_equal(need, tagsets[k % 3][0]);
                used[k][op] = ps_resources_add(used[k][op], r.allocations[j].resources);
                if (log->count < 20000)
                    log->ops[log->count++] = op;
            }
        }
        /* Every element within its limits; pools are sums of their children. */
        struct ps_resources sum[MAX_ELEMS];
        memset(sum, 0, sizeof sum);
        for (int i = t.n - 1; i >= 0; i--) {
            struct ps_resources u = ps_sched_usage(s, i);
            assert_true(ps_resources_fit(u, t.e[i].out.resource_limits));
            if (t.e[i].in.kind != PS_ELEM_OPERATION)
                assert_true(ps_resources_equal(u, sum[i]));
            if (i > 0)
                sum[t.e[i].in.parent] = ps_resources_add(sum[t.e[i].in.parent], u);
            assert_true(t.e[i].in.kind != PS_ELEM_OPERATION || ps_sched_pending(s, i) >= 0);
        }
        for (int k = 0; k < nops && log->reason_count < 8000; k++) {
            int elem = -1;
            log->reasons[0][log->reason_count] = (int)ps_sched_operation_reason(s, opsv[k], &elem);
            log->reasons[1][log->reason_count++] = elem;
        }
        /* Random finishes: free a node's allocations of one operation. */
        for (int f = 0; f < 20; f++) {
            int k = rng_int(&g, NODES);
            int op = opsv[rng_int(&g, nops)];
            if (ps_resources_is_zero(used[k][op]))
                continue;
            ps_error_init(&err);
            assert_int_equal(ps_sched_allocation_finished(s, op, used[k][op], &err), 0);
            nodes[k].usage = ps_resources_sub(nodes[k].usage, used[k][op]);
            used[k][op] = ps_resources_zero();
        }
        /* Occasionally new pending work. */
        int op = opsv[rng_int(&g, nops)];
        ps_error_init(&err);
        assert_int_equal(ps_sched_set_pending(s, op, ps_sched_pending(s, op) + 5, &err), 0);
    }
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

static void test_randomized_consistency_and_determinism(void **state)
{
    (void)state;
    static struct run_log a, b;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        random_run(seed * 0x9E3779B97F4A7C15ULL, false, &a);
        random_run(seed * 0x9E3779B97F4A7C15ULL, false, &b);
        assert_true(a.count > 50);   /* the run actually schedules */
        assert_int_equal(a.count, b.count);
        assert_memory_equal(a.ops, b.ops, (size_t)a.count * sizeof a.ops[0]);
    }
}

/* The regular stage settles a heartbeat where nothing can start without the descent (on a
 * full cluster most heartbeats): every heartbeat must give what the descent gives, the same
 * allocations in the same order and the same skips with the same reasons (in another order,
 * which no consumer reads: each operation appears once per stage), and leave the heaps so that
 * the runs stay the same. */
static void test_regular_stage_settles_like_the_descent(void **state)
{
    (void)state;
    static struct run_log settled, descended;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        random_run(seed * 0x9E3779B97F4A7C15ULL, false, &settled);
        random_run(seed * 0x9E3779B97F4A7C15ULL, true, &descended);
        assert_true(settled.settled > 20);   /* the case occurs */
        assert_true(settled.skip_count < 200000);
        assert_int_equal(settled.count, descended.count);
        assert_memory_equal(settled.ops, descended.ops, (size_t)settled.count * sizeof settled.ops[0]);
        assert_int_equal(settled.skip_count, descended.skip_count);
        for (int f = 0; f < 4; f++)
            assert_memory_equal(settled.skips[f], descended.skips[f],
                                (size_t)settled.skip_count * sizeof settled.skips[f][0]);
        assert_int_equal(settled.reason_count, descended.reason_count);
        for (int f = 0; f < 2; f++)
            assert_memory_equal(settled.reasons[f], descended.reasons[f],
                                (size_t)settled.reason_count * sizeof settled.reasons[f][0]);
    }
}

/* ---- renewing a snapshot ---------------------------------------------------------------- */

/* A random tree of 8 pools (one FIFO, one with use_pool_satisfaction_for_scheduling) and 40
 * operations, some with filters, limits and usage; `update` varies what a fair share update
 * changes (shares and usage of some elements, limits, FIFO indices, operation state), not the
 * structure. */
static void renew_tree(struct tree *t, struct rng *g, bool update)
{
    static struct test_filter filters[2] = {{"gpu", 0}, {"ssd", 0}};
    if (!update) {
        t->n = 0;
        add(t, PS_ELEM_ROOT, -1, 1.0);
        for (int k = 0; k < 8; k++)
            add(t, PS_ELEM_POOL, k < 3 ? 0 : 1 + rng_int(g, k), 0.1);
        for (int k = 0; k < 40; k++)
            add_op(t, 3 + rng_int(g, 6), 0.02, 0, res(1, 1, 1));
        t->p[5].in.mode = PS_MODE_FIFO;
        t->p[6].in.use_pool_satisfaction_for_scheduling = 2;
    }
    for (int i = 1; i < t->n; i++) {
        struct ps_fs_element *e = &t->e[i];
        if (!update || rng_int(g, 2)) {   /* an update leaves some shares as they were */
            double fair = 0.01 * (1 + rng_int(g, 8));
            e->out.fair_share.total = (struct ps_share){{fair, fair, 0, fair, 0}};
        }
        e->out.resource_limits = rng_int(g, 4) ? ps_resources_infinite()
                                               : res(1000, 2 + rng_int(g, 20), 1000);
        if (e->in.kind != PS_ELEM_OPERATION)
            continue;
        e->out.fifo_index = t->p[e->in.parent].in.mode == PS_MODE_FIFO ? rng_int(g, 50) : -1;
        if (!update || rng_int(g, 2))
            e->in.usage = res(rng_int(g, 3), rng_int(g, 3), rng_int(g, 3));
        t->ops[i] = (struct ps_sched_operation){
            .runnable = rng_int(g, 6) != 0,
            .pending_count = rng_int(g, 4) ? rng_int(g, 30) : 0,
            .allocation = res(1, 0.5 * (1 + rng_int(g, 6)), 1 + rng_int(g, 2)),
            .filter = rng_int(g, 4) ? NULL : as_filter(&filters[rng_int(g, 2)]),
        };
    }
}

/* Everything the snapshots show of themselves, and what heartbeats on the same nodes do with
 * them, are the same (skips in order: the heaps are the same too). */
static void assert_same_snapshots(struct ps_sched_snapshot *a, struct ps_sched_snapshot *b)
{
    int n = ps_sched_snapshot_element_count(a);
    assert_int_equal(ps_sched_snapshot_element_count(b), n);
    static int order_a[MAX_ELEMS], order_b[MAX_ELEMS];
    ps_sched_scheduling_order(a, order_a);
    ps_sched_scheduling_order(b, order_b);
    assert_memory_equal(order_a, order_b, (size_t)n * sizeof order_a[0]);
    const char *tagsets[3][1] = {{"gpu"}, {"ssd"}, {"none"}};
    struct ps_sched_result ra, rb;
    ps_sched_result_init(&ra);
    ps_sched_result_init(&rb);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < n; i++) {
            assert_int_equal(ps_sched_parent(a, i), ps_sched_parent(b, i));
            assert_int_equal(ps_sched_kind(a, i), ps_sched_kind(b, i));
            assert_true(ps_resources_equal(ps_sched_limits(a, i), ps_sched_limits(b, i)));
            assert_true(ps_resources_equal(ps_sched_usage(a, i), ps_sched_usage(b, i)));
            assert_true(ps_sched_local_satisfaction(a, i) == ps_sched_local_satisfaction(b, i));
            if (ps_sched_kind(a, i) != PS_ELEM_OPERATION)
                continue;
            assert_int_equal(ps_sched_pending(a, i), ps_sched_pending(b, i));
            int ea, eb;
            assert_int_equal(ps_sched_operation_reason(a, i, &ea),
                             ps_sched_operation_reason(b, i, &eb));
            assert_int_equal(ea, eb);
        }
        for (int k = 0; k < 6; k++) {
            struct ps_sched_node na = node_of(k, res(6, 3 + k, 6)), nb = na;
            na.tags = nb.tags = tagsets[k % 3];
            na.tag_count = nb.tag_count = 1;
            heartbeat(a, &na, &ra);
            heartbeat(b, &nb, &rb);
            assert_int_equal(ra.allocation_count, rb.allocation_count);
            for (int j = 0; j < ra.allocation_count; j++) {
                assert_int_equal(ra.allocations[j].op, rb.allocations[j].op);
                assert_true(ps_resources_equal(ra.allocations[j].resources,
                                               rb.allocations[j].resources));
            }
            assert_int_equal(ra.skip_count, rb.skip_count);
            for (int j = 0; j < ra.skip_count; j++) {
                assert_int_equal(ra.skips[j].op, rb.skips[j].op);
                assert_int_equal(ra.skips[j].reason, rb.skips[j].reason);
                assert_int_equal(ra.skips[j].element, rb.skips[j].element);
                assert_int_equal(ra.skips[j].unsatisfied, rb.skips[j].unsatisfied);
            }
        }
    }
    ps_sched_result_release(&ra);
    ps_sched_result_release(&rb);
}

static void test_renew_equals_new(void **state)
{
    (void)state;
    static struct tree t;
    struct ps_error err;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        struct rng g = {seed * 0x9E3779B97F4A7C15ULL};
        renew_tree(&t, &g, false);
        struct ps_sched_options o = opts();
        struct ps_sched_snapshot *s = NULL;
        ps_error_init(&err);
        assert_int_equal(ps_sched_snapshot_renew(t.e, t.n, t.p, t.n, t.ops, &o, &s, &err), 0);
        for (int update = 0; update < 4; update++) {
            /* heartbeats leave usage, pending counts, reasons and filter results behind */
            struct ps_sched_result r;
            ps_sched_result_init(&r);
            fill_nodes(s, 4, &r);
            ps_sched_result_release(&r);
            struct ps_sched_snapshot *kept = s;
            renew_tree(&t, &g, true);
            if (update == 1)
                o.total.v[PS_RES_CPU] += PS_CPU_SCALE;
            o.use_pool_satisfaction = update & 1;
            o.fifo_order_in_fifo_pools = update & 2;
            o.specified_limits = update == 3;
            o.generation++;
            if (update == 2)   /* another structure: a new operation */
                add_op(&t, 4, 0.05, 7, res(1, 1, 1));
            ps_error_init(&err);
            assert_int_equal(ps_sched_snapshot_renew(t.e, t.n, t.p, t.n, t.ops, &o, &s, &err), 0);
            if (update != 2)
                assert_ptr_equal(s, kept);   /* built in place */
            struct ps_sched_snapshot *fresh = build(&t, &o);
            assert_same_snapshots(s, fresh);
            ps_sched_snapshot_free(fresh);
        }
        /* bad input frees the snapshot */
        t.ops[t.n - 1].pending_count = -1;
        ps_error_init(&err);
        assert_int_equal(ps_sched_snapshot_renew(t.e, t.n, t.p, t.n, t.ops, &o, &s, &err),
                         PS_EINVAL);
        assert_null(s);
    }
}

static void test_bad_input(void **state)
{
    (void)state;
    struct tree t = {.n = 0};
    add(&t, PS_ELEM_ROOT, -1, 1.0);
    int op = add_op(&t, 0, 1.0, 5, ps_resources_zero());
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *s = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_sched_snapshot_new(t.e, t.n, t.p, t.n, t.ops, &o, &s, &err), PS_EINVAL);
    assert_null(s);
    assert_non_null(strstr(err.msg, "all are zero"));
    t.ops[op].allocation = res(1, 1, 1);
    t.e[op].in.parent = 5;
    ps_error_init(&err);
    assert_int_equal(ps_sched_snapshot_new(t.e, t.n, t.p, t.n, t.ops, &o, &s, &err), PS_EINVAL);
    t.e[op].in.parent = 0;
    ps_error_init(&err);   /* the root's pool entry is outside the pools array */
    assert_int_equal(ps_sched_snapshot_new(t.e, t.n, t.p, 0, t.ops, &o, &s, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pool index 0"));
    s = build(&t, &o);
    ps_error_init(&err);
    assert_int_equal(ps_sched_allocation_finished(s, op, res(1, 1, 1), &err), PS_EINVAL);
    ps_error_init(&err);
    assert_int_equal(ps_sched_set_pending(s, 0, 1, &err), PS_EINVAL);   /* the root */
    ps_sched_snapshot_free(s);
}

/* Disk requests: only a node with the medium takes the allocation, and only as many as its free
 * space on that medium holds within one heartbeat; an operation whose regular allocations are
 * forbidden on SSD nodes starts nothing on a node with SSD priority preemption on. */
static void test_disk_requests_and_ssd_nodes(void **state)
{
    (void)state;
    struct tree t = {.n = 0};
    int root = add(&t, PS_ELEM_ROOT, -1, 1);
    int ssd = add_op(&t, root, 0.5, 5, res(1, 1, 1));
    int reg = add_op(&t, root, 0.5, 5, res(1, 1, 1));
    t.ops[ssd].disk_medium = "ssd_slots";
    t.ops[ssd].disk_space = 10;
    t.ops[reg].regular_on_ssd_forbidden = true;
    struct ps_sched_options o = opts();
    struct ps_sched_snapshot *s = build(&t, &o);
    struct ps_sched_result r;
    ps_sched_result_init(&r);

    /* no media, no SSD priority preemption: the regular op gets everything */
    struct ps_sched_node plain = node_of(1, res(3, 3, 3));
    heartbeat(s, &plain, &r);
    assert_int_equal(r.allocation_count, 3);
    for (int k = 0; k < r.allocation_count; k++)
        assert_int_equal(r.allocations[k].op, reg);
    assert_int_equal(ps_sched_operation_reason(s, ssd, NULL), PS_SCHED_DISK);

    /* an SSD node with room for two requests of 10 bytes: two SSD allocations, nothing else */
    struct ps_sched_medium media[] = {{"default", 100}, {"ssd_slots", 25}};
    struct ps_sched_node n = node_of(2, res(4, 4, 4));
    n.media = media;
    n.medium_count = 2;
    n.ssd_priority_preemption = true;
    heartbeat(s, &n, &r);
    assert_int_equal(r.allocation_count, 2);
    for (int k = 0; k < r.allocation_count; k++)
        assert_int_equal(r.allocations[k].op, ssd);
    assert_int_equal(ps_sched_operation_reason(s, ssd, NULL), PS_SCHED_DISK);
    assert_int_equal(ps_sched_operation_reason(s, reg, NULL), PS_SCHED_REGULAR_ON_SSD_FORBIDDEN);
    assert_string_equal(ps_sched_reason_name(PS_SCHED_REGULAR_ON_SSD_FORBIDDEN),
                        "regular_allocation_on_ssd_node_forbidden");
    ps_sched_result_release(&r);
    ps_sched_snapshot_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_satisfaction_ratio_cases),
        cmocka_unit_test(test_usage_split_follows_fair_share),
        cmocka_unit_test(test_strict_order_by_satisfaction),
        cmocka_unit_test(test_fifo_pool_order),
        cmocka_unit_test(test_tag_filter),
        cmocka_unit_test(test_nested_pool_limits),
        cmocka_unit_test(test_allocation_bigger_than_node),
        cmocka_unit_test(test_zero_pending_not_considered),
        cmocka_unit_test(test_min_spare_resources),
        cmocka_unit_test(test_stage_extension_point),
        cmocka_unit_test(test_stage_candidates),
        cmocka_unit_test(test_randomized_consistency_and_determinism),
        cmocka_unit_test(test_regular_stage_settles_like_the_descent),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_disk_requests_and_ssd_nodes),
        cmocka_unit_test(test_renew_equals_new),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
