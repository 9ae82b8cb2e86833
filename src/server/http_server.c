#include "server/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "io/textbuf.h"
#include "platform/clock.h"
#include "server/metrics.h"

struct route {
    char *method;                 /* NULL = any */
    char *pattern;
    size_t pattern_len;
    enum ps_http_match match;
    ps_http_handler_fn *handler;
    void *ctx;
};

struct ps_http_server {
    struct ps_http_server_config cfg;   /* host points to host_copy */
    char host_copy[64];
    struct route *routes;
    size_t route_count, route_cap;

    struct MHD_Daemon *daemon;
    int listen_fd;                /* ours until MHD_stop_daemon; closed by us after quiesce */
    uint16_t port;
    int started, stopped;

    atomic_uint_fast64_t connections_accepted;
    atomic_uint in_flight;        /* requests between the first callback and completion */
    atomic_bool stopping;
    atomic_uint_fast64_t next_request_id;
    pthread_mutex_t drain_mu;
    pthread_cond_t drain_cv;      /* signalled when in_flight drops to 0 while stopping */

    struct ps_metric_family *m_requests;   /* NULL without cfg.metrics */
    struct ps_metric_family *m_duration;
    struct ps_metric *m_open_connections;
};

/* Per-request state (MHD's con_cls): the body being collected. */
struct request_state {
    char *body;
    size_t len, cap;
    size_t discarded;             /* body bytes dropped after deciding on 413 */
    int too_large;
    int answered;                 /* a response is queued already */
    int64_t start;                /* monotonic ns */
};

static const char *const http_route_labels[] = { "method", "route", "status" };
static const char *const duration_labels[] = { "route" };
static const double duration_bounds[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                          0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };

/* ---- small helpers ------------------------------------------------------------------------- */

/* Replaces every byte that is not part of a valid UTF-8 sequence with '?', in place, so that
 * messages quoting client input always make a valid JSON string. */
static void utf8_sanitize(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        size_t n = 0;
        unsigned min = 0, cp = 0;
        if (*p < 0x80) {
            p++;
            continue;
        } else if ((*p & 0xE0) == 0xC0) {
            n = 1, min = 0x80, cp = *p & 0x1F;
        } else if ((*p & 0xF0) == 0xE0) {
            n = 2, min = 0x800, cp = *p & 0x0F;
        } else if ((*p & 0xF8) == 0xF0) {
            n = 3, min = 0x10000, cp = *p & 0x07;
        } else {
            *p++ = '?';
            continue;
        }
        size_t i = 1;
        for (; i <= n && (p[i] & 0xC0) == 0x80; i++)
            cp = (cp << 6) | (p[i] & 0x3F);
        if (i <= n || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            *p++ = '?';
            continue;
        }
        p += n + 1;
    }
}

/* ---- logging ------------------------------------------------------------------------------- */

static void log_stderr(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "poolsched http: %s\n", line);
}

void ps_http_server_log(struct ps_http_server *srv, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    srv->cfg.log(srv->cfg.log_ctx, line);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct ps_http_server *srv = cls;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    ps_http_server_log(srv, "libmicrohttpd: %s", line);
}

/* ---- configuration and routes -------------------------------------------------------------- */

void ps_http_server_config_init(struct ps_http_server_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->host = PS_HTTP_DEFAULT_HOST;
}

