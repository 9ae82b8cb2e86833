/* api_cypress.c — the Cypress-like tree of pool trees: get, set, list, create, remove, exists.
 *
 * Paths (docs/api.md): //sys/pool_trees[/@default_tree], //sys/pool_trees/<tree>[/@<key>...],
 * //sys/pool_trees/<tree>/<pool>/<subpool>...[/@<key>...], //sys/pools/... (the default tree),
 * //sys/scheduler/orchid/... (read-only, api_orchid.c). Every attribute goes through the
 * engine's table-driven setters and getters (tree_config.h, pool_config.h), which validate the
 * whole tree before anything changes; a refused write leaves the state and the store untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_value.h"
#include "core/tree_sched.h"
#include "io/ypath.h"
#include "server/alerts.h"
#include "server/node_health.h"
#include "server/node_tags.h"
#include "server/event_log.h"
#include "server/service.h"
#include "server/user_pool_map.h"

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
static struct {
    const char *name;
    struct ps_pool_tree *copy;
} dry;

static struct ps_pool_tree *find_tree(struct ps_service *svc, const char *name)
{
    if (dry.copy && name && strcmp(name, dry.name) == 0)
        return dry.copy;
    return ps_strategy_find_tree(svc->strategy, name);
}

static void target_release(struct target *t)
{
    ps_ypath_release(&t->p);
}

static int not_found(struct ps_error *err, const char *path, const char *why)
{
    return ps_error_set(err, PS_ENOENT, "path %s does not exist: %s", path, why);
}

/* Resolves pool names nodes[first..count) in tree: each pool's parent is the previous one. */
static int resolve_pool(struct ps_pool_tree *tree, char **nodes, size_t first, size_t count,
                        const char *path, struct ps_pool **out, struct ps_error *err)
{
    const char *parent = "<Root>";
    struct ps_pool *p = NULL;
    for (size_t i = first; i < count; i++) {
        p = ps_pool_tree_find_pool(tree, nodes[i]);
        if (!p || p->ephemeral || p->is_root) {
            char why[512];
            snprintf(why, sizeof why, "no pool \"%s\" in pool tree \"%s\"", nodes[i],
                     ps_pool_tree_name(tree));
            return not_found(err, path, why);
        }
        const char *actual = p->parent ? p->parent->name : "<Root>";
        if (strcmp(actual, parent) != 0) {
            char why[512];
            snprintf(why, sizeof why, "pool \"%s\" is a child of \"%s\", not of \"%s\"", nodes[i],
                     actual, parent);
            return not_found(err, path, why);
        }
        parent = p->name;
    }
    *out = p;
    return 0;
}

/* A tree's attributes are its config, also reachable as YTsaurus spells them: `@config` is
 * the whole map (as `@`), `@config/<key>` one key. */
static void tree_config_attr(struct target *t)
{
    if (!t->has_attr || strncmp(t->key, "config", 6) != 0 ||
        (t->key[6] != '\0' && t->key[6] != '/'))
        return;
    t->in_config = true;
    if (t->key[6] == '\0') {
        t->has_attr = false;
        t->all_attrs = true;
        t->key[0] = '\0';
    } else if (t->key[6] == '/') {
        memmove(t->key, t->key + 7, strlen(t->key + 7) + 1);
    }
}

/* Whether t addresses a custom attribute of a tree object (pool_tree.h): an attribute of the
 * tree, not through @config, that is no tree config key nor one of the object's own. */
static bool tree_custom_key(const struct target *t)
{
    static const char *const own[] = {"type", "name", "id", "effective_acl", "config",
                                      "parent_name"};
    if (t->kind != T_TREE || !t->has_attr || t->in_config || ps_tree_config_is_key(t->key))
        return false;
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (strcmp(t->key, own[i]) == 0)
            return false;
    return true;
}

/* Parses and resolves path. upto: resolve only node_count - upto nodes (create resolves the
 * parent). */
static int resolve(struct ps_service *svc, const char *path, struct target *t, size_t upto,
                   struct ps_error *err)
{
    memset(t, 0, sizeof *t);
    ps_ypath_init(&t->p);
    if (!path)
        return ps_error_set(err, PS_EINVAL, "missing parameter \"path\"");
    int rc = ps_ypath_parse(path, &t->p, err);
    if (rc != 0)
        return rc;
    t->all_attrs = t->p.all_attrs;
    if (t->p.attr_count > 0) {
        t->has_attr = true;
        size_t used = 0;
        for (size_t i = 0; i < t->p.attr_count; i++) {
            int n = snprintf(t->key + used, sizeof t->key - used, "%s%s", i ? "/" : "",
                             t->p.attrs[i]);
            if (n < 0 || (size_t)n >= sizeof t->key - used)
                return ps_error_set(err, PS_EINVAL, "attribute path too long in %s", path);
            used += (size_t)n;
        }
    }
    char **nodes = t->p.nodes;
    size_t n = t->p.node_count - (upto <= t->p.node_count ? upto : t->p.node_count);
    if (n == 0) {
        t->kind = T_ROOT;
        return 0;
    }
    if (strcmp(nodes[0], "sys") != 0)
        return not_found(err, path, "only //sys is served");
    if (n == 1) {
        t->kind = T_SYS;
        return 0;
    }
    size_t tree_at = 2;   /* index of the first pool name */
    if (strcmp(nodes[1], "scheduler") == 0) {
        if (n >= 3 && strcmp(nodes[2], "orchid") == 0) {
            t->kind = T_ORCHID;
            t->node_base = 3;
            if (t->has_attr || t->all_attrs)
                return ps_error_set(err, PS_EINVAL, "orchid paths have no attributes: %s", path);
            return 0;
        }
        return not_found(err, path, "//sys/scheduler serves orchid, event_log, @alerts and "
                                    "user_to_default_pool");
    }
    if (strcmp(nodes[1], "pools") == 0) {
        const char *d = ps_strategy_default_tree(svc->strategy);
        if (!d)
            return not_found(err, path, "there is no default pool tree (//sys/pool_trees/@default_tree)");
        t->tree = find_tree(svc, d);
        tree_at = 2;
        if (n == 2) {
            t->kind = T_TREE;
            tree_config_attr(t);
            return 0;
        }
    } else if (strcmp(nodes[1], "pool_trees") == 0) {
        if (n == 2) {
            t->kind = T_TREES;
            return 0;
        }
        t->tree = find_tree(svc, nodes[2]);
        if (!t->tree) {
            char why[300];
            snprintf(why, sizeof why, "no pool tree \"%s\"", nodes[2]);
            return not_found(err, path, why);
        }
        tree_at = 3;
        if (n == 3) {
            t->kind = T_TREE;
            tree_config_attr(t);
            return 0;
        }
    } else {
        return not_found(err, path, "//sys has pool_trees, pools and scheduler");
    }
    if (!t->tree)
        return not_found(err, path, "no such pool tree");
    t->kind = T_POOL;
    return resolve_pool(t->tree, nodes, tree_at, n, path, &t->pool, err);
}

/* ---- reading ---------------------------------------------------------------------------- */

static json_t *pool_children(struct ps_pool_tree *tree, const struct ps_pool *parent)
{
    json_t *m = json_object();
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        if (p->ephemeral || p->parent != parent)
            continue;
        json_object_set_new(m, p->name, pool_children(tree, p));
    }
    return m;
}

