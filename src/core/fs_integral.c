/* fs_integral.c — integral guarantees: accumulated volumes (consume, refill, capacity, overflow
 * redistribution) and the integral shares of burst and relaxed pools. */
#include <math.h>
#include <string.h>

#include "core/bisect.h"
#include "core/fs_internal.h"

/* ---- volumes ------------------------------------------------------------------------------ */

/* A volume's cpu is int64 hundredths of core-seconds: its sums and conversions saturate
 * rather than overflow, whatever volumes, flows and totals a snapshot or config holds. */

void fs_volume_from_input(struct fs_volume *v, const struct ps_volume *in)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        v->d[r] = r == PS_RES_CPU ? 0.0 : in->v[r];
    v->cpu = ps_i64_of_double(round(in->v[PS_RES_CPU] * PS_CPU_SCALE));
}

void fs_volume_to_output(const struct fs_volume *v, struct ps_volume *out)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        out->v[r] = r == PS_RES_CPU ? (double)v->cpu / PS_CPU_SCALE : v->d[r];
}

static double volume_get(const struct fs_volume *v, int r)
{
    return r == PS_RES_CPU ? (double)v->cpu / PS_CPU_SCALE : v->d[r];
}

double fs_volume_min_ratio(const struct fs_volume *v, const struct ps_resources *total)
{
    bool any = false;
    double best = 0.0;
    for (int r = 0; r < PS_RES_COUNT; r++) {
        double limit = ps_res_get(total, r);
        if (!(limit > 0.0))
            continue;
        double ratio = volume_get(v, r) / limit;
        if (!any || ratio < best)
            best = ratio;
        any = true;
    }
    return any ? best : 0.0;
}

/* TResourceVolume(resources, duration): cpu rounded to hundredths. */
static void volume_of(const struct ps_resources *res, double seconds, struct fs_volume *out)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        out->d[r] = r == PS_RES_CPU ? 0.0 : (double)res->v[r] * seconds;
    out->cpu = ps_i64_of_double(round((double)res->v[PS_RES_CPU] * seconds));
}

static void volume_scale(struct fs_volume *v, double k)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (r != PS_RES_CPU)
            v->d[r] *= k;
    v->cpu = ps_i64_of_double(round((double)v->cpu * k));
}

static void volume_add(struct fs_volume *a, const struct fs_volume *b, int sign)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (r != PS_RES_CPU)
            a->d[r] = sign > 0 ? a->d[r] + b->d[r] : a->d[r] - b->d[r];
    a->cpu = sign > 0 ? ps_i64_add_sat(a->cpu, b->cpu) : ps_i64_sub_sat(a->cpu, b->cpu);
}

static void volume_max(struct fs_volume *a, const struct fs_volume *b)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (r != PS_RES_CPU && a->d[r] < b->d[r])
            a->d[r] = b->d[r];
    if (a->cpu < b->cpu)
        a->cpu = b->cpu;
}

static void volume_min(struct fs_volume *a, const struct fs_volume *b)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (r != PS_RES_CPU && b->d[r] < a->d[r])
            a->d[r] = b->d[r];
    if (b->cpu < a->cpu)
        a->cpu = b->cpu;
}

static bool volume_is_zero(const struct fs_volume *v)
{
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (r != PS_RES_CPU && v->d[r] != 0.0)
            return false;
    return v->cpu == 0;
}

/* A TDuration in seconds: microseconds / 1e6. */
static double seconds_of_ms(int64_t ms)
{
    return (double)(ms * 1000) / 1e6;
}

/* TotalResourceLimits * ratio, every resource rounded (cpu to hundredths), saturating (a
 * ratio can be any finite double). */
static struct ps_resources resources_times(const struct ps_resources *r, double k)
{
    struct ps_resources out;
    for (int i = 0; i < PS_RES_COUNT; i++)
        out.v[i] = ps_i64_of_double(round((double)r->v[i] * k));
    return out;
}

