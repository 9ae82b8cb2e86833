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

int ps_error_set(struct ps_error *err, int code, const char *fmt, ...)
{
    if (!err || err->code != 0)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
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
    default: return "unknown error";
    }
}
