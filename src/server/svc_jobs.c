/* svc_jobs.c — the jobs of the scheduler service's model (service.c): start, finish, guarantees,
 * learning the memory digest, operations finishing, nodes going offline (under svc->mu). */
#include "server/event_log.h"
#include "server/node_health.h"
#include "server/op_tentative.h"
#include "server/persist.h"
#include "server/job_metrics.h"
#include "server/service_state.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/op_spec.h"
#include "io/json_value.h"
#include "io/jsonval.h"
#include "platform/wall_clock.h"

/* ---- jobs ----------------------------------------------------------------------------------- */

int ps_svc_job_register(struct ps_service *svc, struct ps_svc_job *job)
{
    if (svc->job_count == svc->job_cap) {
        int cap = svc->job_cap ? 2 * svc->job_cap : 256;
        struct ps_svc_job **l = realloc(svc->job_list, (size_t)cap * sizeof *l);
        if (!l)
            return PS_ENOMEM;
        svc->job_list = l;
        svc->job_cap = cap;
    }
    if (ps_strmap_put(&svc->jobs, job->id, job) != 0)
        return PS_ENOMEM;
    job->list_index = svc->job_count;
    svc->job_list[svc->job_count++] = job;
    return 0;
}

struct ps_svc_node *ps_svc_node_get(struct ps_service *svc, const char *id, bool create)
{
    struct ps_svc_node *n = ps_strmap_get(&svc->nodes, id);
    if (n || !create)
        return n;
    n = calloc(1, sizeof *n);
    if (!n || !(n->id = strdup(id))) {
        free(n);
        return NULL;
    }
    n->last_preempt_ms = PS_PREEMPT_NEVER;
    n->overcommit_since_ms = PS_NO_OVERCOMMIT;
    /* reply_seq numbers (api_nodes.c) start at the wall clock in us: after a restart they are
     * above any number the previous scheduler gave, so an agent's last_reply_seq from before
     * the restart acknowledges none of the new replies */
    n->heartbeat_seq = (uint64_t)ps_wall_clock_ms() * 1000;
    n->num = svc->node_count;
    n->filter_cache = ps_sched_filter_cache_new();
    if (svc->node_count == svc->node_cap) {
        int cap = svc->node_cap ? 2 * svc->node_cap : 64;
        struct ps_svc_node **l = realloc(svc->node_list, (size_t)cap * sizeof *l);
        if (!l) {
            free(n->id);
            free(n);
            return NULL;
        }
        svc->node_list = l;
        svc->node_cap = cap;
    }
    if (ps_strmap_put(&svc->nodes, n->id, n) != 0) {
        free(n->id);
        free(n);
        return NULL;
    }
    svc->node_list[svc->node_count++] = n;
    return n;
}

void ps_svc_job_attach_node(struct ps_service *svc, struct ps_svc_job *job)
{
    struct ps_svc_node *n = ps_svc_node_get(svc, job->node_id, true);
    if (!n)
        return;
    job->node_prev = NULL;
    job->node_next = n->jobs;
    if (n->jobs)
        n->jobs->node_prev = job;
    n->jobs = job;
    n->job_count++;
}

static void detach_node(struct ps_service *svc, struct ps_svc_job *job)
{
    struct ps_svc_node *n = ps_svc_node_get(svc, job->node_id, false);
    if (!n)
        return;
    if (job->node_prev)
        job->node_prev->node_next = job->node_next;
    else if (n->jobs == job)
        n->jobs = job->node_next;
    else
        return;   /* not on the list */
    if (job->node_next)
        job->node_next->node_prev = job->node_prev;
    job->node_next = job->node_prev = NULL;
    n->job_count--;
}

static struct ps_sched_snapshot *op_snapshot(struct ps_service *svc, struct ps_svc_op *op, int slot)
{
    if (slot < 0 || slot >= op->tree_count || op->trees[slot].element < 0 || !op->sop)
        return NULL;
    struct ps_svc_tree_state *ts = ps_svc_tree(svc, op->sop->tree_names[slot]);
    return ts ? ts->sched.snap : NULL;
}

