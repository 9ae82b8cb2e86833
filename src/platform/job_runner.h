/* job_runner.h — everything the node agent does with one job's processes, in one place:
 * sandbox, user, environment, output capture, cgroup limits, CPU and memory accounting,
 * memory-limit enforcement, interruption, abort, the outcome, and clean-up.
 *
 * The agent's life of a job:
 *
 *   struct ps_job_runner *r;
 *   ps_job_runner_start(&node_cfg, &spec, now_ms, &r, err);        // running
 *   every tick (e.g. the CPU monitor's check_period, and more often for memory):
 *       ps_job_runner_tick(r, now_ms, &status, err);
 *       status.usage.cpu_seconds   -> ps_cpu_monitor_tick(..., total_cpu_seconds, ...)
 *       status.usage.memory_bytes  -> the memory overdraft rule (core/node_overdraft.h)
 *       if (status.finished) -> report ps_job_runner_result(r), read outputs, clean up
 *   CPU monitor decided:   ps_job_runner_set_cpu_guarantee(r, cores, err)
 *                          (or pass ps_job_runner_cpu_guarantee_cb as the monitor's try_set)
 *   preemption:            ps_job_runner_interrupt(r, now_ms, allocation_preemption_timeout_ms,
 *                                                  "preemption", err)
 *   abort (scheduler, overdraft, node shutdown):   ps_job_runner_abort(r, reason, err)
 *   then:                  ps_job_runner_read_output(r, PS_CAPTURE_STDERR, ...)  -> get_job_stderr
 *                          ps_job_runner_cleanup(r, err); ps_job_runner_free(r);
 *
 * Accounting sources, chosen per job from what the node's cgroups offer (cgroup.h):
 * - CPU seconds: the job cgroup's counter when it has one, else the sum over the process group
 *   from /proc (procfs.h), folded with wait4's rusage at exit; always non-decreasing.
 * - memory: the job cgroup's current charge when it has a memory cgroup, else the sum of VmRSS
 *   of the group; the peak is the maximum of everything seen: the cgroup's own peak, the
 *   samples, the largest single-process VmHWM, and wait4's ru_maxrss at exit.
 * - memory limit: with a memory cgroup the kernel enforces memory_limit and its oom_kill counter
 *   marks the job; without one the tick kills the job when the sampled RSS exceeds the limit —
 *   so a spike shorter than the tick interval can go unnoticed there.
 * - CPU limit: only with a cpu cgroup; otherwise jobs run unlimited (the node's summary says so).
 *
 * Outcome rules (struct ps_job_result), the first cause seen wins:
 * - the memory limit was exceeded: failed, "Memory limit exceeded" (with a memory cgroup: an
 *   OOM kill inside the job while its cgroup was at its limit);
 * - an OOM kill inside the job's memory cgroup while it was not at its own limit (the node's
 *   OOM killer chose it): aborted, "resource_overdraft";
 * - aborted by ps_job_runner_abort, or still running when an interrupt's timeout ran out:
 *   aborted with the given reason;
 * - interrupted and then exited by itself: completed if it exited 0, else aborted with the
 *   interrupt's reason (the job died because we asked it to stop, not because it is broken);
 * - exit code 0: completed; otherwise failed, "Process exited with code N" or
 *   "Process was killed by signal N (NAME)".
 * When a job finishes, whatever is left of its process group and cgroup is killed.
 */
#ifndef PS_PLATFORM_JOB_RUNNER_H
#define PS_PLATFORM_JOB_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"
#include "platform/capture.h"
#include "platform/cgroup.h"
#include "platform/sandbox.h"

