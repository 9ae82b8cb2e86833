#include "platform/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/node_id.h"

/* Removes everything inside the directory dfd (which it closes), staying on device dev. */
static int remove_contents(int dfd, dev_t dev, const char *path, struct ps_error *err)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        return ps_error_set(err, PS_EIO, "fdopendir(%s): %s", path, strerror(e));
    }
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        /* Anything but a directory is unlinked as it is; the type from readdir saves a stat
         * per file where the file system gives it. */
        if (de->d_type != DT_UNKNOWN && de->d_type != DT_DIR) {
            if (unlinkat(dirfd(d), name, 0) != 0 && errno != ENOENT)
                rc = ps_error_set(err, PS_EIO, "unlink(%s/%s): %s", path, name,
                                  strerror(errno));
            continue;
        }
        struct stat st;
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                continue;
            rc = ps_error_set(err, PS_EIO, "stat(%s/%s): %s", path, name, strerror(errno));
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            char sub[PATH_MAX];
            snprintf(sub, sizeof sub, "%s/%s", path, name);
            if (st.st_dev != dev) {
                rc = ps_error_set(err, PS_EIO, "%s is another file system (still mounted?); "
                                  "not removing it", sub);
                continue;
            }
            int cfd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) {
                rc = ps_error_set(err, PS_EIO, "open(%s): %s", sub, strerror(errno));
                continue;
            }
            int r = remove_contents(cfd, dev, sub, err);
            if (r != 0) {
                rc = r;
                continue;
            }
            if (unlinkat(dirfd(d), name, AT_REMOVEDIR) != 0 && errno != ENOENT)
                rc = ps_error_set(err, PS_EIO, "rmdir(%s): %s", sub, strerror(errno));
        } else if (unlinkat(dirfd(d), name, 0) != 0 && errno != ENOENT) {
            rc = ps_error_set(err, PS_EIO, "unlink(%s/%s): %s", path, name, strerror(errno));
        }
    }
    closedir(d);
    return rc;
}

/* Unmounts the sandbox's tmpfs and opens the sandbox, not following a link: 0 with *fd the
 * directory and *st its status, 0 with *fd -1 when the sandbox is gone, else the error. */
static int open_sandbox_dir(const char *sandbox, int *fd, struct stat *st, struct ps_error *err)
{
    *fd = -1;
    int rc = ps_sandbox_unmount_tmpfs(sandbox, err);
    if (rc != 0)
        return rc;
    int d = open(sandbox, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0) {
        if (errno == ENOENT)
            return 0;
        return ps_error_set(err, PS_EIO, "open(%s): %s", sandbox, strerror(errno));
    }
    if (fstat(d, st) != 0) {
        int e = errno;
        close(d);
        return ps_error_set(err, PS_EIO, "stat(%s): %s", sandbox, strerror(e));
    }
    *fd = d;
    return 0;
}

int ps_sandbox_remove(const char *sandbox, struct ps_error *err)
{
    int fd;
    struct stat st;
    int rc = open_sandbox_dir(sandbox, &fd, &st, err);
    if (rc != 0 || fd < 0)
        return rc;
    rc = remove_contents(fd, st.st_dev, sandbox, err);
    if (rc != 0)
        return rc;
    if (rmdir(sandbox) != 0 && errno != ENOENT)
        return ps_error_set(err, PS_EIO, "rmdir(%s): %s", sandbox, strerror(errno));
    return 0;
}

