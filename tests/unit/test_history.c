/* The fair share history of the web UI's charts (server/history.h): recent samples as taken,
 * five-minute buckets before them holding the mean, gaps for absent pools, pools dropped once
 * gone from the whole window, fixed size, the query's choice of pools and its errors, and the
 * closed buckets' records restored into a new history.
 * Expected values are worked out here from the sampled values, not read back from history.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/pool_tree.h"
#include "server/history.h"

#define STEP_MS 10000   /* one sample every 10 s */

static struct ps_pool_tree *tree_with(const char *const *names, const char *const *parents, int n)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_pool_tree *tree = ps_pool_tree_new("physical", NULL, &err);
    assert_non_null(tree);
    for (int i = 0; i < n; i++)
        assert_int_equal(ps_pool_tree_create_pool(tree, names[i], parents[i], NULL, &err), 0);
    return tree;
}

/* Sample k: pool a has fair share k / 1000, usage k / 2000; the root's usage is k / 4000. */
static void sample_saving(struct ps_history *h, struct ps_pool_tree *tree, int64_t k, json_t *saved);

static void sample(struct ps_history *h, struct ps_pool_tree *tree, int64_t k)
{
    sample_saving(h, tree, k, NULL);
}

/* saved: where the records of closed buckets go (NULL: not asked for) */
static void sample_saving(struct ps_history *h, struct ps_pool_tree *tree, int64_t k, json_t *saved)
{
    struct ps_pool *root = ps_pool_tree_root(tree);
    root->dynamic.valid = true;
    root->dynamic.fair_share_ratio = 1;
    root->dynamic.usage_ratio = (double)k / 4000;
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        p->dynamic.valid = true;
        p->dynamic.fair_share_ratio = strcmp(p->name, "a") == 0 ? (double)k / 1000 : 0.25;
        p->dynamic.usage_ratio = (double)k / 2000;
    }
    json_t *closed = NULL;
    assert_int_equal(ps_history_sample(h, tree, k * STEP_MS, (double)k, saved ? &closed : NULL), 0);
    if (closed)
        assert_int_equal(json_array_append_new(saved, closed), 0);
}

static json_t *query(struct ps_history *h, const char *pools_json)
{
    struct ps_error err;
    ps_error_init(&err);
    json_t *pools = pools_json ? json_loads(pools_json, 0, NULL) : NULL;
    json_t *out = NULL;
    int rc = ps_history_query(h, "physical", pools, &out, &err);
    json_decref(pools);
    if (rc != 0)
        fail_msg("query: %s", err.msg);
    return out;
}

static double at(json_t *r, const char *pool, const char *key, size_t i)
{
    json_t *v = json_array_get(json_object_get(json_object_get(json_object_get(r, "pools"), pool), key), i);
    return json_is_null(v) ? NAN : json_number_value(v);
}

