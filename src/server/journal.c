/* journal.c — group commit: records appended under the service lock, written by one thread.
 *
 * Why: every SQLite commit with synchronous=FULL costs an fsync (about 6.5 ms on the machines
 * here). Handlers append their changes (a document put or a delete) while they hold the state
 * lock, so the records are in the order the state changed, then release the lock and wait for
 * their ticket. The writer takes every record queued so far, writes them in one transaction and
 * commits: all the waiting requests share one fsync. A later record for the same (kind, key)
 * simply overwrites the earlier one inside the transaction.
 *
 * A failed commit changes nothing (issue 13; docs/faults.md "Full disk"). The handlers changed
 * memory before their records were committed, and later requests may have built on those
 * changes (a pool created, then an operation started in it), so the writer undoes them all the
 * one way that is right for any mix of changes: it takes the state lock (no handler runs, none
 * appends), discards the failed batch and every record queued after it, and rebuilds the state
 * from the store (ps_svc_state_reload), which SQLite has rolled back to the last commit — exactly
 * what a restart would load. Only then does it wake the waiters, whose tickets are now
 * "discarded": they answer 507 "disk full" (PS_ENOSPC) or 503 "storage unavailable"
 * (PS_EUNAVAIL), and nobody sees their change afterwards, in memory or on disk. Nothing is
 * retried: a refused change must not appear later. The writer then backs off (10 ms doubling
 * to 100 ms, reset by a good commit) so that a full disk costs at most a few reloads a second
 * while a refused request still answers quickly; the reload keeps each tree's next fair share
 * update time, so the engine loop's own writes fail (and reload) no more often than usual. The
 * first commit that succeeds again needs nothing else (no restart). While commits fail, the
 * engine loop's refresh-only records (integral volumes, starvation timers) are appended once per
 * PS_JOURNAL_REFRESH_PROBE_MS instead of after every fair share update
 * (ps_journal_refresh_due): each failure costs a reload, which holds the state lock for about
 * 0.1 ms per running operation.
 *
 * The writer takes the queued records under the state lock, so a handler's records (appended
 * under it) are never split between two commits: a crash between them cannot leave half of a
 * change on disk.
 *
 * A record too big to make under the state lock (an event log's state rows, megabytes on a
 * large cluster: ps_journal_put_aside_rendered) waits for a render thread instead, which makes
 * its text off every lock and then queues it: the records appended meanwhile go ahead of it,
 * so no handler waits for that text or its commit. Nothing rests on such a record (the event
 * log's rows); a later record of its key cancels it, and a discarded queue drops it.
 *
 * Ticket states: <= settled and in a discarded range = refused; <= settled otherwise = durable;
 * above settled = waiting. Discarded ranges are kept sorted (a bounded number: waiters ask
 * right after appending).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "platform/wall_clock.h"
#include "server/ha.h"
#include "server/journal.h"
#include "server/service_state.h"
#include "server/store_mirror.h"
#include "server/svc_log.h"

#define BACKOFF_MIN_MS 10
#define BACKOFF_MAX_MS 100
#define MAX_LOST_RANGES 4096

struct record {
    char *kind, *key;
    char *value;     /* JSON text, NULL for a delete (or until rendered) */
    const struct ps_journal_renderer *render;   /* a put aside: its text made by the writer's
                                                   batch (render) */
    void *ctx;       /* render's, until rendered */
};

/* A put aside whose text the render thread makes (ps_journal_put_aside_rendered). */
struct pending {
    char *kind, *key;
    const struct ps_journal_renderer *render;
    void *ctx;
    bool cancelled;  /* a record of the same key came after it: it must not land after that */
};

struct lost_range {
    uint64_t lo, hi; /* tickets (lo, hi] were discarded */
    int code;        /* PS_ENOSPC, PS_EUNAVAIL, PS_ENOMEM */
};

struct ps_journal {
    struct ps_service *svc;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    struct record *recs;
    size_t count, cap;
    uint64_t appended;       /* tickets handed out */
    uint64_t relied;         /* of them, records a reply may rest on (not put aside) */
    uint64_t settled;        /* every ticket <= this is durable or discarded */
    struct lost_range *lost; /* discarded tickets, ascending */
    size_t lost_count, lost_cap;
    bool poisoned;           /* a record could not be queued (out of memory): fail the batch */
    int backoff_ms;          /* 0 while commits succeed */
    int64_t last_refresh_ms; /* ps_journal_refresh_due's last yes while commits fail */
    bool stop;
    pthread_t thread;
    char reason[160];        /* SQLite's reason for the last failed commit */
    /* the render thread's queue; cur: the one it renders (NULL: none) */
    struct pending *pend;
    size_t pend_count, pend_cap;
    struct pending *cur;
    uint64_t gen;            /* bumped when queued records are discarded: renders of older
                                generations are dropped */
    pthread_cond_t render_cv;
    pthread_t render_thread;
};

