#include "core/pending.h"

#include <stdio.h>
#include <string.h>

#include "core/nodes.h"
#include "core/pool_tree_impl.h"
#include "core/schedule.h"

static const char *const reason_ids[PS_PENDING_REASON_COUNT] = {
    "none",
    "suspended",
    "max_running_operation_count",
    "no_nodes",
    "no_matching_node",
    "operation_resource_limits",
    "pool_resource_limits",
    "waiting_for_fair_share_update",
    "usage_at_fair_share",
    "resources_fragmented",
    "no_node_fits",
    "no_free_resources",
    "waiting_for_heartbeat",
};

const char *ps_pending_reason_id(enum ps_pending_reason reason)
{
    if ((int)reason < 0 || reason >= PS_PENDING_REASON_COUNT)
        return "unknown";
    return reason_ids[reason];
}

static const char *resource(int r)
{
    const char *name = ps_resource_name(r);
    return name ? name : "?";
}

bool ps_pending_text_fixed(enum ps_pending_reason reason)
{
    switch (reason) {
    case PS_PENDING_NONE:
    case PS_PENDING_SUSPENDED:
    case PS_PENDING_WAITING_FAIR_SHARE_UPDATE:
    case PS_PENDING_USAGE_AT_FAIR_SHARE:
    case PS_PENDING_FRAGMENTED:
    case PS_PENDING_WAITING_HEARTBEAT:
        return true;
    default:
        return false;
    }
}

int ps_pending_format(const struct ps_pending_info *info, char *buf, size_t size)
{
    const char *pool = info->pool ? info->pool : "?";
    switch (info->reason) {
    case PS_PENDING_NONE:
        return snprintf(buf, size, "%s", "");
    case PS_PENDING_SUSPENDED:
        return snprintf(buf, size, "operation suspended");
    case PS_PENDING_MAX_RUNNING_OPERATIONS:
        return snprintf(buf, size, "max_running_operation_count of pool \"%s\" reached (%lld of %lld)", pool,
                        (long long)info->count, (long long)info->limit);
    case PS_PENDING_NO_NODES:
        return snprintf(buf, size, "pool tree \"%s\" has no nodes", info->tree ? info->tree : "?");
    case PS_PENDING_NO_MATCHING_NODE:
        if (info->pool)
            return snprintf(buf, size, "no node matches scheduling_tag_filter \"%s\" of pool \"%s\"",
                            info->filter ? info->filter : "", pool);
        return snprintf(buf, size, "no node matches scheduling_tag_filter \"%s\"", info->filter ? info->filter : "");
    case PS_PENDING_OPERATION_RESOURCE_LIMITS:
        return snprintf(buf, size, "resource_limits of the operation reached (%s)", resource(info->resource));
    case PS_PENDING_POOL_RESOURCE_LIMITS:
        return snprintf(buf, size, "resource_limits of pool \"%s\" reached (%s)", pool, resource(info->resource));
    case PS_PENDING_WAITING_FAIR_SHARE_UPDATE:
        return snprintf(buf, size, "waiting for fair share update");
    case PS_PENDING_USAGE_AT_FAIR_SHARE:
        return snprintf(buf, size, "usage at fair share");
    case PS_PENDING_FRAGMENTED:
        return snprintf(buf, size, "node resources fragmented");
    case PS_PENDING_NO_NODE_FITS:
        return snprintf(buf, size, "no node of pool tree \"%s\" is large enough for the next job",
                        info->tree ? info->tree : "?");
    case PS_PENDING_NO_FREE_RESOURCES:
        return snprintf(buf, size, "no node of pool tree \"%s\" has free resources for the next job",
                        info->tree ? info->tree : "?");
    case PS_PENDING_WAITING_HEARTBEAT:
        return snprintf(buf, size, "waiting for a node heartbeat");
    case PS_PENDING_REASON_COUNT:
        break;
    }
    return snprintf(buf, size, "unknown");
}

/* The first resource whose usage reached a specified (finite) limit, or -1. */
static int limit_reached(const struct ps_resources *usage, const struct ps_resources *limits)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (limits->v[r] < PS_RES_INFINITE && usage->v[r] >= limits->v[r])
            return r;
    return -1;
}

/* The same with optional limits (unset: unlimited), without building them: most pools set
 * none. */
static int opt_limit_reached(const struct ps_resources *usage, const struct ps_resources_opt *limits)
{
    for (int r = 0; limits->set && r < PS_RES_COUNT; r++)
        if ((limits->set & (1u << r)) && limits->r.v[r] < PS_RES_INFINITE &&
            usage->v[r] >= limits->r.v[r])
            return r;
    return -1;
}

static bool matches_no_node(struct ps_pool_tree *tree, const struct ps_formula *filter)
{
    if (!filter || ps_formula_is_empty(filter))
        return false;
    return ps_pool_tree_filter_node_count(tree, filter) == 0;
}

