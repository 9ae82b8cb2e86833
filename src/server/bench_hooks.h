/* bench_hooks.h — what the scheduler offers its benchmarks (src/bench/): an in-process
 * scheduler started and stopped, its port and tokens, one fair-share update on demand, its
 * counters and metrics, and a user command run as the admin. The benchmarks see no more of
 * the service than this (docs/design.md, "Rooms"); the struct stays opaque to them.
 */
#ifndef PS_SERVER_BENCH_HOOKS_H
#define PS_SERVER_BENCH_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;

/* What a benchmark sets of the scheduler's configuration; 0 keeps the default. It always
 * listens on a free loopback port (ps_bench_server_port) and logs nothing. */
struct ps_bench_server_options {
    const char *data_dir;               /* required */
    int http_threads;
    int64_t heartbeat_period_ms;
    int64_t fair_share_update_period_ms;
    int64_t node_offline_timeout_ms;
};

/* Starts a scheduler in this process. 0, or the error of ps_service_start (err says why). */
int ps_bench_server_start(const struct ps_bench_server_options *opt, struct ps_service **out,
                          struct ps_error *err);
void ps_bench_server_stop(struct ps_service *svc);
uint16_t ps_bench_server_port(const struct ps_service *svc);
/* The tokens of the node agents and of the admin (valid until stop). */
const char *ps_bench_server_cluster_secret(const struct ps_service *svc);
const char *ps_bench_server_admin_token(const struct ps_service *svc);

/* Runs one fair-share update now, as the engine loop does (takes the service's lock). */
void ps_bench_server_update_fair_share(struct ps_service *svc);

/* The service's counters a benchmark reads (their values now). */
enum ps_bench_counter { PS_BENCH_COMMITS, PS_BENCH_JOBS_FINISHED };
double ps_bench_server_counter(const struct ps_service *svc, enum ps_bench_counter which);
/* The service's metrics in the text exposition format (caller frees *out). 0 or the error. */
int ps_bench_server_metrics(struct ps_service *svc, char **out, size_t *len,
                            struct ps_error *err);

/* Runs a user command in-process as the admin (body: JSON text). Returns the HTTP status;
 * *reply receives the JSON reply (caller decrefs; may be NULL). */
int ps_bench_server_api(struct ps_service *svc, const char *command, const char *body,
                        json_t **reply);

#endif
