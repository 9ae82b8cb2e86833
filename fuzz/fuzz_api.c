/* Fuzzes the API command handlers in-process (no sockets): the first byte picks a command, the
 * rest is its request body. One service lives for the whole run (data dir under /tmp), so state
 * built by earlier inputs (pools, operations, nodes) is exercised by later ones.
 * Invariants beyond "no crash, no leak": every reply is a JSON object; a failure has status
 * 400/401/403/404/409 with a one-line message; never 500 (an internal error is a bug). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api.h"
#include "server/auth.h"
#include "server/heartbeat.h"
#include "server/service.h"
#include "server/service_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const commands[] = {
    "get", "set", "list", "exists", "create", "remove", "start_op", "get_operation",
    "list_operations", "abort_op", "suspend_op", "resume_op", "complete_op",
    "update_op_parameters", "list_jobs", "get_job_stderr", "heartbeat",
};
#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

static struct ps_service *svc;

static void start(void)
{
    char dir[] = "/tmp/poolsched-fuzz-api-XXXXXX";
    if (!mkdtemp(dir))
        abort();
    struct ps_service_config cfg;
    ps_service_config_init(&cfg);
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", dir);
    cfg.port = -1;
    cfg.quiet = true;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_service_start(&cfg, &svc, &err) != 0) {
        fprintf(stderr, "cannot start: %s\n", err.msg);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!svc)
        start();
    if (size < 1)
        return 0;
    const char *command = commands[data[0] % COMMAND_COUNT];
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    json_t *reply = NULL;
    int status;
    if (strcmp(command, "heartbeat") == 0) {
        json_t *req = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
        if (!req)
            return 0;
        struct ps_error err;
        ps_error_init(&err);
        int rc = ps_api_heartbeat_json(svc, req, NULL, NULL, &reply, &err);
        json_decref(req);
        if (rc != 0 && (err.code != rc || !err.msg[0] || strchr(err.msg, '\n')))
            abort();
        if (rc == 0 && !json_is_object(reply))
            abort();
        json_decref(reply);
        return 0;
    }
    struct ps_auth_identity who = {"admin", PS_ROLE_ADMIN};
    if (data[0] & 0x80) {
        snprintf(who.user, sizeof who.user, "fuzzer");
        who.role = PS_ROLE_USER;
    }
    status = ps_api_dispatch(svc, command, body, len, &who, &reply);
    if (!json_is_object(reply))
        abort();
    if (status != 200) {
        const char *msg = json_string_value(json_object_get(reply, "message"));
        if (status == 500 || !msg || !msg[0] || strchr(msg, '\n')) {
            fprintf(stderr, "%s -> %d %s\n", command, status, msg ? msg : "(no message)");
            abort();
        }
    }
    json_decref(reply);
    return 0;
}
