/* operation.h — operations inside one pool tree: pool resolution, ephemeral pools, and the
 * operation-count limits at every level up to the root.
 *
 * Pool resolution (upstream CreatePoolName / GetOrCreatePool / ValidatePoolLimits /
 * ValidateOperationPoolsCanBeUsed; semantics.md 2.1 and 2.3), for an operation of user U:
 *   1. the pool name is the per-tree pool, else spec.pool, else U;
 *   2. "<Root>" puts the operation directly in the root, refused when the tree's
 *      forbid_immediate_operations_in_root is true;
 *   3. an existing pool P with create_ephemeral_subpools puts it in the ephemeral child
 *      `P$U` (created with P's ephemeral_subpool_config when absent);
 *   4. an existing pool P with forbid_immediate_operations refuses it; otherwise it goes to P;
 *   5. a pool that does not exist is created as an ephemeral pool under the tree's default
 *      parent for U (ps_pool_tree_default_parent_for: U's pool of the user-to-default-pool map
 *      when the tree has use_user_default_parent_pool_map, user_pools.h; else
 *      default_parent_pool), at most max_ephemeral_pools_per_user such pools per user; its
 *      config is that parent's ephemeral_subpool_config if any.
 *   The user must be allowed by the acl of every explicit pool on the path (pool_config.h).
 *
 * Count limits (semantics.md 2.1):
 *   - at start: if the pool (or, for a pool still to be created, its parent) or any ancestor
 *     up to the root has operation_count >= max_operation_count, the start is refused with
 *     PS_ELIMIT naming the pool, the limit and the tree;
 *   - running: the operation runs unless the pool or an ancestor has running_operation_count
 *     >= max_running_operation_count, in which case it stays pending and pending_by names the
 *     lowest such pool; in a pool with lightweight operations (ps_pool_lightweight_enabled) it
 *     always runs, counted in lightweight_running_operation_count instead;
 *   - when a running operation leaves (or a limit is raised, or a pool moves), pending
 *     operations are re-checked in start order (start_time_ms, then registration order) and
 *     started while
 *     room exists.
 * Only running operations take part in fair share updates (tree_fs.h); pending ones are
 * disabled upstream too.
 */
#ifndef PS_CORE_OPERATION_H
#define PS_CORE_OPERATION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/attr.h"
#include "core/error.h"
#include "core/formula.h"
#include "core/pool_tree.h"
#include "core/resources.h"

/* The per-tree inputs of an operation: spec-level values overridden by
 * scheduling_options_per_pool_tree (op_spec.h builds this). Strings are borrowed for the
 * duration of the call. */
struct ps_tree_op_settings {
    const char *pool;                        /* NULL: the user name */
    struct ps_opt_double weight;
    struct ps_opt_double max_share_ratio;
    struct ps_resources_opt resource_limits;
    const char *scheduling_tag_filter;       /* NULL or "": none */
    bool is_gang;
    bool apply_specified_resource_limits_to_demand;
    struct ps_opt_int fair_share_starvation_timeout_ms;
    struct ps_opt_double fair_share_starvation_tolerance;
    struct ps_resources_opt non_preemptible_resource_usage_threshold;
    struct ps_opt_int max_unpreemptible_allocation_count;
    struct ps_resources_opt strong_guarantee_resources;   /* the spec's (op_spec.h) */
};

/* An operation's membership in one tree. Fields are read-only for callers except those marked
 * "scheduler", which the scheduler loop keeps up to date. The fields every fair share build
 * reads come first, in three cache lines: operations are many and scattered in memory. */
