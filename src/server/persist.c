/* persist.c — the service's state as JSON documents in the store, and loading them back.
 *
 * Kinds (objects table, store.h):
 *   meta/default_tree     {"default_tree": name | null}
 *   meta/scheduler_config {"template_pool_tree_config_map": {...}} (sched_config.c)
 *   tree/<name>           {"config": {the keys set on the tree}, "pools": [{name, parent, pool config...,
 *                          accumulated_resource_volume}], "below_fair_share_since": {pool: ms}}
 *                         explicit pools only, in creation order, each with the config as set
 *                         on it (a config_preset's values are derived again from the tree's
 *                         pool_config_presets on load); the integral volumes and
 *                         starvation timers are refreshed after every fair share update.
 *   operation/<id>        {id, user, seq, start_time, spec, parameters, suspended, state (when
 *                          finished), finish_time, error, pool_per_tree, running_per_tree (when
 *                          active: a restart puts it back in those pools, running or pending
 *                          as it was), below_fair_share_since,
 *                          and when finished task_progress {task: {completed, failed, aborted}}
 *                          and resulting_spec (a finished operation is restored outside the
 *                          strategy, which filled its defaults)}
 *   job/<id>              every job, with its memory reserve, statistics and stderr.
 * The tree document is built as text from cached pool fragments (persist_tree.c).
 * Task queues, progress and memory digests of unfinished operations are not stored: they are
 * rebuilt from the operation's jobs (completed job indexes are done; running jobs re-attach;
 * digests replay the finished jobs in finish order), so they can never disagree with the jobs.
 * A finished operation's progress is in its document, so a restart reads none of its jobs
 * (documents written before task_progress existed are counted from the jobs once and rewritten).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_value.h"
#include "server/event_log.h"
#include "server/journal.h"
#include "server/op_tentative.h"
#include "server/persist.h"
#include "server/nodes_config.h"
#include "server/sched_config.h"
#include "server/service_state.h"
#include "server/store_mirror.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"
#include "server/user_pool_map.h"

/* ---- documents ------------------------------------------------------------------------------ */

static json_t *resources_json(const struct ps_resources *r)
{
    json_t *o = json_object();
    for (int i = 0; i < PS_RES_COUNT; i++)
        json_object_set_new(o, ps_resource_name(i), json_integer(r->v[i]));
    return o;
}

static void resources_from(const json_t *o, struct ps_resources *r)
{
    *r = ps_resources_zero();
    for (int i = 0; i < PS_RES_COUNT; i++) {
        const json_t *v = json_object_get(o, ps_resource_name(i));
        if (json_is_integer(v))
            r->v[i] = json_integer_value(v);
    }
}

json_t *ps_persist_op_doc(struct ps_service *svc, const struct ps_svc_op *op)
{
    (void)svc;
    json_t *doc = json_pack("{s:s, s:s, s:I, s:I, s:O, s:b}", "id", op->id, "user", op->user,
                            "seq", (json_int_t)op->seq, "start_time", (json_int_t)op->start_ms,
                            "spec", op->spec, "suspended", op->suspended);
    if (!doc)
        return NULL;
    if (op->erased_trees && json_array_size(op->erased_trees) > 0)
        json_object_set(doc, "erased_trees", op->erased_trees);
    if (op->parameters)
        json_object_set(doc, "parameters", op->parameters);
    if (op->pool_per_tree)
        json_object_set(doc, "pool_per_tree", op->pool_per_tree);
    if (op->finished && op->runtime_options)   /* an active one computes them again */
        json_object_set(doc, "runtime_options", op->runtime_options);
    if (op->finished) {
        json_object_set_new(doc, "state", json_string(op->state));
        json_object_set_new(doc, "finish_time", json_integer(op->finish_ms));
    }
    if (op->error)
        json_object_set_new(doc, "error", json_string(op->error));
    if (op->finished) {
        json_t *tp = json_object();
        for (int i = 0; i < op->task_count; i++) {
            const struct ps_svc_task *t = &op->tasks[i];
            json_object_set_new(tp, t->name,
                                json_pack("{s:I, s:I, s:I}", "completed", (json_int_t)t->completed,
                                          "failed", (json_int_t)t->failed, "aborted",
                                          (json_int_t)t->aborted));
        }
        json_object_set_new(doc, "task_progress", tp);
        json_object_set(doc, "resulting_spec", op->resulting_spec);
    }
    if (op->sop && !op->finished) {
        /* running or pending per tree, so that a restart gives the same states */
        json_t *running = json_object();
        for (int i = 0; i < op->sop->tree_count; i++) {
            struct ps_tree_op *to = op->sop->memberships ? op->sop->memberships[i] : NULL;
            if (to)
                json_object_set_new(running, op->sop->tree_names[i], json_boolean(to->running));
        }
        json_object_set_new(doc, "running_per_tree", running);
    }
    if (op->sop && !op->finished) {
        json_t *since = json_object();
        for (int i = 0; i < op->sop->tree_count; i++) {
            struct ps_tree_op *to = op->sop->memberships ? op->sop->memberships[i] : NULL;
            if (to && to->dynamic.below_fair_share_since_ms != PS_STARVATION_NEVER)
                json_object_set_new(since, op->sop->tree_names[i],
                                    json_integer(to->dynamic.below_fair_share_since_ms));
        }
        json_object_set_new(doc, "below_fair_share_since", since);
    }
    return doc;
}

