/* service_config.c — the scheduler's configuration (the --config file and the command line's
 * listen address): one attr table of every key, its defaults, and the loopback rule that the
 * listen and metrics settings share. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "io/json_value.h"
#include "platform/data_dir.h"
#include "server/event_log.h"
#include "server/ha.h"
#include "server/history.h"
#include "server/http_server.h"
#include "server/node_health.h"
#include "server/service_config.h"
#include "server/store.h"

/* ---- config ----------------------------------------------------------------------------------- */

void ps_service_config_init(struct ps_service_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->host, sizeof cfg->host, "%s", PS_SERVICE_DEFAULT_HOST);
    cfg->port = PS_SERVICE_DEFAULT_PORT;
    /* An environment value too long for the buffer falls back to the local directory. */
    if (ps_data_dir_default(NULL, cfg->data_dir, sizeof cfg->data_dir) != 0)
        snprintf(cfg->data_dir, sizeof cfg->data_dir, "%s", PS_DATA_DIR_FALLBACK);
    const char *store = getenv("POOLSCHED_STORE");
    if (store && strlen(store) < sizeof cfg->store)
        snprintf(cfg->store, sizeof cfg->store, "%s", store);
    cfg->fair_share_update_period_ms = 1000;
    cfg->ha_lease_ms = PS_HA_DEFAULT_LEASE_MS;
    cfg->heartbeat_period_ms = 5000;
    cfg->node_offline_timeout_ms = 60000;
    ps_memory_controller_config_init(&cfg->controller_agent);
    cfg->http_threads = 8;
    cfg->max_failed_job_count = 10;
    cfg->commit_window_ms = 0;
    cfg->history_bucket_ms = PS_HISTORY_BUCKET_MS;
    cfg->event_log_max_row_count = PS_EVENT_LOG_DEFAULT_MAX_ROWS;
    cfg->nodes_info_logging_period_ms = PS_EVENT_LOG_NODES_INFO_PERIOD_MS;
    cfg->http_max_body_size = 1 << 20;
    cfg->http_max_start_op_body_size = 16 << 20;
    cfg->http_max_heartbeat_body_size = 32 << 20;
    cfg->http_max_connections = 0;
    cfg->http_max_connections_per_ip = PS_HTTP_DEFAULT_MAX_CONNECTIONS_PER_IP;
    cfg->http_header_timeout_ms = PS_HTTP_DEFAULT_HEADER_TIMEOUT_MS;
    cfg->http_idle_timeout_ms = PS_HTTP_DEFAULT_IDLE_TIMEOUT_S * 1000;
    cfg->metrics_require_token = -1;
    cfg->allow_insecure_remote = false;
    cfg->enable_schedule_in_single_tree = true;
    ps_node_health_config_init(cfg);
}

bool ps_service_metrics_require_token(const struct ps_service_config *cfg)
{
    return cfg->metrics_require_token < 0 ? !ps_service_listen_is_loopback(cfg)
                                          : cfg->metrics_require_token != 0;
}

bool ps_service_listen_is_loopback(const struct ps_service_config *cfg)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, cfg->host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, cfg->host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return false;
}

int ps_service_parse_listen(struct ps_service_config *cfg, const char *text, struct ps_error *err)
{
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || !colon[1])
        return ps_error_set(err, PS_EINVAL, "listen: \"%s\" is not HOST:PORT", text);
    size_t hl = (size_t)(colon - text);
    const char *h = text;
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl >= sizeof cfg->host)
        return ps_error_set(err, PS_EINVAL, "listen: host too long in \"%s\"", text);
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535)
        return ps_error_set(err, PS_EINVAL, "listen: bad port in \"%s\" (0..65535)", text);
    memcpy(cfg->host, h, hl);
    cfg->host[hl] = 0;
    cfg->port = (int)port;
    return 0;
}

int ps_service_parse_store(struct ps_service_config *cfg, const char *url, struct ps_error *err)
{
    if (!url || strlen(url) >= sizeof cfg->store)
        return ps_error_set(err, PS_EINVAL, "the store URI is longer than %zu bytes",
                            sizeof cfg->store - 1);
    if (*url && !ps_store_url_is_postgres(url))
        return ps_error_set(err, PS_EINVAL,
                            "'%.200s' is not a postgresql://USER@HOST:PORT/DB URI (an empty "
                            "value selects SQLite in the data dir)", url);
    snprintf(cfg->store, sizeof cfg->store, "%s", url);
    return 0;
}

