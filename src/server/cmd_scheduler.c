/* cmd_scheduler.c — `poolsched scheduler [--config FILE] [--listen HOST:PORT] [--data-dir DIR]
 * [--store URI] [--allow-insecure-remote]`.
 *
 * Defaults (embedded): listen 127.0.0.1:9013, data dir $XDG_STATE_HOME/poolsched when
 * XDG_STATE_HOME is set, else ./poolsched-data; the store is SQLite in the data dir unless
 * --store (or store, or $POOLSCHED_STORE) names a PostgreSQL database. The config file (JSON or YSON) may set listen,
 * data_dir, fair_share_update_period, heartbeat_period, node_offline_timeout, http_threads,
 * max_failed_job_count, commit_window and history_bucket (durations in ms), the HTTP limits of
 * docs/api.md,
 * metrics_require_token and allow_insecure_remote; command-line flags win over it.
 * The API speaks plain HTTP with bearer tokens: listening on an address other than loopback
 * is refused unless --allow-insecure-remote (or allow_insecure_remote) says the network is
 * trusted (or a TLS proxy terminates in front), and is then logged as a warning.
 * Runs until SIGINT or SIGTERM, then stops gracefully (requests in flight are answered, the
 * journal is flushed).
 */
#include "server/cmd_scheduler.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yson.h"
#include "platform/file.h"
#include "server/ha.h"
#include "server/service.h"
#include "server/service_config.h"
#include "server/store.h"
#include "server/svc_log.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: poolsched scheduler [--config FILE] [--listen HOST:PORT] [--data-dir DIR]\n"
            "                           [--store URI]\n\n"
            "Runs the scheduler service: the HTTP API of docs/api.md, pool trees, operations,\n"
            "node heartbeats, persistence in DIR/poolsched.db (or PostgreSQL: --store).\n\n"
            "  --config FILE     JSON or YSON map: listen, data_dir, store,\n"
            "                    fair_share_update_period,\n"
            "                    heartbeat_period, node_offline_timeout, http_threads,\n"
            "                    max_failed_job_count, commit_window, history_bucket (ms),\n"
            "                    http_max_body_size,\n"
            "                    http_max_start_op_body_size, http_max_heartbeat_body_size,\n"
            "                    http_max_connections, http_max_connections_per_ip,\n"
            "                    http_header_timeout, http_idle_timeout (ms),\n"
            "                    metrics_require_token, allow_insecure_remote\n"
            "  --listen H:P      default 127.0.0.1:9013 (port 0: any free port)\n"
            "  --data-dir DIR    default $POOLSCHED_DATA_DIR, else $XDG_STATE_HOME/poolsched,\n"
            "                    else ./poolsched-data (the CLI and nodes look there too)\n"
            "  --store URI       postgresql://USER@HOST:PORT/DB: keep the state in PostgreSQL\n"
            "                    (docs/ha.md); default $POOLSCHED_STORE, else SQLite in DIR\n"
            "  --allow-insecure-remote\n"
            "                    allow listening beyond loopback (127.0.0.0/8, ::1): the API is\n"
            "                    plain HTTP, tokens cross the network in clear text; put a TLS\n"
            "                    proxy in front or use a trusted network\n"
            "  --ha              run as a standby and lead when elected (PostgreSQL store\n"
            "                    only; docs/ha.md): config keys ha, ha_lease (ms)\n"
            "  --quiet           no event log on stderr\n");
}

