/* cli_format.c — tables and blocks for people (cli_format.h). */
#include "cli/cli_format.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/textbuf.h"

/* ---- table -------------------------------------------------------------------------------- */

static char *clean_copy(const char *s)
{
    if (!s)
        s = "-";
    char *copy = strdup(s);
    if (copy)
        for (char *p = copy; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
    return copy;
}

void ps_cli_table_init(struct ps_cli_table *t, size_t columns, const char *const *header)
{
    memset(t, 0, sizeof *t);
    t->columns = columns;
    ps_cli_table_add(t, header);
}

void ps_cli_table_add(struct ps_cli_table *t, const char *const *cells)
{
    if (t->failed)
        return;
    size_t need = (t->rows + 1) * t->columns;
    if (need > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16 * t->columns;
        while (cap < need)
            cap *= 2;
        char **grown = realloc(t->cells, cap * sizeof *grown);
        if (!grown) {
            t->failed = 1;
            return;
        }
        t->cells = grown;
        t->cap = cap;
    }
    for (size_t i = 0; i < t->columns; i++) {
        char *c = clean_copy(cells[i]);
        if (!c) {
            for (size_t j = 0; j < i; j++)
                free(t->cells[t->rows * t->columns + j]);
            t->failed = 1;
            return;
        }
        t->cells[t->rows * t->columns + i] = c;
    }
    t->rows++;
}

static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

char *ps_cli_table_render(const struct ps_cli_table *t)
{
    if (t->failed)
        return NULL;
    size_t *widths = calloc(t->columns ? t->columns : 1, sizeof *widths);
    if (!widths)
        return NULL;
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->columns; c++) {
            size_t w = width(t->cells[r * t->columns + c]);
            if (w > widths[c])
                widths[c] = w;
        }
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    for (size_t r = 0; r < t->rows; r++) {
        for (size_t c = 0; c < t->columns; c++) {
            const char *cell = t->cells[r * t->columns + c];
            ps_textbuf_adds(&b, cell);
            if (c + 1 < t->columns)
                for (size_t pad = width(cell); pad < widths[c] + 2; pad++)
                    ps_textbuf_addc(&b, ' ');
        }
        ps_textbuf_addc(&b, '\n');
    }
    free(widths);
    return ps_textbuf_detach(&b);
}

