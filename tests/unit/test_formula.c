/* Tests of src/core/formula: every case of tests/data/vectors/boolean-formula.json (taken from
 * YTsaurus's boolean_formula_ut.cpp), then precedence against a reference evaluator, whitespace,
 * long and deep formulas, and the wording of error messages. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/formula.h"

static json_t *load_vectors(void)
{
    json_error_t jerr;
    json_t *root = json_load_file(PS_TEST_DATA_DIR "/vectors/boolean-formula.json", 0, &jerr);
    if (!root)
        fail_msg("cannot read %s: %s (line %d)", PS_TEST_DATA_DIR "/vectors/boolean-formula.json",
                 jerr.text, jerr.line);
    return root;
}

/* Parses text, failing the test with the parser's message when it does not parse. */
static struct ps_formula *must_parse(const char *text)
{
    struct ps_formula *f = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_formula_parse(text, &f, &err);
    if (rc != 0)
        fail_msg("formula \"%s\" did not parse: %s", text, err.msg);
    assert_non_null(f);
    return f;
}

static bool eval_with(const char *text, const char *const *tags, int count)
{
    struct ps_formula *f = must_parse(text);
    bool v = ps_formula_eval(f, tags, count);
    ps_formula_free(f);
    return v;
}

/* ---- the upstream vectors --------------------------------------------------------------- */

static void test_vectors_evaluate(void **state)
{
    (void)state;
    json_t *root = load_vectors();
    json_t *cases = json_object_get(root, "evaluate");
    assert_true(json_is_array(cases));
    assert_true(json_array_size(cases) >= 20);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *text = json_string_value(json_array_get(c, 0));
        json_t *jtags = json_array_get(c, 1);
        bool want = json_is_true(json_array_get(c, 2));
        assert_non_null(text);
        const char *tags[16];
        int n = (int)json_array_size(jtags);
        assert_true(n <= 16);
        for (int t = 0; t < n; t++)
            tags[t] = json_string_value(json_array_get(jtags, (size_t)t));
        bool got = eval_with(text, tags, n);
        if (got != want)
            fail_msg("evaluate case %zu: \"%s\" gave %d, expected %d", i, text, got, want);
    }
    json_decref(root);
}

static void test_vectors_parse_errors(void **state)
{
    (void)state;
    json_t *root = load_vectors();
    json_t *cases = json_object_get(root, "parse_errors");
    assert_true(json_is_array(cases));
    assert_true(json_array_size(cases) >= 30);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *text = json_string_value(c);
        struct ps_formula *f = (struct ps_formula *)1;
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_formula_parse(text, &f, &err);
        if (rc != PS_EINVAL)
            fail_msg("parse_errors case %zu: \"%s\" returned %d, expected PS_EINVAL", i, text, rc);
        assert_null(f);
        assert_int_equal(err.code, PS_EINVAL);
        /* The message names the formula and a position. */
        assert_non_null(strstr(err.msg, "invalid formula \""));
        assert_non_null(strstr(err.msg, " at position "));
    }
    json_decref(root);
}

static void test_vectors_variables(void **state)
{
    (void)state;
    json_t *root = load_vectors();
    size_t i;
    json_t *c;
    json_t *valid = json_object_get(root, "valid_variables");
    json_t *invalid = json_object_get(root, "invalid_variables");
    assert_true(json_array_size(valid) >= 5);
    assert_true(json_array_size(invalid) >= 5);
    json_array_foreach(valid, i, c) {
        const char *name = json_string_value(c);
        if (!ps_formula_valid_variable(name))
            fail_msg("\"%s\" should be a valid variable", name);
        /* A valid variable is also a formula that is true exactly on nodes with that tag. */
        assert_true(eval_with(name, &name, 1));
        assert_false(eval_with(name, NULL, 0));
    }
    json_array_foreach(invalid, i, c) {
        const char *name = json_string_value(c);
        if (ps_formula_valid_variable(name))
            fail_msg("\"%s\" should be an invalid variable", name);
    }
    json_decref(root);
}

