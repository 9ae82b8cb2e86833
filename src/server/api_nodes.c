/* api_nodes.c — POST /internal/v1/node/heartbeat (docs/api.md, "Nodes").
 *
 * One heartbeat, under the state lock: register the node (first time, or new tags or limits;
 * a node matching two trees is refused with 409 naming both), record the jobs the node reports
 * (finished ones end with their statistics and are acknowledged; running ones update the CPU
 * guarantee the engine counts as their CPU usage, which is how CPU reclaim frees cores; running
 * jobs the scheduler does not know are told to abort; jobs the node has lost end as aborted),
 * then preempt jobs that no longer fit a node whose resource_limits shrank (resource_overcommit),
 * run the tree's regular stage and, with backoff, the preemptive stages
 * (core/tree_sched.h), and turn allocations into jobs and victims into interrupts or aborts.
 * Whatever changed durably is journalled; the reply waits for the commit, so an acknowledged
 * finish or a started job survives a crash.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/jsonval.h"
#include "platform/clock.h"
#include "server/service.h"

#define MAX_TAGS 64
#define MAX_JOBS_PER_HEARTBEAT 100000

static bool same_tags(const struct ps_svc_node *n, const json_t *tags)
{
    if ((size_t)n->tag_count != json_array_size(tags))
        return false;
    for (int i = 0; i < n->tag_count; i++)
        if (strcmp(n->tags[i], json_string_value(json_array_get(tags, (size_t)i))) != 0)
            return false;
    return true;
}

static int set_tags(struct ps_svc_node *n, const json_t *tags)
{
    size_t count = json_array_size(tags);
    char **t = calloc(count ? count : 1, sizeof *t);
    if (!t)
        return PS_ENOMEM;
    for (size_t i = 0; i < count; i++)
        if (!(t[i] = strdup(json_string_value(json_array_get(tags, i))))) {
            for (size_t k = 0; k < i; k++)
                free(t[k]);
            free(t);
            return PS_ENOMEM;
        }
    for (int i = 0; i < n->tag_count; i++)
        free(n->tags[i]);
    free(n->tags);
    n->tags = t;
    n->tag_count = (int)count;
    return 0;
}

static int validate(const json_t *req, struct ps_resources *limits, struct ps_error *err)
{
    if (!json_is_object(req))
        return ps_error_set(err, PS_EINVAL, "heartbeat: must be a map");
    const json_t *id = json_object_get(req, "node_id");
    if (!json_is_string(id) || json_string_length(id) == 0 || json_string_length(id) > 256)
        return ps_error_set(err, PS_EINVAL, "node_id: must be a non-empty string of at most 256 bytes");
    const json_t *tags = json_object_get(req, "tags");
    if (tags && (!json_is_array(tags) || json_array_size(tags) > MAX_TAGS))
        return ps_error_set(err, PS_EINVAL, "tags: must be a list of at most %d strings", MAX_TAGS);
    size_t i;
    const json_t *v;
    json_array_foreach(tags, i, v) if (!json_is_string(v) || json_string_length(v) == 0)
        return ps_error_set(err, PS_EINVAL, "tags[%zu]: must be a non-empty string", i);
    const json_t *rl = json_object_get(req, "resource_limits");
    if (!rl)
        return ps_error_set(err, PS_EINVAL, "resource_limits: missing");
    int rc = ps_jv_resources(rl, "resource_limits", 0, limits, NULL, err);
    if (rc != 0)
        return rc;
    const json_t *jobs = json_object_get(req, "jobs");
    if (jobs && (!json_is_array(jobs) || json_array_size(jobs) > MAX_JOBS_PER_HEARTBEAT))
        return ps_error_set(err, PS_EINVAL, "jobs: must be a list");
    json_array_foreach(jobs, i, v) {
        const char *state = json_string_value(json_object_get(v, "state"));
        if (!json_is_string(json_object_get(v, "job_id")) || !state)
            return ps_error_set(err, PS_EINVAL, "jobs[%zu]: must have job_id and state", i);
        if (strcmp(state, "running") && strcmp(state, "completed") && strcmp(state, "failed") &&
            strcmp(state, "aborted"))
            return ps_error_set(err, PS_EINVAL,
                                "jobs[%zu].state: must be running, completed, failed or aborted", i);
    }
    return 0;
}

static json_t *abort_entry(const char *id, const char *reason)
{
    return json_pack("{s:s, s:s}", "job_id", id, "reason", reason);
}

static json_t *start_entry(const struct ps_svc_job *job)
{
    const struct ps_svc_task *t = &job->op->tasks[job->task];
    return json_pack("{s:s, s:s, s:s, s:I, s:s, s:O, s:f, s:f, s:I, s:I, s:I, s:O}", "job_id",
                     job->id, "operation_id", job->op->id, "task_name", t->name, "job_index",
                     (json_int_t)job->job_index, "command", t->command, "environment",
                     t->environment, "cpu_limit", job->cpu_limit, "cpu_guarantee",
                     job->cpu_guarantee, "memory_limit", (json_int_t)job->mem.memory_limit_bytes,
                     "memory_reserve", (json_int_t)job->mem.user_job_memory_reserve_bytes,
                     "tmpfs_size", (json_int_t)t->tmpfs_size, "job_cpu_monitor",
                     job->op->cpu_monitor_json);
}

static int job_final_state(const char *s)
{
    return strcmp(s, "completed") == 0 ? PS_JOB_COMPLETED
           : strcmp(s, "failed") == 0  ? PS_JOB_FAILED
                                       : PS_JOB_ABORTED;
}

static void finish_reported(struct ps_service *svc, struct ps_svc_job *job, const json_t *r,
                            int64_t now)
{
    const char *state = json_string_value(json_object_get(r, "state"));
    const char *error = json_string_value(json_object_get(r, "error"));
    const char *reason = json_string_value(json_object_get(r, "abort_reason"));
    const json_t *stats = json_object_get(r, "statistics");
    const json_t *exit_code = json_object_get(r, "exit_code");
    char buf[64];
    int st = job_final_state(state);
    if (st == PS_JOB_FAILED && !error && json_is_integer(exit_code)) {
        snprintf(buf, sizeof buf, "exit code %" JSON_INTEGER_FORMAT, json_integer_value(exit_code));
        error = buf;
    }
    if (st == PS_JOB_ABORTED && !reason)
        reason = "node";
    const json_t *se = json_object_get(r, "stderr");
    if (json_is_string(se)) {
        const char *text = json_string_value(se);
        size_t len = json_string_length(se);
        bool truncated = json_is_true(json_object_get(r, "stderr_truncated"));
        if (len > PS_SERVICE_MAX_STDERR_BYTES) {
            text += len - PS_SERVICE_MAX_STDERR_BYTES;
            /* do not start inside a UTF-8 sequence */
            while ((*text & 0xC0) == 0x80)
                text++;
            truncated = true;
        }
        free(job->stderr_text);
        job->stderr_text = strdup(text);
        job->stderr_truncated = truncated;
    }
    ps_svc_job_finish(svc, job, st, error, reason,
                      json_is_object(stats) ? json_deep_copy(stats) : NULL, now);
    ps_persist_job(svc, job);
    ps_persist_op(svc, job->op);
}

