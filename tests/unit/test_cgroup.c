#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/cgroup.h"
#include "platform/job_process.h"
#include "platform_test_util.h"

/* ---------------------------------------------------------------------------------------------
 * Pure helpers
 * ------------------------------------------------------------------------------------------- */

static void test_cpu_mappings(void **state)
{
    (void)state;
    assert_int_equal(ps_cgroup_cpu_quota_us(0.5), 50000);
    assert_int_equal(ps_cgroup_cpu_quota_us(2.0), 200000);
    assert_int_equal(ps_cgroup_cpu_quota_us(0.001), 1000);     /* the kernel's minimum */
    assert_int_equal(ps_cgroup_cpu_quota_us(0.0), -1);
    assert_int_equal(ps_cgroup_cpu_quota_us(-3.0), -1);
    assert_int_equal(ps_cgroup_cpu_quota_us(INFINITY), -1);
    assert_int_equal(ps_cgroup_cpu_quota_us(NAN), -1);
    assert_int_equal(ps_cgroup_cpu_weight_v2(1.0), 100);
    assert_int_equal(ps_cgroup_cpu_weight_v2(2.5), 250);
    assert_int_equal(ps_cgroup_cpu_weight_v2(0.004), 1);
    assert_int_equal(ps_cgroup_cpu_weight_v2(0.0), 1);
    assert_int_equal(ps_cgroup_cpu_weight_v2(500.0), 10000);
    assert_int_equal(ps_cgroup_cpu_shares_v1(1.0), 1024);
    assert_int_equal(ps_cgroup_cpu_shares_v1(0.5), 512);
    assert_int_equal(ps_cgroup_cpu_shares_v1(0.001), 2);
    assert_int_equal(ps_cgroup_cpu_shares_v1(1000.0), 262144);
}

static void test_parse_flat_files(void **state)
{
    (void)state;
    const char cpu_stat[] = "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n"
                            "nr_periods 10\nnr_throttled 4\n";
    int64_t v = 0;
    assert_int_equal(ps_cgroup_parse_key_value(cpu_stat, strlen(cpu_stat), "usage_usec", &v), 0);
    assert_int_equal(v, 1234567);
    assert_int_equal(ps_cgroup_parse_key_value(cpu_stat, strlen(cpu_stat), "nr_throttled", &v),
                     0);
    assert_int_equal(v, 4);
    assert_int_equal(ps_cgroup_parse_key_value(cpu_stat, strlen(cpu_stat), "usage", &v),
                     PS_ENOENT);
    const char bad[] = "oom_kill many\n";
    assert_int_equal(ps_cgroup_parse_key_value(bad, strlen(bad), "oom_kill", &v), PS_EINVAL);
    assert_int_equal(ps_cgroup_parse_int("max\n", 4, &v), 0);
    assert_int_equal(v, INT64_MAX);
    assert_int_equal(ps_cgroup_parse_int("-1\n", 3, &v), 0);
    assert_int_equal(v, -1);
    assert_int_equal(ps_cgroup_parse_int("12 34\n", 6, &v), PS_EINVAL);
    assert_int_equal(ps_cgroup_parse_int("", 0, &v), PS_EINVAL);
    assert_int_equal(ps_cgroup_parse_int("99999999999999999999", 20, &v), PS_EINVAL);
}

/* /proc/self/cgroup and mountinfo as this very machine shows them (hybrid: v1 controllers,
 * an empty cgroup2 at /sys/fs/cgroup/unified), plus a v2-only and a container layout. */
static const char HYBRID_CGROUP[] =
    "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/4ec9\n3:cpuset:/\n2:cpuacct:/\n"
    "1:cpu:/\n0::/\n";
