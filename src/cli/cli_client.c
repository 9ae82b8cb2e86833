/* cli_client.c — proxy and token resolution, one API call, printing values (cli_client.h). */
#include "cli/cli_client.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yson.h"
#include "platform/data_dir.h"
#include "platform/private_file.h"

const char ps_cli_common_help[] =
    "\n"
    "Connection (every client command):\n"
    "  --proxy URL|HOST:PORT  the scheduler; default $POOLSCHED_PROXY, else " PS_CLI_DEFAULT_PROXY
    "\n"
    "  --token TOKEN          default $POOLSCHED_TOKEN, else the file DATA_DIR/" PS_CLI_TOKEN_FILE
    "\n"
    "  --data-dir DIR         default $POOLSCHED_DATA_DIR, else $XDG_STATE_HOME/poolsched,\n"
    "                         else " PS_DATA_DIR_FALLBACK " (where the scheduler keeps it)\n"
    "\n"
    "Exit status: 0 success; 1 the scheduler refused the request (its message is shown) or\n"
    "cannot be reached; 2 bad usage or bad input (one line 'error: <what>: <why>').\n";

/* One line, control characters as '?', so that a server message can never forge output. */
static void vprint_error(const char *command, const char *fmt, va_list ap)
{
    char msg[2 * PS_ERROR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    if (command)
        fprintf(stderr, "error: %s: %s\n", command, msg);
    else
        fprintf(stderr, "error: %s\n", msg);
}

void ps_cli_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_error(command, fmt, ap);
    va_end(ap);
}

