/* jobs.h — the node's job table: every job from the moment the scheduler asks to start it until
 * the scheduler has acknowledged how it ended.
 *
 * States: [waiting ->] running -> finished (completed | failed | aborted) -> forgotten
 * (acknowledged). A job whose user slot or cpu the running jobs still hold (the victims of a
 * preemption finishing their interruption) waits, reported as running, until they are reaped;
 * past its waiting timeout it is aborted with "waiting_timeout" (user_slots below; the rule is
 * core/node_waiting.h, which the simulator's nodes follow too). An abort
 * or interrupt of a waiting job aborts it at once.
 * A job whose start fails never runs: it is finished at once (failed when its spec cannot run
 * here, e.g. a tmpfs on a node that is not root; aborted with "node_error" when the node could
 * not start it for its own reasons, e.g. fork failed), so the scheduler always learns its fate.
 *
 * Every tick (ps_node_jobs_tick) the table
 * - ticks each running job's runner (usage sample, reaping, memory limit, interrupt deadline);
 * - ticks each job's CPU monitor every check_period of the job's job_cpu_monitor config with the
 *   job's cumulative CPU seconds, and applies a new guarantee as the job's CPU weight when
 *   enable_cpu_reclaim is on (without weights on this node it is bookkeeping: the new guarantee
 *   is still reported, so the scheduler lends the CPU, but nothing enforces it); with reclaim
 *   off the soft limit moves in the statistics only and the reported guarantee stays the limit;
 * - every tick, the memory overdraft rule of core/node_overdraft.h against the node's memory
 *   resource: a job's growth the node cannot hold aborts that job when it is above its reserve,
 *   otherwise the first job above its reserve (or, with always_abort_on_memory_reserve_overdraft,
 *   every job above its reserve goes);
 * - every resource_adjustment_period, the CPU overdraft rule of core/node_overdraft.h: the
 *   running jobs' reported guarantees above the node's cpu for longer than
 *   cpu_overdraft_timeout abort the newest jobs (resource_overdraft) until they fit;
 * - integrates each job's memory over time (user_job/cumulative_memory_mb_sec, MB x s, as
 *   upstream's job proxy reports it);
 * - turns each job that ended into a finished record (statistics, capped stderr) and frees its
 *   runner (its sandbox is removed then).
 *
 * The heartbeat reports (ps_node_jobs_report) list running jobs and finished records; a
 * finished record stays until acknowledged, so a heartbeat that fails loses nothing.
 *
 * Not thread-safe: the agent's one thread drives it.
 */
#ifndef PS_NODE_JOBS_H
#define PS_NODE_JOBS_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/node_overdraft.h"
#include "node/devices.h"
#include "core/node_waiting.h"
#include "node/protocol.h"
#include "node/runner.h"

/* A log line (without newline) from the table, e.g. "job j1: started". */
typedef void (*ps_node_log_fn)(void *ctx, const char *fmt, va_list ap);

struct ps_node_jobs_config {
    int64_t node_memory_bytes;          /* the node's memory resource; <= 0: no overdraft check */
    double node_cpu;                    /* the node's cpu (cores); <= 0: no CPU overdraft check */
    /* cpu_overdraft_timeout and resource_adjustment_period (core/node_overdraft.h) */
    struct ps_node_overdraft_config overdraft;
    /* Upstream's exec_node/job_proxy/always_abort_on_memory_reserve_overdraft (false): a job
     * using more than its user job memory reserve is aborted (resource_overdraft) even while
     * the node has the memory. */
    bool always_abort_on_memory_reserve_overdraft;
    /* Finished records carry their job's stderr; a heartbeat carries at most this many bytes
     * of stderr in total (at least one record always goes), the rest waits for the next one. */
    size_t report_stderr_budget_bytes;  /* default 4 MiB */
    /* GPU devices and ports for jobs (devices.h): a job with gpu_limit or port_count gets its
     * own, named in its environment and its exec_attributes; when the node has not enough
     * free, the job does not start and is aborted with "waiting_timeout" (upstream's job
     * waits for them up to waiting_jobs_timeout, then is aborted so). */
    int gpu_count;                      /* 0 */
    /* Upstream's job_resource_manager cpu_to_vcpu_factor (1): the scheduler counts vcpu, so a
     * job's cpu_limit and cpu_guarantee from it are divided by the factor here (the job runs
     * with real cores) and its reported cpu_guarantee is multiplied back (both rounded to
     * hundredths, as upstream's TCpuResource). */
    double cpu_to_vcpu_factor;
    /* Jobs wait for the node's resources (a user slot, their cpu_limit in cores) while running
     * jobs hold them, e.g. the victims of a preemption still finishing their interruption:
     * upstream's node keeps such an allocation waiting, and aborts it with "waiting_timeout"
     * after its waiting_job_timeout (from the scheduler, tree's and spec's) or, without one,
     * the node's waiting_for_resources_timeout (upstream's exec node dynamic config, alias
     * waiting_jobs_timeout, 30 s). 0: not checked. */
    int64_t user_slots;                 /* 0 */
    int64_t waiting_for_resources_timeout_ms;   /* 30000 */
    int start_port;                     /* 20000 */
    int port_count;                     /* 10000 */
    ps_node_port_probe_fn port_probe;   /* NULL: no preliminary bind */
    ps_node_log_fn log;                 /* may be NULL */
    void *log_ctx;
    /* May be NULL. Asked when a job is found to have failed (after it was reaped): a reason
     * means the job was killed because the node lost the scheduler (the agent's guard kills
     * a stopped agent's jobs, job_guard.h), so it is reported as aborted with that reason. */
    const char *(*lost_reason)(void *ctx);
    void *lost_ctx;
};