static const char HYBRID_MOUNTINFO[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static void test_parse_hybrid_layout(void **state)
{
    (void)state;
    char path[256];
    size_t n = strlen(HYBRID_CGROUP);
    assert_int_equal(ps_cgroup_parse_proc_cgroup(HYBRID_CGROUP, n, "cpu", path, sizeof path), 0);
    assert_string_equal(path, "/");
    assert_int_equal(ps_cgroup_parse_proc_cgroup(HYBRID_CGROUP, n, "memory", path, sizeof path),
                     0);
    assert_string_equal(path, "/process_api/4ec9");
    assert_int_equal(ps_cgroup_parse_proc_cgroup(HYBRID_CGROUP, n, NULL, path, sizeof path), 0);
    assert_string_equal(path, "/");
    assert_int_equal(ps_cgroup_parse_proc_cgroup(HYBRID_CGROUP, n, "blkio", path, sizeof path),
                     PS_ENOENT);
    assert_int_equal(ps_cgroup_parse_proc_cgroup(HYBRID_CGROUP, n, "memory", path, 5),
                     PS_EINVAL);

    struct ps_cgroup_mount m;
    n = strlen(HYBRID_MOUNTINFO);
    assert_int_equal(ps_cgroup_parse_mountinfo(HYBRID_MOUNTINFO, n, "cpu", &m), 0);
    assert_string_equal(m.mount_point, "/sys/fs/cgroup/cpu");     /* not cpuset */
    assert_int_equal(ps_cgroup_parse_mountinfo(HYBRID_MOUNTINFO, n, NULL, &m), 0);
    assert_string_equal(m.mount_point, "/sys/fs/cgroup/unified");
    assert_string_equal(m.root, "/");
    assert_int_equal(ps_cgroup_parse_mountinfo(HYBRID_MOUNTINFO, n, "systemd", &m), PS_ENOENT);
    assert_int_equal(ps_cgroup_parse_mountinfo(HYBRID_MOUNTINFO, n, "pids", &m), PS_ENOENT);
}

static void test_parse_other_layouts(void **state)
{
    (void)state;
    /* co-mounted cpu,cpuacct with optional fields and an escaped space in the mount point */
    const char mi[] = "25 20 0:22 /docker/abc /sys/fs/cgroup/cpu\\040x rw,nosuid shared:9 "
                      "master:3 - cgroup cgroup rw,cpu,cpuacct\n"
                      "26 20 0:23 / /sys/fs/cgroup rw shared:1 - cgroup2 cgroup2 rw,nsdelegate\n";
    struct ps_cgroup_mount m;
    assert_int_equal(ps_cgroup_parse_mountinfo(mi, strlen(mi), "cpuacct", &m), 0);
    assert_string_equal(m.mount_point, "/sys/fs/cgroup/cpu x");
    assert_string_equal(m.root, "/docker/abc");
    assert_int_equal(ps_cgroup_parse_mountinfo(mi, strlen(mi), NULL, &m), 0);
    assert_string_equal(m.mount_point, "/sys/fs/cgroup");
    const char cg[] = "2:cpu,cpuacct:/docker/abc\n0::/user.slice/session-1.scope\n";
    char path[256];
    assert_int_equal(ps_cgroup_parse_proc_cgroup(cg, strlen(cg), "cpu", path, sizeof path), 0);
    assert_string_equal(path, "/docker/abc");
    assert_int_equal(ps_cgroup_parse_proc_cgroup(cg, strlen(cg), NULL, path, sizeof path), 0);
    assert_string_equal(path, "/user.slice/session-1.scope");
    /* truncated lines never match and never read past len */
    assert_int_equal(ps_cgroup_parse_mountinfo(mi, 40, "cpu", &m), PS_ENOENT);
}

/* ---------------------------------------------------------------------------------------------
 * Detection and file formats against fake trees (plain files standing in for cgroupfs)
 * ------------------------------------------------------------------------------------------- */

static void put_file(const char *root, const char *rel, const char *content)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    /* mkdir -p of the parent */
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static void read_back(const char *root, const char *rel, char *buf, size_t size)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
}

/* A fake proc root whose mountinfo points into dir. */
static void fake_proc(const char *dir, const char *mountinfo_fmt, const char *self_cgroup)
{
    char mi[4096];
    snprintf(mi, sizeof mi, mountinfo_fmt, dir, dir, dir);
    put_file(dir, "proc/self/mountinfo", mi);
    put_file(dir, "proc/self/cgroup", self_cgroup);
}

static void test_config_errors_and_disable(void **state)
{
    (void)state;
    struct ps_cgroup_system *sys = NULL;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_cgroup_config cfg = {.node_id = "../evil"};
    assert_int_equal(ps_cgroup_system_new(&cfg, &sys, &err), PS_EINVAL);
    assert_null(sys);
    assert_non_null(strstr(err.msg, "node id \"../evil\""));
    cfg.node_id = "n1";
    cfg.disable = true;
    assert_int_equal(ps_cgroup_system_new(&cfg, &sys, NULL), 0);
    assert_int_equal(ps_cgroup_system_mode(sys), PS_CGROUP_NONE);
    assert_non_null(strstr(ps_cgroup_system_summary(sys), "disabled by configuration"));
    struct ps_cgroup_job *job = NULL;
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_create(sys, "j1", &job, &err), PS_ESTATE);
    ps_cgroup_system_free(sys);
    ps_cgroup_system_free(NULL);
}

/* No mounts that can be written: mode NONE and a reason per hierarchy. */
static void test_fake_unusable_says_why(void **state)
{
    (void)state;
    char *dir = test_make_dir("cg-none");
    assert_non_null(dir);
    fake_proc(dir,
              "32 31 0:29 / %s/cpu rw - cgroup cgroup rw,cpu\n"
              "35 31 0:32 / %s/memory rw - cgroup cgroup rw,memory\n"
              "41 31 0:38 / %s/unified rw - cgroup2 cgroup2 rw\n",
              "4:memory:/\n1:cpu:/\n0::/\n");
    put_file(dir, "unified/cgroup.controllers", "\n");
    put_file(dir, "cpu/tasks", "");
    put_file(dir, "memory/tasks", "");
    char proc[PATH_MAX];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    struct ps_cgroup_config cfg = {.node_id = "n1", .proc_root = proc};
    struct ps_cgroup_system *sys = NULL;
    assert_int_equal(ps_cgroup_system_new(&cfg, &sys, NULL), 0);
    const char *s = ps_cgroup_system_summary(sys);
    printf("summary: %s\n", s);
    assert_int_equal(ps_cgroup_system_mode(sys), PS_CGROUP_NONE);
    assert_non_null(strstr(s, "no usable cgroups"));
    assert_non_null(strstr(s, "offers neither cpu nor memory"));
    assert_non_null(strstr(s, "cpu.cfs_quota_us failed: No such file"));
    assert_non_null(strstr(s, "cpuacct: not mounted"));
    ps_cgroup_system_free(sys);
    test_remove_dir(dir);
}

