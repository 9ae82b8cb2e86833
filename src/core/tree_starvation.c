#include "core/tree_starvation.h"

#include "core/operation.h"
#include "core/pool_tree_impl.h"

void ps_tree_config_starvation_config(const struct ps_tree_config *cfg, struct ps_starvation_config *out)
{
    ps_starvation_config_init(out);
    out->tolerance = cfg->fair_share_starvation_tolerance;
    out->timeout_ms = cfg->fair_share_starvation_timeout_ms;
    out->aggressive_timeout_ms = cfg->fair_share_aggressive_starvation_timeout_ms;
    out->enable_aggressive_starvation = cfg->enable_aggressive_starvation;
    out->enable_pool_starvation = cfg->enable_pool_starvation;
    out->allocation_count_preemption_timeout_coefficient = cfg->allocation_count_preemption_timeout_coefficient;
}

void ps_tree_config_preempt_config(const struct ps_tree_config *cfg, struct ps_preempt_config *out)
{
    ps_preempt_config_init(out);
    out->preemption_satisfaction_threshold = cfg->preemption_satisfaction_threshold;
    out->aggressive_preemption_satisfaction_threshold = cfg->aggressive_preemption_satisfaction_threshold;
    out->enable_conditional_preemption = cfg->enable_conditional_preemption;
    out->check_starvation = cfg->preemption_check_starvation;
    out->check_satisfaction = cfg->preemption_check_satisfaction;
    out->priority_operation_only =
        cfg->scheduling_preemption_priority_scope == PS_PREEMPTION_SCOPE_OPERATION_ONLY;
    out->preemptive_scheduling_backoff_ms = cfg->preemptive_scheduling_backoff_ms;
    out->allocation_preemption_timeout_ms = cfg->allocation_preemption_timeout_ms;
    out->allocation_graceful_preemption_timeout_ms = cfg->allocation_graceful_preemption_timeout_ms;
    const struct ps_opt_int *max = &cfg->max_unpreemptible_running_allocation_count;
    out->max_unpreemptible_running_allocation_count =
        !max->set ? -1 : max->value > INT32_MAX ? INT32_MAX : (int)max->value;
}

void ps_pool_tree_sched_options(const struct ps_pool_tree *tree, struct ps_sched_options *out)
{
    ps_sched_options_init(out);
    out->total = tree->total;
    out->fifo_order_in_fifo_pools = tree->config.fifo_pool_scheduling_order == PS_FIFO_ORDER_FIFO;
    out->filter_eval = ps_formula_eval;
}

void ps_tree_op_preemptible_config(const struct ps_tree_op *op, struct ps_preemptible_config *out)
{
    const struct ps_pool_tree *tree = op->tree;
    ps_preemptible_config_init(out);
    out->threshold = tree->config.preemption_satisfaction_threshold;
    out->aggressive_threshold = tree->config.aggressive_preemption_satisfaction_threshold;
    out->total = tree->total;
    struct ps_resources_opt threshold = op->non_preemptible_resource_usage_threshold;
    for (const struct ps_pool *p = op->pool; threshold.set == 0 && p && !p->is_root; p = p->parent)
        threshold = p->config.non_preemptible_resource_usage_threshold;
    if (threshold.set == 0)
        threshold = ps_tree_config_non_preemptible_threshold(&tree->config);
    /* the spec's max_unpreemptible_allocation_count caps user_slots (upstream's
     * TSchedulerOperationElement::UpdateRecursiveAttributes) */
    const struct ps_opt_int *max = &op->max_unpreemptible_allocation_count;
    unsigned slots = 1u << PS_RES_USER_SLOTS;
    if (max->set && (!(threshold.set & slots) || threshold.r.v[PS_RES_USER_SLOTS] > (double)max->value)) {
        threshold.r.v[PS_RES_USER_SLOTS] = (double)max->value;
        threshold.set |= slots;
    }
    out->has_non_preemptible_usage_threshold = threshold.set != 0;
    if (out->has_non_preemptible_usage_threshold)
        out->non_preemptible_usage_threshold = ps_resources_opt_or_infinite(&threshold);
}

