/* tree_heartbeat.c — the loop's node heartbeat and its checks (tree_sched.h): the regular and
 * preemptive stages, the starts and victims handed to the host, overcommit on node shrink, and
 * the limits check after an update. */
#include <stdlib.h>

#include "core/tree_sched.h"

bool ps_tree_sched_preempt_active(const struct ps_tree_sched *ts)
{
    return ts->snap && ts->any_starving && ps_sched_any_pending(ts->snap);
}

bool ps_tree_sched_preempt_due(const struct ps_tree_sched *ts, int64_t *last_preempt_ms,
                               int64_t now_ms)
{
    if (!ps_tree_sched_preempt_active(ts) ||
        !ps_preempt_backoff_passed(*last_preempt_ms, now_ms, &ts->preempt_config))
        return false;
    *last_preempt_ms = now_ms;
    return true;
}

static bool high_priority(void *ctx, const struct ps_sched_snapshot *snap, int op)
{
    (void)snap;
    const struct ps_tree_sched *ts = ctx;
    return ts->high_priority[op] != 0;
}

static struct ps_preempt_tree engine_tree(const struct ps_tree_sched *ts)
{
    return (struct ps_preempt_tree){&ts->preempt_config, ts->starvation, ts->preempt_ops,
                                    ts->subtree_eligible, ts->eligible_ops,
                                    ts->eligible_op_count, ts->preempt_scratch};
}

/* Whether a preemptive stage could offer the node to anybody: some operation of the cached
 * eligible set is runnable with something pending. Without one the stages would switch off
 * the ineligible operations, start nothing and record nothing the hosts read (no reasons,
 * only ineligible skips), so the heartbeat skips them and the host's allocations list. */
static bool preempt_candidates(const struct ps_tree_sched *ts)
{
    for (int k = 0; k < ts->eligible_op_count; k++)
        if (ps_sched_schedulable(ts->snap, ts->eligible_ops[k]))
            return true;
    return false;
}

