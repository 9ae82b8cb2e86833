/* fair_share.c — one vector HDRF fair share update: validation, tree layout, cumulative
 * attributes, the pipeline of TFairShareUpdateExecutor::Run() and the outputs. */
#include "core/fair_share.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs_fast.h"
#include "core/merge_sort.h"
#include "core/fs_internal.h"

#define ARENA_BLOCK_BYTES ((size_t)256 << 10)
/* The scratch arena holds one element's temporaries (the scaled views of a pool's children):
 * usually a few KiB, so a whole MiB block would be mostly slack. Larger requests get blocks of
 * their own size. */
#define SCRATCH_BLOCK_BYTES ((size_t)256 << 10)

void ps_fs_options_init(struct ps_fs_options *options)
{
    memset(options, 0, sizeof *options);
    options->main_resource = PS_RES_CPU;
    options->integral_pool_capacity_saturation_period_ms = 86400000;
    options->integral_smooth_period_ms = 60000;
    options->relaxed_share_multiplier_limit = 3.0;
    options->enable_step_function_for_gang_operations = true;
    options->enable_improved_fair_share_by_fit_factor_computation = false;
    options->infer_weight_from_guarantees_share_multiplier = 0.0;
    options->should_distribute_free_volume_among_children = false;
}

void ps_fs_element_input_init(struct ps_fs_element_input *in, enum ps_element_kind kind,
                              int parent, const char *name)
{
    memset(in, 0, sizeof *in);
    in->kind = kind;
    in->parent = parent;
    in->name = name;
    in->weight = 1.0;
    in->weight_specified = false;
    in->max_share_ratio = 1.0;
    in->resource_limits = ps_resources_infinite();
    in->filter_limits = ps_resources_infinite();
    in->pool = -1;
}

void ps_fs_pool_input_init(struct ps_fs_pool_input *in)
{
    memset(in, 0, sizeof *in);
    in->mode = PS_MODE_FAIR_SHARE;
    in->fifo_sort_count = 0;
    in->guarantee_type = PS_GUARANTEE_NONE;
    in->relaxed_share_multiplier_limit = 0.0;
    in->can_accept_free_volume = true;
    in->should_distribute_free_volume_among_children = -1;
    in->enable_fair_share_truncation_in_fifo_pool = -1;
}

struct ps_fs_update *ps_fs_update_new(void)
{
    struct ps_fs_update *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    ps_arena_init(&u->persistent, ARENA_BLOCK_BYTES);
    ps_arena_init(&u->scratch, SCRATCH_BLOCK_BYTES);
    ps_plf_ctx_init(&u->ctx);
    for (int i = 0; i < 6; i++)
        ps_plf_buf_init(&u->b[i], 1, &u->oom);
    for (int i = 0; i < PS_RES_COUNT; i++)
        ps_plf_buf_init(&u->comp[i], 1, &u->oom);
    return u;
}

static void clear_alerts(struct ps_fs_update *u)
{
    u->alert_count = 0;
}

void ps_fs_update_free(struct ps_fs_update *u)
{
    if (!u)
        return;
    clear_alerts(u);
    free(u->alerts);
    free(u->el);
    free(u->integ);
    free(u->children);
    free(u->order);
    free(u->burst);
    free(u->relaxed);
    free(u->pool_elems);
    free(u->stack);
    free(u->dscratch);
    free(u->pool_seen);
    free(u->views);
    fs_memo_release(u);
    ps_arena_release(&u->persistent);
    ps_arena_release(&u->scratch);
    ps_plf_ctx_release(&u->ctx);
    for (int i = 0; i < 6; i++)
        ps_plf_buf_release(&u->b[i]);
    for (int i = 0; i < PS_RES_COUNT; i++)
        ps_plf_buf_release(&u->comp[i]);
    free(u);
}

static int64_t buf_bytes(const struct ps_plf_buf *b)
{
    return (int64_t)(b->cap_d * sizeof(double));
}

void ps_fs_update_memory(const struct ps_fs_update *u, struct ps_fs_update_memory *m)
{
    m->elements = (int64_t)u->el_cap * (int64_t)sizeof(struct fs_elem);
    m->pools = (int64_t)u->integ_cap * (int64_t)sizeof(struct fs_integral);
    m->indexes = (int64_t)u->el_cap * 3 * (int64_t)sizeof(int) + (int64_t)u->pool_cap * 3 * (int64_t)sizeof(int) +
                 (int64_t)u->views_cap * (int64_t)(sizeof(struct ps_plf) + sizeof(double)) + u->pool_seen_cap +
                 (int64_t)u->alert_cap * FS_ALERT_BYTES;
    m->functions = (int64_t)ps_arena_footprint(&u->persistent);
    m->scratch = (int64_t)ps_arena_footprint(&u->scratch);
    int64_t b = 0;
    for (int i = 0; i < 6; i++)
        b += buf_bytes(&u->b[i]);
    for (int i = 0; i < PS_RES_COUNT; i++)
        b += buf_bytes(&u->comp[i]);
    const struct ps_plf_ctx *c = &u->ctx;
    b += (int64_t)(c->pts_cap + c->tmp_cap + c->pairs_cap) * (int64_t)sizeof(double) +
         (int64_t)c->cursors_cap * (int64_t)sizeof(int);   /* plus the summation readers, a few KiB */
    m->builders = b;
    m->memo = fs_memo_bytes(u);
    m->total = m->elements + m->pools + m->indexes + m->functions + m->scratch + m->builders + m->memo;
}

int ps_fs_update_alert_count(const struct ps_fs_update *u)
{
    return u->alert_count;
}