/* ---- precedence against a reference evaluator ------------------------------------------- */

/* A random expression tree over tags a..d, printed with the fewest parentheses precedence
 * needs (plus some redundant ones and random whitespace), evaluated recursively. */
enum { N_TAG, N_TRUE, N_FALSE, N_NOT, N_AND, N_OR };

struct node {
    int kind, tag;
    struct node *l, *r;
};

static unsigned rng_state = 12345;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 16) % n;
}

static struct node *gen(int depth)
{
    struct node *n = calloc(1, sizeof *n);
    unsigned k = depth <= 0 ? rnd(3) : rnd(6);
    if (depth > 0 && k < 3)
        k = 3 + rnd(3);
    n->kind = (int)(k == 0 ? N_TAG : k == 1 ? (rnd(4) ? N_TAG : N_TRUE) : k == 2 ? N_FALSE : k);
    if (n->kind == N_TAG)
        n->tag = (int)rnd(4);
    if (n->kind == N_NOT)
        n->l = gen(depth - 1);
    if (n->kind == N_AND || n->kind == N_OR) {
        n->l = gen(depth - 1);
        n->r = gen(depth - 1);
    }
    return n;
}

static int prec(const struct node *n)
{
    return n->kind == N_OR ? 1 : n->kind == N_AND ? 2 : n->kind == N_NOT ? 3 : 4;
}

static void put(char *buf, size_t *len, const char *s)
{
    size_t n = strlen(s);
    memcpy(buf + *len, s, n);
    *len += n;
    buf[*len] = '\0';
}

static void space(char *buf, size_t *len)
{
    static const char *const ws[] = {"", "", " ", "\t", "  ", "\n"};
    put(buf, len, ws[rnd(6)]);
}

static void print_node(const struct node *n, int min_prec, char *buf, size_t *len)
{
    bool parens = prec(n) < min_prec || rnd(8) == 0;
    if (parens) {
        put(buf, len, "(");
        space(buf, len);
    }
    switch (n->kind) {
    case N_TAG: put(buf, len, (const char *[]){"a", "b", "c", "d"}[n->tag]); break;
    case N_TRUE: put(buf, len, "%true"); break;
    case N_FALSE: put(buf, len, "%false"); break;
    case N_NOT:
        put(buf, len, "!");
        space(buf, len);
        print_node(n->l, 3, buf, len);
        break;
    default:
        /* Left operand at the same precedence (left-associative), right one strictly above:
         * & and | are associative anyway, so either grouping gives the same value. */
        print_node(n->l, prec(n), buf, len);
        space(buf, len);
        put(buf, len, n->kind == N_AND ? "&" : "|");
        space(buf, len);
        print_node(n->r, prec(n) + 1, buf, len);
        break;
    }
    if (parens) {
        space(buf, len);
        put(buf, len, ")");
    }
}

static bool ref_eval(const struct node *n, unsigned mask)
{
    switch (n->kind) {
    case N_TAG: return (mask >> n->tag) & 1;
    case N_TRUE: return true;
    case N_FALSE: return false;
    case N_NOT: return !ref_eval(n->l, mask);
    case N_AND: return ref_eval(n->l, mask) && ref_eval(n->r, mask);
    default: return ref_eval(n->l, mask) || ref_eval(n->r, mask);
    }
}

static void free_node(struct node *n)
{
    if (!n)
        return;
    free_node(n->l);
    free_node(n->r);
    free(n);
}

