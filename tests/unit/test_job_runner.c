#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cpu_monitor.h"
#include "platform/job_runner.h"
#include "platform/procfs.h"
#include "platform_test_util.h"

/* One cgroup system for the file, and a work dir per test. Every test that can run both with
 * and without cgroups does: cfg.cgroups = NULL is the "no usable cgroups" node. */
struct fixture {
    struct ps_cgroup_system *sys;
    char node_id[64];
    char *work;
    struct ps_job_runner_config cfg;       /* with cgroups (if usable) */
    struct ps_job_runner_config plain;     /* without */
};

static int group_setup(void **state)
{
    static struct fixture f;
    snprintf(f.node_id, sizeof f.node_id, "test-runner-%d", (int)getpid());
    struct ps_cgroup_config cc = {.node_id = f.node_id, .remove_stale_jobs = true};
    if (ps_cgroup_system_new(&cc, &f.sys, NULL) != 0)
        return -1;
    printf("node cgroups: %s\n", ps_cgroup_system_summary(f.sys));
    *state = &f;
    return 0;
}

static int group_teardown(void **state)
{
    struct fixture *f = *state;
    ps_cgroup_system_free(f->sys);
    return 0;
}

static int setup(void **state)
{
    struct fixture *f = *state;
    f->work = test_make_dir("runner");
    if (!f->work)
        return -1;
    ps_job_runner_config_init(&f->cfg);
    f->cfg.work_dir = f->work;
    f->cfg.cgroups = f->sys;
    f->plain = f->cfg;
    f->plain.cgroups = NULL;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    test_remove_dir(f->work);
    f->work = NULL;
    return 0;
}

static struct ps_job_spec spec_of(const char *job_id, const char *command)
{
    struct ps_job_spec s = {
        .operation_id = "op-1", .job_id = job_id, .task_name = "map", .job_index = 7,
        .command = command, .cpu_limit = 0, .cpu_guarantee = -1,
    };
    return s;
}

static struct ps_job_runner *start(const struct ps_job_runner_config *cfg,
                                   const struct ps_job_spec *spec)
{
    struct ps_job_runner *r = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_job_runner_start(cfg, spec, test_now_ms(), &r, &err);
    if (rc != 0)
        printf("start failed: %s\n", err.msg);
    assert_int_equal(rc, 0);
    return r;
}

/* Ticks every tick_ms until the job finishes or timeout_ms passes; records the usage seen while
 * running. */
struct observed {
    bool finished;
    int ticks;
    double max_running_cpu;
    bool cpu_decreased;
};

static struct observed run(struct ps_job_runner *r, int tick_ms, int timeout_ms)
{
    struct observed o = {0};
    double last_cpu = 0;
    int64_t start = test_now_ms();
    for (;;) {
        struct ps_job_status st;
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_job_runner_tick(r, test_now_ms(), &st, &err);
        if (rc != 0)
            printf("tick: %s\n", err.msg);
        o.ticks++;
        if (st.usage.cpu_seconds < last_cpu)
            o.cpu_decreased = true;
        last_cpu = st.usage.cpu_seconds;
        if (st.finished) {
            o.finished = true;
            return o;
        }
        if (st.usage.cpu_seconds > o.max_running_cpu)
            o.max_running_cpu = st.usage.cpu_seconds;
        if (test_now_ms() - start > timeout_ms)
            return o;
        test_sleep_ms(tick_ms);
    }
}

static char *output(struct ps_job_runner *r, enum ps_capture_stream s);

/* Waits (up to 10 s) until the job's stdout holds "ready": its traps are set. */
static void wait_ready(struct ps_job_runner *r)
{
    for (int i = 0; i < 2000; i++) {
        char *out = output(r, PS_CAPTURE_STDOUT);
        bool ready = strstr(out, "ready") != NULL;
        free(out);
        if (ready)
            return;
        test_sleep_ms(5);
    }
}

static char *output(struct ps_job_runner *r, enum ps_capture_stream s)
{
    char *data = NULL;
    size_t len;
    assert_int_equal(ps_job_runner_read_output(r, s, &data, &len, NULL), 0);
    return data;
}

/* ---------------------------------------------------------------------------------------------
 * Logic (runs everywhere)
 * ------------------------------------------------------------------------------------------- */

