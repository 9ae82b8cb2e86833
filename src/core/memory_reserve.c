/* memory_reserve.c — per-task memory digests and reserves (semantics.md 5.2). */
#include "core/memory_reserve.h"

#include <math.h>
#include <string.h>

#define MIB (INT64_C(1) << 20)
#define TIB (INT64_C(1) << 40)

/* std::min / std::max argument order, which decides which operand a tie returns. */
static double std_min(double a, double b)
{
    return b < a ? b : a;
}

static double std_max(double a, double b)
{
    return a < b ? b : a;
}

static bool in_range(double v, double lo, double hi)
{
    return v >= lo && v <= hi; /* false for NaN */
}

static int range_error(struct ps_error *err, const char *key, double v, const char *range)
{
    return ps_error_set(err, PS_EINVAL, "memory reserve: %s is %.15g but must be in %s", key, v,
                        range);
}

/* ---------------------------------------------------------------------------------------------
 * Configuration
 * ------------------------------------------------------------------------------------------- */

void ps_memory_controller_config_init(struct ps_memory_controller_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->user_job_memory_digest_precision = 0.01;
    cfg->user_job_memory_reserve_quantile = 0.95;
    cfg->job_proxy_memory_reserve_quantile = 0.95;
    cfg->memory_digest_resource_overdraft_factor = 1.1;
    cfg->footprint_memory_bytes = 128 * MIB;
}

int ps_memory_controller_config_validate(const struct ps_memory_controller_config *cfg,
                                         struct ps_error *err)
{
    if (!(cfg->user_job_memory_digest_precision > 0) ||
        !isfinite(cfg->user_job_memory_digest_precision))
        return range_error(err, "user_job_memory_digest_precision",
                           cfg->user_job_memory_digest_precision, "(0, inf)");
    if (!in_range(cfg->user_job_memory_reserve_quantile, 0, 1))
        return range_error(err, "user_job_memory_reserve_quantile",
                           cfg->user_job_memory_reserve_quantile, "[0, 1]");
    if (!in_range(cfg->job_proxy_memory_reserve_quantile, 0, 1))
        return range_error(err, "job_proxy_memory_reserve_quantile",
                           cfg->job_proxy_memory_reserve_quantile, "[0, 1]");
    if (!in_range(cfg->memory_digest_resource_overdraft_factor, 1, 10))
        return range_error(err, "memory_digest_resource_overdraft_factor",
                           cfg->memory_digest_resource_overdraft_factor, "[1, 10]");
    if (cfg->user_job_resource_overdraft_memory_multiplier.set &&
        !in_range(cfg->user_job_resource_overdraft_memory_multiplier.value, 1, 10))
        return range_error(err, "user_job_resource_overdraft_memory_multiplier",
                           cfg->user_job_resource_overdraft_memory_multiplier.value, "[1, 10]");
    if (cfg->job_proxy_resource_overdraft_memory_multiplier.set &&
        !in_range(cfg->job_proxy_resource_overdraft_memory_multiplier.value, 1, 10))
        return range_error(err, "job_proxy_resource_overdraft_memory_multiplier",
                           cfg->job_proxy_resource_overdraft_memory_multiplier.value, "[1, 10]");
    if (cfg->footprint_memory_bytes < 0)
        return ps_error_set(err, PS_EINVAL,
                            "memory reserve: footprint_memory is %lld bytes but must be >= 0",
                            (long long)cfg->footprint_memory_bytes);
    return 0;
}

void ps_memory_task_spec_init(struct ps_memory_task_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->memory_limit_bytes = 512 * MIB;
    spec->user_job_memory_digest_default_value = 0.5;
    spec->user_job_memory_digest_lower_bound = 0.05;
    ps_log_digest_config_init(&spec->job_proxy_memory_digest);
    spec->job_proxy_memory_digest.lower_bound = 0.5;
    spec->job_proxy_memory_digest.upper_bound = 2.0;
    spec->job_proxy_memory_digest.has_default_value = true;
    spec->job_proxy_memory_digest.default_value = 1.0;
}

