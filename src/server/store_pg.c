/* store_pg.c — the PostgreSQL backend of the store (store.h), through libpq.
 *
 * One store is one connection. Tables as the SQLite backend's (objects, tokens), with
 * COLLATE "C" keys so that key order and prefix ranges are bytewise as there; values are the
 * `json` type, which checks the text and keeps it as written. Every call outside a transaction
 * is its own transaction (autocommit); commits are durable on return (the session forces
 * synchronous_commit=on whatever the server's default).
 *
 * Server-side timeouts (set per session): statement_timeout and lock_timeout bound a call that
 * waits on a lock or a slow server, idle_in_transaction_session_timeout ends a session that
 * holds a transaction open without using it (a paused or stuck client), so that it cannot
 * block everybody else's writes for longer than that.
 *
 * A broken connection (the server restarted, the network cut) fails the call with PS_EUNAVAIL;
 * the next call outside a transaction reconnects. A transaction in progress when the connection
 * broke is lost (the server rolled it back), so the calls in it fail until ps_store_rollback. A
 * commit whose answer was lost may have happened or not: it is reported as failed, so the
 * caller does not acknowledge it (an unacknowledged change may survive; an acknowledged one
 * always does).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "platform/clock.h"

#include "server/store_backend.h"

#define STATEMENT_TIMEOUT_MS 10000
#define LOCK_TIMEOUT_MS 5000
#define IDLE_IN_TX_TIMEOUT_MS 2000   /* a paused leader's open transaction blocks a takeover
                                      * (its FOR SHARE fence) for at most this long */
#define CONNECT_TIMEOUT_S "5"
/* a call that gets no answer for this long drops its connection: past the server's own
 * statement_timeout, so that only a silent network or server reaches it */
#define CALL_TIMEOUT_MS (STATEMENT_TIMEOUT_MS + 5000)

struct pg_store {
    struct ps_store base;   /* first: a struct ps_store * is a struct pg_store * */
    PGconn *conn;
    char *url;
    char sqlstate[6];   /* of the last failure, "" when there was none from the server */
    int call_timeout_ms;  /* exec_deadline's wait for an answer */
    const char *fence_sql;  /* the fence's statement (FOR SHARE; weaker only in fault tests) */
    bool exclusive;     /* holds the single-scheduler lock (below) */
    bool need_lock;     /* exclusive, and the lock is to be taken (again) before any call */
    int64_t named_epoch;  /* the session's application_name is "poolsched epoch N" (0: none):
                           * what a takeover terminates (op_leader_acquire) */
};

/* The single-scheduler guard: an exclusive store holds this session advisory lock, so a second
 * scheduler started on the same database by mistake is refused at start instead of writing
 * beside the first. It is a guard against misconfiguration, not a fence: a paused holder keeps
 * it for as long as its TCP connection lives (docs/ha.md). */
#define SINGLE_SCHEDULER_LOCK "7302"

static struct pg_store *pg(struct ps_store *s)
{
    return (struct pg_store *)s;   /* the ops table is ours: only our store reaches here */
}

/* The PostgreSQL migrations: the same tables as store_schema.c's, in this server's dialect. */
static const struct ps_store_migration pg_migrations[] = {
    {1, "objects",
     "CREATE TABLE objects ("
     "  kind  TEXT COLLATE \"C\" NOT NULL,"
     "  key   TEXT COLLATE \"C\" NOT NULL,"
     "  value JSON NOT NULL,"
     "  PRIMARY KEY (kind, key))"},
    {2, "tokens",
     "CREATE TABLE tokens ("
     "  token_sha256 TEXT COLLATE \"C\" NOT NULL PRIMARY KEY"
     "    CHECK (length(token_sha256) = 64),"
     "  \"user\"     TEXT NOT NULL CHECK (length(\"user\") > 0),"
     "  role         TEXT NOT NULL CHECK (role IN ('admin', 'user', 'node')));"
     "CREATE INDEX tokens_by_user ON tokens(\"user\")"},
    {3, "jobs_by_operation",
     /* job_archive.h: one operation's jobs without a scan of every job */
     "CREATE INDEX objects_job_by_operation"
     "  ON objects ((value->>'operation_id') COLLATE \"C\", key) WHERE kind = 'job'"},
    {4, "leader",
     /* leader election with fencing (store.h): one row; takeover_xid is the transaction of the
      * last takeover, for the fault suite's count of writes of an old epoch made after it */
     "CREATE TABLE leader ("
     "  id           INTEGER PRIMARY KEY CHECK (id = 1),"
     "  epoch        BIGINT NOT NULL,"
     "  holder       TEXT NOT NULL,"
     "  address      TEXT NOT NULL,"
     "  lease_until  TIMESTAMPTZ NOT NULL,"
     "  since        TIMESTAMPTZ NOT NULL,"
     "  takeover_xid BIGINT NOT NULL);"
     "INSERT INTO leader VALUES (1, 0, '', '', 'epoch', 'epoch', 0)"},
    {5, "objects_epoch",
     /* the leader epoch that wrote each object (0 without election): what the fault suite
      * counts to show that a deposed leader wrote nothing after the takeover */
     "ALTER TABLE objects ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0"},
    {6, "standbys",
     /* the standbys polling for the leader row, for the leader's view (alert: none is up) */
     "CREATE TABLE standbys ("
     "  holder    TEXT PRIMARY KEY,"
     "  address   TEXT NOT NULL,"
     "  last_seen TIMESTAMPTZ NOT NULL)"},
};

