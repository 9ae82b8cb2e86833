/* engine_loop.c — the service's periodic work on one background thread: each tree's fair share
 * update (with starvation check and a new scheduling snapshot) every @fair_share_update_period,
 * sooner (20 ms after a change, at most every 50 ms) when operations started or finished, and
 * the node offline check. After an update, held heartbeats that may get jobs now are released
 * (long_poll.c).
 * The update holds svc->mu only to build its input and to apply its results: the computation
 * (ps_tree_sched_update_run) runs without it, so heartbeats wait at most for a build or an
 * apply (core/tree_sched.h, the three phases).
 * After each update, the loop's limits check preempts allocations of elements above their
 * resource_limits (ps_svc_limits_check, sched_host.c): the update is where new limits reach
 * the snapshot, and it already costs O(elements), unlike a heartbeat.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "platform/clock.h"
#include "server/event_log.h"
#include "server/heartbeat.h"
#include "server/journal.h"
#include "server/node_health.h"
#include "server/op_tentative.h"
#include "server/persist.h"
#include "server/pool_gauges.h"
#include "server/sched_host.h"
#include "server/service_state.h"
#include "server/store_mirror.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"

#define DIRTY_DELAY_MS 50
/* A change waits this long for more before its update: a burst of submissions (a script
 * starting several operations) lands in one update, so the nodes released after it (long_poll.c)
 * share the cluster between them by fair share, not first come takes all. */
#define DIRTY_BATCH_MS 20

#ifndef NDEBUG
/* Debug builds (the sanitizer runs of every test): the inputs the operations pushed at each
 * change (ps_svc_op_push_inputs) are what a full pass would fill; a change that forgot to push
 * stops the process here rather than skewing fair shares unseen. */
static void check_inputs(struct ps_service *svc, struct ps_pool_tree *tree)
{
    char what[300];
    if (ps_svc_check_engine_inputs(svc, tree, what, sizeof what) == 0)
        return;
    ps_svc_log(svc, "error", "engine_inputs_stale", "%s", what);
    fprintf(stderr, "poolsched: engine inputs stale: %s\n", what);
    abort();
}
#endif

static double since(int64_t started_ns)
{
    return (double)(ps_clock_monotonic_ns() - started_ns) / 1e9;
}

/* The fair share computation of ts, begun under svc->mu, without it (as upstream runs the
 * update on a snapshot of the tree in a background invoker while heartbeats use the previous
 * snapshot): heartbeats and API requests go on meanwhile. Returns with svc->mu held; false
 * when ts was removed meanwhile (then freed here). */
static bool run_unlocked(struct ps_service *svc, struct ps_svc_tree_state *ts, int *rc,
                         struct ps_error *err)
{
    ts->updating = true;
    pthread_mutex_unlock(&svc->mu);
    *rc = ps_tree_sched_update_run(&ts->sched, err);
    pthread_mutex_lock(&svc->mu);
    ts->updating = false;
    if (!ts->removed)
        return true;
    ps_svc_tree_state_free(ts);
    return false;
}

/* One tree's update, under svc->mu; with unlocked, the computation runs without it (the loop
 * thread: one update of a tree in flight at a time), and *off_lock gets the seconds it took.
 * When the tree's structure changed during the computation, nothing applies: once more, then
 * all under the lock so that a tree that keeps changing still gets its update. Returns
 * UPDATE_REMOVED when ts was removed meanwhile, UPDATE_SKIPPED when there was nothing to do. */
enum { UPDATE_DONE, UPDATE_SKIPPED, UPDATE_REMOVED };

