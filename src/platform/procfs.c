#include "platform/procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A cursor over a buffer that is not NUL-terminated. */
struct cursor {
    const char *p;
    const char *end;
};

static void skip_spaces(struct cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
        c->p++;
}

/* An unsigned decimal; false when there is none or it overflows. */
static bool take_u64(struct cursor *c, uint64_t *out)
{
    skip_spaces(c);
    const char *start = c->p;
    uint64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        c->p++;
    }
    if (c->p == start)
        return false;
    *out = v;
    return true;
}

/* A signed decimal (the kernel prints -1 for some fields). */
static bool take_i64(struct cursor *c, int64_t *out)
{
    skip_spaces(c);
    bool neg = c->p < c->end && *c->p == '-';
    if (neg)
        c->p++;
    uint64_t v;
    if (!take_u64(c, &v) || v > (uint64_t)INT64_MAX)
        return false;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

static bool take_pid(struct cursor *c, pid_t *out)
{
    int64_t v;
    if (!take_i64(c, &v) || v < INT_MIN || v > INT_MAX)
        return false;
    *out = (pid_t)v;
    return true;
}

/* Skips one space-separated field. */
static bool skip_field(struct cursor *c)
{
    skip_spaces(c);
    const char *start = c->p;
    while (c->p < c->end && *c->p != ' ' && *c->p != '\n')
        c->p++;
    return c->p > start;
}

int ps_procfs_parse_stat(const char *buf, size_t len, struct ps_procfs_stat *out,
                         struct ps_error *err)
{
    memset(out, 0, sizeof *out);
    struct cursor c = {buf, buf + len};
    if (!take_pid(&c, &out->pid))
        return ps_error_set(err, PS_EINVAL, "/proc stat: no pid at the start");
    /* The command name is "(...)" and may itself hold ") ": the fields resume after the last
     * ')' in the line. */
    const char *close = NULL;
    for (const char *q = c.p; q < c.end; q++)
        if (*q == ')')
            close = q;
    if (!close)
        return ps_error_set(err, PS_EINVAL, "/proc stat of pid %d: no ')' after the command name",
                            (int)out->pid);
    c.p = close + 1;
    skip_spaces(&c);
    if (c.p >= c.end || !isalpha((unsigned char)*c.p))
        return ps_error_set(err, PS_EINVAL, "/proc stat of pid %d: no state letter",
                            (int)out->pid);
    out->state = *c.p++;
    /* Fields 4..22 of proc(5): ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
     * cmajflt utime stime cutime cstime priority nice num_threads itrealvalue starttime. */
    int64_t cutime, cstime;
    bool ok = take_pid(&c, &out->ppid) && take_pid(&c, &out->pgrp) &&
              take_pid(&c, &out->session);
    for (int i = 0; ok && i < 7; i++)       /* tty_nr tpgid flags minflt cminflt majflt cmajflt */
        ok = skip_field(&c);
    ok = ok && take_u64(&c, &out->utime_ticks) && take_u64(&c, &out->stime_ticks) &&
         take_i64(&c, &cutime) && take_i64(&c, &cstime);
    for (int i = 0; ok && i < 4; i++)       /* priority nice num_threads itrealvalue */
        ok = skip_field(&c);
    ok = ok && take_u64(&c, &out->starttime_ticks);
    if (!ok)
        return ps_error_set(err, PS_EINVAL, "/proc stat of pid %d: a numeric field between "
                            "ppid and starttime is missing or malformed", (int)out->pid);
    out->cutime_ticks = cutime > 0 ? (uint64_t)cutime : 0;
    out->cstime_ticks = cstime > 0 ? (uint64_t)cstime : 0;
    return 0;
}

int ps_procfs_parse_kb_field(const char *buf, size_t len, const char *key, int64_t *bytes,
                             struct ps_error *err)
{
    size_t klen = strlen(key);
    const char *end = buf + len;
    for (const char *line = buf; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *line_end = nl ? nl : end;
        if ((size_t)(line_end - line) > klen && memcmp(line, key, klen) == 0 &&
            line[klen] == ':') {
            struct cursor c = {line + klen + 1, line_end};
            uint64_t kb;
            if (!take_u64(&c, &kb) || kb > (uint64_t)INT64_MAX / 1024)
                return ps_error_set(err, PS_EINVAL, "%s: the value is not a number of kB", key);
            skip_spaces(&c);
            if (line_end - c.p < 2 || memcmp(c.p, "kB", 2) != 0)
                return ps_error_set(err, PS_EINVAL, "%s: the value is not in kB", key);
            *bytes = (int64_t)kb * 1024;
            return 0;
        }
        line = nl ? nl + 1 : end;
    }
    return ps_error_set(err, PS_ENOENT, "%s: no such field", key);
}

int ps_procfs_read_small(const char *path, char *buf, size_t size, size_t *len,
                         struct ps_error *err)
{
    *len = 0;
    if (size == 0)
        return ps_error_set(err, PS_EINVAL, "%s: no buffer to read into", path);
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return ps_error_set(err, (e == ENOENT || e == ESRCH) ? PS_ENOENT : PS_EIO,
                            "open(%s): %s", path, strerror(e));
    }
    size_t used = 0;
    while (used < size - 1) {
        ssize_t n = read(fd, buf + used, size - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            buf[0] = '\0';
            /* A process that exits while we read gives ESRCH. */
            return ps_error_set(err, e == ESRCH ? PS_ENOENT : PS_EIO, "read(%s): %s", path,
                                strerror(e));
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    buf[used] = '\0';
    *len = used;
    return 0;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* Calls visit(ctx, pid, stat) for every process in pgrp pgid. */
typedef void (*visit_fn)(void *ctx, const char *proc_root, const struct ps_procfs_stat *st);

static int scan_group(const char *proc_root, pid_t pgid, visit_fn visit, void *ctx,
                      struct ps_error *err)
{
    if (pgid <= 0)
        return ps_error_set(err, PS_EINVAL, "process group %d: must be positive", (int)pgid);
    DIR *d = opendir(proc_root);
    if (!d)
        return ps_error_set(err, PS_EIO, "opendir(%s): %s", proc_root, strerror(errno));
    struct dirent *de;
    char path[PATH_MAX];
    char buf[1024];
    while ((de = readdir(d)) != NULL) {
        if (!all_digits(de->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s/stat", proc_root, de->d_name);
        size_t len;
        if (ps_procfs_read_small(path, buf, sizeof buf, &len, NULL) != 0)
            continue;   /* exited meanwhile */
        struct ps_procfs_stat st;
        if (ps_procfs_parse_stat(buf, len, &st, NULL) != 0 || st.pgrp != pgid)
            continue;
        visit(ctx, proc_root, &st);
    }
    closedir(d);
    return 0;
}

static void add_usage(void *ctx, const char *proc_root, const struct ps_procfs_stat *st)
{
    struct ps_procfs_group_usage *u = ctx;
    long tck = sysconf(_SC_CLK_TCK);
    if (tck <= 0)
        tck = 100;
    if (st->state != 'Z' && st->state != 'X')
        u->process_count++;
    uint64_t ticks = st->utime_ticks + st->stime_ticks + st->cutime_ticks + st->cstime_ticks;
    u->cpu_seconds += (double)ticks / (double)tck;
    char path[PATH_MAX];
    char buf[4096];
    size_t len;
    snprintf(path, sizeof path, "%s/%d/status", proc_root, (int)st->pid);
    if (ps_procfs_read_small(path, buf, sizeof buf, &len, NULL) != 0)
        return;
    int64_t v;
    if (ps_procfs_parse_kb_field(buf, len, "VmRSS", &v, NULL) == 0)
        u->rss_bytes += v;
    if (ps_procfs_parse_kb_field(buf, len, "VmHWM", &v, NULL) == 0 &&
        v > u->max_process_hwm_bytes)
        u->max_process_hwm_bytes = v;
}

int ps_procfs_group_usage(const char *proc_root, pid_t pgid, struct ps_procfs_group_usage *out,
                          struct ps_error *err)
{
    memset(out, 0, sizeof *out);
    return scan_group(proc_root, pgid, add_usage, out, err);
}

struct pid_list {
    pid_t *pids;
    int max;
    int count;
};

static void add_pid(void *ctx, const char *proc_root, const struct ps_procfs_stat *st)
{
    struct pid_list *l = ctx;
    if (st->state == 'Z' || st->state == 'X')
        return;     /* already dead, waiting for a parent (often init) to reap it */
    if (l->count < l->max)
        l->pids[l->count] = st->pid;
    l->count++;
}

int ps_procfs_group_pids(const char *proc_root, pid_t pgid, pid_t *pids, int max,
                         struct ps_error *err)
{
    struct pid_list l = {pids, max < 0 ? 0 : max, 0};
    int rc = scan_group(proc_root, pgid, add_pid, &l, err);
    return rc != 0 ? rc : l.count;
}

int ps_procfs_meminfo(const char *proc_root, int64_t *total_bytes, int64_t *available_bytes,
                      struct ps_error *err)
{
    char path[PATH_MAX];
    char buf[8192];
    size_t len;
    snprintf(path, sizeof path, "%s/meminfo", proc_root);
    int rc = ps_procfs_read_small(path, buf, sizeof buf, &len, err);
    if (rc != 0)
        return rc;
    rc = ps_procfs_parse_kb_field(buf, len, "MemTotal", total_bytes, err);
    if (rc == 0)
        rc = ps_procfs_parse_kb_field(buf, len, "MemAvailable", available_bytes, err);
    if (rc != 0)
        ps_error_prefix(err, "%s", path);
    return rc;
}

int ps_procfs_process_cpu(pid_t pid, double *self_seconds, double *children_seconds,
                          struct ps_error *err)
{
    char path[64], buf[4096];
    size_t len;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    struct ps_procfs_stat st;
    int rc = ps_procfs_read_small(path, buf, sizeof buf, &len, err);
    if (rc == 0)
        rc = ps_procfs_parse_stat(buf, len, &st, err);
    if (rc != 0)
        return rc;
    long tck = sysconf(_SC_CLK_TCK);
    if (tck <= 0)
        tck = 100;
    *self_seconds = (double)(st.utime_ticks + st.stime_ticks) / (double)tck;
    *children_seconds = (double)(st.cutime_ticks + st.cstime_ticks) / (double)tck;
    return 0;
}

void ps_procfs_cpu_model(const char *proc_root, char *out, size_t size)
{
    char path[512], buf[16384];
    size_t len;
    out[0] = '\0';
    snprintf(path, sizeof path, "%s/cpuinfo", proc_root);
    if (size == 0 || ps_procfs_read_small(path, buf, sizeof buf, &len, NULL) != 0)
        return;
    for (char *line = buf; line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            const char *v = colon + 1 + strspn(colon + 1, " \t");
            snprintf(out, size, "%s", v);
            return;
        }
        line = next;
    }
}
