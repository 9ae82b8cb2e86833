/* cmd_cypress.c — `poolsched get|set|list|create|remove|exists`: the Cypress-like tree of pool
 * trees and pools, spelled as `yt` users spell it (docs/api.md, "Cypress-like tree"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_client.h"
#include "cli/commands.h"
#include "io/textbuf.h"
#include "io/ypath.h"

#define MAX_STDIN_BYTES ((size_t)16 << 20)

static const char *const value_formats[] = {"yson", "json", NULL};
static const char *const text_formats[] = {"text", "json", "yson", NULL};

static const struct ps_cli_opt path_opts[] = {PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};
static const struct ps_cli_opt remove_opts[] = {
    {"--force", 'f', false, false}, PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};
static const struct ps_cli_opt create_opts[] = {
    {"--attributes", 0, true, false}, {"--ignore-existing", 'i', false, false},
    PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};

static int help(const char *text)
{
    fputs(text, stdout);
    fputs(ps_cli_common_help, stdout);
    return 0;
}

/* Parses the arguments; returns -1 to go on, else the exit code. */
static int parse(const char *command, int argc, char **argv, const struct ps_cli_opt *opts,
                 size_t min_pos, size_t max_pos, const char *usage, struct ps_cli_args *args)
{
    struct ps_error err;
    ps_error_init(&err);
    if (ps_cli_args_parse(argc - 1, argv + 1, opts, args, &err) != 0)
        return ps_cli_usage_error(command, "%s", err.msg);
    if (args->help)
        return help(usage);
    size_t n = ps_cli_args_positional_count(args);
    if (n < min_pos)
        return ps_cli_usage_error(command, "missing %s",
                                  strcmp(command, "create") == 0 ? "TYPE" : "PATH");
    if (n > max_pos)
        return ps_cli_usage_error(command, "unexpected argument \"%.100s\"",
                                  ps_cli_args_positional(args, max_pos));
    return -1;
}

/* Checks the syntax of a path before sending it (the server parses it the same way). */
static int check_path(const char *command, const char *path)
{
    struct ps_ypath p;
    struct ps_error err;
    ps_ypath_init(&p);
    ps_error_init(&err);
    int rc = ps_ypath_parse(path, &p, &err);
    ps_ypath_release(&p);
    if (rc != 0) {
        ps_cli_error(command, "%s", err.msg);
        return 2;
    }
    return 0;
}

/* The common shape: one PATH, a request {"path": PATH}, a reply. */
static int path_request(const char *command, const char *api, int argc, char **argv,
                        const struct ps_cli_opt *opts, const char *const *formats,
                        const char *usage, struct ps_cli_args *args, struct ps_cli_client *c,
                        json_t **reply, long quiet_status, long *status)
{
    int rc = parse(command, argc, argv, opts, 1, 1, usage, args);
    if (rc >= 0)
        return rc;
    const char *path = ps_cli_args_positional(args, 0);
    if ((rc = check_path(command, path)) != 0)
        return rc;
    if ((rc = ps_cli_client_open(c, command, args, formats)) != 0)
        return rc;
    json_t *body = json_pack("{s:s}", "path", path);
    rc = ps_cli_call(c, api, body, reply, status, quiet_status);
    json_decref(body);
    return rc;
}

static const char get_usage[] =
    "usage: poolsched get PATH [--format yson|json]\n"
    "\n"
    "Prints the value at PATH (YSON, pretty, by default). A node path gives its children as a\n"
    "map; PATH/@ gives all attributes, PATH/@attr[/key...] one attribute or a key inside it.\n"
    "  poolsched get //sys/pool_trees/physical/research/@weight\n"
    "  poolsched get //sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/"
    "fair_share_info/pools/research/integral_pool_capacity\n";

