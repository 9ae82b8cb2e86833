/* Tests of the node agent's logic without processes: the heartbeat protocol (request shape,
 * strict reply validation), flag parsing, the overdraft policy, and the job table driven
 * through a scripted runner (a test double of runner.h whose jobs use CPU and memory as the
 * test says). The real runner is exercised by tests/scripts/node_*.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node/args.h"
#include "node/devices.h"
#include "node/jobs.h"
#include "node/protocol.h"
#include "node/runner.h"

/* ---- the scripted runner -------------------------------------------------------------- */

struct fake_job {
    char id[64];
    int64_t start_ms;
    double cpu_rate;            /* cores the job uses */
    int64_t memory_bytes;
    bool finished;
    struct ps_node_job_end end;
    double guarantee;
    int set_calls;
    bool interrupted;
    int64_t interrupt_deadline_ms;
    char abort_reason[64];
    const char *stderr_text;
    size_t stderr_len;
    char env[512];              /* the environment it was started with, "A=1;B=2;" */
};

struct fake_runner {
    struct fake_job *jobs[32];
    int count;
    int start_error;            /* returned by the next start */
    bool no_weights;            /* set_cpu_guarantee says PS_ESTATE */
    double cpu_rate;            /* for new jobs */
    int64_t memory_bytes;       /* for new jobs */
};

static struct fake_runner fr;

static struct fake_job *fake_find(const char *id)
{
    for (int i = 0; i < fr.count; i++)
        if (fr.jobs[i] && strcmp(fr.jobs[i]->id, id) == 0)
            return fr.jobs[i];
    return NULL;
}

static int f_start(void *ctx, const struct ps_node_job_spec *spec, int64_t now_ms, void **job,
                   struct ps_error *err)
{
    if (fr.start_error) {
        int rc = fr.start_error;
        fr.start_error = 0;
        return ps_error_set(err, rc, "scripted start failure");
    }
    struct fake_job *j = calloc(1, sizeof *j);
    snprintf(j->id, sizeof j->id, "%s", spec->job_id);
    j->start_ms = now_ms;
    j->cpu_rate = fr.cpu_rate;
    j->memory_bytes = fr.memory_bytes;
    j->guarantee = spec->cpu_guarantee;
    j->end.exit_code = -1;
    for (const char *const *e = spec->environment; e && *e; e++) {
        size_t len = strlen(j->env);
        snprintf(j->env + len, sizeof j->env - len, "%s;", *e);
    }
    fr.jobs[fr.count++] = j;
    *job = j;
    return 0;
}

static void end_job(struct fake_job *j, enum ps_node_outcome o, int exit_code, const char *error,
                    const char *reason, int64_t now_ms)
{
    j->finished = true;
    j->end.outcome = o;
    j->end.exit_code = exit_code;
    snprintf(j->end.error, sizeof j->end.error, "%s", error ? error : "");
    snprintf(j->end.abort_reason, sizeof j->end.abort_reason, "%s", reason ? reason : "");
    j->end.duration_ms = now_ms - j->start_ms;
    j->end.cpu_seconds = j->cpu_rate * (double)(now_ms - j->start_ms) / 1000.0;
    j->end.memory_peak_bytes = j->memory_bytes;
}

static int f_tick(void *job, int64_t now_ms, struct ps_node_job_sample *out,
                  struct ps_error *err)
{
    struct fake_job *j = job;
    if (!j->finished && j->abort_reason[0])
        end_job(j, PS_NODE_OUTCOME_ABORTED, -1, NULL, j->abort_reason, now_ms);
    if (!j->finished && j->interrupted && now_ms >= j->interrupt_deadline_ms)
        end_job(j, PS_NODE_OUTCOME_ABORTED, -1, NULL, "preemption", now_ms);
    out->finished = j->finished;
    out->cpu_seconds = j->finished ? j->end.cpu_seconds
                                   : j->cpu_rate * (double)(now_ms - j->start_ms) / 1000.0;
    out->memory_bytes = j->memory_bytes;
    out->memory_peak_bytes = j->memory_bytes;
    return 0;
}

static int f_set(void *job, double cores, struct ps_error *err)
{
    struct fake_job *j = job;
    if (fr.no_weights)
        return ps_error_set(err, PS_ESTATE, "no cpu cgroup");
    j->guarantee = cores;
    j->set_calls++;
    return 0;
}

static int f_interrupt(void *job, int64_t now_ms, int64_t timeout_ms, const char *reason,
                       struct ps_error *err)
{
    struct fake_job *j = job;
    if (!j->interrupted)
        j->interrupt_deadline_ms = now_ms + timeout_ms;
    j->interrupted = true;
    return 0;
}

static int f_abort(void *job, const char *reason, struct ps_error *err)
{
    struct fake_job *j = job;
    if (!j->finished)
        snprintf(j->abort_reason, sizeof j->abort_reason, "%s", reason);
    return 0;
}

static void f_result(void *job, struct ps_node_job_end *out)
{
    *out = ((struct fake_job *)job)->end;
}

static int f_read_stderr(void *job, char **data, size_t *len, bool *truncated,
                         struct ps_error *err)
{
    struct fake_job *j = job;
    size_t n = j->stderr_text ? j->stderr_len : 0;
    *data = malloc(n + 1);
    if (n)
        memcpy(*data, j->stderr_text, n);
    (*data)[n] = '\0';
    *len = n;
    *truncated = false;
    return 0;
}

static void f_free(void *job)
{
    for (int i = 0; i < fr.count; i++)
        if (fr.jobs[i] == job)
            fr.jobs[i] = NULL;
    free(job);
}

static const struct ps_node_runner_ops fake_ops = {
    f_start, f_tick, f_set, f_interrupt, f_abort, f_result, f_read_stderr, f_free, NULL, NULL,
};

static struct ps_node_runner fake_runner = {&fake_ops, NULL, {true, true, true}};

static int setup(void **state)
{
    memset(&fr, 0, sizeof fr);
    fr.cpu_rate = 1.0;
    fr.memory_bytes = 1 << 20;
    return 0;
}

/* A start message as parse would give it; cfg NULL: the monitor defaults. */
static struct ps_node_start start_msg(const char *id, double cpu,
                                      const struct ps_cpu_monitor_config *cfg)
{
    static char *empty_env[] = {NULL};
    struct ps_node_start s;
    memset(&s, 0, sizeof s);
    s.job_id = id;
    s.operation_id = "op1";
    s.task_name = "main";
    s.command = "true";
    s.environment = empty_env;
    s.cpu_limit = cpu;
    s.cpu_guarantee = cpu;
    s.memory_limit_bytes = 100 << 20;
    s.memory_reserve_bytes = 50 << 20;
    s.waiting_job_timeout_ms = -1;
    if (cfg)
        s.cpu_monitor = *cfg;
    else
        ps_cpu_monitor_config_init(&s.cpu_monitor);
    return s;
}

