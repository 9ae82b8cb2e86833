/* node_overdraft.c — the node's CPU and memory overdraft rules (node_overdraft.h). */
#include "core/node_overdraft.h"

#include <math.h>

#include "core/resources.h"

void ps_node_overdraft_config_init(struct ps_node_overdraft_config *cfg)
{
    cfg->cpu_overdraft_timeout_ms = PS_NODE_CPU_OVERDRAFT_TIMEOUT_MS;
    cfg->resource_adjustment_period_ms = PS_NODE_RESOURCE_ADJUSTMENT_PERIOD_MS;
}

bool ps_node_cpu_overdraft_adjust(const struct ps_node_overdraft_config *cfg, int64_t *since_ms,
                                  int64_t usage, int64_t limit, int64_t now_ms)
{
    if (usage <= limit) {
        *since_ms = PS_NO_CPU_OVERDRAFT;
        return false;
    }
    if (*since_ms == PS_NO_CPU_OVERDRAFT) {
        *since_ms = now_ms;
        return false;
    }
    return *since_ms < now_ms - cfg->cpu_overdraft_timeout_ms;
}

size_t ps_node_cpu_overdraft_victims(const int64_t *cpu, size_t count, int64_t limit)
{
    int64_t usage = 0;
    for (size_t i = 0; i < count; i++)
        usage += cpu[i];
    size_t n = 0;
    while (n < count && usage > limit)
        usage -= cpu[count - 1 - n++];
    return n;
}

int64_t ps_node_cpu_units(double cores)
{
    return (int64_t)ceil(cores * PS_CPU_SCALE - 1e-6);
}

bool ps_node_memory_overdraft(int64_t used, int64_t delta, int64_t limit)
{
    return limit > 0 && delta > 0 && used + delta > limit;
}

static bool above_reserve(const struct ps_node_memory_job *job)
{
    return job->reserve > 0 && job->held > job->reserve;
}

size_t ps_node_memory_overdraft_victim(const struct ps_node_memory_job *jobs, size_t count,
                                       size_t grower)
{
    if (grower < count && above_reserve(&jobs[grower]))
        return grower;
    for (size_t i = 0; i < count; i++)
        if (above_reserve(&jobs[i]))
            return i;
    return count;
}
