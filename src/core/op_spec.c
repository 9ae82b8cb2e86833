#include "core/op_spec.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr_common.h"

#define OFF(field) offsetof(struct ps_operation_spec, field)
#define TOFF(field) offsetof(struct ps_op_tree_options, field)
#define HUGE_MAX 1e308

/* ---- per-tree options -------------------------------------------------------------------- */

static int tree_options_init(void *obj)
{
    memset(obj, 0, sizeof(struct ps_op_tree_options));
    return 0;
}

static const struct ps_attr tree_option_attrs[] = {
    {.name = "pool", .kind = PS_ATTR_OPT_STRING, .offset = TOFF(pool), .flags = PS_ATTR_NONEMPTY},
    PS_ATTR_WEIGHT(TOFF(weight), 0),
    PS_ATTR_MAX_SHARE_RATIO(TOFF(max_share_ratio), 0),
    PS_ATTR_RESOURCE_LIMITS(TOFF(resource_limits), 0),
    {.name = "scheduling_tag_filter", .alias = {"scheduling_tag"}, .kind = PS_ATTR_OPT_STRING,
     .offset = TOFF(scheduling_tag_filter), .check = ps_attr_check_filter},
};

static const struct ps_attr_table tree_options_table = {
    .what = "per-tree scheduling options",
    .attrs = tree_option_attrs,
    .count = (int)(sizeof tree_option_attrs / sizeof tree_option_attrs[0]),
    .size = sizeof(struct ps_op_tree_options),
    .init = tree_options_init,
};

static void tree_options_release(struct ps_op_tree_options *o)
{
    ps_attr_release(&tree_options_table, o);
    free(o->tree);
    o->tree = NULL;
}

/* ---- the spec ---------------------------------------------------------------------------- */

static int spec_init(void *obj)
{
    return ps_operation_spec_init(obj);
}

static const char *const preemption_mode_names[] = {"normal", "graceful"};

/* PS_ATTR_RUNTIME: the keys update_op_parameters may change (with
 * scheduling_options_per_pool_tree). */
/* job_proxy_memory_digest: the three values of the job proxy's digest a spec may change; the
 * relations (lower <= default <= upper) are the digest's (ps_log_digest_config_validate). */
#define JP(field) offsetof(struct ps_job_proxy_memory_digest_spec, field)
static int job_proxy_digest_init(void *obj)
{
    memset(obj, 0, sizeof(struct ps_job_proxy_memory_digest_spec));
    return 0;
}

static const struct ps_attr job_proxy_digest_attrs[] = {
    {.name = "default_value", .kind = PS_ATTR_OPT_DOUBLE, .offset = JP(default_value), .min = 0,
     .max = 1e6, .flags = PS_ATTR_MIN_OPEN},
    {.name = "lower_bound", .kind = PS_ATTR_OPT_DOUBLE, .offset = JP(lower_bound), .min = 0,
     .max = 1e6, .flags = PS_ATTR_MIN_OPEN},
    {.name = "upper_bound", .kind = PS_ATTR_OPT_DOUBLE, .offset = JP(upper_bound), .min = 0,
     .max = 1e6, .flags = PS_ATTR_MIN_OPEN},
};
#undef JP

static const struct ps_attr_table job_proxy_digest_table = {
    .what = "job_proxy_memory_digest",
    .attrs = job_proxy_digest_attrs,
    .count = (int)(sizeof job_proxy_digest_attrs / sizeof job_proxy_digest_attrs[0]),
    .size = sizeof(struct ps_job_proxy_memory_digest_spec),
    .init = job_proxy_digest_init,
};

