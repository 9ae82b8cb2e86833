/* bench_http.c — `poolsched bench http`: node heartbeats per second and their latency against a
 * real scheduler service over HTTP on loopback (performance.md: 2,000 nodes, >= 5,000
 * heartbeats/s, p99 <= 20 ms).
 *
 * The scheduler runs in this process (its own HTTP threads, store in a temporary data dir that
 * is removed at the end) and client threads play the nodes, each with a keep-alive connection,
 * sending heartbeats round-robin over their share of the nodes as fast as answers come back.
 * One operation keeps every node busy with running jobs; a fraction of heartbeats (--finish)
 * report a finished job (with its peak memory, which the task's memory digest learns), so the
 * group commit, the digest and the scheduling of a replacement job are in the measurement too.
 * Bounded: at most 60 s and 10,000 nodes; loopback only.
 *
 * With --operations N --pools P (and --update-period-ms), N more operations in P pools make the
 * fair share update heavy: the heartbeats are then measured while updates run (issue 12/17),
 * and the update's duration and the part of it that holds the service lock are reported (from
 * the service's histograms; null when the binary has no locked-part histogram).
 *
 * This is --mode heartbeats (the default); --mode start-op and --mode combined are
 * bench_http_load.c's.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_http.h"
#include "platform/clock.h"
#include "platform/file.h"
#include "platform/http_client.h"
#include "platform/sandbox.h"


struct client {
    struct ps_service *svc;
    char url[128];
    struct ps_bench_node *nodes;
    int first, count;
    double finish_rate;
    int64_t deadline_ns;
    struct ps_bench_samples lat;
    int errors;
    unsigned seed;
    char error[256];
};

/* With --job-statistics, what a node's agent reports for a running job every heartbeat: its CPU
 * monitor's statistics (cpu_monitor.h, keys without the leading '/'; node/jobs.c), here of a
 * job using 0.8 of its 1.5 cores (guarantee 1, no reclaim) since it started: the aggregates
 * grow by its age, so each heartbeat adds to the pools' job metrics as on a cluster. */
static json_t *running_statistics(const struct ps_bench_node *n, const json_t *id, int64_t now)
{
    const json_t *t0 = json_object_get(n->started, json_string_value(id));
    double age = t0 ? (double)(now - json_integer_value(t0)) / 1e9 : 0;
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                     "job_proxy/smoothed_cpu_usage_x100", (json_int_t)80,
                     "job_proxy/preemptable_cpu_x100", (json_int_t)50,
                     "job_proxy/preemptible_cpu_x100", (json_int_t)50,
                     "job_proxy/aggregated_smoothed_cpu_usage_x100", (json_int_t)(80 * age),
                     "job_proxy/aggregated_max_cpu_usage_x100", (json_int_t)(150 * age),
                     "job_proxy/aggregated_preemptable_cpu_x100", (json_int_t)(50 * age),
                     "job_proxy/aggregated_preemptible_cpu_x100", (json_int_t)(50 * age),
                     "job_proxy/aggregated_preempted_cpu_x100", (json_int_t)0);
}

static json_t *body_of(struct ps_bench_node *n)
{
    json_t *jobs = json_array();
    int64_t now = n->started ? ps_clock_monotonic_ns() : 0;
    size_t i;
    json_t *v;
    json_array_foreach(n->running, i, v) {
        json_t *job = json_pack("{s:O, s:s, s:f}", "job_id", v, "state", "running",
                                "cpu_guarantee", 1.0);
        if (n->started)
            json_object_set_new(job, "statistics", running_statistics(n, v, now));
        json_array_append_new(jobs, job);
    }
    json_array_extend(jobs, n->finished);
    return json_pack("{s:s, s:[], s:{s:i, s:I, s:i}, s:o}", "node_id", n->id, "tags",
                     "resource_limits", "cpu", 4, "memory", (json_int_t)16 << 30, "user_slots", 4,
                     "jobs", jobs);
}

/* Job id leaves node n's running jobs (index k). */
static void job_leaves(struct ps_bench_node *n, size_t k, const char *id)
{
    if (n->started)
        json_object_del(n->started, id);
    json_array_remove(n->running, k);
}

