/* A real server on 127.0.0.1 (port 0) and the real client: routing, error shapes, limits,
 * concurrency, keep-alive, graceful stop and client errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "platform/clock.h"
#include "platform/http_client.h"
#include "server/http_server.h"
#include "server/metrics.h"

/* ---- fixtures ------------------------------------------------------------------------------ */

struct log_capture {
    pthread_mutex_t mu;
    char text[8192];
};

static void capture_log(void *ctx, const char *line)
{
    struct log_capture *lc = ctx;
    pthread_mutex_lock(&lc->mu);
    size_t used = strlen(lc->text);
    snprintf(lc->text + used, sizeof lc->text - used, "%s\n", line);
    pthread_mutex_unlock(&lc->mu);
}

struct app {
    atomic_int hits;
    pthread_mutex_t mu;           /* guards the gate below (handlers run on pool threads) */
    pthread_cond_t cv;
    int slow_entered;
    int slow_release;
};

static void app_init(struct app *a)
{
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
}

static void h_hello(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    struct app *a = ctx;
    atomic_fetch_add(&a->hits, 1);
    json_t *j = json_pack("{s:s, s:s}", "hello", "world", "method", req->method);
    ps_http_reply_json(resp, 200, j);
    json_decref(j);
}

/* Echoes what the handler saw, so the test can check the request view. */
static void h_echo(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    (void)ctx;
    const char *q = ps_http_request_query(req, "name");
    const char *auth = ps_http_request_header(req, "authorization");
    json_t *j = json_pack("{s:s, s:s, s:s, s:s%, s:s, s:s?, s:s?, s:s}", "method", req->method,
                          "path", req->path, "route", req->route, "body", req->body,
                          req->body_len, "remote", req->remote_addr, "name", q, "auth", auth,
                          "request_id", req->request_id);
    ps_http_reply_json(resp, 200, j);
    json_decref(j);
    ps_http_response_add_header(resp, "X-Echo", "yes");
}

static void h_secret_fail(const struct ps_http_request *req, struct ps_http_response *resp,
                          void *ctx)
{
    (void)req;
    (void)ctx;
    ps_http_reply_error(resp, 500, PS_EIO, "sqlite says: disk I/O error at /secret/path.db");
}

static void h_ps_error(const struct ps_http_request *req, struct ps_http_response *resp,
                       void *ctx)
{
    (void)ctx;
    struct ps_error err;
    ps_error_init(&err);
    const char *kind = ps_http_request_query(req, "kind");
    int code = kind && strcmp(kind, "missing") == 0  ? PS_ENOENT
               : kind && strcmp(kind, "exists") == 0 ? PS_EEXIST
               : kind && strcmp(kind, "perm") == 0   ? PS_EPERM
                                                     : PS_EINVAL;
    ps_error_set(&err, code, "pool 'research' says %s", kind ? kind : "bad");
    ps_http_reply_ps_error(resp, &err);
}

static void h_slow(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    (void)req;
    struct app *a = ctx;
    pthread_mutex_lock(&a->mu);
    a->slow_entered = 1;
    pthread_cond_broadcast(&a->cv);
    while (!a->slow_release)
        pthread_cond_wait(&a->cv, &a->mu);
    pthread_mutex_unlock(&a->mu);
    ps_http_response_set(resp, 200, "text/plain", "done", 4);
}

static void h_sleep(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    (void)req;
    (void)ctx;
    usleep(300 * 1000);
    ps_http_response_set(resp, 200, "text/plain", "late", 4);
}

static void h_nothing(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    (void)req;
    (void)resp;
    (void)ctx;
}

/* Holds the request under ?key= for ?ms= on its first call; the rerun answers why it came. */
static void h_hold(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    (void)ctx;
    if (!req->released) {
        const char *key = ps_http_request_query(req, "key");
        const char *ms = ps_http_request_query(req, "ms");
        int64_t deadline = ps_clock_monotonic_ns() + atoll(ms ? ms : "0") * 1000000;
        if (ps_http_hold(req, resp, key, deadline, 0) == 0)
            return;
        ps_http_response_set(resp, 409, "text/plain", "not held", 8);
        return;
    }
    char text[32];
    int n = snprintf(text, sizeof text, "released=%d", req->released);
    ps_http_response_set(resp, 200, "text/plain", text, (size_t)n);
}