static const struct ps_attr spec_attrs[] = {
    {.name = "pool", .kind = PS_ATTR_OPT_STRING, .offset = OFF(pool),
     .flags = PS_ATTR_NONEMPTY | PS_ATTR_RUNTIME},
    PS_ATTR_WEIGHT(OFF(weight), PS_ATTR_RUNTIME),
    PS_ATTR_MAX_SHARE_RATIO(OFF(max_share_ratio), PS_ATTR_RUNTIME),
    PS_ATTR_RESOURCE_LIMITS(OFF(resource_limits), PS_ATTR_RUNTIME),
    {.name = "scheduling_tag_filter", .alias = {"scheduling_tag"}, .kind = PS_ATTR_STRING,
     .offset = OFF(scheduling_tag_filter), .check = ps_attr_check_filter,
     .flags = PS_ATTR_RUNTIME},
    {.name = "pool_trees", .kind = PS_ATTR_STRING_LIST, .offset = OFF(pool_trees)},
    {.name = "acl", .kind = PS_ATTR_ACL, .offset = OFF(acl), .flags = PS_ATTR_RUNTIME},
    {.name = "owners", .kind = PS_ATTR_STRING_LIST, .offset = OFF(owners)},
    {.name = "schedule_in_single_tree", .kind = PS_ATTR_BOOL, .offset = OFF(schedule_in_single_tree)},
    {.name = "consider_guarantees_for_single_tree", .kind = PS_ATTR_BOOL,
     .offset = OFF(consider_guarantees_for_single_tree)},
    {.name = "erase_trees_with_pool_limit_violations", .kind = PS_ATTR_BOOL,
     .offset = OFF(erase_trees_with_pool_limit_violations)},
    {.name = "tentative_pool_trees", .kind = PS_ATTR_STRING_LIST,
     .offset = OFF(tentative_pool_trees)},
    {.name = "use_default_tentative_pool_trees", .kind = PS_ATTR_BOOL,
     .offset = OFF(use_default_tentative_pool_trees)},
    {.name = "tentative_tree_eligibility", .kind = PS_ATTR_GROUP,
     .offset = OFF(tentative_tree_eligibility), .group = &ps_tentative_eligibility_table,
     .presence_offset = -1, .flags = PS_ATTR_SKIP_UNKNOWN},
    {.name = "is_gang", .kind = PS_ATTR_BOOL, .offset = OFF(is_gang)},
    {.name = "apply_specified_resource_limits_to_demand", .kind = PS_ATTR_BOOL,
     .offset = OFF(apply_specified_resource_limits_to_demand)},
    {.name = "enable_limiting_ancestor_check", .kind = PS_ATTR_BOOL,
     .offset = OFF(enable_limiting_ancestor_check)},
    {.name = "custom_profiling_tag", .kind = PS_ATTR_OPT_STRING, .offset = OFF(custom_profiling_tag)},
    PS_ATTR_STARVATION_TIMEOUT(PS_ATTR_OPT_INT, OFF(fair_share_starvation_timeout_ms), 0),
    PS_ATTR_STARVATION_TOLERANCE(PS_ATTR_OPT_DOUBLE, OFF(fair_share_starvation_tolerance), 0),
    {.name = "non_preemptible_resource_usage_threshold", .kind = PS_ATTR_RESOURCES,
     .offset = OFF(non_preemptible_resource_usage_threshold)},
    /* upstream's TSchedulableConfig key; recognised and kept, no guarantee (op_spec.h) */
    {.name = "strong_guarantee_resources", .alias = {"min_share_resources"},
     .kind = PS_ATTR_RESOURCES, .offset = OFF(strong_guarantee_resources)},
    {.name = "preemption_mode", .kind = PS_ATTR_ENUM, .offset = OFF(preemption_mode),
     .enum_names = preemption_mode_names, .enum_count = 2},
    {.name = "max_unpreemptible_allocation_count",
     .alias = {"max_unpreemptible_job_count", "max_unpreemptable_job_count"},
     .kind = PS_ATTR_OPT_INT, .offset = OFF(max_unpreemptible_allocation_count), .min = 0,
     .max = HUGE_MAX},
    {.name = "user_job_memory_digest_default_value", .kind = PS_ATTR_OPT_DOUBLE,
     .offset = OFF(user_job_memory_digest_default_value), .min = 0, .max = 1,
     .flags = PS_ATTR_MIN_OPEN},
    {.name = "user_job_memory_digest_lower_bound", .kind = PS_ATTR_OPT_DOUBLE,
     .offset = OFF(user_job_memory_digest_lower_bound), .min = 0, .max = 1,
     .flags = PS_ATTR_MIN_OPEN},
    {.name = "memory_reserve_factor", .kind = PS_ATTR_OPT_DOUBLE,
     .offset = OFF(memory_reserve_factor), .min = 0, .max = 1, .flags = PS_ATTR_MIN_OPEN},
    {.name = "max_failed_job_count", .kind = PS_ATTR_OPT_INT, .offset = OFF(max_failed_job_count),
     .min = 0, .max = PS_MAX_FAILED_JOB_COUNT},
    {.name = "waiting_job_timeout", .kind = PS_ATTR_OPT_INT, .offset = OFF(waiting_job_timeout_ms),
     .min = 10000, .max = 600000},
    {.name = "ban_nodes_with_failed_jobs", .kind = PS_ATTR_BOOL,
     .offset = OFF(ban_nodes_with_failed_jobs)},
    {.name = "ignore_job_failures_at_banned_nodes", .kind = PS_ATTR_BOOL,
     .offset = OFF(ignore_job_failures_at_banned_nodes)},
    {.name = "fail_on_all_nodes_banned", .kind = PS_ATTR_BOOL,
     .offset = OFF(fail_on_all_nodes_banned)},
    {.name = "job_proxy_memory_digest", .kind = PS_ATTR_GROUP,
     .offset = OFF(job_proxy_memory_digest), .group = &job_proxy_digest_table,
     .presence_offset = -1, .flags = PS_ATTR_SKIP_UNKNOWN},
    /* Unknown keys inside are reported with the spec's (ps_operation_spec_unrecognized). */
    {.name = "job_cpu_monitor", .kind = PS_ATTR_GROUP, .offset = OFF(job_cpu_monitor),
     .group = &ps_cpu_monitor_config_table, .presence_offset = -1,
     .flags = PS_ATTR_SKIP_UNKNOWN},
};

