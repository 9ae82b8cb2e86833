/* http_server.h — an HTTP/1.1 server with a small router, on libmicrohttpd.
 *
 * The daemon listens on one given address (default 127.0.0.1; port 0 picks a free port, read it
 * back with ps_http_server_port), runs an internal pool of worker threads, each with its own
 * poll() loop (not epoll: see ps_http_server_start), and keeps connections alive between
 * requests (HTTP/1.1 default).
 *
 * Lifecycle: ps_http_server_new -> ps_http_server_route (any number) -> ps_http_server_start ->
 * ... -> ps_http_server_stop -> ps_http_server_free. Routes cannot change once started, so the
 * routing table needs no lock.
 *
 * Threads: handlers run on the pool threads, several at once, also for the same route. The
 * server provides no global state and no lock of its own around handlers: whatever a handler's
 * `ctx` points to must be protected by the caller (a mutex inside the context, say).
 *
 * Requests: when a request's headers are complete (before any body byte is read) the route is
 * chosen and its admit callback, if any, runs: it may refuse the request (401, say) or lower or
 * raise its body limit. A refusal, 404, 405 and a declared Content-Length over the limit are
 * answered at once, without reading the body (the connection then closes). The body is then
 * collected in full before the handler runs, up to the limit; a chunked body that passes it is
 * read to its end without being kept and answered 413 (only a body that goes on past
 * PS_HTTP_MAX_DISCARD_BYTES drops the connection). The request and every string it
 * returns are borrowed and valid only during the handler call.
 *
 * Connections (hostile or careless clients): at most max_connections at once (MHD refuses
 * more), at most max_connections_per_ip from one address, idle ones close after idle_timeout_s,
 * and a connection must complete each request's headers within header_timeout_ms of its accept
 * (or, on a keep-alive connection, within idle_timeout_s of its previous response): a client
 * trickling header bytes (slowloris) is cut off there, whatever MHD's inactivity timer says.
 *
 * Redaction: strings registered with ps_http_server_redact (the data dir) never reach a client:
 * error bodies containing one are logged in full with the request id and sent with the string
 * replaced by "<redacted>".
 *
 * Errors: handlers fill a response; the ps_http_reply_* helpers write JSON bodies of the shape
 * {"code": <int>, "error": <name of the code>, "message": <string>}. A 500 never shows internals to the client: the body says
 * "internal error" with a request id, and the real message is logged with the same id.
 * The server answers some requests itself, in the same shape: 404 (code PS_ENOENT) for no route,
 * 405 (PS_EINVAL, with an Allow header) for a known path with another method, 413 (PS_ELIMIT)
 * for a body over the limit, 503 (PS_ESTATE) while stopping. Every response carries an
 * X-Request-Id header.
 */
#ifndef PS_SERVER_HTTP_SERVER_H
#define PS_SERVER_HTTP_SERVER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

struct ps_metrics;

#define PS_HTTP_DEFAULT_HOST "127.0.0.1"
#define PS_HTTP_DEFAULT_THREADS 4
#define PS_HTTP_DEFAULT_MAX_BODY_BYTES (16u * 1024u * 1024u)
#define PS_HTTP_DEFAULT_MAX_CONNECTIONS 4096
#define PS_HTTP_DEFAULT_MAX_CONNECTIONS_PER_IP 256
#define PS_HTTP_DEFAULT_IDLE_TIMEOUT_S 60
#define PS_HTTP_DEFAULT_HEADER_TIMEOUT_MS 10000
#define PS_HTTP_MAX_DISCARD_BYTES (1ull << 30)
#define PS_HTTP_MAX_REDACTIONS 4
#define PS_HTTP_DEFAULT_DRAIN_TIMEOUT_MS 10000

/* Receives one log line (no trailing newline) from any pool thread at once; must be thread-safe. */
typedef void ps_http_log_fn(void *log_ctx, const char *line);

