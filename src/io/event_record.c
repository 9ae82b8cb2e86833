/* event_record.c — event log rows kept compactly (event_record.h). */
#include "io/event_record.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

uint32_t ps_event_names_find(const struct ps_event_names *n, const char *name)
{
    uintptr_t v = name ? (uintptr_t)ps_strmap_get(&n->map, name) : 0;
    return v ? (uint32_t)(v - 1) : PS_EVENT_NONE;
}

/* The index of name (NULL: PS_EVENT_NONE), added when new; -1 when out of memory. */
static int64_t intern(struct ps_event_names *n, const char *name)
{
    if (!name)
        return PS_EVENT_NONE;
    uint32_t i = ps_event_names_find(n, name);
    if (i != PS_EVENT_NONE)
        return i;
    if (n->count == n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 64;
        char **names = realloc(n->names, cap * sizeof *names);
        if (!names)
            return -1;
        n->names = names;
        n->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy || ps_strmap_put(&n->map, copy, (void *)(uintptr_t)(n->count + 1)) != 0) {
        free(copy);
        return -1;
    }
    n->names[n->count] = copy;
    return (int64_t)n->count++;
}

static void names_release(struct ps_event_names *n)
{
    for (size_t i = 0; i < n->count; i++)
        free(n->names[i]);
    free(n->names);
    ps_strmap_release(&n->map);
}

struct ps_event_record *ps_event_record_new(void)
{
    struct ps_event_record *rec = calloc(1, sizeof *rec);
    if (rec) {
        ps_strmap_init(&rec->job_ids.map);
        ps_strmap_init(&rec->operation_ids.map);
        ps_strmap_init(&rec->task_names.map);
    }
    return rec;
}

void ps_event_record_free(struct ps_event_record *rec)
{
    if (!rec)
        return;
    for (size_t i = 0; i < rec->other_count; i++)
        json_decref(rec->others[i].json);
    free(rec->others);
    free(rec->jobs);
    names_release(&rec->job_ids);
    names_release(&rec->operation_ids);
    names_release(&rec->task_names);
    free(rec);
}

/* Room for one more element of size bytes in *v (count, cap); false when out of memory. */
static bool grow(void **v, size_t count, size_t *cap, size_t size)
{
    if (count < *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 1024;
    void *p = realloc(*v, n * size);
    if (!p)
        return false;
    *v = p;
    *cap = n;
    return true;
}

static enum ps_event_job_kind job_kind(const char *type)
{
    if (strcmp(type, "job_started") == 0)
        return PS_EVENT_JOB_STARTED;
    if (strcmp(type, "job_completed") == 0)
        return PS_EVENT_JOB_COMPLETED;
    return strcmp(type, "job_aborted") == 0 ? PS_EVENT_JOB_ABORTED : PS_EVENT_JOB_ENDED;
}

static enum ps_event_job_flaw job_flaw(const json_t *row, bool started)
{
    const char *id = json_string_value(json_object_get(row, "job_id"));
    if (!id || !*id)
        return PS_EVENT_JOB_BAD_ID;
    if (!json_is_string(json_object_get(row, "operation_id")))
        return PS_EVENT_JOB_BAD_OPERATION;
    if (!json_is_object(json_object_get(row, "resource_limits")))
        return PS_EVENT_JOB_BAD_RESOURCES;
    if (!started && (!json_is_integer(json_object_get(row, "start_time")) ||
                     !json_is_integer(json_object_get(row, "finish_time"))))
        return PS_EVENT_JOB_BAD_TIMES;
    return PS_EVENT_JOB_OK;
}

static int add_job(struct ps_event_record *rec, const json_t *row, const char *type, int64_t ts)
{
    struct ps_event_job j = {.row = rec->row_count, .timestamp = ts, .kind = job_kind(type)};
    j.start_time = (int64_t)json_integer_value(json_object_get(row, "start_time"));
    j.finish_time = (int64_t)json_integer_value(json_object_get(row, "finish_time"));
    j.flaw = job_flaw(row, j.kind == PS_EVENT_JOB_STARTED);
    const json_t *limits = json_object_get(row, "resource_limits");
    for (int i = 0; i < PS_RES_COUNT; i++)
        j.resources[i] = json_number_value(json_object_get(limits, ps_resource_name(i)));
    int64_t job = intern(&rec->job_ids, json_string_value(json_object_get(row, "job_id")));
    int64_t op = intern(&rec->operation_ids, json_string_value(json_object_get(row, "operation_id")));
    int64_t task = intern(&rec->task_names, json_string_value(json_object_get(row, "task_name")));
    if (job < 0 || op < 0 || task < 0 ||
        !grow((void **)&rec->jobs, rec->job_count, &rec->job_cap, sizeof *rec->jobs))
        return PS_ENOMEM;
    j.job = (uint32_t)job;
    j.operation = (uint32_t)op;
    j.task = (uint32_t)task;
    rec->jobs[rec->job_count++] = j;
    return 0;
}

int ps_event_record_add(struct ps_event_record *rec, json_t *row, struct ps_error *err)
{
    const json_t *t = json_object_get(row, "timestamp");
    const char *type = json_string_value(json_object_get(row, "event_type"));
    int64_t ts = (int64_t)json_integer_value(t);
    int rc = 0;
    if (json_is_integer(t) && ts >= 0 && type && strncmp(type, "job_", 4) == 0) {
        rc = add_job(rec, row, type, ts);
    } else if (grow((void **)&rec->others, rec->other_count, &rec->other_cap, sizeof *rec->others)) {
        rec->others[rec->other_count++] = (struct ps_event_row){rec->row_count, json_incref(row)};
    } else {
        rc = PS_ENOMEM;
    }
    if (rc != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    rec->newest_ms = ts > rec->newest_ms ? ts : rec->newest_ms;
    rec->row_count++;
    return 0;
}
