/* The engine loop's refresh after a fair share update (engine_loop.c, persist.c): the tree's
 * document and each operation's are written again only when their volumes or starvation timers
 * moved, and a timer that moved is in the store for a restart. In-process service without HTTP (port -1);
 * the updates are run by the test (ps_svc_update_all under svc->mu), the loop's own period is a
 * minute so that it runs none in between (beyond the first). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service_test.h"
#include "server/heartbeat.h"
#include "server/journal.h"
#include "server/service_state.h"

void ps_svc_update_all(struct ps_service *svc);

static struct ps_service *start(const char *dir)
{
    return start_service(dir, 60000);   /* the loop runs no update of its own in between */
}

/* Starts an operation of 100 one-core jobs in pool; its id into id. */
static void start_op(struct ps_service *svc, const char *pool, char *id, size_t size)
{
    char body[320];
    snprintf(body, sizeof body,
             "{\"spec\": {\"pool\": \"%s\", \"tasks\": {\"t\": {\"command\": \"true\", "
             "\"job_count\": 100, \"memory_limit\": 104857600}}}}", pool);
    json_t *r = ok(svc, "start_op", body);
    snprintf(id, size, "%s", json_string_value(json_object_get(r, "operation_id")));
    json_decref(r);
}

static void heartbeat(struct ps_service *svc)
{
    json_t *req = json_pack("{s:s, s:[], s:{s:i, s:I, s:i}, s:[]}", "node_id", "n1", "tags",
                            "resource_limits", "cpu", 4, "memory", (json_int_t)16 << 30,
                            "user_slots", 4, "jobs");
    json_t *reply = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_api_heartbeat_json(svc, req, "127.0.0.1", NULL, &reply, &err) != 0)
        fail_msg("heartbeat: %s", err.msg);
    json_decref(req);
    json_decref(reply);
}

static void update(struct ps_service *svc)
{
    usleep(20 * 1000);   /* now_ms moves on */
    pthread_mutex_lock(&svc->mu);
    ps_svc_update_all(svc);
    pthread_mutex_unlock(&svc->mu);
}

static uint64_t journal_last(struct ps_service *svc)
{
    pthread_mutex_lock(&svc->mu);
    uint64_t t = ps_journal_last(svc->journal);
    pthread_mutex_unlock(&svc->mu);
    return t;
}

static int64_t op_since(struct ps_service *svc, const char *id)
{
    pthread_mutex_lock(&svc->mu);
    struct ps_svc_op *op = ps_strmap_get(&svc->ops, id);
    assert_non_null(op);
    assert_non_null(op->sop);
    struct ps_tree_op *to = op->sop->memberships[0];
    assert_non_null(to);
    int64_t since = to->dynamic.below_fair_share_since_ms;
    pthread_mutex_unlock(&svc->mu);
    return since;
}

static int op_starvation(struct ps_service *svc, const char *id)
{
    pthread_mutex_lock(&svc->mu);
    struct ps_svc_op *op = ps_strmap_get(&svc->ops, id);
    int status = (int)op->sop->memberships[0]->dynamic.starvation;
    pthread_mutex_unlock(&svc->mu);
    return status;
}

