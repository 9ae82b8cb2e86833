/* api_yt.c — the YTsaurus face of the API: /api/v3/<command> and /api/v4/<command> as
 * YTsaurus's HTTP proxies answer them, plus GET /api (the versions) and GET /hosts (the proxies:
 * this server) for clients' discovery, /auth/whoami, and execute_batch (docs/api.md "The
 * YTsaurus face").
 *
 * This file only translates. Parameters come from the query string, X-YT-Parameters (JSON or
 * YSON text), the chunked base64 X-YT-Parameters-0..N headers the JavaScript wrapper sends, and
 * the body (set's value; a map of parameters for other writes). The YTsaurus command and
 * parameter names map onto /api/v1's; the command runs through ps_api_dispatch, the one
 * dispatcher of both faces, and its reply is reshaped as YTsaurus returns it (v4 wraps values
 * in {"value": ...}; operations and jobs through api_yt_shape.c). Errors become
 * YTsaurus errors {"code", "message", "attributes", "inner_errors"} with the X-YT-Error,
 * X-YT-Response-Code and X-YT-Response-Message headers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool_config.h"
#include "io/yson.h"
#include "server/api.h"
#include "server/api_yt.h"
#include "server/event_log.h"
#include "server/service_state.h"

enum yt_kind {
    K_GET, K_LIST, K_EXISTS, K_SET, K_CREATE, K_REMOVE, K_START, K_GET_OP, K_LIST_OPS,
    K_OP_ACTION, K_UPDATE_OP, K_LIST_JOBS, K_GET_JOB, K_STDERR, K_FEATURES, K_WHOAMI,
    K_TRANSFER,   /* move, transfer_pool_resources, add_member, remove_member: no output */
    K_CHECK,      /* check_permission: the reply as it is */
    K_BATCH,      /* execute_batch: the others, in one request */
};

struct yt_command {
    const char *name;       /* as a YTsaurus client sends it */
    const char *ours;       /* the /api/v1 command it runs */
    enum yt_kind kind;
    const char *params[7];  /* YTsaurus parameters passed on (others are ignored, as upstream) */
};

static const struct yt_command commands[] = {
    {"get", "get", K_GET, {"path"}},
    {"list", "list", K_LIST, {"path"}},
    {"exists", "exists", K_EXISTS, {"path"}},
    {"set", "set", K_SET, {"path", "value", "dry_run"}},
    {"create", "create", K_CREATE, {"type", "path", "attributes", "ignore_existing", "dry_run"}},
    {"remove", "remove", K_REMOVE, {"path", "dry_run", "force"}},
    {"move", "move", K_TRANSFER, {"source_path", "destination_path"}},
    {"transfer_pool_resources", "transfer_pool_resources", K_TRANSFER,
     {"source_pool", "destination_pool", "pool_tree", "resource_delta"}},
    {"start_operation", "start_op", K_START, {"operation_type", "spec"}},
    {"start_op", "start_op", K_START, {"operation_type", "spec"}},
    {"add_member", "add_member", K_TRANSFER, {"member", "group"}},
    {"remove_member", "remove_member", K_TRANSFER, {"member", "group"}},
    {"check_permission", "check_permission", K_CHECK, {"user", "permission", "path"}},
    {"get_operation", "get_operation", K_GET_OP, {"operation_id"}},
    {"_get_operation", "get_operation", K_GET_OP, {"operation_id"}},
    {"list_operations", "list_operations", K_LIST_OPS,
     {"pool", "user", "state", "filter", "limit", "access"}},
    {"_list_operations", "list_operations", K_LIST_OPS,
     {"pool", "user", "state", "filter", "limit", "access"}},
    {"abort_operation", "abort_op", K_OP_ACTION, {"operation_id"}},
    {"abort_op", "abort_op", K_OP_ACTION, {"operation_id"}},
    {"suspend_operation", "suspend_op", K_OP_ACTION, {"operation_id"}},
    {"suspend_op", "suspend_op", K_OP_ACTION, {"operation_id"}},
    {"resume_operation", "resume_op", K_OP_ACTION, {"operation_id"}},
    {"resume_op", "resume_op", K_OP_ACTION, {"operation_id"}},
    {"complete_operation", "complete_op", K_OP_ACTION, {"operation_id"}},
    {"complete_op", "complete_op", K_OP_ACTION, {"operation_id"}},
    {"update_operation_parameters", "update_op_parameters", K_UPDATE_OP,
     {"operation_id", "parameters"}},
    {"update_op_parameters", "update_op_parameters", K_UPDATE_OP,
     {"operation_id", "parameters"}},
    {"list_jobs", "list_jobs", K_LIST_JOBS,
     {"operation_id", "state", "sort_field", "sort_order", "offset", "limit"}},
    {"get_job", "get_job", K_GET_JOB, {"operation_id", "job_id"}},
    {"get_job_stderr", "get_job_stderr", K_STDERR, {"operation_id", "job_id"}},
    {"get_supported_features", NULL, K_FEATURES, {NULL}},
    {"execute_batch", NULL, K_BATCH, {NULL}},
    /* v4 only, as upstream: {"user"} (and poolsched's "role": admin, user or node) */
    {"get_current_user", "get_current_user", K_WHOAMI, {NULL}},
};

