/* bench_http_load.c — `bench http --mode start-op` and `bench http --mode combined` against a
 * real scheduler service in this process (HTTP on loopback, a real store with group commit, in
 * a temporary data dir removed at the end), as bench_http.c's heartbeat mode.
 *
 * start-op: start_op/s and latency from --clients concurrent clients (one connection each),
 * then from one client over one kept-alive connection, --seconds each. Every start_op is
 * durable before it answers (journal.c): concurrent ones share commits.
 *
 * combined: the service with everything at once (issue 17): --nodes virtual nodes heartbeating
 * every --heartbeat-period-ms (spread evenly over the period, paced: a late answer does not
 * make later heartbeats come sooner), jobs finishing at --churn jobs/s in total, --operations
 * operations of 8 jobs in --pools pools beside one large operation, fair share updates every
 * --update-period-ms, and API reads (get a pool, its orchid fair_share_info, list_operations
 * of a pool) at --reads/s and writes (set a pool's weight, start_op, abort_op of that
 * operation) at --writes/s. Reports heartbeat latency, the update's duration and its part
 * under the service lock, API latency, achieved rates against the requested ones and the load
 * generator's CPU (its threads' CPU time), so a saturated generator shows.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "bench/bench_http.h"
#include "platform/clock.h"

/* {count, median_ms, p99_ms, p999_ms, max_ms, over_20ms}; sorts s. */
static json_t *stats_json(struct ps_bench_samples *s)
{
    struct ps_bench_latency l;
    if (!ps_bench_samples_stats(s, &l))
        return json_pack("{s:i}", "count", 0);
    return json_pack("{s:i, s:f, s:f, s:f, s:f, s:i}", "count", s->n, "median_ms", l.median,
                     "p99_ms", l.p99, "p999_ms", l.p999, "max_ms", l.max, "over_20ms",
                     l.over_20ms);
}

static void sleep_until(int64_t ns)
{
    int64_t now = ps_clock_monotonic_ns();
    if (ns <= now)
        return;
    struct timespec d = {(time_t)((ns - now) / 1000000000LL), (long)((ns - now) % 1000000000LL)};
    nanosleep(&d, NULL);
}


static struct ps_http_client *client_new(const char *token)
{
    struct ps_http_client *c = NULL;
    if (ps_http_client_new(&c, NULL) != 0 || ps_http_client_set_token(c, token, NULL) != 0) {
        ps_http_client_free(c);
        return NULL;
    }
    return c;
}

/* POST api/v1/COMMAND with body (stolen); 0 and the reply's operation_id (when there is one,
 * into id) or -1 with error set. */
static int call(struct ps_http_client *c, const char *api, const char *command, json_t *body,
                char *id, size_t id_size, char *error)
{
    char url[192];
    snprintf(url, sizeof url, "%s%s", api, command);
    struct ps_http_result res;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_http_client_post_json(c, url, body, &res, &err);
    json_decref(body);
    if (rc != 0 || res.status != 200) {
        snprintf(error, 256, "%s: %.200s", command, rc ? err.msg : res.body);
        return -1;
    }
    if (id) {
        json_t *out = json_loadb(res.body, res.body_len, 0, NULL);
        const char *s = json_string_value(json_object_get(out, "operation_id"));
        snprintf(id, id_size, "%s", s ? s : "");
        json_decref(out);
    }
    return 0;
}

static json_t *small_op(const char *pool)
{
    json_t *task = json_pack("{s:s, s:i, s:i}", "command", "true", "job_count", 1,
                             "memory_limit", 104857600);
    json_t *spec = json_pack("{s:{s:o}}", "tasks", "t", task);
    if (pool)
        json_object_set_new(spec, "pool", json_string(pool));
    return json_pack("{s:o}", "spec", spec);
}

/* ---- start-op ------------------------------------------------------------------------------ */

struct starter {
    const char *api, *token;
    long long pools, next;   /* starts go to pools bench-<next>, bench-<next + clients>, ... */
    int step;
    int64_t deadline_ns;
    struct ps_bench_samples lat;
    int errors;
    char error[256];
};

