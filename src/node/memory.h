/* memory.h — the node's memory policy beyond each job's own limit (memory-digest.ru.txt).
 *
 * A job may use more than its reserve (the memory the scheduler accounted for it) as long as
 * the node has memory to spare. When the jobs together use more than the node's memory
 * resource, jobs above their reserve are aborted with resource_overdraft, largest overdraft
 * first, until the rest fit. The memory_limit itself is enforced by the runner (runner.h):
 * above it a job fails with "Memory limit exceeded", whether or not the node has memory left.
 *
 * "The node's memory" is its memory resource (--resources memory=...), the amount the scheduler
 * hands out, not the machine's free RAM: the scheduler's accounting is what overdraft breaks.
 */
#ifndef PS_NODE_MEMORY_H
#define PS_NODE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ps_node_memory_use {
    const char *job_id;         /* the final tie-break of the order */
    int64_t memory_bytes;       /* current usage */
    int64_t reserve_bytes;      /* <= 0: no reserve known, never an overdraft victim */
    bool eligible;              /* false for jobs already being aborted: they neither count
                                 * towards the node's usage (their memory is about to be freed)
                                 * nor are chosen again */
};

/* Chooses the jobs to abort for resource_overdraft. jobs[0..count) are all running jobs. Writes the indexes of the victims
 * into victims[] (room for count) in the order to abort them and returns how many: none while
 * the sum of memory_bytes is at most node_memory_bytes (or node_memory_bytes <= 0, no limit).
 * Victims are eligible jobs with memory_bytes > reserve_bytes > 0, by overdraft
 * (memory - reserve) descending, then job_id; taken until the remaining sum fits. */
size_t ps_node_overdraft_victims(const struct ps_node_memory_use *jobs, size_t count,
                                 int64_t node_memory_bytes, size_t *victims);

#endif
