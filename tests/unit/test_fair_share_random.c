/* Random trees through the whole update: every kind of pool and operation, both fit factor
 * modes, integral state carried between updates. Checks upstream's own invariants (a pool's
 * children never get more than the pool, plus epsilon; shares stay within the cluster and are
 * not NaN; the detailed parts add up) and that an update is a pure function of its input, also
 * when it finds functions the updates before it computed (fs_memo.c). */
#include "fs_test_util.h"
#include "fs_random_tree.h"

static void random_tree(struct t_tree *t, uint64_t *s)
{
    int pools = 1 + rnd(s, 12);
    for (int p = 0; p < pools; p++) {
        /* parents among the root and the non-FIFO pools made so far */
        int parent = random_parent(t, s, true);
        int i = t_pool(t, parent, "pool");
        struct ps_fs_pool_input *pin = &t->p[i].in;
        random_pool_mode_weight(t, i, s);
        if (rnd(s, 3) == 0) {
            pin->strong_guarantee.r.v[PS_RES_CPU] = rnd(s, 6000);
            pin->strong_guarantee.set |= 1u << PS_RES_CPU;
        }
        random_pool_limits(t, i, s);
        /* Not below another integral pool: upstream's result there is inconsistent. */
        bool nested = random_nested_integral(t, parent);
        int g = rnd(s, 5);
        if (g >= 3 && !nested) {
            random_integral(t, i, s, g == 3 ? PS_GUARANTEE_BURST : PS_GUARANTEE_RELAXED);
            pin->should_distribute_free_volume_among_children = (signed char)(rnd(s, 3) - 1);
        }
    }
    int ops = rnd(s, 30);
    for (int k = 0; k < ops; k++) {
        int parent = random_parent(t, s, false);
        struct ps_resources d = t_res(rnd(s, 60), rnd(s, 6000) / 100.0, (int64_t)rnd(s, 600) * MB);
        if (rnd(s, 4) == 0)
            d.v[PS_RES_GPU] = rnd(s, 3);
        int i = rnd(s, 5) == 0 ? t_gang(t, parent, "gang", d) : t_op(t, parent, "op", d);
        random_op_details(t, i, d, s);
    }
}

static void check_invariants(const struct t_tree *t, int round)
{
    for (int i = 0; i < t->n; i++) {
        const struct ps_detailed_fair_share *fs = &t->e[i].out.fair_share;
        for (int r = 0; r < PS_RES_COUNT; r++) {
            double v = fs->total.v[r];
            if (!(v >= -1e-12 && v <= 1.0 + 1e-6))
                fail_msg("round %d element %d resource %d: fair share %g", round, i, r, v);
            double parts = fs->strong_guarantee.v[r] + fs->integral_guarantee.v[r] + fs->weight_proportional.v[r];
            if (!(fabs(parts - v) <= 1e-12))
                fail_msg("round %d element %d: detailed parts %g != total %g", round, i, parts, v);
        }
    }
    /* Children never exceed their pool by more than upstream's epsilon. */
    for (int p = 1; p < t->n; p++) {
        if (t->e[p].in.kind == PS_ELEM_OPERATION)
            continue;
        struct ps_share sum = ps_share_fill(0.0);
        bool any = false;
        for (int c = p + 1; c < t->n; c++)
            if (t->e[c].in.parent == p) {
                sum = ps_share_add(sum, t->e[c].out.fair_share.total);
                any = true;
            }
        if (any && !ps_share_dominates(ps_share_add(t->e[p].out.fair_share.total, ps_share_fill(1e-9)), sum))
            fail_msg("round %d pool %d: children get more than the pool", round, p);
    }
}

/* The outputs of t's last run are those of a run on a fresh update object from the inputs that
 * run had (saved, saved_pools: runs write integral state into the pools' inputs). */
static void check_as_fresh(const struct t_tree *t, const struct ps_fs_element_input *saved,
                           const struct ps_fs_pool_input *saved_pools, struct ps_resources total,
                           bool improved, int round, int step)
{
    struct t_tree *fresh = t_new(total, improved);
    fresh->opt = t->opt;
    fresh->input = t->input;
    fresh->n = t->n;
    for (int i = 0; i < t->n; i++) {
        fresh->e[i].in = saved[i];
        fresh->p[i].in = saved_pools[i];
    }
    t_run(fresh);
    for (int i = 0; i < t->n; i++) {
        if (memcmp(&t->e[i].out, &fresh->e[i].out, sizeof t->e[i].out) != 0)
            fail_msg("round %d step %d element %d: output differs from a fresh update", round, step, i);
        if (t->e[i].in.kind != PS_ELEM_OPERATION && memcmp(&t->p[i].out, &fresh->p[i].out, sizeof t->p[i].out) != 0)
            fail_msg("round %d step %d pool %d: output differs from a fresh update", round, step, i);
    }
    t_free(fresh);
}

