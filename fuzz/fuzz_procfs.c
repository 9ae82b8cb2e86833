/* libFuzzer target: the /proc parsers (stat lines, "Key: N kB" fields) must never read past
 * the buffer they are given, never crash, and report errors with a message. The first byte
 * picks the parser; the rest is the text, in a buffer of exactly its size. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t len = size - 1;
    char *buf = malloc(len ? len : 1);     /* exact size: ASan sees any read past len */
    if (!buf)
        return 0;
    memcpy(buf, data + 1, len);
    struct ps_error err;
    ps_error_init(&err);
    int rc;
    if (data[0] & 1) {
        struct ps_procfs_stat st;
        rc = ps_procfs_parse_stat(buf, len, &st, &err);
        if (rc == 0 && (st.state < 'A' || st.state > 'z'))
            __builtin_trap();
    } else {
        static const char *const keys[] = {"VmRSS", "VmHWM", "MemTotal", "MemAvailable"};
        int64_t v = -1;
        rc = ps_procfs_parse_kb_field(buf, len, keys[(data[0] >> 1) & 3], &v, &err);
        if (rc == 0 && (v < 0 || v % 1024 != 0))
            __builtin_trap();
    }
    if (rc != 0 && (err.code != rc || err.msg[0] == '\0'))
        __builtin_trap();
    free(buf);
    return 0;
}
