/* Failed commits change nothing (issue 13, docs/faults.md "Full disk"), in-process and without
 * root: a wrapping SQLite VFS, registered as the default before the service opens its store,
 * makes every write to the WAL fail on demand with SQLITE_FULL (a full disk: 507) or
 * SQLITE_IOERR_WRITE with EIO (503). The service runs without HTTP (port -1) and commands go
 * through ps_api_dispatch, as in the fuzzer. tests/scripts/server_disk_full.sh does the same on a
 * real full tmpfs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "service_test.h"

/* ---- a VFS that fails WAL writes on demand --------------------------------------------------- */

static _Atomic int inject;       /* 0, SQLITE_FULL or SQLITE_IOERR_WRITE (the journal's thread
                                    reads it) */
static sqlite3_vfs *real_vfs;

struct faulty_file {
    sqlite3_file base;           /* methods: faulty_methods */
    bool wal;
    sqlite3_file real[];         /* real_vfs->szOsFile bytes */
};

#define REAL(f) (((struct faulty_file *)(f))->real)

static int f_close(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
    return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}
static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
    if (inject && ((struct faulty_file *)f)->wal)
        return inject;
    return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 s)
{
    return REAL(f)->pMethods->xTruncate(REAL(f), s);
}
static int f_sync(sqlite3_file *f, int fl) { return REAL(f)->pMethods->xSync(REAL(f), fl); }
static int f_size(sqlite3_file *f, sqlite3_int64 *s)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), s);
}
static int f_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int f_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int f_check(sqlite3_file *f, int *r)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r);
}
static int f_fcntl(sqlite3_file *f, int op, void *a)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, a);
}
static int f_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int f_chars(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int f_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, ext, pp);
}
static int f_shm_lock(sqlite3_file *f, int off, int n, int fl)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, fl);
}
static void f_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int f_shm_unmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static const sqlite3_io_methods faulty_methods = {
    2, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_check, f_fcntl,
    f_sector, f_chars, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, NULL, NULL,
};

static int f_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out)
{
    (void)vfs;
    struct faulty_file *ff = (struct faulty_file *)file;
    ff->base.pMethods = NULL;
    ff->wal = (flags & SQLITE_OPEN_WAL) != 0;
    int rc = real_vfs->xOpen(real_vfs, name, ff->real, flags, out);
    if (rc == SQLITE_OK)
        ff->base.pMethods = &faulty_methods;
    return rc;
}

static sqlite3_vfs faulty_vfs;

static void install_vfs(void)
{
    if (real_vfs)
        return;
    real_vfs = sqlite3_vfs_find(NULL);
    assert_non_null(real_vfs);
    faulty_vfs = *real_vfs;
    faulty_vfs.zName = "faulty";
    faulty_vfs.szOsFile = (int)sizeof(struct faulty_file) + real_vfs->szOsFile;
    faulty_vfs.xOpen = f_open;
    faulty_vfs.pAppData = NULL;
    assert_int_equal(sqlite3_vfs_register(&faulty_vfs, 1), SQLITE_OK);
}

/* ---- the service in-process --------------------------------------------------------------------- */

static void refused(struct ps_service *svc, const char *command, const char *body, int status,
                    const char *words)
{
    json_t *reply = NULL;
    int st = call(svc, command, body, &reply);
    const char *msg = json_string_value(json_object_get(reply, "message"));
    if (st != status || !msg || !strstr(msg, words))
        fail_msg("%s %s: expected %d with '%s', got %d %s", command, body, status, words, st,
                 msg ? msg : "");
    json_decref(reply);
}

static size_t op_count(struct ps_service *svc)
{
    json_t *r = ok(svc, "list_operations", "{\"limit\": 1000}");
    size_t n = json_array_size(json_object_get(r, "operations"));
    json_decref(r);
    return n;
}

static bool pool_exists(struct ps_service *svc, const char *name)
{
    char body[256];
    snprintf(body, sizeof body, "{\"path\": \"//sys/pool_trees/physical/%s\"}", name);
    json_t *r = ok(svc, "exists", body);
    bool e = json_is_true(json_object_get(r, "value"));
    json_decref(r);
    return e;
}

static double weight(struct ps_service *svc, const char *pool)
{
    char body[256];
    snprintf(body, sizeof body, "{\"path\": \"//sys/pool_trees/physical/%s/@weight\"}", pool);
    json_t *r = ok(svc, "get", body);
    double w = json_number_value(json_object_get(r, "value"));
    json_decref(r);
    return w;
}

static struct ps_service *start_window(const char *dir, int64_t commit_window_ms)
{
    struct ps_service_config cfg;
    test_service_config(&cfg, dir);
    cfg.commit_window_ms = commit_window_ms;
    return start_config(&cfg);
}

static struct ps_service *start(const char *dir)
{
    return start_window(dir, 0);
}

/* One kind of failure: every write refused with status and words, absent at once, after the
 * failure ends and after a restart; writes work again without a restart. */
