/* api_cypress_impl.h — what the Cypress tree's files share: a path resolved (api_cypress.c), the
 * paths other parts of the service answer, and the dry run in progress. api_cypress.c resolves
 * and reads, api_cypress_write.c writes, api_cypress_dry.c runs a write on a copy. Under
 * svc->mu, as every command. */
#ifndef PS_SERVER_API_CYPRESS_IMPL_H
#define PS_SERVER_API_CYPRESS_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/error.h"
#include "io/ypath.h"

struct ps_service;
struct ps_pool_tree;
struct ps_pool;
struct ps_auth_identity;

enum target_kind { T_ROOT, T_SYS, T_TREES, T_TREE, T_POOL, T_ORCHID };

struct target {
    enum target_kind kind;
    struct ps_pool_tree *tree;
    struct ps_pool *pool;          /* T_POOL */
    struct ps_ypath p;
    size_t node_base;              /* T_ORCHID: index of the first node after "orchid" */
    char key[1024];                /* attrs joined by '/' */
    bool has_attr;                 /* attrs given (key is set) */
    bool all_attrs;
    bool in_config;                /* T_TREE: addressed through @config */
};

/* A dry run in progress (ps_cypress_dry_run): paths into the tree named `name` resolve to
 * `copy`, and a successful change is neither applied elsewhere, journalled nor logged. Only
 * ever set for the length of one command, and every command runs under svc->mu, which guards
 * it. */
struct ps_cypress_dry {
    const char *name;
    struct ps_pool_tree *copy;
};
extern struct ps_cypress_dry ps_cypress_dry;

/* The tree named name: the dry run's copy while one runs on it. */
struct ps_pool_tree *ps_cypress_find_tree(struct ps_service *svc, const char *name);
/* Parses and resolves path into t (released with ps_cypress_target_release, also on failure).
 * upto: resolve only node_count - upto nodes (create resolves the parent). */
int ps_cypress_resolve(struct ps_service *svc, const char *path, struct target *t, size_t upto,
                       struct ps_error *err);
void ps_cypress_target_release(struct target *t);
/* Whether t addresses a custom attribute of a tree object (pool_tree.h): an attribute of the
 * tree, not through @config, that is no tree config key nor one of the object's own. */
bool ps_cypress_tree_custom_key(const struct target *t);
int ps_cypress_require_admin(struct ps_service *svc, const struct ps_auth_identity *who,
                             const char *what, struct ps_error *err);

/* A part of the service that answers its own paths (node health, the user-to-pool map, the
 * scheduler's configuration), or NULL for the pool trees' own paths. */
struct special;
const struct special *ps_cypress_special_of(const char *path);
/* set or remove (value NULL) on a special path, by the superuser only. */
int ps_cypress_special_set(struct ps_service *svc, const struct special *sp,
                           const struct ps_auth_identity *who, const char *path,
                           const json_t *value, struct ps_error *err);

#endif
