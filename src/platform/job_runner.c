#include "platform/job_runner.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/job_process.h"
#include "platform/procfs.h"
#include "platform/sandbox.h"

#define KILL_WAIT_MS 1000       /* how long a kill waits for a job cgroup to empty */
#define OUTPUT_WAIT_MS 500      /* how long a finished job's pipes may take to reach EOF */
#define REASON_MAX 64

struct env_list {
    char **items;               /* "K=V", NULL-terminated */
    size_t count, cap;
};

struct ps_job_runner {
    struct ps_job_runner_config cfg;
    char job_id[130];
    char sandbox[PATH_MAX];
    bool tmpfs_mounted;
    bool switch_user;
    uid_t uid;
    gid_t gid;
    struct env_list env;

    struct ps_cgroup_job *cg;   /* NULL without cgroups */
    struct ps_cgroup_caps caps; /* of cg, all false without */
    struct ps_capture *capture;
    struct ps_job_process proc;
    int64_t memory_limit_bytes;
    int64_t start_ms;
    int64_t last_tick_ms;

    struct ps_job_usage usage;
    bool kill_sent;
    bool abort_requested;
    char abort_reason[REASON_MAX];
    bool interrupted;
    int64_t interrupt_deadline_ms;
    char interrupt_reason[REASON_MAX];
    bool memory_limit_exceeded;
    bool finished;
    bool cleaned;
    struct ps_job_result result;
};

void ps_job_runner_config_init(struct ps_job_runner_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->job_user = "nobody";
    cfg->stdout_cap_bytes = 1 << 20;
    cfg->stderr_cap_bytes = 5 << 20;
}

const char *ps_job_outcome_name(enum ps_job_outcome o)
{
    switch (o) {
    case PS_JOB_RUNNING: return "running";
    case PS_JOB_COMPLETED: return "completed";
    case PS_JOB_FAILED: return "failed";
    case PS_JOB_ABORTED: return "aborted";
    }
    return "unknown";
}

/* ---------------------------------------------------------------------------------------------
 * Environment
 * ------------------------------------------------------------------------------------------- */

static void env_free(struct env_list *e)
{
    for (size_t i = 0; i < e->count; i++)
        free(e->items[i]);
    free(e->items);
    memset(e, 0, sizeof *e);
}

/* Sets KEY=VALUE (entry already formatted), replacing an earlier value of KEY. */
static int env_put(struct env_list *e, char *entry, struct ps_error *err)
{
    if (!entry)
        return ps_error_set(err, PS_ENOMEM, "job environment: out of memory");
    size_t klen = (size_t)(strchr(entry, '=') - entry);
    for (size_t i = 0; i < e->count; i++)
        if (strncmp(e->items[i], entry, klen + 1) == 0) {
            free(e->items[i]);
            e->items[i] = entry;
            return 0;
        }
    if (e->count + 2 > e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 32;
        char **items = realloc(e->items, cap * sizeof *items);
        if (!items) {
            free(entry);
            return ps_error_set(err, PS_ENOMEM, "job environment: out of memory");
        }
        e->items = items;
        e->cap = cap;
    }
    e->items[e->count++] = entry;
    e->items[e->count] = NULL;
    return 0;
}

