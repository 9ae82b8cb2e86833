/* preempt.c — preemptive stages on top of ps_schedule_stage, and victim selection. */
#include "core/preempt.h"

#include <stdlib.h>
#include <string.h>

/* NVectorHdrf::RatioComparisonPrecision = sqrt(double epsilon). */
#define RATIO_COMPARISON_PRECISION 1.4901161193847656e-08

void ps_preempt_config_init(struct ps_preempt_config *c)
{
    c->preemption_satisfaction_threshold = 1.0;
    c->aggressive_preemption_satisfaction_threshold = 0.2;
    c->enable_conditional_preemption = true;
    c->check_starvation = true;
    c->check_satisfaction = true;
    c->priority_operation_only = false;
    c->preemptive_scheduling_backoff_ms = 5000;
    c->allocation_preemption_timeout_ms = 10000;
    c->allocation_graceful_preemption_timeout_ms = 60000;
    c->max_unpreemptible_running_allocation_count = -1;
}

bool ps_preempt_backoff_passed(int64_t last_ms, int64_t now_ms, const struct ps_preempt_config *c)
{
    if (last_ms == PS_PREEMPT_NEVER)
        return true;
    return now_ms - last_ms >= c->preemptive_scheduling_backoff_ms;
}

const char *ps_preempt_reason_name(enum ps_preempt_reason reason)
{
    switch (reason) {
    case PS_PREEMPT_FOR_STARVING: return "preempted_for_starving_operation";
    case PS_PREEMPT_RESOURCE_OVERCOMMIT: return "resource_overcommit";
    case PS_PREEMPT_LIMITS_VIOLATED: return "resource_limits_violated";
    }
    return "unknown";
}

void ps_preempt_result_init(struct ps_preempt_result *r)
{
    memset(r, 0, sizeof *r);
}

void ps_preempt_result_release(struct ps_preempt_result *r)
{
    free(r->victims);
    memset(r, 0, sizeof *r);
}

static int push_victim(struct ps_preempt_result *r, struct ps_preempt_victim v)
{
    if (r->victim_count == r->victim_cap) {
        int cap = r->victim_cap ? 2 * r->victim_cap : 8;
        void *n = realloc(r->victims, (size_t)cap * sizeof *r->victims);
        if (!n)
            return PS_ENOMEM;
        r->victims = n;
        r->victim_cap = cap;
    }
    r->victims[r->victim_count++] = v;
    return 0;
}

static int class_of(const struct ps_preempt_tree *t, const struct ps_node_allocation *a)
{
    const struct ps_preemptible *l = t->ops[a->op].lists;
    return l ? ps_preemptible_class_at(l, a->id, a->slot) : -1;
}

static int64_t timeout_for(const struct ps_preempt_tree *t, const struct ps_node_allocation *a)
{
    return t->ops[a->op].graceful ? t->config->allocation_graceful_preemption_timeout_ms
                                  : t->config->allocation_preemption_timeout_ms;
}

/* ---- victim order ----------------------------------------------------------------------- */

struct cand {
    int k;             /* index into allocs */
    int rank;          /* class; unknown counts as non-preemptible */
    int level;         /* preemption level (enum level), the sort key */
    int64_t start_time_ms;
    int64_t id;
    int blocked_at;    /* -1: preemptible for everybody; else the pool holding the discount */
};

/* Most preemptible first, then newest, then larger id. */
static int cand_cmp(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    if (a->level != b->level)
        return a->level > b->level ? -1 : 1;
    if (a->start_time_ms != b->start_time_ms)
        return a->start_time_ms > b->start_time_ms ? -1 : 1;
    if (a->id != b->id)
        return a->id > b->id ? -1 : 1;
    return 0;
}

static int check_allocs(const struct ps_sched_snapshot *snap, const struct ps_node_allocation *a,
                        int n, struct ps_error *err)
{
    int count = ps_sched_snapshot_element_count(snap);
    for (int k = 0; k < n; k++)
        if (a[k].op < 0 || a[k].op >= count || ps_sched_kind(snap, a[k].op) != PS_ELEM_OPERATION)
            return ps_error_set(err, PS_EINVAL,
                                "allocation %lld on the node names element %d, not an operation",
                                (long long)a[k].id, a[k].op);
    return 0;
}

