/* http_setup.c — creating the server, its log and its routes (http_server.h). */
#include "server/http_server_impl.h"

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

#include "core/strmap.h"
#include "io/textbuf.h"
#include "platform/clock.h"
#include "server/metrics.h"

static const char *const http_route_labels[] = { "method", "route", "status" };
static const char *const duration_labels[] = { "route" };
static const double duration_bounds[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                          0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };

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

/* MHD logs one line per connection it refuses ("Server reached connection limit"): under a
 * connection flood that would flood the log too. A line equal to the previous one within a
 * second is counted instead, and the count logged with the next line that gets through. */
void ps_http_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct ps_http_server *srv = cls;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    int64_t now = ps_clock_monotonic_ns();
    pthread_mutex_lock(&srv->log_mu);
    if (strncmp(line, srv->log_last, sizeof srv->log_last - 1) == 0 &&
        now - srv->log_last_ns < 1000000000) {
        srv->log_repeats++;
        pthread_mutex_unlock(&srv->log_mu);
        return;
    }
    uint64_t repeats = srv->log_repeats;
    srv->log_repeats = 0;
    srv->log_last_ns = now;
    size_t keep = strnlen(line, sizeof srv->log_last - 1);   /* compared on this prefix */
    memcpy(srv->log_last, line, keep);
    srv->log_last[keep] = '\0';
    pthread_mutex_unlock(&srv->log_mu);
    if (repeats)
        ps_http_server_log(srv, "libmicrohttpd: %s (%llu more like it since it was last logged)",
                           line, (unsigned long long)repeats);
    else
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
    if (!srv->cfg.max_connections_per_ip)
        srv->cfg.max_connections_per_ip = PS_HTTP_DEFAULT_MAX_CONNECTIONS_PER_IP;
    if (!srv->cfg.idle_timeout_s)
        srv->cfg.idle_timeout_s = PS_HTTP_DEFAULT_IDLE_TIMEOUT_S;
    if (!srv->cfg.header_timeout_ms)
        srv->cfg.header_timeout_ms = PS_HTTP_DEFAULT_HEADER_TIMEOUT_MS;
    if (!srv->cfg.drain_timeout_ms)
        srv->cfg.drain_timeout_ms = PS_HTTP_DEFAULT_DRAIN_TIMEOUT_MS;
    if (!srv->cfg.log)
        srv->cfg.log = log_stderr;
    srv->listen_fd = -1;
    pthread_mutex_init(&srv->drain_mu, NULL);
    pthread_mutex_init(&srv->conns_mu, NULL);
    ps_strmap_init(&srv->held);
    pthread_mutex_init(&srv->log_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&srv->drain_cv, &ca);
    pthread_cond_init(&srv->sweeper_cv, &ca);
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
    return ps_http_server_route_admit(srv, method, pattern, match, handler, NULL, ctx, err);
}

int ps_http_server_redact(struct ps_http_server *srv, const char *text, struct ps_error *err)
{
    if (srv->started)
        return ps_error_set(err, PS_ESTATE, "cannot add a redaction: the server is started");
    if (!text || strlen(text) < 4)   /* "/" or "." would mangle every message */
        return 0;
    if (srv->redact_count == PS_HTTP_MAX_REDACTIONS)
        return ps_error_set(err, PS_ELIMIT, "at most %d redactions", PS_HTTP_MAX_REDACTIONS);
    if (!(srv->redact[srv->redact_count] = strdup(text)))
        return ps_error_set(err, PS_ENOMEM, "out of memory adding a redaction");
    srv->redact_count++;
    return 0;
}

int ps_http_server_route_admit(struct ps_http_server *srv, const char *method,
                               const char *pattern, enum ps_http_match match,
                               ps_http_handler_fn *handler, ps_http_admit_fn *admit, void *ctx,
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
    struct route r = { .match = match, .handler = handler, .admit = admit, .ctx = ctx };
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
const struct route *ps_http_find_route(const struct ps_http_server *srv, const char *method,
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