static json_t *drop_nulls(json_t *o)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(o, tmp, k, v) if (json_is_null(v)) json_object_del(o, k);
    return o;
}

static json_t *value_json_take(struct ps_value *v)
{
    json_t *j = ps_value_to_json(v);
    ps_value_release(v);
    return j;
}

/* get on an attribute: PS_EINVAL from a getter means an unknown key: not found. */
static int attr_missing(struct ps_error *err, const char *path)
{
    char msg[PS_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", err->msg);
    ps_error_init(err);
    return ps_error_set(err, PS_ENOENT, "attribute %s does not exist: %s", path, msg);
}

static int get_target(struct ps_service *svc, struct target *t, const char *path, json_t **out,
                      struct ps_error *err)
{
    struct ps_value v = ps_value_null();
    int rc;
    if ((t->kind == T_ROOT || t->kind == T_SYS) && t->has_attr)   /* as upstream: a resolve error */
        return ps_error_set(err, PS_ENOENT, "attribute %s does not exist: // and //sys have no attributes",
                            path);
    if ((t->kind == T_ROOT || t->kind == T_SYS) && t->all_attrs) {
        *out = json_object();
        return 0;
    }
    bool acl_object = t->kind == T_TREES || t->kind == T_TREE || t->kind == T_POOL;
    if (acl_object && t->has_attr && strcmp(t->key, "effective_acl") == 0) {   /* not in @ */
        if (ps_pool_acl_effective(ps_security_access(svc->security),
                                  t->kind == T_TREES ? NULL : t->tree,
                                  t->kind == T_POOL ? t->pool : NULL, &v) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        *out = value_json_take(&v);
        return 0;
    }
    switch (t->kind) {
    case T_ROOT:
        *out = json_pack("{s:{}}", "sys");
        return 0;
    case T_SYS:
        *out = json_pack("{s:{}, s:{}, s:{}}", "pool_trees", "pools", "scheduler");
        return 0;
    case T_ORCHID:
        return ps_orchid_get(svc, t->p.nodes + t->node_base, t->p.node_count - t->node_base, out,
                             err);
    case T_TREES: {
        const char *d = ps_strategy_default_tree(svc->strategy);
        if (t->all_attrs) {
            *out = json_pack("{s:o, s:o}", "default_tree", d ? json_string(d) : json_null(),
                             "acl", ps_security_root_acl(svc->security));
            return 0;
        }
        if (t->has_attr && strcmp(t->key, "acl") == 0) {
            *out = ps_security_root_acl(svc->security);
            return *out ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
        }
        if (t->has_attr) {
            if (strcmp(t->key, "default_tree") != 0)
                return ps_error_set(err, PS_ENOENT,
                                    "attribute %s does not exist: //sys/pool_trees has only "
                                    "@default_tree and @acl",
                                    path);
            *out = d ? json_string(d) : json_null();
            return 0;
        }
        json_t *m = json_object();
        for (int i = 0; i < ps_strategy_tree_count(svc->strategy); i++) {
            struct ps_pool_tree *tree = ps_strategy_tree_at(svc->strategy, i);
            json_object_set_new(m, ps_pool_tree_name(tree),
                                pool_children(tree, ps_pool_tree_root(tree)));
        }
        *out = m;
        return 0;
    }
    case T_TREE:
        if (t->has_attr && strcmp(t->key, "type") == 0) {
            *out = json_string("scheduler_pool_tree");
            return 0;
        }
        if (t->all_attrs) {
            if ((rc = ps_tree_config_to_value(ps_pool_tree_config(t->tree), &v)) != 0)
                return ps_error_set(err, PS_ENOMEM, "out of memory");
            *out = drop_nulls(value_json_take(&v));
            json_t *custom = t->in_config
                                 ? NULL
                                 : ps_value_to_json(ps_pool_tree_custom_attributes(t->tree));
            if (custom)
                json_object_update_missing(*out, custom);
            json_decref(custom);
            return 0;
        }
        if (tree_custom_key(t)) {
            const struct ps_value *c = ps_value_find(ps_pool_tree_custom_attributes(t->tree),
                                                     t->key);
            if (!c)
                return ps_error_set(err, PS_ENOENT, "attribute %s does not exist: not a pool "
                                    "tree config key nor a custom attribute set on the tree",
                                    path);
            *out = ps_value_to_json(c);
            return *out ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
        }
        if (t->has_attr) {
            if ((rc = ps_tree_config_get(ps_pool_tree_config(t->tree), t->key, &v, err)) != 0)
                return rc == PS_EINVAL ? attr_missing(err, path) : rc;
            *out = value_json_take(&v);
            return 0;
        }
        *out = pool_children(t->tree, ps_pool_tree_root(t->tree));
        return 0;
    case T_POOL:
        if (t->all_attrs) {
            if ((rc = ps_pool_config_to_value(ps_pool_explicit_config(t->pool), &v)) != 0)
                return ps_error_set(err, PS_ENOMEM, "out of memory");
            *out = drop_nulls(value_json_take(&v));
            return 0;
        }
        if (t->has_attr && strcmp(t->key, "type") == 0) {   /* upstream's object type */
            *out = json_string("scheduler_pool");
            return 0;
        }
        if (t->has_attr && (strcmp(t->key, "name") == 0 || strcmp(t->key, "parent_name") == 0)) {
            bool self = strcmp(t->key, "name") == 0 || !t->pool->parent;
            *out = json_string(self ? t->pool->name : t->pool->parent->name);
            return 0;
        }
        if (t->has_attr) {
            rc = ps_pool_tree_get_pool_attr(t->tree, t->pool->name, t->key, &v, err);
            if (rc != 0)
                return rc == PS_EINVAL ? attr_missing(err, path) : rc;
            *out = value_json_take(&v);
            return 0;
        }
        *out = pool_children(t->tree, t->pool);
        return 0;
    }
    return ps_error_set(err, PS_EINVAL, "bad path %s", path);
}

static int require_admin(struct ps_service *svc, const struct ps_auth_identity *who,
                         const char *what, struct ps_error *err)
{
    return ps_security_require_superuser(svc, who, what, err);
}

/* ---- the paths other parts of the service answer ------------------------------------------ */

static int node_health_set(struct ps_service *svc, const struct ps_auth_identity *who,
                           const char *path, const json_t *value, struct ps_error *err)
{
    return ps_node_health_set(svc, who ? who->user : NULL, path, value, err);
}

static int user_pool_map_set(struct ps_service *svc, const struct ps_auth_identity *who,
                             const char *path, const json_t *value, struct ps_error *err)
{
    (void)who;
    return ps_user_pool_map_set(svc, path, value, err);
}

static int sched_config_set(struct ps_service *svc, const struct ps_auth_identity *who,
                            const char *path, const json_t *value, struct ps_error *err)
{
    (void)who;
    return ps_sched_config_set(svc, path, value, err);
}

/* A part of the service that answers its own paths: get, set and remove (set with value NULL),
 * changes by the superuser only; a dry run refuses them. */
struct special {
    bool (*claims)(const char *path);
    int (*get)(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err);
    int (*set)(struct ps_service *svc, const struct ps_auth_identity *who, const char *path,
               const json_t *value, struct ps_error *err);
};

static const struct special specials[] = {
    /* //sys/cluster_nodes, //sys/scheduler/@alerts (node_health.h) */
    {ps_node_health_claims, ps_node_health_get, node_health_set},
    /* //sys/scheduler/user_to_default_pool (user_pool_map.h) */
    {ps_user_pool_map_claims, ps_user_pool_map_get, user_pool_map_set},
    /* the scheduler's configuration (service.h) */
    {ps_sched_config_claims, ps_sched_config_get, sched_config_set},
};

/* The part that answers path, or NULL: the pool trees' own paths. */
static const struct special *special_of(const char *path)
{
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        if (specials[i].claims(path))
            return &specials[i];
    return NULL;
}

/* set or remove (value NULL) on a special path, by the superuser only. */
static int special_set(struct ps_service *svc, const struct special *sp,
                       const struct ps_auth_identity *who, const char *path, const json_t *value,
                       struct ps_error *err)
{
    int rc = require_admin(svc, who, "changing the scheduler's configuration", err);
    return rc != 0 ? rc : sp->set(svc, who, path, value, err);
}

int ps_cypress_get(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err)
{
    const struct special *sp = special_of(path);
    if (sp)
        return sp->get(svc, path, out, err);
    struct target t;
    int rc = resolve(svc, path, &t, 0, err);
    if (rc == 0)
        rc = get_target(svc, &t, path, out, err);
    target_release(&t);
    if (rc == 0 && !*out)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    return rc;
}

int ps_cypress_exists(struct ps_service *svc, const char *path, bool *out, struct ps_error *err)
{
    if (ps_event_log_claims(path)) {   /* read by get only (event_log.h) */
        *out = true;
        return 0;
    }
    json_t *v = NULL;
    struct ps_error e;
    ps_error_init(&e);
    int rc = ps_cypress_get(svc, path, &v, &e);
    json_decref(v);
    *out = rc == 0;
    if (rc == PS_ENOENT || rc == 0)
        return 0;
    if (err)
        *err = e;
    return rc;
}

int ps_cypress_list(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err)
{
    json_t *v = NULL;
    int rc = ps_cypress_get(svc, path, &v, err);
    if (rc != 0)
        return rc;
    if (!json_is_object(v)) {
        json_decref(v);
        return ps_error_set(err, PS_EINVAL, "cannot list %s: it is not a map", path);
    }
    /* keys sorted bytewise */
    size_t n = json_object_size(v);
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) {
        json_decref(v);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    size_t i = 0;
    const char *k;
    json_t *item;
    json_object_foreach(v, k, item) keys[i++] = k;
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
            const char *x = keys[b];
            keys[b] = keys[b - 1];
            keys[b - 1] = x;
        }
    json_t *arr = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(arr, json_string(keys[i]));
    free(keys);
    json_decref(v);
    *out = arr;
    return 0;
}

/* ---- writing ---------------------------------------------------------------------------- */

/* What no ACL grants: a superuser (an admin token, or a member of superusers). */
/* ---- permissions (security.h, core/pool_acl.h) ------------------------------------------- */

/* who's permission on pool (NULL: the tree object; tree NULL too: //sys/pool_trees). As
 * upstream, write implies modify_children. */
static int require(struct ps_service *svc, const struct ps_auth_identity *who,
                   const struct ps_pool_tree *tree, const struct ps_pool *pool, unsigned perm,
                   struct ps_error *err)
{
    if (ps_security_superuser(svc->security, who))
        return 0;
    const struct ps_pool_access *access = ps_security_access(svc->security);
    if (perm == PS_PERM_MODIFY_CHILDREN &&
        ps_pool_acl_check(access, tree, pool, who->user, PS_PERM_WRITE) == PS_ACL_ALLOW)
        return 0;
    return ps_pool_acl_require(access, tree, pool, who->user, perm, err);
}

/* upstream's user-managed pool attributes (TSchedulerPoolManager::IsUserManagedAttribute):
 * `write` sets them; every other attribute, the ACL included, also needs `administer`. */
static bool user_managed(const char *key)
{
    static const char *const keys[] = {
        "weight", "max_operation_count", "max_running_operation_count", "min_share_resources",
        "strong_guarantee_resources", "forbid_immediate_operations", "mode",
        "fifo_sort_parameters", "resource_limits", "create_ephemeral_subpools",
        "ephemeral_subpool_config", "abc",
    };
    size_t n = strcspn(key, "/");
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strlen(keys[i]) == n && strncmp(keys[i], key, n) == 0)
            return true;
    return false;
}

