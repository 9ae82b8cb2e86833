#include "core/pool_config.h"

#include "core/offloading_settings.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr_common.h"

#define OFF(field) offsetof(struct ps_pool_config, field)
#define EOFF(field) offsetof(struct ps_ephemeral_subpool_config, field)
#define IOFF(field) offsetof(struct ps_pool_integral_config, field)
#define HUGE_MAX 1e308
/* Upstream MaxSchedulingTagRuleCount. */

static const char *const mode_names[] = {"fair_share", "fifo"};
static const char *const guarantee_names[] = {"none", "burst", "relaxed"};
static const char *const fifo_order_names[] = {"satisfaction", "fifo"};
static const char *const historic_mode_names[] = {"none", "exponential_moving_average"};

/* ---- historic_usage_config --------------------------------------------------------------- */

#define HOFF(field) offsetof(struct ps_historic_usage_config, field)

static int historic_init(void *obj)
{
    struct ps_historic_usage_config *c = obj;
    memset(c, 0, sizeof *c);
    c->aggregation_mode = PS_HISTORIC_USAGE_NONE;
    c->ema_alpha = 1.0;
    return 0;
}

static const struct ps_attr historic_attrs[] = {
    {.name = "aggregation_mode", .kind = PS_ATTR_ENUM, .offset = HOFF(aggregation_mode),
     .enum_names = historic_mode_names, .enum_count = 2},
    {.name = "ema_alpha", .kind = PS_ATTR_DOUBLE, .offset = HOFF(ema_alpha), .min = 0,
     .max = HUGE_MAX},
};

static const struct ps_attr_table historic_table = {
    .what = "historic_usage_config",
    .attrs = historic_attrs,
    .count = (int)(sizeof historic_attrs / sizeof historic_attrs[0]),
    .size = sizeof(struct ps_historic_usage_config),
    .init = historic_init,
};

/* ---- ephemeral_subpool_config ------------------------------------------------------------ */

static int ephemeral_init(void *obj)
{
    struct ps_ephemeral_subpool_config *c = obj;
    memset(c, 0, sizeof *c);
    c->mode = PS_MODE_FAIR_SHARE;
    return 0;
}

static const struct ps_attr ephemeral_attrs[] = {
    {.name = "mode", .kind = PS_ATTR_ENUM, .offset = EOFF(mode), .enum_names = mode_names,
     .enum_count = 2},
    PS_ATTR_RESOURCE_LIMITS(EOFF(resource_limits), 0),
    {.name = "max_running_operation_count", .kind = PS_ATTR_OPT_INT,
     .offset = EOFF(max_running_operation_count), .min = 0, .max = HUGE_MAX},
    {.name = "max_operation_count", .kind = PS_ATTR_OPT_INT, .offset = EOFF(max_operation_count),
     .min = 0, .max = HUGE_MAX},
};

static const struct ps_attr_table ephemeral_table = {
    .what = "ephemeral_subpool_config",
    .attrs = ephemeral_attrs,
    .count = (int)(sizeof ephemeral_attrs / sizeof ephemeral_attrs[0]),
    .size = sizeof(struct ps_ephemeral_subpool_config),
    .init = ephemeral_init,
};

/* ---- integral_guarantees ----------------------------------------------------------------- */

static int integral_init(void *obj)
{
    struct ps_pool_integral_config *c = obj;
    memset(c, 0, sizeof *c);
    c->guarantee_type = PS_GUARANTEE_NONE;
    c->can_accept_free_volume = true;
    return 0;
}

static const struct ps_attr integral_attrs[] = {
    {.name = "guarantee_type", .kind = PS_ATTR_ENUM, .offset = IOFF(guarantee_type),
     .enum_names = guarantee_names, .enum_count = 3},
    {.name = "resource_flow", .kind = PS_ATTR_RESOURCES, .offset = IOFF(resource_flow)},
    {.name = "burst_guarantee_resources", .kind = PS_ATTR_RESOURCES,
     .offset = IOFF(burst_guarantee_resources)},
    {.name = "relaxed_share_multiplier_limit", .kind = PS_ATTR_OPT_DOUBLE,
     .offset = IOFF(relaxed_share_multiplier_limit), .min = 1, .max = 10},
    {.name = "can_accept_free_volume", .kind = PS_ATTR_BOOL, .offset = IOFF(can_accept_free_volume)},
    {.name = "should_distribute_free_volume_among_children", .kind = PS_ATTR_OPT_BOOL,
     .offset = IOFF(should_distribute_free_volume_among_children)},
};

