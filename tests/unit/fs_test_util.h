/* fs_test_util.h — building element arrays for the fair share tests (included by the
 * test_fair_share*.c files only). Mirrors upstream's test mock: CreateSimplePool,
 * CreateIntegralPool, CreateOperation, a 100-cpu cluster. */
#ifndef PS_TEST_FS_TEST_UTIL_H
#define PS_TEST_FS_TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/fair_share.h"

#define MB ((int64_t)1024 * 1024)
#define GB ((int64_t)1024 * 1024 * 1024)
#define T_MAX_ELEMS 4096

struct t_tree {
    struct ps_fs_element e[T_MAX_ELEMS];
    struct ps_fs_pool p[T_MAX_ELEMS];   /* the root and pool i name p[i]; operations' are unused */
    int n;
    struct ps_fs_options opt;
    struct ps_fs_input input;
    struct ps_fs_update *u;
    struct ps_error err;
};

/* cmocka prestates for the runs with the improved fit factor option off and on. */
static bool t_improved_off __attribute__((unused)) = false;
static bool t_improved_on __attribute__((unused)) = true;

static inline struct ps_resources t_res(int64_t user_slots, double cpu, int64_t memory)
{
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_USER_SLOTS] = user_slots;
    r.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, cpu);
    r.v[PS_RES_MEMORY] = memory;
    return r;
}

/* upstream CreateTotalResourceLimitsWith100CPU. */
static inline struct ps_resources t_total100(void)
{
    return t_res(100, 100, 1000 * MB);
}

/* TJobResources * double: every resource rounded. */
static inline struct ps_resources t_times(struct ps_resources r, double k)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        r.v[i] = (int64_t)round((double)r.v[i] * k);
    return r;
}

static inline struct ps_share t_unit(double x)
{
    struct ps_share s = {{x, x, 0.0, x, 0.0}};
    return s;
}

static inline struct ps_share t_vec(double a, double b, double c, double d, double e)
{
    struct ps_share s = {{a, b, c, d, e}};
    return s;
}

static inline struct t_tree *t_new(struct ps_resources total, bool improved)
{
    struct t_tree *t = test_calloc(1, sizeof *t);
    assert_non_null(t);
    ps_fs_options_init(&t->opt);
    t->opt.enable_improved_fair_share_by_fit_factor_computation = improved;
    t->input.total = total;
    t->input.now_ms = 3600000;
    ps_fs_element_input_init(&t->e[0].in, PS_ELEM_ROOT, -1, "<Root>");
    t->e[0].in.pool = 0;
    ps_fs_pool_input_init(&t->p[0].in);
    t->n = 1;
    t->u = ps_fs_update_new();
    assert_non_null(t->u);
    return t;
}

static inline void t_free(struct t_tree *t)
{
    ps_fs_update_free(t->u);
    test_free(t);
}

/* One update 60 s after the previous one (upstream "now, now - 1 minute"). */
static inline void t_with_previous_minute(struct t_tree *t)
{
    t->input.has_previous_update = true;
    t->input.previous_update_time_ms = t->input.now_ms - 60000;
}

static inline int t_pool(struct t_tree *t, int parent, const char *name)
{
    int i = t->n++;
    ps_fs_element_input_init(&t->e[i].in, PS_ELEM_POOL, parent, name);
    t->e[i].in.pool = i;
    ps_fs_pool_input_init(&t->p[i].in);
    return i;
}

static inline int t_pool_sg(struct t_tree *t, int parent, const char *name, double sg_cpu)
{
    int i = t_pool(t, parent, name);
    t->p[i].in.strong_guarantee.r.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, sg_cpu);
    t->p[i].in.strong_guarantee.set |= 1u << PS_RES_CPU;
    return i;
}

static inline void t_weight(struct t_tree *t, int i, double w)
{
    t->e[i].in.weight = w;
    t->e[i].in.weight_specified = true;
}

/* upstream CreateIntegralPool: cpu flow, optional cpu burst (< 0: none), optional strong (< 0). */
static inline int t_integral(struct t_tree *t, int parent, const char *name, enum ps_guarantee_type type,
                             double flow_cpu, double burst_cpu, double sg_cpu)
{
    int i = sg_cpu >= 0 ? t_pool_sg(t, parent, name, sg_cpu) : t_pool(t, parent, name);
    struct ps_fs_pool_input *in = &t->p[i].in;
    in->guarantee_type = type;
    in->resource_flow.r.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, flow_cpu);
    in->resource_flow.set |= 1u << PS_RES_CPU;
    if (burst_cpu >= 0) {
        in->burst_guarantee.r.v[PS_RES_CPU] = ps_res_from_double(PS_RES_CPU, burst_cpu);
        in->burst_guarantee.set |= 1u << PS_RES_CPU;
    }
    return i;
}

