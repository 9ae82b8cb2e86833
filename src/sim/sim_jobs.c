/* sim_jobs.c — operations and their jobs: submission, tasks turned into jobs, job start, end,
 * abort and preemption, and the model of what a running job actually uses.
 *
 * Tasks are independent (vanilla operations): all their jobs are pending from the start. The
 * scheduler takes one allocation shape per operation at a time (schedule.h), so the snapshots
 * get the shape and the pending count of the operation's *current task*, the first task in
 * the listed order with pending jobs; when it runs out, the next task's shape is fed after the
 * heartbeat. A job that is aborted goes back to its task's pending jobs and is retried before
 * the task's fresh jobs, with attempt + 1.
 */
#include <stdlib.h>
#include <string.h>

#include "core/sched_inputs.h"
#include "core/single_tree.h"
#include "io/json_value.h"
#include "sim/sim_internal.h"

/* ---- resources -------------------------------------------------------------------------- */

struct ps_resources sim_task_job_resources(const struct ps_sim *sim, int op, int task)
{
    /* The memory reserve (sim_resources.c) replaces the memory request. */
    struct ps_resources r = sim->ops[op].tasks[task].spec->resources;
    if (sim->ops[op].tasks[task].memory_on)
        r.v[PS_RES_MEMORY] = sim_res_task_memory(sim, op, task);
    return r;
}

void sim_op_demand_changed(struct ps_sim *sim, int op)
{
    struct sim_op *o = &sim->ops[op];
    struct ps_resources pending = ps_resources_zero();
    for (int t = 0; t < o->task_count; t++)
        if (o->tasks[t].pending > 0)
            pending = ps_demand_add_pending(pending, sim_task_job_resources(sim, op, t),
                                            o->tasks[t].pending);
    o->pending_demand = pending;
    for (int k = 0; k < o->m_count; k++) {
        struct sim_membership *ms = &o->ms[k];
        if (!ms->m)
            continue;
        struct ps_resources demand = ps_resources_add_sat(ms->usage, pending);
        if (ms->in_stats) {
            struct ps_resources zero = ps_resources_zero(), delta = ps_resources_sub(demand, ms->demand);
            sim_stats_add(sim, ms->path, ms->path_len, &zero, &delta, 1);
        }
        ms->demand = demand;
        ms->m->demand = demand;
        ms->m->usage = ms->usage;
        ms->m->pending_job_count = o->pending;
    }
}

/* ---- operations ------------------------------------------------------------------------- */

int sim_op_init(struct ps_sim *sim, int op, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    o->sc = &sim->sc->operations[op];
    o->index = op;
    o->state = SIM_OP_WAITING;
    o->submit_ms = o->running_ms = o->finish_ms = -1;
    o->active_pos = -1;
    o->task_count = (int)o->sc->task_count;
    o->tasks = calloc((size_t)o->task_count, sizeof *o->tasks);
    if (!o->tasks)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (int t = 0; t < o->task_count; t++) {
        o->tasks[t].spec = &o->sc->tasks[t];
        o->tasks[t].pending = o->sc->tasks[t].job_count;
        o->job_count += o->sc->tasks[t].job_count;
    }
    o->pending = o->job_count;
    o->cur_task = 0;
    o->reason = PS_PENDING_NONE;
    return sim_res_op_init(sim, op, err);
}

void sim_op_release(struct sim_op *o)
{
    sim_res_op_release(o);
    free(o->unrecognized_spec);
    o->unrecognized_spec = NULL;
    for (int t = 0; o->tasks && t < o->task_count; t++)
        free(o->tasks[t].retry);
    free(o->tasks);
    for (int k = 0; o->ms && k < o->m_count; k++) {
        free(o->ms[k].path);
        ps_formula_free(o->ms[k].combined);
    }
    free(o->ms);
    free(o->error);
    free(o->reason_msg);
    sim_reason_key_release(&o->reason_key);
    ps_strmap_release(&o->banned_nodes);
    sim_tentative_release(o);
}

static int tree_of(const struct ps_sim *sim, const char *name)
{
    for (int t = 0; t < sim->tree_count; t++)
        if (strcmp(sim->trees[t].name, name) == 0)
            return t;
    return -1;
}

/* The effective scheduling filter of a membership (struct sim_membership.filter). */
static int effective_filter(struct sim_membership *ms, struct ps_error *err)
{
    const struct ps_formula *filter = NULL;
    int rc = ps_tree_op_effective_filter(ms->m, &filter, &ms->combined, err);
    ms->filter = filter;
    return rc;
}