static void free_recs(struct record *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].kind);
        free(r[i].key);
        free(r[i].value);
        if (r[i].render)
            r[i].render->drop(r[i].ctx);
    }
    free(r);
}

/* The texts of the batch's put-aside documents (ps_journal_put_aside), dumped here, off the
 * state lock. Nonzero on out of memory. */
static int render(struct record *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!r[i].render)
            continue;
        r[i].value = r[i].render->text(r[i].ctx);
        r[i].render->drop(r[i].ctx);
        r[i].render = NULL;
        if (!r[i].value)
            return -1;
    }
    return 0;
}

static char *doc_text(void *doc)
{
    return json_dumps(doc, JSON_COMPACT);
}

static void doc_drop(void *doc)
{
    json_decref(doc);
}

static const struct ps_journal_renderer doc_renderer = {doc_text, doc_drop};

/* Writes r[0..n) to store in one transaction. */
static int apply(struct ps_store *store, struct record *r, size_t n, struct ps_error *err)
{
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
    return rc;
}

/* Commits the batch, tickets (from, ...], then gives it to the mirror (store_mirror.h). While
 * the store is down it refuses the batch without trying (*skipped), and so afterwards a batch
 * with tickets from then: those changes were made to the mirror's state, not the store's. */
static int write_batch(struct ps_journal *j, struct record *r, size_t n, uint64_t from,
                       bool *skipped, struct ps_error *err)
{
    struct ps_service *svc = j->svc;
    pthread_mutex_lock(&svc->store_mu);
    *skipped = svc->store_down || from < svc->store_up_from;
    int rc = *skipped ? ps_error_set(err, PS_EUNAVAIL, "the store is unreachable, reads are "
                                                       "answered from memory until it is back")
                      : apply(svc->store, r, n, err);
    if (rc != 0 && ps_store_deposed(svc->store))
        ps_ha_step_down(svc, err->msg);   /* a newer epoch leads: nothing more of ours */
    struct ps_error e;
    ps_error_init(&e);
    if (rc == 0 && svc->mirror && apply(svc->mirror, r, n, &e) != 0) {
        ps_svc_log(svc, "error", "store_mirror_dropped", "error=\"%s\"", e.msg);
        ps_store_close(svc->mirror);   /* reads then need the store, as on SQLite */
        svc->mirror = NULL;
    }
    pthread_mutex_unlock(&svc->store_mu);
    return rc;
}

/* Drops the renders not made yet, and the one being made (gen). Under j->mu. */
static void drop_pending(struct ps_journal *j)
{
    for (size_t i = 0; i < j->pend_count; i++) {
        j->pend[i].render->drop(j->pend[i].ctx);
        free(j->pend[i].kind);
        free(j->pend[i].key);
    }
    j->pend_count = 0;
    j->gen++;
}

/* Marks tickets (settled, appended] discarded and drops their records. Under j->mu. */
static void discard_queued(struct ps_journal *j, int code)
{
    free_recs(j->recs, j->count);
    j->recs = NULL;
    j->count = j->cap = 0;
    j->poisoned = false;
    drop_pending(j);
    if (j->appended <= j->settled)
        return;
    struct lost_range *last = j->lost_count ? &j->lost[j->lost_count - 1] : NULL;
    if (last && last->hi == j->settled) {   /* a run of failures: one range */
        last->hi = j->appended;
        last->code = code;
    } else {
        if (j->lost_count == MAX_LOST_RANGES) {   /* forget the oldest half */
            memmove(j->lost, j->lost + MAX_LOST_RANGES / 2,
                    (MAX_LOST_RANGES / 2) * sizeof *j->lost);
            j->lost_count = MAX_LOST_RANGES / 2;
        }
        if (j->lost_count == j->lost_cap) {
            size_t cap = j->lost_cap ? 2 * j->lost_cap : 16;
            struct lost_range *l = realloc(j->lost, cap * sizeof *l);
            if (l) {
                j->lost = l;
                j->lost_cap = cap;
            }
        }
        if (j->lost_count < j->lost_cap)
            j->lost[j->lost_count++] = (struct lost_range){j->settled, j->appended, code};
    }
    j->settled = j->appended;
}

