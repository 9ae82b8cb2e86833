/* pool_config.h — the attributes of one pool (//sys/pool_trees/<tree>/<pool>/@...).
 *
 * Every attribute of shared/reference/pool-characteristics.txt, with YTsaurus's defaults and
 * validation (TPoolConfig, TSchedulableConfig, TPoolPreemptionConfig, TEphemeralSubpoolConfig,
 * TPoolIntegralGuaranteesConfig in yt/yt/ytlib/scheduler/config.cpp):
 *
 * key (aliases)                              default              validation
 * weight                                     unset (1)            [sqrt(eps), 1/sqrt(eps)]
 * max_share_ratio                            unset (1)            [0, 1]
 * strong_guarantee_resources
 *     (min_share_resources)                  {}                   resources >= 0
 * resource_limits                            {} (unlimited)       resources >= 0
 * scheduling_tag_filter (scheduling_tag)     ""                   formula, <= 100 tokens
 * mode                                       fair_share           fair_share | fifo
 * max_running_operation_count                unset (tree's per-pool default)  integer >= 0
 * max_operation_count                        unset (tree's per-pool default)  integer >= 0,
 *                                                                 >= max_running_operation_count
 * fifo_sort_parameters                       [weight, start_time] non-empty list of distinct
 *                                                                 weight, start_time,
 *                                                                 pending_job_count
 *                                                                 (pending_allocation_count)
 * fifo_pool_scheduling_order                 unset (tree's)       satisfaction | fifo
 * forbid_immediate_operations                false
 * enable_lightweight_operations              false                effective in fifo mode only
 *                                                                 (ps_pool_lightweight_enabled)
 * create_ephemeral_subpools                  false                not with mode fifo
 * ephemeral_subpool_config                   absent               {mode, resource_limits,
 *                                                                  max_running_operation_count,
 *                                                                  max_operation_count}
 * integral_guarantees (integral-guarantees, the docs' commands' spelling)
 * integral_guarantees/guarantee_type         none                 none | burst | relaxed
 * integral_guarantees/resource_flow          {}                   resources >= 0
 * integral_guarantees/burst_guarantee_resources {}                resources >= 0, not with relaxed
 * integral_guarantees/relaxed_share_multiplier_limit unset (tree's) [1, 10]
 * integral_guarantees/can_accept_free_volume       true
 * integral_guarantees/should_distribute_free_volume_among_children  unset (tree's)
 * fair_share_starvation_timeout
 *     (fair_share_preemption_timeout)        unset (parent's)     integer ms >= 0
 * fair_share_starvation_tolerance            unset (parent's)     [0, 1]
 * non_preemptible_resource_usage_threshold   unset                resources >= 0
 * enable_aggressive_starvation               unset (parent's)
 * allow_aggressive_preemption
 *     (allow_aggressive_starvation_preemption) unset (parent's)
 * allow_normal_preemption                    unset (true)
 * allow_regular_allocations_on_ssd_nodes
 *     (allow_regular_jobs_on_ssd_nodes)      unset (true)         false here or in an ancestor:
 *                                                                 operations without an SSD
 *                                                                 disk request start nothing on
 *                                                                 SSD nodes (preempt.h)
 * acl                                        []                   ACEs (core/acl.h): who may use,
 *                                                                 read, write, administer the pool
 * inherit_acl                                true                 the parent's (and the tree's)
 *                                                                 ACEs apply to the pool too
 * enable_fair_share_truncation_in_fifo_pool  unset (tree's)       (fair_share.h, ps_fs_options)
 * use_pool_satisfaction_for_scheduling       unset (parent's; the root: false)  a pool's
 *                                                                 scheduling key is also its own
 *                                                                 satisfaction (schedule.h)
 * compute_promised_guarantee_fair_share      false                the pool's strong guarantee
 *                                                                 share is promised to its
 *                                                                 running operations, split by
 *                                                                 weight (tree_sched.h: guarantee
 *                                                                 priority scheduling)
 * allowed_profiling_tags                     []                   custom_profiling_tag values
 *                                                                 operations below may use
 *                                                                 (ps_pool_profiling_tag)
 * infer_children_weights_from_historic_usage false                each child's weight is
 *                                                                 multiplied by 2^-h, h its
 *                                                                 aggregated dominant usage share
 * historic_usage_config/aggregation_mode     none                 none |
 *                                                                 exponential_moving_average
 * historic_usage_config/ema_alpha            1.0                  >= 0; after dt seconds the old
 *                                                                 average keeps weight 2^(-alpha dt)
 * config_preset                              unset                the name of an entry of the
 *                                                                 tree's pool_config_presets
 *                                                                 whose values apply where the
 *                                                                 pool sets none (pool_preset.h)
 * offloading_settings                        {}                   pool tree name -> {pool,
 *                                                                 weight, resource_limits,
 *                                                                 tentative}: the operations
 *                                                                 below also run there
 *                                                                 (offloading_settings.h)
 *
 * Choices, and why:
 * - weight: the docs say "non-negative"; upstream's range is [sqrt(DBL_EPSILON),
 *   1/sqrt(DBL_EPSILON)] so that the ratio of two weights keeps precision, and the engine
 *   needs weights > 0. The upstream range is enforced. Unset means 1, but the engine is told
 *   the weight was not specified so that it may infer one (semantics.md 1.2).
 * - max_running_operation_count: the docs' prose says 8, the docs' table and upstream code
 *   say unset means the tree's max_running_operation_count_per_pool (50). Unset means the
 *   tree's default, read at the time of use, so changing the tree default affects every pool
 *   that does not set its own value (ps_pool_config_max_running).
 * - There is no pool-level aggressive starvation timeout: upstream has none (only the tree's
 *   fair_share_aggressive_starvation_timeout); the pool-level aggressive overrides are
 *   enable_aggressive_starvation and allow_aggressive_preemption.
 * - historic usage: upstream's older spelling historic_usage_aggregation_period (a period
 *   instead of historic_usage_config) is not taken; its current historic_usage_config is.
 * - acl and inherit_acl are the Cypress attributes of upstream's pool objects (core/acl.h has
 *   the check): an operation starts in a pool only when its user has `use` on it, read from
 *   the pool's ACL, its ancestors' while inherit_acl is true, then the tree's and the ACL of
 *   //sys/pool_trees (whose default allows `use` to the group `users`). An ephemeral pool has
 *   no ACL of its own and inherits. (Older databases held a list of user names here; the
 *   service converts it when it loads them, docs/api.md "Users, groups and ACLs".)
 *
 * Any other key is a custom attribute (attr.h custom_offset): stored as given, read back, never
 * used for scheduling, as upstream's pools keep user attributes. ps_pool_config_is_setting
 * tells the known keys (the service logs, the CLI warns about a custom key).
 *
 * Rules that involve other pools (guarantee sums, FIFO pools without subpools, ...) are
 * checked by the pool tree (pool_tree.h).
 */