void fs_volume_capacity(const struct ps_fs_update *u, double flow_ratio, struct fs_volume *out)
{
    struct ps_resources flow = resources_times(&u->total, flow_ratio);
    volume_of(&flow, seconds_of_ms(u->options->integral_pool_capacity_saturation_period_ms), out);
}

/* ---- consume and refill ------------------------------------------------------------------- */

static void update_accumulated_volume(struct ps_fs_update *u, struct fs_elem *e)
{
    if (ps_resources_is_zero(u->total) || !u->input->has_previous_update)
        return;
    int64_t period_ms = u->input->now_ms - u->input->previous_update_time_ms;
    if (period_ms < 0)
        period_ms = 0;
    struct fs_volume old = e->ig->volume, capacity, period, part, zero;
    memset(&zero, 0, sizeof zero);
    fs_volume_capacity(u, e->ig->flow_ratio, &capacity);
    volume_of(&u->total, seconds_of_ms(period_ms), &period);
    part = period;
    volume_scale(&part, e->ig->flow_ratio);
    volume_add(&e->ig->volume, &part, +1);
    part = period;
    volume_scale(&part, e->ig->last_share_ratio);
    volume_add(&e->ig->volume, &part, -1);
    volume_max(&e->ig->volume, &zero);
    /* A larger existing volume (from a larger flow before) is kept, not shrunk to capacity. */
    struct fs_volume upper = old;
    volume_max(&upper, &capacity);
    e->ig->overflow = e->ig->volume;
    volume_add(&e->ig->overflow, &upper, -1);
    volume_max(&e->ig->overflow, &zero);
    if (e->ig->can_accept_free_volume) {
        e->ig->acceptable = capacity;
        volume_add(&e->ig->acceptable, &e->ig->volume, -1);
        volume_max(&e->ig->acceptable, &zero);
    }
    volume_min(&e->ig->volume, &upper);
}

/* UpdateOverflowAndAcceptableVolumesRecursively for non-integral composites, bottom-up. */
static void update_overflow_and_acceptable(struct ps_fs_update *u)
{
    for (int q = u->pool_elem_count - 1; q >= 0; q--) {
        int i = u->pool_elems[q];
        struct fs_elem *e = &u->el[i];
        if (e->gtype != PS_GUARANTEE_NONE)
            continue;
        struct fs_volume acceptable;
        memset(&acceptable, 0, sizeof acceptable);
        memset(&e->ig->children_overflow, 0, sizeof e->ig->children_overflow);
        for (int k = 0; k < e->child_count; k++) {
            const struct fs_elem *c = &u->el[u->children[e->first_child + k]];
            if (!c->is_pool)
                continue;
            volume_add(&e->ig->children_overflow, &c->ig->overflow, +1);
            volume_add(&acceptable, &c->ig->acceptable, +1);
        }
        bool can_accept = i != 0 && e->ig->can_accept_free_volume;
        for (int r = 0; r < PS_RES_COUNT; r++) {
            if (r == PS_RES_CPU)
                continue;
            double diff = e->ig->children_overflow.d[r] - acceptable.d[r];
            e->ig->overflow.d[r] = diff > 0 ? diff : 0.0;
            e->ig->acceptable.d[r] = diff > 0 ? 0.0 : (can_accept ? -diff : 0.0);
        }
        int64_t diff = ps_i64_sub_sat(e->ig->children_overflow.cpu, acceptable.cpu);
        e->ig->overflow.cpu = diff > 0 ? diff : 0;
        e->ig->acceptable.cpu = diff > 0 ? 0 : (can_accept ? ps_i64_sub_sat(0, diff) : 0);
    }
}

/* (key, index) ascending; the element index breaks ties so the order is total. */
static bool key_less(const double *key, const int *idx, int a, int b)
{
    if (key[a] != key[b])
        return key[a] < key[b];
    return idx[a] < idx[b];
}

static void swap_entries(double *key, int *idx, int a, int b)
{
    double k = key[a];
    key[a] = key[b];
    key[b] = k;
    int t = idx[a];
    idx[a] = idx[b];
    idx[b] = t;
}

