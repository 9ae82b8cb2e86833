/* api_nodes.c — POST /internal/v1/node/heartbeat (docs/api.md, "Nodes").
 *
 * One heartbeat, under the state lock: register the node (first time, or new tags or limits;
 * a node matching two trees is refused with 409 naming both), record the jobs the node reports
 * (finished ones end with their statistics and are acknowledged; running ones update the CPU
 * guarantee the engine counts as their CPU usage, which is how CPU reclaim frees cores; running
 * jobs the scheduler does not know are told to abort; jobs the node has lost end as aborted),
 * then run the scheduling loop's heartbeat on the node's tree (core/tree_sched.h through
 * sched_host.c: regular stage, the preemptive stages with backoff, overcommit when the node's
 * resource_limits shrank), whose allocations become jobs and victims interrupts or aborts.
 * Whatever changed durably is journalled; the reply waits for the commit, so an acknowledged
 * finish or a started job survives a crash.
 *
 * One live agent per node id: an agent sends its instance_id (random per agent start) in
 * every heartbeat. While the node is online (a heartbeat less than node_offline_timeout ago),
 * a heartbeat with another instance id is refused with 409 naming the id and the holder, and
 * logged (node_id_conflict); once the node is offline the next instance takes the id over.
 * The reply tells the agent node_offline_timeout_ms, so an agent that has not been heard for
 * that long aborts its jobs itself: the scheduler has given them away.
 *
 * Replies are numbered (reply_seq, node->heartbeat_seq) for a node that sends the number of
 * the last reply it read (last_reply_seq): a job sent in a later reply that the node does not
 * report was sent in a reply it never read (given up while held, timed out), so its start is
 * sent again rather than the job declared lost and run again.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/jsonval.h"
#include "platform/clock.h"
#include "core/node_id.h"
#include "server/heartbeat.h"
#include "server/nodes_config.h"
#include "server/journal.h"
#include "server/node_health.h"
#include "server/node_tags.h"
#include "server/event_log.h"
#include "server/persist.h"
#include "server/sched_host.h"
#include "server/job_metrics.h"
#include "server/service_state.h"
#include "server/store_mirror.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"

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
    /* The agent's own rule (core/node_id.h): "../../etc" or a name with a NUL, a slash or
     * control characters would end up in logs, the store and every job's node_id. */
    if (!json_is_string(id) || strlen(json_string_value(id)) != json_string_length(id) ||
        !ps_node_id_valid(json_string_value(id), PS_NODE_ID_MAX))
        return ps_error_set(err, PS_EINVAL,
                            "node_id: must be 1 to %d characters of A-Z a-z 0-9 . _ - "
                            "(not \".\" or \"..\")", PS_NODE_ID_MAX);
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
    const json_t *media = json_object_get(req, "disk_space_per_medium");
    if (media && (!json_is_object(media) || json_object_size(media) > 16))
        return ps_error_set(err, PS_EINVAL, "disk_space_per_medium: must be a map of at most 16 "
                            "medium names -> bytes");
    const char *mk;
    json_object_foreach((json_t *)media, mk, v) if (!json_is_integer(v) || json_integer_value(v) < 0)
        return ps_error_set(err, PS_EINVAL, "disk_space_per_medium/%.40s: must be a number of "
                            "bytes >= 0", mk);
    const json_t *vf = json_object_get(req, "cpu_to_vcpu_factor");
    if (vf && !(json_is_number(vf) && json_number_value(vf) > 0 && json_number_value(vf) <= 1000))
        return ps_error_set(err, PS_EINVAL, "cpu_to_vcpu_factor: must be a number greater than 0 "
                            "(and at most 1000)");
    const json_t *inst = json_object_get(req, "instance_id");
    if (inst && (!json_is_string(inst) || json_string_length(inst) == 0 ||
                 json_string_length(inst) > PS_SVC_INSTANCE_ID_MAX))
        return ps_error_set(err, PS_EINVAL, "instance_id: must be a non-empty string of at most "
                            "%d bytes", PS_SVC_INSTANCE_ID_MAX);
    const json_t *lrs = json_object_get(req, "last_reply_seq");
    if (lrs && (!json_is_integer(lrs) || json_integer_value(lrs) < 0))
        return ps_error_set(err, PS_EINVAL, "last_reply_seq: must be an integer >= 0 (the "
                            "reply_seq of the last reply the node received)");
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

