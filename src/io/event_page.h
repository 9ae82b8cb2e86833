/* event_page.h — a page of event log rows as the API's reply, {"value":[ROW,...]} (docs/api.md
 * "Event log"), written from the rows' stored text and split back into rows, so that a page of
 * 10,000 job rows crosses the connection without being parsed and encoded on one side and
 * parsed whole on the other (`poolsched what-if` pages back through a week of them). A job row
 * that the record's scanner takes (io/event_record.h) goes through as its text; any other row
 * goes through jansson. Pure: no I/O. */
#ifndef PS_IO_EVENT_PAGE_H
#define PS_IO_EVENT_PAGE_H

#include <stddef.h>

#include <jansson.h>

#include <stdint.h>

#include "core/error.h"
#include "io/textbuf.h"

#define PS_EVENT_PAGE_ROWS 10000   /* a read's rows at most, and a page of a read back */

/* One page of the event log: the newest limit rows at or before until_ms, oldest first (and
 * whatever other filters the page function applies); a row is a JSON object or its text as a
 * JSON string. */
typedef int (*ps_event_page_fn)(void *ctx, int64_t until_ms, int limit, json_t **page,
                                struct ps_error *err);

/* A page read back (ps_event_page_back): its rows to keep are those whose timestamp
 * (ps_event_page_row_ms) is after cut_ms (INT64_MIN: all of them); *kept: how many were. */
typedef int (*ps_event_take_fn)(void *ctx, json_t *page, int64_t cut_ms, size_t *kept,
                                struct ps_error *err);

/* Every row at or before until_ms, paged back in time, given to take page by page, the newest
 * page first: each page is the newest PS_EVENT_PAGE_ROWS rows up to a bound; a full page's
 * oldest millisecond (its first row's) may be cut, so its rows at or before it are not kept and
 * the next page ends there; a page that is not full is the last. Errors: page's and take's,
 * PS_ELIMIT "more than 10000 event log rows at T ms: cannot page" when a full page keeps
 * nothing. */
int ps_event_page_back(ps_event_page_fn page, void *ctx, int64_t until_ms, ps_event_take_fn take,
                       void *take_ctx, struct ps_error *err);

/* A row's timestamp as the event log's filters compare it (0 when it has none): a row, or its
 * text (ps_event_text_time). */
int64_t ps_event_page_row_ms(const json_t *row);

/* The reply {"value":[...]} of rows into b (compact JSON). rows: a list whose items are rows'
 * stored text (JSON strings) or rows (any other value). A text the scanner takes whole as a job
 * row is copied as it is; any other text is parsed and written when it is an object with a
 * string event_type, else left out (a damaged store), as ps_event_log_parse leaves it out; a
 * value is written as it is. Errors: PS_ENOMEM. */
int ps_event_page_write(const json_t *rows, struct ps_textbuf *b, struct ps_error *err);

/* The rows of a reply body (len bytes) as ps_event_page_write writes it into *rows, a new list
 * in the body's order: a job row the scanner takes as its text (a JSON string; what-if's
 * collector reads it without JSON values), any other row parsed (jansson). 0 with *rows NULL
 * when body is not of that shape (the caller parses it whole); errors: PS_EINVAL naming the
 * byte offset of a row that is not JSON, PS_ENOMEM. */
int ps_event_page_split(const char *body, size_t len, json_t **rows, struct ps_error *err);

#endif
