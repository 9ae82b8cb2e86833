/* The parent-death signal of job_process.h and the job guard of job_guard.h: what makes jobs
 * die with their agent (docs/faults.md). Processes are found by an environment marker, so
 * none of this needs root or cgroups. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/job_guard.h"
#include "platform/job_process.h"
#include "platform_test_util.h"

/* Starts `sh -c CMD` with env {PATH, marker}; returns its pid (our child). */
static pid_t start_marked(const char *cmd, const char *marker)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *argv[] = {(char *)"sh", (char *)"-c", (char *)cmd, NULL};
        char *envp[] = {(char *)"PATH=/usr/bin:/bin", (char *)marker, NULL};
        execve("/bin/sh", argv, envp);
        _exit(127);
    }
    return pid;
}

/* Waits up to timeout_ms for pid (a child) to end; returns the signal that killed it, 0 if it
 * exited, -1 if it still runs. */
static int wait_end(pid_t pid, int timeout_ms)
{
    int64_t deadline = test_now_ms() + timeout_ms;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        if (test_now_ms() >= deadline)
            return -1;
        test_sleep_ms(5);
    }
}

static void test_sweep_finds_marked_processes(void **state)
{
    char marker[64];
    snprintf(marker, sizeof marker, "PS_TEST_GUARD=%d-sweep", (int)getpid());
    pid_t other = start_marked("sleep 30", "PS_TEST_GUARD=someone-else");
    pid_t mine = start_marked("sleep 30", marker);
    test_sleep_ms(100);     /* exec'ed: the environment is the new one */
    struct ps_job_guard_config cfg = {.marker_env = marker};
    assert_true(ps_job_guard_sweep(&cfg, true) >= 1);
    assert_int_equal(wait_end(mine, 2000), SIGKILL);
    assert_int_equal(wait_end(other, 100), -1);     /* another marker: untouched */
    kill(other, SIGKILL);
    wait_end(other, 2000);
}

static void test_guard_kills_when_agent_goes(void **state)
{
    char marker[64];
    snprintf(marker, sizeof marker, "PS_TEST_GUARD=%d-eof", (int)getpid());
    struct ps_job_guard_config cfg = {.marker_env = marker, .log_name = "test"};
    struct ps_job_guard *g = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_job_guard_start(&cfg, &g, &err), 0);
    /* a daemonised grandchild: not our child, found by the marker only */
    pid_t mine = start_marked("setsid sleep 30 & sleep 30", marker);
    test_sleep_ms(150);
    assert_int_equal(wait_end(mine, 0), -1);
    ps_job_guard_stop(g);   /* closes the pipe, as the agent's death does */
    assert_int_equal(wait_end(mine, 3000), SIGKILL);
    struct ps_job_guard_config probe = {.marker_env = marker};
    assert_int_equal(ps_job_guard_sweep(&probe, true), 0);     /* the daemon is gone too */
}

static void test_guard_deadline(void **state)
{
    char marker[64];
    snprintf(marker, sizeof marker, "PS_TEST_GUARD=%d-arm", (int)getpid());
    struct ps_job_guard_config cfg = {.marker_env = marker, .log_name = "test"};
    struct ps_job_guard *g = NULL;
    assert_int_equal(ps_job_guard_start(&cfg, &g, NULL), 0);
    pid_t mine = start_marked("sleep 30", marker);
    ps_job_guard_arm(g, 300);
    test_sleep_ms(150);
    ps_job_guard_arm(g, 300);      /* re-armed in time: nothing happens */
    assert_int_equal(wait_end(mine, 200), -1);
    int64_t t0 = test_now_ms();     /* not re-armed: killed */
    assert_int_equal(wait_end(mine, 3000), SIGKILL);
    assert_true(test_now_ms() - t0 < 1500);
    ps_job_guard_stop(g);
}

/* A job process spawned with die_with_parent by a process that then dies gets SIGKILL. The
 * test is the subreaper, so it reaps the orphan and sees the signal. */
static void test_die_with_parent(void **state)
{
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t mid = fork();
    assert_true(mid >= 0);
    if (mid == 0) {
        char *envp[] = {(char *)"PATH=/usr/bin:/bin", NULL};
        struct ps_job_process_spec spec = {.command = "sleep 30", .cwd = "/", .envp = envp,
                                           .stdout_fd = -1, .stderr_fd = -1,
                                           .die_with_parent = true};
        struct ps_job_process jp;
        if (ps_job_process_spawn(&spec, &jp, NULL) != 0)
            _exit(1);
        ssize_t w = write(p[1], &jp.pid, sizeof jp.pid);
        _exit(w == sizeof jp.pid ? 0 : 1);
    }
    close(p[1]);
    pid_t job = 0;
    assert_int_equal(read(p[0], &job, sizeof job), (ssize_t)sizeof job);
    close(p[0]);
    assert_int_equal(wait_end(mid, 2000), 0);
    assert_int_equal(wait_end(job, 2000), SIGKILL);
    prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_finds_marked_processes),
        cmocka_unit_test(test_guard_kills_when_agent_goes),
        cmocka_unit_test(test_guard_deadline),
        cmocka_unit_test(test_die_with_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
