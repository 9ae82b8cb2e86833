/* ypath.c — Cypress path parsing and building (see ypath.h). */
#include "io/ypath.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/hex.h"
#include "io/textbuf.h"
#include "io/utf8.h"

/* Paths are cut to this many bytes when quoted in a message. */
#define SHOWN_PATH_MAX 160

static bool is_special(char c)
{
    return c == '\\' || c == '/' || c == '@' || c == '&' || c == '*' || c == '[' || c == '{';
}

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* Length of the valid UTF-8 sequence at s[0..len), or 0. */
static size_t utf8_sequence(const char *s, size_t len)
{
    unsigned char c = (unsigned char)s[0];
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return n <= len && ps_utf8_valid(s, n, NULL) ? n : 0;
}

/* The path as a bounded C-string literal body for messages: valid UTF-8 and printable, since
 * messages end up in JSON answers and terminals. */
static void quote_path(const char *path, size_t len, char *out, size_t cap)
{
    size_t j = 0;
    size_t i = 0;
    while (i < len && j + 8 < cap) {
        unsigned char c = (unsigned char)path[i];
        if (i >= SHOWN_PATH_MAX) {
            memcpy(out + j, "...", 3);
            j += 3;
            break;
        }
        size_t seq = c >= 0x80 ? utf8_sequence(path + i, len - i) : 0;
        if (seq > 0) {
            memcpy(out + j, path + i, seq);
            j += seq;
            i += seq;
            continue;
        }
        if (c == '"' || c == '\\') {
            out[j++] = '\\';
            out[j++] = (char)c;
        } else if (is_control(c) || c >= 0x80) {
            j += (size_t)snprintf(out + j, cap - j, "\\x%02X", c);
        } else {
            out[j++] = (char)c;
        }
        i++;
    }
    out[j] = '\0';
}

struct parse {
    const char *path;
    size_t len;
    size_t pos;
    struct ps_error *err;
};

/* Reports a problem at byte offset `at` (shown 1-based). */
static int fail_at(const struct parse *ps, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(const struct parse *ps, size_t at, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    char shown[4 * SHOWN_PATH_MAX + 16];
    quote_path(ps->path, ps->len, shown, sizeof shown);
    return ps_error_set(ps->err, PS_EINVAL, "invalid path \"%s\": %s at position %zu", shown, why,
                        at + 1);
}

/* Reads one name at ps->pos up to '/' or the end, unescaped, into *dst (advancing *dst past
 * its NUL). `in_attrs` selects the message for a stray '@'. */
static int read_name(struct parse *ps, char **dst, bool in_attrs)
{
    size_t start = ps->pos;
    char *begin = *dst;
    char *w = begin;
    while (ps->pos < ps->len && ps->path[ps->pos] != '/') {
        size_t at = ps->pos;
        char c = ps->path[ps->pos];
        if (c == '\\') {
            if (at + 1 >= ps->len)
                return fail_at(ps, at, "escape '\\' at the end of the path");
            char e = ps->path[at + 1];
            if (is_special(e)) {
                *w++ = e;
                ps->pos += 2;
            } else if (e == 'x') {
                int hi = at + 2 < ps->len ? ps_hex_digit_value(ps->path[at + 2]) : -1;
                int lo = hi >= 0 && at + 3 < ps->len ? ps_hex_digit_value(ps->path[at + 3]) : -1;
                if (lo < 0)
                    return fail_at(ps, at, "malformed escape: \\x needs two hex digits");
                unsigned char byte = (unsigned char)(hi * 16 + lo);
                if (is_control(byte))
                    return fail_at(ps, at, "control character 0x%02X in a name", byte);
                *w++ = (char)byte;
                ps->pos += 4;
            } else {
                return fail_at(ps, at,
                               "malformed escape: '\\' must be followed by one of \\ / @ & * [ { "
                               "or xHH");
            }
            continue;
        }
        if (c == '@') {
            if (in_attrs)
                return fail_at(ps, at, "'@' inside the attribute part (attributes of an "
                                       "attribute are not supported); write \\@ for a literal '@'");
            return fail_at(ps, at,
                           "'@' must follow '/' to start attributes (/@name); write \\@ for a "
                           "literal '@'");
        }
        if (c == '&' && !in_attrs && w != begin &&
            (at + 1 == ps->len || ps->path[at + 1] == '/')) {
            ps->pos++;   /* `name&`: do not follow a link; there are no links here */
            continue;
        }
        if (is_special(c))
            return fail_at(ps, at, "unescaped '%c' is not supported in a name; write \\%c for a "
                                   "literal '%c'", c, c, c);
        if (is_control((unsigned char)c))
            return fail_at(ps, at, "control character 0x%02X in a name", (unsigned char)c);
        *w++ = c;
        ps->pos++;
    }
    if (w == begin) {
        if (ps->pos == ps->len)
            return fail_at(ps, start, "a path must not end with '/'");
        return fail_at(ps, start, "empty %s", in_attrs ? "attribute key" : "name");
    }
    size_t bad;
    if (!ps_utf8_valid(begin, (size_t)(w - begin), &bad))
        return fail_at(ps, start, "the name starting here is not valid UTF-8");
    *w++ = '\0';
    *dst = w;
    return 0;
}

void ps_ypath_init(struct ps_ypath *p)
{
    p->nodes = NULL;
    p->node_count = 0;
    p->attrs = NULL;
    p->attr_count = 0;
    p->all_attrs = false;
    p->storage = NULL;
}

void ps_ypath_release(struct ps_ypath *p)
{
    if (!p)
        return;
    free(p->nodes);
    free(p->attrs);
    free(p->storage);
    ps_ypath_init(p);
}

int ps_ypath_parse(const char *path, struct ps_ypath *out, struct ps_error *err)
{
    ps_ypath_release(out);
    size_t len = strnlen(path, PS_YPATH_MAX_LEN + 1);
    struct parse ps = {.path = path, .len = len, .pos = 0, .err = err};
    if (len > PS_YPATH_MAX_LEN)
        return ps_error_set(err, PS_EINVAL, "invalid path: longer than %d bytes",
                            PS_YPATH_MAX_LEN);
    if (len == 0)
        return ps_error_set(err, PS_EINVAL, "invalid path: the path is empty");
    if (len < 2 || path[0] != '/' || path[1] != '/')
        return fail_at(&ps, 0, "a path must start with \"//\" (like //sys/pool_trees/...)");

    /* Every name ends at a '/' or at the end, so '/' count + 1 bounds the names, and the
     * unescaped names with their NULs fit in len + 1 bytes. */
    size_t slashes = 0;
    for (size_t i = 0; i < len; i++)
        slashes += path[i] == '/';
    out->storage = malloc(len + 1);
    out->nodes = malloc((slashes + 1) * sizeof *out->nodes);
    out->attrs = malloc((slashes + 1) * sizeof *out->attrs);
    if (!out->storage || !out->nodes || !out->attrs) {
        ps_ypath_release(out);
        return ps_error_set(err, PS_ENOMEM, "out of memory while parsing a path");
    }
    char *w = out->storage;
    int rc = 0;
    ps.pos = 2;
    bool in_attrs = false;
    if (ps.pos < len && path[ps.pos] == '@') {
        in_attrs = true;
        ps.pos++;
        if (ps.pos == len)
            out->all_attrs = true;
    }
    while (ps.pos < len && !out->all_attrs) {
        char *name = w;
        rc = read_name(&ps, &w, in_attrs);
        if (rc != 0)
            break;
        if (in_attrs)
            out->attrs[out->attr_count++] = name;
        else
            out->nodes[out->node_count++] = name;
        if (ps.pos == len)
            break;
        ps.pos++; /* the '/' */
        if (!in_attrs && ps.pos < len && path[ps.pos] == '@') {
            in_attrs = true;
            ps.pos++;
            if (ps.pos == len)
                out->all_attrs = true;
        } else if (ps.pos == len) {
            rc = fail_at(&ps, ps.pos - 1, "a path must not end with '/'");
            break;
        }
    }
    if (rc != 0)
        ps_ypath_release(out);
    return rc;
}

static int escape_into(struct ps_textbuf *b, const char *name, struct ps_error *err)
{
    size_t n = strlen(name);
    if (n == 0)
        return ps_error_set(err, PS_EINVAL, "cannot build a path: empty name");
    if (!ps_utf8_valid(name, n, NULL))
        return ps_error_set(err, PS_EINVAL, "cannot build a path: name is not valid UTF-8");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (is_control(c))
            return ps_error_set(err, PS_EINVAL,
                                "cannot build a path: control character 0x%02X in a name", c);
        if (is_special((char)c))
            ps_textbuf_addc(b, '\\');
        ps_textbuf_addc(b, (char)c);
    }
    return 0;
}

