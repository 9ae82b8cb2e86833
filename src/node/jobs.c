#include "node/jobs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpu_monitor.h"
#include "core/memory_reserve.h"
#include "core/strmap.h"
#include "io/utf8.h"

#define DEFAULT_STDERR_BUDGET (4u * 1024u * 1024u)

enum job_state {
    JOB_WAITING,                        /* for the node's resources (start_waiting) */
    JOB_RUNNING,
    JOB_FINISHED,
};

struct job {
    char *job_id;
    char *operation_id;
    char *task_name;
    int64_t job_index;
    double cpu_limit;
    double cpu_to_vcpu_factor;          /* the node's when it started (its vcpu stays what the
                                         * scheduler gave it) */
    int64_t memory_limit_bytes;
    int64_t memory_reserve_bytes;
    int64_t memory_held;                /* bytes the node holds for it (node_overdraft.h) */
    int64_t start_ms;
    int gpus[PS_NODE_MAX_GPUS];         /* device indices held while running */
    int gpu_count;
    int ports[PS_NODE_MAX_JOB_PORTS];
    int port_count;

    enum job_state state;
    struct ps_node_start *wait_start;   /* waiting: its start request (owned copy) */
    int64_t wait_deadline_ms, wait_timeout_ms;
    void *handle;                       /* the runner's job; NULL once finished */
    struct ps_node_job_sample sample;   /* the latest tick's */
    double memory_byte_ms;              /* integral of sample.memory_bytes over time */
    int64_t memory_sampled_ms;          /* when memory_byte_ms was last advanced */
    bool aborting;                      /* abort sent; no more overdraft checks */
    char pending_abort[64];             /* an abort whose kill failed, retried each tick */
    bool interrupted;

    struct ps_cpu_monitor monitor;
    bool monitor_on;                    /* initialised and started */
    int64_t next_check_ms;
    bool monitor_error_logged;

    json_t *record;                     /* the finished record (finished jobs) */
    size_t record_stderr_bytes;
    uint64_t stderr_sent_hash;          /* of the running job's stderr last reported (0: none) */
};

struct ps_node_jobs {
    const struct ps_node_runner *runner;
    struct ps_node_jobs_config cfg;
    struct job **jobs;                  /* in start order */
    size_t count, capacity;
    struct ps_strmap by_id;
    struct ps_node_devices devices;
    size_t running;
    bool weight_warned;
    int64_t next_adjust_ms;             /* the next resource adjustment (0: not scheduled yet) */
    int64_t cpu_overdraft_since_ms;     /* node_overdraft.h */
};

void ps_node_jobs_config_init(struct ps_node_jobs_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->report_stderr_budget_bytes = DEFAULT_STDERR_BUDGET;
    cfg->cpu_to_vcpu_factor = 1.0;
    cfg->start_port = PS_NODE_DEFAULT_START_PORT;
    cfg->port_count = PS_NODE_DEFAULT_PORT_COUNT;
    cfg->waiting_for_resources_timeout_ms = PS_NODE_DEFAULT_WAITING_FOR_RESOURCES_TIMEOUT_MS;
    ps_node_overdraft_config_init(&cfg->overdraft);
}

__attribute__((format(printf, 2, 3))) static void logf_(struct ps_node_jobs *t, const char *fmt,
                                                       ...)
{
    if (!t->cfg.log)
        return;
    va_list ap;
    va_start(ap, fmt);
    t->cfg.log(t->cfg.log_ctx, fmt, ap);
    va_end(ap);
}

int ps_node_jobs_new(const struct ps_node_runner *runner, const struct ps_node_jobs_config *cfg,
                     struct ps_node_jobs **out, struct ps_error *err)
{
    struct ps_node_jobs *t = calloc(1, sizeof *t);
    if (!t)
        return ps_error_set(err, PS_ENOMEM, "out of memory for the job table");
    t->runner = runner;
    if (cfg)
        t->cfg = *cfg;
    else
        ps_node_jobs_config_init(&t->cfg);
    t->cpu_overdraft_since_ms = PS_NO_CPU_OVERDRAFT;
    int rc = ps_node_devices_init(&t->devices, t->cfg.gpu_count, t->cfg.start_port,
                                  t->cfg.port_count, t->cfg.port_probe, err);
    if (rc != 0) {
        free(t);
        return rc;
    }
    ps_strmap_init(&t->by_id);
    *out = t;
    return 0;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

static void start_free(struct ps_node_start *s)
{
    if (!s)
        return;
    free((char *)s->job_id);
    free((char *)s->operation_id);
    free((char *)s->task_name);
    free((char *)s->command);
    ps_node_env_free(s->environment);
    free(s);
}

/* An owned copy of s (strings and environment), or NULL when out of memory. */
static struct ps_node_start *start_copy(const struct ps_node_start *s)
{
    struct ps_node_start *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    *c = *s;
    c->job_id = c->operation_id = c->task_name = c->command = NULL;
    c->environment = NULL;
    size_t n = 0;
    while (s->environment && s->environment[n])
        n++;
    bool ok = (c->job_id = strdup(s->job_id)) && (c->operation_id = dup_or_empty(s->operation_id)) &&
              (c->task_name = dup_or_empty(s->task_name)) && (c->command = strdup(s->command)) &&
              (c->environment = calloc(n + 1, sizeof *c->environment));
    for (size_t i = 0; ok && i < n; i++)
        ok = (c->environment[i] = strdup(s->environment[i])) != NULL;
    if (!ok) {
        start_free(c);
        return NULL;
    }
    return c;
}

static void job_free(const struct ps_node_runner *runner, struct job *j)
{
    if (!j)
        return;
    start_free(j->wait_start);
    if (j->handle)
        runner->ops->free(j->handle);
    ps_cpu_monitor_release(&j->monitor);
    json_decref(j->record);
    free(j->job_id);
    free(j->operation_id);
    free(j->task_name);
    free(j);
}

void ps_node_jobs_free(struct ps_node_jobs *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->count; i++) {
        struct job *j = t->jobs[i];
        if (j->state == JOB_RUNNING && !j->aborting)
            t->runner->ops->abort(j->handle, "node_shutdown", NULL);
        job_free(t->runner, j);
    }
    free(t->jobs);
    ps_strmap_release(&t->by_id);
    ps_node_devices_release(&t->devices);
    free(t);
}

