/* tree_fs.c — building the engine's element array from a tree, and applying its results. */
#include "core/tree_fs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/merge_sort.h"
#include "core/nodes.h"
#include "core/pool_tree_impl.h"
#include "core/schedule.h"

/* Sorting small keys instead of operation pointers keeps the sort inside one array: the
 * operations themselves are only touched for ties on start time. */
struct ps_tree_fs_key {
    int slot;                      /* the pool's slot (pool index, the root last) */
    int64_t start_time_ms;
    struct ps_tree_op *op;
};

void ps_tree_fs_init(struct ps_tree_fs *fs)
{
    memset(fs, 0, sizeof *fs);
}

void ps_tree_fs_release(struct ps_tree_fs *fs)
{
    if (!fs)
        return;
    free(fs->elems);
    free(fs->pools);
    free(fs->fs_pools);
    free(fs->ops);
    free(fs->first_child);
    free(fs->next_sibling);
    free(fs->op_begin);
    free(fs->op_end);
    free(fs->op_base);
    free(fs->queue);
    free(fs->keys);
    free(fs->keys_tmp);
    free(fs->config_versions);
    ps_tree_fs_init(fs);
}

static int grow(void **p, size_t size, int n)
{
    void *grown = realloc(*p, size * (size_t)(n > 0 ? n : 1));
    if (!grown)
        return PS_ENOMEM;
    *p = grown;
    return 0;
}

/* Sizes every buffer for pools (+ root) and operations; allocates only when the tree grew. */
static int reserve(struct ps_tree_fs *fs, int pools, int ops)
{
    if (pools + 1 > fs->pool_capacity) {
        int n = 2 * (pools + 1);
        if (grow((void **)&fs->first_child, sizeof(int), n) || grow((void **)&fs->next_sibling, sizeof(int), n) ||
            grow((void **)&fs->op_begin, sizeof(int), n) || grow((void **)&fs->op_end, sizeof(int), n) ||
            grow((void **)&fs->op_base, sizeof(int), n) || grow((void **)&fs->queue, sizeof(int), n) ||
            grow((void **)&fs->fs_pools, sizeof(struct ps_fs_pool), n))
            return PS_ENOMEM;
        fs->pool_capacity = n;
    }
    if (ops > fs->op_capacity) {
        int n = 2 * ops;
        if (grow((void **)&fs->keys, sizeof(struct ps_tree_fs_key), n) ||
            grow((void **)&fs->keys_tmp, sizeof(struct ps_tree_fs_key), n))
            return PS_ENOMEM;
        fs->op_capacity = n;
    }
    int elems = pools + 1 + ops;
    if (elems > fs->capacity) {
        int n = 2 * elems;
        if (grow((void **)&fs->elems, sizeof(struct ps_fs_element), n) ||
            grow((void **)&fs->pools, sizeof(void *), n) || grow((void **)&fs->ops, sizeof(void *), n) ||
            grow((void **)&fs->config_versions, sizeof(uint64_t), n))
            return PS_ENOMEM;
        fs->capacity = n;
    }
    return 0;
}

static bool before(const struct ps_tree_fs_key *x, const struct ps_tree_fs_key *y)
{
    if (x->slot != y->slot)
        return x->slot < y->slot;
    if (x->start_time_ms != y->start_time_ms)
        return x->start_time_ms < y->start_time_ms;
    return strcmp(x->op->id, y->op->id) < 0;
}

/* fs->keys[0..n) by (pool, start time, id) at every update; ids are unique, so the order is
 * total and any sort gives the same array */
static bool key_before(const void *unused, const struct ps_tree_fs_key *x,
                       const struct ps_tree_fs_key *y)
{
    (void)unused;
    return before(x, y);
}
PS_MERGE_SORT_DEFINE(sort_keys, struct ps_tree_fs_key, const void *, key_before)

/* The engine's defaults for an element. Outputs are left as they are: the engine clears them
 * (5 of an element's 9 cache lines, once per update is enough). */
static void element_defaults(struct ps_fs_element *e, enum ps_element_kind kind, int parent, const char *name)
{
    ps_fs_element_input_init(&e->in, kind, parent, name);
}

static struct ps_resources filter_limits(struct ps_pool_tree *tree, const struct ps_formula *filter,
                                         int64_t now_ms)
{
    if (tree->has_connect_time && now_ms < tree->connected_at_ms + tree->config.node_reconnection_timeout_ms)
        return ps_resources_infinite();
    return ps_pool_tree_filter_limits(tree, filter);
}

