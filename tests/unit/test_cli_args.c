/* Tests of the client commands' argument parsing: options in every spelling, positionals,
 * errors with their exact messages, and the size / cores / integer parsers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli_args.h"
#include "cli/cli_client.h"
#include "cli/cli_vanilla.h"

static const struct ps_cli_opt opts[] = {
    {"--pool", 0, true, false},  {"--env", 0, true, true},   {"--wait", 0, false, false},
    {"--force", 'f', false, false}, {"--spec", 's', true, false}, PS_CLI_COMMON_OPTS,
    {NULL, 0, false, false}};

/* Parses a NULL-terminated list of arguments. */
static int parse(struct ps_cli_args *a, struct ps_error *err, const char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    ps_error_init(err);
    return ps_cli_args_parse(argc, (char **)argv, opts, a, err);
}

static void test_spellings(void **state)
{
    (void)state;
    struct ps_cli_args a;
    struct ps_error err;
    const char *argv[] = {"//sys/pools", "--pool", "a", "--env=X=1", "-f", "--env", "Y=2",
                          "-1", "-", "--wait", "--proxy=h:1", "-s", "file", "--", "--wait", NULL};
    assert_int_equal(parse(&a, &err, argv), 0);
    assert_false(a.help);
    assert_string_equal(ps_cli_args_get(&a, "--pool"), "a");
    assert_string_equal(ps_cli_args_get(&a, "--env"), "Y=2");        /* the last one */
    assert_string_equal(ps_cli_args_get(&a, "--force"), "");
    assert_string_equal(ps_cli_args_get(&a, "--wait"), "");
    assert_string_equal(ps_cli_args_get(&a, "--proxy"), "h:1");
    assert_string_equal(ps_cli_args_get(&a, "--spec"), "file");
    assert_null(ps_cli_args_get(&a, "--token"));
    assert_false(ps_cli_args_has(&a, "--format"));
    /* a negative number, "-" and everything after "--" are positional */
    assert_int_equal(ps_cli_args_positional_count(&a), 4);
    assert_string_equal(ps_cli_args_positional(&a, 0), "//sys/pools");
    assert_string_equal(ps_cli_args_positional(&a, 1), "-1");
    assert_string_equal(ps_cli_args_positional(&a, 2), "-");
    assert_string_equal(ps_cli_args_positional(&a, 3), "--wait");
    assert_null(ps_cli_args_positional(&a, 4));
    /* both --env values are kept, in order */
    int envs = 0;
    for (size_t i = 0; i < a.count; i++)
        if (a.items[i].opt && strcmp(a.items[i].opt->name, "--env") == 0)
            assert_string_equal(a.items[i].value, envs++ == 0 ? "X=1" : "Y=2");
    assert_int_equal(envs, 2);

    const char *help[] = {"x", "--help", NULL};
    assert_int_equal(parse(&a, &err, help), 0);
    assert_true(a.help);
    const char *value_with_dash[] = {"--pool", "-weird", NULL};   /* a value may start with - */
    assert_int_equal(parse(&a, &err, value_with_dash), 0);
    assert_string_equal(ps_cli_args_get(&a, "--pool"), "-weird");
}

static void expect_parse_error(const char **argv, const char *message)
{
    struct ps_cli_args a;
    struct ps_error err;
    assert_int_equal(parse(&a, &err, argv), PS_EINVAL);
    assert_string_equal(err.msg, message);
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_parse_error((const char *[]){"--poool", "x", NULL}, "unknown option \"--poool\"");
    expect_parse_error((const char *[]){"--poool=x", NULL}, "unknown option \"--poool\"");
    expect_parse_error((const char *[]){"-x", NULL}, "unknown option \"-x\"");
    expect_parse_error((const char *[]){"-fv", NULL}, "unknown option \"-fv\"");
    expect_parse_error((const char *[]){"--pool", NULL}, "--pool needs a value");
    expect_parse_error((const char *[]){"-s", NULL}, "--spec needs a value");
    expect_parse_error((const char *[]){"--wait=yes", NULL}, "--wait takes no value");
    expect_parse_error((const char *[]){"--pool", "a", "--pool=b", NULL}, "--pool given twice");
    expect_parse_error((const char *[]){"--bad\nname", NULL}, "unknown option \"--bad\\x0aname\"");
}

static void expect_size(const char *text, int64_t want)
{
    int64_t got = -1;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_cli_parse_size(text, "--memory", &got, &err);
    if (rc != 0)
        print_error("%s: %s\n", text, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(got, want);
}

static void expect_bad_size(const char *text, const char *message)
{
    int64_t got = -1;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_size(text, "--memory", &got, &err), PS_EINVAL);
    assert_string_equal(err.msg, message);
    assert_int_equal(got, -1);
}