static char *format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static int build_env(struct ps_job_runner *r, const struct ps_job_spec *spec,
                     const char *user_name, struct ps_error *err)
{
    struct env_list *e = &r->env;
    int rc = env_put(e, format("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
                     err);
    if (rc == 0)
        rc = env_put(e, format("HOME=%s", r->sandbox), err);
    if (rc == 0)
        rc = env_put(e, format("TMPDIR=%s", r->sandbox), err);
    if (rc == 0)
        rc = env_put(e, format("USER=%s", user_name), err);
    if (rc == 0)
        rc = env_put(e, format("LOGNAME=%s", user_name), err);
    for (size_t i = 0; rc == 0 && spec->environment && spec->environment[i]; i++) {
        const char *kv = spec->environment[i];
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            return ps_error_set(err, PS_EINVAL, "environment entry \"%.60s\" must be KEY=VALUE "
                                "with a non-empty KEY", kv);
        rc = env_put(e, format("%s", kv), err);
    }
    /* The job's identity last, so a task cannot spoof it. YT_* are YTsaurus's names. */
    const char *op = spec->operation_id ? spec->operation_id : "";
    const char *task = spec->task_name ? spec->task_name : "";
    long long idx = (long long)spec->job_index;
    if (rc == 0)
        rc = env_put(e, format("POOLSCHED_OPERATION_ID=%s", op), err);
    if (rc == 0)
        rc = env_put(e, format("POOLSCHED_JOB_ID=%s", spec->job_id), err);
    if (rc == 0)
        rc = env_put(e, format("POOLSCHED_JOB_INDEX=%lld", idx), err);
    if (rc == 0)
        rc = env_put(e, format("POOLSCHED_TASK_NAME=%s", task), err);
    if (rc == 0)
        rc = env_put(e, format("YT_OPERATION_ID=%s", op), err);
    if (rc == 0)
        rc = env_put(e, format("YT_JOB_ID=%s", spec->job_id), err);
    if (rc == 0)
        rc = env_put(e, format("YT_JOB_INDEX=%lld", idx), err);
    if (rc == 0 && spec->slot_index >= 0)
        rc = env_put(e, format("POOLSCHED_SLOT_INDEX=%d", spec->slot_index), err);
    if (rc == 0 && spec->slot_index >= 0)
        rc = env_put(e, format("YT_SLOT_INDEX=%d", spec->slot_index), err);
    if (rc == 0 && r->cfg.marker_env)
        rc = env_put(e, format("%s", r->cfg.marker_env), err);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Start
 * ------------------------------------------------------------------------------------------- */

static int resolve_user(struct ps_job_runner *r, const struct ps_job_spec *spec, char *name,
                        size_t name_size, struct ps_error *err)
{
    if (geteuid() != 0) {
        /* Not root: the job runs as the agent's user; there is nothing to switch to. */
        r->uid = geteuid();
        r->gid = getegid();
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwuid_r(r->uid, &pw, buf, sizeof buf, &res) == 0 && res)
            snprintf(name, name_size, "%s", res->pw_name);
        else
            snprintf(name, name_size, "%d", (int)r->uid);
        return 0;
    }
    if (!r->cfg.job_user && r->cfg.slot_uid_base > 0) {
        /* The slot's own uid and gid: no other slot's job can read its sandbox or signal its
         * processes. A numeric id needs no passwd entry; the agent checked at start that none
         * of its slot uids belongs to an account. */
        if (spec->slot_index < 0 || r->cfg.slot_uid_base + spec->slot_index > 0x7ffffffe)
            return ps_error_set(err, PS_ESTATE, "job %s: no valid slot (index %d)",
                                spec->job_id, spec->slot_index);
        r->uid = (uid_t)(r->cfg.slot_uid_base + spec->slot_index);
        r->gid = (gid_t)r->uid;
        r->switch_user = true;
        snprintf(name, name_size, "%d", (int)r->uid);
        return 0;
    }
    const char *user = r->cfg.job_user ? r->cfg.job_user : "nobody";
    struct passwd pw, *res = NULL;
    char buf[4096];
    int e = getpwnam_r(user, &pw, buf, sizeof buf, &res);
    if (e != 0 || !res)
        return ps_error_set(err, PS_ENOENT, "job user \"%s\": %s", user,
                            e ? strerror(e) : "no such user");
    if (res->pw_uid == 0)
        return ps_error_set(err, PS_EINVAL, "job user \"%s\" is root (uid 0); jobs never run "
                            "as root", user);
    r->uid = res->pw_uid;
    r->gid = res->pw_gid;
    r->switch_user = true;
    snprintf(name, name_size, "%s", user);
    return 0;
}

static int setup_cgroup(struct ps_job_runner *r, const struct ps_job_spec *spec,
                        struct ps_error *err)
{
    struct ps_cgroup_system *sys = r->cfg.cgroups;
    if (!sys || ps_cgroup_system_mode(sys) == PS_CGROUP_NONE)
        return 0;
    int rc = ps_cgroup_job_create(sys, spec->job_id, &r->cg, err);
    if (rc != 0)
        return rc;
    r->caps = ps_cgroup_job_caps(r->cg);
    double guarantee = spec->cpu_guarantee >= 0 ? spec->cpu_guarantee : spec->cpu_limit;
    if (r->caps.cpu_limit)
        rc = ps_cgroup_job_set_cpu_limit(r->cg, spec->cpu_limit, err);
    if (rc == 0 && r->caps.cpu_weight && guarantee > 0)
        rc = ps_cgroup_job_set_cpu_guarantee(r->cg, guarantee, err);
    if (rc == 0 && r->caps.memory)
        rc = ps_cgroup_job_set_memory_limit(r->cg, spec->memory_limit_bytes, err);
    if (rc == 0)
        rc = ps_cgroup_job_unset_limits_default(r->cg, err);
    return rc;
}

static void undo_start(struct ps_job_runner *r)
{
    ps_job_process_release(&r->proc);
    ps_capture_free(r->capture);
    r->capture = NULL;
    (void)ps_cgroup_job_destroy(r->cg, NULL);
    r->cg = NULL;
    if (r->sandbox[0])
        (void)ps_sandbox_remove(r->sandbox, NULL);
    env_free(&r->env);
    free(r);
}

int ps_job_runner_start(const struct ps_job_runner_config *cfg, const struct ps_job_spec *spec,
                        int64_t now_ms, struct ps_job_runner **out, struct ps_error *err)
{
    *out = NULL;
    if (!cfg->work_dir)
        return ps_error_set(err, PS_EINVAL, "job runner: work_dir is not set");
    if (!spec->job_id || !spec->command)
        return ps_error_set(err, PS_EINVAL, "job: job_id and command are required");
    if (isnan(spec->cpu_limit) || isnan(spec->cpu_guarantee))
        return ps_error_set(err, PS_EINVAL, "job %s: cpu_limit and cpu_guarantee must be "
                            "numbers", spec->job_id);
    if (spec->tmpfs_size_bytes < 0)
        return ps_error_set(err, PS_EINVAL, "job %s: tmpfs_size %lld must be >= 0",
                            spec->job_id, (long long)spec->tmpfs_size_bytes);
    struct ps_job_runner *r = calloc(1, sizeof *r);
    if (!r)
        return ps_error_set(err, PS_ENOMEM, "job runner: out of memory");
    r->cfg = *cfg;
    snprintf(r->job_id, sizeof r->job_id, "%s", spec->job_id);
    r->memory_limit_bytes = spec->memory_limit_bytes > 0 ? spec->memory_limit_bytes : 0;
    r->start_ms = r->last_tick_ms = now_ms;
    r->usage.cpu_source = r->usage.memory_source = PS_JOB_SOURCE_PROCFS;

    char user_name[256];
    int rc = resolve_user(r, spec, user_name, sizeof user_name, err);
    if (rc == 0)
        rc = ps_sandbox_acquire(cfg->sandbox_pool, cfg->work_dir, spec->job_id,
                                r->switch_user, r->uid, r->gid, r->sandbox, sizeof r->sandbox,
                                err);
    if (rc == 0 && spec->tmpfs_size_bytes > 0) {
        rc = ps_sandbox_mount_tmpfs(r->sandbox, spec->tmpfs_size_bytes, r->uid, r->gid, err);
        r->tmpfs_mounted = rc == 0;
    }
    if (rc == 0)
        rc = build_env(r, spec, user_name, err);
    if (rc == 0)
        rc = setup_cgroup(r, spec, err);
    if (r->caps.cpu_usage)
        r->usage.cpu_source = PS_JOB_SOURCE_CGROUP;
    if (r->caps.memory)
        r->usage.memory_source = PS_JOB_SOURCE_CGROUP;

    int out_fd = -1, err_fd = -1;
    if (rc == 0) {
        char out_path[PATH_MAX + 8], err_path[PATH_MAX + 8];
        snprintf(out_path, sizeof out_path, "%s/stdout", r->sandbox);
        snprintf(err_path, sizeof err_path, "%s/stderr", r->sandbox);
        rc = ps_capture_start(out_path, cfg->stdout_cap_bytes, err_path, cfg->stderr_cap_bytes,
                              &out_fd, &err_fd, &r->capture, err);
    }
    if (rc == 0) {
        struct ps_job_process_spec ps = {
            .command = spec->command,
            .shell = cfg->shell,
            .cwd = r->sandbox,
            .envp = r->env.items,
            .switch_user = r->switch_user,
            .uid = r->uid,
            .gid = r->gid,
            .stdout_fd = out_fd,
            .stderr_fd = err_fd,
            .join_procs = r->cg ? ps_cgroup_job_procs_files(r->cg) : NULL,
            .die_with_parent = cfg->die_with_agent,
        };
        rc = ps_job_process_spawn(&ps, &r->proc, err);
        close(out_fd);
        close(err_fd);
    }
    if (rc != 0) {
        ps_error_prefix(err, "starting job %s", spec->job_id);
        undo_start(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Running
 * ------------------------------------------------------------------------------------------- */

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Kills the process group and the cgroup. */
static int kill_all(struct ps_job_runner *r, int wait_ms, struct ps_error *err)
{
    r->kill_sent = true;
    int rc = ps_job_process_signal(&r->proc, SIGKILL, err);
    if (r->cg) {
        int k = ps_cgroup_job_kill(r->cg, wait_ms, err);
        if (rc == 0 && k != PS_ESTATE)     /* still emptying: the next kill retries */
            rc = k;
    }
    return rc;
}

/* Reads usage into r->usage; returns the cgroup reading's oom_kills/limit_hits. */
static int sample(struct ps_job_runner *r, int64_t *oom_kills, int64_t *limit_hits,
                  int64_t *procfs_rss, struct ps_error *err)
{
    *oom_kills = *limit_hits = -1;
    *procfs_rss = -1;
    int rc = 0;
    struct ps_job_usage *u = &r->usage;
    if (r->cg) {
        struct ps_cgroup_usage cu;
        rc = ps_cgroup_job_read(r->cg, &cu, err);
        if (rc == 0) {
            if (r->caps.cpu_usage && cu.cpu_usec >= 0)
                u->cpu_seconds = fmax(u->cpu_seconds, (double)cu.cpu_usec / 1e6);
            if (r->caps.memory && cu.memory_bytes >= 0) {
                u->memory_bytes = cu.memory_bytes;
                u->memory_peak_bytes = max64(u->memory_peak_bytes,
                                             max64(cu.memory_bytes, cu.memory_peak_bytes));
            }
            *oom_kills = cu.oom_kills;
            *limit_hits = cu.limit_hits;
        }
    }
    if (!r->caps.cpu_usage || !r->caps.memory) {
        struct ps_procfs_group_usage gu;
        const char *proc_root = r->cfg.proc_root ? r->cfg.proc_root : "/proc";
        int prc = ps_procfs_group_usage(proc_root, r->proc.pid, &gu, err);
        if (prc == 0) {
            if (!r->caps.cpu_usage)
                u->cpu_seconds = fmax(u->cpu_seconds, gu.cpu_seconds);
            if (!r->caps.memory) {
                u->memory_bytes = gu.rss_bytes;
                u->memory_peak_bytes = max64(u->memory_peak_bytes,
                                             max64(gu.rss_bytes, gu.max_process_hwm_bytes));
                *procfs_rss = gu.rss_bytes;
            }
        } else if (rc == 0) {
            rc = prc;
        }
    }
    return rc;
}

static void mark_memory_limit(struct ps_job_runner *r)
{
    if (!r->abort_requested)
        r->memory_limit_exceeded = true;
}

static void mark_abort(struct ps_job_runner *r, const char *reason)
{
    if (!r->abort_requested && !r->memory_limit_exceeded) {
        r->abort_requested = true;
        snprintf(r->abort_reason, sizeof r->abort_reason, "%s", reason ? reason : "aborted");
    }
}

/* Reads the job's memory cgroup counters after an OOM kill: the job's own limit when the
 * cgroup hit it (limit_hits), else the node's OOM killer picked it. Returns true when the job
 * must end. Kernels without an oom_kill counter (< 4.13, v1) only show that the limit was hit,
 * which counts when the job then did not succeed. */
static bool check_oom(struct ps_job_runner *r, int64_t oom_kills, int64_t limit_hits,
                      bool exited)
{
    if (!r->caps.memory)
        return false;
    bool own_limit = r->memory_limit_bytes > 0 && limit_hits > 0;
    if (oom_kills > 0) {
        if (own_limit)
            mark_memory_limit(r);
        else
            mark_abort(r, "resource_overdraft");
        return true;
    }
    if (oom_kills < 0 && exited && own_limit && ps_job_process_exit_code(&r->proc) != 0) {
        mark_memory_limit(r);
        return true;
    }
    return false;
}

static void settle(struct ps_job_runner *r, int64_t now_ms)
{
    struct ps_job_result *res = &r->result;
    res->exit_code = ps_job_process_exit_code(&r->proc);
    res->term_signal = ps_job_process_term_signal(&r->proc);
    res->interrupted = r->interrupted;
    res->memory_limit_exceeded = r->memory_limit_exceeded;
    if (r->memory_limit_exceeded) {
        res->outcome = PS_JOB_FAILED;
        snprintf(res->error, sizeof res->error, "Memory limit exceeded");
    } else if (r->abort_requested) {
        res->outcome = PS_JOB_ABORTED;
        snprintf(res->abort_reason, sizeof res->abort_reason, "%s", r->abort_reason);
    } else if (r->interrupted && res->exit_code != 0) {
        res->outcome = PS_JOB_ABORTED;
        snprintf(res->abort_reason, sizeof res->abort_reason, "%s", r->interrupt_reason);
    } else if (res->exit_code == 0) {
        res->outcome = PS_JOB_COMPLETED;
    } else {
        res->outcome = PS_JOB_FAILED;
        if (res->term_signal)
            snprintf(res->error, sizeof res->error, "Process was killed by signal %d (%s)",
                     res->term_signal, strsignal(res->term_signal));
        else
            snprintf(res->error, sizeof res->error, "Process exited with code %d",
                     res->exit_code);
    }
    res->usage = r->usage;
    res->duration_ms = now_ms - r->start_ms;
    if (r->capture) {
        res->stdout_bytes = ps_capture_total_bytes(r->capture, PS_CAPTURE_STDOUT);
        res->stderr_bytes = ps_capture_total_bytes(r->capture, PS_CAPTURE_STDERR);
        res->stdout_truncated = ps_capture_truncated(r->capture, PS_CAPTURE_STDOUT);
        res->stderr_truncated = ps_capture_truncated(r->capture, PS_CAPTURE_STDERR);
    }
    r->finished = true;
}

/* The shell has been reaped: kill the rest, take the last readings, close the outputs. */
static int finish(struct ps_job_runner *r, int64_t now_ms, struct ps_error *err)
{
    int rc = kill_all(r, KILL_WAIT_MS, err);
    int64_t oom_kills, limit_hits, rss;
    int s = sample(r, &oom_kills, &limit_hits, &rss, err);
    if (rc == 0)
        rc = s;
    struct ps_job_usage *u = &r->usage;
    if (!r->caps.cpu_usage)
        u->cpu_seconds = fmax(u->cpu_seconds, ps_job_process_rusage_cpu_seconds(&r->proc));
    u->memory_peak_bytes = max64(u->memory_peak_bytes,
                                 ps_job_process_rusage_maxrss_bytes(&r->proc));
    (void)check_oom(r, oom_kills, limit_hits, true);
    if (r->capture) {
        int c = ps_capture_finish(r->capture, OUTPUT_WAIT_MS, err);
        if (rc == 0)
            rc = c;
    }
    settle(r, now_ms);
    return rc;
}

int ps_job_runner_tick(struct ps_job_runner *r, int64_t now_ms, struct ps_job_status *status,
                       struct ps_error *err)
{
    r->last_tick_ms = now_ms;
    if (r->finished) {
        status->finished = true;
        status->usage = r->result.usage;
        return 0;
    }
    int64_t oom_kills, limit_hits, rss;
    int rc = sample(r, &oom_kills, &limit_hits, &rss, err);
    bool exited;
    int p = ps_job_process_poll(&r->proc, &exited, err);
    if (rc == 0)
        rc = p;
    if (p == 0 && exited) {
        int f = finish(r, now_ms, err);
        if (rc == 0)
            rc = f;
    } else if (p == 0) {
        /* With a memory cgroup the kernel enforces the limit and the counters say whom it
         * killed; without one the sampled RSS is all there is. Either way the whole job ends
         * now, not when its shell notices. */
        bool end = false;
        if (!r->memory_limit_exceeded && !r->abort_requested) {
            if (r->caps.memory) {
                end = check_oom(r, oom_kills, limit_hits, false);
            } else if (r->memory_limit_bytes > 0 && rss > r->memory_limit_bytes) {
                mark_memory_limit(r);
                end = true;
            }
        }
        if (end && !r->kill_sent) {
            int k = kill_all(r, 0, err);
            if (rc == 0)
                rc = k;
        }
        if (r->interrupted && !r->kill_sent && now_ms >= r->interrupt_deadline_ms) {
            int a = ps_job_runner_abort(r, r->interrupt_reason, err);
            if (rc == 0)
                rc = a;
        }
    }
    status->finished = r->finished;
    status->usage = r->usage;
    return rc;
}

int ps_job_runner_reap(struct ps_job_runner *r, int64_t now_ms, struct ps_job_status *status,
                       struct ps_error *err)
{
    int rc = 0;
    if (!r->finished) {
        r->last_tick_ms = now_ms;
        bool exited;
        rc = ps_job_process_poll(&r->proc, &exited, err);
        if (rc == 0 && exited)
            rc = finish(r, now_ms, err);
    }
    status->finished = r->finished;
    status->usage = r->finished ? r->result.usage : r->usage;
    return rc;
}

int ps_job_runner_set_cpu_guarantee(struct ps_job_runner *r, double cores,
                                    struct ps_error *err)
{
    if (r->finished)
        return ps_error_set(err, PS_ESTATE, "job %s has finished", r->job_id);
    if (!r->cg || !r->caps.cpu_weight)
        return ps_error_set(err, PS_ESTATE, "job %s: no cpu cgroup on this node, the CPU "
                            "guarantee cannot be applied", r->job_id);
    return ps_cgroup_job_set_cpu_guarantee(r->cg, cores, err);
}

bool ps_job_runner_cpu_guarantee_cb(void *ctx, double cores)
{
    return ps_job_runner_set_cpu_guarantee(ctx, cores, NULL) == 0;
}

int ps_job_runner_interrupt(struct ps_job_runner *r, int64_t now_ms, int64_t timeout_ms,
                            const char *reason, struct ps_error *err)
{
    if (r->finished)
        return ps_error_set(err, PS_ESTATE, "job %s has finished", r->job_id);
    if (!r->interrupted) {
        r->interrupted = true;
        r->interrupt_deadline_ms = now_ms + (timeout_ms > 0 ? timeout_ms : 0);
        snprintf(r->interrupt_reason, sizeof r->interrupt_reason, "%s",
                 reason ? reason : "interrupted");
    }
    return ps_job_process_signal(&r->proc, SIGINT, err);
}

int ps_job_runner_abort(struct ps_job_runner *r, const char *reason, struct ps_error *err)
{
    if (r->finished)
        return 0;
    mark_abort(r, reason);
    return kill_all(r, 0, err);
}

const struct ps_job_result *ps_job_runner_result(const struct ps_job_runner *r)
{
    return &r->result;
}

int ps_job_runner_read_output(struct ps_job_runner *r, enum ps_capture_stream s, char **data,
                              size_t *len, struct ps_error *err)
{
    return ps_capture_read(r->capture, s, data, len, err);
}

const char *ps_job_runner_sandbox(const struct ps_job_runner *r)
{
    return r->sandbox;
}

pid_t ps_job_runner_pgid(const struct ps_job_runner *r)
{
    return r->proc.pid;
}

uid_t ps_job_runner_uid(const struct ps_job_runner *r)
{
    return r->uid;
}

int ps_job_runner_cleanup(struct ps_job_runner *r, struct ps_error *err)
{
    if (r->cleaned)
        return 0;
    r->cleaned = true;
    int rc = 0;
    if (!r->finished) {
        rc = ps_job_runner_abort(r, "cleanup", err);
        bool exited = false;
        int w = ps_job_process_wait(&r->proc, 2000, &exited, err);
        if (rc == 0)
            rc = w;
        if (!exited)
            ps_job_process_release(&r->proc);   /* blocks until the SIGKILLed shell is gone */
        int f = finish(r, r->last_tick_ms, err);   /* the last time the agent told us */
        if (rc == 0)
            rc = f;
    }
    if (r->cg) {
        int d = ps_cgroup_job_destroy(r->cg, err);
        r->cg = NULL;
        if (rc == 0)
            rc = d;
    }
    if (r->sandbox[0]) {
        int s = r->cfg.keep_sandbox ? ps_sandbox_unmount_tmpfs(r->sandbox, err)
                                    : ps_sandbox_release(r->cfg.sandbox_pool, r->sandbox, err);
        if (rc == 0)
            rc = s;
    }
    return rc;
}

void ps_job_runner_free(struct ps_job_runner *r)
{
    if (!r)
        return;
    (void)ps_job_runner_cleanup(r, NULL);
    ps_capture_free(r->capture);
    env_free(&r->env);
    free(r);
}
