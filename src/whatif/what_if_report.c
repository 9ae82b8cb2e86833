/* what_if_report.c — the summary, what-if.json and report.html of `poolsched what-if`
 * (what_if_report.h). report.html holds the comparison table and the simulator's own
 * report.html of each run (recorded/, changed/) side by side. */
#include "whatif/what_if_report.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/jsonval.h"
#include "io/textbuf.h"
#include "platform/file.h"

/* rows of each table on the screen (the ones that changed most) */
#define TEXT_ROWS 15

static double num(const json_t *m, const char *key)
{
    return json_number_value(json_object_get(m, key));
}

/* How much a name's figures differ between the runs (ms of wait, a second per job). */
static double change(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"wait_p50_ms", "wait_p95_ms", "starving_ms"};
    static const char *const counts[] = {"preempted_jobs", "jobs_completed"};
    double d = 0;
    for (size_t i = 0; i < 3; i++)
        d += fabs(num(a, keys[i]) - num(b, keys[i]));
    for (size_t i = 0; i < 2; i++)
        d += 1000 * fabs(num(a, counts[i]) - num(b, counts[i]));
    return d;
}

struct named {
    const char *name;
    double change;
};

static int by_change(const void *x, const void *y)
{
    const struct named *a = x, *b = y;
    if (a->change != b->change)
        return a->change > b->change ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const struct named *)x)->name, ((const struct named *)y)->name);
}

/* The names of both maps, sorted by name: all of them, or when there are more than max (a
 * screen), the max that changed most. *left_out receives how many were left out. */
static json_t *names(const json_t *a, const json_t *b, size_t max, size_t *left_out)
{
    json_t *set = ps_jv_key_union(a, b);
    const char *k;
    json_t *v;
    size_t n = json_object_size(set), i = 0;
    struct named *all = malloc((n ? n : 1) * sizeof *all);
    json_object_foreach(set, k, v)
        if (all)
            all[i++] = (struct named){k, change(json_object_get(a, k), json_object_get(b, k))};
    if (all && n > max)
        qsort(all, n, sizeof *all, by_change);
    size_t shown = all ? (n > max ? max : n) : 0;
    if (all)
        qsort(all, shown, sizeof *all, by_name);
    json_t *list = json_array();
    for (size_t x = 0; x < shown; x++)
        json_array_append_new(list, json_string(all[x].name));
    *left_out = n - shown;
    free(all);
    json_decref(set);
    return list;
}

struct column {
    const char *title;
    const char *key;
    double scale;    /* shown value = value * scale */
    const char *fmt;
};

static const struct column pool_columns[] = {
    {"wait p50 s", "wait_p50_ms", 0.001, "%.1f"},   {"wait p95 s", "wait_p95_ms", 0.001, "%.1f"},
    {"fair share", "mean_fair_share", 1, "%.3f"},   {"usage", "mean_usage", 1, "%.3f"},
    {"starving s", "starving_ms", 0.001, "%.0f"},   {"preempted", "preempted_jobs", 1, "%.0f"},
    {"jobs done", "jobs_completed", 1, "%.0f"},     {NULL, NULL, 0, NULL}};

static const struct column user_columns[] = {
    {"wait p50 s", "wait_p50_ms", 0.001, "%.1f"}, {"wait p95 s", "wait_p95_ms", 0.001, "%.1f"},
    {"usage", "mean_usage", 1, "%.3f"},
    {"preempted", "preempted_jobs", 1, "%.0f"},   {"jobs done", "jobs_completed", 1, "%.0f"},
    {NULL, NULL, 0, NULL}};

static void cell(struct ps_textbuf *b, const struct column *c, const json_t *m)
{
    char s[64];
    if (!m || !json_is_number(json_object_get(m, c->key)))   /* null: no figure (no operation) */
        snprintf(s, sizeof s, "n/a");
    else
        snprintf(s, sizeof s, c->fmt, num(m, c->key) * c->scale);
    ps_textbuf_adds(b, s);
}

/* s into b, HTML-escaped when html (names, paths and values are users' text) */
static void add_text(struct ps_textbuf *b, const char *s, bool html)
{
    if (!html) {
        ps_textbuf_adds(b, s);
        return;
    }
    for (const char *p = s; *p; p++) {
        const char *e = *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;"
                        : *p == '"' ? "&quot;" : NULL;
        if (e)
            ps_textbuf_adds(b, e);
        else
            ps_textbuf_addc(b, *p);
    }
}