struct fixture {
    struct app app;
    struct log_capture log;
    struct ps_metrics *metrics;
    struct ps_http_server *srv;
    struct ps_http_client *client;
    char base[64];
};

static struct fixture *start(size_t max_body)
{
    struct fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    app_init(&f->app);
    pthread_mutex_init(&f->log.mu, NULL);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_metrics_new(&f->metrics, &err), 0);
    struct ps_http_server_config cfg;
    ps_http_server_config_init(&cfg);
    cfg.port = 0;
    cfg.threads = 4;
    cfg.max_body_bytes = max_body;
    cfg.log = capture_log;
    cfg.log_ctx = &f->log;
    cfg.metrics = f->metrics;
    cfg.drain_timeout_ms = 5000;
    assert_int_equal(ps_http_server_new(&cfg, &f->srv, &err), 0);
    struct {
        const char *method, *pattern;
        enum ps_http_match match;
        ps_http_handler_fn *fn;
    } routes[] = {
        { "GET", "/hello", PS_HTTP_EXACT, h_hello },
        { NULL, "/echo", PS_HTTP_PREFIX, h_echo },
        { "POST", "/api/v1", PS_HTTP_PREFIX, h_echo },
        { "GET", "/api/v1/exact", PS_HTTP_EXACT, h_hello },
        { "GET", "/fail", PS_HTTP_EXACT, h_secret_fail },
        { "GET", "/pserror", PS_HTTP_EXACT, h_ps_error },
        { "GET", "/slow", PS_HTTP_EXACT, h_slow },
        { "GET", "/sleep", PS_HTTP_EXACT, h_sleep },
        { "DELETE", "/nothing", PS_HTTP_EXACT, h_nothing },
        { "GET", "/hold", PS_HTTP_EXACT, h_hold },
    };
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++)
        assert_int_equal(ps_http_server_route(f->srv, routes[i].method, routes[i].pattern,
                                              routes[i].match, routes[i].fn, &f->app, &err),
                         0);
    assert_int_equal(ps_http_server_route(f->srv, "GET", "/hello", PS_HTTP_EXACT, h_hello,
                                          &f->app, &err),
                     PS_EEXIST);
    ps_error_init(&err);
    assert_int_equal(ps_http_server_start(f->srv, &err), 0);
    assert_true(ps_http_server_port(f->srv) > 0);
    snprintf(f->base, sizeof f->base, "http://127.0.0.1:%u", ps_http_server_port(f->srv));
    assert_int_equal(ps_http_client_new(&f->client, &err), 0);
    return f;
}

static void finish(struct fixture *f)
{
    ps_http_client_free(f->client);
    ps_http_server_free(f->srv);
    ps_metrics_free(f->metrics);
    free(f);
}

