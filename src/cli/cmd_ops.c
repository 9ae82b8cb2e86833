/* cmd_ops.c — operations from the command line: vanilla, start-op, list-operations,
 * get-operation, abort-op, suspend-op, resume-op, complete-op, update-op-parameters, list-jobs,
 * get-job-stderr (docs/api.md, "Operations"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_client.h"
#include "cli/cli_event_log.h"
#include "cli/cli_format.h"
#include "cli/cli_vanilla.h"
#include "cli/commands.h"
#include "core/fair_share.h"
#include "io/event_page.h"
#include "io/event_record.h"
#include "io/ypath.h"
#include "io/yson.h"
#include "platform/file.h"
#include "platform/clock.h"
#include "platform/wall_clock.h"

#define STR_(x) #x
#define STR(x) STR_(x)   /* a define's value as text */

#define WAIT_POLL_MS 500
#define MAX_SPEC_BYTES ((size_t)16 << 20)

static const char *const text_formats[] = {"text", "json", "yson", NULL};

/* An id from the command line: printable, at most 256 bytes. */
static int check_id(const char *command, const char *what, const char *id)
{
    size_t len = strlen(id);
    bool ok = len > 0 && len <= 256;
    for (const char *p = id; *p; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
            ok = false;
    if (!ok)
        return ps_cli_usage_error(command, "%s: \"%.60s\" is not an id", what, id);
    return 0;
}

/* Prints the final state; the exit code says how the operation ended. */
static int report_final(const struct ps_cli_client *c, const json_t *op)
{
    const char *id = json_string_value(json_object_get(op, "id"));
    const char *state = json_string_value(json_object_get(op, "state"));
    const char *error = json_string_value(json_object_get(op, "error"));
    if (c->format == PS_CLI_FORMAT_TEXT)
        printf("operation %s %s\n", id ? id : "?", state ? state : "?");
    else if (ps_cli_print_value(c, op) != 0)   /* scripts get the whole final operation */
        return 1;
    if (error)
        ps_cli_error("operation", "%s", error);
    return state && strcmp(state, "completed") == 0 ? 0 : 1;
}

static bool finished(const char *state)
{
    return state && (strcmp(state, "completed") == 0 || strcmp(state, "failed") == 0 ||
                     strcmp(state, "aborted") == 0);
}

/* The progress line --wait prints on a terminal, as the yt CLI does:
 * "( 0 min) operation ID running: running=2 completed=1 pending=1 failed=0 aborted=0 total=4". */
static void progress_line(const json_t *op, const char *id, int64_t elapsed_ms, char *buf,
                          size_t size)
{
    const json_t *p = json_object_get(op, "progress");
    const char *state = json_string_value(json_object_get(op, "state"));
    snprintf(buf, size,
             "(%2lld min) operation %s %s: running=%lld completed=%lld pending=%lld failed=%lld "
             "aborted=%lld total=%lld",
             (long long)(elapsed_ms / 60000), id, state ? state : "?",
             (long long)json_integer_value(json_object_get(p, "running")),
             (long long)json_integer_value(json_object_get(p, "completed")),
             (long long)json_integer_value(json_object_get(p, "pending")),
             (long long)json_integer_value(json_object_get(p, "failed")),
             (long long)json_integer_value(json_object_get(p, "aborted")),
             (long long)json_integer_value(json_object_get(p, "total")));
}

/* Polls get_operation until the operation ends. On a terminal (stderr), a progress line is
 * printed whenever the state or the job counts change, and at least once a minute. */
static int wait_for(struct ps_cli_client *c, const char *id)
{
    json_t *body = json_pack("{s:s}", "operation_id", id);
    bool tty = isatty(STDERR_FILENO);
    int64_t started_ns = ps_clock_monotonic_ns(), last_print_ns = 0;
    char line[512], last[512] = "";
    for (;;) {
        json_t *op = NULL;
        if (ps_cli_call(c, "get_operation", body, &op, NULL, 0) != 0) {
            json_decref(body);
            return 1;
        }
        int64_t now_ns = ps_clock_monotonic_ns();
        if (tty) {
            progress_line(op, id, (now_ns - started_ns) / 1000000, line, sizeof line);
            /* the elapsed minutes lead the line: compare what follows them */
            const char *what = strchr(line, ')'), *was = strchr(last, ')');
            if (!was || strcmp(what, was) != 0 || now_ns - last_print_ns >= 60000000000LL) {
                fprintf(stderr, "%s\n", line);
                memcpy(last, line, sizeof last);
                last_print_ns = now_ns;
            }
        }
        if (finished(json_string_value(json_object_get(op, "state")))) {
            int rc = report_final(c, op);
            json_decref(op);
            json_decref(body);
            return rc;
        }
        json_decref(op);
        ps_sleep_ms(WAIT_POLL_MS);
    }
}

/* An operation whose pool is no pool of a tree runs there in an ephemeral pool of that name
 * under the user's default parent pool (upstream's behaviour, kept), which also counts against
 * the tree's max_ephemeral_pool_per_user. The submitter is told on stderr, once per tree. */
static void warn_ephemeral(struct ps_cli_client *c, const char *command, const char *id,
                           const char *pool)
{
    json_t *body = json_pack("{s:s}", "operation_id", id), *op = NULL;
    if (ps_cli_call(c, "get_operation", body, &op, NULL, 0) != 0) {
        json_decref(body);
        return;
    }
    json_decref(body);
    const char *tree;
    json_t *placed;
    json_object_foreach(json_object_get(op, "pool_per_tree"), tree, placed) {
        if (!json_is_string(placed) || strcmp(json_string_value(placed), pool) != 0)
            continue;   /* e.g. the user's subpool P$user of a pool with ephemeral subpools */
        char *etree = NULL, *epool = NULL, path[1024];
        struct ps_error err = {0};
        json_t *info = NULL;
        long status = 0;
        if (ps_ypath_escape(tree, &etree, &err) == 0 && ps_ypath_escape(pool, &epool, &err) == 0) {
            snprintf(path, sizeof path, "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_"
                     "tree/%s/fair_share_info/pools/%s", etree, epool);
            body = json_pack("{s:s}", "path", path);
            if (ps_cli_call(c, "get", body, &info, &status, 404) != 0)
                info = NULL;
            json_decref(body);
        }
        free(etree);
        free(epool);
        const json_t *v = json_object_get(info, "value");
        /* gone already: an ephemeral pool goes with its last operation (a job that ended at once) */
        bool gone = !info && status == 404;
        if (json_is_true(json_object_get(v, "is_ephemeral")) || gone) {
            const char *parent = json_string_value(json_object_get(v, "parent"));
            const char *user = json_string_value(json_object_get(op, "user"));
            char under[300] = "";
            if (parent)
                snprintf(under, sizeof under, " under \"%.256s\",", parent);
            fprintf(stderr, "warning: %s: pool \"%s\" does not exist in pool tree \"%s\": the "
                    "operation runs in the ephemeral pool \"%s\"%s the default parent pool of "
                    "user \"%s\" (it counts against max_ephemeral_pool_per_user)\n",
                    command, pool, tree, pool, parent ? under : " under", user ? user : "?");
        }
        json_decref(info);
    }
    json_decref(op);
}

/* start_op with spec (stolen), prints the id; with wait, waits for the end. */
static int start(const char *command, const struct ps_cli_args *args, const char *type,
                 json_t *spec)
{
    struct ps_cli_client c = {0};
    int rc = ps_cli_client_open(&c, command, args, text_formats);
    if (rc != 0) {
        json_decref(spec);
        return rc;
    }
    const char *p = json_string_value(json_object_get(spec, "pool"));
    char *pool = p ? strdup(p) : NULL;
    json_t *body = json_pack("{s:s, s:o}", "operation_type", type, "spec", spec);
    json_t *reply = NULL;
    rc = body ? ps_cli_call(&c, "start_op", body, &reply, NULL, 0)
              : (ps_cli_error(command, "out of memory"), 1);
    json_decref(body);
    const char *id = json_string_value(json_object_get(reply, "operation_id"));
    if (rc == 0 && !id) {
        ps_cli_error(command, "the reply has no \"operation_id\"");
        rc = 1;
    }
    if (rc == 0) {
        if (c.format == PS_CLI_FORMAT_TEXT)
            printf("%s\n", id);
        else
            rc = ps_cli_print_value(&c, reply);
        fflush(stdout);
        if (pool)
            warn_ephemeral(&c, command, id, pool);
    }
    free(pool);
    if (rc == 0 && ps_cli_args_has(args, "--wait"))
        rc = wait_for(&c, id);
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

static const char vanilla_usage[] =
    "usage: poolsched vanilla --job-count N --command CMD [--pool P] [options]\n"
    "\n"
    "Starts a vanilla operation of one task and prints its id.\n"
    "  --pool P                 the pool (default: the user's ephemeral pool)\n"
    "  --pool-trees A,B         the pool trees (default: the default tree)\n"
    "  --job-count N            jobs of the task (1..1000000)\n"
    "  --command CMD            the shell command each job runs\n"
    "  --cpu C                  cores per job, at most 2 decimals (default 1)\n"
    "  --memory SIZE            memory limit per job: bytes or K/M/G/T, binary (default 512M)\n"
    "  --tmpfs SIZE             tmpfs per job\n"
    "  --env NAME=VALUE         environment of the jobs (repeatable)\n"
    "  --task-name NAME         the task's name (default task)\n"
    "  --weight W               the operation's weight, in [" STR(PS_WEIGHT_MIN) ", "
    STR(PS_WEIGHT_MAX) "]\n"
    "  --max-share-ratio R      at most this share of the pool tree, in [0, 1]\n"
    "  --resource-limits YSON   e.g. '{cpu=10; user_slots=20}'\n"
    "  --spec YSON              a base spec; the flags above are merged over it\n"
    "  --wait                   wait for the end: exit 0 when completed, 1 when failed or\n"
    "                           aborted, printing the final state (with --format json|yson\n"
    "                           the final operation)\n"
    "  --format text|json|yson  text prints the id only\n"
    "Example:\n"
    "  poolsched vanilla --pool research --job-count 10 --command 'sleep 60' --cpu 2 "
    "--memory 2G\n";

static const struct ps_cli_opt vanilla_opts[] = {
    PS_CLI_VANILLA_OPTS, {"--wait", 0, false, false}, PS_CLI_COMMON_OPTS,
    {NULL, 0, false, false}};

int ps_cmd_vanilla(int argc, char **argv)
{
    struct ps_cli_args args;
    int rc = ps_cli_parse_command("vanilla", argc, argv, vanilla_opts, 0, 0, "", vanilla_usage,
                                  &args);
    if (rc >= 0)
        return rc;
    json_t *spec = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_cli_vanilla_spec(&args, &spec, &err) != 0) {
        ps_cli_error("vanilla", "%s", err.msg);
        return err.code == PS_EINVAL ? 2 : 1;
    }
    return start("vanilla", &args, "vanilla", spec);
}

static const char start_op_usage[] =
    "usage: poolsched start-op [TYPE] --spec FILE [--wait]\n"
    "\n"
    "Starts an operation of TYPE (default vanilla) with the spec in FILE (YSON or JSON; '-'\n"
    "reads standard input) and prints its id. --wait as for vanilla.\n";

static const struct ps_cli_opt start_op_opts[] = {
    {"--spec", 0, true, false}, {"--wait", 0, false, false}, PS_CLI_COMMON_OPTS,
    {NULL, 0, false, false}};

int ps_cmd_start_op(int argc, char **argv)
{
    struct ps_cli_args args;
    int rc = ps_cli_parse_command("start-op", argc, argv, start_op_opts, 0, 1, "", start_op_usage,
                                  &args);
    if (rc >= 0)
        return rc;
    const char *type = ps_cli_args_positional(&args, 0);
    if (!type)
        type = "vanilla";
    if ((rc = check_id("start-op", "TYPE", type)) != 0)
        return rc;
    const char *file = ps_cli_args_get(&args, "--spec");
    if (!file)
        return ps_cli_usage_error("start-op", "--spec FILE is required");
    char *text = NULL;
    size_t len = 0;
    struct ps_error err;
    ps_error_init(&err);
    rc = ps_file_read(strcmp(file, "-") == 0 ? "/dev/stdin" : file, &text, &len, &err);
    if (rc != 0) {
        ps_cli_error("start-op", "--spec: %s", err.msg);
        return rc == PS_ENOENT ? 2 : 1;
    }
    json_t *spec = NULL;
    rc = len > MAX_SPEC_BYTES ? ps_error_set(&err, PS_EINVAL, "larger than %zu bytes",
                                             MAX_SPEC_BYTES)
                              : ps_cli_parse_value(text, file, &spec, &err);
    free(text);
    if (rc == 0 && !json_is_object(spec))
        rc = ps_error_set(&err, PS_EINVAL, "%s: the spec must be a map", file);
    if (rc != 0) {
        json_decref(spec);
        ps_cli_error("start-op", "--spec: %s", err.msg);
        return 2;
    }
    return start("start-op", &args, type, spec);
}

static const char list_operations_usage[] =
    "usage: poolsched list-operations [--pool P] [--user U] [--state S] [--limit N]\n"
    "                                 [--format table|json|yson]\n"
    "\n"
    "Lists operations, newest first (at most 100 unless --limit), as a table: id, state, user,\n"
    "pool, progress (completed/total), start time (UTC), pending reason.\n";

static const struct ps_cli_opt list_operations_opts[] = {
    {"--pool", 0, true, false}, {"--user", 0, true, false}, {"--state", 0, true, false},
    {"--limit", 0, true, false}, PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};

static const char *const table_formats[] = {"table", "json", "yson", NULL};

/* Adds option flag's value as key of body, as a string, when given. */
static int add_filter(const struct ps_cli_args *args, const char *command, const char *flag,
                      const char *key, json_t *body)
{
    const char *v = ps_cli_args_get(args, flag);
    if (!v)
        return 0;
    json_t *s = json_string(v);
    if (!s || v[0] == '\0') {
        json_decref(s);
        return ps_cli_usage_error(command, "%s: must be a non-empty UTF-8 name", flag);
    }
    json_object_set_new(body, key, s);
    return 0;
}

/* Adds option flag's value as key of body, as an integer within [min, max], when given. */
static int add_int(const struct ps_cli_args *args, const char *command, const char *flag,
                   const char *key, int64_t min, int64_t max, json_t *body)
{
    const char *v = ps_cli_args_get(args, flag);
    if (!v)
        return 0;
    int64_t n;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_cli_parse_int(v, flag, min, max, &n, &err) != 0)
        return ps_cli_usage_error(command, "%s", err.msg);
    json_object_set_new(body, key, json_integer(n));
    return 0;
}

