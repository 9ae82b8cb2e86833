/* fs_operation_fsbs.c — an operation's fair share by suggestion without the generic chain's
 * overheads, the same points bit for bit.
 *
 * Operations are ~90% of the elements and their functions are tiny (FSBFF ~5 points, MFFBS ~7),
 * so the generic chain of fs_element_fsbs (five components, the left fold of pointwise minima,
 * the composition, the compression) spends most of its time on per-call overheads. Here:
 *   - FSBFF and the components are built on the stack;
 *   - saturated operations (usage == demand), idle ones (zero usage) and gangs with the step
 *     function are recognised from FSBFF's points, and what the chain would do with them is
 *     built directly (the derivations are at saturated_points, idle_shape and gang_composed);
 *     idle ones with small demands skip the compression too: it provably joins everything up
 *     to the largest demand (idle_line); saturated ones whose usages are not too close skip it
 *     as it provably keeps every point (saturated_kinks_kept);
 *   - the fold skips the steps where one function lies on the other's tail (above_tail) and
 *     runs the others on stack arrays (ps_plf_min_walk, ps_plf_pointwise_min's walk, from the end
 *     of the two functions' common prefix: common_prefix);
 *   - the rest (partial usage, limits) goes through ps_plf_compose and ps_plf_compress.
 * The shortcuts take only the shapes they check (else the general steps run). A component that
 * fs_operation_component declines (a limit below the demand, a guarantee, a -0 share, ...) is
 * made by ps_plf_max_fit_factor_component as in the generic chain and the rest goes on here; the
 * general steps decline functions larger than the stack arrays and non-finite components, and
 * then fs_element_fsbs runs the generic chain. test_fs_operation_fsbs compares every way with
 * the generic chain on random and edge-case operations at every vector level.
 *
 * Tried and dropped: a composition of its own for a continuous FSBFF (stack pairs, one sample
 * per pair) was slower than ps_plf_compose's AVX-512 builder; a branch-free ramp in
 * fs_operation_fsbff and writing its last points directly measured nothing.
 */
#include <float.h>
#include <stdbool.h>
#include <string.h>

#include "core/fs_operation.h"
#include "core/plf_impl.h"
#include "core/plf_min.h"

enum {
    DIM = PS_RES_COUNT,
    STRIDE = PS_RES_COUNT + 1,
    FSBFF_CAP = 8,   /* 0, up to five fit factors, 1 (among them) and 2: at most 8 points */
    COMP_CAP = 10,   /* a component: at most FSBFF's points, plus the extension to 1 */
    MIN_CAP = 64,    /* a pointwise minimum (checked before each one: at most 3 (f.n + g.n) points) */
    OUT_CAP = 2 * MIN_CAP + 4,  /* an idle operation's composition (two points per fold point) */
};

static const double zero_vec[DIM] = {0};

static inline bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* A builder over stack storage; the steps check the bounds of their outputs first, so it never
 * grows (a growth would realloc the stack: ps_plf_buf_reserve is never reached). */
static inline void stack_buf(struct ps_plf_buf *b, double *a, int points, int dim, bool *oom)
{
    b->a = a;
    b->n = 0;
    b->dim = dim;
    b->cap = points;
    b->cap_d = (size_t)points * (size_t)(dim + 1);
    b->oom = oom;
}

