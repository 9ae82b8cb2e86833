#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/arena.h"

static void test_memory_is_stable_and_aligned(void **state)
{
    (void)state;
    struct ps_arena a;
    ps_arena_init(&a, 1024);
    unsigned char *p = ps_arena_alloc(&a, 100), *q = ps_arena_alloc(&a, 2000);
    assert_non_null(p);
    assert_non_null(q);
    assert_int_equal((uintptr_t)p % 16, 0);
    assert_int_equal((uintptr_t)q % 16, 0);
    memset(p, 1, 100);
    memset(q, 2, 2000);
    for (int i = 0; i < 50; i++)
        assert_non_null(ps_arena_alloc(&a, 300));
    assert_int_equal(p[99], 1);   /* earlier allocations never move */
    assert_int_equal(q[1999], 2);
    ps_arena_release(&a);
}

/* The fair share update's pattern: every round resets the arena and asks for about the same
 * sizes, the largest ones a little more each time. The footprint must settle, not grow with
 * every round (skipping a too-small block used to leave it idle and append a new one). */
static void test_growing_requests_do_not_grow_the_footprint_without_bound(void **state)
{
    (void)state;
    struct ps_arena a;
    ps_arena_init(&a, 4096);
    size_t after_first = 0;
    for (int round = 0; round < 200; round++) {
        ps_arena_reset(&a);
        for (int k = 0; k < 20; k++)
            assert_non_null(ps_arena_alloc(&a, 1000));
        /* two large functions that grow by 0.1% a round */
        size_t big = 100000 + (size_t)round * 100;
        assert_non_null(ps_arena_alloc(&a, big));
        assert_non_null(ps_arena_alloc(&a, big / 2));
        if (round == 0)
            after_first = ps_arena_footprint(&a);
    }
    /* 20% growth of the requests over 200 rounds, an eighth of headroom per large block:
     * a few replacements, never more blocks than the first round had plus one. */
    assert_true(ps_arena_footprint(&a) < after_first * 3 / 2);
    assert_true(a.count <= 8);
    ps_arena_release(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_is_stable_and_aligned),
        cmocka_unit_test(test_growing_requests_do_not_grow_the_footprint_without_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