static int apply_victims(struct ps_tree_sched *ts, const struct ps_tree_host *host,
                         struct ps_error *err)
{
    for (int i = 0; i < ts->victims.victim_count; i++) {
        int rc = host->preempt(host->ctx, &ts->victims.victims[i], err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The preemptive stages never offer an allocation that is already leaving: its resources are
 * on their way out and it was preempted once. */
static int stage_allocations(struct ps_tree_sched *ts, const struct ps_node_allocation *allocs,
                             int count, struct ps_error *err)
{
    if (count > ts->alloc_cap) {
        int cap = ts->alloc_cap ? ts->alloc_cap : 16;
        while (cap < count)
            cap *= 2;
        struct ps_node_allocation *a = realloc(ts->allocs, (size_t)cap * sizeof *a);
        if (!a)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        ts->allocs = a;
        ts->alloc_cap = cap;
    }
    int n = 0;
    for (int k = 0; k < count; k++)
        if (!allocs[k].leaving)
            ts->allocs[n++] = allocs[k];
    return n;
}

static int overcommit(struct ps_tree_sched *ts, const struct ps_tree_host *host,
                      const struct ps_sched_node *node, struct ps_error *err)
{
    const struct ps_node_allocation *allocs;
    int count;
    struct ps_resources other;
    int rc = host->allocations(host->ctx, node->id, &allocs, &count, &other, err);
    if (rc != 0)
        return rc;
    struct ps_preempt_tree tree = engine_tree(ts);
    ts->victims.victim_count = 0;
    rc = ps_preempt_overcommit_victims(&tree, ps_resources_sub(node->limits, other), allocs,
                                       count, &ts->victims, err);
    return rc != 0 ? rc : apply_victims(ts, host, err);
}

/* Upstream's node shard records when the node's usage began to exceed its limits (at the
 * heartbeat that reports it) and its scheduling context aborts only once
 * allowed_node_resources_overcommit_duration has passed since (strictly). */
static bool overcommit_due(const struct ps_tree_sched *ts, const struct ps_sched_node *node,
                           int64_t now_ms)
{
    int64_t *since = node->overcommit_since_ms;
    if (!since)
        return false;
    if (ps_resources_fit(node->usage, node->limits)) {
        *since = PS_NO_OVERCOMMIT;
        return false;
    }
    if (*since == PS_NO_OVERCOMMIT)
        *since = now_ms;
    return *since < now_ms - ts->overcommit_duration_ms;
}

int ps_tree_sched_heartbeat(struct ps_tree_sched *ts, const struct ps_tree_host *host,
                            const struct ps_sched_node *host_node,
                            const struct ps_tree_heartbeat_stages *stages, int64_t now_ms,
                            struct ps_error *err)
{
    struct ps_sched_node ssd_node = *host_node;
    ssd_node.ssd_priority_preemption =
        ts->ssd_filter && ps_formula_eval(ts->ssd_filter, host_node->tags, host_node->tag_count);
    const struct ps_sched_node *node = &ssd_node;
    ps_sched_result_clear(&ts->result);
    ts->victims.victim_count = 0;
    ts->victims.stage = PS_STAGE_NONE;
    if (!ts->snap)
        return 0;
    int rc = 0;
    if (stages->regular && ts->high_priority_count > 0) {
        /* guarantee priority (tree_config.h): its operations first, then the regular stage */
        ts->result.node_usage = node->usage;
        struct ps_sched_stage high = {.extra = ps_resources_zero(), .eligible = high_priority,
                                      .ctx = ts};
        struct ps_sched_stage regular = {.extra = ps_resources_zero()};
        rc = ps_schedule_stage(ts->snap, node, &high, &ts->result, err);
        if (rc == 0)
            rc = ps_schedule_stage(ts->snap, node, &regular, &ts->result, err);
    } else if (stages->regular) {
        rc = ps_schedule_heartbeat(ts->snap, node, now_ms, &ts->result, err);
    } else {
        ts->result.node_usage = node->usage;
    }
    if (rc == 0 && stages->preemptive && preempt_candidates(ts)) {
        const struct ps_node_allocation *allocs;
        int count;
        struct ps_resources other;
        rc = host->allocations(host->ctx, node->id, &allocs, &count, &other, err);
        int n = rc == 0 ? stage_allocations(ts, allocs, count, err) : rc;
        if (n < 0)
            return n;
        if (!ts->preempt_scratch && !(ts->preempt_scratch = ps_preempt_scratch_new()))
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        struct ps_preempt_tree tree = engine_tree(ts);
        rc = ps_preempt_heartbeat(ts->snap, &tree, node, ts->allocs, n, &ts->result,
                                  &ts->victims, err);
    }
    if (rc != 0)
        return rc;
    for (int i = 0; i < ts->result.skip_count; i++) {
        const struct ps_sched_skip *k = &ts->result.skips[i];
        if (k->reason != PS_SCHED_NODE_RESOURCES || !ts->user[k->op] || !ts->fs.ops[k->op])
            continue;   /* ts->user is NULL once the operation is detached */
        ts->fs.ops[k->op]->deactivation_count++;
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (k->unsatisfied & (1u << r))
                ts->fs.ops[k->op]->min_needed_resources_unsatisfied_count[r]++;
    }
    for (int i = 0; i < ts->result.allocation_count; i++) {
        const struct ps_sched_allocation *a = &ts->result.allocations[i];
        bool started = false;
        rc = host->start(host->ctx, node->id, a->op, a->resources, &started, err);
        if (rc != 0)
            return rc;
        struct ps_tree_op *op = ts->user[a->op] ? ts->fs.ops[a->op] : NULL;
        if (op && started)
            op->last_schedule_success_ms = now_ms;
        else if (op)
            op->deactivation_count++;
        if (!started && (rc = ps_sched_allocation_finished(ts->snap, a->op, a->resources, err)) != 0)
            return rc;
    }
    if (host->scheduled && (rc = host->scheduled(host->ctx, node->id, &ts->result, err)) != 0)
        return rc;
    if ((rc = apply_victims(ts, host, err)) != 0)
        return rc;
    if (overcommit_due(ts, node, now_ms))
        rc = overcommit(ts, host, node, err);
    return rc;
}

int ps_tree_sched_limits_check(struct ps_tree_sched *ts, const struct ps_tree_host *host,
                               struct ps_error *err)
{
    const struct ps_sched_snapshot *snap = ts->snap;
    if (!snap)
        return 0;
    int count = ps_sched_snapshot_element_count(snap);
    bool over = false;
    for (int i = 0; i < count && !over; i++)
        over = !ps_resources_fit(ps_sched_usage(snap, i), ps_sched_limits(snap, i));
    if (!over)
        return 0;
    const struct ps_node_allocation *allocs;
    int n;
    struct ps_resources other;
    int rc = host->allocations(host->ctx, -1, &allocs, &n, &other, err);
    if (rc != 0)
        return rc;
    struct ps_preempt_tree tree = engine_tree(ts);
    ts->victims.victim_count = 0;
    rc = ps_preempt_limits_victims(snap, &tree, allocs, n, &ts->victims, err);
    return rc != 0 ? rc : apply_victims(ts, host, err);
}