/* Top-level keys read outside the table: the per-tree options (below) and the vanilla
 * controller's tasks (server/service.c); then upstream's TOperationSpecBase keys that are kept
 * in the spec (provided_spec, brief_spec's title) with no effect on scheduling, so that they
 * raise no unrecognized_spec alert (the Python client always sends title and started_by). */
static const char *const other_keys[] = {"scheduling_options_per_pool_tree",
                                         "fair_share_options_per_pool_tree", "tasks", "title",
                                         "started_by", "annotations", "description", NULL};

const struct ps_attr_table ps_operation_spec_table = {
    .what = "operation spec",
    .attrs = spec_attrs,
    .count = (int)(sizeof spec_attrs / sizeof spec_attrs[0]),
    .size = sizeof(struct ps_operation_spec),
    .init = spec_init,
};

int ps_operation_spec_init(struct ps_operation_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->enable_limiting_ancestor_check = true;
    spec->fail_on_all_nodes_banned = true;
    ps_cpu_monitor_config_init(&spec->job_cpu_monitor);
    ps_tentative_eligibility_init(&spec->tentative_tree_eligibility);
    spec->scheduling_tag_filter = strdup("");
    return spec->scheduling_tag_filter ? 0 : PS_ENOMEM;
}

static void per_tree_release(struct ps_op_tree_options *items, int count)
{
    for (int i = 0; i < count; i++)
        tree_options_release(&items[i]);
    free(items);
}

void ps_operation_spec_release(struct ps_operation_spec *spec)
{
    if (!spec)
        return;
    ps_attr_release(&ps_operation_spec_table, spec);
    per_tree_release(spec->per_tree, spec->per_tree_count);
    spec->per_tree = NULL;
    spec->per_tree_count = 0;
}

static int per_tree_copy(struct ps_op_tree_options **dst, const struct ps_op_tree_options *src, int count)
{
    *dst = NULL;
    if (count == 0)
        return 0;
    struct ps_op_tree_options *items = calloc((size_t)count, sizeof *items);
    if (!items)
        return PS_ENOMEM;
    for (int i = 0; i < count; i++) {
        int rc = ps_attr_copy(&tree_options_table, &items[i], &src[i]);
        if (rc == 0) {
            items[i].tree = strdup(src[i].tree);
            if (!items[i].tree) {
                ps_attr_release(&tree_options_table, &items[i]);
                rc = PS_ENOMEM;
            }
        }
        if (rc != 0) {
            per_tree_release(items, i);
            return rc;
        }
    }
    *dst = items;
    return 0;
}

int ps_operation_spec_copy(struct ps_operation_spec *dst, const struct ps_operation_spec *src)
{
    int rc = ps_attr_copy(&ps_operation_spec_table, dst, src);
    if (rc == 0) {
        rc = per_tree_copy(&dst->per_tree, src->per_tree, src->per_tree_count);
        if (rc != 0)
            ps_attr_release(&ps_operation_spec_table, dst);
    }
    if (rc != 0) {
        memset(dst, 0, sizeof *dst);   /* nothing owned, safe to release */
        return rc;
    }
    dst->per_tree_count = src->per_tree_count;
    return 0;
}

static struct ps_op_tree_options *find_options(struct ps_operation_spec *spec, const char *tree)
{
    for (int i = 0; i < spec->per_tree_count; i++)
        if (strcmp(spec->per_tree[i].tree, tree) == 0)
            return &spec->per_tree[i];
    return NULL;
}