void fs_operation_fsbff(const struct ps_fs_update *u, const struct fs_elem *e, struct ps_plf_buf *dst)
{
    const double *d = e->out->demand_share.v, *us = e->out->usage_share.v;
    ps_plf_buf_clear(dst, DIM);
    if (u->options->enable_step_function_for_gang_operations && e->in->is_gang) {
        /* A gang gets all of its demand or nothing: a step at fit factor 1. */
        buf_push_segment_d(dst, DIM, 0.0, zero_vec, 1.0, zero_vec);
        buf_push_segment_d(dst, DIM, 1.0, zero_vec, 1.0, d);
        buf_push_segment_d(dst, DIM, 1.0, d, 2.0, d);
        return;
    }
    /* On [0, 1] every resource grows like f * max usage up to its own usage; on [1, 2] the share
     * goes linearly from the usage to the demand. The usages are sorted (insertion sort, which
     * keeps equal ones in order); without a NaN or a -0 among them equal usages are the same bits,
     * so any sort gives the same array: a network of compare-exchanges, without the insertion
     * sort's unpredictable branches, takes those. */
    double max_usage = ps_share_max_component(e->out->usage_share);
    double sorted[DIM];
    if (max_usage != 0.0) {
        memcpy(sorted, us, sizeof sorted);
        bool clean = true;
        for (int r = 0; r < DIM; r++)
            clean &= (us[r] == us[r]) & !(us[r] == 0.0 && signbit(us[r]));
        if (clean) {
            static const unsigned char net[9][2] = {{0, 1}, {3, 4}, {2, 4}, {2, 3}, {0, 3},
                                                    {0, 2}, {1, 4}, {1, 3}, {1, 2}};
            for (int k = 0; k < 9; k++) {
                double a = sorted[net[k][0]], b = sorted[net[k][1]];
                sorted[net[k][0]] = b < a ? b : a;
                sorted[net[k][1]] = b < a ? a : b;
            }
        } else {
            for (int a = 1; a < DIM; a++)
                for (int b = a; b > 0 && sorted[b] < sorted[b - 1]; b--) {
                    double t = sorted[b];
                    sorted[b] = sorted[b - 1];
                    sorted[b - 1] = t;
                }
        }
    }
    if (max_usage == 0.0) {
        buf_push_segment_d(dst, DIM, 0.0, zero_vec, 1.0, zero_vec);
    } else {
        /* The points go in without the builder's checks, which never fire on them: their fit
         * factors increase strictly (a point is added only above the previous one), and so do
         * their shares of the resource with the largest usage (min(s_k, max) = s_k, s_k the
         * increasing usages they come from), so no two of them are equal or form a vertical
         * or two flat segments. (Writing every candidate and advancing the count by the
         * comparison, without the branch, was slower: each store's address then waits on it.) */
        if (dst->cap < FSBFF_CAP && !ps_plf_buf_reserve(dst, FSBFF_CAP))
            return;
        double *p = dst->a;
        p[0] = 0.0;
        memcpy(p + 1, zero_vec, sizeof zero_vec);
        int n = 1;
        double previous = 0.0;
        for (int k = 0; k < DIM; k++) {
            double sk = sorted[k], f = sk / max_usage;
            if (f > previous) {
                double *q = p + (size_t)n * STRIDE;
                q[0] = f;
                for (int r = 0; r < DIM; r++)
                    q[1 + r] = us[r] < sk ? us[r] : sk;  /* ps_share_min(fill(s_k), usage) */
                n++;
                previous = f;
            }
        }
        dst->n = n;
    }
    buf_push_segment_d(dst, DIM, 1.0, us, 2.0, d);
}

static bool component_is_zero(const struct ps_plf *f, int r)
{
    const double *p = f->a + 1 + r;
    for (int i = 0; i < f->n; i++, p += STRIDE)
        if (*p != 0.0)
            return false;
    return true;
}

static bool all_finite(const struct ps_plf *c)
{
    for (int i = 0; i < 2 * c->n; i++)
        if (!(c->a[i] >= -DBL_MAX && c->a[i] <= DBL_MAX))
            return false;
    return true;
}

static bool is_neutral(const struct ps_plf *c, double top)
{
    return c->n == 2 && c->a[1] == top && c->a[3] == top;
}

/* The largest j such that f's and g's points 0..j are the same bits, their arguments increase
 * strictly and are finite, their values are finite and +0 or positive, and no three of the
 * values 0..j-1 in a row are equal; 0 when there is none (or j would be 0). Then the walk of
 * ps_plf_min_walk(f, g) over x_0 .. x_{j-1} emits exactly f's points 0..j-1 and reaches x_j in
 * the state its start computes for a = x_j:
 *   - lo = x_0; at each x_i, i < j, neither function has a vertical (the next point is further
 *     right), both take the segment ending there (or the first one at x_0), whose limits at its
 *     own end are its end value (seg_param is exactly 1 or 0, lerp returns that end for a
 *     finite value that is not -0; or a flat copy): l == r == v_i, one emission; the right limits
 *     on (x_i, x_{i+1}) are equal, so no crossing search starts; the builder appends every point
 *     (no point segment, no vertical, no two flat segments in a row);
 *   - at b = x_j, nf and ng count the points up to x_j as the start's loops do, and
 *     merged_segment(nf0 = j, ..) picks what scalar_segment_at from j - 1 picks (the segment
 *     ending at x_j, or the vertical starting there); the limits are then computed the same way,
 *     the right limits before were equal (no crossing search), and the next step is the loop's
 *     emission at a = x_j with the builder holding points 0..j-1.
 * Operations' components share the ramp of the resource with the largest usage up to their own
 * usage (FSBFF's first points), so most steps of their fold skip about half of the walk. */
static int common_prefix(const double *a, int an, const double *b, int bn)
{
    int n = an < bn ? an : bn, j = 0;
    for (int i = 0; i < n; i++) {
        double x = a[2 * i], v = a[2 * i + 1];
        if (!same_bits(x, b[2 * i]) || !same_bits(v, b[2 * i + 1]))
            break;
        if (!(x >= -DBL_MAX && x <= DBL_MAX) || !(v <= DBL_MAX) || !(v > 0.0 || (v == 0.0 && !signbit(v))))
            break;
        if (i > 0 && !(a[2 * i - 2] < x))
            break;
        if (i >= 3 && a[2 * i - 5] == a[2 * i - 3] && a[2 * i - 3] == a[2 * i - 1])
            break;
        j = i;
    }
    return j;
}

