/* Tests of the YSON text parser, the JSON-or-YSON reader and the YSON printer: every syntax
 * element, the values of the documents' commands, a table of malformed inputs with their exact
 * messages, and print -> parse round trips. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/yson.h"

/* Parses YSON text (NUL-terminated) and fails the test on error. */
static json_t *yson(const char *text)
{
    struct ps_error err;
    ps_error_init(&err);
    json_t *v = (json_t *)0x1;
    int rc = ps_yson_parse(text, strlen(text), &v, &err);
    if (rc != 0)
        print_error("ps_yson_parse(%s): %s\n", text, err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(err.code, 0);
    assert_non_null(v);
    return v;
}

static json_t *value_text(const char *text)
{
    struct ps_error err;
    ps_error_init(&err);
    json_t *v = (json_t *)0x1;
    int rc = ps_value_parse_text(text, strlen(text), &v, &err);
    if (rc != 0)
        print_error("ps_value_parse_text(%s): %s\n", text, err.msg);
    assert_int_equal(rc, 0);
    assert_non_null(v);
    return v;
}

static json_t *json(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (!v)
        print_error("test JSON %s: %s\n", text, jerr.text);
    assert_non_null(v);
    return v;
}

/* Asserts that got equals the JSON text want, then drops got. */
static void expect_equal(json_t *got, const char *want)
{
    json_t *w = json(want);
    if (!json_equal(got, w)) {
        char *g = json_dumps(got, JSON_ENCODE_ANY);
        print_error("got %s, want %s\n", g, want);
        free(g);
    }
    assert_true(json_equal(got, w));
    json_decref(w);
    json_decref(got);
}

static void test_scalars(void **state)
{
    (void)state;
    json_t *v = yson("42");
    assert_true(json_is_integer(v));
    assert_int_equal(json_integer_value(v), 42);
    json_decref(v);

    v = yson("-7");
    assert_int_equal(json_integer_value(v), -7);
    json_decref(v);
    v = yson("+5");
    assert_int_equal(json_integer_value(v), 5);
    json_decref(v);
    v = yson("42u");
    assert_true(json_is_integer(v));
    assert_int_equal(json_integer_value(v), 42);
    json_decref(v);
    v = yson("-9223372036854775808");
    assert_true(json_integer_value(v) == INT64_MIN);
    json_decref(v);
    v = yson("9223372036854775807");
    assert_true(json_integer_value(v) == INT64_MAX);
    json_decref(v);
    v = yson("9223372036854775807u");
    assert_true(json_integer_value(v) == INT64_MAX);
    json_decref(v);

    v = yson("1.5");
    assert_true(json_is_real(v));
    assert_true(json_real_value(v) == 1.5);
    json_decref(v);
    v = yson("1e10");
    assert_true(json_is_real(v));
    assert_true(json_real_value(v) == 1e10);
    json_decref(v);
    v = yson("1000.");   /* upstream's writer spells doubles like this */
    assert_true(json_is_real(v));
    assert_true(json_real_value(v) == 1000.0);
    json_decref(v);
    v = yson("-2.5E-3");
    assert_true(json_real_value(v) == -2.5e-3);
    json_decref(v);
    v = yson("1e-400");  /* underflow to zero is not an error */
    assert_true(json_is_real(v));
    json_decref(v);

    v = yson("%true");
    assert_true(json_is_true(v));
    json_decref(v);
    v = yson("%false");
    assert_true(json_is_false(v));
    json_decref(v);
    v = yson("#");
    assert_true(json_is_null(v));
    json_decref(v);

    expect_equal(yson("burst"), "\"burst\"");
    expect_equal(yson("fair_share"), "\"fair_share\"");
    expect_equal(yson("V100-32.a_b%c"), "\"V100-32.a_b%c\"");
    expect_equal(yson("_x"), "\"_x\"");
    expect_equal(yson("\"x y\""), "\"x y\"");
    expect_equal(yson("\"\""), "\"\"");
    /* In YSON unquoted true/false/null are strings, as upstream. */
    expect_equal(yson("true"), "\"true\"");
    expect_equal(yson("false"), "\"false\"");
    expect_equal(yson("null"), "\"null\"");
    expect_equal(yson("  \t\n 7 \r\n\v\f"), "7");
}

static void test_string_escapes(void **state)
{
    (void)state;
    json_t *v = yson("\"a\\nb\\t\\\"\\\\\\x41\\101\\u00e9\\U0001F600\\'\\?\\a\\b\\f\\r\\v\\x7\"");
    const char want[] = "a\nb\t\"\\AA\xc3\xa9\xf0\x9f\x98\x80'?\a\b\f\r\v\x07";
    assert_int_equal(json_string_length(v), sizeof want - 1);
    assert_memory_equal(json_string_value(v), want, sizeof want - 1);
    json_decref(v);
    /* Raw UTF-8 and raw newlines inside quotes are kept; \x escapes may build UTF-8. */
    expect_equal(yson("\"\xd0\xbf\xd1\x83\xd0\xbb\n\""), "\"\\u043f\\u0443\\u043b\\n\"");
    expect_equal(yson("\"\\xd0\\xbf\""), "\"\\u043f\"");
    expect_equal(yson("\"\\1012\""), "\"A2\"");   /* octal takes at most three digits */
    expect_equal(yson("\"\\x412\""), "\"A2\"");   /* \x takes at most two */
}

static void test_maps_and_lists(void **state)
{
    (void)state;
    expect_equal(yson("{a=1; b=\"x\"}"), "{\"a\":1,\"b\":\"x\"}");
    expect_equal(yson("{a=1; b=\"x\";}"), "{\"a\":1,\"b\":\"x\"}");
    expect_equal(yson("{a=1;b=x}"), "{\"a\":1,\"b\":\"x\"}");
    expect_equal(yson("{ \"cpu\" = 1000 ; \"memory\"=5; }"), "{\"cpu\":1000,\"memory\":5}");
    expect_equal(yson("{}"), "{}");
    expect_equal(yson("{ }"), "{}");
    expect_equal(yson("[1; 2; 3]"), "[1,2,3]");
    expect_equal(yson("[1;2;3;]"), "[1,2,3]");
    expect_equal(yson("[]"), "[]");
    expect_equal(yson("[ ]"), "[]");
    expect_equal(yson("[#; %true; %false; 1.5; x; \"y\"; []; {}]"),
                 "[null,true,false,1.5,\"x\",\"y\",[],{}]");
    expect_equal(yson("{a={b={c=[1;{d=#}]}}}"), "{\"a\":{\"b\":{\"c\":[1,{\"d\":null}]}}}");
    expect_equal(yson("{\"key with spaces\"=1; \"\"=2}"), "{\"key with spaces\":1,\"\":2}");

    /* Insertion order is kept. */
    json_t *v = yson("{z=1; a=2; m=3}");
    const char *order[3];
    size_t i = 0;
    const char *key;
    json_t *child;
    json_object_foreach(v, key, child) {
        order[i++] = key;
    }
    assert_string_equal(order[0], "z");
    assert_string_equal(order[1], "a");
    assert_string_equal(order[2], "m");
    json_decref(v);
}

/* The values of the commands in the reference documents (integral guarantees). */
static void test_document_values(void **state)
{
    (void)state;
    const char *burst_want = "{\"guarantee_type\":\"burst\",\"resource_flow\":{\"cpu\":1000},"
                             "\"burst_guarantee_resources\":{\"cpu\":2000}}";
    expect_equal(yson("{guarantee_type=burst; resource_flow={cpu=1000}; "
                      "burst_guarantee_resources={cpu=2000}}"), burst_want);
    expect_equal(value_text("{guarantee_type=burst; resource_flow={cpu=1000}; "
                            "burst_guarantee_resources={cpu=2000}}"), burst_want);
    /* As the document writes it, over several lines. */
    expect_equal(value_text("\n{\n  guarantee_type=burst;\n  resource_flow={cpu=1000};\n"
                            "  burst_guarantee_resources={cpu=2000}\n}"), burst_want);
    expect_equal(value_text("\n{\n  guarantee_type=relaxed;\n  resource_flow={cpu=1000}\n}"),
                 "{\"guarantee_type\":\"relaxed\",\"resource_flow\":{\"cpu\":1000}}");
    /* The shell strips the quotes of "{cpu=100}"; with them kept it is a string. */
    expect_equal(value_text("{cpu=100}"), "{\"cpu\":100}");
    expect_equal(value_text("\"{cpu=100}\""), "\"{cpu=100}\"");
    expect_equal(value_text("%true"), "true");
    expect_equal(value_text("#"), "null");
    expect_equal(value_text("{cpu=11.17; memory=1073741824; user_slots=10u; gpu=0}"),
                 "{\"cpu\":11.17,\"memory\":1073741824,\"user_slots\":10,\"gpu\":0}");
    expect_equal(value_text("[{name=a; weight=2.}; {name=b; weight=1.}]"),
                 "[{\"name\":\"a\",\"weight\":2.0},{\"name\":\"b\",\"weight\":1.0}]");
}

static void test_json_detection(void **state)
{
    (void)state;
    /* Valid JSON is JSON. */
    expect_equal(value_text("{\"cpu\": 1}"), "{\"cpu\":1}");
    expect_equal(value_text("[1, 2, 3]"), "[1,2,3]");
    expect_equal(value_text("true"), "true");
    expect_equal(value_text("false"), "false");
    expect_equal(value_text("null"), "null");
    expect_equal(value_text("[true, null]"), "[true,null]");
    expect_equal(value_text("[true]"), "[true]");
    expect_equal(value_text("\"s\""), "\"s\"");
    expect_equal(value_text("12"), "12");
    expect_equal(value_text("-1.5e3"), "-1500.0");
    expect_equal(value_text(" {\"a\":{\"b\":[1,2.5,\"x\",true,null]}} "),
                 "{\"a\":{\"b\":[1,2.5,\"x\",true,null]}}");
    json_t *v = value_text("1.0");
    assert_true(json_is_real(v));
    json_decref(v);

    /* Everything else is YSON. */
    expect_equal(value_text("{cpu=1}"), "{\"cpu\":1}");
    expect_equal(value_text("{\"cpu\"=1}"), "{\"cpu\":1}");
    expect_equal(value_text("[1;2]"), "[1,2]");
    expect_equal(value_text("[true; false]"), "[\"true\",\"false\"]");
    expect_equal(value_text("{a=true}"), "{\"a\":\"true\"}");
    expect_equal(value_text("burst"), "\"burst\"");
    expect_equal(value_text("42u"), "42");
    expect_equal(value_text("1000."), "1000.0");
    expect_equal(value_text("[%true;#]"), "[true,null]");
    /* A JSON text with a NUL byte inside is neither. */
    struct ps_error err;
    ps_error_init(&err);
    json_t *out = (json_t *)0x1;
    assert_int_equal(ps_value_parse_text("[1]\0", 4, &out, &err), PS_EINVAL);
    assert_null(out);
    assert_string_equal(err.msg,
                        "invalid YSON at line 1, column 4: unexpected byte 0x00, expected end "
                        "of input after the value");
    /* len bounds the text: no NUL terminator needed. */
    ps_error_init(&err);
    assert_int_equal(ps_value_parse_text("{a=1}garbage", 5, &out, &err), 0);
    expect_equal(out, "{\"a\":1}");
}

struct bad_case {
    const char *text;
    const char *msg;
};

static void expect_yson_error(const char *text, size_t len, const char *msg)
{
    struct ps_error err;
    ps_error_init(&err);
    json_t *v = (json_t *)0x1;
    int rc = ps_yson_parse(text, len, &v, &err);
    if (rc != PS_EINVAL || strcmp(err.msg, msg) != 0)
        print_error("input %s:\n  got  rc %d %s\n  want %s\n", text, rc, err.msg, msg);
    assert_int_equal(rc, PS_EINVAL);
    assert_int_equal(err.code, PS_EINVAL);
    assert_null(v);
    assert_string_equal(err.msg, msg);
    /* The same through the JSON-or-YSON reader (none of these is valid JSON). */
    ps_error_init(&err);
    rc = ps_value_parse_text(text, len, &v, &err);
    if (rc != PS_EINVAL)
        print_error("ps_value_parse_text accepted %s\n", text);
    assert_int_equal(rc, PS_EINVAL);
    assert_string_equal(err.msg, msg);
    /* err may be NULL. */
    assert_int_equal(ps_yson_parse(text, len, &v, NULL), PS_EINVAL);
}

static void test_malformed(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"", "invalid YSON at line 1, column 1: unexpected end of input, expected a value"},
        {"   ", "invalid YSON at line 1, column 4: unexpected end of input, expected a value"},
        {"{a=1", "invalid YSON at line 1, column 5: unexpected end of input, expected ';' or '}'"},
        {"{a=}", "invalid YSON at line 1, column 4: unexpected '}', expected a value"},
        {"{a 1}", "invalid YSON at line 1, column 4: unexpected '1', expected '=' after key \"a\""},
        {"{a}", "invalid YSON at line 1, column 3: unexpected '}', expected '=' after key \"a\""},
        {"{=1}", "invalid YSON at line 1, column 2: unexpected '=', expected a key or '}'"},
        {"{1=2}", "invalid YSON at line 1, column 2: unexpected '1', expected a key or '}'"},
        {"{a=1;;}", "invalid YSON at line 1, column 6: unexpected ';', expected a key or '}'"},
        {"{a=1 b=2}", "invalid YSON at line 1, column 6: unexpected 'b', expected ';' or '}'"},
        {"[x, 2]", "invalid YSON at line 1, column 3: unexpected ',', expected ';' or ']' "
                   "(YSON separates items with ';')"},
        {"{a=1, b=2}", "invalid YSON at line 1, column 5: unexpected ',', expected ';' or '}' "
                       "(YSON separates items with ';')"},
        {"[1;;]", "invalid YSON at line 1, column 4: unexpected ';', expected a value"},
        {"[1", "invalid YSON at line 1, column 3: unexpected end of input, expected ';' or ']'"},
        {"]", "invalid YSON at line 1, column 1: unexpected ']', expected a value"},
        {"{a=1;a=2}", "invalid YSON at line 1, column 6: duplicate key \"a\""},
        {"{\"a\"=1;a=2}", "invalid YSON at line 1, column 8: duplicate key \"a\""},
        {"<a=1>5", "invalid YSON at line 1, column 1: attributes (<...> before a value) are not "
                   "supported here"},
        {"{x=<a=1>5}", "invalid YSON at line 1, column 4: attributes (<...> before a value) are "
                       "not supported here"},
        {"%nan", "invalid YSON at line 1, column 1: non-finite numbers (%nan, %inf, %-inf) are "
                 "not supported: values must be finite"},
        {"%inf", "invalid YSON at line 1, column 1: non-finite numbers (%nan, %inf, %-inf) are "
                 "not supported: values must be finite"},
        {"%+inf", "invalid YSON at line 1, column 1: non-finite numbers (%nan, %inf, %-inf) are "
                  "not supported: values must be finite"},
        {"[%-inf]", "invalid YSON at line 1, column 2: non-finite numbers (%nan, %inf, %-inf) "
                    "are not supported: values must be finite"},
        {"-%inf", "invalid YSON at line 1, column 1: non-finite numbers (%nan, %inf, %-inf) are "
                  "not supported: values must be finite"},
        {"%maybe", "invalid YSON at line 1, column 1: unknown literal '%maybe', expected %true "
                   "or %false"},
        {"%truex", "invalid YSON at line 1, column 1: unknown literal '%truex', expected %true "
                   "or %false"},
        {"%", "invalid YSON at line 1, column 1: unknown literal '%', expected %true or %false"},
        {"1e999", "invalid YSON at line 1, column 1: number 1e999 is out of range for a double"},
        {"-1e999", "invalid YSON at line 1, column 1: number -1e999 is out of range for a "
                   "double"},
        {"9223372036854775808", "invalid YSON at line 1, column 1: integer 9223372036854775808 "
                                "is out of range for a signed 64-bit integer"},
        {"-9223372036854775809", "invalid YSON at line 1, column 1: integer "
                                 "-9223372036854775809 is out of range for a signed 64-bit "
                                 "integer"},
        {"99999999999999999999999", "invalid YSON at line 1, column 1: invalid number "
                                    "99999999999999999999999"},
        {"18446744073709551615u", "invalid YSON at line 1, column 1: unsigned integer "
                                  "18446744073709551615u does not fit in a signed 64-bit "
                                  "integer"},
        {"18446744073709551616u", "invalid YSON at line 1, column 1: invalid unsigned integer "
                                  "18446744073709551616u"},
        {"-1u", "invalid YSON at line 1, column 1: unsigned integer -1u cannot be negative"},
        {"12abc", "invalid YSON at line 1, column 3: unexpected 'a' in a number"},
        {"1.2.3", "invalid YSON at line 1, column 1: invalid number 1.2.3"},
        {"1e", "invalid YSON at line 1, column 1: invalid number 1e"},
        {"1e+", "invalid YSON at line 1, column 1: invalid number 1e+"},
        {"1-2", "invalid YSON at line 1, column 1: invalid number 1-2"},
        {"--1", "invalid YSON at line 1, column 1: unexpected '-', expected a value"},
        {"-", "invalid YSON at line 1, column 1: unexpected '-', expected a value"},
        {"+", "invalid YSON at line 1, column 1: unexpected '+', expected a value"},
        {".5", "invalid YSON at line 1, column 1: unexpected '.', expected a value"},
        {"\"abc", "invalid YSON at line 1, column 1: unterminated string"},
        {"{a=\"abc\\\"}", "invalid YSON at line 1, column 4: unterminated string"},
        {"\"a\\", "invalid YSON at line 1, column 3: unterminated string"},
        {"\"\\q\"", "invalid YSON at line 1, column 2: unknown escape sequence: backslash "
                    "followed by 'q'"},
        {"\"\\x\"", "invalid YSON at line 1, column 2: escape \\x needs one or two hex digits"},
        {"\"\\u12\"", "invalid YSON at line 1, column 2: escape \\u needs 4 hex digits"},
        {"\"\\U0001F60\"", "invalid YSON at line 1, column 2: escape \\U needs 8 hex digits"},
        {"\"\\uD800\"", "invalid YSON at line 1, column 2: escape \\uD800 is not a Unicode "
                        "scalar value (surrogate or above U+10FFFF)"},
        {"\"\\U00110000\"", "invalid YSON at line 1, column 2: escape \\U00110000 is not a "
                            "Unicode scalar value (surrogate or above U+10FFFF)"},
        {"\"\\400\"", "invalid YSON at line 1, column 2: octal escape \\400 is above \\377"},
        {"\"a\\0\"", "invalid YSON at line 1, column 1: string contains a NUL byte"},
        {"{\"k\\0\"=1}", "invalid YSON at line 1, column 2: string contains a NUL byte"},
        {"\"ab\\xff\"", "invalid YSON at line 1, column 1: string is not valid UTF-8 (at byte 3 "
                        "of its value)"},
        {"\"\xff\"", "invalid YSON at line 1, column 1: string is not valid UTF-8 (at byte 1 of "
                     "its value)"},
        {"\"\xc0\xaf\"", "invalid YSON at line 1, column 1: string is not valid UTF-8 (at byte 1 "
                         "of its value)"},
        {"\xc3\xa9", "invalid YSON at line 1, column 1: unexpected byte 0xC3, expected a value"},
        {"1 2", "invalid YSON at line 1, column 3: unexpected '2', expected end of input after "
                "the value"},
        {"{a=1}}", "invalid YSON at line 1, column 6: unexpected '}', expected end of input "
                   "after the value"},
        {"a;", "invalid YSON at line 1, column 2: unexpected ';', expected end of input after "
               "the value"},
        {"\x01\x02", "invalid YSON at line 1, column 1: unexpected byte 0x01, expected a value"},
        {"@", "invalid YSON at line 1, column 1: unexpected '@', expected a value"},
        {"{\n  a=1;\n  b=\n}", "invalid YSON at line 4, column 1: unexpected '}', expected a "
                               "value"},
        {"{\n\tguarantee_type=burst\n\tresource_flow={cpu=1}\n}",
         "invalid YSON at line 3, column 2: unexpected 'r', expected ';' or '}'"},
        {"/* c */ 1", "invalid YSON at line 1, column 1: unexpected '/', expected a value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_yson_error(cases[i].text, strlen(cases[i].text), cases[i].msg);
    /* A NUL byte outside a string. */
    expect_yson_error("{a=\0}", 5,
                      "invalid YSON at line 1, column 4: unexpected byte 0x00, expected a value");
}

/* Builds n nested lists around 1: [[...[1]...]]. */
static char *nested_lists(int n)
{
    char *s = malloc((size_t)n * 2 + 2);
    assert_non_null(s);
    memset(s, '[', (size_t)n);
    s[n] = '1';
    memset(s + n + 1, ']', (size_t)n);
    s[2 * n + 1] = '\0';
    return s;
}

static void test_depth_limit(void **state)
{
    (void)state;
    /* 64 levels parse, in both languages ([[1]] is valid JSON; {a={...}} is YSON). */
    char *ok = nested_lists(PS_YSON_MAX_DEPTH);
    json_t *v = yson(ok);
    json_decref(v);
    v = value_text(ok);
    json_decref(v);
    free(ok);

    char *deep = nested_lists(PS_YSON_MAX_DEPTH + 1);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_yson_parse(deep, strlen(deep), &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "invalid YSON at line 1, column 65: nesting deeper than 64 "
                                 "levels of maps and lists");
    ps_error_init(&err);
    assert_int_equal(ps_value_parse_text(deep, strlen(deep), &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "invalid JSON: nesting deeper than 64 levels of maps and lists");
    free(deep);

    /* Maps count too; a hostile depth fails fast without recursing further. */
    size_t n = 100000;
    char *maps = malloc(n * 3 + 2);
    assert_non_null(maps);
    for (size_t i = 0; i < n; i++)
        memcpy(maps + 3 * i, "{a=", 3);
    maps[3 * n] = '\0';
    ps_error_init(&err);
    assert_int_equal(ps_value_parse_text(maps, strlen(maps), &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "invalid YSON at line 1, column 193: nesting deeper than 64 "
                                 "levels of maps and lists");
    free(maps);
}

/* ps_value_parse_attributed: attributes before a value, in YTsaurus's JSON form; the plain
 * readers still refuse them (test_malformed). */
static void test_attributes(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } good[] = {
        {"<format=pretty>yson", "{\"$attributes\": {\"format\": \"pretty\"}, \"$value\": \"yson\"}"},
        {"{\"output_format\"=<\"format\"=\"binary\";\"lazy\"=%false;>\"yson\";path=\"//a\";}",
         "{\"output_format\": {\"$attributes\": {\"format\": \"binary\", \"lazy\": false},"
         " \"$value\": \"yson\"}, \"path\": \"//a\"}"},
        {"< > 5", "{\"$attributes\": {}, \"$value\": 5}"},
        {"[<a=<b=1>2>3]", "[{\"$attributes\": {\"a\": {\"$attributes\": {\"b\": 1}, \"$value\": 2}},"
         " \"$value\": 3}]"},
        {"{\"a\": 1}", "{\"a\": 1}"},   /* JSON still first */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        json_t *v = NULL;
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_value_parse_attributed(good[i].text, strlen(good[i].text), &v, &err);
        if (rc != 0)
            print_error("%s: %s\n", good[i].text, err.msg);
        assert_int_equal(rc, 0);
        expect_equal(v, good[i].want);
    }
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"<a=1><b=2>3", "invalid YSON at line 1, column 6: a value has one set of attributes"},
        {"<a=1>", "invalid YSON at line 1, column 6: unexpected end of input, expected a value"},
        {"<a=1;a=2>3", "invalid YSON at line 1, column 6: duplicate key \"a\""},
        {"<a=1}3", "invalid YSON at line 1, column 5: unexpected '}', expected ';' or '>'"},
        {"<1=2>3", "invalid YSON at line 1, column 2: unexpected '1', expected a key or '>'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *v = NULL;
        struct ps_error err;
        ps_error_init(&err);
        assert_int_equal(ps_value_parse_attributed(bad[i].text, strlen(bad[i].text), &v, &err),
                         PS_EINVAL);
        assert_null(v);
        if (strcmp(err.msg, bad[i].msg) != 0)
            print_error("%s: got %s\n", bad[i].text, err.msg);
        assert_string_equal(err.msg, bad[i].msg);
    }
}

static void test_json_errors(void **state)
{
    (void)state;
    struct ps_error err;
    json_t *v;
    /* YSON fails on ':' -> the JSON error is the helpful one. */
    ps_error_init(&err);
    assert_int_equal(ps_value_parse_text("{\"a\": 1,}", 9, &v, &err), PS_EINVAL);
    assert_null(v);
    assert_non_null(strstr(err.msg, "invalid JSON at line 1, column "));
    assert_non_null(strstr(err.msg, "expected"));
    ps_error_init(&err);
    const char *dup = "{\"a\": 1, \"a\": 2}";
    assert_int_equal(ps_value_parse_text(dup, strlen(dup), &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "invalid JSON at line 1"));
    assert_non_null(strstr(err.msg, "duplicate object key"));
    ps_error_init(&err);
    const char *typo = "{\"cpu\": tru}";
    assert_int_equal(ps_value_parse_text(typo, strlen(typo), &v, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "invalid JSON at line 1"));

    /* JSON got further than YSON's stop at ',' or ':' -> JSON's error. */
    ps_error_init(&err);
    assert_int_equal(ps_value_parse_text("[1, 2", 5, &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "invalid JSON at line 1, column 5: ']' expected near end of file");
    /* YSON got further, or as far -> YSON's error. */
    ps_error_init(&err);
    const char *mixed = "{\"cpu\"= 1, \"x\"=2}";
    assert_int_equal(ps_value_parse_text(mixed, strlen(mixed), &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "invalid YSON at line 1, column 10: unexpected ',', expected "
                                 "';' or '}' (YSON separates items with ';')");
    ps_error_init(&err);
    assert_int_equal(ps_value_parse_text("{a: 1}", 6, &v, &err), PS_EINVAL);
    assert_string_equal(err.msg, "invalid YSON at line 1, column 3: unexpected ':', expected '=' "
                                 "after key \"a\"");

    /* The first error wins. */
    ps_error_init(&err);
    ps_error_set(&err, PS_ENOENT, "earlier");
    assert_int_equal(ps_value_parse_text("{", 1, &v, &err), PS_EINVAL);
    assert_int_equal(err.code, PS_ENOENT);
    assert_string_equal(err.msg, "earlier");
}

static char *print(const json_t *v, unsigned flags)
{
    struct ps_error err;
    ps_error_init(&err);
    char *s = NULL;
    int rc = ps_yson_print(v, flags, &s, &err);
    if (rc != 0)
        print_error("ps_yson_print: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_non_null(s);
    return s;
}

static void expect_print(const char *json_text, unsigned flags, const char *want)
{
    json_t *v = json(json_text);
    char *s = print(v, flags);
    if (strcmp(s, want) != 0)
        print_error("print %s:\n  got  %s\n  want %s\n", json_text, s, want);
    assert_string_equal(s, want);
    free(s);
    json_decref(v);
}

static void test_print(void **state)
{
    (void)state;
    expect_print("{\"cpu\":1000,\"memory\":5}", PS_YSON_COMPACT, "{\"cpu\"=1000;\"memory\"=5;}");
    expect_print("{\"cpu\":1000,\"memory\":5}", PS_YSON_PRETTY,
                 "{\n    \"cpu\" = 1000;\n    \"memory\" = 5;\n}");
    expect_print("{\"a\":{\"b\":[1,{}],\"c\":[]},\"d\":{}}", PS_YSON_PRETTY,
                 "{\n"
                 "    \"a\" = {\n"
                 "        \"b\" = [\n"
                 "            1;\n"
                 "            {};\n"
                 "        ];\n"
                 "        \"c\" = [];\n"
                 "    };\n"
                 "    \"d\" = {};\n"
                 "}");
    expect_print("{\"b\":1,\"a\":2}", PS_YSON_COMPACT, "{\"b\"=1;\"a\"=2;}");
    expect_print("{\"b\":1,\"a\":2}", PS_YSON_COMPACT | PS_YSON_SORT_KEYS, "{\"a\"=2;\"b\"=1;}");
    expect_print("[1,\"x\",true,false,null,1.5]", PS_YSON_COMPACT,
                 "[1;\"x\";%true;%false;#;1.5;]");
    expect_print("{}", PS_YSON_PRETTY, "{}");
    expect_print("[]", PS_YSON_PRETTY, "[]");
    expect_print("1000.0", 0, "1000.");
    expect_print("-0.0", 0, "-0.");
    expect_print("0.1", 0, "0.1");
    expect_print("1e300", 0, "1e+300");
    expect_print("11.17", 0, "11.17");
    expect_print("-9223372036854775808", 0, "-9223372036854775808");
    expect_print("\"true\"", 0, "\"true\"");
    expect_print("\"burst\"", 0, "\"burst\"");
    expect_print("\"a\\\"b\\\\c\\n\\r\\t\"", 0, "\"a\\\"b\\\\c\\n\\r\\t\"");
    /* Control bytes: octal when short and unambiguous, \xHH otherwise, octal before a hex digit. */
    expect_print("\"\\u0001z\"", 0, "\"\\1z\"");
    expect_print("\"\\u00011\"", 0, "\"\\0011\"");
    expect_print("\"\\u001fz\"", 0, "\"\\x1Fz\"");
    expect_print("\"\\u001fA\"", 0, "\"\\037A\"");
    expect_print("\"\\u007f\"", 0, "\"\\x7F\"");
    /* Non-ASCII is written byte by byte, like upstream; output is plain ASCII. */
    expect_print("\"\\u00e9\"", 0, "\"\\xC3\\xA9\"");
    expect_print("{\"\\u043f\":1}", 0, "{\"\\xD0\\xBF\"=1;}");

    /* Deeper than the parse limit is refused, so that what is printed parses back. */
    json_t *v = json_integer(1);
    for (int i = 0; i < PS_YSON_MAX_DEPTH; i++) {
        json_t *list = json_array();
        json_array_append_new(list, v);
        v = list;
    }
    char *s = print(v, 0);
    free(s);
    json_t *list = json_array();
    json_array_append_new(list, v);
    struct ps_error err;
    ps_error_init(&err);
    s = (char *)0x1;
    assert_int_equal(ps_yson_print(list, PS_YSON_PRETTY, &s, &err), PS_EINVAL);
    assert_null(s);
    assert_string_equal(err.msg, "cannot print YSON: value nested deeper than 64 levels");
    json_decref(list);
    assert_int_equal(ps_yson_print(NULL, 0, &s, NULL), PS_EINVAL);
}

static void round_trip(const char *json_text)
{
    json_t *v = json(json_text);
    unsigned styles[] = {PS_YSON_COMPACT, PS_YSON_PRETTY, PS_YSON_SORT_KEYS};
    for (size_t i = 0; i < 3; i++) {
        char *s = print(v, styles[i]);
        struct ps_error err;
        ps_error_init(&err);
        json_t *back = NULL;
        int rc = ps_yson_parse(s, strlen(s), &back, &err);
        if (rc != 0)
            print_error("%s printed as %s: %s\n", json_text, s, err.msg);
        assert_int_equal(rc, 0);
        if (!json_equal(v, back))
            print_error("%s printed as %s reads back differently\n", json_text, s);
        assert_true(json_equal(v, back));
        json_decref(back);
        rc = ps_value_parse_text(s, strlen(s), &back, &err);
        assert_int_equal(rc, 0);
        assert_true(json_equal(v, back));
        json_decref(back);
        free(s);
    }
    json_decref(v);
}

static void test_round_trip(void **state)
{
    (void)state;
    round_trip("{\"guarantee_type\":\"burst\",\"resource_flow\":{\"cpu\":1000},"
               "\"burst_guarantee_resources\":{\"cpu\":2000}}");
    round_trip("[0.1, 1e300, -0.0, 1000.0, 5e-324, 1.7976931348623157e308, 11.17, 0.3]");
    round_trip("[-9223372036854775808, 9223372036854775807, 0, -1]");
    round_trip("[\"true\", \"false\", \"null\", \"\", \"#\", \"%true\", \"1\", \"a b\"]");
    round_trip("\"true\"");
    round_trip("\"null\"");
    round_trip("\"\\u0001\\u0002\\u001f\\u007f\\n\\\\\\\"x\\u00e9\\ud83d\\ude00\"");
    round_trip("{\"\":{\"\\u0001\":[[],{},[null,true,false]]}}");
    round_trip("1.0");
    round_trip("[1.5]");
    round_trip("null");
    round_trip("{\"pools\":{\"research\":{\"weight\":2.0,\"mode\":\"fifo\",\"max_operation_count\":"
               "10,\"forbid_immediate_operations\":false,\"nodes\":[\"n1\",\"n2\"]}}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_maps_and_lists),
        cmocka_unit_test(test_document_values),
        cmocka_unit_test(test_json_detection),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_attributes),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
