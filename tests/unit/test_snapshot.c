/* Tests of src/io/snapshot: good snapshots map to the right element fields (order, defaults,
 * nodes and tag filters), and every class of bad input gives PS_EINVAL with a one-line message
 * naming the key and the reason. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fair_share.h"
#include "io/snapshot.h"

static struct ps_snapshot *must_parse(const char *json)
{
    struct ps_snapshot *snap = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_snapshot_parse(json, strlen(json), &snap, &err);
    if (rc != 0)
        fail_msg("snapshot did not parse: %s\n%s", err.msg, json);
    assert_non_null(snap);
    return snap;
}

static int find(const struct ps_snapshot *snap, const char *name, enum ps_element_kind kind)
{
    for (int i = 0; i < snap->count; i++)
        if (snap->elems[i].in.kind == kind && strcmp(snap->elems[i].in.name, name) == 0)
            return i;
    fail_msg("no element %s", name);
    return -1;
}

#define CPU(x) ((int64_t)((x) * PS_CPU_SCALE))

/* ---- good input ------------------------------------------------------------------------- */

static void test_order_is_topological_with_list_order_among_siblings(void **state)
{
    (void)state;
    /* Children listed before parents; siblings must keep their list order. */
    struct ps_snapshot *snap = must_parse(
        "{\"total_resources\": {\"cpu\": 10},"
        " \"pools\": [{\"name\": \"c\", \"parent\": \"b\"}, {\"name\": \"z\"},"
        "             {\"name\": \"b\", \"parent\": \"a\"}, {\"name\": \"a\"},"
        "             {\"name\": \"b2\", \"parent\": \"a\"}, {\"name\": \"c0\", \"parent\": \"b\"},"
        "             {\"name\": \"top\", \"parent\": \"<Root>\"}],"
        " \"operations\": [{\"id\": \"o1\", \"pool\": \"b\"}, {\"id\": \"o0\", \"pool\": \"z\"}]}");
    static const char *const order[] = {"<Root>", "z", "a", "b", "c", "c0", "b2", "top",
                                        "o1", "o0"};
    assert_int_equal(snap->count, 10);
    assert_int_equal(snap->pool_count, 8);
    for (int i = 0; i < snap->count; i++) {
        assert_string_equal(snap->elems[i].in.name, order[i]);
        if (i > 0)
            assert_true(snap->elems[i].in.parent < i);
    }
    assert_int_equal(snap->elems[0].in.kind, PS_ELEM_ROOT);
    assert_int_equal(snap->elems[0].in.parent, -1);
    assert_int_equal(snap->elems[find(snap, "c", PS_ELEM_POOL)].in.parent,
                     find(snap, "b", PS_ELEM_POOL));
    assert_int_equal(snap->elems[find(snap, "top", PS_ELEM_POOL)].in.parent, 0);
    assert_int_equal(snap->elems[8].in.kind, PS_ELEM_OPERATION);
    assert_int_equal(snap->elems[8].in.parent, find(snap, "b", PS_ELEM_POOL));
    assert_int_equal(snap->elems[9].in.parent, find(snap, "z", PS_ELEM_POOL));
    /* source_index maps back to the lists. */
    assert_int_equal(snap->source_index[0], -1);
    assert_int_equal(snap->source_index[1], 1);   /* z */
    assert_int_equal(snap->source_index[4], 0);   /* c */
    assert_int_equal(snap->source_index[8], 0);   /* o1 */
    ps_snapshot_free(snap);
}