const char *ps_fs_update_alert(const struct ps_fs_update *u, int index)
{
    if (index < 0 || index >= u->alert_count)
        return NULL;
    return u->alerts[index];
}

void fs_add_alert(struct ps_fs_update *u, const char *fmt, ...)
{
    if (u->alert_count >= FS_MAX_ALERTS)
        return;
    if (u->alert_count == u->alert_cap) {
        int cap = u->alert_cap ? 2 * u->alert_cap : 4;
        char(*a)[FS_ALERT_BYTES] = realloc(u->alerts, (size_t)cap * sizeof *a);
        if (!a) {
            u->oom = true;
            return;
        }
        u->alerts = a;
        u->alert_cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->alerts[u->alert_count], FS_ALERT_BYTES, fmt, ap);
    va_end(ap);
    u->alert_count++;
}

struct ps_plf fs_commit(struct ps_fs_update *u, struct ps_arena *arena, struct ps_plf src)
{
    struct ps_plf f = {NULL, 0, src.dim};
    if (src.n < 2) {
        u->oom = true;  /* an empty function only comes out of a failed allocation */
        return f;
    }
    size_t bytes = (size_t)src.n * (size_t)(src.dim + 1) * sizeof(double);
    double *a = ps_arena_alloc(arena, bytes);
    if (!a) {
        u->oom = true;
        return f;
    }
    memcpy(a, src.a, bytes);
    f.a = a;
    f.n = src.n;
    return f;
}

/* ---- validation ---------------------------------------------------------------------------- */

static const char *elem_name(const struct ps_fs_element_input *in)
{
    return in->name ? in->name : "<unnamed>";
}

static bool bad_resources(const struct ps_resources *r)
{
    int64_t any = 0;   /* the sign bits of all, without a branch each */
    for (int i = 0; i < PS_RES_COUNT; i++)
        any |= r->v[i];
    return any < 0;
}

static int validate_element(const struct ps_fs_element *elems, int i, const struct ps_fs_pool *pools,
                            int pool_count, struct ps_error *err)
{
    const struct ps_fs_element_input *in = &elems[i].in;
    const char *name = elem_name(in);
    if (i == 0) {
        if (in->kind != PS_ELEM_ROOT || in->parent != -1)
            return ps_error_set(err, PS_EINVAL,
                                "element 0 (%s) must be the root: kind root and parent -1", name);
    } else {
        if (in->kind != PS_ELEM_POOL && in->kind != PS_ELEM_OPERATION)
            return ps_error_set(err, PS_EINVAL, "element %d (%s): kind must be pool or operation", i, name);
        if (in->parent < 0 || in->parent >= i)
            return ps_error_set(err, PS_EINVAL,
                                "element %d (%s): parent %d must come before the element", i, name, in->parent);
        const struct ps_fs_element_input *p = &elems[in->parent].in;
        if (p->kind == PS_ELEM_OPERATION)
            return ps_error_set(err, PS_EINVAL, "element %d (%s): parent %s is an operation", i, name,
                                elem_name(p));
        /* the parent's pool entry was checked with the parent */
        if (pools[p->pool].in.mode == PS_MODE_FIFO && in->kind != PS_ELEM_OPERATION)
            return ps_error_set(err, PS_EINVAL, "pool %s: a fifo pool (%s) may only contain operations",
                                name, elem_name(p));
        if (!(isfinite(in->weight) && in->weight > 0))
            return ps_error_set(err, PS_EINVAL, "element %s: weight must be a positive number, got %g",
                                name, in->weight);
        if (!(in->max_share_ratio >= 0.0 && in->max_share_ratio <= 1.0))
            return ps_error_set(err, PS_EINVAL, "element %s: max_share_ratio must be in [0, 1], got %g",
                                name, in->max_share_ratio);
        if (bad_resources(&in->resource_limits) || bad_resources(&in->filter_limits))
            return ps_error_set(err, PS_EINVAL, "element %s: resource_limits must not be negative", name);
    }
    if (in->kind == PS_ELEM_OPERATION) {
        if (bad_resources(&in->demand) || bad_resources(&in->usage))
            return ps_error_set(err, PS_EINVAL, "operation %s: demand and usage must not be negative", name);
        for (int r = 0; r < PS_RES_COUNT; r++)
            if ((in->strong_guarantee.set >> r & 1) && in->strong_guarantee.r.v[r] < 0)
                return ps_error_set(err, PS_EINVAL, "operation %s: strong_guarantee_resources/%s is negative",
                                    name, ps_resource_name(r));
        return 0;
    }
    if (in->pool < 0 || in->pool >= pool_count)
        return ps_error_set(err, PS_EINVAL, "%s %s: pool index %d is outside the pools array (%d entries)",
                            i == 0 ? "root" : "pool", name, in->pool, pool_count);
    const struct ps_fs_pool_input *pin = &pools[in->pool].in;
    if (pin->mode != PS_MODE_FAIR_SHARE && pin->mode != PS_MODE_FIFO)
        return ps_error_set(err, PS_EINVAL, "pool %s: mode must be fair_share or fifo", name);
    if (pin->fifo_sort_count < 0 || pin->fifo_sort_count > PS_FIFO_PARAM_MAX)
        return ps_error_set(err, PS_EINVAL, "pool %s: fifo_sort_parameters has %d entries", name,
                            pin->fifo_sort_count);
    for (int k = 0; k < pin->fifo_sort_count; k++)
        if ((int)pin->fifo_sort[k] < 0 || (int)pin->fifo_sort[k] > PS_FIFO_PENDING_JOB_COUNT)
            return ps_error_set(err, PS_EINVAL, "pool %s: fifo_sort_parameters has an unknown value", name);
    if (pin->guarantee_type != PS_GUARANTEE_NONE && pin->guarantee_type != PS_GUARANTEE_BURST &&
        pin->guarantee_type != PS_GUARANTEE_RELAXED)
        return ps_error_set(err, PS_EINVAL, "pool %s: integral_guarantees/guarantee_type is unknown", name);
    if (pin->relaxed_share_multiplier_limit != 0.0 &&
        !(pin->relaxed_share_multiplier_limit >= 1.0 && pin->relaxed_share_multiplier_limit <= 10.0))
        return ps_error_set(err, PS_EINVAL,
                            "pool %s: integral_guarantees/relaxed_share_multiplier_limit must be in [1, 10], got %g",
                            name, pin->relaxed_share_multiplier_limit);
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if ((pin->strong_guarantee.set >> r & 1) && pin->strong_guarantee.r.v[r] < 0)
            return ps_error_set(err, PS_EINVAL, "pool %s: strong_guarantee_resources/%s is negative",
                                name, ps_resource_name(r));
        if ((pin->resource_flow.set >> r & 1) && pin->resource_flow.r.v[r] < 0)
            return ps_error_set(err, PS_EINVAL, "pool %s: integral_guarantees/resource_flow/%s is negative",
                                name, ps_resource_name(r));
        if ((pin->burst_guarantee.set >> r & 1) && pin->burst_guarantee.r.v[r] < 0)
            return ps_error_set(err, PS_EINVAL,
                                "pool %s: integral_guarantees/burst_guarantee_resources/%s is negative", name,
                                ps_resource_name(r));
        if (!(isfinite(pin->accumulated_volume.v[r]) && pin->accumulated_volume.v[r] >= 0))
            return ps_error_set(err, PS_EINVAL, "pool %s: accumulated_resource_volume/%s must be a non-negative number",
                                name, ps_resource_name(r));
    }
    if (!(isfinite(pin->last_integral_share_ratio) && pin->last_integral_share_ratio >= 0))
        return ps_error_set(err, PS_EINVAL, "pool %s: last integral share ratio must be a non-negative number", name);
    return 0;
}