int ps_http_server_new(const struct ps_http_server_config *cfg, struct ps_http_server **out,
                       struct ps_error *err)
{
    *out = NULL;
    struct ps_http_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return ps_error_set(err, PS_ENOMEM, "out of memory creating the HTTP server");
    if (cfg)
        srv->cfg = *cfg;
    else
        ps_http_server_config_init(&srv->cfg);
    const char *host = srv->cfg.host ? srv->cfg.host : PS_HTTP_DEFAULT_HOST;
    if (strlen(host) >= sizeof srv->host_copy) {
        free(srv);
        return ps_error_set(err, PS_EINVAL, "listen host '%.80s' is too long", host);
    }
    strcpy(srv->host_copy, host);
    srv->cfg.host = srv->host_copy;
    if (!srv->cfg.threads)
        srv->cfg.threads = PS_HTTP_DEFAULT_THREADS;
    if (!srv->cfg.max_body_bytes)
        srv->cfg.max_body_bytes = PS_HTTP_DEFAULT_MAX_BODY_BYTES;
    if (!srv->cfg.max_connections)
        srv->cfg.max_connections = PS_HTTP_DEFAULT_MAX_CONNECTIONS;
    if (!srv->cfg.idle_timeout_s)
        srv->cfg.idle_timeout_s = PS_HTTP_DEFAULT_IDLE_TIMEOUT_S;
    if (!srv->cfg.drain_timeout_ms)
        srv->cfg.drain_timeout_ms = PS_HTTP_DEFAULT_DRAIN_TIMEOUT_MS;
    if (!srv->cfg.log)
        srv->cfg.log = log_stderr;
    srv->listen_fd = -1;
    pthread_mutex_init(&srv->drain_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&srv->drain_cv, &ca);
    pthread_condattr_destroy(&ca);

    struct in6_addr probe;
    if (inet_pton(AF_INET, host, &probe) != 1 && inet_pton(AF_INET6, host, &probe) != 1) {
        ps_http_server_free(srv);
        return ps_error_set(err, PS_EINVAL,
                            "listen host '%s' is not a numeric IPv4 or IPv6 address", host);
    }
    if (srv->cfg.metrics) {
        int rc = ps_metrics_counter(srv->cfg.metrics, "ps_http_requests_total",
                                    "HTTP requests answered, by method, route and status.", 3,
                                    http_route_labels, &srv->m_requests, err);
        if (!rc)
            rc = ps_metrics_histogram(srv->cfg.metrics, "ps_http_request_duration_seconds",
                                      "Time from request headers to queued response.", 1,
                                      duration_labels, duration_bounds,
                                      sizeof duration_bounds / sizeof *duration_bounds,
                                      &srv->m_duration, err);
        struct ps_metric_family *open_fam = NULL;
        if (!rc)
            rc = ps_metrics_gauge(srv->cfg.metrics, "ps_http_open_connections",
                                  "Client connections currently open.", 0, NULL, &open_fam,
                                  err);
        if (!rc)
            rc = ps_metric_family_get(open_fam, NULL, &srv->m_open_connections, err);
        if (rc) {
            ps_http_server_free(srv);
            return rc;
        }
    }
    *out = srv;
    return 0;
}

int ps_http_server_route(struct ps_http_server *srv, const char *method, const char *pattern,
                         enum ps_http_match match, ps_http_handler_fn *handler, void *ctx,
                         struct ps_error *err)
{
    if (srv->started)
        return ps_error_set(err, PS_ESTATE, "cannot add route %s: the server is started",
                            pattern ? pattern : "(null)");
    if (!pattern || pattern[0] != '/' || !handler)
        return ps_error_set(err, PS_EINVAL, "route pattern '%s' must start with '/'",
                            pattern ? pattern : "(null)");
    for (size_t i = 0; i < srv->route_count; i++) {
        const struct route *r = &srv->routes[i];
        int same_method = (!r->method && !method) ||
                          (r->method && method && strcmp(r->method, method) == 0);
        if (same_method && r->match == match && strcmp(r->pattern, pattern) == 0)
            return ps_error_set(err, PS_EEXIST, "route %s %s is defined twice",
                                method ? method : "*", pattern);
    }
    if (srv->route_count == srv->route_cap) {
        size_t cap = srv->route_cap ? 2 * srv->route_cap : 16;
        struct route *rs = realloc(srv->routes, cap * sizeof *rs);
        if (!rs)
            return ps_error_set(err, PS_ENOMEM, "out of memory adding route %s", pattern);
        srv->routes = rs;
        srv->route_cap = cap;
    }
    struct route r = { .match = match, .handler = handler, .ctx = ctx };
    r.pattern = strdup(pattern);
    r.method = method ? strdup(method) : NULL;
    if (!r.pattern || (method && !r.method)) {
        free(r.pattern);
        free(r.method);
        return ps_error_set(err, PS_ENOMEM, "out of memory adding route %s", pattern);
    }
    r.pattern_len = strlen(pattern);
    srv->routes[srv->route_count++] = r;
    return 0;
}

