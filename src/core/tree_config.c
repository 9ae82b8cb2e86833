#include "core/tree_config.h"

#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr_common.h"
#include "core/digest.h"
#include "core/formula.h"
#include "core/pool_config.h"

#define OFF(field) offsetof(struct ps_tree_config, field)
#define IOFF(field) offsetof(struct ps_tree_integral_config, field)
#define HUGE_MAX 1e308

static const char *const scope_names[] = {"operation_and_ancestors", "operation_only"};
static const char *const fifo_order_names[] = {"satisfaction", "fifo"};
static const char *const resource_names[] = {"user_slots", "cpu", "gpu", "memory", "network"};

static int check_resource_name(const char *key, const char *value, struct ps_error *err)
{
    if (ps_resource_from_name(value) >= 0)
        return 0;
    return ps_error_set(err, PS_EINVAL, "%s: must be a resource name (user_slots, cpu, gpu, "
                        "memory, network), got \"%s\"", key, value);
}

/* upstream's EOperationType names */
static int check_operation_type(const char *key, const char *value, struct ps_error *err)
{
    static const char *const types[] = {"map", "merge", "erase", "sort", "reduce",
                                        "join_reduce", "map_reduce", "remote_copy", "vanilla"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(value, types[i]) == 0)
            return 0;
    return ps_error_set(err, PS_EINVAL, "%s: must be an operation type (map, merge, erase, sort, "
                        "reduce, join_reduce, map_reduce, remote_copy, vanilla), got \"%s\"",
                        key, value);
}

static int check_formula(const char *key, const char *text, struct ps_error *err)
{
    struct ps_formula *formula = NULL;
    int rc = ps_formula_parse(text, &formula, err);
    ps_formula_free(formula);
    if (rc != 0)
        ps_error_prefix(err, "%s", key);
    return rc;
}

static int check_default_parent(const char *key, const char *name, struct ps_error *err)
{
    if (strcmp(name, PS_ROOT_POOL_NAME) == 0)
        return 0;
    return ps_pool_name_check(key, name, err);
}

static int integral_init(void *obj)
{
    struct ps_tree_integral_config *c = obj;
    c->smooth_period_ms = 60000;
    c->pool_capacity_saturation_period_ms = 86400000;
    c->relaxed_share_multiplier_limit = 3.0;
    return 0;
}

static const struct ps_attr integral_attrs[] = {
    {.name = "smooth_period", .kind = PS_ATTR_INT, .offset = IOFF(smooth_period_ms),
     .flags = PS_ATTR_MIN_OPEN, .min = 0, .max = HUGE_MAX},
    {.name = "pool_capacity_saturation_period", .kind = PS_ATTR_INT,
     .offset = IOFF(pool_capacity_saturation_period_ms), .flags = PS_ATTR_MIN_OPEN, .min = 0,
     .max = HUGE_MAX},
    {.name = "relaxed_share_multiplier_limit", .kind = PS_ATTR_DOUBLE,
     .offset = IOFF(relaxed_share_multiplier_limit), .min = 1, .max = HUGE_MAX},
};

static const struct ps_attr_table integral_table = {
    .what = "tree integral_guarantees config",
    .attrs = integral_attrs,
    .count = (int)(sizeof integral_attrs / sizeof integral_attrs[0]),
    .size = sizeof(struct ps_tree_integral_config),
    .init = integral_init,
};

#define DOFF(field) offsetof(struct ps_tree_digest_config, field)

static int digest_init(void *obj)
{
    struct ps_tree_digest_config *c = obj;
    struct ps_histogram_digest_config d;
    ps_histogram_digest_config_init(&d);
    *c = (struct ps_tree_digest_config){.absolute_precision = d.absolute_precision,
                                        .lower_bound = d.lower_bound,
                                        .upper_bound = d.upper_bound};
    return 0;
}

/* Each number's own range here; the cross-key rules (bounds order, bucket count, default value
 * within the bounds) are ps_histogram_digest_config_validate's, run by the tree's validate. */
