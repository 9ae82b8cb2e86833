#include "core/resources.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const resource_names[PS_RES_COUNT] = {
    "user_slots", "cpu", "gpu", "memory", "network",
};

const char *ps_resource_name(int resource)
{
    if (resource < 0 || resource >= PS_RES_COUNT)
        return NULL;
    return resource_names[resource];
}

int ps_resource_from_name(const char *name)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        if (strcmp(name, resource_names[i]) == 0)
            return i;
    return -1;
}

int64_t ps_res_from_double(int resource, double value)
{
    double scaled = resource == PS_RES_CPU ? value * PS_CPU_SCALE : value;
    if (!(scaled < (double)PS_RES_INFINITE))
        return PS_RES_INFINITE;
    if (scaled <= -(double)PS_RES_INFINITE)
        return -PS_RES_INFINITE;
    return (int64_t)llround(scaled);
}

struct ps_resources ps_resources_zero(void)
{
    struct ps_resources r;
    memset(&r, 0, sizeof r);
    return r;
}

struct ps_resources ps_resources_infinite(void)
{
    struct ps_resources r;
    for (int i = 0; i < PS_RES_COUNT; i++)
        r.v[i] = PS_RES_INFINITE;
    return r;
}

struct ps_resources ps_resources_add(struct ps_resources a, struct ps_resources b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        a.v[i] += b.v[i];
    return a;
}

struct ps_resources ps_resources_add_sat(struct ps_resources a, struct ps_resources b)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        a.v[r] = (a.v[r] >= PS_RES_INFINITE || b.v[r] >= PS_RES_INFINITE ||
                  a.v[r] > PS_RES_INFINITE - b.v[r])
                     ? PS_RES_INFINITE
                     : a.v[r] + b.v[r];
    return a;
}

struct ps_resources ps_resources_sub(struct ps_resources a, struct ps_resources b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        a.v[i] -= b.v[i];
    return a;
}

struct ps_resources ps_resources_min(struct ps_resources a, struct ps_resources b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        a.v[i] = b.v[i] < a.v[i] ? b.v[i] : a.v[i];
    return a;
}

struct ps_resources ps_resources_max(struct ps_resources a, struct ps_resources b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        a.v[i] = b.v[i] > a.v[i] ? b.v[i] : a.v[i];
    return a;
}

bool ps_resources_fit(struct ps_resources a, struct ps_resources b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        if (a.v[i] > b.v[i])
            return false;
    return true;
}

bool ps_resources_equal(struct ps_resources a, struct ps_resources b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        if (a.v[i] != b.v[i])
            return false;
    return true;
}

bool ps_resources_is_zero(struct ps_resources a)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        if (a.v[i] != 0)
            return false;
    return true;
}

struct ps_share ps_resources_to_share(const struct ps_resources *r, const struct ps_resources *total,
                                      double zero_div_zero, double one_div_zero)
{
    struct ps_share s;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        double value = ps_res_get(r, i);
        double limit = ps_res_get(total, i);
        if (limit == 0.0)
            s.v[i] = value == 0.0 ? zero_div_zero : one_div_zero;
        else
            s.v[i] = value / limit;
    }
    return s;
}

struct ps_resources ps_share_to_resources(const struct ps_share *s, const struct ps_resources *total)
{
    struct ps_resources r;
    for (int i = 0; i < PS_RES_COUNT; i++)
        r.v[i] = ps_res_from_double(i, s->v[i] * ps_res_get(total, i));
    return r;
}

int ps_dominant_resource(const struct ps_resources *r, const struct ps_resources *total)
{
    int best = PS_RES_CPU;
    double best_share = 0.0;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (total->v[i] == 0)
            continue;
        double share = ps_res_get(r, i) / ps_res_get(total, i);
        if (share > best_share) {
            best_share = share;
            best = i;
        }
    }
    return best;
}

struct ps_volume ps_volume_from_resources(const struct ps_resources *r, double seconds)
{
    struct ps_volume v;
    for (int i = 0; i < PS_RES_COUNT; i++)
        v.v[i] = ps_res_get(r, i) * seconds;
    return v;
}

double ps_volume_min_ratio(const struct ps_volume *v, const struct ps_resources *total)
{
    bool any = false;
    double best = 0.0;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (total->v[i] == 0)
            continue;
        double ratio = v->v[i] / ps_res_get(total, i);
        if (!any || ratio < best)
            best = ratio;
        any = true;
    }
    return best;
}

void ps_resources_text(char *buf, size_t size, const struct ps_resources *r, unsigned mask)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < PS_RES_COUNT; k++) {
        if (!(mask & (1u << k)))
            continue;
        int n = k == PS_RES_CPU
                    ? snprintf(buf + used, size - used, "%s%s=%.2f", used ? "; " : "",
                               ps_resource_name(k), ps_res_get(r, k))
                    : snprintf(buf + used, size - used, "%s%s=%" PRId64, used ? "; " : "",
                               ps_resource_name(k), r->v[k]);
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
}
