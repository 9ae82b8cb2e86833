/* pool_tree_impl.h — the inside of struct ps_pool_tree, shared by pool_tree*.c, tree_ops.c,
 * tree_nodes.c, tree_fs.c and strategy.c. Not part of the public API.
 */
#ifndef PS_CORE_POOL_TREE_IMPL_H
#define PS_CORE_POOL_TREE_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/nodes.h"
#include "core/operation.h"
#include "core/pool_tree.h"
#include "core/strmap.h"

struct ps_tree_owner_ops;

struct ps_filter_cache_entry {
    char *text;                     /* owned filter text (the cache key) */
    struct ps_resources limits;     /* the sum of their limits */
    struct ps_resources max;        /* the componentwise maximum of their limits (zero: none) */
    int node_count;                 /* nodes satisfying the filter */
};

struct ps_pool_tree {
    char *name;
    struct ps_tree_config config;           /* effective: defaults, templates, explicit_config */
    struct ps_value explicit_config;        /* the keys set on the tree (canonical names) */
    struct ps_value templates;              /* the merged templates matching the tree (map) */
    struct ps_value custom;                 /* the tree object's custom attributes (map) */
    struct ps_formula *nodes_filter;        /* NULL when empty */

    struct ps_pool *root;
    struct ps_pool **pools;                 /* non-root pools in creation order */
    int pool_count, pool_capacity;
    struct ps_strmap pools_by_name;         /* every pool except the root */
    int64_t next_pool_seq;

    struct ps_tree_op **ops;                /* registration order */
    int op_count, op_capacity;
    struct ps_strmap ops_by_id;
    int64_t next_op_seq;
    struct ps_tree_op **pending;            /* start order */
    int pending_count, pending_capacity;
    struct ps_tree_op **started;            /* ops that became running in the last call */
    int started_count, started_capacity;
    struct ps_tree_op **moved;              /* ops the last call moved to another pool */
    int moved_count, moved_capacity;

    struct ps_node **nodes;                 /* borrowed, in insertion order */
    int node_count, node_capacity;
    struct ps_resources total;
    struct ps_resources max_limits;         /* componentwise maximum of the nodes' limits */
    struct ps_filter_cache_entry *cache;
    int cache_count, cache_capacity;
    bool has_connect_time;
    int64_t connected_at_ms;

    /* The strategy that holds the tree (NULL: a tree alone) and what the tree asks of it,
     * both set by the strategy: the tree calls its owner only through owner_ops. */
    void *owner;
    const struct ps_tree_owner_ops *owner_ops;
    uint64_t generation;                    /* bumped by every change (tree_fs.h) */
    bool has_previous_update;
    int64_t previous_update_ms;
};

/* Grows an array of pointers to hold one more; 0 or PS_ENOMEM. */
int ps_tree_reserve(void ***items, int *capacity, int count);

/* Validation of a prospective change, see pool_validate.c. `pool` is the pool being changed
 * (NULL for a pool being created, then `name` names it), `config` its prospective config and
 * `parent` its prospective parent. Also checks the pool against its own children. */
int ps_tree_validate_pool(const struct ps_pool_tree *tree, const struct ps_pool *pool,
                          const char *name, const struct ps_pool_config *config,
                          const struct ps_pool *parent, struct ps_error *err);
/* Every pool's strong guarantees against a prospective main resource. */
int ps_tree_validate_main_resource(const struct ps_pool_tree *tree, int main_resource,
                                   struct ps_error *err);

/* Pool bookkeeping (pool_tree.c). */
struct ps_pool *ps_tree_pool_new(struct ps_pool_tree *tree, const char *name,
                                 struct ps_pool *parent, struct ps_error *err);
void ps_tree_pool_unlink(struct ps_pool_tree *tree, struct ps_pool *pool);
void ps_tree_pool_free(struct ps_pool *pool);
/* The effective config of a pool with explicit config explicit_cfg in tree (into uninitialised
 * *out, see ps_pool_config_effective) and, in *issue (owned, NULL when none), why its preset
 * is not applied. Returns 0 or PS_ENOMEM (nothing to release then). */
int ps_tree_pool_effective(const struct ps_pool_tree *tree, const struct ps_pool_config *explicit_cfg,
                           struct ps_pool_config *out, char **issue);