struct ps_http_server_config {
    const char *host;            /* numeric IPv4 or IPv6 address; NULL = 127.0.0.1 */
    uint16_t port;               /* 0 = any free port */
    unsigned threads;            /* pool threads; 0 = PS_HTTP_DEFAULT_THREADS */
    size_t max_body_bytes;       /* larger bodies get 413; 0 = PS_HTTP_DEFAULT_MAX_BODY_BYTES */
    unsigned max_connections;    /* 0 = PS_HTTP_DEFAULT_MAX_CONNECTIONS; needs as many fds */
    unsigned max_connections_per_ip;  /* 0 = PS_HTTP_DEFAULT_MAX_CONNECTIONS_PER_IP */
    unsigned idle_timeout_s;     /* idle keep-alive connections close after; 0 = default */
    unsigned header_timeout_ms;  /* request headers complete within; 0 = default */
    unsigned drain_timeout_ms;   /* stop waits this long for in-flight requests; 0 = default */
    ps_http_log_fn *log;         /* NULL = one line per message on stderr */
    void *log_ctx;
    /* Optional: when set, the server registers and updates in it
     * ps_http_requests_total{method,route,status}, ps_http_request_duration_seconds{route}
     * and ps_http_open_connections (route = the matched route's pattern, or "unmatched").
     * Must outlive the server. */
    struct ps_metrics *metrics;
};

/* Fills cfg with the defaults above (all zero except host = 127.0.0.1). */
void ps_http_server_config_init(struct ps_http_server_config *cfg);

/* ---- requests ------------------------------------------------------------------------------ */

struct ps_http_request {
    const char *method;          /* "GET", "POST", ... as sent */
    const char *path;            /* decoded path without the query string, e.g. "/api/v1/get" */
    const char *route;           /* the pattern of the matched route */
    const char *body;            /* NUL-terminated copy of the body ("" when none) */
    size_t body_len;             /* bytes, excluding the terminating NUL */
    const char *remote_addr;     /* "127.0.0.1" or "::1" ("" if unknown) */
    char request_id[24];         /* unique per server run, e.g. "r-00000000002a"; also logged */
    int released;                /* enum ps_http_release: 0 on a request's first handler call;
                                    why its handler runs again after ps_http_hold */
    int64_t hold_deadline_ns;    /* the deadline of the request's hold (monotonic ns), 0 never held */
    uint64_t hold_tag;           /* what the handler gave ps_http_hold, 0 never held */
    void *conn_;                 /* private */
    void *state_;                /* private */
};

/* Value of a query parameter (decoded), NULL when absent; the first one if repeated. */
const char *ps_http_request_query(const struct ps_http_request *req, const char *name);

/* Calls fn for every query parameter (decoded) in the order sent; "" for a key without value. */
typedef void ps_http_kv_fn(void *ctx, const char *key, const char *value);
void ps_http_request_query_foreach(const struct ps_http_request *req, ps_http_kv_fn *fn,
                                   void *ctx);

/* Value of a request header (name matched case-insensitively), NULL when absent. */
const char *ps_http_request_header(const struct ps_http_request *req, const char *name);

/* Calls fn for each request header, in the order received (a standby forwards them, ha.c). */
void ps_http_request_header_foreach(const struct ps_http_request *req, ps_http_kv_fn *fn,
                                    void *ctx);

/* ---- responses ----------------------------------------------------------------------------- */

#define PS_HTTP_MAX_EXTRA_HEADERS 8

/* A response under construction, owned by the server; handlers fill it through the functions
 * below. Until a handler sets anything the response is 204 with no body. */
struct ps_http_response {
    int status;
    char content_type[64];
    char *body;                  /* malloc'd, owned by the response */
    size_t body_len;
    size_t header_count;
    char *header_names[PS_HTTP_MAX_EXTRA_HEADERS];    /* malloc'd copies */
    char *header_values[PS_HTTP_MAX_EXTRA_HEADERS];
    int failed;                  /* a helper ran out of memory: the server sends a bare 500 */
    const char *request_id_;     /* private */
    void *server_;               /* private */
};

