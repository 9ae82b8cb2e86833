/* test_fs_operation_fsbs.c — the operations' fast path of the fair share by suggestion
 * (fs_operation_fsbs: saturated, idle and gang shapes built directly, the compression skipped
 * for idle and saturated ones where it is provably known, the fold's tail lemma and common
 * prefix, generic components for limited operations, the rest on stack inputs) against the
 * generic chain of fs_element_fsbs, bit for bit, at every vector level the CPU has; every way
 * must be taken often enough. Operations are drawn around the shapes the fast path recognises and just
 * outside them: usage == demand, zero usage, partial usage, gangs, zeros and negative zeros in
 * usage and demand, equal usage components, values at and above 1, limits below, at and above the
 * demand, zero, negative-zero and positive guarantees. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/fs_internal.h"
#include "core/fs_operation.h"
#include "core/isa.h"
#include "fs_op_test_util.h"
#include "isa_test_util.h"
#include "test_rng.h"

#define MAXPTS 512

static uint64_t rng = 0x2545f4914f6cdd1dull;

enum shape { SATURATED, IDLE, PARTIAL, MIXED, SHAPES };

/* The shares the fast path's shapes are drawn around (op_random_share's first 9 kinds). */
static double random_share(void)
{
    return op_random_share(&rng, 9);
}

static void random_case(struct op_case *c, enum shape shape)
{
    memset(c, 0, sizeof *c);
    for (int r = 0; r < DIM; r++) {
        double u = shape == IDLE ? 0.0 : random_share();
        if (r > 0 && rng_pick(&rng, 3) == 0)
            u = c->usage.v[rng_pick(&rng, r)];  /* equal components */
        double d;
        if (shape == SATURATED || (shape == MIXED && rng_pick(&rng, 2) == 0))
            d = u;
        else if (shape == IDLE)
            d = rng_pick(&rng, 4) == 0 ? 0.0 : random_share();
        else
            d = u + (rng_pick(&rng, 3) == 0 ? random_share() : u * (double)(1 + rng_pick(&rng, 8)));
        c->usage.v[r] = u;
        c->demand.v[r] = d;
        c->limits.v[r] = rng_pick(&rng, 4) == 0 ? d : 1.0;
        c->guarantee.v[r] = 0.0;
    }
    /* Half of the operations get one or two perturbations just outside the shapes. */
    for (int k = rng_pick(&rng, 4) - 1; k > 0; k--) {
        int r = rng_pick(&rng, DIM);
        switch (rng_pick(&rng, 9)) {
        case 0:
            c->usage.v[r] = -0.0;
            break;
        case 1:
            c->demand.v[r] = -0.0;
            break;
        case 2:
            c->demand.v[r] = 0.0;  /* below the usage */
            break;
        case 3:
            c->demand.v[r] += 1.0;  /* above the cluster */
            break;
        case 4:
            c->limits.v[r] = c->demand.v[r] * rng_uniform(&rng);
            break;
        case 5:
            c->limits.v[r] = 0.0;
            break;
        case 6:
            c->guarantee.v[r] = -0.0;
            break;
        case 7:
            c->guarantee.v[r] = c->demand.v[r] * rng_uniform(&rng);
            break;
        default:
            c->usage.v[r] = c->demand.v[r] = 1.0;
            break;
        }
    }
    c->gang = rng_pick(&rng, 8) == 0;
    c->step = rng_pick(&rng, 8) != 0;
}

/* Compares the fast path (when it answers) and fs_element_fsbs(fast) with the generic chain;
 * returns the path taken, or -1 when the fast path declined. */
static int check_case(struct op_env *v, const struct op_case *c)
{
    static double saved[MAXPTS * (DIM + 1)];
    op_setup_elem(v, c);
    struct ps_plf generic;
    assert_true(fs_element_fsbs(v->u, &v->e, false, &generic));
    assert_true(generic.n >= 2 && generic.n <= MAXPTS);
    int n = generic.n;
    memcpy(saved, generic.a, (size_t)n * (DIM + 1) * sizeof *saved);

    op_setup_elem(v, c);
    struct ps_plf fast;
    int path = -1;
    if (!fs_operation_fsbs_path(v->u, &v->e, &fast, &path)) {
        assert_false(v->u->oom);
        path = -1;
    } else if (!op_same_points(&fast, saved, n)) {
        op_report(c, "fast path mismatch", fast.n, n);
        fail();
    }
    op_setup_elem(v, c);
    assert_true(fs_element_fsbs(v->u, &v->e, true, &fast));
    if (!op_same_points(&fast, saved, n)) {
        op_report(c, "fs_element_fsbs mismatch", fast.n, n);
        fail();
    }
    return path;
}

