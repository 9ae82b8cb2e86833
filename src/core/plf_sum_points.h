/* plf_sum_points.h — the critical points of a sum of piecewise-linear functions (internal to
 * plf_sum.c, separate so that it can be tested against ps_plf_clear_and_sort). */
#ifndef PS_CORE_PLF_SUM_POINTS_H
#define PS_CORE_PLF_SUM_POINTS_H

#include "core/plf.h"

/* The distinct critical points (ps_plf_critical_points) of fs[0..count) inside [lo, hi],
 * increasing, into ctx->pts (with at least `pad` more writable slots after them when there are
 * any); returns their number (-1 when out of memory, 0 when lo > hi). total is the summands' number of points, lo
 * and hi the bounds of their common domain (finite). The result is ps_plf_clear_and_sort of the
 * concatenated critical points (a stable sort, then the first of equal values: of +0 and -0
 * the one of the earlier summand), found by merging the summands' runs instead of sorting. */
int ps_plf_sum_points(struct ps_plf_ctx *ctx, const struct ps_plf *fs, int count, int total, double lo, double hi,
                      int pad);

#endif
