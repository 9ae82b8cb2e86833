/* api.c — routes, authentication and the command table of the HTTP API (docs/api.md).
 *
 * POST /api/v1/<command>: the body (a JSON object; YSON text is accepted too) is parsed and the
 * caller authenticated before the state lock is taken; the command runs under svc->mu and
 * appends what must become durable to the journal; the handler waits for the journal outside
 * the lock and only then answers 200. Errors map as http_server.h says (400, 403, 404, 409;
 * 401 for authentication), with one-line messages; a 500 shows only a request id. A change whose
 * commit failed is refused and undone (journal.c): 507 "disk full" (PS_ENOSPC) or 503 "storage
 * unavailable" (PS_EUNAVAIL), with a message that names the cause.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/event_page.h"
#include "io/textbuf.h"
#include "io/yson.h"
#include "server/api.h"
#include "server/api_cypress.h"
#include "server/event_log.h"
#include "server/journal.h"
#include "server/persist.h"
#include "server/service_config.h"
#include "server/service_state.h"
#include "server/store_mirror.h"
#include "server/svc_log.h"
#include "server/what_if_task.h"

/* Commands in api_operations.c. */
int ps_api_op_command(struct ps_service *svc, const char *command, const json_t *body,
                      const struct ps_auth_identity *who, json_t **reply, struct ps_error *err,
                      bool *handled);
void ps_api_heartbeat_handler(const struct ps_http_request *req, struct ps_http_response *resp,
                              void *ctx);

/* ---- authentication ---------------------------------------------------------------------- */

/* Tokens are looked up in the store once and then cached; revoke_token drops a token from the
 * store and the cache together. */
/* As upstream, a removed user cannot authenticate (its tokens stay in the store until revoked,
 * and work again if the user is created again). Node tokens name no user. */
static int require_user(struct ps_service *svc, const struct ps_auth_identity *who,
                        struct ps_error *err)
{
    if (who->role == PS_ROLE_NODE)
        return 0;
    pthread_mutex_lock(&svc->mu);
    bool removed = ps_security_user_removed(svc->security, who->user);
    pthread_mutex_unlock(&svc->mu);
    return removed ? ps_error_set(err, PS_EPERM, "No such user \"%s\"", who->user) : 0;
}

int ps_api_authenticate(struct ps_service *svc, const char *header,
                        struct ps_auth_identity *out, struct ps_error *err)
{
    const char *token;
    size_t len;
    int rc = ps_auth_parse_header(header, &token, &len, err);
    if (rc != 0)
        return rc;
    char key[PS_AUTH_MAX_TOKEN_LEN + 1];
    memcpy(key, token, len);
    key[len] = 0;
    pthread_mutex_lock(&svc->auth_mu);
    struct ps_auth_identity *cached = ps_strmap_get(&svc->token_cache, key);
    if (cached)
        *out = *cached;
    pthread_mutex_unlock(&svc->auth_mu);
    if (cached)
        return require_user(svc, out, err);
    pthread_mutex_lock(&svc->store_mu);
    rc = ps_auth_lookup(svc->store, token, len, out, err);
    pthread_mutex_unlock(&svc->store_mu);
    if (rc != 0)
        return rc;
    struct ps_auth_identity *copy = malloc(sizeof *copy);
    char *k = strdup(key);
    pthread_mutex_lock(&svc->auth_mu);
    if (copy && k && !ps_strmap_get(&svc->token_cache, k) &&
        ps_strmap_put(&svc->token_cache, k, copy) == 0) {
        *copy = *out;
        copy = NULL;
        k = NULL;
    }
    pthread_mutex_unlock(&svc->auth_mu);
    free(copy);
    free(k);
    return require_user(svc, out, err);
}

/* ---- replies ----------------------------------------------------------------------------- */

static int status_of(int code)
{
    switch (code) {
    case PS_EINVAL: return 400;
    case PS_EPERM: return 403;
    case PS_ENOENT: return 404;
    case PS_EEXIST:
    case PS_ESTATE:
    case PS_ELIMIT: return 409;
    case PS_ENOSPC: return 507;     /* disk full: refused, nothing changed */
    case PS_EUNAVAIL: return 503;   /* other storage failure: refused, nothing changed */
    default: return 500;
    }
}

/* ---- commands ---------------------------------------------------------------------------- */