/* Whether a command writes: POST or PUT (is_volatile), else GET. The /api/v1 command's own
 * flag (api.c's table, the one that also refuses writes while the store is down); a batch may
 * hold writes, so it is sent as one, as upstream. */
static bool writes(const struct yt_command *c)
{
    return c->ours ? ps_api_command_writes(c->ours) : c->kind == K_BATCH;
}

static const struct yt_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* ---- replies ----------------------------------------------------------------------------- */

/* JSON of any value: v3 answers bare scalars (exists' true, start_operation's id). */
static void reply_json(struct ps_http_response *resp, int status, const json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) {
        resp->failed = 1;
        return;
    }
    ps_http_response_take(resp, status, "application/json", text, strlen(text));
}

/* The output format asked for: 0 JSON, else YSON text with these ps_yson_print flags + 1.
 * output_format may carry attributes (<format=pretty>"yson", as `yt get` sends it). */
static int want_yson(const struct ps_http_request *req, const json_t *params)
{
    const char *f = ps_http_request_header(req, "X-YT-Output-Format");
    const json_t *o = json_object_get(params, "output_format");
    const json_t *attrs = json_object_get(o, "$attributes");
    if (json_object_get(o, "$value"))
        o = json_object_get(o, "$value");
    if (json_string_value(o))
        f = json_string_value(o);
    if (!f || strstr(f, "yson") == NULL)
        return 0;
    const char *layout = json_string_value(json_object_get(attrs, "format"));
    if (!layout && strchr(f, '<') && strstr(f, "pretty"))   /* a header with attributes */
        layout = "pretty";
    return 1 + (layout && strcmp(layout, "pretty") == 0 ? PS_YSON_PRETTY : PS_YSON_COMPACT);
}

static void reply_value(const struct ps_http_request *req, struct ps_http_response *resp,
                        const json_t *params, const json_t *value)
{
    if (!value) {
        ps_http_response_set(resp, 200, "application/json", NULL, 0);
        return;
    }
    int yson = want_yson(req, params);
    if (yson) {
        char *text = NULL;
        struct ps_error err;
        ps_error_init(&err);
        if (ps_yson_print(value, (unsigned)(yson - 1), &text, &err) == 0) {
            ps_http_response_take(resp, 200, "application/x-yt-yson-text", text, strlen(text));
            return;
        }
    }
    reply_json(resp, 200, value);
}

/* A YTsaurus error reply: body and X-YT-Error carry {"code", "message", "attributes",
 * "inner_errors"}. */
static void yt_error(const struct ps_http_request *req, struct ps_http_response *resp, int status,
                     int code, const char *message)
{
    json_t *e = json_pack("{s:i, s:s, s:{s:s, s:s}, s:[]}", "code", code, "message",
                          message ? message : "", "attributes", "request_id", req->request_id,
                          "host", "poolsched", "inner_errors");
    if (!e) {   /* a message jansson refuses (bad UTF-8): keep the code */
        e = json_pack("{s:i, s:s, s:{}, s:[]}", "code", code, "message", "error", "attributes",
                      "inner_errors");
    }
    char *text = e ? json_dumps(e, JSON_COMPACT) : NULL;
    if (!text) {
        json_decref(e);
        resp->failed = 1;
        return;
    }
    char codebuf[16];
    snprintf(codebuf, sizeof codebuf, "%d", code);
    ps_http_response_add_header(resp, "X-YT-Error", text);
    ps_http_response_add_header(resp, "X-YT-Response-Code", codebuf);
    ps_http_response_add_header(resp, "X-YT-Response-Message", json_string_value(json_object_get(e, "message")));
    ps_http_response_take(resp, status, "application/json", text, strlen(text));
    json_decref(e);
}

/* What a command answers: a value (out; NULL: an empty body), get_job_stderr's raw bytes
 * (raw: the /api/v1 reply holding "stderr"), or a YTsaurus error (http != 200, code, msg). */
struct outcome {
    int http;
    int code;
    char msg[PS_ERROR_MSG_MAX];
    json_t *out;
    json_t *raw;
};