static void test_hello_outputs_and_cleanup(void **state)
{
    struct fixture *f = *state;
    struct ps_job_spec s = spec_of("hello", "echo hello; echo err >&2");
    struct ps_job_runner *r = start(&f->cfg, &s);
    char sandbox[PATH_MAX];
    snprintf(sandbox, sizeof sandbox, "%s", ps_job_runner_sandbox(r));
    struct observed o = run(r, 10, 10000);
    const struct ps_job_result *res = ps_job_runner_result(r);
    assert_true(o.finished);
    assert_int_equal(res->outcome, PS_JOB_COMPLETED);
    assert_string_equal(ps_job_outcome_name(res->outcome), "completed");
    assert_int_equal(res->exit_code, 0);
    assert_int_equal(res->stdout_bytes, 6);
    assert_int_equal(res->stderr_bytes, 4);
    assert_int_equal(access(sandbox, F_OK), 0);
    assert_int_equal(ps_job_runner_cleanup(r, NULL), 0);
    assert_int_equal(access(sandbox, F_OK), -1);    /* removed ... */
    char *out = output(r, PS_CAPTURE_STDOUT);        /* ... but the outputs are still served */
    char *er = output(r, PS_CAPTURE_STDERR);
    assert_string_equal(out, "hello\n");
    assert_string_equal(er, "err\n");
    free(out);
    free(er);
    ps_job_runner_free(r);
}

static void test_environment(void **state)
{
    struct fixture *f = *state;
    const char *env[] = {"MY_VAR=from task", "POOLSCHED_JOB_ID=spoofed", NULL};
    struct ps_job_spec s = spec_of("env-1",
        "echo \"$POOLSCHED_OPERATION_ID|$POOLSCHED_JOB_ID|$POOLSCHED_JOB_INDEX|"
        "$POOLSCHED_TASK_NAME|$YT_OPERATION_ID|$YT_JOB_ID|$YT_JOB_INDEX|$MY_VAR\"; "
        "echo \"home=$HOME pwd=$(pwd)\"");
    s.environment = env;
    struct ps_job_runner *r = start(&f->cfg, &s);
    run(r, 10, 10000);
    char *out = output(r, PS_CAPTURE_STDOUT);
    char expected[2 * PATH_MAX];
    snprintf(expected, sizeof expected,
             "op-1|env-1|7|map|op-1|env-1|7|from task\nhome=%s pwd=%s\n",
             ps_job_runner_sandbox(r), ps_job_runner_sandbox(r));
    assert_string_equal(out, expected);
    free(out);
    ps_job_runner_free(r);
}

/* The reap-only path settles a job as a tick does; with a sandbox pool the next job gets the
 * emptied directory; a job that writes nothing leaves no output files. */
static void test_reap_and_sandbox_pool(void **state)
{
    struct fixture *f = *state;
    struct ps_sandbox_pool *pool = NULL;
    assert_int_equal(ps_sandbox_pool_new(f->work, 4, &pool, NULL), 0);
    struct ps_job_runner_config cfg = f->cfg;
    cfg.sandbox_pool = pool;
    struct ps_job_spec s = spec_of("reap-1", "echo left > junk; echo oops >&2; exit 3");
    struct ps_job_runner *r = start(&cfg, &s);
    struct ps_job_status st = {0};
    int64_t deadline = test_now_ms() + 10000;
    while (!st.finished && test_now_ms() < deadline) {
        assert_int_equal(ps_job_runner_reap(r, test_now_ms(), &st, NULL), 0);
        if (!st.finished)
            test_sleep_ms(5);
    }
    assert_true(st.finished);
    const struct ps_job_result *res = ps_job_runner_result(r);
    assert_int_equal(res->outcome, PS_JOB_FAILED);
    assert_string_equal(res->error, "Process exited with code 3");
    assert_int_equal(res->stderr_bytes, 5);
    char *er = output(r, PS_CAPTURE_STDERR);
    assert_string_equal(er, "oops\n");
    free(er);
    char first[PATH_MAX];
    snprintf(first, sizeof first, "%s", ps_job_runner_sandbox(r));
    struct stat a, b;
    assert_int_equal(stat(first, &a), 0);
    ps_job_runner_free(r);
    assert_int_equal(access(first, F_OK), -1);

    s = spec_of("reap-2", "ls -A; echo end");
    r = start(&cfg, &s);
    assert_int_equal(stat(ps_job_runner_sandbox(r), &b), 0);
    assert_int_equal(a.st_ino, b.st_ino);           /* the parked directory, reused */
    run(r, 10, 10000);
    char *out = output(r, PS_CAPTURE_STDOUT);
    assert_string_equal(out, "end\n");     /* empty: no junk, and no output file before output */
    free(out);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/stderr", ps_job_runner_sandbox(r));
    assert_int_equal(access(path, F_OK), -1);       /* nothing written: no file */
    ps_job_runner_free(r);
    ps_sandbox_pool_free(pool);
}

