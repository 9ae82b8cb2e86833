/* sim.c — setting a simulation up from a scenario and the main loop over the event queue. */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

#include "core/fair_share.h"
#include "io/json_value.h"
#include "sim/sim_internal.h"

int sim_push(struct ps_sim *sim, int64_t time_ms, enum sim_event type, int64_t a, int64_t b)
{
    static const int prio[] = {
        [SIM_EV_JOB_END] = SIM_PRIO_JOB_END,     [SIM_EV_JOB_ABORT] = SIM_PRIO_JOB_ABORT,
        [SIM_EV_SUBMIT] = SIM_PRIO_SUBMIT,       [SIM_EV_FAIR_SHARE] = SIM_PRIO_FAIR_SHARE,
        [SIM_EV_HEARTBEAT] = SIM_PRIO_HEARTBEAT, [SIM_EV_CPU_TICK] = SIM_PRIO_CPU_TICK,
        [SIM_EV_NODE_ADJUST] = SIM_PRIO_NODE_ADJUST, [SIM_EV_JOB_WAIT] = SIM_PRIO_JOB_ABORT,
        /* scenario events: after the submissions of their millisecond (push order) */
        [SIM_EV_SCENARIO] = SIM_PRIO_SUBMIT,
    };
    if (type == SIM_EV_JOB_END || type == SIM_EV_JOB_ABORT || type == SIM_EV_SUBMIT ||
        type == SIM_EV_SCENARIO || type == SIM_EV_JOB_WAIT)
        sim->real_events++;
    if (type == SIM_EV_HEARTBEAT)
        return sim_push_heartbeat(sim, time_ms, SIM_PRIO_HEARTBEAT, a, b);
    return ps_event_queue_push_prio(&sim->queue, time_ms, prio[type], (int)type, a, b);
}

int sim_push_heartbeat(struct ps_sim *sim, int64_t time_ms, int prio, int64_t node, int64_t seq)
{
    /* heartbeats of one millisecond and priority in node order, however they were queued (an
     * out-of-band heartbeat moves a node's beats: the order must not depend on when they were
     * re-armed) */
    return ps_event_queue_push_ordered(&sim->queue, time_ms, prio, (uint64_t)node,
                                       (int)SIM_EV_HEARTBEAT, node, seq);
}

void sim_progress(struct ps_sim *sim)
{
    sim->last_progress_ms = sim->now;
}

void sim_active_add(struct ps_sim *sim, int op)
{
    sim->ops[op].active_pos = sim->active_count;
    sim->active[sim->active_count++] = op;
}

void sim_active_remove(struct ps_sim *sim, int op)
{
    int pos = sim->ops[op].active_pos;
    if (pos < 0)
        return;
    /* Keep the order of the rest: it is the order of pending-reason events. */
    memmove(&sim->active[pos], &sim->active[pos + 1],
            (size_t)(sim->active_count - pos - 1) * sizeof *sim->active);
    sim->active_count--;
    for (int i = pos; i < sim->active_count; i++)
        sim->ops[sim->active[i]].active_pos = i;
    sim->ops[op].active_pos = -1;
}

