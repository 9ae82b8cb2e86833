/* tree_sched.c — the loop's fair share update and snapshot (tree_sched.h); the heartbeat and the
 * checks are in tree_heartbeat.c. */
#include "core/tree_sched.h"

#include <stdlib.h>
#include <string.h>

#include "core/tree_config.h"
#include "core/tree_starvation.h"

/* One element's entry of ts->op_cache (tree_sched.h). */
struct ps_tree_sched_op_cache {
    const struct ps_tree_op *op;               /* NULL: empty */
    const struct ps_formula *filter;           /* owned by ts (filters), or NULL */
    struct ps_preemptible_config pc;           /* ps_tree_op_preemptible_config; total unset */
    bool aggressive_preemption_disallowed;
    bool regular_on_ssd_allowed;
    int promise_pool;                          /* promise_pool_of */
    /* op_state's answer for op at the last update (ps_tree_host.op_state_versioned) */
    bool state_kept;
    uint64_t state_version;                    /* op->state_version it was given for */
    struct ps_sched_operation state;           /* as the host filled it (filter preset) */
    struct ps_preempt_operation preempt;
    struct ps_preemptible *lists;
};

static bool eval_filter(const struct ps_formula *filter, const char *const *tags, int tag_count)
{
    return ps_formula_eval(filter, tags, tag_count);
}

int ps_tree_sched_init(struct ps_tree_sched *ts, struct ps_error *err)
{
    memset(ts, 0, sizeof *ts);
    ps_tree_fs_init(&ts->fs);
    ps_tree_fs_init(&ts->next);
    ps_strmap_init(&ts->filter_copies);
    ts->update = ps_fs_update_new();
    if (!ts->update)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ps_sched_options_init(&ts->options);
    ts->options.filter_eval = eval_filter;
    ts->options.specified_limits = true;   /* a heartbeat checks the elements' own limits */
    ps_preempt_config_init(&ts->preempt_config);
    ps_preemptible_config_init(&ts->preemptible_config);
    ts->last_update_ms = INT64_MIN;
    ts->overcommit_duration_ms = 15000;
    ps_sched_result_init(&ts->result);
    ps_preempt_result_init(&ts->victims);
    return 0;
}

static void drop_filters(struct ps_tree_sched *ts)
{
    ps_strmap_release(&ts->filter_copies);
    ps_strmap_init(&ts->filter_copies);
    for (int i = 0; i < ts->filter_count; i++)
        ps_formula_free(ts->filters[i]);
    ts->filter_count = 0;
}