static void test_random_trees(void **state)
{
    (void)state;
    uint64_t s = 0x2545f4914f6cdd1dull;
    static struct ps_fs_element_input saved[T_MAX_ELEMS];
    static struct ps_fs_pool_input saved_pools[T_MAX_ELEMS];
    for (int round = 0; round < 300; round++) {
        bool improved = round % 2;
        struct ps_resources total = t_res(100, 100, 1000 * MB);
        if (round % 7 == 0)
            total.v[PS_RES_GPU] = 8;
        if (round % 29 == 0)
            total = ps_resources_zero();
        struct t_tree *t = t_new(total, improved);
        t->opt.enable_step_function_for_gang_operations = rnd(&s, 4) != 0;
        if (rnd(&s, 4) == 0)
            t->opt.infer_weight_from_guarantees_share_multiplier = 1.0 + rnd(&s, 4);
        random_tree(t, &s);
        t_with_previous_minute(t);
        /* Three updates a minute apart carry the integral state; the last one is repeated
         * from the same input and must give the same bits. */
        for (int step = 0; step < 3; step++) {
            t_run(t);
            check_invariants(t, round);
            t->input.previous_update_time_ms = t->input.now_ms;
            t->input.now_ms += 60000;
        }
        for (int i = 0; i < t->n; i++) {
            saved[i] = t->e[i].in;
            saved_pools[i] = t->p[i].in;
        }
        t->input.now_ms -= 60000;
        t->input.previous_update_time_ms -= 60000;
        for (int i = 0; i < t->n; i++) {
            t->e[i].in = saved[i];
            t->p[i].in = saved_pools[i];
        }
        t_run(t);
        check_as_fresh(t, saved, saved_pools, total, improved, round, 0);
        t_free(t);
    }
}

/* Whether every child of pool p is an operation (it may be FIFO). */
static bool only_operations(const struct t_tree *t, int p)
{
    for (int c = p + 1; c < t->n; c++)
        if (t->e[c].in.parent == p && t->e[c].in.kind != PS_ELEM_OPERATION)
            return false;
    return true;
}

/* Two operations of the tree swap their inputs (another operation at each index), when both
 * parents come before both. */
static void swap_operations(struct t_tree *t, uint64_t *s)
{
    int i = 1 + rnd(s, t->n - 1), j = 1 + rnd(s, t->n - 1);
    const struct ps_fs_element_input *a = &t->e[i].in, *b = &t->e[j].in;
    if (i == j || a->kind != PS_ELEM_OPERATION || b->kind != PS_ELEM_OPERATION)
        return;
    int first = i < j ? i : j;
    if (a->parent >= first || b->parent >= first)
        return;
    struct ps_fs_element_input x = t->e[i].in;
    t->e[i].in = t->e[j].in;
    t->e[j].in = x;
}

/* A few operations' usage, demand, limits, filter limits, gang flag or weight, a pool's weight,
 * limits or mode, the total or the gang option change, or two operations swap places: each
 * changes what some kept values are a function of (the memo's, fair_share.c's operations'
 * limits and shares). */
static void random_changes(struct t_tree *t, uint64_t *s)
{
    int changes = rnd(s, 4);
    for (int c = 0; c < changes && t->n > 1; c++) {
        int i = 1 + rnd(s, t->n - 1);
        struct ps_fs_element_input *in = &t->e[i].in;
        switch (rnd(s, 11)) {
        case 0:   /* a job ended or started */
            in->usage.v[PS_RES_CPU] = in->demand.v[PS_RES_CPU] * rnd(s, 5) / 4;
            in->usage.v[PS_RES_USER_SLOTS] = in->demand.v[PS_RES_USER_SLOTS] ? rnd(s, 3) : 0;
            break;
        case 1:
            if (in->kind == PS_ELEM_OPERATION)
                in->demand.v[PS_RES_CPU] += rnd(s, 400);
            break;
        case 2:
            in->resource_limits.v[PS_RES_CPU] = rnd(s, 3) ? PS_RES_INFINITE : 100 + rnd(s, 4000);
            break;
        case 3:
            t_weight(t, i, 0.5 + rnd(s, 8) * 0.5);
            break;
        case 4:
            if (in->kind == PS_ELEM_POOL && only_operations(t, i))
                t->p[i].in.mode = t->p[i].in.mode == PS_MODE_FIFO ? PS_MODE_FAIR_SHARE : PS_MODE_FIFO;
            break;
        case 5:
            in->filter_limits.v[PS_RES_MEMORY] = rnd(s, 2) ? PS_RES_INFINITE : (int64_t)rnd(s, 800) * MB;
            break;
        case 6:
            if (in->kind == PS_ELEM_OPERATION)
                in->is_gang = !in->is_gang;
            break;
        case 7:
            t->input.total.v[rnd(s, 2) ? PS_RES_CPU : PS_RES_MEMORY] += rnd(s, 2) ? 100 : -100;
            break;
        case 8:
            t->opt.enable_step_function_for_gang_operations = !t->opt.enable_step_function_for_gang_operations;
            break;
        case 9:
            swap_operations(t, s);
            break;
        default:
            in->max_share_ratio = rnd(s, 11) / 10.0;
            break;
        }
    }
}