static void run_case(int fault, int status, const char *words)
{
    install_vfs();
    inject = 0;
    char *dir = make_store_dir("journal_faults");
    struct ps_service *svc = start(dir);
    json_decref(ok(svc, "create", "{\"type\": \"scheduler_pool\", \"path\": \"//sys/pool_trees/physical/keep\"}"));
    json_decref(ok(svc, "create", "{\"type\": \"scheduler_pool\", \"path\": \"//sys/pool_trees/physical/empty\"}"));
    json_decref(ok(svc, "set", "{\"path\": \"//sys/pool_trees/physical/keep/@weight\", \"value\": 3}"));
    json_t *r = ok(svc, "start_op", "{\"spec\": {\"pool\": \"keep\", \"tasks\": {\"t\": {\"command\": \"x\", \"job_count\": 2}}}}");
    char op[128];
    snprintf(op, sizeof op, "%s", json_string_value(json_object_get(r, "operation_id")));
    json_decref(r);
    size_t ops = op_count(svc);

    inject = fault;
    for (int i = 0; i < 5; i++)
        refused(svc, "start_op", "{\"spec\": {\"pool\": \"keep\", \"tasks\": {\"t\": {\"command\": \"y\", \"job_count\": 1}}}}", status, words);
    refused(svc, "create", "{\"type\": \"scheduler_pool\", \"path\": \"//sys/pool_trees/physical/new\"}", status, words);
    refused(svc, "set", "{\"path\": \"//sys/pool_trees/physical/keep/@weight\", \"value\": 7}", status, words);
    refused(svc, "remove", "{\"path\": \"//sys/pool_trees/physical/empty\"}", status, words);
    char body[256];
    snprintf(body, sizeof body, "{\"operation_id\": \"%s\"}", op);
    refused(svc, "abort_op", body, status, words);
    refused(svc, "suspend_op", body, status, words);
    /* reads answer, and show none of it */
    assert_int_equal(op_count(svc), ops);
    assert_false(pool_exists(svc, "new"));
    assert_true(pool_exists(svc, "empty"));
    assert_true(weight(svc, "keep") == 3);
    r = ok(svc, "get_operation", body);
    assert_string_equal(json_string_value(json_object_get(r, "state")), "running");
    assert_false(json_is_true(json_object_get(r, "suspended")));
    json_decref(r);

    /* the failure ends: nothing refused comes back, writes work */
    inject = 0;
    usleep(300 * 1000);
    assert_int_equal(op_count(svc), ops);
    assert_false(pool_exists(svc, "new"));
    assert_true(weight(svc, "keep") == 3);
    json_decref(ok(svc, "create", "{\"type\": \"scheduler_pool\", \"path\": \"//sys/pool_trees/physical/after\"}"));
    json_decref(ok(svc, "start_op", "{\"spec\": {\"pool\": \"after\", \"tasks\": {\"t\": {\"command\": \"z\", \"job_count\": 1}}}}"));
    ps_service_stop(svc);

    svc = start(dir);
    assert_int_equal(op_count(svc), ops + 1);
    assert_false(pool_exists(svc, "new"));
    assert_true(pool_exists(svc, "after"));
    assert_true(pool_exists(svc, "empty"));
    assert_true(weight(svc, "keep") == 3);
    r = ok(svc, "get_operation", body);
    assert_string_equal(json_string_value(json_object_get(r, "state")), "running");
    json_decref(r);
    ps_service_stop(svc);
    remove_service_dir(dir);
}

static void test_disk_full_507(void **state)
{
    (void)state;
    run_case(SQLITE_FULL, 507, "disk full");
}

static void test_io_error_503(void **state)
{
    (void)state;
    run_case(SQLITE_IOERR_WRITE, 503, "storage unavailable");
}

struct chain_call {
    struct ps_service *svc;
    const char *command, *body;
    int status;
};

static void *chain_thread(void *arg)
{
    struct chain_call *c = arg;
    json_t *reply = NULL;
    c->status = call(c->svc, c->command, c->body, &reply);
    json_decref(reply);
    return NULL;
}

/* Requests that share a failed group commit are all refused, including one that built on
 * another's uncommitted change: a pool is created and an operation started in it within one
 * 300 ms commit window; the commit fails; neither exists afterwards, in memory or on disk. */
static void test_dependent_requests_refused_together(void **state)
{
    (void)state;
    install_vfs();
    inject = 0;
    char *dir = make_store_dir("journal_faults");
    struct ps_service *svc = start_window(dir, 300);
    size_t ops = op_count(svc);
    inject = SQLITE_FULL;
    struct chain_call pool = {svc, "create",
                              "{\"type\": \"scheduler_pool\", \"path\": \"//sys/pool_trees/physical/chain\"}", 0};
    struct chain_call op = {svc, "start_op",
                            "{\"spec\": {\"pool\": \"chain\", \"tasks\": {\"t\": {\"command\": \"x\", \"job_count\": 1}}}}", 0};
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, chain_thread, &pool), 0);
    usleep(100 * 1000);   /* the pool is in memory, its commit waits in the window */
    assert_int_equal(pthread_create(&b, NULL, chain_thread, &op), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(pool.status, 507);
    assert_int_equal(op.status, 507);
    assert_false(pool_exists(svc, "chain"));
    assert_int_equal(op_count(svc), ops);
    inject = 0;
    json_decref(ok(svc, "create", "{\"type\": \"scheduler_pool\", \"path\": \"//sys/pool_trees/physical/later\"}"));
    ps_service_stop(svc);
    svc = start(dir);
    assert_false(pool_exists(svc, "chain"));
    assert_true(pool_exists(svc, "later"));
    assert_int_equal(op_count(svc), ops);
    ps_service_stop(svc);
    remove_service_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk_full_507),
        cmocka_unit_test(test_io_error_503),
        cmocka_unit_test(test_dependent_requests_refused_together),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