static void test_fields_map_to_the_engine_input(void **state)
{
    (void)state;
    struct ps_snapshot *snap = must_parse(
        "{\"total_resources\": {\"user_slots\": 100, \"cpu\": 11.17, \"memory\": 314572800.0,"
        "                      \"gpu\": 8, \"network\": 3},"
        " \"now\": 3600000, \"previous_update_time\": 3540000,"
        " \"tree\": {\"nodes_filter\": \"\", \"integral_guarantees\": {"
        "            \"relaxed_share_multiplier_limit\": 4, \"pool_capacity_saturation_period\": 1000,"
        "            \"smooth_period\": 2000},"
        "          \"enable_step_function_for_gang_operations\": false,"
        "          \"enable_improved_fair_share_by_fit_factor_computation\": true,"
        "          \"infer_weight_from_guarantees_share_multiplier\": 2, \"main_resource\": \"gpu\","
        "          \"should_distribute_free_volume_among_children\": true},"
        " \"pools\": [{\"name\": \"research\", \"mode\": \"fifo\", \"weight\": 2.5,"
        "    \"strong_guarantee_resources\": {\"cpu\": 10, \"memory\": 0},"
        "    \"resource_limits\": {\"cpu\": 50}, \"max_share_ratio\": 0.5,"
        "    \"fifo_sort_parameters\": [\"start_time\", \"pending_job_count\", \"weight\"],"
        "    \"integral_guarantees\": {\"guarantee_type\": \"burst\", \"resource_flow\": {\"cpu\": 10},"
        "       \"burst_guarantee_resources\": {\"cpu\": 20}, \"relaxed_share_multiplier_limit\": 5,"
        "       \"can_accept_free_volume\": false, \"should_distribute_free_volume_among_children\": true},"
        "    \"accumulated_resource_volume\": {\"cpu\": 600.5, \"user_slots\": 600},"
        "    \"last_integral_share_ratio\": 0.25},"
        "   {\"name\": \"old\", \"min_share_resources\": {\"user_slots\": 3},"
        "    \"integral_guarantees\": {\"guarantee_type\": \"relaxed\"}}],"
        " \"operations\": [{\"id\": \"op0\", \"pool\": \"research\", \"weight\": 3,"
        "    \"start_time\": 17, \"is_gang\": true, \"demand\": {\"cpu\": 10, \"user_slots\": 2},"
        "    \"usage\": {\"cpu\": 4.5}, \"resource_limits\": {\"cpu\": 8, \"memory\": 1024},"
        "    \"max_share_ratio\": 0.75, \"pending_job_count\": 12}]}");

    assert_int_equal(snap->input.total.v[PS_RES_USER_SLOTS], 100);
    assert_int_equal(snap->input.total.v[PS_RES_CPU], 1117);
    assert_int_equal(snap->input.total.v[PS_RES_MEMORY], 314572800);
    assert_int_equal(snap->input.total.v[PS_RES_GPU], 8);
    assert_int_equal(snap->input.total.v[PS_RES_NETWORK], 3);
    assert_int_equal(snap->input.now_ms, 3600000);
    assert_int_equal(snap->input.previous_update_time_ms, 3540000);
    assert_true(snap->input.has_previous_update);

    assert_true(snap->options.relaxed_share_multiplier_limit == 4.0);
    assert_int_equal(snap->options.integral_pool_capacity_saturation_period_ms, 1000);
    assert_int_equal(snap->options.integral_smooth_period_ms, 2000);
    assert_false(snap->options.enable_step_function_for_gang_operations);
    assert_true(snap->options.enable_improved_fair_share_by_fit_factor_computation);
    assert_true(snap->options.infer_weight_from_guarantees_share_multiplier == 2.0);
    assert_int_equal(snap->options.main_resource, PS_RES_GPU);
    assert_true(snap->options.should_distribute_free_volume_among_children);

    const struct ps_fs_element_input *p = &snap->elems[find(snap, "research", PS_ELEM_POOL)].in;
    const struct ps_fs_pool_input *pp = &snap->pools[p->pool].in;
    assert_int_equal(p->kind, PS_ELEM_POOL);
    assert_int_equal(pp->mode, PS_MODE_FIFO);
    assert_true(p->weight == 2.5);
    assert_true(p->weight_specified);
    assert_int_equal(pp->strong_guarantee.set, (1u << PS_RES_CPU) | (1u << PS_RES_MEMORY));
    assert_int_equal(pp->strong_guarantee.r.v[PS_RES_CPU], CPU(10));
    assert_int_equal(pp->strong_guarantee.r.v[PS_RES_MEMORY], 0);
    assert_int_equal(p->resource_limits.v[PS_RES_CPU], CPU(50));
    assert_int_equal(p->resource_limits.v[PS_RES_MEMORY], PS_RES_INFINITE);   /* omitted */
    assert_int_equal(p->resource_limits.v[PS_RES_USER_SLOTS], PS_RES_INFINITE);
    assert_true(p->max_share_ratio == 0.5);
    assert_int_equal(pp->fifo_sort_count, 3);
    assert_int_equal(pp->fifo_sort[0], PS_FIFO_START_TIME);
    assert_int_equal(pp->fifo_sort[1], PS_FIFO_PENDING_JOB_COUNT);
    assert_int_equal(pp->fifo_sort[2], PS_FIFO_WEIGHT);
    assert_int_equal(pp->guarantee_type, PS_GUARANTEE_BURST);
    assert_int_equal(pp->resource_flow.set, 1u << PS_RES_CPU);
    assert_int_equal(pp->resource_flow.r.v[PS_RES_CPU], CPU(10));
    assert_int_equal(pp->burst_guarantee.r.v[PS_RES_CPU], CPU(20));
    assert_true(pp->relaxed_share_multiplier_limit == 5.0);
    assert_false(pp->can_accept_free_volume);
    assert_int_equal(pp->should_distribute_free_volume_among_children, 1);
    assert_true(pp->accumulated_volume.v[PS_RES_CPU] == 600.5);
    assert_true(pp->accumulated_volume.v[PS_RES_USER_SLOTS] == 600.0);
    assert_true(pp->accumulated_volume.v[PS_RES_MEMORY] == 0.0);
    assert_true(pp->last_integral_share_ratio == 0.25);

    const struct ps_fs_element_input *old = &snap->elems[find(snap, "old", PS_ELEM_POOL)].in;
    const struct ps_fs_pool_input *oldp = &snap->pools[old->pool].in;
    assert_int_equal(oldp->strong_guarantee.set, 1u << PS_RES_USER_SLOTS);   /* the alias */
    assert_int_equal(oldp->strong_guarantee.r.v[PS_RES_USER_SLOTS], 3);
    assert_int_equal(oldp->guarantee_type, PS_GUARANTEE_RELAXED);
    assert_false(old->weight_specified);
    assert_true(old->weight == 1.0);
    assert_int_equal(oldp->mode, PS_MODE_FAIR_SHARE);
    assert_int_equal(oldp->fifo_sort_count, 2);   /* the pool config's default, the engine's order */
    assert_int_equal(oldp->fifo_sort[0], PS_FIFO_WEIGHT);
    assert_int_equal(oldp->fifo_sort[1], PS_FIFO_START_TIME);
    assert_true(oldp->can_accept_free_volume);                              /* default */
    assert_int_equal(oldp->should_distribute_free_volume_among_children, -1);   /* the tree's */

    const struct ps_fs_element_input *op = &snap->elems[find(snap, "op0", PS_ELEM_OPERATION)].in;
    assert_true(op->weight == 3.0);
    assert_true(op->weight_specified);
    assert_int_equal(op->start_time_ms, 17);
    assert_true(op->is_gang);
    assert_int_equal(op->demand.v[PS_RES_CPU], CPU(10));
    assert_int_equal(op->demand.v[PS_RES_USER_SLOTS], 2);
    assert_int_equal(op->demand.v[PS_RES_MEMORY], 0);   /* omitted amount: 0 */
    assert_int_equal(op->usage.v[PS_RES_CPU], 450);
    assert_int_equal(op->resource_limits.v[PS_RES_CPU], CPU(8));
    assert_int_equal(op->resource_limits.v[PS_RES_MEMORY], 1024);
    assert_int_equal(op->resource_limits.v[PS_RES_GPU], PS_RES_INFINITE);
    assert_true(op->max_share_ratio == 0.75);
    assert_int_equal(op->pending_job_count, 12);
    /* No nodes: no tag filter limits. */
    for (int r = 0; r < PS_RES_COUNT; r++)
        assert_int_equal(op->filter_limits.v[r], PS_RES_INFINITE);
    assert_int_equal(snap->note_count, 0);
    ps_snapshot_free(snap);
}

