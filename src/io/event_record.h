/* event_record.h — the scheduler's event log rows (docs/api.md "Event log") kept compactly, as
 * `poolsched what-if` reads them (io/event_replay.h makes the scenario of them,
 * whatif/what_if_metrics.h the fidelity). A week's record holds millions of job rows: each is
 * kept as a small struct, its ids, task name and tree interned; every other row (nodes, pools,
 * operations, runtime parameters: few) is kept as JSON. Rows are added oldest first, one at a
 * time, or a page of them kept so is appended (the scheduler's pages come newest first), so
 * neither a file nor the scheduler's pages are ever held whole as JSON. Pure: no I/O. */
#ifndef PS_IO_EVENT_RECORD_H
#define PS_IO_EVENT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "core/resources.h"
#include "core/strmap.h"

#define PS_EVENT_NONE UINT32_MAX   /* an interned string that is not there */

/* Interned strings: index <-> name, indexes in order of first sight. */
struct ps_event_names {
    char **names;
    size_t count, cap;
    struct ps_strmap map;   /* name -> index + 1 */
};

/* The index of name, or PS_EVENT_NONE. */
uint32_t ps_event_names_find(const struct ps_event_names *n, const char *name);

enum ps_event_job_kind {
    PS_EVENT_JOB_STARTED,     /* job_started */
    PS_EVENT_JOB_COMPLETED,   /* job_completed */
    PS_EVENT_JOB_ABORTED,     /* job_aborted */
    PS_EVENT_JOB_ENDED,       /* any other job_* type: job_failed, ... */
};

/* The first key of a job row that a replay refuses (in the order event_replay checks them). */
enum ps_event_job_flaw {
    PS_EVENT_JOB_OK,
    PS_EVENT_JOB_BAD_ID,          /* job_id: not a non-empty string */
    PS_EVENT_JOB_BAD_OPERATION,   /* operation_id: not a string */
    PS_EVENT_JOB_BAD_RESOURCES,   /* resource_limits: not a map */
    PS_EVENT_JOB_BAD_TIMES,       /* an end row without integer start_time and finish_time */
};

/* One job row: an object whose event_type begins with "job_", with an integer timestamp >= 0. */
struct ps_event_job {
    size_t row;                    /* its index among every row added */
    int64_t timestamp;
    int64_t start_time, finish_time;   /* 0 when not integers */
    uint32_t job;                  /* job_id in job_ids; PS_EVENT_NONE: not a string */
    uint32_t operation;            /* operation_id in operation_ids; PS_EVENT_NONE: not a string */
    uint32_t task;                 /* task_name in task_names; PS_EVENT_NONE: not a string */
    uint32_t tree;                 /* tree_id in tree_ids; PS_EVENT_NONE: not a string */
    uint8_t kind;                  /* enum ps_event_job_kind */
    uint8_t flaw;                  /* enum ps_event_job_flaw */
    double resources[PS_RES_COUNT];   /* resource_limits' numbers (cpu in cores), 0 when absent */
};

/* Any other row, as JSON (one reference owned). */
struct ps_event_row {
    size_t row;   /* its index among every row added */
    json_t *json;
};

/* Read-only for users: fill with ps_event_record_add. */
struct ps_event_record {
    struct ps_event_job *jobs;     /* in row order */
    size_t job_count, job_cap;
    struct ps_event_row *others;   /* in row order */
    size_t other_count, other_cap;
    struct ps_event_names job_ids, operation_ids, task_names, tree_ids;
    size_t row_count;              /* rows added */
    int64_t newest_ms;             /* the largest integer timestamp of a row, 0 when none */
    int64_t oldest_ms;             /* the smallest integer timestamp >= 0 of a row, -1 when none */
};

/* An empty record, or NULL when out of memory. */
struct ps_event_record *ps_event_record_new(void);
void ps_event_record_free(struct ps_event_record *rec);   /* NULL is a no-op */

/* Appends row (borrowed: a job row is copied into a struct, any other row referenced).
 * Any JSON value is taken (a replay names the rows it refuses). Errors: PS_ENOMEM. */
int ps_event_record_add(struct ps_event_record *rec, json_t *row, struct ps_error *err);

/* Moves src's rows onto the end of dst, as if each had been added to dst in turn (the same
 * rows, row numbers and interned indexes); src is left empty, to be freed. Errors: PS_ENOMEM,
 * with dst holding a prefix of src's jobs (free both). */
int ps_event_record_append(struct ps_event_record *dst, struct ps_event_record *src,
                           struct ps_error *err);
/* Appends one row given as JSON text (len bytes, e.g. a line of `poolsched event-log --format
 * json`): the same as ps_event_record_add of the parsed row; a job row is read without making
 * JSON values of it (a week's log has millions). Errors: PS_EINVAL "not a JSON row: <why>"
 * when the text is not one JSON object or list, PS_ENOMEM. */
int ps_event_record_add_text(struct ps_event_record *rec, const char *text, size_t len,
                             struct ps_error *err);

/* As ps_event_record_add_text, except that a row that is not an object with a string
 * event_type is left out (*added false), as a read of the event log leaves it out (docs/api.md
 * "Event log"). */
int ps_event_record_add_row_text(struct ps_event_record *rec, const char *text, size_t len,
                                 bool *added, struct ps_error *err);
/* The length of the job row that text (len bytes) begins with, when the row is one the record
 * reads without JSON values (a compact object of scalars and resource_limits, strings of
 * printable ASCII without escapes: valid JSON on its own, as every job row the scheduler writes
 * is); 0 when text begins with anything else. */
size_t ps_event_text_job_row_len(const char *text, size_t len);
/* The timestamp a row's text begins with ({"timestamp":N, as the scheduler writes its rows),
 * read without parsing the row; false when it does not begin that way. */
bool ps_event_text_timestamp(const char *text, int64_t *ts);
/* The timestamp of a row's text (len bytes) as the event log's filters compare it: read off its
 * beginning, else parsed (0 when it has none, as json_integer_value gives). */
int64_t ps_event_text_time(const char *text, size_t len);
#endif
