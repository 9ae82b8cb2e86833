/* sim_sched.c — the engine's side of a simulation: fair share updates, scheduling snapshots and
 * node heartbeats, and the bookkeeping that lets idle work be skipped exactly (sim.h).
 *
 * Generations. Every change of a tree's scheduling state (an allocation started or finished,
 * a pending count or shape changed, a snapshot rebuilt) bumps tree->gen. The regular stage is a
 * pure function of the snapshot and the node's usage, and the node's usage only changes with
 * its own jobs, which bump the generation too; so a node whose last heartbeat started nothing
 * at the current generation would start nothing again (node->quiet_gen). When every node of a
 * tree is quiet the tree is dormant: its heartbeat events are dropped, and the next change
 * re-arms each node at its next heartbeat time (phase + k x period), after the last one it got.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

/* ---- generations and dormancy ----------------------------------------------------------- */

static int64_t next_heartbeat_ms(const struct ps_sim *sim, const struct sim_node *n)
{
    int64_t period = sim->sc->heartbeat_period_ms;
    int64_t t = n->last_heartbeat_ms == INT64_MIN ? n->phase_ms : n->last_heartbeat_ms + period;
    if (t < sim->now)
        t += (sim->now - t + period - 1) / period * period;
    return t;
}

static int bump(struct ps_sim *sim, int tree)
{
    struct sim_tree *T = &sim->trees[tree];
    T->gen++;
    T->quiet_count = 0;
    if (!T->dormant)
        return 0;
    T->dormant = false;
    sim_preempt_wake(sim, tree);
    for (int i = 0; i < T->node_count; i++) {
        struct sim_node *n = &sim->nodes[T->nodes[i]];
        if (n->armed)
            continue;
        if (sim_push(sim, next_heartbeat_ms(sim, n), SIM_EV_HEARTBEAT, T->nodes[i], 0) != 0)
            return PS_ENOMEM;
        n->armed = true;
    }
    return 0;
}

int sim_tree_changed(struct ps_sim *sim, int tree)
{
    sim->trees[tree].dirty = true;
    int rc = bump(sim, tree);
    if (rc != 0)
        ps_error_set(&sim->io_error, PS_ENOMEM, "out of memory");
    return rc;
}

/* ---- operations in the snapshots -------------------------------------------------------- */

static void op_state(const struct ps_sim *sim, int op, int k, struct ps_sched_operation *st)
{
    const struct sim_op *o = &sim->ops[op];
    const struct sim_membership *ms = &o->ms[k];
    int t = o->cur_task;
    st->filter = ms->m ? ms->filter : NULL;
    st->runnable = ms->m && o->state == SIM_OP_RUNNING && !ms->m->suspended;
    st->pending_count = t >= 0 ? o->tasks[t].pending : 0;
    st->allocation = sim_task_job_resources(sim, op, t >= 0 ? t : 0);
}

int sim_op_sync(struct ps_sim *sim, int op, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    o->cur_task = -1;
    for (int t = 0; t < o->task_count; t++) {
        if (o->tasks[t].pending > 0) {
            o->cur_task = t;
            break;
        }
    }
    for (int k = 0; k < o->m_count; k++) {
        struct sim_membership *ms = &o->ms[k];
        struct sim_tree *T = &sim->trees[ms->tree];
        if (!ms->m || ms->elem < 0 || !T->snap)
            continue;
        struct ps_sched_operation st;
        op_state(sim, op, k, &st);
        int64_t old = ps_sched_pending(T->snap, ms->elem);
        bool was = T->elem_runnable[ms->elem];
        if (st.runnable == was && st.pending_count == old &&
            ps_resources_equal(st.allocation, ms->fed_shape))
            continue;
        int rc = ps_sched_set_operation(T->snap, ms->elem, &st, err);
        if (rc != 0)
            return rc;
        T->runnable_pending += (st.runnable ? st.pending_count : 0) - (was ? old : 0);
        if (st.runnable && st.pending_count > 0)
            T->min_shape = ps_resources_min(T->min_shape, st.allocation);
        T->elem_runnable[ms->elem] = st.runnable;
        ms->fed_shape = st.allocation;
        rc = sim_tree_changed(sim, ms->tree);
        if (rc != 0)
            return ps_error_set(err, rc, "out of memory");
    }
    return 0;
}

