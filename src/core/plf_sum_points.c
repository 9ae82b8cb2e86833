/* plf_sum_points.c — the critical points of a sum: the sorted distinct arguments of all
 * summands' points inside the common domain (see plf_sum_points.h). */
#include "core/plf_sum_points.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/plf_impl.h"

/* The ends lo and hi of the common domain are critical points of most summands: they are kept
 * out of the runs, and the first of each in summand order (+0 and -0 compare equal) is noted. */
struct ends {
    double lo, hi;
    bool has_lo, has_hi;
};

PLF_INLINE void note_end(struct ends *e, double x)
{
    if (x == e->lo) {
        if (!e->has_lo) {
            e->lo = x;
            e->has_lo = true;
        }
    } else if (x == e->hi && !e->has_hi) {
        e->hi = x;
        e->has_hi = true;
    }
}

/* f's critical points (ps_plf_critical_points) strictly inside (lo, hi), increasing, into out;
 * the ones at lo or hi go to e. */
PLF_INLINE int run_points(const struct ps_plf *f, int dim, double lo, double hi, double *restrict out,
                          struct ends *e)
{
    const size_t s = (size_t)dim + 1;
    if (f->n < 1)
        return 0;
    double last = f->a[0];
    int k = 0;
    if (last > lo && last < hi)
        out[k++] = last;
    else
        note_end(e, last);
    for (int j = 1; j < f->n; j++) {
        double x = f->a[(size_t)j * s];
        if (x > last) {
            last = x;
            if (x > lo && x < hi)
                out[k++] = x;
            else
                note_end(e, x);
        }
    }
    return k;
}

/* The stable merge of the increasing a[0..na) and b[0..nb) into out[0..na + nb), built from
 * both ends at once: two independent chains of compare, select and advance (each bound by the
 * latency of its loads) instead of one. a[-1] and b[-1] must hold -inf, a[na] and b[nb] +inf,
 * and the values be finite. Ties take a's value first, as a stable sort does. */
static void merge_runs(double *restrict out, const double *a, int na, const double *b, int nb)
{
    int n = na + nb, i = 0, j = 0, ia = na - 1, jb = nb - 1;
    for (int f = 0, e = n - 1; f < n / 2; f++, e--) {
        double x = a[i], y = b[j];
        bool take_b = y < x;
        out[f] = take_b ? y : x;
        i += !take_b;
        j += take_b;
        double xa = a[ia], yb = b[jb];
        bool take_a = xa > yb;
        out[e] = take_a ? xa : yb;
        ia -= take_a;
        jb -= !take_a;
    }
    if (n & 1)
        out[n / 2] = b[j] < a[i] ? b[j] : a[i];
}

/* See plf_sum_points.h. Every summand's points are already an increasing run, so the runs are
 * merged pairwise (stable, so the first of equal values in input order comes first) and the
 * equal values dropped at the end. lo and hi themselves are added at the ends (each is a
 * critical point of the summand whose bound it is). The kept points are finite (lo and hi
 * are), so infinities can fence the runs: each run has a free slot on either side. */
PLF_INLINE int sorted_points(struct ps_plf_ctx *ctx, const struct ps_plf *fs, int count, int dim, int total,
                             double lo, double hi, int pad)
{
    if (lo > hi)
        return 0; /* an empty common domain: no point is inside */
    int space = total + 2 * count + 1;
    if (!ps_plf_ctx_reserve_points(ctx, space + pad) || !ps_plf_ctx_reserve_tmp(ctx, space) ||
        !ps_plf_ctx_reserve_cursors(ctx, 2 * count))
        return -1;
    double *src = ctx->pts, *dst = ctx->tmp;
    int *run = ctx->cursors; /* offset and length of each run */
    int nr = 0, off = 1;
    struct ends e = {lo, hi, false, false};
    for (int i = 0; i < count; i++) {
        int n = run_points(&fs[i], dim, lo, hi, src + off, &e);
        if (n > 0) {
            src[off - 1] = -INFINITY;
            src[off + n] = INFINITY;
            run[2 * nr] = off;
            run[2 * nr + 1] = n;
            nr++;
            off += n + 2;
        }
    }
    if (!e.has_lo)
        return 0; /* not expected: lo is the bound of some summand */
    double *res = ctx->pts;
    if (nr == 0) {
        res[0] = e.lo;
        res[1] = e.hi;
        return e.has_hi ? 2 : 1;
    }
    while (nr > 1) {
        int out = 0, r = 0;
        for (; r < nr; r += 2) {
            int o = run[2 * r], n = run[2 * r + 1];
            if (r + 1 < nr) {
                merge_runs(dst + o, src + o, n, src + run[2 * r + 2], run[2 * r + 3]);
                n += run[2 * r + 3];
            } else {
                memcpy(dst + o, src + o, (size_t)n * sizeof *dst);
            }
            dst[o - 1] = -INFINITY;
            dst[o + n] = INFINITY;
            run[2 * out] = o;
            run[2 * out + 1] = n;
            out++;
        }
        nr = out;
        double *t = src;
        src = dst;
        dst = t;
    }
    /* The first of equal values stays; the one run starts at 1, as the result does after lo:
     * writing never passes reading. */
    const double *in = src + 1;
    double prev = in[0];
    int n = run[1], u = 2;
    res[0] = e.lo; /* after the merges: the first run's fence was there */
    res[1] = prev;
    for (int i = 1; i < n; i++) {
        double x = in[i];
        res[u] = x;
        u += x != prev;
        prev = x;
    }
    res[u] = e.hi;
    return u + e.has_hi;
}

int ps_plf_sum_points(struct ps_plf_ctx *ctx, const struct ps_plf *fs, int count, int total, double lo, double hi,
                      int pad)
{
    int dim = fs[0].dim;
    if (dim == PS_PLF_MAX_DIM)
        return sorted_points(ctx, fs, count, PS_PLF_MAX_DIM, total, lo, hi, pad);
    return sorted_points(ctx, fs, count, dim, total, lo, hi, pad);
}
