/* service_life.c — starting and stopping the scheduler service. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_value.h"
#include "platform/clock.h"
#include "platform/fd_limit.h"
#include "platform/private_file.h"
#include "platform/random.h"
#include "server/api.h"
#include "server/event_log.h"
#include "server/journal.h"
#include "server/node_health.h"
#include "server/node_tags.h"
#include "server/persist.h"
#include "server/service.h"
#include "server/service_config.h"
#include "server/job_metrics.h"
#include "server/service_state.h"
#include "server/store_mirror.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"
#include "server/what_if_task.h"
#include "server/svc_ops.h"

int ps_svc_loop_start(struct ps_service *svc, struct ps_error *err);

void ps_svc_job_free(struct ps_svc_job *job)
{
    if (!job)
        return;
    free(job->id);
    free(job->node_id);
    free(job->error);
    free(job->abort_reason);
    free(job->preemption_reason);
    free(job->preempted_for_op);
    free(job->preempted_for_job);
    free(job->interrupt_reason);
    free(job->stderr_text);
    json_decref(job->statistics);
    json_decref(job->exec_attributes);
    free(job);
}

static int hex_token(char out[PS_AUTH_TOKEN_LEN + 1], struct ps_error *err)
{
    return ps_auth_token_generate(out, err);
}

/* <data_dir>/cluster_secret: created on first start (0600), read afterwards. */
static int cluster_secret(struct ps_service *svc, struct ps_error *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", svc->cfg.data_dir, PS_SERVICE_CLUSTER_SECRET_FILE);
    char *text = NULL;
    size_t len = 0;
    int rc = ps_private_file_read(path, 4096, &text, &len, err);
    if (rc == PS_ENOENT) {
        ps_error_init(err);
        if ((rc = hex_token(svc->cluster_secret, err)) != 0)
            return rc;
        char line[PS_AUTH_TOKEN_LEN + 2];
        snprintf(line, sizeof line, "%s\n", svc->cluster_secret);
        rc = ps_private_file_write(path, line, strlen(line), err);
        if (rc == 0)
            ps_svc_log(svc, "info", "cluster_secret_created", "path=%s", path);
        return rc;
    }
    if (rc != 0)
        return rc;
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        text[--len] = 0;
    if (len != PS_AUTH_TOKEN_LEN) {
        free(text);
        return ps_error_set(err, PS_EINVAL, "%s: expected %d hex characters", path,
                            PS_AUTH_TOKEN_LEN);
    }
    memcpy(svc->cluster_secret, text, PS_AUTH_TOKEN_LEN + 1);
    free(text);
    return 0;
}

