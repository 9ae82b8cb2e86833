/* The scheduler loop of one pool tree (tree_sched.h) as the service drives it: a tree built
 * through the strategy, one node, operations started, fair share updates and heartbeats with
 * the regular stage, the backoff of the preemptive stages and the victims taken for a starving
 * operation, with the numbers semantics.md gives. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/strategy.h"
#include "core/tree_sched.h"
#include "value_helpers.h"

#define MAX_ALLOCS 16

/* One test operation: what the service keeps per operation and tree. */
struct top {
    struct ps_operation *op;
    struct ps_tree_op *member;
    struct ps_preemptible *lists;
    int64_t pending;         /* allocations still to start */
    int element;             /* in the last build, -1 before */
};

/* The node and its running allocations, as api_nodes.c keeps them. */
struct world {
    struct ps_strategy *s;
    struct ps_pool_tree *tree;
    struct ps_tree_sched ts;
    struct top ops[4];
    int op_count;
    struct ps_node_allocation allocs[MAX_ALLOCS];
    int alloc_count;
    int64_t next_alloc_id;
    int64_t last_preempt_ms;
    int64_t overcommit_since_ms;
    int allocation_calls;    /* host->allocations */
    int op_state_calls;      /* host->op_state */
    bool versioned;          /* update's host: op_state_versioned */
};

static struct ps_resources shape(void)   /* one allocation: 1 slot, 1 core, 512 MiB */
{
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_USER_SLOTS] = 1;
    r.v[PS_RES_CPU] = PS_CPU_SCALE;
    r.v[PS_RES_MEMORY] = 512LL << 20;
    return r;
}

static struct top *top_of(struct world *w, const struct ps_tree_op *member)
{
    for (int i = 0; i < w->op_count; i++)
        if (w->ops[i].member == member)
            return &w->ops[i];
    return NULL;
}

static struct ps_preemptible *op_fn(void *ctx, struct ps_tree_op *member, int element,
                                    struct ps_sched_operation *sched,
                                    struct ps_preempt_operation *preempt)
{
    struct world *w = ctx;
    w->op_state_calls++;
    struct top *t = top_of(w, member);
    if (!t)
        return NULL;
    t->element = element;
    sched->allocation = shape();
    sched->pending_count = t->pending;
    sched->runnable = true;
    preempt->lists = t->lists;
    return t->lists;
}

static void world_init(struct world *w)
{
    memset(w, 0, sizeof *w);
    w->overcommit_since_ms = PS_NO_OVERCOMMIT;
    struct ps_error err;
    ps_error_init(&err);
    w->s = ps_strategy_new();
    assert_non_null(w->s);
    /* starvation after 5 s below 0.8 x fair share; the default backoff of 5 s */
    struct ps_value cfg = json("{\"fair_share_starvation_timeout\": 5000}");
    if (ps_strategy_add_tree(w->s, "physical", &cfg, &err) != 0)
        fail_msg("%s", err.msg);
    ps_value_release(&cfg);
    assert_int_equal(ps_strategy_set_default_tree(w->s, "physical", &err), 0);
    w->tree = ps_strategy_find_tree(w->s, "physical");
    struct ps_value none = json("{}");
    assert_int_equal(ps_pool_tree_create_pool(w->tree, "a", "<Root>", &none, &err), 0);
    assert_int_equal(ps_pool_tree_create_pool(w->tree, "b", "<Root>", &none, &err), 0);
    ps_value_release(&none);
    struct ps_resources limits = ps_resources_zero();   /* 4 slots, 4 cores, 4 GiB */
    limits.v[PS_RES_USER_SLOTS] = 4;
    limits.v[PS_RES_CPU] = 4 * PS_CPU_SCALE;
    limits.v[PS_RES_MEMORY] = 4LL << 30;
    if (ps_strategy_register_node(w->s, "n1", NULL, 0, &limits, &err) != 0)
        fail_msg("%s", err.msg);
    assert_ptr_equal(ps_strategy_find_node(w->s, "n1")->tree, w->tree);
    if (ps_tree_sched_init(&w->ts, &err) != 0)
        fail_msg("%s", err.msg);
    w->last_preempt_ms = PS_PREEMPT_NEVER;
    w->next_alloc_id = 1;
}

static void world_release(struct world *w)
{
    ps_tree_sched_release(&w->ts);
    for (int i = 0; i < w->op_count; i++)
        ps_preemptible_free(w->ops[i].lists);
    ps_strategy_free(w->s);
}

