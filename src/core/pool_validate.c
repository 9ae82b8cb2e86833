/* pool_validate.c — the tree rules of pool_tree.h, checked on a prospective change.
 *
 * A change to one pool (its config or its parent) can only break rules between the pool and
 * its parent, and between the pool and its children; so both relations are checked, with the
 * pool's prospective config and parent standing in for the current ones. Nothing is modified.
 */
#include <stdio.h>
#include <string.h>

#include "core/pool_tree_impl.h"

enum guarantee_kind { KIND_STRONG, KIND_BURST, KIND_FLOW, KIND_COUNT };

static const char *const kind_keys[KIND_COUNT] = {
    "strong_guarantee_resources",
    "integral_guarantees/burst_guarantee_resources",
    "integral_guarantees/resource_flow",
};

static const struct ps_resources_opt *guarantee(const struct ps_pool_config *cfg, int kind)
{
    switch (kind) {
    case KIND_STRONG: return &cfg->strong_guarantee_resources;
    case KIND_BURST: return &cfg->integral_guarantees.burst_guarantee_resources;
    default: return &cfg->integral_guarantees.resource_flow;
    }
}

static bool has(const struct ps_resources_opt *r, int resource)
{
    return (r->set & (1u << resource)) != 0;
}

static bool has_integral_resources(const struct ps_pool_config *cfg)
{
    return cfg->integral_guarantees.burst_guarantee_resources.set != 0 ||
           cfg->integral_guarantees.resource_flow.set != 0;
}

/* A resource amount in natural units: cpu with up to 2 decimals, others as integers. */
static const char *amount(int resource, int64_t value, char *buf, size_t size)
{
    if (resource != PS_RES_CPU) {
        snprintf(buf, size, "%lld", (long long)value);
        return buf;
    }
    long long whole = (long long)(value / PS_CPU_SCALE), frac = (long long)(value % PS_CPU_SCALE);
    if (frac == 0)
        snprintf(buf, size, "%lld", whole);
    else if (frac % 10 == 0)
        snprintf(buf, size, "%lld.%lld", whole, frac / 10);
    else
        snprintf(buf, size, "%lld.%02lld", whole, frac);
    return buf;
}

static const char *mode_name(int mode)
{
    return mode == PS_MODE_FIFO ? "fifo" : "fair_share";
}

static const char *guarantee_type_name(int type)
{
    return type == PS_GUARANTEE_BURST ? "burst" : type == PS_GUARANTEE_RELAXED ? "relaxed" : "none";
}

/* The pool's guarantees against its (prospective) parent and siblings. */
static int check_against_parent(const struct ps_pool_tree *tree, const struct ps_pool *self,
                                const char *name, const struct ps_pool_config *cfg,
                                const struct ps_pool *parent, struct ps_error *err)
{
    if (!parent || parent->is_root)
        return 0;   /* upstream does not check the root's children */
    if (parent->config.mode == PS_MODE_FIFO)
        return ps_error_set(err, PS_EINVAL,
                            "pool \"%s\": its parent pool \"%s\" is in fifo mode and cannot have "
                            "child pools", name, parent->name);
    if (parent->config.integral_guarantees.guarantee_type != PS_GUARANTEE_NONE &&
        has_integral_resources(cfg))
        return ps_error_set(err, PS_EINVAL,
                            "pool \"%s\": integral_guarantees: its parent pool \"%s\" is an "
                            "integral pool (guarantee_type %s), so its children cannot have "
                            "burst_guarantee_resources or resource_flow",
                            name, parent->name,
                            guarantee_type_name(parent->config.integral_guarantees.guarantee_type));
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        const struct ps_resources_opt *mine = guarantee(cfg, kind);
        const struct ps_resources_opt *theirs = guarantee(&parent->config, kind);
        for (int r = 0; r < PS_RES_COUNT; r++) {
            if (!has(mine, r))
                continue;
            if (!has(theirs, r))
                return ps_error_set(err, PS_EINVAL,
                                    "pool \"%s\": %s/%s is set but its parent pool \"%s\" does "
                                    "not set it", name, kind_keys[kind], ps_resource_name(r),
                                    parent->name);
            int64_t sum = mine->r.v[r];
            for (int i = 0; i < tree->pool_count; i++) {
                const struct ps_pool *sibling = tree->pools[i];
                if (sibling->parent == parent && sibling != self)
                    sum += guarantee(&sibling->config, kind)->r.v[r];
            }
            if (sum > theirs->r.v[r]) {
                char a[40], b[40], c[40];
                return ps_error_set(err, PS_EINVAL,
                                    "pool \"%s\": %s/%s: %s would make the children of pool "
                                    "\"%s\" guarantee %s in total, more than its own %s",
                                    name, kind_keys[kind], ps_resource_name(r),
                                    amount(r, mine->r.v[r], a, sizeof a), parent->name,
                                    amount(r, sum, b, sizeof b),
                                    amount(r, theirs->r.v[r], c, sizeof c));
            }
        }
    }
    return 0;
}

