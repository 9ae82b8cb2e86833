#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/scenario.h"

/* JSON written with single quotes, for readability; returns a static buffer. */
static const char *q(const char *text)
{
    static char buf[8192];
    size_t n = strlen(text);
    assert_true(n < sizeof buf);
    for (size_t i = 0; i <= n; i++)
        buf[i] = text[i] == '\'' ? '"' : text[i];
    return buf;
}

static int parse(const char *single_quoted, struct ps_scenario **out, struct ps_error *err)
{
    const char *text = q(single_quoted);
    ps_error_init(err);
    return ps_scenario_parse(text, strlen(text), out, err);
}

static const char *good =
    "{'heartbeat_period': 2000, 'duration': 86400000,"
    " 'node_groups': [{'name': 'rack1', 'count': 3,"
    "                  'resource_limits': {'cpu': 10.5, 'memory': 10737418240, 'user_slots': 10},"
    "                  'tags': ['internal', 'ssd']},"
    "                 {'count': 2, 'resource_limits': {'cpu': 4, 'gpu': 8}}],"
    " 'default_tree': 'physical',"
    " 'pool_trees': {"
    "   'physical': {'nodes_filter': 'internal', 'fair_share_starvation_timeout': 30000,"
    "                'pools': [{'name': 'research', 'weight': 2},"
    "                          {'name': 'ml', 'parent': 'research', 'mode': 'fifo'}]},"
    "   'gpu': {'nodes_filter': 'V100M32'}},"
    " 'operations': ["
    "   {'id': 'op0', 'start_time': 0, 'user': 'alice',"
    "    'spec': {'pool': 'ml', 'weight': 1, 'job_cpu_monitor': {'enable_cpu_reclaim': true}},"
    "    'tasks': [{'name': 'map', 'job_count': 100, 'duration': 120000,"
    "               'resources': {'cpu': 2, 'memory': 2147483648, 'user_slots': 1},"
    "               'memory_limit': 1073741824, 'cpu_usage': [[0, 0.5], [29000, 2.0]],"
    "               'max_memory': 536870912, 'tmpfs_size': 1048576, 'job_durations': [90000, 7.0e4]},"
    "              {'job_count': 1, 'duration': 1, 'resources': {'cpu': 0.01}}]},"
    "   {'id': 'op1', 'start_time': 5000,"
    "    'spec': {'pool_trees': ['gpu', 'physical'],"
    "             'scheduling_options_per_pool_tree': {'gpu': {'pool': 'g'}}},"
    "    'tasks': [{'name': 'train', 'job_count': 1, 'duration': 1000,"
    "               'resources': {'gpu': 8, 'memory': 100}}]}]}";

static void test_good_scenario(void **state)
{
    (void)state;
    struct ps_scenario *sc;
    struct ps_error err;
    assert_int_equal(parse(good, &sc, &err), 0);
    assert_non_null(sc);

    assert_int_equal(sc->heartbeat_period_ms, 2000);
    assert_int_equal(sc->fair_share_update_period_ms, PS_SCENARIO_DEFAULT_FAIR_SHARE_UPDATE_PERIOD_MS);
    assert_int_equal(sc->duration_ms, 86400000);

    assert_int_equal(sc->node_group_count, 2);
    assert_int_equal(sc->node_count, 5);
    const struct ps_scenario_node_group *g = &sc->node_groups[0];
    assert_string_equal(g->name, "rack1");
    assert_int_equal(g->count, 3);
    assert_int_equal(g->resource_limits.v[PS_RES_CPU], 1050);
    assert_int_equal(g->resource_limits.v[PS_RES_MEMORY], 10737418240LL);
    assert_int_equal(g->resource_limits.v[PS_RES_USER_SLOTS], 10);
    assert_int_equal(g->resource_limits.v[PS_RES_GPU], PS_RES_INFINITE);   /* limits: omitted */
    assert_int_equal(g->tag_count, 2);
    assert_string_equal(g->tags[1], "ssd");
    char id[64];
    assert_int_equal(ps_scenario_node_id(g, 2, id, sizeof id), 7);
    assert_string_equal(id, "rack1-2");
    g = &sc->node_groups[1];
    assert_string_equal(g->name, "group1");                                /* default name */
    assert_int_equal(g->tag_count, 0);
    ps_scenario_node_id(g, 0, id, sizeof id);
    assert_string_equal(id, "group1-0");

    assert_int_equal(sc->tree_count, 2);
    assert_string_equal(sc->trees[0].name, "gpu");                         /* sorted by name */
    assert_string_equal(sc->trees[1].name, "physical");
    assert_string_equal(sc->default_tree, "physical");
    const struct ps_scenario_tree *t = ps_scenario_find_tree(sc, "physical");
    assert_ptr_equal(t, &sc->trees[1]);
    assert_null(ps_scenario_find_tree(sc, "nope"));
    assert_null(json_object_get(t->attributes, "pools"));
    assert_string_equal(json_string_value(json_object_get(t->attributes, "nodes_filter")), "internal");
    assert_int_equal(json_integer_value(json_object_get(t->attributes, "fair_share_starvation_timeout")),
                     30000);
    assert_int_equal(t->pool_count, 2);
    assert_string_equal(t->pools[0].name, "research");
    assert_string_equal(t->pools[0].parent, "<Root>");
    assert_string_equal(t->pools[1].name, "ml");
    assert_string_equal(t->pools[1].parent, "research");
    assert_null(json_object_get(t->pools[1].attributes, "name"));
    assert_null(json_object_get(t->pools[1].attributes, "parent"));
    assert_string_equal(json_string_value(json_object_get(t->pools[1].attributes, "mode")), "fifo");
    assert_int_equal(json_object_size(t->pools[0].attributes), 1);
    assert_int_equal(sc->trees[0].pool_count, 0);

    assert_int_equal(sc->operation_count, 2);
    const struct ps_scenario_operation *op = &sc->operations[0];
    assert_string_equal(op->id, "op0");
    assert_int_equal(op->start_time_ms, 0);
    assert_string_equal(op->user, "alice");
    assert_string_equal(op->pool, "ml");
    assert_int_equal(op->pool_tree_count, 0);
    assert_true(json_is_true(json_object_get(json_object_get(op->spec, "job_cpu_monitor"),
                                             "enable_cpu_reclaim")));
    assert_int_equal(op->task_count, 2);
    const struct ps_scenario_task *task = &op->tasks[0];
    assert_string_equal(task->name, "map");
    assert_int_equal(task->job_count, 100);
    assert_int_equal(task->duration_ms, 120000);
    assert_int_equal(task->resources.v[PS_RES_CPU], 200);
    assert_int_equal(task->resources.v[PS_RES_MEMORY], 2147483648LL);
    assert_int_equal(task->resources.v[PS_RES_USER_SLOTS], 1);
    assert_int_equal(task->resources.v[PS_RES_GPU], 0);                   /* not limits: 0 */
    assert_int_equal(task->memory_limit_bytes, 1073741824);
    assert_int_equal(task->max_memory_bytes, 536870912);
    assert_int_equal(task->tmpfs_size_bytes, 1048576);
    assert_int_equal(task->cpu_usage_count, 2);
    assert_int_equal(task->cpu_usage[0].offset_ms, 0);
    assert_int_equal(task->cpu_usage[0].cpu, 50);
    assert_int_equal(task->cpu_usage[1].offset_ms, 29000);
    assert_int_equal(task->cpu_usage[1].cpu, 200);
    assert_int_equal(task->job_duration_count, 2);
    assert_int_equal(task->job_durations_ms[0], 90000);
    assert_int_equal(task->job_durations_ms[1], 70000);
    task = &op->tasks[1];
    assert_string_equal(task->name, "task1");                             /* default name */
    assert_int_equal(task->resources.v[PS_RES_CPU], 1);
    assert_int_equal(task->memory_limit_bytes, PS_SCENARIO_DEFAULT_MEMORY_LIMIT);
    assert_int_equal(task->max_memory_bytes, 0);
    assert_int_equal(task->tmpfs_size_bytes, 0);
    assert_true(task->max_memory_spread == 0.0);                          /* default: exact */
    assert_null(task->cpu_usage);
    assert_null(task->job_durations_ms);                                  /* default: duration */
    assert_int_equal(task->job_duration_count, 0);

    op = &sc->operations[1];
    assert_string_equal(op->user, "root");                                /* default user */
    assert_null(op->pool);
    assert_int_equal(op->pool_tree_count, 2);
    assert_string_equal(op->pool_trees[0], "gpu");
    assert_int_equal(op->tasks[0].memory_limit_bytes, 100);               /* = memory request */
    assert_int_equal(op->tasks[0].max_memory_bytes, 100);

    ps_scenario_free(sc);
    ps_scenario_free(NULL);
}

