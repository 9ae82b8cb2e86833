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

#include "core/error.h"
#include "io/textbuf.h"

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