/* ---- the preemptive stages -------------------------------------------------------------- */

/* Allocation preemption levels (EAllocationPreemptionLevel), lowest first. */
enum level {
    LEVEL_SSD_NON_PREEMPTIBLE = 0,
    LEVEL_SSD_AGGRESSIVELY_PREEMPTIBLE = 1,
    LEVEL_NON_PREEMPTIBLE = 2,
    LEVEL_AGGRESSIVELY_PREEMPTIBLE = 3,
    LEVEL_PREEMPTIBLE = 4,
};

/* What a stage stands for: the operation priority it schedules and its lowest victim level. */
struct stage_kind {
    bool aggressive;
    bool ssd;
    int min_level;
    enum ps_preempt_stage id;
};

static const struct stage_kind SSD_AGGRESSIVE = {true, true, LEVEL_SSD_AGGRESSIVELY_PREEMPTIBLE,
                                                 PS_STAGE_SSD_AGGRESSIVELY_PREEMPTIVE};
static const struct stage_kind SSD_NORMAL = {false, true, LEVEL_NON_PREEMPTIBLE,
                                             PS_STAGE_SSD_PREEMPTIVE};
static const struct stage_kind AGGRESSIVE = {true, false, LEVEL_AGGRESSIVELY_PREEMPTIBLE,
                                             PS_STAGE_AGGRESSIVELY_PREEMPTIVE};
static const struct stage_kind NORMAL = {false, false, LEVEL_PREEMPTIBLE, PS_STAGE_PREEMPTIVE};

/* The allocation's level: its class (an aggressively preemptible one counts as
 * non-preemptible where aggressive preemption is not allowed), moved to the SSD levels when its
 * operation has an SSD disk request on a node with SSD priority preemption. */
static int level_of(const struct ps_preempt_tree *t, const struct ps_node_allocation *a,
                    int cls, bool ssd_node)
{
    if (cls == PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE && t->ops[a->op].aggressive_preemption_disallowed)
        cls = PS_ALLOC_NON_PREEMPTIBLE;
    bool ssd = ssd_node && t->ops[a->op].ssd;
    switch (cls) {
    case PS_ALLOC_PREEMPTIBLE: return LEVEL_PREEMPTIBLE;
    case PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE:
        return ssd ? LEVEL_SSD_AGGRESSIVELY_PREEMPTIBLE : LEVEL_AGGRESSIVELY_PREEMPTIBLE;
    default: return ssd ? LEVEL_SSD_NON_PREEMPTIBLE : LEVEL_NON_PREEMPTIBLE;
    }
}

struct stage_ctx {
    const struct ps_preempt_tree *tree;
    bool aggressive;
    bool ssd;          /* the stage's priority is an SSD one */
    bool ssd_node;     /* SSD priority preemption is on for the node */
    struct ps_resources *cond;   /* per element: conditional discount held at that pool */
    struct ps_resources *disc;   /* per element: unconditional candidates of its subtree */
};

/* The operation's preemption priority (GetOperationPreemptionPriority): with scope
 * operation_and_ancestors its lowest (aggressively) starving ancestor, the operation included;
 * with operation_only its own status. */
static bool priority_at_least(const struct ps_starvation_element *s,
                              const struct ps_preempt_config *config, bool aggressive)
{
    if (config->priority_operation_only)
        return aggressive ? s->starvation == PS_AGGRESSIVELY_STARVING
                          : s->starvation != PS_NON_STARVING;
    return aggressive ? s->lowest_aggressively_starving_ancestor >= 0
                      : s->lowest_starving_ancestor >= 0;
}

/* The operation's priority is the stage's: (aggressive) starvation as priority_at_least, and
 * SSD exactly when the operation's disk request is on an SSD medium and the node has SSD
 * priority preemption on. */
static bool eligible(void *vctx, const struct ps_sched_snapshot *snap, int op)
{
    (void)snap;
    const struct stage_ctx *c = vctx;
    const struct ps_starvation_element *s = &c->tree->starvation[op];
    if (!priority_at_least(s, c->tree->config, c->aggressive))
        return false;
    return (c->ssd_node && c->tree->ops[op].ssd) == c->ssd;
}

static struct ps_resources limit_discount(void *vctx, const struct ps_sched_snapshot *snap, int e)
{
    (void)snap;
    const struct stage_ctx *c = vctx;
    return c->disc[e];
}