static json_t *get_json(struct fixture *f, const char *path, long expect_status)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", f->base, path);
    struct ps_http_result res;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_http_client_get(f->client, url, &res, &err), 0);
    assert_int_equal(res.status, expect_status);
    assert_string_equal(res.content_type, "application/json");
    json_t *j;
    assert_int_equal(ps_http_result_json(&res, url, &j, &err), 0);
    return j;
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_routes_and_request_view(void **state)
{
    (void)state;
    struct fixture *f = start(0);
    json_t *j = get_json(f, "/hello", 200);
    assert_string_equal(json_string_value(json_object_get(j, "hello")), "world");
    json_decref(j);

    /* Prefix route: any method, decoded query, header, remote address. */
    assert_int_equal(ps_http_client_set_token(f->client, "tok123", NULL), 0);
    j = get_json(f, "/echo/a/b?name=caf%C3%A9&x=1", 200);
    assert_string_equal(json_string_value(json_object_get(j, "path")), "/echo/a/b");
    assert_string_equal(json_string_value(json_object_get(j, "route")), "/echo");
    assert_string_equal(json_string_value(json_object_get(j, "name")), "caf\xc3\xa9");
    assert_string_equal(json_string_value(json_object_get(j, "auth")), "OAuth tok123");
    assert_string_equal(json_string_value(json_object_get(j, "remote")), "127.0.0.1");
    assert_string_equal(json_string_value(json_object_get(j, "method")), "GET");
    assert_int_equal(strncmp(json_string_value(json_object_get(j, "request_id")), "r-", 2), 0);
    json_decref(j);
    ps_http_client_set_token(f->client, NULL, NULL);

    /* Exact beats prefix; the prefix matches only at a '/' boundary. */
    j = get_json(f, "/api/v1/exact", 200);
    assert_string_equal(json_string_value(json_object_get(j, "hello")), "world");
    json_decref(j);
    j = get_json(f, "/echox", 404);
    json_decref(j);

    /* POST with a JSON body reaches the handler unchanged. */
    char url[256];
    snprintf(url, sizeof url, "%s/api/v1/set", f->base);
    json_t *body = json_pack("{s:s, s:i}", "path", "//sys/pools/a/@weight", "value", 3);
    struct ps_http_result res;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_http_client_post_json(f->client, url, body, &res, &err), 0);
    assert_int_equal(res.status, 200);
    json_t *echo;
    assert_int_equal(ps_http_result_json(&res, url, &echo, &err), 0);
    json_t *sent = json_loads(json_string_value(json_object_get(echo, "body")), 0, NULL);
    assert_non_null(sent);
    assert_true(json_equal(sent, body));
    assert_string_equal(json_string_value(json_object_get(echo, "route")), "/api/v1");
    json_decref(sent);
    json_decref(echo);
    json_decref(body);

    /* A handler that sets nothing answers 204 with no body. */
    snprintf(url, sizeof url, "%s/nothing", f->base);
    assert_int_equal(ps_http_client_request(f->client, "DELETE", url, NULL, NULL, 0, &res, &err),
                     0);
    assert_int_equal(res.status, 204);
    assert_int_equal(res.body_len, 0);
    assert_int_equal(atomic_load(&f->app.hits), 2);
    finish(f);
}

static void test_error_shapes(void **state)
{
    (void)state;
    struct fixture *f = start(0);
    json_t *j = get_json(f, "/no/such/thing", 404);
    assert_int_equal(json_integer_value(json_object_get(j, "code")), PS_ENOENT);
    assert_string_equal(json_string_value(json_object_get(j, "message")),
                        "no such endpoint: GET /no/such/thing");
    assert_string_equal(json_string_value(json_object_get(j, "error")), "not found");
    assert_int_equal(json_object_size(j), 3);
    json_decref(j);

    /* A known path with the wrong method: 405 with Allow. */
    char url[256];
    snprintf(url, sizeof url, "%s/hello", f->base);
    struct ps_http_result res;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_http_client_post_json(f->client, url, NULL, &res, &err), 0);
    assert_int_equal(res.status, 405);
    assert_non_null(strstr(res.body, "allowed: GET"));

    /* ps_error codes map to statuses and keep the message. */
    static const struct { const char *kind; long status; int code; } cases[] = {
        { "bad", 400, PS_EINVAL }, { "perm", 403, PS_EPERM },
        { "missing", 404, PS_ENOENT }, { "exists", 409, PS_EEXIST },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[64];
        snprintf(path, sizeof path, "/pserror?kind=%s", cases[i].kind);
        j = get_json(f, path, cases[i].status);
        assert_int_equal(json_integer_value(json_object_get(j, "code")), cases[i].code);
        assert_string_equal(json_string_value(json_object_get(j, "error")),
                            ps_error_code_name(cases[i].code));
        char want[64];
        snprintf(want, sizeof want, "pool 'research' says %s", cases[i].kind);
        assert_string_equal(json_string_value(json_object_get(j, "message")), want);
        json_decref(j);
    }

    /* 500 hides the message from the client but logs it with the request id. */
    j = get_json(f, "/fail", 500);
    const char *rid = json_string_value(json_object_get(j, "request_id"));
    assert_non_null(rid);
    const char *msg = json_string_value(json_object_get(j, "message"));
    assert_null(strstr(msg, "secret"));
    assert_null(strstr(msg, "sqlite"));
    char want[96];
    snprintf(want, sizeof want, "internal error (request %s)", rid);
    assert_string_equal(msg, want);
    pthread_mutex_lock(&f->log.mu);
    char line[256];
    snprintf(line, sizeof line, "request %s: 500: sqlite says: disk I/O error at /secret/path.db",
             rid);
    assert_non_null(strstr(f->log.text, line));
    pthread_mutex_unlock(&f->log.mu);
    json_decref(j);
    finish(f);
}