/* One heartbeat of node n: first floor(finish) of its jobs finish, one more with probability
 * frac(finish); reports its running jobs and those finished, takes the jobs to start, drops
 * those to abort and completes those to interrupt at the next heartbeat. Returns how many
 * finished jobs it reported (their records make it wait for a commit), -1 on error. */
int ps_bench_http_beat(struct ps_http_client *c, const char *url, struct ps_bench_node *n,
                       double finish, unsigned *seed, char *error)
{
    int count = (int)finish + ((double)rand_r(seed) / RAND_MAX < finish - (int)finish);
    for (int k = 0; k < count && json_array_size(n->running) > 0; k++) {
        json_t *id = json_incref(json_array_get(n->running, 0));
        job_leaves(n, 0, json_string_value(id));
        /* with the peak memory a job reports: the tasks' memory digests learn, as on a cluster */
        json_int_t peak = (json_int_t)(64 + rand_r(seed) % 192) << 20;
        json_array_append_new(n->finished, json_pack("{s:o, s:s, s:{s:I}}", "job_id", id, "state",
                                                     "completed", "statistics",
                                                     "user_job/max_memory", peak));
    }
    int reported = (int)json_array_size(n->finished);
    json_t *body = body_of(n);
    struct ps_http_result res;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_http_client_post_json(c, url, body, &res, &err);
    json_decref(body);
    if (rc != 0 || res.status != 200) {
        snprintf(error, 256, "%.200s", rc ? err.msg : res.body);
        return -1;
    }
    json_t *out = json_loadb(res.body, res.body_len, 0, NULL);
    if (!out)
        return -1;
    json_array_clear(n->finished);
    size_t i;
    json_t *v;
    int64_t now = ps_clock_monotonic_ns();
    json_array_foreach(json_object_get(out, "jobs_to_start"), i, v) {
        json_t *id = json_object_get(v, "job_id");
        json_array_append(n->running, id);
        if (n->started && json_is_string(id))
            json_object_set_new(n->started, json_string_value(id), json_integer(now));
    }
    /* preempted jobs leave: aborted ones at once, interrupted ones complete */
    const char *lists[2] = {"jobs_to_abort", "jobs_to_interrupt"};
    for (int l = 0; l < 2; l++)
        json_array_foreach(json_object_get(out, lists[l]), i, v) {
            const char *id = json_string_value(json_object_get(v, "job_id"));
            for (size_t k = 0; id && k < json_array_size(n->running); k++) {
                if (strcmp(json_string_value(json_array_get(n->running, k)), id) != 0)
                    continue;
                if (l == 1)
                    json_array_append_new(n->finished, json_pack("{s:s, s:s}", "job_id", id,
                                                                 "state", "completed"));
                job_leaves(n, k, id);
                break;
            }
        }
    json_decref(out);
    return reported;
}

static void *client_main(void *arg)
{
    struct client *cl = arg;
    struct ps_http_client *c = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_http_client_new(&c, &err) != 0 ||
        ps_http_client_set_token(c, ps_bench_server_cluster_secret(cl->svc), &err) != 0) {
        snprintf(cl->error, sizeof cl->error, "%.200s", err.msg);
        ps_http_client_free(c);
        return NULL;
    }
    for (int k = 0; ps_clock_monotonic_ns() < cl->deadline_ns; k++) {
        struct ps_bench_node *n = &cl->nodes[cl->first + k % cl->count];
        int64_t a = ps_clock_monotonic_ns();
        if (ps_bench_http_beat(c, cl->url, n, cl->finish_rate, &cl->seed, cl->error) < 0) {
            cl->errors++;
            if (cl->errors > 10)
                break;
            continue;
        }
        double ms = (double)(ps_clock_monotonic_ns() - a) / 1e6;
        ps_bench_samples_push(&cl->lat, ms);
    }
    ps_http_client_free(c);
    return NULL;
}

/* ---- the service ------------------------------------------------------------------------- */