static struct job *find(const struct ps_node_jobs *t, const char *job_id)
{
    return ps_strmap_get(&t->by_id, job_id);
}

static int add_job(struct ps_node_jobs *t, struct job *j)
{
    if (t->count == t->capacity) {
        size_t cap = t->capacity ? t->capacity * 2 : 16;
        struct job **p = realloc(t->jobs, cap * sizeof *p);
        if (!p)
            return PS_ENOMEM;
        t->jobs = p;
        t->capacity = cap;
    }
    if (ps_strmap_put(&t->by_id, j->job_id, j) != 0)
        return PS_ENOMEM;
    t->jobs[t->count++] = j;
    return 0;
}

/* ---- finished records ----------------------------------------------------------------- */

/* s[0..len) as valid UTF-8: each byte of an invalid sequence becomes U+FFFD, so a job's binary
 * garbage still travels as a JSON string. Returns a malloc'ed string and its length. */
static char *utf8_clean(const char *s, size_t len, size_t *out_len)
{
    char *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    while (i < len) {
        size_t bad;
        if (ps_utf8_valid(s + i, len - i, &bad)) {
            memcpy(out + o, s + i, len - i);
            o += len - i;
            break;
        }
        memcpy(out + o, s + i, bad);
        o += bad;
        memcpy(out + o, "\xef\xbf\xbd", 3);
        o += 3;
        i += bad + 1;
    }
    out[o] = '\0';
    *out_len = o;
    return out;
}

static const char *outcome_name(enum ps_node_outcome o)
{
    switch (o) {
    case PS_NODE_OUTCOME_COMPLETED: return "completed";
    case PS_NODE_OUTCOME_FAILED: return "failed";
    case PS_NODE_OUTCOME_ABORTED: return "aborted";
    default: return "running";
    }
}

/* Engine statistic paths start with '/'; the heartbeat's keys do not (docs/api.md). */
static int put_stat(json_t *stats, const char *path, int64_t value)
{
    if (path[0] == '/')
        path++;
    return json_object_set_new(stats, path, json_integer(value));
}

/* The job's CPU monitor statistics, once it has measured. */
static int put_monitor_stats(json_t *stats, const struct job *j)
{
    int rc = 0;
    if (j->monitor_on) {
        struct ps_stat_sample s[PS_CPU_MONITOR_STAT_COUNT];
        size_t n = ps_cpu_monitor_statistics(&j->monitor, s);
        for (size_t i = 0; i < n; i++)
            rc |= put_stat(stats, s[i].path, s[i].value);
    }
    return rc;
}

static json_t *build_statistics(const struct job *j, const struct ps_node_job_end *end)
{
    json_t *stats = json_object();
    if (!stats)
        return NULL;
    int rc = put_stat(stats, PS_STAT_USER_JOB_MAX_MEMORY, end->memory_peak_bytes);
    if (j->memory_limit_bytes > 0) {
        struct ps_memory_job mj;
        memset(&mj, 0, sizeof mj);
        mj.memory_limit_bytes = j->memory_limit_bytes;
        mj.user_job_memory_reserve_bytes = j->memory_reserve_bytes;
        struct ps_stat_sample s[PS_MEMORY_USER_JOB_STAT_COUNT];
        size_t n = ps_memory_user_job_statistics(&mj, s);
        for (size_t i = 0; i < n; i++)
            rc |= put_stat(stats, s[i].path, s[i].value);
    }
    rc |= put_monitor_stats(stats, j);
    /* upstream's name: megabytes (MiB) x seconds of the job's memory use */
    rc |= put_stat(stats, "/user_job/cumulative_memory_mb_sec",
                   (int64_t)(j->memory_byte_ms / 1000.0 / (1024.0 * 1024.0)));
    rc |= put_stat(stats, PS_STAT_TIME_TOTAL, end->duration_ms);
    rc |= put_stat(stats, "/user_job/cpu_usage_ms", (int64_t)(end->cpu_seconds * 1000.0));
    if (rc != 0) {
        json_decref(stats);
        return NULL;
    }
    return stats;
}

/* The guarantee the node reports (the scheduler counts it as the job's cpu usage): the
 * monitor's soft limit only with enable_cpu_reclaim; with reclaim off (the dry run) the soft
 * limit moves in the statistics alone and the job keeps its whole limit, as upstream, where
 * the job proxy then never calls TrySetCpuGuarantee. */
static double current_guarantee(const struct job *j)
{
    return j->monitor_on && j->monitor.config.enable_cpu_reclaim ? j->monitor.soft_limit
                                                                 : j->cpu_limit;
}

/* Adds upstream's exec_attributes of a job with GPUs to entry: {"gpu_devices":
 * [{"device_number": 0, "device_name": "/dev/nvidia0"}, ...]} (nothing for a job without).
 * 0, or nonzero when out of memory (or entry is NULL). */
