/* op_spec.h — the scheduling part of an operation spec (TStrategyOperationSpec upstream).
 *
 * key (aliases)                               default      validation
 * pool                                        unset (user) non-empty string
 * weight                                      unset (1)    [sqrt(eps), 1/sqrt(eps)]
 * max_share_ratio                             unset (1)    [0, 1]
 * resource_limits                             {}           resources >= 0
 * scheduling_tag_filter (scheduling_tag)      ""           formula, <= 100 tokens
 * pool_trees                                  []           list of tree names; [] = default tree
 * is_gang                                     false
 * acl                                         []           ACEs (core/acl.h): who besides the
 *                                                          user may read (jobs, stderr) and
 *                                                          manage (abort, suspend, resume,
 *                                                          complete, update) the operation;
 *                                                          update_op_parameters may change it
 * owners                                      []           upstream's older key: users allowed
 *                                                          read and manage
 * custom_profiling_tag                        unset        string; reported as given when an
 *                                                          ancestor pool's allowed_profiling_tags
 *                                                          lists it, else as "invalid"
 *                                                          (ps_pool_profiling_tag)
 * apply_specified_resource_limits_to_demand   false        the demand the fair share sees is
 *                                                          max(usage, min(demand, resource_limits))
 * fair_share_starvation_timeout
 *     (fair_share_preemption_timeout)         unset        integer ms >= 0
 * fair_share_starvation_tolerance             unset        [0, 1]
 * non_preemptible_resource_usage_threshold    {}           resources >= 0
 * strong_guarantee_resources
 *     (min_share_resources)                   {}           resources >= 0; recognised and
 *                                                          kept in the spec but gives the
 *                                                          operation no guarantee: upstream's
 *                                                          vector HDRF gives operations none
 *                                                          (TOperationElement::ComputeStrong-
 *                                                          GuaranteeShareByTier), so their
 *                                                          strong_guarantee_share and
 *                                                          min_share_ratio stay 0; it only
 *                                                          counts in the parent's inference
 *                                                          of its children's guarantees
 *                                                          (fair_share.h)
 * preemption_mode                             "normal"     "normal" | "graceful"
 * max_unpreemptible_allocation_count
 *     (max_unpreemptible_job_count,
 *      max_unpreemptable_job_count)           unset        integer >= 0
 * tentative_pool_trees                        []           list of tree names (core/tentative.h)
 * use_default_tentative_pool_trees            false        the scheduler config's
 *                                                          default_tentative_pool_trees
 * tentative_tree_eligibility                  defaults     map (core/tentative.h)
 * scheduling_options_per_pool_tree
 *     (fair_share_options_per_pool_tree)      {}           map tree -> {pool, weight,
 *                                                          max_share_ratio, resource_limits,
 *                                                          scheduling_tag_filter}
 *
 *
 * Controller keys (the strategy stores and validates them; the service, the simulator and the
 * node use them; nobody parses them again):
 * job_cpu_monitor                             every key of   the table ps_cpu_monitor_config_
 *                                             cpu_monitor.h  table; then the relations
 *                                             (defaults:     (ps_cpu_monitor_config_validate)
 *                                             semantics.md 4.1)
 * user_job_memory_digest_default_value        unset (0.5)    (0, 1]
 * user_job_memory_digest_lower_bound          unset (0.05)   (0, 1]
 * memory_reserve_factor                       unset          (0, 1]; sets both digest values
 *                                                            above (memory_reserve.h)
 * job_proxy_memory_digest/default_value,      unset (1.0,    each > 0; the job proxy's log
 *   lower_bound, upper_bound                  0.5, 2.0)      digest (memory_reserve.h)
 * max_failed_job_count                        unset (10, or  integer in [0, 10000] (upstream's
 *                                             the service's  range); the operation fails when
 *                                             config)        this many jobs have failed
 * ban_nodes_with_failed_jobs                  false          a node where one of the
 *                                                            operation's jobs failed runs no
 *                                                            more of its jobs (upstream's)
 * ignore_job_failures_at_banned_nodes         false          a job failing on such a node
 *                                                            counts as aborted (node_banned)
 * fail_on_all_nodes_banned                    true           the operation fails once every
 *                                                            node it could use is banned for it
 * waiting_job_timeout                         unset          integer ms in [10000, 600000]
 *                                                            (upstream's TOperationSpecBase):
 *                                                            how long a job may wait on its
 *                                                            node for resources
 *                                                            (ps_waiting_job_timeout)
 * tasks                                       the vanilla controller's (server/service.c)
 * Errors in job_cpu_monitor name the key: `job_cpu_monitor/smoothing_factor: must be in (0, 1],
 * got 2`. The resulting spec (ps_operation_spec_to_value) always shows the job_cpu_monitor
 * section with every key, defaults filled in.
 *
 * Unknown keys (top level, inside job_cpu_monitor, inside a tree's options) are not errors, as
 * upstream: apply ignores them and ps_operation_spec_unrecognized lists them for the
 * `unrecognized_spec` alert. Two names of one key in one map (`scheduling_tag` and
 * `scheduling_tag_filter`) are an error naming both.
 *
 * preemption_mode and max_unpreemptible_allocation_count are upstream's TStrategyOperationSpec
 * keys (strategy.cpp; older releases: max_unpreemptable_job_count). They feed the preemption
 * engine's per-operation struct ps_preempt_operation (preempt.h) in every tree the operation
 * runs in, through ps_operation_spec_preempt_settings: graceful = (preemption_mode ==
 * graceful): the operation is never a victim of the preemptive stages for starving operations,
 * and its victims of other reasons get allocation_graceful_preemption_timeout;
 * max_unpreemptible_running_allocation_count = max_unpreemptible_allocation_count (-1 unset):
 * while the operation runs <= min(this, the tree's max_unpreemptible_running_allocation_count)
 * allocations it is not preempted (semantics.md 3.3); it also caps the user_slots of the
 * operation's effective non_preemptible_resource_usage_threshold (ps_tree_op_preemptible_config,
 * as upstream's TSchedulerOperationElement::UpdateRecursiveAttributes). Upstream has them per operation only:
 * they are not per-tree options (like other unknown keys there, they are ignored). Current
 * upstream rejects non-zero values of max_unpreemptible_allocation_count (COMPAT, pointing to
 * non_preemptible_resource_usage_threshold/user_slots); we keep the older, documented meaning
 * of semantics.md.
 *
 * Per-tree options override the spec-level values for that tree: pool, weight,
 * max_share_ratio and scheduling_tag_filter when given, resource_limits per resource. Options
 * for a tree the operation does not run in are kept and ignored (as upstream).
 */
