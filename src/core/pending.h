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
 * PS_PENDING_NO_NODE_FITS              "no_node_fits"                   no node of pool tree "T" is large enough for the next job
 * PS_PENDING_NO_FREE_RESOURCES         "no_free_resources"              no node of pool tree "T" has free resources for the next job
 * PS_PENDING_WAITING_HEARTBEAT         "waiting_for_heartbeat"          waiting for a node heartbeat
 *
 * ps_pool_tree_pending_reason decides the reasons the tree model can decide, in this order:
 * suspended, max_running_operation_count (the pool that blocks the operation), no nodes, a
 * filter matching no node (the operation's, then its pools' from the bottom up), the
 * operation's resource_limits reached, a pool's resource_limits reached (lowest pool first),
 * waiting for the first fair share update. The remaining reasons are the scheduler's to decide
 * (it knows fair shares and nodes' free resources); it formats them with the same function.
 * The scheduler's reasons, for an operation the tree model does not explain (the simulator
 * decides them so, docs/simulate.md):
 *   usage_at_fair_share    its usage reached its fair share: others come first;
 *   no_node_fits           no node it may use (filters) is large enough for its next job (and
 *                          has a medium that holds its disk request);
 *   resources_fragmented   below fair share, the last heartbeat that looked at it found no room
 *                          on its node, yet the free resources of the tree's nodes together
 *                          would hold the job;
 *   no_free_resources      below fair share and the tree's nodes together have no room for the
 *                          job: it waits for running jobs to end (or for preemption);
 *   waiting_for_heartbeat  below fair share, room exists, and no heartbeat has looked at it
 *                          since its last allocation.
 */
#ifndef PS_CORE_PENDING_H
#define PS_CORE_PENDING_H

#include <stddef.h>
#include <stdint.h>

#include "core/formula.h"
#include "core/operation.h"
#include "core/pool_tree.h"
#include "core/schedule.h"

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
    PS_PENDING_NO_NODE_FITS,
    PS_PENDING_NO_FREE_RESOURCES,
    PS_PENDING_WAITING_HEARTBEAT,
    PS_PENDING_REASON_COUNT
};

struct ps_pending_info {
    enum ps_pending_reason reason;
    const char *pool;       /* the pool concerned, or NULL; borrowed from the tree */
    const char *filter;     /* NO_MATCHING_NODE: the filter text; borrowed */
    const char *tree;       /* NO_NODES, NO_NODE_FITS, NO_FREE_RESOURCES: the tree's name;
                               borrowed */
    int64_t count, limit;   /* MAX_RUNNING_OPERATIONS: running operations and the limit */
    int resource;           /* *_RESOURCE_LIMITS: the first resource at its limit, else -1 */
};

/* The stable identifier of a reason ("max_running_operation_count", ...); "unknown" outside
 * the enum. */
const char *ps_pending_reason_id(enum ps_pending_reason reason);

/* Writes the user-facing text into buf (always NUL-terminated); returns the length it needed,
 * as snprintf. */
int ps_pending_format(const struct ps_pending_info *info, char *buf, size_t size);

/* Whether the text of a reason is the same for every info of that reason (it names no pool,
 * filter, tree, count or resource): a host that kept the text may skip formatting it again. */
bool ps_pending_text_fixed(enum ps_pending_reason reason);

/* The reason decidable from the tree model for op (see above), or PS_PENDING_NONE. Pool usage
 * is the one of the last ps_pool_tree_update_pool_usage (or fair share build). The pointers
 * in *out stay valid until the tree changes. */
void ps_pool_tree_pending_reason(struct ps_pool_tree *tree, const struct ps_tree_op *op,
                                 struct ps_pending_info *out);

/* The scheduler's view, for an operation with pending jobs the tree model found no reason for:
 * what its host measures (the simulator and the service answer alike). The callbacks are asked
 * only when the decision needs them, in this order. */
struct ps_pending_probe {
    void *ctx;
    bool in_update;                     /* the tree's last fair share update included it */
    /* some node of the tree that its filters (and its pools') allow is large enough for its
     * next job and min_spare */
    bool (*fits_some_node)(void *ctx);
    int sched_reason;                   /* enum ps_sched_reason of the last heartbeat that looked
                                           at it (0 = none) */
    const char *limit_pool;             /* PS_SCHED_LIMITS: the pool at its limits, NULL: the
                                           operation's own limits */
    int limit_resource;                 /* PS_SCHED_LIMITS: the resource, -1: unknown */
    double satisfaction;                /* its satisfaction ratio of the last update */
    bool (*total_fits)(void *ctx);      /* the tree's free resources together hold the job */
    bool (*some_node_has_room)(void *ctx);   /* one node has room for it (and min_spare) */
};

/* Decides, in this order: waiting_for_fair_share_update; no_node_fits; operation/pool resource
 * limits (the last heartbeat stopped at limits); usage_at_fair_share (satisfaction >= 1);
 * resources_fragmented / no_free_resources when the last heartbeat found no room on its node
 * (by whether the tree's free resources together hold the job); waiting_for_heartbeat when
 * some node has room; else fragmented / no free resources. Fills info->reason, ->pool,
 * ->resource; info->tree is the caller's. */
void ps_pending_scheduler_reason(const struct ps_pending_probe *probe, struct ps_pending_info *info);

/* The pieces of a probe both hosts measure the same way (the service over its registered
 * nodes, the simulator over its node groups and nodes). */

/* The next job of an operation, as the probes measure it. */
struct ps_pending_job {
    struct ps_resources shape;         /* its resources */
    struct ps_resources min_spare;     /* the tree's min_spare_allocation_resources_on_node */
    const struct ps_formula *filter;   /* its effective filter, NULL: any node */
    const char *disk_medium;           /* its disk request (core/sched_inputs.h), NULL: none */
    int64_t disk_space;
};

/* A node of limits, tags and medium_bytes (its disk space on job->disk_medium, -1 when it has
 * no such medium) is large enough for the job: shape and min_spare fit its limits, the filter
 * matches its tags and the medium holds the disk request. */
bool ps_pending_node_fits(const struct ps_pending_job *job, const struct ps_resources *limits,
                          const char *const *tags, int tag_count, int64_t medium_bytes);

/* A node with these free resources has room for the job and min_spare (its disk is not
 * looked at: ps_pending_node_fits already said some node's medium can hold it). */
bool ps_pending_node_has_room(const struct ps_pending_job *job, const struct ps_resources *free_);

/* The tree's free resources together (total - usage) hold the job. */
bool ps_pending_total_fits(const struct ps_resources *shape, const struct ps_resources *total,
                           const struct ps_resources *usage);

/* PS_SCHED_LIMITS at element: the first resource at which the element's usage plus the job's
 * shape exceeds its limits, -1 when none does (what probe.limit_resource reports). */
int ps_pending_limit_resource(const struct ps_sched_snapshot *snap, int element,
                              const struct ps_resources *shape);

/* The operation's satisfaction ratio of its last fair share update (probe.satisfaction). */
double ps_pending_satisfaction(const struct ps_tree_op *op);

/* Recomputes every pool's usage as the sum of its subtree's running operations' usage. */
void ps_pool_tree_update_pool_usage(struct ps_pool_tree *tree);

#endif