static const struct ps_attr_table integral_table = {
    .what = "integral_guarantees config",
    .attrs = integral_attrs,
    .count = (int)(sizeof integral_attrs / sizeof integral_attrs[0]),
    .size = sizeof(struct ps_pool_integral_config),
    .init = integral_init,
};

/* ---- the pool config --------------------------------------------------------------------- */

static int pool_init(void *obj)
{
    return ps_pool_config_init(obj);
}

static const struct ps_attr pool_attrs[] = {
    PS_ATTR_WEIGHT(OFF(weight), 0),
    PS_ATTR_MAX_SHARE_RATIO(OFF(max_share_ratio), 0),
    /* min_share_resources: upstream's master remaps it to strong_guarantee_resources
     * (TSchedulerPool::RemapDeprecatedKey), one attribute under one name */
    {.name = "strong_guarantee_resources", .alias = {"min_share_resources"},
     .kind = PS_ATTR_RESOURCES, .offset = OFF(strong_guarantee_resources),
     .flags = PS_ATTR_SPELLINGS},
    PS_ATTR_RESOURCE_LIMITS(OFF(resource_limits), 0),
    {.name = "scheduling_tag_filter", .alias = {"scheduling_tag"}, .kind = PS_ATTR_STRING,
     .offset = OFF(scheduling_tag_filter), .check = ps_attr_check_filter},
    {.name = "mode", .kind = PS_ATTR_ENUM, .offset = OFF(mode), .enum_names = mode_names,
     .enum_count = 2},
    {.name = "max_running_operation_count", .kind = PS_ATTR_OPT_INT,
     .offset = OFF(max_running_operation_count), .min = 0, .max = HUGE_MAX},
    {.name = "max_operation_count", .kind = PS_ATTR_OPT_INT, .offset = OFF(max_operation_count),
     .min = 0, .max = HUGE_MAX},
    {.name = "fifo_sort_parameters", .kind = PS_ATTR_FIFO_LIST,
     .offset = OFF(fifo_sort_parameters)},
    {.name = "fifo_pool_scheduling_order", .kind = PS_ATTR_OPT_ENUM,
     .offset = OFF(fifo_pool_scheduling_order), .enum_names = fifo_order_names, .enum_count = 2},
    {.name = "forbid_immediate_operations", .kind = PS_ATTR_BOOL,
     .offset = OFF(forbid_immediate_operations)},
    {.name = "create_ephemeral_subpools", .kind = PS_ATTR_BOOL,
     .offset = OFF(create_ephemeral_subpools)},
    {.name = "ephemeral_subpool_config", .kind = PS_ATTR_GROUP,
     .offset = OFF(ephemeral_subpool_config), .group = &ephemeral_table,
     .presence_offset = (ptrdiff_t)OFF(has_ephemeral_subpool_config)},
    /* integral-guarantees: the spelling of the docs' commands (integral-guarantees.txt), a
     * poolsched spelling of the one attribute (upstream has no such alias) */
    {.name = "integral_guarantees", .alias = {"integral-guarantees"}, .kind = PS_ATTR_GROUP,
     .offset = OFF(integral_guarantees), .group = &integral_table, .presence_offset = -1,
     .flags = PS_ATTR_SPELLINGS},
    PS_ATTR_STARVATION_TIMEOUT(PS_ATTR_OPT_INT, OFF(fair_share_starvation_timeout_ms), 0),
    PS_ATTR_STARVATION_TOLERANCE(PS_ATTR_OPT_DOUBLE, OFF(fair_share_starvation_tolerance), 0),
    {.name = "non_preemptible_resource_usage_threshold", .kind = PS_ATTR_RESOURCES,
     .offset = OFF(non_preemptible_resource_usage_threshold)},
    {.name = "enable_aggressive_starvation", .kind = PS_ATTR_OPT_BOOL,
     .offset = OFF(enable_aggressive_starvation)},
    {.name = "allow_aggressive_preemption", .alias = {"allow_aggressive_starvation_preemption"},
     .kind = PS_ATTR_OPT_BOOL, .offset = OFF(allow_aggressive_preemption)},
    {.name = "allow_normal_preemption", .kind = PS_ATTR_OPT_BOOL,
     .offset = OFF(allow_normal_preemption)},
    {.name = "allow_regular_allocations_on_ssd_nodes", .alias = {"allow_regular_jobs_on_ssd_nodes"},
     .kind = PS_ATTR_OPT_BOOL, .offset = OFF(allow_regular_allocations_on_ssd_nodes)},
    {.name = "enable_lightweight_operations", .kind = PS_ATTR_OPT_BOOL,
     .offset = OFF(enable_lightweight_operations)},
    {.name = "config_preset", .kind = PS_ATTR_OPT_STRING, .offset = OFF(config_preset)},
    {.name = "offloading_settings", .kind = PS_ATTR_MAP, .offset = OFF(offloading_settings)},
    {.name = "acl", .kind = PS_ATTR_ACL, .offset = OFF(acl)},
    {.name = "inherit_acl", .kind = PS_ATTR_BOOL, .offset = OFF(inherit_acl)},
    {.name = "enable_fair_share_truncation_in_fifo_pool", .kind = PS_ATTR_OPT_BOOL,
     .offset = OFF(enable_fair_share_truncation_in_fifo_pool)},
    {.name = "use_pool_satisfaction_for_scheduling", .kind = PS_ATTR_OPT_BOOL,
     .offset = OFF(use_pool_satisfaction_for_scheduling)},
    {.name = "infer_children_weights_from_historic_usage", .kind = PS_ATTR_BOOL,
     .offset = OFF(infer_children_weights_from_historic_usage)},
    {.name = "historic_usage_config", .kind = PS_ATTR_GROUP, .offset = OFF(historic_usage_config),
     .group = &historic_table, .presence_offset = -1},
    {.name = "compute_promised_guarantee_fair_share", .kind = PS_ATTR_BOOL,
     .offset = OFF(compute_promised_guarantee_fair_share)},
    {.name = "allowed_profiling_tags", .kind = PS_ATTR_STRING_LIST,
     .offset = OFF(allowed_profiling_tags)},
};

