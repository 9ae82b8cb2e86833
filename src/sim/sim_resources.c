/* sim_resources.c — the job CPU monitor and the memory reserve in the simulator (sim.h,
 * hooks (b); docs/simulate-resources.md has the model and every choice made here).
 *
 * CPU: every job of an operation whose spec has a job_cpu_monitor section gets a
 * ps_cpu_monitor with that config. It ticks (SIM_EV_CPU_TICK) at start + k x check_period for
 * every k with k x check_period >= start_delay (the checks upstream's periodic executor runs at
 * or after the start instant), fed with the job's cumulative CPU time (sim_job_cpu_time_ms: the
 * task's cpu_usage capped by its cpu request). A decision with enable_cpu_reclaim moves the
 * job's CPU guarantee, which the scheduler counts as the job's cpu usage (rounded up to the
 * hundredth of a core the engine counts in): node, snapshot, operation and pools follow, so the
 * freed cores go to other jobs. A raise is always taken, as upstream's node takes it (the job
 * proxy's TrySetCpuGuarantee only fails when the node cannot be told): when the node has not the
 * free cpu, its usage exceeds its limits: the node aborts its newest jobs (resource_overdraft)
 * after its group's cpu_overdraft_timeout (core/node_overdraft.h, SIM_EV_NODE_ADJUST), unless
 * the scheduling loop's overcommit check preempts first, after the tree's
 * allowed_node_resources_overcommit_duration (TestSchedulerAbortsJobOnLackOfCpu). With reclaim off the
 * soft limit moves (dry run) and only the statistics show it. Operations without the section
 * have no ticks and no CPU monitor statistics: a tick per running job per second would
 * multiply the events of a large simulation many times over.
 *
 * Memory: every task that requests memory has a ps_memory_task (user job and job proxy
 * digests). The memory a job asks for is footprint + job proxy reserve + memory_limit x the
 * user job factor (memory_reserve.h) and replaces the task's memory request. A task requesting
 * no memory has no reserve (the nodes may leave memory unlimited). The job's peak (the task's
 * max_memory, or with max_memory_spread this attempt's own draw, ps_scenario_job_max_memory)
 * is reached at its start; the node's memory check comes SIM_MEMORY_CHECK_MS later (or at the
 * end of a shorter job): above memory_limit the job fails with "Memory limit exceeded"; above
 * its user job reserve, the growth is core/node_overdraft.h's memory rule: when the node's free
 * memory (its limit minus the reserves of its running jobs, this one included, minus what
 * other jobs already use above their reserves) does not cover the excess, the rule's victim is
 * aborted with resource_overdraft at the check (the job itself, being above its reserve);
 * otherwise the excess is taken from the node's free memory until the job ends.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/node_overdraft.h"
#include "core/op_spec.h"
#include "io/json_value.h"
#include "sim/sim_internal.h"

/* YTsaurus's exec node checks memory once a second (memory_watchdog_period). */
#define SIM_MEMORY_CHECK_MS 1000

static bool has_overdraft(const struct ps_memory_overdraft_state *st)
{
    return st->user_job_status != PS_OVERDRAFT_NONE || st->job_proxy_status != PS_OVERDRAFT_NONE;
}

/* ---- operations ------------------------------------------------------------------------- */

int sim_res_init(struct ps_sim *sim, struct ps_error *err)
{
    ps_memory_controller_config_init(&sim->memory_controller);
    if (!sim->sc->controller_agent)
        return 0;
    struct ps_value v;
    int rc = ps_json_to_value(sim->sc->controller_agent, &v, err);
    if (rc != 0)
        return rc;
    rc = ps_attr_apply(&ps_memory_controller_config_table, &sim->memory_controller, &v, false, err);
    ps_value_release(&v);
    if (rc == 0)
        rc = ps_memory_controller_config_validate(&sim->memory_controller, err);
    if (rc != 0)
        ps_error_prefix(err, "controller_agent");
    return rc;
}

