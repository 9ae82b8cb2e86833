/* service.c — the operation model of the scheduler service (under svc->mu); its jobs: svc_jobs.c. */
#include "server/api_json.h"
#include "server/node_health.h"
#include "server/op_tentative.h"
#include "server/persist.h"
#include "server/pool_gauges.h"
#include "server/sched_host.h"
#include "server/service_state.h"
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
#include "core/sched_inputs.h"
#include "io/json_value.h"
#include "io/jsonval.h"
#include "platform/wall_clock.h"

#define MIB (1024LL * 1024LL)
#define MAX_JOB_COUNT 1000000
#define MAX_TASKS 64

/* A user-given key or name for a message: quoted, escaped and cut short (io/jsonval.h). */
static const char *quoted(char *buf, size_t size, const char *s)
{
    ps_jv_quote(buf, size, s);
    return buf;
}

static bool printable_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

int64_t ps_svc_now_ms(void)
{
    return ps_wall_clock_ms();
}

void ps_svc_log(struct ps_service *svc, const char *level, const char *event, const char *fmt, ...)
{
    if (svc && svc->cfg.quiet)
        return;
    char line[1024];
    int64_t now = ps_wall_clock_ms();
    time_t seconds = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&seconds, &tm);
    int n = snprintf(line, sizeof line, "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ level=%s event=%s",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, (long)(now % 1000), level, event);
    if (fmt && *fmt && n > 0 && (size_t)n < sizeof line - 2) {
        line[n++] = ' ';
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
        va_end(ap);
    }
    fprintf(stderr, "%s\n", line);
}

const char *ps_job_state_name(int state)
{
    switch (state) {
    case PS_JOB_RUNNING: return "running";
    case PS_JOB_COMPLETED: return "completed";
    case PS_JOB_FAILED: return "failed";
    case PS_JOB_ABORTED: return "aborted";
    default: return "unknown";
    }
}

struct ps_svc_tree_state *ps_svc_tree(struct ps_service *svc, const char *name)
{
    for (int i = 0; i < svc->tree_count; i++)
        if (strcmp(svc->trees[i]->name, name) == 0)
            return svc->trees[i];
    return NULL;
}

int ps_svc_add_tree_state(struct ps_service *svc, const char *name, struct ps_error *err)
{
    struct ps_svc_tree_state *t = calloc(1, sizeof *t);
    struct ps_svc_tree_state **arr = realloc(svc->trees, (size_t)(svc->tree_count + 1) * sizeof *arr);
    if (!t || !arr || !(t->name = strdup(name))) {
        free(t ? t->name : NULL);
        free(t);
        if (arr)
            svc->trees = arr;
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    svc->trees = arr;
    int rc = ps_tree_sched_init(&t->sched, err);
    if (rc != 0) {
        free(t->name);
        free(t);
        return rc;
    }
    t->dirty = true;
    svc->trees[svc->tree_count++] = t;
    pthread_cond_broadcast(&svc->loop_cv);
    return 0;
}

void ps_svc_since_moved(struct ps_svc_tree_state *ts, struct ps_svc_op *op)
{
    if (ts->since_moved_count == ts->since_moved_cap) {
        int cap = ts->since_moved_cap ? 2 * ts->since_moved_cap : 64;
        struct ps_svc_op **l = realloc(ts->since_moved, (size_t)cap * sizeof *l);
        if (!l) {
            ts->since_rescan = true;
            return;
        }
        ts->since_moved = l;
        ts->since_moved_cap = cap;
    }
    ts->since_moved[ts->since_moved_count++] = op;
}

void ps_svc_tree_state_free(struct ps_svc_tree_state *t)
{
    free(t->since_moved);
    ps_tree_sched_release(&t->sched);
    ps_persist_cache_free(t->pool_docs);
    ps_svc_gauge_cache_free(t->gauges);
    free(t->name);
    free(t);
}

void ps_svc_remove_tree_state(struct ps_service *svc, const char *name)
{
    for (int i = 0; i < svc->tree_count; i++) {
        if (strcmp(svc->trees[i]->name, name) != 0)
            continue;
        struct ps_svc_tree_state *t = svc->trees[i];
        if (t->updating)
            t->removed = true;   /* its computation runs without svc->mu: the loop frees it */
        else
            ps_svc_tree_state_free(t);
        memmove(&svc->trees[i], &svc->trees[i + 1],
                (size_t)(svc->tree_count - i - 1) * sizeof *svc->trees);
        svc->tree_count--;
        return;
    }
}

struct ps_svc_op *ps_svc_find_op(struct ps_service *svc, const char *id)
{
    return ps_strmap_get(&svc->ops, id);
}

/* ---- spec parsing --------------------------------------------------------------------------- */

static int task_error(struct ps_error *err, const char *task, const char *key, const char *what,
                      const json_t *v)
{
    char buf[96];
    if (v) {
        char *dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(buf, sizeof buf, "%s", dump ? dump : "?");
        free(dump);
    }
    return ps_error_set(err, PS_EINVAL, "spec/tasks/%s/%s: must be %s%s%s", task, key, what,
                        v ? ", got " : "", v ? buf : "");
}

static int get_number(const json_t *obj, const char *task, const char *key, double min, double max,
                      const char *what, double *out, struct ps_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v) || !(json_number_value(v) >= min && json_number_value(v) <= max))
        return task_error(err, task, key, what, v);
    *out = json_number_value(v);
    return 0;
}

