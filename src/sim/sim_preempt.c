/* sim_preempt.c — the simulator's side of starvation and preemption (sim.h, hooks (a)), and
 * the scenario's timed events that make the other two preemption reasons happen. The loop
 * (core/tree_sched.h, through sim_host.c) decides; this file keeps what only the simulator
 * needs:
 *
 *   - After every performed fair share update of a tree (sim_preempt_tree_updated):
 *     starvation_status_changed events for every element whose status changed. While an
 *     element is below fair share and still waiting for a starvation timeout the tree keeps
 *     updating (its state changes with time alone); while the preemptive stages are active
 *     (ps_tree_sched_preempt_active) the tree's heartbeats never count as quiet.
 *   - The backoff of the preemptive stages per node, also across dormant stretches
 *     (replay_backoff), so skipping idle heartbeats stays exact.
 *   - Allocation classes are kept per operation and tree (struct sim_membership.lists), with the
 *     job slot as allocation id, on every job start, end and usage change.
 *   - Victims are counted per pool and reason (sim_preempt_victim).
 */
#include <stdlib.h>
#include <string.h>

#include "core/op_spec.h"
#include "core/tree_starvation.h"
#include "io/json_value.h"
#include "sim/sim_internal.h"

struct sim_preempt_tree {
    struct ps_starvation_config scfg;
    bool dormant_active;                     /* sim_preempt_active when the tree went dormant */
};

int sim_preempt_init(struct ps_sim *sim, struct ps_error *err)
{
    for (int t = 0; t < sim->tree_count; t++) {
        struct sim_tree *T = &sim->trees[t];
        T->pre = calloc(1, sizeof *T->pre);
        if (!T->pre)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        ps_tree_config_starvation_config(ps_pool_tree_config(T->tree), &T->pre->scfg);
    }
    for (int64_t i = 0; i < sim->node_count; i++) {
        sim->nodes[i].last_preemptive_ms = PS_PREEMPT_NEVER;
        sim->nodes[i].preempt_seen_ms = INT64_MIN;
    }
    return 0;
}

void sim_preempt_release(struct ps_sim *sim)
{
    for (int t = 0; sim->trees && t < sim->tree_count; t++) {
        free(sim->trees[t].pre);
        sim->trees[t].pre = NULL;
    }
    for (int64_t i = 0; sim->ops && i < sim->op_count; i++)
        for (int k = 0; sim->ops[i].ms && k < sim->ops[i].m_count; k++) {
            ps_preemptible_free(sim->ops[i].ms[k].lists);
            sim->ops[i].ms[k].lists = NULL;
        }
}

/* ---- allocation classes ----------------------------------------------------------------- */

int sim_preempt_job_started(struct ps_sim *sim, int64_t slot, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    struct sim_membership *ms = &sim->ops[job->op].ms[job->ms];
    if (!ms->lists) {
        struct sim_tree *T = &sim->trees[ms->tree];
        struct ps_preemptible_config cfg;
        ps_tree_op_preemptible_config(ms->m, &cfg);
        if (!(ms->lists = ps_preemptible_new(&cfg)))
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        /* classes with the last update's fair share, and the stages read them from now on */
        if (ms->elem >= 0 && ms->elem < T->ts.fs.count)
            ps_tree_sched_update_lists(&T->ts, ms->m, ms->elem, ms->lists);
    }
    int rc = ps_preemptible_add(ms->lists, slot, job->start_ms, job->resources, err);
    job->lists_slot = ps_preemptible_slot(ms->lists, slot);
    return rc;
}

void sim_preempt_job_removed(struct ps_sim *sim, int64_t slot)
{
    const struct sim_job *job = &sim->jobs[slot];
    struct sim_membership *ms = &sim->ops[job->op].ms[job->ms];
    if (ms->lists) {
        struct ps_error ignored;
        ps_error_init(&ignored);
        ps_preemptible_remove(ms->lists, slot, &ignored);
    }
}

int sim_preempt_job_usage(struct ps_sim *sim, int64_t slot, struct ps_resources usage,
                          struct ps_error *err)
{
    const struct sim_job *job = &sim->jobs[slot];
    struct sim_membership *ms = &sim->ops[job->op].ms[job->ms];
    return ms->lists ? ps_preemptible_set_usage(ms->lists, slot, usage, err) : 0;
}

/* ---- victims ---------------------------------------------------------------------------- */

