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

#include "core/strmap.h"
#include "io/textbuf.h"
#include "platform/clock.h"
#include "platform/net.h"
#include "server/metrics.h"

#include "server/http_server_impl.h"

/* ---- responses (builders: http_response.c) ------------------------------------------------ */

/* Replaces every registered redaction in an error body by "<redacted>". The full body is logged
 * first with the request id, so the operator still sees the path. */
static void redact_body(struct ps_http_server *srv, struct ps_http_response *resp,
                        const char *request_id)
{
    static const char mark[] = "<redacted>";
    if (resp->status < 400 || !resp->body || !srv->redact_count)
        return;
    int logged = 0;
    for (size_t i = 0; i < srv->redact_count; i++) {
        const char *needle = srv->redact[i];
        size_t nl = strlen(needle);
        if (!memmem(resp->body, resp->body_len, needle, nl))
            continue;
        if (!logged) {
            ps_http_server_log(srv, "request %s: %d: %.*s (sent redacted)", request_id,
                               resp->status, (int)(resp->body_len > 900 ? 900 : resp->body_len),
                               resp->body);
            logged = 1;
        }
        struct ps_textbuf b;
        ps_textbuf_init(&b);
        const char *p = resp->body, *end = resp->body + resp->body_len;
        const char *hit;
        while ((hit = memmem(p, (size_t)(end - p), needle, nl))) {
            ps_textbuf_add(&b, p, (size_t)(hit - p));
            ps_textbuf_add(&b, mark, sizeof mark - 1);
            p = hit + nl;
        }
        ps_textbuf_add(&b, p, (size_t)(end - p));
        if (b.failed) {
            ps_textbuf_release(&b);
            resp->failed = 1;
            return;
        }
        size_t len = b.len;
        free(resp->body);
        resp->body = ps_textbuf_detach(&b);
        resp->body_len = len;
    }
}

