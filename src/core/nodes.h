/* nodes.h — exec nodes as the pool trees see them: tags, resource limits, tree membership,
 * and the resource limits behind scheduling_tag_filter.
 *
 * A node belongs to at most one tree: the one whose nodes_filter it matches. Registering
 * through the strategy (strategy.h) refuses a node that matches two trees, naming both, and
 * accepts a node that matches none: it is known (it may match a tree created later or a
 * changed nodes_filter) but schedules nothing and counts in no tree's total resources.
 *
 * Per tree: total resources = the sum of its nodes' limits (saturating at PS_RES_INFINITE: a
 * node with an unlimited resource makes the total unlimited); the filter limits of an element
 * with a scheduling_tag_filter F = the sum of the limits of the tree's nodes that satisfy F
 * (upstream ComputeSchedulingTagFilterResourceLimits; the tree's nodes already satisfy
 * nodes_filter, so this is nodes_filter & F). Results are cached per distinct filter text and
 * recomputed after any node change. An element without a filter has unlimited filter limits.
 */
#ifndef PS_CORE_NODES_H
#define PS_CORE_NODES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/formula.h"
#include "core/pool_tree.h"
#include "core/resources.h"

struct ps_node {
    char *id;                          /* owned */
    char **tags;                       /* owned */
    int tag_count;
    struct ps_resources resource_limits;
    struct ps_pool_tree *tree;         /* the tree it belongs to, NULL when none */
    int tagset;                        /* the strategy's id of its tag set (equal tags, in
                                          order: equal ids; ps_strategy_tagset_count); -1 for
                                          a node registered through no strategy */
};

/* A new node (copies id and tags). Returns NULL with err set on an empty id, a negative
 * resource, or out of memory. */
struct ps_node *ps_node_new(const char *id, const char *const *tags, int tag_count,
                            const struct ps_resources *resource_limits, struct ps_error *err);
void ps_node_free(struct ps_node *node);   /* NULL is a no-op */

/* True iff the node's tags satisfy the tree's nodes_filter. */
bool ps_pool_tree_node_matches(const struct ps_pool_tree *tree, const struct ps_node *node);

/* Low-level membership, used by the strategy (which checks that trees do not overlap);
 * standalone trees may use it directly. add refuses (PS_EINVAL) a node that does not match
 * nodes_filter and (PS_EEXIST) one already in a tree; it sets node->tree. The tree borrows the
 * node: it must outlive its membership. remove is a no-op for a node of another tree. */
int ps_pool_tree_add_node(struct ps_pool_tree *tree, struct ps_node *node, struct ps_error *err);
void ps_pool_tree_remove_node(struct ps_pool_tree *tree, struct ps_node *node);
/* Call after changing a member node's resource_limits in place. */
void ps_pool_tree_nodes_changed(struct ps_pool_tree *tree);

int ps_pool_tree_node_count(const struct ps_pool_tree *tree);
const struct ps_node *ps_pool_tree_node_at(const struct ps_pool_tree *tree, int index);

/* The sum of the resource limits of the tree's nodes. */
struct ps_resources ps_pool_tree_total_resources(const struct ps_pool_tree *tree);

/* The sum of the limits of the tree's nodes satisfying filter (cached per filter text);
 * PS_RES_INFINITE in every component for NULL or the empty filter. */
struct ps_resources ps_pool_tree_filter_limits(struct ps_pool_tree *tree,
                                               const struct ps_formula *filter);

/* The number of the tree's nodes satisfying filter (all nodes for NULL); cached with the
 * limits. */
int ps_pool_tree_filter_node_count(struct ps_pool_tree *tree, const struct ps_formula *filter);

/* The componentwise maximum of the limits of the tree's nodes satisfying filter (every node
 * for NULL or the empty filter) into *max, zero when there is none; returns their number.
 * Cached with the limits, so asking again costs no scan until a node changes. */
int ps_pool_tree_filter_max_limits(struct ps_pool_tree *tree, const struct ps_formula *filter,
                                   struct ps_resources *max);

/* Upstream treats filter limits as unlimited during node_reconnection_timeout after the
 * scheduler (re)connects, while nodes are still coming back. The service calls this with its
 * connection time; until then (and in the simulator, which never calls it) limits are real. */
void ps_pool_tree_set_connect_time(struct ps_pool_tree *tree, int64_t connected_at_ms);

#endif