/* ---- fold shortcuts ----------------------------------------------------------------------- */

/* A function the lemmas below may return as a minimum: canonical (rebuilding it point by point
 * through the builder gives it back: no repeated point, no two verticals or two horizontals in a
 * row) and every value +0 or positive (limits at its own points are then its values: seg_param
 * is exactly 0 or 1 there and lerp returns the end; no -0 to turn into +0). */
static bool lemma_ready(const double *a, int n)
{
    if (n < 2)
        return false;
    for (int i = 0; i < n; i++) {
        double x = a[2 * i], v = a[2 * i + 1];
        if (x != x || !(v > 0.0 || (v == 0.0 && !signbit(v))))
            return false;
    }
    for (int i = 0; i + 1 < n; i++) {
        const double *l = a + 2 * i, *m = l + 2;
        if (l[0] == m[0] && l[1] == m[1])
            return false;
        if (i + 2 < n) {
            const double *r = m + 2;
            bool lv = l[0] == m[0], rv = m[0] == r[0];
            if ((lv && rv) || (!lv && l[1] == m[1] && !rv && m[1] == r[1]))
                return false;
        }
    }
    return true;
}


/* Whether b is a's points 0..j (the same bits) followed by (x_j, H) and (R, H), R a's last
 * argument, H above every value of a, with a's arguments increasing strictly up to point j + 1.
 * Then ps_plf_pointwise_min(a, b) and (b, a) both give a's points (for a lemma_ready a):
 * the critical points are a's arguments; up to x_j both functions have the same points, so the
 * same limits, and the walk emits them once (equal right limits never start a crossing search);
 * at x_j b jumps from v_j to H (merged_segment takes its vertical) while a goes on; beyond,
 * b's limits are exactly H (flat segment) and a's are its own values (at its own points), at
 * most H, so the minimum takes a's limits (on ties the same bits) and no crossing search starts
 * (the lower function at an interval's start is a, and a's value at its end is not above H). */
static bool above_tail(const double *a, int an, const double *b, int bn)
{
    if (bn < 3)
        return false;
    int j = bn - 3;
    if (an < j + 2)
        return false;
    /* Equal means the same bits: the walk takes each critical point from one of the two
     * arrays, so +0 and -0 must not be told apart by the order of the arguments. */
    if (memcmp(a, b, (size_t)(j + 1) * 2 * sizeof *a) != 0)
        return false;
    for (int i = 0; i <= j; i++)
        if (!(a[2 * i] < a[2 * i + 2]))
            return false;
    double xj = a[2 * j], h = b[2 * j + 3], rb = a[2 * (an - 1)];
    if (!same_bits(b[2 * j + 2], xj) || !same_bits(b[2 * j + 5], h) || !same_bits(b[2 * j + 4], rb) || !(xj < rb) ||
        h == a[2 * j + 1])
        return false;
    for (int i = 0; i < an; i++)
        if (!(a[2 * i + 1] <= h))
            return false;
    return true;
}

static bool same_points(const double *a, int an, const double *b, int bn)
{
    return an == bn && memcmp(a, b, (size_t)an * 2 * sizeof *a) == 0;
}

/* ---- saturated operations ------------------------------------------------------------------
 *
 * An operation that runs all it demands (usage == demand) has the share by fit factor
 * P_0 = (0, 0), P_1 .. P_m (strictly increasing fit factors, P_m at 1) and P_{m+1} = (2, w) with
 * w = P_m's value. When the shape below is checked on FSBFF's points, the chain's result before
 * the compression is (F*(P_0), P_0), .., (F*(P_m), P_m), (1, w), F* a component that increases
 * strictly on P_0 .. P_m. The shape: every value +0 or positive and below 1, every component
 * non-decreasing; each other component r equal to F* (the same bits) up to some P_j, j >= 1,
 * and constant from there (or identically zero); the limits at least w_r and the guarantees at
 * most zero where r is not zero. Then:
 *
 * Components (fs_operation_component). F*'s transposition has tilted segments up to
 * (w*, 1), then the vertical to (w*, 2), and the extension (w*, 2) - (1, 2): T* =
 * (F*(P_k), x_k)_{k<=m}, (w*, 2), (1, 2). Component r: the same points up to k = j, then its
 * constant c = F*(P_j) from x_j to 2 is one merged vertical, and the extension: (c, 2), (1, 2).
 * That is above_tail's form relative to T* (and to any such component with a larger j) with
 * H = 2; with equal j they are the same. So every step of the left fold keeps the component
 * with the larger j (the lemma holds in both argument orders), and the fold gives T* (r* is
 * one of them); none is neutral (three points or more) or zero.
 *
 * Composition (ps_plf_compose of FSBFF and T*). T*'s values are FSBFF's arguments and 2, so
 * each critical point of FSBFF is at an end of T*'s segment: no extra pairs. The pairs are
 * T*'s points. At (0, 0): the left limit interpolates segment 0 at its left end (parameter 0:
 * lv + d * 0, +0 for d >= 0), 0; the right limit is the same point, which the builder pushes
 * raw as its second point and then replaces by the next one (a point segment). At (F*(P_k),
 * x_k): the left limit is P_k's value (parameter 1: rv - d * 0, rv for d >= 0; or a flat
 * copy), the right limit P_k's value again (parameter 0 on the next segment), dropped as a
 * repeat. At (w*, 1) the next pair has the same argument: one sample, w; (w*, 2) adds the left
 * limit at 2, w (flat last segment), a repeat; (1, 2) adds (1, w). No merges: F* increases, so no
 * two flat segments; the last segment is flat, not vertical, so trim_right keeps it.
 *
 * test_fs_operation_fsbs compares this with the generic chain on random and edge-case operations. */
