#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/preempt.h"

#define GIB (1024LL * 1024 * 1024)
#define N 6   /* root, pool A, pool B, op X (in A, donor), op Y (in B), op Z (in A) */
enum { ROOT = 0, A = 1, B = 2, X = 3, Y = 4, Z = 5 };

static struct ps_resources res(int64_t units)
{
    return (struct ps_resources){{units, units * PS_CPU_SCALE, 0, units * GIB, 0}};
}

static struct ps_share sh(double x)
{
    return (struct ps_share){{x, x, 0.0, x, 0.0}};
}

/* One node of 10 units (slots, cpu, GiB) is the whole cluster. X runs 10 allocations of one unit
 * (ids 100..109, started at 0..9 s): fair share 0.5, demand 1, thresholds 0.5 / 1.0, so
 * 100-102 are non-preemptible, 103-104 aggressively preemptible, 105-109 preemptible. Y wants
 * allocations of y_units, fair share 0.5, nothing running. Z (in A) is idle unless asked. */
struct fix {
    struct ps_fs_element e[N];
    struct ps_fs_pool p[N];   /* element i names p[i] when it is a pool; fair_share mode */
    struct ps_sched_operation ops[N];
    struct ps_sched_options opt;
    struct ps_sched_snapshot *snap;
    struct ps_starvation_element st[N];
    struct ps_starvation_config st_cfg;
    struct ps_preemptible_config pl_cfg;
    struct ps_preemptible *lists[N];
    struct ps_preempt_operation pops[N];
    struct ps_preempt_config cfg;
    struct ps_preempt_tree tree;
    struct ps_node_allocation allocs[10];
    struct ps_sched_node node;
    struct ps_sched_result sched;
    struct ps_preempt_result out;
};

static void elem(struct fix *f, int i, enum ps_element_kind kind, int parent, double fair,
                 double demand, int64_t usage_units)
{
    struct ps_fs_element *e = &f->e[i];
    memset(e, 0, sizeof *e);
    e->in.kind = kind;
    e->in.parent = parent;
    e->in.pool = i;
    memset(&f->p[i], 0, sizeof f->p[i]);
    e->in.usage = res(usage_units);
    e->in.start_time_ms = i;
    e->out.fair_share.total = sh(fair);
    e->out.demand_share = sh(demand);
    e->out.resource_limits = ps_resources_infinite();
    e->out.fifo_index = -1;
}

/* starving: 0 none, 1 starving, 2 aggressively starving (Y and B). z_units > 0 makes Z want
 * allocations too (and gives it fair share 0.2 and a starving status like Y's). */