static void assert_options_equal(const struct ps_fs_options *a, const struct ps_fs_options *b)
{
    assert_int_equal(a->main_resource, b->main_resource);
    assert_int_equal(a->integral_pool_capacity_saturation_period_ms,
                     b->integral_pool_capacity_saturation_period_ms);
    assert_int_equal(a->integral_smooth_period_ms, b->integral_smooth_period_ms);
    assert_true(a->relaxed_share_multiplier_limit == b->relaxed_share_multiplier_limit);
    assert_int_equal(a->enable_step_function_for_gang_operations,
                     b->enable_step_function_for_gang_operations);
    assert_int_equal(a->enable_improved_fair_share_by_fit_factor_computation,
                     b->enable_improved_fair_share_by_fit_factor_computation);
    assert_true(a->infer_weight_from_guarantees_share_multiplier ==
                b->infer_weight_from_guarantees_share_multiplier);
    assert_int_equal(a->should_distribute_free_volume_among_children,
                     b->should_distribute_free_volume_among_children);
}

/* Field by field (not memcmp: padding bytes need not match). */
static void assert_input_equal(const struct ps_fs_element_input *a,
                               const struct ps_fs_element_input *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->parent, b->parent);
    assert_true(a->weight == b->weight);
    assert_int_equal(a->weight_specified, b->weight_specified);
    assert_true(a->max_share_ratio == b->max_share_ratio);
    assert_true(ps_resources_equal(a->resource_limits, b->resource_limits));
    assert_true(ps_resources_equal(a->filter_limits, b->filter_limits));
    assert_int_equal(a->pool, b->pool);
    assert_true(ps_resources_equal(a->demand, b->demand));
    assert_true(ps_resources_equal(a->usage, b->usage));
    assert_int_equal(a->start_time_ms, b->start_time_ms);
    assert_int_equal(a->pending_job_count, b->pending_job_count);
    assert_int_equal(a->is_gang, b->is_gang);
}

static void assert_pool_input_equal(const struct ps_fs_pool_input *a, const struct ps_fs_pool_input *b)
{
    assert_int_equal(a->mode, b->mode);
    assert_int_equal(a->fifo_sort_count, b->fifo_sort_count);
    assert_int_equal(a->strong_guarantee.set, b->strong_guarantee.set);
    assert_true(ps_resources_equal(a->strong_guarantee.r, b->strong_guarantee.r));
    assert_int_equal(a->guarantee_type, b->guarantee_type);
    assert_int_equal(a->resource_flow.set, b->resource_flow.set);
    assert_int_equal(a->burst_guarantee.set, b->burst_guarantee.set);
    assert_true(a->relaxed_share_multiplier_limit == b->relaxed_share_multiplier_limit);
    assert_int_equal(a->can_accept_free_volume, b->can_accept_free_volume);
    assert_int_equal(a->should_distribute_free_volume_among_children,
                     b->should_distribute_free_volume_among_children);
    for (int r = 0; r < PS_RES_COUNT; r++)
        assert_true(a->accumulated_volume.v[r] == b->accumulated_volume.v[r]);
    assert_true(a->last_integral_share_ratio == b->last_integral_share_ratio);
}