/* ---- fair share updates ----------------------------------------------------------------- */

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
    struct ps_sched_operation *os = realloc(T->op_states, (size_t)cap * sizeof *os);
    if (os)
        T->op_states = os;
    if (!eo || !em || !er || !es || !os)
        return PS_ENOMEM;
    T->elem_cap = cap;
    return 0;
}

/* A new snapshot from the update just applied: every running operation with the shape and
 * pending count of its current task, usage as of now. */
static int rebuild_snapshot(struct ps_sim *sim, int tree, struct ps_error *err)
{
    struct sim_tree *T = &sim->trees[tree];
    int count = T->fs.count;
    if (reserve_elems(T, count) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (int e = 0; e < count; e++) {
        T->elem_op[e] = -1;
        T->elem_ms[e] = -1;
        T->elem_runnable[e] = false;
        T->elem_stats[e] = NULL;
        /* Placeholder for operation elements no simulated operation claims (none expected). */
        T->op_states[e] = (struct ps_sched_operation){.allocation = {{1, 0, 0, 0, 0}}};
    }
    for (int i = 0; i < sim->active_count; i++) {
        int op = sim->active[i];
        struct sim_op *o = &sim->ops[op];
        for (int k = 0; k < o->m_count; k++) {
            struct sim_membership *ms = &o->ms[k];
            if (ms->tree != tree)
                continue;
            ms->elem = ms->m ? ms->m->fs_index : -1;
            if (ms->elem < 0)
                continue;
            T->elem_op[ms->elem] = op;
            T->elem_ms[ms->elem] = k;
            op_state(sim, op, k, &T->op_states[ms->elem]);
            ms->fed_shape = T->op_states[ms->elem].allocation;
        }
    }
    T->runnable_pending = 0;
    T->min_shape = ps_resources_infinite();
    for (int e = 0; e < count; e++) {
        if (T->fs.pools[e]) {
            T->elem_stats[e] = sim_stats_get(sim, tree, T->fs.pools[e]->name);
            if (!T->elem_stats[e])
                return ps_error_set(err, PS_ENOMEM, "out of memory");
        } else if (T->op_states[e].runnable) {
            T->elem_runnable[e] = true;
            T->runnable_pending += T->op_states[e].pending_count;
            if (T->op_states[e].pending_count > 0)
                T->min_shape = ps_resources_min(T->min_shape, T->op_states[e].allocation);
        }
    }
    ps_sched_snapshot_free(T->snap);
    T->snap = NULL;
    T->sched_options.generation = ++sim->snapshot_generation;
    return ps_sched_snapshot_new(T->fs.elems, count, T->fs.fs_pools, T->fs.pool_count, T->op_states, &T->sched_options, &T->snap, err);
}

static int update_tree(struct ps_sim *sim, int tree, bool *performed, struct ps_error *err)
{
    struct sim_tree *T = &sim->trees[tree];
    *performed = false;
    if (T->snap && !T->dirty && !T->integral && !T->keep_updating && !sim->options.exhaustive) {
        sim->stats.fair_share_updates_skipped++;
        return 0;
    }
    int rc = ps_pool_tree_build_fs(T->tree, &T->fs, sim->now, err);
    T->fs.input.total = T->fs_total;
    if (rc == 0)
        rc = ps_fs_update_run(T->update, T->fs.elems, T->fs.count, T->fs.fs_pools, T->fs.pool_count,
                              &T->fs.options, &T->fs.input, err);
    if (rc == 0)
        rc = ps_pool_tree_apply_fs(T->tree, &T->fs, err);
    if (rc != 0) {
        ps_error_prefix(err, "fair share update of pool tree \"%s\" at %lld ms", T->name,
                        (long long)sim->now);
        return rc;
    }
    T->integral = false;
    for (int e = 0; e < T->fs.count; e++)
        if (T->fs.pools[e] && T->fs.fs_pools[T->fs.elems[e].in.pool].in.guarantee_type != PS_GUARANTEE_NONE)
            T->integral = true;
    rc = rebuild_snapshot(sim, tree, err);
    /* Starvation check, allocation classes, limits check (sim_preempt.c): they read the new
     * snapshot's element map; the fs results are those just applied. */
    if (rc == 0)
        rc = sim_preempt_tree_updated(sim, tree, err);
    if (rc != 0)
        return rc;
    for (int e = 0; e < T->fs.count; e++) {
        struct sim_pool_stats *st = T->elem_stats[e];
        if (st) {
            sim_stats_set_fair_share(sim, st, T->fs.pools[e]->dynamic.fair_share_ratio);
            st->seen_update = sim->update_serial;
        }
    }
    for (int i = 0; i < T->stats_count; i++)   /* pools gone since (ephemeral) */
        if (T->stats[i]->seen_update != sim->update_serial)
            sim_stats_set_fair_share(sim, T->stats[i], 0.0);
    sim_pools_rows_build(sim, tree);
    T->dirty = false;
    sim->stats.fair_share_updates++;
    *performed = true;
    /* A new snapshot is a new scheduling state; but with nothing pending no heartbeat can start
     * anything whatever the fair shares, so dormant heartbeats stay dormant (the next pending
     * job wakes them through sim_op_sync). */
    if (T->runnable_pending == 0 && T->dormant) {
        T->gen++;
        return 0;
    }
    rc = bump(sim, tree);
    if (rc != 0)
        return ps_error_set(err, rc, "out of memory");
    return 0;
}

int sim_fair_share_event(struct ps_sim *sim, struct ps_error *err)
{
    sim->update_serial++;
    bool any = false;
    for (int t = 0; t < sim->tree_count; t++) {
        bool performed;
        int rc = update_tree(sim, t, &performed, err);
        if (rc != 0)
            return rc;
        any = any || performed;
    }
    /* Reasons depend on the update's results and on what heartbeats recorded: evaluated when
     * either changed, so skipping an update never changes them. */
    if (any || sim->reasons_dirty)
        for (int i = 0; i < sim->active_count; i++)
            sim_pending_reason_update(sim, sim->active[i], true);
    sim->reasons_dirty = false;
    sim_pools_rows_write(sim);
    return 0;
}

/* ---- heartbeats ------------------------------------------------------------------------- */

static void record_skips(struct ps_sim *sim, struct sim_tree *T)
{
    const struct ps_sched_result *res = &sim->sched;
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
            struct ps_resources need = ps_resources_add(ps_sched_usage(T->snap, skip->element),
                                                        ms->fed_shape);
            struct ps_resources limits = ps_sched_limits(T->snap, skip->element);
            for (int r = 0; r < PS_RES_COUNT && resource < 0; r++)
                if (need.v[r] > limits.v[r])
                    resource = r;
        }
        /* Reasons are re-evaluated at the next fair share period when this changes them. */
        if (ms->sched_reason != skip->reason || ms->limit_pool != pool || ms->limit_resource != resource)
            sim->reasons_dirty = true;
        ms->sched_reason = skip->reason;
        ms->limit_pool = pool;
        ms->limit_resource = resource;
    }
}

