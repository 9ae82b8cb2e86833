/* schedule.c — the regular scheduling stage over a snapshot with per-pool child heaps.
 *
 * Invariant: a child sits in its parent's heap iff it is active (operation: runnable, pending,
 * not switched off for the current heartbeat; pool: its heap is non-empty and it is not switched
 * off for the current stage). Any change to an
 * element's usage or activity is followed by refresh_path(), which recomputes satisfaction
 * ratios and heap positions from that element up to the root.
 */
#include "core/schedule.h"

#include <stdlib.h>
#include <string.h>

#define SMALL_EPSILON 1e-9   /* TResourceVector::SmallEpsilon() */

struct elem {
    int parent;
    int kind;                     /* enum ps_element_kind */
    int mode;                     /* enum ps_sched_mode */
    bool use_pool_sat;            /* pools: effective use_pool_satisfaction_for_scheduling */
    bool fifo_order;              /* FIFO pools: children by FIFO order alone */
    int fifo_index;
    int64_t start_time_ms;
    struct ps_share fair;
    struct ps_share demand;
    struct ps_resources limits;
    struct ps_resources usage;
    double local_sat;
    double sat;                   /* the key used by the parent's heap */
    int heap_pos;                 /* position in the parent's heap, -1 when absent */
    /* pools: heap of active children in heap_items[heap_base .. heap_base + heap_len) */
    int heap_base, heap_len;
    /* operations */
    int filter;                   /* index into snap->filters, -1: none */
    bool runnable;
    bool off;                     /* switched off for the current stage (operations; pools
                                     whose subtree the stage excludes) */
    int64_t pending;
    struct ps_resources alloc;
    const char *disk_medium;
    int64_t disk_space;
    bool regular_on_ssd_forbidden;
    int reason;
    int reason_elem;
};

/* Per element, while a snapshot is built (apart from struct elem, which heartbeats read). */
struct build_scratch {
    struct ps_resources sum;      /* usage summed up from the operations */
    bool same_inputs;             /* renewing: fair and demand shares kept their bits */
};

struct ps_sched_snapshot {
    struct ps_sched_options options;
    struct elem *e;
    struct build_scratch *build;
    int count;
    int *heap_items;
    const struct ps_formula **filters;   /* distinct filters */
    int filter_count, filter_cap;
    int *off_list;                       /* elements switched off in this stage */
    int *walk;                           /* the stack of settle_without_start: 2 x count */
    int off_count;
    /* filter results when the node has no cache: stamp per filter */
    uint64_t *scratch_stamp;
    uint8_t *scratch_match;
    uint64_t heartbeat_serial;
};

struct ps_sched_filter_cache {
    uint64_t generation;
    int cap;
    uint8_t *state;                      /* 0 unknown, 1 match, 2 mismatch */
};

/* ---- satisfaction ----------------------------------------------------------------------- */

double ps_sched_satisfaction_ratio(const struct ps_share *usage, const struct ps_share *fair,
                                   const struct ps_share *demand)
{
    if (ps_share_dominates(ps_share_fill(SMALL_EPSILON), *fair))
        return PS_SCHED_INFINITE_SATISFACTION;

    bool above = false;
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (usage->v[r] > fair->v[r])
            above = true;
    if (above) {
        double m = 0.0;
        for (int r = 0; r < PS_RES_COUNT; r++) {
            double q;
            if (fair->v[r] != 0.0)
                q = usage->v[r] / fair->v[r];
            else
                q = usage->v[r] != 0.0 ? PS_SCHED_INFINITE_SATISFACTION : 0.0;
            m = q > m ? q : m;
        }
        return m < PS_SCHED_INFINITE_SATISFACTION ? m : PS_SCHED_INFINITE_SATISFACTION;
    }

    if (ps_share_dominates(*fair, *demand)) {   /* every resource blocked */
        double m = 0.0;
        for (int r = 0; r < PS_RES_COUNT; r++) {
            double q = fair->v[r] != 0.0 ? usage->v[r] / fair->v[r] : 1.0;
            m = (r == 0 || q < m) ? q : m;
        }
        return m;
    }
    double m = 0.0;
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if (fair->v[r] >= demand->v[r] || fair->v[r] == 0.0)
            continue;   /* blocked, or nothing to compare with */
        double q = usage->v[r] / fair->v[r];
        m = q > m ? q : m;
    }
    return m;
}

static void update_local_sat(struct ps_sched_snapshot *s, struct elem *x)
{
    struct ps_share u = ps_resources_to_share(&x->usage, &s->options.total, 0.0, 1.0);
    x->local_sat = ps_sched_satisfaction_ratio(&u, &x->fair, &x->demand);
}

/* ---- heaps of active children ----------------------------------------------------------- */

/* True iff child a comes before child b in parent p's order. */
static bool better(const struct ps_sched_snapshot *s, const struct elem *p, int a, int b)
{
    const struct elem *x = &s->e[a], *y = &s->e[b];
    if (!p->fifo_order && x->sat != y->sat)
        return x->sat < y->sat;
    if (x->fifo_index != y->fifo_index)
        return x->fifo_index < y->fifo_index;
    if (x->start_time_ms != y->start_time_ms)
        return x->start_time_ms < y->start_time_ms;
    return a < b;
}

static void heap_set(struct ps_sched_snapshot *s, struct elem *p, int pos, int child)
{
    s->heap_items[p->heap_base + pos] = child;
    s->e[child].heap_pos = pos;
}

static void heap_sift_up(struct ps_sched_snapshot *s, struct elem *p, int pos)
{
    int *h = s->heap_items + p->heap_base;
    int item = h[pos];
    while (pos > 0) {
        int up = (pos - 1) / 2;
        if (!better(s, p, item, h[up]))
            break;
        heap_set(s, p, pos, h[up]);
        pos = up;
    }
    heap_set(s, p, pos, item);
}

