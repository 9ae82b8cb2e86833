/* cgroup.c — detection of cgroups and the job cgroups of cgroup.h. */
#include "platform/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/node_id.h"
#include "platform/instance_lock.h"
#include "platform/procfs.h"
#include "platform/cgroup_impl.h"

static const char *const hier_name[H_COUNT] = {"cpu", "cpuacct", "memory"};

/* ---------------------------------------------------------------------------------------------
 * Reading a job's files (the other helpers: cgroup_util.c)
 * ------------------------------------------------------------------------------------------- */

/* read_file on a file of the job, through its kept descriptor. */
static int job_read_file(struct ps_cgroup_job *job, const char *dir, const char *name, char *buf,
                         size_t size, size_t *len, struct ps_error *err)
{
    struct read_fd *r = NULL;
    for (int i = 0; i < job->rfd_count && !r; i++)
        if (job->rfd[i].dir == dir && strcmp(job->rfd[i].name, name) == 0)
            r = &job->rfd[i];
    if (!r) {
        char path[PATH_MAX];
        int fd = -1;
        if (job->rfd_count < (int)(sizeof job->rfd / sizeof job->rfd[0]) &&
            ps_cg_path_join(path, sizeof path, dir, name))
            fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)     /* no room, or let read_file say why */
            return ps_cg_read_file(dir, name, buf, size, len, err);
        r = &job->rfd[job->rfd_count++];
        *r = (struct read_fd){dir, name, fd};
    }
    size_t used = 0;
    while (used < size - 1) {
        ssize_t n = pread(r->fd, buf + used, size - 1 - used, (off_t)used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            buf[0] = '\0';
            *len = 0;
            return ps_error_set(err, PS_EIO, "read(%s/%s): %s", dir, name, strerror(errno));
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    buf[used] = '\0';
    *len = used;
    return 0;
}

static int job_read_int(struct ps_cgroup_job *job, const char *dir, const char *name,
                        int64_t *value, struct ps_error *err)
{
    char buf[64];
    size_t len;
    int rc = job_read_file(job, dir, name, buf, sizeof buf, &len, err);
    if (rc != 0)
        return rc;
    if (ps_cgroup_parse_int(buf, len, value) != 0)
        return ps_error_set(err, PS_EIO, "%s/%s: not an integer: \"%.40s\"", dir, name, buf);
    return 0;
}

static int job_read_key(struct ps_cgroup_job *job, const char *dir, const char *name,
                        const char *key, int64_t *value, struct ps_error *err)
{
    char buf[4096];
    size_t len;
    int rc = job_read_file(job, dir, name, buf, sizeof buf, &len, err);
    if (rc != 0)
        return rc;
    rc = ps_cgroup_parse_key_value(buf, len, key, value);
    if (rc == PS_ENOENT) {
        *value = -1;
        return 0;
    }
    if (rc != 0)
        return ps_error_set(err, PS_EIO, "%s/%s: \"%s\" is not an integer", dir, name, key);
    return 0;
}

static void job_close_reads(struct ps_cgroup_job *job)
{
    for (int i = 0; i < job->rfd_count; i++)
        close(job->rfd[i].fd);
    job->rfd_count = 0;
}

/* ---------------------------------------------------------------------------------------------
 * Detection
 * ------------------------------------------------------------------------------------------- */

struct facts {
    char mountinfo[65536];
    size_t mountinfo_len;
    char self_cgroup[8192];
    size_t self_cgroup_len;
};

/* The directory of the agent's cgroup in the hierarchy of controller (NULL: v2). */
static bool agent_dir(const struct facts *f, const char *controller, char *out, size_t size,
                      char *why, size_t why_size)
{
    const char *what = controller ? controller : "cgroup2";
    struct ps_cgroup_mount m;
    int rc = ps_cgroup_parse_mountinfo(f->mountinfo, f->mountinfo_len, controller, &m);
    if (rc != 0) {
        ps_cg_put(why, why_size, "%s: %s", what,
                 rc == PS_ENOENT ? "not mounted" : "unreadable line in mountinfo");
        return false;
    }
    char cg[PATH_MAX];
    rc = ps_cgroup_parse_proc_cgroup(f->self_cgroup, f->self_cgroup_len, controller, cg,
                                     sizeof cg);
    if (rc != 0) {
        ps_cg_put(why, why_size, "%s mounted at %s but /proc/self/cgroup has no line for it",
                 what, m.mount_point);
        return false;
    }
    /* The path in /proc/self/cgroup is from the hierarchy's root; the mount shows m.root. */
    const char *rel = cg;
    size_t rl = strlen(m.root);
    if (strcmp(m.root, "/") != 0) {
        if (strncmp(cg, m.root, rl) == 0 && (cg[rl] == '/' || cg[rl] == '\0'))
            rel = cg + rl;
        else if (strcmp(cg, "/") != 0) {
            ps_cg_put(why, why_size, "%s: the agent's cgroup %s is outside the mounted part %s",
                     what, cg, m.root);
            return false;
        } else {
            rel = "";
        }
    }
    while (*rel == '/')
        rel++;
    int n = *rel ? snprintf(out, size, "%s/%s", m.mount_point, rel)
                 : snprintf(out, size, "%s", m.mount_point);
    if (n < 0 || (size_t)n >= size) {
        ps_cg_put(why, why_size, "%s: path too long", what);
        return false;
    }
    return true;
}

const char *ps_cgroup_system_dir(const struct ps_cgroup_system *sys, int i)
{
    int n = 0;
    for (int h = 0; sys && h < H_COUNT; h++) {
        if (!sys->parent[h][0])
            continue;
        bool dup = false;
        for (int k = 0; k < h; k++)
            dup |= strcmp(sys->parent[k], sys->parent[h]) == 0;
        if (dup)
            continue;
        if (n++ == i)
            return sys->parent[h];
    }
    return NULL;
}

/* Undoes what setup_v2 did, in reverse: stop handing controllers down, move the agent back
 * into its own cgroup, remove our directories. Best effort. */
static void undo_v2(struct ps_cgroup_system *sys)
{
    if (!sys->parent[0][0])
        return;
    (void)ps_cg_write_file(sys->parent[0], "cgroup.subtree_control", "-cpu -memory", NULL);
    if (sys->v2_enabled_in_agent_cg && sys->v2_moved_self) {
        char disable[32];
        snprintf(disable, sizeof disable, "%s", sys->v2_enabled_list);
        for (char *p = disable; *p; p++)
            if (*p == '+')
                *p = '-';
        (void)ps_cg_write_file(sys->v2_agent_cg, "cgroup.subtree_control", disable, NULL);
    }
    bool back = true;
    if (sys->v2_moved_self) {
        char pid[32];
        snprintf(pid, sizeof pid, "%d", (int)getpid());
        back = ps_cg_write_file(sys->v2_agent_cg, "cgroup.procs", pid, NULL) == 0;
    }
    if (back && sys->v2_leaf[0])
        (void)rmdir(sys->v2_leaf);
    if (back && sys->created_parent[0])
        (void)rmdir(sys->parent[0]);
    sys->parent[0][0] = '\0';
    sys->created_parent[0] = false;
    sys->v2_leaf[0] = '\0';
    sys->v2_moved_self = sys->v2_enabled_in_agent_cg = false;
}

/* Tries cgroup v2; true when usable (sys->mode set), else why says what is missing. */
static bool setup_v2(struct ps_cgroup_system *sys, const struct facts *f, char *why,
                     size_t why_size)
{
    char agent[PATH_MAX];
    if (!agent_dir(f, NULL, agent, sizeof agent, why, why_size))
        return false;
    char controllers[512];
    size_t len;
    if (ps_cg_read_file(agent, "cgroup.controllers", controllers, sizeof controllers, &len, NULL)) {
        ps_cg_put(why, why_size, "cgroup2: cannot read %s/cgroup.controllers", agent);
        return false;
    }
    bool cpu = ps_cg_word_in(controllers, "cpu"), memory = ps_cg_word_in(controllers, "memory");
    if (!cpu && !memory) {
        struct ps_cgroup_mount m;
        bool hybrid = ps_cgroup_parse_mountinfo(f->mountinfo, f->mountinfo_len, "cpu", &m) == 0 ||
                      ps_cgroup_parse_mountinfo(f->mountinfo, f->mountinfo_len, "memory", &m) == 0;
        ps_cg_put(why, why_size, "cgroup2 at %s offers neither cpu nor memory (%s)", agent,
            hybrid ? "they are bound to cgroup v1 hierarchies: hybrid mode"
                   : "not enabled for the agent's cgroup by its parent: not delegated");
        return false;
    }
    char enable[32];
    snprintf(enable, sizeof enable, "%s%s%s", cpu ? "+cpu" : "", cpu && memory ? " " : "",
             memory ? "+memory" : "");
    char *parent = sys->parent[0];
    char name[96];
    snprintf(name, sizeof name, "%s", sys->name);
    if (!ps_cg_path_join(parent, PATH_MAX, agent, name)) {
        ps_cg_put(why, why_size, "cgroup2: path too long");
        return false;
    }
    if (!ps_cg_make_dir(parent, &sys->created_parent[0], why, why_size)) {
        parent[0] = '\0';
        return false;
    }
    snprintf(sys->v2_agent_cg, sizeof sys->v2_agent_cg, "%s", agent);

    /* Enable the controllers for our children. A cgroup with processes cannot do that (except
     * the root), so on EBUSY the agent first moves itself into the leaf <parent>/agent. */
    char sub[512];
    if (ps_cg_read_file(agent, "cgroup.subtree_control", sub, sizeof sub, &len, NULL))
        sub[0] = '\0';
    bool need = (cpu && !ps_cg_word_in(sub, "cpu")) || (memory && !ps_cg_word_in(sub, "memory"));
    if (need) {
        int e = ps_cg_write_file(agent, "cgroup.subtree_control", enable, NULL);
        if (e == EBUSY) {
            bool leaf_created = false;
            if (!ps_cg_path_join(sys->v2_leaf, sizeof sys->v2_leaf, parent, "agent") ||
                !ps_cg_make_dir(sys->v2_leaf, &leaf_created, why, why_size)) {
                sys->v2_leaf[0] = '\0';
                undo_v2(sys);
                return false;
            }
            char pid[32];
            snprintf(pid, sizeof pid, "%d", (int)getpid());
            e = ps_cg_write_file(sys->v2_leaf, "cgroup.procs", pid, NULL);
            if (e != 0) {
                ps_cg_put(why, why_size, "cgroup2: cannot move the agent into %s: %s",
                    sys->v2_leaf, strerror(e));
                undo_v2(sys);
                return false;
            }
            sys->v2_moved_self = true;
            e = ps_cg_write_file(agent, "cgroup.subtree_control", enable, NULL);
        }
        if (e != 0) {
            int total = 0;
            pid_t dummy[1];
            (void)ps_cg_read_procs(agent, dummy, 0, &total, NULL);
            ps_cg_put(why, why_size, "cgroup2: writing \"%s\" to %s/cgroup.subtree_control "
                     "failed: %s%s", enable, agent, strerror(e),
                     e == EBUSY && total > 0 ? " (other processes live in the agent's cgroup; "
                                               "delegate an empty cgroup to the agent)" : "");
            undo_v2(sys);
            return false;
        }
        sys->v2_enabled_in_agent_cg = true;
        snprintf(sys->v2_enabled_list, sizeof sys->v2_enabled_list, "%s", enable);
    }
    int e = ps_cg_write_file(parent, "cgroup.subtree_control", enable, NULL);
    if (e != 0) {
        ps_cg_put(why, why_size, "cgroup2: writing \"%s\" to %s/cgroup.subtree_control failed: "
                 "%s", enable, parent, strerror(e));
        undo_v2(sys);
        return false;
    }
    sys->mode = PS_CGROUP_V2;
    sys->caps.cpu_limit = sys->caps.cpu_weight = cpu;
    sys->caps.cpu_usage = true;     /* cpu.stat usage_usec is there without the cpu controller */
    sys->caps.memory = memory;
    return true;
}

/* Tries one v1 hierarchy: creates poolsched-<node> below the agent and writes a harmless value
 * to prove that it can. */
static bool setup_v1_one(struct ps_cgroup_system *sys, const struct facts *f, int h, char *why,
                         size_t why_size)
{
    char agent[PATH_MAX];
    if (!agent_dir(f, hier_name[h], agent, sizeof agent, why, why_size))
        return false;
    char name[96];
    snprintf(name, sizeof name, "%s", sys->name);
    char *parent = sys->parent[h];
    if (!ps_cg_path_join(parent, PATH_MAX, agent, name)) {
        ps_cg_put(why, why_size, "%s: path too long", hier_name[h]);
        parent[0] = '\0';
        return false;
    }
    /* co-mounted with an earlier hierarchy: already set up there */
    for (int k = 0; k < h; k++)
        if (strcmp(sys->parent[k], parent) == 0)
            return true;
    if (!ps_cg_make_dir(parent, &sys->created_parent[h], why, why_size)) {
        parent[0] = '\0';
        return false;
    }
    const char *probe_file = h == H_CPU ? "cpu.cfs_quota_us" : h == H_CPUACCT ? "cpuacct.usage"
                                                                              : "memory.limit_in_bytes";
    const char *probe_value = h == H_CPUACCT ? "0" : "-1";   /* unlimited; cpuacct: reset */
    int e = ps_cg_write_file(parent, probe_file, probe_value, NULL);
    if (e != 0) {
        ps_cg_put(why, why_size, "%s: writing %s/%s failed: %s", hier_name[h], parent,
                 probe_file, strerror(e));
        if (sys->created_parent[h])
            (void)rmdir(parent);
        sys->created_parent[h] = false;
        parent[0] = '\0';
        return false;
    }
    return true;
}

static int load_facts(const char *proc_root, struct facts *f, char *why, size_t why_size)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/self/mountinfo", proc_root);
    if (ps_procfs_read_small(path, f->mountinfo, sizeof f->mountinfo, &f->mountinfo_len, NULL)) {
        ps_cg_put(why, why_size, "cannot read %s", path);
        return -1;
    }
    snprintf(path, sizeof path, "%s/self/cgroup", proc_root);
    if (ps_procfs_read_small(path, f->self_cgroup, sizeof f->self_cgroup,
                             &f->self_cgroup_len, NULL)) {
        ps_cg_put(why, why_size, "cannot read %s", path);
        return -1;
    }
    return 0;
}