#ifndef PS_CORE_OP_SPEC_H
#define PS_CORE_OP_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/attr.h"
#include "core/cpu_monitor.h"
#include "core/error.h"
#include "core/operation.h"
#include "core/tentative.h"
#include "core/value.h"

/* Upstream's upper limit of max_failed_job_count (TOperationSpecBase); the scheduler config's
 * default of the same key has the same range. */
#define PS_MAX_FAILED_JOB_COUNT 10000

enum ps_preemption_mode {
    PS_PREEMPTION_MODE_NORMAL = 0,
    PS_PREEMPTION_MODE_GRACEFUL = 1,
};

struct ps_op_tree_options {
    char *tree;                                /* owned */
    char *pool;                                /* owned, NULL when unset */
    struct ps_opt_double weight;
    struct ps_opt_double max_share_ratio;
    struct ps_resources_opt resource_limits;
    char *scheduling_tag_filter;               /* owned, NULL when unset */
};

struct ps_operation_spec {
    char *pool;                                /* owned, NULL when unset */
    struct ps_opt_double weight;
    struct ps_opt_double max_share_ratio;
    struct ps_resources_opt resource_limits;
    char *scheduling_tag_filter;               /* owned, "" when none */
    struct ps_string_list pool_trees;
    struct ps_acl acl;                         /* the service checks it (docs/api.md) */
    struct ps_string_list owners;
    bool schedule_in_single_tree;              /* run in one of pool_trees (single_tree.h) */
    bool consider_guarantees_for_single_tree;
    bool erase_trees_with_pool_limit_violations;   /* start where the pools admit it */
    struct ps_string_list tentative_pool_trees;    /* core/tentative.h */
    bool use_default_tentative_pool_trees;
    struct ps_tentative_eligibility_config tentative_tree_eligibility;
    bool is_gang;
    bool apply_specified_resource_limits_to_demand;
    bool enable_limiting_ancestor_check;       /* false: never failed for a limiting ancestor */
    char *custom_profiling_tag;                /* owned, NULL when unset */
    struct ps_opt_int fair_share_starvation_timeout_ms;
    struct ps_opt_double fair_share_starvation_tolerance;
    struct ps_resources_opt non_preemptible_resource_usage_threshold;
    struct ps_resources_opt strong_guarantee_resources;   /* no guarantee of its own (above) */
    int preemption_mode;                       /* enum ps_preemption_mode */
    struct ps_opt_int max_unpreemptible_allocation_count;
    struct ps_op_tree_options *per_tree;       /* owned, in the document's order */
    int per_tree_count;
    /* controller keys (nothing owned) */
    bool has_job_cpu_monitor;                  /* the spec had a job_cpu_monitor section */
    struct ps_cpu_monitor_config job_cpu_monitor;   /* defaults filled in */
    struct ps_opt_double user_job_memory_digest_default_value;
    struct ps_opt_double user_job_memory_digest_lower_bound;
    struct ps_opt_double memory_reserve_factor;
    struct ps_opt_int max_failed_job_count;
    struct ps_opt_int waiting_job_timeout_ms;
    bool ban_nodes_with_failed_jobs;
    bool ignore_job_failures_at_banned_nodes;
    bool fail_on_all_nodes_banned;
    struct ps_job_proxy_memory_digest_spec {   /* upstream's job_proxy_memory_digest */
        struct ps_opt_double default_value, lower_bound, upper_bound;
    } job_proxy_memory_digest;
};

