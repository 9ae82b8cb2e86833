/* store.h — the scheduler's durable state behind one interface, with two backends.
 *
 * Backends: the embedded SQLite database in the data dir (the default: one machine, no other
 * process; store_sqlite.c) and PostgreSQL (libpq; store_pg.c), chosen by a libpq URI
 * (`poolsched scheduler --store postgresql://USER@HOST:PORT/DB`, or `store` in the config file).
 * Everything durable goes through this interface: the journal (objects), auth.c (tokens) and
 * job_archive.c (the jobs of one operation); nobody else speaks SQL.
 *
 * Durability: every commit (explicit, or the implicit one of a call outside a transaction) is on
 * stable storage when the call returns, so the server may acknowledge a change as soon as its
 * commit returns 0. SQLite runs WAL with `synchronous=FULL` rather than the usual NORMAL: with
 * NORMAL a WAL commit is only written to the OS and fsync happens at checkpoints, so a power
 * loss can roll back acknowledged transactions. With FULL each commit fsyncs the WAL: one fsync
 * per transaction, the price of "durable before acknowledged" — group changes into one
 * transaction when they belong together (the journal does). PostgreSQL commits with its own
 * `synchronous_commit=on` (the session forces it): the commit record is flushed before COMMIT
 * returns. (A process crash alone, SIGKILL included, loses nothing in either case; the crash
 * test in tests/unit/test_store.c checks that.)
 *
 * Schema: a schema_version table records applied migrations; on open, each missing migration
 * runs in its own transaction together with its version row, so a failed migration leaves the
 * database at the previous version. A database from a newer poolsched is refused. Each backend
 * has its own migrations (store_schema.c for SQLite, store_pg.c for PostgreSQL) over the same
 * tables: objects(kind, key, value JSON), tokens(token_sha256, user, role).
 *
 * Threads: a store is one connection and is not thread-safe; callers serialise access (one
 * mutex around each transaction, or one store per thread: the database arbitrates between
 * connections).
 *
 * Errors: anything that writes fails with PS_ENOSPC when the disk is full (SQLite: SQLITE_FULL,
 * or an I/O error whose errno is ENOSPC or EDQUOT; PostgreSQL: SQLSTATE 53100), with PS_EUNAVAIL
 * when the database server cannot be reached or the connection broke (PostgreSQL only: the
 * next call reconnects), and PS_EIO for other failures. A failed commit leaves the database as
 * it was before the transaction (ps_store_rollback).
 *
 * Files (SQLite): <data_dir>/poolsched.db (created with mode 0600, and -wal/-shm files inherit
 * it); the data dir is created with mode 0700 if missing.
 */
#ifndef PS_SERVER_STORE_H
#define PS_SERVER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    const char *data_dir;                         /* required for SQLite */
    const char *url;                              /* NULL or "" = SQLite in data_dir; else a
                                                   * postgresql:// or postgres:// libpq URI */
    int busy_timeout_ms;                          /* 0 = PS_STORE_DEFAULT_BUSY_TIMEOUT_MS */
    int call_timeout_ms;                          /* PostgreSQL: a call unanswered for this long
                                                   * drops its connection (PS_EUNAVAIL); 0 = 15 s */
    bool memory;                                  /* SQLite in memory (ps_store_open_memory) */
    bool exclusive;                               /* PostgreSQL: refuse a database that another
                                                   * exclusive store holds (the scheduler's own
                                                   * connection; see store_pg.c) */
    const struct ps_store_migration *migrations;  /* SQLite only: NULL = the built-in ones */
    size_t migration_count;
};

/* True when url names the PostgreSQL backend (a postgresql:// or postgres:// URI). */
bool ps_store_url_is_postgres(const char *url);

/* Opens (creating if needed) <data_dir>/poolsched.db with the built-in migrations. */
int ps_store_open(const char *data_dir, struct ps_store **out, struct ps_error *err);