static void *starter_main(void *arg)
{
    struct starter *s = arg;
    struct ps_http_client *c = client_new(s->token);
    if (!c) {
        snprintf(s->error, sizeof s->error, "cannot create an HTTP client");
        s->errors++;
        return NULL;
    }
    char id[64], pool[32];
    while (ps_clock_monotonic_ns() < s->deadline_ns) {
        snprintf(pool, sizeof pool, "bench-%05lld", s->next % s->pools);
        s->next += s->step;
        int64_t a = ps_clock_monotonic_ns();
        if (call(c, s->api, "start_op", small_op(pool), id, sizeof id, s->error) != 0) {
            if (++s->errors > 10)
                break;
            continue;
        }
        ps_bench_samples_push(&s->lat, (double)(ps_clock_monotonic_ns() - a) / 1e6);
    }
    ps_http_client_free(c);
    return NULL;
}

/* clients concurrent starters for seconds: {clients, operations, operations_per_second,
 * latency..., commits, operations_per_commit, errors, process_cpu_percent}. */
static json_t *start_op_phase(struct ps_bench_http_env *e, int clients, long long seconds, long long pools,
                              long long *next)
{
    struct starter *st = calloc((size_t)clients, sizeof *st);
    pthread_t *th = calloc((size_t)clients, sizeof *th);
    if (!st || !th) {
        free(st);
        free(th);
        return NULL;
    }
    double commits0 = ps_bench_server_counter(e->svc, PS_BENCH_COMMITS);
    int64_t cpu0 = ps_clock_process_cpu_ns(), start = ps_clock_monotonic_ns();
    int started = 0;
    for (int k = 0; k < clients; k++) {
        st[k] = (struct starter){.api = e->api, .token = ps_bench_server_admin_token(e->svc), .pools = pools,
                                 .next = *next + k, .step = clients,
                                 .deadline_ns = start + seconds * 1000000000LL};
        if (pthread_create(&th[k], NULL, starter_main, &st[k]) != 0)
            break;
        started++;
    }
    struct ps_bench_samples all = {0};
    int errors = 0;
    for (int k = 0; k < started; k++) {
        pthread_join(th[k], NULL);
        if (st[k].next > *next)
            *next = st[k].next;
        ps_bench_samples_merge(&all, &st[k].lat);
        errors += st[k].errors;
        if (st[k].errors)
            fprintf(stderr, "bench http: start_op client %d: %s\n", k, st[k].error);
        free(st[k].lat.v);
    }
    double wall = (double)(ps_clock_monotonic_ns() - start) / 1e9;
    double cpu = (double)(ps_clock_process_cpu_ns() - cpu0) / 1e9;
    double commits = ps_bench_server_counter(e->svc, PS_BENCH_COMMITS) - commits0;
    int n = all.n;
    json_t *o = json_pack("{s:i, s:i, s:f, s:o, s:I, s:f, s:i, s:f}", "clients", started,
                          "operations", n, "operations_per_second", n / wall, "latency",
                          stats_json(&all), "commits", (json_int_t)commits,
                          "operations_per_commit", commits > 0 ? n / commits : 0.0, "errors",
                          errors, "process_cpu_percent", 100.0 * cpu / wall);
    free(all.v);
    free(st);
    free(th);
    return o;
}

/* Each mode's usage; `bench http --help` shows all. */
static const char start_op_usage[] =
    "usage: poolsched bench http --mode start-op [--clients 8] [--seconds 5]\n"
    "                            [--pools 1000] [--server-threads 4]\n"
    "start_op/s and latency from concurrent clients, then from one kept-alive\n"
    "client (JSON).\n";

static const char combined_usage[] =
    "usage: poolsched bench http --mode combined [--nodes 10000]\n"
    "         [--heartbeat-period-ms 5000] [--churn 1000] [--operations 10000]\n"
    "         [--pools 1000] [--update-period-ms 200] [--reads 30] [--writes 15]\n"
    "         [--clients 16] [--seconds 20] [--server-threads 4]\n"
    "Paced heartbeats, job churn, fair share updates and API requests at once;\n"
    "latency, update durations, achieved rates and the generator's CPU (JSON).\n";

