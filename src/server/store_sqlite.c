/* store_sqlite.c — the embedded SQLite backend of the store (store.h; the default). */
#include "server/store_sqlite.h"
#include "server/store_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/private_file.h"

struct cached_stmt {
    char *sql;
    sqlite3_stmt *stmt;
};

struct sqlite_store {
    struct ps_store base;   /* first: a struct ps_store * is a struct sqlite_store * */
    sqlite3 *db;
    struct cached_stmt *stmts;
    size_t stmt_count, stmt_cap;
};

static const struct ps_store_ops sqlite_ops;
static void sq_close(struct sqlite_store *s);

/* The SQLite store behind s (NULL for another backend). */
static struct sqlite_store *lite(struct ps_store *s)
{
    return (struct sqlite_store *)s;   /* the ops table is ours: only our store reaches here */
}

/* The PS_E* code of a failed SQLite call. A full disk is PS_ENOSPC: SQLite reports a write()
 * that hit ENOSPC, or wrote short, as SQLITE_FULL, and an I/O error whose system errno is
 * ENOSPC or EDQUOT (fsync, ftruncate, the -shm file) is the same cause for the caller. */
static int error_code(struct sqlite_store *s, int rc)
{
    int primary = rc & 0xff;
    if (primary == SQLITE_NOMEM)
        return PS_ENOMEM;
    if (primary == SQLITE_CONSTRAINT)
        return PS_EINVAL;
    if (primary == SQLITE_FULL)
        return PS_ENOSPC;
    if (primary == SQLITE_IOERR) {
        int sys = sqlite3_system_errno(s->db);
        if (sys == ENOSPC || sys == EDQUOT)
            return PS_ENOSPC;
    }
    return PS_EIO;
}

/* Sets err from SQLite's last error on the connection, with what was being done. */
static int sql_fail(struct sqlite_store *s, int rc, const char *what, struct ps_error *err)
{
    int code = error_code(s, rc);
    /* SQLite rolls back by itself after some errors (I/O, full disk, ...): keep in step. */
    if (s->base.in_tx && sqlite3_get_autocommit(s->db))
        s->base.in_tx = false;
    const char *msg = sqlite3_errmsg(s->db);
    /* SQLite says "disk I/O error" when an fsync, ftruncate or the -shm file hit ENOSPC */
    return ps_error_set(err, code, "store %s: %s: %s%s", s->base.path, what, msg,
                        code == PS_ENOSPC && !strstr(msg, "full") ? " (disk full)" : "");
}

/* ---- statements ---------------------------------------------------------------------------- */

static int sq_prepare(struct sqlite_store *s, const char *sql, sqlite3_stmt **out,
                     struct ps_error *err)
{
    *out = NULL;
    for (size_t i = 0; i < s->stmt_count; i++) {
        if (strcmp(s->stmts[i].sql, sql) == 0) {
            sqlite3_reset(s->stmts[i].stmt);
            sqlite3_clear_bindings(s->stmts[i].stmt);
            *out = s->stmts[i].stmt;
            return 0;
        }
    }
    if (s->stmt_count == s->stmt_cap) {
        size_t cap = s->stmt_cap ? 2 * s->stmt_cap : 16;
        struct cached_stmt *cs = realloc(s->stmts, cap * sizeof *cs);
        if (!cs)
            return ps_error_set(err, PS_ENOMEM, "out of memory caching a statement");
        s->stmts = cs;
        s->stmt_cap = cap;
    }
    char *copy = strdup(sql);
    if (!copy)
        return ps_error_set(err, PS_ENOMEM, "out of memory caching a statement");
    sqlite3_stmt *stmt;
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
    if (rc != SQLITE_OK) {
        free(copy);
        return sql_fail(s, rc, "cannot prepare a statement", err);
    }
    s->stmts[s->stmt_count++] = (struct cached_stmt){ copy, stmt };
    *out = stmt;
    return 0;
}

static int sq_step(struct sqlite_store *s, sqlite3_stmt *stmt, struct ps_error *err)
{
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    char what[160];
    snprintf(what, sizeof what, "statement '%.120s' failed", sqlite3_sql(stmt));
    int r = sql_fail(s, rc, what, err);
    sqlite3_reset(stmt);
    return r;
}