struct ps_svc_job *ps_svc_job_start(struct ps_service *svc, struct ps_svc_op *op, int tree_slot,
                                    struct ps_resources alloc, const char *node_id, int64_t now_ms)
{
    if (op->shape_task < 0)
        return NULL;
    struct ps_svc_task *task = &op->tasks[op->shape_task];
    if (task->q_len == 0)
        return NULL;
    struct ps_svc_job *job = calloc(1, sizeof *job);
    char id[64];
    snprintf(id, sizeof id, "j-%s-%" PRIx64, svc->boot_id, ++svc->job_counter);
    if (job)
        job->waiting_job_timeout_ms = -1;
    if (!job || !(job->id = strdup(id)) || !(job->node_id = strdup(node_id))) {
        if (job) {
            free(job->id);
            free(job);
        }
        return NULL;
    }
    int64_t index = task->queue[task->q_head];
    job->op = op;
    job->task = op->shape_task;
    job->job_index = index;
    job->state = PS_JOB_RUNNING;
    job->tree_slot = tree_slot;
    job->start_ms = now_ms;
    job->finish_ms = -1;
    job->alloc_id = ++svc->next_alloc_id;
    job->cpu_limit = task->cpu_limit;
    job->cpu_guarantee = task->cpu_limit;
    const struct ps_memory_overdraft_state *st = &task->overdraft[index];
    ps_memory_task_reserve(&task->mem, st->user_job_status || st->job_proxy_status ? st : NULL,
                           &job->mem);
    job->usage = alloc;
    if (ps_svc_job_register(svc, job) != 0) {
        free(job->node_id);
        free(job->id);
        free(job);
        return NULL;
    }
    task->q_head = (task->q_head + 1) % task->job_count;
    task->q_len--;
    task->running++;
    op->trees[tree_slot].usage = ps_resources_add(op->trees[tree_slot].usage, alloc);
    ps_preemptible_add(op->trees[tree_slot].lists, job->alloc_id, now_ms, alloc, NULL);
    job->lists_slot = ps_preemptible_slot(op->trees[tree_slot].lists, job->alloc_id);
    ps_svc_job_attach_node(svc, job);
    ps_svc_tentative_job_started(job);
    if (task->q_len == 0) {
        ps_svc_op_update_shape(svc, op);
    } else {
        ps_svc_op_push_inputs(op);
        for (int i = 0; i < op->tree_count; i++) {
            struct ps_sched_snapshot *snap = op_snapshot(svc, op, i);
            if (snap)
                ps_sched_set_pending(snap, op->trees[i].element,
                                     ps_svc_tentative_pending(op, i, task->q_len), NULL);
        }
    }
    ps_metric_add(svc->m_allocations, 1);
    ps_event_log_job(svc, job, now_ms);
    return job;
}

void ps_svc_job_set_guarantee(struct ps_service *svc, struct ps_svc_job *job, double cores)
{
    if (!(cores >= 0) || cores > job->cpu_limit)
        cores = job->cpu_limit;
    int64_t cpu = ps_res_from_double(PS_RES_CPU, cores);
    if (cpu == job->usage.v[PS_RES_CPU])
        return;
    struct ps_svc_op *op = job->op;
    struct ps_resources old = job->usage;
    job->usage.v[PS_RES_CPU] = cpu;
    job->cpu_guarantee = (double)cpu / PS_CPU_SCALE;
    struct ps_svc_op_tree *t = &op->trees[job->tree_slot];
    t->usage = ps_resources_add(ps_resources_sub(t->usage, old), job->usage);
    ps_svc_op_push_inputs(op);
    struct ps_sched_snapshot *snap = op_snapshot(svc, op, job->tree_slot);
    if (snap) {
        ps_sched_allocation_finished(snap, t->element, old, NULL);
        ps_sched_allocation_started(snap, t->element, job->usage, NULL);
    }
    ps_preemptible_set_usage(t->lists, job->alloc_id, job->usage, NULL);
}