/* The service operation of element `element` of the tree's last build, or NULL (pools,
 * detached operations). ts->sched.user holds the strategy's operations. */
static struct ps_svc_op *sched_host(const struct ps_svc_tree_state *ts, int element)
{
    if (element < 0 || element >= ts->sched.fs.count || !ts->sched.user[element])
        return NULL;
    return ((const struct ps_operation *)ts->sched.user[element])->host;
}

static int tree_slot(const struct ps_svc_op *op, const char *tree)
{
    if (!op->sop)
        return -1;
    for (int i = 0; i < op->sop->tree_count; i++)
        if (strcmp(op->sop->tree_names[i], tree) == 0)
            return i;
    return -1;
}

const char *ps_svc_preempt_reason(int reason)
{
    return reason == PS_PREEMPT_FOR_STARVING ? "preemption"
                                             : ps_preempt_reason_name((enum ps_preempt_reason)reason);
}

void ps_svc_job_preempt(struct ps_service *svc, struct ps_svc_job *job, const char *reason,
                        int64_t timeout_ms, const char *for_op, int64_t now_ms,
                        json_t *interrupt, json_t *abort)
{
    if (job->state != PS_JOB_RUNNING || (timeout_ms > 0 && job->interrupt_deadline_ms > 0))
        return;
    ps_metric_add(svc->m_preemptions, 1);
    ps_svc_log(svc, "info", "preemption", "job=%s operation=%s node=%s reason=%s for=%s "
               "timeout_ms=%" PRId64, job->id, job->op->id, job->node_id, reason,
               for_op ? for_op : "-", timeout_ms);
    if (timeout_ms <= 0) {
        char *jid = strdup(job->id);
        ps_svc_job_finish(svc, job, PS_JOB_ABORTED, NULL, reason, NULL, now_ms);
        ps_persist_job(svc, job);
        ps_persist_op(svc, job->op);
        if (abort && jid)
            json_array_append_new(abort, abort_entry(jid, reason));
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

/* The node's jobs scheduled in tree tname whose operations are in the snapshot, as engine
 * allocations (jobs parallel); *other: usage of the node's other jobs. Caller frees both. */
static int node_allocs(struct ps_svc_node *node, const char *tname,
                       struct ps_node_allocation **allocs_out, struct ps_svc_job ***jobs_out,
                       int *count, struct ps_resources *other, struct ps_error *err)
{
    int n = 0;
    for (struct ps_svc_job *j = node->jobs; j; j = j->node_next)
        n++;
    struct ps_node_allocation *allocs = malloc((size_t)(n ? n : 1) * sizeof *allocs);
    struct ps_svc_job **jobs = malloc((size_t)(n ? n : 1) * sizeof *jobs);
    if (!allocs || !jobs) {
        free(allocs);
        free(jobs);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    *other = ps_resources_zero();
    int na = 0;
    for (struct ps_svc_job *j = node->jobs; j; j = j->node_next) {
        int slot = tree_slot(j->op, tname);
        if (slot < 0 || slot != j->tree_slot || j->op->trees[slot].element < 0) {
            *other = ps_resources_add(*other, j->usage);
            continue;
        }
        jobs[na] = j;
        allocs[na++] = (struct ps_node_allocation){j->alloc_id, j->op->trees[slot].element,
                                                   j->usage, j->start_ms, true,
                                                   j->interrupt_deadline_ms > 0};
    }
    *allocs_out = allocs;
    *jobs_out = jobs;
    *count = na;
    return 0;
}

/* A node whose resource limits are below the usage of its jobs (it shrank): victims with reason
 * resource_overcommit until the jobs that are not already leaving fit. */
static int overcommit(struct ps_service *svc, struct ps_svc_node *node,
                      struct ps_svc_tree_state *ts, const char *tname, int64_t now,
                      json_t *interrupt, json_t *abort, struct ps_error *err)
{
    struct ps_resources usage = ps_resources_zero();
    for (struct ps_svc_job *j = node->jobs; j; j = j->node_next)
        if (j->interrupt_deadline_ms <= 0)
            usage = ps_resources_add(usage, j->usage);
    if (ps_resources_fit(usage, node->limits))
        return 0;
    struct ps_node_allocation *allocs;
    struct ps_svc_job **jobs;
    struct ps_resources other;
    int na;
    int rc = node_allocs(node, tname, &allocs, &jobs, &na, &other, err);
    if (rc != 0)
        return rc;
    struct ps_preempt_tree tree = {&ts->sched.preempt_config, ts->sched.starvation,
                                   ts->sched.preempt_ops, ts->sched.subtree_eligible};
    struct ps_preempt_result pres;
    ps_preempt_result_init(&pres);
    rc = ps_preempt_overcommit_victims(&tree, ps_resources_sub(node->limits, other), allocs, na,
                                       &pres, err);
    for (int i = 0; rc == 0 && i < pres.victim_count; i++)
        for (int k = 0; k < na; k++)
            if (allocs[k].id == pres.victims[i].allocation_id) {
                ps_svc_job_preempt(svc, jobs[k], ps_svc_preempt_reason(pres.victims[i].reason),
                                   pres.victims[i].interrupt_timeout_ms, NULL, now, interrupt,
                                   abort);
                break;
            }
    ps_preempt_result_release(&pres);
    free(allocs);
    free(jobs);
    return rc;
}

/* Scheduling on the node's tree: overcommit victims first, then allocations become jobs,
 * victims interrupts or aborts. */
static int schedule(struct ps_service *svc, struct ps_svc_node *node, int64_t now, json_t *start,
                    json_t *interrupt, json_t *abort, struct ps_error *err)
{
    struct ps_node *sn = ps_strategy_find_node(svc->strategy, node->id);
    if (!sn || !sn->tree)
        return 0;
    const char *tname = ps_pool_tree_name(sn->tree);
    struct ps_svc_tree_state *ts = ps_svc_tree(svc, tname);
    if (!ts || !ts->sched.snap)
        return 0;
    int rc = overcommit(svc, node, ts, tname, now, interrupt, abort, err);
    if (rc != 0)
        return rc;
    struct ps_node_allocation *allocs;
    struct ps_svc_job **jobs;
    struct ps_resources usage;
    int na;
    rc = node_allocs(node, tname, &allocs, &jobs, &na, &usage, err);
    if (rc != 0)
        return rc;
    for (int k = 0; k < na; k++)
        usage = ps_resources_add(usage, allocs[k].resources);
    struct ps_sched_node sched_node = {node->num, (const char *const *)node->tags, node->tag_count,
                                       node->limits, usage, node->filter_cache};
    struct ps_sched_result res;
    struct ps_preempt_result pres;
    ps_sched_result_init(&res);
    ps_preempt_result_init(&pres);
    rc = ps_tree_sched_heartbeat(&ts->sched, &sched_node, allocs, na, &node->last_preempt_ms,
                                 now, &res, &pres, err);
    for (int i = 0; rc == 0 && i < res.allocation_count; i++) {
        const struct ps_sched_allocation *a = &res.allocations[i];
        struct ps_svc_op *op = sched_host(ts, a->op);
        int slot = op ? tree_slot(op, tname) : -1;
        struct ps_svc_job *job = slot >= 0 ? ps_svc_job_start(svc, op, slot, a->resources,
                                                               node->id, now)
                                           : NULL;
        if (!job) {
            ps_sched_allocation_finished(ts->sched.snap, a->op, a->resources, NULL);
            continue;
        }
        job->sent_in_heartbeat = node->heartbeat_seq;
        job->reported_in_heartbeat = node->heartbeat_seq;
        json_array_append_new(start, start_entry(job));
        ps_persist_job(svc, job);
    }
    for (int i = 0; rc == 0 && i < pres.victim_count; i++) {
        const struct ps_preempt_victim *v = &pres.victims[i];
        for (int k = 0; k < na; k++)
            if (allocs[k].id == v->allocation_id) {
                struct ps_svc_op *for_op = sched_host(ts, v->for_op);
                ps_svc_job_preempt(svc, jobs[k], ps_svc_preempt_reason(v->reason),
                                   v->interrupt_timeout_ms, for_op ? for_op->id : NULL, now,
                                   interrupt, abort);
                break;
            }
    }
    ps_sched_result_release(&res);
    ps_preempt_result_release(&pres);
    free(allocs);
    free(jobs);
    return rc;
}

int ps_api_heartbeat_json(struct ps_service *svc, const json_t *req, json_t **reply,
                          struct ps_error *err)
{
    struct ps_resources limits;
    int rc = validate(req, &limits, err);
    if (rc != 0)
        return rc;
    const char *node_id = json_string_value(json_object_get(req, "node_id"));
    const json_t *tags = json_object_get(req, "tags");
    json_t *empty_tags = NULL;
    if (!tags)
        tags = empty_tags = json_array();
    const json_t *jobs = json_object_get(req, "jobs");
    int64_t now = ps_svc_now_ms();

    json_t *start = json_array(), *interrupt = json_array(), *abort = json_array(),
           *acked = json_array();
    pthread_mutex_lock(&svc->mu);
    uint64_t before = ps_journal_last(svc->journal);
    struct ps_svc_node *node = ps_svc_node_get(svc, node_id, true);
    if (!node) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto out;
    }
    bool tags_changed = !same_tags(node, tags);
    if (!node->registered || tags_changed || !ps_resources_equal(node->limits, limits)) {
        const char **tv = malloc((json_array_size(tags) + 1) * sizeof *tv);
        if (!tv) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < json_array_size(tags); i++)
            tv[i] = json_string_value(json_array_get(tags, i));
        rc = ps_strategy_register_node(svc->strategy, node_id, tv, (int)json_array_size(tags),
                                       &limits, err);
        free(tv);
        if (rc != 0) {
            if (rc == PS_EINVAL)
                err->code = rc = PS_ESTATE;   /* matches two trees: a conflict, 409 */
            goto out;
        }
        if (tags_changed && set_tags(node, tags) != 0) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
            goto out;
        }
        if (tags_changed)
            ps_sched_filter_cache_clear(node->filter_cache);
        struct ps_node *sn = ps_strategy_find_node(svc->strategy, node_id);
        ps_svc_log(svc, "info", node->registered ? "node_updated" : "node_registered",
                   "node=%s tree=%s cpu=%.2f memory=%" PRId64 " user_slots=%" PRId64, node_id,
                   sn && sn->tree ? ps_pool_tree_name(sn->tree) : "-",
                   ps_res_get(&limits, PS_RES_CPU), limits.v[PS_RES_MEMORY],
                   limits.v[PS_RES_USER_SLOTS]);
        node->registered = true;
        node->limits = limits;
        for (int i = 0; i < svc->tree_count; i++)
            svc->trees[i]->dirty = true;
        pthread_cond_broadcast(&svc->loop_cv);
    }
    node->last_seen_ms = now;
    node->heartbeat_seq++;
    ps_metric_add(svc->m_heartbeats, 1);

    size_t i;
    const json_t *r;
    json_array_foreach(jobs, i, r) {
        const char *jid = json_string_value(json_object_get(r, "job_id"));
        const char *state = json_string_value(json_object_get(r, "state"));
        struct ps_svc_job *job = ps_strmap_get(&svc->jobs, jid);
        bool mine = job && strcmp(job->node_id, node_id) == 0;
        if (strcmp(state, "running") != 0) {
            if (mine && job->state == PS_JOB_RUNNING)
                finish_reported(svc, job, r, now);
            json_array_append_new(acked, json_string(jid));
            continue;
        }
        if (!mine || job->state != PS_JOB_RUNNING) {
            /* a finished job may have left memory: its stored record has the reason */
            char *stored = job ? NULL : ps_job_archive_abort_reason(svc, jid);
            json_array_append_new(abort, abort_entry(jid, stored ? stored
                                                          : !job ? "unknown job"
                                                          : job->abort_reason ? job->abort_reason
                                                                              : "job is not running"));
            free(stored);
            continue;
        }
        job->seen_running = true;
        job->reported_in_heartbeat = node->heartbeat_seq;
        const json_t *g = json_object_get(r, "cpu_guarantee");
        if (json_is_number(g))
            ps_svc_job_set_guarantee(svc, job, json_number_value(g));
        if (job->interrupt_deadline_ms > 0) {
            if (now >= job->interrupt_deadline_ms) {
                char *why = job->interrupt_reason ? strdup(job->interrupt_reason) : NULL;
                ps_svc_job_finish(svc, job, PS_JOB_ABORTED, "interrupt timed out",
                                  why ? why : "preemption", NULL, now);
                free(why);
                ps_persist_job(svc, job);
                ps_persist_op(svc, job->op);
                json_array_append_new(abort, abort_entry(jid, job->abort_reason));
            } else {
                json_array_append_new(interrupt,
                                      json_pack("{s:s, s:I, s:s}", "job_id", jid, "timeout_ms",
                                                (json_int_t)(job->interrupt_deadline_ms - now),
                                                "reason", job->interrupt_reason
                                                              ? job->interrupt_reason
                                                              : "preemption"));
            }
        }
    }
    /* jobs reported running that ended while the reports were read (another job's failure
     * failed their operation, ...): the node stops them now, before their room is given to
     * new jobs below */
    json_array_foreach(jobs, i, r) {
        const char *jid = json_string_value(json_object_get(r, "job_id"));
        struct ps_svc_job *job = ps_strmap_get(&svc->jobs, jid);
        if (strcmp(json_string_value(json_object_get(r, "state")), "running") != 0 || !job ||
            strcmp(job->node_id, node_id) != 0 || job->state == PS_JOB_RUNNING ||
            job->reported_in_heartbeat != node->heartbeat_seq)
            continue;
        bool listed = false;
        size_t k;
        const json_t *a;
        json_array_foreach(abort, k, a) listed |=
            strcmp(json_string_value(json_object_get(a, "job_id")), jid) == 0;
        if (!listed)
            json_array_append_new(abort, abort_entry(jid, job->abort_reason ? job->abort_reason
                                                                             : "job is not running"));
    }
    /* jobs the node no longer has: sent in an earlier heartbeat (or seen before) and missing now */
    for (struct ps_svc_job *j = node->jobs, *next; j; j = next) {
        next = j->node_next;
        if (j->reported_in_heartbeat == node->heartbeat_seq)
            continue;
        if (j->seen_running || j->sent_in_heartbeat < node->heartbeat_seq) {
            ps_svc_job_finish(svc, j, PS_JOB_ABORTED, "the node no longer reports the job",
                              "lost", NULL, now);
            ps_persist_job(svc, j);
            ps_persist_op(svc, j->op);
        }
    }
    rc = schedule(svc, node, now, start, interrupt, abort, err);
out:;
    uint64_t after = ps_journal_last(svc->journal);
    pthread_mutex_unlock(&svc->mu);
    json_decref(empty_tags);
    if (rc == 0 && after > before)
        rc = ps_journal_wait(svc->journal, after, err);
    if (rc != 0) {
        json_decref(start);
        json_decref(interrupt);
        json_decref(abort);
        json_decref(acked);
        return rc;
    }
    *reply = json_pack("{s:I, s:o, s:o, s:o, s:o}", "heartbeat_period_ms",
                       (json_int_t)svc->cfg.heartbeat_period_ms, "jobs_to_start", start,
                       "jobs_to_interrupt", interrupt, "jobs_to_abort", abort, "acknowledged",
                       acked);
    return *reply ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

void ps_api_heartbeat_handler(const struct ps_http_request *req, struct ps_http_response *resp,
                              void *ctx);
void ps_api_heartbeat_handler(const struct ps_http_request *req, struct ps_http_response *resp,
                              void *ctx)
{
    struct ps_service *svc = ctx;
    int64_t started_ns = ps_clock_monotonic_ns();
    struct ps_error err;
    ps_error_init(&err);
    const char *token;
    size_t len;
    if (ps_auth_parse_header(ps_http_request_header(req, "Authorization"), &token, &len, &err) != 0 ||
        len != PS_AUTH_TOKEN_LEN || !ps_auth_equal(token, svc->cluster_secret, PS_AUTH_TOKEN_LEN)) {
        ps_http_reply_error(resp, 401, PS_EPERM, "%s",
                            err.code ? err.msg : "nodes authenticate with the cluster secret");
        return;
    }
    json_error_t je;
    json_t *body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &je);
    if (!body) {
        ps_http_reply_error(resp, 400, PS_EINVAL, "invalid JSON at line %d, column %d: %s",
                            je.line, je.column, je.text);
        return;
    }
    json_t *reply = NULL;
    int rc = ps_api_heartbeat_json(svc, body, &reply, &err);
    json_decref(body);
    if (rc != 0) {
        ps_http_reply_ps_error(resp, &err);
    } else {
        ps_http_reply_json(resp, 200, reply);
        json_decref(reply);
    }
    ps_metric_observe(svc->m_hb_latency, (double)(ps_clock_monotonic_ns() - started_ns) / 1e9);
}