static int get_int(const json_t *obj, const char *task, const char *key, int64_t min, int64_t max,
                   const char *what, int64_t *out, struct ps_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return 0;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!json_is_number(v) || x != floor(x) || !(x >= (double)min && x <= (double)max))
        return task_error(err, task, key, what, v);
    *out = (int64_t)x;
    return 0;
}

static void task_release(struct ps_svc_task *t)
{
    free(t->name);
    free(t->command);
    free(t->disk_medium);
    json_decref(t->environment);
    ps_memory_task_release(&t->mem);
    free(t->queue);
    free(t->done);
    free(t->overdraft);
}

static const char *const task_keys[] = {"command", "job_count", "cpu_limit", "gpu_limit",
                                        "memory_limit", "tmpfs_size", "environment", "disk_request",
                                        "port_count",
                                        /* upstream's TUserJobSpec keys the Python client always
                                         * sends; they have no effect on a vanilla job here */
                                        "use_yamr_descriptors", "check_input_fully_consumed",
                                        NULL};

/* Adds value at unrecognized_spec/tasks/<task>[/<sub>]/<key> of op (upstream's
 * unrecognized_spec: the unknown keys at any depth, in the spec's shape). */
static int task_unrecognized(struct ps_svc_op *op, const char *task, const char *sub,
                             const char *key, const json_t *value, struct ps_error *err)
{
    if (!op->unrecognized_spec)
        op->unrecognized_spec = json_object();
    json_t *at = op->unrecognized_spec;
    const char *steps[3] = {"tasks", task, sub};
    for (int i = 0; at && i < 3 && steps[i]; i++) {
        json_t *next = json_object_get(at, steps[i]);
        if (!json_is_object(next)) {
            next = json_object();
            if (json_object_set_new(at, steps[i], next) != 0)
                next = NULL;
        }
        at = next;
    }
    if (!at || json_object_set(at, key, (json_t *)value) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

#define MAX_GPU_LIMIT 1024
#define MAX_DISK_SPACE (1LL << 50)

/* disk_request {disk_space, medium_name} of a vanilla task (upstream's TDiskRequestConfig):
 * disk_space bytes, required; medium_name, default "default". */
static int parse_disk_request(const json_t *t, const char *name, struct ps_svc_op *op,
                              struct ps_svc_task *task, struct ps_error *err)
{
    const json_t *d = json_object_get(t, "disk_request");
    if (!d || json_is_null(d))
        return 0;
    if (!json_is_object(d))
        return task_error(err, name, "disk_request", "a map {disk_space, medium_name}", d);
    const char *k;
    const json_t *kv;
    json_object_foreach((json_t *)d, k, kv) {
        int rc = 0;
        if (strcmp(k, "disk_space") && strcmp(k, "medium_name"))
            rc = task_unrecognized(op, name, "disk_request", k, kv, err);
        if (rc != 0)
            return rc;
    }
    const json_t *space = json_object_get(d, "disk_space");
    if (!json_is_integer(space) || json_integer_value(space) < 1 ||
        json_integer_value(space) > MAX_DISK_SPACE)
        return task_error(err, name, "disk_request/disk_space", "a number of bytes in [1, 2^50]",
                          space);
    const json_t *medium = json_object_get(d, "medium_name");
    if (medium && (!json_is_string(medium) || json_string_length(medium) == 0 ||
                   !printable_name(json_string_value(medium))))
        return task_error(err, name, "disk_request/medium_name", "a non-empty medium name", medium);
    task->disk_space = json_integer_value(space);
    task->disk_medium = strdup(medium ? json_string_value(medium) : "default");
    return task->disk_medium ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

/* Parses spec.tasks and the controller keys into op (tasks, cpu monitor). Nothing is changed in
 * the service. */
static int parse_controller_spec(struct ps_service *svc, const json_t *spec, struct ps_svc_op *op,
                                 struct ps_error *err)
{
    const json_t *tasks = json_object_get(spec, "tasks");
    if (!json_is_object(tasks) || json_object_size(tasks) == 0)
        return ps_error_set(err, PS_EINVAL,
                            "spec/tasks: must be a non-empty map of task name -> {command, job_count, ...}");
    if (json_object_size(tasks) > MAX_TASKS)
        return ps_error_set(err, PS_EINVAL, "spec/tasks: at most %d tasks", MAX_TASKS);

    /* The scheduling and controller keys, through the one schema of op_spec.h (the strategy
     * applies the same spec again for its part). */
    struct ps_operation_spec parsed;
    int rc = ps_operation_spec_from_json(spec, &parsed, &op->unrecognized_spec, err);
    if (rc != 0) {
        ps_error_prefix(err, "operation \"%s\": spec", op->id);
        return rc;
    }
    op->cpu_monitor = parsed.job_cpu_monitor;
    op->max_failed_job_count = parsed.max_failed_job_count.set ? parsed.max_failed_job_count.value
                                                                : svc->cfg.max_failed_job_count;
    op->bans = ps_node_ban_spec_of(&parsed);
    /* memory options of the operation (apply to every task) */
    struct ps_memory_task_spec base;
    ps_memory_task_spec_init(&base);
    ps_memory_task_spec_from_operation(&base, &parsed);
    ps_operation_spec_release(&parsed);
    char q[96];

    op->task_count = 0;
    op->tasks = calloc(json_object_size(tasks), sizeof *op->tasks);
    if (!op->tasks)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    const char *name;
    const json_t *t;
    json_object_foreach((json_t *)tasks, name, t) {
        struct ps_svc_task *task = &op->tasks[op->task_count];
        /* Task names appear in later messages, paths and the environment of jobs: printable
         * only, so every message stays one line. */
        if (!printable_name(name))
            return ps_error_set(err, PS_EINVAL, "spec/tasks: task name %s must be non-empty, without "
                                "control characters", quoted(q, sizeof q, name));
        if (!json_is_object(t))
            return ps_error_set(err, PS_EINVAL, "spec/tasks/%s: must be a map", name);
        const char *k;
        const json_t *kv;
        json_object_foreach((json_t *)t, k, kv) {
            bool known = false;
            for (int i = 0; task_keys[i]; i++)
                known |= strcmp(task_keys[i], k) == 0;
            /* as upstream: reported in the unrecognized_spec alert, the operation runs */
            if (!known && (rc = task_unrecognized(op, name, NULL, k, kv, err)) != 0)
                return rc;
        }
        const json_t *cmd = json_object_get(t, "command");
        if (!json_is_string(cmd) || json_string_length(cmd) == 0)
            return task_error(err, name, "command", "a non-empty string", cmd);
        task->job_count = 1;
        task->cpu_limit = 1;
        task->gpu_limit = 0;
        task->memory_limit = 512 * MIB;
        task->tmpfs_size = 0;
        task->port_count = 0;
        rc = 0;
        if (!json_object_get(t, "job_count"))
            return task_error(err, name, "job_count", "an integer in [1, 1000000]", NULL);
        if ((rc = get_int(t, name, "job_count", 1, MAX_JOB_COUNT, "an integer in [1, 1000000]",
                          &task->job_count, err)) ||
            (rc = get_number(t, name, "cpu_limit", 0.01, 1024, "a number of cores in [0.01, 1024]",
                             &task->cpu_limit, err)) ||
            (rc = get_int(t, name, "gpu_limit", 0, MAX_GPU_LIMIT, "an integer in [0, 1024]",
                          &task->gpu_limit, err)) ||
            (rc = get_int(t, name, "memory_limit", 1, 16LL * 1024 * 1024 * MIB,
                          "a number of bytes in [1, 16 TiB]", &task->memory_limit, err)) ||
            (rc = get_int(t, name, "tmpfs_size", 0, task->memory_limit,
                          "a number of bytes in [0, memory_limit]", &task->tmpfs_size, err)) ||
            (rc = get_int(t, name, "port_count", 0, 50, "an integer in [0, 50]",
                          &task->port_count, err)))
            return rc;
        task->cpu_limit = ps_cpu_round(task->cpu_limit);
        if ((rc = parse_disk_request(t, name, op, task, err)) != 0)
            return rc;
        const json_t *env = json_object_get(t, "environment");
        if (env && !json_is_null(env)) {
            if (!json_is_object(env))
                return task_error(err, name, "environment", "a map of strings", env);
            const char *ek;
            const json_t *ev;
            json_object_foreach((json_t *)env, ek, ev) if (!json_is_string(ev))
                return task_error(err, name, "environment", "a map of strings", env);
            task->environment = json_deep_copy(env);
        } else {
            task->environment = json_object();
        }
        task->name = strdup(name);
        task->command = strdup(json_string_value(cmd));
        op->task_count++;
        if (!task->name || !task->command || !task->environment)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        struct ps_memory_task_spec ms = base;
        ms.memory_limit_bytes = task->memory_limit;
        ms.tmpfs_size_bytes = task->tmpfs_size;
        if ((rc = ps_memory_task_init(&task->mem, &svc->cfg.controller_agent, &ms, err)) != 0) {
            ps_error_prefix(err, "spec/tasks/%s", name);
            return rc;
        }
        ps_svc_task_reshape(task);
        size_t n = (size_t)task->job_count;
        task->queue = malloc(n * sizeof *task->queue);
        task->done = calloc(n, 1);
        task->overdraft = malloc(n * sizeof *task->overdraft);
        if (!task->queue || !task->done || !task->overdraft)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            task->queue[i] = (int64_t)i;
            ps_memory_overdraft_state_init(&task->overdraft[i]);
        }
        task->q_head = 0;
        task->q_len = (int64_t)n;
    }
    return 0;
}

static json_t *resulting_spec(struct ps_service *svc, const json_t *spec, struct ps_svc_op *op)
{
    json_t *r = json_deep_copy(spec);
    if (!r)
        return NULL;
    struct ps_value sv = ps_value_null();
    if (op->sop && ps_operation_spec_to_value(&op->sop->spec, &sv) == 0) {
        json_t *sj = ps_value_to_json(&sv);
        if (sj)
            json_object_update(r, sj);
        json_decref(sj);
    }
    ps_value_release(&sv);
    json_t *tasks = json_object();
    for (int i = 0; i < op->task_count; i++) {
        const struct ps_svc_task *t = &op->tasks[i];
        json_object_set_new(tasks, t->name,
                            json_pack("{s:s, s:I, s:f, s:I, s:I, s:I, s:O}", "command",
                                      t->command, "job_count", (json_int_t)t->job_count,
                                      "cpu_limit", t->cpu_limit, "gpu_limit",
                                      (json_int_t)t->gpu_limit, "memory_limit",
                                      (json_int_t)t->memory_limit,
                                      "tmpfs_size", (json_int_t)t->tmpfs_size, "environment",
                                      t->environment));
        if (t->port_count > 0)
            json_object_set_new(json_object_get(tasks, t->name), "port_count",
                                json_integer(t->port_count));
        if (t->disk_medium)
            json_object_set_new(json_object_get(tasks, t->name), "disk_request",
                                json_pack("{s:I, s:s}", "disk_space", (json_int_t)t->disk_space,
                                          "medium_name", t->disk_medium));
    }
    json_object_set_new(r, "tasks", tasks);
    struct ps_value cmv;
    json_t *cm = NULL;
    if (ps_attr_to_value(&ps_cpu_monitor_config_table, &op->cpu_monitor, &cmv) == 0) {
        cm = ps_value_to_json(&cmv);
        ps_value_release(&cmv);
    }
    if (!cm) {
        json_decref(r);
        return NULL;
    }
    json_decref(op->cpu_monitor_json);
    op->cpu_monitor_json = json_incref(cm);
    json_object_set_new(r, "job_cpu_monitor", cm);
    if (op->task_count > 0) {
        const struct ps_memory_task *m = &op->tasks[0].mem;
        json_object_set_new(r, "user_job_memory_digest_default_value",
                            json_real(m->user_job_digest_default_value));
        json_object_set_new(r, "user_job_memory_digest_lower_bound",
                            json_real(m->user_job_digest_lower_bound));
    }
    json_object_set_new(r, "max_failed_job_count", json_integer(op->max_failed_job_count));
    json_object_set_new(r, "ban_nodes_with_failed_jobs",
                        json_boolean(op->bans.ban_nodes_with_failed_jobs));
    json_object_set_new(r, "ignore_job_failures_at_banned_nodes",
                        json_boolean(op->bans.ignore_job_failures_at_banned_nodes));
    json_object_set_new(r, "fail_on_all_nodes_banned", json_boolean(op->bans.fail_on_all_nodes_banned));
    return r;
}

void ps_svc_op_free(struct ps_svc_op *op)
{
    if (!op)
        return;
    for (int i = 0; i < op->task_count; i++)
        task_release(&op->tasks[i]);
    free(op->tasks);
    for (int i = 0; i < op->tree_count; i++)
        ps_preemptible_free(op->trees[i].lists);
    free(op->trees);
    json_decref(op->spec);
    json_decref(op->erased_trees);
    if (op->tentative)
        ps_tentative_state_release(op->tentative);
    free(op->tentative);
    json_decref(op->resulting_spec);
    json_decref(op->cpu_monitor_json);
    json_decref(op->unrecognized_spec);
    json_decref(op->pool_per_tree);
    json_decref(op->banned_nodes);
    json_decref(op->parameters);
    json_decref(op->runtime_options);
    free(op->state);
    free(op->error);
    free(op->user);
    free(op->id);
    free(op);
}

void ps_svc_set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = s ? strdup(s) : NULL;
}

void ps_svc_op_refresh_state(struct ps_svc_op *op)
{
    if (op->finished || !op->sop)
        return;
    ps_svc_set_str(&op->state, ps_operation_state_name(op->sop->state));
}

void ps_svc_log_activated(struct ps_service *svc)
{
    for (int i = 0; i < ps_strategy_activated_count(svc->strategy); i++) {
        struct ps_operation *a = ps_strategy_activated(svc->strategy, i);
        struct ps_svc_op *o = ps_svc_find_op(svc, a->id);
        if (o) {
            ps_svc_op_refresh_state(o);
            ps_persist_op(svc, o);   /* running now: a restart keeps it running */
            ps_svc_log(svc, "info", "operation_running", "id=%s", a->id);
        }
    }
}

void ps_svc_op_update_pools(struct ps_svc_op *op)
{
    if (!op->sop)
        return;
    json_t *m = json_object(), *rt = json_object();
    for (int i = 0; m && rt && i < op->sop->tree_count; i++) {
        struct ps_tree_op *to = op->sop->memberships ? op->sop->memberships[i] : NULL;
        if (!to || !to->pool)
            continue;
        json_object_set_new(m, op->sop->tree_names[i], json_string(to->pool->name));
        /* upstream's per-tree runtime parameters: weight only when specified (Optional) */
        json_t *o = json_pack("{s:s, s:o}", "pool", to->pool->name, "resource_limits",
                              ps_api_resources_json(&to->resource_limits));
        if (o && to->weight_specified)
            json_object_set_new(o, "weight", json_real(to->weight));
        json_object_set_new(rt, op->sop->tree_names[i], o);
    }
    if (m && rt && json_object_size(m) > 0) {
        json_decref(op->pool_per_tree);
        op->pool_per_tree = m;
        json_decref(op->runtime_options);
        op->runtime_options = rt;
    } else {
        json_decref(m);
        json_decref(rt);
    }
}

static void bind_memberships(struct ps_svc_op *op)
{
    if (op->sop)
        op->sop->host = op;
}

/* ps_strategy_restore_fn over a stored operation document. */
static void restore_from_doc(void *ctx, const char *tree, struct ps_tree_op_restore *r)
{
    const json_t *doc = ctx;
    r->pool = json_string_value(json_object_get(json_object_get(doc, "pool_per_tree"), tree));
    r->running = json_is_true(json_object_get(json_object_get(doc, "running_per_tree"), tree));
}

int ps_svc_op_create(struct ps_service *svc, const char *id, const char *user, int64_t start_ms,
                     const json_t *spec, bool in_strategy, const json_t *restore,
                     struct ps_svc_op **out, struct ps_error *err)
{
    if (!json_is_object(spec))
        return ps_error_set(err, PS_EINVAL, "spec: must be a map");
    if (ps_svc_find_op(svc, id))
        return ps_error_set(err, PS_EEXIST, "operation \"%s\" already exists", id);
    struct ps_svc_op *op = calloc(1, sizeof *op);
    if (!op)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    op->id = strdup(id);
    op->user = strdup(user);
    op->spec = json_deep_copy(spec);
    op->start_ms = start_ms;
    op->finish_ms = -1;
    op->shape_task = -1;
    int rc = 0;
    if (!op->id || !op->user || !op->spec) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = parse_controller_spec(svc, spec, op, err)) != 0)
        goto fail;
    if (in_strategy) {
        struct ps_value sv;
        json_t *sspec = NULL;   /* without the erased trees (schedule_in_single_tree) */
        if ((rc = ps_svc_op_trees(svc, op, spec, restore, &sspec, err)) != 0)
            goto fail;
        rc = ps_json_to_value(sspec, &sv, err);
        json_decref(sspec);
        if (rc != 0)
            goto fail;
        /* The strategy ignores the controller's keys (tasks, job_cpu_monitor, ...). */
        rc = restore ? ps_strategy_restore_operation(svc->strategy, id, user, start_ms, &sv,
                                                     restore_from_doc, (void *)restore, &op->sop,
                                                     err)
                     : ps_strategy_start_operation(svc->strategy, id, user, start_ms, &sv,
                                                   &op->sop, err);
        ps_value_release(&sv);
        if (rc != 0)
            goto fail;
    }
    op->tree_count = op->sop ? op->sop->tree_count : 0;
    op->trees = calloc((size_t)op->tree_count, sizeof *op->trees);
    if (!op->trees) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto fail_started;
    }
    for (int i = 0; i < op->tree_count; i++) {
        struct ps_preemptible_config pc;
        ps_preemptible_config_init(&pc);
        op->trees[i].element = -1;
        op->trees[i].lists = ps_preemptible_new(&pc);
        if (!op->trees[i].lists) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
            goto fail_started;
        }
    }
    bind_memberships(op);
    ps_svc_op_update_pools(op);
    op->resulting_spec = resulting_spec(svc, spec, op);
    if (!op->resulting_spec || ps_strmap_put(&svc->ops, op->id, op) != 0) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto fail_started;
    }
    if (svc->op_count == svc->op_cap) {
        int cap = svc->op_cap ? 2 * svc->op_cap : 64;
        struct ps_svc_op **l = realloc(svc->op_list, (size_t)cap * sizeof *l);
        if (!l) {
            ps_strmap_remove(&svc->ops, op->id);
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
            goto fail_started;
        }
        svc->op_list = l;
        svc->op_cap = cap;
    }
    op->seq = ++svc->op_seq;
    svc->op_list[svc->op_count++] = op;
    ps_svc_op_refresh_state(op);
    op->shape_task = -1;
    ps_svc_op_update_shape(svc, op);
    for (int i = 0; i < op->tree_count; i++) {
        struct ps_svc_tree_state *ts = ps_svc_tree(svc, op->sop->tree_names[i]);
        if (ts)
            ts->dirty = true;
    }
    pthread_cond_broadcast(&svc->loop_cv);
    *out = op;
    return 0;