json_t *ps_persist_job_doc(const struct ps_svc_job *job)
{
    const struct ps_memory_job *m = &job->mem;
    json_t *mem = json_pack("{s:I, s:I, s:I, s:f, s:f, s:b, s:b, s:I, s:I, s:I}",
                            "memory_limit", (json_int_t)m->memory_limit_bytes,
                            "job_proxy_memory", (json_int_t)m->job_proxy_memory_bytes,
                            "footprint", (json_int_t)m->footprint_memory_bytes,
                            "user_job_factor", m->user_job_memory_reserve_factor,
                            "job_proxy_factor", m->job_proxy_memory_reserve_factor,
                            "user_job_from_overdraft", m->user_job_factor_from_overdraft,
                            "job_proxy_from_overdraft", m->job_proxy_factor_from_overdraft,
                            "user_job_reserve", (json_int_t)m->user_job_memory_reserve_bytes,
                            "job_proxy_reserve", (json_int_t)m->job_proxy_memory_reserve_bytes,
                            "memory", (json_int_t)m->memory_bytes);
    json_t *doc = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:i, s:I, s:I, s:f, s:f, s:o, s:o}",
                            "id", job->id, "operation_id", job->op->id, "task_name",
                            job->op->tasks[job->task].name, "job_index",
                            (json_int_t)job->job_index, "state", ps_job_state_name(job->state),
                            "node_id", job->node_id, "tree_slot", job->tree_slot, "start_time",
                            (json_int_t)job->start_ms, "finish_time", (json_int_t)job->finish_ms,
                            "cpu_limit", job->cpu_limit, "cpu_guarantee", job->cpu_guarantee,
                            "memory", mem, "usage", resources_json(&job->usage));
    if (!doc)
        return NULL;
    /* the tree by name too: a restart after a tree was removed lists the operation's trees
     * without it (its slots move), so the slot alone may name another tree */
    const struct ps_operation *sop = job->op->sop;
    if (sop && job->tree_slot >= 0 && job->tree_slot < sop->tree_count)
        json_object_set_new(doc, "tree", json_string(sop->tree_names[job->tree_slot]));
    if (job->error)
        json_object_set_new(doc, "error", json_string(job->error));
    if (job->abort_reason)
        json_object_set_new(doc, "abort_reason", json_string(job->abort_reason));
    if (job->preemption_reason)
        json_object_set_new(doc, "preemption_reason", json_string(job->preemption_reason));
    if (job->statistics)
        json_object_set(doc, "statistics", job->statistics);
    if (job->exec_attributes)
        json_object_set(doc, "exec_attributes", job->exec_attributes);
    if (job->stderr_text) {
        json_object_set_new(doc, "stderr", json_string(job->stderr_text));
        json_object_set_new(doc, "stderr_truncated", json_boolean(job->stderr_truncated));
    }
    return doc;
}

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

uint64_t ps_persist_tree_dynamic_hash(struct ps_pool_tree *tree)
{
    uint64_t h = 14695981039346656037ULL;
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        const struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        if (p->ephemeral)
            continue;
        h = fnv(h, p->name, strlen(p->name) + 1);
        h = fnv(h, &p->accumulated_volume, sizeof p->accumulated_volume);
        h = fnv(h, &p->dynamic.below_fair_share_since_ms, sizeof p->dynamic.below_fair_share_since_ms);
    }
    return h;
}

void ps_persist_tree_removed(struct ps_service *svc, const char *name)
{
    if (svc->journal)
        ps_journal_put(svc->journal, "tree", name, NULL);
}