static int path_matches(const struct route *r, const char *path)
{
    if (r->match == PS_HTTP_EXACT)
        return strcmp(path, r->pattern) == 0;
    if (strncmp(path, r->pattern, r->pattern_len) != 0)
        return 0;
    char next = path[r->pattern_len];
    return next == '\0' || next == '/' || r->pattern[r->pattern_len - 1] == '/';
}

static int method_matches(const struct route *r, const char *method)
{
    if (!r->method || strcmp(r->method, method) == 0)
        return 1;
    return strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0;
}

/* Is a better than b? Exact beats prefix, longer beats shorter, a named method beats "any". */
static int route_better(const struct route *a, const struct route *b)
{
    if (!b)
        return 1;
    if (a->match != b->match)
        return a->match == PS_HTTP_EXACT;
    if (a->pattern_len != b->pattern_len)
        return a->pattern_len > b->pattern_len;
    return a->method && !b->method;
}

/* The route for (method, path); NULL when none. *path_known tells whether some route with another
 * method matches the path (-> 405), and allow receives those methods. */
static const struct route *find_route(const struct ps_http_server *srv, const char *method,
                                      const char *path, int *path_known, char *allow,
                                      size_t allow_cap)
{
    const struct route *best = NULL;
    *path_known = 0;
    allow[0] = '\0';
    for (size_t i = 0; i < srv->route_count; i++) {
        const struct route *r = &srv->routes[i];
        if (!path_matches(r, path))
            continue;
        if (method_matches(r, method)) {
            if (route_better(r, best))
                best = r;
        } else if (r->method && !strstr(allow, r->method)) {
            *path_known = 1;
            size_t used = strlen(allow);
            snprintf(allow + used, allow_cap - used, "%s%s", used ? ", " : "", r->method);
        }
    }
    return best;
}

/* ---- responses ----------------------------------------------------------------------------- */

static void response_release(struct ps_http_response *resp)
{
    free(resp->body);
    resp->body = NULL;
    for (size_t i = 0; i < resp->header_count; i++) {
        free(resp->header_names[i]);
        free(resp->header_values[i]);
    }
    resp->header_count = 0;
}

int ps_http_response_take(struct ps_http_response *resp, int status, const char *content_type,
                          char *body, size_t len)
{
    free(resp->body);
    resp->body = body;
    resp->body_len = body ? len : 0;
    resp->status = status;
    snprintf(resp->content_type, sizeof resp->content_type, "%s",
             content_type ? content_type : "");
    return 0;
}

int ps_http_response_set(struct ps_http_response *resp, int status, const char *content_type,
                         const void *body, size_t len)
{
    char *copy = NULL;
    if (len) {
        copy = malloc(len);
        if (!copy) {
            resp->failed = 1;
            return PS_ENOMEM;
        }
        memcpy(copy, body, len);
    }
    return ps_http_response_take(resp, status, content_type, copy, len);
}

int ps_http_response_add_header(struct ps_http_response *resp, const char *name,
                                const char *value)
{
    if (strpbrk(name, "\r\n:") || strpbrk(value, "\r\n") || !*name)
        return PS_EINVAL;
    if (resp->header_count == PS_HTTP_MAX_EXTRA_HEADERS)
        return PS_ELIMIT;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        resp->failed = 1;
        return PS_ENOMEM;
    }
    resp->header_names[resp->header_count] = n;
    resp->header_values[resp->header_count] = v;
    resp->header_count++;
    return 0;
}

int ps_http_reply_json(struct ps_http_response *resp, int status, const json_t *json)
{
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    if (json_dump_callback(json, ps_textbuf_dump_cb, &b, JSON_COMPACT) != 0 || b.failed) {
        ps_textbuf_release(&b);
        resp->failed = 1;
        return PS_ENOMEM;
    }
    size_t len = b.len;
    return ps_http_response_take(resp, status, "application/json", ps_textbuf_detach(&b), len);
}

