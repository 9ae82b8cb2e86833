/* The print order of a tree as an indented table (io/tree_order.h): parents first whatever the
 * input order, children in index order, depths, and every node once when parents loop or point
 * outside. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "io/tree_order.h"

static void check(int n, const int *parent, const int *want_order, const int *want_depth)
{
    int order[16], depth[16];
    assert_int_equal(ps_tree_order(n, parent, order, depth), 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(order[i], want_order[i]);
        assert_int_equal(depth[i], want_depth[i]);
    }
}

/* root 0; 1 and 2 under it; 3 under 1; 4 under 2; 5 under 1 (after 3) */
static void test_parents_first(void **state)
{
    (void)state;
    const int parent[] = {-1, 0, 0, 1, 2, 1};
    const int order[] = {0, 1, 3, 5, 2, 4};
    const int depth[] = {0, 1, 1, 2, 2, 2};
    check(6, parent, order, depth);
}

/* children listed before their parents (the dry-run reply's maps are in any order) */
static void test_children_before_parents(void **state)
{
    (void)state;
    const int p2[] = {2, 2, 3, -1, 0};      /* 3 root > 2 > {0 > 4, 1} */
    const int order[] = {3, 2, 0, 4, 1};
    const int depth[] = {2, 2, 1, 0, 3};
    check(5, p2, order, depth);
}

/* a loop (1 <-> 2), a self-parent (3) and an index out of range (4): each becomes a root, so
 * every node is printed exactly once */
static void test_broken_parents(void **state)
{
    (void)state;
    const int parent[] = {-1, 2, 1, 3, 99, 0};
    const int order[] = {0, 5, 1, 2, 3, 4};
    const int depth[] = {0, 0, 0, 0, 0, 1};
    check(6, parent, order, depth);
}

/* a long chain: linear, and the depths count every level */
static void test_long_chain(void **state)
{
    (void)state;
    enum { N = 200000 };
    int *parent = malloc(N * sizeof *parent), *order = malloc(N * sizeof *order),
        *depth = malloc(N * sizeof *depth);
    assert_non_null(parent);
    assert_non_null(order);
    assert_non_null(depth);
    for (int i = 0; i < N; i++)
        parent[i] = i + 1 < N ? i + 1 : -1;   /* N-1 is the root, 0 the deepest */
    assert_int_equal(ps_tree_order(N, parent, order, depth), 0);
    assert_int_equal(order[0], N - 1);
    assert_int_equal(order[N - 1], 0);
    assert_int_equal(depth[0], N - 1);
    free(parent);
    free(order);
    free(depth);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parents_first),
        cmocka_unit_test(test_children_before_parents),
        cmocka_unit_test(test_broken_parents),
        cmocka_unit_test(test_long_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
