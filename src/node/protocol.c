#include "node/protocol.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_value.h"
#include "io/jsonval.h"
#include "node/devices.h"

/* Bounds on what a reply may ask for; far above anything sane, below anything harmful. */
#define MAX_CPU_CORES 100000.0
#define MAX_BYTES (INT64_C(1) << 50)    /* 1 PiB */
#define MAX_TIMEOUT_MS INT64_C(86400000)
#define MAX_ENV_ENTRIES 4096

json_t *ps_node_request_build(const struct ps_node_identity *id, json_t *jobs)
{
    if (!jobs)
        jobs = json_array();
    json_t *tags = json_array();
    json_t *limits = json_object();
    json_t *req = json_object();
    if (!jobs || !tags || !limits || !req)
        goto fail;
    for (size_t i = 0; i < id->tag_count; i++)
        if (json_array_append_new(tags, json_string(id->tags[i])) != 0)
            goto fail;
    if (json_object_set_new(limits, "cpu", json_real(id->cpu)) != 0 ||
        json_object_set_new(limits, "memory", json_integer(id->memory_bytes)) != 0 ||
        json_object_set_new(limits, "user_slots", json_integer(id->user_slots)) != 0 ||
        (id->gpu > 0 && json_object_set_new(limits, "gpu", json_integer(id->gpu)) != 0))
        goto fail;
    if (json_object_set_new(req, "node_id", json_string(id->node_id)) != 0)
        goto fail;
    if (id->cpu_to_vcpu_factor != 0 && id->cpu_to_vcpu_factor != 1.0 &&
        json_object_set_new(req, "cpu_to_vcpu_factor", json_real(id->cpu_to_vcpu_factor)) != 0)
        goto fail;
    if (id->dynamic_config_version > 0 &&
        json_object_set_new(req, "dynamic_config_version",
                            json_integer(id->dynamic_config_version)) != 0)
        goto fail;
    if (id->instance_id &&
        json_object_set_new(req, "instance_id", json_string(id->instance_id)) != 0)
        goto fail;
    if (id->media && json_object_set_new(req, "disk_space_per_medium",
                                         json_deep_copy(id->media)) != 0)
        goto fail;
    int rc = json_object_set_new(req, "tags", tags);
    tags = NULL;
    rc |= json_object_set_new(req, "resource_limits", limits);
    limits = NULL;
    rc |= json_object_set_new(req, "jobs", jobs);
    jobs = NULL;
    if (rc != 0)
        goto fail;
    return req;
fail:
    json_decref(jobs);
    json_decref(tags);
    json_decref(limits);
    json_decref(req);
    return NULL;
}

/* ---- reply ---------------------------------------------------------------------------- */

static int bad(struct ps_error *err, const char *where, const json_t *v, const char *what)
{
    char shown[96];
    if (v)
        ps_jv_describe(v, shown, sizeof shown);
    else
        snprintf(shown, sizeof shown, "nothing");
    return ps_error_set(err, PS_EINVAL, "%s: must be %s, got %s", where, what, shown);
}

/* A required string member. */
static int need_string(const json_t *obj, const char *path, const char *key, const char **out,
                       struct ps_error *err)
{
    bool present = false;
    int rc = ps_jv_string(obj, path, key, out, &present, err);
    if (rc)
        return rc;
    if (!present) {
        char where[256];
        ps_jv_join(where, sizeof where, path, key);
        return bad(err, where, NULL, "a string");
    }
    return 0;
}

static int need_id(const json_t *obj, const char *path, const char *key, const char **out,
                   struct ps_error *err)
{
    int rc = need_string(obj, path, key, out, err);
    if (rc)
        return rc;
    if (!ps_node_id_valid(*out, PS_NODE_JOB_ID_MAX)) {
        char where[256];
        ps_jv_join(where, sizeof where, path, key);
        return bad(err, where, json_object_get(obj, key), "1..128 of [A-Za-z0-9._-]");
    }
    return 0;
}