static struct ps_resources op_extra(void *vctx, const struct ps_sched_snapshot *snap, int op)
{
    const struct stage_ctx *c = vctx;
    struct ps_resources sum = ps_resources_zero();
    for (int i = ps_sched_parent(snap, op); i >= 0; i = ps_sched_parent(snap, i))
        sum = ps_resources_add(sum, c->cond[i]);
    return sum;
}

/* The element blocking preemption of op's allocations, or -1 (FindPreemptionBlockingAncestor). */
static int blocking_ancestor(const struct ps_sched_snapshot *snap, const struct ps_preempt_tree *t,
                             int op, const struct stage_kind *kind, int level)
{
    const struct ps_preempt_operation *o = &t->ops[op];
    bool aggressive = kind->aggressive;
    if (o->graceful)
        return op;
    if (kind->ssd && level >= LEVEL_NON_PREEMPTIBLE)
        return -1;
    int max = t->config->max_unpreemptible_running_allocation_count;
    int spec = o->max_unpreemptible_running_allocation_count;
    if (spec >= 0 && (max < 0 || spec < max))
        max = spec;
    if (max >= 0 && o->lists && ps_preemptible_running_count(o->lists) <= max)
        return op;
    double threshold = aggressive ? t->config->aggressive_preemption_satisfaction_threshold
                                  : t->config->preemption_satisfaction_threshold;
    for (int i = op; i > 0; i = ps_sched_parent(snap, i)) {
        if (t->config->check_starvation && t->starvation[i].starvation != PS_NON_STARVING)
            return i;
        if (t->config->check_satisfaction &&
            ps_sched_local_satisfaction(snap, i) < threshold + RATIO_COMPARISON_PRECISION)
            return i;
    }
    return -1;
}

static bool is_ancestor(const struct ps_sched_snapshot *snap, int anc, int op)
{
    for (int i = ps_sched_parent(snap, op); i >= 0; i = ps_sched_parent(snap, i))
        if (i == anc)
            return true;
    return false;
}

void ps_preempt_subtree_eligible(const struct ps_sched_snapshot *snap,
                                 const struct ps_starvation_element *starvation,
                                 const struct ps_preempt_config *config, uint8_t *out)
{
    int count = ps_sched_snapshot_element_count(snap);
    for (int i = 0; i < count; i++)
        out[i] = 0;
    /* Parents come before their children: a backward pass sees a subtree before its root. */
    for (int i = count - 1; i >= 0; i--) {
        if (ps_sched_kind(snap, i) == PS_ELEM_OPERATION) {
            if (priority_at_least(&starvation[i], config, false))
                out[i] |= PS_PREEMPT_SUBTREE_STARVING;
            if (priority_at_least(&starvation[i], config, true))
                out[i] |= PS_PREEMPT_SUBTREE_AGGRESSIVELY_STARVING;
        }
        int p = ps_sched_parent(snap, i);
        if (p >= 0)
            out[p] |= out[i];
    }
}

int ps_preempt_eligible_ops(const struct ps_sched_snapshot *snap, const uint8_t *subtree_eligible,
                            int *out)
{
    int count = ps_sched_snapshot_element_count(snap), n = 0;
    for (int i = 0; i < count; i++)
        if (subtree_eligible[i] && ps_sched_kind(snap, i) == PS_ELEM_OPERATION)
            out[n++] = i;
    return n;
}

/* One stage. Returns 1 if it started an allocation, 0 if not, negative on error. cond and
 * disc come all zero; *m receives the candidates whose discounts the stage set. */