static void test_refresh_writes_moved_timers_only(void **state)
{
    (void)state;
    char *dir = make_store_dir("persist_refresh");
    struct ps_service *svc = start(dir);
    /* starving as soon as below the fair share (an operation's timeout only adds to its
     * tree's) */
    json_decref(ok(svc, "set", "{\"path\": \"//sys/pool_trees/physical/@fair_share_starvation_timeout\", \"value\": 0}"));
    json_decref(ok(svc, "create", "{\"type\": \"scheduler_pool\", \"path\": \"//sys/pool_trees/physical/a\"}"));
    json_decref(ok(svc, "create", "{\"type\": \"scheduler_pool\", \"path\": \"//sys/pool_trees/physical/b\"}"));
    char a[64], b[64];
    start_op(svc, "a", a, sizeof a);
    heartbeat(svc);   /* registers the node */
    update(svc);
    heartbeat(svc);   /* a takes the node's 4 slots */
    start_op(svc, "b", b, sizeof b);
    update(svc);      /* b: fair share half the cluster, usage none: below it from now */
    update(svc);      /* and starving (the timeout is 0) */
    int64_t since = op_since(svc, b);
    assert_true(since != PS_STARVATION_NEVER);
    assert_int_equal(op_starvation(svc, b), PS_STARVING);

    /* nothing moved: the refresh writes nothing */
    uint64_t before = journal_last(svc);
    update(svc);
    update(svc);
    assert_int_equal(journal_last(svc), before);
    assert_true(op_since(svc, b) == since);

    /* the timer that moved is in the store, for a restart (read from the store itself: a
     * restarted service's first update, without the node, would reset it at once) */
    ps_service_stop(svc);
    struct ps_store *store = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_store_open(dir, &store, &err) != 0)
        fail_msg("open: %s", err.msg);
    char *text = NULL;
    if (ps_store_get(store, "operation", b, &text, &err) != 0)
        fail_msg("get: %s", err.msg);
    json_t *doc = json_loads(text, 0, NULL);
    json_t *stored = json_object_get(json_object_get(doc, "below_fair_share_since"), "physical");
    assert_true(json_is_integer(stored));
    assert_true(json_integer_value(stored) == since);
    json_decref(doc);
    free(text);
    ps_store_close(store);
    remove_service_dir(dir);
}

/* The histogram's sum and count from the rendered metrics. */
static void histogram(struct ps_service *svc, const char *name, double *sum, double *count)
{
    char *text = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_metrics_render(svc->metrics, &text, NULL, &err) != 0)
        fail_msg("render: %s", err.msg);
    char key[160];
    snprintf(key, sizeof key, "\n%s_sum ", name);
    const char *at = strstr(text, key);
    assert_non_null(at);
    *sum = strtod(at + strlen(key), NULL);
    snprintf(key, sizeof key, "\n%s_count ", name);
    at = strstr(text, key);
    assert_non_null(at);
    *count = strtod(at + strlen(key), NULL);
    free(text);
}

/* An update run all under the lock (ps_svc_update_all) reports all of its time as locked:
 * the locked histogram has everything the update does under svc->mu, the gauges, limits check
 * and store refresh after the snapshot included, not only build, apply and snapshot. */
static void test_locked_time_is_whole_update(void **state)
{
    (void)state;
    char *dir = make_store_dir("persist_locked");
    struct ps_service *svc = start(dir);
    json_decref(ok(svc, "create", "{\"type\": \"scheduler_pool\", \"path\": \"//sys/pool_trees/physical/a\"}"));
    char a[64];
    start_op(svc, "a", a, sizeof a);
    heartbeat(svc);
    /* held throughout: no loop update observes in between. A loop update computing off the
     * lock when it is taken (ts->updating) would make ps_svc_update_all skip the tree: wait
     * until none is in flight. */
    for (;;) {
        pthread_mutex_lock(&svc->mu);
        bool busy = false;
        for (int i = 0; i < svc->tree_count; i++)
            busy = busy || svc->trees[i]->updating;
        if (!busy)
            break;
        pthread_mutex_unlock(&svc->mu);
        usleep(1000);
    }
    double d0, dn0, l0, ln0, d1, dn1, l1, ln1;
    histogram(svc, "poolsched_fair_share_update_duration_seconds", &d0, &dn0);
    histogram(svc, "poolsched_fair_share_update_locked_seconds", &l0, &ln0);
    for (int i = 0; i < 3; i++)
        ps_svc_update_all(svc);
    histogram(svc, "poolsched_fair_share_update_duration_seconds", &d1, &dn1);
    histogram(svc, "poolsched_fair_share_update_locked_seconds", &l1, &ln1);
    pthread_mutex_unlock(&svc->mu);
    assert_true(dn1 - dn0 == 3 && ln1 - ln0 == 3);
    double whole = d1 - d0, locked = l1 - l0;
    assert_true(whole > 0);
    if (!(locked >= whole * (1 - 1e-9)))
        fail_msg("locked %.9f s of a %.9f s update run all under the lock", locked, whole);
    stop_service(svc, dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locked_time_is_whole_update),
        cmocka_unit_test(test_refresh_writes_moved_timers_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
