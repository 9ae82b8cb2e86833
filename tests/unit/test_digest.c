/* Tests of the log digest and the histogram digest: the upstream vector read from its file,
 * hand-computed walks, a brute-force check of the quantile's guarantee, and validation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "core/error.h"

#define VECTOR_PATH PS_TEST_DATA_DIR "/vectors/log-digest.json"

static void test_log_digest_vectors(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *root = json_load_file(VECTOR_PATH, 0, &jerr);
    if (!root)
        print_error("%s: %s\n", VECTOR_PATH, jerr.text);
    assert_non_null(root);
    json_t *cases = json_object_get(root, "cases");
    assert_true(json_array_size(cases) >= 5);

    size_t i;
    json_t *c;
    int checked = 0;
    json_array_foreach(cases, i, c) {
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *jcfg = json_object_get(c, "config");
        struct ps_log_digest_config cfg;
        ps_log_digest_config_init(&cfg);
        cfg.lower_bound = json_number_value(json_object_get(jcfg, "lower_bound"));
        cfg.upper_bound = json_number_value(json_object_get(jcfg, "upper_bound"));
        json_t *prec = json_object_get(jcfg, "relative_precision");
        if (prec)
            cfg.relative_precision = json_number_value(prec);
        json_t *def = json_object_get(jcfg, "default_value");
        if (def) {
            cfg.has_default_value = true;
            cfg.default_value = json_number_value(def);
        }

        struct ps_log_digest d;
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_log_digest_init(&d, &cfg, &err);
        if (rc != 0)
            print_error("%s: %s\n", name, err.msg);
        assert_int_equal(rc, 0);
        assert_int_equal(d.bucket_count, json_integer_value(json_object_get(c, "bucket_count")));

        size_t j;
        json_t *sample;
        json_array_foreach(json_object_get(c, "samples"), j, sample)
            assert_true(ps_log_digest_add_sample(&d, json_number_value(sample)));
        assert_int_equal(d.sample_count, json_array_size(json_object_get(c, "samples")));

        double tol = json_number_value(json_object_get(c, "tolerance"));
        assert_true(tol > 0 && tol <= 1e-12);
        const char *key;
        json_t *want;
        json_object_foreach(json_object_get(c, "quantiles"), key, want) {
            double alpha = strtod(key, NULL);
            double got = ps_log_digest_quantile(&d, alpha);
            if (fabs(got - json_number_value(want)) > tol)
                print_error("%s: q(%s) = %.17g, vector %.17g\n", name, key, got,
                            json_number_value(want));
            assert_true(fabs(got - json_number_value(want)) <= tol);
            checked++;
        }
        ps_log_digest_release(&d);
    }
    assert_true(checked >= 11);
    json_decref(root);
}

/* Buckets [1,2) [2,4) [4,8) [8,..) for L = 1, U = 10, step 2, walked by hand. */
static void test_log_digest_walk_by_hand(void **state)
{
    (void)state;
    struct ps_log_digest_config cfg;
    ps_log_digest_config_init(&cfg);
    cfg.lower_bound = 1;
    cfg.upper_bound = 10;
    cfg.relative_precision = 1.0;
    struct ps_log_digest d;
    assert_int_equal(ps_log_digest_init(&d, &cfg, NULL), 0);
    assert_int_equal(d.bucket_count, 4); /* ceil(log2(10)) */
    assert_true(ps_log_digest_quantile(&d, 0.5) == 1.0); /* empty, no default: L */

    /* Below L: 0.3 has index -1.7 -> (int) -1 -> clamped to 0; 0.7 has -0.51 -> 0. */
    const double in[] = {1.5, 1.2, 0.3, 0.7, 3, 5, 9, 100};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        assert_true(ps_log_digest_add_sample(&d, in[i]));
    /* Discarded: ln of zero is -inf, of a negative NaN, and infinity is out of range. */
    assert_false(ps_log_digest_add_sample(&d, 0.0));
    assert_false(ps_log_digest_add_sample(&d, -1.0));
    assert_false(ps_log_digest_add_sample(&d, NAN));
    assert_false(ps_log_digest_add_sample(&d, INFINITY));
    assert_int_equal(d.sample_count, 8);
    assert_int_equal(d.buckets[0], 4);
    assert_int_equal(d.buckets[1], 1);
    assert_int_equal(d.buckets[2], 1);
    assert_int_equal(d.buckets[3], 2);

    assert_true(ps_log_digest_quantile(&d, 0.0) == 1.0);
    assert_true(ps_log_digest_quantile(&d, 0.1) == 2.0);
    /* alpha * n == 4 is reached exactly before bucket 1: check before adding returns 2. */
    assert_true(ps_log_digest_quantile(&d, 0.5) == 2.0);
    assert_true(ps_log_digest_quantile(&d, 0.625) == 4.0);
    assert_true(ps_log_digest_quantile(&d, 0.75) == 8.0);
    /* Reached only by adding the last bucket: the walk ends and returns U, not 16. */
    assert_true(ps_log_digest_quantile(&d, 0.76) == 10.0);
    assert_true(ps_log_digest_quantile(&d, 1.0) == 10.0);

    ps_log_digest_reset(&d);
    assert_int_equal(d.sample_count, 0);
    assert_int_equal(d.buckets[0], 0);
    assert_int_equal(d.bucket_count, 4);
    assert_true(ps_log_digest_quantile(&d, 0.9) == 1.0);
    assert_true(ps_log_digest_add_sample(&d, 5));
    assert_true(ps_log_digest_quantile(&d, 0.9) == 8.0);
    ps_log_digest_release(&d);
    ps_log_digest_release(&d);
}

