/* sim_host.c — the simulator as the host of the scheduling loop (core/tree_sched.h), as
 * YTsaurus's simulator implements the strategy host and runs the real strategy: it tells the
 * loop each operation's scheduling state and each node's jobs, starts the jobs the loop
 * allocates and preempts its victims. When to run an update or a heartbeat (and which stages)
 * stays the simulator's (sim_sched.c), so idle work is skipped exactly.
 *
 * Allocation ids are job slots; the elements of the last update map back to operations and
 * memberships through sim_tree.elem_op / elem_ms.
 */
#include <stdlib.h>
#include <string.h>

#include "core/op_spec.h"
#include "sim/sim_internal.h"

struct host {
    struct ps_sim *sim;
    int tree;
    bool oom;                          /* op_state could not grow the element maps */
};

static int reserve_elems(struct sim_tree *T, int count);

/* The loop asks op_state for the elements in order, and each one's records are cold and
 * scattered (the tree's membership -> the strategy's operation -> the simulator's operation ->
 * its memberships and task -> the task's spec): ask for those of the elements ahead, one link
 * per stage, so their misses overlap instead of stalling every call. */
static void prefetch_ahead(const struct ps_tree_fs *fs, int element)
{
    int e = element + 12;
    if (e < fs->count && fs->ops[e])
        __builtin_prefetch(&fs->ops[e]->user_data);
    e = element + 8;
    if (e < fs->count && fs->ops[e] && fs->ops[e]->user_data)
        __builtin_prefetch(&((const struct ps_operation *)fs->ops[e]->user_data)->host);
    e = element + 6;
    const struct sim_op *o = e < fs->count ? ps_tree_op_host(fs->ops[e]) : NULL;
    if (o) {
        __builtin_prefetch(&o->pending);
        __builtin_prefetch(&o->m_count);
    }
    e = element + 4;
    o = e < fs->count ? ps_tree_op_host(fs->ops[e]) : NULL;
    if (o) {
        __builtin_prefetch(o->ms);
        if (o->cur_task >= 0)
            __builtin_prefetch(&o->tasks[o->cur_task]);
    }
    e = element + 2;
    o = e < fs->count ? ps_tree_op_host(fs->ops[e]) : NULL;
    if (o && o->cur_task >= 0) {
        const struct ps_scenario_task *spec = o->tasks[o->cur_task].spec;
        __builtin_prefetch(&spec->resources);
        __builtin_prefetch(&spec->disk_medium);
    }
}

/* The index of o's membership m, -1. */
static int membership_of(const struct sim_op *o, const struct ps_tree_op *m)
{
    for (int k = 0; k < o->m_count; k++)
        if (o->ms[k].m == m)
            return k;
    return -1;
}

/* Every change of the answer bumps m->state_version (sim_op_sync): the loop asks only when it
 * moved, map_kept maps the others after the update. */
static struct ps_preemptible *op_state(void *ctx, struct ps_tree_op *m, int element,
                                       struct ps_sched_operation *sched,
                                       struct ps_preempt_operation *preempt)
{
    struct host *h = ctx;
    struct ps_sim *sim = h->sim;
    struct sim_tree *T = &sim->trees[h->tree];
    prefetch_ahead(&T->ts.fs, element);
    struct sim_op *o = ps_tree_op_host(m);
    if (!o)
        return NULL;   /* not expected: every operation of a tree is the simulator's */
    int k = membership_of(o, m);
    if (k < 0)
        return NULL;
    if (reserve_elems(T, element + 1) != 0) {
        h->oom = true;
        return NULL;
    }
    struct sim_membership *ms = &o->ms[k];
    if (ms->elem != element)
        sim->elem_epoch++;
    ms->elem = element;
    T->elem_op[element] = o->index;
    T->elem_ms[element] = k;
    sim_op_state(sim, o->index, k, sched);
    ms->fed_shape = sched->allocation;
    ms->fed_disk = sched->disk_medium;
    if (o->op)
        ps_operation_spec_preempt_settings(&o->op->spec, &preempt->graceful,
                                           &preempt->max_unpreemptible_running_allocation_count);
    return ms->lists;
}

/* The elements of the node's allocations anew from its jobs' memberships (cold records: all
 * of them are asked for before any is read, so the misses overlap). */