int ps_bench_http_env_start(struct ps_bench_http_env *e, long long threads, long long period_ms)
{
    snprintf(e->dir, sizeof e->dir, "/tmp/poolsched-bench-http-XXXXXX");
    struct ps_error err;
    ps_error_init(&err);
    if (ps_file_make_temp_dir(e->dir, &err) != 0) {
        e->dir[0] = 0;
        ps_bench_error("http", "cannot create a temporary directory: %s", err.msg);
        return -1;
    }
    char data_dir[sizeof e->dir + 8];
    snprintf(data_dir, sizeof data_dir, "%s/data", e->dir);
    struct ps_bench_server_options sopt = {.data_dir = data_dir, .http_threads = (int)threads,
                                           .node_offline_timeout_ms = 600000,
                                           .fair_share_update_period_ms = period_ms};
    if (ps_bench_server_start(&sopt, &e->svc, &err) != 0) {
        ps_bench_error("http", "cannot start the scheduler: %s", err.msg);
        return -1;
    }
    snprintf(e->api, sizeof e->api, "http://127.0.0.1:%u/api/v1/", ps_bench_server_port(e->svc));
    return 0;
}

void ps_bench_http_env_stop(struct ps_bench_http_env *e)
{
    ps_bench_server_stop(e->svc);
    e->svc = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (e->dir[0] && ps_sandbox_remove(e->dir, &err) != 0)
        ps_bench_error("http", "cannot remove %s: %s", e->dir, err.msg);
}

int ps_bench_http_warm(struct ps_service *svc, const char *url, struct ps_bench_node *nodes, int count)
{
    struct ps_http_client *c = NULL;
    if (ps_http_client_new(&c, NULL) != 0 || ps_http_client_set_token(c, ps_bench_server_cluster_secret(svc), NULL) != 0) {
        ps_http_client_free(c);
        return -1;
    }
    char error[256];
    unsigned seed = 1;
    for (int i = 0; i < count; i++)
        if (ps_bench_http_beat(c, url, &nodes[i], 0, &seed, error) < 0) {
            fprintf(stderr, "error: bench http: warm-up heartbeat failed: %s\n", error);
            ps_http_client_free(c);
            return -1;
        }
    ps_http_client_free(c);
    return 0;
}

void ps_bench_samples_push(struct ps_bench_samples *s, double ms)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 1024;
        double *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v)
            return;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = ms;
}

void ps_bench_samples_merge(struct ps_bench_samples *into, const struct ps_bench_samples *s)
{
    for (int i = 0; i < s->n; i++)
        ps_bench_samples_push(into, s->v[i]);
}

bool ps_bench_samples_stats(struct ps_bench_samples *s, struct ps_bench_latency *out)
{
    if (s->n == 0)
        return false;
    struct ps_bench_stats st;
    ps_bench_stats_compute(s->v, s->n, &st);   /* sorts */
    *out = (struct ps_bench_latency){.median = st.median, .p99 = st.p99, .max = st.max,
                                     .p999 = s->v[s->n - 1 - (s->n - 1) / 1000]};
    for (int i = 0; i < s->n; i++)
        out->over_20ms += s->v[i] > 20.0;
    return true;
}

struct ps_bench_node *ps_bench_http_nodes_new(long long count)
{
    struct ps_bench_node *ns = calloc((size_t)count, sizeof *ns);
    for (long long i = 0; ns && i < count; i++) {
        snprintf(ns[i].id, sizeof ns[i].id, "node-%05lld", i);
        ns[i].running = json_array();
        ns[i].finished = json_array();
    }
    return ns;
}

void ps_bench_http_nodes_free(struct ps_bench_node *ns, long long count)
{
    for (long long i = 0; ns && i < count; i++) {
        json_decref(ns[i].running);
        json_decref(ns[i].finished);
        json_decref(ns[i].started);
    }
    free(ns);
}

int64_t ps_bench_http_fill(struct ps_service *svc, struct ps_bench_node *ns, long long nodes,
                           long long jobs, long long ops, long long pools, char url[128])
{
    char spec[256];
    snprintf(spec, sizeof spec,
             "{\"spec\": {\"tasks\": {\"t\": {\"command\": \"true\", \"job_count\": %lld, "
             "\"memory_limit\": 104857600}}}}",
             jobs < 1000000 ? jobs : 1000000);
    json_t *reply = NULL;
    int st = ps_bench_server_api(svc, "start_op", spec, &reply);
    json_decref(reply);
    if (st != 200 || (ops > 0 && ps_bench_http_start_many(svc, ops, pools) != 0)) {
        ps_bench_error("http", "setup failed (start_op status %d)", st);
        return -1;
    }
    snprintf(url, 128, "http://127.0.0.1:%u/internal/v1/node/heartbeat",
             ps_bench_server_port(svc));
    /* register the nodes, update, fill them */
    if (ps_bench_http_warm(svc, url, ns, (int)nodes) != 0)
        return -1;
    ps_bench_server_update_fair_share(svc);
    if (ps_bench_http_warm(svc, url, ns, (int)nodes) != 0)
        return -1;
    int64_t running = 0;
    for (long long i = 0; i < nodes; i++)
        running += (int64_t)json_array_size(ns[i].running);
    return running;
}

