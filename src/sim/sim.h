/* sim.h — `poolsched simulate`: a scenario replayed in virtual time on the engine the service
 * uses (shared/spec/formats.md section 3; docs/simulate.md for every choice made here).
 *
 * Setup (ps_sim_new) goes through the same calls as the service: the pool trees are created
 * through the strategy with their attribute documents (table-driven setters), then their pools;
 * nodes are registered (a node matching two trees is refused, naming both); operations are
 * started at their start_time with their spec document. Errors name the scenario path
 * (`pool_trees.physical: pools[1]: weight: ...`, `operations[3].spec: ...`).
 *
 * Events, in virtual time (ties at one millisecond: job ends, delayed aborts, submissions, the
 * fair share update, heartbeats; then push order):
 *   - operation submit at start_time;
 *   - fair share update every fair_share_update_period from 0, for every tree: the tree's
 *     element array is built from the strategy, the vector HDRF update runs with the integral
 *     state kept from update to update, the results are applied to the pools and operations,
 *     the scheduling snapshot is rebuilt, the top pending reason of every operation with pending
 *     work is re-evaluated, and a row per pool goes to pools.csv;
 *   - a heartbeat of every node every heartbeat_period, the first at node_index x period / N
 *     (spread deterministically): the regular stage of the node's tree starts allocations, each
 *     one a job of the operation's current task;
 *   - job end at start + duration (the task's job_durations entry for the job's index, else
 *     its duration; times the node group's job_duration_factor): usage is returned at once to the snapshot (live usage
 *     between fair share updates); the operation completes with its last job.
 *
 * Skipping work that cannot change anything (exact: outputs are what the full work would give):
 *   - a fair share update of a tree where nothing changed since the last one (no operation or
 *     job started or ended, no pending count changed) and which has no integral guarantees is
 *     skipped; its pools.csv rows repeat the previous ones, which is what the update would
 *     compute;
 *   - a heartbeat is skipped when the node's last heartbeat started nothing and the tree's
 *     scheduling state has not changed since (the regular stage is a pure function of both);
 *     when every node of a tree is in that state the tree's heartbeats go dormant and are
 *     re-armed, at each node's own phase, by the next change.
 *
 * Outputs: events.jsonl and pools.csv are written while the simulation runs (options),
 * operations.csv and summary.json at the end (ps_sim_write_*).
 *
 * ============================== extension points (hooks) =================================
 * Internal structures are in sim_internal.h; the names below are its functions.
 *
 * (a) The scheduling loop (core/tree_sched.h; docs/scheduling-loop.md): the simulator is a host
 *   of the same loop the service drives (sim_host.c). Fair share update, starvation check,
 *   allocation classes, snapshot and limits check run in ps_tree_sched_update /
 *   ps_tree_sched_limits_check (sim_host_update); a heartbeat's regular and preemptive stages
 *   and the overcommit check in ps_tree_sched_heartbeat (sim_host_heartbeat), which calls back
 *   for the node's jobs (job slots as allocation ids), to start jobs (sim_job_start), to record
 *   pending-reason skips and to preempt (sim_preempt_victim -> sim_job_preempt).
 *   - What stays here is when: sim_fair_share_event() skips updates of unchanged trees (a tree
 *     whose volumes or weights evolve with time alone is tree->timed; elements below fair
 *     share waiting for their starvation timeout set tree->update_due_ms to when one expires);
 *     sim_heartbeat() asks only for the stages that could start something (the regular
 *     stage not when nothing is pending, the node's free resources miss min_spare or the node
 *     is quiet; the preemptive ones when ps_tree_sched_preempt_due and not quiet at this
 *     generation). A heartbeat that may preempt
 *     later even though it changed nothing now must set tree->keep_heartbeats, or the node
 *     counts as quiet and the tree may go dormant.
 *   - Victims: sim_job_preempt(sim, job, for_op, reason, interrupt_timeout_ms): a
 *     job_preempted event now, and a job_aborted (reason preemption) now (tasks that are not
 *     interruptible) or when the interrupt timeout expires if the job has not ended by then.
 *     A job started beside victims still finishing waits for their resources (sim_waiting.c,
 *     core/node_waiting.h, as the node agent).
 *   - Aborts for any reason (preemption, node_offline, resource_overdraft, ...):
 *     sim_job_abort(sim, job, reason): job_aborted with statistics, resources returned to
 *     the node, the snapshot, the operation and the pools; the job goes back to its task's
 *     pending jobs (retried first, attempt + 1); preempted_job_count and
 *     preempted_jobs_total_duration of operations.csv count aborts for preemption.
 *
 * (b) Resources (cpu_monitor.h, memory_reserve.h):
 *   - Memory reserve per task: sim_task_job_resources(sim, op, task) gives the resources of the
 *     task's next job; today the requested resources (memory reserve = requested memory). It
 *     feeds the operation's allocation shape in every snapshot and its demand; job_started
 *     reports the memory of the allocation as memory_reserve. When a reserve changes, call
 *     sim_op_sync(sim, op) so the snapshots get the new shape.
 *   - Actual use of a running job: sim_job_cpu_at(sim, job, offset_ms) (the task's cpu_usage
 *     profile capped by the job's cpu limit) and sim_job_cpu_time_ms(); the job end statistics
 *     use them (user_job/cpu/user). A CPU monitor tick is a new event kind calling
 *     ps_cpu_monitor_tick with sim_job_cpu_time_ms() as the cumulative CPU time; a changed
 *     guarantee becomes the job's cpu usage through sim_job_set_usage(sim, job, resources).
 *   - Memory checks: sim_job_plan_end() (sim_jobs.c) decides at job start how and when the job
 *     ends (struct sim_job.end_kind, end_ms): today it completes after its duration. Memory
 *     limit failures (max_memory > memory_limit: job_failed "Memory limit exceeded") and
 *     overdraft aborts (max_memory > reserve: job_aborted resource_overdraft) are decided
 *     there; the job end handler already handles those kinds: job_failed retries the job and
 *     fails the operation past its spec's max_failed_job_count (sim_op_fail), job_aborted
 *     retries it.
 */