static void test_minimal_scenario_defaults(void **state)
{
    (void)state;
    struct ps_scenario *sc;
    struct ps_error err;
    assert_int_equal(parse("{'node_groups': [], 'pool_trees': {'only': {}}}", &sc, &err), 0);
    assert_int_equal(sc->heartbeat_period_ms, 5000);
    assert_int_equal(sc->fair_share_update_period_ms, 1000);
    assert_int_equal(sc->duration_ms, 0);
    assert_true(sc->seed == 0);
    assert_int_equal(sc->node_count, 0);
    assert_string_equal(sc->default_tree, "only");      /* the only tree */
    assert_int_equal(sc->operation_count, 0);
    assert_int_equal(json_object_size(sc->trees[0].attributes), 0);
    ps_scenario_free(sc);
}

/* Whole numbers may be written as reals (generated files often do). */
static void test_integral_reals(void **state)
{
    (void)state;
    struct ps_scenario *sc;
    struct ps_error err;
    assert_int_equal(parse("{'node_groups': [{'count': 2.0, 'resource_limits': {'memory': 1e9}}],"
                           " 'pool_trees': {'t': {}}, 'operations': [{'id': 'x', 'start_time': 1e3,"
                           " 'tasks': [{'job_count': 1, 'duration': 5.0, 'resources': {},"
                           " 'cpu_usage': [[0.0, 1], [1e3, 2.5]]}]}]}",
                           &sc, &err), 0);
    assert_int_equal(sc->node_groups[0].count, 2);
    assert_int_equal(sc->node_groups[0].resource_limits.v[PS_RES_MEMORY], 1000000000);
    assert_int_equal(sc->node_groups[0].cpu_overdraft_timeout_ms, 600000);   /* upstream's */
    assert_int_equal(sc->node_groups[0].resource_adjustment_period_ms, 5000);
    assert_int_equal(sc->node_groups[0].fail_jobs_after_ms, -1);   /* jobs do not fail */
    assert_true(sc->node_groups[0].job_duration_factor == 1);
    assert_int_equal(sc->node_groups[0].heartbeat_phase_ms, -1);   /* spread by index */
    assert_false(sc->node_groups[0].send_heartbeat_on_job_finished);   /* periodic only */
    assert_int_equal(sc->operations[0].start_time_ms, 1000);
    assert_int_equal(sc->operations[0].tasks[0].cpu_usage[1].offset_ms, 1000);
    assert_int_equal(sc->operations[0].tasks[0].cpu_usage[1].cpu, 250);
    ps_scenario_free(sc);
}

/* A bad document and the exact message it must produce. */
struct bad_case {
    const char *json;
    const char *message;
};

#define NODES "'node_groups': [{'count': 1, 'resource_limits': {'cpu': 1}}]"
#define TREES "'pool_trees': {'t': {'pools': [{'name': 'a'}]}}"
#define OP(task) "'operations': [{'id': 'x', 'start_time': 0, 'tasks': [" task "]}]"
#define TASK "{'job_count': 1, 'duration': 1, 'resources': {'cpu': 1}"

