/* Tests of the Cypress path parser and builder: the API's paths split into names, escapes,
 * a table of bad paths with their exact messages, and build -> parse round trips. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/ypath.h"

#define MAX_NAMES 16

struct good_case {
    const char *path;
    const char *nodes[MAX_NAMES];   /* NULL-terminated */
    const char *attrs[MAX_NAMES];   /* NULL-terminated */
    bool all_attrs;
    const char *canonical;          /* ps_ypath_format's spelling; NULL: the path itself */
};

static size_t count(const char *const *names)
{
    size_t n = 0;
    while (names[n])
        n++;
    return n;
}

static void expect_good(const struct good_case *c)
{
    struct ps_ypath p;
    ps_ypath_init(&p);
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_ypath_parse(c->path, &p, &err);
    if (rc != 0)
        print_error("%s: %s\n", c->path, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(p.node_count, count(c->nodes));
    for (size_t i = 0; i < p.node_count; i++)
        assert_string_equal(p.nodes[i], c->nodes[i]);
    assert_int_equal(p.attr_count, count(c->attrs));
    for (size_t i = 0; i < p.attr_count; i++)
        assert_string_equal(p.attrs[i], c->attrs[i]);
    assert_int_equal(p.all_attrs, c->all_attrs);

    char *s = NULL;
    assert_int_equal(ps_ypath_format(&p, &s, &err), 0);
    assert_string_equal(s, c->canonical ? c->canonical : c->path);

    /* The canonical spelling parses to the same names. */
    struct ps_ypath q;
    ps_ypath_init(&q);
    assert_int_equal(ps_ypath_parse(s, &q, &err), 0);
    assert_int_equal(q.node_count, p.node_count);
    for (size_t i = 0; i < q.node_count; i++)
        assert_string_equal(q.nodes[i], p.nodes[i]);
    assert_int_equal(q.attr_count, p.attr_count);
    for (size_t i = 0; i < q.attr_count; i++)
        assert_string_equal(q.attrs[i], p.attrs[i]);
    assert_int_equal(q.all_attrs, p.all_attrs);
    free(s);
    ps_ypath_release(&q);
    ps_ypath_release(&p);
    ps_ypath_release(&p);   /* releasing twice is harmless */
}

static void test_api_paths(void **state)
{
    (void)state;
    static const struct good_case cases[] = {
        {"//sys/pool_trees/physical/research/@weight",
         {"sys", "pool_trees", "physical", "research"}, {"weight"}, false, NULL},
        {"//sys/pool_trees/@default_tree", {"sys", "pool_trees"}, {"default_tree"}, false, NULL},
        {"//sys/pool_trees/physical/@nodes_filter",
         {"sys", "pool_trees", "physical"}, {"nodes_filter"}, false, NULL},
        {"//sys/pools/root-pool/burst/@integral_guarantees",
         {"sys", "pools", "root-pool", "burst"}, {"integral_guarantees"}, false, NULL},
        {"//sys/pools/root-pool/burst/@integral-guarantees/resource_flow",
         {"sys", "pools", "root-pool", "burst"}, {"integral-guarantees", "resource_flow"}, false,
         NULL},
        {"//sys/pool_trees/physical/a/b/c/@resource_limits/cpu",
         {"sys", "pool_trees", "physical", "a", "b", "c"}, {"resource_limits", "cpu"}, false,
         NULL},
        {"//sys/pool_trees/physical/research/@",
         {"sys", "pool_trees", "physical", "research"}, {NULL}, true, NULL},
        {"//sys/pool_trees/physical/research",
         {"sys", "pool_trees", "physical", "research"}, {NULL}, false, NULL},
        /* Ephemeral pools are named user$pool or pool$user: '$' is an ordinary character. */
        {"//sys/pool_trees/physical/research/alice$research/@weight",
         {"sys", "pool_trees", "physical", "research", "alice$research"}, {"weight"}, false,
         NULL},
        {"//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/"
         "fair_share_info/pools/pool_name/integral_pool_capacity",
         {"sys", "scheduler", "orchid", "scheduler", "scheduling_info_per_pool_tree", "physical",
          "fair_share_info", "pools", "pool_name", "integral_pool_capacity"},
         {NULL}, false, NULL},
        {"//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/"
         "fair_share_info/operations/1a2b-3c4d-5e6f-7a8b/starvation_status",
         {"sys", "scheduler", "orchid", "scheduler", "scheduling_info_per_pool_tree", "physical",
          "fair_share_info", "operations", "1a2b-3c4d-5e6f-7a8b", "starvation_status"},
         {NULL}, false, NULL},
        {"//", {NULL}, {NULL}, false, NULL},
        {"//@", {NULL}, {NULL}, true, NULL},
        {"//@acl", {NULL}, {"acl"}, false, NULL},
        {"//sys", {"sys"}, {NULL}, false, NULL},
        /* Escapes, and their canonical spelling. */
        {"//sys/a\\/b/c\\@d/\\x41\\x2f", {"sys", "a/b", "c@d", "A/"}, {NULL}, false,
         "//sys/a\\/b/c\\@d/A\\/"},
        {"//a\\\\b/\\&\\*\\[\\{/@k\\/1", {"a\\b", "&*[{"}, {"k/1"}, false, NULL},
        {"//a]}$%#<>=;:,.?!~ \"'", {"a]}$%#<>=;:,.?!~ \"'"}, {NULL}, false, NULL},
        {"//sys/pools/\xd0\xbf\xd1\x83\xd0\xbb/@\\xd0\\xbf", {"sys", "pools", "\xd0\xbf\xd1\x83\xd0\xbb"},
         {"\xd0\xbf"}, false, "//sys/pools/\xd0\xbf\xd1\x83\xd0\xbb/@\xd0\xbf"},
        {"//V100 32/x", {"V100 32", "x"}, {NULL}, false, NULL},
        /* `name&` (do not follow a link), as `yt list -l` sends it: no links here, dropped */
        {"//sys/pools/x&/@", {"sys", "pools", "x"}, {NULL}, true, "//sys/pools/x/@"},
        {"//sys/pools&", {"sys", "pools"}, {NULL}, false, "//sys/pools"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_good(&cases[i]);
}

struct bad_case {
    const char *path;
    const char *msg;
};

static void expect_bad(const char *path, const char *msg)
{
    struct ps_ypath p;
    ps_ypath_init(&p);
    /* A previous parse's contents are released by the next parse, successful or not. */
    assert_int_equal(ps_ypath_parse("//sys/x/@y", &p, NULL), 0);
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_ypath_parse(path, &p, &err);
    if (rc != PS_EINVAL || strcmp(err.msg, msg) != 0)
        print_error("path %s:\n  got  %d %s\n  want %s\n", path, rc, err.msg, msg);
    assert_int_equal(rc, PS_EINVAL);
    assert_int_equal(err.code, PS_EINVAL);
    assert_string_equal(err.msg, msg);
    assert_int_equal(p.node_count, 0);
    assert_int_equal(p.attr_count, 0);
    assert_false(p.all_attrs);
    assert_null(p.nodes);
    assert_int_equal(ps_ypath_parse(path, &p, NULL), PS_EINVAL);
    ps_ypath_release(&p);
}

static void test_bad_paths(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"", "invalid path: the path is empty"},
        {"sys/pools", "invalid path \"sys/pools\": a path must start with \"//\" (like "
                      "//sys/pool_trees/...) at position 1"},
        {"/sys/pools", "invalid path \"/sys/pools\": a path must start with \"//\" (like "
                       "//sys/pool_trees/...) at position 1"},
        {"/", "invalid path \"/\": a path must start with \"//\" (like //sys/pool_trees/...) at "
              "position 1"},
        {"#1-2-3-4/@x", "invalid path \"#1-2-3-4/@x\": a path must start with \"//\" (like "
                        "//sys/pool_trees/...) at position 1"},
        {" //sys", "invalid path \" //sys\": a path must start with \"//\" (like "
                   "//sys/pool_trees/...) at position 1"},
        {"//sys//pools", "invalid path \"//sys//pools\": empty name at position 7"},
        {"///sys", "invalid path \"///sys\": empty name at position 3"},
        {"//sys/pools/", "invalid path \"//sys/pools/\": a path must not end with '/' at "
                         "position 12"},
        {"//sys/", "invalid path \"//sys/\": a path must not end with '/' at position 6"},
        {"//sys/@a/", "invalid path \"//sys/@a/\": a path must not end with '/' at position 9"},
        {"//sys/@a//b", "invalid path \"//sys/@a//b\": empty attribute key at position 10"},
        {"//sys/@/a", "invalid path \"//sys/@/a\": empty attribute key at position 8"},
        {"//sys/a@b", "invalid path \"//sys/a@b\": '@' must follow '/' to start attributes "
                      "(/@name); write \\@ for a literal '@' at position 8"},
        {"//sys/@a/@b", "invalid path \"//sys/@a/@b\": '@' inside the attribute part "
                        "(attributes of an attribute are not supported); write \\@ for a "
                        "literal '@' at position 10"},
        {"//sys/@@", "invalid path \"//sys/@@\": '@' inside the attribute part (attributes of an "
                     "attribute are not supported); write \\@ for a literal '@' at position 8"},
        {"//sys/li&nk", "invalid path \"//sys/li&nk\": unescaped '&' is not supported in a name; "
                        "write \\& for a literal '&' at position 9"},
        {"//sys/&", "invalid path \"//sys/&\": unescaped '&' is not supported in a name; "
                    "write \\& for a literal '&' at position 7"},
        {"//sys/@a&", "invalid path \"//sys/@a&\": unescaped '&' is not supported in a name; "
                      "write \\& for a literal '&' at position 9"},
        {"//sys/*", "invalid path \"//sys/*\": unescaped '*' is not supported in a name; write "
                    "\\* for a literal '*' at position 7"},
        {"//t[#1:#2]", "invalid path \"//t[#1:#2]\": unescaped '[' is not supported in a name; "
                       "write \\[ for a literal '[' at position 4"},
        {"//t{a,b}", "invalid path \"//t{a,b}\": unescaped '{' is not supported in a name; write "
                     "\\{ for a literal '{' at position 4"},
        {"//sys/a\\", "invalid path \"//sys/a\\\\\": escape '\\' at the end of the path at "
                      "position 8"},
        {"//sys/a\\q", "invalid path \"//sys/a\\\\q\": malformed escape: '\\' must be followed by "
                       "one of \\ / @ & * [ { or xHH at position 8"},
        {"//sys/a\\x4", "invalid path \"//sys/a\\\\x4\": malformed escape: \\x needs two hex "
                        "digits at position 8"},
        {"//sys/a\\xg0", "invalid path \"//sys/a\\\\xg0\": malformed escape: \\x needs two hex "
                         "digits at position 8"},
        {"//sys/a\\x01", "invalid path \"//sys/a\\\\x01\": control character 0x01 in a name at "
                         "position 8"},
        {"//sys/a\\x00b", "invalid path \"//sys/a\\\\x00b\": control character 0x00 in a name at "
                          "position 8"},
        {"//sys/a\tb", "invalid path \"//sys/a\\x09b\": control character 0x09 in a name at "
                       "position 8"},
        {"//sys/a\x7f", "invalid path \"//sys/a\\x7F\": control character 0x7F in a name at "
                        "position 8"},
        {"//sys/\xff", "invalid path \"//sys/\\xFF\": the name starting here is not valid UTF-8 at "
                       "position 7"},
        {"//sys/\xd0\xbf\xff/x", "invalid path \"//sys/\xd0\xbf\\xFF/x\": the name starting "
                                 "here is not valid UTF-8 at position 7"},
        {"//sys/a\\xc3", "invalid path \"//sys/a\\\\xc3\": the name starting here is not valid "
                         "UTF-8 at position 7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_bad(cases[i].path, cases[i].msg);
}

static void test_length_limit(void **state)
{
    (void)state;
    char *path = malloc(PS_YPATH_MAX_LEN + 2);
    assert_non_null(path);
    memset(path, 'a', PS_YPATH_MAX_LEN + 1);
    path[0] = path[1] = '/';
    path[PS_YPATH_MAX_LEN] = '\0';
    struct ps_ypath p;
    ps_ypath_init(&p);
    assert_int_equal(ps_ypath_parse(path, &p, NULL), 0);
    assert_int_equal(p.node_count, 1);
    assert_int_equal(strlen(p.nodes[0]), PS_YPATH_MAX_LEN - 2);
    ps_ypath_release(&p);

    path[PS_YPATH_MAX_LEN] = 'a';
    path[PS_YPATH_MAX_LEN + 1] = '\0';
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_ypath_parse(path, &p, &err), PS_EINVAL);
    assert_string_equal(err.msg, "invalid path: longer than 4096 bytes");

    /* A long bad path is cut in the message, which stays readable. */
    memset(path, 'a', PS_YPATH_MAX_LEN);
    path[0] = path[1] = '/';
    path[3000] = '&';
    path[PS_YPATH_MAX_LEN] = '\0';
    ps_error_init(&err);
    assert_int_equal(ps_ypath_parse(path, &p, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "aaa...\": unescaped '&' is not supported in a name; write "
                                    "\\& for a literal '&' at position 3001"));
    free(path);
}

static void test_many_names(void **state)
{
    (void)state;
    /* //a/a/.../a/@a/a/... : many names on both sides of /@. */
    char path[PS_YPATH_MAX_LEN + 1];
    size_t n = 0;
    path[n++] = '/';
    for (int i = 0; i < 1000; i++) {
        path[n++] = '/';
        path[n++] = 'a';
    }
    path[n++] = '/';
    path[n++] = '@';
    path[n++] = 'b';
    for (int i = 0; i < 500; i++) {
        path[n++] = '/';
        path[n++] = 'c';
    }
    path[n] = '\0';
    struct ps_ypath p;
    ps_ypath_init(&p);
    assert_int_equal(ps_ypath_parse(path, &p, NULL), 0);
    assert_int_equal(p.node_count, 1000);
    assert_int_equal(p.attr_count, 501);
    assert_string_equal(p.attrs[500], "c");
    ps_ypath_release(&p);
}

static void test_build_and_escape(void **state)
{
    (void)state;
    struct ps_error err;
    char *s = NULL;

    ps_error_init(&err);
    assert_int_equal(ps_ypath_escape("a/b@c\\d&e*f[g{h]i}j$k", &s, &err), 0);
    assert_string_equal(s, "a\\/b\\@c\\\\d\\&e\\*f\\[g\\{h]i}j$k");
    free(s);

    const char *nodes[] = {"sys", "pool_trees", "physical", "alice$research"};
    const char *attrs[] = {"integral_guarantees", "resource_flow", "cpu"};
    assert_int_equal(ps_ypath_build(nodes, 4, attrs, 3, false, &s, &err), 0);
    assert_string_equal(s, "//sys/pool_trees/physical/alice$research/@integral_guarantees/"
                           "resource_flow/cpu");
    free(s);
    assert_int_equal(ps_ypath_build(nodes, 2, NULL, 0, true, &s, &err), 0);
    assert_string_equal(s, "//sys/pool_trees/@");
    free(s);
    assert_int_equal(ps_ypath_build(NULL, 0, NULL, 0, false, &s, &err), 0);
    assert_string_equal(s, "//");
    free(s);
    assert_int_equal(ps_ypath_build(NULL, 0, attrs, 1, false, &s, &err), 0);
    assert_string_equal(s, "//@integral_guarantees");
    free(s);

    /* What the parser would refuse, the builder refuses. */
    static const struct bad_case bad[] = {
        {"", "cannot build a path: empty name"},
        {"a\tb", "cannot build a path: control character 0x09 in a name"},
        {"\xc3", "cannot build a path: name is not valid UTF-8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ps_error_init(&err);
        s = (char *)0x1;
        assert_int_equal(ps_ypath_escape(bad[i].path, &s, &err), PS_EINVAL);
        assert_null(s);
        assert_string_equal(err.msg, bad[i].msg);
        const char *one[] = {"sys", bad[i].path};
        ps_error_init(&err);
        assert_int_equal(ps_ypath_build(one, 2, NULL, 0, false, &s, &err), PS_EINVAL);
        assert_null(s);
        assert_string_equal(err.msg, bad[i].msg);
        ps_error_init(&err);
        assert_int_equal(ps_ypath_build(one, 1, one + 1, 1, false, &s, &err), PS_EINVAL);
        assert_string_equal(err.msg, bad[i].msg);
    }
    ps_error_init(&err);
    assert_int_equal(ps_ypath_build(nodes, 1, attrs, 1, true, &s, &err), PS_EINVAL);
    assert_string_equal(err.msg, "cannot build a path: all attributes and attribute keys at once");

    char *big = malloc(PS_YPATH_MAX_LEN);
    assert_non_null(big);
    memset(big, 'x', PS_YPATH_MAX_LEN - 2);   /* "//" + 4094 bytes = 4096, the limit */
    big[PS_YPATH_MAX_LEN - 2] = '\0';
    const char *fits[] = {big};
    assert_int_equal(ps_ypath_build(fits, 1, NULL, 0, false, &s, &err), 0);
    assert_int_equal(strlen(s), PS_YPATH_MAX_LEN);
    free(s);
    memset(big, 'x', PS_YPATH_MAX_LEN - 1);   /* "//" + 4095 bytes = 4097 */
    big[PS_YPATH_MAX_LEN - 1] = '\0';
    ps_error_init(&err);
    assert_int_equal(ps_ypath_build(fits, 1, NULL, 0, false, &s, &err), PS_EINVAL);
    assert_string_equal(err.msg, "cannot build a path: longer than 4096 bytes");
    free(big);
}

static void test_build_round_trip(void **state)
{
    (void)state;
    /* Every printable ASCII character and some UTF-8 in names survive build -> parse. */
    char all[128];
    size_t n = 0;
    for (int c = 0x20; c < 0x7f; c++)
        all[n++] = (char)c;
    all[n] = '\0';
    const char *nodes[] = {all, "\xe2\x82\xac", "x"};
    const char *attrs[] = {all, "@"};
    char *s = NULL;
    assert_int_equal(ps_ypath_build(nodes, 3, attrs, 2, false, &s, NULL), 0);
    struct ps_ypath p;
    ps_ypath_init(&p);
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_ypath_parse(s, &p, &err);
    if (rc != 0)
        print_error("%s: %s\n", s, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(p.node_count, 3);
    assert_string_equal(p.nodes[0], all);
    assert_string_equal(p.nodes[1], "\xe2\x82\xac");
    assert_int_equal(p.attr_count, 2);
    assert_string_equal(p.attrs[0], all);
    assert_string_equal(p.attrs[1], "@");
    ps_ypath_release(&p);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_paths),
        cmocka_unit_test(test_bad_paths),
        cmocka_unit_test(test_length_limit),
        cmocka_unit_test(test_many_names),
        cmocka_unit_test(test_build_and_escape),
        cmocka_unit_test(test_build_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
