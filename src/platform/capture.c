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
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define DRAIN_LIMIT (1 << 20)   /* bytes taken per stream after stop: a writer that never stops
                                 * must not keep the agent waiting */

struct ps_capture;

struct stream {
    struct ps_capture *owner;
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
    pthread_mutex_t mu;         /* the streams' data, between the loop and the caller */
    pthread_cond_t cv;
    bool registered;            /* the pipes are in the loop's epoll set */
    bool released;              /* the loop has let go of the capture (under mu): both pipes
                                 * reached end of file, or a stop request was served */
    bool stop_queued;           /* on the loop's stop list (under the loop's mu) */
    bool finished;              /* finish ran: pipes closed, final layout written */
    struct ps_capture *next_stop;
    struct stream s[2];
};

/* The one capture loop of the process: a thread reading every capture's pipes through one
 * epoll set. Started on the first capture and kept for the life of the process (an agent runs
 * jobs until it exits). Only the loop thread reads the pipes, closes them, or takes them out
 * of the epoll set, so an event it holds never names a closed or reused descriptor. */
static struct {
    pthread_once_t once;
    int start_error;            /* errno of the failed setup, 0 when the loop runs */
    const char *start_call;
    pthread_mutex_t mu;         /* guards stops and every capture's stop_queued; taken before
                                 * a capture's mu, never after */
    int epfd, wake_fd;
    struct ps_capture *stops;   /* captures whose pipes the loop is to drain and drop */
} loop = {.once = PTHREAD_ONCE_INIT, .epfd = -1, .wake_fd = -1,
          .mu = PTHREAD_MUTEX_INITIALIZER};

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

/* One read from the stream's pipe (the loop thread only). Returns false at end of file or on
 * a read error, after taking the pipe out of the epoll set and closing it. */