static int sq_exec(struct sqlite_store *s, const char *sql, struct ps_error *err)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        return 0;
    int code = error_code(s, rc);
    if (code == PS_EINVAL)
        code = PS_EIO;   /* a constraint failing in raw SQL (a migration) is not bad input */
    if (s->base.in_tx && sqlite3_get_autocommit(s->db))
        s->base.in_tx = false;
    const char *why = msg ? msg : sqlite3_errstr(rc);
    ps_error_set(err, code, "store %s: '%.120s' failed: %s%s", s->base.path, sql, why,
                 code == PS_ENOSPC && !strstr(why, "full") ? " (disk full)" : "");
    sqlite3_free(msg);
    return code;
}

/* ---- transactions -------------------------------------------------------------------------- */

static int sq_begin(struct sqlite_store *s, struct ps_error *err)
{
    if (s->base.in_tx)
        return ps_error_set(err, PS_ESTATE, "store %s: a transaction is open already", s->base.path);
    int rc = sq_exec(s, "BEGIN IMMEDIATE", err);
    if (rc == 0)
        s->base.in_tx = true;
    return rc;
}

static int sq_commit(struct sqlite_store *s, struct ps_error *err)
{
    if (!s->base.in_tx)
        return ps_error_set(err, PS_ESTATE, "store %s: commit without a transaction", s->base.path);
    int rc = sq_exec(s, "COMMIT", err);
    if (rc == 0 || sqlite3_get_autocommit(s->db))
        s->base.in_tx = false;
    return rc;
}

static int sq_rollback(struct sqlite_store *s, struct ps_error *err)
{
    if (!s->base.in_tx || sqlite3_get_autocommit(s->db)) {
        s->base.in_tx = false;
        return 0;
    }
    int rc = sq_exec(s, "ROLLBACK", err);
    s->base.in_tx = !sqlite3_get_autocommit(s->db);
    return rc;
}

/* ---- open, migrate, close ------------------------------------------------------------------ */

static int pragma_text(struct sqlite_store *s, const char *sql, char *out, size_t cap,
                       struct ps_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK)
        return sql_fail(s, rc, sql, err);
    rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) {
        int r = sql_fail(s, rc, sql, err);
        sqlite3_finalize(stmt);
        return r;
    }
    const unsigned char *t = sqlite3_column_text(stmt, 0);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
    sqlite3_finalize(stmt);
    return 0;
}

static int read_version(struct sqlite_store *s, int *version, struct ps_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT COALESCE(MAX(version), 0) FROM schema_version", &stmt,
                              err);
    if (rc)
        return rc;
    rc = sq_step(s, stmt, err);
    if (rc < 0)
        return rc;
    *version = sqlite3_column_int(stmt, 0);
    sqlite3_reset(stmt);
    return 0;
}

static int migrate(struct sqlite_store *s, const struct ps_store_migration *m, size_t count,
                   struct ps_error *err)
{
    int rc = sq_exec(s,
                           "CREATE TABLE IF NOT EXISTS schema_version ("
                           " version INTEGER PRIMARY KEY,"
                           " name TEXT NOT NULL)",
                           err);
    if (rc)
        return rc;
    int current;
    rc = read_version(s, &current, err);
    if (rc)
        return rc;
    int known = count ? m[count - 1].version : 0;
    if (current > known)
        return ps_error_set(err, PS_ESTATE,
                            "store %s has schema version %d, newer than this poolsched knows "
                            "(%d): use a newer poolsched", s->base.path, current, known);
    for (size_t i = 0; i < count; i++) {
        if (m[i].version != (int)i + 1)
            return ps_error_set(err, PS_EINVAL,
                                "migration %zu has version %d, expected %zu (a bug)", i,
                                m[i].version, i + 1);
        if (m[i].version <= current)
            continue;
        rc = sq_begin(s, err);
        if (!rc)
            rc = sq_exec(s, m[i].sql, err);
        if (!rc) {
            sqlite3_stmt *ins;
            rc = sq_prepare(s, "INSERT INTO schema_version(version, name) VALUES (?1, ?2)",
                                  &ins, err);
            if (!rc) {
                sqlite3_bind_int(ins, 1, m[i].version);
                sqlite3_bind_text(ins, 2, m[i].name, -1, SQLITE_STATIC);
                rc = sq_step(s, ins, err);
                sqlite3_reset(ins);
            }
        }
        if (!rc)
            rc = sq_commit(s, err);
        if (rc) {
            sq_rollback(s, NULL);
            ps_error_prefix(err, "migration %d (%s) of the store schema failed", m[i].version,
                            m[i].name);
            return rc;
        }
        current = m[i].version;
    }
    s->base.schema_version = current;
    return 0;
}

