/* store_sqlite.h — what only the SQLite backend of the store has: raw statements, for tests that
 * check SQLite's own settings and query plans. Product code uses store.h only. */
#ifndef PS_SERVER_STORE_SQLITE_H
#define PS_SERVER_STORE_SQLITE_H

#include <sqlite3.h>

#include "server/store.h"

/* The object listing of one operation's jobs (store.h ps_store_jobs_of_operation), by job id
 * and by finish time: kind = 'job' is a literal so that the partial index
 * objects_job_by_operation applies. */
#define PS_STORE_SQLITE_JOBS_WHERE                                                               \
    "SELECT key, value FROM objects INDEXED BY objects_job_by_operation WHERE kind = 'job'"     \
    " AND json_extract(value, '$.operation_id') = ?1"
#define PS_STORE_SQLITE_JOBS_BY_KEY PS_STORE_SQLITE_JOBS_WHERE " ORDER BY key"
#define PS_STORE_SQLITE_JOBS_BY_FINISH                                                           \
    PS_STORE_SQLITE_JOBS_WHERE " ORDER BY json_extract(value, '$.finish_time'), key"

bool ps_store_is_sqlite(const struct ps_store *store);

/* A prepared statement for sql, cached per store by its text: reset and with bindings cleared,
 * ready to bind. Borrowed: valid until ps_store_close; do not finalize it, and do not use the
 * same sql text for two statements stepping at once. PS_EINVAL on a store of another backend. */
int ps_store_prepare(struct ps_store *store, const char *sql, sqlite3_stmt **out,
                     struct ps_error *err);

/* Steps stmt: returns 1 for a row, 0 when done, or a negative error naming the statement. */
int ps_store_step(struct ps_store *store, sqlite3_stmt *stmt, struct ps_error *err);

#endif