/* Sets status, content type and a copy of len bytes of body (body may be NULL when len is 0).
 * Replaces any earlier body. Returns 0 or PS_ENOMEM. */
int ps_http_response_set(struct ps_http_response *resp, int status, const char *content_type,
                         const void *body, size_t len);

/* Like ps_http_response_set but takes ownership of a malloc'd body (freed even on error). */
/* Frees the body and headers of resp (the server, after sending it). */
void ps_http_response_release(struct ps_http_response *resp);
int ps_http_response_take(struct ps_http_response *resp, int status, const char *content_type,
                          char *body, size_t len);

/* Adds a response header (copied). At most PS_HTTP_MAX_EXTRA_HEADERS; returns PS_ELIMIT beyond,
 * PS_EINVAL for names or values with CR/LF, PS_ENOMEM. */
int ps_http_response_add_header(struct ps_http_response *resp, const char *name,
                                const char *value);

/* Replies with json (borrowed, not stolen) as compact "application/json" text. */
int ps_http_reply_json(struct ps_http_response *resp, int status, const json_t *json);

/* The error body every reply uses: {"code": code, "error": ps_error_code_name(code),
 * "message": message} (a new object, or NULL without memory). `code` is the negative PS_E*
 * value kept for compatibility; `error` is its readable class ("not found", ...). */
json_t *ps_http_error_body(int code, const char *message);

/* Replies with ps_http_error_body(code, message) and the given HTTP status. For status >= 500
 * the message is logged with the request id and the client sees
 * {"code": code, "error": ..., "message": "internal error (request <id>)", "request_id": "<id>"}. */
int ps_http_reply_error(struct ps_http_response *resp, int status, int code, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));

/* Maps a poolsched error to a reply: EINVAL 400, EPERM 403, ENOENT 404, EEXIST, ESTATE and
 * ELIMIT 409, anything else 500 (logged, not shown). code in the body is err->code (a negative
 * PS_E* value), so clients can map it back. An unset err counts as a bug: 500. */
int ps_http_reply_ps_error(struct ps_http_response *resp, const struct ps_error *err);

/* ---- server -------------------------------------------------------------------------------- */

struct ps_http_server;

/* A handler fills resp. It runs on a pool thread; see the thread notes at the top. */
typedef void ps_http_handler_fn(const struct ps_http_request *req, struct ps_http_response *resp,
                                void *ctx);

/* Runs when a request's headers are complete, before its body is read (req->body is "" then).
 * *max_body holds the server's limit and may be changed for this request. Returns 0 to go on,
 * or fills resp (an error reply) and returns nonzero to refuse: the body is not read. */
typedef int ps_http_admit_fn(const struct ps_http_request *req, struct ps_http_response *resp,
                             size_t *max_body, void *ctx);

enum ps_http_match {
    PS_HTTP_EXACT,   /* the path equals the pattern */
    PS_HTTP_PREFIX,  /* the path is the pattern or continues it at a '/' boundary: "/api/v1"
                        and "/api/v1/" both match "/api/v1/get" but not "/api/v1x" */
};

/* Creates a server (not yet listening). cfg may be NULL for the defaults; it is copied.
 * Errors: PS_EINVAL for a bad host, PS_ENOMEM. */
int ps_http_server_new(const struct ps_http_server_config *cfg, struct ps_http_server **out,
                       struct ps_error *err);

/* Adds a route; method NULL matches any method. Routing picks an exact route first, then the
 * longest matching prefix; a path that matches only with other methods gets 405 with an Allow
 * header, no match at all gets 404. Only before start (PS_ESTATE after). Errors: PS_EINVAL for
 * a pattern not starting with '/', PS_EEXIST for a duplicate (method, pattern, match). */