int sim_preempt_victim(struct ps_sim *sim, int64_t slot, int for_op, enum ps_preempt_reason reason,
                       int64_t interrupt_timeout_ms, struct ps_error *err)
{
    struct sim_job *job = &sim->jobs[slot];
    if (job->serial == 0 || job->preempting)
        return 0;
    const struct sim_membership *ms = &sim->ops[job->op].ms[job->ms];
    for (int i = 0; i < ms->path_len; i++)
        ms->path[i]->preempted[reason]++;
    return sim_job_preempt(sim, slot, for_op, ps_preempt_reason_name(reason), interrupt_timeout_ms,
                           err);
}

bool sim_preempt_active(const struct ps_sim *sim, int tree)
{
    return ps_tree_sched_preempt_active(&sim->trees[tree].ts);
}

void sim_preempt_dormant(struct ps_sim *sim, int tree)
{
    sim->trees[tree].pre->dormant_active = sim_preempt_active(sim, tree);
}

/* Replays, in closed form, the backoff of the heartbeats node n would have had strictly
 * before now since the last one accounted for: the stages "ran" (and started nothing) at
 * every one whose backoff had passed. */
static void replay_backoff(struct ps_sim *sim, struct sim_node *n, const struct ps_preempt_config *c)
{
    int64_t p = sim->sc->heartbeat_period_ms;
    int64_t s = n->preempt_seen_ms == INT64_MIN ? n->phase_ms - p : n->preempt_seen_ms;
    /* A heartbeat dropped at this very millisecond (before the change) counts as skipped. */
    int64_t limit = n->last_heartbeat_ms == sim->now ? sim->now + 1 : sim->now;
    if (limit <= s + p)
        return;
    int64_t k = (limit - s - 1) / p;   /* grid times s + j p, 1 <= j <= k, are skipped */
    int64_t L = n->last_preemptive_ms, B = c->preemptive_scheduling_backoff_ms;
    int64_t j1 = 1;
    if (L != PS_PREEMPT_NEVER && L + B - s > p)
        j1 = (L + B - s + p - 1) / p;
    if (j1 <= k) {
        int64_t m = B > p ? (B + p - 1) / p : 1;
        n->last_preemptive_ms = s + (j1 + (k - j1) / m * m) * p;
    }
    n->preempt_seen_ms = s + k * p;
}

void sim_preempt_wake(struct ps_sim *sim, int tree)
{
    struct sim_tree *T = &sim->trees[tree];
    if (!T->pre->dormant_active)
        return;
    for (int i = 0; i < T->node_count; i++)
        replay_backoff(sim, &sim->nodes[T->nodes[i]], &T->ts.preempt_config);
}

bool sim_preempt_wanted(struct ps_sim *sim, int node, bool *run)
{
    struct sim_node *n = &sim->nodes[node];
    const struct sim_tree *T = &sim->trees[n->tree];
    n->preempt_seen_ms = sim->now;
    *run = false;
    if (!ps_tree_sched_preempt_due(&T->ts, &n->last_preemptive_ms, sim->now))
        return false;
    /* The stages run now. At a generation where they started nothing they would start nothing
     * again: only the backoff time moves (exact, as the regular stage's quiet nodes). */
    *run = n->preempt_quiet_gen != T->gen || sim->options.exhaustive;
    return true;
}

void sim_preempt_tree_updated(struct ps_sim *sim, int tree, int changed)
{
    struct sim_tree *T = &sim->trees[tree];
    const struct ps_tree_fs *fs = &T->ts.fs;
    for (int e = 0; e < fs->count; e++) {
        const struct ps_starvation_element *s = &T->ts.starvation[e];
        if (changed > 0 && s->starvation != s->previous_starvation) {
            sim_ev_begin(sim, "starvation_status_changed");
            sim_ev_key(sim, "tree");
            ps_textbuf_add_json(&sim->line, T->name);
            sim_ev_key(sim, "element");
            ps_textbuf_add_json(&sim->line, fs->pools[e] ? fs->pools[e]->name : fs->ops[e]->id);
            sim_ev_key(sim, "element_type");
            ps_textbuf_add_json(&sim->line, fs->pools[e] ? "pool" : "operation");
            sim_ev_key(sim, "status");
            ps_textbuf_add_json(&sim->line, ps_starvation_status_name(s->starvation));
            sim_ev_key(sim, "previous_status");
            ps_textbuf_add_json(&sim->line, ps_starvation_status_name(s->previous_starvation));
            sim_ev_end(sim);
        }
    }
    /* Statuses waiting for a timeout change with time alone: the update where the first one
     * expires runs even if nothing else changed; the ones before would change nothing. */
    T->update_due_ms =
        ps_starvation_next_change_ms(T->ts.starvation, fs->count, &T->pre->scfg, sim->now);
}

