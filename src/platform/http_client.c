#include "platform/http_client.h"

#include "io/textbuf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

struct ps_http_client {
    CURL *curl;
    char errbuf[CURL_ERROR_SIZE];
    char *auth_header;            /* "Authorization: OAuth <token>" or NULL */
    long connect_timeout_ms, timeout_ms;
    size_t max_response;
    char *buf;                    /* the response body, reused across requests */
    size_t len, cap;
    int too_big;
    struct ps_textbuf json;       /* the JSON request body, reused across requests */
    CURLM *multi;                 /* for requests with a wait hook; NULL until one */
    ps_http_wait_hook_fn *hook;   /* NULL: curl_easy_perform */
    void *hook_ctx;
    struct curl_slist *extra;     /* ps_http_client_add_header, sent with every request */
    struct ps_textbuf headers;    /* the response's header lines, when keep_headers */
    int keep_headers;
    int hook_fd;
    long hook_after_ms;
    int interrupted;              /* the last request was */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

/* curl_global_init is process-wide and, in old libcurl versions, not thread-safe: run it once. */
static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct ps_http_client *c = ctx;
    size_t n = size * nmemb;
    if (n > c->max_response - c->len || c->len + n > c->max_response) {
        c->too_big = 1;
        return 0;   /* makes curl fail with CURLE_WRITE_ERROR */
    }
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n + 1)
            cap *= 2;
        char *p = realloc(c->buf, cap);
        if (!p)
            return 0;
        c->buf = p;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, data, n);
    c->len += n;
    c->buf[c->len] = '\0';
    return n;
}

/* Keeps "Name: value" header lines, each ending in '\n'; a new status line (a 1xx answer
 * before the final one) starts them over. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct ps_http_client *c = ctx;
    size_t n = size * nmemb;
    if (!c->keep_headers)
        return n;
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        ps_textbuf_reset(&c->headers);
        return n;
    }
    size_t len = n;
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
        len--;
    if (len == 0 || c->headers.len + len > 256 * 1024)
        return n;   /* the blank line that ends them; an absurd header block is cut short */
    ps_textbuf_add(&c->headers, data, len);
    ps_textbuf_addc(&c->headers, '\n');
    return n;
}

int ps_http_client_new(struct ps_http_client **out, struct ps_error *err)
{
    *out = NULL;
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return ps_error_set(err, PS_EIO, "cannot initialise libcurl: %s",
                            curl_easy_strerror(global_rc));
    struct ps_http_client *c = calloc(1, sizeof *c);
    if (!c)
        return ps_error_set(err, PS_ENOMEM, "out of memory creating an HTTP client");
    c->curl = curl_easy_init();
    if (!c->curl) {
        free(c);
        return ps_error_set(err, PS_EIO, "cannot create a libcurl handle");
    }
    c->connect_timeout_ms = PS_HTTP_CLIENT_DEFAULT_CONNECT_TIMEOUT_MS;
    c->timeout_ms = PS_HTTP_CLIENT_DEFAULT_TIMEOUT_MS;
    c->max_response = PS_HTTP_CLIENT_DEFAULT_MAX_RESPONSE_BYTES;
    c->hook_fd = -1;
    CURL *h = c->curl;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);           /* no SIGALRM in threaded programs */
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(h, CURLOPT_PROXY, "");              /* never via an environment proxy */
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    *out = c;
    return 0;
}

void ps_http_client_free(struct ps_http_client *c)
{
    if (!c)
        return;
    if (c->multi)
        curl_multi_cleanup(c->multi);
    curl_easy_cleanup(c->curl);
    free(c->auth_header);
    free(c->buf);
    ps_textbuf_release(&c->json);
    curl_slist_free_all(c->extra);
    ps_textbuf_release(&c->headers);
    free(c);
}

void ps_http_client_set_timeouts(struct ps_http_client *c, long connect_timeout_ms,
                                 long timeout_ms)
{
    if (connect_timeout_ms > 0)
        c->connect_timeout_ms = connect_timeout_ms;
    if (timeout_ms > 0)
        c->timeout_ms = timeout_ms;
}

void ps_http_client_set_max_response(struct ps_http_client *c, size_t max_bytes)
{
    if (max_bytes > 0)
        c->max_response = max_bytes;
}

int ps_http_client_add_header(struct ps_http_client *c, const char *name, const char *value,
                              struct ps_error *err)
{
    for (const char *p = value; *p; p++)
        if (*p == '\r' || *p == '\n')
            return ps_error_set(err, PS_EINVAL, "header %s: a line break in its value", name);
    size_t n = strlen(name) + strlen(value) + 3;
    char *line = malloc(n);
    if (!line)
        return ps_error_set(err, PS_ENOMEM, "out of memory adding header %s", name);
    snprintf(line, n, *value ? "%s: %s" : "%s:", name, value);   /* "Name:": curl's removal */
    struct curl_slist *next = curl_slist_append(c->extra, line);
    free(line);
    if (!next)
        return ps_error_set(err, PS_ENOMEM, "out of memory adding header %s", name);
    c->extra = next;
    return 0;
}