static void sift_down(double *key, int *idx, int root, int n)
{
    for (;;) {
        int child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && key_less(key, idx, child, child + 1))
            child++;
        if (!key_less(key, idx, root, child))
            return;
        swap_entries(key, idx, root, child);
        root = child;
    }
}

static void sort_by_key(double *key, int *idx, int n)
{
    for (int i = n / 2 - 1; i >= 0; i--)
        sift_down(key, idx, i, n);
    for (int end = n - 1; end > 0; end--) {
        swap_entries(key, idx, 0, end);
        sift_down(key, idx, 0, end);
    }
}

/* The free volume of one resource shared among the hungry children of e, in proportion to their
 * total resource flow; children that cannot take their part are saturated first. */
static void distribute_resource(struct ps_fs_update *u, const struct fs_elem *e, struct fs_volume *free_volume,
                                int r)
{
    int *hungry = u->stack;
    double *key = u->dscratch;
    int n = 0;
    double weight_sum = 0.0;
    for (int k = 0; k < e->child_count; k++) {
        int ci = u->children[e->first_child + k];
        const struct fs_elem *c = &u->el[ci];
        if (volume_get(&c->ig->acceptable, r) > FS_EPSILON && c->ig->total_flow_ratio > FS_EPSILON) {
            key[n] = volume_get(&c->ig->acceptable, r) / c->ig->total_flow_ratio;
            hungry[n++] = ci;
            weight_sum += c->ig->total_flow_ratio;
        }
    }
    sort_by_key(key, hungry, n);
    int k = 0;
    for (; k < n; k++) {
        struct fs_elem *c = &u->el[hungry[k]];
        double w = c->ig->total_flow_ratio;
        double suggested = volume_get(free_volume, r) * (w / weight_sum);
        if (r == PS_RES_CPU) {
            if (ps_i64_of_double(round(suggested * PS_CPU_SCALE)) < c->ig->acceptable.cpu)
                break;
            c->ig->accepted_free.cpu = c->ig->acceptable.cpu;
            free_volume->cpu = ps_i64_sub_sat(free_volume->cpu, c->ig->acceptable.cpu);
        } else {
            if (suggested < c->ig->acceptable.d[r])
                break;
            c->ig->accepted_free.d[r] = c->ig->acceptable.d[r];
            free_volume->d[r] -= c->ig->acceptable.d[r];
        }
        weight_sum -= w;
    }
    for (; k < n; k++) {
        struct fs_elem *c = &u->el[hungry[k]];
        double suggested = volume_get(free_volume, r) * (c->ig->total_flow_ratio / weight_sum);
        if (r == PS_RES_CPU)
            c->ig->accepted_free.cpu = ps_i64_of_double(round(suggested * PS_CPU_SCALE));
        else
            c->ig->accepted_free.d[r] = suggested;
    }
}

/* DistributeFreeVolume, top-down from the root; integral pools keep what they receive and do
 * not pass it on. */
static void distribute_free_volume(struct ps_fs_update *u)
{
    bool *reached = (bool *)u->order;  /* scratch, one flag per element */
    memset(reached, 0, (size_t)u->count * sizeof *reached);
    reached[0] = true;
    for (int i = 0; i < u->count; i++) {
        struct fs_elem *e = &u->el[i];
        if (!reached[i] || e->kind == PS_ELEM_OPERATION)
            continue;
        struct fs_volume free_volume = e->ig->accepted_free;
        if (e->gtype != PS_GUARANTEE_NONE) {
            if (!volume_is_zero(&free_volume))
                volume_add(&e->ig->volume, &free_volume, +1);
            continue;
        }
        if (i != 0 && e->ig->distributes_free_volume &&
            !(volume_is_zero(&free_volume) && volume_is_zero(&e->ig->children_overflow))) {
            volume_add(&free_volume, &e->ig->children_overflow, +1);
            for (int r = 0; r < PS_RES_COUNT; r++) {
                if (volume_get(&free_volume, r) == 0.0)
                    continue;
                distribute_resource(u, e, &free_volume, r);
            }
        }
        for (int k = 0; k < e->child_count; k++)
            reached[u->children[e->first_child + k]] = true;
    }
}