#ifndef PS_CORE_POOL_CONFIG_H
#define PS_CORE_POOL_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/attr.h"
#include "core/error.h"
#include "core/fair_share.h"
#include "core/pool_name.h"
#include "core/resources.h"
#include "core/tree_config.h"
#include "core/value.h"

struct ps_ephemeral_subpool_config {
    int mode;                                      /* enum ps_sched_mode */
    struct ps_resources_opt resource_limits;
    struct ps_opt_int max_running_operation_count;
    struct ps_opt_int max_operation_count;
};

struct ps_pool_integral_config {
    int guarantee_type;                            /* enum ps_guarantee_type */
    struct ps_resources_opt resource_flow;
    struct ps_resources_opt burst_guarantee_resources;
    struct ps_opt_double relaxed_share_multiplier_limit;
    bool can_accept_free_volume;
    struct ps_opt_bool should_distribute_free_volume_among_children;
};

/* historic_usage_config: how a pool with infer_children_weights_from_historic_usage aggregates
 * each child's dominant usage share (upstream's THistoricUsageConfig). */
enum ps_historic_usage_mode { PS_HISTORIC_USAGE_NONE = 0, PS_HISTORIC_USAGE_EMA = 1 };
struct ps_historic_usage_config {
    int aggregation_mode;                          /* enum ps_historic_usage_mode; none */
    double ema_alpha;                              /* >= 0; 1.0 */
};

#define PS_POOL_CONFIG_MAX_KEYS 64

