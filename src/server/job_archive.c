/* job_archive.c — finished jobs leave memory once stored; readers merge store and memory
 * (job_archive.h explains the rule). */
#include "server/job_archive.h"

#include <stdlib.h>
#include <string.h>

#include "server/api_json.h"
#include "server/journal.h"
#include "server/persist.h"
#include "server/service_state.h"
#include "server/store_mirror.h"
#include "server/svc_jobs.h"

struct ps_job_archive {
    struct ps_store *reader;      /* own connection: reads do not queue behind commits */
    struct ps_svc_job **queue;    /* finished jobs waiting for their commit, FIFO */
    size_t head, len, cap;        /* live entries are queue[head .. len) */
};

int ps_job_archive_open(struct ps_service *svc, struct ps_error *err)
{
    struct ps_job_archive *a = calloc(1, sizeof *a);
    if (!a)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_store_open_url(svc->cfg.store, svc->cfg.data_dir, &a->reader, err);
    if (rc != 0) {
        free(a);
        return rc;
    }
    svc->archive = a;
    return 0;
}

void ps_job_archive_free(struct ps_job_archive *a)
{
    if (!a)
        return;
    ps_store_close(a->reader);
    free(a->queue);
    free(a);
}

struct ps_store *ps_job_archive_store(struct ps_service *svc)
{
    if (svc->store_down && svc->mirror)   /* PostgreSQL unreachable: its copy (store_mirror.h) */
        return svc->mirror;
    return svc->archive ? svc->archive->reader : svc->store;
}

/* ---- retiring ------------------------------------------------------------------------------ */

void ps_job_archive_retire(struct ps_service *svc, struct ps_svc_job *job, uint64_t ticket)
{
    struct ps_job_archive *a = svc->archive;
    job->retire_ticket = ticket;
    if (!a || job->retire_queued)
        return;
    if (a->len == a->cap) {
        if (a->head > 0) {   /* reuse the consumed front before growing */
            memmove(a->queue, a->queue + a->head, (a->len - a->head) * sizeof *a->queue);
            a->len -= a->head;
            a->head = 0;
        }
        if (a->len == a->cap) {
            size_t cap = a->cap ? 2 * a->cap : 256;
            struct ps_svc_job **q = realloc(a->queue, cap * sizeof *q);
            if (!q)
                return;   /* stays in memory: correct, only not freed */
            a->queue = q;
            a->cap = cap;
        }
    }
    a->queue[a->len++] = job;
    job->retire_queued = true;
}

void ps_job_archive_reset(struct ps_job_archive *a)
{
    if (a)
        a->head = a->len = 0;
}

int ps_job_archive_sweep(struct ps_service *svc)
{
    struct ps_job_archive *a = svc->archive;
    int freed = 0;
    if (a && svc->journal && a->head < a->len) {
        uint64_t committed = ps_journal_committed(svc->journal);
        /* tickets grow along the queue, except for a job stored again: it waits at its place */
        size_t end = a->head;
        while (end < a->len && a->queue[end]->retire_ticket <= committed)
            end++;
        /* each leaves job_list in O(1): the last job takes its place (the list's order
         * means nothing; a pass over 40,000 jobs per sweep cost ~1 ms under svc->mu) */
        for (size_t i = a->head; i < end; i++) {
            struct ps_svc_job *j = a->queue[i];
            ps_strmap_remove(&svc->jobs, j->id);
            struct ps_svc_job *last = svc->job_list[--svc->job_count];
            svc->job_list[j->list_index] = last;
            last->list_index = j->list_index;
            ps_svc_job_free(j);
            freed++;
        }
        a->head = end;
        if (a->head == a->len)
            a->head = a->len = 0;
#ifndef NDEBUG
        for (int i = 0; freed > 0 && i < svc->job_count; i++)
            if (svc->job_list[i]->list_index != i)
                abort();   /* debug builds: the places must follow the moves */
#endif
    }
    ps_metric_set(svc->m_jobs_in_memory, svc->job_count);
    return freed;
}

/* ---- reading ------------------------------------------------------------------------------- */

int ps_job_archive_order_cmp(int64_t start_a, const char *id_a, int64_t start_b, const char *id_b)
{
    if (start_a != start_b)
        return start_a < start_b ? -1 : 1;
    size_t la = strlen(id_a), lb = strlen(id_b);
    if (la != lb)
        return la < lb ? -1 : 1;
    return strcmp(id_a, id_b);
}

struct entry {
    int64_t start_ms;
    const char *id;   /* borrowed from json */
    json_t *json;
};

struct list_ctx {
    struct ps_service *svc;
    const struct ps_svc_op *op;
    struct entry *v;
    size_t n, cap;
    int rc;
};

static int push(struct list_ctx *c, json_t *j)
{
    if (!j)
        return PS_ENOMEM;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        struct entry *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            json_decref(j);
            return PS_ENOMEM;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = (struct entry){json_integer_value(json_object_get(j, "start_time")),
                                  json_string_value(json_object_get(j, "id")), j};
    return 0;
}

static int stored_job(const char *job_id, const char *text, void *ctx)
{
    struct list_ctx *c = ctx;
    if (ps_strmap_get(&c->svc->jobs, job_id))
        return 0;   /* in memory: that copy is newer */
    json_t *doc = json_loads(text, 0, NULL);
    struct ps_svc_job *j = NULL;
    int rc = 0;
    if (doc && json_is_string(json_object_get(doc, "state")) &&
        (j = ps_persist_job_from_doc(c->svc, doc)) != NULL && j->op == c->op)
        rc = push(c, ps_svc_job_json(j));
    /* a document that does not parse is skipped, as a restart would not restore it */
    ps_svc_job_free(j);
    json_decref(doc);
    return rc;
}

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    return ps_job_archive_order_cmp(x->start_ms, x->id, y->start_ms, y->id);
}