static int validate(const struct ps_fs_element *elems, int count, const struct ps_fs_pool *pools,
                    int pool_count, const struct ps_fs_options *o,
                    const struct ps_fs_input *input, struct ps_error *err)
{
    if (!elems || count < 1)
        return ps_error_set(err, PS_EINVAL, "the tree needs at least the root element");
    if (pool_count < 0 || (pool_count > 0 && !pools))
        return ps_error_set(err, PS_EINVAL, "the pools array is missing");
    if (o->main_resource < 0 || o->main_resource >= PS_RES_COUNT)
        return ps_error_set(err, PS_EINVAL, "main_resource %d is not a resource", o->main_resource);
    if (o->integral_pool_capacity_saturation_period_ms <= 0)
        return ps_error_set(err, PS_EINVAL, "integral_guarantees/pool_capacity_saturation_period must be positive");
    if (o->integral_smooth_period_ms <= 0)
        return ps_error_set(err, PS_EINVAL, "integral_guarantees/smooth_period must be positive");
    if (!(o->relaxed_share_multiplier_limit >= 1.0 && o->relaxed_share_multiplier_limit <= 10.0))
        return ps_error_set(err, PS_EINVAL, "integral_guarantees/relaxed_share_multiplier_limit must be in [1, 10], got %g",
                            o->relaxed_share_multiplier_limit);
    if (o->infer_weight_from_guarantees_share_multiplier != 0.0 &&
        !(isfinite(o->infer_weight_from_guarantees_share_multiplier) &&
          o->infer_weight_from_guarantees_share_multiplier >= 1.0))
        return ps_error_set(err, PS_EINVAL, "infer_weight_from_guarantees_share_multiplier must be >= 1, got %g",
                            o->infer_weight_from_guarantees_share_multiplier);
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (input->total.v[r] < 0 || input->total.v[r] >= PS_RES_INFINITE)
            return ps_error_set(err, PS_EINVAL, "total_resources/%s must be finite and not negative",
                                ps_resource_name(r));
    for (int i = 0; i < count; i++) {
        /* the input spans 4 cache lines of each 9-line element: fetch a few elements ahead */
        if (i + 4 < count)
            for (size_t off = 0; off < sizeof elems[i].in; off += 64)
                __builtin_prefetch((const char *)&elems[i + 4].in + off);
        int rc = validate_element(elems, i, pools, pool_count, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- layout --------------------------------------------------------------------------------- */

static bool grow_ints(int **p, int n)
{
    int *q = realloc(*p, (size_t)(n > 0 ? n : 1) * sizeof *q);
    if (!q)
        return false;
    *p = q;
    return true;
}

static bool grow_doubles(double **p, int n)
{
    double *q = realloc(*p, (size_t)(n > 0 ? n : 1) * sizeof *q);
    if (!q)
        return false;
    *p = q;
    return true;
}

/* Arrays by what they hold: per element (children, orders, stack), per pool and the root (the
 * integral side table, burst and relaxed lists), per child of one pool or per pool (views of
 * the children's functions, doubles such as strong guarantee parts, volume keys and relaxed
 * weights). Sizing the last two by the widest pool instead of the tree keeps them small. */
static int ensure_capacity(struct ps_fs_update *u, const struct ps_fs_element *elems, int count, int pool_count)
{
    if (pool_count > u->pool_seen_cap) {
        unsigned char *seen = realloc(u->pool_seen, (size_t)pool_count);
        if (!seen)
            return PS_ENOMEM;
        u->pool_seen = seen;
        u->pool_seen_cap = pool_count;
    }
    if (count > u->el_cap) {
        struct fs_elem *el = realloc(u->el, (size_t)count * sizeof *el);
        if (!el)
            return PS_ENOMEM;
        u->el = el;
        if (!grow_ints(&u->children, count) || !grow_ints(&u->order, count) || !grow_ints(&u->stack, count))
            return PS_ENOMEM;
        u->el_cap = count;
    }
    /* Pools and the widest pool, counting children in the (still unused) children array. */
    int pools = 0, widest = 0;
    for (int i = 0; i < count; i++) {
        u->children[i] = 0;
        pools += elems[i].in.kind != PS_ELEM_OPERATION;
    }
    for (int i = 1; i < count; i++)
        if (++u->children[elems[i].in.parent] > widest)
            widest = u->children[elems[i].in.parent];
    if (pools + 1 > u->integ_cap) {
        struct fs_integral *ig = realloc(u->integ, (size_t)(pools + 1) * sizeof *ig);
        if (!ig)
            return PS_ENOMEM;
        u->integ = ig;
        u->integ_cap = pools + 1;   /* entry 0: the operations' zero state */
    }
    if (pools > u->pool_cap) {
        if (!grow_ints(&u->burst, pools) || !grow_ints(&u->relaxed, pools) || !grow_ints(&u->pool_elems, pools))
            return PS_ENOMEM;
        u->pool_cap = pools;
    }
    int wide = widest > pools ? widest : pools;
    if (wide > u->views_cap) {
        struct ps_plf *v = realloc(u->views, (size_t)wide * sizeof *v);
        if (!v)
            return PS_ENOMEM;
        u->views = v;
        if (!grow_doubles(&u->dscratch, wide))
            return PS_ENOMEM;
        u->views_cap = wide;
    }
    return 0;
}

/* Every pool and the root names its own entry of the pools array (indexes were validated). */
static int check_pool_entries(struct ps_fs_update *u, const struct ps_fs_element *elems, int count,
                              int pool_count, struct ps_error *err)
{
    if (pool_count > 0)
        memset(u->pool_seen, 0, (size_t)pool_count);
    for (int i = 0; i < count; i++) {
        if (elems[i].in.kind == PS_ELEM_OPERATION)
            continue;
        int k = elems[i].in.pool;
        if (u->pool_seen[k])
            return ps_error_set(err, PS_EINVAL, "pool %s: pool index %d is named by another pool",
                                elem_name(&elems[i].in), k);
        u->pool_seen[k] = 1;
    }
    return 0;
}

/* Children lists in array order (a counting sort by parent). */
static void build_children(struct ps_fs_update *u)
{
    int n = u->count;
    for (int i = 0; i < n; i++)
        u->el[i].child_count = 0;
    for (int i = 1; i < n; i++)
        u->el[u->el[i].parent].child_count++;
    int pos = 0;
    for (int i = 0; i < n; i++) {
        u->el[i].first_child = pos;
        pos += u->el[i].child_count;
        u->el[i].child_count = 0;
    }
    for (int i = 1; i < n; i++) {
        struct fs_elem *p = &u->el[u->el[i].parent];
        u->children[p->first_child + p->child_count++] = i;
    }
}

/* FIFO order (upstream HasHigherPriorityInFifoMode), with the element index as the last key. */
static bool fifo_before(const struct ps_fs_update *u, const struct ps_fs_pool_input *pool, int a, int b)
{
    static const enum ps_fifo_param defaults[] = {PS_FIFO_WEIGHT, PS_FIFO_START_TIME};
    const enum ps_fifo_param *params = pool->fifo_sort_count ? pool->fifo_sort : defaults;
    int count = pool->fifo_sort_count ? pool->fifo_sort_count : 2;
    const struct ps_fs_element_input *x = u->el[a].in, *y = u->el[b].in;
    for (int k = 0; k < count; k++) {
        switch (params[k]) {
        case PS_FIFO_WEIGHT:
            if (u->el[a].weight != u->el[b].weight)
                return u->el[a].weight > u->el[b].weight;
            break;
        case PS_FIFO_START_TIME:
            if (x->start_time_ms != y->start_time_ms)
                return x->start_time_ms < y->start_time_ms;
            break;
        case PS_FIFO_PENDING_JOB_COUNT:
            if (x->pending_job_count != y->pending_job_count)
                return x->pending_job_count < y->pending_job_count;
            break;
        }
    }
    return a < b;
}

struct fifo_order {
    const struct ps_fs_update *u;
    const struct ps_fs_pool_input *pool;
};

static bool child_before(const struct fifo_order *o, const int *a, const int *b)
{
    return fifo_before(o->u, o->pool, *a, *b);
}
PS_MERGE_SORT_DEFINE(sort_children, int, const struct fifo_order *, child_before)

/* A FIFO pool's children in its order (the stack array is the scratch). */
static void sort_fifo(struct ps_fs_update *u, int pool)
{
    struct fs_elem *p = &u->el[pool];
    int n = p->child_count;
    int *xs = u->children + p->first_child;
    struct fifo_order order = {u, fs_pool_in(p)};
    sort_children(xs, u->stack, n, &order);
    for (int k = 0; k < n; k++)
        u->el[xs[k]].out->fifo_index = k;
}

static double operation_weight(const struct ps_fs_element_input *in)
{
    /* An operation has no guarantees, so an inferred weight is always 1. */
    return fs_clamp_weight(in->weight_specified ? in->weight : 1.0);
}

/* Componentwise min, max and sum of resources in place, as ps_resources_min, _max and _add
 * compute them, inlined for the per-element passes (the library's take the vectors by value). */
static inline void res_min_into(struct ps_resources *a, const struct ps_resources *b)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        a->v[r] = b->v[r] < a->v[r] ? b->v[r] : a->v[r];
}

static inline void res_max_into(struct ps_resources *a, const struct ps_resources *b)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        a->v[r] = b->v[r] > a->v[r] ? b->v[r] : a->v[r];
}

static inline void res_add_into(struct ps_resources *a, const struct ps_resources *b)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        a->v[r] += b->v[r];
}