static bool read_once(struct stream *s, char *buf)
{
    ssize_t n = read(s->pipe_r, buf, READ_CHUNK);
    if (n > 0) {
        pthread_mutex_lock(&s->owner->mu);
        sink(s, buf, (size_t)n);
        pthread_mutex_unlock(&s->owner->mu);
        return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return true;
    (void)epoll_ctl(loop.epfd, EPOLL_CTL_DEL, s->pipe_r, NULL);
    close(s->pipe_r);
    s->pipe_r = -1;
    return false;
}

/* Lets the caller have the capture (the loop thread only): after this the loop never touches
 * it again, and finish may free it. */
static void release(struct ps_capture *c)
{
    pthread_mutex_lock(&c->mu);
    c->released = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* Serves the stop requests: takes what is in each pipe now, up to DRAIN_LIMIT per stream (a
 * writer that never stops must not keep the loop), then drops the pipes. */
static void serve_stops(char *buf)
{
    uint64_t v;
    while (read(loop.wake_fd, &v, sizeof v) < 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&loop.mu);
    struct ps_capture *list = loop.stops;
    loop.stops = NULL;
    pthread_mutex_unlock(&loop.mu);
    while (list) {
        struct ps_capture *c = list;
        list = c->next_stop;
        for (int i = 0; i < 2; i++) {
            struct stream *s = &c->s[i];
            int64_t before = s->total;
            while (s->pipe_r >= 0 && s->total - before < DRAIN_LIMIT) {
                int64_t t = s->total;
                if (read_once(s, buf) && s->total == t)
                    break;      /* empty for now */
            }
            if (s->pipe_r >= 0) {
                (void)epoll_ctl(loop.epfd, EPOLL_CTL_DEL, s->pipe_r, NULL);
                close(s->pipe_r);
                s->pipe_r = -1;
            }
        }
        release(c);
    }
}

#define MAX_EVENTS 64

static void *loop_main(void *arg)
{
    char *buf = arg;
    struct epoll_event ev[MAX_EVENTS];
    for (;;) {
        int n = epoll_wait(loop.epfd, ev, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            /* cannot happen with a valid epfd and buffer; do not spin */
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 10000000};
            nanosleep(&ts, NULL);
            continue;
        }
        /* Pairs with the registration under loop.mu: what ps_capture_start wrote before it
         * happens before this round reads it (a handoff through epoll alone is no ordering in
         * the memory model). */
        pthread_mutex_lock(&loop.mu);
        pthread_mutex_unlock(&loop.mu);
        bool wake = false;
        for (int k = 0; k < n; k++) {
            struct stream *s = ev[k].data.ptr;
            if (!s) {
                wake = true;
                continue;
            }
            /* one read per ready pipe per round: a chatty job cannot starve the others */
            if (s->pipe_r >= 0 && !read_once(s, buf)) {
                struct ps_capture *c = s->owner;
                if (c->s[0].pipe_r < 0 && c->s[1].pipe_r < 0) {
                    /* each descriptor is in one event at most, and both are gone: no later
                     * event of this round names c */
                    pthread_mutex_lock(&loop.mu);
                    if (!c->stop_queued)    /* else serve_stops releases it, after the round */
                        release(c);
                    pthread_mutex_unlock(&loop.mu);
                }
            }
        }
        /* after the round: a capture released here may be freed at once by its owner */
        if (wake)
            serve_stops(buf);
    }
    return NULL;
}

static void loop_start(void)
{
    char *buf = malloc(READ_CHUNK);
    loop.start_call = "malloc read buffer for output capture";
    if (!buf) {
        loop.start_error = ENOMEM;
        return;
    }
    loop.epfd = epoll_create1(EPOLL_CLOEXEC);
    loop.start_call = "epoll_create1 for output capture";
    if (loop.epfd >= 0) {
        loop.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        loop.start_call = "eventfd for output capture";
    }
    if (loop.epfd >= 0 && loop.wake_fd >= 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        loop.start_call = "epoll_ctl for output capture";
        if (epoll_ctl(loop.epfd, EPOLL_CTL_ADD, loop.wake_fd, &ev) == 0) {
            /* The loop takes no signals: they belong to the agent's main thread. */
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &old);
            pthread_t t;
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            int e = pthread_create(&t, &attr, loop_main, buf);
            pthread_attr_destroy(&attr);
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            if (e == 0)
                return;
            loop.start_call = "pthread_create for output capture";
            errno = e;
        }
    }
    loop.start_error = errno ? errno : EIO;
    free(buf);
    if (loop.wake_fd >= 0)
        close(loop.wake_fd);
    if (loop.epfd >= 0)
        close(loop.epfd);
    loop.wake_fd = loop.epfd = -1;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int open_stream(struct ps_capture *c, struct stream *s, const char *name,
                       const char *path, int64_t cap, int *write_end, struct ps_error *err)
{
    s->owner = c;
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
    if (fcntl(s->pipe_r, F_SETFL, O_NONBLOCK) != 0)     /* the job's end stays blocking */
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
    pthread_once(&loop.once, loop_start);
    if (loop.start_error)
        return ps_error_set(err, PS_EIO, "%s: %s", loop.start_call,
                            strerror(loop.start_error));
    struct ps_capture *c = calloc(1, sizeof *c);
    if (!c)
        return ps_error_set(err, PS_ENOMEM, "capture: out of memory");
    for (int i = 0; i < 2; i++)
        c->s[i].file_fd = c->s[i].pipe_r = -1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);

    int rc = open_stream(c, &c->s[0], "stdout", stdout_path, stdout_cap_bytes, stdout_fd, err);
    if (rc == 0)
        rc = open_stream(c, &c->s[1], "stderr", stderr_path, stderr_cap_bytes, stderr_fd, err);
    /* stderr first: once stdout is in the set too, the loop may release c at any moment */
    pthread_mutex_lock(&loop.mu);
    for (int i = 1; rc == 0 && i >= 0; i--) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->s[i]};
        if (epoll_ctl(loop.epfd, EPOLL_CTL_ADD, c->s[i].pipe_r, &ev) != 0) {
            rc = ps_error_set(err, PS_EIO, "epoll_ctl for the %s pipe: %s", c->s[i].name,
                              strerror(errno));
            if (i == 0)     /* stderr is in: remove it (the loop cannot have read EOF: the
                             * write end is still ours) */
                (void)epoll_ctl(loop.epfd, EPOLL_CTL_DEL, c->s[1].pipe_r, NULL);
        }
    }
    if (rc == 0)
        c->registered = true;
    pthread_mutex_unlock(&loop.mu);
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
    if (!c->finished) {
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        int64_t ns = deadline.tv_nsec + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
        deadline.tv_sec += (time_t)(ns / 1000000000);
        deadline.tv_nsec = (long)(ns % 1000000000);
        pthread_mutex_lock(&c->mu);
        while (c->registered && !c->released)
            if (pthread_cond_timedwait(&c->cv, &c->mu, &deadline) == ETIMEDOUT)
                break;
        bool released = !c->registered || c->released;
        pthread_mutex_unlock(&c->mu);
        if (!released) {
            /* A writer is still there (a process that escaped the job): have the loop take
             * what is buffered and let go. */
            pthread_mutex_lock(&loop.mu);  /* lock order: loop.mu, then c->mu */
            pthread_mutex_lock(&c->mu);
            released = c->released;         /* end of file may have come meanwhile */
            pthread_mutex_unlock(&c->mu);
            if (!released) {
                c->stop_queued = true;
                c->next_stop = loop.stops;
                loop.stops = c;
            }
            pthread_mutex_unlock(&loop.mu);
            uint64_t one = 1;
            while (!released && write(loop.wake_fd, &one, sizeof one) < 0 && errno == EINTR)
                ;
            pthread_mutex_lock(&c->mu);
            while (!c->released)
                pthread_cond_wait(&c->cv, &c->mu);
            pthread_mutex_unlock(&c->mu);
        }
        c->finished = true;
        for (int i = 0; i < 2; i++)
            finalize(&c->s[i]);
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
    (void)ps_capture_finish(c, 0, NULL);
    destroy(c);
}