static int apply_per_tree(struct ps_operation_spec *spec, const struct ps_value *map, struct ps_error *err)
{
    const char *key = "scheduling_options_per_pool_tree";
    if (map->type != PS_VALUE_MAP)
        return ps_error_set(err, PS_EINVAL, "%s: must be a map from pool tree names to options, got a %s",
                            key, ps_value_type_name(map->type));
    for (int i = 0; i < map->count; i++) {
        const char *tree = map->keys[i];
        struct ps_op_tree_options fresh;
        tree_options_init(&fresh);
        int rc = ps_attr_apply(&tree_options_table, &fresh, &map->items[i], true, err);
        if (rc != 0) {
            ps_error_prefix(err, "%s/%s", key, tree);
            return rc;
        }
        struct ps_op_tree_options *slot = find_options(spec, tree);
        if (!slot) {
            struct ps_op_tree_options *grown =
                realloc(spec->per_tree, (size_t)(spec->per_tree_count + 1) * sizeof *grown);
            char *name = strdup(tree);
            if (!grown || !name) {
                free(name);
                if (grown)
                    spec->per_tree = grown;
                ps_attr_release(&tree_options_table, &fresh);
                return ps_error_set(err, PS_ENOMEM, "out of memory");
            }
            spec->per_tree = grown;
            slot = &spec->per_tree[spec->per_tree_count++];
            memset(slot, 0, sizeof *slot);
            slot->tree = name;
        }
        char *name = slot->tree;
        ps_attr_release(&tree_options_table, slot);
        *slot = fresh;
        slot->tree = name;
    }
    return 0;
}

int ps_operation_spec_apply(struct ps_operation_spec *spec, const struct ps_value *map,
                            struct ps_error *err)
{
    if (!map)
        return 0;
    if (map->type != PS_VALUE_MAP)
        return ps_error_set(err, PS_EINVAL, "operation spec: must be a map, got a %s",
                            ps_value_type_name(map->type));
    struct ps_operation_spec copy;
    if (ps_operation_spec_copy(&copy, spec) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_attr_apply(&ps_operation_spec_table, &copy, map, true, err);
    const struct ps_value *per_tree = ps_value_find(map, "scheduling_options_per_pool_tree");
    const struct ps_value *per_tree_alias = ps_value_find(map, "fair_share_options_per_pool_tree");
    if (rc == 0 && per_tree && per_tree_alias)
        rc = ps_error_set(err, PS_EINVAL,
                          "scheduling_options_per_pool_tree and fair_share_options_per_pool_tree: "
                          "aliases of one key (scheduling_options_per_pool_tree), give only one");
    if (!per_tree)
        per_tree = per_tree_alias;
    if (rc == 0 && per_tree)
        rc = apply_per_tree(&copy, per_tree, err);
    const struct ps_value *cpu_monitor = ps_value_find(map, "job_cpu_monitor");
    if (cpu_monitor && cpu_monitor->type != PS_VALUE_NULL)
        copy.has_job_cpu_monitor = true;
    if (rc == 0 && cpu_monitor)
        rc = ps_cpu_monitor_config_validate(&copy.job_cpu_monitor, err);
    if (rc != 0) {
        ps_operation_spec_release(&copy);
        return rc;
    }
    ps_operation_spec_release(spec);
    *spec = copy;
    return 0;
}

int ps_operation_spec_to_value(const struct ps_operation_spec *spec, struct ps_value *out)
{
    int rc = ps_attr_to_value(&ps_operation_spec_table, spec, out);
    if (rc != 0)
        return rc;
    struct ps_value per_tree = ps_value_map();
    for (int i = 0; rc == 0 && i < spec->per_tree_count; i++) {
        struct ps_value options;
        rc = ps_attr_to_value(&tree_options_table, &spec->per_tree[i], &options);
        if (rc == 0)
            rc = ps_value_put(&per_tree, spec->per_tree[i].tree, &options);
    }
    if (rc == 0)
        rc = ps_value_put(out, "scheduling_options_per_pool_tree", &per_tree);
    if (rc != 0) {
        ps_value_release(&per_tree);
        ps_value_release(out);
        return rc;
    }
    return 0;
}

int ps_operation_spec_unrecognized(const struct ps_value *map, struct ps_value *out)
{
    int rc = ps_attr_unrecognized(&ps_operation_spec_table, map, other_keys, out);
    for (int k = 0; rc == 0 && k < 2; k++) {
        const char *key = other_keys[k];
        const struct ps_value *per_tree = ps_value_find(map, key);
        if (!per_tree || per_tree->type != PS_VALUE_MAP)
            continue;
        struct ps_value trees = ps_value_map();
        for (int i = 0; rc == 0 && i < per_tree->count; i++) {
            struct ps_value sub;
            rc = ps_attr_unrecognized(&tree_options_table, &per_tree->items[i], NULL, &sub);
            if (rc == 0 && sub.count > 0)
                rc = ps_value_put(&trees, per_tree->keys[i], &sub);
            else
                ps_value_release(&sub);
        }
        if (rc == 0 && trees.count > 0)
            rc = ps_value_put(out, key, &trees);
        else
            ps_value_release(&trees);
    }
    if (rc != 0)
        ps_value_release(out);
    return rc;
}

int ps_operation_spec_check_runtime(const struct ps_value *params, struct ps_error *err)
{
    if (!params || params->type != PS_VALUE_MAP)
        return ps_error_set(err, PS_EINVAL, "parameters: must be a map");
    for (int i = 0; i < params->count; i++) {
        const char *key = params->keys[i];
        if (strcmp(key, other_keys[0]) == 0 || strcmp(key, other_keys[1]) == 0)
            continue;
        const struct ps_attr *a = ps_attr_find(&ps_operation_spec_table, key);
        if (a && (a->flags & PS_ATTR_RUNTIME))
            continue;
        char known[256] = "";
        for (int j = 0; j < ps_operation_spec_table.count; j++)
            if (spec_attrs[j].flags & PS_ATTR_RUNTIME)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s, ",
                         spec_attrs[j].name);
        return ps_error_set(err, PS_EINVAL, "parameters/%s: %s (runtime parameters: %s%s)", key,
                            a ? "cannot be changed while the operation runs"
                              : "unknown runtime parameter",
                            known, other_keys[0]);
    }
    return 0;
}

