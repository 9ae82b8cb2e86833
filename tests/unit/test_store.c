/* The SQLite store: durability across reopen, transactions, objects, migrations, a crash test
 * (SIGKILL mid-way) that checks every acknowledged commit survives, and a full disk (a small
 * tmpfs; skipped when it cannot be mounted). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/store_sqlite.h"
#include "store_test_dir.h"

static struct ps_store *open_ok(const char *dir)
{
    struct ps_store *s;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_store_open(dir, &s, &err);
    if (rc)
        fail_msg("open %s: %s", dir, err.msg);
    return s;
}

static char *get_ok(struct ps_store *s, const char *kind, const char *key)
{
    char *v;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_store_get(s, kind, key, &v, &err);
    if (rc)
        fail_msg("get %s/%s: %s", kind, key, err.msg);
    return v;
}

static int pragma_int(struct ps_store *s, const char *sql)
{
    sqlite3_stmt *st;
    assert_int_equal(ps_store_prepare(s, sql, &st, NULL), 0);
    assert_int_equal(ps_store_step(s, st, NULL), 1);
    int v = sqlite3_column_int(st, 0);
    sqlite3_reset(st);
    return v;
}

static void test_write_close_reopen(void **state)
{
    (void)state;
    char *dir = make_store_dir("store");
    struct ps_store *s = open_ok(dir);
    size_t n;
    ps_store_builtin_migrations(&n);
    assert_int_equal(ps_store_schema_version(s), (int)n);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_put(s, "pool", "physical/research", "{\"weight\":3}", &err), 0);
    assert_int_equal(ps_store_put(s, "pool", "physical/dev", "{\"weight\":1}", &err), 0);
    assert_int_equal(ps_store_put(s, "pool", "physical/dev", "{\"weight\":2}", &err), 0);

    /* The settings the durability promise rests on. */
    sqlite3_stmt *st;
    assert_int_equal(ps_store_prepare(s, "PRAGMA journal_mode", &st, &err), 0);
    assert_int_equal(ps_store_step(s, st, &err), 1);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_reset(st);
    assert_int_equal(pragma_int(s, "PRAGMA synchronous"), 2);   /* FULL */
    ps_store_close(s);

    /* Private files. */
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, PS_STORE_FILE_NAME);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);

    s = open_ok(dir);
    assert_int_equal(ps_store_schema_version(s), (int)n);
    char *v = get_ok(s, "pool", "physical/research");
    assert_string_equal(v, "{\"weight\":3}");
    free(v);
    v = get_ok(s, "pool", "physical/dev");
    assert_string_equal(v, "{\"weight\":2}");
    free(v);

    /* -wal and -shm inherit the mode while open. */
    snprintf(path, sizeof path, "%s/%s-wal", dir, PS_STORE_FILE_NAME);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);

    /* Missing, delete, invalid input. */
    ps_error_init(&err);
    assert_int_equal(ps_store_get(s, "pool", "nope", &v, &err), PS_ENOENT);
    assert_string_equal(err.msg, "no object pool/nope in the store");
    assert_null(v);
    ps_error_init(&err);
    assert_int_equal(ps_store_delete(s, "pool", "physical/dev", &err), 0);
    assert_int_equal(ps_store_delete(s, "pool", "physical/dev", &err), PS_ENOENT);
    ps_error_init(&err);
    assert_int_equal(ps_store_put(s, "pool", "x", "{not json", &err), PS_EINVAL);
    assert_string_equal(err.msg, "object pool/x: the value is not valid JSON");
    ps_error_init(&err);
    assert_int_equal(ps_store_put(s, "", "x", "1", &err), PS_EINVAL);
    assert_int_equal(ps_store_integrity_check(s, NULL), 0);
    ps_store_close(s);
    remove_store_dir(dir, NULL);
}