/* Opens the store that url names (see ps_store_config.url), data_dir for SQLite. */
int ps_store_open_url(const char *url, const char *data_dir, struct ps_store **out,
                      struct ps_error *err);

/* Opens with a config (tests use their own migrations). Errors: PS_EIO naming the path and the
 * reason (cannot create the dir or file, not a database, WAL unavailable), PS_EUNAVAIL when the
 * PostgreSQL server cannot be reached, PS_EINVAL for a URI that is not one, PS_ESTATE for a
 * schema newer than the migrations know, the failing statement's error prefixed with
 * "migration N (name) of the store schema failed" for a migration, PS_ENOMEM. */
int ps_store_open_config(const struct ps_store_config *cfg, struct ps_store **out,
                         struct ps_error *err);

/* Closes the database (an open transaction is rolled back). NULL is a no-op. */
void ps_store_close(struct ps_store *store);

/* Where the store is, for messages: the SQLite file path, or the PostgreSQL URI without its
 * password. Valid while the store is open. */
const char *ps_store_path(const struct ps_store *store);

/* "sqlite" or "postgresql". */
const char *ps_store_backend(const struct ps_store *store);

/* The applied schema version. */
int ps_store_schema_version(const struct ps_store *store);

/* ---- transactions -------------------------------------------------------------------------- */

/* Starts a write transaction (SQLite: BEGIN IMMEDIATE, the write lock is taken now, so a busy
 * database fails here rather than at the first write or at commit). No nesting: PS_ESTATE if one
 * is open. Errors: PS_EIO (database locked beyond the busy timeout, I/O), PS_EUNAVAIL. */
int ps_store_begin(struct ps_store *store, struct ps_error *err);

/* Commits; durable on return (see the top). PS_ESTATE if no transaction is open. If the commit
 * fails the transaction may still be open: call ps_store_rollback. */
int ps_store_commit(struct ps_store *store, struct ps_error *err);

/* Rolls back the open transaction; a no-op returning 0 when none is open (SQLite may have rolled
 * back by itself after an I/O error), so error paths can always call it. */
int ps_store_rollback(struct ps_store *store, struct ps_error *err);

bool ps_store_in_transaction(const struct ps_store *store);

/* Checks the database for corruption (SQLite: PRAGMA integrity_check; PostgreSQL: a query
 * that reads every table). Errors: PS_EIO with the database's first complaint. */
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

/* The same for the keys in [from, upper) (bytewise), in key order. */
int ps_store_list_range(struct ps_store *store, const char *kind, const char *from,
                        const char *upper, ps_store_list_fn *fn, void *ctx,
                        struct ps_error *err);

/* Copies every object of src (all kinds) into dst, in one transaction of dst. Tokens and the
 * leader row are not objects: not copied. Errors: src's and dst's, PS_ENOMEM. */
int ps_store_copy_objects(struct ps_store *src, struct ps_store *dst, struct ps_error *err);

/* Opens an empty SQLite database in memory with the built-in migrations: the leader's copy of
 * its PostgreSQL store (store_mirror.h). Nothing in it is durable. */
int ps_store_open_memory(struct ps_store **out, struct ps_error *err);

/* ---- tokens: API tokens by the SHA-256 of the token (auth.h) ------------------------------ */

/* Adds a token row. sha256_hex is 64 hex digits, user non-empty, role "admin", "user" or
 * "node". Errors: PS_EEXIST when the hash is there already, PS_EINVAL, PS_EIO, PS_EUNAVAIL. */
int ps_store_token_put(struct ps_store *store, const char *sha256_hex, const char *user,
                       const char *role, struct ps_error *err);

/* Deletes the row of sha256_hex. Errors: PS_ENOENT when absent, PS_EIO, PS_EUNAVAIL. */
int ps_store_token_delete(struct ps_store *store, const char *sha256_hex, struct ps_error *err);