static void heap_sift_down(struct ps_sched_snapshot *s, struct elem *p, int pos)
{
    int *h = s->heap_items + p->heap_base;
    int item = h[pos];
    for (;;) {
        int c = 2 * pos + 1;
        if (c >= p->heap_len)
            break;
        if (c + 1 < p->heap_len && better(s, p, h[c + 1], h[c]))
            c++;
        if (!better(s, p, h[c], item))
            break;
        heap_set(s, p, pos, h[c]);
        pos = c;
    }
    heap_set(s, p, pos, item);
}

static void heap_insert(struct ps_sched_snapshot *s, struct elem *p, int child)
{
    heap_set(s, p, p->heap_len++, child);
    heap_sift_up(s, p, p->heap_len - 1);
}

static void heap_remove(struct ps_sched_snapshot *s, struct elem *p, int child)
{
    int pos = s->e[child].heap_pos;
    int last = s->heap_items[p->heap_base + --p->heap_len];
    s->e[child].heap_pos = -1;
    if (last == child)
        return;
    heap_set(s, p, pos, last);
    heap_sift_up(s, p, pos);
    heap_sift_down(s, p, s->e[last].heap_pos);
}

static void heap_fix(struct ps_sched_snapshot *s, struct elem *p, int child)
{
    heap_sift_up(s, p, s->e[child].heap_pos);
    heap_sift_down(s, p, s->e[child].heap_pos);
}

/* ---- activity and paths ----------------------------------------------------------------- */

static bool is_active(const struct ps_sched_snapshot *s, const struct elem *x)
{
    if (x->kind == PS_ELEM_OPERATION)
        return x->runnable && x->pending > 0 && !x->off;
    return x->heap_len > 0 && !x->off;
}

static void compute_sat(struct ps_sched_snapshot *s, struct elem *x)
{
    if (x->kind == PS_ELEM_OPERATION || x->heap_len == 0) {
        x->sat = x->local_sat;
        return;
    }
    double best = s->e[s->heap_items[x->heap_base]].sat;
    if (x->use_pool_sat && x->local_sat < best)
        best = x->local_sat;
    x->sat = best;
}

/* Re-derives ratios and heap membership from element i up to the root. */
static void refresh_path(struct ps_sched_snapshot *s, int i)
{
    while (i >= 0) {
        struct elem *x = &s->e[i];
        compute_sat(s, x);
        if (x->parent < 0)
            break;
        struct elem *p = &s->e[x->parent];
        bool active = is_active(s, x);
        if (active && x->heap_pos < 0)
            heap_insert(s, p, i);
        else if (!active && x->heap_pos >= 0)
            heap_remove(s, p, i);
        else if (active)
            heap_fix(s, p, i);
        i = x->parent;
    }
}

/* Adds (sign 1) or subtracts (sign -1) r along the path of op, recomputing local ratios. */
static void move_usage(struct ps_sched_snapshot *s, int op, struct ps_resources r, int sign)
{
    for (int i = op; i >= 0; i = s->e[i].parent) {
        struct elem *x = &s->e[i];
        x->usage = sign > 0 ? ps_resources_add(x->usage, r) : ps_resources_sub(x->usage, r);
        update_local_sat(s, x);
    }
}

/* ---- building --------------------------------------------------------------------------- */

void ps_sched_options_init(struct ps_sched_options *o)
{
    memset(o, 0, sizeof *o);
    o->min_spare = ps_resources_zero();
    o->min_spare.v[PS_RES_USER_SLOTS] = 1;
    o->min_spare.v[PS_RES_CPU] = 1 * PS_CPU_SCALE;
    o->min_spare.v[PS_RES_MEMORY] = 256LL * 1024 * 1024;
}

static int check_op_state(const struct ps_sched_snapshot *s, int op,
                          const struct ps_sched_operation *st, struct ps_error *err)
{
    if (st->pending_count < 0)
        return ps_error_set(err, PS_EINVAL, "operation %d: pending_count %lld is negative", op,
                            (long long)st->pending_count);
    bool nonzero = false;
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if (st->allocation.v[r] < 0)
            return ps_error_set(err, PS_EINVAL, "operation %d: allocation %s is negative", op,
                                ps_resource_name(r));
        nonzero = nonzero || st->allocation.v[r] > 0;
    }
    if (!nonzero && st->pending_count > 0)
        return ps_error_set(err, PS_EINVAL,
                            "operation %d: an allocation needs some resources, all are zero", op);
    if (st->disk_medium && st->disk_space < 0)
        return ps_error_set(err, PS_EINVAL, "operation %d: disk_space %lld is negative", op,
                            (long long)st->disk_space);
    if (st->filter && !s->options.filter_eval)
        return ps_error_set(err, PS_EINVAL,
                            "operation %d has a scheduling tag filter but options.filter_eval "
                            "is not set", op);
    return 0;
}

static int filter_index(struct ps_sched_snapshot *s, const struct ps_formula *f)
{
    if (!f)
        return -1;
    /* Few distinct filters per tree: a linear search at build time is cheap enough and keeps
     * indices in first-seen order, which is deterministic. */
    for (int i = 0; i < s->filter_count; i++)
        if (s->filters[i] == f)
            return i;
    if (s->filter_count == s->filter_cap) {
        int cap = s->filter_cap ? 2 * s->filter_cap : 8;
        const struct ps_formula **nf = realloc(s->filters, (size_t)cap * sizeof *nf);
        uint64_t *ns = realloc(s->scratch_stamp, (size_t)cap * sizeof *ns);
        if (ns)
            s->scratch_stamp = ns;
        uint8_t *nm = realloc(s->scratch_match, (size_t)cap);
        if (nm)
            s->scratch_match = nm;
        if (nf)
            s->filters = nf;
        if (!nf || !ns || !nm)
            return -2;
        for (int i = s->filter_cap; i < cap; i++)
            s->scratch_stamp[i] = 0;
        s->filter_cap = cap;
    }
    s->filters[s->filter_count] = f;
    return s->filter_count++;
}