/* The value walks by repeated multiplication: after 44 buckets it is 0.5 * 1.01 * ... * 1.01,
 * which differs from 0.5 * pow(1.01, 44) in the last bits. */
static void test_log_digest_repeated_multiplication(void **state)
{
    (void)state;
    struct ps_log_digest_config cfg;
    ps_log_digest_config_init(&cfg);
    cfg.lower_bound = 0.5;
    cfg.upper_bound = 1.0;
    struct ps_log_digest d;
    assert_int_equal(ps_log_digest_init(&d, &cfg, NULL), 0);
    ps_log_digest_add_sample(&d, 0.77);
    double want = 0.5;
    for (int i = 0; i < 44; i++)
        want *= 1.01;
    assert_true(ps_log_digest_quantile(&d, 0.5) == want);
    assert_true(want != 0.5 * pow(1.01, 44));
    ps_log_digest_release(&d);
}

/* Upstream TestCoincidingBounds: one bucket; any alpha > 0 ends the walk and returns U. */
static void test_log_digest_coinciding_bounds(void **state)
{
    (void)state;
    struct ps_log_digest_config cfg;
    ps_log_digest_config_init(&cfg);
    cfg.lower_bound = 1.0;
    cfg.upper_bound = 1.0;
    struct ps_log_digest d;
    assert_int_equal(ps_log_digest_init(&d, &cfg, NULL), 0);
    assert_int_equal(d.bucket_count, 1);
    for (int i = 0; i < 1000; i++)
        ps_log_digest_add_sample(&d, 0.5 + i / 1000.0);
    const double alphas[] = {0.0, 0.25, 0.5, 0.75, 1.0};
    for (int i = 0; i < 5; i++)
        assert_true(ps_log_digest_quantile(&d, alphas[i]) == 1.0);
    ps_log_digest_release(&d);
}

/* Index out of the int32 range: with precision 1e-9, ln(0.01) / ln(1 + 1e-9) is about
 * -4.6e9 and the sample is dropped, while 0.5 (about -6.9e8) still counts in bucket 0. */
static void test_log_digest_discards_out_of_int32(void **state)
{
    (void)state;
    struct ps_log_digest_config cfg;
    ps_log_digest_config_init(&cfg);
    cfg.lower_bound = 1.0;
    cfg.upper_bound = 1.0000001;
    cfg.relative_precision = 1e-9;
    struct ps_log_digest d;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_log_digest_init(&d, &cfg, &err), 0);
    assert_false(ps_log_digest_add_sample(&d, 0.01));
    assert_false(ps_log_digest_add_sample(&d, 100.0));
    assert_true(ps_log_digest_add_sample(&d, 0.5));
    assert_true(ps_log_digest_add_sample(&d, 1.5));
    assert_int_equal(d.sample_count, 2);
    assert_int_equal(d.buckets[0], 1);
    assert_int_equal(d.buckets[d.bucket_count - 1], 1);
    ps_log_digest_release(&d);
}

/* Deterministic pseudo-random numbers in [0, 1) (64-bit LCG, top 53 bits). */
static double next_uniform(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static int count_below(const double *v, int n, double x)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += v[i] < x;
    return c;
}

