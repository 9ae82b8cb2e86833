/* The store's one interface (store.h), the same checks on each backend: SQLite in a scratch
 * dir always, PostgreSQL when PS_TEST_PG_URL names a database (tests/scripts/store_pg_services.sh
 * starts a throwaway cluster and runs this binary with it). Objects (put, get, delete, bytewise
 * prefix listing), transactions (commit, rollback, a second connection sees commits only),
 * refused values, tokens, the jobs of one operation in both orders, a copy of every object
 * into a store in memory, reopening (migrations run
 * once), and for PostgreSQL a bad URI, an unreachable server and the single-scheduler guard. Keys carry the process id so
 * that a database reused by another run does not disturb this one. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "server/store.h"
#include "server/store_backend.h"
#include "store_test_dir.h"

struct backend {
    const char *url;   /* NULL: SQLite in dir */
    char *dir;
};

static struct backend B;
static char K[64];   /* this run's kind: "t<pid>" */

static struct ps_store *open_ok(void)
{
    struct ps_store *s;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_store_open_url(B.url, B.dir, &s, &err) != 0)
        fail_msg("open: %s", err.msg);
    /* PS_TEST_WEAK_FENCE=key_share|none: the fence weakened, which test_leader must notice
     * (store_pg_services.sh runs it so) */
    const char *weak = getenv("PS_TEST_WEAK_FENCE");
    if (B.url && weak && *weak && ps_store_pg_weaken_fence(s, weak) != 0)
        fail_msg("PS_TEST_WEAK_FENCE=%s: not key_share or none", weak);
    return s;
}

static void put_ok(struct ps_store *s, const char *kind, const char *key, const char *value)
{
    struct ps_error err;
    ps_error_init(&err);
    if (ps_store_put(s, kind, key, value, &err) != 0)
        fail_msg("put %s/%s: %s", kind, key, err.msg);
}

static int get_rc(struct ps_store *s, const char *key, char **v)
{
    return ps_store_get(s, K, key, v, NULL);
}

struct seen {
    char keys[16][64];
    int n;
};

static int collect(const char *key, const char *value, void *ctx)
{
    struct seen *s = ctx;
    assert_non_null(value);
    assert_true(s->n < 16);
    snprintf(s->keys[s->n++], sizeof s->keys[0], "%s", key);
    return 0;
}

static void test_objects(void **state)
{
    (void)state;
    struct ps_store *s = open_ok();
    printf("backend: %s at %s\n", ps_store_backend(s), ps_store_path(s));
    assert_int_equal(ps_store_schema_version(s), B.url ? 6 : 3);   /* 4-6: leader election */
    put_ok(s, K, "a", "{\"x\": 1}");
    put_ok(s, K, "a", "{\"x\": 2}");   /* replaces */
    char *v = NULL;
    assert_int_equal(get_rc(s, "a", &v), 0);
    assert_string_equal(v, "{\"x\": 2}");   /* the text as written */
    free(v);
    assert_int_equal(get_rc(s, "none", &v), PS_ENOENT);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_put(s, K, "bad", "{not json", &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "not valid JSON"));
    assert_int_equal(ps_store_put(s, K, "", "1", NULL), PS_EINVAL);
    assert_int_equal(ps_store_delete(s, K, "a", NULL), 0);
    assert_int_equal(ps_store_delete(s, K, "a", NULL), PS_ENOENT);

    /* prefix listing is bytewise: upper case before lower, "p\u00e9" (bytes c3 a9) after
     * "p/b" and inside prefix "p", "q" out */
    const char *keys[] = {"p/b", "p/B", "p/a", "p\xc3\xa9", "q", "o", "p"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        put_ok(s, K, keys[i], "true");
    struct seen seen = {0};
    assert_int_equal(ps_store_list(s, K, "p", collect, &seen, NULL), 0);
    assert_int_equal(seen.n, 5);
    assert_string_equal(seen.keys[0], "p");
    assert_string_equal(seen.keys[1], "p/B");
    assert_string_equal(seen.keys[2], "p/a");
    assert_string_equal(seen.keys[3], "p/b");
    assert_string_equal(seen.keys[4], "p\xc3\xa9");
    memset(&seen, 0, sizeof seen);
    assert_int_equal(ps_store_list(s, K, "p/", collect, &seen, NULL), 0);
    assert_int_equal(seen.n, 3);
    memset(&seen, 0, sizeof seen);
    assert_int_equal(ps_store_list(s, K, NULL, collect, &seen, NULL), 0);
    assert_int_equal(seen.n, 7);
    assert_string_equal(seen.keys[0], "o");
    ps_store_close(s);
}

