#include "io/textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ps_textbuf_init(struct ps_textbuf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = false;
}

void ps_textbuf_release(struct ps_textbuf *b)
{
    free(b->data);
    ps_textbuf_init(b);
}

/* Makes room for extra more bytes plus the NUL. */
bool ps_textbuf_reserve_grow(struct ps_textbuf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra > (size_t)-1 / 2 - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

void ps_textbuf_add_grow(struct ps_textbuf *b, const void *bytes, size_t len)
{
    if (!ps_textbuf_reserve_grow(b, len))
        return;
    if (len)
        memcpy(b->data + b->len, bytes, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void ps_textbuf_addi(struct ps_textbuf *b, int64_t x)
{
    char tmp[24];
    char *p = tmp + sizeof tmp;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0)
        *--p = '-';
    ps_textbuf_add(b, p, (size_t)(tmp + sizeof tmp - p));
}

void ps_textbuf_add_json(struct ps_textbuf *b, const char *s)
{
    ps_textbuf_addc(b, '"');
    const char *run = s;
    const unsigned char *p = (const unsigned char *)s;
    for (; *p; p++) {
        const char *esc = NULL;
        char u[8];
        switch (*p) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\t': esc = "\\t"; break;
        case '\r': esc = "\\r"; break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                snprintf(u, sizeof u, "\\u%04x", *p);
                esc = u;
            }
        }
        if (esc) {
            ps_textbuf_add(b, run, (size_t)((const char *)p - run));
            ps_textbuf_adds(b, esc);
            run = (const char *)p + 1;
        }
    }
    ps_textbuf_add(b, run, (size_t)((const char *)p - run));
    ps_textbuf_addc(b, '"');
}

void ps_textbuf_add_csv(struct ps_textbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        ps_textbuf_adds(b, s);
        return;
    }
    ps_textbuf_addc(b, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            ps_textbuf_addc(b, '"');
        ps_textbuf_addc(b, *p);
    }
    ps_textbuf_addc(b, '"');
}

void ps_textbuf_addf(struct ps_textbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!ps_textbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ps_textbuf_reset(struct ps_textbuf *b)
{
    b->len = 0;
    b->failed = false;
    if (b->data)
        b->data[0] = '\0';
}

int ps_textbuf_dump_cb(const char *data, size_t size, void *ctx)
{
    struct ps_textbuf *b = ctx;
    ps_textbuf_add(b, data, size);
    return b->failed ? -1 : 0;
}

char *ps_textbuf_detach(struct ps_textbuf *b)
{
    if (b->failed) {
        ps_textbuf_release(b);
        return NULL;
    }
    if (!b->data && !ps_textbuf_reserve(b, 0)) {
        ps_textbuf_release(b);
        return NULL;
    }
    char *data = b->data;
    ps_textbuf_init(b);
    return data;
}