static void test_defaults_are_the_engine_defaults(void **state)
{
    (void)state;
    struct ps_snapshot *snap = must_parse(
        "{\"total_resources\": {}, \"pools\": [{\"name\": \"p\"}],"
        " \"operations\": [{\"id\": \"o\", \"pool\": \"p\"}]}");
    struct ps_fs_options defaults;
    ps_fs_options_init(&defaults);
    assert_options_equal(&snap->options, &defaults);
    assert_int_equal(snap->input.now_ms, 0);
    assert_false(snap->input.has_previous_update);
    assert_true(ps_resources_is_zero(snap->input.total));

    struct ps_fs_element_input want;
    ps_fs_element_input_init(&want, PS_ELEM_POOL, 0, NULL);
    want.pool = 1;   /* the snapshot's pools array follows the elements */
    assert_input_equal(&snap->elems[1].in, &want);
    struct ps_fs_pool_input want_pool;
    ps_fs_pool_input_init(&want_pool);
    want_pool.fifo_sort_count = 2;   /* the pool config's default: the engine's order spelled out */
    assert_pool_input_equal(&snap->pools[1].in, &want_pool);
    ps_fs_element_input_init(&want, PS_ELEM_OPERATION, 1, NULL);
    assert_input_equal(&snap->elems[2].in, &want);
    ps_snapshot_free(snap);

    /* Empty pools and operations, and operations in <Root> when the tree allows them. */
    snap = must_parse("{\"total_resources\": {\"cpu\": 1}, \"pools\": [], \"operations\": []}");
    assert_int_equal(snap->count, 1);
    assert_int_equal(snap->pool_count, 1);
    ps_snapshot_free(snap);
    snap = must_parse("{\"total_resources\": {\"cpu\": 1},"
                      " \"tree\": {\"forbid_immediate_operations_in_root\": false},"
                      " \"operations\": [{\"id\": \"o\", \"pool\": \"<Root>\"}]}");
    assert_int_equal(snap->elems[1].in.parent, 0);
    ps_snapshot_free(snap);
}

static void test_nodes_give_total_and_filter_limits(void **state)
{
    (void)state;
    struct ps_snapshot *snap = must_parse(
        "{\"nodes\": ["
        "   {\"id\": \"n1\", \"resource_limits\": {\"cpu\": 10, \"memory\": 100}, \"tags\": [\"ssd\", \"internal\"]},"
        "   {\"id\": \"n2\", \"resource_limits\": {\"cpu\": 20, \"gpu\": 4}, \"tags\": [\"gpu\", \"internal\"]},"
        "   {\"id\": \"n3\", \"resource_limits\": {\"cpu\": 40.25}, \"tags\": [\"ssd\", \"gpu\", \"internal\"]},"
        "   {\"id\": \"n4\", \"resource_limits\": {\"cpu\": 1000}, \"tags\": [\"ssd\"]},"
        "   {\"id\": \"n5\", \"resource_limits\": {\"user_slots\": 7}, \"tags\": [\"internal\"]}],"
        " \"tree\": {\"nodes_filter\": \"internal\"},"
        " \"pools\": [{\"name\": \"fast\", \"scheduling_tag_filter\": \"ssd & !gpu\"},"
        "            {\"name\": \"any\"},"
        "            {\"name\": \"ssd2\", \"scheduling_tag_filter\": \"ssd\"}],"
        " \"operations\": [{\"id\": \"g\", \"pool\": \"any\", \"scheduling_tag_filter\": \"gpu\"},"
        "                 {\"id\": \"s\", \"pool\": \"any\", \"scheduling_tag_filter\": \"ssd\"},"
        "                 {\"id\": \"none\", \"pool\": \"any\", \"scheduling_tag_filter\": \"nothing\"},"
        "                 {\"id\": \"free\", \"pool\": \"any\"}]}");
    /* n4 lacks the tree's tag: the total is n1 + n2 + n3 + n5. */
    assert_int_equal(snap->node_count, 5);
    assert_int_equal(snap->matched_node_count, 4);
    assert_int_equal(snap->input.total.v[PS_RES_CPU], CPU(70.25));
    assert_int_equal(snap->input.total.v[PS_RES_MEMORY], 100);
    assert_int_equal(snap->input.total.v[PS_RES_GPU], 4);
    assert_int_equal(snap->input.total.v[PS_RES_USER_SLOTS], 7);

    const struct ps_resources *fast = &snap->elems[find(snap, "fast", PS_ELEM_POOL)].in.filter_limits;
    assert_int_equal(fast->v[PS_RES_CPU], CPU(10));       /* n1 only */
    assert_int_equal(fast->v[PS_RES_MEMORY], 100);
    assert_int_equal(fast->v[PS_RES_GPU], 0);
    const struct ps_resources *ssd2 = &snap->elems[find(snap, "ssd2", PS_ELEM_POOL)].in.filter_limits;
    assert_int_equal(ssd2->v[PS_RES_CPU], CPU(50.25));    /* n1 + n3, not n4 */
    const struct ps_resources *any = &snap->elems[find(snap, "any", PS_ELEM_POOL)].in.filter_limits;
    assert_int_equal(any->v[PS_RES_CPU], PS_RES_INFINITE);
    const struct ps_resources *g = &snap->elems[find(snap, "g", PS_ELEM_OPERATION)].in.filter_limits;
    assert_int_equal(g->v[PS_RES_CPU], CPU(60.25));       /* n2 + n3 */
    assert_int_equal(g->v[PS_RES_GPU], 4);
    const struct ps_resources *s = &snap->elems[find(snap, "s", PS_ELEM_OPERATION)].in.filter_limits;
    assert_int_equal(s->v[PS_RES_CPU], CPU(50.25));
    const struct ps_resources *none = &snap->elems[find(snap, "none", PS_ELEM_OPERATION)].in.filter_limits;
    assert_true(ps_resources_is_zero(*none));
    const struct ps_resources *free_ = &snap->elems[find(snap, "free", PS_ELEM_OPERATION)].in.filter_limits;
    assert_int_equal(free_->v[PS_RES_MEMORY], PS_RES_INFINITE);
    assert_int_equal(snap->note_count, 0);
    ps_snapshot_free(snap);

    /* No nodes filter: every node counts; an empty list of nodes is a zero cluster. */
    snap = must_parse("{\"nodes\": [{\"id\": \"a\", \"resource_limits\": {\"cpu\": 1}},"
                      "           {\"id\": \"b\", \"resource_limits\": {\"cpu\": 2}, \"tags\": []}]}");
    assert_int_equal(snap->input.total.v[PS_RES_CPU], CPU(3));
    ps_snapshot_free(snap);
    snap = must_parse("{\"nodes\": []}");
    assert_true(ps_resources_is_zero(snap->input.total));
    ps_snapshot_free(snap);
}