int ps_cgroup_system_new(const struct ps_cgroup_config *cfg, struct ps_cgroup_system **out,
                         struct ps_error *err)
{
    *out = NULL;
    if (!cfg->node_id || !ps_node_id_valid(cfg->node_id, PS_NODE_ID_MAX))
        return ps_error_set(err, PS_EINVAL, "cgroups: node id \"%s\" must be 1..64 of "
                            "[A-Za-z0-9._-]", cfg->node_id ? cfg->node_id : "(null)");
    struct ps_cgroup_system *sys = calloc(1, sizeof *sys);
    struct facts *f = malloc(sizeof *f);
    if (!sys || !f) {
        free(sys);
        free(f);
        return ps_error_set(err, PS_ENOMEM, "cgroups: out of memory");
    }
    snprintf(sys->node_id, sizeof sys->node_id, "%s", cfg->node_id);
    if (cfg->instance_id && !ps_node_id_valid(cfg->instance_id, 20)) {
        free(sys);
        free(f);
        return ps_error_set(err, PS_EINVAL, "cgroups: instance id \"%s\" must be 1..20 of "
                            "[A-Za-z0-9._-]", cfg->instance_id);
    }
    if (cfg->instance_id)
        snprintf(sys->name, sizeof sys->name, "poolsched-%s-%s", cfg->node_id,
                 cfg->instance_id);
    else
        snprintf(sys->name, sizeof sys->name, "poolsched-%s", cfg->node_id);
    sys->remove_stale_jobs = cfg->remove_stale_jobs;
    sys->lock_fd = -1;
    /* The lock before any cgroup: a starting agent that sees this instance's cgroup must find
     * it held (instance_lock.h). Without it the agent still runs; the summary says the risk. */
    char lock_note[REASON_MAX] = "";
    if (!cfg->disable) {
        snprintf(sys->lock_dir, sizeof sys->lock_dir, "%s",
                 cfg->lock_dir ? cfg->lock_dir : ps_instance_lock_dir());
        struct ps_error lerr;
        ps_error_init(&lerr);
        if (ps_instance_lock_take(sys->lock_dir, sys->name, &sys->lock_fd, &lerr) != 0)
            ps_cg_put(lock_note, sizeof lock_note, "; no instance lock (%s): an agent started later "
                "with node id %s may remove this agent's idle cgroups, which are then made "
                "again", lerr.msg, cfg->node_id);
    }
    sys->pool_size = cfg->job_pool_size < 0 ? 0 : cfg->job_pool_size > 64 ? 64 :
                     cfg->job_pool_size;
    const char *proc_root = cfg->proc_root ? cfg->proc_root : "/proc";
    const char *none_prefix = "no usable cgroups, jobs run without CPU limits and are measured "
                              "from /proc";
    char why_v2[REASON_MAX] = "", why_v1[H_COUNT][REASON_MAX] = {"", "", ""};

