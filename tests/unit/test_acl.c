#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/acl.h"
#include "value_helpers.h"

static struct ps_acl acl_of(const char *text)
{
    struct ps_value v = json(text);
    struct ps_acl acl;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_acl_parse(&v, "acl", &acl, &err);
    if (rc)
        fail_msg("%s: %s", text, err.msg);
    ps_value_release(&v);
    return acl;
}

static int parse_error(const char *text, struct ps_error *err)
{
    struct ps_value v = json(text);
    struct ps_acl acl;
    ps_error_init(err);
    int rc = ps_acl_parse(&v, "acl", &acl, err);
    ps_value_release(&v);
    if (rc == 0)
        ps_acl_release(&acl);
    return rc;
}

/* groups: devs = {alice, leads}, leads = {bob}, ops = {carol}, superusers = {admin} */
static const char *const devs_members[] = {"alice", "leads"};
static const char *const leads_members[] = {"bob"};
static const char *const ops_members[] = {"carol"};
static const char *const super_members[] = {"admin"};
static const struct ps_acl_group group_list[] = {
    {"devs", 2, devs_members},
    {"leads", 1, leads_members},
    {"ops", 1, ops_members},
    {"superusers", 1, super_members},
};
static const struct ps_acl_groups groups = {4, group_list};

static enum ps_acl_action check(const struct ps_acl_object *chain, int n, const char *user,
                                unsigned perm)
{
    return ps_acl_check(chain, n, &groups, user, perm).action;
}

static void test_parse_and_show(void **state)
{
    (void)state;
    struct ps_acl acl = acl_of("[{\"action\": \"deny\", \"subjects\": [\"u\", \"g\"],"
                               " \"permissions\": [\"use\", \"modify_children\"],"
                               " \"inheritance_mode\": \"object_only\"},"
                               " {\"action\": \"allow\", \"subjects\": [\"u\"],"
                               " \"permissions\": \"write\"}]");
    assert_int_equal(acl.count, 2);
    assert_int_equal(acl.aces[0].action, PS_ACL_DENY);
    assert_int_equal(acl.aces[0].permissions, PS_PERM_USE | PS_PERM_MODIFY_CHILDREN);
    assert_int_equal(acl.aces[0].inheritance_mode, PS_ACL_OBJECT_ONLY);
    assert_int_equal(acl.aces[1].permissions, PS_PERM_WRITE);
    assert_int_equal(acl.aces[1].inheritance_mode, PS_ACL_OBJECT_AND_DESCENDANTS);

    struct ps_value shown, expected = json(
        "[{\"action\": \"deny\", \"subjects\": [\"u\", \"g\"],"
        " \"permissions\": [\"use\", \"modify_children\"], \"inheritance_mode\": \"object_only\"},"
        " {\"action\": \"allow\", \"subjects\": [\"u\"], \"permissions\": [\"write\"],"
        " \"inheritance_mode\": \"object_and_descendants\"}]");
    assert_int_equal(ps_acl_to_value(&acl, &shown), 0);
    assert_true(ps_value_equal(&shown, &expected));
    struct ps_acl copy;
    assert_int_equal(ps_acl_copy(&copy, &acl), 0);
    assert_int_equal(copy.count, 2);
    assert_string_equal(copy.aces[0].subjects[1], "g");
    ps_acl_release(&copy);
    ps_value_release(&shown);
    ps_value_release(&expected);
    ps_acl_release(&acl);
}

static void test_parse_errors_name_key_value_reason(void **state)
{
    (void)state;
    struct ps_error err;
    assert_int_equal(parse_error("{}", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "acl: must be a list of ACEs"));
    assert_int_equal(parse_error("[{\"action\": \"maybe\", \"subjects\": [\"u\"],"
                                 " \"permissions\": [\"use\"]}]", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "acl/0/action: must be \"allow\" or \"deny\""));
    assert_non_null(strstr(err.msg, "maybe"));
    assert_int_equal(parse_error("[{\"action\": \"allow\", \"subjects\": [\"u\"],"
                                 " \"permissions\": [\"fly\"]}]", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "acl/0/permissions: unknown permission \"fly\""));
    assert_int_equal(parse_error("[{\"action\": \"allow\", \"permissions\": [\"use\"]}]", &err),
                     PS_EINVAL);
    assert_non_null(strstr(err.msg, "acl/0/subjects"));
    assert_int_equal(parse_error("[{\"action\": \"allow\", \"subjects\": [\"u\"],"
                                 " \"permissions\": [\"use\"], \"color\": 1}]", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "acl/0/color: unknown key of an ACE"));
    assert_int_equal(parse_error("[\"alice\"]", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "acl/0: an ACE must be a map"));
}

