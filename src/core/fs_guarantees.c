/* fs_guarantees.c — strong guarantees: inference of unspecified resources, validation against
 * the cluster (alerts), proportional adjustment to limits and parents; effective weights. */
#include <math.h>

#include "core/bisect.h"
#include "core/fs_internal.h"

/* upstream GetResource / SetResource: cpu travels as a double of cores and is rounded back to
 * hundredths; the integer resources are truncated when set from a double. Beyond int64
 * upstream's static_cast is undefined (x86 gives INT64_MIN, a negative guarantee): here a
 * value saturates at PS_RES_INFINITE, so an explicit guarantee far above the cluster infers
 * "unlimited" for the others, their sums stay in range (ps_resources_add_sat), and the
 * adjustment below scales the shares down with its alert. */
static double get_resource(const struct ps_resources *r, int i)
{
    return ps_res_get(r, i);
}

static void set_resource(struct ps_resources *r, int i, double value)
{
    int64_t v = ps_i64_of_double(i == PS_RES_CPU ? round(value * PS_CPU_SCALE) : value);
    r->v[i] = v < PS_RES_INFINITE ? v : PS_RES_INFINITE;
}

/* The strong_guarantee_resources a child specifies: a pool's config, an operation's spec. */
static const struct ps_resources_opt *specified_guarantee(const struct fs_elem *c)
{
    return c->kind == PS_ELEM_OPERATION ? &c->in->strong_guarantee : &fs_pool_in(c)->strong_guarantee;
}

static struct ps_resources explicit_guarantee(const struct ps_resources_opt *sg)
{
    struct ps_resources own = ps_resources_zero();
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (sg->set >> r & 1)
            own.v[r] = sg->r.v[r];
    return own;
}

/* DetermineInferredStrongGuaranteeResources, top-down: explicit values as configured, every
 * other resource in proportion to the main resource, scaled below the root to fit the parent's
 * residual guarantee. Operations take part as children like pools (their explicit and implicit
 * values count in the parent's residual and scaling, as upstream), but keep nothing: their
 * state is the shared zero entry and they never get a strong guarantee share. A child's main
 * resource is never implicit, so its inferred main value is its explicit one. */
void fs_determine_inferred_strong_guarantees(struct ps_fs_update *u)
{
    int main = u->options->main_resource;
    u->el[0].ig->inferred_sg = u->total;
    double *implicit = u->dscratch;
    int *takes_part = u->stack;   /* free until the pre-order of init_integral_lists */
    for (int q = 0; q < u->pool_elem_count; q++) {
        int i = u->pool_elems[q];
        struct fs_elem *e = &u->el[i];
        if (e->child_count == 0)
            continue;
        const int *kids = u->children + e->first_child;
        struct ps_resources explicit_total = ps_resources_zero();
        /* An operation without a specified guarantee adds nothing anywhere below (explicit 0;
         * implicit ratio 0 of non-negative values, a +0 added to the non-negative sum), so
         * only the others take part: the same sums, without reading most operations' inputs
         * five times. */
        int n = 0;
        for (int k = 0; k < e->child_count; k++) {
            struct fs_elem *c = &u->el[kids[k]];
            if (c->kind == PS_ELEM_OPERATION && !c->has_guarantee)
                continue;
            takes_part[n++] = kids[k];
            struct ps_resources own = explicit_guarantee(specified_guarantee(c));
            if (c->kind != PS_ELEM_OPERATION)
                c->ig->inferred_sg = own;
            explicit_total = ps_resources_add_sat(explicit_total, own);
        }
        if (n == 0)
            continue;   /* no child to infer for (most pools: operations only) */
        struct ps_resources residual =
            ps_resources_max(ps_resources_sub(e->ig->inferred_sg, explicit_total), ps_resources_zero());
        double parent_main = get_resource(&e->ig->inferred_sg, main);
        for (int r = 0; r < PS_RES_COUNT; r++) {
            if (r == main)
                continue;
            double parent_value = get_resource(&e->ig->inferred_sg, r);
            double total_implicit = 0.0;
            for (int k = 0; k < n; k++) {
                const struct ps_resources_opt *sg = specified_guarantee(&u->el[takes_part[k]]);
                if (sg->set >> r & 1) {
                    implicit[k] = -1.0;
                    continue;
                }
                struct ps_resources own_main = ps_resources_zero();
                if (sg->set >> main & 1)
                    own_main.v[main] = sg->r.v[main];
                double child_main = get_resource(&own_main, main);
                double ratio = parent_main > 0 ? child_main / parent_main : 0.0;
                implicit[k] = ratio * parent_value;
                total_implicit += implicit[k];
            }
            double residual_value = get_resource(&residual, r);
            /* Overcommit at the root is allowed here and handled by the share adjustment. */
            if (i != 0 && total_implicit > residual_value) {
                double scale = residual_value / total_implicit;
                for (int k = 0; k < n; k++)
                    if (implicit[k] >= 0.0)
                        implicit[k] *= scale;
            }
            for (int k = 0; k < n; k++)
                if (implicit[k] >= 0.0 && u->el[takes_part[k]].kind != PS_ELEM_OPERATION)
                    set_resource(&u->el[takes_part[k]].ig->inferred_sg, r, implicit[k]);
        }
    }
}

static struct ps_resources scale_resources(const struct ps_resources *r, double k)
{
    struct ps_resources out;
    for (int i = 0; i < PS_RES_COUNT; i++)
        out.v[i] = ps_i64_of_double(round((double)r->v[i] * k));
    return out;
}

