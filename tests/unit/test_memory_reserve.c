/* Tests of per-task memory reserves: defaults, learning from samples, tmpfs, the reserve factor
 * override, the overdraft sample rule, the retry rule, statistics and validation. Expected
 * numbers were computed by hand or in Python (same IEEE doubles), never by the code under test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/memory_reserve.h"

#define MIB (INT64_C(1) << 20)
#define GIB (INT64_C(1) << 30)

static void make_task(struct ps_memory_task *t, const struct ps_memory_controller_config *cfg,
                      const struct ps_memory_task_spec *spec)
{
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_memory_task_init(t, cfg, spec, &err);
    if (rc != 0)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
}

static void default_task(struct ps_memory_task *t, int64_t limit)
{
    struct ps_memory_controller_config cfg;
    struct ps_memory_task_spec spec;
    ps_memory_controller_config_init(&cfg);
    ps_memory_task_spec_init(&spec);
    spec.memory_limit_bytes = limit;
    make_task(t, &cfg, &spec);
}

static struct ps_memory_job_statistics user_stats(int64_t max_memory)
{
    struct ps_memory_job_statistics s;
    memset(&s, 0, sizeof s);
    s.has_user_job_max_memory = true;
    s.user_job_max_memory_bytes = max_memory;
    return s;
}

static void test_defaults(void **state)
{
    (void)state;
    struct ps_memory_controller_config cfg;
    ps_memory_controller_config_init(&cfg);
    assert_true(cfg.user_job_memory_digest_precision == 0.01);
    assert_true(cfg.user_job_memory_reserve_quantile == 0.95);
    assert_true(cfg.job_proxy_memory_reserve_quantile == 0.95);
    assert_true(cfg.memory_digest_resource_overdraft_factor == 1.1);
    assert_false(cfg.user_job_resource_overdraft_memory_multiplier.set);
    assert_false(cfg.job_proxy_resource_overdraft_memory_multiplier.set);
    assert_false(cfg.use_resource_overdraft_memory_multiplier_from_spec);
    assert_int_equal(cfg.footprint_memory_bytes, 128 * MIB);
    struct ps_memory_task_spec spec;
    ps_memory_task_spec_init(&spec);
    assert_int_equal(spec.memory_limit_bytes, 512 * MIB);
    assert_true(spec.user_job_memory_digest_default_value == 0.5);
    assert_true(spec.user_job_memory_digest_lower_bound == 0.05);
    assert_true(spec.job_proxy_memory_digest.lower_bound == 0.5);
    assert_true(spec.job_proxy_memory_digest.upper_bound == 2.0);
    assert_true(spec.job_proxy_memory_digest.default_value == 1.0);
    assert_true(spec.job_proxy_memory_digest.relative_precision == 0.01);
    assert_int_equal(spec.job_proxy_memory_bytes, 0);

    struct ps_memory_task t;
    make_task(&t, &cfg, &spec);
    /* The digests of semantics.md 5.2: 302 and 140 buckets. */
    assert_int_equal(t.user_job_digest.bucket_count, 302);
    assert_int_equal(t.job_proxy_digest.bucket_count, 140);
    ps_memory_task_release(&t);
}

/* No samples: the user job gets 0.5 x memory_limit, the job proxy its default factor 1. */
static void test_default_reserve(void **state)
{
    (void)state;
    struct ps_memory_task t;
    default_task(&t, GIB);
    struct ps_memory_job job;
    ps_memory_task_reserve(&t, NULL, &job);
    assert_true(job.user_job_memory_reserve_factor == 0.5);
    assert_true(job.job_proxy_memory_reserve_factor == 1.0);
    assert_int_equal(job.user_job_memory_reserve_bytes, 536870912);
    assert_int_equal(job.job_proxy_memory_reserve_bytes, 0);
    assert_int_equal(job.footprint_memory_bytes, 134217728);
    assert_int_equal(job.memory_bytes, 134217728 + 536870912);
    assert_false(job.user_job_factor_from_overdraft);
    assert_false(job.job_proxy_factor_from_overdraft);
    ps_memory_task_release(&t);
}

