#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ps_error_init(struct ps_error *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

/* Messages are one line whatever the values formatted into them hold (keys and names come from
 * users): control characters are shown escaped, cut at the buffer's end. */
static void one_line(char *msg, size_t size)
{
    size_t i = 0;
    while (msg[i] && (unsigned char)msg[i] >= 0x20 && msg[i] != 0x7f)
        i++;
    if (!msg[i])
        return;   /* the common case: nothing to escape */
    char out[PS_ERROR_MSG_MAX];
    size_t o = 0;
    for (const char *p = msg; *p && o + 5 < sizeof out; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\n' || c == '\t' || c == '\r') {
            out[o++] = '\\';
            out[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        } else if (c < 0x20 || c == 0x7f) {
            o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    snprintf(msg, size, "%s", out);
}

int ps_error_set(struct ps_error *err, int code, const char *fmt, ...)
{
    if (!err || err->code != 0)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    one_line(err->msg, sizeof err->msg);
    return code;
}

void ps_error_prefix(struct ps_error *err, const char *fmt, ...)
{
    if (!err || err->code == 0)
        return;
    char prefix[PS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char joined[2 * PS_ERROR_MSG_MAX + 3];
    snprintf(joined, sizeof joined, "%s: %s", prefix, err->msg);
    memcpy(err->msg, joined, sizeof err->msg - 1);
    err->msg[sizeof err->msg - 1] = '\0';
    one_line(err->msg, sizeof err->msg);
}

const char *ps_error_code_name(int code)
{
    switch (code) {
    case PS_OK: return "ok";
    case PS_EINVAL: return "invalid argument";
    case PS_ENOMEM: return "out of memory";
    case PS_ENOENT: return "not found";
    case PS_EEXIST: return "already exists";
    case PS_ELIMIT: return "limit exceeded";
    case PS_EIO: return "input/output error";
    case PS_EPERM: return "permission denied";
    case PS_ESTATE: return "wrong state";
    case PS_ENOSPC: return "disk full";
    case PS_EUNAVAIL: return "storage unavailable";
    default: return "unknown error";
    }
}