static int register_metrics(struct ps_service *svc, struct ps_error *err)
{
    struct ps_metrics *r = svc->metrics;
    struct ps_metric_family *f;
    int rc;
#define COUNTER(field, name, help)                                                            \
    if ((rc = ps_metrics_counter(r, name, help, 0, NULL, &f, err)) != 0 ||                   \
        (rc = ps_metric_family_get(f, NULL, &svc->field, err)) != 0)                           \
        return rc;
    COUNTER(m_heartbeats, "poolsched_node_heartbeats_total", "Node heartbeats handled")
    COUNTER(m_allocations, "poolsched_allocations_total", "Jobs started on nodes")
    COUNTER(m_preemptions, "poolsched_preemptions_total", "Jobs chosen as preemption victims")
    COUNTER(m_jobs_finished, "poolsched_jobs_finished_total", "Jobs that reached a final state")
    COUNTER(m_commits, "poolsched_store_commits_total", "Durable store commits (group commits)")
#undef COUNTER
    /* upstream's scheduler/pools/preempted_job_resources/cpu (pool root) by preemption_reason */
    static const char *const preempted_labels[] = {"tree", "preemption_reason"};
    if ((rc = ps_metrics_counter(r, "poolsched_preempted_job_resources_cpu_total",
                                 "CPU (cores) of the jobs chosen as preemption victims",
                                 2, preempted_labels, &svc->m_preempted_cpu, err)) != 0)
        return rc;
    static const double hb_bounds[] = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5};
    if ((rc = ps_metrics_histogram(r, "poolsched_heartbeat_duration_seconds",
                                   "Time to handle a node heartbeat (including the commit wait)",
                                   0, NULL, hb_bounds, 9, &f, err)) != 0 ||
        (rc = ps_metric_family_get(f, NULL, &svc->m_hb_latency, err)) != 0)
        return rc;
    static const double fs_bounds[] = {0.0001, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1};
    if ((rc = ps_metrics_histogram(r, "poolsched_fair_share_update_duration_seconds",
                                   "Duration of one tree's fair share update, from the build "
                                   "to the store refresh",
                                   0, NULL, fs_bounds, 9, &f, err)) != 0 ||
        (rc = ps_metric_family_get(f, NULL, &svc->m_fs_duration, err)) != 0)
        return rc;
    if ((rc = ps_metrics_histogram(r, "poolsched_fair_share_update_locked_seconds",
                                   "Part of one tree's fair share update that holds the service "
                                   "lock (all of it but the computation)",
                                   0, NULL, fs_bounds, 9, &f, err)) != 0 ||
        (rc = ps_metric_family_get(f, NULL, &svc->m_fs_locked, err)) != 0)
        return rc;
    if ((rc = ps_metrics_gauge(r, "poolsched_leader_epoch",
                               "The leader epoch this scheduler serves (0 without --ha)", 0, NULL,
                               &f, err)) != 0 ||
        (rc = ps_metric_family_get(f, NULL, &svc->m_leader_epoch, err)) != 0 ||
        (rc = ps_metrics_gauge(r, "poolsched_standbys",
                               "Standby schedulers that polled the store in the last 2 s (--ha)",
                               0, NULL, &f, err)) != 0 ||
        (rc = ps_metric_family_get(f, NULL, &svc->m_standbys, err)) != 0)
        return rc;
    ps_metric_set(svc->m_leader_epoch, (double)svc->cfg.ha_epoch);
    svc->ha_standbys = -1;
    if ((rc = ps_metrics_gauge(r, "poolsched_nodes_online", "Registered nodes", 0, NULL, &f,
                               err)) != 0 ||
        (rc = ps_metric_family_get(f, NULL, &svc->m_nodes, err)) != 0)
        return rc;
    if ((rc = ps_metrics_gauge(r, "poolsched_jobs_in_memory",
                               "Jobs held in memory: running, and finished ones until their final "
                               "record is committed (job_archive.h)",
                               0, NULL, &f, err)) != 0 ||
        (rc = ps_metric_family_get(f, NULL, &svc->m_jobs_in_memory, err)) != 0)
        return rc;
    static const char *const labels[] = {"tree", "pool"};
    if ((rc = ps_metrics_gauge(r, "poolsched_pool_fair_share_ratio",
                               "Dominant fair share of a pool", 2, labels,
                               &svc->f_pool_fair_share, err)) != 0 ||
        (rc = ps_metrics_gauge(r, "poolsched_pool_usage_ratio", "Dominant usage share of a pool",
                               2, labels, &svc->f_pool_usage, err)) != 0 ||
        (rc = ps_metrics_gauge(r, "poolsched_pool_demand_ratio",
                               "Dominant demand share of a pool", 2, labels,
                               &svc->f_pool_demand, err)) != 0 ||
        (rc = ps_metrics_gauge(r, "poolsched_pool_count",
                               "Pools of a tree, ephemeral ones included, the root not", 1, labels,
                               &svc->f_pool_count, err)) != 0)
        return rc;
    static const char *const quantile_labels[] = {"tree", "pool", "quantile"};
    if ((rc = ps_metrics_gauge(r, "poolsched_pool_operation_satisfaction_distribution",
                               "Quantiles of the local satisfaction ratios of a pool's operations "
                               "(upstream scheduler/pools/operation_satisfaction_distribution)",
                               3, quantile_labels, &svc->f_pool_satisfaction, err)) != 0)
        return rc;
    static const char *const tree_label[] = {"tree"};
    if ((rc = ps_metrics_gauge(r, "poolsched_node_count_per_tree",
                               "Nodes in a pool tree (upstream scheduler/node_count_per_tree)", 1,
                               tree_label, &svc->f_tree_nodes, err)) != 0)
        return rc;
    return ps_svc_job_metrics_register(svc, r, err);
}

