/* http_client.h — a small blocking HTTP/1.1 client on libcurl, for the CLI and the node agent.
 *
 * One client wraps one curl handle, so consecutive requests to the same host reuse the TCP
 * connection (keep-alive). Only http and https URLs are allowed, and proxies from the
 * environment (http_proxy, ...) are ignored: the scheduler is reached directly. A client is not thread-safe: use one per thread. Different clients
 * may be used from different threads at once.
 *
 * Any HTTP status is a successful exchange (the caller decides what a 404 means); errors are
 * only failures to exchange a request and a response: PS_EIO with a message naming the URL and
 * the reason, e.g. "cannot connect to http://127.0.0.1:9013/api/v1/get: Connection refused" or
 * "request to http://127.0.0.1:9013/x timed out after 2000 ms".
 */
#ifndef PS_PLATFORM_HTTP_CLIENT_H
#define PS_PLATFORM_HTTP_CLIENT_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"

#define PS_HTTP_CLIENT_DEFAULT_CONNECT_TIMEOUT_MS 2000
#define PS_HTTP_CLIENT_DEFAULT_TIMEOUT_MS 30000
#define PS_HTTP_CLIENT_DEFAULT_MAX_RESPONSE_BYTES (64u * 1024u * 1024u)

struct ps_http_client;

/* The outcome of one exchange. body is borrowed from the client: NUL-terminated (body_len
 * excludes the NUL) and valid until the next request on the same client or its free. */
struct ps_http_result {
    long status;                  /* 200, 404, ... */
    const char *body;
    size_t body_len;
    char content_type[64];        /* "" when the server sent none */
    const char *headers;          /* with ps_http_client_keep_headers: the response's header
                                     lines "Name: value\n" (borrowed like body), else "" */
};

/* Creates a client with the default timeouts. Errors: PS_ENOMEM, PS_EIO if curl cannot start. */
int ps_http_client_new(struct ps_http_client **out, struct ps_error *err);

/* Frees the client and closes its connections. NULL is a no-op. */
void ps_http_client_free(struct ps_http_client *c);

/* Connect timeout and total timeout of each request, in milliseconds (0 keeps the current one). */
void ps_http_client_set_timeouts(struct ps_http_client *c, long connect_timeout_ms,
                                 long timeout_ms);

/* Lets the caller work while a request is under way (the node agent's held heartbeats,
 * docs/api.md): hook runs whenever fd (a signalfd, say; -1 none) is readable (fd_ready) and at
 * least every *next_ms milliseconds (the hook sets it; 1000 before its first call). When it returns
 * nonzero the request is given up, once it has been under way for after_ms, failing with
 * PS_ESTATE "... interrupted" (ps_http_client_interrupted then tells so; the connection is
 * closed). hook NULL turns it off. */
typedef int ps_http_wait_hook_fn(void *ctx, int fd_ready, long *next_ms);
void ps_http_client_set_wait_hook(struct ps_http_client *c, int fd, long after_ms,
                                  ps_http_wait_hook_fn *hook, void *ctx);

/* Whether the last request was interrupted (ps_http_client_set_interrupt). */
int ps_http_client_interrupted(const struct ps_http_client *c);

/* Responses larger than this fail with PS_EIO instead of growing the buffer without bound. */
void ps_http_client_set_max_response(struct ps_http_client *c, size_t max_bytes);

/* Sends "Authorization: OAuth <token>" with every request from now on; NULL stops sending it.
 * The token is copied. Errors: PS_EINVAL for a token with characters outside visible ASCII,
 * PS_ENOMEM. */
int ps_http_client_set_token(struct ps_http_client *c, const char *token, struct ps_error *err);

/* Sends "name: value" with every request of this client from now on (name as given; a value
 * with a line break is refused: PS_EINVAL); an empty value keeps curl from sending a header of
 * its own by that name (its Content-Type for a body, say). Errors: PS_ENOMEM. */
int ps_http_client_add_header(struct ps_http_client *c, const char *name, const char *value,
                              struct ps_error *err);

/* Whether results carry the response's header lines (ps_http_result.headers); off by default. */
void ps_http_client_keep_headers(struct ps_http_client *c, int on);

/* Performs method (GET, POST, PUT, DELETE, ...) on url with an optional body of body_len bytes
 * and its content type (both may be NULL for none). Fills *res on success. */
int ps_http_client_request(struct ps_http_client *c, const char *method, const char *url,
                           const char *content_type, const void *body, size_t body_len,
                           struct ps_http_result *res, struct ps_error *err);

/* GET url. */
int ps_http_client_get(struct ps_http_client *c, const char *url, struct ps_http_result *res,
                       struct ps_error *err);

/* POST url with json (borrowed) as a compact application/json body; json NULL sends "{}". */
int ps_http_client_post_json(struct ps_http_client *c, const char *url, const json_t *json,
                             struct ps_http_result *res, struct ps_error *err);

/* Parses the body of res as JSON; the caller owns the returned value (json_decref).
 * Errors: PS_EINVAL naming the url, line, column and reason. */
int ps_http_result_json(const struct ps_http_result *res, const char *url, json_t **out,
                        struct ps_error *err);

#endif
