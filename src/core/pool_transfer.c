/* pool_transfer.c — upstream's transfer_pool_resources: guarantees and operation counts move
 * from one pool to another along the tree.
 *
 * The delta leaves every pool from the source up to (not including) the lowest common ancestor
 * of the two, and reaches every pool from the destination up to it, so that each ancestor
 * keeps covering its children: the common ancestor and everything above it stay as they are.
 * A value the source side does not have (unset counts as 0) cannot be taken. The pools change
 * one at a time, each validated against the tree as ps_pool_tree_set_pool_attr validates: the
 * source side from the source up, then the destination side from the top down, the order in
 * which every step stays within its parent when the end state does. A refusal puts back the
 * configs already changed: nothing is half-applied.
 */
#include <stdlib.h>
#include <string.h>

#include "core/pool_config.h"
#include "core/pool_tree_impl.h"

/* The delta, parsed by the pool config's own parsers (names, non-negative numbers). */
struct delta {
    struct ps_resources_opt strong, flow, burst;
    struct ps_opt_int max_operations, max_running;
};

static const char *const delta_keys[] = {"strong_guarantee_resources", "resource_flow",
                                         "burst_guarantee_resources", "max_operation_count",
                                         "max_running_operation_count"};
/* where each delta key lives in a pool's config */
static const char *const config_paths[] = {"strong_guarantee_resources",
                                           "integral_guarantees/resource_flow",
                                           "integral_guarantees/burst_guarantee_resources",
                                           "max_operation_count", "max_running_operation_count"};
#define KEY_COUNT 5
#define MAX_COUNT ((int64_t)1 << 53)   /* the largest integer the attribute parser accepts */

static int parse_delta(const struct ps_value *v, struct delta *d, struct ps_error *err)
{
    memset(d, 0, sizeof *d);
    if (!v || v->type != PS_VALUE_MAP)
        return ps_error_set(err, PS_EINVAL, "resource_delta: must be a map of %s, %s, %s, %s, %s",
                            delta_keys[0], delta_keys[1], delta_keys[2], delta_keys[3],
                            delta_keys[4]);
    struct ps_pool_config scratch;
    if (ps_pool_config_init(&scratch) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = 0;
    for (int i = 0; rc == 0 && i < v->count; i++) {
        int k = 0;
        while (k < KEY_COUNT && strcmp(v->keys[i], delta_keys[k]) != 0)
            k++;
        if (k == KEY_COUNT) {
            rc = ps_error_set(err, PS_EINVAL,
                              "resource_delta: unknown key \"%s\" (expected %s, %s, %s, %s or %s)",
                              v->keys[i], delta_keys[0], delta_keys[1], delta_keys[2],
                              delta_keys[3], delta_keys[4]);
            break;
        }
        if ((rc = ps_pool_config_set(&scratch, config_paths[k], &v->items[i], err)) != 0)
            ps_error_prefix(err, "resource_delta");
    }
    if (rc == 0) {
        d->strong = scratch.strong_guarantee_resources;
        d->flow = scratch.integral_guarantees.resource_flow;
        d->burst = scratch.integral_guarantees.burst_guarantee_resources;
        d->max_operations = scratch.max_operation_count;
        d->max_running = scratch.max_running_operation_count;
    }
    ps_pool_config_release(&scratch);
    return rc;
}

/* *to += sign * by for the resources by sets; false when one would go below 0 or reach the
 * stored infinity (its index in *bad). */
static bool move_resources(struct ps_resources_opt *to, const struct ps_resources_opt *by,
                           int sign, int *bad)
{
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if (!(by->set & (1u << r)))
            continue;
        int64_t have = (to->set & (1u << r)) ? to->r.v[r] : 0;
        int64_t next = have + sign * by->r.v[r];   /* both below PS_RES_INFINITE: no overflow */
        if (next < 0 || next >= PS_RES_INFINITE) {
            *bad = r;
            return false;
        }
        to->r.v[r] = next;
        to->set |= 1u << r;
    }
    return true;
}

static bool move_count(struct ps_opt_int *to, const struct ps_opt_int *by, int sign)
{
    if (!by->set)
        return true;
    int64_t have = to->set ? to->value : 0;
    if (sign > 0 && by->value > MAX_COUNT - have)   /* what a set of the key would take */
        return false;
    int64_t next = have + sign * by->value;
    if (next < 0)
        return false;
    *to = (struct ps_opt_int){true, next};
    return true;
}

/* cfg with the delta moved in (sign 1) or out (sign -1); PS_EINVAL naming what is short. */
static int apply_delta(struct ps_pool_config *cfg, const struct delta *d, int sign,
                       const char *pool, struct ps_error *err)
{
    struct ps_resources_opt *res[3] = {&cfg->strong_guarantee_resources,
                                       &cfg->integral_guarantees.resource_flow,
                                       &cfg->integral_guarantees.burst_guarantee_resources};
    const struct ps_resources_opt *by[3] = {&d->strong, &d->flow, &d->burst};
    for (int k = 0; k < 3; k++) {
        int bad = -1;
        if (!move_resources(res[k], by[k], sign, &bad))
            return ps_error_set(err, PS_EINVAL,
                                sign < 0 ? "pool \"%s\" has less %s/%s than the transfer takes "
                                           "from it"
                                         : "pool \"%s\": %s/%s would be too large",
                                pool, config_paths[k], ps_resource_name(bad));
    }
    struct ps_opt_int *counts[2] = {&cfg->max_operation_count, &cfg->max_running_operation_count};
    const struct ps_opt_int *cby[2] = {&d->max_operations, &d->max_running};
    for (int k = 0; k < 2; k++)
        if (!move_count(counts[k], cby[k], sign))
            return ps_error_set(err, PS_EINVAL,
                                sign < 0 ? "pool \"%s\" has less %s than the transfer takes "
                                           "from it"
                                         : "pool \"%s\": %s would be too large",
                                pool, config_paths[3 + k]);
    return 0;
}