/* The pool statistics of the membership's pool up to <Root> (struct sim_membership.path). */
static int membership_path(struct ps_sim *sim, struct sim_membership *ms, struct ps_error *err)
{
    int depth = 0;
    for (const struct ps_pool *p = ms->m->pool; p; p = p->parent)
        depth++;
    free(ms->path);
    ms->path_len = 0;
    ms->path = calloc((size_t)(depth ? depth : 1), sizeof *ms->path);
    if (!ms->path)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (const struct ps_pool *p = ms->m->pool; p; p = p->parent) {
        struct sim_pool_stats *st = sim_stats_get(sim, ms->tree, p->name);
        if (!st)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        ms->path[ms->path_len++] = st;
    }
    return 0;
}

int sim_membership_moved(struct ps_sim *sim, int op, int k, struct ps_error *err)
{
    struct sim_membership *ms = &sim->ops[op].ms[k];
    if (!ms->m)
        return 0;
    if (ms->in_stats)
        sim_stats_add(sim, ms->path, ms->path_len, &ms->usage, &ms->demand, -1);
    int rc = membership_path(sim, ms, err);
    if (rc != 0)
        return rc;
    if (ms->in_stats)
        sim_stats_add(sim, ms->path, ms->path_len, &ms->usage, &ms->demand, 1);
    ps_formula_free(ms->combined);
    ms->combined = NULL;
    ms->fits_task = -1;
    return effective_filter(ms, err);
}

static int init_memberships(struct ps_sim *sim, struct sim_op *o, struct ps_error *err)
{
    struct ps_operation *op = o->op;
    o->ms = calloc((size_t)op->tree_count, sizeof *o->ms);
    if (!o->ms)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    o->m_count = op->tree_count;
    for (int k = 0; k < op->tree_count; k++) {
        struct sim_membership *ms = &o->ms[k];
        ms->tree = tree_of(sim, op->tree_names[k]);
        ms->m = op->memberships[k];
        ms->elem = -1;
        ms->fits_task = -1;
        ms->limit_resource = -1;
        int rc = membership_path(sim, ms, err);
        if (rc != 0)
            return rc;
        rc = effective_filter(ms, err);
        if (rc != 0)
            return rc;
        sim->trees[ms->tree].dirty = true;
    }
    return 0;
}

/* schedule_in_single_tree and necessary_resources_for_operation (core/single_tree.h), as the
 * service: *spec_json is the spec the strategy gets (a new reference), with pool_trees cut to
 * the chosen tree. PS_EINVAL in why when no tree can be chosen or a tree needs a resource the
 * operation does not ask for (the operation fails, as a refused start). */
static int single_tree_spec(struct ps_sim *sim, const struct sim_op *o, json_t **spec_json,
                            struct ps_error *why, struct ps_error *err)
{
    *spec_json = json_incref(o->sc->spec);
    struct ps_operation_spec parsed;
    if (ps_operation_spec_from_json(o->sc->spec, &parsed, NULL, why) != 0) {
        ps_error_init(why);
        return 0;   /* start_operation reports it */
    }
    struct ps_resources demand = ps_resources_zero();
    for (size_t t = 0; t < o->sc->task_count; t++)   /* saturating, as the service's */
        demand = ps_demand_add_pending(demand, o->sc->tasks[t].resources, o->sc->tasks[t].job_count);
    int best = -1, rc = 0;
    if (parsed.schedule_in_single_tree && parsed.pool_trees.count > 0)
        rc = ps_strategy_choose_single_tree(sim->strategy, &parsed, o->sc->user, demand, &best, why);
    /* necessary_resources_for_operation of the trees it will run in */
    int count = best >= 0 ? 1 : parsed.pool_trees.count;
    for (int i = 0; rc == 0 && i < (count > 0 ? count : 1); i++) {
        const char *name = best >= 0 ? parsed.pool_trees.items[best]
                           : count > 0 ? parsed.pool_trees.items[i]
                                       : ps_strategy_default_tree(sim->strategy);
        struct ps_pool_tree *tree = name ? ps_strategy_find_tree(sim->strategy, name) : NULL;
        if (tree)
            rc = ps_pool_tree_check_necessary_resources(tree, demand, why);
    }
    if (rc == 0 && best >= 0) {
        json_t *copy = json_deep_copy(o->sc->spec);
        if (!copy) {
            rc = PS_ENOMEM;
        } else {
            json_object_set_new(copy, "pool_trees", json_pack("[s]", parsed.pool_trees.items[best]));
            json_decref(*spec_json);
            *spec_json = copy;
        }
    }
    ps_operation_spec_release(&parsed);
    return rc == PS_ENOMEM ? ps_error_set(err, PS_ENOMEM, "out of memory") : rc;
}

