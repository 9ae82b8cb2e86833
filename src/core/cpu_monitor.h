/* cpu_monitor.h — the job CPU monitor: learns how much of its CPU limit a job really uses and
 * lowers (or raises back) the job's CPU guarantee, the "soft limit", so that the difference to
 * the hard limit can be lent to other jobs ("preemptible CPU").
 *
 * This is YTsaurus's TCpuMonitor (yt/yt/server/job_proxy/cpu_monitor.cpp) and its config
 * TJobCpuMonitorConfig (operation spec key `job_cpu_monitor`), semantics.md section 4.
 * The engine part only: the node agent (or the simulator) calls ps_cpu_monitor_tick() every
 * check_period with the job's cumulative CPU time and applies the new guarantee to the cgroup
 * when the result says so.
 *
 * Differences from upstream, all deliberate:
 * - Upstream reads TInstant::Now() and the job's CPU time itself; here both come in as
 *   arguments. The cumulative CPU time is rounded to whole microseconds, as upstream's
 *   TDuration holds it, and usage = delta_cpu_us / delta_wall_us exactly as upstream divides.
 * - Validation is upstream's ranges plus checks that reject configurations under which the
 *   monitor can never act (see ps_cpu_monitor_config_validate). Listed per key below.
 */
#ifndef PS_CORE_CPU_MONITOR_H
#define PS_CORE_CPU_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/attr.h"
#include "core/error.h"
#include "core/stat_sample.h"

/* ---------------------------------------------------------------------------------------------
 * Config
 * ------------------------------------------------------------------------------------------- */

struct ps_cpu_monitor_config {
    bool enable_cpu_reclaim;        /* false. Off = "dry run": the soft limit and the statistics
                                     * still move, but the real guarantee is never changed. */
    int64_t check_period_ms;        /* 1000; > 0 (upstream: any duration) */
    int64_t start_delay_ms;         /* 0; >= 0 */
    double smoothing_factor;        /* 0.1; in (0, 1] (upstream [0, 1]; 0 would freeze the
                                     * smoothed usage at the hard limit forever) */
    double relative_upper_bound;    /* 0.9; in (0, 1], > relative_lower_bound */
    double relative_lower_bound;    /* 0.6; in [0, 1), < relative_upper_bound (upstream checks
                                     * each bound in [0, 1] but not their order) */
    double increase_coefficient;    /* 1.45; in [1, 2] */
    double decrease_coefficient;    /* 0.97; in [0, 1] */
    int vote_window_size;           /* 5; >= 1 */
    int vote_decision_threshold;    /* 3; in [0, vote_window_size) (upstream > 0 and no upper
                                     * limit; a threshold >= the window never decides) */
    double min_cpu_limit;           /* 1 (cores); in [0, 1] as upstream */
};

/* Fills in the current upstream defaults (semantics.md 4.1). */
void ps_cpu_monitor_config_init(struct ps_cpu_monitor_config *cfg);

/* Checks every key's range (the table's) and the relations between keys. Returns 0 or
 * PS_EINVAL with a message such as "job_cpu_monitor/check_period: must be in (0, 1e+12], got 0"
 * or "job_cpu_monitor: vote_decision_threshold is 5 but must be in [0, vote_window_size = 5)". */
int ps_cpu_monitor_config_validate(const struct ps_cpu_monitor_config *cfg, struct ps_error *err);

/* The schema of `job_cpu_monitor` (names, kinds, ranges, defaults above): every reader of the
 * section (operation specs through op_spec.h, the node protocol, tests) sets and reads keys with
 * the generic functions of attr.h on this table, then calls ps_cpu_monitor_config_validate
 * for the relations between keys. Durations are whole milliseconds, as YTsaurus durations in
 * specs. */
extern const struct ps_attr_table ps_cpu_monitor_config_table;

/* ---------------------------------------------------------------------------------------------
 * The monitor
 * ------------------------------------------------------------------------------------------- */

enum ps_cpu_vote {
    PS_CPU_VOTE_NONE = 0,       /* no vote this tick (not started, or baseline tick) */
    PS_CPU_VOTE_DECREASE,       /* smoothed / soft < relative_lower_bound */
    PS_CPU_VOTE_KEEP,
    PS_CPU_VOTE_INCREASE,       /* smoothed / soft > relative_upper_bound */
};

/* One job's monitor. Embed it and use _init/_release; fields are read-only for callers. */
struct ps_cpu_monitor {
    struct ps_cpu_monitor_config config;
    double hard_limit;              /* the job's CPU limit, cores */
    double soft_limit;              /* the current guarantee, cores, in [min_limit, hard_limit] */
    double min_limit;               /* min(hard_limit, config.min_cpu_limit) */

    bool started;                   /* ps_cpu_monitor_start was called */
    int64_t start_instant_ms;       /* start time + start_delay */
    bool check_started;             /* latched once a tick reached start_instant_ms */

    bool has_last_sample;
    int64_t last_check_ms;
    int64_t last_total_cpu_us;

    bool has_smoothed;
    double smoothed_usage;          /* cores */

    signed char *votes;             /* ring buffer of config.vote_window_size votes, each
                                     * -1 (decrease), 0 (keep) or +1 (increase) */
    int vote_head;                  /* index of the oldest vote */
    int vote_count;

    double aggregated_smoothed_cpu;     /* core-seconds */
    double aggregated_preemptible_cpu;  /* core-seconds */
    double aggregated_max_cpu;          /* core-seconds */
};

