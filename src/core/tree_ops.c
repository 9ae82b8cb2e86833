/* tree_ops.c — operations in one tree: pool resolution, count limits, pending queue. */
#include "core/operation.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr_common.h"
#include "core/pool_acl.h"
#include "core/pool_tree_impl.h"
#include "core/user_pools.h"

/* Upstream MaxSchedulingTagRuleCount. */

/* Where an operation goes: an existing pool, or a new ephemeral pool `name` under `parent`. */
struct resolution {
    struct ps_pool *pool;
    struct ps_pool *parent;
    char name[2 * PS_POOL_NAME_MAX + 2];
    bool in_default_parent;
};

static void add_counts(struct ps_pool *from, int operations, int running)
{
    for (struct ps_pool *a = from; a; a = a->parent) {
        a->operation_count += operations;
        a->running_operation_count += running;
    }
}

static void add_lightweight(struct ps_pool *from, int running)
{
    for (struct ps_pool *a = from; a; a = a->parent)
        a->lightweight_running_operation_count += running;
}

bool ps_pool_lightweight_enabled(const struct ps_pool *pool)
{
    return !pool->is_root && pool->config.enable_lightweight_operations.set &&
           pool->config.enable_lightweight_operations.value &&
           pool->config.mode == PS_MODE_FIFO;
}

/* The lowest pool on the path to the root whose running operations are at its limit; NULL
 * also in a pool with lightweight operations (its operations are never pending). */
static struct ps_pool *violating_running_limit(struct ps_pool *pool)
{
    if (ps_pool_lightweight_enabled(pool))
        return NULL;
    for (struct ps_pool *a = pool; a; a = a->parent)
        if (a->running_operation_count >= ps_pool_max_running_operations(a))
            return a;
    return NULL;
}

static int resolve(const struct ps_pool_tree *tree, const char *user, const char *pool_name,
                   struct resolution *res, struct ps_error *err)
{
    memset(res, 0, sizeof *res);
    if (!user || user[0] == '\0')
        return ps_error_set(err, PS_EINVAL, "user: must not be empty");
    const char *name = pool_name ? pool_name : user;
    if (name[0] == '\0')
        return ps_error_set(err, PS_EINVAL, "pool: must not be empty");
    if (strcmp(name, PS_ROOT_POOL_NAME) == 0) {
        if (tree->config.forbid_immediate_operations_in_root)
            return ps_error_set(err, PS_EINVAL,
                                "starting operations immediately in the root pool of pool tree "
                                "\"%s\" is forbidden (forbid_immediate_operations_in_root)",
                                tree->name);
        res->pool = tree->root;
        return 0;
    }
    struct ps_pool *pool = ps_pool_tree_find_pool(tree, name);
    if (pool && pool->config.create_ephemeral_subpools) {
        int rc = ps_pool_name_check("user", user, err);
        if (rc != 0)
            return rc;
        snprintf(res->name, sizeof res->name, "%s%c%s", name, PS_EPHEMERAL_DELIMITER, user);
        res->pool = ps_pool_tree_find_pool(tree, res->name);
        if (!res->pool)
            res->parent = pool;
        return 0;
    }
    if (pool) {
        if (pool->config.forbid_immediate_operations)
            return ps_error_set(err, PS_EINVAL,
                                "starting operations immediately in pool \"%s\" of pool tree \"%s\" "
                                "is forbidden (forbid_immediate_operations)", name, tree->name);
        res->pool = pool;
        return 0;
    }
    int rc = ps_pool_name_check("pool", name, err);
    if (rc != 0)
        return rc;
    snprintf(res->name, sizeof res->name, "%s", name);
    res->parent = ps_pool_tree_default_parent_for(tree, user);
    res->in_default_parent = true;
    return 0;
}

static int user_ephemeral_pool_count(const struct ps_pool_tree *tree, const char *user)
{
    int n = 0;
    for (int i = 0; i < tree->pool_count; i++) {
        const struct ps_pool *p = tree->pools[i];
        if (p->ephemeral_in_default_parent && strcmp(p->ephemeral_user, user) == 0)
            n++;
    }
    return n;
}