static const struct bad_case bad_cases[] = {
    {"[1]", "scenario: must be an object, got [1]"},
    {"{'node_groups': [", "scenario: invalid JSON at line 1 column 17: ']' expected near end of file"},
    {"{" NODES ", " TREES ", 'heartbeat_perod': 5}",
     "scenario: unknown key \"heartbeat_perod\" (did you mean \"heartbeat_period\"?)"},
    {"{" NODES ", " TREES ", 'banana': 5}",
     "scenario: unknown key \"banana\""},
    {"{" NODES ", " TREES ", 'heartbeat_period': 0}",
     "heartbeat_period: must be a positive integer (ms), got 0"},
    {"{" NODES ", " TREES ", 'fair_share_update_period': 1.5}",
     "fair_share_update_period: must be a positive integer (ms), got 1.5"},
    {"{" NODES ", " TREES ", 'duration': '1h'}", "duration: must be a positive integer (ms), got \"1h\""},
    {"{" NODES ", " TREES ", 'duration': 1, 'duration': 2}",
     "scenario: invalid JSON at line 1 column 137: duplicate object key near '\"duration\"'"},
    {"{" TREES "}", "node_groups: required key is missing"},
    {"{" NODES "}", "pool_trees: required key is missing"},
    {"{'node_groups': {}, " TREES "}", "node_groups: must be an array, got {}"},
    {"{'node_groups': [{'count': -1, 'resource_limits': {}}], " TREES "}",
     "node_groups[0].count: must be a whole number from 0 to 1000000, got -1"},
    {"{'node_groups': [{'count': 2000000, 'resource_limits': {}}], " TREES "}",
     "node_groups[0].count: must be a whole number from 0 to 1000000, got 2000000"},
    {"{'node_groups': [{'resource_limits': {}}], " TREES "}",
     "node_groups[0].count: required key is missing"},
    {"{'node_groups': [{'count': 1}], " TREES "}",
     "node_groups[0].resource_limits: required key is missing"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {'cpus': 1}}], " TREES "}",
     "node_groups[0].resource_limits: unknown resource \"cpus\" (did you mean \"cpu\"?), expected "
     "user_slots, cpu, gpu, memory or network"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {'cpu': -1}}], " TREES "}",
     "node_groups[0].resource_limits.cpu: must be a number of cores from 0 to 1e16, got -1"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {'memory': 1.5}}], " TREES "}",
     "node_groups[0].resource_limits.memory: must be a whole number from 0 to 1e18, got 1.5"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {}, 'cpu_overdraft_timeout': -5}], " TREES "}",
     "node_groups[0].cpu_overdraft_timeout: must be a non-negative integer (ms), got -5"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {}, 'resource_adjustment_period': 0}], " TREES "}",
     "node_groups[0].resource_adjustment_period: must be a positive integer (ms), got 0"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {}, 'fail_jobs_after': -1}], " TREES "}",
     "node_groups[0].fail_jobs_after: must be a non-negative integer (ms), got -1"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {}, 'job_duration_factor': 0}], " TREES "}",
     "node_groups[0].job_duration_factor: must be a number from 0.001 to 1e9, got 0"},
    {"{'heartbeat_period': 100, 'node_groups': [{'count': 1, 'resource_limits': {},"
     " 'heartbeat_phase': 100}], " TREES "}",
     "node_groups[0].heartbeat_phase: must be an integer (ms) from 0 to heartbeat_period - 1 "
     "(99), got 100"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {}, 'send_heartbeat_on_job_finished': 1}], "
     TREES "}",
     "node_groups[0].send_heartbeat_on_job_finished: must be true or false, got 1"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {}, 'heartbeat_phase': -1}], " TREES "}",
     "node_groups[0].heartbeat_phase: must be an integer (ms) from 0 to heartbeat_period - 1 "
     "(4999), got -1"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {}, 'tags': ['a', 3]}], " TREES "}",
     "node_groups[0].tags[1]: must be a non-empty string, got 3"},
    {"{'node_groups': [{'count': 1, 'resource_limits': {}, 'tag': []}], " TREES "}",
     "node_groups[0]: unknown key \"tag\" (did you mean \"tags\"?)"},
    {"{'node_groups': [{'name': 'group1', 'count': 1, 'resource_limits': {}},"
     " {'count': 1, 'resource_limits': {}}], " TREES "}",
     "node_groups[1].name: duplicate group name \"group1\" (also node_groups[0]); node ids "
     "<name>-<index> must be unique"},
    {"{'node_groups': [{'count': 600000, 'resource_limits': {}},"
     " {'count': 600000, 'resource_limits': {}}], " TREES "}",
     "node_groups[1].count: the node groups have more than 1000000 nodes in total"},
    {"{" NODES ", 'pool_trees': {}}", "pool_trees: must have at least one tree"},
    {"{" NODES ", 'pool_trees': {'t': []}}", "pool_trees.t: must be an object, got []"},
    {"{" NODES ", 'pool_trees': {'t': {'pools': {}}}}", "pool_trees.t.pools: must be an array, got {}"},
    {"{" NODES ", 'pool_trees': {'t': {'pools': [{'weight': 1}]}}}",
     "pool_trees.t.pools[0].name: required key is missing"},
    {"{" NODES ", 'pool_trees': {'t': {'pools': ['a']}}}",
     "pool_trees.t.pools[0]: must be an object, got \"a\""},
    {"{" NODES ", 'pool_trees': {'t': {'pools': [{'name': ''}]}}}",
     "pool_trees.t.pools[0].name: must be a non-empty string"},
    {"{" NODES ", 'pool_trees': {'t': {'pools': [{'name': '<Root>'}]}}}",
     "pool_trees.t.pools[0].name: \"<Root>\" is the name of the root, not a pool"},
    {"{" NODES ", 'pool_trees': {'t': {'pools': [{'name': 'a'}, {'name': 'b'}, {'name': 'a'}]}}}",
     "pool_trees.t.pools[2].name: duplicate pool name \"a\" (also pools[0])"},
    {"{" NODES ", 'pool_trees': {'t': {'pools': [{'name': 'a', 'parent': 'zz'}]}}}",
     "pool_trees.t.pools[0].parent: no pool named \"zz\" in this tree"},
    {"{" NODES ", 'pool_trees': {'t': {'pools': [{'name': 'r'}, {'name': 'a', 'parent': 'b'},"
     " {'name': 'b', 'parent': 'a'}]}}}",
     "pool_trees.t.pools[1].parent: the ancestors of pool \"a\" form a cycle through \"a\" and "
     "never reach <Root>"},
    {"{" NODES ", 'pool_trees': {'t': {'pools': [{'name': 'a', 'parent': 'a'}]}}}",
     "pool_trees.t.pools[0].parent: the ancestors of pool \"a\" form a cycle through \"a\" and "
     "never reach <Root>"},
    {"{" NODES ", 'pool_trees': {'t': {}, 'u': {}}}",
     "default_tree: required key is missing (there are 2 pool trees)"},
    {"{" NODES ", " TREES ", 'default_tree': 'physical'}",
     "default_tree: no pool tree named \"physical\" in pool_trees"},
    {"{" NODES ", " TREES ", 'operations': {}}", "operations: must be an array, got {}"},
    {"{" NODES ", " TREES ", 'operations': [{'start_time': 0, 'tasks': []}]}",
     "operations[0].id: required key is missing"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'tasks': []}]}",
     "operations[0].start_time: required key is missing"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': -5, 'tasks': []}]}",
     "operations[0].start_time: must be a non-negative integer (ms), got -5"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0, 'tasks': []}]}",
     "operations[0].tasks: must have at least one task"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0, 'user': 7, 'tasks': []}]}",
     "operations[0].user: must be a string, got 7"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0, 'spec': [], 'tasks': []}]}",
     "operations[0].spec: must be an object, got []"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0, 'spec': {'pool': 3}, 'tasks': []}]}",
     "operations[0].spec.pool: must be a string, got 3"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0, 'spec': {'pool': '<Root>'}, 'tasks': []}]}",
     "operations[0].spec.pool: operations cannot run in <Root> directly; name a pool"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0,"
     " 'spec': {'pool_trees': ['t', 'gpu']}, 'tasks': []}]}",
     "operations[0].spec.pool_trees[1]: no pool tree named \"gpu\" in pool_trees"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0,"
     " 'spec': {'pool_trees': ['t', 't']}, 'tasks': []}]}",
     "operations[0].spec.pool_trees[1]: tree \"t\" is listed twice"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0,"
     " 'spec': {'pool_trees': []}, 'tasks': []}]}",
     "operations[0].spec.pool_trees: must not be empty (omit it to use the default tree)"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0,"
     " 'spec': {'scheduling_options_per_pool_tree': {'u': {}}}, 'tasks': []}]}",
     "operations[0].spec.scheduling_options_per_pool_tree.u: no pool tree named \"u\" in pool_trees"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0,"
     " 'spec': {'scheduling_options_per_pool_tree': {'t': {'pool': ''}}}, 'tasks': []}]}",
     "operations[0].spec.scheduling_options_per_pool_tree.t.pool: must be a non-empty string"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0, 'task': []}]}",
     "operations[0]: unknown key \"task\" (did you mean \"tasks\"?)"},
    {"{" NODES ", " TREES ", " OP(TASK "}") ", 'operations': []}",
     "scenario: invalid JSON at line 1 column 239: duplicate object key near '\"operations\"'"},
    {"{" NODES ", " TREES ", " OP("{'job_count': -1, 'duration': 1, 'resources': {}}") "}",
     "operations[0].tasks[0].job_count: must be a positive integer, got -1"},
    {"{" NODES ", " TREES ", " OP("{'job_cont': 1}") "}",
     "operations[0].tasks[0]: unknown key \"job_cont\" (did you mean \"job_count\"?)"},
    {"{" NODES ", " TREES ", " OP("{'duration': 1, 'resources': {}}") "}",
     "operations[0].tasks[0].job_count: required key is missing"},
    {"{" NODES ", " TREES ", " OP("{'job_count': 1, 'resources': {}}") "}",
     "operations[0].tasks[0].duration: required key is missing"},
    {"{" NODES ", " TREES ", " OP("{'job_count': 1, 'duration': 0, 'resources': {}}") "}",
     "operations[0].tasks[0].duration: must be a positive integer (ms), got 0"},
    {"{" NODES ", " TREES ", " OP("{'job_count': 1, 'duration': 1}") "}",
     "operations[0].tasks[0].resources: required key is missing"},
    {"{" NODES ", " TREES ", " OP("{'job_count': 1, 'duration': 1, 'resources': {'gpu': true}}") "}",
     "operations[0].tasks[0].resources.gpu: must be a whole number from 0 to 1e18, got true"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'memory_limit': 0}") "}",
     "operations[0].tasks[0].memory_limit: must be a positive integer (bytes), got 0"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'max_memory': -1}") "}",
     "operations[0].tasks[0].max_memory: must be a non-negative integer (bytes), got -1"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'memory_limit': 10, 'tmpfs_size': 11}") "}",
     "operations[0].tasks[0].tmpfs_size: must be at most memory_limit (10), got 11 (tmpfs is part "
     "of the job's memory)"},
    {"{" NODES ", " TREES ", " OP("{'job_count': 3000000000, 'duration': 1, 'resources': {}}") "}",
     "operations[0].tasks[0].job_count: must be at most 2147483647, got 3000000000"},
    {"{'node_groups': [{'count': 1000, 'resource_limits': {'memory': 1e18}}], " TREES "}",
     "node_groups[0].resource_limits.memory: the cluster's total memory would exceed 1e18 stored "
     "units"},
    {"{" NODES ", 'pool_trees': {'': {}}}", "pool_trees: a tree name must not be empty"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'cpu_usage': []}") "}",
     "operations[0].tasks[0].cpu_usage: must not be empty (omit it to use the full cpu request)"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'cpu_usage': [[0, 1, 2]]}") "}",
     "operations[0].tasks[0].cpu_usage[0]: must be a pair [offset_ms, cores] of a non-negative "
     "integer and a number of cores from 0 to 1e16, got [0,1,2]"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'cpu_usage': [[100, 1]]}") "}",
     "operations[0].tasks[0].cpu_usage[0]: the first offset must be 0 (the job's start), got 100"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'cpu_usage': [[0, 1], [500, 2], [500, 3]]}") "}",
     "operations[0].tasks[0].cpu_usage[2]: offsets must be strictly ascending, got 500 after 500"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'cpu_usage': [[0, -0.5]]}") "}",
     "operations[0].tasks[0].cpu_usage[0]: must be a pair [offset_ms, cores] of a non-negative "
     "integer and a number of cores from 0 to 1e16, got [0,-0.5]"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'name': 'm'}, " TASK ", 'name': 'm'}") "}",
     "operations[0].tasks[1].name: duplicate task name \"m\" (also tasks[0])"},
    {"{" NODES ", " TREES ", 'operations': [{'id': 'x', 'start_time': 0, 'tasks': [" TASK "}]},"
     " {'id': 'y', 'start_time': 0, 'tasks': [" TASK "}]},"
     " {'id': 'x', 'start_time': 0, 'tasks': [" TASK "}]}]}",
     "operations[2].id: duplicate operation id \"x\" (also operations[0])"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'max_memory_spread': 1.5}") "}",
     "operations[0].tasks[0].max_memory_spread: must be a number from 0 to 1 (the sigma of the "
     "log of the job's peak), got 1.5"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'max_memory_spread': -0.1}") "}",
     "operations[0].tasks[0].max_memory_spread: must be a number from 0 to 1 (the sigma of the "
     "log of the job's peak), got -0.1"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'max_memory_spread': '0.2'}") "}",
     "operations[0].tasks[0].max_memory_spread: must be a number from 0 to 1 (the sigma of the "
     "log of the job's peak), got \"0.2\""},
    {"{" NODES ", " TREES ", " OP(TASK ", 'job_durations': []}") "}",
     "operations[0].tasks[0].job_durations: must not be empty (omit it for every job to last "
     "duration)"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'job_durations': 5}") "}",
     "operations[0].tasks[0].job_durations: must be an array, got 5"},
    {"{" NODES ", " TREES ", " OP(TASK ", 'job_durations': [5, 6]}") "}",
     "operations[0].tasks[0].job_durations: must have at most job_count (1) entries, got 2"},
    {"{" NODES ", " TREES ", " OP("{'job_count': 3, 'duration': 1, 'resources': {},"
     " 'job_durations': [5, 0]}") "}",
     "operations[0].tasks[0].job_durations[1]: must be a positive integer (ms), got 0"},
    {"{" NODES ", " TREES ", " OP("{'job_count': 3, 'duration': 1, 'resources': {},"
     " 'job_durations': [5.5]}") "}",
     "operations[0].tasks[0].job_durations[0]: must be a positive integer (ms), got 5.5"},
    {"{" NODES ", " TREES ", " OP("{'job_count': 3, 'duration': 1, 'resources': {},"
     " 'job_durations': ['5']}") "}",
     "operations[0].tasks[0].job_durations[0]: must be a positive integer (ms), got \"5\""},
    {"{" NODES ", " TREES ", " OP(TASK ", 'job_duration': [5]}") "}",
     "operations[0].tasks[0]: unknown key \"job_duration\" (did you mean \"job_durations\"?)"},
    {"{'seed': -1, " NODES ", " TREES "}", "seed: must be a non-negative integer, got -1"},
    {"{'seed': 1.5, " NODES ", " TREES "}", "seed: must be a non-negative integer, got 1.5"},
    {"{'sead': 1, " NODES ", " TREES "}", "scenario: unknown key \"sead\" (did you mean \"seed\"?)"},
};

