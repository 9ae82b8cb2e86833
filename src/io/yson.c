/* yson.c — the YSON text parser and the JSON-or-YSON value reader (see yson.h). */
#include "io/yson.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/hex.h"
#include "io/textbuf.h"
#include "io/utf8.h"

struct parser {
    const char *text;
    size_t len;
    size_t pos;
    int depth;
    size_t fail_pos;          /* where the first error was found */
    bool attributes;          /* <...> before a value is read (else refused) */
    struct ps_error *err;
};

/* ---- errors ------------------------------------------------------------------------------ */

static void line_column(const char *text, size_t pos, int *line, int *column)
{
    int l = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n') {
            l++;
            line_start = i + 1;
        }
    }
    *line = l;
    *column = (int)(pos - line_start + 1);
}

/* Reports an error found at byte offset `at`; the first error wins. */
static int fail_at(struct parser *p, size_t at, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail_at(struct parser *p, size_t at, int code, const char *fmt, ...)
{
    if (p->err && p->err->code != 0)
        return p->err->code;
    char why[PS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    p->fail_pos = at;
    if (code == PS_ENOMEM)
        return ps_error_set(p->err, code, "out of memory while parsing YSON");
    int line, column;
    line_column(p->text, at, &line, &column);
    return ps_error_set(p->err, code, "invalid YSON at line %d, column %d: %s", line, column, why);
}

/* Describes the byte at pos for a message: 'x', byte 0x01, or end of input. */
static const char *describe(const struct parser *p, size_t pos, char buf[16])
{
    if (pos >= p->len)
        return "end of input";
    unsigned char c = (unsigned char)p->text[pos];
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, 16, "'%c'", c);
    else
        snprintf(buf, 16, "byte 0x%02X", c);
    return buf;
}

static int unexpected(struct parser *p, const char *expected)
{
    char buf[16];
    const char *what = describe(p, p->pos, buf);
    const char *hint = "";
    if (p->pos < p->len && p->text[p->pos] == ',')
        hint = " (YSON separates items with ';')";
    return fail_at(p, p->pos, PS_EINVAL, "unexpected %s, expected %s%s", what, expected, hint);
}

/* Copies at most 40 bytes of a token for a message, marking a cut. */
static void token_excerpt(const char *s, size_t n, char out[48])
{
    size_t k = n > 40 ? 40 : n;
    size_t j = 0;
    for (size_t i = 0; i < k; i++)
        out[j++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
    if (n > k) {
        memcpy(out + j, "...", 3);
        j += 3;
    }
    out[j] = '\0';
}

/* ---- lexing helpers -------------------------------------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static bool is_unquoted_start(char c) { return is_alpha(c) || c == '_'; }

static bool is_unquoted_char(char c)
{
    return is_alpha(c) || is_digit(c) || c == '_' || c == '-' || c == '.' || c == '%';
}

static void skip_space(struct parser *p)
{
    while (p->pos < p->len && is_space(p->text[p->pos]))
        p->pos++;
}

static bool at_end(const struct parser *p) { return p->pos >= p->len; }

static char peek(const struct parser *p) { return p->pos < p->len ? p->text[p->pos] : '\0'; }

/* ---- strings --------------------------------------------------------------------------- */

/* Reads exactly `digits` hex digits after \u or \U at p->pos and appends the code point as
 * UTF-8. `esc` is the offset of the backslash, for messages. */
static int read_unicode_escape(struct parser *p, size_t esc, int digits, struct ps_textbuf *b)
{
    uint32_t cp = 0;
    for (int i = 0; i < digits; i++) {
        int h = p->pos < p->len ? ps_hex_digit_value(p->text[p->pos]) : -1;
        if (h < 0)
            return fail_at(p, esc, PS_EINVAL, "escape \\%c needs %d hex digits",
                           digits == 4 ? 'u' : 'U', digits);
        cp = cp * 16 + (uint32_t)h;
        p->pos++;
    }
    char utf8[4];
    size_t n = ps_utf8_encode(cp, utf8);
    if (n == 0)
        return fail_at(p, esc, PS_EINVAL,
                       "escape \\%c%0*X is not a Unicode scalar value (surrogate or above U+10FFFF)",
                       digits == 4 ? 'u' : 'U', digits, (unsigned)cp);
    ps_textbuf_add(b, utf8, n);
    return 0;
}

/* Reads the escape whose backslash is at p->pos - 1. */
static int read_escape(struct parser *p, struct ps_textbuf *b)
{
    size_t esc = p->pos - 1;
    if (at_end(p))
        return fail_at(p, esc, PS_EINVAL, "unterminated string");
    char c = p->text[p->pos++];
    switch (c) {
    case 'a': ps_textbuf_addc(b, '\a'); return 0;
    case 'b': ps_textbuf_addc(b, '\b'); return 0;
    case 'f': ps_textbuf_addc(b, '\f'); return 0;
    case 'n': ps_textbuf_addc(b, '\n'); return 0;
    case 'r': ps_textbuf_addc(b, '\r'); return 0;
    case 't': ps_textbuf_addc(b, '\t'); return 0;
    case 'v': ps_textbuf_addc(b, '\v'); return 0;
    case '\\': case '"': case '\'': case '?': ps_textbuf_addc(b, c); return 0;
    case 'u': return read_unicode_escape(p, esc, 4, b);
    case 'U': return read_unicode_escape(p, esc, 8, b);
    case 'x': {
        int value = 0, n = 0;
        while (n < 2 && p->pos < p->len && ps_hex_digit_value(p->text[p->pos]) >= 0) {
            value = value * 16 + ps_hex_digit_value(p->text[p->pos++]);
            n++;
        }
        if (n == 0)
            return fail_at(p, esc, PS_EINVAL, "escape \\x needs one or two hex digits");
        ps_textbuf_addc(b, (char)value);
        return 0;
    }
    default:
        break;
    }
    if (c >= '0' && c <= '7') {
        int value = c - '0', n = 1;
        while (n < 3 && p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '7') {
            value = value * 8 + (p->text[p->pos++] - '0');
            n++;
        }
        if (value > 0xff)
            return fail_at(p, esc, PS_EINVAL, "octal escape \\%o is above \\377", (unsigned)value);
        ps_textbuf_addc(b, (char)value);
        return 0;
    }
    char buf[16];
    p->pos--;
    const char *what = describe(p, p->pos, buf);
    p->pos++;
    return fail_at(p, esc, PS_EINVAL, "unknown escape sequence: backslash followed by %s", what);
}

/* Reads a quoted or unquoted string at p->pos into *out (malloc'd, NUL-terminated), *out_len
 * its length. The caller has checked that a string starts here. */
static int read_string(struct parser *p, char **out, size_t *out_len)
{
    size_t start = p->pos;
    *out = NULL;
    if (p->text[p->pos] != '"') {
        while (p->pos < p->len && is_unquoted_char(p->text[p->pos]))
            p->pos++;
        size_t n = p->pos - start;
        char *s = malloc(n + 1);
        if (!s)
            return fail_at(p, start, PS_ENOMEM, "out of memory");
        memcpy(s, p->text + start, n);
        s[n] = '\0';
        *out = s;
        *out_len = n;
        return 0;
    }

    struct ps_textbuf b;
    ps_textbuf_init(&b);
    p->pos++;
    for (;;) {
        if (at_end(p)) {
            ps_textbuf_release(&b);
            return fail_at(p, start, PS_EINVAL, "unterminated string");
        }
        /* Copy a run of plain bytes at once. */
        size_t run = p->pos;
        while (run < p->len && p->text[run] != '"' && p->text[run] != '\\')
            run++;
        ps_textbuf_add(&b, p->text + p->pos, run - p->pos);
        p->pos = run;
        if (at_end(p))
            continue;
        char c = p->text[p->pos++];
        if (c == '"')
            break;
        int rc = read_escape(p, &b);
        if (rc != 0) {
            ps_textbuf_release(&b);
            return rc;
        }
    }
    size_t n = b.len;
    char *s = ps_textbuf_detach(&b);
    if (!s)
        return fail_at(p, start, PS_ENOMEM, "out of memory");
    if (memchr(s, '\0', n)) {
        free(s);
        return fail_at(p, start, PS_EINVAL, "string contains a NUL byte");
    }
    size_t bad;
    if (!ps_utf8_valid(s, n, &bad)) {
        free(s);
        return fail_at(p, start, PS_EINVAL,
                       "string is not valid UTF-8 (at byte %zu of its value)", bad + 1);
    }
    *out = s;
    *out_len = n;
    return 0;
}

/* ---- numbers and %-literals ------------------------------------------------------------ */

#define NON_FINITE_MSG \
    "non-finite numbers (%nan, %inf, %-inf) are not supported: values must be finite"

/* Accumulates decimal digits s[0..n) into *v; false on overflow of `limit`. */
static bool decimal_value(const char *s, size_t n, uint64_t limit, uint64_t *v)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (acc > (limit - d) / 10)
            return false;
        acc = acc * 10 + d;
    }
    *v = acc;
    return n > 0;
}