json_t *ps_http_error_body(int code, const char *message)
{
    /* Messages quote client input and may be cut inside a UTF-8 sequence: sanitize a copy
     * here, where every error body is made, or json_pack refuses the string (no reply). */
    char msg[PS_ERROR_MSG_MAX + 64];
    snprintf(msg, sizeof msg, "%s", message ? message : "");
    utf8_sanitize(msg);
    return json_pack("{s:i, s:s, s:s}", "code", code, "error", ps_error_code_name(code),
                     "message", msg);
}

int ps_http_reply_error(struct ps_http_response *resp, int status, int code, const char *fmt,
                        ...)
{
    char msg[PS_ERROR_MSG_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    utf8_sanitize(msg);   /* for the log line; ps_http_error_body sanitizes its own copy */
    const char *rid = resp->request_id_ ? resp->request_id_ : "-";
    json_t *j;
    if (status >= 500) {
        if (resp->server_)
            ps_http_server_log(resp->server_, "request %s: %d: %s", rid, status, msg);
        char generic[96];
        snprintf(generic, sizeof generic, "internal error (request %s)", rid);
        j = ps_http_error_body(code, generic);
        if (j)
            json_object_set_new(j, "request_id", json_string(rid));
    } else {
        j = ps_http_error_body(code, msg);
    }
    if (!j) {
        resp->failed = 1;
        return PS_ENOMEM;
    }
    int rc = ps_http_reply_json(resp, status, j);
    json_decref(j);
    return rc;
}

int ps_http_reply_ps_error(struct ps_http_response *resp, const struct ps_error *err)
{
    int code = err ? err->code : 0;
    const char *msg = err && err->code ? err->msg : "error without a message (a bug)";
    int status;
    switch (code) {
    case PS_EINVAL: status = 400; break;
    case PS_EPERM: status = 403; break;
    case PS_ENOENT: status = 404; break;
    case PS_EEXIST:
    case PS_ESTATE:
    case PS_ELIMIT: status = 409; break;
    default: status = 500; break;
    }
    return ps_http_reply_error(resp, status, code ? code : PS_EIO, "%s", msg);
}

/* Turns resp into an MHD response and queues it; frees what resp owns. */
static enum MHD_Result send_response(struct ps_http_server *srv, struct MHD_Connection *conn,
                                     struct ps_http_response *resp, const char *request_id)
{
    static const char bare_500[] = "{\"code\":-2,\"message\":\"internal error: out of memory\"}";
    struct MHD_Response *r;
    int status = resp->status;
    if (resp->failed) {
        status = 500;
        ps_http_server_log(srv, "request %s: out of memory building the response", request_id);
        r = MHD_create_response_from_buffer(sizeof bare_500 - 1, (void *)bare_500,
                                            MHD_RESPMEM_PERSISTENT);
        if (r)
            MHD_add_response_header(r, "Content-Type", "application/json");
    } else if (resp->body_len) {
        r = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
        if (r)
            resp->body = NULL;   /* MHD owns it now */
    } else {
        r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    }
    if (!r) {
        response_release(resp);
        return MHD_NO;
    }
    if (!resp->failed) {
        if (resp->content_type[0])
            MHD_add_response_header(r, "Content-Type", resp->content_type);
        for (size_t i = 0; i < resp->header_count; i++)
            MHD_add_response_header(r, resp->header_names[i], resp->header_values[i]);
    }
    MHD_add_response_header(r, "X-Request-Id", request_id);
    if (atomic_load(&srv->stopping))
        MHD_add_response_header(r, "Connection", "close");
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    response_release(resp);
    resp->status = status;
    return ok;
}

/* ---- request handling ---------------------------------------------------------------------- */

static double seconds_since(const int64_t *start_ns)
{
    return (double)(ps_clock_monotonic_ns() - *start_ns) * 1e-9;
}

static const char *method_label(const char *m)
{
    static const char *const known[] = { "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH",
                                         "OPTIONS" };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strcmp(m, known[i]) == 0)
            return known[i];
    return "other";
}