    if (cfg->disable) {
        ps_cg_put(sys->summary, sizeof sys->summary, "%s: disabled by configuration",
                 none_prefix);
    } else if (load_facts(proc_root, f, why_v2, sizeof why_v2) != 0) {
        ps_cg_put(sys->summary, sizeof sys->summary, "%s: %s", none_prefix, why_v2);
    } else if (setup_v2(sys, f, why_v2, sizeof why_v2)) {
        ps_cg_put(sys->summary, sizeof sys->summary,
                 "cgroup v2: jobs in %s/job-*, %s%s%s%s", sys->parent[0],
                 sys->caps.cpu_limit ? "cpu limit+weight" : "no cpu controller",
                 sys->caps.memory ? ", memory limit+accounting" : ", no memory controller",
                 sys->v2_moved_self ? "; the agent moved itself into " : "",
                 sys->v2_moved_self ? sys->v2_leaf : "");
    } else {
        bool any = false;
        for (int h = 0; h < H_COUNT; h++)
            any |= setup_v1_one(sys, f, h, why_v1[h], sizeof why_v1[h]);
        sys->caps.cpu_limit = sys->caps.cpu_weight = sys->parent[H_CPU][0] != '\0';
        sys->caps.cpu_usage = sys->parent[H_CPUACCT][0] != '\0';
        sys->caps.memory = sys->parent[H_MEMORY][0] != '\0';
        if (any && (sys->caps.cpu_limit || sys->caps.memory || sys->caps.cpu_usage)) {
            sys->mode = PS_CGROUP_V1;
            char *sm = sys->summary;
            size_t ss = sizeof sys->summary;
            ps_cg_put(sm, ss, "cgroup v1:");
            for (int h = 0; h < H_COUNT; h++) {
                static const char *const what[H_COUNT] = {"cpu limit+weight", "cpu usage",
                                                          "memory limit+accounting"};
                size_t n = strlen(sm);
                if (sys->parent[h][0])
                    ps_cg_put(sm + n, ss - n, "%s %s in %s", h ? ";" : "", what[h], sys->parent[h]);
                else
                    ps_cg_put(sm + n, ss - n, "%s no %s (%s, using /proc)", h ? ";" : "", what[h],
                        why_v1[h]);
            }
            size_t n = strlen(sm);
            ps_cg_put(sm + n, ss - n, "; v2 not used: %s", why_v2);
        } else {
            ps_cg_put(sys->summary, sizeof sys->summary, "%s: %s; v1: %s; %s; %s", none_prefix,
                     why_v2, why_v1[H_CPU], why_v1[H_CPUACCT], why_v1[H_MEMORY]);
        }
    }
    free(f);
    if (sys->mode != PS_CGROUP_NONE && lock_note[0]) {
        size_t n = strlen(sys->summary);
        ps_cg_put(sys->summary + n, sizeof sys->summary - n, "%s", lock_note);
    }
    if (sys->mode != PS_CGROUP_NONE && sys->remove_stale_jobs) {
        for (int h = 0; h < H_COUNT; h++)
            if (sys->parent[h][0]) {
                if (cfg->instance_id)
                    ps_cg_remove_stale_instances(sys, sys->parent[h]);
                else
                    ps_cg_remove_stale(sys->parent[h], sys->mode == PS_CGROUP_V2);
            }
        /* then the locks of dead instances with this node id whose cgroups are gone */
        char prefix[96];
        snprintf(prefix, sizeof prefix, "poolsched-%s-", cfg->node_id);
        if (cfg->instance_id)
            ps_instance_lock_sweep(sys->lock_dir, prefix, sys->name);
    }
    *out = sys;
    return 0;
}

