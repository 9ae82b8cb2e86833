#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/error.h"
#include "io/event_record.h"

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

static const char *name(const struct ps_event_names *n, uint32_t i)
{
    return i == PS_EVENT_NONE ? "(none)" : n->names[i];
}

static void assert_same_job(const struct ps_event_record *a, const struct ps_event_job *x,
                            const struct ps_event_record *b, const struct ps_event_job *y)
{
    assert_int_equal(x->row, y->row);
    assert_int_equal(x->timestamp, y->timestamp);
    assert_int_equal(x->start_time, y->start_time);
    assert_int_equal(x->finish_time, y->finish_time);
    assert_int_equal(x->kind, y->kind);
    assert_int_equal(x->flaw, y->flaw);
    assert_string_equal(name(&a->job_ids, x->job), name(&b->job_ids, y->job));
    assert_string_equal(name(&a->operation_ids, x->operation),
                        name(&b->operation_ids, y->operation));
    assert_string_equal(name(&a->task_names, x->task), name(&b->task_names, y->task));
    assert_string_equal(name(&a->tree_ids, x->tree), name(&b->tree_ids, y->tree));
    assert_memory_equal(x->resources, y->resources, sizeof x->resources);
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
    assert_string_equal(name(&b->job_ids, b->jobs[5].job), "j4");
    assert_string_equal(name(&b->tree_ids, b->jobs[0].tree), "physical");
    assert_int_equal(b->jobs[1].tree, PS_EVENT_NONE);
    ps_event_record_free(a);
    ps_event_record_free(b);
}

static void assert_same_names(const struct ps_event_names *a, const struct ps_event_names *b)
{
    assert_int_equal(a->count, b->count);
    for (size_t i = 0; i < a->count; i++)
        assert_string_equal(a->names[i], b->names[i]);
}

/* Everything, interned indexes included. */
static void assert_same_record(const struct ps_event_record *a, const struct ps_event_record *b)
{
    assert_int_equal(a->row_count, b->row_count);
    assert_int_equal(a->newest_ms, b->newest_ms);
    assert_int_equal(a->oldest_ms, b->oldest_ms);
    assert_same_names(&a->job_ids, &b->job_ids);
    assert_same_names(&a->operation_ids, &b->operation_ids);
    assert_same_names(&a->task_names, &b->task_names);
    assert_same_names(&a->tree_ids, &b->tree_ids);
    assert_int_equal(a->job_count, b->job_count);
    for (size_t i = 0; i < a->job_count; i++) {
        assert_same_job(a, &a->jobs[i], b, &b->jobs[i]);
        assert_int_equal(a->jobs[i].job, b->jobs[i].job);   /* the same interned indexes */
        assert_int_equal(a->jobs[i].operation, b->jobs[i].operation);
        assert_int_equal(a->jobs[i].task, b->jobs[i].task);
        assert_int_equal(a->jobs[i].tree, b->jobs[i].tree);
    }
    assert_int_equal(a->other_count, b->other_count);
    for (size_t i = 0; i < a->other_count; i++) {
        assert_int_equal(a->others[i].row, b->others[i].row);
        assert_true(json_equal(a->others[i].json, b->others[i].json));
    }
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