/* The parameters each command reads (docs/api.md). A parameter not listed is a 400 naming it,
 * never silently ignored; values are checked by the command itself. */
struct command_params {
    const char *command;
    const char *params[8];
    bool write;   /* changes the state (unless dry_run): refused at once while the store is down;
                   * the one list of writes (the YTsaurus face asks ps_api_command_writes) */
};

static const struct command_params command_params[] = {
    {"get", {"path"}, false},
    {"list", {"path"}, false},
    {"exists", {"path"}, false},
    {"set", {"path", "value", "dry_run"}, true},
    {"create", {"type", "path", "attributes", "ignore_existing", "dry_run"}, true},
    {"remove", {"path", "dry_run", "force"}, true},
    {"move", {"source_path", "destination_path"}, true},
    {"transfer_pool_resources",
     {"source_pool", "destination_pool", "pool_tree", "resource_delta"},
     true},
    {"add_member", {"member", "group"}, true},
    {"remove_member", {"member", "group"}, true},
    {"check_permission", {"user", "permission", "path"}, false},
    {"issue_token", {"user", "role"}, false},
    {"revoke_token", {"token"}, false},
    {"get_current_user", {NULL}, false},
    {"start_op", {"operation_type", "spec"}, true},
    {"list_operations", {"pool", "user", "state", "limit", "brief", "filter", "counters", "access"}, false},
    {"get_operation", {"operation_id"}, false},
    {"abort_op", {"operation_id"}, true},
    {"suspend_op", {"operation_id"}, true},
    {"resume_op", {"operation_id"}, true},
    {"complete_op", {"operation_id"}, true},
    {"update_op_parameters", {"operation_id", "parameters"}, true},
    {"list_jobs", {"operation_id", "state", "sort_field", "sort_order", "offset", "limit"}, false},
    {"get_job", {"operation_id", "job_id"}, false},
    {"get_job_stderr", {"operation_id", "job_id"}, false},
    {"get_history", {"pool_tree", "pools"}, false},
    {"start_what_if", {"since", "until", "set", "remove"}, false},
    {"get_what_if", {"id"}, false},
};

bool ps_api_command_writes(const char *command)
{
    for (size_t i = 0; i < sizeof command_params / sizeof command_params[0]; i++)
        if (strcmp(command_params[i].command, command) == 0)
            return command_params[i].write;
    return false;
}

/* Whether a command changes the state: a write that is not a dry run. */
static bool is_write(const char *command, const json_t *body)
{
    return ps_api_command_writes(command) && !json_is_true(json_object_get(body, "dry_run"));
}

/* Refuses a parameter the command does not read. Unknown commands are left to run_command
 * (404). */
static int check_params(const char *command, const json_t *body, struct ps_error *err)
{
    const struct command_params *c = NULL;
    for (size_t i = 0; i < sizeof command_params / sizeof command_params[0]; i++)
        if (strcmp(command_params[i].command, command) == 0)
            c = &command_params[i];
    if (!c)
        return 0;
    const char *key;
    json_t *v;
    /* a get of the event log takes its filters (event_log.h) */
    bool event_log = strcmp(command, "get") == 0 &&
                     ps_event_log_claims(json_string_value(json_object_get(body, "path")));
    json_object_foreach((json_t *)body, key, v) {
        bool known = event_log && ps_event_log_param(key);
        char accepted[160] = "";
        for (int i = 0; i < 8 && c->params[i]; i++) {
            known |= strcmp(c->params[i], key) == 0;
            snprintf(accepted + strlen(accepted), sizeof accepted - strlen(accepted), "%s%s",
                     i ? ", " : "", c->params[i]);
        }
        if (!known) {
            struct ps_value name = ps_value_string(key);
            char q[96];
            ps_value_describe(&name, q, sizeof q);
            ps_value_release(&name);
            return ps_error_set(err, PS_EINVAL, "%s: unknown parameter %s (accepted: %s)",
                                command, q, accepted);
        }
    }
    return 0;
}