int ps_memory_task_spec_validate(const struct ps_memory_task_spec *spec, struct ps_error *err)
{
    if (spec->memory_limit_bytes <= 0 || spec->memory_limit_bytes > 16 * TIB)
        return ps_error_set(err, PS_EINVAL,
                            "memory reserve: memory_limit is %lld bytes but must be in "
                            "(0, 16 TiB]", (long long)spec->memory_limit_bytes);
    if (spec->tmpfs_size_bytes < 0)
        return ps_error_set(err, PS_EINVAL,
                            "memory reserve: tmpfs size is %lld bytes but must be >= 0",
                            (long long)spec->tmpfs_size_bytes);
    if (spec->tmpfs_size_bytes > spec->memory_limit_bytes)
        return ps_error_set(err, PS_EINVAL,
                            "memory reserve: total size of tmpfs volumes %lld bytes must be less "
                            "than or equal to memory_limit %lld bytes",
                            (long long)spec->tmpfs_size_bytes,
                            (long long)spec->memory_limit_bytes);
    if (!(spec->user_job_memory_digest_default_value > 0) ||
        !(spec->user_job_memory_digest_default_value <= 1))
        return range_error(err, "user_job_memory_digest_default_value",
                           spec->user_job_memory_digest_default_value, "(0, 1]");
    if (!(spec->user_job_memory_digest_lower_bound > 0) ||
        !(spec->user_job_memory_digest_lower_bound <= 1))
        return range_error(err, "user_job_memory_digest_lower_bound",
                           spec->user_job_memory_digest_lower_bound, "(0, 1]");
    if (spec->has_memory_reserve_factor &&
        (!(spec->memory_reserve_factor > 0) || !(spec->memory_reserve_factor <= 1)))
        return range_error(err, "memory_reserve_factor", spec->memory_reserve_factor, "(0, 1]");
    if (spec->has_user_job_resource_overdraft_memory_multiplier &&
        !in_range(spec->user_job_resource_overdraft_memory_multiplier, 1, 10))
        return range_error(err, "user_job_resource_overdraft_memory_multiplier",
                           spec->user_job_resource_overdraft_memory_multiplier, "[1, 10]");
    if (spec->has_job_proxy_resource_overdraft_memory_multiplier &&
        !in_range(spec->job_proxy_resource_overdraft_memory_multiplier, 1, 10))
        return range_error(err, "job_proxy_resource_overdraft_memory_multiplier",
                           spec->job_proxy_resource_overdraft_memory_multiplier, "[1, 10]");
    if (spec->job_proxy_memory_bytes < 0)
        return ps_error_set(err, PS_EINVAL,
                            "memory reserve: job proxy memory estimate is %lld bytes but must "
                            "be >= 0", (long long)spec->job_proxy_memory_bytes);
    int rc = ps_log_digest_config_validate(&spec->job_proxy_memory_digest, err);
    if (rc < 0) {
        ps_error_prefix(err, "memory reserve: job_proxy_memory_digest");
        return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Per-task state
 * ------------------------------------------------------------------------------------------- */

int ps_memory_task_init(struct ps_memory_task *t, const struct ps_memory_controller_config *cfg,
                        const struct ps_memory_task_spec *spec, struct ps_error *err)
{
    memset(t, 0, sizeof *t);
    int rc = ps_memory_controller_config_validate(cfg, err);
    if (rc < 0)
        return rc;
    rc = ps_memory_task_spec_validate(spec, err);
    if (rc < 0)
        return rc;

    /* The user job spec's postprocessing (upstream TUserJobSpec::Register). */
    double lower = spec->user_job_memory_digest_lower_bound;
    double def = spec->user_job_memory_digest_default_value;
    if (spec->has_memory_reserve_factor &&
        (spec->memory_reserve_factor == 1.0 || !spec->ignore_memory_reserve_factor_less_than_one))
        lower = def = spec->memory_reserve_factor;
    /* The reserve must hold the tmpfs: overcommitting tmpfs can hang a node (YT-5518). */
    double tmpfs_ratio = (double)spec->tmpfs_size_bytes / (double)spec->memory_limit_bytes;
    def = std_min(1.0, std_max(def, tmpfs_ratio));
    lower = std_min(1.0, std_max(lower, tmpfs_ratio));
    def = std_max(lower, def);

    struct ps_log_digest_config user_cfg;
    ps_log_digest_config_init(&user_cfg);
    user_cfg.lower_bound = lower;
    user_cfg.upper_bound = 1.0;
    user_cfg.has_default_value = true;
    user_cfg.default_value = def;
    user_cfg.relative_precision = cfg->user_job_memory_digest_precision;
    rc = ps_log_digest_init(&t->user_job_digest, &user_cfg, err);
    if (rc < 0) {
        ps_error_prefix(err, "memory reserve: user job memory digest");
        return rc;
    }
    rc = ps_log_digest_init(&t->job_proxy_digest, &spec->job_proxy_memory_digest, err);
    if (rc < 0) {
        ps_error_prefix(err, "memory reserve: job_proxy_memory_digest");
        ps_log_digest_release(&t->user_job_digest);
        return rc;
    }

    t->user_job_memory_reserve_quantile = cfg->user_job_memory_reserve_quantile;
    t->job_proxy_memory_reserve_quantile = cfg->job_proxy_memory_reserve_quantile;
    t->overdraft_factor = cfg->memory_digest_resource_overdraft_factor;
    if (cfg->use_resource_overdraft_memory_multiplier_from_spec) {
        t->has_user_job_multiplier = spec->has_user_job_resource_overdraft_memory_multiplier;
        t->user_job_multiplier = spec->user_job_resource_overdraft_memory_multiplier;
        t->has_job_proxy_multiplier = spec->has_job_proxy_resource_overdraft_memory_multiplier;
        t->job_proxy_multiplier = spec->job_proxy_resource_overdraft_memory_multiplier;
    } else {
        t->has_user_job_multiplier = cfg->user_job_resource_overdraft_memory_multiplier.set;
        t->user_job_multiplier = cfg->user_job_resource_overdraft_memory_multiplier.value;
        t->has_job_proxy_multiplier = cfg->job_proxy_resource_overdraft_memory_multiplier.set;
        t->job_proxy_multiplier = cfg->job_proxy_resource_overdraft_memory_multiplier.value;
    }
    t->job_proxy_upper_bound = spec->job_proxy_memory_digest.upper_bound;
    t->memory_limit_bytes = spec->memory_limit_bytes;
    t->tmpfs_size_bytes = spec->tmpfs_size_bytes;
    t->footprint_memory_bytes = cfg->footprint_memory_bytes;
    t->job_proxy_memory_bytes = spec->job_proxy_memory_bytes;
    t->user_job_digest_lower_bound = lower;
    t->user_job_digest_default_value = def;
    return 0;
}

void ps_memory_task_release(struct ps_memory_task *t)
{
    if (!t)
        return;
    ps_log_digest_release(&t->user_job_digest);
    ps_log_digest_release(&t->job_proxy_digest);
}

double ps_memory_task_user_job_reserve_factor(const struct ps_memory_task *t)
{
    return ps_log_digest_quantile(&t->user_job_digest, t->user_job_memory_reserve_quantile);
}

double ps_memory_task_job_proxy_reserve_factor(const struct ps_memory_task *t)
{
    return ps_log_digest_quantile(&t->job_proxy_digest, t->job_proxy_memory_reserve_quantile);
}

/* ---------------------------------------------------------------------------------------------
 * Jobs
 * ------------------------------------------------------------------------------------------- */

void ps_memory_overdraft_state_init(struct ps_memory_overdraft_state *st)
{
    memset(st, 0, sizeof *st);
    st->user_job_status = PS_OVERDRAFT_NONE;
    st->job_proxy_status = PS_OVERDRAFT_NONE;
}

void ps_memory_task_reserve(const struct ps_memory_task *t,
                            const struct ps_memory_overdraft_state *st,
                            struct ps_memory_job *job)
{
    memset(job, 0, sizeof *job);
    job->memory_limit_bytes = t->memory_limit_bytes;
    job->job_proxy_memory_bytes = t->job_proxy_memory_bytes;
    job->footprint_memory_bytes = t->footprint_memory_bytes;

    if (st && st->job_proxy_status != PS_OVERDRAFT_NONE) {
        job->job_proxy_memory_reserve_factor = st->dedicated_job_proxy_memory_reserve_factor;
        job->job_proxy_factor_from_overdraft = true;
    } else {
        job->job_proxy_memory_reserve_factor = ps_memory_task_job_proxy_reserve_factor(t);
    }
    if (st && st->user_job_status != PS_OVERDRAFT_NONE) {
        job->user_job_memory_reserve_factor = st->dedicated_user_job_memory_reserve_factor;
        job->user_job_factor_from_overdraft = true;
    } else {
        job->user_job_memory_reserve_factor = ps_memory_task_user_job_reserve_factor(t);
    }

    /* ApplyMemoryReserve: an i64 accumulator to which double products are added, so each
     * step truncates to whole bytes. */
    int64_t memory = t->footprint_memory_bytes;
    memory = ps_i64_of_double((double)memory +
                    (double)t->job_proxy_memory_bytes * job->job_proxy_memory_reserve_factor);
    memory = ps_i64_of_double((double)memory +
                    (double)t->memory_limit_bytes * job->user_job_memory_reserve_factor);
    job->memory_bytes = memory;

    int64_t user_reserve =
        ps_i64_of_double(job->user_job_memory_reserve_factor * (double)t->memory_limit_bytes);
    job->user_job_memory_reserve_bytes =
        user_reserve > t->tmpfs_size_bytes ? user_reserve : t->tmpfs_size_bytes;
    job->job_proxy_memory_reserve_bytes =
        ps_i64_of_double((double)t->job_proxy_memory_bytes * job->job_proxy_memory_reserve_factor);
}

void ps_memory_task_add_samples(struct ps_memory_task *t, const struct ps_memory_job *job,
                                const struct ps_memory_job_statistics *stats,
                                bool resource_overdraft, struct ps_memory_samples *out)
{
    struct ps_memory_samples s;
    memset(&s, 0, sizeof s);
    if (stats->has_user_job_max_memory) {
        double sample = (double)stats->user_job_max_memory_bytes / (double)job->memory_limit_bytes;
        /* Statistics arrive periodically, so an overdrafting job's last max_memory may be
         * below its real peak; the extra factor makes the digest converge high enough. */
        if (resource_overdraft && sample >= 1.0)
            sample = std_max(sample, job->user_job_memory_reserve_factor * t->overdraft_factor);
        s.user_job_added = true;
        s.user_job_sample = sample;
        s.user_job_counted = ps_log_digest_add_sample(&t->user_job_digest, sample);
    }
    if (stats->has_job_proxy_max_memory) {
        double sample = (double)stats->job_proxy_max_memory_bytes /
                        (double)(job->job_proxy_memory_bytes + job->footprint_memory_bytes);
        if (resource_overdraft && sample >= 1.0)
            sample = std_max(sample, job->job_proxy_memory_reserve_factor * t->overdraft_factor);
        s.job_proxy_added = true;
        s.job_proxy_sample = sample;
        s.job_proxy_counted = ps_log_digest_add_sample(&t->job_proxy_digest, sample);
    }
    if (out)
        *out = s;
}

void ps_memory_task_on_resource_overdraft(const struct ps_memory_task *t,
                                          const struct ps_memory_job *job,
                                          const struct ps_memory_job_statistics *stats,
                                          struct ps_memory_overdraft_state *st,
                                          struct ps_memory_overdraft_verdict *out)
{
    struct ps_memory_overdraft_verdict v;
    memset(&v, 0, sizeof v);

    int64_t proxy_max = stats->has_job_proxy_max_memory ? stats->job_proxy_max_memory_bytes : 0;
    double proxy_dedicated =
        (double)job->job_proxy_memory_bytes * job->job_proxy_memory_reserve_factor;
    v.job_proxy = (double)proxy_max > proxy_dedicated;
    int64_t user_max = stats->has_user_job_max_memory ? stats->user_job_max_memory_bytes : 0;
    v.user_job = user_max > job->user_job_memory_reserve_bytes;

    if (!v.job_proxy && !v.user_job) {
        /* Statistics may be stale: blame the process with the least room left. */
        double proxy_gap = proxy_dedicated - (double)proxy_max;
        int64_t user_gap = job->user_job_memory_reserve_bytes - user_max;
        if ((double)user_gap < proxy_gap)
            v.user_job = true;
        else
            v.job_proxy = true;
        v.by_gap = true;
    }

    if (v.job_proxy) {
        if (st->job_proxy_status == PS_OVERDRAFT_NONE && t->has_job_proxy_multiplier) {
            st->job_proxy_status = PS_OVERDRAFT_ONCE;
            st->dedicated_job_proxy_memory_reserve_factor =
                std_min(job->job_proxy_memory_reserve_factor * t->job_proxy_multiplier,
                        t->job_proxy_upper_bound);
        } else {
            st->job_proxy_status = PS_OVERDRAFT_MULTIPLE_TIMES;
            st->dedicated_job_proxy_memory_reserve_factor = t->job_proxy_upper_bound;
        }
    }
    if (v.user_job) {
        if (st->user_job_status == PS_OVERDRAFT_NONE && t->has_user_job_multiplier) {
            st->user_job_status = PS_OVERDRAFT_ONCE;
            st->dedicated_user_job_memory_reserve_factor =
                std_min(job->user_job_memory_reserve_factor * t->user_job_multiplier, 1.0);
        } else {
            st->user_job_status = PS_OVERDRAFT_MULTIPLE_TIMES;
            st->dedicated_user_job_memory_reserve_factor = 1.0;
        }
    }
    if (out)
        *out = v;
}

/* ---------------------------------------------------------------------------------------------
 * Statistics
 * ------------------------------------------------------------------------------------------- */

/* static_cast<int>(x), saturating. */
static int64_t to_int32(double x)
{
    if (isnan(x))
        return 0;
    if (x >= 2147483647.0)
        return INT32_MAX;
    if (x <= -2147483648.0)
        return INT32_MIN;
    return (int32_t)x;
}

size_t ps_memory_user_job_statistics(const struct ps_memory_job *job,
                                     struct ps_stat_sample out[PS_MEMORY_USER_JOB_STAT_COUNT])
{
    out[0] = (struct ps_stat_sample){PS_STAT_USER_JOB_MEMORY_LIMIT, job->memory_limit_bytes};
    out[1] = (struct ps_stat_sample){PS_STAT_USER_JOB_MEMORY_RESERVE,
                                     job->user_job_memory_reserve_bytes};
    out[2] = (struct ps_stat_sample){
        PS_STAT_USER_JOB_MEMORY_RESERVE_FACTOR_X10000,
        to_int32((1e4 * (double)job->user_job_memory_reserve_bytes) /
                 (double)job->memory_limit_bytes)};
    return 3;
}

int64_t ps_memory_cumulative_byte_seconds(int64_t bytes, int64_t duration_ms)
{
    if (duration_ms < 0)
        duration_ms = 0;
    double cumulative = (double)bytes * (double)duration_ms;
    /* Byte-seconds rather than byte-milliseconds keeps long jobs inside int64. */
    return ps_i64_of_double(cumulative / 1000.0);
}

size_t ps_memory_controller_statistics(const struct ps_memory_job *job,
                                       const struct ps_memory_job_statistics *stats,
                                       int64_t duration_ms,
                                       struct ps_stat_sample out[PS_MEMORY_CONTROLLER_STAT_MAX])
{
    if (duration_ms < 0)
        duration_ms = 0;
    size_t n = 0;
    int64_t proxy_reserve = job->job_proxy_memory_reserve_bytes;
    out[n++] = (struct ps_stat_sample){PS_STAT_TIME_TOTAL, duration_ms};
    out[n++] = (struct ps_stat_sample){PS_STAT_JOB_PROXY_ESTIMATED_MEMORY,
                                       job->job_proxy_memory_bytes};
    out[n++] = (struct ps_stat_sample){PS_STAT_JOB_PROXY_MEMORY_RESERVE, proxy_reserve};
    out[n++] = (struct ps_stat_sample){
        PS_STAT_JOB_PROXY_CUMULATIVE_ESTIMATED_MEMORY,
        ps_memory_cumulative_byte_seconds(job->job_proxy_memory_bytes, duration_ms)};
    out[n++] = (struct ps_stat_sample){
        PS_STAT_JOB_PROXY_CUMULATIVE_MEMORY_RESERVE,
        ps_memory_cumulative_byte_seconds(proxy_reserve, duration_ms)};
    out[n++] = (struct ps_stat_sample){PS_STAT_JOB_PROXY_MEMORY_RESERVE_FACTOR_X10000,
                                       to_int32(1e4 * job->job_proxy_memory_reserve_factor)};
    if (stats->has_user_job_max_memory)
        out[n++] = (struct ps_stat_sample){
            PS_STAT_USER_JOB_CUMULATIVE_MAX_MEMORY,
            ps_memory_cumulative_byte_seconds(stats->user_job_max_memory_bytes, duration_ms)};
    if (stats->has_user_job_memory_reserve)
        out[n++] = (struct ps_stat_sample){
            PS_STAT_USER_JOB_CUMULATIVE_MEMORY_RESERVE,
            ps_memory_cumulative_byte_seconds(stats->user_job_memory_reserve_bytes,
                                              duration_ms)};
    if (stats->has_job_proxy_max_memory)
        out[n++] = (struct ps_stat_sample){
            PS_STAT_JOB_PROXY_CUMULATIVE_MAX_MEMORY,
            ps_memory_cumulative_byte_seconds(stats->job_proxy_max_memory_bytes, duration_ms)};
    return n;
}