static struct ps_node_jobs *new_table(int64_t node_memory)
{
    struct ps_node_jobs_config cfg;
    ps_node_jobs_config_init(&cfg);
    cfg.node_memory_bytes = node_memory;
    struct ps_node_jobs *t = NULL;
    assert_int_equal(ps_node_jobs_new(&fake_runner, &cfg, &t, NULL), 0);
    return t;
}

/* The report entry of job id, or NULL. */
static json_t *entry(json_t *report, const char *id)
{
    size_t i;
    json_t *e;
    json_array_foreach(report, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "job_id")), id) == 0)
            return e;
    }
    return NULL;
}

/* ---- GPU devices and ports ------------------------------------------------------------ */

/* Upstream's TestSchedulerGpu::test_packing on the allocator: on 4 devices a 1-GPU job gets
 * device 0 and a 2-GPU job then gets 2 and 3 (a pair of its own), not 1 and 2. */
static void test_gpu_packing(void **state)
{
    struct ps_node_devices d;
    assert_int_equal(ps_node_devices_init(&d, 4, 20000, 0, NULL, NULL), 0);
    int a[4], b[4], c[4];
    assert_int_equal(ps_node_gpus_acquire(&d, 1, a, NULL), 0);
    assert_int_equal(a[0], 0);
    assert_int_equal(ps_node_gpus_acquire(&d, 2, b, NULL), 0);
    assert_int_equal(b[0], 2);
    assert_int_equal(b[1], 3);
    struct ps_error e;
    ps_error_init(&e);
    assert_int_equal(ps_node_gpus_acquire(&d, 2, c, &e), PS_ELIMIT);
    assert_non_null(strstr(e.msg, "Cannot find enough empty GPU slots"));
    assert_int_equal(ps_node_gpus_acquire(&d, 1, c, NULL), 0);
    assert_int_equal(c[0], 1);
    ps_node_gpus_free(&d, b, 2);
    assert_int_equal(ps_node_gpus_acquire(&d, 2, c, NULL), 0);
    assert_int_equal(c[0], 2);
    ps_node_devices_release(&d);
    assert_int_equal(ps_node_devices_init(&d, 65, 20000, 0, NULL, NULL), PS_EINVAL);
    assert_int_equal(ps_node_devices_init(&d, 1, 65000, 1000, NULL, NULL), PS_EINVAL);
}

static bool not_20001(int port)
{
    return port != 20001;
}

/* Ports: the lowest free ones a preliminary bind accepts (upstream's test_preliminary_bind). */
static void test_ports(void **state)
{
    struct ps_node_devices d;
    assert_int_equal(ps_node_devices_init(&d, 0, 20000, 3, not_20001, NULL), 0);
    int a[3], b[3];
    assert_int_equal(ps_node_ports_acquire(&d, 2, a, NULL), 0);
    assert_int_equal(a[0], 20000);
    assert_int_equal(a[1], 20002);
    assert_int_equal(ps_node_ports_acquire(&d, 1, b, NULL), PS_ELIMIT);
    ps_node_ports_free(&d, a, 2);
    d.probe = NULL;
    assert_int_equal(ps_node_ports_acquire(&d, 3, b, NULL), 0);
    assert_int_equal(b[1], 20001);
    ps_node_devices_release(&d);
}

/* The job table gives each job its own devices and ports, names them in its environment and
 * exec_attributes, takes them back when it ends, and aborts (waiting_timeout) a job the node
 * has not enough for. */
static void test_job_devices(void **state)
{
    struct ps_node_jobs_config cfg;
    ps_node_jobs_config_init(&cfg);
    cfg.gpu_count = 4;
    cfg.start_port = 30000;
    cfg.port_count = 3;
    struct ps_node_jobs *t = NULL;
    assert_int_equal(ps_node_jobs_new(&fake_runner, &cfg, &t, NULL), 0);
    struct ps_node_start s = start_msg("g1", 1.0, NULL);
    s.gpu_limit = 1;
    s.port_count = 2;
    ps_node_jobs_start(t, &s, 1000);
    struct ps_node_start s2 = start_msg("g2", 1.0, NULL);
    s2.gpu_limit = 2;
    ps_node_jobs_start(t, &s2, 1000);
    assert_string_equal(fake_find("g1")->env, "NVIDIA_VISIBLE_DEVICES=0;CUDA_VISIBLE_DEVICES=0;"
                                              "YT_PORT_0=30000;YT_PORT_1=30001;");
    assert_string_equal(fake_find("g2")->env, "NVIDIA_VISIBLE_DEVICES=2,3;"
                                              "CUDA_VISIBLE_DEVICES=2,3;");
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    json_t *devs = json_object_get(json_object_get(entry(rep, "g2"), "exec_attributes"),
                                   "gpu_devices");
    assert_int_equal(json_array_size(devs), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(devs, 1),
                                                        "device_number")), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(devs, 1),
                                                          "device_name")), "/dev/nvidia3");
    json_decref(rep);

    /* not enough ports: aborted at once, nothing kept */
    struct ps_node_start s3 = start_msg("p3", 1.0, NULL);
    s3.port_count = 2;
    ps_node_jobs_start(t, &s3, 1000);
    assert_null(fake_find("p3"));
    rep = ps_node_jobs_report(t, &more);
    assert_string_equal(json_string_value(json_object_get(entry(rep, "p3"), "abort_reason")),
                        "waiting_timeout");
    json_decref(rep);
    struct ps_node_start s4 = start_msg("p4", 1.0, NULL);
    s4.port_count = 1;
    ps_node_jobs_start(t, &s4, 1000);
    assert_string_equal(fake_find("p4")->env, "YT_PORT_0=30002;");

    /* g1 ends: its device and ports are free again */
    end_job(fake_find("g1"), PS_NODE_OUTCOME_COMPLETED, 0, NULL, NULL, 1500);
    assert_int_equal(ps_node_jobs_tick(t, 1500), 1);
    struct ps_node_start s5 = start_msg("g5", 1.0, NULL);
    s5.gpu_limit = 2;
    s5.port_count = 2;
    ps_node_jobs_start(t, &s5, 1600);
    assert_string_equal(fake_find("g5")->env, "NVIDIA_VISIBLE_DEVICES=0,1;"
                                              "CUDA_VISIBLE_DEVICES=0,1;"
                                              "YT_PORT_0=30000;YT_PORT_1=30001;");
    ps_node_jobs_free(t);
}

