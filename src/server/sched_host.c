/* sched_host.c — the service as the host of the scheduling loop (core/tree_sched.h): the
 * allocations of a node or of a whole tree, starting jobs for allocations, and turning victims
 * into interrupts or aborts. Node heartbeats (api_nodes.c) and the limits check after each fair
 * share update (engine_loop.c) drive the loop through it; everything under svc->mu.
 */
#include <stdlib.h>
#include <string.h>

#include "core/formula.h"
#include "core/pending.h"
#include "server/op_tentative.h"
#include "server/persist.h"
#include "server/sched_host.h"
#include "server/service_state.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"

/* One drive of the loop: what the callbacks need. jobs parallels allocs. */
struct host {
    struct ps_service *svc;
    struct ps_svc_tree_state *ts;
    struct ps_svc_node *node;           /* the heartbeat's node; NULL for the limits check */
    int64_t now_ms;
    json_t *start, *interrupt, *abort;  /* the heartbeat's reply arrays, or NULL */
    struct ps_node_allocation *allocs;
    struct ps_svc_job **jobs;
    int count, cap;
    /* victims preempted for a starving operation, waiting for the allocation they made room
     * for (upstream's preemption_reason names it) */
    struct victim { struct ps_svc_job *job; int for_op, cls; } *victims;
    int victim_count, victim_cap;
    /* the last job started in this drive and its element: the loop starts a heartbeat's
     * allocations before it applies the victims, so a preemptive stage's one allocation is
     * known when its victims arrive */
    struct ps_svc_job *last_started;
    int last_started_element;
};

/* The service operation of element `element` of the tree's last build, or NULL (pools,
 * detached operations). ts->sched.user holds the strategy's operations. */
static struct ps_svc_op *svc_op(const struct ps_svc_tree_state *ts, int element)
{
    if (element < 0 || element >= ts->sched.fs.count || !ts->sched.user[element])
        return NULL;
    return ((const struct ps_operation *)ts->sched.user[element])->host;
}

static int reserve(struct host *h, int n, struct ps_error *err)
{
    if (n <= h->cap)
        return 0;
    int cap = h->cap ? h->cap : 16;
    while (cap < n)
        cap *= 2;
    struct ps_node_allocation *a = realloc(h->allocs, (size_t)cap * sizeof *a);
    if (a)
        h->allocs = a;
    struct ps_svc_job **j = realloc(h->jobs, (size_t)cap * sizeof *j);
    if (j)
        h->jobs = j;
    if (!a || !j)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    h->cap = cap;
    return 0;
}

/* What the loop is told of job j, running in the tree of its tree_slot. */
static struct ps_node_allocation node_allocation(const struct ps_svc_job *j, bool leaving)
{
    return (struct ps_node_allocation){
        .id = j->alloc_id, .op = j->op->trees[j->tree_slot].element, .resources = j->usage,
        .start_time_ms = j->start_ms, .leaving = leaving, .slot = j->lists_slot};
}

/* Appends node's jobs of this tree whose operations are in the snapshot; adds the usage of its
 * other jobs that are not leaving to *other. */
static int add_node(struct host *h, struct ps_svc_node *node, struct ps_resources *other,
                    struct ps_error *err)
{
    int rc = reserve(h, h->count + node->job_count + 1, err);
    for (struct ps_svc_job *j = node->jobs; rc == 0 && j; j = j->node_next) {
        if (h->count == h->cap && (rc = reserve(h, h->count + 1, err)) != 0)
            break;
        bool leaving = j->interrupt_deadline_ms > 0;
        int slot = ps_svc_op_tree_slot(j->op, h->ts->name);
        if (slot < 0 || slot != j->tree_slot || j->op->trees[slot].element < 0) {
            if (!leaving)
                *other = ps_resources_add(*other, j->usage);
            continue;
        }
        h->jobs[h->count] = j;
        h->allocs[h->count++] = node_allocation(j, leaving);
    }
    return rc;
}