/* Prints text (malloc'd, taken; NULL means it could not be made) to stdout. Returns the exit
 * code. */
static int put_text(const char *command, char *text)
{
    int rc = 0;
    if (text)
        fputs(text, stdout);
    else
        ps_cli_error(command, "out of memory"), rc = 1;
    free(text);
    return rc;
}

/* The list under key in a list command's reply (borrowed), or NULL after printing why not. */
static const json_t *reply_list(const char *command, const json_t *reply, const char *key)
{
    const json_t *list = json_object_get(reply, key);
    if (!json_is_array(list)) {
        ps_cli_error(command, "the reply has no \"%s\" list", key);
        return NULL;
    }
    return list;
}

int ps_cmd_list_operations(int argc, char **argv)
{
    const char *cmd = "list-operations";
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, list_operations_opts, 0, 0, "",
                                  list_operations_usage, &args);
    if (rc >= 0)
        return rc;
    json_t *body = json_object();
    if (!body)
        return 1;
    rc = add_filter(&args, cmd, "--pool", "pool", body);
    if (rc == 0)
        rc = add_filter(&args, cmd, "--user", "user", body);
    if (rc == 0)
        rc = add_filter(&args, cmd, "--state", "state", body);
    if (rc == 0)
        rc = add_int(&args, cmd, "--limit", "limit", 1, 100000, body);
    struct ps_cli_client c = {0};
    if (rc == 0)
        rc = ps_cli_client_open(&c, cmd, &args, table_formats);
    json_t *reply = NULL;
    if (rc == 0)
        rc = ps_cli_call(&c, "list_operations", body, &reply, NULL, 0);
    json_decref(body);
    if (rc == 0) {
        const json_t *ops = reply_list(cmd, reply, "operations");
        if (!ops)
            rc = 1;
        else if (c.format != PS_CLI_FORMAT_TEXT)
            rc = ps_cli_print_value(&c, reply);
        else
            rc = put_text(cmd, ps_cli_operations_table(ops));
    }
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