static int issue_token(struct ps_service *svc, const json_t *body, const struct ps_auth_identity *who,
                       json_t **reply, struct ps_error *err)
{
    int rc = ps_auth_require(who, PS_ROLE_ADMIN, "issue tokens", err);
    if (rc != 0)
        return rc;
    const char *user = json_string_value(json_object_get(body, "user"));
    const char *role_name = json_string_value(json_object_get(body, "role"));
    if (!user)
        return ps_error_set(err, PS_EINVAL, "missing parameter \"user\"");
    enum ps_role role = PS_ROLE_USER;
    if (role_name && (rc = ps_role_parse(role_name, &role, err)) != 0)
        return rc;
    char token[PS_AUTH_TOKEN_LEN + 1];
    pthread_mutex_lock(&svc->store_mu);
    rc = ps_auth_token_issue(svc->store, user, role, token, err);
    pthread_mutex_unlock(&svc->store_mu);
    if (rc != 0)
        return rc;
    ps_svc_log(svc, "info", "token_issued", "user=%s role=%s by=%s", user, ps_role_name(role),
               who->user);
    *reply = json_pack("{s:s, s:s, s:s}", "token", token, "user", user, "role",
                       ps_role_name(role));
    return 0;
}

static int revoke_token(struct ps_service *svc, const json_t *body,
                        const struct ps_auth_identity *who, json_t **reply, struct ps_error *err)
{
    int rc = ps_auth_require(who, PS_ROLE_ADMIN, "revoke tokens", err);
    if (rc != 0)
        return rc;
    const char *token = json_string_value(json_object_get(body, "token"));
    if (!token)
        return ps_error_set(err, PS_EINVAL, "missing parameter \"token\"");
    pthread_mutex_lock(&svc->store_mu);
    rc = ps_auth_token_revoke(svc->store, token, err);
    pthread_mutex_unlock(&svc->store_mu);
    if (rc != 0)
        return rc;
    /* the cache borrows its keys (strdup'ed by authenticate): find the key to free it too */
    pthread_mutex_lock(&svc->auth_mu);
    const char *key = NULL;
    for (size_t i = 0; i < svc->token_cache.capacity && !key; i++)
        if (svc->token_cache.slots[i].key && strcmp(svc->token_cache.slots[i].key, token) == 0)
            key = svc->token_cache.slots[i].key;
    if (key) {
        free(ps_strmap_remove(&svc->token_cache, key));
        free((void *)key);
    }
    pthread_mutex_unlock(&svc->auth_mu);
    ps_svc_log(svc, "info", "token_revoked", "by=%s", who->user);
    *reply = json_object();
    return *reply ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

static const char *path_param(const json_t *body)
{
    return json_string_value(json_object_get(body, "path"));
}

/* Users and groups (security.h) and check_permission (api_cypress.c); *handled false for
 * other commands. */
static int security_command(struct ps_service *svc, const char *command, const json_t *body,
                            const struct ps_auth_identity *who, json_t **reply,
                            struct ps_error *err, bool *handled)
{
    const char *path = path_param(body);
    const char *type = json_string_value(json_object_get(body, "type"));
    bool claims = ps_security_claims(path);
    int rc = 0;
    *handled = true;
    if (json_is_true(json_object_get(body, "dry_run")) &&
        (claims || (type && (strcmp(type, "user") == 0 || strcmp(type, "group") == 0))))
        return ps_error_set(err, PS_EINVAL, "dry_run: users and groups have no dry run");
    if (strcmp(command, "get") == 0 && claims) {
        json_t *v = NULL;
        if ((rc = ps_security_get(svc, path, &v, err)) == 0)
            *reply = json_pack("{s:o}", "value", v);
    } else if (strcmp(command, "list") == 0 && claims) {
        json_t *v = NULL;
        if ((rc = ps_security_list(svc, path, &v, err)) == 0)
            *reply = json_pack("{s:o}", "value", v);
    } else if (strcmp(command, "exists") == 0 && claims) {
        *reply = json_pack("{s:b}", "value", ps_security_exists(svc, path));
    } else if (strcmp(command, "create") == 0 && type &&
               (strcmp(type, "user") == 0 || strcmp(type, "group") == 0)) {
        if ((rc = ps_security_create(svc, who, body, err)) == 0)
            *reply = json_object();
    } else if (strcmp(command, "remove") == 0 && claims) {
        if ((rc = ps_security_remove(svc, who, path, err)) == 0)
            *reply = json_object();
    } else if (strcmp(command, "add_member") == 0 || strcmp(command, "remove_member") == 0) {
        if ((rc = ps_security_member(svc, who, command[0] == 'a', body, err)) == 0)
            *reply = json_object();
    } else if (strcmp(command, "check_permission") == 0) {
        rc = ps_cypress_check_permission(svc, body, reply, err);
    } else {
        *handled = false;
    }
    return rc;
}

/* Runs one command under svc->mu. Returns 0 or a PS_E* code with err set. */
static int run_command(struct ps_service *svc, const char *command, const json_t *body,
                       const struct ps_auth_identity *who, json_t **reply, struct ps_error *err)
{
    int rc;
    *reply = NULL;
    bool handled = false;
    rc = security_command(svc, command, body, who, reply, err, &handled);
    if (handled)
        return rc;
    if (strcmp(command, "get") == 0) {
        json_t *v = NULL;
        int64_t first_row = PS_EVENT_NO_ROW;
        rc = ps_event_log_claims(path_param(body))
                 ? ps_event_log_get(svc, body, &v, &first_row, err)
                 : ps_cypress_get(svc, path_param(body), &v, err);
        if (rc == 0)
            *reply = json_pack("{s:o}", "value", v);
        /* where an event log page begins, for the next page back (docs/api.md "Event log") */
        if (rc == 0 && *reply && first_row != PS_EVENT_NO_ROW)
            json_object_set_new(*reply, "first_row_index", json_integer(first_row));
        return rc;
    }
    if (strcmp(command, "list") == 0) {
        json_t *v = NULL;
        if ((rc = ps_cypress_list(svc, path_param(body), &v, err)) == 0)
            *reply = json_pack("{s:o}", "value", v);
        return rc;
    }
    if (strcmp(command, "exists") == 0) {
        bool e = false;
        if ((rc = ps_cypress_exists(svc, path_param(body), &e, err)) == 0)
            *reply = json_pack("{s:b}", "value", e);
        return rc;
    }
    const json_t *dry_run = json_object_get(body, "dry_run");
    if (dry_run && !json_is_boolean(dry_run))
        return ps_error_set(err, PS_EINVAL, "dry_run: must be true or false");
    if (json_is_true(dry_run) && (strcmp(command, "set") == 0 || strcmp(command, "create") == 0 ||
                                  strcmp(command, "remove") == 0))
        return ps_cypress_dry_run(svc, who, command, body, reply, err);
    if (strcmp(command, "set") == 0) {
        if ((rc = ps_cypress_set(svc, who, path_param(body), json_object_get(body, "value"),
                                 err)) == 0)
            *reply = json_object();
        return rc;
    }
    if (strcmp(command, "create") == 0) {
        if ((rc = ps_cypress_create(svc, who, body, err)) == 0)
            *reply = json_object();
        return rc;
    }
    if (strcmp(command, "remove") == 0) {
        const json_t *force = json_object_get(body, "force");
        if (force && !json_is_boolean(force))
            return ps_error_set(err, PS_EINVAL, "force: must be true or false");
        rc = ps_cypress_remove(svc, who, path_param(body), err);
        if (rc == PS_ENOENT && json_is_true(force)) {   /* as upstream: nothing to remove is fine */
            ps_error_init(err);
            rc = 0;
        }
        if (rc == 0)
            *reply = json_object();
        return rc;
    }
    if (strcmp(command, "move") == 0) {
        if ((rc = ps_cypress_move(svc, who, body, err)) == 0)
            *reply = json_object();
        return rc;
    }
    if (strcmp(command, "transfer_pool_resources") == 0) {
        if ((rc = ps_cypress_transfer_pool_resources(svc, who, body, err)) == 0)
            *reply = json_object();
        return rc;
    }
    if (strcmp(command, "get_history") == 0) {   /* history.h: the web UI's charts */
        const json_t *tree = json_object_get(body, "pool_tree");
        if (tree && !json_is_string(tree))
            return ps_error_set(err, PS_EINVAL, "pool_tree: must be a tree name (a string)");
        const char *name = tree ? json_string_value(tree) : ps_strategy_default_tree(svc->strategy);
        if (!name)
            return ps_error_set(err, PS_ENOENT, "pool_tree: there is no default pool tree");
        return ps_history_query(svc->history, name, json_object_get(body, "pools"), reply, err);
    }
    rc = ps_api_op_command(svc, command, body, who, reply, err, &handled);
    if (handled)
        return rc;
    return ps_error_set(err, PS_ENOENT, "unknown command \"%s\"", command);
}

/* ps_api_dispatch; with rows_text, a read of the event log by time alone leaves its rows as
 * their stored text (*rows_text true: ps_event_page_write writes the reply), else they are
 * parsed after the lock (ps_event_log_parse). */
static int dispatch(struct ps_service *svc, const char *command, const char *body, size_t len,
                    const struct ps_auth_identity *who, json_t **reply, bool *rows_text)
{
    if (rows_text)
        *rows_text = false;
    struct ps_error err;
    ps_error_init(&err);
    json_t *doc = NULL;
    int rc = 0;
    if (len == 0) {
        doc = json_object();
    } else if ((rc = ps_value_parse_text(body, len, &doc, &err)) != 0) {
        ps_error_prefix(&err, "request body");
    } else if (!json_is_object(doc)) {
        rc = ps_error_set(&err, PS_EINVAL, "request body: must be a map of parameters");
    }
    if (rc == 0)
        rc = check_params(command, doc, &err);
    /* who the token is (upstream's get_current_user) and its role: the web UI shows edit
     * controls to admins only. Reads no state: no service lock. */
    if (rc == 0 && strcmp(command, "get_current_user") == 0) {
        json_decref(doc);
        *reply = json_pack("{s:s, s:s}", "user", who->user, "role", ps_role_name(who->role));
        return 200;
    }
    /* what-if tasks (what_if_task.h) take the locks they need; a busy refusal is a 429 */
    bool start = strcmp(command, "start_what_if") == 0;
    if (rc == 0 && (start || strcmp(command, "get_what_if") == 0)) {
        rc = start ? ps_what_if_start(svc, doc, who, reply, &err)
                   : ps_what_if_get(svc, doc, who, reply, &err);
        json_decref(doc);
        if (rc == 0)
            return 200;
        *reply = ps_http_error_body(rc, status_of(rc) == 500 ? "internal error" : err.msg);
        return rc == PS_ELIMIT ? 429 : status_of(rc);
    }
    bool revoke = strcmp(command, "revoke_token") == 0;
    if (rc == 0 && (revoke || strcmp(command, "issue_token") == 0)) {
        rc = revoke ? revoke_token(svc, doc, who, reply, &err)
                    : issue_token(svc, doc, who, reply, &err);
        json_decref(doc);
        if (rc == PS_ENOSPC)   /* the store's message names the data dir: not for clients */
            *reply = ps_http_error_body(rc, "disk full: the token was not issued");
        else if (rc != 0)
            *reply = ps_http_error_body(rc, status_of(rc) == 500 ? "internal error" : err.msg);
        if (rc != 0)
            return status_of(rc);
        return 200;
    }
    /* its rows' text is parsed after the lock (ps_event_log_get) */
    bool event_log = rc == 0 && strcmp(command, "get") == 0 &&
                     ps_event_log_claims(path_param(doc));
    uint64_t ticket = 0;
    for (int attempt = 0; rc == 0 || attempt > 0; attempt++) {
        pthread_mutex_lock(&svc->mu);
        uint64_t before = ps_journal_last(svc->journal);
        rc = ps_svc_state_check(svc, &err);
        /* PostgreSQL down (store_mirror.h): a write is refused before it touches the state, so
         * that no read, served from memory meanwhile, shows a change that is then rolled back */
        if (rc == 0 && is_write(command, doc))
            rc = ps_store_mirror_writable(svc, &err);
        if (rc == 0) {
            /* an admin token is a superuser in the engine's checks too */
            ps_security_set_caller(svc->security, who);
            rc = run_command(svc, command, doc, who, reply, &err);
            ps_security_set_caller(svc->security, NULL);
        }
        uint64_t after = ps_journal_last(svc->journal);
        pthread_mutex_unlock(&svc->mu);
        if (after > before) {
            ticket = after;
            break;
        }
        /* Nothing appended (a read, or a refusal): the answer may rest on other requests'
         * changes whose commit is still running. If that commit fails they are undone, and the
         * answer must not have shown them: wait for them (their last ticket is `before`: a
         * failed commit discards every later one too) and, if they were discarded, run the
         * command again on the rolled-back state. Free when nothing is being committed. */
        if (attempt == 2 || rc == PS_EUNAVAIL || ps_journal_wait(svc->journal, before, NULL) == 0)
            break;
        json_decref(*reply);
        *reply = NULL;
        ps_error_init(&err);
    }
    json_decref(doc);
    if (rc == 0 && ticket)
        rc = ps_journal_wait(svc->journal, ticket, &err);
    if (rc == 0 && event_log && *reply && rows_text)
        *rows_text = true;
    else if (rc == 0 && event_log && *reply)
        rc = ps_event_log_parse(json_object_get(*reply, "value"), &err);
    if (rc != 0) {
        json_decref(*reply);
        int status = status_of(rc);
        if (status == 500)
            ps_svc_log(svc, "error", "request_failed", "command=%s error=\"%s\"", command,
                       err.msg);
        *reply = ps_http_error_body(rc, status == 500 ? "internal error" : err.msg);
        return status;
    }
    if (!*reply) {
        *reply = ps_http_error_body(PS_ENOMEM, "internal error");
        return 500;
    }
    return 200;
}

int ps_api_dispatch(struct ps_service *svc, const char *command, const char *body, size_t len,
                    const struct ps_auth_identity *who, json_t **reply)
{
    return dispatch(svc, command, body, len, who, reply, NULL);
}

/* ---- HTTP handlers ----------------------------------------------------------------------- */

/* Authenticates a request by its token: 0, or an error reply in resp (401, 500, 503). */
static int check_token(struct ps_service *svc, const struct ps_http_request *req,
                       struct ps_http_response *resp, struct ps_auth_identity *who)
{
    struct ps_error err;
    ps_error_init(&err);
    if (ps_api_authenticate(svc, ps_http_request_header(req, "Authorization"), who, &err) == 0)
        return 0;
    if (err.code == PS_EIO)
        ps_http_reply_error(resp, 500, err.code, "%s", err.msg);
    else if (err.code == PS_EUNAVAIL) {   /* not cached, and the store is unreachable */
        json_t *body = ps_http_error_body(err.code, "storage unavailable: the token could not be "
                                                    "checked (the scheduler's store is "
                                                    "unreachable); retry later");
        ps_http_reply_json(resp, 503, body);
        json_decref(body);
    } else
        ps_http_reply_error(resp, 401, PS_EPERM, "%s", err.msg);
    return -1;
}

/* Admits an API request on its headers: the token is checked before a byte of the body is
 * read, so unauthenticated clients cannot make the scheduler hold their bodies; start_op,
 * whose specs can be large, gets its own body limit. */
static int api_admit(const struct ps_http_request *req, struct ps_http_response *resp,
                     size_t *max_body, void *ctx)
{
    struct ps_service *svc = ctx;
    struct ps_auth_identity who;
    if (check_token(svc, req, resp, &who) != 0)
        return -1;
    if (who.role == PS_ROLE_NODE) {
        ps_http_reply_error(resp, 403, PS_EPERM, "node tokens may only send heartbeats");
        return -1;
    }
    const char *command = strrchr(req->path, '/');
    command = command ? command + 1 : "";
    *max_body = (size_t)(strcmp(command, "start_op") == 0 ? svc->cfg.http_max_start_op_body_size
                                                          : svc->cfg.http_max_body_size);
    return 0;
}

/* Nodes: the cluster secret, checked on the headers as for the API. */
static int heartbeat_admit(const struct ps_http_request *req, struct ps_http_response *resp,
                           size_t *max_body, void *ctx)
{
    struct ps_service *svc = ctx;
    struct ps_error err;
    ps_error_init(&err);
    const char *token;
    size_t len;
    if (ps_auth_parse_header(ps_http_request_header(req, "Authorization"), &token, &len,
                             &err) != 0 ||
        len != PS_AUTH_TOKEN_LEN || !ps_auth_equal(token, svc->cluster_secret, PS_AUTH_TOKEN_LEN)) {
        ps_http_reply_error(resp, 401, PS_EPERM, "%s",
                            err.code ? err.msg : "nodes authenticate with the cluster secret");
        return -1;
    }
    *max_body = (size_t)svc->cfg.http_max_heartbeat_body_size;
    return 0;
}

/* /metrics names pools and users: with metrics_require_token (the default beyond loopback) it
 * needs a token of any role. */
static int metrics_admit(const struct ps_http_request *req, struct ps_http_response *resp,
                         size_t *max_body, void *ctx)
{
    (void)max_body;
    struct ps_service *svc = ctx;
    struct ps_auth_identity who;
    if (!ps_service_metrics_require_token(&svc->cfg))
        return 0;
    return check_token(svc, req, resp, &who);
}

/* An event log page whose rows are their stored text: the reply written from the text, not
 * parsed and encoded again (io/event_page.h). */
static void reply_rows(struct ps_http_response *resp, const json_t *reply)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    const json_t *first = json_object_get(reply, "first_row_index");
    int64_t first_row = first ? json_integer_value(first) : PS_EVENT_NO_ROW;
    if (ps_event_page_write(json_object_get(reply, "value"), first_row, &b, &err) != 0) {
        ps_textbuf_release(&b);
        ps_http_reply_error(resp, 500, PS_ENOMEM, "out of memory");
        return;
    }
    size_t len = b.len;
    ps_http_response_take(resp, 200, "application/json", ps_textbuf_detach(&b), len);
}

