/* bench_e2e.c — `poolsched bench e2e`: completed jobs per second of a whole local cluster.
 *
 * A scheduler service runs in this process (loopback, temporary data dir) and K node agents run
 * as child processes (`poolsched node`, this same binary), each in its own process group. One
 * vanilla operation of N jobs running `true` is started; the figure is N / (time from start_op
 * to the operation's completion), with the time to the first completed job beside it. Every job
 * is real: fork/exec of sh, sandbox, output capture, cgroup when the machine has usable ones
 * (--no-cgroups to compare), reported and acknowledged through heartbeats.
 *
 * Bounded: --timeout seconds (default 300) for the whole run; on any exit every node agent is
 * stopped (SIGTERM, then SIGKILL of its group) and the temporary directory removed.
 * Target (performance.md): >= 500 jobs/s for 10,000 jobs on 4 nodes.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "platform/clock.h"
#include "platform/daemon.h"
#include "platform/job_process.h"
#include "platform/procfs.h"
#include "platform/sandbox.h"
#include "platform/file.h"
#include "server/bench_hooks.h"

#define MAX_NODES 16

static int64_t now_ms(void)
{
    return ps_clock_monotonic_ns() / 1000000;
}

/* Calls an API command in-process as the admin; returns the reply (caller frees) or NULL. */
static json_t *api(struct ps_service *svc, const char *command, const char *body)
{
    json_t *reply = NULL;
    int st = ps_bench_server_api(svc, command, body, &reply);
    if (st != 200) {
        char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
        ps_bench_error("e2e", "%s: HTTP %d %s", command, st, text ? text : "");
        free(text);
        json_decref(reply);
        return NULL;
    }
    return reply;
}

static void stop_nodes(struct ps_job_process *procs, int count)
{
    for (int i = 0; i < count; i++)
        if (procs[i].pid > 0 && !procs[i].reaped)
            ps_job_process_signal(&procs[i], SIGTERM, NULL);
    for (int i = 0; i < count; i++) {
        bool exited = false;
        if (procs[i].pid > 0 && !procs[i].reaped)
            ps_job_process_wait(&procs[i], 10000, &exited, NULL);
        ps_job_process_release(&procs[i]);
    }
}

