#include "core/pool_tree.h"

#include <stdlib.h>
#include <string.h>

#include "core/pool_preset.h"
#include "core/pool_tree_impl.h"
#include "core/user_pools.h"
#include "core/tree_template.h"

int ps_tree_reserve(void ***items, int *capacity, int count)
{
    if (count < *capacity)
        return 0;
    int cap = *capacity ? 2 * *capacity : 8;
    void **grown = realloc(*items, (size_t)cap * sizeof *grown);
    if (!grown)
        return PS_ENOMEM;
    *items = grown;
    *capacity = cap;
    return 0;
}

static int parse_filter(const char *text, struct ps_formula **out, struct ps_error *err)
{
    *out = NULL;
    if (text[0] == '\0')
        return 0;
    return ps_formula_parse(text, out, err);
}

/* ---- pool bookkeeping -------------------------------------------------------------------- */

/* A fresh config_version: unique across pools, trees and threads, so that a version never
 * names two different configs even when a freed pool's memory is reused. */
uint64_t ps_tree_pool_config_version_next(void)
{
    static uint64_t last;
    return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

struct ps_pool *ps_tree_pool_new(struct ps_pool_tree *tree, const char *name, struct ps_pool *parent,
                                 struct ps_error *err)
{
    struct ps_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->name = strdup(name);
    if (!pool->name || ps_pool_config_init(&pool->config) != 0) {
        free(pool->name);
        free(pool);
        ps_error_set(err, PS_ENOMEM, "out of memory creating pool \"%s\"", name);
        return NULL;
    }
    if (ps_pool_config_init(&pool->explicit_config) != 0) {
        ps_pool_config_release(&pool->config);
        free(pool->name);
        free(pool);
        ps_error_set(err, PS_ENOMEM, "out of memory creating pool \"%s\"", name);
        return NULL;
    }
    pool->tree = tree;
    pool->parent = parent;
    pool->fs_index = -1;
    pool->index = -1;
    pool->dynamic.below_fair_share_since_ms = PS_STARVATION_NEVER;
    pool->config_version = ps_tree_pool_config_version_next();
    return pool;
}

int ps_tree_pool_effective(const struct ps_pool_tree *tree, const struct ps_pool_config *explicit_cfg,
                           struct ps_pool_config *out, char **issue)
{
    struct ps_error why;
    *issue = NULL;
    if (ps_pool_config_effective(explicit_cfg, &tree->config.pool_config_presets, out, &why) != 0)
        return PS_ENOMEM;
    if (why.code != 0 && !(*issue = strdup(why.msg))) {
        ps_pool_config_release(out);
        return PS_ENOMEM;
    }
    return 0;
}

void ps_tree_pool_set_configs(struct ps_pool *pool, struct ps_pool_config *explicit_cfg,
                              struct ps_pool_config *effective, char *issue)
{
    if (explicit_cfg) {
        ps_pool_config_release(&pool->explicit_config);
        pool->explicit_config = *explicit_cfg;
    }
    ps_pool_config_release(&pool->config);
    pool->config = *effective;
    free(pool->preset_issue);
    pool->preset_issue = issue;
    pool->config_version = ps_tree_pool_config_version_next();
}

const struct ps_pool_config *ps_pool_explicit_config(const struct ps_pool *pool)
{
    return pool->ephemeral || pool->is_root ? &pool->config : &pool->explicit_config;
}

void ps_tree_pool_free(struct ps_pool *pool)
{
    if (!pool)
        return;
    ps_pool_config_release(&pool->config);
    ps_pool_config_release(&pool->explicit_config);
    free(pool->preset_issue);
    ps_formula_free(pool->filter);
    free(pool->ephemeral_user);
    free(pool->name);
    free(pool);
}

/* Inserts a fresh pool (no operations yet) into the tree under pool->parent. */
static int link_pool(struct ps_pool_tree *tree, struct ps_pool *pool, struct ps_error *err)
{
    if (ps_tree_reserve((void ***)&tree->pools, &tree->pool_capacity, tree->pool_count) != 0 ||
        ps_strmap_put(&tree->pools_by_name, pool->name, pool) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory adding pool \"%s\"", pool->name);
    pool->index = tree->pool_count;
    pool->creation_seq = tree->next_pool_seq++;
    tree->pools[tree->pool_count++] = pool;
    pool->parent->child_pool_count++;
    return 0;
}

void ps_tree_pool_unlink(struct ps_pool_tree *tree, struct ps_pool *pool)
{
    int i = pool->index;
    memmove(&tree->pools[i], &tree->pools[i + 1], (size_t)(tree->pool_count - i - 1) * sizeof *tree->pools);
    tree->pool_count--;
    for (int k = i; k < tree->pool_count; k++)
        tree->pools[k]->index = k;
    ps_strmap_remove(&tree->pools_by_name, pool->name);
    pool->parent->child_pool_count--;
    pool->index = -1;
}

static void add_counts(struct ps_pool *from, int operations, int running, int lightweight)
{
    for (struct ps_pool *a = from; a; a = a->parent) {
        a->operation_count += operations;
        a->running_operation_count += running;
        a->lightweight_running_operation_count += lightweight;
    }
}

void ps_tree_pool_reparent(struct ps_pool *pool, struct ps_pool *new_parent)
{
    add_counts(pool->parent, -pool->operation_count, -pool->running_operation_count,
               -pool->lightweight_running_operation_count);
    pool->parent->child_pool_count--;
    pool->parent = new_parent;
    new_parent->child_pool_count++;
    add_counts(new_parent, pool->operation_count, pool->running_operation_count,
               pool->lightweight_running_operation_count);
}

void ps_tree_remove_empty_ephemeral(struct ps_pool_tree *tree, struct ps_pool *pool)
{
    while (pool && !pool->is_root && pool->ephemeral && pool->child_pool_count == 0 &&
           pool->child_operation_count == 0) {
        struct ps_pool *parent = pool->parent;
        ps_tree_pool_unlink(tree, pool);
        ps_tree_pool_free(pool);
        pool = parent;
    }
}

void ps_tree_begin_change(struct ps_pool_tree *tree)
{
    tree->started_count = 0;
    tree->moved_count = 0;
    tree->generation++;
    if (tree->owner)
        tree->owner_ops->begin(tree->owner);
}

/* ---- lifecycle --------------------------------------------------------------------------- */

/* ---- explicit config and templates -------------------------------------------------------- */

/* The canonical top-level name of a key or path of the tree config, or NULL. */
static const char *canonical_key(const char *path)
{
    char head[128];
    size_t n = strcspn(path, "/");
    if (n >= sizeof head)
        return NULL;
    memcpy(head, path, n);
    head[n] = '\0';
    const struct ps_attr *a = ps_attr_find(&ps_tree_config_table, head);
    return a ? a->name : NULL;
}

/* explicit[key's canonical name] = its value in cfg, or removed when remove is set. */
static int record_key(struct ps_value *explicit_cfg, const struct ps_tree_config *cfg, const char *path,
                      bool remove)
{
    const char *name = canonical_key(path);
    if (!name)
        return 0;
    if (remove) {
        const char *const skip[] = {name, NULL};
        struct ps_value rest;
        if (ps_value_map_without(explicit_cfg, skip, &rest) != 0)
            return PS_ENOMEM;
        ps_value_release(explicit_cfg);
        *explicit_cfg = rest;
        return 0;
    }
    struct ps_value v;
    struct ps_error ignored;
    if (ps_tree_config_get(cfg, name, &v, &ignored) != 0)
        return PS_ENOMEM;
    return ps_value_put(explicit_cfg, name, &v);
}

/* The effective config (into uninitialised *out): defaults, then the templates (keys
 * canonicalised, maps merged), then the explicit keys, each replacing the whole key. */
static int build_config(const struct ps_value *templates, const struct ps_value *explicit_cfg,
                        struct ps_tree_config *out, struct ps_error *err)
{
    struct ps_value merged = ps_value_map();
    int rc = 0;
    for (int i = 0; rc == 0 && templates && templates->type == PS_VALUE_MAP && i < templates->count; i++) {
        const char *name = canonical_key(templates->keys[i]);
        struct ps_value one = ps_value_map(), item;
        if (!name || strchr(templates->keys[i], '/'))
            name = templates->keys[i];   /* the apply below names it */
        if (ps_value_copy(&item, &templates->items[i]) != 0 || ps_value_put(&one, name, &item) != 0 ||
            ps_value_patch(&merged, &one) != 0)
            rc = PS_ENOMEM;
        ps_value_release(&one);
    }
    for (int i = 0; rc == 0 && i < explicit_cfg->count; i++) {
        struct ps_value item;
        if (ps_value_copy(&item, &explicit_cfg->items[i]) != 0 ||
            ps_value_put(&merged, explicit_cfg->keys[i], &item) != 0)
            rc = PS_ENOMEM;
    }
    if (rc == 0 && ps_tree_config_init(out) != 0)
        rc = PS_ENOMEM;
    if (rc == PS_ENOMEM) {
        ps_value_release(&merged);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    rc = ps_tree_config_apply(out, &merged, err);
    ps_value_release(&merged);
    if (rc != 0)
        ps_tree_config_release(out);
    return rc;
}

struct ps_pool_tree *ps_pool_tree_new(const char *name, const struct ps_value *config,
                                      struct ps_error *err)
{
    return ps_pool_tree_new_templated(name, config, NULL, err);
}

struct ps_pool_tree *ps_pool_tree_new_templated(const char *name, const struct ps_value *config,
                                                const struct ps_value *templates,
                                                struct ps_error *err)
{
    if (ps_pool_name_check("pool tree name", name, err) != 0)
        return NULL;
    struct ps_pool_tree *tree = calloc(1, sizeof *tree);
    if (!tree) {
        ps_error_set(err, PS_ENOMEM, "out of memory creating pool tree \"%s\"", name);
        return NULL;
    }
    /* Each tree's generations start at a base of their own (the trees created before it in the
     * high half), so that an input built from a freed tree never matches a new tree at the same
     * address (tree_fs.h keeps a build's elements while the generation stays). */
    static uint64_t trees_created;
    tree->generation = __atomic_fetch_add(&trees_created, 1, __ATOMIC_RELAXED) << 32;
    ps_strmap_init(&tree->pools_by_name);
    ps_strmap_init(&tree->ops_by_id);
    tree->explicit_config = ps_value_map();
    tree->templates = ps_value_map();
    tree->custom = ps_value_map();
    tree->name = strdup(name);
    if (!tree->name || ps_tree_config_init(&tree->config) != 0) {
        free(tree->name);
        free(tree);
        ps_error_set(err, PS_ENOMEM, "out of memory creating pool tree \"%s\"", name);
        return NULL;
    }
    tree->root = ps_tree_pool_new(tree, PS_ROOT_POOL_NAME, NULL, err);
    int rc = tree->root ? 0 : PS_ENOMEM;
    struct ps_value rest;
    const struct ps_value *pools;
    if (rc == 0) {
        tree->root->is_root = true;
        rc = ps_tree_split_pools(config, &rest, &pools);
    }
    if (rc == 0) {
        /* the keys given, checked on their own as a tree's attributes, become the explicit
         * config; the templates go under them */
        const struct ps_value *given = pools ? &rest : config;
        rc = ps_tree_config_apply(&tree->config, given, err);
        for (int i = 0; rc == 0 && given && given->type == PS_VALUE_MAP && i < given->count; i++)
            if (record_key(&tree->explicit_config, &tree->config, given->keys[i], false) != 0)
                rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        if (rc == 0 && templates && ps_value_copy(&tree->templates, templates) != 0)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        if (rc == 0 && templates) {
            struct ps_tree_config built;
            rc = build_config(&tree->templates, &tree->explicit_config, &built, err);
            if (rc == 0) {
                ps_tree_config_release(&tree->config);
                tree->config = built;
            }
        }
        if (rc == 0)
            rc = parse_filter(tree->config.nodes_filter, &tree->nodes_filter, err);
        if (rc == 0)
            rc = ps_pool_tree_create_pools(tree, pools, err);
        ps_value_release(&rest);
    }
    if (rc != 0) {
        ps_error_set(err, rc, "out of memory creating pool tree \"%s\"", name);
        ps_error_prefix(err, "pool tree \"%s\"", name);
        ps_pool_tree_free(tree);
        return NULL;
    }
    return tree;
}

void ps_pool_tree_free(struct ps_pool_tree *tree)
{
    if (!tree)
        return;
    ps_tree_ops_release(tree);
    ps_tree_nodes_release(tree);
    for (int i = 0; i < tree->pool_count; i++)
        ps_tree_pool_free(tree->pools[i]);
    free(tree->pools);
    ps_tree_pool_free(tree->root);
    ps_strmap_release(&tree->pools_by_name);
    ps_strmap_release(&tree->ops_by_id);
    ps_tree_config_release(&tree->config);
    ps_value_release(&tree->explicit_config);
    ps_value_release(&tree->templates);
    ps_value_release(&tree->custom);
    ps_formula_free(tree->nodes_filter);
    free(tree->name);
    free(tree);
}

uint64_t ps_pool_tree_generation(const struct ps_pool_tree *tree)
{
    return tree->generation;
}

const char *ps_pool_tree_name(const struct ps_pool_tree *tree)
{
    return tree->name;
}

const struct ps_tree_config *ps_pool_tree_config(const struct ps_pool_tree *tree)
{
    return &tree->config;
}

const struct ps_formula *ps_pool_tree_nodes_filter(const struct ps_pool_tree *tree)
{
    return tree->nodes_filter;
}

/* ---- tree config ------------------------------------------------------------------------- */

struct rederived {
    struct ps_pool_config config;
    char *issue;
};

/* The effective config of every explicit pool under the presets of config (in pool order),
 * computed before anything changes so that a failure leaves the tree as it was. None of the
 * preset keys takes part in a rule between pools, so they need no validation here. */
static int rederive_pools(const struct ps_pool_tree *tree, const struct ps_tree_config *config,
                          struct rederived **out, struct ps_error *err)
{
    *out = calloc((size_t)tree->pool_count + 1, sizeof **out);
    if (!*out)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int n = 0, rc = 0;
    for (int i = 0; rc == 0 && i < tree->pool_count; i++) {
        const struct ps_pool *p = tree->pools[i];
        if (p->ephemeral)
            continue;
        struct ps_error why;
        rc = ps_pool_config_effective(&p->explicit_config, &config->pool_config_presets,
                                      &(*out)[n].config, &why);
        if (rc == 0 && why.code != 0 && !((*out)[n].issue = strdup(why.msg))) {
            ps_pool_config_release(&(*out)[n].config);
            rc = PS_ENOMEM;
        }
        if (rc == 0)
            n++;
    }
    if (rc != 0) {
        for (int k = 0; k < n; k++) {
            ps_pool_config_release(&(*out)[k].config);
            free((*out)[k].issue);
        }
        free(*out);
        *out = NULL;
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    return 0;
}

/* Makes copy (taken) the tree's config with explicit_next and templates_next (taken when
 * given, NULL: unchanged) once every check passed; on error nothing changed. */
static int commit_config(struct ps_pool_tree *tree, struct ps_tree_config copy,
                         struct ps_value *explicit_next, struct ps_value *templates_next,
                         struct ps_error *err)
{
    int rc = 0;
    if (copy.main_resource != tree->config.main_resource)
        rc = ps_tree_validate_main_resource(tree, copy.main_resource, err);
    bool uses_user_pools = rc == 0 && copy.use_user_default_parent_pool_map &&
                           !tree->config.use_user_default_parent_pool_map;
    if (uses_user_pools && tree->owner) {
        struct ps_value users;
        if (tree->owner_ops->user_default_pools(tree->owner, &users) != 0)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        else
            rc = ps_pool_tree_check_user_default_pools(tree, &users, err);
        ps_value_release(&users);
        if (rc != 0)
            ps_error_prefix(err, "use_user_default_parent_pool_map");
    }
    bool filter_changed = rc == 0 && strcmp(copy.nodes_filter, tree->config.nodes_filter) != 0;
    struct ps_formula *filter = NULL;
    if (filter_changed) {
        rc = parse_filter(copy.nodes_filter, &filter, err);
        if (rc == 0 && tree->owner)
            rc = tree->owner_ops->check_filter(tree->owner, tree, filter, err);
    }
    struct rederived *again = NULL;
    if (rc == 0 && !ps_value_equal(&copy.pool_config_presets, &tree->config.pool_config_presets))
        rc = rederive_pools(tree, &copy, &again, err);
    if (rc != 0) {
        ps_formula_free(filter);
        ps_tree_config_release(&copy);
        if (explicit_next)
            ps_value_release(explicit_next);
        if (templates_next)
            ps_value_release(templates_next);
        ps_error_prefix(err, "pool tree \"%s\"", tree->name);
        return rc;
    }
    ps_tree_config_release(&tree->config);
    tree->config = copy;
    if (explicit_next) {
        ps_value_release(&tree->explicit_config);
        tree->explicit_config = *explicit_next;
    }
    if (templates_next) {
        ps_value_release(&tree->templates);
        tree->templates = *templates_next;
    }
    if (again) {
        for (int i = 0, k = 0; i < tree->pool_count; i++) {
            struct ps_pool *p = tree->pools[i];
            if (p->ephemeral)
                continue;
            ps_tree_pool_set_configs(p, NULL, &again[k].config, again[k].issue);
            k++;
        }
        free(again);
    }
    if (filter_changed) {
        ps_formula_free(tree->nodes_filter);
        tree->nodes_filter = filter;
        if (tree->owner) {
            tree->owner_ops->apply_filter(tree->owner, tree);
        } else {
            /* A standalone tree lets go of the nodes the new filter no longer matches. */
            for (int i = tree->node_count - 1; i >= 0; i--)
                if (!ps_pool_tree_node_matches(tree, tree->nodes[i]))
                    ps_pool_tree_remove_node(tree, tree->nodes[i]);
        }
        ps_tree_invalidate_filter_cache(tree);
    }
    if (uses_user_pools)
        ps_pool_tree_actualize_ephemeral_parents(tree);
    ps_pool_tree_run_pending(tree);
    return 0;
}

static int update_config(struct ps_pool_tree *tree, const char *key, const struct ps_value *value,
                         const struct ps_value *map, struct ps_error *err)
{
    ps_tree_begin_change(tree);
    /* the change applied to the config as it is, for its checks and messages */
    struct ps_tree_config changed;
    if (ps_tree_config_copy(&changed, &tree->config) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = map ? ps_tree_config_apply(&changed, map, err) : ps_tree_config_set(&changed, key, value, err);
    if (rc != 0) {
        ps_tree_config_release(&changed);
        ps_error_prefix(err, "pool tree \"%s\"", tree->name);
        return rc;
    }
    /* what was set joins the explicit keys (a null top-level key leaves them: the templates'
     * value or the default applies again), and the config is built anew */
    struct ps_value explicit_next;
    rc = ps_value_copy(&explicit_next, &tree->explicit_config) != 0 ? PS_ENOMEM : 0;
    if (map) {
        for (int i = 0; rc == 0 && i < map->count; i++)
            rc = record_key(&explicit_next, &changed, map->keys[i],
                            !strchr(map->keys[i], '/') && map->items[i].type == PS_VALUE_NULL);
    } else if (rc == 0) {
        rc = record_key(&explicit_next, &changed, key,
                        !strchr(key, '/') && (!value || value->type == PS_VALUE_NULL));
    }
    ps_tree_config_release(&changed);
    if (rc != 0) {
        ps_value_release(&explicit_next);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    struct ps_tree_config next;
    rc = build_config(&tree->templates, &explicit_next, &next, err);
    if (rc != 0) {
        ps_value_release(&explicit_next);
        ps_error_prefix(err, "pool tree \"%s\"", tree->name);
        return rc;
    }
    return commit_config(tree, next, &explicit_next, NULL, err);
}

int ps_pool_tree_set_templates(struct ps_pool_tree *tree, const struct ps_value *templates,
                               struct ps_error *err)
{
    ps_tree_begin_change(tree);
    struct ps_value next_templates;
    if (ps_value_copy(&next_templates, templates) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    struct ps_tree_config next;
    int rc = build_config(&next_templates, &tree->explicit_config, &next, err);
    if (rc != 0) {
        ps_value_release(&next_templates);
        ps_error_prefix(err, "pool tree \"%s\"", tree->name);
        return rc;
    }
    return commit_config(tree, next, NULL, &next_templates, err);
}

const struct ps_value *ps_pool_tree_explicit_config(const struct ps_pool_tree *tree)
{
    return &tree->explicit_config;
}

const struct ps_value *ps_pool_tree_templates(const struct ps_pool_tree *tree)
{
    return &tree->templates;
}

int ps_pool_tree_set_config(struct ps_pool_tree *tree, const char *key, const struct ps_value *value,
                            struct ps_error *err)
{
    return update_config(tree, key, value, NULL, err);
}

int ps_pool_tree_apply_config(struct ps_pool_tree *tree, const struct ps_value *map,
                              struct ps_error *err)
{
    if (!map)
        return 0;
    return update_config(tree, NULL, NULL, map, err);
}

const struct ps_value *ps_pool_tree_custom_attributes(const struct ps_pool_tree *tree)
{
    return &tree->custom;
}

int ps_pool_tree_set_custom_attribute(struct ps_pool_tree *tree, const char *key,
                                      const struct ps_value *value, struct ps_error *err)
{
    if (!key[0] || strchr(key, '/'))
        return ps_error_set(err, PS_EINVAL, "%s: a custom attribute of a pool tree is one "
                            "attribute name (no '/'), set as a whole", key[0] ? key : "\"\"");
    if (ps_pool_config_is_setting(key))
        return ps_error_set(err, PS_EINVAL, "%s: a pool attribute, not one of a pool tree "
                            "(set it on a pool)", key);
    const char *skip[] = {key, NULL};
    struct ps_value next, item = ps_value_null();
    if (ps_value_map_without(&tree->custom, skip, &next) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (value && value->type != PS_VALUE_NULL &&
        (ps_value_copy(&item, value) != 0 || ps_value_put(&next, key, &item) != 0)) {
        ps_value_release(&item);
        ps_value_release(&next);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    ps_value_release(&tree->custom);
    tree->custom = next;
    return 0;
}

/* ---- pools ------------------------------------------------------------------------------- */

struct ps_pool *ps_pool_tree_root(struct ps_pool_tree *tree)
{
    return tree->root;
}

struct ps_pool *ps_pool_tree_find_pool(const struct ps_pool_tree *tree, const char *name)
{
    if (strcmp(name, PS_ROOT_POOL_NAME) == 0)
        return tree->root;
    return ps_strmap_get(&tree->pools_by_name, name);
}

int ps_pool_tree_pool_count(const struct ps_pool_tree *tree)
{
    return tree->pool_count;
}

struct ps_pool *ps_pool_tree_pool_at(const struct ps_pool_tree *tree, int index)
{
    if (index < 0 || index >= tree->pool_count)
        return NULL;
    return tree->pools[index];
}

int64_t ps_pool_max_running_operations(const struct ps_pool *pool)
{
    const struct ps_tree_config *tc = &pool->tree->config;
    return pool->is_root ? tc->max_running_operation_count : ps_pool_config_max_running(&pool->config, tc);
}

int64_t ps_pool_max_operations(const struct ps_pool *pool)
{
    const struct ps_tree_config *tc = &pool->tree->config;
    return pool->is_root ? tc->max_operation_count : ps_pool_config_max_operations(&pool->config, tc);
}

struct ps_pool *ps_pool_tree_default_parent(const struct ps_pool_tree *tree)
{
    struct ps_pool *pool = ps_pool_tree_find_pool(tree, tree->config.default_parent_pool);
    if (!pool || pool->ephemeral || pool->config.mode == PS_MODE_FIFO)
        return tree->root;
    return pool;
}

int ps_pool_tree_last_started_count(const struct ps_pool_tree *tree)
{
    return tree->started_count;
}

struct ps_tree_op *ps_pool_tree_last_started(const struct ps_pool_tree *tree, int index)
{
    if (index < 0 || index >= tree->started_count)
        return NULL;
    return tree->started[index];
}

int ps_pool_tree_last_moved_count(const struct ps_pool_tree *tree)
{
    return tree->moved_count;
}

struct ps_tree_op *ps_pool_tree_last_moved(const struct ps_pool_tree *tree, int index)
{
    if (index < 0 || index >= tree->moved_count)
        return NULL;
    return tree->moved[index];
}

/* The parent named parent_name for a pool to be placed under it. */
static int find_parent(struct ps_pool_tree *tree, const char *pool_name, const char *parent_name,
                       struct ps_pool **out, struct ps_error *err)
{
    struct ps_pool *parent = parent_name ? ps_pool_tree_find_pool(tree, parent_name) : tree->root;
    *out = NULL;
    if (!parent)
        return ps_error_set(err, PS_ENOENT,
                            "pool \"%s\": parent pool \"%s\" does not exist in pool tree \"%s\"",
                            pool_name, parent_name, tree->name);
    if (parent->ephemeral)
        return ps_error_set(err, PS_EINVAL,
                            "pool \"%s\": parent pool \"%s\" is ephemeral and cannot have explicit "
                            "child pools", pool_name, parent_name);
    *out = parent;
    return 0;
}

/* After a pool's config changed: its ephemeral children follow its ephemeral_subpool_config. */
static void refresh_ephemeral_children(struct ps_pool_tree *tree, struct ps_pool *pool)
{
    for (int i = 0; i < tree->pool_count; i++) {
        struct ps_pool *child = tree->pools[i];
        if (child->parent == pool && child->ephemeral)
        {
            ps_pool_config_apply_ephemeral(&child->config, &pool->config);
            child->config_version = ps_tree_pool_config_version_next();
        }
    }
}

int ps_pool_tree_create_pool(struct ps_pool_tree *tree, const char *name, const char *parent_name,
                             const struct ps_value *attrs, struct ps_error *err)
{
    ps_tree_begin_change(tree);
    int rc = ps_pool_name_check("pool name", name, err);
    if (rc != 0)
        return rc;
    struct ps_pool *parent;
    rc = find_parent(tree, name, parent_name, &parent, err);
    if (rc != 0)
        return rc;
    struct ps_pool *existing = ps_strmap_get(&tree->pools_by_name, name);
    if (existing && !existing->ephemeral)
        return ps_error_set(err, PS_EEXIST, "pool \"%s\" already exists in pool tree \"%s\"", name,
                            tree->name);

    struct ps_pool_config explicit_cfg, config;
    char *issue = NULL;
    if (ps_pool_config_init(&explicit_cfg) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    rc = ps_pool_config_apply(&explicit_cfg, attrs, err);
    if (rc != 0)
        ps_error_prefix(err, "pool \"%s\"", name);
    bool derived = false;
    if (rc == 0) {
        rc = ps_tree_pool_effective(tree, &explicit_cfg, &config, &issue);
        derived = rc == 0;
        if (rc != 0)
            ps_error_set(err, rc, "out of memory");
    }
    if (rc == 0)
        rc = ps_tree_validate_pool(tree, existing, name, &config, parent, err);
    struct ps_formula *filter = NULL;
    if (rc == 0)
        rc = parse_filter(config.scheduling_tag_filter, &filter, err);
    struct ps_pool *pool = existing;
    if (rc == 0 && !pool) {
        pool = ps_tree_pool_new(tree, name, parent, err);
        rc = pool ? link_pool(tree, pool, err) : PS_ENOMEM;
        if (rc != 0 && pool) {
            ps_tree_pool_free(pool);
            pool = NULL;
        }
    }
    if (rc != 0) {
        ps_formula_free(filter);
        ps_pool_config_release(&explicit_cfg);
        if (derived)
            ps_pool_config_release(&config);
        free(issue);
        return rc;
    }
    ps_tree_pool_set_configs(pool, &explicit_cfg, &config, issue);
    ps_formula_free(pool->filter);
    pool->filter = filter;
    if (existing) {
        ps_tree_reaccount_lightweight(tree, existing);
        /* An ephemeral pool becomes explicit: it stops counting for its user and keeps its
         * operations; it may move under the requested parent. */
        existing->ephemeral = false;
        existing->ephemeral_in_default_parent = false;
        free(existing->ephemeral_user);
        existing->ephemeral_user = NULL;
        if (existing->parent != parent)
            ps_tree_pool_reparent(existing, parent);
        ps_pool_tree_run_pending(tree);
    }
    return 0;
}

static int explicit_child_count(const struct ps_pool_tree *tree, const struct ps_pool *pool)
{
    int n = 0;
    for (int i = 0; i < tree->pool_count; i++)
        n += tree->pools[i]->parent == pool && !tree->pools[i]->ephemeral;
    return n;
}

int ps_pool_tree_remove_pool(struct ps_pool_tree *tree, const char *name, struct ps_error *err)
{
    ps_tree_begin_change(tree);
    struct ps_pool *pool = ps_pool_tree_find_pool(tree, name);
    if (!pool)
        return ps_error_set(err, PS_ENOENT, "pool \"%s\" does not exist in pool tree \"%s\"", name,
                            tree->name);
    if (pool->is_root)
        return ps_error_set(err, PS_EINVAL, "the root pool cannot be removed");
    int explicit_children = explicit_child_count(tree, pool);
    if (explicit_children > 0)
        return ps_error_set(err, PS_ESTATE, "pool \"%s\" cannot be removed: it has %d child pools",
                            name, explicit_children);
    /* ephemeral child pools hold operations: they stay with it */
    if ((pool->child_pool_count > 0 || pool->child_operation_count > 0) && !pool->ephemeral) {
        if (ps_tree_pool_make_ephemeral(tree, pool) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory removing pool \"%s\"", name);
        ps_pool_tree_run_pending(tree);
        return 0;
    }
    if (pool->operation_count > 0 || pool->child_pool_count > 0 || pool->child_operation_count > 0)
        return ps_error_set(err, PS_ESTATE, "ephemeral pool \"%s\" cannot be removed: it has "
                            "operations", name);
    ps_tree_pool_unlink(tree, pool);
    ps_tree_pool_free(pool);
    return 0;
}

/* The explicit pool name, for a change named by done ("moved", "renamed"): PS_ENOENT, or
 * PS_EINVAL for the root and ephemeral pools. */
static int explicit_pool(struct ps_pool_tree *tree, const char *name, const char *done,
                         struct ps_pool **out, struct ps_error *err)
{
    struct ps_pool *pool = *out = ps_pool_tree_find_pool(tree, name);
    if (!pool)
        return ps_error_set(err, PS_ENOENT, "pool \"%s\" does not exist in pool tree \"%s\"", name,
                            tree->name);
    if (pool->is_root)
        return ps_error_set(err, PS_EINVAL, "the root pool cannot be %s", done);
    if (pool->ephemeral)
        return ps_error_set(err, PS_EINVAL, "pool \"%s\" is ephemeral and cannot be %s", name,
                            done);
    return 0;
}

int ps_pool_tree_move_pool(struct ps_pool_tree *tree, const char *name, const char *new_parent,
                           struct ps_error *err)
{
    ps_tree_begin_change(tree);
    struct ps_pool *pool;
    int rc = explicit_pool(tree, name, "moved", &pool, err);
    if (rc != 0)
        return rc;
    struct ps_pool *parent;
    rc = find_parent(tree, name, new_parent, &parent, err);
    if (rc != 0)
        return rc;
    for (struct ps_pool *a = parent; a; a = a->parent)
        if (a == pool)
            return ps_error_set(err, PS_EINVAL,
                                "pool \"%s\" cannot be moved under itself or its descendant \"%s\"",
                                name, parent->name);
    if (parent == pool->parent)
        return 0;
    rc = ps_tree_validate_pool(tree, pool, name, &pool->config, parent, err);
    if (rc != 0)
        return rc;
    ps_tree_pool_reparent(pool, parent);
    ps_pool_tree_run_pending(tree);
    return 0;
}

int ps_pool_tree_rename_pool(struct ps_pool_tree *tree, const char *name, const char *new_name,
                             struct ps_error *err)
{
    ps_tree_begin_change(tree);
    struct ps_pool *pool;
    int rc = explicit_pool(tree, name, "renamed", &pool, err);
    if (rc == 0)
        rc = ps_pool_name_check("name", new_name, err);
    if (rc != 0 || strcmp(name, new_name) == 0)
        return rc;
    if (ps_pool_tree_find_pool(tree, new_name))
        return ps_error_set(err, PS_EEXIST, "name: pool \"%s\" already exists in pool tree \"%s\"",
                            new_name, tree->name);
    /* operations name their pool: one in the subtree would lose it */
    for (int i = 0; i < tree->pool_count; i++) {
        const struct ps_pool *p = tree->pools[i];
        for (const struct ps_pool *a = p; a && p->child_operation_count > 0; a = a->parent)
            if (a == pool)
                return ps_error_set(err, PS_ESTATE,
                                    "pool \"%s\" cannot be renamed: pool \"%s\" in its subtree "
                                    "has %d operations",
                                    name, p->name, p->child_operation_count);
    }
    char *copy = strdup(new_name);
    if (!copy || ps_strmap_put(&tree->pools_by_name, copy, pool) != 0) {
        free(copy);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    ps_strmap_remove(&tree->pools_by_name, pool->name);
    free(pool->name);
    pool->name = copy;
    return 0;
}

static int update_pool(struct ps_pool_tree *tree, const char *name, const char *key,
                       const struct ps_value *value, const struct ps_value *map, struct ps_error *err)
{
    ps_tree_begin_change(tree);
    struct ps_pool *pool = ps_pool_tree_find_pool(tree, name);
    if (!pool)
        return ps_error_set(err, PS_ENOENT, "pool \"%s\" does not exist in pool tree \"%s\"", name,
                            tree->name);
    if (pool->is_root)
        return ps_error_set(err, PS_EINVAL,
                            "the root pool has no pool attributes: set the attributes of pool tree \"%s\"",
                            tree->name);
    if (pool->ephemeral)
        return ps_error_set(err, PS_EINVAL,
                            "pool \"%s\" is ephemeral: create it explicitly to configure it", name);
    struct ps_pool_config explicit_cfg, config;
    char *issue = NULL;
    if (ps_pool_config_copy(&explicit_cfg, &pool->explicit_config) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = map ? ps_pool_config_apply(&explicit_cfg, map, err)
                 : ps_pool_config_set(&explicit_cfg, key, value, err);
    if (rc != 0)
        ps_error_prefix(err, "pool \"%s\"", name);
    bool derived = false;
    if (rc == 0) {
        rc = ps_tree_pool_effective(tree, &explicit_cfg, &config, &issue);
        derived = rc == 0;
        if (rc != 0)
            ps_error_set(err, rc, "out of memory");
    }
    if (rc == 0)
        rc = ps_tree_validate_pool(tree, pool, name, &config, pool->parent, err);
    struct ps_formula *filter = NULL;
    bool filter_changed = rc == 0 && strcmp(config.scheduling_tag_filter, pool->config.scheduling_tag_filter) != 0;
    if (filter_changed)
        rc = parse_filter(config.scheduling_tag_filter, &filter, err);
    if (rc == 0 && ps_tree_reserve_moves(tree) != 0)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc != 0) {
        ps_pool_config_release(&explicit_cfg);
        if (derived)
            ps_pool_config_release(&config);
        free(issue);
        return rc;
    }
    ps_tree_pool_set_configs(pool, &explicit_cfg, &config, issue);
    if (filter_changed) {
        ps_formula_free(pool->filter);
        pool->filter = filter;
    }
    refresh_ephemeral_children(tree, pool);
    ps_tree_move_out_of_stale_subpools(tree, pool);
    ps_tree_reaccount_lightweight(tree, pool);
    ps_tree_run_pending(tree);
    return 0;
}

int ps_pool_tree_set_pool_attr(struct ps_pool_tree *tree, const char *pool, const char *key,
                               const struct ps_value *value, struct ps_error *err)
{
    return update_pool(tree, pool, key, value, NULL, err);
}

int ps_pool_tree_apply_pool_attrs(struct ps_pool_tree *tree, const char *pool,
                                  const struct ps_value *map, struct ps_error *err)
{
    if (!map)
        return 0;
    return update_pool(tree, pool, NULL, NULL, map, err);
}

int ps_pool_tree_get_pool_attr(const struct ps_pool_tree *tree, const char *name, const char *key,
                               struct ps_value *out, struct ps_error *err)
{
    *out = ps_value_null();
    const struct ps_pool *pool = ps_pool_tree_find_pool(tree, name);
    if (!pool)
        return ps_error_set(err, PS_ENOENT, "pool \"%s\" does not exist in pool tree \"%s\"", name,
                            tree->name);
    if (pool->is_root)
        return ps_error_set(err, PS_EINVAL,
                            "the root pool has no pool attributes: read the attributes of pool tree \"%s\"",
                            tree->name);
    int rc = ps_pool_config_get(ps_pool_explicit_config(pool), key, out, err);
    if (rc != 0)
        ps_error_prefix(err, "pool \"%s\"", name);
    return rc;
}

bool ps_pool_aggressive_preemption_allowed(const struct ps_pool *pool)
{
    for (const struct ps_pool *p = pool; p && !p->is_root; p = p->parent)
        if (p->config.allow_aggressive_preemption.set)
            return p->config.allow_aggressive_preemption.value;
    return true;
}

bool ps_pool_use_satisfaction_for_scheduling(const struct ps_pool *pool)
{
    for (const struct ps_pool *p = pool; p; p = p->parent)
        if (p->config.use_pool_satisfaction_for_scheduling.set)
            return p->config.use_pool_satisfaction_for_scheduling.value;
    return false;
}

const char *ps_pool_profiling_tag(const struct ps_pool *pool, const char *tag)
{
    if (!tag)
        return NULL;
    for (const struct ps_pool *p = pool; p; p = p->parent)
        for (int i = 0; i < p->config.allowed_profiling_tags.count; i++)
            if (strcmp(p->config.allowed_profiling_tags.items[i], tag) == 0)
                return tag;
    return "invalid";
}
