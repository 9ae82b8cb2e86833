#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/alibaba.h"
#include "io/scenario.h"

#define NODE_HEADER "sn,cpu_milli,memory_mib,gpu,model\n"
#define POD_HEADER                                                                              \
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"          \
    "deletion_time,scheduled_time\n"

/* Two GPU node shapes and a CPU-only one. */
static const char *nodes_csv = NODE_HEADER
    "n0,32000,131072,4,V100M16\n"
    "n1,32000,131072,4,V100M16\n"
    "n2,96000,393216,8,G2\n"
    "n3,64000,262144,0,\n";

static const struct ps_alibaba_options defaults = {.limit = 0, .start_offset_s = 0, .time_scale = 1.0, .compress = 1.0};

struct result {
    json_t *doc;
    struct ps_alibaba_stats stats;
    struct ps_scenario *sc;   /* the document parsed back: importer output must be valid */
};

static void convert(const char *nodes, const char *pods, const struct ps_alibaba_options *opt,
                    struct result *r)
{
    struct ps_alibaba_trace t = {0};
    struct ps_error err;
    ps_error_init(&err);
    if (ps_alibaba_read_nodes(&t, nodes, strlen(nodes), "nodes.csv", &err) != 0 ||
        ps_alibaba_read_pods(&t, pods, strlen(pods), "pods.csv", &err) != 0 ||
        ps_alibaba_to_scenario(&t, opt, &r->doc, &r->stats, &err) != 0)
        fail_msg("conversion failed: %s", err.msg);
    ps_alibaba_trace_release(&t);
    char *text = ps_scenario_format(r->doc);
    assert_non_null(text);
    if (ps_scenario_parse(text, strlen(text), &r->sc, &err) != 0)
        fail_msg("output does not parse: %s\n%s", err.msg, text);
    free(text);
}

static void result_release(struct result *r)
{
    json_decref(r->doc);
    ps_scenario_free(r->sc);
}

static const struct ps_scenario_operation *find_op(const struct result *r, const char *id)
{
    for (size_t i = 0; i < r->sc->operation_count; i++)
        if (strcmp(r->sc->operations[i].id, id) == 0)
            return &r->sc->operations[i];
    return NULL;
}

static void test_nodes_become_groups(void **state)
{
    (void)state;
    struct result r;
    const char *nodes = NODE_HEADER
        "a,32000,131072,4,V100M16\n"
        "b,8000,61440,0,\n"
        "c,32000,131072,4,V100M16\n"
        "d,3150,1000,2,\n";   /* empty model but GPUs; fractional cores; memory not in GiB */
    convert(nodes, POD_HEADER, &defaults, &r);
    assert_int_equal(r.stats.nodes, 4);
    assert_int_equal(r.stats.node_groups, 3);
    assert_int_equal(r.stats.rule[PS_ALIBABA_CPU_ONLY_NODE], 1);
    assert_int_equal(r.stats.rule[PS_ALIBABA_UNKNOWN_GPU_NODE], 1);
    assert_int_equal(r.sc->node_count, 4);
    /* sorted by (tag, cpu, memory, gpu) */
    const struct ps_scenario_node_group *g = r.sc->node_groups;
    assert_string_equal(g[0].name, "V100M16_c32_m128G_g4");
    assert_int_equal(g[0].count, 2);
    assert_string_equal(g[0].tags[0], "V100M16");
    assert_int_equal(g[0].resource_limits.v[PS_RES_CPU], 3200);
    assert_int_equal(g[0].resource_limits.v[PS_RES_MEMORY], 131072LL * 1024 * 1024);
    assert_int_equal(g[0].resource_limits.v[PS_RES_GPU], 4);
    assert_int_equal(g[0].resource_limits.v[PS_RES_USER_SLOTS], PS_ALIBABA_NODE_USER_SLOTS);
    assert_int_equal(g[0].resource_limits.v[PS_RES_NETWORK], PS_RES_INFINITE);
    assert_string_equal(g[1].name, "cpu_only_c8_m60G_g0");
    assert_string_equal(g[1].tags[0], "cpu_only");
    assert_int_equal(g[1].resource_limits.v[PS_RES_GPU], 0);   /* explicit 0, not unlimited */
    assert_string_equal(g[2].name, "unknown_gpu_c3.15_m1000M_g2");
    assert_int_equal(g[2].resource_limits.v[PS_RES_CPU], 315);
    assert_int_equal(r.sc->operation_count, 0);
    assert_string_equal(r.sc->default_tree, "physical");
    assert_int_equal(r.sc->duration_ms, 0);   /* no operations: no duration */
    result_release(&r);
}