static struct top *start_op(struct world *w, const char *id, const char *pool, int64_t now_ms,
                            int64_t jobs)
{
    struct ps_error err;
    ps_error_init(&err);
    char spec_text[64];
    snprintf(spec_text, sizeof spec_text, "{\"pool\": \"%s\"}", pool);
    struct ps_value spec = json(spec_text);
    struct top *t = &w->ops[w->op_count++];
    if (ps_strategy_start_operation(w->s, id, "alice", now_ms, &spec, &t->op, &err) != 0)
        fail_msg("%s", err.msg);
    ps_value_release(&spec);
    assert_int_equal(t->op->state, PS_OP_RUNNING);
    t->member = ps_operation_membership(t->op, "physical");
    assert_non_null(t->member);
    t->lists = ps_preemptible_new(&w->ts.preemptible_config);
    assert_non_null(t->lists);
    t->pending = jobs;
    t->element = -1;
    return t;
}

/* Usage and demand from the running allocations and what is pending, then one update. */
static void update(struct world *w, int64_t now_ms)
{
    for (int i = 0; i < w->op_count; i++) {
        struct top *t = &w->ops[i];
        struct ps_resources usage = ps_resources_zero();
        for (int k = 0; k < w->alloc_count; k++)
            if (w->allocs[k].op == t->element && t->element >= 0)
                usage = ps_resources_add(usage, w->allocs[k].resources);
        t->member->usage = usage;
        t->member->demand = usage;
        for (int r = 0; r < PS_RES_COUNT; r++)
            t->member->demand.v[r] += shape().v[r] * t->pending;
        t->member->pending_job_count = t->pending;
    }
    /* element indices change with the build: remember allocations by operation */
    struct top *owner[MAX_ALLOCS];
    for (int k = 0; k < w->alloc_count; k++) {
        owner[k] = NULL;
        for (int i = 0; i < w->op_count; i++)
            if (w->ops[i].element == w->allocs[k].op)
                owner[k] = &w->ops[i];
    }
    struct ps_error err;
    ps_error_init(&err);
    struct ps_tree_host host = {.ctx = w, .op_state = op_fn, .op_state_versioned = w->versioned};
    if (ps_tree_sched_update(&w->ts, w->tree, now_ms, &host, NULL, &err) != 0)
        fail_msg("update: %s", err.msg);
    for (int k = 0; k < w->alloc_count; k++)
        w->allocs[k].op = owner[k]->element;
}

static struct ps_sched_node node_view(struct world *w)
{
    struct ps_resources usage = ps_resources_zero();
    for (int k = 0; k < w->alloc_count; k++)
        usage = ps_resources_add(usage, w->allocs[k].resources);
    struct ps_node *n = ps_strategy_find_node(w->s, "n1");
    return (struct ps_sched_node){.id = 1, .limits = n->resource_limits, .usage = usage,
                                  .overcommit_since_ms = &w->overcommit_since_ms};
}

/* The test as the loop's host: one node, its allocation table; victims stay in ts.victims
 * for the test to apply (victim_ends). */
static int64_t host_now_ms;

static int host_allocations(void *ctx, int64_t node, const struct ps_node_allocation **allocs,
                            int *count, struct ps_resources *other, struct ps_error *err)
{
    (void)node;
    (void)err;
    struct world *w = ctx;
    w->allocation_calls++;
    *allocs = w->allocs;
    *count = w->alloc_count;
    *other = ps_resources_zero();
    return 0;
}

static int host_start(void *ctx, int64_t node, int element, struct ps_resources resources,
                      bool *started, struct ps_error *err)
{
    (void)node;
    struct world *w = ctx;
    struct top *t = NULL;
    for (int k = 0; k < w->op_count; k++)
        if (w->ops[k].element == element)
            t = &w->ops[k];
    assert_non_null(t);
    assert_true(w->alloc_count < MAX_ALLOCS);
    int64_t id = w->next_alloc_id++;
    w->allocs[w->alloc_count] = (struct ps_node_allocation){id, element, resources,
                                                            host_now_ms, false, -1};
    assert_int_equal(ps_preemptible_add(t->lists, id, host_now_ms, resources, err), 0);
    w->allocs[w->alloc_count++].slot = ps_preemptible_slot(t->lists, id);
    t->pending--;
    *started = true;
    return 0;
}

static int host_preempt(void *ctx, const struct ps_preempt_victim *v, struct ps_error *err)
{
    (void)ctx;
    (void)v;
    (void)err;
    return 0;
}

/* The host the loop's checks call: the test's table, victims left in ts.victims. */
static struct ps_tree_host test_host(struct world *w)
{
    return (struct ps_tree_host){.ctx = w, .op_state = op_fn, .allocations = host_allocations,
                                 .start = host_start, .preempt = host_preempt};
}