/* An existing pool's prospective config against its current children. */
static int check_against_children(const struct ps_pool_tree *tree, const struct ps_pool *self,
                                  const struct ps_pool_config *cfg, struct ps_error *err)
{
    if (!self || self->is_root || self->child_pool_count == 0)
        return 0;
    if (cfg->mode == PS_MODE_FIFO)
        return ps_error_set(err, PS_EINVAL,
                            "pool \"%s\": mode: a pool with child pools (%d) cannot be in %s mode",
                            self->name, self->child_pool_count, mode_name(cfg->mode));
    for (int i = 0; i < tree->pool_count; i++) {
        const struct ps_pool *child = tree->pools[i];
        if (child->parent == self && cfg->integral_guarantees.guarantee_type != PS_GUARANTEE_NONE &&
            has_integral_resources(&child->config))
            return ps_error_set(err, PS_EINVAL,
                                "pool \"%s\": integral_guarantees/guarantee_type: an integral pool "
                                "cannot have children with integral resources, and child pool "
                                "\"%s\" has some", self->name, child->name);
    }
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        const struct ps_resources_opt *mine = guarantee(cfg, kind);
        for (int r = 0; r < PS_RES_COUNT; r++) {
            int64_t sum = 0;
            const struct ps_pool *first = NULL;
            for (int i = 0; i < tree->pool_count; i++) {
                const struct ps_pool *child = tree->pools[i];
                if (child->parent != self || !has(guarantee(&child->config, kind), r))
                    continue;
                if (!first)
                    first = child;
                sum += guarantee(&child->config, kind)->r.v[r];
            }
            if (!first)
                continue;
            if (!has(mine, r))
                return ps_error_set(err, PS_EINVAL,
                                    "pool \"%s\": %s/%s must stay set because its child pool \"%s\" "
                                    "sets it", self->name, kind_keys[kind], ps_resource_name(r),
                                    first->name);
            if (sum > mine->r.v[r]) {
                char a[40], b[40];
                return ps_error_set(err, PS_EINVAL,
                                    "pool \"%s\": %s/%s: %s is less than the sum of its children's "
                                    "guarantees %s (child pool \"%s\" and others)",
                                    self->name, kind_keys[kind], ps_resource_name(r),
                                    amount(r, mine->r.v[r], a, sizeof a), amount(r, sum, b, sizeof b),
                                    first->name);
            }
        }
    }
    return 0;
}

static int check_main_resource(const char *name, const struct ps_pool_config *cfg, int main_resource,
                               struct ps_error *err)
{
    const struct ps_resources_opt *sg = &cfg->strong_guarantee_resources;
    if (sg->set != 0 && !has(sg, main_resource))
        return ps_error_set(err, PS_EINVAL,
                            "pool \"%s\": strong_guarantee_resources: the main resource %s must be "
                            "set in order to guarantee any other resource",
                            name, ps_resource_name(main_resource));
    return 0;
}

/* Levels below the root of the pool's subtree: 0 for a pool without child pools. */
static int subtree_height(const struct ps_pool_tree *tree, const struct ps_pool *pool)
{
    int height = 0;
    for (int i = 0; pool && i < tree->pool_count; i++) {
        int up = 0;
        const struct ps_pool *a = tree->pools[i];
        for (; a && a != pool; a = a->parent)
            up++;
        if (a && up > height)
            height = up;
    }
    return height;
}

/* Upstream's master keeps a scheduler pool tree at most PS_POOL_TREE_DEPTH_LIMIT levels below
 * the root (TSchedulerPoolTypeHandler::GetDepthLimit, checked when a pool is attached). */
static int check_depth(const struct ps_pool_tree *tree, const struct ps_pool *self, const char *name,
                       const struct ps_pool *parent, struct ps_error *err)
{
    int depth = 1;
    for (const struct ps_pool *a = parent; a && !a->is_root; a = a->parent)
        depth++;
    int deepest = depth + subtree_height(tree, self);
    if (deepest > PS_POOL_TREE_DEPTH_LIMIT)
        return ps_error_set(err, PS_EINVAL,
                            "pool \"%s\": scheduler_pool tree height limit exceeded: under parent "
                            "\"%s\" its subtree would reach depth %d, the limit is %d",
                            name, parent ? parent->name : "<Root>", deepest,
                            PS_POOL_TREE_DEPTH_LIMIT);
    return 0;
}

int ps_tree_validate_pool(const struct ps_pool_tree *tree, const struct ps_pool *pool,
                          const char *name, const struct ps_pool_config *config,
                          const struct ps_pool *parent, struct ps_error *err)
{
    int rc = ps_pool_config_validate(config, err);
    if (rc != 0) {
        ps_error_prefix(err, "pool \"%s\"", name);
        return rc;
    }
    rc = check_main_resource(name, config, tree->config.main_resource, err);
    if (rc == 0)
        rc = check_depth(tree, pool, name, parent, err);
    if (rc == 0)
        rc = check_against_parent(tree, pool, name, config, parent, err);
    if (rc == 0)
        rc = check_against_children(tree, pool, config, err);
    return rc;
}

int ps_tree_validate_main_resource(const struct ps_pool_tree *tree, int main_resource,
                                   struct ps_error *err)
{
    for (int i = 0; i < tree->pool_count; i++) {
        int rc = check_main_resource(tree->pools[i]->name, &tree->pools[i]->config, main_resource, err);
        if (rc != 0) {
            ps_error_prefix(err, "main_resource");
            return rc;
        }
    }
    return 0;
}