static int allocations(void *ctx, int64_t node, const struct ps_node_allocation **allocs,
                       int *count, struct ps_resources *other, struct ps_error *err)
{
    struct host *h = ctx;
    h->count = 0;
    *other = ps_resources_zero();
    int rc = 0;
    if (node >= 0)
        rc = h->node ? add_node(h, h->node, other, err) : 0;
    else
        for (int i = 0; rc == 0 && i < h->svc->node_count; i++)
            rc = add_node(h, h->svc->node_list[i], other, err);
    *allocs = h->allocs;
    *count = h->count;
    return rc;
}

/* upstream's preemption_reason: "Preempted to start allocation A of operation O; this allocation
 * had status S", set on the victims once the allocation they made room for starts */
static void name_preemptor(struct host *h, int element, const struct ps_svc_job *started)
{
    for (int k = 0; k < h->victim_count; k++) {
        struct victim *v = &h->victims[k];
        if (!v->job || v->for_op != element)
            continue;
        char *text = NULL;
        int n = v->cls >= 0 ? asprintf(&text, "Preempted to start allocation %s of operation %s; "
                                       "this allocation had status \"%s\"", started->id,
                                       started->op->id, ps_alloc_class_name(v->cls))
                            : asprintf(&text, "Preempted to start allocation %s of operation %s",
                                       started->id, started->op->id);
        ps_svc_set_str(&v->job->preempted_for_job, started->id);
        if (n >= 0) {
            free(v->job->preemption_reason);
            v->job->preemption_reason = text;
            ps_persist_job(h->svc, v->job);
        }
        v->job = NULL;
    }
}

static void remember_victim(struct host *h, struct ps_svc_job *job, const struct ps_preempt_victim *v)
{
    if (v->for_op < 0)
        return;
    if (h->victim_count == h->victim_cap) {
        int cap = h->victim_cap ? 2 * h->victim_cap : 8;
        struct victim *n = realloc(h->victims, (size_t)cap * sizeof *n);
        if (!n)
            return;   /* the reason is informational: without memory it is left out */
        h->victims = n;
        h->victim_cap = cap;
    }
    h->victims[h->victim_count++] = (struct victim){job, v->for_op, v->cls};
    /* The operation only, until the allocation is known (name_preemptor) */
    const struct ps_svc_op *op = svc_op(h->ts, v->for_op);
    if (op)
        ps_svc_set_str(&job->preempted_for_op, op->id);
    char *text = NULL;
    if (op && (v->cls >= 0 ? asprintf(&text, "Preempted to start allocation of operation %s; this "
                                      "allocation had status \"%s\"", op->id,
                                      ps_alloc_class_name(v->cls))
                           : asprintf(&text, "Preempted to start allocation of operation %s",
                                      op->id)) >= 0) {
        free(job->preemption_reason);
        job->preemption_reason = text;
    }
    if (h->last_started && h->last_started_element == v->for_op)
        name_preemptor(h, v->for_op, h->last_started);
}

static int start(void *ctx, int64_t node, int element, struct ps_resources resources,
                 bool *started, struct ps_error *err)
{
    (void)node;
    (void)err;
    struct host *h = ctx;
    struct ps_svc_op *op = svc_op(h->ts, element);
    /* upstream's controller refuses a node banned for the operation (NodeBanned) */
    if (op && h->node && !ps_node_ban_may_start(ps_svc_op_node_banned(op, h->node->id))) {
        *started = false;
        return 0;
    }
    int slot = op ? ps_svc_op_tree_slot(op, h->ts->name) : -1;
    if (slot >= 0 && !ps_svc_tentative_may_start(op, slot))
        slot = -1;   /* its sample in this tentative tree runs: declined */
    struct ps_svc_job *job = slot >= 0 && h->node ? ps_svc_job_start(h->svc, op, slot, resources,
                                                                     h->node->id, h->now_ms)
                                                  : NULL;
    *started = job != NULL;
    if (!job)
        return 0;
    const struct ps_pool_tree *tree = ps_strategy_find_tree(h->svc->strategy, h->ts->name);
    job->waiting_job_timeout_ms =
        tree && op->sop ? ps_operation_spec_waiting_job_timeout(
                              &op->sop->spec,
                              &ps_pool_tree_config(tree)->waiting_for_resources_on_node_timeout_ms)
                        : -1;
    job->sent_in_heartbeat = h->node->heartbeat_seq;
    h->last_started = job;
    h->last_started_element = element;
    name_preemptor(h, element, job);
    job->reported_in_heartbeat = h->node->heartbeat_seq;
    if (h->start)
        json_array_append_new(h->start, ps_svc_start_entry(job));
    ps_persist_job(h->svc, job);
    return 0;
}