static void test_bad_scenarios(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        struct ps_scenario *sc = (struct ps_scenario *)1;
        struct ps_error err;
        int rc = parse(bad_cases[i].json, &sc, &err);
        if (rc != PS_EINVAL || err.code != PS_EINVAL || sc != NULL ||
            strcmp(err.msg, bad_cases[i].message) != 0) {
            print_error("case %zu: rc %d, message\n  got:  %s\n  want: %s\n", i, rc, err.msg,
                        bad_cases[i].message);
            failures++;
        }
        if (rc == 0)
            ps_scenario_free(sc);
    }
    assert_int_equal(failures, 0);
}

/* ---- events ---------------------------------------------------------------------------- */

#define EV_BASE "'node_groups': [{'name': 'rack', 'count': 3, 'resource_limits': {'cpu': 8}}," \
                " {'count': 1, 'resource_limits': {'cpu': 1}}]," \
                " 'default_tree': 't'," \
                " 'pool_trees': {'t': {'pools': [{'name': 'a'}]}, 'u': {'pools': [{'name': 'b'}]}}," \
                " 'operations': [{'id': 'x', 'start_time': 0, 'tasks': [" TASK "}]}," \
                " {'id': 'y', 'start_time': 0, 'tasks': [" TASK "}]}]"
#define EVENTS(list) "{" EV_BASE ", 'events': [" list "]}"