fail_started:
    if (op->sop) {
        ps_strategy_finish_operation(svc->strategy, id, PS_OP_ABORTED, start_ms, NULL);
        ps_strategy_forget_operation(svc->strategy, id, NULL);
    }
fail:
    op->sop = NULL;
    ps_svc_op_free(op);
    return rc;
}

int64_t ps_svc_op_pending(const struct ps_svc_op *op)
{
    int64_t n = 0;
    for (int i = 0; i < op->task_count; i++)
        n += op->tasks[i].q_len;
    return n;
}

struct ps_resources ps_svc_task_shape(const struct ps_svc_task *t)
{
    return t->shape;
}

/* A new job's resources from the task as it is now: a slot, its cpu_limit, its gpu_limit and
 * the memory its reserve asks (memory_reserve.c). */
static struct ps_resources compute_shape(const struct ps_svc_task *t)
{
    struct ps_memory_job mj;
    ps_memory_task_reserve(&t->mem, NULL, &mj);
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_USER_SLOTS] = 1;
    r.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, t->cpu_limit);
    r.v[PS_RES_GPU] = t->gpu_limit;
    r.v[PS_RES_MEMORY] = mj.memory_bytes;
    return r;
}

void ps_svc_task_reshape(struct ps_svc_task *t)
{
    t->shape = compute_shape(t);
}

