/* bench_hooks.c — the scheduler's face to its benchmarks (bench_hooks.h). */
#include "server/bench_hooks.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server/api.h"
#include "server/metrics.h"
#include "server/service.h"
#include "server/service_config.h"
#include "server/service_state.h"

void ps_svc_update_all(struct ps_service *svc);   /* engine_loop.c */

int ps_bench_server_start(const struct ps_bench_server_options *opt, struct ps_service **out,
                          struct ps_error *err)
{
    struct ps_service_config cfg;
    ps_service_config_init(&cfg);
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", opt->data_dir);
    cfg.port = 0;
    cfg.quiet = true;
    if (opt->http_threads > 0)
        cfg.http_threads = opt->http_threads;
    if (opt->heartbeat_period_ms > 0)
        cfg.heartbeat_period_ms = opt->heartbeat_period_ms;
    if (opt->fair_share_update_period_ms > 0)
        cfg.fair_share_update_period_ms = opt->fair_share_update_period_ms;
    if (opt->node_offline_timeout_ms > 0)
        cfg.node_offline_timeout_ms = opt->node_offline_timeout_ms;
    return ps_service_start(&cfg, out, err);
}

void ps_bench_server_stop(struct ps_service *svc)
{
    ps_service_stop(svc);
}

uint16_t ps_bench_server_port(const struct ps_service *svc)
{
    return ps_service_port(svc);
}

const char *ps_bench_server_cluster_secret(const struct ps_service *svc)
{
    return svc->cluster_secret;
}

const char *ps_bench_server_admin_token(const struct ps_service *svc)
{
    return svc->admin_token;
}

void ps_bench_server_update_fair_share(struct ps_service *svc)
{
    pthread_mutex_lock(&svc->mu);
    ps_svc_update_all(svc);
    pthread_mutex_unlock(&svc->mu);
}

double ps_bench_server_counter(const struct ps_service *svc, enum ps_bench_counter which)
{
    return ps_metric_value(which == PS_BENCH_COMMITS ? svc->m_commits : svc->m_jobs_finished);
}

int ps_bench_server_metrics(struct ps_service *svc, char **out, size_t *len,
                            struct ps_error *err)
{
    return ps_metrics_render(svc->metrics, out, len, err);
}

int ps_bench_server_api(struct ps_service *svc, const char *command, const char *body,
                        json_t **reply)
{
    struct ps_auth_identity admin = {"admin", PS_ROLE_ADMIN};
    return ps_api_dispatch(svc, command, body, strlen(body), &admin, reply);
}