static void test_pools_and_guarantees(void **state)
{
    (void)state;
    struct result r;
    convert(nodes_csv, POD_HEADER, &defaults, &r);
    const struct ps_scenario_tree *t = ps_scenario_find_tree(r.sc, "physical");
    assert_non_null(t);
    assert_int_equal(t->pool_count, 4);
    assert_string_equal(t->pools[0].name, "ls");
    assert_string_equal(t->pools[3].name, "be");
    assert_int_equal(json_integer_value(json_object_get(t->pools[0].attributes, "weight")), 4);
    /* 40% of 224 cores, 896 GiB, 16 GPUs */
    json_t *g = json_object_get(t->pools[0].attributes, "strong_guarantee_resources");
    assert_true(json_number_value(json_object_get(g, "cpu")) == 89.6);
    assert_int_equal(json_integer_value(json_object_get(g, "memory")), 917504LL * 1024 * 1024 * 40 / 100);
    assert_int_equal(json_integer_value(json_object_get(g, "gpu")), 6);
    assert_null(json_object_get(t->pools[3].attributes, "strong_guarantee_resources"));
    result_release(&r);
}

static void test_pod_fields(void **state)
{
    (void)state;
    struct result r;
    const char *pods = POD_HEADER
        "p0,12000,16384,1,1000,,LS,Running,100,700,100\n"
        "p1,3150,5600,2,1000,V100M16|V100M32,Burstable,Running,160,200,170\n"
        "p2,1005,1,0,0,,BE,Succeeded,130,150,140\n"
        "p3,500,100,0,0,,Guaranteed,Running,130,131,130\n";
    convert(nodes_csv, pods, &defaults, &r);
    assert_int_equal(r.stats.operations, 4);
    /* by creation time, ties in file order */
    assert_string_equal(r.sc->operations[0].id, "p0");
    assert_string_equal(r.sc->operations[1].id, "p2");
    assert_string_equal(r.sc->operations[2].id, "p3");
    assert_string_equal(r.sc->operations[3].id, "p1");
    const struct ps_scenario_operation *op = find_op(&r, "p0");
    assert_int_equal(op->start_time_ms, 0);
    assert_string_equal(op->user, PS_ALIBABA_USER);
    assert_string_equal(op->pool, "ls");
    assert_int_equal(op->task_count, 1);
    assert_int_equal(op->tasks[0].job_count, 1);
    assert_int_equal(op->tasks[0].duration_ms, 600000);
    assert_int_equal(op->tasks[0].resources.v[PS_RES_CPU], 1200);
    assert_int_equal(op->tasks[0].resources.v[PS_RES_MEMORY], 16384LL << 20);
    assert_int_equal(op->tasks[0].resources.v[PS_RES_GPU], 1);
    assert_int_equal(op->tasks[0].resources.v[PS_RES_USER_SLOTS], 1);
    assert_int_equal(op->tasks[0].memory_limit_bytes, 16384LL << 20);
    assert_null(json_object_get(op->spec, "scheduling_tag_filter"));
    op = find_op(&r, "p1");
    assert_int_equal(op->start_time_ms, 60000);
    assert_int_equal(op->tasks[0].duration_ms, 30000);
    assert_string_equal(op->pool, "burstable");
    assert_int_equal(op->tasks[0].resources.v[PS_RES_CPU], 315);
    assert_int_equal(op->tasks[0].resources.v[PS_RES_GPU], 2);
    assert_string_equal(json_string_value(json_object_get(op->spec, "scheduling_tag_filter")),
                        "V100M16|V100M32");
    assert_int_equal(r.stats.rule[PS_ALIBABA_GPU_SPEC_FILTER], 1);
    op = find_op(&r, "p2");
    assert_string_equal(op->pool, "be");
    assert_int_equal(op->tasks[0].resources.v[PS_RES_CPU], 101);   /* 1.005 cores: half up */
    assert_int_equal(op->tasks[0].resources.v[PS_RES_GPU], 0);
    assert_string_equal(find_op(&r, "p3")->pool, "guaranteed");
    assert_int_equal(r.sc->duration_ms, 600000);   /* the latest end: p0 at 0 + 600 s */
    assert_int_equal(r.stats.rule[PS_ALIBABA_FRACTIONAL_GPU], 0);
    result_release(&r);
}