static bool saturated_points(const struct ps_fs_update *u, const struct fs_elem *e, const struct ps_plf *fsbff,
                             double *dst, int *dst_n)
{
    (void)u;
    const double *a = fsbff->a;
    int n = fsbff->n, m = n - 2;
    if (n < 3 || a[0] != 0.0 || a[(size_t)m * STRIDE] != 1.0 || a[(size_t)(m + 1) * STRIDE] != 2.0)
        return false;
    for (int k = 0; k < m; k++)
        if (!(a[(size_t)k * STRIDE] < a[(size_t)(k + 1) * STRIDE]))
            return false;
    const double *w = a + (size_t)m * STRIDE + 1;
    int star = -1;
    for (int r = 0; r < DIM; r++) {
        if (memcmp(&w[r], &a[(size_t)(m + 1) * STRIDE + 1 + r], sizeof w[r]) != 0)
            return false;
        /* +0 first, then non-decreasing and below 1 (no -0, no NaN). */
        if (memcmp(&a[1 + r], &zero_vec[0], sizeof a[1]) != 0)
            return false;
        bool strict = true;
        for (int k = 0; k < m; k++) {
            double p = a[(size_t)k * STRIDE + 1 + r], q = a[(size_t)(k + 1) * STRIDE + 1 + r];
            if (!(p <= q) || signbit(q))
                return false;
            strict = strict && p < q;
        }
        if (!(w[r] < 1.0))
            return false;
        if (strict && star < 0)
            star = r;
    }
    if (star < 0)
        return false;
    const struct ps_share guarantee = fs_guarantee_share(e);
    for (int r = 0; r < DIM; r++) {
        if (w[r] == 0.0)
            continue;  /* non-decreasing from +0: identically zero */
        if (!(guarantee.v[r] <= 0.0) || !(e->out->limits_share.v[r] >= w[r]))
            return false;
        if (r == star)
            continue;
        int j = 0;
        while (j < m && a[(size_t)(j + 1) * STRIDE + 1 + r] == a[(size_t)(j + 1) * STRIDE + 1 + star])
            j++;
        if (j == 0)
            return false;
        for (int k = j + 1; k <= m; k++)
            if (a[(size_t)k * STRIDE + 1 + r] != a[(size_t)j * STRIDE + 1 + r])
                return false;
    }
    for (int k = 0; k <= m; k++) {
        const double *p = a + (size_t)k * STRIDE;
        double *q = dst + (size_t)k * STRIDE;
        q[0] = p[1 + star];
        memcpy(q + 1, p + 1, DIM * sizeof *p);
    }
    double *q = dst + (size_t)(m + 1) * STRIDE;
    q[0] = 1.0;
    memcpy(q + 1, w, DIM * sizeof *w);
    *dst_n = m + 2;
    return true;
}

/* Whether the compression gives saturated_points's function back unchanged: when its arguments
 * 0 = x_0 < x_1 < .. < x_m < x_{m+1} = 1 are at least 2^-40 apart. Its argument x_k is F*'s value
 * at P_k, the k-th smallest distinct positive usage (P_k's share of a largest-usage resource is
 * min(u_max, s_k) = s_k), and each resource r's value there is min(u_r, x_k), the same bits
 * (the ramp's points are copies; at (1, w) too). So every component is min(x, u_r), and at each
 * inner point x_k the resource with u_r = x_k (the largest one at x_m, before the flat end) has
 * a kink: for any s < k < t, the chord from P_s to P_t passes below P_k in that component by
 * (x_k - x_s)(x_t - x_k) / (x_t - x_s) >= half the smaller gap >= 2^-41, against the tolerance of
 * 1e-15 ~ 2^-50. The compression's test at P_k (the joined segment from the run's start to
 * P_{k+1} must lie above the steepest lower bound, the one through P_k - 1e-15 or steeper) is a
 * cross product of differences of numbers in [0, 1] (w < 1 is checked), whose rounding is about
 * 2^-51 db, far below db (2^-41 - 1e-15): it stops every run at its first point, pushing each
 * segment, and the builder takes the points as they are (arguments increase strictly, F*
 * increases, so no vertical or two flat segments). */
