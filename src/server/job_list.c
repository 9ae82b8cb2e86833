/* job_list.c — list_jobs' page (job_list.h). The parameters go through the attribute layer, as
 * list_operations' do, so types, names and ranges have one definition and one message shape
 * (`list_jobs: sort_field: must be one of none, type, ..., got "progres"`). */
#include "server/job_list.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "io/json_value.h"
#include "server/job_archive.h"

enum sort_field { BY_NONE, BY_TYPE, BY_STATE, BY_START, BY_FINISH, BY_ADDRESS, BY_DURATION,
                  BY_ID, BY_TASK };

/* Upstream's EJobSortField without "progress": poolsched's jobs report no progress. */
static const char *const field_names[] = {"none", "type", "state", "start_time", "finish_time",
                                          "address", "duration", "id", "task_name"};
static const char *const order_names[] = {"ascending", "descending"};
static const char *const state_names[] = {"running", "completed", "failed", "aborted"};

struct job_query {
    char *operation_id;        /* owned; found by the caller */
    struct ps_opt_int state;   /* index into state_names */
    int sort_field;            /* enum sort_field */
    int sort_order;            /* 0 ascending, 1 descending */
    int64_t offset;
    struct ps_opt_int limit;   /* unset: every job from offset on */
};

static int query_init(void *obj)
{
    memset(obj, 0, sizeof(struct job_query));
    return 0;
}

static const struct ps_attr query_attrs[] = {
    {.name = "operation_id", .kind = PS_ATTR_OPT_STRING,
     .offset = offsetof(struct job_query, operation_id)},
    {.name = "state", .kind = PS_ATTR_OPT_ENUM, .offset = offsetof(struct job_query, state),
     .enum_names = state_names, .enum_count = 4},
    {.name = "sort_field", .kind = PS_ATTR_ENUM, .offset = offsetof(struct job_query, sort_field),
     .enum_names = field_names, .enum_count = 9},
    {.name = "sort_order", .kind = PS_ATTR_ENUM, .offset = offsetof(struct job_query, sort_order),
     .enum_names = order_names, .enum_count = 2},
    {.name = "offset", .kind = PS_ATTR_INT, .offset = offsetof(struct job_query, offset),
     .min = 0, .max = 1e15},
    {.name = "limit", .kind = PS_ATTR_OPT_INT, .offset = offsetof(struct job_query, limit),
     .min = 0, .max = 1e15},
};

static const struct ps_attr_table query_table = {
    .what = "list_jobs parameters",
    .attrs = query_attrs,
    .count = (int)(sizeof query_attrs / sizeof query_attrs[0]),
    .size = sizeof(struct job_query),
    .init = query_init,
};

/* A job with its sort key and its place in start order (ties keep it); the field and order
 * ride along because qsort has no context argument. */
struct keyed {
    json_t *job;
    size_t index;
    const char *s;        /* string keys */
    int64_t n;            /* integer keys; INT64_MAX: none (a running job's finish time) */
    int field, desc;
};

static int cmp_keyed(const void *pa, const void *pb)
{
    const struct keyed *a = pa, *b = pb;
    int c = 0;
    switch (a->field) {
    case BY_STATE:
    case BY_ADDRESS:
    case BY_TASK:
        c = strcmp(a->s, b->s);
        break;
    case BY_ID:   /* by the id's counter: ps_job_archive_order_cmp on ids alone */
        c = ps_job_archive_order_cmp(0, a->s, 0, b->s);
        break;
    case BY_START:
    case BY_FINISH:
    case BY_DURATION:
        c = a->n < b->n ? -1 : a->n > b->n;
        break;
    default:   /* none, type (every job is vanilla): start order */
        c = a->index < b->index ? -1 : a->index > b->index;
        break;
    }
    if (a->desc)
        c = -c;
    return c ? c : (a->index < b->index ? -1 : a->index > b->index);
}

static const char *str_of(const json_t *job, const char *key)
{
    const char *s = json_string_value(json_object_get(job, key));
    return s ? s : "";
}

static int64_t int_of(const json_t *job, const char *key, int64_t missing)
{
    const json_t *v = json_object_get(job, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : missing;
}

static void key_of(struct keyed *k, int field, int64_t now_ms)
{
    const json_t *j = k->job;
    int64_t start = int_of(j, "start_time", 0);
    switch (field) {
    case BY_STATE: k->s = str_of(j, "state"); break;
    case BY_ADDRESS: k->s = str_of(j, "node_id"); break;
    case BY_TASK: k->s = str_of(j, "task_name"); break;
    case BY_ID: k->s = str_of(j, "id"); break;
    case BY_START: k->n = start; break;
    case BY_FINISH: k->n = int_of(j, "finish_time", INT64_MAX); break;
    case BY_DURATION: k->n = int_of(j, "finish_time", now_ms) - start; break;
    default: break;
    }
}

int ps_job_list_page(const json_t *body, json_t *jobs, int64_t now_ms, json_t **reply,
                     struct ps_error *err)
{
    struct job_query q;
    query_init(&q);
    int rc = ps_attr_apply_json(&query_table, &q, body, err);
    if (rc != 0) {
        ps_error_prefix(err, "list_jobs");
        ps_attr_release(&query_table, &q);
        json_decref(jobs);
        return rc;
    }
    const char *state = q.state.set ? state_names[q.state.value] : NULL;
    size_t n = json_array_size(jobs), m = 0;
    struct keyed *v = calloc(n ? n : 1, sizeof *v);
    json_t *counts = json_object();
    json_t *page = json_array();
    rc = v && counts && page ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *job = json_array_get(jobs, i);
        const char *s = str_of(job, "state");
        json_object_set_new(counts, s, json_integer(int_of(counts, s, 0) + 1));
        if (state && strcmp(s, state) != 0)
            continue;
        v[m] = (struct keyed){.job = job, .index = i, .field = q.sort_field, .desc = q.sort_order};
        key_of(&v[m++], q.sort_field, now_ms);
    }
    if (rc == 0) {
        if (m > 1 && (q.sort_field != BY_NONE || q.sort_order))
            qsort(v, m, sizeof *v, cmp_keyed);
        size_t from = (uint64_t)q.offset < m ? (size_t)q.offset : m;
        size_t to = q.limit.set && (uint64_t)q.limit.value < m - from ? from + (size_t)q.limit.value : m;
        for (size_t i = from; i < to; i++)
            json_array_append(page, v[i].job);
        *reply = json_pack("{s:O, s:O, s:I}", "jobs", page, "state_counts", counts, "job_count",
                           (json_int_t)m);
        if (!*reply)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    free(v);
    json_decref(page);
    json_decref(counts);
    json_decref(jobs);
    ps_attr_release(&query_table, &q);
    return rc;
}
