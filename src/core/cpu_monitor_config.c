/* cpu_monitor_config.c — TJobCpuMonitorConfig: its table (the one schema every reader of
 * `job_cpu_monitor` uses), defaults, validation. */
#include "core/cpu_monitor.h"

#include <stddef.h>
#include <string.h>

/* Durations and windows get an upper limit upstream does not have, so that arithmetic on
 * them (ms -> us, now + start_delay, the vote buffer) cannot overflow or exhaust memory. */
#define MAX_DURATION_MS 1e12        /* about 31 years */
#define MAX_VOTE_WINDOW 1000000

#define OFF(field) offsetof(struct ps_cpu_monitor_config, field)

static int config_init(void *obj)
{
    ps_cpu_monitor_config_init(obj);
    return 0;
}

static const struct ps_attr attrs[] = {
    {.name = "enable_cpu_reclaim", .kind = PS_ATTR_BOOL, .offset = OFF(enable_cpu_reclaim)},
    {.name = "check_period", .kind = PS_ATTR_INT, .offset = OFF(check_period_ms), .min = 0,
     .max = MAX_DURATION_MS, .flags = PS_ATTR_MIN_OPEN},
    {.name = "start_delay", .kind = PS_ATTR_INT, .offset = OFF(start_delay_ms), .min = 0,
     .max = MAX_DURATION_MS},
    {.name = "smoothing_factor", .kind = PS_ATTR_DOUBLE, .offset = OFF(smoothing_factor),
     .min = 0, .max = 1, .flags = PS_ATTR_MIN_OPEN},
    {.name = "relative_upper_bound", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(relative_upper_bound), .min = 0, .max = 1, .flags = PS_ATTR_MIN_OPEN},
    {.name = "relative_lower_bound", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(relative_lower_bound), .min = 0, .max = 1, .flags = PS_ATTR_MAX_OPEN},
    {.name = "increase_coefficient", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(increase_coefficient), .min = 1, .max = 2},
    {.name = "decrease_coefficient", .kind = PS_ATTR_DOUBLE,
     .offset = OFF(decrease_coefficient), .min = 0, .max = 1},
    {.name = "vote_window_size", .kind = PS_ATTR_INT32, .offset = OFF(vote_window_size),
     .min = 1, .max = MAX_VOTE_WINDOW},
    /* The upper end (below the window) is a relation, checked in validate. */
    {.name = "vote_decision_threshold", .kind = PS_ATTR_INT32,
     .offset = OFF(vote_decision_threshold), .min = 0, .max = MAX_VOTE_WINDOW},
    {.name = "min_cpu_limit", .kind = PS_ATTR_DOUBLE, .offset = OFF(min_cpu_limit), .min = 0,
     .max = 1},
};

const struct ps_attr_table ps_cpu_monitor_config_table = {
    .what = "job_cpu_monitor",
    .attrs = attrs,
    .count = (int)(sizeof attrs / sizeof attrs[0]),
    .size = sizeof(struct ps_cpu_monitor_config),
    .init = config_init,
};

void ps_cpu_monitor_config_init(struct ps_cpu_monitor_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->enable_cpu_reclaim = false;
    cfg->check_period_ms = 1000;
    cfg->start_delay_ms = 0;
    cfg->smoothing_factor = 0.1;
    cfg->relative_upper_bound = 0.9;
    cfg->relative_lower_bound = 0.6;
    cfg->increase_coefficient = 1.45;
    cfg->decrease_coefficient = 0.97;
    cfg->vote_window_size = 5;
    cfg->vote_decision_threshold = 3;
    cfg->min_cpu_limit = 1.0;
}

int ps_cpu_monitor_config_validate(const struct ps_cpu_monitor_config *cfg, struct ps_error *err)
{
    int rc = ps_attr_check_ranges(&ps_cpu_monitor_config_table, cfg, "job_cpu_monitor", err);
    if (rc != 0)
        return rc;
    if (!(cfg->relative_lower_bound < cfg->relative_upper_bound))
        return ps_error_set(err, PS_EINVAL,
                            "job_cpu_monitor: relative_lower_bound %.15g must be less than "
                            "relative_upper_bound %.15g",
                            cfg->relative_lower_bound, cfg->relative_upper_bound);
    if (cfg->vote_decision_threshold >= cfg->vote_window_size)
        return ps_error_set(err, PS_EINVAL,
                            "job_cpu_monitor: vote_decision_threshold is %d but must be in "
                            "[0, vote_window_size = %d): a vote sum never exceeds the window",
                            cfg->vote_decision_threshold, cfg->vote_window_size);
    return 0;
}