static void test_filters_without_nodes_leave_notes(void **state)
{
    (void)state;
    struct ps_snapshot *snap = must_parse(
        "{\"total_resources\": {\"cpu\": 1}, \"tree\": {\"nodes_filter\": \"internal\"},"
        " \"pools\": [{\"name\": \"p\", \"scheduling_tag_filter\": \"ssd\"}],"
        " \"operations\": [{\"id\": \"o\", \"pool\": \"p\", \"scheduling_tag_filter\": \"gpu | ssd\"},"
        "                 {\"id\": \"e\", \"pool\": \"p\", \"scheduling_tag_filter\": \" \"}]}");
    assert_int_equal(snap->note_count, 3);
    assert_non_null(strstr(snap->notes[0], "tree.nodes_filter \"internal\" is not applied"));
    assert_non_null(strstr(snap->notes[1], "scheduling_tag_filter \"ssd\" of pool \"p\""));
    assert_non_null(strstr(snap->notes[2], "\"gpu | ssd\" of operation \"o\""));
    ps_snapshot_free(snap);
}

/* ---- bad input -------------------------------------------------------------------------- */

struct bad_case {
    const char *json;
    const char *message[3];   /* substrings the message must hold */
};

#define TOTAL "\"total_resources\": {\"cpu\": 10}"