static int job_final_state(const char *s)
{
    return strcmp(s, "completed") == 0 ? PS_JOB_COMPLETED
           : strcmp(s, "failed") == 0  ? PS_JOB_FAILED
                                       : PS_JOB_ABORTED;
}

/* The node's statistics plus what the controller adds at the end (upstream's
 * UpdateJobletFromSummary: job_proxy/memory_reserve, the cumulative_* byte x seconds, ...),
 * a new reference; NULL when the node sent none. A key the node sent wins. */
static json_t *with_controller_stats(const struct ps_svc_job *job, const json_t *stats,
                                     int64_t now)
{
    if (!json_is_object(stats))
        return NULL;
    json_t *out = json_deep_copy(stats);
    if (!out || job->mem.memory_limit_bytes <= 0)
        return out;
    struct ps_memory_job_statistics ms;
    ps_svc_read_memory_stats(out, &ms);
    struct ps_stat_sample s[PS_MEMORY_CONTROLLER_STAT_MAX];
    size_t n = ps_memory_controller_statistics(&job->mem, &ms, now - job->start_ms, s);
    for (size_t i = 0; i < n; i++) {
        const char *key = s[i].path[0] == '/' ? s[i].path + 1 : s[i].path;
        if (!json_object_get(out, key))
            json_object_set_new(out, key, json_integer(s[i].value));
    }
    return out;
}

/* The job's stderr from its report (a finished record's, or a running job's so far): the
 * last PS_SERVICE_MAX_STDERR_BYTES kept. */
static void take_stderr(struct ps_svc_job *job, const json_t *r)
{
    const json_t *se = json_object_get(r, "stderr");
    if (!json_is_string(se))
        return;
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
    char *copy = strdup(text);
    if (!copy)
        return;   /* out of memory: the previous text stays */
    free(job->stderr_text);
    job->stderr_text = copy;
    job->stderr_truncated = truncated;
}

/* The job's exec_attributes from the node's report (upstream's: gpu_devices, the devices the
 * node gave it), kept once: they do not change while it runs. */
static void take_exec_attributes(struct ps_svc_job *job, const json_t *r)
{
    const json_t *ea = json_object_get(r, "exec_attributes");
    const json_t *gpus = json_object_get(ea, "gpu_devices");
    if (job->exec_attributes || !json_is_array(gpus) || json_array_size(gpus) > 1024)
        return;
    job->exec_attributes = json_pack("{s:O}", "gpu_devices", gpus);
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
    char node_msg[512];
    if (st == PS_JOB_ABORTED && !error)
        error = ps_node_health_abort_error(r, job->node_id, node_msg, sizeof node_msg);
    take_stderr(job, r);
    take_exec_attributes(job, r);
    ps_svc_job_finish(svc, job, st, error, reason, with_controller_stats(job, stats, now), now);
    ps_persist_job(svc, job);
    ps_persist_op(svc, job->op);
    ps_node_health_job_finished(svc, job, now);   /* may ban the node (its aborts in a row) */
}

/* One heartbeat's state, carried between its steps below. */
struct heartbeat {
    struct ps_service *svc;
    const json_t *req;
    const char *node_id;
    const char *instance;
    const json_t *tags;
    const json_t *jobs;
    /* replies numbered (reply_seq) and acknowledged (last_reply_seq) by the node: a job sent
     * in a reply the node has not received is sent again, not lost */
    const json_t *lrs;
    uint64_t last_reply;
    struct ps_resources limits;
    int64_t now;
    struct ps_svc_node *node;
    json_t *start, *interrupt, *abort, *acked;
};

static void heartbeat_free_lists(struct heartbeat *hb)
{
    json_decref(hb->start);
    json_decref(hb->interrupt);
    json_decref(hb->abort);
    json_decref(hb->acked);
}