static void test_body_limit(void **state)
{
    (void)state;
    struct fixture *f = start(1024);
    char url[256];
    snprintf(url, sizeof url, "%s/api/v1/set", f->base);
    char *big = malloc(4096);
    memset(big, 'x', 4096);
    struct ps_http_result res;
    struct ps_error err;
    ps_error_init(&err);
    /* At the limit: accepted. */
    assert_int_equal(ps_http_client_request(f->client, "POST", url, "text/plain", big, 1024, &res,
                                            &err), 0);
    assert_int_equal(res.status, 200);
    /* Over it (Content-Length known): 413 before the body is read. */
    assert_int_equal(ps_http_client_request(f->client, "POST", url, "text/plain", big, 1025, &res,
                                            &err), 0);
    assert_int_equal(res.status, 413);
    json_t *j;
    assert_int_equal(ps_http_result_json(&res, url, &j, &err), 0);
    assert_int_equal(json_integer_value(json_object_get(j, "code")), PS_ELIMIT);
    assert_string_equal(json_string_value(json_object_get(j, "error")), "limit exceeded");
    assert_string_equal(json_string_value(json_object_get(j, "message")),
                        "request body of 1025 bytes exceeds the limit of 1024");
    json_decref(j);
    /* The client still works afterwards (a new connection if the server closed the old). */
    assert_int_equal(ps_http_client_get(f->client, url, &res, &err), 0);
    assert_int_equal(res.status, 405);

    /* A chunked body (no Content-Length) that grows past the limit: 413 too. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(ps_http_server_port(f->srv)) };
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    const char *head = "POST /api/v1/set HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_int_equal(write(fd, head, strlen(head)), (ssize_t)strlen(head));
    char chunk[600];
    int hn = snprintf(chunk, sizeof chunk, "200\r\n");   /* 512 bytes per chunk */
    memset(chunk + hn, 'y', 512);
    memcpy(chunk + hn + 512, "\r\n", 2);
    for (int i = 0; i < 3; i++)
        assert_int_equal(write(fd, chunk, (size_t)hn + 514), hn + 514);
    assert_int_equal(write(fd, "0\r\n\r\n", 5), 5);
    char reply[2048] = { 0 };
    size_t got = 0;
    ssize_t n;
    while (got < sizeof reply - 1 && (n = read(fd, reply + got, sizeof reply - 1 - got)) > 0) {
        got += (size_t)n;
        if (strstr(reply, "\r\n\r\n") && strstr(reply, "}"))
            break;
    }
    close(fd);
    assert_non_null(strstr(reply, "HTTP/1.1 413"));
    assert_non_null(strstr(reply, "exceeds the limit of 1024 bytes"));
    free(big);
    finish(f);
}

struct load_arg {
    const char *base;
    int requests;
    int ok;
    int failed;
    char first_error[PS_ERROR_MSG_MAX + 32];
};