static void test_transactions(void **state)
{
    (void)state;
    char *dir = make_store_dir("store");
    struct ps_store *s = open_ok(dir);
    struct ps_error err;
    ps_error_init(&err);

    assert_int_equal(ps_store_begin(s, &err), 0);
    assert_true(ps_store_in_transaction(s));
    assert_int_equal(ps_store_put(s, "op", "a", "1", &err), 0);
    assert_int_equal(ps_store_put(s, "op", "b", "2", &err), 0);
    char *v = get_ok(s, "op", "a");   /* visible inside the transaction */
    free(v);
    assert_int_equal(ps_store_begin(s, &err), PS_ESTATE);
    ps_error_init(&err);
    assert_int_equal(ps_store_rollback(s, &err), 0);
    assert_false(ps_store_in_transaction(s));
    assert_int_equal(ps_store_get(s, "op", "a", &v, NULL), PS_ENOENT);
    assert_int_equal(ps_store_get(s, "op", "b", &v, NULL), PS_ENOENT);
    assert_int_equal(ps_store_commit(s, &err), PS_ESTATE);
    ps_error_init(&err);
    assert_int_equal(ps_store_rollback(s, &err), 0);   /* harmless without one */

    assert_int_equal(ps_store_begin(s, &err), 0);
    assert_int_equal(ps_store_put(s, "op", "c", "3", &err), 0);
    assert_int_equal(ps_store_commit(s, &err), 0);
    ps_store_close(s);

    /* Rolled back stays gone, committed stays, after a reopen too. */
    s = open_ok(dir);
    assert_int_equal(ps_store_get(s, "op", "a", &v, NULL), PS_ENOENT);
    v = get_ok(s, "op", "c");
    assert_string_equal(v, "3");
    free(v);

    /* A transaction left open at close is rolled back. */
    assert_int_equal(ps_store_begin(s, &err), 0);
    assert_int_equal(ps_store_put(s, "op", "d", "4", &err), 0);
    ps_store_close(s);
    s = open_ok(dir);
    assert_int_equal(ps_store_get(s, "op", "d", &v, NULL), PS_ENOENT);
    ps_store_close(s);
    remove_store_dir(dir, NULL);
}

struct listing {
    char keys[16][32];
    int n;
    int stop_after;
};

static int collect(const char *key, const char *value, void *ctx)
{
    (void)value;
    struct listing *l = ctx;
    snprintf(l->keys[l->n], sizeof l->keys[0], "%s", key);
    l->n++;
    return l->stop_after && l->n == l->stop_after ? 42 : 0;
}

static void test_list_by_prefix(void **state)
{
    (void)state;
    char *dir = make_store_dir("store");
    struct ps_store *s = open_ok(dir);
    static const char *const keys[] = { "b/2", "a/x", "a0", "a/y", "b/1", "a", "a/\xff",
                                        "a/\xff\xffz", "a\xff" };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        assert_int_equal(ps_store_put(s, "k", keys[i], "null", NULL), 0);
    assert_int_equal(ps_store_put(s, "other", "a/q", "null", NULL), 0);

    struct listing l = { 0 };
    assert_int_equal(ps_store_list(s, "k", "a/", collect, &l, NULL), 0);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.keys[0], "a/x");
    assert_string_equal(l.keys[1], "a/y");
    assert_string_equal(l.keys[2], "a/\xff");
    assert_string_equal(l.keys[3], "a/\xff\xffz");

    /* A prefix ending in 0xFF: the upper bound drops it and increments the byte before. */
    memset(&l, 0, sizeof l);
    assert_int_equal(ps_store_list(s, "k", "a/\xff", collect, &l, NULL), 0);
    assert_int_equal(l.n, 2);

    memset(&l, 0, sizeof l);
    assert_int_equal(ps_store_list(s, "k", NULL, collect, &l, NULL), 0);
    assert_int_equal(l.n, 9);
    assert_string_equal(l.keys[0], "a");
    assert_string_equal(l.keys[8], "b/2");

    /* The callback can stop the listing; its value comes back. */
    memset(&l, 0, sizeof l);
    l.stop_after = 2;
    assert_int_equal(ps_store_list(s, "k", "", collect, &l, NULL), 42);
    assert_int_equal(l.n, 2);

    memset(&l, 0, sizeof l);
    assert_int_equal(ps_store_list(s, "none", "", collect, &l, NULL), 0);
    assert_int_equal(l.n, 0);
    ps_store_close(s);
    remove_store_dir(dir, NULL);
}

