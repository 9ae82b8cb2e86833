/* event_record.c — event log rows kept compactly (event_record.h). */
#include "io/event_record.h"

#include <errno.h>
#include <math.h>
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
        rec->oldest_ms = -1;
        ps_strmap_init(&rec->job_ids.map);
        ps_strmap_init(&rec->operation_ids.map);
        ps_strmap_init(&rec->task_names.map);
        ps_strmap_init(&rec->tree_ids.map);
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
    names_release(&rec->tree_ids);
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

/* What a job row says, as jansson would give it: strings NULL when not strings. */
struct job_fields {
    int64_t timestamp;   /* an integer >= 0 */
    const char *type;    /* "job_..." */
    const char *job_id, *operation_id, *task_name, *tree_id;
    bool start_is_int, finish_is_int, has_limits;
    int64_t start_time, finish_time;   /* 0 when not integers */
    double resources[PS_RES_COUNT];    /* resource_limits' numbers, 0 when not numbers */
};

static enum ps_event_job_flaw job_flaw(const struct job_fields *f, bool started)
{
    if (!f->job_id || !*f->job_id)
        return PS_EVENT_JOB_BAD_ID;
    if (!f->operation_id)
        return PS_EVENT_JOB_BAD_OPERATION;
    if (!f->has_limits)
        return PS_EVENT_JOB_BAD_RESOURCES;
    if (!started && (!f->start_is_int || !f->finish_is_int))
        return PS_EVENT_JOB_BAD_TIMES;
    return PS_EVENT_JOB_OK;
}

/* A row's integer timestamp (>= 0) in the record's newest and oldest. */
static void note_time(struct ps_event_record *rec, int64_t t)
{
    rec->newest_ms = t > rec->newest_ms ? t : rec->newest_ms;
    rec->oldest_ms = rec->oldest_ms < 0 || t < rec->oldest_ms ? t : rec->oldest_ms;
}

static int add_job(struct ps_event_record *rec, const struct job_fields *f)
{
    struct ps_event_job j = {.row = rec->row_count, .timestamp = f->timestamp,
                             .start_time = f->start_time, .finish_time = f->finish_time,
                             .kind = job_kind(f->type)};
    j.flaw = job_flaw(f, j.kind == PS_EVENT_JOB_STARTED);
    memcpy(j.resources, f->resources, sizeof j.resources);
    int64_t job = intern(&rec->job_ids, f->job_id);
    int64_t op = intern(&rec->operation_ids, f->operation_id);
    int64_t task = intern(&rec->task_names, f->task_name);
    int64_t tree = intern(&rec->tree_ids, f->tree_id);
    if (job < 0 || op < 0 || task < 0 || tree < 0 ||
        !grow((void **)&rec->jobs, rec->job_count, &rec->job_cap, sizeof *rec->jobs))
        return PS_ENOMEM;
    j.job = (uint32_t)job;
    j.operation = (uint32_t)op;
    j.task = (uint32_t)task;
    j.tree = (uint32_t)tree;
    rec->jobs[rec->job_count++] = j;
    note_time(rec, f->timestamp);
    rec->row_count++;
    return 0;
}

static void json_fields(const json_t *row, struct job_fields *f)
{
    const json_t *start = json_object_get(row, "start_time");
    const json_t *finish = json_object_get(row, "finish_time");
    const json_t *limits = json_object_get(row, "resource_limits");
    f->job_id = json_string_value(json_object_get(row, "job_id"));
    f->operation_id = json_string_value(json_object_get(row, "operation_id"));
    f->task_name = json_string_value(json_object_get(row, "task_name"));
    f->tree_id = json_string_value(json_object_get(row, "tree_id"));
    f->start_is_int = json_is_integer(start);
    f->finish_is_int = json_is_integer(finish);
    f->start_time = (int64_t)json_integer_value(start);
    f->finish_time = (int64_t)json_integer_value(finish);
    f->has_limits = json_is_object(limits);
    for (int i = 0; i < PS_RES_COUNT; i++)
        f->resources[i] = json_number_value(json_object_get(limits, ps_resource_name(i)));
}