/* ---- errors -------------------------------------------------------------------------------- */

/* The PS_E* code of a failed result (NULL: no result at all, the connection failed). */
static int error_code(struct pg_store *s, const PGresult *r)
{
    if (PQstatus(s->conn) != CONNECTION_OK)
        return PS_EUNAVAIL;
    const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (!st)
        return PS_EUNAVAIL;   /* libpq's own failure: lost connection, out of memory */
    if (strcmp(st, "53100") == 0)
        return PS_ENOSPC;     /* disk_full */
    if (strcmp(st, "53200") == 0)
        return PS_ENOMEM;
    if (strcmp(st, "23505") == 0)
        return PS_EEXIST;     /* unique_violation */
    /* connection exceptions, operator intervention (shutdown, statement timeout), lock not
     * available (lock_timeout), transaction rollback (serialization, deadlock), insufficient
     * resources: the database cannot serve now, retry later */
    if (strncmp(st, "08", 2) == 0 || strncmp(st, "57", 2) == 0 || strcmp(st, "55P03") == 0 ||
        strncmp(st, "40", 2) == 0 || strncmp(st, "53", 2) == 0 || strcmp(st, "25P03") == 0)
        return PS_EUNAVAIL;
    if (strncmp(st, "22", 2) == 0 || strncmp(st, "23", 2) == 0)
        return PS_EINVAL;     /* data exception (bad JSON), integrity constraint */
    return PS_EIO;
}

/* Sets err from a failed result (r may be NULL), with what was being done. */
static int fail(struct pg_store *s, const PGresult *r, const char *what, struct ps_error *err)
{
    int code = error_code(s, r);
    const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    snprintf(s->sqlstate, sizeof s->sqlstate, "%s", st ? st : "");
    const char *msg = r ? PQresultErrorMessage(r) : "";
    if (!msg || !*msg)
        msg = PQerrorMessage(s->conn);
    char one[256];
    snprintf(one, sizeof one, "%s", msg && *msg ? msg : "unknown error");
    one[strcspn(one, "\n")] = '\0';
    /* the server ended the transaction: it is over here too. A broken connection keeps it
     * open here, so that the calls in it fail until ps_store_rollback (store.h) */
    if (s->base.in_tx && PQstatus(s->conn) == CONNECTION_OK &&
        PQtransactionStatus(s->conn) == PQTRANS_IDLE)
        s->base.in_tx = false;
    return ps_error_set(err, code, "store %s: %s: %s%s", s->base.path, what, one,
                        code == PS_EUNAVAIL ? " (store unavailable)" : "");
}

/* ---- connection ---------------------------------------------------------------------------- */

static void quiet_notices(void *arg, const char *message);

/* Runs sql (params as PQexecParams; n == 0: the simple protocol, which takes several
 * statements) and waits for its result at most s->call_timeout_ms: a connection that does not
 * answer by then (the network blackholes it, the server hangs) is dropped, so that no caller
 * (the lease renewal above all) waits on it for as long as TCP would. Returns the result (the
 * first failed one, else the last), or NULL when the connection broke or was dropped. */