int sim_heartbeat_commit(struct ps_sim *sim, int node, const struct ps_preempt_victim *victims,
                         int victim_count, struct ps_error *err)
{
    struct sim_node *n = &sim->nodes[node];
    struct sim_tree *T = &sim->trees[n->tree];
    const struct ps_sched_result *res = &sim->sched;
    T->runnable_pending -= res->allocation_count;   /* the snapshot took them off already */
    for (int i = 0; i < res->allocation_count; i++) {
        const struct ps_sched_allocation *a = &res->allocations[i];
        int op = T->elem_op[a->op];
        if (op < 0)
            return ps_error_set(err, PS_ESTATE, "simulator: allocation for an unknown element %d", a->op);
        int rc = sim_job_start(sim, op, T->elem_ms[a->op], node, a->resources, err);
        if (rc != 0)
            return rc;
        if (!sim->ops[op].touched) {
            sim->ops[op].touched = true;
            sim->touched[sim->touched_count++] = op;
        }
    }
    record_skips(sim, T);
    for (int i = 0; i < victim_count; i++) {
        /* Allocation ids are job slots (sim.h). */
        int for_op = victims[i].for_op >= 0 ? T->elem_op[victims[i].for_op] : -1;
        int rc = sim_preempt_victim(sim, victims[i].allocation_id, for_op, victims[i].reason,
                                    victims[i].interrupt_timeout_ms, err);
        if (rc != 0)
            return rc;
    }
    for (int i = 0; i < sim->touched_count; i++) {
        int op = sim->touched[i];
        sim->ops[op].touched = false;
        int rc = sim_op_sync(sim, op, err);
        if (rc != 0)
            return rc;
    }
    sim->touched_count = 0;
    sim->stats.allocations += res->allocation_count;
    if (res->allocation_count > 0 && sim_tree_changed(sim, n->tree) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

int sim_heartbeat(struct ps_sim *sim, int node, struct ps_error *err)
{
    struct sim_node *n = &sim->nodes[node];
    n->armed = false;
    n->last_heartbeat_ms = sim->now;
    sim->stats.heartbeats++;
    if (n->tree < 0)
        return 0;
    struct sim_tree *T = &sim->trees[n->tree];
    if (T->dormant)
        return 0;
    bool idle = true;
    struct ps_resources free_ = ps_resources_sub(n->limits, n->usage);
    /* A node that cannot hold even the componentwise smallest pending job is not offered:
     * every candidate would fail on its resources (part of the heartbeat's semantics, so the
     * exhaustive mode applies it too). */
    bool regular = T->snap && T->runnable_pending > 0 &&
                   (n->quiet_gen != T->gen || sim->options.exhaustive) &&
                   ps_resources_fit(T->sched_options.min_spare, free_) &&
                   ps_resources_fit(T->min_shape, free_);
    bool preempt_due = false, preempt = false;
    if (T->snap)
        preempt_due = sim_preempt_wanted(sim, node, &preempt);
    if (regular || preempt) {
        if (!n->cache && !(n->cache = ps_sched_filter_cache_new()))
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        struct ps_sched_node sn = {
            .id = node,
            .tags = (const char *const *)n->node->tags,
            .tag_count = n->node->tag_count,
            .limits = n->limits,
            .usage = n->usage,
            .filter_cache = n->cache,
        };
        sim->stats.heartbeats_scheduled++;
        uint64_t gen = T->gen;
        int rc = 0;
        if (regular) {
            rc = ps_schedule_heartbeat(T->snap, &sn, sim->now, &sim->sched, err);
        } else {
            ps_sched_result_clear(&sim->sched);
            sim->sched.node_usage = n->usage;
        }
        /* The preemptive stages (sim_preempt.c): at most one allocation, and its victims. */
        const struct ps_preempt_victim *victims = NULL;
        int victim_count = 0;
        if (rc == 0 && preempt)
            rc = sim_preempt_heartbeat(sim, node, &sn, &victims, &victim_count, err);
        if (rc == 0)
            rc = sim_heartbeat_commit(sim, node, victims, victim_count, err);
        if (rc != 0)
            return rc;
        idle = T->gen == gen;
        if (preempt && idle)
            n->preempt_quiet_gen = T->gen;
    }
    /* Quiet for the preemptive stages too: nothing starving, or they started nothing at this
     * generation (a node waiting for its backoff is not quiet). */
    if (sim_preempt_active(sim, n->tree) && n->preempt_quiet_gen != T->gen)
        idle = false;
    (void)preempt_due;
    /* A node whose resources shrank below its usage loses jobs until it fits. */
    if (!ps_resources_fit(n->usage, n->limits)) {
        uint64_t gen = T->gen;
        int rc = sim_preempt_overcommit(sim, node, err);
        if (rc != 0)
            return rc;
        idle = idle && T->gen == gen;
    }
    if (idle && !T->keep_heartbeats && !sim->options.exhaustive) {
        if (n->quiet_gen != T->gen) {
            n->quiet_gen = T->gen;
            T->quiet_count++;
        }
        if (T->quiet_count >= T->node_count) {
            T->dormant = true;
            sim_preempt_dormant(sim, n->tree);
            return 0;
        }
    }
    if (sim_push(sim, sim->now + sim->sc->heartbeat_period_ms, SIM_EV_HEARTBEAT, node, 0) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    n->armed = true;
    return 0;
}