int sim_res_op_init(struct ps_sim *sim, int op, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    struct ps_operation_spec spec;
    json_t *unknown = NULL;
    int rc = ps_operation_spec_from_json(o->sc->spec, &spec, &unknown, err);
    if (rc != 0) {
        ps_error_prefix(err, "operations[%d].spec", op);
        return rc;
    }
    if (unknown) {
        o->unrecognized_spec = json_dumps(unknown, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(unknown);
        if (!o->unrecognized_spec) {
            ps_operation_spec_release(&spec);
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
    }
    o->max_failed_job_count = spec.max_failed_job_count.set ? spec.max_failed_job_count.value : 10;
    o->bans = ps_node_ban_spec_of(&spec);
    o->cpu_monitor = spec.has_job_cpu_monitor;
    o->cpu_config = spec.job_cpu_monitor;
    for (int t = 0; rc == 0 && t < o->task_count; t++) {
        const struct ps_scenario_task *ts = o->tasks[t].spec;
        if (ts->resources.v[PS_RES_MEMORY] <= 0)
            continue;
        struct ps_memory_task_spec ms;
        ps_memory_task_spec_init(&ms);
        ms.memory_limit_bytes = ts->memory_limit_bytes;
        ms.tmpfs_size_bytes = ts->tmpfs_size_bytes;
        ps_memory_task_spec_from_operation(&ms, &spec);
        ms.job_proxy_memory_bytes = ts->job_proxy_memory_bytes;
        rc = ps_memory_task_init(&o->tasks[t].memory, &sim->memory_controller, &ms, err);
        if (rc != 0)
            ps_error_prefix(err, "operations[%d].tasks[%d]", op, t);
        else
            o->tasks[t].memory_on = true;
    }
    ps_operation_spec_release(&spec);
    return rc;
}

void sim_res_op_release(struct sim_op *o)
{
    for (int t = 0; o->tasks && t < o->task_count; t++) {
        if (o->tasks[t].memory_on)
            ps_memory_task_release(&o->tasks[t].memory);
        o->tasks[t].memory_on = false;
    }
}

/* ---- memory ----------------------------------------------------------------------------- */

int64_t sim_res_task_memory(const struct ps_sim *sim, int op, int task)
{
    /* the memo is written through the const view (the tasks are the simulator's own, mutable) */
    struct sim_task *t = (struct sim_task *)&sim->ops[op].tasks[task];
    bool retrying = t->overdraft_retries > 0;
    if (t->memo_valid && t->memo_version == t->memory_version && t->memo_retrying == retrying)
        return t->memo_memory;
    struct ps_memory_job job;
    ps_memory_task_reserve(&t->memory, NULL, &job);
    int64_t memory = job.memory_bytes;
    if (t->overdraft_retries > 0) {
        /* A retry after an overdraft asks for the upper bounds: the shape must cover it. */
        struct ps_memory_overdraft_state st = {
            .user_job_status = PS_OVERDRAFT_MULTIPLE_TIMES,
            .job_proxy_status = PS_OVERDRAFT_MULTIPLE_TIMES,
            .dedicated_user_job_memory_reserve_factor = 1.0,
            .dedicated_job_proxy_memory_reserve_factor = t->memory.job_proxy_upper_bound,
        };
        ps_memory_task_reserve(&t->memory, &st, &job);
        if (job.memory_bytes > memory)
            memory = job.memory_bytes;
    }
    t->memo_valid = true;
    t->memo_version = t->memory_version;
    t->memo_retrying = retrying;
    t->memo_memory = memory;
    return memory;
}

struct ps_resources sim_res_job_prepare(struct ps_sim *sim, struct sim_job *job,
                                        const struct ps_memory_overdraft_state *overdraft)
{
    struct sim_task *t = &sim->ops[job->op].tasks[job->task];
    struct ps_resources r = t->spec->resources;
    job->overdraft = *overdraft;
    job->memory_excess = 0;
    job->max_memory = ps_scenario_job_max_memory(sim->sc->seed, sim->ops[job->op].sc->id, t->spec,
                                                 job->index, job->attempt);
    job->cpu = NULL;
    memset(&job->memory, 0, sizeof job->memory);
    if (t->memory_on) {
        ps_memory_task_reserve(&t->memory, has_overdraft(overdraft) ? overdraft : NULL,
                               &job->memory);
        r.v[PS_RES_MEMORY] = job->memory.memory_bytes;
        sim->res.memory_jobs_started++;
    }
    return r;
}

/* The job proxy's peak: the task's job_proxy_max_memory, or what it is estimated to use, its
 * footprint included. */
static int64_t job_proxy_peak(const struct ps_sim *sim, const struct sim_job *job)
{
    int64_t given = sim->ops[job->op].tasks[job->task].spec->job_proxy_max_memory_bytes;
    return given >= 0 ? given
                      : job->memory.job_proxy_memory_bytes + job->memory.footprint_memory_bytes;
}

/* The node's victim of job's growth by excess (core/node_overdraft.h): its running jobs in the
 * node's order, each holding its reserve plus what it took above; job holds its grown size.
 * NULL when none is above its reserve. */
static struct sim_job *memory_victim(struct ps_sim *sim, const struct sim_node *n,
                                     struct sim_job *job, int64_t excess)
{
    size_t count = (size_t)n->job_count, grower = count;
    struct ps_node_memory_job *use = malloc((count ? count : 1) * sizeof *use);
    if (!use)
        return job;   /* the grower, above its reserve, is the rule's answer for it */
    for (size_t k = 0; k < count; k++) {
        const struct sim_job *o = &sim->jobs[n->jobs[k]];
        int64_t reserve = o->resources.v[PS_RES_MEMORY];
        use[k] = (struct ps_node_memory_job){reserve + o->memory_excess, reserve};
        if (o == job) {
            use[k].held = reserve + excess;
            grower = k;
        }
    }
    size_t v = ps_node_memory_overdraft_victim(use, count, grower);
    free(use);
    return v < count ? &sim->jobs[n->jobs[v]] : NULL;
}

void sim_res_plan_end(struct ps_sim *sim, struct sim_job *job)
{
    const struct sim_task *t = &sim->ops[job->op].tasks[job->task];
    if (!t->memory_on)
        return;
    int64_t max = job->max_memory;   /* this attempt's own peak */
    int64_t duration = sim_job_duration_ms(sim, job);
    int64_t check = duration < SIM_MEMORY_CHECK_MS ? duration : SIM_MEMORY_CHECK_MS;
    if (max > t->spec->memory_limit_bytes) {
        job->end_kind = SIM_END_FAILED;
        job->end_reason = "Memory limit exceeded";
        job->end_ms = job->start_ms + check;
        return;
    }
    int64_t excess = max - job->memory.user_job_memory_reserve_bytes;
    /* The job proxy overdrafts above its reserve (footprint included), as upstream's node. */
    int64_t proxy_excess = job_proxy_peak(sim, job) - (job->memory.job_proxy_memory_reserve_bytes +
                                                        job->memory.footprint_memory_bytes);
    excess = (excess > 0 ? excess : 0) + (proxy_excess > 0 ? proxy_excess : 0);
    if (excess <= 0)
        return;
    struct sim_node *n = &sim->nodes[job->node];
    if (sim->sc->node_groups[n->group].always_abort_on_memory_reserve_overdraft) {
        job->end_kind = SIM_END_ABORTED;
        job->end_reason = "resource_overdraft";
        job->end_ms = job->start_ms + check;
        return;
    }
    int64_t limit = n->limits.v[PS_RES_MEMORY];
    bool over = ps_node_memory_overdraft(n->usage.v[PS_RES_MEMORY] + n->memory_excess, excess,
                                         limit >= PS_RES_INFINITE ? 0 : limit);
    struct sim_job *victim = over ? memory_victim(sim, n, job, excess) : NULL;
    if (victim != job) {
        job->memory_excess = excess;
        n->memory_excess += excess;
    }
    int64_t at = job->start_ms + check;
    if (!victim)
        return;   /* nobody above a reserve */
    if (victim != job) {
        /* another job goes at the check, unless it ends first; the grower's own end event is
         * pushed by its start (out of memory for the event: the victim runs on) */
        if (at >= victim->end_ms ||
            sim_push(sim, at, SIM_EV_JOB_END, victim - sim->jobs, victim->serial) != 0)
            return;
    }
    victim->end_kind = SIM_END_ABORTED;
    victim->end_reason = "resource_overdraft";
    victim->end_ms = at;
}

static void memory_stats(const struct ps_sim *sim, const struct sim_job *job,
                         struct ps_memory_job_statistics *st)
{
    memset(st, 0, sizeof *st);
    st->has_user_job_max_memory = true;
    st->user_job_max_memory_bytes = job->max_memory;
    st->has_user_job_memory_reserve = true;
    st->user_job_memory_reserve_bytes = job->memory.user_job_memory_reserve_bytes;
    st->has_job_proxy_max_memory = true;
    st->job_proxy_max_memory_bytes = job_proxy_peak(sim, job);
}

int sim_res_job_ending(struct ps_sim *sim, struct sim_job *job, enum sim_job_end_kind kind,
                       const char *reason, struct ps_error *err)
{
    (void)err;
    struct sim_task *t = &sim->ops[job->op].tasks[job->task];
    sim->nodes[job->node].memory_excess -= job->memory_excess;
    job->memory_excess = 0;
    if (t->memory_on) {
        struct ps_memory_job_statistics st;
        memory_stats(sim, job, &st);
        if (kind == SIM_END_COMPLETED) {
            ps_memory_task_add_samples(&t->memory, &job->memory, &st, false, NULL);
            t->memory_version++;
            double secs = (double)(sim->now - job->start_ms) / 1000.0;
            double reserve = (double)job->memory.user_job_memory_reserve_bytes;
            double used = (double)st.user_job_max_memory_bytes;
            sim->res.memory_jobs_completed++;
            sim->res.reserve_byte_s += reserve * secs;
            sim->res.used_byte_s += used * secs;
            if (reserve > 0)
                sim->res.slack_sum += (reserve - used) / reserve;
        } else if (kind == SIM_END_ABORTED && reason && strcmp(reason, "resource_overdraft") == 0) {
            ps_memory_task_add_samples(&t->memory, &job->memory, &st, true, NULL);
            ps_memory_task_on_resource_overdraft(&t->memory, &job->memory, &st, &job->overdraft,
                                                 NULL);
            t->memory_version++;
            sim->res.overdraft_aborts++;
        } else if (kind == SIM_END_FAILED && reason && strcmp(reason, "Memory limit exceeded") == 0) {
            sim->res.memory_limit_failures++;
        }
    }
    if (job->cpu) {
        sim->res.preemptible_core_s += job->cpu->aggregated_preemptible_cpu;
        ps_cpu_monitor_release(job->cpu);
        free(job->cpu);
        job->cpu = NULL;
    }
    return 0;
}

/* ---- CPU -------------------------------------------------------------------------------- */

static int push_tick(struct ps_sim *sim, int64_t slot, int64_t when)
{
    const struct sim_job *job = &sim->jobs[slot];
    if (when >= job->end_ms)
        return 0;   /* the job ends first */
    return sim_push(sim, when, SIM_EV_CPU_TICK, slot, job->serial);
}

int sim_res_job_started(struct ps_sim *sim, int64_t slot, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    const struct sim_op *o = &sim->ops[job->op];
    int64_t hard = o->tasks[job->task].spec->resources.v[PS_RES_CPU];
    if (!o->cpu_monitor || hard <= 0)
        return 0;
    job->cpu = calloc(1, sizeof *job->cpu);
    if (!job->cpu)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_cpu_monitor_init(job->cpu, &o->cpu_config, (double)hard / PS_CPU_SCALE, err);
    if (rc == 0)
        rc = ps_cpu_monitor_start(job->cpu, sim->now, err);
    if (rc != 0) {
        free(job->cpu);
        job->cpu = NULL;
        return rc;
    }
    sim->res.cpu_jobs++;
    int64_t period = o->cpu_config.check_period_ms, delay = o->cpu_config.start_delay_ms;
    int64_t first = (delay + period - 1) / period * period;
    if (push_tick(sim, slot, sim->now + first) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

int sim_cpu_tick_event(struct ps_sim *sim, int64_t slot, int64_t serial, struct ps_error *err)
{
    if (slot < 0 || slot >= sim->job_cap || sim->jobs[slot].serial != serial || !sim->jobs[slot].cpu)
        return 0;   /* the job ended */
    struct sim_job *job = &sim->jobs[slot];
    if (job->waiting)   /* it does not run yet: nothing to measure */
        return push_tick(sim, slot, sim->now + job->cpu->config.check_period_ms) != 0
                   ? ps_error_set(err, PS_ENOMEM, "out of memory")
                   : 0;
    struct ps_cpu_monitor_tick tick;
    double total = (double)sim_job_cpu_time_ms(sim, job, sim->now - job->start_ms) / 1000.0;
    int rc = ps_cpu_monitor_tick(job->cpu, sim->now, total, NULL, NULL, &tick, err);
    if (rc != 0)
        return rc;
    sim->res.cpu_ticks++;
    if (tick.changed && tick.apply) {
        struct ps_resources usage = job->resources;
        usage.v[PS_RES_CPU] = ps_node_cpu_units(tick.new_soft_limit);
        sim->res.cpu_limit_changes++;
        sim_ev_job(sim, "job_cpu_limit_changed", job);
        sim_ev_key(sim, "old_cpu_limit");
        sim_text_double(&sim->line, tick.old_soft_limit);
        sim_ev_key(sim, "new_cpu_limit");
        sim_text_double(&sim->line, tick.new_soft_limit);
        sim_ev_key(sim, "cpu_usage");   /* the guarantee as the scheduler counts it */
        sim_text_amount(&sim->line, PS_RES_CPU, usage.v[PS_RES_CPU]);
        sim_ev_end(sim);
        if (usage.v[PS_RES_CPU] != job->resources.v[PS_RES_CPU]) {
            int node = job->node;
            rc = sim_job_set_usage(sim, slot, usage, err);
            if (rc == 0)
                rc = sim_res_node_changed(sim, node, err);
            if (rc != 0)
                return rc;
        }
    }
    if (push_tick(sim, slot, sim->now + job->cpu->config.check_period_ms) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

/* ---- the node's CPU overdraft (core/node_overdraft.h) ------------------------------------- */

static struct ps_node_overdraft_config node_overdraft_config(const struct ps_sim *sim, int node)
{
    const struct ps_scenario_node_group *g = &sim->sc->node_groups[sim->nodes[node].group];
    return (struct ps_node_overdraft_config){g->cpu_overdraft_timeout_ms,
                                             g->resource_adjustment_period_ms};
}

static bool cpu_over(const struct sim_node *n)
{
    int64_t limit = n->limits.v[PS_RES_CPU];
    return limit < PS_RES_INFINITE && n->usage.v[PS_RES_CPU] > limit;
}

/* The node's adjustments run at k x period from its connection (time 0), as the agent's from
 * its start; only those while it is above its cpu are queued (the others change nothing). */
static int arm_adjust(struct ps_sim *sim, int node, int64_t after, struct ps_error *err)
{
    struct sim_node *n = &sim->nodes[node];
    if (n->adjust_armed)
        return 0;
    int64_t period = node_overdraft_config(sim, node).resource_adjustment_period_ms;
    int64_t when = (after + period - 1) / period * period;
    if (sim_push(sim, when, SIM_EV_NODE_ADJUST, node, 0) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    n->adjust_armed = true;
    return 0;
}

int sim_res_node_changed(struct ps_sim *sim, int node, struct ps_error *err)
{
    return cpu_over(&sim->nodes[node]) ? arm_adjust(sim, node, sim->now, err) : 0;
}

static bool started_before(const struct ps_sim *sim, int64_t x, int64_t y)
{
    const struct sim_job *a = &sim->jobs[x], *b = &sim->jobs[y];
    return a->start_ms != b->start_ms ? a->start_ms < b->start_ms : a->serial < b->serial;
}

/* The node's running jobs, oldest first (start time, then start order); a node runs few. */
static int64_t *jobs_by_start(struct ps_sim *sim, const struct sim_node *n)
{
    int64_t *slots = malloc((size_t)(n->job_count ? n->job_count : 1) * sizeof *slots);
    if (!slots)
        return NULL;
    for (int k = 0; k < n->job_count; k++) {
        int i = k;
        for (; i > 0 && started_before(sim, n->jobs[k], slots[i - 1]); i--)
            slots[i] = slots[i - 1];
        slots[i] = n->jobs[k];
    }
    return slots;
}

int sim_node_adjust_event(struct ps_sim *sim, int node, struct ps_error *err)
{
    struct sim_node *n = &sim->nodes[node];
    n->adjust_armed = false;
    struct ps_node_overdraft_config cfg = node_overdraft_config(sim, node);
    int64_t limit = n->limits.v[PS_RES_CPU];
    if (limit >= PS_RES_INFINITE) {
        n->cpu_overdraft_since_ms = PS_NO_CPU_OVERDRAFT;
        return 0;
    }
    if (!ps_node_cpu_overdraft_adjust(&cfg, &n->cpu_overdraft_since_ms, n->usage.v[PS_RES_CPU],
                                      limit, sim->now)) {
        return n->cpu_overdraft_since_ms != PS_NO_CPU_OVERDRAFT
                   ? arm_adjust(sim, node, sim->now + 1, err)
                   : 0;
    }
    int64_t *slots = jobs_by_start(sim, n);
    int64_t *cpu = slots ? malloc((size_t)(n->job_count ? n->job_count : 1) * sizeof *cpu) : NULL;
    if (!cpu) {
        free(slots);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    size_t count = (size_t)n->job_count;
    for (size_t k = 0; k < count; k++)
        cpu[k] = sim->jobs[slots[k]].resources.v[PS_RES_CPU];
    size_t v = ps_node_cpu_overdraft_victims(cpu, count, limit);
    int rc = 0;
    for (size_t k = 0; k < v && rc == 0; k++)
        rc = sim_job_abort(sim, slots[count - 1 - k], "resource_overdraft", err);
    free(cpu);
    free(slots);
    if (rc == 0 && cpu_over(n))
        rc = arm_adjust(sim, node, sim->now + 1, err);
    return rc;
}

/* ---- outputs ---------------------------------------------------------------------------- */

static void put_stat(struct ps_textbuf *b, bool *first, const char *path, int64_t v)
{
    if (!*first)
        ps_textbuf_add(b, ",", 1);
    *first = false;
    ps_textbuf_add_json(b, path[0] == '/' ? path + 1 : path);
    ps_textbuf_add(b, ":", 1);
    ps_textbuf_addi(b, v);
}

void sim_res_statistics(struct ps_sim *sim, const struct sim_job *job, struct ps_textbuf *b,
                        bool *first)
{
    const struct sim_task *t = &sim->ops[job->op].tasks[job->task];
    if (!t->memory_on) {
        put_stat(b, first, "user_job/memory_reserve", job->resources.v[PS_RES_MEMORY]);
    } else {
        struct ps_stat_sample s[PS_MEMORY_CONTROLLER_STAT_MAX];
        size_t n = ps_memory_user_job_statistics(&job->memory, s);
        for (size_t i = 0; i < n; i++)
            if (strcmp(s[i].path, PS_STAT_USER_JOB_MEMORY_LIMIT) != 0)   /* written already */
                put_stat(b, first, s[i].path, s[i].value);
        struct ps_memory_job_statistics st;
        memory_stats(sim, job, &st);
        put_stat(b, first, PS_STAT_JOB_PROXY_MAX_MEMORY, st.job_proxy_max_memory_bytes);
        int64_t run_ms = sim->now - job->start_ms;
        n = ps_memory_controller_statistics(&job->memory, &st, run_ms, s);
        for (size_t i = 0; i < n; i++)
            if (strcmp(s[i].path, PS_STAT_TIME_TOTAL) != 0)
                put_stat(b, first, s[i].path, s[i].value);
        /* upstream's job proxy statistics of memory over time, MiB x s; here each process holds
         * its peak from the start */
        put_stat(b, first, "user_job/cumulative_memory_mb_sec",
                 (int64_t)((double)st.user_job_max_memory_bytes * (double)run_ms / 1000.0 /
                           (1024.0 * 1024.0)));
        put_stat(b, first, "job_proxy/cumulative_memory_mb_sec",
                 (int64_t)((double)st.job_proxy_max_memory_bytes * (double)run_ms / 1000.0 /
                           (1024.0 * 1024.0)));
    }
    if (job->cpu) {
        struct ps_stat_sample s[PS_CPU_MONITOR_STAT_COUNT];
        size_t n = ps_cpu_monitor_statistics(job->cpu, s);
        for (size_t i = 0; i < n; i++)
            put_stat(b, first, s[i].path, s[i].value);
    }
}

static void skey(struct ps_textbuf *b, bool *first, const char *name)
{
    ps_textbuf_adds(b, *first ? "\n    " : ",\n    ");
    *first = false;
    ps_textbuf_add_json(b, name);
    ps_textbuf_adds(b, ": ");
}

void sim_res_summary(struct ps_sim *sim, struct ps_textbuf *b)
{
    const struct sim_res_stats *r = &sim->res;
    bool f = true;
    ps_textbuf_adds(b, ",\n  \"memory\": {");
    skey(b, &f, "jobs_started");
    ps_textbuf_addi(b, r->memory_jobs_started);
    skey(b, &f, "jobs_completed");
    ps_textbuf_addi(b, r->memory_jobs_completed);
    skey(b, &f, "overdraft_aborts");
    ps_textbuf_addi(b, r->overdraft_aborts);
    skey(b, &f, "overdraft_abort_share");
    sim_text_double(b, r->memory_jobs_started ? (double)r->overdraft_aborts /
                                                   (double)r->memory_jobs_started
                                             : 0.0);
    skey(b, &f, "memory_limit_failures");
    ps_textbuf_addi(b, r->memory_limit_failures);
    skey(b, &f, "user_job_reserve_byte_seconds");
    sim_text_double(b, r->reserve_byte_s);
    skey(b, &f, "user_job_max_memory_byte_seconds");
    sim_text_double(b, r->used_byte_s);
    skey(b, &f, "relative_slack");
    sim_text_double(b, r->reserve_byte_s > 0 ? 1.0 - r->used_byte_s / r->reserve_byte_s : 0.0);
    skey(b, &f, "mean_job_relative_slack");
    sim_text_double(b, r->memory_jobs_completed ? r->slack_sum / (double)r->memory_jobs_completed
                                               : 0.0);
    ps_textbuf_adds(b, "\n  }");
    f = true;
    ps_textbuf_adds(b, ",\n  \"cpu_monitor\": {");
    skey(b, &f, "jobs_monitored");
    ps_textbuf_addi(b, r->cpu_jobs);
    skey(b, &f, "ticks");
    ps_textbuf_addi(b, r->cpu_ticks);
    skey(b, &f, "cpu_limit_changes");
    ps_textbuf_addi(b, r->cpu_limit_changes);
    skey(b, &f, "preemptible_core_seconds");
    sim_text_double(b, r->preemptible_core_s);
    ps_textbuf_adds(b, "\n  }");
}
