/* textbuf.h — a growable, always NUL-terminated byte buffer for the text formats in src/io.
 *
 * Small on purpose (git's strbuf without the kitchen sink): the YSON printer and the YPath
 * formatter append to one, then hand the bytes to the caller with ps_textbuf_detach.
 * Appends after an allocation failure do nothing and keep failing, so a caller may append a
 * whole document and check `failed` once at the end.
 */
#ifndef PS_IO_TEXTBUF_H
#define PS_IO_TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>

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

/* Appends len bytes (may include NUL bytes). */
void ps_textbuf_add(struct ps_textbuf *b, const void *bytes, size_t len);

/* Appends a NUL-terminated string. */
void ps_textbuf_adds(struct ps_textbuf *b, const char *s);

/* Appends one byte. */
void ps_textbuf_addc(struct ps_textbuf *b, char c);

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
