/* ha_forward.c — a standby passes a client's request on to the leader (ha_forward.h). */
#include "server/ha_forward.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/textbuf.h"
#include "platform/http_client.h"

/* Percent-encodes s into b; keep lists the characters that stay as they are besides
 * letters, digits and "-._~". */
static void encode(struct ps_textbuf *b, const char *s, const char *keep)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || strchr("-._~", *p) || (keep && strchr(keep, *p)))
            ps_textbuf_addc(b, (char)*p);
        else
            ps_textbuf_addf(b, "%%%02X", *p);
    }
}

struct query_ctx {
    struct ps_textbuf *url;
    int n;
};

static void add_query(void *ctx, const char *key, const char *value)
{
    struct query_ctx *q = ctx;
    ps_textbuf_addc(q->url, q->n++ ? '&' : '?');
    encode(q->url, key, NULL);
    ps_textbuf_addc(q->url, '=');
    encode(q->url, value, NULL);
}

struct header_ctx {
    struct ps_http_client *client;
    struct ps_error *err;
    int rc;
};

/* The request headers that carry its meaning; Content-Type goes with the body. */
static void add_header(void *ctx, const char *name, const char *value)
{
    struct header_ctx *h = ctx;
    if (h->rc || !(strcasecmp(name, "Authorization") == 0 || strcasecmp(name, "Accept") == 0 ||
                   strcasecmp(name, "Cookie") == 0 || strncasecmp(name, "X-YT-", 5) == 0))
        return;
    h->rc = ps_http_client_add_header(h->client, name, value, h->err);
}

/* Headers of the leader's answer that describe the connection, not the answer: the server
 * sets its own. */
static bool hop_by_hop(const char *name, size_t len)
{
    static const char *const names[] = {"Connection", "Keep-Alive", "Transfer-Encoding",
                                        "Content-Length", "Content-Type", "Date", "Server",
                                        "X-Request-Id"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == len && strncasecmp(names[i], name, len) == 0)
            return true;
    return false;
}

static int copy_headers(const char *lines, struct ps_http_response *resp)
{
    char name[128];
    while (*lines) {
        const char *end = strchr(lines, '\n');
        const char *colon = memchr(lines, ':', (size_t)(end - lines));
        if (colon && (size_t)(colon - lines) < sizeof name &&
            !hop_by_hop(lines, (size_t)(colon - lines))) {
            memcpy(name, lines, (size_t)(colon - lines));
            name[colon - lines] = '\0';
            const char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            char *value = strndup(v, (size_t)(end - v));
            if (!value)
                return PS_ENOMEM;
            /* at most PS_HTTP_MAX_EXTRA_HEADERS - 1: one is kept for PS_HA_FORWARDED_TO */
            if (resp->header_count + 1 < PS_HTTP_MAX_EXTRA_HEADERS)
                ps_http_response_add_header(resp, name, value);
            free(value);
        }
        lines = end + 1;
    }
    return 0;
}

struct wait_ctx {
    int (*give_up)(void *ctx);
    void *ctx;
};

static int wait_hook(void *ctx, int fd_ready, long *next_ms)
{
    (void)fd_ready;
    struct wait_ctx *w = ctx;
    *next_ms = PS_HA_FORWARD_CHECK_MS;
    return w->give_up(w->ctx);
}

int ps_ha_forward(const struct ps_http_request *req, const char *leader, const char *self,
                  int (*give_up)(void *ctx), void *ctx, struct ps_http_response *resp,
                  struct ps_error *err)
{
    struct wait_ctx w = {give_up, ctx};
    struct ps_textbuf url;
    ps_textbuf_init(&url);
    ps_textbuf_addf(&url, "http://%s", leader);
    encode(&url, req->path, "/!$&'()*+,;=:@");
    struct query_ctx q = {&url, 0};
    ps_http_request_query_foreach(req, add_query, &q);
    if (url.failed) {
        ps_textbuf_release(&url);
        return ps_error_set(err, PS_ENOMEM, "out of memory forwarding %s", req->path);
    }
    struct ps_http_client *c = NULL;
    int rc = ps_http_client_new(&c, err);
    if (rc == 0) {
        ps_http_client_set_timeouts(c, PS_HA_FORWARD_CONNECT_MS, PS_HA_FORWARD_TIMEOUT_MS);
        ps_http_client_keep_headers(c, 1);
        ps_http_client_set_wait_hook(c, -1, 0, wait_hook, &w);
        struct header_ctx h = {c, err, 0};
        ps_http_request_header_foreach(req, add_header, &h);
        rc = h.rc;
    }
    if (rc == 0)
        rc = ps_http_client_add_header(c, PS_HA_FORWARDED_BY, self, err);
    if (rc == 0 && *req->remote_addr)
        rc = ps_http_client_add_header(c, "X-Forwarded-For", req->remote_addr, err);
    const char *type = ps_http_request_header(req, "Content-Type");
    bool body = req->body_len > 0 || strcmp(req->method, "POST") == 0 ||
                strcmp(req->method, "PUT") == 0;
    if (rc == 0 && body && !type)   /* none, as the client sent it: not curl's form type */
        rc = ps_http_client_add_header(c, "Content-Type", "", err);
    struct ps_http_result res;
    if (rc == 0) {
        rc = ps_http_client_request(c, req->method, url.data, type, body ? req->body : NULL,
                                    req->body_len, &res, err);
    }
    if (rc == 0) {
        rc = ps_http_response_set(resp, (int)res.status,
                                  *res.content_type ? res.content_type : NULL, res.body,
                                  res.body_len);
        if (rc == 0)
            rc = copy_headers(res.headers, resp);
        if (rc == 0)
            rc = ps_http_response_add_header(resp, PS_HA_FORWARDED_TO, leader);
        if (rc)
            rc = ps_error_set(err, PS_ENOMEM, "out of memory forwarding %s", req->path);
    }
    ps_http_client_free(c);
    ps_textbuf_release(&url);
    return rc;
}