int sim_process_activated(struct ps_sim *sim, struct ps_error *err)
{
    int n = ps_strategy_activated_count(sim->strategy);
    for (int i = 0; i < n; i++) {
        struct ps_operation *op = ps_strategy_activated(sim->strategy, i);
        struct sim_op *o = ps_strmap_get(&sim->op_by_id, op->id);
        if (!o || o->state != SIM_OP_PENDING)
            continue;
        o->state = SIM_OP_RUNNING;
        o->running_ms = sim->now;
        sim->stats.operations_pending--;
        sim->stats.operations_running++;
        sim_ev_begin(sim, "operation_running");
        sim_ev_key(sim, "operation_id");
        ps_textbuf_add_json(&sim->line, o->sc->id);
        sim_ev_end(sim);
        /* Its jobs now count as demand of its pools. */
        for (int k = 0; k < o->m_count; k++) {
            struct sim_membership *ms = &o->ms[k];
            if (!ms->m || ms->in_stats)
                continue;
            sim_stats_add(sim, ms->path, ms->path_len, &ms->usage, &ms->demand, 1);
            ms->in_stats = true;
            sim->trees[ms->tree].dirty = true;
        }
        if (o->reason != PS_PENDING_NONE) {   /* no longer pending: close its reason's time */
            sim->reason_ms[o->reason] += sim->now - o->reason_since_ms;
            o->reason = PS_PENDING_NONE;
            free(o->reason_msg);
            o->reason_msg = NULL;
        }
        sim_progress(sim);
        int rc = sim_op_sync(sim, (int)(o - sim->ops), err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- setup ------------------------------------------------------------------------------ */

/* A scenario holds settings only: a pool key that is none (a custom attribute to the Cypress
 * API, docs/api.md) is a misspelling here, refused naming it. */
static int refuse_custom(struct ps_pool_tree *tree, struct ps_error *err)
{
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        const struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        int rc = ps_attr_refuse_custom(&ps_pool_config_table, ps_pool_explicit_config(p), err);
        if (rc != 0) {
            ps_error_prefix(err, "pools.%s", p->name);
            return rc;
        }
    }
    return 0;
}

static int add_trees(struct ps_sim *sim, struct ps_error *err)
{
    const struct ps_scenario *sc = sim->sc;
    for (size_t t = 0; t < sc->tree_count; t++) {
        const struct ps_scenario_tree *st = &sc->trees[t];
        struct ps_value config, pools = ps_value_list();
        int rc = ps_json_to_value(st->attributes, &config, err);
        if (rc == 0) {
            rc = ps_strategy_add_tree(sim->strategy, st->name, &config, err);
            if (rc != 0 && rc != PS_ENOMEM)
                ps_error_prefix(err, "pool_trees.%s", st->name);
        }
        /* The pools as one document: a child may come before its parent in the list. */
        for (size_t p = 0; rc == 0 && p < st->pool_count; p++) {
            struct ps_value pool;
            rc = ps_json_to_value(st->pools[p].attributes, &pool, err);
            if (rc == 0 && (ps_value_put_string(&pool, "name", st->pools[p].name) != 0 ||
                            ps_value_put_string(&pool, "parent", st->pools[p].parent) != 0 ||
                            ps_value_append(&pools, &pool) != 0))
                rc = ps_error_set(err, PS_ENOMEM, "out of memory");
            ps_value_release(&pool);
        }
        if (rc == 0 && st->pool_count > 0) {
            struct ps_pool_tree *tree = ps_strategy_find_tree(sim->strategy, st->name);
            rc = ps_pool_tree_create_pools(tree, &pools, err);
            if (rc == 0)
                rc = refuse_custom(tree, err);
            if (rc != 0 && rc != PS_ENOMEM)
                ps_error_prefix(err, "pool_trees.%s", st->name);
        }
        ps_value_release(&config);
        ps_value_release(&pools);
        if (rc != 0)
            return rc;
    }
    return ps_strategy_set_default_tree(sim->strategy, sc->default_tree, err);
}

static int tree_index(const struct ps_sim *sim, const struct ps_pool_tree *tree)
{
    for (int t = 0; t < sim->tree_count; t++)
        if (sim->trees[t].tree == tree)
            return t;
    return -1;
}

static int add_nodes(struct ps_sim *sim, struct ps_error *err)
{
    const struct ps_scenario *sc = sim->sc;
    int64_t i = 0;
    for (size_t g = 0; g < sc->node_group_count; g++) {
        const struct ps_scenario_node_group *group = &sc->node_groups[g];
        size_t size = strlen(group->name) + 24;
        char *id = malloc(size);
        if (!id)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        for (int64_t k = 0; k < group->count; k++, i++) {
            ps_scenario_node_id(group, k, id, size);
            int rc = ps_strategy_register_node(sim->strategy, id, (const char *const *)group->tags,
                                               (int)group->tag_count, &group->resource_limits, err);
            if (rc != 0) {
                if (rc != PS_ENOMEM)
                    ps_error_prefix(err, "node_groups[%zu]", g);
                free(id);
                return rc;
            }
            struct sim_node *n = &sim->nodes[i];
            n->node = ps_strategy_find_node(sim->strategy, id);
            n->group = (int)g;
            n->limits = group->resource_limits;
            n->last_heartbeat_ms = INT64_MIN;
            n->overcommit_since_ms = PS_NO_OVERCOMMIT;
            n->cpu_overdraft_since_ms = PS_NO_CPU_OVERDRAFT;
            if (group->medium_count) {
                n->media = calloc(group->medium_count, sizeof *n->media);
                if (!n->media) {
                    free(id);
                    return ps_error_set(err, PS_ENOMEM, "out of memory");
                }
                for (size_t m = 0; m < group->medium_count; m++)
                    n->media[m] = (struct ps_sched_medium){group->media[m],
                                                           group->medium_disk_space[m]};
            }
        }
        free(id);
    }
    for (i = 0; i < sim->node_count; i++)
        sim->nodes[i].tree = tree_index(sim, sim->nodes[i].node->tree);
    return 0;
}

static int init_trees(struct ps_sim *sim, struct ps_error *err)
{
    for (int t = 0; t < sim->tree_count; t++) {
        struct sim_tree *T = &sim->trees[t];
        T->tree = ps_strategy_tree_at(sim->strategy, t);
        T->name = ps_pool_tree_name(T->tree);
        T->gen = 1;   /* node quiet_gen 0 means "never quiet" */
        ps_strmap_init(&T->stats_by_name);
        if (ps_tree_sched_init(&T->ts, err) != 0)
            return PS_ENOMEM;
        /* between two updates most operations and pools keep their inputs: the simulator
         * remembers the last update's functions (fs_memo.c; the same results, half the update
         * time on an overloaded day). The service does not: it would double the engine's memory
         * per operation, past performance.md's 2 KiB target. */
        ps_fs_update_set_memo(T->ts.update, true);
        T->ts.no_scheduling_index = true;   /* no output of the simulator shows it */
        const struct ps_tree_config *cfg = ps_pool_tree_config(T->tree);
        T->tolerance = cfg->fair_share_starvation_tolerance;
        T->starvation_timeout_ms = cfg->fair_share_starvation_timeout_ms;
    }
    return 0;
}

/* Nodes and node groups per tree, and the trees' totals (after the nodes are registered). */
static int init_tree_nodes(struct ps_sim *sim, struct ps_error *err)
{
    for (int64_t i = 0; i < sim->node_count; i++) {
        struct sim_node *n = &sim->nodes[i];
        if (n->tree >= 0)
            sim->trees[n->tree].node_count++;
    }
    for (int t = 0; t < sim->tree_count; t++) {
        struct sim_tree *T = &sim->trees[t];
        T->nodes = calloc((size_t)(T->node_count ? T->node_count : 1), sizeof *T->nodes);
        T->groups = calloc(sim->sc->node_group_count ? sim->sc->node_group_count : 1, sizeof *T->groups);
        if (!T->nodes || !T->groups)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        T->node_count = 0;
        T->total = ps_pool_tree_total_resources(T->tree);
        T->fs_total = T->total;
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (T->fs_total.v[r] >= PS_RES_INFINITE)
                T->fs_total.v[r] = 0;
    }
    for (int64_t i = 0; i < sim->node_count; i++) {
        struct sim_node *n = &sim->nodes[i];
        if (n->tree < 0)
            continue;
        struct sim_tree *T = &sim->trees[n->tree];
        T->nodes[T->node_count++] = (int)i;
        if (T->group_count == 0 || T->groups[T->group_count - 1] != n->group)
            T->groups[T->group_count++] = n->group;
    }
    return 0;
}

/* Checks what the scenario parser leaves to the simulator: each spec against the spec rules,
 * and that a job asks for something (an allocation of nothing would never fill a node). */
static int check_operations(struct ps_sim *sim, struct ps_error *err)
{
    const struct ps_scenario *sc = sim->sc;
    for (size_t i = 0; i < sc->operation_count; i++) {
        const struct ps_scenario_operation *o = &sc->operations[i];
        for (size_t k = 0; k < o->task_count; k++)
            if (ps_resources_is_zero(o->tasks[k].resources))
                return ps_error_set(err, PS_EINVAL,
                                    "operations[%zu].tasks[%zu].resources: a job must request at "
                                    "least one resource, got none",
                                    i, k);
        struct ps_operation_spec parsed;
        int rc = ps_operation_spec_from_json(o->spec, &parsed, NULL, err);
        if (rc == 0)
            ps_operation_spec_release(&parsed);
        if (rc != 0) {
            ps_error_prefix(err, "operations[%zu].spec", i);
            return rc;
        }
    }
    return 0;
}

/* A job may not request a resource that nodes of its trees leave unlimited: the engine can
 * share only finite totals (sim_tree.fs_total). */
static int check_unlimited_requests(struct ps_sim *sim, struct ps_error *err)
{
    const struct ps_scenario *sc = sim->sc;
    for (size_t i = 0; i < sc->operation_count; i++) {
        const struct ps_scenario_operation *o = &sc->operations[i];
        size_t n = o->pool_tree_count ? o->pool_tree_count : 1;
        for (size_t k = 0; k < n; k++) {
            const char *name = o->pool_tree_count ? o->pool_trees[k] : sc->default_tree;
            int t = -1;
            for (int j = 0; j < sim->tree_count; j++)
                if (strcmp(sim->trees[j].name, name) == 0)
                    t = j;
            if (t < 0)
                continue;
            const struct sim_tree *T = &sim->trees[t];
            for (size_t j = 0; j < o->task_count; j++)
                for (int r = 0; r < PS_RES_COUNT; r++)
                    if (o->tasks[j].resources.v[r] > 0 && T->total.v[r] >= PS_RES_INFINITE)
                        return ps_error_set(err, PS_EINVAL,
                                            "operations[%zu].tasks[%zu].resources.%s: requested, but "
                                            "nodes of pool tree \"%s\" leave %s unlimited (omitted in "
                                            "their resource_limits); give the nodes a finite %s",
                                            i, j, ps_resource_name(r), T->name, ps_resource_name(r),
                                            ps_resource_name(r));
        }
    }
    return 0;
}

static int64_t phase_of(int64_t i, int64_t n, int64_t period)
{
    /* floor(i x period / n) without overflow: period = q n + r. */
    int64_t q = period / n, r = period % n;
    return i * q + (i * r) / n;
}

static int schedule_start(struct ps_sim *sim, struct ps_error *err)
{
    for (int64_t i = 0; i < sim->op_count; i++)
        if (sim_push(sim, sim->ops[i].sc->start_time_ms, SIM_EV_SUBMIT, i, 0) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (sim_push(sim, 0, SIM_EV_FAIR_SHARE, 0, 0) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (int64_t i = 0; i < sim->node_count; i++) {
        struct sim_node *n = &sim->nodes[i];
        int64_t given = sim->sc->node_groups[n->group].heartbeat_phase_ms;
        n->phase_ms = given >= 0 ? given
                                 : phase_of(i, sim->node_count, sim->sc->heartbeat_period_ms);
        if (n->tree < 0)
            continue;   /* a node in no tree schedules nothing */
        if (sim_arm_heartbeat(sim, (int)i, n->phase_ms, false) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    return 0;
}

int ps_sim_new(const struct ps_scenario *scenario, const struct ps_sim_options *options,
               struct ps_sim **out, struct ps_error *err)
{
    *out = NULL;
    struct ps_sim *sim = calloc(1, sizeof *sim);
    if (!sim)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    sim->sc = scenario;
    if (options)
        sim->options = *options;
    sim->end_ms = scenario->duration_ms > 0 ? scenario->duration_ms : -1;
    sim->op_count = (int64_t)scenario->operation_count;
    sim->node_count = scenario->node_count;
    sim->tree_count = (int)scenario->tree_count;
    sim->job_free = -1;
    sim->heartbeat_node = -1;
    sim->next_serial = 1;
    ps_event_queue_init(&sim->queue);
    ps_strmap_init(&sim->op_by_id);
    ps_error_init(&sim->io_error);
    sim->strategy = ps_strategy_new();
    /* upstream's simulator host reports the epoch as its connection time: virtual time 0 */
    if (sim->strategy)
        ps_strategy_set_connection_time(sim->strategy, 0);
    sim->trees = calloc((size_t)(sim->tree_count ? sim->tree_count : 1), sizeof *sim->trees);
    sim->nodes = calloc((size_t)(sim->node_count ? sim->node_count : 1), sizeof *sim->nodes);
    sim->ops = calloc((size_t)(sim->op_count ? sim->op_count : 1), sizeof *sim->ops);
    sim->active = calloc((size_t)(sim->op_count ? sim->op_count : 1), sizeof *sim->active);
    sim->touched = calloc((size_t)(sim->op_count ? sim->op_count : 1), sizeof *sim->touched);
    int rc = 0;
    if (!sim->strategy || !sim->trees || !sim->nodes || !sim->ops || !sim->active || !sim->touched)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0)
        rc = check_operations(sim, err);
    if (rc == 0)
        rc = add_trees(sim, err);
    if (rc == 0)
        rc = init_trees(sim, err);
    if (rc == 0)
        rc = add_nodes(sim, err);
    if (rc == 0)
        rc = init_tree_nodes(sim, err);
    if (rc == 0)
        rc = check_unlimited_requests(sim, err);
    if (rc == 0)
        rc = sim_scenario_events_check(sim, err);
    if (rc == 0)
        rc = sim_preempt_init(sim, err);
    if (rc == 0)
        rc = sim_res_init(sim, err);
    for (int64_t i = 0; rc == 0 && i < sim->op_count; i++) {
        rc = sim_op_init(sim, (int)i, err);
        if (rc == 0 && ps_strmap_put(&sim->op_by_id, sim->ops[i].sc->id, &sim->ops[i]) != 0)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    if (rc == 0)
        rc = schedule_start(sim, err);
    if (rc == 0)
        rc = sim_scenario_events_schedule(sim, err);
    if (rc == 0 && sim->options.pools) {
        fputs("time,tree,pool,fair_share_ratio,usage_ratio,demand_ratio,strong_guarantee_ratio,"
              "integral_guarantee_ratio,weight_proportional_ratio,accumulated_resource_ratio_volume,"
              "starvation_status,running_operation_count,operation_count,integral_capacity_ratio_volume\n",
              sim->options.pools);
    }
    if (rc != 0) {
        ps_sim_free(sim);
        return rc;
    }
    sim->stats.operations = sim->op_count;
    sim->stats.operations_not_submitted = sim->op_count;
    *out = sim;
    return 0;
}

void ps_sim_free(struct ps_sim *sim)
{
    if (!sim)
        return;
    sim_preempt_release(sim);
    for (int64_t i = 0; sim->jobs && i < sim->job_cap; i++) {   /* still running at the end */
        if (sim->jobs[i].serial != 0 && sim->jobs[i].cpu) {
            ps_cpu_monitor_release(sim->jobs[i].cpu);
            free(sim->jobs[i].cpu);
            sim->jobs[i].cpu = NULL;
        }
    }
    for (int t = 0; sim->trees && t < sim->tree_count; t++) {
        struct sim_tree *T = &sim->trees[t];
        ps_tree_sched_release(&T->ts);
        free(T->elem_op);
        free(T->elem_ms);
        free(T->elem_runnable);
        free(T->elem_stats);
        free(T->stats_cache);
        free(T->frontier);
        free(T->nodes);
        free(T->groups);
        for (int i = 0; i < T->cache_cap; i++)
            ps_sched_filter_cache_free(T->caches[i]);
        free(T->caches);
        for (int i = 0; i < T->stats_count; i++) {
            free(T->stats[i]->name);
            free(T->stats[i]);
        }
        free(T->stats);
        ps_strmap_release(&T->stats_by_name);
        ps_textbuf_release(&T->rows);
        ps_textbuf_release(&T->rows_prev);
    }
    for (int64_t i = 0; sim->nodes && i < sim->node_count; i++) {
        free(sim->nodes[i].jobs);
        free(sim->nodes[i].allocs);
        free(sim->nodes[i].media);
    }
    for (int64_t i = 0; sim->ops && i < sim->op_count; i++)
        sim_op_release(&sim->ops[i]);
    ps_strategy_free(sim->strategy);
    free(sim->trees);
    free(sim->nodes);
    free(sim->ops);
    free(sim->active);
    free(sim->touched);
    free(sim->jobs);
    free(sim->waits);
    ps_strmap_release(&sim->op_by_id);
    ps_event_queue_release(&sim->queue);
    sim_host_release(sim);
    ps_textbuf_release(&sim->line);
    ps_textbuf_release(&sim->events_out);
    ps_textbuf_release(&sim->pools_out);
    free(sim->double_memo);
    free(sim);
}

/* ---- the main loop ---------------------------------------------------------------------- */

static void finish(struct ps_sim *sim, const char *reason)
{
    if (sim->finished)
        return;
    sim->finished = true;
    sim->end_reason = reason;
    sim_stats_finish(sim);
    for (int i = 0; i < sim->active_count; i++) {
        struct sim_op *o = &sim->ops[sim->active[i]];
        if (o->reason != PS_PENDING_NONE)
            sim->reason_ms[o->reason] += sim->now - o->reason_since_ms;
        o->reason_since_ms = sim->now;
    }
    sim_out_flush(sim);
    if (sim->options.events && fflush(sim->options.events) != 0)
        ps_error_set(&sim->io_error, PS_EIO, "cannot write events.jsonl");
    if (sim->options.pools && fflush(sim->options.pools) != 0)
        ps_error_set(&sim->io_error, PS_EIO, "cannot write pools.csv");
}

static int dispatch(struct ps_sim *sim, const struct ps_event *ev, struct ps_error *err)
{
    switch ((enum sim_event)ev->type) {
    case SIM_EV_JOB_END:
        sim->real_events--;
        return sim_job_end_event(sim, ev->a, ev->b, err);
    case SIM_EV_JOB_ABORT:
        sim->real_events--;
        return sim_job_abort_event(sim, ev->a, ev->b, err);
    case SIM_EV_JOB_WAIT:
        sim->real_events--;
        return sim_job_wait_event(sim, ev->a, ev->b, err);
    case SIM_EV_SUBMIT:
        sim->real_events--;
        return sim_submit(sim, (int)ev->a, err);
    case SIM_EV_FAIR_SHARE: {
        int rc = sim_fair_share_event(sim, err);
        if (rc == 0 && sim_push(sim, sim->now + sim->sc->fair_share_update_period_ms,
                                SIM_EV_FAIR_SHARE, 0, 0) != 0)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        return rc;
    }
    case SIM_EV_HEARTBEAT:
        if (ev->b != sim->nodes[ev->a].heartbeat_seq)
            return 0;   /* replaced by an out-of-band heartbeat (sim_jobs.c) */
        return sim_heartbeat(sim, (int)ev->a, err);
    case SIM_EV_SCENARIO:
        sim->real_events--;
        return sim_scenario_event(sim, ev->a, err);
    case SIM_EV_CPU_TICK:
        return sim_cpu_tick_event(sim, ev->a, ev->b, err);
    case SIM_EV_NODE_ADJUST:
        return sim_node_adjust_event(sim, (int)ev->a, err);
    }
    return ps_error_set(err, PS_EINVAL, "simulator: unknown event %d", ev->type);
}

/* Without a duration: the end comes when every operation has finished, or when nothing can
 * change any more: no job runs, no submission or job end is queued, and since the last
 * progress every node had a heartbeat after a fair share update that saw everything. */
static void check_end(struct ps_sim *sim)
{
    if (sim->end_ms >= 0)
        return;
    if (sim->stats.operations_completed + sim->stats.operations_failed == sim->op_count) {
        finish(sim, "all_operations_finished");
        return;
    }
    int64_t settle = sim->sc->heartbeat_period_ms + 2 * sim->sc->fair_share_update_period_ms;
    if (sim->real_events == 0 && sim->running_jobs == 0 &&
        sim->now - sim->last_progress_ms >= settle && !sim_exec_nodes_wait(sim))
        finish(sim, "idle");
}

static int run_until(struct ps_sim *sim, int64_t time_ms, struct ps_error *err)
{
    struct ps_event ev;
    while (!sim->finished) {
        const struct ps_event *next = ps_event_queue_peek(&sim->queue);
        if (!next) {
            finish(sim, "idle");
            break;
        }
        if (sim->end_ms >= 0 && next->time_ms > sim->end_ms) {
            sim->now = sim->end_ms;
            finish(sim, "duration");
            break;
        }
        if (next->time_ms > time_ms) {
            if (time_ms > sim->now)
                sim->now = time_ms;
            break;
        }
        ps_event_queue_pop(&sim->queue, &ev);
        sim->now = ev.time_ms;
        int rc = dispatch(sim, &ev, err);
        if (rc != 0)
            return rc;
        if (sim->io_error.code != 0)
            return ps_error_set(err, sim->io_error.code, "%s", sim->io_error.msg);
        check_end(sim);
    }
    return 0;
}

/* The outputs reach their files before it returns. */
int ps_sim_run_until(struct ps_sim *sim, int64_t time_ms, struct ps_error *err)
{
    int rc = run_until(sim, time_ms, err);
    sim_out_flush(sim);
    if (rc == 0 && sim->io_error.code != 0)
        rc = ps_error_set(err, sim->io_error.code, "%s", sim->io_error.msg);
    return rc;
}

int ps_sim_run(struct ps_sim *sim, struct ps_error *err)
{
    return ps_sim_run_until(sim, INT64_MAX, err);
}

bool ps_sim_finished(const struct ps_sim *sim)
{
    return sim->finished;
}

void ps_sim_get_stats(const struct ps_sim *sim, struct ps_sim_stats *out)
{
    *out = sim->stats;
    out->now_ms = sim->now;
    out->jobs_running = sim->running_jobs;
}

int ps_sim_abort_job(struct ps_sim *sim, const char *job_id, const char *reason,
                     struct ps_error *err)
{
    char id[512];
    for (int64_t i = 0; i < sim->node_count; i++) {
        const struct sim_node *n = &sim->nodes[i];
        for (int k = 0; k < n->job_count; k++) {
            const struct sim_job *job = &sim->jobs[n->jobs[k]];
            sim_job_id(sim, job, id, sizeof id);
            if (strcmp(id, job_id) == 0) {
                int rc = sim_job_abort(sim, n->jobs[k], reason, err);
                if (rc == 0)
                    check_end(sim);
                return rc;
            }
        }
    }
    return ps_error_set(err, PS_ENOENT, "no running job \"%s\"", job_id);
}
