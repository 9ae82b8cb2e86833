/* test_schema.c — one schema per setting: every reader of a setting goes through its table.
 *
 * For every key and alias of the pool, tree, operation spec and job_cpu_monitor tables, a
 * valid and an invalid sample value (built from the table entry: kind, range, enum names) go
 * through each reader of that setting, and the readers must agree: the service's config
 * setters (pool tree / strategy), the fair-share snapshot, the node protocol. The invalid
 * sample of a ranged number is just outside the range, so a reader with a range of its own
 * would disagree here. Also: two aliases of one key are refused by every reader, the
 * unrecognized keys of a spec are listed, and max_failed_job_count has one range.
 */
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

#include "core/cpu_monitor.h"
#include "core/op_spec.h"
#include "core/pool_config.h"
#include "core/tree_config.h"
#include "io/json_value.h"
#include "io/snapshot.h"
#include "node/protocol.h"
#include "server/service_config.h"

/* A value for attribute a: valid (bad 0: at or just above the low end of the range; bad 3:
 * at or just below the high end) or one the table refuses (bad 1: below the range or of the
 * wrong type; bad 2: above the range). Samples at the edges make a reader with a range of its
 * own disagree. Returns false when there is no such sample. */
static bool sample(const struct ps_attr *a, int bad, struct ps_value *out)
{
    *out = ps_value_null();
    bool integer = a->kind == PS_ATTR_INT || a->kind == PS_ATTR_OPT_INT ||
                   a->kind == PS_ATTR_INT32;
    bool number = a->kind == PS_ATTR_INT || a->kind == PS_ATTR_OPT_INT ||
                  a->kind == PS_ATTR_INT32 || a->kind == PS_ATTR_DOUBLE ||
                  a->kind == PS_ATTR_OPT_DOUBLE;
    if (bad >= 2 && (!number || (a->flags & PS_ATTR_NO_RANGE)))
        return false;
    if (bad == 3) {
        bool max_open = a->flags & PS_ATTR_MAX_OPEN;
        if (a->max >= 1e300)
            return false;
        *out = ps_value_number(!max_open ? a->max : integer ? a->max - 1 : a->max - 1e-9);
        return true;
    }
    switch (a->kind) {
    case PS_ATTR_BOOL:
    case PS_ATTR_OPT_BOOL:
        *out = bad ? ps_value_number(1) : ps_value_bool(true);
        return true;
    case PS_ATTR_INT:
    case PS_ATTR_OPT_INT:
    case PS_ATTR_INT32:
    case PS_ATTR_DOUBLE:
    case PS_ATTR_OPT_DOUBLE: {
        if (a->flags & PS_ATTR_NO_RANGE) {
            *out = bad ? ps_value_string("x") : ps_value_number(1);
            return true;
        }
        if (bad == 2) {
            if (a->max >= 1e300)
                return false;
            bool max_open = a->flags & PS_ATTR_MAX_OPEN;
            *out = ps_value_number(max_open ? a->max : a->max + (integer ? 1 : 0.5));
            return true;
        }
        bool open = a->flags & PS_ATTR_MIN_OPEN;
        double good = open ? (integer ? a->min + 1 : a->min + 1e-9) : a->min;
        double wrong = open ? a->min : a->min - (integer ? 1 : 0.5);
        *out = ps_value_number(bad ? wrong : good);
        return true;
    }
    case PS_ATTR_STRING:
    case PS_ATTR_OPT_STRING:
        *out = bad ? ps_value_number(5) : ps_value_string("x");
        return true;
    case PS_ATTR_ENUM:
    case PS_ATTR_OPT_ENUM:
        *out = ps_value_string(bad ? "no_such_value" : a->enum_names[0]);
        return true;
    case PS_ATTR_RESOURCES:
        *out = ps_value_map();
        ps_value_put_number(out, "cpu", bad ? -1 : 1);
        return true;
    case PS_ATTR_DOUBLE_LIST: {
        *out = ps_value_list();
        struct ps_value item = bad ? ps_value_number(a->max + 1) : ps_value_number(a->min);
        ps_value_append(out, &item);
        return true;
    }
    case PS_ATTR_FIFO_LIST:
    case PS_ATTR_STRING_LIST: {
        *out = ps_value_list();
        struct ps_value item = bad ? ps_value_number(5) : ps_value_string(
            a->kind == PS_ATTR_FIFO_LIST ? "weight" : "x");
        ps_value_append(out, &item);
        return true;
    }
    case PS_ATTR_GROUP:
    case PS_ATTR_MAP:
        *out = bad ? ps_value_number(5) : ps_value_map();
        return true;
    case PS_ATTR_ACL:
        *out = bad ? ps_value_number(5) : ps_value_list();
        return true;
    }
    return false;
}