/* One heartbeat at now_ms as the service runs it: the regular stage, the preemptive stages
 * when due; starts what it allocates (lists, allocation table, pending). */
static void heartbeat(struct world *w, int64_t now_ms)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_sched_node node = node_view(w);
    struct ps_tree_host host = {.ctx = w, .op_state = op_fn, .allocations = host_allocations,
                                .start = host_start, .preempt = host_preempt};
    struct ps_tree_heartbeat_stages stages = {
        true, ps_tree_sched_preempt_due(&w->ts, &w->last_preempt_ms, now_ms)};
    host_now_ms = now_ms;
    if (ps_tree_sched_heartbeat(&w->ts, &host, &node, &stages, now_ms, &err) != 0)
        fail_msg("heartbeat: %s", err.msg);
}

/* A victim ends (its interruption completed): out of the snapshot, the lists and the node. */
static void victim_ends(struct world *w, int64_t id)
{
    struct ps_error err;
    ps_error_init(&err);
    for (int k = 0; k < w->alloc_count; k++) {
        if (w->allocs[k].id != id)
            continue;
        struct top *t = NULL;
        for (int i = 0; i < w->op_count; i++)
            if (w->ops[i].element == w->allocs[k].op)
                t = &w->ops[i];
        assert_non_null(t);
        assert_int_equal(ps_sched_allocation_finished(w->ts.snap, w->allocs[k].op,
                                                      w->allocs[k].resources, &err), 0);
        assert_int_equal(ps_preemptible_remove(t->lists, id, &err), 0);
        t->pending++;   /* an aborted job runs again */
        w->allocs[k] = w->allocs[--w->alloc_count];
        return;
    }
    fail_msg("no allocation %lld", (long long)id);
}

static int count_of(const struct world *w, const struct top *t)
{
    int n = 0;
    for (int k = 0; k < w->alloc_count; k++)
        n += w->allocs[k].op == t->element;
    return n;
}