struct ps_pool_config {
    struct ps_opt_double weight;
    struct ps_opt_double max_share_ratio;
    struct ps_resources_opt strong_guarantee_resources;
    struct ps_resources_opt resource_limits;
    char *scheduling_tag_filter;                   /* owned, "" = none */
    int mode;                                      /* enum ps_sched_mode */
    struct ps_opt_int max_running_operation_count;
    struct ps_opt_int max_operation_count;
    struct ps_fifo_list fifo_sort_parameters;
    struct ps_opt_int fifo_pool_scheduling_order;  /* enum ps_fifo_scheduling_order */
    bool forbid_immediate_operations;
    struct ps_opt_bool enable_lightweight_operations;      /* unset: false */
    bool create_ephemeral_subpools;
    bool has_ephemeral_subpool_config;
    struct ps_ephemeral_subpool_config ephemeral_subpool_config;
    struct ps_pool_integral_config integral_guarantees;
    /* preemption overrides (pool-preemption-settings) */
    struct ps_opt_int fair_share_starvation_timeout_ms;
    struct ps_opt_double fair_share_starvation_tolerance;
    struct ps_resources_opt non_preemptible_resource_usage_threshold;
    struct ps_opt_bool enable_aggressive_starvation;
    struct ps_opt_bool allow_aggressive_preemption;
    struct ps_opt_bool enable_fair_share_truncation_in_fifo_pool;   /* unset: the tree's */
    struct ps_opt_bool use_pool_satisfaction_for_scheduling;       /* unset: the parent's */
    bool compute_promised_guarantee_fair_share;
    struct ps_string_list allowed_profiling_tags;
    bool infer_children_weights_from_historic_usage;
    struct ps_historic_usage_config historic_usage_config;
    struct ps_opt_bool allow_normal_preemption;                 /* unset: true */
    struct ps_opt_bool allow_regular_allocations_on_ssd_nodes;  /* unset: true */
    struct ps_acl acl;                             /* ACEs (core/acl.h), empty by default */
    bool inherit_acl;                              /* true: the parent's ACEs apply too */
    char *config_preset;                           /* owned, NULL when unset */
    struct ps_value offloading_settings;           /* a map, {} by default (offloading_settings.h) */
    /* the name each key was set with, as upstream's pools keep it (attr.h spelling_offset):
     * setting a key under an alias while it is set under another name is refused */
    unsigned char spelling[PS_POOL_CONFIG_MAX_KEYS];
    /* custom attributes: every other key set on the pool, kept as given and read by nothing
     * (attr.h custom_offset), as upstream's Cypress keeps them */
    struct ps_value custom;
};

extern const struct ps_attr_table ps_pool_config_table;

/* Defaults. Returns 0 or PS_ENOMEM (then nothing needs releasing). */
int ps_pool_config_init(struct ps_pool_config *cfg);
void ps_pool_config_release(struct ps_pool_config *cfg);
int ps_pool_config_copy(struct ps_pool_config *dst, const struct ps_pool_config *src);

/* Sets one key without running the pool-level cross-key validation; used by the pool tree,
 * which validates the result together with the rest of the tree before committing (see
 * ps_pool_tree_set_pool_attr). On error cfg is unchanged. */
int ps_pool_config_set(struct ps_pool_config *cfg, const char *key, const struct ps_value *value,
                       struct ps_error *err);
/* Applies a map of keys atomically (no cross-key validation, as above). */
int ps_pool_config_apply(struct ps_pool_config *cfg, const struct ps_value *map,
                         struct ps_error *err);
int ps_pool_config_get(const struct ps_pool_config *cfg, const char *key, struct ps_value *out,
                       struct ps_error *err);
int ps_pool_config_to_value(const struct ps_pool_config *cfg, struct ps_value *out);
int ps_pool_config_key_count(void);
/* Whether the first component of key (`a` of `a/b`) is a pool setting (canonical or alias),
 * rather than a custom attribute. */
bool ps_pool_config_is_setting(const char *key);
const char *ps_pool_config_key_name(int index);

/* Pool-level cross-key rules (max_operation_count >= max_running_operation_count, no burst
 * guarantees for relaxed pools, no ephemeral subpools for FIFO pools). Messages name the
 * keys; callers prefix the pool. */
int ps_pool_config_validate(const struct ps_pool_config *cfg, struct ps_error *err);

/* Effective limits: the pool's own value or the tree's per-pool default. */
int64_t ps_pool_config_max_running(const struct ps_pool_config *cfg, const struct ps_tree_config *tree);
int64_t ps_pool_config_max_operations(const struct ps_pool_config *cfg, const struct ps_tree_config *tree);

/* The config of an ephemeral pool created under a parent with this config: defaults, then
 * the parent's ephemeral_subpool_config when present (mode, limits, counts), as upstream's
 * ApplyEphemeralSubpoolConfig. parent NULL (root) gives the defaults. */
int ps_pool_config_init_ephemeral(struct ps_pool_config *cfg, const struct ps_pool_config *parent);

/* Re-applies the parent's ephemeral_subpool_config to an existing ephemeral pool's config
 * (when the parent is reconfigured), keeping everything else. */
void ps_pool_config_apply_ephemeral(struct ps_pool_config *cfg, const struct ps_pool_config *parent);

/* The specified resource limits as absolute resources, PS_RES_INFINITE where unset. */
struct ps_resources ps_resources_opt_or_infinite(const struct ps_resources_opt *r);

/* The fair share engine's inputs from a pool's config, for every builder of engine input (the
 * pool tree, the fair-share snapshot): weight (and whether it was given), max_share_ratio,
 * resource_limits (unset resources unlimited), mode, fifo_sort_parameters, the strong and
 * integral guarantee settings. Other fields of in and pin (parent, filter limits, volumes) are
 * left as they are. */
void ps_pool_config_fs_input(const struct ps_pool_config *c, struct ps_fs_element_input *in,
                             struct ps_fs_pool_input *pin);

#endif
