/* tree_sched.h — the scheduler loop of one pool tree: fair share update, starvation check,
 * scheduling snapshot and node heartbeats (regular and preemptive stages) in one place, so the
 * service and the simulator drive the engine the same way.
 *
 * Per tree, the caller keeps one struct ps_tree_sched and runs:
 *
 *   every fair_share_update_period:
 *       ps_tree_sched_update(ts, tree, now_ms, op_fn, ctx, &changed, err)
 *     = build fs (tree_fs.h) -> ps_fs_update_run -> apply -> starvation build/update/apply ->
 *       preemptible lists updated with the new fair shares -> a new scheduling snapshot whose
 *       per-operation state (allocation shape, pending count, runnable, filter) op_fn fills.
 *   on each node heartbeat:
 *       ps_tree_sched_heartbeat(ts, node, allocs, n, &node_last_preempt_ms, now_ms, ...)
 *     = the regular stage, then (when the backoff has passed and something starves) the
 *       aggressively preemptive and preemptive stages; allocations to start and victims out.
 *   between updates, when an operation leaves the tree or its membership changes (pool moved,
 *   filter changed): ps_tree_sched_detach(ts, element) so the snapshot never reads it again;
 *   it comes back at the next update with its new element index.
 *
 * Element indices are those of the last build (ts->fs): ts->user[i] is the operation's
 * user_data at the build (NULL for pools and detached operations), so a heartbeat's allocation
 * for element i maps back to the caller's operation.
 *
 * Pure and deterministic as the rest of the engine: time comes in as now_ms. Not thread-safe.
 */
#ifndef PS_CORE_TREE_SCHED_H
#define PS_CORE_TREE_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/fair_share.h"
#include "core/operation.h"
#include "core/pool_tree.h"
#include "core/preempt.h"
#include "core/preemptible.h"
#include "core/schedule.h"
#include "core/starvation.h"
#include "core/tree_fs.h"

/* Fills the scheduling state of one running operation of the build (element `element`):
 * *sched (allocation shape, pending count, runnable; filter is preset to op->filter) and
 * *preempt (preset: no lists, not graceful, -1). Returns the operation's preemptible lists in
 * this tree (updated by the driver with the new fair share), or NULL. */
typedef struct ps_preemptible *ps_tree_sched_op_fn(void *ctx, struct ps_tree_op *op, int element,
                                                   struct ps_sched_operation *sched,
                                                   struct ps_preempt_operation *preempt);

struct ps_tree_sched {
    struct ps_tree_fs fs;                      /* the last build (element indices) */
    struct ps_fs_update *update;
    struct ps_starvation_element *starvation;  /* per element, results of the last check */
    struct ps_sched_operation *sched_ops;      /* per element */
    struct ps_preempt_operation *preempt_ops;  /* per element */
    uint8_t *subtree_eligible;                 /* per element: ps_preempt_subtree_eligible of
                                                  the last check and snapshot */
    void **user;                               /* per element: operation user_data or NULL */
    struct ps_formula **filters;               /* conjunctions of operation and pool filters
                                                  the snapshot borrows (effective filters) */
    int filter_count, filter_capacity;
    int capacity;
    struct ps_sched_snapshot *snap;            /* NULL before the first update */
    struct ps_sched_options options;
    struct ps_preempt_config preempt_config;
    struct ps_preemptible_config preemptible_config;
    uint64_t generation;                       /* bumped by every update */
    int64_t last_update_ms;                    /* INT64_MIN before the first update */
    bool any_starving;                         /* some element starves after the last check */
    int alert_count;                           /* alerts of the last update */
};

int ps_tree_sched_init(struct ps_tree_sched *ts, struct ps_error *err);
void ps_tree_sched_release(struct ps_tree_sched *ts);

/* One fair share update and starvation check of tree at now_ms, and a new snapshot (see the
 * top). *starvation_changed (may be NULL) receives how many elements changed their starvation
 * status. On error the previous snapshot stays. Errors: from the engine (PS_EINVAL naming the
 * element), PS_ENOMEM. */
int ps_tree_sched_update(struct ps_tree_sched *ts, struct ps_pool_tree *tree, int64_t now_ms,
                         ps_tree_sched_op_fn *op_fn, void *ctx, int *starvation_changed,
                         struct ps_error *err);

/* Makes element (an operation of the last build) not runnable, without a filter, and forgets its
 * user_data. A no-op for an invalid index or without a snapshot. */
void ps_tree_sched_detach(struct ps_tree_sched *ts, int element);

/* Runs the regular stage for node and, when ps_preempt_backoff_passed(*last_preempt_ms) and
 * something starves, the preemptive stages (then *last_preempt_ms = now_ms). allocs are the
 * allocations running on the node whose operations are in the snapshot. sched receives the
 * allocations to start (element indices), preempt the victims (cleared first).
 * Without a snapshot nothing is scheduled. Errors: PS_EINVAL, PS_ENOMEM. */
int ps_tree_sched_heartbeat(struct ps_tree_sched *ts, const struct ps_sched_node *node,
                            const struct ps_node_allocation *allocs, int alloc_count,
                            int64_t *last_preempt_ms, int64_t now_ms,
                            struct ps_sched_result *sched, struct ps_preempt_result *preempt,
                            struct ps_error *err);

#endif
