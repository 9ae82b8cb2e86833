/* sched_inputs.h — what a host feeds the loop about one operation, one rule for both hosts
 * (the service, src/server/service.c, and the simulator, src/sim/sim_sched.c, sim_jobs.c):
 *
 *   offered task  the task whose next allocation the snapshots offer (struct
 *                 ps_sched_operation.allocation, pending_count): the first, in the
 *                 operation's task order, with pending jobs; none when nothing is pending.
 *   disk request  the offered task's own disk request (none when it asks for none): a job's
 *                 disk request is its task's, as upstream's, and decides where it may start;
 *                 when nothing is pending, the first task's that has one, which still decides
 *                 the SSD priority of the running jobs (upstream counts an operation's disk
 *                 request media over all its tasks; one medium per operation is carried here).
 *   demand        usage + shape x pending for every task with pending jobs, saturating at
 *                 PS_RES_INFINITE (an unlimited shape or a huge job count stays "unlimited"
 *                 instead of overflowing).
 */
#ifndef PS_CORE_SCHED_INPUTS_H
#define PS_CORE_SCHED_INPUTS_H

#include <stdint.h>

#include "core/resources.h"

/* An operation's tasks as the host stores them. */
struct ps_sched_tasks {
    const void *ctx;
    int count;
    int64_t (*pending)(const void *ctx, int task);   /* pending jobs, >= 0 */
    /* the task's disk request medium (NULL: none) and *space its bytes */
    const char *(*disk_request)(const void *ctx, int task, int64_t *space);
};

/* The offered task, -1 when no task has pending jobs. */
int ps_sched_offered_task(const struct ps_sched_tasks *tasks);

/* The operation's disk request (rule above) given its offered task (-1: none): *medium NULL
 * and *space 0 when there is none. */
void ps_sched_disk_request(const struct ps_sched_tasks *tasks, int offered, const char **medium,
                           int64_t *space);

/* demand + shape x pending, saturating at PS_RES_INFINITE; all >= 0. */
struct ps_resources ps_demand_add_pending(struct ps_resources demand, struct ps_resources shape,
                                          int64_t pending);

#endif