/* Brute force against the digest's promise: q is an upper bound of the alpha-quantile within
 * one step: at least alpha*n samples are below q, fewer than alpha*n below q / step. */
static void test_log_digest_against_brute_force(void **state)
{
    (void)state;
    enum { N = 5000 };
    static double v[N];
    struct ps_log_digest_config cfg;
    ps_log_digest_config_init(&cfg);
    cfg.lower_bound = 0.05;
    cfg.upper_bound = 1.0;
    struct ps_log_digest d;
    assert_int_equal(ps_log_digest_init(&d, &cfg, NULL), 0);
    uint64_t seed = 42;
    for (int i = 0; i < N; i++) {
        /* skewed towards small values, all inside [L, U) */
        double u = next_uniform(&seed);
        v[i] = 0.05 + 0.9 * u * u;
        ps_log_digest_add_sample(&d, v[i]);
    }
    for (int k = 1; k < 100; k++) {
        double alpha = k / 100.0;
        double q = ps_log_digest_quantile(&d, alpha);
        assert_true(count_below(v, N, q * (1 + 1e-9)) >= alpha * N);
        assert_true(count_below(v, N, q / d.step * (1 - 1e-9)) < alpha * N);
    }
    /* Upstream's uniform fixture, with a deterministic grid instead of mt19937: 25% of the
     * samples below L, 25% above U (log-near: within a factor of 1.01^2). */
    struct ps_log_digest g;
    cfg.lower_bound = 0.5;
    assert_int_equal(ps_log_digest_init(&g, &cfg, NULL), 0);
    for (int i = 0; i < 10000; i++)
        ps_log_digest_add_sample(&g, 0.25 + (i + 0.5) / 10000.0);
    const double alphas[] = {1.0, 0.75, 0.5, 0.25, 0.0};
    const double near[] = {1.0, 1.0, 0.75, 0.5, 0.5};
    for (int i = 0; i < 5; i++) {
        double q = ps_log_digest_quantile(&g, alphas[i]);
        assert_true(q < near[i] * 1.01 * 1.01 && near[i] < q * 1.01 * 1.01);
    }
    ps_log_digest_release(&g);
    ps_log_digest_release(&d);
}

static void expect_log_error(struct ps_log_digest_config cfg, const char *needle)
{
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_log_digest_config_validate(&cfg, &err), PS_EINVAL);
    if (!strstr(err.msg, needle))
        print_error("message \"%s\" lacks \"%s\"\n", err.msg, needle);
    assert_non_null(strstr(err.msg, needle));
    struct ps_log_digest d;
    ps_error_init(&err);
    assert_int_equal(ps_log_digest_init(&d, &cfg, &err), PS_EINVAL);
    assert_null(d.buckets);
    ps_log_digest_release(&d);
}

static void test_log_digest_validation(void **state)
{
    (void)state;
    struct ps_log_digest_config base, c;
    ps_log_digest_config_init(&base);
    assert_true(base.relative_precision == 0.01);
    assert_int_equal(ps_log_digest_config_validate(&base, NULL), PS_EINVAL); /* bounds unset */
    base.lower_bound = 0.05;
    base.upper_bound = 1.0;
    assert_int_equal(ps_log_digest_config_validate(&base, NULL), 0);

    c = base;
    c.relative_precision = 0;
    expect_log_error(c, "relative_precision is 0");
    c = base;
    c.relative_precision = NAN;
    expect_log_error(c, "relative_precision is nan");
    c = base;
    c.lower_bound = 0;
    expect_log_error(c, "lower_bound is 0");
    c = base;
    c.upper_bound = -1;
    expect_log_error(c, "upper_bound is -1");
    c = base;
    c.upper_bound = 0.01;
    expect_log_error(c, "upper_bound 0.01 is below lower_bound 0.05");
    /* ln(1000) / ln(1.005) = 1385 buckets */
    c = base;
    c.lower_bound = 0.001;
    c.relative_precision = 0.005;
    expect_log_error(c, "bucket count 1385");
    expect_log_error(c, "more than 1000");
    /* A user job digest floor far below the default: ln(1e5) / ln(1.01) = 1157 buckets. */
    c = base;
    c.lower_bound = 1e-5;
    expect_log_error(c, "more than 1000");
    c = base;
    c.has_default_value = true;
    c.default_value = 1.5;
    expect_log_error(c, "default_value 1.5 must be between lower_bound 0.05 and upper_bound 1");
    c.default_value = 0.01;
    expect_log_error(c, "default_value 0.01");
    /* The limits themselves are fine: default at a bound, 1000 buckets or fewer. */
    c = base;
    c.has_default_value = true;
    c.default_value = 1.0;
    assert_int_equal(ps_log_digest_config_validate(&c, NULL), 0);
    c = base;
    c.lower_bound = 1.0;
    c.upper_bound = exp(999.5 * log(1.01));
    assert_int_equal(ps_log_digest_config_validate(&c, NULL), 0);
    struct ps_log_digest d;
    assert_int_equal(ps_log_digest_init(&d, &c, NULL), 0);
    assert_int_equal(d.bucket_count, 1000);
    ps_log_digest_release(&d);
}

