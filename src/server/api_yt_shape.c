/* api_yt_shape.c — poolsched's operations and jobs reshaped as YTsaurus's HTTP proxies answer
 * them (api_yt.h): ISO times, brief_progress, runtime_parameters, error objects, job_id,
 * list_operations' counters. Pure JSON transforms: no service state. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server/api_yt.h"

static json_t *iso_time(int64_t ms)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    if (ms < 0 || !gmtime_r(&s, &tm))
        return json_null();
    char buf[80];
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03d000Z", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
    return json_string(buf);
}

static void set_time(json_t *o, const char *key)
{
    json_t *t = json_object_get(o, key);
    if (json_is_integer(t))
        json_object_set_new(o, key, iso_time(json_integer_value(t)));
}

json_t *ps_yt_system_attribute(const char *name, int64_t loaded_ms)
{
    if (strcmp(name, "account") == 0)
        return json_string("sys");
    if (strcmp(name, "owner") == 0)
        return json_string("root");
    if (strcmp(name, "creation_time") == 0 || strcmp(name, "modification_time") == 0 ||
        strcmp(name, "access_time") == 0)
        return iso_time(loaded_ms);
    if (strcmp(name, "resource_usage") == 0 || strcmp(name, "recursive_resource_usage") == 0)
        return json_pack("{s:i, s:i, s:i, s:{}, s:i, s:i, s:i}", "node_count", 1, "chunk_count", 0,
                         "disk_space", 0, "disk_space_per_medium", "tablet_count", 0,
                         "tablet_static_memory", 0, "master_memory", 0);
    return NULL;
}

void ps_yt_event_rows(json_t *rows)
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        set_time(row, "timestamp");
        set_time(row, "start_time");
        set_time(row, "finish_time");
    }
}

/* An operation as YTsaurus shows it, keeping poolsched's own keys (progress, pool_per_tree...). */
json_t *ps_yt_operation(json_t *op)
{
    json_object_set_new(op, "type", json_string("vanilla"));
    json_object_set(op, "authenticated_user", json_object_get(op, "user"));
    set_time(op, "start_time");
    set_time(op, "finish_time");
    json_t *progress = json_object_get(op, "progress");
    if (progress)
        json_object_set_new(op, "brief_progress",
                            json_pack("{s:O, s:s}", "jobs", progress, "state",
                                      json_is_true(json_object_get(op, "suspended"))
                                          ? "suspended" : "running"));
    /* the full form carries the service's runtime_parameters (the values in effect per tree)
     * and the spec; the brief one (list_operations) pool_per_tree, brief_spec and weight */
    json_t *rt = json_object_get(op, "runtime_parameters");
    const char *tree;
    json_t *pool;
    json_t *weight = json_object_get(op, "weight");
    if (json_is_object(rt)) {
        json_incref(rt);
        json_object_foreach(json_object_get(rt, "scheduling_options_per_pool_tree"), tree, pool) {
            weight = json_object_get(pool, "weight");   /* the first tree's, as the brief one */
            break;
        }
    } else {
        json_t *per_tree = json_object();
        json_object_foreach(json_object_get(op, "pool_per_tree"), tree, pool)
            json_object_set_new(per_tree, tree, json_pack("{s:O}", "pool", pool));
        rt = json_pack("{s:o}", "scheduling_options_per_pool_tree", per_tree);
    }
    json_t *spec = json_object_get(op, "spec");
    if (!weight && spec)
        weight = json_object_get(spec, "weight");
    if (weight)
        json_object_set(rt, "weight", weight);
    json_object_del(op, "weight");
    json_object_set_new(op, "runtime_parameters", rt);
    if (spec) {
        json_t *brief = json_object();
        static const char *const brief_keys[] = {"pool", "title"};
        for (size_t i = 0; i < 2; i++)
            if (json_object_get(spec, brief_keys[i]))
                json_object_set(brief, brief_keys[i], json_object_get(spec, brief_keys[i]));
        json_object_set_new(op, "brief_spec", brief);
        json_object_set(op, "provided_spec", spec);
        json_object_set(op, "full_spec", json_object_get(op, "resulting_spec"));
    }
    const char *error = json_string_value(json_object_get(op, "error"));
    if (error)
        json_object_set_new(op, "result",
                            json_pack("{s:{s:i, s:s, s:{}, s:[]}}", "error", "code", YT_GENERIC,
                                      "message", error, "attributes", "inner_errors"));
    return op;
}