static void count_request(struct ps_http_server *srv, const char *method, const char *route,
                          int status, const int64_t *start)
{
    if (!srv->m_requests)
        return;
    char status_text[16];
    snprintf(status_text, sizeof status_text, "%d", status);
    const char *values[] = { method_label(method), route, status_text };
    struct ps_metric *m;
    if (ps_metric_family_get(srv->m_requests, values, &m, NULL) == 0)
        ps_metric_add(m, 1);
    if (ps_metric_family_get(srv->m_duration, &route, &m, NULL) == 0)
        ps_metric_observe(m, seconds_since(start));
}

static void format_remote(struct MHD_Connection *conn, char *out, size_t cap)
{
    out[0] = '\0';
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
                  (socklen_t)cap);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out,
                  (socklen_t)cap);
}

/* Answers without a handler (404, 405, 413, 503). */
static enum MHD_Result reply_plain(struct ps_http_server *srv, struct MHD_Connection *conn,
                                   const char *method, int64_t *start, int status,
                                   int code, const char *allow, const char *msg)
{
    char rid[24];
    snprintf(rid, sizeof rid, "r-%012llx",
             (unsigned long long)atomic_fetch_add(&srv->next_request_id, 1));
    struct ps_http_response resp = { .status = status, .request_id_ = rid, .server_ = srv };
    ps_http_reply_error(&resp, status, code, "%s", msg);
    if (allow)
        ps_http_response_add_header(&resp, "Allow", allow);
    enum MHD_Result ok = send_response(srv, conn, &resp, rid);
    count_request(srv, method, "unmatched", resp.status, start);
    return ok;
}