static void test_transactions(void **state)
{
    (void)state;
    struct ps_store *w = open_ok(), *r = open_ok();
    char *v = NULL;
    assert_int_equal(ps_store_begin(w, NULL), 0);
    assert_int_equal(ps_store_begin(w, NULL), PS_ESTATE);
    assert_true(ps_store_in_transaction(w));
    put_ok(w, K, "tx1", "1");
    assert_int_equal(get_rc(r, "tx1", &v), PS_ENOENT);   /* not before the commit */
    assert_int_equal(ps_store_commit(w, NULL), 0);
    assert_false(ps_store_in_transaction(w));
    assert_int_equal(get_rc(r, "tx1", &v), 0);
    free(v);

    assert_int_equal(ps_store_begin(w, NULL), 0);
    put_ok(w, K, "tx2", "2");
    assert_int_equal(ps_store_delete(w, K, "tx1", NULL), 0);
    assert_int_equal(ps_store_rollback(w, NULL), 0);
    assert_int_equal(ps_store_rollback(w, NULL), 0);   /* none open: a no-op */
    assert_int_equal(get_rc(r, "tx2", &v), PS_ENOENT);
    assert_int_equal(get_rc(w, "tx1", &v), 0);
    free(v);
    assert_int_equal(ps_store_commit(w, NULL), PS_ESTATE);
    ps_store_close(r);
    ps_store_close(w);

    /* reopened: the data is there, the migrations do not run again */
    struct ps_store *s = open_ok();
    assert_int_equal(get_rc(s, "tx1", &v), 0);
    free(v);
    ps_store_close(s);
}

static void test_tokens(void **state)
{
    (void)state;
    struct ps_store *s = open_ok();
    char hash[65];
    snprintf(hash, sizeof hash, "%064x", (unsigned)getpid());
    char h[80], user[64], role[16];
    assert_int_equal(ps_store_token_put(s, hash, "alice", "user", NULL), 0);
    assert_int_equal(ps_store_token_put(s, hash, "bob", "admin", NULL), PS_EEXIST);
    assert_int_equal(ps_store_token_put(s, "short", "bob", "admin", NULL), PS_EINVAL);
    assert_int_equal(ps_store_token_get(s, hash, h, sizeof h, user, sizeof user, role,
                                        sizeof role, NULL),
                     0);
    assert_string_equal(h, hash);
    assert_string_equal(user, "alice");
    assert_string_equal(role, "user");
    assert_int_equal(ps_store_token_delete(s, hash, NULL), 0);
    assert_int_equal(ps_store_token_delete(s, hash, NULL), PS_ENOENT);
    assert_int_equal(ps_store_token_get(s, hash, h, sizeof h, user, sizeof user, role,
                                        sizeof role, NULL),
                     PS_ENOENT);
    ps_store_close(s);
}

