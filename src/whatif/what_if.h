/* what_if.h — a what-if (docs/what-if.md): the recorded event log rows as a scenario, the
 * proposed changes applied to a copy, both run in virtual time, compared. Used by `poolsched
 * what-if` (cli/cmd_what_if.c, rows from the API or a file) and by the scheduler's what-if
 * tasks (server/what_if_task.c, rows from its own event log): the same rows and changes give
 * the same what-if.json. */
#ifndef PS_WHATIF_WHAT_IF_H
#define PS_WHATIF_WHAT_IF_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "io/event_page.h"
#include "io/event_record.h"

struct ps_what_if_request {
    int64_t since_ms, until_ms;
    int64_t heartbeat_period_ms, fair_share_update_period_ms;   /* the cluster's */
    const char *default_tree;   /* the tree to report on; NULL: the record's default, else
                                 * its first */
    /* the event log's rows, oldest first (ps_what_if_collect_rows, or ps_event_record_add one
     * by one); taken: ps_what_if_prepare owns it from the call on, whatever it returns */
    struct ps_event_record *record;
    const json_t *changes;      /* [[path, value or null (remove)], ...] in order */
    const json_t *trees;        /* {tree: config as it is now} for trees the record's
                                 * pool_trees_info rows do not describe, or NULL (defaults) */
};

struct ps_what_if;

/* Builds both scenarios and checks them as the simulator would (nothing runs, nothing is
 * written). The window replayed starts no earlier than the record (its oldest row, or its first
 * pools_info row when later: nothing is known before); PS_EINVAL "until: ..." when it ends
 * there or before. Takes q->record and frees it before returning (what the fidelity needs of it is
 * kept apart); borrows nothing of q after it returns. Errors: PS_EINVAL naming the change
 * (path, value, reason) or the record's flaw, PS_ENOMEM. */
int ps_what_if_prepare(const struct ps_what_if_request *q, struct ps_what_if **out,
                       struct ps_error *err);

/* called with each run's name ("recorded", "changed") and 2, 4, ..., 100 */
typedef void (*ps_what_if_progress_fn)(void *ctx, const char *run, int percent);

/* How ps_what_if_execute reports and stops; zeroed: silent, to the end. */
struct ps_what_if_control {
    ps_what_if_progress_fn progress;
    void *ctx;
    const atomic_bool *cancel;   /* set (by any thread): the runs stop, PS_ESTATE "cancelled" */
    bool no_events;              /* the runs write no events.jsonl (ps_sim_dir_options) */
};

/* Runs both into dir (created if missing): scenario.json and scenario-changed.json, recorded/
 * and changed/ (each the simulator's outputs, events.jsonl unless c->no_events, and
 * report.html), what-if.json and report.html.
 * *json_text receives what-if.json's text, *summary the one-screen text (either may be NULL).
 * Errors: PS_EIO naming the file, PS_ENOMEM, PS_ESTATE cancelled. */
int ps_what_if_execute(const struct ps_what_if *w, const char *dir,
                       const struct ps_what_if_control *c, char **json_text, char **summary,
                       struct ps_error *err);

void ps_what_if_free(struct ps_what_if *w);

/* WHEN: a time ago ("7d", "12h", "30m", "90s", "500ms") counted from now_ms (0 for one before
 * the epoch), or ms since the epoch. Errors: PS_EINVAL `<what>: "<text>" is not a time (...)`. */
int ps_what_if_parse_when(const char *text, const char *what, int64_t now_ms, int64_t *out,
                          struct ps_error *err);

/* Every row at or before until_ms, in the order the log was written, into a new record (*out),
 * paged back by row index (ps_event_page_back, io/event_page.h). Each page is kept compactly
 * (io/event_record.h) as it arrives and its JSON freed; the pages are joined oldest first at
 * the end. Errors: the page function's and ps_event_page_back's, PS_ENOMEM. */
int ps_what_if_collect_rows(ps_event_page_fn page, void *ctx, int64_t until_ms,
                            struct ps_event_record **out, struct ps_error *err);

#endif