int ps_persist_meta_get(struct ps_service *svc, const char *key, json_t **doc,
                        struct ps_error *err)
{
    char *text = NULL;
    *doc = NULL;
    pthread_mutex_lock(&svc->store_mu);
    /* while PostgreSQL is down, the reload reads its copy (store_mirror.h) */
    int rc = ps_store_get(ps_store_mirror_source(svc), "meta", key, &text, err);
    pthread_mutex_unlock(&svc->store_mu);
    if (rc == PS_ENOENT) {
        ps_error_init(err);
        return 0;   /* never stored */
    }
    if (rc != 0)
        return rc;
    json_error_t je;
    *doc = json_loads(text, 0, &je);
    free(text);
    if (!*doc)
        return ps_error_set(err, PS_EINVAL, "meta/%s: not JSON: %s", key, je.text);
    if (!json_is_object(*doc)) {
        json_decref(*doc);
        *doc = NULL;
        return ps_error_set(err, PS_EINVAL, "meta/%s: not a map", key);
    }
    return 0;
}

void ps_persist_meta(struct ps_service *svc)
{
    const char *d = ps_strategy_default_tree(svc->strategy);
    if (svc->journal)
        ps_journal_put(svc->journal, "meta", "default_tree",
                       json_pack("{s:o}", "default_tree", d ? json_string(d) : json_null()));
}

/* The below_fair_share_since op's document carries for tree slot i (ps_persist_op_doc). */
static int64_t doc_since(const struct ps_svc_op *op, int i)
{
    struct ps_tree_op *to = op->sop && !op->finished && op->sop->memberships && i < op->sop->tree_count
                                ? op->sop->memberships[i]
                                : NULL;
    return to ? to->dynamic.below_fair_share_since_ms : PS_STARVATION_NEVER;
}

static void note_since(struct ps_svc_op *op)
{
    for (int i = 0; i < op->tree_count; i++) {
        op->trees[i].persisted_since_ms = doc_since(op, i);
        op->trees[i].since_persisted = true;
    }
}

bool ps_persist_op_since_changed(const struct ps_svc_op *op)
{
    for (int i = 0; i < op->tree_count; i++) {
        int64_t stored = op->trees[i].since_persisted ? op->trees[i].persisted_since_ms
                                                      : PS_STARVATION_NEVER;
        if (doc_since(op, i) == stored)
            continue;
        /* the timer of an operation that is starving, or the one its document still carries:
         * not each below-fair-share timer that comes and goes before the starvation timeout
         * (those are many with thousands of operations, and cost a write each) */
        const struct ps_tree_op *to = op->sop && op->sop->memberships && i < op->sop->tree_count
                                          ? op->sop->memberships[i]
                                          : NULL;
        if (stored != PS_STARVATION_NEVER || (to && to->dynamic.starvation != PS_NON_STARVING))
            return true;
    }
    return false;
}

void ps_persist_op(struct ps_service *svc, struct ps_svc_op *op)
{
    if (!svc->journal)
        return;
    ps_journal_put(svc->journal, "operation", op->id, ps_persist_op_doc(svc, op));
    note_since(op);
}

void ps_persist_job(struct ps_service *svc, struct ps_svc_job *job)
{
    if (!svc->journal)
        return;
    uint64_t ticket = ps_journal_put(svc->journal, "job", job->id, ps_persist_job_doc(job));
    if (job->state != PS_JOB_RUNNING)
        ps_job_archive_retire(svc, job, ticket);
}

/* ---- loading -------------------------------------------------------------------------------- */

struct docs {
    json_t *arr;
};

static int collect(const char *key, const char *value, void *ctx)
{
    struct docs *d = ctx;
    json_error_t je;
    json_t *doc = json_loads(value, 0, &je);
    if (!doc)
        return PS_EINVAL;
    json_t *pair = json_pack("{s:s, s:o}", "key", key, "doc", doc);
    json_array_append_new(d->arr, pair);
    return 0;
}

static int list_kind(struct ps_service *svc, const char *kind, json_t **out, struct ps_error *err)
{
    struct docs d = {json_array()};
    pthread_mutex_lock(&svc->store_mu);
    int rc = ps_store_list(ps_store_mirror_source(svc), kind, NULL, collect, &d, err);
    pthread_mutex_unlock(&svc->store_mu);
    if (rc != 0) {
        json_decref(d.arr);
        return ps_error_set(err, rc, "cannot read the stored %s documents", kind);
    }
    *out = d.arr;
    return 0;
}

/* A pool's acl as older poolsched stored it: a list of user names, each allowed to use the
 * pool, and only they (every restricted pool on the path had to list the user). Becomes the
 * ACL {allow, those names, [use]} with inherit_acl false: the same users may use the pool. (A
 * nested restricted pool no longer also requires its ancestor's list: docs/api.md.) An empty
 * list was "anyone" and is the empty ACL that inherits. */
