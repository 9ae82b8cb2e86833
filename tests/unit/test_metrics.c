/* The Prometheus registry: exact exposition text, escaping, order, validation, threads. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/metrics.h"

static char *render(struct ps_metrics *reg)
{
    char *text;
    size_t len;
    assert_int_equal(ps_metrics_render(reg, &text, &len, NULL), 0);
    assert_int_equal(strlen(text), len);
    return text;
}

static void test_exact_text(void **state)
{
    (void)state;
    struct ps_metrics *reg;
    assert_int_equal(ps_metrics_new(&reg, NULL), 0);
    struct ps_metric_family *hb, *up, *lat, *pools;
    static const char *const status_labels[] = { "tree", "status" };
    static const char *const pool_labels[] = { "pool" };
    static const double bounds[] = { 0.005, 0.01, 0.1, 1 };
    /* Registered out of order on purpose: output is sorted by name. */
    assert_int_equal(ps_metrics_histogram(reg, "ps_heartbeat_seconds", "Heartbeat latency.", 0,
                                          NULL, bounds, 4, &lat, NULL), 0);
    assert_int_equal(ps_metrics_counter(reg, "ps_heartbeats_total",
                                        "Heartbeats by tree\\status.\nSecond line.", 2,
                                        status_labels, &hb, NULL), 0);
    assert_int_equal(ps_metrics_gauge(reg, "ps_up", "Whether the scheduler is up.", 0, NULL,
                                      &up, NULL), 0);
    assert_int_equal(ps_metrics_gauge(reg, "ps_pool_fair_share", "Fair share per pool.", 1,
                                      pool_labels, &pools, NULL), 0);

    struct ps_metric *m;
    const char *v1[] = { "physical", "ok" };
    const char *v2[] = { "gpu", "ok" };
    const char *v3[] = { "physical", "error \"quoted\" \\ back\nslash" };
    assert_int_equal(ps_metric_family_get(hb, v1, &m, NULL), 0);
    ps_metric_add(m, 41);
    ps_metric_add(m, 1);
    assert_int_equal(ps_metric_family_get(hb, v2, &m, NULL), 0);
    ps_metric_add(m, 0.5);
    assert_int_equal(ps_metric_family_get(hb, v3, &m, NULL), 0);
    ps_metric_add(m, 3);
    assert_int_equal(ps_metric_family_get(hb, v1, &m, NULL), 0);   /* the same series again */
    assert_true(ps_metric_value(m) == 42);

    assert_int_equal(ps_metric_family_get(up, NULL, &m, NULL), 0);
    ps_metric_set(m, 1);
    const char *p1[] = { "research" };
    assert_int_equal(ps_metric_family_get(pools, p1, &m, NULL), 0);
    ps_metric_set(m, 0.1);
    ps_metric_add(m, 0.2);

    assert_int_equal(ps_metric_family_get(lat, NULL, &m, NULL), 0);
    ps_metric_observe(m, 0.005);    /* le is inclusive */
    ps_metric_observe(m, 0.007);
    ps_metric_observe(m, 0.5);
    ps_metric_observe(m, 30);
    ps_metric_observe(m, NAN);      /* ignored */

    char *text = render(reg);
    const char *want =
        "# HELP ps_heartbeat_seconds Heartbeat latency.\n"
        "# TYPE ps_heartbeat_seconds histogram\n"
        "ps_heartbeat_seconds_bucket{le=\"0.005\"} 1\n"
        "ps_heartbeat_seconds_bucket{le=\"0.01\"} 2\n"
        "ps_heartbeat_seconds_bucket{le=\"0.1\"} 2\n"
        "ps_heartbeat_seconds_bucket{le=\"1\"} 3\n"
        "ps_heartbeat_seconds_bucket{le=\"+Inf\"} 4\n"
        "ps_heartbeat_seconds_sum 30.512\n"
        "ps_heartbeat_seconds_count 4\n"
        "# HELP ps_heartbeats_total Heartbeats by tree\\\\status.\\nSecond line.\n"
        "# TYPE ps_heartbeats_total counter\n"
        "ps_heartbeats_total{tree=\"gpu\",status=\"ok\"} 0.5\n"
        "ps_heartbeats_total{tree=\"physical\",status=\"error \\\"quoted\\\" \\\\ back\\nslash\"} 3\n"
        "ps_heartbeats_total{tree=\"physical\",status=\"ok\"} 42\n"
        "# HELP ps_pool_fair_share Fair share per pool.\n"
        "# TYPE ps_pool_fair_share gauge\n"
        "ps_pool_fair_share{pool=\"research\"} 0.30000000000000004\n"
        "# HELP ps_up Whether the scheduler is up.\n"
        "# TYPE ps_up gauge\n"
        "ps_up 1\n";
    assert_string_equal(text, want);
    free(text);

    /* Rendering twice gives the same bytes. */
    text = render(reg);
    assert_string_equal(text, want);
    free(text);
    ps_metrics_free(reg);
}

