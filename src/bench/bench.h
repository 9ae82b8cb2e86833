/* bench.h — the benchmarks behind `poolsched bench NAME [OPTIONS]`.
 *
 * Each benchmark builds a synthetic workload from a seed, measures one hot path of the engine
 * or the service and prints ONE JSON object of figures on stdout (shared/spec/performance.md).
 * Adding a benchmark is one entry in ps_benches (cmd_bench.c) and one run function here.
 * Benchmarks are shells: they read clocks and memory figures through src/platform.
 */
#ifndef PS_BENCH_BENCH_H
#define PS_BENCH_BENCH_H

#include <jansson.h>

struct ps_bench {
    const char *name;
    const char *summary;
    /* argv[0] is the benchmark's name; returns the exit code as commands.h describes. */
    int (*run)(int argc, char **argv);
};

/* The table of benchmarks, terminated by an entry whose name is NULL. */
extern const struct ps_bench ps_benches[];

int ps_bench_fair_share(int argc, char **argv);
int ps_bench_http(int argc, char **argv);   /* bench_http.c */
int ps_bench_e2e(int argc, char **argv);    /* bench_e2e.c */
int ps_bench_latency(int argc, char **argv);   /* bench_latency.c */
int ps_bench_schedule(int argc, char **argv);    /* bench_schedule.c */
int ps_bench_simulate(int argc, char **argv);    /* bench_simulate.c */

/* ---- helpers shared by the benchmarks ----------------------------------------------------- */

/* Order statistics of a sample. p99 is the nearest-rank 99th percentile: with fewer than 100
 * samples it is the maximum. */
struct ps_bench_stats {
    int count;
    double min;
    double median;     /* the middle sample; the mean of the two middle ones for even counts */
    double p99;
    double max;
    double mean;
};

/* Computes the statistics of samples[0..count), count >= 1; sorts samples in place. */
void ps_bench_stats_compute(double *samples, int count, struct ps_bench_stats *out);

/* Matches argv[*i] against an option taking a value, written `FLAG VALUE` or `FLAG=VALUE`.
 * Returns 1 and sets *value (borrowed from argv) and moves *i to the last argument used;
 * 0 when argv[*i] is not this option; -1 when the value is missing (error printed). */
int ps_bench_option(const char *bench, int argc, char **argv, int *i, const char *flag, const char **value);

/* Parses a decimal integer in [min, max]. Returns 0, or -1 after printing
 * `error: bench BENCH: FLAG: ...` on stderr. */
int ps_bench_parse_int(const char *bench, const char *flag, const char *text, long long min, long long max,
                       long long *out);

/* An integer option of a benchmark: FLAG VALUE or FLAG=VALUE, VALUE in [min, max]. */
struct ps_bench_int_opt {
    const char *flag;
    long long min, max;
    long long *out;
};

/* Matches argv[*i] against each option of opts (ps_bench_option, then ps_bench_parse_int).
 * Returns 1 when one matched and its value was stored, 0 when none matched, -1 after printing
 * the error of a missing or bad value. */
int ps_bench_int_options(const char *bench, int argc, char **argv, int *i, const struct ps_bench_int_opt *opts,
                         int count);

/* Prints `error: bench BENCH: MESSAGE` on stderr (printf-style). */
void ps_bench_error(const char *bench, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints obj as indented JSON with a final newline on stdout and frees it. Returns 0, or 1
 * with a message on stderr when obj is NULL (out of memory) or stdout fails. */
int ps_bench_print_json(const char *bench, json_t *obj);

#endif