int ps_http_server_route(struct ps_http_server *srv, const char *method, const char *pattern,
                         enum ps_http_match match, ps_http_handler_fn *handler, void *ctx,
                         struct ps_error *err);

/* Like ps_http_server_route with an admit callback (may be NULL) called with the same ctx. */
int ps_http_server_route_admit(struct ps_http_server *srv, const char *method,
                               const char *pattern, enum ps_http_match match,
                               ps_http_handler_fn *handler, ps_http_admit_fn *admit, void *ctx,
                               struct ps_error *err);

/* Registers a string (copied; at most PS_HTTP_MAX_REDACTIONS; one shorter than 4 bytes, such as
 * "/", is ignored) that error bodies must not show, such as the data dir. Only before start. */
int ps_http_server_redact(struct ps_http_server *srv, const char *text, struct ps_error *err);

/* Binds host:port and starts the pool. Errors: PS_EIO naming the address and the reason
 * ("cannot listen on 127.0.0.1:9013: Address already in use"), PS_ESTATE if started before. */
int ps_http_server_start(struct ps_http_server *srv, struct ps_error *err);

/* The bound port (the real one when the config said 0); 0 before start. */
uint16_t ps_http_server_port(const struct ps_http_server *srv);

/* How many client connections the server has accepted since start (keep-alive reuse keeps it
 * low). */
uint64_t ps_http_server_connections_accepted(const struct ps_http_server *srv);

/* How many connections the header timeout has cut off since start. */
uint64_t ps_http_server_header_timeouts(const struct ps_http_server *srv);

/* Stops gracefully: closes the listening socket at once (new connections are refused), answers
 * requests arriving on open connections with 503 and "Connection: close", waits up to
 * drain_timeout_ms for requests already being processed to be answered, then closes all
 * connections and joins the threads. Returns the number of requests still in flight when the
 * wait timed out (0 normally). Idempotent; safe before start. Not callable from a handler. */
unsigned ps_http_server_stop(struct ps_http_server *srv);

/* Stops if needed and frees. NULL is a no-op. */
void ps_http_server_free(struct ps_http_server *srv);

/* ---- holding a request (long-poll) --------------------------------------------------------- */

/* A handler may answer later: ps_http_hold parks the request's connection (MHD suspends it: no
 * pool thread is pinned, and a held connection costs no poll slot) under a key, and whatever
 * the handler put into resp is dropped. The handler runs again, on a pool thread, with the
 * same request (req->released says why) when ps_http_server_release names the key, when the
 * deadline passes, when another request holds under the same key (the older one is
 * superseded) or when the server stops. A release that comes while the holding handler still
 * runs is not lost: the handler then runs again at once. The rerun may hold again. The
 * duration metric of a held request counts its last run, not the hold. tag comes back in
 * req->hold_tag on the reruns (the handler's note of what the request was held at).
 * Returns 0, PS_ESTATE while the server stops, PS_EINVAL for an empty or over-long key,
 * PS_ENOMEM. */
#define PS_HTTP_HOLD_KEY_MAX 128
enum ps_http_release {
    PS_HTTP_NOT_RELEASED = 0,
    PS_HTTP_RELEASED_WAKE,        /* ps_http_server_release */
    PS_HTTP_RELEASED_DEADLINE,
    PS_HTTP_RELEASED_SUPERSEDED,  /* a newer request holds or released under the same key */
    PS_HTTP_RELEASED_STOPPING,
};
int ps_http_hold(const struct ps_http_request *req, struct ps_http_response *resp,
                 const char *key, int64_t deadline_ns, uint64_t tag);
/* Releases the request held under key, if any (any thread). Returns whether one was held. */
bool ps_http_server_release(struct ps_http_server *srv, const char *key,
                            enum ps_http_release why);
/* How many requests are held now. */
size_t ps_http_server_held_count(struct ps_http_server *srv);

/* Logs one printf-style line through the server's logger (thread-safe). */
void ps_http_server_log(struct ps_http_server *srv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
