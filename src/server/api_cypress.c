/* api_cypress.c — the Cypress-like tree of pool trees: paths resolved, the paths other parts
 * of the service answer, and the reads (get, list, exists, check_permission). Writes are in
 * api_cypress_write.c, dry runs in api_cypress_dry.c (api_cypress.h).
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
#include "server/api_cypress.h"
#include "server/api_cypress_impl.h"
#include "server/api_json.h"
#include "server/node_health.h"
#include "server/node_tags.h"
#include "server/event_log.h"
#include "server/persist.h"
#include "server/pool_gauges.h"
#include "server/nodes_config.h"
#include "server/sched_config.h"
#include "server/service_state.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"
#include "server/user_pool_map.h"

struct ps_cypress_dry ps_cypress_dry;

struct ps_pool_tree *ps_cypress_find_tree(struct ps_service *svc, const char *name)
{
    if (ps_cypress_dry.copy && name && strcmp(name, ps_cypress_dry.name) == 0)
        return ps_cypress_dry.copy;
    return ps_strategy_find_tree(svc->strategy, name);
}

void ps_cypress_target_release(struct target *t)
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
bool ps_cypress_tree_custom_key(const struct target *t)
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
int ps_cypress_resolve(struct ps_service *svc, const char *path, struct target *t, size_t upto,
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
        t->tree = ps_cypress_find_tree(svc, d);
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
        t->tree = ps_cypress_find_tree(svc, nodes[2]);
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
        if (ps_cypress_tree_custom_key(t)) {
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

int ps_cypress_require_admin(struct ps_service *svc, const struct ps_auth_identity *who,
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

static int nodes_config_set(struct ps_service *svc, const struct ps_auth_identity *who,
                            const char *path, const json_t *value, struct ps_error *err)
{
    (void)who;
    return ps_nodes_config_set(svc, path, value, err);
}

static const struct special specials[] = {
    /* //sys/cluster_nodes/@config (nodes_config.h), before the rest of //sys/cluster_nodes */
    {ps_nodes_config_claims, ps_nodes_config_get, nodes_config_set},
    /* //sys/cluster_nodes, //sys/scheduler/@alerts (node_health.h) */
    {ps_node_health_claims, ps_node_health_get, node_health_set},
    /* //sys/scheduler/user_to_default_pool (user_pool_map.h) */
    {ps_user_pool_map_claims, ps_user_pool_map_get, user_pool_map_set},
    /* //sys/scheduler/config (sched_config.h) */
    {ps_sched_config_claims, ps_sched_config_get, sched_config_set},
};

/* The part that answers path, or NULL: the pool trees' own paths. */
const struct special *ps_cypress_special_of(const char *path)
{
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        if (specials[i].claims(path))
            return &specials[i];
    return NULL;
}

/* set or remove (value NULL) on a special path, by the superuser only. */
int ps_cypress_special_set(struct ps_service *svc, const struct special *sp,
                       const struct ps_auth_identity *who, const char *path, const json_t *value,
                       struct ps_error *err)
{
    int rc = ps_cypress_require_admin(svc, who, "changing the scheduler's configuration", err);
    return rc != 0 ? rc : sp->set(svc, who, path, value, err);
}

int ps_cypress_get(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err)
{
    const struct special *sp = ps_cypress_special_of(path);
    if (sp)
        return sp->get(svc, path, out, err);
    struct target t;
    int rc = ps_cypress_resolve(svc, path, &t, 0, err);
    if (rc == 0)
        rc = get_target(svc, &t, path, out, err);
    ps_cypress_target_release(&t);
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
    if ((rc = ps_cypress_resolve(svc, path, &t, 0, err)) == 0 &&
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
    ps_cypress_target_release(&t);
    return rc;
}
