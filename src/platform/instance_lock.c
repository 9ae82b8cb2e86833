/* instance_lock.c — machine-wide liveness of agent instances by flock (instance_lock.h). */
#include "platform/instance_lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static bool usable_dir(const char *dir, mode_t mode)
{
    if (mkdir(dir, mode) == 0)
        (void)chmod(dir, mode);     /* whatever the umask */
    else if (errno != EEXIST)
        return false;
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) == 0;
}

const char *ps_instance_lock_dir(void)
{
    if (usable_dir("/run/poolsched", 0755))
        return "/run/poolsched";
    if (usable_dir("/tmp/poolsched-locks", 01777))
        return "/tmp/poolsched-locks";
    return "";
}

static bool lock_path(char *out, size_t size, const char *dir, const char *name)
{
    int n = snprintf(out, size, "%s/%s.lock", dir, name);
    return dir[0] && n > 0 && (size_t)n < size;
}

int ps_instance_lock_take(const char *dir, const char *name, int *fd, struct ps_error *err)
{
    *fd = -1;
    char path[PATH_MAX];
    if (!lock_path(path, sizeof path, dir, name))
        return ps_error_set(err, PS_EIO, "instance lock %s/%s.lock: %s", dir, name,
                            dir[0] ? "path too long" : "no usable lock directory");
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return ps_error_set(err, PS_EIO, "mkdir(%s): %s", dir, strerror(errno));
    /* A sweeper may unlink the file between our open and flock (it took the then free lock):
     * the lock would be on a file nobody finds. So: locked, and still the file at path. */
    for (int attempt = 0; attempt < 5; attempt++) {
        int f = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (f < 0)
            return ps_error_set(err, PS_EIO, "open(%s): %s", path, strerror(errno));
        if (flock(f, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(f);
            if (e == EWOULDBLOCK)
                return ps_error_set(err, PS_ESTATE, "%s is held by another process", path);
            return ps_error_set(err, PS_EIO, "flock(%s): %s", path, strerror(e));
        }
        struct stat held, now;
        if (fstat(f, &held) == 0 && stat(path, &now) == 0 && held.st_ino == now.st_ino &&
            held.st_dev == now.st_dev) {
            *fd = f;
            return 0;
        }
        close(f);
    }
    return ps_error_set(err, PS_EIO, "%s: removed under us again and again", path);
}

bool ps_instance_lock_dead(const char *dir, const char *name, int *fd)
{
    *fd = -1;
    char path[PATH_MAX];
    if (!lock_path(path, sizeof path, dir, name))
        return !dir[0];     /* no lock directory: nobody could have locked */
    int f = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (f < 0)
        return errno == ENOENT;
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
        close(f);
        return false;
    }
    *fd = f;
    return true;
}

void ps_instance_lock_drop(const char *dir, const char *name, int fd, bool remove)
{
    if (fd < 0)
        return;
    char path[PATH_MAX];
    if (remove && lock_path(path, sizeof path, dir, name))
        (void)unlink(path);
    close(fd);
}

void ps_instance_lock_sweep(const char *dir, const char *prefix, const char *keep)
{
    DIR *d = dir[0] ? opendir(dir) : NULL;
    if (!d)
        return;
    size_t pl = strlen(prefix);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (strncmp(de->d_name, prefix, pl) != 0 || n != pl + 16 + 5 ||
            strcmp(de->d_name + n - 5, ".lock") != 0 ||
            strspn(de->d_name + pl, "0123456789abcdef") != 16)
            continue;
        char name[NAME_MAX + 1];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), de->d_name);
        if (keep && strcmp(name, keep) == 0)
            continue;
        int fd = -1;
        if (ps_instance_lock_dead(dir, name, &fd))
            ps_instance_lock_drop(dir, name, fd, true);
    }
    closedir(d);
}
