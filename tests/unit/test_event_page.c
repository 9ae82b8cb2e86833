#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/error.h"
#include "io/event_page.h"
#include "io/textbuf.h"

/* Stored texts as a read by time alone gives them (io/event_page.h), and what each must be in
 * the reply: NULL where the row is left out. */
static const struct {
    const char *stored;
    const char *row;   /* the row the reply holds, as JSON (compared as values) */
    bool verbatim;     /* copied as it is, and split back as its text */
} rows[] = {
    {"{\"timestamp\":5,\"event_type\":\"job_started\",\"job_id\":\"j1\",\"operation_id\":\"o\","
     "\"resource_limits\":{\"cpu\":1.5,\"memory\":1073741824}}",
     "{\"timestamp\":5,\"event_type\":\"job_started\",\"job_id\":\"j1\",\"operation_id\":\"o\","
     "\"resource_limits\":{\"cpu\":1.5,\"memory\":1073741824}}", true},
    /* not a job row: parsed, written compact */
    {"{\"timestamp\": 6, \"event_type\": \"operation_started\", \"spec\": {\"pool\": \"a\"}}",
     "{\"timestamp\":6,\"event_type\":\"operation_started\",\"spec\":{\"pool\":\"a\"}}", false},
    /* a damaged store: no event type, then not JSON: left out, with their commas */
    {"{\"timestamp\":7,\"job_id\":\"damaged\"}", NULL, false},
    {"{\"timestamp\":8,\"event_type\":\"job_started\"", NULL, false},
    /* a job row beyond the scanner (an escape in a string): parsed */
    {"{\"timestamp\":9,\"event_type\":\"job_completed\",\"job_id\":\"j\\u00e92\"}",
     "{\"timestamp\":9,\"event_type\":\"job_completed\",\"job_id\":\"j\\u00e92\"}", false},
    {"{\"timestamp\":10,\"event_type\":\"job_aborted\",\"job_id\":\"j3\",\"start_time\":1,"
     "\"finish_time\":10,\"resource_limits\":{}}",
     "{\"timestamp\":10,\"event_type\":\"job_aborted\",\"job_id\":\"j3\",\"start_time\":1,"
     "\"finish_time\":10,\"resource_limits\":{}}", true},
    {"{\"timestamp\":11,\"event_type\":\"job_started\",\"job_id\":\"damaged\"} x", NULL, false},
};
#define ROW_COUNT (sizeof rows / sizeof *rows)

static json_t *stored_page(bool with_object)
{
    json_t *page = json_array();
    for (size_t i = 0; i < ROW_COUNT; i++)
        json_array_append_new(page, json_string(rows[i].stored));
    if (with_object)   /* a row a read parsed under the lock (its timestamp not first) */
        json_array_append_new(page, json_pack("{s:s, s:i}", "event_type", "pools_info",
                                              "timestamp", 12));
    return page;
}

static char *written(const json_t *page, int64_t first_row, size_t *len)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    assert_int_equal(ps_event_page_write(page, first_row, &b, &err), 0);
    *len = b.len;
    return ps_textbuf_detach(&b);
}

/* The reply is one JSON object {"value": [...], "first_row_index": N} with the rows, the
 * damaged ones left out; a job row the scanner takes is its stored text, byte for byte. */
static void test_write(void **state)
{
    (void)state;
    json_t *page = stored_page(true);
    size_t len;
    char *body = written(page, 1234567890123, &len);
    json_t *reply = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    assert_non_null(reply);
    json_t *value = json_object_get(reply, "value");
    assert_int_equal(json_object_size(reply), 2);
    assert_int_equal(json_integer_value(json_object_get(reply, "first_row_index")),
                     1234567890123);
    size_t k = 0;
    for (size_t i = 0; i < ROW_COUNT; i++) {
        if (!rows[i].row)
            continue;
        json_t *want = json_loads(rows[i].row, 0, NULL);
        assert_true(json_equal(json_array_get(value, k++), want));
        json_decref(want);
        if (rows[i].verbatim)
            assert_non_null(strstr(body, rows[i].stored));
    }
    json_t *last = json_array_get(value, k++);
    assert_string_equal(json_string_value(json_object_get(last, "event_type")), "pools_info");
    assert_int_equal(json_array_size(value), k);
    json_decref(reply);
    free(body);
    json_decref(page);

    json_t *none = json_array();
    body = written(none, PS_EVENT_NO_ROW, &len);
    assert_string_equal(body, "{\"value\":[]}");
    free(body);
    json_decref(none);
}