void ps_cgroup_system_free(struct ps_cgroup_system *sys)
{
    if (!sys)
        return;
    while (sys->pool_count > 0) {
        struct ps_cgroup_job *job = sys->pool[--sys->pool_count];
        job_close_reads(job);
        for (int h = 0; h < H_COUNT; h++)
            if (job->unique[h])
                (void)ps_cg_remove_dir(job->dir[h], 1000, NULL);
        free(job);
    }
    if (sys->job_count == 0) {
        if (sys->mode == PS_CGROUP_V2) {
            undo_v2(sys);
        } else {
            for (int h = 0; h < H_COUNT; h++)
                if (sys->created_parent[h])
                    (void)rmdir(sys->parent[h]);
        }
    }
    /* What stays behind (a job cgroup, v2's node cgroup holding the agent) is a dead
     * instance's from now: no lock file says so to the next agent. */
    ps_instance_lock_drop(sys->lock_dir, sys->name, sys->lock_fd, true);
    free(sys);
}

enum ps_cgroup_mode ps_cgroup_system_mode(const struct ps_cgroup_system *sys)
{
    return sys ? sys->mode : PS_CGROUP_NONE;
}

struct ps_cgroup_caps ps_cgroup_system_caps(const struct ps_cgroup_system *sys)
{
    struct ps_cgroup_caps none = {0};
    return sys ? sys->caps : none;
}

