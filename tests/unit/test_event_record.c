#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/error.h"
#include "io/event_record.h"
#include "event_record_test_util.h"

/* Job rows the text scanner reads itself, and rows it leaves to jansson: either way the record
 * holds what ps_event_record_add of the parsed row holds. */
static const char *const rows[] = {
    "{\"timestamp\": 5, \"event_type\": \"job_started\", \"job_id\": \"j1\", \"operation_id\": "
    "\"op1\", \"task_name\": \"map\", \"tree_id\": \"physical\", \"resource_limits\": "
    "{\"user_slots\": 1, \"cpu\": 2.5, \"gpu\": 0, \"memory\": 1024, \"network\": 0}}",
    /* an end row; keys in another order, spaces, a repeated key (the last counts) */
    "{ \"job_id\":\"j1\" , \"event_type\":\"job_completed\",\"operation_id\":\"op1\","
    "\"timestamp\":9,\"tree_id\":null,\"start_time\":5,\"finish_time\":9,\"task_name\":\"map\","
    "\"resource_limits\":{\"cpu\":1,\"cpu\":3e0,\"memory\":-0,\"unknown\":\"x\"},"
    "\"timestamp\":10 }\r\n",
    /* flaws: no job_id, a non-string operation, limits not a map, real times */
    "{\"timestamp\": 11, \"event_type\": \"job_failed\", \"operation_id\": \"op1\", "
    "\"resource_limits\": {}}",
    "{\"timestamp\": 12, \"event_type\": \"job_aborted\", \"job_id\": \"j2\", \"operation_id\": "
    "7, \"resource_limits\": null, \"task_name\": true}",
    "{\"timestamp\": 13, \"event_type\": \"job_failed\", \"job_id\": \"j3\", \"operation_id\": "
    "\"op2\", \"resource_limits\": {\"cpu\": 1}, \"start_time\": 1.0, \"finish_time\": 13}",
    /* left to jansson: an escape, non-ASCII, a list, a nested map, a big integer */
    "{\"timestamp\": 14, \"event_type\": \"job_started\", \"job_id\": \"j\\u0034\", "
    "\"operation_id\": \"op2\", \"resource_limits\": {\"cpu\": 1}}",
    "{\"timestamp\": 15, \"event_type\": \"job_started\", \"job_id\": \"j\xc3\xa9\", "
    "\"operation_id\": \"op2\", \"resource_limits\": {\"cpu\": 1}, \"tags\": [1]}",
    "{\"timestamp\": 16, \"event_type\": \"job_started\", \"job_id\": \"j5\", \"operation_id\": "
    "\"op2\", \"resource_limits\": {\"cpu\": {\"x\": 1}}, \"start_time\": 1234567890123456789}",
    /* not job rows: a timestamp that is not an integer >= 0, other event types */
    "{\"timestamp\": -1, \"event_type\": \"job_started\", \"job_id\": \"j6\"}",
    "{\"timestamp\": \"7\", \"event_type\": \"job_started\", \"job_id\": \"j6\"}",
    "{\"timestamp\": 17, \"event_type\": \"operation_started\", \"operation_id\": \"op1\"}",
    "{\"timestamp\": 18, \"event_type\": \"job_started\", \"event_type\": \"pools_info\"}",
    "[1, 2]",
};

#define ROW_COUNT (sizeof rows / sizeof *rows)

/* rows[from..to) added one by one to rec */
static void add_rows(struct ps_event_record *rec, size_t from, size_t to, bool text)
{
    for (size_t i = from; i < to; i++) {
        struct ps_error err;
        ps_error_init(&err);
        if (text) {
            assert_int_equal(ps_event_record_add_text(rec, rows[i], strlen(rows[i]), &err), 0);
            continue;
        }
        json_error_t jerr;
        json_t *row = json_loads(rows[i], 0, &jerr);
        if (!row)
            fail_msg("row %zu: %s", i, jerr.text);
        assert_int_equal(ps_event_record_add(rec, row, &err), 0);
        json_decref(row);
    }
}

static struct ps_event_record *record(bool text)
{
    struct ps_event_record *rec = ps_event_record_new();
    assert_non_null(rec);
    add_rows(rec, 0, ROW_COUNT, text);
    return rec;
}

