/* Instance locks (platform/instance_lock.h) and the start-up sweep of cgroup.c that relies on
 * them: a live agent's node cgroup stays even while it is idle (no process in it), a dead one's
 * goes; and a node cgroup that vanished under a live agent is made again. */
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
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/cgroup.h"
#include "platform/instance_lock.h"
#include "platform_test_util.h"

static bool exists(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", dir, rel);
    assert_true(n > 0 && (size_t)n < sizeof path);
    return access(path, F_OK) == 0;
}

static void make_path(const char *root, const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        (void)mkdir(path, 0755);
        *p = '/';
    }
}

static void put_file(const char *root, const char *rel, const char *content)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    make_path(root, path + strlen(root) + 1);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

/* A child that takes the lock <dir>/<name>.lock itself (as another agent would, with flock on
 * its own file) and waits until killed; returns its pid once it holds the lock. */
static pid_t hold_in_child(const char *dir, const char *name)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* dies with the test, and does not hold its output open (a failed assert skips reap) */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_WRONLY);
        (void)dup2(null, 1);
        (void)dup2(null, 2);
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s.lock", dir, name);
        int fd = open(path, O_RDONLY | O_CREAT, 0644);
        char ok = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 ? 'y' : 'n';
        if (write(p[1], &ok, 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(p[1]);
    char ok = 0;
    assert_int_equal(read(p[0], &ok, 1), 1);
    close(p[0]);
    assert_int_equal(ok, 'y');
    return pid;
}

static void reap(pid_t pid)
{
    kill(pid, SIGKILL);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
}

/* The lock check itself: held by a live process = alive; free, or no file = dead. */
static void test_lock_check(void **state)
{
    (void)state;
    char *dir = test_make_dir("cglock");
    assert_non_null(dir);
    int fd = -1;
    /* no lock file: an agent from before locks, dead */
    assert_true(ps_instance_lock_dead(dir, "poolsched-n-0000000000000000", &fd));
    assert_int_equal(fd, -1);

    /* another process holds it: alive; once that process is killed: dead, and held by us */
    pid_t live = hold_in_child(dir, "poolsched-n-1111111111111111");
    assert_false(ps_instance_lock_dead(dir, "poolsched-n-1111111111111111", &fd));
    assert_int_equal(fd, -1);
    reap(live);
    assert_true(ps_instance_lock_dead(dir, "poolsched-n-1111111111111111", &fd));
    assert_true(fd >= 0);
    /* while the sweeper holds it, a second sweeper sees it held */
    int fd2 = -1;
    assert_false(ps_instance_lock_dead(dir, "poolsched-n-1111111111111111", &fd2));
    ps_instance_lock_drop(dir, "poolsched-n-1111111111111111", fd, true);
    assert_false(exists(dir, "poolsched-n-1111111111111111.lock"));

    /* take: held against everyone else, including a second take */
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_instance_lock_take(dir, "poolsched-n-2222222222222222", &fd, &err), 0);
    assert_true(exists(dir, "poolsched-n-2222222222222222.lock"));
    assert_false(ps_instance_lock_dead(dir, "poolsched-n-2222222222222222", &fd2));
    assert_int_equal(ps_instance_lock_take(dir, "poolsched-n-2222222222222222", &fd2, &err),
                     PS_ESTATE);
    assert_non_null(strstr(err.msg, "poolsched-n-2222222222222222.lock"));
    ps_instance_lock_drop(dir, "poolsched-n-2222222222222222", fd, false);
    assert_true(ps_instance_lock_dead(dir, "poolsched-n-2222222222222222", &fd2));
    ps_instance_lock_drop(dir, "poolsched-n-2222222222222222", fd2, true);

    /* the sweep of lock files: only free ones of this prefix go */
    const char *files[] = {"poolsched-n-3333333333333333",  /* free: removed */
                           "poolsched-n-4444444444444444",  /* held by a live process */
                           "poolsched-n-5555555555555555",  /* keep (the sweeper's own) */
                           "poolsched-m-6666666666666666",  /* another node id */
                           "poolsched-n-x"};                /* not an instance name */
    for (int i = 0; i < 5; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s.lock", dir, files[i]);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fclose(f);
    }
    live = hold_in_child(dir, files[1]);
    ps_instance_lock_sweep(dir, "poolsched-n-", files[2]);
    for (int i = 0; i < 5; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s.lock", files[i]);
        if (exists(dir, p) != (i != 0))
            fail_msg("%s: expected %s", p, i ? "kept" : "removed");
    }
    reap(live);

    /* a lock directory that cannot be made: take says so */
    char bad[PATH_MAX];
    snprintf(bad, sizeof bad, "%s/no/such", dir);
    ps_error_init(&err);
    assert_int_equal(ps_instance_lock_take(bad, "x", &fd, &err), PS_EIO);
    assert_non_null(strstr(err.msg, bad));
    test_remove_dir(dir);
}

