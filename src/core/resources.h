/* resources.h — resource vectors, share vectors and volumes.
 *
 * Absolute resources (struct ps_resources) are integers: user_slots, gpu, network and memory
 * (bytes) as themselves, cpu as a fixed-point number with 2 decimals stored in hundredths of a
 * core (11.17 cores is 1117), as YTsaurus's TCpuResource. PS_RES_INFINITE in a limits vector
 * means "no limit".
 *
 * Shares (struct ps_share) are doubles, a resource divided by the cluster total, in the order
 * of YTsaurus's EJobResourceType: user_slots, cpu, gpu, memory, network.
 *
 * Volumes (struct ps_volume) are resource x seconds as doubles (cpu in core-seconds).
 */
#ifndef PS_CORE_RESOURCES_H
#define PS_CORE_RESOURCES_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ps_resource {
    PS_RES_USER_SLOTS = 0,
    PS_RES_CPU = 1,
    PS_RES_GPU = 2,
    PS_RES_MEMORY = 3,
    PS_RES_NETWORK = 4,
    PS_RES_COUNT = 5
};

#define PS_CPU_SCALE 100                 /* cpu is stored in hundredths of a core */
#define PS_RES_INFINITE (INT64_MAX / 4)  /* "unlimited", as TJobResources::Infinite() */

struct ps_resources {
    int64_t v[PS_RES_COUNT];   /* v[PS_RES_CPU] in hundredths of a core */
};

/* A resource map in which each key may be left unspecified (configs such as
 * strong_guarantee_resources or resource_flow). Bit i of `set` says v[i] was given. */
struct ps_resources_opt {
    struct ps_resources r;
    unsigned set;
};

struct ps_share {
    double v[PS_RES_COUNT];
};

struct ps_volume {
    double v[PS_RES_COUNT];    /* resource x seconds; cpu in core-seconds */
};

/* "user_slots", "cpu", ...; NULL outside the range. */
const char *ps_resource_name(int resource);

/* The resources of mask (bit k: resource k) as upstream prints them in errors into buf (size
 * bytes): "cpu=1.00; memory=134217728; ...", cpu in cores with two decimals. */
void ps_resources_text(char *buf, size_t size, const struct ps_resources *r, unsigned mask);
/* The index of a resource name, or -1. */
int ps_resource_from_name(const char *name);

/* static_cast<i64>(x) without the undefined behaviour outside the int64 range: saturates, and
 * a NaN is 0. */
static inline int64_t ps_i64_of_double(double x)
{
    if (isnan(x))
        return 0;
    if (x >= 9223372036854775807.0)
        return INT64_MAX;
    if (x <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)x;
}

/* a + b and a - b, saturating at the int64 range instead of overflowing (the integral
 * volumes' cpu, which a snapshot, a config or a long accumulation may take near its ends). */
static inline int64_t ps_i64_add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

static inline int64_t ps_i64_sub_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r))
        return r;
    return b < 0 ? INT64_MAX : INT64_MIN;
}

/* The value of resource i as a double in natural units (cpu in cores). */
static inline double ps_res_get(const struct ps_resources *r, int i)
{
    return i == PS_RES_CPU ? (double)r->v[i] / PS_CPU_SCALE : (double)r->v[i];
}

/* Converts a natural-unit value (cores for cpu) to the stored integer, rounding to the nearest
 * representable value (cpu to 2 decimals). Saturates at PS_RES_INFINITE. */
int64_t ps_res_from_double(int resource, double value);

/* Cores rounded to hundredths, as stored (YTsaurus's TCpuResource). */
static inline double ps_cpu_round(double cores)
{
    return (double)ps_res_from_double(PS_RES_CPU, cores) / PS_CPU_SCALE;
}