/* The value of one series of the service's registry (its name with any labels, as /metrics
 * writes it); false when it has none. */
bool ps_bench_http_series(struct ps_service *svc, const char *series, double *value)
{
    char *text = NULL;
    size_t len = 0;
    struct ps_error err;
    ps_error_init(&err);
    if (ps_bench_server_metrics(svc, &text, &len, &err) != 0)
        return false;
    char key[256];
    snprintf(key, sizeof key, "\n%s ", series);
    const char *at = strstr(text, key);
    if (at)
        *value = strtod(at + strlen(key), NULL);
    free(text);
    return at != NULL;
}

/* The sum and count of a histogram of the service's registry; false when it has none. */
bool ps_bench_http_histogram(struct ps_service *svc, const char *name, double *sum, double *count)
{
    char series[160];
    snprintf(series, sizeof series, "%s_sum", name);
    if (!ps_bench_http_series(svc, series, sum))
        return false;
    snprintf(series, sizeof series, "%s_count", name);
    return ps_bench_http_series(svc, series, count);
}

/* Mean of a histogram's observations since (sum0, count0), in ms; JSON null without it. */
json_t *ps_bench_http_mean_ms_since(struct ps_service *svc, const char *name, double sum0, double count0)
{
    double sum, count;
    if (!ps_bench_http_histogram(svc, name, &sum, &count) || count <= count0)
        return json_null();
    return json_real((sum - sum0) / (count - count0) * 1000.0);
}

struct setup_worker {
    struct ps_service *svc;
    long long first, step, ops, pools;
    int status;
    char error[256];
};

/* Pools (ops < 0: pool i) or operations (operation i in pool i % pools), every step-th from
 * first, through the API in this process as the admin. */
static void *setup_main(void *arg)
{
    struct setup_worker *w = arg;
    long long n = w->ops < 0 ? w->pools : w->ops;
    for (long long i = w->first; i < n; i += w->step) {
        char body[256];
        const char *command = w->ops < 0 ? "create" : "start_op";
        if (w->ops < 0)
            snprintf(body, sizeof body,
                     "{\"type\": \"scheduler_pool\", "
                     "\"path\": \"//sys/pool_trees/physical/bench-%05lld\"}", i);
        else
            snprintf(body, sizeof body,
                     "{\"spec\": {\"pool\": \"bench-%05lld\", \"tasks\": {\"t\": {\"command\": "
                     "\"true\", \"job_count\": 8, \"memory_limit\": 104857600}}}}",
                     i % w->pools);
        json_t *reply = NULL;
        int st = ps_bench_server_api(w->svc, command, body, &reply);
        if (st != 200) {
            char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
            snprintf(w->error, sizeof w->error, "%s %lld: status %d %.180s", command, i, st,
                     text ? text : "");
            free(text);
            json_decref(reply);
            w->status = -1;
            return NULL;
        }
        json_decref(reply);
    }
    return NULL;
}

/* --operations more operations spread over --pools pools, 8 jobs each; 8 requests at a time
 * (they share commits, as concurrent clients do). */
int ps_bench_http_start_many(struct ps_service *svc, long long ops, long long pools)
{
    enum { WORKERS = 8 };
    for (int phase = 0; phase < 2; phase++) {
        struct setup_worker w[WORKERS];
        pthread_t th[WORKERS];
        int started = 0;
        for (int k = 0; k < WORKERS; k++) {
            w[k] = (struct setup_worker){svc, k, WORKERS, phase == 0 ? -1 : ops, pools, 0, ""};
            if (pthread_create(&th[k], NULL, setup_main, &w[k]) != 0)
                break;
            started++;
        }
        int status = started == WORKERS ? 0 : -1;
        for (int k = 0; k < started; k++) {
            pthread_join(th[k], NULL);
            if (w[k].status != 0 && status == 0) {
                ps_bench_error("http", "%s", w[k].error);
                status = -1;
            }
        }
        if (status != 0)
            return -1;
    }
    return 0;
}

