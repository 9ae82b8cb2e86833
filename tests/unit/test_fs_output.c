/* Tests of src/io/fs_output: the JSON result has every pool and operation with the contract's
 * keys, ratios are the largest components, numbers round-trip, unlimited resources are left out,
 * output is byte-identical; the table shows the tree. Outputs are filled in by hand, so these
 * tests do not depend on the engine's numbers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/fs_output.h"
#include "io/snapshot.h"

static void test_format_double(void **state)
{
    (void)state;
    char buf[40];
    struct {
        double x;
        const char *text;
    } cases[] = {
        {0.1, "0.1"}, {1.0, "1"}, {-2.5, "-2.5"}, {0.3, "0.3"}, {1e21, "1e+21"},
        {1048576000.0, "1048576000"}, {-0.0, "0"}, {7.62939453125e-07, "7.62939453125e-07"},
        {INFINITY, "null"}, {NAN, "null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ps_fs_format_double(buf, sizeof buf, cases[i].x);
        assert_string_equal(buf, cases[i].text);
    }
    /* Values that need 16 or 17 digits still read back exactly. */
    double hard[] = {1.0 / 3.0, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, 2.0 / 3.0 * 1e-5,
                     123456789012345678.0};
    for (size_t i = 0; i < sizeof hard / sizeof hard[0]; i++) {
        ps_fs_format_double(buf, sizeof buf, hard[i]);
        assert_true(strtod(buf, NULL) == hard[i]);
    }
    ps_fs_format_double(buf, sizeof buf, 0.1 + 0.2);
    assert_string_equal(buf, "0.30000000000000004");
}

static struct ps_snapshot *example(void)
{
    const char *json =
        "{\"total_resources\": {\"user_slots\": 100, \"cpu\": 100, \"memory\": 1000},"
        " \"pools\": [{\"name\": \"child\", \"parent\": \"parent\", \"mode\": \"fifo\"},"
        "            {\"name\": \"parent\", \"weight\": 2}],"
        " \"operations\": [{\"id\": \"op \\\"1\\\"\", \"pool\": \"child\", \"is_gang\": true}]}";
    struct ps_snapshot *snap = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_snapshot_parse(json, strlen(json), &snap, &err))
        fail_msg("%s", err.msg);
    /* Outputs as an engine would leave them. */
    for (int i = 0; i < snap->count; i++) {
        struct ps_fs_element_output *o = &snap->elems[i].out;
        memset(o, 0, sizeof *o);
        double k = 1.0 / (i + 1);
        o->fair_share.strong_guarantee = (struct ps_share){{0.1 * k, 0.05 * k, 0, 0, 0}};
        o->fair_share.integral_guarantee = (struct ps_share){{0, 0.2 * k, 0, 0, 0}};
        o->fair_share.weight_proportional = (struct ps_share){{0.3 * k, 0.1 * k, 0, 0.4 * k, 0}};
        o->fair_share.total = ps_share_add(ps_share_add(o->fair_share.strong_guarantee,
                                                        o->fair_share.integral_guarantee),
                                           o->fair_share.weight_proportional);
        o->usage_share = (struct ps_share){{0.01, 0.02, 0, -0.0, 0}};
        o->demand_share = (struct ps_share){{0.5, 0.7, 0, 0.25, 0}};
        o->limits_share = ps_share_fill(1.0);
        o->resource_limits = snap->input.total;
        o->resource_limits.v[PS_RES_CPU] = 1117;   /* 11.17 cores */
        o->resource_limits.v[PS_RES_GPU] = PS_RES_INFINITE;
        o->dominant_resource = PS_RES_MEMORY;
        o->weight = snap->elems[i].in.weight;
        o->fifo_index = i == 3 ? 0 : -1;
        if (i < snap->pool_count) {   /* operations have no pool entry: zeros */
            struct ps_fs_pool_output *po = &snap->pools[snap->elems[i].in.pool].out;
            po->accumulated_resource_volume.v[PS_RES_CPU] = 600.5;
            po->total_burst_ratio = 1.0 / 3.0;
        }
    }
    return snap;
}

