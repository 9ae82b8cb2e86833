/* ha.c — standby and leader on the PostgreSQL store (ha.h). */
#include "server/ha.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform/clock.h"
#include "platform/wall_clock.h"
#include "server/ha_forward.h"
#include "server/http_server.h"
#include "server/service_config.h"
#include "server/service_state.h"
#include "server/svc_log.h"

struct ps_ha {
    struct ps_store *store;   /* the election's own connection (not the service's) */
    char holder[128], address[128];
    int lease_ms;
    int64_t epoch;
    struct ps_service *svc;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    /* the standby's view of the leader, for its replies */
    struct ps_store_leader leader;
    bool taking_over;   /* won: the listener stops, forwards in flight give up */
};

/* ---- standby ------------------------------------------------------------------------------- */

static void standby_healthz(const struct ps_http_request *req, struct ps_http_response *resp,
                            void *ctx)
{
    (void)req;
    (void)ctx;
    ps_http_response_set(resp, 200, "text/plain; charset=utf-8", "ok\n", 3);
}

static void leader_view(struct ps_ha *ha, struct ps_store_leader *out)
{
    pthread_mutex_lock(&ha->mu);
    *out = ha->leader;
    pthread_mutex_unlock(&ha->mu);
}

static void standby_readyz(const struct ps_http_request *req, struct ps_http_response *resp,
                           void *ctx)
{
    (void)req;
    struct ps_store_leader l;
    leader_view(ctx, &l);
    json_t *body = json_pack("{s:s, s:s, s:I, s:s}", "role", "standby", "leader", l.address,
                             "epoch", (json_int_t)l.epoch, "leader_holder", l.holder);
    ps_http_reply_json(resp, 503, body);
    json_decref(body);
}

/* 503 "not the leader", naming the leader (message, `leader` key, X-Poolsched-Leader header);
 * why, when not empty, says why the request was not forwarded to it. */
static void refuse(struct ps_http_response *resp, const struct ps_store_leader *l, const char *why)
{
    if (*l->address)
        ps_http_response_add_header(resp, "X-Poolsched-Leader", l->address);
    json_t *body = ps_http_error_body(PS_EUNAVAIL, "");
    char msg[640];
    snprintf(msg, sizeof msg, "not the leader: this scheduler is a standby; the leader (epoch "
             "%lld) is at http://%s%s%s", (long long)l->epoch,
             *l->address ? l->address : "(none yet)", *why ? ": " : "", why);
    json_object_set_new(body, "message", json_string(msg));
    json_object_set_new(body, "leader", json_string(l->address));
    ps_http_reply_json(resp, 503, body);
    json_decref(body);
}

/* What a standby does not pass on: node heartbeats (a node must find the leader itself, and
 * the epoch in its reply is the leader's) and /metrics (this instance's own). */
static void standby_other(const struct ps_http_request *req, struct ps_http_response *resp,
                          void *ctx)
{
    (void)req;
    struct ps_store_leader l;
    leader_view(ctx, &l);
    refuse(resp, &l, "");
}

struct forward_ctx {
    struct ps_ha *ha;
    int64_t epoch;
};

/* A forward waits no longer once the leader row names another epoch or this standby won. */
static int forward_give_up(void *arg)
{
    struct forward_ctx *f = arg;
    pthread_mutex_lock(&f->ha->mu);
    int stop = f->ha->taking_over || f->ha->leader.epoch != f->epoch;
    pthread_mutex_unlock(&f->ha->mu);
    return stop;
}

/* A client's request: passed on to the leader (ha_forward.h), or 503 naming it. */
static void standby_forward(const struct ps_http_request *req, struct ps_http_response *resp,
                            void *ctx)
{
    struct ps_ha *ha = ctx;
    struct ps_store_leader l;
    char self[sizeof ha->address];
    pthread_mutex_lock(&ha->mu);
    l = ha->leader;
    memcpy(self, ha->address, sizeof self);
    pthread_mutex_unlock(&ha->mu);
    if (ps_http_request_header(req, PS_HA_FORWARDED_BY)) {
        refuse(resp, &l, "a forwarded request is not forwarded again");
        return;
    }
    if (!*l.address || !*self || strcmp(l.address, self) == 0) {
        refuse(resp, &l, "");
        return;
    }
    struct ps_error e;
    ps_error_init(&e);
    struct forward_ctx f = {ha, l.epoch};
    int rc = ps_ha_forward(req, l.address, self, forward_give_up, &f, resp, &e);
    if (rc == PS_ESTATE)
        refuse(resp, &l, "the leader changed while the request waited for its answer; retry");
    else if (rc != 0)
        refuse(resp, &l, e.msg);
}