/* {key: value} as a map. */
static struct ps_value one_key(const char *key, struct ps_value *v)
{
    struct ps_value map = ps_value_map();
    assert_int_equal(ps_value_put(&map, key, v), 0);
    return map;
}

/* The snapshot reader: the map put at `where` ("tree", a pool, an operation). */
static int snapshot_reads(const char *where, const struct ps_value *map, struct ps_error *err)
{
    json_t *m = ps_value_to_json(map);
    assert_non_null(m);
    json_t *doc = json_pack("{s:{s:i}}", "total_resources", "cpu", 10);
    if (strcmp(where, "tree") == 0) {
        json_object_set(doc, "tree", m);
    } else if (strcmp(where, "pool") == 0) {
        json_object_set_new(m, "name", json_string("p"));
        json_object_set_new(doc, "pools", json_pack("[O]", m));
    } else {
        json_object_set_new(m, "id", json_string("o"));
        json_object_set_new(m, "pool", json_string("p"));
        json_object_set_new(doc, "pools", json_pack("[{s:s}]", "name", "p"));
        json_object_set_new(doc, "operations", json_pack("[O]", m));
    }
    json_decref(m);
    char *text = json_dumps(doc, 0);
    json_decref(doc);
    struct ps_snapshot *snap = NULL;
    int rc = ps_snapshot_parse(text, strlen(text), &snap, err);
    free(text);
    ps_snapshot_free(snap);
    return rc;
}

static int pool_reads(const struct ps_value *map, struct ps_error *err)
{
    struct ps_pool_config cfg;
    assert_int_equal(ps_pool_config_init(&cfg), 0);
    int rc = ps_pool_config_apply(&cfg, map, err);
    if (rc == 0)
        rc = ps_pool_config_validate(&cfg, err);
    ps_pool_config_release(&cfg);
    return rc;
}

static int tree_reads(const struct ps_value *map, struct ps_error *err)
{
    struct ps_tree_config cfg;
    assert_int_equal(ps_tree_config_init(&cfg), 0);
    int rc = ps_tree_config_apply(&cfg, map, err);
    if (rc == 0)
        rc = ps_tree_config_validate(&cfg, err);
    ps_tree_config_release(&cfg);
    return rc;
}

static int spec_reads(const struct ps_value *map, struct ps_error *err)
{
    struct ps_operation_spec spec;
    assert_int_equal(ps_operation_spec_init(&spec), 0);
    int rc = ps_operation_spec_apply(&spec, map, err);
    ps_operation_spec_release(&spec);
    return rc;
}

static int node_reads(const struct ps_value *map, struct ps_error *err)
{
    json_t *j = ps_value_to_json(map);
    struct ps_cpu_monitor_config cfg;
    int rc = ps_node_cpu_monitor_config_parse(j, "job_cpu_monitor", &cfg, err);
    json_decref(j);
    return rc;
}

typedef int (*reader_fn)(const struct ps_value *map, struct ps_error *err);

/* Every name (canonical and aliases) of every key of table, good and bad samples, through the
 * service's reader and the other one; they must agree, and the bad sample must be refused. */
