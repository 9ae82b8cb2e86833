#include "core/exec_nodes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/formula.h"
#include "core/nodes.h"
#include "core/operation.h"

/* Whether node's tags satisfy filter, evaluated once per tag set when verdict (indexed by
 * ps_node.tagset) is given. */
static bool satisfies(const struct ps_formula *filter, const struct ps_node *node, uint8_t *verdict)
{
    if (!verdict || node->tagset < 0)
        return ps_formula_eval(filter, (const char *const *)node->tags, node->tag_count);
    if (!verdict[node->tagset])
        verdict[node->tagset] =
            ps_formula_eval(filter, (const char *const *)node->tags, node->tag_count) ? 1 : 2;
    return verdict[node->tagset] == 1;
}

/* max = the componentwise maximum of max and *limits. */
static void raise_max(struct ps_resources *max, const struct ps_resources *limits)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (limits->v[r] > max->v[r])
            max->v[r] = limits->v[r];
}

/* The nodes of member's tree that usable counts and that satisfy filter: how many, stopping
 * at the first unless max is given, which then is raised to their limits. */
static int usable_nodes(const struct ps_strategy *s, const struct ps_tree_op *member,
                        const struct ps_formula *filter, ps_exec_node_usable_fn usable,
                        void *ctx, struct ps_resources *max)
{
    /* the filter's verdict per tag set: 0 not evaluated yet, 1 match, 2 mismatch */
    uint8_t *verdict = filter ? calloc((size_t)ps_strategy_tagset_count(s) + 1, 1) : NULL;
    int found = 0;
    int count = ps_strategy_node_count(s);
    for (int i = 0; i < count && (max || !found); i++) {
        const struct ps_node *n = ps_strategy_node_at(s, i);
        if (n->tree != member->tree || !usable(n, ctx) ||
            (filter && !satisfies(filter, n, verdict)))
            continue;
        found++;
        if (max)
            raise_max(max, &n->resource_limits);
    }
    free(verdict);
    return found;
}

/* Every node of tree that satisfies filter counts: the tree's cache per filter (nodes.h)
 * answers without a scan until a node changes. */
static int all_nodes(struct ps_pool_tree *tree, const struct ps_formula *filter,
                     struct ps_resources *max)
{
    struct ps_resources tree_max;
    int found = ps_pool_tree_filter_max_limits(tree, filter, &tree_max);
    if (max && found > 0)
        raise_max(max, &tree_max);
    return found;
}

/* The usable nodes of member's tree that satisfy its effective filter: how many (-1: cannot
 * tell), stopping at the first unless max is given, which then receives the componentwise
 * maximum of their resource limits. text (may be NULL) receives the filter's text ("" for
 * none) when there is none. */
static int tree_nodes(const struct ps_strategy *s, const struct ps_tree_op *member,
                      ps_exec_node_usable_fn usable, void *ctx, struct ps_resources *max,
                      char *text, size_t size)
{
    const struct ps_formula *filter = NULL;
    struct ps_formula *owned = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_tree_op_effective_filter(member, &filter, &owned, &err) != 0)
        return -1;   /* cannot tell: never fail on it */
    int found = usable ? usable_nodes(s, member, filter, usable, ctx, max)
                       : all_nodes(member->tree, filter, max);
    if (!found && text)
        snprintf(text, size, "%s", filter ? ps_formula_text(filter) : "");
    ps_formula_free(owned);
    return found;
}

int ps_exec_nodes_max_resources(const struct ps_strategy *s, const struct ps_operation *op,
                                ps_exec_node_usable_fn usable, void *ctx,
                                struct ps_resources *max)
{
    *max = ps_resources_zero();
    int total = 0;
    for (int t = 0; t < op->tree_count; t++) {
        const struct ps_tree_op *member = op->memberships ? op->memberships[t] : NULL;
        int n = member ? tree_nodes(s, member, usable, ctx, max, NULL, 0) : -1;
        if (n < 0)
            return -1;
        total += n;
    }
    return total;
}

bool ps_exec_nodes_demand_fits(const struct ps_strategy *s, const struct ps_operation *op,
                               ps_exec_node_usable_fn usable, void *ctx, const char *task_name,
                               const struct ps_resources *need, char *msg, size_t size)
{
    struct ps_resources max;
    if (ps_exec_nodes_max_resources(s, op, usable, ctx, &max) <= 0)
        return true;
    bool fits = true;
    for (int r = 0; r < PS_RES_COUNT; r++)
        fits = fits && need->v[r] <= max.v[r];
    if (fits)
        return true;
    char needed[256], available[256];
    unsigned all = (1u << PS_RES_COUNT) - 1;
    ps_resources_text(needed, sizeof needed, need, all);
    ps_resources_text(available, sizeof available, &max, all);
    snprintf(msg, size, "No online node can satisfy the resource demand "
             "(task_name \"%s\"; needed_resources {%s}; max_available_resources {%s})",
             task_name, needed, available);
    return false;
}

bool ps_exec_nodes_find(const struct ps_strategy *s, const struct ps_operation *op,
                        ps_exec_node_usable_fn usable, void *ctx, char *filter, size_t fsize,
                        char *trees, size_t tsize)
{
    size_t used = 0;
    filter[0] = trees[0] = '\0';
    for (int t = 0; t < op->tree_count; t++) {
        const struct ps_tree_op *member = op->memberships ? op->memberships[t] : NULL;
        if (!member)
            return true;   /* not in a tree as we know it: leave it */
        if (tree_nodes(s, member, usable, ctx, NULL, filter, fsize) != 0)
            return true;
        int k = snprintf(trees + used, tsize - used, "%s\"%s\"", used ? ", " : "",
                         op->tree_names[t]);
        if (k > 0 && (size_t)k < tsize - used)
            used += (size_t)k;
    }
    return false;
}

bool ps_exec_nodes_available(const struct ps_strategy *s, const struct ps_operation *op,
                             ps_exec_node_usable_fn usable, void *ctx, int64_t safe_time_ms,
                             char *msg, size_t size)
{
    char filter[512], trees[256];
    if (ps_exec_nodes_find(s, op, usable, ctx, filter, sizeof filter, trees, sizeof trees))
        return true;
    snprintf(msg, size,
             "No online nodes match operation scheduling tag filter \"%s\" in pool trees [%s] "
             "(operation_id %s; checked after safe_scheduler_online_time %" PRId64 " ms)",
             filter, trees, op->id, safe_time_ms);
    return false;
}
