#include "core/strategy.h"
#include "core/tree_template.h"

#include "core/offloading.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool_tree_impl.h"
#include "core/strmap.h"
#include "core/user_pools.h"

struct ps_strategy {
    struct ps_pool_tree **trees;            /* creation order */
    int tree_count, tree_capacity;
    char *default_tree;

    struct ps_node **nodes;                 /* registration order */
    int node_count, node_capacity;
    struct ps_strmap nodes_by_id;
    char **tagset_keys;                     /* by tag set id (ps_node.tagset); owned */
    int tagset_count, tagset_capacity;
    struct ps_strmap tagsets;               /* key -> id + 1 */

    struct ps_operation **ops;
    int op_count, op_capacity;
    struct ps_strmap ops_by_id;

    struct ps_operation **activated;        /* capacity kept >= op_count */
    int activated_count, activated_capacity;
    int depth;                              /* > 0 inside a strategy call */
    bool has_connect_time;                  /* ps_strategy_set_connection_time */
    int64_t connected_at_ms;
    struct ps_value user_default_pools;     /* map user -> pool name (user_pools.h) */
    struct ps_value templates;              /* template_pool_tree_config_map, checked */
    struct ps_value tree_defaults;          /* tree keys the scheduler config gives (a map) */
    const struct ps_pool_access *access;    /* borrowed (ps_strategy_set_access) */
};

const char *ps_operation_state_name(enum ps_operation_state state)
{
    switch (state) {
    case PS_OP_STARTING: return "starting";
    case PS_OP_PENDING: return "pending";
    case PS_OP_RUNNING: return "running";
    case PS_OP_COMPLETED: return "completed";
    case PS_OP_FAILED: return "failed";
    case PS_OP_ABORTED: return "aborted";
    }
    return "unknown";
}

struct ps_strategy *ps_strategy_new(void)
{
    struct ps_strategy *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    ps_strmap_init(&s->nodes_by_id);
    ps_strmap_init(&s->ops_by_id);
    ps_strmap_init(&s->tagsets);
    s->user_default_pools = ps_value_map();
    s->templates = ps_value_map();
    s->tree_defaults = ps_value_map();
    return s;
}

static void operation_free(struct ps_operation *op)
{
    if (!op)
        return;
    for (int i = 0; i < op->tree_count; i++)
        free(op->tree_names ? op->tree_names[i] : NULL);
    free(op->tree_names);
    free(op->memberships);
    ps_operation_spec_release(&op->spec);
    free(op->user);
    free(op->id);
    free(op);
}

void ps_strategy_free(struct ps_strategy *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->tree_count; i++)
        ps_pool_tree_free(s->trees[i]);
    free(s->trees);
    for (int i = 0; i < s->node_count; i++)
        ps_node_free(s->nodes[i]);
    free(s->nodes);
    for (int i = 0; i < s->op_count; i++)
        operation_free(s->ops[i]);
    free(s->ops);
    free(s->activated);
    ps_strmap_release(&s->nodes_by_id);
    for (int i = 0; i < s->tagset_count; i++)
        free(s->tagset_keys[i]);
    free(s->tagset_keys);
    ps_strmap_release(&s->tagsets);
    ps_strmap_release(&s->ops_by_id);
    ps_value_release(&s->templates);
    ps_value_release(&s->tree_defaults);
    free(s->default_tree);
    ps_value_release(&s->user_default_pools);
    free(s);
}

/* ---- change tracking --------------------------------------------------------------------- */

static void begin(struct ps_strategy *s)
{
    s->activated_count = 0;
    s->depth++;
}

static void end(struct ps_strategy *s)
{
    s->depth--;
}

static void tree_begin(void *owner)
{
    struct ps_strategy *s = owner;
    if (s->depth == 0)
        s->activated_count = 0;
}

static bool active(const struct ps_operation *op)
{
    return op->state == PS_OP_STARTING || op->state == PS_OP_PENDING || op->state == PS_OP_RUNNING;
}

/* Recomputes pending/running from the memberships and records a transition to running. */
static void refresh_state(struct ps_strategy *s, struct ps_operation *op)
{
    if (!active(op))
        return;
    /* Running once it runs in one of its trees (upstream enables an operation in each tree
     * separately: it schedules in the trees where it runs and waits in the others). */
    bool any_running = false;
    for (int i = 0; i < op->tree_count; i++)   /* NULL: erased with its tree */
        any_running = any_running || (op->memberships[i] && op->memberships[i]->running);
    enum ps_operation_state next = any_running ? PS_OP_RUNNING : PS_OP_PENDING;
    if (next == PS_OP_RUNNING && op->state != PS_OP_RUNNING &&
        s->activated_count < s->activated_capacity)
        s->activated[s->activated_count++] = op;
    op->state = next;
}

void *ps_tree_op_host(const struct ps_tree_op *member)
{
    const struct ps_operation *op = member ? member->user_data : NULL;
    return op ? op->host : NULL;
}

static void tree_op_running(void *owner, struct ps_tree_op *op)
{
    refresh_state(owner, op->user_data);
}