/* Setting key (NULL: every key of map) on pool: write, and administer unless every key is
 * user-managed. On a tree object every key needs administer. */
static int require_attrs(struct ps_service *svc, const struct ps_auth_identity *who,
                         const struct ps_pool_tree *tree, const struct ps_pool *pool,
                         const char *key, const struct ps_value *map, struct ps_error *err)
{
    bool all_managed = pool != NULL;
    if (key)
        all_managed = all_managed && user_managed(key);
    for (int i = 0; !key && map && map->type == PS_VALUE_MAP && i < map->count; i++)
        all_managed = all_managed && user_managed(map->keys[i]);
    int rc = require(svc, who, tree, pool, PS_PERM_WRITE, err);
    if (rc == 0 && !all_managed)
        rc = require(svc, who, tree, pool, PS_PERM_ADMINISTER, err);
    return rc;
}

/* The safety net for misspelt settings that keeps upstream's answer: each key of a pool write
 * (key, or every key of map) that is no pool setting is logged as a custom attribute. */
static void log_custom_keys(struct ps_service *svc, const struct ps_pool_tree *tree,
                            const char *pool, const char *key, const struct ps_value *map)
{
    if (dry.copy)
        return;
    int n = key ? 1 : map->count;
    for (int i = 0; i < n; i++) {
        const char *k = key ? key : map->keys[i];
        if (!ps_pool_config_is_setting(k))
            ps_svc_log(svc, "warning", "custom_attribute",
                       "tree=%s pool=%s key=%s: not a pool setting; stored as a custom "
                       "attribute, the scheduler does not read it",
                       ps_pool_tree_name(tree), pool, k);
    }
}

void ps_cypress_tree_changed(struct ps_service *svc, struct ps_pool_tree *tree)
{
    if (dry.copy)
        return;   /* a dry run: nothing is applied, journalled or woken */
    const char *name = ps_pool_tree_name(tree);
    struct ps_svc_tree_state *ts = ps_svc_tree(svc, name);
    if (ts)
        ts->dirty = true;
    ps_persist_tree(svc, name);
    svc->pools_info_due = true;   /* a pools_info row (event_log.h) */
    /* raised limits may have started pending operations */
    for (int i = 0; i < ps_pool_tree_last_started_count(tree); i++) {
        struct ps_tree_op *to = ps_pool_tree_last_started(tree, i);
        struct ps_svc_op *op = ps_tree_op_host(to);
        if (op) {
            ps_svc_op_refresh_state(op);
            ps_persist_op(svc, op);   /* running now: a restart keeps it running */
            ps_svc_log(svc, "info", "operation_running", "id=%s", op->id);
        }
    }
    /* moved out of stale user subpools: their pool changed */
    for (int i = 0; i < ps_pool_tree_last_moved_count(tree); i++) {
        struct ps_svc_op *op = ps_tree_op_host(ps_pool_tree_last_moved(tree, i));
        if (op) {
            ps_svc_op_update_pools(op);
            ps_svc_op_refresh_state(op);
            ps_persist_op(svc, op);
            ps_svc_log(svc, "info", "operation_pool_changed", "id=%s tree=%s pool=%s", op->id,
                       name, ps_pool_tree_last_moved(tree, i)->pool->name);
        }
    }
    pthread_cond_broadcast(&svc->loop_cv);
}

