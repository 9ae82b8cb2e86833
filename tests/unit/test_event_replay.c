#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/event_replay.h"
#include "io/scenario.h"
#include "sim/sim.h"

#define RES "{\"user_slots\": 1, \"cpu\": 1.0, \"gpu\": 0, \"memory\": 1024, \"network\": 0}"
#define NODE(ts, type, addr, tags, cpu)                                                          \
    "{\"timestamp\": " #ts ", \"event_type\": \"" type "\", \"node_address\": \"" addr          \
    "\", \"tags\": " tags ", \"resource_limits\": {\"user_slots\": 4, \"cpu\": " #cpu            \
    ", \"gpu\": 0, \"memory\": 4096, \"network\": 0}}"
#define POOLS(ts, weight)                                                                        \
    "{\"timestamp\": " #ts ", \"event_type\": \"pools_info\", \"pools\": {\"physical\": "        \
    "{\"a\": {\"parent\": \"<Root>\", \"weight\": " #weight "}}}}"
#define OP(ts, id)                                                                               \
    "{\"timestamp\": " #ts ", \"event_type\": \"operation_started\", \"operation_id\": \"" id   \
    "\", \"authenticated_user\": \"u\", \"spec\": {\"pool\": \"a\"}, \"tasks\": [{\"name\": "    \
    "\"t\", \"job_count\": 2, \"resource_limits\": " RES "}]}"
#define OP_END(ts, id)                                                                           \
    "{\"timestamp\": " #ts ", \"event_type\": \"operation_completed\", \"operation_id\": \"" id "\"}"
#define JOB(ts, id, op)                                                                          \
    "{\"timestamp\": " #ts ", \"event_type\": \"job_started\", \"job_id\": \"" id               \
    "\", \"operation_id\": \"" op "\", \"task_name\": \"t\", \"resource_limits\": " RES "}"
#define JOB_END(ts, type, id, op, start)                                                         \
    "{\"timestamp\": " #ts ", \"event_type\": \"" type "\", \"job_id\": \"" id                  \
    "\", \"operation_id\": \"" op "\", \"task_name\": \"t\", \"start_time\": " #start           \
    ", \"finish_time\": " #ts ", \"resource_limits\": " RES "}"

/* rows (a JSON list) as the record the replay reads */
static struct ps_event_record *record_of(const json_t *rows, struct ps_error *err)
{
    struct ps_event_record *rec = ps_event_record_new();
    for (size_t i = 0; i < json_array_size(rows); i++)
        assert_int_equal(ps_event_record_add(rec, json_array_get(rows, i), err), 0);
    return rec;
}

static json_t *convert(const char *rows_text, int64_t since, int64_t until, int expect_rc,
                       struct ps_error *err)
{
    json_error_t jerr;
    json_t *rows = json_loads(rows_text, 0, &jerr);
    assert_non_null(rows);
    struct ps_event_replay_options o = {.since_ms = since, .until_ms = until,
                                        .heartbeat_period_ms = 100,
                                        .fair_share_update_period_ms = 100};
    json_t *sc = NULL;
    ps_error_init(err);
    struct ps_event_record *rec = record_of(rows, err);
    assert_int_equal(ps_event_replay_scenario(rec, &o, &sc, err), expect_rc);
    ps_event_record_free(rec);
    json_decref(rows);
    if (expect_rc != 0) {
        assert_null(sc);
        return NULL;
    }
    /* the output is a scenario the simulator's parser takes */
    char *text = json_dumps(sc, 0);
    struct ps_scenario *parsed = NULL;
    struct ps_error perr;
    ps_error_init(&perr);
    int rc = ps_scenario_parse(text, strlen(text), &parsed, &perr);
    if (rc != 0)
        fail_msg("scenario refused: %s\n%s", perr.msg, text);
    /* and set up as what-if checks it (nodes placed in their trees) */
    struct ps_sim *sim = NULL;
    struct ps_sim_options none = {0};
    if (ps_sim_new(parsed, &none, &sim, &perr) != 0)
        fail_msg("scenario not set up: %s\n%s", perr.msg, text);
    ps_sim_free(sim);
    ps_scenario_free(parsed);
    free(text);
    return sc;
}