/* True when s[0..n) is digits [ '.' digits* ] [ (e|E) [+-] digits ] with '.' or an exponent. */
static bool double_syntax(const char *s, size_t n)
{
    size_t i = 0;
    size_t int_digits = 0;
    while (i < n && is_digit(s[i])) {
        i++;
        int_digits++;
    }
    if (int_digits == 0)
        return false;
    bool fraction = false, exponent = false;
    if (i < n && s[i] == '.') {
        fraction = true;
        i++;
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        exponent = true;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t exp_digits = 0;
        while (i < n && is_digit(s[i])) {
            i++;
            exp_digits++;
        }
        if (exp_digits == 0)
            return false;
    }
    return i == n && (fraction || exponent);
}

static int parse_number(struct parser *p, json_t **out)
{
    size_t start = p->pos;
    bool negative = false;
    if (p->text[p->pos] == '+' || p->text[p->pos] == '-') {
        negative = p->text[p->pos] == '-';
        p->pos++;
        if (peek(p) == '%')
            return fail_at(p, start, PS_EINVAL, "%s", NON_FINITE_MSG);
        if (!is_digit(peek(p))) {
            p->pos = start;
            return unexpected(p, "a value");
        }
    }
    size_t body = p->pos;
    while (p->pos < p->len) {
        char c = p->text[p->pos];
        if (is_digit(c) || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E' || c == 'u')
            p->pos++;
        else
            break;
    }
    if (p->pos < p->len && (is_alpha(p->text[p->pos]) || p->text[p->pos] == '_')) {
        char buf[16];
        return fail_at(p, p->pos, PS_EINVAL, "unexpected %s in a number", describe(p, p->pos, buf));
    }
    const char *s = p->text + body;
    size_t n = p->pos - body;
    char shown[48];
    token_excerpt(p->text + start, p->pos - start, shown);

    if (n > 0 && s[n - 1] == 'u') {
        uint64_t v;
        if (negative)
            return fail_at(p, start, PS_EINVAL, "unsigned integer %s cannot be negative", shown);
        if (!decimal_value(s, n - 1, UINT64_MAX, &v))
            return fail_at(p, start, PS_EINVAL, "invalid unsigned integer %s", shown);
        if (v > (uint64_t)INT64_MAX)
            return fail_at(p, start, PS_EINVAL,
                           "unsigned integer %s does not fit in a signed 64-bit integer", shown);
        *out = json_integer((json_int_t)v);
    } else if (memchr(s, '.', n) || memchr(s, 'e', n) || memchr(s, 'E', n)) {
        if (!double_syntax(s, n))
            return fail_at(p, start, PS_EINVAL, "invalid number %s", shown);
        /* strtod needs a NUL-terminated copy; the syntax check bounds what it may read. */
        char *copy = malloc(p->pos - start + 1);
        if (!copy)
            return fail_at(p, start, PS_ENOMEM, "out of memory");
        memcpy(copy, p->text + start, p->pos - start);
        copy[p->pos - start] = '\0';
        char *end;
        errno = 0;
        double d = strtod(copy, &end);
        bool whole = *end == '\0';
        bool overflow = errno == ERANGE && (d > 1.0 || d < -1.0);
        free(copy);
        if (!whole)
            return fail_at(p, start, PS_EINVAL, "invalid number %s", shown);
        if (overflow)
            return fail_at(p, start, PS_EINVAL, "number %s is out of range for a double", shown);
        *out = json_real(d);
    } else {
        uint64_t v;
        uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        if (!decimal_value(s, n, UINT64_MAX, &v))
            return fail_at(p, start, PS_EINVAL, "invalid number %s", shown);
        if (v > limit)
            return fail_at(p, start, PS_EINVAL,
                           "integer %s is out of range for a signed 64-bit integer", shown);
        json_int_t iv;
        if (!negative)
            iv = (json_int_t)v;
        else if (v == (uint64_t)INT64_MAX + 1)
            iv = INT64_MIN;
        else
            iv = -(json_int_t)v;
        *out = json_integer(iv);
    }
    if (!*out)
        return fail_at(p, start, PS_ENOMEM, "out of memory");
    return 0;
}

static bool word_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static int parse_percent(struct parser *p, json_t **out)
{
    size_t start = p->pos++;
    while (p->pos < p->len) {
        char c = p->text[p->pos];
        if (is_alpha(c) || is_digit(c) || c == '_' || c == '+' || c == '-' || c == '.')
            p->pos++;
        else
            break;
    }
    const char *s = p->text + start + 1;
    size_t n = p->pos - start - 1;
    if (word_is(s, n, "true"))
        *out = json_true();
    else if (word_is(s, n, "false"))
        *out = json_false();
    else if (word_is(s, n, "nan") || word_is(s, n, "inf") || word_is(s, n, "+inf") ||
             word_is(s, n, "-inf"))
        return fail_at(p, start, PS_EINVAL, "%s", NON_FINITE_MSG);
    else {
        char shown[48];
        token_excerpt(p->text + start, p->pos - start, shown);
        return fail_at(p, start, PS_EINVAL, "unknown literal '%s', expected %%true or %%false",
                       shown);
    }
    return 0;
}

/* ---- structure --------------------------------------------------------------------------- */

static int parse_value(struct parser *p, json_t **out);

static int enter(struct parser *p)
{
    if (p->depth >= PS_YSON_MAX_DEPTH)
        return fail_at(p, p->pos, PS_EINVAL, "nesting deeper than %d levels of maps and lists",
                       PS_YSON_MAX_DEPTH);
    p->depth++;
    p->pos++;
    return 0;
}

/* A map `{k=v;...}`, or with close '>' the attributes `<k=v;...>` before a value. */
static int parse_pairs(struct parser *p, char close, json_t **out)
{
    int rc = enter(p);
    if (rc != 0)
        return rc;
    json_t *map = json_object();
    if (!map)
        return fail_at(p, p->pos, PS_ENOMEM, "out of memory");
    for (;;) {
        skip_space(p);
        if (peek(p) == close)
            break;
        if (!(peek(p) == '"' || is_unquoted_start(peek(p)))) {
            rc = unexpected(p, close == '}' ? "a key or '}'" : "a key or '>'");
            goto fail;
        }
        size_t key_pos = p->pos;
        char *key;
        size_t key_len;
        rc = read_string(p, &key, &key_len);
        if (rc != 0)
            goto fail;
        skip_space(p);
        if (peek(p) != '=') {
            char shown[48];
            token_excerpt(key, key_len, shown);
            char buf[16];
            rc = fail_at(p, p->pos, PS_EINVAL, "unexpected %s, expected '=' after key \"%s\"",
                         describe(p, p->pos, buf), shown);
            free(key);
            goto fail;
        }
        p->pos++;
        json_t *value;
        rc = parse_value(p, &value);
        if (rc != 0) {
            free(key);
            goto fail;
        }
        if (json_object_get(map, key)) {
            char shown[48];
            token_excerpt(key, key_len, shown);
            json_decref(value);
            free(key);
            rc = fail_at(p, key_pos, PS_EINVAL, "duplicate key \"%s\"", shown);
            goto fail;
        }
        int set = json_object_set_new(map, key, value);
        free(key);
        if (set != 0) {
            rc = fail_at(p, key_pos, PS_ENOMEM, "out of memory");
            goto fail;
        }
        skip_space(p);
        if (peek(p) == ';') {
            p->pos++;
            continue;
        }
        if (peek(p) == close)
            break;
        rc = unexpected(p, close == '}' ? "';' or '}'" : "';' or '>'");
        goto fail;
    }
    p->pos++;
    p->depth--;
    *out = map;
    return 0;
fail:
    json_decref(map);
    return rc;
}

static int parse_list(struct parser *p, json_t **out)
{
    int rc = enter(p);
    if (rc != 0)
        return rc;
    json_t *list = json_array();
    if (!list)
        return fail_at(p, p->pos, PS_ENOMEM, "out of memory");
    for (;;) {
        skip_space(p);
        if (peek(p) == ']')
            break;
        json_t *value;
        rc = parse_value(p, &value);
        if (rc != 0)
            goto fail;
        if (json_array_append_new(list, value) != 0) {
            rc = fail_at(p, p->pos, PS_ENOMEM, "out of memory");
            goto fail;
        }
        skip_space(p);
        if (peek(p) == ';') {
            p->pos++;
            continue;
        }
        if (peek(p) == ']')
            break;
        rc = unexpected(p, "';' or ']'");
        goto fail;
    }
    p->pos++;
    p->depth--;
    *out = list;
    return 0;
fail:
    json_decref(list);
    return rc;
}

static int parse_value(struct parser *p, json_t **out)
{
    *out = NULL;
    skip_space(p);
    if (at_end(p))
        return unexpected(p, "a value");
    char c = p->text[p->pos];
    switch (c) {
    case '{':
        return parse_pairs(p, '}', out);
    case '[':
        return parse_list(p, out);
    case '#':
        p->pos++;
        *out = json_null();
        return 0;
    case '%':
        return parse_percent(p, out);
    case '<': {
        if (!p->attributes)
            return fail_at(p, p->pos, PS_EINVAL,
                           "attributes (<...> before a value) are not supported here");
        json_t *attrs = NULL, *value = NULL;
        int rc = parse_pairs(p, '>', &attrs);
        if (rc == 0 && (skip_space(p), peek(p) == '<'))
            rc = fail_at(p, p->pos, PS_EINVAL, "a value has one set of attributes");
        if (rc == 0)
            rc = parse_value(p, &value);
        if (rc != 0) {
            json_decref(attrs);
            return rc;
        }
        /* the YTsaurus JSON form of a value with attributes */
        *out = json_pack("{s:o, s:o}", "$attributes", attrs, "$value", value);
        return *out ? 0 : fail_at(p, p->pos, PS_ENOMEM, "out of memory");
    }
    case '"':
        break;
    default:
        if (is_digit(c) || c == '-' || c == '+')
            return parse_number(p, out);
        if (!is_unquoted_start(c))
            return unexpected(p, "a value");
        break;
    }
    size_t start = p->pos;
    char *s;
    size_t n;
    int rc = read_string(p, &s, &n);
    if (rc != 0)
        return rc;
    *out = json_stringn(s, n);
    free(s);
    if (!*out)
        return fail_at(p, start, PS_ENOMEM, "out of memory");
    return 0;
}

static int parse_document(const char *text, size_t len, bool attributes, json_t **out,
                          struct ps_error *err, size_t *fail_pos)
{
    struct parser p = {.text = text, .len = len, .pos = 0, .depth = 0, .fail_pos = 0,
                       .attributes = attributes, .err = err};
    struct ps_error local;
    if (!err) {
        ps_error_init(&local);
        p.err = &local;
    }
    *out = NULL;
    json_t *v;
    int rc = parse_value(&p, &v);
    if (rc == 0) {
        skip_space(&p);
        if (!at_end(&p)) {
            json_decref(v);
            rc = unexpected(&p, "end of input after the value");
        }
    }
    if (fail_pos)
        *fail_pos = p.fail_pos;
    if (rc == 0)
        *out = v;
    return rc;
}

int ps_yson_parse(const char *text, size_t len, json_t **out, struct ps_error *err)
{
    return parse_document(text, len, false, out, err, NULL);
}

/* ---- JSON or YSON ------------------------------------------------------------------------ */

/* Depth of maps and lists in v (a scalar has depth 0). jansson bounds its own parse depth, so
 * the recursion is bounded too. */
static int json_depth(const json_t *v)
{
    int deepest = 0;
    if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach((json_t *)v, key, child) {
            int d = json_depth(child);
            if (d > deepest)
                deepest = d;
        }
        return deepest + 1;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *child;
        json_array_foreach(v, i, child) {
            int d = json_depth(child);
            if (d > deepest)
                deepest = d;
        }
        return deepest + 1;
    }
    return 0;
}

