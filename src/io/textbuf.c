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
static bool grow(struct ps_textbuf *b, size_t extra)
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

void ps_textbuf_add(struct ps_textbuf *b, const void *bytes, size_t len)
{
    if (!grow(b, len))
        return;
    if (len)
        memcpy(b->data + b->len, bytes, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void ps_textbuf_adds(struct ps_textbuf *b, const char *s)
{
    ps_textbuf_add(b, s, strlen(s));
}

void ps_textbuf_addc(struct ps_textbuf *b, char c)
{
    ps_textbuf_add(b, &c, 1);
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
    if (!grow(b, (size_t)n))
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
    if (!b->data && !grow(b, 0)) {
        ps_textbuf_release(b);
        return NULL;
    }
    char *data = b->data;
    ps_textbuf_init(b);
    return data;
}