/* The engine's defaults for a pool entry (outputs: as element_defaults). */
static void pool_defaults(struct ps_fs_pool *p)
{
    ps_fs_pool_input_init(&p->in);
}

/* infer_children_weights_from_historic_usage of the parent (historic_usage.h): the weight,
 * specified or 1, times 2^-average, and not inferred from guarantees. */
static void infer_from_historic_usage(struct ps_fs_element_input *in, const struct ps_pool *parent,
                                      const struct ps_historic_usage *h)
{
    if (!parent || !parent->config.infer_children_weights_from_historic_usage)
        return;
    in->weight *= ps_historic_usage_weight_multiplier(h);
    in->weight_specified = true;
}

/* After an update: aggregates the element's dominant usage share when its parent infers. */
static void aggregate_historic_usage(struct ps_historic_usage *h, const struct ps_pool *parent,
                                     const struct ps_fs_element_output *out, int64_t now_ms)
{
    if (!parent || !parent->config.infer_children_weights_from_historic_usage) {
        ps_historic_usage_reset(h);
        return;
    }
    ps_historic_usage_update(h, &parent->config.historic_usage_config, now_ms,
                             ps_share_max_component(out->usage_share));
}

/* Element i's input and its pool's entry from the pool. What is a function of the pool's config
 * alone (a weight from historic usage aside) is noted by its config_version: a kept build (see
 * refill) writes again only what changes without a new config. */
static void fill_pool(struct ps_pool_tree *tree, struct ps_tree_fs *fs, int i, const struct ps_pool *pool,
                      int parent, int64_t now_ms)
{
    struct ps_fs_element *e = &fs->elems[i];
    struct ps_fs_pool *entry = &fs->fs_pools[pool->index];
    const struct ps_pool_config *c = &pool->config;
    element_defaults(e, PS_ELEM_POOL, parent, pool->name);
    e->in.pool = pool->index;
    pool_defaults(entry);
    struct ps_fs_element_input *in = &e->in;
    struct ps_fs_pool_input *pin = &entry->in;
    ps_pool_config_fs_input(c, in, pin);
    infer_from_historic_usage(in, pool->parent, &pool->historic_usage);
    bool historic = pool->parent && pool->parent->config.infer_children_weights_from_historic_usage;
    fs->config_versions[i] = historic ? 0 : pool->config_version;
    in->filter_limits = filter_limits(tree, pool->filter, now_ms);
    pin->accumulated_volume = pool->accumulated_volume;
    pin->last_integral_share_ratio = pool->last_integral_share_ratio;
}

/* fill_pool on a kept build, whose element i was filled from the same pool: only the filter
 * limits (node connection) and the integral state when the config kept its version and no
 * weight comes from historic usage (the engine writes only the integral state of the inputs). */
static void refill_pool(struct ps_pool_tree *tree, struct ps_tree_fs *fs, int i, int64_t now_ms)
{
    const struct ps_pool *pool = fs->pools[i];
    bool historic = pool->parent && pool->parent->config.infer_children_weights_from_historic_usage;
    if (historic || fs->config_versions[i] != pool->config_version) {
        fill_pool(tree, fs, i, pool, fs->elems[i].in.parent, now_ms);
        return;
    }
    struct ps_fs_pool_input *pin = &fs->fs_pools[pool->index].in;
    fs->elems[i].in.filter_limits = filter_limits(tree, pool->filter, now_ms);
    pin->accumulated_volume = pool->accumulated_volume;
    pin->last_integral_share_ratio = pool->last_integral_share_ratio;
}

/* An operation sets every input field, so its input is written whole, in one pass, instead of
 * over ps_fs_element_input_init's defaults (a memset and two resource vectors per operation
 * and update). */
static void fill_op(struct ps_pool_tree *tree, struct ps_fs_element *e, const struct ps_tree_op *op,
                    int parent, int64_t now_ms)
{
    struct ps_fs_element_input *in = &e->in;
    *in = (struct ps_fs_element_input){
        .kind = PS_ELEM_OPERATION,
        .parent = parent,
        .name = op->id,
        .weight = op->weight,
        .weight_specified = op->weight_specified,
        .is_gang = op->is_gang,
        .pool = -1,
        .max_share_ratio = op->max_share_ratio,
        .resource_limits = op->resource_limits,
        .filter_limits = filter_limits(tree, op->filter, now_ms),
        .demand = ps_tree_op_effective_demand(op),
        .usage = op->usage,
        .start_time_ms = op->start_time_ms,
        .pending_job_count = op->pending_job_count,
        .strong_guarantee = op->strong_guarantee_resources,
    };
    infer_from_historic_usage(in, op->pool, &op->historic_usage);
}