/* A delegated v2 tree: detection enables controllers and the job files get v2 formats. */
static void test_fake_v2_formats(void **state)
{
    (void)state;
    char *dir = test_make_dir("cg-v2");
    assert_non_null(dir);
    fake_proc(dir, "26 20 0:23 / %s/cg rw - cgroup2 cgroup2 rw\n", "0::/agent.scope\n");
    put_file(dir, "cg/agent.scope/cgroup.controllers", "cpuset cpu io memory pids\n");
    put_file(dir, "cg/agent.scope/cgroup.subtree_control", "");
    put_file(dir, "cg/agent.scope/poolsched-n1/cgroup.subtree_control", "");
    const char *job = "cg/agent.scope/poolsched-n1/job-j1/";
    const char *files[] = {"cgroup.procs", "cpu.max", "cpu.weight", "memory.max",
                           "memory.oom.group", "cgroup.kill"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "%s%s", job, files[i]);
        put_file(dir, rel, "");
    }
    char rel[256];
    snprintf(rel, sizeof rel, "%scpu.stat", job);
    put_file(dir, rel, "usage_usec 2500000\nuser_usec 2000000\nnr_throttled 7\n");
    snprintf(rel, sizeof rel, "%smemory.current", job);
    put_file(dir, rel, "104857600\n");
    snprintf(rel, sizeof rel, "%smemory.peak", job);
    put_file(dir, rel, "209715200\n");
    snprintf(rel, sizeof rel, "%smemory.events", job);
    put_file(dir, rel, "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n");

    char proc[PATH_MAX];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    struct ps_cgroup_config cfg = {.node_id = "n1", .proc_root = proc};
    struct ps_cgroup_system *sys = NULL;
    assert_int_equal(ps_cgroup_system_new(&cfg, &sys, NULL), 0);
    printf("summary: %s\n", ps_cgroup_system_summary(sys));
    assert_int_equal(ps_cgroup_system_mode(sys), PS_CGROUP_V2);
    struct ps_cgroup_caps caps = ps_cgroup_system_caps(sys);
    assert_true(caps.cpu_limit && caps.cpu_weight && caps.cpu_usage && caps.memory);
    char buf[256];
    read_back(dir, "cg/agent.scope/cgroup.subtree_control", buf, sizeof buf);
    assert_string_equal(buf, "+cpu +memory");
    read_back(dir, "cg/agent.scope/poolsched-n1/cgroup.subtree_control", buf, sizeof buf);
    assert_string_equal(buf, "+cpu +memory");

    struct ps_cgroup_job *j = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_create(sys, "j1", &j, &err), 0);
    snprintf(rel, sizeof rel, "%smemory.oom.group", job);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "1");
    assert_int_equal(ps_cgroup_job_attach(j, 4321, &err), 0);
    snprintf(rel, sizeof rel, "%scgroup.procs", job);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "4321");
    put_file(dir, rel, "");     /* a fake cgroup never empties itself */

    assert_int_equal(ps_cgroup_job_set_cpu_limit(j, 0.5, &err), 0);
    snprintf(rel, sizeof rel, "%scpu.max", job);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "50000 100000");
    assert_int_equal(ps_cgroup_job_set_cpu_limit(j, 0, &err), 0);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "max 100000");
    assert_int_equal(ps_cgroup_job_set_cpu_guarantee(j, 2.5, &err), 0);
    snprintf(rel, sizeof rel, "%scpu.weight", job);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "250");
    assert_int_equal(ps_cgroup_job_set_cpu_guarantee(j, -1, &err), PS_EINVAL);
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_set_memory_limit(j, 100 << 20, &err), 0);
    snprintf(rel, sizeof rel, "%smemory.max", job);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "104857600");
    assert_int_equal(ps_cgroup_job_set_memory_limit(j, 0, &err), 0);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "max");

    struct ps_cgroup_usage u;
    assert_int_equal(ps_cgroup_job_read(j, &u, &err), 0);
    assert_int_equal(u.cpu_usec, 2500000);
    assert_int_equal(u.memory_bytes, 104857600);
    assert_int_equal(u.memory_peak_bytes, 209715200);
    assert_int_equal(u.oom_kills, 1);
    assert_int_equal(u.limit_hits, 12);
    assert_int_equal(u.cpu_throttled_periods, 7);
    assert_int_equal(ps_cgroup_job_process_count(j, &err), 0);
    assert_int_equal(ps_cgroup_job_kill(j, 100, &err), 0);
    /* Files in a fake job dir keep rmdir from succeeding; the error names the call. */
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_destroy(j, &err), PS_EIO);
    assert_non_null(strstr(err.msg, "rmdir("));
    ps_cgroup_system_free(sys);
    test_remove_dir(dir);
}

/* v2 set-up that fails half-way is undone: the directory it created is gone, and the summary
 * names the step. */
