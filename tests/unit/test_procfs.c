#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/procfs.h"
#include "platform_test_util.h"

/* A real line from a kernel with a command name holding ") (" and spaces. */
static const char STAT_TRICKY[] =
    "4242 (we) (ird name) S 1 4242 4242 0 -1 4194560 129 0 0 0 250 75 7 3 20 0 1 0 "
    "123456 4096000 512 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

static void test_parse_stat_takes_fields_after_last_paren(void **state)
{
    (void)state;
    struct ps_procfs_stat st;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_procfs_parse_stat(STAT_TRICKY, strlen(STAT_TRICKY), &st, &err), 0);
    assert_int_equal(st.pid, 4242);
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.ppid, 1);
    assert_int_equal(st.pgrp, 4242);
    assert_int_equal(st.session, 4242);
    assert_int_equal(st.utime_ticks, 250);
    assert_int_equal(st.stime_ticks, 75);
    assert_int_equal(st.cutime_ticks, 7);
    assert_int_equal(st.cstime_ticks, 3);
    assert_int_equal(st.starttime_ticks, 123456);
}

static void test_parse_stat_rejects_garbage(void **state)
{
    (void)state;
    struct ps_procfs_stat st;
    struct ps_error err;
    const char *bad[] = {"", "abc", "12 (x", "12 (x) ", "12 (x) S 1 2", "12 (x) 5 1 2 3",
                         "12 (x) S 1 2 3 0 -1 0 0 0 0 0 zz 1 2 3 20 0 1 0 5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ps_error_init(&err);
        assert_int_equal(ps_procfs_parse_stat(bad[i], strlen(bad[i]), &st, &err), PS_EINVAL);
        assert_non_null(strstr(err.msg, "/proc stat"));
    }
}

static void test_parse_kb_field(void **state)
{
    (void)state;
    const char status[] = "Name:\tsh\nVmPeak:\t   2000 kB\nVmHWM:\t    900 kB\n"
                          "VmRSS:\t    812 kB\nThreads:\t1\n";
    int64_t v = 0;
    assert_int_equal(ps_procfs_parse_kb_field(status, strlen(status), "VmRSS", &v, NULL), 0);
    assert_int_equal(v, 812 * 1024);
    assert_int_equal(ps_procfs_parse_kb_field(status, strlen(status), "VmHWM", &v, NULL), 0);
    assert_int_equal(v, 900 * 1024);
    /* "Vm" must not match "VmPeak"; a missing key is ENOENT; a non-kB value is EINVAL. */
    assert_int_equal(ps_procfs_parse_kb_field(status, strlen(status), "Vm", &v, NULL),
                     PS_ENOENT);
    assert_int_equal(ps_procfs_parse_kb_field(status, strlen(status), "VmSwap", &v, NULL),
                     PS_ENOENT);
    assert_int_equal(ps_procfs_parse_kb_field(status, strlen(status), "Threads", &v, NULL),
                     PS_EINVAL);
    /* Not NUL-terminated: the parser must stop at len. */
    char cut[] = {'V', 'm', 'R', 'S', 'S', ':', ' ', '1', '2'};
    assert_int_equal(ps_procfs_parse_kb_field(cut, sizeof cut, "VmRSS", &v, NULL), PS_EINVAL);
}

static void test_meminfo_of_this_machine(void **state)
{
    (void)state;
    int64_t total = 0, avail = 0;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_procfs_meminfo("/proc", &total, &avail, &err), 0);
    assert_true(total > 0);
    assert_true(avail > 0 && avail <= total);
    ps_error_init(&err);
    assert_int_equal(ps_procfs_meminfo("/nonexistent-proc", &total, &avail, &err), PS_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent-proc/meminfo"));
}

/* The first "model name" of <root>/cpuinfo; "" without one or without the file. */
static void test_cpu_model(void **state)
{
    (void)state;
    char root[] = "/tmp/ps-procfs-XXXXXX";
    assert_non_null(mkdtemp(root));
    char path[64], model[128];
    snprintf(path, sizeof path, "%s/cpuinfo", root);
    ps_procfs_cpu_model(root, model, sizeof model);
    assert_string_equal(model, "");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 49\n"
          "model name\t: AMD EPYC 7702 64-Core Processor\nprocessor\t: 1\n"
          "model name\t: other\n", f);
    fclose(f);
    ps_procfs_cpu_model(root, model, sizeof model);
    assert_string_equal(model, "AMD EPYC 7702 64-Core Processor");
    unlink(path);
    rmdir(root);
}

/* A process group of a shell with a busy child: the group's CPU grows, its members are found,
 * and members outside the group are not counted. */
static void test_group_usage_counts_members(void **state)
{
    (void)state;
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", "while :; do :; done & while :; do :; done", (char *)NULL);
        _exit(127);
    }
    assert_true(pid > 0);
    setpgid(pid, pid);
    /* CPU time, not wall time: on a loaded machine the group may get little CPU, so wait (up
     * to 10 s) until it has used 0.3 s, and check that we saw two members using it. */
    struct ps_procfs_group_usage u;
    struct ps_error err;
    ps_error_init(&err);
    int rc = 0;
    int64_t start = test_now_ms();
    do {
        test_sleep_ms(50);
        rc = ps_procfs_group_usage("/proc", pid, &u, &err);
    } while (rc == 0 && u.cpu_seconds < 0.3 && test_now_ms() - start < 10000);
    pid_t pids[4];
    int members = ps_procfs_group_pids("/proc", pid, pids, 4, &err);
    kill(-pid, SIGKILL);        /* before any assertion, so a failure leaks no busy loop */
    waitpid(pid, NULL, 0);
    printf("group of 2 busy shells after %lld ms: %d processes, %.2f CPU s, %lld RSS bytes\n",
           (long long)(test_now_ms() - start), u.process_count, u.cpu_seconds,
           (long long)u.rss_bytes);
    assert_int_equal(rc, 0);
    assert_int_equal(u.process_count, 2);
    assert_int_equal(members, 2);
    assert_true(u.cpu_seconds >= 0.3);
    assert_true(u.rss_bytes > 0);
    assert_true(u.max_process_hwm_bytes > 0);
    /* the orphaned child is reaped by init shortly */
    start = test_now_ms();
    do {
        test_sleep_ms(5);
        assert_int_equal(ps_procfs_group_usage("/proc", pid, &u, &err), 0);
    } while (u.process_count > 0 && test_now_ms() - start < 2000);
    assert_int_equal(u.process_count, 0);
    assert_int_equal(ps_procfs_group_usage("/proc", 0, &u, &err), PS_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_stat_takes_fields_after_last_paren),
        cmocka_unit_test(test_parse_stat_rejects_garbage),
        cmocka_unit_test(test_parse_kb_field),
        cmocka_unit_test(test_meminfo_of_this_machine),
        cmocka_unit_test(test_cpu_model),
        cmocka_unit_test(test_group_usage_counts_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
