/* test_fs_root_lazy.c — the root's max fit factor and share by suggestion at suggestion 1.0
 * (the only argument the top-down pass reads them at) from the shortcut of fs_functions.c
 * against the full chain (components, pointwise minimum, composition, compression), bit for
 * bit, on random trees: both fit factor modes, gangs with and without the step function, FIFO
 * roots, guarantees in every resource (below, at and above the cluster), demands above the
 * cluster (the root's limits bind), zero clusters. Also counts that both the shortcut and its
 * fallback (shapes it does not cover) are exercised. */
#include "fs_test_util.h"
#include "fs_random_tree.h"

#include "core/fs_internal.h"

#define DIM PS_RES_COUNT

static struct ps_resources random_resources(uint64_t *s, int scale)
{
    struct ps_resources d = t_res(rnd(s, 60 * scale), rnd(s, 6000 * scale) / 100.0, (int64_t)rnd(s, 600 * scale) * MB);
    if (rnd(s, 3) == 0)
        d.v[PS_RES_GPU] = rnd(s, 3 * scale);
    if (rnd(s, 3) == 0)
        d.v[PS_RES_NETWORK] = rnd(s, 100 * scale);
    return d;
}

static void random_tree(struct t_tree *t, uint64_t *s, bool fifo_root)
{
    if (fifo_root)
        t->p[0].in.mode = PS_MODE_FIFO;
    int pools = fifo_root ? 0 : rnd(s, 12);
    int guarantee_style = rnd(s, 4);   /* 0 none, 1 cpu, 2 every resource, 3 every resource, large */
    for (int p = 0; p < pools; p++) {
        int parent = random_parent(t, s, true);
        int i = t_pool(t, parent, "pool");
        struct ps_fs_pool_input *pin = &t->p[i].in;
        random_pool_mode_weight(t, i, s);
        if (guarantee_style && parent == 0 && rnd(s, 3) != 0) {
            int scale = guarantee_style == 3 ? 3 : 1;
            struct ps_resources g = random_resources(s, scale);
            for (int r = 0; r < PS_RES_COUNT; r++) {
                if (guarantee_style == 1 && r != PS_RES_CPU)
                    continue;
                pin->strong_guarantee.r.v[r] = g.v[r];
                pin->strong_guarantee.set |= 1u << r;
            }
        }
        random_pool_limits(t, i, s);
        bool nested = random_nested_integral(t, parent);
        int g = rnd(s, 6);
        if (g >= 4 && !nested)
            random_integral(t, i, s, g == 4 ? PS_GUARANTEE_BURST : PS_GUARANTEE_RELAXED);
    }
    int ops = rnd(s, 40);
    int demand_scale = 1 + rnd(s, 4);   /* above 1: demands beyond the cluster */
    for (int k = 0; k < ops; k++) {
        int parent = random_parent(t, s, false);
        struct ps_resources d = random_resources(s, demand_scale);
        int i = rnd(s, 4) == 0 ? t_gang(t, parent, "gang", d) : t_op(t, parent, "op", d);
        random_op_details(t, i, d, s);
    }
}

/* Recomputes the root's functions both ways after an update; returns whether the shortcut was
 * taken. */
static bool compare_root(struct t_tree *t, int round)
{
    struct ps_fs_update *u = t->u;
    struct fs_elem *root = &u->el[0];
    bool improved = t->opt.enable_improved_fair_share_by_fit_factor_computation;
    struct ps_plf f;
    double full[DIM], lazy[DIM], full_m = 0.0, lazy_m = 0.0;
    assert_true(fs_element_fsbs(u, root, false, &f));
    ps_plf_value_at(&f, 1.0, full);
    if (!improved)
        full_m = ps_plf_scalar_at(&root->ig->mffbs, 1.0);
    int before = u->root_lazy_runs;
    assert_true(fs_element_fsbs(u, root, true, &f));
    ps_plf_value_at(&f, 1.0, lazy);
    if (!improved)
        lazy_m = ps_plf_scalar_at(&root->ig->mffbs, 1.0);
    if (memcmp(full, lazy, sizeof full) != 0 || memcmp(&full_m, &lazy_m, sizeof full_m) != 0) {
        print_error("round %d (improved %d): the root's values at 1 differ\n", round, improved);
        print_error("  mffbs %a vs %a\n", full_m, lazy_m);
        for (int r = 0; r < DIM; r++)
            print_error("  fsbs[%d] %a vs %a\n", r, full[r], lazy[r]);
        fail();
    }
    return u->root_lazy_runs > before;
}

static void test_root_values_match_full_chain(void **state)
{
    (void)state;
    uint64_t s = 0x7f4a7c159e3779b9ull;
    int taken = 0, fallback = 0;
    for (int round = 0; round < 1500; round++) {
        bool improved = round % 2;
        struct ps_resources total = t_res(100, 100, 1000 * MB);
        if (round % 3 == 0)
            total.v[PS_RES_GPU] = 8;
        if (round % 5 == 0)
            total.v[PS_RES_NETWORK] = 500;
        if (round % 41 == 0)
            total = ps_resources_zero();
        struct t_tree *t = t_new(total, improved);
        t->opt.enable_step_function_for_gang_operations = rnd(&s, 4) != 0;
        random_tree(t, &s, rnd(&s, 8) == 0);
        t_with_previous_minute(t);
        for (int step = 0; step < 2; step++) {
            t_run(t);
            if (compare_root(t, round))
                taken++;
            else
                fallback++;
            t->input.previous_update_time_ms = t->input.now_ms;
            t->input.now_ms += 60000;
        }
        t_free(t);
    }
    print_message("shortcut %d, full chain %d\n", taken, fallback);
    assert_true(taken > 300);
    assert_true(fallback > 30);
}