static void test_failures_are_classified(void **state)
{
    struct fixture *f = *state;
    struct ps_job_spec s = spec_of("fail-code", "exit 3");
    struct ps_job_runner *r = start(&f->plain, &s);
    run(r, 10, 10000);
    const struct ps_job_result *res = ps_job_runner_result(r);
    assert_int_equal(res->outcome, PS_JOB_FAILED);
    assert_string_equal(res->error, "Process exited with code 3");
    ps_job_runner_free(r);

    s = spec_of("fail-signal", "kill -SEGV $$");
    r = start(&f->plain, &s);
    run(r, 10, 10000);
    res = ps_job_runner_result(r);
    assert_int_equal(res->outcome, PS_JOB_FAILED);
    assert_int_equal(res->term_signal, SIGSEGV);
    assert_non_null(strstr(res->error, "Process was killed by signal 11"));
    ps_job_runner_free(r);
}

static void test_output_cap(void **state)
{
    struct fixture *f = *state;
    struct ps_job_runner_config cfg = f->plain;
    cfg.stderr_cap_bytes = 100;
    struct ps_job_spec s = spec_of("cap", "head -c 10000 /dev/zero | tr '\\0' x >&2; echo end >&2");
    struct ps_job_runner *r = start(&cfg, &s);
    run(r, 10, 10000);
    const struct ps_job_result *res = ps_job_runner_result(r);
    char *er = output(r, PS_CAPTURE_STDERR);
    assert_int_equal(res->outcome, PS_JOB_COMPLETED);
    assert_int_equal(res->stderr_bytes, 10004);
    assert_true(res->stderr_truncated);
    assert_false(res->stdout_truncated);
    assert_non_null(strstr(er, "[poolsched: 9904 bytes of stderr skipped]"));
    assert_int_equal(strncmp(er, "xxxxx", 5), 0);
    size_t n = strlen(er);
    assert_string_equal(er + n - 4, "end\n");      /* the tail is kept */
    free(er);
    ps_job_runner_free(r);
}

static void test_runs_unprivileged(void **state)
{
    struct fixture *f = *state;
    struct ps_job_spec s = spec_of("whoami", "id -u; touch mine && echo wrote");
    struct ps_job_runner *r = start(&f->cfg, &s);
    run(r, 10, 10000);
    char *out = output(r, PS_CAPTURE_STDOUT);
    uid_t uid = ps_job_runner_uid(r);
    ps_job_runner_free(r);
    char expected[64];
    snprintf(expected, sizeof expected, "%d\nwrote\n", (int)uid);
    assert_string_equal(out, expected);   /* runs as the runner says, and owns its sandbox */
    free(out);
    if (geteuid() != 0)
        SKIP_BY_ENVIRONMENT("not root: jobs run as the agent's own uid %d", (int)uid);
    assert_true(uid != 0);
    assert_int_equal(uid, 65534);
}

/* With a slot uid base (and no job_user) a root runner runs the job as uid = gid = base + its
 * slot index, in a 0700 sandbox of that uid, with the index in its environment. */
static void test_runs_as_slot_uid(void **state)
{
    struct fixture *f = *state;
    struct ps_job_runner_config cfg = f->plain;
    cfg.job_user = NULL;
    cfg.slot_uid_base = 31000 + getpid() % 1000;
    struct ps_job_spec s = spec_of("slot-3",
        "echo \"$(id -u) $(id -g) $YT_SLOT_INDEX $POOLSCHED_SLOT_INDEX $(stat -c '%a %u' .)\"");
    s.slot_index = 3;
    struct ps_job_runner *r = start(&cfg, &s);
    run(r, 10, 10000);
    char *out = output(r, PS_CAPTURE_STDOUT);
    uid_t uid = ps_job_runner_uid(r);
    ps_job_runner_free(r);
    char expected[128];
    snprintf(expected, sizeof expected, "%d %d 3 3 700 %d\n", (int)uid, (int)getegid(),
             (int)uid);
    if (geteuid() != 0) {
        assert_string_equal(out, expected);     /* not root: the agent's own uid */
        free(out);
        SKIP_BY_ENVIRONMENT("not root: jobs run as the agent's own uid %d", (int)uid);
    }
    assert_int_equal(uid, cfg.slot_uid_base + 3);
    snprintf(expected, sizeof expected, "%d %d 3 3 700 %d\n", (int)uid, (int)uid, (int)uid);
    assert_string_equal(out, expected);
    free(out);
}