static int put_exec_attributes(const struct job *j, json_t *entry)
{
    if (!entry)
        return -1;
    if (j->gpu_count == 0)
        return 0;
    json_t *devs = json_array();
    for (int i = 0; devs && i < j->gpu_count; i++) {
        char name[32];
        snprintf(name, sizeof name, "/dev/nvidia%d", j->gpus[i]);
        if (json_array_append_new(devs, json_pack("{s:i, s:s}", "device_number", j->gpus[i],
                                                  "device_name", name)) != 0) {
            json_decref(devs);
            return -1;
        }
    }
    json_t *ea = devs ? json_pack("{s:o}", "gpu_devices", devs) : NULL;
    return ea ? json_object_set_new(entry, "exec_attributes", ea) : -1;
}

void ps_node_jobs_set_cpu_to_vcpu_factor(struct ps_node_jobs *t, double factor)
{
    t->cfg.cpu_to_vcpu_factor = factor;
}

/* The guarantee as the scheduler counts it: in vcpu (cpu_to_vcpu_factor). */
static double reported_guarantee(const struct job *j)
{
    double f = j->cpu_to_vcpu_factor;
    return f == 1.0 ? current_guarantee(j) : ps_cpu_round(current_guarantee(j) * f);
}

/* Builds the finished record of j from end; stderr may be NULL. Returns 0 or PS_ENOMEM. */
static int make_record(const struct ps_node_jobs *t, struct job *j,
                       const struct ps_node_job_end *end, const char *stderr_data,
                       size_t stderr_len, bool stderr_truncated)
{
    json_t *r = json_object();
    json_t *stats = build_statistics(j, end);
    size_t clean_len = 0;
    char *clean = utf8_clean(stderr_data ? stderr_data : "", stderr_data ? stderr_len : 0,
                             &clean_len);
    if (!r || !stats || !clean)
        goto fail;
    int rc = json_object_set_new(r, "job_id", json_string(j->job_id));
    rc |= json_object_set_new(r, "state", json_string(outcome_name(end->outcome)));
    rc |= json_object_set_new(r, "exit_code", json_integer(end->exit_code));
    if (end->outcome == PS_NODE_OUTCOME_FAILED)
        rc |= json_object_set_new(r, "error", json_string(end->error[0] ? end->error
                                                                          : "Job failed"));
    if (end->outcome == PS_NODE_OUTCOME_ABORTED)
        rc |= json_object_set_new(r, "abort_reason",
                                  json_string(end->abort_reason[0] ? end->abort_reason
                                                                   : "unknown"));
    rc |= json_object_set_new(r, "cpu_guarantee", json_real(reported_guarantee(j)));
    rc |= json_object_set_new(r, "cpu_usage_seconds", json_real(end->cpu_seconds));
    rc |= json_object_set_new(r, "memory_bytes", json_integer(end->memory_peak_bytes));
    rc |= json_object_set_new(r, "statistics", stats);
    stats = NULL;
    rc |= json_object_set_new(r, "stderr", json_stringn(clean, clean_len));
    rc |= json_object_set_new(r, "stderr_truncated", json_boolean(stderr_truncated));
    rc |= put_exec_attributes(j, r);
    if (rc != 0)
        goto fail;
    free(clean);
    json_decref(j->record);
    j->record = r;
    j->record_stderr_bytes = clean_len;
    return 0;
fail:
    free(clean);
    json_decref(stats);
    json_decref(r);
    return PS_ENOMEM;
}

/* A record that cannot even be built (out of memory) still has to say the job ended. */
static json_t *minimal_record(const char *job_id, const char *state, const char *abort_reason)
{
    json_t *r = json_pack("{s:s, s:s}", "job_id", job_id, "state", state);
    if (r && abort_reason)
        json_object_set_new(r, "abort_reason", json_string(abort_reason));
    return r;
}

static void finish(struct ps_node_jobs *t, struct job *j, const struct ps_node_job_end *end,
                   const char *stderr_data, size_t stderr_len, bool truncated)
{
    if (make_record(t, j, end, stderr_data, stderr_len, truncated) != 0) {
        logf_(t, "job %s: out of memory for its record; reporting it without statistics",
              j->job_id);
        json_decref(j->record);
        j->record = minimal_record(j->job_id, outcome_name(end->outcome),
                                   end->outcome == PS_NODE_OUTCOME_ABORTED ? end->abort_reason
                                                                           : NULL);
        j->record_stderr_bytes = 0;
    }
    if (j->state != JOB_FINISHED) {
        t->running--;
        ps_node_gpus_free(&t->devices, j->gpus, j->gpu_count);
        ps_node_ports_free(&t->devices, j->ports, j->port_count);
    }
    j->state = JOB_FINISHED;
    if (end->outcome == PS_NODE_OUTCOME_FAILED)
        logf_(t, "job %s: failed: %s", j->job_id, end->error);
    else if (end->outcome == PS_NODE_OUTCOME_ABORTED)
        logf_(t, "job %s: aborted: %s", j->job_id, end->abort_reason);
    else
        logf_(t, "job %s: completed in %lld ms", j->job_id, (long long)end->duration_ms);
}

/* ---- start ---------------------------------------------------------------------------- */

/* Gives running job j the GPU devices and ports s asks for and, when it asks for any, *env:
 * s's environment naming them (devices.h). When the node has not enough free, j is finished
 * at once, aborted with "waiting_timeout", and -1 returned. */