int ps_cypress_set(struct ps_service *svc, const struct ps_auth_identity *who, const char *path,
                   const json_t *value, struct ps_error *err)
{
    int rc;
    if (!value)
        return ps_error_set(err, PS_EINVAL, "missing parameter \"value\"");
    const struct special *sp = special_of(path);
    if (sp)
        return special_set(svc, sp, who, path, value, err);
    struct target t;
    if ((rc = resolve(svc, path, &t, 0, err)) != 0) {
        target_release(&t);
        return rc;
    }
    struct ps_value v;
    if ((rc = ps_json_to_value(value, &v, err)) != 0) {
        target_release(&t);
        return rc;
    }
    if (!t.has_attr && !t.all_attrs) {
        rc = ps_error_set(err, PS_EINVAL,
                          "cannot set %s: set addresses an attribute (.../@name) or a key inside one",
                          path);
    } else if (t.kind == T_ORCHID || t.kind == T_ROOT || t.kind == T_SYS) {
        rc = ps_error_set(err, PS_EINVAL, "%s is read-only", path);
    } else if (t.kind == T_TREES && t.has_attr && strcmp(t.key, "acl") == 0) {
        rc = dry.copy ? ps_error_set(err, PS_EINVAL, "//sys/pool_trees/@acl has no dry run")
                      : ps_security_set_root_acl(svc, who, value, err);
    } else if (t.kind == T_TREES) {
        if (!t.has_attr || strcmp(t.key, "default_tree") != 0)
            rc = ps_error_set(err, PS_EINVAL,
                              "//sys/pool_trees has only the attributes @default_tree and @acl");
        else if ((rc = require(svc, who, NULL, NULL, PS_PERM_ADMINISTER, err)) != 0)
            ;
        else if (v.type != PS_VALUE_STRING && v.type != PS_VALUE_NULL)
            rc = ps_error_set(err, PS_EINVAL, "default_tree: must be a pool tree name or null");
        else if ((rc = ps_strategy_set_default_tree(
                      svc->strategy, v.type == PS_VALUE_STRING ? v.string : NULL, err)) == 0) {
            ps_persist_meta(svc);
            ps_svc_log(svc, "info", "config_changed", "path=//sys/pool_trees/@default_tree");
        }
    } else if ((rc = require_attrs(svc, who, t.tree, t.kind == T_POOL ? t.pool : NULL,
                                   t.has_attr ? t.key : NULL, &v, err)) != 0) {
        ;
    } else if (tree_custom_key(&t)) {
        rc = ps_pool_tree_set_custom_attribute(t.tree, t.key, &v, err);
        if (rc == 0 && !dry.copy && v.type != PS_VALUE_NULL)   /* the net for misspelt keys */
            ps_svc_log(svc, "warning", "custom_attribute",
                       "tree=%s key=%s: not a pool tree config key; stored as a custom "
                       "attribute of the tree object, the scheduler does not read it",
                       ps_pool_tree_name(t.tree), t.key);
        if (rc == 0)
            ps_cypress_tree_changed(svc, t.tree);
    } else if (t.kind == T_TREE) {
        if (t.all_attrs)
            rc = v.type == PS_VALUE_MAP ? ps_pool_tree_apply_config(t.tree, &v, err)
                                        : ps_error_set(err, PS_EINVAL, "%s: must be a map", path);
        else
            rc = ps_pool_tree_set_config(t.tree, t.key, &v, err);
        if (rc == 0)
            ps_cypress_tree_changed(svc, t.tree);
    } else {
        bool rename = t.has_attr && strcmp(t.key, "name") == 0;
        bool moves = rename || (t.has_attr && strcmp(t.key, "parent_name") == 0);
        if (moves && (rc = require_admin(svc, who, "renaming or moving pools", err)) != 0)
            ;
        else if (moves && v.type != PS_VALUE_STRING)
            rc = ps_error_set(err, PS_EINVAL, "%s: must be a pool name (a string)", path);
        else if (rename)   /* Cypress's rename and move through attributes */
            rc = ps_pool_tree_rename_pool(t.tree, t.pool->name, v.string, err);
        else if (t.has_attr && strcmp(t.key, "parent_name") == 0)
            rc = ps_pool_tree_move_pool(t.tree, t.pool->name, v.string, err);
        else if (t.all_attrs)
            rc = v.type == PS_VALUE_MAP
                     ? ps_pool_tree_apply_pool_attrs(t.tree, t.pool->name, &v, err)
                     : ps_error_set(err, PS_EINVAL, "%s: must be a map", path);
        else
            rc = ps_pool_tree_set_pool_attr(t.tree, t.pool->name, t.key, &v, err);
        if (rc == 0 && !moves)
            log_custom_keys(svc, t.tree, t.pool->name, t.all_attrs ? NULL : t.key, &v);
        if (rc == 0)
            ps_cypress_tree_changed(svc, t.tree);
    }
    if (rc == 0 && t.kind != T_TREES && !dry.copy)
        ps_svc_log(svc, "info", "config_changed", "tree=%s%s%s key=%s",
                   ps_pool_tree_name(t.tree), t.pool ? " pool=" : "", t.pool ? t.pool->name : "",
                   t.has_attr ? t.key : "@");
    ps_value_release(&v);
    target_release(&t);
    return rc;
}

/* A move to another tree, as upstream's Cypress allows (core: ps_pool_tree_move_pool_to_tree):
 * the subtree is created there and removed here, all or nothing. */
static int move_across(struct ps_service *svc, const struct target *s, const struct target *d,
                       const char *new_name, struct ps_error *err)
{
    char *name = strdup(s->pool->name);
    const char *parent = d->kind == T_TREE ? "<Root>" : d->pool->name;
    int rc = name ? ps_pool_tree_move_pool_to_tree(s->tree, name, d->tree, parent, new_name, err)
                  : ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0) {
        ps_cypress_tree_changed(svc, s->tree);
        ps_cypress_tree_changed(svc, d->tree);
        ps_svc_log(svc, "info", "config_changed", "tree=%s pool=%s moved_to=%s:%s/%s",
                   ps_pool_tree_name(s->tree), name, ps_pool_tree_name(d->tree), parent,
                   new_name);
    }
    free(name);
    return rc;
}

/* Cypress's move of a pool: to another parent, under another name, or both, also in another
 * tree (move_across); all or nothing. */