int ps_event_record_add(struct ps_event_record *rec, json_t *row, struct ps_error *err)
{
    const json_t *t = json_object_get(row, "timestamp");
    struct job_fields f = {.timestamp = (int64_t)json_integer_value(t),
                           .type = json_string_value(json_object_get(row, "event_type"))};
    int rc = 0;
    if (json_is_integer(t) && f.timestamp >= 0 && f.type && strncmp(f.type, "job_", 4) == 0) {
        json_fields(row, &f);
        rc = add_job(rec, &f);
    } else if (grow((void **)&rec->others, rec->other_count, &rec->other_cap,
                    sizeof *rec->others)) {
        rec->others[rec->other_count++] = (struct ps_event_row){rec->row_count++, json_incref(row)};
        if (json_is_integer(t) && f.timestamp >= 0)
            note_time(rec, f.timestamp);
    } else {
        rc = PS_ENOMEM;
    }
    return rc == 0 ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

/* src's interned index i in dst's names (interned there when new); -1 when out of memory. */
static int64_t remap(struct ps_event_names *dst, const struct ps_event_names *src, uint32_t i)
{
    return i == PS_EVENT_NONE ? PS_EVENT_NONE : intern(dst, src->names[i]);
}

int ps_event_record_append(struct ps_event_record *dst, struct ps_event_record *src,
                           struct ps_error *err)
{
    size_t base = dst->row_count;
    size_t jobs = 0, others = 0;
    /* in row order, so that names new to dst are interned in the order rows added one by one
     * would have met them */
    while (jobs < src->job_count || others < src->other_count) {
        bool job = others == src->other_count ||
                   (jobs < src->job_count && src->jobs[jobs].row < src->others[others].row);
        if (job) {
            struct ps_event_job j = src->jobs[jobs];
            int64_t id = remap(&dst->job_ids, &src->job_ids, j.job);
            int64_t op = remap(&dst->operation_ids, &src->operation_ids, j.operation);
            int64_t task = remap(&dst->task_names, &src->task_names, j.task);
            int64_t tree = remap(&dst->tree_ids, &src->tree_ids, j.tree);
            if (id < 0 || op < 0 || task < 0 || tree < 0 ||
                !grow((void **)&dst->jobs, dst->job_count, &dst->job_cap, sizeof *dst->jobs))
                return ps_error_set(err, PS_ENOMEM, "out of memory");
            j.row += base;
            j.job = (uint32_t)id;
            j.operation = (uint32_t)op;
            j.task = (uint32_t)task;
            j.tree = (uint32_t)tree;
            dst->jobs[dst->job_count++] = j;
            jobs++;
        } else {
            if (!grow((void **)&dst->others, dst->other_count, &dst->other_cap,
                      sizeof *dst->others))
                return ps_error_set(err, PS_ENOMEM, "out of memory");
            struct ps_event_row r = src->others[others];
            src->others[others++].json = NULL;   /* moved */
            r.row += base;
            dst->others[dst->other_count++] = r;
        }
    }
    dst->row_count += src->row_count;
    if (src->oldest_ms >= 0) {
        note_time(dst, src->oldest_ms);
        note_time(dst, src->newest_ms);
    }
    src->job_count = src->other_count = src->row_count = 0;
    src->newest_ms = 0;
    src->oldest_ms = -1;
    return 0;
}

/* ---- a job row's text, read without building JSON values ------------------------------- */

/* The scanner takes a subset of JSON: one object whose values are strings of printable ASCII
 * without escapes, numbers, true, false, null, and (resource_limits) one object of those.
 * Anything else (and every row that is not a job row) goes to jansson, so what is taken is
 * read exactly as jansson reads it (a repeated key: the last one counts). */
struct scan {
    const char *p, *end;
    char buf[1024];   /* the strings kept, NUL-terminated */
    size_t used;
};

static void skip_ws(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static bool scan_char(struct scan *s, char c)
{
    skip_ws(s);
    if (s->p >= s->end || *s->p != c)
        return false;
    s->p++;
    return true;
}

/* A string (the opening quote next): its text and length, not kept. */
static bool scan_string(struct scan *s, const char **text, size_t *len)
{
    if (!scan_char(s, '"'))
        return false;
    const char *b = s->p;
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20 || c > 0x7e || c == '\\')
            return false;
        s->p++;
    }
    if (s->p >= s->end)
        return false;
    *text = b;
    *len = (size_t)(s->p++ - b);
    return true;
}