/* Gives pool these configs and issue (all taken; explicit_cfg NULL keeps the explicit config)
 * and a new config_version. */
void ps_tree_pool_set_configs(struct ps_pool *pool, struct ps_pool_config *explicit_cfg,
                              struct ps_pool_config *effective, char *issue);
/* A new ps_pool.config_version: call it whenever a pool's config is changed. */
uint64_t ps_tree_pool_config_version_next(void);
/* Moves counts of a subtree from its old ancestors to new ones and relinks it. */
void ps_tree_pool_reparent(struct ps_pool *pool, struct ps_pool *new_parent);
/* A removed explicit pool that still has operations, as upstream's pools update does: it keeps
 * them as an ephemeral pool (no user's) of default config with the ephemeral_subpool_config of
 * its new parent, the default parent for a user of its name (the root when that is the pool
 * itself), and goes once empty. 0 or PS_ENOMEM (nothing changed). */
int ps_tree_pool_make_ephemeral(struct ps_pool_tree *tree, struct ps_pool *pool);
/* Removes pool and its ancestors while they are ephemeral and empty. */
void ps_tree_remove_empty_ephemeral(struct ps_pool_tree *tree, struct ps_pool *pool);

/* Empties the lists of started and moved operations (at the start of each changing call). */
void ps_tree_begin_change(struct ps_pool_tree *tree);
/* Room in tree->moved for every operation, so that the move below cannot fail: 0 or
 * PS_ENOMEM. */
int ps_tree_reserve_moves(struct ps_pool_tree *tree);
/* Once hub has no create_ephemeral_subpools, the operations of its user subpools (hub$user,
 * created while it had) move into hub itself and the subpools, left empty, go, as upstream's
 * pools update does with stale ephemeral pools. Each moved operation is listed in tree->moved;
 * a running one stays running (the counts from hub up do not change). */
void ps_tree_move_out_of_stale_subpools(struct ps_pool_tree *tree, struct ps_pool *hub);
/* Starts the pending operations that fit now, within the current change (the lists of started
 * and moved operations are kept). */
void ps_tree_run_pending(struct ps_pool_tree *tree);

/* What a tree asks of the strategy that holds it (strategy.c fills one table for all its
 * trees), called with tree->owner. Callbacks rather than calls to ps_strategy_*: the strategy
 * owns the trees, a tree does not reach up into it. */
struct ps_tree_owner_ops {
    /* a changing call begins (ps_tree_begin_change) */
    void (*begin)(void *owner);
    /* op became running in the tree */
    void (*op_running)(void *owner, struct ps_tree_op *op);
    /* The tree's nodes_filter is about to change: 0 or the refusal (it overlaps another
     * tree's); then, once it changed, the owner places the nodes again. */
    int (*check_filter)(void *owner, struct ps_pool_tree *tree, const struct ps_formula *filter,
                        struct ps_error *err);
    void (*apply_filter)(void *owner, struct ps_pool_tree *tree);
    /* the users and groups the pools' ACLs name (NULL: no ACL check) */
    const struct ps_pool_access *(*access)(const void *owner);
    /* The user -> default parent pool map: a copy into *out (0 or PS_ENOMEM); the pool it names
     * for user, or NULL. */
    int (*user_default_pools)(const void *owner, struct ps_value *out);
    const char *(*user_default_pool)(const void *owner, const char *user);
};

/* Invalidates the filter-limits cache (tree_nodes.c). */
void ps_tree_invalidate_filter_cache(struct ps_pool_tree *tree);
void ps_tree_nodes_release(struct ps_pool_tree *tree);

/* A tree document is its config plus an optional "pools" list: *rest gets a copy of config
 * without "pools" (null when there is none: use config itself), *pools the list or NULL. */
int ps_tree_split_pools(const struct ps_value *config, struct ps_value *rest, const struct ps_value **pools);

/* Operation bookkeeping (tree_ops.c). */
/* After pool's config changed: its running operations count as lightweight or regular as
 * ps_pool_lightweight_enabled now says (its pending ones start in the next run_pending). */
void ps_tree_reaccount_lightweight(struct ps_pool_tree *tree, struct ps_pool *pool);
void ps_tree_ops_release(struct ps_pool_tree *tree);

#endif