/* The scheduler config's keys (durations in ms, sizes in bytes), node_health.h's among them;
 * listen (HOST:PORT), data_dir (a path), store (a URI) and metrics_require_token (true, false or "auto") are
 * read by ps_service_config_apply itself. */
static int config_defaults(void *obj)
{
    ps_service_config_init(obj);
    return 0;
}

#define CFG(field) offsetof(struct ps_service_config, field)
#define DAY_MS 86400000.0
static const struct ps_attr config_attrs[] = {
    {.name = "fair_share_update_period", .kind = PS_ATTR_INT,
     .offset = CFG(fair_share_update_period_ms), .min = 10, .max = 60000},
    {.name = "heartbeat_period", .kind = PS_ATTR_INT, .offset = CFG(heartbeat_period_ms),
     .min = 10, .max = 3600000},
    {.name = "node_offline_timeout", .kind = PS_ATTR_INT, .offset = CFG(node_offline_timeout_ms),
     .min = 100, .max = 86400000},
    {.name = "http_threads", .kind = PS_ATTR_INT32, .offset = CFG(http_threads), .min = 1,
     .max = 256},
    /* The operation spec's key of the same name (op_spec.h) has the same range. */
    {.name = "max_failed_job_count", .kind = PS_ATTR_INT32, .offset = CFG(max_failed_job_count),
     .min = 0, .max = PS_MAX_FAILED_JOB_COUNT},
    {.name = "commit_window", .kind = PS_ATTR_INT, .offset = CFG(commit_window_ms), .min = 0,
     .max = 1000},
    {.name = "history_bucket", .kind = PS_ATTR_INT, .offset = CFG(history_bucket_ms),
     .min = 1000, .max = 3600000},
    {.name = "event_log_max_row_count", .kind = PS_ATTR_INT,
     .offset = CFG(event_log_max_row_count), .min = 0, .max = 1e9},
    {.name = "nodes_info_logging_period", .kind = PS_ATTR_INT,
     .offset = CFG(nodes_info_logging_period_ms), .min = 1000, .max = 86400000},
    /* HTTP limits (docs/api.md "Limits") */
    {.name = "http_max_body_size", .kind = PS_ATTR_INT, .offset = CFG(http_max_body_size),
     .min = 1024, .max = 1073741824},
    {.name = "http_max_start_op_body_size", .kind = PS_ATTR_INT,
     .offset = CFG(http_max_start_op_body_size), .min = 1024, .max = 1073741824},
    {.name = "http_max_heartbeat_body_size", .kind = PS_ATTR_INT,
     .offset = CFG(http_max_heartbeat_body_size), .min = 1024, .max = 1073741824},
    {.name = "http_max_connections", .kind = PS_ATTR_INT, .offset = CFG(http_max_connections),
     .min = 0, .max = 1000000},
    {.name = "http_max_connections_per_ip", .kind = PS_ATTR_INT,
     .offset = CFG(http_max_connections_per_ip), .min = 1, .max = 1000000},
    {.name = "http_header_timeout", .kind = PS_ATTR_INT, .offset = CFG(http_header_timeout_ms),
     .min = 100, .max = 3600000},
    {.name = "http_idle_timeout", .kind = PS_ATTR_INT, .offset = CFG(http_idle_timeout_ms),
     .min = 1000, .max = 86400000},
    {.name = "allow_insecure_remote", .kind = PS_ATTR_BOOL, .offset = CFG(allow_insecure_remote)},
    /* standby schedulers (ha.h) */
    {.name = "ha", .kind = PS_ATTR_BOOL, .offset = CFG(ha)},
    {.name = "ha_lease", .kind = PS_ATTR_INT, .offset = CFG(ha_lease_ms), .min = 500,
     .max = 60000},
    {.name = "enable_schedule_in_single_tree", .kind = PS_ATTR_BOOL,
     .offset = CFG(enable_schedule_in_single_tree)},
    /* broken nodes and operations that can never run (node_health.h) */
    {.name = "max_consecutive_job_aborts", .kind = PS_ATTR_INT32,
     .offset = CFG(max_consecutive_job_aborts), .min = 0, .max = 1000000},
    {.name = "disable_jobs_timeout", .kind = PS_ATTR_INT, .offset = CFG(disable_jobs_timeout_ms),
     .min = 0, .max = 30 * DAY_MS},
    {.name = "available_exec_nodes_check_period", .kind = PS_ATTR_INT,
     .offset = CFG(available_exec_nodes_check_period_ms), .min = 10, .max = DAY_MS},
    {.name = "safe_scheduler_online_time", .kind = PS_ATTR_INT,
     .offset = CFG(safe_scheduler_online_time_ms), .min = 0, .max = DAY_MS},
    {.name = "resource_demand_sanity_check_period", .kind = PS_ATTR_INT,
     .offset = CFG(resource_demand_sanity_check_period_ms), .min = 10, .max = DAY_MS},
    {.name = "operation_hangup_check_period", .alias = {"operation_unschedulable_check_period"},
     .kind = PS_ATTR_INT, .offset = CFG(operation_hangup_check_period_ms), .min = 10,
     .max = DAY_MS},
    {.name = "operation_hangup_due_to_limiting_ancestor_safe_timeout",
     .alias = {"operation_unschedulable_due_to_limiting_ancestor_safe_timeout"},
     .kind = PS_ATTR_INT,
     .offset = CFG(operation_hangup_due_to_limiting_ancestor_safe_timeout_ms), .min = 0,
     .max = 30 * DAY_MS},
    {.name = "operation_hangup_safe_timeout", .alias = {"operation_unschedulable_safe_timeout"},
     .kind = PS_ATTR_INT, .offset = CFG(operation_hangup_safe_timeout_ms), .min = 0,
     .max = 100000 * DAY_MS},
    {.name = "operation_hangup_min_schedule_job_attempts",
     .alias = {"operation_hangup_min_schedule_allocation_attempts",
               "operation_unschedulable_min_schedule_job_attempts"},
     .kind = PS_ATTR_INT, .offset = CFG(operation_hangup_min_schedule_job_attempts), .min = 0,
     .max = 1e18},
    /* a scheduler option upstream, a tree key here: the default of every tree's */
    {.name = "allowed_node_resources_overcommit_duration", .kind = PS_ATTR_OPT_INT,
     .offset = CFG(allowed_node_resources_overcommit_duration_ms), .min = 0,
     .max = 100000 * DAY_MS},
    {.name = "controller_agent", .kind = PS_ATTR_GROUP, .offset = CFG(controller_agent),
     .group = &ps_memory_controller_config_table, .presence_offset = -1},
};
#undef CFG
#undef DAY_MS