struct ps_resources ps_resources_zero(void);
struct ps_resources ps_resources_infinite(void);
struct ps_resources ps_resources_add(struct ps_resources a, struct ps_resources b);
/* a + b per resource, saturating at PS_RES_INFINITE; a, b >= 0. */
struct ps_resources ps_resources_add_sat(struct ps_resources a, struct ps_resources b);
struct ps_resources ps_resources_sub(struct ps_resources a, struct ps_resources b);
struct ps_resources ps_resources_min(struct ps_resources a, struct ps_resources b);
struct ps_resources ps_resources_max(struct ps_resources a, struct ps_resources b);
/* a_i <= b_i for every i (a fits into b). */
bool ps_resources_fit(struct ps_resources a, struct ps_resources b);
bool ps_resources_equal(struct ps_resources a, struct ps_resources b);
bool ps_resources_is_zero(struct ps_resources a);

/* r / total per component, as YTsaurus's TResourceVector::FromJobResources: a component whose
 * total is 0 becomes zero_div_zero when the value is 0 and one_div_zero otherwise. The fair
 * share update uses (0, 0), upstream's defaults in vector_hdrf/resource_vector.h (older
 * scheduler code passed 1 for limits); outputs for users use (0, 0). */
struct ps_share ps_resources_to_share(const struct ps_resources *r, const struct ps_resources *total,
                                      double zero_div_zero, double one_div_zero);

/* share x total, rounded to stored integers (cpu to hundredths). */
struct ps_resources ps_share_to_resources(const struct ps_share *s, const struct ps_resources *total);

/* The resource with the largest share r/total among resources with a non-zero total; cpu when
 * every share is 0 (YTsaurus's default dominant resource). */
int ps_dominant_resource(const struct ps_resources *r, const struct ps_resources *total);

/* ---- share vectors ---------------------------------------------------------------------- */

static inline struct ps_share ps_share_fill(double x)
{
    struct ps_share s;
    for (int i = 0; i < PS_RES_COUNT; i++)
        s.v[i] = x;
    return s;
}

static inline struct ps_share ps_share_add(struct ps_share a, struct ps_share b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        a.v[i] += b.v[i];
    return a;
}

static inline struct ps_share ps_share_sub(struct ps_share a, struct ps_share b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        a.v[i] -= b.v[i];
    return a;
}

static inline struct ps_share ps_share_scale(struct ps_share a, double k)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        a.v[i] *= k;
    return a;
}

static inline struct ps_share ps_share_min(struct ps_share a, struct ps_share b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        a.v[i] = b.v[i] < a.v[i] ? b.v[i] : a.v[i];
    return a;
}

static inline struct ps_share ps_share_max(struct ps_share a, struct ps_share b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        a.v[i] = b.v[i] > a.v[i] ? b.v[i] : a.v[i];
    return a;
}

static inline double ps_share_max_component(struct ps_share a)
{
    double m = a.v[0];
    for (int i = 1; i < PS_RES_COUNT; i++)
        m = a.v[i] > m ? a.v[i] : m;
    return m;
}

static inline double ps_share_min_component(struct ps_share a)
{
    double m = a.v[0];
    for (int i = 1; i < PS_RES_COUNT; i++)
        m = a.v[i] < m ? a.v[i] : m;
    return m;
}

/* a_i >= b_i for every i. */
static inline bool ps_share_dominates(struct ps_share a, struct ps_share b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        if (a.v[i] < b.v[i])
            return false;
    return true;
}

/* a_i > b_i for every i. */
static inline bool ps_share_strictly_dominates(struct ps_share a, struct ps_share b)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        if (!(a.v[i] > b.v[i]))
            return false;
    return true;
}

/* |a_i - b_i| <= eps for every i. */
static inline bool ps_share_near(struct ps_share a, struct ps_share b, double eps)
{
    for (int i = 0; i < PS_RES_COUNT; i++) {
        double d = a.v[i] - b.v[i];
        if (d > eps || d < -eps)
            return false;
    }
    return true;
}

/* ---- volumes ---------------------------------------------------------------------------- */

/* resources x seconds. */
struct ps_volume ps_volume_from_resources(const struct ps_resources *r, double seconds);
/* min over resources with a non-zero total of volume_i / total_i (seconds); 0 when no total. */
double ps_volume_min_ratio(const struct ps_volume *v, const struct ps_resources *total);

#endif