static void test_migrations(void **state)
{
    (void)state;
    char *dir = make_store_dir("store");
    static const struct ps_store_migration good[] = {
        { 1, "one", "CREATE TABLE t1(x INTEGER)" },
        { 2, "two", "CREATE TABLE t2(x INTEGER); INSERT INTO t2 VALUES (7)" },
    };
    static const struct ps_store_migration bad[] = {
        { 1, "one", "CREATE TABLE t1(x INTEGER)" },
        { 2, "two", "CREATE TABLE t2(x INTEGER); INSERT INTO t2 VALUES (7)" },
        { 3, "three", "CREATE TABLE t3(x INTEGER); INSERT INTO no_such_table VALUES (1)" },
    };
    struct ps_store_config cfg = { .data_dir = dir, .migrations = good, .migration_count = 2 };
    struct ps_store *s;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_open_config(&cfg, &s, &err), 0);
    assert_int_equal(ps_store_schema_version(s), 2);
    assert_int_equal(pragma_int(s, "SELECT x FROM t2"), 7);
    ps_store_close(s);

    /* A failing migration leaves nothing of itself behind and the version as it was. */
    cfg.migrations = bad;
    cfg.migration_count = 3;
    ps_error_init(&err);
    assert_int_equal(ps_store_open_config(&cfg, &s, &err), PS_EIO);
    assert_null(s);
    assert_non_null(strstr(err.msg, "migration 3 (three) of the store schema failed"));
    assert_non_null(strstr(err.msg, "no such table: no_such_table"));
    cfg.migrations = good;
    cfg.migration_count = 2;
    assert_int_equal(ps_store_open_config(&cfg, &s, &err), 0);
    assert_int_equal(ps_store_schema_version(s), 2);
    assert_int_equal(pragma_int(s, "SELECT count(*) FROM sqlite_master WHERE name = 't3'"), 0);
    assert_int_equal(pragma_int(s, "SELECT count(*) FROM t2"), 1);   /* not re-run */
    ps_store_close(s);

    /* A database from a newer version is refused. */
    cfg.migration_count = 1;
    ps_error_init(&err);
    assert_int_equal(ps_store_open_config(&cfg, &s, &err), PS_ESTATE);
    assert_non_null(strstr(err.msg, "has schema version 2, newer than this poolsched knows (1)"));
    remove_store_dir(dir, NULL);
}

/* ---- crash test ---------------------------------------------------------------------------- */

enum { CRASH_TX = 100000, KILL_AFTER_ACKS = 150, ROWS_PER_TX = 3 };

/* The child: one transaction of ROWS_PER_TX rows per i; i goes to the parent only after the
 * commit has returned. Never returns. */
static void crash_child(const char *dir, int ack_fd, int first)
{
    struct ps_store *s;
    if (ps_store_open(dir, &s, NULL) != 0)
        _exit(2);
    for (int i = first; i < first + CRASH_TX; i++) {
        if (ps_store_begin(s, NULL) != 0)
            _exit(3);
        for (int r = 0; r < ROWS_PER_TX; r++) {
            char key[32], value[64];
            snprintf(key, sizeof key, "t%07d/%d", i, r);
            snprintf(value, sizeof value, "{\"i\":%d,\"r\":%d}", i, r);
            if (ps_store_put(s, "crash", key, value, NULL) != 0)
                _exit(4);
        }
        if (ps_store_commit(s, NULL) != 0)
            _exit(5);
        if (write(ack_fd, &i, sizeof i) != (ssize_t)sizeof i)
            _exit(6);
    }
    _exit(0);
}

static int row_present(struct ps_store *s, int i, int r)
{
    char key[32];
    snprintf(key, sizeof key, "t%07d/%d", i, r);
    char *v;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_store_get(s, "crash", key, &v, &err);
    if (rc == PS_ENOENT)
        return 0;
    if (rc)
        fail_msg("reading %s after the crash: %s", key, err.msg);
    char want[64];
    snprintf(want, sizeof want, "{\"i\":%d,\"r\":%d}", i, r);
    assert_string_equal(v, want);
    free(v);
    return 1;
}

/* Runs one child from transaction first on, kills it after KILL_AFTER_ACKS acks; returns the
 * last acknowledged transaction. */
static int crash_round(const char *dir, int first)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        crash_child(dir, fds[1], first);
    }
    close(fds[1]);
    int last = first - 1, acks = 0, i;
    while (acks < KILL_AFTER_ACKS && read(fds[0], &i, sizeof i) == (ssize_t)sizeof i) {
        assert_int_equal(i, last + 1);
        last = i;
        acks++;
    }
    assert_int_equal(acks, KILL_AFTER_ACKS);   /* the child did not die by itself */
    assert_int_equal(kill(pid, SIGKILL), 0);
    /* Acks written before the kill are acknowledged commits too: drain them. */
    while (read(fds[0], &i, sizeof i) == (ssize_t)sizeof i) {
        assert_int_equal(i, last + 1);
        last = i;
    }
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    return last;
}