/* The options of one --mode: the mode itself (already chosen), the integer options, --help.
 * 0 to run, 1 after --help, 2 on a bad option (reported). */
int ps_bench_http_mode_options(int argc, char **argv, const char *mode,
                               const struct ps_bench_int_opt *ints, int count, const char *usage,
                               bool *job_statistics)
{
    for (int i = 1; i < argc; i++) {
        int r;
        if (strncmp(argv[i], "--mode", 6) == 0) {
            if (strcmp(argv[i], "--mode") == 0)
                i++;
        } else if ((r = ps_bench_int_options("http", argc, argv, &i, ints, count)) != 0) {
            if (r < 0)
                return 2;
        } else if (job_statistics && strcmp(argv[i], "--job-statistics") == 0) {
            *job_statistics = true;
        } else if (strcmp(argv[i], "--help") == 0) {
            fputs(usage, stdout);
            if (strcmp(mode, "heartbeats") == 0) {   /* the default: `bench http --help` */
                fputs(start_op_usage, stdout);
                fputs(combined_usage, stdout);
            }
            return 1;
        } else {
            ps_bench_error("http", "--mode %s: unknown option '%s'", mode, argv[i]);
            return 2;
        }
    }
    return 0;
}

int ps_bench_http_start_op(int argc, char **argv)
{
    long long seconds = 5, clients = 8, threads = 4, pools = 1000;
    const struct ps_bench_int_opt ints[] = {
        {"--pools", 1, 10000, &pools},
        {"--seconds", 1, 60, &seconds},
        {"--clients", 1, 64, &clients},
        {"--server-threads", 1, 64, &threads},
    };
    int opt = ps_bench_http_mode_options(argc, argv, "start-op", ints,
                                         (int)(sizeof ints / sizeof *ints), start_op_usage, NULL);
    if (opt != 0)
        return opt == 1 ? 0 : 2;
    struct ps_bench_http_env e = {0};
    int status = 1;
    long long next = 0;
    if (ps_bench_http_env_start(&e, threads, 0) == 0 && ps_bench_http_start_many(e.svc, 0, pools) == 0) {
        json_t *many = start_op_phase(&e, (int)clients, seconds, pools, &next);
        json_t *one = start_op_phase(&e, 1, seconds, pools, &next);
        json_t *obj = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o*, s:o*}", "benchmark", "http",
                                "mode", "start-op", "pools", (json_int_t)pools,
                                "server_threads", (json_int_t)threads, "seconds",
                                (json_int_t)seconds, "concurrent_clients", many,
                                "one_client_kept_alive", one);
        status = ps_bench_print_json("http", obj);
    }
    ps_bench_http_env_stop(&e);
    return status;
}

/* ---- combined ------------------------------------------------------------------------------ */


struct sender {
    struct ps_service *svc;
    char url[128];
    struct ps_bench_node *nodes;
    long long node_count, first, step;   /* nodes first, first + step, ... */
    int64_t start_ns, deadline_ns, period_ns;
    double finish;                       /* jobs finished per heartbeat */
    struct ps_bench_samples lat, late;
    struct ps_bench_samples lat_plain, lat_commit;   /* without / with finished jobs (a commit) */
    int errors;
    int64_t cpu_ns;
    unsigned seed;
    char error[256];
};

/* Node i beats at start + i * period / nodes + r * period, r = 0, 1, ... */
static void *sender_main(void *arg)
{
    struct sender *s = arg;
    struct ps_http_client *c = client_new(ps_bench_server_cluster_secret(s->svc));
    for (int64_t r = 0; c && s->errors <= 10; r++) {
        bool any = false;
        for (long long i = s->first; i < s->node_count && s->errors <= 10; i += s->step) {
            int64_t due = s->start_ns + i * s->period_ns / s->node_count + r * s->period_ns;
            if (due >= s->deadline_ns)
                break;
            any = true;
            sleep_until(due);
            int64_t a = ps_clock_monotonic_ns();
            int reported = ps_bench_http_beat(c, s->url, &s->nodes[i], s->finish, &s->seed,
                                              s->error);
            if (reported < 0) {
                s->errors++;
                continue;
            }
            double ms = (double)(ps_clock_monotonic_ns() - a) / 1e6;
            ps_bench_samples_push(&s->lat, ms);
            ps_bench_samples_push(reported > 0 ? &s->lat_commit : &s->lat_plain, ms);
            ps_bench_samples_push(&s->late, (double)(a - due) / 1e6);
        }
        if (!any)
            break;
    }
    ps_http_client_free(c);
    s->cpu_ns = ps_clock_thread_cpu_ns();
    return NULL;
}

