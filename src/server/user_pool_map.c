/* user_pool_map.c — //sys/scheduler/user_to_default_pool, upstream's document mapping users to
 * their default parent pools (core/user_pools.h), served through the Cypress commands:
 *   get, exists   //sys/scheduler/user_to_default_pool          the map
 *                 //sys/scheduler/user_to_default_pool/<user>   one user's pool
 *   set           the whole map (null: empty), or one user's pool
 *   remove        the whole map (empty afterwards), or one user
 * Every write is validated by the engine against every tree using the map before anything
 * changes, journalled before it is acknowledged ("meta" document "user_to_default_pool") and
 * restored after a restart before the operations, so that restored ephemeral pools go where the
 * map puts them. */
#include "server/user_pool_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/user_pools.h"
#include "io/json_value.h"
#include "io/ypath.h"
#include "server/journal.h"
#include "server/persist.h"
#include "server/service_state.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"

#define MAP_PATH "//sys/scheduler/user_to_default_pool"
#define META_KEY "user_to_default_pool"

bool ps_user_pool_map_claims(const char *path)
{
    size_t k = strlen(MAP_PATH);
    return path && strncmp(path, MAP_PATH, k) == 0 && (path[k] == '\0' || path[k] == '/');
}

/* The user a path names (NULL for the map itself) into user[size]. */
static int parse(const char *path, char *user, size_t size, bool *whole, struct ps_error *err)
{
    struct ps_ypath p;
    ps_ypath_init(&p);
    int rc = ps_ypath_parse(path, &p, err);
    if (rc == 0 && (p.attr_count > 0 || p.all_attrs))
        rc = ps_error_set(err, PS_EINVAL, "%s: the map has no attributes", path);
    if (rc == 0 && p.node_count > 4)
        rc = ps_error_set(err, PS_ENOENT, "path %s does not exist: " MAP_PATH
                          " holds user names to pool names", path);
    *whole = rc == 0 && p.node_count == 3;
    if (rc == 0 && !*whole)
        snprintf(user, size, "%s", p.nodes[3]);
    ps_ypath_release(&p);
    return rc;
}

static json_t *map_json(struct ps_service *svc)
{
    struct ps_value v;
    if (ps_strategy_user_default_pools(svc->strategy, &v) != 0)
        return NULL;
    json_t *j = ps_value_to_json(&v);
    ps_value_release(&v);
    return j;
}

int ps_user_pool_map_get(struct ps_service *svc, const char *path, json_t **out,
                         struct ps_error *err)
{
    char user[256];
    bool whole;
    int rc = parse(path, user, sizeof user, &whole, err);
    if (rc != 0)
        return rc;
    if (whole) {
        *out = map_json(svc);
        return *out ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    const char *pool = ps_strategy_user_default_pool(svc->strategy, user);
    if (!pool)
        return ps_error_set(err, PS_ENOENT, "path %s does not exist: no default parent pool for "
                            "user \"%s\"", path, user);
    *out = json_string(pool);
    return 0;
}

/* Starts what the change started (an ephemeral pool that moved away from a full ancestor) and
 * marks every tree for a fair share update. */
static void applied(struct ps_service *svc)
{
    ps_svc_log_activated(svc);
    for (int i = 0; i < ps_strategy_tree_count(svc->strategy); i++) {
        struct ps_svc_tree_state *ts =
            ps_svc_tree(svc, ps_pool_tree_name(ps_strategy_tree_at(svc->strategy, i)));
        if (ts)
            ts->dirty = true;
    }
    pthread_cond_broadcast(&svc->loop_cv);
}

/* value NULL: remove (the whole map, or one user). */
int ps_user_pool_map_set(struct ps_service *svc, const char *path, const json_t *value,
                         struct ps_error *err)
{
    char user[256];
    bool whole;
    int rc = parse(path, user, sizeof user, &whole, err);
    if (rc != 0)
        return rc;
    json_t *next = whole ? (value && !json_is_null(value) ? json_deep_copy(value) : json_object())
                         : map_json(svc);
    if (!next)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (!whole && !value && !json_object_get(next, user))
        rc = ps_error_set(err, PS_ENOENT, "path %s does not exist: no default parent pool for "
                          "user \"%s\"", path, user);
    else if (!whole && !value)
        json_object_del(next, user);
    else if (!whole)
        json_object_set(next, user, (json_t *)value);
    struct ps_value v;
    if (rc == 0 && (rc = ps_json_to_value(next, &v, err)) == 0) {
        rc = ps_strategy_set_user_default_pools(svc->strategy, &v, true, err);
        ps_value_release(&v);
    }
    json_decref(next);
    if (rc != 0)
        return rc;
    if (svc->journal)
        ps_journal_put(svc->journal, "meta", META_KEY, json_pack("{s:o}", "map", map_json(svc)));
    applied(svc);
    ps_svc_log(svc, "info", "config_changed", "path=%s", path);
    return 0;
}

int ps_user_pool_map_load(struct ps_service *svc, struct ps_error *err)
{
    json_t *doc = NULL;
    int rc = ps_persist_meta_get(svc, META_KEY, &doc, err);
    if (rc == 0 && !doc)
        return 0;   /* never set */
    struct ps_value v;
    if (rc == 0)
        rc = ps_json_to_value(json_object_get(doc, "map"), &v, err);
    json_decref(doc);
    /* not checked against the trees again: a pool removed since sends its users to the
     * default parent, as upstream keeps its last accepted map */
    if (rc == 0) {
        rc = ps_strategy_set_user_default_pools(svc->strategy, &v, false, err);
        ps_value_release(&v);
    }
    if (rc != 0)
        ps_error_prefix(err, "stored " MAP_PATH);
    return rc;
}
