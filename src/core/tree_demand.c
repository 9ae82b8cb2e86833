/* tree_demand.c — resource_demand and limited_resource_demand per element (tree_demand.h). */
#include "core/tree_demand.h"

#include "core/nodes.h"

#include <stdlib.h>
#include <string.h>

struct ps_resources ps_tree_op_effective_demand(const struct ps_tree_op *op)
{
    if (!op->apply_specified_resource_limits_to_demand)
        return op->demand;
    return ps_resources_max(op->usage, ps_resources_min(op->demand, op->resource_limits));
}

static struct ps_res_doubles to_doubles(const struct ps_resources *r)
{
    struct ps_res_doubles d;
    for (int i = 0; i < PS_RES_COUNT; i++)
        d.v[i] = r->v[i] >= PS_RES_INFINITE ? 0 : ps_res_get(r, i);
    return d;
}

/* d scaled by one factor in [0, 1] so that every resource fits limits (unlimited: no bound). */
static struct ps_res_doubles fit(struct ps_res_doubles d, const struct ps_resources *limits)
{
    double k = 1;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (limits->v[i] >= PS_RES_INFINITE || d.v[i] <= 0)
            continue;
        double l = ps_res_get(limits, i);
        if (l < d.v[i] * k)
            k = l / d.v[i];
    }
    for (int i = 0; i < PS_RES_COUNT; i++)
        d.v[i] *= k;
    return d;
}

static int pool_slot(const struct ps_pool *p, int pool_count)
{
    return p->is_root ? pool_count : p->index;
}

static int depth(const struct ps_pool *p)
{
    int n = 0;
    for (; p->parent; p = p->parent)
        n++;
    return n;
}

/* The promise of a child of a parent promised `parent` (tree_demand.h). */
static struct ps_share child_promise(struct ps_share parent, struct ps_share sg, double w,
                                     struct ps_share sg_sum, double w_sum,
                                     const struct ps_element_dynamic *d)
{
    struct ps_share rest = ps_share_max(ps_share_sub(parent, sg_sum), ps_share_fill(0.0));
    struct ps_share p = ps_share_add(sg, ps_share_scale(rest, w_sum > 0 ? w / w_sum : 0));
    return d->valid ? ps_share_min(p, d->fs.limits_share) : p;
}

/* Top-down over pools (order: deepest first, so walked backwards) and operations. */
static void promise(struct ps_pool_tree *tree, struct ps_tree_demands *out, const int *order,
                    struct ps_share *sg_sum, double *w_sum)
{
    int np = out->pool_count, no = out->op_count;
    for (int i = 0; i < np; i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        if (!p->dynamic.valid)
            continue;
        int s = pool_slot(p->parent, np);
        sg_sum[s] = ps_share_add(sg_sum[s], p->fs_pool.strong_guarantee_share);
        w_sum[s] += p->dynamic.fs.weight;
    }
    for (int i = 0; i < no; i++) {
        struct ps_tree_op *op = ps_pool_tree_operation_at(tree, i);
        if (op->running && op->dynamic.valid)
            w_sum[pool_slot(op->pool, np)] += op->dynamic.fs.weight;
    }
    out->pool_promised[np] = ps_share_fill(1.0);
    for (int k = np - 1; k >= 0; k--) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, order[k]);
        if (!p->dynamic.valid)
            continue;
        int s = pool_slot(p->parent, np);
        out->pool_promised[order[k]] =
            child_promise(out->pool_promised[s], p->fs_pool.strong_guarantee_share,
                          p->dynamic.fs.weight, sg_sum[s], w_sum[s], &p->dynamic);
    }
    for (int i = 0; i < no; i++) {
        struct ps_tree_op *op = ps_pool_tree_operation_at(tree, i);
        if (!op->running || !op->dynamic.valid)
            continue;
        int s = pool_slot(op->pool, np);
        out->op_promised[i] = child_promise(out->pool_promised[s], ps_share_fill(0.0),
                                            op->dynamic.fs.weight, sg_sum[s], w_sum[s], &op->dynamic);
    }
}

