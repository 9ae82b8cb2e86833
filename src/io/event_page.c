/* event_page.c — a page of event log rows as the API's reply (event_page.h). */
#include "io/event_page.h"

#include <stdbool.h>
#include <string.h>

#include "io/event_record.h"

static const char head[] = "{\"value\":[";
static const char first_key[] = ",\"first_row_index\":";

/* Whether text (len bytes) is one job row the scanner takes, nothing after it. */
static bool whole_job_row(const char *text, size_t len)
{
    return len > 0 && ps_event_text_job_row_len(text, len) == len;
}

/* A stored text the scanner does not take, parsed: written when it is a row (an object with a
 * string event_type); *written says whether it was. */
static int write_parsed(const char *text, size_t len, struct ps_textbuf *b, bool *written)
{
    json_t *row = json_loadb(text, len, 0, NULL);
    *written = json_is_object(row) && json_is_string(json_object_get(row, "event_type"));
    int rc = *written ? json_dump_callback(row, ps_textbuf_dump_cb, b, JSON_COMPACT) : 0;
    json_decref(row);
    return rc;
}

int ps_event_page_write(const json_t *rows, int64_t first_row, struct ps_textbuf *b,
                        struct ps_error *err)
{
    ps_textbuf_adds(b, head);
    bool first = true;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        const json_t *row = json_array_get(rows, i);
        size_t at = b->len;
        if (!first)
            ps_textbuf_addc(b, ',');
        bool written = true;
        int rc = 0;
        if (!json_is_string(row))
            rc = json_dump_callback(row, ps_textbuf_dump_cb, b, JSON_COMPACT | JSON_ENCODE_ANY);
        else if (whole_job_row(json_string_value(row), json_string_length(row)))
            ps_textbuf_add(b, json_string_value(row), json_string_length(row));
        else
            rc = write_parsed(json_string_value(row), json_string_length(row), b, &written);
        if (rc != 0 || b->failed)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        if (!written)
            b->len = at;   /* left out: the comma goes too */
        first = first && !written;
    }
    ps_textbuf_addc(b, ']');
    if (first_row != PS_EVENT_NO_ROW)
        ps_textbuf_addf(b, "%s%lld", first_key, (long long)first_row);
    ps_textbuf_addc(b, '}');
    return b->failed ? ps_error_set(err, PS_ENOMEM, "out of memory") : 0;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The row at *p into rows, *p past it; 0 with *p NULL when it is not JSON. */
static int split_row(const char **p, const char *end, json_t *rows)
{
    size_t n = ps_event_text_job_row_len(*p, (size_t)(end - *p));
    json_t *row;
    if (n > 0) {
        row = json_stringn_nocheck(*p, n);   /* printable ASCII: the scanner took it */
    } else {
        json_error_t jerr;
        row = json_loadb(*p, (size_t)(end - *p), JSON_DISABLE_EOF_CHECK, &jerr);
        if (!row) {
            *p = NULL;
            return 0;
        }
        n = (size_t)jerr.position;
    }
    *p += n;
    return row && json_array_append_new(rows, row) == 0 ? 0 : PS_ENOMEM;
}

/* The end of a reply after its rows, "]}" or "],"first_row_index":N}", then white space, into
 * *first_row; false when it is not that. */
static bool split_end(const char *p, const char *end, int64_t *first_row)
{
    *first_row = PS_EVENT_NO_ROW;
    if (p >= end || *p++ != ']')
        return false;
    size_t k = sizeof first_key - 1;
    if ((size_t)(end - p) > k && memcmp(p, first_key, k) == 0) {
        p += k;
        int64_t n = 0;
        const char *digits = p;
        while (p < end && *p >= '0' && *p <= '9' && p - digits < 18)
            n = 10 * n + (*p++ - '0');
        if (p == digits || (p < end && *p >= '0' && *p <= '9'))
            return false;
        *first_row = n;
    }
    return p < end && *p == '}' && skip_ws(p + 1, end) == end;
}

int ps_event_page_split(const char *body, size_t len, json_t **rows, int64_t *first_row,
                        struct ps_error *err)
{
    *rows = NULL;
    *first_row = PS_EVENT_NO_ROW;
    const char *p = body, *end = body + len;
    if (len < sizeof head - 1 || memcmp(p, head, sizeof head - 1) != 0)
        return 0;
    p += sizeof head - 1;
    json_t *out = json_array();
    if (!out)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    bool more = p < end && *p != ']';
    while (more) {
        const char *at = p;
        if (split_row(&p, end, out) != 0) {
            json_decref(out);
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
        if (!p) {
            json_decref(out);
            return ps_error_set(err, PS_EINVAL, "event log reply: the row at byte %zu is not "
                                                "JSON", (size_t)(at - body));
        }
        more = p < end && *p == ',';
        p += more;
    }
    if (!split_end(p, end, first_row)) {
        json_decref(out);   /* another shape: parsed whole by the caller */
        *first_row = PS_EVENT_NO_ROW;
        return 0;
    }
    *rows = out;
    return 0;
}

int64_t ps_event_page_row_ms(const json_t *row)
{
    if (json_is_string(row))
        return ps_event_text_time(json_string_value(row), json_string_length(row));
    return json_integer_value(json_object_get(row, "timestamp"));
}

int ps_event_page_back(ps_event_page_fn page, void *ctx, int64_t until_ms, ps_event_take_fn take,
                       void *take_ctx, struct ps_error *err)
{
    int64_t upper = PS_EVENT_NO_ROW;
    for (;;) {
        json_t *got = NULL;
        int64_t first = PS_EVENT_NO_ROW;
        int rc = page(ctx, until_ms, upper, PS_EVENT_PAGE_ROWS, &got, &first, err);
        if (rc != 0)
            return rc;
        bool full = json_array_size(got) == PS_EVENT_PAGE_ROWS;
        rc = take(take_ctx, got, err);
        json_decref(got);
        if (rc != 0 || !full)
            return rc;
        /* the next page ends below this one's first row: rows before it in the log's order */
        if (first == PS_EVENT_NO_ROW)
            return ps_error_set(err, PS_EIO, "an event log page of %d rows came without its "
                                             "first_row_index: cannot page", PS_EVENT_PAGE_ROWS);
        if (upper != PS_EVENT_NO_ROW && first >= upper)
            return ps_error_set(err, PS_EIO, "an event log page below row %lld began at row "
                                             "%lld: cannot page", (long long)upper,
                                (long long)first);
        upper = first;
    }
}