/* A job proxy estimate enters the total with its factor. */
static void test_reserve_with_job_proxy_estimate(void **state)
{
    (void)state;
    struct ps_memory_controller_config cfg;
    struct ps_memory_task_spec spec;
    ps_memory_controller_config_init(&cfg);
    cfg.footprint_memory_bytes = 64 * MIB;
    ps_memory_task_spec_init(&spec);
    spec.memory_limit_bytes = 1000;
    spec.job_proxy_memory_bytes = 333;
    spec.job_proxy_memory_digest.default_value = 1.5;
    struct ps_memory_task t;
    make_task(&t, &cfg, &spec);
    struct ps_memory_job job;
    ps_memory_task_reserve(&t, NULL, &job);
    /* 67108864 + trunc(333 x 1.5 = 499.5) -> 67109363, + 1000 x 0.5 -> 67109863 */
    assert_int_equal(job.job_proxy_memory_reserve_bytes, 499);
    assert_int_equal(job.memory_bytes, 67109863);
    ps_memory_task_release(&t);
}

/* Jobs that use 30% of their limit: 322122547 / 2^30 = 0.29999999981 lies in bucket 180 of
 * the user job digest (ln(6) / ln(1.01) = 180.07), so the reserve converges to the value after
 * 181 multiplications: 0.05 x 1.01^181 = 0.30278799975548687. Five early jobs at 90% (bucket
 * 290) keep the 95% quantile at 0.05 x 1.01^291 = 0.9046691381952717 until they are 5% of all. */
static void test_converges_to_quantile_above_usage(void **state)
{
    (void)state;
    const double q181 = 0.30278799975548687;
    const double q291 = 0.9046691381952717;
    struct ps_memory_task t;
    default_task(&t, GIB);
    struct ps_memory_job job;
    struct ps_memory_samples s;

    for (int i = 0; i < 5; i++) {
        ps_memory_task_reserve(&t, NULL, &job);
        struct ps_memory_job_statistics st = user_stats(966367641); /* 0.9 x 2^30 */
        ps_memory_task_add_samples(&t, &job, &st, false, &s);
        assert_true(s.user_job_added && s.user_job_counted);
        assert_false(s.job_proxy_added);
    }
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == q291);
    for (int i = 0; i < 94; i++) {
        ps_memory_task_reserve(&t, NULL, &job);
        struct ps_memory_job_statistics st = user_stats(322122547);
        ps_memory_task_add_samples(&t, &job, &st, false, &s);
        assert_true(s.user_job_sample == 322122547.0 / 1073741824.0);
    }
    /* 94 of 99 samples at 30%: 0.95 x 99 = 94.05 needs the 90% bucket still. */
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == q291);
    ps_memory_task_reserve(&t, NULL, &job);
    assert_int_equal(job.user_job_memory_reserve_bytes, 971381090);
    struct ps_memory_job_statistics st = user_stats(322122547);
    ps_memory_task_add_samples(&t, &job, &st, false, NULL);
    /* 95 of 100: the walk stops right after the 30% bucket. */
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == q181);
    for (int i = 0; i < 1000; i++)
        ps_memory_task_add_samples(&t, &job, &st, false, NULL);
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == q181);

    ps_memory_task_reserve(&t, NULL, &job);
    assert_true(job.user_job_memory_reserve_factor == q181);
    assert_int_equal(job.user_job_memory_reserve_bytes, 325116139);
    assert_int_equal(job.memory_bytes, 459333867);
    /* The job proxy digest saw nothing: still its default. */
    assert_true(job.job_proxy_memory_reserve_factor == 1.0);
    ps_memory_task_release(&t);
}