static void fail(struct outcome *o, int http, int code, const char *msg)
{
    o->http = http;
    o->code = code;
    snprintf(o->msg, sizeof o->msg, "%s", msg ? msg : "internal error");
}

/* Maps a /api/v1 error reply onto a YTsaurus error code and HTTP status. */
static void v1_error(struct outcome *o, const struct yt_command *c, int status,
                     const json_t *reply)
{
    int ps = (int)json_integer_value(json_object_get(reply, "code"));
    const char *msg = json_string_value(json_object_get(reply, "message"));
    bool op = c->kind >= K_START && c->kind != K_FEATURES;
    int code = YT_GENERIC, http = 400;
    switch (ps) {
    case PS_ENOENT:
        http = 404;
        code = !op ? YT_RESOLVE
               : (msg && strncmp(msg, "job", 3) == 0) ? YT_NO_SUCH_JOB : YT_NO_SUCH_OPERATION;
        break;
    case PS_EPERM: http = 403; code = YT_AUTHORIZATION; break;
    case PS_EEXIST: code = YT_ALREADY_EXISTS; break;
    case PS_ESTATE: code = op ? YT_INVALID_OPERATION_STATE : YT_GENERIC; break;
    case PS_ENOSPC:
    case PS_EUNAVAIL: http = 503; code = YT_UNAVAILABLE; break;
    default:
        if (status >= 500)
            http = 500;
        break;
    }
    fail(o, http, code, msg);
}

/* ---- parameters -------------------------------------------------------------------------- */

static int b64_value(int ch)
{
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+' || ch == '-') return 62;
    if (ch == '/' || ch == '_') return 63;
    return -1;
}

/* Decodes base64 (standard or URL alphabet, padding optional) into a malloc'd buffer. */
static char *b64_decode(const char *in, size_t *out_len)
{
    size_t n = strlen(in);
    char *out = malloc(n / 4 * 3 + 4);
    if (!out)
        return NULL;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == '=')
            break;
        int v = b64_value((unsigned char)in[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = 0;
    *out_len = o;
    return out;
}

struct query_ctx {
    json_t *params;
};

/* Query values are strings; booleans and numbers of the few typed parameters are converted, and
 * structured ones (attributes, spec, parameters) may be given as JSON or YSON text. */
static void query_param(void *ctx, const char *key, const char *value)
{
    struct query_ctx *q = ctx;
    json_t *v = NULL;
    if (strcmp(value, "true") == 0 || strcmp(value, "%true") == 0)
        v = json_true();
    else if (strcmp(value, "false") == 0 || strcmp(value, "%false") == 0)
        v = json_false();
    else if (strcmp(key, "limit") == 0 || strcmp(key, "offset") == 0) {
        char *end;
        long long n = strtoll(value, &end, 10);
        v = *value && !*end ? json_integer(n) : json_string(value);
    } else if (strcmp(key, "attributes") == 0 || strcmp(key, "spec") == 0 ||
               strcmp(key, "parameters") == 0 || strcmp(key, "value") == 0) {
        struct ps_error err;
        ps_error_init(&err);
        if (ps_value_parse_attributed(value, strlen(value), &v, &err) != 0)
            v = json_string(value);
    } else {
        v = json_string(value);
    }
    if (v)
        json_object_set_new(q->params, key, v);
}

/* Merges parameter text (JSON or YSON) into params. */
static int merge_text(json_t *params, const char *text, size_t len, const char *what,
                      char *msg, size_t msg_size)
{
    json_t *doc = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_value_parse_attributed(text, len, &doc, &err) != 0) {
        snprintf(msg, msg_size, "%s: %.400s", what, err.msg);
        return -1;
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        snprintf(msg, msg_size, "%s: must be a map of parameters", what);
        return -1;
    }
    json_object_update(params, doc);
    json_decref(doc);
    return 0;
}