static PGresult *exec_deadline(struct pg_store *s, const char *sql, int n,
                               const char *const *params)
{
    if (!s->conn)
        return NULL;
    int sent = n == 0 ? PQsendQuery(s->conn, sql)
                      : PQsendQueryParams(s->conn, sql, n, NULL, params, NULL, NULL, 0);
    if (!sent)
        return NULL;
    int64_t deadline = ps_clock_monotonic_ns() + (int64_t)s->call_timeout_ms * 1000000;
    while (PQconsumeInput(s->conn) && PQisBusy(s->conn)) {
        int64_t left_ms = (deadline - ps_clock_monotonic_ns()) / 1000000;
        if (left_ms <= 0) {
            /* no PQcancel: it would go the same silent way; the server ends the session by
             * its own timeouts, and a takeover ends it at once (op_leader_acquire) */
            PQfinish(s->conn);
            s->conn = NULL;   /* an open transaction stays open here: see fail() */
            return NULL;
        }
        struct pollfd pfd = {PQsocket(s->conn), POLLIN, 0};
        poll(&pfd, 1, left_ms > 1000 ? 1000 : (int)left_ms);
    }
    PGresult *keep = NULL, *r;
    while ((r = PQgetResult(s->conn)) != NULL) {
        ExecStatusType kst = keep ? PQresultStatus(keep) : PGRES_COMMAND_OK;
        if (kst != PGRES_COMMAND_OK && kst != PGRES_TUPLES_OK && kst != PGRES_EMPTY_QUERY) {
            PQclear(r);   /* the first failure is the one to report */
            continue;
        }
        PQclear(keep);
        keep = r;
    }
    return keep;
}

/* A new connection to s->url (blocking, at most CONNECT_TIMEOUT_S). */
static PGconn *connect_new(const char *url)
{
    const char *keys[] = {"dbname", "connect_timeout", "application_name", NULL};
    const char *vals[] = {url, CONNECT_TIMEOUT_S, "poolsched", NULL};
    return PQconnectdbParams(keys, vals, 1);
}

static int session_setup(struct pg_store *s, struct ps_error *err)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SET synchronous_commit = on; SET statement_timeout = %d; SET lock_timeout = %d;"
             " SET idle_in_transaction_session_timeout = %d; SET client_min_messages = warning;"
             " SET TIME ZONE 'UTC'",
             STATEMENT_TIMEOUT_MS, LOCK_TIMEOUT_MS, IDLE_IN_TX_TIMEOUT_MS);
    if (s->named_epoch > 0)
        snprintf(sql + strlen(sql), sizeof sql - strlen(sql),
                 "; SET application_name = 'poolsched epoch %lld'", (long long)s->named_epoch);
    PGresult *r = exec_deadline(s, sql, 0, NULL);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : fail(s, r, "cannot set up the session",
                                                             err);
    PQclear(r);
    return rc;
}

/* Takes the single-scheduler lock. Errors: PS_ESTATE when another session holds it. */
static int take_single_lock(struct pg_store *s, struct ps_error *err)
{
    PGresult *r = exec_deadline(s, "SELECT pg_try_advisory_lock(" SINGLE_SCHEDULER_LOCK ")", 0,
                                NULL);
    int rc = 0;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        rc = fail(s, r, "cannot take the single-scheduler lock", err);
    else if (strcmp(PQgetvalue(r, 0, 0), "t") != 0)
        rc = ps_error_set(err, PS_ESTATE,
                          "store %s is in use by another scheduler (one scheduler per database; "
                          "docs/ha.md)", s->base.path);
    PQclear(r);
    return rc;
}

/* Reconnects a broken connection outside a transaction; a broken one inside a transaction
 * fails (its writes are gone) until ps_store_rollback. */
static int ensure_connected(struct pg_store *s, struct ps_error *err)
{
    if (PQstatus(s->conn) != CONNECTION_OK) {
        if (s->base.in_tx)
            return ps_error_set(err, PS_EUNAVAIL,
                                "store %s: the connection broke during the transaction "
                                "(store unavailable)", s->base.path);
        if (s->conn)
            PQreset(s->conn);
        else if ((s->conn = connect_new(s->url)) != NULL)
            PQsetNoticeProcessor(s->conn, quiet_notices, NULL);
        if (PQstatus(s->conn) != CONNECTION_OK)
            return fail(s, NULL, "cannot reconnect", err);
        int rc = session_setup(s, err);
        if (rc)
            return rc;
        s->need_lock = s->exclusive;   /* the server dropped it with the old session */
    }
    if (s->need_lock) {
        int rc = take_single_lock(s, err);
        if (rc)
            return rc;
        s->need_lock = false;
    }
    return 0;
}

/* Runs sql with text parameters; *out gets the result when it succeeded (caller PQclears). */
static int run(struct pg_store *s, const char *sql, int n, const char *const *params,
               PGresult **out, const char *what, struct ps_error *err)
{
    if (out)
        *out = NULL;
    int rc = ensure_connected(s, err);
    if (rc)
        return rc;
    /* without parameters: the simple protocol, which takes several statements (migrations) */
    PGresult *r = exec_deadline(s, sql, n, params);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        char w[200];
        snprintf(w, sizeof w, "%s", what ? what : sql);
        rc = fail(s, r, w, err);
        PQclear(r);
        return rc;
    }
    if (out)
        *out = r;
    else
        PQclear(r);
    return 0;
}

/* ---- transactions -------------------------------------------------------------------------- */

