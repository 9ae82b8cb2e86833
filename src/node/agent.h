/* agent.h — the node agent's main loop (`poolsched node`).
 *
 * One thread does everything, in this order of urgency:
 * - a stop signal (SIGTERM, SIGINT, SIGHUP): every job is aborted with "node_shutdown" (its
 *   whole process group killed), the agent waits up to shutdown_grace_ms for them to be reaped,
 *   sends one last heartbeat so the scheduler reschedules them at once, and returns. A crash or
 *   kill -9 of the agent kills its jobs too (the runner's parent-death signal and guard,
 *   platform/job_guard.h); the scheduler then declares the node offline (docs/api.md) and
 *   reschedules them.
 * - before anything else on each wake-up: once the scheduler's node_offline_timeout (from its
 *   replies) minus a margin has passed since the last accepted heartbeat was sent, every job is
 *   aborted (node_offline), as the scheduler has given them away (docs/faults.md). This is also
 *   what a SIGCONT after a long SIGSTOP meets first; while stopped, the runner's guard (armed
 *   after each accepted heartbeat) has killed them already.
 * - the job tick every tick_ms, and at once when a child exits (SIGCHLD): usage, reaping, the
 *   CPU monitors, the memory policy (jobs.h).
 * - the heartbeat every heartbeat period (the scheduler's heartbeat_period_ms from its last
 *   reply, else the configured one). When a job has finished, the next heartbeat comes early,
 *   but not sooner than min_heartbeat_gap_ms after the previous one, so freed slots are offered
 *   again quickly (YTsaurus's out-of-band heartbeats).
 *
 * Long-poll (long_poll, the default; docs/api.md): each heartbeat asks the scheduler to hold it
 * (wait_ms, up to a period) while it has nothing for the node, and the next one is sent as soon
 * as a reply comes (not sooner than min_heartbeat_gap_ms after the previous one): a new job
 * starts as soon as the scheduler has it, and an idle node still heartbeats once a period. A
 * held heartbeat is given up when a job exits (SIGCHLD) or a stop signal comes, once it has
 * been under way for HOLD_INTERRUPT_AFTER_MS (a reply being made is not lost), and a new one
 * reports at once. Against a scheduler that does not answer wait_ms, the agent heartbeats
 * every period as before. Each heartbeat carries last_reply_seq, the reply_seq of the last
 * reply acted on: the scheduler sends again the start of a job from a reply given up (a start
 * of a job id the agent has is ignored, jobs.h).
 *
 * Registration is the first heartbeat the scheduler accepts. A refusal then (409: the node's
 * tags match two pool trees, or another live agent holds the node id; 401/403: a wrong cluster
 * secret) ends the agent with that message, as retrying cannot help; later, the 409 for a node
 * id held by another live agent does too.
 * Other failures (the scheduler is down, restarting, answers garbage) are logged and the agent
 * keeps running its jobs, until the offline deadline above, and retries every period; finished
 * jobs wait until a scheduler acknowledges them. After a scheduler restart shorter than that
 * the running jobs are simply reported again and re-attach (or are told to abort).
 */
#ifndef PS_NODE_AGENT_H
#define PS_NODE_AGENT_H

#define PS_NODE_MAX_SCHEDULERS 4

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "core/node_overdraft.h"
#include "node/runner.h"

struct ps_node_agent_config {
    const char *scheduler_url;          /* "http://127.0.0.1:9013" (no trailing path), or
                                         * several, comma-separated: standby schedulers (the
                                         * agent moves to the next when one fails or is a
                                         * standby, and ignores replies of an older epoch) */
    const char *token;                  /* the cluster secret, sent as OAuth */
    const char *node_id;
    const char *instance_id;            /* random per agent start (ps_node_instance_id_new) */
    const char *const *tags;
    size_t tag_count;
    double cpu;                         /* the node's resources */
    int64_t memory_bytes;
    int64_t user_slots;
    int gpu_count;                      /* GPU devices /dev/nvidia0.. (devices.h); 0 */
    double cpu_to_vcpu_factor;          /* upstream's static one (jobs.h); 0: none. The node's
                                         * factor comes from it and the nodes' dynamic config
                                         * (core/node_dyncfg.h); the scheduler is told cpu x
                                         * factor (vcpu) as the node's cpu */
    const char *cpu_model;              /* upstream's job_resource_manager cpu_model; NULL */
    int start_port, port_count;         /* the ports for jobs (devices.h); 20000, 10000 */
    const json_t *media;                /* --disk-space-per-medium {medium: bytes}; NULL: none */
    int64_t heartbeat_period_ms;        /* 5000 until the scheduler says otherwise */
    int64_t tick_ms;                    /* 100 */
    int64_t min_heartbeat_gap_ms;       /* 50 */
    int64_t request_timeout_ms;         /* 10000 */
    int64_t shutdown_grace_ms;          /* 5000 */
    size_t report_stderr_budget_bytes;  /* jobs.h; 4 MiB */
    bool always_abort_on_memory_reserve_overdraft;  /* jobs.h; false */
    /* core/node_overdraft.h: cpu_overdraft_timeout (10 min), resource_adjustment_period (5 s) */
    struct ps_node_overdraft_config overdraft;
    bool verbose;                       /* log every heartbeat */
    bool long_poll;                     /* true: heartbeats ask to be held (wait_ms) */
};

void ps_node_agent_config_init(struct ps_node_agent_config *cfg);

/* A fresh random instance id: 16 lowercase hex digits (size >= 17). PS_EIO without
 * /dev/urandom. */
int ps_node_instance_id_new(char *out, size_t size, struct ps_error *err);

/* Runs until a stop signal (returns 0) or a refused registration (PS_EPERM with the
 * scheduler's message) or a setup failure (PS_EIO, PS_ENOMEM). The caller must have blocked the
 * signals first (platform/daemon.h). The runner is borrowed. Logs go to stderr. */
int ps_node_agent_run(const struct ps_node_agent_config *cfg, const struct ps_node_runner *runner,
                      struct ps_error *err);

#endif