static void test_empty_and_labelled_families(void **state)
{
    (void)state;
    struct ps_metrics *reg;
    assert_int_equal(ps_metrics_new(&reg, NULL), 0);
    char *text = render(reg);
    assert_string_equal(text, "");
    free(text);
    struct ps_metric_family *f, *h;
    static const char *const l[] = { "op" };
    static const double b[] = { 1, 2 };
    assert_int_equal(ps_metrics_counter(reg, "a_total", "", 1, l, &f, NULL), 0);
    assert_int_equal(ps_metrics_histogram(reg, "b", "h", 1, l, b, 2, &h, NULL), 0);
    text = render(reg);
    assert_string_equal(text, "# HELP a_total \n# TYPE a_total counter\n"
                              "# HELP b h\n# TYPE b histogram\n");
    free(text);
    struct ps_metric *m;
    const char *v[] = { "x" };
    assert_int_equal(ps_metric_family_get(h, v, &m, NULL), 0);
    ps_metric_observe(m, -1e300);
    text = render(reg);
    assert_non_null(strstr(text, "b_bucket{op=\"x\",le=\"1\"} 1\n"
                                 "b_bucket{op=\"x\",le=\"2\"} 1\n"
                                 "b_bucket{op=\"x\",le=\"+Inf\"} 1\n"
                                 "b_sum{op=\"x\"} -1e+300\n"
                                 "b_count{op=\"x\"} 1\n"));
    free(text);
    ps_metrics_free(reg);
}

/* A removed series leaves the output; the others stay in order; the same labels make a new
 * series, from zero. */
static void test_remove_series(void **state)
{
    (void)state;
    struct ps_metrics *reg;
    assert_int_equal(ps_metrics_new(&reg, NULL), 0);
    struct ps_metric_family *f;
    static const char *const l[] = { "pool" };
    assert_int_equal(ps_metrics_gauge(reg, "g", "x", 1, l, &f, NULL), 0);
    const char *names[] = { "a", "b", "c" };
    struct ps_metric *m[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ps_metric_family_get(f, &names[i], &m[i], NULL), 0);
        ps_metric_set(m[i], i + 1);
    }
    assert_string_equal(ps_metric_label(m[1], 0), "b");
    ps_metric_remove(m[1]);
    char *text = render(reg);
    assert_string_equal(text, "# HELP g x\n# TYPE g gauge\ng{pool=\"a\"} 1\ng{pool=\"c\"} 3\n");
    free(text);
    struct ps_metric *again;
    assert_int_equal(ps_metric_family_get(f, &names[1], &again, NULL), 0);
    assert_true(ps_metric_value(again) == 0);
    ps_metrics_free(reg);
}

static void test_validation(void **state)
{
    (void)state;
    struct ps_metrics *reg;
    assert_int_equal(ps_metrics_new(&reg, NULL), 0);
    struct ps_metric_family *f, *g;
    struct ps_error err;
    static const char *const le[] = { "le" };
    static const char *const dup[] = { "a", "a" };
    static const char *const reserved[] = { "__name" };
    static const char *const ok[] = { "a" };
    static const double unsorted[] = { 1, 1 };
    static const double inf[] = { 1, INFINITY };
    static const double b1[] = { 1 };

    ps_error_init(&err);
    assert_int_equal(ps_metrics_counter(reg, "1bad", "", 0, NULL, &f, &err), PS_EINVAL);
    assert_string_equal(err.msg, "metric name '1bad' is not [a-zA-Z_:][a-zA-Z0-9_:]*");
    assert_int_equal(ps_metrics_counter(reg, "has-dash", "", 0, NULL, &f, NULL), PS_EINVAL);
    assert_int_equal(ps_metrics_counter(reg, "x", "", 2, dup, &f, NULL), PS_EINVAL);
    assert_int_equal(ps_metrics_counter(reg, "x", "", 1, reserved, &f, NULL), PS_EINVAL);
    assert_int_equal(ps_metrics_histogram(reg, "h", "", 1, le, b1, 1, &f, NULL), PS_EINVAL);
    assert_int_equal(ps_metrics_histogram(reg, "h", "", 0, NULL, NULL, 0, &f, NULL), PS_EINVAL);
    ps_error_init(&err);
    assert_int_equal(ps_metrics_histogram(reg, "h", "", 0, NULL, unsorted, 2, &f, &err),
                     PS_EINVAL);
    assert_string_equal(err.msg,
                        "histogram h: bucket bounds must increase strictly, but bound 1 is 1 after 1");
    assert_int_equal(ps_metrics_histogram(reg, "h", "", 0, NULL, inf, 2, &f, NULL), PS_EINVAL);

    /* Same definition: the same family; another definition: refused. */
    assert_int_equal(ps_metrics_counter(reg, "c_total", "", 1, ok, &f, NULL), 0);
    assert_int_equal(ps_metrics_counter(reg, "c_total", "other help", 1, ok, &g, NULL), 0);
    assert_ptr_equal(f, g);
    ps_error_init(&err);
    assert_int_equal(ps_metrics_gauge(reg, "c_total", "", 1, ok, &g, &err), PS_EEXIST);
    assert_int_equal(ps_metrics_counter(reg, "c_total", "", 0, NULL, &g, NULL), PS_EEXIST);

    struct ps_metric *m;
    const char *missing[] = { NULL };
    assert_int_equal(ps_metric_family_get(f, missing, &m, NULL), PS_EINVAL);
    /* Series cardinality is bounded. */
    char value[32];
    const char *vals[] = { value };
    for (int i = 0; i < PS_METRICS_MAX_SERIES; i++) {
        snprintf(value, sizeof value, "v%d", i);
        assert_int_equal(ps_metric_family_get(f, vals, &m, NULL), 0);
    }
    snprintf(value, sizeof value, "one-too-many");
    assert_int_equal(ps_metric_family_get(f, vals, &m, NULL), PS_ELIMIT);
    snprintf(value, sizeof value, "v7");
    assert_int_equal(ps_metric_family_get(f, vals, &m, NULL), 0);   /* existing still found */
    ps_metrics_free(reg);
}