/* Pods that never ran get the lower median of the run times of the pods that did. */
static void test_never_scheduled_and_deleted_before_scheduled(void **state)
{
    (void)state;
    struct result r;
    const char *pods = POD_HEADER
        "ran1,1000,1024,0,0,,BE,Running,0,10,0\n"        /* 10 s */
        "ran2,1000,1024,0,0,,BE,Running,0,50,10\n"       /* 40 s */
        "ran3,1000,1024,0,0,,BE,Running,0,100,0\n"       /* 100 s */
        "ran4,1000,1024,0,0,,BE,Running,0,1000,0\n"      /* 1000 s */
        "pending,1000,1024,0,0,,BE,Pending,20,30,\n"
        "pending_forever,1000,1024,0,0,,BE,Pending,20,,\n"
        "deleted_early,1000,1024,0,0,,LS,Failed,5,8,9\n";
    convert(nodes_csv, pods, &defaults, &r);
    assert_int_equal(r.stats.median_run_s, 40);
    assert_int_equal(r.stats.rule[PS_ALIBABA_NEVER_SCHEDULED], 2);
    assert_int_equal(r.stats.rule[PS_ALIBABA_DELETED_BEFORE_SCHEDULED], 1);
    assert_int_equal(r.stats.rule[PS_ALIBABA_STILL_RUNNING], 0);   /* not for pods never run */
    assert_int_equal(r.stats.operations, 7);
    assert_int_equal(find_op(&r, "pending")->tasks[0].duration_ms, 40000);
    assert_int_equal(find_op(&r, "pending")->start_time_ms, 20000);
    assert_int_equal(find_op(&r, "pending_forever")->tasks[0].duration_ms, 40000);
    assert_int_equal(find_op(&r, "deleted_early")->tasks[0].duration_ms, 40000);
    assert_int_equal(find_op(&r, "deleted_early")->start_time_ms, 5000);
    result_release(&r);
}

static void test_still_running_zero_length_and_clock_skew(void **state)
{
    (void)state;
    struct result r;
    const char *pods = POD_HEADER
        "no_deletion,1000,1024,0,0,,LS,Running,100,,150\n"     /* runs until the end: 1000 */
        "zero_deletion,1000,1024,0,0,,LS,Running,100,0,200\n"  /* 0 means not deleted either */
        "instant,1000,1024,0,0,,LS,Running,300,400,400\n"      /* 0 s -> 1 s */
        "skewed,1000,1024,0,0,,LS,Running,500,1000,490\n";     /* scheduled before created */
    convert(nodes_csv, pods, &defaults, &r);
    assert_int_equal(r.stats.trace_end_s, 1000);
    assert_int_equal(r.stats.rule[PS_ALIBABA_STILL_RUNNING], 2);
    assert_int_equal(r.stats.rule[PS_ALIBABA_ZERO_LENGTH_RUN], 1);
    assert_int_equal(r.stats.rule[PS_ALIBABA_SCHEDULED_BEFORE_CREATION], 1);
    assert_int_equal(find_op(&r, "no_deletion")->tasks[0].duration_ms, 850000);
    assert_int_equal(find_op(&r, "zero_deletion")->tasks[0].duration_ms, 800000);
    assert_int_equal(find_op(&r, "instant")->tasks[0].duration_ms, 1000);
    assert_int_equal(find_op(&r, "skewed")->start_time_ms, 400000);
    assert_int_equal(find_op(&r, "skewed")->tasks[0].duration_ms, 510000);
    result_release(&r);
}

