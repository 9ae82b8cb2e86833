#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/event_queue.h"

static void test_orders_by_time_then_push_order(void **state)
{
    (void)state;
    struct ps_event_queue q;
    ps_event_queue_init(&q);
    assert_null(ps_event_queue_peek(&q));
    assert_int_equal(ps_event_queue_push(&q, 50, 1, 0, 0), 0);
    assert_int_equal(ps_event_queue_push(&q, 10, 2, 0, 0), 0);
    assert_int_equal(ps_event_queue_push(&q, 50, 3, 0, 0), 0);
    assert_int_equal(ps_event_queue_push(&q, 10, 4, 0, 0), 0);
    int expected_types[] = {2, 4, 1, 3};
    struct ps_event ev;
    for (int i = 0; i < 4; i++) {
        assert_true(ps_event_queue_pop(&q, &ev));
        assert_int_equal(ev.type, expected_types[i]);
    }
    assert_false(ps_event_queue_pop(&q, &ev));
    ps_event_queue_release(&q);
}

/* Many events with pseudo-random times (a fixed LCG) come out sorted by (time, seq). */
static void test_large_heap_is_sorted(void **state)
{
    (void)state;
    struct ps_event_queue q;
    ps_event_queue_init(&q);
    uint64_t x = 12345;
    for (int i = 0; i < 10000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        assert_int_equal(ps_event_queue_push(&q, (int64_t)(x >> 54), 0, i, 0), 0);
    }
    struct ps_event prev, ev;
    assert_true(ps_event_queue_pop(&q, &prev));
    int popped = 1;
    while (ps_event_queue_pop(&q, &ev)) {
        assert_true(prev.time_ms < ev.time_ms || (prev.time_ms == ev.time_ms && prev.seq < ev.seq));
        prev = ev;
        popped++;
    }
    assert_int_equal(popped, 10000);
    ps_event_queue_release(&q);
}

/* At one instant a lower priority pops first whatever the push order; equal priorities keep
 * the push order. */
static void test_priority_breaks_ties_at_equal_time(void **state)
{
    (void)state;
    struct ps_event_queue q;
    ps_event_queue_init(&q);
    assert_int_equal(ps_event_queue_push_prio(&q, 10, 3, 1, 0, 0), 0);
    assert_int_equal(ps_event_queue_push_prio(&q, 10, 0, 2, 0, 0), 0);
    assert_int_equal(ps_event_queue_push_prio(&q, 5, 9, 3, 0, 0), 0);
    assert_int_equal(ps_event_queue_push_prio(&q, 10, 3, 4, 0, 0), 0);
    assert_int_equal(ps_event_queue_push(&q, 10, 5, 0, 0), 0);
    int expected_types[] = {3, 2, 5, 1, 4};
    struct ps_event ev;
    for (int i = 0; i < 5; i++) {
        assert_true(ps_event_queue_pop(&q, &ev));
        assert_int_equal(ev.type, expected_types[i]);
    }
    assert_false(ps_event_queue_pop(&q, &ev));
    ps_event_queue_release(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_orders_by_time_then_push_order),
        cmocka_unit_test(test_large_heap_is_sorted),
        cmocka_unit_test(test_priority_breaks_ties_at_equal_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