static bool op_runnable(const struct ps_svc_op *op)
{
    return !op->finished && op->sop && op->sop->state == PS_OP_RUNNING && !op->suspended;
}

static int64_t task_pending(const void *ctx, int i)
{
    return ((const struct ps_svc_op *)ctx)->tasks[i].q_len;
}

static const char *task_disk_request(const void *ctx, int i, int64_t *space)
{
    const struct ps_svc_task *t = &((const struct ps_svc_op *)ctx)->tasks[i];
    *space = t->disk_space;
    return t->disk_medium;
}

static struct ps_sched_tasks sched_tasks(const struct ps_svc_op *op)
{
    return (struct ps_sched_tasks){op, op->task_count, task_pending, task_disk_request};
}

/* filter: the operation's effective filter in the tree's current build (its own and its
 * pools'), which tree_sched keeps alive with the snapshot (struct ps_tree_sched.sched_ops). */
static void fill_sched_state(const struct ps_svc_op *op, const struct ps_formula *filter,
                             struct ps_sched_operation *st)
{
    memset(st, 0, sizeof *st);
    st->filter = filter;
    st->allocation.v[PS_RES_USER_SLOTS] = 1;
    st->runnable = op_runnable(op);
    if (op->shape_task >= 0) {
        st->allocation = ps_svc_task_shape(&op->tasks[op->shape_task]);
        st->pending_count = op->tasks[op->shape_task].q_len;
    }
    struct ps_sched_tasks tasks = sched_tasks(op);
    ps_sched_disk_request(&tasks, op->shape_task, &st->disk_medium, &st->disk_space);
}