static int collect_params(const struct ps_http_request *req, const struct yt_command *c,
                          json_t *params, char *msg, size_t msg_size)
{
    struct query_ctx q = {params};
    ps_http_request_query_foreach(req, query_param, &q);
    const char *h = ps_http_request_header(req, "X-YT-Parameters");
    if (h && merge_text(params, h, strlen(h), "X-YT-Parameters", msg, msg_size) != 0)
        return -1;
    /* X-YT-Parameters-0, -1, ...: one base64 text cut in chunks (the JavaScript wrapper) */
    char *joined = NULL;
    size_t joined_len = 0;
    for (int i = 0; i < 64; i++) {
        char name[32];
        snprintf(name, sizeof name, "X-YT-Parameters-%d", i);
        const char *part = ps_http_request_header(req, name);
        if (!part)
            break;
        size_t n = strlen(part);
        char *grown = realloc(joined, joined_len + n + 1);
        if (!grown) {
            free(joined);
            snprintf(msg, msg_size, "out of memory");
            return -1;
        }
        joined = grown;
        memcpy(joined + joined_len, part, n + 1);
        joined_len += n;
    }
    if (joined) {
        size_t len = 0;
        char *text = b64_decode(joined, &len);
        free(joined);
        if (!text) {
            snprintf(msg, msg_size, "X-YT-Parameters-N: not base64");
            return -1;
        }
        int rc = merge_text(params, text, len, "X-YT-Parameters-N", msg, msg_size);
        free(text);
        if (rc != 0)
            return -1;
    }
    if (req->body_len == 0)
        return 0;
    if (c && c->kind == K_SET) {   /* the value, in X-YT-Input-Format (JSON or YSON text) */
        json_t *v = NULL;
        struct ps_error err;
        ps_error_init(&err);
        if (ps_value_parse_text(req->body, req->body_len, &v, &err) != 0) {
            snprintf(msg, msg_size, "body: %.400s", err.msg);
            return -1;
        }
        json_object_set_new(params, "value", v);
        return 0;
    }
    return merge_text(params, req->body, req->body_len, "body", msg, msg_size);
}

/* ---- running commands -------------------------------------------------------------------- */

/* Runs a /api/v1 command (body stolen) through the one dispatcher. */
static int call(struct ps_service *svc, const char *command, json_t *body,
                const struct ps_auth_identity *who, json_t **reply)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text) {
        *reply = ps_http_error_body(PS_ENOMEM, "out of memory");
        return 500;
    }
    int status = ps_api_dispatch(svc, command, text, strlen(text), who, reply);
    free(text);
    return status;
}

static json_t *node_id(const char *path)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = path ? path : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    char buf[40];
    snprintf(buf, sizeof buf, "%x-%x-%x-%x", (unsigned)(h >> 48), (unsigned)(h >> 32) & 0xffff,
             (unsigned)(h >> 16) & 0xffff, (unsigned)h & 0xffff);
    return json_string(buf);
}

/* The value of a node's attribute k besides those `get path/@` answers: Cypress's system
 * attributes (ps_yt_system_attribute, id), else what `get path/@k` answers (type, name, ...),
 * but never a pool's config key that is not set (upstream's pools keep only what was set).
 * NULL: the node has no such attribute. */
static json_t *other_attribute(struct ps_service *svc, const struct ps_auth_identity *who,
                               const char *path, const char *k, bool pool)
{
    if (strcmp(k, "id") == 0)
        return node_id(path);
    json_t *v = ps_yt_system_attribute(k, svc->started_ms);
    if (v || (pool && ps_attr_find(&ps_pool_config_table, k)))
        return v;
    char *p = NULL;
    if (asprintf(&p, "%s/@%s", path, k) < 0)
        return NULL;
    json_t *r = NULL;
    if (call(svc, "get", json_pack("{s:s}", "path", p), who, &r) == 200)
        v = json_incref(json_object_get(r, "value"));
    json_decref(r);
    free(p);
    return v;
}

/* {"$attributes": {...}, "$value": value} with the requested attributes of the node at path;
 * under //sys/pool_trees and //sys/pools, the children of a map (pools) get theirs too, as a
 * Cypress get with attributes answers for a subtree. */
static json_t *with_attributes(struct ps_service *svc, const struct ps_auth_identity *who,
                               const char *path, json_t *value, const json_t *attributes)
{
    char *p = NULL;
    json_t *r = NULL, *attrs = json_object();
    if (asprintf(&p, "%s/@", path) < 0)
        p = NULL;
    const json_t *all = p && call(svc, "get", json_pack("{s:s}", "path", p), who, &r) == 200
                            ? json_object_get(r, "value")
                            : NULL;
    free(p);
    json_t *type = other_attribute(svc, who, path, "type", false);
    bool pool = json_is_string(type) && strcmp(json_string_value(type), "scheduler_pool") == 0;
    json_decref(type);
    size_t i;
    json_t *a;
    json_array_foreach(attributes, i, a) {
        const char *k = json_string_value(a);
        json_t *v = !k ? NULL
                    : json_object_get(all, k) ? json_incref(json_object_get(all, k))
                                              : other_attribute(svc, who, path, k, pool);
        if (v)
            json_object_set_new(attrs, k, v);
    }
    json_decref(r);
    bool subtree = strncmp(path, "//sys/pool_trees", 16) == 0 ||
                   strncmp(path, "//sys/pools", 11) == 0;
    if (subtree && json_is_object(value)) {
        const char *child;
        json_t *cv;
        json_object_foreach(value, child, cv) {
            char *cp = NULL;
            if (asprintf(&cp, "%s/%s", path, child) < 0)
                continue;
            json_object_set_new(value, child,
                                with_attributes(svc, who, cp, json_incref(cv), attributes));
            free(cp);
        }
    }
    return json_pack("{s:o, s:o}", "$attributes", attrs, "$value", value);
}