/* A random share value step: zero, a multiple of 1/8, a tiny step, an arbitrary one. */
static double random_step(uint64_t *s)
{
    switch (rnd(s, 6)) {
    case 0:
    case 1:
        return 0.0;
    case 2:
        return (1 + rnd(s, 4)) / 8.0;
    case 3:
        return (double)(rng_next(s) >> 11) * 0x1.0p-53 * 1e-12;
    default:
        return (double)(rng_next(s) >> 11) * 0x1.0p-53 * 0.3;
    }
}

/* Every component end fs_root_component_end reports is the last value of the component the
 * generic chain builds, which ends flat from before 1.0 and has no larger value. */
static void test_component_end_matches_chain(void **state)
{
    (void)state;
    uint64_t s = 0x1234567887654321ull;
    bool oom = false;
    struct ps_plf_buf f, t1, t2, c;
    ps_plf_buf_init(&f, DIM, &oom);
    ps_plf_buf_init(&t1, 1, &oom);
    ps_plf_buf_init(&t2, 1, &oom);
    ps_plf_buf_init(&c, 1, &oom);
    int shown = 0, not_shown = 0;
    for (int round = 0; round < 200000; round++) {
        ps_plf_buf_clear(&f, DIM);
        int n = 1 + rnd(&s, 12);
        double x = 0.0, v[DIM] = {0};
        double xstep = rnd(&s, 2) ? 1.0 : 1.0 / (1 + rnd(&s, 7));
        ps_plf_add_point(&f, x, v);
        for (int i = 0; i < n; i++) {
            if (rnd(&s, 4) != 0)
                x += rnd(&s, 3) ? xstep : xstep * (double)(rng_next(&s) >> 11) * 0x1.0p-53;
            for (int r = 0; r < DIM; r++)
                v[r] += random_step(&s);
            ps_plf_add_point(&f, x, v);
        }
        if (rnd(&s, 3) == 0) {   /* flat to the end, as a saturated pool */
            x += xstep;
            ps_plf_add_point(&f, x, v);
        }
        struct ps_plf fsbff = ps_plf_buf_view(&f);
        if (fsbff.n < 2)
            continue;
        int r = rnd(&s, DIM);
        const double *last = ps_plf_pt(&fsbff, fsbff.n - 1);
        const double *some = ps_plf_pt(&fsbff, rnd(&s, fsbff.n));
        double limit, guarantee;
        switch (rnd(&s, 5)) {
        case 0: limit = 1.0; break;
        case 1: limit = some[1 + r]; break;
        case 2: limit = last[1 + r] * (double)(rng_next(&s) >> 11) * 0x1.0p-53; break;
        case 3: limit = last[1 + r] + 1.0; break;
        default: limit = 0.0; break;
        }
        switch (rnd(&s, 5)) {
        case 0: guarantee = 0.0; break;
        case 1: guarantee = ps_plf_pt(&fsbff, rnd(&s, fsbff.n))[1 + r]; break;
        case 2: guarantee = limit * (double)(rng_next(&s) >> 11) * 0x1.0p-53; break;
        case 3: guarantee = limit + 0.25; break;
        default: guarantee = -0.0; break;
        }
        double end;
        if (!fs_root_component_end(&fsbff, r, limit, guarantee, &end)) {
            not_shown++;
            continue;
        }
        shown++;
        ps_plf_max_fit_factor_component(&t1, &t2, &c, &fsbff, r, limit, guarantee);
        struct ps_plf comp = ps_plf_buf_view(&c);
        assert_true(comp.n >= 2);
        const double *cl = ps_plf_pt(&comp, comp.n - 1), *cp = ps_plf_pt(&comp, comp.n - 2);
        if (cl[0] != 1.0 || !(cp[0] < 1.0) || memcmp(&cl[1], &end, sizeof end) != 0 || cp[1] != end) {
            print_error("round %d r %d limit %a guarantee %a: end %a, chain ends (%a, %a) (%a, %a)\n", round, r, limit,
                        guarantee, end, cp[0], cp[1], cl[0], cl[1]);
            for (int i = 0; i < fsbff.n; i++)
                print_error("  (%a, %a)\n", ps_plf_pt(&fsbff, i)[0], ps_plf_pt(&fsbff, i)[1 + r]);
            fail();
        }
        for (int i = 0; i < comp.n; i++)
            assert_true(ps_plf_pt(&comp, i)[1] <= end);
    }
    assert_false(oom);
    ps_plf_buf_release(&f);
    ps_plf_buf_release(&t1);
    ps_plf_buf_release(&t2);
    ps_plf_buf_release(&c);
    print_message("component ends shown %d, not shown %d\n", shown, not_shown);
    assert_true(shown > 50000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_root_values_match_full_chain),
        cmocka_unit_test(test_component_end_matches_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