static void test_jobs(void **state)
{
    (void)state;
    struct ps_store *s = open_ok();
    char op[64], other[64], doc[256], key[64];
    snprintf(op, sizeof op, "op-%d", (int)getpid());
    snprintf(other, sizeof other, "other-%d", (int)getpid());
    const struct { const char *id; const char *op; long long finish; } jobs[] = {
        {"j3", op, 30}, {"j1", op, 50}, {"j2", other, 10}, {"j4", op, -1}, {"j5", op, 100},
    };
    for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
        snprintf(key, sizeof key, "%s-%d", jobs[i].id, (int)getpid());
        snprintf(doc, sizeof doc, "{\"operation_id\": \"%s\", \"finish_time\": %lld}",
                 jobs[i].op, jobs[i].finish);
        put_ok(s, "job", key, doc);
    }
    struct seen seen = {0};
    assert_int_equal(ps_store_jobs_of_operation(s, op, PS_STORE_JOBS_BY_KEY, collect, &seen,
                                                NULL),
                     0);
    assert_int_equal(seen.n, 4);
    assert_true(strncmp(seen.keys[0], "j1-", 3) == 0);
    assert_true(strncmp(seen.keys[3], "j5-", 3) == 0);
    memset(&seen, 0, sizeof seen);
    assert_int_equal(ps_store_jobs_of_operation(s, op, PS_STORE_JOBS_BY_FINISH, collect, &seen,
                                                NULL),
                     0);
    assert_int_equal(seen.n, 4);
    /* numeric order of finish_time (100 after 50, not before as text would put it) */
    assert_true(strncmp(seen.keys[0], "j4-", 3) == 0);
    assert_true(strncmp(seen.keys[1], "j3-", 3) == 0);
    assert_true(strncmp(seen.keys[2], "j1-", 3) == 0);
    assert_true(strncmp(seen.keys[3], "j5-", 3) == 0);
    ps_store_close(s);
}

static void test_bad_url(void **state)
{
    (void)state;
    struct ps_store *s = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_open_url("mysql://x", B.dir, &s, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "postgresql://"));
    if (!B.url)
        return;
    ps_error_init(&err);
    assert_int_equal(ps_store_open_url("postgresql://u@127.0.0.1:1/db?no_such_option=1", B.dir,
                                       &s, &err),
                     PS_EINVAL);
    ps_error_init(&err);
    /* port 1 on loopback: nobody listens, the connection is refused at once */
    assert_int_equal(ps_store_open_url("postgresql://u:secret@127.0.0.1:1/db", B.dir, &s, &err),
                     PS_EUNAVAIL);
    assert_non_null(strstr(err.msg, "store unavailable"));
    assert_null(strstr(err.msg, "secret"));   /* the password is not in messages */
    assert_null(s);
}

/* PostgreSQL: one exclusive store per database (a second scheduler is refused); plain stores
 * (the job archive's reader) open beside it; closing frees it. */
static void test_exclusive(void **state)
{
    (void)state;
    if (!B.url)
        return;
    struct ps_store_config cfg = {.data_dir = B.dir, .url = B.url, .exclusive = true};
    struct ps_store *a = NULL, *b = NULL, *r = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_open_config(&cfg, &a, &err), 0);
    assert_int_equal(ps_store_open_config(&cfg, &b, &err), PS_ESTATE);
    assert_non_null(strstr(err.msg, "in use by another scheduler"));
    r = open_ok();
    ps_store_close(r);
    ps_store_close(a);
    ps_error_init(&err);
    assert_int_equal(ps_store_open_config(&cfg, &b, &err), 0);
    ps_store_close(b);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct takeover {
    struct ps_store *store;
    int64_t epoch;
    int rc;
    double done_at;
};

static void *take_over(void *arg)
{
    struct takeover *t = arg;
    t->rc = ps_store_leader_acquire(t->store, "b", "127.0.0.1:2", 60000, &t->epoch, NULL);
    t->done_at = now_s();
    return NULL;
}

/* Leader election and the fence. SQLite: not supported. PostgreSQL: a live lease is not taken;
 * an expired one is, with epoch + 1; a takeover waits for the old leader's write transaction in
 * flight (the fence's FOR SHARE row lock), which therefore commits before the takeover; after
 * it, every write of the old epoch fails and the store says it was deposed; a leader stuck
 * inside a transaction past its lease has its session ended by the takeover. Run with
 * PS_TEST_WEAK_FENCE=key_share this test fails: the takeover no longer waits. */