/* Picks the task whose allocations the snapshots offer (core/sched_inputs.h), sets the
 * engine's inputs (ps_svc_op_push_inputs) and tells every tree's snapshot. */
void ps_svc_op_update_shape(struct ps_service *svc, struct ps_svc_op *op)
{
    struct ps_sched_tasks tasks = sched_tasks(op);
    op->shape_task = ps_sched_offered_task(&tasks);
    ps_svc_op_push_inputs(op);
    for (int i = 0; i < op->tree_count; i++) {
        struct ps_svc_op_tree *t = &op->trees[i];
        if (t->element < 0 || !op->sop)
            continue;
        struct ps_svc_tree_state *ts = ps_svc_tree(svc, op->sop->tree_names[i]);
        if (!ts || !ts->sched.snap)
            continue;
        struct ps_sched_operation st;
        fill_sched_state(op, ts->sched.sched_ops[t->element].filter, &st);
        st.pending_count = ps_svc_tentative_pending(op, i, st.pending_count);
        /* computed by the loop at the update from the pools */
        st.regular_on_ssd_forbidden = ts->sched.sched_ops[t->element].regular_on_ssd_forbidden;
        ps_sched_set_operation(ts->sched.snap, t->element, &st, NULL);
    }
}

void ps_svc_op_detach(struct ps_service *svc, struct ps_svc_op *op)
{
    for (int i = 0; i < op->tree_count; i++) {
        struct ps_svc_op_tree *t = &op->trees[i];
        if (t->element >= 0 && op->sop) {
            struct ps_svc_tree_state *ts = ps_svc_tree(svc, op->sop->tree_names[i]);
            if (ts)
                ps_tree_sched_detach(&ts->sched, t->element);
        }
        t->element = -1;
    }
}