static bool saturated_kinks_kept(const struct ps_plf *f)
{
    const double *a = f->a;
    for (int i = 0; i + 1 < f->n; i++)
        if (!(a[(size_t)(i + 1) * STRIDE] - a[(size_t)i * STRIDE] >= 0x1p-40))
            return false;
    return true;
}

/* ---- gangs with the step function ---------------------------------------------------------
 *
 * A gang's share by fit factor is the step (0, 0), (1, 0), (1, d), (2, d). When d has no -0 or
 * NaN, some d_r is positive, every d_r is below 1 and the limits (guarantees) are at least (at
 * most) d_r where it is not zero, the chain is, with the same bits:
 *
 * Components (fs_operation_component). For d_r > 0 the transposition is (0, 0), (0, 1), (d_r, 1),
 * (d_r, 2); the left trim drops the vertical and the extension appends (1, 2): the step
 * S(d_r) = (0, 1), (d_r, 1), (d_r, 2), (1, 2), never neutral. Zero components are skipped.
 *
 * Fold. ps_plf_pointwise_min(S(a), S(b)) is S(max(a, b)) in either order: every limit the walk
 * takes is 1 or 2 (flat segments and verticals, no interpolation); up to the smaller step both
 * are 1; at it the stepping one's right limit is 2, the other's 1, so the minimum stays 1 and
 * the builder moves its flat end; no crossing search starts (the lower function's value at the
 * next critical point is 1, not above the other's 2); at the larger step both left limits are 1
 * and the right ones 2: (max, 1), (max, 2); then both are 2 up to (1, 2). For a == b the two are
 * the same points. So the fold is S(D), D the largest d_r.
 *
 * Composition (ps_plf_compose of FSBFF and S(D)): S(D)'s segments are flat or vertical, so no
 * extra pairs; the pairs are its points. At (0, 1) FSBFF's flat first segment gives +0 twice
 * (the second push is raw: the builder has one point); at (D, 1) the left limit +0 replaces the
 * point segment's end: (0, 0), (D, 0); (D, 2) samples FSBFF's flat last segment: d (a vertical,
 * pushed); (1, 2) gives d again, a flat segment after a vertical, pushed; trim_right keeps it
 * (D < 1). So the composition is (0, 0), (D, 0), (D, d), (1, d), then compressed as always. */
static bool gang_composed(const struct fs_elem *e, const struct ps_plf *fsbff, double *dst)
{
    const double *a = fsbff->a;
    if (fsbff->n != 4 || a[0] != 0.0 || a[STRIDE] != 1.0 || a[2 * STRIDE] != 1.0 || a[3 * STRIDE] != 2.0)
        return false;
    if (memcmp(a + 1, zero_vec, sizeof zero_vec) != 0 || memcmp(a + STRIDE + 1, zero_vec, sizeof zero_vec) != 0 ||
        memcmp(a + 2 * STRIDE + 1, a + 3 * STRIDE + 1, sizeof zero_vec) != 0)
        return false;
    const double *d = a + 3 * STRIDE + 1;
    const struct ps_share guarantee = fs_guarantee_share(e);
    double top = 0.0;
    for (int r = 0; r < DIM; r++) {
        if (signbit(d[r]) || !(d[r] < 1.0))
            return false;  /* -0, negative or NaN, or no extension to 1 */
        if (d[r] == 0.0)
            continue;
        if (!(guarantee.v[r] <= 0.0) || !(e->out->limits_share.v[r] >= d[r]))
            return false;
        if (d[r] > top)
            top = d[r];
    }
    if (!(top > 0.0))
        return false;
    memset(dst, 0, 2 * STRIDE * sizeof *dst);
    dst[STRIDE] = top;
    dst[2 * STRIDE] = top;
    memcpy(dst + 2 * STRIDE + 1, d, DIM * sizeof *d);
    dst[3 * STRIDE] = 1.0;
    memcpy(dst + 3 * STRIDE + 1, d, DIM * sizeof *d);
    return true;
}

/* ---- left fold of the pointwise minimum ------------------------------------------------- */

