/* user_pools.h — the scheduler's user-to-default-parent-pool map (upstream's
 * //sys/scheduler/user_to_default_pool document, ISchedulerStrategy::UpdateUserToDefaultPoolMap)
 * and its use by trees with use_user_default_parent_pool_map (tree_config.h).
 *
 * The map is one per strategy: user name -> pool name. In a tree whose config has
 * use_user_default_parent_pool_map true, an ephemeral pool created for user U in the default
 * parent (operation.h, rule 5: spec.pool absent or naming a pool that does not exist) goes
 * under map[U] when that pool exists, is explicit and is not in fifo mode; otherwise under the
 * tree's default_parent_pool as before (upstream's GetDefaultParentPoolForUser).
 *
 * Validation (upstream's ValidateUserToDefaultPoolMap): the map must be a map of strings, each a
 * valid pool name; in every tree with the option on, every pool named must exist and be
 * explicit. A refused map changes nothing. Turning the option on in a tree is refused the same
 * way when the current map names a pool the tree lacks.
 *
 * Existing ephemeral pools follow the map (upstream's ActualizeEphemeralPoolParents): when the
 * map changes or a tree turns the option on, each ephemeral pool made in the default parent
 * whose user the map names moves under that user's pool (if it exists, is explicit and not
 * fifo), with its operations and counts, and takes the new parent's ephemeral_subpool_config.
 * A user the map no longer names keeps its pools where they are, as upstream.
 * Deviation: upstream looks the pool's own name up in the map here (the same for a pool named
 * after its user, the usual case); poolsched looks up the pool's user, the key the pool was
 * created under, so a pool "research" of user "u" follows u's entry.
 */
#ifndef PS_CORE_USER_POOLS_H
#define PS_CORE_USER_POOLS_H

#include "core/error.h"
#include "core/pool_tree.h"
#include "core/value.h"

struct ps_strategy;

/* Replaces the strategy's map with map (a map user -> pool name; null or an empty map clears
 * it), validated against every tree first (see above), then moves existing ephemeral pools.
 * validate false skips the check against the trees (a restart restores the map it accepted
 * before, even if a pool has gone since: such a user falls back to default_parent_pool).
 * Errors: PS_EINVAL (bad map, a pool missing in a tree, naming user, pool and tree), PS_ENOMEM;
 * on error nothing changed. Pending operations may start (ps_strategy_activated_*). */
int ps_strategy_set_user_default_pools(struct ps_strategy *s, const struct ps_value *map,
                                       bool validate, struct ps_error *err);
/* Checks the map's shape alone: null, or a map of non-empty user names to valid pool names.
 * 0 or PS_EINVAL naming the user and the value. */
int ps_user_default_pools_check(const struct ps_value *map, struct ps_error *err);
/* A copy of the map into *out (a map value, owned by the caller). 0 or PS_ENOMEM. */
int ps_strategy_user_default_pools(const struct ps_strategy *s, struct ps_value *out);
/* The pool the map names for user, or NULL. Valid until the map changes. */
const char *ps_strategy_user_default_pool(const struct ps_strategy *s, const char *user);

/* The parent a new ephemeral pool of user goes under in tree (see above); user NULL: the
 * tree's default parent (ps_pool_tree_default_parent). */
struct ps_pool *ps_pool_tree_default_parent_for(const struct ps_pool_tree *tree, const char *user);

/* Checks map (as ps_strategy_set_user_default_pools takes it) against tree as if its
 * use_user_default_parent_pool_map were on. 0 or PS_EINVAL. */
int ps_pool_tree_check_user_default_pools(const struct ps_pool_tree *tree,
                                          const struct ps_value *map, struct ps_error *err);
/* Moves tree's ephemeral pools to their users' pools of the strategy's map, when the tree's
 * option is on (see above). Returns the number of pools moved. */
int ps_pool_tree_actualize_ephemeral_parents(struct ps_pool_tree *tree);

#endif
