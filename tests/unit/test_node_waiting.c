/* test_node_waiting.c — the node's waiting rule (core/node_waiting.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/node_waiting.h"

static void test_fits_slots_and_cpu(void **state)
{
    (void)state;
    struct ps_node_slots_cpu cap = {2, 400}, held = {1, 300};
    assert_true(ps_node_job_fits(&cap, &held, 100));
    assert_false(ps_node_job_fits(&cap, &held, 101));
    held.user_slots = 2;
    assert_false(ps_node_job_fits(&cap, &held, 0));
    struct ps_node_slots_cpu unchecked = {0, 0};
    assert_true(ps_node_job_fits(&unchecked, &held, 100000));
}

/* Arrival order: the first fits and holds its share, the second (larger) waits, a third
 * smaller one still starts beside; past the deadline a job that does not fit times out. */
static void test_step_arrival_order(void **state)
{
    (void)state;
    struct ps_node_slots_cpu cap = {10, 400}, held = {1, 100};
    assert_int_equal(ps_node_waiting_step(&cap, &held, 200, 5000, 1000), PS_NODE_WAITING_START);
    assert_int_equal(held.user_slots, 2);
    assert_int_equal(held.cpu, 300);
    assert_int_equal(ps_node_waiting_step(&cap, &held, 200, 5000, 1000), PS_NODE_WAITING_KEEP);
    assert_int_equal(ps_node_waiting_step(&cap, &held, 100, 5000, 1000), PS_NODE_WAITING_START);
    assert_int_equal(ps_node_waiting_step(&cap, &held, 100, 5000, 5000), PS_NODE_WAITING_TIMEOUT);
    assert_int_equal(held.cpu, 400);
}

static void test_timeout_and_message(void **state)
{
    (void)state;
    assert_int_equal(ps_node_waiting_timeout(-1, PS_NODE_DEFAULT_WAITING_FOR_RESOURCES_TIMEOUT_MS),
                     30000);
    assert_int_equal(ps_node_waiting_timeout(12000, 30000), 12000);
    char buf[128];
    ps_node_waiting_message(buf, sizeof buf, 12000);
    assert_string_equal(buf, "Allocation waiting for resources has timed out (timeout: 12000 ms)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits_slots_and_cpu),
        cmocka_unit_test(test_step_arrival_order),
        cmocka_unit_test(test_timeout_and_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