/* ---- scenario events -------------------------------------------------------------------- */

static int tree_by_name(const struct ps_sim *sim, const char *name)
{
    for (int t = 0; t < sim->tree_count; t++)
        if (strcmp(sim->trees[t].name, name) == 0)
            return t;
    return -1;
}

/* What may change at run time is what the strategy accepts (docs/scheduling-loop.md): an
 * operation's pool and filters, a pool's attributes and parent. The strategy never changes an
 * operation's pool_trees nor renames a pool: refused at load rather than failing mid-run. */
static bool has_pool_trees(const json_t *params)
{
    return json_object_get(params, "pool_trees") != NULL;
}

int sim_scenario_events_check(struct ps_sim *sim, struct ps_error *err)
{
    const struct ps_scenario *sc = sim->sc;
    for (size_t i = 0; i < sc->event_count; i++) {
        const struct ps_scenario_event *ev = &sc->events[i];
        if (ev->type == PS_SCENARIO_EV_SET_POOL_ATTRIBUTE && strcmp(ev->key, "name") == 0)
            return ps_error_set(err, PS_EINVAL,
                                "events[%zu].key: \"name\" cannot change (pools are not renamed)",
                                i);
        if (ev->type == PS_SCENARIO_EV_SET_POOL_ATTRIBUTE && strcmp(ev->key, "parent") == 0 &&
            !json_is_string(ev->value))
            return ps_error_set(err, PS_EINVAL, "events[%zu].value: \"parent\" takes a pool name", i);
        if (ev->type == PS_SCENARIO_EV_UPDATE_OPERATION && has_pool_trees(ev->parameters))
            return ps_error_set(err, PS_EINVAL,
                                "events[%zu].parameters.pool_trees: cannot change (an operation's "
                                "trees are fixed at its start)",
                                i);
    }
    return 0;
}