/* ---- trees ------------------------------------------------------------------------------- */

struct ps_pool_tree *ps_strategy_find_tree(const struct ps_strategy *s, const char *name)
{
    for (int i = 0; i < s->tree_count; i++)
        if (strcmp(ps_pool_tree_name(s->trees[i]), name) == 0)
            return s->trees[i];
    return NULL;
}

int ps_strategy_tree_count(const struct ps_strategy *s)
{
    return s->tree_count;
}

struct ps_pool_tree *ps_strategy_tree_at(const struct ps_strategy *s, int index)
{
    return index >= 0 && index < s->tree_count ? s->trees[index] : NULL;
}

static const struct ps_formula *filter_of(const struct ps_pool_tree *tree,
                                          const struct ps_pool_tree *changed,
                                          const struct ps_formula *changed_filter)
{
    return tree == changed ? changed_filter : ps_pool_tree_nodes_filter(tree);
}

/* Checks that no node matches two trees when `changed` (maybe not yet in the list) has
 * `changed_filter`. */
static int check_overlaps(const struct ps_strategy *s, const struct ps_pool_tree *changed,
                          const struct ps_formula *changed_filter, struct ps_error *err)
{
    bool changed_listed = false;
    for (int t = 0; t < s->tree_count; t++)
        changed_listed = changed_listed || s->trees[t] == changed;
    for (int n = 0; n < s->node_count; n++) {
        const struct ps_node *node = s->nodes[n];
        const char *const *tags = (const char *const *)node->tags;
        const struct ps_pool_tree *first = NULL;
        for (int t = 0; t <= s->tree_count; t++) {
            const struct ps_pool_tree *tree = t < s->tree_count ? s->trees[t]
                                              : (changed && !changed_listed ? changed : NULL);
            if (!tree || !ps_formula_eval(filter_of(tree, changed, changed_filter), tags, node->tag_count))
                continue;
            if (first)
                return ps_error_set(err, PS_EINVAL,
                                    "node \"%s\" would belong to two pool trees, \"%s\" and \"%s\": "
                                    "their nodes_filter must not overlap",
                                    node->id, ps_pool_tree_name(first), ps_pool_tree_name(tree));
            first = tree;
        }
    }
    return 0;
}

/* The tree whose nodes_filter the node matches (trees do not overlap), or NULL. */
static struct ps_pool_tree *matching_tree(const struct ps_strategy *s, const struct ps_node *node)
{
    for (int t = 0; t < s->tree_count; t++)
        if (ps_pool_tree_node_matches(s->trees[t], node))
            return s->trees[t];
    return NULL;
}

/* Moves every node to the tree it matches now. */
static void place_nodes(struct ps_strategy *s)
{
    for (int n = 0; n < s->node_count; n++) {
        struct ps_node *node = s->nodes[n];
        struct ps_pool_tree *target = matching_tree(s, node);
        if (node->tree == target)
            continue;
        if (node->tree)
            ps_pool_tree_remove_node(node->tree, node);
        if (target)
            ps_pool_tree_add_node(target, node, NULL);   /* out of memory: stays treeless */
    }
}

static int tree_check_filter(void *owner, struct ps_pool_tree *tree,
                             const struct ps_formula *filter, struct ps_error *err)
{
    return check_overlaps(owner, tree, filter, err);
}

static void tree_apply_filter(void *owner, struct ps_pool_tree *tree)
{
    (void)tree;
    place_nodes(owner);
}

static const struct ps_pool_access *tree_access(const void *owner)
{
    return ps_strategy_access(owner);
}

static int tree_user_default_pools(const void *owner, struct ps_value *out)
{
    return ps_strategy_user_default_pools(owner, out);
}

static const char *tree_user_default_pool(const void *owner, const char *user)
{
    return ps_strategy_user_default_pool(owner, user);
}

/* What each of the strategy's trees asks of it (pool_tree_impl.h). */
static const struct ps_tree_owner_ops tree_owner_ops = {
    .begin = tree_begin,
    .op_running = tree_op_running,
    .check_filter = tree_check_filter,
    .apply_filter = tree_apply_filter,
    .access = tree_access,
    .user_default_pools = tree_user_default_pools,
    .user_default_pool = tree_user_default_pool,
};

/* The templates of tree `name` (ps_tree_templates_compile) over the scheduler's tree defaults:
 * a default applies where no template sets its key. */
static int compile_templates(const struct ps_strategy *s, const struct ps_value *templates,
                             const char *name, struct ps_value *out)
{
    if (ps_tree_templates_compile(templates, name, out) != 0)
        return PS_ENOMEM;
    for (int i = 0; i < s->tree_defaults.count; i++) {
        struct ps_value item;
        if (ps_value_find(out, s->tree_defaults.keys[i]))
            continue;
        if (ps_value_copy(&item, &s->tree_defaults.items[i]) != 0 ||
            ps_value_put(out, s->tree_defaults.keys[i], &item) != 0) {
            ps_value_release(out);
            return PS_ENOMEM;
        }
    }
    return 0;
}