/* ---- commands on one operation ----------------------------------------------------------- */

static const struct ps_cli_opt op_opts[] = {
    {"--operation-id", 0, true, false}, PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};

/* The operation id: the first positional argument or --operation-id. Sets *id or returns the
 * exit code. */
static int operation_id(const char *command, const struct ps_cli_args *args, size_t extra_pos,
                        const char **id)
{
    const char *flag = ps_cli_args_get(args, "--operation-id");
    size_t n = ps_cli_args_positional_count(args);
    if (flag && n > extra_pos)
        return ps_cli_usage_error(command, "give the operation id once, as OPERATION_ID or "
                                  "--operation-id");
    *id = flag ? flag : ps_cli_args_positional(args, 0);
    if (!*id)
        return ps_cli_usage_error(command, "missing OPERATION_ID");
    if (n > extra_pos + (flag ? 0 : 1))
        return ps_cli_usage_error(command, "unexpected argument \"%.100s\"",
                                  ps_cli_args_positional(args, n - 1));
    return check_id(command, "OPERATION_ID", *id);
}

static const char get_operation_usage[] =
    "usage: poolsched get-operation OPERATION_ID [--format text|json|yson]\n"
    "\n"
    "Shows an operation: state, user, pools, times, progress, pending reason, error, tasks.\n"
    "json and yson print everything the scheduler knows, spec and resulting_spec included.\n";