/* First start: the default tree `physical`, made the default (//sys/pool_trees/@default_tree). */
static int first_start(struct ps_service *svc, struct ps_error *err)
{
    struct ps_value cfg = ps_value_map();
    ps_value_put_number(&cfg, "fair_share_update_period",
                        (double)svc->cfg.fair_share_update_period_ms);
    int rc = ps_strategy_add_tree(svc->strategy, PS_SERVICE_DEFAULT_TREE, &cfg, err);
    ps_value_release(&cfg);
    if (rc == 0)
        rc = ps_svc_add_tree_state(svc, PS_SERVICE_DEFAULT_TREE, err);
    if (rc == 0)
        rc = ps_strategy_set_default_tree(svc->strategy, PS_SERVICE_DEFAULT_TREE, err);
    if (rc != 0)
        return rc;
    ps_persist_tree(svc, PS_SERVICE_DEFAULT_TREE);
    ps_persist_meta(svc);
    ps_svc_log(svc, "info", "pool_tree_created", "tree=%s default=true", PS_SERVICE_DEFAULT_TREE);
    return 0;   /* the caller waits for the journal outside svc->mu (a failed commit takes it) */
}

static void log_http(void *ctx, const char *line)
{
    struct ps_service *svc = ctx;
    if (!svc->cfg.quiet)
        ps_svc_log(svc, "info", "http", "msg=\"%s\"", line);
}

/* The charts' history buckets saved before the last stop (history.h; the engine loop saves
 * each closed bucket). A record that does not parse is skipped: the charts only lose a point. */
static int collect_history(const char *key, const char *value, void *ctx)
{
    (void)key;
    json_t *r = json_loads(value, 0, NULL);
    if (r && json_array_append_new(ctx, r) != 0)
        return PS_ENOMEM;
    return 0;
}

static int load_history(struct ps_service *svc, struct ps_error *err)
{
    json_t *records = json_array();
    if (!records)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    pthread_mutex_lock(&svc->store_mu);
    int rc = ps_store_list(svc->store, "history", NULL, collect_history, records, err);
    pthread_mutex_unlock(&svc->store_mu);
    if (rc == 0 && ps_history_restore(svc->history, records, ps_svc_now_ms()) != 0)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0 && json_array_size(records))
        ps_svc_log(svc, "info", "history_loaded", "buckets=%zu", json_array_size(records));
    json_decref(records);
    return rc;
}

/* svc->strategy anew, connected at svc->connected_at_ms, with the tree defaults the config
 * gives (allowed_node_resources_overcommit_duration), before any tree is loaded. */
static int new_strategy(struct ps_service *svc, struct ps_error *err)
{
    if (!(svc->strategy = ps_strategy_new()))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ps_strategy_set_connection_time(svc->strategy, svc->connected_at_ms);
    const struct ps_opt_int *d = &svc->cfg.allowed_node_resources_overcommit_duration_ms;
    if (!d->set)
        return 0;
    struct ps_value map = ps_value_map();
    int rc = ps_value_put_number(&map, "allowed_node_resources_overcommit_duration",
                                 (double)d->value) != 0
                 ? ps_error_set(err, PS_ENOMEM, "out of memory")
                 : ps_strategy_set_tree_defaults(svc->strategy, &map, err);
    ps_value_release(&map);
    return rc;
}