static const json_t *event(const json_t *sc, size_t i)
{
    return json_array_get(json_object_get(sc, "events"), i);
}

static void test_nodes_over_time(void **state)
{
    (void)state;
    struct ps_error err;
    json_t *sc = convert("[" NODE(10, "node_registered", "n1", "[\"x\"]", 2) ","
                         NODE(20, "node_registered", "n2", "[]", 8) "," POOLS(20, 1) ","
                         NODE(60, "node_updated", "n1", "[\"y\"]", 3) ","
                         NODE(70, "node_offline", "n2", "[]", 8) ","
                         /* rows that repeat what a node has add nothing */
                         NODE(80, "node_updated", "n1", "[\"y\"]", 3) ","
                         NODE(90, "node_offline", "n2", "[]", 8) ","
                         NODE(200, "node_registered", "n3", "[]", 8) "]",
                         50, 150, 0, &err);
    const json_t *groups = json_object_get(sc, "node_groups");
    assert_int_equal(json_array_size(groups), 2);   /* n3 joined after until */
    const json_t *n1 = json_array_get(groups, 0);
    assert_string_equal(json_string_value(json_object_get(n1, "name")), "n1");
    /* a node heartbeats as soon as a job of its ends, as poolsched's agents do */
    assert_true(json_is_true(json_object_get(n1, "send_heartbeat_on_job_finished")));
    assert_true(json_number_value(json_object_get(json_object_get(n1, "resource_limits"), "cpu")) == 2.0);
    assert_int_equal(json_array_size(json_object_get(sc, "events")), 3);
    assert_int_equal(json_integer_value(json_object_get(event(sc, 0), "time")), 10);
    assert_string_equal(json_string_value(json_object_get(event(sc, 0), "type")), "set_node_resources");
    assert_string_equal(json_string_value(json_object_get(event(sc, 1), "type")), "set_node_tags");
    assert_string_equal(json_string_value(json_object_get(event(sc, 1), "node")), "n1-0");
    const json_t *off = event(sc, 2);
    assert_string_equal(json_string_value(json_object_get(off, "node")), "n2-0");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(off, "resource_limits"), "cpu")), 0);
    json_decref(sc);
}

static void test_operations_in_and_before_the_window(void **state)
{
    (void)state;
    struct ps_error err;
    /* op0 ended before the window; op1 started before it with a job that ends inside it;
     * op2 started inside with one job done and one never started */
    json_t *sc = convert("[" NODE(0, "node_registered", "n", "[]", 8) "," POOLS(0, 1) ","
                         OP(1, "op0") "," JOB(2, "j0", "op0") "," JOB_END(30, "job_completed", "j0", "op0", 2) ","
                         OP_END(30, "op0") "," OP(40, "op1") "," JOB(45, "j1", "op1") ","
                         JOB_END(130, "job_completed", "j1", "op1", 45) "," OP(110, "op2") ","
                         JOB(120, "j2", "op2") "," JOB(121, "j3", "op2") ","
                         JOB_END(125, "job_aborted", "j3", "op2", 121) ","
                         JOB_END(170, "job_completed", "j2", "op2", 120) "]",
                         100, 200, 0, &err);
    const json_t *ops = json_object_get(sc, "operations");
    assert_int_equal(json_array_size(ops), 2);
    const json_t *op1 = json_array_get(ops, 0), *op2 = json_array_get(ops, 1);
    assert_string_equal(json_string_value(json_object_get(op1, "id")), "op1");
    assert_int_equal(json_integer_value(json_object_get(op1, "start_time")), 0);
    const json_t *t1 = json_array_get(json_object_get(op1, "tasks"), 0);
    /* j1's 30 ms inside the window, and op1's second job never started: 2 jobs */
    assert_int_equal(json_integer_value(json_object_get(t1, "duration")), 30);
    assert_int_equal(json_integer_value(json_object_get(t1, "job_count")), 2);
    assert_int_equal(json_integer_value(json_object_get(op2, "start_time")), 10);
    const json_t *t2 = json_array_get(json_object_get(op2, "tasks"), 0);
    /* j2 ran 50 ms; j3 was aborted: retried as the never-started second job */
    assert_int_equal(json_integer_value(json_object_get(t2, "duration")), 50);
    assert_int_equal(json_integer_value(json_object_get(t2, "job_count")), 2);
    json_decref(sc);
}