/* tmpfs raises the floor and the default of the user job digest to tmpfs / memory_limit. */
static void test_tmpfs_raises_floor(void **state)
{
    (void)state;
    struct ps_memory_controller_config cfg;
    struct ps_memory_task_spec spec;
    ps_memory_controller_config_init(&cfg);
    ps_memory_task_spec_init(&spec);
    spec.memory_limit_bytes = GIB;
    spec.tmpfs_size_bytes = 256 * MIB;
    struct ps_memory_task t;
    make_task(&t, &cfg, &spec);
    assert_true(t.user_job_digest_lower_bound == 0.25);
    assert_true(t.user_job_digest_default_value == 0.5); /* already above 0.25 */
    ps_memory_task_release(&t);

    /* A floor above the default lifts the default with it. */
    spec.tmpfs_size_bytes = 0;
    spec.user_job_memory_digest_lower_bound = 0.7;
    make_task(&t, &cfg, &spec);
    assert_true(t.user_job_digest_default_value == 0.7);
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == 0.7);
    ps_memory_task_release(&t);
    spec.user_job_memory_digest_lower_bound = 0.05;

    spec.tmpfs_size_bytes = 768 * MIB;
    make_task(&t, &cfg, &spec);
    assert_true(t.user_job_digest_lower_bound == 0.75);
    assert_true(t.user_job_digest_default_value == 0.75);
    struct ps_memory_job job;
    ps_memory_task_reserve(&t, NULL, &job);
    assert_true(job.user_job_memory_reserve_factor == 0.75);
    assert_int_equal(job.user_job_memory_reserve_bytes, 805306368);
    /* Jobs using 10% cannot pull the reserve below the tmpfs: bucket 0, value L x 1.01. */
    struct ps_memory_job_statistics st = user_stats(GIB / 10);
    for (int i = 0; i < 50; i++)
        ps_memory_task_add_samples(&t, &job, &st, false, NULL);
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == 0.75 * 1.01);
    ps_memory_task_reserve(&t, NULL, &job);
    assert_int_equal(job.user_job_memory_reserve_bytes, 813359431);
    ps_memory_task_release(&t);

    /* tmpfs equal to the limit: the digest collapses to [1, 1]. */
    spec.tmpfs_size_bytes = GIB;
    make_task(&t, &cfg, &spec);
    assert_int_equal(t.user_job_digest.bucket_count, 1);
    ps_memory_task_reserve(&t, NULL, &job);
    assert_int_equal(job.user_job_memory_reserve_bytes, GIB);
    ps_memory_task_release(&t);

    /* The reserve in bytes never drops below the tmpfs size: 15/22 x 22 is 14.999..., which
     * truncates to 14 bytes, so the max with the tmpfs size decides. */
    spec.memory_limit_bytes = 22;
    spec.tmpfs_size_bytes = 15;
    make_task(&t, &cfg, &spec);
    ps_memory_task_reserve(&t, NULL, &job);
    assert_true(job.user_job_memory_reserve_factor == 15.0 / 22.0);
    assert_int_equal(job.user_job_memory_reserve_bytes, 15);
    ps_memory_task_release(&t);
}

/* memory_reserve_factor sets both the floor and the default. */
static void test_memory_reserve_factor(void **state)
{
    (void)state;
    struct ps_memory_controller_config cfg;
    struct ps_memory_task_spec spec;
    ps_memory_controller_config_init(&cfg);
    ps_memory_task_spec_init(&spec);
    spec.memory_limit_bytes = GIB;
    spec.has_memory_reserve_factor = true;
    spec.memory_reserve_factor = 0.8;
    struct ps_memory_task t;
    make_task(&t, &cfg, &spec);
    struct ps_memory_job job;
    ps_memory_task_reserve(&t, NULL, &job);
    assert_true(job.user_job_memory_reserve_factor == 0.8);
    struct ps_memory_job_statistics st = user_stats(GIB / 10);
    for (int i = 0; i < 20; i++)
        ps_memory_task_add_samples(&t, &job, &st, false, NULL);
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == 0.8 * 1.01);
    ps_memory_task_release(&t);

    /* ignore_memory_reserve_factor_less_than_one drops a factor below 1 ... */
    spec.ignore_memory_reserve_factor_less_than_one = true;
    make_task(&t, &cfg, &spec);
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == 0.5);
    ps_memory_task_release(&t);

    /* ... but never a factor of exactly 1, which pins the reserve to the limit. */
    spec.memory_reserve_factor = 1.0;
    make_task(&t, &cfg, &spec);
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == 1.0);
    ps_memory_task_add_samples(&t, &job, &st, false, NULL);
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == 1.0);
    ps_memory_task_release(&t);
}