/* The inputs of the elements fs holds, written again over the names it keeps (see tree_fs.h):
 * parents come first, so a pool's usage is cleared before its operations add theirs. */
static void refill(struct ps_pool_tree *tree, struct ps_tree_fs *fs, int64_t now_ms)
{
    for (int i = 0; i < fs->count; i++) {
        if (i + 8 < fs->count && fs->ops[i + 8]) {
            const char *ahead = (const char *)fs->ops[i + 8];
            __builtin_prefetch(ahead);
            __builtin_prefetch(ahead + 64);
            __builtin_prefetch(ahead + 128);
        }
        struct ps_fs_element *e = &fs->elems[i];
        const char *name = e->in.name;
        int parent = e->in.parent, slot = e->in.pool;
        struct ps_tree_op *op = fs->ops[i];
        if (op) {
            fill_op(tree, e, op, parent, now_ms);
            op->scheduling_index = -1;
            struct ps_resources *usage = &fs->pools[parent]->usage;
            for (int r = 0; r < PS_RES_COUNT; r++)
                usage->v[r] += op->usage.v[r];
        } else if (i == 0) {
            element_defaults(e, PS_ELEM_ROOT, -1, name);
            e->in.pool = slot;
            pool_defaults(&fs->fs_pools[slot]);
            tree->root->usage = ps_resources_zero();
        } else {
            refill_pool(tree, fs, i, now_ms);
            fs->pools[i]->usage = ps_resources_zero();
        }
        e->in.name = name;
    }
    for (int i = fs->count - 1; i > 0; i--) {
        const struct ps_pool *pool = fs->pools[i];
        if (pool)
            for (int r = 0; r < PS_RES_COUNT; r++)
                pool->parent->usage.v[r] += pool->usage.v[r];
    }
}

static void set_tree_inputs(struct ps_pool_tree *tree, struct ps_tree_fs *fs, int64_t now_ms)
{
    ps_tree_config_fs_options(&tree->config, &fs->options);
    fs->input.total = tree->total;
    fs->input.now_ms = now_ms;
    fs->input.has_previous_update = tree->has_previous_update;
    fs->input.previous_update_time_ms = tree->has_previous_update ? tree->previous_update_ms : 0;
}

int ps_pool_tree_build_fs(struct ps_pool_tree *tree, struct ps_tree_fs *fs, int64_t now_ms,
                          struct ps_error *err)
{
    fs->kept = fs->tree == tree && fs->generation == tree->generation;
    if (fs->kept) {
        refill(tree, fs, now_ms);
        set_tree_inputs(tree, fs, now_ms);
        return 0;
    }
    fs->tree = NULL;   /* until this build is whole */
    int npools = tree->pool_count;
    int nops = tree->op_count - tree->pending_count;   /* running operations */
    if (reserve(fs, npools, nops) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory building the fair share input of pool tree \"%s\"",
                            tree->name);
    int root = npools;   /* the root's slot in the per-pool arrays */
#define SLOT(pool) ((pool)->is_root ? root : (pool)->index)

    /* Children lists in creation order: push to the front while walking backwards. */
    for (int i = 0; i <= npools; i++) {
        fs->first_child[i] = -1;
        fs->op_begin[i] = 0;
        fs->op_end[i] = 0;
    }
    for (int i = npools - 1; i >= 0; i--) {
        int parent = SLOT(tree->pools[i]->parent);
        fs->next_sibling[i] = fs->first_child[parent];
        fs->first_child[parent] = i;
    }
    /* Running operations grouped by pool (a stable counting sort by slot into keys), then each
     * group by start time then id: a pool's few operations sorted apiece take far fewer
     * comparisons than all of them at once, and the order is total, so the array is the same.
     * Operations are scattered in memory: prefetching ahead keeps the pass over them from
     * stalling. */
    int m = 0;
    for (int i = 0; i < tree->op_count; i++) {
        if (i + 8 < tree->op_count)
            __builtin_prefetch(tree->ops[i + 8]);
        struct ps_tree_op *op = tree->ops[i];
        op->fs_index = -1;
        op->scheduling_index = -1;
        if (!op->running)
            continue;
        int slot = SLOT(op->pool);
        fs->keys_tmp[m].slot = slot;
        fs->keys_tmp[m].start_time_ms = op->start_time_ms;
        fs->keys_tmp[m].op = op;
        fs->op_end[slot]++;   /* the group's size for now */
        m++;
    }
    for (int i = 0, pos = 0; i <= npools; i++) {
        fs->op_begin[i] = pos;
        pos += fs->op_end[i];
        fs->op_end[i] = fs->op_begin[i];
    }
    for (int i = 0; i < m; i++)
        fs->keys[fs->op_end[fs->keys_tmp[i].slot]++] = fs->keys_tmp[i];
    for (int i = 0; i <= npools; i++)
        if (fs->op_end[i] - fs->op_begin[i] > 1)
            sort_keys(fs->keys + fs->op_begin[i], fs->keys_tmp, fs->op_end[i] - fs->op_begin[i], NULL);