int ps_cmd_get(int argc, char **argv)
{
    struct ps_cli_args args;
    struct ps_cli_client c = {0};
    json_t *reply = NULL;
    int rc = path_request("get", "get", argc, argv, path_opts, value_formats, get_usage, &args,
                          &c, &reply, 0, NULL);
    if (rc == 0 && reply) {   /* no reply after --help */
        json_t *value = json_object_get(reply, "value");
        if (!value) {
            ps_cli_error("get", "the reply has no \"value\"");
            rc = 1;
        } else {
            rc = ps_cli_print_value(&c, value);
        }
    }
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

static const char list_usage[] =
    "usage: poolsched list PATH [--format text|json|yson]\n"
    "\n"
    "Prints the names of the children of PATH, sorted, one per line (or as a JSON/YSON list).\n"
    "  poolsched list //sys/pool_trees\n"
    "  poolsched list //sys/pools/research\n";

int ps_cmd_list(int argc, char **argv)
{
    struct ps_cli_args args;
    struct ps_cli_client c = {0};
    json_t *reply = NULL;
    int rc = path_request("list", "list", argc, argv, path_opts, text_formats, list_usage, &args,
                          &c, &reply, 0, NULL);
    if (rc == 0 && reply) {   /* no reply after --help */
        json_t *value = json_object_get(reply, "value");
        if (!json_is_array(value)) {
            ps_cli_error("list", "the reply has no \"value\" list");
            rc = 1;
        } else if (c.format != PS_CLI_FORMAT_TEXT) {
            rc = ps_cli_print_value(&c, value);
        } else {
            size_t i;
            json_t *name;
            json_array_foreach(value, i, name) {
                if (json_is_string(name))
                    printf("%s\n", json_string_value(name));
            }
        }
    }
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

static const char exists_usage[] =
    "usage: poolsched exists PATH [--format text|json|yson]\n"
    "\n"
    "Prints true or false: whether PATH exists. The exit status is 0 either way.\n";

int ps_cmd_exists(int argc, char **argv)
{
    struct ps_cli_args args;
    struct ps_cli_client c = {0};
    json_t *reply = NULL;
    int rc = path_request("exists", "exists", argc, argv, path_opts, text_formats, exists_usage,
                          &args, &c, &reply, 0, NULL);
    if (rc == 0 && reply) {   /* no reply after --help */
        json_t *value = json_object_get(reply, "value");
        if (!json_is_boolean(value)) {
            ps_cli_error("exists", "the reply has no boolean \"value\"");
            rc = 1;
        } else if (c.format != PS_CLI_FORMAT_TEXT) {
            rc = ps_cli_print_value(&c, value);
        } else {
            printf("%s\n", json_is_true(value) ? "true" : "false");
        }
    }
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

static const char remove_usage[] =
    "usage: poolsched remove PATH [-f|--force]\n"
    "\n"
    "Removes the pool or pool tree at PATH. The scheduler refuses a pool that has child pools or\n"
    "operations, and a tree that still has pools.\n"
    "  -f, --force   succeed when PATH does not exist\n";

int ps_cmd_remove(int argc, char **argv)
{
    struct ps_cli_args args;
    struct ps_cli_client c = {0};
    json_t *reply = NULL;
    long status = 0;
    /* parse first to learn --force, which decides whether a 404 is quiet */
    struct ps_error err;
    ps_error_init(&err);
    bool force = ps_cli_args_parse(argc - 1, argv + 1, remove_opts, &args, &err) == 0 &&
                 ps_cli_args_has(&args, "--force");
    int rc = path_request("remove", "remove", argc, argv, remove_opts, text_formats,
                          remove_usage, &args, &c, &reply, force ? 404 : 0, &status);
    if (rc == 1 && force && status == 404)
        rc = 0;
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

/* Reads all of standard input (for `set PATH` without VALUE, as `yt set` does). */
static int read_stdin(const char *command, char **out)
{
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        if (b.len + n > MAX_STDIN_BYTES) {
            ps_textbuf_release(&b);
            ps_cli_error(command, "standard input is larger than %zu bytes", MAX_STDIN_BYTES);
            return 2;
        }
        ps_textbuf_add(&b, chunk, n);
    }
    if (ferror(stdin)) {
        ps_textbuf_release(&b);
        ps_cli_error(command, "cannot read standard input");
        return 1;
    }
    *out = ps_textbuf_detach(&b);
    if (!*out) {
        ps_cli_error(command, "out of memory");
        return 1;
    }
    return 0;
}

static const char set_usage[] =
    "usage: poolsched set PATH [VALUE]\n"
    "\n"
    "Sets the attribute at PATH to VALUE, YSON or JSON text (read from standard input when\n"
    "VALUE is not given). PATH must address an attribute or a key inside one.\n"
    "  poolsched set //sys/pool_trees/physical/research/@weight 2\n"
    "  poolsched set //sys/pools/root-pool/burst/@integral_guarantees \\\n"
    "      '{guarantee_type=burst; resource_flow={cpu=1000}; "
    "burst_guarantee_resources={cpu=2000}}'\n"
    "  poolsched set //sys/pools/root-pool/burst/@integral_guarantees/resource_flow "
    "'{cpu=100}'\n";

int ps_cmd_set(int argc, char **argv)
{
    struct ps_cli_args args;
    int rc = parse("set", argc, argv, path_opts, 1, 2, set_usage, &args);
    if (rc >= 0)
        return rc;
    const char *path = ps_cli_args_positional(&args, 0);
    if ((rc = check_path("set", path)) != 0)
        return rc;
    char *input = NULL;
    const char *text = ps_cli_args_positional(&args, 1);
    if (!text) {
        if ((rc = read_stdin("set", &input)) != 0)
            return rc;
        text = input;
    }
    json_t *value = NULL;
    struct ps_error err;
    ps_error_init(&err);
    rc = ps_cli_parse_value(text, "VALUE", &value, &err);
    free(input);
    if (rc != 0) {
        ps_cli_error("set", "%s", err.msg);
        return 2;
    }
    struct ps_cli_client c = {0};
    if ((rc = ps_cli_client_open(&c, "set", &args, text_formats)) != 0) {
        json_decref(value);
        return rc;
    }
    json_t *body = json_pack("{s:s, s:o}", "path", path, "value", value);
    json_t *reply = NULL;
    rc = ps_cli_call(&c, "set", body, &reply, NULL, 0);
    json_decref(body);
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

static const char create_usage[] =
    "usage: poolsched create TYPE [PATH] [--attributes YSON] [-i|--ignore-existing]\n"
    "\n"
    "Creates a pool (TYPE scheduler_pool) or a pool tree (TYPE scheduler_pool_tree), as yt does.\n"
    "A pool is named by PATH //sys/pool_trees/TREE/.../NAME or by the attributes name,\n"
    "pool_tree and parent_name; other attributes are applied with the creation, atomically.\n"
    "A pool tree takes its config under config (as yt) or flat ({name=gpu; nodes_filter=gpu}).\n"
    "  poolsched create scheduler_pool_tree --attributes '{name=gpu; config={nodes_filter=gpu}}'\n"
    "  poolsched create scheduler_pool --attributes '{name=x; pool_tree=physical; "
    "parent_name=y}'\n"
    "  poolsched create scheduler_pool //sys/pool_trees/physical/research --attributes "
    "'{weight=2}'\n"
    "  -i, --ignore-existing   succeed when the object exists already\n";

int ps_cmd_create(int argc, char **argv)
{
    struct ps_cli_args args;
    int rc = parse("create", argc, argv, create_opts, 1, 2, create_usage, &args);
    if (rc >= 0)
        return rc;
    const char *type = ps_cli_args_positional(&args, 0);
    const char *path = ps_cli_args_positional(&args, 1);
    if (path && (rc = check_path("create", path)) != 0)
        return rc;
    json_t *attributes = NULL;
    const char *attr_text = ps_cli_args_get(&args, "--attributes");
    if (attr_text) {
        struct ps_error err;
        ps_error_init(&err);
        if (ps_cli_parse_value(attr_text, "--attributes", &attributes, &err) != 0) {
            ps_cli_error("create", "%s", err.msg);
            return 2;
        }
        if (!json_is_object(attributes)) {
            json_decref(attributes);
            return ps_cli_usage_error("create", "--attributes: must be a map such as "
                                      "'{name=x; pool_tree=physical}'");
        }
    }
    if (!path && !attributes)
        return ps_cli_usage_error("create", "give a PATH or --attributes with a name");
    struct ps_cli_client c = {0};
    if ((rc = ps_cli_client_open(&c, "create", &args, text_formats)) != 0) {
        json_decref(attributes);
        return rc;
    }
    json_t *body = json_pack("{s:s, s:b}", "type", type, "ignore_existing",
                             ps_cli_args_has(&args, "--ignore-existing"));
    if (body && path)
        json_object_set_new(body, "path", json_string(path));
    if (body && attributes)
        json_object_set_new(body, "attributes", json_incref(attributes));
    json_decref(attributes);
    if (!body) {
        ps_cli_client_close(&c);
        ps_cli_error("create", "TYPE: \"%.60s\" is not valid UTF-8", type);
        return 2;
    }
    json_t *reply = NULL;
    rc = ps_cli_call(&c, "create", body, &reply, NULL, 0);
    json_decref(body);
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}