static void test_interrupt_graceful_and_timeout(void **state)
{
    struct fixture *f = *state;
    /* a job that handles SIGINT and finishes: completed, interrupted */
    struct ps_job_spec s = spec_of("int-ok",
                                   "trap 'echo bye; exit 0' INT; echo ready; sleep 100 & wait");
    struct ps_job_runner *r = start(&f->cfg, &s);
    wait_ready(r);
    assert_int_equal(ps_job_runner_interrupt(r, test_now_ms(), 5000, "preemption", NULL), 0);
    struct observed o = run(r, 10, 10000);
    const struct ps_job_result *res = ps_job_runner_result(r);
    assert_true(o.finished);
    assert_int_equal(res->outcome, PS_JOB_COMPLETED);
    assert_true(res->interrupted);
    assert_true(res->duration_ms < 4000);
    char *out = output(r, PS_CAPTURE_STDOUT);
    assert_string_equal(out, "ready\nbye\n");
    free(out);
    assert_int_equal(ps_job_runner_interrupt(r, test_now_ms(), 10, "x", NULL), PS_ESTATE);
    ps_job_runner_free(r);

    /* a job that ignores SIGINT: killed when the timeout runs out, aborted "preemption" */
    s = spec_of("int-ignored", "trap '' INT; echo ready; sleep 100");
    r = start(&f->cfg, &s);
    wait_ready(r);
    int64_t t0 = test_now_ms();
    assert_int_equal(ps_job_runner_interrupt(r, t0, 300, "preemption", NULL), 0);
    o = run(r, 10, 10000);
    int64_t waited = test_now_ms() - t0;
    res = ps_job_runner_result(r);
    assert_true(o.finished);
    assert_int_equal(res->outcome, PS_JOB_ABORTED);
    assert_string_equal(res->abort_reason, "preemption");
    assert_int_equal(res->term_signal, SIGKILL);
    assert_true(waited >= 300);
    ps_job_runner_free(r);

    /* a job that dies of the SIGINT itself: aborted too, not failed */
    s = spec_of("int-dies", "exec sleep 100");
    r = start(&f->plain, &s);
    test_sleep_ms(50);
    assert_int_equal(ps_job_runner_interrupt(r, test_now_ms(), 5000, "preemption", NULL), 0);
    run(r, 10, 10000);
    res = ps_job_runner_result(r);
    assert_int_equal(res->outcome, PS_JOB_ABORTED);
    assert_int_equal(res->term_signal, SIGINT);
    ps_job_runner_free(r);
}

static void test_abort_kills_the_whole_job(void **state)
{
    struct fixture *f = *state;
    const struct ps_job_runner_config *cfgs[] = {&f->cfg, &f->plain};
    for (int i = 0; i < 2; i++) {
        struct ps_job_spec s = spec_of(i ? "abort-plain" : "abort-cg",
                                       "sleep 100 & sleep 100 & wait");
        struct ps_job_runner *r = start(cfgs[i], &s);
        pid_t pgid = ps_job_runner_pgid(r);
        int members = 0;
        for (int k = 0; k < 2000 && members < 3; k++) {
            test_sleep_ms(5);
            members = ps_procfs_group_pids("/proc", pgid, NULL, 0, NULL);
        }
        assert_int_equal(ps_job_runner_abort(r, "scheduler", NULL), 0);
        struct observed o = run(r, 10, 10000);
        int left = ps_procfs_group_pids("/proc", pgid, NULL, 0, NULL);
        for (int k = 0; k < 2000 && left > 0; k++) {     /* orphans: reaped by init */
            test_sleep_ms(5);
            left = ps_procfs_group_pids("/proc", pgid, NULL, 0, NULL);
        }
        const struct ps_job_result *res = ps_job_runner_result(r);
        assert_int_equal(members, 3);
        assert_true(o.finished);
        assert_int_equal(res->outcome, PS_JOB_ABORTED);
        assert_string_equal(res->abort_reason, "scheduler");
        assert_int_equal(left, 0);
        assert_int_equal(ps_job_runner_abort(r, "again", NULL), 0);   /* finished: no-op */
        assert_string_equal(res->abort_reason, "scheduler");
        ps_job_runner_free(r);
    }
}

