/* sim_report.c — report.html of `poolsched simulate --output DIR` (sim_report.h).
 *
 * The page is put together from the files the web UI embeds (server/ui_assets.h): the
 * stylesheets, uPlot, charts.js and report.js (their `export` keywords dropped, so they run as
 * classic scripts from a file:// page), and the outputs as data blocks. The CSV is parsed in
 * the page (report.js); "</" in inlined text is written "<\/" so no block ends early.
 */
#include <stdio.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "whatif/sim_report.h"
#include "platform/file.h"
#include "server/ui_assets.h"

static const struct ps_ui_asset *asset(const char *path)
{
    for (const struct ps_ui_asset *a = ps_ui_assets; a->path; a++)
        if (strcmp(a->path, path) == 0)
            return a;
    return NULL;
}

/* Writes s[0..n) with every "</" as "<\/" and, when strip, every "export " at a line start
 * dropped (an ES module's exports, as a classic script). */
static void put_text(FILE *f, const char *s, size_t n, int strip)
{
    for (size_t i = 0; i < n; i++) {
        if (strip && (i == 0 || s[i - 1] == '\n') && n - i > 7 && memcmp(s + i, "export ", 7) == 0) {
            i += 6;
            continue;
        }
        if (s[i] == '<' && i + 1 < n && s[i + 1] == '/') {
            fputs("<\\/", f);
            i++;
            continue;
        }
        fputc(s[i], f);
    }
}

static void put_asset(FILE *f, const char *path, int strip)
{
    const struct ps_ui_asset *a = asset(path);
    if (a)
        put_text(f, (const char *)a->data, a->len, strip);
}

/* The file at path, NULL when it cannot be read; *too_big when larger than max. */
static char *read_all(const char *path, size_t max, size_t *len, int *too_big)
{
    struct ps_error err;
    ps_error_init(&err);
    char *data = NULL;
    int rc = ps_file_read_max(path, max, &data, len, &err);
    *too_big = rc == PS_ELIMIT;
    return rc == 0 ? data : NULL;
}

/* The job_preempted times as {"*": [ms...]}; NULL when out of memory. */
static json_t *preemption_times(const int64_t *ms, size_t count)
{
    json_t *times = json_array();
    for (size_t i = 0; times && i < count; i++)
        if (json_array_append_new(times, json_integer(ms[i])) != 0) {
            json_decref(times);
            times = NULL;
        }
    return times ? json_pack("{s:o}", "*", times) : NULL;
}

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int ps_sim_write_report(const char *dir, const int64_t *preempted_ms, size_t preempted_count,
                        struct ps_error *err)
{
    char *csv_path = path_in(dir, "pools.csv"), *sum_path = path_in(dir, "summary.json"),
         *out_path = path_in(dir, "report.html");
    char *csv = NULL, *summary = NULL;
    json_t *preempt = NULL;
    FILE *f = NULL;
    int rc = 0;
    if (!csv_path || !sum_path || !out_path) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto done;
    }
    size_t csv_len = 0, sum_len = 0;
    int too_big = 0, sum_big = 0;
    csv = read_all(csv_path, PS_SIM_REPORT_MAX_CSV, &csv_len, &too_big);
    if (!csv && !too_big) {
        rc = ps_error_set(err, PS_EIO, "%s: cannot read", csv_path);
        goto done;
    }
    summary = read_all(sum_path, 1u << 24, &sum_len, &sum_big);
    if (!(preempt = preemption_times(preempted_ms, preempted_count))) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto done;
    }
    if (!(f = fopen(out_path, "w"))) {
        rc = ps_error_set(err, PS_EIO, "%s: cannot create", out_path);
        goto done;
    }
    fputs("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<title>poolsched simulation report</title>\n<style>\n", f);
    put_asset(f, "vendor/uPlot.min.css", 0);
    put_asset(f, "style.css", 0);
    fputs("</style></head>\n<body><header><span class=\"brand\">poolsched</span> simulation report"
          "</header>\n<main><p>Fair share, usage and demand of each pool at each fair share update "
          "of the simulation (pools.csv), integral volumes as a share of capacity, cluster "
          "usage and preemptions (the job_preempted events); the x axis is virtual time in "
          "seconds.</p>\n", f);
    if (too_big)
        fprintf(f, "<p class=\"error\">pools.csv is over %u MiB: not inlined. Rerun with "
                   "--pools-period MS for fewer rows.</p>\n", PS_SIM_REPORT_MAX_CSV >> 20);
    fputs("<div id=\"reports\"></div>\n<details><summary>summary.json</summary>"
          "<pre id=\"summary-text\"></pre></details></main>\n"
          "<script type=\"text/csv\" id=\"pools-csv\">", f);
    if (csv)
        put_text(f, csv, csv_len, 0);
    else
        fputs("time,tree,pool\n", f);
    fputs("</script>\n<script type=\"application/json\" id=\"preemptions\">", f);
    char *pj = preempt ? json_dumps(preempt, JSON_COMPACT) : NULL;
    fputs(pj ? pj : "{}", f);
    free(pj);
    fputs("</script>\n<script type=\"application/json\" id=\"summary\">", f);
    if (summary)
        put_text(f, summary, sum_len, 0);
    else
        fputs("{}", f);
    fputs("</script>\n<script>\n", f);
    put_asset(f, "vendor/uPlot.iife.min.js", 0);
    fputs("\n</script>\n<script>\n", f);
    put_asset(f, "charts.js", 1);
    put_asset(f, "report.js", 1);
    fputs("\n</script>\n</body></html>\n", f);
    if (ferror(f))
        rc = ps_error_set(err, PS_EIO, "%s: cannot write", out_path);
    if (fclose(f) != 0 && rc == 0)
        rc = ps_error_set(err, PS_EIO, "%s: cannot write", out_path);
done:
    free(csv);
    free(summary);
    json_decref(preempt);
    free(csv_path);
    free(sum_path);
    free(out_path);
    return rc;
}