/* Reads the row of sha256_hex: its stored hash, user and role, truncated to their buffers.
 * Errors: PS_ENOENT when absent, PS_EIO, PS_EUNAVAIL. */
int ps_store_token_get(struct ps_store *store, const char *sha256_hex, char *hash_out,
                       size_t hash_cap, char *user_out, size_t user_cap, char *role_out,
                       size_t role_cap, struct ps_error *err);

/* ---- jobs by operation (job_archive.h) ---------------------------------------------------- */

enum ps_store_job_order {
    PS_STORE_JOBS_BY_KEY,      /* by job id, bytewise */
    PS_STORE_JOBS_BY_FINISH,   /* by the document's finish_time (running jobs, -1, first),
                                * then job id */
};

/* Calls fn for each object of kind "job" whose document's operation_id is operation_id, in the
 * given order, through an index (never a scan of every job). Same callback rules as
 * ps_store_list. */
int ps_store_jobs_of_operation(struct ps_store *store, const char *operation_id,
                               enum ps_store_job_order order, ps_store_list_fn *fn, void *ctx,
                               struct ps_error *err);

/* ---- leader election with fencing (PostgreSQL only; docs/ha.md) ------------------------------
 *
 * One row, leader(epoch, holder, address, lease_until, since), judged by the database's clock
 * only. A scheduler that wins it (the lease expired, or nobody ever held it) becomes leader of
 * epoch + 1; the leader renews its lease; a standby polls and takes over when it expires. Every
 * write transaction of a fenced store (ps_store_fence) first reads the leader row FOR SHARE and
 * checks its epoch: the row lock conflicts with the takeover's UPDATE, so a takeover waits for
 * a write transaction in flight, and once it has committed, a write of the old epoch finds the
 * new epoch and fails (PS_ESTATE, and ps_store_deposed is true from then on). FOR KEY SHARE
 * would not do: it does not conflict with an UPDATE that leaves the key alone, so the old
 * leader's transaction could commit after the new leader loaded the state
 * (tests/unit/test_store_iface.c shows both). The SQLite backend answers PS_EINVAL. */

struct ps_store_leader {
    int64_t epoch;           /* 0: nobody has led yet */
    char holder[128];        /* the leader's instance id */
    char address[128];       /* where it serves (host:port) */
    int64_t lease_left_ms;   /* until its lease expires (< 0: expired), by the database's clock */
    int64_t since_ms;        /* when it took over, ms since the epoch (the database's clock) */
    int standbys;            /* standbys that polled in the last 2 s (not the leader itself) */
    char standby_addresses[512];   /* their addresses, comma-separated, sorted (cut short) */
};

/* Becomes leader of epoch + 1 when the lease has expired (or was never taken): *epoch gets the
 * new epoch; otherwise records holder as a standby seen now (ps_store_leader.standbys). Errors: PS_ESTATE when another holder's lease is live (err names it), PS_EUNAVAIL,
 * PS_EINVAL on SQLite. */
int ps_store_leader_acquire(struct ps_store *store, const char *holder, const char *address,
                            int lease_ms, int64_t *epoch, struct ps_error *err);

/* Extends the lease of epoch by lease_ms from now (the database's now). Errors: PS_ESTATE when
 * epoch is no longer the leader's (deposed), PS_EUNAVAIL. */
int ps_store_leader_renew(struct ps_store *store, int64_t epoch, int lease_ms,
                          struct ps_error *err);

/* Reads the leader row. Errors: PS_EUNAVAIL, PS_EINVAL on SQLite. */
int ps_store_leader_get(struct ps_store *store, struct ps_store_leader *out,
                        struct ps_error *err);

/* From now on every write of store checks that epoch still leads (0: no fence). */
void ps_store_fence(struct ps_store *store, int64_t epoch);

/* True once a write of store failed its fence: a newer epoch leads. */
bool ps_store_deposed(const struct ps_store *store);

#endif
