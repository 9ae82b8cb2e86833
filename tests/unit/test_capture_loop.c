/* The shared capture loop (platform/capture.c): many captures at once on its one thread, each
 * kept apart and whole; a writer killed mid-write; a writer that never stops among others. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/capture.h"
#include "platform_test_util.h"

/* Byte i of the stream `seed`: every position and every stream recognisable. */
static char pat(unsigned seed, size_t i)
{
    return (char)('a' + (i * 7 + i / 26 + seed * 13) % 26);
}

static char *pattern(unsigned seed, size_t n)
{
    char *p = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        p[i] = pat(seed, i);
    p[n] = '\0';
    return p;
}

static void write_all(int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        if (w <= 0)
            _exit(3);
        data += w;
        n -= (size_t)w;
    }
}

/* The file a stream must end as: everything up to the cap, else head + marker + tail, built
 * here from the pattern (not by the code under test). */
static void check_stream(struct ps_capture *c, enum ps_capture_stream s, const char *name,
                         unsigned seed, size_t n, int64_t cap)
{
    char *p = pattern(seed, n);
    char *got = NULL;
    size_t len = 0;
    assert_int_equal(ps_capture_read(c, s, &got, &len, NULL), 0);
    assert_int_equal(ps_capture_total_bytes(c, s), (int64_t)n);
    if (n <= (size_t)cap) {
        assert_false(ps_capture_truncated(c, s));
        assert_int_equal(len, n);
        assert_memory_equal(got, p, n);
    } else {
        assert_true(ps_capture_truncated(c, s));
        size_t tail = (size_t)cap / 2, head = (size_t)cap - tail;
        char marker[128];
        int m = snprintf(marker, sizeof marker, "\n[poolsched: %zu bytes of %s skipped]\n",
                         n - head - tail, name);
        assert_int_equal(len, head + (size_t)m + tail);
        assert_memory_equal(got, p, head);
        assert_memory_equal(got + head, marker, (size_t)m);
        assert_memory_equal(got + head + (size_t)m, p + n - tail, tail);
    }
    free(got);
    free(p);
}

struct job {
    char *dir;
    struct ps_capture *c;
    pid_t pid;
    size_t out_n, err_n;
    int64_t out_cap, err_cap;
};