/* The node's record; a rerun of a held heartbeat that a newer one overtook is refused. */
static int heartbeat_node(struct heartbeat *hb, const struct ps_svc_hold *hold,
                          struct ps_error *err)
{
    struct ps_svc_node *node = hb->node = ps_svc_node_get(hb->svc, hb->node_id, true);
    if (!node)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (hold && hold->rerun && node->heartbeat_seq != hold->held_at) {
        /* released, then a newer heartbeat of the node ran before this rerun: the agent has
         * given this one up (its reply would go nowhere: a job started in it would wait for
         * the next heartbeat's last_reply_seq to be sent again), and its job reports are
         * older than the newer one's */
        return ps_error_set(err, PS_ESTATE, "heartbeat of node %s superseded by a newer one "
                            "while it was held", hb->node_id);
    }
    return 0;
}

/* One live agent per node id: another instance is refused while the node is online, and
 * takes the id over once it is offline. */
static int heartbeat_takeover(struct heartbeat *hb, struct ps_error *err)
{
    struct ps_service *svc = hb->svc;
    struct ps_svc_node *node = hb->node;
    const char *node_id = hb->node_id, *instance = hb->instance;
    int64_t now = hb->now;
    if (!instance || strcmp(node->instance_id, instance) == 0)
        return 0;
    bool live = node->registered && node->last_seen_ms + svc->cfg.node_offline_timeout_ms >= now;
    if (live && node->instance_id[0]) {
        ps_svc_log(svc, "warning", "node_id_conflict", "node=%s holder=%s refused=%s "
                   "last_seen_ms_ago=%" PRId64, node_id, node->instance_id, instance,
                   now - node->last_seen_ms);
        return ps_error_set(err, PS_ESTATE, "node id \"%s\" is held by another live agent "
                            "(instance %s, last heartbeat %" PRId64 " ms ago); this agent "
                            "(instance %s) is refused until that node has been silent for "
                            "node_offline_timeout (%" PRId64 " ms): give each agent its own "
                            "--node-id", node_id, node->instance_id, now - node->last_seen_ms,
                            instance, svc->cfg.node_offline_timeout_ms);
    }
    /* A new agent takes the id over: whatever the previous one ran has been given away
     * (it aborts its jobs itself once it has not been heard for the offline timeout). */
    if (node->instance_id[0] && (node->registered || node->jobs))
        ps_svc_node_offline(svc, node, now);
    if (node->instance_id[0])
        ps_svc_log(svc, "info", "node_instance_changed", "node=%s old=%s new=%s", node_id,
                   node->instance_id, instance);
    snprintf(node->instance_id, sizeof node->instance_id, "%s", instance);
    return 0;
}

/* Health, address, vCPU factor and tags; (re)registers the node when it is new or its tags or
 * limits changed. */