int ps_bench_e2e(int argc, char **argv)
{
    long long jobs = 10000, nodes = 4, slots = 16, period = 50, timeout_s = 300;
    bool no_cgroups = false;
    const char *work_root = NULL;
    const struct ps_bench_int_opt ints[] = {
        {"--jobs", 1, 1000000, &jobs},
        {"--nodes", 1, MAX_NODES, &nodes},
        {"--slots", 1, 1000, &slots},
        {"--heartbeat-period", 10, 60000, &period},
        {"--timeout", 1, 3600, &timeout_s}
    };
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if ((m = ps_bench_int_options("e2e", argc, argv, &i, ints, (int)(sizeof ints / sizeof *ints))) != 0) {
            if (m < 0)
                return 2;
        } else if ((m = ps_bench_option("e2e", argc, argv, &i, "--work-root", &v)) != 0) {
            if (m < 0)
                return 2;
            work_root = v;
        } else if (strcmp(argv[i], "--no-cgroups") == 0) {
            no_cgroups = true;
        } else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: poolsched bench e2e [--jobs 10000] [--nodes 4] [--slots 16]\n"
                   "                           [--heartbeat-period 50] [--timeout 300] "
                   "[--no-cgroups]\n"
                   "                           [--work-root DIR]  (sandboxes under DIR, e.g. "
                   "/dev/shm; default: the temporary dir)\n"
                   "Completed jobs/s of a local cluster (in-process scheduler, node agents as\n"
                   "processes) running one operation of `true` jobs (JSON).\n");
            return 0;
        } else {
            ps_bench_error("e2e", "unknown option '%s'", argv[i]);
            return 2;
        }
    }

    struct ps_error err;
    ps_error_init(&err);
    char self[4096];
    char dir[] = "/tmp/poolsched-bench-e2e-XXXXXX";
    if (ps_daemon_self_exe(self, sizeof self, &err) != 0 ||
        ps_daemon_make_temp_dir(dir, 0755, &err) != 0) {
        ps_bench_error("e2e", "%s", err.msg);
        return 1;
    }
    /* The work dirs hold the sandboxes of jobs that run as nobody when we are root. */
    char work[600], work_tmp[512] = "";
    if (work_root) {
        if (strlen(work_root) > 400) {
            ps_bench_error("e2e", "--work-root: path too long");
            return 2;
        }
        snprintf(work_tmp, sizeof work_tmp, "%s/poolsched-bench-e2e-XXXXXX", work_root);
        if (ps_daemon_make_temp_dir(work_tmp, 0755, &err) != 0) {
            ps_bench_error("e2e", "%s", err.msg);
            return 1;
        }
        snprintf(work, sizeof work, "%s/nodes", work_tmp);
    } else {
        snprintf(work, sizeof work, "%s/nodes", dir);
    }
    if (ps_daemon_make_dirs(work, 0755, &err) != 0) {
        ps_bench_error("e2e", "%s", err.msg);
        return 1;
    }

    char data_dir[sizeof dir + 8];
    snprintf(data_dir, sizeof data_dir, "%s/data", dir);
    struct ps_bench_server_options sopt = {.data_dir = data_dir, .heartbeat_period_ms = period,
                                           .fair_share_update_period_ms = 100};
    struct ps_service *svc = NULL;
    struct ps_job_process procs[MAX_NODES];
    memset(procs, 0, sizeof procs);
    int status = 1, started_nodes = 0;
    char *secret = NULL;
    json_t *reply = NULL;
    if (ps_bench_server_start(&sopt, &svc, &err) != 0) {
        ps_bench_error("e2e", "cannot start the scheduler: %s", err.msg);
        goto out;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/cluster_secret", data_dir);
    size_t len = 0;
    if (ps_file_read(path, &secret, &len, &err) != 0) {
        ps_bench_error("e2e", "%s", err.msg);
        goto out;
    }
    while (len > 0 && (secret[len - 1] == '\n' || secret[len - 1] == ' '))
        secret[--len] = '\0';

    char env_secret[600], env_path[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    snprintf(env_secret, sizeof env_secret, "POOLSCHED_CLUSTER_SECRET=%s", secret);
    char *envp[] = {env_path, env_secret, NULL};
    for (int i = 0; i < nodes; i++) {
        char cmd[8192];
        snprintf(cmd, sizeof cmd,
                 "exec '%s' node --scheduler http://127.0.0.1:%u --node-id bench-%d-%ld "
                 "--resources cpu=%lld,memory=64G,user_slots=%lld --work-dir '%s/n%d' "
                 "--heartbeat-period %lld --tick 100 %s 2>'%s/node-%d.log'",
                 self, ps_bench_server_port(svc), i, ps_daemon_pid(), slots, slots, work, i, period,
                 no_cgroups ? "--no-cgroups" : "", dir, i);
        struct ps_job_process_spec spec = {
            .command = cmd, .shell = NULL, .cwd = dir, .envp = envp, .switch_user = false,
            .stdout_fd = -1, .stderr_fd = -1, .attach = NULL, .attach_ctx = NULL,
        };
        if (ps_job_process_spawn(&spec, &procs[i], &err) != 0) {
            ps_bench_error("e2e", "cannot start node %d: %s", i, err.msg);
            goto out;
        }
        started_nodes++;
    }

    char body[512];
    snprintf(body, sizeof body,
             "{\"operation_type\": \"vanilla\", \"spec\": {\"max_failed_job_count\": 10000, "
             "\"tasks\": {\"t\": {\"command\": \"true\", \"job_count\": %lld, \"cpu_limit\": 1, "
             "\"memory_limit\": 67108864}}}}", jobs);
    /* CPU per job, apart: the agents' own (their processes), the jobs' (the children the
     * agents reaped), the scheduler's (this process: service threads, plus the bench's polls) */
    double agent0 = 0, jobs0 = 0;
    for (int i = 0; i < nodes; i++) {
        double a = 0, j = 0;
        ps_procfs_process_cpu(procs[i].pid, &a, &j, NULL);
        agent0 += a;
        jobs0 += j;
    }
    int64_t sched_cpu0 = ps_clock_process_cpu_ns();
    int64_t t0 = now_ms();
    if (!(reply = api(svc, "start_op", body)))
        goto out;
    char get[256];
    snprintf(get, sizeof get, "{\"operation_id\": \"%s\"}",
             json_string_value(json_object_get(reply, "operation_id")));
    json_decref(reply);
    reply = NULL;
    int64_t first_ms = -1, deadline = t0 + timeout_s * 1000;
    const char *state = "running";
    json_t *progress = NULL;
    for (;;) {
        json_decref(reply);
        if (!(reply = api(svc, "get_operation", get)))
            goto out;
        state = json_string_value(json_object_get(reply, "state"));
        progress = json_object_get(reply, "progress");
        int64_t done = json_integer_value(json_object_get(progress, "completed"));
        if (first_ms < 0 && done > 0)
            first_ms = now_ms() - t0;
        if (!state || (strcmp(state, "running") != 0 && strcmp(state, "pending") != 0))
            break;
        for (int i = 0; i < nodes; i++) {
            bool exited = false;
            ps_job_process_poll(&procs[i], &exited, NULL);
            if (exited) {
                ps_bench_error("e2e", "node %d exited (see its log in %s)", i, dir);
                goto out;
            }
        }
        if (now_ms() > deadline) {
            ps_bench_error("e2e", "timed out after %lld s: %" JSON_INTEGER_FORMAT " of %lld "
                           "jobs completed", timeout_s,
                           json_integer_value(json_object_get(progress, "completed")), jobs);
            goto out;
        }
        ps_daemon_wait(20);
    }
    double secs = (double)(now_ms() - t0) / 1000.0;
    int64_t completed = json_integer_value(json_object_get(progress, "completed"));
    double sched_cpu = (double)(ps_clock_process_cpu_ns() - sched_cpu0) / 1e9;
    double agent_cpu = -agent0, jobs_cpu = -jobs0;
    for (int i = 0; i < nodes; i++) {
        double a = 0, j = 0;
        ps_procfs_process_cpu(procs[i].pid, &a, &j, NULL);
        agent_cpu += a;
        jobs_cpu += j;
    }
    double per_job_ms = completed > 0 ? 1000.0 / (double)completed : 0;
    json_t *obj = json_pack(
        "{s:s, s:s, s:I, s:I, s:I, s:I, s:s, s:s, s:I, s:I, s:I, s:f, s:f, s:I, s:f}",
        "benchmark", "e2e", "work_root", work_root ? work_root : dir, "jobs", (json_int_t)jobs, "nodes", (json_int_t)nodes, "slots_per_node",
        (json_int_t)slots, "heartbeat_period_ms", (json_int_t)period, "cgroups",
        no_cgroups ? "disabled" : "as detected (see node logs)", "state", state ? state : "?",
        "completed", (json_int_t)completed, "failed",
        (json_int_t)json_integer_value(json_object_get(progress, "failed")), "aborted",
        (json_int_t)json_integer_value(json_object_get(progress, "aborted")), "seconds", secs,
        "first_completion_seconds", (double)first_ms / 1000.0, "target_jobs_per_second",
        (json_int_t)500, "jobs_per_second", (double)completed / secs);
    if (obj)
        json_object_set_new(obj, "cpu_ms_per_job",
                            json_pack("{s:f, s:f, s:f}", "agents", agent_cpu * per_job_ms,
                                      "jobs", jobs_cpu * per_job_ms, "scheduler",
                                      sched_cpu * per_job_ms));
    status = ps_bench_print_json("e2e", obj);
    if (status == 0 && completed != jobs)
        status = 1;
out:
    json_decref(reply);
    stop_nodes(procs, started_nodes);
    for (int i = 0; status != 0 && i < started_nodes; i++) {
        char *log = NULL;
        size_t log_len = 0;
        snprintf(path, sizeof path, "%s/node-%d.log", dir, i);
        if (ps_file_read(path, &log, &log_len, NULL) == 0)
            fprintf(stderr, "---- node %d (last lines)\n%s\n", i,
                    log + (log_len > 2000 ? log_len - 2000 : 0));
        free(log);
    }
    ps_bench_server_stop(svc);
    free(secret);
    if (ps_sandbox_remove(dir, &err) != 0)
        fprintf(stderr, "bench e2e: cleanup: %s\n", err.msg);
    if (work_tmp[0] && ps_sandbox_remove(work_tmp, &err) != 0)
        fprintf(stderr, "bench e2e: cleanup: %s\n", err.msg);
    return status;
}