static void test_fake_v2_failure_is_undone(void **state)
{
    (void)state;
    char *dir = test_make_dir("cg-v2-fail");
    assert_non_null(dir);
    fake_proc(dir, "26 20 0:23 / %s/cg rw - cgroup2 cgroup2 rw\n", "0::/agent.scope\n");
    put_file(dir, "cg/agent.scope/cgroup.controllers", "cpu memory\n");
    put_file(dir, "cg/agent.scope/cgroup.subtree_control", "");
    char proc[PATH_MAX], parent[PATH_MAX];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    snprintf(parent, sizeof parent, "%s/cg/agent.scope/poolsched-n1", dir);
    struct ps_cgroup_config cfg = {.node_id = "n1", .proc_root = proc};
    struct ps_cgroup_system *sys = NULL;
    assert_int_equal(ps_cgroup_system_new(&cfg, &sys, NULL), 0);
    const char *s = ps_cgroup_system_summary(sys);
    printf("summary: %s\n", s);
    assert_int_equal(ps_cgroup_system_mode(sys), PS_CGROUP_NONE);
    assert_non_null(strstr(s, "poolsched-n1/cgroup.subtree_control failed"));
    assert_int_equal(access(parent, F_OK), -1);
    ps_cgroup_system_free(sys);
    test_remove_dir(dir);
}

/* A v1 tree with cpu and cpuacct co-mounted and memory elsewhere: v1 file formats. */
static void test_fake_v1_formats(void **state)
{
    (void)state;
    char *dir = test_make_dir("cg-v1");
    assert_non_null(dir);
    fake_proc(dir,
              "32 31 0:29 / %s/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
              "35 31 0:32 /outer %s/memory rw - cgroup cgroup rw,memory\n"
              "41 31 0:38 / %s/unified rw - cgroup2 cgroup2 rw\n",
              "4:memory:/outer/agent\n2:cpu,cpuacct:/agent\n0::/\n");
    put_file(dir, "unified/cgroup.controllers", "");
    put_file(dir, "cpu,cpuacct/agent/poolsched-n1/cpu.cfs_quota_us", "");
    put_file(dir, "cpu,cpuacct/agent/poolsched-n1/cpuacct.usage", "");
    put_file(dir, "memory/agent/poolsched-n1/memory.limit_in_bytes", "");
    const char *cj = "cpu,cpuacct/agent/poolsched-n1/job-j1/";
    const char *mj = "memory/agent/poolsched-n1/job-j1/";
    const char *cfiles[] = {"cgroup.procs", "cpu.cfs_quota_us", "cpu.cfs_period_us",
                            "cpu.shares"};
    char rel[256];
    for (size_t i = 0; i < sizeof cfiles / sizeof cfiles[0]; i++) {
        snprintf(rel, sizeof rel, "%s%s", cj, cfiles[i]);
        put_file(dir, rel, "");
    }
    snprintf(rel, sizeof rel, "%scpu.stat", cj);
    put_file(dir, rel, "nr_periods 20\nnr_throttled 3\nthrottled_time 5\n");
    snprintf(rel, sizeof rel, "%scpuacct.usage", cj);
    put_file(dir, rel, "1500000000\n");
    snprintf(rel, sizeof rel, "%scgroup.procs", mj);
    put_file(dir, rel, "");
    snprintf(rel, sizeof rel, "%smemory.limit_in_bytes", mj);
    put_file(dir, rel, "");
    snprintf(rel, sizeof rel, "%smemory.usage_in_bytes", mj);
    put_file(dir, rel, "5000\n");
    snprintf(rel, sizeof rel, "%smemory.max_usage_in_bytes", mj);
    put_file(dir, rel, "9000\n");
    snprintf(rel, sizeof rel, "%smemory.failcnt", mj);
    put_file(dir, rel, "2\n");
    snprintf(rel, sizeof rel, "%smemory.oom_control", mj);
    put_file(dir, rel, "oom_kill_disable 0\nunder_oom 0\n");   /* a kernel before 4.13 */

    char proc[PATH_MAX];
    snprintf(proc, sizeof proc, "%s/proc", dir);
    struct ps_cgroup_config cfg = {.node_id = "n1", .proc_root = proc};
    struct ps_cgroup_system *sys = NULL;
    assert_int_equal(ps_cgroup_system_new(&cfg, &sys, NULL), 0);
    const char *s = ps_cgroup_system_summary(sys);
    printf("summary: %s\n", s);
    assert_int_equal(ps_cgroup_system_mode(sys), PS_CGROUP_V1);
    assert_non_null(strstr(s, "v2 not used"));
    struct ps_cgroup_caps caps = ps_cgroup_system_caps(sys);
    assert_true(caps.cpu_limit && caps.cpu_weight && caps.cpu_usage && caps.memory);

    struct ps_cgroup_job *j = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_create(sys, "j1", &j, &err), 0);
    char buf[256];
    assert_int_equal(ps_cgroup_job_attach(j, 777, &err), 0);
    snprintf(rel, sizeof rel, "%scgroup.procs", cj);      /* once, though two controllers */
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "777");
    put_file(dir, rel, "");
    snprintf(rel, sizeof rel, "%scgroup.procs", mj);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "777");
    put_file(dir, rel, "");
    assert_int_equal(ps_cgroup_job_set_cpu_limit(j, 1.5, &err), 0);
    snprintf(rel, sizeof rel, "%scpu.cfs_quota_us", cj);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "150000");
    snprintf(rel, sizeof rel, "%scpu.cfs_period_us", cj);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "100000");
    assert_int_equal(ps_cgroup_job_set_cpu_limit(j, -1, &err), 0);
    snprintf(rel, sizeof rel, "%scpu.cfs_quota_us", cj);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "-1");
    assert_int_equal(ps_cgroup_job_set_cpu_guarantee(j, 1.5, &err), 0);
    snprintf(rel, sizeof rel, "%scpu.shares", cj);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "1536");
    assert_int_equal(ps_cgroup_job_set_memory_limit(j, 50000000, &err), 0);
    snprintf(rel, sizeof rel, "%smemory.limit_in_bytes", mj);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "50000000");
    assert_int_equal(ps_cgroup_job_set_memory_limit(j, -5, &err), 0);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "-1");

    /* A value already written is not written again (the CPU monitor sets the guarantee every
     * adjustment period): a file changed behind the agent's back shows whether it was. */
    put_file(dir, rel, "untouched");
    assert_int_equal(ps_cgroup_job_set_memory_limit(j, 0, &err), 0);       /* still -1 */
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "untouched");
    assert_int_equal(ps_cgroup_job_set_memory_limit(j, 4096, &err), 0);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "4096");
    snprintf(rel, sizeof rel, "%scpu.shares", cj);
    put_file(dir, rel, "untouched");
    assert_int_equal(ps_cgroup_job_set_cpu_guarantee(j, 1.5, &err), 0);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "untouched");
    assert_int_equal(ps_cgroup_job_set_cpu_guarantee(j, 2, &err), 0);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "2048");
    snprintf(rel, sizeof rel, "%scpu.cfs_quota_us", cj);
    put_file(dir, rel, "untouched");
    assert_int_equal(ps_cgroup_job_set_cpu_limit(j, -1, &err), 0);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "untouched");
    assert_int_equal(ps_cgroup_job_set_cpu_limit(j, 0.5, &err), 0);
    read_back(dir, rel, buf, sizeof buf);
    assert_string_equal(buf, "50000");

    struct ps_cgroup_usage u;
    assert_int_equal(ps_cgroup_job_read(j, &u, &err), 0);
    assert_int_equal(u.cpu_usec, 1500000);
    assert_int_equal(u.memory_bytes, 5000);
    assert_int_equal(u.memory_peak_bytes, 9000);
    assert_int_equal(u.oom_kills, -1);      /* unknown on that kernel */
    assert_int_equal(u.limit_hits, 2);
    assert_int_equal(u.cpu_throttled_periods, 3);
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_destroy(j, &err), PS_EIO);
    ps_cgroup_system_free(sys);
    test_remove_dir(dir);
}