static int heartbeat_register(struct heartbeat *hb, const char *remote_addr,
                              struct ps_error *err)
{
    struct ps_service *svc = hb->svc;
    struct ps_svc_node *node = hb->node;
    int64_t now = hb->now;
    ps_node_health_heartbeat(svc, node, &hb->limits, now);   /* a banned node offers no slots */
    if (remote_addr)
        snprintf(node->address, sizeof node->address, "%s", remote_addr);
    const json_t *vf = json_object_get(hb->req, "cpu_to_vcpu_factor");
    node->cpu_to_vcpu_factor = vf ? json_number_value(vf) : 0;
    bool tags_changed = !same_tags(node, hb->tags);
    if (tags_changed && set_tags(node, hb->tags) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (node->registered && !tags_changed && !node->tree_conflict &&
        ps_resources_equal(node->limits, hb->limits))
        return 0;
    int rc = ps_node_tags_register(svc, node, &hb->limits, err);
    if (rc != 0) {
        if (rc == PS_EINVAL) {
            /* matches two trees: a conflict, 409; offline for the scheduler until fixed */
            err->code = rc = PS_ESTATE;
            if (node->registered)
                ps_svc_node_offline(svc, node, now);
            node->last_seen_ms = now;   /* heard: its alert stays while it keeps trying */
        }
        return rc;
    }
    const struct ps_resources *limits = &hb->limits;
    struct ps_node *sn = ps_strategy_find_node(svc->strategy, hb->node_id);
    ps_svc_log(svc, "info", node->registered ? "node_updated" : "node_registered",
               "node=%s tree=%s cpu=%.2f memory=%" PRId64 " user_slots=%" PRId64, hb->node_id,
               sn && sn->tree ? ps_pool_tree_name(sn->tree) : "-",
               ps_res_get(limits, PS_RES_CPU), limits->v[PS_RES_MEMORY],
               limits->v[PS_RES_USER_SLOTS]);
    const char *event = node->registered ? "node_updated" : "node_registered";
    node->registered = true;
    node->limits = *limits;
    ps_event_log_node(svc, node, event, now);
    for (int i = 0; i < svc->tree_count; i++)
        svc->trees[i]->dirty = true;
    pthread_cond_broadcast(&svc->loop_cv);
    return 0;
}

/* an empty map is no media; heartbeats and the SSD media alert read node->media as is */
static void heartbeat_media(struct heartbeat *hb)
{
    struct ps_svc_node *node = hb->node;
    const json_t *media = json_object_get(hb->req, "disk_space_per_medium");
    if (media && json_object_size(media) == 0)
        media = NULL;
    if (media ? !node->media || !json_equal((json_t *)media, node->media) : node->media != NULL) {
        json_decref(node->media);
        node->media = media ? json_deep_copy(media) : NULL;
    }
}

/* A job of this node the node reports running: its output, guarantee and interrupt. */
static void heartbeat_running_job(struct heartbeat *hb, struct ps_svc_job *job, const char *jid,
                                  const json_t *r)
{
    struct ps_service *svc = hb->svc;
    int64_t now = hb->now;
    job->seen_running = true;
    job->reported_in_heartbeat = hb->node->heartbeat_seq;
    take_stderr(job, r);   /* the output so far, when the node sends it */
    take_exec_attributes(job, r);
    const json_t *g = json_object_get(r, "cpu_guarantee");
    if (json_is_number(g))
        ps_svc_job_set_guarantee(svc, job, json_number_value(g));
    ps_svc_job_metrics_update(svc, job, json_object_get(r, "statistics"), PS_JOB_RUNNING);
    if (job->interrupt_deadline_ms <= 0)
        return;
    if (now >= job->interrupt_deadline_ms) {
        char *why = job->interrupt_reason ? strdup(job->interrupt_reason) : NULL;
        ps_svc_job_finish(svc, job, PS_JOB_ABORTED, "interrupt timed out",
                          why ? why : "preemption", NULL, now);
        free(why);
        ps_persist_job(svc, job);
        ps_persist_op(svc, job->op);
        json_array_append_new(hb->abort, ps_svc_abort_entry(jid, job->abort_reason));
    } else {
        json_array_append_new(hb->interrupt,
                              json_pack("{s:s, s:I, s:s}", "job_id", jid, "timeout_ms",
                                        (json_int_t)(job->interrupt_deadline_ms - now),
                                        "reason", job->interrupt_reason
                                                      ? job->interrupt_reason
                                                      : "preemption"));
    }
}

/* The jobs the node reports: finished ones end and are acknowledged, running ones it should
 * not run are aborted, its own running ones are recorded. */
static void heartbeat_job_reports(struct heartbeat *hb)
{
    struct ps_service *svc = hb->svc;
    size_t i;
    const json_t *r;
    json_array_foreach(hb->jobs, i, r) {
        const char *jid = json_string_value(json_object_get(r, "job_id"));
        const char *state = json_string_value(json_object_get(r, "state"));
        struct ps_svc_job *job = ps_strmap_get(&svc->jobs, jid);
        bool mine = job && strcmp(job->node_id, hb->node_id) == 0;
        if (strcmp(state, "running") != 0) {
            if (mine && job->state == PS_JOB_RUNNING)
                finish_reported(svc, job, r, hb->now);
            json_array_append_new(hb->acked, json_string(jid));
            continue;
        }
        if (!mine || job->state != PS_JOB_RUNNING) {
            /* a finished job may have left memory: its stored record has the reason */
            char *stored = job ? NULL : ps_job_archive_abort_reason(svc, jid);
            json_array_append_new(hb->abort,
                                  ps_svc_abort_entry(jid, stored ? stored
                                                   : !job ? "unknown job"
                                                   : job->abort_reason ? job->abort_reason
                                                                       : "job is not running"));
            free(stored);
            continue;
        }
        heartbeat_running_job(hb, job, jid, r);
    }
}

/* jobs reported running that ended while the reports were read (another job's failure
 * failed their operation, ...): the node stops them now, before their room is given to
 * new jobs */
static void heartbeat_abort_ended(struct heartbeat *hb)
{
    size_t i;
    const json_t *r;
    json_array_foreach(hb->jobs, i, r) {
        const char *jid = json_string_value(json_object_get(r, "job_id"));
        struct ps_svc_job *job = ps_strmap_get(&hb->svc->jobs, jid);
        if (strcmp(json_string_value(json_object_get(r, "state")), "running") != 0 || !job ||
            strcmp(job->node_id, hb->node_id) != 0 || job->state == PS_JOB_RUNNING ||
            job->reported_in_heartbeat != hb->node->heartbeat_seq)
            continue;
        bool listed = false;
        size_t k;
        const json_t *a;
        json_array_foreach(hb->abort, k, a) listed |=
            strcmp(json_string_value(json_object_get(a, "job_id")), jid) == 0;
        if (!listed)
            json_array_append_new(hb->abort,
                                  ps_svc_abort_entry(jid, job->abort_reason ? job->abort_reason
                                                                     : "job is not running"));
    }
}

/* jobs the node no longer has: sent in an earlier heartbeat (or seen before) and missing now */
static int heartbeat_missing_jobs(struct heartbeat *hb, struct ps_error *err)
{
    struct ps_service *svc = hb->svc;
    struct ps_svc_node *node = hb->node;
    for (struct ps_svc_job *j = node->jobs, *next; j; j = next) {
        next = j->node_next;
        if (j->reported_in_heartbeat == node->heartbeat_seq)
            continue;
        if (!j->seen_running && hb->lrs && j->sent_in_heartbeat > hb->last_reply) {
            /* sent in a reply the node never read (it gave the request up, or the reply
             * came too late): its allocation stays here, its start goes out again; the node
             * ignores a start of a job id it has */
            json_t *e = ps_svc_start_entry(j);
            if (!e || json_array_append_new(hb->start, e) != 0)
                return ps_error_set(err, PS_ENOMEM, "out of memory");
            j->sent_in_heartbeat = node->heartbeat_seq;
            ps_svc_log(svc, "info", "job_start_resent", "job=%s node=%s last_reply_seq=%" PRIu64,
                       j->id, hb->node_id, hb->last_reply);
            continue;
        }
        if (j->seen_running || j->sent_in_heartbeat < node->heartbeat_seq) {
            ps_svc_job_finish(svc, j, PS_JOB_ABORTED, "the node no longer reports the job",
                              "lost", NULL, hb->now);
            ps_persist_job(svc, j);
            ps_persist_op(svc, j->op);
        }
    }
    return 0;
}

/* Everything under svc->mu up to the scheduling of the node; sets *reply_seq once scheduled. */
static int heartbeat_locked(struct heartbeat *hb, const char *remote_addr,
                            const struct ps_svc_hold *hold, uint64_t *reply_seq,
                            struct ps_error *err)
{
    struct ps_service *svc = hb->svc;
    int rc;
    if ((rc = ps_svc_state_check(svc, err)) != 0 || (rc = ps_store_mirror_writable(svc, err)) != 0)
        return rc;
    if ((rc = heartbeat_node(hb, hold, err)) != 0 || (rc = heartbeat_takeover(hb, err)) != 0 ||
        (rc = heartbeat_register(hb, remote_addr, err)) != 0)
        return rc;
    struct ps_svc_node *node = hb->node;
    ps_node_tags_check_tree(svc, node, hb->now);   /* a changed tag or nodes_filter moved it */
    heartbeat_media(hb);
    node->last_seen_ms = hb->now;
    node->heartbeat_seq++;
    node->held = false;
    if (!hold || !hold->rerun)   /* a released held heartbeat is one heartbeat, run again */
        ps_metric_add(svc->m_heartbeats, 1);
    heartbeat_job_reports(hb);
    heartbeat_abort_ended(hb);
    if ((rc = heartbeat_missing_jobs(hb, err)) != 0)
        return rc;
    rc = ps_svc_schedule_node(svc, node, hb->now, hb->start, hb->interrupt, hb->abort, err);
    *reply_seq = node->heartbeat_seq;
    return rc;
}

/* The nodes' dynamic config (nodes_config.h) when the node's dynamic_config_version (0 when
 * it sends none) is not the current one. */
static int add_nodes_config(struct heartbeat *hb, json_t *reply)
{
    const json_t *v = json_object_get(hb->req, "dynamic_config_version");
    json_t *config;
    uint64_t version;
    ps_nodes_config_for_node(hb->svc, json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0,
                             &config, &version);
    if (!config)
        return 0;
    if (json_object_set_new(reply, "dynamic_config", config) != 0)
        return -1;
    return json_object_set_new(reply, "dynamic_config_version", json_integer((json_int_t)version));
}

/* The reply: the lists (which it takes), the periods, the leader's epoch and the reply's
 * number. */
static int heartbeat_reply(struct heartbeat *hb, uint64_t reply_seq, json_t **reply,
                           struct ps_error *err)
{
    struct ps_service *svc = hb->svc;
    *reply = json_pack("{s:I, s:I, s:o, s:o, s:o, s:o}", "heartbeat_period_ms",
                       (json_int_t)svc->cfg.heartbeat_period_ms, "node_offline_timeout_ms",
                       (json_int_t)svc->cfg.node_offline_timeout_ms, "jobs_to_start", hb->start,
                       "jobs_to_interrupt", hb->interrupt, "jobs_to_abort", hb->abort,
                       "acknowledged", hb->acked);
    /* the leader's epoch (ha.h; 0 without --ha): agents ignore replies of an older leader */
    if (*reply && svc->cfg.ha_epoch > 0 &&
        json_object_set_new(*reply, "scheduler_epoch",
                            json_integer((json_int_t)svc->cfg.ha_epoch)) != 0) {
        json_decref(*reply);
        *reply = NULL;
    }
    if (*reply && add_nodes_config(hb, *reply) != 0) {
        json_decref(*reply);
        *reply = NULL;
    }
    if (*reply && hb->lrs &&
        json_object_set_new(*reply, "reply_seq", json_integer((json_int_t)reply_seq)) != 0) {
        json_decref(*reply);
        *reply = NULL;
    }
    return *reply ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

int ps_api_heartbeat_json(struct ps_service *svc, const json_t *req, const char *remote_addr,
                          struct ps_svc_hold *hold, json_t **reply, struct ps_error *err)
{
    *reply = NULL;
    struct heartbeat hb = {.svc = svc, .req = req};
    int rc = validate(req, &hb.limits, err);
    if (rc != 0)
        return rc;
    hb.node_id = json_string_value(json_object_get(req, "node_id"));
    hb.tags = json_object_get(req, "tags");
    json_t *empty_tags = NULL;
    if (!hb.tags)
        hb.tags = empty_tags = json_array();
    hb.jobs = json_object_get(req, "jobs");
    hb.instance = json_string_value(json_object_get(req, "instance_id"));
    hb.lrs = json_object_get(req, "last_reply_seq");
    hb.last_reply = hb.lrs ? (uint64_t)json_integer_value(hb.lrs) : 0;
    uint64_t reply_seq = 0;
    hb.now = ps_svc_now_ms();

