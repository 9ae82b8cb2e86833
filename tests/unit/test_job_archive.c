/* The job archive's pure parts: the list_jobs order and the scan of one operation's stored jobs
 * (ps_store_jobs_of_operation: through the jobs_by_operation index, from a second connection that
 * sees every commit). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/job_archive.h"
#include "server/store_sqlite.h"
#include "store_test_dir.h"

static void test_order(void **state)
{
    (void)state;
    /* start time first */
    assert_true(ps_job_archive_order_cmp(1, "j-b-1", 2, "j-a-1") < 0);
    assert_true(ps_job_archive_order_cmp(3, "j-a-1", 2, "j-b-1") > 0);
    /* same start: the hex counter in numeric order (f before 10), not bytewise */
    assert_true(ps_job_archive_order_cmp(5, "j-aaaaaaaa-f", 5, "j-aaaaaaaa-10") < 0);
    assert_true(ps_job_archive_order_cmp(5, "j-aaaaaaaa-10", 5, "j-aaaaaaaa-f") > 0);
    assert_true(ps_job_archive_order_cmp(5, "j-aaaaaaaa-a", 5, "j-aaaaaaaa-b") < 0);
    assert_int_equal(ps_job_archive_order_cmp(5, "j-x-1", 5, "j-x-1"), 0);
}

static void put_job(struct ps_store *s, const char *id, const char *op, long long finish)
{
    char doc[256];
    snprintf(doc, sizeof doc, "{\"id\": \"%s\", \"operation_id\": \"%s\", \"finish_time\": %lld}",
             id, op, finish);
    struct ps_error err;
    ps_error_init(&err);
    if (ps_store_put(s, "job", id, doc, &err) != 0)
        fail_msg("put %s: %s", id, err.msg);
}

struct seen {
    char ids[16][32];
    int n;
    int stop_after;   /* 0: never */
};

static int collect(const char *job_id, const char *doc, void *ctx)
{
    struct seen *s = ctx;
    assert_non_null(strstr(doc, job_id));
    assert_true(s->n < 16);
    snprintf(s->ids[s->n++], sizeof s->ids[0], "%s", job_id);
    return s->stop_after && s->n == s->stop_after ? 42 : 0;
}

static void scan_ok(struct ps_store *s, const char *op, enum ps_store_job_order order,
                    struct seen *out)
{
    memset(out, 0, sizeof *out);
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_store_jobs_of_operation(s, op, order, collect, out, &err);
    if (rc != 0)
        fail_msg("scan %s: %s", op, err.msg);
}

static void test_scan(void **state)
{
    (void)state;
    char *dir = make_store_dir("job_archive");
    struct ps_store *w, *r;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_open(dir, &w, &err), 0);
    assert_int_equal(ps_store_open(dir, &r, &err), 0);
    put_job(w, "j-1-3", "A", 30);
    put_job(w, "j-1-1", "A", 50);
    put_job(w, "j-1-2", "B", 10);
    put_job(w, "j-1-4", "A", -1);   /* running */
    assert_int_equal(ps_store_put(w, "operation", "A", "{\"operation_id\": \"A\"}", &err), 0);

    struct seen s;
    scan_ok(r, "A", PS_STORE_JOBS_BY_KEY, &s);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.ids[0], "j-1-1");
    assert_string_equal(s.ids[1], "j-1-3");
    assert_string_equal(s.ids[2], "j-1-4");
    scan_ok(r, "A", PS_STORE_JOBS_BY_FINISH, &s);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.ids[0], "j-1-4");
    assert_string_equal(s.ids[1], "j-1-3");
    assert_string_equal(s.ids[2], "j-1-1");
    scan_ok(r, "none", PS_STORE_JOBS_BY_KEY, &s);
    assert_int_equal(s.n, 0);

    /* the reader sees a later commit of the writer (its read transaction ended with the scan) */
    put_job(w, "j-1-5", "B", 20);
    scan_ok(r, "B", PS_STORE_JOBS_BY_FINISH, &s);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.ids[0], "j-1-2");
    assert_string_equal(s.ids[1], "j-1-5");

    /* a callback's nonzero return stops the scan and is returned */
    memset(&s, 0, sizeof s);
    s.stop_after = 1;
    assert_int_equal(ps_store_jobs_of_operation(r, "A", PS_STORE_JOBS_BY_KEY, collect, &s, &err), 42);
    assert_int_equal(s.n, 1);

    /* the scan's query (job_archive.c) searches the index, not every job */
    sqlite3_stmt *st;
    assert_int_equal(ps_store_prepare(r, "EXPLAIN QUERY PLAN " PS_STORE_SQLITE_JOBS_BY_KEY, &st,
                                      &err),
                     0);
    bool indexed = false;
    while (ps_store_step(r, st, &err) == 1) {
        const char *detail = (const char *)sqlite3_column_text(st, 3);
        indexed |= detail && strstr(detail, "objects_job_by_operation") != NULL;
    }
    sqlite3_reset(st);
    assert_true(indexed);

    ps_store_close(r);
    ps_store_close(w);
    remove_store_dir(dir, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
