/* fs_functions.c — the fair share functions of every element and the top-down assignment.
 *
 * For each element, bottom-up:
 *   FSBFF  fair share by fit factor (vector): how much the element takes at a fit factor;
 *   MFFBS  max fit factor by suggestion (scalar): the largest fit factor whose share stays within
 *          guarantee + suggestion and the limits, in every resource;
 *   FSBS   fair share by suggestion = FSBFF o MFFBS, compressed.
 * Then, top-down from the root with suggestion 1, each pool turns its suggestion into a fit factor
 * and its fit factor into the children's suggestions.
 */
#include <float.h>
#include <stddef.h>
#include <math.h>
#include <string.h>

#include "core/bisect.h"
#include "core/fs_fast.h"
#include "core/fs_internal.h"
#include "core/fs_operation.h"
#include "core/plf_impl.h"

enum { DIM = PS_RES_COUNT };

static const double zero_vec[DIM] = {0};

/* ---- fair share by fit factor --------------------------------------------------------------- */

static void operation_fsbff(struct ps_fs_update *u, const struct fs_elem *e, struct ps_plf_buf *dst)
{
    fs_operation_fsbff(u, e, dst);  /* fs_operation_fsbs.c: shared with the operations' fast path */
}

/* FIFO pools: child k occupies the fit factors [k, k + 1]; the concatenation of the children's
 * FSBS, each lifted by the full shares of the children before it (upstream's fast FIFO path,
 * bit-identical to the generic sum because the children start at zero). */
static void fifo_fsbff(struct ps_fs_update *u, const struct fs_elem *e, struct ps_plf_buf *dst)
{
    ps_plf_buf_clear(dst, DIM);
    double prefix[DIM] = {0}, l[DIM], r[DIM];
    double shift = 0.0;
    for (int k = 0; k < e->child_count; k++) {
        const struct ps_plf *f = &u->el[u->children[e->first_child + k]].fsbs;
        for (int i = 0; i + 1 < f->n; i++) {
            const double *p = ps_plf_pt(f, i), *q = ps_plf_pt(f, i + 1);
            for (int j = 0; j < DIM; j++) {
                l[j] = p[1 + j] + prefix[j];
                r[j] = q[1 + j] + prefix[j];
            }
            ps_plf_push_segment(dst, p[0] + shift, l, q[0] + shift, r);
        }
        const double *last = ps_plf_right_value(f);
        for (int j = 0; j < DIM; j++)
            prefix[j] += last[j];
        shift += 1.0;
    }
}

/* A normal pool's smallest child weight above epsilon (DBL_MAX when none). */
static double smallest_child_weight(const struct ps_fs_update *u, const struct fs_elem *e)
{
    double min_weight = DBL_MAX;
    for (int k = 0; k < e->child_count; k++) {
        double w = u->el[u->children[e->first_child + k]].weight;
        if (w > FS_EPSILON && w < min_weight)
            min_weight = w;
    }
    return min_weight;
}

/* Children's FSBS scaled by weight / min weight and extended to [0, 1], into u->views. */
static int children_views(struct ps_fs_update *u, struct fs_elem *e)
{
    double min_weight = smallest_child_weight(u, e);
    e->ig->min_child_weight = min_weight;
    for (int k = 0; k < e->child_count; k++) {
        const struct fs_elem *c = &u->el[u->children[e->first_child + k]];
        double scale = c->weight / min_weight;
        if (scale == 1.0 && ps_plf_right_bound(&c->fsbs) >= 1.0) {
            u->views[k] = c->fsbs;  /* scaling by 1 and extending to 1 change nothing */
            continue;
        }
        ps_plf_scale_argument(&u->b[1], &c->fsbs, scale);
        struct ps_plf scaled = ps_plf_buf_view(&u->b[1]);
        /* The improved mode reads the children's functions again in the top-down pass. */
        struct ps_arena *arena = u->options->enable_improved_fair_share_by_fit_factor_computation
                                     ? &u->persistent : &u->scratch;
        /* The extension is built straight into the arena rather than built and copied: it holds
         * the scaled points and at most two more (a vertical and the flat piece to 1; nothing
         * on the left, which starts at the scaled function's own left bound), so a builder
         * over that much arena memory never grows (ps_plf_buf_reserve would realloc it). */
        int cap = scaled.n + 2;
        size_t doubles = (size_t)cap * (DIM + 1);
        struct ps_plf_buf ext = {ps_arena_alloc(arena, doubles * sizeof(double)), 0, cap, DIM, doubles, &u->oom};
        if (!ext.a || scaled.n < 2) {
            u->oom = true;  /* as fs_commit: an empty function only comes out of a failed allocation */
            return -1;
        }
        ps_plf_extend(&ext, &scaled, ps_plf_left_bound(&scaled), NULL, 1.0, NULL);
        if (ext.n < 2) {
            u->oom = true;
            return -1;
        }
        u->views[k] = ps_plf_buf_view(&ext);
    }
    return 0;
}

/* Improved mode: every critical point of every child is a unit of fit factor, taken child by
 * child in (suggestion, child index) order, so a step of one child never drags the others. */