static void test_events_parsed(void **state)
{
    (void)state;
    struct ps_scenario *sc;
    struct ps_error err;
    int rc = parse(EVENTS(
        "{'time': 1000, 'type': 'set_node_resources', 'node': 'rack-2',"
        " 'resource_limits': {'cpu': 4.5, 'memory': 100}},"
        "{'time': 2000, 'type': 'set_node_resources', 'group': 'group1',"
        " 'resource_limits': {'user_slots': 0}},"
        "{'time': 0, 'type': 'set_pool_attribute', 'pool': 'a', 'key': 'weight', 'value': 3},"
        "{'time': 5, 'type': 'set_pool_attribute', 'tree': 'u', 'pool': 'b',"
        " 'key': 'resource_limits', 'value': null},"
        "{'time': 9007199254740992, 'type': 'update_operation', 'operation': 'y',"
        " 'parameters': {'weight': 2, 'pool': 'a'}}"), &sc, &err);
    if (rc != 0)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(sc->event_count, 5);
    const struct ps_scenario_event *ev = sc->events;

    assert_int_equal(ev[0].time_ms, 1000);
    assert_int_equal(ev[0].type, PS_SCENARIO_EV_SET_NODE_RESOURCES);
    assert_int_equal(ev[0].group, 0);
    assert_int_equal(ev[0].node, 2);
    assert_int_equal(ev[0].resource_set, (1u << PS_RES_CPU) | (1u << PS_RES_MEMORY));
    assert_int_equal(ev[0].resource_limits.v[PS_RES_CPU], 450);
    assert_int_equal(ev[0].resource_limits.v[PS_RES_MEMORY], 100);
    assert_int_equal(ev[0].operation, -1);
    assert_null(ev[0].pool);
    assert_null(ev[0].parameters);

    assert_int_equal(ev[1].time_ms, 2000);
    assert_int_equal(ev[1].type, PS_SCENARIO_EV_SET_NODE_RESOURCES);
    assert_int_equal(ev[1].group, 1);                  /* the default name of the second group */
    assert_int_equal(ev[1].node, -1);                  /* every node of the group */
    assert_int_equal(ev[1].resource_set, 1u << PS_RES_USER_SLOTS);
    assert_int_equal(ev[1].resource_limits.v[PS_RES_USER_SLOTS], 0);

    assert_int_equal(ev[2].time_ms, 0);
    assert_int_equal(ev[2].type, PS_SCENARIO_EV_SET_POOL_ATTRIBUTE);
    assert_string_equal(ev[2].tree, "t");              /* the default tree */
    assert_ptr_equal(ev[2].tree, ps_scenario_find_tree(sc, "t")->name);
    assert_string_equal(ev[2].pool, "a");
    assert_string_equal(ev[2].key, "weight");
    assert_true(json_is_integer(ev[2].value));
    assert_int_equal(json_integer_value(ev[2].value), 3);
    assert_int_equal(ev[2].group, -1);
    assert_int_equal(ev[2].node, -1);
    assert_int_equal(ev[2].operation, -1);

    assert_int_equal(ev[3].type, PS_SCENARIO_EV_SET_POOL_ATTRIBUTE);
    assert_string_equal(ev[3].tree, "u");
    assert_string_equal(ev[3].pool, "b");
    assert_string_equal(ev[3].key, "resource_limits");
    assert_non_null(ev[3].value);
    assert_true(json_is_null(ev[3].value));             /* null: back to the default */

    assert_int_equal(ev[4].time_ms, PS_SCENARIO_MAX_TIME_MS);
    assert_int_equal(ev[4].type, PS_SCENARIO_EV_UPDATE_OPERATION);
    assert_int_equal(ev[4].operation, 1);
    assert_true(json_is_object(ev[4].parameters));
    assert_int_equal(json_object_size(ev[4].parameters), 2);
    assert_int_equal(json_integer_value(json_object_get(ev[4].parameters, "weight")), 2);
    assert_null(ev[4].tree);
    ps_scenario_free(sc);

    /* An empty list, or none: no events. */
    assert_int_equal(parse(EVENTS(""), &sc, &err), 0);
    assert_int_equal(sc->event_count, 0);
    assert_null(sc->events);
    ps_scenario_free(sc);
    assert_int_equal(parse("{" EV_BASE "}", &sc, &err), 0);
    assert_int_equal(sc->event_count, 0);
    ps_scenario_free(sc);
}