void ps_pool_config_starvation_settings(const struct ps_pool_config *cfg, struct ps_starvation_settings *out)
{
    *out = (struct ps_starvation_settings){0};
    out->has_tolerance = cfg->fair_share_starvation_tolerance.set;
    out->tolerance = cfg->fair_share_starvation_tolerance.value;
    out->has_timeout = cfg->fair_share_starvation_timeout_ms.set;
    out->timeout_ms = cfg->fair_share_starvation_timeout_ms.value;
    out->has_enable_aggressive = cfg->enable_aggressive_starvation.set;
    out->enable_aggressive = cfg->enable_aggressive_starvation.value;
}

static int check_fs(const struct ps_pool_tree *tree, const struct ps_tree_fs *fs, struct ps_error *err)
{
    if (fs->tree != tree || fs->generation != tree->generation)
        return ps_error_set(err, PS_ESTATE,
                            "pool tree \"%s\" changed since its fair share input was built; build again",
                            tree->name);
    return 0;
}

int ps_pool_tree_build_starvation(const struct ps_pool_tree *tree, const struct ps_tree_fs *fs,
                                  struct ps_starvation_element *elems, struct ps_error *err)
{
    int rc = check_fs(tree, fs, err);
    if (rc != 0)
        return rc;
    for (int i = 0; i < fs->count; i++) {
        const struct ps_fs_element *fe = &fs->elems[i];
        struct ps_starvation_element *e = &elems[i];
        ps_starvation_element_init(e, fe->in.kind, fe->in.parent);
        if (fs->pools[i]) {
            ps_pool_config_starvation_settings(&fs->pools[i]->config, &e->spec);
        } else {
            const struct ps_tree_op *op = fs->ops[i];
            e->spec.has_tolerance = op->fair_share_starvation_tolerance.set;
            e->spec.tolerance = op->fair_share_starvation_tolerance.value;
            e->spec.has_timeout = op->fair_share_starvation_timeout_ms.set;
            e->spec.timeout_ms = op->fair_share_starvation_timeout_ms.value;
        }
    }
    return ps_pool_tree_refresh_starvation(tree, fs, elems, err);
}

int ps_pool_tree_refresh_starvation(const struct ps_pool_tree *tree, const struct ps_tree_fs *fs,
                                    struct ps_starvation_element *elems, struct ps_error *err)
{
    int rc = check_fs(tree, fs, err);
    if (rc != 0)
        return rc;
    for (int i = 0; i < fs->count; i++) {
        const struct ps_fs_element *fe = &fs->elems[i];
        struct ps_starvation_element *e = &elems[i];
        e->fair_share = fe->out.fair_share.total;
        e->demand_share = fe->out.demand_share;
        e->usage_share = fe->out.usage_share;
        const struct ps_element_dynamic *d;
        if (fs->pools[i]) {
            d = &fs->pools[i]->dynamic;
        } else {
            const struct ps_tree_op *op = fs->ops[i];
            e->schedulable = !op->suspended;
            e->pending_count = op->pending_job_count;
            d = &op->dynamic;
        }
        e->below_fair_share_since_ms = d->below_fair_share_since_ms;
        e->starvation = d->starvation;
    }
    return 0;
}

int ps_pool_tree_apply_starvation(struct ps_pool_tree *tree, const struct ps_tree_fs *fs,
                                  const struct ps_starvation_element *elems, struct ps_error *err)
{
    int rc = check_fs(tree, fs, err);
    if (rc != 0)
        return rc;
    for (int i = 0; i < fs->count; i++) {
        struct ps_element_dynamic *d = fs->pools[i] ? &fs->pools[i]->dynamic : &fs->ops[i]->dynamic;
        d->status = elems[i].status;
        d->starvation = elems[i].starvation;
        d->below_fair_share_since_ms = elems[i].below_fair_share_since_ms;
        d->effective_tolerance = elems[i].effective_tolerance;
        d->effective_timeout_ms = elems[i].effective_timeout_ms;
        d->effective_aggressive_timeout_ms = elems[i].effective_aggressive_timeout_ms;
        d->effective_aggressive_starvation_enabled = elems[i].aggressive_enabled;
        if (fs->ops[i] && elems[i].starvation == PS_NON_STARVING)
            fs->ops[i]->deactivation_count_at_non_starving = fs->ops[i]->deactivation_count;
    }
    return 0;
}