/* Split back: the same rows in the same order, job rows the scanner takes as their text. */
static void test_split_round_trip(void **state)
{
    (void)state;
    json_t *page = stored_page(false);
    size_t len;
    char *body = written(page, 7, &len);
    struct ps_error err;
    ps_error_init(&err);
    json_t *got = NULL;
    int64_t first = PS_EVENT_NO_ROW;
    assert_int_equal(ps_event_page_split(body, len, &got, &first, &err), 0);
    assert_non_null(got);
    assert_int_equal(first, 7);
    size_t k = 0;
    for (size_t i = 0; i < ROW_COUNT; i++) {
        if (!rows[i].row)
            continue;
        json_t *row = json_array_get(got, k++);
        if (rows[i].verbatim) {
            assert_true(json_is_string(row));
            assert_string_equal(json_string_value(row), rows[i].stored);
        } else {
            json_t *want = json_loads(rows[i].row, 0, NULL);
            assert_true(json_equal(row, want));
            json_decref(want);
        }
    }
    assert_int_equal(json_array_size(got), k);
    json_decref(got);
    free(body);
    json_decref(page);
}

/* A body of another shape is left to the caller's parse (its first_row_index with it); a row
 * that is not JSON is an error naming where it starts. */
static void test_split_other_shapes(void **state)
{
    (void)state;
    const char *other[] = {
        "{\"value\": [{\"timestamp\":1,\"event_type\":\"x\"}]}",
        "{\"value\":[{\"timestamp\":1,\"event_type\":\"x\"}],\"more\":1}",
        "[{\"timestamp\":1,\"event_type\":\"x\"}]",
        "{\"value\":[{\"timestamp\":1,\"event_type\":\"x\"}]} junk",
        "{\"value\":[{\"timestamp\":1,\"event_type\":\"x\"}",
        "{\"value\":[",
        "",
        "{\"value\":[],\"first_row_index\":}",
        "{\"value\":[],\"first_row_index\":-1}",
        "{\"value\":[],\"first_row_index\":12x}",
        "{\"value\":[],\"first_row_index\":1234567890123456789012}",
        "{\"value\":[],\"first_row_index\":5",
        "{\"value\":[],\"first_row_index\":5,\"more\":1}",
    };
    struct ps_error err;
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        ps_error_init(&err);
        json_t *before = json_array(), *got = before;   /* set to NULL, not left as it was */
        int64_t first = 99;
        assert_int_equal(ps_event_page_split(other[i], strlen(other[i]), &got, &first, &err), 0);
        assert_null(got);
        assert_int_equal(first, PS_EVENT_NO_ROW);
        json_decref(before);
    }
    const char *fine = "{\"value\":[]}\n";
    json_t *got = NULL;
    int64_t first = 99;
    assert_int_equal(ps_event_page_split(fine, strlen(fine), &got, &first, &err), 0);
    assert_int_equal(json_array_size(got), 0);
    assert_int_equal(first, PS_EVENT_NO_ROW);
    json_decref(got);
    fine = "{\"value\":[],\"first_row_index\":0} ";
    got = NULL;
    assert_int_equal(ps_event_page_split(fine, strlen(fine), &got, &first, &err), 0);
    assert_int_equal(json_array_size(got), 0);
    assert_int_equal(first, 0);
    json_decref(got);

    const char *bad = "{\"value\":[{\"timestamp\":1,\"event_type\":\"x\"},nonsense]}";
    ps_error_init(&err);
    got = NULL;
    assert_int_equal(ps_event_page_split(bad, strlen(bad), &got, &first, &err), PS_EINVAL);
    assert_null(got);
    assert_non_null(strstr(err.msg, "the row at byte 43 is not JSON"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_split_round_trip),
        cmocka_unit_test(test_split_other_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
