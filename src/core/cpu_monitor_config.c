/* cpu_monitor_config.c — TJobCpuMonitorConfig: defaults, generic key access, validation. */
#include "core/cpu_monitor.h"

#include <math.h>
#include <string.h>

/* Durations and windows get an upper limit upstream does not have, so that arithmetic on
 * them (ms -> us, now + start_delay, the vote buffer) cannot overflow or exhaust memory. */
#define MAX_DURATION_MS 1e12        /* about 31 years */
#define MAX_VOTE_WINDOW 1000000

enum key_id {
    K_ENABLE_CPU_RECLAIM,
    K_CHECK_PERIOD,
    K_START_DELAY,
    K_SMOOTHING_FACTOR,
    K_RELATIVE_UPPER_BOUND,
    K_RELATIVE_LOWER_BOUND,
    K_INCREASE_COEFFICIENT,
    K_DECREASE_COEFFICIENT,
    K_VOTE_WINDOW_SIZE,
    K_VOTE_DECISION_THRESHOLD,
    K_MIN_CPU_LIMIT,
    K_COUNT
};

struct key_range {
    double lo, hi;
    bool lo_open, hi_open;
};

static const struct ps_cpu_monitor_key keys[K_COUNT] = {
    [K_ENABLE_CPU_RECLAIM] = {"enable_cpu_reclaim", PS_CPU_MONITOR_KEY_BOOL, "false (0) or true (1)"},
    [K_CHECK_PERIOD] = {"check_period", PS_CPU_MONITOR_KEY_DURATION_MS, "(0, 1e12] ms"},
    [K_START_DELAY] = {"start_delay", PS_CPU_MONITOR_KEY_DURATION_MS, "[0, 1e12] ms"},
    [K_SMOOTHING_FACTOR] = {"smoothing_factor", PS_CPU_MONITOR_KEY_DOUBLE, "(0, 1]"},
    [K_RELATIVE_UPPER_BOUND] = {"relative_upper_bound", PS_CPU_MONITOR_KEY_DOUBLE,
                                "(0, 1], above relative_lower_bound"},
    [K_RELATIVE_LOWER_BOUND] = {"relative_lower_bound", PS_CPU_MONITOR_KEY_DOUBLE,
                                "[0, 1), below relative_upper_bound"},
    [K_INCREASE_COEFFICIENT] = {"increase_coefficient", PS_CPU_MONITOR_KEY_DOUBLE, "[1, 2]"},
    [K_DECREASE_COEFFICIENT] = {"decrease_coefficient", PS_CPU_MONITOR_KEY_DOUBLE, "[0, 1]"},
    [K_VOTE_WINDOW_SIZE] = {"vote_window_size", PS_CPU_MONITOR_KEY_INT, "[1, 1000000]"},
    [K_VOTE_DECISION_THRESHOLD] = {"vote_decision_threshold", PS_CPU_MONITOR_KEY_INT,
                                   "[0, vote_window_size)"},
    [K_MIN_CPU_LIMIT] = {"min_cpu_limit", PS_CPU_MONITOR_KEY_DOUBLE, "[0, 1]"},
};

static const struct key_range ranges[K_COUNT] = {
    [K_ENABLE_CPU_RECLAIM] = {0, 1, false, false},
    [K_CHECK_PERIOD] = {0, MAX_DURATION_MS, true, false},
    [K_START_DELAY] = {0, MAX_DURATION_MS, false, false},
    [K_SMOOTHING_FACTOR] = {0, 1, true, false},
    [K_RELATIVE_UPPER_BOUND] = {0, 1, true, false},
    [K_RELATIVE_LOWER_BOUND] = {0, 1, false, true},
    [K_INCREASE_COEFFICIENT] = {1, 2, false, false},
    [K_DECREASE_COEFFICIENT] = {0, 1, false, false},
    [K_VOTE_WINDOW_SIZE] = {1, MAX_VOTE_WINDOW, false, false},
    /* The upper end (below the window) is a relation, checked in validate. */
    [K_VOTE_DECISION_THRESHOLD] = {0, MAX_VOTE_WINDOW, false, false},
    [K_MIN_CPU_LIMIT] = {0, 1, false, false},
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

size_t ps_cpu_monitor_config_key_count(void)
{
    return K_COUNT;
}

const struct ps_cpu_monitor_key *ps_cpu_monitor_config_key(size_t i)
{
    return i < K_COUNT ? &keys[i] : NULL;
}

static int find_key(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < K_COUNT; i++)
        if (strcmp(keys[i].name, name) == 0)
            return i;
    return -1;
}

