/* historic_usage.h — the aggregated usage behind infer_children_weights_from_historic_usage
 * (pool_config.h), as upstream's THistoricUsageAggregator: an exponential moving average of an
 * element's dominant usage share, one value per fair share update. After dt seconds the old
 * average keeps the weight w = 2^(-ema_alpha * dt): avg = w * avg + (1 - w) * value; the first
 * update after a reset (or a change of the parameters) only records the time. The element's
 * weight is then multiplied by 2^(-avg) (upstream's GetWeight).
 */
#ifndef PS_CORE_HISTORIC_USAGE_H
#define PS_CORE_HISTORIC_USAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/pool_config.h"

struct ps_historic_usage {
    double average;
    int64_t last_update_ms;
    bool started;                 /* false: no update since the last reset */
    int mode;                     /* the parameters of the last update */
    double ema_alpha;
};

/* Aggregates value at now_ms with the parameters of cfg (a change of them resets first). */
void ps_historic_usage_update(struct ps_historic_usage *h, const struct ps_historic_usage_config *cfg,
                              int64_t now_ms, double value);
/* Forgets everything (the parent no longer infers weights). */
void ps_historic_usage_reset(struct ps_historic_usage *h);
/* 2^(-average). */
double ps_historic_usage_weight_multiplier(const struct ps_historic_usage *h);

#endif