static int cmp_alloc_id(const void *key, const void *item)
{
    int64_t a = *(const int64_t *)key, b = (*(struct ps_svc_job *const *)item)->alloc_id;
    return (a > b) - (a < b);
}

static int by_alloc_id(const void *x, const void *y)
{
    int64_t a = (*(struct ps_svc_job *const *)x)->alloc_id;
    int64_t b = (*(struct ps_svc_job *const *)y)->alloc_id;
    return (a > b) - (a < b);
}

/* upstream's EJobPreemptionReason: the stage of a victim for a starving operation */
static const char *profiling_reason(const struct host *h, const struct ps_preempt_victim *v)
{
    if (v->reason == PS_PREEMPT_RESOURCE_OVERCOMMIT)
        return "resource_overcommit";
    if (v->reason == PS_PREEMPT_LIMITS_VIOLATED)
        return "resource_limits_violated";
    switch (h->ts->sched.victims.stage) {
    case PS_STAGE_AGGRESSIVELY_PREEMPTIVE: return "aggressive_preemption";
    case PS_STAGE_SSD_AGGRESSIVELY_PREEMPTIVE: return "ssd_aggressive_preemption";
    case PS_STAGE_SSD_PREEMPTIVE: return "ssd_preemption";
    default: return "preemption";
    }
}

static void count_preempted(const struct host *h, const struct ps_preempt_victim *v,
                            const struct ps_svc_job *job)
{
    const char *labels[] = {h->ts->name, profiling_reason(h, v)};
    struct ps_metric *m = NULL;
    if (h->svc->m_preempted_cpu &&
        ps_metric_family_get(h->svc->m_preempted_cpu, labels, &m, NULL) == 0)
        ps_metric_add(m, ps_res_get(&job->usage, PS_RES_CPU));
}

static int preempt(void *ctx, const struct ps_preempt_victim *v, struct ps_error *err)
{
    (void)err;
    struct host *h = ctx;
    struct ps_svc_job *job = NULL;
    for (int k = 0; k < h->count && !job; k++)
        if (h->jobs[k]->alloc_id == v->allocation_id)
            job = h->jobs[k];
    if (!job)
        return 0;
    struct ps_svc_op *for_op = svc_op(h->ts, v->for_op);
    count_preempted(h, v, job);
    remember_victim(h, job, v);
    ps_svc_job_preempt(h->svc, job, "preemption", ps_svc_preempt_reason(v->reason),
                       v->interrupt_timeout_ms, for_op ? for_op->id : NULL, h->now_ms,
                       h->interrupt, h->abort);
    return 0;
}

/* The limits check may find many victims among every job of the tree: look them up sorted. */
static int preempt_sorted(void *ctx, const struct ps_preempt_victim *v, struct ps_error *err)
{
    (void)err;
    struct host *h = ctx;
    struct ps_svc_job **hit = bsearch(&v->allocation_id, h->jobs, (size_t)h->count, sizeof *hit,
                                      cmp_alloc_id);
    if (hit)
        count_preempted(h, v, *hit);
    if (hit)
        ps_svc_job_preempt(h->svc, *hit, "preemption", ps_svc_preempt_reason(v->reason),
                           v->interrupt_timeout_ms, NULL, h->now_ms, NULL, NULL);
    return 0;
}

