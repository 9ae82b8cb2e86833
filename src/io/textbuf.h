/* textbuf.h — the project's growable, always NUL-terminated byte buffer for text formats.
 *
 * Small on purpose (git's strbuf without the kitchen sink): the YSON printer, the YPath
 * formatter, the simulator's outputs (events.jsonl, pools.csv, ...) append to one, then hand
 * the bytes on (ps_textbuf_detach, or data/len). Appends after an allocation failure do
 * nothing and keep failing, so a caller may append a whole document and check `failed` once
 * at the end. Appending is inline while the bytes fit: the simulator formats ~0.5 GB a day.
 */
#ifndef PS_IO_TEXTBUF_H
#define PS_IO_TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ps_textbuf {
    char *data;      /* NULL until the first append; NUL-terminated afterwards */
    size_t len;      /* bytes in data, not counting the NUL */
    size_t cap;      /* bytes allocated */
    bool failed;     /* an allocation failed; data holds what was appended before */
};

/* Empties b without allocating. */
void ps_textbuf_init(struct ps_textbuf *b);

/* Frees b's bytes and empties it. */
void ps_textbuf_release(struct ps_textbuf *b);

/* ps_textbuf_reserve when the bytes do not fit (or `failed`). */
bool ps_textbuf_reserve_grow(struct ps_textbuf *b, size_t n);

/* ps_textbuf_add when the bytes do not fit (or `failed`): grows, then appends. */
void ps_textbuf_add_grow(struct ps_textbuf *b, const void *bytes, size_t len);

/* Makes room for n more bytes (and the NUL); false, `failed` set, when it cannot. For a
 * caller that writes into data + len itself and then adds to len. */
static inline bool ps_textbuf_reserve(struct ps_textbuf *b, size_t n)
{
    if (b->failed || n >= b->cap - b->len)   /* cap is 0, or at least len + 1 */
        return ps_textbuf_reserve_grow(b, n);
    return true;
}

/* Appends len bytes (may include NUL bytes). */
static inline void ps_textbuf_add(struct ps_textbuf *b, const void *bytes, size_t len)
{
    if (b->failed || len >= b->cap - b->len) {   /* cap is 0, or at least len + 1 */
        ps_textbuf_add_grow(b, bytes, len);
        return;
    }
    memcpy(b->data + b->len, bytes, len);
    b->len += len;
    b->data[b->len] = '\0';
}

/* Appends a NUL-terminated string. */
static inline void ps_textbuf_adds(struct ps_textbuf *b, const char *s)
{
    ps_textbuf_add(b, s, strlen(s));
}

/* Appends one byte. */
static inline void ps_textbuf_addc(struct ps_textbuf *b, char c)
{
    if (b->failed || b->cap - b->len < 2) {
        ps_textbuf_add_grow(b, &c, 1);
        return;
    }
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

/* Appends x in decimal digits. */
void ps_textbuf_addi(struct ps_textbuf *b, int64_t x);

/* Appends s as a JSON string literal (quotes; ", \\, control characters escaped). */
void ps_textbuf_add_json(struct ps_textbuf *b, const char *s);

/* Appends s as a CSV field (RFC 4180: quoted when it holds a comma, quote, CR or LF). */
void ps_textbuf_add_csv(struct ps_textbuf *b, const char *s);

/* Appends printf-style text. */
void ps_textbuf_addf(struct ps_textbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Empties b but keeps its allocation for reuse, and clears `failed`. */
void ps_textbuf_reset(struct ps_textbuf *b);

/* A sink for jansson's json_dump_callback (ctx is a struct ps_textbuf *): appends size bytes
 * and returns 0, or -1 once an allocation has failed, which stops the dump. */
int ps_textbuf_dump_cb(const char *data, size_t size, void *ctx);

/* Returns the bytes (NUL-terminated, owned by the caller, free() them) and empties b; returns
 * NULL, and releases b, if any allocation failed. An empty buffer yields "". */
char *ps_textbuf_detach(struct ps_textbuf *b);

#endif