const struct ps_attr_table ps_pool_config_table = {
    .what = "pool config",
    .attrs = pool_attrs,
    .count = (int)(sizeof pool_attrs / sizeof pool_attrs[0]),
    .size = sizeof(struct ps_pool_config),
    .init = pool_init,
    .spelling_offset = OFF(spelling),
    .custom_offset = OFF(custom),
};

_Static_assert(sizeof pool_attrs / sizeof pool_attrs[0] <= PS_POOL_CONFIG_MAX_KEYS,
               "struct ps_pool_config.spelling needs a byte per key");

/* Config presets (pool_preset.h) hold upstream's TPoolPresetConfig keys: the block of entries
 * of the pool table above from fair_share_starvation_timeout to enable_lightweight_operations,
 * read by those very entries (a test checks the block's names). */
#define PRESET_FIRST 14
#define PRESET_COUNT 8

static int preset_init(void *obj)
{
    memset(obj, 0, sizeof(struct ps_pool_config));   /* every preset key unset */
    return 0;
}

const struct ps_attr_table ps_pool_preset_table = {
    .what = "pool config preset",
    .attrs = pool_attrs + PRESET_FIRST,
    .count = PRESET_COUNT,
    .size = sizeof(struct ps_pool_config),
    .init = preset_init,
};

int ps_pool_config_init(struct ps_pool_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->scheduling_tag_filter = strdup("");
    if (!cfg->scheduling_tag_filter)
        return PS_ENOMEM;
    cfg->mode = PS_MODE_FAIR_SHARE;
    cfg->fifo_sort_parameters.count = 2;
    cfg->fifo_sort_parameters.items[0] = PS_FIFO_WEIGHT;
    cfg->fifo_sort_parameters.items[1] = PS_FIFO_START_TIME;
    ephemeral_init(&cfg->ephemeral_subpool_config);
    integral_init(&cfg->integral_guarantees);
    historic_init(&cfg->historic_usage_config);
    cfg->offloading_settings = ps_value_map();
    cfg->custom = ps_value_map();
    cfg->inherit_acl = true;
    return 0;
}

