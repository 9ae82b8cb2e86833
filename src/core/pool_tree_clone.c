/* pool_tree_clone.c — a scratch copy of a pool tree for dry runs (pool_tree.h,
 * ps_pool_tree_clone_state). The copy's config and explicit pools come from the caller (the
 * tree's own document, so that they go through the same setters and validation as a restart);
 * this file copies what a document does not hold: the nodes (borrowed, the copy never becomes
 * their tree), the operations with their scheduler fields, and the state the next fair share
 * update and starvation check read (integral volumes, previous update time, below-fair-share
 * times). */
#include <stdlib.h>
#include <string.h>

#include "core/pool_tree_impl.h"

static void opt_resources(const struct ps_resources *limits, struct ps_resources_opt *out)
{
    memset(out, 0, sizeof *out);
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if (limits->v[r] < PS_RES_INFINITE) {
            out->r.v[r] = limits->v[r];
            out->set |= 1u << r;
        }
    }
}

static int by_seq(const void *a, const void *b)
{
    const struct ps_tree_op *x = *(struct ps_tree_op *const *)a;
    const struct ps_tree_op *y = *(struct ps_tree_op *const *)b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int ps_pool_tree_clone_state(struct ps_pool_tree *dst, const struct ps_pool_tree *src,
                             struct ps_error *err)
{
    if (dst->node_count != 0 || dst->op_count != 0)
        return ps_error_set(err, PS_ESTATE, "clone: the copy must be fresh");
    if (src->node_count > 0) {
        dst->nodes = malloc((size_t)src->node_count * sizeof *dst->nodes);
        if (!dst->nodes)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        memcpy(dst->nodes, src->nodes, (size_t)src->node_count * sizeof *dst->nodes);
        dst->node_capacity = dst->node_count = src->node_count;
    }
    dst->total = src->total;
    dst->max_limits = src->max_limits;
    ps_tree_invalidate_filter_cache(dst);
    dst->has_connect_time = src->has_connect_time;
    dst->connected_at_ms = src->connected_at_ms;
    dst->has_previous_update = src->has_previous_update;
    dst->previous_update_ms = src->previous_update_ms;

    /* registration order, so that pending operations queue as they do in src */
    struct ps_tree_op **ops = malloc((size_t)(src->op_count > 0 ? src->op_count : 1) * sizeof *ops);
    if (!ops)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    memcpy(ops, src->ops, (size_t)src->op_count * sizeof *ops);
    qsort(ops, (size_t)src->op_count, sizeof *ops, by_seq);
    int rc = 0;
    for (int i = 0; rc == 0 && i < src->op_count; i++) {
        const struct ps_tree_op *o = ops[i];
        struct ps_tree_op_settings s;
        memset(&s, 0, sizeof s);
        s.pool = o->pool->name;
        s.weight.set = o->weight_specified;
        s.weight.value = o->weight;
        s.max_share_ratio.set = true;
        s.max_share_ratio.value = o->max_share_ratio;
        opt_resources(&o->resource_limits, &s.resource_limits);
        s.scheduling_tag_filter = o->scheduling_tag_filter;
        s.is_gang = o->is_gang;
        s.apply_specified_resource_limits_to_demand = o->apply_specified_resource_limits_to_demand;
        s.fair_share_starvation_timeout_ms = o->fair_share_starvation_timeout_ms;
        s.fair_share_starvation_tolerance = o->fair_share_starvation_tolerance;
        s.non_preemptible_resource_usage_threshold = o->non_preemptible_resource_usage_threshold;
        s.max_unpreemptible_allocation_count = o->max_unpreemptible_allocation_count;
        s.strong_guarantee_resources = o->strong_guarantee_resources;
        struct ps_tree_op *c = NULL;
        rc = ps_pool_tree_add_operation(dst, o->id, o->user, o->start_time_ms, &s, &c, err);
        if (rc != 0) {
            ps_error_prefix(err, "clone: operation %s", o->id);
            break;
        }
        c->suspended = o->suspended;
        c->pending_job_count = o->pending_job_count;
        c->demand = o->demand;
        c->usage = o->usage;
        c->dynamic.starvation = o->dynamic.starvation;
        c->dynamic.below_fair_share_since_ms = o->dynamic.below_fair_share_since_ms;
        c->historic_usage = o->historic_usage;
    }
    free(ops);
    if (rc != 0)
        return rc;
    for (int i = -1; i < src->pool_count; i++) {
        const struct ps_pool *p = i < 0 ? src->root : src->pools[i];
        struct ps_pool *c = i < 0 ? dst->root : ps_pool_tree_find_pool(dst, p->name);
        if (!c)
            continue;
        c->accumulated_volume = p->accumulated_volume;
        c->historic_usage = p->historic_usage;
        c->last_integral_share_ratio = p->last_integral_share_ratio;
        c->usage = p->usage;
        c->dynamic.starvation = p->dynamic.starvation;
        c->dynamic.below_fair_share_since_ms = p->dynamic.below_fair_share_since_ms;
    }
    dst->generation++;
    return 0;
}

void ps_pool_tree_clone_free(struct ps_pool_tree *tree)
{
    if (!tree)
        return;
    /* the nodes are borrowed: their tree is the original */
    free(tree->nodes);
    tree->nodes = NULL;
    tree->node_count = tree->node_capacity = 0;
    ps_pool_tree_free(tree);
}

void ps_pool_tree_reclaim_nodes(struct ps_pool_tree *tree)
{
    for (int i = 0; i < tree->node_count; i++)
        tree->nodes[i]->tree = tree;
}
