/* private_file.h — small secret files (tokens) readable by their owner only. */
#ifndef PS_PLATFORM_PRIVATE_FILE_H
#define PS_PLATFORM_PRIVATE_FILE_H

#include <stddef.h>

#include "core/error.h"

/* Writes len bytes to path with mode 0600 whatever the umask, atomically: a temporary file in
 * the same directory is written, fsynced and renamed over path, and the directory is fsynced,
 * so a crash leaves either the old or the new content. Errors: PS_EIO naming the path. */
int ps_private_file_write(const char *path, const void *data, size_t len, struct ps_error *err);

/* Reads a file of at most max_bytes into a malloc'd NUL-terminated *out (caller frees; *len
 * excludes the NUL, len may be NULL). Refuses a file that its group or others can access, as
 * ssh does with keys. Errors: PS_ENOENT when missing, PS_EPERM for loose permissions (the
 * message says how to fix them), PS_ELIMIT when larger than max_bytes, PS_EIO, PS_ENOMEM. */
int ps_private_file_read(const char *path, size_t max_bytes, char **out, size_t *len,
                         struct ps_error *err);

/* Creates the directory what (named so in messages, e.g. "data dir") at dir, mode 0700,
 * unless it exists as a directory. Errors: PS_EIO `<what> <dir> is not a directory` or
 * `cannot create the <what> <dir>: <strerror>`. */
int ps_private_dir_ensure(const char *dir, const char *what, struct ps_error *err);

/* Creates the file at path, mode 0600, if it does not exist (its content is left as it is),
 * so that it is private from the start. Errors: PS_EIO `cannot open <what> <path>: <strerror>`. */
int ps_private_file_create(const char *path, const char *what, struct ps_error *err);

#endif
