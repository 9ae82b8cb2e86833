#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "core/node_ban.h"
#include "io/json_value.h"

/* The spec's defaults, as upstream: no bans, fail_on_all_nodes_banned on. */
static void test_spec_defaults(void **state)
{
    (void)state;
    json_t *doc = json_object();
    struct ps_operation_spec spec;
    json_t *unknown = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_operation_spec_from_json(doc, &spec, &unknown, &err), 0);
    struct ps_node_ban_spec bans = ps_node_ban_spec_of(&spec);
    assert_false(bans.ban_nodes_with_failed_jobs);
    assert_false(bans.ignore_job_failures_at_banned_nodes);
    assert_true(bans.fail_on_all_nodes_banned);
    ps_operation_spec_release(&spec);
    json_decref(unknown);
    json_decref(doc);
}

/* upstream's OnJobFailed: ban at the first failure, abort (node_banned) later ones there only
 * with ignore_job_failures_at_banned_nodes. */
static void test_job_failed(void **state)
{
    (void)state;
    struct ps_node_ban_spec none = {false, false, true};
    struct ps_node_ban_spec ban = {true, false, true};
    struct ps_node_ban_spec ignore = {true, true, true};
    assert_int_equal(ps_node_ban_job_failed(&none, false), PS_NODE_BAN_FAILED);
    assert_int_equal(ps_node_ban_job_failed(&ban, false), PS_NODE_BAN_FAILED_BAN);
    assert_int_equal(ps_node_ban_job_failed(&ban, true), PS_NODE_BAN_FAILED);
    assert_int_equal(ps_node_ban_job_failed(&ignore, false), PS_NODE_BAN_FAILED_BAN);
    assert_int_equal(ps_node_ban_job_failed(&ignore, true), PS_NODE_BAN_ABORTED);
    assert_false(ps_node_ban_may_start(true));
    assert_true(ps_node_ban_may_start(false));
}

/* No ban, or fail_on_all_nodes_banned off: never fails (the nodes are not even looked at). */
static void test_all_banned_needs_bans(void **state)
{
    (void)state;
    char msg[64] = "";
    struct ps_node_ban_spec on = {true, false, true}, off = {true, false, false};
    assert_false(ps_node_ban_all_banned(NULL, NULL, &on, 0, NULL, NULL, msg, sizeof msg));
    assert_false(ps_node_ban_all_banned(NULL, NULL, &off, 3, NULL, NULL, msg, sizeof msg));
    assert_string_equal(msg, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_defaults),
        cmocka_unit_test(test_job_failed),
        cmocka_unit_test(test_all_banned_needs_bans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
