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
#include "core/fs_internal.h"
#include "core/plf_impl.h"

enum { DIM = PS_RES_COUNT };

static const double zero_vec[DIM] = {0};

/* ---- fair share by fit factor --------------------------------------------------------------- */

static void operation_fsbff(struct ps_fs_update *u, const struct fs_elem *e, struct ps_plf_buf *dst)
{
    const double *d = e->out->demand_share.v, *us = e->out->usage_share.v;
    ps_plf_buf_clear(dst, DIM);
    if (u->options->enable_step_function_for_gang_operations && e->in->is_gang) {
        /* A gang gets all of its demand or nothing: a step at fit factor 1. */
        ps_plf_push_segment(dst, 0.0, zero_vec, 1.0, zero_vec);
        ps_plf_push_segment(dst, 1.0, zero_vec, 1.0, d);
        ps_plf_push_segment(dst, 1.0, d, 2.0, d);
        return;
    }
    /* On [0, 1] every resource grows like f * max usage up to its own usage; on [1, 2] the share
     * goes linearly from the usage to the demand. */
    double max_usage = ps_share_max_component(e->out->usage_share);
    if (max_usage == 0.0) {
        ps_plf_push_segment(dst, 0.0, zero_vec, 1.0, zero_vec);
    } else {
        double sorted[DIM];
        memcpy(sorted, us, sizeof sorted);
        for (int a = 1; a < DIM; a++)
            for (int b = a; b > 0 && sorted[b] < sorted[b - 1]; b--) {
                double t = sorted[b];
                sorted[b] = sorted[b - 1];
                sorted[b - 1] = t;
            }
        ps_plf_add_point(dst, 0.0, zero_vec);
        double previous = 0.0;
        for (int k = 0; k < DIM; k++) {
            double f = sorted[k] / max_usage;
            if (f > previous) {
                struct ps_share v = ps_share_min(ps_share_fill(sorted[k]), e->out->usage_share);
                ps_plf_add_point(dst, f, v.v);
                previous = f;
            }
        }
    }
    ps_plf_push_segment(dst, 1.0, us, 2.0, d);
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

/* Children's FSBS scaled by weight / min weight and extended to [0, 1], into u->views. */
static int children_views(struct ps_fs_update *u, struct fs_elem *e)
{
    double min_weight = DBL_MAX;
    for (int k = 0; k < e->child_count; k++) {
        double w = u->el[u->children[e->first_child + k]].weight;
        if (w > FS_EPSILON && w < min_weight)
            min_weight = w;
    }
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
        ps_plf_extend(&u->b[2], &scaled, ps_plf_left_bound(&scaled), NULL, 1.0, NULL);
        /* The improved mode reads the children's functions again in the top-down pass. */
        struct ps_arena *arena = u->options->enable_improved_fair_share_by_fit_factor_computation
                                     ? &u->persistent : &u->scratch;
        u->views[k] = fs_commit(u, arena, ps_plf_buf_view(&u->b[2]));
        if (u->oom)
            return -1;
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

static void prepare_mffbs(struct ps_fs_update *u, struct fs_elem *e, const struct ps_plf *fsbff,
                          struct ps_plf *scratch_mffbs, bool fast)
{
    fast = fast && e->kind == PS_ELEM_OPERATION;
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
                    return;
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
            return;
        }
        if (!is_neutral(&c, top) || (r == DIM - 1 && used == 0))
            comps[used++] = c;
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
}

bool fs_element_fsbs(struct ps_fs_update *u, struct fs_elem *e, bool fast, struct ps_plf *out)
{
    ps_arena_reset(&u->scratch);
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
    prepare_mffbs(u, e, &fsbff, &mffbs, fast);
    if (u->oom || u->ctx.oom)
        return false;
    ps_plf_compose(&u->ctx, &u->b[4], &fsbff, mffbs.a ? &mffbs : &e->ig->mffbs);
    struct ps_plf composed = ps_plf_buf_view(&u->b[4]);
    ps_plf_compress(&u->b[5], &composed, FS_COMPRESS_EPSILON);
    *out = ps_plf_buf_view(&u->b[5]);
    return !u->oom && !u->ctx.oom;
}

static void prepare_element(struct ps_fs_update *u, int i)
{
    struct fs_elem *e = &u->el[i];
    struct ps_plf fsbs;
    if (!fs_element_fsbs(u, e, true, &fsbs))
        return;
    e->fsbs = fs_commit(u, &u->persistent, fsbs);
    e->prepared = !u->oom;
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
         * gang flag). */
        if (k >= 2) {
            const char *next = (const char *)&u->el[u->order[k - 2]];
            for (size_t off = 0; off < sizeof(struct fs_elem) + 63; off += 64)
                __builtin_prefetch(next + off);
        }
        if (k >= 1)
            __builtin_prefetch(&u->el[u->order[k - 1]].in->is_gang);
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
};

static bool children_fit(double f, void *arg)
{
    const struct fit_check *c = arg;
    const struct fs_elem *e = c->e;
    struct ps_share sum = ps_share_fill(0.0), v;
    for (int k = 0; k < e->child_count; k++) {
        const struct fs_elem *child = &c->u->el[c->u->children[e->first_child + k]];
        ps_plf_value_at(&child->fsbs, child_suggestion(c->u, e, k, f), v.v);
        if (c->record)
            child->out->fair_share.total = v;
        sum = ps_share_add(sum, v);
    }
    return ps_share_dominates(c->bound, sum);
}

/* ComputeAndSetFairShare(suggestion) of a pool or the root. */
static void compute_pool(struct ps_fs_update *u, struct fs_elem *e)
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
    /* MFFBS(suggestion) is usually right; precision may make the children's shares at it exceed
     * the pool's by more than epsilon, and then a slightly smaller fit factor is searched. */
    struct fit_check check = {u, e, ps_share_add(suggested, ps_share_fill(FS_EPSILON)), true};
    double f = ps_plf_scalar_at(&e->ig->mffbs, e->suggestion);
    /* When f fits, the children's shares at their suggestions are the ones just computed (the
     * same function at the same argument): they are kept for their own step. */
    bool known = children_fit(f, &check);
    if (!known) {
        check.record = false;
        f = ps_bisect_inverse_lower_bound(0.0, f, children_fit, &check);
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

static bool children_shares_fit(double f, void *arg)
{
    const struct fit_check *c = arg;
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
    struct fit_check check = {u, e, e->out->fair_share.total, false};
    double f = ps_bisect_inverse_lower_bound(0.0, e->ig->fsbff_right, children_shares_fit, &check);
    /* Negligible fit factors are zero, so that nothing tiny is handed out. */
    if (f < FS_EPSILON)
        f = 0.0;
    for (int k = 0; k < e->child_count; k++)
        child_share_at(u, e, k, f, u->el[u->children[e->first_child + k]].out->fair_share.total.v);
    set_detailed(e, e->out->fair_share.total);
}

void fs_compute_fair_shares(struct ps_fs_update *u)
{
    if (u->oom)
        return;
    bool improved = u->options->enable_improved_fair_share_by_fit_factor_computation;
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
                    ps_plf_value_at(&e->fsbs, e->suggestion, fs.v);
                set_detailed(e, fs);
            }
        } else if (improved) {
            compute_pool_improved(u, e);
        } else {
            compute_pool(u, e);
        }
    }
}
