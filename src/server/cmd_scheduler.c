/* cmd_scheduler.c — `poolsched scheduler [--config FILE] [--listen HOST:PORT] [--data-dir DIR]`.
 *
 * Defaults (embedded): listen 127.0.0.1:9013, data dir $XDG_STATE_HOME/poolsched when
 * XDG_STATE_HOME is set, else ./poolsched-data. The config file (JSON or YSON) may set listen,
 * data_dir, fair_share_update_period, heartbeat_period, node_offline_timeout, http_threads,
 * max_failed_job_count and commit_window (durations in ms); command-line flags win over it.
 * Runs until SIGINT or SIGTERM, then stops gracefully (requests in flight are answered, the
 * journal is flushed).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "io/yson.h"
#include "platform/file.h"
#include "server/service.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: poolsched scheduler [--config FILE] [--listen HOST:PORT] [--data-dir DIR]\n\n"
            "Runs the scheduler service: the HTTP API of docs/api.md, pool trees, operations,\n"
            "node heartbeats, persistence in DIR/poolsched.db.\n\n"
            "  --config FILE     JSON or YSON map: listen, data_dir, fair_share_update_period,\n"
            "                    heartbeat_period, node_offline_timeout, http_threads,\n"
            "                    max_failed_job_count, commit_window (ms)\n"
            "  --listen H:P      default 127.0.0.1:9013 (port 0: any free port)\n"
            "  --data-dir DIR    default $POOLSCHED_DATA_DIR, else $XDG_STATE_HOME/poolsched,\n"
            "                    else ./poolsched-data (the CLI and nodes look there too)\n"
            "  --quiet           no event log on stderr\n");
}

int ps_cmd_scheduler(int argc, char **argv)
{
    struct ps_service_config cfg;
    ps_service_config_init(&cfg);
    const char *config = NULL, *listen = NULL, *data_dir = NULL;
    bool quiet = false;
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
        const char **dst = strcmp(a, "--config") == 0     ? &config
                           : strcmp(a, "--listen") == 0   ? &listen
                           : strcmp(a, "--data-dir") == 0 ? &data_dir
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
    cfg.quiet = quiet;

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);   /* threads inherit: only sigwait sees them */
    signal(SIGPIPE, SIG_IGN);

    struct ps_service *svc = NULL;
    if (ps_service_start(&cfg, &svc, &err) != 0) {
        fprintf(stderr, "error: scheduler: %s\n", err.msg);
        return 1;
    }
    int sig = 0;
    sigwait(&set, &sig);
    ps_svc_log(svc, "info", "scheduler_stopping", "signal=%d", sig);
    ps_service_stop(svc);
    return 0;
}