/* cpu_to_vcpu_factor: the scheduler's vcpu limit becomes real cores for the job, and the job's
 * guarantee goes back as vcpu (upstream's TestReplacementCpuToVCpu: 23 vcpu at 1.21 is 19.01
 * cores). */
static void test_job_vcpu(void **state)
{
    struct ps_node_jobs_config cfg;
    ps_node_jobs_config_init(&cfg);
    cfg.cpu_to_vcpu_factor = 1.21;
    struct ps_node_jobs *t = NULL;
    assert_int_equal(ps_node_jobs_new(&fake_runner, &cfg, &t, NULL), 0);
    struct ps_node_start s = start_msg("v1", 23.0, NULL);
    ps_node_jobs_start(t, &s, 1000);
    assert_true(fabs(fake_find("v1")->guarantee - 19.01) < 1e-9);
    assert_true(fabs(ps_node_jobs_cpu_guarantee(t, "v1") - 19.01) < 1e-9);
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    assert_true(fabs(json_number_value(json_object_get(entry(rep, "v1"), "cpu_guarantee")) -
                     23.0) < 1e-9);
    json_decref(rep);
    ps_node_jobs_free(t);
}

/* ---- protocol ------------------------------------------------------------------------- */

static void test_request_shape(void **state)
{
    const char *tags[] = {"gpu", "ssd"};
    json_t *media = json_pack("{s:I}", "ssd_slots", (json_int_t)4 << 20);
    struct ps_node_identity id = {.node_id = "n1", .tags = tags, .tag_count = 2, .cpu = 4.0,
                                  .cpu_to_vcpu_factor = 1.21, .memory_bytes = INT64_C(8) << 30,
                                  .user_slots = 8, .gpu = 4, .instance_id = "0123456789abcdef",
                                  .media = media};
    json_t *req = ps_node_request_build(&id, NULL);
    assert_non_null(req);
    assert_string_equal(json_string_value(json_object_get(req, "node_id")), "n1");
    assert_string_equal(json_string_value(json_object_get(req, "instance_id")),
                        "0123456789abcdef");
    assert_int_equal(json_array_size(json_object_get(req, "tags")), 2);
    json_t *lim = json_object_get(req, "resource_limits");
    assert_true(json_number_value(json_object_get(lim, "cpu")) == 4.0);
    assert_int_equal(json_integer_value(json_object_get(lim, "memory")), INT64_C(8) << 30);
    assert_int_equal(json_integer_value(json_object_get(lim, "user_slots")), 8);
    assert_int_equal(json_integer_value(json_object_get(lim, "gpu")), 4);
    assert_true(json_number_value(json_object_get(req, "cpu_to_vcpu_factor")) == 1.21);
    assert_true(json_is_array(json_object_get(req, "jobs")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(req, "disk_space_per_medium"),
                                                        "ssd_slots")), 4 << 20);
    json_decref(req);
    json_decref(media);
}

static const char good_reply[] =
    "{\"heartbeat_period_ms\": 200, \"node_offline_timeout_ms\": 3000, \"jobs_to_start\": [{\"job_id\": \"j-1\", "
    "\"operation_id\": \"op\", \"task_name\": \"main\", \"job_index\": 3, \"command\": \"echo "
    "hi\", \"environment\": {\"B\": \"2\", \"A\": \"1\"}, \"cpu_limit\": 2, \"cpu_guarantee\": 2, "
    "\"memory_limit\": 1048576, \"memory_reserve\": 524288, \"tmpfs_size\": 0, "
    "\"waiting_job_timeout\": 7000, "
    "\"job_cpu_monitor\": {\"enable_cpu_reclaim\": true, \"check_period\": 10, "
    "\"min_cpu_limit\": 0.1}}], \"jobs_to_interrupt\": [{\"job_id\": \"j-2\", \"timeout_ms\": "
    "500, \"reason\": \"preemption\"}], \"jobs_to_abort\": [{\"job_id\": \"j-3\", \"reason\": "
    "\"node_offline\"}], \"acknowledged\": [\"j-4\"], \"some_future_key\": 1, "
    "\"reply_seq\": 1795818125803003}";

static void test_reply_parse(void **state)
{
    json_t *doc = json_loads(good_reply, 0, NULL);
    assert_non_null(doc);
    struct ps_node_reply r;
    struct ps_error err;
    ps_error_init(&err);
    int rc = ps_node_reply_parse(doc, &r, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    json_decref(doc);   /* the reply keeps its own reference */
    assert_true(r.has_heartbeat_period);
    assert_true(r.has_offline_timeout);
    assert_int_equal(r.node_offline_timeout_ms, 3000);
    assert_int_equal(r.heartbeat_period_ms, 200);
    assert_int_equal(r.start_count, 1);
    assert_string_equal(r.starts[0].job_id, "j-1");
    assert_int_equal(r.starts[0].job_index, 3);
    assert_string_equal(r.starts[0].environment[0], "A=1");
    assert_string_equal(r.starts[0].environment[1], "B=2");
    assert_null(r.starts[0].environment[2]);
    assert_true(r.starts[0].cpu_monitor.enable_cpu_reclaim);
    assert_int_equal(r.starts[0].cpu_monitor.check_period_ms, 10);
    assert_true(r.starts[0].cpu_monitor.min_cpu_limit == 0.1);
    assert_true(r.starts[0].cpu_monitor.smoothing_factor == 0.1);  /* default kept */
    assert_int_equal(r.starts[0].memory_reserve_bytes, 524288);
    assert_int_equal(r.starts[0].waiting_job_timeout_ms, 7000);
    assert_int_equal(r.interrupt_count, 1);
    assert_int_equal(r.interrupts[0].timeout_ms, 500);
    assert_int_equal(r.abort_count, 1);
    assert_string_equal(r.aborts[0].reason, "node_offline");
    assert_int_equal(r.acknowledged_count, 1);
    assert_string_equal(r.acknowledged[0], "j-4");
    assert_true(r.has_reply_seq);
    assert_true(r.reply_seq == 1795818125803003LL);
    ps_node_reply_release(&r);

    doc = json_loads("{}", 0, NULL);
    assert_int_equal(ps_node_reply_parse(doc, &r, NULL), 0);
    assert_false(r.has_heartbeat_period);
    assert_false(r.has_offline_timeout);
    assert_false(r.has_reply_seq);
    assert_int_equal(r.start_count + r.interrupt_count + r.abort_count, 0);
    ps_node_reply_release(&r);
    json_decref(doc);

    doc = json_loads("{\"dynamic_config\": {\"job_resource_manager\": {}}, "
                     "\"dynamic_config_version\": 3}", 0, NULL);
    assert_int_equal(ps_node_reply_parse(doc, &r, NULL), 0);
    assert_non_null(json_object_get(r.dynamic_config, "job_resource_manager"));
    assert_int_equal(r.dynamic_config_version, 3);
    ps_node_reply_release(&r);
    json_decref(doc);
}

static void expect_bad(const char *text, const char *message_part)
{
    json_t *doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    struct ps_node_reply r;
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_node_reply_parse(doc, &r, &err), PS_EINVAL);
    if (!strstr(err.msg, message_part))
        print_error("message \"%s\" lacks \"%s\"\n", err.msg, message_part);
    assert_non_null(strstr(err.msg, message_part));
    assert_null(r.starts);
    assert_int_equal(r.start_count, 0);
    json_decref(doc);
}