static int update_tree_body(struct ps_service *svc, struct ps_svc_tree_state *ts, int64_t now_ms,
                            bool unlocked, double *off_lock)
{
    struct ps_pool_tree *tree = ps_strategy_find_tree(svc->strategy, ts->name);
    if (!tree || ts->updating)
        return UPDATE_SKIPPED;
    struct ps_error err;
    ps_error_init(&err);
    int changed = 0, rc = 0;
    ts->since_moved_count = 0;   /* the finish below lists them anew */
#ifndef NDEBUG
    check_inputs(svc, tree);
#endif
    for (int attempt = 0;; attempt++) {
        if (!unlocked || attempt >= 2) {
            rc = ps_svc_update_tree(svc, ts, tree, now_ms, &changed, &err);
            break;
        }
        rc = ps_tree_sched_update_begin(&ts->sched, tree, now_ms, &err);
        if (rc != 0)
            break;
        int64_t off_ns = ps_clock_monotonic_ns();
        bool alive = run_unlocked(svc, ts, &rc, &err);
        *off_lock += since(off_ns);
        if (!alive)
            return UPDATE_REMOVED;
        /* the strategy may have been reloaded, the tree removed */
        tree = ps_strategy_find_tree(svc->strategy, ts->name);
        if (!tree) {
            ps_tree_sched_update_abort(&ts->sched);
            return UPDATE_DONE;
        }
        if (rc == 0)
            rc = ps_svc_update_finish(svc, ts, tree, &changed, &err);
        if (rc != PS_ESTATE)
            break;
        ps_svc_log(svc, "info", "fair_share_update_retried",
                   "tree=%s attempt=%d reason=\"tree changed during the computation\"",
                   ts->name, attempt + 1);
        ps_error_init(&err);
    }
    if (rc != 0) {
        /* elements set by the callback are meaningless without a snapshot */
        for (int i = 0; i < svc->op_count; i++)
            ps_svc_op_detach(svc, svc->op_list[i]);
        ps_svc_log(svc, "error", "fair_share_update_failed", "tree=%s error=\"%s\"", ts->name,
                   err.msg);
        return UPDATE_DONE;
    }
    if (changed > 0)
        ps_svc_log(svc, "info", "starvation_changed", "tree=%s elements=%d", ts->name, changed);
    ps_svc_pool_gauges(svc, ts, tree, now_ms);
    json_t *bucket = NULL;   /* a closed history bucket, saved with the refresh below */
    if (ps_history_sample(svc->history, tree, now_ms, ps_metric_value(svc->m_preemptions),
                          &bucket) != 0)
        ps_svc_log(svc, "error", "history_sample_failed", "tree=%s error=\"out of memory\"",
                   ts->name);
    ps_svc_limits_check(svc, ts, now_ms);
    /* integral volumes and starvation timers survive a restart (while commits fail, only now
     * and then: journal.c): the documents whose volumes or timers moved are written again.
     * Not every document after every update: under svc->mu, serializing the tree and each
     * starving operation's document (its whole spec) cost more than the rest of the update. */
    if (!ps_journal_refresh_due(svc->journal, now_ms)) {
        ts->since_rescan = true;   /* this update's moved timers go unwritten */
        json_decref(bucket);       /* and the history bucket (once per bucket width) unsaved */
        return UPDATE_DONE;
    }
    /* the history's closed bucket (history.h): one record per tree per bucket width (5 min),
     * some 60 bytes per pool, in the same group commit as the refresh */
    if (bucket) {
        char *key = ps_history_record_key(ts->name, ps_history_record_time(bucket),
                                          svc->cfg.history_bucket_ms);
        if (key)
            ps_journal_put(svc->journal, "history", key, bucket);
        else
            json_decref(bucket);
        free(key);
    }
    if (!ts->dynamic_persisted || ps_persist_tree_dynamic_hash(tree) != ts->persisted_dynamic)
        ps_persist_tree(svc, ts->name);
    /* the operations whose timer moved, as the finish listed them (sched_host.c op_state) */
    if (ts->since_rescan) {
        ts->since_rescan = false;
        for (int k = 0; k < ps_pool_tree_operation_count(tree); k++) {
            struct ps_svc_op *op = ps_tree_op_host(ps_pool_tree_operation_at(tree, k));
            if (op && ps_persist_op_since_changed(op))
                ps_persist_op(svc, op);
        }
    } else {
        for (int k = 0; k < ts->since_moved_count; k++)
            if (ps_persist_op_since_changed(ts->since_moved[k]))
                ps_persist_op(svc, ts->since_moved[k]);
    }
    ts->since_moved_count = 0;
    return UPDATE_DONE;
}

/* update_tree_body, then (wake) the held heartbeats with work are released (changed:
 * operations changed before it); both histograms take the whole of it, the locked one everything but the
 * computation off the lock (build, apply, snapshot, gauges, history, limits check,
 * the store refresh, the wake-up). Returns false when ts was removed meanwhile. */
static bool update_tree(struct ps_service *svc, struct ps_svc_tree_state *ts, int64_t now_ms,
                        bool unlocked, bool wake, bool changed)
{
    int64_t started_ns = ps_clock_monotonic_ns();
    double off_lock = 0;
    int r = update_tree_body(svc, ts, now_ms, unlocked, &off_lock);
    if (r == UPDATE_REMOVED)
        return false;
    if (r == UPDATE_SKIPPED)
        return true;
    if (wake)
        ps_svc_long_poll_wake(svc, ts, changed);
    double total = since(started_ns);
    ps_metric_observe(svc->m_fs_duration, total);
    ps_metric_observe(svc->m_fs_locked, total > off_lock ? total - off_lock : 0);
    return true;
}

static void check_nodes(struct ps_service *svc, int64_t now_ms)
{
    int online = 0;
    for (int i = 0; i < svc->node_count; i++) {
        struct ps_svc_node *n = svc->node_list[i];
        bool alive = n->last_seen_ms + svc->cfg.node_offline_timeout_ms >= now_ms;
        if (!alive && (n->registered || n->jobs))
            ps_svc_node_offline(svc, n, now_ms);
        online += n->registered;
    }
    ps_metric_set(svc->m_nodes, online);
}