/* The fence of a write transaction (store.h): the leader row FOR SHARE, which conflicts with
 * the takeover's UPDATE. Only a test weakens it, to show that it matters
 * (ps_store_pg_weaken_fence; nothing in the product calls it). */
#define FENCE_FOR_SHARE "SELECT epoch FROM leader WHERE id = 1 AND epoch = $1 FOR SHARE"
#define FENCE_FOR_KEY_SHARE "SELECT epoch FROM leader WHERE id = 1 AND epoch = $1 FOR KEY SHARE"

static const struct ps_store_ops pg_ops;   /* below */

int ps_store_pg_weaken_fence(struct ps_store *st, const char *mode)
{
    if (st->ops != &pg_ops)
        return PS_EINVAL;
    struct pg_store *s = (struct pg_store *)st;
    if (strcmp(mode, "key_share") == 0)
        s->fence_sql = FENCE_FOR_KEY_SHARE;
    else if (strcmp(mode, "none") == 0)
        s->fence_sql = NULL;
    else
        return PS_EINVAL;
    return 0;
}

static int check_fence(struct pg_store *s, struct ps_error *err)
{
    if (!s->fence_sql)
        return 0;
    char e[24];
    snprintf(e, sizeof e, "%lld", (long long)s->base.fence_epoch);
    const char *p[] = {e};
    PGresult *r;
    int rc = run(s, s->fence_sql, 1, p, &r, "cannot check the leader epoch", err);
    if (rc)
        return rc;
    if (PQntuples(r) == 0) {
        s->base.deposed = true;
        rc = ps_error_set(err, PS_ESTATE,
                          "store %s: deposed: epoch %s no longer leads (a standby took over); "
                          "nothing was written", s->base.path, e);
    }
    PQclear(r);
    return rc;
}

static int op_begin(struct ps_store *b, struct ps_error *err)
{
    struct pg_store *s = pg(b);
    int rc = run(s, "BEGIN", 0, NULL, NULL, "cannot begin a transaction", err);
    if (rc == 0)
        s->base.in_tx = true;
    if (rc == 0 && s->base.fence_epoch > 0 && (rc = check_fence(s, err)) != 0) {
        PGresult *r = exec_deadline(s, "ROLLBACK", 0, NULL);
        PQclear(r);
        s->base.in_tx = false;
    }
    return rc;
}

static int op_commit(struct ps_store *b, struct ps_error *err)
{
    struct pg_store *s = pg(b);
    PGresult *r = NULL;
    int rc = run(s, "COMMIT", 0, NULL, &r, "cannot commit", err);
    /* COMMIT of a failed transaction "succeeds" as ROLLBACK: that is a failure here */
    if (rc == 0 && strcmp(PQcmdStatus(r), "COMMIT") != 0)
        rc = ps_error_set(err, PS_EIO, "store %s: the transaction failed and was rolled back",
                          s->base.path);
    PQclear(r);
    if (PQtransactionStatus(s->conn) == PQTRANS_IDLE || PQstatus(s->conn) != CONNECTION_OK)
        s->base.in_tx = false;
    return rc;
}

static int op_rollback(struct ps_store *b, struct ps_error *err)
{
    struct pg_store *s = pg(b);
    if (!s->base.in_tx)
        return 0;
    s->base.in_tx = false;
    if (PQstatus(s->conn) != CONNECTION_OK)
        return 0;   /* the server rolled it back when the connection broke */
    PGresult *r = exec_deadline(s, "ROLLBACK", 0, NULL);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : fail(s, r, "cannot roll back", err);
    PQclear(r);
    return rc;
}

static int op_integrity(struct ps_store *b, struct ps_error *err)
{
    /* reads every row of both tables (a damaged page fails the read) */
    return run(pg(b), "SELECT count(*), sum(length(value::text)) FROM objects;"
                      " SELECT count(*) FROM tokens", 0, NULL, NULL,
               "fails its integrity check", err);
}

/* ---- objects ------------------------------------------------------------------------------- */

static int op_put(struct ps_store *b, const char *kind, const char *key, const char *value,
                  struct ps_error *err)
{
    struct pg_store *s = pg(b);
    char epoch[24];
    snprintf(epoch, sizeof epoch, "%lld", (long long)s->base.fence_epoch);
    const char *p[] = {kind, key, value, epoch};
    struct ps_error e;
    ps_error_init(&e);
    PGresult *r = NULL;
    int rc = run(s,
                 "INSERT INTO objects(kind, key, value, epoch) VALUES ($1, $2, $3::json, $4)"
                 " ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value,"
                 " epoch = excluded.epoch",
                 4, p, &r, "cannot write an object", &e);
    PQclear(r);
    if (rc == PS_EINVAL && strcmp(s->sqlstate, "22P02") == 0)   /* invalid_text_representation */
        return ps_error_set(err, PS_EINVAL, "object %s/%s: the value is not valid JSON", kind,
                            key);
    return rc ? ps_error_set(err, rc, "%s", e.msg) : 0;
}