/* Every membership in tree t (or, op >= 0, only op's) follows a change of pools or filters. */
static int memberships_moved(struct ps_sim *sim, int t, int op, struct ps_error *err)
{
    for (int i = 0; i < sim->active_count; i++) {
        int o = sim->active[i];
        if (op >= 0 && o != op)
            continue;
        for (int k = 0; k < sim->ops[o].m_count; k++) {
            if (t >= 0 && sim->ops[o].ms[k].tree != t)
                continue;
            int rc = sim_membership_moved(sim, o, k, err);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

int sim_scenario_events_schedule(struct ps_sim *sim, struct ps_error *err)
{
    for (size_t i = 0; i < sim->sc->event_count; i++)
        if (sim_push(sim, sim->sc->events[i].time_ms, SIM_EV_SCENARIO, (int64_t)i, 0) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

static int set_node_resources(struct ps_sim *sim, const struct ps_scenario_event *ev)
{
    bool *touched = calloc((size_t)(sim->tree_count ? sim->tree_count : 1), sizeof *touched);
    if (!touched)
        return PS_ENOMEM;
    for (int64_t i = 0; i < sim->node_count; i++) {
        struct sim_node *n = &sim->nodes[i];
        if (n->group != ev->group)
            continue;
        if (ev->node >= 0) {   /* nodes of a group are registered in index order */
            int64_t first = i;
            if (ev->node >= sim->sc->node_groups[ev->group].count)
                break;
            n = &sim->nodes[first + ev->node];
        }
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (ev->resource_set & (1u << r)) {
                n->limits.v[r] = ev->resource_limits.v[r];
                n->node->resource_limits.v[r] = ev->resource_limits.v[r];
            }
        struct ps_error e;   /* only out of memory */
        ps_error_init(&e);
        if (sim_res_node_changed(sim, (int)(n - sim->nodes), &e) != 0) {
            free(touched);
            return PS_ENOMEM;
        }
        if (n->tree >= 0)
            touched[n->tree] = true;
        if (ev->node >= 0)
            break;
    }
    int rc = 0;
    for (int t = 0; t < sim->tree_count && rc == 0; t++) {
        if (!touched[t])
            continue;
        struct sim_tree *T = &sim->trees[t];
        ps_pool_tree_nodes_changed(T->tree);
        T->total = ps_pool_tree_total_resources(T->tree);
        T->fs_total = T->total;
        for (int r = 0; r < PS_RES_COUNT; r++)
            if (T->fs_total.v[r] >= PS_RES_INFINITE)
                T->fs_total.v[r] = 0;
        rc = sim_tree_changed(sim, t);
    }
    free(touched);
    return rc;
}

/* The nodes of the event get its tags (registered again: the strategy places them); a node
 * matching two trees fails the run, naming it and both trees. */
static int set_node_tags(struct ps_sim *sim, const struct ps_scenario_event *ev,
                         struct ps_error *err)
{
    int64_t k = 0;
    for (int64_t i = 0; i < sim->node_count; i++) {
        struct sim_node *n = &sim->nodes[i];
        if (n->group != ev->group)
            continue;
        if (ev->node >= 0 && k++ != ev->node)
            continue;
        char *id = strdup(n->node->id);   /* the strategy frees the old record */
        if (!id)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        int rc = ps_strategy_register_node(sim->strategy, id, (const char *const *)ev->tags,
                                           (int)ev->tag_count, &n->limits, err);
        n->node = ps_strategy_find_node(sim->strategy, id);
        free(id);
        if (rc != 0)
            return rc;
    }
    return sim_nodes_moved(sim, err);
}

int sim_scenario_event(struct ps_sim *sim, int64_t index, struct ps_error *err)
{
    const struct ps_scenario_event *ev = &sim->sc->events[index];
    int rc = 0;
    switch (ev->type) {
    case PS_SCENARIO_EV_SET_NODE_RESOURCES:
        if (set_node_resources(sim, ev) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        return 0;
    case PS_SCENARIO_EV_SET_POOL_ATTRIBUTE: {
        int t = tree_by_name(sim, ev->tree);
        bool parent = strcmp(ev->key, "parent") == 0;
        if (parent) {
            rc = ps_pool_tree_move_pool(sim->trees[t].tree, ev->pool, json_string_value(ev->value),
                                        err);
        } else {
            struct ps_value value;
            rc = ps_json_to_value(ev->value, &value, err);
            if (rc == 0) {
                rc = ps_pool_tree_set_pool_attr(sim->trees[t].tree, ev->pool, ev->key, &value, err);
                ps_value_release(&value);
            }
        }
        if (rc == 0 && (parent || strcmp(ev->key, "scheduling_tag_filter") == 0))
            rc = memberships_moved(sim, t, -1, err);
        if (rc == 0) {
            if (sim_tree_changed(sim, t) != 0)
                return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
        break;
    }
    case PS_SCENARIO_EV_SET_NODE_TAGS:
        rc = set_node_tags(sim, ev, err);
        break;
    case PS_SCENARIO_EV_SET_TREE_ATTRIBUTE: {
        int t = tree_by_name(sim, ev->tree);
        struct sim_tree *T = &sim->trees[t];
        struct ps_value value;
        rc = ps_json_to_value(ev->value, &value, err);
        if (rc == 0) {
            rc = ps_pool_tree_set_config(T->tree, ev->key, &value, err);
            ps_value_release(&value);
        }
        if (rc == 0) {   /* what the simulator keeps of the config */
            const struct ps_tree_config *cfg = ps_pool_tree_config(T->tree);
            T->tolerance = cfg->fair_share_starvation_tolerance;
            T->starvation_timeout_ms = cfg->fair_share_starvation_timeout_ms;
            if (T->pre)
                ps_tree_config_starvation_config(cfg, &T->pre->scfg);
            rc = sim_nodes_moved(sim, err);   /* a nodes_filter moves nodes */
        }
        break;
    }
    case PS_SCENARIO_EV_UPDATE_OPERATION: {
        struct sim_op *o = &sim->ops[ev->operation];
        if (o->state == SIM_OP_COMPLETED || o->state == SIM_OP_FAILED)
            return 0;   /* nothing left to change */
        if (o->state == SIM_OP_WAITING) {
            rc = ps_error_set(err, PS_EINVAL, "operation \"%s\" has not started yet (start_time %lld)",
                              o->sc->id, (long long)o->sc->start_time_ms);
            break;
        }
        struct ps_value params;
        rc = ps_json_to_value(ev->parameters, &params, err);
        if (rc == 0) {
            /* the snapshot keeps the old settings until the next update takes the change */
            rc = ps_strategy_update_operation(sim->strategy, o->sc->id, &params, err);
            ps_value_release(&params);
        }
        if (rc == 0)
            rc = memberships_moved(sim, -1, ev->operation, err);
        for (int k = 0; rc == 0 && k < o->m_count; k++) {
            if (sim_tree_changed(sim, o->ms[k].tree) != 0)
                return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
        break;
    }
    }
    if (rc != 0 && rc != PS_ENOMEM)
        ps_error_prefix(err, "events[%lld] at %lld ms", (long long)index, (long long)sim->now);
    return rc;
}
