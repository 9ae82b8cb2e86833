/* pool_tree_doc.c — pools from a document: the `pools` list of the scenario and snapshot
 * formats (formats.md sections 2 and 3), so that every parser maps onto the same code. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool_tree_impl.h"

/* "accumulated_resource_volume": {resource: resource x seconds} (state carried by snapshots,
 * not configuration). */
static int parse_volume(int index, const struct ps_value *v, struct ps_volume *out, struct ps_error *err)
{
    const char *key = "accumulated_resource_volume";
    memset(out, 0, sizeof *out);
    if (v->type != PS_VALUE_MAP)
        return ps_error_set(err, PS_EINVAL, "pools[%d]: %s: must be a map of resources, got a %s", index, key,
                            ps_value_type_name(v->type));
    for (int i = 0; i < v->count; i++) {
        int r = ps_resource_from_name(v->keys[i]);
        if (r < 0)
            return ps_error_set(err, PS_EINVAL, "pools[%d]: %s: unknown resource \"%s\"", index, key, v->keys[i]);
        const struct ps_value *x = &v->items[i];
        if (x->type != PS_VALUE_NUMBER || !isfinite(x->number) || x->number < 0)
            return ps_error_set(err, PS_EINVAL, "pools[%d]: %s/%s: must be a non-negative number", index, key,
                                v->keys[i]);
        out->v[r] = x->number;
    }
    return 0;
}

static const char *entry_string(const struct ps_value *entry, const char *key)
{
    const struct ps_value *v = ps_value_find(entry, key);
    return v && v->type == PS_VALUE_STRING ? v->string : NULL;
}

int ps_pool_tree_create_pools(struct ps_pool_tree *tree, const struct ps_value *pools, struct ps_error *err)
{
    if (!pools)
        return 0;
    if (pools->type != PS_VALUE_LIST)
        return ps_error_set(err, PS_EINVAL, "pools: must be a list of pools, got a %s",
                            ps_value_type_name(pools->type));
    for (int i = 0; i < pools->count; i++) {
        const struct ps_value *e = &pools->items[i];
        const struct ps_value *parent = ps_value_find(e, "parent");
        if (e->type != PS_VALUE_MAP)
            return ps_error_set(err, PS_EINVAL, "pools[%d]: must be a map, got a %s", i,
                                ps_value_type_name(e->type));
        if (!entry_string(e, "name"))
            return ps_error_set(err, PS_EINVAL, "pools[%d]: name: must be a string", i);
        if (parent && parent->type != PS_VALUE_STRING)
            return ps_error_set(err, PS_EINVAL, "pools[%d] (\"%s\"): parent: must be a string", i,
                                entry_string(e, "name"));
        const struct ps_value *volume = ps_value_find(e, "accumulated_resource_volume");
        struct ps_volume parsed;
        if (volume && parse_volume(i, volume, &parsed, err) != 0)
            return PS_EINVAL;
    }
    /* Level by level: a pass creates, in list order, the pools whose parent existed before the
     * pass, so that siblings keep their list order even when a child is listed before its
     * parent. */
    char *done = calloc((size_t)(pools->count > 0 ? pools->count : 1), 1);
    struct ps_pool **created = calloc((size_t)(pools->count > 0 ? pools->count : 1), sizeof *created);
    int created_count = 0, remaining = pools->count, rc = 0;
    if (!done || !created)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    while (rc == 0 && remaining > 0) {
        int64_t barrier = tree->next_pool_seq;
        int progress = 0;
        for (int i = 0; rc == 0 && i < pools->count; i++) {
            if (done[i])
                continue;
            const struct ps_value *e = &pools->items[i];
            const char *name = entry_string(e, "name");
            const char *parent_name = entry_string(e, "parent");
            if (parent_name) {
                const struct ps_pool *parent = ps_pool_tree_find_pool(tree, parent_name);
                if (!parent || (!parent->is_root && parent->creation_seq >= barrier))
                    continue;
            }
            static const char *const state_keys[] = {"name", "parent",
                                                     "accumulated_resource_volume", NULL};
            struct ps_value attrs;
            rc = ps_value_map_without(e, state_keys, &attrs);
            if (rc != 0) {
                ps_error_set(err, rc, "out of memory");
                break;
            }
            rc = ps_pool_tree_create_pool(tree, name, parent_name, &attrs, err);
            ps_value_release(&attrs);
            if (rc != 0) {
                ps_error_prefix(err, "pools[%d]", i);
                break;
            }
            struct ps_pool *pool = ps_pool_tree_find_pool(tree, name);
            const struct ps_value *volume = ps_value_find(e, "accumulated_resource_volume");
            if (volume)
                parse_volume(i, volume, &pool->accumulated_volume, NULL);   /* checked above */
            created[created_count++] = pool;
            done[i] = 1;
            remaining--;
            progress++;
        }
        if (rc == 0 && progress == 0) {
            for (int i = 0; i < pools->count; i++) {
                if (!done[i]) {
                    rc = ps_error_set(err, PS_ENOENT,
                                      "pools[%d] (\"%s\"): parent pool \"%s\" is neither in the tree nor "
                                      "in the list (or the parents form a cycle)",
                                      i, entry_string(&pools->items[i], "name"),
                                      entry_string(&pools->items[i], "parent"));
                    break;
                }
            }
        }
    }
    if (rc != 0) {
        /* Undo: the pools created here are empty, children after parents. */
        for (int i = created_count - 1; i >= 0; i--)
            ps_pool_tree_remove_pool(tree, created[i]->name, NULL);
    }
    free(done);
    free(created);
    return rc;
}

int ps_tree_split_pools(const struct ps_value *config, struct ps_value *rest, const struct ps_value **pools)
{
    *pools = NULL;
    *rest = ps_value_null();
    if (!config || config->type != PS_VALUE_MAP)
        return 0;
    *pools = ps_value_find(config, "pools");
    if (!*pools)
        return 0;
    static const char *const pools_key[] = {"pools", NULL};
    return ps_value_map_without(config, pools_key, rest);
}