void ps_cli_table_release(struct ps_cli_table *t)
{
    for (size_t i = 0; i < t->rows * t->columns; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* ---- values ------------------------------------------------------------------------------- */

static bool as_int(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (isfinite(d) && fabs(d) < 9.0e18) {
            *out = (int64_t)llround(d);
            return true;
        }
    }
    return false;
}

void ps_cli_format_time(const json_t *t, char *buf, size_t size)
{
    int64_t ms;
    if (json_is_string(t)) {
        snprintf(buf, size, "%s", json_string_value(t));
        return;
    }
    if (!as_int(t, &ms) || ms < 0 || ms > INT64_C(253402300799999)) {   /* past year 9999 */
        snprintf(buf, size, "-");
        return;
    }
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (!gmtime_r(&secs, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, size, "-");
}

void ps_cli_format_bytes(int64_t bytes, char *buf, size_t size)
{
    static const char units[] = "KMGTPE";
    if (bytes < 1024) {
        snprintf(buf, size, "%" PRId64, bytes);
        return;
    }
    int u = 0;
    int64_t unit = 1024;
    while (u < 5 && bytes / 1024 >= unit) {
        unit *= 1024;
        u++;
    }
    if (bytes % unit == 0)
        snprintf(buf, size, "%" PRId64 "%c", bytes / unit, units[u]);
    else
        snprintf(buf, size, "%.1f%c", (double)bytes / (double)unit, units[u]);
}

void ps_cli_format_duration(int64_t ms, char *buf, size_t size)
{
    int64_t s = ms > 0 ? ms / 1000 : 0;
    if (s < 60)
        snprintf(buf, size, "%" PRId64 "s", s);
    else if (s < 3600)
        snprintf(buf, size, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, size, "%" PRId64 "h%02" PRId64 "m", s / 3600, s % 3600 / 60);
    else
        snprintf(buf, size, "%" PRId64 "d%02" PRId64 "h", s / 86400, s % 86400 / 3600);
}

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static void format_cores(const json_t *v, char *buf, size_t size)
{
    if (json_is_number(v))
        snprintf(buf, size, "%.2f", json_number_value(v));
    else
        snprintf(buf, size, "-");
}

static void format_size_field(const json_t *v, char *buf, size_t size)
{
    int64_t bytes;
    if (as_int(v, &bytes))
        ps_cli_format_bytes(bytes, buf, size);
    else
        snprintf(buf, size, "-");
}

/* "research" for one tree, "physical:research,gpu:ml" for several. */
static void format_pools(const json_t *op, char *buf, size_t size)
{
    const json_t *per_tree = json_object_get(op, "pool_per_tree");
    buf[0] = '\0';
    if (!json_is_object(per_tree) || json_object_size(per_tree) == 0) {
        const char *pool = str(json_object_get(op, "spec"), "pool");
        snprintf(buf, size, "%s", pool ? pool : "-");
        return;
    }
    bool one = json_object_size(per_tree) == 1;
    const char *tree;
    const json_t *pool;
    size_t used = 0;
    json_object_foreach((json_t *)per_tree, tree, pool) {
        const char *name = json_is_string(pool) ? json_string_value(pool) : "?";
        int n = one ? snprintf(buf + used, size - used, "%s", name)
                    : snprintf(buf + used, size - used, "%s%s:%s", used ? "," : "", tree, name);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

/* The weight in effect per tree (runtime_parameters, which update_op_parameters changes; 1 when
 * none is specified): "2", or "physical:2,gpu:1" for several trees. Without runtime parameters
 * (an older scheduler), the spec's weight. */
static void format_weights(const json_t *op, char *buf, size_t size)
{
    const json_t *per_tree = json_object_get(json_object_get(op, "runtime_parameters"),
                                             "scheduling_options_per_pool_tree");
    buf[0] = '\0';
    if (!json_is_object(per_tree) || json_object_size(per_tree) == 0) {
        const json_t *w = json_object_get(json_object_get(op, "spec"), "weight");
        snprintf(buf, size, "%g", json_is_number(w) ? json_number_value(w) : 1.0);
        return;
    }
    bool one = json_object_size(per_tree) == 1;
    const char *tree;
    const json_t *options;
    size_t used = 0;
    json_object_foreach((json_t *)per_tree, tree, options) {
        const json_t *w = json_object_get(options, "weight");
        double weight = json_is_number(w) ? json_number_value(w) : 1.0;
        int n = one ? snprintf(buf + used, size - used, "%g", weight)
                    : snprintf(buf + used, size - used, "%s%s:%g", used ? "," : "", tree, weight);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

static int64_t progress_count(const json_t *progress, const char *key)
{
    int64_t n = 0;
    return as_int(json_object_get(progress, key), &n) ? n : 0;
}

/* "5/10 (3 running, 1 failed)": completed of total, then what else is going on. */
static void format_progress(const json_t *op, char *buf, size_t size)
{
    const json_t *p = json_object_get(op, "progress");
    if (!json_is_object(p)) {
        snprintf(buf, size, "-");
        return;
    }
    int used = snprintf(buf, size, "%" PRId64 "/%" PRId64, progress_count(p, "completed"),
                        progress_count(p, "total"));
    static const char *const extra[] = {"running", "failed", "aborted"};
    bool open = false;
    for (size_t i = 0; i < 3 && used >= 0 && (size_t)used < size; i++) {
        int64_t n = progress_count(p, extra[i]);
        if (n == 0)
            continue;
        used += snprintf(buf + used, size - (size_t)used, "%s%" PRId64 " %s",
                         open ? ", " : " (", n, extra[i]);
        open = true;
    }
    if (open && used >= 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, ")");
}

static void format_state(const json_t *op, char *buf, size_t size)
{
    const char *state = str(op, "state");
    snprintf(buf, size, "%s%s", state ? state : "-",
             json_is_true(json_object_get(op, "suspended")) ? " (suspended)" : "");
}

char *ps_cli_operations_table(const json_t *operations)
{
    static const char *const header[] = {"ID", "STATE", "USER", "POOL", "PROGRESS",
                                         "START TIME", "PENDING REASON"};
    struct ps_cli_table t;
    ps_cli_table_init(&t, 7, header);
    size_t i;
    const json_t *op;
    json_array_foreach((json_t *)operations, i, op) {
        char state[64], pool[256], progress[128], start[64];
        format_state(op, state, sizeof state);
        format_pools(op, pool, sizeof pool);
        format_progress(op, progress, sizeof progress);
        ps_cli_format_time(json_object_get(op, "start_time"), start, sizeof start);
        const char *row[] = {str(op, "id"), state, str(op, "user"), pool, progress, start,
                             str(op, "pending_reason")};
        ps_cli_table_add(&t, row);
    }
    char *text = ps_cli_table_render(&t);
    ps_cli_table_release(&t);
    return text;
}

char *ps_cli_jobs_table(const json_t *jobs, int64_t now_ms)
{
    static const char *const header[] = {"ID", "STATE", "NODE", "CPU LIMIT/GUARANTEE",
                                         "MEMORY RESERVE/LIMIT", "DURATION", "ERROR"};
    struct ps_cli_table t;
    ps_cli_table_init(&t, 7, header);
    size_t i;
    const json_t *job;
    json_array_foreach((json_t *)jobs, i, job) {
        char a[32], b[32], cpu[80], memory[80], duration[32] = "-";
        format_cores(json_object_get(job, "cpu_limit"), a, sizeof a);
        format_cores(json_object_get(job, "cpu_guarantee"), b, sizeof b);
        snprintf(cpu, sizeof cpu, "%s/%s", a, b);
        format_size_field(json_object_get(job, "memory_reserve"), a, sizeof a);
        format_size_field(json_object_get(job, "memory_limit"), b, sizeof b);
        snprintf(memory, sizeof memory, "%s/%s", a, b);
        int64_t start, finish;
        if (as_int(json_object_get(job, "start_time"), &start)) {
            if (!as_int(json_object_get(job, "finish_time"), &finish))
                finish = now_ms;
            ps_cli_format_duration(finish - start, duration, sizeof duration);
        }
        const char *error = str(job, "error");
        if (!error)
            error = str(job, "abort_reason");
        const char *row[] = {str(job, "id"), str(job, "state"), str(job, "node_id"), cpu, memory,
                             duration, error};
        ps_cli_table_add(&t, row);
    }
    char *text = ps_cli_table_render(&t);
    ps_cli_table_release(&t);
    return text;
}

/* "used/total" of one resource of a node's usage and limits ("-" when the limit is missing). */
static void used_total(const json_t *node, const char *res, bool bytes, char *buf, size_t size)
{
    const json_t *u = json_object_get(json_object_get(node, "resource_usage"), res);
    const json_t *l = json_object_get(json_object_get(node, "resource_limits"), res);
    char a[32], b[32];
    if (!json_is_number(l)) {
        snprintf(buf, size, "-");
        return;
    }
    if (bytes) {
        ps_cli_format_bytes((int64_t)json_number_value(u), a, sizeof a);
        ps_cli_format_bytes((int64_t)json_number_value(l), b, sizeof b);
    } else if (strcmp(res, "cpu") == 0) {
        snprintf(a, sizeof a, "%.2f", json_number_value(u));   /* 0 when absent */
        format_cores(l, b, sizeof b);
    } else {
        snprintf(a, sizeof a, "%lld", (long long)json_number_value(u));
        snprintf(b, sizeof b, "%lld", (long long)json_number_value(l));
    }
    snprintf(buf, size, "%s/%s", a, b);
}

char *ps_cli_nodes_table(const json_t *nodes, int64_t now_ms)
{
    static const char *const header[] = {"ID", "STATE", "ADDRESS", "TREE", "TAGS", "CPU",
                                         "MEMORY", "SLOTS", "JOBS", "LAST HEARTBEAT"};
    struct ps_cli_table t;
    ps_cli_table_init(&t, 10, header);
    /* in id order: the server's map has no order to rely on */
    const char **ids = malloc((json_object_size(nodes) + 1) * sizeof *ids);
    size_t n = 0;
    const char *id;
    const json_t *node;
    json_object_foreach((json_t *)nodes, id, node)
        if (ids)
            ids[n++] = id;
    for (size_t i = 1; ids && i < n; i++)
        for (size_t k = i; k > 0 && strcmp(ids[k - 1], ids[k]) > 0; k--) {
            const char *x = ids[k];
            ids[k] = ids[k - 1];
            ids[k - 1] = x;
        }
    for (size_t i = 0; ids && i < n; i++) {
        node = json_object_get(nodes, ids[i]);
        const char *state = json_is_true(json_object_get(node, "banned")) ? "banned"
                                                                          : str(node, "state");
        char tags[256] = "", cpu[64], memory[64], slots[64], jobs[32] = "-", seen[48] = "-";
        size_t k;
        const json_t *tag;
        json_array_foreach(json_object_get(node, "tags"), k, tag)
            snprintf(tags + strlen(tags), sizeof tags - strlen(tags), "%s%s", k ? "," : "",
                     json_is_string(tag) ? json_string_value(tag) : "?");
        used_total(node, "cpu", false, cpu, sizeof cpu);
        used_total(node, "memory", true, memory, sizeof memory);
        used_total(node, "user_slots", false, slots, sizeof slots);
        int64_t count, last;
        if (as_int(json_object_get(node, "running_job_count"), &count))
            snprintf(jobs, sizeof jobs, "%lld", (long long)count);
        if (as_int(json_object_get(node, "last_heartbeat_time"), &last) && last > 0) {
            char ago[32];
            ps_cli_format_duration(now_ms - last, ago, sizeof ago);
            snprintf(seen, sizeof seen, "%s ago", ago);
        }
        const char *address = str(node, "address");
        const char *row[] = {ids[i], state, address && address[0] ? address : NULL,
                             str(node, "tree"), tags[0] ? tags : NULL, cpu, memory, slots, jobs,
                             seen};
        ps_cli_table_add(&t, row);
    }
    if (!ids)
        t.failed = 1;
    free(ids);
    char *text = ps_cli_table_render(&t);
    ps_cli_table_release(&t);
    return text;
}

/* "task: 10 x 'sleep 10', cpu 1.00, memory 512M" for each task of the (resulting) spec. */
static void add_tasks(struct ps_cli_table *t, const json_t *op)
{
    const json_t *spec = json_object_get(op, "resulting_spec");
    if (!json_is_object(spec))
        spec = json_object_get(op, "spec");
    const json_t *tasks = json_object_get(spec, "tasks");
    if (!json_is_object(tasks))
        return;
    const char *name;
    const json_t *task;
    bool first = true;
    json_object_foreach((json_t *)tasks, name, task) {
        char cpu[32], memory[32], line[1024];
        int64_t count = 0;
        as_int(json_object_get(task, "job_count"), &count);
        format_cores(json_object_get(task, "cpu_limit"), cpu, sizeof cpu);
        format_size_field(json_object_get(task, "memory_limit"), memory, sizeof memory);
        const char *command = str(task, "command");
        snprintf(line, sizeof line, "%s: %" PRId64 " x '%.400s', cpu %s, memory %s", name, count,
                 command ? command : "-", cpu, memory);
        const char *row[] = {first ? "tasks" : "", line};
        ps_cli_table_add(t, row);
        first = false;
    }
}

/* The operation's alerts on one line each joined by "; ": `unrecognized_spec: Spec contains
 * unrecognized options {"wieght":2}` (the attributes' unrecognized subtree when given). */
static void format_alerts(const json_t *op, char *out, size_t size)
{
    out[0] = '\0';
    size_t used = 0;
    const char *type;
    const json_t *alert;
    json_object_foreach((json_t *)json_object_get(op, "alerts"), type, alert) {
        const json_t *detail = json_object_get(json_object_get(alert, "attributes"), "unrecognized");
        char *text = detail ? json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        const char *msg = json_string_value(json_object_get(alert, "message"));
        int n = snprintf(out + used, size - used, "%s%s: %s%s%s", used ? "; " : "", type,
                         msg ? msg : "", text ? " " : "", text ? text : "");
        free(text);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

char *ps_cli_operation_block(const json_t *op)
{
    struct ps_cli_table t;
    memset(&t, 0, sizeof t);
    t.columns = 2;
    char state[64], pool[256], weight[256], progress[256], start[64], finish[64], alerts[1024];
    format_alerts(op, alerts, sizeof alerts);
    format_state(op, state, sizeof state);
    format_pools(op, pool, sizeof pool);
    format_weights(op, weight, sizeof weight);
    ps_cli_format_time(json_object_get(op, "start_time"), start, sizeof start);
    ps_cli_format_time(json_object_get(op, "finish_time"), finish, sizeof finish);
    const json_t *p = json_object_get(op, "progress");
    snprintf(progress, sizeof progress,
             "total %" PRId64 ", pending %" PRId64 ", running %" PRId64 ", completed %" PRId64
             ", failed %" PRId64 ", aborted %" PRId64,
             progress_count(p, "total"), progress_count(p, "pending"),
             progress_count(p, "running"), progress_count(p, "completed"),
             progress_count(p, "failed"), progress_count(p, "aborted"));
    const char *rows[][2] = {
        {"id", str(op, "id")},
        {"state", state},
        {"user", str(op, "user")},
        {"pool", pool},
        {"weight", weight},
        {"start time", start},
        {"finish time", json_object_get(op, "finish_time") ? finish : NULL},
        {"progress", json_is_object(p) ? progress : NULL},
        {"pending reason", str(op, "pending_reason")},
        {"error", str(op, "error")},
        {"alerts", alerts[0] ? alerts : NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i][1] || i < 6)
            ps_cli_table_add(&t, rows[i]);
    add_tasks(&t, op);
    char *text = ps_cli_table_render(&t);
    ps_cli_table_release(&t);
    return text;
}