/* The fold of prepare_mffbs over comps[0..used), into *res (one of the components or ma). */
static bool fold_min(const struct ps_plf *comps, int used, double (*ma)[MIN_CAP * 2], struct ps_plf *res)
{
    struct ps_plf cur = comps[0];
    for (int k = 1; k < used; k++) {
        const struct ps_plf *c = &comps[k];
        if (3 * (cur.n + c->n) + 4 > MIN_CAP)
            return false;
        if ((same_points(cur.a, cur.n, c->a, c->n) || above_tail(cur.a, cur.n, c->a, c->n)) &&
            lemma_ready(cur.a, cur.n))
            continue;
        if (above_tail(c->a, c->n, cur.a, cur.n) && lemma_ready(c->a, c->n)) {
            cur = *c;
            continue;
        }
        /* The buffer that does not hold the current minimum (steps may have been skipped); the
         * check above leaves room for every point of the walk, so it is never grown. */
        struct ps_plf_buf dst = {cur.a == ma[0] ? ma[1] : ma[0], 0, MIN_CAP, 1, (size_t)MIN_CAP * 2, NULL};
        ps_plf_min_walk(&dst, cur.a, cur.n, c->a, c->n, common_prefix(cur.a, cur.n, c->a, c->n));
        cur = (struct ps_plf){dst.a, dst.n, 1};
        if (cur.n < 2)
            return false;
    }
    *res = cur;
    return true;
}

/* ---- idle operations ----------------------------------------------------------------------
 *
 * An operation without usage has the share by fit factor (0, 0), (1, 0), (2, d). When d has no
 * -0 or NaN, every component is below 1 and the limits (guarantees) are at least (at most) the
 * demand (zero) where it is not zero, the chain is, with the same bits:
 *
 * Components (fs_operation_component). For d_r > 0 the transposition is (0, 0), (0, 1), (d_r, 2);
 * the left trim drops the vertical; the extension appends (1, 2): T_r = (0, 1), (d_r, 2), (1, 2).
 * Zero components are skipped; none is neutral (three points). They are built here directly and
 * folded as in prepare_mffbs (fold_min).
 *
 * Composition (ps_plf_compose of FSBFF and M, the fold), when M starts at (0, 1), ends at
 * (1, 2) and its values do not decrease (checked): FSBFF's critical points 0, 1, 2 give no
 * extra pairs (0 is below M's range; 1 and 2 are M's first and last values, so the inverse
 * segment found has them at an end). Every sample of FSBFF at a value y of M, left or right
 * limit, is V(y) = lerp(0, d, seg_param(y, 1, 2)) per component: at y == 1 the left limit is the
 * flat first segment's +0 and the right limit lerp(0, d, 0) = +0 too; above 1 both come from
 * the segment (1, 0) - (2, d), which is not flat (some d_r > 0). A second sample at the same
 * point only repeats the last point: the builder drops it once it has two points, and below
 * two it is pushed (as compose_build does: then it is replaced by the next point, a point
 * segment). So compose_build's control flow is followed with V in place of the limits, and
 * trim_right as at its end. */
static bool idle_shape(const struct fs_elem *e, const struct ps_plf *fsbff)
{
    const double *a = fsbff->a;
    if (fsbff->n != 3 || a[0] != 0.0 || a[STRIDE] != 1.0 || a[2 * STRIDE] != 2.0)
        return false;
    if (memcmp(a + 1, zero_vec, sizeof zero_vec) != 0 || memcmp(a + STRIDE + 1, zero_vec, sizeof zero_vec) != 0)
        return false;
    const double *d = a + 2 * STRIDE + 1;
    const struct ps_share guarantee = fs_guarantee_share(e);
    for (int r = 0; r < DIM; r++) {
        if (signbit(d[r]) || !(d[r] < 1.0))
            return false;  /* -0, negative or NaN, or no extension to 1 */
        if (d[r] != 0.0 && (!(guarantee.v[r] <= 0.0) || !(e->out->limits_share.v[r] >= d[r])))
            return false;
    }
    return true;
}

