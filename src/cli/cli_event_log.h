/* cli_event_log.h — the CLI reading the scheduler's event log (//sys/scheduler/event_log,
 * docs/api.md "Event log"): one page of it, as `poolsched event-log` prints it and
 * `poolsched what-if` pages back through it (io/event_page.h). */
#ifndef PS_CLI_EVENT_LOG_H
#define PS_CLI_EVENT_LOG_H

#include <stdint.h>

#include <jansson.h>

#include "cli/cli_client.h"
#include "core/error.h"

/* Where the pages come from: the client, and the read's other filters (operation_id,
 * event_type, since: borrowed; NULL for none). */
struct ps_cli_event_log {
    struct ps_cli_client *c;
    const json_t *filters;
};

/* One page from the scheduler (ps_event_page_fn; ctx: a struct ps_cli_event_log): the newest
 * limit rows at or before until_ms below row upper_row that pass the filters, oldest first, its
 * job rows as their text, split off the reply without parsing it whole unless the reply has
 * another shape; *first_row: the reply's first_row_index. Errors: PS_EIO with an empty message
 * after ps_cli_call_text printed why, or "the reply has no "value" list";
 * ps_event_page_split's. */
int ps_cli_event_log_page(void *ctx, int64_t until_ms, int64_t upper_row, int limit,
                          json_t **page, int64_t *first_row, struct ps_error *err);

#endif