/* Checks acl, count limits and the ephemeral pool limit for a resolved target. For a pool
 * change (moving not NULL), max_operation_count skips the pools on moving's current path, and
 * max_running_operation_count is checked too, except where moving already counts as running
 * (a regular running operation in a shared ancestor) or when it will be lightweight. */
static int check_target(const struct ps_pool_tree *tree, const char *user, const struct resolution *res,
                        const struct ps_tree_op *moving, struct ps_error *err)
{
    const struct ps_pool *keep = moving ? moving->pool : NULL;
    bool lightweight_target = res->pool && ps_pool_lightweight_enabled(res->pool);
    /* a pending operation skips the shared ancestors too (poolsched's rule before lightweight
     * operations; upstream checks every new ancestor of a pending one) */
    bool counted = moving && (!moving->running || !moving->lightweight);
    const struct ps_pool *start = res->pool ? res->pool : res->parent;
    const struct ps_pool_access *access = 
        tree->owner ? tree->owner_ops->access(tree->owner) : NULL;
    int rc = ps_pool_acl_require(access, tree, start, user, PS_PERM_USE, err);
    if (rc != 0)
        return rc;
    for (const struct ps_pool *a = start; a; a = a->parent) {
        bool shared = false;
        for (const struct ps_pool *k = keep; k && !shared; k = k->parent)
            shared = k == a;
        int64_t limit = ps_pool_max_operations(a);
        if (!shared && a->operation_count >= limit)
            return ps_error_set(err, PS_ELIMIT,
                                "limit for the number of concurrent operations %lld for pool \"%s\" "
                                "in pool tree \"%s\" has been reached",
                                (long long)limit, a->name, tree->name);
        /* A move does not make a running operation pending (move_op): as upstream's
         * ValidateAllOperationsCountsOnPoolChange, a new pool at its running limit refuses it. */
        int64_t running = ps_pool_max_running_operations(a);
        if (keep && !lightweight_target && !(shared && counted) &&
            a->running_operation_count >= running)
            return ps_error_set(err, PS_ELIMIT,
                                "limit for the number of running operations %lld for pool \"%s\" "
                                "in pool tree \"%s\" has been reached",
                                (long long)running, a->name, tree->name);
    }
    if (!res->pool && res->in_default_parent) {
        int64_t limit = tree->config.max_ephemeral_pools_per_user;
        int n = user_ephemeral_pool_count(tree, user);
        if (n + 1 > limit)
            return ps_error_set(err, PS_ELIMIT,
                                "cannot create ephemeral pool \"%s\": the limit of %lld ephemeral "
                                "pools for user \"%s\" in pool tree \"%s\" has been reached",
                                res->name, (long long)limit, user, tree->name);
    }
    return 0;
}

/* The ranges of an operation's tree settings: the entries of the operation spec's table
 * (core/attr_common.h), checked again here for callers that fill the settings themselves. */
#define SOFF(field) offsetof(struct ps_tree_op_settings, field)
static const struct ps_attr settings_range_attrs[] = {
    PS_ATTR_WEIGHT(SOFF(weight), 0),
    PS_ATTR_MAX_SHARE_RATIO(SOFF(max_share_ratio), 0),
    PS_ATTR_STARVATION_TOLERANCE(PS_ATTR_OPT_DOUBLE, SOFF(fair_share_starvation_tolerance), 0),
    PS_ATTR_STARVATION_TIMEOUT(PS_ATTR_OPT_INT, SOFF(fair_share_starvation_timeout_ms), 0),
};
static const struct ps_attr_table settings_ranges = {
    .what = "operation settings",
    .attrs = settings_range_attrs,
    .count = (int)(sizeof settings_range_attrs / sizeof settings_range_attrs[0]),
    .size = sizeof(struct ps_tree_op_settings),
};