int ps_strategy_add_tree(struct ps_strategy *s, const char *name, const struct ps_value *config,
                         struct ps_error *err)
{
    begin(s);
    int rc = 0;
    if (ps_strategy_find_tree(s, name)) {
        rc = ps_error_set(err, PS_EEXIST, "pool tree \"%s\" already exists", name);
        goto out;
    }
    struct ps_value templates;
    if (compile_templates(s, &s->templates, name, &templates) != 0) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto out;
    }
    struct ps_pool_tree *tree = ps_pool_tree_new_templated(name, config, &templates, err);
    ps_value_release(&templates);
    if (!tree) {
        rc = err && err->code ? err->code : PS_EINVAL;
        goto out;
    }
    rc = check_overlaps(s, tree, ps_pool_tree_nodes_filter(tree), err);
    if (rc == 0 && ps_tree_reserve((void ***)&s->trees, &s->tree_capacity, s->tree_count) != 0)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc != 0) {
        ps_pool_tree_free(tree);
        goto out;
    }
    tree->owner = s;
    tree->owner_ops = &tree_owner_ops;
    if (s->has_connect_time)
        ps_pool_tree_set_connect_time(tree, s->connected_at_ms);
    s->trees[s->tree_count++] = tree;
    place_nodes(s);
out:
    end(s);
    return rc;
}

int ps_strategy_set_tree_templates(struct ps_strategy *s, const struct ps_value *map,
                                   struct ps_error *err)
{
    int rc = ps_tree_templates_check(map, err);
    struct ps_value next = ps_value_map();
    if (rc == 0 && map && map->type == PS_VALUE_MAP && ps_value_copy(&next, map) != 0)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    struct ps_value *old = rc == 0 ? calloc((size_t)s->tree_count + 1, sizeof *old) : NULL;
    if (rc == 0 && !old)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc != 0) {
        ps_value_release(&next);
        return rc;
    }
    begin(s);
    /* each tree under its new templates; a refusal puts the trees done back under their old */
    int done = 0;
    for (; rc == 0 && done < s->tree_count; done++) {
        struct ps_pool_tree *tree = s->trees[done];
        struct ps_value compiled;
        if (ps_value_copy(&old[done], ps_pool_tree_templates(tree)) != 0 ||
            compile_templates(s, &next, ps_pool_tree_name(tree), &compiled) != 0) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
            break;
        }
        rc = ps_pool_tree_set_templates(tree, &compiled, err);
        ps_value_release(&compiled);
        if (rc != 0) {
            ps_error_prefix(err, "template_pool_tree_config_map");
            break;
        }
    }
    for (int i = done - 1; i >= 0; i--) {
        if (rc != 0)
            ps_pool_tree_set_templates(s->trees[i], &old[i], NULL);   /* held before: valid */
    }
    for (int i = 0; i <= done && i < s->tree_count; i++)
        ps_value_release(&old[i]);
    free(old);
    if (rc == 0) {
        ps_value_release(&s->templates);
        s->templates = next;
    } else {
        ps_value_release(&next);
    }
    end(s);
    return rc;
}

const struct ps_value *ps_strategy_tree_templates(const struct ps_strategy *s)
{
    return &s->templates;
}