static int run_preemptive_stage(struct ps_sched_snapshot *snap, const struct ps_preempt_tree *t,
                                const struct ps_sched_node *node,
                                const struct ps_node_allocation *allocs, const int8_t *classes,
                                int n, const struct stage_kind *kind, const uint8_t *subtree,
                                const int *eligible_ops, int eligible_count, struct cand *cands,
                                struct ps_resources *cond, struct ps_resources *disc,
                                int *cand_count, struct ps_sched_result *sched,
                                struct ps_preempt_result *out, struct ps_error *err)
{
    bool aggressive = kind->aggressive;
    struct ps_resources unconditional = ps_resources_zero(), cond_bound = ps_resources_zero();
    bool any_cond = false;
    int m = 0;
    for (int k = 0; k < n; k++) {
        int cls = classes[k];
        if (cls < 0)
            continue;   /* unknown to its operation's lists, or below every stage (stage_classes) */
        if (cls == PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE && t->ops[allocs[k].op].aggressive_preemption_disallowed)
            cls = PS_ALLOC_NON_PREEMPTIBLE;
        int level = level_of(t, &allocs[k], cls, node->ssd_priority_preemption);
        if (level < kind->min_level)
            continue;
        int b = blocking_ancestor(snap, t, allocs[k].op, kind, level);
        if (b >= 0 && (b == allocs[k].op || !t->config->enable_conditional_preemption))
            continue;
        if (b < 0) {
            unconditional = ps_resources_add(unconditional, allocs[k].resources);
            for (int i = allocs[k].op; i >= 0; i = ps_sched_parent(snap, i))
                disc[i] = ps_resources_add(disc[i], allocs[k].resources);
        } else {
            cond[b] = ps_resources_add(cond[b], allocs[k].resources);
            cond_bound = ps_resources_add(cond_bound, allocs[k].resources);
            any_cond = true;
        }
        cands[m++] = (struct cand){k, cls, level, allocs[k].start_time_ms, allocs[k].id, b};
    }
    *cand_count = m;

    struct stage_ctx ctx = {t, aggressive, kind->ssd, node->ssd_priority_preemption, cond, disc};
    struct ps_sched_stage stage = {
        .extra = unconditional,
        .eligible = eligible,
        .ctx = &ctx,
        .max_allocations = 1,
        .op_extra = any_cond ? op_extra : NULL,
        .op_extra_bound = cond_bound,
        .limit_discount = limit_discount,
        .subtree_eligible = subtree,
        .subtree_eligible_mask = aggressive ? PS_PREEMPT_SUBTREE_AGGRESSIVELY_STARVING
                                            : PS_PREEMPT_SUBTREE_STARVING,
        .candidates = eligible_ops,
        .candidate_count = eligible_count,
    };
    int before = sched->allocation_count;
    int rc = ps_schedule_stage(snap, node, &stage, sched, err);
    if (rc)
        return rc;
    if (sched->allocation_count == before)
        return 0;

    int target = sched->allocations[before].op;
    qsort(cands, (size_t)m, sizeof *cands, cand_cmp);
    struct ps_resources usage = sched->node_usage;
    /* The discounts may have let the allocation exceed the limits of the target or an
     * ancestor (the snapshot counts it already): victims are also taken inside such an element
     * until it fits again (upstream's pool with violated limits), not only until the node fits. */
    int depth = 0;
    for (int i = target; i >= 0; i = ps_sched_parent(snap, i))
        depth++;
    int *path = malloc((size_t)depth * sizeof *path);
    struct ps_resources *path_usage = malloc((size_t)depth * sizeof *path_usage);
    if (!path || !path_usage) {
        free(path);
        free(path_usage);
        return ps_error_set(err, PS_ENOMEM, "out of memory for preemption victims");
    }
    depth = 0;
    for (int i = target; i >= 0; i = ps_sched_parent(snap, i)) {
        path[depth] = i;
        path_usage[depth++] = ps_sched_usage(snap, i);
    }
    for (int j = 0; j < m; j++) {
        bool node_over = !ps_resources_fit(usage, node->limits);
        bool helps = node_over, any_over = false;
        const struct cand *c = &cands[j];
        for (int d = 0; d < depth; d++) {
            if (ps_resources_fit(path_usage[d], ps_sched_limits(snap, path[d])))
                continue;
            any_over = true;
            if (path[d] == allocs[c->k].op || is_ancestor(snap, path[d], allocs[c->k].op))
                helps = true;
        }
        if (!node_over && !any_over)
            break;
        if (!helps)
            continue;
        if (c->blocked_at >= 0 && !is_ancestor(snap, c->blocked_at, target))
            continue;   /* conditionally preemptible for another subtree */
        const struct ps_node_allocation *a = &allocs[c->k];
        usage = ps_resources_sub(usage, a->resources);
        for (int d = 0; d < depth; d++)
            if (path[d] == a->op || is_ancestor(snap, path[d], a->op))
                path_usage[d] = ps_resources_sub(path_usage[d], a->resources);
        struct ps_preempt_victim v = {
            .allocation_id = a->id, .op = a->op, .reason = PS_PREEMPT_FOR_STARVING,
            .for_op = target, .element = -1, .cls = c->rank,
            .interrupt_timeout_ms = timeout_for(t, a),
        };
        if (push_victim(out, v)) {
            free(path);
            free(path_usage);
            return ps_error_set(err, PS_ENOMEM, "out of memory for preemption victims");
        }
    }
    free(path);
    free(path_usage);
    sched->node_usage = usage;
    return 1;
}

