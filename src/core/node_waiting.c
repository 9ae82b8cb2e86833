/* node_waiting.c — see node_waiting.h. */
#include "core/node_waiting.h"

#include <stdio.h>

bool ps_node_job_fits(const struct ps_node_slots_cpu *capacity,
                      const struct ps_node_slots_cpu *held, int64_t job_cpu)
{
    if (capacity->user_slots > 0 && held->user_slots + 1 > capacity->user_slots)
        return false;
    return capacity->cpu <= 0 || held->cpu + job_cpu <= capacity->cpu;
}

enum ps_node_waiting_step ps_node_waiting_step(const struct ps_node_slots_cpu *capacity,
                                               struct ps_node_slots_cpu *held, int64_t job_cpu,
                                               int64_t deadline_ms, int64_t now_ms)
{
    if (ps_node_job_fits(capacity, held, job_cpu)) {
        held->user_slots++;
        held->cpu += job_cpu;
        return PS_NODE_WAITING_START;
    }
    return now_ms >= deadline_ms ? PS_NODE_WAITING_TIMEOUT : PS_NODE_WAITING_KEEP;
}

int64_t ps_node_waiting_timeout(int64_t requested_ms, int64_t node_default_ms)
{
    return requested_ms >= 0 ? requested_ms : node_default_ms;
}

void ps_node_waiting_message(char *buf, size_t size, int64_t timeout_ms)
{
    snprintf(buf, size, "Allocation waiting for resources has timed out (timeout: %lld ms)",
             (long long)timeout_ms);
}
