/* runner_platform.h — the real runner (runner.h) on src/platform/job_runner.h: each job is
 * `sh -c COMMAND` in its own process group and sandbox <work_dir>/sandbox/<job_id>, as an
 * unprivileged user when the agent is root, with its CPU limit, CPU weight and memory limit in
 * a cgroup when the node has usable cgroups (v2, else v1, detected once here), its stdout and
 * stderr captured with a cap.
 */
#ifndef PS_NODE_RUNNER_PLATFORM_H
#define PS_NODE_RUNNER_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "node/runner.h"

struct ps_node_platform_config {
    const char *node_id;            /* names the node's cgroup */
    const char *instance_id;        /* NULL, or this agent start's id: the cgroup is
                                     * poolsched-<node_id>-<instance_id> and every job's
                                     * environment has POOLSCHED_NODE_INSTANCE=<instance_id> */
    bool guard;                     /* fork a job guard (platform/job_guard.h) that kills the
                                     * jobs if the agent dies; call new while single-threaded */
    const char *work_dir;           /* created if missing */
    const char *job_user;           /* NULL: "nobody" (used only when the agent is root) */
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

/* Every job's shell dies with the agent (PR_SET_PDEATHSIG); with cfg->guard their descendants
 * too. Frees what new made (every job must have been freed), and stops the guard. */
void ps_node_runner_platform_free(struct ps_node_runner *r);

#endif