/* Updates one after another on one update object (which remembers functions between them)
 * give the bits of updates on a fresh object from the same inputs. */
static void test_memo_sequences(void **state)
{
    (void)state;
    uint64_t s = 0x9d2c5680a1b2c3d4ull;
    static struct ps_fs_element_input saved[T_MAX_ELEMS];
    static struct ps_fs_pool_input saved_pools[T_MAX_ELEMS];
    for (int round = 0; round < 120; round++) {
        bool improved = round % 3 == 2;
        struct ps_resources total = t_res(100, 100, 1000 * MB);
        struct t_tree *t = t_new(total, improved);
        ps_fs_update_set_memo(t->u, true);
        t->opt.enable_step_function_for_gang_operations = rnd(&s, 4) != 0;
        random_tree(t, &s);
        /* operations with the same inputs: one function found within the same update */
        for (int k = rnd(&s, 6); k > 0 && t->n > 1 && t->n < T_MAX_ELEMS; k--) {
            int i = 1 + rnd(&s, t->n - 1);
            if (t->e[i].in.kind == PS_ELEM_OPERATION)
                t->e[t->n++].in = t->e[i].in;
        }
        t_with_previous_minute(t);
        for (int step = 0; step < 6; step++) {
            if (step > 0)
                random_changes(t, &s);
            for (int i = 0; i < t->n; i++) {
                saved[i] = t->e[i].in;
                saved_pools[i] = t->p[i].in;
            }
            t_run(t);
            check_as_fresh(t, saved, saved_pools, total, improved, round, step);
            t->input.previous_update_time_ms = t->input.now_ms;
            t->input.now_ms += 1000 * (1 + rnd(&s, 60));
        }
        t_free(t);
    }
}

/* One run of t checked against a fresh update object's run on the same inputs. */
static void run_as_fresh(struct t_tree *t, int round, int step)
{
    static struct ps_fs_element_input saved[T_MAX_ELEMS];
    static struct ps_fs_pool_input saved_pools[T_MAX_ELEMS];
    for (int i = 0; i < t->n; i++) {
        saved[i] = t->e[i].in;
        saved_pools[i] = t->p[i].in;
    }
    t_run(t);
    check_as_fresh(t, saved, saved_pools, t->input.total, false, round, step);
}

/* An operation whose inputs kept their bits takes the memo entry at its index only when the
 * last run at that index found or stored its key there: not when that run's store was refused
 * for room (the entry there is older, from other inputs), nor when a pool was at that index in
 * between (the entry there is the pool's). */
static void test_memo_kept_inputs(void **state)
{
    (void)state;
    enum { OPS = 600 };
    struct t_tree *t = t_new(t_res(1000, 1000, 100000 * MB), false);
    ps_fs_update_set_memo(t->u, true);
    int pool = t_pool(t, 0, "pool");
    for (int k = 0; k < OPS; k++)
        t_op(t, pool, "op", t_res(1, 1, 10 * MB));
    run_as_fresh(t, 0, 0);   /* one key: every index holds its entry */
    for (int k = 0; k < OPS; k++)   /* 600 keys: more than the room, the later stores refused */
        t->e[2 + k].in.demand = t_res(1 + k % 7, 1 + k, (10 + k) * MB);
    run_as_fresh(t, 0, 1);
    run_as_fresh(t, 0, 2);   /* the same inputs again */
    t_free(t);

    /* Index 2: an operation, a pool of two operations, the operation again. */
    t = t_new(t_total100(), false);
    ps_fs_update_set_memo(t->u, true);
    int a = t_pool(t, 0, "a");
    t_op(t, a, "x", t_res(10, 60, 100 * MB));
    t_op(t, a, "y", t_res(10, 70, 200 * MB));
    run_as_fresh(t, 1, 0);
    struct ps_fs_element x = t->e[2], y = t->e[3];
    t->n = 2;
    int b = t_pool(t, a, "b");
    t_weight(t, b, 3.0);
    t->e[t->n] = x;
    t->e[t->n++].in.parent = b;
    t->e[t->n] = y;
    t->e[t->n++].in.parent = b;
    run_as_fresh(t, 1, 1);
    t->n = 2;
    t->e[t->n++] = x;
    t->e[t->n++] = y;
    run_as_fresh(t, 1, 2);
    t_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_trees),
        cmocka_unit_test(test_memo_sequences),
        cmocka_unit_test(test_memo_kept_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