static void *loop(void *arg)
{
    struct ps_service *svc = arg;
    pthread_mutex_lock(&svc->mu);
    int64_t next_node_check = 0, next_reload = 0;
    while (!svc->stopping) {
        int64_t now = ps_svc_now_ms();
        int64_t next = now + 1000;
        /* a partial state (a reload after a failed commit could not read the store), or the
         * mirror's while the store is down (store_mirror.h), is not scheduled: try the reload
         * again, or ask the store, at most once a second */
        bool usable = !svc->reload_failed && !svc->store_down;
        if (!usable && now >= next_reload) {
            ps_store_mirror_recover(svc);   /* the store down: is it back? */
            if (svc->reload_failed)
                ps_svc_state_check(svc, NULL);
            usable = !svc->reload_failed && !svc->store_down;
            next_reload = now + 1000;
        }
        for (int i = 0; usable && i < svc->tree_count; i++) {
            struct ps_svc_tree_state *ts = svc->trees[i];
            struct ps_pool_tree *tree = ps_strategy_find_tree(svc->strategy, ts->name);
            int64_t period = tree ? ps_pool_tree_config(tree)->fair_share_update_period_ms
                                  : svc->cfg.fair_share_update_period_ms;
            if (ts->dirty && !ts->dirty_since_ms)
                ts->dirty_since_ms = now;
            if (ts->dirty && ts->sched.last_update_ms != INT64_MIN) {
                int64_t soon = ts->sched.last_update_ms + DIRTY_DELAY_MS;
                if (soon < ts->dirty_since_ms + DIRTY_BATCH_MS)
                    soon = ts->dirty_since_ms + DIRTY_BATCH_MS;
                if (ts->next_update_ms > soon)
                    ts->next_update_ms = soon;
            }
            /* a change waits DIRTY_BATCH_MS for more, also when the period is due: operations
             * submitted together enter one update, not the first alone (which a released held
             * heartbeat would then give the whole idle cluster until preemption) */
            bool batching = ts->dirty && now < ts->dirty_since_ms + DIRTY_BATCH_MS;
            if (batching && ts->next_update_ms < ts->dirty_since_ms + DIRTY_BATCH_MS)
                ts->next_update_ms = ts->dirty_since_ms + DIRTY_BATCH_MS;
            if (now >= ts->next_update_ms) {
                bool changed = ts->dirty;
                ts->dirty = false;
                ts->dirty_since_ms = 0;
                if (!update_tree(svc, ts, now, true, true, changed))
                    break;   /* removed meanwhile: svc->trees changed, look again */
                ts->next_update_ms = now + period;
                if (svc->stopping)
                    break;
            }
            if (ts->next_update_ms < next)
                next = ts->next_update_ms;
        }
        if (usable && now >= next_node_check) {
            check_nodes(svc, now);
            ps_op_sanity_check(svc, now);   /* operations that can never run fail */
            ps_svc_tentative_check(svc, now);   /* slow tentative trees are banned */
            next_node_check = now + 500;
        }
        if (usable)
            ps_event_log_pools_info(svc, now);   /* after pool tree changes, at most 1/s */
        ps_job_archive_sweep(svc);   /* finished jobs whose record is committed leave memory */
        /* an unusable state waits for its next reload attempt, not for the node check it
         * skipped (whose time has passed: waiting for it would spin holding svc->mu) */
        int64_t due = usable ? next_node_check : next_reload;
        if (due < next)
            next = due;
        /* whoever marks a tree dirty wakes the loop (loop_cv): no polling in between */
        int64_t wait_ms = next - ps_svc_now_ms();
        if (wait_ms > 0) {
            struct timespec ts = ps_clock_realtime_deadline(wait_ms);
            pthread_cond_timedwait(&svc->loop_cv, &svc->mu, &ts);
        }
    }
    pthread_mutex_unlock(&svc->mu);
    return NULL;
}

int ps_svc_loop_start(struct ps_service *svc, struct ps_error *err);
int ps_svc_loop_start(struct ps_service *svc, struct ps_error *err)
{
    if (pthread_create(&svc->loop_thread, NULL, loop, svc) != 0)
        return ps_error_set(err, PS_EIO, "cannot start the engine loop thread");
    svc->loop_started = true;
    return 0;
}

/* True while the loop computes a tree's update off the lock. */
static bool any_updating(const struct ps_service *svc)
{
    for (int i = 0; i < svc->tree_count; i++)
        if (svc->trees[i]->updating)
            return true;
    return false;
}

/* Runs every tree's update now, under svc->mu (tests and the benchmark call it through the
 * service). A loop update still computing off the lock began from an older state and would
 * apply after this one: wait until it has applied (the loop updates only under svc->mu, which
 * is then held to the end), so that what the caller changed before the call is in the fair
 * shares when it returns. */
void ps_svc_update_all(struct ps_service *svc);
void ps_svc_update_all(struct ps_service *svc)
{
    while (any_updating(svc)) {
        /* releases svc->mu so that the loop can apply; all signals of loop_cv are broadcasts,
         * so this wait takes no wake-up from the loop */
        struct timespec deadline = ps_clock_realtime_deadline(1);
        pthread_cond_timedwait(&svc->loop_cv, &svc->mu, &deadline);
    }
    int64_t now = ps_svc_now_ms();
    for (int i = 0; i < svc->tree_count; i++)
        update_tree(svc, svc->trees[i], now, false, false, false);
}