struct ps_tree_op {
    char *id;                                /* owned */
    struct ps_pool *pool;                    /* the pool it is attached to */
    int64_t start_time_ms;
    bool running;                            /* running in its pool, else pending */
    bool lightweight;                        /* running and counted as lightweight (pool_tree.h) */
    bool weight_specified;
    bool is_gang;
    bool apply_specified_resource_limits_to_demand;
    bool suspended;                          /* scheduler */
    int fs_index;                            /* element index in the last build, -1 when none */
    double weight;                           /* effective: specified or 1 */
    double max_share_ratio;                  /* effective: specified or 1 */
    struct ps_formula *filter;               /* parsed scheduling_tag_filter, NULL when none */
    int64_t pending_job_count;               /* scheduler */
    struct ps_resources demand;              /* scheduler */
    struct ps_resources usage;               /* scheduler */
    struct ps_resources resource_limits;     /* PS_RES_INFINITE where unset */

    char *user;                              /* owned */
    struct ps_pool_tree *tree;
    struct ps_pool *pending_by;              /* when pending: the lowest pool at its limit */
    char *scheduling_tag_filter;             /* owned, "" when none */
    struct ps_opt_int fair_share_starvation_timeout_ms;
    struct ps_opt_double fair_share_starvation_tolerance;
    struct ps_resources_opt non_preemptible_resource_usage_threshold;
    struct ps_opt_int max_unpreemptible_allocation_count;  /* caps the threshold's user_slots */
    struct ps_resources_opt strong_guarantee_resources;    /* the spec's; only the parent's
                                                              inference reads it (fair_share.h) */
    int64_t min_needed_resources_unsatisfied_count[PS_RES_COUNT];  /* scheduler: heartbeats whose
                                             node had too little of the resource for its next
                                             allocation (upstream's orchid counter) */
    /* The stuck check (upstream's CheckIsOperationStuck; server/op_sanity.c): */
    int64_t last_schedule_success_ms;        /* scheduler: its last allocation started, 0: none */
    int64_t deactivation_count;              /* scheduler: heartbeats that passed it over, a node
                                                too small for its next allocation
                                                (min_needed_resources_unsatisfied) or its start
                                                refused (schedule_allocation_failed) */
    int64_t deactivation_count_at_non_starving;   /* scheduler: deactivation_count when an
                                                update last found it not starving */
    void *user_data;                         /* opaque to the tree (the strategy's operation) */
    uint64_t state_version;                  /* host: changes with its op_state answer
                                                (ps_tree_host.op_state_versioned) */

    struct ps_element_dynamic dynamic;
    struct ps_historic_usage historic_usage;  /* its pool infers weights from it */
    int scheduling_index;                    /* scheduler: ps_sched_scheduling_order at the
                                                last update, -1 when not active */
    bool fifo_limited;                       /* scheduler: held back by
                                                max_schedulable_element_count_in_fifo_pool */
    bool high_priority;                      /* scheduler: below its promised guarantee share
                                                with enable_guarantee_priority_scheduling */
    struct ps_share promised_guarantee_share;   /* scheduler: of the nearest ancestor with
                                                compute_promised_guarantee_fair_share */
    int64_t seq;                             /* private: registration order */
    int index;                               /* private: position in the tree's array */
};

/* The demand the fair share sees: op->demand, or with apply_specified_resource_limits_to_demand
 * max(usage, min(demand, resource_limits)) per resource (tree_demand.c). */
struct ps_resources ps_tree_op_effective_demand(const struct ps_tree_op *op);

/* Checks that an operation could start in this tree now (pool resolution, name rules, acl,
 * count limits, ephemeral pool limit) without changing anything. Returns 0 or the error the
 * start would give. */
int ps_pool_tree_check_operation(const struct ps_pool_tree *tree, const char *id, const char *user,
                                 const struct ps_tree_op_settings *settings, struct ps_error *err);

/* Starts an operation in this tree: resolves and maybe creates its pool, counts it up to the
 * root, and makes it running or pending. *out (may be NULL) receives the membership.
 * Errors: those of ps_pool_tree_check_operation, PS_EEXIST for a duplicate id, PS_ENOMEM. */
