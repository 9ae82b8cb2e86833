/* bench_http.h — what `bench http`'s modes share (bench_http.c: heartbeats; bench_http_load.c:
 * start_op throughput and the combined load). Internal to src/bench. */
#ifndef PS_BENCH_BENCH_HTTP_H
#define PS_BENCH_BENCH_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "platform/http_client.h"
#include "server/bench_hooks.h"

/* A virtual node: its id and the jobs it runs and has finished since its last heartbeat. */
struct ps_bench_node {
    char id[32];
    json_t *running;   /* array of job ids */
    json_t *finished;  /* array of reports */
    json_t *started;   /* job id -> start (monotonic ns) with --job-statistics, else NULL */
};

/* A scheduler in this process with its store in a new temporary directory (bench http's
 * modes: threads HTTP workers, the fair-share update every period_ms, 0 the default). */
struct ps_bench_http_env {
    char dir[64];
    struct ps_service *svc;
    char api[128];   /* http://127.0.0.1:PORT/api/v1/ */
};
/* 0, or -1 with the error said; ps_bench_http_env_stop cleans up either way. */
int ps_bench_http_env_start(struct ps_bench_http_env *e, long long threads, long long period_ms);
/* Stops the scheduler and removes the directory, whatever files it holds. */
void ps_bench_http_env_stop(struct ps_bench_http_env *e);

int ps_bench_http_beat(struct ps_http_client *c, const char *url, struct ps_bench_node *n,
                       double finish, unsigned *seed, char *error);
/* One heartbeat of each node, one after the other. */
int ps_bench_http_warm(struct ps_service *svc, const char *url, struct ps_bench_node *nodes,
                       int count);
/* The value of one series of the service's registry (name and labels as /metrics writes them);
 * false when it has none. */
bool ps_bench_http_series(struct ps_service *svc, const char *series, double *value);
/* The sum and count of one of the service's histograms; false when it has none. */
bool ps_bench_http_histogram(struct ps_service *svc, const char *name, double *sum,
                             double *count);
/* The mean of its observations since (sum0, count0), in ms; JSON null without any. */
json_t *ps_bench_http_mean_ms_since(struct ps_service *svc, const char *name, double sum0,
                                    double count0);
/* Latencies in ms, as they come (a sample is dropped when out of memory). */
struct ps_bench_samples {
    double *v;
    int n, cap;
};
void ps_bench_samples_push(struct ps_bench_samples *s, double ms);
void ps_bench_samples_merge(struct ps_bench_samples *into, const struct ps_bench_samples *s);
struct ps_bench_latency {
    double median, p99, p999, max;   /* ms */
    int over_20ms;
};
/* The latency figures of s (sorting it); false when it has none. */
bool ps_bench_samples_stats(struct ps_bench_samples *s, struct ps_bench_latency *out);
/* The virtual nodes node-00000.. (count), no jobs yet; NULL when out of memory. */
struct ps_bench_node *ps_bench_http_nodes_new(long long count);
void ps_bench_http_nodes_free(struct ps_bench_node *ns, long long count);
/* The setup of the heartbeating modes: one operation of jobs `true` jobs (at most 1,000,000)
 * that keeps the nodes busy, ops operations in pools (ps_bench_http_start_many), the nodes
 * registered, a fair share update, the nodes filled; url receives the heartbeat URL. Returns
 * the jobs running then, or -1 with the error said. */
int64_t ps_bench_http_fill(struct ps_service *svc, struct ps_bench_node *ns, long long nodes,
                           long long jobs, long long ops, long long pools, char url[128]);
/* Pools bench-00000.. and ops operations of 8 `true` jobs spread over them (admin, in process). */
int ps_bench_http_start_many(struct ps_service *svc, long long ops, long long pools);

/* The modes of bench_http_load.c (argv as given to `bench http`, --mode included). */
/* The options of one mode of `bench http` (--mode itself skipped): the integer options of ints,
 * the flag --job-statistics when job_statistics is not NULL, --help (prints usage, returns 1);
 * 0 when all were read, 2 on a bad or unknown option (said). */
int ps_bench_http_mode_options(int argc, char **argv, const char *mode,
                               const struct ps_bench_int_opt *ints, int count, const char *usage,
                               bool *job_statistics);
int ps_bench_http_start_op(int argc, char **argv);
int ps_bench_http_combined(int argc, char **argv);

#endif