static void ha_free_fields(struct ps_ha *ha)
{
    ps_store_close(ha->store);
    pthread_mutex_destroy(&ha->mu);
    pthread_cond_destroy(&ha->cv);
    free(ha);
}

int ps_ha_standby(struct ps_service_config *cfg, const sigset_t *set, struct ps_ha **out,
                  int *sig, struct ps_error *err)
{
    *out = NULL;
    *sig = 0;
    struct ps_ha *ha = calloc(1, sizeof *ha);
    if (!ha)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    pthread_mutex_init(&ha->mu, NULL);
    pthread_cond_init(&ha->cv, NULL);
    ha->lease_ms = (int)cfg->ha_lease_ms;
    /* the election's calls wait at most lease/2: a renewal that hangs (a network that
     * blackholes the connection) must not keep the leader from seeing its lease run out */
    struct ps_store_config sc = {.data_dir = cfg->data_dir, .url = cfg->store,
                                 .call_timeout_ms = ha->lease_ms / 2};
    int rc = ps_store_open_config(&sc, &ha->store, err);
    if (rc) {
        ha_free_fields(ha);
        return rc;
    }
    struct ps_http_server_config hc;
    ps_http_server_config_init(&hc);
    hc.host = cfg->host;
    hc.port = (uint16_t)cfg->port;
    hc.threads = 8;   /* a forwarded request holds its thread until the leader answers */
    /* the largest body the leader takes (start_op's); the leader applies its own limits */
    hc.max_body_bytes = (size_t)(cfg->http_max_start_op_body_size > cfg->http_max_body_size
                                     ? cfg->http_max_start_op_body_size
                                     : cfg->http_max_body_size);
    struct ps_http_server *http = NULL;
    if ((rc = ps_http_server_new(&hc, &http, err)) != 0 ||
        (rc = ps_http_server_route(http, "GET", "/healthz", PS_HTTP_EXACT, standby_healthz, ha,
                                   err)) != 0 ||
        (rc = ps_http_server_route(http, "GET", "/readyz", PS_HTTP_EXACT, standby_readyz, ha,
                                   err)) != 0 ||
        (rc = ps_http_server_route(http, NULL, "/", PS_HTTP_PREFIX, standby_forward, ha, err)) !=
            0 ||
        (rc = ps_http_server_route(http, NULL, "/internal", PS_HTTP_PREFIX, standby_other, ha,
                                   err)) != 0 ||
        (rc = ps_http_server_route(http, "GET", "/metrics", PS_HTTP_EXACT, standby_other, ha,
                                   err)) != 0 ||
        (rc = ps_http_server_start(http, err)) != 0) {
        ps_http_server_free(http);
        ha_free_fields(ha);
        return rc;
    }
    cfg->port = ps_http_server_port(http);
    char host[64];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    snprintf(ha->holder, sizeof ha->holder, "%s/%d", host, (int)getpid());
    pthread_mutex_lock(&ha->mu);   /* the listener's handlers read it (standby_forward) */
    snprintf(ha->address, sizeof ha->address, "%s:%d", cfg->host, cfg->port);
    pthread_mutex_unlock(&ha->mu);
    if (!cfg->quiet)
        ps_svc_log(NULL, "info", "standby_started", "listen=%s holder=%s store=%s lease_ms=%d",
                   ha->address, ha->holder, ps_store_path(ha->store), ha->lease_ms);
    int64_t last_epoch_seen = -1;
    for (;;) {
        struct ps_error e;
        ps_error_init(&e);
        int64_t epoch = 0;
        rc = ps_store_leader_acquire(ha->store, ha->holder, ha->address, ha->lease_ms, &epoch,
                                     &e);
        if (rc == 0) {
            ha->epoch = epoch;
            pthread_mutex_lock(&ha->mu);
            ha->taking_over = true;
            pthread_mutex_unlock(&ha->mu);
            break;
        }
        struct ps_store_leader l;
        if (ps_store_leader_get(ha->store, &l, NULL) == 0) {
            pthread_mutex_lock(&ha->mu);
            ha->leader = l;
            pthread_mutex_unlock(&ha->mu);
            if (l.epoch != last_epoch_seen && !cfg->quiet)
                ps_svc_log(NULL, "info", "standby_following", "leader=%s holder=%s epoch=%lld",
                           l.address, l.holder, (long long)l.epoch);
            last_epoch_seen = l.epoch;
        } else if (rc != PS_ESTATE && !cfg->quiet) {
            ps_svc_log(NULL, "warning", "standby_store_unavailable", "error=\"%s\"", e.msg);
        }
        struct timespec ts = {PS_HA_POLL_MS / 1000, (PS_HA_POLL_MS % 1000) * 1000000L};
        int s = sigtimedwait(set, NULL, &ts);
        if (s > 0) {
            *sig = s;
            ps_http_server_stop(http);
            ps_http_server_free(http);
            ha_free_fields(ha);
            return 1;
        }
    }
    ps_http_server_stop(http);
    ps_http_server_free(http);
    cfg->ha_epoch = ha->epoch;
    if (!cfg->quiet)
        ps_svc_log(NULL, "info", "leader_elected", "epoch=%lld holder=%s address=%s",
                   (long long)ha->epoch, ha->holder, ha->address);
    *out = ha;
    return 0;
}

