/* protocol.h — the node side of `POST /internal/v1/node/heartbeat` (docs/api.md, "Nodes").
 *
 * The request is built from the node's identity and the job table's reports (jobs.h); the
 * reply is validated in full before anything in it is acted upon, so a malformed reply changes
 * nothing: ps_node_reply_parse fails with a message naming the key, and the agent logs it and
 * carries on with the next heartbeat. Keys the contract does not name are ignored (so a newer
 * scheduler can add some), except inside job_cpu_monitor, whose keys are the config's.
 */
#ifndef PS_NODE_PROTOCOL_H
#define PS_NODE_PROTOCOL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cpu_monitor.h"
#include "core/error.h"
#include "core/node_id.h"   /* ps_node_id_valid, PS_NODE_ID_MAX, PS_NODE_JOB_ID_MAX */

#define PS_NODE_HEARTBEAT_PATH "/internal/v1/node/heartbeat"
#define PS_NODE_MIN_HEARTBEAT_PERIOD_MS 10
#define PS_NODE_MAX_HEARTBEAT_PERIOD_MS 3600000

/* What the node tells about itself in every heartbeat. Strings borrowed. */
struct ps_node_identity {
    const char *node_id;
    const char *const *tags;            /* tag_count entries */
    size_t tag_count;
    double cpu;                         /* cores (vcpu with a cpu_to_vcpu_factor) */
    double cpu_to_vcpu_factor;          /* sent when not 1 (and not 0) */
    int64_t memory_bytes;
    int64_t user_slots;
    int64_t gpu;                        /* GPU devices; 0: not sent */
    const char *instance_id;            /* this agent start's random id; NULL: not sent */
    const json_t *media;                /* disk_space_per_medium {medium: bytes}; NULL: none */
    int64_t dynamic_config_version;     /* the version of the nodes' dynamic config applied;
                                         * 0: none, not sent */
};

/* Builds the request object {"node_id", "instance_id", "tags", "resource_limits",
 * "disk_space_per_medium" (when media), "jobs"}; takes the
 * reference of jobs (an array of job reports, may be NULL for []). Returns NULL when out of
 * memory (jobs is released then too). */
json_t *ps_node_request_build(const struct ps_node_identity *id, json_t *jobs);

/* One entry of jobs_to_start. Strings borrow from the reply document. */
struct ps_node_start {
    const char *job_id;
    const char *operation_id;
    const char *task_name;
    int64_t job_index;
    const char *command;
    char **environment;                 /* owned "KEY=VALUE" list, NULL-terminated, sorted */
    double cpu_limit;                   /* cores, >= 0 */
    double cpu_guarantee;               /* cores; cpu_limit when absent */
    int64_t memory_limit_bytes;         /* >= 0; 0 none */
    int64_t memory_reserve_bytes;       /* >= 0; 0 none */
    int64_t tmpfs_size_bytes;           /* >= 0 */
    int64_t gpu_limit;                  /* GPU devices the node gives the job, 0..64 */
    int64_t port_count;                 /* ports the node gives the job, 0..50 */
    int64_t waiting_job_timeout_ms;     /* how long it may wait for the node's resources; -1:
                                         * the node's waiting_for_resources_timeout */
    struct ps_cpu_monitor_config cpu_monitor;   /* defaults for absent keys, validated */
};

struct ps_node_interrupt {
    const char *job_id;
    int64_t timeout_ms;                 /* >= 0 */
    const char *reason;                 /* "preemption" when absent */
};

struct ps_node_abort {
    const char *job_id;
    const char *reason;                 /* "scheduler" when absent */
};

/* A parsed reply. It keeps a reference to the document its strings borrow from. */
struct ps_node_reply {
    json_t *doc;
    bool has_heartbeat_period;
    int64_t heartbeat_period_ms;
    bool has_offline_timeout;
    int64_t node_offline_timeout_ms;    /* the scheduler gives a silent node's jobs away after
                                         * this long */
    bool long_poll;                     /* the scheduler answered wait_ms: it holds heartbeats */
    int64_t wait_ms;                    /* how long it held (or would hold) this one at most */
    bool has_reply_seq;
    int64_t reply_seq;                  /* this reply's number, sent back as last_reply_seq */
    bool has_epoch;
    int64_t epoch;                      /* scheduler_epoch: the leader's epoch (--ha) */
    const json_t *dynamic_config;       /* the nodes' dynamic config (borrowed from doc) when
                                         * the node's version is not current; NULL */
    int64_t dynamic_config_version;     /* its version (sent back as dynamic_config_version) */
    struct ps_node_start *starts;
    size_t start_count;
    struct ps_node_interrupt *interrupts;
    size_t interrupt_count;
    struct ps_node_abort *aborts;
    size_t abort_count;
    const char **acknowledged;
    size_t acknowledged_count;
};

/* Validates doc (borrowed; the reply takes its own reference) and fills *out. On error *out is
 * empty and needs no release. Errors: PS_EINVAL naming the key, e.g.
 * "jobs_to_start[2].job_id: must be 1..128 of [A-Za-z0-9._-], got \"../x\""; PS_ENOMEM. */
int ps_node_reply_parse(json_t *doc, struct ps_node_reply *out, struct ps_error *err);

/* Frees what the reply owns. Safe on a zeroed reply. */
void ps_node_reply_release(struct ps_node_reply *r);

/* Parses a job_cpu_monitor object over the defaults into *cfg with the one schema of the
 * section (ps_cpu_monitor_config_table) and validates it. The scheduler sends the resolved
 * config, so a key the table does not know is an error here (internal protocol). */
int ps_node_cpu_monitor_config_parse(const json_t *obj, const char *path,
                                     struct ps_cpu_monitor_config *cfg, struct ps_error *err);

#endif