const char *ps_cgroup_system_summary(const struct ps_cgroup_system *sys)
{
    return sys->summary;
}

/* ---------------------------------------------------------------------------------------------
 * Jobs
 * ------------------------------------------------------------------------------------------- */

static bool is_v2(const struct ps_cgroup_job *job)
{
    return job->sys->mode == PS_CGROUP_V2;
}

static void set_procs_files(struct ps_cgroup_job *job)
{
    int n = 0;
    job->procs_dir[0] = '\0';
    for (int h = 0; h < H_COUNT; h++)
        if (job->unique[h]) {
            if (!job->procs_dir[0])
                snprintf(job->procs_dir, sizeof job->procs_dir, "%s", job->dir[h]);
            snprintf(job->procs_file[h], sizeof job->procs_file[h], "%s/cgroup.procs",
                     job->dir[h]);
            job->procs_list[n++] = job->procs_file[h];
        }
    job->procs_list[n] = NULL;
}

static void pool_discard(struct ps_cgroup_job *job)
{
    job_close_reads(job);
    for (int h = 0; h < H_COUNT; h++)
        if (job->unique[h])
            (void)ps_cg_remove_dir(job->dir[h], 1000, NULL);
    free(job);
}

/* An emptied v1 job cgroup renamed to job-<job_id>, or NULL (pool empty, or a step failed:
 * then the caller makes a fresh one). */
static struct ps_cgroup_job *reuse_from_pool(struct ps_cgroup_system *sys, const char *job_id)
{
    while (sys->pool_count > 0) {
        struct ps_cgroup_job *job = sys->pool[--sys->pool_count];
        char name[160], dir[H_COUNT][PATH_MAX];
        snprintf(name, sizeof name, "job-%s", job_id);
        bool ok = true;
        for (int h = 0; h < H_COUNT && ok; h++) {
            dir[h][0] = '\0';
            if (!job->dir[h][0])
                continue;
            ok = ps_cg_path_join(dir[h], PATH_MAX, sys->parent[h], name);
        }
        for (int h = 0; h < H_COUNT && ok; h++) {
            if (!job->unique[h])
                continue;
            if (rename(job->dir[h], dir[h]) != 0) {
                ok = false;
                break;
            }
            /* co-mounted slots share the dir; move all of them along */
            char old[PATH_MAX];
            snprintf(old, sizeof old, "%s", job->dir[h]);
            for (int k = h; k < H_COUNT; k++)
                if (strcmp(job->dir[k], old) == 0)
                    snprintf(job->dir[k], PATH_MAX, "%s", dir[h]);
        }
        int64_t v = 0;
        if (ok && job->caps.memory)
            ok = job_read_key(job, job->dir[H_MEMORY], "memory.oom_control", "oom_kill", &v,
                              NULL) == 0;
        job->base_oom_kills = v;
        v = 0;
        if (ok && job->caps.cpu_limit)
            ok = job_read_key(job, job->dir[H_CPU], "cpu.stat", "nr_throttled", &v, NULL) == 0;
        job->base_throttled = v;
        if (!ok) {
            pool_discard(job);
            continue;
        }
        set_procs_files(job);
        return job;
    }
    return NULL;
}

/* Whether the emptied memory cgroup in dir still holds pages that reclaim could take (page cache
 * or anonymous memory on its LRU lists). The per-job cost this avoids: memory.force_empty drains
 * the LRU caches of every CPU (lru_add_drain_all waits on a work item per CPU) and retries
 * reclaim up to 16 times while anything is charged, including kernel memory that reclaim can
 * never free; on a busy node that was the largest single cost of a short job. A job that left no
 * pages (the common case: its sandbox is gone, so is its page cache) needs none of that. On any
 * doubt (unreadable file, unknown format) the answer is yes, so the caller force-empties. */
static bool memory_has_pages(const char *dir)
{
    char buf[4096];
    size_t len;
    if (ps_cg_read_file(dir, "memory.stat", buf, sizeof buf, &len, NULL) != 0)
        return true;
    static const char *const lru[] = {"inactive_anon", "active_anon", "inactive_file",
                                      "active_file", "unevictable"};
    for (size_t i = 0; i < sizeof lru / sizeof lru[0]; i++) {
        int64_t v;
        if (ps_cgroup_parse_key_value(buf, len, lru[i], &v) != 0 || v != 0)
            return true;
    }
    return false;
}

