/* sched_inputs.c — see sched_inputs.h. */
#include "core/sched_inputs.h"

#include <stddef.h>

int ps_sched_offered_task(const struct ps_sched_tasks *tasks)
{
    for (int i = 0; i < tasks->count; i++)
        if (tasks->pending(tasks->ctx, i) > 0)
            return i;
    return -1;
}

void ps_sched_disk_request(const struct ps_sched_tasks *tasks, int offered, const char **medium,
                           int64_t *space)
{
    *medium = NULL;
    *space = 0;
    if (offered >= 0)
        *medium = tasks->disk_request(tasks->ctx, offered, space);
    for (int i = 0; offered < 0 && i < tasks->count && !*medium; i++)
        *medium = tasks->disk_request(tasks->ctx, i, space);
    if (!*medium)
        *space = 0;
}

struct ps_resources ps_demand_add_pending(struct ps_resources demand, struct ps_resources shape,
                                          int64_t pending)
{
    for (int r = 0; r < PS_RES_COUNT; r++) {
        int64_t p;
        shape.v[r] = (__builtin_mul_overflow(shape.v[r], pending, &p) || p > PS_RES_INFINITE)
                         ? PS_RES_INFINITE
                         : p;
    }
    return ps_resources_add_sat(demand, shape);
}
