/* Fuzzes the event log page's reply split (io/event_page.h) and the record's job-row scanner
 * (io/event_record.h), on a reply body as a scheduler (or anything at --proxy) may send.
 * Invariants:
 * - a split fails with PS_EINVAL and a message, no rows; or gives no rows (another shape); or
 *   gives rows, each a job-row text the scanner takes whole, or a parsed value;
 * - a text the scanner takes is JSON that jansson reads as the same job row: a record made from
 *   the text (the scanner) and one made from jansson's value hold the same job;
 * - its first_row_index is a row index (>= 0) or none, and none when it gives no rows;
 * - written again (ps_event_page_write) and split again, the rows and first_row_index are the
 *   same. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/event_page.h"
#include "io/event_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *name(const struct ps_event_names *n, uint32_t i)
{
    return i == PS_EVENT_NONE ? "" : n->names[i];
}

/* The scanner's reading of text against jansson's: the same single job, field by field. */
static void check_scanned(const char *text, size_t len)
{
    struct ps_error err;
    ps_error_init(&err);
    json_t *row = json_loadb(text, len, 0, NULL);
    if (!json_is_object(row))
        abort();   /* the scanner took what jansson refuses */
    struct ps_event_record *a = ps_event_record_new(), *b = ps_event_record_new();
    if (!a || !b || ps_event_record_add_text(a, text, len, &err) != 0 ||
        ps_event_record_add(b, row, &err) != 0)
        abort();
    if (a->job_count != 1 || b->job_count != 1 || a->other_count || b->other_count)
        abort();
    const struct ps_event_job *x = &a->jobs[0], *y = &b->jobs[0];
    if (x->timestamp != y->timestamp || x->start_time != y->start_time ||
        x->finish_time != y->finish_time || x->kind != y->kind || x->flaw != y->flaw ||
        memcmp(x->resources, y->resources, sizeof x->resources) != 0 ||
        strcmp(name(&a->job_ids, x->job), name(&b->job_ids, y->job)) != 0 ||
        strcmp(name(&a->operation_ids, x->operation), name(&b->operation_ids, y->operation)) ||
        strcmp(name(&a->task_names, x->task), name(&b->task_names, y->task)) != 0 ||
        strcmp(name(&a->tree_ids, x->tree), name(&b->tree_ids, y->tree)) != 0 ||
        (x->job == PS_EVENT_NONE) != (y->job == PS_EVENT_NONE) ||
        (x->operation == PS_EVENT_NONE) != (y->operation == PS_EVENT_NONE) ||
        (x->task == PS_EVENT_NONE) != (y->task == PS_EVENT_NONE) ||
        (x->tree == PS_EVENT_NONE) != (y->tree == PS_EVENT_NONE)) {
        fprintf(stderr, "the scanner and jansson read %.*s differently\n", (int)len, text);
        abort();
    }
    ps_event_record_free(a);
    ps_event_record_free(b);
    json_decref(row);
}

/* A row as a value: a text (a job row the split kept as text) parsed. */
static json_t *value_of(json_t *row)
{
    return json_is_string(row) ? json_loadb(json_string_value(row), json_string_length(row), 0,
                                            NULL)
                               : json_incref(row);
}

/* The same rows as values (a row written compact may be split as text where it was a value). */
static bool same_rows(const json_t *a, const json_t *b)
{
    if (json_array_size(a) != json_array_size(b))
        return false;
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *x = value_of(json_array_get(a, i)), *y = value_of(json_array_get(b, i));
        bool same = x && y && json_equal(x, y);
        json_decref(x);
        json_decref(y);
        if (!same)
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    if (ps_event_text_job_row_len(body, size) == size && size > 0)
        check_scanned(body, size);

    struct ps_error err;
    ps_error_init(&err);
    json_t *rows = NULL;
    int64_t first = 0;
    int rc = ps_event_page_split(body, size, &rows, &first, &err);
    if (rc != 0) {
        if (rows || err.msg[0] == '\0' || (rc != PS_EINVAL && rc != PS_ENOMEM))
            abort();
        return 0;
    }
    if (!rows && first != PS_EVENT_NO_ROW)
        abort();
    if (!rows)
        return 0;
    if (first < PS_EVENT_NO_ROW)
        abort();
    for (size_t i = 0; i < json_array_size(rows); i++) {
        const json_t *row = json_array_get(rows, i);
        if (json_is_string(row)) {
            const char *t = json_string_value(row);
            size_t n = json_string_length(row);
            if (ps_event_text_job_row_len(t, n) != n)
                abort();
            check_scanned(t, n);
        }
    }
    /* Written again (a value as it is, a job row's text copied) and split again. */
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    if (ps_event_page_write(rows, first, &b, &err) != 0)
        abort();
    json_t *again = NULL;
    int64_t first_again = 0;
    if (ps_event_page_split(b.data, b.len, &again, &first_again, &err) != 0 || !again ||
        !same_rows(rows, again) || first_again != first) {
        fprintf(stderr, "written again and split, the rows differ: %s\n", b.data);
        abort();
    }
    json_decref(again);
    ps_textbuf_release(&b);
    json_decref(rows);
    return 0;
}