static void test_precedence_random(void **state)
{
    (void)state;
    static const char *const names[] = {"a", "b", "c", "d"};
    static char buf[1 << 16];
    for (int iter = 0; iter < 2000; iter++) {
        struct node *tree = gen((int)rnd(6));
        size_t len = 0;
        buf[0] = '\0';
        space(buf, &len);
        print_node(tree, 0, buf, &len);
        space(buf, &len);
        struct ps_formula *f = must_parse(buf);
        for (unsigned mask = 0; mask < 16; mask++) {
            const char *tags[4];
            int n = 0;
            for (int t = 0; t < 4; t++)
                if ((mask >> t) & 1)
                    tags[n++] = names[t];
            bool want = ref_eval(tree, mask);
            if (ps_formula_eval(f, tags, n) != want)
                fail_msg("\"%s\" with tag mask %u: expected %d", buf, mask, want);
        }
        ps_formula_free(f);
        free_node(tree);
    }
}

static void test_precedence_fixed(void **state)
{
    (void)state;
    const char *a[] = {"a"}, *b[] = {"b"}, *c[] = {"c"}, *bc[] = {"b", "c"};
    /* & binds tighter than |. */
    assert_true(eval_with("a | b & c", a, 1));
    assert_false(eval_with("a | b & c", b, 1));
    assert_true(eval_with("a | b & c", bc, 2));
    assert_false(eval_with("(a | b) & c", a, 1));
    /* ! binds tighter than &. */
    assert_true(eval_with("!a & b", b, 1));
    assert_false(eval_with("!(a | b) & c", b, 1));
    assert_true(eval_with("!(a | b) & c", c, 1));
    assert_true(eval_with("!!a", a, 1));
    assert_false(eval_with("!!!a", a, 1));
    assert_true(eval_with("%false | !%false", NULL, 0));
    assert_false(eval_with("%true & %false", NULL, 0));
}

/* ---- whitespace, empty, accessors ------------------------------------------------------- */

static void test_whitespace_and_empty(void **state)
{
    (void)state;
    const char *ab[] = {"a", "b"};
    assert_true(eval_with(" \t a\n&\r\v b \f", ab, 2));
    assert_true(eval_with("(a)&(b)", ab, 2));
    assert_true(eval_with("( ( a ) )", ab, 1));

    struct ps_formula *f = must_parse(" \t\n ");
    assert_true(ps_formula_is_empty(f));
    assert_int_equal(ps_formula_size(f), 0);
    assert_true(ps_formula_eval(f, NULL, 0));
    assert_string_equal(ps_formula_text(f), " \t\n ");
    ps_formula_free(f);

    f = must_parse("a | a | !a");
    assert_false(ps_formula_is_empty(f));
    assert_int_equal(ps_formula_size(f), 6);    /* a a | a ! | */
    assert_string_equal(ps_formula_text(f), "a | a | !a");
    ps_formula_free(f);

    /* NULL formula and NULL tags entries. */
    assert_true(ps_formula_eval(NULL, NULL, 0));
    assert_true(ps_formula_is_empty(NULL));
    ps_formula_free(NULL);
    const char *with_null[] = {NULL, "a"};
    assert_true(eval_with("a", with_null, 2));
    /* A tag is matched whole, not as a prefix or a suffix. */
    const char *longer[] = {"ab", "xa"};
    assert_false(eval_with("a", longer, 2));
    const char *shorter[] = {"a"};
    assert_false(eval_with("ab", shorter, 1));
}

/* ---- long and deep ---------------------------------------------------------------------- */