#define NODE_EV(rest) "{'time': 1, 'type': 'set_node_resources', " rest "}"
#define POOL_EV(rest) "{'time': 1, 'type': 'set_pool_attribute', " rest "}"
#define OP_EV(rest) "{'time': 1, 'type': 'update_operation', " rest "}"

static const struct bad_case bad_events[] = {
    /* the list and the event objects */
    {"{" EV_BASE ", 'events': {}}", "events: must be an array, got {}"},
    {EVENTS("3"), "events[0]: must be an object, got 3"},
    /* type */
    {EVENTS("{'time': 1, 'type': 'set_node_resource', 'node': 'rack-0', 'resource_limits': {'cpu': 1}}"),
     "events[0].type: must be \"set_node_resources\", \"set_node_tags\", "
     "\"set_pool_attribute\", \"set_tree_attribute\" or \"update_operation\", got \"set_node_resource\""},
    {EVENTS("{'time': 1, 'type': 'explode'}"),
     "events[0].type: must be \"set_node_resources\", \"set_node_tags\", "
     "\"set_pool_attribute\", \"set_tree_attribute\" or \"update_operation\", got \"explode\""},
    {EVENTS("{'time': 1}"), "events[0].type: required key is missing"},
    /* set_node_tags, set_tree_attribute */
    {EVENTS("{'time': 1, 'type': 'set_node_tags', 'node': 'rack-0'}"),
     "events[0].tags: required key is missing"},
    {EVENTS("{'time': 1, 'type': 'set_node_tags', 'node': 'rack-0', 'tags': ['a', '']}"),
     "events[0].tags[1]: must be a non-empty string, got \"\""},
    {EVENTS("{'time': 1, 'type': 'set_node_tags', 'tags': []}"),
     "events[0]: give exactly one of \"node\" and \"group\""},
    {EVENTS("{'time': 1, 'type': 'set_tree_attribute', 'tree': 'zz', 'key': 'k', 'value': 1}"),
     "events[0].tree: no pool tree named \"zz\" in pool_trees"},
    {EVENTS("{'time': 1, 'type': 'set_tree_attribute', 'key': 'nodes_filter'}"),
     "events[0].value: required key is missing"},
    {EVENTS("{'time': 1, 'type': 3}"), "events[0].type: must be a string, got 3"},
    /* time */
    {EVENTS("{'type': 'update_operation', 'operation': 'x', 'parameters': {}}"),
     "events[0].time: required key is missing"},
    {EVENTS(OP_EV("'operation': 'x', 'parameters': {}") ", {'time': -1, 'type': 'update_operation',"
            " 'operation': 'x', 'parameters': {}}"),
     "events[1].time: must be a non-negative integer (ms), got -1"},
    {EVENTS("{'time': 1.5, 'type': 'update_operation', 'operation': 'x', 'parameters': {}}"),
     "events[0].time: must be a non-negative integer (ms), got 1.5"},
    {EVENTS("{'time': '1s', 'type': 'update_operation', 'operation': 'x', 'parameters': {}}"),
     "events[0].time: must be a non-negative integer (ms), got \"1s\""},
    {EVENTS("{'time': 9007199254740993, 'type': 'update_operation', 'operation': 'x', 'parameters': {}}"),
     "events[0].time: must be a non-negative integer (ms), got 9007199254740993"},
    /* set_node_resources */
    {EVENTS(NODE_EV("'node': 'rack-3', 'resource_limits': {'cpu': 1}")),
     "events[0].node: no node \"rack-3\" (nodes are named <group name>-<index>)"},
    {EVENTS(NODE_EV("'node': 'rack-01', 'resource_limits': {'cpu': 1}")),
     "events[0].node: no node \"rack-01\" (nodes are named <group name>-<index>)"},
    {EVENTS(NODE_EV("'node': 'rack', 'resource_limits': {'cpu': 1}")),
     "events[0].node: no node \"rack\" (nodes are named <group name>-<index>)"},
    {EVENTS(NODE_EV("'group': 'racks', 'resource_limits': {'cpu': 1}")),
     "events[0].group: no node group named \"racks\""},
    {EVENTS(NODE_EV("'node': 'rack-0', 'group': 'rack', 'resource_limits': {'cpu': 1}")),
     "events[0]: give exactly one of \"node\" and \"group\""},
    {EVENTS(NODE_EV("'resource_limits': {'cpu': 1}")),
     "events[0]: give exactly one of \"node\" and \"group\""},
    {EVENTS(NODE_EV("'node': 'rack-0'")), "events[0].resource_limits: required key is missing"},
    {EVENTS(NODE_EV("'node': 'rack-0', 'resource_limits': {}")),
     "events[0].resource_limits: must name at least one resource"},
    {EVENTS(NODE_EV("'node': 'rack-0', 'resource_limits': {'cpu': 'many'}")),
     "events[0].resource_limits.cpu: must be a number of cores from 0 to 1e16, got \"many\""},
    {EVENTS(NODE_EV("'node': 'rack-0', 'resource_limits': []")),
     "events[0].resource_limits: must be an object, got []"},
    {EVENTS(NODE_EV("'node': 7, 'resource_limits': {'cpu': 1}")),
     "events[0].node: must be a string, got 7"},
    {EVENTS(NODE_EV("'node': 'rack-0', 'resource_limits': {'cpu': 1}, 'pool': 'a'")),
     "events[0]: unknown key \"pool\""},
    /* set_pool_attribute */
    {EVENTS(POOL_EV("'pool': 'b', 'key': 'weight', 'value': 2")),
     "events[0].pool: no pool \"b\" in pool tree \"t\" (only pools listed in the tree can be "
     "changed)"},
    {EVENTS(POOL_EV("'tree': 'v', 'pool': 'b', 'key': 'weight', 'value': 2")),
     "events[0].tree: no pool tree named \"v\" in pool_trees"},
    {EVENTS(POOL_EV("'pool': '<Root>', 'key': 'weight', 'value': 2")),
     "events[0].pool: no pool \"<Root>\" in pool tree \"t\" (only pools listed in the tree can "
     "be changed)"},
    {EVENTS(POOL_EV("'key': 'weight', 'value': 2")), "events[0].pool: required key is missing"},
    {EVENTS(POOL_EV("'pool': 'a', 'value': 2")), "events[0].key: required key is missing"},
    {EVENTS(POOL_EV("'pool': 'a', 'key': 'weight'")), "events[0].value: required key is missing"},
    {EVENTS(POOL_EV("'pool': 'a', 'key': 5, 'value': 2")), "events[0].key: must be a string, got 5"},
    {EVENTS(POOL_EV("'pool': 'a', 'key': 'weight', 'value': 2, 'parameters': {}")),
     "events[0]: unknown key \"parameters\""},
    /* update_operation */
    {EVENTS(OP_EV("'operation': 'z', 'parameters': {}")),
     "events[0].operation: no operation \"z\" in operations"},
    {EVENTS(OP_EV("'parameters': {}")), "events[0].operation: required key is missing"},
    {EVENTS(OP_EV("'operation': 'x'")), "events[0].parameters: required key is missing"},
    {EVENTS(OP_EV("'operation': 'x', 'parameters': [1]")),
     "events[0].parameters: must be an object, got [1]"},
    {EVENTS(OP_EV("'operation': 'x', 'parameters': 'weight=2'")),
     "events[0].parameters: must be an object, got \"weight=2\""},
    /* the first bad event wins, after good ones */
    {EVENTS(OP_EV("'operation': 'x', 'parameters': {}") ", " POOL_EV("'pool': 'a', 'key': 'w', 'value': 1")
            ", " OP_EV("'operation': 'q', 'parameters': {}") ", {'time': 'x'}"),
     "events[2].operation: no operation \"q\" in operations"},
};

