/* Tests of what the client commands print for people: exact tables of operations and jobs, the
 * operation block, times, sizes and durations; and of the proxy and token resolution. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_client.h"
#include "cli/cli_format.h"

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        print_error("bad test JSON: %s\n", e.text);
    assert_non_null(j);
    return j;
}

static void test_values(void **state)
{
    (void)state;
    char buf[64];
    json_t *t = json_integer(INT64_C(1714564800123));
    ps_cli_format_time(t, buf, sizeof buf);
    assert_string_equal(buf, "2024-05-01T12:00:00Z");
    json_decref(t);
    t = json_string("2024-05-01T12:00:00.5Z");
    ps_cli_format_time(t, buf, sizeof buf);
    assert_string_equal(buf, "2024-05-01T12:00:00.5Z");
    json_decref(t);
    ps_cli_format_time(NULL, buf, sizeof buf);
    assert_string_equal(buf, "-");
    t = json_integer(-5);
    ps_cli_format_time(t, buf, sizeof buf);
    assert_string_equal(buf, "-");
    json_decref(t);

    static const struct { int64_t bytes; const char *text; } sizes[] = {
        {0, "0"}, {1023, "1023"}, {1024, "1K"}, {1536, "1.5K"}, {536870912, "512M"},
        {2147483648, "2G"}, {1610612736, "1.5G"}, {INT64_C(1099511627776), "1T"},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ps_cli_format_bytes(sizes[i].bytes, buf, sizeof buf);
        assert_string_equal(buf, sizes[i].text);
    }
    static const struct { int64_t ms; const char *text; } durations[] = {
        {-1000, "0s"}, {999, "0s"}, {45000, "45s"}, {185000, "3m05s"}, {7380000, "2h03m"},
        {273600000, "3d04h"},
    };
    for (size_t i = 0; i < sizeof durations / sizeof durations[0]; i++) {
        ps_cli_format_duration(durations[i].ms, buf, sizeof buf);
        assert_string_equal(buf, durations[i].text);
    }
}

static void test_table(void **state)
{
    (void)state;
    struct ps_cli_table t;
    ps_cli_table_init(&t, 3, (const char *const[]){"A", "BBBB", "C"});
    ps_cli_table_add(&t, (const char *const[]){"x\n1", NULL, "last column is not padded"});
    ps_cli_table_add(&t, (const char *const[]){"\xc3\xa9t\xc3\xa9", "", "z"});   /* "été" */
    char *text = ps_cli_table_render(&t);
    assert_string_equal(text,
                        "A    BBBB  C\n"
                        "x?1  -     last column is not padded\n"
                        "\xc3\xa9t\xc3\xa9        z\n");
    free(text);
    ps_cli_table_release(&t);
}

static const char operations_json[] =
    "[{\"id\": \"op-2\", \"user\": \"alice\", \"state\": \"running\", "
    "\"start_time\": 1714564800000, \"pool_per_tree\": {\"physical\": \"research\"}, "
    "\"progress\": {\"total\": 10, \"pending\": 2, \"running\": 3, \"completed\": 5, "
    "\"failed\": 0, \"aborted\": 0}, \"suspended\": false},"
    " {\"id\": \"op-1\", \"user\": \"bob\", \"state\": \"pending\", \"start_time\": 1714564740000,"
    " \"pool_per_tree\": {\"physical\": \"a\", \"gpu\": \"b\"}, \"progress\": {\"total\": 4, "
    "\"pending\": 4, \"running\": 0, \"completed\": 0, \"failed\": 1, \"aborted\": 2}, "
    "\"pending_reason\": \"max_running_operation_count of pool a is reached\", "
    "\"suspended\": true},"
    " {\"id\": \"op-0\"}]";

static void test_operations_table(void **state)
{
    (void)state;
    json_t *ops = load(operations_json);
    char *text = ps_cli_operations_table(ops);
    assert_string_equal(
        text,
        "ID    STATE                USER   POOL              PROGRESS                   "
        "START TIME            PENDING REASON\n"
        "op-2  running              alice  research          5/10 (3 running)           "
        "2024-05-01T12:00:00Z  -\n"
        "op-1  pending (suspended)  bob    physical:a,gpu:b  0/4 (1 failed, 2 aborted)  "
        "2024-05-01T11:59:00Z  max_running_operation_count of pool a is reached\n"
        "op-0  -                    -      -                 -                          "
        "-                     -\n");
    free(text);
    json_decref(ops);

    json_t *empty = json_array();
    text = ps_cli_operations_table(empty);
    assert_string_equal(text, "ID  STATE  USER  POOL  PROGRESS  START TIME  PENDING REASON\n");
    free(text);
    json_decref(empty);
}

