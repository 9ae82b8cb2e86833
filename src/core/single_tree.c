/* single_tree.c — the tree an operation with schedule_in_single_tree runs in (single_tree.h). */
#include "core/single_tree.h"

#include <float.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/operation.h"
#include "core/pool_tree.h"
#include "core/strategy.h"

/* The operation would wait in this pool: it or an ancestor is at max_running_operation_count. */
static bool would_wait(const struct ps_pool *pool)
{
    for (const struct ps_pool *a = pool; a; a = a->parent)
        if (a->running_operation_count >= ps_pool_max_running_operations(a))
            return true;
    return false;
}

int ps_strategy_choose_single_tree(const struct ps_strategy *s, const struct ps_operation_spec *spec,
                                   const char *user, struct ps_resources demand, int *best,
                                   struct ps_error *err)
{
    *best = -1;
    int first_empty = -1, first_waiting = -1;
    double best_score = -DBL_MAX;
    for (int i = 0; i < spec->pool_trees.count; i++) {
        const char *name = spec->pool_trees.items[i];
        struct ps_pool_tree *tree = ps_strategy_find_tree(s, name);
        if (!tree)
            return ps_error_set(err, PS_ENOENT, "pool_trees: pool tree \"%s\" does not exist", name);
        struct ps_tree_op_settings settings;
        ps_operation_spec_settings(spec, name, &settings);
        struct ps_pool *pool = ps_pool_tree_find_pool(tree, settings.pool ? settings.pool : user);
        struct ps_resources total = ps_pool_tree_total_resources(tree);
        bool has_nodes = ps_pool_tree_node_count(tree) > 0 && !ps_resources_is_zero(total);
        if (!has_nodes || !pool || !pool->dynamic.valid) {
            if (first_empty < 0)
                first_empty = i;
            continue;
        }
        if (would_wait(pool)) {   /* upstream ignores trees where it is not running */
            if (first_waiting < 0)
                first_waiting = i;
            continue;
        }
        const struct ps_share *guarantee = &pool->fs_pool.strong_guarantee_share;
        const struct ps_share *pool_demand = &pool->dynamic.fs.demand_share;
        double score = DBL_MAX;
        bool guaranteed = false;
        for (int r = 0; r < PS_RES_COUNT; r++) {
            if (total.v[r] <= 0 || total.v[r] >= PS_RES_INFINITE)
                continue;
            double model = pool_demand->v[r] + (double)demand.v[r] / (double)total.v[r];
            double reserve = guarantee->v[r] - model;
            guaranteed = guaranteed || guarantee->v[r] > 0;
            if (reserve < score)
                score = reserve;
        }
        if (spec->consider_guarantees_for_single_tree && !guaranteed)
            continue;
        if (score > best_score) {
            best_score = score;
            *best = i;
        }
    }
    if (*best < 0 && !spec->consider_guarantees_for_single_tree)
        *best = first_empty >= 0 ? first_empty : first_waiting;
    if (*best < 0)
        return ps_error_set(err, PS_EINVAL, "Found no best tree for operation: none of pool_trees "
                            "has %s", spec->consider_guarantees_for_single_tree
                                          ? "a strong guarantee for its pool"
                                          : "nodes");
    return 0;
}

int ps_pool_tree_check_necessary_resources(const struct ps_pool_tree *tree,
                                           struct ps_resources demand, struct ps_error *err)
{
    const struct ps_string_list *need = &ps_pool_tree_config(tree)->necessary_resources_for_operation;
    char missing[128] = "";
    for (int i = 0; i < need->count; i++) {
        int r = ps_resource_from_name(need->items[i]);
        if (r >= 0 && demand.v[r] <= 0)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", need->items[i]);
    }
    if (!missing[0])
        return 0;
    return ps_error_set(err, PS_EINVAL, "Operation has zero demand for resources which are "
                        "necessary in tree \"%s\" (necessary_resources_for_operation): %s",
                        ps_pool_tree_name(tree), missing);
}