/* The start-up sweep on a fake v1 tree: of four earlier node cgroups with this node id, all
 * without processes, only the one whose agent lives (lock held) stays. */
static void test_sweep_spares_live_idle_instance(void **state)
{
    (void)state;
    char *dir = test_make_dir("cglock-sweep");
    assert_non_null(dir);
    char mi[4096];
    snprintf(mi, sizeof mi,
             "32 31 0:29 / %s/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
             "35 31 0:32 / %s/memory rw - cgroup cgroup rw,memory\n", dir, dir);
    put_file(dir, "proc/self/mountinfo", mi);
    put_file(dir, "proc/self/cgroup", "4:memory:/agent\n2:cpu,cpuacct:/agent\n0::/\n");
    const char *me = "poolsched-n1-eeeeeeeeeeeeeeee";
    char rel[256];
    const char *probes[] = {"cpu,cpuacct/agent/%s/cpu.cfs_quota_us",
                            "cpu,cpuacct/agent/%s/cpuacct.usage",
                            "memory/agent/%s/memory.limit_in_bytes"};
    for (int i = 0; i < 3; i++) {
        snprintf(rel, sizeof rel, probes[i], me);
        put_file(dir, rel, "");
    }
    const char *others[] = {"poolsched-n1-aaaaaaaaaaaaaaaa",     /* live, idle */
                            "poolsched-n1-bbbbbbbbbbbbbbbb",     /* dead, its lock file left */
                            "poolsched-n1-dddddddddddddddd",     /* from before locks */
                            "poolsched-n1"};                     /* from before instance ids */
    for (int i = 0; i < 4; i++) {
        snprintf(rel, sizeof rel, "cpu,cpuacct/agent/%s", others[i]);
        make_path(dir, rel);
        snprintf(rel, sizeof rel, "memory/agent/%s", others[i]);
        make_path(dir, rel);
    }
    char locks[PATH_MAX];
    snprintf(locks, sizeof locks, "%s/locks", dir);
    make_path(dir, "locks");
    pid_t live = hold_in_child(locks, others[0]);
    snprintf(rel, sizeof rel, "locks/%s.lock", others[1]);
    put_file(dir, rel, "");

    char proc[PATH_MAX];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    struct ps_cgroup_config cfg = {.node_id = "n1", .instance_id = "eeeeeeeeeeeeeeee",
                                   .proc_root = proc, .lock_dir = locks,
                                   .remove_stale_jobs = true};
    struct ps_cgroup_system *sys = NULL;
    assert_int_equal(ps_cgroup_system_new(&cfg, &sys, NULL), 0);
    printf("summary: %s\n", ps_cgroup_system_summary(sys));
    assert_int_equal(ps_cgroup_system_mode(sys), PS_CGROUP_V1);
    snprintf(rel, sizeof rel, "locks/%s.lock", me);
    assert_true(exists(dir, rel));                  /* this instance holds its own */
    for (int i = 0; i < 4; i++) {
        bool keep = i == 0;
        snprintf(rel, sizeof rel, "cpu,cpuacct/agent/%s", others[i]);
        if (exists(dir, rel) != keep)
            fail_msg("%s: expected %s", rel, keep ? "kept" : "removed");
        snprintf(rel, sizeof rel, "memory/agent/%s", others[i]);
        if (exists(dir, rel) != keep)
            fail_msg("%s: expected %s", rel, keep ? "kept" : "removed");
    }
    snprintf(rel, sizeof rel, "locks/%s.lock", others[1]);
    assert_false(exists(dir, rel));                 /* the dead one's lock file went too */
    snprintf(rel, sizeof rel, "locks/%s.lock", others[0]);
    assert_true(exists(dir, rel));
    reap(live);

    /* the node cgroup gone and impossible to make again (its parent went too): a job start
     * fails with an error that says so (the scheduler bans a node after
     * max_consecutive_job_aborts of those) */
    snprintf(rel, sizeof rel, "%s/cpu,cpuacct", dir);
    assert_int_equal(ps_sandbox_remove(rel, NULL), 0);
    struct ps_cgroup_job *j = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_create(sys, "j1", &j, &err), PS_EIO);
    printf("job start: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "poolsched-n1-eeeeeeeeeeeeeeee is gone and making it "
                                    "again failed: mkdir("));
    assert_non_null(strstr(err.msg, "No such file or directory"));
    ps_cgroup_system_free(sys);
    snprintf(rel, sizeof rel, "locks/%s.lock", me);
    assert_false(exists(dir, rel));                 /* gone with the instance */
    test_remove_dir(dir);
}