    /* Breadth-first over pools (queue: the pool slots in element order); each pool's child
     * pools get the next elements, then its operations a block of elements filled below. */
    int count = 1, head = 0, tail = 0;
    element_defaults(&fs->elems[0], PS_ELEM_ROOT, -1, tree->root->name);
    fs->elems[0].in.pool = root;
    pool_defaults(&fs->fs_pools[root]);
    fs->pools[0] = tree->root;
    fs->ops[0] = NULL;
    tree->root->fs_index = 0;
    tree->root->usage = ps_resources_zero();
    fs->queue[tail++] = root;
    while (head < tail) {
        int slot = fs->queue[head++];
        struct ps_pool *pool = slot == root ? tree->root : tree->pools[slot];
        int at = pool->fs_index;
        for (int c = fs->first_child[slot]; c >= 0; c = fs->next_sibling[c]) {
            struct ps_pool *child = tree->pools[c];
            fill_pool(tree, fs, count, child, at, now_ms);
            fs->pools[count] = child;
            fs->ops[count] = NULL;
            child->fs_index = count++;
            child->usage = ps_resources_zero();
            fs->queue[tail++] = c;
        }
        fs->op_base[slot] = count;
        count += fs->op_end[slot] - fs->op_begin[slot];
    }
    for (int k = 0; k < m; k++) {
        if (k + 8 < m) {
            const char *ahead = (const char *)fs->keys[k + 8].op;
            __builtin_prefetch(ahead);
            __builtin_prefetch(ahead + 64);
            __builtin_prefetch(ahead + 128);
        }
        int slot = fs->keys[k].slot;
        struct ps_tree_op *op = fs->keys[k].op;
        struct ps_pool *pool = slot == root ? tree->root : tree->pools[slot];
        int index = fs->op_base[slot] + (k - fs->op_begin[slot]);
        fill_op(tree, &fs->elems[index], op, pool->fs_index, now_ms);
        fs->pools[index] = NULL;
        fs->ops[index] = op;
        op->fs_index = index;
        for (int r = 0; r < PS_RES_COUNT; r++)
            pool->usage.v[r] += op->usage.v[r];
    }
    /* Pool usage: own operations plus children, children after parents in the queue. */
    for (int q = tail - 1; q > 0; q--) {
        struct ps_pool *pool = tree->pools[fs->queue[q]];
        for (int r = 0; r < PS_RES_COUNT; r++)
            pool->parent->usage.v[r] += pool->usage.v[r];
    }
#undef SLOT
    fs->count = count;
    fs->pool_count = npools + 1;
    set_tree_inputs(tree, fs, now_ms);
    fs->generation = tree->generation;
    fs->tree = tree;
    return 0;
}

static double specified_share(const struct ps_resources_opt *r, const struct ps_resources *total)
{
    double best = 0.0;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (!(r->set & (1u << i)) || total->v[i] == 0)
            continue;
        double share = ps_res_get(&r->r, i) / ps_res_get(total, i);
        best = share > best ? share : best;
    }
    return best;
}

static void fill_dynamic(struct ps_element_dynamic *d, const struct ps_fs_element_output *out,
                         double guaranteed_ratio, double min_share_ratio)
{
    d->valid = true;
    d->fs = *out;
    d->fair_share_ratio = ps_share_max_component(out->fair_share.total);
    d->usage_ratio = ps_share_max_component(out->usage_share);
    d->demand_ratio = ps_share_max_component(out->demand_share);
    d->guaranteed_ratio = guaranteed_ratio;
    d->min_share_ratio = min_share_ratio;
    d->dominant_resource = out->dominant_resource;
    d->satisfaction_ratio = INFINITY;   /* derive_satisfaction's start */
}