/* UpdateMemoryDigests with resource_overdraft. */
static void test_overdraft_sample_rule(void **state)
{
    (void)state;
    struct ps_memory_task t;
    default_task(&t, 1000);
    struct ps_memory_job job;
    ps_memory_task_reserve(&t, NULL, &job); /* factor 0.5 */
    struct ps_memory_samples s;

    /* Completed jobs add the plain ratio, even above 1. */
    struct ps_memory_job_statistics st = user_stats(1200);
    ps_memory_task_add_samples(&t, &job, &st, false, &s);
    assert_true(s.user_job_sample == 1.2);
    /* Overdraft below the limit: the plain ratio. */
    st = user_stats(900);
    ps_memory_task_add_samples(&t, &job, &st, true, &s);
    assert_true(s.user_job_sample == 0.9);
    /* Overdraft at >= 1 with factor 0.5: max(1.0, 0.55) = 1.0. */
    st = user_stats(1000);
    ps_memory_task_add_samples(&t, &job, &st, true, &s);
    assert_true(s.user_job_sample == 1.0);
    /* A retried job that ran with factor 1 and overdrafted at 1.02: max(1.02, 1 x 1.1). */
    job.user_job_memory_reserve_factor = 1.0;
    st = user_stats(1020);
    ps_memory_task_add_samples(&t, &job, &st, true, &s);
    assert_true(s.user_job_sample == 1.0 * 1.1);
    assert_true(s.user_job_counted);
    /* Exactly at the limit counts as >= 1. */
    st = user_stats(1000);
    ps_memory_task_add_samples(&t, &job, &st, true, &s);
    assert_true(s.user_job_sample == 1.0 * 1.1);
    assert_int_equal(t.user_job_digest.sample_count, 5);
    /* Four of five samples at or above U: the 95% quantile is U. */
    assert_true(ps_memory_task_user_job_reserve_factor(&t) == 1.0);

    /* A zero max memory is offered but discarded by the log digest (ln 0). */
    st = user_stats(0);
    ps_memory_task_add_samples(&t, &job, &st, false, &s);
    assert_true(s.user_job_added);
    assert_false(s.user_job_counted);
    assert_int_equal(t.user_job_digest.sample_count, 5);

    /* The job proxy sample divides by estimate + footprint (128 MiB here, estimate 0). */
    struct ps_memory_job_statistics jp;
    memset(&jp, 0, sizeof jp);
    jp.has_job_proxy_max_memory = true;
    jp.job_proxy_max_memory_bytes = 64 * MIB;
    ps_memory_task_add_samples(&t, &job, &jp, false, &s);
    assert_false(s.user_job_added);
    assert_true(s.job_proxy_added && s.job_proxy_counted);
    assert_true(s.job_proxy_sample == 0.5);
    jp.job_proxy_max_memory_bytes = 129 * MIB;
    job.job_proxy_memory_reserve_factor = 1.5;
    ps_memory_task_add_samples(&t, &job, &jp, true, &s);
    assert_true(s.job_proxy_sample == 1.5 * 1.1);
    ps_memory_task_release(&t);
}

static void overdraft_task(struct ps_memory_task *t, bool user_mult, bool proxy_mult,
                           int64_t proxy_estimate)
{
    struct ps_memory_controller_config cfg;
    struct ps_memory_task_spec spec;
    ps_memory_controller_config_init(&cfg);
    cfg.user_job_resource_overdraft_memory_multiplier.set = user_mult;
    cfg.user_job_resource_overdraft_memory_multiplier.value = 1.5;
    cfg.job_proxy_resource_overdraft_memory_multiplier.set = proxy_mult;
    cfg.job_proxy_resource_overdraft_memory_multiplier.value = 1.5;
    ps_memory_task_spec_init(&spec);
    spec.memory_limit_bytes = GIB;
    spec.job_proxy_memory_bytes = proxy_estimate;
    make_task(t, &cfg, &spec);
}

/* Without a multiplier the retry gets the upper bound at once. */
static void test_retry_at_upper_bound(void **state)
{
    (void)state;
    struct ps_memory_task t;
    overdraft_task(&t, false, false, 0);
    struct ps_memory_overdraft_state st;
    ps_memory_overdraft_state_init(&st);
    struct ps_memory_job job;
    ps_memory_task_reserve(&t, &st, &job);
    assert_int_equal(job.user_job_memory_reserve_bytes, GIB / 2);

    struct ps_memory_job_statistics stats = user_stats(GIB / 2 + 1);
    struct ps_memory_overdraft_verdict v;
    ps_memory_task_on_resource_overdraft(&t, &job, &stats, &st, &v);
    assert_true(v.user_job);
    assert_false(v.job_proxy);
    assert_false(v.by_gap);
    assert_int_equal(st.user_job_status, PS_OVERDRAFT_MULTIPLE_TIMES);
    assert_true(st.dedicated_user_job_memory_reserve_factor == 1.0);
    assert_int_equal(st.job_proxy_status, PS_OVERDRAFT_NONE);

    ps_memory_task_reserve(&t, &st, &job);
    assert_true(job.user_job_factor_from_overdraft);
    assert_false(job.job_proxy_factor_from_overdraft);
    assert_true(job.user_job_memory_reserve_factor == 1.0);
    assert_int_equal(job.user_job_memory_reserve_bytes, GIB);
    assert_int_equal(job.memory_bytes, 128 * MIB + GIB);
    /* Other work of the task keeps the digest's factor. */
    struct ps_memory_job other;
    ps_memory_task_reserve(&t, NULL, &other);
    assert_true(other.user_job_memory_reserve_factor == 0.5);
    ps_memory_task_release(&t);
}