int ps_cypress_move(struct ps_service *svc, const struct ps_auth_identity *who,
                    const json_t *body, struct ps_error *err)
{
    int rc = require_admin(svc, who, "moving pools", err);
    if (rc != 0)
        return rc;
    const char *from = json_string_value(json_object_get(body, "source_path"));
    const char *to = json_string_value(json_object_get(body, "destination_path"));
    if (!from || !to)
        return ps_error_set(err, PS_EINVAL, "%s: missing parameter (a path)",
                            from ? "destination_path" : "source_path");
    const char *slash = strrchr(to, '/');
    if (!slash || slash == to || slash[-1] == '/' || strchr(to, '@'))
        return ps_error_set(err, PS_EINVAL,
                            "destination_path: %s is not a pool path (//sys/pool_trees/T/.../name)",
                            to);
    char *parent_path = strndup(to, (size_t)(slash - to));
    struct target s, d;
    memset(&d, 0, sizeof d);
    rc = resolve(svc, from, &s, 0, err);
    if (rc == 0 && (s.kind != T_POOL || s.has_attr || s.all_attrs))
        rc = ps_error_set(err, PS_EINVAL, "source_path: %s is not a pool: only pools move", from);
    if (rc == 0 && (rc = resolve(svc, parent_path ? parent_path : "", &d, 0, err)) == 0 &&
        ((d.kind != T_POOL && d.kind != T_TREE) || d.has_attr || d.all_attrs))
        rc = ps_error_set(err, PS_EINVAL, "destination_path: %s is not in a pool tree", to);
    if (rc == 0 && d.tree != s.tree) {
        rc = move_across(svc, &s, &d, slash + 1, err);
        free(parent_path);
        target_release(&d);
        target_release(&s);
        return rc;
    }
    for (const struct ps_pool *a = d.kind == T_POOL ? d.pool : NULL; rc == 0 && a; a = a->parent)
        if (a == s.pool)
            rc = ps_error_set(err, PS_EINVAL,
                              "pool \"%s\" cannot be moved under itself or its descendant \"%s\"",
                              s.pool->name, d.pool->name);
    if (rc == 0) {
        /* copies: a rename frees the pool's name */
        char *name = strdup(s.pool->name);
        char *parent = strdup(d.kind == T_TREE ? "<Root>" : d.pool->name);
        if (!name || !parent)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        /* the rename first: it refuses a subtree with operations, so the move after it starts
         * none, and a refused move is undone by renaming back (the old name was just freed);
         * a move first could start pending operations that moving back would not stop */
        bool renamed = false;
        if (rc == 0 && strcmp(slash + 1, name) != 0)
            renamed = (rc = ps_pool_tree_rename_pool(s.tree, name, slash + 1, err)) == 0;
        if (rc == 0 && (rc = ps_pool_tree_move_pool(s.tree, slash + 1, parent, err)) != 0 &&
            renamed) {
            struct ps_error ignored;
            ps_error_init(&ignored);
            ps_pool_tree_rename_pool(s.tree, slash + 1, name, &ignored);
        }
        if (rc == 0) {
            ps_cypress_tree_changed(svc, s.tree);
            ps_svc_log(svc, "info", "config_changed", "tree=%s pool=%s moved_to=%s/%s",
                       ps_pool_tree_name(s.tree), name, parent, slash + 1);
        }
        free(name);
        free(parent);
    }
    free(parent_path);
    target_release(&d);
    target_release(&s);
    return rc;
}

/* upstream's transfer_pool_resources (core/pool_transfer.c): all or nothing, journalled as one
 * tree document. */
int ps_cypress_transfer_pool_resources(struct ps_service *svc, const struct ps_auth_identity *who,
                                       const json_t *body, struct ps_error *err)
{
    int rc = require_admin(svc, who, "transferring pool resources", err);
    if (rc != 0)
        return rc;
    const char *names[3] = {"source_pool", "destination_pool", "pool_tree"};
    const char *values[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        const json_t *v = json_object_get(body, names[i]);
        if (!v && i == 2)
            continue;
        if (!json_is_string(v))
            return ps_error_set(err, PS_EINVAL, "%s: %s", names[i],
                                v ? "must be a string" : "missing parameter");
        values[i] = json_string_value(v);
    }
    const char *tree_name = values[2] ? values[2] : ps_strategy_default_tree(svc->strategy);
    struct ps_pool_tree *tree = tree_name ? find_tree(svc, tree_name) : NULL;
    if (!tree)
        return tree_name ? ps_error_set(err, PS_ENOENT, "pool_tree: no pool tree \"%s\"", tree_name)
                         : ps_error_set(err, PS_ENOENT, "pool_tree: there is no default pool tree");
    const json_t *delta = json_object_get(body, "resource_delta");
    if (!delta)
        return ps_error_set(err, PS_EINVAL, "resource_delta: missing parameter");
    struct ps_value v;
    if ((rc = ps_json_to_value(delta, &v, err)) != 0) {
        ps_error_prefix(err, "resource_delta");
        return rc;
    }
    rc = ps_pool_tree_transfer_resources(tree, values[0], values[1], &v, err);
    ps_value_release(&v);
    if (rc == 0) {
        ps_cypress_tree_changed(svc, tree);
        ps_svc_log(svc, "info", "config_changed", "tree=%s transfer_pool_resources=%s->%s",
                   ps_pool_tree_name(tree), values[0], values[1]);
    }
    return rc;
}

static int create_pool(struct ps_service *svc, const struct ps_auth_identity *who,
                       const json_t *body, struct ps_error *err)
{
    const char *path = json_string_value(json_object_get(body, "path"));
    const json_t *attrs = json_object_get(body, "attributes");
    bool ignore_existing = json_is_true(json_object_get(body, "ignore_existing"));
    if (attrs && !json_is_object(attrs))
        return ps_error_set(err, PS_EINVAL, "attributes: must be a map");
    json_t *rest = attrs ? json_deep_copy(attrs) : json_object();
    struct ps_pool_tree *tree = NULL;
    const char *name = NULL, *parent = "<Root>";
    struct target t;
    memset(&t, 0, sizeof t);
    ps_ypath_init(&t.p);
    int rc = 0;
    if (path) {
        if ((rc = resolve(svc, path, &t, 1, err)) != 0)
            goto out;
        if (t.has_attr || t.all_attrs || (t.kind != T_TREE && t.kind != T_POOL) ||
            t.p.node_count < 3) {
            rc = ps_error_set(err, PS_EINVAL,
                              "cannot create a pool at %s: expected //sys/pool_trees/TREE/.../NAME",
                              path);
            goto out;
        }
        tree = t.tree;
        parent = t.kind == T_POOL ? t.pool->name : "<Root>";
        name = t.p.nodes[t.p.node_count - 1];
    } else {
        name = json_string_value(json_object_get(rest, "name"));
        const char *tn = json_string_value(json_object_get(rest, "pool_tree"));
        const char *pn = json_string_value(json_object_get(rest, "parent_name"));
        if (!name || !tn) {
            rc = ps_error_set(err, PS_EINVAL,
                              "create scheduler_pool needs \"path\", or attributes name and pool_tree");
            goto out;
        }
        tree = find_tree(svc, tn);
        if (!tree) {
            rc = ps_error_set(err, PS_ENOENT, "pool_tree: no pool tree \"%s\"", tn);
            goto out;
        }
        if (pn)
            parent = pn;
    }
    name = strdup(name);
    parent = strdup(parent);
    json_object_del(rest, "name");
    json_object_del(rest, "pool_tree");
    json_object_del(rest, "parent_name");
    struct ps_pool *existing = ps_pool_tree_find_pool(tree, name);
    if (existing && !existing->ephemeral && ignore_existing) {
        free((char *)name);
        free((char *)parent);
        goto out;
    }
    struct ps_value av;
    if ((rc = ps_json_to_value(rest, &av, err)) == 0) {
        const struct ps_pool *pp = strcmp(parent, "<Root>") ? ps_pool_tree_find_pool(tree, parent)
                                                             : NULL;
        rc = require(svc, who, tree, pp, PS_PERM_MODIFY_CHILDREN, err);
        for (int i = 0; rc == 0 && i < av.count; i++)
            if (!user_managed(av.keys[i]))
                rc = require(svc, who, tree, pp, PS_PERM_ADMINISTER, err);
        if (rc == 0)
            rc = ps_pool_tree_create_pool(tree, name, parent, &av, err);
        if (rc == 0)
            log_custom_keys(svc, tree, name, NULL, &av);
        ps_value_release(&av);
    }
    if (rc == 0 && !dry.copy) {
        ps_cypress_tree_changed(svc, tree);
        ps_svc_log(svc, "info", "pool_created", "tree=%s pool=%s parent=%s",
                   ps_pool_tree_name(tree), name, parent);
    }
    free((char *)name);
    free((char *)parent);
out:
    json_decref(rest);
    target_release(&t);
    return rc;
}

