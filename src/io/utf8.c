#include "io/utf8.h"

/* Length of the sequence led by byte c and the smallest code point it may encode, or 0. */
static int lead_length(unsigned char c, uint32_t *min_cp)
{
    if (c < 0x80) {
        *min_cp = 0;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        *min_cp = 0x80;
        return 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        *min_cp = 0x800;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        *min_cp = 0x10000;
        return 4;
    }
    return 0;
}

bool ps_utf8_valid(const char *s, size_t len, size_t *bad_offset)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        uint32_t min_cp;
        int n = lead_length(u[i], &min_cp);
        if (n == 0 || (size_t)n > len - i)
            goto bad;
        uint32_t cp = n == 1 ? u[i] : (uint32_t)(u[i] & (0x7F >> n));
        for (int k = 1; k < n; k++) {
            if ((u[i + k] & 0xC0) != 0x80)
                goto bad;
            cp = (cp << 6) | (u[i + k] & 0x3F);
        }
        if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            goto bad;
        i += (size_t)n;
    }
    return true;
bad:
    if (bad_offset)
        *bad_offset = i;
    return false;
}

size_t ps_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0;
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp <= 0x10FFFF) {
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        return 4;
    }
    return 0;
}