int sim_submit(struct ps_sim *sim, int op, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    o->submit_ms = sim->now;
    sim->stats.operations_not_submitted--;
    sim->stats.jobs += o->job_count;
    sim_progress(sim);
    struct ps_error why;
    ps_error_init(&why);
    json_t *spec_json = NULL;
    int rc = single_tree_spec(sim, o, &spec_json, &why, err);
    if (rc == 0)
        rc = sim_tentative_setup(sim, o, &spec_json, &why, err);
    if (rc == PS_ENOMEM) {
        json_decref(spec_json);
        return rc;
    }
    struct ps_operation *started = NULL;
    if (rc == 0) {
        struct ps_value spec;
        rc = ps_json_to_value(spec_json, &spec, err);
        json_decref(spec_json);
        if (rc != 0)
            return rc;
        rc = ps_strategy_start_operation(sim->strategy, o->sc->id, o->sc->user,
                                         o->sc->start_time_ms, &spec, &started, &why);
        ps_value_release(&spec);
    } else {
        json_decref(spec_json);
    }
    if (rc == PS_ENOMEM)
        return ps_error_set(err, rc, "%s", why.msg);
    if (rc != 0) {
        /* Refused by the trees (max_operation_count, ephemeral pool limit, acl, ...): the
         * operation fails, as start_op would. */
        o->state = SIM_OP_FAILED;
        o->finish_ms = sim->now;
        o->error = strdup(why.msg);
        if (!o->error)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        sim->stats.operations_failed++;
        sim_ev_begin(sim, "operation_failed");
        sim_ev_key(sim, "operation_id");
        ps_textbuf_add_json(&sim->line, o->sc->id);
        sim_ev_key(sim, "error");
        ps_textbuf_add_json(&sim->line, why.msg);
        sim_ev_end(sim);
        return 0;
    }
    o->op = started;
    started->host = o;   /* the loop's op_state finds the simulator's operation through it */
    o->state = SIM_OP_PENDING;
    sim->stats.operations_pending++;
    rc = init_memberships(sim, o, err);
    if (rc != 0)
        return rc;
    sim_op_demand_changed(sim, op);
    sim_active_add(sim, op);

    sim_ev_begin(sim, "operation_started");
    sim->ev.operation_id = o->sc->id;
    sim->ev.user = o->sc->user;
    sim_ev_key(sim, "operation_id");
    ps_textbuf_add_json(&sim->line, o->sc->id);
    sim_ev_key(sim, "user");
    ps_textbuf_add_json(&sim->line, o->sc->user);
    sim_ev_key(sim, "pools");
    ps_textbuf_adds(&sim->line, "{");
    for (int k = 0; k < o->m_count; k++) {
        if (k > 0)
            ps_textbuf_adds(&sim->line, ",");
        ps_textbuf_add_json(&sim->line, sim->trees[o->ms[k].tree].name);
        ps_textbuf_adds(&sim->line, ":");
        ps_textbuf_add_json(&sim->line, o->ms[k].m->pool->name);
        const char *tree = sim->trees[o->ms[k].tree].name;
        if (sim->options.event_tree && strcmp(tree, sim->options.event_tree) == 0)
            sim->ev.pool = o->ms[k].m->pool->name;
    }
    ps_textbuf_adds(&sim->line, "}");
    sim_ev_key(sim, "job_count");
    ps_textbuf_addi(&sim->line, o->job_count);
    if (o->unrecognized_spec) {   /* as the service's `unrecognized_spec` alert */
        sim_ev_key(sim, "unrecognized_spec");
        ps_textbuf_adds(&sim->line, o->unrecognized_spec);
    }
    sim_ev_end(sim);

    if (started->state == PS_OP_PENDING)
        sim_pending_reason_update(sim, op, true);
    return sim_process_activated(sim, err);
}

int sim_membership_leave(struct ps_sim *sim, struct sim_op *o, int k, struct ps_error *err)
{
    struct sim_membership *ms = &o->ms[k];
    if (!ms->m)
        return 0;
    struct sim_tree *T = &sim->trees[ms->tree];
    if (ms->in_stats) {
        sim_stats_add(sim, ms->path, ms->path_len, &ms->usage, &ms->demand, -1);
        ms->in_stats = false;
    }
    if (ms->elem >= 0 && T->ts.snap) {
        /* The snapshot borrows the membership's filter, which is about to be freed. */
        struct ps_sched_operation st = {.filter = NULL, .runnable = false, .pending_count = 0,
                                        .allocation = ms->fed_shape};
        if (T->elem_runnable[ms->elem])
            T->runnable_pending -= ps_sched_pending(T->ts.snap, ms->elem);
        T->elem_runnable[ms->elem] = false;
        int rc = ps_sched_set_operation(T->ts.snap, ms->elem, &st, err);
        if (rc != 0)
            return rc;
    }
    ms->m = NULL;
    sim_tree_changed(sim, ms->tree);
    return 0;
}