static void api_handler(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    struct ps_service *svc = ctx;
    const char *command = strrchr(req->path, '/');
    command = command ? command + 1 : "";
    struct ps_auth_identity who;
    if (check_token(svc, req, resp, &who) != 0)   /* admitted already: a cache hit */
        return;
    if (who.role == PS_ROLE_NODE) {
        ps_http_reply_error(resp, 403, PS_EPERM, "node tokens may only send heartbeats");
        return;
    }
    json_t *reply = NULL;
    bool rows_text = false;
    int status = dispatch(svc, command, req->body, req->body_len, &who, &reply, &rows_text);
    if (status == 500) {
        json_decref(reply);
        ps_http_reply_error(resp, 500, PS_EIO, "command %s failed", command);
        return;
    }
    if (rows_text)
        reply_rows(resp, reply);
    else
        ps_http_reply_json(resp, status, reply);
    json_decref(reply);
}

static void healthz(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    (void)req;
    (void)ctx;
    ps_http_response_set(resp, 200, "text/plain; charset=utf-8", "ok\n", 3);
}

/* Readiness: 200 on the scheduler that serves (the leader; a scheduler without --ha always),
 * 503 on a standby (ha.c answers that one). */
static void readyz(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    (void)req;
    struct ps_service *svc = ctx;
    json_t *body = json_pack("{s:s, s:I}", "role", "leader", "epoch",
                             (json_int_t)svc->cfg.ha_epoch);
    ps_http_reply_json(resp, 200, body);
    json_decref(body);
}