static int apply_op_state(struct ps_sched_snapshot *s, int op, const struct ps_sched_operation *st,
                          struct ps_error *err)
{
    int rc = check_op_state(s, op, st, err);
    if (rc)
        return rc;
    int fi = filter_index(s, st->filter);
    if (fi == -2)
        return ps_error_set(err, PS_ENOMEM, "out of memory for scheduling tag filters");
    struct elem *x = &s->e[op];
    x->filter = fi;
    x->runnable = st->runnable;
    x->pending = st->pending_count;
    x->alloc = st->allocation;
    x->disk_medium = st->disk_medium;
    x->disk_space = st->disk_medium ? st->disk_space : 0;
    x->regular_on_ssd_forbidden = st->regular_on_ssd_forbidden;
    return 0;
}

/* The limits of element i checked in a heartbeat with options.specified_limits (schedule.h). */
static struct ps_resources specified_limits(const struct ps_fs_element *fe, int i)
{
    if (i == 0)
        return ps_resources_infinite();
    if (fe->in.max_share_ratio >= 1.0)
        return ps_resources_min(fe->in.resource_limits, fe->in.filter_limits);
    return fe->out.resource_limits;
}

/* Element i's kind and parent from fe, checked (and a pool's index into the pools array);
 * counts i as a child of its parent. */
static int set_structure(struct ps_sched_snapshot *s, const struct ps_fs_element *fe, int i,
                         int pool_count, struct ps_error *err)
{
    struct elem *x = &s->e[i];
    x->parent = fe->in.parent;
    x->kind = fe->in.kind;
    if (i > 0 && (x->parent < 0 || x->parent >= i || x->kind == PS_ELEM_ROOT))
        return ps_error_set(err, PS_EINVAL,
                            "scheduling snapshot: element %d has parent %d; parents must come "
                            "before their children", i, x->parent);
    if (i > 0 && s->e[x->parent].kind == PS_ELEM_OPERATION)
        return ps_error_set(err, PS_EINVAL,
                            "scheduling snapshot: element %d has an operation as its parent", i);
    if (x->kind != PS_ELEM_OPERATION && (fe->in.pool < 0 || fe->in.pool >= pool_count))
        return ps_error_set(err, PS_EINVAL, "scheduling snapshot: element %d has pool index %d "
                            "outside the %d entries of the pools array", i, fe->in.pool,
                            pool_count);
    if (i > 0)
        s->e[x->parent].heap_len++;   /* child count for now */
    return 0;
}

/* Kinds and parents of a new snapshot, and each pool's slice of heap_items. */
static int build_structure(struct ps_sched_snapshot *s, const struct ps_fs_element *elems,
                           int pool_count, struct ps_error *err)
{
    for (int i = 0; i < s->count; i++) {
        int rc = set_structure(s, &elems[i], i, pool_count, err);
        if (rc)
            return rc;
    }
    int base = 0;
    for (int i = 0; i < s->count; i++) {
        s->e[i].heap_base = base;
        base += s->e[i].heap_len;
        s->e[i].heap_len = 0;
    }
    return 0;
}

/* Whether elems has the snapshot's structure (count, kinds and parents), so its heap slices
 * and structural checks hold for them. */
static bool same_structure(const struct ps_sched_snapshot *s, const struct ps_fs_element *elems,
                           int count)
{
    if (s->count != count)
        return false;
    for (int i = 0; i < count; i++)
        if (s->e[i].parent != elems[i].in.parent || s->e[i].kind != (int)elems[i].in.kind)
            return false;
    return true;
}

/* Element i's attributes from fe as a fresh snapshot has them before the operation state and
 * the heaps: pools' scheduling settings, shares, limits, no operation state, no reason, in no
 * heap; usage is left to the sum (operations' own in sum, pools' 0). Renewing (`renew`, with
 * the same total), notes whether the shares kept their bits. */
static int set_attributes(struct ps_sched_snapshot *s, const struct ps_fs_element *fe, int i,
                          const struct ps_fs_pool *pools, int pool_count, bool renew,
                          struct ps_error *err)
{
    struct elem *x = &s->e[i];
    const struct ps_sched_options *options = &s->options;
    bool op = x->kind == PS_ELEM_OPERATION;
    x->mode = PS_MODE_FAIR_SHARE;
    x->use_pool_sat = false;
    x->fifo_order = false;
    if (!op) {
        if (fe->in.pool < 0 || fe->in.pool >= pool_count)
            return ps_error_set(err, PS_EINVAL, "scheduling snapshot: element %d has pool index "
                                "%d outside the %d entries of the pools array", i, fe->in.pool,
                                pool_count);
        const struct ps_fs_pool_input *pin = &pools[fe->in.pool].in;
        x->mode = pin->mode;
        bool inherited = i == 0 ? options->use_pool_satisfaction : s->e[x->parent].use_pool_sat;
        x->use_pool_sat = pin->use_pool_satisfaction_for_scheduling == 0
                              ? inherited : pin->use_pool_satisfaction_for_scheduling == 2;
        bool fifo = pin->fifo_order == 0 ? options->fifo_order_in_fifo_pools
                                         : pin->fifo_order == 2;
        x->fifo_order = x->mode == PS_MODE_FIFO && fifo;
    }
    x->fifo_index = fe->out.fifo_index;
    x->start_time_ms = op ? fe->in.start_time_ms : 0;
    struct build_scratch *b = &s->build[i];
    b->same_inputs = renew &&
                     memcmp(&x->fair, &fe->out.fair_share.total, sizeof x->fair) == 0 &&
                     memcmp(&x->demand, &fe->out.demand_share, sizeof x->demand) == 0;
    x->fair = fe->out.fair_share.total;
    x->demand = fe->out.demand_share;
    x->limits = options->specified_limits ? specified_limits(fe, i) : fe->out.resource_limits;
    b->sum = op ? fe->in.usage : ps_resources_zero();
    x->sat = 0.0;
    x->heap_pos = -1;
    x->heap_len = 0;
    x->filter = -1;
    x->runnable = false;
    x->off = false;
    x->pending = 0;
    x->alloc = ps_resources_zero();
    x->disk_medium = NULL;
    x->disk_space = 0;
    x->regular_on_ssd_forbidden = false;
    x->reason = PS_SCHED_OK;
    x->reason_elem = -1;
    return 0;
}

