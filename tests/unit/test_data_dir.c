#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "platform/data_dir.h"

static void expect_dir(const char *option, const char *env, const char *xdg, const char *want)
{
    char out[64];
    assert_int_equal(ps_data_dir_resolve(option, env, xdg, out, sizeof out), 0);
    assert_string_equal(out, want);
}

static void test_precedence(void **state)
{
    (void)state;
    expect_dir("/opt", "/env", "/xdg", "/opt");
    expect_dir(NULL, "/env", "/xdg", "/env");
    expect_dir("", "/env", "/xdg", "/env");        /* empty counts as unset */
    expect_dir(NULL, NULL, "/xdg", "/xdg/poolsched");
    expect_dir(NULL, "", "/xdg", "/xdg/poolsched");
    expect_dir(NULL, NULL, NULL, "./poolsched-data");
    expect_dir("rel", NULL, NULL, "rel");          /* a given relative path is kept */
}

static void test_relative_xdg_is_ignored(void **state)
{
    (void)state;
    /* The XDG base directory spec: relative values are invalid and must be ignored. */
    expect_dir(NULL, NULL, "state", "./poolsched-data");
    expect_dir(NULL, NULL, "", "./poolsched-data");
}

static void test_too_long(void **state)
{
    (void)state;
    char out[8] = "xxxxxxx";
    assert_int_equal(ps_data_dir_resolve("/a/long/path", NULL, NULL, out, sizeof out), -1);
    assert_string_equal(out, "");
    assert_int_equal(ps_data_dir_resolve(NULL, NULL, "/xdgxx", out, sizeof out), -1);
    assert_int_equal(ps_data_dir_resolve("/123456", NULL, NULL, out, sizeof out), 0);   /* 7 + NUL fits */
    assert_string_equal(out, "/123456");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_relative_xdg_is_ignored),
        cmocka_unit_test(test_too_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
