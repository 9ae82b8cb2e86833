/* fs_fast.h — bit-identical fast forms of per-element arithmetic of the fair share update
 * (fair_share.c, fs_functions.c), kept apart so that tests/unit/test_fs_fast.c can compare each
 * with the library form it replaces. Not a public API. */
#ifndef PS_CORE_FS_FAST_H
#define PS_CORE_FS_FAST_H

#include <string.h>

#include "core/plf.h"
#include "core/plf_impl.h"
#include "core/resources.h"

/* The total in natural units (cpu in cores, as ps_res_get gives it), and the same with 1 where
 * it is zero (a divisor that never traps; those lanes' results are replaced by 0). */
struct fs_total_divisors {
    double limit[PS_RES_COUNT];
    double safe[PS_RES_COUNT];
};

static inline void fs_total_divisors_init(struct fs_total_divisors *t, const struct ps_resources *total)
{
    for (int r = 0; r < PS_RES_COUNT; r++) {
        t->limit[r] = ps_res_get(total, r);
        t->safe[r] = t->limit[r] == 0.0 ? 1.0 : t->limit[r];
    }
}

/* ps_resources_to_share(x, total, 0.0, 0.0) of the usage, the demand and the limits of an
 * operation or a pool, bit for bit: the same divisions (ps_res_get's cpu in cores is the hundredths
 * divided by 100; dividing the other resources by 1 changes nothing), 15 independent lanes
 * without branches, so that they are issued packed instead of one after another. */
static inline void fs_operation_shares(const struct fs_total_divisors *t, const struct ps_resources *usage,
                                       const struct ps_resources *demand, const struct ps_resources *limits,
                                       struct ps_share *usage_share, struct ps_share *demand_share,
                                       struct ps_share *limits_share)
{
    enum { N = 3 * PS_RES_COUNT, L = (N + 1) / 2 };
    typedef double v2d __attribute__((vector_size(16)));
    double num[2 * L], den[2 * L], q[2 * L];
    for (int r = 0; r < PS_RES_COUNT; r++) {
        num[r] = ps_res_get(usage, r);
        num[PS_RES_COUNT + r] = ps_res_get(demand, r);
        num[2 * PS_RES_COUNT + r] = ps_res_get(limits, r);
        for (int k = 0; k < 3; k++)
            den[k * PS_RES_COUNT + r] = t->safe[r];
    }
    num[N] = 0.0;
    den[N] = 1.0;
    for (int j = 0; j < L; j++) {
        v2d a, b;
        memcpy(&a, num + 2 * j, sizeof a);
        memcpy(&b, den + 2 * j, sizeof b);
        v2d x = a / b;
        memcpy(q + 2 * j, &x, sizeof x);
    }
    for (int j = 0; j < N; j++)
        if (t->limit[j % PS_RES_COUNT] == 0.0)
            q[j] = 0.0;
    memcpy(usage_share->v, q, sizeof usage_share->v);
    memcpy(demand_share->v, q + PS_RES_COUNT, sizeof demand_share->v);
    memcpy(limits_share->v, q + 2 * PS_RES_COUNT, sizeof limits_share->v);
}

/* ps_dominant_resource(x, total) from x's shares: it divides the same values where the total is
 * not zero (the lanes whose share is not forced to 0). */
static inline int fs_dominant_of_share(const struct fs_total_divisors *t, const struct ps_share *share)
{
    int best = PS_RES_CPU;
    double best_share = 0.0;
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if (t->limit[r] == 0.0)
            continue;
        if (share->v[r] > best_share) {
            best_share = share->v[r];
            best = r;
        }
    }
    return best;
}

/* ps_plf_value_at of a function of PS_PLF_MAX_DIM values (every element's FSBS), bit for bit: the
 * same segment (the first whose right end is >= x, the last one when none is) and the same
 * seg_left_limit_d on it. For the few points of an operation's function the segment is found by
 * counting the inner points left of x, which over sorted arguments gives the binary search's
 * answer without its unpredictable branches (the top-down pass reads 11,000 of them). */
static inline void fs_small_value_at(const struct ps_plf *f, double x, double *out)
{
    if (f->n > 16) {
        ps_plf_value_at(f, x, out);
        return;
    }
    if (f->n < 2) {
        memset(out, 0, PS_PLF_MAX_DIM * sizeof *out);
        return;
    }
    int seg = 0;
    for (int i = 1; i < f->n - 1; i++)
        seg += XD(f, PS_PLF_MAX_DIM, i) < x;
    seg_left_limit_d(f, PS_PLF_MAX_DIM, seg, x, out);
}

#endif