void ps_node_jobs_config_init(struct ps_node_jobs_config *cfg);

struct ps_node_jobs;

/* The runner is borrowed and must outlive the table. Errors: PS_ENOMEM, PS_EINVAL (the GPU
 * count or port range). */
int ps_node_jobs_new(const struct ps_node_runner *runner, const struct ps_node_jobs_config *cfg,
                     struct ps_node_jobs **out, struct ps_error *err);

/* Aborts whatever still runs (without waiting) and frees everything. NULL is a no-op. */
void ps_node_jobs_free(struct ps_node_jobs *t);

/* The node's cpu_to_vcpu_factor from now on (the nodes' dynamic config): jobs started later
 * get vcpu / factor cores; running ones keep theirs and the vcpu the scheduler gave them. */
void ps_node_jobs_set_cpu_to_vcpu_factor(struct ps_node_jobs *t, double factor);

/* Starts a job from jobs_to_start. A job id already in the table (running or finished and not
 * yet acknowledged) is ignored: the scheduler repeated itself. Never fails: a job that cannot
 * start becomes a finished record. */
void ps_node_jobs_start(struct ps_node_jobs *t, const struct ps_node_start *s, int64_t now_ms);

/* SIGINT now, abort with reason after timeout_ms if it has not exited. Unknown or finished
 * jobs: nothing. */
void ps_node_jobs_interrupt(struct ps_node_jobs *t, const char *job_id, int64_t timeout_ms,
                            const char *reason, int64_t now_ms);

/* Kills the job's whole process group now; it finishes as aborted with reason. Unknown or
 * finished jobs: nothing. */
void ps_node_jobs_abort(struct ps_node_jobs *t, const char *job_id, const char *reason);

/* Aborts every running job with reason. */
void ps_node_jobs_abort_all(struct ps_node_jobs *t, const char *reason);

/* Forgets a finished job the scheduler has recorded. Returns true when one was forgotten
 * (running or unknown ids are ignored: only finished records are acknowledged). */
bool ps_node_jobs_acknowledge(struct ps_node_jobs *t, const char *job_id);

/* One tick at now_ms (see the header comment). Returns how many jobs finished in it. */
size_t ps_node_jobs_tick(struct ps_node_jobs *t, int64_t now_ms);

/* Reaps the running jobs that exited (runner's reap, or tick when it has none) and turns them
 * into finished records, as a tick does; nothing else of a tick (no sampling, CPU monitor or
 * overdraft check). For the agent woken by a child's exit. Returns how many finished. */
size_t ps_node_jobs_reap(struct ps_node_jobs *t, int64_t now_ms);

/* The "jobs" array of a heartbeat: every running job, then finished records within the stderr
 * budget. *more is set when finished records were left out. NULL when out of memory. */
json_t *ps_node_jobs_report(struct ps_node_jobs *t, bool *more);

size_t ps_node_jobs_running_count(const struct ps_node_jobs *t);
size_t ps_node_jobs_finished_count(const struct ps_node_jobs *t);

/* The current CPU guarantee of a running job (cores), or -1 for an unknown or finished job. */
double ps_node_jobs_cpu_guarantee(const struct ps_node_jobs *t, const char *job_id);

#endif