int ps_strategy_set_tree_defaults(struct ps_strategy *s, const struct ps_value *map,
                                  struct ps_error *err)
{
    struct ps_value next = ps_value_map(), old = s->tree_defaults;
    if (map && map->type == PS_VALUE_MAP && ps_value_copy(&next, map) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    s->tree_defaults = next;
    /* every tree again under its templates, which now carry the defaults beneath them */
    int rc = ps_strategy_set_tree_templates(s, &s->templates, err);
    if (rc != 0) {
        s->tree_defaults = old;
        ps_value_release(&next);
        return rc;
    }
    ps_value_release(&old);
    return 0;
}

void ps_strategy_set_connection_time(struct ps_strategy *s, int64_t connected_at_ms)
{
    s->has_connect_time = true;
    s->connected_at_ms = connected_at_ms;
    for (int i = 0; i < s->tree_count; i++)
        ps_pool_tree_set_connect_time(s->trees[i], connected_at_ms);
}

/* The number of trees an operation still runs in (memberships not erased). */
static int live_trees(const struct ps_operation *op)
{
    int n = 0;
    for (int i = 0; i < op->tree_count; i++)
        n += op->memberships[i] != NULL;
    return n;
}

/* Refuses (PS_ESTATE) while an operation runs only in tree: the host aborts such operations
 * first (upstream: "No suitable fair-share trees to schedule operation"). */
static int check_orphans(const struct ps_strategy *s, const struct ps_pool_tree *tree,
                         struct ps_error *err)
{
    int orphans = 0;
    const char *first = NULL;
    for (int i = 0; i < s->op_count; i++) {
        const struct ps_operation *op = s->ops[i];
        if (!active(op) || live_trees(op) != 1)
            continue;
        for (int k = 0; k < op->tree_count; k++)
            if (op->memberships[k] && op->memberships[k]->tree == tree) {
                orphans++;
                first = first ? first : op->id;
            }
    }
    if (orphans == 0)
        return 0;
    return ps_error_set(err, PS_ESTATE, "pool tree \"%s\" cannot be removed: %d operations run "
                        "only in it (\"%s\", ...): abort them first", ps_pool_tree_name(tree),
                        orphans, first);
}

/* Takes every operation out of tree (upstream's erased trees): its membership there is gone
 * (NULL), it keeps running in its other trees. */
static void drop_membership(struct ps_strategy *s, struct ps_operation *op, int k)
{
    struct ps_pool_tree *tree = op->memberships[k]->tree;
    op->memberships[k] = NULL;
    ps_pool_tree_remove_operation(tree, op->id, NULL);
    refresh_state(s, op);
}

static void erase_tree(struct ps_strategy *s, struct ps_pool_tree *tree)
{
    for (int i = 0; i < s->op_count; i++) {
        struct ps_operation *op = s->ops[i];
        for (int k = 0; active(op) && k < op->tree_count; k++)
            if (op->memberships[k] && op->memberships[k]->tree == tree)
                drop_membership(s, op, k);
    }
}

int ps_strategy_erase_operation_tree(struct ps_strategy *s, const char *id, const char *tree,
                                     struct ps_error *err)
{
    struct ps_operation *op = ps_strmap_get(&s->ops_by_id, id);
    int k = -1;
    for (int i = 0; op && active(op) && i < op->tree_count; i++)
        if (op->memberships[i] && strcmp(op->tree_names[i], tree) == 0)
            k = i;
    if (k < 0)
        return ps_error_set(err, PS_ENOENT, "operation \"%s\" does not run in pool tree \"%s\"",
                            id, tree);
    if (live_trees(op) == 1)
        return ps_error_set(err, PS_ESTATE, "operation \"%s\": pool tree \"%s\" is its last",
                            id, tree);
    begin(s);
    drop_membership(s, op, k);
    end(s);
    return 0;
}

int ps_strategy_remove_tree(struct ps_strategy *s, const char *name, struct ps_error *err)
{
    begin(s);
    int rc = 0;
    int index = -1;
    for (int i = 0; i < s->tree_count; i++)
        if (strcmp(ps_pool_tree_name(s->trees[i]), name) == 0)
            index = i;
    if (index < 0) {
        rc = ps_error_set(err, PS_ENOENT, "pool tree \"%s\" does not exist", name);
    } else if ((rc = check_orphans(s, s->trees[index], err)) != 0) {
        ;
    } else {
        struct ps_pool_tree *tree = s->trees[index];
        erase_tree(s, tree);
        memmove(&s->trees[index], &s->trees[index + 1], (size_t)(s->tree_count - index - 1) * sizeof *s->trees);
        s->tree_count--;
        if (s->default_tree && strcmp(s->default_tree, name) == 0) {
            free(s->default_tree);
            s->default_tree = NULL;
        }
        ps_pool_tree_free(tree);
    }
    end(s);
    return rc;
}

int ps_strategy_set_default_tree(struct ps_strategy *s, const char *name, struct ps_error *err)
{
    if (name && !ps_strategy_find_tree(s, name))
        return ps_error_set(err, PS_ENOENT, "default_tree: pool tree \"%s\" does not exist", name);
    char *copy = name ? strdup(name) : NULL;
    if (name && !copy)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    free(s->default_tree);
    s->default_tree = copy;
    return 0;
}

const char *ps_strategy_default_tree(const struct ps_strategy *s)
{
    return s->default_tree;
}

void ps_strategy_set_access(struct ps_strategy *s, const struct ps_pool_access *access)
{
    s->access = access;
}

const struct ps_pool_access *ps_strategy_access(const struct ps_strategy *s)
{
    return s->access;
}

/* ---- nodes ------------------------------------------------------------------------------- */

/* The tags as one string, each as "<length>:<tag>" (unambiguous whatever the tags hold). */
static char *tagset_key(const struct ps_node *node)
{
    size_t size = 1;
    for (int i = 0; i < node->tag_count; i++)
        size += strlen(node->tags[i]) + 24;
    char *key = malloc(size), *at = key;
    for (int i = 0; key && i < node->tag_count; i++)
        at += snprintf(at, size - (size_t)(at - key), "%zu:%s", strlen(node->tags[i]),
                       node->tags[i]);
    if (key)
        *at = '\0';
    return key;
}

/* Sets node->tagset: the id of an equal tag set seen before, or a new one. */
static int intern_tags(struct ps_strategy *s, struct ps_node *node)
{
    char *key = tagset_key(node);
    if (!key)
        return PS_ENOMEM;
    void *known = ps_strmap_get(&s->tagsets, key);
    if (known) {
        free(key);
        node->tagset = (int)((intptr_t)known - 1);
        return 0;
    }
    int id = s->tagset_count;
    if (ps_tree_reserve((void ***)&s->tagset_keys, &s->tagset_capacity, id) != 0 ||
        ps_strmap_put(&s->tagsets, key, (void *)(intptr_t)(id + 1)) != 0) {
        free(key);
        return PS_ENOMEM;
    }
    s->tagset_keys[s->tagset_count++] = key;
    node->tagset = id;
    return 0;
}

int ps_strategy_tagset_count(const struct ps_strategy *s)
{
    return s->tagset_count;
}

int ps_strategy_register_node(struct ps_strategy *s, const char *id, const char *const *tags,
                              int tag_count, const struct ps_resources *resource_limits,
                              struct ps_error *err)
{
    begin(s);
    int rc = 0;
    struct ps_node *node = ps_node_new(id, tags, tag_count, resource_limits, err);
    if (!node) {
        rc = err && err->code ? err->code : PS_EINVAL;
        goto out;
    }
    struct ps_pool_tree *target = NULL;
    for (int t = 0; t < s->tree_count; t++) {
        if (!ps_pool_tree_node_matches(s->trees[t], node))
            continue;
        if (target) {
            rc = ps_error_set(err, PS_EINVAL,
                              "node \"%s\" matches the nodes_filter of two pool trees, \"%s\" and "
                              "\"%s\", and cannot be registered",
                              id, ps_pool_tree_name(target), ps_pool_tree_name(s->trees[t]));
            ps_node_free(node);
            goto out;
        }
        target = s->trees[t];
    }
    struct ps_node *old = ps_strmap_get(&s->nodes_by_id, id);
    if (intern_tags(s, node) != 0 ||
        (!old && (ps_tree_reserve((void ***)&s->nodes, &s->node_capacity, s->node_count) != 0 ||
                  ps_strmap_put(&s->nodes_by_id, node->id, node) != 0))) {
        ps_node_free(node);
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto out;
    }
    if (old) {
        /* Re-registration: the old record is replaced in place, keeping its position. */
        int index = 0;
        while (s->nodes[index] != old)
            index++;
        if (old->tree)
            ps_pool_tree_remove_node(old->tree, old);
        s->nodes[index] = node;
        ps_strmap_put(&s->nodes_by_id, node->id, node);   /* same key: cannot fail */
        ps_node_free(old);
    } else {
        s->nodes[s->node_count++] = node;
    }
    if (target)
        rc = ps_pool_tree_add_node(target, node, err);
out:
    end(s);
    return rc;
}

int ps_strategy_unregister_node(struct ps_strategy *s, const char *id, struct ps_error *err)
{
    struct ps_node *node = ps_strmap_remove(&s->nodes_by_id, id);
    if (!node)
        return ps_error_set(err, PS_ENOENT, "node \"%s\" is not registered", id);
    if (node->tree)
        ps_pool_tree_remove_node(node->tree, node);
    for (int i = 0; i < s->node_count; i++) {
        if (s->nodes[i] == node) {
            memmove(&s->nodes[i], &s->nodes[i + 1], (size_t)(s->node_count - i - 1) * sizeof *s->nodes);
            s->node_count--;
            break;
        }
    }
    ps_node_free(node);
    return 0;
}

struct ps_node *ps_strategy_find_node(const struct ps_strategy *s, const char *id)
{
    return ps_strmap_get(&s->nodes_by_id, id);
}

int ps_strategy_node_count(const struct ps_strategy *s)
{
    return s->node_count;
}

struct ps_node *ps_strategy_node_at(const struct ps_strategy *s, int index)
{
    return index >= 0 && index < s->node_count ? s->nodes[index] : NULL;
}

/* ---- operations -------------------------------------------------------------------------- */

struct ps_operation *ps_strategy_find_operation(const struct ps_strategy *s, const char *id)
{
    return ps_strmap_get(&s->ops_by_id, id);
}

int ps_strategy_operation_count(const struct ps_strategy *s)
{
    return s->op_count;
}

struct ps_operation *ps_strategy_operation_at(const struct ps_strategy *s, int index)
{
    return index >= 0 && index < s->op_count ? s->ops[index] : NULL;
}

struct ps_tree_op *ps_operation_membership(const struct ps_operation *op, const char *tree)
{
    for (int i = 0; i < op->tree_count; i++)
        if (op->memberships[i] && strcmp(op->tree_names[i], tree) == 0)
            return op->memberships[i];
    return NULL;
}

int ps_strategy_activated_count(const struct ps_strategy *s)
{
    return s->activated_count;
}

struct ps_operation *ps_strategy_activated(const struct ps_strategy *s, int index)
{
    return index >= 0 && index < s->activated_count ? s->activated[index] : NULL;
}

/* The trees an operation with this spec runs in. */
static int operation_trees(const struct ps_strategy *s, const struct ps_operation_spec *spec,
                           bool skip_missing, struct ps_pool_tree **trees, int *count,
                           struct ps_error *err)
{
    *count = 0;
    if (spec->pool_trees.count == 0) {
        if (!s->default_tree)
            return ps_error_set(err, PS_EINVAL,
                                "pool_trees: the spec names no pool trees and there is no default tree");
        trees[(*count)++] = ps_strategy_find_tree(s, s->default_tree);
        return 0;
    }
    for (int i = 0; i < spec->pool_trees.count; i++) {
        const char *name = spec->pool_trees.items[i];
        struct ps_pool_tree *tree = ps_strategy_find_tree(s, name);
        if (!tree && skip_missing)   /* a restored operation whose tree was removed (erased) */
            continue;
        if (!tree)
            return ps_error_set(err, PS_ENOENT, "pool_trees: pool tree \"%s\" does not exist", name);
        for (int k = 0; k < *count; k++)
            if (trees[k] == tree)
                return ps_error_set(err, PS_EINVAL, "pool_trees: pool tree \"%s\" is listed twice", name);
        trees[(*count)++] = tree;
    }
    if (*count == 0)
        return ps_error_set(err, PS_ENOENT, "pool_trees: none of the operation's pool trees exists");
    return 0;
}

static int reserve_operation(struct ps_strategy *s)
{
    if (ps_tree_reserve((void ***)&s->ops, &s->op_capacity, s->op_count) != 0 ||
        ps_tree_reserve((void ***)&s->activated, &s->activated_capacity, s->op_count) != 0)
        return PS_ENOMEM;
    return 0;
}

static struct ps_operation *operation_new(const char *id, const char *user, int64_t start_time_ms,
                                          const struct ps_operation_spec *spec,
                                          struct ps_pool_tree *const *trees, int count)
{
    struct ps_operation *op = calloc(1, sizeof *op);
    if (!op)
        return NULL;
    op->finish_time_ms = -1;
    op->start_time_ms = start_time_ms;
    op->state = PS_OP_STARTING;
    op->id = strdup(id);
    op->user = strdup(user);
    op->memberships = calloc((size_t)count, sizeof *op->memberships);
    op->tree_names = calloc((size_t)count, sizeof *op->tree_names);
    bool ok = op->id && op->user && op->memberships && op->tree_names &&
              ps_operation_spec_copy(&op->spec, spec) == 0;   /* a failed copy owns nothing */
    if (!ok) {
        operation_free(op);
        return NULL;
    }
    op->tree_count = count;
    for (int i = 0; i < count; i++) {
        op->tree_names[i] = strdup(ps_pool_tree_name(trees[i]));
        if (!op->tree_names[i]) {
            operation_free(op);
            return NULL;
        }
    }
    return op;
}

static struct ps_pool_tree *find_tree(void *ctx, const char *name)
{
    return ps_strategy_find_tree(ctx, name);
}

/* restore: NULL for a start; else per tree name the pool and state before a restart. */
static int start_operation(struct ps_strategy *s, const char *id, const char *user,
                           int64_t start_time_ms, const struct ps_operation_spec *spec,
                           ps_strategy_restore_fn restore, void *restore_ctx,
                           struct ps_operation **out, struct ps_error *err)
{
    begin(s);
    if (out)
        *out = NULL;
    int rc = 0;
    struct ps_operation *op = NULL;
    struct ps_operation_spec own;   /* the spec with the offload trees (offloading.h) */
    bool has_own = false;
    int room = s->tree_count > spec->pool_trees.count ? s->tree_count : spec->pool_trees.count;
    struct ps_pool_tree **trees = calloc((size_t)(room > 0 ? room : 1), sizeof *trees);
    int count = 0;
    if (!trees) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto out;
    }
    if (!id || id[0] == '\0') {
        rc = ps_error_set(err, PS_EINVAL, "operation id: must not be empty");
        goto out;
    }
    if (!user || user[0] == '\0') {
        rc = ps_error_set(err, PS_EINVAL, "operation \"%s\": user: must not be empty", id);
        goto out;
    }
    if (ps_strmap_get(&s->ops_by_id, id)) {
        rc = ps_error_set(err, PS_EEXIST, "operation \"%s\" already exists", id);
        goto out;
    }
    rc = operation_trees(s, spec, restore != NULL, trees, &count, err);
    if (rc == 0 && ps_operation_spec_copy(&own, spec) != 0)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    else if (rc == 0)
        has_own = true;
    if (rc == 0)
        rc = ps_offloading_add_trees(&own, user, trees, &count, find_tree, s, err);
    if (rc == 0)
        spec = &own;
    for (int i = 0; rc == 0 && i < count; i++) {
        struct ps_tree_op_settings settings;
        ps_operation_spec_settings(spec, ps_pool_tree_name(trees[i]), &settings);
        if (!restore)   /* a restored operation was admitted before the restart */
            rc = ps_pool_tree_check_operation(trees[i], id, user, &settings, err);
    }
    if (rc != 0)
        goto out;
    op = operation_new(id, user, start_time_ms, spec, trees, count);
    if (!op || reserve_operation(s) != 0 || ps_strmap_put(&s->ops_by_id, op->id, op) != 0) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory starting operation \"%s\"", id);
        goto out;
    }
    for (int i = 0; i < count; i++) {
        struct ps_tree_op_settings settings;
        ps_operation_spec_settings(&op->spec, op->tree_names[i], &settings);
        struct ps_tree_op_restore r = {NULL, false};
        if (restore)
            restore(restore_ctx, op->tree_names[i], &r);
        rc = restore ? ps_pool_tree_restore_operation(trees[i], id, user, start_time_ms,
                                                      &settings, &r, &op->memberships[i], err)
                     : ps_pool_tree_add_operation(trees[i], id, user, start_time_ms, &settings,
                                                  &op->memberships[i], err);
        if (rc != 0) {
            /* Only out of memory gets here (everything was checked; a restore may also fail to
             * resolve its pool): undo the other trees. */
            for (int k = 0; k < i; k++)
                ps_pool_tree_remove_operation(trees[k], id, NULL);
            ps_strmap_remove(&s->ops_by_id, op->id);
            goto out;
        }
        op->memberships[i]->user_data = op;
        op->memberships[i]->suspended = op->suspended;
    }
    op->index = s->op_count;
    s->ops[s->op_count++] = op;
    refresh_state(s, op);
    if (out)
        *out = op;
    op = NULL;