/* YTsaurus keeps a tree's configuration in its attribute `config`
 * ({name=gpu; config={nodes_filter=gpu}}); the flat form ({name=gpu; nodes_filter=gpu}) is
 * accepted too. Moves the keys of attrs["config"] up into attrs; a key given both ways is
 * refused, so that nothing is silently dropped. */
static int merge_tree_config(json_t *attrs, struct ps_error *err)
{
    json_t *config = json_object_get(attrs, "config");
    if (!config)
        return 0;
    if (!json_is_object(config))
        return ps_error_set(err, PS_EINVAL, "config: must be a map of tree attributes such as {nodes_filter=gpu}");
    json_incref(config);
    json_object_del(attrs, "config");
    const char *k;
    json_t *v;
    int rc = 0;
    json_object_foreach(config, k, v) {
        if (json_object_get(attrs, k)) {
            rc = ps_error_set(err, PS_EINVAL,
                              "%s: given both in config and as an attribute; give it once", k);
            break;
        }
        json_object_set(attrs, k, v);
    }
    json_decref(config);
    return rc;
}

static int create_tree(struct ps_service *svc, const struct ps_auth_identity *who,
                       const json_t *body, struct ps_error *err)
{
    const char *path = json_string_value(json_object_get(body, "path"));
    const json_t *attrs = json_object_get(body, "attributes");
    if (attrs && !json_is_object(attrs))
        return ps_error_set(err, PS_EINVAL, "attributes: must be a map");
    json_t *rest = attrs ? json_deep_copy(attrs) : json_object();
    char name[256] = "";
    int rc = 0;
    if (path) {
        struct ps_ypath p;
        ps_ypath_init(&p);
        rc = ps_ypath_parse(path, &p, err);
        if (rc == 0 && (p.node_count != 3 || strcmp(p.nodes[0], "sys") != 0 ||
                        strcmp(p.nodes[1], "pool_trees") != 0 || p.attr_count || p.all_attrs))
            rc = ps_error_set(err, PS_EINVAL,
                              "cannot create a pool tree at %s: expected //sys/pool_trees/NAME", path);
        if (rc == 0)
            snprintf(name, sizeof name, "%s", p.nodes[2]);
        ps_ypath_release(&p);
    } else if (json_is_string(json_object_get(rest, "name"))) {
        snprintf(name, sizeof name, "%s", json_string_value(json_object_get(rest, "name")));
    } else {
        rc = ps_error_set(err, PS_EINVAL, "create scheduler_pool_tree needs \"path\" or attributes/name");
    }
    json_object_del(rest, "name");
    if (rc == 0)
        rc = merge_tree_config(rest, err);
    if (rc == 0 && ps_strategy_find_tree(svc->strategy, name)) {
        if (json_is_true(json_object_get(body, "ignore_existing"))) {
            json_decref(rest);
            return 0;
        }
        rc = ps_error_set(err, PS_EEXIST, "pool tree \"%s\" already exists", name);
    }
    if (rc == 0 && json_object_get(rest, "pools"))
        rc = ps_error_set(err, PS_EINVAL, "pools: create pools one by one (scheduler_pool)");
    if (rc == 0)
        rc = require(svc, who, NULL, NULL, PS_PERM_MODIFY_CHILDREN, err);
    struct ps_value cv;
    if (rc == 0 && (rc = ps_json_to_value(rest, &cv, err)) == 0) {
        rc = ps_strategy_add_tree(svc->strategy, name, &cv, err);
        ps_value_release(&cv);
        if (rc == 0 && (rc = ps_svc_add_tree_state(svc, name, err)) != 0)
            ps_strategy_remove_tree(svc->strategy, name, NULL);
        if (rc == 0) {
            ps_persist_tree(svc, name);
            svc->pools_info_due = true;   /* a pools_info row (event_log.h) */
            ps_svc_log(svc, "info", "pool_tree_created", "tree=%s", name);
            pthread_cond_broadcast(&svc->loop_cv);
        }
    }
    json_decref(rest);
    return rc;
}

int ps_cypress_create(struct ps_service *svc, const struct ps_auth_identity *who,
                      const json_t *body, struct ps_error *err)
{
    const char *type = json_string_value(json_object_get(body, "type"));
    if (!type)
        return ps_error_set(err, PS_EINVAL, "missing parameter \"type\" (scheduler_pool or scheduler_pool_tree)");
    if (strcmp(type, "scheduler_pool") == 0)
        return create_pool(svc, who, body, err);
    if (strcmp(type, "scheduler_pool_tree") == 0)
        return create_tree(svc, who, body, err);
    return ps_error_set(err, PS_EINVAL, "type: unknown object type \"%s\" (scheduler_pool or scheduler_pool_tree)", type);
}

/* Removes a tree with its operations as upstream does: an operation that runs only in it is
 * aborted ("No suitable fair-share trees to schedule operation"), one that also runs in other
 * trees loses this one (its jobs here end with node_fair_share_tree_changed: the tree's nodes
 * belong to no tree now) and goes on in the others. */
static int remove_tree(struct ps_service *svc, const char *name, struct ps_error *err)
{
    struct ps_pool_tree *tree = ps_strategy_find_tree(svc->strategy, name);
    int64_t now = ps_svc_now_ms();
    for (int i = 0; tree && i < svc->op_count; i++) {
        struct ps_svc_op *op = svc->op_list[i];
        if (op->finished || !op->sop)
            continue;
        int live = 0;
        bool here = false;
        for (int k = 0; k < op->sop->tree_count; k++) {
            const struct ps_tree_op *m = op->sop->memberships ? op->sop->memberships[k] : NULL;
            live += m != NULL;
            here = here || (m && m->tree == tree);
        }
        if (here && live == 1) {
            ps_svc_op_finish(svc, op, "aborted", "No suitable fair-share trees to schedule "
                             "operation", now);
            ps_svc_log(svc, "info", "operation_orphaned", "id=%s tree=%s", op->id, name);
        }
    }
    int rc = ps_strategy_remove_tree(svc->strategy, name, err);
    for (int i = 0; rc == 0 && i < svc->node_count; i++)
        ps_node_tags_check_tree(svc, svc->node_list[i], now);
    return rc;
}