int ps_service_start(const struct ps_service_config *cfg, struct ps_service **out,
                     struct ps_error *err)
{
    struct ps_service *svc = calloc(1, sizeof *svc);
    if (!svc)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    svc->cfg = *cfg;
    svc->event_log_state_seq = -1;   /* event_log.h: none logged yet */
    pthread_mutex_init(&svc->mu, NULL);
    pthread_mutex_init(&svc->store_mu, NULL);
    pthread_mutex_init(&svc->auth_mu, NULL);
    pthread_mutex_init(&svc->ha_mu, NULL);
    pthread_cond_init(&svc->loop_cv, NULL);
    ps_strmap_init(&svc->ops);
    ps_strmap_init(&svc->jobs);
    ps_strmap_init(&svc->nodes);
    ps_strmap_init(&svc->token_cache);
    int rc = 0;
    unsigned char boot[4];
    if ((rc = ps_random_bytes(boot, sizeof boot, err)) != 0)
        goto fail;
    snprintf(svc->boot_id, sizeof svc->boot_id, "%02x%02x%02x%02x", boot[0], boot[1], boot[2],
             boot[3]);
    svc->connected_at_ms = ps_svc_now_ms();
    if ((rc = new_strategy(svc, err)) != 0)
        goto fail;
    if ((rc = ps_metrics_new(&svc->metrics, err)) != 0 || (rc = register_metrics(svc, err)) != 0)
        goto fail;
    if (ps_history_new(&svc->history) != 0) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto fail;
    }
    ps_history_set_bucket_ms(svc->history, cfg->history_bucket_ms);
    char what_if_dir[sizeof cfg->data_dir + 16];
    snprintf(what_if_dir, sizeof what_if_dir, "%s/what-if", cfg->data_dir);
    if ((rc = ps_what_if_tasks_new(what_if_dir, &svc->what_if, err)) != 0)
        goto fail;
    /* one scheduler per database, unless elected (ha.h): then its writes are fenced */
    struct ps_store_config store_cfg = {.data_dir = cfg->data_dir, .url = cfg->store,
                                        .exclusive = !cfg->ha};
    if ((rc = ps_store_open_config(&store_cfg, &svc->store, err)) != 0)
        goto fail;
    if (cfg->ha)
        ps_store_fence(svc->store, cfg->ha_epoch);
    bool created = false;
    if ((rc = ps_auth_bootstrap_admin(svc->store, cfg->data_dir, "admin", svc->admin_token,
                                      &created, err)) != 0)
        goto fail;
    if (created)
        ps_svc_log(svc, "info", "admin_token_created", "path=%s/%s", cfg->data_dir,
                   PS_AUTH_ADMIN_TOKEN_FILE);
    if ((rc = cluster_secret(svc, err)) != 0)
        goto fail;
    if ((rc = ps_journal_new(svc, &svc->journal, err)) != 0)
        goto fail;
    if ((rc = ps_job_archive_open(svc, err)) != 0)
        goto fail;
    if ((rc = ps_store_mirror_open(svc, err)) != 0)
        goto fail;
    uint64_t first = 0;
    pthread_mutex_lock(&svc->mu);
    rc = ps_persist_load(svc, err);
    if (rc == 0)
        rc = load_history(svc, err);
    if (rc == 0)
        rc = ps_node_health_start(svc, err);
    if (rc == 0 && ps_strategy_tree_count(svc->strategy) == 0) {
        char *meta = NULL;
        pthread_mutex_lock(&svc->store_mu);
        bool known = ps_store_get(svc->store, "meta", "default_tree", &meta, NULL) == 0;
        pthread_mutex_unlock(&svc->store_mu);
        free(meta);
        if (!known && (rc = first_start(svc, err)) == 0)
            first = ps_journal_last(svc->journal);
    }
    pthread_mutex_unlock(&svc->mu);
    /* the first start's default tree is durable before the service answers (outside svc->mu:
     * a failed commit takes it to roll back) */
    if (rc == 0 && first)
        rc = ps_journal_wait(svc->journal, first, err);
    if (rc != 0)
        goto fail;
    ps_svc_log(svc, "info", "state_loaded", "trees=%d operations=%d jobs=%d",
               svc->tree_count, svc->op_count, svc->job_count);

    if (cfg->port < 0) {   /* in-process use (fuzzing): no listener */
        if ((rc = ps_svc_loop_start(svc, err)) != 0)
            goto fail;
        *out = svc;
        return 0;
    }
    struct ps_http_server_config hc;
    ps_http_server_config_init(&hc);
    hc.host = cfg->host;
    hc.port = (uint16_t)cfg->port;
    hc.threads = (unsigned)cfg->http_threads;
    hc.metrics = svc->metrics;
    hc.log = log_http;
    hc.log_ctx = svc;
    hc.max_body_bytes = (size_t)cfg->http_max_body_size;
    /* One descriptor per connection: the soft fd limit goes up to the hard one, and the
     * connection limit defaults to what it allows after a reserve for the store and logs. */
    uint64_t fds = ps_fd_limit_raise();
    int64_t max_conn = cfg->http_max_connections;
    if (max_conn == 0) {
        max_conn = fds > 65536 + 256 ? 65536 : fds > 256 + 64 ? (int64_t)fds - 256 : 64;
    }
    hc.max_connections = (unsigned)max_conn;
    hc.max_connections_per_ip = (unsigned)cfg->http_max_connections_per_ip;
    hc.header_timeout_ms = (unsigned)cfg->http_header_timeout_ms;
    hc.idle_timeout_s = (unsigned)((cfg->http_idle_timeout_ms + 999) / 1000);
    char real_dir[PATH_MAX];
    if ((rc = ps_http_server_new(&hc, &svc->http, err)) != 0 ||
        (rc = ps_http_server_redact(svc->http, cfg->data_dir, err)) != 0 ||
        (realpath(cfg->data_dir, real_dir) &&
         strcmp(real_dir, cfg->data_dir) != 0 &&
         (rc = ps_http_server_redact(svc->http, real_dir, err)) != 0) ||
        (rc = ps_api_register(svc, err)) != 0)
        goto fail;
    ps_svc_log(svc, "info", "http_limits",
               "max_connections=%u per_ip=%u header_timeout_ms=%u idle_timeout_s=%u "
               "fd_limit=%llu metrics_require_token=%s", hc.max_connections,
               hc.max_connections_per_ip, hc.header_timeout_ms, hc.idle_timeout_s,
               (unsigned long long)fds, ps_service_metrics_require_token(cfg) ? "true" : "false");
    if ((rc = ps_svc_loop_start(svc, err)) != 0)
        goto fail;
    if ((rc = ps_http_server_start(svc->http, err)) != 0)
        goto fail;
    ps_svc_log(svc, "info", "scheduler_started", "listen=%s:%u data_dir=%s store=%s",
               cfg->host, ps_http_server_port(svc->http), cfg->data_dir,
               ps_store_path(svc->store));
    *out = svc;
    return 0;