/* The code a discarded ticket answers with, or 0 when it is durable. Under j->mu. */
static int lost_code(const struct ps_journal *j, uint64_t ticket)
{
    size_t lo = 0, hi = j->lost_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (j->lost[mid].hi < ticket)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < j->lost_count && j->lost[lo].lo < ticket && ticket <= j->lost[lo].hi)
        return j->lost[lo].code;
    return 0;
}

/* The last part of a store message ("store PATH: what: SQLite's reason"): the reason, without
 * the data dir's path, is what a client may read. */
static void set_reason(struct ps_journal *j, const char *msg)
{
    const char *r = strrchr(msg, ':');
    r = r ? r + 1 : msg;
    while (*r == ' ')
        r++;
    snprintf(j->reason, sizeof j->reason, "%.150s", *r ? r : "unknown error");
}

/* After a failed commit: discard everything queued and rebuild the state from the store, with
 * the state lock held so that no handler appends or reads half of it meanwhile. Called and
 * returns with j->mu held; takes svc->mu first (the handlers' order: svc->mu, then j->mu). */
static void roll_back(struct ps_journal *j, int code, bool unreachable)
{
    struct ps_service *svc = j->svc;
    pthread_mutex_unlock(&j->mu);
    pthread_mutex_lock(&svc->mu);
    pthread_mutex_lock(&j->mu);
    discard_queued(j, code);
    bool reload = !j->stop;   /* stopping: the state is about to be freed */
    pthread_mutex_unlock(&j->mu);
    if (reload) {
        struct ps_error err;
        ps_error_init(&err);
        ps_store_mirror_roll_back(svc, unreachable, &err);
    }
    pthread_mutex_lock(&j->mu);
    pthread_cond_broadcast(&j->done_cv);
    pthread_mutex_unlock(&j->mu);
    pthread_mutex_unlock(&svc->mu);
    pthread_mutex_lock(&j->mu);
}