static double get_value(const struct ps_cpu_monitor_config *cfg, int id)
{
    switch (id) {
    case K_ENABLE_CPU_RECLAIM: return cfg->enable_cpu_reclaim ? 1.0 : 0.0;
    case K_CHECK_PERIOD: return (double)cfg->check_period_ms;
    case K_START_DELAY: return (double)cfg->start_delay_ms;
    case K_SMOOTHING_FACTOR: return cfg->smoothing_factor;
    case K_RELATIVE_UPPER_BOUND: return cfg->relative_upper_bound;
    case K_RELATIVE_LOWER_BOUND: return cfg->relative_lower_bound;
    case K_INCREASE_COEFFICIENT: return cfg->increase_coefficient;
    case K_DECREASE_COEFFICIENT: return cfg->decrease_coefficient;
    case K_VOTE_WINDOW_SIZE: return (double)cfg->vote_window_size;
    case K_VOTE_DECISION_THRESHOLD: return (double)cfg->vote_decision_threshold;
    case K_MIN_CPU_LIMIT: return cfg->min_cpu_limit;
    default: return NAN;
    }
}

/* value must already be checked against the key's kind and range. */
static void put_value(struct ps_cpu_monitor_config *cfg, int id, double value)
{
    switch (id) {
    case K_ENABLE_CPU_RECLAIM: cfg->enable_cpu_reclaim = value != 0.0; break;
    case K_CHECK_PERIOD: cfg->check_period_ms = (int64_t)value; break;
    case K_START_DELAY: cfg->start_delay_ms = (int64_t)value; break;
    case K_SMOOTHING_FACTOR: cfg->smoothing_factor = value; break;
    case K_RELATIVE_UPPER_BOUND: cfg->relative_upper_bound = value; break;
    case K_RELATIVE_LOWER_BOUND: cfg->relative_lower_bound = value; break;
    case K_INCREASE_COEFFICIENT: cfg->increase_coefficient = value; break;
    case K_DECREASE_COEFFICIENT: cfg->decrease_coefficient = value; break;
    case K_VOTE_WINDOW_SIZE: cfg->vote_window_size = (int)value; break;
    case K_VOTE_DECISION_THRESHOLD: cfg->vote_decision_threshold = (int)value; break;
    case K_MIN_CPU_LIMIT: cfg->min_cpu_limit = value; break;
    default: break;
    }
}

/* Checks one key's own kind and range; the message names the key, the value and the range. */
static int check_value(int id, double value, struct ps_error *err)
{
    const struct ps_cpu_monitor_key *k = &keys[id];
    const struct key_range *r = &ranges[id];
    bool whole = k->kind != PS_CPU_MONITOR_KEY_DOUBLE;
    bool ok = isfinite(value)
        && (r->lo_open ? value > r->lo : value >= r->lo)
        && (r->hi_open ? value < r->hi : value <= r->hi)
        && (!whole || floor(value) == value);
    if (ok)
        return 0;
    if (k->kind == PS_CPU_MONITOR_KEY_BOOL)
        return ps_error_set(err, PS_EINVAL, "job_cpu_monitor: %s is %.15g but must be %s",
                            k->name, value, k->range);
    return ps_error_set(err, PS_EINVAL, "job_cpu_monitor: %s is %.15g but must be %sin %s",
                        k->name, value, whole ? "a whole number " : "", k->range);
}

int ps_cpu_monitor_config_set(struct ps_cpu_monitor_config *cfg, const char *key, double value,
                              struct ps_error *err)
{
    int id = find_key(key);
    if (id < 0)
        return ps_error_set(err, PS_ENOENT, "job_cpu_monitor: unknown key \"%s\"",
                            key ? key : "(null)");
    int rc = check_value(id, value, err);
    if (rc < 0)
        return rc;
    put_value(cfg, id, value);
    return 0;
}

int ps_cpu_monitor_config_get(const struct ps_cpu_monitor_config *cfg, const char *key,
                              double *value, struct ps_error *err)
{
    int id = find_key(key);
    if (id < 0)
        return ps_error_set(err, PS_ENOENT, "job_cpu_monitor: unknown key \"%s\"",
                            key ? key : "(null)");
    *value = get_value(cfg, id);
    return 0;
}

int ps_cpu_monitor_config_validate(const struct ps_cpu_monitor_config *cfg, struct ps_error *err)
{
    for (int id = 0; id < K_COUNT; id++) {
        int rc = check_value(id, get_value(cfg, id), err);
        if (rc < 0)
            return rc;
    }
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
