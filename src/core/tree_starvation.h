/* tree_starvation.h — a pool tree's settings and state for the starvation check (starvation.h),
 * the preemptive stages (preempt.h) and the regular scheduling stage (schedule.h).
 *
 * After a fair share update (tree_fs.h) the scheduler loop runs:
 *
 *     ps_pool_tree_build_starvation(tree, &fs, elems, err);     // same indices as fs.elems
 *     (optionally refresh elems[i].usage_share with live usage)
 *     ps_starvation_update(elems, fs.count, &config, now_ms, &changed, err);
 *     ps_pool_tree_apply_starvation(tree, &fs, elems, err);     // status -> pools, operations
 *
 * with config from ps_tree_config_starvation_config. The element inputs come from the update
 * (fair, demand and usage shares), the pools' and operations' own settings (unset values
 * inherit, as starvation.h describes) and the persistent below_fair_share_since_ms kept in
 * each pool's and operation's dynamic characteristics. An operation is schedulable unless it
 * is suspended.
 */
#ifndef PS_CORE_TREE_STARVATION_H
#define PS_CORE_TREE_STARVATION_H

#include "core/error.h"
#include "core/pool_tree.h"
#include "core/operation.h"
#include "core/preempt.h"
#include "core/preemptible.h"
#include "core/schedule.h"
#include "core/starvation.h"
#include "core/tree_fs.h"

/* Tree-wide settings of the starvation check and of the preemptive stages, from the tree's
 * config (tree_config.h). */
void ps_tree_config_starvation_config(const struct ps_tree_config *cfg, struct ps_starvation_config *out);
void ps_tree_config_preempt_config(const struct ps_tree_config *cfg, struct ps_preempt_config *out);

/* Options of the scheduling stages for this tree: its total resources, the tree's
 * fifo_pool_scheduling_order, filter evaluation with ps_formula_eval, and generation, which
 * the caller sets per snapshot. Other fields keep schedule.h's defaults. */
void ps_pool_tree_sched_options(const struct ps_pool_tree *tree, struct ps_sched_options *out);

/* The allocation classification settings of one operation (preemptible.h): the tree's
 * thresholds and total, and the non_preemptible_resource_usage_threshold of the operation's
 * spec, else of the nearest pool above it that sets one, else the tree's (whose user_slots
 * default to max_unpreemptible_running_allocation_count), as upstream's
 * GetEffectiveNonPreemptibleResourceUsageThresholdConfig: the whole map comes from one level,
 * and resources it does not name are unlimited. */
void ps_tree_op_preemptible_config(const struct ps_tree_op *op, struct ps_preemptible_config *out);

/* A pool's own starvation settings (fair_share_starvation_timeout, _tolerance,
 * enable_aggressive_starvation; upstream pools have no aggressive timeout). */
void ps_pool_config_starvation_settings(const struct ps_pool_config *cfg, struct ps_starvation_settings *out);

/* Fills elems[0..fs->count) for ps_starvation_update from a build of this tree whose results
 * the engine has written (the fs outputs). PS_ESTATE when the tree changed since the build. */
int ps_pool_tree_build_starvation(const struct ps_pool_tree *tree, const struct ps_tree_fs *fs,
                                  struct ps_starvation_element *elems, struct ps_error *err);

/* The same for elems filled by ps_pool_tree_build_starvation from a build of this tree at the
 * same generation (tree_fs.h: no config or structural change since): only what changes from
 * update to update (shares, schedulable, pending count, the persistent state) is read again;
 * kind, parent and the specified settings are kept. */
int ps_pool_tree_refresh_starvation(const struct ps_pool_tree *tree, const struct ps_tree_fs *fs,
                                    struct ps_starvation_element *elems, struct ps_error *err);

/* Stores status, starvation and below_fair_share_since_ms of every element into its pool's or
 * operation's dynamic characteristics, for the next check and for the orchid. PS_ESTATE when
 * the tree changed since the build. */
int ps_pool_tree_apply_starvation(struct ps_pool_tree *tree, const struct ps_tree_fs *fs,
                                  const struct ps_starvation_element *elems, struct ps_error *err);

#endif
