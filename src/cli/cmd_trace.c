/* cmd_trace.c — `poolsched trace import alibaba-gpu DIR ...`: a real cluster trace as a
 * scenario for `poolsched simulate` (rules: docs/alibaba-trace.md). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "io/alibaba.h"
#include "io/scenario.h"
#include "platform/file.h"

#define NODE_FILE "openb_node_list_all_node.csv"
#define POD_FILE_FORMAT "openb_pod_list_%s.csv"

static const char usage_text[] =
    "usage: poolsched trace import alibaba-gpu DIR [--pods NAME] [--output FILE] [--limit N]\n"
    "                                              [--start-offset S] [--time-scale K]\n"
    "                                              [--compress C]\n"
    "\n"
    "Turns the Alibaba GPU cluster trace (clusterdata cluster-trace-gpu-v2023) in DIR into a\n"
    "scenario for `poolsched simulate`, written to stdout or FILE. A summary with a count per\n"
    "rule for the trace's quirks goes to stderr (docs/alibaba-trace.md explains each rule).\n"
    "\n"
    "  DIR               holds " NODE_FILE " and openb_pod_list_NAME.csv\n"
    "  --pods NAME       the pod list: default (the default) or gpuspec33, or another openb list\n"
    "  --output FILE     write the scenario to FILE (replaced whole) instead of stdout\n"
    "  --limit N         only the first N pods by creation time (after --start-offset)\n"
    "  --start-offset S  only pods created at least S seconds after the first pod; they start\n"
    "                    at time 0 (the cluster starts empty)\n"
    "  --time-scale K    multiply every start time and run time by K (0 < K <= 1000), e.g.\n"
    "                    0.01 to replay 149 days in about a day and a half\n"
    "  --compress C      divide every start time by C (1 <= C <= 1000000) and keep the run\n"
    "                    times: the same pods arrive C times closer together, so more of them\n"
    "                    run at once and load the cluster (applied after --time-scale)\n";

struct args {
    const char *dir;
    const char *pods;
    const char *output;
    struct ps_alibaba_options options;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error: trace import: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see poolsched trace import --help)\n");
    va_end(ap);
    return 2;
}

static bool parse_int(const char *s, long long min, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static bool valid_list_name(const char *s)
{
    if (s[0] == '\0')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static const char *const options[] = {"--pods", "--output", "--limit", "--start-offset",
                                      "--time-scale", "--compress", NULL};

/* Returns -1 when the arguments are fine, else the exit code. */
static int parse_args(int argc, char **argv, struct args *a)
{
    *a = (struct args){.pods = "default", .options = {.limit = 0, .time_scale = 1.0, .compress = 1.0}};
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0) {
            if (a->dir)
                return usage_error("unexpected argument '%s'", arg);
            a->dir = arg;
            continue;
        }
        /* --name VALUE or --name=VALUE */
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        const char *name = NULL;
        for (const char *const *o = options; *o; o++)
            if (strlen(*o) == name_len && strncmp(arg, *o, name_len) == 0)
                name = *o;
        if (!name)
            return usage_error("unknown option '%.*s'", (int)name_len, arg);
        const char *value = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!value)
            return usage_error("%s needs a value", name);
        long long n;
        if (strcmp(name, "--pods") == 0) {
            if (!valid_list_name(value))
                return usage_error("--pods: '%s' is not a pod list name such as default or "
                                   "gpuspec33 (letters a-z, digits, _)", value);
            a->pods = value;
        } else if (strcmp(name, "--output") == 0) {
            a->output = value;
        } else if (strcmp(name, "--limit") == 0) {
            if (!parse_int(value, 1, &n))
                return usage_error("--limit: must be a positive integer, got '%s'", value);
            a->options.limit = n;
        } else if (strcmp(name, "--start-offset") == 0) {
            if (!parse_int(value, 0, &n))
                return usage_error("--start-offset: must be a non-negative number of seconds, "
                                   "got '%s'", value);
            a->options.start_offset_s = n;
        } else if (strcmp(name, "--time-scale") == 0) {
            double k;
            if (!parse_double(value, &k) || !(k > 0))
                return usage_error("--time-scale: must be a positive number, got '%s'", value);
            a->options.time_scale = k;
        } else {
            double c;
            if (!parse_double(value, &c) || !(c >= 1))
                return usage_error("--compress: must be a number >= 1, got '%s'", value);
            a->options.compress = c;
        }
    }
    if (!a->dir)
        return usage_error("missing the trace directory DIR");
    return -1;
}

static int exit_code(int rc)
{
    return rc == PS_EINVAL || rc == PS_ENOENT ? 2 : 1;
}