static void test_fractional_gpu_rounds_up(void **state)
{
    (void)state;
    struct result r;
    const char *pods = POD_HEADER
        "share,1000,1024,1,460,,BE,Running,0,10,0\n"
        "milli_only,1000,1024,0,500,,BE,Running,0,10,0\n"
        "two_partial,1000,1024,2,300,,BE,Running,0,10,0\n"
        "cpu,1000,1024,0,0,,BE,Running,0,10,0\n"
        "whole,1000,1024,4,1000,,BE,Running,0,10,0\n";
    convert(nodes_csv, pods, &defaults, &r);
    assert_int_equal(r.stats.rule[PS_ALIBABA_FRACTIONAL_GPU], 3);
    assert_int_equal(find_op(&r, "share")->tasks[0].resources.v[PS_RES_GPU], 1);
    assert_int_equal(find_op(&r, "milli_only")->tasks[0].resources.v[PS_RES_GPU], 1);
    assert_int_equal(find_op(&r, "two_partial")->tasks[0].resources.v[PS_RES_GPU], 2);
    assert_int_equal(find_op(&r, "cpu")->tasks[0].resources.v[PS_RES_GPU], 0);
    assert_int_equal(find_op(&r, "whole")->tasks[0].resources.v[PS_RES_GPU], 4);
    result_release(&r);
}

/* A pod no node can hold could never run: skipped. The check is per node, not per resource. */
static void test_pods_that_fit_no_node_are_skipped(void **state)
{
    (void)state;
    struct result r;
    const char *pods = POD_HEADER
        "too_many_gpus,1000,1024,16,1000,,BE,Running,0,10,0\n"
        "too_much_cpu,200000,1024,0,0,,BE,Running,0,10,0\n"
        /* each resource fits some node, but no single node has all three */
        "no_single_node,64000,300000,8,1000,,BE,Running,0,10,0\n"
        /* fits a G2 node, but its filter allows V100M16 nodes (4 GPUs) only */
        "filtered_out,1000,1024,8,1000,V100M16,BE,Running,0,10,0\n"
        "filter_names_no_node,1000,1024,1,1000,A100,BE,Running,0,10,0\n"
        "fits,96000,131072,8,1000,G2|T4,BE,Running,0,10,0\n";
    const char *nodes = NODE_HEADER
        "v,32000,131072,4,V100M16\n"
        "g,96000,131072,8,G2\n"
        "c,64000,524288,0,\n";
    convert(nodes, pods, &defaults, &r);
    assert_int_equal(r.stats.rule[PS_ALIBABA_NO_NODE_FITS], 3);
    assert_int_equal(r.stats.rule[PS_ALIBABA_NO_MATCHING_NODE_FITS], 2);
    assert_int_equal(r.stats.pods_selected, 6);
    assert_int_equal(r.stats.operations, 1);
    assert_int_equal(r.sc->operation_count, 1);
    assert_non_null(find_op(&r, "fits"));
    result_release(&r);
}

