#include "node/runner_platform.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/cgroup.h"
#include "platform/daemon.h"
#include "platform/job_guard.h"
#include "platform/job_runner.h"
#include "platform/sandbox.h"

struct platform_ctx {
    struct ps_job_runner_config cfg;
    struct ps_cgroup_system *cgroups;
    struct ps_sandbox_pool *sandboxes;
    char *work_dir;
    char *job_user;
    char marker_env[96];
    struct ps_job_guard *guard;
    bool *slot_busy;                /* [slot_cap]: held by a job until it is freed */
    int slot_count;                 /* user_slots: the ids checked at start */
    int slot_cap;                   /* >= slot_count: more when a scheduler over-commits */
    char users[192];                /* who jobs run as, for the start log */
};

/* A started job: its runner and the slot it holds. */
struct pjob {
    struct ps_job_runner *r;
    struct platform_ctx *c;
    int slot;
};

#define R(job) (((struct pjob *)(job))->r)

/* Refuses slot uids (and their gids, the same numbers) that belong to an account or group:
 * a job would share that identity with its processes and files. */
static int check_slot_ids(int64_t base, int64_t first, int64_t count, struct ps_error *err)
{
    if (base < 1 || base + first + count - 1 > 0x7ffffffe)
        return ps_error_set(err, PS_EINVAL, "--slot-uid-base %lld: slot uids %lld..%lld must be "
                            "in 1..2147483646", (long long)base, (long long)(base + first),
                            (long long)(base + first + count - 1));
    for (int64_t i = first; i < first + count; i++) {
        char buf[4096];
        struct passwd pw, *pres = NULL;
        if (getpwuid_r((uid_t)(base + i), &pw, buf, sizeof buf, &pres) == 0 && pres)
            return ps_error_set(err, PS_EINVAL, "slot uid %lld (slot %lld = --slot-uid-base "
                                "%lld + %lld) is user \"%.64s\" on this machine; jobs need uids "
                                "no account has: choose another --slot-uid-base",
                                (long long)(base + i), (long long)i, (long long)base,
                                (long long)i, pres->pw_name);
        struct group gr, *gres = NULL;
        if (getgrgid_r((gid_t)(base + i), &gr, buf, sizeof buf, &gres) == 0 && gres)
            return ps_error_set(err, PS_EINVAL, "slot gid %lld (slot %lld = --slot-uid-base "
                                "%lld + %lld) is group \"%.64s\" on this machine; jobs need "
                                "gids no group has: choose another --slot-uid-base",
                                (long long)(base + i), (long long)i, (long long)base,
                                (long long)i, gres->gr_name);
    }
    return 0;
}

static int p_start(void *ctx, const struct ps_node_job_spec *spec, int64_t now_ms, void **job,
                   struct ps_error *err)
{
    struct platform_ctx *c = ctx;
    struct ps_job_spec js = {
        .operation_id = spec->operation_id,
        .job_id = spec->job_id,
        .task_name = spec->task_name,
        .job_index = spec->job_index,
        .command = spec->command,
        .environment = spec->environment,
        .cpu_limit = spec->cpu_limit,
        .cpu_guarantee = spec->cpu_guarantee,
        .memory_limit_bytes = spec->memory_limit_bytes,
        .tmpfs_size_bytes = spec->tmpfs_size_bytes,
    };
    /* The lowest free slot; it stays the job's until p_free, after every process of the job
     * was killed, so a slot's uid never has two jobs' processes. */
    int slot = 0;
    while (slot < c->slot_cap && c->slot_busy[slot])
        slot++;
    if (slot >= c->slot_cap) {
        /* More jobs than user_slots (a scheduler that over-commits, as the fake ones of the
         * tests do): a further slot with a uid of its own, checked now as the others were at
         * start; never a uid shared with a running job. */
        if (slot >= 100000)
            return ps_error_set(err, PS_ESTATE, "job %s: all %d slots are held", spec->job_id,
                                slot);
        if (c->cfg.slot_uid_base > 0) {
            struct ps_error e;
            ps_error_init(&e);
            if (check_slot_ids(c->cfg.slot_uid_base, slot, 1, &e) != 0)
                return ps_error_set(err, PS_ESTATE, "job %s: %d jobs on %d user slots, and "
                                    "%.200s", spec->job_id, slot + 1, c->slot_count, e.msg);
        }
        bool *busy = realloc(c->slot_busy, (size_t)(slot + 1) * sizeof *busy);
        if (!busy)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        busy[slot] = false;
        c->slot_busy = busy;
        c->slot_cap = slot + 1;
    }
    js.slot_index = slot;
    struct pjob *pj = calloc(1, sizeof *pj);
    if (!pj)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_job_runner_start(&c->cfg, &js, now_ms, &pj->r, err);
    if (rc != 0) {
        free(pj);
        return rc;
    }
    pj->c = c;
    pj->slot = slot;
    c->slot_busy[slot] = true;
    *job = pj;
    return 0;
}