static int op_get(struct ps_store *b, const char *kind, const char *key, char **value,
                  struct ps_error *err)
{
    const char *p[] = {kind, key};
    PGresult *r;
    int rc = run(pg(b), "SELECT value FROM objects WHERE kind = $1 AND key = $2", 2, p, &r,
                 "cannot read an object", err);
    if (rc)
        return rc;
    if (PQntuples(r) == 0)
        rc = ps_error_set(err, PS_ENOENT, "no object %s/%s in the store", kind, key);
    else if (!(*value = strdup(PQgetvalue(r, 0, 0))))
        rc = ps_error_set(err, PS_ENOMEM, "out of memory reading %s/%s", kind, key);
    PQclear(r);
    return rc;
}

static int op_del(struct ps_store *b, const char *kind, const char *key, struct ps_error *err)
{
    const char *p[] = {kind, key};
    PGresult *r;
    int rc = run(pg(b), "DELETE FROM objects WHERE kind = $1 AND key = $2", 2, p, &r,
                 "cannot delete an object", err);
    if (rc)
        return rc;
    if (strcmp(PQcmdTuples(r), "0") == 0)
        rc = ps_error_set(err, PS_ENOENT, "no object %s/%s in the store", kind, key);
    PQclear(r);
    return rc;
}

/* Calls fn per row (key, value) of r; the whole result is in memory, so fn may query. */
static int each_row(PGresult *r, ps_store_list_fn *fn, void *ctx)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < PQntuples(r); i++)
        rc = fn(PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), ctx);
    PQclear(r);
    return rc;
}

static int op_list(struct ps_store *b, const char *kind, const char *prefix, const char *upper,
                   ps_store_list_fn *fn, void *ctx, struct ps_error *err)
{
    const char *p[] = {kind, prefix, upper};
    PGresult *r;
    /* the upper end in the statement only when there is one: an index range with both ends */
    int rc = run(pg(b),
                 upper ? "SELECT key, value FROM objects WHERE kind = $1 AND key >= $2"
                         " AND key < $3 ORDER BY key"
                       : "SELECT key, value FROM objects WHERE kind = $1 AND key >= $2"
                         " ORDER BY key",
                 upper ? 3 : 2, p, &r, "cannot list objects", err);
    return rc ? rc : each_row(r, fn, ctx);
}

static int op_list_all(struct ps_store *b,
                       int (*fn)(const char *kind, const char *key, const char *value, void *ctx),
                       void *ctx, struct ps_error *err)
{
    PGresult *r;
    int rc = run(pg(b), "SELECT kind, key, value FROM objects ORDER BY kind, key", 0, NULL, &r,
                 "cannot list objects", err);
    for (int i = 0; rc == 0 && i < PQntuples(r); i++)
        rc = fn(PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2), ctx);
    PQclear(r);
    return rc;
}

/* ---- tokens -------------------------------------------------------------------------------- */

static int op_token_put(struct ps_store *b, const char *hash, const char *user, const char *role,
                        struct ps_error *err)
{
    const char *p[] = {hash, user, role};
    PGresult *r;
    int rc = run(pg(b),
                 "INSERT INTO tokens(token_sha256, \"user\", role) VALUES ($1, $2, $3)"
                 " ON CONFLICT (token_sha256) DO NOTHING",
                 3, p, &r, "cannot add a token", err);
    if (rc)
        return rc;
    if (strcmp(PQcmdTuples(r), "0") == 0)
        rc = ps_error_set(err, PS_EEXIST, "this token exists already");
    PQclear(r);
    return rc;
}

static int op_token_delete(struct ps_store *b, const char *hash, struct ps_error *err)
{
    const char *p[] = {hash};
    PGresult *r;
    int rc = run(pg(b), "DELETE FROM tokens WHERE token_sha256 = $1", 1, p, &r,
                 "cannot delete a token", err);
    if (rc)
        return rc;
    if (strcmp(PQcmdTuples(r), "0") == 0)
        rc = ps_error_set(err, PS_ENOENT, "no such token");
    PQclear(r);
    return rc;
}

