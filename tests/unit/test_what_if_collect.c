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
 * log"): a page is the newest `limit` rows whose timestamp is at most `until`, oldest first. */
struct log {
    json_t **rows;
    size_t count;
    int pages;
    bool text;   /* rows served as their text (JSON strings), as from inside the scheduler */
    bool wire;   /* that text written as a reply and split back (io/event_page.h), as the CLI */
};

static int serve(void *ctx, int64_t until_ms, int limit, json_t **page, struct ps_error *err)
{
    (void)err;
    struct log *l = ctx;
    l->pages++;
    *page = json_array();
    size_t end = l->count, n = 0;
    while (end > 0 && n < (size_t)limit) {   /* the rows are in time order here */
        if (json_integer_value(json_object_get(l->rows[end - 1], "timestamp")) <= until_ms)
            n++;
        end--;
    }
    for (size_t i = end; i < l->count && json_array_size(*page) < n; i++) {
        if (json_integer_value(json_object_get(l->rows[i], "timestamp")) > until_ms)
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
    assert_int_equal(ps_event_page_write(*page, &b, err), 0);
    json_decref(*page);
    assert_int_equal(ps_event_page_split(b.data, b.len, page, err), 0);
    assert_non_null(*page);
    ps_textbuf_release(&b);
    return 0;
}

/* count rows, timestamps i / same (runs of `same` rows in one millisecond), every 5th row not a
 * job row, now and then one whose timestamp is not its first key, and with damaged, now and
 * then one without an event type (a damaged store: the scheduler's read by time alone hands
 * it over as text, counted in the page, and the collector leaves it out) */
static struct log make_log(size_t count, size_t same, bool damaged)
{
    struct log l = {calloc(count, sizeof(json_t *)), count, 0, false, false};
    for (size_t i = 0; i < count; i++) {
        char job[32], op[32];
        snprintf(job, sizeof job, "job-%zu", i / 2);
        snprintf(op, sizeof op, "op-%zu", i / 300);
        l.rows[i] = damaged && i % 1009 == 1000
            ? json_pack("{s:I, s:s}", "timestamp", (json_int_t)(i / same), "job_id", job)
            : i % 5 == 4
            ? json_pack("{s:I, s:s, s:s}", "timestamp", (json_int_t)(i / same), "event_type",
                        "operation_started", "operation_id", op)
            : json_pack("{s:I, s:s, s:s, s:s, s:s, s:{s:f}}", "timestamp",
                        (json_int_t)(i / same), "event_type",
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

/* Paged back from until, the record holds every row up to until, oldest first, once: as the
 * rows added one by one (pages of 10,000 cut inside runs of rows of one millisecond), whether
 * the pages hold JSON objects, the rows' text (inside the scheduler), or the rows split off a
 * reply written from their text (the CLI over HTTP). A damaged row only in the second: a reply
 * leaves it out, and its page is a row short. */
static void test_pages_make_the_whole_record(void **state)
{
    (void)state;
    const int64_t untils[] = {1000000, 4321, 1};
    for (size_t c = 0; c < 3 * sizeof untils / sizeof *untils; c++) {
        size_t u = c / 3;
        struct log l = make_log(35017, 7, c % 3 == 1);
        l.text = c % 3 != 0;
        l.wire = c % 3 == 2;
        struct ps_error err;
        ps_error_init(&err);
        struct ps_event_record *got = NULL;
        assert_int_equal(ps_what_if_collect_rows(serve, &l, untils[u], &got, &err), 0);
        struct ps_event_record *want = ps_event_record_new();
        for (size_t i = 0; i < l.count; i++)   /* the damaged rows left out */
            if (json_integer_value(json_object_get(l.rows[i], "timestamp")) <= untils[u] &&
                json_object_get(l.rows[i], "event_type"))
                assert_int_equal(ps_event_record_add(want, l.rows[i], &err), 0);
        assert_same_record(want, got);
        if (untils[u] == 1000000)   /* 35,017 rows: 4 pages and the one past the oldest row */
            assert_true(l.pages >= 4);
        ps_event_record_free(want);
        ps_event_record_free(got);
        free_log(&l);
    }
}

/* More rows in one millisecond than a page holds cannot be paged: an error, no record. */
static void test_a_millisecond_over_a_page_refused(void **state)
{
    (void)state;
    struct log l = make_log(25000, 12000, false);   /* 12,000 rows at 0, 12,000 at 1, 1,000 at 2 */
    struct ps_error err;
    ps_error_init(&err);
    struct ps_event_record *got = (struct ps_event_record *)&l;
    assert_int_equal(ps_what_if_collect_rows(serve, &l, 10, &got, &err), PS_ELIMIT);
    assert_null(got);
    assert_non_null(strstr(err.msg, "more than 10000 event log rows at 1 ms"));
    free_log(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages_make_the_whole_record),
        cmocka_unit_test(test_a_millisecond_over_a_page_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