/* ---------------------------------------------------------------------------------------------
 * This machine's cgroups
 * ------------------------------------------------------------------------------------------- */

struct real {
    struct ps_cgroup_system *sys;
    char node_id[64];
};

static int real_setup(void **state)
{
    static struct real r;
    snprintf(r.node_id, sizeof r.node_id, "test-cgroup-%d", (int)getpid());
    struct ps_cgroup_config cfg = {.node_id = r.node_id, .remove_stale_jobs = true};
    if (ps_cgroup_system_new(&cfg, &r.sys, NULL) != 0)
        return -1;
    printf("this machine: %s\n", ps_cgroup_system_summary(r.sys));
    *state = &r;
    return 0;
}

static int real_teardown(void **state)
{
    struct real *r = *state;
    ps_cgroup_system_free(r->sys);
    return 0;
}

/* Spawns sh -c cmd inside job (through the attach hook, before it runs). */
static int spawn_in(struct ps_cgroup_job *job, const char *cmd, struct ps_job_process *p)
{
    static char *envp[] = {(char *)"PATH=/usr/bin:/bin", NULL};
    struct ps_job_process_spec spec = {
        .command = cmd, .cwd = "/", .envp = envp, .stdout_fd = -1, .stderr_fd = -1,
        .attach = (ps_job_process_attach_fn)ps_cgroup_job_attach, .attach_ctx = job,
    };
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_job_process_spawn(&spec, p, &err);
    if (rc != 0)
        printf("spawn failed: %s\n", err.msg);
    return rc;
}

static void test_real_job_lifecycle(void **state)
{
    struct real *r = *state;
    if (ps_cgroup_system_mode(r->sys) == PS_CGROUP_NONE)
        SKIP_BY_ENVIRONMENT("%s", ps_cgroup_system_summary(r->sys));
    struct ps_cgroup_job *job = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_create(r->sys, "life", &job, &err), 0);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", ps_cgroup_job_path(job));
    struct ps_job_process p;
    assert_int_equal(spawn_in(job, "sleep 100 & sleep 100 & wait", &p), 0);
    /* children are born inside: the shell and both sleeps */
    int count = 0;
    for (int i = 0; i < 2000 && count < 3; i++) {
        test_sleep_ms(5);
        count = ps_cgroup_job_process_count(job, &err);
    }
    /* The shell leaves the process group alone: kill through the cgroup only. */
    int kill_rc = ps_cgroup_job_kill(job, 2000, &err);
    int after = ps_cgroup_job_process_count(job, &err);
    bool exited = false;
    ps_job_process_wait(&p, 2000, &exited, NULL);
    ps_job_process_release(&p);
    assert_int_equal(count, 3);
    assert_int_equal(kill_rc, 0);
    assert_int_equal(after, 0);
    assert_true(exited);
    assert_int_equal(ps_job_process_term_signal(&p), SIGKILL);
    assert_int_equal(ps_cgroup_job_destroy(job, &err), 0);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(errno, ENOENT);
}

/* A fixed amount of work (not wall time: the machine is shared) is accounted by the cgroup
 * as the kernel's own rusage of the shell says. */