/* op_state of an update's finish: the operation's scheduling state (ps_svc_sched_op_fn), and
 * whether its starvation timer moved from what its document carries (the store refresh after
 * the update writes those: no pass over every operation for it). */
static struct ps_preemptible *op_state(void *ctx, struct ps_tree_op *tree_op, int element,
                                       struct ps_sched_operation *sched,
                                       struct ps_preempt_operation *preempt)
{
    struct host *h = ctx;
    struct ps_preemptible *lists = ps_svc_sched_op_fn(ctx, tree_op, element, sched, preempt);
    struct ps_svc_op *op = ps_tree_op_host(tree_op);
    if (op && ps_persist_op_since_changed(op))
        ps_svc_since_moved(h->ts, op);
    return lists;
}

static struct ps_tree_host loop_host(struct host *h)
{
    return (struct ps_tree_host){.ctx = h,
                                 .op_state = op_state,
                                 .allocations = allocations,
                                 .start = start,
                                 .preempt = preempt};
}

int ps_svc_schedule_node(struct ps_service *svc, struct ps_svc_node *node, int64_t now_ms,
                         json_t *start_out, json_t *interrupt, json_t *abort, struct ps_error *err)
{
    struct ps_node *sn = ps_strategy_find_node(svc->strategy, node->id);
    if (!sn || !sn->tree)
        return 0;
    struct ps_svc_tree_state *ts = ps_svc_tree(svc, ps_pool_tree_name(sn->tree));
    if (!ts || !ts->sched.snap)
        return 0;
    struct ps_resources usage = ps_resources_zero();
    for (struct ps_svc_job *j = node->jobs; j; j = j->node_next)
        usage = ps_resources_add(usage, j->usage);
    /* the strategy's tags: the agent's and @user_tags (node_tags.h) */
    /* the node's media: its reported disk space less its running jobs' disk requests */
    struct ps_sched_medium media[16];
    int medium_count = 0;
    const char *mname;
    json_t *mv;
    json_object_foreach(node->media, mname, mv) {
        if (medium_count == (int)(sizeof media / sizeof media[0]))
            break;
        int64_t free_space = json_integer_value(mv);
        for (struct ps_svc_job *j = node->jobs; j; j = j->node_next) {
            const struct ps_svc_task *t = &j->op->tasks[j->task];
            if (t->disk_medium && strcmp(t->disk_medium, mname) == 0)
                free_space -= t->disk_space;
        }
        media[medium_count++] = (struct ps_sched_medium){mname, free_space};
    }
    struct ps_sched_node sched_node = {.id = node->num,
                                       .tags = (const char *const *)sn->tags,
                                       .tag_count = sn->tag_count,
                                       .limits = node->limits,
                                       .usage = usage,
                                       .filter_cache = node->filter_cache,
                                       .media = media,
                                       .medium_count = medium_count,
                                       .overcommit_since_ms = &node->overcommit_since_ms};
    struct host h = {.svc = svc, .ts = ts, .node = node, .now_ms = now_ms, .start = start_out,
                     .interrupt = interrupt, .abort = abort};
    struct ps_tree_host host = loop_host(&h);
    struct ps_tree_heartbeat_stages stages = {
        .regular = true,
        .preemptive = ps_tree_sched_preempt_due(&ts->sched, &node->last_preempt_ms, now_ms)};
    int rc = ps_tree_sched_heartbeat(&ts->sched, &host, &sched_node, &stages, now_ms, err);
    free(h.allocs);
    free(h.jobs);
    free(h.victims);
    return rc;
}

