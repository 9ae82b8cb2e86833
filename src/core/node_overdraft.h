/* node_overdraft.h — the node's CPU overdraft rule, one for the node agent (src/node/jobs.c)
 * and the simulator's nodes (src/sim/sim_resources.c), as upstream's exec node job resource
 * manager applies it.
 *
 * A job's CPU usage is its CPU guarantee (the CPU monitor lowers it while the job idles and
 * raises it back, always taken, when the job is busy again), so a node whose idle jobs lent
 * their cores can find its jobs' usage above its cpu. Every resource_adjustment_period (5 s)
 * the node compares: above its cpu, it records when that was first seen; still above once
 * cpu_overdraft_timeout (10 min) has passed since (strictly), it aborts its newest running jobs
 * (latest start first) with resource_overdraft until the usage fits. Within its cpu again, it
 * forgets. Meanwhile the scheduler preempts (resource_overcommit) after its own
 * allowed_node_resources_overcommit_duration (tree_sched.h): whichever comes first.
 *
 * Upstream's memory_overdraft_timeout has no counterpart here: a job's memory usage as the
 * scheduler counts it is its reserve, which never grows on its own (memory.h is the node's
 * memory policy). */
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

/* A guarantee in cores as the scheduler counts it: hundredths, rounded up. */
int64_t ps_node_cpu_units(double cores);

#endif
