/* offloading_settings.h — a pool's offloading_settings (upstream's TOffloadingSettings: pool
 * tree name -> TOffloadingPoolSettingsConfig), below the pool's config that checks them; the
 * trees an operation is offloaded to are offloading.h's.
 *
 * offloading_settings maps a pool tree name to
 *   pool              string          the pool there ("" or unset: the operation's specified
 *                                     pool name, its spec's pool or its user's name)
 *   weight            number > 0      the operation's weight there (unset: 1)
 *   resource_limits   resources       the operation's limits there
 *   tentative         bool (false)    accepted and kept; an offload tree is a regular tree of
 *                                     the operation (core/tentative.h: the spec's own)
 */
#ifndef PS_CORE_OFFLOADING_SETTINGS_H
#define PS_CORE_OFFLOADING_SETTINGS_H

#include <stdbool.h>

#include "core/attr.h"
#include "core/error.h"
#include "core/resources.h"
#include "core/value.h"

struct ps_offloading_pool_settings {
    char *pool;                           /* owned, NULL when unset */
    struct ps_opt_double weight;
    struct ps_resources_opt resource_limits;
    bool tentative;
};

/* Checks an offloading_settings value: null or a map of pool tree names to maps of the keys
 * above. 0 or PS_EINVAL naming the tree, the key, the value and the reason. */
int ps_offloading_settings_check(const struct ps_value *settings, struct ps_error *err);

/* The entry of tree, entry, parsed into *out: 0 (release *out) or PS_EINVAL as above, *out
 * released. */
int ps_offloading_settings_parse(const char *tree, const struct ps_value *entry,
                                 struct ps_offloading_pool_settings *out, struct ps_error *err);

void ps_offloading_settings_release(struct ps_offloading_pool_settings *s);

#endif
