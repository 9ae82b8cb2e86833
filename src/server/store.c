#include "server/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cached_stmt {
    char *sql;
    sqlite3_stmt *stmt;
};

struct ps_store {
    sqlite3 *db;
    char *path;
    int schema_version;
    bool in_tx;
    struct cached_stmt *stmts;
    size_t stmt_count, stmt_cap;
};

/* The PS_E* code of a failed SQLite call. A full disk is PS_ENOSPC: SQLite reports a write()
 * that hit ENOSPC, or wrote short, as SQLITE_FULL, and an I/O error whose system errno is
 * ENOSPC or EDQUOT (fsync, ftruncate, the -shm file) is the same cause for the caller. */
static int error_code(struct ps_store *s, int rc)
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
static int sql_fail(struct ps_store *s, int rc, const char *what, struct ps_error *err)
{
    int code = error_code(s, rc);
    /* SQLite rolls back by itself after some errors (I/O, full disk, ...): keep in step. */
    if (s->in_tx && sqlite3_get_autocommit(s->db))
        s->in_tx = false;
    const char *msg = sqlite3_errmsg(s->db);
    /* SQLite says "disk I/O error" when an fsync, ftruncate or the -shm file hit ENOSPC */
    return ps_error_set(err, code, "store %s: %s: %s%s", s->path, what, msg,
                        code == PS_ENOSPC && !strstr(msg, "full") ? " (disk full)" : "");
}

/* ---- statements ---------------------------------------------------------------------------- */

int ps_store_prepare(struct ps_store *s, const char *sql, sqlite3_stmt **out,
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

int ps_store_step(struct ps_store *s, sqlite3_stmt *stmt, struct ps_error *err)
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

int ps_store_exec(struct ps_store *s, const char *sql, struct ps_error *err)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    if (rc == SQLITE_OK)
        return 0;
    int code = error_code(s, rc);
    if (code == PS_EINVAL)
        code = PS_EIO;   /* a constraint failing in raw SQL (a migration) is not bad input */
    if (s->in_tx && sqlite3_get_autocommit(s->db))
        s->in_tx = false;
    const char *why = msg ? msg : sqlite3_errstr(rc);
    ps_error_set(err, code, "store %s: '%.120s' failed: %s%s", s->path, sql, why,
                 code == PS_ENOSPC && !strstr(why, "full") ? " (disk full)" : "");
    sqlite3_free(msg);
    return code;
}

/* ---- transactions -------------------------------------------------------------------------- */

int ps_store_begin(struct ps_store *s, struct ps_error *err)
{
    if (s->in_tx)
        return ps_error_set(err, PS_ESTATE, "store %s: a transaction is open already", s->path);
    int rc = ps_store_exec(s, "BEGIN IMMEDIATE", err);
    if (rc == 0)
        s->in_tx = true;
    return rc;
}

int ps_store_commit(struct ps_store *s, struct ps_error *err)
{
    if (!s->in_tx)
        return ps_error_set(err, PS_ESTATE, "store %s: commit without a transaction", s->path);
    int rc = ps_store_exec(s, "COMMIT", err);
    if (rc == 0 || sqlite3_get_autocommit(s->db))
        s->in_tx = false;
    return rc;
}

int ps_store_rollback(struct ps_store *s, struct ps_error *err)
{
    if (!s->in_tx || sqlite3_get_autocommit(s->db)) {
        s->in_tx = false;
        return 0;
    }
    int rc = ps_store_exec(s, "ROLLBACK", err);
    s->in_tx = !sqlite3_get_autocommit(s->db);
    return rc;
}

bool ps_store_in_transaction(const struct ps_store *s)
{
    return s->in_tx;
}

/* ---- open, migrate, close ------------------------------------------------------------------ */

