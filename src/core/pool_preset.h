/* pool_preset.h — pool config presets: named bundles of pool settings kept in a tree's config
 * (`pool_config_presets`, a map preset name -> map of keys) and chosen by a pool's
 * `config_preset` attribute, as upstream's TPoolPresetConfig (yt/yt/ytlib/scheduler/config.h)
 * and TPoolsConfigParser (yt/yt/server/scheduler/pools_config_parser.cpp).
 *
 * A preset may hold only these pool keys (upstream's preemption and preset options):
 *   fair_share_starvation_timeout (fair_share_preemption_timeout), fair_share_starvation_tolerance,
 *   non_preemptible_resource_usage_threshold, enable_aggressive_starvation,
 *   allow_aggressive_preemption (allow_aggressive_starvation_preemption), allow_normal_preemption,
 *   allow_regular_allocations_on_ssd_nodes (allow_regular_jobs_on_ssd_nodes)
 * with the pool config's own types and ranges. (Upstream also has enable_lightweight_operations,
 * which poolsched has no use for: it is unrecognized here as in a pool.)
 *
 * A pool's effective config is its explicit config (what was set on the pool, what Cypress
 * reads and the store keeps) with the preset's values filled in where the pool sets none:
 * "explicit config has higher priority than preset", per key, and per resource inside
 * non_preemptible_resource_usage_threshold (upstream patches the preset node with the pool's).
 *
 * As upstream, the tree config keeps presets as given and a pool may name any preset: both sets
 * are accepted, and a preset is checked where a pool uses it. A preset that is missing, not a
 * map, has a bad value or a key outside the list is not applied, and the pool's issue says why,
 * in upstream's words:
 *   Config preset "x" is not found
 *   Config of preset "x" failed to load as TPoolPresetConfig: <key>: <reason>
 *   Config of preset "x" contains unrecognized options: mode
 * (the service raises them as the tree's update_pools alert). Deliberate deviation: upstream
 * then skips the update of every pool of the tree (each keeps its last good config); here only
 * that pool goes without its preset, which a restart reproduces exactly.
 *
 * None of the preset keys takes part in a rule between pools (pool_tree.h), so applying a valid
 * preset never makes a valid tree invalid.
 */
#ifndef PS_CORE_POOL_PRESET_H
#define PS_CORE_POOL_PRESET_H

#include "core/attr.h"
#include "core/error.h"
#include "core/pool_config.h"
#include "core/value.h"

/* The keys a preset may hold, as a table over struct ps_pool_config. */
extern const struct ps_attr_table ps_pool_preset_table;

/* Loads the preset `name` (its value in pool_config_presets) into *out: a zeroed pool config in
 * which only the preset keys mean anything, unset unless the preset gives them. Release it with
 * ps_pool_config_release. Returns 0, PS_EINVAL with one of the messages above, or PS_ENOMEM. */
int ps_pool_preset_load(const char *name, const struct ps_value *preset, struct ps_pool_config *out,
                        struct ps_error *err);

/* The effective config of a pool (into uninitialised *out): a copy of explicit_cfg with the
 * preset it names in presets (a tree's pool_config_presets) filled in under it. When the pool
 * names a preset that cannot be applied, *out is the plain copy and *issue receives the reason
 * (issue->code PS_ENOENT or PS_EINVAL); otherwise issue->code is 0. Returns 0 or PS_ENOMEM
 * (nothing to release then). */
int ps_pool_config_effective(const struct ps_pool_config *explicit_cfg, const struct ps_value *presets,
                             struct ps_pool_config *out, struct ps_error *issue);

#endif