int ps_node_cpu_monitor_config_parse(const json_t *obj, const char *path,
                                     struct ps_cpu_monitor_config *cfg, struct ps_error *err)
{
    ps_cpu_monitor_config_init(cfg);
    if (!obj)
        return 0;
    int rc = ps_jv_expect_object(obj, path, err);
    if (rc)
        return rc;
    struct ps_cpu_monitor_config parsed;
    ps_cpu_monitor_config_init(&parsed);
    rc = ps_attr_apply_json(&ps_cpu_monitor_config_table, &parsed, obj, err);
    if (rc == 0)
        rc = ps_cpu_monitor_config_validate(&parsed, err);
    if (rc != 0) {
        ps_error_prefix(err, "%s", path);
        return rc;
    }
    *cfg = parsed;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int parse_env(const json_t *obj, const char *path, char ***out, struct ps_error *err)
{
    *out = NULL;
    size_t n = obj ? json_object_size(obj) : 0;
    if (obj) {
        int rc = ps_jv_expect_object(obj, path, err);
        if (rc)
            return rc;
        if (n > MAX_ENV_ENTRIES)
            return ps_error_set(err, PS_EINVAL, "%s: more than %d variables", path,
                                MAX_ENV_ENTRIES);
    }
    char **env = calloc(n + 1, sizeof *env);
    if (!env)
        return ps_error_set(err, PS_ENOMEM, "out of memory for a job environment");
    size_t i = 0;
    const char *key;
    json_t *v;
    if (obj) {
        json_object_foreach((json_t *)obj, key, v) {
            char where[256];
            ps_jv_join(where, sizeof where, path, key);
            if (key[0] == '\0' || strchr(key, '=')) {
                ps_node_env_free(env);
                return ps_error_set(err, PS_EINVAL, "%s: a variable name must be non-empty "
                                    "and without '='", where);
            }
            if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
                ps_node_env_free(env);
                return bad(err, where, v, "a string without NUL bytes");
            }
            size_t len = strlen(key) + 1 + json_string_length(v) + 1;
            env[i] = malloc(len);
            if (!env[i]) {
                ps_node_env_free(env);
                return ps_error_set(err, PS_ENOMEM, "out of memory for a job environment");
            }
            snprintf(env[i], len, "%s=%s", key, json_string_value(v));
            i++;
        }
    }
    /* jansson's object order is not the document's; sorting makes the child's environment
     * deterministic. */
    qsort(env, i, sizeof *env, cmp_str);
    *out = env;
    return 0;
}

static int parse_start(const json_t *o, const char *path, struct ps_node_start *s,
                       struct ps_error *err)
{
    int rc = ps_jv_expect_object(o, path, err);
    if (rc)
        return rc;
    bool present;
    if ((rc = need_id(o, path, "job_id", &s->job_id, err)) ||
        (rc = need_string(o, path, "operation_id", &s->operation_id, err)) ||
        (rc = need_string(o, path, "task_name", &s->task_name, err)) ||
        (rc = need_string(o, path, "command", &s->command, err)))
        return rc;
    if (strlen(s->command) != json_string_length(json_object_get(o, "command"))) {
        char where[256];
        ps_jv_join(where, sizeof where, path, "command");
        return ps_error_set(err, PS_EINVAL, "%s: must not contain NUL bytes", where);
    }
    s->job_index = 0;
    if ((rc = ps_jv_int(o, path, "job_index", 0, INT32_MAX, "an integer >= 0", &s->job_index,
                        NULL, err)))
        return rc;
    s->cpu_limit = 1.0;
    if ((rc = ps_jv_double(o, path, "cpu_limit", 0, MAX_CPU_CORES, "a number of cores >= 0",
                           &s->cpu_limit, NULL, err)))
        return rc;
    s->cpu_guarantee = s->cpu_limit;
    if ((rc = ps_jv_double(o, path, "cpu_guarantee", 0, MAX_CPU_CORES,
                           "a number of cores >= 0", &s->cpu_guarantee, &present, err)))
        return rc;
    s->memory_limit_bytes = 0;
    s->memory_reserve_bytes = 0;
    s->tmpfs_size_bytes = 0;
    if ((rc = ps_jv_int(o, path, "memory_limit", 0, MAX_BYTES, "bytes >= 0",
                        &s->memory_limit_bytes, NULL, err)) ||
        (rc = ps_jv_int(o, path, "memory_reserve", 0, MAX_BYTES, "bytes >= 0",
                        &s->memory_reserve_bytes, NULL, err)) ||
        (rc = ps_jv_int(o, path, "tmpfs_size", 0, MAX_BYTES, "bytes >= 0",
                        &s->tmpfs_size_bytes, NULL, err)))
        return rc;
    s->gpu_limit = 0;
    s->port_count = 0;
    if ((rc = ps_jv_int(o, path, "gpu_limit", 0, PS_NODE_MAX_GPUS, "an integer from 0 to 64",
                        &s->gpu_limit, NULL, err)) ||
        (rc = ps_jv_int(o, path, "port_count", 0, PS_NODE_MAX_JOB_PORTS,
                        "an integer from 0 to 50", &s->port_count, NULL, err)))
        return rc;
    s->waiting_job_timeout_ms = -1;
    if ((rc = ps_jv_int(o, path, "waiting_job_timeout", 0, INT32_MAX, "milliseconds >= 0",
                        &s->waiting_job_timeout_ms, NULL, err)))
        return rc;
    char where[256];
    ps_jv_join(where, sizeof where, path, "environment");
    const json_t *env = json_object_get(o, "environment");
    if (json_is_null(env))
        env = NULL;
    if ((rc = parse_env(env, where, &s->environment, err)))
        return rc;
    ps_jv_join(where, sizeof where, path, "job_cpu_monitor");
    const json_t *mon = json_object_get(o, "job_cpu_monitor");
    if (json_is_null(mon))
        mon = NULL;
    if ((rc = ps_node_cpu_monitor_config_parse(mon, where, &s->cpu_monitor, err))) {
        ps_node_env_free(s->environment);
        s->environment = NULL;
        return rc;
    }
    return 0;
}