int ps_job_archive_list(struct ps_service *svc, const struct ps_svc_op *op, json_t **out,
                        struct ps_error *err)
{
    struct list_ctx c = {svc, op, NULL, 0, 0, 0};
    int rc = ps_store_jobs_of_operation(ps_job_archive_store(svc), op->id, PS_STORE_JOBS_BY_KEY,
                                        stored_job, &c, err);
    if (rc == PS_ENOMEM)
        ps_error_set(err, rc, "out of memory listing the jobs of \"%s\"", op->id);
    for (int i = 0; rc == 0 && i < svc->job_count; i++) {
        const struct ps_svc_job *j = svc->job_list[i];
        if (j->op == op && (rc = push(&c, ps_svc_job_json(j))) != 0)
            ps_error_set(err, rc, "out of memory listing the jobs of \"%s\"", op->id);
    }
    json_t *arr = rc == 0 ? json_array() : NULL;
    if (c.n > 1)
        qsort(c.v, c.n, sizeof *c.v, cmp_entry);
    for (size_t i = 0; i < c.n; i++) {
        if (arr)
            json_array_append(arr, c.v[i].json);
        json_decref(c.v[i].json);
    }
    free(c.v);
    if (rc != 0)
        return rc;
    *out = arr;
    return 0;
}

/* The stored document of job_id, or NULL (absent, unreadable). */
static json_t *stored_doc(struct ps_service *svc, const char *job_id, struct ps_error *err)
{
    char *text = NULL;
    int rc = ps_store_get(ps_job_archive_store(svc), "job", job_id, &text, err);
    if (rc != 0)
        return NULL;
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    return doc;
}

int ps_job_archive_get(struct ps_service *svc, const struct ps_svc_op *op, const char *job_id,
                       json_t **out, struct ps_error *err)
{
    const struct ps_svc_job *mem = ps_strmap_get(&svc->jobs, job_id);
    *out = NULL;
    if (mem && mem->op == op)
        *out = ps_svc_job_json(mem);
    else if (!mem) {
        struct ps_error e2;
        ps_error_init(&e2);
        json_t *doc = stored_doc(svc, job_id, &e2);
        if (!doc && e2.code != 0 && e2.code != PS_ENOENT)
            return ps_error_set(err, e2.code, "%s", e2.msg);
        struct ps_svc_job *j = doc ? ps_persist_job_from_doc(svc, doc) : NULL;
        if (j && j->op == op)
            *out = ps_svc_job_json(j);
        ps_svc_job_free(j);
        json_decref(doc);
    }
    if (*out)
        return 0;
    return ps_error_set(err, PS_ENOENT, "job \"%s\" of operation \"%s\" does not exist", job_id,
                        op->id);
}

int ps_job_archive_stderr(struct ps_service *svc, const struct ps_svc_op *op, const char *job_id,
                          json_t **out, struct ps_error *err)
{
    struct ps_error e2;
    ps_error_init(&e2);
    json_t *doc = stored_doc(svc, job_id, &e2);
    if (!doc && e2.code != 0 && e2.code != PS_ENOENT)
        return ps_error_set(err, e2.code, "%s", e2.msg);
    const char *owner = json_string_value(json_object_get(doc, "operation_id"));
    if (!owner || strcmp(owner, op->id) != 0) {
        json_decref(doc);
        return ps_error_set(err, PS_ENOENT, "job \"%s\" of operation \"%s\" does not exist",
                            job_id, op->id);
    }
    const char *text = json_string_value(json_object_get(doc, "stderr"));
    *out = json_pack("{s:s, s:b}", "stderr", text ? text : "", "truncated",
                     json_is_true(json_object_get(doc, "stderr_truncated")));
    json_decref(doc);
    return *out ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

char *ps_job_archive_abort_reason(struct ps_service *svc, const char *job_id)
{
    json_t *doc = stored_doc(svc, job_id, NULL);
    if (!doc)
        return NULL;
    const char *reason = json_string_value(json_object_get(doc, "abort_reason"));
    char *r = strdup(reason ? reason : "job is not running");
    json_decref(doc);
    return r;
}

/* ---- finished operations ------------------------------------------------------------------- */

void ps_svc_op_release(struct ps_service *svc, struct ps_svc_op *op)
{
    if (!op->finished)
        return;
    for (int i = 0; i < op->task_count; i++) {
        struct ps_svc_task *t = &op->tasks[i];
        free(t->queue);
        free(t->done);
        free(t->overdraft);
        t->queue = NULL;
        t->done = NULL;
        t->overdraft = NULL;
        t->q_head = t->q_len = 0;
        ps_memory_task_release(&t->mem);   /* idempotent: the digests' buckets become NULL */
    }
    op->shape_task = -1;
    for (int i = 0; i < op->tree_count; i++) {
        ps_preemptible_free(op->trees[i].lists);
        op->trees[i].lists = NULL;
        op->trees[i].element = -1;
    }
    /* The strategy keeps a finished operation until it is forgotten; the service no longer
     * asks it anything about this one (its state and pools are in op). */
    if (op->sop) {
        ps_strategy_forget_operation(svc->strategy, op->id, NULL);
        op->sop = NULL;
    }
}
