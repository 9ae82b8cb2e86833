#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/capture.h"
#include "platform_test_util.h"

struct cap {
    char *dir;
    char out_path[PATH_MAX], err_path[PATH_MAX];
    int out_w, err_w;
    struct ps_capture *c;
};

static void open_cap(struct cap *k, int64_t out_cap, int64_t err_cap)
{
    memset(k, 0, sizeof *k);
    k->dir = test_make_dir("cap");
    assert_non_null(k->dir);
    snprintf(k->out_path, sizeof k->out_path, "%s/stdout", k->dir);
    snprintf(k->err_path, sizeof k->err_path, "%s/stderr", k->dir);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_capture_start(k->out_path, out_cap, k->err_path, err_cap, &k->out_w,
                                      &k->err_w, &k->c, &err), 0);
}

static void write_all(int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        assert_true(w > 0);
        data += w;
        n -= (size_t)w;
    }
}

static char *read_stream(struct cap *k, enum ps_capture_stream s, size_t *len)
{
    char *data = NULL;
    assert_int_equal(ps_capture_read(k->c, s, &data, len, NULL), 0);
    return data;
}

static void close_cap(struct cap *k)
{
    ps_capture_free(k->c);
    if (k->out_w >= 0)
        close(k->out_w);
    if (k->err_w >= 0)
        close(k->err_w);
    test_remove_dir(k->dir);
}

static void test_small_output_kept_whole(void **state)
{
    (void)state;
    struct cap k;
    open_cap(&k, 1024, 1024);
    write_all(k.out_w, "hello\n", 6);
    write_all(k.err_w, "err\n", 4);
    close(k.out_w);
    close(k.err_w);
    k.out_w = k.err_w = -1;
    assert_int_equal(ps_capture_finish(k.c, 5000, NULL), 0);
    assert_int_equal(ps_capture_finish(k.c, 5000, NULL), 0);   /* idempotent */
    size_t len;
    char *out = read_stream(&k, PS_CAPTURE_STDOUT, &len);
    assert_string_equal(out, "hello\n");
    free(out);
    char *er = read_stream(&k, PS_CAPTURE_STDERR, &len);
    assert_string_equal(er, "err\n");
    free(er);
    assert_int_equal(ps_capture_total_bytes(k.c, PS_CAPTURE_STDOUT), 6);
    assert_false(ps_capture_truncated(k.c, PS_CAPTURE_STDOUT));
    assert_true(test_file_contains(k.out_path, "hello"));   /* also on disk, by path */
    close_cap(&k);
}

/* n bytes of a pattern that makes every position recognisable. */
static char *pattern(size_t n)
{
    char *p = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (char)('a' + (i * 7 + i / 26) % 26);
    p[n] = '\0';
    return p;
}

/* Writes n pattern bytes in uneven chunks with cap `cap`, and checks the exact final layout:
 * everything when n <= cap, else head (cap - cap/2) + marker + tail (cap/2). */
static void check_layout(size_t n, int64_t cap)
{
    struct cap k;
    open_cap(&k, cap, 16);
    char *p = pattern(n);
    size_t chunks[] = {1, 7, 4096, 65536, 3, 100000};
    size_t off = 0;
    for (int i = 0; off < n; i++) {
        size_t c = chunks[i % 6] < n - off ? chunks[i % 6] : n - off;
        write_all(k.out_w, p + off, c);
        off += c;
    }
    /* while the job runs, the file holds the first min(n, cap) bytes */
    for (int i = 0; i < 1000 && ps_capture_total_bytes(k.c, PS_CAPTURE_STDOUT) < (int64_t)n; i++)
        test_sleep_ms(2);
    size_t len;
    char *live = read_stream(&k, PS_CAPTURE_STDOUT, &len);
    size_t live_expected = n < (size_t)cap ? n : (size_t)cap;
    assert_int_equal(len, live_expected);
    assert_memory_equal(live, p, live_expected);
    free(live);

    close(k.out_w);
    close(k.err_w);
    k.out_w = k.err_w = -1;
    int64_t t0 = test_now_ms();
    assert_int_equal(ps_capture_finish(k.c, 5000, NULL), 0);
    assert_true(test_now_ms() - t0 < 2000);     /* EOF on both pipes ends it, not the timeout */
    char *got = read_stream(&k, PS_CAPTURE_STDOUT, &len);
    assert_int_equal(ps_capture_total_bytes(k.c, PS_CAPTURE_STDOUT), (int64_t)n);
    if (n <= (size_t)cap) {
        assert_false(ps_capture_truncated(k.c, PS_CAPTURE_STDOUT));
        assert_int_equal(len, n);
        assert_memory_equal(got, p, n);
    } else {
        assert_true(ps_capture_truncated(k.c, PS_CAPTURE_STDOUT));
        size_t tail = (size_t)cap / 2, head = (size_t)cap - tail;
        char marker[128];
        int m = snprintf(marker, sizeof marker, "\n[poolsched: %zu bytes of stdout skipped]\n",
                         n - head - tail);
        assert_int_equal(len, head + (size_t)m + tail);
        assert_memory_equal(got, p, head);
        assert_memory_equal(got + head, marker, (size_t)m);
        if (tail)
            assert_memory_equal(got + head + (size_t)m, p + n - tail, tail);
    }
    free(got);
    free(p);
    close_cap(&k);
}