static void test_cleanup_of_a_running_job(void **state)
{
    struct fixture *f = *state;
    struct ps_job_spec s = spec_of("running", "sleep 100");
    struct ps_job_runner *r = start(&f->cfg, &s);
    char sandbox[PATH_MAX];
    snprintf(sandbox, sizeof sandbox, "%s", ps_job_runner_sandbox(r));
    assert_int_equal(ps_job_runner_cleanup(r, NULL), 0);
    const struct ps_job_result *res = ps_job_runner_result(r);
    assert_int_equal(res->outcome, PS_JOB_ABORTED);
    assert_string_equal(res->abort_reason, "cleanup");
    assert_int_equal(access(sandbox, F_OK), -1);
    ps_job_runner_free(r);
    ps_job_runner_free(NULL);
}

static void test_start_errors_leave_nothing(void **state)
{
    struct fixture *f = *state;
    struct ps_job_runner *r = NULL;
    struct ps_error err;
    char sandbox_root[PATH_MAX];
    snprintf(sandbox_root, sizeof sandbox_root, "%s/sandbox/bad-env", f->work);

    struct ps_job_spec s = spec_of("../x", "true");
    ps_error_init(&err);
    assert_int_equal(ps_job_runner_start(&f->cfg, &s, 0, &r, &err), PS_EINVAL);
    assert_null(r);
    assert_non_null(strstr(err.msg, "job id"));

    const char *env[] = {"NOEQUALS", NULL};
    s = spec_of("bad-env", "true");
    s.environment = env;
    ps_error_init(&err);
    assert_int_equal(ps_job_runner_start(&f->cfg, &s, 0, &r, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "\"NOEQUALS\" must be KEY=VALUE"));
    assert_non_null(strstr(err.msg, "starting job bad-env"));
    assert_int_equal(access(sandbox_root, F_OK), -1);

    s = spec_of("no-cmd", NULL);
    ps_error_init(&err);
    assert_int_equal(ps_job_runner_start(&f->cfg, &s, 0, &r, &err), PS_EINVAL);

    if (geteuid() != 0)
        SKIP_BY_ENVIRONMENT("not root: the job user is not looked up");
    struct ps_job_runner_config cfg = f->cfg;
    s = spec_of("user", "true");
    cfg.job_user = "no-such-user-ps";
    ps_error_init(&err);
    assert_int_equal(ps_job_runner_start(&cfg, &s, 0, &r, &err), PS_ENOENT);
    assert_non_null(strstr(err.msg, "no-such-user-ps"));
    cfg.job_user = "root";
    ps_error_init(&err);
    assert_int_equal(ps_job_runner_start(&cfg, &s, 0, &r, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "never run as root"));
}

/* ---------------------------------------------------------------------------------------------
 * Accounting and enforcement, with cgroups when usable and always without
 * ------------------------------------------------------------------------------------------- */

/* A fixed amount of CPU work (~0.5 CPU s; CPU time, not wall time, because the machine is
 * shared): the job's CPU seconds exceed 0.3, grow while it runs, and never go down. */
static void check_cpu_accounting(const struct ps_job_runner_config *cfg, const char *id,
                                 enum ps_job_usage_source want)
{
    struct ps_job_spec s = spec_of(id, "i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done");
    struct ps_job_runner *r = start(cfg, &s);
    struct observed o = run(r, 50, 20000);
    const struct ps_job_result *res = ps_job_runner_result(r);
    printf("%s: %.3f CPU s (source %s), %.3f seen while running, %d ticks\n", id,
           res->usage.cpu_seconds, res->usage.cpu_source == PS_JOB_SOURCE_CGROUP ? "cgroup"
                                                                                 : "procfs",
           o.max_running_cpu, o.ticks);
    assert_true(o.finished);
    assert_int_equal(res->outcome, PS_JOB_COMPLETED);
    assert_int_equal(res->usage.cpu_source, want);
    assert_true(res->usage.cpu_seconds > 0.3);
    assert_true(o.max_running_cpu > 0);
    assert_false(o.cpu_decreased);
    ps_job_runner_free(r);
}

