/* service_config.h — the scheduler's configuration (service_config.c): struct ps_service_config
 * with its defaults, the config file's keys and the listen and store addresses. Read by the
 * `scheduler` command before the service starts, and kept in svc->cfg while it runs. */
#ifndef PS_SERVER_SERVICE_CONFIG_H
#define PS_SERVER_SERVICE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/attr.h"
#include "core/error.h"
#include "core/memory_reserve.h"

#define PS_SERVICE_DEFAULT_HOST "127.0.0.1"
#define PS_SERVICE_DEFAULT_PORT 9013

struct ps_service_config {
    char host[64];                        /* listen address, numeric */
    int port;                             /* 0 = any free port; -1 = no HTTP (in-process) */
    char data_dir[1024];
    char store[1024];                     /* "" = SQLite in data_dir; else a postgresql:// URI
                                           * (store.h); default $POOLSCHED_STORE */
    int64_t fair_share_update_period_ms;  /* 1000; the default tree's @fair_share_update_period
                                             at first start; each tree follows its own later */
    int64_t heartbeat_period_ms;          /* 5000: told to nodes */
    int64_t node_offline_timeout_ms;      /* 60000: no heartbeat for this long -> offline */
    int http_threads;                     /* 8 */
    int max_failed_job_count;             /* 10: an operation fails at the 10th failed job,
                                           * unless its spec says otherwise */
    int64_t commit_window_ms;             /* 0: the journal commits as soon as it has work */
    int64_t history_bucket_ms;            /* 300000: the charts' history buckets (history.h) */
    /* HTTP limits against hostile or careless clients (docs/api.md "Limits") */
    int64_t http_max_body_size;           /* 1 MiB: bodies of API commands */
    int64_t http_max_start_op_body_size;  /* 16 MiB: start_op (specs with many tasks) */
    int64_t http_max_heartbeat_body_size; /* 32 MiB: node heartbeats (stderr of finished jobs) */
    int64_t http_max_connections;         /* 0: from the fd limit (raised to its hard limit) */
    int64_t http_max_connections_per_ip;  /* 256 */
    int64_t http_header_timeout_ms;       /* 10000: request headers complete within */
    int64_t http_idle_timeout_ms;         /* 60000: idle keep-alive connections close after */
    int metrics_require_token;            /* -1 auto (required unless listening on loopback),
                                             0 no, 1 yes */
    bool allow_insecure_remote;           /* listen beyond loopback without TLS */
    bool enable_schedule_in_single_tree;  /* true: honour the spec's schedule_in_single_tree */
    /* broken nodes and operations that can never run (node_health.h) */
    int max_consecutive_job_aborts;       /* 10: node_error aborts in a row that ban a node */
    int64_t disable_jobs_timeout_ms;      /* 600000: a node banned for them returns; 0 never */
    int64_t available_exec_nodes_check_period_ms;                 /* 5000 */
    int64_t safe_scheduler_online_time_ms;                        /* 600000 */
    int64_t resource_demand_sanity_check_period_ms;               /* 15000 */
    int64_t operation_hangup_check_period_ms;                     /* 60000 */
    int64_t operation_hangup_due_to_limiting_ancestor_safe_timeout_ms;   /* 300000 */
    int64_t operation_hangup_safe_timeout_ms;                     /* 3600000 */
    int64_t operation_hangup_min_schedule_job_attempts;           /* 1000 */
    /* upstream's scheduler option, the default of every tree's key of that name (unset: the
     * tree's own default, 15000) */
    struct ps_opt_int allowed_node_resources_overcommit_duration_ms;
    bool quiet;                           /* no event log on stderr (benchmarks) */
    int64_t event_log_max_row_count;      /* 100000: rows //sys/scheduler/event_log keeps
                                           * (event_log.h); 0: none written */
    int64_t nodes_info_logging_period_ms; /* 30000: the event log's state rows (nodes_info,
                                           * ...) at most this often, save at start and when
                                           * the bound drops them (event_log.h) */
    /* standby schedulers (ha.h, docs/ha.md): off by default; needs the PostgreSQL store */
    bool ha;                              /* start as a standby, lead when elected */
    int64_t ha_lease_ms;                  /* 2000: the leader's lease */
    int64_t ha_epoch;                     /* set when elected (not a config key): the fence */
    /* The controller's memory reserve knobs (section `controller_agent`, upstream's names;
     * core/memory_reserve.h), for every operation's memory digests. */
    struct ps_memory_controller_config controller_agent;
};

void ps_service_config_init(struct ps_service_config *cfg);

/* Applies a config document (JSON object: listen "host:port", data_dir, store,
 * fair_share_update_period, heartbeat_period, node_offline_timeout, http_threads,
 * max_failed_job_count, commit_window, history_bucket, http_max_body_size, http_max_start_op_body_size,
 * http_max_heartbeat_body_size, http_max_connections, http_max_connections_per_ip,
 * http_header_timeout, http_idle_timeout, metrics_require_token (true, false or "auto"),
 * allow_insecure_remote, and node_health.h's keys; durations in ms, sizes in bytes) through the
 * config's attr table: ranges and messages as every table's; unknown keys are errors (did you
 * mean ...?). On error cfg is unchanged. */
int ps_service_config_apply(struct ps_service_config *cfg, const json_t *doc,
                            struct ps_error *err);

/* Whether the listen address is a loopback one (127.0.0.0/8, ::1). */
bool ps_service_listen_is_loopback(const struct ps_service_config *cfg);

/* Whether GET /metrics needs a token: metrics_require_token, where "auto" means yes unless the
 * service listens on loopback. */
bool ps_service_metrics_require_token(const struct ps_service_config *cfg);

/* Sets cfg->store: "" (SQLite in the data dir) or a postgresql:// URI. Errors: PS_EINVAL. */
int ps_service_parse_store(struct ps_service_config *cfg, const char *url, struct ps_error *err);

/* Parses "host:port" (host numeric IPv4; "[v6]:port" for IPv6). */
int ps_service_parse_listen(struct ps_service_config *cfg, const char *text,
                            struct ps_error *err);

#endif