static json_t *wrap(bool v4, const char *key, json_t *value)
{
    return v4 ? json_pack("{s:o}", key, value) : value;
}

static void execute_batch(struct ps_service *svc, bool v4, const json_t *params,
                          const struct ps_auth_identity *who, struct outcome *o);

/* get of the event log: its filters pass on too (a query string's since, digits, as a number) */
static void event_log_filters(const json_t *params, json_t *body)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)params, key, v) {
        if (!ps_event_log_param(key))
            continue;
        const char *t = json_string_value(v);
        char *end = NULL;
        long long n = t && *t ? strtoll(t, &end, 10) : 0;
        json_object_set_new(body, key, end && !*end ? json_integer(n) : json_incref(v));
    }
}

/* Runs command c with its YTsaurus parameters (params, changed) as who: *o. */
static void execute(struct ps_service *svc, const struct yt_command *c, bool v4, json_t *params,
                    const struct ps_auth_identity *who, struct outcome *o)
{
    if (c->kind == K_FEATURES) {
        o->out = json_pack("{s:{s:[s,s,s,s,s,s], s:[s], s:[s], s:[s]}}", "features",
                           "primitive_types", "int64", "uint64", "double", "boolean", "string",
                           "null", "compression_codecs", "none", "erasure_codecs", "none",
                           "operation_types", "vanilla");
        return;
    }
    if (c->kind == K_BATCH) {
        execute_batch(svc, v4, params, who, o);
        return;
    }
    /* a parameter with attributes (a rich YPath <...>"//p", a job id the client carries its
     * address on) is its value; only the formats' attributes mean something here */
    const char *pkey;
    json_t *pval;
    json_object_foreach(params, pkey, pval) {
        json_t *inner = json_object_get(pval, "$value");
        if (json_is_object(pval) && inner && json_object_get(pval, "$attributes") &&
            !strstr(pkey, "_format"))
            json_object_set(params, pkey, inner);
    }
    json_t *lim = json_object_get(params, "limit");
    if (c->kind == K_LIST_OPS && lim &&
        (!json_is_integer(lim) || json_integer_value(lim) < 1 || json_integer_value(lim) > 1000)) {
        char *text = json_dumps(lim, JSON_COMPACT | JSON_ENCODE_ANY);
        char msg[200];
        snprintf(msg, sizeof msg, "list_operations: limit: must be an integer from 1 to 1000, got %.40s",
                 text ? text : "?");
        free(text);
        fail(o, 400, YT_GENERIC, msg);
        return;
    }
    /* the /api/v1 body: the parameters the command reads, under its names */
    json_t *body = json_object();
    if (!json_object_get(params, "state") && json_object_get(params, "job_state"))
        json_object_set(params, "state", json_object_get(params, "job_state"));
    for (int i = 0; i < 7 && c->params[i]; i++) {
        json_t *v = json_object_get(params, c->params[i]);
        if (v)
            json_object_set(body, c->params[i], v);
    }
    if (c->kind == K_GET && ps_event_log_claims(json_string_value(json_object_get(params, "path"))))
        event_log_filters(params, body);
    if (c->kind == K_LIST_JOBS && !json_object_get(body, "limit"))
        json_object_set_new(body, "limit", json_integer(1000));   /* upstream's default */
    if (c->kind == K_LIST_OPS) {
        json_object_set_new(body, "counters", json_true());
        if (!ps_yt_wants_full_operations(json_object_get(params, "attributes")))
            json_object_set_new(body, "brief", json_true());
    }
    const char *path = json_string_value(json_object_get(params, "path"));
    json_t *reply = NULL;
    int status = call(svc, c->ours, body, who, &reply);
    if (status != 200) {
        v1_error(o, c, status, reply);
        json_decref(reply);
        return;
    }
    const json_t *attributes = json_object_get(params, "attributes");
    /* v4 get/list: the bare value, as the Python client asks for it */
    bool only_value = json_is_true(json_object_get(params, "return_only_value"));
    json_t *out = NULL;   /* NULL: an empty body */
    /* a dry run of set/create/remove answers its diff as it is (docs/api.md "Dry run") */
    bool dry_run = (c->kind == K_SET || c->kind == K_CREATE || c->kind == K_REMOVE) &&
                   json_is_true(json_object_get(params, "dry_run"));   /* body is gone */
    enum yt_kind kind = dry_run ? K_FEATURES : c->kind;
    if (kind == K_FEATURES || kind == K_WHOAMI || kind == K_CHECK)
        out = json_incref(reply);
    switch (kind) {
    case K_GET: {
        json_t *v = json_incref(json_object_get(reply, "value"));
        if (ps_event_log_claims(path))
            ps_yt_event_rows(v);
        else if (json_is_array(attributes) && path && !strchr(path, '@'))
            v = with_attributes(svc, who, path, v, attributes);
        out = wrap(v4 && !only_value, "value", v);
        break;
    }
    case K_LIST: {
        json_t *v = json_incref(json_object_get(reply, "value"));
        if (json_is_array(attributes) && path) {
            json_t *items = json_array();
            size_t i;
            json_t *item;
            json_array_foreach(v, i, item) {
                char *p = NULL;
                if (asprintf(&p, "%s/%s", path, json_string_value(item)) < 0)
                    continue;
                json_array_append_new(items, with_attributes(svc, who, p, json_incref(item),
                                                             attributes));
                free(p);
            }
            json_decref(v);
            v = items;
        }
        out = wrap(v4 && !only_value, "value", v);
        break;
    }
    case K_EXISTS:
        out = wrap(v4, "value", json_incref(json_object_get(reply, "value")));
        break;
    case K_CREATE:
        out = wrap(v4, "node_id", node_id(path));
        break;
    case K_START:
        out = wrap(v4, "operation_id", json_incref(json_object_get(reply, "operation_id")));
        break;
    case K_GET_OP:
        out = ps_yt_operation(json_incref(reply));
        ps_yt_filter_keys(out, attributes);
        break;
    case K_LIST_OPS:
        out = ps_yt_list_operations(reply, params);
        break;
    case K_LIST_JOBS: {
        /* as upstream: state_counts over every job whatever the state filter, type_counts
         * likewise (every job is vanilla), the job counts over the jobs passing the filter */
        json_t *jobs = json_object_get(reply, "jobs");
        json_t *states = json_object_get(reply, "state_counts");
        json_int_t all = 0, matching = json_integer_value(json_object_get(reply, "job_count"));
        const char *key;
        json_t *n;
        json_object_foreach(states, key, n)
            all += json_integer_value(n);
        /* with_stderr: only the jobs with (true) or without (false) stderr, as upstream */
        const json_t *with_stderr = json_object_get(params, "with_stderr");
        size_t i;
        json_t *job;
        for (i = 0; json_is_boolean(with_stderr) && i < json_array_size(jobs);) {
            bool has = json_integer_value(json_object_get(json_array_get(jobs, i), "stderr_size")) > 0;
            if (has != json_is_true(with_stderr))
                json_array_remove(jobs, i);
            else
                i++;
        }
        json_array_foreach(jobs, i, job)
            ps_yt_job(job);
        json_t *types = all ? json_pack("{s:I}", "vanilla", all) : json_object();
        out = json_pack("{s:O, s:O, s:o, s:I, s:I, s:I, s:[]}", "jobs", jobs,
                        "state_counts", states, "type_counts", types,
                        "cypress_job_count", (json_int_t)0, "controller_agent_job_count",
                        matching, "archive_job_count", (json_int_t)0, "errors");
        break;
    }
    case K_GET_JOB:
        out = ps_yt_job(json_incref(reply));
        break;
    case K_STDERR:   /* the raw bytes, as upstream */
        o->raw = json_incref(reply);
        break;
    default:   /* set, remove, the operation actions: no output */
        break;
    }
    o->out = out;
    json_decref(reply);
}