int ps_cmd_get_operation(int argc, char **argv)
{
    const char *cmd = "get-operation";
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, op_opts, 0, 1, "OPERATION_ID",
                                  get_operation_usage, &args);
    if (rc >= 0)
        return rc;
    const char *id;
    if ((rc = operation_id(cmd, &args, 0, &id)) != 0)
        return rc;
    struct ps_cli_client c = {0};
    if ((rc = ps_cli_client_open(&c, cmd, &args, text_formats)) != 0)
        return rc;
    json_t *body = json_pack("{s:s}", "operation_id", id);
    json_t *op = NULL;
    rc = ps_cli_call(&c, "get_operation", body, &op, NULL, 0);
    json_decref(body);
    if (rc == 0 && c.format != PS_CLI_FORMAT_TEXT) {
        rc = ps_cli_print_value(&c, op);
    } else if (rc == 0) {
        rc = put_text(cmd, ps_cli_operation_block(op));
    }
    json_decref(op);
    ps_cli_client_close(&c);
    return rc;
}

/* abort-op, suspend-op, resume-op, complete-op: {"operation_id"} -> {}. */
static int simple_op(const char *cmd, const char *api, const char *what, int argc, char **argv)
{
    char usage[512];
    snprintf(usage, sizeof usage, "usage: poolsched %s OPERATION_ID\n\n%s\n", cmd, what);
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, op_opts, 0, 1, "OPERATION_ID", usage, &args);
    if (rc >= 0)
        return rc;
    const char *id;
    if ((rc = operation_id(cmd, &args, 0, &id)) != 0)
        return rc;
    return ps_cli_send(cmd, &args, text_formats, api, json_pack("{s:s}", "operation_id", id));
}