/* Turns resp into an MHD response and queues it; frees what resp owns. */
static enum MHD_Result send_response(struct ps_http_server *srv, struct MHD_Connection *conn,
                                     struct ps_http_response *resp, const char *request_id)
{
    static const char bare_500[] = "{\"code\":-2,\"message\":\"internal error: out of memory\"}";
    struct MHD_Response *r;
    redact_body(srv, resp, request_id);
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
        ps_http_response_release(resp);
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
    ps_http_response_release(resp);
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

static void new_request_id(struct ps_http_server *srv, char rid[24])
{
    snprintf(rid, 24, "r-%012llx", (unsigned long long)atomic_fetch_add(&srv->next_request_id, 1));
}

/* Answers without a handler (404, 405, 413, 503). */
static enum MHD_Result reply_plain(struct ps_http_server *srv, struct MHD_Connection *conn,
                                   const char *method, int64_t *start, int status,
                                   int code, const char *allow, const char *msg)
{
    char rid[24];
    new_request_id(srv, rid);
    struct ps_http_response resp = { .status = status, .request_id_ = rid, .server_ = srv };
    ps_http_reply_error(&resp, status, code, "%s", msg);
    if (allow)
        ps_http_response_add_header(&resp, "Allow", allow);
    enum MHD_Result ok = send_response(srv, conn, &resp, rid);
    count_request(srv, method, "unmatched", resp.status, start);
    return ok;
}

static void fill_request(struct ps_http_server *srv, struct MHD_Connection *conn,
                         const char *method, const char *url, const struct route *r,
                         const struct request_state *st, char *remote, size_t remote_cap,
                         struct ps_http_request *req)
{
    format_remote(conn, remote, remote_cap);
    *req = (struct ps_http_request){
        .method = method,
        .path = url,
        .route = r->pattern,
        .body = st->body ? st->body : "",
        .body_len = st->len,
        .remote_addr = remote,
        .conn_ = conn,
    };
    new_request_id(srv, req->request_id);
}

/* Takes st out of the held requests (under conns_mu). */
static void held_unlink(struct ps_http_server *srv, struct request_state *st)
{
    if (ps_strmap_get(&srv->held, st->hold_key) == st)
        ps_strmap_remove(&srv->held, st->hold_key);
    if (st->hold_prev)
        st->hold_prev->hold_next = st->hold_next;
    else if (srv->held_list == st)
        srv->held_list = st->hold_next;
    if (st->hold_next)
        st->hold_next->hold_prev = st->hold_prev;
    st->hold_prev = st->hold_next = NULL;
}

/* Releases st (under conns_mu): a parked connection resumes (MHD calls on_access again, which
 * runs the handler), one whose handler still runs reruns it when it returns. */
static void held_release(struct ps_http_server *srv, struct request_state *st, int why)
{
    held_unlink(srv, st);
    st->release_why = why;
    if (st->hold == HOLD_PARKED) {
        st->hold = HOLD_NONE;
        MHD_resume_connection(st->conn);
    }
}

int ps_http_hold(const struct ps_http_request *req, struct ps_http_response *resp,
                 const char *key, int64_t deadline_ns, uint64_t tag)
{
    struct ps_http_server *srv = resp->server_;
    struct request_state *st = req->state_;
    if (!srv || !st)
        return PS_ESTATE;
    if (!key || !*key || strlen(key) > PS_HTTP_HOLD_KEY_MAX)
        return PS_EINVAL;
    pthread_mutex_lock(&srv->conns_mu);
    int rc = 0;
    if (atomic_load(&srv->stopping) || st->hold != HOLD_NONE) {
        rc = PS_ESTATE;
        goto out;
    }
    struct request_state *old = ps_strmap_get(&srv->held, key);
    if (old)
        held_release(srv, old, PS_HTTP_RELEASED_SUPERSEDED);
    snprintf(st->hold_key, sizeof st->hold_key, "%s", key);
    if (ps_strmap_put(&srv->held, st->hold_key, st) != 0) {
        rc = PS_ENOMEM;
        goto out;
    }
    st->hold = HOLD_ASKED;
    st->release_why = 0;
    st->hold_deadline_ns = deadline_ns;
    st->hold_tag = tag;
    st->hold_next = srv->held_list;
    if (srv->held_list)
        srv->held_list->hold_prev = st;
    srv->held_list = st;
    pthread_cond_broadcast(&srv->sweeper_cv);   /* a new deadline */
out:
    pthread_mutex_unlock(&srv->conns_mu);
    return rc;
}

bool ps_http_server_release(struct ps_http_server *srv, const char *key,
                            enum ps_http_release why)
{
    pthread_mutex_lock(&srv->conns_mu);
    struct request_state *st = ps_strmap_get(&srv->held, key);
    if (st)
        held_release(srv, st, why);
    pthread_mutex_unlock(&srv->conns_mu);
    return st != NULL;
}

size_t ps_http_server_held_count(struct ps_http_server *srv)
{
    pthread_mutex_lock(&srv->conns_mu);
    size_t n = srv->held.count;
    pthread_mutex_unlock(&srv->conns_mu);
    return n;
}

static enum MHD_Result dispatch(struct ps_http_server *srv, struct MHD_Connection *conn,
                                const char *method, const char *url, struct request_state *st)
{
    const struct route *r = st->route;
    char remote[INET6_ADDRSTRLEN];
    struct ps_http_request req;
    struct ps_http_response resp;
    st->conn = conn;
    for (;;) {
        fill_request(srv, conn, method, url, r, st, remote, sizeof remote, &req);
        pthread_mutex_lock(&srv->conns_mu);
        req.released = st->release_why;
        st->release_why = 0;
        pthread_mutex_unlock(&srv->conns_mu);
        if (req.released)   /* the duration metric counts the last run, not the hold */
            st->start = ps_clock_monotonic_ns();
        req.hold_deadline_ns = st->hold_deadline_ns;
        req.hold_tag = st->hold_tag;
        req.state_ = st;
        resp = (struct ps_http_response){ .status = 204, .request_id_ = req.request_id,
                                          .server_ = srv };
        r->handler(&req, &resp, r->ctx);
        pthread_mutex_lock(&srv->conns_mu);
        if (st->hold != HOLD_ASKED) {
            pthread_mutex_unlock(&srv->conns_mu);
            break;
        }
        ps_http_response_release(&resp);
        if (st->release_why) {          /* released while the handler ran: run it again */
            st->hold = HOLD_NONE;
            pthread_mutex_unlock(&srv->conns_mu);
            continue;
        }
        st->hold = HOLD_PARKED;
        MHD_suspend_connection(conn);
        pthread_mutex_unlock(&srv->conns_mu);
        return MHD_YES;
    }
    if (resp.status < 100 || resp.status > 599) {
        ps_http_reply_error(&resp, 500, PS_EIO, "handler of %s set HTTP status %d", r->pattern,
                            resp.status);
    }
    enum MHD_Result ok = send_response(srv, conn, &resp, req.request_id);
    count_request(srv, method, r->pattern, resp.status, &st->start);
    return ok;
}

/* Whether the request announces a body (a Content-Length above 0 or a transfer encoding). */
static int has_body(struct MHD_Connection *conn)
{
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
        return 1;
    return cl && strspn(cl, " 0") != strlen(cl);
}

static struct conn_track *conn_track_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Sets the connection's header deadline (0 = none). */
static void conn_deadline(struct ps_http_server *srv, struct MHD_Connection *conn, int64_t at)
{
    struct conn_track *t = conn_track_of(conn);
    if (!t)
        return;
    pthread_mutex_lock(&srv->conns_mu);
    t->deadline_ns = at;
    pthread_mutex_unlock(&srv->conns_mu);
}

/* The first call of a request: its headers are complete, no body byte has been read. Chooses
 * the route, runs its admit callback and checks the declared length, so that a request to be
 * refused is refused before its body costs anything. */
static enum MHD_Result on_headers(struct ps_http_server *srv, struct MHD_Connection *conn,
                                  const char *url, const char *method, struct request_state *st)
{
    conn_deadline(srv, conn, 0);
    if (atomic_load(&srv->stopping)) {
        st->answered = 1;
        return reply_plain(srv, conn, method, &st->start, 503, PS_ESTATE, NULL,
                           "the server is shutting down");
    }
    int body = has_body(conn);
    int path_known;
    char allow[128];
    const struct route *r = ps_http_find_route(srv, method, url, &path_known, allow, sizeof allow);
    if (!r) {
        char msg[PS_ERROR_MSG_MAX];
        int status = path_known ? 405 : 404;
        if (path_known)
            snprintf(msg, sizeof msg, "method %.16s is not allowed on %.300s (allowed: %s)",
                     method, url, allow);
        else
            snprintf(msg, sizeof msg, "no such endpoint: %.16s %.400s", method, url);
        if (body) {
            st->answered = 1;
            return reply_plain(srv, conn, method, &st->start, status,
                               path_known ? PS_EINVAL : PS_ENOENT, path_known ? allow : NULL,
                               msg);
        }
        /* Without a body, answer at the request's end: the connection stays usable. */
        new_request_id(srv, st->refusal_rid);
        st->refusal = (struct ps_http_response){ .request_id_ = st->refusal_rid,
                                                 .server_ = srv };
        ps_http_reply_error(&st->refusal, status, path_known ? PS_EINVAL : PS_ENOENT, "%s", msg);
        if (path_known)
            ps_http_response_add_header(&st->refusal, "Allow", allow);
        st->refused = 1;
        return MHD_YES;
    }
    st->max_body = srv->cfg.max_body_bytes;
    if (r->admit) {
        char remote[INET6_ADDRSTRLEN];
        struct ps_http_request req;
        fill_request(srv, conn, method, url, r, st, remote, sizeof remote, &req);
        struct ps_http_response resp = { .status = 204, .request_id_ = req.request_id,
                                         .server_ = srv };
        if (r->admit(&req, &resp, &st->max_body, r->ctx) != 0) {
            if (resp.status < 400 || resp.status > 599)
                ps_http_reply_error(&resp, 500, PS_EIO, "admit of %s refused with status %d",
                                    r->pattern, resp.status);
            if (body) {
                st->answered = 1;
                enum MHD_Result ok = send_response(srv, conn, &resp, req.request_id);
                count_request(srv, method, r->pattern, resp.status, &st->start);
                return ok;
            }
            memcpy(st->refusal_rid, req.request_id, sizeof st->refusal_rid);
            resp.request_id_ = st->refusal_rid;
            st->refusal = resp;
            st->refused = 1;
            st->route = r;
            return MHD_YES;
        }
        ps_http_response_release(&resp);
    }
    st->route = r;
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(cl, &end, 10);
        if (errno || end == cl || n > st->max_body) {
            st->answered = 1;
            char msg[128];
            snprintf(msg, sizeof msg, "request body of %.24s bytes exceeds the limit of %zu",
                     cl, st->max_body);
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
        return on_headers(srv, conn, url, method, st);
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (st->answered || st->too_large || st->refused) {
            /* A body past the limit is read to its end without being kept, so the client gets
             * its 413; only one going on beyond PS_HTTP_MAX_DISCARD_BYTES is cut off. */
            st->discarded += n;
            return st->discarded > PS_HTTP_MAX_DISCARD_BYTES ? MHD_NO : MHD_YES;
        }
        if (n > st->max_body - st->len) {
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
    if (st->answered && st->release_why)   /* a held request released: its handler again */
        return dispatch(srv, conn, method, url, st);
    if (st->answered)
        return MHD_YES;
    st->answered = 1;
    if (st->refused) {
        st->refused = 0;
        enum MHD_Result ok = send_response(srv, conn, &st->refusal, st->refusal_rid);
        count_request(srv, method, st->route ? st->route->pattern : "unmatched",
                      st->refusal.status, &st->start);
        return ok;
    }
    if (st->too_large) {
        char msg[128];
        snprintf(msg, sizeof msg, "request body exceeds the limit of %zu bytes", st->max_body);
        return reply_plain(srv, conn, method, &st->start, 413, PS_ELIMIT, NULL, msg);
    }
    if (st->body)
        st->body[st->len] = '\0';
    return dispatch(srv, conn, method, url, st);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    struct ps_http_server *srv = cls;
    struct request_state *st = *con_cls;
    if (!st)
        return;
    *con_cls = NULL;
    if (st->hold != HOLD_NONE) {   /* not expected: a held connection ends only once released */
        pthread_mutex_lock(&srv->conns_mu);
        held_unlink(srv, st);
        pthread_mutex_unlock(&srv->conns_mu);
    }
    if (st->refused)
        ps_http_response_release(&st->refusal);
    free(st->body);
    free(st);
    /* A keep-alive connection may wait up to the idle timeout for its next request, whose
     * headers are due then at the latest. */
    conn_deadline(srv, conn, ps_clock_monotonic_ns() +
                                 (int64_t)srv->cfg.idle_timeout_s * 1000000000 +
                                 (int64_t)srv->cfg.header_timeout_ms * 1000000);
    if (atomic_fetch_sub(&srv->in_flight, 1) == 1 && atomic_load(&srv->stopping)) {
        pthread_mutex_lock(&srv->drain_mu);
        pthread_cond_broadcast(&srv->drain_cv);
        pthread_mutex_unlock(&srv->drain_mu);
    }
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct ps_http_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&srv->connections_accepted, 1);
        struct conn_track *t = calloc(1, sizeof *t);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (t && ci) {
            t->fd = ci->connect_fd;
            t->deadline_ns = ps_clock_monotonic_ns() +
                             (int64_t)srv->cfg.header_timeout_ms * 1000000;
            pthread_mutex_lock(&srv->conns_mu);
            t->next = srv->conns;
            if (srv->conns)
                srv->conns->prev = t;
            srv->conns = t;
            pthread_mutex_unlock(&srv->conns_mu);
            *socket_context = t;
        } else {
            free(t);
        }
    } else {
        /* MHD closes the socket only after this notification: under conns_mu the sweeper
         * never shuts down a descriptor that has been closed and reused. */
        struct conn_track *t = *socket_context;
        if (t) {
            pthread_mutex_lock(&srv->conns_mu);
            if (t->prev)
                t->prev->next = t->next;
            else
                srv->conns = t->next;
            if (t->next)
                t->next->prev = t->prev;
            pthread_mutex_unlock(&srv->conns_mu);
            free(t);
            *socket_context = NULL;
        }
    }
    if (srv->m_open_connections)
        ps_metric_add(srv->m_open_connections, toe == MHD_CONNECTION_NOTIFY_STARTED ? 1 : -1);
}

/* Cuts off connections past their header deadline (slowloris: MHD's inactivity timeout never
 * fires for a client that sends a byte now and then). shutdown() makes the connection's poll
 * see the end of the stream; MHD then closes it as usual. */
static void *sweeper_main(void *arg)
{
    struct ps_http_server *srv = arg;
    pthread_mutex_lock(&srv->conns_mu);
    while (!srv->sweeper_stop) {
        int64_t now = ps_clock_monotonic_ns();
        unsigned cut = 0;
        for (struct conn_track *t = srv->conns; t; t = t->next) {
            if (t->deadline_ns && now > t->deadline_ns) {
                t->deadline_ns = 0;
                shutdown(t->fd, SHUT_RDWR);
                cut++;
            }
        }
        if (cut) {
            atomic_fetch_add(&srv->header_timeouts, cut);
            pthread_mutex_unlock(&srv->conns_mu);
            ps_http_server_log(srv, "closed %u connections that did not complete their request "
                                    "headers in time", cut);
            pthread_mutex_lock(&srv->conns_mu);
            if (srv->sweeper_stop)
                break;
        }
        now = ps_clock_monotonic_ns();
        int64_t next_hold = INT64_MAX;
        for (struct request_state *h = srv->held_list, *next; h; h = next) {
            next = h->hold_next;
            if (h->hold_deadline_ns <= now)
                held_release(srv, h, PS_HTTP_RELEASED_DEADLINE);
            else if (h->hold_deadline_ns < next_hold)
                next_hold = h->hold_deadline_ns;
        }
        unsigned period = srv->cfg.header_timeout_ms / 4;
        if (period < 20)
            period = 20;
        if (period > 500)
            period = 500;
        if (next_hold != INT64_MAX && (next_hold - now) / 1000000 + 1 < (int64_t)period)
            period = (unsigned)((next_hold - now) / 1000000 + 1);
        struct timespec deadline = ps_clock_monotonic_deadline(period);
        pthread_cond_timedwait(&srv->sweeper_cv, &srv->conns_mu, &deadline);
    }
    pthread_mutex_unlock(&srv->conns_mu);
    return NULL;
}

uint64_t ps_http_server_header_timeouts(const struct ps_http_server *srv)
{
    return atomic_load(&((struct ps_http_server *)srv)->header_timeouts);
}

uint64_t ps_http_server_connections_accepted(const struct ps_http_server *srv)
{
    return atomic_load(&((struct ps_http_server *)srv)->connections_accepted);
}

const char *ps_http_request_query(const struct ps_http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn_, MHD_GET_ARGUMENT_KIND, name);
}