int sim_op_finish(struct ps_sim *sim, int op, enum sim_op_state state, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    for (int k = 0; k < o->m_count; k++) {
        int rc = sim_membership_leave(sim, o, k, err);
        if (rc != 0)
            return rc;
    }
    enum ps_operation_state final = state == SIM_OP_COMPLETED ? PS_OP_COMPLETED : PS_OP_FAILED;
    int rc = ps_strategy_finish_operation(sim->strategy, o->sc->id, final, sim->now, err);
    if (rc != 0)
        return rc;
    if (o->state == SIM_OP_RUNNING)
        sim->stats.operations_running--;
    else if (o->state == SIM_OP_PENDING)
        sim->stats.operations_pending--;
    if (state == SIM_OP_COMPLETED)
        sim->stats.operations_completed++;
    else
        sim->stats.operations_failed++;
    o->state = state;
    o->finish_ms = sim->now;
    if (o->reason != PS_PENDING_NONE)
        sim->reason_ms[o->reason] += sim->now - o->reason_since_ms;
    o->reason = PS_PENDING_NONE;
    sim_active_remove(sim, op);
    sim_progress(sim);
    sim_ev_begin(sim, state == SIM_OP_COMPLETED ? "operation_completed" : "operation_failed");
    sim_ev_key(sim, "operation_id");
    ps_textbuf_add_json(&sim->line, o->sc->id);
    if (state == SIM_OP_FAILED) {
        sim_ev_key(sim, "error");
        ps_textbuf_add_json(&sim->line, o->error ? o->error : "");
    }
    sim_ev_end(sim);
    return sim_process_activated(sim, err);
}

/* ---- jobs ------------------------------------------------------------------------------- */

static int64_t job_alloc(struct ps_sim *sim)
{
    if (sim->job_free < 0) {
        int64_t cap = sim->job_cap ? 2 * sim->job_cap : 1024;
        struct sim_job *grown = realloc(sim->jobs, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        memset(grown + sim->job_cap, 0, (size_t)(cap - sim->job_cap) * sizeof *grown);
        for (int64_t i = cap - 1; i >= sim->job_cap; i--) {
            grown[i].next_free = sim->job_free;
            sim->job_free = i;
        }
        sim->jobs = grown;
        sim->job_cap = cap;
    }
    int64_t slot = sim->job_free;
    sim->job_free = sim->jobs[slot].next_free;
    return slot;
}

static void job_release(struct ps_sim *sim, int64_t slot)
{
    sim->jobs[slot].serial = 0;
    sim->jobs[slot].next_free = sim->job_free;
    sim->job_free = slot;
}

void sim_job_id(const struct ps_sim *sim, const struct sim_job *job, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%d/%lld/%d", sim->ops[job->op].sc->id, job->task, (long long)job->index,
             job->attempt);
}

int sim_job_element(const struct ps_sim *sim, const struct sim_job *job)
{
    return sim->ops[job->op].ms[job->ms].elem;
}

int64_t sim_job_duration_ms(const struct ps_sim *sim, const struct sim_job *job)
{
    const struct ps_scenario_task *t = sim->ops[job->op].tasks[job->task].spec;
    /* fresh jobs take their index in start order; a retried attempt keeps its job's */
    return job->index < (int64_t)t->job_duration_count ? t->job_durations_ms[job->index]
                                                        : t->duration_ms;
}

void sim_job_plan_end(struct ps_sim *sim, struct sim_job *job)
{
    /* Memory checks go here (sim.h): today every job completes after its duration. */
    job->end_kind = SIM_END_COMPLETED;
    job->end_reason = NULL;
    double factor = sim->sc->node_groups[sim->nodes[job->node].group].job_duration_factor;
    double duration = (double)sim_job_duration_ms(sim, job) * factor;
    job->end_ms = job->start_ms +
                  (duration < (double)PS_SCENARIO_MAX_TIME_MS ? (int64_t)duration
                                                              : PS_SCENARIO_MAX_TIME_MS);
    sim_res_plan_end(sim, job);   /* memory limit failures and overdraft aborts */
    int64_t fail_after = sim->sc->node_groups[sim->nodes[job->node].group].fail_jobs_after_ms;
    if (fail_after >= 0 && job->start_ms + fail_after < job->end_ms) {   /* a broken node */
        job->end_kind = SIM_END_FAILED;
        job->end_reason = "User job failed";
        job->end_ms = job->start_ms + fail_after;
    }
}

int64_t sim_job_cpu_at(const struct ps_sim *sim, const struct sim_job *job, int64_t offset_ms)
{
    const struct ps_scenario_task *t = sim->ops[job->op].tasks[job->task].spec;
    int64_t hard = t->resources.v[PS_RES_CPU];
    if (t->cpu_usage_count == 0)
        return hard;
    size_t lo = 0, hi = t->cpu_usage_count;   /* the last step with offset <= offset_ms */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->cpu_usage[mid].offset_ms <= offset_ms)
            lo = mid;
        else
            hi = mid;
    }
    int64_t cpu = t->cpu_usage[lo].cpu;
    return cpu < hard ? cpu : hard;
}

