/* cpu_monitor.c — the job CPU monitor state machine (semantics.md 4.2). */
#include "core/cpu_monitor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cumulative CPU time is kept in whole microseconds, as upstream's TDuration; this bound keeps
 * seconds * 1e6 inside int64 with room to spare. */
#define MAX_TOTAL_CPU_SECONDS 9e12

int ps_cpu_monitor_init(struct ps_cpu_monitor *m, const struct ps_cpu_monitor_config *cfg,
                        double cpu_limit, struct ps_error *err)
{
    memset(m, 0, sizeof *m);
    int rc = ps_cpu_monitor_config_validate(cfg, err);
    if (rc < 0)
        return rc;
    if (!isfinite(cpu_limit) || cpu_limit < 0)
        return ps_error_set(err, PS_EINVAL,
                            "job_cpu_monitor: the job's cpu_limit is %.15g but must be a finite "
                            "number of cores >= 0", cpu_limit);
    m->votes = calloc((size_t)cfg->vote_window_size, sizeof *m->votes);
    if (!m->votes)
        return ps_error_set(err, PS_ENOMEM,
                            "job_cpu_monitor: out of memory for a vote window of %d",
                            cfg->vote_window_size);
    m->config = *cfg;
    m->hard_limit = cpu_limit;
    m->soft_limit = cpu_limit;
    /* std::min order: the configured floor wins only when strictly smaller. */
    m->min_limit = cfg->min_cpu_limit < cpu_limit ? cfg->min_cpu_limit : cpu_limit;
    return 0;
}

void ps_cpu_monitor_release(struct ps_cpu_monitor *m)
{
    if (!m)
        return;
    free(m->votes);
    m->votes = NULL;
    m->vote_count = 0;
    m->vote_head = 0;
}

int ps_cpu_monitor_start(struct ps_cpu_monitor *m, int64_t now_ms, struct ps_error *err)
{
    if (m->started)
        return ps_error_set(err, PS_ESTATE, "job_cpu_monitor: the monitor is already started");
    if (now_ms > INT64_MAX - m->config.start_delay_ms)
        return ps_error_set(err, PS_EINVAL,
                            "job_cpu_monitor: start time %lld ms plus start_delay %lld ms "
                            "overflows", (long long)now_ms, (long long)m->config.start_delay_ms);
    m->started = true;
    m->start_instant_ms = now_ms + m->config.start_delay_ms;
    return 0;
}

static void push_vote(struct ps_cpu_monitor *m, int vote)
{
    int w = m->config.vote_window_size;
    m->votes[(m->vote_head + m->vote_count) % w] = (signed char)vote;
    m->vote_count++;
}

static int vote_sum(const struct ps_cpu_monitor *m)
{
    int w = m->config.vote_window_size, sum = 0;
    for (int i = 0; i < m->vote_count; i++)
        sum += m->votes[(m->vote_head + i) % w];
    return sum;
}

/* TryMakeDecision: only with a full window. Returns true and *limit when the soft limit should
 * move. Votes are cleared on any decisive sum (even when the limit is already at its bound),
 * otherwise the oldest vote drops out. */
static bool try_make_decision(struct ps_cpu_monitor *m, double *limit)
{
    if (m->vote_count < m->config.vote_window_size)
        return false;
    int sum = vote_sum(m);
    int threshold = m->config.vote_decision_threshold;
    bool decided = false;
    if (sum > threshold) {
        double raised = m->soft_limit * m->config.increase_coefficient;
        /* std::min(raised, hard) */
        double next = m->hard_limit < raised ? m->hard_limit : raised;
        if (next != m->soft_limit) {
            *limit = next;
            decided = true;
        }
        m->vote_count = 0;
        m->vote_head = 0;
    } else if (sum < -threshold) {
        double lowered = m->soft_limit * m->config.decrease_coefficient;
        /* std::max(lowered, min limit) */
        double next = lowered < m->min_limit ? m->min_limit : lowered;
        if (next != m->soft_limit) {
            *limit = next;
            decided = true;
        }
        m->vote_count = 0;
        m->vote_head = 0;
    } else {
        m->vote_head = (m->vote_head + 1) % m->config.vote_window_size;
        m->vote_count--;
    }
    return decided;
}