static void readers_agree(const struct ps_attr_table *table, reader_fn service, const char *what,
                          reader_fn other, const char *other_what, const char *const *skip)
{
    int checked = 0;
    for (int i = 0; i < table->count; i++) {
        const struct ps_attr *a = &table->attrs[i];
        for (int k = -1; k < 3 && (k < 0 || a->alias[k]); k++) {
            const char *name = k < 0 ? a->name : a->alias[k];
            bool skipped = false;
            for (int s = 0; skip && skip[s]; s++)
                skipped |= strcmp(skip[s], name) == 0;
            if (skipped)
                continue;
            for (int bad = 0; bad < 4; bad++) {
                struct ps_value v;
                if (!sample(a, bad, &v))
                    continue;
                struct ps_value map = one_key(name, &v);
                struct ps_error e1, e2;
                ps_error_init(&e1);
                ps_error_init(&e2);
                int rc1 = service(&map, &e1);
                int rc2 = other(&map, &e2);
                bool refuse = bad == 1 || bad == 2;
                /* A good sample may still break a rule between keys (aggressive timeout below
                 * the normal one): then both must refuse it. */
                if ((rc1 == 0) != (rc2 == 0) || (refuse && rc1 == 0))
                    fail_msg("%s key \"%s\" (%s sample): %s says %d (%s), %s says %d (%s)", what,
                             name, bad == 0 ? "good low" : bad == 1 ? "bad low" : bad == 2 ? "bad high" : "good high", what, rc1, e1.msg, other_what, rc2,
                             e2.msg);
                if (refuse && !strstr(e2.msg, name))
                    fail_msg("%s key \"%s\": %s's message does not name it: %s", what, name,
                             other_what, e2.msg);
                ps_value_release(&map);
                checked++;
            }
        }
    }
    assert_true(checked >= 2 * table->count);
}

static int snapshot_pool(const struct ps_value *m, struct ps_error *e)
{
    return snapshot_reads("pool", m, e);
}

static int snapshot_tree(const struct ps_value *m, struct ps_error *e)
{
    return snapshot_reads("tree", m, e);
}

static int snapshot_op(const struct ps_value *m, struct ps_error *e)
{
    return snapshot_reads("operation", m, e);
}

static void test_pool_keys_snapshot_and_service_agree(void **state)
{
    (void)state;
    readers_agree(&ps_pool_config_table, pool_reads, "pool config", snapshot_pool, "snapshot",
                  NULL);
}

static void test_tree_keys_snapshot_and_service_agree(void **state)
{
    (void)state;
    readers_agree(&ps_tree_config_table, tree_reads, "tree config", snapshot_tree, "snapshot",
                  NULL);
}

static void test_spec_keys_snapshot_and_strategy_agree(void **state)
{
    (void)state;
    /* pool is the snapshot's operation state (the pool it runs in), not a spec setting */
    static const char *const skip[] = {"pool", NULL};
    readers_agree(&ps_operation_spec_table, spec_reads, "operation spec", snapshot_op,
                  "snapshot", skip);
}

/* job_cpu_monitor/<key> in a spec (strategy, service, simulator) and in the node protocol. */
static int spec_cpu_monitor(const struct ps_value *map, struct ps_error *err)
{
    struct ps_value copy;
    assert_int_equal(ps_value_copy(&copy, map), 0);
    struct ps_value spec = one_key("job_cpu_monitor", &copy);
    int rc = spec_reads(&spec, err);
    ps_value_release(&spec);
    return rc;
}

static void test_cpu_monitor_keys_spec_and_node_agree(void **state)
{
    (void)state;
    readers_agree(&ps_cpu_monitor_config_table, spec_cpu_monitor, "job_cpu_monitor", node_reads,
                  "node protocol", NULL);
}

/* The docs' and older spellings are accepted by every reader. */
static void test_aliases_everywhere(void **state)
{
    (void)state;
    struct ps_value v = ps_value_number(2);
    struct ps_value map = one_key("infer_weight_from_min_share_ratio_multiplier", &v);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(tree_reads(&map, &err), 0);
    assert_int_equal(snapshot_tree(&map, &err), 0);
    ps_value_release(&map);

    /* and the snapshot uses it as the engine's option */
    const char *text = "{\"total_resources\": {\"cpu\": 1},"
                       " \"tree\": {\"infer_weight_from_min_share_ratio_multiplier\": 2}}";
    struct ps_snapshot *snap = NULL;
    assert_int_equal(ps_snapshot_parse(text, strlen(text), &snap, &err), 0);
    assert_true(snap->options.infer_weight_from_guarantees_share_multiplier == 2.0);
    ps_snapshot_free(snap);
}