static void setup(struct fix *f, int64_t y_units, int starving, int64_t z_units)
{
    memset(f, 0, sizeof *f);
    struct ps_error err = {0};
    elem(f, ROOT, PS_ELEM_ROOT, -1, 1.0, 1.0, 0);
    elem(f, A, PS_ELEM_POOL, 0, 0.5, 1.0, 10);
    elem(f, B, PS_ELEM_POOL, 0, 0.5, 0.5, 0);
    elem(f, X, PS_ELEM_OPERATION, A, 0.5, 1.0, 10);
    elem(f, Y, PS_ELEM_OPERATION, B, 0.5, 0.5, 0);
    elem(f, Z, PS_ELEM_OPERATION, A, z_units ? 0.2 : 0.0, z_units ? 0.2 : 0.0, 0);
    f->ops[Y] = (struct ps_sched_operation){.runnable = true, .pending_count = 3,
                                            .allocation = res(y_units)};
    f->ops[Z] = (struct ps_sched_operation){.runnable = z_units > 0, .pending_count = 3,
                                            .allocation = res(z_units ? z_units : 1)};
    f->ops[X] = (struct ps_sched_operation){.runnable = true, .pending_count = 0,
                                            .allocation = res(1)};
    ps_sched_options_init(&f->opt);
    f->opt.total = res(10);
    f->opt.generation = 1;
    assert_int_equal(ps_sched_snapshot_new(f->e, N, f->p, N, f->ops, &f->opt, &f->snap, &err), 0);

    ps_starvation_config_init(&f->st_cfg);
    f->st_cfg.enable_aggressive_starvation = starving == 2;
    for (int i = 0; i < N; i++) {
        ps_starvation_element_init(&f->st[i], f->e[i].in.kind, f->e[i].in.parent);
        f->st[i].fair_share = f->e[i].out.fair_share.total;
        f->st[i].demand_share = f->e[i].out.demand_share;
        struct ps_resources u = ps_sched_usage(f->snap, i);
        f->st[i].usage_share = ps_resources_to_share(&u, &f->opt.total, 0.0, 1.0);
        f->st[i].pending_count = 3;
    }
    int64_t t = starving == 0 ? 1000 : starving == 1 ? 31000 : 121000;
    assert_int_equal(ps_starvation_update(f->st, N, &f->st_cfg, 0, NULL, &err), 0);
    assert_int_equal(ps_starvation_update(f->st, N, &f->st_cfg, t, NULL, &err), 0);
    enum ps_starvation_status want = starving == 0 ? PS_NON_STARVING
                                   : starving == 1 ? PS_STARVING : PS_AGGRESSIVELY_STARVING;
    assert_int_equal(f->st[Y].starvation, want);
    assert_int_equal(f->st[X].starvation, PS_NON_STARVING);
    assert_int_equal(f->st[A].starvation, PS_NON_STARVING);

    ps_preemptible_config_init(&f->pl_cfg);
    f->pl_cfg.aggressive_threshold = 0.5;
    f->pl_cfg.total = f->opt.total;
    for (int i = X; i < N; i++) {
        f->lists[i] = ps_preemptible_new(&f->pl_cfg);
        ps_preemptible_update(f->lists[i], &f->e[i].out.fair_share.total, &f->e[i].out.demand_share,
                              &f->pl_cfg);
        f->pops[i] = (struct ps_preempt_operation){f->lists[i], false, -1, false, false};
    }
    for (int k = 0; k < 10; k++) {
        f->allocs[k] = (struct ps_node_allocation){100 + k, X, res(1), k * 1000, false, -1};
        assert_int_equal(ps_preemptible_add(f->lists[X], 100 + k, k * 1000, res(1), &err), 0);
        f->allocs[k].slot = ps_preemptible_slot(f->lists[X], 100 + k);
    }
    assert_int_equal(ps_preemptible_class(f->lists[X], 102), PS_ALLOC_NON_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_class(f->lists[X], 103), PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_class(f->lists[X], 104), PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE);
    assert_int_equal(ps_preemptible_class(f->lists[X], 105), PS_ALLOC_PREEMPTIBLE);

    ps_preempt_config_init(&f->cfg);
    f->cfg.aggressive_preemption_satisfaction_threshold = 0.5;
    f->tree = (struct ps_preempt_tree){.config = &f->cfg, .starvation = f->st, .ops = f->pops};
    f->node = (struct ps_sched_node){.id = 1, .limits = res(10), .usage = res(10)};
    ps_sched_result_init(&f->sched);
    ps_preempt_result_init(&f->out);
}

static void teardown(struct fix *f)
{
    ps_sched_snapshot_free(f->snap);
    for (int i = 0; i < N; i++)
        ps_preemptible_free(f->lists[i]);
    ps_sched_result_release(&f->sched);
    ps_preempt_result_release(&f->out);
}

/* Element elem's limits become r, in a new snapshot. */
static void set_limits(struct fix *f, int elem, struct ps_resources r)
{
    struct ps_error err = {0};
    f->e[elem].out.resource_limits = r;
    ps_sched_snapshot_free(f->snap);
    assert_int_equal(ps_sched_snapshot_new(f->e, N, f->p, N, f->ops, &f->opt, &f->snap, &err), 0);
}

/* Regular stage, then the preemptive stages on a full node. */
static int heartbeat(struct fix *f)
{
    struct ps_error err = {0};
    assert_int_equal(ps_schedule_heartbeat(f->snap, &f->node, 0, &f->sched, &err), 0);
    assert_int_equal(f->sched.allocation_count, 0);   /* the node is full */
    return ps_preempt_heartbeat(f->snap, &f->tree, &f->node, f->allocs, 10, &f->sched, &f->out,
                                &err);
}

