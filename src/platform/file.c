#include "platform/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ps_file_read_stream(FILE *f, const char *name, size_t max, char **data, size_t *len,
                        struct ps_error *err)
{
    *data = NULL;
    *len = 0;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return ps_error_set(err, PS_ENOMEM, "%s: out of memory", name);
    for (;;) {
        if (max && n > max) {
            free(buf);
            return ps_error_set(err, PS_ELIMIT, "%s: larger than %zu bytes", name, max);
        }
        if (n + 1 == cap) {
            char *grown = cap < ((size_t)-1) / 2 ? realloc(buf, cap * 2) : NULL;
            if (!grown) {
                free(buf);
                return ps_error_set(err, PS_ENOMEM, "%s: out of memory", name);
            }
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int saved = errno ? errno : EIO;
        free(buf);
        return ps_error_set(err, PS_EIO, "%s: %s", name, strerror(saved));
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

static int read_path(const char *path, size_t max, char **data, size_t *len,
                     struct ps_error *err)
{
    *data = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ps_error_set(err, errno == ENOENT ? PS_ENOENT : PS_EIO, "%s: %s", path,
                            strerror(errno));
    errno = 0;
    int rc = ps_file_read_stream(f, path, max, data, len, err);
    fclose(f);
    return rc;
}

int ps_file_read_max(const char *path, size_t max, char **data, size_t *len,
                     struct ps_error *err)
{
    if (strcmp(path, "-") == 0)
        return ps_file_read_stream(stdin, "<stdin>", max, data, len, err);
    return read_path(path, max, data, len, err);
}

int ps_file_read(const char *path, char **data, size_t *len, struct ps_error *err)
{
    return read_path(path, 0, data, len, err);
}

int ps_file_write(const char *path, const char *data, size_t len, struct ps_error *err)
{
    size_t tmp_size = strlen(path) + 32;
    char *tmp = malloc(tmp_size);
    if (!tmp)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    snprintf(tmp, tmp_size, "%s.tmp-%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int rc = ps_error_set(err, PS_EIO, "%s: %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    int rc = 0;
    if (fwrite(data, 1, len, f) != len || fflush(f) != 0)
        rc = ps_error_set(err, PS_EIO, "%s: %s", tmp, strerror(errno));
    if (fclose(f) != 0 && rc == 0)
        rc = ps_error_set(err, PS_EIO, "%s: %s", tmp, strerror(errno));
    if (rc == 0 && rename(tmp, path) != 0)
        rc = ps_error_set(err, PS_EIO, "%s: %s", path, strerror(errno));
    if (rc != 0)
        remove(tmp);
    free(tmp);
    return rc;
}

int ps_file_make_temp_dir(char *template_path, struct ps_error *err)
{
    if (!mkdtemp(template_path))
        return ps_error_set(err, PS_EIO, "mkdtemp(%s): %s", template_path, strerror(errno));
    return 0;
}
