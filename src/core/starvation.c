/* starvation.c — GetStatusImpl / CheckForStarvationImpl over a tree in one top-down pass. */
#include "core/starvation.h"

#include <string.h>

#define LARGE_EPSILON 1e-4   /* NVectorHdrf::LargeEpsilon: "fair share covers demand" */

const char *ps_sched_status_name(enum ps_sched_status s)
{
    return s == PS_STATUS_BELOW_FAIR_SHARE ? "below_fair_share" : "normal";
}

const char *ps_starvation_status_name(enum ps_starvation_status s)
{
    switch (s) {
    case PS_NON_STARVING: return "non_starving";
    case PS_STARVING: return "starving";
    case PS_AGGRESSIVELY_STARVING: return "aggressively_starving";
    }
    return "unknown";
}

void ps_starvation_config_init(struct ps_starvation_config *c)
{
    c->tolerance = 0.8;
    c->timeout_ms = 30000;
    c->aggressive_timeout_ms = 120000;
    c->enable_aggressive_starvation = false;
    c->enable_pool_starvation = true;
    c->allocation_count_preemption_timeout_coefficient = 1.0;
}

void ps_starvation_element_init(struct ps_starvation_element *e, enum ps_element_kind kind,
                                int parent)
{
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->parent = parent;
    e->schedulable = true;
    e->below_fair_share_since_ms = PS_STARVATION_NEVER;
    e->lowest_starving_ancestor = -1;
    e->lowest_aggressively_starving_ancestor = -1;
}

bool ps_strictly_dominates_non_blocked(const struct ps_share *fair, const struct ps_share *demand,
                                       const struct ps_share *lhs, const struct ps_share *rhs)
{
    if (ps_share_dominates(*fair, *demand)) {   /* every resource blocked */
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (lhs->v[r] > rhs->v[r])
                return true;
        return false;
    }
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if (fair->v[r] >= demand->v[r])
            continue;   /* blocked */
        if (!(lhs->v[r] > rhs->v[r]))
            return false;
    }
    return true;
}

static enum ps_sched_status status_of(const struct ps_starvation_element *e, double tolerance)
{
    struct ps_share bound = ps_share_min(ps_share_scale(e->fair_share, tolerance), e->demand_share);
    return ps_strictly_dominates_non_blocked(&e->fair_share, &e->demand_share, &bound,
                                             &e->usage_share)
               ? PS_STATUS_BELOW_FAIR_SHARE : PS_STATUS_NORMAL;
}

static int check_settings(const struct ps_starvation_settings *s, int i, struct ps_error *err)
{
    if (s->has_tolerance && !(s->tolerance >= 0.0 && s->tolerance <= 10.0))
        return ps_error_set(err, PS_EINVAL,
                            "element %d: fair_share_starvation_tolerance %g is outside [0, 10]",
                            i, s->tolerance);
    if ((s->has_timeout && s->timeout_ms < 0) ||
        (s->has_aggressive_timeout && s->aggressive_timeout_ms < 0))
        return ps_error_set(err, PS_EINVAL, "element %d: a starvation timeout is negative", i);
    return 0;
}

/* Effective settings from the parent (already computed) and the element's own values. */
static void derive_settings(struct ps_starvation_element *e, const struct ps_starvation_element *p,
                            const struct ps_starvation_config *c)
{
    const struct ps_starvation_settings *s = &e->spec;
    if (!p) {
        e->effective_tolerance = s->has_tolerance ? s->tolerance : c->tolerance;
        e->effective_timeout_ms = s->has_timeout ? s->timeout_ms : c->timeout_ms;
        e->effective_aggressive_timeout_ms =
            s->has_aggressive_timeout ? s->aggressive_timeout_ms : c->aggressive_timeout_ms;
        e->aggressive_enabled =
            s->has_enable_aggressive ? s->enable_aggressive : c->enable_aggressive_starvation;
        return;
    }
    if (e->kind != PS_ELEM_OPERATION) {
        e->effective_tolerance = s->has_tolerance ? s->tolerance : p->effective_tolerance;
        e->effective_timeout_ms = s->has_timeout ? s->timeout_ms : p->effective_timeout_ms;
        e->effective_aggressive_timeout_ms = s->has_aggressive_timeout
                                                 ? s->aggressive_timeout_ms
                                                 : p->effective_aggressive_timeout_ms;
        e->aggressive_enabled =
            s->has_enable_aggressive ? s->enable_aggressive : p->aggressive_enabled;
        return;
    }
    /* Operations may only make starvation harder to reach than their pool allows. */
    e->effective_tolerance = p->effective_tolerance;
    if (s->has_tolerance && s->tolerance < e->effective_tolerance)
        e->effective_tolerance = s->tolerance;
    e->effective_timeout_ms = p->effective_timeout_ms;
    if (s->has_timeout && s->timeout_ms > e->effective_timeout_ms)
        e->effective_timeout_ms = s->timeout_ms;
    e->effective_aggressive_timeout_ms = p->effective_aggressive_timeout_ms;
    if (s->has_aggressive_timeout && s->aggressive_timeout_ms > e->effective_aggressive_timeout_ms)
        e->effective_aggressive_timeout_ms = s->aggressive_timeout_ms;
    e->aggressive_enabled = p->aggressive_enabled;
    double coef = c->allocation_count_preemption_timeout_coefficient;
    if (coef > 0.0) {
        double ratio = (double)e->pending_count / coef;
        if (ratio < 1.0) {
            e->effective_timeout_ms = (int64_t)((double)e->effective_timeout_ms * ratio);
            e->effective_aggressive_timeout_ms =
                (int64_t)((double)e->effective_aggressive_timeout_ms * ratio);
        }
    }
}

