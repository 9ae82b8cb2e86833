/* api_cypress_dry.c — dry runs: a write run on a copy of its pool tree, answered with what a
 * fair share update would then change (api_cypress.h). */
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
    int rc = ps_cypress_require_admin(svc, who, "dry runs", err);
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
    } else if (path && ps_cypress_special_of(path)) {
        refuse = "//sys/cluster_nodes and //sys/scheduler";
    } else if (path) {
        struct target t;
        rc = ps_cypress_resolve(svc, path, &t, create ? 1 : 0, err);
        if (rc == 0 && (t.kind == T_TREE || t.kind == T_POOL) && !t.p.all_attrs &&
            (create || t.has_attr || t.kind == T_POOL || t.all_attrs))
            tree = t.tree;
        else if (rc == 0)
            refuse = "this path (pool trees themselves, @default_tree, the orchid)";
        ps_cypress_target_release(&t);
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
    ps_cypress_dry.name = ps_pool_tree_name(tree);
    ps_cypress_dry.copy = after;
    if (strcmp(command, "set") == 0)
        rc = ps_cypress_set(svc, who, path, json_object_get(body, "value"), err);
    else if (create)
        rc = ps_cypress_create(svc, who, body, err);
    else
        rc = ps_cypress_remove(svc, who, path, err);
    ps_cypress_dry.copy = NULL;
    ps_cypress_dry.name = NULL;
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