/* The table of the keys above (without scheduling_options_per_pool_tree, read per tree with
 * the same rules for its keys); for generic code and tests. */
extern const struct ps_attr_table ps_operation_spec_table;

/* Defaults; 0 or PS_ENOMEM (then nothing to release). */
int ps_operation_spec_init(struct ps_operation_spec *spec);
void ps_operation_spec_release(struct ps_operation_spec *spec);
int ps_operation_spec_copy(struct ps_operation_spec *dst, const struct ps_operation_spec *src);

/* Applies a spec document (a map) atomically: the keys above are validated (errors name the
 * key, e.g. `scheduling_options_per_pool_tree/gpu/weight: must be in [...], got 0`), unknown
 * keys are ignored (see ps_operation_spec_unrecognized). A tree mentioned again in scheduling_options_per_pool_tree replaces its
 * earlier options. */
int ps_operation_spec_apply(struct ps_operation_spec *spec, const struct ps_value *map,
                            struct ps_error *err);

/* The spec as a map (keys above; scheduling_options_per_pool_tree as a nested map). */
int ps_operation_spec_to_value(const struct ps_operation_spec *spec, struct ps_value *out);

/* The keys of a spec document that no reader knows, as a map of the unrecognized subtrees
 * (upstream's GetRecursiveUnrecognized): top-level keys not in the table above nor `tasks`,
 * unknown keys inside job_cpu_monitor and inside each tree's scheduling options. Apply ignores
 * them; the service shows them as the operation's `unrecognized_spec` alert. *out is an empty
 * map when there are none. Returns 0 or PS_ENOMEM. */
int ps_operation_spec_unrecognized(const struct ps_value *map, struct ps_value *out);

/* Checks that update_op_parameters changes only run-time keys (pool, weight, max_share_ratio,
 * resource_limits, scheduling_tag_filter, scheduling_options_per_pool_tree). Returns 0 or
 * PS_EINVAL naming the key (`parameters/tasks: cannot be changed while the operation runs`). */
int ps_operation_spec_check_runtime(const struct ps_value *params, struct ps_error *err);

/* The options for tree, or NULL. */
const struct ps_op_tree_options *ps_operation_spec_tree_options(const struct ps_operation_spec *spec,
                                                                const char *tree);

/* The effective settings of the operation in tree (spec values overridden by the tree's
 * options). The strings point into spec: valid while spec is unchanged. */
void ps_operation_spec_settings(const struct ps_operation_spec *spec, const char *tree,
                                struct ps_tree_op_settings *out);

/* The operation's preemption settings for the engine (struct ps_preempt_operation):
 * *graceful = preemption_mode is graceful; *max_unpreemptible =
 * max_unpreemptible_allocation_count clamped to INT32_MAX, -1 when unset. */
void ps_operation_spec_preempt_settings(const struct ps_operation_spec *spec, bool *graceful,
                                        int *max_unpreemptible);

/* How long a job of the operation may wait on its node for resources (ms), -1 when neither is
 * set (the node's own default applies): the greater of the spec's waiting_job_timeout and the
 * tree's waiting_for_resources_on_node_timeout when both are set, else the one that is
 * (upstream's controller, TTask::BuildJobSpec). */
int64_t ps_operation_spec_waiting_job_timeout(const struct ps_operation_spec *spec,
                                              const struct ps_opt_int *tree_timeout);

#endif