/* A stage, leaving cond and disc all zero again: only the entries its candidates set are
 * reset (O(allocations x depth), not O(elements) per stage). */
static int preemptive_stage(struct ps_sched_snapshot *snap, const struct ps_preempt_tree *t,
                            const struct ps_sched_node *node,
                            const struct ps_node_allocation *allocs, const int8_t *classes, int n,
                            const struct stage_kind *kind, const uint8_t *subtree,
                            const int *eligible_ops, int eligible_count,
                            struct cand *cands, struct ps_resources *cond,
                            struct ps_sched_result *sched, struct ps_preempt_result *out,
                            struct ps_error *err)
{
    struct ps_resources *disc = cond + ps_sched_snapshot_element_count(snap);
    int m = 0;
    int rc = run_preemptive_stage(snap, t, node, allocs, classes, n, kind, subtree, eligible_ops,
                                  eligible_count, cands, cond, disc, &m, sched, out, err);
    for (int j = 0; j < m; j++) {
        if (cands[j].blocked_at >= 0)
            cond[cands[j].blocked_at] = ps_resources_zero();
        else
            for (int i = allocs[cands[j].k].op; i >= 0; i = ps_sched_parent(snap, i))
                disc[i] = ps_resources_zero();
    }
    return rc;
}

/* The least preemptible class any of the stages that run (runs[]: SSD aggressive, SSD normal,
 * aggressive, normal) can take a victim of: a stage takes an allocation only at a level >= its
 * min_level, and the level of a non-preemptible allocation is below every non-SSD stage's (an
 * aggressively preemptible one's below the normal stage's). */
static int class_floor(const bool runs[4])
{
    if (runs[0] || runs[1])
        return PS_ALLOC_NON_PREEMPTIBLE;
    return runs[2] ? PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE : PS_ALLOC_PREEMPTIBLE;
}

/* classes[k]: the class of allocs[k] (class_of), or -1 (never a candidate, as an unknown one)
 * when its operation has no allocation of class >= floor: then none of the stages can take it,
 * and its lookup is saved (on a busy node most operations hold no preemptible allocation). The
 * lists do not change during the stages: each class needed is looked up once, in a loop of
 * independent lookups (their cache misses overlap). */
static void stage_classes(const struct ps_preempt_tree *t, const struct ps_node_allocation *allocs,
                          int n, int floor, int8_t *classes)
{
    for (int k = 0; k < n; k++) {
        const struct ps_preemptible *l = t->ops[allocs[k].op].lists;
        bool any = false;
        for (int c = floor; l && c < PS_ALLOC_CLASS_COUNT && !any; c++)
            any = ps_preemptible_count(l, (enum ps_alloc_class)c) > 0;
        classes[k] = (int8_t)(any ? ps_preemptible_class_at(l, allocs[k].id, allocs[k].slot) : -1);
    }
}

struct ps_preempt_scratch {
    struct ps_resources *cond;   /* 2 x cap entries (cond, disc), all zero between stages */
    int cap;
    struct cand *cands;
    int8_t *classes;             /* per allocation: stage_classes, cand_cap entries */
    int cand_cap;
};

struct ps_preempt_scratch *ps_preempt_scratch_new(void)
{
    return calloc(1, sizeof(struct ps_preempt_scratch));
}

void ps_preempt_scratch_free(struct ps_preempt_scratch *s)
{
    if (!s)
        return;
    free(s->cond);
    free(s->cands);
    free(s->classes);
    free(s);
}