/* The effective limits of a pool or an operation: specified and filter limits, the max share
 * ratio, the total. */
static struct ps_resources effective_limits(const struct ps_fs_element_input *in, const struct ps_resources *total)
{
    struct ps_resources l = in->resource_limits;
    res_min_into(&l, &in->filter_limits);
    if (in->max_share_ratio < 1.0) {
        struct ps_resources share;
        for (int r = 0; r < PS_RES_COUNT; r++)
            share.v[r] = (int64_t)round((double)total->v[r] * in->max_share_ratio);
        res_min_into(&l, &share);
    }
    res_min_into(&l, total);
    return l;
}

/* An operation's outputs that follow from its own input (limits, shares, dominant resource,
 * weight), written while the input is at hand: the caller's elements are large and scattered
 * over the cache, and operations are 90% of them, so every further pass over them costs. Its
 * usage and demand go to its parent's sums here (integer sums: the order does not matter). */
/* ---- operations' inputs kept from the last run (memo runs, struct fs_op_prev) ------------- */

_Static_assert(offsetof(struct ps_fs_element_input, filter_limits) ==
                       offsetof(struct ps_fs_element_input, resource_limits) + sizeof(struct ps_resources) &&
                   offsetof(struct ps_fs_element_input, demand) ==
                       offsetof(struct ps_fs_element_input, resource_limits) + 2 * sizeof(struct ps_resources) &&
                   offsetof(struct ps_fs_element_input, usage) ==
                       offsetof(struct ps_fs_element_input, resource_limits) + 3 * sizeof(struct ps_resources),
               "an operation's limits, filter limits, demand and usage are contiguous");

