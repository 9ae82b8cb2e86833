/* The rules both hosts feed the loop with (core/sched_inputs.h, core/pending.h's probe pieces):
 * the offered task, the operation's disk request, the saturating demand, the resource at a
 * limit. The loop parity test (tests/scripts/loop_parity.sh) checks the hosts agree on them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/pending.h"
#include "core/sched_inputs.h"

struct task {
    int64_t pending;
    const char *medium;
    int64_t space;
};

struct tasks {
    int count;
    struct task t[3];
};

static int64_t pending(const void *ctx, int i)
{
    return ((const struct tasks *)ctx)->t[i].pending;
}

static const char *disk(const void *ctx, int i, int64_t *space)
{
    const struct task *t = &((const struct tasks *)ctx)->t[i];
    *space = t->space;
    return t->medium;
}

static struct ps_sched_tasks view(const struct tasks *t)
{
    return (struct ps_sched_tasks){t, t->count, pending, disk};
}

static void test_offered_task_is_first_with_pending(void **state)
{
    (void)state;
    struct tasks t = {3, {{0, NULL, 0}, {2, NULL, 0}, {5, NULL, 0}}};
    struct ps_sched_tasks v = view(&t);
    assert_int_equal(ps_sched_offered_task(&v), 1);
    t.t[1].pending = 0;
    assert_int_equal(ps_sched_offered_task(&v), 2);
    t.t[2].pending = 0;
    assert_int_equal(ps_sched_offered_task(&v), -1);
}

static void test_disk_request_is_the_offered_tasks(void **state)
{
    (void)state;
    struct tasks t = {3, {{0, NULL, 7}, {2, NULL, 0}, {5, "ssd", 100}}};
    struct ps_sched_tasks v = view(&t);
    const char *medium;
    int64_t space;
    /* the offered task (1) asks for none: its jobs need no disk, whatever task 2 asks */
    ps_sched_disk_request(&v, 1, &medium, &space);
    assert_null(medium);
    assert_int_equal(space, 0);
    /* the offered task's own request */
    ps_sched_disk_request(&v, 2, &medium, &space);
    assert_string_equal(medium, "ssd");
    assert_int_equal(space, 100);
    t.t[1].medium = "default";
    t.t[1].space = 10;
    ps_sched_disk_request(&v, 1, &medium, &space);
    assert_string_equal(medium, "default");
    assert_int_equal(space, 10);
    /* nothing pending: the first task that asks (task 0 does not) */
    ps_sched_disk_request(&v, -1, &medium, &space);
    assert_string_equal(medium, "default");
    assert_int_equal(space, 10);
    /* no task asks */
    t.t[1].medium = t.t[2].medium = NULL;
    ps_sched_disk_request(&v, -1, &medium, &space);
    assert_null(medium);
    assert_int_equal(space, 0);
}

static void test_demand_saturates(void **state)
{
    (void)state;
    struct ps_resources usage = ps_resources_zero(), shape = ps_resources_zero();
    usage.v[PS_RES_CPU] = 100;
    shape.v[PS_RES_CPU] = 50;
    shape.v[PS_RES_MEMORY] = PS_RES_INFINITE;
    shape.v[PS_RES_USER_SLOTS] = 1;
    struct ps_resources d = ps_demand_add_pending(usage, shape, 4);
    assert_int_equal(d.v[PS_RES_CPU], 300);
    assert_int_equal(d.v[PS_RES_USER_SLOTS], 4);
    assert_int_equal(d.v[PS_RES_MEMORY], PS_RES_INFINITE);
    shape.v[PS_RES_CPU] = INT64_MAX / 8;
    d = ps_demand_add_pending(d, shape, 16);   /* the product overflows int64 */
    assert_int_equal(d.v[PS_RES_CPU], PS_RES_INFINITE);
    usage.v[PS_RES_GPU] = PS_RES_INFINITE - 1;
    shape.v[PS_RES_GPU] = 2;
    d = ps_demand_add_pending(usage, shape, 1);   /* the sum passes the infinite */
    assert_int_equal(d.v[PS_RES_GPU], PS_RES_INFINITE);
}

static void test_probe_pieces(void **state)
{
    (void)state;
    struct ps_pending_job job = {.shape = ps_resources_zero(), .min_spare = ps_resources_zero()};
    job.shape.v[PS_RES_CPU] = 200;
    job.min_spare.v[PS_RES_CPU] = 100;
    struct ps_resources limits = ps_resources_zero(), usage = ps_resources_zero();
    limits.v[PS_RES_CPU] = 200;
    assert_true(ps_pending_node_fits(&job, &limits, NULL, 0, -1));
    limits.v[PS_RES_CPU] = 199;
    assert_false(ps_pending_node_fits(&job, &limits, NULL, 0, -1));
    /* a disk request: the node's medium must hold it */
    limits.v[PS_RES_CPU] = 200;
    job.disk_medium = "ssd";
    job.disk_space = 1000;
    assert_false(ps_pending_node_fits(&job, &limits, NULL, 0, -1));
    assert_false(ps_pending_node_fits(&job, &limits, NULL, 0, 999));
    assert_true(ps_pending_node_fits(&job, &limits, NULL, 0, 1000));
    struct ps_resources free_ = limits;
    free_.v[PS_RES_CPU] = 250;
    assert_true(ps_pending_node_has_room(&job, &free_));
    job.min_spare.v[PS_RES_MEMORY] = 1;   /* min_spare must fit the free resources too */
    assert_false(ps_pending_node_has_room(&job, &free_));
    limits.v[PS_RES_CPU] = 1000;
    usage.v[PS_RES_CPU] = 800;
    assert_true(ps_pending_total_fits(&job.shape, &limits, &usage));
    usage.v[PS_RES_CPU] = 801;
    assert_false(ps_pending_total_fits(&job.shape, &limits, &usage));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offered_task_is_first_with_pending),
        cmocka_unit_test(test_disk_request_is_the_offered_tasks),
        cmocka_unit_test(test_demand_saturates),
        cmocka_unit_test(test_probe_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