static void test_slicing_and_time_scale(void **state)
{
    (void)state;
    const char *pods = POD_HEADER
        "c,1000,1024,0,0,,BE,Running,300,400,300\n"
        "a,1000,1024,0,0,,BE,Running,100,200,100\n"
        "b,1000,1024,0,0,,BE,Running,200,201,200\n"
        "d,1000,1024,0,0,,BE,Running,400,500,400\n";
    struct result r;
    struct ps_alibaba_options opt = {.limit = 2, .start_offset_s = 100, .time_scale = 1.0, .compress = 1.0};
    convert(nodes_csv, pods, &opt, &r);
    assert_int_equal(r.stats.rule[PS_ALIBABA_BEFORE_START_OFFSET], 1);   /* a */
    assert_int_equal(r.stats.rule[PS_ALIBABA_BEYOND_LIMIT], 1);          /* d */
    assert_int_equal(r.stats.pods_selected, 2);
    assert_int_equal(r.sc->operation_count, 2);
    assert_string_equal(r.sc->operations[0].id, "b");
    assert_int_equal(r.sc->operations[0].start_time_ms, 0);   /* the offset is the new origin */
    assert_string_equal(r.sc->operations[1].id, "c");
    assert_int_equal(r.sc->operations[1].start_time_ms, 100000);
    result_release(&r);

    opt = (struct ps_alibaba_options){.limit = 0, .start_offset_s = 0, .time_scale = 0.001, .compress = 1.0};
    convert(nodes_csv, pods, &opt, &r);
    assert_int_equal(find_op(&r, "c")->start_time_ms, 200);
    assert_int_equal(find_op(&r, "c")->tasks[0].duration_ms, 100);
    assert_int_equal(find_op(&r, "b")->tasks[0].duration_ms, 1);
    assert_int_equal(r.stats.rule[PS_ALIBABA_SCALED_TO_ZERO], 0);
    result_release(&r);

    opt.time_scale = 0.0001;   /* 1 s becomes 0.1 ms */
    convert(nodes_csv, pods, &opt, &r);
    assert_int_equal(r.stats.rule[PS_ALIBABA_SCALED_TO_ZERO], 1);
    assert_int_equal(find_op(&r, "b")->tasks[0].duration_ms, 1);
    result_release(&r);
}

/* --compress divides start times only: run times and the order stay, and it composes with
 * --time-scale (start = offset s x 1000 x K / C, rounded to the ms). */
static void test_compress_keeps_run_times(void **state)
{
    (void)state;
    const char *pods = POD_HEADER
        "c,1000,1024,0,0,,BE,Running,300,400,300\n"
        "a,1000,1024,0,0,,BE,Running,100,200,100\n"
        "b,1000,1024,0,0,,BE,Running,200,201,200\n"
        "d,1000,1024,0,0,,BE,Running,401,500,401\n";
    struct result r;
    struct ps_alibaba_options opt = {.time_scale = 1.0, .compress = 100.0};
    convert(nodes_csv, pods, &opt, &r);
    assert_string_equal(r.sc->operations[0].id, "a");
    assert_int_equal(find_op(&r, "a")->start_time_ms, 0);
    assert_int_equal(find_op(&r, "b")->start_time_ms, 1000);    /* 100 s / 100 */
    assert_int_equal(find_op(&r, "c")->start_time_ms, 2000);
    assert_int_equal(find_op(&r, "d")->start_time_ms, 3010);
    assert_int_equal(find_op(&r, "a")->tasks[0].duration_ms, 100000);   /* kept */
    assert_int_equal(find_op(&r, "b")->tasks[0].duration_ms, 1000);
    assert_int_equal(find_op(&r, "d")->tasks[0].duration_ms, 99000);
    /* the scenario lasts until the last run ends: 3010 + 99000 */
    assert_int_equal(r.sc->duration_ms, 102010);
    result_release(&r);

    opt = (struct ps_alibaba_options){.start_offset_s = 100, .time_scale = 0.5, .compress = 3.0};
    convert(nodes_csv, pods, &opt, &r);
    assert_int_equal(find_op(&r, "b")->start_time_ms, 0);
    assert_int_equal(find_op(&r, "c")->start_time_ms, 16667);   /* 100 s x 0.5 / 3, rounded */
    assert_int_equal(find_op(&r, "d")->start_time_ms, 33500);
    assert_int_equal(find_op(&r, "c")->tasks[0].duration_ms, 50000);   /* only x 0.5 */
    result_release(&r);
}

static void test_deterministic_output(void **state)
{
    (void)state;
    const char *pods = POD_HEADER
        "x,1000,1024,1,300,,BE,Running,5,400,5\n"
        "y,2500,2048,0,0,,LS,Pending,5,9,\n"
        "z,1000,1024,1,1000,G2|V100M16,Burstable,Running,1,2,1\n";
    struct result a, b;
    convert(nodes_csv, pods, &defaults, &a);
    convert(nodes_csv, pods, &defaults, &b);
    char *ta = ps_scenario_format(a.doc), *tb = ps_scenario_format(b.doc);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
    result_release(&a);
    result_release(&b);
}

