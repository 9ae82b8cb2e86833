/* tree_nodes.c — a tree's nodes, total resources and filter limits. */
#include "core/nodes.h"

#include <stdlib.h>
#include <string.h>

#include "core/pool_tree_impl.h"

struct ps_node *ps_node_new(const char *id, const char *const *tags, int tag_count,
                            const struct ps_resources *resource_limits, struct ps_error *err)
{
    if (!id || id[0] == '\0') {
        ps_error_set(err, PS_EINVAL, "node id: must not be empty");
        return NULL;
    }
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if (resource_limits->v[r] < 0) {
            ps_error_set(err, PS_EINVAL, "node \"%s\": resource_limits/%s: must be >= 0", id,
                         ps_resource_name(r));
            return NULL;
        }
    }
    struct ps_node *node = calloc(1, sizeof *node);
    if (!node)
        goto oom;
    node->id = strdup(id);
    node->tags = tag_count > 0 ? calloc((size_t)tag_count, sizeof *node->tags) : NULL;
    if (!node->id || (tag_count > 0 && !node->tags))
        goto oom;
    for (int i = 0; i < tag_count; i++) {
        node->tags[i] = strdup(tags[i]);
        node->tag_count = i + 1;
        if (!node->tags[i])
            goto oom;
    }
    node->resource_limits = *resource_limits;
    node->tagset = -1;
    return node;
oom:
    ps_node_free(node);
    ps_error_set(err, PS_ENOMEM, "out of memory registering node \"%s\"", id);
    return NULL;
}

void ps_node_free(struct ps_node *node)
{
    if (!node)
        return;
    for (int i = 0; i < node->tag_count; i++)
        free(node->tags[i]);
    free(node->tags);
    free(node->id);
    free(node);
}

bool ps_pool_tree_node_matches(const struct ps_pool_tree *tree, const struct ps_node *node)
{
    return ps_formula_eval(tree->nodes_filter, (const char *const *)node->tags, node->tag_count);
}

void ps_tree_invalidate_filter_cache(struct ps_pool_tree *tree)
{
    for (int i = 0; i < tree->cache_count; i++)
        free(tree->cache[i].text);
    tree->cache_count = 0;
}

/* a + b per resource, saturating at PS_RES_INFINITE: a node's omitted (unlimited) resource makes
 * the sum unlimited instead of overflowing after a few nodes. */
static struct ps_resources add_limits(struct ps_resources a, struct ps_resources b)
{
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (a.v[i] >= PS_RES_INFINITE || b.v[i] >= PS_RES_INFINITE || a.v[i] > PS_RES_INFINITE - b.v[i])
            a.v[i] = PS_RES_INFINITE;
        else
            a.v[i] += b.v[i];
    }
    return a;
}

static struct ps_resources max_limits(struct ps_resources a, const struct ps_resources *b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        if (b->v[i] > a.v[i])
            a.v[i] = b->v[i];
    return a;
}

/* The sum, componentwise maximum and number of the limits of the tree's nodes satisfying
 * filter (every node for NULL). */
static void scan(const struct ps_pool_tree *tree, const struct ps_formula *filter,
                 struct ps_resources *sum, struct ps_resources *max, int *count)
{
    *sum = *max = ps_resources_zero();
    *count = 0;
    for (int i = 0; i < tree->node_count; i++) {
        const struct ps_node *n = tree->nodes[i];
        if (filter && !ps_formula_eval(filter, (const char *const *)n->tags, n->tag_count))
            continue;
        *sum = add_limits(*sum, n->resource_limits);
        *max = max_limits(*max, &n->resource_limits);
        (*count)++;
    }
}

void ps_pool_tree_nodes_changed(struct ps_pool_tree *tree)
{
    tree->generation++;
    int count;
    scan(tree, NULL, &tree->total, &tree->max_limits, &count);
    ps_tree_invalidate_filter_cache(tree);
}