void ps_svc_read_memory_stats(const json_t *stats, struct ps_memory_job_statistics *out)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(stats))
        return;
    static const char *const names[3][2] = {
        {"/user_job/max_memory", "user_job/max_memory"},
        {"/user_job/memory_reserve", "user_job/memory_reserve"},
        {"/job_proxy/max_memory", "job_proxy/max_memory"},
    };
    for (int k = 0; k < 3; k++) {
        const json_t *v = json_object_get(stats, names[k][0]);
        if (!v)
            v = json_object_get(stats, names[k][1]);
        if (!json_is_number(v) || json_number_value(v) < 0)
            continue;
        int64_t x = (int64_t)json_number_value(v);
        if (k == 0) {
            out->has_user_job_max_memory = true;
            out->user_job_max_memory_bytes = x;
        } else if (k == 1) {
            out->has_user_job_memory_reserve = true;
            out->user_job_memory_reserve_bytes = x;
        } else {
            out->has_job_proxy_max_memory = true;
            out->job_proxy_max_memory_bytes = x;
        }
    }
}

static void requeue(struct ps_svc_task *t, int64_t index)
{
    if (t->q_len >= t->job_count)
        return;
    t->queue[(t->q_head + t->q_len) % t->job_count] = index;
    t->q_len++;
}

static bool op_all_done(const struct ps_svc_op *op)
{
    for (int i = 0; i < op->task_count; i++)
        if (op->tasks[i].completed < op->tasks[i].job_count)
            return false;
    return true;
}

/* Digests learn from a finished job (completed, or aborted for resource_overdraft). Also used
 * when replaying stored jobs after a restart. */
void ps_svc_job_learn(struct ps_svc_job *job)
{
    struct ps_svc_task *task = &job->op->tasks[job->task];
    if (!task->overdraft)
        return;   /* a released (finished) operation learns nothing more */
    struct ps_memory_job_statistics ms;
    ps_svc_read_memory_stats(job->statistics, &ms);
    if (job->state == PS_JOB_COMPLETED) {
        ps_memory_task_add_samples(&task->mem, &job->mem, &ms, false, NULL);
        ps_memory_overdraft_state_init(&task->overdraft[job->job_index]);
    } else if (job->state == PS_JOB_ABORTED && job->abort_reason &&
               strcmp(job->abort_reason, "resource_overdraft") == 0) {
        ps_memory_task_add_samples(&task->mem, &job->mem, &ms, true, NULL);
        ps_memory_task_on_resource_overdraft(&task->mem, &job->mem, &ms,
                                             &task->overdraft[job->job_index], NULL);
    }
    ps_svc_task_reshape(task);   /* the digests moved */
}

bool ps_svc_op_node_banned(const struct ps_svc_op *op, const char *node_id)
{
    return op->banned_nodes && node_id && json_object_get(op->banned_nodes, node_id);
}