void sim_node_allocs_refresh(struct ps_sim *sim, struct sim_node *n)
{
    for (int k = 0; k < n->job_count; k++)
        __builtin_prefetch(&sim->jobs[n->jobs[k]].op);
    for (int k = 0; k < n->job_count; k++) {
        const struct sim_job *job = &sim->jobs[n->jobs[k]];
        n->allocs[k].op = sim->ops[job->op].ms[job->ms].elem;
    }
    n->allocs_epoch = sim->elem_epoch;
}

/* The node's allocations for the loop; jobs of operations out of the snapshot (detached) are
 * the node's other usage. */
static int add_node(struct ps_sim *sim, int tree, struct sim_node *n,
                    struct ps_resources *other, struct ps_error *err)
{
    int count = sim->trees[tree].ts.fs.count;
    if (n->allocs_epoch != sim->elem_epoch)
        sim_node_allocs_refresh(sim, n);
    if (sim->host_alloc_cap - sim->host_alloc_count < n->job_count) {
        int cap = sim->host_alloc_cap ? 2 * sim->host_alloc_cap : 64;
        while (cap - sim->host_alloc_count < n->job_count)
            cap *= 2;
        void *grown = realloc(sim->host_allocs, (size_t)cap * sizeof *sim->host_allocs);
        if (!grown)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        sim->host_allocs = grown;
        sim->host_alloc_cap = cap;
    }
    for (int k = 0; k < n->job_count; k++) {
        const struct ps_node_allocation *a = &n->allocs[k];
        if (a->op < 0 || a->op >= count) {
            if (!a->leaving)
                *other = ps_resources_add(*other, a->resources);
            continue;
        }
        sim->host_allocs[sim->host_alloc_count++] = *a;
    }
    return 0;
}

/* A node is in one tree: every job on it is the tree's. */
static int allocations(void *ctx, int64_t node, const struct ps_node_allocation **allocs,
                       int *count, struct ps_resources *other, struct ps_error *err)
{
    struct host *h = ctx;
    struct ps_sim *sim = h->sim;
    const struct sim_tree *T = &sim->trees[h->tree];
    sim->host_alloc_count = 0;
    *other = ps_resources_zero();
    int rc = 0;
    if (node >= 0)
        rc = add_node(sim, h->tree, &sim->nodes[node], other, err);
    else
        for (int i = 0; rc == 0 && i < T->node_count; i++)
            rc = add_node(sim, h->tree, &sim->nodes[T->nodes[i]], other, err);
    *allocs = sim->host_allocs;
    *count = sim->host_alloc_count;
    return rc;
}

static int start(void *ctx, int64_t node, int element, struct ps_resources resources,
                 bool *started, struct ps_error *err)
{
    struct host *h = ctx;
    struct ps_sim *sim = h->sim;
    struct sim_tree *T = &sim->trees[h->tree];
    int op = T->elem_op[element];
    if (op < 0)
        return ps_error_set(err, PS_ESTATE, "simulator: allocation for an unknown element %d",
                            element);
    /* upstream's controller refuses a node banned for the operation (core/node_ban.h) */
    if (!ps_node_ban_may_start(ps_strmap_get(&sim->ops[op].banned_nodes,
                                             sim->nodes[node].node->id) != NULL)) {
        *started = false;
        return 0;
    }
    if (!sim_tentative_may_start(&sim->ops[op], T->name)) {   /* its sample there runs */
        *started = false;
        return 0;
    }
    T->runnable_pending--;   /* the snapshot took it off already */
    int rc = sim_job_start(sim, op, T->elem_ms[element], (int)node, resources, err);
    if (rc != 0)
        return rc;
    sim_tentative_job_started(&sim->ops[op], T->name, sim->now);
    *started = true;
    if (!sim->ops[op].touched) {
        sim->ops[op].touched = true;
        sim->touched[sim->touched_count++] = op;
    }
    sim->stats.allocations++;
    return 0;
}