int ps_svc_op_tree_slot(const struct ps_svc_op *op, const char *tree)
{
    if (!op->sop)
        return -1;
    for (int i = 0; i < op->sop->tree_count; i++)
        if (strcmp(op->sop->tree_names[i], tree) == 0)
            return i;
    return -1;
}

/* ps_svc_op_tree_slot for an operation known to be a member of tree. Both loops below run over
 * every operation under the service lock at each update: an operation in one tree (nearly all)
 * needs no name comparison, which would read three more scattered blocks. */
static int member_slot(const struct ps_svc_op *op, const char *tree)
{
    return op->tree_count == 1 ? 0 : ps_svc_op_tree_slot(op, tree);
}

struct ps_preemptible *ps_svc_sched_op_fn(void *ctx, struct ps_tree_op *tree_op, int element,
                                          struct ps_sched_operation *sched,
                                          struct ps_preempt_operation *preempt)
{
    (void)ctx;
    struct ps_svc_op *op = ps_tree_op_host(tree_op);
    if (!op || !op->sop)
        return NULL;
    int i = member_slot(op, ps_pool_tree_name(tree_op->tree));
    if (i < 0)
        return NULL;
    op->trees[i].element = element;
    fill_sched_state(op, sched->filter, sched);
    sched->pending_count = ps_svc_tentative_pending(op, i, sched->pending_count);
    preempt->lists = op->trees[i].lists;
    ps_operation_spec_preempt_settings(&op->sop->spec, &preempt->graceful,
                                       &preempt->max_unpreemptible_running_allocation_count);
    return op->trees[i].lists;
}