struct api_client {
    const char *api, *token;
    bool writes;
    long long per_second, pools;
    int64_t start_ns, deadline_ns;
    struct ps_bench_samples lat;
    int errors;
    int64_t cpu_ns, end_ns;
    unsigned seed;
    char error[256];
};

/* Reads cycle get pool / orchid fair_share_info of the pool / list_operations of the pool;
 * writes cycle set @weight / start_op / abort_op of the operation just started. */
static void *api_main(void *arg)
{
    struct api_client *a = arg;
    struct ps_http_client *c = client_new(a->token);
    char id[64] = "", path[256], pool[32];
    for (int64_t k = 0; c && a->per_second > 0 && a->errors <= 10; k++) {
        int64_t due = a->start_ns + k * 1000000000LL / a->per_second;
        if (due >= a->deadline_ns)
            break;
        sleep_until(due);
        snprintf(pool, sizeof pool, "bench-%05lld", (long long)(rand_r(&a->seed) % a->pools));
        const char *command;
        json_t *body;
        bool want_id = false;
        switch (k % 3 + (a->writes ? 3 : 0)) {
        case 0:
            command = "get";
            snprintf(path, sizeof path, "//sys/pool_trees/physical/%s", pool);
            body = json_pack("{s:s}", "path", path);
            break;
        case 1:
            command = "get";
            snprintf(path, sizeof path,
                     "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/"
                     "fair_share_info/pools/%s", pool);
            body = json_pack("{s:s}", "path", path);
            break;
        case 2:
            command = "list_operations";
            body = json_pack("{s:s, s:i}", "pool", pool, "limit", 20);
            break;
        case 3:
            command = "set";
            snprintf(path, sizeof path, "//sys/pool_trees/physical/%s/@weight", pool);
            body = json_pack("{s:s, s:f}", "path", path, "value", 1.0 + rand_r(&a->seed) % 3);
            break;
        case 4:
            command = "start_op";
            body = small_op(pool);
            want_id = true;
            break;
        default:
            command = "abort_op";
            body = json_pack("{s:s}", "operation_id", id);
            break;
        }
        int64_t t = ps_clock_monotonic_ns();
        if (call(c, a->api, command, body, want_id ? id : NULL, sizeof id, a->error) != 0) {
            a->errors++;
            continue;
        }
        ps_bench_samples_push(&a->lat, (double)(ps_clock_monotonic_ns() - t) / 1e6);
    }
    ps_http_client_free(c);
    a->cpu_ns = ps_clock_thread_cpu_ns();
    a->end_ns = ps_clock_monotonic_ns();
    return NULL;
}