static void test_jobs_table(void **state)
{
    (void)state;
    json_t *jobs = load(
        "[{\"id\": \"j1\", \"state\": \"running\", \"node_id\": \"n1\", \"start_time\": 1000,"
        " \"cpu_limit\": 2, \"cpu_guarantee\": 1.5, \"memory_limit\": 2147483648,"
        " \"memory_reserve\": 1073741824},"
        " {\"id\": \"j2\", \"state\": \"failed\", \"node_id\": \"n2\", \"start_time\": 1000,"
        " \"finish_time\": 186000, \"cpu_limit\": 1, \"cpu_guarantee\": 1,"
        " \"memory_limit\": 536870912, \"memory_reserve\": 536870912,"
        " \"error\": \"Memory limit exceeded\"},"
        " {\"id\": \"j3\", \"state\": \"aborted\", \"abort_reason\": \"preemption\"}]");
    char *text = ps_cli_jobs_table(jobs, 46000);
    assert_string_equal(
        text,
        "ID  STATE    NODE  CPU LIMIT/GUARANTEE  MEMORY RESERVE/LIMIT  DURATION  ERROR\n"
        "j1  running  n1    2.00/1.50            1G/2G                 45s       -\n"
        "j2  failed   n2    1.00/1.00            512M/512M             3m05s     "
        "Memory limit exceeded\n"
        "j3  aborted  -     -/-                  -/-                   -         preemption\n");
    free(text);
    json_decref(jobs);
}

static void test_operation_block(void **state)
{
    (void)state;
    json_t *op = load(
        "{\"id\": \"op-1\", \"user\": \"alice\", \"state\": \"failed\", \"start_time\": 0,"
        " \"finish_time\": 60000, \"pool_per_tree\": {\"physical\": \"research\"},"
        " \"progress\": {\"total\": 2, \"pending\": 0, \"running\": 0, \"completed\": 1,"
        " \"failed\": 1, \"aborted\": 0}, \"suspended\": false, \"error\": \"job failed\","
        " \"alerts\": {\"unrecognized_spec\": {\"message\": \"Spec contains unrecognized options\","
        " \"attributes\": {\"unrecognized\": {\"wieght\": 2}}}},"
        " \"spec\": {}, \"resulting_spec\": {\"tasks\": {\"task\": {\"command\": \"sleep 1\","
        " \"job_count\": 2, \"cpu_limit\": 1, \"memory_limit\": 536870912}}}}");
    char *text = ps_cli_operation_block(op);
    assert_string_equal(text,
                        "id           op-1\n"
                        "state        failed\n"
                        "user         alice\n"
                        "pool         research\n"
                        "weight       1\n"
                        "start time   1970-01-01T00:00:00Z\n"
                        "finish time  1970-01-01T00:01:00Z\n"
                        "progress     total 2, pending 0, running 0, completed 1, failed 1, "
                        "aborted 0\n"
                        "error        job failed\n"
                        "alerts       unrecognized_spec: Spec contains unrecognized options "
                        "{\"wieght\":2}\n"
                        "tasks        task: 2 x 'sleep 1', cpu 1.00, memory 512M\n");
    free(text);
    json_decref(op);
}

/* The weight row is the one in effect (runtime_parameters, as update_op_parameters leaves it),
 * not the submitted spec's; one value per tree when there are several. */
static void test_operation_block_runtime_weight(void **state)
{
    (void)state;
    json_t *op = load(
        "{\"id\": \"op-2\", \"user\": \"bob\", \"state\": \"running\", \"start_time\": 0,"
        " \"pool_per_tree\": {\"physical\": \"prod\"}, \"spec\": {\"weight\": 3},"
        " \"runtime_parameters\": {\"scheduling_options_per_pool_tree\":"
        " {\"physical\": {\"pool\": \"prod\", \"weight\": 5}, \"gpu\": {\"pool\": \"training\"}}}}");
    char *text = ps_cli_operation_block(op);
    assert_non_null(strstr(text, "\nweight      physical:5,gpu:1\n"));
    free(text);
    json_object_del(json_object_get(json_object_get(op, "runtime_parameters"),
                                    "scheduling_options_per_pool_tree"), "gpu");
    text = ps_cli_operation_block(op);
    assert_non_null(strstr(text, "\nweight      5\n"));
    free(text);
    json_object_del(op, "runtime_parameters");
    text = ps_cli_operation_block(op);
    assert_non_null(strstr(text, "\nweight      3\n"));
    free(text);
    json_decref(op);
}

