/* pool_name.h — the rules of a pool's name, below every file that names pools (the pool's and
 * the tree's config, the offloading settings, the pool tree).
 *
 * An explicit pool name is 1..100 characters of ASCII letters, digits, `_`, `-` and `:`;
 * `<Root>` is reserved and `$` is reserved for ephemeral subpools. The same rule applies to the
 * names of ephemeral pools created from an operation's spec (upstream's
 * ephemeral_pool_name_regex "[-_a-z0-9:A-Z]+").
 */
#ifndef PS_CORE_POOL_NAME_H
#define PS_CORE_POOL_NAME_H

#include "core/error.h"

#define PS_ROOT_POOL_NAME "<Root>"
/* Longest pool name (upstream PoolNameMaxLength). */
#define PS_POOL_NAME_MAX 100
/* Delimiter of ephemeral subpool names `<pool>$<user>`. */
#define PS_EPHEMERAL_DELIMITER '$'

/* Checks name by the rules above. Returns 0 or PS_EINVAL naming key and value. */
int ps_pool_name_check(const char *key, const char *name, struct ps_error *err);

#endif
