/* sim_tentative.c — tentative pool trees in the simulator, as the service's
 * (server/op_tentative.c; the rules are core/tentative.h): the trees an operation tries at its
 * start (ps_tentative_admit), the sample bound on its jobs there, and the ban of a tree whose
 * jobs run much slower than the regular ones, checked at every completed job and every fair
 * share update: its jobs there are aborted (banned_in_tentative_tree), the operation leaves the
 * tree (operation_banned_in_tree) and goes on in its other trees. */
#include <stdlib.h>
#include <string.h>

#include "io/json_value.h"
#include "sim/sim_internal.h"

static bool tree_exists(void *ctx, const char *tree)
{
    return ps_strategy_find_tree(ctx, tree) != NULL;
}

/* *spec_json lists the admitted tentative trees after its pool_trees. */
static int extend_spec(struct ps_sim *sim, struct sim_op *o, const struct ps_operation_spec *parsed,
                       struct ps_tentative_state *st, json_t **spec_json, struct ps_error *err)
{
    json_t *copy = json_deep_copy(*spec_json), *trees = json_array();
    if (!copy || !trees || json_array_extend(trees, json_object_get(*spec_json, "pool_trees"))) {
        json_decref(copy);
        json_decref(trees);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    for (int i = 0; i < st->count; i++) {
        struct ps_tentative_tree *t = &st->trees[i];
        struct ps_error why;
        t->banned = !ps_tentative_admit(ps_strategy_find_tree(sim->strategy, t->name), t->name,
                                        o->sc->id, o->sc->user, parsed, &why);
        if (!t->banned)
            json_array_append_new(trees, json_string(t->name));
    }
    json_object_set_new(copy, "pool_trees", trees);
    json_decref(*spec_json);
    *spec_json = copy;
    return 0;
}

int sim_tentative_setup(struct ps_sim *sim, struct sim_op *o, json_t **spec_json,
                        struct ps_error *why, struct ps_error *err)
{
    struct ps_operation_spec parsed;
    if (ps_operation_spec_from_json(o->sc->spec, &parsed, NULL, why) != 0) {
        ps_error_init(why);
        return 0;   /* start_operation reports it */
    }
    struct ps_string_list none = {0, NULL};   /* the scenario has no default tentative trees */
    struct ps_tentative_state st;
    int rc = ps_tentative_state_init(&st, &parsed.tentative_tree_eligibility, &parsed.pool_trees,
                                     &parsed.tentative_pool_trees,
                                     parsed.use_default_tentative_pool_trees, &none, tree_exists,
                                     sim->strategy, why);
    if (rc == 0 && st.count > 0) {
        rc = extend_spec(sim, o, &parsed, &st, spec_json, err);
        o->tentative = rc == 0 ? malloc(sizeof *o->tentative) : NULL;
        if (o->tentative)
            *o->tentative = st;
        else
            ps_tentative_state_release(&st);
        if (rc == 0 && !o->tentative)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    } else if (rc == 0) {
        ps_tentative_state_release(&st);
    }
    ps_operation_spec_release(&parsed);
    if (rc == PS_ENOMEM)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return rc;
}

void sim_tentative_release(struct sim_op *o)
{
    if (o->tentative)
        ps_tentative_state_release(o->tentative);
    free(o->tentative);
    o->tentative = NULL;
}

bool sim_tentative_may_start(const struct sim_op *o, const char *tree)
{
    const struct ps_tentative_tree *t = o->tentative ? ps_tentative_find(o->tentative, tree) : NULL;
    return !t || ps_tentative_can_schedule(o->tentative, t);
}

void sim_tentative_job_started(struct sim_op *o, const char *tree, int64_t now_ms)
{
    if (o->tentative)
        ps_tentative_job_started(o->tentative, tree, now_ms);
}

/* Aborts the operation's jobs in tree k, takes it out of the tree. */
static int ban(struct ps_sim *sim, int op, int k, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    const char *tree = sim->trees[o->ms[k].tree].name;
    sim_ev_begin(sim, "operation_banned_in_tree");
    sim_ev_key(sim, "operation_id");
    ps_textbuf_add_json(&sim->line, o->sc->id);
    sim_ev_key(sim, "tree_id");
    ps_textbuf_add_json(&sim->line, tree);
    sim_ev_end(sim);
    for (int64_t i = 0; i < sim->node_count; i++) {
        const struct sim_node *n = &sim->nodes[i];
        for (int j = n->job_count - 1; j >= 0; j--) {
            const struct sim_job *job = &sim->jobs[n->jobs[j]];
            if (job->op != op || job->ms != k)
                continue;
            int rc = sim_job_abort(sim, n->jobs[j], "banned_in_tentative_tree", err);
            if (rc != 0)
                return rc;
        }
    }
    int rc = sim_membership_leave(sim, o, k, err);
    if (rc == 0)
        rc = ps_strategy_erase_operation_tree(sim->strategy, o->sc->id, tree, err);
    return rc;
}

static int ban_slow(struct ps_sim *sim, int op, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    struct ps_tentative_tree **newly = calloc((size_t)o->tentative->count, sizeof *newly);
    if (!newly)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int n = ps_tentative_ban_slow(o->tentative, sim->now, newly), rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        for (int k = 0; rc == 0 && k < o->m_count; k++)
            if (o->ms[k].m && strcmp(sim->trees[o->ms[k].tree].name, newly[i]->name) == 0)
                rc = ban(sim, op, k, err);
    free(newly);
    return rc;
}

int sim_tentative_job_ended(struct ps_sim *sim, int op, const char *tree, bool completed,
                            int64_t duration_ms, struct ps_error *err)
{
    struct sim_op *o = &sim->ops[op];
    if (!o->tentative)
        return 0;
    ps_tentative_job_finished(o->tentative, tree, completed, duration_ms);
    bool running = o->state == SIM_OP_RUNNING || o->state == SIM_OP_PENDING;
    return completed && running ? ban_slow(sim, op, err) : 0;
}

int sim_tentative_check(struct ps_sim *sim, struct ps_error *err)
{
    for (int i = 0; i < sim->active_count; i++) {
        int op = sim->active[i];
        if (sim->ops[op].tentative) {
            int rc = ban_slow(sim, op, err);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