void fs_consume_and_refill(struct ps_fs_update *u)
{
    for (int k = 0; k < u->burst_count; k++)
        update_accumulated_volume(u, &u->el[u->burst[k]]);
    for (int k = 0; k < u->relaxed_count; k++)
        update_accumulated_volume(u, &u->el[u->relaxed[k]]);
    update_overflow_and_acceptable(u);
    distribute_free_volume(u);
}

/* ---- hierarchical shares ------------------------------------------------------------------ */

struct ps_share fs_adjust_proposed_integral_share(struct ps_share limits, struct ps_share sg,
                                                  struct ps_share proposed)
{
    if (ps_share_dominates(limits, ps_share_add(sg, proposed)))
        return proposed;
    /* A precision error: take what is left under the limits, an ulp lower where needed. */
    proposed = ps_share_sub(limits, sg);
    for (int r = 0; r < PS_RES_COUNT; r++)
        for (int it = 0; it < 32 && limits.v[r] < sg.v[r] + proposed.v[r]; it++)
            proposed.v[r] = nextafter(proposed.v[r], 0.0);
    return proposed;
}

struct ps_share fs_hierarchical_available_limits(const struct ps_fs_update *u, int i)
{
    struct ps_share result = ps_share_fill(1.0);
    for (; i != 0; i = u->el[i].parent) {
        const struct fs_elem *e = &u->el[i];
        result = ps_share_min(result, ps_share_sub(e->out->limits_share, fs_guarantee_share(e)));
    }
    return result;
}

void fs_increase_hierarchical_integral_share(struct ps_fs_update *u, int i, struct ps_share delta)
{
    for (; i >= 0; i = u->el[i].parent) {
        struct fs_elem *e = &u->el[i];
        struct ps_share increased = ps_share_add(e->ig->proposed, delta);
        /* The root may be overcommitted: strong guarantees can be reused as relaxed shares. */
        if (i != 0)
            increased = fs_adjust_proposed_integral_share(e->out->limits_share, e->ig->sg_share, increased);
        e->ig->proposed = increased;
        if (i == 0)
            break;
    }
}

static double share_ratio_by_volume(const struct ps_fs_update *u, const struct fs_elem *e)
{
    return fs_volume_min_ratio(&e->ig->volume, &u->total) / seconds_of_ms(u->options->integral_smooth_period_ms);
}

/* ---- burst pools -------------------------------------------------------------------------- */

void fs_update_burst_shares(struct ps_fs_update *u)
{
    for (int k = 0; k < u->burst_count; k++) {
        int i = u->burst[k];
        struct fs_elem *e = &u->el[i];
        double by_volume = share_ratio_by_volume(u, e);
        double ratio = by_volume < e->ig->burst_ratio ? by_volume : e->ig->burst_ratio;
        struct ps_share proposed = ps_share_min(ps_share_fill(ratio), fs_hierarchical_available_limits(u, i));
        proposed = fs_adjust_proposed_integral_share(e->out->limits_share, e->ig->sg_share, proposed);
        /* The share the pool would use with the burst guarantee on top of its strong one. */
        e->ig->proposed = proposed;
        fs_prepare_subtree(u, i);
        e->ig->proposed = ps_share_fill(0.0);
        struct ps_share within;
        ps_plf_value_at(&e->fsbs, 0.0, within.v);
        struct ps_share integral = ps_share_max(ps_share_sub(within, e->ig->sg_share), ps_share_fill(0.0));
        fs_increase_hierarchical_integral_share(u, i, integral);
        e->prepared = false;
        e->ig->last_share_ratio = ps_share_max_component(integral);
    }
}

/* ---- relaxed pools ------------------------------------------------------------------------ */