static void upgrade_legacy_acls(json_t *pools)
{
    size_t i, j;
    json_t *pool, *item;
    json_array_foreach(pools, i, pool) {
        json_t *acl = json_object_get(pool, "acl");
        bool names = json_is_array(acl) && json_array_size(acl) > 0;
        json_array_foreach(acl, j, item)
            names = names && json_is_string(item);
        if (!names)
            continue;
        json_t *ace = json_pack("{s:s, s:O, s:[s]}", "action", "allow", "subjects", acl,
                                "permissions", "use");
        json_object_set_new(pool, "acl", json_pack("[o]", ace));
        json_object_set_new(pool, "inherit_acl", json_false());
    }
}

static int load_tree(struct ps_service *svc, const char *name, const json_t *doc,
                     struct ps_error *err)
{
    json_t *config = json_deep_copy(json_object_get(doc, "config"));
    if (!json_is_object(config)) {
        json_decref(config);
        config = json_object();
    }
    json_t *pools = json_deep_copy(json_object_get(doc, "pools"));
    if (json_is_array(pools)) {
        upgrade_legacy_acls(pools);
        json_object_set(config, "pools", pools);
    }
    json_decref(pools);
    struct ps_value cv;
    int rc = ps_json_to_value(config, &cv, err);
    json_decref(config);
    if (rc != 0)
        return rc;
    rc = ps_strategy_add_tree(svc->strategy, name, &cv, err);
    ps_value_release(&cv);
    if (rc != 0) {
        ps_error_prefix(err, "stored pool tree \"%s\"", name);
        return rc;
    }
    if ((rc = ps_svc_add_tree_state(svc, name, err)) != 0)
        return rc;
    struct ps_pool_tree *tree = ps_strategy_find_tree(svc->strategy, name);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(doc, "attributes"), key, v) {
        struct ps_value av;
        if ((rc = ps_json_to_value(v, &av, err)) == 0)
            rc = ps_pool_tree_set_custom_attribute(tree, key, &av, err);
        ps_value_release(&av);
        if (rc != 0) {
            ps_error_prefix(err, "stored pool tree \"%s\": attributes", name);
            return rc;
        }
    }
    const json_t *since = json_object_get(doc, "below_fair_share_since");
    const char *pool;
    json_object_foreach((json_t *)since, pool, v) {
        struct ps_pool *p = ps_pool_tree_find_pool(tree, pool);
        if (p && json_is_integer(v))
            p->dynamic.below_fair_share_since_ms = json_integer_value(v);
    }
    return 0;
}

static int cmp_seq(const void *a, const void *b)
{
    const json_t *x = json_object_get(*(json_t *const *)a, "doc");
    const json_t *y = json_object_get(*(json_t *const *)b, "doc");
    json_int_t sx = json_integer_value(json_object_get(x, "seq"));
    json_int_t sy = json_integer_value(json_object_get(y, "seq"));
    return (sx > sy) - (sx < sy);
}

static json_t **sorted(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr);
    json_t **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(arr, i);
    qsort(v, n, sizeof *v, cmp);
    return v;
}

/* Sets a finished operation's progress from its document; false when the document has none
 * (written before task_progress existed): then it is counted from the jobs. */
static bool restore_progress(struct ps_svc_op *op, const json_t *doc)
{
    const json_t *tp = json_object_get(doc, "task_progress");
    if (!json_is_object(tp))
        return false;
    op->failed_jobs = 0;
    for (int i = 0; i < op->task_count; i++) {
        struct ps_svc_task *t = &op->tasks[i];
        const json_t *p = json_object_get(tp, t->name);
        t->completed = json_integer_value(json_object_get(p, "completed"));
        t->failed = json_integer_value(json_object_get(p, "failed"));
        t->aborted = json_integer_value(json_object_get(p, "aborted"));
        op->failed_jobs += t->failed;
    }
    return true;
}

/* An operation's spec as stored before ACLs: its `acl` and `owners` were unknown keys then,
 * ignored, so any value was accepted. One that is not valid now (an acl of user names, ...)
 * is dropped with a warning naming the operation and the value, and the operation restored
 * as it ran: the key gave no one rights then and gives none now. Returns a new reference (the
 * spec itself when nothing is dropped), NULL when out of memory. */
static json_t *drop_legacy_spec_keys(struct ps_service *svc, const char *id, const json_t *spec)
{
    static const char *const keys[] = {"acl", "owners"};
    json_t *out = json_incref((json_t *)spec);
    for (size_t i = 0; out && i < sizeof keys / sizeof keys[0]; i++) {
        const json_t *v = json_object_get(out, keys[i]);
        if (!v)
            continue;
        json_t *alone = json_pack("{s:O}", keys[i], v);
        struct ps_operation_spec parsed;
        struct ps_error e;
        ps_error_init(&e);
        int rc = alone ? ps_operation_spec_from_json(alone, &parsed, NULL, &e) : PS_ENOMEM;
        json_decref(alone);
        if (rc == 0)
            ps_operation_spec_release(&parsed);
        if (rc != PS_EINVAL)
            continue;
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        ps_svc_log(svc, "warning", "operation_spec_key_ignored",
                   "id=%s key=%s value=%.200s error=\"%s\"", id, keys[i], text ? text : "?", e.msg);
        free(text);
        json_t *copy = json_deep_copy(out);
        json_decref(out);
        out = copy;
        if (out)
            json_object_del(out, keys[i]);
    }
    return out;
}