int ps_cmd_abort_op(int argc, char **argv)
{
    return simple_op("abort-op", "abort_op",
                     "Aborts the operation: its running jobs are aborted, its state becomes "
                     "aborted.", argc, argv);
}

int ps_cmd_suspend_op(int argc, char **argv)
{
    return simple_op("suspend-op", "suspend_op",
                     "Suspends the operation: no new jobs start until resume-op.", argc, argv);
}

int ps_cmd_resume_op(int argc, char **argv)
{
    return simple_op("resume-op", "resume_op", "Resumes a suspended operation.", argc, argv);
}

int ps_cmd_complete_op(int argc, char **argv)
{
    return simple_op("complete-op", "complete_op",
                     "Completes the operation now: running jobs are aborted, finished ones "
                     "count, its state becomes completed.", argc, argv);
}

static const char update_usage[] =
    "usage: poolsched update-op-parameters OPERATION_ID PARAMETERS\n"
    "\n"
    "Changes a running operation's pool, weight, resource_limits or\n"
    "scheduling_options_per_pool_tree. PARAMETERS is a YSON or JSON map:\n"
    "  poolsched update-op-parameters OP '{pool=other; weight=2}'\n"
    "  poolsched update-op-parameters OP '{scheduling_options_per_pool_tree={physical={weight=3}}}'\n";

int ps_cmd_update_op_parameters(int argc, char **argv)
{
    const char *cmd = "update-op-parameters";
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, op_opts, 1, 2, "PARAMETERS", update_usage,
                                  &args);
    if (rc >= 0)
        return rc;
    const char *id;
    if ((rc = operation_id(cmd, &args, 1, &id)) != 0)
        return rc;
    size_t n = ps_cli_args_positional_count(&args);
    const char *text = ps_cli_args_positional(&args, n - 1);
    if (n == 1 && !ps_cli_args_has(&args, "--operation-id"))
        return ps_cli_usage_error(cmd, "missing PARAMETERS");
    json_t *params = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_cli_parse_value(text, "PARAMETERS", &params, &err) != 0) {
        ps_cli_error(cmd, "%s", err.msg);
        return 2;
    }
    if (!json_is_object(params)) {
        json_decref(params);
        return ps_cli_usage_error(cmd, "PARAMETERS: must be a map such as '{weight=2}'");
    }
    json_t *body = json_pack("{s:s, s:o}", "operation_id", id, "parameters", params);
    return ps_cli_send(cmd, &args, text_formats, "update_op_parameters", body);
}

