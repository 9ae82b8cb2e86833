#include "core/offloading.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/user_pools.h"

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
            rc = ps_offloading_settings_parse(settings->keys[i], &settings->items[i], &s, err);
            if (rc != 0)
                break;
            struct ps_value v;
            rc = options_value(&s, specified, &v);
            if (rc != 0)
                ps_value_release(&v);
            else
                rc = ps_value_put(&options, settings->keys[i], &v);
            ps_offloading_settings_release(&s);
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
