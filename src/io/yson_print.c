/* yson_print.c — json_t to YSON text in the layout of upstream's text writer (see yson.h). */
#include "io/yson.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/textbuf.h"

/* The parse limit, so that whatever is printed parses back. */
#define PRINT_MAX_DEPTH PS_YSON_MAX_DEPTH

struct printer {
    struct ps_textbuf out;
    unsigned flags;
    struct ps_error *err;
};

static bool is_octal(char c) { return c >= '0' && c <= '7'; }

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* C escaping that every YSON reader understands: printable ASCII as is (but '"' and '\\'),
 * \r \n \t, and other bytes as \xHH, or in octal when the next byte would extend the escape
 * (a reader may take \x greedily, as C does). Output is plain ASCII. */
static void print_string(struct printer *pr, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    struct ps_textbuf *b = &pr->out;
    ps_textbuf_addc(b, '"');
    size_t plain = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char next = i + 1 < n ? s[i + 1] : '\0';
        char esc[5];
        size_t k = 0;
        if (c == '"' || c == '\\') {
            esc[k++] = '\\';
            esc[k++] = (char)c;
        } else if (c >= 0x20 && c <= 0x7e) {
            continue;
        } else if (c == '\r' || c == '\n' || c == '\t') {
            esc[k++] = '\\';
            esc[k++] = c == '\r' ? 'r' : c == '\n' ? 'n' : 't';
        } else if (c < 8 && !is_octal(next)) {
            esc[k++] = '\\';
            esc[k++] = (char)('0' + c);
        } else if (!is_hex(next)) {
            esc[k++] = '\\';
            esc[k++] = 'x';
            esc[k++] = hex[c >> 4];
            esc[k++] = hex[c & 0xF];
        } else {
            esc[k++] = '\\';
            esc[k++] = (char)('0' + (c >> 6));
            esc[k++] = (char)('0' + ((c >> 3) & 7));
            esc[k++] = (char)('0' + (c & 7));
        }
        ps_textbuf_add(b, s + plain, i - plain);
        ps_textbuf_add(b, esc, k);
        plain = i + 1;
    }
    ps_textbuf_add(b, s + plain, n - plain);
    ps_textbuf_addc(b, '"');
}

/* The shortest "%.Ng" that reads back to d, with a '.' added when it would read as an integer
 * (upstream writes 1000. for a double 1000). */
static void print_real(struct printer *pr, double d)
{
    char text[40];
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*g", precision, d);
        if (strtod(text, NULL) == d)
            break;
    }
    ps_textbuf_adds(&pr->out, text);
    if (!strpbrk(text, ".eE"))
        ps_textbuf_addc(&pr->out, '.');
}

static void indent(struct printer *pr, int depth)
{
    for (int i = 0; i < depth; i++)
        ps_textbuf_adds(&pr->out, "    ");
}

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int print_value(struct printer *pr, const json_t *v, int depth);

/* Opens an item of a collection at depth (the collection's own depth + 1). */
static void item_start(struct printer *pr, int depth, bool first)
{
    if (pr->flags & PS_YSON_PRETTY) {
        if (first)
            ps_textbuf_addc(&pr->out, '\n');
        indent(pr, depth);
    }
}

static void item_end(struct printer *pr)
{
    ps_textbuf_addc(&pr->out, ';');
    if (pr->flags & PS_YSON_PRETTY)
        ps_textbuf_addc(&pr->out, '\n');
}

static int print_map(struct printer *pr, const json_t *v, int depth)
{
    size_t n = json_object_size(v);
    const char **keys = NULL;
    if (n > 0) {
        keys = malloc(n * sizeof *keys);
        if (!keys)
            return ps_error_set(pr->err, PS_ENOMEM, "out of memory while printing YSON");
    }
    size_t k = 0;
    const char *key;
    json_t *child;
    json_object_foreach((json_t *)v, key, child) {
        keys[k++] = key;
    }
    if ((pr->flags & PS_YSON_SORT_KEYS) && n > 1)
        qsort(keys, n, sizeof *keys, compare_keys);

    ps_textbuf_addc(&pr->out, '{');
    for (size_t i = 0; i < n; i++) {
        item_start(pr, depth + 1, i == 0);
        print_string(pr, keys[i], strlen(keys[i]));
        ps_textbuf_adds(&pr->out, (pr->flags & PS_YSON_PRETTY) ? " = " : "=");
        int rc = print_value(pr, json_object_get(v, keys[i]), depth + 1);
        if (rc != 0) {
            free(keys);
            return rc;
        }
        item_end(pr);
    }
    if (n > 0 && (pr->flags & PS_YSON_PRETTY))
        indent(pr, depth);
    ps_textbuf_addc(&pr->out, '}');
    free(keys);
    return 0;
}

static int print_list(struct printer *pr, const json_t *v, int depth)
{
    size_t n = json_array_size(v);
    ps_textbuf_addc(&pr->out, '[');
    for (size_t i = 0; i < n; i++) {
        item_start(pr, depth + 1, i == 0);
        int rc = print_value(pr, json_array_get(v, i), depth + 1);
        if (rc != 0)
            return rc;
        item_end(pr);
    }
    if (n > 0 && (pr->flags & PS_YSON_PRETTY))
        indent(pr, depth);
    ps_textbuf_addc(&pr->out, ']');
    return 0;
}

static int print_value(struct printer *pr, const json_t *v, int depth)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        if (depth >= PRINT_MAX_DEPTH)
            return ps_error_set(pr->err, PS_EINVAL,
                                "cannot print YSON: value nested deeper than %d levels",
                                PRINT_MAX_DEPTH);
        return json_is_object(v) ? print_map(pr, v, depth) : print_list(pr, v, depth);
    case JSON_STRING:
        print_string(pr, json_string_value(v), json_string_length(v));
        return 0;
    case JSON_INTEGER:
        ps_textbuf_addf(&pr->out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 0;
    case JSON_REAL: {
        double d = json_real_value(v);
        if (!isfinite(d))
            return ps_error_set(pr->err, PS_EINVAL, "cannot print YSON: a real is not finite");
        print_real(pr, d);
        return 0;
    }
    case JSON_TRUE:
        ps_textbuf_adds(&pr->out, "%true");
        return 0;
    case JSON_FALSE:
        ps_textbuf_adds(&pr->out, "%false");
        return 0;
    case JSON_NULL:
        ps_textbuf_addc(&pr->out, '#');
        return 0;
    }
    return ps_error_set(pr->err, PS_EINVAL, "cannot print YSON: unknown value type");
}

int ps_yson_print(const json_t *value, unsigned flags, char **out, struct ps_error *err)
{
    *out = NULL;
    if (!value)
        return ps_error_set(err, PS_EINVAL, "cannot print YSON: no value");
    struct printer pr = {.flags = flags, .err = err};
    ps_textbuf_init(&pr.out);
    int rc = print_value(&pr, value, 0);
    if (rc != 0) {
        ps_textbuf_release(&pr.out);
        return rc;
    }
    *out = ps_textbuf_detach(&pr.out);
    if (!*out)
        return ps_error_set(pr.err, PS_ENOMEM, "out of memory while printing YSON");
    return 0;
}