static void metrics(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    (void)req;
    struct ps_service *svc = ctx;
    char *text = NULL;
    size_t len = 0;
    if (ps_metrics_render(svc->metrics, &text, &len, NULL) != 0) {
        ps_http_reply_error(resp, 500, PS_ENOMEM, "cannot render metrics");
        return;
    }
    ps_http_response_take(resp, 200, PS_METRICS_CONTENT_TYPE, text, len);
}

int ps_api_register(struct ps_service *svc, struct ps_error *err)
{
    int rc;
    if ((rc = ps_http_server_route_admit(svc->http, "POST", "/api/v1", PS_HTTP_PREFIX,
                                         api_handler, api_admit, svc, err)) != 0 ||
        (rc = ps_http_server_route_admit(svc->http, "POST", "/internal/v1/node/heartbeat",
                                         PS_HTTP_EXACT, ps_api_heartbeat_handler,
                                         heartbeat_admit, svc, err)) != 0 ||
        (rc = ps_http_server_route(svc->http, "GET", "/healthz", PS_HTTP_EXACT, healthz, svc,
                                   err)) != 0 ||
        (rc = ps_http_server_route(svc->http, "GET", "/readyz", PS_HTTP_EXACT, readyz, svc,
                                   err)) != 0 ||
        (rc = ps_http_server_route_admit(svc->http, "GET", "/metrics", PS_HTTP_EXACT, metrics,
                                         metrics_admit, svc, err)) != 0 ||
        (rc = ps_api_yt_register(svc, err)) != 0 ||   /* /api/v3, /api/v4: api_yt.c */
        (rc = ps_what_if_register(svc, err)) != 0 ||  /* /what-if/<id>/: what_if_task.c */
        (rc = ps_ui_register(svc, err)) != 0)         /* /, /ui/: ui.c */
        return rc;
    return 0;
}