static void test_sizes(void **state)
{
    (void)state;
    expect_size("0", 0);
    expect_size("1073741824", 1073741824);
    expect_size("512M", 536870912);
    expect_size("512m", 536870912);
    expect_size("2G", 2147483648);
    expect_size("2GB", 2147483648);
    expect_size("2GiB", 2147483648);
    expect_size("1K", 1024);
    expect_size("3T", INT64_C(3298534883328));
    expect_size("4194304T", INT64_C(4611686018427387904));   /* 2^62, the largest */
    expect_bad_size("2X", "--memory: \"2X\" is not a size (use bytes or K/M/G/T)");
    expect_bad_size("", "--memory: \"\" is not a size (use bytes or K/M/G/T)");
    expect_bad_size("G", "--memory: \"G\" is not a size (use bytes or K/M/G/T)");
    expect_bad_size("-1", "--memory: \"-1\" is not a size (use bytes or K/M/G/T)");
    expect_bad_size("1.5G", "--memory: \"1.5G\" is not a size (use bytes or K/M/G/T)");
    expect_bad_size("2 G", "--memory: \"2 G\" is not a size (use bytes or K/M/G/T)");
    expect_bad_size("2B", "--memory: \"2B\" is not a size (use bytes or K/M/G/T)");
    expect_bad_size("4194305T", "--memory: \"4194305T\" is too large (at most "
                                "4611686018427387904 bytes)");
    expect_bad_size("99999999999999999999999", "--memory: \"99999999999999999999999\" is too "
                                               "large (at most 4611686018427387904 bytes)");
}

static void expect_cpu(const char *text, int64_t want)
{
    int64_t got = -1;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_cpu(text, "--cpu", &got, &err), 0);
    assert_int_equal(got, want);
}

static void expect_bad_cpu(const char *text)
{
    int64_t got = -1;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_cpu(text, "--cpu", &got, &err), PS_EINVAL);
    char want[200];
    snprintf(want, sizeof want, "--cpu: \"%s\" is not a number of cores (> 0, at most 1000000, "
             "at most 2 decimals)", text);
    assert_string_equal(err.msg, want);
}

static void test_cpu(void **state)
{
    (void)state;
    expect_cpu("1", 100);
    expect_cpu("1.5", 150);
    expect_cpu("0.25", 25);
    expect_cpu(".5", 50);
    expect_cpu("2.", 200);
    expect_cpu("11.17", 1117);       /* exact in hundredths, no binary rounding */
    expect_cpu("1.500", 150);        /* trailing zeros are not a third decimal */
    expect_cpu("1000000", 100000000);
    expect_bad_cpu("1.234");
    expect_bad_cpu("0");
    expect_bad_cpu("0.001");
    expect_bad_cpu("-1");
    expect_bad_cpu("");
    expect_bad_cpu(".");
    expect_bad_cpu("1e2");
    expect_bad_cpu("1000000.01");
    expect_bad_cpu("two");
}

static void test_numbers(void **state)
{
    (void)state;
    int64_t n;
    double x;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_int("10", "--job-count", 1, 100, &n, &err), 0);
    assert_int_equal(n, 10);
    assert_int_equal(ps_cli_parse_int("0", "--job-count", 1, 100, &n, &err), PS_EINVAL);
    assert_string_equal(err.msg, "--job-count: must be an integer from 1 to 100, got \"0\"");
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_int(" 5", "--limit", 1, 100, &n, &err), PS_EINVAL);
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_int("5x", "--limit", 1, 100, &n, &err), PS_EINVAL);
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_number("0.5", "--w", 0, true, 1, "in (0, 1]", &x, &err), 0);
    assert_true(x == 0.5);
    assert_int_equal(ps_cli_parse_number("0", "--w", 0, true, 1, "in (0, 1]", &x, &err),
                     PS_EINVAL);
    assert_string_equal(err.msg, "--w: must be in (0, 1], got \"0\"");
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_number("nan", "--w", 0, true, 1, "x", &x, &err), PS_EINVAL);
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_number("0x1p-1", "--w", 0, true, 1, "x", &x, &err),
                     PS_EINVAL);
    ps_error_init(&err);
    assert_int_equal(ps_cli_parse_number("1", "--w", 0, true, 1, "x", &x, &err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spellings),  cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_sizes),      cmocka_unit_test(test_cpu),
        cmocka_unit_test(test_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
