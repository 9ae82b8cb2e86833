/* store.h — the scheduler's durable state in one SQLite database (WAL mode).
 *
 * Durability: every commit (explicit, or the implicit one of a statement outside a transaction)
 * is on stable storage when the call returns, so the server may acknowledge a change as soon as
 * its commit returns 0. That is why the store runs `synchronous=FULL` rather than the usual
 * WAL pairing `synchronous=NORMAL`: with NORMAL, a WAL commit is only written to the OS, and
 * fsync happens at checkpoints, so a power loss or kernel crash can roll back the last
 * acknowledged transactions (the database stays consistent, but acknowledged work vanishes).
 * With FULL, each commit fsyncs the WAL: one fsync per transaction, which is the price of
 * "durable before acknowledged" — group several changes into one transaction when they belong
 * together. (A process crash alone, SIGKILL included, loses nothing in either mode because the
 * OS still holds the writes; the crash test in tests/unit/test_store.c checks that case.)
 *
 * Schema: a schema_version table records applied migrations; on open, each missing migration
 * runs in its own transaction together with its version row, so a failed migration leaves the
 * database at the previous version. A database from a newer poolsched is refused.
 *
 * Objects: a generic durable table `objects(kind, key, value)` with JSON text values, for state
 * that needs no typed table of its own. Typed tables come as further migrations
 * (store_schema.c).
 *
 * Threads: a store is one SQLite connection and is not thread-safe; callers serialise access
 * (one mutex around each transaction, or one store per thread: SQLite's own locking with the
 * busy timeout arbitrates between connections).
 *
 * Errors: anything that writes (put, delete, commit, exec, open) fails with PS_ENOSPC when the
 * disk is full (SQLITE_FULL, or SQLITE_IOERR whose system errno is ENOSPC or EDQUOT), so callers
 * can tell "disk full" from other I/O errors (PS_EIO); a failed commit leaves the database as it
 * was before the transaction (ps_store_rollback).
 *
 * Files: <data_dir>/poolsched.db (created with mode 0600, and -wal/-shm files inherit it); the
 * data dir is created with mode 0700 if missing.
 */
#ifndef PS_SERVER_STORE_H
#define PS_SERVER_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

#include "core/error.h"

#define PS_STORE_FILE_NAME "poolsched.db"
#define PS_STORE_DEFAULT_BUSY_TIMEOUT_MS 5000

struct ps_store;

/* One schema step: sql (one or more statements) moves the schema from version - 1 to version. */
struct ps_store_migration {
    int version;          /* 1, 2, 3, ... without gaps */
    const char *name;     /* for messages and the schema_version table */
    const char *sql;
};

/* The built-in migrations of poolsched, in order (store_schema.c). */
const struct ps_store_migration *ps_store_builtin_migrations(size_t *count);

struct ps_store_config {
    const char *data_dir;                         /* required */
    int busy_timeout_ms;                          /* 0 = PS_STORE_DEFAULT_BUSY_TIMEOUT_MS */
    const struct ps_store_migration *migrations;  /* NULL = the built-in ones */
    size_t migration_count;
};

/* Opens (creating if needed) <data_dir>/poolsched.db with the built-in migrations. */
int ps_store_open(const char *data_dir, struct ps_store **out, struct ps_error *err);

/* Opens with a config (tests use their own migrations). Errors: PS_EIO naming the path and the
 * reason (cannot create the dir or file, not a database, WAL unavailable), PS_ESTATE for a
 * schema newer than the migrations know, the failing statement's error prefixed with
 * "migration N (name) of the store schema failed" for a migration, PS_ENOMEM. */
int ps_store_open_config(const struct ps_store_config *cfg, struct ps_store **out,
                         struct ps_error *err);

/* Closes the database (an open transaction is rolled back). NULL is a no-op. */
void ps_store_close(struct ps_store *store);

/* The database file path; valid while the store is open. */
const char *ps_store_path(const struct ps_store *store);

/* The applied schema version. */
int ps_store_schema_version(const struct ps_store *store);

/* ---- transactions -------------------------------------------------------------------------- */

/* Starts a write transaction (BEGIN IMMEDIATE: the write lock is taken now, so a busy database
 * fails here rather than at the first write or at commit). No nesting: PS_ESTATE if one is open.
 * Errors: PS_EIO (database locked beyond the busy timeout, I/O). */
int ps_store_begin(struct ps_store *store, struct ps_error *err);

/* Commits; durable on return (see the top). PS_ESTATE if no transaction is open. If the commit
 * fails the transaction may still be open: call ps_store_rollback. */
int ps_store_commit(struct ps_store *store, struct ps_error *err);

/* Rolls back the open transaction; a no-op returning 0 when none is open (SQLite may have rolled
 * back by itself after an I/O error), so error paths can always call it. */
int ps_store_rollback(struct ps_store *store, struct ps_error *err);

bool ps_store_in_transaction(const struct ps_store *store);

/* ---- SQL helpers for typed tables ---------------------------------------------------------- */

/* Runs one or more statements that return no rows. */
int ps_store_exec(struct ps_store *store, const char *sql, struct ps_error *err);

/* A prepared statement for sql, cached per store by its text: reset and with bindings cleared,
 * ready to bind. Borrowed: valid until ps_store_close; do not finalize it, and do not use the
 * same sql text for two statements stepping at once. */
int ps_store_prepare(struct ps_store *store, const char *sql, sqlite3_stmt **out,
                     struct ps_error *err);

/* Steps stmt: returns 1 for a row, 0 when done, or a negative error naming the statement. */
int ps_store_step(struct ps_store *store, sqlite3_stmt *stmt, struct ps_error *err);

/* Runs PRAGMA integrity_check. Errors: PS_EIO with SQLite's first complaint. */
int ps_store_integrity_check(struct ps_store *store, struct ps_error *err);

/* ---- objects: durable key/value by kind ---------------------------------------------------- */

/* Stores (inserting or replacing) value, a JSON text, under (kind, key). kind and key are
 * non-empty UTF-8 text. In the open transaction, or on its own (durable on return).
 * Errors: PS_EINVAL for an empty kind/key or a value that is not JSON, PS_EIO. */
int ps_store_put(struct ps_store *store, const char *kind, const char *key, const char *value,
                 struct ps_error *err);

/* Reads the value of (kind, key) into a malloc'd string *value (caller frees).
 * Errors: PS_ENOENT when absent, PS_EIO, PS_ENOMEM. */
int ps_store_get(struct ps_store *store, const char *kind, const char *key, char **value,
                 struct ps_error *err);

/* Deletes (kind, key). Errors: PS_ENOENT when absent, PS_EIO. */
int ps_store_delete(struct ps_store *store, const char *kind, const char *key,
                    struct ps_error *err);

/* Called per object in key order (bytewise); borrowed strings valid during the call. A nonzero
 * return stops the listing and becomes the return value of ps_store_list. */
typedef int ps_store_list_fn(const char *key, const char *value, void *ctx);

/* Lists the objects of kind whose key starts with prefix ("" or NULL = all), in key order.
 * The callback may read the store (get) but must not call ps_store_list again. */
int ps_store_list(struct ps_store *store, const char *kind, const char *prefix,
                  ps_store_list_fn *fn, void *ctx, struct ps_error *err);

#endif