static int op_token_get(struct ps_store *b, const char *hash, char *hash_out, size_t hash_cap,
                        char *user_out, size_t user_cap, char *role_out, size_t role_cap,
                        struct ps_error *err)
{
    const char *p[] = {hash};
    PGresult *r;
    int rc = run(pg(b), "SELECT token_sha256, \"user\", role FROM tokens WHERE token_sha256 = $1",
                 1, p, &r, "cannot read a token", err);
    if (rc)
        return rc;
    if (PQntuples(r) == 0) {
        rc = ps_error_set(err, PS_ENOENT, "no such token");
    } else {
        snprintf(hash_out, hash_cap, "%s", PQgetvalue(r, 0, 0));
        snprintf(user_out, user_cap, "%s", PQgetvalue(r, 0, 1));
        snprintf(role_out, role_cap, "%s", PQgetvalue(r, 0, 2));
    }
    PQclear(r);
    return rc;
}

/* ---- jobs by operation --------------------------------------------------------------------- */

static int op_jobs(struct ps_store *b, const char *operation_id, enum ps_store_job_order order,
                   ps_store_list_fn *fn, void *ctx, struct ps_error *err)
{
    /* the index's expression and predicate as written in migration 3, so that it applies;
     * NULLS FIRST as SQLite orders a missing finish_time */
    static const char *const by_key =
        "SELECT key, value FROM objects WHERE kind = 'job'"
        " AND (value->>'operation_id') COLLATE \"C\" = $1 ORDER BY key";
    static const char *const by_finish =
        "SELECT key, value FROM objects WHERE kind = 'job'"
        " AND (value->>'operation_id') COLLATE \"C\" = $1"
        " ORDER BY (value->>'finish_time')::numeric NULLS FIRST, key";
    const char *p[] = {operation_id};
    PGresult *r;
    int rc = run(pg(b), order == PS_STORE_JOBS_BY_FINISH ? by_finish : by_key, 1, p, &r,
                 "cannot list the jobs of an operation", err);
    return rc ? rc : each_row(r, fn, ctx);
}

/* ---- open, migrate, close ------------------------------------------------------------------ */

static void op_close(struct ps_store *b)
{
    struct pg_store *s = pg(b);
    if (s->conn) {
        if (s->base.in_tx)
            op_rollback(b, NULL);
        /* explicitly: the server drops a closed session's locks only when its backend is gone,
         * which may be after a scheduler restarted at once asks for it again */
        if (s->exclusive && !s->need_lock && PQstatus(s->conn) == CONNECTION_OK)
            PQclear(exec_deadline(s, "SELECT pg_advisory_unlock(" SINGLE_SCHEDULER_LOCK ")", 0,
                                  NULL));
        PQfinish(s->conn);
    }
    free(s->url);
    free(s->base.path);
    free(s);
}

static int migrate(struct pg_store *s, struct ps_error *err)
{
    size_t count = sizeof pg_migrations / sizeof *pg_migrations;
    /* One transaction for all of them, under an advisory lock, so that two schedulers starting
     * together on an empty database do not both create the tables. */
    int rc = op_begin(&s->base, err);
    if (!rc)
        rc = run(s, "SELECT pg_advisory_xact_lock(7301)", 0, NULL, NULL,
                 "cannot lock the schema", err);
    if (!rc)
        rc = run(s, "CREATE TABLE IF NOT EXISTS schema_version ("
                    " version INTEGER PRIMARY KEY, name TEXT NOT NULL)", 0, NULL, NULL,
                 "cannot create schema_version", err);
    PGresult *r = NULL;
    if (!rc)
        rc = run(s, "SELECT COALESCE(MAX(version), 0) FROM schema_version", 0, NULL, &r,
                 "cannot read the schema version", err);
    int current = r ? atoi(PQgetvalue(r, 0, 0)) : 0;
    PQclear(r);
    int known = pg_migrations[count - 1].version;
    if (!rc && current > known)
        rc = ps_error_set(err, PS_ESTATE,
                          "store %s has schema version %d, newer than this poolsched knows "
                          "(%d): use a newer poolsched", s->base.path, current, known);
    for (size_t i = 0; !rc && i < count; i++) {
        const struct ps_store_migration *m = &pg_migrations[i];
        if (m->version <= current)
            continue;
        char v[16];
        snprintf(v, sizeof v, "%d", m->version);
        const char *p[] = {v, m->name};
        rc = run(s, m->sql, 0, NULL, NULL, NULL, err);
        if (!rc)
            rc = run(s, "INSERT INTO schema_version(version, name) VALUES ($1, $2)", 2, p, NULL,
                     NULL, err);
        if (rc)
            ps_error_prefix(err, "migration %d (%s) of the store schema failed", m->version,
                            m->name);
        else
            current = m->version;
    }
    if (!rc)
        rc = op_commit(&s->base, err);
    if (rc)
        op_rollback(&s->base, NULL);
    else
        s->base.schema_version = current;
    return rc;
}