/* Resets an emptied v1 job cgroup for the next job; false when any step fails. What it may still
 * carry: up to a few hundred KiB of unreclaimable kernel memory and per-CPU charge batches of the
 * job that ran in it (force_empty cannot remove those either), which the next job's usage and
 * limit include. */
static bool reset_for_pool(struct ps_cgroup_job *job)
{
    bool ok = true;
    if (job->caps.cpu_usage)
        ok = ok && ps_cg_write_file(job->dir[H_CPUACCT], "cpuacct.usage", "0", NULL) == 0;
    if (job->caps.memory) {
        const char *d = job->dir[H_MEMORY];
        if (ok && memory_has_pages(d))
            ok = ps_cg_write_file(d, "memory.force_empty", "0", NULL) == 0;
        ok = ok && ps_cg_write_file(d, "memory.max_usage_in_bytes", "0", NULL) == 0;
        ok = ok && ps_cg_write_file(d, "memory.failcnt", "0", NULL) == 0;
    }
    /* The limits (cfs_quota_us -1, shares 1024, limit_in_bytes -1) are reset when the next job
     * is ready to run, those it did not set itself (ps_cgroup_job_unset_limits_default). */
    job->default_cpu_quota = job->caps.cpu_limit;
    job->default_cpu_weight = job->caps.cpu_weight;
    job->default_memory_limit = job->caps.memory;
    return ok;
}

/* Writes value to dir/name unless it is `last` (what was written there before); remembers it. */
static int write_changed(const char *dir, const char *name, const char *value, char *last,
                         size_t last_size, struct ps_error *err)
{
    if (last[0] && strcmp(last, value) == 0)
        return 0;
    last[0] = '\0';
    if (ps_cg_write_file(dir, name, value, err) != 0)
        return PS_EIO;
    snprintf(last, last_size, "%s", value);
    return 0;
}

/* Makes the node cgroup of hierarchy h again after it vanished under the agent (an admin, or an
 * agent with the same node id from before instance locks, removed it while idle), as at start:
 * v2 hands cpu/memory down again. 0 or the errno of the failed step (why says which). */
static int recreate_parent(struct ps_cgroup_system *sys, int h, char *why, size_t why_size)
{
    if (mkdir(sys->parent[h], 0755) != 0 && errno != EEXIST) {
        int e = errno;
        ps_cg_put(why, why_size, "mkdir(%s): %s", sys->parent[h], strerror(e));
        return e;
    }
    sys->created_parent[h] = true;
    if (sys->mode != PS_CGROUP_V2 || (!sys->caps.cpu_limit && !sys->caps.memory))
        return 0;
    char enable[32];
    snprintf(enable, sizeof enable, "%s%s%s", sys->caps.cpu_limit ? "+cpu" : "",
             sys->caps.cpu_limit && sys->caps.memory ? " " : "",
             sys->caps.memory ? "+memory" : "");
    int e = ps_cg_write_file(sys->parent[h], "cgroup.subtree_control", enable, NULL);
    if (e != 0)
        ps_cg_put(why, why_size, "writing \"%s\" to %s/cgroup.subtree_control: %s", enable,
            sys->parent[h], strerror(e));
    return e;
}

int ps_cgroup_job_create(struct ps_cgroup_system *sys, const char *job_id,
                         struct ps_cgroup_job **out, struct ps_error *err)
{
    *out = NULL;
    if (!sys || sys->mode == PS_CGROUP_NONE)
        return ps_error_set(err, PS_ESTATE, "cgroups are not usable on this node");
    if (!job_id || !ps_node_id_valid(job_id, PS_NODE_JOB_ID_MAX))
        return ps_error_set(err, PS_EINVAL, "job id \"%s\" must be 1..128 of [A-Za-z0-9._-] "
                            "to name its cgroup", job_id ? job_id : "(null)");
    struct ps_cgroup_job *job = reuse_from_pool(sys, job_id);
    if (job) {
        sys->job_count++;
        *out = job;
        return 0;
    }
    job = calloc(1, sizeof *job);
    if (!job)
        return ps_error_set(err, PS_ENOMEM, "cgroups: out of memory");
    job->sys = sys;
    job->caps = sys->caps;
    char name[160];
    snprintf(name, sizeof name, "job-%s", job_id);
    int rc = 0;
    for (int h = 0; h < H_COUNT && rc == 0; h++) {
        if (!sys->parent[h][0])
            continue;
        if (!ps_cg_path_join(job->dir[h], PATH_MAX, sys->parent[h], name)) {
            rc = ps_error_set(err, PS_EIO, "%s/%s: path too long", sys->parent[h], name);
            break;
        }
        job->unique[h] = true;
        for (int k = 0; k < h; k++)
            if (strcmp(job->dir[k], job->dir[h]) == 0)
                job->unique[h] = false;
        if (!job->unique[h])
            continue;
        int made = mkdir(job->dir[h], 0755);
        if (made != 0 && errno == ENOENT) {
            /* the node cgroup is gone: make it again and retry once */
            char why[REASON_MAX] = "";
            if (recreate_parent(sys, h, why, sizeof why) != 0) {
                rc = ps_error_set(err, PS_EIO, "the node cgroup %s is gone and making it again "
                                  "failed: %s", sys->parent[h], why);
                job->unique[h] = false;
                break;
            }
            made = mkdir(job->dir[h], 0755);
        }
        if (made != 0) {
            if (errno != EEXIST) {
                rc = ps_error_set(err, PS_EIO, "mkdir(%s): %s", job->dir[h], strerror(errno));
                job->unique[h] = false;     /* nothing to remove */
                break;
            }
            /* A leftover of a crashed agent: empty it and reuse it. */
            rc = ps_cg_kill_dir(job->dir[h], sys->mode == PS_CGROUP_V2, 1000, err);
        }
        if (!job->procs_dir[0])
            snprintf(job->procs_dir, sizeof job->procs_dir, "%s", job->dir[h]);
    }
    if (rc != 0) {
        for (int h = 0; h < H_COUNT; h++)
            if (job->unique[h])
                (void)rmdir(job->dir[h]);
        free(job);
        return rc;
    }
    if (sys->mode == PS_CGROUP_V2) {
        job->has_kill = ps_cg_file_exists(job->dir[0], "cgroup.kill");
        job->has_peak = ps_cg_file_exists(job->dir[0], "memory.peak");
        /* One OOM kill takes the whole job down, as YTsaurus fails the whole job. Best effort:
         * kernels before 4.19 lack it and the runner kills the rest itself. */
        if (job->caps.memory)
            (void)ps_cg_write_file(job->dir[0], "memory.oom.group", "1", NULL);
    }
    set_procs_files(job);
    sys->job_count++;
    *out = job;
    return 0;
}