static void test_long_formula(void **state)
{
    (void)state;
    enum { N = 10000 };
    size_t cap = (size_t)N * 16;
    char *text = malloc(cap);
    size_t len = 0;
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len, "%stag%d", i ? " | " : "", i);
    struct ps_formula *f = must_parse(text);
    assert_int_equal(ps_formula_size(f), 2 * N - 1);
    const char *first[] = {"tag0"}, *last[] = {"tag9999"}, *mid[] = {"x", "tag5000"},
               *none[] = {"tag10000", "tag"};
    assert_true(ps_formula_eval(f, first, 1));
    assert_true(ps_formula_eval(f, last, 1));
    assert_true(ps_formula_eval(f, mid, 2));
    assert_false(ps_formula_eval(f, none, 2));
    ps_formula_free(f);

    /* A long chain of & with the tags beyond the first 64 (not cached per evaluation). */
    len = 0;
    for (int i = 0; i < 100; i++)
        len += (size_t)snprintf(text + len, cap - len, "%st%d", i ? "&" : "", i);
    f = must_parse(text);
    const char *tags[100];
    char names[100][8];
    for (int i = 0; i < 100; i++) {
        snprintf(names[i], sizeof names[i], "t%d", i);
        tags[i] = names[i];
    }
    assert_true(ps_formula_eval(f, tags, 100));
    assert_false(ps_formula_eval(f, tags, 99));   /* t99 missing */
    tags[70] = "x";
    assert_false(ps_formula_eval(f, tags, 100));
    ps_formula_free(f);
    free(text);
}

static char *nested(int depth, const char *inner)
{
    size_t n = strlen(inner);
    char *text = malloc(2 * (size_t)depth + n + 1);
    memset(text, '(', (size_t)depth);
    memcpy(text + depth, inner, n);
    memset(text + depth + n, ')', (size_t)depth);
    text[2 * (size_t)depth + n] = '\0';
    return text;
}

static void test_deep_nesting(void **state)
{
    (void)state;
    const char *a[] = {"a"};
    /* The maximum depth parses and evaluates. */
    char *text = nested(PS_FORMULA_MAX_DEPTH, "a");
    assert_true(eval_with(text, a, 1));
    free(text);

    /* The worst case for the evaluation stack: a pending | and & operand at every level. */
    size_t cap = (size_t)PS_FORMULA_MAX_DEPTH * 8 + 16;
    text = malloc(cap);
    size_t len = 0;
    for (int i = 0; i < PS_FORMULA_MAX_DEPTH; i++)
        len += (size_t)snprintf(text + len, cap - len, "b|a&(");
    len += (size_t)snprintf(text + len, cap - len, "b|a&a");
    for (int i = 0; i < PS_FORMULA_MAX_DEPTH; i++)
        text[len++] = ')';
    text[len] = '\0';
    assert_true(eval_with(text, a, 1));
    assert_false(eval_with(text, NULL, 0));
    free(text);

    /* One level more is a clear error, at the position of the offending '('. */
    text = nested(PS_FORMULA_MAX_DEPTH + 1, "a");
    struct ps_formula *f = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_formula_parse(text, &f, &err), PS_EINVAL);
    assert_null(f);
    assert_non_null(strstr(err.msg, "parentheses nested deeper than 64 at position 64"));
    free(text);

    /* Very deep input fails the same way, without recursion. */
    text = nested(200000, "a");
    ps_error_init(&err);
    assert_int_equal(ps_formula_parse(text, &f, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "nested deeper than"));
    free(text);

    /* A long run of '!' has no nesting limit: it does not grow the evaluation stack. */
    enum { NOTS = 100001 };
    text = malloc(NOTS + 2);
    memset(text, '!', NOTS);
    strcpy(text + NOTS, "a");
    assert_false(eval_with(text, a, 1));   /* an odd number of negations */
    assert_true(eval_with(text, NULL, 0));
    free(text);
}

/* ---- error messages --------------------------------------------------------------------- */

static void expect_error(const char *text, const char *message)
{
    struct ps_formula *f = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_formula_parse(text, &f, &err);
    if (rc != PS_EINVAL)
        fail_msg("\"%s\" should not parse (rc %d)", text, rc);
    assert_null(f);
    if (strcmp(err.msg, message) != 0)
        fail_msg("\"%s\":\n got      %s\n expected %s", text, err.msg, message);
}