/* Validates the non-pool settings and parses the filter into *filter (NULL when none). */
static int check_settings(const struct ps_tree_op_settings *s, struct ps_formula **filter,
                          struct ps_error *err)
{
    *filter = NULL;
    if (!s)
        return 0;
    int rc = ps_attr_check_ranges(&settings_ranges, s, NULL, err);
    if (rc != 0)
        return rc;
    if (s->scheduling_tag_filter && s->scheduling_tag_filter[0]) {
        rc = ps_formula_parse_filter("scheduling_tag_filter", s->scheduling_tag_filter, filter,
                                         err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int ps_pool_tree_check_operation(const struct ps_pool_tree *tree, const char *id, const char *user,
                                 const struct ps_tree_op_settings *settings, struct ps_error *err)
{
    if (!id || id[0] == '\0')
        return ps_error_set(err, PS_EINVAL, "operation id: must not be empty");
    if (ps_strmap_get(&tree->ops_by_id, id))
        return ps_error_set(err, PS_EEXIST, "operation \"%s\" already exists in pool tree \"%s\"", id,
                            tree->name);
    struct ps_formula *filter;
    int rc = check_settings(settings, &filter, err);
    ps_formula_free(filter);
    if (rc != 0)
        return rc;
    struct resolution res;
    rc = resolve(tree, user, settings ? settings->pool : NULL, &res, err);
    if (rc == 0)
        rc = check_target(tree, user, &res, NULL, err);
    return rc;
}

/* ---- pending queue ----------------------------------------------------------------------- */

static int start_order(const struct ps_tree_op *a, const struct ps_tree_op *b)
{
    if (a->start_time_ms != b->start_time_ms)
        return a->start_time_ms < b->start_time_ms ? -1 : 1;
    /* the same millisecond: registration order, as upstream's queue of waiting operations
     * (an id tie-break would start operations submitted together in random order) */
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Capacity for these was reserved when the operation was added (one slot per operation). */
static void pending_insert(struct ps_pool_tree *tree, struct ps_tree_op *op)
{
    int lo = 0, hi = tree->pending_count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (start_order(tree->pending[mid], op) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&tree->pending[lo + 1], &tree->pending[lo], (size_t)(tree->pending_count - lo) * sizeof *tree->pending);
    tree->pending[lo] = op;
    tree->pending_count++;
}

static void pending_remove(struct ps_pool_tree *tree, struct ps_tree_op *op)
{
    for (int i = 0; i < tree->pending_count; i++) {
        if (tree->pending[i] == op) {
            memmove(&tree->pending[i], &tree->pending[i + 1],
                    (size_t)(tree->pending_count - i - 1) * sizeof *tree->pending);
            tree->pending_count--;
            return;
        }
    }
}

static void make_running(struct ps_pool_tree *tree, struct ps_tree_op *op)
{
    op->running = true;
    op->pending_by = NULL;
    op->lightweight = ps_pool_lightweight_enabled(op->pool);
    if (op->lightweight)
        add_lightweight(op->pool, 1);
    else
        add_counts(op->pool, 0, 1);
    tree->started[tree->started_count++] = op;
    if (tree->owner && op->user_data)
        tree->owner_ops->op_running(tree->owner, op);
}

/* Attaches op to pool, counts it, and makes it running or pending. */
static void attach(struct ps_pool_tree *tree, struct ps_tree_op *op, struct ps_pool *pool)
{
    op->pool = pool;
    op->running = false;
    pool->child_operation_count++;
    add_counts(pool, 1, 0);
    struct ps_pool *blocking = violating_running_limit(pool);
    if (blocking) {
        op->pending_by = blocking;
        pending_insert(tree, op);
    } else {
        make_running(tree, op);
    }
}

/* Attaches a running op to pool and keeps it running, whatever pool's running limits say. */
static void attach_running(struct ps_tree_op *op, struct ps_pool *pool)
{
    op->pool = pool;
    pool->child_operation_count++;
    add_counts(pool, 1, 0);
    op->running = true;   /* not a start: it was running, so not in tree->started */
    op->pending_by = NULL;
    op->lightweight = ps_pool_lightweight_enabled(pool);
    if (op->lightweight)
        add_lightweight(pool, 1);
    else
        add_counts(pool, 0, 1);
}

static void detach(struct ps_pool_tree *tree, struct ps_tree_op *op)
{
    if (op->running && op->lightweight)
        add_lightweight(op->pool, -1);
    else if (op->running)
        add_counts(op->pool, 0, -1);
    else
        pending_remove(tree, op);
    add_counts(op->pool, -1, 0);
    op->pool->child_operation_count--;
    op->running = false;
    op->lightweight = false;
    op->pending_by = NULL;
}

/* The one rule of a move (a pool change, or a stale user subpool's operations going to its
 * parent): a running operation stays running in its new pool, counted there whatever the
 * limits say (as a lowered max_running_operation_count leaves running operations running); a
 * pending one waits or runs by its new pool's limits. A pool change first checks that the new
 * pools have room for it (check_target, as upstream's ValidateAllOperationCountsOnPoolChange
 * before a move with ensureRunning); a stale subpool's operations go to the parent unchecked
 * (upstream re-checks the limits there and may mark a running one pending while its jobs run
 * on; here it stays running, as the service keeps it). */
static void move_op(struct ps_pool_tree *tree, struct ps_tree_op *op, struct ps_pool *pool)
{
    bool was_running = op->running;
    detach(tree, op);
    if (was_running)
        attach_running(op, pool);
    else
        attach(tree, op, pool);
}

static void run_pending(struct ps_pool_tree *tree)
{
    int i = 0;
    while (i < tree->pending_count) {
        struct ps_tree_op *op = tree->pending[i];
        struct ps_pool *blocking = violating_running_limit(op->pool);
        if (blocking) {
            op->pending_by = blocking;
            i++;
            continue;
        }
        memmove(&tree->pending[i], &tree->pending[i + 1], (size_t)(tree->pending_count - i - 1) * sizeof *tree->pending);
        tree->pending_count--;
        make_running(tree, op);
    }
}

void ps_pool_tree_run_pending(struct ps_pool_tree *tree)
{
    ps_tree_begin_change(tree);
    run_pending(tree);
}

void ps_tree_run_pending(struct ps_pool_tree *tree)
{
    run_pending(tree);
}

void ps_tree_reaccount_lightweight(struct ps_pool_tree *tree, struct ps_pool *pool)
{
    bool enabled = ps_pool_lightweight_enabled(pool);
    for (int i = 0; i < tree->op_count; i++) {
        struct ps_tree_op *op = tree->ops[i];
        if (op->pool != pool || !op->running || op->lightweight == enabled)
            continue;
        /* turned off: counted as regular again, over the running limits if need be */
        add_lightweight(pool, enabled ? 1 : -1);
        add_counts(pool, 0, enabled ? -1 : 1);
        op->lightweight = enabled;
    }
}

/* ---- operations -------------------------------------------------------------------------- */

int ps_pool_tree_check_operation_pool(const struct ps_pool_tree *tree, const char *id,
                                      const char *pool_name, struct ps_error *err)
{
    const struct ps_tree_op *op = ps_strmap_get(&tree->ops_by_id, id);
    if (!op)
        return ps_error_set(err, PS_ENOENT, "operation \"%s\" is not in pool tree \"%s\"", id, tree->name);
    struct resolution res;
    int rc = resolve(tree, op->user, pool_name, &res, err);
    if (rc == 0 && res.pool != op->pool)
        rc = check_target(tree, op->user, &res, op, err);
    return rc;
}

static void op_free(struct ps_tree_op *op)
{
    if (!op)
        return;
    ps_formula_free(op->filter);
    free(op->scheduling_tag_filter);
    free(op->user);
    free(op->id);
    free(op);
}

/* Copies settings into op (replacing filter with the parsed one, whose ownership moves). */
static int apply_settings(struct ps_tree_op *op, const struct ps_tree_op_settings *s,
                          struct ps_formula *filter)
{
    const char *text = s && s->scheduling_tag_filter ? s->scheduling_tag_filter : "";
    char *copy = strdup(text);
    if (!copy) {
        ps_formula_free(filter);
        return PS_ENOMEM;
    }
    free(op->scheduling_tag_filter);
    op->scheduling_tag_filter = copy;
    ps_formula_free(op->filter);
    op->filter = filter;
    op->weight_specified = s && s->weight.set;
    op->weight = op->weight_specified ? s->weight.value : 1.0;
    op->max_share_ratio = s && s->max_share_ratio.set ? s->max_share_ratio.value : 1.0;
    struct ps_resources_opt none = {0};
    op->resource_limits = ps_resources_opt_or_infinite(s ? &s->resource_limits : &none);
    op->is_gang = s && s->is_gang;
    op->apply_specified_resource_limits_to_demand = s && s->apply_specified_resource_limits_to_demand;
    op->fair_share_starvation_timeout_ms = s ? s->fair_share_starvation_timeout_ms : (struct ps_opt_int){0};
    op->fair_share_starvation_tolerance = s ? s->fair_share_starvation_tolerance : (struct ps_opt_double){0};
    op->non_preemptible_resource_usage_threshold = s ? s->non_preemptible_resource_usage_threshold : none;
    op->max_unpreemptible_allocation_count = s ? s->max_unpreemptible_allocation_count : (struct ps_opt_int){0};
    op->strong_guarantee_resources = s ? s->strong_guarantee_resources : none;
    return 0;
}

/* Reserves room so that nothing can fail once the tree starts changing. */
static int reserve_op_slots(struct ps_pool_tree *tree)
{
    int n = tree->op_count;
    if (ps_tree_reserve((void ***)&tree->ops, &tree->op_capacity, n) != 0 ||
        ps_tree_reserve((void ***)&tree->pending, &tree->pending_capacity, n) != 0 ||
        ps_tree_reserve((void ***)&tree->started, &tree->started_capacity, n) != 0)
        return PS_ENOMEM;
    return 0;
}

/* Creates (unlinked) the ephemeral pool of a resolution. */
static struct ps_pool *new_ephemeral(struct ps_pool_tree *tree, const struct resolution *res,
                                     const char *user, struct ps_error *err)
{
    struct ps_pool *pool = ps_tree_pool_new(tree, res->name, res->parent, err);
    if (!pool)
        return NULL;
    pool->ephemeral = true;
    pool->ephemeral_in_default_parent = res->in_default_parent;
    pool->ephemeral_user = strdup(user);
    if (!pool->ephemeral_user) {
        ps_tree_pool_free(pool);
        ps_error_set(err, PS_ENOMEM, "out of memory");
        return NULL;
    }
    ps_pool_config_apply_ephemeral(&pool->config, res->parent->is_root ? NULL : &res->parent->config);
    pool->config_version = ps_tree_pool_config_version_next();
    return pool;
}

/* Links a pool made by new_ephemeral; on failure frees it. */
static int link_ephemeral(struct ps_pool_tree *tree, struct ps_pool *pool, struct ps_error *err)
{
    if (ps_tree_reserve((void ***)&tree->pools, &tree->pool_capacity, tree->pool_count) != 0 ||
        ps_strmap_put(&tree->pools_by_name, pool->name, pool) != 0) {
        ps_tree_pool_free(pool);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    pool->index = tree->pool_count;
    pool->creation_seq = tree->next_pool_seq++;
    tree->pools[tree->pool_count++] = pool;
    pool->parent->child_pool_count++;
    return 0;
}

/* A removed pool (ps_tree_pool_make_ephemeral) gone with a restart while its user subpool
 * held operations: ephemeral again, no user's, where a user's pool of that name would go. */
static int restore_removed_parent(struct ps_pool_tree *tree, const char *user, const char *name,
                                  struct ps_pool **out, struct ps_error *err)
{
    struct resolution res;
    int rc = resolve(tree, user, name, &res, err);
    if (rc != 0 || res.pool) {
        *out = res.pool;
        return rc;
    }
    struct ps_pool *pool = new_ephemeral(tree, &res, user, err);
    rc = pool ? link_ephemeral(tree, pool, err) : PS_ENOMEM;
    if (rc != 0)
        return rc;
    free(pool->ephemeral_user);
    pool->ephemeral_user = NULL;
    pool->ephemeral_in_default_parent = false;
    *out = pool;
    return 0;
}

/* restore: NULL for a start; else the pool and state the operation had before a restart. */
static int add_operation(struct ps_pool_tree *tree, const char *id, const char *user,
                         int64_t start_time_ms, const struct ps_tree_op_settings *settings,
                         const struct ps_tree_op_restore *restore, struct ps_tree_op **out,
                         struct ps_error *err)
{
    ps_tree_begin_change(tree);
    if (out)
        *out = NULL;
    if (!id || id[0] == '\0')
        return ps_error_set(err, PS_EINVAL, "operation id: must not be empty");
    if (ps_strmap_get(&tree->ops_by_id, id))
        return ps_error_set(err, PS_EEXIST, "operation \"%s\" already exists in pool tree \"%s\"", id,
                            tree->name);
    struct ps_formula *filter;
    int rc = check_settings(settings, &filter, err);
    if (rc != 0)
        return rc;
    struct resolution res;
    struct ps_pool *made_parent = NULL;
    struct ps_pool *exact = restore && restore->pool ? ps_pool_tree_find_pool(tree, restore->pool)
                                                     : NULL;
    if (exact) {
        /* the pool it was in, even if an explicit pool has since got create_ephemeral_subpools */
        memset(&res, 0, sizeof res);
        res.pool = exact;
    } else if (restore && restore->pool) {
        /* an ephemeral pool, gone with the restart: "parent$user" under its parent (even if
         * the parent has since lost create_ephemeral_subpools), else in the default parent */
        char base[2 * PS_POOL_NAME_MAX + 2];
        snprintf(base, sizeof base, "%s", restore->pool);
        char *delim = strchr(base, PS_EPHEMERAL_DELIMITER);
        if (delim)
            *delim = '\0';
        struct ps_pool *parent = delim ? ps_pool_tree_find_pool(tree, base) : NULL;
        if (delim && !parent && strlen(restore->pool) < sizeof res.name) {
            /* its parent was a removed pool kept ephemeral for it: made again */
            rc = restore_removed_parent(tree, user, base, &made_parent, err);
            parent = made_parent;
        }
        if (rc == 0 && parent && strlen(restore->pool) < sizeof res.name) {
            memset(&res, 0, sizeof res);
            snprintf(res.name, sizeof res.name, "%s", restore->pool);
            res.parent = parent;
        } else if (rc == 0) {
            rc = resolve(tree, user, delim ? settings ? settings->pool : NULL : restore->pool,
                         &res, err);
        }
    } else {
        rc = resolve(tree, user, settings ? settings->pool : NULL, &res, err);
    }
    /* a restored operation was admitted before the restart: acl and count limits are not
     * checked again (they may have been lowered since, or it was moved past them) */
    if (rc == 0 && !restore)
        rc = check_target(tree, user, &res, NULL, err);
    struct ps_tree_op *op = NULL;
    if (rc == 0) {
        op = calloc(1, sizeof *op);
        if (op) {
            op->scheduling_index = -1;
            op->id = strdup(id);
            op->user = strdup(user);
        }
        if (!op || !op->id || !op->user || reserve_op_slots(tree) != 0) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory starting operation \"%s\"", id);
        } else {
            rc = apply_settings(op, settings, filter);
            filter = NULL;
            if (rc != 0)
                ps_error_set(err, rc, "out of memory starting operation \"%s\"", id);
        }
    }
    if (rc == 0 && ps_strmap_put(&tree->ops_by_id, op->id, op) != 0)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory starting operation \"%s\"", id);
    struct ps_pool *pool = res.pool;
    if (rc == 0 && !pool) {
        pool = new_ephemeral(tree, &res, user, err);
        rc = pool ? link_ephemeral(tree, pool, err) : PS_ENOMEM;
        if (rc != 0)
            ps_strmap_remove(&tree->ops_by_id, op->id);
    }
    if (rc != 0) {
        ps_formula_free(filter);
        op_free(op);
        ps_tree_remove_empty_ephemeral(tree, made_parent);
        return rc;
    }
    op->start_time_ms = start_time_ms;
    op->tree = tree;
    op->fs_index = -1;
    op->dynamic.below_fair_share_since_ms = PS_STARVATION_NEVER;
    op->seq = tree->next_op_seq++;
    op->index = tree->op_count;
    tree->ops[tree->op_count++] = op;
    if (!restore) {
        attach(tree, op, pool);
    } else {
        /* running or pending as it was, whatever the limits say now */
        op->pool = pool;
        op->running = false;
        pool->child_operation_count++;
        add_counts(pool, 1, 0);
        if (restore->running) {
            make_running(tree, op);
        } else {
            struct ps_pool *blocking = violating_running_limit(pool);
            op->pending_by = blocking ? blocking : pool;
            pending_insert(tree, op);
        }
    }
    if (out)
        *out = op;
    return 0;
}

int ps_pool_tree_add_operation(struct ps_pool_tree *tree, const char *id, const char *user,
                               int64_t start_time_ms, const struct ps_tree_op_settings *settings,
                               struct ps_tree_op **out, struct ps_error *err)
{
    return add_operation(tree, id, user, start_time_ms, settings, NULL, out, err);
}

int ps_pool_tree_restore_operation(struct ps_pool_tree *tree, const char *id, const char *user,
                                   int64_t start_time_ms, const struct ps_tree_op_settings *settings,
                                   const struct ps_tree_op_restore *restore,
                                   struct ps_tree_op **out, struct ps_error *err)
{
    return add_operation(tree, id, user, start_time_ms, settings, restore, out, err);
}

static void ops_array_remove(struct ps_pool_tree *tree, struct ps_tree_op *op)
{
    /* Swap-remove: O(1) for trees with many operations; the order stays a function of the
     * sequence of calls, so it is deterministic. */
    int i = op->index;
    tree->ops[i] = tree->ops[tree->op_count - 1];
    tree->ops[i]->index = i;
    tree->op_count--;
}

int ps_pool_tree_remove_operation(struct ps_pool_tree *tree, const char *id, struct ps_error *err)
{
    ps_tree_begin_change(tree);
    struct ps_tree_op *op = ps_strmap_get(&tree->ops_by_id, id);
    if (!op)
        return ps_error_set(err, PS_ENOENT, "operation \"%s\" is not in pool tree \"%s\"", id, tree->name);
    bool was_running = op->running;
    struct ps_pool *pool = op->pool;
    detach(tree, op);
    ps_strmap_remove(&tree->ops_by_id, op->id);
    ops_array_remove(tree, op);
    op_free(op);
    if (was_running)
        run_pending(tree);
    ps_tree_remove_empty_ephemeral(tree, pool);
    return 0;
}

int ps_pool_tree_change_operation_pool(struct ps_pool_tree *tree, const char *id, const char *pool_name,
                                       struct ps_error *err)
{
    ps_tree_begin_change(tree);
    struct ps_tree_op *op = ps_strmap_get(&tree->ops_by_id, id);
    if (!op)
        return ps_error_set(err, PS_ENOENT, "operation \"%s\" is not in pool tree \"%s\"", id, tree->name);
    struct resolution res;
    int rc = resolve(tree, op->user, pool_name, &res, err);
    if (rc != 0 || res.pool == op->pool)
        return rc;
    rc = check_target(tree, op->user, &res, op, err);
    if (rc != 0)
        return rc;
    struct ps_pool *pool = res.pool;
    if (!pool) {
        pool = new_ephemeral(tree, &res, op->user, err);
        rc = pool ? link_ephemeral(tree, pool, err) : PS_ENOMEM;
        if (rc != 0)
            return rc;
    }
    struct ps_pool *old = op->pool;
    move_op(tree, op, pool);
    run_pending(tree);
    ps_tree_remove_empty_ephemeral(tree, old);
    return 0;
}

int ps_pool_tree_update_operation(struct ps_pool_tree *tree, const char *id,
                                  const struct ps_tree_op_settings *settings, struct ps_error *err)
{
    ps_tree_begin_change(tree);
    struct ps_tree_op *op = ps_strmap_get(&tree->ops_by_id, id);
    if (!op)
        return ps_error_set(err, PS_ENOENT, "operation \"%s\" is not in pool tree \"%s\"", id, tree->name);
    struct ps_formula *filter;
    int rc = check_settings(settings, &filter, err);
    if (rc == 0) {
        rc = apply_settings(op, settings, filter);
        if (rc != 0)
            ps_error_set(err, rc, "out of memory");
    }
    return rc;
}

struct ps_tree_op *ps_pool_tree_find_operation(const struct ps_pool_tree *tree, const char *id)
{
    return ps_strmap_get(&tree->ops_by_id, id);
}

int ps_pool_tree_operation_count(const struct ps_pool_tree *tree)
{
    return tree->op_count;
}

struct ps_tree_op *ps_pool_tree_operation_at(const struct ps_pool_tree *tree, int index)
{
    if (index < 0 || index >= tree->op_count)
        return NULL;
    return tree->ops[index];
}

int ps_pool_tree_pending_count(const struct ps_pool_tree *tree)
{
    return tree->pending_count;
}

struct ps_tree_op *ps_pool_tree_pending_at(const struct ps_pool_tree *tree, int index)
{
    if (index < 0 || index >= tree->pending_count)
        return NULL;
    return tree->pending[index];
}

void ps_tree_ops_release(struct ps_pool_tree *tree)
{
    for (int i = 0; i < tree->op_count; i++)
        op_free(tree->ops[i]);
    free(tree->ops);
    free(tree->pending);
    free(tree->started);
    free(tree->moved);
    tree->ops = tree->pending = tree->started = tree->moved = NULL;
    tree->op_count = tree->pending_count = tree->started_count = tree->moved_count = 0;
    tree->moved_capacity = 0;
}

int ps_tree_reserve_moves(struct ps_pool_tree *tree)
{
    return ps_tree_reserve((void ***)&tree->moved, &tree->moved_capacity, tree->op_count);
}

void ps_tree_move_out_of_stale_subpools(struct ps_pool_tree *tree, struct ps_pool *hub)
{
    if (hub->config.create_ephemeral_subpools)
        return;
    for (int i = 0; i < tree->op_count; i++) {
        struct ps_tree_op *op = tree->ops[i];
        struct ps_pool *sub = op->pool;
        if (sub->parent != hub || !sub->ephemeral || !sub->ephemeral_user ||
            sub->ephemeral_in_default_parent)
            continue;
        move_op(tree, op, hub);
        tree->moved[tree->moved_count++] = op;
        ps_tree_remove_empty_ephemeral(tree, sub);
    }
}

static bool has_filter(const struct ps_formula *f)
{
    return f && !ps_formula_is_empty(f);
}

int ps_tree_op_effective_filter(const struct ps_tree_op *op, const struct ps_formula **filter,
                                struct ps_formula **owned, struct ps_error *err)
{
    *owned = NULL;
    *filter = has_filter(op->filter) ? op->filter : NULL;
    int count = *filter != NULL;
    size_t len = count ? strlen(ps_formula_text(op->filter)) + 8 : 1;
    for (const struct ps_pool *p = op->pool; p; p = p->parent) {
        if (!has_filter(p->filter))
            continue;
        count++;
        len += strlen(ps_formula_text(p->filter)) + 8;
        *filter = p->filter;
    }
    if (count < 2)
        return 0;
    char *text = malloc(len);
    if (!text) {
        *filter = NULL;
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    size_t at = 0;
    if (has_filter(op->filter))
        at += (size_t)snprintf(text + at, len - at, "(%s)", ps_formula_text(op->filter));
    for (const struct ps_pool *p = op->pool; p; p = p->parent)
        if (has_filter(p->filter))
            at += (size_t)snprintf(text + at, len - at, "%s(%s)", at ? " & " : "",
                                   ps_formula_text(p->filter));
    int rc = ps_formula_parse(text, owned, err);
    free(text);
    *filter = rc == 0 ? *owned : NULL;
    return rc;
}