/* The stages' scratch (struct ps_preempt_tree.scratch) is reused across heartbeats: the
 * discounts one heartbeat's victims gave must not carry over to the next node. With the root
 * at its limits, Y starts only thanks to the victims' discount; on a node without allocations
 * (one unit free) the next heartbeat has no discount and Y exceeds the root's limits. */
static void test_scratch_reused(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 1, 1, 0);
    ps_sched_snapshot_free(f.snap);
    f.e[ROOT].out.resource_limits = res(10);
    struct ps_error err = {0};
    assert_int_equal(ps_sched_snapshot_new(f.e, N, f.p, N, f.ops, &f.opt, &f.snap, &err), 0);
    f.tree.scratch = ps_preempt_scratch_new();
    assert_non_null(f.tree.scratch);
    /* a fresh scratch and a full node without allocations: nothing to take, nothing starts */
    assert_int_equal(ps_preempt_heartbeat(f.snap, &f.tree, &f.node, f.allocs, 0, &f.sched,
                                          &f.out, &err), 0);
    assert_int_equal(f.sched.allocation_count, 0);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_PREEMPTIVE);
    assert_int_equal(f.sched.allocation_count, 1);
    assert_int_equal(f.sched.allocations[0].op, Y);
    struct ps_sched_node other = {.id = 2, .limits = res(10), .usage = res(9)};
    for (int allocs = 0; allocs < 2; allocs++) {   /* no allocations at all, then 1 of X */
        ps_sched_result_clear(&f.sched);
        f.sched.node_usage = other.usage;
        assert_int_equal(ps_preempt_heartbeat(f.snap, &f.tree, &other, f.allocs, allocs,
                                              &f.sched, &f.out, &err), 0);
        assert_int_equal(f.out.stage, PS_STAGE_NONE);
        assert_int_equal(f.sched.allocation_count, 0);
        assert_int_equal(ps_sched_operation_reason(f.snap, Y, NULL), PS_SCHED_LIMITS);
    }
    ps_preempt_scratch_free(f.tree.scratch);
    teardown(&f);
}

static void test_one_allocation_newest_preemptible_victim(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 1, 1, 0);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_PREEMPTIVE);
    assert_int_equal(f.sched.allocation_count, 1);       /* one per heartbeat, 3 pending */
    assert_int_equal(f.sched.allocations[0].op, Y);
    assert_int_equal(ps_sched_pending(f.snap, Y), 2);
    assert_int_equal(f.out.victim_count, 1);
    assert_int_equal(f.out.victims[0].allocation_id, 109);
    assert_int_equal(f.out.victims[0].reason, PS_PREEMPT_FOR_STARVING);
    assert_int_equal(f.out.victims[0].for_op, Y);
    assert_int_equal(f.out.victims[0].cls, PS_ALLOC_PREEMPTIBLE);
    assert_int_equal(f.out.victims[0].interrupt_timeout_ms, 10000);
    assert_true(ps_resources_equal(f.sched.node_usage, res(10)));
    teardown(&f);
}

/* SSD priority preemption: Y (an SSD operation, starving) wants 8 units of a node where X runs
 * 10 (5 preemptible, 2 aggressively preemptible, 3 not). On an SSD node the SSD preemptive stage
 * takes every level from non_preemptible up, most preemptible first; off an SSD node, or when X
 * is an SSD operation too (its allocations then have the SSD levels), 5 preemptible units are
 * all there is and nothing starts. */
