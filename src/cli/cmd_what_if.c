/* cmd_what_if.c — `poolsched what-if`: the cluster's recorded past replayed as recorded and
 * under a proposed change (docs/what-if.md). The event log comes from the scheduler (get of
 * //sys/scheduler/event_log, paged back in time) or a file; whatif/what_if.h replays and
 * compares. */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_client.h"
#include "cli/cli_format.h"
#include "cli/cli_event_log.h"
#include "cli/commands.h"
#include "io/event_page.h"
#include "platform/file.h"
#include "platform/wall_clock.h"
#include "whatif/what_if.h"

static const char usage_text[] =
    "usage: poolsched what-if --since WHEN [--until WHEN] [--set PATH=VALUE ...]\n"
    "                         [--remove PATH ...] [--config FILE] [--out DIR]\n"
    "                         [--event-log FILE] [--heartbeat-period MS]\n"
    "                         [--fair-share-update-period MS] [--default-tree TREE]\n"
    "\n"
    "Replays the scheduler's recorded past (its event log, //sys/scheduler/event_log) twice in\n"
    "virtual time: as recorded, and with the proposed change applied from the start; prints per\n"
    "pool and per user the wait to the first job (p50/p95), mean fair share and usage, starvation\n"
    "time, preempted jobs and jobs completed, both runs side by side, and how closely the\n"
    "no-change replay matches the record (docs/what-if.md). Deterministic.\n"
    "\n"
    "  --since WHEN     the window's start: a time ago (7d, 12h, 30m, 90s, 500ms) or ms since\n"
    "                   the epoch (required); not before the event log's record (its oldest\n"
    "                   row, or its first state rows when the bound has dropped older ones)\n"
    "  --until WHEN     the window's end, the same way (default: now)\n"
    "  --set PATH=VALUE a proposed change, e.g. //sys/pool_trees/physical/a/@weight=4 (VALUE\n"
    "                   JSON or YSON text); repeatable\n"
    "  --remove PATH    a proposed removal of an attribute (back to its default); repeatable\n"
    "  --config FILE    proposed changes as a JSON object {PATH: VALUE, ...} (null removes)\n"
    "  --out DIR        where the outputs go (default what-if): scenario.json and\n"
    "                   scenario-changed.json, recorded/ and changed/ (the simulator's\n"
    "                   outputs and report.html of each run), what-if.json, report.html\n"
    "  --event-log FILE read the rows from FILE (a JSON list, or one JSON row per line as\n"
    "                   `poolsched event-log` prints them) instead of the scheduler; times ago\n"
    "                   count from its newest row\n"
    "  --heartbeat-period MS, --fair-share-update-period MS\n"
    "                   the cluster's (scheduler config keys; defaults 5000 and 1000)\n"
    "  --default-tree TREE  the pool tree to report on (default: the scheduler's default tree;\n"
    "                   from FILE the recorded one, else the first tree of the record)\n"
    "  --format text|json  the summary (default), or what-if.json on stdout\n";

static const struct ps_cli_opt opts[] = {
    {"--since", 0, true, false},     {"--until", 0, true, false},
    {"--set", 0, true, true},        {"--remove", 0, true, true},
    {"--config", 0, true, false},    {"--out", 0, true, false},
    {"--event-log", 0, true, false}, {"--heartbeat-period", 0, true, false},
    {"--fair-share-update-period", 0, true, false},
    {"--default-tree", 0, true, false}, PS_CLI_COMMON_OPTS, {NULL, 0, false, false}};

static const char *const formats[] = {"text", "json", NULL};
static const char cmd[] = "what-if";

static int parse_when(const char *text, const char *what, int64_t now_ms, int64_t *out)
{
    struct ps_error err;
    ps_error_init(&err);
    if (ps_what_if_parse_when(text, what, now_ms, out, &err) != 0)
        return ps_cli_usage_error(cmd, "%s", err.msg);
    return 0;
}

/* The rows of a JSON list (text, len bytes) into rec. */
static int rows_from_list(const char *path, const char *text, size_t len,
                          struct ps_event_record *rec)
{
    json_error_t jerr;
    json_t *rows = json_loadb(text, len, 0, &jerr);
    if (!json_is_array(rows)) {
        ps_cli_error(cmd, "%s: %s", path, rows ? "not a list of rows" : jerr.text);
        json_decref(rows);
        return 2;
    }
    struct ps_error err;
    ps_error_init(&err);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(rows); i++)
        rc = ps_event_record_add(rec, json_array_get(rows, i), &err);
    json_decref(rows);
    if (rc != 0)
        ps_cli_error(cmd, "%s", err.msg);
    return rc ? 1 : 0;
}