static bool idle_composed(const struct ps_plf *fsbff, double (*ca)[COMP_CAP * 2],
                          struct ps_plf_buf *ob)
{
    const double *d = fsbff->a + 2 * STRIDE + 1;
    struct ps_plf comps[DIM];
    int used = 0;
    for (int r = 0; r < DIM; r++) {
        if (d[r] == 0.0)
            continue;
        double *c = ca[r];
        c[0] = 0.0;
        c[1] = 1.0;
        c[2] = d[r];
        c[3] = 2.0;
        c[4] = 1.0;
        c[5] = 2.0;
        comps[used++] = (struct ps_plf){c, 3, 1};
    }
    struct ps_plf m;
    double ma[2][MIN_CAP * 2];
    if (used == 0 || !fold_min(comps, used, ma, &m))
        return false;
    const double *g = m.a;
    int gn = m.n;
    if (gn < 2 || g[0] != 0.0 || g[1] != 1.0 || g[2 * (gn - 1)] != 1.0 || g[2 * (gn - 1) + 1] != 2.0)
        return false;
    for (int i = 0; i + 1 < gn; i++)
        if (!(g[2 * i + 1] <= g[2 * i + 3]))
            return false;
    if (2 * gn + 4 > OUT_CAP)
        return false;
    static const double zero[DIM] = {0};
    double v[DIM];
    double px = 0.0;
    for (int i = 0; i < gn; i++) {
        double x = g[2 * i], y = g[2 * i + 1];
        if (y == 1.0)
            memcpy(v, zero, sizeof v);
        else
            lerp_values(v, zero, d, seg_param(y, 1.0, 2.0), DIM);
        bool added = false;
        if (i == 0 || px != x) {
            buf_add_point_d(ob, DIM, x, v);
            added = true;
        }
        if ((i + 1 == gn || g[2 * i + 2] != x) && !(added && ob->n >= 2))
            buf_add_point_d(ob, DIM, x, v);
        px = x;
    }
    if (ob->n >= 2) {
        double *l = ob->a + (size_t)(ob->n - 2) * STRIDE, *r = l + STRIDE;
        if (l[0] == r[0] && !values_equal(l + 1, r + 1, DIM)) {
            if (ob->n > 2)
                ob->n--;
            else
                memcpy(r + 1, l + 1, DIM * sizeof *l);
        }
    }
    return ob->n >= 2;
}

/* An idle operation whose demands are all small enough, but not too small: its share by
 * suggestion is (0, 0), (D, d), (1, d), D the largest demand, without the fold, the composition
 * or the compression. Why, for nonzero demands in [2^-40, 2^-10] with the second largest
 * distinct one (if any) at most D (1 - 2^-20):
 *   - the fold M (idle_composed's) starts at (0, 1) (every T_r's limits at 0 are 1), passes
 *     through (D, 2) exactly (T_D's own point; every other T_r is flat at 2 from its d_r < D on;
 *     no crossing search on the interval ending at D, where both functions are 2) and ends with
 *     (1, 2); its other points lie at the smaller demands or at crossings before them, so the
 *     last one before D has a value of at most 1 + d2 / D + a few ulps < 2;
 *   - the composition's points are then (0, +0), (x_j, V(y_j)) at M's inner points,
 *     (D, lerp(0, d, 1) = d) and (1, d): no point before D is flat with (D, d) (its value is
 *     below d_r in every nonzero component), so the builder keeps (D, d) and appends (1, d);
 *   - every value of M is within a few ulps of 2 of the line 1 + x / D (each minimum step
 *     interpolates between points already near it), so V(y_j) is within ~2^-50 d_r <= 2^-60 of
 *     the line x d / D, far inside the compression's tolerance of 1e-15 ~ 2^-50 (and the
 *     compression's cross products of numbers below 2^-10 round far below that tolerance):
 *     the compression joins (0, 0) to (D, d); the segment to (1, d) has the slope d_r, far below
 *     the bounds' (d_r +- 1e-15) / D for D <= 2^-10 and D >= 2^-40, so it stops there and
 *     appends (1, d).
 * test_fs_operation_fsbs compares this with the generic chain on random idle operations and on
 * demands at and around these bounds, ties and near ties. */
static bool idle_line(const struct ps_plf *fsbff, struct ps_plf_buf *res, bool *oom)
{
    const double *d = fsbff->a + 2 * STRIDE + 1;
    double top = 0.0, second = 0.0;
    for (int r = 0; r < DIM; r++) {
        double v = d[r];
        if (v == 0.0)
            continue;
        if (!(v >= 0x1p-40 && v <= 0x1p-10))
            return false;
        if (v > top) {
            second = top;
            top = v;
        } else if (v < top && v > second) {
            second = v;
        }
    }
    if (top == 0.0 || second > top * (1.0 - 0x1p-20))
        return false;
    ps_plf_buf_clear(res, DIM);
    if (!ps_plf_buf_reserve(res, 3)) {
        *oom = true;
        return false;
    }
    double *p = res->a;
    p[0] = 0.0;
    memcpy(p + 1, zero_vec, sizeof zero_vec);
    p[STRIDE] = top;
    memcpy(p + STRIDE + 1, d, DIM * sizeof *d);
    p[2 * STRIDE] = 1.0;
    memcpy(p + 2 * STRIDE + 1, d, DIM * sizeof *d);
    res->n = 3;
    return true;
}