struct query_foreach {
    ps_http_kv_fn *fn;
    void *ctx;
};

static enum MHD_Result query_foreach_cb(void *cls, enum MHD_ValueKind kind, const char *key,
                                        const char *value)
{
    (void)kind;
    struct query_foreach *q = cls;
    q->fn(q->ctx, key, value ? value : "");
    return MHD_YES;
}

void ps_http_request_query_foreach(const struct ps_http_request *req, ps_http_kv_fn *fn,
                                   void *ctx)
{
    struct query_foreach q = {fn, ctx};
    MHD_get_connection_values(req->conn_, MHD_GET_ARGUMENT_KIND, query_foreach_cb, &q);
}

const char *ps_http_request_header(const struct ps_http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn_, MHD_HEADER_KIND, name);
}

void ps_http_request_header_foreach(const struct ps_http_request *req, ps_http_kv_fn *fn,
                                    void *ctx)
{
    struct query_foreach q = {fn, ctx};
    MHD_get_connection_values(req->conn_, MHD_HEADER_KIND, query_foreach_cb, &q);
}

/* ---- start and stop ------------------------------------------------------------------------ */

static int open_listener(struct ps_http_server *srv, struct ps_error *err)
{
    return ps_net_listen(srv->cfg.host, srv->cfg.port, &srv->listen_fd, &srv->port, err);
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
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     MHD_ALLOW_SUSPEND_RESUME;   /* ps_http_hold */
    srv->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_access, srv,
        MHD_OPTION_EXTERNAL_LOGGER, ps_http_mhd_log, srv,   /* first, or MHD logs to stderr before */
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)srv->listen_fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)srv->cfg.threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)srv->cfg.max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)srv->cfg.max_connections_per_ip,
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
    if (pthread_create(&srv->sweeper, NULL, sweeper_main, srv) == 0)
        srv->sweeper_started = true;
    else
        ps_http_server_log(srv, "cannot start the header timeout thread: slow clients are "
                                "bounded by the idle timeout only");
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
    pthread_mutex_lock(&srv->conns_mu);
    atomic_store(&srv->stopping, true);   /* under conns_mu: no hold after the release below */
    while (srv->held_list)
        held_release(srv, srv->held_list, PS_HTTP_RELEASED_STOPPING);
    pthread_mutex_unlock(&srv->conns_mu);
    if (srv->sweeper_started) {
        pthread_mutex_lock(&srv->conns_mu);
        srv->sweeper_stop = true;
        pthread_cond_broadcast(&srv->sweeper_cv);
        pthread_mutex_unlock(&srv->conns_mu);
        pthread_join(srv->sweeper, NULL);
        srv->sweeper_started = false;
    }
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
    for (size_t i = 0; i < srv->redact_count; i++)
        free(srv->redact[i]);
    pthread_cond_destroy(&srv->drain_cv);
    pthread_cond_destroy(&srv->sweeper_cv);
    pthread_mutex_destroy(&srv->drain_mu);
    pthread_mutex_destroy(&srv->conns_mu);
    pthread_mutex_destroy(&srv->log_mu);
    ps_strmap_release(&srv->held);
    free(srv);
}