static void test_ssd_priority_preemption(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 8, 1, 0);
    f.pops[Y].ssd = true;
    f.node.ssd_priority_preemption = true;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_SSD_PREEMPTIVE);
    assert_int_equal(f.sched.allocation_count, 1);
    assert_int_equal(f.out.victim_count, 8);
    for (int j = 0; j < 8; j++)
        assert_int_equal(f.out.victims[j].allocation_id, 109 - j);
    assert_int_equal(f.out.victims[7].cls, PS_ALLOC_NON_PREEMPTIBLE);
    teardown(&f);

    setup(&f, 8, 1, 0);
    f.pops[Y].ssd = true;   /* not an SSD node: the normal stages, and Y is no SSD operation */
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_NONE);
    assert_int_equal(f.out.victim_count, 0);
    teardown(&f);

    setup(&f, 8, 1, 0);
    f.pops[Y].ssd = f.pops[X].ssd = true;
    f.node.ssd_priority_preemption = true;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_NONE);
    assert_int_equal(f.out.victim_count, 0);
    teardown(&f);

    /* a regular starving operation on an SSD node keeps the normal stages: 1 unit, the newest
     * preemptible allocation */
    setup(&f, 1, 1, 0);
    f.node.ssd_priority_preemption = true;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_PREEMPTIVE);
    assert_int_equal(f.out.victim_count, 1);
    assert_int_equal(f.out.victims[0].allocation_id, 109);
    teardown(&f);
}

/* X's fair share becomes its demand (nothing of it is preemptible) and its lists are rebalanced
 * with aggressive threshold `aggressive`. */
static void x_fair_equals_demand(struct fix *f, double aggressive)
{
    f->pl_cfg.aggressive_threshold = aggressive;
    struct ps_share one = sh(1.0);
    ps_preemptible_update(f->lists[X], &one, &one, &f->pl_cfg);
    assert_int_equal(ps_preemptible_count(f->lists[X], PS_ALLOC_PREEMPTIBLE), 0);
}

/* The stages look up only the classes they can take (an operation without an allocation of such
 * a class is passed over): the aggressive stage still finds aggressively preemptible allocations
 * of an operation without preemptible ones, and the SSD preemptive stage non-preemptible ones
 * of an operation without any preemptible or aggressively preemptible allocation. */
static void test_stages_take_every_class_they_may(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 2, 2, 0);
    x_fair_equals_demand(&f, 0.5);   /* 100-104 non-preemptible, 105-109 aggressively */
    assert_int_equal(ps_preemptible_count(f.lists[X], PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE), 5);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_AGGRESSIVELY_PREEMPTIVE);
    assert_int_equal(f.out.victim_count, 2);
    assert_int_equal(f.out.victims[0].allocation_id, 109);
    assert_int_equal(f.out.victims[1].cls, PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE);
    teardown(&f);

    setup(&f, 8, 1, 0);
    x_fair_equals_demand(&f, 1.0);   /* all ten non-preemptible */
    assert_int_equal(ps_preemptible_count(f.lists[X], PS_ALLOC_NON_PREEMPTIBLE), 10);
    f.pops[Y].ssd = true;
    f.node.ssd_priority_preemption = true;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_SSD_PREEMPTIVE);
    assert_int_equal(f.out.victim_count, 8);
    assert_int_equal(f.out.victims[7].allocation_id, 102);
    assert_int_equal(f.out.victims[7].cls, PS_ALLOC_NON_PREEMPTIBLE);
    teardown(&f);
}

static void test_backoff(void **state)
{
    (void)state;
    struct ps_preempt_config c;
    ps_preempt_config_init(&c);
    assert_true(ps_preempt_backoff_passed(PS_PREEMPT_NEVER, 0, &c));
    assert_false(ps_preempt_backoff_passed(10000, 14999, &c));
    assert_true(ps_preempt_backoff_passed(10000, 15000, &c));
}

static void test_minimal_victim_set(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 3, 1, 0);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 1);
    assert_int_equal(f.out.victim_count, 3);
    for (int j = 0; j < 3; j++)
        assert_int_equal(f.out.victims[j].allocation_id, 109 - j);
    teardown(&f);

    /* 6 units: more than the 5 preemptible ones; the normal stage cannot take AP ones. */
    setup(&f, 6, 1, 0);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_NONE);
    assert_int_equal(f.sched.allocation_count, 0);
    assert_int_equal(f.out.victim_count, 0);
    teardown(&f);
}