static void test_random_operations_match_generic_chain(void **state)
{
    (void)state;
    struct op_env *v = op_env_new();
    AT_ISA_TEST_LEVEL(level) {
        int paths[FS_OP_PATH_COUNT + 1] = {0};
        for (int k = 0; k < 60000; k++) {
            struct op_case c;
            random_case(&c, (enum shape)(k % SHAPES));
            paths[check_case(v, &c) + 1]++;
        }
        print_message("level %d: saturated %d (%d uncompressed) idle %d fused %d gang %d generic components %d idle line %d "
                      "generic %d\n",
                      level, paths[1], paths[7], paths[2], paths[3], paths[4], paths[5], paths[6], paths[0]);
        /* Every way must really be exercised, or the test proves nothing. */
        assert_true(paths[FS_OP_PATH_SATURATED + 1] > 2000);
        assert_true(paths[FS_OP_PATH_SATURATED_KEPT + 1] > 2000);
        assert_true(paths[FS_OP_PATH_IDLE + 1] > 5000);
        assert_true(paths[FS_OP_PATH_FUSED + 1] > 5000);
        assert_true(paths[FS_OP_PATH_GANG + 1] > 2000);
        assert_true(paths[FS_OP_PATH_GENERIC_COMPONENT + 1] > 5000);
        assert_true(paths[FS_OP_PATH_IDLE_LINE + 1] > 1000);
        /* Declines are rare now (functions larger than the stack arrays, non-finite components):
         * fs_element_fsbs(fast) is compared for every case anyway. */
    }
    op_env_free(v);
}

/* Hand-picked shapes: one resource, all equal, usage at 1, demands 1 ulp apart, tiny shares. */
static void test_edge_operations_match_generic_chain(void **state)
{
    (void)state;
    struct op_env *v = op_env_new();
    const double vals[] = {0.0, -0.0, 0x1p-1074, 1.25e-6, 0x1.6f0068db8bac7p-15, 0x1.6f0068db8bac8p-15, 0.5,
                           nextafter(1.0, 0.0), 1.0, 2.0};
    int nv = (int)(sizeof vals / sizeof vals[0]);
    for (int a = 0; a < nv; a++)
        for (int b = 0; b < nv; b++)
            for (int shape = 0; shape < 6; shape++)
                for (int gang = 0; gang < 2; gang++) {
                    struct op_case c;
                    memset(&c, 0, sizeof c);
                    for (int r = 0; r < DIM; r++) {
                        double u = shape == 0 ? vals[a] : (r == 0 ? vals[a] : (shape == 4 ? vals[b] : 0.0));
                        c.usage.v[r] = u;
                        c.demand.v[r] = shape == 1 || shape == 4 ? u : (shape == 5 ? vals[(a + r) % nv] : u + vals[b]);
                        c.limits.v[r] = shape == 2 ? c.demand.v[r] : 1.0;
                        c.guarantee.v[r] = shape == 3 ? -0.0 : 0.0;
                    }
                    c.gang = gang;
                    c.step = true;
                    check_case(v, &c);
                }
    op_env_free(v);
}

/* Idle operations with demands at and around idle_line's bounds (2^-40, 2^-10, the second
 * largest at D (1 - 2^-20)), ties and near ties (a few ulps apart), shares like the benchmark's,
 * one to five nonzero components: every one against the generic chain, at every vector level. */
static double idle_demand(double top)
{
    switch (rng_pick(&rng, 10)) {
    case 0:
        return 0.0;
    case 1:
        return top;
    case 2:
        return nextafter(top, 0.0);
    case 3:
        return top * (1.0 - 0x1p-20) * (rng_pick(&rng, 2) ? 1.0 : 1.0 + 0x1p-52);
    case 4:
        return top * rng_uniform(&rng);
    case 5:
        return top * (1.0 - ldexp(rng_uniform(&rng), -rng_pick(&rng, 53)));
    case 6:
        return rng_pick(&rng, 2) ? 0x1p-40 : nextafter(0x1p-40, 0.0);
    case 7:
        return 1.25e-6 * (double)(1 + rng_pick(&rng, 64));
    default:
        return top * ldexp(1.0, -rng_pick(&rng, 30));
    }
}