static void improved_fsbff(struct ps_fs_update *u, struct fs_elem *e, struct ps_plf_buf *dst)
{
    int c = e->child_count;
    int total = 0;
    for (int k = 0; k < c; k++)
        total += u->views[k].n;
    double *points = ps_arena_alloc(&u->persistent, (size_t)total * 2 * sizeof *points);
    struct ps_plf_cursor *cursors = ps_arena_alloc(&u->scratch, (size_t)c * sizeof *cursors);
    e->ig->imp_views = ps_arena_alloc(&u->persistent, (size_t)c * sizeof *e->ig->imp_views);
    if (!points || !cursors || !e->ig->imp_views) {
        u->oom = true;
        return;
    }
    memcpy(e->ig->imp_views, u->views, (size_t)c * sizeof *e->ig->imp_views);
    const struct ps_plf *views = e->ig->imp_views;
    int n = 0;
    for (int k = 0; k < c; k++) {
        const struct ps_plf *f = &views[k];
        double last = ps_plf_left_bound(f);
        points[2 * n] = last;
        points[2 * n + 1] = k;
        n++;
        for (int j = 1; j < f->n; j++) {
            double x = ps_plf_pt(f, j)[0];
            if (x > last) {
                points[2 * n] = x;
                points[2 * n + 1] = k;
                n++;
                last = x;
            }
        }
    }
    ps_plf_sort_pairs(&u->ctx, points, n);
    e->ig->imp_points = points;
    e->ig->imp_count = n;
    /* The children's sum at every critical point: children before the switching one give their
     * right limits, after it their left limits, and it gives both. */
    double l[DIM], r[DIM], left[DIM], right[DIM];
    ps_plf_buf_clear(dst, DIM);
    for (int k = 0; k < c; k++)
        cursors[k].seg = 0;
    double ff = 0.0;
    for (int p = 0; p < n; p++) {
        int idx = (int)points[2 * p + 1];
        for (int j = 0; j < DIM; j++)
            left[j] = right[j] = 0.0;
        for (int k = 0; k < c; k++) {
            int seg = cursor_segment_at_d(&views[k], DIM, &cursors[k], points[2 * p]);
            seg_limits_d(&views[k], DIM, seg, points[2 * p], l, r);
            const double *lv = k < idx ? r : l, *rv = k <= idx ? r : l;
            for (int j = 0; j < DIM; j++) {
                left[j] += lv[j];
                right[j] += rv[j];
            }
        }
        buf_add_point_d(dst, DIM, ff, left);
        buf_add_point_d(dst, DIM, ff, right);
        ff += 1.0;
    }
}

/* Child k's value at critical point p as upstream's per-child builder records it: the first and
 * the last point at fit factor p (they differ only for the child that switches there). */
static void improved_child_value(const struct fs_elem *e, int k, int p, bool last, double *out)
{
    int idx = (int)e->ig->imp_points[2 * p + 1];
    double l[DIM], r[DIM];
    ps_plf_limits_at(&e->ig->imp_views[k], e->ig->imp_points[2 * p], l, r);
    bool right = last ? k <= idx : k < idx;
    memcpy(out, right ? r : l, sizeof l);
}

/* Upstream builds each child's share by fit factor as a polyline through those points, one unit
 * of fit factor apart; its builder only merges flat pieces and drops repeated points, which
 * leaves every value unchanged, so the value at f is the interpolation between the last point
 * at ceil(f) - 1 and the first at ceil(f). */
static void improved_child_share(const struct fs_elem *e, int k, double f, double *out)
{
    if (!(f > 0.0)) {
        improved_child_value(e, k, 0, false, out);
        return;
    }
    int p = (int)ceil(f);
    if (p >= e->ig->imp_count)
        p = e->ig->imp_count - 1;
    double b[DIM];
    improved_child_value(e, k, p, false, b);
    if (f == (double)p) {
        memcpy(out, b, sizeof b);
        return;
    }
    double a[DIM];
    improved_child_value(e, k, p - 1, true, a);
    double lo = (double)(p - 1), hi = (double)p;
    double t = (f - lo) / (hi - lo);
    for (int j = 0; j < DIM; j++)
        out[j] = t < 0.5 ? a[j] + (b[j] - a[j]) * t : b[j] - (b[j] - a[j]) * (1 - t);
}

static void pool_fsbff(struct ps_fs_update *u, struct fs_elem *e, struct ps_plf_buf *dst)
{
    if (e->child_count == 0) {
        ps_plf_buf_clear(dst, DIM);
        ps_plf_push_segment(dst, 0.0, zero_vec, 1.0, zero_vec);
        return;
    }
    if (e->is_fifo) {
        fifo_fsbff(u, e, dst);
        return;
    }
    if (children_views(u, e))
        return;
    if (u->options->enable_improved_fair_share_by_fit_factor_computation)
        improved_fsbff(u, e, dst);
    else
        ps_plf_sum(&u->ctx, dst, u->views, e->child_count);
}

/* ---- max fit factor by suggestion ----------------------------------------------------------- */

/* A component whose MFFBS is the constant right end of the fit factor domain takes no part in
 * the minimum: min(f, c) reproduces f point for point when c >= f everywhere. */
static bool is_neutral(const struct ps_plf *c, double top)
{
    return c->n == 2 && ps_plf_pt(c, 0)[1] == top && ps_plf_pt(c, 1)[1] == top;
}

static bool component_is_zero(const struct ps_plf *f, int r)
{
    const double *p = f->a + 1 + r;
    for (int i = 0; i < f->n; i++, p += DIM + 1)
        if (*p != 0.0)
            return false;
    return true;
}

/* The root's values for max fit factor m: w_out = FSBFF(m) and *m_out = m; false (then build
 * the functions) when a value of w_out is NaN or -0. */
static bool root_share_at(const struct ps_plf *fsbff, double m, double *m_out, double *w_out)
{
    ps_plf_value_at(fsbff, m, w_out);
    for (int j = 0; j < DIM; j++)
        if (w_out[j] != w_out[j] || (w_out[j] == 0.0 && signbit(w_out[j])))
            return false;
    *m_out = m;
    return true;
}

