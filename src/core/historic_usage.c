/* historic_usage.c — see historic_usage.h. */
#include "core/historic_usage.h"

#include <math.h>
#include <string.h>

void ps_historic_usage_reset(struct ps_historic_usage *h)
{
    memset(h, 0, sizeof *h);
}

void ps_historic_usage_update(struct ps_historic_usage *h, const struct ps_historic_usage_config *cfg,
                              int64_t now_ms, double value)
{
    if (h->started && (h->mode != cfg->aggregation_mode || h->ema_alpha != cfg->ema_alpha))
        ps_historic_usage_reset(h);
    if (h->started && now_ms < h->last_update_ms)
        return;
    if (h->started && cfg->aggregation_mode == PS_HISTORIC_USAGE_EMA) {
        double w = exp2(-cfg->ema_alpha * (double)(now_ms - h->last_update_ms) / 1000.0);
        h->average = w * h->average + (1 - w) * value;
    }
    h->started = true;
    h->last_update_ms = now_ms;
    h->mode = cfg->aggregation_mode;
    h->ema_alpha = cfg->ema_alpha;
}

double ps_historic_usage_weight_multiplier(const struct ps_historic_usage *h)
{
    return exp2(-h->average);
}
