#include "core/tree_sched.h"

#include <stdlib.h>
#include <string.h>

#include "core/tree_config.h"
#include "core/tree_starvation.h"

static bool eval_filter(const struct ps_formula *filter, const char *const *tags, int tag_count)
{
    return ps_formula_eval(filter, tags, tag_count);
}

int ps_tree_sched_init(struct ps_tree_sched *ts, struct ps_error *err)
{
    memset(ts, 0, sizeof *ts);
    ps_tree_fs_init(&ts->fs);
    ts->update = ps_fs_update_new();
    if (!ts->update)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ps_sched_options_init(&ts->options);
    ts->options.filter_eval = eval_filter;
    ps_preempt_config_init(&ts->preempt_config);
    ps_preemptible_config_init(&ts->preemptible_config);
    ts->last_update_ms = INT64_MIN;
    return 0;
}

static void drop_filters(struct ps_tree_sched *ts)
{
    for (int i = 0; i < ts->filter_count; i++)
        ps_formula_free(ts->filters[i]);
    ts->filter_count = 0;
}

/* The effective filter of op (its own and its pools'), kept alive with the snapshot. */
static int op_filter(struct ps_tree_sched *ts, const struct ps_tree_op *op,
                     const struct ps_formula **filter, struct ps_error *err)
{
    struct ps_formula *owned = NULL;
    int rc = ps_tree_op_effective_filter(op, filter, &owned, err);
    if (rc != 0 || !owned)
        return rc;
    if (ts->filter_count == ts->filter_capacity) {
        int cap = ts->filter_capacity ? 2 * ts->filter_capacity : 16;
        struct ps_formula **f = realloc(ts->filters, (size_t)cap * sizeof *f);
        if (!f) {
            ps_formula_free(owned);
            *filter = NULL;
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
        ts->filters = f;
        ts->filter_capacity = cap;
    }
    ts->filters[ts->filter_count++] = owned;
    return 0;
}

void ps_tree_sched_release(struct ps_tree_sched *ts)
{
    ps_tree_fs_release(&ts->fs);
    ps_fs_update_free(ts->update);
    ps_sched_snapshot_free(ts->snap);
    free(ts->starvation);
    free(ts->sched_ops);
    free(ts->preempt_ops);
    free(ts->subtree_eligible);
    free(ts->user);
    drop_filters(ts);
    free(ts->filters);
    memset(ts, 0, sizeof *ts);
}

static int grow(struct ps_tree_sched *ts, int count, struct ps_error *err)
{
    if (count <= ts->capacity)
        return 0;
    int cap = ts->capacity ? ts->capacity : 16;
    while (cap < count)
        cap *= 2;
    struct ps_starvation_element *st = realloc(ts->starvation, (size_t)cap * sizeof *st);
    if (st)
        ts->starvation = st;
    struct ps_sched_operation *so = realloc(ts->sched_ops, (size_t)cap * sizeof *so);
    if (so)
        ts->sched_ops = so;
    struct ps_preempt_operation *po = realloc(ts->preempt_ops, (size_t)cap * sizeof *po);
    if (po)
        ts->preempt_ops = po;
    void **u = realloc(ts->user, (size_t)cap * sizeof *u);
    if (u)
        ts->user = u;
    uint8_t *se = realloc(ts->subtree_eligible, (size_t)cap);
    if (se)
        ts->subtree_eligible = se;
    if (!st || !so || !po || !u || !se)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ts->capacity = cap;
    return 0;
}

int ps_tree_sched_update(struct ps_tree_sched *ts, struct ps_pool_tree *tree, int64_t now_ms,
                         ps_tree_sched_op_fn *op_fn, void *ctx, int *starvation_changed,
                         struct ps_error *err)
{
    if (starvation_changed)
        *starvation_changed = 0;
    /* The snapshot borrows filters of operations that may be gone by now: drop it first. */
    ps_sched_snapshot_free(ts->snap);
    ts->snap = NULL;
    drop_filters(ts);
    int rc = ps_pool_tree_build_fs(tree, &ts->fs, now_ms, err);
    if (rc != 0)
        return rc;
    int n = ts->fs.count;
    if ((rc = grow(ts, n, err)) != 0)
        return rc;
    rc = ps_fs_update_run(ts->update, ts->fs.elems, n, ts->fs.fs_pools, ts->fs.pool_count, &ts->fs.options, &ts->fs.input, err);
    if (rc != 0)
        return rc;
    ts->alert_count = ps_fs_update_alert_count(ts->update);
    if ((rc = ps_pool_tree_apply_fs(tree, &ts->fs, err)) != 0)
        return rc;

    const struct ps_tree_config *cfg = ps_pool_tree_config(tree);
    struct ps_starvation_config scfg;
    ps_tree_config_starvation_config(cfg, &scfg);
    ps_tree_config_preempt_config(cfg, &ts->preempt_config);
    if ((rc = ps_pool_tree_build_starvation(tree, &ts->fs, ts->starvation, err)) != 0)
        return rc;
    int changed = 0;
    if ((rc = ps_starvation_update(ts->starvation, n, &scfg, now_ms, &changed, err)) != 0)
        return rc;
    if ((rc = ps_pool_tree_apply_starvation(tree, &ts->fs, ts->starvation, err)) != 0)
        return rc;
    if (starvation_changed)
        *starvation_changed = changed;
    ts->any_starving = false;
    for (int i = 0; i < n; i++)
        if (ts->starvation[i].starvation != PS_NON_STARVING)
            ts->any_starving = true;

    struct ps_resources total = ts->fs.input.total;
    ps_preemptible_config_init(&ts->preemptible_config);
    ts->preemptible_config.threshold = ts->preempt_config.preemption_satisfaction_threshold;
    ts->preemptible_config.aggressive_threshold =
        ts->preempt_config.aggressive_preemption_satisfaction_threshold;
    ts->preemptible_config.total = total;
    struct ps_resources_opt tree_np = ps_tree_config_non_preemptible_threshold(cfg);

    for (int i = 0; i < n; i++) {
        struct ps_sched_operation *so = &ts->sched_ops[i];
        struct ps_preempt_operation *po = &ts->preempt_ops[i];
        memset(so, 0, sizeof *so);
        so->allocation.v[PS_RES_USER_SLOTS] = 1;
        *po = (struct ps_preempt_operation){NULL, false, -1};
        ts->user[i] = NULL;
        struct ps_tree_op *op = ts->fs.ops[i];
        if (!op)
            continue;
        ts->user[i] = op->user_data;
        if ((rc = op_filter(ts, op, &so->filter, err)) != 0)
            return rc;
        struct ps_preemptible *lists = op_fn ? op_fn(ctx, op, i, so, po) : NULL;
        if (lists) {
            struct ps_preemptible_config pc = ts->preemptible_config;
            struct ps_resources_opt np = op->non_preemptible_resource_usage_threshold.set
                                             ? op->non_preemptible_resource_usage_threshold
                                             : tree_np;
            if (np.set) {
                pc.has_non_preemptible_usage_threshold = true;
                pc.non_preemptible_usage_threshold = ps_resources_opt_or_infinite(&np);
            }
            const struct ps_fs_element_output *o = &ts->fs.elems[i].out;
            ps_preemptible_update(lists, &o->fair_share.total, &o->demand_share, &pc);
            po->lists = lists;
        }
    }
    ts->options.total = total;
    ts->options.generation = ++ts->generation;
    ts->options.fifo_order_in_fifo_pools = cfg->fifo_pool_scheduling_order == PS_FIFO_ORDER_FIFO;
    /* The snapshot checks the limits an element has of its own, as YTsaurus checks only
     * specified limits in a heartbeat (GetLocalAvailableResourceLimits). The fair share's
     * limits are also capped by the tree total (the root's are the total); checked in a
     * heartbeat they refuse every allocation of the preemptive stages on a full cluster, where
     * the victims still hold their resources. Swapped in for the build only. */
    struct ps_resources *fs_limits = malloc((size_t)(n ? n : 1) * sizeof *fs_limits);
    if (!fs_limits)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        struct ps_fs_element *e = &ts->fs.elems[i];
        fs_limits[i] = e->out.resource_limits;
        if (i == 0)
            e->out.resource_limits = ps_resources_infinite();
        else if (e->in.max_share_ratio >= 1.0)
            e->out.resource_limits = ps_resources_min(e->in.resource_limits, e->in.filter_limits);
    }
    rc = ps_sched_snapshot_new(ts->fs.elems, n, ts->fs.fs_pools, ts->fs.pool_count, ts->sched_ops, &ts->options, &ts->snap, err);
    for (int i = 0; i < n; i++)
        ts->fs.elems[i].out.resource_limits = fs_limits[i];
    free(fs_limits);
    if (rc != 0)
        return rc;
    ps_preempt_subtree_eligible(ts->snap, ts->starvation, ts->subtree_eligible);
    ts->last_update_ms = now_ms;
    return 0;
}