void ps_svc_job_finish(struct ps_service *svc, struct ps_svc_job *job, int state,
                       const char *error, const char *abort_reason, json_t *statistics,
                       int64_t now_ms)
{
    if (job->state != PS_JOB_RUNNING) {
        json_decref(statistics);
        return;
    }
    struct ps_svc_op *op = job->op;
    struct ps_svc_task *task = &op->tasks[job->task];
    /* upstream's OnJobFailed (core/node_ban.h) */
    enum ps_node_ban_failure ban =
        state == PS_JOB_FAILED
            ? ps_node_ban_job_failed(&op->bans, ps_svc_op_node_banned(op, job->node_id))
            : PS_NODE_BAN_FAILED;
    if (ban == PS_NODE_BAN_ABORTED) {
        state = PS_JOB_ABORTED;
        abort_reason = PS_NODE_BAN_ABORT_REASON;
    }
    if (ban == PS_NODE_BAN_FAILED_BAN) {
        if (!op->banned_nodes)
            op->banned_nodes = json_object();
        json_object_set_new(op->banned_nodes, job->node_id, json_true());
        ps_svc_log(svc, "info", "operation_node_banned", "operation=%s node=%s job=%s", op->id,
                   job->node_id, job->id);
    }
    ps_svc_job_metrics_update(svc, job, statistics, state);
    job->state = state;
    job->finish_ms = now_ms;
    ps_svc_set_str(&job->error, error);
    ps_svc_set_str(&job->abort_reason, abort_reason);
    if (statistics) {
        json_decref(job->statistics);
        job->statistics = statistics;
    }
    detach_node(svc, job);
    task->running--;
    struct ps_svc_op_tree *t = &op->trees[job->tree_slot];
    t->usage = ps_resources_sub(t->usage, job->usage);
    struct ps_sched_snapshot *snap = op_snapshot(svc, op, job->tree_slot);
    if (snap)
        ps_sched_allocation_finished(snap, t->element, job->usage, NULL);
    ps_preemptible_remove(t->lists, job->alloc_id, NULL);
    ps_metric_add(svc->m_jobs_finished, 1);

    bool requeued = false;
    if (state == PS_JOB_COMPLETED) {
        if (!task->done[job->job_index]) {
            task->done[job->job_index] = 1;
            task->completed++;
        }
    } else if (state == PS_JOB_FAILED) {
        task->failed++;
        op->failed_jobs++;
        if (!op->finished) {
            requeue(task, job->job_index);
            requeued = true;
        }
    } else {
        task->aborted++;
        if (!op->finished) {
            requeue(task, job->job_index);
            requeued = true;
        }
    }
    ps_svc_job_learn(job);
    ps_svc_log(svc, "info", "job_finished", "id=%s operation=%s state=%s node=%s%s%s", job->id,
               op->id, ps_job_state_name(state), job->node_id, abort_reason ? " reason=" : "",
               abort_reason ? abort_reason : "");
    ps_event_log_job(svc, job, now_ms);
    if (op->finished)
        return;
    if (state == PS_JOB_FAILED && op->failed_jobs >= op->max_failed_job_count) {
        char msg[600];
        snprintf(msg, sizeof msg,
                 "%" PRId64 " jobs failed, max_failed_job_count is %" PRId64 "; last job error: %s",
                 op->failed_jobs, op->max_failed_job_count, error ? error : "(none)");
        ps_svc_op_finish(svc, op, "failed", msg, now_ms);
        return;
    }
    ps_svc_tentative_job_finished(svc, job, now_ms);
    if (op_all_done(op)) {
        ps_svc_op_finish(svc, op, "completed", NULL, now_ms);
        return;
    }
    /* requeued, or the digest moved (a new allocation shape); else only the usage changed */
    if (requeued || op->shape_task < 0 || state == PS_JOB_COMPLETED)
        ps_svc_op_update_shape(svc, op);
    else
        ps_svc_op_push_inputs(op);
}

void ps_svc_op_finish(struct ps_service *svc, struct ps_svc_op *op, const char *state,
                      const char *error, int64_t now_ms)
{
    if (op->finished)
        return;
    enum ps_operation_state fs = strcmp(state, "completed") == 0 ? PS_OP_COMPLETED
                                 : strcmp(state, "failed") == 0  ? PS_OP_FAILED
                                                                 : PS_OP_ABORTED;
    ps_svc_op_detach(svc, op);
    if (op->sop)
        ps_strategy_finish_operation(svc->strategy, op->id, fs, now_ms, NULL);
    op->finished = true;
    op->finish_ms = now_ms;
    ps_svc_set_str(&op->state, state);
    ps_svc_set_str(&op->error, error);
    /* running jobs end with the operation */
    char reason[64];
    snprintf(reason, sizeof reason, "operation_%s", state);
    for (int i = 0; i < op->task_count; i++)
        op->tasks[i].q_len = 0;
    op->shape_task = -1;
    for (int i = svc->job_count - 1; i >= 0; i--) {
        struct ps_svc_job *j = svc->job_list[i];
        if (j->op == op && j->state == PS_JOB_RUNNING) {
            ps_svc_job_finish(svc, j, PS_JOB_ABORTED, NULL, reason, NULL, now_ms);
            ps_persist_job(svc, j);
        }
    }
    if (op->sop)
        for (int i = 0; i < op->tree_count; i++) {
            struct ps_svc_tree_state *ts = ps_svc_tree(svc, op->sop->tree_names[i]);
            if (ts)
                ts->dirty = true;
        }
    pthread_cond_broadcast(&svc->loop_cv);   /* the engine loop updates at once */
    ps_svc_log(svc, "info", "operation_finished", "id=%s state=%s%s%s", op->id, state,
               error ? " error=" : "", error ? "\"see get_operation\"" : "");
    ps_event_log_operation(svc, op, now_ms);
    ps_persist_op(svc, op);
    /* operations started by the finish become runnable at the next fair share update */
    ps_svc_log_activated(svc);
    ps_svc_op_release(svc, op);   /* its jobs have ended: the per-job arrays can go */
}