/* execute_batch: {"requests": [{"command", "parameters", "input"}...]} runs each request as its
 * own command (set's "input" is its value) and answers, in order, {"output": ...} or
 * {"error": {...}} for each: v4 {"results": [...]}, v3 the list. Commands with raw output
 * (get_job_stderr) and execute_batch itself are refused per request, as upstream. */
static void execute_batch(struct ps_service *svc, bool v4, const json_t *params,
                          const struct ps_auth_identity *who, struct outcome *o)
{
    const json_t *requests = json_object_get(params, "requests");
    if (!json_is_array(requests)) {
        fail(o, 400, YT_GENERIC, "execute_batch: requests: must be a list of {command, parameters, input}");
        return;
    }
    json_t *results = json_array();
    size_t i;
    const json_t *r;
    json_array_foreach(requests, i, r) {
        const char *name = json_string_value(json_object_get(r, "command"));
        const struct yt_command *sub = name ? find_command(name) : NULL;
        const json_t *given = json_object_get(r, "parameters");
        struct outcome so = {.http = 200};
        char msg[200];
        if (!sub || sub->kind == K_BATCH || sub->kind == K_STDERR || (sub->kind == K_WHOAMI && !v4)) {
            snprintf(msg, sizeof msg, "requests[%zu]: command %.60s%s", i, name ? name : "(none)",
                     sub ? " is not supported in a batch" : " is not registered");
            fail(&so, 400, YT_GENERIC, msg);
        } else if (given && !json_is_object(given)) {
            snprintf(msg, sizeof msg, "requests[%zu]: parameters: must be a map", i);
            fail(&so, 400, YT_GENERIC, msg);
        } else {
            json_t *p = given ? json_deep_copy(given) : json_object();
            if (sub->kind == K_SET && json_object_get(r, "input"))
                json_object_set(p, "value", json_object_get(r, "input"));
            execute(svc, sub, v4, p, who, &so);
            json_decref(p);
        }
        json_t *one = so.http == 200
                          ? json_pack("{s:o}", "output", so.out ? so.out : json_object())
                          : json_pack("{s:{s:i, s:s, s:{}, s:[]}}", "error", "code", so.code,
                                      "message", so.msg, "attributes", "inner_errors");
        so.out = NULL;
        if (!one) {   /* a message jansson refuses (bad UTF-8): keep the code */
            one = json_pack("{s:{s:i, s:s, s:{}, s:[]}}", "error", "code", so.code, "message",
                            "error", "attributes", "inner_errors");
        }
        json_array_append_new(results, one);
        json_decref(so.raw);
    }
    o->out = v4 ? json_pack("{s:o}", "results", results) : results;
}