static const char list_jobs_usage[] =
    "usage: poolsched list-jobs OPERATION_ID [--state S] [--sort-field F] [--sort-order O]\n"
    "                           [--offset N] [--limit N] [--format table|json|yson]\n"
    "\n"
    "Lists the jobs of an operation: id, state, node, cpu limit/guarantee (cores), memory\n"
    "reserve/limit, duration, error or abort reason. All of them in start order unless\n"
    "--sort-field (none, type, state, start_time, finish_time, address, duration, id,\n"
    "task_name), --sort-order (ascending, descending), --offset or --limit say otherwise.\n";

static const struct ps_cli_opt list_jobs_opts[] = {
    {"--operation-id", 0, true, false}, {"--state", 0, true, false},
    {"--sort-field", 0, true, false}, {"--sort-order", 0, true, false},
    {"--offset", 0, true, false}, {"--limit", 0, true, false}, PS_CLI_COMMON_OPTS,
    {NULL, 0, false, false}};

int ps_cmd_list_jobs(int argc, char **argv)
{
    const char *cmd = "list-jobs";
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, list_jobs_opts, 0, 1, "OPERATION_ID",
                                  list_jobs_usage, &args);
    if (rc >= 0)
        return rc;
    const char *id;
    if ((rc = operation_id(cmd, &args, 0, &id)) != 0)
        return rc;
    json_t *body = json_pack("{s:s}", "operation_id", id);
    rc = add_filter(&args, cmd, "--state", "state", body);
    if (rc == 0)
        rc = add_filter(&args, cmd, "--sort-field", "sort_field", body);
    if (rc == 0)
        rc = add_filter(&args, cmd, "--sort-order", "sort_order", body);
    if (rc == 0)
        rc = add_int(&args, cmd, "--offset", "offset", 0, 1000000000000000, body);
    if (rc == 0)
        rc = add_int(&args, cmd, "--limit", "limit", 0, 1000000000000000, body);
    if (rc != 0) {
        json_decref(body);
        return rc;
    }
    struct ps_cli_client c = {0};
    if ((rc = ps_cli_client_open(&c, cmd, &args, table_formats)) != 0) {
        json_decref(body);
        return rc;
    }
    json_t *reply = NULL;
    rc = ps_cli_call(&c, "list_jobs", body, &reply, NULL, 0);
    json_decref(body);
    if (rc == 0) {
        const json_t *jobs = reply_list(cmd, reply, "jobs");
        if (!jobs)
            rc = 1;
        else if (c.format != PS_CLI_FORMAT_TEXT)
            rc = ps_cli_print_value(&c, reply);
        else
            rc = put_text(cmd, ps_cli_jobs_table(jobs, ps_wall_clock_ms()));
    }
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

static const char stderr_usage[] =
    "usage: poolsched get-job-stderr OPERATION_ID JOB_ID\n"
    "       poolsched get-job-stderr --operation-id OP --job-id JOB\n"
    "\n"
    "Prints what the job wrote to its standard error (the scheduler keeps the end of it; a\n"
    "note on stderr says when the beginning was cut).\n";

static const struct ps_cli_opt stderr_opts[] = {
    {"--operation-id", 0, true, false}, {"--job-id", 0, true, false}, PS_CLI_COMMON_OPTS,
    {NULL, 0, false, false}};