static void test_cap_layouts(void **state)
{
    (void)state;
    check_layout(100, 100);         /* exactly the cap: untouched */
    check_layout(101, 100);         /* one byte over */
    check_layout(1000, 100);
    check_layout(1000, 7);          /* odd cap: head 4, tail 3 */
    check_layout(1000, 1);          /* head 1, no tail */
    check_layout(1000, 0);          /* nothing but the marker */
    check_layout(20 << 20, 1 << 20);    /* 20 MiB through a 1 MiB cap */
}

/* A writer that never closes its end (an escaped process) cannot hold the agent: finish
 * returns after its timeout with what was written. */
static void test_finish_does_not_wait_forever(void **state)
{
    (void)state;
    struct cap k;
    open_cap(&k, 1024, 1024);
    write_all(k.err_w, "partial", 7);
    int64_t t0 = test_now_ms();
    assert_int_equal(ps_capture_finish(k.c, 100, NULL), 0);
    int64_t waited = test_now_ms() - t0;
    size_t len;
    char *er = read_stream(&k, PS_CAPTURE_STDERR, &len);
    assert_string_equal(er, "partial");
    free(er);
    assert_true(waited >= 90 && waited < 3000);
    close_cap(&k);
}

/* Files are created on the first byte: a job that writes nothing leaves none. */
static void test_no_output_no_files(void **state)
{
    (void)state;
    struct cap k;
    open_cap(&k, 10, 10);
    close(k.out_w);
    close(k.err_w);
    k.out_w = k.err_w = -1;
    assert_int_equal(ps_capture_finish(k.c, 1000, NULL), 0);
    size_t len = 1;
    char *data = read_stream(&k, PS_CAPTURE_STDERR, &len);
    assert_int_equal(len, 0);
    assert_string_equal(data, "");
    free(data);
    assert_int_equal(access(k.out_path, F_OK), -1);
    assert_int_equal(access(k.err_path, F_OK), -1);
    close_cap(&k);
}

/* Something already at the path (the job's own file, or a planted symlink) is never written
 * through: the capture moves to <path>.1 and is still read back whole. */
static void test_taken_names(void **state)
{
    (void)state;
    struct cap k;
    open_cap(&k, 10, 10);
    int fd = open(k.out_path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    write_all(fd, "job's", 5);
    close(fd);
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s/target", k.dir);
    fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(symlink(target, k.err_path), 0);
    write_all(k.out_w, "out", 3);
    write_all(k.err_w, "err", 3);
    close(k.out_w);
    close(k.err_w);
    k.out_w = k.err_w = -1;
    assert_int_equal(ps_capture_finish(k.c, 1000, NULL), 0);
    size_t len;
    char *data = read_stream(&k, PS_CAPTURE_STDOUT, &len);
    assert_string_equal(data, "out");
    free(data);
    data = read_stream(&k, PS_CAPTURE_STDERR, &len);
    assert_string_equal(data, "err");
    free(data);
    assert_true(test_file_contains(k.out_path, "job's"));   /* the job's file is untouched */
    char moved[PATH_MAX + 8];
    snprintf(moved, sizeof moved, "%s.1", k.out_path);
    assert_true(test_file_contains(moved, "out"));
    snprintf(moved, sizeof moved, "%s.1", k.err_path);
    assert_true(test_file_contains(moved, "err"));
    struct stat st;
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_size, 0);                         /* nothing went through the link */
    close_cap(&k);
}

static void test_start_errors(void **state)
{
    (void)state;
    struct ps_capture *c = NULL;
    int o, e;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_capture_start("/a", -1, "/b", 10, &o, &e, &c, &err), PS_EINVAL);
    assert_null(c);
    assert_int_equal(o, -1);
    ps_capture_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_output_kept_whole),
        cmocka_unit_test(test_cap_layouts),
        cmocka_unit_test(test_finish_does_not_wait_forever),
        cmocka_unit_test(test_no_output_no_files),
        cmocka_unit_test(test_taken_names),
        cmocka_unit_test(test_start_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
