#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/error.h"
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

/* Pushes and pops interleaved, with priorities and payloads: every pop is the least remaining
 * (time, prio, push order), as a sorted reference says, and carries its own payload. */
static void test_interleaved_matches_reference(void **state)
{
    (void)state;
    enum { N = 20000 };
    static struct ps_event ref[N];
    int ref_count = 0;
    struct ps_event_queue q;
    ps_event_queue_init(&q);
    uint64_t x = 777;
    int64_t pushed = 0;
    for (int round = 0; round < 3 * N; round++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        if (pushed < N && (x >> 60) < 10) {
            int64_t t = (int64_t)(x >> 56) & 63;
            int prio = (int)(x >> 40) & 7;
            assert_int_equal(ps_event_queue_push_prio(&q, t, prio, (int)pushed, -pushed, 2 * pushed),
                             0);
            ref[ref_count++] = (struct ps_event){.time_ms = t, .seq = (uint64_t)pushed,
                                                 .prio = prio, .type = (int)pushed};
            pushed++;
            continue;
        }
        struct ps_event ev;
        if (!ps_event_queue_pop(&q, &ev)) {
            assert_int_equal(ref_count, 0);
            continue;
        }
        int best = 0;
        for (int i = 1; i < ref_count; i++) {
            const struct ps_event *a = &ref[i], *b = &ref[best];
            if (a->time_ms != b->time_ms ? a->time_ms < b->time_ms
                : a->prio != b->prio      ? a->prio < b->prio
                                          : a->seq < b->seq)
                best = i;
        }
        assert_int_equal(ev.type, ref[best].type);
        assert_int_equal(ev.seq, ref[best].seq);
        assert_int_equal(ev.prio, ref[best].prio);
        assert_int_equal(ev.time_ms, ref[best].time_ms);
        assert_int_equal(ev.a, -(int64_t)ev.type);
        assert_int_equal(ev.b, 2 * (int64_t)ev.type);
        ref[best] = ref[--ref_count];
    }
    ps_event_queue_release(&q);
}

/* A priority outside [0, PS_EVENT_PRIO_MAX] is refused and nothing is queued. */
/* push_ordered: events of one time and priority pop by their tie, not their push order; the
 * other priorities keep push order around them. */
static void test_ordered_ties(void **state)
{
    (void)state;
    struct ps_event_queue q;
    ps_event_queue_init(&q);
    assert_int_equal(ps_event_queue_push_ordered(&q, 10, 4, 2, 7, 2, 0), 0);
    assert_int_equal(ps_event_queue_push_prio(&q, 10, 5, 1, 100, 0), 0);
    assert_int_equal(ps_event_queue_push_ordered(&q, 10, 4, 0, 7, 0, 0), 0);
    assert_int_equal(ps_event_queue_push_prio(&q, 10, 3, 1, 101, 0), 0);
    assert_int_equal(ps_event_queue_push_ordered(&q, 10, 4, 1, 7, 1, 0), 0);
    assert_int_equal(ps_event_queue_push_ordered(&q, 9, 4, 5, 7, 5, 0), 0);
    int64_t want[] = {5, 101, 0, 1, 2, 100};
    struct ps_event ev;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        assert_true(ps_event_queue_pop(&q, &ev));
        assert_int_equal(ev.a, want[i]);
    }
    assert_false(ps_event_queue_pop(&q, &ev));
    assert_int_equal(ps_event_queue_push_ordered(&q, 1, 4, (uint64_t)1 << 56, 7, 0, 0), PS_EINVAL);
    ps_event_queue_release(&q);
}

static void test_priority_out_of_range_refused(void **state)
{
    (void)state;
    struct ps_event_queue q;
    ps_event_queue_init(&q);
    assert_int_equal(ps_event_queue_push_prio(&q, 1, -1, 1, 0, 0), PS_EINVAL);
    assert_int_equal(ps_event_queue_push_prio(&q, 1, PS_EVENT_PRIO_MAX + 1, 1, 0, 0), PS_EINVAL);
    assert_null(ps_event_queue_peek(&q));
    assert_int_equal(ps_event_queue_push_prio(&q, 1, PS_EVENT_PRIO_MAX, 7, 0, 0), 0);
    assert_int_equal(ps_event_queue_peek(&q)->type, 7);
    ps_event_queue_release(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_orders_by_time_then_push_order),
        cmocka_unit_test(test_large_heap_is_sorted),
        cmocka_unit_test(test_priority_breaks_ties_at_equal_time),
        cmocka_unit_test(test_interleaved_matches_reference),
        cmocka_unit_test(test_priority_out_of_range_refused),
        cmocka_unit_test(test_ordered_ties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