/* Histogram buckets of 0.25 over [0, 1]: 0, 0.25, 0.5, 0.75, 1 (all exact in binary). */
static void test_histogram_digest_walk_by_hand(void **state)
{
    (void)state;
    struct ps_histogram_digest_config cfg;
    ps_histogram_digest_config_init(&cfg);
    assert_true(cfg.absolute_precision == 0.01);
    assert_true(cfg.lower_bound == 0.0 && cfg.upper_bound == 1.0);
    cfg.absolute_precision = 0.25;
    struct ps_histogram_digest d;
    assert_int_equal(ps_histogram_digest_init(&d, &cfg, NULL), 0);
    assert_int_equal(d.bucket_count, 5);
    assert_true(ps_histogram_digest_quantile(&d, 0.5) == 0.0); /* empty, no default: L */

    /* 0.1 -> round(0.4) = 0; 0.13 -> round(0.52) = 1; 0.375 -> round(1.5) = 2 (half away
     * from zero); 0.9 -> round(3.6) = 4; 2 clamps to 1 -> 4; -5 clamps to 0 -> 0. */
    const double in[] = {0.1, 0.13, 0.375, 0.9, 2.0, -5.0};
    for (size_t i = 0; i < 6; i++)
        assert_true(ps_histogram_digest_add_sample(&d, in[i]));
    assert_false(ps_histogram_digest_add_sample(&d, NAN));
    assert_false(ps_histogram_digest_add_sample(&d, INFINITY));
    assert_false(ps_histogram_digest_add_sample(&d, -INFINITY));
    assert_int_equal(d.sample_count, 6);
    const int64_t want[] = {2, 1, 1, 0, 2};
    for (int i = 0; i < 5; i++)
        assert_int_equal(d.buckets[i], want[i]);

    /* Check after adding: alpha * n == 2 is met by bucket 0 itself. */
    assert_true(ps_histogram_digest_quantile(&d, 0.0) == 0.0);
    assert_true(ps_histogram_digest_quantile(&d, 2.0 / 6.0 - 1e-9) == 0.0);
    assert_true(ps_histogram_digest_quantile(&d, 0.5) == 0.25);
    assert_true(ps_histogram_digest_quantile(&d, 0.6) == 0.5);
    assert_true(ps_histogram_digest_quantile(&d, 0.7) == 1.0);
    assert_true(ps_histogram_digest_quantile(&d, 1.0) == 1.0);
    assert_true(ps_histogram_digest_quantile(&d, 1.5) == 1.0); /* walk ends: U */

    ps_histogram_digest_reset(&d);
    assert_int_equal(d.sample_count, 0);
    assert_true(ps_histogram_digest_quantile(&d, 0.5) == 0.0);
    ps_histogram_digest_release(&d);

    cfg.has_default_value = true;
    cfg.default_value = 0.75;
    assert_int_equal(ps_histogram_digest_init(&d, &cfg, NULL), 0);
    assert_true(ps_histogram_digest_quantile(&d, 0.5) == 0.75);
    ps_histogram_digest_release(&d);
}