static const struct ps_attr digest_attrs[] = {
    {.name = "absolute_precision", .kind = PS_ATTR_DOUBLE, .offset = DOFF(absolute_precision),
     .flags = PS_ATTR_MIN_OPEN, .min = 0, .max = HUGE_MAX},
    {.name = "lower_bound", .kind = PS_ATTR_DOUBLE, .offset = DOFF(lower_bound),
     .flags = PS_ATTR_NO_RANGE},
    {.name = "upper_bound", .kind = PS_ATTR_DOUBLE, .offset = DOFF(upper_bound),
     .flags = PS_ATTR_NO_RANGE},
    {.name = "default_value", .kind = PS_ATTR_OPT_DOUBLE, .offset = DOFF(default_value),
     .flags = PS_ATTR_NO_RANGE},
};

static const struct ps_attr_table digest_table = {
    .what = "histogram digest config",
    .attrs = digest_attrs,
    .count = (int)(sizeof digest_attrs / sizeof digest_attrs[0]),
    .size = sizeof(struct ps_tree_digest_config),
    .init = digest_init,
};

void ps_tree_config_satisfaction_digest(const struct ps_tree_config *cfg,
                                        struct ps_histogram_digest_config *out)
{
    const struct ps_tree_digest_config *c = &cfg->per_pool_satisfaction_digest;
    ps_histogram_digest_config_init(out);
    out->absolute_precision = c->absolute_precision;
    out->lower_bound = c->lower_bound;
    out->upper_bound = c->upper_bound;
    out->has_default_value = c->default_value.set;
    out->default_value = c->default_value.value;
}

#define SOFF(field) offsetof(struct ps_tree_ssd_config, field)

static int ssd_init(void *obj)
{
    struct ps_tree_ssd_config *c = obj;
    memset(c, 0, sizeof *c);
    c->node_tag_filter = strdup("");
    return c->node_tag_filter ? 0 : PS_ENOMEM;
}

static const struct ps_attr ssd_attrs[] = {
    {.name = "enable", .kind = PS_ATTR_BOOL, .offset = SOFF(enable)},
    {.name = "node_tag_filter", .kind = PS_ATTR_STRING, .offset = SOFF(node_tag_filter),
     .check = check_formula},
    {.name = "medium_names", .kind = PS_ATTR_STRING_LIST, .offset = SOFF(medium_names)},
};

static const struct ps_attr_table ssd_table = {
    .what = "tree ssd_priority_preemption config",
    .attrs = ssd_attrs,
    .count = (int)(sizeof ssd_attrs / sizeof ssd_attrs[0]),
    .size = sizeof(struct ps_tree_ssd_config),
    .init = ssd_init,
};

static int tree_init(void *obj)
{
    return ps_tree_config_init(obj);
}

#define MS(key, field) \
    {.name = key, .kind = PS_ATTR_INT, .offset = OFF(field), .min = 0, .max = HUGE_MAX}
#define POSITIVE_INT(key, field) \
    {.name = key, .kind = PS_ATTR_INT, .offset = OFF(field), .flags = PS_ATTR_MIN_OPEN, \
     .min = 0, .max = HUGE_MAX}
#define BOOL(key, field) {.name = key, .kind = PS_ATTR_BOOL, .offset = OFF(field)}