static void test_reply_rejects(void **state)
{
    expect_bad("[]", "must be an object");
    expect_bad("{\"heartbeat_period_ms\": 5}", "heartbeat_period_ms");
    expect_bad("{\"heartbeat_period_ms\": \"5000\"}", "heartbeat_period_ms");
    expect_bad("{\"reply_seq\": -1}", "reply_seq");
    expect_bad("{\"reply_seq\": \"7\"}", "reply_seq");
    expect_bad("{\"dynamic_config\": [], \"dynamic_config_version\": 1}",
               "dynamic_config: must be a map, with dynamic_config_version");
    expect_bad("{\"dynamic_config\": {}}", "dynamic_config: must be a map, with");
    expect_bad("{\"dynamic_config\": {}, \"dynamic_config_version\": -1}",
               "dynamic_config_version");
    expect_bad("{\"jobs_to_start\": {}}", "jobs_to_start");
    expect_bad("{\"jobs_to_start\": [{\"job_id\": \"../x\", \"operation_id\": \"o\", "
               "\"task_name\": \"t\", \"command\": \"true\"}]}",
               "jobs_to_start[0].job_id");
    expect_bad("{\"jobs_to_start\": [{\"job_id\": \"a\", \"operation_id\": \"o\", "
               "\"task_name\": \"t\"}]}",
               "jobs_to_start[0].command");
    expect_bad("{\"jobs_to_start\": [{\"job_id\": \"a\", \"operation_id\": \"o\", "
               "\"task_name\": \"t\", \"command\": \"x\", \"cpu_limit\": -1}]}",
               "cpu_limit");
    expect_bad("{\"jobs_to_start\": [{\"job_id\": \"a\", \"operation_id\": \"o\", "
               "\"task_name\": \"t\", \"command\": \"x\", \"waiting_job_timeout\": -1}]}",
               "jobs_to_start[0].waiting_job_timeout");
    expect_bad("{\"jobs_to_start\": [{\"job_id\": \"a\", \"operation_id\": \"o\", "
               "\"task_name\": \"t\", \"command\": \"x\", \"environment\": {\"A=B\": \"1\"}}]}",
               "environment");
    expect_bad("{\"jobs_to_start\": [{\"job_id\": \"a\", \"operation_id\": \"o\", "
               "\"task_name\": \"t\", \"command\": \"x\", \"job_cpu_monitor\": "
               "{\"smoothing_factr\": 0.2}}]}",
               "smoothing_factr");
    expect_bad("{\"jobs_to_start\": [{\"job_id\": \"a\", \"operation_id\": \"o\", "
               "\"task_name\": \"t\", \"command\": \"x\", \"job_cpu_monitor\": "
               "{\"vote_window_size\": 2, \"vote_decision_threshold\": 3}}]}",
               "vote_decision_threshold");
    /* a good first start does not leak when the second is bad */
    expect_bad("{\"jobs_to_start\": [{\"job_id\": \"a\", \"operation_id\": \"o\", "
               "\"task_name\": \"t\", \"command\": \"x\", \"environment\": {\"A\": \"1\"}}, "
               "{\"job_id\": \"\"}]}",
               "jobs_to_start[1].job_id");
    expect_bad("{\"jobs_to_interrupt\": [{\"job_id\": \"a\", \"timeout_ms\": -1}]}",
               "timeout_ms");
    expect_bad("{\"jobs_to_abort\": [{\"reason\": \"x\"}]}", "jobs_to_abort[0].job_id");
    expect_bad("{\"acknowledged\": [1]}", "acknowledged[0]");
}

/* ---- flags ---------------------------------------------------------------------------- */