static void test_cpu_accounting_procfs(void **state)
{
    struct fixture *f = *state;
    check_cpu_accounting(&f->plain, "cpu-procfs", PS_JOB_SOURCE_PROCFS);
}

static void test_cpu_accounting_cgroup(void **state)
{
    struct fixture *f = *state;
    if (!ps_cgroup_system_caps(f->sys).cpu_usage)
        SKIP_BY_ENVIRONMENT("no cgroup CPU accounting: %s", ps_cgroup_system_summary(f->sys));
    check_cpu_accounting(&f->cfg, "cpu-cgroup", PS_JOB_SOURCE_CGROUP);
}

static void check_memory_peak(const struct ps_job_runner_config *cfg, const char *id)
{
    struct ps_job_spec s = spec_of(id, "head -c 100000000 /dev/zero | tail > /dev/null");
    struct ps_job_runner *r = start(cfg, &s);
    run(r, 20, 20000);
    const struct ps_job_result *res = ps_job_runner_result(r);
    printf("%s: peak %lld bytes (source %s)\n", id, (long long)res->usage.memory_peak_bytes,
           res->usage.memory_source == PS_JOB_SOURCE_CGROUP ? "cgroup" : "procfs+rusage");
    assert_int_equal(res->outcome, PS_JOB_COMPLETED);
    assert_true(res->usage.memory_peak_bytes >= 90000000);
    ps_job_runner_free(r);
}

static void test_memory_peak_procfs(void **state)
{
    struct fixture *f = *state;
    check_memory_peak(&f->plain, "peak-procfs");
}

static void test_memory_peak_cgroup(void **state)
{
    struct fixture *f = *state;
    if (!ps_cgroup_system_caps(f->sys).memory)
        SKIP_BY_ENVIRONMENT("no memory cgroup: %s", ps_cgroup_system_summary(f->sys));
    check_memory_peak(&f->cfg, "peak-cgroup");
}

/* Above memory_limit the job fails with "Memory limit exceeded": without cgroups because the
 * tick sees its RSS, with a memory cgroup because the kernel OOM-kills inside it. */
static void check_memory_limit(const struct ps_job_runner_config *cfg, const char *id,
                               const char *command)
{
    struct ps_job_spec s = spec_of(id, command);
    s.memory_limit_bytes = 50000000;
    struct ps_job_runner *r = start(cfg, &s);
    struct observed o = run(r, 20, 20000);
    const struct ps_job_result *res = ps_job_runner_result(r);
    printf("%s: %s, error \"%s\", peak %lld, after %lld ms\n", id,
           ps_job_outcome_name(res->outcome), res->error,
           (long long)res->usage.memory_peak_bytes, (long long)res->duration_ms);
    assert_true(o.finished);
    assert_int_equal(res->outcome, PS_JOB_FAILED);
    assert_true(res->memory_limit_exceeded);
    assert_string_equal(res->error, "Memory limit exceeded");
    assert_true(res->duration_ms < 4000);       /* the job would otherwise sleep 5 s */
    ps_job_runner_free(r);
}

/* tail holds 100 MB for 5 s: long enough for sampling to see it */
#define MEMORY_HOLDER "{ head -c 100000000 /dev/zero; sleep 5; } | tail > /dev/null"

static void test_memory_limit_procfs(void **state)
{
    struct fixture *f = *state;
    check_memory_limit(&f->plain, "mem-procfs", MEMORY_HOLDER);
}

static void test_memory_limit_cgroup(void **state)
{
    struct fixture *f = *state;
    if (!ps_cgroup_system_caps(f->sys).memory)
        SKIP_BY_ENVIRONMENT("no memory cgroup: %s", ps_cgroup_system_summary(f->sys));
    check_memory_limit(&f->cfg, "mem-cgroup", MEMORY_HOLDER);
}

/* The node's memory running out (simulated with a limit on poolsched-<node> itself, the
 * parent of the job cgroups) OOM-kills a job that is within its own limit: aborted with
 * resource_overdraft, not failed. Needs v1 (the path below is v1's layout). */
