/* api_cypress_write.c — the Cypress tree's writes: set, move, transfer_pool_resources,
 * create, remove, with their permission checks; a refused write leaves the state and the store
 * untouched (api_cypress.h). */
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
#include "server/sched_config.h"
#include "server/service_state.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"
#include "server/user_pool_map.h"

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
    if (ps_cypress_dry.copy)
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
    if (ps_cypress_dry.copy)
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
    const struct special *sp = ps_cypress_special_of(path);
    if (sp)
        return ps_cypress_special_set(svc, sp, who, path, value, err);
    struct target t;
    if ((rc = ps_cypress_resolve(svc, path, &t, 0, err)) != 0) {
        ps_cypress_target_release(&t);
        return rc;
    }
    struct ps_value v;
    if ((rc = ps_json_to_value(value, &v, err)) != 0) {
        ps_cypress_target_release(&t);
        return rc;
    }
    if (!t.has_attr && !t.all_attrs) {
        rc = ps_error_set(err, PS_EINVAL,
                          "cannot set %s: set addresses an attribute (.../@name) or a key inside one",
                          path);
    } else if (t.kind == T_ORCHID || t.kind == T_ROOT || t.kind == T_SYS) {
        rc = ps_error_set(err, PS_EINVAL, "%s is read-only", path);
    } else if (t.kind == T_TREES && t.has_attr && strcmp(t.key, "acl") == 0) {
        rc = ps_cypress_dry.copy ? ps_error_set(err, PS_EINVAL, "//sys/pool_trees/@acl has no dry run")
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
            if (!ps_cypress_dry.copy)   /* pool_trees_info has the default tree (event_log.h) */
                svc->pools_info_due = true;
            ps_svc_log(svc, "info", "config_changed", "path=//sys/pool_trees/@default_tree");
        }
    } else if ((rc = require_attrs(svc, who, t.tree, t.kind == T_POOL ? t.pool : NULL,
                                   t.has_attr ? t.key : NULL, &v, err)) != 0) {
        ;
    } else if (ps_cypress_tree_custom_key(&t)) {
        rc = ps_pool_tree_set_custom_attribute(t.tree, t.key, &v, err);
        if (rc == 0 && !ps_cypress_dry.copy && v.type != PS_VALUE_NULL)   /* misspelt keys */
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
        if (moves && (rc = ps_cypress_require_admin(svc, who, "renaming or moving pools", err)) != 0)
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
    if (rc == 0 && t.kind != T_TREES && !ps_cypress_dry.copy)
        ps_svc_log(svc, "info", "config_changed", "tree=%s%s%s key=%s",
                   ps_pool_tree_name(t.tree), t.pool ? " pool=" : "", t.pool ? t.pool->name : "",
                   t.has_attr ? t.key : "@");
    ps_value_release(&v);
    ps_cypress_target_release(&t);
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
    int rc = ps_cypress_require_admin(svc, who, "moving pools", err);
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
    rc = ps_cypress_resolve(svc, from, &s, 0, err);
    if (rc == 0 && (s.kind != T_POOL || s.has_attr || s.all_attrs))
        rc = ps_error_set(err, PS_EINVAL, "source_path: %s is not a pool: only pools move", from);
    if (rc == 0 && (rc = ps_cypress_resolve(svc, parent_path ? parent_path : "", &d, 0, err)) == 0 &&
        ((d.kind != T_POOL && d.kind != T_TREE) || d.has_attr || d.all_attrs))
        rc = ps_error_set(err, PS_EINVAL, "destination_path: %s is not in a pool tree", to);
    if (rc == 0 && d.tree != s.tree) {
        rc = move_across(svc, &s, &d, slash + 1, err);
        free(parent_path);
        ps_cypress_target_release(&d);
        ps_cypress_target_release(&s);
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
    ps_cypress_target_release(&d);
    ps_cypress_target_release(&s);
    return rc;
}

/* upstream's transfer_pool_resources (core/pool_transfer.c): all or nothing, journalled as one
 * tree document. */
int ps_cypress_transfer_pool_resources(struct ps_service *svc, const struct ps_auth_identity *who,
                                       const json_t *body, struct ps_error *err)
{
    int rc = ps_cypress_require_admin(svc, who, "transferring pool resources", err);
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
    struct ps_pool_tree *tree = tree_name ? ps_cypress_find_tree(svc, tree_name) : NULL;
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
        if ((rc = ps_cypress_resolve(svc, path, &t, 1, err)) != 0)
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
        tree = ps_cypress_find_tree(svc, tn);
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
    if (rc == 0 && !ps_cypress_dry.copy) {
        ps_cypress_tree_changed(svc, tree);
        ps_svc_log(svc, "info", "pool_created", "tree=%s pool=%s parent=%s",
                   ps_pool_tree_name(tree), name, parent);
    }
    free((char *)name);
    free((char *)parent);
out:
    json_decref(rest);
    ps_cypress_target_release(&t);
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
    const struct special *sp = ps_cypress_special_of(path);
    if (sp)
        return ps_cypress_special_set(svc, sp, who, path, NULL, err);
    struct target t;
    if ((rc = ps_cypress_resolve(svc, path, &t, 0, err)) != 0) {
        ps_cypress_target_release(&t);
        return rc;
    }
    if (t.has_attr) {
        /* removing an attribute resets it to its default */
        json_t *null = json_null();
        ps_cypress_target_release(&t);
        rc = ps_cypress_set(svc, who, path, null, err);
        json_decref(null);
        return rc;
    }
    if (t.all_attrs || t.kind == T_ROOT || t.kind == T_SYS || t.kind == T_TREES ||
        t.kind == T_ORCHID) {
        ps_cypress_target_release(&t);
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
        ps_cypress_target_release(&t);
        return rc;
    }
    if (t.kind == T_POOL) {
        char *name = strdup(t.pool->name);
        rc = ps_pool_tree_remove_pool(t.tree, name, err);
        if (rc == 0 && !ps_cypress_dry.copy) {
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
    ps_cypress_target_release(&t);
    return rc;
}
