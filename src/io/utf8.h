/* utf8.h — the two UTF-8 checks the text formats need: validate and encode.
 * Strict RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF. */
#ifndef PS_IO_UTF8_H
#define PS_IO_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when s[0..len) is valid UTF-8 (NUL bytes count as valid). Otherwise false and, if
 * bad_offset is not NULL, the offset of the first byte of the first invalid sequence. */
bool ps_utf8_valid(const char *s, size_t len, size_t *bad_offset);

/* Writes code point cp as UTF-8 into out (room for 4 bytes) and returns the byte count, or 0
 * when cp is a surrogate (U+D800..U+DFFF) or above U+10FFFF. */
size_t ps_utf8_encode(uint32_t cp, char out[4]);

#endif
