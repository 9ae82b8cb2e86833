/* libFuzzer target: the boolean tag formula parser and evaluator (src/core/formula).
 *
 * The input up to its first NUL byte is a formula. A parse must either succeed or fail with
 * PS_EINVAL and a one-line message naming the formula and a position. A parsed formula is
 * evaluated on tags taken from the input itself, and checked against identities that must hold
 * for any formula f: (f)&%true == f, !(f) == !f, f|%false == f. */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formula.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TAGS 16

/* Splits a copy of text at characters that cannot be in a tag; the pieces are node tags. */
static int make_tags(const char *text, char *buf, size_t size, const char **tags)
{
    int n = 0;
    memcpy(buf, text, size);
    char *p = buf;
    while (*p && n < MAX_TAGS) {
        while (*p && strchr(" \t\n&|!()%", *p))
            *p++ = '\0';
        if (!*p)
            break;
        tags[n++] = p;
        while (*p && !strchr(" \t\n&|!()%", *p))
            p++;
    }
    return n;
}

static char *wrap(const char *prefix, const char *text, const char *suffix)
{
    size_t n = strlen(prefix) + strlen(text) + strlen(suffix) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", prefix, text, suffix);
    return s;
}

/* Evaluates prefix + text + suffix on the tags, or returns -1 when it does not parse (wrapping
 * in parentheses may exceed the nesting limit). */
static int eval_wrapped(const char *prefix, const char *text, const char *suffix,
                        const char **tags, int n)
{
    char *s = wrap(prefix, text, suffix);
    if (!s)
        return -1;
    struct ps_formula *f = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_formula_parse(s, &f, &err);
    free(s);
    if (rc)
        return -1;
    int v = ps_formula_eval(f, tags, n);
    ps_formula_free(f);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    struct ps_formula *f = NULL;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_formula_parse(text, &f, &err);
    if (rc) {
        assert(rc == PS_EINVAL || rc == PS_ENOMEM);
        assert(f == NULL);
        assert(err.code == rc);
        if (rc == PS_EINVAL) {
            assert(strncmp(err.msg, "invalid formula ", 16) == 0);
            assert(strstr(err.msg, " at position ") != NULL);
        }
        for (const char *p = err.msg; *p; p++)
            assert((unsigned char)*p >= 0x20);
        free(text);
        return 0;
    }
    assert(strcmp(ps_formula_text(f), text) == 0);
    assert(ps_formula_size(f) >= 0);
    assert(ps_formula_is_empty(f) == (ps_formula_size(f) == 0));

    size_t len = strlen(text) + 1;
    char *buf = malloc(len);
    const char *tags[MAX_TAGS];
    int n = buf ? make_tags(text, buf, len, tags) : 0;
    /* Every subset of the first few tags, so both outcomes of most tags are seen. */
    int subsets = n < 4 ? 1 << n : 16;
    for (int mask = 0; mask < subsets; mask++) {
        const char *chosen[MAX_TAGS];
        int k = 0;
        for (int i = 0; i < n; i++)
            if (i >= 4 || ((mask >> i) & 1))
                chosen[k++] = tags[i];
        bool v = ps_formula_eval(f, chosen, k);
        if (ps_formula_is_empty(f)) {
            assert(v);
            continue;
        }
        int same = eval_wrapped("(", text, ")&%true", chosen, k);
        assert(same < 0 || same == v);
        int negated = eval_wrapped("!(", text, ")", chosen, k);
        assert(negated < 0 || negated == !v);
        int orfalse = eval_wrapped("", text, "|%false", chosen, k);
        assert(orfalse < 0 || orfalse == v);
    }
    free(buf);
    ps_formula_free(f);
    free(text);
    return 0;
}