void ps_svc_forget_elements(struct ps_service *svc, struct ps_pool_tree *tree)
{
    (void)svc;
    const char *name = ps_pool_tree_name(tree);
    for (int k = 0; k < ps_pool_tree_operation_count(tree); k++) {
        struct ps_svc_op *op = ps_tree_op_host(ps_pool_tree_operation_at(tree, k));
        int i = op ? member_slot(op, name) : -1;
        if (i >= 0)
            op->trees[i].element = -1;
    }
}

/* Writes the engine's inputs of op in membership slot i into out: usage, demand (usage and
 * every pending job at its task's current shape, core/sched_inputs.h), pending jobs, suspended. */
static void engine_inputs(const struct ps_svc_op *op, int i, struct ps_tree_op *out)
{
    out->usage = op->trees[i].usage;
    out->demand = op->trees[i].usage;
    int64_t pending = 0;
    for (int j = 0; j < op->task_count; j++) {
        int64_t q = op->tasks[j].q_len;
        if (q == 0)
            continue;
        out->demand = ps_demand_add_pending(out->demand, ps_svc_task_shape(&op->tasks[j]), q);
        pending += q;
    }
    out->pending_job_count = pending;
    out->suspended = op->suspended;
}

void ps_svc_op_push_inputs(struct ps_svc_op *op)
{
    if (!op->sop || !op->sop->memberships)
        return;
    for (int i = 0; i < op->sop->tree_count && i < op->tree_count; i++)
        if (op->sop->memberships[i])
            engine_inputs(op, i, op->sop->memberships[i]);
}