static void test_allocations_backoff_and_victims(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);

    /* Before the first update there is no snapshot: nothing is scheduled. */
    struct top *a = start_op(&w, "op-a", "a", 0, 10);
    heartbeat(&w, 0);
    assert_int_equal(w.ts.result.allocation_count, 0);
    assert_null(w.ts.snap);

    /* Alone, A's fair share is the whole cluster: the node's 4 slots go to A, 1 core each. */
    update(&w, 0);
    assert_non_null(w.ts.snap);
    assert_int_equal(w.ts.last_update_ms, 0);
    assert_true(a->element > 0);
    assert_ptr_equal(w.ts.user[a->element], a->op);
    assert_true(fabs(a->member->dynamic.fair_share_ratio - 1.0) < 1e-9);
    assert_false(w.ts.any_starving);
    heartbeat(&w, 0);
    assert_int_equal(w.ts.result.allocation_count, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(w.ts.result.allocations[i].op, a->element);
        assert_int_equal(w.ts.result.allocations[i].resources.v[PS_RES_CPU], PS_CPU_SCALE);
        assert_int_equal(w.ts.result.allocations[i].resources.v[PS_RES_USER_SLOTS], 1);
    }
    assert_int_equal(w.ts.result.node_usage.v[PS_RES_CPU], 4 * PS_CPU_SCALE);
    assert_int_equal(w.ts.victims.stage, PS_STAGE_NONE);
    assert_int_equal(w.ts.victims.victim_count, 0);
    assert_int_equal(a->pending, 6);
    /* the node is full: another heartbeat starts nothing */
    heartbeat(&w, 500);
    assert_int_equal(w.ts.result.allocation_count, 0);

    /* B arrives in the sibling pool: equal weights, fair shares 0.5 / 0.5. */
    struct top *b = start_op(&w, "op-b", "b", 1000, 4);
    update(&w, 1000);
    assert_true(fabs(a->member->dynamic.fair_share_ratio - 0.5) < 1e-9);
    assert_true(fabs(b->member->dynamic.fair_share_ratio - 0.5) < 1e-9);
    assert_true(fabs(a->member->dynamic.usage_ratio - 1.0) < 1e-9);
    assert_true(b->member->dynamic.usage_ratio == 0.0);
    /* A's lists with fair share 2 cores: 1 non-preemptible, 1 aggressively preemptible (the
     * aggressive bound is 0.2 x 2 = 0.4 cores), the 2 newest preemptible */
    assert_int_equal(ps_preemptible_count(a->lists, PS_ALLOC_NON_PREEMPTIBLE), 1);
    assert_int_equal(ps_preemptible_count(a->lists, PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE), 1);
    assert_int_equal(ps_preemptible_count(a->lists, PS_ALLOC_PREEMPTIBLE), 2);
    /* B is below its fair share but not starving yet (5 s timeout): no preemptive stage */
    assert_false(w.ts.any_starving);
    heartbeat(&w, 1000);
    assert_int_equal(w.ts.result.allocation_count, 0);
    assert_int_equal(w.ts.victims.stage, PS_STAGE_NONE);
    assert_int_equal(w.ts.victims.victim_count, 0);
    assert_true(w.last_preempt_ms == PS_PREEMPT_NEVER);

    /* 6 s later B starves: the preemptive stage takes A's newest preemptible allocation (id 4)
     * for B and starts one allocation of B. */
    update(&w, 7000);
    assert_true(w.ts.any_starving);
    assert_int_equal(b->member->dynamic.starvation, PS_STARVING);
    assert_int_equal(a->member->dynamic.starvation, PS_NON_STARVING);
    /* the stages' candidates are those of this check, not of the last one (none then) */
    assert_int_equal(w.ts.eligible_op_count, 1);
    assert_int_equal(w.ts.eligible_ops[0], b->element);
    heartbeat(&w, 7000);
    assert_int_equal(w.ts.victims.stage, PS_STAGE_PREEMPTIVE);
    assert_int_equal(w.ts.victims.victim_count, 1);
    assert_int_equal(w.ts.victims.victims[0].allocation_id, 4);
    assert_int_equal(w.ts.victims.victims[0].op, a->element);
    assert_int_equal(w.ts.victims.victims[0].for_op, b->element);
    assert_int_equal(w.ts.victims.victims[0].reason, PS_PREEMPT_FOR_STARVING);
    assert_int_equal(w.ts.victims.victims[0].cls, PS_ALLOC_PREEMPTIBLE);
    /* interrupted with the tree's allocation_preemption_timeout (10 s), not aborted */
    assert_int_equal(w.ts.victims.victims[0].interrupt_timeout_ms, 10000);
    assert_int_equal(w.ts.result.allocation_count, 1);
    assert_int_equal(w.ts.result.allocations[0].op, b->element);
    /* node usage counts B's allocation and no longer the victim */
    assert_int_equal(w.ts.result.node_usage.v[PS_RES_CPU], 4 * PS_CPU_SCALE);
    assert_true(w.last_preempt_ms == 7000);
    victim_ends(&w, 4);
    assert_int_equal(count_of(&w, a), 3);
    assert_int_equal(count_of(&w, b), 1);

    /* Backoff: within 5 s of the last preemptive stage B (still starving by the last check)
     * gets nothing on this full node, and no victims. */
    heartbeat(&w, 11999);
    assert_int_equal(w.ts.victims.stage, PS_STAGE_NONE);
    assert_int_equal(w.ts.victims.victim_count, 0);
    assert_int_equal(w.ts.result.allocation_count, 0);
    assert_true(w.last_preempt_ms == 7000);

    /* At 5 s the stage runs again: the next preemptible allocation of A (id 3) goes. */
    heartbeat(&w, 12000);
    assert_int_equal(w.ts.victims.stage, PS_STAGE_PREEMPTIVE);
    assert_int_equal(w.ts.victims.victim_count, 1);
    assert_int_equal(w.ts.victims.victims[0].allocation_id, 3);
    assert_int_equal(w.ts.victims.victims[0].for_op, b->element);
    assert_int_equal(w.ts.result.allocation_count, 1);
    assert_int_equal(w.ts.result.allocations[0].op, b->element);
    assert_true(w.last_preempt_ms == 12000);
    victim_ends(&w, 3);
    assert_int_equal(count_of(&w, a), 2);
    assert_int_equal(count_of(&w, b), 2);

    /* Both at their fair share (2 cores each): nobody starves, nothing of A is preemptible
     * any more (its usage does not exceed 2 cores) and the stage takes nothing. */
    update(&w, 13000);
    assert_true(fabs(a->member->dynamic.usage_ratio - 0.5) < 1e-9);
    assert_true(fabs(b->member->dynamic.usage_ratio - 0.5) < 1e-9);
    assert_false(w.ts.any_starving);
    assert_int_equal(w.ts.eligible_op_count, 0);
    assert_int_equal(ps_preemptible_count(a->lists, PS_ALLOC_PREEMPTIBLE), 0);
    heartbeat(&w, 20000);
    assert_int_equal(w.ts.victims.stage, PS_STAGE_NONE);
    assert_int_equal(w.ts.victims.victim_count, 0);
    assert_int_equal(w.ts.result.allocation_count, 0);
    assert_true(w.last_preempt_ms == 12000);
    world_release(&w);
}