void ps_svc_node_offline(struct ps_service *svc, struct ps_svc_node *node, int64_t now_ms)
{
    int aborted = 0;
    while (node->jobs) {
        struct ps_svc_job *j = node->jobs;
        ps_svc_job_finish(svc, j, PS_JOB_ABORTED, "node went offline", "node_offline", NULL,
                          now_ms);
        if (node->jobs == j)   /* not detached (should not happen): avoid a loop */
            detach_node(svc, j);
        ps_persist_job(svc, j);
        ps_persist_op(svc, j->op);
        aborted++;
    }
    if (node->registered) {
        ps_event_log_node(svc, node, "node_offline", now_ms);
        ps_strategy_unregister_node(svc->strategy, node->id, NULL);
    }
    node->registered = false;
    for (int i = 0; i < svc->tree_count; i++)
        svc->trees[i]->dirty = true;
    pthread_cond_broadcast(&svc->loop_cv);
    ps_svc_log(svc, "warning", "node_offline", "node=%s aborted_jobs=%d", node->id, aborted);
}

/* ---- what the node is told: start, preempt ------------------------------------------------ */

json_t *ps_svc_abort_entry(const char *id, const char *reason)
{
    return json_pack("{s:s, s:s}", "job_id", id, "reason", reason);
}

json_t *ps_svc_start_entry(const struct ps_svc_job *job)
{
    const struct ps_svc_task *t = &job->op->tasks[job->task];
    json_t *e = json_pack("{s:s, s:s, s:s, s:I, s:s, s:O, s:f, s:f, s:I, s:I, s:I, s:I, s:O, s:I}",
                     "job_id", job->id, "operation_id", job->op->id, "task_name", t->name,
                     "job_index", (json_int_t)job->job_index, "command", t->command,
                     "environment", t->environment, "cpu_limit", job->cpu_limit,
                     "cpu_guarantee", job->cpu_guarantee, "gpu_limit",
                     (json_int_t)job->usage.v[PS_RES_GPU], "memory_limit", (json_int_t)job->mem.memory_limit_bytes,
                     "memory_reserve", (json_int_t)job->mem.user_job_memory_reserve_bytes,
                     "tmpfs_size", (json_int_t)t->tmpfs_size, "job_cpu_monitor",
                     job->op->cpu_monitor_json, "port_count", (json_int_t)t->port_count);
    if (e && job->waiting_job_timeout_ms >= 0 &&
        json_object_set_new(e, "waiting_job_timeout", json_integer(job->waiting_job_timeout_ms)))
        json_decref(e), e = NULL;
    return e;
}

const char *ps_svc_preempt_reason(int reason)
{
    return ps_preempt_reason_name((enum ps_preempt_reason)reason);
}

void ps_svc_job_preempt(struct ps_service *svc, struct ps_svc_job *job, const char *reason,
                        const char *preemption_reason, int64_t timeout_ms, const char *for_op,
                        int64_t now_ms, json_t *interrupt, json_t *abort)
{
    if (job->state != PS_JOB_RUNNING || (timeout_ms > 0 && job->interrupt_deadline_ms > 0))
        return;
    ps_metric_add(svc->m_preemptions, 1);
    ps_svc_log(svc, "info", "preemption", "job=%s operation=%s node=%s reason=%s%s%s for=%s "
               "timeout_ms=%" PRId64, job->id, job->op->id, job->node_id, reason,
               preemption_reason ? " preemption_reason=" : "",
               preemption_reason ? preemption_reason : "", for_op ? for_op : "-", timeout_ms);
    if (timeout_ms <= 0) {
        char *jid = strdup(job->id);
        ps_svc_job_finish(svc, job, PS_JOB_ABORTED, NULL, reason, NULL, now_ms);
        ps_persist_job(svc, job);
        ps_persist_op(svc, job->op);
        if (abort && jid)
            json_array_append_new(abort, ps_svc_abort_entry(jid, reason));
        free(jid);
        return;
    }
    job->interrupt_deadline_ms = now_ms + timeout_ms;
    free(job->interrupt_reason);
    job->interrupt_reason = strdup(reason);
    if (interrupt)
        json_array_append_new(interrupt, json_pack("{s:s, s:I, s:s}", "job_id", job->id,
                                                   "timeout_ms", (json_int_t)timeout_ms, "reason",
                                                   reason));
}