/* The string just scanned, kept NUL-terminated in s->buf; NULL when it does not fit. */
static const char *keep(struct scan *s, const char *text, size_t len)
{
    if (s->used + len + 1 > sizeof s->buf)
        return NULL;
    char *k = s->buf + s->used;
    memcpy(k, text, len);
    k[len] = '\0';
    s->used += len + 1;
    return k;
}

enum scanned { S_FAIL, S_INT, S_REAL, S_STRING, S_OTHER };

/* A number as jansson reads it: an integer (no fraction, no exponent) or a finite real. */
static enum scanned scan_number(struct scan *s, int64_t *i, double *d)
{
    const char *b = s->p, *e = s->end;
    const char *p = b + (b < e && *b == '-');
    const char *digits = p;
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    if (p == digits || (*digits == '0' && p - digits > 1))
        return S_FAIL;
    bool integer = true;
    if (p < e && *p == '.') {
        const char *f = ++p;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
        if (p == f)
            return S_FAIL;
        integer = false;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p += 1 + (p + 1 < e && (p[1] == '+' || p[1] == '-'));
        const char *x = p;
        while (p < e && *p >= '0' && *p <= '9')
            p++;
        if (p == x)
            return S_FAIL;
        integer = false;
    }
    char num[40];
    size_t n = (size_t)(p - b);
    if (n >= sizeof num || (integer && p - digits > 18))
        return S_FAIL;   /* jansson's range checks: left to jansson */
    memcpy(num, b, n);
    num[n] = '\0';
    s->p = p;
    if (integer) {
        *i = strtoll(num, NULL, 10);
        *d = (double)*i;
        return S_INT;
    }
    *d = strtod(num, NULL);
    return isfinite(*d) ? S_REAL : S_FAIL;
}

static bool scan_word(struct scan *s, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
        return false;
    s->p += n;
    return true;
}

/* A scalar value: a number (*i, *d), a string (*text, *len), true, false or null. */
static enum scanned scan_scalar(struct scan *s, int64_t *i, double *d, const char **text,
                                size_t *len)
{
    skip_ws(s);
    if (s->p >= s->end)
        return S_FAIL;
    char c = *s->p;
    if (c == '"')
        return scan_string(s, text, len) ? S_STRING : S_FAIL;
    if (c == '-' || (c >= '0' && c <= '9'))
        return scan_number(s, i, d);
    return scan_word(s, "true") || scan_word(s, "false") || scan_word(s, "null") ? S_OTHER
                                                                                : S_FAIL;
}

static bool key_is(const char *key, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(key, name, len) == 0;
}

/* resource_limits' object (the brace next): its numbers by resource name. */
static bool scan_limits(struct scan *s, struct job_fields *f)
{
    if (!scan_char(s, '{'))
        return false;
    f->has_limits = true;
    memset(f->resources, 0, sizeof f->resources);
    if (scan_char(s, '}'))
        return true;
    do {
        const char *key, *text;
        size_t len, tlen;
        int64_t i;
        double d = 0;
        if (!scan_string(s, &key, &len) || !scan_char(s, ':'))
            return false;
        enum scanned v = scan_scalar(s, &i, &d, &text, &tlen);
        if (v == S_FAIL)
            return false;
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (key_is(key, len, ps_resource_name(r)))
                f->resources[r] = v == S_INT || v == S_REAL ? d : 0;
    } while (scan_char(s, ','));
    return scan_char(s, '}');
}

