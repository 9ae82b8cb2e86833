/* runner_platform.h — the real runner (runner.h) on src/platform/job_runner.h: each job is
 * `sh -c COMMAND` in its own process group and sandbox <work_dir>/sandbox/<job_id>, as an
 * unprivileged user when the agent is root (its slot's own uid, see below), with its CPU
 * limit, CPU weight and memory limit in a cgroup when the node has usable cgroups (v2, else
 * v1, detected once here), its stdout and stderr captured with a cap.
 */
#ifndef PS_NODE_RUNNER_PLATFORM_H
#define PS_NODE_RUNNER_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "node/runner.h"

/* YTsaurus's job_environment start_uid default (TJobEnvironmentConfig::StartUid). */
#define PS_NODE_SLOT_UID_BASE 10000

struct ps_node_platform_config {
    const char *node_id;            /* names the node's cgroup */
    const char *instance_id;        /* NULL, or this agent start's id: the cgroup is
                                     * poolsched-<node_id>-<instance_id> and every job's
                                     * environment has POOLSCHED_NODE_INSTANCE=<instance_id> */
    bool guard;                     /* fork a job guard (platform/job_guard.h) that kills the
                                     * jobs if the agent dies; call new while single-threaded */
    const char *work_dir;           /* created if missing */
    const char *job_user;           /* when the agent is root: every job runs as this user
                                     * (no isolation between jobs); NULL: each slot's own uid */
    int64_t user_slots;             /* the node's slots (>= 1): a job holds the lowest free
                                     * index until it is freed; none free: start fails */
    int64_t slot_uid_base;          /* slot i runs as uid = gid = base + i (<= 0: the default
                                     * PS_NODE_SLOT_UID_BASE); refused at new when one of them
                                     * is an account or group (getpwuid/getgrgid) */
    int64_t stderr_cap_bytes;       /* per job; head and tail are kept (platform/capture.h) */
    int64_t stdout_cap_bytes;
    bool disable_cgroups;           /* run without cgroups even where they work */
    bool keep_sandbox;              /* leave sandboxes after jobs end (debugging) */
};

/* Detects cgroups, prepares the work dir and fills *out. *summary receives the one-line
 * cgroup summary to log (valid until ps_node_runner_platform_free). Errors: PS_EINVAL, PS_EIO,
 * PS_ENOMEM. */
int ps_node_runner_platform_new(const struct ps_node_platform_config *cfg,
                                struct ps_node_runner *out, const char **summary,
                                struct ps_error *err);

/* One line saying who the jobs run as (for the start log); valid until free. */
const char *ps_node_runner_platform_users(const struct ps_node_runner *r);

/* Every job's shell dies with the agent (PR_SET_PDEATHSIG); with cfg->guard their descendants
 * too. Frees what new made (every job must have been freed), and stops the guard. */
void ps_node_runner_platform_free(struct ps_node_runner *r);

#endif