void ps_tree_sched_detach(struct ps_tree_sched *ts, int element)
{
    if (!ts->snap || element < 0 || element >= ts->fs.count || !ts->fs.ops[element])
        return;
    struct ps_sched_operation st;
    memset(&st, 0, sizeof st);
    st.allocation.v[PS_RES_USER_SLOTS] = 1;
    ps_sched_set_operation(ts->snap, element, &st, NULL);
    ts->user[element] = NULL;
    ts->preempt_ops[element] = (struct ps_preempt_operation){NULL, false, -1};
}

static int stage_needed(const struct ps_tree_sched *ts)
{
    return ts->any_starving;
}

int ps_tree_sched_heartbeat(struct ps_tree_sched *ts, const struct ps_sched_node *node,
                            const struct ps_node_allocation *allocs, int alloc_count,
                            int64_t *last_preempt_ms, int64_t now_ms,
                            struct ps_sched_result *sched, struct ps_preempt_result *preempt,
                            struct ps_error *err)
{
    ps_sched_result_clear(sched);
    preempt->victim_count = 0;
    preempt->stage = PS_STAGE_NONE;
    if (!ts->snap)
        return 0;
    int rc = ps_schedule_heartbeat(ts->snap, node, now_ms, sched, err);
    if (rc != 0)
        return rc;
    if (!stage_needed(ts) || !ps_preempt_backoff_passed(*last_preempt_ms, now_ms,
                                                        &ts->preempt_config))
        return 0;
    struct ps_preempt_tree tree = {&ts->preempt_config, ts->starvation, ts->preempt_ops,
                                   ts->subtree_eligible};
    rc = ps_preempt_heartbeat(ts->snap, &tree, node, allocs, alloc_count, sched, preempt, err);
    *last_preempt_ms = now_ms;
    return rc;
}