int ps_store_sqlite_open(const struct ps_store_config *cfg, struct ps_store **out,
                         struct ps_error *err)
{
    *out = NULL;
    int rc;
    struct sqlite_store *s = calloc(1, sizeof *s);
    size_t n = cfg->memory ? sizeof ":memory:"
                           : strlen(cfg->data_dir) + sizeof "/" PS_STORE_FILE_NAME;
    if (!s || !(s->base.path = malloc(n))) {
        free(s);
        return ps_error_set(err, PS_ENOMEM, "out of memory opening the store");
    }
    s->base.ops = &sqlite_ops;
    if (cfg->memory)
        snprintf(s->base.path, n, ":memory:");
    else
        snprintf(s->base.path, n, "%s/%s", cfg->data_dir, PS_STORE_FILE_NAME);

    /* Create the file ourselves so it is private from the start (it holds token hashes);
     * SQLite gives the -wal and -shm files the same mode. */
    if (!cfg->memory && (rc = ps_private_file_create(s->base.path, "the store", err)) != 0) {
        sq_close(s);
        return rc;
    }

    rc = sqlite3_open_v2(s->base.path, &s->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        ps_error_set(err, PS_EIO, "cannot open the store %s: %s", s->base.path,
                     s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        sq_close(s);
        return PS_EIO;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, cfg->busy_timeout_ms > 0 ? cfg->busy_timeout_ms
                                                         : PS_STORE_DEFAULT_BUSY_TIMEOUT_MS);
    char mode[32];
    rc = cfg->memory ? 0 : pragma_text(s, "PRAGMA journal_mode=WAL", mode, sizeof mode, err);
    if (!rc && !cfg->memory && strcmp(mode, "wal") != 0)
        rc = ps_error_set(err, PS_EIO, "store %s: cannot use WAL journal mode (got '%s')",
                          s->base.path, mode);
    if (!rc)
        rc = sq_exec(s, cfg->memory ? "PRAGMA foreign_keys=ON"
                                    : "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON", err);
    const struct ps_store_migration *m = cfg->migrations;
    size_t count = cfg->migration_count;
    if (!m)
        m = ps_store_builtin_migrations(&count);
    if (!rc)
        rc = migrate(s, m, count, err);
    if (rc) {
        sq_close(s);
        return rc;
    }
    *out = &s->base;
    return 0;
}

static void sq_close(struct sqlite_store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->stmt_count; i++) {
        sqlite3_finalize(s->stmts[i].stmt);
        free(s->stmts[i].sql);
    }
    free(s->stmts);
    if (s->db) {
        if (s->base.in_tx)
            sq_rollback(s, NULL);
        sqlite3_close(s->db);
    }
    free(s->base.path);
    free(s);
}

static int sq_integrity_check(struct sqlite_store *s, struct ps_error *err)
{
    char result[256];
    int rc = pragma_text(s, "PRAGMA integrity_check", result, sizeof result, err);
    if (rc)
        return rc;
    if (strcmp(result, "ok") != 0)
        return ps_error_set(err, PS_EIO, "store %s fails its integrity check: %s", s->base.path,
                            result);
    return 0;
}

/* ---- objects ------------------------------------------------------------------------------- */