int ps_cpu_monitor_tick(struct ps_cpu_monitor *m, int64_t now_ms, double total_cpu_seconds,
                        ps_cpu_guarantee_fn try_set, void *ctx,
                        struct ps_cpu_monitor_tick *out, struct ps_error *err)
{
    struct ps_cpu_monitor_tick r;
    memset(&r, 0, sizeof r);
    r.vote = PS_CPU_VOTE_NONE;
    r.old_soft_limit = r.new_soft_limit = m->soft_limit;

    /* Every check comes before any change, so that an error leaves the monitor as it was. */
    if (!m->started)
        return ps_error_set(err, PS_ESTATE, "job_cpu_monitor: tick before start");
    if (!isfinite(total_cpu_seconds) || total_cpu_seconds < 0 ||
        total_cpu_seconds > MAX_TOTAL_CPU_SECONDS)
        return ps_error_set(err, PS_EINVAL,
                            "job_cpu_monitor: total_cpu_seconds is %.15g but must be a finite "
                            "number of seconds in [0, 9e12]", total_cpu_seconds);
    int64_t total_cpu_us = llround(total_cpu_seconds * 1e6);
    if (m->has_last_sample) {
        if (now_ms <= m->last_check_ms)
            return ps_error_set(err, PS_EINVAL,
                                "job_cpu_monitor: now_ms %lld is not after the previous check "
                                "at %lld ms", (long long)now_ms, (long long)m->last_check_ms);
        if (now_ms - m->last_check_ms > INT64_MAX / 1000)
            return ps_error_set(err, PS_EINVAL,
                                "job_cpu_monitor: interval from %lld ms to %lld ms is too long",
                                (long long)m->last_check_ms, (long long)now_ms);
        if (total_cpu_us < m->last_total_cpu_us)
            return ps_error_set(err, PS_EINVAL,
                                "job_cpu_monitor: total_cpu_seconds %.15g is less than at the "
                                "previous check (%.15g): CPU time is cumulative",
                                total_cpu_seconds, (double)m->last_total_cpu_us / 1e6);
    }

    if (!m->check_started) {
        if (now_ms < m->start_instant_ms) {
            if (out)
                *out = r;
            return 0;
        }
        m->check_started = true;
    }
    r.checked = true;

    /* TryUpdateSmoothedValue: the first check only records a baseline. */
    if (!m->has_last_sample) {
        m->has_last_sample = true;
        m->last_check_ms = now_ms;
        m->last_total_cpu_us = total_cpu_us;
        if (out)
            *out = r;
        return 0;
    }
    int64_t interval_us = (now_ms - m->last_check_ms) * 1000;
    int64_t delta_cpu_us = total_cpu_us - m->last_total_cpu_us;
    double usage = (double)delta_cpu_us / (double)interval_us;
    double alpha = m->config.smoothing_factor;
    /* The first smoothed value is the hard limit, not the measured usage: a job starts
     * trusted with all of its limit. */
    m->smoothed_usage = m->has_smoothed ? alpha * usage + (1 - alpha) * m->smoothed_usage
                                        : m->hard_limit;
    m->has_smoothed = true;
    m->last_check_ms = now_ms;
    m->last_total_cpu_us = total_cpu_us;
    r.measured = true;
    r.cpu_usage = usage;
    r.smoothed_usage = m->smoothed_usage;

    /* UpdateVotes: strict comparisons on both sides. */
    double ratio = m->smoothed_usage / m->soft_limit;
    if (ratio < m->config.relative_lower_bound) {
        push_vote(m, -1);
        r.vote = PS_CPU_VOTE_DECREASE;
    } else if (ratio > m->config.relative_upper_bound) {
        push_vote(m, +1);
        r.vote = PS_CPU_VOTE_INCREASE;
    } else {
        push_vote(m, 0);
        r.vote = PS_CPU_VOTE_KEEP;
    }