int ps_sandbox_create(const char *work_dir, const char *job_id, bool chown_to, uid_t uid,
                      gid_t gid, char *path, size_t size, struct ps_error *err)
{
    if (!job_id || !ps_node_id_valid(job_id, PS_NODE_JOB_ID_MAX))
        return ps_error_set(err, PS_EINVAL, "sandbox: job id \"%s\" must be 1..128 of "
                            "[A-Za-z0-9._-]", job_id ? job_id : "(null)");
    char root[PATH_MAX];
    int n = snprintf(root, sizeof root, "%s/sandbox", work_dir);
    if (n < 0 || (size_t)n >= sizeof root)
        return ps_error_set(err, PS_EINVAL, "sandbox: work dir path too long");
    n = snprintf(path, size, "%s/%s", root, job_id);
    if (n < 0 || (size_t)n >= size)
        return ps_error_set(err, PS_EINVAL, "sandbox: path of job %s too long", job_id);
    /* The common case first: root exists and no leftover is in the way (one mkdir). */
    if (mkdir(path, 0700) != 0) {
        if (errno == ENOENT && mkdir(root, 0755) != 0 && errno != EEXIST)
            return ps_error_set(err, PS_EIO, "mkdir(%s): %s", root, strerror(errno));
        int rc = ps_sandbox_remove(path, err);     /* a leftover of a crashed agent */
        if (rc != 0)
            return rc;
        if (mkdir(path, 0700) != 0)
            return ps_error_set(err, PS_EIO, "mkdir(%s): %s", path, strerror(errno));
    }
    /* mkdir applies the umask. 0700: only the job's user (and root) may enter; the jobs of
     * other slots, each a uid of its own, may not. */
    if (chmod(path, 0700) != 0)
        return ps_error_set(err, PS_EIO, "chmod(%s): %s", path, strerror(errno));
    if (chown_to && chown(path, uid, gid) != 0)
        return ps_error_set(err, PS_EIO, "chown(%s, %d:%d): %s", path, (int)uid, (int)gid,
                            strerror(errno));
    return 0;
}

int ps_sandbox_mount_tmpfs(const char *sandbox, int64_t size_bytes, uid_t uid, gid_t gid,
                           struct ps_error *err)
{
    if (size_bytes <= 0)
        return ps_error_set(err, PS_EINVAL, "tmpfs size %lld must be positive",
                            (long long)size_bytes);
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/tmpfs", sandbox);
    if (n < 0 || (size_t)n >= sizeof path)
        return ps_error_set(err, PS_EINVAL, "tmpfs: path too long");
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return ps_error_set(err, PS_EIO, "mkdir(%s): %s", path, strerror(errno));
    char opts[128];
    snprintf(opts, sizeof opts, "size=%lld,mode=0700,uid=%d,gid=%d", (long long)size_bytes,
             (int)uid, (int)gid);
    if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0) {
        int e = errno;
        (void)rmdir(path);
        return ps_error_set(err, e == EPERM ? PS_EPERM : PS_EIO,
                            "mount tmpfs (%s) at %s: %s%s", opts, path, strerror(e),
                            e == EPERM ? " (mounting needs root)" : "");
    }
    return 0;
}

int ps_sandbox_unmount_tmpfs(const char *sandbox, struct ps_error *err)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/tmpfs", sandbox);
    if (n < 0 || (size_t)n >= sizeof path)
        return ps_error_set(err, PS_EINVAL, "tmpfs: path too long");
    struct stat st, parent;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || stat(sandbox, &parent) != 0 ||
        st.st_dev == parent.st_dev)
        return 0;   /* nothing mounted there */
    if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) != 0)
        return ps_error_set(err, PS_EIO, "umount(%s): %s", path, strerror(errno));
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Reuse of emptied sandboxes (sandbox.h says why)
 * ------------------------------------------------------------------------------------------- */

#define PARKED_PREFIX "+free-"

struct ps_sandbox_pool {
    char root[PATH_MAX];        /* <work_dir>/sandbox */
    int capacity, count;
    unsigned *parked;           /* suffixes of the parked +free-<n> directories */
    unsigned next;
};

static bool parked_path(const struct ps_sandbox_pool *pool, unsigned n, char *out, size_t size)
{
    int len = snprintf(out, size, "%s/" PARKED_PREFIX "%u", pool->root, n);
    return len > 0 && (size_t)len < size;
}

int ps_sandbox_pool_new(const char *work_dir, int capacity, struct ps_sandbox_pool **out,
                        struct ps_error *err)
{
    *out = NULL;
    if (capacity < 0 || capacity > 256)
        return ps_error_set(err, PS_EINVAL, "sandbox pool: capacity %d not in 0..256",
                            capacity);
    struct ps_sandbox_pool *pool = calloc(1, sizeof *pool);
    if (!pool || !(pool->parked = calloc((size_t)capacity + 1, sizeof *pool->parked))) {
        free(pool);
        return ps_error_set(err, PS_ENOMEM, "sandbox pool: out of memory");
    }
    pool->capacity = capacity;
    int n = snprintf(pool->root, sizeof pool->root, "%s/sandbox", work_dir);
    if (n < 0 || (size_t)n >= sizeof pool->root - 32) {
        ps_sandbox_pool_free(pool);
        return ps_error_set(err, PS_EINVAL, "sandbox: work dir path too long");
    }
    /* Leftovers of an earlier agent: empty directories, unless it died while emptying one. */
    int rc = 0;
    DIR *d = opendir(pool->root);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, PARKED_PREFIX, strlen(PARKED_PREFIX)) != 0)
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", pool->root, de->d_name);
        int r = ps_sandbox_remove(path, err);
        if (rc == 0)
            rc = r;
    }
    if (d)
        closedir(d);
    if (rc != 0) {
        ps_sandbox_pool_free(pool);
        return rc;
    }
    *out = pool;
    return 0;
}

