#include "node/runner_platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

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
    struct ps_job_runner *r = NULL;
    int rc = ps_job_runner_start(&c->cfg, &js, now_ms, &r, err);
    if (rc != 0)
        return rc;
    *job = r;
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
    int rc = ps_job_runner_tick(job, now_ms, &st, err);
    to_sample(&st, out);
    return rc;
}

static int p_reap(void *job, int64_t now_ms, struct ps_node_job_sample *out,
                  struct ps_error *err)
{
    struct ps_job_status st;
    memset(&st, 0, sizeof st);
    int rc = ps_job_runner_reap(job, now_ms, &st, err);
    to_sample(&st, out);
    return rc;
}

static int p_set(void *job, double cores, struct ps_error *err)
{
    return ps_job_runner_set_cpu_guarantee(job, cores, err);
}

static int p_interrupt(void *job, int64_t now_ms, int64_t timeout_ms, const char *reason,
                       struct ps_error *err)
{
    return ps_job_runner_interrupt(job, now_ms, timeout_ms, reason, err);
}

static int p_abort(void *job, const char *reason, struct ps_error *err)
{
    return ps_job_runner_abort(job, reason, err);
}

static void p_result(void *job, struct ps_node_job_end *out)
{
    const struct ps_job_result *r = ps_job_runner_result(job);
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
    int rc = ps_job_runner_read_output(job, PS_CAPTURE_STDERR, data, len, err);
    *truncated = ps_job_runner_result(job)->stderr_truncated;
    return rc;
}

static void p_free(void *job)
{
    struct ps_job_runner *r = job;
    if (!r)
        return;
    ps_job_runner_cleanup(r, NULL);
    ps_job_runner_free(r);
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
    if (!c->work_dir || (cfg->job_user && !c->job_user)) {
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
    if (c->job_user)
        c->cfg.job_user = c->job_user;
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
    free(c);
    memset(r, 0, sizeof *r);
}