static int take_devices(struct ps_node_jobs *t, struct job *j, const struct ps_node_start *s,
                        char ***env)
{
    *env = NULL;
    struct ps_error e;
    ps_error_init(&e);
    int rc = ps_node_gpus_acquire(&t->devices, (int)s->gpu_limit, j->gpus, &e);
    if (rc == 0)
        j->gpu_count = (int)s->gpu_limit;
    if (rc == 0 && (rc = ps_node_ports_acquire(&t->devices, (int)s->port_count, j->ports,
                                               &e)) == 0)
        j->port_count = (int)s->port_count;
    if (rc == 0 && (j->gpu_count > 0 || j->port_count > 0) &&
        !(*env = ps_node_env_with_devices((const char *const *)s->environment, j->gpus,
                                          j->gpu_count, j->ports, j->port_count)))
        rc = ps_error_set(&e, PS_ENOMEM, "out of memory for the job's environment");
    if (rc == 0)
        return 0;
    struct ps_node_job_end end;
    memset(&end, 0, sizeof end);
    end.exit_code = -1;
    end.outcome = PS_NODE_OUTCOME_ABORTED;
    snprintf(end.abort_reason, sizeof end.abort_reason, "%s",
             rc == PS_ELIMIT ? "waiting_timeout" : "node_error");
    logf_(t, "job %s: cannot start: %s", j->job_id, e.msg);
    finish(t, j, &end, e.msg, strlen(e.msg), false);
    return -1;
}

/* Starts waiting job j from start request s at now_ms: its CPU monitor, devices and process.
 * A job that cannot start is finished at once. */
static void launch(struct ps_node_jobs *t, struct job *j, const struct ps_node_start *s,
                   int64_t now_ms)
{
    j->start_ms = now_ms;
    j->memory_sampled_ms = now_ms;
    j->state = JOB_RUNNING;

    struct ps_error e;
    ps_error_init(&e);
    if (ps_cpu_monitor_init(&j->monitor, &s->cpu_monitor, j->cpu_limit, &e) == 0) {
        if (ps_cpu_monitor_start(&j->monitor, now_ms, &e) == 0) {
            j->monitor_on = true;
            j->next_check_ms = now_ms + s->cpu_monitor.check_period_ms;
        } else {
            ps_cpu_monitor_release(&j->monitor);
        }
    }
    if (!j->monitor_on) {
        logf_(t, "job %s: no CPU monitor: %s", s->job_id, e.msg);
        ps_error_init(&e);
    }

    char **env = NULL;
    if (take_devices(t, j, s, &env) != 0)
        return;
    struct ps_node_job_spec spec = {
        .operation_id = s->operation_id,
        .job_id = s->job_id,
        .task_name = s->task_name,
        .job_index = s->job_index,
        .command = s->command,
        .environment = (const char *const *)(env ? env : s->environment),
        .cpu_limit = j->cpu_limit,
        /* The monitor starts at the hard limit (semantics.md 4.2), so does the weight. */
        .cpu_guarantee = j->cpu_limit,
        .memory_limit_bytes = s->memory_limit_bytes,
        .tmpfs_size_bytes = s->tmpfs_size_bytes,
    };
    int rc = t->runner->ops->start(t->runner->ctx, &spec, now_ms, &j->handle, &e);
    ps_node_env_free(env);
    if (rc != 0) {
        j->handle = NULL;
        struct ps_node_job_end end;
        memset(&end, 0, sizeof end);
        end.exit_code = -1;
        /* A spec this node cannot run fails (retrying it elsewhere may not help either); a
         * node-side trouble aborts, so the scheduler runs the job again. */
        if (rc == PS_EINVAL || rc == PS_EPERM || rc == PS_ENOENT) {
            end.outcome = PS_NODE_OUTCOME_FAILED;
            snprintf(end.error, sizeof end.error, "Cannot start job: %.140s", e.msg);
        } else {
            end.outcome = PS_NODE_OUTCOME_ABORTED;
            snprintf(end.abort_reason, sizeof end.abort_reason, "node_error");
            logf_(t, "job %s: cannot start: %s", s->job_id, e.msg);
        }
        finish(t, j, &end, e.msg, strlen(e.msg), false);
        return;
    }
    logf_(t, "job %s: started (operation %s, task %s, index %lld, cpu %.2f, memory limit %lld)",
          j->job_id, j->operation_id, j->task_name, (long long)j->job_index, j->cpu_limit,
          (long long)j->memory_limit_bytes);
}

/* What the running jobs hold of the node's user slots and cpu (node_waiting.h). Running jobs
 * hold their resources until reaped, interrupted or aborting ones too (upstream's job resource
 * manager releases them when the job is cleaned up). */
static struct ps_node_slots_cpu held(const struct ps_node_jobs *t)
{
    struct ps_node_slots_cpu h = {0, 0};
    for (size_t i = 0; i < t->count; i++) {
        const struct job *r = t->jobs[i];
        if (r->state != JOB_RUNNING)
            continue;
        h.user_slots++;
        h.cpu += ps_node_cpu_units(current_guarantee(r));
    }
    return h;
}

static struct ps_node_slots_cpu capacity(const struct ps_node_jobs *t)
{
    return (struct ps_node_slots_cpu){t->cfg.user_slots, ps_node_cpu_units(t->cfg.node_cpu)};
}

/* Finishes waiting job j as aborted with reason; message goes where its stderr would. */
static void finish_waiting(struct ps_node_jobs *t, struct job *j, const char *reason,
                           const char *message)
{
    struct ps_node_job_end end;
    memset(&end, 0, sizeof end);
    end.exit_code = -1;
    end.outcome = PS_NODE_OUTCOME_ABORTED;
    snprintf(end.abort_reason, sizeof end.abort_reason, "%s", reason);
    finish(t, j, &end, message, strlen(message), false);
    start_free(j->wait_start);
    j->wait_start = NULL;
}

/* Starts the waiting jobs that fit now, in start order, and aborts those whose waiting timeout
 * has passed (upstream's StartWaitingJobs and OnWaitingAllocationTimeout). */