bool fs_operation_fsbs_path(struct ps_fs_update *u, const struct fs_elem *e, struct ps_plf *out, int *path)
{
    int path_taken = FS_OP_PATH_FUSED;
    bool oom = false;
    double fa[FSBFF_CAP * STRIDE];
    struct ps_plf_buf fb;
    stack_buf(&fb, fa, FSBFF_CAP, DIM, &oom);
    fs_operation_fsbff(u, e, &fb);
    if (fb.n < 2)
        return false;
    struct ps_plf fsbff = ps_plf_buf_view(&fb);

    double oa[OUT_CAP * STRIDE];
    struct ps_plf composed;
    int sat_n;
    if (saturated_points(u, e, &fsbff, oa, &sat_n)) {
        composed = (struct ps_plf){oa, sat_n, DIM};
        path_taken = FS_OP_PATH_SATURATED;
        goto compress;
    }
    if (gang_composed(e, &fsbff, oa)) {
        composed = (struct ps_plf){oa, 4, DIM};
        path_taken = FS_OP_PATH_GANG;
        goto compress;
    }

    struct ps_plf_buf ob;
    stack_buf(&ob, oa, OUT_CAP, DIM, &oom);
    double ca[DIM][COMP_CAP * 2];
    if (idle_shape(e, &fsbff)) {
        if (idle_line(&fsbff, &u->b[5], &u->oom)) {
            *out = ps_plf_buf_view(&u->b[5]);
            if (path)
                *path = FS_OP_PATH_IDLE_LINE;
            return !oom;
        }
        if (u->oom)
            return false;
        if (!idle_composed(&fsbff, ca, &ob))
            return false;
        composed = ps_plf_buf_view(&ob);
        path_taken = FS_OP_PATH_IDLE;
        goto compress;
    }

    /* The components, as prepare_mffbs makes them; any that needs the generic chain sends the
     * whole operation there. */
    struct ps_plf_buf cb[DIM];
    struct ps_plf comps[DIM];
    struct ps_share guarantee = fs_guarantee_share(e);
    double top = ps_plf_right_bound(&fsbff), left = ps_plf_left_bound(&fsbff);
    int used = 0;
    for (int r = 0; r < DIM; r++) {
        stack_buf(&cb[r], ca[r], COMP_CAP, 1, &oom);
        if (left < top && component_is_zero(&fsbff, r)) {
            if (r == DIM - 1 && used == 0) {
                double *c = ca[r];
                c[0] = 0.0;
                c[1] = top;
                c[2] = 1.0;
                c[3] = top;
                cb[r].n = 2;
                comps[used++] = ps_plf_buf_view(&cb[r]);
            }
            continue;
        }
        struct ps_plf c;
        if (fs_operation_component(&cb[r], &fsbff, r, e->out->limits_share.v[r], guarantee.v[r])) {
            c = ps_plf_buf_view(&cb[r]);
        } else {
            /* A limit below the demand, a guarantee, a -0 share, ...: the generic chain's
             * component (prepare_mffbs makes it with the same call), the rest goes on here. */
            ps_plf_max_fit_factor_component(&u->b[1], &u->b[2], &u->comp[r], &fsbff, r, e->out->limits_share.v[r],
                                            guarantee.v[r]);
            if (u->oom || u->ctx.oom)
                return false;
            c = ps_plf_buf_view(&u->comp[r]);
            if (!all_finite(&c))
                return false;  /* the fold's copy of the minimum is tested on finite inputs only */
            path_taken = FS_OP_PATH_GENERIC_COMPONENT;
        }
        if (c.n < 2)
            return false;
        if (!is_neutral(&c, top) || (r == DIM - 1 && used == 0))
            comps[used++] = c;
    }

    struct ps_plf current;
    double ma[2][MIN_CAP * 2];
    if (!fold_min(comps, used, ma, &current))
        return false;

    /* Composition (into a heap builder: the generic composition may grow it) and compression. */
    struct ps_plf_buf *cbuf = &u->b[1];
    ps_plf_compose(&u->ctx, cbuf, &fsbff, &current);
    composed = ps_plf_buf_view(cbuf);
    if (u->ctx.oom || u->oom || composed.n < 2)
        return false;
compress:;
    struct ps_plf_buf *res = &u->b[5];
    ps_plf_buf_clear(res, DIM);
    if (!ps_plf_buf_reserve(res, composed.n)) {
        u->oom = true;
        return false;
    }
    if (path_taken == FS_OP_PATH_SATURATED && saturated_kinks_kept(&composed)) {
        memcpy(res->a, composed.a, (size_t)composed.n * STRIDE * sizeof *composed.a);
        res->n = composed.n;
        path_taken = FS_OP_PATH_SATURATED_KEPT;
    } else {
        ps_plf_compress(res, &composed, FS_COMPRESS_EPSILON);
    }
    *out = ps_plf_buf_view(res);
    if (path)
        *path = path_taken;
    return !oom;
}

bool fs_operation_fsbs(struct ps_fs_update *u, const struct fs_elem *e, struct ps_plf *out)
{
    return fs_operation_fsbs_path(u, e, out, NULL);
}