/* ---- the root: its functions at suggestion 1 only --------------------------------------------
 *
 * (The functions below run once per update and are kept out of line: inlined into
 * fs_element_fsbs they made its hot loops slower.)
 *
 * The root's MFFBS and FSBS are read at one argument, 1.0, by the top-down pass (compute_pool and
 * compute_pool_improved's caller; no other code reads the root's functions: a parent reads its
 * children's, and the burst and relaxed lists hold pools only). When the max fit factor
 * components have the shape checked below, the values there follow from the components' last
 * points, and the pointwise minimum, the composition and the compression over the root's
 * functions (the largest of the tree) are skipped. The values are those of the full chain, bit
 * for bit:
 *
 * Components. ps_plf_max_fit_factor_component ends with the narrowed function shifted by -g
 * and, when its right end rb = limit + -g is below 1, the segment (rb, v) - (1, v) with its last
 * value v; trim_right removes nothing after that horizontal segment. Rather than trusting the
 * derivation, each built component is checked: it ends at exactly 1.0, its point before the
 * last lies before 1.0 and has the last value v (the last segment is horizontal and the only
 * point at 1.0 is the last one), v is not a negative zero, and no value of the component is
 * above v. (Root components with rb == 1.0, where the last segment is the narrowed function's
 * own and may be tilted, fail the check and take the full chain.) The constant component of
 * the all-zero case, (0, top) - (1, top), passes.
 *
 * Pointwise minimum. Take f and g that both end at 1.0, are horizontal on their last segment
 * (at v_f and v_g) and have one point at 1.0. Their critical points are at most 1.0, so the
 * walk of ps_plf_pointwise_min ends with the interval (x0, 1.0], x0 the last critical point
 * below 1.0, where both are horizontal: the right limits at x0 (the last point at x0 of a
 * function with points there, or the interpolation of a horizontal segment, which is its value
 * without rounding) are v_f and v_g, and so are the left limits at 1.0 (the segment ending at
 * the single point at 1.0). The crossing search needs the lower function at x0 to be the higher
 * one at 1.0 and never runs, so the bisection that could land exactly on 1.0 and add a point
 * before 1.0's own is not reached. The walk emits (x0, min) and (1.0, min), min = v_g < v_f ?
 * v_g : v_f (the right limits at 1.0 equal the left ones, no vertical there); the builder may
 * move the point at x0 back along a horizontal run but keeps the last segment horizontal at
 * min with one point at 1.0. By induction over the left fold, MFFBS ends with a horizontal
 * segment at M = the fold's min of the components' last values, its left point before 1.0,
 * and ps_plf_scalar_at(MFFBS, 1.0) = M (flat segment, no negative zero). Every value the
 * minimum emits is a limit or an interpolation inside a segment of each input, so no value of
 * min(f, g) exceeds min(max f, max g): no value of MFFBS exceeds M.
 *
 * Composition. FSBFF o MFFBS samples the pairs (x, y) of MFFBS's points merged with the points
 * where MFFBS reaches a critical point of FSBFF inside a tilted segment; those lie within their
 * segment (lerp keeps the ends' range), so none is at 1.0 (the last segment is horizontal, the
 * others end before 1.0). The last pair is (1.0, M), the only one at 1.0: it adds (1.0,
 * LeftLimit(FSBFF, M)) and then the same point again (dropped); no vertical is left for
 * trim_right to drop, and the builder keeps the last point at 1.0. The left-limit cursor only
 * moves forward: after queries y_1..y_k it stands at max_j LeftSegment(y_j) (FSBFF's arguments
 * do not decrease), and every y queried is an MFFBS value or a critical point at most MFFBS's
 * last value, so at most M: the cursor stands at LeftSegment(M) and the value is
 * ps_plf_value_at(FSBFF, M) (the same seg_left_limit_d on the same segment).
 *
 * Compression keeps the source's first and last points: FSBS ends at (1.0, W), W =
 * value_at(FSBFF, M), after a point before 1.0; value_at(FSBS, 1.0) interpolates that segment
 * at its right end (parameter exactly 1: the right value) or copies the left value of a flat
 * segment, which is W unless W has a negative zero (checked: then the full chain runs).
 *
 * The root then keeps the two-point functions (0, M) - (1, M) and (0, W) - (1, W), whose values
 * at 1.0 are M and W.
 *
 * This leans on ps_plf_pointwise_min, ps_plf_compose, ps_plf_compress and
 * ps_plf_max_fit_factor_component as they are: test_fs_root_lazy compares the shortcut with the
 * full chain (fs_element_fsbs with fast = false) and must pass after any change to them. */
__attribute__((noinline))
static bool root_values_at_one(const struct ps_plf *comps, int used, const struct ps_plf *fsbff, double *m_out,
                               double *w_out)
{
    double m = 0.0;
    for (int k = 0; k < used; k++) {
        const struct ps_plf *c = &comps[k];
        if (c->n < 2)
            return false;
        const double *last = ps_plf_pt(c, c->n - 1), *prev = ps_plf_pt(c, c->n - 2);
        double v = last[1];
        if (last[0] != 1.0 || !(prev[0] < 1.0) || prev[1] != v || v != v || (v == 0.0 && signbit(v)))
            return false;
        for (int i = 0; i < c->n; i++)
            if (!(ps_plf_pt(c, i)[1] <= v))
                return false;
        /* The left fold of ps_plf_pointwise_min: g (the new component) only when strictly lower. */
        m = k == 0 ? v : (v < m ? v : m);
    }
    if (used < 1)
        return false;
    return root_share_at(fsbff, m, m_out, w_out);
}