static uint64_t double_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* Sizes op_prev for this run's elements and starts a new epoch when what every operation's
 * limits, shares and memo key depend on besides its own inputs changed: the total and the
 * gang option. Without the memo nothing is kept; elements past what memory allows are
 * computed. */
static void op_prev_begin(struct ps_fs_update *u)
{
    if (!u->memo_on)
        return;
    if (u->count > u->op_prev_cap) {
        struct fs_op_prev *p = realloc(u->op_prev, (size_t)u->count * sizeof *p);
        if (p) {   /* else the elements past the capacity are computed */
            memset(p + u->op_prev_cap, 0, (size_t)(u->count - u->op_prev_cap) * sizeof *p);
            u->op_prev = p;
            u->op_prev_cap = u->count;
        }
    }
    bool gang_step = u->options->enable_step_function_for_gang_operations;
    if (u->op_prev_epoch == 0 || memcmp(&u->op_prev_total, &u->total, sizeof u->total) != 0 ||
        u->op_prev_gang_step != gang_step) {
        u->op_prev_epoch++;
        u->op_prev_total = u->total;
        u->op_prev_gang_step = gang_step;
    }
}

/* Whether the operation's inputs kept their bits since prev was stored in this epoch. */
static bool op_prev_kept(const struct ps_fs_update *u, const struct fs_op_prev *prev,
                         const struct ps_fs_element_input *in)
{
    enum { WORDS = 4 * PS_RES_COUNT };
    const int64_t *a = prev->in[0].v, *b = in->resource_limits.v;
    int64_t diff = 0;
    for (int k = 0; k < WORDS; k++)
        diff |= a[k] ^ b[k];
    return diff == 0 && prev->epoch == u->op_prev_epoch && prev->is_gang == in->is_gang &&
           prev->max_share_ratio == double_bits(in->max_share_ratio);
}

static void op_prev_store(const struct ps_fs_update *u, struct fs_op_prev *prev, const struct ps_fs_element_input *in,
                          const struct ps_fs_element_output *out)
{
    memcpy(prev->in, &in->resource_limits, sizeof prev->in);
    prev->epoch = u->op_prev_epoch;
    prev->max_share_ratio = double_bits(in->max_share_ratio);
    prev->is_gang = in->is_gang;
    prev->memo_ok = false;   /* until the memo finds or stores this key at this index */
    prev->dominant = out->dominant_resource;
    prev->resource_limits = out->resource_limits;
    prev->usage_share = out->usage_share;
    prev->demand_share = out->demand_share;
    prev->limits_share = out->limits_share;
}

static void init_operation(struct ps_fs_update *u, const struct fs_total_divisors *t, struct fs_elem *e,
                           struct fs_op_prev *prev)
{
    const struct ps_resources *total = &u->total;
    const struct ps_fs_element_input *in = e->in;
    struct ps_fs_element_output *out = e->out;
    struct ps_resources usage = in->usage, demand = in->demand;
    res_max_into(&demand, &usage);
    if (prev && op_prev_kept(u, prev, in)) {
        out->resource_limits = prev->resource_limits;
        out->usage_share = prev->usage_share;
        out->demand_share = prev->demand_share;
        out->limits_share = prev->limits_share;
        out->dominant_resource = prev->dominant;
        e->memo_kept = prev->memo_ok;
    } else {
        out->resource_limits = effective_limits(in, total);
        fs_operation_shares(t, &usage, &demand, &out->resource_limits, &out->usage_share, &out->demand_share,
                            &out->limits_share);
        out->limits_share = ps_share_min(out->limits_share, ps_share_fill(1.0));  /* best allocation share */
        out->dominant_resource = ps_resources_is_zero(usage) ? fs_dominant_of_share(t, &out->demand_share)
                                                             : fs_dominant_of_share(t, &out->usage_share);
        if (prev)
            op_prev_store(u, prev, in, out);
    }
    out->weight = e->weight;
    struct fs_integral *p = u->el[e->parent].ig;
    res_add_into(&p->usage, &usage);
    res_add_into(&p->demand, &demand);
}

