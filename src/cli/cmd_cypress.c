/* cmd_cypress.c — `poolsched get|set|list|create|remove|exists`: the Cypress-like tree of pool
 * trees and pools, spelled as `yt` users spell it (docs/api.md, "Cypress-like tree"). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_client.h"
#include "cli/commands.h"
#include "core/pool_config.h"
#include "core/strmap.h"
#include "io/textbuf.h"
#include "io/tree_order.h"
#include "io/ypath.h"

#define MAX_STDIN_BYTES ((size_t)16 << 20)

static const char *const value_formats[] = {"yson", "json", NULL};
static const char *const text_formats[] = {"text", "json", "yson", NULL};

static const struct ps_cli_opt path_opts[] = {PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};
static const struct ps_cli_opt set_opts[] = {
    {"--dry-run", 0, false, false}, PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};
static const struct ps_cli_opt remove_opts[] = {
    {"--force", 'f', false, false}, {"--dry-run", 0, false, false}, PS_CLI_COMMON_OPTS,
    {NULL, 0, false, false}};
static const struct ps_cli_opt create_opts[] = {
    {"--attributes", 0, true, false}, {"--ignore-existing", 'i', false, false},
    {"--dry-run", 0, false, false}, PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};

/* ---- dry runs: the reply as a table ------------------------------------------------------ */

