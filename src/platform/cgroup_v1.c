/* cgroup_v1.c — the cgroup v1 backend (cgroup_impl.h): a node cgroup in each of the cpu,
 * cpuacct and memory hierarchies (co-mounted ones share a directory), and a pool of emptied job
 * cgroups reused for the next jobs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/cgroup_impl.h"

static const char *const hier_name[H_COUNT] = {"cpu", "cpuacct", "memory"};

/* Tries one v1 hierarchy: creates poolsched-<node> below the agent and writes a harmless value
 * to prove that it can. */
static bool setup_v1_one(struct ps_cgroup_system *sys, const struct ps_cg_facts *f, int h, char *why,
                         size_t why_size)
{
    char agent[PATH_MAX];
    if (!ps_cg_agent_dir(f, hier_name[h], agent, sizeof agent, why, why_size))
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

/* Sets up every hierarchy it can; why lists, per hierarchy, why one is not used. */
static bool setup_v1(struct ps_cgroup_system *sys, const struct ps_cg_facts *f, char *why,
                     size_t why_size)
{
    char why_h[H_COUNT][REASON_MAX] = {"", "", ""};
    bool any = false;
    for (int h = 0; h < H_COUNT; h++)
        any |= setup_v1_one(sys, f, h, why_h[h], sizeof why_h[h]);
    sys->caps.cpu_limit = sys->caps.cpu_weight = sys->parent[H_CPU][0] != '\0';
    sys->caps.cpu_usage = sys->parent[H_CPUACCT][0] != '\0';
    sys->caps.memory = sys->parent[H_MEMORY][0] != '\0';
    if (!any || !(sys->caps.cpu_limit || sys->caps.memory || sys->caps.cpu_usage)) {
        ps_cg_put(why, why_size, "%s; %s; %s", why_h[H_CPU], why_h[H_CPUACCT], why_h[H_MEMORY]);
        return false;
    }
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
                why_h[h]);
    }
    return true;
}

static void pool_discard(struct ps_cgroup_job *job)
{
    ps_cg_job_close_reads(job);
    for (int h = 0; h < H_COUNT; h++)
        if (job->unique[h])
            (void)ps_cg_remove_dir(job->dir[h], 1000, NULL);
    free(job);
}

/* An emptied job cgroup renamed to job-<job_id>, or NULL (pool empty, or a step failed:
 * then the caller makes a fresh one). */