/* host->allocations(-1) for the limits check, sorted by allocation id for preempt_sorted. */
static int all_allocations(void *ctx, int64_t node, const struct ps_node_allocation **allocs,
                           int *count, struct ps_resources *other, struct ps_error *err)
{
    struct host *h = ctx;
    int rc = allocations(ctx, node, allocs, count, other, err);
    if (rc != 0)
        return rc;
    qsort(h->jobs, (size_t)h->count, sizeof *h->jobs, by_alloc_id);
    for (int k = 0; k < h->count; k++) {
        struct ps_svc_job *j = h->jobs[k];
        h->allocs[k] = node_allocation(j, j->interrupt_deadline_ms > 0);
    }
    return 0;
}

void ps_svc_limits_check(struct ps_service *svc, struct ps_svc_tree_state *ts, int64_t now_ms)
{
    struct host h = {.svc = svc, .ts = ts, .now_ms = now_ms};
    struct ps_tree_host host = loop_host(&h);
    host.allocations = all_allocations;
    host.preempt = preempt_sorted;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_tree_sched_limits_check(&ts->sched, &host, &err) != 0)
        ps_svc_log(svc, "error", "limits_check_failed", "tree=%s error=\"%s\"", ts->name,
                   err.msg);
    free(h.allocs);
    free(h.jobs);
    free(h.victims);
}

int ps_svc_update_finish(struct ps_service *svc, struct ps_svc_tree_state *ts,
                         struct ps_pool_tree *tree, int *starvation_changed,
                         struct ps_error *err)
{
    struct host h = {.svc = svc, .ts = ts, .now_ms = ts->sched.next_now_ms};
    struct ps_tree_host host = loop_host(&h);
    /* The operations' elements are those of the snapshot heartbeats use until the results
     * apply: forgotten only then (op_state gives them their new ones). */
    if (ts->sched.phase == PS_TREE_UPDATE_RAN && ts->sched.next.tree == tree &&
        ts->sched.next.generation == ps_pool_tree_generation(tree))
        ps_svc_forget_elements(svc, tree);
    return ps_tree_sched_update_finish(&ts->sched, tree, &host, starvation_changed, err);
}

int ps_svc_update_tree(struct ps_service *svc, struct ps_svc_tree_state *ts,
                       struct ps_pool_tree *tree, int64_t now_ms, int *starvation_changed,
                       struct ps_error *err)
{
    if (starvation_changed)
        *starvation_changed = 0;
    int rc = ps_tree_sched_update_begin(&ts->sched, tree, now_ms, err);
    if (rc == 0)
        rc = ps_tree_sched_update_run(&ts->sched, err);
    if (rc == 0)
        rc = ps_svc_update_finish(svc, ts, tree, starvation_changed, err);
    return rc;
}

/* ---- pending reasons: the scheduler's view (core/pending.h decides) --------------------- */

struct probe {
    struct ps_service *svc;
    struct ps_pool_tree *tree;
    struct ps_pending_job job;          /* filter: its effective filter in the snapshot */
};

/* Calls fn for each registered node of the tree with its limits and the usage of its jobs;
 * stops when fn returns true. */
static bool any_node(struct probe *p, bool (*fn)(struct probe *, struct ps_svc_node *,
                                                 struct ps_resources usage))
{
    for (int i = 0; i < p->svc->node_count; i++) {
        struct ps_svc_node *n = p->svc->node_list[i];
        struct ps_node *sn = n->registered ? ps_strategy_find_node(p->svc->strategy, n->id) : NULL;
        if (!sn || sn->tree != p->tree)
            continue;
        struct ps_resources usage = ps_resources_zero();
        for (struct ps_svc_job *j = n->jobs; j; j = j->node_next)
            usage = ps_resources_add(usage, j->usage);
        if (fn(p, n, usage))
            return true;
    }
    return false;
}

