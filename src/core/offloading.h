/* offloading.h — the trees an operation is offloaded to (upstream's
 * InitOperationRuntimeParameters), by its pools' offloading_settings (offloading_settings.h).
 *
 * An operation started in tree T whose specified pool P (or, when P does not exist in T, the
 * parent new ephemeral pools of its user go under) has, itself or on its way to the root, a
 * pool with non-empty offloading_settings is also started in each tree O those settings name
 * (the nearest such pool's settings only) — unless the operation has a scheduling_tag_filter,
 * O is already one of its trees, or O does not exist. The settings become the operation's
 * scheduling options for O (its spec's scheduling_options_per_pool_tree/O), so the pool checks
 * of a start and every later reader see them as if the user had written them.
 */
#ifndef PS_CORE_OFFLOADING_H
#define PS_CORE_OFFLOADING_H

#include "core/error.h"
#include "core/offloading_settings.h"
#include "core/op_spec.h"
#include "core/pool_tree.h"
#include "core/value.h"

/* The offloading_settings that apply to an operation of user in tree whose specified pool is
 * pool_name (see above): a map with at least one entry, or NULL. Valid while the tree's pools
 * are unchanged. */
const struct ps_value *ps_pool_tree_offloading_settings(const struct ps_pool_tree *tree,
                                                        const char *pool_name, const char *user);

/* Adds to spec (an operation's own copy; its pool_trees are trees[0..*count)) and to trees[]
 * the offload trees of the operation of user (see above), each with its scheduling options.
 * find_tree looks a tree up by name (NULL: none). trees must have room for every tree the
 * strategy has. 0, PS_EINVAL (settings that do not parse: they were checked when set) or
 * PS_ENOMEM; on error spec and trees may hold some of the trees added. */
int ps_offloading_add_trees(struct ps_operation_spec *spec, const char *user,
                            struct ps_pool_tree **trees, int *count,
                            struct ps_pool_tree *(*find_tree)(void *ctx, const char *name),
                            void *ctx, struct ps_error *err);

#endif