/* A preemptive stage whose eligible operations have nothing pending could start nothing: the
 * heartbeat skips the stages and the host's allocation list; with something pending again the
 * stage runs and takes its victim. */
static void test_preempt_nothing_pending(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct top *a = start_op(&w, "op-a", "a", 0, 10);
    update(&w, 0);
    heartbeat(&w, 0);
    assert_int_equal(count_of(&w, a), 4);
    struct top *b = start_op(&w, "op-b", "b", 1000, 4);
    update(&w, 1000);
    update(&w, 7000);
    assert_true(w.ts.any_starving);
    assert_int_equal(w.ts.eligible_op_count, 1);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_sched_set_pending(w.ts.snap, b->element, 0, &err), 0);
    w.allocation_calls = 0;
    heartbeat(&w, 7000);
    assert_int_equal(w.allocation_calls, 0);
    assert_int_equal(w.ts.victims.stage, PS_STAGE_NONE);
    assert_int_equal(w.ts.result.allocation_count, 0);
    assert_true(w.last_preempt_ms == 7000);   /* the backoff counts the skipped stages */
    assert_int_equal(ps_sched_set_pending(w.ts.snap, b->element, 4, &err), 0);
    heartbeat(&w, 12000);
    assert_int_equal(w.allocation_calls, 1);
    assert_int_equal(w.ts.victims.stage, PS_STAGE_PREEMPTIVE);
    assert_int_equal(w.ts.victims.victim_count, 1);
    assert_int_equal(w.ts.result.allocations[0].op, b->element);
    world_release(&w);
}

