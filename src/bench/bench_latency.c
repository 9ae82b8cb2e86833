/* bench_latency.c — `poolsched bench latency`: how long a new job waits to start on an idle
 * cluster at the default settings, and what the idle cluster costs in CPU.
 *
 * For each binary given (--binary, repeatable; default this one) a local cluster of that binary
 * runs as processes: `BINARY scheduler` with its default configuration (heartbeat_period 5 s,
 * fair_share_update_period 1 s) on a loopback port, and --nodes `BINARY node` agents with their
 * default flags. With several binaries the runs alternate, --rounds times, so an old and a new
 * build are measured side by side under the same machine load. In each run one-job vanilla
 * operations are started one at a time, each after the previous one completed and a pause
 * drawn evenly from 0.1-5.1 s (one default heartbeat period: a submission right after a
 * job's completion would always fall at the same phase of the nodes' heartbeats); a job has
 * started when its command runs: it writes `date +%s.%N` to a file the bench polls every
 * millisecond. Submit-to-start is that time minus the time before start_op was sent. Then the
 * cluster idles for --idle-seconds and the CPU time (user + system) of the scheduler and agent
 * processes over that window is reported in ms per second.
 *
 * Bounded: every wait has a deadline (30 s per job); on any exit every process is stopped
 * (SIGTERM, then SIGKILL of its group) and the temporary directory removed.
 */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "platform/clock.h"
#include "platform/daemon.h"
#include "platform/file.h"
#include "platform/http_client.h"
#include "platform/job_process.h"
#include "platform/sandbox.h"

#define MAX_BINARIES 4
#define MAX_NODES 16
#define JOB_TIMEOUT_MS 30000

struct run {
    const char *binary;
    double *lat_ms;                 /* all samples of this binary, over its rounds */
    int n;
    double idle_sched_ms, idle_agents_ms, idle_seconds;   /* summed over rounds */
};

