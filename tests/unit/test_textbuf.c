/* Tests of the text buffer (io/textbuf.h): appends across growth, the latched failure, and
 * the forms the outputs use (decimal integers, JSON string literals, CSV fields). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "io/textbuf.h"

/* Many small appends through several growths keep every byte, in order, NUL-terminated. */
static void test_appends_across_growth(void **state)
{
    (void)state;
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    char want[5000];
    for (int i = 0; i < 4999; i++) {
        char c = (char)('a' + i % 26);
        want[i] = c;
        if (i % 3 == 0)
            ps_textbuf_addc(&b, c);
        else
            ps_textbuf_add(&b, &c, 1);
        assert_true(b.len < b.cap);
        assert_int_equal(b.data[b.len], '\0');
    }
    want[4999] = '\0';
    assert_int_equal(b.len, 4999);
    assert_string_equal(b.data, want);
    ps_textbuf_reset(&b);
    ps_textbuf_adds(&b, "x");
    assert_string_equal(b.data, "x");
    ps_textbuf_release(&b);
}

/* Once an allocation failed, appends do nothing, also those that would fit. */
static void test_failed_latches(void **state)
{
    (void)state;
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    ps_textbuf_adds(&b, "kept");
    assert_false(ps_textbuf_reserve(&b, (size_t)-1 / 2));
    assert_true(b.failed);
    ps_textbuf_adds(&b, "more");
    ps_textbuf_addi(&b, 7);
    assert_int_equal(b.len, 4);
    assert_string_equal(b.data, "kept");
    assert_null(ps_textbuf_detach(&b));
}

/* reserve makes room that a caller fills itself. */
static void test_reserve(void **state)
{
    (void)state;
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    ps_textbuf_adds(&b, "ab");
    assert_true(ps_textbuf_reserve(&b, 1000));
    assert_true(b.cap >= b.len + 1001);
    memset(b.data + b.len, 'z', 1000);
    b.len += 1000;
    b.data[b.len] = '\0';
    assert_int_equal(strlen(b.data), 1002);
    ps_textbuf_release(&b);
}

static void test_integers(void **state)
{
    (void)state;
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    int64_t xs[] = {0, 7, -7, 10, 1234567890123, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        ps_textbuf_addi(&b, xs[i]);
        ps_textbuf_addc(&b, ' ');
    }
    assert_string_equal(b.data, "0 7 -7 10 1234567890123 9223372036854775807 "
                                "-9223372036854775808 ");
    ps_textbuf_release(&b);
}

static void test_json_strings(void **state)
{
    (void)state;
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    ps_textbuf_add_json(&b, "");
    ps_textbuf_add_json(&b, "plain/pool");
    ps_textbuf_add_json(&b, "q\"b\\n\nt\tr\r\x01\x7f" "\xc3\xa9");
    assert_string_equal(b.data, "\"\"\"plain/pool\"\"q\\\"b\\\\n\\nt\\tr\\r\\u0001\\u007f"
                                "\xc3\xa9\"");
    ps_textbuf_release(&b);
}

static void test_csv_fields(void **state)
{
    (void)state;
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    const char *fields[] = {"plain", "", "a,b", "say \"hi\"", "two\nlines", "cr\r"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        ps_textbuf_add_csv(&b, fields[i]);
        ps_textbuf_addc(&b, '|');
    }
    assert_string_equal(b.data, "plain||\"a,b\"|\"say \"\"hi\"\"\"|\"two\nlines\"|\"cr\r\"|");
    ps_textbuf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appends_across_growth),
        cmocka_unit_test(test_failed_latches),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_json_strings),
        cmocka_unit_test(test_csv_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