static void test_bad_events(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_events / sizeof bad_events[0]; i++) {
        struct ps_scenario *sc = (struct ps_scenario *)1;
        struct ps_error err;
        int rc = parse(bad_events[i].json, &sc, &err);
        if (rc != PS_EINVAL || err.code != PS_EINVAL || sc != NULL ||
            strcmp(err.msg, bad_events[i].message) != 0) {
            print_error("event case %zu: rc %d, message\n  got:  %s\n  want: %s\n", i, rc, err.msg,
                        bad_events[i].message);
            failures++;
        }
        if (rc == 0)
            ps_scenario_free(sc);
    }
    assert_int_equal(failures, 0);
}

/* The first error wins: a caller's earlier error is kept. */
static void test_first_error_wins(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    ps_error_set(&err, PS_EIO, "earlier");
    struct ps_scenario *sc;
    assert_int_equal(ps_scenario_parse("[]", 2, &sc, &err), PS_EINVAL);
    assert_string_equal(err.msg, "earlier");
    assert_null(sc);
    /* and err may be NULL */
    assert_int_equal(ps_scenario_parse("{", 1, &sc, NULL), PS_EINVAL);
}

/* Text need not be NUL-terminated: only len bytes are read. */
static void test_length_bounded(void **state)
{
    (void)state;
    const char *text = q("{'node_groups': [], 'pool_trees': {'t': {}}}garbage");
    struct ps_scenario *sc;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_scenario_parse(text, strlen(text) - 7, &sc, &err), 0);
    ps_scenario_free(sc);
}