/* The rest of f after its first line (line, len bytes) as a JSON list of rows into rec. */
static int rest_as_list(FILE *f, const char *path, const char *line, size_t len,
                        struct ps_event_record *rec)
{
    char *rest = NULL, *text = NULL;
    size_t rest_len = 0;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_file_read_stream(f, path, 0, &rest, &rest_len, &err) != 0) {
        ps_cli_error(cmd, "%s", err.msg);
        return 2;
    }
    text = malloc(len + rest_len + 1);
    int rc = 1;
    if (text) {
        memcpy(text, line, len);
        memcpy(text + len, rest, rest_len);
        rc = rows_from_list(path, text, len + rest_len, rec);
    } else {
        ps_cli_error(cmd, "out of memory");
    }
    free(rest);
    free(text);
    return rc;
}

/* Rows from a file into *rec: a JSON list, or JSON rows one per line (read a line at a time:
 * a week's log is never held whole). Returns the exit code, the error printed. */
static int rows_from_file(const char *path, struct ps_event_record **rec)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        ps_cli_error(cmd, "%s: %s", path, strerror(errno));
        return 2;
    }
    struct ps_error err;
    ps_error_init(&err);
    *rec = ps_event_record_new();
    int rc = *rec ? 0 : ps_error_set(&err, PS_ENOMEM, "out of memory"), code = 0;
    char *line = NULL;
    size_t cap = 0, number = 0;
    bool first = true;
    for (ssize_t n; rc == 0 && code == 0 && (n = getline(&line, &cap, f)) >= 0;) {
        number++;
        size_t skip = strspn(line, " \t\r\n");
        if (skip >= (size_t)n)
            continue;
        if (first && line[skip] == '[') {
            code = rest_as_list(f, path, line, (size_t)n, *rec);
            break;
        }
        first = false;
        rc = ps_event_record_add_text(*rec, line, (size_t)n, &err);
        if (rc == PS_EINVAL) {
            ps_cli_error(cmd, "%s: line %zu: not a JSON row", path, number);
            rc = 0;
            code = 2;
        }
    }
    if (rc == 0 && code == 0 && ferror(f))
        rc = ps_error_set(&err, PS_EIO, "%s: %s", path, strerror(errno));
    if (rc != 0) {
        ps_cli_error(cmd, "%s", err.msg);
        code = rc == PS_ENOMEM ? 1 : 2;
    }
    fclose(f);
    free(line);
    if (code != 0) {
        ps_event_record_free(*rec);
        *rec = NULL;
    }
    return code;
}

/* Reading the event log from the scheduler: its pages and the progress shown. */
struct page_reader {
    struct ps_cli_event_log log;
    bool tty;
    size_t rows, next_line;   /* rows read; without a terminal, a line at next_line rows */
};

/* The rows read so far and the oldest time reached (the read goes back from --until to the
 * log's first row: the state before --since is read too, so there is no percentage). */
static void show_read(struct page_reader *r, const json_t *page)
{
    r->rows += json_array_size(page);
    const json_t *first = json_array_get(page, 0);
    json_t *ts = json_integer(ps_event_page_row_ms(first));
    char when[32];
    ps_cli_format_time(ts, when, sizeof when);
    json_decref(ts);
    if (r->tty) {
        fprintf(stderr, "\rwhat-if: event log: %zu rows read, back to %s", r->rows, when);
    } else if (r->rows >= r->next_line) {
        fprintf(stderr, "what-if: event log: %zu rows read, back to %s\n", r->rows, when);
        r->next_line = r->rows + 100000;
    }
    fflush(stderr);
}

/* One page of the event log from the scheduler (ps_event_page_fn), its progress shown. */
static int scheduler_page(void *ctx, int64_t until_ms, int64_t upper_row, int limit,
                          json_t **page, int64_t *first_row, struct ps_error *err)
{
    struct page_reader *r = ctx;
    int rc = ps_cli_event_log_page(&r->log, until_ms, upper_row, limit, page, first_row, err);
    if (rc == 0)
        show_read(r, *page);
    return rc;
}