/* Upstream THistogramDigestTest fixtures (EXPECT_NEAR with 0.01). */
static void test_histogram_digest_upstream_fixtures(void **state)
{
    (void)state;
    struct ps_histogram_digest_config cfg;
    ps_histogram_digest_config_init(&cfg);
    struct ps_histogram_digest d;
    assert_int_equal(ps_histogram_digest_init(&d, &cfg, NULL), 0);
    assert_int_equal(d.bucket_count, 101);

    const double fixture[] = {0.77, -0.117, 1.17};
    const double near[][3] = {{0.0, 0.77, 0.77}, {0.0, 0.0, 0.0}, {0.0, 1.0, 1.0}};
    for (int f = 0; f < 3; f++) {
        ps_histogram_digest_reset(&d);
        for (int i = 0; i < 10000; i++)
            ps_histogram_digest_add_sample(&d, fixture[f]);
        assert_true(fabs(ps_histogram_digest_quantile(&d, 0.0) - near[f][0]) <= 0.01);
        assert_true(fabs(ps_histogram_digest_quantile(&d, 0.5) - near[f][1]) <= 0.01);
        assert_true(fabs(ps_histogram_digest_quantile(&d, 1.0) - near[f][2]) <= 0.01);
    }
    /* Uniform on [-0.5, 1.5] as a grid: a quarter below L, a quarter above U. */
    ps_histogram_digest_reset(&d);
    for (int i = 0; i < 10000; i++)
        ps_histogram_digest_add_sample(&d, -0.5 + 2.0 * (i + 0.5) / 10000.0);
    const double alphas[] = {1.0, 0.75, 0.5, 0.25, 0.0};
    const double want[] = {1.0, 1.0, 0.5, 0.0, 0.0};
    for (int i = 0; i < 5; i++)
        assert_true(fabs(ps_histogram_digest_quantile(&d, alphas[i]) - want[i]) <= 0.01);
    ps_histogram_digest_release(&d);

    /* Coinciding bounds: a single bucket, every answer is 1. */
    cfg.lower_bound = cfg.upper_bound = 1.0;
    assert_int_equal(ps_histogram_digest_init(&d, &cfg, NULL), 0);
    assert_int_equal(d.bucket_count, 1);
    for (int i = 0; i < 1000; i++)
        ps_histogram_digest_add_sample(&d, 0.5 + i / 1000.0);
    for (int i = 0; i < 5; i++)
        assert_true(ps_histogram_digest_quantile(&d, alphas[i]) == 1.0);
    ps_histogram_digest_release(&d);
}

static void expect_histogram_error(struct ps_histogram_digest_config cfg, const char *needle)
{
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_histogram_digest_config_validate(&cfg, &err), PS_EINVAL);
    if (!strstr(err.msg, needle))
        print_error("message \"%s\" lacks \"%s\"\n", err.msg, needle);
    assert_non_null(strstr(err.msg, needle));
    struct ps_histogram_digest d;
    assert_int_equal(ps_histogram_digest_init(&d, &cfg, NULL), PS_EINVAL);
    ps_histogram_digest_release(&d);
}

static void test_histogram_digest_validation(void **state)
{
    (void)state;
    struct ps_histogram_digest_config base, c;
    ps_histogram_digest_config_init(&base);
    assert_int_equal(ps_histogram_digest_config_validate(&base, NULL), 0);
    c = base;
    c.absolute_precision = 0;
    expect_histogram_error(c, "absolute_precision is 0");
    c = base;
    c.upper_bound = -0.5;
    expect_histogram_error(c, "upper_bound -0.5 must be greater than or equal to lower_bound 0");
    c = base;
    c.lower_bound = -INFINITY;
    expect_histogram_error(c, "lower_bound is -inf");
    c = base;
    c.absolute_precision = 0.00009;
    expect_histogram_error(c, "more than 10000");
    c = base;
    c.has_default_value = true;
    c.default_value = 2;
    expect_histogram_error(c, "default_value 2");
    /* 10000 buckets of width is the limit: round(10000) + 1 = 10001 counters. */
    c = base;
    c.absolute_precision = 1.0 / 8192;
    c.upper_bound = 10000.0 / 8192;
    struct ps_histogram_digest d;
    assert_int_equal(ps_histogram_digest_init(&d, &c, NULL), 0);
    assert_int_equal(d.bucket_count, 10001);
    assert_true(ps_histogram_digest_add_sample(&d, 1e9));
    assert_int_equal(d.buckets[10000], 1);
    ps_histogram_digest_release(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_digest_vectors),
        cmocka_unit_test(test_log_digest_walk_by_hand),
        cmocka_unit_test(test_log_digest_repeated_multiplication),
        cmocka_unit_test(test_log_digest_coinciding_bounds),
        cmocka_unit_test(test_log_digest_discards_out_of_int32),
        cmocka_unit_test(test_log_digest_against_brute_force),
        cmocka_unit_test(test_log_digest_validation),
        cmocka_unit_test(test_histogram_digest_walk_by_hand),
        cmocka_unit_test(test_histogram_digest_upstream_fixtures),
        cmocka_unit_test(test_histogram_digest_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