/* Two names of one key in one map: refused by every reader, naming both. */
static void test_two_aliases_refused(void **state)
{
    (void)state;
    struct ps_value a = ps_value_map(), b = ps_value_map();
    ps_value_put_number(&a, "cpu", 1);
    ps_value_put_number(&b, "cpu", 1);
    struct ps_value pool = ps_value_map();
    ps_value_put(&pool, "strong_guarantee_resources", &a);
    ps_value_put(&pool, "min_share_resources", &b);
    struct ps_error err;
    reader_fn readers[] = {pool_reads, snapshot_pool};
    for (int i = 0; i < 2; i++) {
        ps_error_init(&err);
        assert_int_equal(readers[i](&pool, &err), PS_EINVAL);
        assert_non_null(strstr(err.msg, "strong_guarantee_resources"));
        assert_non_null(strstr(err.msg, "min_share_resources"));
    }
    ps_value_release(&pool);

    struct ps_value tree = ps_value_map();
    ps_value_put_number(&tree, "fair_share_starvation_timeout", 1000);
    ps_value_put_number(&tree, "fair_share_preemption_timeout", 1000);
    reader_fn tree_readers[] = {tree_reads, snapshot_tree};
    for (int i = 0; i < 2; i++) {
        ps_error_init(&err);
        assert_int_equal(tree_readers[i](&tree, &err), PS_EINVAL);
        assert_non_null(strstr(err.msg, "fair_share_preemption_timeout"));
    }
    ps_value_release(&tree);

    struct ps_value spec = ps_value_map();
    ps_value_put_string(&spec, "scheduling_tag", "a");
    ps_value_put_string(&spec, "scheduling_tag_filter", "b");
    reader_fn spec_readers[] = {spec_reads, snapshot_op};
    for (int i = 0; i < 2; i++) {
        ps_error_init(&err);
        assert_int_equal(spec_readers[i](&spec, &err), PS_EINVAL);
        assert_non_null(strstr(err.msg, "scheduling_tag and scheduling_tag_filter"));
    }
    ps_value_release(&spec);

    /* inside a group too (a tree's options) */
    struct ps_value opts = ps_value_map();
    ps_value_put_string(&opts, "scheduling_tag", "a");
    ps_value_put_string(&opts, "scheduling_tag_filter", "b");
    struct ps_value trees = one_key("gpu", &opts);
    spec = one_key("scheduling_options_per_pool_tree", &trees);
    ps_error_init(&err);
    assert_int_equal(spec_reads(&spec, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "scheduling_tag and scheduling_tag_filter"));
    ps_value_release(&spec);
}

static void test_unrecognized_spec_keys(void **state)
{
    (void)state;
    const char *text = "{\"wieght\": 2, \"weight\": 3, \"job-cpu-monitor\": {},"
                       " \"job_cpu_monitor\": {\"smoothing_factr\": 0.5, \"smoothing_factor\": 0.5},"
                       " \"scheduling_options_per_pool_tree\": {\"gpu\": {\"pol\": \"a\"}},"
                       " \"tasks\": {}}";
    json_t *j = json_loads(text, 0, NULL);
    struct ps_value doc, out;
    assert_int_equal(ps_json_to_value(j, &doc, NULL), 0);
    json_decref(j);
    assert_int_equal(ps_operation_spec_unrecognized(&doc, &out), 0);
    json_t *got = ps_value_to_json(&out);
    json_t *want = json_loads("{\"wieght\": 2, \"job-cpu-monitor\": {},"
                              " \"job_cpu_monitor\": {\"smoothing_factr\": 0.5},"
                              " \"scheduling_options_per_pool_tree\": {\"gpu\": {\"pol\": \"a\"}}}",
                              0, NULL);
    if (!json_equal(got, want)) {
        char *s = json_dumps(got, 0);
        fail_msg("unrecognized: %s", s);
    }
    json_decref(got);
    json_decref(want);
    /* the spec still applies: unknown keys are not errors, known ones take effect */
    struct ps_operation_spec spec;
    assert_int_equal(ps_operation_spec_init(&spec), 0);
    assert_int_equal(ps_operation_spec_apply(&spec, &doc, NULL), 0);
    assert_true(spec.weight.set && spec.weight.value == 3);
    assert_true(spec.job_cpu_monitor.smoothing_factor == 0.5);
    ps_operation_spec_release(&spec);
    ps_value_release(&out);
    ps_value_release(&doc);
}

