/* The schema of the scheduler's store, as migrations. Append new versions at the end; never
 * edit one that has shipped (databases in the field have run it already). */
#include "server/store.h"

static const struct ps_store_migration migrations[] = {
    {
        1, "objects",
        /* Generic durable state: JSON text by (kind, key). WITHOUT ROWID keeps the rows in the
         * primary-key B-tree, so a prefix listing of one kind is a single range scan. */
        "CREATE TABLE objects ("
        "  kind  TEXT NOT NULL,"
        "  key   TEXT NOT NULL,"
        "  value TEXT NOT NULL CHECK (json_valid(value)),"
        "  PRIMARY KEY (kind, key)"
        ") WITHOUT ROWID;",
    },
    {
        2, "tokens",
        /* API tokens by the SHA-256 of the token (hex): a copied database file does not reveal
         * usable tokens (see auth.h). */
        "CREATE TABLE tokens ("
        "  token_sha256 TEXT NOT NULL PRIMARY KEY CHECK (length(token_sha256) = 64),"
        "  user         TEXT NOT NULL CHECK (length(user) > 0),"
        "  role         TEXT NOT NULL CHECK (role IN ('admin', 'user', 'node'))"
        ") WITHOUT ROWID;"
        "CREATE INDEX tokens_by_user ON tokens(user);",
    },
    {
        3, "jobs_by_operation",
        /* Finished jobs leave the scheduler's memory once stored (job_archive.h): list_jobs and
         * restart recovery then read one operation's jobs, which must not scan the history of
         * every job. A partial index on the document's operation_id covers only kind 'job'. */
        "CREATE INDEX objects_job_by_operation"
        "  ON objects(json_extract(value, '$.operation_id'), key) WHERE kind = 'job';",
    },
};

const struct ps_store_migration *ps_store_builtin_migrations(size_t *count)
{
    *count = sizeof migrations / sizeof *migrations;
    return migrations;
}