void ps_http_client_keep_headers(struct ps_http_client *c, int on)
{
    c->keep_headers = on;
}

int ps_http_client_set_token(struct ps_http_client *c, const char *token, struct ps_error *err)
{
    free(c->auth_header);
    c->auth_header = NULL;
    if (!token)
        return 0;
    for (const char *p = token; *p; p++)
        if (*p <= ' ' || *p > '~')
            return ps_error_set(err, PS_EINVAL,
                                "the token contains a character that cannot go in a header");
    size_t n = strlen("Authorization: OAuth ") + strlen(token) + 1;
    c->auth_header = malloc(n);
    if (!c->auth_header)
        return ps_error_set(err, PS_ENOMEM, "out of memory storing the token");
    snprintf(c->auth_header, n, "Authorization: OAuth %s", token);
    return 0;
}

void ps_http_client_set_wait_hook(struct ps_http_client *c, int fd, long after_ms,
                                  ps_http_wait_hook_fn *hook, void *ctx)
{
    c->hook = hook;
    c->hook_ctx = ctx;
    c->hook_fd = fd;
    c->hook_after_ms = after_ms > 0 ? after_ms : 0;
}

int ps_http_client_interrupted(const struct ps_http_client *c)
{
    return c->interrupted;
}

static long ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* curl_easy_perform, through a multi handle whose waits also poll the hook's fd and end when
 * the hook wants to run. The multi handle keeps the connection for the next request, as the
 * easy handle would. */
static CURLcode perform_with_hook(struct ps_http_client *c)
{
    if (!c->multi && !(c->multi = curl_multi_init()))
        return CURLE_OUT_OF_MEMORY;
    if (curl_multi_add_handle(c->multi, c->curl) != CURLM_OK)
        return CURLE_FAILED_INIT;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CURLcode result = CURLE_OK;
    long next_ms = 1000;
    int give_up = 0, active = 1;
    for (;;) {
        int running = 1;
        /* curl's work only when its sockets or timers ask (a held request wakes for the hook
         * every tick: a perform there would poll the socket once more for nothing) */
        long curl_ms = -1;
        if (!active && curl_multi_timeout(c->multi, &curl_ms) == CURLM_OK && curl_ms == 0)
            active = 1;
        if (active && curl_multi_perform(c->multi, &running) != CURLM_OK) {
            result = CURLE_FAILED_INIT;
            break;
        }
        if (!running) {
            int queued;
            CURLMsg *m;
            while ((m = curl_multi_info_read(c->multi, &queued)))
                if (m->msg == CURLMSG_DONE)
                    result = m->data.result;
            break;
        }
        long early = c->hook_after_ms - ms_since(&t0);
        if (give_up && early <= 0) {
            c->interrupted = 1;
            result = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        long timeout = next_ms;
        if (give_up && early < timeout)
            timeout = early;
        if (curl_multi_timeout(c->multi, &curl_ms) == CURLM_OK && curl_ms >= 0 &&
            curl_ms < timeout)
            timeout = curl_ms;
        struct curl_waitfd w = {.fd = c->hook_fd, .events = CURL_WAIT_POLLIN};
        int ready = 0;
        if (curl_multi_poll(c->multi, &w, c->hook_fd >= 0 ? 1 : 0,
                            (int)(timeout > 0 ? timeout : 1), &ready) != CURLM_OK) {
            result = CURLE_FAILED_INIT;
            break;
        }
        active = ready > ((w.revents & CURL_WAIT_POLLIN) ? 1 : 0);
        next_ms = 1000;
        give_up |= c->hook(c->hook_ctx, (w.revents & CURL_WAIT_POLLIN) != 0, &next_ms) != 0;
    }
    curl_multi_remove_handle(c->multi, c->curl);
    return result;
}

static int fail(struct ps_http_client *c, CURLcode rc, const char *url, struct ps_error *err)
{
    if (c->interrupted)
        return ps_error_set(err, PS_ESTATE, "request to %s interrupted", url);
    const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
    long os_errno = 0;
    curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &os_errno);
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
        return ps_error_set(err, PS_EIO, "cannot connect to %s: %s", url,
                            os_errno ? strerror((int)os_errno) : why);
    case CURLE_COULDNT_RESOLVE_HOST:
        return ps_error_set(err, PS_EIO, "cannot resolve the host of %s: %s", url, why);
    case CURLE_OPERATION_TIMEDOUT: {
        double connect_s = 0;
        curl_easy_getinfo(c->curl, CURLINFO_CONNECT_TIME, &connect_s);
        if (connect_s <= 0)
            return ps_error_set(err, PS_EIO, "cannot connect to %s: timed out after %ld ms",
                                url, c->connect_timeout_ms);
        return ps_error_set(err, PS_EIO, "request to %s timed out after %ld ms", url,
                            c->timeout_ms);
    }
    case CURLE_WRITE_ERROR:
        if (c->too_big)
            return ps_error_set(err, PS_EIO, "response from %s exceeds the limit of %zu bytes",
                                url, c->max_response);
        return ps_error_set(err, PS_ENOMEM, "out of memory reading the response from %s", url);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return ps_error_set(err, PS_EINVAL, "bad URL '%s': %s", url, why);
    default:
        return ps_error_set(err, PS_EIO, "request to %s failed: %s", url, why);
    }
}

