/* Each pool's digest of its operations' local satisfaction (core/pool_satisfaction.h): an
 * operation counts in its pool and every ancestor, operations outside the last update do not,
 * samples clamp to the digest's bounds, an empty pool answers default_value. Expected quantiles
 * are worked out here by hand from the samples (the histogram digest's quantile is the first
 * bucket whose cumulative count reaches alpha x count). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/operation.h"
#include "core/pool_satisfaction.h"
#include "core/pool_tree.h"

static struct ps_tree_op *start(struct ps_pool_tree *tree, const char *id, const char *pool,
                                double satisfaction, bool valid)
{
    struct ps_tree_op_settings settings;
    memset(&settings, 0, sizeof settings);
    settings.pool = pool;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_tree_op *op = NULL;
    if (ps_pool_tree_add_operation(tree, id, "u", 0, &settings, &op, &err) != 0)
        fail_msg("start %s: %s", id, err.msg);
    /* as the last fair share update left it */
    op->dynamic.valid = valid;
    op->fs_index = valid ? 0 : -1;
    op->dynamic.satisfaction_ratio = satisfaction;
    return op;
}

static void configure(struct ps_pool_tree *tree)
{
    struct ps_value cfg = ps_value_map(), digest = ps_value_map(), quantiles = ps_value_list();
    ps_value_put_number(&digest, "lower_bound", 0);
    ps_value_put_number(&digest, "upper_bound", 2);
    ps_value_put_number(&digest, "absolute_precision", 0.001);
    ps_value_put_number(&digest, "default_value", 1);
    ps_value_put(&cfg, "per_pool_satisfaction_digest", &digest);
    for (int i = 0; i < 2; i++) {
        struct ps_value q = ps_value_number(i == 0 ? 0.5 : 1.0);
        ps_value_append(&quantiles, &q);
    }
    ps_value_put(&cfg, "per_pool_satisfaction_profiling_quantiles", &quantiles);
    struct ps_error err;
    ps_error_init(&err);
    if (ps_pool_tree_apply_config(tree, &cfg, &err) != 0)
        fail_msg("config: %s", err.msg);
    ps_value_release(&cfg);
}

static void test_subtree_digests(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_pool_tree *tree = ps_pool_tree_new("physical", NULL, &err);
    assert_non_null(tree);
    static const char *const names[] = {"a", "b", "c", "d"};
    static const char *const parents[] = {NULL, "a", NULL, NULL};
    for (int i = 0; i < 4; i++)
        assert_int_equal(ps_pool_tree_create_pool(tree, names[i], parents[i], NULL, &err), 0);
    configure(tree);
    start(tree, "o1", "b", 0.25, true);
    start(tree, "o2", "b", 0.75, true);
    start(tree, "o3", "a", 1.5, true);
    start(tree, "o4", "c", 1e9, true);      /* InfiniteSatisfactionRatio: clamped to 2 */
    start(tree, "o5", "c", 0.0, false);     /* not in the last update: not counted */

    double *q = NULL;
    int count = 0;
    assert_int_equal(ps_pool_satisfaction_quantiles(tree, &q, &count, &err), 0);
    assert_int_equal(count, 2);
    /* rows: <Root>, then a, b, c, d in creation order; columns: quantiles 0.5, 1 */
    static const double expected[5][2] = {
        {0.75, 2.0},   /* root: 0.25 0.75 1.5 2 */
        {0.75, 1.5},   /* a: 0.25 0.75 1.5 (b's and its own) */
        {0.25, 0.75},  /* b: 0.25 0.75 */
        {2.0, 2.0},    /* c: 2 (o5 left out) */
        {1.0, 1.0},    /* d: empty, default_value */
    };
    for (int r = 0; r < 5; r++)
        for (int j = 0; j < 2; j++)
            if (fabs(q[r * 2 + j] - expected[r][j]) > 1e-9)
                fail_msg("row %d quantile %d: %.17g, expected %g", r, j, q[r * 2 + j],
                         expected[r][j]);
    free(q);
    ps_pool_tree_free(tree);
}

static void test_no_quantiles(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_pool_tree *tree = ps_pool_tree_new("physical", NULL, &err);
    assert_non_null(tree);
    struct ps_value empty = ps_value_list();
    assert_int_equal(ps_pool_tree_set_config(tree, "per_pool_satisfaction_profiling_quantiles",
                                             &empty, &err), 0);
    double *q = (double *)&err;
    int count = -1;
    assert_int_equal(ps_pool_satisfaction_quantiles(tree, &q, &count, &err), 0);
    assert_int_equal(count, 0);
    assert_null(q);
    ps_value_release(&empty);
    ps_pool_tree_free(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subtree_digests),
        cmocka_unit_test(test_no_quantiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
