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

static struct ps_event_record *record(bool text)
{
    struct ps_event_record *rec = ps_event_record_new();
    assert_non_null(rec);
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
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
    assert_int_equal(a->row_count, sizeof rows / sizeof *rows);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