/* job_durations: each job's time in the window in recorded start order, not row order (jz's
 * only row, its end, comes last but it started first, before the window); the aborted job left
 * out; the job running at until cut there */
static void test_job_durations_in_start_order(void **state)
{
    (void)state;
    struct ps_error err;
    json_t *sc = convert("[" NODE(0, "node_registered", "n", "[]", 8) "," POOLS(0, 1) ","
                         OP(50, "op") "," JOB(110, "ja", "op") "," JOB(120, "jb", "op") ","
                         JOB(125, "jc", "op") "," JOB_END(140, "job_aborted", "jc", "op", 125) ","
                         JOB_END(150, "job_completed", "jb", "op", 120) ","
                         JOB_END(160, "job_completed", "jz", "op", 90) "]",
                         100, 200, 0, &err);
    const json_t *op = json_array_get(json_object_get(sc, "operations"), 0);
    const json_t *t = json_array_get(json_object_get(op, "tasks"), 0);
    const json_t *d = json_object_get(t, "job_durations");
    assert_int_equal(json_integer_value(json_object_get(t, "job_count")), 3);
    assert_int_equal(json_array_size(d), 3);
    assert_int_equal(json_integer_value(json_array_get(d, 0)), 60);   /* jz: 100..160 */
    assert_int_equal(json_integer_value(json_array_get(d, 1)), 90);   /* ja: 110..until */
    assert_int_equal(json_integer_value(json_array_get(d, 2)), 30);   /* jb: 120..150 */
    assert_int_equal(json_integer_value(json_object_get(t, "duration")), 60);   /* the mean */
    json_decref(sc);
}