/* A job runner's status as the node's sample. */
static void to_sample(const struct ps_job_status *st, struct ps_node_job_sample *out)
{
    out->finished = st->finished;
    out->cpu_seconds = st->usage.cpu_seconds;
    out->memory_bytes = st->usage.memory_bytes;
    out->memory_peak_bytes = st->usage.memory_peak_bytes;
}

static int p_tick(void *job, int64_t now_ms, struct ps_node_job_sample *out,
                  struct ps_error *err)
{
    struct ps_job_status st;
    memset(&st, 0, sizeof st);
    int rc = ps_job_runner_tick(R(job), now_ms, &st, err);
    to_sample(&st, out);
    return rc;
}

static int p_reap(void *job, int64_t now_ms, struct ps_node_job_sample *out,
                  struct ps_error *err)
{
    struct ps_job_status st;
    memset(&st, 0, sizeof st);
    int rc = ps_job_runner_reap(R(job), now_ms, &st, err);
    to_sample(&st, out);
    return rc;
}

static int p_set(void *job, double cores, struct ps_error *err)
{
    return ps_job_runner_set_cpu_guarantee(R(job), cores, err);
}

static int p_interrupt(void *job, int64_t now_ms, int64_t timeout_ms, const char *reason,
                       struct ps_error *err)
{
    return ps_job_runner_interrupt(R(job), now_ms, timeout_ms, reason, err);
}

static int p_abort(void *job, const char *reason, struct ps_error *err)
{
    return ps_job_runner_abort(R(job), reason, err);
}

static void p_result(void *job, struct ps_node_job_end *out)
{
    const struct ps_job_result *r = ps_job_runner_result(R(job));
    memset(out, 0, sizeof *out);
    switch (r->outcome) {
    case PS_JOB_COMPLETED: out->outcome = PS_NODE_OUTCOME_COMPLETED; break;
    case PS_JOB_FAILED: out->outcome = PS_NODE_OUTCOME_FAILED; break;
    case PS_JOB_ABORTED: out->outcome = PS_NODE_OUTCOME_ABORTED; break;
    default: out->outcome = PS_NODE_OUTCOME_RUNNING; break;
    }
    out->exit_code = r->exit_code;
    snprintf(out->error, sizeof out->error, "%s", r->error);
    snprintf(out->abort_reason, sizeof out->abort_reason, "%s", r->abort_reason);
    out->duration_ms = r->duration_ms;
    out->cpu_seconds = r->usage.cpu_seconds;
    out->memory_peak_bytes = r->usage.memory_peak_bytes;
}

static int p_read_stderr(void *job, char **data, size_t *len, bool *truncated,
                         struct ps_error *err)
{
    int rc = ps_job_runner_read_output(R(job), PS_CAPTURE_STDERR, data, len, err);
    *truncated = ps_job_runner_result(R(job))->stderr_truncated;
    return rc;
}

static void p_free(void *job)
{
    struct pjob *pj = job;
    if (!pj)
        return;
    ps_job_runner_cleanup(pj->r, NULL);
    ps_job_runner_free(pj->r);
    pj->c->slot_busy[pj->slot] = false;
    free(pj);
}


static void p_arm(void *ctx, int64_t kill_in_ms)
{
    struct platform_ctx *c = ctx;
    ps_job_guard_arm(c->guard, kill_in_ms);
}

static const struct ps_node_runner_ops platform_ops = {
    p_start, p_tick, p_set, p_interrupt, p_abort, p_result, p_read_stderr, p_free, p_reap,
    p_arm,
};