    hb.start = json_array();
    hb.interrupt = json_array();
    hb.abort = json_array();
    hb.acked = json_array();
    bool held = false;
    pthread_mutex_lock(&svc->mu);
    uint64_t before = ps_journal_last(svc->journal), relied = ps_journal_relied(svc->journal);
    rc = heartbeat_locked(&hb, remote_addr, hold, &reply_seq, err);
    /* long-poll: a reply with nothing in it, and nothing to commit that it rests on, waits for
     * work (rows of the event log, e.g. node_registered, are put aside: no reply rests on them) */
    held = rc == 0 && hold && json_array_size(hb.start) == 0 &&
           json_array_size(hb.interrupt) == 0 && json_array_size(hb.abort) == 0 &&
           json_array_size(hb.acked) == 0 &&
           ps_journal_relied(svc->journal) == relied &&
           ps_svc_long_poll_hold(svc, hb.node, hold);
    uint64_t after = ps_journal_last(svc->journal);
    pthread_mutex_unlock(&svc->mu);
    json_decref(empty_tags);
    if (rc == 0 && held) {
        heartbeat_free_lists(&hb);
        return 0;
    }
    /* a reply that tells the node to abort jobs may rest on changes of other requests still
     * being committed (an abort_op): wait for them too, so that a refused change (507, rolled
     * back) kills no job */
    if (rc == 0 && (after > before || json_array_size(hb.abort) > 0))
        rc = ps_journal_wait(svc->journal, after, err);
    if (rc != 0) {
        heartbeat_free_lists(&hb);
        return rc;
    }
    return heartbeat_reply(&hb, reply_seq, reply, err);
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
    /* long-poll (long_poll.c): wait_ms asks to be held up to that long (at most a heartbeat
     * period) while the heartbeat would give the node nothing */
    const json_t *wait = json_object_get(body, "wait_ms");
    if (wait && (!json_is_integer(wait) || json_integer_value(wait) < 0 ||
                 json_integer_value(wait) > PS_SVC_MAX_WAIT_MS)) {
        json_decref(body);
        ps_http_reply_error(resp, 400, PS_EINVAL, "wait_ms: must be an integer from 0 to %d "
                            "milliseconds", PS_SVC_MAX_WAIT_MS);
        return;
    }
    const char *node_id = json_string_value(json_object_get(body, "node_id"));
    if (req->released == PS_HTTP_RELEASED_SUPERSEDED) {
        /* the agent gave up on this request and sent a newer heartbeat (its connection is
         * gone): nothing is processed for it */
        ps_http_reply_error(resp, 409, PS_ESTATE, "heartbeat of node %s superseded by a newer "
                            "one while it was held", node_id ? node_id : "?");
        json_decref(body);
        return;
    }
    if (!req->released && node_id && svc->http)   /* a newer heartbeat: the held one ends */
        ps_http_server_release(svc->http, node_id, PS_HTTP_RELEASED_SUPERSEDED);
    /* at most a period, and well within node_offline_timeout: a held node is not seen */
    int64_t wait_ms = wait ? json_integer_value(wait) : 0;
    if (wait_ms > svc->cfg.heartbeat_period_ms)
        wait_ms = svc->cfg.heartbeat_period_ms;
    if (wait_ms > svc->cfg.node_offline_timeout_ms / 2)
        wait_ms = svc->cfg.node_offline_timeout_ms / 2;
    bool may_hold = wait_ms > 0 && req->released != PS_HTTP_RELEASED_DEADLINE &&
                    req->released != PS_HTTP_RELEASED_STOPPING;
    struct ps_svc_hold hold = {
        .req = req,
        .resp = resp,
        .deadline_ns = !may_hold              ? 0
                       : req->hold_deadline_ns ? req->hold_deadline_ns
                                               : started_ns + wait_ms * 1000000,
        .rerun = req->released != 0,
        .held_at = req->hold_tag,
    };
    json_t *reply = NULL;
    int rc = ps_api_heartbeat_json(svc, body, req->remote_addr, &hold, &reply, &err);
    json_decref(body);
    if (rc == 0 && hold.held) {
        ps_metric_observe(svc->m_hb_latency,
                          (double)(ps_clock_monotonic_ns() - started_ns) / 1e9);
        return;
    }
    if (rc == 0 && wait && json_object_set_new(reply, "wait_ms", json_integer(wait_ms)) != 0)
        rc = ps_error_set(&err, PS_ENOMEM, "out of memory");
    if (rc == PS_ENOSPC || rc == PS_EUNAVAIL) {
        /* its changes were not committed and are undone: no job of this reply starts, finishes
         * stay unacknowledged (the node reports them again); the cause, not "internal error" */
        json_t *eb = ps_http_error_body(rc, err.msg);
        ps_http_reply_json(resp, rc == PS_ENOSPC ? 507 : 503, eb);
        json_decref(eb);
    } else if (rc != 0) {
        ps_http_reply_ps_error(resp, &err);
    } else {
        ps_http_reply_json(resp, 200, reply);
        json_decref(reply);
    }
    ps_metric_observe(svc->m_hb_latency, (double)(ps_clock_monotonic_ns() - started_ns) / 1e9);
}