static void test_sizes(void **state)
{
    int64_t x;
    assert_int_equal(ps_node_parse_size("8G", &x, NULL), 0);
    assert_int_equal(x, INT64_C(8) << 30);
    assert_int_equal(ps_node_parse_size("512MiB", &x, NULL), 0);
    assert_int_equal(x, INT64_C(512) << 20);
    assert_int_equal(ps_node_parse_size("64k", &x, NULL), 0);
    assert_int_equal(x, 65536);
    assert_int_equal(ps_node_parse_size("100", &x, NULL), 0);
    assert_int_equal(x, 100);
    assert_int_equal(ps_node_parse_size("100B", &x, NULL), 0);
    assert_int_equal(x, 100);
    assert_int_equal(ps_node_parse_size("1Ti", &x, NULL), 0);
    assert_int_equal(x, INT64_C(1) << 40);
    assert_int_equal(ps_node_parse_size("", &x, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_size("G", &x, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_size("8X", &x, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_size("8GX", &x, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_size("-1", &x, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_size("99999999999999999999", &x, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_size("9999999P", &x, NULL), PS_EINVAL);
}

static void test_resources_and_tags(void **state)
{
    struct ps_node_resource_args r;
    assert_int_equal(ps_node_parse_resources("cpu=4,memory=8G,user_slots=8", &r, NULL), 0);
    assert_true(r.has_cpu && r.cpu == 4.0);
    assert_true(r.has_memory && r.memory_bytes == INT64_C(8) << 30);
    assert_true(r.has_user_slots && r.user_slots == 8);
    assert_int_equal(ps_node_parse_resources("cpu=1.5", &r, NULL), 0);
    assert_true(r.cpu == 1.5 && !r.has_memory && !r.has_user_slots);
    struct ps_error err;
    ps_error_init(&err);
    assert_int_equal(ps_node_parse_resources("gpu=4", &r, NULL), 0);
    assert_true(r.has_gpu && r.gpu == 4 && !r.has_cpu);
    assert_int_equal(ps_node_parse_resources("gpu=65", &r, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "gpu=\"65\""));
    ps_error_init(&err);
    assert_int_equal(ps_node_parse_resources("disk=1", &r, &err), PS_EINVAL);
    assert_non_null(strstr(err.msg, "unknown key \"disk\""));
    assert_int_equal(ps_node_parse_resources("cpu=0", &r, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_resources("cpu=1,cpu=2", &r, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_resources("user_slots=0", &r, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_resources("memory", &r, NULL), PS_EINVAL);

    char **tags;
    size_t n;
    assert_int_equal(ps_node_parse_tags("gpu,ssd", &tags, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_string_equal(tags[0], "gpu");
    assert_string_equal(tags[1], "ssd");
    ps_node_tags_free(tags, n);
    assert_int_equal(ps_node_parse_tags("", &tags, &n, NULL), 0);
    assert_int_equal(n, 0);
    ps_node_tags_free(tags, n);
    assert_int_equal(ps_node_parse_tags("gpu,gpu", &tags, &n, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_tags("gpu,", &tags, &n, NULL), PS_EINVAL);
    assert_int_equal(ps_node_parse_tags("a b", &tags, &n, NULL), PS_EINVAL);
}

/* ---- overdraft policy ----------------------------------------------------------------- */

static void test_overdraft_victims(void **state)
{
    (void)state;
    /* a growth is an overdraft when it does not fit the node's memory (none: no limit) */
    assert_true(ps_node_memory_overdraft(900, 200, 1000));
    assert_false(ps_node_memory_overdraft(800, 200, 1000));
    assert_false(ps_node_memory_overdraft(1200, 0, 1000));   /* no growth */
    assert_false(ps_node_memory_overdraft(900, 200, 0));
    struct ps_node_memory_job jobs[] = {
        {300, 100},   /* above its reserve by 200 */
        {500, 100},   /* above by 400 */
        {200, 0},     /* no reserve: never a victim */
        {200, 200},   /* within its reserve */
    };
    /* the job that grew goes when it is above its reserve, whatever the others' overdraft */
    assert_int_equal(ps_node_memory_overdraft_victim(jobs, 4, 0), 0);
    assert_int_equal(ps_node_memory_overdraft_victim(jobs, 4, 1), 1);
    /* otherwise the first job above its reserve */
    assert_int_equal(ps_node_memory_overdraft_victim(jobs, 4, 3), 0);
    assert_int_equal(ps_node_memory_overdraft_victim(jobs, 4, 2), 0);
    /* none above: none */
    assert_int_equal(ps_node_memory_overdraft_victim(jobs + 2, 2, 0), 2);
}

/* ---- the job table -------------------------------------------------------------------- */

static void test_job_lifecycle(void **state)
{
    struct ps_node_jobs *t = new_table(0);
    struct ps_node_start s = start_msg("j1", 1.0, NULL);
    ps_node_jobs_start(t, &s, 1000);
    ps_node_jobs_start(t, &s, 1000);   /* repeated: ignored */
    assert_int_equal(fr.count, 1);
    assert_int_equal(ps_node_jobs_running_count(t), 1);
    assert_int_equal(ps_node_jobs_tick(t, 1500), 0);

    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    assert_int_equal(json_array_size(rep), 1);
    json_t *e = entry(rep, "j1");
    assert_string_equal(json_string_value(json_object_get(e, "state")), "running");
    assert_true(fabs(json_number_value(json_object_get(e, "cpu_usage_seconds")) - 0.5) < 1e-9);
    assert_true(json_number_value(json_object_get(e, "cpu_guarantee")) == 1.0);
    json_decref(rep);

    struct fake_job *fj = fake_find("j1");
    fj->stderr_text = "bad \xff byte\n";
    fj->stderr_len = strlen(fj->stderr_text);
    end_job(fj, PS_NODE_OUTCOME_FAILED, 3, "Process exited with code 3", NULL, 2000);
    /* a reap-only pass (runner without a reap op: its tick) finishes it like a tick */
    assert_int_equal(ps_node_jobs_reap(t, 2000), 1);
    assert_null(fake_find("j1"));    /* the runner's job was freed at once */
    assert_int_equal(ps_node_jobs_running_count(t), 0);
    assert_int_equal(ps_node_jobs_finished_count(t), 1);

    rep = ps_node_jobs_report(t, &more);
    assert_false(more);
    e = entry(rep, "j1");
    assert_string_equal(json_string_value(json_object_get(e, "state")), "failed");
    assert_int_equal(json_integer_value(json_object_get(e, "exit_code")), 3);
    assert_string_equal(json_string_value(json_object_get(e, "error")),
                        "Process exited with code 3");
    assert_string_equal(json_string_value(json_object_get(e, "stderr")),
                        "bad \xef\xbf\xbd byte\n");
    json_t *st = json_object_get(e, "statistics");
    assert_int_equal(json_integer_value(json_object_get(st, "user_job/max_memory")), 1 << 20);
    assert_int_equal(json_integer_value(json_object_get(st, "user_job/memory_limit")), 100 << 20);
    assert_int_equal(json_integer_value(json_object_get(st, "user_job/memory_reserve")),
                     50 << 20);
    assert_int_equal(json_integer_value(json_object_get(st, "time/total")), 1000);
    json_decref(rep);

    /* a job started again under a finished id is still ignored until acknowledged */
    ps_node_jobs_start(t, &s, 2100);
    assert_int_equal(ps_node_jobs_running_count(t), 0);
    assert_false(ps_node_jobs_acknowledge(t, "nope"));
    assert_true(ps_node_jobs_acknowledge(t, "j1"));
    assert_int_equal(ps_node_jobs_finished_count(t), 0);
    rep = ps_node_jobs_report(t, &more);
    assert_int_equal(json_array_size(rep), 0);
    json_decref(rep);
    ps_node_jobs_free(t);
}

/* A job killed while the node had lost the scheduler (the guard kills a stopped agent's jobs)
 * is reported aborted with the agent's reason, not failed; completed jobs stay completed. */
static const char *lost_now(void *ctx)
{
    return *(bool *)ctx ? "node_offline" : NULL;
}

static void test_killed_while_lost(void **state)
{
    bool lost = false;
    struct ps_node_jobs_config cfg;
    ps_node_jobs_config_init(&cfg);
    cfg.lost_reason = lost_now;
    cfg.lost_ctx = &lost;
    struct ps_node_jobs *t = NULL;
    assert_int_equal(ps_node_jobs_new(&fake_runner, &cfg, &t, NULL), 0);
    struct ps_node_start a = start_msg("ja", 1.0, NULL), b = start_msg("jb", 1.0, NULL),
                         c = start_msg("jc", 1.0, NULL);
    ps_node_jobs_start(t, &a, 1000);
    ps_node_jobs_start(t, &b, 1000);
    ps_node_jobs_start(t, &c, 1000);
    end_job(fake_find("ja"), PS_NODE_OUTCOME_FAILED, -1, "Process was killed by signal 9", NULL,
            1500);
    assert_int_equal(ps_node_jobs_tick(t, 1500), 1);    /* not lost yet: a real failure */
    lost = true;
    end_job(fake_find("jb"), PS_NODE_OUTCOME_FAILED, -1, "Process was killed by signal 9", NULL,
            2000);
    end_job(fake_find("jc"), PS_NODE_OUTCOME_COMPLETED, 0, NULL, NULL, 2000);
    assert_int_equal(ps_node_jobs_tick(t, 2000), 2);
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    assert_string_equal(json_string_value(json_object_get(entry(rep, "ja"), "state")), "failed");
    json_t *e = entry(rep, "jb");
    assert_string_equal(json_string_value(json_object_get(e, "state")), "aborted");
    assert_string_equal(json_string_value(json_object_get(e, "abort_reason")), "node_offline");
    assert_string_equal(json_string_value(json_object_get(entry(rep, "jc"), "state")),
                        "completed");
    json_decref(rep);
    ps_node_jobs_free(t);
}

static void test_start_failures(void **state)
{
    struct ps_node_jobs *t = new_table(0);
    struct ps_node_start s = start_msg("bad", 1.0, NULL);
    fr.start_error = PS_EPERM;
    ps_node_jobs_start(t, &s, 0);
    s = start_msg("io", 1.0, NULL);
    fr.start_error = PS_EIO;
    ps_node_jobs_start(t, &s, 0);
    assert_int_equal(ps_node_jobs_running_count(t), 0);
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    json_t *e = entry(rep, "bad");
    assert_string_equal(json_string_value(json_object_get(e, "state")), "failed");
    assert_non_null(strstr(json_string_value(json_object_get(e, "error")), "Cannot start job"));
    e = entry(rep, "io");
    assert_string_equal(json_string_value(json_object_get(e, "state")), "aborted");
    assert_string_equal(json_string_value(json_object_get(e, "abort_reason")), "node_error");
    json_decref(rep);
    ps_node_jobs_free(t);
}

static void test_interrupt_and_abort(void **state)
{
    struct ps_node_jobs *t = new_table(0);
    struct ps_node_start s1 = start_msg("i1", 1.0, NULL), s2 = start_msg("a1", 1.0, NULL);
    ps_node_jobs_start(t, &s1, 0);
    ps_node_jobs_start(t, &s2, 0);
    ps_node_jobs_interrupt(t, "i1", 300, "preemption", 100);
    ps_node_jobs_interrupt(t, "i1", 5000, "preemption", 200);   /* keeps the first deadline */
    ps_node_jobs_abort(t, "a1", "scheduler");
    ps_node_jobs_abort(t, "unknown", "scheduler");
    assert_true(fake_find("i1")->interrupted);
    assert_int_equal(ps_node_jobs_tick(t, 250), 1);    /* a1 reaped */
    assert_int_equal(ps_node_jobs_tick(t, 400), 1);    /* i1 past its deadline */
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    assert_string_equal(json_string_value(json_object_get(entry(rep, "a1"), "abort_reason")),
                        "scheduler");
    assert_string_equal(json_string_value(json_object_get(entry(rep, "i1"), "abort_reason")),
                        "preemption");
    json_decref(rep);
    /* an abort for a finished job changes nothing */
    ps_node_jobs_abort(t, "a1", "other");
    ps_node_jobs_abort_all(t, "node_shutdown");
    rep = ps_node_jobs_report(t, &more);
    assert_string_equal(json_string_value(json_object_get(entry(rep, "a1"), "abort_reason")),
                        "scheduler");
    json_decref(rep);
    ps_node_jobs_free(t);
}

/* The monitor of upstream's integration test (semantics.md 4.3). */
static struct ps_cpu_monitor_config reclaim_config(bool reclaim)
{
    struct ps_cpu_monitor_config c;
    ps_cpu_monitor_config_init(&c);
    c.enable_cpu_reclaim = reclaim;
    c.check_period_ms = 100;
    c.increase_coefficient = 1.15;
    c.decrease_coefficient = 0.85;
    c.smoothing_factor = 0.2;
    c.vote_window_size = 5;
    c.vote_decision_threshold = 3;
    c.min_cpu_limit = 0.1;
    return c;
}

/* Runs an idle job (cpu_rate 0) for seconds under cfg; returns its final guarantee. */
static double idle_guarantee(struct ps_node_jobs *t, const char *id,
                             const struct ps_cpu_monitor_config *cfg, int seconds)
{
    fr.cpu_rate = 0.0;
    struct ps_node_start s = start_msg(id, 1.0, cfg);
    ps_node_jobs_start(t, &s, 0);
    for (int64_t now = 100; now <= seconds * 1000; now += 100)
        ps_node_jobs_tick(t, now);
    return ps_node_jobs_cpu_guarantee(t, id);
}

static void test_cpu_reclaim_on(void **state)
{
    struct ps_node_jobs *t = new_table(0);
    struct ps_cpu_monitor_config c = reclaim_config(true);
    double g = idle_guarantee(t, "idle", &c, 20);
    assert_true(g < 0.2);            /* down to about min_cpu_limit */
    assert_true(g >= 0.1);
    struct fake_job *fj = fake_find("idle");
    assert_true(fj->set_calls > 0);
    assert_true(fabs(fj->guarantee - g) < 1e-12);   /* applied as the weight */

    /* a busy job keeps its guarantee */
    fr.cpu_rate = 1.0;
    struct ps_node_start s = start_msg("busy", 1.0, &c);
    ps_node_jobs_start(t, &s, 20000);
    for (int64_t now = 20100; now <= 30000; now += 100)
        ps_node_jobs_tick(t, now);
    assert_true(ps_node_jobs_cpu_guarantee(t, "busy") == 1.0);
    assert_int_equal(fake_find("busy")->set_calls, 0);

    /* statistics of the idle job as upstream's test expects them */
    end_job(fj, PS_NODE_OUTCOME_COMPLETED, 0, NULL, NULL, 30000);
    ps_node_jobs_tick(t, 30000);
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    json_t *st = json_object_get(entry(rep, "idle"), "statistics");
    assert_true(json_integer_value(json_object_get(st, "job_proxy/smoothed_cpu_usage_x100")) <=
                15);
    assert_true(json_integer_value(json_object_get(st, "job_proxy/preemptible_cpu_x100")) >= 80);
    assert_true(json_integer_value(json_object_get(st, "job_proxy/aggregated_preempted_cpu_x100"))
                > 0);
    json_decref(rep);
    ps_node_jobs_free(t);
}

static void test_cpu_reclaim_off_and_no_weights(void **state)
{
    struct ps_node_jobs *t = new_table(0);
    struct ps_cpu_monitor_config c = reclaim_config(false);
    double g = idle_guarantee(t, "dry", &c, 20);
    /* The dry run moves the soft limit in the statistics only; the reported guarantee (the
     * scheduler's cpu usage of the job) stays the limit and nothing is applied, as upstream. */
    assert_true(g == 1.0);
    assert_int_equal(fake_find("dry")->set_calls, 0);

    fr.no_weights = true;
    c = reclaim_config(true);
    g = idle_guarantee(t, "nocg", &c, 20);
    assert_true(g < 0.2);                               /* accepted as bookkeeping */
    assert_int_equal(fake_find("nocg")->set_calls, 0);
    ps_node_jobs_free(t);
}

/* The node's CPU overdraft (core/node_overdraft.h) with upstream's TestDynamicCpuReclaim node
 * settings: cpu_overdraft_timeout 1 s, resource_adjustment_period 1 s, 1.5 cores. An idle job
 * lends its core and a second job fits; a third does not: the adjustment after a period from
 * the first tick (1100, 2100, ...) that sees it records it, and the one more than 1 s later
 * aborts the newest job only. */
static void test_cpu_overdraft(void **state)
{
    struct ps_node_jobs_config cfg;
    ps_node_jobs_config_init(&cfg);
    assert_int_equal(cfg.overdraft.cpu_overdraft_timeout_ms, 600000);   /* upstream's defaults */
    assert_int_equal(cfg.overdraft.resource_adjustment_period_ms, 5000);
    cfg.node_cpu = 1.5;
    cfg.overdraft.cpu_overdraft_timeout_ms = 1000;
    cfg.overdraft.resource_adjustment_period_ms = 1000;
    struct ps_node_jobs *t = NULL;
    assert_int_equal(ps_node_jobs_new(&fake_runner, &cfg, &t, NULL), 0);
    struct ps_cpu_monitor_config c = reclaim_config(true);
    double g = idle_guarantee(t, "a", &c, 20);     /* ticks from 100 to 20000 */
    assert_true(g < 0.5);
    fr.cpu_rate = 1.0;
    struct ps_node_start b = start_msg("b", 1.0, NULL);
    ps_node_jobs_start(t, &b, 20000);
    for (int64_t now = 20100; now <= 25000; now += 100)
        ps_node_jobs_tick(t, now);
    assert_string_equal(fake_find("b")->abort_reason, "");   /* a's lent core: it fits */
    /* a gets busy: its guarantee climbs back to its whole core, the jobs' guarantees pass the
     * node's cpu, and after cpu_overdraft_timeout the newest job (b) goes */
    fake_find("a")->cpu_rate = 1.0;
    int64_t now = 25100;
    for (; now <= 60000 && !fake_find("b")->abort_reason[0]; now += 100)
        ps_node_jobs_tick(t, now);
    assert_string_equal(fake_find("b")->abort_reason, "resource_overdraft");
    assert_string_equal(fake_find("a")->abort_reason, "");
    for (int64_t end = now + 10000; now <= end; now += 100)   /* fits again: nothing more */
        ps_node_jobs_tick(t, now);
    assert_string_equal(fake_find("a")->abort_reason, "");
    ps_node_jobs_free(t);
}

/* A job the running jobs leave no user slot or cpu for waits (reported as running), starts
 * when they are reaped, and is aborted with waiting_timeout after its waiting timeout (the
 * scheduler's, else the node's 30 s); an abort of a waiting job aborts it at once. */
static void test_waiting_for_resources(void **state)
{
    struct ps_node_jobs_config cfg;
    ps_node_jobs_config_init(&cfg);
    assert_int_equal(cfg.waiting_for_resources_timeout_ms, 30000);
    cfg.node_cpu = 1.0;
    cfg.user_slots = 2;
    struct ps_node_jobs *t = NULL;
    assert_int_equal(ps_node_jobs_new(&fake_runner, &cfg, &t, NULL), 0);
    struct ps_node_start a = start_msg("a", 1.0, NULL), b = start_msg("b", 1.0, NULL);
    b.waiting_job_timeout_ms = 10000;
    ps_node_jobs_start(t, &a, 0);
    ps_node_jobs_interrupt(t, "a", 5000, "preemption", 0);
    ps_node_jobs_start(t, &b, 0);                 /* a still holds the cpu: b waits */
    assert_null(fake_find("b"));
    assert_int_equal(ps_node_jobs_running_count(t), 2);
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    assert_string_equal(json_string_value(json_object_get(entry(rep, "b"), "state")), "running");
    json_decref(rep);
    for (int64_t now = 100; now < 5000; now += 100)
        ps_node_jobs_tick(t, now);
    assert_null(fake_find("b"));
    ps_node_jobs_tick(t, 5000);                   /* a's interrupt deadline: reaped, b starts */
    assert_non_null(fake_find("b"));
    assert_int_equal(fake_find("b")->start_ms, 5000);

    /* c may wait 2 s (the node's timeout: the scheduler sent none) */
    ps_node_jobs_free(t);
    cfg.waiting_for_resources_timeout_ms = 2000;
    assert_int_equal(ps_node_jobs_new(&fake_runner, &cfg, &t, NULL), 0);
    struct ps_node_start c = start_msg("c", 0.5, NULL), d = start_msg("d", 1.0, NULL),
                         e = start_msg("e", 1.0, NULL);
    ps_node_jobs_start(t, &c, 0);
    ps_node_jobs_start(t, &d, 0);
    ps_node_jobs_start(t, &e, 0);
    assert_null(fake_find("d"));
    ps_node_jobs_abort(t, "e", "scheduler");     /* a waiting job: aborted at once */
    ps_node_jobs_tick(t, 1900);
    assert_null(fake_find("d"));
    rep = ps_node_jobs_report(t, &more);
    assert_string_equal(json_string_value(json_object_get(entry(rep, "e"), "abort_reason")),
                        "scheduler");
    assert_string_equal(json_string_value(json_object_get(entry(rep, "d"), "state")), "running");
    json_decref(rep);
    ps_node_jobs_tick(t, 2000);
    assert_null(fake_find("d"));
    rep = ps_node_jobs_report(t, &more);
    const json_t *dr = entry(rep, "d");
    assert_string_equal(json_string_value(json_object_get(dr, "state")), "aborted");
    assert_string_equal(json_string_value(json_object_get(dr, "abort_reason")), "waiting_timeout");
    assert_non_null(strstr(json_string_value(json_object_get(dr, "stderr")),
                           "Allocation waiting for resources has timed out"));
    json_decref(rep);
    assert_int_equal(ps_node_jobs_running_count(t), 1);
    ps_node_jobs_free(t);
}

static void test_memory_overdraft(void **state)
{
    /* node of 100 MiB; reserves 50 MiB each */
    struct ps_node_jobs *t = new_table(100 << 20);
    fr.memory_bytes = 40 << 20;
    struct ps_node_start a = start_msg("small", 1.0, NULL);
    ps_node_jobs_start(t, &a, 0);
    fr.memory_bytes = 70 << 20;
    struct ps_node_start b = start_msg("big", 1.0, NULL);
    ps_node_jobs_start(t, &b, 0);
    /* 110 MiB > 100 MiB: big (20 MiB over its reserve) goes */
    ps_node_jobs_tick(t, 100);
    assert_string_equal(fake_find("big")->abort_reason, "resource_overdraft");
    assert_string_equal(fake_find("small")->abort_reason, "");
    ps_node_jobs_tick(t, 200);
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    json_t *e = entry(rep, "big");
    assert_string_equal(json_string_value(json_object_get(e, "state")), "aborted");
    assert_string_equal(json_string_value(json_object_get(e, "abort_reason")),
                        "resource_overdraft");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "statistics"),
                                                        "user_job/max_memory")),
                     70 << 20);
    json_decref(rep);
    ps_node_jobs_free(t);

    /* the same jobs on a node with room: nobody is aborted */
    t = new_table(200 << 20);
    fr.memory_bytes = 70 << 20;
    ps_node_jobs_start(t, &b, 0);
    ps_node_jobs_tick(t, 100);
    assert_string_equal(fake_find("big")->abort_reason, "");
    ps_node_jobs_free(t);
}

static void test_stderr_budget(void **state)
{
    struct ps_node_jobs_config cfg;
    ps_node_jobs_config_init(&cfg);
    cfg.report_stderr_budget_bytes = 100;
    struct ps_node_jobs *t = NULL;
    assert_int_equal(ps_node_jobs_new(&fake_runner, &cfg, &t, NULL), 0);
    static char text[80];
    memset(text, 'x', sizeof text);
    const char *ids[] = {"s1", "s2", "s3"};
    for (int i = 0; i < 3; i++) {
        struct ps_node_start s = start_msg(ids[i], 1.0, NULL);
        ps_node_jobs_start(t, &s, 0);
        struct fake_job *fj = fake_find(ids[i]);
        fj->stderr_text = text;
        fj->stderr_len = sizeof text;
        end_job(fj, PS_NODE_OUTCOME_COMPLETED, 0, NULL, NULL, 10);
    }
    ps_node_jobs_tick(t, 10);
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    assert_true(more);
    assert_int_equal(json_array_size(rep), 1);   /* one always goes, the budget stops more */
    json_decref(rep);
    assert_true(ps_node_jobs_acknowledge(t, "s1"));
    rep = ps_node_jobs_report(t, &more);
    assert_true(more);
    assert_non_null(entry(rep, "s2"));
    json_decref(rep);
    ps_node_jobs_free(t);
}

/* A running job's stderr so far goes in its running entry when it changed since last sent
 * (get_job_stderr of a running job), within a quarter of the stderr budget. */
static void test_running_stderr(void **state)
{
    struct ps_node_jobs_config cfg;
    ps_node_jobs_config_init(&cfg);
    cfg.report_stderr_budget_bytes = 40;   /* 10 bytes for running jobs */
    struct ps_node_jobs *t = NULL;
    assert_int_equal(ps_node_jobs_new(&fake_runner, &cfg, &t, NULL), 0);
    struct ps_node_start s1 = start_msg("r1", 1.0, NULL), s2 = start_msg("r2", 1.0, NULL);
    ps_node_jobs_start(t, &s1, 0);
    ps_node_jobs_start(t, &s2, 0);
    bool more;
    json_t *rep = ps_node_jobs_report(t, &more);
    assert_null(json_object_get(entry(rep, "r1"), "stderr"));   /* nothing written yet */
    json_decref(rep);
    struct fake_job *f1 = fake_find("r1"), *f2 = fake_find("r2");
    f1->stderr_text = "started \xff\n";
    f1->stderr_len = strlen(f1->stderr_text);
    f2->stderr_text = "r2 says hi\n";
    f2->stderr_len = strlen(f2->stderr_text);
    rep = ps_node_jobs_report(t, &more);
    assert_string_equal(json_string_value(json_object_get(entry(rep, "r1"), "stderr")),
                        "started \xef\xbf\xbd\n");
    assert_false(json_is_true(json_object_get(entry(rep, "r1"), "stderr_truncated")));
    assert_null(json_object_get(entry(rep, "r2"), "stderr"));   /* over the running budget */
    json_decref(rep);
    rep = ps_node_jobs_report(t, &more);   /* r1 unchanged: not again; r2's turn */
    assert_null(json_object_get(entry(rep, "r1"), "stderr"));
    assert_string_equal(json_string_value(json_object_get(entry(rep, "r2"), "stderr")),
                        "r2 says hi\n");
    json_decref(rep);
    f1->stderr_text = "started \xff\nmore\n";
    f1->stderr_len = strlen(f1->stderr_text);
    rep = ps_node_jobs_report(t, &more);
    assert_string_equal(json_string_value(json_object_get(entry(rep, "r1"), "stderr")),
                        "started \xef\xbf\xbd\nmore\n");
    json_decref(rep);
    ps_node_jobs_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_shape),
        cmocka_unit_test(test_reply_parse),
        cmocka_unit_test(test_reply_rejects),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_resources_and_tags),
        cmocka_unit_test(test_overdraft_victims),
        cmocka_unit_test_setup(test_job_lifecycle, setup),
        cmocka_unit_test_setup(test_killed_while_lost, setup),
        cmocka_unit_test_setup(test_start_failures, setup),
        cmocka_unit_test_setup(test_interrupt_and_abort, setup),
        cmocka_unit_test_setup(test_cpu_reclaim_on, setup),
        cmocka_unit_test_setup(test_cpu_reclaim_off_and_no_weights, setup),
        cmocka_unit_test_setup(test_cpu_overdraft, setup),
        cmocka_unit_test_setup(test_waiting_for_resources, setup),
        cmocka_unit_test_setup(test_memory_overdraft, setup),
        cmocka_unit_test_setup(test_stderr_budget, setup),
        cmocka_unit_test_setup(test_running_stderr, setup),
        cmocka_unit_test(test_gpu_packing),
        cmocka_unit_test(test_ports),
        cmocka_unit_test_setup(test_job_devices, setup),
        cmocka_unit_test_setup(test_job_vcpu, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