static void test_aggressive_uses_aggressively_preemptible(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 7, 2, 0);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.out.stage, PS_STAGE_AGGRESSIVELY_PREEMPTIVE);
    assert_int_equal(f.sched.allocation_count, 1);
    assert_int_equal(f.out.victim_count, 7);
    int64_t want[7] = {109, 108, 107, 106, 105, 104, 103};   /* P newest first, then AP */
    for (int j = 0; j < 7; j++)
        assert_int_equal(f.out.victims[j].allocation_id, want[j]);
    assert_int_equal(f.out.victims[6].cls, PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE);
    teardown(&f);

    /* 8 units would need a non-preemptible allocation: nothing. */
    setup(&f, 8, 2, 0);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 0);
    teardown(&f);

    /* Not starving at all: no stage starts anything. */
    setup(&f, 1, 0, 0);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 0);
    assert_int_equal(f.out.victim_count, 0);
    teardown(&f);
}

static void test_blocking_ancestors(void **state)
{
    (void)state;
    static struct fix f;
    /* Pool A starving blocks its allocations for operations outside A. */
    setup(&f, 1, 1, 0);
    f.st[A].starvation = PS_STARVING;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 0);
    teardown(&f);

    /* X below the satisfaction threshold: usage 1.0 against fair share 1.0 -> ratio 1 < 1 + eps. */
    setup(&f, 1, 1, 0);
    f.e[X].out.fair_share.total = sh(1.0);
    ps_sched_snapshot_free(f.snap);
    struct ps_error err = {0};
    assert_int_equal(ps_sched_snapshot_new(f.e, N, f.p, N, f.ops, &f.opt, &f.snap, &err), 0);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 0);
    teardown(&f);

    /* Graceful mode and max_unpreemptible_running_allocation_count protect the operation. */
    setup(&f, 1, 1, 0);
    f.pops[X].graceful = true;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 0);
    teardown(&f);
    setup(&f, 1, 1, 0);
    f.pops[X].max_unpreemptible_running_allocation_count = 10;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 0);
    teardown(&f);
    setup(&f, 1, 1, 0);
    f.pops[X].max_unpreemptible_running_allocation_count = 9;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 1);
    teardown(&f);
}

static void test_conditional_preemption(void **state)
{
    (void)state;
    static struct fix f;
    /* A starving: X's preemptible allocations are conditionally preemptible inside A. Z (in A,
     * starving) takes one; Y (outside A) cannot. */
    setup(&f, 1, 1, 1);
    assert_int_equal(f.st[Z].starvation, PS_STARVING);
    f.st[A].starvation = PS_STARVING;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 1);
    assert_int_equal(f.sched.allocations[0].op, Z);
    assert_int_equal(f.out.victim_count, 1);
    assert_int_equal(f.out.victims[0].allocation_id, 109);
    assert_int_equal(f.out.victims[0].for_op, Z);
    assert_int_equal(ps_sched_pending(f.snap, Y), 3);
    teardown(&f);

    setup(&f, 1, 1, 1);
    f.st[A].starvation = PS_STARVING;
    f.cfg.enable_conditional_preemption = false;
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 0);
    teardown(&f);
}

/* A full cluster whose root limits equal the total (as a tree's root gets them from the
 * cluster): the root's usage is at its limits, so without the discount of the preemptible
 * allocations (ps_sched_stage.limit_discount) no allocation could ever start there and the
 * starving operation would never get one. */
