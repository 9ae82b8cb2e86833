/* tree_template.h — the scheduler config's template_pool_tree_config_map: tree config keys
 * shared by every pool tree whose name a template's regex matches, as upstream's
 * TPoolTreesTemplateConfig (yt/yt/server/lib/scheduler/config.h) and its use in the strategy's
 * BuildConfig.
 *
 * The map is template name -> {"priority": integer, "filter": regex, "config": {tree config}}.
 * A tree's config is built from the defaults, then the config of every template whose filter
 * matches the whole tree name (POSIX extended regex; upstream's RE2 FullMatch), lowest
 * priority first, then the tree's own attributes: a higher priority wins over a lower one and
 * the tree's own attributes over every template. Maps merge key by key (upstream's PatchNode);
 * the tree's own attributes replace whole top-level keys.
 *
 * Two templates of equal priority are refused, with upstream's words:
 *   "template_pool_tree_config_map" has equal priority for templates "pool" and "custom_"
 * as are a bad filter, an unknown key of a template and a config that is not a valid tree
 * config on its own (its message names the template). A template without filter matches no
 * tree.
 */
#ifndef PS_CORE_TREE_TEMPLATE_H
#define PS_CORE_TREE_TEMPLATE_H

#include "core/error.h"
#include "core/value.h"

/* Checks a template_pool_tree_config_map. Returns 0, PS_EINVAL (see above) or PS_ENOMEM. */
int ps_tree_templates_check(const struct ps_value *map, struct ps_error *err);

/* The merged config of the templates (checked by ps_tree_templates_check; NULL for none)
 * matching tree_name, into *out (a new map, empty when none matches). Returns 0 or PS_ENOMEM. */
int ps_tree_templates_compile(const struct ps_value *map, const char *tree_name, struct ps_value *out);

/* Patches dst with src: maps merge key by key, recursively; anything else replaces. Returns 0
 * or PS_ENOMEM (dst may then be partly patched). */
int ps_value_patch(struct ps_value *dst, const struct ps_value *src);

#endif