static void test_error_messages(void **state)
{
    (void)state;
    expect_error("a&(", "invalid formula \"a&(\": unexpected end at position 3, expected a tag, "
                        "'!', '(' or a literal");
    expect_error("a|)", "invalid formula \"a|)\": unexpected ')' at position 2, expected a tag, "
                        "'!', '(' or a literal");
    expect_error("a)", "invalid formula \"a)\": unmatched ')' at position 1");
    expect_error("x & (a | b", "invalid formula \"x & (a | b\": unmatched '(' at position 4");
    expect_error("a b", "invalid formula \"a b\": unexpected tag at position 2, expected '&', "
                        "'|', ')' or the end");
    expect_error("a & /b", "invalid formula \"a & /b\": unexpected '/' (a tag must start with a "
                           "letter or '_') at position 4, expected a tag, '!', '(' or a literal");
    expect_error("1", "invalid formula \"1\": unexpected '1' (a tag must start with a letter or "
                      "'_') at position 0, expected a tag, '!', '(' or a literal");
    expect_error("a+b", "invalid formula \"a+b\": unexpected character '+' at position 1, "
                        "expected '&', '|', ')' or the end");
    expect_error("%something", "invalid formula \"%something\": unknown literal at position 0, "
                               "expected %true or %false");
    expect_error("a & in", "invalid formula \"a & in\": \"in\" is a keyword, not a tag at "
                           "position 4, expected a tag, '!', '(' or a literal");
    expect_error("a!", "invalid formula \"a!\": unexpected '!' at position 1, expected '&', '|', "
                       "')' or the end");
    expect_error("a%b", "invalid formula \"a%b\": unexpected character '%' at position 1, "
                        "expected '&', '|', ')' or the end");
    /* Control and non-ASCII bytes are escaped, so the message stays one printable line. */
    expect_error("a\x01", "invalid formula \"a\\x01\": unexpected character '\\x01' at "
                          "position 1, expected '&', '|', ')' or the end");
    expect_error("\"\xc3\xa9", "invalid formula \"\\\"\\xc3\\xa9\": unexpected character '\\\"' "
                               "at position 0, expected a tag, '!', '(' or a literal");

    /* A long formula is shown as a window around the position. */
    char text[400];
    memset(text, 'a', 300);
    strcpy(text + 300, " & ");
    struct ps_formula *f = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_formula_parse(text, &f, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "unexpected end at position 303"));
    assert_true(strlen(err.msg) < 220);
    assert_non_null(strstr(err.msg, "...\"aaaa"));
}

/* A scheduling_tag_filter is a formula of at most 100 tokens; the error names the key. */
static void test_parse_filter_limit(void **state)
{
    (void)state;
    char text[1024] = "t0";
    for (int i = 1; i < 50; i++) /* 50 tags and 49 operators: 99 tokens */
        snprintf(text + strlen(text), sizeof text - strlen(text), "|t%d", i);
    struct ps_formula *f = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_formula_parse_filter("scheduling_tag_filter", text, &f, &err), 0);
    assert_non_null(f);
    const char *tags[] = {"t49"};
    assert_true(ps_formula_eval(f, tags, 1));
    ps_formula_free(f);
    strcat(text, "|t50"); /* 101 tokens */
    assert_int_equal(ps_formula_parse_filter("scheduling_tag_filter", text, &f, &err), PS_EINVAL);
    assert_null(f);
    assert_non_null(strstr(err.msg, "scheduling_tag_filter: more than 100 tokens"));
    ps_error_init(&err);
    assert_int_equal(ps_formula_parse_filter("pools[2].scheduling_tag_filter", "a&", NULL, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "pools[2].scheduling_tag_filter: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors_evaluate),
        cmocka_unit_test(test_vectors_parse_errors),
        cmocka_unit_test(test_vectors_variables),
        cmocka_unit_test(test_precedence_fixed),
        cmocka_unit_test(test_precedence_random),
        cmocka_unit_test(test_whitespace_and_empty),
        cmocka_unit_test(test_long_formula),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_error_messages),
        cmocka_unit_test(test_parse_filter_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