/* Prepares a monitor for a job whose CPU limit is `cpu_limit` cores (hard = soft = limit).
 * Copies the config. Errors: PS_EINVAL for an invalid config or a cpu_limit that is negative or
 * not finite; PS_ENOMEM. On error nothing needs releasing. */
int ps_cpu_monitor_init(struct ps_cpu_monitor *m, const struct ps_cpu_monitor_config *cfg,
                        double cpu_limit, struct ps_error *err);

/* Frees the vote buffer. Safe on a zeroed or already released monitor. */
void ps_cpu_monitor_release(struct ps_cpu_monitor *m);

/* Starts monitoring at now_ms: checks begin at now_ms + start_delay. PS_ESTATE if started. */
int ps_cpu_monitor_start(struct ps_cpu_monitor *m, int64_t now_ms, struct ps_error *err);

/* The callback through which the monitor asks to set the job's real CPU guarantee when
 * enable_cpu_reclaim is on; returns false when the guarantee could not be set, in which case the
 * soft limit stays as it was (upstream's TrySetCpuGuarantee). */
typedef bool (*ps_cpu_guarantee_fn)(void *ctx, double cpu_cores);

/* What one tick did. */
struct ps_cpu_monitor_tick {
    bool checked;               /* now_ms >= start instant, so the check ran */
    bool measured;              /* a usage interval was measured (false on the baseline tick) */
    double cpu_usage;           /* cores used over the interval, when measured */
    double smoothed_usage;      /* the smoothed usage after the tick, when measured */
    enum ps_cpu_vote vote;      /* the vote cast this tick */
    bool decided;               /* the window produced a new soft limit */
    bool changed;               /* the soft limit changed (decided and not refused) */
    bool refused;               /* decided, but the guarantee callback refused it */
    bool apply;                 /* changed with reclaim on: the job's real guarantee must be
                                 * new_soft_limit (already done if a callback was given) */
    double old_soft_limit;
    double new_soft_limit;      /* equals old_soft_limit unless changed */
};

/* One check at now_ms; total_cpu_seconds is the cumulative CPU time the job has spent so far
 * (user + system, all its processes). Follows semantics.md 4.2 step by step:
 * before the start instant nothing happens; the first check after it only records a baseline;
 * the first measured tick sets the smoothed usage to the hard limit, later ones smooth the
 * measured usage in; then a vote, possibly a decision (clamped to [min limit, hard limit]), and
 * the aggregates grow by the interval.
 *
 * When a decision is made and enable_cpu_reclaim is on, try_set (if not NULL) is called with
 * the new limit and may refuse it; with try_set NULL the change is accepted and out->apply asks
 * the caller to apply it. With reclaim off the soft limit still changes and try_set is not
 * called ("dry run"). try_set and ctx may be NULL.
 *
 * Errors (the monitor is unchanged): PS_ESTATE before ps_cpu_monitor_start; PS_EINVAL when
 * total_cpu_seconds is negative or not finite, when it is less than at the previous measured
 * tick, or when now_ms is not after the previous sample. */
int ps_cpu_monitor_tick(struct ps_cpu_monitor *m, int64_t now_ms, double total_cpu_seconds,
                        ps_cpu_guarantee_fn try_set, void *ctx,
                        struct ps_cpu_monitor_tick *out, struct ps_error *err);

/* Hard - soft, the CPU other jobs may use (cores). */
double ps_cpu_monitor_preemptible_cpu(const struct ps_cpu_monitor *m);

/* The job's statistics, as YTsaurus's FillStatistics: integers x100, truncated toward zero
 * (values beyond int64 saturate). Nothing is reported until the first measured tick.
 * Paths (in this order; the two "preemptable" ones are upstream's compatibility names):
 *   /job_proxy/smoothed_cpu_usage_x100
 *   /job_proxy/preemptable_cpu_x100, /job_proxy/preemptible_cpu_x100          (hard - soft)
 *   /job_proxy/aggregated_smoothed_cpu_usage_x100                            (sum smoothed*s)
 *   /job_proxy/aggregated_max_cpu_usage_x100                                 (sum hard*s)
 *   /job_proxy/aggregated_preemptable_cpu_x100, /job_proxy/aggregated_preemptible_cpu_x100
 *   /job_proxy/aggregated_preempted_cpu_x100      (aggregated preemptible if reclaim, else 0)
 * Writes up to PS_CPU_MONITOR_STAT_COUNT samples and returns how many (0 or all). */
#define PS_CPU_MONITOR_STAT_COUNT 8
size_t ps_cpu_monitor_statistics(const struct ps_cpu_monitor *m,
                                 struct ps_stat_sample out[PS_CPU_MONITOR_STAT_COUNT]);

/* The same values as a struct, for code that wants them by name. `valid` is false (and the
 * rest zero) until the first measured tick. */
struct ps_cpu_monitor_stats {
    bool valid;
    int64_t smoothed_cpu_usage_x100;
    int64_t preemptible_cpu_x100;
    int64_t aggregated_smoothed_cpu_usage_x100;
    int64_t aggregated_max_cpu_usage_x100;
    int64_t aggregated_preemptible_cpu_x100;
    int64_t aggregated_preempted_cpu_x100;
};
struct ps_cpu_monitor_stats ps_cpu_monitor_stats(const struct ps_cpu_monitor *m);

#endif
