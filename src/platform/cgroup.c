/* cgroup.c — detection of cgroups, the choice of a backend (cgroup_v2.c, cgroup_v1.c) and what
 * the job cgroups of cgroup.h do the same in both. */
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

/* ---------------------------------------------------------------------------------------------
 * Detection
 * ------------------------------------------------------------------------------------------- */

bool ps_cg_agent_dir(const struct ps_cg_facts *f, const char *controller, char *out, size_t size,
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

static int load_facts(const char *proc_root, struct ps_cg_facts *f, char *why, size_t why_size)
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
    struct ps_cg_facts *f = malloc(sizeof *f);
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
    char why_v2[REASON_MAX] = "", why_v1[3 * REASON_MAX] = "";

    /* The one place that chooses the backend: v2 when it is usable, else v1. */
    if (cfg->disable) {
        ps_cg_put(sys->summary, sizeof sys->summary, "%s: disabled by configuration",
                 none_prefix);
    } else if (load_facts(proc_root, f, why_v2, sizeof why_v2) != 0) {
        ps_cg_put(sys->summary, sizeof sys->summary, "%s: %s", none_prefix, why_v2);
    } else if (ps_cg_v2.setup(sys, f, why_v2, sizeof why_v2)) {
        sys->be = &ps_cg_v2;
    } else if (ps_cg_v1.setup(sys, f, why_v1, sizeof why_v1)) {
        sys->be = &ps_cg_v1;
        size_t n = strlen(sys->summary);
        ps_cg_put(sys->summary + n, sizeof sys->summary - n, "; v2 not used: %s", why_v2);
    } else {
        ps_cg_put(sys->summary, sizeof sys->summary, "%s: %s; v1: %s", none_prefix, why_v2,
                  why_v1);
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
    if (sys->be)
        sys->be->teardown(sys, sys->job_count == 0);
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

/* Makes the node cgroup of hierarchy h again after it vanished under the agent (an admin, or an
 * agent with the same node id from before instance locks, removed it while idle), as at start. 0 or the errno of the failed step (why says which). */
static int recreate_parent(struct ps_cgroup_system *sys, int h, char *why, size_t why_size)
{
    if (mkdir(sys->parent[h], 0755) != 0 && errno != EEXIST) {
        int e = errno;
        ps_cg_put(why, why_size, "mkdir(%s): %s", sys->parent[h], strerror(e));
        return e;
    }
    sys->created_parent[h] = true;
    return sys->be->parent_remade ? sys->be->parent_remade(sys, h, why, why_size) : 0;
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
    struct ps_cgroup_job *job = sys->be->reuse ? sys->be->reuse(sys, job_id) : NULL;
    if (job) {
        set_procs_files(job);
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
    if (sys->be->job_made)
        sys->be->job_made(job);
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
    job->default_cpu_quota = false;
    return job->sys->be->set_cpu_quota(job, ps_cgroup_cpu_quota_us(cores), err);
}

int ps_cgroup_job_set_cpu_guarantee(struct ps_cgroup_job *job, double cores,
                                    struct ps_error *err)
{
    if (!job->caps.cpu_weight)
        return ps_error_set(err, PS_ESTATE, "cgroups: no cpu controller for CPU weights");
    if (isnan(cores) || cores < 0)
        return ps_error_set(err, PS_EINVAL, "cpu guarantee: %g cores must be >= 0", cores);
    job->default_cpu_weight = false;
    return job->sys->be->set_cpu_weight(job, cores, err);
}

int ps_cgroup_job_set_memory_limit(struct ps_cgroup_job *job, int64_t bytes,
                                   struct ps_error *err)
{
    if (!job->caps.memory)
        return ps_error_set(err, PS_ESTATE, "cgroups: no memory controller to limit memory");
    job->default_memory_limit = false;
    return job->sys->be->set_memory_limit(job, bytes, err);
}

int ps_cgroup_job_read(struct ps_cgroup_job *job, struct ps_cgroup_usage *out,
                       struct ps_error *err)
{
    out->cpu_usec = out->memory_bytes = out->memory_peak_bytes = -1;
    out->oom_kills = out->limit_hits = out->cpu_throttled_periods = -1;
    return job->sys->be->read(job, out, err);
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
    if (rc == 0 && sys->be->keep && sys->be->keep(job)) {
        sys->job_count--;
        return 0;
    }
    ps_cg_job_close_reads(job);
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