static int parse_text(const char *text, size_t len, bool attributes, json_t **out,
                      struct ps_error *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (v) {
        if (json_depth(v) > PS_YSON_MAX_DEPTH) {
            json_decref(v);
            return ps_error_set(err, PS_EINVAL,
                                "invalid JSON: nesting deeper than %d levels of maps and lists",
                                PS_YSON_MAX_DEPTH);
        }
        *out = v;
        return 0;
    }

    struct ps_error yerr;
    ps_error_init(&yerr);
    size_t fail_pos = 0;
    int rc = parse_document(text, len, attributes, out, &yerr, &fail_pos);
    if (rc == 0)
        return 0;
    /* Both failed. A YSON failure on ':' or ',' (JSON's punctuation) where the JSON parser got
     * further means the user wrote JSON: its message is the one that helps. */
    bool json_punctuation = fail_pos < len && (text[fail_pos] == ':' || text[fail_pos] == ',');
    if (rc == PS_EINVAL && json_punctuation && jerr.position > 0 &&
        (size_t)jerr.position > fail_pos)
        return ps_error_set(err, PS_EINVAL, "invalid JSON at line %d, column %d: %s",
                            jerr.line, jerr.column, jerr.text);
    return ps_error_set(err, rc, "%s", yerr.msg);
}

int ps_value_parse_text(const char *text, size_t len, json_t **out, struct ps_error *err)
{
    return parse_text(text, len, false, out, err);
}

int ps_value_parse_attributed(const char *text, size_t len, json_t **out, struct ps_error *err)
{
    return parse_text(text, len, true, out, err);
}