static void test_format_double(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(ps_metrics_format_double(0, buf), "0");
    assert_string_equal(ps_metrics_format_double(-0.0, buf), "0");
    assert_string_equal(ps_metrics_format_double(12345678, buf), "12345678");
    assert_string_equal(ps_metrics_format_double(0.1, buf), "0.1");
    assert_string_equal(ps_metrics_format_double(1.0 / 3, buf), "0.3333333333333333");
    assert_string_equal(ps_metrics_format_double(1e20, buf), "1e+20");
    assert_string_equal(ps_metrics_format_double(INFINITY, buf), "+Inf");
    assert_string_equal(ps_metrics_format_double(-INFINITY, buf), "-Inf");
    assert_string_equal(ps_metrics_format_double(NAN, buf), "NaN");
}

struct hammer {
    struct ps_metric_family *counter, *hist;
    int id;
};

static void *hammer_thread(void *p)
{
    struct hammer *h = p;
    static const char *const names[] = { "a", "b", "c", "d" };
    for (int i = 0; i < 20000; i++) {
        struct ps_metric *m;
        const char *v[] = { names[(i + h->id) % 4] };
        if (ps_metric_family_get(h->counter, v, &m, NULL) == 0)
            ps_metric_add(m, 1);
        if (ps_metric_family_get(h->hist, NULL, &m, NULL) == 0)
            ps_metric_observe(m, (double)(i % 3));
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    struct ps_metrics *reg;
    assert_int_equal(ps_metrics_new(&reg, NULL), 0);
    struct ps_metric_family *c, *h;
    static const char *const l[] = { "k" };
    static const double b[] = { 0, 1 };
    assert_int_equal(ps_metrics_counter(reg, "hits_total", "", 1, l, &c, NULL), 0);
    assert_int_equal(ps_metrics_histogram(reg, "h", "", 0, NULL, b, 2, &h, NULL), 0);
    enum { N = 4 };
    pthread_t t[N];
    struct hammer args[N];
    for (int i = 0; i < N; i++) {
        args[i] = (struct hammer){ c, h, i };
        assert_int_equal(pthread_create(&t[i], NULL, hammer_thread, &args[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        char *text = render(reg);   /* concurrent renders must be safe */
        free(text);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    char *text = render(reg);
    assert_non_null(strstr(text, "hits_total{k=\"a\"} 20000\n"));
    assert_non_null(strstr(text, "hits_total{k=\"d\"} 20000\n"));
    /* Each thread observed 0, 1, 2, 0, 1, 2, ...: count the expected buckets. */
    int zeros = 0, ones = 0;
    for (int i = 0; i < 20000; i++) {
        zeros += i % 3 == 0;
        ones += i % 3 == 1;
    }
    char want[256];
    snprintf(want, sizeof want,
             "h_bucket{le=\"0\"} %d\nh_bucket{le=\"1\"} %d\nh_bucket{le=\"+Inf\"} 80000\n",
             N * zeros, N * (zeros + ones));
    assert_non_null(strstr(text, want));
    free(text);
    ps_metrics_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_text),
        cmocka_unit_test(test_empty_and_labelled_families),
        cmocka_unit_test(test_remove_series),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_format_double),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
