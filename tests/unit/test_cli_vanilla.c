/* Tests of `poolsched vanilla`'s spec: every flag's key and unit, merging over --spec, and the
 * messages for bad flags. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_args.h"
#include "cli/cli_client.h"
#include "cli/cli_vanilla.h"

static const struct ps_cli_opt opts[] = {PS_CLI_VANILLA_OPTS, {"--wait", 0, false, false},
                                         PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};

/* Builds the spec of a NULL-terminated argument list; returns the rc, fills *spec / err. */
static int build(const char **argv, json_t **spec, struct ps_error *err)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    struct ps_cli_args a;
    ps_error_init(err);
    int rc = ps_cli_args_parse(argc, (char **)argv, opts, &a, err);
    assert_int_equal(rc, 0);
    return ps_cli_vanilla_spec(&a, spec, err);
}

/* The spec as compact JSON with sorted keys, for exact comparison. */
static void expect_spec(const char **argv, const char *want)
{
    json_t *spec = NULL;
    struct ps_error err;
    int rc = build(argv, &spec, &err);
    if (rc != 0)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    char *got = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(got, want);
    free(got);
    json_decref(spec);
}

static void expect_error(const char **argv, const char *message)
{
    json_t *spec = NULL;
    struct ps_error err;
    assert_int_equal(build(argv, &spec, &err), PS_EINVAL);
    assert_null(spec);
    assert_string_equal(err.msg, message);
}

static void test_minimal(void **state)
{
    (void)state;
    expect_spec((const char *[]){"--job-count", "3", "--command", "sleep 1", NULL},
                "{\"tasks\":{\"task\":{\"command\":\"sleep 1\",\"job_count\":3}}}");
}

static void test_all_flags(void **state)
{
    (void)state;
    expect_spec((const char *[]){"--pool", "research", "--pool-trees", "physical,gpu",
                                 "--job-count", "10", "--command", "echo $X", "--cpu", "1.5",
                                 "--memory", "2G", "--tmpfs", "512M", "--env", "X=1",
                                 "--env", "Y=a=b", "--task-name", "map", "--weight", "2.5",
                                 "--max-share-ratio", "0.5", "--resource-limits",
                                 "{cpu=10; user_slots=20}", NULL},
                "{\"max_share_ratio\":0.5,\"pool\":\"research\",\"pool_trees\":[\"physical\","
                "\"gpu\"],\"resource_limits\":{\"cpu\":10,\"user_slots\":20},\"tasks\":{\"map\":"
                "{\"command\":\"echo $X\",\"cpu_limit\":1.5,\"environment\":{\"X\":\"1\",\"Y\":"
                "\"a=b\"},\"job_count\":10,\"memory_limit\":2147483648,\"tmpfs_size\":536870912}},"
                "\"weight\":2.5}");
}

static void test_merge_over_spec(void **state)
{
    (void)state;
    /* flags win over --spec, maps merge key by key, untouched keys of --spec stay */
    expect_spec((const char *[]){"--spec",
                                 "{pool=a; weight=1; job_cpu_monitor={enable_cpu_reclaim=%true};"
                                 " tasks={t={command=x; job_count=1; cpu_limit=2}}}",
                                 "--task-name", "t", "--job-count", "4", "--weight", "3", NULL},
                "{\"job_cpu_monitor\":{\"enable_cpu_reclaim\":true},\"pool\":\"a\",\"tasks\":"
                "{\"t\":{\"command\":\"x\",\"cpu_limit\":2,\"job_count\":4}},\"weight\":3.0}");
    /* JSON works as well as YSON; a second task from the flags joins the spec's */
    expect_spec((const char *[]){"--spec", "{\"tasks\": {\"a\": {\"command\": \"x\", "
                                 "\"job_count\": 1}}}",
                                 "--command", "y", "--job-count", "2", NULL},
                "{\"tasks\":{\"a\":{\"command\":\"x\",\"job_count\":1},\"task\":{\"command\":"
                "\"y\",\"job_count\":2}}}");
}

static void test_errors(void **state)
{
    (void)state;
    expect_error((const char *[]){"--job-count", "1", "--command", "x", "--memory", "2X", NULL},
                 "--memory: \"2X\" is not a size (use bytes or K/M/G/T)");
    expect_error((const char *[]){"--job-count", "1", NULL},
                 "--command is required (or give tasks.task.command in --spec)");
    expect_error((const char *[]){"--command", "x", NULL},
                 "--job-count is required (or give tasks.task.job_count in --spec)");
    expect_error((const char *[]){NULL},
                 "--command and --job-count are required (or give tasks in --spec)");
    expect_error((const char *[]){"--command", "", "--job-count", "1", NULL},
                 "--command: must not be empty");
    expect_error((const char *[]){"--command", "x", "--job-count", "0", NULL},
                 "--job-count: must be an integer from 1 to 1000000, got \"0\"");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--cpu", "1.234", NULL},
                 "--cpu: \"1.234\" is not a number of cores (> 0, at most 1000000, at most 2 "
                 "decimals)");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--memory", "0", NULL},
                 "--memory: must be more than 0 bytes");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--env", "=1", NULL},
                 "--env: \"=1\" is not NAME=VALUE");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--env", "A", NULL},
                 "--env: \"A\" is not NAME=VALUE");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--env", "A=1", "--env",
                                  "A=2", NULL},
                 "--env: A is given twice");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--pool-trees", "a,,b",
                                  NULL},
                 "--pool-trees: \"a,,b\" is not a comma-separated list of tree names");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--pool-trees", "a,a",
                                  NULL},
                 "--pool-trees: \"a\" is named twice");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--weight", "0", NULL},
                 "--weight: weight: must be in [1.4901161193847656e-08, 67108864], got 0");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--max-share-ratio",
                                  "1.5", NULL},
                 "--max-share-ratio: max_share_ratio: must be in [0, 1], got 1.5");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--resource-limits",
                                  "[1]", NULL},
                 "--resource-limits: must be a map such as '{cpu=4}'");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--resource-limits",
                                  "{cpu=", NULL},
                 "--resource-limits: invalid YSON at line 1, column 6: unexpected end of input, "
                 "expected a value");
    expect_error((const char *[]){"--spec", "{tasks={a={command=x}}}", NULL},
                 "--spec: tasks.a.job_count must be a positive integer");
    expect_error((const char *[]){"--command", "x", "--job-count", "1", "--task-name", "", NULL},
                 "--task-name: must be a non-empty UTF-8 name");
    expect_error((const char *[]){"--command", "\xff", "--job-count", "1", NULL},
                 "--command: the value is not valid UTF-8");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimal),
        cmocka_unit_test(test_all_flags),
        cmocka_unit_test(test_merge_over_spec),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