static const struct ps_attr_table config_table = {
    .what = "scheduler config",
    .attrs = config_attrs,
    .count = (int)(sizeof config_attrs / sizeof config_attrs[0]),
    .size = sizeof(struct ps_service_config),
    .init = config_defaults,
};

int ps_service_config_apply(struct ps_service_config *cfg, const json_t *doc, struct ps_error *err)
{
    if (!json_is_object(doc))
        return ps_error_set(err, PS_EINVAL, "the config must be a map");
    struct ps_service_config next = *cfg;
    int rc;
    const json_t *v;
    if ((v = json_object_get(doc, "listen"))) {
        if (!json_is_string(v))
            return ps_error_set(err, PS_EINVAL, "listen: must be a string HOST:PORT");
        if ((rc = ps_service_parse_listen(&next, json_string_value(v), err)) != 0)
            return rc;
    }
    if ((v = json_object_get(doc, "data_dir"))) {
        if (!json_is_string(v) || json_string_length(v) == 0 ||
            json_string_length(v) >= sizeof next.data_dir)
            return ps_error_set(err, PS_EINVAL, "data_dir: must be a non-empty path");
        snprintf(next.data_dir, sizeof next.data_dir, "%s", json_string_value(v));
    }
    if ((v = json_object_get(doc, "store"))) {
        if (!json_is_string(v))
            return ps_error_set(err, PS_EINVAL,
                                "store: must be a string, a postgresql://USER@HOST:PORT/DB URI");
        if ((rc = ps_service_parse_store(&next, json_string_value(v), err)) != 0) {
            ps_error_prefix(err, "store");
            return rc;
        }
    }
    if ((v = json_object_get(doc, "metrics_require_token"))) {
        if (json_is_boolean(v))
            next.metrics_require_token = json_is_true(v) ? 1 : 0;
        else if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0)
            next.metrics_require_token = -1;
        else
            return ps_error_set(err, PS_EINVAL,
                                "metrics_require_token: must be true, false or \"auto\"");
    }
    json_t *rest = json_deep_copy(doc);
    if (!rest)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    json_object_del(rest, "listen");
    json_object_del(rest, "data_dir");
    json_object_del(rest, "store");
    json_object_del(rest, "metrics_require_token");
    rc = ps_attr_apply_json(&config_table, &next, rest, err);
    json_decref(rest);
    if (rc == 0 && (rc = ps_memory_controller_config_validate(&next.controller_agent, err)) != 0)
        ps_error_prefix(err, "controller_agent");
    if (rc == 0)
        *cfg = next;
    return rc;
}
