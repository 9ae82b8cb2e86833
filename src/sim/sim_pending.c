/* sim_pending.c — "why is it pending": one top reason for every operation that waits, either
 * for a running slot or with pending jobs (core/pending.h lists the reasons and their texts).
 *
 * The tree model decides first (suspended, max_running_operation_count with the pool, no
 * nodes, a filter matching no node, resource limits reached), then the scheduler's view, for
 * the operation's first tree (in its pool_trees order) that has a reason:
 *   waiting_for_fair_share_update  no update has included it yet;
 *   no_node_fits                   no node group of the tree that its filters (and its pools')
 *                                  allow is large enough for its next job (and min_spare), with
 *                                  a disk medium that holds its disk request;
 *   operation/pool_resource_limits the last heartbeat that looked at it stopped at limits;
 *   usage_at_fair_share            local satisfaction >= 1: the others come first (FIFO pools
 *                                  give operations after the first a fair share of 0);
 *   resources_fragmented           below fair share; the last heartbeat found no room on its
 *                                  node (or a filter mismatch) while the tree's free resources
 *                                  together would hold the job; or no single node has room
 *                                  though the total does;
 *   waiting_for_heartbeat          below fair share, some node has room, and no heartbeat has
 *                                  looked at it since its last allocation;
 *   no_free_resources              below fair share and the tree has no room for the job: it
 *                                  waits for jobs to end.
 * Reasons are evaluated at every fair share update performed (and at submission for an
 * operation that starts pending); a change emits operation_pending with reason and message.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

/* A group's disk space on medium (-1: it has no such medium, or none is asked). */
static int64_t medium_bytes(const struct ps_scenario_node_group *g, const char *medium)
{
    for (size_t m = 0; medium && m < g->medium_count; m++)
        if (strcmp(g->media[m], medium) == 0)
            return g->medium_disk_space[m];
    return -1;
}

/* A node group of the tree allows the job: filters of the operation and its pools, size, disk. */
static bool fits_some_group(struct ps_sim *sim, struct sim_op *o, struct sim_membership *ms)
{
    int task = o->cur_task;
    if (ms->fits_task == task)
        return ms->fits;
    const struct sim_tree *T = &sim->trees[ms->tree];
    struct ps_pending_job job = {.shape = sim_task_job_resources(sim, o->index, task),
                                 .min_spare = T->ts.options.min_spare,
                                 .filter = ms->filter};
    struct ps_sched_tasks tasks = sim_op_tasks(o);
    ps_sched_disk_request(&tasks, task, &job.disk_medium, &job.disk_space);
    bool fits = false;
    for (int i = 0; i < T->group_count && !fits; i++) {
        const struct ps_scenario_node_group *g = &sim->sc->node_groups[T->groups[i]];
        fits = ps_pending_node_fits(&job, &g->resource_limits, (const char *const *)g->tags,
                                    (int)g->tag_count, medium_bytes(g, job.disk_medium));
    }
    ms->fits_task = task;
    ms->fits = fits;
    return fits;
}

/* Whether some node of the tree has room for shape now (its free resources also cover
 * min_spare), through the Pareto frontier of free resources, computed once per update. */
static bool some_node_has_room(struct ps_sim *sim, int tree, const struct ps_resources *shape)
{
    struct sim_tree *T = &sim->trees[tree];
    if (T->frontier_serial != sim->update_serial || T->frontier_count < 0) {
        T->frontier_serial = sim->update_serial;
        T->frontier_count = 0;
        for (int i = 0; i < T->node_count; i++) {
            const struct sim_node *n = &sim->nodes[T->nodes[i]];
            struct ps_resources free_ = ps_resources_sub(n->limits, n->usage);
            if (!ps_resources_fit(T->ts.options.min_spare, free_))
                continue;
            bool dominated = false;
            for (int k = 0; k < T->frontier_count && !dominated; k++)
                dominated = ps_resources_fit(free_, T->frontier[k]);
            if (dominated)
                continue;
            int w = 0;
            for (int k = 0; k < T->frontier_count; k++)
                if (!ps_resources_fit(T->frontier[k], free_))
                    T->frontier[w++] = T->frontier[k];
            T->frontier_count = w;
            if (T->frontier_count == T->frontier_cap) {
                int cap = T->frontier_cap ? 2 * T->frontier_cap : 8;
                struct ps_resources *grown = realloc(T->frontier, (size_t)cap * sizeof *grown);
                if (!grown) {
                    T->frontier_count = -1;   /* recompute next time; answer conservatively */
                    return true;
                }
                T->frontier = grown;
                T->frontier_cap = cap;
            }
            T->frontier[T->frontier_count++] = free_;
        }
    }
    for (int k = 0; k < T->frontier_count; k++)
        if (ps_resources_fit(*shape, T->frontier[k]))
            return true;
    return false;
}

struct probe {
    struct ps_sim *sim;
    struct sim_op *o;
    struct sim_membership *ms;
    bool has_shape;                    /* shape is computed when a probe first needs it */
    struct ps_resources shape;
};

static const struct ps_resources *probe_shape(struct probe *p)
{
    if (!p->has_shape) {
        p->shape = sim_task_job_resources(p->sim, p->o->index, p->o->cur_task);
        p->has_shape = true;
    }
    return &p->shape;
}

static bool probe_fits(void *ctx)
{
    struct probe *p = ctx;
    return fits_some_group(p->sim, p->o, p->ms);
}

static bool probe_total_fits(void *ctx)
{
    struct probe *p = ctx;
    const struct sim_tree *T = &p->sim->trees[p->ms->tree];
    return ps_pending_total_fits(probe_shape(p), &T->total, &T->usage);
}

