#include "core/offloading.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr_common.h"

#include "core/pool_config.h"
#include "core/user_pools.h"

#define OFF(field) offsetof(struct ps_offloading_pool_settings, field)

static int settings_init(void *obj)
{
    memset(obj, 0, sizeof(struct ps_offloading_pool_settings));
    return 0;
}

static const struct ps_attr settings_attrs[] = {
    {.name = "pool", .kind = PS_ATTR_OPT_STRING, .offset = OFF(pool)},
    PS_ATTR_WEIGHT(OFF(weight), 0),
    PS_ATTR_RESOURCE_LIMITS(OFF(resource_limits), 0),
    {.name = "tentative", .kind = PS_ATTR_BOOL, .offset = OFF(tentative)},
};

static const struct ps_attr_table settings_table = {
    .what = "offloading pool settings",
    .attrs = settings_attrs,
    .count = (int)(sizeof settings_attrs / sizeof settings_attrs[0]),
    .size = sizeof(struct ps_offloading_pool_settings),
    .init = settings_init,
};

/* One entry parsed into *out (released by the caller on success). */
static int parse_entry(const char *tree, const struct ps_value *entry,
                       struct ps_offloading_pool_settings *out, struct ps_error *err)
{
    settings_init(out);
    int rc = ps_pool_name_check("offloading_settings", tree, err);
    if (rc == 0 && entry->type != PS_VALUE_MAP)
        rc = ps_error_set(err, PS_EINVAL, "must be a map of pool, weight, resource_limits and "
                          "tentative, got a %s", ps_value_type_name(entry->type));
    if (rc == 0)
        rc = ps_attr_apply(&settings_table, out, entry, false, err);
    if (rc == 0 && out->pool && out->pool[0] != '\0')
        rc = ps_pool_name_check("pool", out->pool, err);
    if (rc != 0) {
        ps_attr_release(&settings_table, out);
        ps_error_prefix(err, "offloading_settings/%s", tree);
    }
    return rc;
}

int ps_offloading_settings_check(const struct ps_value *settings, struct ps_error *err)
{
    if (settings->type == PS_VALUE_NULL)
        return 0;
    if (settings->type != PS_VALUE_MAP)
        return ps_error_set(err, PS_EINVAL,
                            "offloading_settings: must be a map from pool tree names to settings, "
                            "got a %s", ps_value_type_name(settings->type));
    for (int i = 0; i < settings->count; i++) {
        struct ps_offloading_pool_settings s;
        int rc = parse_entry(settings->keys[i], &settings->items[i], &s, err);
        if (rc != 0)
            return rc;
        ps_attr_release(&settings_table, &s);
    }
    return 0;
}

const struct ps_value *ps_pool_tree_offloading_settings(const struct ps_pool_tree *tree,
                                                        const char *pool_name, const char *user)
{
    const struct ps_pool *pool = pool_name ? ps_pool_tree_find_pool(tree, pool_name) : NULL;
    if (!pool)
        pool = ps_pool_tree_default_parent_for(tree, user);
    for (; pool && !pool->is_root; pool = pool->parent) {
        const struct ps_value *s = &pool->config.offloading_settings;
        if (s->type == PS_VALUE_MAP && s->count > 0)
            return s;
    }
    return NULL;
}

static bool listed(struct ps_pool_tree *const *trees, int count, const struct ps_pool_tree *tree)
{
    for (int i = 0; i < count; i++)
        if (trees[i] == tree)
            return true;
    return false;
}

/* {pool, weight?, resource_limits?}: the scheduling options of an offload tree. */
static int options_value(const struct ps_offloading_pool_settings *s, const char *specified,
                         struct ps_value *out)
{
    *out = ps_value_map();
    struct ps_value v = ps_value_string(s->pool && s->pool[0] ? s->pool : specified);
    int rc = ps_value_put(out, "pool", &v);
    if (rc == 0 && s->weight.set) {
        v = ps_value_number(s->weight.value);
        rc = ps_value_put(out, "weight", &v);
    }
    if (rc == 0 && s->resource_limits.set) {
        struct ps_value limits = ps_value_map();
        for (int r = 0; rc == 0 && r < PS_RES_COUNT; r++) {
            if (!(s->resource_limits.set & (1u << r)))
                continue;
            v = ps_value_number(ps_res_get(&s->resource_limits.r, r));
            rc = ps_value_put(&limits, ps_resource_name(r), &v);
        }
        if (rc == 0)
            rc = ps_value_put(out, "resource_limits", &limits);
        else
            ps_value_release(&limits);
    }
    return rc;
}

int ps_offloading_add_trees(struct ps_operation_spec *spec, const char *user,
                            struct ps_pool_tree **trees, int *count,
                            struct ps_pool_tree *(*find_tree)(void *ctx, const char *name),
                            void *ctx, struct ps_error *err)
{
    if (spec->scheduling_tag_filter && spec->scheduling_tag_filter[0] != '\0')
        return 0;   /* upstream ignores offloading for operations with a filter */
    struct ps_value options = ps_value_map();
    int rc = 0, first = *count;
    for (int t = 0; rc == 0 && t < first; t++) {
        struct ps_tree_op_settings own;
        ps_operation_spec_settings(spec, ps_pool_tree_name(trees[t]), &own);
        const char *specified = own.pool ? own.pool : user;
        const struct ps_value *settings = ps_pool_tree_offloading_settings(trees[t], specified, user);
        for (int i = 0; rc == 0 && settings && i < settings->count; i++) {
            struct ps_pool_tree *target = find_tree(ctx, settings->keys[i]);
            if (!target || listed(trees, *count, target))
                continue;
            struct ps_offloading_pool_settings s;
            if ((rc = parse_entry(settings->keys[i], &settings->items[i], &s, err)) != 0)
                break;
            struct ps_value v;
            rc = options_value(&s, specified, &v);
            if (rc != 0)
                ps_value_release(&v);
            else
                rc = ps_value_put(&options, settings->keys[i], &v);
            ps_attr_release(&settings_table, &s);
            if (rc == 0)
                trees[(*count)++] = target;
            else
                rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        }
    }
    if (rc == 0 && *count > first) {
        /* pool_trees become every tree; the offload trees get their options */
        struct ps_value doc = ps_value_map(), names = ps_value_list();
        for (int t = 0; rc == 0 && t < *count; t++) {
            struct ps_value name = ps_value_string(ps_pool_tree_name(trees[t]));
            rc = ps_value_append(&names, &name);
        }
        if (rc == 0)
            rc = ps_value_put(&doc, "pool_trees", &names);
        else
            ps_value_release(&names);
        if (rc == 0) {
            rc = ps_value_put(&doc, "scheduling_options_per_pool_tree", &options);
            options = ps_value_map();
        }
        rc = rc == 0 ? ps_operation_spec_apply(spec, &doc, err)
                     : ps_error_set(err, PS_ENOMEM, "out of memory");
        ps_value_release(&doc);
    }
    ps_value_release(&options);
    return rc;
}