static struct ps_cgroup_job *reuse_from_pool(struct ps_cgroup_system *sys, const char *job_id)
{
    while (sys->pool_count > 0) {
        struct ps_cgroup_job *job = sys->pool[--sys->pool_count];
        char name[160], dir[H_COUNT][sizeof job->dir[0]];
        snprintf(name, sizeof name, "job-%s", job_id);
        bool ok = true;
        for (int h = 0; h < H_COUNT && ok; h++) {
            dir[h][0] = '\0';
            if (!job->dir[h][0])
                continue;
            /* the new name fits both here and in job->dir (the same size): checked once */
            ok = ps_cg_path_join(dir[h], sizeof dir[h], sys->parent[h], name);
        }
        for (int h = 0; h < H_COUNT && ok; h++) {
            if (!job->unique[h])
                continue;
            if (rename(job->dir[h], dir[h]) != 0) {
                ok = false;
                break;
            }
            /* co-mounted slots share the dir: move all of them along, slot h last (the others
             * are compared with it) */
            for (int k = H_COUNT - 1; k >= h; k--)
                if (strcmp(job->dir[k], job->dir[h]) == 0)
                    ok = ps_cg_path_copy(job->dir[k], sizeof job->dir[k], dir[h]) && ok;
        }
        int64_t v = 0;
        if (ok && job->caps.memory)
            ok = ps_cg_job_read_key(job, job->dir[H_MEMORY], "memory.oom_control", "oom_kill",
                                    &v, NULL) == 0;
        job->base_oom_kills = v;
        v = 0;
        if (ok && job->caps.cpu_limit)
            ok = ps_cg_job_read_key(job, job->dir[H_CPU], "cpu.stat", "nr_throttled", &v,
                                    NULL) == 0;
        job->base_throttled = v;
        if (!ok) {
            pool_discard(job);
            continue;
        }
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

static void teardown_v1(struct ps_cgroup_system *sys, bool idle)
{
    while (sys->pool_count > 0)
        pool_discard(sys->pool[--sys->pool_count]);
    for (int h = 0; idle && h < H_COUNT; h++)
        if (sys->created_parent[h])
            (void)rmdir(sys->parent[h]);
}

/* An emptied job cgroup goes to the pool while it has room and resets cleanly. */
static bool keep_v1(struct ps_cgroup_job *job)
{
    struct ps_cgroup_system *sys = job->sys;
    if (sys->pool_count >= sys->pool_size || !reset_for_pool(job))
        return false;
    sys->pool[sys->pool_count++] = job;
    return true;
}

static int set_cpu_quota_v1(struct ps_cgroup_job *job, int64_t quota, struct ps_error *err)
{
    char value[64];
    snprintf(value, sizeof value, "%lld", (long long)quota);
    if (job->last_cpu_quota[0] && strcmp(job->last_cpu_quota, value) == 0)
        return 0;
    char period[32];
    snprintf(period, sizeof period, "%d", PS_CGROUP_CPU_PERIOD_US);
    job->last_cpu_quota[0] = '\0';
    if (ps_cg_write_file(job->dir[H_CPU], "cpu.cfs_period_us", period, err) != 0)
        return PS_EIO;
    return ps_cg_write_changed(job->dir[H_CPU], "cpu.cfs_quota_us", value, job->last_cpu_quota,
                               sizeof job->last_cpu_quota, err);
}

static int set_cpu_weight_v1(struct ps_cgroup_job *job, double cores, struct ps_error *err)
{
    char value[32];
    snprintf(value, sizeof value, "%lld", (long long)ps_cgroup_cpu_shares_v1(cores));
    return ps_cg_write_changed(job->dir[H_CPU], "cpu.shares", value, job->last_cpu_weight,
                               sizeof job->last_cpu_weight, err);
}

static int set_memory_limit_v1(struct ps_cgroup_job *job, int64_t bytes, struct ps_error *err)
{
    char value[32];
    snprintf(value, sizeof value, "%lld", bytes <= 0 ? -1LL : (long long)bytes);
    return ps_cg_write_changed(job->dir[H_MEMORY], "memory.limit_in_bytes", value,
                               job->last_memory_limit, sizeof job->last_memory_limit, err);
}

/* The counters of a reused cgroup are read relative to their values at reuse. */
static int read_v1(struct ps_cgroup_job *job, struct ps_cgroup_usage *out, struct ps_error *err)
{
    int rc = 0;
    if (job->caps.cpu_limit)
        rc = ps_cg_job_read_key(job, job->dir[H_CPU], "cpu.stat", "nr_throttled",
                                &out->cpu_throttled_periods, err);
    if (rc == 0 && out->cpu_throttled_periods >= job->base_throttled)
        out->cpu_throttled_periods -= job->base_throttled;
    if (rc == 0 && job->caps.cpu_usage) {
        int64_t ns;
        rc = ps_cg_job_read_int(job, job->dir[H_CPUACCT], "cpuacct.usage", &ns, err);
        if (rc == 0)
            out->cpu_usec = ns / 1000;
    }
    if (rc == 0 && job->caps.memory) {
        const char *d = job->dir[H_MEMORY];
        rc = ps_cg_job_read_int(job, d, "memory.usage_in_bytes", &out->memory_bytes, err);
        if (rc == 0)
            rc = ps_cg_job_read_int(job, d, "memory.max_usage_in_bytes", &out->memory_peak_bytes,
                                    err);
        if (rc == 0)    /* oom_kill appeared in memory.oom_control in Linux 4.13 */
            rc = ps_cg_job_read_key(job, d, "memory.oom_control", "oom_kill", &out->oom_kills,
                                    err);
        if (rc == 0 && out->oom_kills >= job->base_oom_kills)
            out->oom_kills -= job->base_oom_kills;
        if (rc == 0)
            rc = ps_cg_job_read_int(job, d, "memory.failcnt", &out->limit_hits, err);
    }
    return rc;
}

const struct ps_cg_backend ps_cg_v1 = {
    .setup = setup_v1,
    .teardown = teardown_v1,
    .reuse = reuse_from_pool,
    .keep = keep_v1,
    .set_cpu_quota = set_cpu_quota_v1,
    .set_cpu_weight = set_cpu_weight_v1,
    .set_memory_limit = set_memory_limit_v1,
    .read = read_v1,
};
