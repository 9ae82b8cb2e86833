/* journal.c — group commit: records appended under the service lock, written by one thread.
 *
 * Why: every SQLite commit with synchronous=FULL costs an fsync (about 6.5 ms on the machines
 * here). Handlers append their changes (a document put or a delete) while they hold the state
 * lock, so the records are in the order the state changed, then release the lock and wait for
 * their ticket. The writer takes every record queued so far, writes them in one transaction and
 * commits: all the waiting requests share one fsync. A later record for the same (kind, key)
 * simply overwrites the earlier one inside the transaction.
 *
 * If a commit fails, the records are retried with the next batch and waiters get PS_EIO
 * ("not durable"): their reply says so instead of pretending.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "platform/wall_clock.h"
#include "server/service.h"

struct record {
    char *kind, *key;
    char *value;     /* JSON text, NULL for a delete */
};

struct ps_journal {
    struct ps_service *svc;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    struct record *recs;
    size_t count, cap;
    uint64_t appended;       /* tickets handed out */
    uint64_t committed;      /* every ticket <= this is durable */
    uint64_t failed_upto;    /* tickets <= this were in a failed commit */
    bool stop;
    pthread_t thread;
    char last_error[PS_ERROR_MSG_MAX];
};

static void free_recs(struct record *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].kind);
        free(r[i].key);
        free(r[i].value);
    }
    free(r);
}

static int write_batch(struct ps_journal *j, struct record *r, size_t n, struct ps_error *err)
{
    struct ps_store *store = j->svc->store;
    pthread_mutex_lock(&j->svc->store_mu);
    int rc = ps_store_begin(store, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (r[i].value)
            rc = ps_store_put(store, r[i].kind, r[i].key, r[i].value, err);
        else {
            rc = ps_store_delete(store, r[i].kind, r[i].key, err);
            if (rc == PS_ENOENT) {
                rc = 0;
                ps_error_init(err);
            }
        }
    }
    if (rc == 0)
        rc = ps_store_commit(store, err);
    if (rc != 0)
        ps_store_rollback(store, NULL);
    pthread_mutex_unlock(&j->svc->store_mu);
    return rc;
}

static void *writer(void *arg)
{
    struct ps_journal *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        while (!j->stop && j->count == 0)
            pthread_cond_wait(&j->work_cv, &j->mu);
        if (j->count == 0 && j->stop)
            break;
        if (j->svc->cfg.commit_window_ms > 0 && !j->stop) {
            /* let more requests join this commit */
            pthread_mutex_unlock(&j->mu);
            ps_sleep_ms(j->svc->cfg.commit_window_ms);
            pthread_mutex_lock(&j->mu);
        }
        struct record *r = j->recs;
        size_t n = j->count;
        uint64_t upto = j->appended;
        j->recs = NULL;
        j->count = j->cap = 0;
        pthread_mutex_unlock(&j->mu);

        struct ps_error err;
        ps_error_init(&err);
        int rc = write_batch(j, r, n, &err);
        if (rc == 0)
            ps_metric_add(j->svc->m_commits, 1);

        pthread_mutex_lock(&j->mu);
        if (rc == 0) {
            free_recs(r, n);
        } else {
            ps_svc_log(j->svc, "error", "commit_failed", "records=%zu error=\"%s\"", n, err.msg);
            snprintf(j->last_error, sizeof j->last_error, "%s", err.msg);
            j->failed_upto = upto;
            /* keep the records for the next attempt, before newer ones */
            struct record *merged = malloc((n + j->count) * sizeof *merged);
            if (merged) {
                memcpy(merged, r, n * sizeof *r);
                if (j->count)
                    memcpy(merged + n, j->recs, j->count * sizeof *r);
                free(j->recs);
                free(r);
                j->recs = merged;
                j->count += n;
                j->cap = j->count;
            } else {
                free_recs(r, n);
            }
            /* do not spin on a broken disk */
            pthread_mutex_unlock(&j->mu);
            ps_sleep_ms(100);
            pthread_mutex_lock(&j->mu);
        }
        j->committed = rc == 0 ? upto : j->committed;
        pthread_cond_broadcast(&j->done_cv);
        if (j->stop && rc != 0)
            break;
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

int ps_journal_new(struct ps_service *svc, struct ps_journal **out, struct ps_error *err)
{
    struct ps_journal *j = calloc(1, sizeof *j);
    if (!j)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    j->svc = svc;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->work_cv, NULL);
    pthread_cond_init(&j->done_cv, NULL);
    if (pthread_create(&j->thread, NULL, writer, j) != 0) {
        free(j);
        return ps_error_set(err, PS_EIO, "cannot start the journal thread");
    }
    *out = j;
    return 0;
}

void ps_journal_free(struct ps_journal *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->mu);
    j->stop = true;
    pthread_cond_broadcast(&j->work_cv);
    pthread_mutex_unlock(&j->mu);
    pthread_join(j->thread, NULL);
    free_recs(j->recs, j->count);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->work_cv);
    pthread_cond_destroy(&j->done_cv);
    free(j);
}

uint64_t ps_journal_put(struct ps_journal *j, const char *kind, const char *key, json_t *value)
{
    char *text = value ? json_dumps(value, JSON_COMPACT) : NULL;
    json_decref(value);
    pthread_mutex_lock(&j->mu);
    if (j->count == j->cap) {
        size_t cap = j->cap ? 2 * j->cap : 64;
        struct record *r = realloc(j->recs, cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&j->mu);
            free(text);
            return j->appended;
        }
        j->recs = r;
        j->cap = cap;
    }
    j->recs[j->count++] = (struct record){strdup(kind), strdup(key), text};
    uint64_t t = ++j->appended;
    pthread_cond_signal(&j->work_cv);
    pthread_mutex_unlock(&j->mu);
    return t;
}

uint64_t ps_journal_last(struct ps_journal *j)
{
    pthread_mutex_lock(&j->mu);
    uint64_t t = j->appended;
    pthread_mutex_unlock(&j->mu);
    return t;
}

uint64_t ps_journal_committed(struct ps_journal *j)
{
    pthread_mutex_lock(&j->mu);
    uint64_t t = j->committed;
    pthread_mutex_unlock(&j->mu);
    return t;
}

int ps_journal_wait(struct ps_journal *j, uint64_t ticket, struct ps_error *err)
{
    pthread_mutex_lock(&j->mu);
    while (j->committed < ticket && !(j->failed_upto >= ticket && j->failed_upto > j->committed))
        pthread_cond_wait(&j->done_cv, &j->mu);
    int rc = 0;
    if (j->committed < ticket)
        rc = ps_error_set(err, PS_EIO, "the change could not be made durable: %s", j->last_error);
    pthread_mutex_unlock(&j->mu);
    return rc;
}
