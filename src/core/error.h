/* error.h — the error convention of poolsched.
 *
 * Fallible functions return 0 on success or a negative PS_E* code, and take a last
 * `struct ps_error *err` (may be NULL) that receives a message a user can read as-is: which key,
 * which value, why. The first error wins: later ps_error_set calls on a set error are ignored,
 * so the innermost, most specific message reaches the user. Messages are always one line:
 * control characters that formatted values bring in are shown escaped (\n, \t, \xHH). Only
 * main() exits.
 */
#ifndef PS_CORE_ERROR_H
#define PS_CORE_ERROR_H

enum ps_error_code {
    PS_OK = 0,
    PS_EINVAL = -1,    /* bad input: a key, a value or a document is wrong */
    PS_ENOMEM = -2,    /* out of memory */
    PS_ENOENT = -3,    /* something named does not exist */
    PS_EEXIST = -4,    /* something named exists already */
    PS_ELIMIT = -5,    /* a configured limit refuses the request */
    PS_EIO = -6,       /* an operating-system call failed (shells only) */
    PS_EPERM = -7,     /* not allowed for this user */
    PS_ESTATE = -8,    /* not possible in the current state */
    PS_ENOSPC = -9,    /* the disk is full: a write could not be made durable (HTTP 507) */
    PS_EUNAVAIL = -10, /* storage failed otherwise (I/O error, locked): retry later (HTTP 503) */
};

#define PS_ERROR_MSG_MAX 512

struct ps_error {
    int code;                      /* 0 while unset */
    char msg[PS_ERROR_MSG_MAX];    /* NUL-terminated, truncated if longer */
};

/* Clears err (no-op for NULL). */
void ps_error_init(struct ps_error *err);

/* Sets err to code and a printf-style message unless it is set already; returns code, so that
 * `return ps_error_set(err, PS_EINVAL, "...")` reads naturally. err may be NULL. */
int ps_error_set(struct ps_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes an already set message with "prefix: " (for context added by callers). */
void ps_error_prefix(struct ps_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A short name for a code ("invalid argument", ...). Never NULL. */
const char *ps_error_code_name(int code);

#endif