/* max_failed_job_count: one range for the spec key and the scheduler config's default. */
static void test_max_failed_job_count_one_range(void **state)
{
    (void)state;
    for (int bad = 0; bad < 2; bad++) {
        int x = bad ? PS_MAX_FAILED_JOB_COUNT + 1 : PS_MAX_FAILED_JOB_COUNT;
        struct ps_value v = ps_value_number(x);
        struct ps_value spec = one_key("max_failed_job_count", &v);
        struct ps_error e1, e2;
        ps_error_init(&e1);
        ps_error_init(&e2);
        int rc1 = spec_reads(&spec, &e1);
        ps_value_release(&spec);
        struct ps_service_config cfg;
        ps_service_config_init(&cfg);
        json_t *doc = json_pack("{s:i}", "max_failed_job_count", x);
        int rc2 = ps_service_config_apply(&cfg, doc, &e2);
        json_decref(doc);
        assert_int_equal(rc1, bad ? PS_EINVAL : 0);
        assert_int_equal(rc2, bad ? PS_EINVAL : 0);
    }
}

/* waiting_job_timeout: upstream's range [10 s, 10 min]; a job gets the greater of the spec's
 * and the tree's waiting_for_resources_on_node_timeout, the one set, or none (-1). */
static void test_waiting_job_timeout(void **state)
{
    (void)state;
    const int64_t values[] = {9999, 10000, 600000, 600001};
    for (int i = 0; i < 4; i++) {
        struct ps_value v = ps_value_number((double)values[i]);
        struct ps_value map = one_key("waiting_job_timeout", &v);
        struct ps_operation_spec spec;
        assert_int_equal(ps_operation_spec_init(&spec), 0);
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_operation_spec_apply(&spec, &map, &err);
        ps_value_release(&map);
        bool ok = i == 1 || i == 2;
        assert_int_equal(rc, ok ? 0 : PS_EINVAL);
        if (!ok)
            assert_non_null(strstr(err.msg, "waiting_job_timeout"));
        struct ps_opt_int tree = {true, 15000}, none = {false, 0};
        if (ok) {
            assert_int_equal(ps_operation_spec_waiting_job_timeout(&spec, &none), values[i]);
            assert_int_equal(ps_operation_spec_waiting_job_timeout(&spec, &tree),
                             values[i] > 15000 ? values[i] : 15000);
        } else {
            assert_int_equal(ps_operation_spec_waiting_job_timeout(&spec, &none), -1);
            assert_int_equal(ps_operation_spec_waiting_job_timeout(&spec, &tree), 15000);
        }
        ps_operation_spec_release(&spec);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_keys_snapshot_and_service_agree),
        cmocka_unit_test(test_waiting_job_timeout),
        cmocka_unit_test(test_tree_keys_snapshot_and_service_agree),
        cmocka_unit_test(test_spec_keys_snapshot_and_strategy_agree),
        cmocka_unit_test(test_cpu_monitor_keys_spec_and_node_agree),
        cmocka_unit_test(test_aliases_everywhere),
        cmocka_unit_test(test_two_aliases_refused),
        cmocka_unit_test(test_unrecognized_spec_keys),
        cmocka_unit_test(test_max_failed_job_count_one_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