static void test_real_cpu_accounting(void **state)
{
    struct real *r = *state;
    if (!ps_cgroup_system_caps(r->sys).cpu_usage)
        SKIP_BY_ENVIRONMENT("no cgroup CPU accounting: %s", ps_cgroup_system_summary(r->sys));
    struct ps_cgroup_job *job = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_create(r->sys, "acct", &job, &err), 0);
    struct ps_job_process p;
    assert_int_equal(spawn_in(job, "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done", &p), 0);
    bool exited = false;
    ps_job_process_wait(&p, 15000, &exited, NULL);
    ps_job_process_release(&p);
    struct ps_cgroup_usage u;
    int rc = ps_cgroup_job_read(job, &u, &err);
    double ru = ps_job_process_rusage_cpu_seconds(&p);
    printf("cgroup CPU %.3f s, rusage CPU %.3f s\n", (double)u.cpu_usec / 1e6, ru);
    assert_int_equal(ps_cgroup_job_destroy(job, &err), 0);
    assert_int_equal(rc, 0);
    assert_true(exited);
    assert_true(ru > 0.1);
    assert_true(fabs((double)u.cpu_usec / 1e6 - ru) < 0.05 + 0.1 * ru);
}

/* cpu limit 0.5 core on two busy loops: the job gets at most about half a core of wall time
 * (generous bound: 0.7), and the kernel's nr_throttled proves the quota ran out. On a machine
 * so busy that the job never reaches half a core the quota cannot bite: after three tries of
 * one second that is reported as an environment skip, the upper bound still checked. */
static void test_real_cpu_limit_enforced(void **state)
{
    struct real *r = *state;
    if (!ps_cgroup_system_caps(r->sys).cpu_limit)
        SKIP_BY_ENVIRONMENT("no cgroup CPU limits: %s", ps_cgroup_system_summary(r->sys));
    double cores = 0;
    for (int attempt = 1; attempt <= 3; attempt++) {
        struct ps_cgroup_job *job = NULL;
        struct ps_error err;
        ps_error_init(&err);
        assert_int_equal(ps_cgroup_job_create(r->sys, "limit", &job, &err), 0);
        assert_int_equal(ps_cgroup_job_set_cpu_limit(job, 0.5, &err), 0);
        struct ps_job_process p;
        int64_t start = test_now_ms();
        assert_int_equal(spawn_in(job, "while :; do :; done & while :; do :; done", &p), 0);
        test_sleep_ms(1000);
        struct ps_cgroup_usage u;
        int rc = ps_cgroup_job_read(job, &u, &err);
        int64_t wall = test_now_ms() - start;
        ps_cgroup_job_kill(job, 2000, NULL);
        ps_job_process_release(&p);
        assert_int_equal(ps_cgroup_job_destroy(job, &err), 0);
        assert_int_equal(rc, 0);
        cores = (double)u.cpu_usec / 1e3 / (double)wall;
        printf("cpu limit 0.5, try %d: used %.3f CPU s in %lld ms wall = %.2f cores, throttled "
               "in %lld periods\n", attempt, (double)u.cpu_usec / 1e6, (long long)wall, cores,
               (long long)u.cpu_throttled_periods);
        assert_true(cores <= 0.7);
        assert_true(cores > 0.01);
        if (u.cpu_throttled_periods > 0)
            return;
    }
    SKIP_BY_ENVIRONMENT("the machine is too busy for two busy loops to reach 0.5 core (got "
                        "%.2f), so the quota never ran out and throttling was not observed",
                        cores);
}

static void test_real_memory_peak_and_limit(void **state)
{
    struct real *r = *state;
    if (!ps_cgroup_system_caps(r->sys).memory)
        SKIP_BY_ENVIRONMENT("no memory cgroup: %s", ps_cgroup_system_summary(r->sys));
    struct ps_error err;
    ps_error_init(&err);
    /* No limit: tail buffers 100 MB of newline-free input; the peak shows it. */
    struct ps_cgroup_job *job = NULL;
    assert_int_equal(ps_cgroup_job_create(r->sys, "peak", &job, &err), 0);
    struct ps_job_process p;
    assert_int_equal(spawn_in(job, "head -c 100000000 /dev/zero | tail > /dev/null", &p), 0);
    bool exited = false;
    ps_job_process_wait(&p, 15000, &exited, NULL);
    ps_job_process_release(&p);
    struct ps_cgroup_usage u;
    int rc = ps_cgroup_job_read(job, &u, &err);
    printf("100 MB job: cgroup peak %lld bytes, ru_maxrss %lld bytes, oom_kills %lld\n",
           (long long)u.memory_peak_bytes, (long long)ps_job_process_rusage_maxrss_bytes(&p),
           (long long)u.oom_kills);
    assert_int_equal(ps_cgroup_job_destroy(job, &err), 0);
    assert_int_equal(rc, 0);
    assert_true(exited);
    assert_int_equal(ps_job_process_exit_code(&p), 0);
    assert_true(u.memory_peak_bytes >= 90000000);
    assert_true(u.oom_kills <= 0);

    /* A 50 MB limit: the kernel kills inside the job and says so. */
    assert_int_equal(ps_cgroup_job_create(r->sys, "oom", &job, &err), 0);
    assert_int_equal(ps_cgroup_job_set_memory_limit(job, 50000000, &err), 0);
    assert_int_equal(spawn_in(job, "head -c 100000000 /dev/zero | tail > /dev/null", &p), 0);
    ps_job_process_wait(&p, 15000, &exited, NULL);
    ps_job_process_release(&p);
    rc = ps_cgroup_job_read(job, &u, &err);
    printf("50 MB limit: exit code %d, peak %lld, oom_kills %lld, limit hits %lld\n",
           ps_job_process_exit_code(&p), (long long)u.memory_peak_bytes,
           (long long)u.oom_kills, (long long)u.limit_hits);
    assert_int_equal(ps_cgroup_job_destroy(job, &err), 0);
    assert_int_equal(rc, 0);
    assert_true(exited);
    assert_true(ps_job_process_exit_code(&p) != 0);
    assert_true(u.memory_peak_bytes <= 50000000 + 4096);
    assert_true(u.oom_kills > 0 || (u.oom_kills < 0 && u.limit_hits > 0));
}