void ps_pool_config_release(struct ps_pool_config *cfg)
{
    if (cfg)
        ps_attr_release(&ps_pool_config_table, cfg);
}

int ps_pool_config_copy(struct ps_pool_config *dst, const struct ps_pool_config *src)
{
    return ps_attr_copy(&ps_pool_config_table, dst, src);
}

/* The keys a stored pool document holds besides its settings (persist_tree.c, pool_tree_doc.c):
 * no custom attribute may take them. */
static int refuse_reserved(const char *key, struct ps_error *err)
{
    static const char *const reserved[] = {"name", "parent", "accumulated_resource_volume"};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(key, reserved[i]) == 0)
            return ps_error_set(err, PS_EINVAL,
                                "%s: reserved, not a pool setting nor a custom attribute", key);
    return 0;
}

int ps_pool_config_set(struct ps_pool_config *cfg, const char *key, const struct ps_value *value,
                       struct ps_error *err)
{
    int rc = refuse_reserved(key, err);
    return rc ? rc : ps_attr_set(&ps_pool_config_table, cfg, key, value, err);
}

int ps_pool_config_apply(struct ps_pool_config *cfg, const struct ps_value *map,
                         struct ps_error *err)
{
    for (int i = 0; map && map->type == PS_VALUE_MAP && i < map->count; i++)
        if (refuse_reserved(map->keys[i], err) != 0)
            return PS_EINVAL;
    return ps_attr_apply(&ps_pool_config_table, cfg, map, false, err);
}

int ps_pool_config_get(const struct ps_pool_config *cfg, const char *key, struct ps_value *out,
                       struct ps_error *err)
{
    return ps_attr_get(&ps_pool_config_table, cfg, key, out, err);
}

int ps_pool_config_to_value(const struct ps_pool_config *cfg, struct ps_value *out)
{
    return ps_attr_to_value(&ps_pool_config_table, cfg, out);
}

int ps_pool_config_key_count(void)
{
    return ps_pool_config_table.count;
}

bool ps_pool_config_is_setting(const char *key)
{
    char head[128];
    snprintf(head, sizeof head, "%.*s", (int)strcspn(key, "/"), key);
    return ps_attr_find(&ps_pool_config_table, head) != NULL;
}

const char *ps_pool_config_key_name(int index)
{
    if (index < 0 || index >= ps_pool_config_table.count)
        return NULL;
    return ps_pool_config_table.attrs[index].name;
}

static int check_counts(const char *prefix, const struct ps_opt_int *max_ops,
                        const struct ps_opt_int *max_running, struct ps_error *err)
{
    if (max_ops->set && max_running->set && max_ops->value < max_running->value)
        return ps_error_set(err, PS_EINVAL,
                            "%smax_operation_count: must be greater than or equal to "
                            "max_running_operation_count (%lld), got %lld",
                            prefix, (long long)max_running->value, (long long)max_ops->value);
    return 0;
}

int ps_pool_config_validate(const struct ps_pool_config *cfg, struct ps_error *err)
{
    int rc = check_counts("", &cfg->max_operation_count, &cfg->max_running_operation_count, err);
    if (rc == 0)
        rc = ps_offloading_settings_check(&cfg->offloading_settings, err);
    if (rc != 0)
        return rc;
    if (cfg->has_ephemeral_subpool_config) {
        rc = check_counts("ephemeral_subpool_config/",
                          &cfg->ephemeral_subpool_config.max_operation_count,
                          &cfg->ephemeral_subpool_config.max_running_operation_count, err);
        if (rc != 0)
            return rc;
    }
    if (cfg->integral_guarantees.guarantee_type == PS_GUARANTEE_RELAXED &&
        cfg->integral_guarantees.burst_guarantee_resources.set != 0)
        return ps_error_set(err, PS_EINVAL,
                            "integral_guarantees/burst_guarantee_resources: cannot be specified "
                            "for guarantee_type \"relaxed\"");
    if (cfg->mode == PS_MODE_FIFO && cfg->create_ephemeral_subpools)
        return ps_error_set(err, PS_EINVAL,
                            "create_ephemeral_subpools: a pool in fifo mode cannot create "
                            "ephemeral subpools");
    return 0;
}