static void test_no_ace_denies_and_superusers_pass(void **state)
{
    (void)state;
    struct ps_acl_object one = {NULL, true, "node //p"};
    assert_int_equal(check(&one, 1, "alice", PS_PERM_USE), PS_ACL_DENY);
    assert_int_equal(check(&one, 1, "root", PS_PERM_USE), PS_ACL_ALLOW);
    assert_int_equal(check(&one, 1, "admin", PS_PERM_ADMINISTER), PS_ACL_ALLOW);
}

static void test_deny_wins_wherever_it_is(void **state)
{
    (void)state;
    struct ps_acl allow = acl_of("[{\"action\": \"allow\", \"subjects\": [\"alice\"],"
                                 " \"permissions\": [\"use\"]}]");
    struct ps_acl deny = acl_of("[{\"action\": \"deny\", \"subjects\": [\"devs\"],"
                                " \"permissions\": [\"use\"]}]");
    /* allow on the object, deny on the grandparent */
    struct ps_acl_object chain[] = {{&allow, true, "node //t/a/b"},
                                    {NULL, true, "node //t/a"},
                                    {&deny, true, "node //t"}};
    struct ps_acl_result r = ps_acl_check(chain, 3, &groups, "alice", PS_PERM_USE);
    assert_int_equal(r.action, PS_ACL_DENY);
    assert_string_equal(r.object, "node //t");
    assert_string_equal(r.subject, "devs");
    /* and within one ACL the order does not matter */
    struct ps_acl both = acl_of("[{\"action\": \"allow\", \"subjects\": [\"alice\"],"
                                " \"permissions\": [\"use\"]},"
                                " {\"action\": \"deny\", \"subjects\": [\"everyone\"],"
                                " \"permissions\": [\"use\"]}]");
    struct ps_acl_object single = {&both, true, "node //x"};
    assert_int_equal(check(&single, 1, "alice", PS_PERM_USE), PS_ACL_DENY);
    /* a deny of another permission leaves this one alone */
    assert_int_equal(check(chain, 3, "alice", PS_PERM_WRITE), PS_ACL_DENY);   /* no allow */
    assert_int_equal(check(&chain[0], 1, "alice", PS_PERM_USE), PS_ACL_ALLOW);
    ps_acl_release(&allow);
    ps_acl_release(&deny);
    ps_acl_release(&both);
}

static void test_inheritance_and_inherit_acl(void **state)
{
    (void)state;
    struct ps_acl top = acl_of("[{\"action\": \"allow\", \"subjects\": [\"users\"],"
                               " \"permissions\": [\"use\"]}]");
    struct ps_acl_object chain[] = {{NULL, true, "node //t/a/b"},
                                    {NULL, true, "node //t/a"},
                                    {&top, true, "node //t"}};
    assert_int_equal(check(chain, 3, "carol", PS_PERM_USE), PS_ACL_ALLOW);
    chain[1].inherit_acl = false;   /* a stops the walk: t's ACE no longer reaches b */
    assert_int_equal(check(chain, 3, "carol", PS_PERM_USE), PS_ACL_DENY);
    assert_int_equal(check(&chain[2], 1, "carol", PS_PERM_USE), PS_ACL_ALLOW);
    ps_acl_release(&top);
}

/* The effective ACL: the ACEs the check reads, in its order, each with where it is set; an
 * object_only ACE of an ancestor, and everything above an inherit_acl false, are not in it. */