static void test_recent_and_buckets(void **state)
{
    (void)state;
    static const char *const names[] = {"a", "b"}, *const parents[] = {NULL, NULL};
    struct ps_pool_tree *tree = tree_with(names, parents, 2);
    struct ps_history *h;
    assert_int_equal(ps_history_new(&h), 0);
    const int64_t n = 720;   /* 2 hours */
    for (int64_t k = 0; k < n; k++)
        sample(h, tree, k);
    json_t *r = query(h, NULL);
    json_t *times = json_object_get(r, "times");
    size_t len = json_array_size(times);
    /* the last 240 samples as taken */
    int64_t first_recent = n - PS_HISTORY_RECENT_POINTS;
    for (int64_t j = 0; j < PS_HISTORY_RECENT_POINTS; j++) {
        size_t i = len - PS_HISTORY_RECENT_POINTS + (size_t)j;
        int64_t k = first_recent + j;
        assert_int_equal(json_integer_value(json_array_get(times, i)), k * STEP_MS);
        assert_float_equal(at(r, "a", "fair_share", i), (double)k / 1000, 1e-6);
        assert_float_equal(json_number_value(json_array_get(json_object_get(r, "preemptions"), i)),
                           (double)k, 1e-9);
    }
    /* before them, the 5-minute buckets that end before the first recent sample: samples
     * 30b .. 30b+29 fall in bucket b; their mean fair share is (30b + 14.5) / 1000 */
    int64_t first_recent_ms = first_recent * STEP_MS;
    size_t buckets = (size_t)(first_recent_ms / PS_HISTORY_BUCKET_MS);
    assert_int_equal(len, buckets + PS_HISTORY_RECENT_POINTS);
    for (size_t b = 0; b < buckets; b++) {
        assert_int_equal(json_integer_value(json_array_get(times, b)), (int64_t)b * PS_HISTORY_BUCKET_MS);
        assert_float_equal(at(r, "a", "fair_share", b), (30.0 * (double)b + 14.5) / 1000, 1e-6);
        assert_float_equal(json_number_value(json_array_get(json_object_get(r, "cluster_usage"), b)),
                           (30.0 * (double)b + 14.5) / 4000, 1e-6);
    }
    /* default pools: the root and its children */
    assert_non_null(json_object_get(json_object_get(r, "pools"), "<Root>"));
    assert_int_equal(json_object_size(json_object_get(r, "pools")), 3);
    json_decref(r);
    ps_history_free(h);
    ps_pool_tree_free(tree);
}

/* The closed buckets' records, restored into a new history (as after a restart), give the
 * same bucket means; records older than a day, from the future or malformed are skipped, and
 * the order of the records does not matter. */
static void test_restore(void **state)
{
    (void)state;
    static const char *const names[] = {"a", "b"}, *const parents[] = {NULL, NULL};
    struct ps_pool_tree *tree = tree_with(names, parents, 2);
    struct ps_history *h, *h2;
    assert_int_equal(ps_history_new(&h), 0);
    json_t *saved = json_array();
    const int64_t n = 720;   /* 2 hours: buckets 0..22 closed, 23 open */
    for (int64_t k = 0; k < n; k++)
        sample_saving(h, tree, k, saved);
    assert_int_equal(json_array_size(saved), 23);
    char *key = ps_history_record_key("physical", 22 * PS_HISTORY_BUCKET_MS, PS_HISTORY_BUCKET_MS);
    assert_string_equal(key, "physical/22");
    free(key);
    key = ps_history_record_key("physical", (288 + 3) * (int64_t)PS_HISTORY_BUCKET_MS, PS_HISTORY_BUCKET_MS);
    assert_string_equal(key, "physical/3");   /* a day later, the same slot */
    free(key);
    json_t *old = json_deep_copy(json_array_get(saved, 0));
    json_object_set_new(old, "t", json_integer(-2 * 86400000LL));
    json_t *future = json_deep_copy(json_array_get(saved, 1));
    json_object_set_new(future, "t", json_integer(n * STEP_MS + PS_HISTORY_BUCKET_MS));
    json_t *records = json_array();
    for (size_t i = json_array_size(saved); i-- > 0;)   /* newest first */
        json_array_append(records, json_array_get(saved, i));
    json_array_append_new(records, old);
    json_array_append_new(records, future);
    json_array_append_new(records, json_pack("{s:i}", "tree", 1));
    assert_int_equal(ps_history_new(&h2), 0);
    assert_int_equal(ps_history_restore(h2, records, n * STEP_MS), 0);
    json_t *r = query(h2, NULL);
    json_t *times = json_object_get(r, "times");
    assert_int_equal(json_array_size(times), 23);
    for (size_t b = 0; b < 23; b++) {
        assert_int_equal(json_integer_value(json_array_get(times, b)), (int64_t)b * PS_HISTORY_BUCKET_MS);
        assert_float_equal(at(r, "a", "fair_share", b), (30.0 * (double)b + 14.5) / 1000, 1e-6);
        assert_float_equal(at(r, "b", "usage", b), (30.0 * (double)b + 14.5) / 2000, 1e-6);
        assert_float_equal(json_number_value(json_array_get(json_object_get(r, "cluster_usage"), b)),
                           (30.0 * (double)b + 14.5) / 4000, 1e-6);
    }
    /* the parents came back too: the default pools are the root and its children */
    assert_int_equal(json_object_size(json_object_get(r, "pools")), 3);
    json_decref(r);
    json_decref(records);
    json_decref(saved);
    ps_history_free(h2);
    ps_history_free(h);
    ps_pool_tree_free(tree);
}