static bool node_fits(struct probe *p, struct ps_svc_node *n, struct ps_resources usage)
{
    (void)usage;
    const struct ps_node *sn = ps_strategy_find_node(p->svc->strategy, n->id);   /* any_node's */
    const json_t *bytes = p->job.disk_medium && n->media
                              ? json_object_get(n->media, p->job.disk_medium)
                              : NULL;
    return ps_pending_node_fits(&p->job, &n->limits, (const char *const *)sn->tags, sn->tag_count,
                                json_is_integer(bytes) ? json_integer_value(bytes) : -1);
}

static bool node_has_room(struct probe *p, struct ps_svc_node *n, struct ps_resources usage)
{
    struct ps_resources free_ = ps_resources_sub(n->limits, usage);
    return ps_pending_node_has_room(&p->job, &free_);
}

static bool add_usage(struct probe *p, struct ps_svc_node *n, struct ps_resources usage)
{
    (void)n;
    p->job.min_spare = ps_resources_add(p->job.min_spare, usage);   /* reused as the sum */
    return false;
}

static bool probe_fits(void *ctx)
{
    return any_node(ctx, node_fits);
}

static bool probe_room(void *ctx)
{
    return any_node(ctx, node_has_room);
}

static bool probe_total_fits(void *ctx)
{
    struct probe sum = *(struct probe *)ctx;
    sum.job.min_spare = ps_resources_zero();
    any_node(&sum, add_usage);
    struct ps_resources total = ps_pool_tree_total_resources(sum.tree);
    return ps_pending_total_fits(&sum.job.shape, &total, &sum.job.min_spare);
}

void ps_svc_pending_scheduler_reason(struct ps_service *svc, struct ps_svc_tree_state *ts,
                                     const struct ps_tree_op *to, int element,
                                     struct ps_pending_info *info)
{
    const struct ps_sched_snapshot *snap = ts ? ts->sched.snap : NULL;
    bool in_update = snap && element >= 0 && element < ts->sched.fs.count && to->dynamic.valid;
    struct probe ctx = {.svc = svc, .tree = to->tree};
    struct ps_pending_probe probe = {.ctx = &ctx, .in_update = in_update,
                                     .fits_some_node = probe_fits, .limit_resource = -1,
                                     .total_fits = probe_total_fits,
                                     .some_node_has_room = probe_room};
    info->tree = ps_pool_tree_name(to->tree);
    if (in_update) {
        const struct ps_sched_operation *st = &ts->sched.sched_ops[element];
        ctx.job = (struct ps_pending_job){.shape = st->allocation,
                                          .min_spare = ts->sched.options.min_spare,
                                          .filter = st->filter,
                                          .disk_medium = st->disk_medium,
                                          .disk_space = st->disk_space};
        int elem = -1;
        probe.sched_reason = ps_sched_operation_reason(snap, element, &elem);
        if (probe.sched_reason == PS_SCHED_LIMITS && elem >= 0) {
            /* the build's own copy of the name: the pool may be gone since (moved out of,
             * then removed, before the next update) and fs.pools[] is not to be followed */
            if (elem != element && ts->sched.fs.pools[elem])
                probe.limit_pool = ts->sched.fs.elems[elem].in.name;
            probe.limit_resource = ps_pending_limit_resource(snap, elem, &ctx.job.shape);
        }
        probe.satisfaction = ps_pending_satisfaction(to);
    }
    ps_pending_scheduler_reason(&probe, info);
}

void ps_svc_op_preemptible_counts(struct ps_tree_op *tree_op, int *counts)
{
    for (int c = 0; c < PS_ALLOC_CLASS_COUNT; c++)
        counts[c] = 0;
    struct ps_svc_op *op = ps_tree_op_host(tree_op);
    if (!op || !op->sop)
        return;
    const char *tree = ps_pool_tree_name(tree_op->tree);
    for (int i = 0; i < op->tree_count; i++) {
        if (strcmp(op->sop->tree_names[i], tree) != 0 || !op->trees[i].lists)
            continue;
        for (int c = 0; c < PS_ALLOC_CLASS_COUNT; c++)
            counts[c] = ps_preemptible_count(op->trees[i].lists, c);
    }
}