static const struct bad_case bad_cases[] = {
    /* the document */
    {"", {"snapshot: the input is empty"}},
    {"{\"total_resources\": {\"cpu\": 10},\n \"pools\": [}",
     {"snapshot: not valid JSON at line 2, column", "unexpected token"}},
    {"{\"total_resources\": {\"cpu\": 10}} trailing", {"not valid JSON at line 1"}},
    {"[1, 2]", {"the top level must be a JSON object, got [1,2]"}},
    {"\"text\"", {"the top level must be a JSON object, got \"text\""}},
    /* found by fuzz_snapshot: jansson does not escape DEL (0x7f) */
    {"\"a\x7f\"", {"the top level must be a JSON object, got \"a\\u007f\""}},
    {"{" TOTAL ", \"pool\": []}", {"unknown top-level key \"pool\"", "did you mean \"pools\"?"}},
    {"{\"total_resources\": {\"cpu\": 1}, \"nodes\": []}",
     {"give either total_resources or nodes, not both"}},
    {"{\"pools\": []}", {"missing key \"total_resources\""}},
    {"{" TOTAL ", \"now\": 5, \"previous_update_time\": 6}",
     {"previous_update_time: must not be after now (5), got 6"}},
    {"{" TOTAL ", \"now\": -1}", {"now: must be a whole number of milliseconds", "got -1"}},
    {"{" TOTAL ", \"now\": 1.5}", {"now: must be a whole number", "got 1.5"}},
    {"{" TOTAL ", \"pools\": {}}", {"pools: must be an array, got {}"}},
    {"{\"total_resources\": {\"cpu\": 1}, \"pools\": [{\"name\": \"a\", \"weight\": 1, \"weight\": 2}]}",
     {"not valid JSON", "duplicate object key", "weight"}},
    /* pools: names and structure */
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"parent\": \"b\"}]}",
     {"pools[0].parent: no pool named \"b\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"x\"}, {\"name\": \"a\", \"parent\": \"b\"},"
     " {\"name\": \"b\", \"parent\": \"c\"}, {\"name\": \"c\", \"parent\": \"a\"}]}",
     {"pools[1].parent: parents form a cycle that never reaches <Root>",
      "\"a\" -> \"b\" -> \"c\" -> \"a\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"parent\": \"a\"}]}",
     {"pools[0].parent: parents form a cycle", "\"a\" -> \"a\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"a\"}]}",
     {"pools[2].name: duplicate pool name \"a\" (first at pools[0])"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"<Root>\"}]}",
     {"pools[0].name: \"<Root>\" is the implicit root pool and cannot be defined"}},
    {"{" TOTAL ", \"pools\": [{\"parent\": \"<Root>\"}]}", {"pools[0]: missing key \"name\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"\"}]}", {"pools[0].name: must not be empty"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a b\"}]}",
     {"pools[0].name: a pool name may contain only letters", "got \"a b\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\\nb\"}]}", {"pools[0].name:", "got \"a\\nb\""}},
    {"{" TOTAL ", \"pools\": [\"a\"]}", {"pools[0]: must be an object, got \"a\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"wieght\": 2}]}",
     {"pools[0].wieght: unknown key of the pool config", "(did you mean \"weight\"?)"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"strong_guarantee_resources\": {}, "
     "\"min_share_resources\": {}}]}",
     {"pools[0].strong_guarantee_resources and min_share_resources: aliases of one key"}},
    /* pools: values */
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"weight\": -1}]}",
     {"pools[0].weight: must be", "got -1"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"weight\": 0}]}",
     {"pools[0].weight: must be", "got 0"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"weight\": \"heavy\"}]}",
     {"pools[0].weight: must be", "got \"heavy\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"weight\": 1e9}]}",
     {"pools[0].weight:", "67108864]", "got 1000000000"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"max_share_ratio\": 1.5}]}",
     {"pools[0].max_share_ratio: must be in [0, 1], got 1.5"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"max_share_ratio\": -0.1}]}",
     {"pools[0].max_share_ratio: must be in [0, 1], got -0.1"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"mode\": \"lifo\"}]}",
     {"pools[0].mode: must be one of fair_share, fifo, got \"lifo\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"mode\": 1}]}",
     {"pools[0].mode: must be one of fair_share, fifo, got 1"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"integral_guarantees\": {\"guarantee_type\": \"big\"}}]}",
     {"pools[0].integral_guarantees/guarantee_type: must be one of none, burst, relaxed, got \"big\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"integral_guarantees\": {\"guarantee\": \"burst\"}}]}",
     {"pools[0].integral_guarantees/guarantee: unknown key"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"integral_guarantees\": {\"relaxed_share_multiplier_limit\": 11}}]}",
     {"pools[0].integral_guarantees/relaxed_share_multiplier_limit: must be in [1, 10], got 11"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"integral_guarantees\": {\"relaxed_share_multiplier_limit\": 0.5}}]}",
     {"relaxed_share_multiplier_limit: must be in [1, 10], got 0.5"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"integral_guarantees\": {\"guarantee_type\": \"relaxed\","
     " \"burst_guarantee_resources\": {\"cpu\": 1}}}]}",
     {"pools[0].integral_guarantees/burst_guarantee_resources: cannot be specified for guarantee_type \"relaxed\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"fifo_sort_parameters\": [\"weight\", \"size\"]}]}",
     {"pools[0].fifo_sort_parameters: must be one of weight, start_time, pending_job_count, got \"size\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"fifo_sort_parameters\": [\"weight\", \"weight\"]}]}",
     {"pools[0].fifo_sort_parameters: is listed twice, got \"weight\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"fifo_sort_parameters\": []}]}",
     {"pools[0].fifo_sort_parameters: must not be empty"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"fifo_sort_parameters\": \"weight\"}]}",
     {"pools[0].fifo_sort_parameters: must be a list of", "got \"weight\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"scheduling_tag_filter\": \"ssd & (gpu |\"}]}",
     {"pools[0].scheduling_tag_filter: invalid formula \"ssd & (gpu |\"",
      "unexpected end at position 12"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"scheduling_tag_filter\": 5}]}",
     {"pools[0].scheduling_tag_filter: must be a string, got 5"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"accumulated_resource_volume\": {\"cpu\": -5}}]}",
     {"pools[0].accumulated_resource_volume.cpu: must be a number from 0", "got -5"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"last_integral_share_ratio\": 2}]}",
     {"pools[0].last_integral_share_ratio: must be a number from 0 to 1, got 2"}},
    /* resources */
    {"{\"total_resources\": {\"cpus\": 10}}",
     {"total_resources: unknown resource \"cpus\" (did you mean \"cpu\"?)", "expected user_slots, cpu"}},
    {"{\"total_resources\": {\"memory\": 1.5}}",
     {"total_resources.memory: must be a whole number from 0 to 1e18, got 1.5"}},
    {"{\"total_resources\": {\"cpu\": -1}}", {"total_resources.cpu: must be a number of cores", "got -1"}},
    {"{\"total_resources\": {\"user_slots\": \"10\"}}",
     {"total_resources.user_slots: must be a whole number", "got \"10\""}},
    {"{\"total_resources\": {\"gpu\": 1e19}}", {"total_resources.gpu: must be a whole number from 0 to 1e18"}},
    {"{\"total_resources\": [10]}", {"total_resources: must be an object, got [10]"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"resource_limits\": {\"cpu\": true}}]}",
     {"pools[0].resource_limits/cpu: must be a non-negative number", "got true"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"strong_guarantee_resources\": {\"disk\": 1}}]}",
     {"pools[0].strong_guarantee_resources: unknown resource \"disk\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"integral_guarantees\": {\"resource_flow\": {\"cpu\": \"x\"}}}]}",
     {"pools[0].integral_guarantees/resource_flow/cpu: must be a non-negative number", "got \"x\""}},
    /* tree */
    {"{" TOTAL ", \"tree\": {\"nodes_filter\": \"a &\"}}",
     {"tree.nodes_filter: invalid formula \"a &\": unexpected end at position 3"}},
    {"{" TOTAL ", \"tree\": {\"node_filter\": \"a\"}}",
     {"tree.node_filter: unknown key of the pool tree config (did you mean \"nodes_filter\"?)"}},
    {"{" TOTAL ", \"tree\": {\"enable_step_function_for_gang_operations\": 1}}",
     {"tree.enable_step_function_for_gang_operations: must be a boolean, got 1"}},
    {"{" TOTAL ", \"tree\": {\"integral_guarantees\": {\"smooth_period\": 0}}}",
     {"tree.integral_guarantees/smooth_period: must be > 0, got 0"}},
    {"{" TOTAL ", \"tree\": {\"integral_guarantees\": {\"smooth\": 0}}}",
     {"tree.integral_guarantees/smooth: unknown key"}},
    {"{" TOTAL ", \"tree\": {\"integral_guarantees\": {\"relaxed_share_multiplier_limit\": -1}}}",
     {"tree.integral_guarantees/relaxed_share_multiplier_limit: must be >= 1", "got -1"}},
    {"{" TOTAL ", \"tree\": {\"infer_weight_from_guarantees_share_multiplier\": 0.5}}",
     {"tree.infer_weight_from_guarantees_share_multiplier: must be >= 1", "got 0.5"}},
    {"{" TOTAL ", \"tree\": {\"main_resource\": \"disk\"}}",
     {"tree.main_resource: must be one of user_slots, cpu, gpu, memory, network, got \"disk\""}},
    {"{" TOTAL ", \"tree\": []}", {"tree: must be an object, got []"}},
    {"{" TOTAL ", \"tree\": {\"should_distribute_free_volume_among_children\": \"no\"}}",
     {"tree.should_distribute_free_volume_among_children: must be a boolean, got \"no\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"integral_guarantees\": {\"can_accept_free_volume\": 0}}]}",
     {"pools[0].integral_guarantees/can_accept_free_volume: must be a boolean, got 0"}},
    /* operations */
    {"{" TOTAL ", \"operations\": [{\"id\": \"x\", \"pool\": \"nope\"}]}",
     {"operations[0].pool: no pool named \"nope\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\"},"
     " {\"id\": \"y\", \"pool\": \"p\"}, {\"id\": \"x\", \"pool\": \"p\"}]}",
     {"operations[2].id: duplicate operation id \"x\" (first at operations[0])"}},
    {"{" TOTAL ", \"operations\": [{\"id\": \"x\", \"pool\": \"<Root>\"}]}",
     {"operations[0].pool: an operation cannot run in <Root>", "forbid_immediate_operations_in_root"}},
    {"{" TOTAL ", \"operations\": [{\"pool\": \"p\"}]}", {"operations[0]: missing key \"id\""}},
    {"{" TOTAL ", \"operations\": [{\"id\": \"x\"}]}", {"operations[0]: missing key \"pool\""}},
    {"{" TOTAL ", \"operations\": [{\"id\": \"\", \"pool\": \"p\"}]}", {"operations[0].id: must not be empty"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\", \"weight\": -2}]}",
     {"operations[0].weight: must be in [1.4901161193847656e-08, 67108864]", "got -2"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\", \"max_share_ratio\": 2}]}",
     {"operations[0].max_share_ratio: must be in [0, 1], got 2"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\", \"is_gang\": \"yes\"}]}",
     {"operations[0].is_gang: must be a boolean, got \"yes\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\", \"demand\": {\"cpu\": -3}}]}",
     {"operations[0].demand.cpu: must be a number of cores", "got -3"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\", \"usage\": {\"ram\": 3}}]}",
     {"operations[0].usage: unknown resource \"ram\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\", \"start_time\": \"now\"}]}",
     {"operations[0].start_time: must be a whole number of milliseconds", "got \"now\""}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\", \"pending_job_count\": -1}]}",
     {"operations[0].pending_job_count: must be a whole number >= 0, got -1"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\", \"scheduling_tag_filter\": \"a b\"}]}",
     {"operations[0].scheduling_tag_filter: invalid formula \"a b\": unexpected tag at position 2"}},
    {"{" TOTAL ", \"pools\": [{\"name\": \"p\"}], \"operations\": [{\"id\": \"x\", \"pool\": \"p\", \"priority\": 1}]}",
     {"operations[0]: unknown key \"priority\""}},
    /* nodes */
    {"{\"nodes\": {}}", {"nodes: must be an array, got {}"}},
    {"{\"nodes\": [{\"id\": \"n\", \"resource_limits\": {\"cpu\": 1}}, {\"id\": \"n\"}]}",
     {"nodes[1].id: duplicate node id \"n\" (first at nodes[0])"}},
    {"{\"nodes\": [{\"resource_limits\": {\"cpu\": 1}}]}", {"nodes[0]: missing key \"id\""}},
    {"{\"nodes\": [{\"id\": \"n\", \"tags\": [\"a\", 1]}]}", {"nodes[0].tags[1]: must be a string, got 1"}},
    {"{\"nodes\": [{\"id\": \"n\", \"tag\": [\"a\"]}]}", {"nodes[0]: unknown key \"tag\" (did you mean \"tags\"?)"}},
    {"{\"nodes\": [{\"id\": \"n\", \"resource_limits\": {\"memory\": -1}}]}",
     {"nodes[0].resource_limits.memory: must be a whole number", "got -1"}},
    {"{\"nodes\": [{\"id\": \"a\", \"resource_limits\": {\"memory\": 1e18}},"
     " {\"id\": \"b\", \"resource_limits\": {\"memory\": 1e18}},"
     " {\"id\": \"c\", \"resource_limits\": {\"memory\": 1e18}}]}",
     {"nodes: the sum of resource_limits.memory over the nodes is too large"}},
    /* the first error wins: pools come before operations */
    {"{" TOTAL ", \"pools\": [{\"name\": \"a\", \"weight\": -1}],"
     " \"operations\": [{\"id\": \"x\", \"pool\": \"nope\"}]}",
     {"pools[0].weight"}},
};

static void test_bad_inputs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        struct ps_snapshot *snap = (struct ps_snapshot *)1;
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_snapshot_parse(c->json, strlen(c->json), &snap, &err);
        if (rc != PS_EINVAL)
            fail_msg("case %zu: expected PS_EINVAL, got %d (%s)\n%s", i, rc, err.msg, c->json);
        assert_null(snap);
        assert_int_equal(err.code, PS_EINVAL);
        for (int k = 0; k < 3 && c->message[k]; k++)
            if (!strstr(err.msg, c->message[k]))
                fail_msg("case %zu: message\n  %s\nlacks\n  %s", i, err.msg, c->message[k]);
        for (const char *p = err.msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                fail_msg("case %zu: message has a control character: %s", i, err.msg);
    }
}

static void test_too_many_filter_tokens(void **state)
{
    (void)state;
    /* 51 tags and 50 operators: 101 tokens, one more than YTsaurus allows. */
    char filter[1024] = "";
    for (int i = 0; i <= 50; i++)
        snprintf(filter + strlen(filter), sizeof filter - strlen(filter), "%st%d", i ? "|" : "", i);
    char json[4096];
    snprintf(json, sizeof json, "{" TOTAL ", \"pools\": [{\"name\": \"a\", \"scheduling_tag_filter\": \"%s\"}]}",
             filter);
    struct ps_snapshot *snap = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_snapshot_parse(json, strlen(json), &snap, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pools[0].scheduling_tag_filter: more than 100 tokens in a scheduling tag filter are not allowed, got 101"));
    /* 100 tokens are fine ("!t0" and 49 times "|tN"), and nodes_filter has no such limit. */
    strcpy(filter, "!t0");
    for (int i = 1; i <= 49; i++)
        snprintf(filter + strlen(filter), sizeof filter - strlen(filter), "|t%d", i);
    snprintf(json, sizeof json, "{" TOTAL ", \"tree\": {\"nodes_filter\": \"%s|x\"},"
             " \"pools\": [{\"name\": \"a\", \"scheduling_tag_filter\": \"%s\"}]}", filter, filter);
    snap = must_parse(json);
    ps_snapshot_free(snap);
}

static void test_input_need_not_be_terminated(void **state)
{
    (void)state;
    const char text[] = "{\"total_resources\": {\"cpu\": 1}}GARBAGE";
    struct ps_snapshot *snap = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_snapshot_parse(text, strlen(text) - 7, &snap, &err), 0);
    assert_int_equal(snap->input.total.v[PS_RES_CPU], CPU(1));
    ps_snapshot_free(snap);
    ps_snapshot_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_is_topological_with_list_order_among_siblings),
        cmocka_unit_test(test_fields_map_to_the_engine_input),
        cmocka_unit_test(test_defaults_are_the_engine_defaults),
        cmocka_unit_test(test_nodes_give_total_and_filter_limits),
        cmocka_unit_test(test_filters_without_nodes_leave_notes),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_too_many_filter_tokens),
        cmocka_unit_test(test_input_need_not_be_terminated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
