#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/job_process.h"
#include "platform/procfs.h"
#include "platform_test_util.h"

static char *default_env[] = {(char *)"PATH=/usr/bin:/bin", (char *)"FOO=bar baz", NULL};

/* A job with stdout and stderr in files of a fresh directory. */
struct run {
    char *dir;
    char out_path[PATH_MAX], err_path[PATH_MAX];
    int out_fd, err_fd;
    struct ps_job_process p;
    struct ps_error err;
};

static int start(struct run *r, const char *cmd)
{
    memset(r, 0, sizeof *r);
    r->dir = test_make_dir("jp");
    assert_non_null(r->dir);
    snprintf(r->out_path, sizeof r->out_path, "%s/out", r->dir);
    snprintf(r->err_path, sizeof r->err_path, "%s/err", r->dir);
    r->out_fd = open(r->out_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    r->err_fd = open(r->err_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    assert_true(r->out_fd >= 0 && r->err_fd >= 0);
    struct ps_job_process_spec spec = {
        .command = cmd, .cwd = r->dir, .envp = default_env,
        .stdout_fd = r->out_fd, .stderr_fd = r->err_fd,
    };
    ps_error_init(&r->err);
    int rc = ps_job_process_spawn(&spec, &r->p, &r->err);
    close(r->out_fd);
    close(r->err_fd);
    return rc;
}

static void finish(struct run *r)
{
    ps_job_process_release(&r->p);
    test_remove_dir(r->dir);
}

/* Waits (up to 10 s) until the job's stdout holds "ready": the shell has set its traps. */
static void wait_ready(struct run *r)
{
    for (int i = 0; i < 2000 && !test_file_contains(r->out_path, "ready"); i++)
        test_sleep_ms(5);
}

static bool wait_exit(struct run *r, int timeout_ms)
{
    bool exited = false;
    assert_int_equal(ps_job_process_wait(&r->p, timeout_ms, &exited, NULL), 0);
    return exited;
}

static void test_outputs_and_exit_code(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(start(&r, "echo hello; echo err >&2; pwd; exit 3"), 0);
    bool exited = wait_exit(&r, 5000);
    int code = ps_job_process_exit_code(&r.p);
    bool out_ok = test_file_contains(r.out_path, "hello\n") &&
                  test_file_contains(r.out_path, r.dir);     /* ran in cwd */
    bool err_ok = test_file_contains(r.err_path, "err\n") &&
                  !test_file_contains(r.err_path, "hello");
    finish(&r);
    assert_true(exited);
    assert_int_equal(code, 3);
    assert_true(out_ok);
    assert_true(err_ok);
}

static void test_killed_by_signal(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(start(&r, "kill -SEGV $$"), 0);
    bool exited = wait_exit(&r, 5000);
    int sig = ps_job_process_term_signal(&r.p), code = ps_job_process_exit_code(&r.p);
    finish(&r);
    assert_true(exited);
    assert_int_equal(sig, SIGSEGV);
    assert_int_equal(code, -1);
}

static void test_environment_is_exactly_given(void **state)
{
    (void)state;
    setenv("PS_TEST_AGENT_SECRET", "leaked", 1);
    struct run r;
    assert_int_equal(start(&r, "echo \"foo=$FOO\"; env"), 0);
    wait_exit(&r, 5000);
    bool foo = test_file_contains(r.out_path, "foo=bar baz\n");
    bool leaked = test_file_contains(r.out_path, "PS_TEST_AGENT_SECRET");
    finish(&r);
    unsetenv("PS_TEST_AGENT_SECRET");
    assert_true(foo);
    assert_false(leaked);
}

/* Descriptors the agent has open without close-on-exec never reach the job. */
static void test_agent_descriptors_do_not_leak(void **state)
{
    (void)state;
    int leak = dup2(open("/dev/null", O_RDONLY), 77);     /* no O_CLOEXEC on purpose */
    assert_int_equal(leak, 77);
    struct run r;
    assert_int_equal(start(&r, "ls /proc/self/fd"), 0);
    wait_exit(&r, 5000);
    bool has0 = test_file_contains(r.out_path, "0\n");
    bool has77 = test_file_contains(r.out_path, "77");
    finish(&r);
    close(77);
    assert_true(has0);
    assert_false(has77);
}

/* SIGKILL to the group takes the grandchildren too. */
static void test_group_kill_takes_grandchildren(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(start(&r, "sleep 100 & sleep 100 & wait"), 0);
    pid_t pgid = r.p.pid;
    int members = 0;
    for (int i = 0; i < 2000 && members < 3; i++) {
        test_sleep_ms(5);
        members = ps_procfs_group_pids("/proc", pgid, NULL, 0, NULL);
    }
    int rc = ps_job_process_signal(&r.p, SIGKILL, NULL);
    bool exited = wait_exit(&r, 5000);
    int left = -1;
    for (int i = 0; i < 2000 && left != 0; i++) {     /* orphans are reaped by init */
        left = ps_procfs_group_pids("/proc", pgid, NULL, 0, NULL);
        if (left)
            test_sleep_ms(5);
    }
    finish(&r);
    printf("group %d: %d members before the kill, %d after\n", (int)pgid, members, left);
    assert_int_equal(members, 3);
    assert_int_equal(rc, 0);
    assert_true(exited);
    assert_int_equal(left, 0);
    /* signalling a group that is gone is fine */
    assert_int_equal(ps_job_process_signal(&r.p, SIGKILL, NULL), 0);
}

/* SIGINT reaches a job that traps it; it may finish gracefully. Its background child (which a
 * non-interactive sh starts with SIGINT ignored) survives: hence the kill after a timeout. */
static void test_interrupt_then_kill(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(start(&r, "trap 'echo got-int; exit 4' INT; echo ready; sleep 100 & wait"),
                     0);
    wait_ready(&r);
    assert_int_equal(ps_job_process_signal(&r.p, SIGINT, NULL), 0);
    bool exited = wait_exit(&r, 5000);
    int code = ps_job_process_exit_code(&r.p);
    bool said = test_file_contains(r.out_path, "got-int");
    int survivors = ps_procfs_group_pids("/proc", r.p.pid, NULL, 0, NULL);
    ps_job_process_signal(&r.p, SIGKILL, NULL);
    finish(&r);
    printf("after SIGINT: exit code %d, %d group member(s) left until SIGKILL\n", code,
           survivors);
    assert_true(exited);
    assert_int_equal(code, 4);
    assert_true(said);
}

/* A job that ignores SIGINT keeps running until it is killed; a job started while the agent
 * ignores SIGINT still gets the default disposition. */
static void test_interrupt_ignored_and_agent_dispositions(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(start(&r, "trap '' INT; echo ready; sleep 100"), 0);
    wait_ready(&r);
    ps_job_process_signal(&r.p, SIGINT, NULL);
    bool exited_early = wait_exit(&r, 300);
    ps_job_process_signal(&r.p, SIGKILL, NULL);
    bool exited = wait_exit(&r, 5000);
    int sig = ps_job_process_term_signal(&r.p);
    finish(&r);
    assert_false(exited_early);
    assert_true(exited);
    assert_int_equal(sig, SIGKILL);

    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGINT, &ign, &old);
    assert_int_equal(start(&r, "exec sleep 100"), 0);
    sigaction(SIGINT, &old, NULL);
    test_sleep_ms(50);
    ps_job_process_signal(&r.p, SIGINT, NULL);
    exited = wait_exit(&r, 5000);
    sig = ps_job_process_term_signal(&r.p);
    finish(&r);
    assert_true(exited);
    assert_int_equal(sig, SIGINT);
}

static void test_rusage_after_reap(void **state)
{
    (void)state;
    struct run r;
    assert_int_equal(start(&r, "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; "
                               "head -c 30000000 /dev/zero | tail > /dev/null"), 0);
    bool exited = wait_exit(&r, 15000);
    double cpu = ps_job_process_rusage_cpu_seconds(&r.p);
    int64_t maxrss = ps_job_process_rusage_maxrss_bytes(&r.p);
    finish(&r);
    printf("rusage: %.3f CPU s, ru_maxrss %lld bytes\n", cpu, (long long)maxrss);
    assert_true(exited);
    assert_true(cpu > 0.1);
    assert_true(maxrss >= 28000000);
}

static int refuse(void *ctx, pid_t pid, struct ps_error *err)
{
    *(pid_t *)ctx = pid;
    return ps_error_set(err, PS_EIO, "attach refused");
}

static void test_spawn_errors_are_explained(void **state)
{
    (void)state;
    struct ps_job_process p;
    struct ps_error err;
    struct ps_job_process_spec spec = {
        .command = "true", .cwd = "/nonexistent-sandbox", .envp = default_env,
        .stdout_fd = -1, .stderr_fd = -1,
    };
    ps_error_init(&err);
    assert_int_equal(ps_job_process_spawn(&spec, &p, &err), PS_EIO);
    assert_non_null(strstr(err.msg, "chdir(/nonexistent-sandbox)"));
    assert_non_null(strstr(err.msg, "No such file"));
    assert_int_equal(p.pid, 0);

    spec.cwd = "/";
    spec.shell = "/nonexistent/sh";
    ps_error_init(&err);
    assert_int_equal(ps_job_process_spawn(&spec, &p, &err), PS_EIO);
    assert_non_null(strstr(err.msg, "execve(/nonexistent/sh)"));

    spec.shell = NULL;
    spec.switch_user = true;
    spec.uid = 0;
    ps_error_init(&err);
    assert_int_equal(ps_job_process_spawn(&spec, &p, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "root"));

    spec.switch_user = false;
    pid_t seen = 0;
    spec.attach = refuse;
    spec.attach_ctx = &seen;
    ps_error_init(&err);
    assert_int_equal(ps_job_process_spawn(&spec, &p, &err), PS_EIO);
    assert_string_equal(err.msg, "attach refused");
    assert_true(seen > 0);
    assert_int_equal(kill(seen, 0), -1);     /* the waiting child was killed and reaped */
    assert_int_equal(errno, ESRCH);

    /* The fast path joins its cgroups itself; a failure to join is reported, not hidden. */
    spec.attach = NULL;
    spec.attach_ctx = NULL;
    const char *const bad_join[] = {"/nonexistent/cgroup.procs", NULL};
    spec.join_procs = bad_join;
    ps_error_init(&err);
    assert_int_equal(ps_job_process_spawn(&spec, &p, &err), PS_EIO);
    assert_non_null(strstr(err.msg, "joining the job cgroup"));
    assert_non_null(strstr(err.msg, "No such file or directory"));
    spec.join_procs = NULL;

    struct ps_job_process never = {0};
    ps_error_init(&err);
    assert_int_equal(ps_job_process_signal(&never, SIGINT, &err), PS_ESTATE);
    ps_job_process_release(&never);
}

/* As root, the job runs as an unprivileged user with no supplementary groups. */
static void test_switch_user(void **state)
{
    (void)state;
    if (geteuid() != 0)
        SKIP_BY_ENVIRONMENT("not root (euid %d): cannot switch the job to another user",
                            (int)geteuid());
    struct run r;
    memset(&r, 0, sizeof r);
    r.dir = test_make_dir("jp-user");
    assert_non_null(r.dir);
    snprintf(r.out_path, sizeof r.out_path, "%s/out", r.dir);
    r.out_fd = open(r.out_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    struct ps_job_process_spec spec = {
        .command = "echo uid=$(id -u) gid=$(id -g) groups=$(id -G)", .cwd = r.dir,
        .envp = default_env, .switch_user = true, .uid = 65534, .gid = 65534,
        .stdout_fd = r.out_fd, .stderr_fd = -1,
    };
    ps_error_init(&r.err);
    assert_int_equal(ps_job_process_spawn(&spec, &r.p, &r.err), 0);
    close(r.out_fd);
    wait_exit(&r, 5000);
    bool ok = test_file_contains(r.out_path, "uid=65534 gid=65534 groups=65534\n");
    ps_job_process_release(&r.p);

    /* a sandbox the job user cannot enter is reported as such */
    char locked[PATH_MAX];
    snprintf(locked, sizeof locked, "%s/locked", r.dir);
    mkdir(locked, 0700);
    spec.cwd = locked;
    spec.stdout_fd = -1;
    struct ps_job_process p;
    ps_error_init(&r.err);
    int rc = ps_job_process_spawn(&spec, &p, &r.err);
    test_remove_dir(r.dir);
    assert_true(ok);
    assert_int_equal(rc, PS_EIO);
    assert_non_null(strstr(r.err.msg, "as the job user: Permission denied"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outputs_and_exit_code),
        cmocka_unit_test(test_killed_by_signal),
        cmocka_unit_test(test_environment_is_exactly_given),
        cmocka_unit_test(test_agent_descriptors_do_not_leak),
        cmocka_unit_test(test_group_kill_takes_grandchildren),
        cmocka_unit_test(test_interrupt_then_kill),
        cmocka_unit_test(test_interrupt_ignored_and_agent_dispositions),
        cmocka_unit_test(test_rusage_after_reap),
        cmocka_unit_test(test_spawn_errors_are_explained),
        cmocka_unit_test(test_switch_user),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