static void test_idle_operations_near_bounds(void **state)
{
    (void)state;
    struct op_env *v = op_env_new();
    const double tops[] = {0x1p-10, nextafter(0x1p-10, 1.0), nextafter(0x1p-10, 0.0), 0x1p-40,
                           nextafter(0x1p-40, 0.0), 0x1p-20, 1.25e-6, 3e-5, 7.8125e-4, 0.5};
    AT_ISA_TEST_LEVEL(level) {
        int lines = 0;
        for (int k = 0; k < 40000; k++) {
            struct op_case c;
            memset(&c, 0, sizeof c);
            double top = tops[rng_pick(&rng, (int)(sizeof tops / sizeof tops[0]))];
            for (int r = 0; r < DIM; r++) {
                c.demand.v[r] = idle_demand(top);
                if (r > 0 && rng_pick(&rng, 4) == 0)  /* a near tie with an earlier one, a few ulps apart */
                    c.demand.v[r] = nextafter(c.demand.v[rng_pick(&rng, r)], rng_pick(&rng, 2) ? 1.0 : 0.0);
                c.limits.v[r] = rng_pick(&rng, 8) == 0 ? c.demand.v[r] : 1.0;
            }
            c.demand.v[rng_pick(&rng, DIM)] = top;
            c.step = true;
            lines += check_case(v, &c) == FS_OP_PATH_IDLE_LINE;
        }
        print_message("level %d: idle line %d of 40000\n", level, lines);
        assert_true(lines > 4000);
    }
    op_env_free(v);
}

/* operation_fsbff as it was, point by point through the builder: fs_operation_fsbff writes the
 * ramp's points directly and must give the same function. */
static void reference_fsbff(const struct op_case *c, struct ps_plf_buf *dst)
{
    static const double zero[DIM] = {0};
    const double *d = c->demand.v, *us = c->usage.v;
    ps_plf_buf_clear(dst, DIM);
    if (c->step && c->gang) {
        ps_plf_push_segment(dst, 0.0, zero, 1.0, zero);
        ps_plf_push_segment(dst, 1.0, zero, 1.0, d);
        ps_plf_push_segment(dst, 1.0, d, 2.0, d);
        return;
    }
    double max_usage = ps_share_max_component(c->usage);
    if (max_usage == 0.0) {
        ps_plf_push_segment(dst, 0.0, zero, 1.0, zero);
    } else {
        double sorted[DIM];
        memcpy(sorted, us, sizeof sorted);
        for (int a = 1; a < DIM; a++)
            for (int b = a; b > 0 && sorted[b] < sorted[b - 1]; b--) {
                double t = sorted[b];
                sorted[b] = sorted[b - 1];
                sorted[b - 1] = t;
            }
        ps_plf_add_point(dst, 0.0, zero);
        double previous = 0.0;
        for (int k = 0; k < DIM; k++) {
            double f = sorted[k] / max_usage;
            if (f > previous) {
                struct ps_share v = ps_share_min(ps_share_fill(sorted[k]), c->usage);
                ps_plf_add_point(dst, f, v.v);
                previous = f;
            }
        }
    }
    ps_plf_push_segment(dst, 1.0, us, 2.0, d);
}

static void test_fsbff_matches_builder(void **state)
{
    (void)state;
    struct op_env *v = op_env_new();
    bool oom = false;
    struct ps_plf_buf want, got;
    ps_plf_buf_init(&want, DIM, &oom);
    ps_plf_buf_init(&got, DIM, &oom);
    const double odd[] = {NAN, -0.0, -1e-9, INFINITY, 0x1p-1074, 1e300};
    for (int k = 0; k < 200000; k++) {
        struct op_case c;
        random_case(&c, (enum shape)(k % SHAPES));
        for (int j = rng_pick(&rng, 3) == 0 ? 1 + rng_pick(&rng, 2) : 0; j > 0; j--)
            c.usage.v[rng_pick(&rng, DIM)] = odd[rng_pick(&rng, 6)];
        op_setup_elem(v, &c);
        reference_fsbff(&c, &want);
        fs_operation_fsbff(v->u, &v->e, &got);
        assert_false(oom);
        if (want.n != got.n || memcmp(want.a, got.a, (size_t)want.n * (DIM + 1) * sizeof *want.a) != 0) {
            op_report(&c, "fsbff mismatch", got.n, want.n);
            fail();
        }
    }
    ps_plf_buf_release(&want);
    ps_plf_buf_release(&got);
    op_env_free(v);
}

ISA_LEVEL_TESTS(test_random_operations_match_generic_chain)
ISA_LEVEL_TESTS(test_idle_operations_near_bounds)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fsbff_matches_builder),
        ISA_LEVEL_ENTRIES(test_random_operations_match_generic_chain, NULL, NULL),
        cmocka_unit_test(test_edge_operations_match_generic_chain),
        ISA_LEVEL_ENTRIES(test_idle_operations_near_bounds, NULL, NULL),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