int ps_cli_usage_error(const char *command, const char *fmt, ...)
{
    char msg[PS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ps_cli_error(command, "%s (see poolsched %s --help)", msg, command);
    return 2;
}

static const char *nonempty_env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

struct ps_cli_env ps_cli_env_from_process(void)
{
    return (struct ps_cli_env){nonempty_env("POOLSCHED_PROXY"), nonempty_env("POOLSCHED_TOKEN"),
                               nonempty_env("POOLSCHED_DATA_DIR"), nonempty_env("XDG_STATE_HOME")};
}

int ps_cli_proxy_url(const char *proxy, char **out, struct ps_error *err)
{
    *out = NULL;
    if (!proxy)
        proxy = PS_CLI_DEFAULT_PROXY;
    bool ok = proxy[0] != '\0';
    for (const char *p = proxy; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            ok = false;
    const char *sep = strstr(proxy, "://");
    bool has_scheme = sep != NULL;
    if (has_scheme && !(strncmp(proxy, "http://", 7) == 0 || strncmp(proxy, "https://", 8) == 0))
        ok = false;
    if (has_scheme && sep[3] == '\0')
        ok = false;
    if (strlen(proxy) > PS_CLI_MAX_PROXY_LEN)   /* URLs are built in fixed buffers */
        ok = false;
    if (!ok)
        return ps_error_set(err, PS_EINVAL, "--proxy: \"%.200s\" is not an http(s) URL or "
                            "host:port", proxy);
    size_t len = strlen(proxy);
    if (len > 1 && proxy[len - 1] == '/')
        len--;
    size_t n = len + sizeof "http://";
    char *url = malloc(n);
    if (!url)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    snprintf(url, n, "%s%.*s", has_scheme ? "" : "http://", (int)len, proxy);
    *out = url;
    return 0;
}

static char *trimmed_copy(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    char *copy = malloc(len + 1);
    if (copy) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

int ps_cli_token(const char *opt_token, const char *opt_data_dir, const struct ps_cli_env *env,
                 char **out, struct ps_error *err)
{
    *out = NULL;
    const char *given = opt_token ? opt_token : env->token;
    if (given) {
        char *t = trimmed_copy(given);
        if (!t)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        if (t[0] == '\0') {
            free(t);
            return ps_error_set(err, PS_EINVAL, "%s: the token is empty",
                                opt_token ? "--token" : "POOLSCHED_TOKEN");
        }
        *out = t;
        return 0;
    }
    char dir[4096];
    if (ps_data_dir_resolve(opt_data_dir, env->data_dir, env->xdg_state_home, dir, sizeof dir) != 0)
        return ps_error_set(err, PS_EINVAL, "--data-dir: the path is longer than %zu bytes", sizeof dir - 1);
    size_t n = strlen(dir) + sizeof "/" PS_CLI_TOKEN_FILE;
    char *path = malloc(n);
    if (!path)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    snprintf(path, n, "%s/%s", dir, PS_CLI_TOKEN_FILE);
    char *data = NULL;
    int rc = ps_private_file_read(path, PS_CLI_MAX_TOKEN_BYTES, &data, NULL, err);
    free(path);
    if (rc == PS_ENOENT) {
        ps_error_init(err);           /* no token file: send no token, the server says 401 */
        return 0;
    }
    if (rc != 0)
        return rc;
    *out = trimmed_copy(data);
    free(data);
    if (!*out)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if ((*out)[0] == '\0') {
        free(*out);
        *out = NULL;
    }
    return 0;
}

int ps_cli_parse_command(const char *command, int argc, char **argv,
                         const struct ps_cli_opt *opts, size_t min_pos, size_t max_pos,
                         const char *missing, const char *usage, struct ps_cli_args *args)
{
    struct ps_error err;
    ps_error_init(&err);
    if (ps_cli_args_parse(argc - 1, argv + 1, opts, args, &err) != 0)
        return ps_cli_usage_error(command, "%s", err.msg);
    if (args->help) {
        fputs(usage, stdout);
        fputs(ps_cli_common_help, stdout);
        return 0;
    }
    size_t n = ps_cli_args_positional_count(args);
    if (n < min_pos)
        return ps_cli_usage_error(command, "missing %s", missing);
    if (n > max_pos)
        return ps_cli_usage_error(command, "unexpected argument \"%.100s\"",
                                  ps_cli_args_positional(args, max_pos));
    return -1;
}

int ps_cli_client_open(struct ps_cli_client *c, const char *command,
                       const struct ps_cli_args *args, const char *const *allowed_formats)
{
    memset(c, 0, sizeof *c);
    c->command = command;
    const char *format = ps_cli_args_get(args, "--format");
    if (!format)
        format = allowed_formats[0];
    bool allowed = false;
    for (const char *const *f = allowed_formats; *f; f++)
        if (strcmp(*f, format) == 0)
            allowed = true;
    if (!allowed) {
        char list[128] = "";
        for (const char *const *f = allowed_formats; *f; f++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     f == allowed_formats ? "" : ", ", *f);
        return ps_cli_usage_error(command, "--format: must be one of %s, got \"%.60s\"", list,
                                  format);
    }
    c->format = strcmp(format, "json") == 0   ? PS_CLI_FORMAT_JSON
                : strcmp(format, "yson") == 0 ? PS_CLI_FORMAT_YSON
                                              : PS_CLI_FORMAT_TEXT;

    struct ps_cli_env env = ps_cli_env_from_process();
    struct ps_error err;
    ps_error_init(&err);
    const char *proxy = ps_cli_args_get(args, "--proxy");
    if (!proxy)
        proxy = env.proxy;
    /* A,B: standby schedulers; calls go to the first and move on when it fails or is a
     * standby (docs/ha.md) */
    char first[PS_CLI_MAX_PROXY_LEN + 1];
    if (proxy && strchr(proxy, ',')) {
        c->proxies = strdup(proxy);
        snprintf(first, sizeof first, "%.*s", (int)strcspn(proxy, ","), proxy);
        proxy = first;
    }
    if (ps_cli_proxy_url(proxy, &c->base_url, &err) != 0) {
        ps_cli_error(command, "%s", err.msg);
        return err.code == PS_EINVAL ? 2 : 1;
    }
    char *token = NULL;
    int rc = ps_cli_token(ps_cli_args_get(args, "--token"), ps_cli_args_get(args, "--data-dir"),
                          &env, &token, &err);
    if (rc == 0 && !token) {
        char dir[4096];
        if (ps_data_dir_resolve(ps_cli_args_get(args, "--data-dir"), env.data_dir,
                                env.xdg_state_home, dir, sizeof dir) == 0 &&
            asprintf(&c->token_file, "%s/%s", dir, PS_CLI_TOKEN_FILE) < 0)
            c->token_file = NULL;
    }
    if (rc == 0)
        rc = ps_http_client_new(&c->http, &err);
    if (rc == 0)
        rc = ps_http_client_set_token(c->http, token, &err);
    free(token);
    if (rc != 0) {
        ps_cli_error(command, "%s", err.msg);
        ps_cli_client_close(c);
        return rc == PS_EINVAL ? 2 : 1;
    }
    return 0;
}

void ps_cli_client_close(struct ps_cli_client *c)
{
    ps_http_client_free(c->http);
    c->http = NULL;
    free(c->base_url);
    c->base_url = NULL;
    free(c->token_file);
    c->token_file = NULL;
    free(c->proxies);
    c->proxies = NULL;
}

/* Moves base_url to the next scheduler of proxies; false when there is none (or one). */
static bool next_proxy(struct ps_cli_client *c)
{
    if (!c->proxies)
        return false;
    int count = 1;
    for (const char *p = c->proxies; *p; p++)
        count += *p == ',';
    c->proxy_index = (c->proxy_index + 1) % count;
    const char *p = c->proxies;
    for (int i = 0; i < c->proxy_index; i++)
        p += strcspn(p, ",") + 1;
    char one[PS_CLI_MAX_PROXY_LEN + 1];
    snprintf(one, sizeof one, "%.*s", (int)strcspn(p, ","), p);
    char *url = NULL;
    if (ps_cli_proxy_url(one, &url, NULL) != 0)
        return false;
    free(c->base_url);
    c->base_url = url;
    return true;
}

static int proxy_count(const struct ps_cli_client *c)
{
    int count = 1;
    for (const char *p = c->proxies ? c->proxies : ""; *p; p++)
        count += *p == ',';
    return count;
}

/* A short excerpt of a body that is not the expected JSON, for the message. */
static void excerpt(const char *body, size_t len, char *buf, size_t size)
{
    size_t n = len < size - 1 ? len : size - 1;
    if (n > 120)
        n = 120;
    memcpy(buf, body, n);
    buf[n] = '\0';
}

/* POST api_command with body, past schedulers that are down or standbys: 0 with *res, else 1
 * after printing why. url receives the URL that answered. */
static int exchange(struct ps_cli_client *c, const char *api_command, const json_t *body,
                    struct ps_http_result *res, char *url, size_t url_size)
{
    snprintf(url, url_size, "%s/api/v1/%s", c->base_url, api_command);
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_http_client_post_json(c->http, url, body, res, &err);
    /* several schedulers: past one that is down or a standby (503 naming the leader) */
    for (int tries = 1; tries < proxy_count(c) &&
                        (rc != 0 || (res->status == 503 && res->body &&
                                     memmem(res->body, res->body_len, "\"leader\"", 8)));
         tries++) {
        if (!next_proxy(c))
            break;
        snprintf(url, url_size, "%s/api/v1/%s", c->base_url, api_command);
        ps_error_init(&err);
        rc = ps_http_client_post_json(c->http, url, body, res, &err);
    }
    if (rc != 0) {
        ps_cli_error(c->command, "%s (is the scheduler running? set --proxy or POOLSCHED_PROXY)",
                     err.msg);
        return 1;
    }
    return 0;
}

/* The line for a reply that is not a 200 with a JSON object (json: its body parsed, or NULL);
 * nothing when its status is quiet_status. Returns 1. */
static int refused(const struct ps_cli_client *c, const char *url,
                   const struct ps_http_result *res, const json_t *json, long quiet_status)
{
    if (res->status == quiet_status)
        return 1;
    const char *message = json_string_value(json_object_get(json, "message"));
    const char *name = json_string_value(json_object_get(json, "error"));
    if (res->status == 200) {
        char ex[128];
        excerpt(res->body, res->body_len, ex, sizeof ex);
        ps_cli_error(c->command, "the reply from %s is not a JSON object: %s", url, ex);
    } else if (res->status == 401 && c->token_file) {
        ps_cli_error(c->command,
                     "authentication required: no token was sent (pass --token, set "
                     "POOLSCHED_TOKEN, or point --data-dir or POOLSCHED_DATA_DIR at the "
                     "scheduler's data dir: there is no %s)", c->token_file);
    } else if (message) {
        ps_cli_error(c->command, "%s (HTTP %ld%s%s)", message, res->status, name ? ", " : "",
                     name ? name : "");
    } else {
        char ex[128];
        excerpt(res->body, res->body_len, ex, sizeof ex);
        ps_cli_error(c->command, "HTTP %ld from %s%s%s", res->status, url, ex[0] ? ": " : "", ex);
    }
    return 1;
}

int ps_cli_call(struct ps_cli_client *c, const char *api_command, const json_t *body,
                json_t **reply, long *status, long quiet_status)
{
    *reply = NULL;
    if (status)
        *status = 0;
    char url[PS_CLI_MAX_PROXY_LEN + 128];
    struct ps_http_result res;
    if (exchange(c, api_command, body, &res, url, sizeof url) != 0)
        return 1;
    if (status)
        *status = res.status;
    json_t *json = json_loadb(res.body, res.body_len, JSON_REJECT_DUPLICATES, NULL);
    if (res.status == 200 && json_is_object(json)) {
        *reply = json;
        return 0;
    }
    refused(c, url, &res, json, quiet_status);
    json_decref(json);
    return 1;
}

int ps_cli_call_text(struct ps_cli_client *c, const char *api_command, const json_t *body,
                     const char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    char url[PS_CLI_MAX_PROXY_LEN + 128];
    struct ps_http_result res;
    if (exchange(c, api_command, body, &res, url, sizeof url) != 0)
        return 1;
    if (res.status == 200) {
        *text = res.body ? res.body : "";
        *len = res.body_len;
        return 0;
    }
    json_t *json = json_loadb(res.body, res.body_len, JSON_REJECT_DUPLICATES, NULL);
    refused(c, url, &res, json, 0);
    json_decref(json);
    return 1;
}

int ps_cli_call_close(struct ps_cli_client *c, const char *api_command, json_t *body)
{
    json_t *reply = NULL;
    int rc = ps_cli_call(c, api_command, body, &reply, NULL, 0);
    json_decref(body);
    json_decref(reply);
    ps_cli_client_close(c);
    return rc;
}

int ps_cli_send(const char *command, const struct ps_cli_args *args,
                const char *const *allowed_formats, const char *api_command, json_t *body)
{
    struct ps_cli_client c = {0};
    int rc = ps_cli_client_open(&c, command, args, allowed_formats);
    if (rc != 0) {
        json_decref(body);
        return rc;
    }
    return ps_cli_call_close(&c, api_command, body);
}

int ps_cli_print_value(const struct ps_cli_client *c, const json_t *value)
{
    if (c->format == PS_CLI_FORMAT_JSON) {
        char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (!text) {
            ps_cli_error(c->command, "cannot print the value as JSON");
            return 1;
        }
        printf("%s\n", text);
        free(text);
        return 0;
    }
    char *text = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_yson_print(value, PS_YSON_PRETTY, &text, &err) != 0) {
        ps_cli_error(c->command, "cannot print the value as YSON: %s", err.msg);
        return 1;
    }
    printf("%s\n", text);
    free(text);
    return 0;
}

int ps_cli_parse_value(const char *text, const char *what, json_t **out, struct ps_error *err)
{
    int rc = ps_value_parse_text(text, strlen(text), out, err);
    if (rc != 0)
        ps_error_prefix(err, "%s", what);
    return rc;
}