int ps_cmd_scheduler(int argc, char **argv)
{
    struct ps_service_config cfg;
    ps_service_config_init(&cfg);
    const char *config = NULL, *listen = NULL, *data_dir = NULL, *store = NULL;
    bool quiet = false, insecure_remote = false, ha = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--quiet") == 0) {
            quiet = true;
            continue;
        }
        if (strcmp(a, "--allow-insecure-remote") == 0) {
            insecure_remote = true;
            continue;
        }
        if (strcmp(a, "--ha") == 0) {
            ha = true;
            continue;
        }
        const char **dst = strcmp(a, "--config") == 0     ? &config
                           : strcmp(a, "--listen") == 0   ? &listen
                           : strcmp(a, "--data-dir") == 0 ? &data_dir
                           : strcmp(a, "--store") == 0    ? &store
                                                          : NULL;
        if (!dst) {
            fprintf(stderr, "error: scheduler: unknown argument '%s' (see --help)\n", a);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "error: scheduler: %s needs a value\n", a);
            return 2;
        }
        *dst = argv[++i];
    }
    struct ps_error err;
    ps_error_init(&err);
    if (config) {
        char *text = NULL;
        size_t len = 0;
        json_t *doc = NULL;
        if (ps_file_read(config, &text, &len, &err) != 0 ||
            ps_value_parse_text(text, len, &doc, &err) != 0 ||
            ps_service_config_apply(&cfg, doc, &err) != 0) {
            fprintf(stderr, "error: %s: %s\n", config, err.msg);
            free(text);
            json_decref(doc);
            return 2;
        }
        free(text);
        json_decref(doc);
    }
    if (listen && ps_service_parse_listen(&cfg, listen, &err) != 0) {
        fprintf(stderr, "error: --listen: %s\n", err.msg);
        return 2;
    }
    if (data_dir)
        snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", data_dir);
    if (store && ps_service_parse_store(&cfg, store, &err) != 0) {
        fprintf(stderr, "error: --store: %s\n", err.msg);
        return 2;
    }
    cfg.quiet = quiet;
    if (ha)
        cfg.ha = true;
    if (cfg.ha && !ps_store_url_is_postgres(cfg.store)) {
        fprintf(stderr, "error: scheduler: --ha (standby schedulers) needs the PostgreSQL store: "
                        "pass --store postgresql://USER@HOST:PORT/DB\n");
        return 2;
    }
    if (insecure_remote)
        cfg.allow_insecure_remote = true;
    if (!ps_service_listen_is_loopback(&cfg)) {
        if (!cfg.allow_insecure_remote) {
            fprintf(stderr,
                    "error: scheduler: refusing to listen on %s, beyond loopback, without TLS: "
                    "tokens would cross the network in clear text; put a TLS proxy in front "
                    "and pass --allow-insecure-remote (or set allow_insecure_remote)\n",
                    cfg.host);
            return 2;
        }
        fprintf(stderr,
                "warning: scheduler: listening on %s beyond loopback without TLS "
                "(--allow-insecure-remote): tokens and data cross the network in clear text\n",
                cfg.host);
    }

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);   /* threads inherit: only sigwait sees them */
    signal(SIGPIPE, SIG_IGN);

    struct ps_ha *election = NULL;
    int sig = 0;
    if (cfg.ha) {
        int rc = ps_ha_standby(&cfg, &set, &election, &sig, &err);
        if (rc < 0) {
            fprintf(stderr, "error: scheduler: %s\n", err.msg);
            return 1;
        }
        if (rc == 1) {   /* stopped while standing by */
            if (!cfg.quiet)
                ps_svc_log(NULL, "info", "scheduler_stopping", "signal=%d role=standby", sig);
            return 0;
        }
    }
    struct ps_service *svc = NULL;
    if (ps_service_start(&cfg, &svc, &err) != 0 ||
        (election && ps_ha_lead(election, svc, &err) != 0)) {
        fprintf(stderr, "error: scheduler: %s\n", err.msg);
        ps_ha_free(election);
        ps_service_stop(svc);
        return 1;
    }
    sigwait(&set, &sig);
    ps_svc_log(svc, "info", "scheduler_stopping", "signal=%d", sig);
    /* first: the renewal thread reports into the service. A standby takes over when the lease
     * runs out; until then the fence still holds this epoch's last writes. */
    ps_ha_free(election);
    ps_service_stop(svc);
    return 0;
}