const struct ps_op_tree_options *ps_operation_spec_tree_options(const struct ps_operation_spec *spec,
                                                                const char *tree)
{
    return find_options((struct ps_operation_spec *)spec, tree);
}

void ps_operation_spec_settings(const struct ps_operation_spec *spec, const char *tree,
                                struct ps_tree_op_settings *out)
{
    memset(out, 0, sizeof *out);
    const struct ps_op_tree_options *o = tree ? ps_operation_spec_tree_options(spec, tree) : NULL;
    out->pool = o && o->pool ? o->pool : spec->pool;
    out->weight = o && o->weight.set ? o->weight : spec->weight;
    out->max_share_ratio = o && o->max_share_ratio.set ? o->max_share_ratio : spec->max_share_ratio;
    out->resource_limits = spec->resource_limits;
    if (o) {
        for (int r = 0; r < PS_RES_COUNT; r++) {
            if (o->resource_limits.set & (1u << r)) {
                out->resource_limits.r.v[r] = o->resource_limits.r.v[r];
                out->resource_limits.set |= 1u << r;
            }
        }
    }
    out->scheduling_tag_filter = o && o->scheduling_tag_filter ? o->scheduling_tag_filter
                                                               : spec->scheduling_tag_filter;
    out->is_gang = spec->is_gang;
    out->apply_specified_resource_limits_to_demand = spec->apply_specified_resource_limits_to_demand;
    out->fair_share_starvation_timeout_ms = spec->fair_share_starvation_timeout_ms;
    out->fair_share_starvation_tolerance = spec->fair_share_starvation_tolerance;
    out->non_preemptible_resource_usage_threshold = spec->non_preemptible_resource_usage_threshold;
    out->max_unpreemptible_allocation_count = spec->max_unpreemptible_allocation_count;
    out->strong_guarantee_resources = spec->strong_guarantee_resources;
}

void ps_operation_spec_preempt_settings(const struct ps_operation_spec *spec, bool *graceful,
                                        int *max_unpreemptible)
{
    const struct ps_opt_int *max = &spec->max_unpreemptible_allocation_count;
    *graceful = spec->preemption_mode == PS_PREEMPTION_MODE_GRACEFUL;
    *max_unpreemptible = !max->set ? -1 : max->value > INT32_MAX ? INT32_MAX : (int)max->value;
}

int64_t ps_operation_spec_waiting_job_timeout(const struct ps_operation_spec *spec,
                                              const struct ps_opt_int *tree_timeout)
{
    int64_t out = spec->waiting_job_timeout_ms.set ? spec->waiting_job_timeout_ms.value : -1;
    if (tree_timeout->set && tree_timeout->value > out)
        out = tree_timeout->value;
    return out;
}
