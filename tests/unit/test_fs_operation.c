/* test_fs_operation.c — the fast path of operations' max fit factor components against the
 * generic chain: on random operations (zeros, equal components, usage == demand, usage above
 * demand, zero max usage, gangs, limits above, at and below the demand, zero, negative-zero and
 * positive guarantees) the share by suggestion must have the same points, bit for bit. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/fs_internal.h"
#include "fs_op_test_util.h"
#include "test_rng.h"

#define MAXPTS 256

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static void random_case(struct op_case *c)
{
    bool idle = rng_pick(&rng, 4) == 0;
    for (int r = 0; r < DIM; r++) {
        double u = idle ? 0.0 : op_random_share(&rng, 12);
        /* Equal components across resources. */
        if (r > 0 && rng_pick(&rng, 4) == 0)
            u = c->usage.v[rng_pick(&rng, r)];
        double d;
        switch (rng_pick(&rng, 6)) {
        case 0:
            d = u;
            break;
        case 1:
            d = 0.0;  /* below the usage unless the usage is zero too */
            break;
        case 2:
            d = u + op_random_share(&rng, 12);
            break;
        default:
            d = u * (1.0 + (double)(1 + rng_pick(&rng, 8)));
            break;
        }
        if (rng_pick(&rng, 20) == 0)
            d = u + 1.0;  /* demand above the whole cluster */
        double l;
        switch (rng_pick(&rng, 6)) {
        case 0:
            l = d * rng_uniform(&rng);  /* below the demand */
            break;
        case 1:
            l = d;
            break;
        case 2:
            l = 0.0;
            break;
        default:
            l = 1.0;
            break;
        }
        double g = 0.0;
        switch (rng_pick(&rng, 12)) {
        case 0:
            g = -0.0;
            break;
        case 1:
            g = d * rng_uniform(&rng);
            break;
        case 2:
            g = l;
            break;
        default:
            break;
        }
        c->usage.v[r] = u;
        c->demand.v[r] = d;
        c->limits.v[r] = l;
        c->guarantee.v[r] = g;
    }
}

/* Returns whether the fast component path was taken for at least one resource. */
static bool check_case(struct op_env *v, const struct op_case *c)
{
    op_setup_elem(v, c);
    struct ps_plf generic;
    assert_true(fs_element_fsbs(v->u, &v->e, false, &generic));
    assert_true(generic.n >= 2 && generic.n <= MAXPTS);
    static double saved[MAXPTS * (DIM + 1)];
    int n = generic.n;
    memcpy(saved, generic.a, (size_t)n * (DIM + 1) * sizeof *saved);

    op_setup_elem(v, c);
    struct ps_plf fast;
    assert_true(fs_element_fsbs(v->u, &v->e, true, &fast));
    if (!op_same_points(&fast, saved, n)) {
        op_report(c, "mismatch", fast.n, n);
        fail();
    }

    /* Coverage: did any component go the fast way? (b[0] still holds the share by fit factor.) */
    struct ps_plf fsbff = ps_plf_buf_view(&v->u->b[0]);
    struct ps_plf_buf tmp;
    bool oom = false, hit = false;
    ps_plf_buf_init(&tmp, 1, &oom);
    for (int r = 0; r < DIM; r++)
        hit |= fs_operation_component(&tmp, &fsbff, r, c->limits.v[r], c->guarantee.v[r]);
    ps_plf_buf_release(&tmp);
    return hit;
}

static void test_random_operations_match_generic_chain(void **state)
{
    (void)state;
    struct op_env *v = op_env_new();
    int hits = 0, total = 200000;
    for (int k = 0; k < total; k++) {
        struct op_case c;
        random_case(&c);
        c.gang = rng_pick(&rng, 5) == 0;
        c.step = rng_pick(&rng, 8) != 0;
        hits += check_case(v, &c);
    }
    /* The fast path must really be exercised, or the test proves nothing. */
    assert_true(hits > total / 3);
    op_env_free(v);
}

/* Hand-picked shapes: idle, saturated, gang, one resource, everything equal. */
static void test_edge_operations_match_generic_chain(void **state)
{
    (void)state;
    struct op_env *v = op_env_new();
    const double vals[] = {0.0, 1.25e-6, 0.5, 1.0, 2.0};
    int nv = (int)(sizeof vals / sizeof vals[0]);
    for (int a = 0; a < nv; a++)
        for (int b = 0; b < nv; b++)
            for (int shape = 0; shape < 4; shape++) {
                struct op_case c;
                memset(&c, 0, sizeof c);
                for (int r = 0; r < DIM; r++) {
                    c.usage.v[r] = shape == 0 ? vals[a] : (r == 0 ? vals[a] : 0.0);
                    c.demand.v[r] = shape == 1 ? c.usage.v[r] : c.usage.v[r] + vals[b];
                    c.limits.v[r] = shape == 2 ? c.demand.v[r] : 1.0;
                    c.guarantee.v[r] = shape == 3 ? -0.0 : 0.0;
                }
                c.step = true;
                for (int gang = 0; gang < 2; gang++) {
                    c.gang = gang;
                    check_case(v, &c);
                }
            }
    op_env_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_operations_match_generic_chain),
        cmocka_unit_test(test_edge_operations_match_generic_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
