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

#define PS_EVENT_NO_ROW (-1)    /* no row index: no bound, or no row */

/* One page of the event log: the newest limit rows at or before until_ms whose row index is
 * below upper_row (PS_EVENT_NO_ROW: any), oldest first (and whatever other filters the page
 * function applies); a row is a JSON object or its text as a JSON string. *first_row: the row
 * index of its oldest row (PS_EVENT_NO_ROW when it has none). */
typedef int (*ps_event_page_fn)(void *ctx, int64_t until_ms, int64_t upper_row, int limit,
                                json_t **page, int64_t *first_row, struct ps_error *err);

/* A page read back (ps_event_page_back), to keep. */
typedef int (*ps_event_take_fn)(void *ctx, json_t *page, struct ps_error *err);

/* Every row at or before until_ms, paged back in the order the log was written, given to take
 * page by page, the newest page first: each page is the newest PS_EVENT_PAGE_ROWS rows below
 * the last page's first row index; a page that is not full is the last. So each row comes once,
 * whatever the timestamps (a clock stepped back, more rows in a millisecond than a page holds).
 * Errors: page's and take's; PS_EIO "... cannot page" when a full page comes without its first
 * row index, or with one not below the bound it was asked for. */
int ps_event_page_back(ps_event_page_fn page, void *ctx, int64_t until_ms, ps_event_take_fn take,
                       void *take_ctx, struct ps_error *err);

/* A row's timestamp as the event log's filters compare it (0 when it has none): a row, or its
 * text (ps_event_text_time). */
int64_t ps_event_page_row_ms(const json_t *row);

/* The reply {"value":[...],"first_row_index":N} of rows into b (compact JSON; without
 * first_row_index when first_row is PS_EVENT_NO_ROW). rows: a list whose items are rows' stored
 * text (JSON strings) or rows (any other value). A text the scanner takes whole as a job row is
 * copied as it is; any other text is parsed and written when it is an object with a string
 * event_type, else left out (a damaged store), as ps_event_log_parse leaves it out; a value is
 * written as it is. Errors: PS_ENOMEM. */
int ps_event_page_write(const json_t *rows, int64_t first_row, struct ps_textbuf *b,
                        struct ps_error *err);

/* The rows of a reply body (len bytes) as ps_event_page_write writes it into *rows, a new list
 * in the body's order, and its first_row_index into *first_row (PS_EVENT_NO_ROW when it has
 * none): a job row the scanner takes as its text (a JSON string; what-if's collector reads it
 * without JSON values), any other row parsed (jansson). 0 with *rows NULL when body is not of
 * that shape (the caller parses it whole); errors: PS_EINVAL naming the byte offset of a row
 * that is not JSON, PS_ENOMEM. */
int ps_event_page_split(const char *body, size_t len, json_t **rows, int64_t *first_row,
                        struct ps_error *err);

#endif