/* No cmocka asserts off the main thread: count and report instead. */
static void *load_thread(void *p)
{
    struct load_arg *a = p;
    struct ps_http_client *c;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_http_client_new(&c, &err) != 0) {
        a->failed = a->requests;
        snprintf(a->first_error, sizeof a->first_error, "%s", err.msg);
        return NULL;
    }
    char url[128];
    snprintf(url, sizeof url, "%s/hello", a->base);
    for (int i = 0; i < a->requests; i++) {
        struct ps_http_result res;
        ps_error_init(&err);
        if (ps_http_client_get(c, url, &res, &err) == 0 && res.status == 200 &&
            strstr(res.body, "\"hello\":\"world\"")) {
            a->ok++;
        } else {
            if (!a->failed)
                snprintf(a->first_error, sizeof a->first_error, "%s (status %ld)", err.msg,
                         res.status);
            a->failed++;
        }
    }
    ps_http_client_free(c);
    return NULL;
}

static void test_concurrent_clients_and_keepalive(void **state)
{
    (void)state;
    struct fixture *f = start(0);
    enum { THREADS = 8, EACH = 200 };
    pthread_t t[THREADS];
    struct load_arg args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (struct load_arg){ .base = f->base, .requests = EACH };
        assert_int_equal(pthread_create(&t[i], NULL, load_thread, &args[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        if (args[i].failed)
            fail_msg("thread %d: %d failures, first: %s", i, args[i].failed,
                     args[i].first_error);
        assert_int_equal(args[i].ok, EACH);
    }
    assert_int_equal(atomic_load(&f->app.hits), THREADS * EACH);
    /* Keep-alive: one connection per client, not one per request. */
    assert_int_equal(ps_http_server_connections_accepted(f->srv), THREADS);

    /* The server counted them in its metrics. */
    char *text;
    assert_int_equal(ps_metrics_render(f->metrics, &text, NULL, NULL), 0);
    char want[128];
    snprintf(want, sizeof want,
             "ps_http_requests_total{method=\"GET\",route=\"/hello\",status=\"200\"} %d\n",
             THREADS * EACH);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want,
             "ps_http_request_duration_seconds_count{route=\"/hello\"} %d\n", THREADS * EACH);
    assert_non_null(strstr(text, want));
    free(text);
    finish(f);
}

struct slow_arg {
    const char *base;
    long status;
    char body[32];
    char error[PS_ERROR_MSG_MAX];
};

static void *slow_thread(void *p)
{
    struct slow_arg *a = p;
    struct ps_http_client *c;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_http_client_new(&c, &err) != 0)
        return NULL;
    char url[128];
    snprintf(url, sizeof url, "%s/slow", a->base);
    struct ps_http_result res;
    if (ps_http_client_get(c, url, &res, &err) == 0) {
        a->status = res.status;
        snprintf(a->body, sizeof a->body, "%s", res.body);
    } else {
        snprintf(a->error, sizeof a->error, "%s", err.msg);
    }
    ps_http_client_free(c);
    return NULL;
}

struct stop_arg {
    struct ps_http_server *srv;
    unsigned left;
    atomic_int done;
};

static void *stop_thread(void *p)
{
    struct stop_arg *a = p;
    a->left = ps_http_server_stop(a->srv);
    atomic_store(&a->done, 1);
    return NULL;
}

static void test_graceful_stop(void **state)
{
    (void)state;
    struct fixture *f = start(0);
    struct slow_arg sa = { .base = f->base };
    pthread_t slow, stopper;
    assert_int_equal(pthread_create(&slow, NULL, slow_thread, &sa), 0);
    pthread_mutex_lock(&f->app.mu);
    while (!f->app.slow_entered)
        pthread_cond_wait(&f->app.cv, &f->app.mu);
    pthread_mutex_unlock(&f->app.mu);

    struct stop_arg st = { .srv = f->srv };
    assert_int_equal(pthread_create(&stopper, NULL, stop_thread, &st), 0);
    usleep(100 * 1000);
    assert_int_equal(atomic_load(&st.done), 0);   /* waiting for the in-flight request */

    /* New connections are refused while it drains. */
    char url[128];
    snprintf(url, sizeof url, "%s/hello", f->base);
    struct ps_http_result res;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_http_client_get(f->client, url, &res, &err), PS_EIO);
    char want[512];
    snprintf(want, sizeof want, "cannot connect to %s: Connection refused", url);
    assert_string_equal(err.msg, want);

    pthread_mutex_lock(&f->app.mu);
    f->app.slow_release = 1;
    pthread_cond_broadcast(&f->app.cv);
    pthread_mutex_unlock(&f->app.mu);
    pthread_join(slow, NULL);
    pthread_join(stopper, NULL);
    assert_string_equal(sa.error, "");
    assert_int_equal(sa.status, 200);          /* the in-flight request was answered */
    assert_string_equal(sa.body, "done");
    assert_int_equal(st.left, 0);
    assert_int_equal(ps_http_server_port(f->srv), 0);
    assert_int_equal(ps_http_server_stop(f->srv), 0);   /* idempotent */
    finish(f);
}