static enum MHD_Result dispatch(struct ps_http_server *srv, struct MHD_Connection *conn,
                                const char *method, const char *url, struct request_state *st)
{
    int path_known;
    char allow[128];
    const struct route *r = find_route(srv, method, url, &path_known, allow, sizeof allow);
    if (!r) {
        char msg[PS_ERROR_MSG_MAX];
        if (path_known) {
            snprintf(msg, sizeof msg, "method %.16s is not allowed on %.300s (allowed: %s)",
                     method, url, allow);
            return reply_plain(srv, conn, method, &st->start, 405, PS_EINVAL, allow, msg);
        }
        snprintf(msg, sizeof msg, "no such endpoint: %.16s %.400s", method, url);
        return reply_plain(srv, conn, method, &st->start, 404, PS_ENOENT, NULL, msg);
    }
    char remote[INET6_ADDRSTRLEN];
    format_remote(conn, remote, sizeof remote);
    struct ps_http_request req = {
        .method = method,
        .path = url,
        .route = r->pattern,
        .body = st->body ? st->body : "",
        .body_len = st->len,
        .remote_addr = remote,
        .conn_ = conn,
    };
    snprintf(req.request_id, sizeof req.request_id, "r-%012llx",
             (unsigned long long)atomic_fetch_add(&srv->next_request_id, 1));
    struct ps_http_response resp = { .status = 204, .request_id_ = req.request_id,
                                     .server_ = srv };
    r->handler(&req, &resp, r->ctx);
    if (resp.status < 100 || resp.status > 599) {
        ps_http_reply_error(&resp, 500, PS_EIO, "handler of %s set HTTP status %d", r->pattern,
                            resp.status);
    }
    enum MHD_Result ok = send_response(srv, conn, &resp, req.request_id);
    count_request(srv, method, r->pattern, resp.status, &st->start);
    return ok;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version,
                                 const char *upload_data, size_t *upload_data_size,
                                 void **con_cls)
{
    (void)version;
    struct ps_http_server *srv = cls;
    struct request_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof *st);
        if (!st)
            return MHD_NO;
        st->start = ps_clock_monotonic_ns();
        *con_cls = st;
        atomic_fetch_add(&srv->in_flight, 1);
        if (atomic_load(&srv->stopping)) {
            st->answered = 1;
            return reply_plain(srv, conn, method, &st->start, 503, PS_ESTATE, NULL,
                               "the server is shutting down");
        }
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(cl, &end, 10);
            if (errno || end == cl || n > srv->cfg.max_body_bytes) {
                st->answered = 1;
                char msg[128];
                snprintf(msg, sizeof msg, "request body of %.24s bytes exceeds the limit of %zu",
                         cl, srv->cfg.max_body_bytes);
                return reply_plain(srv, conn, method, &st->start, 413, PS_ELIMIT, NULL, msg);
            }
            if (n > 0) {
                st->body = malloc((size_t)n + 1);
                if (!st->body)
                    return MHD_NO;
                st->cap = (size_t)n + 1;
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (st->answered || st->too_large) {
            st->discarded += n;
            /* A chunked body that keeps coming long past the limit: stop reading it. */
            return st->discarded > srv->cfg.max_body_bytes ? MHD_NO : MHD_YES;
        }
        if (n > srv->cfg.max_body_bytes - st->len) {
            st->too_large = 1;
            st->discarded = st->len + n;
            free(st->body);
            st->body = NULL;
            st->len = st->cap = 0;
            return MHD_YES;
        }
        if (st->len + n + 1 > st->cap) {
            size_t cap = st->cap ? st->cap : 4096;
            while (cap < st->len + n + 1)
                cap *= 2;
            char *p = realloc(st->body, cap);
            if (!p)
                return MHD_NO;
            st->body = p;
            st->cap = cap;
        }
        memcpy(st->body + st->len, upload_data, n);
        st->len += n;
        st->body[st->len] = '\0';
        return MHD_YES;
    }
    if (st->answered)
        return MHD_YES;
    st->answered = 1;
    if (st->too_large) {
        char msg[128];
        snprintf(msg, sizeof msg, "request body exceeds the limit of %zu bytes",
                 srv->cfg.max_body_bytes);
        return reply_plain(srv, conn, method, &st->start, 413, PS_ELIMIT, NULL, msg);
    }
    if (st->body)
        st->body[st->len] = '\0';
    return dispatch(srv, conn, method, url, st);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)conn;
    (void)toe;
    struct ps_http_server *srv = cls;
    struct request_state *st = *con_cls;
    if (!st)
        return;
    *con_cls = NULL;
    free(st->body);
    free(st);
    if (atomic_fetch_sub(&srv->in_flight, 1) == 1 && atomic_load(&srv->stopping)) {
        pthread_mutex_lock(&srv->drain_mu);
        pthread_cond_broadcast(&srv->drain_cv);
        pthread_mutex_unlock(&srv->drain_mu);
    }
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    (void)conn;
    (void)socket_context;
    struct ps_http_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&srv->connections_accepted, 1);
    if (srv->m_open_connections)
        ps_metric_add(srv->m_open_connections, toe == MHD_CONNECTION_NOTIFY_STARTED ? 1 : -1);
}

uint64_t ps_http_server_connections_accepted(const struct ps_http_server *srv)
{
    return atomic_load(&((struct ps_http_server *)srv)->connections_accepted);
}

const char *ps_http_request_query(const struct ps_http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn_, MHD_GET_ARGUMENT_KIND, name);
}

const char *ps_http_request_header(const struct ps_http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn_, MHD_HEADER_KIND, name);
}

/* ---- start and stop ------------------------------------------------------------------------ */

