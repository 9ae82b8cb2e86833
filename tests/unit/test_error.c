#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/error.h"

static void test_first_error_wins(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_error_set(&err, PS_EINVAL, "weight: %s", "must be positive"), PS_EINVAL);
    assert_int_equal(ps_error_set(&err, PS_ENOENT, "later"), PS_ENOENT);
    assert_int_equal(err.code, PS_EINVAL);
    assert_string_equal(err.msg, "weight: must be positive");
    ps_error_prefix(&err, "pools[%d]", 3);
    assert_string_equal(err.msg, "pools[3]: weight: must be positive");
}

static void test_messages_are_one_line(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    /* A user's key with control characters (found by fuzzing the API) */
    ps_error_set(&err, PS_EINVAL, "unknown key \"%s\"", "job_cou\nt\t\r\x01\x7f");
    assert_string_equal(err.msg, "unknown key \"job_cou\\nt\\t\\r\\x01\\x7f\"");
    ps_error_init(&err);
    ps_error_set(&err, PS_EINVAL, "plain");
    ps_error_prefix(&err, "task %s", "a\nb");
    assert_string_equal(err.msg, "task a\\nb: plain");
    /* A message full of control characters is cut, never overflows, stays one line. */
    char many[400];
    memset(many, '\n', sizeof many - 1);
    many[sizeof many - 1] = '\0';
    ps_error_init(&err);
    ps_error_set(&err, PS_EINVAL, "%s", many);
    assert_null(strchr(err.msg, '\n'));
    assert_true(strlen(err.msg) < PS_ERROR_MSG_MAX);
    assert_true(strlen(err.msg) > 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_error_wins),
        cmocka_unit_test(test_messages_are_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