struct relaxed_fit {
    const struct ps_fs_update *u;
    const int *pools;
    const double *weights;
    int count;
    struct ps_share available;
};

static bool relaxed_fits(double f, void *arg)
{
    const struct relaxed_fit *c = arg;
    struct ps_share sum = ps_share_fill(0.0);
    for (int k = 0; k < c->count; k++) {
        const struct fs_elem *e = &c->u->el[c->pools[k]];
        double x = f * c->weights[k];
        double s = x < 1.0 ? x : 1.0;
        struct ps_share fs;
        ps_plf_value_at(&e->fsbs, s, fs.v);
        sum = ps_share_add(sum, ps_share_max(ps_share_sub(fs, e->ig->sg_share), ps_share_fill(0.0)));
    }
    return ps_share_dominates(c->available, sum);
}

void fs_update_relaxed_shares(struct ps_fs_update *u)
{
    if (u->relaxed_count == 0)
        return;
    const struct fs_elem *root = &u->el[0];
    struct ps_share available = ps_share_fill(1.0);
    for (int k = 0; k < root->child_count; k++) {
        const struct fs_elem *c = &u->el[u->children[root->first_child + k]];
        available = ps_share_sub(available, ps_share_min(fs_guarantee_share(c), c->out->demand_share));
    }
    /* Overcommitted guarantees leave nothing, never less. */
    available = ps_share_max(available, ps_share_fill(0.0));

    /* Pools with a volume, their weights (volume ratios) and original limits. The burst list is
     * finished, so its array serves as the list of participating pools. */
    int *pools = u->burst;
    double *weights = u->dscratch;
    struct ps_share *saved = (struct ps_share *)ps_arena_alloc(&u->persistent,
                                                                (size_t)u->relaxed_count * sizeof *saved);
    if (!saved) {
        u->oom = true;
        return;
    }
    int n = 0;
    for (int k = 0; k < u->relaxed_count; k++) {
        int i = u->relaxed[k];
        struct fs_elem *e = &u->el[i];
        double ratio = share_ratio_by_volume(u, e);
        if (ratio == 0)
            continue;
        pools[n] = i;
        weights[n] = ratio;
        saved[n] = e->out->limits_share;
        n++;
        double multiplier = fs_pool_in(e)->relaxed_share_multiplier_limit > 0 ? fs_pool_in(e)->relaxed_share_multiplier_limit
                                                                      : u->options->relaxed_share_multiplier_limit;
        struct ps_share limit = ps_share_min(ps_share_fill(ratio),
                                             ps_share_scale(ps_share_fill(e->ig->flow_ratio), multiplier));
        limit = ps_share_add(limit, e->ig->sg_share);
        e->out->limits_share = ps_share_min(e->out->limits_share, limit);
        fs_prepare_subtree(u, i);
    }
    if (n == 0)
        return;
    double min_weight = weights[0];
    for (int k = 1; k < n; k++)
        if (weights[k] < min_weight)
            min_weight = weights[k];
    for (int k = 0; k < n; k++)
        weights[k] = weights[k] / min_weight;

    struct relaxed_fit fit = {u, pools, weights, n, available};
    double f = ps_bisect_inverse_lower_bound(0.0, 1.0, relaxed_fits, &fit);
    for (int k = 0; k < n; k++) {
        int i = pools[k];
        struct fs_elem *e = &u->el[i];
        double x = f * weights[k];
        double s = x < 1.0 ? x : 1.0;
        struct ps_share within;
        ps_plf_value_at(&e->fsbs, s, within.v);
        struct ps_share integral = ps_share_max(ps_share_sub(within, e->ig->sg_share), ps_share_fill(0.0));
        e->out->limits_share = saved[k];
        struct ps_share limited = ps_share_min(integral, fs_hierarchical_available_limits(u, i));
        fs_increase_hierarchical_integral_share(u, i, limited);
        e->prepared = false;
        e->ig->last_share_ratio = ps_share_max_component(limited);
    }
}
