/* user_pools.c — the user-to-default-parent-pool map in trees (user_pools.h). */
#include "core/user_pools.h"

#include <stdio.h>
#include <string.h>

#include "core/pool_tree_impl.h"

#define KEY "user_to_default_pool"

/* The map's shape alone: a map of strings, each a valid pool name. */
int ps_user_default_pools_check(const struct ps_value *map, struct ps_error *err)
{
    if (!map || map->type == PS_VALUE_NULL)
        return 0;
    if (map->type != PS_VALUE_MAP) {
        char buf[64];
        return ps_error_set(err, PS_EINVAL,
                            KEY ": must be a map of user names to pool names, got %s",
                            ps_value_describe(map, buf, sizeof buf));
    }
    for (int i = 0; i < map->count; i++) {
        const char *user = map->keys[i];
        const struct ps_value *v = &map->items[i];
        if (user[0] == '\0')
            return ps_error_set(err, PS_EINVAL, KEY ": a user name must not be empty");
        if (v->type != PS_VALUE_STRING) {
            char buf[64];
            return ps_error_set(err, PS_EINVAL, KEY "/%s: must be a pool name (a string), got %s",
                                user, ps_value_describe(v, buf, sizeof buf));
        }
        char key[300];
        snprintf(key, sizeof key, KEY "/%s", user);
        int rc = ps_pool_name_check(key, v->string, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int ps_pool_tree_check_user_default_pools(const struct ps_pool_tree *tree,
                                          const struct ps_value *map, struct ps_error *err)
{
    int rc = ps_user_default_pools_check(map, err);
    if (rc != 0 || !map || map->type != PS_VALUE_MAP)
        return rc;
    for (int i = 0; i < map->count; i++) {
        const char *pool_name = map->items[i].string;
        const struct ps_pool *pool = ps_pool_tree_find_pool(tree, pool_name);
        if (!pool || pool->ephemeral)
            return ps_error_set(err, PS_EINVAL,
                                KEY "/%s: user default parent pool \"%s\" is %s in pool tree "
                                "\"%s\" (use_user_default_parent_pool_map)",
                                map->keys[i], pool_name, pool ? "ephemeral" : "missing",
                                ps_pool_tree_name(tree));
    }
    return 0;
}

/* A pool an ephemeral pool may go under: explicit and not fifo (upstream skips a fifo one). */
static struct ps_pool *usable(const struct ps_pool_tree *tree, const char *name)
{
    struct ps_pool *pool = name ? ps_pool_tree_find_pool(tree, name) : NULL;
    if (!pool || pool->is_root || pool->ephemeral || pool->config.mode == PS_MODE_FIFO)
        return NULL;
    return pool;
}

static const char *mapped_pool(const struct ps_pool_tree *tree, const char *user)
{
    if (!user || !tree->owner || !tree->config.use_user_default_parent_pool_map)
        return NULL;
    return tree->owner_ops->user_default_pool(tree->owner, user);
}

struct ps_pool *ps_pool_tree_default_parent_for(const struct ps_pool_tree *tree, const char *user)
{
    struct ps_pool *pool = usable(tree, mapped_pool(tree, user));
    return pool ? pool : ps_pool_tree_default_parent(tree);
}

int ps_pool_tree_actualize_ephemeral_parents(struct ps_pool_tree *tree)
{
    int moved = 0;
    for (int i = 0; i < tree->pool_count; i++) {
        struct ps_pool *pool = tree->pools[i];
        if (!pool->ephemeral || !pool->ephemeral_in_default_parent)
            continue;
        struct ps_pool *parent = usable(tree, mapped_pool(tree, pool->ephemeral_user));
        if (!parent || parent == pool->parent)
            continue;
        ps_tree_pool_reparent(pool, parent);
        /* an ephemeral pool's config is its parent's ephemeral_subpool_config, else defaults */
        struct ps_pool_config cfg;
        if (ps_pool_config_init_ephemeral(&cfg, &parent->config) == 0) {
            ps_pool_config_release(&pool->config);
            pool->config = cfg;
            pool->config_version = ps_tree_pool_config_version_next();
        }
        moved++;
    }
    return moved;
}

int ps_tree_pool_make_ephemeral(struct ps_pool_tree *tree, struct ps_pool *pool)
{
    /* upstream asks for the default parent of a user named as the pool */
    struct ps_pool *parent = ps_pool_tree_default_parent_for(tree, pool->name);
    if (parent == pool)
        parent = tree->root;
    struct ps_pool_config explicit_cfg, cfg;
    if (ps_pool_config_init(&explicit_cfg) != 0)
        return PS_ENOMEM;
    if (ps_pool_config_init_ephemeral(&cfg, parent->is_root ? NULL : &parent->config) != 0) {
        ps_pool_config_release(&explicit_cfg);
        return PS_ENOMEM;
    }
    ps_tree_pool_set_configs(pool, &explicit_cfg, &cfg, NULL);
    ps_formula_free(pool->filter);
    pool->filter = NULL;
    pool->ephemeral = true;
    pool->ephemeral_in_default_parent = false;
    if (pool->parent != parent)
        ps_tree_pool_reparent(pool, parent);
    ps_tree_reaccount_lightweight(tree, pool);
    return 0;
}