static void start_waiting(struct ps_node_jobs *t, int64_t now_ms)
{
    struct ps_node_slots_cpu cap = capacity(t), h = held(t);
    for (size_t i = 0; i < t->count; i++) {
        struct job *j = t->jobs[i];
        if (j->state != JOB_WAITING)
            continue;
        enum ps_node_waiting_step step = ps_node_waiting_step(
            &cap, &h, ps_node_cpu_units(j->cpu_limit), j->wait_deadline_ms, now_ms);
        if (step == PS_NODE_WAITING_START) {
            struct ps_node_start *s = j->wait_start;
            j->wait_start = NULL;
            logf_(t, "job %s: resources free after %lld ms of waiting", j->job_id,
                  (long long)(now_ms - j->start_ms));
            launch(t, j, s, now_ms);
            start_free(s);
        } else if (step == PS_NODE_WAITING_TIMEOUT) {
            char msg[160];
            ps_node_waiting_message(msg, sizeof msg, j->wait_timeout_ms);
            finish_waiting(t, j, "waiting_timeout", msg);
        }
    }
}

void ps_node_jobs_start(struct ps_node_jobs *t, const struct ps_node_start *s, int64_t now_ms)
{
    if (find(t, s->job_id))
        return;
    struct job *j = calloc(1, sizeof *j);
    if (!j) {
        logf_(t, "job %s: out of memory, not started", s->job_id);
        return;
    }
    j->job_id = strdup(s->job_id);
    j->operation_id = dup_or_empty(s->operation_id);
    j->task_name = dup_or_empty(s->task_name);
    if (!j->job_id || !j->operation_id || !j->task_name) {
        logf_(t, "job %s: out of memory, not started", s->job_id);
        job_free(t->runner, j);
        return;
    }
    j->job_index = s->job_index;
    double f = t->cfg.cpu_to_vcpu_factor;
    j->cpu_to_vcpu_factor = f;
    j->cpu_limit = f == 1.0 ? s->cpu_limit : ps_cpu_round(s->cpu_limit / f);
    j->memory_limit_bytes = s->memory_limit_bytes;
    j->memory_reserve_bytes = s->memory_reserve_bytes;
    j->memory_held = s->memory_reserve_bytes > 0 ? s->memory_reserve_bytes : 0;
    j->start_ms = now_ms;
    j->state = JOB_WAITING;
    if (add_job(t, j) != 0) {
        logf_(t, "job %s: out of memory, not started", s->job_id);
        job_free(t->runner, j);
        return;
    }
    t->running++;
    struct ps_node_slots_cpu cap = capacity(t), h = held(t);
    if (ps_node_job_fits(&cap, &h, ps_node_cpu_units(j->cpu_limit))) {
        launch(t, j, s, now_ms);
        return;
    }
    /* Victims of a preemption may still be ending: the job waits for their resources. */
    j->wait_timeout_ms = ps_node_waiting_timeout(s->waiting_job_timeout_ms,
                                                 t->cfg.waiting_for_resources_timeout_ms);
    j->wait_deadline_ms = now_ms + j->wait_timeout_ms;
    if (!(j->wait_start = start_copy(s))) {
        finish_waiting(t, j, "node_error", "out of memory for a waiting job");
        return;
    }
    logf_(t, "job %s: waiting for resources (up to %lld ms)", j->job_id,
          (long long)j->wait_timeout_ms);
}

/* ---- signals from the scheduler --------------------------------------------------------- */

void ps_node_jobs_interrupt(struct ps_node_jobs *t, const char *job_id, int64_t timeout_ms,
                            const char *reason, int64_t now_ms)
{
    struct job *j = find(t, job_id);
    if (j && j->state == JOB_WAITING) {
        ps_node_jobs_abort(t, job_id, reason);   /* it holds nothing to give back gracefully */
        return;
    }
    if (!j || j->state != JOB_RUNNING || j->aborting)
        return;
    struct ps_error e;
    ps_error_init(&e);
    if (t->runner->ops->interrupt(j->handle, now_ms, timeout_ms, reason, &e) != 0) {
        logf_(t, "job %s: interrupt failed (%s); aborting it", job_id, e.msg);
        ps_node_jobs_abort(t, job_id, reason);
        return;
    }
    if (!j->interrupted)
        logf_(t, "job %s: interrupted (%s), killed in %lld ms unless it exits", job_id, reason,
              (long long)timeout_ms);
    j->interrupted = true;
}

void ps_node_jobs_abort(struct ps_node_jobs *t, const char *job_id, const char *reason)
{
    struct job *j = find(t, job_id);
    if (j && j->state == JOB_WAITING) {
        finish_waiting(t, j, reason, "Job aborted by scheduler");
        return;
    }
    if (!j || j->state != JOB_RUNNING || j->aborting)
        return;
    struct ps_error e;
    ps_error_init(&e);
    if (t->runner->ops->abort(j->handle, reason, &e) != 0) {
        if (!j->pending_abort[0])
            logf_(t, "job %s: abort: %s (retrying every tick)", job_id, e.msg);
        snprintf(j->pending_abort, sizeof j->pending_abort, "%s", reason);
    } else {
        j->aborting = true;
        j->pending_abort[0] = '\0';
    }
}

void ps_node_jobs_abort_all(struct ps_node_jobs *t, const char *reason)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->jobs[i]->state != JOB_FINISHED)
            ps_node_jobs_abort(t, t->jobs[i]->job_id, reason);
}