/* Node-wide settings, shared by all jobs; the strings must outlive the runners. */
struct ps_job_runner_config {
    const char *work_dir;           /* sandboxes are <work_dir>/sandbox/<job_id> */
    const char *job_user;           /* when the agent is root: run every job as this user
                                     * (no isolation between jobs); NULL: the slot's uid when
                                     * slot_uid_base > 0, else "nobody". A user that resolves
                                     * to uid 0 is refused. */
    int64_t slot_uid_base;          /* > 0 (and job_user NULL, agent root): a job runs as uid
                                     * and gid slot_uid_base + its spec's slot_index, which
                                     * need no passwd entry (YTsaurus: start_uid + slot) */
    int64_t stdout_cap_bytes;       /* per job; see capture.h for what is kept */
    int64_t stderr_cap_bytes;
    struct ps_cgroup_system *cgroups;   /* NULL or mode NONE: no limits, /proc accounting */
    const char *proc_root;          /* NULL: "/proc" */
    const char *shell;              /* NULL: "/bin/sh" */
    bool keep_sandbox;              /* cleanup leaves the sandbox (debugging) */
    struct ps_sandbox_pool *sandbox_pool;   /* NULL: a new directory per job; else emptied
                                             * sandboxes are reused (sandbox.h) */
    bool die_with_agent;            /* the job's shell gets SIGKILL when the agent dies
                                     * (job_process.h die_with_parent) */
    const char *marker_env;         /* NULL, or "KEY=VALUE" put last in every job's environment
                                     * (the node's instance marker that job_guard.h looks for) */
};

/* Sets defaults: 1 MiB stdout, 5 MiB stderr (YTsaurus's max_stderr_size), user "nobody". */
void ps_job_runner_config_init(struct ps_job_runner_config *cfg);

/* One job. Strings are copied by start. */
struct ps_job_spec {
    const char *operation_id;
    const char *job_id;             /* 1..128 of [A-Za-z0-9._-] (names its sandbox and cgroup) */
    const char *task_name;
    int64_t job_index;
    const char *command;            /* run as sh -c COMMAND */
    const char *const *environment; /* the task's "KEY=VALUE" list, NULL-terminated; may be NULL */
    double cpu_limit;               /* cores, the hard limit; <= 0: unlimited */
    double cpu_guarantee;           /* cores, the initial weight; < 0: same as cpu_limit */
    int64_t memory_limit_bytes;     /* <= 0: none */
    int64_t tmpfs_size_bytes;       /* > 0: a tmpfs at <sandbox>/tmpfs (needs root) */
    int slot_index;                 /* the node slot the job holds (>= 0; in its environment
                                     * as YT_SLOT_INDEX and POOLSCHED_SLOT_INDEX); < 0: none */
};

enum ps_job_outcome {
    PS_JOB_RUNNING = 0,
    PS_JOB_COMPLETED,
    PS_JOB_FAILED,
    PS_JOB_ABORTED,
};

const char *ps_job_outcome_name(enum ps_job_outcome o);    /* "completed", ... */

enum ps_job_usage_source {
    PS_JOB_SOURCE_CGROUP = 0,
    PS_JOB_SOURCE_PROCFS,
};

struct ps_job_usage {
    double cpu_seconds;             /* cumulative, non-decreasing */
    int64_t memory_bytes;           /* current */
    int64_t memory_peak_bytes;      /* maximum so far */
    enum ps_job_usage_source cpu_source;
    enum ps_job_usage_source memory_source;
};

struct ps_job_status {
    bool finished;                  /* the outcome is known (ps_job_runner_result) */
    struct ps_job_usage usage;
};

struct ps_job_result {
    enum ps_job_outcome outcome;
    int exit_code;                  /* -1 when killed by a signal */
    int term_signal;                /* 0 when it exited */
    bool memory_limit_exceeded;
    bool interrupted;               /* SIGINT was sent */
    char error[160];                /* failed: why, e.g. "Memory limit exceeded" */
    char abort_reason[64];          /* aborted: e.g. "preemption", "resource_overdraft" */
    struct ps_job_usage usage;      /* final */
    int64_t duration_ms;
    int64_t stdout_bytes, stderr_bytes;     /* what the job wrote, kept or not */
    bool stdout_truncated, stderr_truncated;
};

struct ps_job_runner;