static void test_leader(void **state)
{
    (void)state;
    struct ps_store *a = open_ok(), *wa = open_ok(), *b = open_ok();
    int64_t e1 = 0, e2 = 0;
    struct ps_error err;
    ps_error_init(&err);
    if (!B.url) {
        assert_int_equal(ps_store_leader_acquire(a, "a", "x", 1000, &e1, &err), PS_EINVAL);
        assert_non_null(strstr(err.msg, "PostgreSQL"));
        ps_store_close(b);
        ps_store_close(wa);
        ps_store_close(a);
        return;
    }
    struct ps_store_leader l;
    assert_int_equal(ps_store_leader_get(a, &l, NULL), 0);
    int64_t e0 = l.epoch;
    assert_int_equal(ps_store_leader_acquire(a, "a", "127.0.0.1:1", 800, &e1, &err), 0);
    assert_int_equal(e1, e0 + 1);
    ps_error_init(&err);
    assert_int_equal(ps_store_leader_acquire(b, "b", "127.0.0.1:2", 800, &e2, &err), PS_ESTATE);
    assert_non_null(strstr(err.msg, "a (127.0.0.1:1) leads"));
    assert_int_equal(ps_store_leader_renew(a, e1, 800, NULL), 0);
    assert_int_equal(ps_store_leader_get(b, &l, NULL), 0);
    assert_int_equal(l.epoch, e1);
    assert_string_equal(l.holder, "a");
    assert_true(l.lease_left_ms > 0 && l.lease_left_ms <= 800);
    assert_int_equal(l.standbys, 1);   /* b, which tried and is standing by */

    ps_store_fence(wa, e1);
    put_ok(wa, K, "fenced", "1");   /* outside a transaction: its own, fenced */
    usleep(900 * 1000);              /* the lease expires (a paused leader) */

    /* the old leader is inside a write transaction when the standby takes over */
    assert_int_equal(ps_store_begin(wa, NULL), 0);
    put_ok(wa, K, "in_flight", "1");
    struct takeover t = {b, 0, 1, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, take_over, &t), 0);
    usleep(500 * 1000);
    double committed_at = now_s();
    assert_int_equal(ps_store_commit(wa, NULL), 0);
    pthread_join(th, NULL);
    assert_int_equal(t.rc, 0);
    assert_int_equal(t.epoch, e1 + 1);
    /* the takeover waited for the commit: the old epoch's last write is before it */
    assert_true(t.done_at >= committed_at);

    /* after the takeover nothing of the old epoch is written, and it knows */
    assert_false(ps_store_deposed(wa));
    ps_error_init(&err);
    assert_int_equal(ps_store_put(wa, K, "late", "1", &err), PS_ESTATE);
    assert_non_null(strstr(err.msg, "deposed"));
    assert_true(ps_store_deposed(wa));
    assert_int_equal(ps_store_begin(wa, NULL), PS_ESTATE);
    assert_int_equal(ps_store_leader_renew(a, e1, 800, NULL), PS_ESTATE);
    char *v = NULL;
    assert_int_equal(get_rc(b, "late", &v), PS_ENOENT);
    assert_int_equal(get_rc(b, "in_flight", &v), 0);
    free(v);
    /* the new leader's fenced writes go through */
    ps_store_fence(b, t.epoch);
    put_ok(b, K, "new", "1");
    /* a leader stuck inside a transaction past its lease (paused mid-statement, where the
     * server's idle-in-transaction timeout does not apply) does not hold the takeover up: its
     * session is ended, its transaction rolls back */
    assert_int_equal(ps_store_leader_renew(b, t.epoch, 300, NULL), 0);
    assert_int_equal(ps_store_begin(b, NULL), 0);
    put_ok(b, K, "stuck", "1");
    usleep(1300 * 1000);
    double t0 = now_s();
    int64_t e3 = 0;
    assert_int_equal(ps_store_leader_acquire(a, "a", "127.0.0.1:1", 60000, &e3, NULL), 0);
    assert_int_equal(e3, t.epoch + 1);
    assert_true(now_s() - t0 < 1.0);
    assert_int_not_equal(ps_store_commit(b, NULL), 0);
    ps_store_rollback(b, NULL);
    assert_int_equal(get_rc(a, "stuck", &v), PS_ENOENT);
    /* hand the row back expired, for a later run on the same database */
    assert_int_equal(ps_store_leader_renew(a, e3, 0, NULL), 0);
    ps_store_close(b);
    ps_store_close(wa);
    ps_store_close(a);
}
/* ps_store_copy_objects into ps_store_open_memory (the leader's mirror, store_mirror.h): every
 * object of every kind, values as written; the job query works on the copy; not tokens. */
