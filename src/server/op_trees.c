/* op_trees.c — schedule_in_single_tree in the service: the tree an operation runs in, chosen at
 * its start by core/single_tree.h; the others are its erased trees (upstream's
 * runtime_parameters/erased_trees), stored with the operation so that a restart keeps the
 * choice. The scheduler config's enable_schedule_in_single_tree (default true, upstream's)
 * turns the choice off: such operations then run in every tree of pool_trees. */
#include <stdlib.h>
#include <string.h>

#include "core/sched_inputs.h"
#include "core/single_tree.h"
#include "io/json_value.h"
#include "server/op_tentative.h"
#include "server/service_state.h"
#include "server/svc_ops.h"

/* The operation's demand for the choice: every job of every task at its shape, saturating at
 * PS_RES_INFINITE (a million jobs of 16 TiB each, which start_op accepts, leave int64). */
static struct ps_resources demand_of(const struct ps_svc_op *op)
{
    struct ps_resources d = ps_resources_zero();
    for (int i = 0; i < op->task_count; i++)
        d = ps_demand_add_pending(d, ps_svc_task_shape(&op->tasks[i]), op->tasks[i].job_count);
    return d;
}

/* erase_trees_with_pool_limit_violations (upstream's): the trees whose pools refuse the
 * operation for a count limit (max_operation_count, the ephemeral pool limit) are erased, so it
 * starts in the others; when every tree refuses, the start is refused with upstream's "All trees
 * have been erased for operation" and the first tree's reason. */
static int erase_violating(struct ps_service *svc, struct ps_svc_op *op,
                           const struct ps_operation_spec *parsed, json_t *erased,
                           struct ps_error *err)
{
    struct ps_error first;
    ps_error_init(&first);
    int kept = 0;
    for (int i = 0; i < parsed->pool_trees.count; i++) {
        const char *name = parsed->pool_trees.items[i];
        size_t k;
        json_t *gone;
        bool already = false;
        json_array_foreach(erased, k, gone) already |= strcmp(json_string_value(gone), name) == 0;
        struct ps_pool_tree *tree = ps_strategy_find_tree(svc->strategy, name);
        if (already || !tree)
            continue;   /* a missing tree: the start names it */
        struct ps_tree_op_settings settings;
        ps_operation_spec_settings(parsed, name, &settings);
        struct ps_error e;
        ps_error_init(&e);
        if (ps_pool_tree_check_operation(tree, op->id, op->user, &settings, &e) == PS_ELIMIT) {
            if (!first.code)
                first = e;
            json_array_append_new(erased, json_string(name));
        } else {
            kept++;
        }
    }
    if (kept == 0 && first.code)
        return ps_error_set(err, PS_ELIMIT, "All trees have been erased for operation: %s",
                            first.msg);
    return 0;
}

/* The operation's tentative trees (op_tentative.c). */
static int tentative(struct ps_service *svc, struct ps_svc_op *op, const json_t *spec,
                     const json_t *restore, struct ps_error *err)
{
    struct ps_operation_spec parsed;
    int rc = ps_operation_spec_from_json(spec, &parsed, NULL, err);
    if (rc != 0)
        return rc;
    rc = ps_svc_op_tentative_setup(svc, op, &parsed, restore, op->erased_trees, err);
    ps_operation_spec_release(&parsed);
    return rc;
}

int ps_svc_op_trees(struct ps_service *svc, struct ps_svc_op *op, const json_t *spec,
                    const json_t *restore, json_t **strategy_spec, struct ps_error *err)
{
    *strategy_spec = NULL;
    json_t *erased = NULL;
    if (restore) {
        erased = json_incref(json_object_get(restore, "erased_trees"));
    } else if (json_is_true(json_object_get(spec, "schedule_in_single_tree")) &&
               svc->cfg.enable_schedule_in_single_tree) {
        struct ps_operation_spec parsed;
        int rc = ps_operation_spec_from_json(spec, &parsed, NULL, err);
        if (rc != 0)
            return rc;
        int best = -1;
        if (parsed.pool_trees.count > 0)   /* else the default tree, the only one */
            rc = ps_strategy_choose_single_tree(svc->strategy, &parsed, op->user, demand_of(op),
                                                &best, err);
        if (rc == 0 && best >= 0) {
            erased = json_array();
            for (int i = 0; i < parsed.pool_trees.count; i++)
                if (i != best)
                    json_array_append_new(erased, json_string(parsed.pool_trees.items[i]));
        }
        ps_operation_spec_release(&parsed);
        if (rc != 0)
            return rc;
    }
    if (!restore && json_is_true(json_object_get(spec, "erase_trees_with_pool_limit_violations"))) {
        struct ps_operation_spec parsed;
        int rc = ps_operation_spec_from_json(spec, &parsed, NULL, err);
        if (rc != 0) {
            json_decref(erased);
            return rc;
        }
        if (!erased)
            erased = json_array();
        rc = erase_violating(svc, op, &parsed, erased, err);
        ps_operation_spec_release(&parsed);
        if (rc != 0) {
            json_decref(erased);
            return rc;
        }
    }
    /* necessary_resources_for_operation of every tree it will run in */
    const json_t *listed = json_object_get(spec, "pool_trees");
    const char *dflt = ps_strategy_default_tree(svc->strategy);
    size_t n = json_is_array(listed) && json_array_size(listed) > 0 ? json_array_size(listed) : 1;
    for (size_t i = 0; !restore && i < n; i++) {
        const char *name = json_is_array(listed) && json_array_size(listed) > 0
                               ? json_string_value(json_array_get(listed, i)) : dflt;
        size_t k;
        json_t *gone;
        bool skip = !name;
        json_array_foreach(erased, k, gone) skip |= name && strcmp(json_string_value(gone), name) == 0;
        struct ps_pool_tree *tree = skip ? NULL : ps_strategy_find_tree(svc->strategy, name);
        int rc = tree ? ps_pool_tree_check_necessary_resources(tree, demand_of(op), err) : 0;
        if (rc != 0) {
            json_decref(erased);
            return rc;
        }
    }
    op->erased_trees = erased ? erased : json_array();
    int rc = tentative(svc, op, spec, restore, err);
    if (rc != 0)
        return rc;
    if (json_array_size(op->erased_trees) == 0 && !op->tentative) {
        *strategy_spec = json_incref((json_t *)spec);
        return 0;
    }
    /* the strategy sees pool_trees without the erased ones, with the tentative ones */
    json_t *copy = json_deep_copy(spec), *kept = json_array();
    if (!copy || !kept) {
        json_decref(copy);
        json_decref(kept);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    size_t i, k;
    json_t *name, *gone;
    json_array_foreach(json_object_get(spec, "pool_trees"), i, name) {
        bool erased_here = false;
        json_array_foreach(op->erased_trees, k, gone) erased_here |= json_equal(name, gone);
        if (!erased_here)
            json_array_append(kept, name);
    }
    for (int t = 0; op->tentative && t < op->tentative->count; t++)
        if (!op->tentative->trees[t].banned)
            json_array_append_new(kept, json_string(op->tentative->trees[t].name));
    json_object_set_new(copy, "pool_trees", kept);
    *strategy_spec = copy;
    return 0;
}