static void print_summary(const char *pod_path, const struct ps_alibaba_stats *s)
{
    fprintf(stderr, "alibaba-gpu import of %s\n", pod_path);
    fprintf(stderr, "  nodes: %lld in %lld groups\n", (long long)s->nodes, (long long)s->node_groups);
    fprintf(stderr, "  pods: %lld read, %lld selected, %lld operations written\n",
            (long long)s->pods_read, (long long)s->pods_selected, (long long)s->operations);
    fprintf(stderr, "  trace end: %lld s; median run time (for pods that never ran): %lld s\n",
            (long long)s->trace_end_s, (long long)s->median_run_s);
    fprintf(stderr, "  rules:\n");
    for (int r = 0; r < PS_ALIBABA_RULE_COUNT; r++)
        fprintf(stderr, "    %-26s %6lld  %s\n", ps_alibaba_rule_name(r), (long long)s->rule[r],
                ps_alibaba_rule_action(r));
}

static int import_alibaba(const struct args *a)
{
    struct ps_error err;
    ps_error_init(&err);
    struct ps_alibaba_trace trace = {0};
    char *node_text = NULL, *pod_text = NULL, *out_text = NULL;
    size_t node_len, pod_len;
    json_t *doc = NULL;
    struct ps_scenario *check = NULL;
    struct ps_alibaba_stats stats;

    size_t path_size = strlen(a->dir) + strlen(a->pods) + 64;
    char *node_path = malloc(path_size), *pod_path = malloc(path_size);
    int rc = node_path && pod_path ? 0 : ps_error_set(&err, PS_ENOMEM, "out of memory");
    if (rc == 0) {
        snprintf(node_path, path_size, "%s/" NODE_FILE, a->dir);
        snprintf(pod_path, path_size, "%s/" POD_FILE_FORMAT, a->dir, a->pods);
        rc = ps_file_read(node_path, &node_text, &node_len, &err);
    }
    if (rc == 0)
        rc = ps_file_read(pod_path, &pod_text, &pod_len, &err);
    if (rc == 0)
        rc = ps_alibaba_read_nodes(&trace, node_text, node_len, node_path, &err);
    if (rc == 0)
        rc = ps_alibaba_read_pods(&trace, pod_text, pod_len, pod_path, &err);
    if (rc == 0)
        rc = ps_alibaba_to_scenario(&trace, &a->options, &doc, &stats, &err);
    if (rc == 0 && !(out_text = ps_scenario_format(doc)))
        rc = ps_error_set(&err, PS_ENOMEM, "out of memory");
    /* What we write must be a scenario the simulator accepts; a failure here is a bug. */
    if (rc == 0) {
        struct ps_error check_err;
        ps_error_init(&check_err);
        if (ps_scenario_parse(out_text, strlen(out_text), &check, &check_err) != 0)
            rc = ps_error_set(&err, PS_ESTATE, "internal: the imported scenario does not parse: %s",
                              check_err.msg);
    }
    if (rc == 0) {
        if (a->output) {
            rc = ps_file_write(a->output, out_text, strlen(out_text), &err);
            ps_error_prefix(&err, "--output %s", a->output);
        } else if (fwrite(out_text, 1, strlen(out_text), stdout) != strlen(out_text) ||
                   fflush(stdout) != 0) {
            rc = ps_error_set(&err, PS_EIO, "stdout: %s", strerror(errno));
        }
    }
    if (rc == 0)
        print_summary(pod_path, &stats);
    else if (err.code != 0)
        fprintf(stderr, "error: %s\n", err.msg);

    ps_scenario_free(check);
    free(out_text);
    json_decref(doc);
    ps_alibaba_trace_release(&trace);
    free(node_text);
    free(pod_text);
    free(node_path);
    free(pod_path);
    return rc == 0 ? 0 : exit_code(rc);
}

int ps_cmd_trace(int argc, char **argv)
{
    /* argv[0] is "trace" */
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "import") != 0) {
        fprintf(stderr, "error: trace: expected the subcommand 'import' (see poolsched trace --help)\n");
        return 2;
    }
    if (argc >= 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (argc < 3 || strcmp(argv[2], "alibaba-gpu") != 0) {
        fprintf(stderr, "error: trace import: unknown trace format '%s' (known: alibaba-gpu)\n",
                argc < 3 ? "" : argv[2]);
        return 2;
    }
    struct args a;
    int code = parse_args(argc - 3, argv + 3, &a);
    if (code >= 0)
        return code;
    return import_alibaba(&a);
}