static void add_name(struct ps_textbuf *b, const char *name, bool html)
{
    if (html)
        add_text(b, name, true);
    else
        ps_textbuf_addf(b, "%-14.14s", name);
}

/* One table as text (html false) or an HTML table: name, operations, then a -> b per column */
static void table(struct ps_textbuf *b, bool html, const char *what, const json_t *ra,
                  const json_t *rb, const struct column *cols)
{
    size_t left_out = 0;
    json_t *list = names(ra, rb, html ? SIZE_MAX : TEXT_ROWS, &left_out);
    if (html) {
        ps_textbuf_addf(b, "<table><tr><th>%s</th><th>ops</th>", what);
        for (const struct column *c = cols; c->title; c++)
            ps_textbuf_addf(b, "<th>%s<br>recorded &rarr; changed</th>", c->title);
        ps_textbuf_adds(b, "</tr>\n");
    } else {
        ps_textbuf_addf(b, "%-14s %4s", what, "ops");
        for (const struct column *c = cols; c->title; c++)
            ps_textbuf_addf(b, " %17s", c->title);
        ps_textbuf_adds(b, "\n");
    }
    size_t i;
    json_t *name;
    json_array_foreach(list, i, name) {
        const char *n = json_string_value(name);
        const json_t *a = json_object_get(ra, n), *z = json_object_get(rb, n);
        ps_textbuf_adds(b, html ? "<tr><td>" : "");
        add_name(b, n, html);
        ps_textbuf_addf(b, html ? "</td><td>%.0f</td>" : " %4.0f", num(a ? a : z, "operations"));
        for (const struct column *c = cols; c->title; c++) {
            struct ps_textbuf v;
            ps_textbuf_init(&v);
            cell(&v, c, a);
            ps_textbuf_adds(&v, html ? " &rarr; " : "->");
            cell(&v, c, z);
            ps_textbuf_addf(b, html ? "<td>%s</td>" : " %17s", v.data ? v.data : "");
            ps_textbuf_release(&v);
        }
        ps_textbuf_adds(b, html ? "</tr>\n" : "\n");
    }
    if (html)
        ps_textbuf_adds(b, "</table>\n");
    else if (left_out > 0)
        ps_textbuf_addf(b, "(%zu more %ss, changed less: what-if.json, report.html)\n", left_out,
                        what);
    json_decref(list);
}

static bool within(const struct ps_what_if_result *r, int64_t *start_tol)
{
    int64_t hb = (int64_t)json_integer_value(json_object_get(r->scenario, "heartbeat_period"));
    *start_tol = PS_WHAT_IF_START_TOLERANCE_HEARTBEATS * hb + PS_WHAT_IF_START_TOLERANCE_MS;
    return num(r->fidelity, "usage_error_mean") <= PS_WHAT_IF_USAGE_TOLERANCE &&
           num(r->fidelity, "start_error_p50_ms") <= (double)*start_tol;
}

