/* node_waiting.h — the node's rule for jobs that wait for its resources, one for the node agent
 * (src/node/jobs.c) and the simulator's nodes (src/sim/sim_jobs.c), as upstream's exec node.
 *
 * A job started on a node whose running jobs still hold what it needs (the victims of a
 * preemption finishing their interruption) waits: it is counted by the scheduler (it holds its
 * allocation) but does not run. A job fits when one more user slot and its cpu (in hundredths of
 * a core, ps_node_cpu_units) fit beside what the running jobs hold, each checked when the node
 * has it (> 0); waiting jobs hold nothing. Whenever running jobs leave, the waiting jobs that
 * fit start in arrival order (each start holds its share before the next is checked; a later
 * one may start while an earlier, larger one waits on: upstream's StartWaitingJobs). A job
 * still waiting at its deadline is aborted with "waiting_timeout" (ps_node_waiting_message).
 * Its timeout is the one the scheduler sent (the operation's, ps_operation_spec_waiting_job_
 * timeout), else the node's waiting_for_resources_timeout (30 s).
 */
#ifndef PS_CORE_NODE_WAITING_H
#define PS_CORE_NODE_WAITING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upstream's exec node waiting_for_resources_timeout (alias waiting_jobs_timeout). */
#define PS_NODE_DEFAULT_WAITING_FOR_RESOURCES_TIMEOUT_MS 30000

/* What a node has, or what its running jobs hold: user slots and cpu (hundredths of a core). */
struct ps_node_slots_cpu {
    int64_t user_slots;
    int64_t cpu;
};

/* Whether a job of job_cpu fits beside held on a node of capacity (a capacity <= 0 is not
 * checked). */
bool ps_node_job_fits(const struct ps_node_slots_cpu *capacity,
                      const struct ps_node_slots_cpu *held, int64_t job_cpu);

enum ps_node_waiting_step {
    PS_NODE_WAITING_KEEP = 0,   /* it waits on */
    PS_NODE_WAITING_START,      /* it fits: it starts, and now holds its share in *held */
    PS_NODE_WAITING_TIMEOUT,    /* its deadline has passed: aborted with waiting_timeout */
};

/* The fate of one waiting job at now_ms; called for the waiting jobs in arrival order with the
 * same held (the running jobs'), which a start grows. */
enum ps_node_waiting_step ps_node_waiting_step(const struct ps_node_slots_cpu *capacity,
                                               struct ps_node_slots_cpu *held, int64_t job_cpu,
                                               int64_t deadline_ms, int64_t now_ms);

/* The waiting timeout of a job: the scheduler's (>= 0) or else the node's default. */
int64_t ps_node_waiting_timeout(int64_t requested_ms, int64_t node_default_ms);

/* The abort message of a job whose waiting timed out (upstream's text). */
void ps_node_waiting_message(char *buf, size_t size, int64_t timeout_ms);

#endif