static struct ps_element_dynamic *dynamic_of(const struct ps_tree_fs *fs, int i)
{
    return fs->pools[i] ? &fs->pools[i]->dynamic : &fs->ops[i]->dynamic;
}

static double local_satisfaction(const struct ps_fs_element_output *o)
{
    return ps_sched_satisfaction_ratio(&o->usage_share, &o->fair_share.total, &o->demand_share);
}

/* An operation's satisfaction ratio (its local one) for its new output `out`, before
 * fill_dynamic: the last update's when the inputs kept their bits (the ratio was derived from
 * them, valid: by the last apply). */
static double op_satisfaction(const struct ps_element_dynamic *d,
                              const struct ps_fs_element_output *out)
{
    if (d->valid && memcmp(&d->fs.usage_share, &out->usage_share, sizeof out->usage_share) == 0 &&
        memcmp(&d->fs.fair_share.total, &out->fair_share.total, sizeof out->fair_share.total) == 0 &&
        memcmp(&d->fs.demand_share, &out->demand_share, sizeof out->demand_share) == 0)
        return d->satisfaction_ratio;
    return local_satisfaction(out);
}

/* Satisfaction ratios as upstream's dynamic attributes after an update (every operation
 * active): operations their local ratio (set before), a pool the minimum over its active
 * children (those with an operation in their subtree), its local ratio when it has none.
 * Parents come before their children in fs, so one backward pass (after fill_dynamic set every
 * pool's ratio to infinity) sees every child before its parent. */
static void derive_satisfaction(const struct ps_tree_fs *fs)
{
    for (int i = fs->count - 1; i >= 0; i--) {
        struct ps_element_dynamic *d = dynamic_of(fs, i);
        bool active = fs->ops[i] || d->satisfaction_ratio != INFINITY;
        if (!active)
            d->satisfaction_ratio = local_satisfaction(&fs->elems[i].out);
        int parent = fs->elems[i].in.parent;
        if (active && parent >= 0) {
            struct ps_element_dynamic *p = dynamic_of(fs, parent);
            if (d->satisfaction_ratio < p->satisfaction_ratio)
                p->satisfaction_ratio = d->satisfaction_ratio;
        }
    }
}

int ps_pool_tree_apply_fs(struct ps_pool_tree *tree, const struct ps_tree_fs *fs, struct ps_error *err)
{
    if (fs->tree != tree || fs->generation != tree->generation)
        return ps_error_set(err, PS_ESTATE,
                            "pool tree \"%s\" changed since its fair share input was built; build again",
                            tree->name);
    for (int i = 0; i < tree->op_count; i++)
        if (tree->ops[i]->fs_index < 0)
            tree->ops[i]->dynamic.valid = false;
    for (int i = 0; i < fs->count; i++) {
        if (i + 8 < fs->count && fs->ops[i + 8])
            __builtin_prefetch(&fs->ops[i + 8]->dynamic, 1);
        const struct ps_fs_element *e = &fs->elems[i];
        if (fs->pools[i]) {
            struct ps_pool *pool = fs->pools[i];
            const struct ps_fs_pool *entry = &fs->fs_pools[e->in.pool];
            pool->accumulated_volume = entry->in.accumulated_volume;
            pool->last_integral_share_ratio = entry->in.last_integral_share_ratio;
            pool->fs_pool = entry->out;
            fill_dynamic(&pool->dynamic, &e->out, ps_share_max_component(entry->out.strong_guarantee_share),
                         specified_share(&pool->config.strong_guarantee_resources, &fs->input.total));
            aggregate_historic_usage(&pool->historic_usage, pool->parent, &e->out, fs->input.now_ms);
        } else {
            struct ps_tree_op *op = fs->ops[i];
            double satisfaction = op_satisfaction(&op->dynamic, &e->out);
            fill_dynamic(&op->dynamic, &e->out, 0.0, 0.0);
            op->dynamic.satisfaction_ratio = satisfaction;
            aggregate_historic_usage(&op->historic_usage, op->pool, &e->out, fs->input.now_ms);
        }
    }
    derive_satisfaction(fs);
    tree->has_previous_update = true;
    tree->previous_update_ms = fs->input.now_ms;
    return 0;
}