static void test_effective_acl(void **state)
{
    (void)state;
    struct ps_acl own = acl_of("[{\"action\": \"deny\", \"subjects\": [\"bob\"],"
                               " \"permissions\": [\"write\"]}]");
    struct ps_acl mid = acl_of("[{\"action\": \"allow\", \"subjects\": [\"devs\"],"
                               " \"permissions\": [\"write\"]},"
                               "{\"action\": \"allow\", \"subjects\": [\"ops\"],"
                               " \"permissions\": [\"use\"], \"inheritance_mode\": \"object_only\"}]");
    struct ps_acl top = acl_of("[{\"action\": \"allow\", \"subjects\": [\"users\"],"
                               " \"permissions\": [\"use\"]}]");
    struct ps_acl_object chain[] = {{&own, true, "node //t/a/b"},
                                    {&mid, true, "node //t/a"},
                                    {&top, true, "node //t"}};
    struct ps_value v;
    assert_int_equal(ps_acl_effective(chain, 3, &v), 0);
    assert_int_equal(v.count, 3);
    const char *from[] = {"node //t/a/b", "node //t/a", "node //t"};
    const char *subject[] = {"bob", "devs", "users"};
    for (int i = 0; i < 3; i++) {
        assert_string_equal(ps_value_find(&v.items[i], "from")->string, from[i]);
        assert_string_equal(ps_value_find(&v.items[i], "subjects")->items[0].string, subject[i]);
    }
    ps_value_release(&v);
    chain[1].inherit_acl = false;
    assert_int_equal(ps_acl_effective(chain, 3, &v), 0);
    assert_int_equal(v.count, 2);
    ps_value_release(&v);
    ps_acl_release(&own);
    ps_acl_release(&mid);
    ps_acl_release(&top);
}

static void test_inheritance_modes(void **state)
{
    (void)state;
    struct ps_acl modes[4];
    static const char *const names[] = {"object_and_descendants", "object_only",
                                        "descendants_only", "immediate_descendants_only"};
    /* expected allow at depth 0, 1, 2 for each mode */
    static const int expect[4][3] = {{1, 1, 1}, {1, 0, 0}, {0, 1, 1}, {0, 1, 0}};
    for (int m = 0; m < 4; m++) {
        char text[256];
        snprintf(text, sizeof text,
                 "[{\"action\": \"allow\", \"subjects\": [\"bob\"], \"permissions\": [\"read\"],"
                 " \"inheritance_mode\": \"%s\"}]", names[m]);
        modes[m] = acl_of(text);
        for (int depth = 0; depth < 3; depth++) {
            struct ps_acl_object chain[3] = {{NULL, true, "c"}, {NULL, true, "b"},
                                             {NULL, true, "a"}};
            chain[depth].acl = &modes[m];
            int allowed = check(chain, 3, "bob", PS_PERM_READ) == PS_ACL_ALLOW;
            if (allowed != expect[m][depth])
                fail_msg("mode %s at depth %d: allowed %d", names[m], depth, allowed);
        }
        ps_acl_release(&modes[m]);
    }
}

static void test_nested_groups(void **state)
{
    (void)state;
    assert_true(ps_acl_member(&groups, "bob", "leads"));
    assert_true(ps_acl_member(&groups, "bob", "devs"));     /* leads is in devs */
    assert_true(ps_acl_member(&groups, "alice", "devs"));
    assert_false(ps_acl_member(&groups, "alice", "leads"));
    assert_false(ps_acl_member(&groups, "carol", "devs"));
    assert_true(ps_acl_member(&groups, "carol", "everyone"));
    assert_true(ps_acl_member(&groups, "carol", "users"));
    assert_false(ps_acl_superuser(&groups, "bob"));
    assert_true(ps_acl_superuser(&groups, "admin"));

    struct ps_acl acl = acl_of("[{\"action\": \"allow\", \"subjects\": [\"devs\"],"
                               " \"permissions\": [\"modify_children\"]}]");
    struct ps_acl_object one = {&acl, true, "node //p"};
    assert_int_equal(check(&one, 1, "bob", PS_PERM_MODIFY_CHILDREN), PS_ACL_ALLOW);
    assert_int_equal(check(&one, 1, "carol", PS_PERM_MODIFY_CHILDREN), PS_ACL_DENY);
    ps_acl_release(&acl);

    /* a cycle of groups ends */
    static const char *const x_members[] = {"y"};
    static const char *const y_members[] = {"x"};
    static const struct ps_acl_group cyc[] = {{"x", 1, x_members}, {"y", 1, y_members}};
    static const struct ps_acl_groups cycle = {2, cyc};
    assert_false(ps_acl_member(&cycle, "dave", "x"));
}

