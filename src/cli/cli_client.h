/* cli_client.h — how the client commands reach the scheduler (docs/api.md) and report results.
 *
 * Resolution, the same for every command:
 *   server:  --proxy URL|host:port, else $POOLSCHED_PROXY, else PS_CLI_DEFAULT_PROXY.
 *            "host:port" means http://host:port; a trailing '/' is dropped.
 *   token:   --token, else $POOLSCHED_TOKEN, else the file <data-dir>/admin_token (owner-only
 *            permissions, surrounding whitespace ignored), else no token (the server answers 401).
 *   data dir: --data-dir, else $POOLSCHED_DATA_DIR, else $XDG_STATE_HOME/poolsched, else
 *            ./poolsched-data: the scheduler's own rule (platform/data_dir.h).
 * Every request is `POST <server>/api/v1/<command>` with a JSON object body.
 *
 * Exit codes (commands.h): 0 success; 1 a remote error (the server's message is shown) or no
 * connection; 2 bad usage or bad input, found before anything is sent.
 */
#ifndef PS_CLI_CLIENT_H
#define PS_CLI_CLIENT_H

#include <stdbool.h>

#include <jansson.h>

#include "cli/cli_args.h"
#include "platform/http_client.h"
#include "core/error.h"

/* The embedded scheduler's address and data directory: the one place that names them. */
#define PS_CLI_DEFAULT_PROXY "127.0.0.1:9013"
#define PS_CLI_TOKEN_FILE "admin_token"
#define PS_CLI_MAX_TOKEN_BYTES 4096
#define PS_CLI_MAX_PROXY_LEN 512

/* The options every client command accepts; append to a command's own table with
 * PS_CLI_COMMON_OPTS. --format takes json, yson (and table where a command has one). */
#define PS_CLI_COMMON_OPTS                                                                      \
    {"--proxy", 0, true, false}, {"--token", 0, true, false}, {"--data-dir", 0, true, false},   \
        {"--format", 0, true, false}

/* Text appended to each command's --help. */
extern const char ps_cli_common_help[];

/* Output formats. */
enum ps_cli_format { PS_CLI_FORMAT_TEXT, PS_CLI_FORMAT_JSON, PS_CLI_FORMAT_YSON };

/* What the environment says; NULL for an unset variable. Kept separate from getenv so that the
 * resolution rules are testable. */
struct ps_cli_env {
    const char *proxy;       /* POOLSCHED_PROXY */
    const char *token;       /* POOLSCHED_TOKEN */
    const char *data_dir;    /* POOLSCHED_DATA_DIR */
    const char *xdg_state_home; /* XDG_STATE_HOME */
};

/* Reads the four variables with getenv (empty counts as unset). */
struct ps_cli_env ps_cli_env_from_process(void);

/* The base URL for proxy (NULL: the default) into *out (malloc'd; caller frees): "host:port"
 * becomes "http://host:port", http:// and https:// URLs are kept, one trailing '/' is dropped.
 * Errors: PS_EINVAL `--proxy: "ftp://x" is not an http(s) URL or host:port` (empty, spaces or
 * control characters, another scheme, longer than PS_CLI_MAX_PROXY_LEN), PS_ENOMEM. */
int ps_cli_proxy_url(const char *proxy, char **out, struct ps_error *err);

/* The token by the rules above into *out (malloc'd, or NULL when there is none).
 * Errors: PS_EPERM (token file readable by others), PS_EIO, PS_ELIMIT, PS_EINVAL (an empty
 * --token), each naming the file or option. */
int ps_cli_token(const char *opt_token, const char *opt_data_dir, const struct ps_cli_env *env,
                 char **out, struct ps_error *err);

/* A connection to the scheduler plus the output format, made from the common options. */
struct ps_cli_client {
    struct ps_http_client *http;
    char *base_url;
    enum ps_cli_format format;
    const char *command;      /* the CLI command name, for messages */
    char *token_file;         /* owned: the token file looked for when no token was found
                                 (named in the message of a 401), else NULL */
    char *proxies;            /* owned: POOLSCHED_PROXY=A,B (standby schedulers, docs/ha.md):
                                 the list, else NULL */
    int proxy_index;          /* base_url is the proxy_index-th of proxies */
};

/* Parses a command's arguments (argv[0] is the command) into *args and checks that there are
 * min_pos to max_pos positional ones; missing names the first one in the message. --help prints
 * usage and the common help. Returns -1 to go on, else the exit code (0 after --help, 2 after
 * printing a usage error). */
int ps_cli_parse_command(const char *command, int argc, char **argv,
                         const struct ps_cli_opt *opts, size_t min_pos, size_t max_pos,
                         const char *missing, const char *usage, struct ps_cli_args *args);

/* Resolves the common options of args and opens a client. allowed_formats is a NULL-terminated
 * list of the --format values this command accepts ("json", "yson", "table"); the first is the
 * default. Prints the error line itself and returns the exit code (2 for bad options, 1 for a
 * local failure), or 0 with *c ready. */
int ps_cli_client_open(struct ps_cli_client *c, const char *command,
                       const struct ps_cli_args *args, const char *const *allowed_formats);

/* Closes the connection. */
void ps_cli_client_close(struct ps_cli_client *c);

/* POST /api/v1/<api_command> with body (borrowed; NULL sends {}). On HTTP 200 with a JSON
 * object, *reply receives it (caller decrefs) and 0 is returned. Otherwise prints one line
 * `error: <command>: <server message> (HTTP <status>, <error>)` (error: the body's
 * readable class, "not found"; left out when the body has none) or `error: <command>: <why>` for a
 * failed exchange, and returns 1; *status (may be NULL) receives the HTTP status (0 when no
 * response came). When quiet_status is the status received, nothing is printed. */
int ps_cli_call(struct ps_cli_client *c, const char *api_command, const json_t *body,
                json_t **reply, long *status, long quiet_status);

/* ps_cli_call for a reply read as text: on HTTP 200, *text and *len receive its body (borrowed
 * until c's next request) and 0 is returned; otherwise the same line and 1. */
int ps_cli_call_text(struct ps_cli_client *c, const char *api_command, const json_t *body,
                     const char **text, size_t *len);

/* For a command whose reply has nothing to print: ps_cli_call with body (stolen; NULL sends
 * {}), the reply dropped, then closes c. Returns the exit code of ps_cli_call. */
int ps_cli_call_close(struct ps_cli_client *c, const char *api_command, json_t *body);

/* ps_cli_client_open with command, args and allowed_formats, then ps_cli_call_close. body is
 * stolen either way. Returns the exit code. */
int ps_cli_send(const char *command, const struct ps_cli_args *args,
                const char *const *allowed_formats, const char *api_command, json_t *body);

/* Prints value to stdout in the client's format (PS_CLI_FORMAT_TEXT prints YSON pretty), with a
 * trailing newline. Returns 0, or 1 after printing an error line. */
int ps_cli_print_value(const struct ps_cli_client *c, const json_t *value);

/* Prints `error: <command>: <message>` on stderr, control characters shown as '?'; command
 * NULL: `error: <message>` (the offline commands, whose messages start with the file). */
void ps_cli_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints a usage error with a pointer to --help and returns 2. */
int ps_cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses a value the user typed (JSON or YSON text) into *out; what names it in the message.
 * Errors: PS_EINVAL `<what>: invalid YSON at line 1, column 3: ...`. */
int ps_cli_parse_value(const char *text, const char *what, json_t **out, struct ps_error *err);

#endif