static void yt_handler(const struct ps_http_request *req, struct ps_http_response *resp,
                       void *ctx)
{
    struct ps_service *svc = ctx;
    bool v4 = strncmp(req->path, "/api/v4", 7) == 0;
    const char *name = req->path + 7;
    while (*name == '/')
        name++;
    if (!*name) {   /* GET /api/v4: the commands, as upstream describes them */
        json_t *list = json_array();
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (v4 || commands[i].kind != K_WHOAMI)
                json_array_append_new(list, json_pack("{s:s, s:b, s:b, s:s, s:s}", "name",
                                                  commands[i].name, "is_volatile",
                                                  writes(&commands[i]), "is_heavy", 0, "input_type",
                                                  commands[i].kind == K_SET ? "structured" : "null",
                                                  "output_type", "structured"));
        ps_http_reply_json(resp, 200, list);
        json_decref(list);
        return;
    }
    const struct yt_command *c = find_command(name);
    if (c && c->kind == K_WHOAMI && !v4)
        c = NULL;
    if (!c) {
        char msg[200];
        snprintf(msg, sizeof msg, "Command %.100s is not registered", name);
        yt_error(req, resp, 404, YT_GENERIC, msg);
        return;
    }
    bool is_get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
    bool is_write = strcmp(req->method, "POST") == 0 || strcmp(req->method, "PUT") == 0;
    if (writes(c) ? !is_write : !is_get) {
        char msg[200];
        snprintf(msg, sizeof msg, "Command %s requires HTTP method %s, got %s", c->name,
                 writes(c) ? "POST or PUT" : "GET", req->method);
        ps_http_response_add_header(resp, "Allow", writes(c) ? "POST, PUT" : "GET");
        yt_error(req, resp, 405, YT_GENERIC, msg);
        return;
    }
    struct ps_auth_identity who;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_api_authenticate(svc, ps_http_request_header(req, "Authorization"), &who, &err) != 0) {
        yt_error(req, resp, 401, YT_AUTHENTICATION, err.msg);
        return;
    }
    json_t *params = json_object();
    char msg[PS_ERROR_MSG_MAX];
    if (collect_params(req, c, params, msg, sizeof msg) != 0) {
        yt_error(req, resp, 400, YT_GENERIC, msg);
        json_decref(params);
        return;
    }
    struct outcome o = {.http = 200};
    execute(svc, c, v4, params, &who, &o);
    if (o.http != 200)
        yt_error(req, resp, o.http, o.code, o.msg);
    else if (o.raw) {
        const char *text = json_string_value(json_object_get(o.raw, "stderr"));
        ps_http_response_set(resp, 200, "application/octet-stream", text ? text : "",
                             text ? strlen(text) : 0);
    } else
        reply_value(req, resp, params, o.out);
    json_decref(o.out);
    json_decref(o.raw);
    json_decref(params);
}

