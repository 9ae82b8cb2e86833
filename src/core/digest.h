/* digest.h — approximate quantiles of a stream of samples in fixed memory.
 *
 * Two digests from YTsaurus yt/yt/core/misc/digest.cpp (semantics.md 5.1):
 *
 * - The log digest (TLogDigest) keeps counts in buckets whose bounds grow geometrically by
 *   (1 + relative_precision) from lower_bound to upper_bound, so its quantiles are accurate to
 *   that relative precision. The controller uses it to learn job memory reserves.
 * - The histogram digest (THistogramDigest) keeps counts in buckets of constant width
 *   absolute_precision from lower_bound to upper_bound.
 *
 * Both allocate their buckets once, in _init, and never again; _release frees them.
 *
 * Validation is that of upstream's TLogDigestConfig / THistogramDigestConfig (bucket count
 * limits 1000 / 10000, default value within the bounds), plus two checks upstream leaves out
 * because they only admit nonsense: the log digest's upper bound must not be below its lower
 * bound, and the histogram digest's bounds must be finite.
 */
#ifndef PS_CORE_DIGEST_H
#define PS_CORE_DIGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

#define PS_LOG_DIGEST_MAX_BUCKETS 1000
#define PS_HISTOGRAM_DIGEST_MAX_BUCKETS 10000

/* ---------------------------------------------------------------------------------------------
 * Log digest
 * ------------------------------------------------------------------------------------------- */

struct ps_log_digest_config {
    double relative_precision;  /* 0.01; > 0 */
    double lower_bound;         /* required (init leaves 0, which is invalid); > 0 */
    double upper_bound;         /* required; >= lower_bound */
    bool has_default_value;     /* without one, the empty digest answers lower_bound */
    double default_value;       /* in [lower_bound, upper_bound] */
};

/* relative_precision 0.01, bounds 0 (to be set), no default value. */
void ps_log_digest_config_init(struct ps_log_digest_config *cfg);

/* PS_EINVAL with a message naming the key, e.g. "log digest: bucket count 1389.3 (from
 * lower_bound 0.001, upper_bound 1, relative_precision 0.005) is more than 1000". The bucket
 * count checked is the unrounded ln(U/L) / ln(1 + precision), as upstream. */
int ps_log_digest_config_validate(const struct ps_log_digest_config *cfg, struct ps_error *err);

struct ps_log_digest {
    double step;            /* 1 + relative_precision */
    double log_step;        /* ln(step) */
    double lower_bound;
    double upper_bound;
    double default_value;   /* the config's, or lower_bound */
    int bucket_count;       /* max(1, ceil(ln(U / L) / ln(step))) */
    int64_t sample_count;
    int64_t *buckets;       /* bucket_count counters, owned */
};

/* Validates cfg and allocates the buckets. Errors: PS_EINVAL (see validate), PS_ENOMEM. On
 * error nothing needs releasing (but _release is harmless). */
int ps_log_digest_init(struct ps_log_digest *d, const struct ps_log_digest_config *cfg,
                       struct ps_error *err);
void ps_log_digest_release(struct ps_log_digest *d);

/* Adds one sample. The bucket is (int)(ln(v / L) / ln(step)), truncated toward zero and clamped
 * to [0, bucket_count - 1]: values below L count in the first bucket, values above U in the
 * last. A sample whose bucket index is NaN or outside the int32 range is discarded: v <= 0,
 * NaN, infinities and absurdly small or large values. Returns whether the sample counted. */
bool ps_log_digest_add_sample(struct ps_log_digest *d, double value);

/* The alpha-quantile. Empty digest: the default value. Otherwise walk the buckets from
 * value = L, checking `sum >= alpha * count` *before* adding each bucket and multiplying value
 * by step after it (repeated multiplication, not pow); U if the walk ends. So q(0) = L, and a
 * threshold first reached by the last bucket yields U. */
double ps_log_digest_quantile(const struct ps_log_digest *d, double alpha);

/* Forgets all samples; the configuration and the allocation stay. */
void ps_log_digest_reset(struct ps_log_digest *d);

/* ---------------------------------------------------------------------------------------------
 * Histogram digest
 * ------------------------------------------------------------------------------------------- */

struct ps_histogram_digest_config {
    double absolute_precision;  /* 0.01; > 0 */
    double lower_bound;         /* 0; finite */
    double upper_bound;         /* 1; finite, >= lower_bound */
    bool has_default_value;     /* without one, the empty digest answers lower_bound */
    double default_value;       /* in [lower_bound, upper_bound] */
};

/* absolute_precision 0.01, bounds [0, 1], no default value (upstream's defaults). */
void ps_histogram_digest_config_init(struct ps_histogram_digest_config *cfg);

/* PS_EINVAL naming the key. The bucket count checked is the unrounded (U - L) / precision,
 * which must be at most 10000, as upstream. */
int ps_histogram_digest_config_validate(const struct ps_histogram_digest_config *cfg,
                                        struct ps_error *err);

struct ps_histogram_digest {
    struct ps_histogram_digest_config config;
    double step;            /* absolute_precision */
    int bucket_count;       /* round((U - L) / step) + 1 */
    int64_t sample_count;
    int64_t *buckets;       /* bucket_count counters, owned */
};

int ps_histogram_digest_init(struct ps_histogram_digest *d,
                             const struct ps_histogram_digest_config *cfg, struct ps_error *err);
void ps_histogram_digest_release(struct ps_histogram_digest *d);

/* Adds one sample: non-finite values are ignored; others are clamped to [L, U] and counted in
 * bucket round((v - L) / step), so bucket i covers [L + (i - 1/2) step, L + (i + 1/2) step).
 * Returns whether the sample counted. */
bool ps_histogram_digest_add_sample(struct ps_histogram_digest *d, double value);

/* The alpha-quantile. Empty digest: the default value, else L. Otherwise walk from value = L,
 * adding each bucket and *then* checking `sum >= alpha * count`, adding step to value after a
 * failed check; U if the walk ends. */
double ps_histogram_digest_quantile(const struct ps_histogram_digest *d, double alpha);

void ps_histogram_digest_reset(struct ps_histogram_digest *d);

#endif