static void *writer(void *arg)
{
    struct ps_journal *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        while (!j->stop && j->count == 0 && !j->poisoned)
            pthread_cond_wait(&j->work_cv, &j->mu);
        if (j->count == 0 && !j->poisoned && j->stop) {
            if (j->pend_count == 0 && !j->cur)
                break;
            pthread_cond_wait(&j->work_cv, &j->mu);   /* the renders left land first */
            continue;
        }
        if (j->svc->cfg.commit_window_ms > 0 && !j->stop) {
            /* let more requests join this commit */
            pthread_mutex_unlock(&j->mu);
            ps_sleep_ms(j->svc->cfg.commit_window_ms);
            pthread_mutex_lock(&j->mu);
        }
        /* a handler appends its records under svc->mu: taking the batch under it too keeps
         * each handler's records in one commit (a start_op's operation and its event log row),
         * never split between two (lock order svc->mu, then j->mu, as the handlers'; nobody
         * waits for a ticket holding svc->mu) */
        pthread_mutex_unlock(&j->mu);
        pthread_mutex_lock(&j->svc->mu);
        pthread_mutex_lock(&j->mu);
        struct record *r = j->recs;
        size_t n = j->count;
        uint64_t from = j->settled, upto = j->appended;
        bool poisoned = j->poisoned;
        j->recs = NULL;
        j->count = j->cap = 0;
        pthread_mutex_unlock(&j->mu);
        pthread_mutex_unlock(&j->svc->mu);

        struct ps_error err;
        ps_error_init(&err);
        bool skipped = false;
        int rc = poisoned || render(r, n) != 0
                     ? ps_error_set(&err, PS_ENOMEM, "out of memory queueing a record")
                     : write_batch(j, r, n, from, &skipped, &err);
        free_recs(r, n);
        if (rc == 0)
            ps_metric_add(j->svc->m_commits, 1);

        pthread_mutex_lock(&j->mu);
        if (rc == 0) {
            j->settled = upto;
            j->backoff_ms = 0;
            pthread_cond_broadcast(&j->done_cv);
            continue;
        }
        int code = rc == PS_ENOSPC || rc == PS_ENOMEM ? rc : PS_EUNAVAIL;
        if (!skipped)   /* refused while the store is down: store_down was logged */
            ps_svc_log(j->svc, "error", "commit_failed",
                       "records=%zu cause=\"%s\" error=\"%s\" action=discarded_and_reloaded",
                       n, ps_error_code_name(code), err.msg);
        set_reason(j, err.msg);
        /* every ticket up to upto is in this batch or in an earlier, settled one; those queued
         * since may depend on it: all are discarded */
        roll_back(j, code, rc == PS_EUNAVAIL && !skipped);
        if (j->stop)
            continue;
        j->backoff_ms = j->backoff_ms ? 2 * j->backoff_ms : BACKOFF_MIN_MS;
        if (j->backoff_ms > BACKOFF_MAX_MS)
            j->backoff_ms = BACKOFF_MAX_MS;
        /* do not spin on a full or broken disk */
        int wait_ms = j->backoff_ms;
        pthread_mutex_unlock(&j->mu);
        ps_sleep_ms(wait_ms);
        pthread_mutex_lock(&j->mu);
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* Whether the queue has room for one more record (grown if need be). Under j->mu. */
static bool room(struct ps_journal *j)
{
    if (j->count < j->cap)
        return true;
    size_t cap = j->cap ? 2 * j->cap : 64;
    struct record *r = realloc(j->recs, cap * sizeof *r);
    if (!r)
        return false;
    j->recs = r;
    j->cap = cap;
    return true;
}

/* Makes the queued renders' texts, one at a time, off every lock, and queues each as a record
 * (after those queued meanwhile), unless a record of its key came after it or the queue was
 * discarded since (gen). */
static void *renderer(void *arg)
{
    struct ps_journal *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        while (!j->stop && j->pend_count == 0)
            pthread_cond_wait(&j->render_cv, &j->mu);
        if (j->pend_count == 0)
            break;   /* stopping, nothing left */
        struct pending p = j->pend[0];
        memmove(j->pend, j->pend + 1, --j->pend_count * sizeof *j->pend);
        uint64_t gen = j->gen;
        bool skip = p.cancelled;
        j->cur = &p;   /* put() may cancel it meanwhile, under j->mu */
        pthread_mutex_unlock(&j->mu);
        char *text = skip ? NULL : p.render->text(p.ctx);
        p.render->drop(p.ctx);
        pthread_mutex_lock(&j->mu);
        j->cur = NULL;
        /* out of memory (no room): the row is lost, nothing relies on it */
        if (text && !p.cancelled && gen == j->gen && room(j)) {
            j->recs[j->count++] = (struct record){p.kind, p.key, text, NULL, NULL};
        } else {
            free(text);
            free(p.kind);
            free(p.key);
        }
        pthread_cond_signal(&j->work_cv);
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
    pthread_cond_init(&j->render_cv, NULL);
    if (pthread_create(&j->thread, NULL, writer, j) != 0) {
        free(j);
        return ps_error_set(err, PS_EIO, "cannot start the journal thread");
    }
    if (pthread_create(&j->render_thread, NULL, renderer, j) != 0) {
        pthread_mutex_lock(&j->mu);
        j->stop = true;
        pthread_cond_broadcast(&j->work_cv);
        pthread_mutex_unlock(&j->mu);
        pthread_join(j->thread, NULL);
        free(j);
        return ps_error_set(err, PS_EIO, "cannot start the journal's render thread");
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
    pthread_cond_broadcast(&j->render_cv);
    pthread_mutex_unlock(&j->mu);
    pthread_join(j->render_thread, NULL);   /* renders what is queued, then the writer writes */
    pthread_join(j->thread, NULL);
    free_recs(j->recs, j->count);
    drop_pending(j);
    free(j->pend);
    free(j->lost);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->work_cv);
    pthread_cond_destroy(&j->done_cv);
    pthread_cond_destroy(&j->render_cv);
    free(j);
}

static uint64_t put(struct ps_journal *j, const char *kind, const char *key, char *text,
                    const struct ps_journal_renderer *render, void *ctx, bool lost, bool aside)
{
    char *k = strdup(kind), *y = strdup(key);
    pthread_mutex_lock(&j->mu);
    if (lost || !k || !y || !room(j)) {
        /* the change cannot be journalled: its batch fails like a failed commit, so that the
         * handler is refused and the state rolled back rather than the change silently kept in
         * memory only */
        j->poisoned = true;
        free(text);
        if (render)
            render->drop(ctx);
        free(k);
        free(y);
    } else {
        j->recs[j->count++] = (struct record){k, y, text, render, ctx};
        for (size_t i = 0; i < j->pend_count; i++)
            if (strcmp(j->pend[i].key, y) == 0 && strcmp(j->pend[i].kind, k) == 0)
                j->pend[i].cancelled = true;
        if (j->cur && strcmp(j->cur->key, y) == 0 && strcmp(j->cur->kind, k) == 0)
            j->cur->cancelled = true;
    }
    uint64_t t = ++j->appended;
    if (!aside)
        j->relied++;
    pthread_cond_signal(&j->work_cv);
    pthread_mutex_unlock(&j->mu);
    return t;
}

uint64_t ps_journal_put(struct ps_journal *j, const char *kind, const char *key, json_t *value)
{
    char *text = value ? json_dumps(value, JSON_COMPACT) : NULL;
    bool lost = value && !text;   /* NULL would mean a delete */
    json_decref(value);
    return put(j, kind, key, text, NULL, NULL, lost, false);
}

uint64_t ps_journal_put_aside(struct ps_journal *j, const char *kind, const char *key,
                              json_t *value)
{
    return put(j, kind, key, NULL, value ? &doc_renderer : NULL, value, false, true);
}

uint64_t ps_journal_put_aside_rendered(struct ps_journal *j, const char *kind, const char *key,
                                       const struct ps_journal_renderer *render, void *ctx)
{
    char *k = strdup(kind), *y = strdup(key);
    pthread_mutex_lock(&j->mu);
    if (k && y && j->pend_count == j->pend_cap) {
        size_t cap = j->pend_cap ? 2 * j->pend_cap : 8;
        struct pending *p = realloc(j->pend, cap * sizeof *p);
        if (p) {
            j->pend = p;
            j->pend_cap = cap;
        }
    }
    if (k && y && j->pend_count < j->pend_cap) {
        j->pend[j->pend_count++] = (struct pending){k, y, render, ctx, false};
        pthread_cond_signal(&j->render_cv);
    } else {   /* out of memory: the row is lost, nothing relies on it */
        render->drop(ctx);
        free(k);
        free(y);
    }
    uint64_t t = j->appended;
    pthread_mutex_unlock(&j->mu);
    return t;
}

uint64_t ps_journal_put_text(struct ps_journal *j, const char *kind, const char *key, char *text)
{
    return put(j, kind, key, text, NULL, NULL, !text, false);
}

bool ps_journal_refresh_due(struct ps_journal *j, int64_t now_ms)
{
    pthread_mutex_lock(&j->mu);
    bool due = j->backoff_ms == 0 || now_ms - j->last_refresh_ms >= PS_JOURNAL_REFRESH_PROBE_MS;
    if (due && j->backoff_ms != 0)
        j->last_refresh_ms = now_ms;
    pthread_mutex_unlock(&j->mu);
    return due;
}

uint64_t ps_journal_last(struct ps_journal *j)
{
    pthread_mutex_lock(&j->mu);
    uint64_t t = j->appended;
    pthread_mutex_unlock(&j->mu);
    return t;
}

uint64_t ps_journal_relied(struct ps_journal *j)
{
    pthread_mutex_lock(&j->mu);
    uint64_t n = j->relied;
    pthread_mutex_unlock(&j->mu);
    return n;
}

uint64_t ps_journal_committed(struct ps_journal *j)
{
    pthread_mutex_lock(&j->mu);
    uint64_t t = j->settled;
    pthread_mutex_unlock(&j->mu);
    return t;
}

int ps_journal_wait(struct ps_journal *j, uint64_t ticket, struct ps_error *err)
{
    pthread_mutex_lock(&j->mu);
    while (j->settled < ticket)
        pthread_cond_wait(&j->done_cv, &j->mu);
    int code = lost_code(j, ticket);
    int rc = 0;
    if (code == PS_ENOSPC)
        rc = ps_error_set(err, code,
                          "disk full: the change was not made (the scheduler's store could not "
                          "commit: %s); reads still work, and writes will once the data dir has "
                          "free space", j->reason);
    else if (code == PS_EUNAVAIL)
        rc = ps_error_set(err, code,
                          "storage unavailable: the change was not made (the scheduler's store "
                          "could not commit: %s); retry later", j->reason);
    else if (code != 0)
        rc = ps_error_set(err, code, "out of memory: the change was not made");
    pthread_mutex_unlock(&j->mu);
    return rc;
}