/* The last value of the component r of a max fit factor by suggestion, when the component ends
 * with the segment (rb, v) - (1, v), rb < 1, and has no value above v; false when that cannot be
 * shown from FSBFF alone (then build it). Exactly what ps_plf_max_fit_factor_component leaves:
 *
 * It clamps limit and g to [F(0), F(end)] (F = FSBFF's component r) and, when rb = limit + -g
 * is below 1, its last point is (rb, rr) followed by (1, rr) (the narrowing's last point is the
 * right limit rr at `limit` of the transposed function T, or the same limits at g = limit; the
 * left trim and the shift keep the last value, the extension appends (1, rr), trim_right finds
 * no vertical after it). rr is computed here from FSBFF's points P_i = (x_i, F_i) without
 * building T, for F non-decreasing (checked): T is the builder's output over the points
 * (F_i, x_i); its merges only drop repeated points and join vertical runs (equal F) or
 * horizontal runs (equal x), keeping each run's ends, so
 *   - when some F_i == limit, T's limits there come from a vertical segment (first and last
 *     point with F == limit: rr is the last one's x) or from a single point or the inside of a
 *     horizontal run (rr is that x either way: the interpolation at a segment's end is its end
 *     value, inside a horizontal segment its value);
 *   - otherwise F_{k-1} < limit < F_k for the first k with F_k > limit, and T has the segment
 *     (F_{k-1}, x_{k-1}) - (F_k, x_k) unmerged (a tilted segment is never joined, and its ends
 *     stay: a merge only moves a point between two vertical, two horizontal or a point segment),
 *     so rr is lerp(x_{k-1}, x_k, seg_param(limit, F_{k-1}, F_k)), the same operations as
 *     seg_limits on it, or x_k when x_{k-1} == x_k (a horizontal one).
 * rr + 0.0 as the narrowing does. With F non-decreasing, T's arguments and values do not
 * decrease, so every value of the component (the limits at g, T's values inside, the limits at
 * limit, each within its segment's ends) is at most rr. */
__attribute__((noinline))
bool fs_root_component_end(const struct ps_plf *fsbff, int r, double limit, double guarantee, double *v)
{
    int n = fsbff->n;
    if (n < 2)
        return false;
    const double *a = fsbff->a;
    const size_t stride = DIM + 1;
#define F_AT(i) a[(size_t)(i) * stride + 1 + (size_t)r]
#define X_AT(i) a[(size_t)(i) * stride]
    double lv = F_AT(0), rv = F_AT(n - 1);
    limit = limit < lv ? lv : limit;
    limit = rv < limit ? rv : limit;
    double g = guarantee < lv ? lv : guarantee;
    g = limit < g ? limit : g;
    if (!(limit + -g < 1.0))
        return false;
    for (int i = 0; i + 1 < n; i++)
        if (!(F_AT(i) <= F_AT(i + 1)))
            return false;
    /* The first point with F >= limit (there is one: limit <= F(n - 1)). */
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (F_AT(mid) < limit)
            lo = mid + 1;
        else
            hi = mid;
    }
    double rr;
    if (F_AT(lo) == limit) {
        /* The last point with F == limit. */
        int last = lo, h = n - 1;
        while (last < h) {
            int mid = last + (h - last + 1) / 2;
            if (F_AT(mid) == limit)
                last = mid;
            else
                h = mid - 1;
        }
        rr = X_AT(last);
    } else {
        if (lo == 0)
            return false;
        double x0 = X_AT(lo - 1), x1 = X_AT(lo);
        if (x0 == x1)
            rr = x1;
        else
            rr = lerp(x0, x1, seg_param(limit, F_AT(lo - 1), F_AT(lo)));
    }
#undef F_AT
#undef X_AT
    rr += 0.0;
    if (rr != rr)
        return false;
    *v = rr;
    return true;
}

/* The root's values at 1 straight from FSBFF: each component's last value as
 * fs_root_component_end gives it (which shows the shape root_values_at_one checks on built
 * components), the components the chain leaves out (identically zero ones; neutral ones, whose
 * values are all `top`) folded in as `top`, which no component value exceeds. */
__attribute__((noinline))
static bool root_values_direct(struct ps_fs_update *u, const struct fs_elem *e, const struct ps_plf *fsbff,
                               double *m_out, double *w_out)
{
    (void)u;
    struct ps_share guarantee = fs_guarantee_share(e);
    double top = ps_plf_right_bound(fsbff), left = ps_plf_left_bound(fsbff);
    if (!(left < top) || !(top >= 0.0))
        return false;
    double m = top;
    for (int r = 0; r < DIM; r++) {
        if (component_is_zero(fsbff, r))
            continue;
        double v;
        if (!fs_root_component_end(fsbff, r, e->out->limits_share.v[r], guarantee.v[r], &v) || !(v <= top))
            return false;
        m = v < m ? v : m;
    }
    if (m == 0.0 && signbit(m))
        return false;
    return root_share_at(fsbff, m, m_out, w_out);
}

/* Builds the root's stand-in functions: FSBS (0, w) - (1, w) in u->b[5], MFFBS (0, m) - (1, m). */
__attribute__((noinline))
static bool root_store(struct ps_fs_update *u, struct fs_elem *e, double m, const double *w, struct ps_plf *mffbs,
                       struct ps_plf *fsbs)
{
    struct ps_plf_buf *bm = &u->b[1], *bf = &u->b[5];
    ps_plf_buf_clear(bm, 1);
    ps_plf_buf_clear(bf, DIM);
    if (!ps_plf_buf_reserve(bm, 2) || !ps_plf_buf_reserve(bf, 2)) {
        u->oom = true;
        return false;
    }
    double mv[1] = {m};
    ps_plf_push_segment(bm, 0.0, mv, 1.0, mv);
    ps_plf_push_segment(bf, 0.0, w, 1.0, w);
    struct ps_plf cur = ps_plf_buf_view(bm);
    if (!u->options->enable_improved_fair_share_by_fit_factor_computation)
        e->ig->mffbs = fs_commit(u, &u->persistent, cur);
    else
        *mffbs = cur;
    *fsbs = ps_plf_buf_view(bf);
    return !u->oom;
}