json_t *ps_yt_job(json_t *job)
{
    json_object_set(job, "job_id", json_object_get(job, "id"));   /* get_job's key upstream */
    json_object_set_new(job, "type", json_string("vanilla"));
    json_object_set(job, "address", json_object_get(job, "node_id"));
    set_time(job, "start_time");
    set_time(job, "finish_time");
    /* a preempted job's error as upstream's node reports it: "Job preempted" with the
     * abort_reason and preemption_reason attributes */
    const char *why = json_string_value(json_object_get(job, "preemption_reason"));
    const char *abort_reason = json_string_value(json_object_get(job, "abort_reason"));
    if (why && abort_reason && strcmp(abort_reason, "preemption") == 0) {
        const char *inner = json_string_value(json_object_get(job, "error"));
        json_t *e = json_pack("{s:i, s:s, s:{s:s, s:s}, s:[]}", "code", 1, "message",
                              "Job preempted", "attributes", "abort_reason", "preemption",
                              "preemption_reason", why, "inner_errors");
        if (e && inner)
            json_array_append_new(json_object_get(e, "inner_errors"),
                                  json_pack("{s:i, s:s}", "code", 1, "message", inner));
        if (e)
            json_object_set_new(job, "error", e);
    }
    /* any other error as an error object too: a failed job's as upstream's job proxy reports
     * it, "User job failed" (1205) with poolsched's reason inside */
    const char *text = json_string_value(json_object_get(job, "error"));
    if (text) {
        bool failed = json_is_string(json_object_get(job, "state")) &&
                      strcmp(json_string_value(json_object_get(job, "state")), "failed") == 0;
        json_t *e = failed ? json_pack("{s:i, s:s, s:{}, s:[{s:i, s:s, s:{}, s:[]}]}", "code",
                                       YT_USER_JOB_FAILED, "message", "User job failed",
                                       "attributes", "inner_errors", "code", YT_GENERIC,
                                       "message", text, "attributes", "inner_errors")
                           : json_pack("{s:i, s:s, s:{}, s:[]}", "code", YT_GENERIC, "message",
                                       text, "attributes", "inner_errors");
        if (e)
            json_object_set_new(job, "error", e);
    }
    return job;
}

/* Keeps only the listed attributes of an object (a YTsaurus `attributes` filter). */
void ps_yt_filter_keys(json_t *o, const json_t *attributes)
{
    if (!json_is_array(attributes) || !json_is_object(o))
        return;
    json_t *keep = json_object();
    size_t i;
    json_t *a;
    json_array_foreach(attributes, i, a) {
        const char *k = json_string_value(a);
        if (k && json_object_get(o, k))
            json_object_set(keep, k, json_object_get(o, k));
    }
    json_object_clear(o);
    json_object_update(o, keep);
    json_decref(keep);
}

/* The keys only the full form of an operation has: asking for one of them in list_operations'
 * `attributes` lists the full forms (slow with many operations); otherwise the brief ones. */
bool ps_yt_wants_full_operations(const json_t *attributes)
{
    static const char *const full_only[] = {"spec", "provided_spec", "full_spec",
                                            "resulting_spec", "unrecognized_spec", "alerts",
                                            "pending_reason"};
    size_t i;
    json_t *a;
    json_array_foreach(attributes, i, a)
        for (size_t k = 0; k < sizeof full_only / sizeof full_only[0]; k++)
            if (json_is_string(a) && strcmp(json_string_value(a), full_only[k]) == 0)
                return true;
    return false;
}

/* list_operations' YTsaurus reply from /api/v1's (counters computed there, in one pass under
 * the service lock, over every operation): the operations newest first up to `limit`, shaped,
 * and the counters; a `type` other than vanilla matches nothing. */
json_t *ps_yt_list_operations(json_t *v1, const json_t *params)
{
    const char *type = json_string_value(json_object_get(params, "type"));
    bool none = json_object_get(params, "type") && (!type || strcmp(type, "vanilla") != 0);
    json_int_t limit = json_integer_value(json_object_get(params, "limit"));
    if (limit <= 0)
        limit = 100;
    json_int_t total = json_integer_value(json_object_get(v1, "total_count"));
    json_t *ops = json_array();
    size_t i;
    json_t *op;
    if (!none)
        json_array_foreach(json_object_get(v1, "operations"), i, op) {
            json_t *shaped = ps_yt_operation(json_incref(op));
            ps_yt_filter_keys(shaped, json_object_get(params, "attributes"));
            json_array_append_new(ops, shaped);
        }
    json_t *types = json_object();
    if (total > 0)
        json_object_set_new(types, "vanilla", json_integer(total));
    if (none)
        return json_pack("{s:o, s:{}, s:{}, s:{}, s:o, s:I, s:b}", "operations", ops,
                         "pool_counts", "user_counts", "state_counts", "type_counts", types,
                         "failed_jobs_count", (json_int_t)0, "incomplete", 0);
    return json_pack("{s:o, s:O, s:O, s:O, s:o, s:O, s:b}", "operations", ops, "pool_counts",
                     json_object_get(v1, "pool_counts"), "user_counts",
                     json_object_get(v1, "user_counts"), "state_counts",
                     json_object_get(v1, "state_counts"), "type_counts", types,
                     "failed_jobs_count", json_object_get(v1, "failed_jobs_count"),
                     "incomplete", total > limit);
}