/* With a multiplier: first min(factor x 1.5, upper bound), then the upper bound. */
static void test_retry_with_multiplier(void **state)
{
    (void)state;
    struct ps_memory_task t;
    overdraft_task(&t, true, true, 100 * MIB);
    struct ps_memory_overdraft_state st;
    ps_memory_overdraft_state_init(&st);
    struct ps_memory_job job;
    ps_memory_task_reserve(&t, &st, &job);
    struct ps_memory_job_statistics stats = user_stats(GIB);
    ps_memory_task_on_resource_overdraft(&t, &job, &stats, &st, NULL);
    assert_int_equal(st.user_job_status, PS_OVERDRAFT_ONCE);
    assert_true(st.dedicated_user_job_memory_reserve_factor == 0.75);

    ps_memory_task_reserve(&t, &st, &job);
    assert_true(job.user_job_memory_reserve_factor == 0.75);
    assert_int_equal(job.user_job_memory_reserve_bytes, 805306368);
    ps_memory_task_on_resource_overdraft(&t, &job, &stats, &st, NULL);
    assert_int_equal(st.user_job_status, PS_OVERDRAFT_MULTIPLE_TIMES);
    assert_true(st.dedicated_user_job_memory_reserve_factor == 1.0);

    /* A large first factor is capped at the upper bound even the first time. */
    struct ps_memory_overdraft_state st2;
    ps_memory_overdraft_state_init(&st2);
    job.user_job_memory_reserve_factor = 0.8;
    job.user_job_memory_reserve_bytes = (int64_t)(0.8 * (double)GIB);
    ps_memory_task_on_resource_overdraft(&t, &job, &stats, &st2, NULL);
    assert_int_equal(st2.user_job_status, PS_OVERDRAFT_ONCE);
    assert_true(st2.dedicated_user_job_memory_reserve_factor == 1.0);

    /* The job proxy: dedicated memory is estimate x factor = 100 MiB; 150 MiB overdrafts.
     * First min(1 x 1.5, 2) = 1.5, then the digest's upper bound 2. */
    struct ps_memory_overdraft_state st3;
    ps_memory_overdraft_state_init(&st3);
    ps_memory_task_reserve(&t, &st3, &job);
    assert_int_equal(job.job_proxy_memory_reserve_bytes, 100 * MIB);
    struct ps_memory_job_statistics jp = user_stats(0);
    jp.has_job_proxy_max_memory = true;
    jp.job_proxy_max_memory_bytes = 150 * MIB;
    struct ps_memory_overdraft_verdict v;
    ps_memory_task_on_resource_overdraft(&t, &job, &jp, &st3, &v);
    assert_true(v.job_proxy);
    assert_false(v.user_job);
    assert_int_equal(st3.job_proxy_status, PS_OVERDRAFT_ONCE);
    assert_true(st3.dedicated_job_proxy_memory_reserve_factor == 1.5);
    assert_int_equal(st3.user_job_status, PS_OVERDRAFT_NONE);
    ps_memory_task_reserve(&t, &st3, &job);
    assert_true(job.job_proxy_memory_reserve_factor == 1.5);
    assert_int_equal(job.job_proxy_memory_reserve_bytes, 150 * MIB);
    assert_true(job.job_proxy_factor_from_overdraft);
    assert_false(job.user_job_factor_from_overdraft);
    jp.job_proxy_max_memory_bytes = 200 * MIB;
    ps_memory_task_on_resource_overdraft(&t, &job, &jp, &st3, NULL);
    assert_int_equal(st3.job_proxy_status, PS_OVERDRAFT_MULTIPLE_TIMES);
    assert_true(st3.dedicated_job_proxy_memory_reserve_factor == 2.0);

    /* The first time too, factor x multiplier is capped at the digest's upper bound:
     * min(1.5 x 1.5, 2) = 2 (with the state still ONCE). */
    struct ps_memory_overdraft_state st4;
    ps_memory_overdraft_state_init(&st4);
    job.job_proxy_memory_reserve_factor = 1.5;
    ps_memory_task_on_resource_overdraft(&t, &job, &jp, &st4, NULL);
    assert_int_equal(st4.job_proxy_status, PS_OVERDRAFT_ONCE);
    assert_true(st4.dedicated_job_proxy_memory_reserve_factor == 2.0);
    ps_memory_task_release(&t);
}