static void test_real_guarantee_written(void **state)
{
    struct real *r = *state;
    if (!ps_cgroup_system_caps(r->sys).cpu_weight)
        SKIP_BY_ENVIRONMENT("no cgroup CPU weights: %s", ps_cgroup_system_summary(r->sys));
    struct ps_cgroup_job *job = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_job_create(r->sys, "weight", &job, &err), 0);
    int rc = ps_cgroup_job_set_cpu_guarantee(job, 1.5, &err);
    char path[PATH_MAX];
    bool v2 = ps_cgroup_system_mode(r->sys) == PS_CGROUP_V2;
    snprintf(path, sizeof path, "%s/%s", ps_cgroup_job_path(job), v2 ? "cpu.weight" : "cpu.shares");
    bool ok = test_file_contains(path, v2 ? "150" : "1536");
    assert_int_equal(ps_cgroup_job_destroy(job, &err), 0);
    assert_int_equal(rc, 0);
    assert_true(ok);
}

/* job_pool_size (v1): an emptied job cgroup is reused under the next job's name, reset: no CPU
 * time, peak, OOM kill or limit hit of the previous job shows, and its memory limit is gone. */
static void test_real_pool_reuse(void **state)
{
    struct real *r = *state;
    if (ps_cgroup_system_mode(r->sys) != PS_CGROUP_V1 || !ps_cgroup_system_caps(r->sys).memory ||
        !ps_cgroup_system_caps(r->sys).cpu_usage)
        SKIP_BY_ENVIRONMENT("the pool is for v1 with memory and cpuacct: %s",
                            ps_cgroup_system_summary(r->sys));
    char node[80];
    snprintf(node, sizeof node, "%s-pool", r->node_id);
    struct ps_cgroup_config cfg = {.node_id = node, .remove_stale_jobs = true,
                                   .job_pool_size = 2};
    struct ps_cgroup_system *sys = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_cgroup_system_new(&cfg, &sys, &err), 0);
    struct ps_cgroup_job *job = NULL;
    assert_int_equal(ps_cgroup_job_create(sys, "first", &job, &err), 0);
    char first[PATH_MAX], second[PATH_MAX];
    snprintf(first, sizeof first, "%s", ps_cgroup_job_path(job));
    assert_int_equal(ps_cgroup_job_set_memory_limit(job, 50000000, &err), 0);
    struct ps_job_process p;
    assert_int_equal(spawn_in(job, "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; "
                                   "head -c 100000000 /dev/zero | tail > /dev/null", &p), 0);
    bool exited = false;
    ps_job_process_wait(&p, 15000, &exited, NULL);
    ps_job_process_release(&p);
    struct ps_cgroup_usage u;
    assert_int_equal(ps_cgroup_job_read(job, &u, &err), 0);
    printf("first: cpu %lld us, peak %lld, oom_kills %lld, limit hits %lld\n",
           (long long)u.cpu_usec, (long long)u.memory_peak_bytes, (long long)u.oom_kills,
           (long long)u.limit_hits);
    assert_true(u.oom_kills > 0);
    assert_true(u.cpu_usec > 20000);
    assert_int_equal(ps_cgroup_job_destroy(job, &err), 0);

    assert_int_equal(ps_cgroup_job_create(sys, "second", &job, &err), 0);
    snprintf(second, sizeof second, "%s", ps_cgroup_job_path(job));
    printf("reused: %s -> %s\n", first, second);
    assert_non_null(strstr(second, "/job-second"));
    assert_int_equal(access(first, F_OK), -1);
    assert_int_equal(access(second, F_OK), 0);
    assert_int_equal(ps_cgroup_job_read(job, &u, &err), 0);
    printf("second before running: cpu %lld us, usage %lld, peak %lld, oom_kills %lld, "
           "limit hits %lld\n", (long long)u.cpu_usec, (long long)u.memory_bytes,
           (long long)u.memory_peak_bytes, (long long)u.oom_kills, (long long)u.limit_hits);
    assert_true(u.cpu_usec < 1000);
    assert_true(u.memory_peak_bytes < 1000000);
    assert_int_equal(u.oom_kills, 0);
    assert_int_equal(u.limit_hits, 0);
    /* no limit left: 100 MB fits */
    assert_int_equal(spawn_in(job, "head -c 100000000 /dev/zero | tail > /dev/null", &p), 0);
    ps_job_process_wait(&p, 15000, &exited, NULL);
    ps_job_process_release(&p);
    assert_int_equal(ps_cgroup_job_read(job, &u, &err), 0);
    printf("second: exit %d, peak %lld, oom_kills %lld\n", ps_job_process_exit_code(&p),
           (long long)u.memory_peak_bytes, (long long)u.oom_kills);
    assert_int_equal(ps_job_process_exit_code(&p), 0);
    assert_true(u.memory_peak_bytes >= 90000000);
    assert_int_equal(u.oom_kills, 0);
    assert_int_equal(ps_cgroup_job_destroy(job, &err), 0);
    /* the pooled cgroup and the node's dirs go at system_free */
    ps_cgroup_system_free(sys);
    assert_int_equal(access(second, F_OK), -1);
}

