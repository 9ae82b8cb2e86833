/* digest.c — the log digest and the histogram digest (semantics.md 5.1). */
#include "core/digest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
 * Log digest
 * ------------------------------------------------------------------------------------------- */

void ps_log_digest_config_init(struct ps_log_digest_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->relative_precision = 0.01;
}

int ps_log_digest_config_validate(const struct ps_log_digest_config *cfg, struct ps_error *err)
{
    /* Written as !(x > 0) so that NaN fails too. */
    if (!(cfg->relative_precision > 0) || !isfinite(cfg->relative_precision))
        return ps_error_set(err, PS_EINVAL,
                            "log digest: relative_precision is %.15g but must be a finite "
                            "number > 0", cfg->relative_precision);
    if (!(cfg->lower_bound > 0) || !isfinite(cfg->lower_bound))
        return ps_error_set(err, PS_EINVAL,
                            "log digest: lower_bound is %.15g but must be a finite number > 0",
                            cfg->lower_bound);
    if (!(cfg->upper_bound > 0) || !isfinite(cfg->upper_bound))
        return ps_error_set(err, PS_EINVAL,
                            "log digest: upper_bound is %.15g but must be a finite number > 0",
                            cfg->upper_bound);
    if (cfg->upper_bound < cfg->lower_bound)
        return ps_error_set(err, PS_EINVAL,
                            "log digest: upper_bound %.15g is below lower_bound %.15g",
                            cfg->upper_bound, cfg->lower_bound);
    double buckets = log(cfg->upper_bound / cfg->lower_bound) / log(1 + cfg->relative_precision);
    if (!(buckets <= PS_LOG_DIGEST_MAX_BUCKETS))
        return ps_error_set(err, PS_EINVAL,
                            "log digest: bucket count %.15g (from lower_bound %.15g, "
                            "upper_bound %.15g, relative_precision %.15g) is more than %d; "
                            "raise relative_precision or narrow the bounds",
                            buckets, cfg->lower_bound, cfg->upper_bound, cfg->relative_precision,
                            PS_LOG_DIGEST_MAX_BUCKETS);
    if (cfg->has_default_value &&
        !(cfg->default_value >= cfg->lower_bound && cfg->default_value <= cfg->upper_bound))
        return ps_error_set(err, PS_EINVAL,
                            "log digest: default_value %.15g must be between lower_bound %.15g "
                            "and upper_bound %.15g",
                            cfg->default_value, cfg->lower_bound, cfg->upper_bound);
    return 0;
}

int ps_log_digest_init(struct ps_log_digest *d, const struct ps_log_digest_config *cfg,
                       struct ps_error *err)
{
    memset(d, 0, sizeof *d);
    int rc = ps_log_digest_config_validate(cfg, err);
    if (rc < 0)
        return rc;
    d->step = 1 + cfg->relative_precision;
    d->log_step = log(d->step);
    d->lower_bound = cfg->lower_bound;
    d->upper_bound = cfg->upper_bound;
    d->default_value = cfg->has_default_value ? cfg->default_value : cfg->lower_bound;
    /* Validation bounds this by 1000 (and it is >= 0 as U >= L), so the cast is safe. */
    int count = (int)ceil(log(d->upper_bound / d->lower_bound) / d->log_step);
    d->bucket_count = count > 1 ? count : 1;
    d->buckets = calloc((size_t)d->bucket_count, sizeof *d->buckets);
    if (!d->buckets)
        return ps_error_set(err, PS_ENOMEM, "log digest: out of memory for %d buckets",
                            d->bucket_count);
    return 0;
}

void ps_log_digest_release(struct ps_log_digest *d)
{
    if (!d)
        return;
    free(d->buckets);
    d->buckets = NULL;
    d->sample_count = 0;
}

bool ps_log_digest_add_sample(struct ps_log_digest *d, double value)
{
    double id = log(value / d->lower_bound) / d->log_step;
    if (isnan(id) || id < (double)INT32_MIN || id > (double)INT32_MAX)
        return false;
    int bucket = (int)id;   /* truncation toward zero: (-1, 0) lands in bucket 0 too */
    if (bucket < 0)
        bucket = 0;
    if (bucket > d->bucket_count - 1)
        bucket = d->bucket_count - 1;
    d->buckets[bucket]++;
    d->sample_count++;
    return true;
}

double ps_log_digest_quantile(const struct ps_log_digest *d, double alpha)
{
    if (d->sample_count == 0)
        return d->default_value;
    double value = d->lower_bound;
    int64_t sum = 0;
    double threshold = alpha * (double)d->sample_count;
    for (int i = 0; i < d->bucket_count; i++) {
        if ((double)sum >= threshold)
            return value;
        sum += d->buckets[i];
        value *= d->step;
    }
    return d->upper_bound;
}

void ps_log_digest_reset(struct ps_log_digest *d)
{
    d->sample_count = 0;
    memset(d->buckets, 0, (size_t)d->bucket_count * sizeof *d->buckets);
}