static void test_node_oom_is_overdraft(void **state)
{
    struct fixture *f = *state;
    if (ps_cgroup_system_mode(f->sys) != PS_CGROUP_V1 || !ps_cgroup_system_caps(f->sys).memory)
        SKIP_BY_ENVIRONMENT("needs a v1 memory cgroup to simulate node OOM: %s",
                            ps_cgroup_system_summary(f->sys));
    char buf[8192], mi[65536], cg[PATH_MAX], parent[3 * PATH_MAX];
    size_t len, milen;
    struct ps_cgroup_mount m;
    assert_int_equal(ps_procfs_read_small("/proc/self/cgroup", buf, sizeof buf, &len, NULL), 0);
    assert_int_equal(ps_cgroup_parse_proc_cgroup(buf, len, "memory", cg, sizeof cg), 0);
    assert_int_equal(ps_procfs_read_small("/proc/self/mountinfo", mi, sizeof mi, &milen, NULL),
                     0);
    assert_int_equal(ps_cgroup_parse_mountinfo(mi, milen, "memory", &m), 0);
    snprintf(parent, sizeof parent, "%s%s/poolsched-%s/memory.limit_in_bytes", m.mount_point,
             strcmp(cg, "/") == 0 ? "" : cg, f->node_id);
    FILE *lim = fopen(parent, "w");
    assert_non_null(lim);
    fputs("50000000", lim);
    assert_int_equal(fclose(lim), 0);

    struct ps_job_spec s = spec_of("node-oom", "head -c 100000000 /dev/zero | tail > /dev/null");
    s.memory_limit_bytes = 200000000;
    struct ps_job_runner *r = start(&f->cfg, &s);
    run(r, 20, 20000);
    const struct ps_job_result res = *ps_job_runner_result(r);
    ps_job_runner_free(r);
    lim = fopen(parent, "w");
    assert_non_null(lim);
    fputs("-1", lim);
    assert_int_equal(fclose(lim), 0);
    printf("node OOM: %s, reason \"%s\", error \"%s\"\n", ps_job_outcome_name(res.outcome),
           res.abort_reason, res.error);
    assert_int_equal(res.outcome, PS_JOB_ABORTED);
    assert_string_equal(res.abort_reason, "resource_overdraft");
    assert_false(res.memory_limit_exceeded);
}

/* The hard limit from the spec reaches the cgroup: two busy loops get about half a core. The
 * guarantee can be changed while the job runs (the CPU monitor's callback). Without cgroups
 * the callback refuses, which the monitor records as "refused". */
static void test_cpu_limit_and_guarantee(void **state)
{
    struct fixture *f = *state;
    struct ps_job_spec s = spec_of("guarantee-plain", "sleep 100");
    struct ps_job_runner *r = start(&f->plain, &s);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_job_runner_set_cpu_guarantee(r, 1.0, &err), PS_ESTATE);
    assert_non_null(strstr(err.msg, "no cpu cgroup"));
    assert_false(ps_job_runner_cpu_guarantee_cb(r, 1.0));
    ps_job_runner_free(r);

    if (!ps_cgroup_system_caps(f->sys).cpu_limit)
        SKIP_BY_ENVIRONMENT("no cgroup CPU limits: %s", ps_cgroup_system_summary(f->sys));
    s = spec_of("limit-cg", "while :; do :; done & while :; do :; done");
    s.cpu_limit = 0.5;
    r = start(&f->cfg, &s);
    int64_t t0 = test_now_ms();
    struct ps_job_status st;
    ps_job_runner_tick(r, t0, &st, NULL);
    double cpu0 = st.usage.cpu_seconds;

    /* The monitor's callback (its type checked here) applies a guarantee while the job runs. */
    ps_cpu_guarantee_fn try_set = ps_job_runner_cpu_guarantee_cb;
    bool applied = try_set(r, 0.25);

    test_sleep_ms(800);
    int64_t t1 = test_now_ms();
    ps_job_runner_tick(r, t1, &st, NULL);
    double cores = (st.usage.cpu_seconds - cpu0) * 1000.0 / (double)(t1 - t0);
    ps_job_runner_abort(r, "test", NULL);
    run(r, 10, 5000);
    ps_job_runner_free(r);
    printf("cpu_limit 0.5 through the runner: %.2f cores over %lld ms\n", cores,
           (long long)(t1 - t0));
    assert_true(applied);
    assert_true(cores <= 0.75);
    assert_true(cores > 0.05);
}