/* *scan: the operation's jobs must be read (it runs, or its progress is not stored). */
static int load_op(struct ps_service *svc, const json_t *doc, struct ps_svc_op **out, bool *scan,
                   struct ps_error *err)
{
    *out = NULL;
    *scan = false;
    const char *id = json_string_value(json_object_get(doc, "id"));
    const char *user = json_string_value(json_object_get(doc, "user"));
    const char *state = json_string_value(json_object_get(doc, "state"));
    if (!id || !user || !json_object_get(doc, "spec"))
        return ps_error_set(err, PS_EINVAL, "a stored operation lacks id, user or spec");
    json_t *spec = drop_legacy_spec_keys(svc, id, json_object_get(doc, "spec"));
    if (!spec)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int64_t start = json_integer_value(json_object_get(doc, "start_time"));
    struct ps_svc_op *op = NULL;
    struct ps_error e2;
    ps_error_init(&e2);
    /* an active operation goes back into the pools it was in, running or pending as it was */
    int rc = ps_svc_op_create(svc, id, user, start, spec, state == NULL, state ? NULL : doc, &op,
                              &e2);
    bool lost = false;
    if (rc != 0 && state == NULL) {
        /* The trees changed so that it cannot start again (its tree is gone): keep it as
         * failed. */
        ps_error_init(&e2);
        rc = ps_svc_op_create(svc, id, user, start, spec, false, NULL, &op, &e2);
        lost = true;
    }
    json_decref(spec);
    if (rc != 0) {
        ps_svc_log(svc, "error", "operation_not_restored", "id=%s error=\"%s\"", id, e2.msg);
        return 0;
    }
    op->seq = json_integer_value(json_object_get(doc, "seq"));
    if (op->seq > svc->op_seq)
        svc->op_seq = op->seq;
    const json_t *ppt = json_object_get(doc, "pool_per_tree");
    if (ppt && !op->pool_per_tree)
        op->pool_per_tree = json_deep_copy(ppt);
    const json_t *rto = json_object_get(doc, "runtime_options");
    if (json_is_object(rto) && state) {
        json_decref(op->runtime_options);
        op->runtime_options = json_deep_copy(rto);
    }
    const json_t *params = json_object_get(doc, "parameters");
    if (json_is_object(params) && op->sop && !state) {
        /* the pools are restored already: a pool in the parameters would be resolved again
         * (an explicit pool that has since got create_ephemeral_subpools, ...) */
        json_t *rest = json_deep_copy(params);
        if (json_is_object(ppt)) {
            const char *tk;
            json_t *tv;
            json_object_del(rest, "pool");
            json_object_foreach(json_object_get(rest, "scheduling_options_per_pool_tree"), tk, tv)
                json_object_del(tv, "pool");
        }
        struct ps_value pv;
        if (rest && ps_json_to_value(rest, &pv, NULL) == 0) {
            if (ps_strategy_update_operation(svc->strategy, id, &pv, NULL) == 0)
                ps_svc_op_update_pools(op);
            ps_value_release(&pv);
        }
        json_decref(rest);
        op->parameters = json_deep_copy(params);
    }
    if (json_is_true(json_object_get(doc, "suspended"))) {
        /* an active operation is suspended again; a finished one keeps the flag it ended with */
        if (op->sop && !state)
            ps_strategy_suspend_operation(svc->strategy, id, true, NULL);
        op->suspended = true;
    }
    const json_t *since = json_object_get(doc, "below_fair_share_since");
    if (op->sop && json_is_object(since))
        for (int i = 0; i < op->sop->tree_count; i++) {
            const json_t *v = json_object_get(since, op->sop->tree_names[i]);
            struct ps_tree_op *to = op->sop->memberships ? op->sop->memberships[i] : NULL;
            if (to && json_is_integer(v))
                to->dynamic.below_fair_share_since_ms = json_integer_value(v);
        }
    const char *error = json_string_value(json_object_get(doc, "error"));
    if (state || lost) {
        op->finished = true;
        op->finish_ms = state ? json_integer_value(json_object_get(doc, "finish_time")) : start;
        free(op->state);
        op->state = strdup(state ? state : "failed");
        free(op->error);
        /* a completed operation has no error; only a lost one gets this explanation */
        op->error = error ? strdup(error)
                    : lost ? strdup("the operation could not be restored after a restart")
                           : NULL;
        /* restored outside the strategy, it could not fill the strategy's defaults again */
        const json_t *rs = json_object_get(doc, "resulting_spec");
        if (state && json_is_object(rs)) {
            json_decref(op->resulting_spec);
            op->resulting_spec = json_deep_copy(rs);
        }
        for (int i = 0; i < op->task_count; i++)
            op->tasks[i].q_len = 0;
        op->shape_task = -1;
        if (lost)
            ps_persist_op(svc, op);
    }
    note_since(op);   /* what the stored document carries */
    ps_svc_op_refresh_state(op);
    *scan = lost || !state || !restore_progress(op, doc);
    if (!*scan)
        ps_svc_op_release(svc, op);   /* finished and counted: no arrays, no jobs */
    *out = op;
    return 0;
}