int ps_svc_check_engine_inputs(struct ps_service *svc, struct ps_pool_tree *tree, char *what,
                               size_t size)
{
    (void)svc;
    const char *name = ps_pool_tree_name(tree);
    for (int k = 0; k < ps_pool_tree_operation_count(tree); k++) {
        struct ps_tree_op *to = ps_pool_tree_operation_at(tree, k);
        struct ps_svc_op *op = ps_tree_op_host(to);
        int i = op ? member_slot(op, name) : -1;
        if (i < 0)
            continue;
        for (int j = 0; j < op->task_count; j++)
            if (op->tasks[j].q_len > 0 &&
                !ps_resources_equal(op->tasks[j].shape, compute_shape(&op->tasks[j]))) {
                snprintf(what, size, "operation %s task %s: its shape is stale", op->id,
                         op->tasks[j].name);
                return -1;
            }
        struct ps_tree_op want;
        engine_inputs(op, i, &want);
        const char *field = to->pending_job_count != want.pending_job_count ? "pending_job_count"
                            : to->suspended != want.suspended               ? "suspended"
                            : !ps_resources_equal(to->usage, want.usage)    ? "usage"
                            : !ps_resources_equal(to->demand, want.demand)  ? "demand"
                                                                            : NULL;
        if (field) {
            snprintf(what, size, "operation %s in tree %s: %s is stale", op->id, name, field);
            return -1;
        }
    }
    return 0;
}