struct bad_file {
    bool pods;            /* the pod list is bad (else the node list) */
    const char *csv;
    const char *message;
};

static const struct bad_file bad_files[] = {
    {false, "", "nodes.csv: empty file, expected a header line"},
    {false, "sn,cpu_milli,memory_mib,gpu\nn0,1,1,1\n",
     "nodes.csv: missing column \"model\" in the header (columns: sn,cpu_milli,memory_mib,gpu)"},
    {false, "sn,cpu_milli,cpu_milli,gpu,model\n", "nodes.csv:1: column \"cpu_milli\" appears twice"},
    {false, NODE_HEADER "n0,1000,1024,0,\nn1,1000,1024,0\n",
     "nodes.csv:3: expected 5 fields as in the header, got 4"},
    {false, NODE_HEADER "n0,1000,1024,-1,\n",
     "nodes.csv:2: gpu: must be a non-negative integer, got \"-1\""},
    {false, NODE_HEADER "n0,12.5,1024,0,\n",
     "nodes.csv:2: cpu_milli: must be a non-negative integer, got \"12.5\""},
    {false, NODE_HEADER "n0,,1024,0,\n", "nodes.csv:2: cpu_milli: must not be empty, got \"\""},
    {false, NODE_HEADER ",1000,1024,0,\n", "nodes.csv:2: sn: must not be empty, got \"\""},
    {false, NODE_HEADER "n0,1000,99999999999,0,\n",
     "nodes.csv:2: memory_mib: must be at most 4294967296, got \"99999999999\""},
    {false, NODE_HEADER "n0,1000,1024,1,V100 32G\n",
     "nodes.csv:2: model: a GPU model must be usable as a node tag (letters, digits, - / . : _, "
     "starting with a letter), got \"V100 32G\""},
    {false, NODE_HEADER "n0,1000,1024,1,cpu_only\n",
     "nodes.csv:2: model: this name is reserved for nodes without a model, got \"cpu_only\""},
    {false, NODE_HEADER "n0,1000,1024,0,\nn1,1000,1024,0,\n\nn0,1,1,1,\n",
     "nodes.csv:5: sn: \"n0\" repeats line 2"},
    {false, NODE_HEADER "\"n0\",1000,1024,0,\n",
     "nodes.csv:2: quoted fields are not supported (a '\"' in the line)"},
    {true, POD_HEADER "p,1000,1024,1,1001,,LS,Running,0,1,0\n",
     "pods.csv:2: gpu_milli: must be at most 1000, got \"1001\""},
    {true, POD_HEADER "p,1000,1024,1,1000,,Gold,Running,0,1,0\n",
     "pods.csv:2: qos: unknown qos (expected LS, Guaranteed, Burstable or BE), got \"Gold\""},
    {true, POD_HEADER "p,1000,1024,1,1000,,,Running,0,1,0\n",
     "pods.csv:2: qos: must not be empty, got \"\""},
    {true, POD_HEADER "p,1000,1024,1,1000,,LS,Running,,1,0\n",
     "pods.csv:2: creation_time: must not be empty, got \"\""},
    {true, POD_HEADER "p,1000,1024,1,1000,,LS,Running,0,x,0\n",
     "pods.csv:2: deletion_time: must be a non-negative integer, got \"x\""},
    {true, POD_HEADER "p,1000,1024,1,1000,V100M16||T4,LS,Running,0,1,0\n",
     "pods.csv:2: gpu_spec: invalid formula \"V100M16||T4\": unexpected '|' at position 8, expected "
     "a tag, '!', '(' or a literal"},
    {true, POD_HEADER "p,1000,1024,1,1000,2080Ti,LS,Running,0,1,0\n",
     "pods.csv:2: gpu_spec: invalid formula \"2080Ti\": unexpected '2' (a tag must start with a "
     "letter or '_') at position 0, expected a tag, '!', '(' or a literal"},
    {true, POD_HEADER "p,1000,1024,1,1000,T4|,LS,Running,0,1,0\n",
     "pods.csv:2: gpu_spec: invalid formula \"T4|\": unexpected end at position 3, expected a tag, "
     "'!', '(' or a literal"},
    {true, POD_HEADER "p,1000,1024,1,1000,,LS,Running,0,1,0\r\nq,1,1,0,0,,BE,Running,0,1,0\r\n"
     "p,1,1,0,0,,BE,Running,0,1,0\r\n",
     "pods.csv:4: name: \"p\" repeats line 2"},
    {true, POD_HEADER "p\xc5,1000,1024,1,1000,,LS,Running,0,1,0\n",
     "pods.csv:2: the line is not valid UTF-8"},
    {true, POD_HEADER "p\xed\xa0\x80,1000,1024,1,1000,,LS,Running,0,1,0\n",   /* a surrogate */
     "pods.csv:2: the line is not valid UTF-8"},
    {true, "name,cpu_milli\n", "pods.csv: missing column \"memory_mib\" in the header (columns: "
     "name,cpu_milli)"},
};

