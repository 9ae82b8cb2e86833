/* cgroup_util.c — the file helpers of the cgroup code and the start-up sweep of what earlier
 * agents left (cgroup_impl.h). */
#include "platform/cgroup_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform/instance_lock.h"
#include "platform/procfs.h"

void ps_cg_put(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

bool ps_cg_path_join(char *out, size_t size, const char *a, const char *b)
{
    int n = snprintf(out, size, "%s/%s", a, b);
    return n >= 0 && (size_t)n < size;
}

bool ps_cg_path_copy(char *out, size_t size, const char *path)
{
    size_t n = strlen(path);
    if (n >= size)
        return false;
    memcpy(out, path, n + 1);
    return true;
}

int64_t ps_cg_monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ps_cg_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Writes value to dir/name. Returns 0 or the errno; sets err when given. */
int ps_cg_write_file(const char *dir, const char *name, const char *value, struct ps_error *err)
{
    char path[PATH_MAX];
    if (!ps_cg_path_join(path, sizeof path, dir, name)) {
        ps_error_set(err, PS_EIO, "%s/%s: path too long", dir, name);
        return ENAMETOOLONG;
    }
    /* O_TRUNC is a no-op on cgroupfs and makes a fake tree of plain files behave. */
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        ps_error_set(err, PS_EIO, "open(%s): %s", path, strerror(e));
        return e;
    }
    size_t len = strlen(value);
    ssize_t n = write(fd, value, len);
    int e = n < 0 ? errno : (size_t)n != len ? EIO : 0;
    close(fd);
    if (e != 0)
        ps_error_set(err, PS_EIO, "write(%s, \"%s\"): %s", path, value, strerror(e));
    return e;
}

int ps_cg_read_file(const char *dir, const char *name, char *buf, size_t size, size_t *len,
                     struct ps_error *err)
{
    char path[PATH_MAX];
    if (!ps_cg_path_join(path, sizeof path, dir, name))
        return ps_error_set(err, PS_EIO, "%s/%s: path too long", dir, name);
    return ps_procfs_read_small(path, buf, size, len, err);
}

bool ps_cg_file_exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    return ps_cg_path_join(path, sizeof path, dir, name) && access(path, F_OK) == 0;
}

/* The pids in dir/cgroup.procs; returns how many were stored (at most max) or a negative code;
 * *total receives how many there are. */
int ps_cg_read_procs(const char *dir, pid_t *pids, int max, int *total, struct ps_error *err)
{
    char buf[65536];
    size_t len;
    *total = 0;
    int rc = ps_cg_read_file(dir, "cgroup.procs", buf, sizeof buf, &len, err);
    if (rc != 0)
        return rc;
    int stored = 0;
    char *p = buf;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        if (v > 0) {
            if (stored < max)
                pids[stored++] = (pid_t)v;
            (*total)++;
        }
        p = end;
        while (*p == '\n')
            p++;
    }
    return stored;
}

/* SIGKILLs everything in dir until cgroup.procs is empty or timeout_ms passes. */
int ps_cg_kill_dir(const char *dir, bool use_cgroup_kill, int timeout_ms, struct ps_error *err)
{
    int64_t deadline = ps_cg_monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    if (use_cgroup_kill)
        (void)ps_cg_write_file(dir, "cgroup.kill", "1", NULL);   /* falls back to the loop below */
    pid_t pids[512];
    for (;;) {
        int total;
        int n = ps_cg_read_procs(dir, pids, 512, &total, err);
        if (n < 0)
            return n;
        if (total == 0)
            return 0;
        for (int i = 0; i < n; i++)
            (void)kill(pids[i], SIGKILL);
        if (ps_cg_monotonic_ms() >= deadline)
            return ps_error_set(err, PS_ESTATE, "%s still has %d processes after SIGKILL", dir,
                                total);
        ps_cg_sleep_ms(2);
    }
}

/* rmdir, retrying on EBUSY (processes that were just killed may still be exiting). */
int ps_cg_remove_dir(const char *dir, int timeout_ms, struct ps_error *err)
{
    int64_t deadline = ps_cg_monotonic_ms() + timeout_ms;
    for (;;) {
        if (rmdir(dir) == 0 || errno == ENOENT)
            return 0;
        int e = errno;
        if (e != EBUSY || ps_cg_monotonic_ms() >= deadline)
            return ps_error_set(err, PS_EIO, "rmdir(%s): %s", dir, strerror(e));
        ps_cg_sleep_ms(5);
    }
}