int ps_cypress_remove(struct ps_service *svc, const struct ps_auth_identity *who,
                      const char *path, struct ps_error *err)
{
    int rc;
    const struct special *sp = special_of(path);
    if (sp)
        return special_set(svc, sp, who, path, NULL, err);
    struct target t;
    if ((rc = resolve(svc, path, &t, 0, err)) != 0) {
        target_release(&t);
        return rc;
    }
    if (t.has_attr) {
        /* removing an attribute resets it to its default */
        json_t *null = json_null();
        target_release(&t);
        rc = ps_cypress_set(svc, who, path, null, err);
        json_decref(null);
        return rc;
    }
    if (t.all_attrs || t.kind == T_ROOT || t.kind == T_SYS || t.kind == T_TREES ||
        t.kind == T_ORCHID) {
        target_release(&t);
        return ps_error_set(err, PS_EINVAL, "%s cannot be removed", path);
    }
    /* as upstream: remove on the object, modify_children (or write) on its parent */
    const struct ps_pool *parent = t.kind == T_POOL && t.pool->parent && !t.pool->parent->is_root
                                       ? t.pool->parent
                                       : NULL;
    rc = require(svc, who, t.kind == T_POOL ? t.tree : NULL, parent, PS_PERM_MODIFY_CHILDREN, err);
    if (rc == 0)
        rc = require(svc, who, t.tree, t.kind == T_POOL ? t.pool : NULL, PS_PERM_REMOVE, err);
    if (rc != 0) {
        target_release(&t);
        return rc;
    }
    if (t.kind == T_POOL) {
        char *name = strdup(t.pool->name);
        rc = ps_pool_tree_remove_pool(t.tree, name, err);
        if (rc == 0 && !dry.copy) {
            ps_cypress_tree_changed(svc, t.tree);
            ps_svc_log(svc, "info", "pool_removed", "tree=%s pool=%s", ps_pool_tree_name(t.tree),
                       name);
        }
        free(name);
    } else {
        char *name = strdup(ps_pool_tree_name(t.tree));
        int explicit_pools = 0;
        for (int i = 0; i < ps_pool_tree_pool_count(t.tree); i++)
            explicit_pools += !ps_pool_tree_pool_at(t.tree, i)->ephemeral;
        if (explicit_pools > 0)
            rc = ps_error_set(err, PS_ESTATE,
                              "pool tree \"%s\" has %d pools: remove them first", name,
                              explicit_pools);
        else
            rc = remove_tree(svc, name, err);
        if (rc == 0) {
            struct ps_svc_tree_state *ts = ps_svc_tree(svc, name);
            if (ts)
                ps_svc_pool_gauges_remove(svc, ts);
            ps_svc_remove_tree_state(svc, name);
            ps_persist_tree_removed(svc, name);
            ps_persist_meta(svc);
            svc->pools_info_due = true;   /* a pools_info row (event_log.h) */
            ps_svc_log(svc, "info", "pool_tree_removed", "tree=%s", name);
        }
        free(name);
    }
    target_release(&t);
    return rc;
}

/* ---- dry run ---------------------------------------------------------------------------- */

/* The copy: the tree's document (what a restart rebuilds it from, persist.c) through
 * ps_pool_tree_new, so its config and explicit pools pass the same setters and validation,
 * plus what a document does not hold (ps_pool_tree_clone_state: borrowed nodes, operations with
 * demand and usage, integral and starvation state). Costs one document and one tree per dry
 * run; the tree itself is never touched. */
static struct ps_pool_tree *copy_tree(struct ps_service *svc, struct ps_pool_tree *tree,
                                      struct ps_error *err)
{
    json_t *doc = ps_persist_tree_doc(svc, tree);
    json_t *config = json_deep_copy(json_object_get(doc, "config"));
    if (!config)
        config = json_object();
    json_object_set(config, "pools", json_object_get(doc, "pools"));
    json_decref(doc);
    struct ps_value v;
    int rc = ps_json_to_value(config, &v, err);
    json_decref(config);
    if (rc != 0)
        return NULL;
    struct ps_pool_tree *copy = ps_pool_tree_new_templated(ps_pool_tree_name(tree), &v,
                                                           ps_pool_tree_templates(tree), err);
    ps_value_release(&v);
    if (copy && ps_pool_tree_clone_state(copy, tree, err) != 0) {
        ps_pool_tree_clone_free(copy);
        copy = NULL;
    }
    if (!copy)
        ps_error_prefix(err, "dry run: cannot copy pool tree \"%s\"", ps_pool_tree_name(tree));
    return copy;
}

static struct ps_preemptible *dry_op_state(void *ctx, struct ps_tree_op *op, int element,
                                           struct ps_sched_operation *sched,
                                           struct ps_preempt_operation *preempt)
{
    (void)ctx, (void)op, (void)element, (void)sched, (void)preempt;
    return NULL;
}

/* One fair share update and starvation check of a copy, as the loop would run it now. */
static int dry_update(struct ps_pool_tree *copy, int64_t now_ms, struct ps_error *err)
{
    struct ps_tree_sched ts;
    int rc = ps_tree_sched_init(&ts, err);
    if (rc != 0)
        return rc;
    struct ps_tree_host host = {.op_state = dry_op_state};
    rc = ps_tree_sched_update(&ts, copy, now_ms, &host, NULL, err);
    ps_tree_sched_release(&ts);
    return rc;
}

static json_t *dry_element(const struct ps_element_dynamic *d, double weight)
{
    const struct ps_detailed_fair_share *f = &d->fs.fair_share;
    return json_pack("{s:{s:f, s:f, s:f, s:f}, s:f, s:o, s:s}", "fair_share", "total",
                     ps_share_max_component(f->total), "strong_guarantee",
                     ps_share_max_component(f->strong_guarantee), "integral_guarantee",
                     ps_share_max_component(f->integral_guarantee), "weight_proportional",
                     ps_share_max_component(f->weight_proportional), "weight", weight,
                     "resource_limits", ps_api_resources_json(&d->fs.resource_limits),
                     "starvation_status", ps_starvation_status_name(d->starvation));
}

static json_t *pool_side(struct ps_pool_tree *tree, const char *name)
{
    struct ps_pool *p = strcmp(name, "<Root>") == 0 ? ps_pool_tree_root(tree)
                                                    : ps_pool_tree_find_pool(tree, name);
    if (!p || !p->dynamic.valid)
        return json_null();
    json_t *e = dry_element(&p->dynamic, p->dynamic.fs.weight);
    json_object_set_new(e, "parent", p->parent ? json_string(p->parent->name) : json_null());
    return e;
}

static json_t *op_side(struct ps_pool_tree *tree, const char *id)
{
    struct ps_tree_op *op = ps_pool_tree_find_operation(tree, id);
    if (!op)
        return json_null();
    json_t *e = op->running && op->dynamic.valid ? dry_element(&op->dynamic, op->dynamic.fs.weight)
                                                 : json_object();
    json_object_set_new(e, "pool", json_string(op->pool->name));
    json_object_set_new(e, "running", json_boolean(op->running));
    return e;
}

