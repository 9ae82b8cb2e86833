/* cmd_bench.c — `poolsched bench`: the table of benchmarks and what they share. */
#include "bench/cmd_bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"


/* Later benchmarks (schedule, simulate, http, e2e) are one line each here. */
const struct ps_bench ps_benches[] = {
    {"fair-share", "one fair share update of a synthetic tree (1,000 pools, 10,000 operations)",
     ps_bench_fair_share},
    {"http", "a scheduler over HTTP on loopback: heartbeats (2,000 nodes), start_op/s, "
             "the combined load (--mode)",
     ps_bench_http},
    {"e2e", "completed jobs/s of a local cluster: scheduler + 4 node agents, 10,000 `true` jobs",
     ps_bench_e2e},
    {"latency", "submit-to-start of one-job operations and idle CPU, default settings (2 nodes)",
     ps_bench_latency},
    {"schedule", "node heartbeats, regular stage (10,000 nodes, 1,000 operations)", ps_bench_schedule},
    {"simulate", "poolsched simulate of one day (1,000 nodes, 100,000 jobs)", ps_bench_simulate},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: poolsched bench BENCHMARK [OPTIONS]\n\n"
                 "Measures a hot path on a synthetic workload built from a seed and prints one JSON\n"
                 "object of figures (median, p99, per-element cost, memory) on stdout.\n\n"
                 "benchmarks:\n");
    for (const struct ps_bench *b = ps_benches; b->name; b++)
        fprintf(out, "  %-12s %s\n", b->name, b->summary);
    fprintf(out, "\n`poolsched bench BENCHMARK --help` lists its options.\n");
}

int ps_cmd_bench(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0 ||
        strcmp(name, "list") == 0) {
        usage(stdout);
        return 0;
    }
    for (const struct ps_bench *b = ps_benches; b->name; b++)
        if (strcmp(b->name, name) == 0)
            return b->run(argc - 1, argv + 1);
    fprintf(stderr, "error: bench: unknown benchmark '%s' (known:", name);
    for (const struct ps_bench *b = ps_benches; b->name; b++)
        fprintf(stderr, " %s", b->name);
    fprintf(stderr, "; see poolsched bench --help)\n");
    return 2;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void ps_bench_stats_compute(double *samples, int count, struct ps_bench_stats *out)
{
    qsort(samples, (size_t)count, sizeof *samples, compare_doubles);
    double sum = 0;
    for (int i = 0; i < count; i++)
        sum += samples[i];
    out->count = count;
    out->min = samples[0];
    out->max = samples[count - 1];
    out->mean = sum / count;
    out->median = count % 2 ? samples[count / 2] : (samples[count / 2 - 1] + samples[count / 2]) / 2;
    int rank = (99 * count + 99) / 100;   /* ceil(0.99 * count), 1-based */
    out->p99 = samples[rank - 1];
}

void ps_bench_error(const char *bench, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error: bench %s: ", bench);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int ps_bench_option(const char *bench, int argc, char **argv, int *i, const char *flag, const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(flag);
    if (strncmp(arg, flag, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        ps_bench_error(bench, "%s: missing value", flag);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int ps_bench_int_options(const char *bench, int argc, char **argv, int *i, const struct ps_bench_int_opt *opts,
                         int count)
{
    for (int k = 0; k < count; k++) {
        const char *value = NULL;
        int m = ps_bench_option(bench, argc, argv, i, opts[k].flag, &value);
        if (m < 0)
            return -1;
        if (m > 0)
            return ps_bench_parse_int(bench, opts[k].flag, value, opts[k].min, opts[k].max, opts[k].out) < 0 ? -1 : 1;
    }
    return 0;
}

int ps_bench_parse_int(const char *bench, const char *flag, const char *text, long long min, long long max,
                       long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE) {
        ps_bench_error(bench, "%s: '%s' is not an integer", flag, text);
        return -1;
    }
    if (v < min || v > max) {
        ps_bench_error(bench, "%s: %lld is out of range %lld..%lld", flag, v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int ps_bench_print_json(const char *bench, json_t *obj)
{
    if (!obj) {
        ps_bench_error(bench, "out of memory building the report");
        return 1;
    }
    int rc = json_dumpf(obj, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(obj);
    if (rc != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
        ps_bench_error(bench, "cannot write the report to stdout");
        return 1;
    }
    return 0;
}