/* In a child: dies with the test, so a failed check leaves no writer behind. */
static void child_setup(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static int start_job(struct job *j, int64_t out_cap, int64_t err_cap, int *out_w, int *err_w)
{
    j->dir = test_make_dir("caploop");
    assert_non_null(j->dir);
    char out_path[PATH_MAX], err_path[PATH_MAX];
    snprintf(out_path, sizeof out_path, "%s/stdout", j->dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", j->dir);
    j->out_cap = out_cap;
    j->err_cap = err_cap;
    return ps_capture_start(out_path, out_cap, err_path, err_cap, out_w, err_w, &j->c, NULL);
}

/* 40 jobs at once, outputs from nothing to 3 MiB, some over their caps. Each job writes both
 * streams interleaved in uneven chunks, closes stdout, sleeps, then writes the rest of stderr:
 * the loop must keep every job's bytes apart and must not let a capture go at the first
 * stream's end (the tail of stderr would be lost). */
static void test_many_jobs_at_once(void **state)
{
    (void)state;
    enum { JOBS = 40 };
    struct job jobs[JOBS];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < JOBS; i++) {
        struct job *j = &jobs[i];
        j->out_n = (size_t)(i % 5 == 0 ? 0 : (i * 77773) % (3 << 20));
        j->err_n = (size_t)(i % 7 == 0 ? 5 : 1000 + (i * 31337) % (1 << 20));
        int out_w, err_w;
        assert_int_equal(start_job(j, i % 3 == 0 ? 4096 : 2 << 20, i % 2 ? 1000 : 1 << 20,
                                   &out_w, &err_w), 0);
        j->pid = fork();
        assert_true(j->pid >= 0);
        if (j->pid == 0) {
            child_setup();
            char *o = pattern(2 * (unsigned)i, j->out_n), *e = pattern(2 * (unsigned)i + 1,
                                                                      j->err_n);
            size_t oo = 0, eo = 0, chunks[] = {1, 4096, 333, 65536, 70000};
            for (int k = 0; oo < j->out_n || eo < j->err_n / 2; k++) {
                size_t c = chunks[k % 5];
                size_t a = c < j->out_n - oo ? c : j->out_n - oo;
                write_all(out_w, o + oo, a);
                oo += a;
                size_t b = c < j->err_n / 2 - eo ? c : j->err_n / 2 - eo;
                write_all(err_w, e + eo, b);
                eo += b;
            }
            close(out_w);
            test_sleep_ms(30);
            write_all(err_w, e + eo, j->err_n - eo);
            _exit(0);
        }
        close(out_w);
        close(err_w);
    }
    for (int i = 0; i < JOBS; i++) {
        struct job *j = &jobs[i];
        int st;
        assert_int_equal(waitpid(j->pid, &st, 0), j->pid);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        int64_t t0 = test_now_ms();
        assert_int_equal(ps_capture_finish(j->c, 10000, NULL), 0);
        assert_true(test_now_ms() - t0 < 5000);     /* end of file, not the timeout */
        check_stream(j->c, PS_CAPTURE_STDOUT, "stdout", 2 * (unsigned)i, j->out_n, j->out_cap);
        check_stream(j->c, PS_CAPTURE_STDERR, "stderr", 2 * (unsigned)i + 1, j->err_n,
                     j->err_cap);
        ps_capture_free(j->c);
        test_remove_dir(j->dir);
    }
}

/* A job killed (SIGKILL) in the middle of writing: what it wrote before the kill — counted
 * by the writer itself after each whole write — is all there, including what was still in the
 * pipe when the process died, and finish does not wait for a timeout. */
static void test_killed_mid_write(void **state)
{
    (void)state;
    enum { CHUNK = 4096 };      /* <= PIPE_BUF: a write is all or nothing */
    for (int round = 0; round < 5; round++) {
        volatile int64_t *written = mmap(NULL, sizeof *written, PROT_READ | PROT_WRITE,
                                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        assert_true(written != MAP_FAILED);
        *written = 0;
        struct job j;
        memset(&j, 0, sizeof j);
        int out_w, err_w;
        assert_int_equal(start_job(&j, 64 << 10, 1024, &out_w, &err_w), 0);
        j.pid = fork();
        assert_true(j.pid >= 0);
        if (j.pid == 0) {
            child_setup();
            char buf[CHUNK];
            for (size_t off = 0;; off += CHUNK) {
                for (size_t b = 0; b < CHUNK; b++)
                    buf[b] = pat(7, off + b);
                write_all(out_w, buf, CHUNK);
                *written += CHUNK;
            }
        }
        close(out_w);
        close(err_w);
        while (*written < (int64_t)(2 << 20))
            test_sleep_ms(1);
        kill(j.pid, SIGKILL);
        int st;
        assert_int_equal(waitpid(j.pid, &st, 0), j.pid);
        int64_t t0 = test_now_ms();
        assert_int_equal(ps_capture_finish(j.c, 10000, NULL), 0);
        assert_true(test_now_ms() - t0 < 5000);
        int64_t total = ps_capture_total_bytes(j.c, PS_CAPTURE_STDOUT);
        /* the kill may fall between a write and its count */
        assert_true(total == *written || total == *written + CHUNK);
        check_stream(j.c, PS_CAPTURE_STDOUT, "stdout", 7, (size_t)total, j.out_cap);
        ps_capture_free(j.c);
        test_remove_dir(j.dir);
        munmap((void *)written, sizeof *written);
    }
}

/* A writer that never stops and never closes (a process escaped from its job) holds neither
 * its own finish beyond the timeout plus a bounded drain, nor the other jobs on the loop. */
static void test_endless_writer_among_others(void **state)
{
    (void)state;
    struct job endless, quiet;
    memset(&endless, 0, sizeof endless);
    memset(&quiet, 0, sizeof quiet);
    int ew_out, ew_err, q_out, q_err;
    assert_int_equal(start_job(&endless, 1 << 20, 1024, &ew_out, &ew_err), 0);
    endless.pid = fork();
    assert_true(endless.pid >= 0);
    if (endless.pid == 0) {
        child_setup();
        char *p = pattern(3, 65536);
        for (;;)
            write_all(ew_out, p, 65536);
    }
    close(ew_out);
    close(ew_err);
    assert_int_equal(start_job(&quiet, 1024, 1024, &q_out, &q_err), 0);
    test_sleep_ms(50);
    write_all(q_out, "done\n", 5);
    close(q_out);
    close(q_err);
    int64_t t0 = test_now_ms();
    assert_int_equal(ps_capture_finish(quiet.c, 10000, NULL), 0);
    assert_true(test_now_ms() - t0 < 2000);
    char *got = NULL;
    size_t len = 0;
    assert_int_equal(ps_capture_read(quiet.c, PS_CAPTURE_STDOUT, &got, &len, NULL), 0);
    assert_string_equal(got, "done\n");
    free(got);
    t0 = test_now_ms();
    assert_int_equal(ps_capture_finish(endless.c, 200, NULL), 0);
    int64_t waited = test_now_ms() - t0;
    assert_true(waited >= 190 && waited < 5000);
    int64_t total = ps_capture_total_bytes(endless.c, PS_CAPTURE_STDOUT);
    assert_true(total > 0);
    assert_true(ps_capture_truncated(endless.c, PS_CAPTURE_STDOUT) == (total > (1 << 20)));
    test_sleep_ms(20);      /* the writer goes on; the capture has let go */
    assert_int_equal(ps_capture_total_bytes(endless.c, PS_CAPTURE_STDOUT), total);
    kill(endless.pid, SIGKILL);
    int st;
    waitpid(endless.pid, &st, 0);
    ps_capture_free(quiet.c);
    ps_capture_free(endless.c);
    test_remove_dir(quiet.dir);
    test_remove_dir(endless.dir);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_jobs_at_once),
        cmocka_unit_test(test_killed_mid_write),
        cmocka_unit_test(test_endless_writer_among_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