bool ps_node_jobs_acknowledge(struct ps_node_jobs *t, const char *job_id)
{
    struct job *j = find(t, job_id);
    if (!j || j->state != JOB_FINISHED)
        return false;
    ps_strmap_remove(&t->by_id, job_id);
    for (size_t i = 0; i < t->count; i++)
        if (t->jobs[i] == j) {
            memmove(&t->jobs[i], &t->jobs[i + 1], (t->count - i - 1) * sizeof *t->jobs);
            t->count--;
            break;
        }
    job_free(t->runner, j);
    return true;
}

/* ---- tick ----------------------------------------------------------------------------- */

struct guarantee_ctx {
    struct ps_node_jobs *t;
    struct job *j;
};

/* The monitor's try_set: applies the guarantee as the job's weight. Without weights on this
 * node the guarantee is accepted as bookkeeping (the node runs jobs without CPU control and
 * said so at start); only a failed write refuses it, as upstream's TrySetCpuGuarantee. */
static bool try_set_guarantee(void *ctx, double cores)
{
    struct guarantee_ctx *g = ctx;
    struct ps_error e;
    ps_error_init(&e);
    int rc = g->t->runner->ops->set_cpu_guarantee(g->j->handle, cores, &e);
    if (rc == 0)
        return true;
    if (rc == PS_ESTATE) {
        if (!g->t->weight_warned)
            logf_(g->t, "CPU guarantees are not enforced on this node (%s); reporting them "
                  "only", e.msg);
        g->t->weight_warned = true;
        return true;
    }
    logf_(g->t, "job %s: cannot set CPU guarantee %.2f: %s", g->j->job_id, cores, e.msg);
    return false;
}

static void monitor_tick(struct ps_node_jobs *t, struct job *j, int64_t now_ms)
{
    if (!j->monitor_on || now_ms < j->next_check_ms)
        return;
    int64_t period = j->monitor.config.check_period_ms;
    j->next_check_ms += period;
    if (j->next_check_ms <= now_ms)
        j->next_check_ms = now_ms + period;
    struct guarantee_ctx g = {t, j};
    struct ps_cpu_monitor_tick out;
    struct ps_error e;
    ps_error_init(&e);
    if (ps_cpu_monitor_tick(&j->monitor, now_ms, j->sample.cpu_seconds, try_set_guarantee, &g,
                            &out, &e) != 0) {
        if (!j->monitor_error_logged)
            logf_(t, "job %s: CPU monitor: %s", j->job_id, e.msg);
        j->monitor_error_logged = true;
        return;
    }
    if (out.changed)
        logf_(t, "job %s: CPU guarantee %.3f -> %.3f (smoothed usage %.3f)%s", j->job_id,
              out.old_soft_limit, out.new_soft_limit, out.smoothed_usage,
              j->monitor.config.enable_cpu_reclaim ? "" : " [dry run, reclaim off]");
}

/* Reaps a job the runner reported finished: reads its stderr and builds its record. */
static void reap_job(struct ps_node_jobs *t, struct job *j)
{
    struct ps_node_job_end end;
    memset(&end, 0, sizeof end);
    t->runner->ops->result(j->handle, &end);
    /* Asked only now, after the reap: if the guard killed the job (the agent stopped past its
     * deadline), the clock already says so, wherever the agent was stopped. */
    const char *lost = end.outcome == PS_NODE_OUTCOME_FAILED && t->cfg.lost_reason
                       ? t->cfg.lost_reason(t->cfg.lost_ctx) : NULL;
    if (lost) {
        end.outcome = PS_NODE_OUTCOME_ABORTED;
        snprintf(end.abort_reason, sizeof end.abort_reason, "%s", lost);
        end.error[0] = '\0';
    }
    char *data = NULL;
    size_t len = 0;
    bool truncated = false;
    struct ps_error e;
    ps_error_init(&e);
    if (t->runner->ops->read_stderr(j->handle, &data, &len, &truncated, &e) != 0) {
        logf_(t, "job %s: cannot read its stderr: %s", j->job_id, e.msg);
        data = NULL;
        len = 0;
    }
    finish(t, j, &end, data, len, truncated);
    free(data);
    t->runner->ops->free(j->handle);
    j->handle = NULL;
}

static void always_abort_check(struct ps_node_jobs *t)
{
    for (size_t i = 0; i < t->count; i++) {
        struct job *j = t->jobs[i];
        if (j->state != JOB_RUNNING || j->aborting || j->memory_reserve_bytes <= 0 ||
            j->sample.memory_bytes <= j->memory_reserve_bytes)
            continue;
        logf_(t, "job %s: uses %lld bytes, above its reserve of %lld: aborting it "
              "(resource_overdraft, always_abort_on_memory_reserve_overdraft)", j->job_id,
              (long long)j->sample.memory_bytes, (long long)j->memory_reserve_bytes);
        ps_node_jobs_abort(t, j->job_id, "resource_overdraft");
    }
}

/* The memory rule of node_overdraft.h on this tick's samples: each running job in start order
 * grows (or shrinks) what the node holds for it to its use, never below its reserve; a growth
 * the node's memory cannot hold aborts the rule's victim (resource_overdraft). */
