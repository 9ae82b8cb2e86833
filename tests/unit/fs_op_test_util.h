/* fs_op_test_util.h — one operation element on its own, for the tests of the operations' fast
 * paths against the generic chain (test_fs_operation.c, test_fs_operation_fsbs.c): the case
 * (shares, gang, step option), its random shares, the update and element it runs in, and the
 * report of a mismatch. */
#ifndef PS_TEST_FS_OP_TEST_UTIL_H
#define PS_TEST_FS_OP_TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/fs_internal.h"
#include "test_rng.h"

#define DIM PS_RES_COUNT

struct op_case {
    struct ps_share usage, demand, limits, guarantee;
    bool gang, step;
};

struct op_env {
    struct ps_fs_update *u;
    struct ps_fs_options opt;
    struct ps_fs_element_input in;
    struct ps_fs_element_output out;
    struct fs_integral ig;
    struct fs_elem e;
};

/* A share drawn from *rng among the first kinds (9 or 12) of: zero, like the benchmark's (small
 * multiples of a unit, also of 0x1.6f0068db8bac7p-15), arbitrary, tiny, just below one, one or
 * a half, powers of two, small eighths; then small, one, eighths. */
static inline double op_random_share(uint64_t *rng, int kinds)
{
    switch (rng_pick(rng, kinds)) {
    case 0:
        return 0.0;
    case 1:
        return 1.25e-6 * (double)(1 + rng_pick(rng, 64));
    case 2:
        return rng_uniform(rng);
    case 3:
        return rng_uniform(rng) * 1e-4;
    case 4:
        return 0x1.6f0068db8bac7p-15 * (double)(1 + rng_pick(rng, 4));
    case 5:
        return 1.0 - rng_uniform(rng) * 1e-15;
    case 6:
        return rng_pick(rng, 8) == 0 ? 1.0 : 0.5;
    case 7:
        return ldexp(1.0, -rng_pick(rng, 40));
    case 8:
        return (double)(1 + rng_pick(rng, 8)) / 8.0 * 1e-3;
    case 9:
        return rng_uniform(rng) * 1e-3;
    case 10:
        return 1.0;
    default:
        return (double)(1 + rng_pick(rng, 8)) / 8.0;
    }
}

static inline struct op_env *op_env_new(void)
{
    struct op_env *v = test_calloc(1, sizeof *v);
    v->u = ps_fs_update_new();
    assert_non_null(v->u);
    ps_fs_options_init(&v->opt);
    v->u->options = &v->opt;
    return v;
}

static inline void op_env_free(struct op_env *v)
{
    ps_fs_update_free(v->u);
    test_free(v);
}

/* A fresh operation element holding c, as the update would before fs_element_fsbs. */
static inline void op_setup_elem(struct op_env *v, const struct op_case *c)
{
    memset(&v->e, 0, sizeof v->e);
    memset(&v->ig, 0, sizeof v->ig);
    memset(&v->out, 0, sizeof v->out);
    v->opt.enable_step_function_for_gang_operations = c->step;
    v->in.kind = PS_ELEM_OPERATION;
    v->in.is_gang = c->gang;
    v->e.in = &v->in;
    v->e.kind = PS_ELEM_OPERATION;
    v->e.ig = &v->ig;
    v->e.out = &v->out;
    v->out.usage_share = c->usage;
    v->out.demand_share = c->demand;
    v->out.limits_share = c->limits;
    /* The guarantee share is sg + proposed. Real operations share the zero entry; a private
     * entry lets the tests give them a guarantee, which must take the generic path. */
    v->ig.sg_share = c->guarantee;
    v->ig.proposed = ps_share_fill(0.0);
}

static inline void op_report(const struct op_case *c, const char *what, int n_fast, int n_generic)
{
    print_error("%s (gang %d, step %d): %d vs %d points\n", what, c->gang, c->step, n_fast, n_generic);
    for (int r = 0; r < DIM; r++)
        print_error("  r%d usage %a demand %a limit %a guarantee %a\n", r, c->usage.v[r], c->demand.v[r],
                    c->limits.v[r], c->guarantee.v[r]);
}

/* Whether the function in fast holds the n points saved, bit for bit. */
static inline bool op_same_points(const struct ps_plf *fast, const double *saved, int n)
{
    return fast->n == n && memcmp(fast->a, saved, (size_t)n * (DIM + 1) * sizeof *saved) == 0;
}

#endif
