/* The journal's rendered records (journal.h, ps_journal_put_aside_rendered; the event log's
 * state rows): their text is made off every lock by a thread of their own and queued when
 * made, so the records appended meanwhile neither wait for it nor commit with it; a later
 * record of the same key cancels it; a stop renders and writes what is queued. On an
 * in-process service (no HTTP); what landed is read back from its store after the stop. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "service_test.h"
#include "server/journal.h"
#include "server/service_state.h"
#include "server/store.h"

/* A render that waits (at most 3 s) until released, then gives text. */
struct slow {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool released;
    _Atomic bool rendered, dropped;
    const char *text;
};

static char *slow_text(void *ctx)
{
    struct slow *s = ctx;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 3;
    pthread_mutex_lock(&s->mu);
    while (!s->released && pthread_cond_timedwait(&s->cv, &s->mu, &until) == 0) {
    }
    pthread_mutex_unlock(&s->mu);
    atomic_store(&s->rendered, true);
    return strdup(s->text);
}

static void slow_drop(void *ctx)
{
    struct slow *s = ctx;
    atomic_store(&s->dropped, true);
}

static const struct ps_journal_renderer slow_renderer = {slow_text, slow_drop};

static void slow_init(struct slow *s, const char *text)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->text = text;
}

static void slow_release(struct slow *s)
{
    pthread_mutex_lock(&s->mu);
    s->released = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The stored value of (test, key) in the stopped service's store at dir, NULL when absent. */
static char *stored(const char *dir, const char *key)
{
    struct ps_store *store = NULL;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_store_open(dir, &store, &err), 0);
    char *value = NULL;
    int rc = ps_store_get(store, "test", key, &value, &err);
    assert_true(rc == 0 || rc == PS_ENOENT);
    ps_store_close(store);
    return rc == 0 ? value : NULL;
}

/* A record appended after a rendered one is durable while that one's text is still being made;
 * the rendered one lands afterwards. */
static void test_later_records_do_not_wait(void **state)
{
    (void)state;
    char *dir = make_store_dir("journal_render");
    struct ps_service *svc = start_service(dir, 1000);
    struct slow s;
    slow_init(&s, "{\"r\": 1}");
    ps_journal_put_aside_rendered(svc->journal, "test", "rendered", &slow_renderer, &s);
    uint64_t t = ps_journal_put(svc->journal, "test", "after", json_pack("{s:i}", "a", 1));
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_journal_wait(svc->journal, t, &err), 0);
    assert_false(atomic_load(&s.rendered));   /* durable before the render ended */
    slow_release(&s);
    ps_service_stop(svc);
    assert_true(atomic_load(&s.rendered) && atomic_load(&s.dropped));
    char *v = stored(dir, "after"), *r = stored(dir, "rendered");
    assert_non_null(v);
    assert_non_null(r);
    assert_string_equal(r, "{\"r\": 1}");
    free(v);
    free(r);
    remove_service_dir(dir);
}

/* A record of the same key appended while the text is being made wins: the rendered one does
 * not land after it (a put), nor bring back what it deleted. */
static void test_later_record_of_its_key_cancels_it(void **state)
{
    (void)state;
    char *dir = make_store_dir("journal_render_cancel");
    struct ps_service *svc = start_service(dir, 1000);
    struct slow a, b;
    slow_init(&a, "{\"old\": 1}");
    slow_init(&b, "{\"old\": 2}");
    ps_journal_put_aside_rendered(svc->journal, "test", "put", &slow_renderer, &a);
    ps_journal_put_aside_rendered(svc->journal, "test", "deleted", &slow_renderer, &b);
    ps_journal_put_aside(svc->journal, "test", "put", json_pack("{s:i}", "new", 1));
    ps_journal_put_aside(svc->journal, "test", "deleted", NULL);
    slow_release(&a);
    slow_release(&b);
    ps_service_stop(svc);
    assert_true(atomic_load(&a.dropped) && atomic_load(&b.dropped));
    char *v = stored(dir, "put");
    assert_non_null(v);
    assert_string_equal(v, "{\"new\":1}");
    free(v);
    assert_null(stored(dir, "deleted"));
    remove_service_dir(dir);
}

/* A stop renders and writes what is still queued. */
static void test_stop_writes_queued_renders(void **state)
{
    (void)state;
    char *dir = make_store_dir("journal_render_stop");
    struct ps_service *svc = start_service(dir, 1000);
    struct slow s;
    slow_init(&s, "{\"last\": true}");
    slow_release(&s);
    ps_journal_put_aside_rendered(svc->journal, "test", "last", &slow_renderer, &s);
    ps_service_stop(svc);
    char *v = stored(dir, "last");
    assert_non_null(v);
    assert_string_equal(v, "{\"last\": true}");
    free(v);
    remove_service_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_later_records_do_not_wait),
        cmocka_unit_test(test_later_record_of_its_key_cancels_it),
        cmocka_unit_test(test_stop_writes_queued_renders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