static int sq_put(struct sqlite_store *s, const char *kind, const char *key, const char *value,
                  struct ps_error *err)
{
    sqlite3_stmt *st;
    int rc = sq_prepare(s,
                          "INSERT INTO objects(kind, key, value) VALUES (?1, ?2, ?3)"
                          " ON CONFLICT(kind, key) DO UPDATE SET value = excluded.value",
                          &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, value, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    if (step == SQLITE_DONE) {
        sqlite3_reset(st);
        return 0;
    }
    if ((step & 0xff) == SQLITE_CONSTRAINT) {
        sqlite3_reset(st);
        return ps_error_set(err, PS_EINVAL, "object %s/%s: the value is not valid JSON", kind,
                            key);
    }
    char what[160];
    snprintf(what, sizeof what, "cannot write object %.60s/%.60s", kind, key);
    rc = sql_fail(s, step, what, err);
    sqlite3_reset(st);
    return rc;
}

static int sq_get(struct sqlite_store *s, const char *kind, const char *key, char **value,
                  struct ps_error *err)
{
    sqlite3_stmt *st;
    int rc = sq_prepare(s, "SELECT value FROM objects WHERE kind = ?1 AND key = ?2", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    rc = sq_step(s, st, err);
    if (rc == 0) {
        rc = ps_error_set(err, PS_ENOENT, "no object %s/%s in the store", kind, key);
    } else if (rc == 1) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        *value = strdup(v ? v : "");
        rc = *value ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory reading %s/%s", kind, key);
    }
    sqlite3_reset(st);
    return rc;
}

static int sq_delete(struct sqlite_store *s, const char *kind, const char *key,
                     struct ps_error *err)
{
    sqlite3_stmt *st;
    int rc = sq_prepare(s, "DELETE FROM objects WHERE kind = ?1 AND key = ?2", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    rc = sq_step(s, st, err);
    sqlite3_reset(st);
    if (rc < 0)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return ps_error_set(err, PS_ENOENT, "no object %s/%s in the store", kind, key);
    return 0;
}

static int sq_list(struct sqlite_store *s, const char *kind, const char *prefix,
                   const char *upper, ps_store_list_fn *fn, void *ctx, struct ps_error *err)
{
    sqlite3_stmt *st;
    /* Two statements: with "(?3 IS NULL OR key < ?3)" the range scan has no upper end, and a
     * range near a kind's first key read every later key of the kind. */
    int rc = sq_prepare(s,
                        upper ? "SELECT key, value FROM objects WHERE kind = ?1 AND key >= ?2"
                                " AND key < ?3 ORDER BY key"
                              : "SELECT key, value FROM objects WHERE kind = ?1 AND key >= ?2"
                                " ORDER BY key",
                        &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, prefix, -1, SQLITE_STATIC);
    if (upper)
        sqlite3_bind_text(st, 3, upper, -1, SQLITE_STATIC);
    while ((rc = sq_step(s, st, err)) == 1) {
        rc = fn((const char *)sqlite3_column_text(st, 0),
                (const char *)sqlite3_column_text(st, 1), ctx);
        if (rc)
            break;
    }
    sqlite3_reset(st);
    return rc;
}

static int sq_list_all(struct sqlite_store *s,
                       int (*fn)(const char *kind, const char *key, const char *value, void *ctx),
                       void *ctx, struct ps_error *err)
{
    sqlite3_stmt *st;
    int rc = sq_prepare(s, "SELECT kind, key, value FROM objects ORDER BY kind, key", &st, err);
    if (rc)
        return rc;
    while ((rc = sq_step(s, st, err)) == 1) {
        rc = fn((const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
                (const char *)sqlite3_column_text(st, 2), ctx);
        if (rc)
            break;
    }
    sqlite3_reset(st);
    return rc;
}

/* ---- tokens -------------------------------------------------------------------------------- */

static int sq_token_put(struct sqlite_store *s, const char *hash, const char *user,
                        const char *role, struct ps_error *err)
{
    sqlite3_stmt *st;
    int rc = sq_prepare(s,
                        "INSERT INTO tokens(token_sha256, user, role) VALUES (?1, ?2, ?3)"
                        " ON CONFLICT(token_sha256) DO NOTHING",
                        &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, user, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, role, -1, SQLITE_STATIC);
    rc = sq_step(s, st, err);
    sqlite3_reset(st);
    if (rc < 0)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return ps_error_set(err, PS_EEXIST, "this token exists already");
    return 0;
}

static int sq_token_delete(struct sqlite_store *s, const char *hash, struct ps_error *err)
{
    sqlite3_stmt *st;
    int rc = sq_prepare(s, "DELETE FROM tokens WHERE token_sha256 = ?1", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
    rc = sq_step(s, st, err);
    sqlite3_reset(st);
    if (rc < 0)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return ps_error_set(err, PS_ENOENT, "no such token");
    return 0;
}

static void copy_col(sqlite3_stmt *st, int col, char *out, size_t cap)
{
    const char *t = (const char *)sqlite3_column_text(st, col);
    snprintf(out, cap, "%s", t ? t : "");
}

static int sq_token_get(struct sqlite_store *s, const char *hash, char *hash_out,
                        size_t hash_cap, char *user_out, size_t user_cap, char *role_out,
                        size_t role_cap, struct ps_error *err)
{
    sqlite3_stmt *st;
    int rc = sq_prepare(s,
                        "SELECT token_sha256, user, role FROM tokens WHERE token_sha256 = ?1",
                        &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
    rc = sq_step(s, st, err);
    if (rc == 1) {
        copy_col(st, 0, hash_out, hash_cap);
        copy_col(st, 1, user_out, user_cap);
        copy_col(st, 2, role_out, role_cap);
        rc = 0;
    } else if (rc == 0) {
        rc = ps_error_set(err, PS_ENOENT, "no such token");
    }
    sqlite3_reset(st);
    return rc;
}

/* ---- jobs by operation --------------------------------------------------------------------- */

static int sq_jobs_of_operation(struct sqlite_store *s, const char *operation_id,
                                enum ps_store_job_order order, ps_store_list_fn *fn, void *ctx,
                                struct ps_error *err)
{
    /* kind = 'job' is a literal so that the partial index objects_job_by_operation applies;
     * INDEXED BY because without statistics the planner prefers the covering primary key, a
     * range scan of every job ever stored */
    sqlite3_stmt *st;
    int rc = sq_prepare(s, order == PS_STORE_JOBS_BY_FINISH ? PS_STORE_SQLITE_JOBS_BY_FINISH
                                                            : PS_STORE_SQLITE_JOBS_BY_KEY,
                        &st, err);
    if (rc != 0)
        return rc;
    sqlite3_bind_text(st, 1, operation_id, -1, SQLITE_STATIC);
    while ((rc = sq_step(s, st, err)) == 1) {
        rc = fn((const char *)sqlite3_column_text(st, 0),
                (const char *)sqlite3_column_text(st, 1), ctx);
        if (rc != 0)
            break;
    }
    sqlite3_reset(st);   /* ends the read transaction: the WAL can be checkpointed past it */
    return rc;
}

/* ---- the backend --------------------------------------------------------------------------- */

static void op_close(struct ps_store *s) { sq_close(lite(s)); }
static int op_begin(struct ps_store *s, struct ps_error *err) { return sq_begin(lite(s), err); }
static int op_commit(struct ps_store *s, struct ps_error *err) { return sq_commit(lite(s), err); }
static int op_rollback(struct ps_store *s, struct ps_error *err)
{
    return sq_rollback(lite(s), err);
}
static int op_integrity(struct ps_store *s, struct ps_error *err)
{
    return sq_integrity_check(lite(s), err);
}
static int op_put(struct ps_store *s, const char *kind, const char *key, const char *value,
                  struct ps_error *err)
{
    return sq_put(lite(s), kind, key, value, err);
}
static int op_get(struct ps_store *s, const char *kind, const char *key, char **value,
                  struct ps_error *err)
{
    return sq_get(lite(s), kind, key, value, err);
}
static int op_del(struct ps_store *s, const char *kind, const char *key, struct ps_error *err)
{
    return sq_delete(lite(s), kind, key, err);
}
static int op_list(struct ps_store *s, const char *kind, const char *prefix, const char *upper,
                   ps_store_list_fn *fn, void *ctx, struct ps_error *err)
{
    return sq_list(lite(s), kind, prefix, upper, fn, ctx, err);
}
static int op_list_all(struct ps_store *s,
                       int (*fn)(const char *kind, const char *key, const char *value, void *ctx),
                       void *ctx, struct ps_error *err)
{
    return sq_list_all(lite(s), fn, ctx, err);
}
static int op_token_put(struct ps_store *s, const char *hash, const char *user, const char *role,
                        struct ps_error *err)
{
    return sq_token_put(lite(s), hash, user, role, err);
}
static int op_token_delete(struct ps_store *s, const char *hash, struct ps_error *err)
{
    return sq_token_delete(lite(s), hash, err);
}
static int op_token_get(struct ps_store *s, const char *hash, char *hash_out, size_t hash_cap,
                        char *user_out, size_t user_cap, char *role_out, size_t role_cap,
                        struct ps_error *err)
{
    return sq_token_get(lite(s), hash, hash_out, hash_cap, user_out, user_cap, role_out,
                        role_cap, err);
}
static int op_jobs(struct ps_store *s, const char *operation_id, enum ps_store_job_order order,
                   ps_store_list_fn *fn, void *ctx, struct ps_error *err)
{
    return sq_jobs_of_operation(lite(s), operation_id, order, fn, ctx, err);
}

static const struct ps_store_ops sqlite_ops = {
    .name = "sqlite",
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
};

/* ---- SQLite-only helpers (store_sqlite.h) -------------------------------------------------- */

bool ps_store_is_sqlite(const struct ps_store *s)
{
    return s && s->ops == &sqlite_ops;
}

int ps_store_prepare(struct ps_store *s, const char *sql, sqlite3_stmt **out,
                     struct ps_error *err)
{
    *out = NULL;
    if (!ps_store_is_sqlite(s))
        return ps_error_set(err, PS_EINVAL, "store %s is not SQLite", s->path);
    return sq_prepare(lite(s), sql, out, err);
}

int ps_store_step(struct ps_store *s, sqlite3_stmt *stmt, struct ps_error *err)
{
    return sq_step(lite(s), stmt, err);
}