/* Neither process above its reserve (stale statistics): the smaller gap is blamed. */
static void test_overdraft_by_gap(void **state)
{
    (void)state;
    struct ps_memory_task t;
    overdraft_task(&t, false, false, 100 * MIB);
    struct ps_memory_job job;
    ps_memory_task_reserve(&t, NULL, &job); /* user reserve 512 MiB, job proxy 100 MiB */
    struct ps_memory_job_statistics stats = user_stats(400 * MIB);
    stats.has_job_proxy_max_memory = true;
    stats.job_proxy_max_memory_bytes = 90 * MIB;
    struct ps_memory_overdraft_state st;
    struct ps_memory_overdraft_verdict v;

    ps_memory_overdraft_state_init(&st);
    ps_memory_task_on_resource_overdraft(&t, &job, &stats, &st, &v);
    assert_true(v.by_gap && v.job_proxy && !v.user_job); /* 10 MiB < 112 MiB */
    assert_int_equal(st.job_proxy_status, PS_OVERDRAFT_MULTIPLE_TIMES);
    assert_int_equal(st.user_job_status, PS_OVERDRAFT_NONE);

    stats.user_job_max_memory_bytes = 510 * MIB;
    ps_memory_overdraft_state_init(&st);
    ps_memory_task_on_resource_overdraft(&t, &job, &stats, &st, &v);
    assert_true(v.by_gap && v.user_job && !v.job_proxy); /* 2 MiB < 10 MiB */
    assert_int_equal(st.user_job_status, PS_OVERDRAFT_MULTIPLE_TIMES);

    stats.user_job_max_memory_bytes = 502 * MIB; /* a tie: 10 MiB each */
    ps_memory_overdraft_state_init(&st);
    ps_memory_task_on_resource_overdraft(&t, &job, &stats, &st, &v);
    assert_true(v.by_gap && v.job_proxy && !v.user_job);
    ps_memory_task_release(&t);

    /* Vanilla defaults (no job proxy estimate, no job proxy statistics): the job proxy's gap
     * is 0, so unless the user job is over its reserve the job proxy is blamed, as upstream. */
    overdraft_task(&t, false, false, 0);
    ps_memory_task_reserve(&t, NULL, &job);
    stats = user_stats(100 * MIB);
    ps_memory_overdraft_state_init(&st);
    ps_memory_task_on_resource_overdraft(&t, &job, &stats, &st, &v);
    assert_true(v.by_gap && v.job_proxy && !v.user_job);
    ps_memory_task_release(&t);
}

/* Where the multipliers come from. */
static void test_multiplier_source(void **state)
{
    (void)state;
    struct ps_memory_controller_config cfg;
    struct ps_memory_task_spec spec;
    ps_memory_controller_config_init(&cfg);
    cfg.user_job_resource_overdraft_memory_multiplier.set = true;
    cfg.user_job_resource_overdraft_memory_multiplier.value = 1.5;
    ps_memory_task_spec_init(&spec);
    spec.has_user_job_resource_overdraft_memory_multiplier = true;
    spec.user_job_resource_overdraft_memory_multiplier = 1.2;
    struct ps_memory_task t;
    make_task(&t, &cfg, &spec);
    assert_true(t.has_user_job_multiplier && t.user_job_multiplier == 1.5);
    assert_false(t.has_job_proxy_multiplier);
    ps_memory_task_release(&t);
    cfg.use_resource_overdraft_memory_multiplier_from_spec = true;
    make_task(&t, &cfg, &spec);
    assert_true(t.has_user_job_multiplier && t.user_job_multiplier == 1.2);
    ps_memory_task_release(&t);
}