/* Two instances with one node id (docs/faults.md): each has its own node cgroup, the second's
 * start leaves the first one's running job alone, and removes an earlier instance's cgroup
 * that holds no process. */
static void test_real_instances_do_not_collide(void **state)
{
    struct real *r = *state;
    if (ps_cgroup_system_mode(r->sys) == PS_CGROUP_NONE)
        SKIP_BY_ENVIRONMENT("%s", ps_cgroup_system_summary(r->sys));
    char node[64];
    snprintf(node, sizeof node, "test-inst-%d", (int)getpid());
    struct ps_error err;
    ps_error_init(&err);
    /* an earlier instance that left an empty cgroup with an empty job cgroup: it "crashes" in
     * a child (exits without cleaning up), which frees its instance lock as kill -9 does */
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct ps_cgroup_config c0 = {.node_id = node, .instance_id = "cccccccccccccccc"};
        struct ps_cgroup_system *s0 = NULL;
        struct ps_cgroup_job *j0 = NULL;
        if (ps_cgroup_system_new(&c0, &s0, NULL) != 0 ||
            ps_cgroup_job_create(s0, "left", &j0, NULL) != 0)
            _exit(1);
        const char *d0 = ps_cgroup_system_dir(s0, 0);
        _exit(write(pipefd[1], d0, strlen(d0) + 1) > 0 ? 0 : 1);
    }
    close(pipefd[1]);
    char dir0[PATH_MAX] = "";
    ssize_t got = read(pipefd[0], dir0, sizeof dir0 - 1);
    close(pipefd[0]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);

    struct ps_cgroup_config ca = {.node_id = node, .instance_id = "aaaaaaaaaaaaaaaa",
                                  .remove_stale_jobs = true};
    struct ps_cgroup_system *sa = NULL;
    assert_int_equal(ps_cgroup_system_new(&ca, &sa, &err), 0);
    assert_non_null(strstr(ps_cgroup_system_dir(sa, 0), "-aaaaaaaaaaaaaaaa"));
    struct stat st;
    assert_int_not_equal(stat(dir0, &st), 0);       /* the empty leftover is gone */
    struct ps_cgroup_job *ja = NULL;
    assert_int_equal(ps_cgroup_job_create(sa, "busy", &ja, &err), 0);
    struct ps_job_process p;
    assert_int_equal(spawn_in(ja, "sleep 100; true", &p), 0);
    int before = 0;
    for (int i = 0; i < 400 && before < 2; i++) {
        test_sleep_ms(5);
        before = ps_cgroup_job_process_count(ja, &err);   /* the shell and its sleep */
    }

    struct ps_cgroup_config cb = {.node_id = node, .instance_id = "bbbbbbbbbbbbbbbb",
                                  .remove_stale_jobs = true};
    struct ps_cgroup_system *sb = NULL;
    assert_int_equal(ps_cgroup_system_new(&cb, &sb, &err), 0);
    assert_string_not_equal(ps_cgroup_system_dir(sa, 0), ps_cgroup_system_dir(sb, 0));
    bool exited = false;
    ps_job_process_wait(&p, 200, &exited, NULL);
    int count = ps_cgroup_job_process_count(ja, &err);
    ps_cgroup_system_free(sb);
    ps_job_process_release(&p);
    ps_cgroup_job_destroy(ja, NULL);
    ps_cgroup_system_free(sa);
    assert_false(exited);           /* the other instance's start did not kill it */
    assert_int_equal(before, 2);
    assert_int_equal(count, 2);
}

int main(void)
{
    const struct CMUnitTest pure[] = {
        cmocka_unit_test(test_cpu_mappings),
        cmocka_unit_test(test_parse_flat_files),
        cmocka_unit_test(test_parse_hybrid_layout),
        cmocka_unit_test(test_parse_other_layouts),
        cmocka_unit_test(test_config_errors_and_disable),
        cmocka_unit_test(test_fake_unusable_says_why),
        cmocka_unit_test(test_fake_v2_formats),
        cmocka_unit_test(test_fake_v2_failure_is_undone),
        cmocka_unit_test(test_fake_v1_formats),
    };
    const struct CMUnitTest real[] = {
        cmocka_unit_test(test_real_job_lifecycle),
        cmocka_unit_test(test_real_cpu_accounting),
        cmocka_unit_test(test_real_cpu_limit_enforced),
        cmocka_unit_test(test_real_memory_peak_and_limit),
        cmocka_unit_test(test_real_guarantee_written),
        cmocka_unit_test(test_real_pool_reuse),
        cmocka_unit_test(test_real_instances_do_not_collide),
    };
    int failed = cmocka_run_group_tests_name("cgroup logic", pure, NULL, NULL);
    failed += cmocka_run_group_tests_name("cgroups of this machine", real, real_setup,
                                          real_teardown);
    return failed;
}