int ps_pool_tree_add_node(struct ps_pool_tree *tree, struct ps_node *node, struct ps_error *err)
{
    if (node->tree)
        return ps_error_set(err, PS_EEXIST, "node \"%s\" already belongs to pool tree \"%s\"", node->id,
                            ps_pool_tree_name(node->tree));
    if (!ps_pool_tree_node_matches(tree, node))
        return ps_error_set(err, PS_EINVAL,
                            "node \"%s\" does not match the nodes_filter \"%s\" of pool tree \"%s\"",
                            node->id, tree->config.nodes_filter, tree->name);
    if (ps_tree_reserve((void ***)&tree->nodes, &tree->node_capacity, tree->node_count) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    tree->nodes[tree->node_count++] = node;
    node->tree = tree;
    /* The node is the last one scan() would visit: its total and maximum after this node are
     * the same fold, in O(1) rather than a rescan of every node (registering n nodes is O(n)). */
    tree->generation++;
    tree->total = add_limits(tree->total, node->resource_limits);
    tree->max_limits = max_limits(tree->max_limits, &node->resource_limits);
    ps_tree_invalidate_filter_cache(tree);
    return 0;
}

void ps_pool_tree_remove_node(struct ps_pool_tree *tree, struct ps_node *node)
{
    if (node->tree != tree)
        return;
    for (int i = 0; i < tree->node_count; i++) {
        if (tree->nodes[i] == node) {
            memmove(&tree->nodes[i], &tree->nodes[i + 1], (size_t)(tree->node_count - i - 1) * sizeof *tree->nodes);
            tree->node_count--;
            break;
        }
    }
    node->tree = NULL;
    ps_pool_tree_nodes_changed(tree);
}

int ps_pool_tree_node_count(const struct ps_pool_tree *tree)
{
    return tree->node_count;
}

const struct ps_node *ps_pool_tree_node_at(const struct ps_pool_tree *tree, int index)
{
    if (index < 0 || index >= tree->node_count)
        return NULL;
    return tree->nodes[index];
}

struct ps_resources ps_pool_tree_total_resources(const struct ps_pool_tree *tree)
{
    return tree->total;
}

/* The cache entry of a non-empty filter, computed on a miss; NULL when out of memory. */
static const struct ps_filter_cache_entry *lookup(struct ps_pool_tree *tree, const struct ps_formula *filter)
{
    const char *text = ps_formula_text(filter);
    for (int i = 0; i < tree->cache_count; i++)
        if (strcmp(tree->cache[i].text, text) == 0)
            return &tree->cache[i];
    if (tree->cache_count == tree->cache_capacity) {
        int cap = tree->cache_capacity ? 2 * tree->cache_capacity : 8;
        struct ps_filter_cache_entry *grown = realloc(tree->cache, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        tree->cache = grown;
        tree->cache_capacity = cap;
    }
    char *key = strdup(text);
    if (!key)
        return NULL;
    struct ps_filter_cache_entry *e = &tree->cache[tree->cache_count++];
    e->text = key;
    scan(tree, filter, &e->limits, &e->max, &e->node_count);
    return e;
}

struct ps_resources ps_pool_tree_filter_limits(struct ps_pool_tree *tree, const struct ps_formula *filter)
{
    if (!filter || ps_formula_is_empty(filter))
        return ps_resources_infinite();
    const struct ps_filter_cache_entry *e = lookup(tree, filter);
    if (e)
        return e->limits;
    struct ps_resources limits, max;   /* out of memory: uncached */
    int count;
    scan(tree, filter, &limits, &max, &count);
    return limits;
}

int ps_pool_tree_filter_node_count(struct ps_pool_tree *tree, const struct ps_formula *filter)
{
    if (!filter || ps_formula_is_empty(filter))
        return tree->node_count;
    const struct ps_filter_cache_entry *e = lookup(tree, filter);
    if (e)
        return e->node_count;
    struct ps_resources limits, max;   /* out of memory: uncached */
    int count;
    scan(tree, filter, &limits, &max, &count);
    return count;
}

int ps_pool_tree_filter_max_limits(struct ps_pool_tree *tree, const struct ps_formula *filter,
                                   struct ps_resources *max)
{
    if (!filter || ps_formula_is_empty(filter)) {
        *max = tree->max_limits;
        return tree->node_count;
    }
    const struct ps_filter_cache_entry *e = lookup(tree, filter);
    if (e) {
        *max = e->max;
        return e->node_count;
    }
    struct ps_resources limits;   /* out of memory: uncached */
    int count;
    scan(tree, filter, &limits, max, &count);
    return count;
}

void ps_pool_tree_set_connect_time(struct ps_pool_tree *tree, int64_t connected_at_ms)
{
    tree->has_connect_time = true;
    tree->connected_at_ms = connected_at_ms;
}

void ps_tree_nodes_release(struct ps_pool_tree *tree)
{
    for (int i = 0; i < tree->node_count; i++)
        tree->nodes[i]->tree = NULL;
    free(tree->nodes);
    tree->nodes = NULL;
    tree->node_count = 0;
    ps_tree_invalidate_filter_cache(tree);
    free(tree->cache);
    tree->cache = NULL;
}