/* The rows up to until from the scheduler. */
static int rows_from_scheduler(struct ps_cli_client *c, int64_t until_ms,
                               struct ps_event_record **rec)
{
    struct ps_error err;
    ps_error_init(&err);
    struct page_reader r = {{c, NULL}, isatty(2), 0, 0};
    int rc = ps_what_if_collect_rows(scheduler_page, &r, until_ms, rec, &err);
    if (r.tty && r.rows > 0)
        fputc('\n', stderr);
    if (rc == 0)
        return 0;
    if (err.msg[0])
        ps_cli_error(cmd, "%s", err.msg);
    return 1;
}

/* {tree: its config now} for every tree of the scheduler (the replay's for the trees no
 * pool_trees_info row of the log describes) */
static int tree_configs(struct ps_cli_client *c, json_t **out)
{
    json_t *body = json_pack("{s:s}", "path", "//sys/pool_trees"), *reply = NULL;
    int rc = ps_cli_call(c, "get", body, &reply, NULL, 0);
    json_decref(body);
    *out = json_object();
    const char *tree;
    json_t *v;
    json_object_foreach(json_object_get(reply, "value"), tree, v) {
        char path[512];
        snprintf(path, sizeof path, "//sys/pool_trees/%s/@config", tree);
        json_t *b = json_pack("{s:s}", "path", path), *r = NULL;
        rc = rc ? rc : ps_cli_call(c, "get", b, &r, NULL, 0);
        json_decref(b);
        if (json_is_object(json_object_get(r, "value")))
            json_object_set(*out, tree, json_object_get(r, "value"));
        json_decref(r);
    }
    json_decref(reply);
    return rc;
}

static int get_string(struct ps_cli_client *c, const char *path, char **out)
{
    json_t *body = json_pack("{s:s}", "path", path), *reply = NULL;
    long status = 0;
    int rc = ps_cli_call(c, "get", body, &reply, &status, 404);
    json_decref(body);
    const char *s = json_string_value(json_object_get(reply, "value"));
    *out = s ? strdup(s) : NULL;
    json_decref(reply);
    return rc != 0 && status == 404 ? 0 : rc;
}

/* The proposed changes: [[path, value or null], ...] in command-line order, then --config's. */
static int collect_changes(const struct ps_cli_args *args, json_t *changes)
{
    struct ps_error err;
    ps_error_init(&err);
    for (size_t i = 0; i < args->count; i++) {
        const struct ps_cli_item *it = &args->items[i];
        if (!it->opt || (strcmp(it->opt->name, "--set") != 0 && strcmp(it->opt->name, "--remove") != 0))
            continue;
        if (strcmp(it->opt->name, "--remove") == 0) {
            json_array_append_new(changes, json_pack("[s, n]", it->value));
            continue;
        }
        const char *eq = strchr(it->value, '=');
        if (!eq || eq == it->value)
            return ps_cli_usage_error(cmd, "--set: \"%s\" is not PATH=VALUE", it->value);
        json_t *value = NULL;
        if (ps_cli_parse_value(eq + 1, "--set", &value, &err) != 0)
            return ps_cli_usage_error(cmd, "%s", err.msg);
        json_array_append_new(changes, json_pack("[s%, o]", it->value, (size_t)(eq - it->value), value));
    }
    const char *file = ps_cli_args_get(args, "--config");
    if (file) {
        json_error_t jerr;
        json_t *cfg = json_load_file(file, 0, &jerr);
        if (!json_is_object(cfg)) {
            ps_cli_error(cmd, "--config: %s: %s", file, cfg ? "must be a JSON object {PATH: VALUE}" : jerr.text);
            json_decref(cfg);
            return 2;
        }
        const char *path;
        json_t *v;
        json_object_foreach(cfg, path, v)
            json_array_append_new(changes, json_pack("[s, O]", path, v));
        json_decref(cfg);
    }
    return 0;
}

struct progress {
    bool tty;
};

static void show_progress(void *ctx, const char *run, int percent)
{
    const struct progress *p = ctx;
    if (p->tty) {
        int bar = percent / 5;
        fprintf(stderr, "\rwhat-if: %-9s [%.*s%*s] %3d%%%s", run, bar, "####################",
                20 - bar, "", percent, percent == 100 ? "\n" : "");
    } else if (percent % 20 == 0) {
        fprintf(stderr, "what-if: %s run %d%%\n", run, percent);
    }
    fflush(stderr);
}

struct what_if {
    int64_t since, until, heartbeat, fs_period;
    char *default_tree;
    const char *out;
    bool json;   /* --format json: what-if.json on stdout instead of the summary */
    struct ps_event_record *record;   /* the rows; taken by ps_what_if_prepare */
    json_t *changes, *trees;
};