int ps_pool_tree_add_operation(struct ps_pool_tree *tree, const char *id, const char *user,
                               int64_t start_time_ms, const struct ps_tree_op_settings *settings,
                               struct ps_tree_op **out, struct ps_error *err);

/* How an active operation was before a restart: its pool (as pool_per_tree answered; NULL:
 * resolve the spec's pool as at start) and whether it was running. */
struct ps_tree_op_restore {
    const char *pool;
    bool running;
};

/* Restores an operation after a restart: into restore->pool (an explicit pool as it is, even
 * with create_ephemeral_subpools; an ephemeral pool is created again), running or pending as
 * restore says, without the acl and count checks of a start (it was admitted then). A pending
 * one is started by the next ps_pool_tree_run_pending that finds room. Errors: pool
 * resolution, PS_EEXIST, PS_ENOMEM. */
int ps_pool_tree_restore_operation(struct ps_pool_tree *tree, const char *id, const char *user,
                                   int64_t start_time_ms, const struct ps_tree_op_settings *settings,
                                   const struct ps_tree_op_restore *restore,
                                   struct ps_tree_op **out, struct ps_error *err);

/* Removes a finished operation: uncounts it, starts pending operations that now fit (see
 * ps_pool_tree_last_started) and removes ephemeral pools left empty. PS_ENOENT when absent. */
int ps_pool_tree_remove_operation(struct ps_pool_tree *tree, const char *id, struct ps_error *err);

/* Moves an operation to another pool (update_op_parameters). The new pool is resolved as at
 * start; max_operation_count is checked only for the pools that are not already ancestors of
 * the operation (upstream). The operation may become pending or running. */
int ps_pool_tree_change_operation_pool(struct ps_pool_tree *tree, const char *id, const char *pool,
                                       struct ps_error *err);

/* Checks ps_pool_tree_change_operation_pool without changing anything. */
int ps_pool_tree_check_operation_pool(const struct ps_pool_tree *tree, const char *id,
                                      const char *pool, struct ps_error *err);

/* Replaces weight, max_share_ratio, resource_limits, scheduling_tag_filter, gang flag and the
 * preemption overrides (settings->pool is ignored). On error nothing changed. */
int ps_pool_tree_update_operation(struct ps_pool_tree *tree, const char *id,
                                  const struct ps_tree_op_settings *settings, struct ps_error *err);

struct ps_tree_op *ps_pool_tree_find_operation(const struct ps_pool_tree *tree, const char *id);

/* The filter the scheduler applies to op: its own scheduling_tag_filter AND the filters of every
 * pool above it (a pool's scheduling_tag_filter restricts all operations of its subtree). When at
 * most one of them has a filter, *filter borrows it (NULL: none) and *owned is NULL; otherwise
 * *owned receives their conjunction, which *filter points to and the caller frees with
 * ps_formula_free once nothing borrows it. Errors: PS_ENOMEM, PS_EINVAL (the conjunction is
 * longer than a formula may be). */
int ps_tree_op_effective_filter(const struct ps_tree_op *op, const struct ps_formula **filter,
                                struct ps_formula **owned, struct ps_error *err);
/* All operations of the tree, in an order that depends only on the sequence of calls (removal
 * moves the last operation into the hole); sort by start time when order matters. */
int ps_pool_tree_operation_count(const struct ps_pool_tree *tree);
struct ps_tree_op *ps_pool_tree_operation_at(const struct ps_pool_tree *tree, int index);
/* Pending operations in start order (start_time_ms, then registration order). */
int ps_pool_tree_pending_count(const struct ps_pool_tree *tree);
struct ps_tree_op *ps_pool_tree_pending_at(const struct ps_pool_tree *tree, int index);

/* Re-checks pending operations in start order and starts those that fit. Called by the tree
 * itself after every change that can free room; exposed for callers that change limits by
 * other means. */
void ps_pool_tree_run_pending(struct ps_pool_tree *tree);

#endif