static bool is_ancestor(const struct ps_pool *a, const struct ps_pool *p)
{
    for (; p; p = p->parent)
        if (p == a)
            return true;
    return false;
}

struct step {
    struct ps_pool *pool;
    int sign;
    /* once applied: what the pool had */
    struct ps_pool_config old_explicit, old;
    char *old_issue;
};

static int find(struct ps_pool_tree *tree, const char *which, const char *name,
                struct ps_pool **out, struct ps_error *err)
{
    *out = name ? ps_pool_tree_find_pool(tree, name) : NULL;
    if (!*out)
        return ps_error_set(err, PS_ENOENT, "%s: pool \"%s\" does not exist in pool tree \"%s\"",
                            which, name ? name : "", tree->name);
    if ((*out)->ephemeral)
        return ps_error_set(err, PS_EINVAL,
                            "%s: pool \"%s\" is ephemeral: create it explicitly to configure it",
                            which, name);
    return 0;
}

int ps_pool_tree_transfer_resources(struct ps_pool_tree *tree, const char *source,
                                    const char *destination, const struct ps_value *delta,
                                    struct ps_error *err)
{
    struct ps_pool *src, *dst;
    int rc = find(tree, "source_pool", source, &src, err);
    if (rc == 0)
        rc = find(tree, "destination_pool", destination, &dst, err);
    if (rc != 0)
        return rc;
    if (src == dst)
        return ps_error_set(err, PS_EINVAL,
                            "source_pool and destination_pool must differ (both \"%s\")", source);
    struct delta d;
    if ((rc = parse_delta(delta, &d, err)) != 0)
        return rc;
    int depth = 0;
    for (struct ps_pool *p = src; p; p = p->parent)
        depth++;
    for (struct ps_pool *p = dst; p; p = p->parent)
        depth++;
    struct step *steps = calloc((size_t)depth, sizeof *steps);
    if (!steps)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int n = 0;
    for (struct ps_pool *p = src; !is_ancestor(p, dst); p = p->parent)
        steps[n++] = (struct step){.pool = p, .sign = -1};
    int from = n;
    for (struct ps_pool *p = dst; !is_ancestor(p, src); p = p->parent)
        steps[n++] = (struct step){.pool = p, .sign = 1};
    for (int i = from, j = n - 1; i < j; i++, j--) {   /* the destination side top down */
        struct step t = steps[i];
        steps[i] = steps[j];
        steps[j] = t;
    }
    ps_tree_begin_change(tree);
    int done = 0;
    for (; rc == 0 && done < n; done++) {
        struct step *s = &steps[done];
        /* the delta changes what was set on the pool; its preset keys are none of these */
        struct ps_pool_config next_explicit, next;
        char *issue = NULL;
        if (ps_pool_config_copy(&next_explicit, &s->pool->explicit_config) != 0) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
            break;
        }
        rc = apply_delta(&next_explicit, &d, s->sign, s->pool->name, err);
        bool derived = false;
        if (rc == 0) {
            if (ps_tree_pool_effective(tree, &next_explicit, &next, &issue) != 0)
                rc = ps_error_set(err, PS_ENOMEM, "out of memory");
            else
                derived = true;
        }
        if (rc == 0)
            rc = ps_tree_validate_pool(tree, s->pool, s->pool->name, &next, s->pool->parent, err);
        if (rc != 0) {
            ps_pool_config_release(&next_explicit);
            if (derived)
                ps_pool_config_release(&next);
            free(issue);
            break;
        }
        s->old_explicit = s->pool->explicit_config;
        s->old = s->pool->config;
        s->old_issue = s->pool->preset_issue;
        s->pool->explicit_config = next_explicit;
        s->pool->config = next;
        s->pool->preset_issue = issue;
        s->pool->config_version = ps_tree_pool_config_version_next();
    }
    /* a refusal puts back what changed, newest first: each state back is one that held */
    for (int i = done - 1; i >= 0; i--) {
        struct step *s = &steps[i];
        if (rc != 0) {
            ps_pool_config_release(&s->pool->explicit_config);
            ps_pool_config_release(&s->pool->config);
            free(s->pool->preset_issue);
            s->pool->explicit_config = s->old_explicit;
            s->pool->config = s->old;
            s->pool->preset_issue = s->old_issue;
            s->pool->config_version = ps_tree_pool_config_version_next();
        } else {
            ps_pool_config_release(&s->old_explicit);
            ps_pool_config_release(&s->old);
            free(s->old_issue);
        }
    }
    free(steps);
    if (rc != 0)
        ps_error_prefix(err, "transfer_pool_resources");
    else
        ps_pool_tree_run_pending(tree);
    return rc;
}