/* What the stages recorded for operations they could not serve: pending reasons. */
static int scheduled(void *ctx, int64_t node, const struct ps_sched_result *res,
                     struct ps_error *err)
{
    (void)node;
    (void)err;
    struct host *h = ctx;
    struct ps_sim *sim = h->sim;
    struct sim_tree *T = &sim->trees[h->tree];
    for (int i = 0; i < res->skip_count; i++) {
        const struct ps_sched_skip *skip = &res->skips[i];
        if (skip->reason == PS_SCHED_INELIGIBLE || T->elem_op[skip->op] < 0)
            continue;
        struct sim_op *o = &sim->ops[T->elem_op[skip->op]];
        struct sim_membership *ms = &o->ms[T->elem_ms[skip->op]];
        const char *pool = NULL;
        int resource = -1;
        if (skip->reason == PS_SCHED_LIMITS && skip->element >= 0) {
            if (skip->element != skip->op && T->elem_stats[skip->element])
                pool = T->elem_stats[skip->element]->name;
            resource = ps_pending_limit_resource(T->ts.snap, skip->element, &ms->fed_shape);
        }
        /* Reasons are re-evaluated at the next fair share period when this changes them. */
        if (ms->sched_reason != skip->reason || ms->limit_pool != pool || ms->limit_resource != resource)
            sim->reasons_dirty = true;
        ms->sched_reason = skip->reason;
        ms->limit_pool = pool;
        ms->limit_resource = resource;
    }
    return 0;
}

/* The loop gives every victim the tree's timeout; a job of a task that is not interruptible
 * cannot use it and is aborted at once (docs/scheduling-loop.md). */
static int preempt(void *ctx, const struct ps_preempt_victim *v, struct ps_error *err)
{
    struct host *h = ctx;
    struct ps_sim *sim = h->sim;
    struct sim_tree *T = &sim->trees[h->tree];
    const struct sim_job *job = &sim->jobs[v->allocation_id];
    if (job->serial == 0)
        return 0;
    /* a heartbeat's victims are among the allocations it was given: its node's */
    if (sim->heartbeat_node >= 0 && job->node != sim->heartbeat_node)
        return ps_error_set(err, PS_ESTATE,
                            "simulator: the heartbeat of node %s chose a victim on node %s",
                            sim->nodes[sim->heartbeat_node].node->id, sim->nodes[job->node].node->id);
    int for_op = v->for_op >= 0 ? T->elem_op[v->for_op] : -1;
    int64_t timeout = sim->ops[job->op].tasks[job->task].spec->interruptible
                          ? v->interrupt_timeout_ms
                          : 0;
    return sim_preempt_victim(sim, v->allocation_id, for_op, v->reason, timeout, err);
}

static struct ps_tree_host loop_host(struct host *h)
{
    return (struct ps_tree_host){.ctx = h,
                                 .op_state = op_state,
                                 .op_state_versioned = true,
                                 .allocations = allocations,
                                 .start = start,
                                 .scheduled = scheduled,
                                 .preempt = preempt};
}

static void clear_elems(struct sim_tree *T, int from, int to)
{
    for (int e = from; e < to; e++) {
        T->elem_op[e] = -1;
        T->elem_ms[e] = -1;
        T->elem_runnable[e] = false;
        T->elem_stats[e] = NULL;
    }
}

/* Grows the element maps to count entries; new ones map nothing. */
static int reserve_elems(struct sim_tree *T, int count)
{
    if (count <= T->elem_cap)
        return 0;
    int cap = T->elem_cap ? T->elem_cap : 64;
    while (cap < count)
        cap *= 2;
    int *eo = realloc(T->elem_op, (size_t)cap * sizeof *eo);
    if (eo)
        T->elem_op = eo;
    int *em = realloc(T->elem_ms, (size_t)cap * sizeof *em);
    if (em)
        T->elem_ms = em;
    bool *er = realloc(T->elem_runnable, (size_t)cap * sizeof *er);
    if (er)
        T->elem_runnable = er;
    struct sim_pool_stats **es = realloc(T->elem_stats, (size_t)cap * sizeof *es);
    if (es)
        T->elem_stats = es;
    struct sim_stats_slot *sp = realloc(T->stats_cache, (size_t)cap * sizeof *sp);
    if (sp)
        T->stats_cache = sp;
    if (!eo || !em || !er || !es || !sp)
        return PS_ENOMEM;
    clear_elems(T, T->elem_cap, cap);
    for (int e = T->elem_cap; e < cap; e++)
        T->stats_cache[e].pool = NULL;
    T->elem_cap = cap;
    return 0;
}

/* The memberships of the elements the update did not ask op_state about (their answer was
 * kept: their state_version did not move), mapped as op_state maps them; their fed shape and
 * disk are the kept answer's already. */
static void map_kept(struct ps_sim *sim, struct sim_tree *T)
{
    for (int e = 0; e < T->ts.fs.count; e++) {
        struct ps_tree_op *m = T->ts.fs.ops[e];
        struct sim_op *o = m && T->elem_op[e] < 0 ? ps_tree_op_host(m) : NULL;
        if (!o)
            continue;
        int k = membership_of(o, m);
        if (k < 0)
            continue;
        o->ms[k].elem = e;
        T->elem_op[e] = o->index;
        T->elem_ms[e] = k;
    }
}