struct hold_arg {
    const char *base;
    char key[16];
    int ms;
    long status;
    char body[64];
    double seconds;
};

static void *hold_thread(void *p)
{
    struct hold_arg *h = p;
    struct ps_http_client *c;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_http_client_new(&c, &err) != 0)
        return NULL;
    char url[256];
    snprintf(url, sizeof url, "%s/hold?key=%s&ms=%d", h->base, h->key, h->ms);
    struct ps_http_result res;
    int64_t t0 = ps_clock_monotonic_ns();
    if (ps_http_client_get(c, url, &res, &err) == 0) {
        h->status = res.status;
        snprintf(h->body, sizeof h->body, "%s", res.body);
    }
    h->seconds = (double)(ps_clock_monotonic_ns() - t0) / 1e9;
    ps_http_client_free(c);
    return NULL;
}

static void wait_held(struct ps_http_server *srv, size_t n)
{
    for (int i = 0; i < 500 && ps_http_server_held_count(srv) != n; i++)
        usleep(10 * 1000);
    assert_int_equal(ps_http_server_held_count(srv), n);
}

/* ps_http_hold: more held requests than pool threads (a held one pins none), released by key,
 * by deadline, superseded by a newer hold of the same key, and released when the server
 * stops. */
static void test_hold(void **state)
{
    (void)state;
    struct fixture *f = start(0);
    enum { N = 12 };   /* the pool has 4 threads */
    struct hold_arg h[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        h[i] = (struct hold_arg){.base = f->base, .ms = 20000};
        snprintf(h[i].key, sizeof h[i].key, "k%d", i);
        assert_int_equal(pthread_create(&t[i], NULL, hold_thread, &h[i]), 0);
    }
    wait_held(f->srv, N);
    json_t *j = get_json(f, "/hello", 200);   /* the pool still answers */
    json_decref(j);
    assert_false(ps_http_server_release(f->srv, "nobody", PS_HTTP_RELEASED_WAKE));
    for (int i = 0; i < N; i++)
        assert_true(ps_http_server_release(f->srv, h[i].key, PS_HTTP_RELEASED_WAKE));
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(h[i].status, 200);
        assert_string_equal(h[i].body, "released=1");
        assert_true(h[i].seconds < 10);
    }
    assert_int_equal(ps_http_server_held_count(f->srv), 0);

    /* the deadline */
    struct hold_arg d = {.base = f->base, .key = "d", .ms = 300};
    hold_thread(&d);
    assert_int_equal(d.status, 200);
    assert_string_equal(d.body, "released=2");
    assert_true(d.seconds >= 0.29 && d.seconds < 5);

    /* a newer hold under the same key supersedes the older one */
    struct hold_arg s1 = {.base = f->base, .key = "s", .ms = 20000}, s2 = s1;
    assert_int_equal(pthread_create(&t[0], NULL, hold_thread, &s1), 0);
    wait_held(f->srv, 1);
    assert_int_equal(pthread_create(&t[1], NULL, hold_thread, &s2), 0);
    pthread_join(t[0], NULL);
    assert_string_equal(s1.body, "released=3");
    wait_held(f->srv, 1);

    /* stopping releases what is held: the drain does not wait for deadlines */
    int64_t t0 = ps_clock_monotonic_ns();
    assert_int_equal(ps_http_server_stop(f->srv), 0);
    pthread_join(t[1], NULL);
    assert_string_equal(s2.body, "released=4");
    assert_true(ps_clock_monotonic_ns() - t0 < 5000000000LL);
    finish(f);
}