/* Returns true when the root's shortcut produced FSBS in *root_fsbs (then no composition). */
static bool prepare_mffbs(struct ps_fs_update *u, struct fs_elem *e, const struct ps_plf *fsbff,
                          struct ps_plf *scratch_mffbs, bool fast, struct ps_plf *root_fsbs)
{
    bool root_lazy = fast && e->kind == PS_ELEM_ROOT;
    fast = fast && e->kind == PS_ELEM_OPERATION;
    if (root_lazy) {
        double m, w[DIM];
        if (root_values_direct(u, e, fsbff, &m, w)) {
            u->root_lazy_runs++;
            return root_store(u, e, m, w, scratch_mffbs, root_fsbs);
        }
    }
    struct ps_plf comps[DIM];
    struct ps_share guarantee = fs_guarantee_share(e);
    double top = ps_plf_right_bound(fsbff);
    int used = 0;
    double left = ps_plf_left_bound(fsbff);
    for (int r = 0; r < DIM; r++) {
        if (left < top && component_is_zero(fsbff, r)) {
            /* The chain on an identically zero component (either sign) always ends with the
             * constant (0, top) - (1, top): neutral. */
            if (r == DIM - 1 && used == 0) {
                struct ps_plf_buf *b = &u->comp[r];
                ps_plf_buf_clear(b, 1);
                if (!ps_plf_buf_reserve(b, 2)) {
                    u->oom = true;
                    return false;
                }
                b->a[0] = 0.0;
                b->a[1] = top;
                b->a[2] = 1.0;
                b->a[3] = top;
                b->n = 2;
                comps[used++] = ps_plf_buf_view(b);
            }
            continue;
        }
        if (!fast || !fs_operation_component(&u->comp[r], fsbff, r, e->out->limits_share.v[r], guarantee.v[r]))
            ps_plf_max_fit_factor_component(&u->b[1], &u->b[2], &u->comp[r], fsbff, r, e->out->limits_share.v[r],
                                            guarantee.v[r]);
        struct ps_plf c = ps_plf_buf_view(&u->comp[r]);
        if (c.n < 2) {
            u->oom = true;
            return false;
        }
        if (!is_neutral(&c, top) || (r == DIM - 1 && used == 0))
            comps[used++] = c;
    }
    if (root_lazy) {
        double m, w[DIM];
        if (root_values_at_one(comps, used, fsbff, &m, w)) {
            u->root_lazy_runs++;
            return root_store(u, e, m, w, scratch_mffbs, root_fsbs);
        }
    }
    /* Left fold of the pointwise minimum, as upstream's PointwiseMin(vector). */
    struct ps_plf current = comps[0];
    for (int k = 1; k < used; k++) {
        struct ps_plf_buf *dst = &u->b[1 + (k & 1)];
        ps_plf_pointwise_min(&u->ctx, dst, &current, &comps[k]);
        current = ps_plf_buf_view(dst);
    }
    /* Only the top-down pass of the normal mode reads a pool's MFFBS again; an operation's (and
     * every one in the improved mode) is used once, by the composition, straight from the
     * builder. */
    if (e->kind != PS_ELEM_OPERATION && !u->options->enable_improved_fair_share_by_fit_factor_computation)
        e->ig->mffbs = fs_commit(u, &u->persistent, current);
    else
        *scratch_mffbs = current;
    return false;
}

bool fs_element_fsbs(struct ps_fs_update *u, struct fs_elem *e, bool fast, struct ps_plf *out)
{
    ps_arena_reset(&u->scratch);
    /* Operations: the same points without the generic chain's overheads (fs_operation_fsbs.c),
     * or on to the chain when their shape needs it. */
    if (fast && e->kind == PS_ELEM_OPERATION) {
        if (fs_operation_fsbs(u, e, out))
            return true;
        if (u->oom)
            return false;
    }
    struct ps_plf_buf *fsbff_buf = &u->b[0];
    if (e->kind == PS_ELEM_OPERATION)
        operation_fsbff(u, e, fsbff_buf);
    else
        pool_fsbff(u, e, fsbff_buf);
    if (u->oom || u->ctx.oom || fsbff_buf->n < 2) {
        u->oom = true;
        return false;
    }
    struct ps_plf fsbff = ps_plf_buf_view(fsbff_buf);
    struct ps_plf mffbs = {NULL, 0, 1};
    /* Operations share the zero side entry: only pools and the root write theirs. */
    if (e->kind != PS_ELEM_OPERATION) {
        e->ig->fsbff_right = ps_plf_right_bound(&fsbff);
        e->ig->mffbs = mffbs;
    }
    if (prepare_mffbs(u, e, &fsbff, &mffbs, fast, out))
        return !u->oom && !u->ctx.oom;
    if (u->oom || u->ctx.oom)
        return false;
    /* Composition and compression in one pass (the composed points are handed to the
     * compression as the builder finalizes them). When the composition is built (no AVX-512,
     * or the rare fallback) it goes to whichever of the fold's two builders does not hold the
     * MFFBS: the fold is done with them, and a third builder as large as the biggest MFFBS
     * would only add memory. */
    struct ps_plf_buf *cbuf = mffbs.a && mffbs.a == u->b[1].a ? &u->b[2] : &u->b[1];
    ps_plf_compose_compress(&u->ctx, &u->b[5], cbuf, &fsbff, mffbs.a ? &mffbs : &e->ig->mffbs,
                            FS_COMPRESS_EPSILON);
    *out = ps_plf_buf_view(&u->b[5]);
    return !u->oom && !u->ctx.oom;
}

