#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/op_spec.h"
#include "core/tentative.h"
#include "value_helpers.h"

static bool exists(void *ctx, const char *tree)
{
    (void)ctx;
    return strcmp(tree, "missing") != 0;
}

static char *default_items[] = {"other"};
static char *regular_items[] = {"default"};
static const struct ps_string_list defaults = {1, default_items};
static const struct ps_string_list regular = {1, regular_items};

static int init_from(const char *spec_text, const struct ps_string_list *pool_trees,
                     struct ps_tentative_state *st, struct ps_error *err)
{
    struct ps_value v = json(spec_text);
    struct ps_operation_spec spec;
    assert_int_equal(ps_operation_spec_init(&spec), 0);
    ps_error_init(err);
    int rc = ps_operation_spec_apply(&spec, &v, err);
    ps_value_release(&v);
    if (rc == 0)
        rc = ps_tentative_state_init(st, &spec.tentative_tree_eligibility, pool_trees,
                                     &spec.tentative_pool_trees,
                                     spec.use_default_tentative_pool_trees, &defaults, exists,
                                     NULL, err);
    ps_operation_spec_release(&spec);
    return rc;
}

/* The spec's keys, the defaults and upstream's errors of ParsePoolTrees. */
static void test_trees(void **state)
{
    (void)state;
    struct ps_tentative_state st;
    struct ps_error err;
    assert_int_equal(init_from("{\"tentative_pool_trees\": [\"other\"]}", &regular, &st, &err), 0);
    assert_int_equal(st.count, 1);
    assert_string_equal(st.trees[0].name, "other");
    assert_int_equal(st.cfg.sample_job_count, 10);
    assert_true(st.cfg.max_tentative_job_duration_ratio == 10.0);
    assert_int_equal(st.cfg.min_job_duration_ms, 30000);
    ps_tentative_state_release(&st);

    assert_int_equal(init_from("{\"use_default_tentative_pool_trees\": true}", &regular, &st, &err), 0);
    assert_int_equal(st.count, 1);
    ps_tentative_state_release(&st);
    assert_int_equal(init_from("{}", &regular, &st, &err), 0);
    assert_int_equal(st.count, 0);

    assert_int_equal(init_from("{\"tentative_pool_trees\": [\"other\"]}", NULL, &st, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "Regular pool trees must be explicitly specified"));
    assert_int_equal(init_from("{\"tentative_pool_trees\": [\"default\"]}", &regular, &st, &err),
                     PS_EINVAL);
    assert_non_null(strstr(err.msg, "must not intersect"));
    assert_int_equal(init_from("{\"tentative_pool_trees\": [\"missing\"]}", &regular, &st, &err),
                     PS_ENOENT);
    assert_string_equal(err.msg, "Pool tree \"missing\" not found");
    assert_int_equal(init_from("{\"tentative_pool_trees\": [\"missing\", \"other\"], "
                               "\"tentative_tree_eligibility\": {\"ignore_missing_pool_trees\": true}}",
                               &regular, &st, &err), 0);
    assert_int_equal(st.count, 1);
    ps_tentative_state_release(&st);
    assert_int_equal(init_from("{\"tentative_tree_eligibility\": {\"sample_job_count\": 0}}",
                               &regular, &st, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "sample_job_count"));
}

/* CanScheduleJob: at most the rest of the sample runs at once until the sample completed. */
static void test_sampling(void **state)
{
    (void)state;
    struct ps_tentative_state st;
    struct ps_error err;
    assert_int_equal(init_from("{\"tentative_pool_trees\": [\"other\"], \"tentative_tree_eligibility\":"
                               " {\"sample_job_count\": 3}}", &regular, &st, &err), 0);
    struct ps_tentative_tree *t = ps_tentative_find(&st, "other");
    assert_non_null(t);
    assert_null(ps_tentative_find(&st, "default"));
    for (int i = 0; i < 3; i++) {
        assert_true(ps_tentative_can_schedule(&st, t));
        ps_tentative_job_started(&st, "other", 0);
    }
    assert_false(ps_tentative_can_schedule(&st, t));
    ps_tentative_job_finished(&st, "other", false, 10);   /* aborted: a place again */
    assert_true(ps_tentative_can_schedule(&st, t));
    ps_tentative_job_started(&st, "other", 0);
    ps_tentative_job_finished(&st, "other", true, 10);    /* completed: the sample shrinks */
    assert_false(ps_tentative_can_schedule(&st, t));     /* 2 running, 2 left to sample */
    ps_tentative_job_finished(&st, "other", true, 10);
    ps_tentative_job_finished(&st, "other", true, 10);
    assert_true(ps_tentative_can_schedule(&st, t));      /* sample done: no bound */
    ps_tentative_state_release(&st);
}

/* IsSlow and the ban. */
static void test_banning(void **state)
{
    (void)state;
    struct ps_tentative_state st;
    struct ps_error err;
    assert_int_equal(init_from("{\"tentative_pool_trees\": [\"other\"], \"tentative_tree_eligibility\":"
                               " {\"sample_job_count\": 2, \"max_tentative_job_duration_ratio\": 2,"
                               " \"min_job_duration\": 1000}}", &regular, &st, &err), 0);
    struct ps_tentative_tree *newly[1];
    ps_tentative_job_started(&st, "other", 0);
    ps_tentative_job_finished(&st, "default", true, 1000);
    assert_int_equal(ps_tentative_ban_slow(&st, 5000, newly), 0);   /* one regular: no sample */
    ps_tentative_job_finished(&st, "default", true, 1000);
    assert_int_equal(ps_tentative_ban_slow(&st, 1900, newly), 0);   /* 1.9 s < 2 x 1 s */
    assert_true(ps_tentative_can_schedule(&st, &st.trees[0]));
    assert_int_equal(ps_tentative_ban_slow(&st, 2000, newly), 1);   /* 2 s: banned */
    assert_ptr_equal(newly[0], &st.trees[0]);
    assert_false(ps_tentative_can_schedule(&st, &st.trees[0]));
    assert_int_equal(ps_tentative_ban_slow(&st, 9000, newly), 0);   /* once */
    ps_tentative_state_release(&st);

    /* below min_job_duration a tree is never slow */
    assert_int_equal(init_from("{\"tentative_pool_trees\": [\"other\"], \"tentative_tree_eligibility\":"
                               " {\"sample_job_count\": 1, \"max_tentative_job_duration_ratio\": 2,"
                               " \"min_job_duration\": 10000}}", &regular, &st, &err), 0);
    ps_tentative_job_started(&st, "other", 0);
    ps_tentative_job_finished(&st, "default", true, 100);
    assert_int_equal(ps_tentative_ban_slow(&st, 9999, newly), 0);
    assert_int_equal(ps_tentative_ban_slow(&st, 10000, newly), 1);
    ps_tentative_state_release(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trees),
        cmocka_unit_test(test_sampling),
        cmocka_unit_test(test_banning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