static void test_full_cluster_root_limits(void **state)
{
    (void)state;
    static struct fix f;
    struct ps_error err = {0};
    for (int starving = 1; starving <= 2; starving++) {
        setup(&f, starving == 1 ? 3 : 7, starving, 0);
        f.e[ROOT].out.resource_limits = res(10);
        f.e[A].out.resource_limits = res(10);   /* A's limits are reached too */
        ps_sched_snapshot_free(f.snap);
        assert_int_equal(ps_sched_snapshot_new(f.e, N, f.p, N, f.ops, &f.opt, &f.snap, &err), 0);
        assert_true(ps_resources_equal(ps_sched_usage(f.snap, ROOT), ps_sched_limits(f.snap, ROOT)));
        /* The regular stage cannot start anything (the node is full), and it is the root's
         * limit that a plain check would hit. */
        assert_int_equal(heartbeat(&f), 0);
        assert_int_equal(f.out.stage, starving == 1 ? PS_STAGE_PREEMPTIVE
                                                    : PS_STAGE_AGGRESSIVELY_PREEMPTIVE);
        assert_int_equal(f.sched.allocation_count, 1);
        assert_int_equal(f.sched.allocations[0].op, Y);
        assert_int_equal(f.out.victim_count, starving == 1 ? 3 : 7);
        assert_int_equal(f.out.victims[0].allocation_id, 109);
        assert_int_equal(f.out.victims[0].for_op, Y);
        assert_true(ps_resources_equal(f.sched.node_usage, res(10)));
        assert_int_equal(ps_sched_pending(f.snap, Y), 2);
        teardown(&f);
    }

    /* Y's own pool B capped below the allocation: the discount only covers preemptible
     * allocations inside an element's subtree (none in B), so B's limit still holds. */
    setup(&f, 3, 1, 0);
    f.e[ROOT].out.resource_limits = res(10);
    f.e[B].out.resource_limits = res(2);
    ps_sched_snapshot_free(f.snap);
    assert_int_equal(ps_sched_snapshot_new(f.e, N, f.p, N, f.ops, &f.opt, &f.snap, &err), 0);
    assert_int_equal(heartbeat(&f), 0);
    assert_int_equal(f.sched.allocation_count, 0);
    assert_int_equal(f.out.victim_count, 0);
    int element = -1;
    assert_int_equal(ps_sched_operation_reason(f.snap, Y, &element), PS_SCHED_LIMITS);
    assert_int_equal(element, B);
    teardown(&f);
}