/* A pool's (or the root's) MFFBS and FSBFF's right bound as fs_element_fsbs leaves them, from
 * the memo (whose functions stay put until the next update). */
static void restore_pool(struct ps_fs_update *u, struct fs_elem *e, const struct fs_memo_value *v)
{
    e->ig->fsbff_right = v->fsbff_right;
    e->ig->mffbs = v->mffbs;
    if (!e->is_fifo && e->child_count > 0)   /* as children_views sets it */
        e->ig->min_child_weight = smallest_child_weight(u, e);
}

static void prepare_element(struct ps_fs_update *u, int i)
{
    struct fs_elem *e = &u->el[i];
    struct fs_memo_value v;
    e->memo_id = 0;
    if (fs_memo_find(u, e, &v)) {
        e->fsbs = v.fsbs;
        if (e->kind != PS_ELEM_OPERATION)
            restore_pool(u, e, &v);
        e->memo_id = v.id;
        e->prepared = true;
        return;
    }
    struct ps_plf fsbs;
    if (!fs_element_fsbs(u, e, true, &fsbs))
        return;
    e->fsbs = fs_commit(u, &u->persistent, fsbs);
    e->prepared = !u->oom;
    if (!e->prepared)
        return;
    v = (struct fs_memo_value){.fsbs = e->fsbs};
    if (e->kind != PS_ELEM_OPERATION) {
        v.mffbs = e->ig->mffbs;
        v.fsbff_right = e->ig->fsbff_right;
        if (!v.mffbs.a)
            return;
    }
    e->memo_id = fs_memo_store(u, e, &v);
}

void fs_prepare_subtree(struct ps_fs_update *u, int root)
{
    /* Pre-order of the subtree, processed backwards: children before their parents. */
    int n = 0, top = 0;
    u->stack[top++] = root;
    while (top > 0) {
        int i = u->stack[--top];
        u->order[n++] = i;
        const struct fs_elem *e = &u->el[i];
        for (int k = 0; k < e->child_count; k++)
            u->stack[top++] = u->children[e->first_child + k];
    }
    for (int k = n - 1; k >= 0; k--) {
        int i = u->order[k];
        /* The order jumps around the element array: fetch the next elements ahead (the state
         * read here spans the first 2 cache lines, and an operation also reads its input's
         * gang flag and its usage, demand and limits shares, 120 bytes of its output). */
        if (k >= 2) {
            const char *next = (const char *)&u->el[u->order[k - 2]];
            for (size_t off = 0; off < sizeof(struct fs_elem) + 63; off += 64)
                __builtin_prefetch(next + off);
        }
        if (k >= 3)
            fs_memo_prefetch(u, u->order[k - 3]);
        if (k >= 1) {
            const struct fs_elem *next = &u->el[u->order[k - 1]];
            __builtin_prefetch(&next->in->is_gang);
            if (next->kind == PS_ELEM_OPERATION) {
                const char *shares = (const char *)&next->out->usage_share;
                __builtin_prefetch(shares);
                __builtin_prefetch(shares + 64);
                __builtin_prefetch(shares + 3 * sizeof(struct ps_share) - 1);
            }
        }
        if (!u->el[i].prepared)
            prepare_element(u, i);
        if (u->oom || u->ctx.oom) {
            u->oom = true;
            return;
        }
    }
}

/* ---- top-down assignment -------------------------------------------------------------------- */

static void set_detailed(struct fs_elem *e, struct ps_share total)
{
    struct ps_detailed_fair_share *fs = &e->out->fair_share;
    fs->total = total;
    fs->strong_guarantee = ps_share_min(total, e->ig->sg_share);
    fs->integral_guarantee = ps_share_min(ps_share_sub(total, fs->strong_guarantee), e->ig->proposed);
    fs->weight_proportional = ps_share_sub(ps_share_sub(total, fs->strong_guarantee), fs->integral_guarantee);
}

static double child_suggestion(const struct ps_fs_update *u, const struct fs_elem *e, int k, double f)
{
    if (e->is_fifo) {
        int satisfied = (int)f;
        if (k < satisfied)
            return 1.0;
        if (k == satisfied)
            return f - satisfied;
        return 0.0;
    }
    const struct fs_elem *c = &u->el[u->children[e->first_child + k]];
    double x = f * (c->weight / e->ig->min_child_weight);
    return x < 1.0 ? x : 1.0;
}

struct fit_check {
    const struct ps_fs_update *u;
    const struct fs_elem *e;
    struct ps_share bound;
    bool record;   /* children_fit keeps each child's share in its output's total */
    struct fs_value_prev *prev;   /* per element index, NULL: none (fs_internal.h) */
};

/* fs_small_value_at(&c->fsbs, x, out), taken from prev when c's function and x kept their bits
 * since prev was written: on the overloaded 250-node day 93% of the pools' fit factors are
 * those of the update before. */
static void element_value_at(struct fs_value_prev *prev, const struct fs_elem *c, double x, double *out)
{
    if (!prev || !c->memo_id) {
        fs_small_value_at(&c->fsbs, x, out);
        return;
    }
    uint64_t xb;
    memcpy(&xb, &x, sizeof xb);
    if (prev->id == c->memo_id && prev->x == xb) {
        memcpy(out, prev->v, sizeof prev->v);
        return;
    }
    fs_small_value_at(&c->fsbs, x, out);
    prev->id = c->memo_id;
    prev->x = xb;
    memcpy(prev->v, out, sizeof prev->v);
}