static bool probe_room(void *ctx)
{
    struct probe *p = ctx;
    return some_node_has_room(p->sim, p->ms->tree, probe_shape(p));
}

/* The scheduler's view (core/pending.h decides). */
static void scheduler_reason(struct ps_sim *sim, struct sim_op *o, struct sim_membership *ms,
                             struct ps_pending_info *info)
{
    const struct ps_tree_op *m = ms->m;
    info->tree = sim->trees[ms->tree].name;
    struct probe ctx = {.sim = sim, .o = o, .ms = ms};
    bool in_update = m->fs_index >= 0 && m->dynamic.valid;
    struct ps_pending_probe probe = {
        .ctx = &ctx,
        .in_update = in_update,
        .fits_some_node = probe_fits,
        .sched_reason = ms->sched_reason,
        .limit_pool = ms->limit_pool,
        .limit_resource = ms->limit_resource,
        .satisfaction = in_update ? ps_pending_satisfaction(m) : 0.0,
        .total_fits = probe_total_fits,
        .some_node_has_room = probe_room,
    };
    ps_pending_scheduler_reason(&probe, info);
}

/* The top reason of an operation (info's strings borrowed), without its text. */
static void decide(struct ps_sim *sim, int op, struct ps_pending_info *info)
{
    struct sim_op *o = &sim->ops[op];
    memset(info, 0, sizeof *info);
    info->resource = -1;
    bool waits = o->state == SIM_OP_PENDING || (o->state == SIM_OP_RUNNING && o->pending > 0);
    if (!waits)
        return;
    for (int k = 0; k < o->m_count && info->reason == PS_PENDING_NONE; k++) {
        struct sim_membership *ms = &o->ms[k];
        if (ms->m)
            ps_pool_tree_pending_reason(sim->trees[ms->tree].tree, ms->m, info);
    }
    for (int k = 0; k < o->m_count && info->reason == PS_PENDING_NONE && o->pending > 0; k++) {
        struct sim_membership *ms = &o->ms[k];
        if (!ms->m)
            continue;
        struct ps_pending_info si;
        memset(&si, 0, sizeof si);
        si.resource = -1;
        scheduler_reason(sim, o, ms, &si);
        *info = si;
    }
}

static void text(const struct ps_pending_info *info, char *msg, size_t size)
{
    msg[0] = '\0';
    if (info->reason != PS_PENDING_NONE)
        ps_pending_format(info, msg, size);
}

void sim_pending_reason_describe(struct ps_sim *sim, int op, struct ps_pending_info *info,
                                 char *msg, size_t size)
{
    decide(sim, op, info);
    text(info, msg, size);
}

void sim_reason_key_release(struct sim_reason_key *key)
{
    free(key->pool);
    free(key->filter);
    free(key->tree);
    memset(key, 0, sizeof *key);
}

static bool same_name(const char *kept, const char *name)
{
    return kept == name || (kept && name && strcmp(kept, name) == 0);
}

static bool same_key(const struct sim_reason_key *key, const struct ps_pending_info *info)
{
    return key->count == info->count && key->limit == info->limit &&
           key->resource == info->resource && same_name(key->pool, info->pool) &&
           same_name(key->filter, info->filter) && same_name(key->tree, info->tree);
}

/* Keeps info as the key of the text just formatted; out of memory, a key that matches no
 * info (the text is then formatted every time). */
static void keep_key(struct sim_reason_key *key, const struct ps_pending_info *info)
{
    if (same_key(key, info))
        return;
    sim_reason_key_release(key);
    key->count = info->count;
    key->limit = info->limit;
    key->resource = info->resource;
    key->pool = info->pool ? strdup(info->pool) : NULL;
    key->filter = info->filter ? strdup(info->filter) : NULL;
    key->tree = info->tree ? strdup(info->tree) : NULL;
    if ((info->pool && !key->pool) || (info->filter && !key->filter) || (info->tree && !key->tree))
        key->resource = -2;   /* no info has it */
}

void sim_pending_reason_update(struct ps_sim *sim, int op, bool emit)
{
    struct sim_op *o = &sim->ops[op];
    struct ps_pending_info info;
    decide(sim, op, &info);
    /* most operations keep their reason from one update to the next: its text is formatted
     * only when it may have changed (another reason, or another pool, count, ... of it) */
    if (info.reason == o->reason &&
        (ps_pending_text_fixed(info.reason) || same_key(&o->reason_key, &info)))
        return;
    char msg[256];
    text(&info, msg, sizeof msg);
    keep_key(&o->reason_key, &info);
    if (info.reason == o->reason && o->reason_msg && strcmp(o->reason_msg, msg) == 0)
        return;
    if (o->reason != PS_PENDING_NONE)
        sim->reason_ms[o->reason] += sim->now - o->reason_since_ms;
    o->reason = info.reason;
    o->reason_since_ms = sim->now;
    free(o->reason_msg);
    o->reason_msg = NULL;
    if (info.reason == PS_PENDING_NONE)
        return;
    o->reason_msg = strdup(msg);
    if (!o->reason_msg)
        ps_error_set(&sim->io_error, PS_ENOMEM, "out of memory");
    if (!emit)
        return;
    sim_ev_begin(sim, "operation_pending");
    sim_ev_key(sim, "operation_id");
    ps_textbuf_add_json(&sim->line, o->sc->id);
    sim_ev_key(sim, "reason");
    ps_textbuf_add_json(&sim->line, ps_pending_reason_id(info.reason));
    sim_ev_key(sim, "message");
    ps_textbuf_add_json(&sim->line, msg);
    sim_ev_key(sim, "pending_job_count");
    ps_textbuf_addi(&sim->line, o->pending);
    sim_ev_end(sim);
}