static void overdraft_check(struct ps_node_jobs *t)
{
    if (t->cfg.always_abort_on_memory_reserve_overdraft) {
        always_abort_check(t);
        return;
    }
    if (t->running == 0)
        return;
    struct ps_node_memory_job *use = malloc(t->running * sizeof *use);
    struct job **map = malloc(t->running * sizeof *map);
    if (!use || !map)
        goto out;
    size_t n = 0;
    int64_t used = 0;
    for (size_t i = 0; i < t->count && n < t->running; i++) {   /* start order */
        struct job *j = t->jobs[i];
        if (j->state != JOB_RUNNING || j->aborting)
            continue;
        map[n] = j;
        use[n++] = (struct ps_node_memory_job){j->memory_held, j->memory_reserve_bytes};
        used += j->memory_held;
    }
    for (size_t k = 0; k < n; k++) {
        struct job *j = map[k];
        if (j->aborting)
            continue;
        int64_t now = j->sample.memory_bytes > j->memory_reserve_bytes ? j->sample.memory_bytes
                                                                        : j->memory_reserve_bytes;
        if (now < 0)
            now = 0;
        int64_t delta = now - j->memory_held;
        bool over = ps_node_memory_overdraft(used, delta, t->cfg.node_memory_bytes);
        j->memory_held = use[k].held = now;
        used += delta;
        if (!over)
            continue;
        size_t v = ps_node_memory_overdraft_victim(use, n, k);
        if (v == n)
            continue;
        struct job *victim = map[v];
        logf_(t, "job %s: uses %lld bytes, above its reserve of %lld, while the node's memory "
              "cannot hold job %s's growth: aborting it (resource_overdraft)", victim->job_id,
              (long long)victim->memory_held, (long long)victim->memory_reserve_bytes, j->job_id);
        used -= victim->memory_held;
        use[v].held = use[v].reserve = 0;   /* neither counted nor chosen again */
        ps_node_jobs_abort(t, victim->job_id, "resource_overdraft");
    }
out:
    free(use);
    free(map);
}

/* One resource adjustment (node_overdraft.h): the running jobs' guarantees, as the scheduler
 * counts them, against the node's cpu; past cpu_overdraft_timeout the newest jobs go. */
static void cpu_overdraft_adjust(struct ps_node_jobs *t, int64_t now_ms)
{
    int64_t limit = (int64_t)llround(t->cfg.node_cpu * PS_CPU_SCALE);
    int64_t *cpu = malloc((t->running ? t->running : 1) * sizeof *cpu);
    struct job **map = malloc((t->running ? t->running : 1) * sizeof *map);
    if (!cpu || !map)
        goto out;
    size_t n = 0;
    int64_t usage = 0;
    for (size_t i = 0; i < t->count && n < t->running; i++) {   /* start order */
        struct job *j = t->jobs[i];
        if (j->state != JOB_RUNNING || j->aborting)
            continue;
        map[n] = j;
        cpu[n] = ps_node_cpu_units(current_guarantee(j));
        usage += cpu[n++];
    }
    int64_t since = t->cpu_overdraft_since_ms;
    if (!ps_node_cpu_overdraft_adjust(&t->cfg.overdraft, &t->cpu_overdraft_since_ms, usage, limit,
                                      now_ms)) {
        if (since == PS_NO_CPU_OVERDRAFT && t->cpu_overdraft_since_ms != PS_NO_CPU_OVERDRAFT)
            logf_(t, "jobs use %.2f cpu, above the node's %.2f: aborting the newest after "
                  "cpu_overdraft_timeout (%lld ms) unless it passes", (double)usage / PS_CPU_SCALE,
                  t->cfg.node_cpu, (long long)t->cfg.overdraft.cpu_overdraft_timeout_ms);
        goto out;
    }
    size_t v = ps_node_cpu_overdraft_victims(cpu, n, limit);
    for (size_t k = 0; k < v; k++) {
        struct job *j = map[n - 1 - k];
        logf_(t, "job %s: jobs use %.2f cpu, above the node's %.2f for longer than "
              "cpu_overdraft_timeout: aborting the newest (resource_overdraft)", j->job_id,
              (double)usage / PS_CPU_SCALE, t->cfg.node_cpu);
        ps_node_jobs_abort(t, j->job_id, "resource_overdraft");
    }
out:
    free(cpu);
    free(map);
}

static void adjust_resources(struct ps_node_jobs *t, int64_t now_ms)
{
    int64_t period = t->cfg.overdraft.resource_adjustment_period_ms;
    if (t->cfg.node_cpu <= 0 || period <= 0)
        return;
    if (t->next_adjust_ms == 0)
        t->next_adjust_ms = now_ms + period;   /* a period after the first tick, then every one */
    if (now_ms < t->next_adjust_ms)
        return;
    while (t->next_adjust_ms <= now_ms)
        t->next_adjust_ms += period;
    cpu_overdraft_adjust(t, now_ms);
}

/* Job j's sample through read (the runner's tick or reap); a failure is logged and the
 * sample is still what was read. */
static struct ps_node_job_sample read_sample(struct ps_node_jobs *t, struct job *j,
                                             int (*read)(void *, int64_t, struct ps_node_job_sample *,
                                                         struct ps_error *),
                                             int64_t now_ms)
{
    struct ps_node_job_sample s;
    memset(&s, 0, sizeof s);
    struct ps_error e;
    ps_error_init(&e);
    if (read(j->handle, now_ms, &s, &e) != 0)
        logf_(t, "job %s: %s", j->job_id, e.msg);
    return s;
}

/* Takes sample s into job j's: cpu seconds never go back, the memory peak only up. */
static void merge_sample(struct job *j, const struct ps_node_job_sample *s)
{
    if (s->cpu_seconds >= j->sample.cpu_seconds && isfinite(s->cpu_seconds))
        j->sample.cpu_seconds = s->cpu_seconds;
    j->sample.memory_bytes = s->memory_bytes;
    if (s->memory_peak_bytes > j->sample.memory_peak_bytes)
        j->sample.memory_peak_bytes = s->memory_peak_bytes;
}