const char *const *ps_cgroup_job_procs_files(const struct ps_cgroup_job *job)
{
    return job->procs_list;
}

int ps_cgroup_job_unset_limits_default(struct ps_cgroup_job *job, struct ps_error *err)
{
    int rc = 0;
    if (job->default_cpu_quota)
        rc = ps_cgroup_job_set_cpu_limit(job, -1, err);
    if (rc == 0 && job->default_cpu_weight)
        rc = ps_cgroup_job_set_cpu_guarantee(job, 1, err);     /* 1024 shares */
    if (rc == 0 && job->default_memory_limit)
        rc = ps_cgroup_job_set_memory_limit(job, -1, err);
    return rc;
}

int ps_cgroup_job_attach(struct ps_cgroup_job *job, pid_t pid, struct ps_error *err)
{
    if (ps_cgroup_job_unset_limits_default(job, err) != 0)
        return PS_EIO;
    char value[32];
    snprintf(value, sizeof value, "%d", (int)pid);
    for (int h = 0; h < H_COUNT; h++)
        if (job->unique[h] && ps_cg_write_file(job->dir[h], "cgroup.procs", value, err) != 0)
            return PS_EIO;
    return 0;
}

int ps_cgroup_job_set_cpu_limit(struct ps_cgroup_job *job, double cores, struct ps_error *err)
{
    if (!job->caps.cpu_limit)
        return ps_error_set(err, PS_ESTATE, "cgroups: no cpu controller to limit CPU");
    if (isnan(cores))
        return ps_error_set(err, PS_EINVAL, "cpu limit: not a number");
    int64_t quota = ps_cgroup_cpu_quota_us(cores);
    job->default_cpu_quota = false;
    char value[64];
    if (is_v2(job)) {
        if (quota < 0)
            snprintf(value, sizeof value, "max %d", PS_CGROUP_CPU_PERIOD_US);
        else
            snprintf(value, sizeof value, "%lld %d", (long long)quota, PS_CGROUP_CPU_PERIOD_US);
        return write_changed(job->dir[0], "cpu.max", value, job->last_cpu_quota,
                             sizeof job->last_cpu_quota, err);
    }
    snprintf(value, sizeof value, "%lld", (long long)quota);
    if (job->last_cpu_quota[0] && strcmp(job->last_cpu_quota, value) == 0)
        return 0;
    char period[32];
    snprintf(period, sizeof period, "%d", PS_CGROUP_CPU_PERIOD_US);
    job->last_cpu_quota[0] = '\0';
    if (ps_cg_write_file(job->dir[H_CPU], "cpu.cfs_period_us", period, err) != 0)
        return PS_EIO;
    return write_changed(job->dir[H_CPU], "cpu.cfs_quota_us", value, job->last_cpu_quota,
                         sizeof job->last_cpu_quota, err);
}

int ps_cgroup_job_set_cpu_guarantee(struct ps_cgroup_job *job, double cores,
                                    struct ps_error *err)
{
    if (!job->caps.cpu_weight)
        return ps_error_set(err, PS_ESTATE, "cgroups: no cpu controller for CPU weights");
    if (isnan(cores) || cores < 0)
        return ps_error_set(err, PS_EINVAL, "cpu guarantee: %g cores must be >= 0", cores);
    job->default_cpu_weight = false;
    char value[32];
    if (is_v2(job)) {
        snprintf(value, sizeof value, "%lld", (long long)ps_cgroup_cpu_weight_v2(cores));
        return write_changed(job->dir[0], "cpu.weight", value, job->last_cpu_weight,
                             sizeof job->last_cpu_weight, err);
    }
    snprintf(value, sizeof value, "%lld", (long long)ps_cgroup_cpu_shares_v1(cores));
    return write_changed(job->dir[H_CPU], "cpu.shares", value, job->last_cpu_weight,
                         sizeof job->last_cpu_weight, err);
}