static void diff_put(json_t *map, const char *name, json_t *before, json_t *after)
{
    json_t *old = json_object_get(map, name);
    if (old)
        return;
    json_object_set_new(map, name,
                        json_pack("{s:o, s:o, s:b}", "before", before, "after", after, "changed",
                                  !json_equal(before, after)));
}

static json_t *dry_diff(struct ps_pool_tree *before, struct ps_pool_tree *after)
{
    json_t *pools = json_object(), *ops = json_object();
    struct ps_pool_tree *sides[2] = {before, after};
    diff_put(pools, "<Root>", pool_side(before, "<Root>"), pool_side(after, "<Root>"));
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < ps_pool_tree_pool_count(sides[s]); i++) {
            const char *n = ps_pool_tree_pool_at(sides[s], i)->name;
            if (!json_object_get(pools, n))
                diff_put(pools, n, pool_side(before, n), pool_side(after, n));
        }
        for (int i = 0; i < ps_pool_tree_operation_count(sides[s]); i++) {
            const char *id = ps_pool_tree_operation_at(sides[s], i)->id;
            if (!json_object_get(ops, id))
                diff_put(ops, id, op_side(before, id), op_side(after, id));
        }
    }
    return json_pack("{s:o, s:o}", "pools", pools, "operations", ops);
}

int ps_cypress_dry_run(struct ps_service *svc, const struct ps_auth_identity *who,
                       const char *command, const json_t *body, json_t **reply,
                       struct ps_error *err)
{
    int rc = require_admin(svc, who, "dry runs", err);
    if (rc != 0)
        return rc;
    /* which tree: the path's (create: its parent's), or create's attributes/pool_tree */
    const char *path = json_string_value(json_object_get(body, "path"));
    bool create = strcmp(command, "create") == 0;
    const char *type = json_string_value(json_object_get(body, "type"));
    struct ps_pool_tree *tree = NULL;
    const char *refuse = NULL;
    if (create && (!type || strcmp(type, "scheduler_pool") != 0)) {
        refuse = "create: only a scheduler_pool";
    } else if (path && special_of(path)) {
        refuse = "//sys/cluster_nodes and //sys/scheduler";
    } else if (path) {
        struct target t;
        rc = resolve(svc, path, &t, create ? 1 : 0, err);
        if (rc == 0 && (t.kind == T_TREE || t.kind == T_POOL) && !t.p.all_attrs &&
            (create || t.has_attr || t.kind == T_POOL || t.all_attrs))
            tree = t.tree;
        else if (rc == 0)
            refuse = "this path (pool trees themselves, @default_tree, the orchid)";
        target_release(&t);
        if (rc != 0)
            return rc;
    } else if (create) {
        const char *tn = json_string_value(json_object_get(json_object_get(body, "attributes"),
                                                           "pool_tree"));
        tree = tn ? ps_strategy_find_tree(svc->strategy, tn) : NULL;
        if (!tree)
            return ps_cypress_create(svc, who, body, err);   /* its own refusal */
    } else {
        return ps_error_set(err, PS_EINVAL, "missing parameter \"path\"");
    }
    if (refuse)
        return ps_error_set(err, PS_EINVAL, "dry_run: %s cannot be dry run; dry_run covers "
                            "set, create and remove of pools and of pool tree attributes", refuse);

    struct ps_pool_tree *before = copy_tree(svc, tree, err);
    struct ps_pool_tree *after = before ? copy_tree(svc, tree, err) : NULL;
    if (!after) {
        ps_pool_tree_clone_free(before);
        return err->code ? err->code : PS_ENOMEM;
    }
    dry.name = ps_pool_tree_name(tree);
    dry.copy = after;
    if (strcmp(command, "set") == 0)
        rc = ps_cypress_set(svc, who, path, json_object_get(body, "value"), err);
    else if (create)
        rc = ps_cypress_create(svc, who, body, err);
    else
        rc = ps_cypress_remove(svc, who, path, err);
    dry.copy = NULL;
    dry.name = NULL;
    /* a nodes_filter change lets a standalone copy drop borrowed nodes: they stay the tree's */
    ps_pool_tree_reclaim_nodes(tree);
    int64_t now = ps_svc_now_ms();
    if (rc == 0 && (rc = dry_update(before, now, err)) == 0 &&
        (rc = dry_update(after, now, err)) != 0)
        ps_error_prefix(err, "dry run: the fair share update after the change failed");
    if (rc == 0) {
        json_t *d = dry_diff(before, after);
        json_object_set_new(d, "dry_run", json_true());
        json_object_set_new(d, "pool_tree", json_string(ps_pool_tree_name(tree)));
        json_object_set_new(d, "alerts", json_pack("{s:o, s:o}", "before",
                                                   ps_alerts_tree(svc, before), "after",
                                                   ps_alerts_tree(svc, after)));
        *reply = d;
    }
    ps_pool_tree_clone_free(before);
    ps_pool_tree_clone_free(after);
    return rc;
}

int ps_cypress_check_permission(struct ps_service *svc, const json_t *body, json_t **reply,
                                struct ps_error *err)
{
    const char *user = json_string_value(json_object_get(body, "user"));
    const char *perm = json_string_value(json_object_get(body, "permission"));
    const char *path = json_string_value(json_object_get(body, "path"));
    if (!user || !perm || !path)
        return ps_error_set(err, PS_EINVAL, "missing parameter \"%s\"",
                            !user ? "user" : !perm ? "permission" : "path");
    unsigned bit;
    int rc = ps_permission_parse(perm, &bit, err);
    if (rc != 0) {
        ps_error_prefix(err, "permission");
        return rc;
    }
    static const char ops[] = "//sys/operations/";
    if (strncmp(path, ops, sizeof ops - 1) == 0) {
        bool allowed = false;
        rc = ps_api_op_permission(svc, path + sizeof ops - 1, user, bit, &allowed, err);
        if (rc == 0)
            *reply = json_pack("{s:s}", "action", allowed ? "allow" : "deny");
        return rc;
    }
    struct target t;
    if ((rc = resolve(svc, path, &t, 0, err)) == 0 &&
        (t.has_attr || t.all_attrs || (t.kind != T_TREES && t.kind != T_TREE && t.kind != T_POOL)))
        rc = ps_error_set(err, PS_EINVAL,
                          "check_permission: %s is not //sys/pool_trees, a pool tree, a pool or "
                          "//sys/operations/<id>",
                          path);
    if (rc == 0) {
        /* what user may do by its groups, whatever token asks */
        const struct ps_pool_access *held = ps_security_access(svc->security);
        struct ps_pool_access access = held ? *held : (struct ps_pool_access){0};
        access.acting_superuser = NULL;
        enum ps_acl_action a =
            ps_pool_acl_check(&access, t.kind == T_TREES ? NULL : t.tree,
                              t.kind == T_POOL ? t.pool : NULL, user, bit);
        *reply = json_pack("{s:s}", "action", a == PS_ACL_ALLOW ? "allow" : "deny");
    }
    target_release(&t);
    return rc;
}