static const struct ps_attr tree_attrs[] = {
    {.name = "nodes_filter", .kind = PS_ATTR_STRING, .offset = OFF(nodes_filter),
     .check = check_formula},
    POSITIVE_INT("max_operation_count", max_operation_count),
    POSITIVE_INT("max_operation_count_per_pool", max_operation_count_per_pool),
    POSITIVE_INT("max_running_operation_count", max_running_operation_count),
    POSITIVE_INT("max_running_operation_count_per_pool", max_running_operation_count_per_pool),
    {.name = "default_parent_pool", .kind = PS_ATTR_STRING, .offset = OFF(default_parent_pool),
     .flags = PS_ATTR_NONEMPTY, .check = check_default_parent},
    BOOL("enable_pool_starvation", enable_pool_starvation),
    BOOL("forbid_immediate_operations_in_root", forbid_immediate_operations_in_root),
    {.name = "max_ephemeral_pools_per_user", .alias = {"max_ephemeral_pool_per_user"},
     .kind = PS_ATTR_INT, .offset = OFF(max_ephemeral_pools_per_user), .min = 1, .max = HUGE_MAX},
    BOOL("use_user_default_parent_pool_map", use_user_default_parent_pool_map),
    PS_ATTR_STARVATION_TIMEOUT(PS_ATTR_INT, OFF(fair_share_starvation_timeout_ms), 0),
    MS("fair_share_aggressive_starvation_timeout", fair_share_aggressive_starvation_timeout_ms),
    PS_ATTR_STARVATION_TOLERANCE(PS_ATTR_DOUBLE, OFF(fair_share_starvation_tolerance), 0),
    BOOL("enable_aggressive_starvation", enable_aggressive_starvation),
    MS("min_share_preemption_timeout", min_share_preemption_timeout_ms),
    {.name = "non_preemptible_resource_usage_threshold", .kind = PS_ATTR_RESOURCES,
     .offset = OFF(non_preemptible_resource_usage_threshold)},
    {.name = "preemption_satisfaction_threshold", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(preemption_satisfaction_threshold), .flags = PS_ATTR_MIN_OPEN, .min = 0,
     .max = HUGE_MAX},
    {.name = "aggressive_preemption_satisfaction_threshold", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(aggressive_preemption_satisfaction_threshold), .min = 0, .max = HUGE_MAX},
    MS("preemptive_scheduling_backoff", preemptive_scheduling_backoff_ms),
    {.name = "allocation_preemption_timeout", .alias = {"job_interrupt_timeout"},
     .kind = PS_ATTR_INT, .offset = OFF(allocation_preemption_timeout_ms), .min = 0,
     .max = HUGE_MAX},
    {.name = "allocation_graceful_preemption_timeout", .alias = {"job_graceful_interrupt_timeout"},
     .kind = PS_ATTR_INT, .offset = OFF(allocation_graceful_preemption_timeout_ms), .min = 0,
     .max = HUGE_MAX},
    {.name = "waiting_for_resources_on_node_timeout", .alias = {"waiting_job_timeout"},
     .kind = PS_ATTR_OPT_INT, .offset = OFF(waiting_for_resources_on_node_timeout_ms), .min = 0,
     .max = HUGE_MAX},
    {.name = "max_unpreemptible_running_allocation_count",
     .alias = {"max_unpreemptible_running_job_count", "max_unpreemptable_running_job_count"},
     .kind = PS_ATTR_OPT_INT, .offset = OFF(max_unpreemptible_running_allocation_count), .min = 0,
     .max = HUGE_MAX},
    BOOL("enable_conditional_preemption", enable_conditional_preemption),
    BOOL("preemption_check_starvation", preemption_check_starvation),
    BOOL("preemption_check_satisfaction", preemption_check_satisfaction),
    BOOL("allow_aggressive_preemption_for_gang_operations",
         allow_aggressive_preemption_for_gang_operations),
    {.name = "allocation_count_preemption_timeout_coefficient",
     .alias = {"job_count_preemption_timeout_coefficient"}, .kind = PS_ATTR_DOUBLE,
     .offset = OFF(allocation_count_preemption_timeout_coefficient), .min = 1, .max = HUGE_MAX},
    {.name = "scheduling_preemption_priority_scope", .kind = PS_ATTR_ENUM,
     .offset = OFF(scheduling_preemption_priority_scope), .enum_names = scope_names,
     .enum_count = 2},
    {.name = "fifo_pool_scheduling_order", .kind = PS_ATTR_ENUM,
     .offset = OFF(fifo_pool_scheduling_order), .enum_names = fifo_order_names, .enum_count = 2},
    {.name = "integral_guarantees", .kind = PS_ATTR_GROUP, .offset = OFF(integral_guarantees),
     .group = &integral_table, .presence_offset = -1},
    BOOL("enable_step_function_for_gang_operations", enable_step_function_for_gang_operations),
    BOOL("enable_improved_fair_share_by_fit_factor_computation",
         enable_improved_fair_share_by_fit_factor_computation),
    {.name = "infer_weight_from_guarantees_share_multiplier",
     .alias = {"infer_weight_from_strong_guarantee_share_multiplier",
               "infer_weight_from_min_share_ratio_multiplier"},
     .kind = PS_ATTR_OPT_DOUBLE, .offset = OFF(infer_weight_from_guarantees_share_multiplier),
     .min = 1, .max = HUGE_MAX},
    {.name = "main_resource", .kind = PS_ATTR_ENUM, .offset = OFF(main_resource),
     .enum_names = resource_names, .enum_count = PS_RES_COUNT},
    {.name = "node_reconnection_timeout", .alias = {"total_resource_limits_consider_delay"},
     .kind = PS_ATTR_INT, .offset = OFF(node_reconnection_timeout_ms), .min = 0, .max = HUGE_MAX},
    {.name = "allowed_node_resources_overcommit_duration", .kind = PS_ATTR_INT,
     .offset = OFF(allowed_node_resources_overcommit_duration_ms), .min = 0, .max = HUGE_MAX},
    {.name = "fair_share_update_period", .kind = PS_ATTR_INT,
     .offset = OFF(fair_share_update_period_ms), .min = 10, .max = 60000},
    BOOL("should_distribute_free_volume_among_children", should_distribute_free_volume_among_children),
    BOOL("enable_fair_share_truncation_in_fifo_pool", enable_fair_share_truncation_in_fifo_pool),
    {.name = "max_schedulable_element_count_in_fifo_pool", .kind = PS_ATTR_OPT_INT,
     .offset = OFF(max_schedulable_element_count_in_fifo_pool), .flags = PS_ATTR_MIN_OPEN,
     .min = 0, .max = HUGE_MAX},
    BOOL("enable_guarantee_priority_scheduling", enable_guarantee_priority_scheduling),
    {.name = "min_spare_allocation_resources_on_node", .alias = {"min_spare_job_resources_on_node"},
     .kind = PS_ATTR_RESOURCES, .offset = OFF(min_spare_allocation_resources_on_node)},
    {.name = "necessary_resources_for_operation", .kind = PS_ATTR_STRING_LIST,
     .offset = OFF(necessary_resources_for_operation), .check = check_resource_name},
    {.name = "non_tentative_operation_types", .kind = PS_ATTR_STRING_LIST,
     .offset = OFF(non_tentative_operation_types), .check = check_operation_type},
    {.name = "enable_limiting_ancestor_check", .kind = PS_ATTR_BOOL,
     .offset = OFF(enable_limiting_ancestor_check)},
    {.name = "ssd_priority_preemption", .kind = PS_ATTR_GROUP,
     .offset = OFF(ssd_priority_preemption), .group = &ssd_table, .presence_offset = -1},
    {.name = "per_pool_satisfaction_digest", .kind = PS_ATTR_GROUP,
     .offset = OFF(per_pool_satisfaction_digest), .group = &digest_table, .presence_offset = -1},
    {.name = "per_pool_satisfaction_profiling_quantiles", .kind = PS_ATTR_DOUBLE_LIST,
     .offset = OFF(per_pool_satisfaction_profiling_quantiles), .min = 0, .max = 1},
    {.name = "pool_config_presets", .kind = PS_ATTR_MAP, .offset = OFF(pool_config_presets)},
    {.name = "acl", .kind = PS_ATTR_ACL, .offset = OFF(acl)},
    {.name = "inherit_acl", .kind = PS_ATTR_BOOL, .offset = OFF(inherit_acl)},
};