static void test_statistics(void **state)
{
    (void)state;
    struct ps_memory_task t;
    overdraft_task(&t, false, false, 100 * MIB);
    struct ps_memory_job job;
    ps_memory_task_reserve(&t, NULL, &job);

    struct ps_stat_sample u[PS_MEMORY_USER_JOB_STAT_COUNT];
    assert_int_equal(ps_memory_user_job_statistics(&job, u), 3);
    assert_string_equal(u[0].path, "/user_job/memory_limit");
    assert_int_equal(u[0].value, GIB);
    assert_string_equal(u[1].path, "/user_job/memory_reserve");
    assert_int_equal(u[1].value, GIB / 2);
    assert_string_equal(u[2].path, "/user_job/memory_reserve_factor_x10000");
    assert_int_equal(u[2].value, 5000);

    struct ps_memory_job_statistics stats = user_stats(300 * MIB);
    stats.has_user_job_memory_reserve = true;
    stats.user_job_memory_reserve_bytes = GIB / 2;
    struct ps_stat_sample c[PS_MEMORY_CONTROLLER_STAT_MAX];
    size_t n = ps_memory_controller_statistics(&job, &stats, 90000, c);
    assert_int_equal(n, 8);
    const char *paths[] = {"/time/total",
                           "/job_proxy/estimated_memory",
                           "/job_proxy/memory_reserve",
                           "/job_proxy/cumulative_estimated_memory",
                           "/job_proxy/cumulative_memory_reserve",
                           "/job_proxy/memory_reserve_factor_x10000",
                           "/user_job/cumulative_max_memory",
                           "/user_job/cumulative_memory_reserve"};
    const int64_t values[] = {90000,          104857600,   104857600, 9437184000,
                              9437184000,     10000,       28311552000, 48318382080};
    for (size_t i = 0; i < 8; i++) {
        assert_string_equal(c[i].path, paths[i]);
        assert_int_equal(c[i].value, values[i]);
    }
    stats.has_job_proxy_max_memory = true;
    stats.job_proxy_max_memory_bytes = 1000;
    n = ps_memory_controller_statistics(&job, &stats, 1500, c);
    assert_int_equal(n, 9);
    assert_string_equal(c[8].path, "/job_proxy/cumulative_max_memory");
    assert_int_equal(c[8].value, 1500);
    memset(&stats, 0, sizeof stats);
    assert_int_equal(ps_memory_controller_statistics(&job, &stats, 1500, c), 6);

    /* Byte-seconds truncate; a negative duration counts as zero. */
    assert_int_equal(ps_memory_cumulative_byte_seconds(3, 333), 0);
    assert_int_equal(ps_memory_cumulative_byte_seconds(1000, 1500), 1500);
    assert_int_equal(ps_memory_cumulative_byte_seconds(GIB, -5), 0);
    /* 1 GiB for a year: beyond int64 in byte-milliseconds, fine in byte-seconds. */
    assert_int_equal(ps_memory_cumulative_byte_seconds(GIB, INT64_C(31536000000)),
                     INT64_C(33861522161664000));
    /* 16 TiB for a year does not fit even in byte-seconds: saturated, not undefined. */
    assert_int_equal(ps_memory_cumulative_byte_seconds(16 * (INT64_C(1) << 40),
                                                       INT64_C(31536000000)),
                     INT64_MAX);
    ps_memory_task_release(&t);
}

static void expect_ctrl_error(struct ps_memory_controller_config cfg, const char *needle)
{
    struct ps_memory_task_spec spec;
    ps_memory_task_spec_init(&spec);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_memory_controller_config_validate(&cfg, &err), PS_EINVAL);
    if (!strstr(err.msg, needle))
        print_error("message \"%s\" lacks \"%s\"\n", err.msg, needle);
    assert_non_null(strstr(err.msg, needle));
    struct ps_memory_task t;
    assert_int_equal(ps_memory_task_init(&t, &cfg, &spec, NULL), PS_EINVAL);
    ps_memory_task_release(&t);
}

static void expect_spec_error(struct ps_memory_task_spec spec, const char *needle)
{
    struct ps_memory_controller_config cfg;
    ps_memory_controller_config_init(&cfg);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_memory_task t;
    assert_int_equal(ps_memory_task_init(&t, &cfg, &spec, &err), PS_EINVAL);
    if (!strstr(err.msg, needle))
        print_error("message \"%s\" lacks \"%s\"\n", err.msg, needle);
    assert_non_null(strstr(err.msg, needle));
    ps_memory_task_release(&t);
}