static void summary(struct ps_textbuf *b, const struct ps_what_if_result *r, bool html)
{
    int64_t tol;
    bool ok = within(r, &tol);
    const json_t *f = r->fidelity;
    ps_textbuf_addf(b, "%swindow %lld..%lld ms since the epoch (%.0f s), pool tree %s, %zu "
                       "operations; change:",
                    html ? "<p>" : "what-if: ", (long long)r->since_ms, (long long)r->until_ms,
                    (double)(r->until_ms - r->since_ms) / 1000, r->tree ? r->tree : "-",
                    json_array_size(json_object_get(r->scenario, "operations")));
    size_t i;
    json_t *ch;
    json_array_foreach(r->changes, i, ch) {
        char *v = json_dumps(json_array_get(ch, 1), JSON_COMPACT | JSON_ENCODE_ANY);
        ps_textbuf_adds(b, " ");
        add_text(b, json_string_value(json_array_get(ch, 0)), html);
        ps_textbuf_adds(b, json_is_null(json_array_get(ch, 1)) ? " (removed)" : "=");
        if (!json_is_null(json_array_get(ch, 1)))
            add_text(b, v ? v : "?", html);
        free(v);
    }
    if (json_array_size(r->changes) == 0)
        ps_textbuf_adds(b, " none");
    if (r->requested_since_ms < r->since_ms)
        ps_textbuf_addf(b, "%sthe window starts where the event log's record does: it holds "
                           "nothing to replay from %lld (since, as asked) to %lld",
                        html ? "</p>\n<p>" : "\n", (long long)r->requested_since_ms,
                        (long long)r->since_ms);
    ps_textbuf_addf(b, "%sfidelity of the no-change replay: operation start error p50 %.1f s, "
                       "p95 %.1f s, max %.1f s (%.0f operations); usage error mean %.3f, worst "
                       "%.3f (%s): %s (tolerance: usage error mean <= %.2f, start error p50 <= "
                       "%.1f s)%s",
                    html ? "</p>\n<p>" : "\n", num(f, "start_error_p50_ms") / 1000,
                    num(f, "start_error_p95_ms") / 1000, num(f, "start_error_max_ms") / 1000,
                    num(f, "operations"), num(f, "usage_error_mean"), num(f, "usage_error_max"),
                    json_string_value(json_object_get(f, "usage_error_max_pool")),
                    ok ? "within tolerance" : "OUTSIDE tolerance", PS_WHAT_IF_USAGE_TOLERANCE,
                    (double)tol / 1000, html ? "</p>\n" : "\n\n");
    table(b, html, "pool", json_object_get(r->recorded, "pools"),
          json_object_get(r->changed, "pools"), pool_columns);
    ps_textbuf_adds(b, html ? "" : "\n");
    table(b, html, "user", json_object_get(r->recorded, "users"),
          json_object_get(r->changed, "users"), user_columns);
}

/* what-if.json's text */
static char *json_text(const struct ps_what_if_result *r)
{
    int64_t tol;
    bool ok = within(r, &tol);
    json_t *fid = json_deep_copy(r->fidelity);
    json_object_set_new(fid, "tolerance",
                        json_pack("{s:f, s:I}", "usage_error_mean", PS_WHAT_IF_USAGE_TOLERANCE,
                                  "start_error_p50_ms", (json_int_t)tol));
    json_object_set_new(fid, "within_tolerance", json_boolean(ok));
    json_t *all = json_pack("{s:I, s:I, s:I, s:s?, s:O, s:O, s:O, s:o}", "since",
                            (json_int_t)r->since_ms, "requested_since",
                            (json_int_t)r->requested_since_ms, "until",
                            (json_int_t)r->until_ms, "tree", r->tree, "changes",
                            r->changes, "recorded", r->recorded, "changed", r->changed,
                            "fidelity", fid);
    char *text = all ? json_dumps(all, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
    json_decref(all);
    return text;
}

static int write_file(const char *dir, const char *name, const char *text, size_t len,
                      struct ps_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return ps_file_write(path, text, len, err);
}

static const char page_head[] =
    "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>poolsched what-if</title>\n"
    "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child{text-align:left}"
    ".runs{display:flex;gap:8px}.runs div{flex:1}iframe{width:100%;height:1400px;border:1px solid "
    "#ccc}</style></head><body>\n<h1>What if</h1>\n";

static const char page_runs[] =
    "<div class=\"runs\"><div><h2>As recorded</h2><iframe src=\"recorded/report.html\"></iframe>"
    "</div><div><h2>With the change</h2><iframe src=\"changed/report.html\"></iframe></div></div>\n"
    "</body></html>\n";

int ps_what_if_write(const struct ps_what_if_result *r, const char *dir, char **json,
                    char **text, struct ps_error *err)
{
    char *j = json_text(r);
    int rc = j ? write_file(dir, "what-if.json", j, strlen(j), err)
               : ps_error_set(err, PS_ENOMEM, "out of memory");
    struct ps_textbuf b;
    ps_textbuf_init(&b);
    ps_textbuf_adds(&b, page_head);
    summary(&b, r, true);
    ps_textbuf_adds(&b, page_runs);
    if (rc == 0)
        rc = write_file(dir, "report.html", b.data, b.len, err);
    ps_textbuf_release(&b);
    if (rc == 0 && text) {
        ps_textbuf_init(&b);
        summary(&b, r, false);
        *text = strdup(b.data ? b.data : "");
        ps_textbuf_release(&b);
        rc = *text ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    if (rc == 0 && json) {
        *json = j;
        j = NULL;
    }
    free(j);
    return rc;
}