const struct ps_attr_table ps_tree_config_table = {
    .what = "pool tree config",
    .attrs = tree_attrs,
    .count = (int)(sizeof tree_attrs / sizeof tree_attrs[0]),
    .size = sizeof(struct ps_tree_config),
    .init = tree_init,
};

bool ps_tree_config_is_key(const char *key)
{
    char head[128];
    snprintf(head, sizeof head, "%.*s", (int)strcspn(key, "/"), key);
    return ps_attr_find(&ps_tree_config_table, head) != NULL;
}

int ps_tree_config_init(struct ps_tree_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->nodes_filter = strdup("");
    cfg->default_parent_pool = strdup(PS_ROOT_POOL_NAME);
    if (!cfg->nodes_filter || !cfg->default_parent_pool ||
        ssd_init(&cfg->ssd_priority_preemption) != 0) {
        ps_tree_config_release(cfg);
        return PS_ENOMEM;
    }
    cfg->max_operation_count = 50000;
    cfg->max_operation_count_per_pool = 50;
    cfg->max_running_operation_count = 2000;
    cfg->max_running_operation_count_per_pool = 50;
    cfg->enable_pool_starvation = true;
    cfg->forbid_immediate_operations_in_root = true;
    cfg->max_ephemeral_pools_per_user = 1;
    cfg->inherit_acl = true;
    struct ps_resources_opt *spare = &cfg->min_spare_allocation_resources_on_node;
    spare->r.v[PS_RES_CPU] = 1 * PS_CPU_SCALE;
    spare->r.v[PS_RES_USER_SLOTS] = 1;
    spare->r.v[PS_RES_MEMORY] = 256LL * 1024 * 1024;
    spare->set = (1u << PS_RES_CPU) | (1u << PS_RES_USER_SLOTS) | (1u << PS_RES_MEMORY);
    cfg->fair_share_starvation_timeout_ms = 30000;
    cfg->fair_share_aggressive_starvation_timeout_ms = 120000;
    cfg->fair_share_starvation_tolerance = 0.8;
    cfg->enable_aggressive_starvation = false;
    cfg->min_share_preemption_timeout_ms = 15000;
    cfg->preemption_satisfaction_threshold = 1.0;
    cfg->aggressive_preemption_satisfaction_threshold = 0.2;
    cfg->preemptive_scheduling_backoff_ms = 5000;
    cfg->allocation_preemption_timeout_ms = 10000;
    cfg->allocation_graceful_preemption_timeout_ms = 60000;
    cfg->enable_conditional_preemption = true;
    cfg->preemption_check_starvation = true;
    cfg->preemption_check_satisfaction = true;
    cfg->enable_limiting_ancestor_check = true;
    cfg->allow_aggressive_preemption_for_gang_operations = true;
    cfg->allocation_count_preemption_timeout_coefficient = 1.0;
    cfg->scheduling_preemption_priority_scope = PS_PREEMPTION_SCOPE_OPERATION_AND_ANCESTORS;
    cfg->fifo_pool_scheduling_order = PS_FIFO_ORDER_SATISFACTION;
    integral_init(&cfg->integral_guarantees);
    cfg->enable_step_function_for_gang_operations = true;
    cfg->enable_improved_fair_share_by_fit_factor_computation = false;
    cfg->main_resource = PS_RES_CPU;
    cfg->node_reconnection_timeout_ms = 300000;
    cfg->allowed_node_resources_overcommit_duration_ms = 15000;
    cfg->fair_share_update_period_ms = 1000;
    digest_init(&cfg->per_pool_satisfaction_digest);
    static const double quantiles[] = {0.01, 0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.95,
                                       0.99};
    struct ps_double_list *q = &cfg->per_pool_satisfaction_profiling_quantiles;
    q->count = (int)(sizeof quantiles / sizeof quantiles[0]);
    memcpy(q->items, quantiles, sizeof quantiles);
    cfg->pool_config_presets = ps_value_map();
    return 0;
}