/* One member of the row: the key's value into f when it is one of a job row's. */
static bool scan_member(struct scan *s, struct job_fields *f, bool *ts_ok)
{
    const char *key, *text = NULL;
    size_t len, tlen = 0;
    if (!scan_string(s, &key, &len) || !scan_char(s, ':'))
        return false;
    if (key_is(key, len, "resource_limits")) {
        skip_ws(s);
        if (s->p < s->end && *s->p == '{')
            return scan_limits(s, f);
        f->has_limits = false;
        memset(f->resources, 0, sizeof f->resources);
    }
    int64_t i = 0;
    double d;
    enum scanned v = scan_scalar(s, &i, &d, &text, &tlen);
    const char *str = v == S_STRING ? keep(s, text, tlen) : NULL;
    if (v == S_FAIL || (v == S_STRING && !str))
        return false;
    if (key_is(key, len, "timestamp")) {
        *ts_ok = v == S_INT && i >= 0;
        f->timestamp = i;
    } else if (key_is(key, len, "event_type")) {
        f->type = str;
    } else if (key_is(key, len, "job_id")) {
        f->job_id = str;
    } else if (key_is(key, len, "operation_id")) {
        f->operation_id = str;
    } else if (key_is(key, len, "task_name")) {
        f->task_name = str;
    } else if (key_is(key, len, "tree_id")) {
        f->tree_id = str;
    } else if (key_is(key, len, "start_time")) {
        f->start_is_int = v == S_INT;
        f->start_time = v == S_INT ? i : 0;
    } else if (key_is(key, len, "finish_time")) {
        f->finish_is_int = v == S_INT;
        f->finish_time = v == S_INT ? i : 0;
    }
    return true;
}

/* The job row that text (len bytes) begins with into f, s->p just past its closing brace;
 * false when it begins with another row or one beyond the scanner. */
static bool scan_job_object(const char *text, size_t len, struct scan *s, struct job_fields *f)
{
    *s = (struct scan){.p = text, .end = text + len};
    bool ts_ok = false;
    if (!scan_char(s, '{') || scan_char(s, '}'))
        return false;
    do {
        if (!scan_member(s, f, &ts_ok))
            return false;
    } while (scan_char(s, ','));
    return scan_char(s, '}') && ts_ok && f->type && strncmp(f->type, "job_", 4) == 0;
}

/* A job row's text, nothing after it but whitespace, into f (scan_job_object). */
static bool scan_job_row(const char *text, size_t len, struct scan *s, struct job_fields *f)
{
    if (!scan_job_object(text, len, s, f))
        return false;
    skip_ws(s);
    return s->p == s->end;
}

size_t ps_event_text_job_row_len(const char *text, size_t len)
{
    struct scan s;
    struct job_fields f = {0};
    return scan_job_object(text, len, &s, &f) ? (size_t)(s.p - text) : 0;
}

int ps_event_record_add_text(struct ps_event_record *rec, const char *text, size_t len,
                             struct ps_error *err)
{
    struct scan s;
    struct job_fields f = {0};
    if (scan_job_row(text, len, &s, &f))
        return add_job(rec, &f) == 0 ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
    json_error_t jerr;
    json_t *row = json_loadb(text, len, 0, &jerr);
    if (!row)
        return ps_error_set(err, PS_EINVAL, "not a JSON row: %s", jerr.text);
    int rc = ps_event_record_add(rec, row, err);
    json_decref(row);
    return rc;
}

int ps_event_record_add_row_text(struct ps_event_record *rec, const char *text, size_t len,
                                 bool *added, struct ps_error *err)
{
    struct scan s;
    struct job_fields f = {0};
    *added = true;
    if (scan_job_row(text, len, &s, &f))   /* its event_type a string "job_..." */
        return add_job(rec, &f) == 0 ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
    json_error_t jerr;
    json_t *row = json_loadb(text, len, 0, &jerr);
    if (!row)
        return ps_error_set(err, PS_EINVAL, "not a JSON row: %s", jerr.text);
    int rc = 0;
    if (json_is_object(row) && json_is_string(json_object_get(row, "event_type")))
        rc = ps_event_record_add(rec, row, err);
    else
        *added = false;
    json_decref(row);
    return rc;
}

bool ps_event_text_timestamp(const char *text, int64_t *ts)
{
    static const char head[] = "{\"timestamp\":";
    if (strncmp(text, head, sizeof head - 1) != 0)
        return false;
    const char *digits = text + sizeof head - 1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(digits, &end, 10);
    if (end == digits || errno != 0 || (*end != ',' && *end != '}'))
        return false;
    *ts = v;
    return true;
}

int64_t ps_event_text_time(const char *text, size_t len)
{
    int64_t ts;
    if (ps_event_text_timestamp(text, &ts))
        return ts;
    json_t *row = json_loadb(text, len, 0, NULL);
    ts = json_integer_value(json_object_get(row, "timestamp"));
    json_decref(row);
    return ts;
}