struct cluster {
    char dir[64];
    char url[64];
    struct ps_job_process procs[1 + MAX_NODES];   /* [0] the scheduler */
    int procs_started;
    struct ps_http_client *http;
};

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t mono_ms(void)
{
    return ps_clock_monotonic_ns() / 1000000;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static int spawn(struct cluster *c, const char *cmd, char **envp, struct ps_error *err)
{
    struct ps_job_process_spec spec = {
        .command = cmd, .shell = NULL, .cwd = c->dir, .envp = envp, .switch_user = false,
        .stdout_fd = -1, .stderr_fd = -1, .attach = NULL, .attach_ctx = NULL,
    };
    int rc = ps_job_process_spawn(&spec, &c->procs[c->procs_started], err);
    if (rc == 0)
        c->procs_started++;
    return rc;
}

/* POST /api/v1/<command> as the admin; the reply (caller frees) or NULL with err set. */
static json_t *api(struct cluster *c, const char *command, const char *body, struct ps_error *err)
{
    char url[128];
    snprintf(url, sizeof url, "%s/api/v1/%s", c->url, command);
    struct ps_http_result res;
    if (ps_http_client_request(c->http, "POST", url, "application/json", body, strlen(body), &res,
                               err) != 0)
        return NULL;
    json_t *doc = NULL;
    if (res.status != 200) {
        ps_error_set(err, PS_EIO, "%s: HTTP %ld: %.300s", command, res.status, res.body);
        return NULL;
    }
    if (ps_http_result_json(&res, url, &doc, err) != 0)
        return NULL;
    return doc;
}

static char *read_trimmed(const char *path, struct ps_error *err)
{
    char *text = NULL;
    size_t len = 0;
    if (ps_file_read(path, &text, &len, err) != 0)
        return NULL;
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
        text[--len] = '\0';
    return text;
}

static void cluster_stop(struct cluster *c)
{
    for (int i = c->procs_started - 1; i >= 0; i--)   /* the agents first, the scheduler last */
        if (c->procs[i].pid > 0 && !c->procs[i].reaped)
            ps_job_process_signal(&c->procs[i], SIGTERM, NULL);
    for (int i = 0; i < c->procs_started; i++) {
        bool exited = false;
        if (c->procs[i].pid > 0 && !c->procs[i].reaped)
            ps_job_process_wait(&c->procs[i], 10000, &exited, NULL);
        ps_job_process_release(&c->procs[i]);
    }
    c->procs_started = 0;
    ps_http_client_free(c->http);
    c->http = NULL;
    struct ps_error err;
    ps_error_init(&err);
    if (c->dir[0] && ps_sandbox_remove(c->dir, &err) != 0)
        fprintf(stderr, "bench latency: cleanup: %s\n", err.msg);
}

static int cluster_start(struct cluster *c, const char *binary, int nodes, struct ps_error *err)
{
    memset(c, 0, sizeof *c);
    snprintf(c->dir, sizeof c->dir, "/tmp/poolsched-bench-latency-XXXXXX");
    int rc;
    char path[256], cmd[4096], env_secret[600];
    char env_path[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    char *envp[] = {env_path, NULL, NULL};
    char *secret = NULL, *admin = NULL;
    if ((rc = ps_daemon_make_temp_dir(c->dir, 0755, err)) != 0)
        return rc;
    snprintf(path, sizeof path, "%s/out", c->dir);   /* jobs run as slot uids when root */
    if (mkdir(path, 0777) != 0 || chmod(path, 01777) != 0)
        return ps_error_set(err, PS_EIO, "cannot create %s", path);
    int port = free_port();
    if (port <= 0)
        return ps_error_set(err, PS_EIO, "no free loopback port");
    snprintf(c->url, sizeof c->url, "http://127.0.0.1:%d", port);
    snprintf(cmd, sizeof cmd, "exec '%s' scheduler --listen 127.0.0.1:%d --data-dir '%s/data' "
             "2>'%s/scheduler.log'", binary, port, c->dir, c->dir);
    if ((rc = spawn(c, cmd, envp, err)) != 0 || (rc = ps_http_client_new(&c->http, err)) != 0)
        return rc;
    ps_http_client_set_timeouts(c->http, 2000, 10000);
    char health[128];
    snprintf(health, sizeof health, "%s/healthz", c->url);
    int64_t deadline = mono_ms() + 15000;
    for (;;) {
        struct ps_http_result res;
        struct ps_error e;
        ps_error_init(&e);
        snprintf(path, sizeof path, "%s/data/admin_token", c->dir);
        if (ps_http_client_get(c->http, health, &res, &e) == 0 && res.status == 200 &&
            access(path, R_OK) == 0)
            break;
        if (mono_ms() > deadline)
            return ps_error_set(err, PS_EIO, "the scheduler did not come up (see %s/scheduler.log)",
                                c->dir);
        ps_daemon_wait(20);
    }
    snprintf(path, sizeof path, "%s/data/admin_token", c->dir);
    if (!(admin = read_trimmed(path, err)))
        return err->code;
    rc = ps_http_client_set_token(c->http, admin, err);
    free(admin);
    snprintf(path, sizeof path, "%s/data/cluster_secret", c->dir);
    if (rc != 0 || !(secret = read_trimmed(path, err)))
        return rc ? rc : err->code;
    snprintf(env_secret, sizeof env_secret, "POOLSCHED_CLUSTER_SECRET=%s", secret);
    free(secret);
    envp[1] = env_secret;
    for (int i = 0; i < nodes; i++) {
        snprintf(cmd, sizeof cmd, "exec '%s' node --scheduler %s --node-id lat-%d-%ld "
                 "--resources cpu=2,memory=4G,user_slots=4 --work-dir '%s/n%d' "
                 "2>'%s/node-%d.log'", binary, c->url, i, ps_daemon_pid(), c->dir, i, c->dir, i);
        if ((rc = spawn(c, cmd, envp, err)) != 0)
            return rc;
    }
    return 0;
}

/* Starts a one-job operation whose job writes its start time to out/<name>; returns its
 * submit-to-start in ms and waits for the operation to complete. */
static int one_job(struct cluster *c, const char *name, double *lat_ms, struct ps_error *err)
{
    char body[1024], file[256];
    snprintf(file, sizeof file, "%s/out/%s", c->dir, name);
    snprintf(body, sizeof body,
             "{\"operation_type\": \"vanilla\", \"spec\": {\"tasks\": {\"t\": {\"command\": "
             "\"date +%%s.%%N > %s.tmp && mv %s.tmp %s\", \"job_count\": 1, \"cpu_limit\": 0.5, "
             "\"memory_limit\": 134217728}}}}", file, file, file);
    double submit = wall_s();
    json_t *reply = api(c, "start_op", body, err);
    if (!reply)
        return err->code;
    char get[256];
    snprintf(get, sizeof get, "{\"operation_id\": \"%s\"}",
             json_string_value(json_object_get(reply, "operation_id")));
    json_decref(reply);
    int64_t deadline = mono_ms() + JOB_TIMEOUT_MS;
    while (access(file, R_OK) != 0) {
        if (mono_ms() > deadline)
            return ps_error_set(err, PS_EIO, "job %s did not start within %d ms", name,
                                JOB_TIMEOUT_MS);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    char *text = read_trimmed(file, err);
    if (!text)
        return err->code;
    *lat_ms = (atof(text) - submit) * 1000.0;
    free(text);
    for (;;) {
        if (!(reply = api(c, "get_operation", get, err)))
            return err->code;
        const char *state = json_string_value(json_object_get(reply, "state"));
        bool done = state && strcmp(state, "running") != 0 && strcmp(state, "pending") != 0;
        bool ok = state && strcmp(state, "completed") == 0;
        json_decref(reply);
        if (done && !ok)
            return ps_error_set(err, PS_EIO, "operation of job %s ended %s", name, state);
        if (done)
            return 0;
        if (mono_ms() > deadline)
            return ps_error_set(err, PS_EIO, "operation of job %s did not complete", name);
        ps_daemon_wait(10);
    }
}

/* CPU time of a process in ms, the sum over its threads' /proc/<pid>/task/<tid>/schedstat
 * (nanoseconds; /proc/<pid>/stat counts 10 ms ticks, too coarse for an idle process); the
 * agents' jobs are their children and not counted. */
static double process_cpu_ms(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    double sum = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char file[128];
        snprintf(file, sizeof file, "/proc/%ld/task/%.20s/schedstat", (long)pid, e->d_name);
        FILE *f = fopen(file, "r");
        unsigned long long ns = 0;
        if (f && fscanf(f, "%llu", &ns) == 1)
            sum += (double)ns / 1e6;
        if (f)
            fclose(f);
    }
    closedir(d);
    return sum;
}

static double cpu_ms(const struct cluster *c, int from, int to)
{
    double sum = 0;
    for (int i = from; i < to && i < c->procs_started; i++)
        sum += process_cpu_ms(c->procs[i].pid);
    return sum;
}

/* One run of binary: jobs samples, then the idle window. */
static int measure(struct run *r, int nodes, int jobs, int idle_s, uint64_t *seed,
                   struct ps_error *err)
{
    struct cluster c;
    int rc = cluster_start(&c, r->binary, nodes, err);
    double warm = 0;
    if (rc == 0)   /* registration and the first job's setup stay out of the figures */
        rc = one_job(&c, "warmup", &warm, err);
    for (int i = 0; rc == 0 && i < jobs; i++) {
        *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int pause = 100 + (int)((*seed >> 33) % 5000);
        ps_daemon_wait(pause);
        char name[32];
        snprintf(name, sizeof name, "s%d", i);
        rc = one_job(&c, name, &r->lat_ms[r->n], err);
        if (rc == 0)
            r->n++;
    }
    if (rc == 0) {
        ps_daemon_wait(2000);   /* the last job's reports settle */
        double s0 = cpu_ms(&c, 0, 1), a0 = cpu_ms(&c, 1, 1 + nodes);
        int64_t t0 = mono_ms();
        ps_daemon_wait((int64_t)idle_s * 1000);
        double secs = (double)(mono_ms() - t0) / 1000.0;
        r->idle_sched_ms += cpu_ms(&c, 0, 1) - s0;
        r->idle_agents_ms += cpu_ms(&c, 1, 1 + nodes) - a0;
        r->idle_seconds += secs;
    }
    if (rc != 0) {
        char path[128];
        snprintf(path, sizeof path, "%s/node-0.log", c.dir);
        char *log = NULL;
        size_t len = 0;
        if (ps_file_read(path, &log, &len, NULL) == 0)
            fprintf(stderr, "---- node 0 (last lines)\n%s\n", log + (len > 2000 ? len - 2000 : 0));
        free(log);
    }
    cluster_stop(&c);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double rank(const double *v, int n, double q)
{
    int k = (int)ceil(q * n) - 1;
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

int ps_bench_latency(int argc, char **argv)
{
    long long jobs = 20, nodes = 2, rounds = 1, idle_s = 20;
    const struct ps_bench_int_opt ints[] = {
        {"--jobs", 1, 10000, &jobs},
        {"--nodes", 1, MAX_NODES, &nodes},
        {"--rounds", 1, 100, &rounds},
        {"--idle-seconds", 1, 3600, &idle_s},
    };
    struct run runs[MAX_BINARIES];
    static char resolved[MAX_BINARIES][PATH_MAX];
    int nbin = 0;
    char self[4096];
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if ((m = ps_bench_int_options("latency", argc, argv, &i, ints,
                                      (int)(sizeof ints / sizeof *ints))) != 0) {
            if (m < 0)
                return 2;
        } else if ((m = ps_bench_option("latency", argc, argv, &i, "--binary", &v)) != 0) {
            if (m < 0)
                return 2;
            if (nbin == MAX_BINARIES) {
                ps_bench_error("latency", "--binary: at most %d", MAX_BINARIES);
                return 2;
            }
            /* absolute: the clusters run in their own directories */
            if (access(v, X_OK) != 0 || !realpath(v, resolved[nbin])) {
                ps_bench_error("latency", "--binary: '%s' is not an executable file", v);
                return 2;
            }
            runs[nbin] = (struct run){.binary = resolved[nbin]};
            nbin++;
        } else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: poolsched bench latency [--binary PATH]... [--jobs 20] [--nodes 2]\n"
                   "                               [--rounds 1] [--idle-seconds 20]\n"
                   "Submit-to-start latency of one-job operations on an idle local cluster of\n"
                   "each binary (default: this one) at the default settings (5 s heartbeat, 1 s\n"
                   "fair share period), runs alternating between binaries, and the idle CPU of\n"
                   "its scheduler and agents (JSON).\n");
            return 0;
        } else {
            ps_bench_error("latency", "unknown option '%s'", argv[i]);
            return 2;
        }
    }
    struct ps_error err;
    ps_error_init(&err);
    if (nbin == 0) {
        if (ps_daemon_self_exe(self, sizeof self, &err) != 0) {
            ps_bench_error("latency", "%s", err.msg);
            return 1;
        }
        runs[nbin++] = (struct run){.binary = self};
    }
    int status = 1;
    for (int b = 0; b < nbin; b++)
        if (!(runs[b].lat_ms = calloc((size_t)(jobs * rounds), sizeof *runs[b].lat_ms))) {
            ps_bench_error("latency", "out of memory");
            goto out;
        }
    uint64_t seed = 17;
    for (int round = 0; round < rounds; round++)
        for (int b = 0; b < nbin; b++)
            if (measure(&runs[b], (int)nodes, (int)jobs, (int)idle_s, &seed, &err) != 0) {
                ps_bench_error("latency", "%s: %s", runs[b].binary, err.msg);
                goto out;
            }
    json_t *builds = json_array();
    for (int b = 0; b < nbin; b++) {
        struct run *r = &runs[b];
        qsort(r->lat_ms, (size_t)r->n, sizeof *r->lat_ms, cmp_double);
        double mean = 0;
        for (int i = 0; i < r->n; i++)
            mean += r->lat_ms[i] / r->n;
        json_array_append_new(
            builds,
            json_pack("{s:s, s:i, s:{s:f, s:f, s:f, s:f, s:f}, s:{s:f, s:f, s:f}, s:f}",
                      "binary", r->binary, "samples", r->n, "submit_to_start_ms", "min",
                      rank(r->lat_ms, r->n, 0), "p50", rank(r->lat_ms, r->n, 0.5), "p99",
                      rank(r->lat_ms, r->n, 0.99), "max", r->lat_ms[r->n - 1], "mean", mean,
                      "idle_cpu_ms_per_s", "scheduler", r->idle_sched_ms / r->idle_seconds,
                      "agents", r->idle_agents_ms / r->idle_seconds, "total",
                      (r->idle_sched_ms + r->idle_agents_ms) / r->idle_seconds,
                      "idle_seconds", r->idle_seconds));
    }
    json_t *obj = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:i, s:o}", "benchmark", "latency",
                            "settings", "defaults: heartbeat_period 5000 ms, "
                            "fair_share_update_period 1000 ms",
                            "nodes", (json_int_t)nodes, "jobs_per_run", (json_int_t)jobs,
                            "rounds", (json_int_t)rounds, "idle_seconds_per_run",
                            (json_int_t)idle_s, "target_ms", 100, "builds", builds);
    status = ps_bench_print_json("latency", obj);
out:
    for (int b = 0; b < nbin; b++)
        free(runs[b].lat_ms);
    return status;
}