void ps_sandbox_pool_free(struct ps_sandbox_pool *pool)
{
    if (!pool)
        return;
    char path[PATH_MAX];
    while (pool->count > 0)
        if (parked_path(pool, pool->parked[--pool->count], path, sizeof path))
            (void)rmdir(path);
    free(pool->parked);
    free(pool);
}

int ps_sandbox_acquire(struct ps_sandbox_pool *pool, const char *work_dir, const char *job_id,
                       bool chown_to, uid_t uid, gid_t gid, char *path, size_t size,
                       struct ps_error *err)
{
    if (!pool || pool->count == 0 || !job_id || !ps_node_id_valid(job_id, PS_NODE_JOB_ID_MAX))
        return ps_sandbox_create(work_dir, job_id, chown_to, uid, gid, path, size, err);
    int n = snprintf(path, size, "%s/%s", pool->root, job_id);
    if (n < 0 || (size_t)n >= size)
        return ps_error_set(err, PS_EINVAL, "sandbox: path of job %s too long", job_id);
    while (pool->count > 0) {
        char parked[PATH_MAX];
        if (!parked_path(pool, pool->parked[--pool->count], parked, sizeof parked))
            continue;
        int r = renameat2(AT_FDCWD, parked, AT_FDCWD, path, RENAME_NOREPLACE);
        if (r != 0 && errno == EEXIST) {    /* a leftover of a crashed agent */
            int rc = ps_sandbox_remove(path, err);
            if (rc != 0) {
                (void)rmdir(parked);
                return rc;
            }
            r = renameat2(AT_FDCWD, parked, AT_FDCWD, path, RENAME_NOREPLACE);
        }
        if (r != 0) {
            (void)rmdir(parked);
            continue;
        }
        /* Parked directories are the agent's, mode 0700 (ps_sandbox_release); the mode is
         * set again anyway, so a reused sandbox is never more open than a new one. */
        if (chmod(path, 0700) != 0)
            return ps_error_set(err, PS_EIO, "chmod(%s): %s", path, strerror(errno));
        if (chown_to && chown(path, uid, gid) != 0)
            return ps_error_set(err, PS_EIO, "chown(%s, %d:%d): %s", path, (int)uid, (int)gid,
                                strerror(errno));
        return 0;
    }
    return ps_sandbox_create(work_dir, job_id, chown_to, uid, gid, path, size, err);
}

int ps_sandbox_release(struct ps_sandbox_pool *pool, const char *sandbox, struct ps_error *err)
{
    if (!pool || pool->count >= pool->capacity)
        return ps_sandbox_remove(sandbox, err);
    int fd;
    struct stat st;
    int rc = open_sandbox_dir(sandbox, &fd, &st, err);
    if (rc != 0 || fd < 0)
        return rc;
    /* Take the directory back first: once it is the agent's with mode 0700, no process of the
     * job's user can add entries to it, so emptied means empty. */
    uid_t me = geteuid();
    gid_t my_gid = getegid();
    if (st.st_uid != me && fchown(fd, me, my_gid) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, PS_EIO, "chown(%s): %s", sandbox, strerror(e));
    }
    if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, PS_EIO, "chmod(%s): %s", sandbox, strerror(e));
    }
    rc = remove_contents(fd, st.st_dev, sandbox, err);
    if (rc != 0)
        return rc;
    unsigned n = pool->next++;
    char parked[PATH_MAX];
    /* rename replaces an empty leftover of the same name; anything else: remove instead */
    if (!parked_path(pool, n, parked, sizeof parked) || rename(sandbox, parked) != 0) {
        if (rmdir(sandbox) != 0 && errno != ENOENT)
            return ps_error_set(err, PS_EIO, "rmdir(%s): %s", sandbox, strerror(errno));
        return 0;
    }
    pool->parked[pool->count++] = n;
    return 0;
}