static void test_validation(void **state)
{
    (void)state;
    struct ps_memory_controller_config base, c;
    ps_memory_controller_config_init(&base);
    assert_int_equal(ps_memory_controller_config_validate(&base, NULL), 0);
    c = base;
    c.user_job_memory_reserve_quantile = 1.5;
    expect_ctrl_error(c, "user_job_memory_reserve_quantile is 1.5 but must be in [0, 1]");
    c = base;
    c.job_proxy_memory_reserve_quantile = -0.1;
    expect_ctrl_error(c, "job_proxy_memory_reserve_quantile is -0.1");
    c = base;
    c.memory_digest_resource_overdraft_factor = 0.9;
    expect_ctrl_error(c, "memory_digest_resource_overdraft_factor is 0.9 but must be in [1, 10]");
    c = base;
    c.user_job_resource_overdraft_memory_multiplier.set = true;
    c.user_job_resource_overdraft_memory_multiplier.value = 11;
    expect_ctrl_error(c, "user_job_resource_overdraft_memory_multiplier is 11");
    c = base;
    c.job_proxy_resource_overdraft_memory_multiplier.set = true;
    c.job_proxy_resource_overdraft_memory_multiplier.value = 0.5;
    expect_ctrl_error(c, "job_proxy_resource_overdraft_memory_multiplier is 0.5");
    c = base;
    c.user_job_memory_digest_precision = 0;
    expect_ctrl_error(c, "user_job_memory_digest_precision is 0");
    c = base;
    c.footprint_memory_bytes = -1;
    expect_ctrl_error(c, "footprint_memory is -1");
    /* An unset multiplier's value is not checked. */
    c = base;
    c.user_job_resource_overdraft_memory_multiplier.value = 99;
    assert_int_equal(ps_memory_controller_config_validate(&c, NULL), 0);

    struct ps_memory_task_spec sbase, s;
    ps_memory_task_spec_init(&sbase);
    assert_int_equal(ps_memory_task_spec_validate(&sbase, NULL), 0);
    s = sbase;
    s.memory_limit_bytes = 0;
    expect_spec_error(s, "memory_limit is 0 bytes");
    s = sbase;
    s.tmpfs_size_bytes = sbase.memory_limit_bytes + 1;
    expect_spec_error(s, "tmpfs volumes 536870913 bytes must be less than or equal to "
                         "memory_limit 536870912 bytes");
    s = sbase;
    s.user_job_memory_digest_default_value = 0;
    expect_spec_error(s, "user_job_memory_digest_default_value is 0 but must be in (0, 1]");
    s = sbase;
    s.user_job_memory_digest_lower_bound = 1.5;
    expect_spec_error(s, "user_job_memory_digest_lower_bound is 1.5");
    s = sbase;
    s.has_memory_reserve_factor = true;
    s.memory_reserve_factor = 1.2;
    expect_spec_error(s, "memory_reserve_factor is 1.2 but must be in (0, 1]");
    s = sbase;
    s.has_user_job_resource_overdraft_memory_multiplier = true;
    s.user_job_resource_overdraft_memory_multiplier = 0.5;
    expect_spec_error(s, "user_job_resource_overdraft_memory_multiplier is 0.5");
    s = sbase;
    s.job_proxy_memory_bytes = -5;
    expect_spec_error(s, "job proxy memory estimate is -5 bytes");
    s = sbase;
    s.job_proxy_memory_digest.default_value = 3.0;
    expect_spec_error(s, "job_proxy_memory_digest: log digest: default_value 3");
    /* A floor this low needs more than 1000 buckets at precision 0.01. */
    s = sbase;
    s.user_job_memory_digest_lower_bound = 1e-5;
    expect_spec_error(s, "user job memory digest: log digest: bucket count");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_default_reserve),
        cmocka_unit_test(test_reserve_with_job_proxy_estimate),
        cmocka_unit_test(test_converges_to_quantile_above_usage),
        cmocka_unit_test(test_tmpfs_raises_floor),
        cmocka_unit_test(test_memory_reserve_factor),
        cmocka_unit_test(test_overdraft_sample_rule),
        cmocka_unit_test(test_retry_at_upper_bound),
        cmocka_unit_test(test_retry_with_multiplier),
        cmocka_unit_test(test_overdraft_by_gap),
        cmocka_unit_test(test_multiplier_source),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