static void test_client_errors(void **state)
{
    (void)state;
    struct fixture *f = start(0);
    char url[128];
    struct ps_http_result res;
    struct ps_error err;

    /* Total timeout. */
    ps_http_client_set_timeouts(f->client, 1000, 100);
    snprintf(url, sizeof url, "%s/sleep", f->base);
    ps_error_init(&err);
    assert_int_equal(ps_http_client_get(f->client, url, &res, &err), PS_EIO);
    char want[512];
    snprintf(want, sizeof want, "request to %s timed out after 100 ms", url);
    assert_string_equal(err.msg, want);

    /* A non-JSON body is reported with the URL. */
    ps_http_client_set_timeouts(f->client, 1000, 5000);
    ps_error_init(&err);
    assert_int_equal(ps_http_client_get(f->client, url, &res, &err), 0);
    assert_string_equal(res.body, "late");
    json_t *j;
    assert_int_equal(ps_http_result_json(&res, url, &j, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, url));

    /* Response size limit. */
    ps_http_client_set_max_response(f->client, 3);
    ps_error_init(&err);
    assert_int_equal(ps_http_client_get(f->client, url, &res, &err), PS_EIO);
    snprintf(want, sizeof want, "response from %s exceeds the limit of 3 bytes", url);
    assert_string_equal(err.msg, want);

    /* A second server cannot take the same port. */
    struct ps_http_server_config cfg;
    ps_http_server_config_init(&cfg);
    cfg.port = ps_http_server_port(f->srv);
    struct ps_http_server *other;
    ps_error_init(&err);
    assert_int_equal(ps_http_server_new(&cfg, &other, &err), 0);
    assert_int_equal(ps_http_server_start(other, &err), PS_EIO);
    snprintf(want, sizeof want, "cannot listen on 127.0.0.1:%u: Address already in use",
             cfg.port);
    assert_string_equal(err.msg, want);
    ps_http_server_free(other);

    /* Bad host names are refused up front. */
    cfg.host = "localhost";
    ps_error_init(&err);
    assert_int_equal(ps_http_server_new(&cfg, &other, &err), PS_EINVAL);
    assert_null(other);

    /* After stop: connection refused, with the URL in the message. */
    ps_http_server_stop(f->srv);
    snprintf(url, sizeof url, "%s/hello", f->base);
    ps_error_init(&err);
    assert_int_equal(ps_http_client_get(f->client, url, &res, &err), PS_EIO);
    snprintf(want, sizeof want, "cannot connect to %s: Connection refused", url);
    assert_string_equal(err.msg, want);

    /* Routes cannot change after start. */
    ps_error_init(&err);
    assert_int_equal(ps_http_server_route(f->srv, "GET", "/late", PS_HTTP_EXACT, h_hello, NULL,
                                          &err), PS_ESTATE);
    finish(f);
}

/* A message that quotes client input may end inside a UTF-8 sequence (cut at the buffer's end,
 * or an invalid byte in the input): the error body is still an object, with '?' for the bytes
 * that are not valid UTF-8 (the API fuzzer found a start_op reply that was NULL). */
static void test_error_body_with_invalid_utf8(void **state)
{
    (void)state;
    json_t *j = ps_http_error_body(-22, "tasks: key 'limi\xd0' is unknown; \xd0\x8c ok");
    assert_non_null(j);
    assert_true(json_is_object(j));
    assert_string_equal(json_string_value(json_object_get(j, "message")),
                        "tasks: key 'limi?' is unknown; \xd0\x8c ok");
    json_decref(j);
    j = ps_http_error_body(-22, "plain");
    assert_string_equal(json_string_value(json_object_get(j, "message")), "plain");
    json_decref(j);
}