/* Everything of a snapshot but its structure (build_structure), from the update's results.
 * Renewing, an element whose shares, usage and total kept their bits keeps its local ratio:
 * the snapshot keeps it equal to update_local_sat's of those (move_usage). */
static int fill(struct ps_sched_snapshot *s, const struct ps_fs_element *elems,
                const struct ps_fs_pool *pools, int pool_count,
                const struct ps_sched_operation *ops, const struct ps_sched_options *options,
                bool renew, struct ps_error *err)
{
    int count = s->count, rc;
    renew = renew && memcmp(&s->options.total, &options->total, sizeof options->total) == 0;
    s->options = *options;
    s->filter_count = 0;
    s->off_count = 0;
    s->heartbeat_serial = 0;
    for (int i = 0; i < s->filter_cap; i++)
        s->scratch_stamp[i] = 0;
    for (int i = 0; i < count; i++)
        if ((rc = set_attributes(s, &elems[i], i, pools, pool_count, renew, err)) != 0)
            return rc;
    if (ops) {
        for (int i = 0; i < count; i++)
            if (s->e[i].kind == PS_ELEM_OPERATION && (rc = apply_op_state(s, i, &ops[i], err)))
                return rc;
    }
    /* Bottom-up, children after parents: a backward pass sees an element's usage summed up
     * and its active children in its heap before it is rated and inserted into its parent's. */
    for (int i = count - 1; i >= 0; i--) {
        struct elem *x = &s->e[i];
        const struct build_scratch *b = &s->build[i];
        if (!b->same_inputs || memcmp(&x->usage, &b->sum, sizeof b->sum) != 0) {
            x->usage = b->sum;
            update_local_sat(s, x);
        }
        compute_sat(s, x);
        if (i == 0)
            break;
        struct elem *p = &s->e[x->parent];
        s->build[x->parent].sum = ps_resources_add(s->build[x->parent].sum, x->usage);
        if (is_active(s, x))
            heap_insert(s, p, i);
    }
    return 0;
}

static int check_root(const struct ps_fs_element *elems, int count, struct ps_error *err)
{
    if (count < 1 || elems[0].in.kind != PS_ELEM_ROOT || elems[0].in.parent != -1)
        return ps_error_set(err, PS_EINVAL, "scheduling snapshot: element 0 must be the root");
    return 0;
}

