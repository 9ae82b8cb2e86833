#include "platform/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define DRAIN_LIMIT (1 << 20)   /* bytes taken per stream after stop: a writer that never stops
                                 * must not keep the agent waiting */

struct stream {
    const char *name;
    char path[PATH_MAX];        /* where the file is (or will be) */
    int file_fd;                /* -1 until the first byte to keep arrives (see open_file) */
    int pipe_r;                 /* -1 after end of file */
    int64_t cap, head_cap, tail_cap;
    int64_t total;              /* bytes received */
    int64_t file_bytes;         /* bytes written to the file while not overflowing */
    bool overflow;
    char *ring;                 /* tail_cap bytes, allocated on overflow (NULL: tail lost) */
    int64_t ring_len, ring_pos;
    char error[256];            /* first write error, "" if none */
    bool finalized;
};

/* snprintf into a fixed buffer where truncating a long path in a message is fine. */
static void put(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

struct ps_capture {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_started;
    bool thread_done;           /* the reader left its loop (under mu) */
    bool joined;
    int stop_r, stop_w;
    struct stream s[2];
};

static void set_error(struct stream *s, const char *call, int e)
{
    if (!s->error[0])
        put(s->error, sizeof s->error, "%s(%s): %s", call, s->path, strerror(e));
}

/* Creates the stream's file, on its first byte: most short jobs write nothing, and on a disk
 * file system creating and then unlinking two files per job was most of a job's cost (ext4
 * allocates an inode for each, and without a journal skips every recently freed inode while
 * looking for one, so the cost grows with the job rate). O_EXCL|O_NOFOLLOW as before: nothing
 * planted at the path can redirect the output. As the job may have created a file of that name
 * in its own sandbox before writing output, a taken name moves the capture to <path>.1 .. .9
 * (the capture is read back through its descriptor, so the name only matters to someone looking
 * at a kept sandbox). Returns false with the stream's error set when no file can be made. */
static bool open_file(struct stream *s)
{
    if (s->file_fd >= 0)
        return true;
    if (s->error[0])
        return false;
    char path[PATH_MAX + 8];
    snprintf(path, sizeof path, "%s", s->path);
    for (int i = 1;; i++) {
        s->file_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (s->file_fd >= 0) {
            put(s->path, sizeof s->path, "%s", path);
            return true;
        }
        if (errno != EEXIST || i > 9) {
            set_error(s, "open", errno);
            return false;
        }
        snprintf(path, sizeof path, "%s.%d", s->path, i);
    }
}

static void pwrite_all(struct stream *s, const char *data, size_t n, off_t off)
{
    if (n > 0 && !open_file(s))
        return;
    while (n > 0 && !s->error[0]) {
        ssize_t w = pwrite(s->file_fd, data, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            set_error(s, "write", w < 0 ? errno : EIO);
            return;
        }
        data += w;
        n -= (size_t)w;
        off += w;
    }
}

static void ring_append(struct stream *s, const char *data, size_t n)
{
    if (!s->ring || s->tail_cap == 0)
        return;
    size_t cap = (size_t)s->tail_cap;
    if (n >= cap) {
        memcpy(s->ring, data + (n - cap), cap);
        s->ring_pos = 0;
        s->ring_len = (int64_t)cap;
        return;
    }
    size_t pos = (size_t)s->ring_pos;
    size_t first = cap - pos < n ? cap - pos : n;
    memcpy(s->ring + pos, data, first);
    memcpy(s->ring, data + first, n - first);
    s->ring_pos = (int64_t)((pos + n) % cap);
    s->ring_len = s->ring_len + (int64_t)n > (int64_t)cap ? (int64_t)cap : s->ring_len + (int64_t)n;
}

/* Takes n bytes of output (called with mu held). */
static void sink(struct stream *s, const char *data, size_t n)
{
    s->total += (int64_t)n;
    if (!s->overflow) {
        int64_t room = s->cap - s->file_bytes;
        size_t k = (int64_t)n < room ? n : (size_t)room;
        if (k > 0) {
            pwrite_all(s, data, k, (off_t)s->file_bytes);
            s->file_bytes += (int64_t)k;
        }
        data += k;
        n -= k;
        if (n == 0)
            return;
        /* The cap is reached: from now on keep the head in the file and a ring of the tail,
         * seeded with the part of the file that belongs to the tail. */
        s->overflow = true;
        if (s->tail_cap > 0) {
            s->ring = malloc((size_t)s->tail_cap);
            if (!s->ring) {
                set_error(s, "malloc tail buffer for", ENOMEM);
            } else {
                ssize_t r = pread(s->file_fd, s->ring, (size_t)s->tail_cap, (off_t)s->head_cap);
                s->ring_len = r > 0 ? r : 0;
                s->ring_pos = s->ring_len % s->tail_cap;
            }
        }
    }
    ring_append(s, data, n);
}

/* Writes head + marker + tail (called after the reader is gone). */
static void finalize(struct stream *s)
{
    if (s->finalized)
        return;
    s->finalized = true;
    if (!s->overflow)
        return;
    int64_t kept_tail = s->ring ? s->ring_len : 0;
    int64_t skipped = s->total - s->head_cap - kept_tail;
    char marker[128];
    int mlen = snprintf(marker, sizeof marker, "\n[poolsched: %lld bytes of %s skipped]\n",
                        (long long)skipped, s->name);
    if (!open_file(s))
        return;
    if (ftruncate(s->file_fd, (off_t)s->head_cap) != 0) {
        set_error(s, "ftruncate", errno);
        return;
    }
    off_t off = (off_t)s->head_cap;
    pwrite_all(s, marker, (size_t)mlen, off);
    off += mlen;
    if (kept_tail > 0) {
        /* oldest byte is at ring_pos when the ring is full, at 0 otherwise */
        int64_t start = s->ring_len == s->tail_cap ? s->ring_pos : 0;
        int64_t first = s->ring_len - start;
        pwrite_all(s, s->ring + start, (size_t)first, off);
        pwrite_all(s, s->ring, (size_t)start, off + first);
    }
}

static void read_once(struct ps_capture *c, struct stream *s, char *buf, bool *eof)
{
    *eof = false;
    ssize_t n = read(s->pipe_r, buf, READ_CHUNK);
    if (n > 0) {
        pthread_mutex_lock(&c->mu);
        sink(s, buf, (size_t)n);
        pthread_mutex_unlock(&c->mu);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(s->pipe_r);
        s->pipe_r = -1;
        *eof = true;
    }
}

static void *reader_main(void *arg)
{
    struct ps_capture *c = arg;
    char *buf = malloc(READ_CHUNK);
    bool stop = false;
    while (buf && !stop && (c->s[0].pipe_r >= 0 || c->s[1].pipe_r >= 0)) {
        struct pollfd pfd[3];
        int idx[3];
        int n = 0;
        for (int i = 0; i < 2; i++)
            if (c->s[i].pipe_r >= 0) {
                pfd[n] = (struct pollfd){.fd = c->s[i].pipe_r, .events = POLLIN};
                idx[n++] = i;
            }
        pfd[n] = (struct pollfd){.fd = c->stop_r, .events = POLLIN};
        idx[n++] = -1;
        if (poll(pfd, (nfds_t)n, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int k = 0; k < n; k++) {
            if (!pfd[k].revents)
                continue;
            if (idx[k] < 0) {
                stop = true;
                continue;
            }
            bool eof;
            read_once(c, &c->s[idx[k]], buf, &eof);
        }
    }
    /* Stopped: take what is in the pipes now, up to DRAIN_LIMIT each. */
    for (int i = 0; buf && i < 2; i++) {
        struct stream *s = &c->s[i];
        int64_t before = s->total;
        bool eof = false;
        while (s->pipe_r >= 0 && !eof && s->total - before < DRAIN_LIMIT) {
            int64_t t = s->total;
            read_once(c, s, buf, &eof);
            if (!eof && s->total == t)
                break;      /* EAGAIN: empty */
        }
    }
    free(buf);
    pthread_mutex_lock(&c->mu);
    if (!buf)
        for (int i = 0; i < 2; i++)
            set_error(&c->s[i], "malloc read buffer for", ENOMEM);
    c->thread_done = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int open_stream(struct stream *s, const char *name, const char *path, int64_t cap,
                       int *write_end, struct ps_error *err)
{
    s->name = name;
    s->cap = cap;
    s->tail_cap = cap / 2;
    s->head_cap = cap - s->tail_cap;
    int n = snprintf(s->path, sizeof s->path, "%s", path);
    if (n < 0 || (size_t)n >= sizeof s->path)
        return ps_error_set(err, PS_EINVAL, "%s file path too long", name);
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return ps_error_set(err, PS_EIO, "pipe2 for %s: %s", name, strerror(errno));
    s->pipe_r = p[0];
    *write_end = p[1];
    if (fcntl(s->pipe_r, F_SETFL, O_NONBLOCK) != 0)
        return ps_error_set(err, PS_EIO, "fcntl(O_NONBLOCK) on the %s pipe: %s", name,
                            strerror(errno));
    return 0;
}

static void destroy(struct ps_capture *c)
{
    for (int i = 0; i < 2; i++) {
        close_fd(&c->s[i].file_fd);
        close_fd(&c->s[i].pipe_r);
        free(c->s[i].ring);
    }
    close_fd(&c->stop_r);
    close_fd(&c->stop_w);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

int ps_capture_start(const char *stdout_path, int64_t stdout_cap_bytes, const char *stderr_path,
                     int64_t stderr_cap_bytes, int *stdout_fd, int *stderr_fd,
                     struct ps_capture **out, struct ps_error *err)
{
    *out = NULL;
    *stdout_fd = *stderr_fd = -1;
    if (stdout_cap_bytes < 0 || stderr_cap_bytes < 0)
        return ps_error_set(err, PS_EINVAL, "output caps must be >= 0 (stdout %lld, stderr "
                            "%lld)", (long long)stdout_cap_bytes, (long long)stderr_cap_bytes);
    struct ps_capture *c = calloc(1, sizeof *c);
    if (!c)
        return ps_error_set(err, PS_ENOMEM, "capture: out of memory");
    c->stop_r = c->stop_w = -1;
    for (int i = 0; i < 2; i++)
        c->s[i].file_fd = c->s[i].pipe_r = -1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);

    int rc = open_stream(&c->s[0], "stdout", stdout_path, stdout_cap_bytes, stdout_fd, err);
    if (rc == 0)
        rc = open_stream(&c->s[1], "stderr", stderr_path, stderr_cap_bytes, stderr_fd, err);
    int p[2];
    if (rc == 0 && pipe2(p, O_CLOEXEC) != 0)
        rc = ps_error_set(err, PS_EIO, "pipe2 for the capture's stop signal: %s",
                          strerror(errno));
    if (rc == 0) {
        c->stop_r = p[0];
        c->stop_w = p[1];
        /* The reader takes no signals: they belong to the agent's main thread. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int e = pthread_create(&c->thread, NULL, reader_main, c);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e != 0)
            rc = ps_error_set(err, PS_EIO, "pthread_create for output capture: %s",
                              strerror(e));
        else
            c->thread_started = true;
    }
    if (rc != 0) {
        close_fd(stdout_fd);
        close_fd(stderr_fd);
        destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}

int ps_capture_finish(struct ps_capture *c, int timeout_ms, struct ps_error *err)
{
    if (!c->joined) {
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        int64_t ns = deadline.tv_nsec + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
        deadline.tv_sec += (time_t)(ns / 1000000000);
        deadline.tv_nsec = (long)(ns % 1000000000);
        pthread_mutex_lock(&c->mu);
        while (!c->thread_done)
            if (pthread_cond_timedwait(&c->cv, &c->mu, &deadline) == ETIMEDOUT)
                break;
        pthread_mutex_unlock(&c->mu);
        ssize_t w;
        do
            w = write(c->stop_w, "x", 1);
        while (w < 0 && errno == EINTR);
        pthread_join(c->thread, NULL);
        c->joined = true;
        for (int i = 0; i < 2; i++) {
            close_fd(&c->s[i].pipe_r);
            finalize(&c->s[i]);
        }
    }
    for (int i = 0; i < 2; i++)
        if (c->s[i].error[0])
            return ps_error_set(err, PS_EIO, "%s", c->s[i].error);
    return 0;
}

int64_t ps_capture_total_bytes(struct ps_capture *c, enum ps_capture_stream s)
{
    pthread_mutex_lock(&c->mu);
    int64_t t = c->s[s].total;
    pthread_mutex_unlock(&c->mu);
    return t;
}

bool ps_capture_truncated(struct ps_capture *c, enum ps_capture_stream s)
{
    pthread_mutex_lock(&c->mu);
    bool t = c->s[s].overflow;
    pthread_mutex_unlock(&c->mu);
    return t;
}

int ps_capture_read(struct ps_capture *c, enum ps_capture_stream s, char **data, size_t *len,
                    struct ps_error *err)
{
    *data = NULL;
    *len = 0;
    struct stream *st = &c->s[s];
    pthread_mutex_lock(&c->mu);
    int rc = 0;
    struct stat sb;
    if (st->file_fd < 0) {          /* nothing written yet: no file */
        *data = calloc(1, 1);
        if (!*data)
            rc = ps_error_set(err, PS_ENOMEM, "reading %s: out of memory", st->path);
    } else if (fstat(st->file_fd, &sb) != 0) {
        rc = ps_error_set(err, PS_EIO, "stat(%s): %s", st->path, strerror(errno));
    } else {
        size_t size = (size_t)sb.st_size;
        char *buf = malloc(size + 1);
        size_t got = 0;
        if (!buf)
            rc = ps_error_set(err, PS_ENOMEM, "reading %s: out of memory", st->path);
        while (rc == 0 && got < size) {
            ssize_t n = pread(st->file_fd, buf + got, size - got, (off_t)got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                rc = ps_error_set(err, PS_EIO, "read(%s): %s", st->path, strerror(errno));
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (rc == 0) {
            buf[got] = '\0';
            *data = buf;
            *len = got;
        } else {
            free(buf);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void ps_capture_free(struct ps_capture *c)
{
    if (!c)
        return;
    if (c->thread_started && !c->joined)
        (void)ps_capture_finish(c, 0, NULL);
    destroy(c);
}