/* The starvation check_for_starvation gives an element below fair share since since. */
static enum ps_starvation_status starvation_at(const struct ps_starvation_element *e,
                                               int64_t since, int64_t now_ms)
{
    if (e->aggressive_enabled && now_ms - since > e->effective_aggressive_timeout_ms)
        return PS_AGGRESSIVELY_STARVING;
    if (now_ms - since > e->effective_timeout_ms)
        return PS_STARVING;
    return e->starvation;
}

static void check_for_starvation(struct ps_starvation_element *e, int64_t now_ms)
{
    if (e->status != PS_STATUS_BELOW_FAIR_SHARE) {
        e->below_fair_share_since_ms = PS_STARVATION_NEVER;
        e->starvation = PS_NON_STARVING;
        return;
    }
    if (e->below_fair_share_since_ms == PS_STARVATION_NEVER) {
        e->below_fair_share_since_ms = now_ms;   /* the clock starts; status unchanged */
        return;
    }
    e->starvation = starvation_at(e, e->below_fair_share_since_ms, now_ms);
}

static bool can_starve(const struct ps_starvation_element *e,
                       const struct ps_starvation_config *config)
{
    return e->kind == PS_ELEM_OPERATION ||
           (e->kind == PS_ELEM_POOL && config->enable_pool_starvation);
}

/* The first time after a timeout's expiry, since + timeout + 1 (the check is strict), or
 * INT64_MAX past the clock's end. */
static int64_t expiry(int64_t since, int64_t timeout_ms)
{
    return since > INT64_MAX - 1 - timeout_ms ? INT64_MAX : since + timeout_ms + 1;
}

int64_t ps_starvation_next_change_ms(const struct ps_starvation_element *elems, int count,
                                     const struct ps_starvation_config *config,
                                     int64_t after_ms)
{
    int64_t due = INT64_MAX;
    for (int i = 1; i < count; i++) {
        const struct ps_starvation_element *e = &elems[i];
        if (e->status != PS_STATUS_BELOW_FAIR_SHARE || !can_starve(e, config))
            continue;
        int64_t since = e->below_fair_share_since_ms;
        if (since == PS_STARVATION_NEVER)
            return after_ms + 1;   /* the next check starts its clock */
        /* The status is a step function of time with steps only at the two expiries. */
        int64_t at[2] = {expiry(since, e->effective_timeout_ms),
                         e->aggressive_enabled ? expiry(since, e->effective_aggressive_timeout_ms)
                                               : INT64_MAX};
        if (at[1] < at[0]) {
            int64_t t = at[0];
            at[0] = at[1];
            at[1] = t;
        }
        for (int k = 0; k < 2; k++)
            if (at[k] > after_ms && at[k] < due && at[k] != INT64_MAX &&
                starvation_at(e, since, at[k]) != e->starvation) {
                due = at[k];
                break;
            }
    }
    return due;
}

int ps_starvation_update(struct ps_starvation_element *elems, int count,
                         const struct ps_starvation_config *config, int64_t now_ms,
                         int *changed_count, struct ps_error *err)
{
    if (changed_count)
        *changed_count = 0;
    if (count < 1 || elems[0].kind != PS_ELEM_ROOT || elems[0].parent != -1)
        return ps_error_set(err, PS_EINVAL, "starvation update: element 0 must be the root");
    for (int i = 0; i < count; i++) {
        struct ps_starvation_element *e = &elems[i];
        if (i > 0 && (e->parent < 0 || e->parent >= i || e->kind == PS_ELEM_ROOT ||
                      elems[e->parent].kind == PS_ELEM_OPERATION))
            return ps_error_set(err, PS_EINVAL,
                                "starvation update: element %d has parent %d; parents must be "
                                "pools that come before their children", i, e->parent);
        int rc = check_settings(&e->spec, i, err);
        if (rc)
            return rc;
    }
    int changed = 0;
    for (int i = 0; i < count; i++) {
        struct ps_starvation_element *e = &elems[i];
        const struct ps_starvation_element *p = i > 0 ? &elems[e->parent] : NULL;
        derive_settings(e, p, config);
        e->previous_starvation = e->starvation;

        if (e->kind == PS_ELEM_OPERATION) {
            struct ps_share covered = ps_share_add(e->fair_share, ps_share_fill(LARGE_EPSILON));
            double tol = ps_share_dominates(covered, e->demand_share) ? 1.0 : e->effective_tolerance;
            e->status = e->schedulable ? status_of(e, tol) : PS_STATUS_NORMAL;
        } else {
            e->status = status_of(e, e->effective_tolerance);
        }

        if (can_starve(e, config)) {
            check_for_starvation(e, now_ms);
        } else {
            e->below_fair_share_since_ms = PS_STARVATION_NEVER;
            e->starvation = PS_NON_STARVING;
        }
        if (e->starvation != e->previous_starvation)
            changed++;

        e->lowest_starving_ancestor = e->starvation != PS_NON_STARVING
                                          ? i : (p ? p->lowest_starving_ancestor : -1);
        e->lowest_aggressively_starving_ancestor =
            e->starvation == PS_AGGRESSIVELY_STARVING
                ? i : (p ? p->lowest_aggressively_starving_ancestor : -1);
    }
    if (changed_count)
        *changed_count = changed;
    return 0;
}