size_t ps_node_jobs_tick(struct ps_node_jobs *t, int64_t now_ms)
{
    size_t finished = 0;
    for (size_t i = 0; i < t->count; i++) {
        struct job *j = t->jobs[i];
        if (j->state != JOB_RUNNING)
            continue;
        struct ps_node_job_sample s = read_sample(t, j, t->runner->ops->tick, now_ms);
        merge_sample(j, &s);
        if (now_ms > j->memory_sampled_ms) {
            j->memory_byte_ms +=
                (double)j->sample.memory_bytes * (double)(now_ms - j->memory_sampled_ms);
            j->memory_sampled_ms = now_ms;
        }
        if (s.finished) {
            reap_job(t, j);
            finished++;
            continue;
        }
        if (j->pending_abort[0]) {
            char reason[sizeof j->pending_abort];
            memcpy(reason, j->pending_abort, sizeof reason);
            ps_node_jobs_abort(t, j->job_id, reason);
        }
        monitor_tick(t, j, now_ms);
    }
    overdraft_check(t);
    adjust_resources(t, now_ms);
    start_waiting(t, now_ms);
    return finished;
}

size_t ps_node_jobs_reap(struct ps_node_jobs *t, int64_t now_ms)
{
    size_t finished = 0;
    for (size_t i = 0; i < t->count; i++) {
        struct job *j = t->jobs[i];
        if (j->state != JOB_RUNNING)
            continue;
        struct ps_node_job_sample s = read_sample(
            t, j, t->runner->ops->reap ? t->runner->ops->reap : t->runner->ops->tick, now_ms);
        if (!s.finished)
            continue;
        merge_sample(j, &s);
        reap_job(t, j);
        finished++;
    }
    if (finished > 0)
        start_waiting(t, now_ms);
    return finished;
}

/* ---- report --------------------------------------------------------------------------- */

/* A running job's statistics so far: its CPU monitor's, once it has measured (the scheduler
 * sums their aggregates per pool, upstream's job metrics). 0, or nonzero when out of memory. */
static int put_monitor_statistics(const struct job *j, json_t *entry)
{
    if (!entry)
        return -1;
    json_t *stats = json_object();
    if (!stats || put_monitor_stats(stats, j) != 0) {
        json_decref(stats);
        return -1;
    }
    if (json_object_size(stats) == 0) {
        json_decref(stats);
        return 0;
    }
    return json_object_set_new(entry, "statistics", stats);
}

static json_t *running_entry(const struct ps_node_jobs *t, const struct job *j)
{
    json_t *e = json_pack("{s:s, s:s, s:f, s:f, s:I}", "job_id", j->job_id, "state", "running",
                          "cpu_guarantee", reported_guarantee(j), "cpu_usage_seconds",
                          j->sample.cpu_seconds, "memory_bytes",
                          (json_int_t)j->sample.memory_bytes);
    if (put_exec_attributes(j, e) != 0 || put_monitor_statistics(j, e) != 0) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* Adds a running job's stderr so far to its entry when it changed since last reported (for
 * get_job_stderr of a running job, as upstream answers it); returns the bytes added. */
static size_t running_stderr(struct ps_node_jobs *t, struct job *j, json_t *entry)
{
    char *data = NULL;
    size_t len = 0;
    bool truncated = false;
    struct ps_error e;
    ps_error_init(&e);
    if (!j->handle || !t->runner->ops->read_stderr ||
        t->runner->ops->read_stderr(j->handle, &data, &len, &truncated, &e) != 0)
        return 0;
    uint64_t h = 1469598103934665603ull;   /* FNV-1a of the text and the truncated flag */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)data[i]) * 1099511628211ull;
    h = (h ^ (truncated ? 1u : 0u)) * 1099511628211ull;
    size_t clean_len = 0;
    char *clean = len == 0 || h == j->stderr_sent_hash ? NULL : utf8_clean(data, len, &clean_len);
    free(data);
    if (!clean)
        return 0;
    if (json_object_set_new(entry, "stderr", json_stringn(clean, clean_len)) != 0 ||
        json_object_set_new(entry, "stderr_truncated", json_boolean(truncated)) != 0)
        clean_len = 0;
    else
        j->stderr_sent_hash = h;
    free(clean);
    return clean_len;
}

json_t *ps_node_jobs_report(struct ps_node_jobs *t, bool *more)
{
    *more = false;
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    /* running jobs' stderr has a quarter of the budget, finished records keep theirs */
    size_t running_used = 0;
    for (size_t i = 0; i < t->count; i++) {
        struct job *j = t->jobs[i];
        if (j->state == JOB_FINISHED)
            continue;   /* a waiting job is reported as running: the scheduler counts it so */
        json_t *entry = running_entry(t, j);
        if (entry && running_used < t->cfg.report_stderr_budget_bytes / 4)
            running_used += running_stderr(t, j, entry);
        if (json_array_append_new(arr, entry) != 0)
            goto fail;
    }
    size_t used = 0, sent = 0;
    for (size_t i = 0; i < t->count; i++) {
        struct job *j = t->jobs[i];
        if (j->state != JOB_FINISHED || !j->record)
            continue;
        if (sent > 0 && used + j->record_stderr_bytes > t->cfg.report_stderr_budget_bytes) {
            *more = true;
            continue;
        }
        if (json_array_append(arr, j->record) != 0)
            goto fail;
        used += j->record_stderr_bytes;
        sent++;
    }
    return arr;
fail:
    json_decref(arr);
    return NULL;
}

size_t ps_node_jobs_running_count(const struct ps_node_jobs *t)
{
    return t->running;
}

size_t ps_node_jobs_finished_count(const struct ps_node_jobs *t)
{
    return t->count - t->running;
}

double ps_node_jobs_cpu_guarantee(const struct ps_node_jobs *t, const char *job_id)
{
    const struct job *j = find(t, job_id);
    if (!j || j->state != JOB_RUNNING)
        return -1;
    return current_guarantee(j);
}