static void test_malformed_files_are_errors(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        const struct bad_file *b = &bad_files[i];
        struct ps_alibaba_trace t = {0};
        struct ps_error err;
        ps_error_init(&err);
        int rc = b->pods ? ps_alibaba_read_pods(&t, b->csv, strlen(b->csv), "pods.csv", &err)
                         : ps_alibaba_read_nodes(&t, b->csv, strlen(b->csv), "nodes.csv", &err);
        if (rc != PS_EINVAL || strcmp(err.msg, b->message) != 0) {
            print_error("case %zu: rc %d\n  got:  %s\n  want: %s\n", i, rc, err.msg, b->message);
            failures++;
        }
        assert_int_equal(t.node_count + t.pod_count, 0);   /* nothing half-read */
        ps_alibaba_trace_release(&t);
    }
    assert_int_equal(failures, 0);
}

/* Extra columns are ignored and columns may come in any order. */
static void test_columns_by_name(void **state)
{
    (void)state;
    /* UTF-8 names are fine */
    const char *pods = POD_HEADER "p\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80,1000,1024,0,0,,BE,Running,0,1,0\n";
    struct result r;
    convert(nodes_csv, pods, &defaults, &r);
    assert_string_equal(r.sc->operations[0].id, "p\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    result_release(&r);
    const char *nodes = "model,gpu,extra,memory_mib,cpu_milli,sn\nG2,8,zzz,393216,96000,n0\n";
    struct ps_alibaba_trace t = {0};
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_alibaba_read_nodes(&t, nodes, strlen(nodes), "n.csv", &err), 0);
    assert_int_equal(t.node_count, 1);
    assert_string_equal(t.nodes[0].sn, "n0");
    assert_string_equal(t.nodes[0].model, "G2");
    assert_int_equal(t.nodes[0].cpu_milli, 96000);
    assert_int_equal(t.nodes[0].gpu, 8);
    ps_alibaba_trace_release(&t);
}

static void test_bad_options(void **state)
{
    (void)state;
    struct ps_alibaba_trace t = {0};
    struct ps_error err;
    json_t *doc;
    struct ps_alibaba_stats stats;
    ps_error_init(&err);
    assert_int_equal(ps_alibaba_read_nodes(&t, nodes_csv, strlen(nodes_csv), "n.csv", &err), 0);
    struct ps_alibaba_options opt = {.time_scale = 0, .compress = 1};
    assert_int_equal(ps_alibaba_to_scenario(&t, &opt, &doc, &stats, &err), PS_EINVAL);
    assert_string_equal(err.msg, "--time-scale: must be in (0, 1000], got 0");
    assert_null(doc);
    ps_error_init(&err);
    opt = (struct ps_alibaba_options){.time_scale = 1, .compress = 0.5};
    assert_int_equal(ps_alibaba_to_scenario(&t, &opt, &doc, &stats, &err), PS_EINVAL);
    assert_string_equal(err.msg, "--compress: must be in [1, 1e+06], got 0.5");
    assert_null(doc);
    ps_error_init(&err);
    opt = (struct ps_alibaba_options){.limit = -1, .time_scale = 1, .compress = 1};
    assert_int_equal(ps_alibaba_to_scenario(&t, &opt, &doc, &stats, &err), PS_EINVAL);
    ps_alibaba_trace_release(&t);
    ps_error_init(&err);
    opt.limit = 0;
    assert_int_equal(ps_alibaba_to_scenario(&t, &opt, &doc, &stats, &err), PS_EINVAL);
    assert_string_equal(err.msg, "the node list has no nodes");
}