int ps_cmd_get_job_stderr(int argc, char **argv)
{
    const char *cmd = "get-job-stderr";
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, stderr_opts, 0, 2, "OPERATION_ID", stderr_usage,
                                  &args);
    if (rc >= 0)
        return rc;
    const char *op = ps_cli_args_get(&args, "--operation-id");
    const char *job = ps_cli_args_get(&args, "--job-id");
    size_t n = ps_cli_args_positional_count(&args);
    size_t want = (op ? 0 : 1) + (job ? 0 : 1);
    if (n < want)
        return ps_cli_usage_error(cmd, "missing %s", !op && n == 0 ? "OPERATION_ID" : "JOB_ID");
    if (n > want)
        return ps_cli_usage_error(cmd, "unexpected argument \"%.100s\"",
                                  ps_cli_args_positional(&args, want));
    if (!op)
        op = ps_cli_args_positional(&args, 0);
    if (!job)
        job = ps_cli_args_positional(&args, n - 1);
    if ((rc = check_id(cmd, "OPERATION_ID", op)) != 0 ||
        (rc = check_id(cmd, "JOB_ID", job)) != 0)
        return rc;
    struct ps_cli_client c = {0};
    if ((rc = ps_cli_client_open(&c, cmd, &args, text_formats)) != 0)
        return rc;
    json_t *body = json_pack("{s:s, s:s}", "operation_id", op, "job_id", job);
    json_t *reply = NULL;
    rc = ps_cli_call(&c, "get_job_stderr", body, &reply, NULL, 0);
    json_decref(body);
    if (rc == 0 && c.format != PS_CLI_FORMAT_TEXT) {
        rc = ps_cli_print_value(&c, reply);
    } else if (rc == 0) {
        const json_t *text = json_object_get(reply, "stderr");
        if (!json_is_string(text)) {
            ps_cli_error(cmd, "the reply has no \"stderr\" string");
            rc = 1;
        } else {
            fwrite(json_string_value(text), 1, json_string_length(text), stdout);
            if (json_is_true(json_object_get(reply, "truncated")))
                fprintf(stderr, "note: the beginning of the job's stderr was cut\n");
        }
    }
    json_decref(reply);
    ps_cli_client_close(&c);
    return rc;
}

static const char event_log_usage[] =
    "usage: poolsched event-log [--operation-id OP] [--event-type T[,T...]] [--since MS]\n"
    "                           [--until MS] [--limit N | --all] [--format text|json|yson]\n"
    "\n"
    "Prints the scheduler's event log (//sys/scheduler/event_log), oldest first: one row per\n"
    "line as JSON (text), or a JSON/YSON list of them, one row a line. The filters: the rows of\n"
    "one operation, of these event types (operation_started, job_aborted, ...), at or after a\n"
    "time, at or before one (ms since the epoch), the newest N of them (docs/api.md \"Event\n"
    "log\"). One read returns at most and by default 10000 rows: when that many match without\n"
    "--limit, a line on stderr says older rows are not shown. --all reads every matching row,\n"
    "paged back by row index as `poolsched what-if` reads the log: a file for what-if\n"
    "--event-log.\n";

static const struct ps_cli_opt event_log_opts[] = {
    {"--operation-id", 0, true, false}, {"--event-type", 0, true, false},
    {"--since", 0, true, false}, {"--until", 0, true, false}, {"--limit", 0, true, false},
    {"--all", 0, false, false}, PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};

/* --event-type T1,T2: a list of the names */
static int add_event_types(const struct ps_cli_args *args, const char *command, json_t *body)
{
    const char *v = ps_cli_args_get(args, "--event-type");
    if (!v)
        return 0;
    json_t *list = json_array();
    for (const char *p = v; list;) {
        size_t n = strcspn(p, ",");
        if (n == 0) {
            json_decref(list);
            return ps_cli_usage_error(command, "--event-type: an empty name in \"%s\"", v);
        }
        json_array_append_new(list, json_stringn(p, n));
        if (!p[n])
            break;
        p += n + 1;
    }
    json_object_set_new(body, "event_type", list);
    return 0;
}