static void test_format_roundtrip(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *doc = json_loads(q("{'heartbeat_period': 5000, 'node_groups': [{'count': 1,"
                               " 'resource_limits': {'cpu': 0.46}}], 'pool_trees': {'t': {}},"
                               " 'operations': [{'id': 'a', 'start_time': 0, 'tasks': [{'job_count': 1,"
                               " 'duration': 5, 'resources': {'cpu': 12.34}}]}, {'id': 'b',"
                               " 'start_time': 1, 'tasks': [{'job_count': 1, 'duration': 5,"
                               " 'resources': {'cpu': 0.1}}]}]}"),
                             0, &jerr);
    assert_non_null(doc);
    char *text = ps_scenario_format(doc);
    assert_non_null(text);
    const char *expected =
        "{\n"
        "  \"heartbeat_period\": 5000,\n"
        "  \"node_groups\": [\n"
        "    {\"count\": 1, \"resource_limits\": {\"cpu\": 0.46}}\n"
        "  ],\n"
        "  \"pool_trees\": {\n"
        "    \"t\": {}\n"
        "  },\n"
        "  \"operations\": [\n"
        "    {\"id\": \"a\", \"start_time\": 0, \"tasks\": [{\"job_count\": 1, \"duration\": 5, "
        "\"resources\": {\"cpu\": 12.34}}]},\n"
        "    {\"id\": \"b\", \"start_time\": 1, \"tasks\": [{\"job_count\": 1, \"duration\": 5, "
        "\"resources\": {\"cpu\": 0.1}}]}\n"
        "  ]\n"
        "}\n";
    assert_string_equal(text, expected);
    struct ps_scenario *sc;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_scenario_parse(text, strlen(text), &sc, &err), 0);
    assert_int_equal(sc->operations[1].tasks[0].resources.v[PS_RES_CPU], 10);
    ps_scenario_free(sc);
    free(text);

    json_object_set_new(doc, "operations", json_array());
    text = ps_scenario_format(doc);
    assert_non_null(strstr(text, "  \"operations\": []\n}\n"));
    free(text);
    json_decref(doc);
    doc = json_object();
    text = ps_scenario_format(doc);
    assert_string_equal(text, "{}\n");
    free(text);
    json_decref(doc);
}

/* The fuzz seed with every feature of formats.md section 3 parses, so the fuzzer starts from a
 * valid document. */
static void test_seed_scenario_parses(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/fuzz/corpus/scenario/good.json", PS_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    struct ps_scenario *sc;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_scenario_parse(buf, n, &sc, &err) != 0)
        fail_msg("%s: %s", path, err.msg);
    ps_scenario_free(sc);
}

/* max_memory_spread: the seed and the spread parse; each job's peak is a pure function of
 * (seed, operation id, task name, index, attempt), lognormal around max_memory. */
static void test_job_max_memory(void **state)
{
    (void)state;
    struct ps_scenario *sc;
    struct ps_error err;
    assert_int_equal(parse("{'seed': 42, " NODES ", " TREES ", " OP(TASK ", 'name': 'm',"
                           " 'max_memory': 1000000000, 'max_memory_spread': 0.2}") "}",
                           &sc, &err), 0);
    assert_true(sc->seed == 42);
    const struct ps_scenario_task *t = &sc->operations[0].tasks[0];
    assert_true(t->max_memory_spread == 0.2);

    /* deterministic; any input changes the draw */
    int64_t a = ps_scenario_job_max_memory(42, "x", t, 7, 0);
    assert_int_equal(a, ps_scenario_job_max_memory(42, "x", t, 7, 0));
    assert_int_not_equal(a, ps_scenario_job_max_memory(43, "x", t, 7, 0));
    assert_int_not_equal(a, ps_scenario_job_max_memory(42, "y", t, 7, 0));
    assert_int_not_equal(a, ps_scenario_job_max_memory(42, "x", t, 8, 0));
    assert_int_not_equal(a, ps_scenario_job_max_memory(42, "x", t, 7, 1));
    struct ps_scenario_task other = *t;
    other.name = "n";
    assert_int_not_equal(a, ps_scenario_job_max_memory(42, "x", &other, 7, 0));

    /* the distribution: log(peak / max_memory) has mean ~0 and sd ~0.2 over 20000 jobs
     * (standard errors 0.0014 and 0.001), and 5% of the jobs lie above exp(1.645 x 0.2) */
    const int n = 20000;
    double sum = 0, sum2 = 0;
    int above = 0;
    for (int i = 0; i < n; i++) {
        int64_t p = ps_scenario_job_max_memory(42, "x", t, i, 0);
        assert_true(p > 0);
        double l = log((double)p / 1e9);
        sum += l;
        sum2 += l * l;
        above += l > 1.645 * 0.2;
    }
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    assert_true(fabs(mean) < 0.006);
    assert_true(fabs(sd - 0.2) < 0.005);
    assert_true(above > n * 0.045 && above < n * 0.055);

    /* spread 0 (the default) and max_memory 0: exactly max_memory */
    other.max_memory_spread = 0;
    assert_int_equal(ps_scenario_job_max_memory(42, "x", &other, 7, 0), 1000000000);
    other.max_memory_spread = 1;
    other.max_memory_bytes = 0;
    assert_int_equal(ps_scenario_job_max_memory(42, "x", &other, 7, 0), 0);
    ps_scenario_free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_scenario),
        cmocka_unit_test(test_minimal_scenario_defaults),
        cmocka_unit_test(test_integral_reals),
        cmocka_unit_test(test_bad_scenarios),
        cmocka_unit_test(test_events_parsed),
        cmocka_unit_test(test_bad_events),
        cmocka_unit_test(test_first_error_wins),
        cmocka_unit_test(test_length_bounded),
        cmocka_unit_test(test_format_roundtrip),
        cmocka_unit_test(test_seed_scenario_parses),
        cmocka_unit_test(test_job_max_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