/* value_prev for this run's elements (memo runs; none without memory). */
static struct fs_value_prev *value_prev_begin(struct ps_fs_update *u)
{
    if (!u->memo_on)
        return NULL;
    if (u->count > u->value_prev_cap) {
        struct fs_value_prev *p = realloc(u->value_prev, (size_t)u->count * sizeof *p);
        if (!p)
            return NULL;
        memset(p + u->value_prev_cap, 0, (size_t)(u->count - u->value_prev_cap) * sizeof *p);
        u->value_prev = p;
        u->value_prev_cap = u->count;
    }
    return u->value_prev;
}

static bool children_fit(double f, void *arg)
{
    const struct fit_check *c = arg;
    const struct fs_elem *e = c->e;
    const int *kids = c->u->children + e->first_child;
    /* Children lists lie in the children array in the order of their parents, which is the
     * order of this pass: fetching ahead runs on into the next pool's children. */
    int ahead_end = c->u->count - 1 - e->first_child;
    struct ps_share sum = ps_share_fill(0.0), v;
    for (int k = 0; k < e->child_count; k++) {
        /* The children are scattered over the element array, their functions over the arena and
         * their outputs over the caller's array: fetch ahead, the element first, then what it
         * points to. */
        if (k + 8 < ahead_end) {
            const char *el = (const char *)&c->u->el[kids[k + 8]];   /* may span two lines */
            __builtin_prefetch(el);
            __builtin_prefetch(el + sizeof(struct fs_elem) - 1);
        }
        if (k + 8 < ahead_end && c->prev)
            __builtin_prefetch(&c->prev[kids[k + 8]]);
        if (k + 4 < ahead_end) {
            const struct fs_elem *ahead = &c->u->el[kids[k + 4]];
            /* the search reads the function's points from end to end (up to 8 lines), unless
             * the value is likely kept */
            if (!c->prev || !ahead->memo_id || c->prev[kids[k + 4]].id != ahead->memo_id) {
                size_t bytes = (size_t)ahead->fsbs.n * (DIM + 1) * sizeof(double);
                const char *a = (const char *)ahead->fsbs.a;
                for (size_t off = 0; off < bytes && off < 8 * 64; off += 64)
                    __builtin_prefetch(a + off);
            }
            __builtin_prefetch(&ahead->out->fair_share.total, 1);
        }
        const struct fs_elem *child = &c->u->el[kids[k]];
        element_value_at(c->prev ? &c->prev[kids[k]] : NULL, child, child_suggestion(c->u, e, k, f), v.v);
        if (c->record)
            child->out->fair_share.total = v;
        sum = ps_share_add(sum, v);
    }
    return ps_share_dominates(c->bound, sum);
}

/* ComputeAndSetFairShare(suggestion) of a pool or the root. */
static void compute_pool(struct ps_fs_update *u, struct fs_elem *e, struct fs_value_prev *prev)
{
    if (e->child_count == 0) {
        set_detailed(e, ps_share_fill(0.0));
        return;
    }
    struct ps_share suggested;
    if (e->share_known)
        suggested = e->out->fair_share.total;
    else
        ps_plf_value_at(&e->fsbs, e->suggestion, suggested.v);
    double f;
    bool known;
    struct fs_value_prev *p = prev && e->memo_id ? &prev[e - u->el] : NULL;
    uint64_t xb;
    memcpy(&xb, &e->suggestion, sizeof xb);
    if (p && p->step_id == e->memo_id && p->step_x == xb) {
        /* the same functions at the same suggestion: the same fit factor, and when it fitted at
         * once, the same children's shares (recorded as children_fit records them) */
        f = p->step_f;
        known = p->step_known;
        for (int k = 0; known && k < e->child_count; k++) {
            int c = u->children[e->first_child + k];
            element_value_at(&prev[c], &u->el[c], child_suggestion(u, e, k, f), u->el[c].out->fair_share.total.v);
        }
    } else {
        /* MFFBS(suggestion) is usually right; precision may make the children's shares at it
         * exceed the pool's by more than epsilon, and then a slightly smaller fit factor is
         * searched. */
        struct fit_check check = {u, e, ps_share_add(suggested, ps_share_fill(FS_EPSILON)), true, prev};
        f = ps_plf_scalar_at(&e->ig->mffbs, e->suggestion);
        /* When f fits, the children's shares at their suggestions are the ones just computed
         * (the same function at the same argument): they are kept for their own step. */
        known = children_fit(f, &check);
        if (!known) {
            check.record = false;
            f = ps_bisect_inverse_lower_bound(0.0, f, children_fit, &check);
        }
        if (p) {
            p->step_id = e->memo_id;
            p->step_x = xb;
            p->step_f = f;
            p->step_known = known;
        }
    }
    for (int k = 0; k < e->child_count; k++) {
        struct fs_elem *child = &u->el[u->children[e->first_child + k]];
        child->suggestion = child_suggestion(u, e, k, f);
        child->share_known = known;
    }
    set_detailed(e, suggested);
}

static void child_share_at(const struct ps_fs_update *u, const struct fs_elem *e, int k, double f, double *out)
{
    if (!e->is_fifo) {
        improved_child_share(e, k, f, out);
        return;
    }
    int satisfied = (int)f;
    const struct fs_elem *c = &u->el[u->children[e->first_child + k]];
    if (k < satisfied)
        ps_plf_value_at(&c->fsbs, 1.0, out);
    else if (k == satisfied && f - satisfied != 0.0)
        ps_plf_value_at(&c->fsbs, f - satisfied, out);
    else
        memset(out, 0, DIM * sizeof *out);
}

/* The bisection of a normal improved-mode pool soon stays within one unit of fit factor, where
 * improved_child_share reads the same two values of every child at every step (at the critical
 * points p - 1, last, and p, first): they are kept for the p of the last two units visited (near
 * an integer the steps alternate between two), and each step only interpolates them as
 * improved_child_share does. */