int64_t sim_job_cpu_time_ms(const struct ps_sim *sim, const struct sim_job *job, int64_t offset_ms)
{
    const struct ps_scenario_task *t = sim->ops[job->op].tasks[job->task].spec;
    int64_t hard = t->resources.v[PS_RES_CPU];
    if (offset_ms <= 0)
        return 0;
    if (t->cpu_usage_count == 0)
        return hard * offset_ms / PS_CPU_SCALE;
    int64_t total = 0;   /* hundredths of a core x ms */
    for (size_t i = 0; i < t->cpu_usage_count && t->cpu_usage[i].offset_ms < offset_ms; i++) {
        int64_t to = i + 1 < t->cpu_usage_count ? t->cpu_usage[i + 1].offset_ms : offset_ms;
        if (to > offset_ms)
            to = offset_ms;
        int64_t cpu = t->cpu_usage[i].cpu < hard ? t->cpu_usage[i].cpu : hard;
        total += cpu * (to - t->cpu_usage[i].offset_ms);
    }
    return total / PS_CPU_SCALE;
}

/* Usage moves with a job: node, tree, membership and the pools' stats. */
static void move_usage(struct ps_sim *sim, struct sim_job *job, struct ps_resources r, int sign)
{
    struct sim_op *o = &sim->ops[job->op];
    struct sim_membership *ms = &o->ms[job->ms];
    struct sim_node *n = &sim->nodes[job->node];
    struct sim_tree *T = &sim->trees[ms->tree];
    const struct ps_scenario_task *t = o->tasks[job->task].spec;
    if (t->disk_medium && n->media) {
        const struct ps_scenario_node_group *g = &sim->sc->node_groups[n->group];
        for (size_t m = 0; m < g->medium_count; m++)
            if (strcmp(g->media[m], t->disk_medium) == 0)
                n->media[m].free -= sign * t->disk_space;
    }
    if (sign > 0) {
        n->usage = ps_resources_add(n->usage, r);
        T->usage = ps_resources_add(T->usage, r);
        ms->usage = ps_resources_add(ms->usage, r);
    } else {
        n->usage = ps_resources_sub(n->usage, r);
        T->usage = ps_resources_sub(T->usage, r);
        ms->usage = ps_resources_sub(ms->usage, r);
    }
    if (ms->m)
        ms->m->usage = ms->usage;
    if (ms->in_stats) {
        struct ps_resources zero = ps_resources_zero();
        sim_stats_add(sim, ms->path, ms->path_len, &r, &zero, sign);
    }
}

/* The job's entry in its node's allocations (sim_node.allocs), which follows the job's record. */
static struct ps_node_allocation *node_alloc(struct ps_sim *sim, const struct sim_job *job)
{
    return &sim->nodes[job->node].allocs[job->node_pos];
}