/* Grows the scratch to count elements and n allocations; PS_ENOMEM. */
static int scratch_reserve(struct ps_preempt_scratch *s, int count, int n)
{
    if (count > s->cap) {
        struct ps_resources *c = calloc(2 * (size_t)count, sizeof *c);
        if (!c)
            return PS_ENOMEM;
        free(s->cond);
        s->cond = c;
        s->cap = count;
    }
    if (n > s->cand_cap) {
        int cap = s->cand_cap ? s->cand_cap : 16;
        while (cap < n)
            cap *= 2;
        struct cand *c = realloc(s->cands, (size_t)cap * sizeof *c);
        if (!c)
            return PS_ENOMEM;
        s->cands = c;
        int8_t *classes = realloc(s->classes, (size_t)cap);
        if (!classes)
            return PS_ENOMEM;
        s->classes = classes;
        s->cand_cap = cap;
    }
    return 0;
}

int ps_preempt_heartbeat(struct ps_sched_snapshot *snap, const struct ps_preempt_tree *tree,
                         const struct ps_sched_node *node, const struct ps_node_allocation *allocs,
                         int alloc_count, struct ps_sched_result *sched,
                         struct ps_preempt_result *out, struct ps_error *err)
{
    out->victim_count = 0;
    out->stage = PS_STAGE_NONE;
    int rc = check_allocs(snap, allocs, alloc_count, err);
    if (rc)
        return rc;
    int count = ps_sched_snapshot_element_count(snap);
    struct ps_preempt_scratch *scratch = tree->scratch;
    int cand_room = alloc_count > 0 ? alloc_count : 1;
    if (scratch && scratch_reserve(scratch, count, cand_room) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory for a preemptive heartbeat");
    struct cand *cands = scratch ? scratch->cands : malloc((size_t)cand_room * sizeof *cands);
    int8_t *classes = scratch ? scratch->classes : malloc((size_t)cand_room);
    /* cond, disc */
    struct ps_resources *cond = scratch ? scratch->cond : calloc(2 * (size_t)count, sizeof *cond);
    uint8_t *own = tree->subtree_eligible ? NULL : malloc((size_t)count);
    int *own_ops = tree->subtree_eligible ? NULL : malloc((size_t)count * sizeof *own_ops);
    if (!cands || !classes || !cond || (!tree->subtree_eligible && (!own || !own_ops))) {
        if (!scratch) {
            free(cands);
            free(classes);
            free(cond);
        }
        free(own);
        free(own_ops);
        return ps_error_set(err, PS_ENOMEM, "out of memory for a preemptive heartbeat");
    }
    /* The aggressive stage only starts allocations of operations with an aggressively starving
     * lowest ancestor; without any it would deactivate every candidate and start nothing. */
    const int *eligible_ops = tree->eligible_ops;
    int eligible_count = tree->eligible_op_count;
    if (own) {
        ps_preempt_subtree_eligible(snap, tree->starvation, tree->config, own);
        eligible_count = ps_preempt_eligible_ops(snap, own, own_ops);
        eligible_ops = own_ops;
    }
    const uint8_t *subtree = own ? own : tree->subtree_eligible;
    const struct stage_kind *kinds[] = {&SSD_AGGRESSIVE, &SSD_NORMAL, &AGGRESSIVE, &NORMAL};
    bool runs[4];
    for (int s = 0; s < 4; s++)
        runs[s] = (s >= 2 || node->ssd_priority_preemption) &&
                  (!kinds[s]->aggressive || (subtree[0] & PS_PREEMPT_SUBTREE_AGGRESSIVELY_STARVING));
    stage_classes(tree, allocs, alloc_count, class_floor(runs), classes);
    rc = 0;
    for (int s = 0; s < 4 && rc == 0; s++) {
        if (!runs[s])
            continue;
        rc = preemptive_stage(snap, tree, node, allocs, classes, alloc_count, kinds[s], subtree,
                              eligible_ops, eligible_count, cands, cond, sched, out, err);
        if (rc == 1)
            out->stage = kinds[s]->id;
    }
    if (!scratch) {
        free(cands);
        free(classes);
        free(cond);
    }
    free(own);
    free(own_ops);
    return rc < 0 ? rc : 0;
}

/* ---- node shrink and lowered limits ----------------------------------------------------- */

static struct cand *sorted_cands(const struct ps_preempt_tree *t,
                                 const struct ps_node_allocation *allocs, int n)
{
    struct cand *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (!c)
        return NULL;
    for (int k = 0; k < n; k++) {
        int cls = class_of(t, &allocs[k]);
        int rank = cls < 0 ? PS_ALLOC_NON_PREEMPTIBLE : cls;
        c[k] = (struct cand){k, rank, rank, allocs[k].start_time_ms, allocs[k].id, -1};
    }
    qsort(c, (size_t)n, sizeof *c, cand_cmp);
    return c;
}

int ps_preempt_overcommit_victims(const struct ps_preempt_tree *tree,
                                  struct ps_resources node_limits,
                                  const struct ps_node_allocation *allocs, int alloc_count,
                                  struct ps_preempt_result *out, struct ps_error *err)
{
    struct ps_resources usage = ps_resources_zero();
    for (int k = 0; k < alloc_count; k++)
        if (!allocs[k].leaving)
            usage = ps_resources_add(usage, allocs[k].resources);
    if (ps_resources_fit(usage, node_limits))
        return 0;
    struct cand *c = sorted_cands(tree, allocs, alloc_count);
    if (!c)
        return ps_error_set(err, PS_ENOMEM, "out of memory for preemption victims");
    int rc = 0;
    for (int j = 0; j < alloc_count && !ps_resources_fit(usage, node_limits); j++) {
        const struct ps_node_allocation *a = &allocs[c[j].k];
        if (a->leaving)
            continue;
        usage = ps_resources_sub(usage, a->resources);
        struct ps_preempt_victim v = {
            .allocation_id = a->id, .op = a->op, .reason = PS_PREEMPT_RESOURCE_OVERCOMMIT,
            .for_op = -1, .element = -1, .cls = class_of(tree, a),
            .interrupt_timeout_ms = timeout_for(tree, a),
        };
        if (push_victim(out, v)) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory for preemption victims");
            break;
        }
    }
    free(c);
    return rc;
}