struct improved_cache {
    int p;         /* the critical point b holds; -1: none */
    bool has_a;    /* a holds the values at p - 1 */
    double *a, *b; /* child_count x DIM each */
};

struct shares_check {
    struct fit_check fit;
    struct improved_cache cache[2];   /* cache[0]: the unit of the last step */
};

/* Child k's share at f for every child, in children order, as improved_child_share gives it;
 * summed for the fit check, or with write, stored as each child's share. */
static bool improved_shares_at(const struct fit_check *c, struct improved_cache caches[2], double f, bool write)
{
    const struct fs_elem *e = c->e;
    int p = 0;
    bool interp = false;
    if (f > 0.0) {
        p = (int)ceil(f);
        if (p >= e->ig->imp_count)
            p = e->ig->imp_count - 1;
        interp = f != (double)p;
    }
    if (caches[0].p != p) {
        struct improved_cache t = caches[0];
        caches[0] = caches[1];
        caches[1] = t;
    }
    struct improved_cache *cache = &caches[0];
    if (cache->p != p) {
        for (int k = 0; k < e->child_count; k++)
            improved_child_value(e, k, p, false, cache->b + (size_t)k * DIM);
        cache->p = p;
        cache->has_a = false;
    }
    if (interp && !cache->has_a) {
        for (int k = 0; k < e->child_count; k++)
            improved_child_value(e, k, p - 1, true, cache->a + (size_t)k * DIM);
        cache->has_a = true;
    }
    double lo = (double)(p - 1), hi = (double)p;
    double t = interp ? (f - lo) / (hi - lo) : 0.0;
    struct ps_share sum = ps_share_fill(0.0), v;
    for (int k = 0; k < e->child_count; k++) {
        const double *b = cache->b + (size_t)k * DIM;
        if (!interp) {
            memcpy(v.v, b, sizeof v.v);
        } else {
            const double *a = cache->a + (size_t)k * DIM;
            for (int j = 0; j < DIM; j++)
                v.v[j] = t < 0.5 ? a[j] + (b[j] - a[j]) * t : b[j] - (b[j] - a[j]) * (1 - t);
        }
        if (write)
            c->u->el[c->u->children[e->first_child + k]].out->fair_share.total = v;
        sum = ps_share_add(sum, v);
    }
    return ps_share_dominates(c->bound, sum);
}

static bool children_shares_fit(double f, void *arg)
{
    struct shares_check *sc = arg;
    const struct fit_check *c = &sc->fit;
    if (sc->cache[0].b)
        return improved_shares_at(c, sc->cache, f, false);
    struct ps_share sum = ps_share_fill(0.0), v;
    for (int k = 0; k < c->e->child_count; k++) {
        child_share_at(c->u, c->e, k, f, v.v);
        sum = ps_share_add(sum, v);
    }
    return ps_share_dominates(c->bound, sum);
}

/* ComputeAndSetFairShare(suggested share) of the improved mode. */
static void compute_pool_improved(struct ps_fs_update *u, struct fs_elem *e)
{
    if (e->child_count == 0) {
        set_detailed(e, ps_share_fill(0.0));
        return;
    }
    struct shares_check check = {{u, e, e->out->fair_share.total, false, NULL},
                                 {{-1, false, NULL, NULL}, {-1, false, NULL, NULL}}};
    if (!e->is_fifo) {
        /* No preparation runs after the bottom-up pass: the scratch arena is free. */
        ps_arena_reset(&u->scratch);
        size_t bytes = (size_t)e->child_count * DIM * sizeof(double);
        bool ok = true;
        for (int s = 0; s < 2; s++) {
            check.cache[s].a = ps_arena_alloc(&u->scratch, bytes);
            check.cache[s].b = ps_arena_alloc(&u->scratch, bytes);
            ok = ok && check.cache[s].a && check.cache[s].b;
        }
        if (!ok)
            check.cache[0].b = NULL;   /* without the cache: the same values, only slower */
    }
    double f = ps_bisect_inverse_lower_bound(0.0, e->ig->fsbff_right, children_shares_fit, &check);
    /* Negligible fit factors are zero, so that nothing tiny is handed out. */
    if (f < FS_EPSILON)
        f = 0.0;
    if (check.cache[0].b)
        improved_shares_at(&check.fit, check.cache, f, true);
    else
        for (int k = 0; k < e->child_count; k++)
            child_share_at(u, e, k, f, u->el[u->children[e->first_child + k]].out->fair_share.total.v);
    set_detailed(e, e->out->fair_share.total);
}

void fs_compute_fair_shares(struct ps_fs_update *u)
{
    if (u->oom)
        return;
    bool improved = u->options->enable_improved_fair_share_by_fit_factor_computation;
    struct fs_value_prev *prev = improved ? NULL : value_prev_begin(u);
    struct fs_elem *root = &u->el[0];
    if (improved)
        ps_plf_value_at(&root->fsbs, 1.0, root->out->fair_share.total.v);
    else
        root->suggestion = 1.0;
    /* Parents come before children in the array, so one forward pass is top-down. */
    for (int i = 0; i < u->count; i++) {
        struct fs_elem *e = &u->el[i];
        if (e->kind == PS_ELEM_OPERATION) {
            if (improved) {
                set_detailed(e, e->out->fair_share.total);
            } else {
                struct ps_share fs;
                if (e->share_known)
                    fs = e->out->fair_share.total;
                else
                    element_value_at(prev ? &prev[i] : NULL, e, e->suggestion, fs.v);
                set_detailed(e, fs);
            }
        } else if (improved) {
            compute_pool_improved(u, e);
        } else {
            compute_pool(u, e, prev);
        }
    }
}
