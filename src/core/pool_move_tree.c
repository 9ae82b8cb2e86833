/* pool_move_tree.c — a pool's move to another tree (pool_tree.h): its subtree's explicit
 * attributes become a pools document for the destination (ps_pool_tree_create_pools, atomic),
 * then the subtree leaves the source bottom-up. */
#include <stdlib.h>
#include <string.h>

#include "core/pool_config.h"
#include "core/pool_tree.h"

static bool in_subtree(const struct ps_pool *p, const struct ps_pool *top)
{
    for (; p; p = p->parent)
        if (p == top)
            return true;
    return false;
}

/* The pool's entry of the document: its explicit attributes (unset ones left out), name and
 * parent. */
static int pool_entry(const struct ps_pool *p, const char *name, const char *parent,
                      struct ps_value *list)
{
    struct ps_value cfg = ps_value_null(), entry = ps_value_map();
    int rc = ps_pool_config_to_value(ps_pool_explicit_config(p), &cfg);
    for (int i = 0; rc == 0 && i < cfg.count; i++) {
        if (cfg.items[i].type == PS_VALUE_NULL || strcmp(cfg.keys[i], "name") == 0 ||
            strcmp(cfg.keys[i], "parent") == 0)
            continue;
        struct ps_value v;
        rc = ps_value_copy(&v, &cfg.items[i]);
        if (rc == 0)
            rc = ps_value_put(&entry, cfg.keys[i], &v);
    }
    if (rc == 0)
        rc = ps_value_put_string(&entry, "name", name);
    if (rc == 0)
        rc = ps_value_put_string(&entry, "parent", parent);
    if (rc == 0)
        rc = ps_value_append(list, &entry);
    ps_value_release(&cfg);
    ps_value_release(&entry);
    return rc;
}

/* Removes the subtree of top from its tree, leaves first. */
static int remove_subtree(struct ps_pool_tree *tree, struct ps_pool *top, struct ps_error *err)
{
    for (;;) {
        struct ps_pool *leaf = NULL;
        for (int i = 0; !leaf && i < ps_pool_tree_pool_count(tree); i++) {
            struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
            if (p->child_pool_count == 0 && in_subtree(p, top))
                leaf = p;
        }
        if (!leaf)
            return 0;
        bool last = leaf == top;
        char *name = strdup(leaf->name);
        int rc = name ? ps_pool_tree_remove_pool(tree, name, err)
                      : ps_error_set(err, PS_ENOMEM, "out of memory");
        free(name);
        if (rc != 0 || last)
            return rc;
    }
}

int ps_pool_tree_move_pool_to_tree(struct ps_pool_tree *src, const char *name,
                                   struct ps_pool_tree *dst, const char *new_parent,
                                   const char *new_name, struct ps_error *err)
{
    struct ps_pool *top = ps_pool_tree_find_pool(src, name);
    if (!top)
        return ps_error_set(err, PS_ENOENT, "pool \"%s\" does not exist in pool tree \"%s\"",
                            name, ps_pool_tree_name(src));
    if (top->is_root || top->ephemeral)
        return ps_error_set(err, PS_EINVAL, "pool \"%s\": %s pools cannot be moved", name,
                            top->is_root ? "root" : "ephemeral");
    if (top->operation_count > 0)
        return ps_error_set(err, PS_ESTATE, "pool \"%s\" cannot be moved to pool tree \"%s\": "
                            "%d operations run in its subtree", name, ps_pool_tree_name(dst),
                            top->operation_count);
    struct ps_value doc = ps_value_list();
    int rc = 0;
    for (int i = 0; rc == 0 && i < ps_pool_tree_pool_count(src); i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(src, i);
        if (!in_subtree(p, top))
            continue;
        rc = p == top ? pool_entry(p, new_name, new_parent ? new_parent : "<Root>", &doc)
                      : pool_entry(p, p->name, p->parent == top ? new_name : p->parent->name,
                                   &doc);
    }
    if (rc != 0)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0)
        rc = ps_pool_tree_create_pools(dst, &doc, err);
    ps_value_release(&doc);
    if (rc == 0)
        rc = remove_subtree(src, top, err);
    return rc;
}