/* This machine's cgroups: agent A idle (no job, so nothing in its node cgroup), agent B with
 * the same node id starts: A's node cgroup stays and A's next job starts. Then the node cgroup
 * vanishes under A (an admin's rmdir): A's next job makes it again. */
static void test_real_idle_instance_keeps_cgroups(void **state)
{
    (void)state;
    char node[64];
    snprintf(node, sizeof node, "test-lock-%d", (int)getpid());
    char *locks = test_make_dir("cglock-real");
    assert_non_null(locks);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_cgroup_config ca = {.node_id = node, .instance_id = "aaaaaaaaaaaaaaaa",
                                  .lock_dir = locks, .remove_stale_jobs = true};
    struct ps_cgroup_system *sa = NULL;
    assert_int_equal(ps_cgroup_system_new(&ca, &sa, &err), 0);
    if (ps_cgroup_system_mode(sa) == PS_CGROUP_NONE) {
        char why[2048];
        snprintf(why, sizeof why, "%s", ps_cgroup_system_summary(sa));
        ps_cgroup_system_free(sa);
        test_remove_dir(locks);
        SKIP_BY_ENVIRONMENT("%s", why);
    }
    char dirs[3][PATH_MAX];
    int ndirs = 0;
    for (const char *d; ndirs < 3 && (d = ps_cgroup_system_dir(sa, ndirs)) != NULL; ndirs++)
        snprintf(dirs[ndirs], sizeof dirs[ndirs], "%s", d);
    struct ps_cgroup_job *j = NULL;
    assert_int_equal(ps_cgroup_job_create(sa, "first", &j, &err), 0);
    assert_int_equal(ps_cgroup_job_destroy(j, &err), 0);     /* idle again */

    struct ps_cgroup_config cb = {.node_id = node, .instance_id = "bbbbbbbbbbbbbbbb",
                                  .lock_dir = locks, .remove_stale_jobs = true};
    struct ps_cgroup_system *sb = NULL;
    assert_int_equal(ps_cgroup_system_new(&cb, &sb, &err), 0);
    bool kept = true;
    for (int i = 0; i < ndirs; i++)
        kept &= access(dirs[i], F_OK) == 0;
    ps_error_init(&err);
    int rc = ps_cgroup_job_create(sa, "second", &j, &err);
    if (rc != 0)
        printf("A's next job: %s\n", err.msg);
    if (rc == 0)
        assert_int_equal(ps_cgroup_job_destroy(j, &err), 0);
    ps_cgroup_system_free(sb);

    /* the node cgroup removed under the idle agent */
    for (int i = 0; i < ndirs; i++)
        (void)rmdir(dirs[i]);
    bool removed = access(dirs[0], F_OK) != 0;
    ps_error_init(&err);
    int rc2 = ps_cgroup_job_create(sa, "third", &j, &err);
    if (rc2 != 0)
        printf("A's job after rmdir: %s\n", err.msg);
    bool remade = true;
    for (int i = 0; i < ndirs; i++)
        remade &= access(dirs[i], F_OK) == 0;
    if (rc2 == 0)
        assert_int_equal(ps_cgroup_job_destroy(j, &err), 0);
    ps_cgroup_system_free(sa);
    test_remove_dir(locks);
    assert_true(kept);          /* B's start left A's (idle) node cgroup alone */
    assert_int_equal(rc, 0);    /* and A's next job started */
    assert_true(removed);
    assert_int_equal(rc2, 0);   /* the vanished node cgroup was made again */
    assert_true(remade);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lock_check),
        cmocka_unit_test(test_sweep_spares_live_idle_instance),
        cmocka_unit_test(test_real_idle_instance_keeps_cgroups),
    };
    return cmocka_run_group_tests_name("instance locks", tests, NULL, NULL);
}