static void test_denied_message_as_upstream(void **state)
{
    (void)state;
    struct ps_error err;
    ps_error_init(&err);
    struct ps_acl_result none = {PS_ACL_DENY, NULL, NULL};
    assert_int_equal(ps_acl_denied(&err, "u", PS_PERM_USE, "node //sys/pools/p", &none),
                     PS_EPERM);
    assert_string_equal(err.msg, "Access denied for user \"u\": \"use\" permission for node "
                                 "//sys/pools/p is not allowed by any matching ACE");
    ps_error_init(&err);
    struct ps_acl_result by = {PS_ACL_DENY, "node //sys/pools", "users"};
    ps_acl_denied(&err, "u", PS_PERM_WRITE, "node //sys/pools/p", &by);
    assert_string_equal(err.msg, "Access denied for user \"u\": \"write\" permission for node "
                                 "//sys/pools/p is denied for \"users\" by ACE at node "
                                 "//sys/pools");
}


static void test_paths_into_the_acl(void **state)
{
    (void)state;
    struct ps_acl acl = acl_of("[{\"action\": \"allow\", \"subjects\": [\"u\"],"
                               " \"permissions\": [\"use\"]}]");
    struct ps_error err;
    ps_error_init(&err);
    struct ps_value deny = json("\"deny\"");
    assert_int_equal(ps_acl_set_path(&acl, "0/action", &deny, "acl/0/action", &err), 0);
    assert_int_equal(acl.aces[0].action, PS_ACL_DENY);
    assert_string_equal(acl.aces[0].subjects[0], "u");
    struct ps_value ace = json("{\"action\": \"allow\", \"subjects\": [\"g\"],"
                               " \"permissions\": [\"read\"]}");
    assert_int_equal(ps_acl_set_path(&acl, "end", &ace, "acl/end", &err), 0);
    assert_int_equal(acl.count, 2);
    assert_int_equal(acl.aces[1].permissions, PS_PERM_READ);
    struct ps_value got;
    assert_int_equal(ps_acl_get_path(&acl, "1/subjects", &got, "acl/1/subjects", &err), 0);
    assert_int_equal(got.type, PS_VALUE_LIST);
    assert_string_equal(got.items[0].string, "g");
    ps_value_release(&got);
    /* refused changes leave the ACL as it was */
    struct ps_value bad = json("\"maybe\"");
    assert_int_equal(ps_acl_set_path(&acl, "1/action", &bad, "acl/1/action", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "acl/1/action"));
    ps_error_init(&err);
    assert_int_equal(ps_acl_set_path(&acl, "5", &ace, "acl/5", &err), PS_EINVAL);
    assert_string_equal(err.msg, "acl/5: no such ACE (the ACL has 2)");
    assert_int_equal(acl.count, 2);
    assert_int_equal(acl.aces[1].action, PS_ACL_ALLOW);
    /* null removes an ACE */
    assert_int_equal(ps_acl_set_path(&acl, "0", NULL, "acl/0", &err), 0);
    assert_int_equal(acl.count, 1);
    assert_string_equal(acl.aces[0].subjects[0], "g");
    ps_value_release(&deny);
    ps_value_release(&ace);
    ps_value_release(&bad);
    ps_acl_release(&acl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_show),
        cmocka_unit_test(test_parse_errors_name_key_value_reason),
        cmocka_unit_test(test_no_ace_denies_and_superusers_pass),
        cmocka_unit_test(test_deny_wins_wherever_it_is),
        cmocka_unit_test(test_inheritance_and_inherit_acl),
        cmocka_unit_test(test_inheritance_modes),
        cmocka_unit_test(test_effective_acl),
        cmocka_unit_test(test_nested_groups),
        cmocka_unit_test(test_denied_message_as_upstream),
        cmocka_unit_test(test_paths_into_the_acl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
