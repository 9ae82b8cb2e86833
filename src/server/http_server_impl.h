/* http_server_impl.h — the server's records, shared by http_server.c (requests, start, stop)
 * and http_setup.c (creation, logging, routes). Not for use outside src/server/http_*.c. */
#ifndef PS_SERVER_HTTP_SERVER_IMPL_H
#define PS_SERVER_HTTP_SERVER_IMPL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <microhttpd.h>

#include "core/strmap.h"
#include "server/http_server.h"
#include "server/metrics.h"

struct route {
    char *method;                 /* NULL = any */
    char *pattern;
    size_t pattern_len;
    enum ps_http_match match;
    ps_http_handler_fn *handler;
    ps_http_admit_fn *admit;      /* NULL = admit everything */
    void *ctx;
};

/* One open connection (MHD's socket context), for the header deadline. */
struct conn_track {
    int fd;
    int64_t deadline_ns;          /* request headers due by then; 0 = none (in a request) */
    struct conn_track *prev, *next;
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

    char *redact[PS_HTTP_MAX_REDACTIONS];
    size_t redact_count;

    pthread_mutex_t conns_mu;     /* the list of open connections, and their deadlines */
    struct conn_track *conns;
    pthread_t sweeper;
    bool sweeper_started;
    bool sweeper_stop;            /* under conns_mu */
    pthread_cond_t sweeper_cv;
    atomic_uint_fast64_t header_timeouts;
    /* held requests (ps_http_hold), under conns_mu: by key, and a list for deadlines */
    struct ps_strmap held;
    struct request_state *held_list;

    pthread_mutex_t log_mu;       /* MHD's repeated lines (one per refused connection) */
    char log_last[256];
    int64_t log_last_ns;
    uint64_t log_repeats;

    struct ps_metric_family *m_requests;   /* NULL without cfg.metrics */
    struct ps_metric_family *m_duration;
    struct ps_metric *m_open_connections;
};

/* Per-request state (MHD's con_cls): the route chosen from the headers, the body limit and the
 * body being collected. */
struct request_state {
    const struct route *route;    /* NULL: refused at the headers (refusal holds the reply) */
    size_t max_body;
    char *body;
    size_t len, cap;
    unsigned long long discarded; /* body bytes dropped after deciding on 413 */
    int too_large;
    int answered;                 /* a response is queued already */
    int refused;                  /* refusal is to be sent once the (bodyless) request ends */
    struct ps_http_response refusal;
    char refusal_rid[24];
    int64_t start;                /* monotonic ns */
    /* ps_http_hold, under srv->conns_mu */
    int hold;                     /* HOLD_NONE, HOLD_ASKED (its handler runs), HOLD_PARKED */
    int release_why;              /* a release pending for the handler's next run */
    int64_t hold_deadline_ns;
    uint64_t hold_tag;
    char hold_key[PS_HTTP_HOLD_KEY_MAX + 1];
    struct MHD_Connection *conn;
    struct request_state *hold_prev, *hold_next;
};

enum { HOLD_NONE, HOLD_ASKED, HOLD_PARKED };

/* libmicrohttpd's logger: through the server's log function. */
void ps_http_mhd_log(void *cls, const char *fmt, va_list ap);
/* The most specific route for method and path, or NULL; then *path_known is 1 when routes of
 * other methods match the path (a 405, not a 404) and allow lists those methods. */
const struct route *ps_http_find_route(const struct ps_http_server *srv, const char *method,
                                      const char *path, int *path_known, char *allow,
                                      size_t allow_cap);

#endif