int64_t ps_pool_config_max_running(const struct ps_pool_config *cfg, const struct ps_tree_config *tree)
{
    return cfg->max_running_operation_count.set ? cfg->max_running_operation_count.value
                                                : tree->max_running_operation_count_per_pool;
}

int64_t ps_pool_config_max_operations(const struct ps_pool_config *cfg, const struct ps_tree_config *tree)
{
    return cfg->max_operation_count.set ? cfg->max_operation_count.value
                                        : tree->max_operation_count_per_pool;
}

void ps_pool_config_apply_ephemeral(struct ps_pool_config *cfg, const struct ps_pool_config *parent)
{
    if (!parent || !parent->has_ephemeral_subpool_config)
        return;
    const struct ps_ephemeral_subpool_config *src = &parent->ephemeral_subpool_config;
    cfg->mode = src->mode;
    cfg->resource_limits = src->resource_limits;
    cfg->max_running_operation_count = src->max_running_operation_count;
    cfg->max_operation_count = src->max_operation_count;
}

int ps_pool_config_init_ephemeral(struct ps_pool_config *cfg, const struct ps_pool_config *parent)
{
    int rc = ps_pool_config_init(cfg);
    if (rc == 0)
        ps_pool_config_apply_ephemeral(cfg, parent);
    return rc;
}

struct ps_resources ps_resources_opt_or_infinite(const struct ps_resources_opt *r)
{
    struct ps_resources out;
    for (int i = 0; i < PS_RES_COUNT; i++)
        out.v[i] = (r->set & (1u << i)) ? r->r.v[i] : PS_RES_INFINITE;
    return out;
}

void ps_pool_config_fs_input(const struct ps_pool_config *c, struct ps_fs_element_input *in,
                             struct ps_fs_pool_input *pin)
{
    in->weight_specified = c->weight.set;
    if (c->weight.set)
        in->weight = c->weight.value;
    if (c->max_share_ratio.set)
        in->max_share_ratio = c->max_share_ratio.value;
    in->resource_limits = ps_resources_opt_or_infinite(&c->resource_limits);
    pin->mode = (enum ps_sched_mode)c->mode;
    pin->fifo_sort_count = c->fifo_sort_parameters.count;
    for (int k = 0; k < c->fifo_sort_parameters.count; k++)
        pin->fifo_sort[k] = c->fifo_sort_parameters.items[k];
    pin->strong_guarantee = c->strong_guarantee_resources;
    pin->guarantee_type = (enum ps_guarantee_type)c->integral_guarantees.guarantee_type;
    pin->resource_flow = c->integral_guarantees.resource_flow;
    pin->burst_guarantee = c->integral_guarantees.burst_guarantee_resources;
    pin->relaxed_share_multiplier_limit = c->integral_guarantees.relaxed_share_multiplier_limit.set
                                             ? c->integral_guarantees.relaxed_share_multiplier_limit.value
                                             : 0.0;
    pin->can_accept_free_volume = c->integral_guarantees.can_accept_free_volume;
    pin->should_distribute_free_volume_among_children =
        c->integral_guarantees.should_distribute_free_volume_among_children.set
            ? (signed char)c->integral_guarantees.should_distribute_free_volume_among_children.value
            : -1;
    pin->use_pool_satisfaction_for_scheduling =
        !c->use_pool_satisfaction_for_scheduling.set ? 0
        : c->use_pool_satisfaction_for_scheduling.value ? 2 : 1;
    pin->fifo_order = !c->fifo_pool_scheduling_order.set ? 0
                      : c->fifo_pool_scheduling_order.value == PS_FIFO_ORDER_FIFO ? 2 : 1;
    pin->enable_fair_share_truncation_in_fifo_pool =
        c->enable_fair_share_truncation_in_fifo_pool.set
            ? (signed char)c->enable_fair_share_truncation_in_fifo_pool.value
            : -1;
}