enum { PREFETCH_ELEMENTS = 4 };

static void init_elements(struct ps_fs_update *u, struct ps_fs_element *elems, struct ps_fs_pool *pools)
{
    const struct ps_fs_options *o = u->options;
    struct fs_total_divisors t;
    fs_total_divisors_init(&t, &u->total);
    memset(&u->integ[0], 0, sizeof u->integ[0]);
    op_prev_begin(u);
    int prev_cap = u->memo_on ? u->op_prev_cap : 0;
    int next_ig = 1;
    u->pool_elem_count = 0;
    for (int i = 0; i < u->count; i++) {
        /* The caller's elements span 9 cache lines each, more than the hardware prefetcher
         * runs ahead: fetch a few elements ahead, the output for writing. */
        if (i + PREFETCH_ELEMENTS < u->count) {
            const char *ahead = (const char *)&elems[i + PREFETCH_ELEMENTS];
            /* (The read/write argument must be a constant for clang.) */
            for (size_t off = 0; off < sizeof elems[i]; off += 64) {
                if (off >= offsetof(struct ps_fs_element, out))
                    __builtin_prefetch(ahead + off, 1);
                else
                    __builtin_prefetch(ahead + off, 0);
            }
        }
        struct fs_elem *e = &u->el[i];
        const struct ps_fs_element_input *in = &elems[i].in;
        memset(e, 0, sizeof *e);
        /* An operation's other outputs are all written below (init_operation) */
        if (in->kind == PS_ELEM_OPERATION)
            memset(&elems[i].out.fair_share, 0, sizeof elems[i].out.fair_share);
        else
            memset(&elems[i].out, 0, sizeof elems[i].out);
        e->in = in;
        e->out = &elems[i].out;
        e->out->fifo_index = -1;
        e->kind = in->kind;
        e->parent = in->parent;
        e->is_pool = in->kind == PS_ELEM_POOL;
        e->weight = in->kind == PS_ELEM_OPERATION ? operation_weight(in) : 1.0;
        if (in->kind == PS_ELEM_OPERATION) {
            e->ig = &u->integ[0];
            e->has_guarantee = in->strong_guarantee.set != 0;
            init_operation(u, &t, e, i < prev_cap ? &u->op_prev[i] : NULL);
            continue;
        }
        if (i < prev_cap)
            u->op_prev[i].epoch = 0;
        u->pool_elems[u->pool_elem_count++] = i;
        struct ps_fs_pool *pool = &pools[in->pool];
        const struct ps_fs_pool_input *pin = &pool->in;
        memset(&pool->out, 0, sizeof pool->out);
        struct fs_integral *ig = &u->integ[next_ig++];
        memset(ig, 0, sizeof *ig);
        ig->pool = pool;
        e->ig = ig;
        e->out->resource_limits = i == 0 ? u->total : effective_limits(in, &u->total);
        e->is_fifo = pin->mode == PS_MODE_FIFO;
        e->gtype = e->is_pool ? pin->guarantee_type : PS_GUARANTEE_NONE;
        if (e->is_pool) {
            fs_volume_from_input(&ig->volume, &pin->accumulated_volume);
            ig->last_share_ratio = pin->last_integral_share_ratio;
            ig->can_accept_free_volume = pin->can_accept_free_volume;
            ig->distributes_free_volume = pin->should_distribute_free_volume_among_children < 0
                                              ? o->should_distribute_free_volume_among_children
                                              : pin->should_distribute_free_volume_among_children != 0;
        }
    }
}

/* Demand and usage of pools: the operations' parts were added by init_operation, the pools'
 * sums go up children first. */
static void compute_resources(struct ps_fs_update *u)
{
    for (int k = u->pool_elem_count - 1; k > 0; k--) {
        struct fs_elem *e = &u->el[u->pool_elems[k]];
        struct fs_integral *p = u->el[e->parent].ig;
        p->usage = ps_resources_add(p->usage, e->ig->usage);
        p->demand = ps_resources_add(p->demand, e->ig->demand);
    }
}

/* Pre-order of the tree, then the burst and relaxed pools in that order (InitIntegralPoolLists). */
static void init_integral_lists(struct ps_fs_update *u)
{
    int top = 0, n = 0;
    u->stack[top++] = 0;
    while (top > 0) {
        int i = u->stack[--top];
        u->order[n++] = i;
        const struct fs_elem *e = &u->el[i];
        for (int k = e->child_count - 1; k >= 0; k--)
            u->stack[top++] = u->children[e->first_child + k];
    }
    u->burst_count = u->relaxed_count = 0;
    /* Upstream prepares an integral pool's whole subtree while computing its share and resets
     * only the pool itself, so below another integral pool the functions in between go stale
     * (its scheduler can even abort on the result). Computed the same way here, but said. */
    for (int k = 1; k < n; k++) {
        const struct fs_elem *e = &u->el[u->order[k]];
        if (e->gtype == PS_GUARANTEE_NONE)
            continue;
        for (int a = e->parent; a > 0; a = u->el[a].parent)
            if (u->el[a].gtype != PS_GUARANTEE_NONE) {
                fs_add_alert(u, "integral pool %s is nested in integral pool %s; upstream's shares for "
                                "nested integral pools are not consistent",
                             e->in->name ? e->in->name : "<unnamed>",
                             u->el[a].in->name ? u->el[a].in->name : "<unnamed>");
                break;
            }
    }
    for (int k = 0; k < n; k++) {
        const struct fs_elem *e = &u->el[u->order[k]];
        if (e->gtype == PS_GUARANTEE_BURST)
            u->burst[u->burst_count++] = u->order[k];
        else if (e->gtype == PS_GUARANTEE_RELAXED)
            u->relaxed[u->relaxed_count++] = u->order[k];
    }
}