int ps_http_client_request(struct ps_http_client *c, const char *method, const char *url,
                           const char *content_type, const void *body, size_t body_len,
                           struct ps_http_result *res, struct ps_error *err)
{
    memset(res, 0, sizeof *res);
    CURL *h = c->curl;
    c->errbuf[0] = '\0';
    c->len = 0;
    c->too_big = 0;
    if (c->buf)
        c->buf[0] = '\0';

    struct curl_slist *headers = NULL, *next;
    /* "Expect: 100-continue" would cost a round trip (or a 1 s wait) for bodies over 1 KiB. */
    headers = curl_slist_append(headers, "Expect:");
    char ct[128];
    if (headers && content_type) {
        snprintf(ct, sizeof ct, "Content-Type: %s", content_type);
        next = curl_slist_append(headers, ct);
        headers = next ? next : (curl_slist_free_all(headers), NULL);
    }
    if (headers && c->auth_header) {
        next = curl_slist_append(headers, c->auth_header);
        headers = next ? next : (curl_slist_free_all(headers), NULL);
    }
    for (const struct curl_slist *e = c->extra; headers && e; e = e->next) {
        next = curl_slist_append(headers, e->data);
        headers = next ? next : (curl_slist_free_all(headers), NULL);
    }
    if (!headers)
        return ps_error_set(err, PS_ENOMEM, "out of memory preparing a request to %s", url);
    ps_textbuf_reset(&c->headers);

    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
    curl_easy_setopt(h, CURLOPT_NOBODY, 0L);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
        if (strcmp(method, "POST") != 0)
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    } else {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        if (strcmp(method, "HEAD") == 0)
            curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
        else if (strcmp(method, "GET") != 0)
            curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
    c->interrupted = 0;
    CURLcode rc = c->hook ? perform_with_hook(c) : curl_easy_perform(h);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK)
        return fail(c, rc, url, err);

    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res->status);
    char *type = NULL;
    curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &type);
    snprintf(res->content_type, sizeof res->content_type, "%s", type ? type : "");
    res->body = c->buf ? c->buf : "";
    res->body_len = c->len;
    if (c->keep_headers && c->headers.failed)
        return ps_error_set(err, PS_ENOMEM, "out of memory reading the headers from %s", url);
    res->headers = c->keep_headers && c->headers.data ? c->headers.data : "";
    return 0;
}

int ps_http_client_get(struct ps_http_client *c, const char *url, struct ps_http_result *res,
                       struct ps_error *err)
{
    return ps_http_client_request(c, "GET", url, NULL, NULL, 0, res, err);
}

int ps_http_client_post_json(struct ps_http_client *c, const char *url, const json_t *json,
                             struct ps_http_result *res, struct ps_error *err)
{
    if (!json)
        return ps_http_client_request(c, "POST", url, "application/json", "{}", 2, res, err);
    ps_textbuf_reset(&c->json);
    if (json_dump_callback(json, ps_textbuf_dump_cb, &c->json, JSON_COMPACT) != 0 ||
        c->json.failed)
        return ps_error_set(err, PS_ENOMEM, "out of memory encoding the request to %s", url);
    return ps_http_client_request(c, "POST", url, "application/json", c->json.data, c->json.len,
                                  res, err);
}

int ps_http_result_json(const struct ps_http_result *res, const char *url, json_t **out,
                        struct ps_error *err)
{
    json_error_t jerr;
    *out = json_loadb(res->body, res->body_len, 0, &jerr);
    if (!*out)
        return ps_error_set(err, PS_EINVAL,
                            "response from %s is not JSON (line %d, column %d): %s", url,
                            jerr.line, jerr.column, jerr.text);
    return 0;
}