static void test_crash_keeps_acknowledged_commits(void **state)
{
    (void)state;
    char *dir = make_store_dir("store");
    /* Create the schema once, then close: the children must not inherit an open connection. */
    ps_store_close(open_ok(dir));
    int next = 0;
    for (int round = 0; round < 3; round++) {
        int last_acked = crash_round(dir, next);
        struct ps_store *s = open_ok(dir);
        struct ps_error err;
        ps_error_init(&err);
        if (ps_store_integrity_check(s, &err) != 0)
            fail_msg("round %d: %s", round, err.msg);
        /* Every acknowledged transaction is there in full. */
        for (int i = 0; i <= last_acked; i++)
            for (int r = 0; r < ROWS_PER_TX; r++)
                if (!row_present(s, i, r))
                    fail_msg("round %d: acknowledged row %d/%d is missing", round, i, r);
        /* At most the one unacknowledged transaction in progress made it, and atomically. */
        int in_progress = 0;
        for (int r = 0; r < ROWS_PER_TX; r++)
            in_progress += row_present(s, last_acked + 1, r);
        assert_true(in_progress == 0 || in_progress == ROWS_PER_TX);
        for (int r = 0; r < ROWS_PER_TX; r++)
            assert_int_equal(row_present(s, last_acked + 2, r), 0);
        ps_store_close(s);
        next = last_acked + 1 + (in_progress ? 1 : 0);
    }
    remove_store_dir(dir, NULL);
}

/* Writes zeros to dir/fill until the file system is full. */
static void fill_fs(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/fill", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    static char block[4096];
    while (write(fd, block, sizeof block) > 0)
        ;
    close(fd);
}

/* A full disk: the transaction fails with PS_ENOSPC (not a generic I/O error), leaves the
 * database as it was (readable, the earlier commit intact, nothing of the failed one), and the
 * same transaction commits once space is freed, on the same connection. */
static void test_full_disk(void **state)
{
    (void)state;
    char *dir = make_store_dir("store_full");
    if (geteuid() != 0 || mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0700") != 0) {
        rmdir(dir);
        free(dir);
        skip();
    }
    struct ps_store *s = open_ok(dir);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_put(s, "k", "before", "{\"v\": 1}", &err), 0);
    fill_fs(dir);
    size_t big = 256 * 1024;
    char *value = malloc(big + 16);
    assert_non_null(value);
    memset(value, 'x', big + 16);
    value[0] = '"';
    value[big] = '"';
    value[big + 1] = 0;
    int rc = ps_store_begin(s, &err);
    if (rc == 0)
        rc = ps_store_put(s, "k", "big", value, &err);
    if (rc == 0)
        rc = ps_store_commit(s, &err);
    assert_int_equal(rc, PS_ENOSPC);
    assert_non_null(strstr(err.msg, "full"));
    assert_int_equal(ps_store_rollback(s, NULL), 0);
    char *v = get_ok(s, "k", "before");
    assert_string_equal(v, "{\"v\": 1}");
    free(v);
    assert_int_equal(ps_store_get(s, "k", "big", &v, NULL), PS_ENOENT);
    char path[512];
    snprintf(path, sizeof path, "%s/fill", dir);
    assert_int_equal(unlink(path), 0);
    ps_error_init(&err);
    rc = ps_store_begin(s, &err);
    if (rc == 0)
        rc = ps_store_put(s, "k", "big", value, &err);
    if (rc == 0)
        rc = ps_store_commit(s, &err);
    if (rc != 0)
        fail_msg("after space returned: %s", err.msg);
    free(get_ok(s, "k", "big"));
    ps_store_close(s);
    free(value);
    assert_int_equal(umount(dir), 0);
    assert_int_equal(rmdir(dir), 0);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_close_reopen),
        cmocka_unit_test(test_transactions),
        cmocka_unit_test(test_list_by_prefix),
        cmocka_unit_test(test_migrations),
        cmocka_unit_test(test_crash_keeps_acknowledged_commits),
        cmocka_unit_test(test_full_disk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