void ps_tree_config_release(struct ps_tree_config *cfg)
{
    if (!cfg)
        return;
    ps_attr_release(&ps_tree_config_table, cfg);
}

int ps_tree_config_copy(struct ps_tree_config *dst, const struct ps_tree_config *src)
{
    return ps_attr_copy(&ps_tree_config_table, dst, src);
}

int ps_tree_config_validate(const struct ps_tree_config *cfg, struct ps_error *err)
{
    if (cfg->aggressive_preemption_satisfaction_threshold > cfg->preemption_satisfaction_threshold)
        return ps_error_set(err, PS_EINVAL,
                            "aggressive_preemption_satisfaction_threshold: must not exceed "
                            "preemption_satisfaction_threshold (%.17g), got %.17g",
                            cfg->preemption_satisfaction_threshold,
                            cfg->aggressive_preemption_satisfaction_threshold);
    if (cfg->fair_share_aggressive_starvation_timeout_ms < cfg->fair_share_starvation_timeout_ms)
        return ps_error_set(err, PS_EINVAL,
                            "fair_share_aggressive_starvation_timeout: must not be less than "
                            "fair_share_starvation_timeout (%lld ms), got %lld",
                            (long long)cfg->fair_share_starvation_timeout_ms,
                            (long long)cfg->fair_share_aggressive_starvation_timeout_ms);
    struct ps_histogram_digest_config digest;
    ps_tree_config_satisfaction_digest(cfg, &digest);
    if (ps_histogram_digest_config_validate(&digest, err) != 0) {
        ps_error_prefix(err, "per_pool_satisfaction_digest");
        return PS_EINVAL;
    }
    /* upstream's postprocessor of the SSD config, with its message */
    if (cfg->ssd_priority_preemption.enable && !cfg->ssd_priority_preemption.node_tag_filter[0])
        return ps_error_set(err, PS_EINVAL,
                            "ssd_priority_preemption/enable: SSD node tag filter must be "
                            "non-empty when SSD priority preemption is enabled");
    return 0;
}

