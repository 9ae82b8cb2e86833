/* op_tentative.c — tentative pool trees in the service (core/tentative.h): the trees an
 * operation tries at its start, the sample bound on its jobs there, and the ban of a tree whose
 * jobs run much slower than the regular ones (upstream's OnOperationBannedInTentativeTree: its
 * jobs there are aborted with banned_in_tentative_tree, the tree is erased from the operation,
 * which goes on in its other trees). A tentative tree whose pool refuses the operation (a count
 * limit) is erased at the start instead of failing it (upstream's "Tentative tree is erased for
 * operation because pool limits are violated"). Under svc->mu. */
#include <stdlib.h>
#include <string.h>

#include "core/tentative.h"
#include "server/event_log.h"
#include "server/op_tentative.h"
#include "server/persist.h"
#include "server/service_state.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"

static bool tree_exists(void *ctx, const char *tree)
{
    return ps_strategy_find_tree(ctx, tree) != NULL;
}

static bool in_array(const json_t *names, const char *name)
{
    size_t k;
    json_t *x;
    json_array_foreach(names, k, x) if (json_is_string(x) && strcmp(json_string_value(x), name) == 0)
        return true;
    return false;
}

/* The scheduler config's default_tentative_pool_trees as a list pointing into the JSON (items
 * has room for all of them). */
static struct ps_string_list defaults_of(const struct ps_service *svc, char **items)
{
    struct ps_string_list l = {0, items};
    size_t k;
    json_t *x;
    json_array_foreach(svc->default_tentative_pool_trees, k, x) if (json_is_string(x))
        items[l.count++] = (char *)json_string_value(x);
    return l;
}