/* --all's pages, newest first (ps_event_take_fn). */
static int keep_page(void *ctx, json_t *page, struct ps_error *err)
{
    if (json_array_append(ctx, page) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

/* One row as the format prints it, without a newline: 0, or 1 after printing why. A row read as
 * its text, a job row the scanner takes whole (ps_event_page_split), is compact JSON of plain
 * ASCII strings and numbers in the scheduler's key order, the bytes its parse would print
 * again: JSON prints it as it is (a week's export in about half the time), YSON parses it. */
static int print_row(const struct ps_cli_client *c, const json_t *row)
{
    if (json_is_string(row) && c->format != PS_CLI_FORMAT_YSON &&
        ps_event_text_job_row_len(json_string_value(row), json_string_length(row)) ==
            json_string_length(row)) {
        fwrite(json_string_value(row), 1, json_string_length(row), stdout);
        return 0;
    }
    json_t *value = json_is_string(row) ? json_loadb(json_string_value(row),
                                                     json_string_length(row), 0, NULL)
                                        : json_incref((json_t *)row);
    char *text = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (c->format == PS_CLI_FORMAT_YSON)
        ps_yson_print(value, 0, &text, &err);
    else
        text = value ? json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(value);
    if (!text) {
        ps_cli_error(c->command, "cannot print a row%s%s", err.msg[0] ? ": " : "", err.msg);
        return 1;
    }
    fputs(text, stdout);
    free(text);
    return 0;
}

/* The rows of pages (lists, newest first) oldest first: a line each (text), or a JSON or YSON
 * list of them, one row a line. Returns the exit code. */
static int print_rows(const struct ps_cli_client *c, const json_t *pages)
{
    bool json = c->format == PS_CLI_FORMAT_JSON, yson = c->format == PS_CLI_FORMAT_YSON;
    bool first = true;
    if (json || yson)
        fputs("[\n", stdout);
    for (size_t k = json_array_size(pages); k-- > 0;) {
        const json_t *page = json_array_get(pages, k);
        for (size_t i = 0; i < json_array_size(page); i++) {
            if (json && !first)
                fputs(",\n", stdout);
            first = false;
            if (print_row(c, json_array_get(page, i)) != 0)
                return 1;
            if (!json)
                fputs(yson ? ";\n" : "\n", stdout);   /* YSON: ';' after every item */
        }
    }
    if (json || yson)
        fputs(json && !first ? "\n]\n" : "]\n", stdout);
    return fflush(stdout) == 0 ? 0 : 1;
}

int ps_cmd_event_log(int argc, char **argv)
{
    const char *cmd = "event-log";
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, event_log_opts, 0, 0, "", event_log_usage,
                                  &args);
    if (rc >= 0)
        return rc;
    bool all = ps_cli_args_has(&args, "--all");
    if (all && ps_cli_args_get(&args, "--limit"))
        return ps_cli_usage_error(cmd, "--all reads every matching row: not with --limit");
    json_t *filters = json_object();
    rc = add_filter(&args, cmd, "--operation-id", "operation_id", filters);
    if (rc == 0)
        rc = add_event_types(&args, cmd, filters);
    if (rc == 0)
        rc = add_int(&args, cmd, "--since", "since", 0, INT64_MAX, filters);
    if (rc == 0)
        rc = add_int(&args, cmd, "--until", "until", 0, INT64_MAX, filters);
    if (rc == 0)
        rc = add_int(&args, cmd, "--limit", "limit", 1, PS_EVENT_PAGE_ROWS, filters);
    int64_t until = json_is_integer(json_object_get(filters, "until"))
                        ? json_integer_value(json_object_get(filters, "until")) : INT64_MAX;
    json_object_del(filters, "until");
    int limit = (int)(json_integer_value(json_object_get(filters, "limit"))
                          ? json_integer_value(json_object_get(filters, "limit"))
                          : PS_EVENT_PAGE_ROWS);
    json_object_del(filters, "limit");
    struct ps_cli_client c = {0};
    if (rc == 0)
        rc = ps_cli_client_open(&c, cmd, &args, text_formats);
    if (rc != 0) {
        json_decref(filters);
        return rc;
    }
    struct ps_cli_event_log log = {&c, filters};
    struct ps_error err;
    ps_error_init(&err);
    json_t *pages = json_array(), *page = NULL;
    int64_t first = PS_EVENT_NO_ROW;
    if (all) {
        rc = ps_event_page_back(ps_cli_event_log_page, &log, until, keep_page, pages, &err);
    } else if ((rc = ps_cli_event_log_page(&log, until, PS_EVENT_NO_ROW, limit, &page, &first,
                                           &err)) == 0) {
        json_array_append_new(pages, page);
        /* not silently the newest page of a longer log (a file for `what-if --event-log`) */
        if (json_array_size(page) == PS_EVENT_PAGE_ROWS && !ps_cli_args_get(&args, "--limit"))
            fprintf(stderr, "%s: the newest %d matching rows; older ones are not shown (a read "
                            "returns at most %d: --all reads them all, or narrow it with --since, "
                            "--until, --event-type or --operation-id)\n",
                    cmd, PS_EVENT_PAGE_ROWS, PS_EVENT_PAGE_ROWS);
    }
    if (rc != 0 && err.msg[0])
        ps_cli_error(cmd, "%s", err.msg);
    rc = rc != 0 ? 1 : print_rows(&c, pages);
    json_decref(pages);
    json_decref(filters);
    ps_cli_client_close(&c);
    return rc;
}
