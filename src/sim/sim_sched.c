/* sim_sched.c — when the simulation runs the scheduling loop (core/tree_sched.h, through
 * sim_host.c): which fair share updates and which heartbeat stages are needed, and the
 * bookkeeping that lets idle work be skipped exactly (sim.h).
 *
 * Generations. Every change of a tree's scheduling state (an allocation started or finished,
 * a pending count or shape changed, a snapshot rebuilt) bumps tree->gen. The regular stage is a
 * pure function of the snapshot and the node's usage, and the node's usage only changes with
 * its own jobs, which bump the generation too; so a node whose last heartbeat started nothing
 * at the current generation would start nothing again (node->quiet_gen). When every node of a
 * tree is quiet the tree is dormant: its heartbeat events are dropped, and the next change
 * re-arms each node at its next heartbeat time: a period after the last one it got (at first,
 * its phase), with an out-of-band heartbeat (send_heartbeat_on_job_finished) counting.
 */
#include <stdlib.h>
#include <string.h>

#include "core/exec_nodes.h"
#include "core/sched_inputs.h"
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

int sim_arm_heartbeat(struct ps_sim *sim, int node, int64_t t_ms, bool reporting)
{
    struct sim_node *n = &sim->nodes[node];
    int prio = reporting ? SIM_PRIO_REPORTING_HEARTBEAT : SIM_PRIO_HEARTBEAT;
    if (sim_push_heartbeat(sim, t_ms, prio, node, ++n->heartbeat_seq) != 0)
        return PS_ENOMEM;
    n->armed = true;
    return 0;
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
        if (sim_arm_heartbeat(sim, T->nodes[i], next_heartbeat_ms(sim, n), false) != 0)
            return PS_ENOMEM;
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

static int64_t task_pending(const void *ctx, int t)
{
    return ((const struct sim_op *)ctx)->tasks[t].pending;
}

static const char *task_disk_request(const void *ctx, int t, int64_t *space)
{
    const struct ps_scenario_task *task = ((const struct sim_op *)ctx)->tasks[t].spec;
    *space = task->disk_space;
    return task->disk_medium;
}

struct ps_sched_tasks sim_op_tasks(const struct sim_op *o)
{
    return (struct ps_sched_tasks){o, o->task_count, task_pending, task_disk_request};
}

void sim_op_state(const struct ps_sim *sim, int op, int k, struct ps_sched_operation *st)
{
    const struct sim_op *o = &sim->ops[op];
    const struct sim_membership *ms = &o->ms[k];
    int t = o->cur_task;
    /* the effective filter the loop built the snapshot with (kept alive by the loop) */
    const struct sim_tree *T = &sim->trees[ms->tree];
    st->filter = ms->m && ms->elem >= 0 ? T->ts.sched_ops[ms->elem].filter : NULL;
    st->runnable = ms->m && o->state == SIM_OP_RUNNING && !ms->m->suspended;
    st->pending_count = t >= 0 ? o->tasks[t].pending : 0;
    if (!sim_tentative_may_start(o, T->name))
        st->pending_count = 0;   /* its sample in this tentative tree runs, as the service's */
    st->allocation = sim_task_job_resources(sim, op, t >= 0 ? t : 0);
    struct ps_sched_tasks tasks = sim_op_tasks(o);
    ps_sched_disk_request(&tasks, t, &st->disk_medium, &st->disk_space);
    /* computed by the loop at the update from the pools */
    st->regular_on_ssd_forbidden = ms->m && ms->elem >= 0 &&
                                   T->ts.sched_ops[ms->elem].regular_on_ssd_forbidden;
}

/* A new state_version for every membership of op: what op_state answers for it may change. */
static void state_changed(struct ps_sim *sim, int op)
{
    struct sim_op *o = &sim->ops[op];
    for (int k = 0; k < o->m_count; k++)
        if (o->ms[k].m)
            o->ms[k].m->state_version = ++sim->state_serial;
}

/* Called after whatever changes an operation's jobs, tasks or state (job start, end, abort,
 * running): so also wherever op_state's answers change (sim_host.c; the preemption settings
 * it also reads cannot change while the operation runs). */
int sim_op_sync(struct ps_sim *sim, int op, struct ps_error *err)
{
    state_changed(sim, op);
    struct sim_op *o = &sim->ops[op];
    struct ps_sched_tasks tasks = sim_op_tasks(o);
    o->cur_task = ps_sched_offered_task(&tasks);
    for (int k = 0; k < o->m_count; k++) {
        struct sim_membership *ms = &o->ms[k];
        struct sim_tree *T = &sim->trees[ms->tree];
        if (!ms->m || ms->elem < 0 || !T->ts.snap)
            continue;
        struct ps_sched_operation st;
        sim_op_state(sim, op, k, &st);
        int64_t old = ps_sched_pending(T->ts.snap, ms->elem);
        bool was = T->elem_runnable[ms->elem];
        if (st.runnable == was && st.pending_count == old &&
            ps_resources_equal(st.allocation, ms->fed_shape) && st.disk_medium == ms->fed_disk)
            continue;
        int rc = ps_sched_set_operation(T->ts.snap, ms->elem, &st, err);
        if (rc != 0)
            return rc;
        T->runnable_pending += (st.runnable ? st.pending_count : 0) - (was ? old : 0);
        if (st.runnable && st.pending_count > 0)
            T->min_shape = ps_resources_min(T->min_shape, st.allocation);
        T->elem_runnable[ms->elem] = st.runnable;
        ms->fed_shape = st.allocation;
        ms->fed_disk = st.disk_medium;
        rc = sim_tree_changed(sim, ms->tree);
        if (rc != 0)
            return ps_error_set(err, rc, "out of memory");
    }
    return 0;
}

/* ---- fair share updates ----------------------------------------------------------------- */

static int update_tree(struct ps_sim *sim, int tree, bool *performed, struct ps_error *err)
{
    struct sim_tree *T = &sim->trees[tree];
    *performed = false;
    if (T->ts.snap && !T->dirty && !T->timed && sim->now < T->update_due_ms &&
        !sim->options.exhaustive) {
        sim->stats.fair_share_updates_skipped++;
        return 0;
    }
    int changed = 0;
    int rc = sim_host_update(sim, tree, &changed, err);
    if (rc != 0)
        return rc;
    const struct ps_tree_fs *fs = &T->ts.fs;
    sim_preempt_tree_updated(sim, tree, changed);
    T->timed = false;
    for (int e = 0; e < fs->count; e++) {
        struct sim_pool_stats *st = T->elem_stats[e];   /* set for every pool */
        if (!st)
            continue;
        /* integral volumes, and weights inferred from a moving average, move with time */
        const struct ps_pool_config *pc = &fs->pools[e]->config;
        if (fs->fs_pools[fs->elems[e].in.pool].in.guarantee_type != PS_GUARANTEE_NONE ||
            (pc->infer_children_weights_from_historic_usage &&
             pc->historic_usage_config.aggregation_mode == PS_HISTORIC_USAGE_EMA))
            T->timed = true;
        sim_stats_set_fair_share(sim, st, fs->pools[e]->dynamic.fair_share_ratio);
        st->seen_update = sim->update_serial;
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

/* Operations no node can take, or whose next job no node can hold, fail as the service's
 * (core/exec_nodes.h): each check runs with the fair share update once its period
 * (available_exec_nodes_check_period, resource_demand_sanity_check_period) has passed since
 * the last, from safe_scheduler_online_time on (the simulated scheduler came online at 0). */

/* A componentwise lower bound of the limits of every node in a tree (nodes_floor), found at
 * its first use in a check: a check whose operations have no pending job does not scan the
 * nodes (on 4,000 nodes the scan at every check was 14% of the day). */
struct sim_floor {
    bool known;
    struct ps_resources r;
};

/* Whether a running operation fails the check: true, with the message in msg. floor, when
 * given, bounds the nodes' limits from below. */
typedef bool (*sim_misfit_fn)(struct ps_sim *sim, int op, struct sim_floor *floor, char *msg,
                              size_t size);

/* A node counts for an operation unless it is banned for it (core/node_ban.h). */
static bool not_banned(const struct ps_node *node, void *ctx)
{
    const struct sim_op *o = ctx;
    return ps_strmap_get(&o->banned_nodes, node->id) == NULL;
}

static bool all_banned(struct ps_sim *sim, struct sim_op *o, char *msg, size_t size)
{
    return ps_node_ban_all_banned(sim->strategy, o->op, &o->bans, (int)o->banned_nodes.count,
                                  not_banned, o, msg, size);
}

static bool no_exec_node(struct ps_sim *sim, int op, struct sim_floor *floor, char *msg,
                         size_t size)
{
    (void)floor;
    struct sim_op *o = &sim->ops[op];
    if (all_banned(sim, o, msg, size))
        return true;
    if (!o->exec_nodes_seen)
        o->exec_nodes_seen = ps_exec_nodes_available(
            sim->strategy, o->op, NULL, NULL, sim->sc->safe_scheduler_online_time_ms, msg, size);
    return !o->exec_nodes_seen;
}

/* The componentwise minimum of the limits of the nodes that are in a tree. The nodes an
 * operation's filter allows are some of them, so the maximum over those is at least this:
 * a job within it fits (or no node is allowed, which the check also passes), and the scan of
 * the nodes per operation is needed only for the jobs above it. */
static struct ps_resources nodes_floor(const struct ps_sim *sim)
{
    struct ps_resources floor = ps_resources_zero();
    bool any = false;
    int count = ps_strategy_node_count(sim->strategy);
    for (int i = 0; i < count; i++) {
        const struct ps_node *n = ps_strategy_node_at(sim->strategy, i);
        if (!n->tree)
            continue;
        floor = any ? ps_resources_min(floor, n->resource_limits) : n->resource_limits;
        any = true;
    }
    return floor;
}

/* The first task with pending jobs whose next job no node can hold decides. */
static const struct ps_resources *floor_of(const struct ps_sim *sim, struct sim_floor *floor)
{
    if (!floor->known) {
        floor->r = nodes_floor(sim);
        floor->known = true;
    }
    return &floor->r;
}

static bool demand_misfit(struct ps_sim *sim, int op, struct sim_floor *floor, char *msg,
                          size_t size)
{
    const struct sim_op *o = &sim->ops[op];
    for (int t = 0; t < o->task_count; t++) {
        if (o->tasks[t].pending <= 0)
            continue;
        struct ps_resources need = sim_task_job_resources(sim, op, t);
        if (floor && ps_resources_fit(need, *floor_of(sim, floor)))
            continue;
        if (!ps_exec_nodes_demand_fits(sim->strategy, o->op, NULL, NULL, o->tasks[t].spec->name,
                                       &need, msg, size))
            return true;
    }
    return false;
}

static int check_ops(struct ps_sim *sim, int64_t *next_ms, int64_t period_ms,
                     sim_misfit_fn misfit, bool with_floor, struct ps_error *err)
{
    if (sim->now < *next_ms)
        return 0;
    *next_ms = sim->now + period_ms;
    if (sim->now < sim->sc->safe_scheduler_online_time_ms)
        return 0;
    struct sim_floor floor = {.known = false};
    for (int i = 0; i < sim->active_count;) {
        int op = sim->active[i];
        char msg[1024];
        if (sim->ops[op].state != SIM_OP_RUNNING || !sim->ops[op].op ||
            !misfit(sim, op, with_floor ? &floor : NULL, msg, sizeof msg)) {
            i++;
            continue;
        }
        int rc = sim_op_fail(sim, op, msg, err);   /* leaves sim->active */
        if (rc != 0)
            return rc;
        sim_progress(sim);
    }
    return 0;
}

bool sim_exec_nodes_wait(struct ps_sim *sim)
{
    char msg[1024];
    for (int i = 0; i < sim->active_count; i++) {
        struct sim_op *o = &sim->ops[sim->active[i]];
        if (o->state == SIM_OP_RUNNING && o->op && all_banned(sim, o, msg, sizeof msg))
            return true;
        /* the pending reason first: a scan of the nodes only for operations it says wait for
         * a matching node (the run is idle, and this is asked after every event) */
        if (o->state == SIM_OP_RUNNING && o->op && !o->exec_nodes_seen &&
            o->reason == PS_PENDING_NO_MATCHING_NODE &&
            !ps_exec_nodes_available(sim->strategy, o->op, NULL, NULL, 0, msg, sizeof msg))
            return true;
        if (o->state == SIM_OP_RUNNING && o->op && o->reason == PS_PENDING_NO_NODE_FITS &&
            demand_misfit(sim, sim->active[i], NULL, msg, sizeof msg))
            return true;
    }
    return false;
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
        for (int i = 0; i < sim->active_count; i++) {
            /* the operations are cold: ask for the next ones' state and memberships ahead */
            if (i + 8 < sim->active_count) {
                const struct sim_op *next = &sim->ops[sim->active[i + 8]];
                __builtin_prefetch(&next->pending);
                __builtin_prefetch(&next->m_count);
            }
            if (i + 4 < sim->active_count)
                __builtin_prefetch(sim->ops[sim->active[i + 4]].ms);
            sim_pending_reason_update(sim, sim->active[i], true);
        }
    sim->reasons_dirty = false;
    sim_pools_rows_write(sim);
    int rc = check_ops(sim, &sim->next_demand_check_ms,
                       sim->sc->resource_demand_sanity_check_period_ms, demand_misfit, true, err);
    if (rc == 0)
        rc = check_ops(sim, &sim->next_exec_nodes_check_ms,
                       sim->sc->available_exec_nodes_check_period_ms, no_exec_node, false, err);
    if (rc == 0)
        rc = sim_tentative_check(sim, err);   /* slow tentative trees are banned */
    return rc;
}

/* ---- heartbeats ------------------------------------------------------------------------- */

/* The filter cache of T's nodes with tag set tagset into *out (NULL for a node without one:
 * the loop then evaluates its filters at every heartbeat); 0 or PS_ENOMEM. The verdicts depend
 * only on the tags and the snapshot, which every node of T shares. */
static int filter_cache(struct sim_tree *T, int tagset, struct ps_sched_filter_cache **out)
{
    *out = NULL;
    if (tagset < 0)
        return 0;
    if (tagset >= T->cache_cap) {
        int cap = T->cache_cap ? T->cache_cap : 4;
        while (cap <= tagset)
            cap *= 2;
        struct ps_sched_filter_cache **grown = realloc(T->caches, (size_t)cap * sizeof *grown);
        if (!grown)
            return PS_ENOMEM;
        for (int i = T->cache_cap; i < cap; i++)
            grown[i] = NULL;
        T->caches = grown;
        T->cache_cap = cap;
    }
    if (!T->caches[tagset] && !(T->caches[tagset] = ps_sched_filter_cache_new()))
        return PS_ENOMEM;
    *out = T->caches[tagset];
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
    bool regular = T->ts.snap && T->runnable_pending > 0 &&
                   (n->quiet_gen != T->gen || sim->options.exhaustive) &&
                   ps_resources_fit(T->ts.options.min_spare, free_) &&
                   ps_resources_fit(T->min_shape, free_);
    bool preempt_due = false, preempt = false;
    if (T->ts.snap)
        preempt_due = sim_preempt_wanted(sim, node, &preempt);
    struct ps_sched_filter_cache *cache = NULL;
    if (regular || preempt) {
        if (filter_cache(T, n->node->tagset, &cache) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        sim->stats.heartbeats_scheduled++;
    }
    /* A node whose resources shrank below its usage loses jobs until it fits: the loop checks
     * it after the stages. */
    bool shrunk = !ps_resources_fit(n->usage, n->limits);
    if (regular || preempt || shrunk) {
        struct ps_sched_node sn = {
            .id = node,
            .tags = (const char *const *)n->node->tags,
            .tag_count = n->node->tag_count,
            .limits = n->limits,
            .usage = n->usage,
            .filter_cache = cache,
            .media = n->media,
            .medium_count = n->media ? (int)sim->sc->node_groups[n->group].medium_count : 0,
            .overcommit_since_ms = &n->overcommit_since_ms,
        };
        uint64_t gen = T->gen;
        struct ps_tree_heartbeat_stages stages = {regular, preempt};
        int rc = sim_host_heartbeat(sim, node, &sn, &stages, err);
        if (rc != 0)
            return rc;
        /* waiting out allowed_node_resources_overcommit_duration is not quiet */
        idle = T->gen == gen && ps_resources_fit(n->usage, n->limits);
        if (preempt && idle)
            n->preempt_quiet_gen = T->gen;
    }
    /* Quiet for the preemptive stages too: nothing starving, or they started nothing at this
     * generation (a node waiting for its backoff is not quiet). */
    if (sim_preempt_active(sim, n->tree) && n->preempt_quiet_gen != T->gen)
        idle = false;
    (void)preempt_due;
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
    if (sim_arm_heartbeat(sim, node, sim->now + sim->sc->heartbeat_period_ms, false) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

/* ---- nodes that change tree ------------------------------------------------------------- */

/* After a node's tags or a tree's nodes_filter changed (scenario events set_node_tags and
 * set_tree_attribute): a node whose tree changed loses its running jobs (upstream's abort
 * reason node_fair_share_tree_changed), the trees' node lists, totals and usage are rebuilt,
 * and every tree's scheduling state is bumped, so that nodes now in a tree heartbeat again. */
int sim_nodes_moved(struct ps_sim *sim, struct ps_error *err)
{
    bool moved = false;
    for (int64_t i = 0; i < sim->node_count; i++) {
        struct sim_node *n = &sim->nodes[i];
        int t = -1;
        for (int k = 0; k < sim->tree_count; k++)
            if (sim->trees[k].tree == n->node->tree)
                t = k;
        if (t == n->tree)
            continue;
        while (n->job_count > 0) {
            int rc = sim_job_abort(sim, n->jobs[n->job_count - 1], "node_fair_share_tree_changed",
                                   err);
            if (rc != 0)
                return rc;
        }
        n->tree = t;
        moved = true;
    }
    for (int t = 0; t < sim->tree_count; t++) {
        struct sim_tree *T = &sim->trees[t];
        if (moved) {
            int *nodes = realloc(T->nodes, (size_t)(sim->node_count ? sim->node_count : 1) * sizeof *nodes);
            if (!nodes)
                return ps_error_set(err, PS_ENOMEM, "out of memory");
            T->nodes = nodes;
            T->node_count = 0;
            T->group_count = 0;
            T->usage = ps_resources_zero();
        }
        T->total = ps_pool_tree_total_resources(T->tree);
        T->fs_total = T->total;
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (T->fs_total.v[r] >= PS_RES_INFINITE)
                T->fs_total.v[r] = 0;
    }
    for (int64_t i = 0; moved && i < sim->node_count; i++) {
        struct sim_node *n = &sim->nodes[i];
        if (n->tree < 0)
            continue;
        struct sim_tree *T = &sim->trees[n->tree];
        T->nodes[T->node_count++] = (int)i;
        T->usage = ps_resources_add(T->usage, n->usage);
        bool listed = false;
        for (int g = 0; g < T->group_count && !listed; g++)
            listed = T->groups[g] == n->group;
        if (!listed)
            T->groups[T->group_count++] = n->group;
    }
    for (int t = 0; t < sim->tree_count; t++)
        if (sim_tree_changed(sim, t) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (int64_t i = 0; moved && i < sim->node_count; i++) {
        struct sim_node *n = &sim->nodes[i];
        if (n->tree < 0 || n->armed)
            continue;
        if (sim_arm_heartbeat(sim, (int)i, next_heartbeat_ms(sim, n), false) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    return 0;
}