void ps_tree_demands_release(struct ps_tree_demands *d)
{
    free(d->pool_promised);
    free(d->op_promised);
    free(d->pool_demand);
    free(d->pool_limited);
    free(d->op_demand);
    free(d->op_limited);
    memset(d, 0, sizeof *d);
}

int ps_tree_demands_compute(struct ps_pool_tree *tree, struct ps_tree_demands *out)
{
    memset(out, 0, sizeof *out);
    int np = ps_pool_tree_pool_count(tree), no = ps_pool_tree_operation_count(tree);
    out->pool_count = np;
    out->op_count = no;
    out->total = ps_pool_tree_total_resources(tree);
    out->pool_demand = calloc((size_t)np + 1, sizeof *out->pool_demand);
    out->pool_limited = calloc((size_t)np + 1, sizeof *out->pool_limited);
    out->op_demand = calloc((size_t)no + 1, sizeof *out->op_demand);
    out->op_limited = calloc((size_t)no + 1, sizeof *out->op_limited);
    out->pool_promised = calloc((size_t)np + 1, sizeof *out->pool_promised);
    out->op_promised = calloc((size_t)no + 1, sizeof *out->op_promised);
    int *order = calloc((size_t)np + 1, sizeof *order);
    int *depths = calloc((size_t)np + 1, sizeof *depths);
    /* per parent slot: the children's guarantee shares and weights summed */
    struct ps_share *sg_sum = calloc((size_t)np + 1, sizeof *sg_sum);
    double *w_sum = calloc((size_t)np + 1, sizeof *w_sum);
    if (!out->pool_demand || !out->pool_limited || !out->op_demand || !out->op_limited || !order ||
        !depths || !out->pool_promised || !out->op_promised || !sg_sum || !w_sum) {
        free(order);
        free(depths);
        free(sg_sum);
        free(w_sum);
        ps_tree_demands_release(out);
        return PS_ENOMEM;
    }
    /* operations: their own demand, then up every ancestor */
    for (int i = 0; i < no; i++) {
        struct ps_tree_op *op = ps_pool_tree_operation_at(tree, i);
        if (!op->running)
            continue;
        struct ps_resources dem = ps_tree_op_effective_demand(op);
        out->op_demand[i] = to_doubles(&dem);
        out->op_limited[i] = op->dynamic.valid ? fit(out->op_demand[i], &op->dynamic.fs.resource_limits)
                                               : out->op_demand[i];
        for (struct ps_pool *p = op->pool; p; p = p->parent) {
            int s = pool_slot(p, np);
            for (int r = 0; r < PS_RES_COUNT; r++)
                out->pool_demand[s].v[r] += out->op_demand[i].v[r];
        }
        int s = pool_slot(op->pool, np);
        for (int r = 0; r < PS_RES_COUNT; r++)
            out->pool_limited[s].v[r] += out->op_limited[i].v[r];
    }
    /* pools bottom-up: fit own limits, then add to the parent */
    for (int i = 0; i < np; i++) {
        order[i] = i;
        depths[i] = depth(ps_pool_tree_pool_at(tree, i));
    }
    for (int i = 1; i < np; i++) {   /* insertion sort by depth, deepest first */
        int x = order[i], j = i;
        for (; j > 0 && depths[order[j - 1]] < depths[x]; j--)
            order[j] = order[j - 1];
        order[j] = x;
    }
    for (int k = 0; k < np; k++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, order[k]);
        int s = order[k];
        if (p->dynamic.valid)
            out->pool_limited[s] = fit(out->pool_limited[s], &p->dynamic.fs.resource_limits);
        int ps = pool_slot(p->parent, np);
        for (int r = 0; r < PS_RES_COUNT; r++)
            out->pool_limited[ps].v[r] += out->pool_limited[s].v[r];
    }
    struct ps_pool *root = ps_pool_tree_root(tree);
    if (root->dynamic.valid)
        out->pool_limited[np] = fit(out->pool_limited[np], &root->dynamic.fs.resource_limits);
    promise(tree, out, order, sg_sum, w_sum);
    free(order);
    free(depths);
    free(sg_sum);
    free(w_sum);
    return 0;
}