int ps_svc_op_tentative_setup(struct ps_service *svc, struct ps_svc_op *op,
                              const struct ps_operation_spec *parsed, const json_t *restore,
                              json_t *erased, struct ps_error *err)
{
    char **items = calloc(json_array_size(svc->default_tentative_pool_trees) + 1, sizeof *items);
    if (!items)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    struct ps_string_list defaults = defaults_of(svc, items);
    struct ps_tentative_eligibility_config cfg = parsed->tentative_tree_eligibility;
    if (restore)
        cfg.ignore_missing_pool_trees = true;   /* a tree removed while it was down */
    struct ps_tentative_state st;
    int rc = ps_tentative_state_init(&st, &cfg, &parsed->pool_trees, &parsed->tentative_pool_trees,
                                     parsed->use_default_tentative_pool_trees, &defaults,
                                     tree_exists, svc->strategy, err);
    free(items);
    if (rc != 0)
        return rc;
    st.cfg = parsed->tentative_tree_eligibility;
    if (st.count == 0)
        return 0;
    for (int i = 0; i < st.count; i++) {
        struct ps_tentative_tree *t = &st.trees[i];
        if (in_array(erased, t->name)) {
            t->banned = true;   /* before a restart */
            continue;
        }
        if (restore) {   /* in the trees it was in before the restart */
            t->banned = !json_object_get(json_object_get(restore, "pool_per_tree"), t->name);
            continue;
        }
        struct ps_pool_tree *tree = ps_strategy_find_tree(svc->strategy, t->name);
        struct ps_error e;
        if (!ps_tentative_admit(tree, t->name, op->id, op->user, parsed, &e)) {
            t->banned = true;   /* never joined */
            if (e.code == 0)
                continue;   /* the tree keeps vanilla operations out */
            json_array_append_new(erased, json_string(t->name));
            ps_svc_log(svc, "info", "tentative_tree_erased", "id=%s tree=%s reason=%s", op->id,
                       t->name, e.msg);
        }
    }
    op->tentative = malloc(sizeof *op->tentative);
    if (!op->tentative) {
        ps_tentative_state_release(&st);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    *op->tentative = st;
    return 0;
}

static struct ps_tentative_tree *tentative_of(const struct ps_svc_op *op, int slot)
{
    if (!op->tentative || !op->sop || slot < 0 || slot >= op->sop->tree_count)
        return NULL;
    return ps_tentative_find(op->tentative, op->sop->tree_names[slot]);
}

bool ps_svc_tentative_is(const struct ps_svc_op *op, const char *tree)
{
    return op->tentative && ps_tentative_find(op->tentative, tree) != NULL;
}

bool ps_svc_tentative_may_start(struct ps_svc_op *op, int slot)
{
    struct ps_tentative_tree *t = tentative_of(op, slot);
    if (!t || ps_tentative_can_schedule(op->tentative, t))
        return true;
    op->trees[slot].saturated_in_tentative_tree++;
    return false;
}

int64_t ps_svc_tentative_pending(struct ps_svc_op *op, int slot, int64_t pending)
{
    return pending > 0 && !ps_svc_tentative_may_start(op, slot) ? 0 : pending;
}

void ps_svc_tentative_job_started(const struct ps_svc_job *job)
{
    struct ps_svc_op *op = job->op;
    if (op->tentative && op->sop)
        ps_tentative_job_started(op->tentative, op->sop->tree_names[job->tree_slot], job->start_ms);
}

void ps_svc_tentative_replay(const struct ps_svc_job *job)
{
    struct ps_svc_op *op = job->op;
    if (!op->tentative || !op->sop || job->tree_slot < 0 || job->tree_slot >= op->sop->tree_count)
        return;
    const char *tree = op->sop->tree_names[job->tree_slot];
    ps_tentative_job_started(op->tentative, tree, job->start_ms);
    if (job->state != PS_JOB_RUNNING)
        ps_tentative_job_finished(op->tentative, tree, job->state == PS_JOB_COMPLETED,
                                  job->finish_ms - job->start_ms);
}

/* Aborts op's jobs in the banned tree, takes the operation out of it and keeps the erasure. */
static void ban(struct ps_service *svc, struct ps_svc_op *op, const char *tree, int64_t now_ms)
{
    int slot = ps_svc_op_tree_slot(op, tree);
    ps_svc_log(svc, "info", "operation_banned_in_tree", "id=%s tree=%s", op->id, tree);
    ps_event_log_banned_in_tree(svc, op, tree, now_ms);
    for (int i = 0; slot >= 0 && i < svc->node_count; i++) {
        struct ps_svc_job *next;
        for (struct ps_svc_job *j = svc->node_list[i]->jobs; j; j = next) {
            next = j->node_next;
            if (j->op == op && j->tree_slot == slot && j->state == PS_JOB_RUNNING)
                ps_svc_job_preempt(svc, j, "banned_in_tentative_tree", NULL, 0, NULL, now_ms,
                                   NULL, NULL);
        }
    }
    struct ps_svc_tree_state *ts = ps_svc_tree(svc, tree);
    if (slot >= 0 && op->trees[slot].element >= 0 && ts)
        ps_tree_sched_detach(&ts->sched, op->trees[slot].element);
    if (slot >= 0)
        op->trees[slot].element = -1;
    struct ps_error e;
    ps_error_init(&e);
    if (ps_strategy_erase_operation_tree(svc->strategy, op->id, tree, &e) != 0)
        ps_svc_log(svc, "warning", "tentative_ban_failed", "id=%s tree=%s: %s", op->id, tree, e.msg);
    if (ts)
        ts->dirty = true;
    pthread_cond_broadcast(&svc->loop_cv);   /* the engine loop updates at once */
    if (!in_array(op->erased_trees, tree))
        json_array_append_new(op->erased_trees, json_string(tree));
    ps_svc_op_update_pools(op);   /* its runtime parameters lose the tree */
    ps_persist_op(svc, op);
    ps_svc_log_activated(svc);    /* operations the freed pool slot started */
}

static void ban_slow(struct ps_service *svc, struct ps_svc_op *op, int64_t now_ms)
{
    struct ps_tentative_tree **newly = calloc((size_t)op->tentative->count, sizeof *newly);
    if (!newly)
        return;   /* checked again at the next job or period */
    int n = ps_tentative_ban_slow(op->tentative, now_ms, newly);
    for (int i = 0; i < n; i++) {
        int slot = ps_svc_op_tree_slot(op, newly[i]->name);
        if (slot >= 0 && op->sop->memberships[slot])   /* else its tree was removed */
            ban(svc, op, newly[i]->name, now_ms);
    }
    free(newly);
}

void ps_svc_tentative_job_finished(struct ps_service *svc, const struct ps_svc_job *job,
                                   int64_t now_ms)
{
    struct ps_svc_op *op = job->op;
    if (!op->tentative || !op->sop || op->finished)
        return;
    bool completed = job->state == PS_JOB_COMPLETED;
    ps_tentative_job_finished(op->tentative, op->sop->tree_names[job->tree_slot], completed,
                              job->finish_ms - job->start_ms);
    if (completed)
        ban_slow(svc, op, now_ms);
}

void ps_svc_tentative_check(struct ps_service *svc, int64_t now_ms)
{
    for (int i = 0; i < svc->op_count; i++) {
        struct ps_svc_op *op = svc->op_list[i];
        if (op->tentative && op->sop && !op->finished)
            ban_slow(svc, op, now_ms);
    }
}