static void test_node_shrink(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 1, 0, 0);
    f.pops[X].graceful = true;
    struct ps_error err = {0};
    assert_int_equal(ps_preempt_overcommit_victims(&f.tree, res(7), f.allocs, 10, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 3);
    for (int j = 0; j < 3; j++) {
        assert_int_equal(f.out.victims[j].allocation_id, 109 - j);
        assert_int_equal(f.out.victims[j].reason, PS_PREEMPT_RESOURCE_OVERCOMMIT);
    }
    /* every victim gets the timeout: whether its job can use it is the host's business */
    assert_int_equal(f.out.victims[0].interrupt_timeout_ms, 60000);
    assert_int_equal(f.out.victims[1].interrupt_timeout_ms, 60000);   /* graceful */
    f.out.victim_count = 0;
    assert_int_equal(ps_preempt_overcommit_victims(&f.tree, res(10), f.allocs, 10, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 0);
    /* Shrinking to 4 goes through the aggressively preemptible ones into non-preemptible. */
    assert_int_equal(ps_preempt_overcommit_victims(&f.tree, res(4), f.allocs, 10, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 6);
    assert_int_equal(f.out.victims[5].allocation_id, 104);
    teardown(&f);
}

static void test_limits_lowered(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 1, 0, 0);
    /* Pool A's limits drop to 8 units (usage 10). */
    set_limits(&f, A, res(8));
    struct ps_error err = {0};
    assert_int_equal(ps_preempt_limits_victims(f.snap, &f.tree, f.allocs, 10, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 2);
    assert_int_equal(f.out.victims[0].allocation_id, 109);
    assert_int_equal(f.out.victims[1].allocation_id, 108);
    assert_int_equal(f.out.victims[0].element, A);
    assert_int_equal(f.out.victims[0].reason, PS_PREEMPT_LIMITS_VIOLATED);
    /* The operation's own limit is lower still: it is named as the lowest violator. */
    f.out.victim_count = 0;
    set_limits(&f, X, res(6));
    assert_int_equal(ps_preempt_limits_victims(f.snap, &f.tree, f.allocs, 10, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 4);
    assert_int_equal(f.out.victims[3].element, X);
    /* A bad operation index is an error. */
    f.allocs[0].op = A;
    assert_int_equal(ps_preempt_limits_victims(f.snap, &f.tree, f.allocs, 10, &f.out, &err),
                     PS_EINVAL);
    teardown(&f);
}

/* Limits dropped to nothing: only allocations preemptible in some stage go; the
 * non-preemptible ones (the oldest, within the fair share) stay, above the limit, as upstream's
 * test_apply_specified_resource_limits_to_demand keeps jobs under the pool's
 * non_preemptible_resource_usage_threshold. */
static void test_limits_spare_non_preemptible(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 1, 0, 0);
    set_limits(&f, X, res(0));
    struct ps_error err = {0};
    assert_int_equal(ps_preempt_limits_victims(f.snap, &f.tree, f.allocs, 10, &f.out, &err), 0);
    int spared = 0;
    for (int k = 0; k < 10; k++)
        spared += ps_preemptible_class(f.lists[X], f.allocs[k].id) == PS_ALLOC_NON_PREEMPTIBLE;
    assert_true(spared > 0);
    assert_int_equal(f.out.victim_count, 10 - spared);
    for (int j = 0; j < f.out.victim_count; j++) {
        assert_int_equal(f.out.victims[j].allocation_id, 109 - j);
        assert_int_not_equal(f.out.victims[j].cls, PS_ALLOC_NON_PREEMPTIBLE);
    }
    teardown(&f);
}

/* The usage the limits check compares is that of the allocations it is given, not the
 * snapshot's: a service computes the snapshot off its lock, and allocations that ended in
 * between (here 108 and 109; the snapshot still counts 10 units) are not over the limit again. */
static void test_limits_usage_from_allocations(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 1, 0, 0);
    set_limits(&f, A, res(8));
    struct ps_error err = {0};
    assert_int_equal(ps_preempt_limits_victims(f.snap, &f.tree, f.allocs, 8, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 0);
    set_limits(&f, A, res(7));
    assert_int_equal(ps_preempt_limits_victims(f.snap, &f.tree, f.allocs, 8, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 1);
    assert_int_equal(f.out.victims[0].allocation_id, 107);
    teardown(&f);
}

/* Allocations already preempted (leaving) count as released and are never chosen again, so
 * a repeated check preempts only the excess that is left. */
static void test_leaving_not_chosen_again(void **state)
{
    (void)state;
    static struct fix f;
    setup(&f, 1, 0, 0);
    f.allocs[9].leaving = true;   /* 109 */
    struct ps_error err = {0};
    assert_int_equal(ps_preempt_overcommit_victims(&f.tree, res(7), f.allocs, 10, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 2);
    assert_int_equal(f.out.victims[0].allocation_id, 108);
    assert_int_equal(f.out.victims[1].allocation_id, 107);
    f.out.victim_count = 0;
    f.allocs[8].leaving = true;   /* 108 */
    set_limits(&f, A, res(8));
    assert_int_equal(ps_preempt_limits_victims(f.snap, &f.tree, f.allocs, 10, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 0);
    f.allocs[8].leaving = false;
    assert_int_equal(ps_preempt_limits_victims(f.snap, &f.tree, f.allocs, 10, &f.out, &err), 0);
    assert_int_equal(f.out.victim_count, 1);
    assert_int_equal(f.out.victims[0].allocation_id, 108);
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_allocation_newest_preemptible_victim),
        cmocka_unit_test(test_scratch_reused),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_ssd_priority_preemption),
        cmocka_unit_test(test_stages_take_every_class_they_may),
        cmocka_unit_test(test_minimal_victim_set),
        cmocka_unit_test(test_aggressive_uses_aggressively_preemptible),
        cmocka_unit_test(test_blocking_ancestors),
        cmocka_unit_test(test_conditional_preemption),
        cmocka_unit_test(test_full_cluster_root_limits),
        cmocka_unit_test(test_node_shrink),
        cmocka_unit_test(test_limits_lowered),
        cmocka_unit_test(test_limits_spare_non_preemptible),
        cmocka_unit_test(test_leaving_not_chosen_again),
        cmocka_unit_test(test_limits_usage_from_allocations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