int sim_host_update(struct ps_sim *sim, int tree, int *starvation_changed, struct ps_error *err)
{
    struct sim_tree *T = &sim->trees[tree];
    /* The update builds at the tree's generation (nothing changes the tree meanwhile): at the
     * maps' own, they stay; else op_state and map_kept make them anew (growing them). */
    bool remap = !T->mapped || T->mapped_generation != ps_pool_tree_generation(T->tree);
    T->mapped = false;
    if (remap) {
        clear_elems(T, 0, T->elem_cap);
        for (int i = 0; i < sim->active_count; i++) {
            struct sim_op *o = &sim->ops[sim->active[i]];
            for (int k = 0; k < o->m_count; k++)
                if (o->ms[k].tree == tree)
                    o->ms[k].elem = -1;
        }
    }
    struct host h = {sim, tree, false};
    struct ps_tree_host host = loop_host(&h);
    int rc = ps_tree_sched_update(&T->ts, T->tree, sim->now, &host, starvation_changed, err);
    if (rc == 0 && (h.oom || reserve_elems(T, T->ts.fs.count) != 0))
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0 && remap)
        map_kept(sim, T);
    if (remap)
        sim->elem_epoch++;
    if (rc == 0)
        rc = ps_tree_sched_limits_check(&T->ts, &host, err);
    if (rc != 0) {
        ps_error_prefix(err, "fair share update of pool tree \"%s\" at %lld ms", T->name,
                        (long long)sim->now);
        return rc;
    }
    T->mapped = true;
    T->mapped_generation = T->ts.fs.generation;
    int count = T->ts.fs.count;
    T->runnable_pending = 0;
    T->min_shape = ps_resources_infinite();
    if (T->stats_generation != T->ts.fs.generation) {   /* pools may have changed names */
        for (int e = 0; e < T->elem_cap; e++)
            T->stats_cache[e].pool = NULL;
        T->stats_generation = T->ts.fs.generation;
    }
    for (int e = 0; e < count; e++) {
        const struct ps_sched_operation *st = &T->ts.sched_ops[e];
        const struct ps_pool *pool = T->ts.fs.pools[e];
        if (pool && T->stats_cache[e].pool == pool) {
            T->elem_stats[e] = T->stats_cache[e].stats;
        } else if (pool) {
            T->elem_stats[e] = sim_stats_get(sim, tree, pool->name);
            if (!T->elem_stats[e])
                return ps_error_set(err, PS_ENOMEM, "out of memory");
            T->stats_cache[e] = (struct sim_stats_slot){pool, T->elem_stats[e]};
        } else {
            bool runnable = T->elem_op[e] >= 0 && st->runnable;
            T->elem_runnable[e] = runnable;
            if (runnable) {
                T->runnable_pending += st->pending_count;
                if (st->pending_count > 0)
                    T->min_shape = ps_resources_min(T->min_shape, st->allocation);
            }
        }
    }
    return 0;
}

int sim_host_heartbeat(struct ps_sim *sim, int node, const struct ps_sched_node *sn,
                       const struct ps_tree_heartbeat_stages *stages, struct ps_error *err)
{
    int tree = sim->nodes[node].tree;
    struct host h = {sim, tree, false};
    struct ps_tree_host host = loop_host(&h);
    int64_t before = sim->stats.allocations;
    sim->heartbeat_node = node;
    int rc = ps_tree_sched_heartbeat(&sim->trees[tree].ts, &host, sn, stages, sim->now, err);
    sim->heartbeat_node = -1;
    if (rc == 0)
        rc = sim_node_waiting(sim, node, err);   /* its victims aborted at once have left */
    for (int i = 0; i < sim->touched_count; i++) {
        int op = sim->touched[i];
        sim->ops[op].touched = false;
        if (rc == 0)
            rc = sim_op_sync(sim, op, err);
    }
    sim->touched_count = 0;
    if (rc == 0 && sim->stats.allocations > before && sim_tree_changed(sim, tree) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return rc;
}

void sim_host_release(struct ps_sim *sim)
{
    free(sim->host_allocs);
    sim->host_allocs = NULL;
    sim->host_alloc_count = sim->host_alloc_cap = 0;
}