#ifndef PS_SIM_SIM_H
#define PS_SIM_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "io/scenario.h"

/* The fields of an events.jsonl line that options.on_event receives, as the line has them
 * (what-if's measures read these instead of reading the file back). Valid during the call. */
struct ps_sim_event {
    const char *type;                       /* event_type */
    int64_t time_ms;                        /* time */
    const char *operation_id;               /* job events, operation_started; else NULL */
    const char *job_id;                     /* job events; else NULL */
    const char *user;                       /* operation_started; else NULL */
    const char *pool;                       /* operation_started: its pool in event_tree */
    const struct ps_resources *resources;   /* job_started; else NULL */
    const char *tree;                       /* job events: the pool tree the job runs in */
};

struct ps_sim_options {
    FILE *events;              /* events.jsonl, written while running; NULL: not written */
    /* when not NULL, called for every events.jsonl line (written or not) with its fields */
    void (*on_event)(void *ctx, const struct ps_sim_event *ev);
    void *on_event_ctx;
    const char *event_tree;    /* the pool tree of ps_sim_event.pool; NULL: pool is NULL */
    FILE *pools;               /* pools.csv, written while running; NULL: not written */
    /* 0: a row per pool at every fair share period (formats.md). Otherwise rows at the first
     * fair share period at or after each multiple of pools_period_ms (sampling, for long runs). */
    int64_t pools_period_ms;
    /* Run every heartbeat and every fair share update, skipping nothing: slower, same outputs
     * (the tests compare both to show that the skipping is exact). */
    bool exhaustive;
};

/* Totals of a run so far (summary.json has them too). */
struct ps_sim_stats {
    int64_t now_ms;
    int64_t operations, operations_completed, operations_failed, operations_running,
        operations_pending, operations_not_submitted;
    int64_t jobs;                      /* jobs of all submitted operations' tasks */
    int64_t jobs_completed;            /* jobs that ran to the end */
    int64_t jobs_failed;
    int64_t attempts_started;          /* job starts, retries included */
    int64_t attempts_aborted;
    int64_t attempts_preempted;        /* aborted for preemption (part of attempts_aborted) */
    int64_t jobs_running;
    int64_t heartbeats;                /* heartbeat events delivered */
    int64_t heartbeats_scheduled;      /* heartbeats that ran the scheduling stage */
    int64_t allocations;               /* allocations started by heartbeats */
    int64_t fair_share_updates;        /* per tree, performed */
    int64_t fair_share_updates_skipped;
    int64_t events_written;
};

struct ps_sim;

/* Builds a simulation of scenario (borrowed: it must outlive the simulation). On error returns
 * PS_EINVAL (bad tree or pool attributes, overlapping trees, a bad operation spec, a job
 * requesting no resource at all; messages name the scenario path) or PS_ENOMEM, and *out is
 * NULL. */
int ps_sim_new(const struct ps_scenario *scenario, const struct ps_sim_options *options,
               struct ps_sim **out, struct ps_error *err);
void ps_sim_free(struct ps_sim *sim);   /* NULL is a no-op */

/* Processes every event up to and including time_ms (or until the simulation ends); the
 * outputs written so far are in their FILEs when it returns. */
int ps_sim_run_until(struct ps_sim *sim, int64_t time_ms, struct ps_error *err);
/* Runs to the end: the scenario's duration, or when duration is omitted, until every operation
 * has finished or nothing can change any more (no job running, no event but the periodic ones,
 * and a whole heartbeat period without a start). Errors: PS_ENOMEM, PS_EIO (writing). */
int ps_sim_run(struct ps_sim *sim, struct ps_error *err);
bool ps_sim_finished(const struct ps_sim *sim);

void ps_sim_get_stats(const struct ps_sim *sim, struct ps_sim_stats *out);

/* operations.csv (formats.md section 3) and summary.json (docs/simulate.md) as of now. */
int ps_sim_write_operations_csv(struct ps_sim *sim, FILE *out, struct ps_error *err);
int ps_sim_write_summary(struct ps_sim *sim, FILE *out, struct ps_error *err);

/* Aborts the running job with this job_id (as in job_started events) for reason (e.g.
 * "node_offline"): the abort path of sim_job_abort. PS_ENOENT when no such job runs. */
int ps_sim_abort_job(struct ps_sim *sim, const char *job_id, const char *reason,
                     struct ps_error *err);

#endif