static double max_resource_ratio(const struct ps_resources_opt *config, const struct ps_resources *total)
{
    double result = 0.0;
    for (int r = 0; r < PS_RES_COUNT; r++) {
        double value = (config->set >> r & 1) ? ps_res_get(&config->r, r) : 0.0;
        double limit = ps_res_get(total, r);
        if (limit > 0.0 && value / limit > result)
            result = value / limit;
    }
    return result;
}

/* UpdateCumulativeAttributes: shares, ratios and the FIFO order, children before parents. */
static void update_cumulative_attributes(struct ps_fs_update *u)
{
    const struct ps_resources *total = &u->total;
    struct fs_total_divisors t;
    fs_total_divisors_init(&t, total);
    /* (operations have no integral guarantees: the zero entry) */
    for (int k = 0; k < u->pool_elem_count; k++) {
        struct fs_elem *e = &u->el[u->pool_elems[k]];
        struct fs_integral *ig = e->ig;
        if (e->is_pool && e->gtype != PS_GUARANTEE_NONE) {
            ig->burst_ratio = max_resource_ratio(&fs_pool_in(e)->burst_guarantee, total);
            ig->flow_ratio = max_resource_ratio(&fs_pool_in(e)->resource_flow, total);
        }
        ig->specified_burst_ratio = ig->burst_ratio;
        ig->total_burst_ratio = ig->burst_ratio;
        ig->total_flow_ratio = ig->flow_ratio;
    }
    for (int k = u->pool_elem_count - 1; k >= 0; k--) {   /* operations: see init_operation */
        int i = u->pool_elems[k];
        struct fs_elem *e = &u->el[i];
        struct ps_fs_element_output *out = e->out;
        e->ig->sg_share = ps_resources_to_share(&e->ig->inferred_sg, total, 0.0, 0.0);
        const struct ps_resources usage = e->ig->usage, demand = e->ig->demand;
        fs_operation_shares(&t, &usage, &demand, &out->resource_limits, &out->usage_share, &out->demand_share,
                            &out->limits_share);
        out->dominant_resource = ps_resources_is_zero(usage) ? fs_dominant_of_share(&t, &out->demand_share)
                                                             : fs_dominant_of_share(&t, &out->usage_share);
        if (e->is_fifo)
            sort_fifo(u, i);
    }
    /* Total ratios: own plus the children's, summed in children order like upstream. */
    for (int q = u->pool_elem_count - 1; q >= 0; q--) {
        struct fs_elem *e = &u->el[u->pool_elems[q]];
        double burst = e->ig->burst_ratio, flow = e->ig->flow_ratio;
        for (int k = 0; k < e->child_count; k++) {
            const struct fs_elem *c = &u->el[u->children[e->first_child + k]];
            flow += c->ig->total_flow_ratio;
            burst += c->ig->total_burst_ratio;
        }
        e->ig->total_burst_ratio = burst;
        e->ig->total_flow_ratio = flow;
    }
    struct fs_elem *root = &u->el[0];
    root->ig->sg_share = ps_share_fill(0.0);
    for (int k = 0; k < root->child_count; k++)
        root->ig->sg_share = ps_share_add(root->ig->sg_share, u->el[u->children[root->first_child + k]].ig->sg_share);
}

/* Root fair share = the sum of its children (UpdateRootFairShare). */
static void update_root_fair_share(struct ps_fs_update *u)
{
    struct fs_elem *root = &u->el[0];
    struct ps_share used_sg = ps_share_fill(0.0), total = ps_share_fill(0.0);
    for (int k = 0; k < root->child_count; k++) {
        const struct fs_elem *c = &u->el[u->children[root->first_child + k]];
        used_sg = ps_share_add(used_sg, c->out->fair_share.strong_guarantee);
        total = ps_share_add(total, c->out->fair_share.total);
    }
    struct ps_detailed_fair_share *fs = &root->out->fair_share;
    fs->total = total;
    fs->strong_guarantee = ps_share_min(total, used_sg);
    fs->integral_guarantee = ps_share_min(ps_share_sub(total, fs->strong_guarantee), root->ig->proposed);
    fs->weight_proportional = ps_share_sub(ps_share_sub(total, fs->strong_guarantee), fs->integral_guarantee);
}

/* A detailed fair share cut to total (<= its old total): strong guarantee first, then integral,
 * the rest weight proportional. */
static void set_total(struct ps_detailed_fair_share *fs, struct ps_share total)
{
    fs->total = total;
    fs->strong_guarantee = ps_share_min(fs->strong_guarantee, total);
    struct ps_share rest = ps_share_sub(total, fs->strong_guarantee);
    fs->integral_guarantee = ps_share_min(fs->integral_guarantee, rest);
    fs->weight_proportional = ps_share_sub(rest, fs->integral_guarantee);
}

/* Upstream's TruncateFairShareInFifoPools (fair_share.h, ps_fs_options); returns what the
 * subtree of element i lost. */
