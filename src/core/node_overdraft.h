/* node_overdraft.h — the node's overdraft rules, one for the node agent (src/node/jobs.c) and
 * the simulator's nodes (src/sim/sim_resources.c), as upstream's exec node applies them.
 *
 * CPU. A job's CPU usage is its CPU guarantee (the CPU monitor lowers it while the job idles
 * and raises it back, always taken, when the job is busy again), so a node whose idle jobs lent
 * their cores can find its jobs' usage above its cpu. Every resource_adjustment_period (5 s)
 * the node compares: above its cpu, it records when that was first seen; still above once
 * cpu_overdraft_timeout (10 min) has passed since (strictly), it aborts its newest running jobs
 * (latest start first) with resource_overdraft until the usage fits. Within its cpu again, it
 * forgets. Meanwhile the scheduler preempts (resource_overcommit) after its own
 * allowed_node_resources_overcommit_duration (tree_sched.h): whichever comes first.
 *
 * Memory. A job holds its memory reserve from its start; when it uses more, the node grows what
 * it holds (upstream's job controller, OnJobResourcesUpdated / OnResourceUsageOverdraftOccurred).
 * A growth the node's memory cannot hold (what its jobs hold plus the growth above its memory
 * resource) is an overdraft, and the node aborts one job with resource_overdraft: the job that
 * grew when it is above its reserve, otherwise the first running job above its reserve (none
 * when no job is). The memory_limit itself is the runner's (above it the job fails with "Memory
 * limit exceeded", whatever the node's memory). Upstream's memory_overdraft_timeout has no
 * counterpart here: what a node's jobs hold exceeds its memory only through a growth, which
 * this rule settles at once.
 */
#ifndef PS_CORE_NODE_OVERDRAFT_H
#define PS_CORE_NODE_OVERDRAFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PS_NODE_CPU_OVERDRAFT_TIMEOUT_MS 600000      /* upstream's cpu_overdraft_timeout */
#define PS_NODE_RESOURCE_ADJUSTMENT_PERIOD_MS 5000   /* upstream's resource_adjustment_period */
#define PS_NO_CPU_OVERDRAFT INT64_MIN

struct ps_node_overdraft_config {
    int64_t cpu_overdraft_timeout_ms;          /* >= 0 */
    int64_t resource_adjustment_period_ms;     /* > 0 */
};

void ps_node_overdraft_config_init(struct ps_node_overdraft_config *cfg);

/* One resource adjustment at now_ms. usage and limit: the node's CPU in hundredths of a core
 * (PS_CPU_SCALE), usage the sum of its running jobs' guarantees. *since_ms is the node's state
 * (PS_NO_CPU_OVERDRAFT at first). Returns whether the node must abort its newest jobs now. */
bool ps_node_cpu_overdraft_adjust(const struct ps_node_overdraft_config *cfg, int64_t *since_ms,
                                  int64_t usage, int64_t limit, int64_t now_ms);

/* The victims of an abort: cpu[0..count) are the running jobs' guarantees (hundredths) in start
 * order (oldest first). Returns how many of the newest must go: the fewest from the end whose
 * removal brings usage within limit (all of them when nothing else would). */
size_t ps_node_cpu_overdraft_victims(const int64_t *cpu, size_t count, int64_t limit);

/* One job as the memory rule sees it: the bytes the node holds for it (its reserve, or its use
 * when above) and its reserve (<= 0: none known, never above it). */
struct ps_node_memory_job {
    int64_t held;
    int64_t reserve;
};

/* Whether a job's growth by delta bytes overdrafts a node whose jobs hold used bytes of its
 * limit (<= 0: no limit): delta > 0 and used + delta > limit. */
bool ps_node_memory_overdraft(int64_t used, int64_t delta, int64_t limit);

/* The job to abort for an overdraft caused by jobs[grower] (its held already the grown size):
 * grower when above its reserve, otherwise the first of jobs[0..count) above its reserve; count
 * when none is. jobs: the node's running jobs not already being aborted. */
size_t ps_node_memory_overdraft_victim(const struct ps_node_memory_job *jobs, size_t count,
                                       size_t grower);

/* A guarantee in cores as the scheduler counts it: hundredths, rounded up. */
int64_t ps_node_cpu_units(double cores);

#endif