static char *render(const struct ps_snapshot *snap, bool table, const char *const *alerts,
                    int alert_count)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    struct ps_error err;
    ps_error_init(&err);
    int rc = table ? ps_fs_print_table(mem, snap, alerts, alert_count, &err)
                   : ps_fs_print_json(mem, snap, alerts, alert_count, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(fclose(mem), 0);
    return text;
}

static void assert_share_keys(json_t *share)
{
    static const char *const keys[] = {"user_slots", "cpu", "gpu", "memory", "network"};
    assert_true(json_is_object(share));
    assert_int_equal(json_object_size(share), 5);
    for (int i = 0; i < 5; i++)
        assert_true(json_is_number(json_object_get(share, keys[i])));
}

static void test_json_has_the_contract_keys(void **state)
{
    (void)state;
    struct ps_snapshot *snap = example();
    const char *alerts[] = {"first alert", "second \"quoted\" alert"};
    char *text = render(snap, false, alerts, 2);
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    if (!doc)
        fail_msg("output is not JSON: %s\n%s", jerr.text, text);
    json_t *pools = json_object_get(doc, "pools"), *ops = json_object_get(doc, "operations");
    assert_int_equal(json_object_size(pools), 3);
    assert_int_equal(json_object_size(ops), 1);
    assert_non_null(json_object_get(pools, "<Root>"));
    assert_non_null(json_object_get(pools, "parent"));
    assert_non_null(json_object_get(pools, "child"));
    json_t *op = json_object_get(ops, "op \"1\"");
    assert_non_null(op);
    json_t *alist = json_object_get(doc, "alerts");
    assert_int_equal(json_array_size(alist), 2);
    assert_string_equal(json_string_value(json_array_get(alist, 1)), "second \"quoted\" alert");

    static const char *const share_keys[] = {"demand_share", "usage_share", "limits_share",
                                             "strong_guarantee_share", "proposed_integral_share"};
    static const char *const number_keys[] = {
        "fair_share_ratio", "usage_ratio", "demand_ratio", "accumulated_resource_ratio_volume",
        "specified_burst_ratio", "specified_resource_flow_ratio", "total_burst_ratio",
        "total_resource_flow_ratio", "estimated_burst_usage_duration_seconds",
        "strong_guarantee_ratio", "integral_guarantee_ratio", "weight_proportional_ratio",
        "weight", "fifo_index"};
    const char *name;
    json_t *e;
    json_t *all[] = {pools, ops};
    for (int m = 0; m < 2; m++) {
        json_object_foreach(all[m], name, e) {
            for (size_t k = 0; k < sizeof share_keys / sizeof share_keys[0]; k++)
                assert_share_keys(json_object_get(e, share_keys[k]));
            for (size_t k = 0; k < sizeof number_keys / sizeof number_keys[0]; k++)
                if (!json_is_number(json_object_get(e, number_keys[k])))
                    fail_msg("%s lacks %s", name, number_keys[k]);
            json_t *d = json_object_get(e, "detailed_fair_share");
            assert_int_equal(json_object_size(d), 4);
            assert_share_keys(json_object_get(d, "total"));
            assert_share_keys(json_object_get(d, "strong_guarantee"));
            assert_share_keys(json_object_get(d, "integral_guarantee"));
            assert_share_keys(json_object_get(d, "weight_proportional"));
            assert_string_equal(json_string_value(json_object_get(e, "dominant_resource")),
                                "memory");
            assert_share_keys(json_object_get(e, "accumulated_resource_volume"));
            assert_share_keys(json_object_get(e, "integral_pool_capacity"));
            /* Unlimited gpu is left out; cpu is an exact decimal. */
            json_t *limits = json_object_get(e, "resource_limits");
            assert_null(json_object_get(limits, "gpu"));
            assert_true(json_real_value(json_object_get(limits, "cpu")) == 11.17);
            assert_int_equal(json_integer_value(json_object_get(limits, "memory")), 1000);
        }
    }
    /* The ratios are the largest components: for <Root> (k = 1) total = {0.4, 0.35, 0, 0.4, 0}. */
    json_t *root = json_object_get(pools, "<Root>");
    assert_true(json_real_value(json_object_get(root, "fair_share_ratio")) == 0.4);
    assert_true(json_real_value(json_object_get(root, "demand_ratio")) == 0.7);
    assert_true(json_real_value(json_object_get(root, "usage_ratio")) == 0.02);
    assert_true(json_real_value(json_object_get(root, "integral_guarantee_ratio")) == 0.2);
    assert_true(json_real_value(json_object_get(root, "total_burst_ratio")) == 1.0 / 3.0);
    assert_null(json_object_get(root, "parent"));
    json_t *child = json_object_get(pools, "child");
    assert_string_equal(json_string_value(json_object_get(child, "parent")), "parent");
    assert_string_equal(json_string_value(json_object_get(child, "mode")), "fifo");
    assert_string_equal(json_string_value(json_object_get(op, "pool")), "child");
    assert_int_equal(json_integer_value(json_object_get(op, "fifo_index")), 0);
    /* Exact text of a few values. */
    assert_non_null(strstr(text, "\"cpu\": 11.17"));
    assert_non_null(strstr(text, "\"total_burst_ratio\": 0.3333333333333333"));
    assert_null(strstr(text, ": -0"));

    /* Byte-identical on a second rendering. */
    char *again = render(snap, false, alerts, 2);
    assert_string_equal(text, again);
    free(again);
    free(text);
    json_decref(doc);

    /* Empty operations and alerts are still valid JSON. */
    snap->count = snap->pool_count;
    text = render(snap, false, NULL, 0);
    doc = json_loads(text, 0, &jerr);
    assert_non_null(doc);
    assert_int_equal(json_object_size(json_object_get(doc, "operations")), 0);
    assert_int_equal(json_array_size(json_object_get(doc, "alerts")), 0);
    json_decref(doc);
    free(text);
    snap->count = snap->pool_count + 1;
    ps_snapshot_free(snap);
}

