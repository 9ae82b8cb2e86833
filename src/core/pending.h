/* pending.h — why an operation does not get resources: a fixed set of reasons with the text
 * users read (semantics.md 8: unclear pending reasons are users' first complaint).
 *
 * reason                               id (stable, for events/JSON)     text
 * PS_PENDING_NONE                      "none"                           "" (nothing known)
 * PS_PENDING_SUSPENDED                 "suspended"                      operation suspended
 * PS_PENDING_MAX_RUNNING_OPERATIONS    "max_running_operation_count"    max_running_operation_count of pool "X" reached (N of N)
 * PS_PENDING_NO_NODES                  "no_nodes"                       pool tree "T" has no nodes
 * PS_PENDING_NO_MATCHING_NODE          "no_matching_node"               no node matches scheduling_tag_filter "F" [of pool "X"]
 * PS_PENDING_OPERATION_RESOURCE_LIMITS "operation_resource_limits"      resource_limits of the operation reached (cpu)
 * PS_PENDING_POOL_RESOURCE_LIMITS      "pool_resource_limits"           resource_limits of pool "Z" reached (cpu)
 * PS_PENDING_WAITING_FAIR_SHARE_UPDATE "waiting_for_fair_share_update"  waiting for fair share update
 * PS_PENDING_USAGE_AT_FAIR_SHARE       "usage_at_fair_share"            usage at fair share
 * PS_PENDING_FRAGMENTED                "resources_fragmented"           node resources fragmented
 *
 * ps_pool_tree_pending_reason decides the reasons the tree model can decide, in this order:
 * suspended, max_running_operation_count (the pool that blocks the operation), no nodes, a
 * filter matching no node (the operation's, then its pools' from the bottom up), the
 * operation's resource_limits reached, a pool's resource_limits reached (lowest pool first),
 * waiting for the first fair share update. The last two reasons are the scheduler's to decide
 * (it knows fair shares and nodes' free resources); it formats them with the same function.
 */
#ifndef PS_CORE_PENDING_H
#define PS_CORE_PENDING_H

#include <stddef.h>
#include <stdint.h>

#include "core/operation.h"
#include "core/pool_tree.h"

enum ps_pending_reason {
    PS_PENDING_NONE = 0,
    PS_PENDING_SUSPENDED,
    PS_PENDING_MAX_RUNNING_OPERATIONS,
    PS_PENDING_NO_NODES,
    PS_PENDING_NO_MATCHING_NODE,
    PS_PENDING_OPERATION_RESOURCE_LIMITS,
    PS_PENDING_POOL_RESOURCE_LIMITS,
    PS_PENDING_WAITING_FAIR_SHARE_UPDATE,
    PS_PENDING_USAGE_AT_FAIR_SHARE,
    PS_PENDING_FRAGMENTED,
    PS_PENDING_REASON_COUNT
};

struct ps_pending_info {
    enum ps_pending_reason reason;
    const char *pool;       /* the pool concerned, or NULL; borrowed from the tree */
    const char *filter;     /* NO_MATCHING_NODE: the filter text; borrowed */
    const char *tree;       /* NO_NODES: the tree's name; borrowed */
    int64_t count, limit;   /* MAX_RUNNING_OPERATIONS: running operations and the limit */
    int resource;           /* *_RESOURCE_LIMITS: the first resource at its limit, else -1 */
};

/* The stable identifier of a reason ("max_running_operation_count", ...); "unknown" outside
 * the enum. */
const char *ps_pending_reason_id(enum ps_pending_reason reason);

/* Writes the user-facing text into buf (always NUL-terminated); returns the length it needed,
 * as snprintf. */
int ps_pending_format(const struct ps_pending_info *info, char *buf, size_t size);

/* The reason decidable from the tree model for op (see above), or PS_PENDING_NONE. Pool usage
 * is the one of the last ps_pool_tree_update_pool_usage (or fair share build). The pointers
 * in *out stay valid until the tree changes. */
void ps_pool_tree_pending_reason(struct ps_pool_tree *tree, const struct ps_tree_op *op,
                                 struct ps_pending_info *out);

/* Recomputes every pool's usage as the sum of its subtree's running operations' usage. */
void ps_pool_tree_update_pool_usage(struct ps_pool_tree *tree);

#endif