static int pragma_text(struct ps_store *s, const char *sql, char *out, size_t cap,
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

static int read_version(struct ps_store *s, int *version, struct ps_error *err)
{
    sqlite3_stmt *stmt;
    int rc = ps_store_prepare(s, "SELECT COALESCE(MAX(version), 0) FROM schema_version", &stmt,
                              err);
    if (rc)
        return rc;
    rc = ps_store_step(s, stmt, err);
    if (rc < 0)
        return rc;
    *version = sqlite3_column_int(stmt, 0);
    sqlite3_reset(stmt);
    return 0;
}

static int migrate(struct ps_store *s, const struct ps_store_migration *m, size_t count,
                   struct ps_error *err)
{
    int rc = ps_store_exec(s,
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
                            "(%d): use a newer poolsched", s->path, current, known);
    for (size_t i = 0; i < count; i++) {
        if (m[i].version != (int)i + 1)
            return ps_error_set(err, PS_EINVAL,
                                "migration %zu has version %d, expected %zu (a bug)", i,
                                m[i].version, i + 1);
        if (m[i].version <= current)
            continue;
        rc = ps_store_begin(s, err);
        if (!rc)
            rc = ps_store_exec(s, m[i].sql, err);
        if (!rc) {
            sqlite3_stmt *ins;
            rc = ps_store_prepare(s, "INSERT INTO schema_version(version, name) VALUES (?1, ?2)",
                                  &ins, err);
            if (!rc) {
                sqlite3_bind_int(ins, 1, m[i].version);
                sqlite3_bind_text(ins, 2, m[i].name, -1, SQLITE_STATIC);
                rc = ps_store_step(s, ins, err);
                sqlite3_reset(ins);
            }
        }
        if (!rc)
            rc = ps_store_commit(s, err);
        if (rc) {
            ps_store_rollback(s, NULL);
            ps_error_prefix(err, "migration %d (%s) of the store schema failed", m[i].version,
                            m[i].name);
            return rc;
        }
        current = m[i].version;
    }
    s->schema_version = current;
    return 0;
}

/* Creates dir (mode 0700) unless it exists as a directory. */
static int ensure_dir(const char *dir, struct ps_error *err)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return ps_error_set(err, PS_EIO, "data dir %s is not a directory", dir);
        return 0;
    }
    if (errno != ENOENT || mkdir(dir, 0700) != 0)
        return ps_error_set(err, PS_EIO, "cannot create the data dir %s: %s", dir,
                            strerror(errno));
    return 0;
}

int ps_store_open(const char *data_dir, struct ps_store **out, struct ps_error *err)
{
    struct ps_store_config cfg = { .data_dir = data_dir };
    return ps_store_open_config(&cfg, out, err);
}

int ps_store_open_config(const struct ps_store_config *cfg, struct ps_store **out,
                         struct ps_error *err)
{
    *out = NULL;
    if (!cfg->data_dir || !*cfg->data_dir)
        return ps_error_set(err, PS_EINVAL, "the store needs a data dir");
    int rc = ensure_dir(cfg->data_dir, err);
    if (rc)
        return rc;
    struct ps_store *s = calloc(1, sizeof *s);
    size_t n = strlen(cfg->data_dir) + sizeof "/" PS_STORE_FILE_NAME;
    if (!s || !(s->path = malloc(n))) {
        free(s);
        return ps_error_set(err, PS_ENOMEM, "out of memory opening the store");
    }
    snprintf(s->path, n, "%s/%s", cfg->data_dir, PS_STORE_FILE_NAME);

    /* Create the file ourselves so it is private from the start (it holds token hashes);
     * SQLite gives the -wal and -shm files the same mode. */
    int fd = open(s->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        ps_error_set(err, PS_EIO, "cannot open the store %s: %s", s->path, strerror(errno));
        ps_store_close(s);
        return PS_EIO;
    }
    close(fd);

