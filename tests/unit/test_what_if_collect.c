#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/event_page.h"
#include "io/event_record.h"
#include "event_record_test_util.h"
#include "whatif/what_if.h"

/* An event log in memory, served as //sys/scheduler/event_log serves it (docs/api.md "Event
 * log"): a page is the newest `limit` rows (in the order they were written) whose timestamp is
 * at most `until` and whose row index is below `upper_row`, oldest first, with the row index of
 * its oldest row. */
struct log {
    json_t **rows;
    size_t count;
    int pages;
    bool text;   /* rows served as their text (JSON strings), as from inside the scheduler */
    bool wire;   /* that text written as a reply and split back (io/event_page.h), as the CLI */
};

static int64_t row_ms(const struct log *l, size_t i)
{
    return json_integer_value(json_object_get(l->rows[i], "timestamp"));
}

static int serve(void *ctx, int64_t until_ms, int64_t upper_row, int limit, json_t **page,
                 int64_t *first_row, struct ps_error *err)
{
    (void)err;
    struct log *l = ctx;
    l->pages++;
    *page = json_array();
    size_t end = upper_row == PS_EVENT_NO_ROW || (size_t)upper_row > l->count
                     ? l->count : (size_t)upper_row;
    size_t start = end, n = 0;   /* the oldest row of the page, and its rows */
    for (size_t i = end; i-- > 0 && n < (size_t)limit;)
        if (row_ms(l, i) <= until_ms) {
            start = i;
            n++;
        }
    *first_row = n > 0 ? (int64_t)start : PS_EVENT_NO_ROW;
    for (size_t i = start; i < end; i++) {
        if (row_ms(l, i) > until_ms)
            continue;
        if (!l->text) {
            json_array_append(*page, l->rows[i]);
            continue;
        }
        char *text = json_dumps(l->rows[i], JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_array_append_new(*page, json_string(text));
        free(text);
    }
    if (!l->wire)
        return 0;
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    assert_int_equal(ps_event_page_write(*page, *first_row, &b, err), 0);
    json_decref(*page);
    int64_t sent = *first_row;
    assert_int_equal(ps_event_page_split(b.data, b.len, page, first_row, err), 0);
    assert_non_null(*page);
    assert_int_equal(*first_row, sent);
    ps_textbuf_release(&b);
    return 0;
}

/* count rows, timestamps i / same (runs of `same` rows in one millisecond) less back ms after
 * every 3,001 rows (a clock stepped back), every 5th row not a job row, now and then one whose
 * timestamp is not its first key, and with damaged, now and then one without an event type (a
 * damaged store: the scheduler's read by time alone hands it over as text, counted in the page,
 * and the collector leaves it out) */
static struct log make_log(size_t count, size_t same, int64_t back, bool damaged)
{
    struct log l = {calloc(count, sizeof(json_t *)), count, 0, false, false};
    for (size_t i = 0; i < count; i++) {
        char job[32], op[32];
        snprintf(job, sizeof job, "job-%zu", i / 2);
        snprintf(op, sizeof op, "op-%zu", i / 300);
        json_int_t ts = (json_int_t)((int64_t)(i / same) - back * (int64_t)(i / 3001));
        l.rows[i] = damaged && i % 1009 == 1000
            ? json_pack("{s:I, s:s}", "timestamp", ts, "job_id", job)
            : i % 5 == 4
            ? json_pack("{s:I, s:s, s:s}", "timestamp", ts, "event_type",
                        "operation_started", "operation_id", op)
            : json_pack("{s:I, s:s, s:s, s:s, s:s, s:{s:f}}", "timestamp", ts, "event_type",
                        i % 2 ? "job_completed" : "job_started", "job_id", job, "operation_id",
                        op, "task_name", "map", "resource_limits", "cpu", 1.0 + (double)(i % 3));
        assert_non_null(l.rows[i]);
        if (i % 997 == 3) {   /* the timestamp not first: not read off the text */
            json_t *moved = json_object_get(l.rows[i], "timestamp");
            json_incref(moved);
            json_object_del(l.rows[i], "timestamp");
            json_object_set_new(l.rows[i], "timestamp", moved);
        }
    }
    return l;
}

static void free_log(struct log *l)
{
    for (size_t i = 0; i < l->count; i++)
        json_decref(l->rows[i]);
    free(l->rows);
}

/* Paged back from until, the record holds every row up to until, in the order written, once:
 * as the rows added one by one, whether the pages hold JSON objects, the rows' text (inside the
 * scheduler), or the rows split off a reply written from their text (the CLI over HTTP); with
 * pages of 10,000 cut inside runs of rows of one millisecond, with a clock that steps back (rows
 * written before a step, later than those after it: none missed, as paging by timestamp missed
 * them), and with more rows in one millisecond than a page holds (paging by timestamp could not
 * go on). A damaged row only in the second: a reply leaves it out, and its page is a row
 * short. */
static void test_pages_make_the_whole_record(void **state)
{
    (void)state;
    const struct {
        size_t same;
        int64_t back;
    } logs[] = {{7, 0}, {7, 300}, {12000, 0}};
    const int64_t untils[] = {1000000, 4321, 1};
    for (size_t g = 0; g < sizeof logs / sizeof *logs; g++) {
        for (size_t c = 0; c < 3 * sizeof untils / sizeof *untils; c++) {
            size_t u = c / 3;
            struct log l = make_log(35017, logs[g].same, logs[g].back, c % 3 == 1);
            l.text = c % 3 != 0;
            l.wire = c % 3 == 2;
            struct ps_error err;
            ps_error_init(&err);
            struct ps_event_record *got = NULL;
            assert_int_equal(ps_what_if_collect_rows(serve, &l, untils[u], &got, &err), 0);
            struct ps_event_record *want = ps_event_record_new();
            for (size_t i = 0; i < l.count; i++)   /* the damaged rows left out */
                if (row_ms(&l, i) <= untils[u] && json_object_get(l.rows[i], "event_type"))
                    assert_int_equal(ps_event_record_add(want, l.rows[i], &err), 0);
            assert_same_record(want, got);
            if (untils[u] == 1000000)   /* 35,017 rows: 3 full pages and the last */
                assert_int_equal(l.pages, 4);
            ps_event_record_free(want);
            ps_event_record_free(got);
            free_log(&l);
        }
    }
}

/* A page function that gives a full page without its first row index, or one not below the
 * bound asked for, cannot be paged: an error, no record (not a loop, not a short record). */
static int no_first_row(void *ctx, int64_t until_ms, int64_t upper_row, int limit,
                        json_t **page, int64_t *first_row, struct ps_error *err)
{
    int rc = serve(ctx, until_ms, upper_row, limit, page, first_row, err);
    *first_row = PS_EVENT_NO_ROW;
    return rc;
}

static int same_first_row(void *ctx, int64_t until_ms, int64_t upper_row, int limit,
                          json_t **page, int64_t *first_row, struct ps_error *err)
{
    (void)upper_row;
    return serve(ctx, until_ms, PS_EVENT_NO_ROW, limit, page, first_row, err);
}

static void test_pages_without_a_row_index_refused(void **state)
{
    (void)state;
    ps_event_page_fn fns[] = {no_first_row, same_first_row};
    const char *says[] = {"came without its first_row_index: cannot page",
                          "an event log page below row 25017 began at row 25017: cannot page"};
    for (size_t k = 0; k < 2; k++) {
        struct log l = make_log(35017, 7, 0, false);
        struct ps_error err;
        ps_error_init(&err);
        struct ps_event_record *got = (struct ps_event_record *)&l;
        assert_int_equal(ps_what_if_collect_rows(fns[k], &l, 1000000, &got, &err), PS_EIO);
        assert_null(got);
        assert_non_null(strstr(err.msg, says[k]));
        assert_int_equal(l.pages, 2 - (int)(k == 0));
        free_log(&l);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages_make_the_whole_record),
        cmocka_unit_test(test_pages_without_a_row_index_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