struct burst_fit {
    const struct ps_fs_update *u;
};

static bool root_guarantees_fit(double f, void *arg)
{
    const struct ps_fs_update *u = ((struct burst_fit *)arg)->u;
    struct ps_share sum = ps_share_scale(u->el[0].ig->sg_share, f);
    for (int k = 0; k < u->burst_count; k++)
        sum = ps_share_add(sum, ps_share_scale(ps_share_fill(u->el[u->burst[k]].ig->burst_ratio), f));
    return ps_share_dominates(ps_share_fill(1.0), sum);
}

struct children_fit {
    const struct ps_fs_update *u;
    const struct fs_elem *e;
};

static bool children_guarantees_fit(double f, void *arg)
{
    const struct children_fit *c = arg;
    struct ps_share sum = ps_share_fill(0.0);
    for (int k = 0; k < c->e->child_count; k++)
        sum = ps_share_add(sum, ps_share_scale(c->u->el[c->u->children[c->e->first_child + k]].ig->sg_share, f));
    return ps_share_dominates(c->e->ig->sg_share, sum);
}

/* ValidateAndAdjustSpecifiedGuarantees and AdjustStrongGuarantees. */
void fs_validate_and_adjust_guarantees(struct ps_fs_update *u)
{
    struct fs_elem *root = &u->el[0];
    struct ps_resources flow = scale_resources(&u->total, root->ig->total_flow_ratio);
    struct ps_resources burst = scale_resources(&u->total, root->ig->total_burst_ratio);
    struct ps_resources strong = ps_resources_zero();
    for (int k = 0; k < root->child_count; k++)
        strong = ps_resources_add_sat(strong, u->el[u->children[root->first_child + k]].ig->inferred_sg);

    if (!ps_resources_fit(ps_resources_add_sat(strong, flow), u->total))
        fs_add_alert(u, "strong guarantees and resource flows exceed total cluster resources "
                        "(total strong guarantee cpu %.2f, total resource flow cpu %.2f, cluster cpu %.2f)",
                     ps_res_get(&strong, PS_RES_CPU), ps_res_get(&flow, PS_RES_CPU),
                     ps_res_get(&u->total, PS_RES_CPU));
    if (!ps_resources_fit(ps_resources_add_sat(strong, burst), u->total)) {
        fs_add_alert(u, "strong guarantees and burst guarantees exceed total cluster resources "
                        "(total strong guarantee cpu %.2f, total burst cpu %.2f, cluster cpu %.2f)",
                     ps_res_get(&strong, PS_RES_CPU), ps_res_get(&burst, PS_RES_CPU),
                     ps_res_get(&u->total, PS_RES_CPU));
        /* One factor for the root's strong guarantee and every burst ratio, found by bisection
         * rather than division so that the scaled sum surely fits. */
        struct burst_fit fit = {u};
        double f = ps_bisect_inverse_lower_bound(0.0, 1.0, root_guarantees_fit, &fit);
        root->ig->sg_share = ps_share_scale(root->ig->sg_share, f);
        for (int k = 0; k < u->burst_count; k++)
            u->el[u->burst[k]].ig->burst_ratio *= f;
    }

    /* Top-down: a guarantee never exceeds the limits, children never exceed their parent. */
    for (int q = 0; q < u->pool_elem_count; q++) {
        struct fs_elem *e = &u->el[u->pool_elems[q]];
        e->ig->sg_share = ps_share_min(e->ig->sg_share, e->out->limits_share);
        struct ps_share sum = ps_share_fill(0.0);
        for (int k = 0; k < e->child_count; k++)
            sum = ps_share_add(sum, u->el[u->children[e->first_child + k]].ig->sg_share);
        if (ps_share_dominates(e->ig->sg_share, sum))
            continue;
        struct children_fit fit = {u, e};
        double f = ps_bisect_inverse_lower_bound(0.0, 1.0, children_guarantees_fit, &fit);
        for (int k = 0; k < e->child_count; k++) {
            struct fs_elem *c = &u->el[u->children[e->first_child + k]];
            if (c->kind != PS_ELEM_OPERATION)   /* zero stays zero */
                c->ig->sg_share = ps_share_scale(c->ig->sg_share, f);
        }
    }
}

/* Weights of pools: specified, or inferred from the guarantee share relative to the parent's
 * when the tree asks for it; always within upstream's schedulable range [sqrt(eps), 1/sqrt(eps)]
 * so that ratios of weights keep their precision. */
void fs_compute_weights(struct ps_fs_update *u)
{
    double multiplier = u->options->infer_weight_from_guarantees_share_multiplier;
    for (int q = 1; q < u->pool_elem_count; q++) {   /* operations got theirs in init_elements */
        struct fs_elem *e = &u->el[u->pool_elems[q]];
        double w = 1.0;
        if (e->in->weight_specified) {
            w = e->in->weight;
        } else if (multiplier > 0.0) {
            double self = ps_share_max_component(e->ig->sg_share) + e->ig->total_flow_ratio;
            const struct fs_elem *p = &u->el[e->parent];
            double parent = ps_share_max_component(p->ig->sg_share) + p->ig->total_flow_ratio;
            w = (self < FS_EPSILON || parent < FS_EPSILON) ? 1.0 : self * multiplier / parent;
        }
        e->weight = fs_clamp_weight(w);
    }
}