fail:
    ps_service_stop(svc);
    return rc;
}

uint16_t ps_service_port(const struct ps_service *svc)
{
    return svc->http ? ps_http_server_port(svc->http) : 0;
}

/* Frees the operations, jobs, trees and the strategy (what ps_persist_load builds). Nodes stay
 * (they are not stored: heartbeats create them) but lose their jobs; with keep_nodes false they
 * are freed too. Under svc->mu, or with no other thread left. */
static void free_state(struct ps_service *svc, bool keep_nodes)
{
    ps_event_log_release(svc);
    ps_job_archive_reset(svc->archive);
    for (int i = 0; i < svc->job_count; i++)
        ps_svc_job_free(svc->job_list[i]);
    svc->job_count = 0;
    for (int i = 0; i < svc->op_count; i++)
        ps_svc_op_free(svc->op_list[i]);
    svc->op_count = 0;
    ps_strmap_release(&svc->ops);
    ps_strmap_init(&svc->ops);
    ps_strmap_release(&svc->jobs);
    ps_strmap_init(&svc->jobs);
    for (int i = 0; i < svc->node_count; i++) {
        struct ps_svc_node *n = svc->node_list[i];
        n->jobs = NULL;
        n->job_count = 0;
        if (keep_nodes) {
            ps_sched_filter_cache_clear(n->filter_cache);
            continue;
        }
        for (int t = 0; t < n->tag_count; t++)
            free(n->tags[t]);
        free(n->tags);
        ps_node_tags_release(n);
        json_decref(n->media);
        ps_sched_filter_cache_free(n->filter_cache);
        free(n->id);
        free(n);
    }
    if (!keep_nodes) {
        svc->node_count = 0;
        ps_strmap_release(&svc->nodes);
        ps_strmap_init(&svc->nodes);
    }
    while (svc->tree_count > 0)
        ps_svc_remove_tree_state(svc, svc->trees[0]->name);
    ps_strategy_free(svc->strategy);
    svc->strategy = NULL;
    json_decref(svc->default_tentative_pool_trees);
    svc->default_tentative_pool_trees = NULL;
    json_decref(svc->nodes_config);
    svc->nodes_config = NULL;
}