bool ps_cg_word_in(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += wl) {
        bool start = p == list || p[-1] == ' ' || p[-1] == '\n';
        bool end = p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\n';
        if (start && end)
            return true;
    }
    return false;
}

bool ps_cg_make_dir(const char *dir, bool *created, char *why, size_t why_size)
{
    if (mkdir(dir, 0755) == 0) {
        *created = true;
        return true;
    }
    if (errno == EEXIST)
        return true;
    ps_cg_put(why, why_size, "mkdir(%s): %s", dir, strerror(errno));
    return false;
}

/* The usage files of a job, opened once and re-read with pread (cgroup_impl.h). */
/* read_file on a file of the job, through its kept descriptor. */
static int job_read_file(struct ps_cgroup_job *job, const char *dir, const char *name, char *buf,
                         size_t size, size_t *len, struct ps_error *err)
{
    struct read_fd *r = NULL;
    for (int i = 0; i < job->rfd_count && !r; i++)
        if (job->rfd[i].dir == dir && strcmp(job->rfd[i].name, name) == 0)
            r = &job->rfd[i];
    if (!r) {
        char path[PATH_MAX];
        int fd = -1;
        if (job->rfd_count < (int)(sizeof job->rfd / sizeof job->rfd[0]) &&
            ps_cg_path_join(path, sizeof path, dir, name))
            fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)     /* no room, or let read_file say why */
            return ps_cg_read_file(dir, name, buf, size, len, err);
        r = &job->rfd[job->rfd_count++];
        *r = (struct read_fd){dir, name, fd};
    }
    size_t used = 0;
    while (used < size - 1) {
        ssize_t n = pread(r->fd, buf + used, size - 1 - used, (off_t)used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            buf[0] = '\0';
            *len = 0;
            return ps_error_set(err, PS_EIO, "read(%s/%s): %s", dir, name, strerror(errno));
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    buf[used] = '\0';
    *len = used;
    return 0;
}

int ps_cg_job_read_int(struct ps_cgroup_job *job, const char *dir, const char *name,
                       int64_t *value, struct ps_error *err)
{
    char buf[64];
    size_t len;
    int rc = job_read_file(job, dir, name, buf, sizeof buf, &len, err);
    if (rc != 0)
        return rc;
    if (ps_cgroup_parse_int(buf, len, value) != 0)
        return ps_error_set(err, PS_EIO, "%s/%s: not an integer: \"%.40s\"", dir, name, buf);
    return 0;
}

int ps_cg_job_read_key(struct ps_cgroup_job *job, const char *dir, const char *name,
                       const char *key, int64_t *value, struct ps_error *err)
{
    char buf[4096];
    size_t len;
    int rc = job_read_file(job, dir, name, buf, sizeof buf, &len, err);
    if (rc != 0)
        return rc;
    rc = ps_cgroup_parse_key_value(buf, len, key, value);
    if (rc == PS_ENOENT) {
        *value = -1;
        return 0;
    }
    if (rc != 0)
        return ps_error_set(err, PS_EIO, "%s/%s: \"%s\" is not an integer", dir, name, key);
    return 0;
}

void ps_cg_job_close_reads(struct ps_cgroup_job *job)
{
    for (int i = 0; i < job->rfd_count; i++)
        close(job->rfd[i].fd);
    job->rfd_count = 0;
}

/* Writes value to dir/name unless it is `last` (what was written there before); remembers it. */
int ps_cg_write_changed(const char *dir, const char *name, const char *value, char *last,
                        size_t last_size, struct ps_error *err)
{
    if (last[0] && strcmp(last, value) == 0)
        return 0;
    last[0] = '\0';
    if (ps_cg_write_file(dir, name, value, err) != 0)
        return PS_EIO;
    snprintf(last, last_size, "%s", value);
    return 0;
}

/* Kills and removes job-* cgroups under parent (left by an earlier agent). */
void ps_cg_remove_stale(const char *parent, bool v2)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *de;
    char path[PATH_MAX];
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "job-", 4) != 0 || !ps_cg_path_join(path, sizeof path, parent,
                                                               de->d_name))
            continue;
        (void)ps_cg_kill_dir(path, v2, 1000, NULL);
        (void)ps_cg_remove_dir(path, 200, NULL);
    }
    closedir(d);
}