int ps_node_runner_platform_new(const struct ps_node_platform_config *cfg,
                                struct ps_node_runner *out, const char **summary,
                                struct ps_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = ps_daemon_make_dirs(cfg->work_dir, 0755, err);
    if (rc)
        return rc;
    struct platform_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    c->work_dir = strdup(cfg->work_dir);
    c->job_user = cfg->job_user ? strdup(cfg->job_user) : NULL;
    c->slot_count = cfg->user_slots > 0 ? (int)(cfg->user_slots < 100000 ? cfg->user_slots
                                                                          : 100000) : 1;
    c->slot_cap = c->slot_count;
    c->slot_busy = calloc((size_t)c->slot_count, sizeof *c->slot_busy);
    if (!c->work_dir || (cfg->job_user && !c->job_user) || !c->slot_busy) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto fail;
    }
    struct ps_cgroup_config cg = {
        .node_id = cfg->node_id,
        .instance_id = cfg->instance_id,
        .proc_root = NULL,
        .disable = cfg->disable_cgroups,
        .remove_stale_jobs = true,
        .job_pool_size = 16,    /* v1: reuse emptied job cgroups (no mkdir/rmdir per job) */
    };
    if ((rc = ps_cgroup_system_new(&cg, &c->cgroups, err)) != 0)
        goto fail;
    /* Emptied sandboxes are reused: no directory inode made and freed per job (sandbox.h). */
    if ((rc = ps_sandbox_pool_new(cfg->work_dir, 32, &c->sandboxes, err)) != 0)
        goto fail;
    ps_job_runner_config_init(&c->cfg);
    c->cfg.work_dir = c->work_dir;
    /* Who jobs run as: --job-user for all of them, else (root) the slot's own uid. */
    c->cfg.job_user = c->job_user;
    if (geteuid() != 0) {
        struct passwd pw, *res = NULL;
        char buf[4096];
        bool named = getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res) == 0 && res;
        snprintf(c->users, sizeof c->users, "not root: jobs run as the agent's user %.64s "
                 "(uid %d), not isolated from each other", named ? res->pw_name : "?",
                 (int)geteuid());
    } else if (c->job_user) {
        struct passwd pw, *res = NULL;
        char buf[4096];
        int e = getpwnam_r(c->job_user, &pw, buf, sizeof buf, &res);
        if (e != 0 || !res) {
            rc = ps_error_set(err, PS_EINVAL, "--job-user %.64s: %s", c->job_user,
                              e ? strerror(e) : "no such user");
            goto fail;
        }
        if (res->pw_uid == 0) {
            rc = ps_error_set(err, PS_EINVAL, "--job-user %.64s is root (uid 0); jobs never "
                              "run as root", c->job_user);
            goto fail;
        }
        snprintf(c->users, sizeof c->users, "jobs run as user %.64s (--job-user), all as one "
                 "user: not isolated from each other", c->job_user);
    } else {
        int64_t base = cfg->slot_uid_base > 0 ? cfg->slot_uid_base : PS_NODE_SLOT_UID_BASE;
        if ((rc = check_slot_ids(base, 0, c->slot_count, err)) != 0)
            goto fail;
        c->cfg.slot_uid_base = base;
        snprintf(c->users, sizeof c->users, "jobs run as slot uids %lld..%lld (uid = gid = "
                 "--slot-uid-base + slot index), sandboxes 0700", (long long)base,
                 (long long)(base + c->slot_count - 1));
    }
    if (cfg->stderr_cap_bytes > 0)
        c->cfg.stderr_cap_bytes = cfg->stderr_cap_bytes;
    if (cfg->stdout_cap_bytes > 0)
        c->cfg.stdout_cap_bytes = cfg->stdout_cap_bytes;
    c->cfg.cgroups = c->cgroups;
    c->cfg.keep_sandbox = cfg->keep_sandbox;
    c->cfg.sandbox_pool = c->sandboxes;
    c->cfg.die_with_agent = true;
    if (cfg->instance_id) {
        snprintf(c->marker_env, sizeof c->marker_env, "POOLSCHED_NODE_INSTANCE=%s",
                 cfg->instance_id);
        c->cfg.marker_env = c->marker_env;
    }
    if (cfg->guard) {
        const char *dirs[4] = {NULL, NULL, NULL, NULL};
        for (int i = 0; i < 3; i++)
            dirs[i] = ps_cgroup_system_dir(c->cgroups, i);
        struct ps_job_guard_config g = {
            .cgroup_dirs = dirs,
            .cgroup_v2 = ps_cgroup_system_mode(c->cgroups) == PS_CGROUP_V2,
            .marker_env = c->cfg.marker_env,
            .log_name = cfg->node_id,
        };
        if ((rc = ps_job_guard_start(&g, &c->guard, err)) != 0)
            goto fail;
    }

    struct ps_cgroup_caps caps = ps_cgroup_system_caps(c->cgroups);
    out->ops = &platform_ops;
    out->ctx = c;
    out->caps.cpu_limit = caps.cpu_limit;
    out->caps.cpu_weight = caps.cpu_weight;
    out->caps.memory_cgroup = caps.memory;
    if (summary)
        *summary = ps_cgroup_system_summary(c->cgroups);
    return 0;
fail:
    free(c->slot_busy);
    ps_sandbox_pool_free(c->sandboxes);
    ps_cgroup_system_free(c->cgroups);
    free(c->work_dir);
    free(c->job_user);
    free(c);
    return rc;
}

void ps_node_runner_platform_free(struct ps_node_runner *r)
{
    struct platform_ctx *c = r->ctx;
    if (!c)
        return;
    ps_job_guard_stop(c->guard);
    ps_sandbox_pool_free(c->sandboxes);
    ps_cgroup_system_free(c->cgroups);
    free(c->work_dir);
    free(c->job_user);
    free(c->slot_busy);
    free(c);
    memset(r, 0, sizeof *r);
}

const char *ps_node_runner_platform_users(const struct ps_node_runner *r)
{
    const struct platform_ctx *c = r->ctx;
    return c ? c->users : "";
}