    rc = sqlite3_open_v2(s->path, &s->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        ps_error_set(err, PS_EIO, "cannot open the store %s: %s", s->path,
                     s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        ps_store_close(s);
        return PS_EIO;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, cfg->busy_timeout_ms > 0 ? cfg->busy_timeout_ms
                                                         : PS_STORE_DEFAULT_BUSY_TIMEOUT_MS);
    char mode[32];
    rc = pragma_text(s, "PRAGMA journal_mode=WAL", mode, sizeof mode, err);
    if (!rc && strcmp(mode, "wal") != 0)
        rc = ps_error_set(err, PS_EIO, "store %s: cannot use WAL journal mode (got '%s')",
                          s->path, mode);
    if (!rc)
        rc = ps_store_exec(s, "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON", err);
    const struct ps_store_migration *m = cfg->migrations;
    size_t count = cfg->migration_count;
    if (!m)
        m = ps_store_builtin_migrations(&count);
    if (!rc)
        rc = migrate(s, m, count, err);
    if (rc) {
        ps_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void ps_store_close(struct ps_store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->stmt_count; i++) {
        sqlite3_finalize(s->stmts[i].stmt);
        free(s->stmts[i].sql);
    }
    free(s->stmts);
    if (s->db) {
        if (s->in_tx)
            ps_store_rollback(s, NULL);
        sqlite3_close(s->db);
    }
    free(s->path);
    free(s);
}

const char *ps_store_path(const struct ps_store *s)
{
    return s->path;
}

int ps_store_schema_version(const struct ps_store *s)
{
    return s->schema_version;
}

int ps_store_integrity_check(struct ps_store *s, struct ps_error *err)
{
    char result[256];
    int rc = pragma_text(s, "PRAGMA integrity_check", result, sizeof result, err);
    if (rc)
        return rc;
    if (strcmp(result, "ok") != 0)
        return ps_error_set(err, PS_EIO, "store %s fails its integrity check: %s", s->path,
                            result);
    return 0;
}

/* ---- objects ------------------------------------------------------------------------------- */

static int check_kind_key(const struct ps_store *s, const char *kind, const char *key,
                          struct ps_error *err)
{
    if (!kind || !*kind || !key || !*key)
        return ps_error_set(err, PS_EINVAL, "store %s: object kind and key must not be empty",
                            s->path);
    return 0;
}

int ps_store_put(struct ps_store *s, const char *kind, const char *key, const char *value,
                 struct ps_error *err)
{
    int rc = check_kind_key(s, kind, key, err);
    if (rc)
        return rc;
    if (!value)
        return ps_error_set(err, PS_EINVAL, "object %s/%s: no value", kind, key);
    sqlite3_stmt *st;
    rc = ps_store_prepare(s,
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

int ps_store_get(struct ps_store *s, const char *kind, const char *key, char **value,
                 struct ps_error *err)
{
    *value = NULL;
    int rc = check_kind_key(s, kind, key, err);
    if (rc)
        return rc;
    sqlite3_stmt *st;
    rc = ps_store_prepare(s, "SELECT value FROM objects WHERE kind = ?1 AND key = ?2", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    rc = ps_store_step(s, st, err);
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

int ps_store_delete(struct ps_store *s, const char *kind, const char *key, struct ps_error *err)
{
    int rc = check_kind_key(s, kind, key, err);
    if (rc)
        return rc;
    sqlite3_stmt *st;
    rc = ps_store_prepare(s, "DELETE FROM objects WHERE kind = ?1 AND key = ?2", &st, err);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    rc = ps_store_step(s, st, err);
    sqlite3_reset(st);
    if (rc < 0)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return ps_error_set(err, PS_ENOENT, "no object %s/%s in the store", kind, key);
    return 0;
}

int ps_store_list(struct ps_store *s, const char *kind, const char *prefix,
                  ps_store_list_fn *fn, void *ctx, struct ps_error *err)
{
    if (!kind || !*kind)
        return ps_error_set(err, PS_EINVAL, "store %s: object kind must not be empty", s->path);
    if (!prefix)
        prefix = "";
    /* key >= prefix AND key < upper, where upper is the prefix with its last byte below 0xFF
     * incremented (trailing 0xFF bytes dropped): an index range scan, and exact under the
     * bytewise (BINARY) collation. No upper bound when nothing is left. */
    size_t plen = strlen(prefix);
    char *upper = malloc(plen + 1);
    if (!upper)
        return ps_error_set(err, PS_ENOMEM, "out of memory listing %s", kind);
    memcpy(upper, prefix, plen + 1);
    size_t ulen = plen;
    while (ulen > 0 && (unsigned char)upper[ulen - 1] == 0xFF)
        ulen--;
    if (ulen > 0)
        upper[ulen - 1] = (char)((unsigned char)upper[ulen - 1] + 1);
    sqlite3_stmt *st;
    int rc = ps_store_prepare(s,
                              "SELECT key, value FROM objects WHERE kind = ?1 AND key >= ?2"
                              " AND (?3 IS NULL OR key < ?3) ORDER BY key",
                              &st, err);
    if (rc) {
        free(upper);
        return rc;
    }
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, prefix, (int)plen, SQLITE_STATIC);
    if (ulen > 0)
        sqlite3_bind_text(st, 3, upper, (int)ulen, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    while ((rc = ps_store_step(s, st, err)) == 1) {
        rc = fn((const char *)sqlite3_column_text(st, 0),
                (const char *)sqlite3_column_text(st, 1), ctx);
        if (rc)
            break;
    }
    sqlite3_reset(st);
    free(upper);
    return rc;
}