int ps_bench_http_combined(int argc, char **argv)
{
    long long nodes = 10000, period_ms = 5000, churn = 1000, operations = 10000, pools = 1000;
    long long update_ms = 200, reads = 30, writes = 15, senders = 16, seconds = 20, threads = 4;
    const struct ps_bench_int_opt ints[] = {
        {"--nodes", 1, 10000, &nodes},
        {"--heartbeat-period-ms", 100, 60000, &period_ms},
        {"--churn", 0, 100000, &churn},
        {"--operations", 0, 100000, &operations},
        {"--pools", 1, 10000, &pools},
        {"--update-period-ms", 10, 60000, &update_ms},
        {"--reads", 0, 10000, &reads},
        {"--writes", 0, 10000, &writes},
        {"--clients", 1, 64, &senders},
        {"--seconds", 1, 120, &seconds},
        {"--server-threads", 1, 64, &threads},
    };
    int opt = ps_bench_http_mode_options(argc, argv, "combined", ints,
                                         (int)(sizeof ints / sizeof *ints), combined_usage, NULL);
    if (opt != 0)
        return opt == 1 ? 0 : 2;
    if (senders > nodes)
        senders = nodes;
    struct ps_bench_http_env e = {0};
    int status = 1;
    struct ps_bench_node *ns = ps_bench_http_nodes_new(nodes);
    struct sender *sd = calloc((size_t)senders, sizeof *sd);
    pthread_t *th = calloc((size_t)senders + 2, sizeof *th);
    struct api_client ac[2];
    memset(ac, 0, sizeof ac);
    int64_t setup_start = ps_clock_monotonic_ns();
    if (!ns || !sd || !th || ps_bench_http_env_start(&e, threads, update_ms) != 0)
        goto out;
    char url[128];
    /* one large operation keeps the nodes busy whatever the pools' operations get */
    int64_t running = ps_bench_http_fill(e.svc, ns, nodes, nodes * 4 + churn * seconds * 2,
                                         operations, pools, url);
    if (running < 0)
        goto out;
    double setup_s = (double)(ps_clock_monotonic_ns() - setup_start) / 1e9;

    double fs_sum0 = 0, fs_count0 = 0, lk_sum0 = 0, lk_count0 = 0;
    ps_bench_http_histogram(e.svc, "poolsched_fair_share_update_duration_seconds", &fs_sum0,
                            &fs_count0);
    ps_bench_http_histogram(e.svc, "poolsched_fair_share_update_locked_seconds", &lk_sum0,
                            &lk_count0);
    double finished0 = ps_bench_server_counter(e.svc, PS_BENCH_JOBS_FINISHED);
    double loadavg[1] = {0};
    if (getloadavg(loadavg, 1) < 1)
        loadavg[0] = -1;
    int64_t start = ps_clock_monotonic_ns() + 100000000LL;
    int64_t deadline = start + seconds * 1000000000LL;
    int64_t cpu0 = ps_clock_process_cpu_ns();
    int started = 0;
    for (long long k = 0; k < senders; k++) {
        sd[k].svc = e.svc;
        snprintf(sd[k].url, sizeof sd[k].url, "%s", url);
        sd[k].nodes = ns;
        sd[k].node_count = nodes;
        sd[k].first = k;
        sd[k].step = senders;
        sd[k].start_ns = start;
        sd[k].deadline_ns = deadline;
        sd[k].period_ns = period_ms * 1000000LL;
        sd[k].finish = (double)churn * (double)period_ms / 1000.0 / (double)nodes;
        sd[k].seed = (unsigned)k + 1;
        if (pthread_create(&th[started], NULL, sender_main, &sd[k]) != 0)
            break;
        started++;
    }
    for (int k = 0; k < 2; k++) {
        ac[k] = (struct api_client){.api = e.api, .token = ps_bench_server_admin_token(e.svc), .writes = k == 1,
                                    .per_second = k ? writes : reads, .pools = pools,
                                    .start_ns = start, .deadline_ns = deadline,
                                    .seed = (unsigned)k + 100};
        if (pthread_create(&th[started], NULL, api_main, &ac[k]) != 0)
            break;
        started++;
    }
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    double wall = (double)(ps_clock_monotonic_ns() - start) / 1e9;
    double cpu = (double)(ps_clock_process_cpu_ns() - cpu0) / 1e9;
    double finished = ps_bench_server_counter(e.svc, PS_BENCH_JOBS_FINISHED) - finished0;
    struct ps_bench_samples lat = {0}, late = {0}, plain = {0}, commit = {0};
    int errors = 0;
    int64_t gen_cpu = 0;
    for (long long k = 0; k < senders; k++) {
        ps_bench_samples_merge(&lat, &sd[k].lat);
        ps_bench_samples_merge(&late, &sd[k].late);
        ps_bench_samples_merge(&plain, &sd[k].lat_plain);
        ps_bench_samples_merge(&commit, &sd[k].lat_commit);
        errors += sd[k].errors;
        gen_cpu += sd[k].cpu_ns;
        if (sd[k].errors)
            fprintf(stderr, "bench http: node client %lld: %s\n", k, sd[k].error);
    }
    for (int k = 0; k < 2; k++) {
        errors += ac[k].errors;
        gen_cpu += ac[k].cpu_ns;
        if (ac[k].errors)
            fprintf(stderr, "bench http: api %s: %s\n", k ? "writes" : "reads", ac[k].error);
    }
    int beats = lat.n, nreads = ac[0].lat.n, nwrites = ac[1].lat.n;
    /* the API clients' own time: the heartbeats' may run on past the deadline when late */
    double api_wall[2];
    for (int k = 0; k < 2; k++)
        api_wall[k] = (double)((ac[k].end_ns > deadline ? ac[k].end_ns : deadline) - start) / 1e9;
    double fs_sum = 0, fs_count = 0;
    ps_bench_http_histogram(e.svc, "poolsched_fair_share_update_duration_seconds", &fs_sum,
                            &fs_count);
    json_t *obj = json_pack(
        "{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:I}", "benchmark", "http", "mode",
        "combined", "nodes", (json_int_t)nodes, "heartbeat_period_ms", (json_int_t)period_ms,
        "operations", (json_int_t)(operations + 1), "pools", (json_int_t)pools,
        "update_period_ms", (json_int_t)update_ms, "server_threads", (json_int_t)threads,
        "seconds", wall, "setup_seconds", setup_s, "running_jobs_at_start", (json_int_t)running);
    json_object_set_new(obj, "requested",
                        json_pack("{s:f, s:I, s:I, s:I}", "heartbeats_per_second",
                                  (double)nodes * 1000.0 / (double)period_ms, "jobs_per_second",
                                  (json_int_t)churn, "reads_per_second", (json_int_t)reads,
                                  "writes_per_second", (json_int_t)writes));
    json_object_set_new(obj, "achieved",
                        json_pack("{s:f, s:f, s:f, s:f}", "heartbeats_per_second", beats / wall,
                                  "jobs_per_second", finished / wall, "reads_per_second",
                                  nreads / api_wall[0], "writes_per_second",
                                  nwrites / api_wall[1]));
    json_object_set_new(obj, "heartbeat", stats_json(&lat));
    /* a heartbeat that reports a finished job waits for its group commit (fsync) */
    json_object_set_new(obj, "heartbeat_without_finished_jobs", stats_json(&plain));
    json_object_set_new(obj, "heartbeat_with_finished_jobs", stats_json(&commit));
    json_object_set_new(obj, "heartbeat_send_late", stats_json(&late));
    json_object_set_new(
        obj, "update",
        json_pack("{s:I, s:o, s:o}", "count", (json_int_t)(fs_count - fs_count0), "mean_ms",
                  ps_bench_http_mean_ms_since(e.svc,
                                              "poolsched_fair_share_update_duration_seconds",
                                              fs_sum0, fs_count0),
                  "locked_mean_ms",
                  ps_bench_http_mean_ms_since(e.svc, "poolsched_fair_share_update_locked_seconds",
                                              lk_sum0, lk_count0)));
    json_object_set_new(obj, "api_read", stats_json(&ac[0].lat));
    json_object_set_new(obj, "api_write", stats_json(&ac[1].lat));
    json_object_set_new(obj, "errors", json_integer(errors));
    json_object_set_new(obj, "load_generator_cpu_percent", json_real(100.0 * (double)gen_cpu / 1e9 / wall));
    json_object_set_new(obj, "process_cpu_percent", json_real(100.0 * cpu / wall));
    json_object_set_new(obj, "loadavg_at_start", json_real(loadavg[0]));
    free(lat.v);
    free(late.v);
    free(plain.v);
    free(commit.v);
    status = ps_bench_print_json("http", obj);
out:
    ps_bench_http_env_stop(&e);
    ps_bench_http_nodes_free(ns, nodes);
    for (long long k = 0; sd && k < senders; k++) {
        free(sd[k].lat.v);
        free(sd[k].late.v);
        free(sd[k].lat_plain.v);
        free(sd[k].lat_commit.v);
    }
    free(ac[0].lat.v);
    free(ac[1].lat.v);
    free(sd);
    free(th);
    return status;
}