int ps_cgroup_job_set_memory_limit(struct ps_cgroup_job *job, int64_t bytes,
                                   struct ps_error *err)
{
    if (!job->caps.memory)
        return ps_error_set(err, PS_ESTATE, "cgroups: no memory controller to limit memory");
    job->default_memory_limit = false;
    char value[32];
    if (is_v2(job)) {
        if (bytes <= 0)
            snprintf(value, sizeof value, "max");
        else
            snprintf(value, sizeof value, "%lld", (long long)bytes);
        return write_changed(job->dir[0], "memory.max", value, job->last_memory_limit,
                             sizeof job->last_memory_limit, err);
    }
    snprintf(value, sizeof value, "%lld", bytes <= 0 ? -1LL : (long long)bytes);
    return write_changed(job->dir[H_MEMORY], "memory.limit_in_bytes", value,
                         job->last_memory_limit, sizeof job->last_memory_limit, err);
}

int ps_cgroup_job_read(struct ps_cgroup_job *job, struct ps_cgroup_usage *out,
                       struct ps_error *err)
{
    out->cpu_usec = out->memory_bytes = out->memory_peak_bytes = -1;
    out->oom_kills = out->limit_hits = out->cpu_throttled_periods = -1;
    int rc = 0;
    if (is_v2(job)) {
        const char *d = job->dir[0];
        rc = job_read_key(job, d, "cpu.stat", "usage_usec", &out->cpu_usec, err);
        if (rc == 0 && job->caps.cpu_limit)
            rc = job_read_key(job, d, "cpu.stat", "nr_throttled", &out->cpu_throttled_periods, err);
        if (rc == 0 && job->caps.memory) {
            rc = job_read_int(job, d, "memory.current", &out->memory_bytes, err);
            if (rc == 0 && job->has_peak)
                rc = job_read_int(job, d, "memory.peak", &out->memory_peak_bytes, err);
            if (rc == 0)
                rc = job_read_key(job, d, "memory.events", "oom_kill", &out->oom_kills, err);
            if (rc == 0)
                rc = job_read_key(job, d, "memory.events", "max", &out->limit_hits, err);
        }
        return rc;
    }
    if (job->caps.cpu_limit)
        rc = job_read_key(job, job->dir[H_CPU], "cpu.stat", "nr_throttled",
                          &out->cpu_throttled_periods, err);
    if (rc == 0 && out->cpu_throttled_periods >= job->base_throttled)
        out->cpu_throttled_periods -= job->base_throttled;
    if (rc == 0 && job->caps.cpu_usage) {
        int64_t ns;
        rc = job_read_int(job, job->dir[H_CPUACCT], "cpuacct.usage", &ns, err);
        if (rc == 0)
            out->cpu_usec = ns / 1000;
    }
    if (rc == 0 && job->caps.memory) {
        const char *d = job->dir[H_MEMORY];
        rc = job_read_int(job, d, "memory.usage_in_bytes", &out->memory_bytes, err);
        if (rc == 0)
            rc = job_read_int(job, d, "memory.max_usage_in_bytes", &out->memory_peak_bytes, err);
        if (rc == 0)    /* oom_kill appeared in memory.oom_control in Linux 4.13 */
            rc = job_read_key(job, d, "memory.oom_control", "oom_kill", &out->oom_kills, err);
        if (rc == 0 && out->oom_kills >= job->base_oom_kills)
            out->oom_kills -= job->base_oom_kills;
        if (rc == 0)
            rc = job_read_int(job, d, "memory.failcnt", &out->limit_hits, err);
    }
    return rc;
}

int ps_cgroup_job_process_count(struct ps_cgroup_job *job, struct ps_error *err)
{
    int total;
    pid_t dummy[1];
    int rc = ps_cg_read_procs(job->procs_dir, dummy, 0, &total, err);
    return rc < 0 ? rc : total;
}

int ps_cgroup_job_kill(struct ps_cgroup_job *job, int timeout_ms, struct ps_error *err)
{
    return ps_cg_kill_dir(job->procs_dir, job->has_kill, timeout_ms, err);
}

int ps_cgroup_job_destroy(struct ps_cgroup_job *job, struct ps_error *err)
{
    if (!job)
        return 0;
    int rc = ps_cg_kill_dir(job->procs_dir, job->has_kill, 2000, err);
    struct ps_cgroup_system *sys = job->sys;
    if (rc == 0 && sys->mode == PS_CGROUP_V1 && sys->pool_count < sys->pool_size &&
        reset_for_pool(job)) {
        sys->pool[sys->pool_count++] = job;
        sys->job_count--;
        return 0;
    }
    job_close_reads(job);
    for (int h = 0; h < H_COUNT; h++) {
        if (!job->unique[h])
            continue;
        int r = ps_cg_remove_dir(job->dir[h], 1000, err);
        if (rc == 0)
            rc = r;
    }
    job->sys->job_count--;
    free(job);
    return rc;
}

struct ps_cgroup_caps ps_cgroup_job_caps(const struct ps_cgroup_job *job)
{
    return job->caps;
}

const char *ps_cgroup_job_path(const struct ps_cgroup_job *job)
{
    if (job->dir[H_CPU][0])
        return job->dir[H_CPU];
    return job->procs_dir;
}
