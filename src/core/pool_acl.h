/* pool_acl.h — permissions on pool trees and pools (core/acl.h's check on the pool hierarchy).
 *
 * The objects, as upstream's Cypress has them: //sys/pool_trees (the root: an ACL the caller
 * keeps, by default one ACE allowing `use` to the group `users`), each tree (its config's acl
 * and inherit_acl, tree_config.h) and each explicit pool (its config's acl and inherit_acl,
 * pool_config.h). A pool's chain is the pool, its explicit ancestors, its tree and the root;
 * an ephemeral pool has no ACL and inherits. Messages name objects as upstream's do:
 * `node //sys/pool_trees/<tree>/<pool>/<subpool>`.
 *
 * The groups and the root ACL are the caller's (the service's users and groups; the simulator
 * has none): a strategy carries them (ps_strategy_set_access) for the `use` check of every
 * operation start and pool change. A superuser (core/acl.h) or the access's acting_superuser
 * is allowed everything.
 */
#ifndef PS_CORE_POOL_ACL_H
#define PS_CORE_POOL_ACL_H

#include "core/acl.h"
#include "core/pool_tree.h"

struct ps_pool_access {
    const struct ps_acl_groups *groups;     /* NULL: no groups beyond the built-ins */
    const struct ps_acl *pool_trees_acl;    /* //sys/pool_trees; NULL: the default */
    /* a user allowed everything besides the members of superusers (the service's caller
     * holding an admin token, while its request runs); NULL: none */
    const char *acting_superuser;
};

/* The default ACL of //sys/pool_trees: allow `use` to `users`. Returns 0 or PS_ENOMEM. */
int ps_pool_trees_default_acl(struct ps_acl *out);

/* Checks permission (one bit) for user on pool (NULL: the tree object itself; tree NULL too:
 * //sys/pool_trees). access NULL: no groups, the default root ACL. */
enum ps_acl_action ps_pool_acl_check(const struct ps_pool_access *access,
                                     const struct ps_pool_tree *tree, const struct ps_pool *pool,
                                     const char *user, unsigned permission);

/* The effective ACL of pool (NULL: the tree; tree NULL too: //sys/pool_trees), as
 * ps_acl_effective: the pool's own ACEs and those it inherits, each with where it is set.
 * Returns 0 or PS_ENOMEM. */
int ps_pool_acl_effective(const struct ps_pool_access *access, const struct ps_pool_tree *tree,
                          const struct ps_pool *pool, struct ps_value *out);

/* As ps_pool_acl_check, and a denial becomes upstream's authorization error (PS_EPERM). */
int ps_pool_acl_require(const struct ps_pool_access *access, const struct ps_pool_tree *tree,
                        const struct ps_pool *pool, const char *user, unsigned permission,
                        struct ps_error *err);

#endif