static int open_listener(struct ps_http_server *srv, struct ps_error *err)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    int family;
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, srv->cfg.host, &sin->sin_addr) == 1) {
        family = AF_INET;
        sin->sin_family = AF_INET;
        sin->sin_port = htons(srv->cfg.port);
        len = sizeof *sin;
    } else if (inet_pton(AF_INET6, srv->cfg.host, &sin6->sin6_addr) == 1) {
        family = AF_INET6;
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons(srv->cfg.port);
        len = sizeof *sin6;
    } else {
        return ps_error_set(err, PS_EINVAL, "listen host '%s' is not a numeric address",
                            srv->cfg.host);
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return ps_error_set(err, PS_EIO, "cannot create a socket for %s:%u: %s", srv->cfg.host,
                            srv->cfg.port, strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, SOMAXCONN) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, PS_EIO, "cannot listen on %s%s%s:%u: %s",
                            family == AF_INET6 ? "[" : "", srv->cfg.host,
                            family == AF_INET6 ? "]" : "", srv->cfg.port, strerror(e));
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) != 0) {
        int e = errno;
        close(fd);
        return ps_error_set(err, PS_EIO, "cannot read the port bound on %s: %s", srv->cfg.host,
                            strerror(e));
    }
    srv->port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port
                                        : ((struct sockaddr_in6 *)&bound)->sin6_port);
    srv->listen_fd = fd;
    return 0;
}

int ps_http_server_start(struct ps_http_server *srv, struct ps_error *err)
{
    if (srv->started)
        return ps_error_set(err, PS_ESTATE, "the HTTP server is started already");
    int rc = open_listener(srv, err);
    if (rc)
        return rc;
    /* poll(), not epoll: libmicrohttpd 0.9.x races MHD_quiesce_daemon against its epoll workers
     * (both remove the listen socket from the epoll set and the loser panics on ENOENT, an open
     * upstream defect that aborted CI once). With poll() quiescing signals the workers through
     * their inter-thread channel instead, which is safe. */
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    srv->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_access, srv,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,   /* first, or MHD logs to stderr before */
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)srv->listen_fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)srv->cfg.threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)srv->cfg.max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)srv->cfg.idle_timeout_s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
        MHD_OPTION_END);
    if (!srv->daemon) {
        close(srv->listen_fd);
        srv->listen_fd = -1;
        srv->port = 0;
        return ps_error_set(err, PS_EIO,
                            "cannot start the HTTP server on %s:%u (libmicrohttpd refused; see "
                            "its log line above)", srv->cfg.host, srv->cfg.port);
    }
    srv->started = 1;
    return 0;
}

uint16_t ps_http_server_port(const struct ps_http_server *srv)
{
    return srv->started && !srv->stopped ? srv->port : 0;
}

unsigned ps_http_server_stop(struct ps_http_server *srv)
{
    if (!srv->started || srv->stopped)
        return 0;
    srv->stopped = 1;
    atomic_store(&srv->stopping, true);
    /* Stop accepting: new connections are refused by the kernel from here on. */
    MHD_socket lfd = MHD_quiesce_daemon(srv->daemon);
    /* Quiescing only stops polling the socket; the kernel would still complete handshakes into
     * the backlog. Shutting the listening socket down makes Linux refuse them. It is closed only
     * after MHD_stop_daemon, as libmicrohttpd asks. */
    if (lfd != MHD_INVALID_SOCKET)
        shutdown(lfd, SHUT_RDWR);

    struct timespec deadline = ps_clock_monotonic_deadline(srv->cfg.drain_timeout_ms);
    pthread_mutex_lock(&srv->drain_mu);
    while (atomic_load(&srv->in_flight) > 0) {
        if (pthread_cond_timedwait(&srv->drain_cv, &srv->drain_mu, &deadline) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&srv->drain_mu);
    unsigned left = atomic_load(&srv->in_flight);
    if (left)
        ps_http_server_log(srv, "stopping with %u requests still in flight after %u ms", left,
                           srv->cfg.drain_timeout_ms);
    MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
    if (lfd != MHD_INVALID_SOCKET)
        close(lfd);          /* after a quiesce MHD leaves the socket to us */
    srv->listen_fd = -1;
    return left;
}

void ps_http_server_free(struct ps_http_server *srv)
{
    if (!srv)
        return;
    ps_http_server_stop(srv);
    for (size_t i = 0; i < srv->route_count; i++) {
        free(srv->routes[i].method);
        free(srv->routes[i].pattern);
    }
    free(srv->routes);
    pthread_cond_destroy(&srv->drain_cv);
    pthread_mutex_destroy(&srv->drain_mu);
    free(srv);
}