static int state_from_name(const char *s)
{
    if (!s)
        return -1;
    for (int i = PS_JOB_RUNNING; i <= PS_JOB_ABORTED; i++)
        if (strcmp(ps_job_state_name(i), s) == 0)
            return i;
    return -1;
}

struct ps_svc_job *ps_persist_job_from_doc(struct ps_service *svc, const json_t *doc)
{
    const char *id = json_string_value(json_object_get(doc, "id"));
    const char *op_id = json_string_value(json_object_get(doc, "operation_id"));
    const char *task_name = json_string_value(json_object_get(doc, "task_name"));
    const char *node = json_string_value(json_object_get(doc, "node_id"));
    int state = state_from_name(json_string_value(json_object_get(doc, "state")));
    struct ps_svc_op *op = op_id ? ps_svc_find_op(svc, op_id) : NULL;
    if (!id || !op || !task_name || !node || state < 0)
        return NULL;
    int task = -1;
    for (int i = 0; i < op->task_count; i++)
        if (strcmp(op->tasks[i].name, task_name) == 0)
            task = i;
    int64_t index = json_integer_value(json_object_get(doc, "job_index"));
    if (task < 0 || index < 0 || index >= op->tasks[task].job_count)
        return NULL;
    struct ps_svc_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->waiting_job_timeout_ms = -1;   /* not kept: a start sent again leaves it to the node */
    j->id = strdup(id);
    j->node_id = strdup(node);
    j->op = op;
    j->task = task;
    j->job_index = index;
    j->state = state;
    j->tree_slot = (int)json_integer_value(json_object_get(doc, "tree_slot"));
    if (j->tree_slot < 0 || j->tree_slot >= op->tree_count)
        j->tree_slot = 0;
    const char *tree = json_string_value(json_object_get(doc, "tree"));
    for (int k = 0; tree && op->sop && k < op->sop->tree_count; k++)
        if (strcmp(op->sop->tree_names[k], tree) == 0)
            j->tree_slot = k;
    j->start_ms = json_integer_value(json_object_get(doc, "start_time"));
    j->finish_ms = json_integer_value(json_object_get(doc, "finish_time"));
    j->cpu_limit = json_number_value(json_object_get(doc, "cpu_limit"));
    j->cpu_guarantee = json_number_value(json_object_get(doc, "cpu_guarantee"));
    const json_t *m = json_object_get(doc, "memory");
    j->mem.memory_limit_bytes = json_integer_value(json_object_get(m, "memory_limit"));
    j->mem.job_proxy_memory_bytes = json_integer_value(json_object_get(m, "job_proxy_memory"));
    j->mem.footprint_memory_bytes = json_integer_value(json_object_get(m, "footprint"));
    j->mem.user_job_memory_reserve_factor = json_number_value(json_object_get(m, "user_job_factor"));
    j->mem.job_proxy_memory_reserve_factor = json_number_value(json_object_get(m, "job_proxy_factor"));
    j->mem.user_job_factor_from_overdraft = json_is_true(json_object_get(m, "user_job_from_overdraft"));
    j->mem.job_proxy_factor_from_overdraft = json_is_true(json_object_get(m, "job_proxy_from_overdraft"));
    j->mem.user_job_memory_reserve_bytes = json_integer_value(json_object_get(m, "user_job_reserve"));
    j->mem.job_proxy_memory_reserve_bytes = json_integer_value(json_object_get(m, "job_proxy_reserve"));
    j->mem.memory_bytes = json_integer_value(json_object_get(m, "memory"));
    resources_from(json_object_get(doc, "usage"), &j->usage);
    const char *s;
    if ((s = json_string_value(json_object_get(doc, "error"))))
        j->error = strdup(s);
    if ((s = json_string_value(json_object_get(doc, "abort_reason"))))
        j->abort_reason = strdup(s);
    if ((s = json_string_value(json_object_get(doc, "preemption_reason"))))
        j->preemption_reason = strdup(s);
    const json_t *st = json_object_get(doc, "statistics");
    if (st)
        j->statistics = json_deep_copy(st);
    const json_t *ea = json_object_get(doc, "exec_attributes");
    if (json_is_object(ea))
        j->exec_attributes = json_deep_copy(ea);
    if ((s = json_string_value(json_object_get(doc, "stderr"))))
        j->stderr_text = strdup(s);
    j->stderr_truncated = json_is_true(json_object_get(doc, "stderr_truncated"));
    if (!j->id || !j->node_id) {
        ps_svc_job_free(j);
        return NULL;
    }
    return j;
}