int ps_preempt_limits_victims(const struct ps_sched_snapshot *snap,
                              const struct ps_preempt_tree *tree,
                              const struct ps_node_allocation *allocs, int alloc_count,
                              struct ps_preempt_result *out, struct ps_error *err)
{
    int rc = check_allocs(snap, allocs, alloc_count, err);
    if (rc)
        return rc;
    int count = ps_sched_snapshot_element_count(snap);
    /* usage[i]: what element i's allocations that stay hold. From allocs, not the snapshot's
     * usage: a service computes the snapshot off its lock, and an allocation that ended in
     * between would count as over the limit once more. */
    struct ps_resources *usage = calloc((size_t)count, sizeof *usage);
    struct cand *c = sorted_cands(tree, allocs, alloc_count);
    if (!usage || !c) {
        free(usage);
        free(c);
        return ps_error_set(err, PS_ENOMEM, "out of memory for preemption victims");
    }
    for (int k = 0; k < alloc_count; k++)
        if (!allocs[k].leaving)
            for (int i = allocs[k].op; i >= 0; i = ps_sched_parent(snap, i))
                usage[i] = ps_resources_add(usage[i], allocs[k].resources);
    for (int j = 0; j < alloc_count; j++) {
        const struct ps_node_allocation *a = &allocs[c[j].k];
        /* Only allocations preemptible in some stage go (upstream's PreemptJobsAfterScheduling
         * walks the stage's preemptible jobs): a non-preemptible one stays over the limit. */
        if (a->leaving || class_of(tree, a) == PS_ALLOC_NON_PREEMPTIBLE)
            continue;
        int over = -1;
        for (int i = a->op; i >= 0 && over < 0; i = ps_sched_parent(snap, i))
            if (!ps_resources_fit(usage[i], ps_sched_limits(snap, i)))
                over = i;
        if (over < 0)
            continue;
        for (int i = a->op; i >= 0; i = ps_sched_parent(snap, i))
            usage[i] = ps_resources_sub(usage[i], a->resources);
        struct ps_preempt_victim v = {
            .allocation_id = a->id, .op = a->op, .reason = PS_PREEMPT_LIMITS_VIOLATED,
            .for_op = -1, .element = over, .cls = class_of(tree, a),
            .interrupt_timeout_ms = timeout_for(tree, a),
        };
        if (push_victim(out, v)) {
            rc = ps_error_set(err, PS_ENOMEM, "out of memory for preemption victims");
            break;
        }
    }
    free(usage);
    free(c);
    return rc;
}