static void quiet_notices(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* ---- leader election (store.h) ------------------------------------------------------------- */

/* Names the session after the epoch it serves ("poolsched epoch N"), so that the next takeover
 * can end it: a leader paused in the middle of a transaction holds the fence's row lock, and
 * the server's idle-in-transaction timeout does not end a session that is in the middle of a
 * statement. */
static void op_name_epoch(struct ps_store *b, int64_t epoch)
{
    struct pg_store *s = pg(b);
    s->named_epoch = epoch;
    char sql[96];
    snprintf(sql, sizeof sql, "SET application_name = 'poolsched epoch %lld'", (long long)epoch);
    if (PQstatus(s->conn) == CONNECTION_OK)
        PQclear(exec_deadline(s, sql, 0, NULL));   /* else session_setup names it on reconnect */
}

static int op_leader_get(struct ps_store *b, struct ps_store_leader *out, struct ps_error *err)
{
    PGresult *r;
    int rc = run(pg(b),
                 "SELECT epoch, holder, address,"
                 " floor(extract(epoch FROM lease_until - clock_timestamp()) * 1000)::bigint,"
                 " floor(extract(epoch FROM since) * 1000)::bigint,"
                 " (SELECT count(*) FROM standbys WHERE holder <> leader.holder"
                 "  AND last_seen > clock_timestamp() - interval '2 seconds'),"
                 " (SELECT coalesce(string_agg(address, ',' ORDER BY address), '') FROM standbys"
                 "  WHERE holder <> leader.holder"
                 "  AND last_seen > clock_timestamp() - interval '2 seconds')"
                 " FROM leader WHERE id = 1",
                 0, NULL, &r, "cannot read the leader row", err);
    if (rc)
        return rc;
    if (PQntuples(r) == 1) {
        out->epoch = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        snprintf(out->holder, sizeof out->holder, "%s", PQgetvalue(r, 0, 1));
        snprintf(out->address, sizeof out->address, "%s", PQgetvalue(r, 0, 2));
        out->lease_left_ms = strtoll(PQgetvalue(r, 0, 3), NULL, 10);
        out->since_ms = strtoll(PQgetvalue(r, 0, 4), NULL, 10);
        out->standbys = atoi(PQgetvalue(r, 0, 5));
        snprintf(out->standby_addresses, sizeof out->standby_addresses, "%s",
                 PQgetvalue(r, 0, 6));
    }
    PQclear(r);
    return 0;
}

static int op_leader_acquire(struct ps_store *b, const char *holder, const char *address,
                             int lease_ms, int64_t *epoch, struct ps_error *err)
{
    char lease[16];
    snprintf(lease, sizeof lease, "%d", lease_ms);
    const char *p[] = {holder, address, lease};
    PGresult *r;
    /* The lease has expired: end the old epoch's stuck sessions first — those in a transaction
     * that began before the lease ran out, or that have not moved for a second (a paused leader
     * holds the fence's row lock, even inside a statement, for as long as it is paused). Their
     * transactions roll back, unacknowledged. A transaction of the old epoch that is under way
     * is waited for (the fence's FOR SHARE); it cannot commit after the takeover. Needs the
     * right to signal them: the same role, or pg_signal_backend. */
    int rc = run(pg(b),
                 "SELECT count(pg_terminate_backend(a.pid)) FROM pg_stat_activity a, leader l"
                 " WHERE l.id = 1 AND l.epoch > 0 AND l.lease_until < clock_timestamp()"
                 " AND a.application_name = 'poolsched epoch ' || l.epoch"
                 " AND a.pid <> pg_backend_pid() AND a.xact_start IS NOT NULL"
                 " AND (a.xact_start < l.lease_until"
                 "      OR a.state_change < clock_timestamp() - interval '1 second')",
                 0, NULL, NULL, "cannot end the sessions of the expired leader", err);
    if (rc)
        return rc;
    /* clock_timestamp, not now(): a takeover that waited for a fenced write transaction must
     * judge the lease, and start its own, at the time it actually runs. holder = $1: this
     * standby won before but the answer was lost with its connection; it takes epoch + 1. */
    rc = run(pg(b),
                 "UPDATE leader SET epoch = epoch + 1, holder = $1, address = $2,"
                 " lease_until = clock_timestamp() + $3 * interval '1 millisecond',"
                 " since = clock_timestamp(), takeover_xid = txid_current()"
                 " WHERE id = 1 AND (lease_until < clock_timestamp() OR holder = $1)"
                 " RETURNING epoch",
                 3, p, &r, "cannot take over the leader row", err);
    if (rc)
        return rc;
    if (PQntuples(r) == 1) {
        *epoch = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        PQclear(r);
        op_name_epoch(b, *epoch);
        return 0;
    }
    PQclear(r);
    /* a standby: it says so, for the leader's count (ps_store_leader.standbys) */
    PQclear(exec_deadline(pg(b),
                          "INSERT INTO standbys VALUES ($1, $2, clock_timestamp())"
                          " ON CONFLICT (holder) DO UPDATE SET address = excluded.address,"
                          " last_seen = excluded.last_seen",
                          2, p));
    struct ps_store_leader l;
    memset(&l, 0, sizeof l);
    op_leader_get(b, &l, NULL);
    return ps_error_set(err, PS_ESTATE, "%s (%s) leads, epoch %lld, lease %lld ms left",
                        l.holder, l.address, (long long)l.epoch, (long long)l.lease_left_ms);
}

static int op_leader_renew(struct ps_store *b, int64_t epoch, int lease_ms, struct ps_error *err)
{
    char e[24], lease[16];
    snprintf(e, sizeof e, "%lld", (long long)epoch);
    snprintf(lease, sizeof lease, "%d", lease_ms);
    const char *p[] = {e, lease};
    PGresult *r;
    int rc = run(pg(b),
                 "UPDATE leader SET lease_until = clock_timestamp() + $2 * interval '1 millisecond'"
                 " WHERE id = 1 AND epoch = $1",
                 2, p, &r, "cannot renew the leader's lease", err);
    if (rc)
        return rc;
    if (strcmp(PQcmdTuples(r), "1") != 0)
        rc = ps_error_set(err, PS_ESTATE, "deposed: epoch %s no longer leads", e);
    PQclear(r);
    return rc;
}

static const struct ps_store_ops pg_ops = {
    .name = "postgresql",
    .close = op_close,
    .begin = op_begin,
    .commit = op_commit,
    .rollback = op_rollback,
    .integrity_check = op_integrity,
    .put = op_put,
    .get = op_get,
    .del = op_del,
    .list = op_list,
    .list_all = op_list_all,
    .token_put = op_token_put,
    .token_delete = op_token_delete,
    .token_get = op_token_get,
    .jobs_of_operation = op_jobs,
    .leader_acquire = op_leader_acquire,
    .leader_renew = op_leader_renew,
    .leader_get = op_leader_get,
    .name_epoch = op_name_epoch,
};

int ps_store_pg_open(const struct ps_store_config *cfg, struct ps_store **out,
                     struct ps_error *err)
{
    *out = NULL;
    char *why = NULL;
    PQconninfoOption *opts = PQconninfoParse(cfg->url, &why);
    if (!opts) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", why ? why : "out of memory");
        msg[strcspn(msg, "\n")] = '\0';
        PQfreemem(why);
        return ps_error_set(err, PS_EINVAL, "store: not a valid libpq URI: %s", msg);
    }
    PQconninfoFree(opts);
    struct pg_store *s = calloc(1, sizeof *s);
    if (!s || !(s->url = strdup(cfg->url))) {
        free(s);
        return ps_error_set(err, PS_ENOMEM, "out of memory opening the store");
    }
    s->base.ops = &pg_ops;
    /* the URI may carry a password: messages name the server without it */
    s->call_timeout_ms = cfg->call_timeout_ms > 0 ? cfg->call_timeout_ms : CALL_TIMEOUT_MS;
    s->conn = connect_new(cfg->url);
    if (!s->conn) {
        op_close(&s->base);
        return ps_error_set(err, PS_ENOMEM, "out of memory opening the store");
    }
    char path[512];
    snprintf(path, sizeof path, "postgresql://%s@%s:%s/%s", PQuser(s->conn) ? PQuser(s->conn) : "",
             PQhost(s->conn) ? PQhost(s->conn) : "", PQport(s->conn) ? PQport(s->conn) : "",
             PQdb(s->conn) ? PQdb(s->conn) : "");
    s->base.path = strdup(path);
    if (!s->base.path) {
        op_close(&s->base);
        return ps_error_set(err, PS_ENOMEM, "out of memory opening the store");
    }
    if (PQstatus(s->conn) != CONNECTION_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", PQerrorMessage(s->conn));
        msg[strcspn(msg, "\n")] = '\0';
        ps_error_set(err, PS_EUNAVAIL, "cannot connect to the store %s: %s (store unavailable)",
                     s->base.path, msg);
        op_close(&s->base);
        return PS_EUNAVAIL;
    }
    PQsetNoticeProcessor(s->conn, quiet_notices, NULL);
    s->exclusive = s->need_lock = cfg->exclusive;
    s->fence_sql = FENCE_FOR_SHARE;
    int rc = session_setup(s, err);
    if (!rc && s->exclusive)
        rc = ensure_connected(s, err);
    if (!rc)
        rc = migrate(s, err);
    if (rc) {
        op_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}
