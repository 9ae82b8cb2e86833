/* tree_demand.h — demands as the scheduler's orchid shows them (upstream's resource_demand,
 * limited_resource_demand), computed from a tree's operations and its last fair share update.
 *
 * resource_demand of an operation is its effective demand (ps_tree_op_effective_demand: with
 * apply_specified_resource_limits_to_demand, max(usage, min(demand, resource_limits)) per
 * resource); of a pool, the sum over the running operations below it.
 * limited_resource_demand (upstream: total resource limits x LimitedDemandShare): an
 * operation's demand, and a pool's sum of its children's limited demands, scaled down as a
 * vector (every resource by one factor) until it fits the element's effective resource limits
 * (the fair share output's resource_limits). Pending operations count for neither.
 *
 * promised fair share (upstream's promised_fair_share_resources, promised_dominant_fair_share):
 * the share each element would get if every element wanted without limit, from the last
 * update's guarantees and weights, top-down: the root is promised the whole cluster; each
 * child of an element promised P gets its strong guarantee share, then what P leaves over the
 * children's guarantees is split among all children (pools with no operations too) by weight;
 * each child's promise is capped by its limits share. So a pool whose guarantee is the whole
 * cluster is promised all of it, and its subpools split it by weight even while empty.
 */
#ifndef PS_CORE_TREE_DEMAND_H
#define PS_CORE_TREE_DEMAND_H

#include "core/operation.h"
#include "core/pool_tree.h"

/* Per resource, in the units of ps_res_get (cores for cpu). */
struct ps_res_doubles {
    double v[PS_RES_COUNT];
};

/* Indexed by ps_pool_tree_pool_at's index; the root at index pool_count; operations by
 * ps_pool_tree_operation_at's index. */
struct ps_tree_demands {
    int pool_count, op_count;
    struct ps_res_doubles *pool_demand, *pool_limited;
    struct ps_res_doubles *op_demand, *op_limited;
    struct ps_share *pool_promised, *op_promised;
    struct ps_resources total;          /* the tree's total resources */
};

/* Fills out (release with ps_tree_demands_release). 0 or PS_ENOMEM (out released). */
int ps_tree_demands_compute(struct ps_pool_tree *tree, struct ps_tree_demands *out);
void ps_tree_demands_release(struct ps_tree_demands *d);

#endif