static void test_copy_to_memory(void **state)
{
    (void)state;
    struct ps_store *s = open_ok(), *m = NULL;
    char kind2[80];
    snprintf(kind2, sizeof kind2, "%s_other", K);
    put_ok(s, K, "c1", "{\"v\": 1}");
    put_ok(s, kind2, "c2", "[1, 2]");
    char op[64], key[64], doc[128];
    snprintf(op, sizeof op, "copyop-%d", (int)getpid());
    snprintf(key, sizeof key, "cj-%d", (int)getpid());
    snprintf(doc, sizeof doc, "{\"operation_id\": \"%s\", \"finish_time\": 7}", op);
    put_ok(s, "job", key, doc);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_open_memory(&m, &err), 0);
    assert_string_equal(ps_store_backend(m), "sqlite");
    assert_int_equal(ps_store_copy_objects(s, m, &err), 0);
    char *v = NULL;
    assert_int_equal(ps_store_get(m, K, "c1", &v, NULL), 0);
    assert_string_equal(v, "{\"v\": 1}");
    free(v);
    assert_int_equal(ps_store_get(m, kind2, "c2", &v, NULL), 0);
    assert_string_equal(v, "[1, 2]");
    free(v);
    struct seen seen = {0};
    assert_int_equal(ps_store_jobs_of_operation(m, op, PS_STORE_JOBS_BY_FINISH, collect, &seen,
                                                NULL),
                     0);
    assert_int_equal(seen.n, 1);
    assert_string_equal(seen.keys[0], key);
    char hash[65], user[64], role[16];
    snprintf(hash, sizeof hash, "c%063x", (unsigned)getpid());
    assert_int_equal(ps_store_token_put(s, hash, "u", "user", NULL), 0);
    ps_store_close(m);
    assert_int_equal(ps_store_open_memory(&m, &err), 0);   /* a fresh one is empty */
    assert_int_equal(ps_store_get(m, K, "c1", &v, NULL), PS_ENOENT);
    assert_int_equal(ps_store_copy_objects(s, m, &err), 0);
    assert_int_equal(ps_store_token_get(m, hash, hash, sizeof hash, user, sizeof user, role,
                                        sizeof role, NULL),
                     PS_ENOENT);
    ps_store_close(m);
    ps_store_close(s);
}

static int run(const char *url)
{
    B.url = url;
    B.dir = make_store_dir("store_iface");
    snprintf(K, sizeof K, "t%d", (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_transactions),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_jobs),
        cmocka_unit_test(test_copy_to_memory),
        cmocka_unit_test(test_bad_url),
        cmocka_unit_test(test_exclusive),
        cmocka_unit_test(test_leader),
    };
    int failed = cmocka_run_group_tests_name(url ? "store on postgresql" : "store on sqlite",
                                             tests, NULL, NULL);
    remove_store_dir(B.dir, NULL);
    return failed;
}

int main(void)
{
    int failed = run(NULL);
    const char *pg = getenv("PS_TEST_PG_URL");
    if (pg && *pg)
        failed += run(pg);
    return failed ? 1 : 0;
}