/* Applies `change` to a copy, validates the copy, and commits it only when valid. */
static int update(struct ps_tree_config *cfg, const char *key, const struct ps_value *value,
                  const struct ps_value *map, struct ps_error *err)
{
    struct ps_tree_config copy;
    int rc = ps_tree_config_copy(&copy, cfg);
    if (rc != 0)
        return rc;
    if (map)
        rc = ps_attr_apply(&ps_tree_config_table, &copy, map, false, err);
    else
        rc = ps_attr_set(&ps_tree_config_table, &copy, key, value, err);
    if (rc == 0)
        rc = ps_tree_config_validate(&copy, err);
    if (rc != 0) {
        ps_tree_config_release(&copy);
        return rc;
    }
    ps_tree_config_release(cfg);
    *cfg = copy;
    return 0;
}

int ps_tree_config_set(struct ps_tree_config *cfg, const char *key, const struct ps_value *value,
                       struct ps_error *err)
{
    return update(cfg, key, value, NULL, err);
}

int ps_tree_config_apply(struct ps_tree_config *cfg, const struct ps_value *map,
                         struct ps_error *err)
{
    if (!map)
        return 0;
    return update(cfg, NULL, NULL, map, err);
}

int ps_tree_config_get(const struct ps_tree_config *cfg, const char *key, struct ps_value *out,
                       struct ps_error *err)
{
    return ps_attr_get(&ps_tree_config_table, cfg, key, out, err);
}

int ps_tree_config_to_value(const struct ps_tree_config *cfg, struct ps_value *out)
{
    return ps_attr_to_value(&ps_tree_config_table, cfg, out);
}

int ps_tree_config_key_count(void)
{
    return ps_tree_config_table.count;
}

const char *ps_tree_config_key_name(int index)
{
    if (index < 0 || index >= ps_tree_config_table.count)
        return NULL;
    return ps_tree_config_table.attrs[index].name;
}

void ps_tree_config_fs_options(const struct ps_tree_config *cfg, struct ps_fs_options *options)
{
    ps_fs_options_init(options);
    options->main_resource = cfg->main_resource;
    options->integral_pool_capacity_saturation_period_ms =
        cfg->integral_guarantees.pool_capacity_saturation_period_ms;
    options->integral_smooth_period_ms = cfg->integral_guarantees.smooth_period_ms;
    options->relaxed_share_multiplier_limit = cfg->integral_guarantees.relaxed_share_multiplier_limit;
    options->enable_step_function_for_gang_operations = cfg->enable_step_function_for_gang_operations;
    options->enable_improved_fair_share_by_fit_factor_computation =
        cfg->enable_improved_fair_share_by_fit_factor_computation;
    options->infer_weight_from_guarantees_share_multiplier =
        cfg->infer_weight_from_guarantees_share_multiplier.set
            ? cfg->infer_weight_from_guarantees_share_multiplier.value
            : 0.0;
    options->should_distribute_free_volume_among_children = cfg->should_distribute_free_volume_among_children;
    options->enable_fair_share_truncation_in_fifo_pool = cfg->enable_fair_share_truncation_in_fifo_pool;
}

struct ps_resources ps_tree_config_min_spare(const struct ps_tree_config *cfg)
{
    struct ps_resources r = ps_resources_zero();
    const struct ps_resources_opt *o = &cfg->min_spare_allocation_resources_on_node;
    for (int i = 0; i < PS_RES_COUNT; i++)
        if (o->set & (1u << i))
            r.v[i] = o->r.v[i];
    return r;
}

struct ps_resources_opt ps_tree_config_non_preemptible_threshold(const struct ps_tree_config *cfg)
{
    struct ps_resources_opt t = cfg->non_preemptible_resource_usage_threshold;
    unsigned slots = 1u << PS_RES_USER_SLOTS;
    if (!(t.set & slots) && cfg->max_unpreemptible_running_allocation_count.set) {
        t.r.v[PS_RES_USER_SLOTS] = cfg->max_unpreemptible_running_allocation_count.value;
        t.set |= slots;
    }
    return t;
}
