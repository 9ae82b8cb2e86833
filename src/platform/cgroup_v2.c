/* cgroup_v2.c — the cgroup v2 backend (cgroup_impl.h): one unified hierarchy, the node cgroup
 * below the agent's with cpu and memory handed down to it, one directory per job. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "platform/cgroup_impl.h"

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
static bool setup_v2(struct ps_cgroup_system *sys, const struct ps_cg_facts *f, char *why,
                     size_t why_size)
{
    char agent[PATH_MAX];
    if (!ps_cg_agent_dir(f, NULL, agent, sizeof agent, why, why_size))
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
    ps_cg_put(sys->summary, sizeof sys->summary, "cgroup v2: jobs in %s/job-*, %s%s%s%s",
              sys->parent[0], cpu ? "cpu limit+weight" : "no cpu controller",
              memory ? ", memory limit+accounting" : ", no memory controller",
              sys->v2_moved_self ? "; the agent moved itself into " : "",
              sys->v2_moved_self ? sys->v2_leaf : "");
    return true;
}

static void teardown_v2(struct ps_cgroup_system *sys, bool idle)
{
    if (idle)
        undo_v2(sys);
}

/* A remade node cgroup hands cpu/memory down again, as at start. */
static int parent_remade_v2(struct ps_cgroup_system *sys, int h, char *why, size_t why_size)
{
    if (!sys->caps.cpu_limit && !sys->caps.memory)
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

static void job_made_v2(struct ps_cgroup_job *job)
{
    job->has_kill = ps_cg_file_exists(job->dir[0], "cgroup.kill");
    job->has_peak = ps_cg_file_exists(job->dir[0], "memory.peak");
    /* One OOM kill takes the whole job down, as YTsaurus fails the whole job. Best effort:
     * kernels before 4.19 lack it and the runner kills the rest itself. */
    if (job->caps.memory)
        (void)ps_cg_write_file(job->dir[0], "memory.oom.group", "1", NULL);
}

static int set_cpu_quota_v2(struct ps_cgroup_job *job, int64_t quota, struct ps_error *err)
{
    char value[64];
    if (quota < 0)
        snprintf(value, sizeof value, "max %d", PS_CGROUP_CPU_PERIOD_US);
    else
        snprintf(value, sizeof value, "%lld %d", (long long)quota, PS_CGROUP_CPU_PERIOD_US);
    return ps_cg_write_changed(job->dir[0], "cpu.max", value, job->last_cpu_quota,
                               sizeof job->last_cpu_quota, err);
}

static int set_cpu_weight_v2(struct ps_cgroup_job *job, double cores, struct ps_error *err)
{
    char value[32];
    snprintf(value, sizeof value, "%lld", (long long)ps_cgroup_cpu_weight_v2(cores));
    return ps_cg_write_changed(job->dir[0], "cpu.weight", value, job->last_cpu_weight,
                               sizeof job->last_cpu_weight, err);
}

static int set_memory_limit_v2(struct ps_cgroup_job *job, int64_t bytes, struct ps_error *err)
{
    char value[32];
    if (bytes <= 0)
        snprintf(value, sizeof value, "max");
    else
        snprintf(value, sizeof value, "%lld", (long long)bytes);
    return ps_cg_write_changed(job->dir[0], "memory.max", value, job->last_memory_limit,
                               sizeof job->last_memory_limit, err);
}

static int read_v2(struct ps_cgroup_job *job, struct ps_cgroup_usage *out, struct ps_error *err)
{
    const char *d = job->dir[0];
    int rc = ps_cg_job_read_key(job, d, "cpu.stat", "usage_usec", &out->cpu_usec, err);
    if (rc == 0 && job->caps.cpu_limit)
        rc = ps_cg_job_read_key(job, d, "cpu.stat", "nr_throttled", &out->cpu_throttled_periods,
                                err);
    if (rc == 0 && job->caps.memory) {
        rc = ps_cg_job_read_int(job, d, "memory.current", &out->memory_bytes, err);
        if (rc == 0 && job->has_peak)
            rc = ps_cg_job_read_int(job, d, "memory.peak", &out->memory_peak_bytes, err);
        if (rc == 0)
            rc = ps_cg_job_read_key(job, d, "memory.events", "oom_kill", &out->oom_kills, err);
        if (rc == 0)
            rc = ps_cg_job_read_key(job, d, "memory.events", "max", &out->limit_hits, err);
    }
    return rc;
}

const struct ps_cg_backend ps_cg_v2 = {
    .setup = setup_v2,
    .teardown = teardown_v2,
    .parent_remade = parent_remade_v2,
    .job_made = job_made_v2,
    .set_cpu_quota = set_cpu_quota_v2,
    .set_cpu_weight = set_cpu_weight_v2,
    .set_memory_limit = set_memory_limit_v2,
    .read = read_v2,
};
