/* service_test.h — an in-process service for the server unit tests (test_persist_refresh.c,
 * test_heartbeat_rerun.c, test_journal_faults.c): no HTTP (port -1), a store in a scratch directory, API calls as the
 * admin. */
#ifndef PS_TEST_SERVICE_TEST_H
#define PS_TEST_SERVICE_TEST_H

#include "store_test_dir.h"
#include "server/api.h"
#include "server/auth.h"
#include "server/service.h"
#include "server/service_config.h"

static const struct ps_auth_identity test_admin = {"admin", PS_ROLE_ADMIN};

/* A command as the admin: its status code, *reply its body. */
static inline int call(struct ps_service *svc, const char *command, const char *body,
                       json_t **reply)
{
    return ps_api_dispatch(svc, command, body, strlen(body), &test_admin, reply);
}

/* The reply of a command that must succeed (200). */
static inline json_t *ok(struct ps_service *svc, const char *command, const char *body)
{
    json_t *reply = NULL;
    int st = call(svc, command, body, &reply);
    if (st != 200) {
        char *text = json_dumps(reply, 0);
        fail_msg("%s %s: %d %s", command, body, st, text ? text : "");
    }
    return reply;
}

/* The defaults with the store in dir, no HTTP, quiet. */
static inline void test_service_config(struct ps_service_config *cfg, const char *dir)
{
    ps_service_config_init(cfg);
    snprintf(cfg->data_dir, sizeof cfg->data_dir, "%s", dir);
    cfg->port = -1;
    cfg->quiet = true;
}

static inline struct ps_service *start_config(const struct ps_service_config *cfg)
{
    struct ps_service *svc = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_service_start(cfg, &svc, &err) != 0)
        fail_msg("start: %s", err.msg);
    return svc;
}

/* A service on the store in dir; the engine loop's update period is period_ms. */
static inline struct ps_service *start_service(const char *dir, int64_t period_ms)
{
    struct ps_service_config cfg;
    test_service_config(&cfg, dir);
    cfg.fair_share_update_period_ms = period_ms;
    return start_config(&cfg);
}

/* Removes a stopped service's directory (store, secret, admin token) and frees dir. */
static inline void remove_service_dir(char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, PS_SERVICE_CLUSTER_SECRET_FILE);
    unlink(path);
    remove_store_dir(dir, PS_AUTH_ADMIN_TOKEN_FILE);
}

/* Stops the service and removes its directory. */
static inline void stop_service(struct ps_service *svc, char *dir)
{
    ps_service_stop(svc);
    remove_service_dir(dir);
}

#endif