/* ---- leader -------------------------------------------------------------------------------- */

void ps_ha_step_down(struct ps_service *svc, const char *why)
{
    ps_svc_log(svc, "error", "leader_deposed", "epoch=%lld reason=\"%s\" action=exit",
               (long long)(svc ? svc->cfg.ha_epoch : 0), why);
    fflush(stderr);
    _exit(PS_HA_EXIT_DEPOSED);   /* at once: no further reply or write of this epoch */
}

/* The leader row as the leader last read it: for the metric, the alert and the orchid. */
static void publish(struct ps_service *svc, const struct ps_store_leader *l)
{
    __atomic_store_n(&svc->ha_standbys, l->standbys, __ATOMIC_RELAXED);
    ps_metric_set(svc->m_standbys, l->standbys);
    pthread_mutex_lock(&svc->ha_mu);
    svc->ha_view = *l;
    pthread_mutex_unlock(&svc->ha_mu);
}

static void *renewer(void *arg)
{
    struct ps_ha *ha = arg;
    int64_t last_ok_ns = ps_clock_monotonic_ns();
    pthread_mutex_lock(&ha->mu);
    while (!ha->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = (int64_t)ts.tv_nsec + (int64_t)ha->lease_ms / 4 * 1000000;
        ts.tv_sec += (time_t)(ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
        pthread_cond_timedwait(&ha->cv, &ha->mu, &ts);
        if (ha->stop)
            break;
        pthread_mutex_unlock(&ha->mu);
        /* measured from before the renewal is sent: the database's lease runs from later */
        int64_t sent_ns = ps_clock_monotonic_ns();
        struct ps_error e;
        ps_error_init(&e);
        int rc = ps_store_leader_renew(ha->store, ha->epoch, ha->lease_ms, &e);
        if (rc == PS_ESTATE)
            ps_ha_step_down(ha->svc, e.msg);
        if (rc == 0) {
            last_ok_ns = sent_ns;
            struct ps_store_leader l;
            if (ps_store_leader_get(ha->store, &l, NULL) == 0)
                publish(ha->svc, &l);
        }
        else if (ps_clock_monotonic_ns() - last_ok_ns >= (int64_t)ha->lease_ms * 1000000)
            ps_ha_step_down(ha->svc, "no lease renewal succeeded for a whole lease");
        else
            ps_svc_log(ha->svc, "warning", "lease_renewal_failed", "error=\"%s\"", e.msg);
        pthread_mutex_lock(&ha->mu);
    }
    pthread_mutex_unlock(&ha->mu);
    return NULL;
}

int ps_ha_lead(struct ps_ha *ha, struct ps_service *svc, struct ps_error *err)
{
    ha->svc = svc;
    struct ps_store_leader l;
    if (ps_store_leader_get(ha->store, &l, NULL) == 0)   /* since when, at once */
        publish(svc, &l);
    if (pthread_create(&ha->thread, NULL, renewer, ha) != 0)
        return ps_error_set(err, PS_EIO, "cannot start the lease renewal thread");
    ha->started = true;
    return 0;
}

void ps_ha_free(struct ps_ha *ha)
{
    if (!ha)
        return;
    if (ha->started) {
        pthread_mutex_lock(&ha->mu);
        ha->stop = true;
        pthread_cond_broadcast(&ha->cv);
        pthread_mutex_unlock(&ha->mu);
        pthread_join(ha->thread, NULL);
    }
    ha_free_fields(ha);
}
