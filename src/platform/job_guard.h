/* job_guard.h — a small process that kills the node agent's jobs when the agent dies.
 *
 * Why: a job is `sh -c COMMAND` and whatever it forks, possibly in new sessions (daemons). The
 * shell itself dies with the agent (PR_SET_PDEATHSIG, job_process.h), but its children are
 * re-parented and would run on while the scheduler, having declared the node offline, runs the
 * same jobs elsewhere. The agent cannot clean up after a kill -9 of itself, so it forks the
 * guard at start, before any thread exists:
 *
 *   agent ──(pipe, write end only in the agent, close-on-exec)──> guard (blocked in read)
 *
 * The guard has its own session and ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT, so a terminal
 * or a signal to the agent's process group does not take it first; it holds no other
 * descriptor. When the agent exits for any reason the kernel closes the write end, read
 * returns 0, and the guard sweeps, in rounds until a round finds nothing (which catches what
 * was forked meanwhile), for at most a few seconds:
 *   - every job-* cgroup below the node's cgroups (this instance's only: cgroup.h), whose
 *     processes get SIGKILL (v2: cgroup.kill), and the emptied cgroups are removed;
 *   - every process whose environment holds the instance marker (POOLSCHED_NODE_INSTANCE=<id>,
 *     put into each job's environment), which is what catches a job's descendants without
 *     cgroups, even daemonised ones (unless they scrubbed their environment).
 * Then it exits: it outlives nothing but the agent.
 *
 * It also covers an agent that is alive but cannot act: stopped (SIGSTOP), hung, or starved.
 * After each heartbeat the scheduler accepted, the agent arms the guard with the time left
 * until the scheduler may declare the node offline and run its jobs elsewhere
 * (ps_job_guard_arm); if that passes without a new message, the guard sweeps the same way
 * (and stays, disarmed, for the agent to come back to). An agent that runs notices the same
 * deadline itself first and aborts its jobs properly (node/agent.h). After a clean agent stop there is nothing
 * left to find. A kill -9 of the guard itself is harmless while the agent lives (the agent
 * kills its jobs itself on a stop); only killing both at once leaves grandchildren running.
 */
#ifndef PS_PLATFORM_JOB_GUARD_H
#define PS_PLATFORM_JOB_GUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/error.h"

struct ps_job_guard_config {
    const char *const *cgroup_dirs; /* the node's cgroup dirs (job-* below), NULL-terminated;
                                     * may be NULL */
    bool cgroup_v2;
    const char *marker_env;         /* "KEY=VALUE" found in every job's environment; may be
                                     * NULL */
    const char *log_name;           /* e.g. the node id, for the guard's one log line */
    int sweep_ms;                   /* how long sweeping may take; 0: 5000 */
};

struct ps_job_guard;

/* Forks the guard (call it while the process has a single thread). The strings are copied by
 * the fork. Errors: PS_EIO naming pipe2 or fork, PS_ENOMEM. */
int ps_job_guard_start(const struct ps_job_guard_config *cfg, struct ps_job_guard **out,
                       struct ps_error *err);

/* Tells the guard to kill the jobs kill_in_ms from now unless armed again before; <= 0
 * disarms. Never blocks for long (one 8-byte write to a pipe the guard drains). */
void ps_job_guard_arm(struct ps_job_guard *g, int64_t kill_in_ms);

/* The guard's pid (for logs and tests). */
pid_t ps_job_guard_pid(const struct ps_job_guard *g);

/* A clean stop: closes the pipe, so the guard sweeps (finding nothing after the jobs were
 * reaped) and exits, and reaps it. NULL is a no-op. */
void ps_job_guard_stop(struct ps_job_guard *g);

/* One sweep as the guard does it, in the calling process: returns how many processes were
 * found (and SIGKILLed). With agent_gone the emptied job cgroups are removed too (while the
 * agent lives they are its to remove). Exposed for tests. */
int ps_job_guard_sweep(const struct ps_job_guard_config *cfg, bool agent_gone);

#endif