/* The array at key, or NULL when absent or null. */
static int get_array(const json_t *doc, const char *key, const json_t **out, size_t max,
                     struct ps_error *err)
{
    *out = json_object_get(doc, key);
    if (!*out || json_is_null(*out)) {
        *out = NULL;
        return 0;
    }
    int rc = ps_jv_expect_array(*out, key, err);
    if (rc)
        return rc;
    if (json_array_size(*out) > max)
        return ps_error_set(err, PS_EINVAL, "%s: more than %zu entries", key, max);
    return 0;
}

#define MAX_ENTRIES 100000

int ps_node_reply_parse(json_t *doc, struct ps_node_reply *out, struct ps_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = ps_jv_expect_object(doc, "", err);
    if (rc)
        return rc;
    struct ps_node_reply r;
    memset(&r, 0, sizeof r);
    if ((rc = ps_jv_int(doc, "", "heartbeat_period_ms", PS_NODE_MIN_HEARTBEAT_PERIOD_MS,
                        PS_NODE_MAX_HEARTBEAT_PERIOD_MS, "milliseconds from 10 to 3600000",
                        &r.heartbeat_period_ms, &r.has_heartbeat_period, err)))
        return rc;
    if ((rc = ps_jv_int(doc, "", "node_offline_timeout_ms", 1, MAX_TIMEOUT_MS,
                        "milliseconds from 1 to 86400000", &r.node_offline_timeout_ms,
                        &r.has_offline_timeout, err)))
        return rc;
    if ((rc = ps_jv_int(doc, "", "wait_ms", 0, PS_NODE_MAX_HEARTBEAT_PERIOD_MS,
                        "milliseconds from 0 to 3600000", &r.wait_ms, &r.long_poll, err)))
        return rc;
    if ((rc = ps_jv_int(doc, "", "scheduler_epoch", 1, INT64_MAX, "an integer >= 1", &r.epoch,
                        &r.has_epoch, err)))
        return rc;
    if ((rc = ps_jv_int(doc, "", "reply_seq", 0, INT64_MAX, "an integer >= 0", &r.reply_seq,
                        &r.has_reply_seq, err)))
        return rc;
    bool has_dyncfg_version = false;
    if ((rc = ps_jv_int(doc, "", "dynamic_config_version", 0, INT64_MAX, "an integer >= 0",
                        &r.dynamic_config_version, &has_dyncfg_version, err)))
        return rc;
    r.dynamic_config = json_object_get(doc, "dynamic_config");
    if (r.dynamic_config && (!json_is_object(r.dynamic_config) || !has_dyncfg_version))
        return bad(err, "dynamic_config", r.dynamic_config,
                   "a map, with dynamic_config_version");

    const json_t *starts, *interrupts, *aborts, *acks;
    if ((rc = get_array(doc, "jobs_to_start", &starts, MAX_ENTRIES, err)) ||
        (rc = get_array(doc, "jobs_to_interrupt", &interrupts, MAX_ENTRIES, err)) ||
        (rc = get_array(doc, "jobs_to_abort", &aborts, MAX_ENTRIES, err)) ||
        (rc = get_array(doc, "acknowledged", &acks, MAX_ENTRIES, err)))
        return rc;

    size_t ns = starts ? json_array_size(starts) : 0;
    size_t ni = interrupts ? json_array_size(interrupts) : 0;
    size_t na = aborts ? json_array_size(aborts) : 0;
    size_t nk = acks ? json_array_size(acks) : 0;
    r.starts = calloc(ns ? ns : 1, sizeof *r.starts);
    r.interrupts = calloc(ni ? ni : 1, sizeof *r.interrupts);
    r.aborts = calloc(na ? na : 1, sizeof *r.aborts);
    r.acknowledged = calloc(nk ? nk : 1, sizeof *r.acknowledged);
    if (!r.starts || !r.interrupts || !r.aborts || !r.acknowledged) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory for a heartbeat reply");
        goto fail;
    }
    char path[64];
    for (size_t i = 0; i < ns; i++) {
        ps_jv_index(path, sizeof path, "jobs_to_start", i);
        if ((rc = parse_start(json_array_get(starts, i), path, &r.starts[i], err)))
            goto fail;
        r.start_count++;
    }
    for (size_t i = 0; i < ni; i++) {
        const json_t *o = json_array_get(interrupts, i);
        struct ps_node_interrupt *x = &r.interrupts[i];
        ps_jv_index(path, sizeof path, "jobs_to_interrupt", i);
        x->reason = "preemption";
        x->timeout_ms = 0;
        if ((rc = ps_jv_expect_object(o, path, err)) ||
            (rc = need_id(o, path, "job_id", &x->job_id, err)) ||
            (rc = ps_jv_int(o, path, "timeout_ms", 0, MAX_TIMEOUT_MS,
                            "milliseconds from 0 to 86400000", &x->timeout_ms, NULL, err)) ||
            (rc = ps_jv_string(o, path, "reason", &x->reason, NULL, err)))
            goto fail;
        r.interrupt_count++;
    }
    for (size_t i = 0; i < na; i++) {
        const json_t *o = json_array_get(aborts, i);
        struct ps_node_abort *x = &r.aborts[i];
        ps_jv_index(path, sizeof path, "jobs_to_abort", i);
        x->reason = "scheduler";
        if ((rc = ps_jv_expect_object(o, path, err)) ||
            (rc = need_id(o, path, "job_id", &x->job_id, err)) ||
            (rc = ps_jv_string(o, path, "reason", &x->reason, NULL, err)))
            goto fail;
        r.abort_count++;
    }
    for (size_t i = 0; i < nk; i++) {
        const json_t *v = json_array_get(acks, i);
        ps_jv_index(path, sizeof path, "acknowledged", i);
        if (!json_is_string(v)) {
            rc = bad(err, path, v, "a job id string");
            goto fail;
        }
        r.acknowledged[i] = json_string_value(v);
        r.acknowledged_count++;
    }
    r.doc = json_incref(doc);
    *out = r;
    return 0;
fail:
    ps_node_reply_release(&r);
    return rc;
}

void ps_node_reply_release(struct ps_node_reply *r)
{
    for (size_t i = 0; i < r->start_count; i++)
        ps_node_env_free(r->starts[i].environment);
    free(r->starts);
    free(r->interrupts);
    free(r->aborts);
    free(r->acknowledged);
    json_decref(r->doc);
    memset(r, 0, sizeof *r);
}