out:
    operation_free(op);
    free(trees);
    if (has_own)
        ps_operation_spec_release(&own);
    end(s);
    return rc;
}

int ps_strategy_start_operation_spec(struct ps_strategy *s, const char *id, const char *user,
                                     int64_t start_time_ms, const struct ps_operation_spec *spec,
                                     struct ps_operation **out, struct ps_error *err)
{
    return start_operation(s, id, user, start_time_ms, spec, NULL, NULL, out, err);
}

static int start_from_map(struct ps_strategy *s, const char *id, const char *user,
                          int64_t start_time_ms, const struct ps_value *spec_map,
                          ps_strategy_restore_fn restore, void *restore_ctx,
                          struct ps_operation **out, struct ps_error *err)
{
    struct ps_operation_spec spec;
    if (ps_operation_spec_init(&spec) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_operation_spec_apply(&spec, spec_map, err);
    if (rc != 0)
        ps_error_prefix(err, "operation \"%s\": spec", id ? id : "");
    else
        rc = start_operation(s, id, user, start_time_ms, &spec, restore, restore_ctx, out, err);
    ps_operation_spec_release(&spec);
    return rc;
}

int ps_strategy_start_operation(struct ps_strategy *s, const char *id, const char *user,
                                int64_t start_time_ms, const struct ps_value *spec_map,
                                struct ps_operation **out, struct ps_error *err)
{
    return start_from_map(s, id, user, start_time_ms, spec_map, NULL, NULL, out, err);
}

int ps_strategy_restore_operation(struct ps_strategy *s, const char *id, const char *user,
                                  int64_t start_time_ms, const struct ps_value *spec_map,
                                  ps_strategy_restore_fn restore, void *restore_ctx,
                                  struct ps_operation **out, struct ps_error *err)
{
    return start_from_map(s, id, user, start_time_ms, spec_map, restore, restore_ctx, out, err);
}

int ps_strategy_finish_operation(struct ps_strategy *s, const char *id,
                                 enum ps_operation_state final_state, int64_t now_ms,
                                 struct ps_error *err)
{
    begin(s);
    int rc = 0;
    struct ps_operation *op = ps_strmap_get(&s->ops_by_id, id);
    if (!op) {
        rc = ps_error_set(err, PS_ENOENT, "operation \"%s\" does not exist", id);
    } else if (final_state != PS_OP_COMPLETED && final_state != PS_OP_FAILED &&
               final_state != PS_OP_ABORTED) {
        rc = ps_error_set(err, PS_EINVAL, "operation \"%s\": %s is not a final state", id,
                          ps_operation_state_name(final_state));
    } else if (!active(op)) {
        rc = ps_error_set(err, PS_ESTATE, "operation \"%s\" has already finished (%s)", id,
                          ps_operation_state_name(op->state));
    } else {
        op->state = final_state;
        op->finish_time_ms = now_ms;
        for (int i = 0; i < op->tree_count; i++) {
            struct ps_tree_op *m = op->memberships[i];
            op->memberships[i] = NULL;
            if (m)
                ps_pool_tree_remove_operation(m->tree, id, NULL);
        }
    }
    end(s);
    return rc;
}

int ps_strategy_forget_operation(struct ps_strategy *s, const char *id, struct ps_error *err)
{
    struct ps_operation *op = ps_strmap_get(&s->ops_by_id, id);
    if (!op)
        return ps_error_set(err, PS_ENOENT, "operation \"%s\" does not exist", id);
    if (active(op))
        return ps_error_set(err, PS_ESTATE, "operation \"%s\" is %s and cannot be forgotten", id,
                            ps_operation_state_name(op->state));
    ps_strmap_remove(&s->ops_by_id, id);
    int i = op->index;
    s->ops[i] = s->ops[s->op_count - 1];
    s->ops[i]->index = i;
    s->op_count--;
    operation_free(op);
    return 0;
}

int ps_strategy_suspend_operation(struct ps_strategy *s, const char *id, bool suspended,
                                  struct ps_error *err)
{
    struct ps_operation *op = ps_strmap_get(&s->ops_by_id, id);
    if (!op)
        return ps_error_set(err, PS_ENOENT, "operation \"%s\" does not exist", id);
    if (!active(op))
        return ps_error_set(err, PS_ESTATE, "operation \"%s\" has already finished", id);
    op->suspended = suspended;
    for (int i = 0; i < op->tree_count; i++)
        if (op->memberships[i])
            op->memberships[i]->suspended = suspended;
    return 0;
}

static bool same_pool(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

/* Whether params name a pool for tree (`pool`, or scheduling_options_per_pool_tree/<tree>/pool).
 * Such a pool is resolved against the pool the operation is in, not against its spec's: after a
 * restart the spec is the submitted one while the operation is restored into the pool an
 * earlier update moved it to (both calls below are no-ops when the pool resolves to the same). */
static bool params_name_pool(const struct ps_value *params, const char *tree)
{
    if (ps_value_find(params, "pool"))
        return true;
    const struct ps_value *per_tree = ps_value_find(params, "scheduling_options_per_pool_tree");
    const struct ps_value *options = per_tree ? ps_value_find(per_tree, tree) : NULL;
    return options && ps_value_find(options, "pool");
}

int ps_strategy_update_operation(struct ps_strategy *s, const char *id, const struct ps_value *params,
                                 struct ps_error *err)
{
    begin(s);
    int rc = 0;
    struct ps_operation *op = ps_strmap_get(&s->ops_by_id, id);
    struct ps_operation_spec spec;
    bool have_spec = false;
    if (!op) {
        rc = ps_error_set(err, PS_ENOENT, "operation \"%s\" does not exist", id);
        goto out;
    }
    if (!active(op)) {
        rc = ps_error_set(err, PS_ESTATE, "operation \"%s\" has already finished", id);
        goto out;
    }
    /* Only the spec table's run-time keys (pool_trees, is_gang, ... cannot change). */
    if ((rc = ps_operation_spec_check_runtime(params, err)) != 0) {
        ps_error_prefix(err, "operation \"%s\"", id);
        goto out;
    }
    if (ps_operation_spec_copy(&spec, &op->spec) != 0) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto out;
    }
    have_spec = true;
    rc = ps_operation_spec_apply(&spec, params, err);
    if (rc != 0) {
        ps_error_prefix(err, "operation \"%s\"", id);
        goto out;
    }
    /* Check every tree before changing any. */
    for (int i = 0; rc == 0 && i < op->tree_count; i++) {
        struct ps_tree_op_settings before, after;
        ps_operation_spec_settings(&op->spec, op->tree_names[i], &before);
        ps_operation_spec_settings(&spec, op->tree_names[i], &after);
        if (op->memberships[i] && (!same_pool(before.pool, after.pool) ||
                                   (after.pool && params_name_pool(params, op->tree_names[i]))))
            rc = ps_pool_tree_check_operation_pool(op->memberships[i]->tree, id, after.pool, err);
    }
    if (rc != 0)
        goto out;
    for (int i = 0; i < op->tree_count; i++) {
        struct ps_tree_op_settings before, after;
        if (!op->memberships[i])   /* erased with its tree */
            continue;
        ps_operation_spec_settings(&op->spec, op->tree_names[i], &before);
        ps_operation_spec_settings(&spec, op->tree_names[i], &after);
        struct ps_pool_tree *tree = op->memberships[i]->tree;
        if (!same_pool(before.pool, after.pool) ||
            (after.pool && params_name_pool(params, op->tree_names[i])))
            ps_pool_tree_change_operation_pool(tree, id, after.pool, NULL);
        ps_pool_tree_update_operation(tree, id, &after, NULL);
    }
    ps_operation_spec_release(&op->spec);
    op->spec = spec;
    have_spec = false;
    refresh_state(s, op);
out:
    if (have_spec)
        ps_operation_spec_release(&spec);
    end(s);
    return rc;
}

/* ---- user default parent pools (user_pools.h) ------------------------------------------- */

int ps_strategy_set_user_default_pools(struct ps_strategy *s, const struct ps_value *map,
                                       bool validate, struct ps_error *err)
{
    int rc = ps_user_default_pools_check(map, err);
    for (int i = 0; rc == 0 && validate && i < s->tree_count; i++)
        if (s->trees[i]->config.use_user_default_parent_pool_map)
            rc = ps_pool_tree_check_user_default_pools(s->trees[i], map, err);
    if (rc != 0)
        return rc;
    struct ps_value copy = ps_value_map();
    if (map && map->type == PS_VALUE_MAP && ps_value_copy(&copy, map) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ps_value_release(&s->user_default_pools);
    s->user_default_pools = copy;
    begin(s);
    for (int i = 0; i < s->tree_count; i++)
        if (ps_pool_tree_actualize_ephemeral_parents(s->trees[i]) > 0)
            ps_pool_tree_run_pending(s->trees[i]);   /* new ancestors may leave room */
    end(s);
    return 0;
}

int ps_strategy_user_default_pools(const struct ps_strategy *s, struct ps_value *out)
{
    *out = ps_value_map();
    return ps_value_copy(out, &s->user_default_pools) == 0 ? 0 : PS_ENOMEM;
}

const char *ps_strategy_user_default_pool(const struct ps_strategy *s, const char *user)
{
    const struct ps_value *v = ps_value_find(&s->user_default_pools, user);
    return v && v->type == PS_VALUE_STRING ? v->string : NULL;
}