static void test_table_shows_the_tree(void **state)
{
    (void)state;
    struct ps_snapshot *snap = example();
    const char *alerts[] = {"an alert"};
    char *text = render(snap, true, alerts, 1);
    /* Header, then the tree indented by depth, operations under their pool. */
    assert_non_null(strstr(text, "POOL / OPERATION"));
    const char *root = strstr(text, "\n<Root> ");
    const char *parent = strstr(text, "\n  parent ");
    const char *child = strstr(text, "\n    child ");
    const char *op = strstr(text, "\n      op \"1\" ");
    assert_non_null(root);
    assert_non_null(parent);
    assert_non_null(child);
    assert_non_null(op);
    assert_true(root < parent && parent < child && child < op);
    assert_non_null(strstr(child, "fifo"));
    assert_non_null(strstr(op, "gang op"));
    assert_non_null(strstr(parent, "       2 "));       /* the weight column */
    assert_non_null(strstr(root, "    40.0 "));         /* fair share of <Root> in percent */
    assert_non_null(strstr(text, "total resources: user_slots 100, cpu 100, gpu 0, memory 1000"));
    assert_non_null(strstr(text, "alerts:\n  - an alert\n"));
    /* Every row of the tree has the same width up to the dominant resource column. */
    const char *rows[] = {root + 1, parent + 1, child + 1, op + 1};
    size_t width = strstr(rows[0], "memory") - rows[0];
    for (int i = 1; i < 4; i++)
        assert_int_equal((size_t)(strstr(rows[i], "memory") - rows[i]), width);
    free(text);
    ps_snapshot_free(snap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_double),
        cmocka_unit_test(test_json_has_the_contract_keys),
        cmocka_unit_test(test_table_shows_the_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