int sim_job_start(struct ps_sim *sim, int op, int k, int node, struct ps_resources resources,
                  struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    int t = o->cur_task;
    if (t < 0 || o->tasks[t].pending <= 0)
        return ps_error_set(err, PS_ESTATE, "simulator: operation \"%s\" got an allocation with no "
                            "pending job", o->sc->id);
    struct sim_task *task = &o->tasks[t];
    int64_t slot = job_alloc(sim);
    if (slot < 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    struct sim_job *job = &sim->jobs[slot];
    int64_t since = o->submit_ms;
    job->attempt = 0;
    struct ps_memory_overdraft_state overdraft;
    ps_memory_overdraft_state_init(&overdraft);
    if (task->retry_count > 0) {
        struct sim_retry *r = &task->retry[task->retry_head];
        job->index = r->index;
        job->attempt = r->attempt;
        since = r->since_ms;
        overdraft = r->overdraft;
        if (overdraft.user_job_status != PS_OVERDRAFT_NONE ||
            overdraft.job_proxy_status != PS_OVERDRAFT_NONE)
            task->overdraft_retries--;
        task->retry_head = (task->retry_head + 1) % task->retry_cap;
        task->retry_count--;
    } else {
        job->index = task->fresh_next++;
    }
    job->serial = sim->next_serial++;
    job->op = op;
    job->task = t;
    job->ms = k;
    job->node = node;
    job->start_ms = sim->now;
    job->resources = resources;
    job->preempting = false;
    /* The job's own reserve; the allocation had the shape of the task's next job. */
    struct ps_resources actual = sim_res_job_prepare(sim, job, &overdraft);
    task->pending--;
    o->pending--;
    o->running++;

    struct sim_node *n = &sim->nodes[node];
    if (n->job_count == n->job_cap) {
        int cap = n->job_cap ? 2 * n->job_cap : 8;
        int64_t *grown = realloc(n->jobs, (size_t)cap * sizeof *grown);
        if (grown)
            n->jobs = grown;
        struct ps_node_allocation *allocs = realloc(n->allocs, (size_t)cap * sizeof *allocs);
        if (allocs)
            n->allocs = allocs;
        if (!grown || !allocs)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        n->job_cap = cap;
    }
    job->node_pos = n->job_count;
    n->jobs[n->job_count++] = slot;
    move_usage(sim, job, resources, 1);
    int prc = sim_preempt_job_started(sim, slot, err);
    if (prc != 0)
        return prc;
    if (n->allocs_epoch != sim->elem_epoch)   /* the others' elements are refreshed first */
        sim_node_allocs_refresh(sim, n);
    *node_alloc(sim, job) = (struct ps_node_allocation){
        .id = slot, .op = o->ms[k].elem, .resources = resources, .start_time_ms = sim->now,
        .slot = job->lists_slot};
    sim_op_demand_changed(sim, op);
    o->ms[k].sched_reason = PS_SCHED_OK;
    if (!ps_resources_equal(actual, resources)) {
        int rc = sim_job_set_usage(sim, slot, actual, err);
        if (rc != 0)
            return rc;
    }

    if (sim_record_wait(sim, sim->now - since) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    sim_job_plan_end(sim, job);
    if (sim_push(sim, job->end_ms, SIM_EV_JOB_END, slot, job->serial) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    sim->running_jobs++;
    sim->stats.attempts_started++;
    sim_progress(sim);
    int rc = sim_res_job_started(sim, slot, err);
    if (rc != 0)
        return rc;

    sim_ev_job(sim, "job_started", job);
    sim_ev_key(sim, "task");
    ps_textbuf_add_json(&sim->line, task->spec->name);
    sim_ev_key(sim, "tree");
    ps_textbuf_add_json(&sim->line, sim->trees[o->ms[k].tree].name);
    sim_ev_key(sim, "resources");
    sim_text_resources(&sim->line, &job->resources);
    sim->ev.resources = &job->resources;
    sim_ev_key(sim, "memory_reserve");
    ps_textbuf_addi(&sim->line, job->resources.v[PS_RES_MEMORY]);
    sim_ev_end(sim);
    sim_job_wait_check(sim, slot);
    return 0;
}

/* Takes the job off its node, returns its usage everywhere, frees its slot. */
static int job_remove(struct ps_sim *sim, int64_t slot, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    struct sim_op *o = &sim->ops[job->op];
    struct sim_membership *ms = &o->ms[job->ms];
    struct sim_tree *T = &sim->trees[ms->tree];
    struct sim_node *n = &sim->nodes[job->node];
    bool held = !job->waiting;
    if (job->waiting)
        n->waiting--;
    int last = n->job_count - 1;
    n->jobs[job->node_pos] = n->jobs[last];
    n->allocs[job->node_pos] = n->allocs[last];
    sim->jobs[n->jobs[job->node_pos]].node_pos = job->node_pos;
    n->job_count--;
    sim_preempt_job_removed(sim, slot);
    move_usage(sim, job, job->resources, -1);
    if (ms->elem >= 0 && T->ts.snap) {
        int rc = ps_sched_allocation_finished(T->ts.snap, ms->elem, job->resources, err);
        if (rc != 0)
            return rc;
    }
    o->running--;
    sim->running_jobs--;
    sim_tree_changed(sim, ms->tree);
    sim_progress(sim);
    int node = job->node;
    job_release(sim, slot);
    /* upstream's send_heartbeat_on_job_finished: the node heartbeats now, reporting the end
     * (after this millisecond's job ends, before its submissions and fair share update: the
     * scheduler learns of the end from this heartbeat), its next periodic one a period later;
     * not from within its own heartbeat (a job it preempted) */
    if (sim->sc->node_groups[n->group].send_heartbeat_on_job_finished && n->tree >= 0 &&
        sim->heartbeat_node != node && sim_arm_heartbeat(sim, node, sim->now, true) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    /* what it held may let waiting jobs start (a heartbeat settles its own node at its end) */
    if (held && n->waiting > 0 && sim->heartbeat_node != node)
        return sim_node_waiting(sim, node, err);
    return 0;
}

static int job_fail(struct ps_sim *sim, int64_t slot, struct ps_error *err);

int sim_job_end_event(struct ps_sim *sim, int64_t slot, int64_t serial, struct ps_error *err)
{
    if (slot < 0 || slot >= sim->job_cap || sim->jobs[slot].serial != serial)
        return 0;   /* the job ended otherwise (aborted) before */
    struct sim_job *job = &sim->jobs[slot];
    if (job->waiting || sim->now != job->end_ms)
        return 0;   /* planned at its start, then it waited: its real start planned anew */
    if (job->end_kind == SIM_END_ABORTED)
        return sim_job_abort(sim, slot, job->end_reason ? job->end_reason : "unknown", err);
    if (job->end_kind == SIM_END_FAILED)
        return job_fail(sim, slot, err);
    int op = job->op;
    struct sim_op *o = &sim->ops[op];
    struct sim_task *task = &o->tasks[job->task];
    int64_t run = sim->now - job->start_ms;
    const char *tree = sim->trees[o->ms[job->ms].tree].name;
    sim_ev_job(sim, "job_completed", job);
    sim_ev_statistics(sim, job);
    sim_ev_end(sim);
    int rc = sim_res_job_ending(sim, job, job->end_kind, job->end_reason, err);
    if (rc == 0)
        rc = job_remove(sim, slot, err);
    if (rc != 0)
        return rc;
    sim->stats.jobs_completed++;
    o->jobs_total_duration_ms += run;
    if (run > o->job_max_duration_ms)
        o->job_max_duration_ms = run;
    task->completed++;
    o->completed++;
    sim_op_demand_changed(sim, op);
    if (o->completed == o->job_count)
        return sim_op_finish(sim, op, SIM_OP_COMPLETED, err);
    rc = sim_tentative_job_ended(sim, op, tree, true, run, err);   /* may ban a slow tree */
    if (rc != 0)
        return rc;
    return sim_op_sync(sim, op, err);   /* the memory digest may have moved the reserve */
}

/* Puts a job that did not complete back to its task's pending jobs, retried first. */
static int requeue(struct ps_sim *sim, const struct sim_job *job, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[job->op];
    struct sim_task *task = &o->tasks[job->task];
    if (task->retry_count == task->retry_cap) {
        int64_t cap = task->retry_cap ? 2 * task->retry_cap : 4;
        struct sim_retry *grown = malloc((size_t)cap * sizeof *grown);
        if (!grown)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        for (int64_t i = 0; i < task->retry_count; i++)
            grown[i] = task->retry[(task->retry_head + i) % task->retry_cap];
        free(task->retry);
        task->retry = grown;
        task->retry_cap = cap;
        task->retry_head = 0;
    }
    task->retry[(task->retry_head + task->retry_count) % task->retry_cap] =
        (struct sim_retry){.index = job->index, .attempt = job->attempt + 1, .since_ms = sim->now,
                           .overdraft = job->overdraft};
    if (job->overdraft.user_job_status != PS_OVERDRAFT_NONE ||
        job->overdraft.job_proxy_status != PS_OVERDRAFT_NONE)
        task->overdraft_retries++;
    task->retry_count++;
    task->pending++;
    o->pending++;
    return 0;
}

int sim_job_abort(struct ps_sim *sim, int64_t slot, const char *reason, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    int op = job->op;
    struct sim_op *o = &sim->ops[op];
    int64_t run = job->waiting ? 0 : sim->now - job->start_ms;
    const char *tree = sim->trees[o->ms[job->ms].tree].name;
    sim_ev_job(sim, "job_aborted", job);
    sim_ev_key(sim, "reason");
    ps_textbuf_add_json(&sim->line, reason);
    sim_ev_statistics(sim, job);
    sim_ev_end(sim);
    /* The resources' view first: it may set the overdraft state the retry carries. */
    int rc = sim_res_job_ending(sim, job, SIM_END_ABORTED, reason, err);
    if (rc == 0)
        rc = requeue(sim, job, err);
    if (rc != 0)
        return rc;
    o->aborted_job_count++;
    sim->stats.attempts_aborted++;
    if (strcmp(reason, "preemption") == 0) {
        /* As YTsaurus's simulator: a preempted job's run time counts in jobs_total_duration
         * too (its unit test: jobs_total = the jobs' durations + preempted_jobs_total). */
        o->preempted_job_count++;
        o->jobs_total_duration_ms += run;
        o->preempted_jobs_total_duration_ms += run;
        sim->stats.attempts_preempted++;
    }
    rc = job_remove(sim, slot, err);
    if (rc == 0)
        rc = sim_tentative_job_ended(sim, op, tree, false, run, err);
    if (rc != 0)
        return rc;
    sim_op_demand_changed(sim, op);
    return sim_op_sync(sim, op, err);
}

int sim_op_fail(struct ps_sim *sim, int op, const char *error, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    free(o->error);
    o->error = strdup(error);
    if (!o->error)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    /* Its running jobs are aborted first (rare: a scan of the nodes is fine). */
    for (int64_t i = 0; i < sim->node_count; i++) {
        const struct sim_node *n = &sim->nodes[i];
        for (int k = n->job_count - 1; k >= 0; k--) {
            if (sim->jobs[n->jobs[k]].op != op)
                continue;
            int rc = sim_job_abort(sim, n->jobs[k], "operation_failed", err);
            if (rc != 0)
                return rc;
        }
    }
    return sim_op_finish(sim, op, SIM_OP_FAILED, err);
}

/* A job that failed (job_failed): retried like an abort, and the operation fails once its
 * spec's max_failed_job_count jobs have failed (failed >= max, YTsaurus's controller; 0 fails
 * at the first). Its node bans (core/node_ban.h) may ban the node for the operation, or make
 * a failure at a node banned already an abort (node_banned). */
static int job_fail(struct ps_sim *sim, int64_t slot, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    int op = job->op;
    struct sim_op *o = &sim->ops[op];
    const char *node_id = sim->nodes[job->node].node->id;
    enum ps_node_ban_failure ban =
        ps_node_ban_job_failed(&o->bans, ps_strmap_get(&o->banned_nodes, node_id) != NULL);
    if (ban == PS_NODE_BAN_ABORTED)
        return sim_job_abort(sim, slot, PS_NODE_BAN_ABORT_REASON, err);
    if (ban == PS_NODE_BAN_FAILED_BAN &&
        ps_strmap_put(&o->banned_nodes, node_id, &sim->nodes[job->node]) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int64_t run = sim->now - job->start_ms;
    const char *tree = sim->trees[o->ms[job->ms].tree].name;
    sim_ev_job(sim, "job_failed", job);
    sim_ev_key(sim, "error");
    ps_textbuf_add_json(&sim->line, job->end_reason ? job->end_reason : "");
    sim_ev_statistics(sim, job);
    sim_ev_end(sim);
    int rc = sim_res_job_ending(sim, job, SIM_END_FAILED, job->end_reason, err);
    if (rc == 0)
        rc = requeue(sim, job, err);
    if (rc != 0)
        return rc;
    o->failed_job_count++;
    sim->stats.jobs_failed++;
    rc = job_remove(sim, slot, err);
    if (rc == 0)
        rc = sim_tentative_job_ended(sim, op, tree, false, run, err);
    if (rc != 0)
        return rc;
    sim_op_demand_changed(sim, op);
    if (o->failed_job_count >= o->max_failed_job_count)
        return sim_op_fail(sim, op, "Failed jobs limit exceeded", err);
    return sim_op_sync(sim, op, err);
}

int sim_job_preempt(struct ps_sim *sim, int64_t slot, int for_op, const char *preemption_reason,
                    int64_t interrupt_timeout_ms, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    if (job->serial == 0 || job->preempting)
        return 0;
    sim_ev_job(sim, "job_preempted", job);
    sim_ev_key(sim, "preempted_for");
    if (for_op >= 0)
        ps_textbuf_add_json(&sim->line, sim->ops[for_op].sc->id);
    else
        ps_textbuf_adds(&sim->line, "null");
    sim_ev_key(sim, "preemption_reason");
    ps_textbuf_add_json(&sim->line, preemption_reason);
    sim_ev_key(sim, "interrupt_timeout");
    ps_textbuf_addi(&sim->line, interrupt_timeout_ms > 0 ? interrupt_timeout_ms : 0);
    sim_ev_end(sim);
    if (interrupt_timeout_ms <= 0 || job->waiting)   /* a waiting job has nothing to give back */
        return sim_job_abort(sim, slot, "preemption", err);
    job->preempting = true;
    node_alloc(sim, job)->leaving = true;
    if (sim_push(sim, sim->now + interrupt_timeout_ms, SIM_EV_JOB_ABORT, slot, job->serial) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

int sim_job_abort_event(struct ps_sim *sim, int64_t slot, int64_t serial, struct ps_error *err)
{
    if (slot < 0 || slot >= sim->job_cap || sim->jobs[slot].serial != serial)
        return 0;   /* it ended before its interrupt timeout */
    return sim_job_abort(sim, slot, "preemption", err);
}

int sim_job_set_usage(struct ps_sim *sim, int64_t slot, struct ps_resources usage, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    struct sim_membership *ms = &sim->ops[job->op].ms[job->ms];
    struct sim_tree *T = &sim->trees[ms->tree];
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (usage.v[r] < 0)
            return ps_error_set(err, PS_EINVAL, "job usage: negative %s", ps_resource_name(r));
    if (ms->elem >= 0 && T->ts.snap) {
        int rc = ps_sched_allocation_finished(T->ts.snap, ms->elem, job->resources, err);
        if (rc == 0)
            rc = ps_sched_allocation_started(T->ts.snap, ms->elem, usage, err);
        if (rc != 0)
            return rc;
    }
    int prc = sim_preempt_job_usage(sim, slot, usage, err);
    if (prc != 0)
        return prc;
    move_usage(sim, job, job->resources, -1);
    move_usage(sim, job, usage, 1);
    job->resources = usage;
    node_alloc(sim, job)->resources = usage;
    sim_op_demand_changed(sim, job->op);
    sim_tree_changed(sim, ms->tree);
    return 0;
}