/* Creates the sandbox (and tmpfs), the job cgroup with its limits, the output capture, and
 * starts the command. Errors (nothing is left behind): PS_EINVAL for a bad spec (which key
 * and value); PS_ENOENT for an unknown job_user; PS_EPERM for a tmpfs without root; PS_EIO
 * from the step that failed; PS_ENOMEM. */
int ps_job_runner_start(const struct ps_job_runner_config *cfg, const struct ps_job_spec *spec,
                        int64_t now_ms, struct ps_job_runner **out, struct ps_error *err);

/* Samples usage, enforces the memory limit and an interrupt's deadline, and reaps the job
 * without blocking; when it has exited, kills what is left of it, finishes the output capture
 * and settles the result. After finished, further ticks only report the final usage.
 * Errors: PS_EIO when reading usage fails (the job keeps running; the status is still filled
 * from what could be read). */
int ps_job_runner_tick(struct ps_job_runner *r, int64_t now_ms, struct ps_job_status *status,
                       struct ps_error *err);

/* The cheap half of a tick: reaps the job without blocking (one wait4) and, when it has exited,
 * finishes it exactly as a tick would; no usage is sampled and no limit or deadline checked, so
 * status->usage is the last tick's until the job finishes. For an agent woken by SIGCHLD:
 * sampling every running job's cgroup files on each child exit cost more than the jobs. */
int ps_job_runner_reap(struct ps_job_runner *r, int64_t now_ms, struct ps_job_status *status,
                       struct ps_error *err);

/* Sets the job's CPU guarantee (cores) as its cgroup weight. PS_ESTATE when the node has no cpu
 * cgroup (the guarantee is then only bookkeeping) or the job finished; PS_EINVAL; PS_EIO. */
int ps_job_runner_set_cpu_guarantee(struct ps_job_runner *r, double cores,
                                    struct ps_error *err);

/* A ps_cpu_guarantee_fn (core/cpu_monitor.h) for ps_cpu_monitor_tick: ctx is the runner;
 * returns false when the guarantee could not be applied. */
bool ps_job_runner_cpu_guarantee_cb(void *ctx, double cores);

/* Sends SIGINT to the job's process group and arms a deadline now_ms + timeout_ms after which
 * the next tick aborts the job with reason. A second interrupt keeps the earlier deadline.
 * PS_ESTATE when the job has finished; PS_EIO. */
int ps_job_runner_interrupt(struct ps_job_runner *r, int64_t now_ms, int64_t timeout_ms,
                            const char *reason, struct ps_error *err);

/* Kills the whole job (process group and cgroup) now; the result will be "aborted" with reason
 * unless the job had already finished (then nothing happens and 0 is returned). The next tick
 * reaps it. PS_EIO when a kill fails. */
int ps_job_runner_abort(struct ps_job_runner *r, const char *reason, struct ps_error *err);

/* The outcome (PS_JOB_RUNNING until a tick saw the job finish). Valid while r lives. */
const struct ps_job_result *ps_job_runner_result(const struct ps_job_runner *r);

/* The captured stdout or stderr so far (capture.h's layout), malloc'ed and NUL-terminated.
 * Works until ps_job_runner_free, also after cleanup. */
int ps_job_runner_read_output(struct ps_job_runner *r, enum ps_capture_stream s, char **data,
                              size_t *len, struct ps_error *err);

/* The job's sandbox directory and process group id (for logs and tests). */
const char *ps_job_runner_sandbox(const struct ps_job_runner *r);
pid_t ps_job_runner_pgid(const struct ps_job_runner *r);

/* The uid the job runs as. */
uid_t ps_job_runner_uid(const struct ps_job_runner *r);

/* Kills anything left, destroys the job cgroup, unmounts the tmpfs and removes the sandbox
 * (unless keep_sandbox). Call after the job finished (or to give up on it: a running job is
 * aborted with "cleanup"). Errors: the first failure; every step is still attempted. */
int ps_job_runner_cleanup(struct ps_job_runner *r, struct ps_error *err);

/* Cleans up if that was not done (ignoring errors) and frees. NULL is a no-op. */
void ps_job_runner_free(struct ps_job_runner *r);

#endif
