#include "platform/private_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int ps_private_file_write(const char *path, const void *data, size_t len, struct ps_error *err)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32);
    char *dir_copy = strdup(path);
    if (!tmp || !dir_copy) {
        free(tmp);
        free(dir_copy);
        return ps_error_set(err, PS_ENOMEM, "out of memory writing %s", path);
    }
    snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    int rc = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        rc = ps_error_set(err, PS_EIO, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    /* The umask could only remove bits, but an existing temporary file keeps its old mode. */
    if (fchmod(fd, 0600) != 0 || write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        rc = ps_error_set(err, PS_EIO, "cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (close(fd) != 0) {
        rc = ps_error_set(err, PS_EIO, "cannot write %s: %s", tmp, strerror(errno));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, path) != 0) {
        rc = ps_error_set(err, PS_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    /* Make the rename itself durable. */
    int dfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
out:
    free(tmp);
    free(dir_copy);
    return rc;
}

int ps_private_file_read(const char *path, size_t max_bytes, char **out, size_t *len,
                         struct ps_error *err)
{
    *out = NULL;
    if (len)
        *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int e = errno;
        return ps_error_set(err, e == ENOENT ? PS_ENOENT : PS_EIO, "cannot open %s: %s", path,
                            strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, PS_EIO, "cannot stat %s: %s", path, strerror(e));
    }
    if (st.st_mode & 077) {
        close(fd);
        return ps_error_set(err, PS_EPERM,
                            "%s is accessible by others (mode %04o); it holds a secret: "
                            "run chmod 600 on it", path, (unsigned)(st.st_mode & 07777));
    }
    if ((unsigned long long)st.st_size > max_bytes) {
        close(fd);
        return ps_error_set(err, PS_ELIMIT, "%s has %lld bytes, more than the %zu expected",
                            path, (long long)st.st_size, max_bytes);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return ps_error_set(err, PS_ENOMEM, "out of memory reading %s", path);
    }
    size_t done = 0;
    while (done < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            free(buf);
            return ps_error_set(err, PS_EIO, "cannot read %s: %s", path, strerror(e));
        }
        if (n == 0)
            break;   /* shorter than fstat said: take what is there */
        done += (size_t)n;
    }
    close(fd);
    buf[done] = '\0';
    *out = buf;
    if (len)
        *len = done;
    return 0;
}

int ps_private_dir_ensure(const char *dir, const char *what, struct ps_error *err)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return ps_error_set(err, PS_EIO, "%s %s is not a directory", what, dir);
        return 0;
    }
    if (errno != ENOENT || mkdir(dir, 0700) != 0)
        return ps_error_set(err, PS_EIO, "cannot create the %s %s: %s", what, dir,
                            strerror(errno));
    return 0;
}

int ps_private_file_create(const char *path, const char *what, struct ps_error *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return ps_error_set(err, PS_EIO, "cannot open %s %s: %s", what, path, strerror(errno));
    close(fd);
    return 0;
}