static void test_proxy(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } good[] = {
        {NULL, "http://" PS_CLI_DEFAULT_PROXY},
        {"localhost:9013", "http://localhost:9013"},
        {"http://h:1/", "http://h:1"},
        {"https://sched.example/", "https://sched.example"},
        {"[::1]:9013", "http://[::1]:9013"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char *url = NULL;
        struct ps_error err;
        ps_error_init(&err);
        assert_int_equal(ps_cli_proxy_url(good[i].in, &url, &err), 0);
        assert_string_equal(url, good[i].out);
        free(url);
    }
    static const char *const bad[] = {"", "ftp://h", "http://", "h :1", "h\n:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *url = NULL;
        struct ps_error err;
        ps_error_init(&err);
        assert_int_equal(ps_cli_proxy_url(bad[i], &url, &err), PS_EINVAL);
        assert_null(url);
        assert_non_null(strstr(err.msg, "is not an http(s) URL or host:port"));
    }
}

static void test_token(void **state)
{
    (void)state;
    char dir[] = "/tmp/ps_cli_token_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/" PS_CLI_TOKEN_FILE, dir);
    struct ps_cli_env env = {0};
    struct ps_error err;
    char *token = NULL;

    /* no file, no option, no variable: no token */
    ps_error_init(&err);
    assert_int_equal(ps_cli_token(NULL, dir, &env, &token, &err), 0);
    assert_null(token);

    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("file-token\n", f);
    fclose(f);
    chmod(path, 0600);
    assert_int_equal(ps_cli_token(NULL, dir, &env, &token, &err), 0);
    assert_string_equal(token, "file-token");
    free(token);
    env.data_dir = dir;                       /* POOLSCHED_DATA_DIR works like --data-dir */
    assert_int_equal(ps_cli_token(NULL, NULL, &env, &token, &err), 0);
    assert_string_equal(token, "file-token");
    free(token);
    /* XDG_STATE_HOME/poolsched, where a scheduler without --data-dir keeps its token */
    char xdg[300];
    snprintf(xdg, sizeof xdg, "%s/xdg", dir);
    char xdg_data[320];
    snprintf(xdg_data, sizeof xdg_data, "%s/poolsched", xdg);
    assert_int_equal(mkdir(xdg, 0700), 0);
    assert_int_equal(mkdir(xdg_data, 0700), 0);
    char xdg_token[400];
    snprintf(xdg_token, sizeof xdg_token, "%s/" PS_CLI_TOKEN_FILE, xdg_data);
    f = fopen(xdg_token, "w");
    assert_non_null(f);
    fputs("xdg-token\n", f);
    fclose(f);
    chmod(xdg_token, 0600);
    env.data_dir = NULL;
    env.xdg_state_home = xdg;
    assert_int_equal(ps_cli_token(NULL, NULL, &env, &token, &err), 0);
    assert_string_equal(token, "xdg-token");
    free(token);
    env.data_dir = dir;                       /* POOLSCHED_DATA_DIR beats XDG_STATE_HOME */
    assert_int_equal(ps_cli_token(NULL, NULL, &env, &token, &err), 0);
    assert_string_equal(token, "file-token");
    free(token);
    env.xdg_state_home = NULL;
    unlink(xdg_token);
    rmdir(xdg_data);
    rmdir(xdg);
    env.token = "env-token";                  /* the variable beats the file */
    assert_int_equal(ps_cli_token(NULL, dir, &env, &token, &err), 0);
    assert_string_equal(token, "env-token");
    free(token);
    assert_int_equal(ps_cli_token("opt-token", dir, &env, &token, &err), 0);   /* --token wins */
    assert_string_equal(token, "opt-token");
    free(token);
    assert_int_equal(ps_cli_token(" ", dir, &env, &token, &err), PS_EINVAL);
    assert_string_equal(err.msg, "--token: the token is empty");

    /* a token file others can read is refused, as ssh refuses such keys */
    env.token = NULL;
    chmod(path, 0644);
    ps_error_init(&err);
    assert_int_equal(ps_cli_token(NULL, dir, &env, &token, &err), PS_EPERM);
    assert_null(token);
    assert_non_null(strstr(err.msg, path));
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),          cmocka_unit_test(test_table),
        cmocka_unit_test(test_operations_table), cmocka_unit_test(test_jobs_table),
        cmocka_unit_test(test_operation_block),
        cmocka_unit_test(test_operation_block_runtime_weight), cmocka_unit_test(test_proxy),
        cmocka_unit_test(test_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