/* GET /api/v3 or /api/v4 (a trailing '/' allowed): the command list. */
static bool is_command_list(const struct ps_http_request *req)
{
    const char *rest = req->path + 7;
    return strcmp(req->method, "GET") == 0 && (rest[0] == 0 || strcmp(rest, "/") == 0);
}

/* Admits on the headers, as /api/v1 does: the token before the body; YTsaurus-shaped refusals. */
static int yt_admit(const struct ps_http_request *req, struct ps_http_response *resp,
                    size_t *max_body, void *ctx)
{
    struct ps_service *svc = ctx;
    if (is_command_list(req)) {   /* as upstream: clients read it before sending a token */
        *max_body = 0;
        return 0;
    }
    struct ps_auth_identity who;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_api_authenticate(svc, ps_http_request_header(req, "Authorization"), &who, &err) != 0) {
        yt_error(req, resp, err.code == PS_EIO ? 500 : 401, YT_AUTHENTICATION, err.msg);
        return -1;
    }
    if (who.role == PS_ROLE_NODE) {
        yt_error(req, resp, 403, YT_AUTHORIZATION, "node tokens may only send heartbeats");
        return -1;
    }
    const char *name = strrchr(req->path, '/');
    name = name ? name + 1 : "";
    bool start = strcmp(name, "start_operation") == 0 || strcmp(name, "start_op") == 0;
    *max_body = (size_t)(start ? svc->cfg.http_max_start_op_body_size
                               : svc->cfg.http_max_body_size);
    return 0;
}

static void api_versions(const struct ps_http_request *req, struct ps_http_response *resp,
                         void *ctx)
{
    (void)req;
    (void)ctx;
    json_t *v = json_pack("[s,s]", "v3", "v4");
    ps_http_reply_json(resp, 200, v);
    json_decref(v);
}

/* The proxies a client may use: this server, as the client reached it. */
static void hosts(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    struct ps_service *svc = ctx;
    const char *host = ps_http_request_header(req, "Host");
    char buf[300];
    if (!host || !*host || strlen(host) > 255 || strpbrk(host, "\"\\ \t")) {
        snprintf(buf, sizeof buf, "127.0.0.1:%u", (unsigned)ps_http_server_port(svc->http));
        host = buf;
    }
    json_t *v = json_pack("[s]", host);
    ps_http_reply_json(resp, 200, v);
    json_decref(v);
}

/* /auth/whoami (GET or POST), as upstream's HTTP proxy: {"login", "realm", "csrf_token"}
 * for the token sent, a YTsaurus authentication error without one. The Python client's
 * get_user_name and `yt whoami` read login. */
static void whoami(const struct ps_http_request *req, struct ps_http_response *resp, void *ctx)
{
    struct ps_service *svc = ctx;
    if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "POST") != 0) {
        ps_http_response_add_header(resp, "Allow", "GET, POST");
        yt_error(req, resp, 405, YT_GENERIC, "/auth/whoami requires HTTP method GET or POST");
        return;
    }
    struct ps_auth_identity who;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_api_authenticate(svc, ps_http_request_header(req, "Authorization"), &who, &err) != 0) {
        yt_error(req, resp, err.code == PS_EIO ? 500 : 401, YT_AUTHENTICATION, err.msg);
        return;
    }
    /* the realm of upstream's Cypress token authenticator (its tokens are like these); no
     * cookies here, so no CSRF token to sign: an empty one */
    json_t *v = json_pack("{s:s, s:s, s:s}", "login", who.user, "realm", "cypress", "csrf_token",
                          "");
    ps_http_reply_json(resp, 200, v);
    json_decref(v);
}

int ps_api_yt_register(struct ps_service *svc, struct ps_error *err)
{
    int rc;
    if ((rc = ps_http_server_route_admit(svc->http, NULL, "/api/v3", PS_HTTP_PREFIX, yt_handler,
                                         yt_admit, svc, err)) != 0 ||
        (rc = ps_http_server_route_admit(svc->http, NULL, "/api/v4", PS_HTTP_PREFIX, yt_handler,
                                         yt_admit, svc, err)) != 0 ||
        (rc = ps_http_server_route(svc->http, "GET", "/api", PS_HTTP_EXACT, api_versions, svc,
                                   err)) != 0 ||
        (rc = ps_http_server_route(svc->http, "GET", "/hosts", PS_HTTP_EXACT, hosts, svc,
                                   err)) != 0 ||
        (rc = ps_http_server_route(svc->http, NULL, "/auth/whoami", PS_HTTP_EXACT, whoami, svc,
                                   err)) != 0)
        return rc;
    return 0;
}