static bool truncates(const struct ps_fs_update *u, const struct fs_elem *e)
{
    signed char own = e->ig->pool->in.enable_fair_share_truncation_in_fifo_pool;
    return e->is_fifo && (own < 0 ? u->options->enable_fair_share_truncation_in_fifo_pool : own != 0);
}

static struct ps_share truncate_fifo(struct ps_fs_update *u, int i)
{
    struct fs_elem *e = &u->el[i];
    struct ps_share lost = ps_share_fill(0.0);
    if (e->kind == PS_ELEM_OPERATION)
        return lost;
    bool enabled = truncates(u, e);
    for (int k = 0; k < e->child_count; k++) {
        struct fs_elem *c = &u->el[u->children[e->first_child + k]];
        struct ps_share fair = c->out->fair_share.total;
        if (enabled && c->kind == PS_ELEM_OPERATION && c->in->is_gang &&
            ps_share_max_component(fair) > 0 &&
            !ps_share_dominates(ps_share_add(fair, ps_share_fill(FS_EPSILON)), c->out->demand_share)) {
            lost = ps_share_add(lost, fair);
            set_total(&c->out->fair_share, ps_share_fill(0.0));
            continue;
        }
        if (c->kind == PS_ELEM_OPERATION)
            continue;   /* loses nothing below; lost (never -0) + 0 is lost */
        lost = ps_share_add(lost, truncate_fifo(u, u->children[e->first_child + k]));
    }
    if (ps_share_max_component(lost) > 0)
        set_total(&e->out->fair_share,
                  ps_share_max(ps_share_sub(e->out->fair_share.total, lost), ps_share_fill(0.0)));
    return lost;
}

/* truncate_fifo of the tree: nothing is lost (and nothing changes) without a pool that
 * truncates, the usual case, so the walk over every element is skipped then. */
static void truncate_fifo_pools(struct ps_fs_update *u)
{
    for (int k = 0; k < u->pool_elem_count; k++)
        if (truncates(u, &u->el[u->pool_elems[k]])) {
            truncate_fifo(u, 0);
            return;
        }
}

static void write_outputs(struct ps_fs_update *u)
{
    const struct ps_resources *total = &u->total;
    /* (operations have no guarantees: the zeros of init_elements; the weight was written there) */
    for (int k = 0; k < u->pool_elem_count; k++) {
        struct fs_elem *e = &u->el[u->pool_elems[k]];
        struct ps_fs_element_output *out = e->out;
        /* usage, demand and limits shares and the limits were written in place */
        out->weight = e->weight;
        const struct fs_integral *ig = e->ig;
        struct ps_fs_pool_output *pout = &ig->pool->out;
        pout->strong_guarantee_share = ig->sg_share;
        pout->proposed_integral_share = ig->proposed;
        pout->inferred_strong_guarantee = ig->inferred_sg;
        pout->total_burst_ratio = ig->total_burst_ratio;
        pout->total_resource_flow_ratio = ig->total_flow_ratio;
        if (!e->is_pool || e->gtype == PS_GUARANTEE_NONE)
            continue;
        pout->specified_burst_ratio = ig->specified_burst_ratio;
        pout->specified_resource_flow_ratio = ig->flow_ratio;
        pout->accumulated_resource_ratio_volume = fs_volume_min_ratio(&e->ig->volume, total);
        fs_volume_to_output(&e->ig->volume, &pout->accumulated_resource_volume);
        struct fs_volume capacity;
        fs_volume_capacity(u, ig->flow_ratio, &capacity);
        fs_volume_to_output(&capacity, &pout->integral_pool_capacity);
        /* Orchid: how long the volume lasts at the burst rate net of the inflow (burst pools). */
        if (ig->specified_burst_ratio > ig->flow_ratio + FS_LARGE_EPSILON)
            pout->estimated_burst_usage_duration_seconds =
                pout->accumulated_resource_ratio_volume / (ig->specified_burst_ratio - ig->flow_ratio);
        /* Carry the integral state to the next update. */
        ig->pool->in.accumulated_volume = pout->accumulated_resource_volume;
        ig->pool->in.last_integral_share_ratio = ig->last_share_ratio;
    }
}

int ps_fs_update_run(struct ps_fs_update *u, struct ps_fs_element *elems, int count,
                     struct ps_fs_pool *pools, int pool_count, const struct ps_fs_options *options,
                     const struct ps_fs_input *input, struct ps_error *err)
{
    clear_alerts(u);
    int rc = validate(elems, count, pools, pool_count, options, input, err);
    if (rc)
        return rc;
    if (ensure_capacity(u, elems, count, pool_count))
        return ps_error_set(err, PS_ENOMEM, "out of memory for %d elements", count);
    rc = check_pool_entries(u, elems, count, pool_count, err);
    if (rc)
        return rc;
    u->options = options;
    u->input = input;
    u->total = input->total;
    u->count = count;
    u->oom = false;
    u->ctx.oom = false;
    ps_arena_reset(&u->persistent);
    ps_arena_reset(&u->scratch);
    fs_memo_begin(u);

    init_elements(u, elems, pools);
    build_children(u);
    compute_resources(u);

    fs_determine_inferred_strong_guarantees(u);
    init_integral_lists(u);
    update_cumulative_attributes(u);
    fs_consume_and_refill(u);
    fs_validate_and_adjust_guarantees(u);
    fs_compute_weights(u);
    fs_update_burst_shares(u);
    fs_update_relaxed_shares(u);
    fs_prepare_subtree(u, 0);
    fs_compute_fair_shares(u);
    update_root_fair_share(u);
    truncate_fifo_pools(u);
    write_outputs(u);
    if (u->oom || u->ctx.oom)
        return ps_error_set(err, PS_ENOMEM, "out of memory in the fair share update");
    return 0;
}