/* A v1 job cgroup reused from the pool keeps its previous job's limits until the next job is
 * ready (cgroup.h): a job that sets no guarantee and no CPU limit still runs with the
 * defaults, 1024 shares and no quota, not with the 2048 shares and 0.5 core of the job before. */
static void test_pooled_cgroup_limits_reset(void **state)
{
    struct fixture *f = *state;
    if (ps_cgroup_system_mode(f->sys) != PS_CGROUP_V1 || !ps_cgroup_system_caps(f->sys).cpu_weight ||
        !ps_cgroup_system_caps(f->sys).cpu_limit)
        SKIP_BY_ENVIRONMENT("the pool is for v1 with the cpu controller: %s",
                            ps_cgroup_system_summary(f->sys));
    char node[96];
    snprintf(node, sizeof node, "%s-pool", f->node_id);
    struct ps_cgroup_config cc = {.node_id = node, .remove_stale_jobs = true, .job_pool_size = 1};
    struct ps_cgroup_system *sys = NULL;
    assert_int_equal(ps_cgroup_system_new(&cc, &sys, NULL), 0);
    struct ps_job_runner_config cfg = f->cfg;
    cfg.cgroups = sys;
    /* the job prints its own cpu cgroup's shares and quota */
    const char *show = "d=$(sed -n 's/^[0-9]*:\\([^:]*,\\)\\{0,1\\}cpu\\(,[^:]*\\)\\{0,1\\}:"
                       "//p' /proc/self/cgroup | head -1); "
                       "echo shares=$(cat /sys/fs/cgroup/cpu$d/cpu.shares) "
                       "quota=$(cat /sys/fs/cgroup/cpu$d/cpu.cfs_quota_us)";
    struct ps_job_spec s = spec_of("pool-first", show);
    s.cpu_limit = 0.5;
    s.cpu_guarantee = 2;
    struct ps_job_runner *r = start(&cfg, &s);
    run(r, 10, 10000);
    char *out = output(r, PS_CAPTURE_STDOUT);
    printf("first: %s", out);
    assert_non_null(strstr(out, "shares=2048 quota=50000"));
    free(out);
    ps_job_runner_free(r);                      /* its cgroup goes to the pool */

    s = spec_of("pool-second", show);           /* no limit, no guarantee */
    s.cpu_guarantee = 0;
    r = start(&cfg, &s);
    run(r, 10, 10000);
    out = output(r, PS_CAPTURE_STDOUT);
    printf("second: %s", out);
    assert_non_null(strstr(out, "shares=1024 quota=-1"));
    free(out);
    ps_job_runner_free(r);
    ps_cgroup_system_free(sys);
}

static void test_tmpfs(void **state)
{
    struct fixture *f = *state;
    struct ps_job_spec s = spec_of("tmpfs", "stat -f -c %T tmpfs; echo data > tmpfs/f && "
                                            "echo wrote");
    s.tmpfs_size_bytes = 1 << 20;
    struct ps_job_runner *r = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_job_runner_start(&f->cfg, &s, test_now_ms(), &r, &err);
    if (geteuid() != 0) {
        assert_int_equal(rc, PS_EPERM);
        assert_non_null(strstr(err.msg, "needs root"));
        SKIP_BY_ENVIRONMENT("not root: no tmpfs (%s)", err.msg);
    }
    assert_int_equal(rc, 0);
    char mnt[PATH_MAX + 8];
    snprintf(mnt, sizeof mnt, "%s/tmpfs", ps_job_runner_sandbox(r));
    run(r, 10, 10000);
    char *out = output(r, PS_CAPTURE_STDOUT);
    bool mounted = test_file_contains("/proc/self/mounts", mnt);
    assert_int_equal(ps_job_runner_cleanup(r, NULL), 0);
    bool still = test_file_contains("/proc/self/mounts", mnt);
    ps_job_runner_free(r);
    assert_string_equal(out, "tmpfs\nwrote\n");
    free(out);
    assert_true(mounted);
    assert_false(still);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hello_outputs_and_cleanup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reap_and_sandbox_pool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures_are_classified, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runs_unprivileged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runs_as_slot_uid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupt_graceful_and_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_kills_the_whole_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cleanup_of_a_running_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_errors_leave_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_accounting_procfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_accounting_cgroup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_peak_procfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_peak_cgroup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_limit_procfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_limit_cgroup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_oom_is_overdraft, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpu_limit_and_guarantee, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pooled_cgroup_limits_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tmpfs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