static void test_text_rows_read_as_jansson_reads_them(void **state)
{
    (void)state;
    struct ps_event_record *a = record(false), *b = record(true);
    assert_int_equal(a->row_count, ROW_COUNT);
    assert_int_equal(b->row_count, a->row_count);
    assert_int_equal(b->newest_ms, a->newest_ms);
    assert_int_equal(a->newest_ms, 18);
    /* the oldest integer timestamp >= 0: not the -1 row's, nor the "7" (a string) row's */
    assert_int_equal(a->oldest_ms, 5);
    assert_int_equal(b->oldest_ms, a->oldest_ms);
    assert_int_equal(a->job_count, 8);
    assert_int_equal(b->job_count, a->job_count);
    for (size_t i = 0; i < a->job_count; i++)
        assert_same_job(a, &a->jobs[i], b, &b->jobs[i]);
    assert_int_equal(b->other_count, a->other_count);
    for (size_t i = 0; i < a->other_count; i++) {
        assert_int_equal(a->others[i].row, b->others[i].row);
        assert_true(json_equal(a->others[i].json, b->others[i].json));
    }
    /* what the scanner read: the repeated keys' last values, the flaws in the replay's order */
    const struct ps_event_job *end = &b->jobs[1];
    assert_int_equal(end->timestamp, 10);
    assert_true(end->resources[PS_RES_CPU] == 3.0);
    assert_int_equal(end->kind, PS_EVENT_JOB_COMPLETED);
    assert_int_equal(b->jobs[2].flaw, PS_EVENT_JOB_BAD_ID);
    assert_int_equal(b->jobs[3].flaw, PS_EVENT_JOB_BAD_OPERATION);
    assert_int_equal(b->jobs[4].flaw, PS_EVENT_JOB_BAD_TIMES);
    assert_string_equal(record_name(&b->job_ids, b->jobs[5].job), "j4");
    assert_string_equal(record_name(&b->tree_ids, b->jobs[0].tree), "physical");
    assert_int_equal(b->jobs[1].tree, PS_EVENT_NONE);
    ps_event_record_free(a);
    ps_event_record_free(b);
}

/* Pages appended in order hold what the rows added one by one hold: for every split of the
 * rows in two and three (what-if's pages), over a record that already has rows and names. */
static void test_append_is_adding_in_turn(void **state)
{
    (void)state;
    for (size_t k = 0; k <= ROW_COUNT; k++) {
        for (size_t m = k; m <= ROW_COUNT; m++) {
            struct ps_event_record *want = ps_event_record_new(), *got = ps_event_record_new();
            add_rows(want, 3, 6, false);   /* rows with names already there */
            add_rows(want, 0, ROW_COUNT, false);
            add_rows(got, 3, 6, false);
            size_t cut[] = {0, k, m, ROW_COUNT};
            for (int p = 0; p < 3; p++) {
                struct ps_event_record *page = ps_event_record_new();
                add_rows(page, cut[p], cut[p + 1], p == 1);
                struct ps_error err;
                ps_error_init(&err);
                assert_int_equal(ps_event_record_append(got, page, &err), 0);
                assert_int_equal(page->row_count, 0);
                ps_event_record_free(page);
            }
            assert_same_record(want, got);
            ps_event_record_free(want);
            ps_event_record_free(got);
        }
    }
}

static void test_text_not_json_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"timestamp\": 1, \"event_type\": \"job_started\", \"job_id\": \"j1\"",
        "{\"timestamp\": 01, \"event_type\": \"job_started\"}",
        "{\"timestamp\": 1, \"event_type\": \"job_started\"} x",
        "{\"timestamp\": 1, \"event_type\": \"job_started\", \"cpu\": 1e999}",
        "5",
    };
    struct ps_event_record *rec = ps_event_record_new();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct ps_error err;
        ps_error_init(&err);
        assert_int_equal(ps_event_record_add_text(rec, bad[i], strlen(bad[i]), &err), PS_EINVAL);
        assert_non_null(strstr(err.msg, "not a JSON row"));
    }
    assert_int_equal(rec->row_count, 0);
    ps_event_record_free(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_rows_read_as_jansson_reads_them),
        cmocka_unit_test(test_text_not_json_refused),
        cmocka_unit_test(test_append_is_adding_in_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
