/* memory_config.c — the controller's memory reserve knobs (upstream TControllerAgentConfig):
 * their table, the one schema of the `controller_agent` section wherever it is read (the
 * scheduler's config, the simulator's scenario). Defaults and validation: memory_reserve.c. */
#include "core/memory_reserve.h"
#include "core/op_spec.h"

#include <stddef.h>

#define OFF(field) offsetof(struct ps_memory_controller_config, field)

static int config_init(void *obj)
{
    ps_memory_controller_config_init(obj);
    return 0;
}

static const struct ps_attr attrs[] = {
    {.name = "user_job_memory_digest_precision", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(user_job_memory_digest_precision), .min = 0, .max = 1e9,
     .flags = PS_ATTR_MIN_OPEN},
    {.name = "user_job_memory_reserve_quantile", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(user_job_memory_reserve_quantile), .min = 0, .max = 1},
    {.name = "job_proxy_memory_reserve_quantile", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(job_proxy_memory_reserve_quantile), .min = 0, .max = 1},
    {.name = "memory_digest_resource_overdraft_factor", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(memory_digest_resource_overdraft_factor), .min = 1, .max = 10},
    {.name = "user_job_resource_overdraft_memory_multiplier", .kind = PS_ATTR_OPT_DOUBLE,
     .offset = OFF(user_job_resource_overdraft_memory_multiplier), .min = 1, .max = 10},
    {.name = "job_proxy_resource_overdraft_memory_multiplier", .kind = PS_ATTR_OPT_DOUBLE,
     .offset = OFF(job_proxy_resource_overdraft_memory_multiplier), .min = 1, .max = 10},
    {.name = "use_resource_overdraft_memory_multiplier_from_spec", .kind = PS_ATTR_BOOL,
     .offset = OFF(use_resource_overdraft_memory_multiplier_from_spec)},
    {.name = "footprint_memory", .kind = PS_ATTR_INT, .offset = OFF(footprint_memory_bytes),
     .min = 0, .max = 1e15},
};

const struct ps_attr_table ps_memory_controller_config_table = {
    .what = "controller_agent",
    .attrs = attrs,
    .count = (int)(sizeof attrs / sizeof attrs[0]),
    .size = sizeof(struct ps_memory_controller_config),
    .init = config_init,
};

void ps_memory_task_spec_from_operation(struct ps_memory_task_spec *spec,
                                        const struct ps_operation_spec *op)
{
    if (op->user_job_memory_digest_default_value.set)
        spec->user_job_memory_digest_default_value = op->user_job_memory_digest_default_value.value;
    if (op->user_job_memory_digest_lower_bound.set)
        spec->user_job_memory_digest_lower_bound = op->user_job_memory_digest_lower_bound.value;
    if (op->memory_reserve_factor.set) {
        spec->has_memory_reserve_factor = true;
        spec->memory_reserve_factor = op->memory_reserve_factor.value;
    }
    const struct ps_job_proxy_memory_digest_spec *jp = &op->job_proxy_memory_digest;
    if (jp->default_value.set) {
        spec->job_proxy_memory_digest.has_default_value = true;
        spec->job_proxy_memory_digest.default_value = jp->default_value.value;
    }
    if (jp->lower_bound.set)
        spec->job_proxy_memory_digest.lower_bound = jp->lower_bound.value;
    if (jp->upper_bound.set)
        spec->job_proxy_memory_digest.upper_bound = jp->upper_bound.value;
}
