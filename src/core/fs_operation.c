/* fs_operation.c — the fast path of an operation's max fit factor components.
 *
 * An operation's share by fit factor starts at zero and, in every resource whose demand is at
 * least its usage, never decreases: a ramp to the usage on [0, 1] (or a step at 1 for a gang),
 * then a line to the demand on [1, 2]. Its guarantee is zero in practice and most limits are
 * above the demand. For such a component r the generic chain of
 * ps_plf_max_fit_factor_component reduces to the transposed component itself:
 *
 *   - the narrowing window [g, limit] clamps to [0, d_r], which is the whole transposed domain;
 *     sampling a monotone canonical function at its own ends gives back its end points (the
 *     interpolation at a segment end is exact: seg_param returns 0 or 1, and lerp(l, r, 0) is l,
 *     lerp(l, r, 1) is r), and the points strictly inside are copied; re-adding the points of a
 *     canonical function through the builder merges nothing;
 *   - the shift by -0 maps every point to itself;
 *   - what is left is the left trim, the extension to 1 and the right trim, done here exactly as
 *     the generic chain does them.
 *
 * The generic chain spends most of its time in the narrowing (binary searches and the builder
 * for every point), which is skipped. Anything else (a positive guarantee, a limit below the
 * demand, a demand below the usage, a NaN, a -0 share) takes the generic path; test_fs_operation
 * and test_fs_operation_fsbs compare both on random operations bit for bit.
 */
#include <stdbool.h>
#include <string.h>

#include "core/fs_internal.h"
#include "core/plf_impl.h"

enum { DIM = PS_RES_COUNT, STRIDE = PS_RES_COUNT + 1 };

bool fs_operation_component(struct ps_plf_buf *dst, const struct ps_plf *fsbff, int r, double limit,
                            double guarantee)
{
    const double *a = fsbff->a;
    const int n = fsbff->n;
    double lv = a[1 + r], rv = a[(size_t)(n - 1) * STRIDE + 1 + r];
    /* The window must be the whole domain: g clamps to lv == +0 and the limit to rv. A -0 or a
     * NaN anywhere is left to the generic chain. */
    if (!(guarantee <= 0.0) || !(limit >= rv) || !(rv > 0.0) || lv != 0.0 || signbit(lv))
        return false;
    /* Transposed component (argument: the share of r, value: the fit factor), built with the
     * same builder calls as the generic chain; it must not decrease. */
    ps_plf_buf_clear(dst, 1);
    double last = lv;
    for (int i = 0; i + 1 < n; i++) {
        const double *p = a + (size_t)i * STRIDE, *q = p + STRIDE;
        /* A -0 share (a usage of -0) becomes an argument of -0, which the generic narrowing
         * turns into +0 at the window's start: left to it. */
        if (q[1 + r] < last || signbit(q[1 + r]))
            return false;
        last = q[1 + r];
        buf_push_segment_d(dst, 1, p[1 + r], p, q[1 + r], q);
    }
    if (dst->n < 3 || *dst->oom)
        return false;  /* a 2-point vertical would be collapsed by the trim, not dropped */
    /* Left trim: a vertical first segment (usage 0, or a gang) is dropped. */
    if (dst->a[0] == dst->a[2] && dst->a[1] != dst->a[3]) {
        memmove(dst->a, dst->a + 2, (size_t)(dst->n - 1) * 2 * sizeof *dst->a);
        dst->n--;
    }
    /* Extension to 1 with the last value, through the builder as in the generic chain. */
    double rb = dst->a[2 * (dst->n - 1)];
    if (rb < 1.0) {
        double v = dst->a[2 * (dst->n - 1) + 1];
        buf_push_segment_d(dst, 1, rb, &v, 1.0, &v);
    }
    ps_plf_trim_right(dst);
    return !*dst->oom;
}