    double limit = 0;
    if (try_make_decision(m, &limit)) {
        r.decided = true;
        bool accepted = true;
        if (m->config.enable_cpu_reclaim && try_set)
            accepted = try_set(ctx, limit);
        if (accepted) {
            m->soft_limit = limit;
            r.changed = true;
            r.apply = m->config.enable_cpu_reclaim;
            r.new_soft_limit = limit;
        } else {
            r.refused = true;
        }
    }

    /* UpdateAggregates, with the interval converted as upstream: us / 1000 / 1000. */
    double seconds = (double)interval_us / 1000 / 1000;
    m->aggregated_smoothed_cpu += m->smoothed_usage * seconds;
    m->aggregated_preemptible_cpu += (m->hard_limit - m->soft_limit) * seconds;
    m->aggregated_max_cpu += m->hard_limit * seconds;

    if (out)
        *out = r;
    return 0;
}

double ps_cpu_monitor_preemptible_cpu(const struct ps_cpu_monitor *m)
{
    return m->hard_limit - m->soft_limit;
}

/* static_cast<i64>(v * 100), saturating instead of overflowing. */
static int64_t x100(double v)
{
    return ps_i64_of_double(v * 100);
}

struct ps_cpu_monitor_stats ps_cpu_monitor_stats(const struct ps_cpu_monitor *m)
{
    struct ps_cpu_monitor_stats s;
    memset(&s, 0, sizeof s);
    if (!m->has_smoothed)
        return s;
    s.valid = true;
    s.smoothed_cpu_usage_x100 = x100(m->smoothed_usage);
    s.preemptible_cpu_x100 = x100(m->hard_limit - m->soft_limit);
    s.aggregated_smoothed_cpu_usage_x100 = x100(m->aggregated_smoothed_cpu);
    s.aggregated_max_cpu_usage_x100 = x100(m->aggregated_max_cpu);
    s.aggregated_preemptible_cpu_x100 = x100(m->aggregated_preemptible_cpu);
    s.aggregated_preempted_cpu_x100 =
        m->config.enable_cpu_reclaim ? s.aggregated_preemptible_cpu_x100 : 0;
    return s;
}

size_t ps_cpu_monitor_statistics(const struct ps_cpu_monitor *m,
                                 struct ps_stat_sample out[PS_CPU_MONITOR_STAT_COUNT])
{
    struct ps_cpu_monitor_stats s = ps_cpu_monitor_stats(m);
    if (!s.valid)
        return 0;
    size_t n = 0;
    out[n++] = (struct ps_stat_sample){"/job_proxy/smoothed_cpu_usage_x100",
                                       s.smoothed_cpu_usage_x100};
    out[n++] = (struct ps_stat_sample){"/job_proxy/preemptable_cpu_x100", s.preemptible_cpu_x100};
    out[n++] = (struct ps_stat_sample){"/job_proxy/preemptible_cpu_x100", s.preemptible_cpu_x100};
    out[n++] = (struct ps_stat_sample){"/job_proxy/aggregated_smoothed_cpu_usage_x100",
                                       s.aggregated_smoothed_cpu_usage_x100};
    out[n++] = (struct ps_stat_sample){"/job_proxy/aggregated_max_cpu_usage_x100",
                                       s.aggregated_max_cpu_usage_x100};
    out[n++] = (struct ps_stat_sample){"/job_proxy/aggregated_preemptable_cpu_x100",
                                       s.aggregated_preemptible_cpu_x100};
    out[n++] = (struct ps_stat_sample){"/job_proxy/aggregated_preemptible_cpu_x100",
                                       s.aggregated_preemptible_cpu_x100};
    out[n++] = (struct ps_stat_sample){"/job_proxy/aggregated_preempted_cpu_x100",
                                       s.aggregated_preempted_cpu_x100};
    return n;
}
