/* fs_random_tree.h — the pieces of the random tree generators that test_fair_share_random.c
 * and test_fs_root_lazy.c share (included after fs_test_util.h). Each helper draws from the
 * xorshift state in exactly the order the tests drew before, so their trees stay the same. */
#ifndef PS_TEST_FS_RANDOM_TREE_H
#define PS_TEST_FS_RANDOM_TREE_H

#include "fs_test_util.h"
#include "test_rng.h"

static inline int rnd(uint64_t *s, int n)
{
    return (int)(rng_next(s) % (uint64_t)n);
}

/* A parent among the root and the elements made so far: not an operation, and for a pool
 * (pool_parent) not a FIFO pool either; the root after four misses. */
static inline int random_parent(const struct t_tree *t, uint64_t *s, bool pool_parent)
{
    for (int tries = 0; tries < 4; tries++) {
        int cand = rnd(s, t->n);
        if (t->e[cand].in.kind != PS_ELEM_OPERATION &&
            (!pool_parent || t->p[cand].in.mode != PS_MODE_FIFO))
            return cand;
    }
    return 0;
}

/* Pool i's mode and weight. */
static inline void random_pool_mode_weight(struct t_tree *t, int i, uint64_t *s)
{
    if (rnd(s, 4) == 0)
        t->p[i].in.mode = PS_MODE_FIFO;
    if (rnd(s, 3) == 0)
        t_weight(t, i, 0.5 + rnd(s, 8) * 0.5);
}

/* Pool i's cpu limit and max share ratio. */
static inline void random_pool_limits(struct t_tree *t, int i, uint64_t *s)
{
    struct ps_fs_element_input *in = &t->e[i].in;
    if (rnd(s, 5) == 0)
        in->resource_limits.v[PS_RES_CPU] = 100 + rnd(s, 9000);
    if (rnd(s, 6) == 0)
        in->max_share_ratio = rnd(s, 11) / 10.0;
}

/* Whether some pool above parent (the root excluded) has an integral guarantee. */
static inline bool random_nested_integral(const struct t_tree *t, int parent)
{
    bool nested = false;
    for (int a = parent; a > 0; a = t->e[a].in.parent)
        nested = nested || t->p[a].in.guarantee_type != PS_GUARANTEE_NONE;
    return nested;
}

/* Makes pool i integral of the given type: cpu flow, burst guarantee, maybe a volume. */
static inline void random_integral(struct t_tree *t, int i, uint64_t *s, enum ps_guarantee_type type)
{
    struct ps_fs_pool_input *pin = &t->p[i].in;
    pin->guarantee_type = type;
    pin->resource_flow.r.v[PS_RES_CPU] = rnd(s, 3000);
    pin->resource_flow.set |= 1u << PS_RES_CPU;
    pin->burst_guarantee.r.v[PS_RES_CPU] = rnd(s, 5000);
    pin->burst_guarantee.set |= 1u << PS_RES_CPU;
    if (rnd(s, 2))
        pin->accumulated_volume.v[PS_RES_CPU] = rnd(s, 100000);
}

/* Operation i (demand d): usage, weight, limits and start time. */
static inline void random_op_details(struct t_tree *t, int i, struct ps_resources d, uint64_t *s)
{
    struct ps_fs_element_input *in = &t->e[i].in;
    if (rnd(s, 2))
        for (int r = 0; r < PS_RES_COUNT; r++)
            in->usage.v[r] = d.v[r] ? d.v[r] * rnd(s, 5) / 4 : 0;
    if (rnd(s, 3) == 0)
        t_weight(t, i, 0.25 + rnd(s, 16) * 0.25);
    if (rnd(s, 6) == 0)
        in->resource_limits = t_res(rnd(s, 60), rnd(s, 4000) / 100.0, (int64_t)rnd(s, 600) * MB);
    in->start_time_ms = rnd(s, 5);
}

#endif
