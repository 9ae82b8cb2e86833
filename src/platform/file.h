/* file.h — whole-file reads and writes (the only file I/O of the offline commands), and
 * temporary directories. Remove a temporary directory with ps_sandbox_remove (sandbox.h),
 * which deletes a tree without following symlinks. */
#ifndef PS_PLATFORM_FILE_H
#define PS_PLATFORM_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "core/error.h"

/* Reads the file at path into *data (malloc'ed, NUL-terminated; *len excludes the NUL; free
 * with free()). Errors: PS_ENOENT when there is no such file, PS_EIO otherwise, with
 * `<path>: <strerror>`; PS_ENOMEM. */
int ps_file_read(const char *path, char **data, size_t *len, struct ps_error *err);

/* ps_file_read of at most max bytes (0: no limit): a longer file is PS_ELIMIT
 * `<path>: larger than <max> bytes`. Path "-" reads the standard input, named "<stdin>". */
int ps_file_read_max(const char *path, size_t max, char **data, size_t *len,
                     struct ps_error *err);

/* The same for an open stream (not closed), named name in messages. */
int ps_file_read_stream(FILE *f, const char *name, size_t max, char **data, size_t *len,
                        struct ps_error *err);

/* Replaces the file at path with len bytes of data: it writes "<path>.tmp-<pid>" and renames
 * it over path, so readers never see half a file and a failure leaves path as it was.
 * Errors: PS_EIO with `<path>: <strerror>`. */
int ps_file_write(const char *path, const char *data, size_t len, struct ps_error *err);

/* Creates a new directory, mode 0700, from template_path ending in "XXXXXX" (mkdtemp), which
 * receives the directory's name in place. Errors: PS_EIO naming the template and strerror. */
int ps_file_make_temp_dir(char *template_path, struct ps_error *err);

#endif