void ps_pool_tree_pending_reason(struct ps_pool_tree *tree, const struct ps_tree_op *op,
                                 struct ps_pending_info *out)
{
    memset(out, 0, sizeof *out);
    out->resource = -1;
    if (op->suspended) {
        out->reason = PS_PENDING_SUSPENDED;
        return;
    }
    if (!op->running && op->pending_by) {
        out->reason = PS_PENDING_MAX_RUNNING_OPERATIONS;
        out->pool = op->pending_by->name;
        out->count = op->pending_by->running_operation_count;
        out->limit = ps_pool_max_running_operations(op->pending_by);
        return;
    }
    if (tree->node_count == 0) {
        out->reason = PS_PENDING_NO_NODES;
        out->tree = tree->name;
        return;
    }
    if (matches_no_node(tree, op->filter)) {
        out->reason = PS_PENDING_NO_MATCHING_NODE;
        out->filter = op->scheduling_tag_filter;
        return;
    }
    for (const struct ps_pool *p = op->pool; p; p = p->parent) {
        if (matches_no_node(tree, p->filter)) {
            out->reason = PS_PENDING_NO_MATCHING_NODE;
            out->filter = p->config.scheduling_tag_filter;
            out->pool = p->name;
            return;
        }
    }
    int r = limit_reached(&op->usage, &op->resource_limits);
    if (r >= 0) {
        out->reason = PS_PENDING_OPERATION_RESOURCE_LIMITS;
        out->resource = r;
        return;
    }
    for (const struct ps_pool *p = op->pool; p && !p->is_root; p = p->parent) {
        r = opt_limit_reached(&p->usage, &p->config.resource_limits);
        if (r >= 0) {
            out->reason = PS_PENDING_POOL_RESOURCE_LIMITS;
            out->pool = p->name;
            out->resource = r;
            return;
        }
    }
    if (!op->dynamic.valid)
        out->reason = PS_PENDING_WAITING_FAIR_SHARE_UPDATE;
}

void ps_pool_tree_update_pool_usage(struct ps_pool_tree *tree)
{
    tree->root->usage = ps_resources_zero();
    for (int i = 0; i < tree->pool_count; i++)
        tree->pools[i]->usage = ps_resources_zero();
    for (int i = 0; i < tree->op_count; i++) {
        const struct ps_tree_op *op = tree->ops[i];
        if (!op->running)
            continue;
        for (struct ps_pool *p = op->pool; p; p = p->parent)
            p->usage = ps_resources_add(p->usage, op->usage);
    }
}

void ps_pending_scheduler_reason(const struct ps_pending_probe *p, struct ps_pending_info *info)
{
    enum ps_pending_reason r;
    if (!p->in_update) {
        r = PS_PENDING_WAITING_FAIR_SHARE_UPDATE;
    } else if (!p->fits_some_node(p->ctx)) {
        r = PS_PENDING_NO_NODE_FITS;
    } else if (p->sched_reason == PS_SCHED_LIMITS) {
        info->resource = p->limit_resource;
        info->pool = p->limit_pool;
        r = p->limit_pool ? PS_PENDING_POOL_RESOURCE_LIMITS : PS_PENDING_OPERATION_RESOURCE_LIMITS;
    } else if (p->satisfaction >= 1.0 - 1e-9) {
        r = PS_PENDING_USAGE_AT_FAIR_SHARE;
    } else if (p->sched_reason == PS_SCHED_NODE_RESOURCES ||
               p->sched_reason == PS_SCHED_FILTER_MISMATCH ||
               p->sched_reason == PS_SCHED_DISK ||
               p->sched_reason == PS_SCHED_REGULAR_ON_SSD_FORBIDDEN) {
        r = p->total_fits(p->ctx) ? PS_PENDING_FRAGMENTED : PS_PENDING_NO_FREE_RESOURCES;
    } else if (p->some_node_has_room(p->ctx)) {
        r = PS_PENDING_WAITING_HEARTBEAT;
    } else {
        r = p->total_fits(p->ctx) ? PS_PENDING_FRAGMENTED : PS_PENDING_NO_FREE_RESOURCES;
    }
    info->reason = r;
}

bool ps_pending_node_fits(const struct ps_pending_job *job, const struct ps_resources *limits,
                          const char *const *tags, int tag_count, int64_t medium_bytes)
{
    return ps_resources_fit(job->shape, *limits) && ps_resources_fit(job->min_spare, *limits) &&
           (!job->disk_medium || medium_bytes >= job->disk_space) &&
           (!job->filter || ps_formula_eval(job->filter, tags, tag_count));
}

bool ps_pending_node_has_room(const struct ps_pending_job *job, const struct ps_resources *free_)
{
    return ps_resources_fit(job->shape, *free_) && ps_resources_fit(job->min_spare, *free_);
}

bool ps_pending_total_fits(const struct ps_resources *shape, const struct ps_resources *total,
                           const struct ps_resources *usage)
{
    return ps_resources_fit(*shape, ps_resources_sub(*total, *usage));
}

int ps_pending_limit_resource(const struct ps_sched_snapshot *snap, int element,
                              const struct ps_resources *shape)
{
    struct ps_resources need = ps_resources_add(ps_sched_usage(snap, element), *shape);
    struct ps_resources limits = ps_sched_limits(snap, element);
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (need.v[r] > limits.v[r])
            return r;
    return -1;
}

double ps_pending_satisfaction(const struct ps_tree_op *op)
{
    const struct ps_fs_element_output *fs = &op->dynamic.fs;
    return ps_sched_satisfaction_ratio(&fs->usage_share, &fs->fair_share.total,
                                       &fs->demand_share);
}