static void test_gaps_drop_and_bound(void **state)
{
    (void)state;
    static const char *const names[] = {"a", "b", "c"}, *const parents[] = {NULL, NULL, "a"};
    struct ps_pool_tree *tree = tree_with(names, parents, 3);
    struct ps_history *h;
    assert_int_equal(ps_history_new(&h), 0);
    int64_t k = 0;
    for (; k < 10; k++)
        sample(h, tree, k);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_pool_tree_remove_pool(tree, "b", &err), 0);
    for (; k < 20; k++)
        sample(h, tree, k);
    /* c is not a child of the root: only when asked for */
    json_t *r = query(h, "[\"b\", \"c\"]");
    assert_int_equal(json_array_size(json_object_get(r, "times")), 20);
    assert_float_equal(at(r, "b", "fair_share", 9), 0.25, 1e-9);
    assert_true(isnan(at(r, "b", "fair_share", 10)));   /* gone: a gap, not a zero */
    assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(r, "pools"), "c"), "parent")), "a");
    json_decref(r);
    /* three days later: a day is kept in at most 240 + 288 points, and b is gone */
    for (; k < 3 * 8640; k++)
        sample(h, tree, k);
    r = query(h, "[\"a\", \"b\"]");
    size_t len = json_array_size(json_object_get(r, "times"));
    assert_true(len <= PS_HISTORY_RECENT_POINTS + PS_HISTORY_BUCKETS);
    /* the buckets the recent samples cover (40 minutes: 8, and the open one) are not shown */
    size_t covered = (size_t)(PS_HISTORY_RECENT_POINTS * STEP_MS / PS_HISTORY_BUCKET_MS) + 1;
    assert_true(len >= PS_HISTORY_RECENT_POINTS + PS_HISTORY_BUCKETS - covered);
    int64_t oldest = json_integer_value(json_array_get(json_object_get(r, "times"), 0));
    int64_t span = k * STEP_MS - oldest;
    assert_true(span <= 24 * 3600 * 1000 + PS_HISTORY_BUCKET_MS);
    assert_true(span >= 24 * 3600 * 1000 - PS_HISTORY_BUCKET_MS);
    assert_null(json_object_get(json_object_get(r, "pools"), "b"));
    assert_non_null(json_object_get(json_object_get(r, "pools"), "a"));
    json_decref(r);
    ps_history_free(h);
    ps_pool_tree_free(tree);
}

static void test_query_errors(void **state)
{
    (void)state;
    struct ps_history *h;
    assert_int_equal(ps_history_new(&h), 0);
    struct ps_error err;
    ps_error_init(&err);
    json_t *out = NULL;
    assert_int_equal(ps_history_query(h, "physical", NULL, &out, &err), PS_ENOENT);
    assert_non_null(strstr(err.msg, "physical"));
    static const char *const names[] = {"a"}, *const parents[] = {NULL};
    struct ps_pool_tree *tree = tree_with(names, parents, 1);
    sample(h, tree, 0);
    json_t *bad = json_string("a");
    ps_error_init(&err);
    assert_int_equal(ps_history_query(h, "physical", bad, &out, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pools: must be a list"));
    json_decref(bad);
    bad = json_loads("[1]", 0, NULL);
    ps_error_init(&err);
    assert_int_equal(ps_history_query(h, "physical", bad, &out, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pools/0"));
    json_decref(bad);
    assert_null(out);
    ps_history_free(h);
    ps_pool_tree_free(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recent_and_buckets),
        cmocka_unit_test(test_gaps_drop_and_bound),
        cmocka_unit_test(test_restore),
        cmocka_unit_test(test_query_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