/* gpu_spec is a full tag formula (core/formula.h), evaluated against each node group's tag. */
static void test_gpu_spec_is_a_formula(void **state)
{
    (void)state;
    struct result r;
    const char *pods = POD_HEADER
        "not_g2,1000,1024,4,1000,!G2 & !cpu_only,BE,Running,0,10,0\n"
        "eight,1000,1024,8,1000,!V100M16,BE,Running,0,10,0\n"
        "repeated,1000,1024,1,1000,V100M16|V100M32|V100M32,BE,Running,0,10,0\n"
        "never,1000,1024,0,0,%false,BE,Running,0,10,0\n"
        "cpu,1000,1024,0,0,(cpu_only),BE,Running,0,10,0\n";
    convert(nodes_csv, pods, &defaults, &r);
    assert_int_equal(r.stats.rule[PS_ALIBABA_GPU_SPEC_FILTER], 4);
    assert_int_equal(r.stats.rule[PS_ALIBABA_NO_MATCHING_NODE_FITS], 1);
    assert_null(find_op(&r, "never"));
    assert_string_equal(json_string_value(json_object_get(find_op(&r, "not_g2")->spec,
                                                          "scheduling_tag_filter")),
                        "!G2 & !cpu_only");
    assert_non_null(find_op(&r, "eight"));
    assert_non_null(find_op(&r, "repeated"));
    assert_non_null(find_op(&r, "cpu"));
    result_release(&r);

    /* YTsaurus allows at most 100 tokens in a scheduling_tag_filter: 50 tags and 49 '|' pass,
     * 51 and 50 do not */
    for (int tags = 50; tags <= 51; tags++) {
        char csv[1024] = POD_HEADER "p,1000,1024,0,0,";
        for (int i = 0; i < tags; i++)
            strcat(csv, i ? "|G2" : "G2");
        strcat(csv, ",BE,Running,0,1,0\n");
        struct ps_alibaba_trace t = {0};
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_alibaba_read_pods(&t, csv, strlen(csv), "pods.csv", &err);
        if (tags == 50) {
            assert_int_equal(rc, 0);
        } else {
            assert_int_equal(rc, PS_EINVAL);
            const char *want = "pods.csv:2: gpu_spec: a scheduling_tag_filter may have at most 100 "
                               "tags and operators, got \"G2|G2|";
            assert_memory_equal(err.msg, want, strlen(want));
        }
        ps_alibaba_trace_release(&t);
    }

    /* a pod that needs 8 GPUs but allows only the 4-GPU model is skipped */
    pods = POD_HEADER "big,1000,1024,8,1000,V100M16,BE,Running,0,10,0\n";
    convert(nodes_csv, pods, &defaults, &r);
    assert_int_equal(r.stats.rule[PS_ALIBABA_NO_MATCHING_NODE_FITS], 1);
    assert_int_equal(r.stats.operations, 0);
    result_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes_become_groups),
        cmocka_unit_test(test_pools_and_guarantees),
        cmocka_unit_test(test_pod_fields),
        cmocka_unit_test(test_never_scheduled_and_deleted_before_scheduled),
        cmocka_unit_test(test_still_running_zero_length_and_clock_skew),
        cmocka_unit_test(test_fractional_gpu_rounds_up),
        cmocka_unit_test(test_pods_that_fit_no_node_are_skipped),
        cmocka_unit_test(test_slicing_and_time_scale),
        cmocka_unit_test(test_compress_keeps_run_times),
        cmocka_unit_test(test_deterministic_output),
        cmocka_unit_test(test_malformed_files_are_errors),
        cmocka_unit_test(test_columns_by_name),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_gpu_spec_is_a_formula),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