static int keep_filter(struct ps_tree_sched *ts, struct ps_formula *owned, struct ps_error *err)
{
    if (ts->filter_count == ts->filter_capacity) {
        int cap = ts->filter_capacity ? 2 * ts->filter_capacity : 16;
        struct ps_formula **f = realloc(ts->filters, (size_t)cap * sizeof *f);
        if (!f) {
            ps_formula_free(owned);
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
        ts->filters = f;
        ts->filter_capacity = cap;
    }
    ts->filters[ts->filter_count++] = owned;
    return 0;
}

/* The effective filter of op (its own and its pools'), owned by the loop until the next
 * update: the tree may change or free its filters at any time (a pool's
 * scheduling_tag_filter set, an operation's updated, an ephemeral pool removed) while the
 * snapshot still evaluates them. A filter borrowed from the tree is copied, once per text. */
static int op_filter(struct ps_tree_sched *ts, const struct ps_tree_op *op,
                     const struct ps_formula **filter, struct ps_error *err)
{
    struct ps_formula *owned = NULL;
    int rc = ps_tree_op_effective_filter(op, filter, &owned, err);
    if (rc != 0 || (!owned && !*filter))
        return rc;
    if (!owned) {
        const char *text = ps_formula_text(*filter);
        struct ps_formula *copy = ps_strmap_get(&ts->filter_copies, text);
        if (copy) {
            *filter = copy;
            return 0;
        }
        if ((rc = ps_formula_parse(text, &owned, err)) != 0)
            return rc;
        if ((rc = ps_strmap_put(&ts->filter_copies, ps_formula_text(owned), owned)) != 0) {
            ps_formula_free(owned);
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
    }
    *filter = owned;
    return keep_filter(ts, owned, err);
}

void ps_tree_sched_release(struct ps_tree_sched *ts)
{
    ps_tree_fs_release(&ts->fs);
    ps_tree_fs_release(&ts->next);
    free(ts->names);
    free(ts->next_names);
    ps_fs_update_free(ts->update);
    ps_sched_snapshot_free(ts->snap);
    ps_sched_snapshot_free(ts->spare_snap);
    free(ts->starvation);
    free(ts->sched_ops);
    free(ts->preempt_ops);
    free(ts->subtree_eligible);
    free(ts->high_priority);
    free(ts->eligible_ops);
    ps_preempt_scratch_free(ts->preempt_scratch);
    free(ts->user);
    free(ts->op_cache);
    free(ts->weight_sums);
    drop_filters(ts);
    ps_strmap_release(&ts->filter_copies);
    free(ts->filters);
    ps_sched_result_release(&ts->result);
    ps_preempt_result_release(&ts->victims);
    free(ts->allocs);
    ps_formula_free(ts->ssd_filter);
    memset(ts, 0, sizeof *ts);
}

static int grow(struct ps_tree_sched *ts, int count, struct ps_error *err)
{
    if (count <= ts->capacity)
        return 0;
    int cap = ts->capacity ? ts->capacity : 16;
    while (cap < count)
        cap *= 2;
    struct ps_starvation_element *st = realloc(ts->starvation, (size_t)cap * sizeof *st);
    if (st)
        ts->starvation = st;
    struct ps_sched_operation *so = realloc(ts->sched_ops, (size_t)cap * sizeof *so);
    if (so)
        ts->sched_ops = so;
    struct ps_preempt_operation *po = realloc(ts->preempt_ops, (size_t)cap * sizeof *po);
    if (po)
        ts->preempt_ops = po;
    void **u = realloc(ts->user, (size_t)cap * sizeof *u);
    if (u)
        ts->user = u;
    uint8_t *se = realloc(ts->subtree_eligible, (size_t)cap);
    if (se)
        ts->subtree_eligible = se;
    uint8_t *hp = realloc(ts->high_priority, (size_t)cap);
    if (hp)
        ts->high_priority = hp;
    int *eo = realloc(ts->eligible_ops, (size_t)cap * sizeof *eo);
    if (eo)
        ts->eligible_ops = eo;
    double *ws = realloc(ts->weight_sums, (size_t)cap * sizeof *ws);
    if (ws)
        ts->weight_sums = ws;
    struct ps_tree_sched_op_cache *oc = realloc(ts->op_cache, (size_t)cap * sizeof *oc);
    if (oc) {
        ts->op_cache = oc;
        for (int i = ts->capacity; i < cap; i++)
            oc[i].op = NULL;
    }
    if (!st || !so || !po || !u || !se || !hp || !eo || !ws || !oc)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ts->capacity = cap;
    return 0;
}

/* The cache entry of element for op, or NULL when it holds another operation or the tree
 * changed since (its generation). */
static const struct ps_tree_sched_op_cache *cached(const struct ps_tree_sched *ts,
                                                   const struct ps_tree_op *op, int element)
{
    if (!ts->op_cache || element >= ts->capacity || ts->op_cache[element].op != op ||
        ts->kept_tree != op->tree || ts->kept_generation != ps_pool_tree_generation(op->tree))
        return NULL;
    return &ts->op_cache[element];
}

void ps_tree_sched_update_lists(struct ps_tree_sched *ts, const struct ps_tree_op *op,
                                int element, struct ps_preemptible *lists)
{
    if (!lists || !op || element < 0 || element >= ts->fs.count)
        return;
    ts->preempt_ops[element].lists = lists;
    struct ps_preemptible_config pc;
    const struct ps_tree_sched_op_cache *c = cached(ts, op, element);
    if (c)
        pc = c->pc;
    else
        ps_tree_op_preemptible_config(op, &pc);   /* thresholds: operation, then pools, then tree */
    pc.total = ts->fs.input.total;
    const struct ps_fs_element_output *o = &ts->fs.elems[element].out;
    ps_preemptible_update(lists, &o->fair_share.total, &o->demand_share, &pc);
}

/* EffectiveAggressivePreemptionAllowed of an operation: false for a gang operation without
 * allow_aggressive_preemption_for_gang_operations, else its pool's. */
static bool aggressive_preemption_allowed(const struct ps_tree_config *cfg, const struct ps_tree_op *op)
{
    if (op->is_gang && !cfg->allow_aggressive_preemption_for_gang_operations)
        return false;
    return ps_pool_aggressive_preemption_allowed(op->pool);
}

struct fifo_child {
    int parent, fifo_index, element;
};

static int by_parent_fifo(const void *a, const void *b)
{
    const struct fifo_child *x = a, *y = b;
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    if (x->fifo_index != y->fifo_index)
        return x->fifo_index < y->fifo_index ? -1 : 1;
    return x->element < y->element ? -1 : x->element > y->element;
}

/* max_schedulable_element_count_in_fifo_pool (tree_config.h), as upstream's
 * BuildSchedulableChildrenLists: in each FIFO pool, children in FIFO order; a schedulable one
 * (runnable with something pending) is held back when the pool already has the maximum of
 * schedulable children and its fair share is zero. */
static int limit_fifo_pools(struct ps_tree_sched *ts, const struct ps_tree_config *cfg,
                            struct ps_error *err)
{
    int n = ts->fs.count;
    for (int i = 0; i < n; i++)
        if (ts->fs.ops[i])
            ts->fs.ops[i]->fifo_limited = false;
    if (!cfg->max_schedulable_element_count_in_fifo_pool.set)
        return 0;
    int64_t max = cfg->max_schedulable_element_count_in_fifo_pool.value;
    struct fifo_child *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (!c)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int m = 0;
    for (int i = 0; i < n; i++) {
        const struct ps_fs_element *e = &ts->fs.elems[i];
        if (!ts->fs.ops[i] || e->in.parent < 0)
            continue;
        const struct ps_fs_element *p = &ts->fs.elems[e->in.parent];
        if (ts->fs.fs_pools[p->in.pool].in.mode != PS_MODE_FIFO)
            continue;
        c[m++] = (struct fifo_child){e->in.parent, e->out.fifo_index, i};
    }
    qsort(c, (size_t)m, sizeof *c, by_parent_fifo);
    int64_t count = 0;
    for (int k = 0; k < m; k++) {
        if (k == 0 || c[k].parent != c[k - 1].parent)
            count = 0;
        struct ps_sched_operation *so = &ts->sched_ops[c[k].element];
        if (!so->runnable || so->pending_count <= 0)
            continue;
        const struct ps_share *fair = &ts->fs.elems[c[k].element].out.fair_share.total;
        if (count >= max && ps_share_max_component(*fair) <= 1e-9) {
            so->runnable = false;
            ts->fs.ops[c[k].element]->fifo_limited = true;
        } else {
            count++;
        }
    }
    free(c);
    return 0;
}

/* Promised guarantee shares and guarantee priority (operation.h, tree_config.h): an operation
 * below a pool with compute_promised_guarantee_fair_share (the nearest) is promised that
 * pool's strong guarantee share split among the pool's running operations by weight; with
 * enable_guarantee_priority_scheduling, one whose usage share is below its promise in some
 * resource is served by the guarantee priority stage before the regular one (upstream's High
 * scheduling priority). */
static void guarantee_priority(struct ps_tree_sched *ts, const struct ps_tree_config *cfg)
{
    int n = ts->fs.count;
    ts->high_priority_count = 0;
    double *wsum = ts->weight_sums;
    for (int i = 0; i < n; i++) {
        ts->high_priority[i] = 0;
        wsum[i] = 0.0;
    }
    for (int i = 0; i < n; i++) {
        int a = ts->fs.ops[i] ? ts->op_cache[i].promise_pool : -1;
        if (a >= 0)
            wsum[a] += ts->fs.elems[i].out.weight;
    }
    for (int i = 0; i < n; i++) {
        struct ps_tree_op *op = ts->fs.ops[i];
        if (!op)
            continue;
        op->high_priority = false;
        op->promised_guarantee_share = ps_share_fill(0.0);
        int a = ts->op_cache[i].promise_pool;
        if (a < 0 || wsum[a] <= 0)
            continue;
        const struct ps_fs_element_output *o = &ts->fs.elems[i].out;
        op->promised_guarantee_share = ps_share_scale(ts->fs.pools[a]->fs_pool.strong_guarantee_share,
                                                      o->weight / wsum[a]);
        if (!cfg->enable_guarantee_priority_scheduling)
            continue;
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (op->promised_guarantee_share.v[r] > o->usage_share.v[r] + 1e-9)
                op->high_priority = true;
        if (op->high_priority) {
            ts->high_priority[i] = 1;
            ts->high_priority_count++;
        }
    }
}

/* AreRegularAllocationsOnSsdNodesAllowed: allow_regular_allocations_on_ssd_nodes of every pool
 * on the way to the root. */
static bool regular_on_ssd_allowed(const struct ps_tree_op *op)
{
    for (const struct ps_pool *p = op->pool; p && !p->is_root; p = p->parent)
        if (p->config.allow_regular_allocations_on_ssd_nodes.set &&
            !p->config.allow_regular_allocations_on_ssd_nodes.value)
            return false;
    return true;
}

static bool is_ssd_medium(const struct ps_tree_config *cfg, const char *medium)
{
    if (!medium)
        return false;
    const struct ps_string_list *names = &cfg->ssd_priority_preemption.medium_names;
    for (int i = 0; i < names->count; i++)
        if (strcmp(names->items[i], medium) == 0)
            return true;
    return false;
}

/* Whether what the last update derived from the configuration alone still holds: tree is the
 * last update's, at the same generation (nothing in its config or structure changed since).
 * Else empties the elements' cache and lets go of the filters. Nothing is kept until the
 * caller has rebuilt the starvation elements (kept_tree names no tree until then), so a build
 * that failed half way is not taken as kept. */
static bool keep_derived(struct ps_tree_sched *ts, const struct ps_pool_tree *tree)
{
    bool kept = ts->kept_tree == tree && ts->kept_generation == ts->fs.generation;
    ts->kept_tree = NULL;
    if (!kept) {
        drop_filters(ts);
        for (int i = 0; i < ts->capacity; i++)
            ts->op_cache[i].op = NULL;
    }
    return kept;
}

/* The nearest pool above element i with compute_promised_guarantee_fair_share (its element),
 * or -1: whose promise op shares (guarantee_priority). */
static int promise_pool_of(const struct ps_tree_fs *fs, int i)
{
    int a = fs->elems[i].in.parent;
    while (a >= 0 && !(fs->pools[a] && fs->pools[a]->config.compute_promised_guarantee_fair_share))
        a = fs->elems[a].in.parent;
    return a;
}

/* Derives element i's cache entry from op and the tree's config. */
static int fill_op_cache(struct ps_tree_sched *ts, const struct ps_tree_config *cfg,
                         const struct ps_tree_op *op, int i, struct ps_error *err)
{
    struct ps_tree_sched_op_cache *c = &ts->op_cache[i];
    c->op = NULL;
    int rc = op_filter(ts, op, &c->filter, err);
    if (rc != 0)
        return rc;
    ps_tree_op_preemptible_config(op, &c->pc);
    c->aggressive_preemption_disallowed = !aggressive_preemption_allowed(cfg, op);
    c->regular_on_ssd_allowed = regular_on_ssd_allowed(op);
    c->promise_pool = promise_pool_of(&ts->fs, i);
    c->state_kept = false;
    c->op = op;
    return 0;
}

/* The host's op_state answer for op at element i (its cache entry c, filter preset in *so);
 * the last update's again when the host keeps versions and op's did not change (c is emptied
 * whenever its filter may change: fill_op_cache). */
static struct ps_preemptible *op_state(const struct ps_tree_host *host, struct ps_tree_op *op,
                                       int i, struct ps_tree_sched_op_cache *c,
                                       struct ps_sched_operation *so,
                                       struct ps_preempt_operation *po)
{
    if (!host || !host->op_state)
        return NULL;
    if (host->op_state_versioned && c->state_kept && c->state_version == op->state_version) {
        *so = c->state;
        *po = c->preempt;
        return c->lists;
    }
    struct ps_preemptible *lists = host->op_state(host->ctx, op, i, so, po);
    c->state_kept = host->op_state_versioned;
    c->state_version = op->state_version;
    c->state = *so;
    c->preempt = *po;
    c->lists = lists;
    return lists;
}

static int new_snapshot(struct ps_tree_sched *ts, struct ps_error *err)
{
    int n = ts->fs.count;
    /* the last snapshot's buffers, when the tree kept its structure */
    ts->snap = ts->spare_snap;
    ts->spare_snap = NULL;
    int rc = ps_sched_snapshot_renew(ts->fs.elems, n, ts->fs.fs_pools, ts->fs.pool_count,
                                     ts->sched_ops, &ts->options, &ts->snap, err);
    /* Heartbeats read live usage, as upstream's resource tree: allocations that started or
     * ended while the update ran off the host's lock (the operations' usage is current, the
     * build's is begin's) count in the new snapshot too, else they would be scheduled past
     * the limits, or counted against them, until the next update. */
    for (int i = 0; rc == 0 && i < n; i++) {
        const struct ps_tree_op *op = ts->fs.ops[i];
        if (op && !ps_resources_equal(op->usage, ts->fs.elems[i].in.usage))
            rc = ps_sched_set_operation_usage(ts->snap, i, op->usage, err);
    }
    return rc;
}

/* Element names of fs copied into *buf (grown as needed): the build's point into the tree,
 * which may free them while the update runs without the host's lock. */
static int own_names(struct ps_tree_fs *fs, char **buf, size_t *cap, struct ps_error *err)
{
    size_t need = 0;
    for (int i = 0; i < fs->count; i++)
        if (fs->elems[i].in.name)
            need += strlen(fs->elems[i].in.name) + 1;
    if (need > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < need)
            c *= 2;
        char *b = realloc(*buf, c);
        if (!b)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        *buf = b;
        *cap = c;
    }
    char *at = *buf;
    for (int i = 0; i < fs->count; i++) {
        const char *name = fs->elems[i].in.name;
        if (!name)
            continue;
        size_t len = strlen(name) + 1;
        memcpy(at, name, len);
        fs->elems[i].in.name = at;
        at += len;
    }
    return 0;
}

int ps_tree_sched_update_begin(struct ps_tree_sched *ts, struct ps_pool_tree *tree,
                               int64_t now_ms, struct ps_error *err)
{
    ts->phase = PS_TREE_UPDATE_IDLE;
    int rc = ps_pool_tree_build_fs(tree, &ts->next, now_ms, err);
    /* A build that kept the buffer's elements kept their names, copied when it was whole. */
    if (rc == 0 && !ts->next.kept)
        rc = own_names(&ts->next, &ts->next_names, &ts->next_names_cap, err);
    if (rc != 0) {
        ts->next.tree = NULL;   /* names may point into the tree: the next build starts over */
        return rc;
    }
    /* A resource some node leaves unlimited is not shared: it counts 0 in the total (jobs of
     * the tree may not request it). */
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (ts->next.input.total.v[r] >= PS_RES_INFINITE)
            ts->next.input.total.v[r] = 0;
    ts->next_now_ms = now_ms;
    ts->phase = PS_TREE_UPDATE_BUILT;
    return 0;
}

int ps_tree_sched_update_run(struct ps_tree_sched *ts, struct ps_error *err)
{
    if (ts->phase != PS_TREE_UPDATE_BUILT)
        return ps_error_set(err, PS_ESTATE, "no fair share update was begun");
    struct ps_tree_fs *fs = &ts->next;
    int rc = ps_fs_update_run(ts->update, fs->elems, fs->count, fs->fs_pools, fs->pool_count,
                              &fs->options, &fs->input, err);
    ts->phase = rc == 0 ? PS_TREE_UPDATE_RAN : PS_TREE_UPDATE_IDLE;
    return rc;
}

void ps_tree_sched_update_abort(struct ps_tree_sched *ts)
{
    ts->phase = PS_TREE_UPDATE_IDLE;
}

int ps_tree_sched_update(struct ps_tree_sched *ts, struct ps_pool_tree *tree, int64_t now_ms,
                         const struct ps_tree_host *host, int *starvation_changed,
                         struct ps_error *err)
{
    if (starvation_changed)
        *starvation_changed = 0;
    int rc = ps_tree_sched_update_begin(ts, tree, now_ms, err);
    if (rc == 0)
        rc = ps_tree_sched_update_run(ts, err);
    if (rc == 0)
        rc = ps_tree_sched_update_finish(ts, tree, host, starvation_changed, err);
    return rc;
}

/* Operations' scheduling_index (operation.h) in the new snapshot's order. */
static int scheduling_index(struct ps_tree_sched *ts, struct ps_error *err)
{
    if (ts->no_scheduling_index)
        return 0;
    int n = ts->fs.count;
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    if (!order)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ps_sched_scheduling_order(ts->snap, order);
    for (int i = 0; i < n; i++)
        if (ts->fs.ops[i])
            ts->fs.ops[i]->scheduling_index = order[i];
    free(order);
    return 0;
}

int ps_tree_sched_update_finish(struct ps_tree_sched *ts, struct ps_pool_tree *tree,
                                const struct ps_tree_host *host, int *starvation_changed,
                                struct ps_error *err)
{
    if (starvation_changed)
        *starvation_changed = 0;
    if (ts->phase != PS_TREE_UPDATE_RAN)
        return ps_error_set(err, PS_ESTATE, "no fair share update has run");
    ts->phase = PS_TREE_UPDATE_IDLE;
    /* Results only go to the elements they were computed for: any structural change since
     * begin (the tree's generation) and nothing is applied; the previous snapshot stays. */
    if (ts->next.tree != tree || ts->next.generation != ps_pool_tree_generation(tree))
        return ps_error_set(err, PS_ESTATE,
                            "pool tree \"%s\" changed during its fair share update; build again",
                            ps_pool_tree_name(tree));
    int64_t now_ms = ts->next_now_ms;
    /* The computed buffer becomes the current one; the old one is the next update's. */
    struct ps_tree_fs spare = ts->fs;
    ts->fs = ts->next;
    ts->next = spare;
    char *names = ts->names;
    size_t names_cap = ts->names_cap;
    ts->names = ts->next_names;
    ts->names_cap = ts->next_names_cap;
    ts->next_names = names;
    ts->next_names_cap = names_cap;
    /* The snapshot borrows filters of operations that may be gone by now: heartbeats lose it
     * first; the next one is built in its buffers (new_snapshot). */
    if (ts->snap) {
        ps_sched_snapshot_free(ts->spare_snap);
        ts->spare_snap = ts->snap;
        ts->snap = NULL;
    }
    int n = ts->fs.count;
    int rc = grow(ts, n, err);
    if (rc != 0)
        return rc;
    bool kept = keep_derived(ts, tree);
    ts->alert_count = ps_fs_update_alert_count(ts->update);
    if ((rc = ps_pool_tree_apply_fs(tree, &ts->fs, err)) != 0)
        return rc;

    const struct ps_tree_config *cfg = ps_pool_tree_config(tree);
    struct ps_starvation_config scfg;
    ps_tree_config_starvation_config(cfg, &scfg);
    ps_tree_config_preempt_config(cfg, &ts->preempt_config);
    ts->overcommit_duration_ms = cfg->allowed_node_resources_overcommit_duration_ms;
    if ((rc = kept ? ps_pool_tree_refresh_starvation(tree, &ts->fs, ts->starvation, err)
                   : ps_pool_tree_build_starvation(tree, &ts->fs, ts->starvation, err)) != 0)
        return rc;
    ts->kept_tree = tree;
    ts->kept_generation = ts->fs.generation;
    int changed = 0;
    if ((rc = ps_starvation_update(ts->starvation, n, &scfg, now_ms, &changed, err)) != 0)
        return rc;
    if ((rc = ps_pool_tree_apply_starvation(tree, &ts->fs, ts->starvation, err)) != 0)
        return rc;
    if (starvation_changed)
        *starvation_changed = changed;
    ts->any_starving = false;
    for (int i = 0; i < n; i++)
        if (ts->fs.ops[i] && (ts->starvation[i].lowest_starving_ancestor >= 0 ||
                              ts->starvation[i].lowest_aggressively_starving_ancestor >= 0))
            ts->any_starving = true;

    struct ps_resources total = ts->fs.input.total;
    ps_preemptible_config_init(&ts->preemptible_config);
    ts->preemptible_config.threshold = ts->preempt_config.preemption_satisfaction_threshold;
    ts->preemptible_config.aggressive_threshold =
        ts->preempt_config.aggressive_preemption_satisfaction_threshold;
    ts->preemptible_config.total = total;

    for (int i = 0; i < n; i++) {
        /* the operations are cold, scattered records: ask for the next ones' ahead */
        if (i + 4 < n && ts->fs.ops[i + 4]) {
            __builtin_prefetch(ts->fs.ops[i + 4]);
            __builtin_prefetch(&ts->fs.ops[i + 4]->user_data);
        }
        struct ps_sched_operation *so = &ts->sched_ops[i];
        struct ps_preempt_operation *po = &ts->preempt_ops[i];
        memset(so, 0, sizeof *so);
        so->allocation.v[PS_RES_USER_SLOTS] = 1;
        *po = (struct ps_preempt_operation){NULL, false, -1, false, false};
        ts->user[i] = NULL;
        struct ps_tree_op *op = ts->fs.ops[i];
        if (!op)
            continue;
        ts->user[i] = op->user_data;
        if (ts->op_cache[i].op != op && (rc = fill_op_cache(ts, cfg, op, i, err)) != 0)
            return rc;
        struct ps_tree_sched_op_cache *c = &ts->op_cache[i];
        so->filter = c->filter;
        struct ps_preemptible *lists = op_state(host, op, i, c, so, po);
        ps_tree_sched_update_lists(ts, op, i, lists);
        po->aggressive_preemption_disallowed = c->aggressive_preemption_disallowed;
        po->ssd = is_ssd_medium(cfg, so->disk_medium);
        so->regular_on_ssd_forbidden = !po->ssd && !c->regular_on_ssd_allowed;
    }
    if ((rc = limit_fifo_pools(ts, cfg, err)) != 0)
        return rc;
    guarantee_priority(ts, cfg);
    ps_formula_free(ts->ssd_filter);
    ts->ssd_filter = NULL;
    if (cfg->ssd_priority_preemption.enable &&
        (rc = ps_formula_parse(cfg->ssd_priority_preemption.node_tag_filter, &ts->ssd_filter,
                               err)) != 0)
        return rc;
    ts->options.total = total;
    ts->options.generation = ++ts->generation;
    ts->options.fifo_order_in_fifo_pools = cfg->fifo_pool_scheduling_order == PS_FIFO_ORDER_FIFO;
    ts->options.min_spare = ps_tree_config_min_spare(cfg);
    if ((rc = new_snapshot(ts, err)) != 0)
        return rc;
    ps_preempt_subtree_eligible(ts->snap, ts->starvation, &ts->preempt_config,
                                ts->subtree_eligible);
    ts->eligible_op_count = ps_preempt_eligible_ops(ts->snap, ts->subtree_eligible,
                                                    ts->eligible_ops);
    if ((rc = scheduling_index(ts, err)) != 0)
        return rc;
    ts->last_update_ms = now_ms;
    return 0;
}

void ps_tree_sched_detach(struct ps_tree_sched *ts, int element)
{
    if (!ts->snap || element < 0 || element >= ts->fs.count || !ts->fs.ops[element])
        return;
    struct ps_sched_operation st;
    memset(&st, 0, sizeof st);
    st.allocation.v[PS_RES_USER_SLOTS] = 1;
    ps_sched_set_operation(ts->snap, element, &st, NULL);
    ts->user[element] = NULL;
    ts->preempt_ops[element] = (struct ps_preempt_operation){NULL, false, -1, false, false};
}