/* ---- admission on the headers, redaction ------------------------------------------------ */

static int guard_admit(const struct ps_http_request *req, struct ps_http_response *resp,
                       size_t *max_body, void *ctx)
{
    int *calls = ctx;
    (*calls)++;
    assert_int_equal(req->body_len, 0);   /* no body byte has been read yet */
    const char *key = ps_http_request_header(req, "Authorization");
    if (!key || strcmp(key, "OAuth good") != 0) {
        ps_http_reply_error(resp, 401, PS_EPERM, "who are you?");
        return -1;
    }
    *max_body = 100;
    return 0;
}

static void h_leak(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    (void)req;
    (void)ctx;
    ps_http_reply_error(resp, 409, PS_ESTATE,
                        "store /srv/hidden-data-dir/poolsched.db: a transaction is open");
}

static void test_admit_and_redaction(void **state)
{
    (void)state;
    struct log_capture log = {0};
    pthread_mutex_init(&log.mu, NULL);
    struct ps_error err;
    ps_error_init(&err);
    struct ps_http_server_config cfg;
    ps_http_server_config_init(&cfg);
    cfg.log = capture_log;
    cfg.log_ctx = &log;
    struct ps_http_server *srv;
    int calls = 0;
    assert_int_equal(ps_http_server_new(&cfg, &srv, &err), 0);
    assert_int_equal(ps_http_server_route_admit(srv, "POST", "/guard", PS_HTTP_EXACT, h_echo,
                                                guard_admit, &calls, &err), 0);
    assert_int_equal(ps_http_server_route(srv, "GET", "/leak", PS_HTTP_EXACT, h_leak, NULL, &err),
                     0);
    assert_int_equal(ps_http_server_redact(srv, "/srv/hidden-data-dir", &err), 0);
    assert_int_equal(ps_http_server_start(srv, &err), 0);
    char url[128];
    struct ps_http_client *c;
    assert_int_equal(ps_http_client_new(&c, &err), 0);
    struct ps_http_result res;
    snprintf(url, sizeof url, "http://127.0.0.1:%u/guard", ps_http_server_port(srv));
    char big[200];
    memset(big, 'x', sizeof big);
    /* refused on the headers */
    assert_int_equal(ps_http_client_request(c, "POST", url, "text/plain", big, sizeof big, &res, &err), 0);
    assert_int_equal(res.status, 401);
    assert_non_null(strstr(res.body, "who are you?"));
    /* admitted, with the admit's limit of 100 bytes */
    assert_int_equal(ps_http_client_set_token(c, "good", &err), 0);
    assert_int_equal(ps_http_client_request(c, "POST", url, "text/plain", big, sizeof big, &res, &err), 0);
    assert_int_equal(res.status, 413);
    assert_int_equal(ps_http_client_request(c, "POST", url, "text/plain", big, 50, &res, &err), 0);
    assert_int_equal(res.status, 200);
    assert_int_equal(calls, 3);
    /* the data dir never reaches the client, but is logged */
    snprintf(url, sizeof url, "http://127.0.0.1:%u/leak", ps_http_server_port(srv));
    assert_int_equal(ps_http_client_get(c, url, &res, &err), 0);
    assert_int_equal(res.status, 409);
    assert_null(strstr(res.body, "hidden-data-dir"));
    assert_non_null(strstr(res.body, "store <redacted>/poolsched.db"));
    ps_http_client_free(c);
    ps_http_server_free(srv);
    assert_non_null(strstr(log.text, "/srv/hidden-data-dir/poolsched.db"));
    pthread_mutex_destroy(&log.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes_and_request_view),
        cmocka_unit_test(test_error_shapes),
        cmocka_unit_test(test_error_body_with_invalid_utf8),
        cmocka_unit_test(test_body_limit),
        cmocka_unit_test(test_concurrent_clients_and_keepalive),
        cmocka_unit_test(test_graceful_stop),
        cmocka_unit_test(test_client_errors),
        cmocka_unit_test(test_admit_and_redaction),
        cmocka_unit_test(test_hold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