struct scan_ctx {
    struct ps_service *svc;
    struct ps_svc_op *op;
};

/* One stored job of an operation being restored, in finish order: running jobs stay in memory
 * (rebuild_progress re-attaches them); finished ones are counted, teach the digests of a running
 * operation, and are freed. */
static int load_job(const char *job_id, const char *text, void *ctx)
{
    struct scan_ctx *c = ctx;
    json_t *doc = json_loads(text, 0, NULL);
    struct ps_svc_job *j = doc ? ps_persist_job_from_doc(c->svc, doc) : NULL;
    json_decref(doc);
    if (!j || j->op != c->op) {
        ps_svc_job_free(j);
        ps_svc_log(c->svc, "warning", "job_not_restored", "id=%s", job_id);
        return 0;
    }
    if (j->state == PS_JOB_RUNNING) {
        j->alloc_id = ++c->svc->next_alloc_id;
        if (ps_svc_job_register(c->svc, j) != 0) {
            ps_svc_job_free(j);
            ps_svc_log(c->svc, "warning", "job_not_restored", "id=%s", job_id);
        }
        return 0;
    }
    struct ps_svc_task *t = &c->op->tasks[j->task];
    switch (j->state) {
    case PS_JOB_COMPLETED:
        if (!t->done[j->job_index]) {
            t->done[j->job_index] = 1;
            t->completed++;
        }
        break;
    case PS_JOB_FAILED:
        t->failed++;
        c->op->failed_jobs++;
        break;
    default:
        t->aborted++;
        break;
    }
    if (!c->op->finished) {
        ps_svc_job_learn(j);
        ps_svc_tentative_replay(j);
    }
    ps_svc_job_free(j);
    return 0;
}

/* Rebuilds task queues from the counted jobs (load_job); the running jobs (the only ones in
 * memory now) of running operations re-attach (usage, node, preemptible lists); running jobs of
 * finished operations are aborted. */
static void rebuild_progress(struct ps_service *svc, int64_t now_ms)
{
    for (int o = 0; o < svc->op_count; o++) {
        struct ps_svc_op *op = svc->op_list[o];
        for (int k = 0; k < op->task_count; k++) {
            struct ps_svc_task *t = &op->tasks[k];
            t->q_head = 0;
            t->q_len = 0;
            if (op->finished)
                continue;
            /* running jobs are marked temporarily in done[] as 2 */
            for (int i = 0; i < svc->job_count; i++) {
                struct ps_svc_job *j = svc->job_list[i];
                if (j->op == op && j->task == k && j->state == PS_JOB_RUNNING &&
                    !t->done[j->job_index])
                    t->done[j->job_index] = 2;
            }
            for (int64_t x = 0; x < t->job_count; x++)
                if (!t->done[x])
                    t->queue[t->q_len++] = x;
            for (int64_t x = 0; x < t->job_count; x++)
                if (t->done[x] == 2)
                    t->done[x] = 0;
        }
    }
    for (int i = 0; i < svc->job_count; i++) {
        struct ps_svc_job *j = svc->job_list[i];
        if (j->state != PS_JOB_RUNNING)
            continue;
        struct ps_svc_op *op = j->op;
        if (op->finished || !op->sop) {
            j->state = PS_JOB_ABORTED;
            j->finish_ms = now_ms;
            free(j->abort_reason);
            j->abort_reason = strdup("operation_finished");
            op->tasks[j->task].aborted++;   /* as when the operation's finish aborts it */
            ps_persist_job(svc, j);
            continue;
        }
        struct ps_svc_task *t = &op->tasks[j->task];
        t->running++;
        struct ps_svc_op_tree *tr = &op->trees[j->tree_slot];
        tr->usage = ps_resources_add(tr->usage, j->usage);
        ps_preemptible_add(tr->lists, j->alloc_id, j->start_ms, j->usage, NULL);
        j->lists_slot = ps_preemptible_slot(tr->lists, j->alloc_id);
        ps_svc_job_attach_node(svc, j);
        ps_svc_tentative_replay(j);
        struct ps_svc_node *node = ps_svc_node_get(svc, j->node_id, false);
        if (node && node->last_seen_ms < now_ms)
            node->last_seen_ms = now_ms;   /* the offline timeout counts from the restart */
        j->seen_running = true;   /* re-attached: the node reports it, or the offline check ends it */
    }
    for (int o = 0; o < svc->op_count; o++)
        ps_svc_op_update_shape(svc, svc->op_list[o]);
}