static void test_changes(void **state)
{
    (void)state;
    struct ps_error err;
    json_t *sc = convert("[" NODE(0, "node_registered", "n", "[]", 8) "," POOLS(0, 1) ","
                         POOLS(150, 2) "]", 100, 200, 0, &err);
    assert_int_equal(json_array_size(json_object_get(sc, "events")), 1);
    json_t *v = json_integer(7);
    assert_int_equal(ps_event_replay_apply(sc, "//sys/pools/a/@weight", v, &err), 0);
    assert_int_equal(json_array_size(json_object_get(sc, "events")), 0);
    assert_int_equal(ps_event_replay_apply(sc, "//sys/pool_trees/physical/@max_operation_count", v,
                                           &err), 0);
    const json_t *tree = json_object_get(json_object_get(sc, "pool_trees"), "physical");
    assert_int_equal(json_integer_value(json_object_get(tree, "max_operation_count")), 7);
    const json_t *a = json_array_get(json_object_get(tree, "pools"), 0);
    assert_int_equal(json_integer_value(json_object_get(a, "weight")), 7);
    assert_int_equal(ps_event_replay_apply(sc, "//sys/pool_trees/physical/a/@weight", NULL, &err), 0);
    assert_null(json_object_get(a, "weight"));
    static const char *const bad[][2] = {
        {"//sys/pool_trees/physical/zz/@weight", "no such pool"},
        {"//sys/pool_trees/other/a/@weight", "no such pool tree"},
        {"//sys/pool_trees/physical/a", "must end in /@<attribute>"},
        {"//tmp/a/@weight", "must be //sys/pool_trees/"},
        {"//sys/pool_trees/physical/a/@name", "not renamed or moved"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ps_error_init(&err);
        assert_int_equal(ps_event_replay_apply(sc, bad[i][0], v, &err), PS_EINVAL);
        if (!strstr(err.msg, bad[i][1]) || !strstr(err.msg, bad[i][0]))
            fail_msg("%s: %s", bad[i][0], err.msg);
    }
    json_decref(v);
    json_decref(sc);
}

#define TREES(ts, def, max)                                                                      \
    "{\"timestamp\": " #ts ", \"event_type\": \"pool_trees_info\", \"default_tree\": \"" def     \
    "\", \"trees\": {\"physical\": {\"nodes_filter\": \"x\", \"max_operation_count\": " #max      \
    "}, \"gpu\": {\"nodes_filter\": \"y\", \"max_operation_count\": null}}}"
#define POOLS2(ts)                                                                               \
    "{\"timestamp\": " #ts ", \"event_type\": \"pools_info\", \"pools\": {\"physical\": "        \
    "{\"a\": {\"parent\": \"<Root>\"}}, \"gpu\": {\"g\": {\"parent\": \"<Root>\"}}, "           \
    "\"old\": {\"o\": {\"parent\": \"<Root>\"}}}}"

/* The trees changed before any node came (a cluster set up: a tree made, then the first one's
 * nodes_filter narrowed): the change is the start's state, so that the node that came after it
 * is in one tree; not a set_tree_attribute event */
static void test_trees_before_nodes(void **state)
{
    (void)state;
    struct ps_error err;
    json_t *sc = convert("[{\"timestamp\": 0, \"event_type\": \"pools_info\", \"pools\": "
                         "{\"physical\": {\"a\": {\"parent\": \"<Root>\"}}, \"gpu\": {}}}, {\"timestamp\": 10, \"event_type\": \"pool_trees_info\", "
                         "\"trees\": {\"physical\": {}, \"gpu\": {\"nodes_filter\": \"gpu\"}}}, "
                         "{\"timestamp\": 20, \"event_type\": \"pool_trees_info\", \"trees\": "
                         "{\"physical\": {\"nodes_filter\": \"!gpu\"}, \"gpu\": "
                         "{\"nodes_filter\": \"gpu\"}}}," NODE(30, "node_registered", "g1",
                         "[\"gpu\"]", 8) "," NODE(40, "node_registered", "c1", "[]", 8) "]",
                         0, 100, 0, &err);
    const json_t *phys = json_object_get(json_object_get(sc, "pool_trees"), "physical");
    assert_string_equal(json_string_value(json_object_get(phys, "nodes_filter")), "!gpu");
    const json_t *events = json_object_get(sc, "events"), *ev;
    size_t i;
    json_array_foreach(events, i, ev)   /* the nodes' registrations only */
        assert_string_equal(json_string_value(json_object_get(ev, "type")), "set_node_resources");
    assert_int_equal(json_array_size(events), 2);
    json_decref(sc);
}

/* pool_trees_info rows: the trees' configs as of since, later changes, the default tree; a tree
 * they do not describe takes the given attributes; operations run in their recorded trees */
static void test_trees(void **state)
{
    (void)state;
    struct ps_error err;
    json_t *rows = json_loads("[" NODE(0, "node_registered", "n", "[\"x\"]", 8) ","
                              TREES(0, "gpu", 5) "," POOLS2(0) ","
                              "{\"timestamp\": 110, \"event_type\": \"operation_started\", "
                              "\"operation_id\": \"op\", \"spec\": {\"pool\": \"a\"}, "
                              "\"scheduling_info_per_tree\": {\"physical\": {\"pool\": \"a\"}}, "
                              "\"tasks\": [{\"name\": \"t\", \"job_count\": 1, \"resource_limits\": "
                              RES "}]}," JOB(120, "j", "op") "," TREES(150, "physical", 7) "]",
                              0, NULL);
    json_t *given = json_pack("{s:{s:s}, s:{s:i}}", "old", "nodes_filter", "z", "physical",
                              "max_operation_count", 99);
    struct ps_event_replay_options o = {.since_ms = 100, .until_ms = 200,
                                        .heartbeat_period_ms = 100,
                                        .fair_share_update_period_ms = 100,
                                        .tree_attributes = given};
    json_t *sc = NULL;
    ps_error_init(&err);
    struct ps_event_record *rec = record_of(rows, &err);
    assert_int_equal(ps_event_replay_scenario(rec, &o, &sc, &err), 0);
    ps_event_record_free(rec);
    const json_t *trees = json_object_get(sc, "pool_trees");
    const json_t *phys = json_object_get(trees, "physical"), *gpu = json_object_get(trees, "gpu");
    assert_string_equal(json_string_value(json_object_get(phys, "nodes_filter")), "x");
    assert_int_equal(json_integer_value(json_object_get(phys, "max_operation_count")), 5);
    assert_string_equal(json_string_value(json_object_get(gpu, "nodes_filter")), "y");
    assert_null(json_object_get(gpu, "max_operation_count"));   /* null: the default */
    assert_string_equal(json_string_value(json_object_get(json_object_get(trees, "old"),
                                                          "nodes_filter")), "z");
    /* the default tree of the last row at or before until */
    assert_string_equal(json_string_value(json_object_get(sc, "default_tree")), "physical");
    const json_t *ev = event(sc, 0);
    assert_int_equal(json_array_size(json_object_get(sc, "events")), 1);
    assert_string_equal(json_string_value(json_object_get(ev, "type")), "set_tree_attribute");
    assert_string_equal(json_string_value(json_object_get(ev, "tree")), "physical");
    assert_null(json_object_get(ev, "pool"));
    assert_string_equal(json_string_value(json_object_get(ev, "key")), "max_operation_count");
    assert_int_equal(json_integer_value(json_object_get(ev, "value")), 7);
    assert_int_equal(json_integer_value(json_object_get(ev, "time")), 50);
    const json_t *spec = json_object_get(json_array_get(json_object_get(sc, "operations"), 0),
                                         "spec");
    const json_t *pt = json_object_get(spec, "pool_trees");
    assert_int_equal(json_array_size(pt), 1);
    assert_string_equal(json_string_value(json_array_get(pt, 0)), "physical");
    json_decref(sc);
    json_decref(rows);
    json_decref(given);
    convert("[" POOLS(0, 1) ", {\"timestamp\": 5, \"event_type\": \"pool_trees_info\", "
            "\"trees\": {\"t\": []}}]", 0, 100, PS_EINVAL, &err);
    assert_non_null(strstr(err.msg, "event log row 1: trees/t: must be a map"));
    convert("[" POOLS(0, 1) ", {\"timestamp\": 5, \"event_type\": \"pool_trees_info\", "
            "\"trees\": {}, \"default_tree\": 3}]", 0, 100, PS_EINVAL, &err);
    assert_non_null(strstr(err.msg, "event log row 1: default_tree"));
}

static void test_bad_input(void **state)
{
    (void)state;
    struct ps_error err;
    convert("[" POOLS(0, 1) "]", 100, 100, PS_EINVAL, &err);
    assert_non_null(strstr(err.msg, "until: must be after since"));
    convert("[" NODE(0, "node_registered", "n", "[]", 8) "]", 0, 100, PS_EINVAL, &err);
    assert_non_null(strstr(err.msg, "no pools_info row"));
    convert("[" POOLS(0, 1) ", {\"timestamp\": 5, \"event_type\": \"job_started\"}]", 0, 100,
            PS_EINVAL, &err);
    assert_non_null(strstr(err.msg, "event log row 1: job_id"));
    convert("[" POOLS(0, 1) ", {\"timestamp\": 5, \"event_type\": \"operation_started\", "
            "\"operation_id\": \"x\"}]", 0, 100, PS_EINVAL, &err);
    assert_non_null(strstr(err.msg, "event log row 1: tasks"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_over_time),
        cmocka_unit_test(test_operations_in_and_before_the_window),
        cmocka_unit_test(test_job_durations_in_start_order),
        cmocka_unit_test(test_changes),
        cmocka_unit_test(test_trees),
        cmocka_unit_test(test_trees_before_nodes),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