/* ---------------------------------------------------------------------------------------------
 * Histogram digest
 * ------------------------------------------------------------------------------------------- */

void ps_histogram_digest_config_init(struct ps_histogram_digest_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->absolute_precision = 0.01;
    cfg->lower_bound = 0.0;
    cfg->upper_bound = 1.0;
}

int ps_histogram_digest_config_validate(const struct ps_histogram_digest_config *cfg,
                                        struct ps_error *err)
{
    if (!(cfg->absolute_precision > 0) || !isfinite(cfg->absolute_precision))
        return ps_error_set(err, PS_EINVAL,
                            "histogram digest: absolute_precision is %.15g but must be a finite "
                            "number > 0", cfg->absolute_precision);
    if (!isfinite(cfg->lower_bound))
        return ps_error_set(err, PS_EINVAL,
                            "histogram digest: lower_bound is %.15g but must be finite",
                            cfg->lower_bound);
    if (!isfinite(cfg->upper_bound))
        return ps_error_set(err, PS_EINVAL,
                            "histogram digest: upper_bound is %.15g but must be finite",
                            cfg->upper_bound);
    if (cfg->upper_bound < cfg->lower_bound)
        return ps_error_set(err, PS_EINVAL,
                            "histogram digest: upper_bound %.15g must be greater than or equal "
                            "to lower_bound %.15g", cfg->upper_bound, cfg->lower_bound);
    double buckets = (cfg->upper_bound - cfg->lower_bound) / cfg->absolute_precision;
    if (!(buckets <= PS_HISTOGRAM_DIGEST_MAX_BUCKETS))
        return ps_error_set(err, PS_EINVAL,
                            "histogram digest: bucket count %.15g (from lower_bound %.15g, "
                            "upper_bound %.15g, absolute_precision %.15g) is more than %d; "
                            "raise absolute_precision or narrow the bounds",
                            buckets, cfg->lower_bound, cfg->upper_bound,
                            cfg->absolute_precision, PS_HISTOGRAM_DIGEST_MAX_BUCKETS);
    if (cfg->has_default_value &&
        !(cfg->default_value >= cfg->lower_bound && cfg->default_value <= cfg->upper_bound))
        return ps_error_set(err, PS_EINVAL,
                            "histogram digest: default_value %.15g must be between lower_bound "
                            "%.15g and upper_bound %.15g",
                            cfg->default_value, cfg->lower_bound, cfg->upper_bound);
    return 0;
}

int ps_histogram_digest_init(struct ps_histogram_digest *d,
                             const struct ps_histogram_digest_config *cfg, struct ps_error *err)
{
    memset(d, 0, sizeof *d);
    int rc = ps_histogram_digest_config_validate(cfg, err);
    if (rc < 0)
        return rc;
    d->config = *cfg;
    d->step = cfg->absolute_precision;
    d->bucket_count = (int)round((cfg->upper_bound - cfg->lower_bound) / d->step) + 1;
    d->buckets = calloc((size_t)d->bucket_count, sizeof *d->buckets);
    if (!d->buckets)
        return ps_error_set(err, PS_ENOMEM, "histogram digest: out of memory for %d buckets",
                            d->bucket_count);
    return 0;
}

void ps_histogram_digest_release(struct ps_histogram_digest *d)
{
    if (!d)
        return;
    free(d->buckets);
    d->buckets = NULL;
    d->sample_count = 0;
}

bool ps_histogram_digest_add_sample(struct ps_histogram_digest *d, double value)
{
    if (!isfinite(value))
        return false;
    double lo = d->config.lower_bound, hi = d->config.upper_bound;
    /* std::clamp(value, lo, hi) */
    if (value < lo)
        value = lo;
    else if (hi < value)
        value = hi;
    int bucket = (int)round((value - lo) / d->step);
    /* Cannot trigger: the clamp keeps the index within the count computed at init the same
     * way. Kept as a guard against writing outside the allocation. */
    if (bucket > d->bucket_count - 1)
        bucket = d->bucket_count - 1;
    d->buckets[bucket]++;
    d->sample_count++;
    return true;
}

double ps_histogram_digest_quantile(const struct ps_histogram_digest *d, double alpha)
{
    if (d->sample_count == 0)
        return d->config.has_default_value ? d->config.default_value : d->config.lower_bound;
    double value = d->config.lower_bound;
    int64_t sum = 0;
    double threshold = alpha * (double)d->sample_count;
    for (int i = 0; i < d->bucket_count; i++) {
        sum += d->buckets[i];
        if ((double)sum >= threshold)
            return value;
        value += d->step;
    }
    return d->config.upper_bound;
}

void ps_histogram_digest_reset(struct ps_histogram_digest *d)
{
    d->sample_count = 0;
    memset(d->buckets, 0, (size_t)d->bucket_count * sizeof *d->buckets);
}