/* Users, groups and //sys/pool_trees' ACL (security.h), before anything is admitted. */
static int load_security(struct ps_service *svc, struct ps_error *err)
{
    struct ps_security *sec = NULL;
    pthread_mutex_lock(&svc->store_mu);
    int rc = ps_security_load(ps_store_mirror_source(svc), &sec, err);
    pthread_mutex_unlock(&svc->store_mu);
    if (rc != 0)
        return rc;
    ps_security_free(svc->security);
    svc->security = sec;
    ps_strategy_set_access(svc->strategy, ps_security_access(sec));
    return 0;
}

int ps_persist_load(struct ps_service *svc, struct ps_error *err)
{
    json_t *trees = NULL, *ops = NULL;
    int rc = load_security(svc, err);
    if (rc == 0)
        rc = ps_sched_config_load(svc, err);   /* templates before the trees they shape */
    if (rc == 0)
        rc = ps_nodes_config_load(svc, err);
    if (rc == 0)
        rc = ps_event_log_load(svc, err);
    if (rc == 0)
        rc = list_kind(svc, "tree", &trees, err);
    if (rc == 0)
        rc = list_kind(svc, "operation", &ops, err);
    size_t i;
    json_t *pair;
    if (rc == 0)
        json_array_foreach(trees, i, pair) {
            rc = load_tree(svc, json_string_value(json_object_get(pair, "key")),
                           json_object_get(pair, "doc"), err);
            if (rc != 0)
                break;
        }
    json_t *meta = NULL;
    if (rc == 0)
        rc = ps_persist_meta_get(svc, "default_tree", &meta, err);
    if (rc == 0 && meta) {
        const char *d = json_string_value(json_object_get(meta, "default_tree"));
        if (d)
            ps_strategy_set_default_tree(svc->strategy, d, NULL);
        json_decref(meta);
    }
    /* the map before the operations: restored ephemeral pools go where it puts them */
    if (rc == 0)
        rc = ps_user_pool_map_load(svc, err);
    /* Only the jobs of operations that still run (or whose progress is not stored) are read,
     * one operation at a time, in finish order for the digests (job_archive.h). */
    json_t **v = NULL;
    struct ps_svc_op **scan = calloc(json_array_size(ops) + 1, sizeof *scan);
    size_t scan_count = 0;
    if (rc == 0 && !scan)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0 && (v = sorted(ops, cmp_seq)))
        for (size_t k = 0; rc == 0 && k < json_array_size(ops); k++) {
            struct ps_svc_op *op = NULL;
            bool need = false;
            rc = load_op(svc, json_object_get(v[k], "doc"), &op, &need, err);
            if (op && need)
                scan[scan_count++] = op;
        }
    free(v);
    /* restored pending operations that find room start now, in start order */
    for (int t = 0; rc == 0 && t < ps_strategy_tree_count(svc->strategy); t++)
        ps_pool_tree_run_pending(ps_strategy_tree_at(svc->strategy, t));
    for (int k = 0; rc == 0 && k < svc->op_count; k++)
        ps_svc_op_refresh_state(svc->op_list[k]);
    for (size_t k = 0; rc == 0 && k < scan_count; k++) {
        struct scan_ctx c = {svc, scan[k]};
        rc = ps_store_jobs_of_operation(ps_job_archive_store(svc), scan[k]->id,
                                        PS_STORE_JOBS_BY_FINISH, load_job, &c, err);
        if (rc != 0)
            ps_error_prefix(err, "cannot read the stored jobs of operation \"%s\"", scan[k]->id);
    }
    if (rc == 0)
        rebuild_progress(svc, ps_svc_now_ms());
    for (size_t k = 0; rc == 0 && k < scan_count; k++)
        if (scan[k]->finished) {
            ps_persist_op(svc, scan[k]);   /* now with its progress: not scanned again */
            ps_svc_op_release(svc, scan[k]);
        }
    free(scan);
    json_decref(trees);
    json_decref(ops);
    return rc;
}
