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

#define DIM PS_RES_COUNT
#define MAXPTS 256

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double uniform(void)
{
    return (double)(next_random() >> 11) * 0x1.0p-53;
}

static int pick(int n)
{
    return (int)(next_random() % (uint64_t)n);
}

/* Shares as the benchmark and real trees make them (small multiples of a unit), and arbitrary
 * doubles, zeros and ones. */
static double random_share(void)
{
    switch (pick(7)) {
    case 0:
        return 0.0;
    case 1:
        return 1.25e-6 * (double)(1 + pick(64));
    case 2:
        return uniform();
    case 3:
        return uniform() * 1e-3;
    case 4:
        return 1.0;
    case 5:
        return 1.0 - uniform() * 1e-15;
    default:
        return (double)(1 + pick(8)) / 8.0;
    }
}

struct op_case {
    struct ps_share usage, demand, limits, guarantee;
};

static void random_case(struct op_case *c)
{
    bool idle = pick(4) == 0;
    for (int r = 0; r < DIM; r++) {
        double u = idle ? 0.0 : random_share();
        /* Equal components across resources. */
        if (r > 0 && pick(4) == 0)
            u = c->usage.v[pick(r)];
        double d;
        switch (pick(6)) {
        case 0:
            d = u;
            break;
        case 1:
            d = 0.0;  /* below the usage unless the usage is zero too */
            break;
        case 2:
            d = u + random_share();
            break;
        default:
            d = u * (1.0 + (double)(1 + pick(8)));
            break;
        }
        if (pick(20) == 0)
            d = u + 1.0;  /* demand above the whole cluster */
        double l;
        switch (pick(6)) {
        case 0:
            l = d * uniform();  /* below the demand */
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
        switch (pick(12)) {
        case 0:
            g = -0.0;
            break;
        case 1:
            g = d * uniform();
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

struct env {
    struct ps_fs_update *u;
    struct ps_fs_options opt;
    struct ps_fs_element_input in;
    struct ps_fs_element_output out;
    struct fs_integral ig;
    struct fs_elem e;
};

static void setup_elem(struct env *v, const struct op_case *c, bool gang, bool step)
{
    memset(&v->e, 0, sizeof v->e);
    memset(&v->ig, 0, sizeof v->ig);
    memset(&v->out, 0, sizeof v->out);
    v->opt.enable_step_function_for_gang_operations = step;
    v->in.kind = PS_ELEM_OPERATION;
    v->in.is_gang = gang;
    v->e.in = &v->in;
    v->e.kind = PS_ELEM_OPERATION;
    v->e.ig = &v->ig;
    v->e.out = &v->out;
    v->out.usage_share = c->usage;
    v->out.demand_share = c->demand;
    v->out.limits_share = c->limits;
    /* The guarantee share is sg + proposed. Real operations share the zero entry; a private
     * entry lets the test give them a guarantee, which must take the generic path. */
    v->ig.sg_share = c->guarantee;
    v->ig.proposed = ps_share_fill(0.0);
}

/* Returns whether the fast component path was taken for at least one resource. */
static bool check_case(struct env *v, const struct op_case *c, bool gang, bool step)
{
    setup_elem(v, c, gang, step);
    struct ps_plf generic;
    assert_true(fs_element_fsbs(v->u, &v->e, false, &generic));
    assert_true(generic.n >= 2 && generic.n <= MAXPTS);
    static double saved[MAXPTS * (DIM + 1)];
    int n = generic.n;
    memcpy(saved, generic.a, (size_t)n * (DIM + 1) * sizeof *saved);

    setup_elem(v, c, gang, step);
    struct ps_plf fast;
    assert_true(fs_element_fsbs(v->u, &v->e, true, &fast));
    if (fast.n != n || memcmp(fast.a, saved, (size_t)n * (DIM + 1) * sizeof *saved) != 0) {
        print_error("mismatch (gang %d, step %d): %d vs %d points\n", gang, step, fast.n, n);
        for (int r = 0; r < DIM; r++)
            print_error("  r%d usage %a demand %a limit %a guarantee %a\n", r, c->usage.v[r], c->demand.v[r],
                        c->limits.v[r], c->guarantee.v[r]);
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
    struct env *v = test_calloc(1, sizeof *v);
    v->u = ps_fs_update_new();
    assert_non_null(v->u);
    ps_fs_options_init(&v->opt);
    v->u->options = &v->opt;
    int hits = 0, total = 200000;
    for (int k = 0; k < total; k++) {
        struct op_case c;
        random_case(&c);
        hits += check_case(v, &c, pick(5) == 0, pick(8) != 0);
    }
    /* The fast path must really be exercised, or the test proves nothing. */
    assert_true(hits > total / 3);
    ps_fs_update_free(v->u);
    test_free(v);
}

/* Hand-picked shapes: idle, saturated, gang, one resource, everything equal. */
static void test_edge_operations_match_generic_chain(void **state)
{
    (void)state;
    struct env *v = test_calloc(1, sizeof *v);
    v->u = ps_fs_update_new();
    assert_non_null(v->u);
    ps_fs_options_init(&v->opt);
    v->u->options = &v->opt;
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
                for (int gang = 0; gang < 2; gang++)
                    check_case(v, &c, gang, true);
            }
    ps_fs_update_free(v->u);
    test_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_operations_match_generic_chain),
        cmocka_unit_test(test_edge_operations_match_generic_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