static int detach(struct ps_textbuf *b, char **out, struct ps_error *err)
{
    *out = ps_textbuf_detach(b);
    if (!*out)
        return ps_error_set(err, PS_ENOMEM, "out of memory while building a path");
    return 0;
}

int ps_ypath_escape(const char *name, char **out, struct ps_error *err)
{
    *out = NULL;
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    int rc = escape_into(&b, name, err);
    if (rc != 0) {
        ps_textbuf_release(&b);
        return rc;
    }
    return detach(&b, out, err);
}

int ps_ypath_build(const char *const *nodes, size_t node_count, const char *const *attrs,
                   size_t attr_count, bool all_attrs, char **out, struct ps_error *err)
{
    *out = NULL;
    if (all_attrs && attr_count > 0)
        return ps_error_set(err, PS_EINVAL,
                            "cannot build a path: all attributes and attribute keys at once");
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    ps_textbuf_adds(&b, "//");
    int rc = 0;
    for (size_t i = 0; i < node_count && rc == 0; i++) {
        if (i > 0)
            ps_textbuf_addc(&b, '/');
        rc = escape_into(&b, nodes[i], err);
    }
    if (rc == 0 && (attr_count > 0 || all_attrs))
        ps_textbuf_adds(&b, node_count > 0 ? "/@" : "@");
    for (size_t i = 0; i < attr_count && rc == 0; i++) {
        if (i > 0)
            ps_textbuf_addc(&b, '/');
        rc = escape_into(&b, attrs[i], err);
    }
    if (rc == 0 && !b.failed && b.len > PS_YPATH_MAX_LEN)
        rc = ps_error_set(err, PS_EINVAL, "cannot build a path: longer than %d bytes",
                          PS_YPATH_MAX_LEN);
    if (rc != 0) {
        ps_textbuf_release(&b);
        return rc;
    }
    return detach(&b, out, err);
}

int ps_ypath_format(const struct ps_ypath *p, char **out, struct ps_error *err)
{
    return ps_ypath_build((const char *const *)p->nodes, p->node_count,
                          (const char *const *)p->attrs, p->attr_count, p->all_attrs, out, err);
}
