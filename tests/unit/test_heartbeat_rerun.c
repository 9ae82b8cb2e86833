/* A held heartbeat run again after its release (long-poll, long_poll.c): when a newer
 * heartbeat of the node ran in between, the old one is refused (409, superseded) and changes
 * nothing: no job is started in a reply the agent no longer reads, no job report older than
 * the newer heartbeat's is taken. The rerun of a heartbeat that nothing overtook runs as
 * usual. ps_api_heartbeat_json is called as the HTTP handler calls it for a rerun. */
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
#include "server/service_state.h"
#include "server/svc_jobs.h"

void ps_svc_update_all(struct ps_service *svc);

/* A heartbeat of node n1 with 4 free slots; hold NULL (answered at once) or a rerun of a
 * heartbeat held at held_at. Returns the status code; the reply's jobs_to_start count. */
static int heartbeat(struct ps_service *svc, bool rerun, uint64_t held_at, size_t *starts)
{
    json_t *req = json_pack("{s:s, s:[], s:{s:i, s:I, s:i}, s:[]}", "node_id", "n1", "tags",
                            "resource_limits", "cpu", 4, "memory", (json_int_t)16 << 30,
                            "user_slots", 4, "jobs");
    struct ps_svc_hold hold = {.deadline_ns = 0, .rerun = true, .held_at = held_at};
    json_t *reply = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_api_heartbeat_json(svc, req, "127.0.0.1", rerun ? &hold : NULL, &reply, &err);
    json_decref(req);
    *starts = json_array_size(json_object_get(reply, "jobs_to_start"));
    json_decref(reply);
    return rc;
}

static uint64_t heartbeat_seq(struct ps_service *svc)
{
    pthread_mutex_lock(&svc->mu);
    uint64_t seq = ps_svc_node_get(svc, "n1", false)->heartbeat_seq;
    pthread_mutex_unlock(&svc->mu);
    return seq;
}

static void test_rerun_after_newer_heartbeat_is_refused(void **state)
{
    (void)state;
    char *dir = make_store_dir("hb_rerun");
    struct ps_service *svc = start_service(dir, 60000);
    size_t starts = 0;
    assert_int_equal(heartbeat(svc, false, 0, &starts), 0);   /* registers n1 */
    uint64_t held_at = heartbeat_seq(svc);   /* as if this one had been held */
    json_decref(ok(svc, "start_op", "{\"spec\": {\"tasks\": {\"t\": {\"command\": \"true\", "
                                    "\"job_count\": 8, \"memory_limit\": 104857600}}}}"));
    pthread_mutex_lock(&svc->mu);
    ps_svc_update_all(svc);
    pthread_mutex_unlock(&svc->mu);

    /* a newer heartbeat runs first and takes the work */
    assert_int_equal(heartbeat(svc, false, 0, &starts), 0);
    assert_int_equal(starts, 4);
    uint64_t seq = heartbeat_seq(svc);
    /* the released old one: refused, nothing started, the node's sequence untouched */
    assert_int_equal(heartbeat(svc, true, held_at, &starts), PS_ESTATE);
    assert_int_equal(starts, 0);
    assert_true(heartbeat_seq(svc) == seq);
    /* a rerun that nothing overtook is a heartbeat */
    assert_int_equal(heartbeat(svc, true, seq, &starts), 0);
    assert_true(heartbeat_seq(svc) == seq + 1);
    stop_service(svc, dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rerun_after_newer_heartbeat_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
