#include "core/exec_nodes.h"

#include <inttypes.h>
#include <stdio.h>

#include "core/formula.h"
#include "core/operation.h"

/* Does a usable node of member's tree satisfy its effective filter? *text receives that
 * filter's text ("" for none) when none does. */
static bool tree_has_node(const struct ps_strategy *s, const struct ps_tree_op *member,
                          const struct ps_pool_tree *tree, ps_exec_node_usable_fn usable,
                          void *ctx, char *text, size_t size)
{
    const struct ps_formula *filter = NULL;
    struct ps_formula *owned = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_tree_op_effective_filter(member, &filter, &owned, &err) != 0)
        return true;   /* cannot tell: never fail on it */
    bool found = false;
    int count = ps_strategy_node_count(s);
    for (int i = 0; i < count && !found; i++) {
        const struct ps_node *n = ps_strategy_node_at(s, i);
        if (n->tree != tree || (usable && !usable(n, ctx)))
            continue;
        found = !filter || ps_formula_eval(filter, (const char *const *)n->tags, n->tag_count);
    }
    if (!found)
        snprintf(text, size, "%s", filter ? ps_formula_text(filter) : "");
    ps_formula_free(owned);
    return found;
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
        if (tree_has_node(s, member, member->tree, usable, ctx, filter, fsize))
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