int ps_svc_state_reload(struct ps_service *svc, struct ps_error *err)
{
    /* each tree keeps its update schedule: a reload must not start a fair share update (and
     * its write of the tree document) at once, or a full disk would reload in a loop */
    int64_t started_ns = ps_clock_monotonic_ns();
    int kept = svc->tree_count;
    struct { char *name; int64_t next; } *sched = calloc((size_t)(kept ? kept : 1), sizeof *sched);
    for (int i = 0; sched && i < kept; i++) {
        sched[i].name = strdup(svc->trees[i]->name);
        sched[i].next = svc->trees[i]->next_update_ms;
    }
    free_state(svc, true);
    svc->op_seq = 0;
    int rc = new_strategy(svc, err);
    if (rc == 0)
        rc = ps_persist_load(svc, err);
    /* the nodes known before: registered again at once (after the trees, which place them), so
     * scheduling resumes with the next fair share update rather than after every node's next
     * heartbeat; one that no longer fits the trees registers with its next heartbeat (409) */
    if (rc == 0)
        rc = ps_node_health_reload(svc, err);
    for (int i = 0; rc == 0 && i < svc->node_count; i++) {
        struct ps_svc_node *n = svc->node_list[i];
        if (n->registered && ps_node_tags_register(svc, n, &n->limits, NULL) != 0)
            n->registered = false;
    }
    for (int i = 0; i < svc->tree_count; i++) {
        struct ps_svc_tree_state *ts = svc->trees[i];
        ts->dirty = true;
        for (int k = 0; sched && k < kept; k++)
            if (sched[k].name && strcmp(sched[k].name, ts->name) == 0)
                ts->next_update_ms = sched[k].next;
    }
    for (int k = 0; sched && k < kept; k++)
        free(sched[k].name);
    free(sched);
    pthread_cond_broadcast(&svc->loop_cv);
    svc->reload_failed = rc != 0;
    ps_svc_log(svc, rc == 0 ? "info" : "error", "state_reloaded",
               "trees=%d operations=%d jobs=%d duration_ms=%.1f error=\"%s\"", svc->tree_count,
               svc->op_count, svc->job_count,
               (double)(ps_clock_monotonic_ns() - started_ns) / 1e6, rc == 0 ? "" : err->msg);
    return rc;
}

int ps_svc_state_check(struct ps_service *svc, struct ps_error *err)
{
    if (!svc->reload_failed)
        return 0;
    struct ps_error e;
    ps_error_init(&e);
    if (ps_svc_state_reload(svc, &e) == 0)
        return 0;
    return ps_error_set(err, PS_EUNAVAIL,
                        "storage unavailable: the scheduler's state could not be read back from "
                        "its store after a failed commit; retry later");
}

void ps_service_stop(struct ps_service *svc)
{
    if (!svc)
        return;
    if (svc->http)
        ps_http_server_stop(svc->http);
    pthread_mutex_lock(&svc->mu);
    svc->stopping = true;
    pthread_cond_broadcast(&svc->loop_cv);
    pthread_mutex_unlock(&svc->mu);
    if (svc->loop_started)
        pthread_join(svc->loop_thread, NULL);
    ps_http_server_free(svc->http);
    ps_what_if_tasks_free(svc->what_if);   /* stops a running one: it reads no state */
    ps_journal_free(svc->journal);   /* flushes what is queued */
    free_state(svc, false);
    ps_job_archive_free(svc->archive);
    free(svc->job_list);
    free(svc->op_list);
    free(svc->node_list);
    free(svc->trees);
    ps_strmap_release(&svc->ops);
    ps_strmap_release(&svc->jobs);
    ps_strmap_release(&svc->nodes);
    for (size_t i = 0; i < svc->token_cache.capacity; i++)
        if (svc->token_cache.slots[i].key) {
            free((void *)svc->token_cache.slots[i].key);
            free(svc->token_cache.slots[i].value);
        }
    ps_strmap_release(&svc->token_cache);
    ps_store_mirror_close(svc);
    ps_store_close(svc->store);
    ps_metrics_free(svc->metrics);
    ps_history_free(svc->history);
    ps_security_free(svc->security);
    pthread_mutex_destroy(&svc->mu);
    pthread_mutex_destroy(&svc->store_mu);
    pthread_mutex_destroy(&svc->auth_mu);
    pthread_mutex_destroy(&svc->ha_mu);
    pthread_cond_destroy(&svc->loop_cv);
    free(svc);
}
