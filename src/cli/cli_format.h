/* cli_format.h — what the client commands print for people: aligned tables of operations and
 * jobs, a readable block for one operation, and the small value formatters they use.
 *
 * All functions are pure (the current time is a parameter) so the tests can pin exact output.
 * Input is the JSON the scheduler sent (docs/api.md: OPERATION, JOB); a missing or mistyped
 * field prints as "-" instead of failing, so a newer server never breaks an older client's
 * table. Strings from the server are shown with control characters as '?': one cell, one line.
 * Returned strings are malloc'd (the caller frees them); NULL means out of memory.
 */
#ifndef PS_CLI_FORMAT_H
#define PS_CLI_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* A table: a header row, then rows; columns separated by two spaces, every column but the last
 * padded to its widest cell (width in UTF-8 characters), no trailing spaces. */
struct ps_cli_table {
    size_t columns;
    size_t rows;          /* including the header */
    char **cells;         /* rows * columns, owned */
    size_t cap;
    int failed;           /* an allocation failed; render returns NULL */
};

/* Starts a table with the given header (columns names, copied). */
void ps_cli_table_init(struct ps_cli_table *t, size_t columns, const char *const *header);
/* Appends one row of `columns` cells (copied; NULL prints "-", "" stays empty). */
void ps_cli_table_add(struct ps_cli_table *t, const char *const *cells);
/* The table as text, each row ending in '\n'. */
char *ps_cli_table_render(const struct ps_cli_table *t);
void ps_cli_table_release(struct ps_cli_table *t);

/* An instant: milliseconds since the epoch -> "2024-05-01T12:00:00Z" (UTC, ISO 8601); a string
 * is shown as it is; anything else "-". */
void ps_cli_format_time(const json_t *t, char *buf, size_t size);

/* Bytes in binary units as users type them: 0, 1023, 512M, 2G, 1.5G (one decimal when not
 * whole). */
void ps_cli_format_bytes(int64_t bytes, char *buf, size_t size);

/* A duration: "45s", "3m05s", "2h03m", "3d04h"; negative as "0s". */
void ps_cli_format_duration(int64_t ms, char *buf, size_t size);

/* The table of `list-operations`: ID, STATE, USER, POOL, PROGRESS, START TIME, PENDING REASON.
 * operations is the reply's array. */
char *ps_cli_operations_table(const json_t *operations);

/* The table of `list-jobs`: ID, STATE, NODE, CPU (limit/guarantee), MEMORY (reserve/limit),
 * DURATION (to now_ms for a job without finish_time), ERROR (error, else abort_reason). */
char *ps_cli_jobs_table(const json_t *jobs, int64_t now_ms);

/* The table of `list-nodes`, in id order: ID, STATE (online, offline or banned), ADDRESS, TREE,
 * TAGS, CPU / MEMORY / SLOTS as used/total, JOBS (running), LAST HEARTBEAT (ago, to now_ms).
 * nodes is the orchid's map of node id -> attributes. */
char *ps_cli_nodes_table(const json_t *nodes, int64_t now_ms);

/* The block of `get-operation`: one "key  value" line per field present. */
char *ps_cli_operation_block(const json_t *op);

#endif