int ps_sched_snapshot_new(const struct ps_fs_element *elems, int count,
                          const struct ps_fs_pool *pools, int pool_count,
                          const struct ps_sched_operation *ops,
                          const struct ps_sched_options *options,
                          struct ps_sched_snapshot **out, struct ps_error *err)
{
    *out = NULL;
    int rc = check_root(elems, count, err);
    if (rc)
        return rc;
    struct ps_sched_snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return ps_error_set(err, PS_ENOMEM, "out of memory for a scheduling snapshot");
    s->count = count;
    s->e = calloc((size_t)count, sizeof *s->e);
    s->build = calloc((size_t)count, sizeof *s->build);
    s->heap_items = calloc((size_t)count, sizeof *s->heap_items);
    s->off_list = calloc(3 * (size_t)count, sizeof *s->off_list);
    s->walk = s->off_list ? s->off_list + count : NULL;
    if (!s->e || !s->build || !s->heap_items || !s->off_list)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory for a scheduling snapshot");
    if (!rc)
        rc = build_structure(s, elems, pool_count, err);
    if (!rc)
        rc = fill(s, elems, pools, pool_count, ops, options, false, err);
    if (rc) {
        ps_sched_snapshot_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int ps_sched_snapshot_renew(const struct ps_fs_element *elems, int count,
                            const struct ps_fs_pool *pools, int pool_count,
                            const struct ps_sched_operation *ops,
                            const struct ps_sched_options *options,
                            struct ps_sched_snapshot **snap, struct ps_error *err)
{
    struct ps_sched_snapshot *s = *snap;
    *snap = NULL;
    int rc = check_root(elems, count, err);
    if (rc == 0 && s && same_structure(s, elems, count)) {
        rc = fill(s, elems, pools, pool_count, ops, options, true, err);
        if (rc == 0) {
            *snap = s;
            return 0;
        }
    }
    ps_sched_snapshot_free(s);
    if (rc)
        return rc;
    return ps_sched_snapshot_new(elems, count, pools, pool_count, ops, options, snap, err);
}

void ps_sched_snapshot_free(struct ps_sched_snapshot *s)
{
    if (!s)
        return;
    free(s->e);
    free(s->build);
    free(s->heap_items);
    free(s->filters);
    free(s->off_list);
    free(s->scratch_stamp);
    free(s->scratch_match);
    free(s);
}

int ps_sched_snapshot_element_count(const struct ps_sched_snapshot *s)
{
    return s->count;
}

/* ---- setters ---------------------------------------------------------------------------- */

static int check_op(const struct ps_sched_snapshot *s, int op, struct ps_error *err)
{
    if (op < 0 || op >= s->count || s->e[op].kind != PS_ELEM_OPERATION)
        return ps_error_set(err, PS_EINVAL, "element %d is not an operation of the snapshot", op);
    return 0;
}

int ps_sched_set_operation(struct ps_sched_snapshot *s, int op,
                           const struct ps_sched_operation *st, struct ps_error *err)
{
    int rc = check_op(s, op, err);
    if (!rc)
        rc = apply_op_state(s, op, st, err);
    if (!rc)
        refresh_path(s, op);
    return rc;
}

int ps_sched_set_pending(struct ps_sched_snapshot *s, int op, int64_t pending, struct ps_error *err)
{
    int rc = check_op(s, op, err);
    if (rc)
        return rc;
    struct ps_sched_operation st = {
        .filter = s->e[op].filter >= 0 ? s->filters[s->e[op].filter] : NULL,
        .runnable = s->e[op].runnable,
        .pending_count = pending,
        .allocation = s->e[op].alloc,
        .disk_medium = s->e[op].disk_medium,
        .disk_space = s->e[op].disk_space,
        .regular_on_ssd_forbidden = s->e[op].regular_on_ssd_forbidden,
    };
    return ps_sched_set_operation(s, op, &st, err);
}

int ps_sched_set_runnable(struct ps_sched_snapshot *s, int op, bool runnable, struct ps_error *err)
{
    int rc = check_op(s, op, err);
    if (rc)
        return rc;
    s->e[op].runnable = runnable;
    refresh_path(s, op);
    return 0;
}

static int change_usage(struct ps_sched_snapshot *s, int op, struct ps_resources r, int sign,
                        struct ps_error *err)
{
    int rc = check_op(s, op, err);
    if (rc)
        return rc;
    if (sign < 0) {
        for (int i = op; i >= 0; i = s->e[i].parent)
            if (!ps_resources_fit(r, s->e[i].usage))
                return ps_error_set(err, PS_EINVAL,
                                    "operation %d: finished resources exceed the usage of "
                                    "element %d", op, i);
    }
    move_usage(s, op, r, sign);
    refresh_path(s, op);
    return 0;
}

int ps_sched_allocation_started(struct ps_sched_snapshot *s, int op, struct ps_resources r,
                                struct ps_error *err)
{
    return change_usage(s, op, r, 1, err);
}

int ps_sched_allocation_finished(struct ps_sched_snapshot *s, int op, struct ps_resources r,
                                 struct ps_error *err)
{
    return change_usage(s, op, r, -1, err);
}

int ps_sched_set_operation_usage(struct ps_sched_snapshot *s, int op, struct ps_resources usage,
                                 struct ps_error *err)
{
    int rc = check_op(s, op, err);
    if (rc)
        return rc;
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (usage.v[r] < 0)
            return ps_error_set(err, PS_EINVAL, "operation %d: usage %s is negative", op,
                                ps_resource_name(r));
    /* Subtract the old usage, add the new one: ancestors stay sums of their operations. */
    struct ps_resources old = s->e[op].usage;
    move_usage(s, op, old, -1);
    move_usage(s, op, usage, 1);
    refresh_path(s, op);
    return 0;
}

int ps_sched_parent(const struct ps_sched_snapshot *s, int i)
{
    return s->e[i].parent;
}

enum ps_element_kind ps_sched_kind(const struct ps_sched_snapshot *s, int i)
{
    return (enum ps_element_kind)s->e[i].kind;
}

struct ps_resources ps_sched_limits(const struct ps_sched_snapshot *s, int i)
{
    return s->e[i].limits;
}

struct ps_resources ps_sched_usage(const struct ps_sched_snapshot *s, int i)
{
    return s->e[i].usage;
}

double ps_sched_local_satisfaction(const struct ps_sched_snapshot *s, int i)
{
    return s->e[i].local_sat;
}

bool ps_sched_any_pending(const struct ps_sched_snapshot *s)
{
    return s->count > 0 && is_active(s, &s->e[0]);
}

bool ps_sched_schedulable(const struct ps_sched_snapshot *s, int op)
{
    const struct elem *x = &s->e[op];
    return x->kind == PS_ELEM_OPERATION && x->runnable && x->pending > 0;
}

int64_t ps_sched_pending(const struct ps_sched_snapshot *s, int op)
{
    return s->e[op].pending;
}

enum ps_sched_reason ps_sched_operation_reason(const struct ps_sched_snapshot *s, int op,
                                               int *element)
{
    const struct elem *x = &s->e[op];
    if (element)
        *element = -1;
    if (!x->runnable)
        return PS_SCHED_NOT_RUNNABLE;
    if (x->pending == 0)
        return PS_SCHED_NO_PENDING;
    if (element)
        *element = x->reason_elem;
    return (enum ps_sched_reason)x->reason;
}

const char *ps_sched_reason_name(enum ps_sched_reason reason)
{
    switch (reason) {
    case PS_SCHED_OK: return "ok";
    case PS_SCHED_NOT_RUNNABLE: return "not_runnable";
    case PS_SCHED_NO_PENDING: return "no_pending";
    case PS_SCHED_FILTER_MISMATCH: return "filter_mismatch";
    case PS_SCHED_NODE_RESOURCES: return "node_resources";
    case PS_SCHED_LIMITS: return "resource_limits";
    case PS_SCHED_INELIGIBLE: return "ineligible";
    case PS_SCHED_DISK: return "disk_space";
    case PS_SCHED_REGULAR_ON_SSD_FORBIDDEN: return "regular_allocation_on_ssd_node_forbidden";
    }
    return "unknown";
}

/* ---- filter cache ----------------------------------------------------------------------- */

struct ps_sched_filter_cache *ps_sched_filter_cache_new(void)
{
    return calloc(1, sizeof(struct ps_sched_filter_cache));
}

void ps_sched_filter_cache_free(struct ps_sched_filter_cache *c)
{
    if (!c)
        return;
    free(c->state);
    free(c);
}

void ps_sched_filter_cache_clear(struct ps_sched_filter_cache *c)
{
    if (c && c->state)
        memset(c->state, 0, (size_t)c->cap);
}

/* Returns 1 match, 0 mismatch, negative on out of memory. */
static int node_matches(struct ps_sched_snapshot *s, const struct ps_sched_node *node, int fi)
{
    if (fi < 0)
        return 1;
    struct ps_sched_filter_cache *c = node->filter_cache;
    if (c) {
        if (c->generation != s->options.generation || c->cap < s->filter_count) {
            if (c->cap < s->filter_count) {
                uint8_t *ns = realloc(c->state, (size_t)s->filter_count);
                if (!ns)
                    return PS_ENOMEM;
                c->state = ns;
                c->cap = s->filter_count;
            }
            if (c->generation != s->options.generation)
                memset(c->state, 0, (size_t)c->cap);
            c->generation = s->options.generation;
        }
        if (!c->state[fi])
            c->state[fi] = s->options.filter_eval(s->filters[fi], node->tags, node->tag_count)
                               ? 1 : 2;
        return c->state[fi] == 1;
    }
    if (s->scratch_stamp[fi] != s->heartbeat_serial) {
        s->scratch_stamp[fi] = s->heartbeat_serial;
        s->scratch_match[fi] = s->options.filter_eval(s->filters[fi], node->tags,
                                                      node->tag_count);
    }
    return s->scratch_match[fi];
}

/* ---- results ---------------------------------------------------------------------------- */

void ps_sched_result_init(struct ps_sched_result *r)
{
    memset(r, 0, sizeof *r);
}

void ps_sched_result_release(struct ps_sched_result *r)
{
    free(r->allocations);
    free(r->skips);
    memset(r, 0, sizeof *r);
}

void ps_sched_result_clear(struct ps_sched_result *r)
{
    r->allocation_count = 0;
    r->skip_count = 0;
    r->candidates_considered = 0;
    r->node_usage = ps_resources_zero();
}

static int push_allocation(struct ps_sched_result *r, int op, struct ps_resources res)
{
    if (r->allocation_count == r->allocation_cap) {
        int cap = r->allocation_cap ? 2 * r->allocation_cap : 16;
        void *n = realloc(r->allocations, (size_t)cap * sizeof *r->allocations);
        if (!n)
            return PS_ENOMEM;
        r->allocations = n;
        r->allocation_cap = cap;
    }
    r->allocations[r->allocation_count++] = (struct ps_sched_allocation){op, res};
    return 0;
}

static int push_skip(struct ps_sched_result *r, int op, enum ps_sched_reason why, int element,
                     unsigned unsatisfied)
{
    if (r->skip_count == r->skip_cap) {
        int cap = r->skip_cap ? 2 * r->skip_cap : 16;
        void *n = realloc(r->skips, (size_t)cap * sizeof *r->skips);
        if (!n)
            return PS_ENOMEM;
        r->skips = n;
        r->skip_cap = cap;
    }
    r->skips[r->skip_count++] = (struct ps_sched_skip){op, why, element, unsatisfied};
    return 0;
}

/* ---- the stage -------------------------------------------------------------------------- */

/* The first element on op's path (op itself, then ancestors) whose limits would be exceeded by
 * adding r, or -1. Every element's usage is lowered by its unconditional discount and by the
 * operation's conditional discount (cond): upstream adds the latter to the hierarchical
 * available resources, so a conditional victim frees the limits it holds (a full cluster's
 * root limits included). */
static int violated_limits(const struct ps_sched_snapshot *s, int op, struct ps_resources r,
                           const struct ps_sched_stage *st, struct ps_resources cond)
{
    for (int i = op; i >= 0; i = s->e[i].parent) {
        struct ps_resources usage = ps_resources_sub(s->e[i].usage, cond);
        if (st && st->limit_discount)
            usage = ps_resources_sub(usage, st->limit_discount(st->ctx, s, i));
        if (!ps_resources_fit(ps_resources_add(usage, r), s->e[i].limits))
            return i;
    }
    return -1;
}

static void switch_off(struct ps_sched_snapshot *s, int i)
{
    s->e[i].off = true;
    s->off_list[s->off_count++] = i;
    refresh_path(s, i);
}

static void switch_all_on(struct ps_sched_snapshot *s)
{
    for (int k = 0; k < s->off_count; k++) {
        int op = s->off_list[k];
        s->e[op].off = false;
        refresh_path(s, op);
    }
    s->off_count = 0;
}

void ps_sched_scheduling_order(struct ps_sched_snapshot *s, int *index)
{
    for (int i = 0; i < s->count; i++)
        index[i] = -1;
    int n = 0;
    while (s->e[0].heap_len > 0 && !s->e[0].off) {
        int i = 0;
        while (s->e[i].kind != PS_ELEM_OPERATION)
            i = s->heap_items[s->e[i].heap_base];
        index[i] = n++;
        switch_off(s, i);
    }
    switch_all_on(s);
}

/* Whether op's disk request fits the node: the medium is there and its free space, less what
 * the allocations started in this heartbeat on the same medium requested, covers it. */
static bool disk_fits(const struct ps_sched_snapshot *s, const struct ps_sched_node *node,
                      const struct ps_sched_result *res, const struct elem *x)
{
    if (!x->disk_medium)
        return true;
    for (int m = 0; m < node->medium_count; m++) {
        if (strcmp(node->media[m].name, x->disk_medium) != 0)
            continue;
        int64_t free = node->media[m].free;
        for (int k = 0; k < res->allocation_count; k++) {
            const struct elem *y = &s->e[res->allocations[k].op];
            if (y->disk_medium && strcmp(y->disk_medium, x->disk_medium) == 0)
                free -= y->disk_space;
        }
        return free >= x->disk_space;
    }
    return false;
}

/* The checks of operation i as the stage's candidate on the node; avail: the node's free
 * resources plus the stage's extra. Sets *why (PS_SCHED_OK: it can start) and *where (the
 * element whose limits it would exceed, else -1). Negative on out of memory. Inlined: it is
 * the regular stage's inner loop. */
static inline __attribute__((always_inline)) int
check_candidate(struct ps_sched_snapshot *s, const struct ps_sched_node *node,
                const struct ps_sched_stage *st, const struct ps_sched_result *res, int i,
                struct ps_resources avail, enum ps_sched_reason *why, int *where,
                unsigned *unsatisfied)
{
    const struct elem *x = &s->e[i];
    *why = PS_SCHED_OK;
    *where = -1;
    *unsatisfied = 0;
    if (st->eligible && !st->eligible(st->ctx, s, i)) {
        *why = PS_SCHED_INELIGIBLE;
        return 0;
    }
    int m = node_matches(s, node, x->filter);
    if (m < 0)
        return m;
    struct ps_resources cond = ps_resources_zero();
    if (st->op_extra) {
        cond = st->op_extra(st->ctx, s, i);
        avail = ps_resources_add(avail, cond);
    }
    if (!m)
        *why = PS_SCHED_FILTER_MISMATCH;
    else if (x->regular_on_ssd_forbidden && node->ssd_priority_preemption)
        *why = PS_SCHED_REGULAR_ON_SSD_FORBIDDEN;
    else if (!disk_fits(s, node, res, x))
        *why = PS_SCHED_DISK;
    else if (!ps_resources_fit(x->alloc, avail)) {
        *why = PS_SCHED_NODE_RESOURCES;
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (x->alloc.v[r] > avail.v[r])
                *unsatisfied |= 1u << r;   /* min_needed_resources_unsatisfied_count */
    }
    else if ((*where = violated_limits(s, i, x->alloc, st, cond)) >= 0)
        *why = PS_SCHED_LIMITS;
    return 0;
}

/* The walk's stack: per level, a pool and the position of its next child in its heap. */
static void walk_push(struct ps_sched_snapshot *s, int pool, int *depth)
{
    s->walk[2 * *depth] = pool;
    s->walk[2 * *depth + 1] = 0;
    ++*depth;
}

/* The next operation in the walk, -1 at its end. */
static int walk_next_op(struct ps_sched_snapshot *s, int *depth)
{
    while (*depth > 0) {
        int *frame = &s->walk[2 * (*depth - 1)];
        const struct elem *p = &s->e[frame[0]];
        if (frame[1] == p->heap_len) {
            --*depth;
            continue;
        }
        int c = s->heap_items[p->heap_base + frame[1]++];
        if (s->e[c].kind == PS_ELEM_OPERATION)
            return c;
        walk_push(s, c, depth);
    }
    return -1;
}

/* Checks each active candidate (stage->candidates, else every active operation, walks_all)
 * against the node without touching the heaps. Until an allocation starts, a candidate's
 * checks read nothing the descent changes (the node's usage, the elements' usage and the
 * discounts stay as they are), so when none of them passes, the descent would visit every
 * active eligible operation, skip each for the reason found here and start nothing: the skips
 * are recorded (in list or walk order; no INELIGIBLE ones, the descent's order is not
 * reproduced) and 1 is returned. 0: some candidate can start, the descent must run (nothing
 * recorded; *first: the walk's first operation when it is the one that can start, else -1).
 * Negative on error. The operations already switched off in the stage are out of the heaps,
 * so the walk skips them as the descent would. */
static int settle_without_start(struct ps_sched_snapshot *s, const struct ps_sched_node *node,
                                const struct ps_sched_stage *st, struct ps_sched_result *res,
                                int *first, struct ps_error *err)
{
    *first = -1;
    struct ps_resources avail = ps_resources_add(ps_resources_sub(node->limits, res->node_usage),
                                                 st->extra);
    struct ps_resources bound = st->op_extra ? ps_resources_add(avail, st->op_extra_bound)
                                             : avail;
    if (!ps_resources_fit(s->options.min_spare, bound))
        return 1;   /* the descent stops before its first candidate */
    int skips = res->skip_count, considered = res->candidates_considered;
    /* The candidates: the stage's list, or every active operation, found through the heaps
     * (an active pool's heap holds exactly its active children), depth first from each heap's
     * top: the first operation of the walk is the one the descent would take next. */
    int depth = 0, k = 0;
    if (!st->candidates)
        walk_push(s, 0, &depth);
    for (bool at_top = !st->candidates;; at_top = false) {
        int i;
        if (st->candidates) {
            if (k == st->candidate_count)
                break;
            i = st->candidates[k++];
        } else if ((i = walk_next_op(s, &depth)) < 0) {
            break;
        }
        const struct elem *x = &s->e[i];
        if (x->kind != PS_ELEM_OPERATION || !is_active(s, x))
            continue;
        enum ps_sched_reason why;
        int where;
        unsigned unsatisfied;
        if (check_candidate(s, node, st, res, i, avail, &why, &where, &unsatisfied) < 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory for a node filter cache");
        if (why == PS_SCHED_INELIGIBLE)
            continue;
        if (why == PS_SCHED_OK) {
            res->skip_count = skips;
            res->candidates_considered = considered;
            if (at_top)
                *first = i;
            return 0;
        }
        res->candidates_considered++;
        if (push_skip(res, i, why, where, unsatisfied))
            return ps_error_set(err, PS_ENOMEM, "out of memory for heartbeat results");
    }
    for (int j = skips; j < res->skip_count; j++) {
        struct elem *x = &s->e[res->skips[j].op];
        x->reason = res->skips[j].reason;
        x->reason_elem = res->skips[j].element;
    }
    return 1;
}

/* Whether settle_without_start walks every active operation for the stage: the regular one. */
static bool walks_all(const struct ps_sched_stage *st)
{
    return !st->candidates && !st->eligible && !st->subtree_eligible;
}

/* Starts an allocation of operation i (the descent's candidate, its checks passed). */
static int start_allocation(struct ps_sched_snapshot *s, struct ps_sched_result *res, int i,
                            struct ps_error *err)
{
    struct elem *x = &s->e[i];
    if (push_allocation(res, i, x->alloc))
        return ps_error_set(err, PS_ENOMEM, "out of memory for heartbeat results");
    x->pending--;
    x->reason = PS_SCHED_OK;
    x->reason_elem = -1;
    res->node_usage = ps_resources_add(res->node_usage, x->alloc);
    move_usage(s, i, x->alloc, 1);
    refresh_path(s, i);
    return 0;
}

/* The descent until it starts an allocation (1) or ends (0); negative on error. */
static int descend(struct ps_sched_snapshot *s, const struct ps_sched_node *node,
                   const struct ps_sched_stage *st, struct ps_sched_result *res,
                   struct ps_error *err)
{
    for (;;) {
        struct ps_resources avail = ps_resources_add(
            ps_resources_sub(node->limits, res->node_usage), st->extra);
        struct ps_resources bound = st->op_extra ? ps_resources_add(avail, st->op_extra_bound)
                                                 : avail;
        if (!ps_resources_fit(s->options.min_spare, bound))
            return 0;
        /* Descend along heap tops: each pool's best active child. A pool whose subtree holds
         * no eligible operation is switched off as a whole when it surfaces, as its operations
         * would be one by one: the best eligible leaf is the same either way. */
        int i = 0;
        if (s->e[0].heap_len == 0)
            return 0;
        bool pool_off = false;
        while (s->e[i].kind != PS_ELEM_OPERATION) {
            int c = s->heap_items[s->e[i].heap_base];
            if (st->subtree_eligible && s->e[c].kind != PS_ELEM_OPERATION &&
                !(st->subtree_eligible[c] & st->subtree_eligible_mask)) {
                switch_off(s, c);
                pool_off = true;
                break;
            }
            i = c;
        }
        if (pool_off)
            continue;
        struct elem *x = &s->e[i];
        res->candidates_considered++;

        enum ps_sched_reason why;
        int where;
        unsigned unsatisfied;
        if (check_candidate(s, node, st, res, i, avail, &why, &where, &unsatisfied) < 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory for a node filter cache");
        if (why == PS_SCHED_OK) {
            int rc = start_allocation(s, res, i, err);
            return rc < 0 ? rc : 1;
        }
        if (why != PS_SCHED_INELIGIBLE) {
            x->reason = why;
            x->reason_elem = where;
        }
        switch_off(s, i);
        if (push_skip(res, i, why, where, unsatisfied))
            return ps_error_set(err, PS_ENOMEM, "out of memory for heartbeat results");
    }
}

/* The stage's allocations one at a time. Stages that walk (settle_without_start) do so before
 * each: a walk that finds nobody able to start records the descent's skips and ends the
 * stage (on a full cluster most stages, and 76% of the descent's skips came after its last
 * allocation); one whose first operation (the descent's next) can start starts it without the
 * descent; else the descent runs until it starts one. */
static int run_stage(struct ps_sched_snapshot *s, const struct ps_sched_node *node,
                     const struct ps_sched_stage *st, struct ps_sched_result *res,
                     struct ps_error *err)
{
    bool walk = st->candidates || walks_all(st);
    for (int started = 0; st->max_allocations <= 0 || started < st->max_allocations; started++) {
        int rc;
        if (walk) {
            int first;
            rc = settle_without_start(s, node, st, res, &first, err);
            if (rc != 0)
                return rc < 0 ? rc : 0;
            if (first >= 0) {
                res->candidates_considered++;
                if ((rc = start_allocation(s, res, first, err)) < 0)
                    return rc;
                continue;
            }
        }
        if ((rc = descend(s, node, st, res, err)) <= 0)
            return rc;
    }
    return 0;
}

int ps_schedule_stage(struct ps_sched_snapshot *s, const struct ps_sched_node *node,
                      const struct ps_sched_stage *stage, struct ps_sched_result *result,
                      struct ps_error *err)
{
    if (node->tag_count < 0 || (node->tag_count > 0 && !node->tags))
        return ps_error_set(err, PS_EINVAL, "node %lld: bad tag list", (long long)node->id);
    if (node->medium_count < 0 || (node->medium_count > 0 && !node->media))
        return ps_error_set(err, PS_EINVAL, "node %lld: bad media list", (long long)node->id);
    s->heartbeat_serial++;   /* the filter results of nodes without a cache are the stage's */
    int rc = run_stage(s, node, stage, result, err);
    /* Deactivation lasts one stage: the next stage has its own eligible set and resources. */
    switch_all_on(s);
    return rc;
}

int ps_schedule_heartbeat(struct ps_sched_snapshot *s, const struct ps_sched_node *node,
                          int64_t now_ms, struct ps_sched_result *result, struct ps_error *err)
{
    (void)now_ms;
    ps_sched_result_clear(result);
    result->node_usage = node->usage;
    struct ps_sched_stage regular = {.extra = ps_resources_zero()};
    return ps_schedule_stage(s, node, &regular, result, err);
}