/* A number of one side at key (a path of object keys), or NAN when absent. */
static double side_num(const json_t *side, const char *k1, const char *k2)
{
    const json_t *v = json_object_get(side, k1);
    if (k2)
        v = json_object_get(v, k2);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "x" when both sides agree, "x -> y" when not, "-" for a missing side. */
static void cell(char *buf, size_t size, const char *fmt, double before, double after)
{
    char b[32] = "-", a[32] = "-";
    if (!isnan(before))
        snprintf(b, sizeof b, fmt, before);
    if (!isnan(after))
        snprintf(a, sizeof a, fmt, after);
    if (strcmp(a, b) == 0)
        snprintf(buf, size, "%s", a);
    else
        snprintf(buf, size, "%s -> %s", b, a);
}

static void cell_str(char *buf, size_t size, const json_t *before, const json_t *after,
                     const char *key)
{
    const char *b = json_string_value(json_object_get(before, key));
    const char *a = json_string_value(json_object_get(after, key));
    if (!b && !a)
        snprintf(buf, size, "-");
    else if (b && a && strcmp(a, b) == 0)
        snprintf(buf, size, "%s", a);
    else
        snprintf(buf, size, "%s -> %s", b ? b : "-", a ? a : "-");
}

/* One row: the element's kind and name indented by depth, then both sides of each value. */
static void dry_row(const char *kind, const char *name, const json_t *d, int depth, int width)
{
    const json_t *b = json_object_get(d, "before"), *a = json_object_get(d, "after");
    char total[48], strong[48], integral[48], wp[48], weight[48], cpu[48], starv[80];
    cell(total, sizeof total, "%.4f", side_num(b, "fair_share", "total"),
         side_num(a, "fair_share", "total"));
    cell(strong, sizeof strong, "%.4f", side_num(b, "fair_share", "strong_guarantee"),
         side_num(a, "fair_share", "strong_guarantee"));
    cell(integral, sizeof integral, "%.4f", side_num(b, "fair_share", "integral_guarantee"),
         side_num(a, "fair_share", "integral_guarantee"));
    cell(wp, sizeof wp, "%.4f", side_num(b, "fair_share", "weight_proportional"),
         side_num(a, "fair_share", "weight_proportional"));
    cell(weight, sizeof weight, "%g", side_num(b, "weight", NULL), side_num(a, "weight", NULL));
    cell(cpu, sizeof cpu, "%g", side_num(b, "resource_limits", "cpu"),
         side_num(a, "resource_limits", "cpu"));
    cell_str(starv, sizeof starv, b, a, "starvation_status");
    char label[400];
    snprintf(label, sizeof label, "%*s%s %s%s%s", 2 * depth, "", kind, name,
             json_is_null(b) ? " (new)" : "", json_is_null(a) ? " (gone)" : "");
    printf("%c %-*s %-18s %-18s %-18s %-18s %-10s %-14s %s\n",
           json_is_true(json_object_get(d, "changed")) ? '*' : ' ', width, label, total, strong,
           integral, wp, weight, cpu, starv);
}

/* The parent of a diff entry: a pool's "parent", an operation's "pool", after the change (or
 * before it, for what the change removes). */
static const char *dry_parent(const json_t *d, const char *key)
{
    const char *p = json_string_value(json_object_get(json_object_get(d, "after"), key));
    return p ? p : json_string_value(json_object_get(json_object_get(d, "before"), key));
}

#define DRY_INDENT_MAX 24   /* levels of indentation shown, as fair-share --format table */

/* The pools and operations as the tree they form (tree_order.h, the order of fair-share
 * --format table): each pool above its children and operations, indented by depth. */
static void dry_rows(const json_t *pools, const json_t *ops)
{
    int n = (int)(json_object_size(pools) + json_object_size(ops));
    const char **names = calloc((size_t)n + 1, sizeof *names);
    const json_t **diffs = calloc((size_t)n + 1, sizeof *diffs);
    int *parent = calloc((size_t)n + 1, sizeof *parent);
    int *order = calloc((size_t)n + 1, sizeof *order);
    int *depth = calloc((size_t)n + 1, sizeof *depth);
    struct ps_strmap index;   /* pool name -> row + 1 */
    ps_strmap_init(&index);
    bool ok = names && diffs && parent && order && depth;
    int pool_count = 0, i = 0;
    const char *name;
    json_t *d;
    json_object_foreach((json_t *)pools, name, d) {
        if (!ok)
            break;
        names[i] = name;
        diffs[i] = d;
        ok = ps_strmap_put(&index, name, (void *)(intptr_t)(i + 1)) == 0;
        i++;
    }
    pool_count = i;
    json_object_foreach((json_t *)ops, name, d) {
        if (!ok)
            break;
        names[i] = name;
        diffs[i] = d;
        i++;
    }
    for (int k = 0; ok && k < n; k++) {
        const char *p = dry_parent(diffs[k], k < pool_count ? "parent" : "pool");
        parent[k] = p ? (int)(intptr_t)ps_strmap_get(&index, p) - 1 : -1;
    }
    if ((!ok || ps_tree_order(n, parent, order, depth) != 0) && order && depth) {
        for (int k = 0; k < n; k++) {   /* out of memory: flat */
            order[k] = k;
            depth[k] = 0;
        }
    }
    int width = 42;
    for (int k = 0; k < n && names && depth; k++) {
        int shown = depth[k] < DRY_INDENT_MAX ? depth[k] : DRY_INDENT_MAX;
        int w = 2 * shown + (int)strlen(names[k]) + 5;   /* "pool " */
        if (w > width)
            width = w < 80 ? w : 80;
    }
    printf("  %-*s %-18s %-18s %-18s %-18s %-10s %-14s %s\n", width, "POOL / OPERATION",
           "FAIR SHARE", "STRONG", "INTEGRAL", "WEIGHT-PROP.", "WEIGHT", "CPU LIMIT",
           "STARVATION");
    for (int k = 0; names && diffs && order && depth && k < n; k++) {
        int e = order[k];
        int shown = depth[e] < DRY_INDENT_MAX ? depth[e] : DRY_INDENT_MAX;
        dry_row(e < pool_count ? "pool" : "op", names[e], diffs[e], shown, width);
    }
    ps_strmap_release(&index);
    free(names);
    free(diffs);
    free(parent);
    free(order);
    free(depth);
}

static void print_dry_run(const char *what, const json_t *reply)
{
    printf("dry run of %s in pool tree %s: nothing was applied\n", what,
           json_string_value(json_object_get(reply, "pool_tree")));
    dry_rows(json_object_get(reply, "pools"), json_object_get(reply, "operations"));
    const json_t *alerts = json_object_get(json_object_get(reply, "alerts"), "after");
    size_t i;
    json_t *al;
    json_array_foreach(alerts, i, al)
        printf("alert after the change: %s\n", json_string_value(json_object_get(al, "message")));
}

/* Sends body (stolen) as api; with --dry-run, adds dry_run and prints the diff (a table, or
 * the reply in the --format asked for). */
static int send_change(const char *command, const struct ps_cli_args *args,
                       const char *const *formats, json_t *body, const char *what)
{
    if (!ps_cli_args_has(args, "--dry-run"))
        return ps_cli_send(command, args, formats, command, body);
    struct ps_cli_client c = {0};
    int rc = ps_cli_client_open(&c, command, args, formats);
    if (rc != 0) {
        json_decref(body);
        return rc;
    }
    json_object_set_new(body, "dry_run", json_true());
    json_t *reply = NULL;
    rc = ps_cli_call(&c, command, body, &reply, NULL, 0);
    json_decref(body);
    if (rc == 0) {
        if (c.format == PS_CLI_FORMAT_TEXT)
            print_dry_run(what, reply);
        else
            rc = ps_cli_print_value(&c, reply);
    }
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
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
    int rc = ps_cli_parse_command(command, argc, argv, opts, 1, 1, "PATH", usage, args);
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

/* What a command needs in the reply's "value". */
enum value_kind { ANY_VALUE, LIST_VALUE, BOOLEAN_VALUE };

/* path_request for get, list and exists ({"path"} -> {"value"}, the API named as the command):
 * *value receives the reply's "value" (borrowed from *reply), or NULL after --help or an error.
 * A missing or mistyped value is reported here. Returns the exit code. */
static int path_value(const char *command, int argc, char **argv, const char *const *formats,
                      const char *usage, enum value_kind kind, struct ps_cli_client *c,
                      json_t **reply, json_t **value)
{
    struct ps_cli_args args;
    *value = NULL;
    int rc = path_request(command, command, argc, argv, path_opts, formats, usage, &args, c,
                          reply, 0, NULL);
    if (rc != 0 || !*reply)
        return rc;
    json_t *v = json_object_get(*reply, "value");
    if (kind == ANY_VALUE && !v) {
        ps_cli_error(command, "the reply has no \"value\"");
        return 1;
    }
    if (kind == LIST_VALUE && !json_is_array(v)) {
        ps_cli_error(command, "the reply has no \"value\" list");
        return 1;
    }
    if (kind == BOOLEAN_VALUE && !json_is_boolean(v)) {
        ps_cli_error(command, "the reply has no boolean \"value\"");
        return 1;
    }
    *value = v;
    return 0;
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
    struct ps_cli_client c = {0};
    json_t *reply = NULL, *value;
    int rc = path_value("get", argc, argv, value_formats, get_usage, ANY_VALUE, &c, &reply,
                        &value);
    if (rc == 0 && value)   /* no value after --help */
        rc = ps_cli_print_value(&c, value);
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
    struct ps_cli_client c = {0};
    json_t *reply = NULL, *value;
    int rc = path_value("list", argc, argv, text_formats, list_usage, LIST_VALUE, &c, &reply,
                        &value);
    if (rc == 0 && value) {   /* no value after --help */
        if (c.format != PS_CLI_FORMAT_TEXT) {
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
    struct ps_cli_client c = {0};
    json_t *reply = NULL, *value;
    int rc = path_value("exists", argc, argv, text_formats, exists_usage, BOOLEAN_VALUE, &c,
                        &reply, &value);
    if (rc == 0 && value) {   /* no value after --help */
        if (c.format != PS_CLI_FORMAT_TEXT) {
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
    "usage: poolsched remove PATH [-f|--force] [--dry-run]\n"
    "\n"
    "Removes the pool or pool tree at PATH. The scheduler refuses a pool that has child pools or\n"
    "operations, and a tree that still has pools.\n"
    "  -f, --force   succeed when PATH does not exist\n"
    "  --dry-run     validate and show the fair share diff, remove nothing\n";

int ps_cmd_remove(int argc, char **argv)
{
    struct ps_cli_args args;
    struct ps_cli_client c = {0};
    json_t *reply = NULL;
    long status = 0;
    /* parse first to learn --force, which decides whether a 404 is quiet */
    struct ps_error err;
    ps_error_init(&err);
    bool parsed = ps_cli_args_parse(argc - 1, argv + 1, remove_opts, &args, &err) == 0;
    bool force = parsed && ps_cli_args_has(&args, "--force");
    if (parsed && ps_cli_args_has(&args, "--dry-run")) {
        int rc = ps_cli_parse_command("remove", argc, argv, remove_opts, 1, 1, "PATH",
                                      remove_usage, &args);
        if (rc >= 0)
            return rc;
        const char *path = ps_cli_args_positional(&args, 0);
        if ((rc = check_path("remove", path)) != 0)
            return rc;
        char what[1200];
        snprintf(what, sizeof what, "remove %.1024s", path);
        return send_change("remove", &args, text_formats, json_pack("{s:s}", "path", path), what);
    }
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

/* The attribute key a set of path writes on a pool (`//sys/pool_trees/T/P.../@key[/...]` or
 * `//sys/pools/P.../@key[/...]`) into key; false for any other path (a tree, a node). */
static bool pool_attribute_key(const char *path, char *key, size_t size)
{
    const char *at = strstr(path, "/@");
    const char *node = NULL;
    if (strncmp(path, "//sys/pools/", 12) == 0)
        node = path + 12;
    else if (strncmp(path, "//sys/pool_trees/", 17) == 0 && (node = strchr(path + 17, '/')))
        node++;
    if (!at || !node || node >= at + 1)
        return false;
    snprintf(key, size, "%.*s", (int)strcspn(at + 2, "/"), at + 2);
    return key[0] != '\0';
}

/* A key that is no pool setting is stored as a custom attribute, as upstream does; say so, as
 * a misspelt setting would otherwise pass unnoticed. */
static void warn_custom_attribute(const char *path)
{
    char key[256];
    if (pool_attribute_key(path, key, sizeof key) && !ps_pool_config_is_setting(key) &&
        strcmp(key, "name") != 0 && strcmp(key, "parent_name") != 0)
        fprintf(stderr,
                "poolsched set: warning: \"%s\" is not a pool setting; stored as a custom "
                "attribute; the scheduler does not read it\n",
                key);
}

static const char set_usage[] =
    "usage: poolsched set PATH [VALUE] [--dry-run]\n"
    "\n"
    "Sets the attribute at PATH to VALUE, YSON or JSON text (read from standard input when\n"
    "VALUE is not given). PATH must address an attribute or a key inside one.\n"
    "  poolsched set //sys/pool_trees/physical/research/@weight 2\n"
    "  poolsched set //sys/pools/root-pool/burst/@integral_guarantees \\\n"
    "      '{guarantee_type=burst; resource_flow={cpu=1000}; "
    "burst_guarantee_resources={cpu=2000}}'\n"
    "  poolsched set //sys/pools/root-pool/burst/@integral_guarantees/resource_flow "
    "'{cpu=100}'\n"
    "  --dry-run   validate and compute the fair share on a copy of the tree; print the diff\n"
    "              (pools and operations, before -> after; * marks a change), apply nothing\n";

int ps_cmd_set(int argc, char **argv)
{
    struct ps_cli_args args;
    int rc = ps_cli_parse_command("set", argc, argv, set_opts, 1, 2, "PATH", set_usage, &args);
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
    json_t *body = json_pack("{s:s, s:o}", "path", path, "value", value);
    char what[1200];
    snprintf(what, sizeof what, "set %.1024s", path);
    rc = send_change("set", &args, text_formats, body, what);
    if (rc == 0)
        warn_custom_attribute(path);
    return rc;
}

static const char create_usage[] =
    "usage: poolsched create TYPE [PATH] [--attributes YSON] [-i|--ignore-existing]\n"
    "\n"
    "Creates a pool (TYPE scheduler_pool) or a pool tree (TYPE scheduler_pool_tree), as yt does;\n"
    "TYPE user or group creates a user or a group (//sys/users/NAME, //sys/groups/NAME).\n"
    "A pool is named by PATH //sys/pool_trees/TREE/.../NAME or by the attributes name,\n"
    "pool_tree and parent_name; other attributes are applied with the creation, atomically.\n"
    "A pool tree takes its config under config (as yt) or flat ({name=gpu; nodes_filter=gpu}).\n"
    "  poolsched create scheduler_pool_tree --attributes '{name=gpu; config={nodes_filter=gpu}}'\n"
    "  poolsched create scheduler_pool --attributes '{name=x; pool_tree=physical; "
    "parent_name=y}'\n"
    "  poolsched create scheduler_pool //sys/pool_trees/physical/research --attributes "
    "'{weight=2}'\n"
    "  -i, --ignore-existing   succeed when the object exists already\n"
    "  --dry-run               a pool: validate and show the fair share diff, create nothing\n";

int ps_cmd_create(int argc, char **argv)
{
    struct ps_cli_args args;
    int rc = ps_cli_parse_command("create", argc, argv, create_opts, 1, 2, "TYPE", create_usage,
                                  &args);
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
    if (ps_cli_args_has(&args, "--dry-run")) {
        ps_cli_client_close(&c);
        char what[1200];
        snprintf(what, sizeof what, "create %.1024s", path ? path : "scheduler_pool");
        return send_change("create", &args, text_formats, body, what);
    }
    return ps_cli_call_close(&c, "create", body);
}

static const struct ps_cli_opt transfer_opts[] = {
    {"--source-pool", 0, true, false}, {"--destination-pool", 0, true, false},
    {"--pool-tree", 0, true, false}, {"--resource-delta", 0, true, false}, PS_CLI_COMMON_OPTS,
    {NULL, 0, false, false}};

static const char transfer_usage[] =
    "usage: poolsched transfer-pool-resources --source-pool POOL --destination-pool POOL\n"
    "           --resource-delta DELTA [--pool-tree TREE]\n"
    "\n"
    "Moves guarantees and operation counts from one pool to another (as yt\n"
    "transfer-pool-resources): DELTA (YSON or JSON) holds any of strong_guarantee_resources,\n"
    "resource_flow, burst_guarantee_resources, max_operation_count and\n"
    "max_running_operation_count. They leave the pools from the source up to the lowest common\n"
    "ancestor and reach those from the destination up to it; all or nothing (docs/api.md).\n"
    "  poolsched transfer-pool-resources --source-pool a --destination-pool b \\\n"
    "      --resource-delta '{strong_guarantee_resources={cpu=2}; max_operation_count=5}'\n"
    "  --pool-tree TREE   the tree (default: the default tree)\n";

int ps_cmd_transfer_pool_resources(int argc, char **argv)
{
    static const char cmd[] = "transfer-pool-resources";
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, transfer_opts, 0, 0, "", transfer_usage, &args);
    if (rc >= 0)
        return rc;
    const char *src = ps_cli_args_get(&args, "--source-pool");
    const char *dst = ps_cli_args_get(&args, "--destination-pool");
    const char *delta_text = ps_cli_args_get(&args, "--resource-delta");
    const char *tree = ps_cli_args_get(&args, "--pool-tree");
    if (!src || !dst || !delta_text)
        return ps_cli_usage_error(cmd, "--source-pool, --destination-pool and --resource-delta "
                                  "are required");
    json_t *delta = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_cli_parse_value(delta_text, "--resource-delta", &delta, &err) != 0) {
        ps_cli_error(cmd, "%s", err.msg);
        return 2;
    }
    json_t *body = json_pack("{s:s, s:s, s:o}", "source_pool", src, "destination_pool", dst,
                             "resource_delta", delta);
    if (body && tree)
        json_object_set_new(body, "pool_tree", json_string(tree));
    if (!body) {
        ps_cli_error(cmd, "the pool names must be valid UTF-8");
        return 2;
    }
    return ps_cli_send(cmd, &args, text_formats, "transfer_pool_resources", body);
}

static const char move_usage[] =
    "usage: poolsched move SOURCE_PATH DESTINATION_PATH\n"
    "\n"
    "Moves a pool within its tree, to another parent, under another name, or both (as yt move):\n"
    "  poolsched move //sys/pool_trees/physical/a/x //sys/pool_trees/physical/b/x\n"
    "  poolsched move //sys/pools/x //sys/pools/y        # a rename\n";

int ps_cmd_move(int argc, char **argv)
{
    struct ps_cli_args args;
    int rc = ps_cli_parse_command("move", argc, argv, path_opts, 2, 2, "SOURCE_PATH", move_usage,
                                  &args);
    if (rc >= 0)
        return rc;
    const char *from = ps_cli_args_positional(&args, 0);
    const char *to = ps_cli_args_positional(&args, 1);
    if ((rc = check_path("move", from)) != 0 || (rc = check_path("move", to)) != 0)
        return rc;
    json_t *body = json_pack("{s:s, s:s}", "source_path", from, "destination_path", to);
    if (!body) {
        ps_cli_error("move", "the paths must be valid UTF-8");
        return 2;
    }
    return ps_cli_send("move", &args, text_formats, "move", body);
}