/* A detached operation (it left the tree between updates) gets nothing more. */
static void test_detach(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct top *a = start_op(&w, "op-a", "a", 0, 10);
    struct top *b = start_op(&w, "op-b", "b", 0, 10);
    update(&w, 0);
    assert_ptr_equal(w.ts.user[b->element], b->op);
    ps_tree_sched_detach(&w.ts, b->element);
    assert_null(w.ts.user[b->element]);
    heartbeat(&w, 0);
    assert_int_equal(w.ts.result.allocation_count, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(w.ts.result.allocations[i].op, a->element);
    ps_tree_sched_detach(&w.ts, -1);          /* invalid indices are no-ops */
    ps_tree_sched_detach(&w.ts, 1 << 20);
    world_release(&w);
}

/* A pool's scheduling_tag_filter restricts every operation below it: the operation in pool a
 * (filter "gpu", none of its own) gets nothing on the untagged node, the one in b everything;
 * an operation's own filter and its pools' combine as a conjunction. */
static void test_pool_filter(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value gpu = json("\"gpu\"");
    if (ps_pool_tree_set_pool_attr(w.tree, "a", "scheduling_tag_filter", &gpu, &err) != 0)
        fail_msg("%s", err.msg);
    ps_value_release(&gpu);
    /* a gpu node in the tree, so pool a's filter limits are not zero: only the filter itself
     * can keep op-a off the untagged node n1 */
    const char *tags[] = {"gpu"};
    struct ps_resources limits = ps_strategy_find_node(w.s, "n1")->resource_limits;
    if (ps_strategy_register_node(w.s, "g1", tags, 1, &limits, &err) != 0)
        fail_msg("%s", err.msg);
    struct top *a = start_op(&w, "op-a", "a", 0, 10);
    struct top *b = start_op(&w, "op-b", "b", 0, 10);
    update(&w, 0);
    heartbeat(&w, 0);
    assert_int_equal(w.ts.result.allocation_count, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(w.ts.result.allocations[i].op, b->element);
    assert_int_equal(count_of(&w, a), 0);

    const struct ps_formula *filter = NULL;
    struct ps_formula *owned = NULL;
    assert_int_equal(ps_tree_op_effective_filter(a->member, &filter, &owned, &err), 0);
    assert_null(owned);                                   /* only the pool has one: borrowed */
    assert_string_equal(ps_formula_text(filter), "gpu");
    assert_int_equal(ps_tree_op_effective_filter(b->member, &filter, &owned, &err), 0);
    assert_null(filter);
    world_release(&w);
}

/* The snapshot owns the filters it evaluates: a pool filter changed (the old formula freed)
 * between an update and a heartbeat is never read; the old one applies until the next update. */
static void test_filter_changed_between_updates(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value v = json("\"gpu\"");
    assert_int_equal(ps_pool_tree_set_pool_attr(w.tree, "a", "scheduling_tag_filter", &v, &err), 0);
    ps_value_release(&v);
    struct top *a = start_op(&w, "op-a", "a", 0, 10);
    update(&w, 0);
    v = json("\"ssd\"");                      /* frees the formula "gpu" */
    assert_int_equal(ps_pool_tree_set_pool_attr(w.tree, "a", "scheduling_tag_filter", &v, &err), 0);
    ps_value_release(&v);
    heartbeat(&w, 0);                          /* still "gpu" (an owned copy): nothing on n1 */
    assert_int_equal(count_of(&w, a), 0);
    v = json("null");
    assert_int_equal(ps_pool_tree_set_pool_attr(w.tree, "a", "scheduling_tag_filter", &v, &err), 0);
    ps_value_release(&v);
    update(&w, 1000);
    heartbeat(&w, 1000);
    assert_int_equal(count_of(&w, a), 4);
    world_release(&w);
}

/* What the loop keeps from update to update as a function of the configuration (here the
 * preemptible lists' thresholds) follows a pool's config changed between updates. */
static void test_threshold_changed_between_updates(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct ps_error err;
    ps_error_init(&err);
    struct top *a = start_op(&w, "op-a", "a", 0, 10);
    update(&w, 0);
    heartbeat(&w, 0);
    assert_int_equal(count_of(&w, a), 4);
    start_op(&w, "op-b", "b", 1000, 4);
    update(&w, 1000);
    update(&w, 2000);   /* the same configuration again */
    assert_int_equal(ps_preemptible_count(a->lists, PS_ALLOC_NON_PREEMPTIBLE), 1);
    /* an allocation after less than 2.5 cores of usage is not preemptible */
    struct ps_value v = json("{\"cpu\": 2.5}");
    assert_int_equal(ps_pool_tree_set_pool_attr(w.tree, "a",
                                                "non_preemptible_resource_usage_threshold", &v,
                                                &err), 0);
    ps_value_release(&v);
    update(&w, 3000);
    assert_int_equal(ps_preemptible_count(a->lists, PS_ALLOC_NON_PREEMPTIBLE), 3);
    /* and the starvation check's settings: A's timeout follows its pool's new one */
    int64_t before = a->member->dynamic.effective_timeout_ms;
    v = json("77000");
    assert_int_equal(ps_pool_tree_set_pool_attr(w.tree, "a", "fair_share_starvation_timeout", &v,
                                                &err), 0);
    ps_value_release(&v);
    update(&w, 4000);
    assert_true(before != 77000);
    assert_int_equal(a->member->dynamic.effective_timeout_ms, 77000);
    world_release(&w);
}

/* One operation in pool a fills the node with allocations 1-4 at 0 ms. */
static void fill_node(struct world *w)
{
    world_init(w);
    struct top *a = start_op(w, "op-a", "a", 0, 10);
    update(w, 0);
    heartbeat(w, 0);
    assert_int_equal(count_of(w, a), 4);
}

/* Limits lowered below usage: the limits check after the next update takes the newest
 * allocations (resource_limits_violated); with usage within limits it asks for nothing. */
static void test_limits_check(void **state)
{
    (void)state;
    struct world w;
    fill_node(&w);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_tree_host host = test_host(&w);
    assert_int_equal(ps_tree_sched_limits_check(&w.ts, &host, &err), 0);
    assert_int_equal(w.ts.victims.victim_count, 0);
    struct ps_value v = json("{\"cpu\": 1}");
    assert_int_equal(ps_pool_tree_set_pool_attr(w.tree, "a", "resource_limits", &v, &err), 0);
    ps_value_release(&v);
    update(&w, 1000);
    assert_int_equal(ps_tree_sched_limits_check(&w.ts, &host, &err), 0);
    assert_int_equal(w.ts.victims.victim_count, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(w.ts.victims.victims[i].reason, PS_PREEMPT_LIMITS_VIOLATED);
        assert_int_equal(w.ts.victims.victims[i].allocation_id, 4 - i);   /* newest first */
    }
    world_release(&w);
}

/* A node that shrank below its usage: upstream's allowed_node_resources_overcommit_duration
 * (15 s by default) from the first heartbeat that sees it, strictly, then victims until the
 * allocations that are not leaving fit; leaving ones count as released. A heartbeat that
 * finds the node within its limits forgets when the overcommit began. */
static void test_overcommit(void **state)
{
    (void)state;
    struct world w;
    fill_node(&w);
    struct ps_error err;
    ps_error_init(&err);
    w.allocs[3].leaving = true;                /* allocation 4 is already preempted */
    struct ps_resources two = shape();
    for (int r = 0; r < PS_RES_COUNT; r++)
        two.v[r] *= 2;
    struct ps_resources four = two;
    for (int r = 0; r < PS_RES_COUNT; r++)
        four.v[r] *= 2;
    assert_int_equal(ps_strategy_register_node(w.s, "n1", NULL, 0, &two, &err), 0);
    struct ps_sched_node node = node_view(&w);
    assert_false(ps_resources_fit(node.usage, node.limits));
    struct ps_tree_host host = test_host(&w);
    struct ps_tree_heartbeat_stages none = {false, false};
    const int64_t t0 = 1000000;
    int64_t beats[] = {t0, t0 + 5000, t0 + 15000};
    for (int i = 0; i < 3; i++) {               /* within the allowed duration: nothing */
        assert_int_equal(ps_tree_sched_heartbeat(&w.ts, &host, &node, &none, beats[i], &err), 0);
        assert_int_equal(w.ts.victims.victim_count, 0);
        assert_int_equal(w.overcommit_since_ms, t0);
    }
    /* fits again (grown back) for one heartbeat: the start is forgotten */
    assert_int_equal(ps_strategy_register_node(w.s, "n1", NULL, 0, &four, &err), 0);
    struct ps_sched_node fits = node_view(&w);
    assert_int_equal(ps_tree_sched_heartbeat(&w.ts, &host, &fits, &none, t0 + 15001, &err), 0);
    assert_int_equal(w.ts.victims.victim_count, 0);
    assert_int_equal(w.overcommit_since_ms, PS_NO_OVERCOMMIT);
    assert_int_equal(ps_tree_sched_heartbeat(&w.ts, &host, &node, &none, t0 + 16000, &err), 0);
    assert_int_equal(w.ts.victims.victim_count, 0);
    assert_int_equal(w.overcommit_since_ms, t0 + 16000);
    assert_int_equal(ps_tree_sched_heartbeat(&w.ts, &host, &node, &none, t0 + 31001, &err), 0);
    assert_int_equal(w.ts.result.allocation_count, 0);
    assert_int_equal(w.ts.victims.victim_count, 1);   /* 3 not leaving, room for 2 */
    assert_int_equal(w.ts.victims.victims[0].reason, PS_PREEMPT_RESOURCE_OVERCOMMIT);
    assert_int_equal(w.ts.victims.victims[0].allocation_id, 3);
    world_release(&w);
}

/* The update in three phases (begin under the host's lock, run without it, finish under it):
 * a structural change of the tree between begin and finish (an operation started, a pool
 * created) discards the results: finish refuses with PS_ESTATE and the previous build,
 * snapshot, generation and the tree's dynamic state all stay; heartbeats in between use the
 * previous snapshot; the computation owns its element names. A change of usage only is fine:
 * the results apply, computed on the usage read at begin, and the new snapshot has the usage
 * at finish. */
static int begin_and_run(struct world *w, int64_t now_ms)
{
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_tree_sched_update_begin(&w->ts, w->tree, now_ms, &err);
    if (rc == 0)
        rc = ps_tree_sched_update_run(&w->ts, &err);
    return rc;
}

static int finish(struct world *w)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_tree_host host = {.ctx = w, .op_state = op_fn};
    return ps_tree_sched_update_finish(&w->ts, w->tree, &host, NULL, &err);
}

static void test_update_phases_structural_change(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    struct top *a = start_op(&w, "op-a", "a", 0, 10);
    struct top *b = start_op(&w, "op-b", "b", 0, 10);
    update(&w, 0);
    const struct ps_sched_snapshot *snap = w.ts.snap;
    uint64_t generation = w.ts.generation;
    int count = w.ts.fs.count, ea = a->element, eb = b->element;
    assert_int_equal(count, 5);
    double fair_a = a->member->dynamic.fair_share_ratio;
    assert_true(fair_a > 0.4 && fair_a < 0.6);

    /* an operation starts during the computation */
    assert_int_equal(begin_and_run(&w, 1000), 0);
    for (int i = 0; i < w.ts.next.count; i++)   /* names are the computation's own */
        if (w.ts.next.ops[i] == a->member)
            assert_ptr_not_equal(w.ts.next.elems[i].in.name, a->member->id);
    heartbeat(&w, 1000);                          /* the previous snapshot, its elements */
    assert_ptr_equal(w.ts.snap, snap);
    assert_int_equal(w.ts.result.allocation_count, 4);
    for (int i = 0; i < 4; i++)
        assert_true(w.ts.result.allocations[i].op == ea || w.ts.result.allocations[i].op == eb);
    struct top *c = start_op(&w, "op-c", "a", 1000, 10);
    assert_int_equal(finish(&w), PS_ESTATE);
    assert_ptr_equal(w.ts.snap, snap);
    assert_int_equal(w.ts.generation, generation);
    assert_int_equal(w.ts.fs.count, count);
    assert_int_equal(w.ts.fs.ops[ea], a->member);
    assert_int_equal(w.ts.fs.ops[eb], b->member);
    assert_int_equal(a->element, ea);
    assert_false(c->member->dynamic.valid);
    assert_true(a->member->dynamic.fair_share_ratio == fair_a);
    assert_int_equal(finish(&w), PS_ESTATE);      /* nothing left to finish */

    /* a pool created during the computation */
    assert_int_equal(begin_and_run(&w, 2000), 0);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value none = json("{}");
    assert_int_equal(ps_pool_tree_create_pool(w.tree, "c", "<Root>", &none, &err), 0);
    ps_value_release(&none);
    assert_int_equal(finish(&w), PS_ESTATE);
    assert_ptr_equal(w.ts.snap, snap);
    assert_int_equal(w.ts.fs.count, count);

    /* usage changes only: the results apply to the elements they were computed for */
    assert_int_equal(begin_and_run(&w, 3000), 0);
    a->member->usage.v[PS_RES_CPU] += PS_CPU_SCALE;
    assert_int_equal(finish(&w), 0);
    assert_int_equal(w.ts.generation, generation + 1);
    assert_int_equal(w.ts.fs.count, count + 2);   /* op-c and pool c */
    for (int i = 0; i < w.ts.fs.count; i++)
        if (w.ts.fs.ops[i])
            assert_ptr_equal(w.ts.user[i], w.ts.fs.ops[i]->user_data);
    assert_ptr_equal(w.ts.fs.ops[a->element], a->member);
    assert_ptr_equal(w.ts.fs.ops[c->element], c->member);
    assert_true(c->member->dynamic.valid);
    /* the fair shares are begin's, but heartbeats schedule with the usage at finish */
    struct ps_resources begun = w.ts.fs.elems[a->element].in.usage;
    assert_int_equal(begun.v[PS_RES_CPU] + PS_CPU_SCALE, a->member->usage.v[PS_RES_CPU]);
    assert_true(ps_resources_equal(ps_sched_usage(w.ts.snap, a->element), a->member->usage));
    int pool_a = ps_sched_parent(w.ts.snap, a->element);
    assert_int_equal(ps_sched_usage(w.ts.snap, pool_a).v[PS_RES_CPU],
                     w.ts.fs.elems[pool_a].in.usage.v[PS_RES_CPU] + PS_CPU_SCALE);
    world_release(&w);
}

/* A host that keeps state versions is asked about an operation only when its version moved
 * (or the tree changed); the others keep their last answer. One that does not is asked about
 * every operation at every update. */
static void test_op_state_versioned(void **state)
{
    (void)state;
    struct world w;
    world_init(&w);
    w.versioned = true;
    struct top *a = start_op(&w, "op-a", "a", 0, 10);
    struct top *b = start_op(&w, "op-b", "b", 0, 10);
    update(&w, 0);
    assert_int_equal(w.op_state_calls, 2);
    w.op_state_calls = 0;
    update(&w, 1000);
    assert_int_equal(w.op_state_calls, 0);
    assert_int_equal(ps_sched_pending(w.ts.snap, a->element), 10);
    /* a's answer changes with its version: asked again, the snapshot has the new one */
    a->pending = 7;
    a->member->state_version++;
    update(&w, 2000);
    assert_int_equal(w.op_state_calls, 1);
    assert_int_equal(ps_sched_pending(w.ts.snap, a->element), 7);
    assert_int_equal(ps_sched_pending(w.ts.snap, b->element), 10);
    /* a structural change: every operation asked */
    w.op_state_calls = 0;
    struct top *c = start_op(&w, "op-c", "a", 3000, 5);
    update(&w, 3000);
    assert_int_equal(w.op_state_calls, 3);
    assert_int_equal(ps_sched_pending(w.ts.snap, c->element), 5);
    /* not versioned: every operation at every update */
    w.versioned = false;
    w.op_state_calls = 0;
    update(&w, 4000);
    assert_int_equal(w.op_state_calls, 3);
    world_release(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocations_backoff_and_victims),
        cmocka_unit_test(test_preempt_nothing_pending),
        cmocka_unit_test(test_detach),
        cmocka_unit_test(test_pool_filter),
        cmocka_unit_test(test_filter_changed_between_updates),
        cmocka_unit_test(test_threshold_changed_between_updates),
        cmocka_unit_test(test_limits_check),
        cmocka_unit_test(test_overcommit),
        cmocka_unit_test(test_update_phases_structural_change),
        cmocka_unit_test(test_op_state_versioned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