static int replay(struct what_if *w)
{
    struct ps_what_if_request q = {.since_ms = w->since, .until_ms = w->until,
                                   .heartbeat_period_ms = w->heartbeat,
                                   .fair_share_update_period_ms = w->fs_period,
                                   .default_tree = w->default_tree, .record = w->record,
                                   .changes = w->changes, .trees = w->trees};
    struct ps_error err;
    ps_error_init(&err);
    struct ps_what_if *run = NULL;
    w->record = NULL;
    int rc = ps_what_if_prepare(&q, &run, &err);
    if (rc != 0) {
        ps_cli_error(cmd, "%s", err.msg);
        return rc == PS_EINVAL ? 2 : 1;
    }
    struct progress p = {isatty(2)};
    char *json = NULL, *summary = NULL;
    struct ps_what_if_control control = {.progress = show_progress, .ctx = &p};
    rc = ps_what_if_execute(run, w->out, &control, &json, &summary, &err);
    ps_what_if_free(run);
    if (rc != 0)
        ps_cli_error(cmd, "%s", err.msg);
    else if (w->json)
        puts(json);
    else
        printf("%s\noutputs in %s (report.html: both runs side by side)\n", summary, w->out);
    free(json);
    free(summary);
    return rc == 0 ? 0 : 1;
}

static int period_opt(const struct ps_cli_args *args, const char *name, int64_t def, int64_t *out)
{
    const char *v = ps_cli_args_get(args, name);
    *out = def;
    if (!v)
        return 0;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_cli_parse_int(v, name, 1, 3600000, out, &err) != 0)
        return ps_cli_usage_error(cmd, "%s", err.msg);
    return 0;
}

int ps_cmd_what_if(int argc, char **argv)
{
    struct ps_cli_args args;
    int rc = ps_cli_parse_command(cmd, argc, argv, opts, 0, 0, "", usage_text, &args);
    if (rc >= 0)
        return rc;
    struct what_if w = {.out = ps_cli_args_get(&args, "--out"), .changes = json_array()};
    if (!w.out || !*w.out)
        w.out = "what-if";
    if (!ps_cli_args_get(&args, "--since"))
        rc = ps_cli_usage_error(cmd, "missing --since");
    else
        rc = collect_changes(&args, w.changes);
    const char *format = ps_cli_args_get(&args, "--format");
    if (rc == 0 && format && strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
        rc = ps_cli_usage_error(cmd, "--format: \"%s\" is not one of text, json", format);
    w.json = format && strcmp(format, "json") == 0;
    if (rc == 0)
        rc = period_opt(&args, "--heartbeat-period", 5000, &w.heartbeat);
    if (rc == 0)
        rc = period_opt(&args, "--fair-share-update-period", 1000, &w.fs_period);
    const char *file = ps_cli_args_get(&args, "--event-log");
    const char *tree = ps_cli_args_get(&args, "--default-tree");
    w.default_tree = tree ? strdup(tree) : NULL;
    struct ps_cli_client c = {0};
    bool open = false;
    int64_t now = ps_wall_clock_ms();
    if (rc == 0 && file) {
        rc = rows_from_file(file, &w.record);
        now = rc == 0 ? w.record->newest_ms : now;
    } else if (rc == 0) {
        rc = ps_cli_client_open(&c, cmd, &args, formats);
        open = rc == 0;
    }
    if (rc == 0)
        rc = parse_when(ps_cli_args_get(&args, "--since"), "--since", now, &w.since);
    w.until = now;
    if (rc == 0 && ps_cli_args_get(&args, "--until"))
        rc = parse_when(ps_cli_args_get(&args, "--until"), "--until", now, &w.until);
    if (rc == 0 && w.until <= w.since)
        rc = ps_cli_usage_error(cmd, "--until: must be after --since");
    if (rc == 0 && open && !w.default_tree)
        rc = get_string(&c, "//sys/pool_trees/@default_tree", &w.default_tree);
    if (rc == 0 && open)
        rc = tree_configs(&c, &w.trees);
    if (rc == 0 && open)
        rc = rows_from_scheduler(&c, w.until, &w.record);
    if (open)
        ps_cli_client_close(&c);
    if (rc == 0)
        rc = replay(&w);
    ps_event_record_free(w.record);
    json_decref(w.changes);
    json_decref(w.trees);
    free(w.default_tree);
    return rc;
}