/* True when dir or any cgroup below it holds a process. */
static bool populated(const char *dir, int depth)
{
    int total = 0;
    pid_t dummy[1];
    if (ps_cg_read_procs(dir, dummy, 0, &total, NULL) < 0 || total > 0 || depth > 4)
        return total > 0;
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool any = false;
    struct dirent *de;
    char path[PATH_MAX];
    while (!any && (de = readdir(d)) != NULL)
        if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
            ps_cg_path_join(path, sizeof path, dir, de->d_name))
            any = populated(path, depth + 1);
    closedir(d);
    return any;
}

/* Removes dir and the (empty) cgroups below it; best effort. */
static void remove_tree(const char *dir, int depth)
{
    DIR *d = depth < 4 ? opendir(dir) : NULL;
    if (d) {
        struct dirent *de;
        char path[PATH_MAX];
        while ((de = readdir(d)) != NULL)
            if (de->d_type == DT_DIR && de->d_name[0] != '.' &&
                ps_cg_path_join(path, sizeof path, dir, de->d_name))
                remove_tree(path, depth + 1);
        closedir(d);
    }
    (void)rmdir(dir);
}

static bool is_instance_suffix(const char *s)
{
    if (strlen(s) != 16)
        return false;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

/* Removes what earlier agents with this node id left beside parent: poolsched-<node_id> (the
 * name before instance ids) and poolsched-<node_id>-<16 hex>, but only when the instance is dead
 * (its lock is free or was never made: instance_lock.h) and no process lives in them. A live
 * agent with the same node id (two clusters on one machine, or a second agent the scheduler
 * refuses) keeps its cgroups even while idle between jobs; a dead agent's guard still sweeping
 * holds the lock too (job_guard.h). Nothing is ever killed from here. */
void ps_cg_remove_stale_instances(struct ps_cgroup_system *sys, const char *parent)
{
    char above[PATH_MAX];
    snprintf(above, sizeof above, "%s", parent);
    char *slash = strrchr(above, '/');
    if (!slash)
        return;
    *slash = '\0';
    char legacy[96], prefix[96];
    snprintf(legacy, sizeof legacy, "poolsched-%s", sys->node_id);
    snprintf(prefix, sizeof prefix, "poolsched-%s-", sys->node_id);
    DIR *d = opendir(above);
    if (!d)
        return;
    struct dirent *de;
    char path[PATH_MAX];
    while ((de = readdir(d)) != NULL) {
        bool ours = strcmp(de->d_name, legacy) == 0 ||
                    (strncmp(de->d_name, prefix, strlen(prefix)) == 0 &&
                     is_instance_suffix(de->d_name + strlen(prefix)));
        if (!ours || strcmp(de->d_name, sys->name) == 0 ||
            !ps_cg_path_join(path, sizeof path, above, de->d_name))
            continue;
        int fd = -1;
        if (!ps_instance_lock_dead(sys->lock_dir, de->d_name, &fd))
            continue;
        bool gone = false;
        if (!populated(path, 0)) {
            remove_tree(path, 0);
            gone = access(path, F_OK) != 0;
        }
        ps_instance_lock_drop(sys->lock_dir, de->d_name, fd, gone);
    }
    closedir(d);
}

int ps_cgroup_sweep_jobs(const char *parent, bool v2, int timeout_ms, bool remove)
{
    DIR *d = opendir(parent);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *de;
    char path[PATH_MAX];
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "job-", 4) != 0 ||
            !ps_cg_path_join(path, sizeof path, parent, de->d_name))
            continue;
        int total = 0;
        pid_t dummy[1];
        (void)ps_cg_read_procs(path, dummy, 0, &total, NULL);
        found += total;
        (void)ps_cg_kill_dir(path, v2, timeout_ms, NULL);
        if (remove)
            (void)ps_cg_remove_dir(path, 200, NULL);
    }
    closedir(d);
    return found;
}
