/* runner.h — what the node agent needs from the operating system to run one job: start it,
 * look at it, change its CPU guarantee, interrupt it, abort it, read its stderr, forget it.
 *
 * The agent's logic (job table, CPU monitor, memory policy, protocol) talks only to this small
 * table of functions, so it can be tested deterministically with a scripted runner in the unit
 * tests. The one real implementation is ps_node_runner_platform_new (runner_platform.c), which
 * drives src/platform/job_runner.h: processes in their own group, sandboxes, cgroups, capture.
 *
 * Contract of an implementation (the job table relies on each point):
 * - start is synchronous: when it returns 0 the command has been started, else nothing is left.
 * - tick never blocks; it reaps the job when it exited and then reports finished = true once
 *   the outcome is settled; cpu_seconds never decreases; memory_peak_bytes >= every
 *   memory_bytes reported. The implementation enforces memory_limit itself (kills the job,
 *   outcome failed with "Memory limit exceeded").
 * - interrupt sends SIGINT to the whole job and arms a deadline after which a later tick kills
 *   the job (outcome aborted with the given reason) unless it has exited by then.
 * - abort kills the whole job now; the next ticks reap it (outcome aborted with the reason,
 *   unless it had already finished).
 * - result is meaningful once tick reported finished.
 * - free kills what is left, removes the sandbox and frees; NULL is a no-op.
 */
#ifndef PS_NODE_RUNNER_H
#define PS_NODE_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* One job to start. Strings are borrowed for the duration of start only. */
struct ps_node_job_spec {
    const char *operation_id;
    const char *job_id;
    const char *task_name;
    int64_t job_index;
    const char *command;                /* run as sh -c COMMAND */
    const char *const *environment;     /* "KEY=VALUE" entries, NULL-terminated; may be NULL */
    double cpu_limit;                   /* cores, hard limit; <= 0 unlimited */
    double cpu_guarantee;               /* cores, initial weight */
    int64_t memory_limit_bytes;         /* <= 0: none */
    int64_t tmpfs_size_bytes;           /* > 0: a tmpfs in the sandbox */
};

enum ps_node_outcome {
    PS_NODE_OUTCOME_RUNNING = 0,
    PS_NODE_OUTCOME_COMPLETED,
    PS_NODE_OUTCOME_FAILED,
    PS_NODE_OUTCOME_ABORTED,
};

/* What one tick saw. */
struct ps_node_job_sample {
    bool finished;
    double cpu_seconds;                 /* cumulative user + system of the whole job */
    int64_t memory_bytes;               /* current */
    int64_t memory_peak_bytes;          /* maximum so far */
};

/* How a finished job ended. */
struct ps_node_job_end {
    enum ps_node_outcome outcome;
    int exit_code;                      /* -1 when killed by a signal or never started */
    char error[160];                    /* failed: e.g. "Memory limit exceeded" */
    char abort_reason[64];              /* aborted: e.g. "preemption", "resource_overdraft" */
    int64_t duration_ms;
    double cpu_seconds;                 /* final */
    int64_t memory_peak_bytes;          /* final */
};

/* What the runner can do on this node (reported once in the log). */
struct ps_node_runner_caps {
    bool cpu_limit;                     /* hard CPU limits are enforced */
    bool cpu_weight;                    /* guarantees are applied as weights */
    bool memory_cgroup;                 /* memory is limited and measured by a cgroup */
};

struct ps_node_runner_ops {
    int (*start)(void *ctx, const struct ps_node_job_spec *spec, int64_t now_ms, void **job,
                 struct ps_error *err);
    int (*tick)(void *job, int64_t now_ms, struct ps_node_job_sample *out, struct ps_error *err);
    /* PS_ESTATE when the node cannot apply weights (then the guarantee is bookkeeping only). */
    int (*set_cpu_guarantee)(void *job, double cores, struct ps_error *err);
    int (*interrupt)(void *job, int64_t now_ms, int64_t timeout_ms, const char *reason,
                     struct ps_error *err);
    int (*abort)(void *job, const char *reason, struct ps_error *err);
    void (*result)(void *job, struct ps_node_job_end *out);
    /* The captured stderr (already capped by the runner), malloc'ed, NUL-terminated. */
    int (*read_stderr)(void *job, char **data, size_t *len, bool *truncated,
                       struct ps_error *err);
    void (*free)(void *job);
    /* Optional (NULL: tick is used): reap the job if it exited, without sampling usage or
     * checking limits; what the agent calls when a child exit wakes it between ticks. */
    int (*reap)(void *job, int64_t now_ms, struct ps_node_job_sample *out,
                struct ps_error *err);
    /* Optional: every job must be dead kill_in_ms from now unless this is called again
     * (<= 0: no such deadline); the agent calls it after each heartbeat the scheduler accepted,
     * so jobs die even when the agent is stopped or hung (platform/job_guard.h). ctx is the
     * runner's. */
    void (*arm_deadline)(void *ctx, int64_t kill_in_ms);
};

struct ps_node_runner {
    const struct ps_node_runner_ops *ops;
    void *ctx;                          /* passed to start */
    struct ps_node_runner_caps caps;
};

#endif