static inline int t_op(struct t_tree *t, int parent, const char *name, struct ps_resources demand)
{
    int i = t->n++;
    ps_fs_element_input_init(&t->e[i].in, PS_ELEM_OPERATION, parent, name);
    t->e[i].in.demand = demand;
    return i;
}

static inline int t_gang(struct t_tree *t, int parent, const char *name, struct ps_resources demand)
{
    int i = t_op(t, parent, name, demand);
    t->e[i].in.is_gang = true;
    return i;
}

/* Volume of resources held for seconds, as TResourceVolume(resources, duration). */
static inline struct ps_volume t_volume(struct ps_resources r, double seconds)
{
    struct ps_volume v;
    for (int i = 0; i < PS_RES_COUNT; i++)
        v.v[i] = i == PS_RES_CPU ? round((double)r.v[i] * seconds) / PS_CPU_SCALE : (double)r.v[i] * seconds;
    return v;
}

/* upstream GetHugeVolume. */
static inline struct ps_volume t_huge_volume(void)
{
    struct ps_volume v = {{0}};
    v.v[PS_RES_CPU] = 1e10;
    v.v[PS_RES_USER_SLOTS] = 1e10;
    v.v[PS_RES_MEMORY] = 1e10 * (double)MB;
    return v;
}

/* upstream GetOnePercentOfCluster. */
static inline struct ps_resources t_one_percent(void)
{
    return t_res(1, 1, 10 * MB);
}

static inline void t_run(struct t_tree *t)
{
    ps_error_init(&t->err);
    int rc = ps_fs_update_run(t->u, t->e, t->n, t->p, t->n, &t->opt, &t->input, &t->err);
    if (rc)
        fail_msg("update failed: %s", t->err.msg);
}

static inline const struct ps_detailed_fair_share *t_fs(const struct t_tree *t, int i)
{
    return &t->e[i].out.fair_share;
}

static inline void t_print(const char *what, struct ps_share s)
{
    print_message("%s = {%.17g, %.17g, %.17g, %.17g, %.17g}\n", what, s.v[0], s.v[1], s.v[2], s.v[3], s.v[4]);
}

/* Exact equality (upstream EXPECT_EQ). */
#define T_EQ(expected, actual)                                                                     \
    do {                                                                                           \
        struct ps_share t_e_ = (expected), t_a_ = (actual);                                        \
        for (int t_k_ = 0; t_k_ < PS_RES_COUNT; t_k_++) {                                          \
            if (!(t_e_.v[t_k_] == t_a_.v[t_k_])) {                                                 \
                t_print("expected", t_e_);                                                         \
                t_print("actual  ", t_a_);                                                         \
                fail_msg("%s:%d: %s differs in component %d", __FILE__, __LINE__, #actual, t_k_); \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Within an absolute tolerance per component (upstream EXPECT_RV_NEAR uses 1e-7). */
#define T_NEAR_TOL(expected, actual, tol)                                                          \
    do {                                                                                           \
        struct ps_share t_e_ = (expected), t_a_ = (actual);                                        \
        if (!ps_share_near(t_e_, t_a_, (tol))) {                                                   \
            t_print("expected", t_e_);                                                             \
            t_print("actual  ", t_a_);                                                             \
            fail_msg("%s:%d: %s is not within %g", __FILE__, __LINE__, #actual, (double)(tol));    \
        }                                                                                          \
    } while (0)

#define T_NEAR(expected, actual) T_NEAR_TOL(expected, actual, 1e-7)

#define T_DOUBLE_NEAR(expected, actual, tol)                                                       \
    do {                                                                                           \
        double t_e_ = (expected), t_a_ = (actual);                                                 \
        if (!(fabs(t_e_ - t_a_) <= (tol)))                                                         \
            fail_msg("%s:%d: %s = %.17g, expected %.17g (+-%g)", __FILE__, __LINE__, #actual, t_a_, \
                     t_e_, (double)(tol));                                                         \
    } while (0)

#define T_IMPROVED(state) (*(bool *)*(state))

#endif