/* The root's job metric of the CPU its jobs used (job_metrics.c), as /metrics writes it. */
#define ROOT_CPU_METRIC                                                                  \
    "poolsched_pool_metrics_aggregated_smoothed_cpu_usage_x100_total{tree=\"physical\","  \
    "pool=\"<Root>\"}"

int ps_bench_http(int argc, char **argv)
{
    long long nodes = 2000, seconds = 5, clients = 8, threads = 4, finish_pm = 20;
    long long operations = 0, pools = 1, period_ms = 0;
    const struct ps_bench_int_opt ints[] = {
        {"--nodes", 1, 10000, &nodes},
        {"--seconds", 1, 60, &seconds},
        {"--clients", 1, 64, &clients},
        {"--server-threads", 1, 64, &threads},
        {"--finish-per-mille", 0, 1000, &finish_pm},
        {"--operations", 0, 100000, &operations},
        {"--pools", 1, 10000, &pools},
        {"--update-period-ms", 0, 60000, &period_ms}
    };
    for (int i = 1; i < argc; i++) {
        const char *mode = NULL;
        if (ps_bench_option("http", argc, argv, &i, "--mode", &mode) < 0)
            return 2;
        if (mode && strcmp(mode, "start-op") == 0)
            return ps_bench_http_start_op(argc, argv);
        if (mode && strcmp(mode, "combined") == 0)
            return ps_bench_http_combined(argc, argv);
        if (mode && strcmp(mode, "heartbeats") != 0) {
            ps_bench_error("http", "--mode: unknown mode '%s' (heartbeats, start-op, combined)",
                           mode);
            return 2;
        }
    }
    static const char usage[] =
        "usage: poolsched bench http [--mode heartbeats] [--nodes 2000] [--seconds 5]\n"
        "                            [--clients 8]\n"
        "                            [--server-threads 4] [--finish-per-mille 20]\n"
        "                            [--operations 0 --pools 1 --update-period-ms 0]\n"
        "                            [--job-statistics]\n"
        "Heartbeats per second and latency of a scheduler on loopback (JSON).\n"
        "--job-statistics: every running job reports its CPU monitor statistics, as a node's\n"
        "agent does, which the service adds to its pools' job metrics.\n";
    bool job_statistics = false;
    int opt = ps_bench_http_mode_options(argc, argv, "heartbeats", ints,
                                         (int)(sizeof ints / sizeof *ints), usage,
                                         &job_statistics);
    if (opt != 0)
        return opt == 1 ? 0 : 2;
    if (clients > nodes)
        clients = nodes;
    struct ps_bench_http_env e = {0};
    struct ps_service *svc = NULL;
    int status = 1;
    struct ps_bench_node *ns = ps_bench_http_nodes_new(nodes);
    struct client *cl = calloc((size_t)clients, sizeof *cl);
    pthread_t *th = calloc((size_t)clients, sizeof *th);
    bool oom = !ns || !cl || !th;
    for (long long i = 0; !oom && job_statistics && i < nodes; i++)
        oom = !(ns[i].started = json_object());
    if (oom) {
        ps_bench_error("http", "out of memory");
        goto out;
    }
    if (ps_bench_http_env_start(&e, threads, period_ms) != 0)
        goto out;
    svc = e.svc;
    char url[128];
    /* one operation with more jobs than slots keeps every node full */
    int64_t running = ps_bench_http_fill(svc, ns, nodes, nodes * 4 * 4, operations, pools, url);
    if (running < 0)
        goto out;

    double fs_sum0 = 0, fs_count0 = 0, lk_sum0 = 0, lk_count0 = 0;
    ps_bench_http_histogram(svc, "poolsched_fair_share_update_duration_seconds", &fs_sum0, &fs_count0);
    ps_bench_http_histogram(svc, "poolsched_fair_share_update_locked_seconds", &lk_sum0, &lk_count0);
    double cpu0 = 0;
    ps_bench_http_series(svc, ROOT_CPU_METRIC, &cpu0);
    int64_t start = ps_clock_monotonic_ns();
    double commits0 = ps_bench_server_counter(svc, PS_BENCH_COMMITS);
    for (long long k = 0; k < clients; k++) {
        cl[k].svc = svc;
        snprintf(cl[k].url, sizeof cl[k].url, "%s", url);
        cl[k].nodes = ns;
        cl[k].first = (int)(k * nodes / clients);
        cl[k].count = (int)((k + 1) * nodes / clients - cl[k].first);
        cl[k].finish_rate = (double)finish_pm / 1000.0;
        cl[k].deadline_ns = start + seconds * 1000000000LL;
        cl[k].seed = (unsigned)k + 1;
        pthread_create(&th[k], NULL, client_main, &cl[k]);
    }
    for (long long k = 0; k < clients; k++)
        pthread_join(th[k], NULL);
    double wall = (double)(ps_clock_monotonic_ns() - start) / 1e9;
    double commits = ps_bench_server_counter(svc, PS_BENCH_COMMITS) - commits0;
    int errors = 0;
    struct ps_bench_samples all = {0};
    for (long long k = 0; k < clients; k++) {
        ps_bench_samples_merge(&all, &cl[k].lat);
        errors += cl[k].errors;
        if (cl[k].error[0] && errors)
            fprintf(stderr, "bench http: client %lld: %s\n", k, cl[k].error);
    }
    struct ps_bench_latency s;
    int n = all.n;
    bool some = ps_bench_samples_stats(&all, &s);
    free(all.v);
    if (!some) {
        ps_bench_error("http", "no heartbeat succeeded");
        goto out;
    }
    json_t *obj = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:I}",
                            "benchmark", "http", "nodes", (json_int_t)nodes, "clients",
                            (json_int_t)clients, "server_threads", (json_int_t)threads,
                            "running_jobs_at_start", (json_int_t)running, "heartbeats",
                            (json_int_t)n, "seconds", wall, "errors", (json_int_t)errors,
                            "heartbeats_per_second", n / wall, "latency_median_ms", s.median,
                            "latency_p99_ms", s.p99, "latency_max_ms", s.max,
                            "finish_per_heartbeat", (double)finish_pm / 1000.0, "commits",
                            (json_int_t)commits, "commits_per_second", commits / wall,
                            "jobs_finished", (json_int_t)ps_bench_server_counter(svc, PS_BENCH_JOBS_FINISHED));
    double fs_sum = 0, fs_count = 0;
    ps_bench_http_histogram(svc, "poolsched_fair_share_update_duration_seconds", &fs_sum, &fs_count);
    json_object_set_new(obj, "latency_p999_ms", json_real(s.p999));
    json_object_set_new(obj, "heartbeats_over_20ms", json_integer(s.over_20ms));
    json_object_set_new(obj, "operations", json_integer(operations + 1));
    json_object_set_new(obj, "pools", json_integer(pools));
    json_object_set_new(obj, "fair_share_updates", json_integer((json_int_t)(fs_count - fs_count0)));
    json_object_set_new(obj, "update_mean_ms",
                        ps_bench_http_mean_ms_since(svc, "poolsched_fair_share_update_duration_seconds",
                                      fs_sum0, fs_count0));
    json_object_set_new(obj, "update_locked_mean_ms",
                        ps_bench_http_mean_ms_since(svc, "poolsched_fair_share_update_locked_seconds",
                                      lk_sum0, lk_count0));
    /* what the run's job statistics added to the root's job metrics (0 without them) */
    double cpu = 0;
    json_object_set_new(obj, "job_statistics", json_boolean(job_statistics));
    json_object_set_new(obj, "root_aggregated_smoothed_cpu_usage_x100",
                        ps_bench_http_series(svc, ROOT_CPU_METRIC, &cpu)
                            ? json_integer((json_int_t)(cpu - cpu0))
                            : json_integer(0));
    status = ps_bench_print_json("http", obj);
out:
    ps_bench_http_env_stop(&e);
    ps_bench_http_nodes_free(ns, nodes);
    for (long long k = 0; cl && k < clients; k++)
        free(cl[k].lat.v);
    free(cl);
    free(th);
    return status;
}
