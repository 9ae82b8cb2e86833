/* cmd_node.c — `poolsched node`: the node agent (src/node/agent.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "node/agent.h"
#include "node/args.h"
#include "node/devices.h"
#include "node/protocol.h"
#include "node/runner_platform.h"
#include "platform/data_dir.h"
#include "platform/daemon.h"
#include "platform/private_file.h"
#include "platform/procfs.h"

static const char usage_text[] =
    "usage: poolsched node --scheduler URL [--node-id ID] [--tags gpu,ssd]\n"
    "                      [--resources cpu=4,memory=8G,user_slots=8] [--work-dir DIR]\n"
    "                      [--secret-file FILE | --data-dir DIR] [OPTIONS]\n"
    "\n"
    "Runs a node agent: registers with the scheduler, heartbeats, and runs the jobs it is given\n"
    "as `sh -c COMMAND` in their own process group and sandbox, with CPU and memory limits\n"
    "through cgroups where the machine has usable ones. SIGTERM or SIGINT stops the agent and\n"
    "aborts its jobs (reported to the scheduler as node_shutdown).\n"
    "\n"
    "  --scheduler URL         the scheduler, e.g. http://127.0.0.1:9013; standby\n"
    "                          schedulers (docs/ha.md): URL,URL (the agent follows the leader)\n"
    "  --node-id ID            this node's name (default: the host name); 1..64 of\n"
    "                          [A-Za-z0-9._-]\n"
    "  --tags LIST             comma-separated node tags, matched by pool trees' nodes_filter\n"
    "  --disk-space-per-medium LIST\n"
    "                          MEDIUM=SIZE,... the disk space of the node's slot locations per\n"
    "                          medium (e.g. default=100G,ssd_slots=20G), for jobs' disk_request\n"
    "                          (default: none; such jobs then do not run here)\n"
    "  --resources LIST        cpu=CORES,memory=SIZE,user_slots=N,gpu=N (default: all online\n"
    "                          CPUs, the physical memory, 2 slots per CPU, no GPUs); sizes like\n"
    "                          8G are binary; a job with gpu_limit G gets G of the devices\n"
    "                          0..N-1, named in its NVIDIA_VISIBLE_DEVICES/CUDA_VISIBLE_DEVICES\n"
    "  --start-port PORT       the first of the ports given to jobs with port_count, as\n"
    "                          $YT_PORT_0.. (YTsaurus's start_port; default 20000)\n"
    "  --port-count N          how many ports from --start-port (default 10000; 0: none)\n"
    "  --cpu-to-vcpu-factor F  the scheduler counts this node's cpu and its jobs' cpu in vcpu\n"
    "                          = cores x F (YTsaurus's cpu_to_vcpu_factor; default: the\n"
    "                          nodes' dynamic config //sys/cluster_nodes/@config, else 1);\n"
    "                          jobs run with vcpu / F cores\n"
    "  --cpu-model NAME        the node's cpu_model, the key of the dynamic config's\n"
    "                          cpu_model_to_cpu_to_vcpu_factor (default: /proc/cpuinfo's\n"
    "                          model name)\n"
    "  --work-dir DIR          sandboxes go to DIR/sandbox/<job_id> (default:\n"
    "                          /tmp/poolsched-node-<node id>)\n"
    "  --secret-file FILE      the cluster secret (mode 0600); else $POOLSCHED_CLUSTER_SECRET;\n"
    "  --data-dir DIR          else DIR/cluster_secret (the scheduler's data dir; default\n"
    "                          $POOLSCHED_DATA_DIR, else $XDG_STATE_HOME/poolsched, else\n"
    "                          ./poolsched-data, as for the scheduler)\n"
    "  --heartbeat-period MS   until the scheduler sets it (default 5000)\n"
    "  --tick MS               how often jobs are sampled (default 100)\n"
    "  --stderr-cap SIZE       stderr kept per job, head and tail (default 64K, the most the\n"
    "                          scheduler keeps; at most 4M);\n"
    "                          it travels in the job's finished record for get_job_stderr\n"
    "  --slot-uid-base UID     when root: the job in slot i runs as uid = gid = UID + i\n"
    "                          (default 10000, as YTsaurus's start_uid); none of these ids may\n"
    "                          belong to an account or group\n"
    "  --job-user USER         when root: run every job as USER instead (one identity for all\n"
    "                          jobs, so they are not isolated from each other; root refused)\n"
    "  --no-cgroups            run jobs without cgroups (no CPU limits) even where they work\n"
    "  --keep-sandbox          leave sandboxes after jobs end (debugging)\n"
    "  --no-long-poll          heartbeat every period only, as YTsaurus's nodes do (by default\n"
    "                          the scheduler may hold a heartbeat until it has work for the\n"
    "                          node, at most a period: new jobs start at once)\n"
    "  --cpu-overdraft-timeout MS\n"
    "                          abort the newest jobs (resource_overdraft) once the jobs' CPU\n"
    "                          guarantees have been above the node's cpu this long (YTsaurus's\n"
    "                          cpu_overdraft_timeout; default 600000)\n"
    "  --resource-adjustment-period MS\n"
    "                          how often that is checked (YTsaurus's resource_adjustment_period;\n"
    "                          default 5000)\n"
    "  --always-abort-on-memory-reserve-overdraft\n"
    "                          abort a job above its memory reserve even while the node has\n"
    "                          the memory (YTsaurus's node setting of that name; default off)\n"
    "  --verbose               log every heartbeat\n";

/* "default=100G,ssd_slots=20G" -> {"default": bytes, "ssd_slots": bytes}; NULL with err set. */
static json_t *parse_media(const char *text, struct ps_error *err)
{
    json_t *media = json_object();
    char *copy = strdup(text);
    if (!media || !copy) {
        json_decref(media);
        free(copy);
        ps_error_set(err, PS_ENOMEM, "out of memory");
        return NULL;
    }
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        int64_t bytes = 0;
        if (!eq || eq == item) {
            ps_error_set(err, PS_EINVAL, "\"%.40s\": must be MEDIUM=SIZE", item);
        } else {
            *eq = '\0';
            if (json_object_get(media, item))
                ps_error_set(err, PS_EINVAL, "medium \"%.40s\" given twice", item);
            else if (ps_node_parse_size(eq + 1, &bytes, err) == 0)
                json_object_set_new(media, item, json_integer(bytes));
        }
        if (err->code != 0) {
            json_decref(media);
            free(copy);
            return NULL;
        }
    }
    free(copy);
    if (json_object_size(media) == 0 || json_object_size(media) > 16) {
        json_decref(media);
        ps_error_set(err, PS_EINVAL, "\"%.40s\": must name 1 to 16 media", text);
        return NULL;
    }
    return media;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "error: node: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see poolsched node --help)\n");
    va_end(ap);
    return 2;
}

static bool parse_ms(const char *s, long long min, long long max, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* The cluster secret: --secret-file, else the environment, else <data dir>/cluster_secret with
 * the data dir resolved as the scheduler does (platform/data_dir.h). */
static int load_secret(const char *file, const char *data_dir, char **out)
{
    *out = NULL;
    const char *env = getenv("POOLSCHED_CLUSTER_SECRET");
    char path[4096 + sizeof "/cluster_secret"];
    if (!file && env && *env) {
        *out = strdup(env);
        return *out ? 0 : 1;
    }
    char dir[4096];
    if (!file) {
        /* The scheduler's data dir by the shared rule, so that a node started beside a scheduler
         * with default settings finds its secret. */
        if (ps_data_dir_default(data_dir, dir, sizeof dir) != 0)
            return usage_error("--data-dir: the path is longer than %zu bytes", sizeof dir - 1);
        snprintf(path, sizeof path, "%s/cluster_secret", dir);
        file = path;
    }
    struct ps_error err;
    ps_error_init(&err);
    char *data = NULL;
    size_t len = 0;
    if (ps_private_file_read(file, 4096, &data, &len, &err) != 0) {
        fprintf(stderr, "error: node: cluster secret: %s\n", err.msg);
        return 1;
    }
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' '))
        data[--len] = '\0';
    if (len == 0) {
        free(data);
        fprintf(stderr, "error: node: cluster secret file %s is empty\n", file);
        return 1;
    }
    *out = data;
    return 0;
}

int ps_cmd_node(int argc, char **argv)
{
    const char *scheduler = NULL, *node_id = NULL, *tags_text = "", *media_text = NULL, *resources_text = NULL,
               *work_dir = NULL, *secret_file = NULL, *data_dir = NULL, *job_user = NULL;
    long long heartbeat_ms = 5000, tick_ms = 100, slot_uid_base = PS_NODE_SLOT_UID_BASE;
    long long start_port = PS_NODE_DEFAULT_START_PORT, port_count = PS_NODE_DEFAULT_PORT_COUNT;
    double vcpu_factor = 0;   /* none */
    const char *cpu_model = NULL;
    char proc_cpu_model[256];
    long long cpu_overdraft_ms = PS_NODE_CPU_OVERDRAFT_TIMEOUT_MS,
              adjustment_ms = PS_NODE_RESOURCE_ADJUSTMENT_PERIOD_MS;
    int64_t stderr_cap = 64 * 1024;
    bool no_cgroups = false, keep_sandbox = false, verbose = false, always_abort = false;
    bool long_poll = true;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strcmp(a, "--no-cgroups") == 0) {
            no_cgroups = true;
            continue;
        }
        if (strcmp(a, "--keep-sandbox") == 0) {
            keep_sandbox = true;
            continue;
        }
        if (strcmp(a, "--always-abort-on-memory-reserve-overdraft") == 0) {
            always_abort = true;
            continue;
        }
        if (strcmp(a, "--verbose") == 0) {
            verbose = true;
            continue;
        }
        if (strcmp(a, "--no-long-poll") == 0) {
            long_poll = false;
            continue;
        }
        static const char *const with_value[] = {
            "--scheduler", "--node-id", "--tags", "--disk-space-per-medium", "--resources",
            "--work-dir", "--secret-file",
            "--data-dir", "--heartbeat-period", "--tick", "--stderr-cap", "--job-user",
            "--slot-uid-base", "--cpu-overdraft-timeout", "--resource-adjustment-period",
            "--start-port", "--port-count", "--cpu-to-vcpu-factor", "--cpu-model", NULL};
        const char *flag = NULL, *value = NULL;
        for (int k = 0; with_value[k]; k++) {
            size_t n = strlen(with_value[k]);
            if (strncmp(a, with_value[k], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
                flag = with_value[k];
                if (a[n] == '=')
                    value = a + n + 1;
                else if (i + 1 < argc)
                    value = argv[++i];
                else
                    return usage_error("%s needs a value", flag);
            }
        }
        if (!flag)
            return usage_error("unknown argument \"%s\"", a);
        if (strcmp(flag, "--scheduler") == 0) {
            scheduler = value;
        } else if (strcmp(flag, "--node-id") == 0) {
            node_id = value;
        } else if (strcmp(flag, "--tags") == 0) {
            tags_text = value;
        } else if (strcmp(flag, "--disk-space-per-medium") == 0) {
            media_text = value;
        } else if (strcmp(flag, "--resources") == 0) {
            resources_text = value;
        } else if (strcmp(flag, "--work-dir") == 0) {
            work_dir = value;
        } else if (strcmp(flag, "--secret-file") == 0) {
            secret_file = value;
        } else if (strcmp(flag, "--data-dir") == 0) {
            data_dir = value;
        } else if (strcmp(flag, "--job-user") == 0) {
            job_user = value;
        } else if (strcmp(flag, "--slot-uid-base") == 0) {
            char *end = NULL;
            errno = 0;
            slot_uid_base = strtoll(value, &end, 10);
            if (*value == '\0' || *end || errno || slot_uid_base < 1 ||
                slot_uid_base > 0x7ffffffe)
                return usage_error("--slot-uid-base \"%.40s\": must be a uid in 1..2147483646",
                                   value);
        } else if (strcmp(flag, "--heartbeat-period") == 0) {
            if (!parse_ms(value, PS_NODE_MIN_HEARTBEAT_PERIOD_MS, PS_NODE_MAX_HEARTBEAT_PERIOD_MS,
                          &heartbeat_ms))
                return usage_error("--heartbeat-period \"%s\": must be milliseconds from 10 to "
                                   "3600000", value);
        } else if (strcmp(flag, "--cpu-overdraft-timeout") == 0) {
            if (!parse_ms(value, 0, 86400000, &cpu_overdraft_ms))
                return usage_error("--cpu-overdraft-timeout \"%s\": must be milliseconds from 0 "
                                   "to 86400000", value);
        } else if (strcmp(flag, "--resource-adjustment-period") == 0) {
            if (!parse_ms(value, 10, 3600000, &adjustment_ms))
                return usage_error("--resource-adjustment-period \"%s\": must be milliseconds "
                                   "from 10 to 3600000", value);
        } else if (strcmp(flag, "--start-port") == 0) {
            if (!parse_ms(value, 1, 65535, &start_port))
                return usage_error("--start-port \"%s\": must be a port from 1 to 65535", value);
        } else if (strcmp(flag, "--port-count") == 0) {
            if (!parse_ms(value, 0, 65535, &port_count))
                return usage_error("--port-count \"%s\": must be from 0 to 65535", value);
        } else if (strcmp(flag, "--cpu-model") == 0) {
            cpu_model = value;
        } else if (strcmp(flag, "--cpu-to-vcpu-factor") == 0) {
            char *end = NULL;
            errno = 0;
            vcpu_factor = strtod(value, &end);
            if (*value == '\0' || *end || errno || !(vcpu_factor > 0 && vcpu_factor <= 1000))
                return usage_error("--cpu-to-vcpu-factor \"%.40s\": cpu_to_vcpu_factor must be "
                                   "greater than 0 (and at most 1000)", value);
        } else if (strcmp(flag, "--tick") == 0) {
            if (!parse_ms(value, 5, 10000, &tick_ms))
                return usage_error("--tick \"%s\": must be milliseconds from 5 to 10000", value);
        } else if (strcmp(flag, "--stderr-cap") == 0) {
            struct ps_error e;
            ps_error_init(&e);
            if (ps_node_parse_size(value, &stderr_cap, &e) != 0)
                return usage_error("--stderr-cap: %s", e.msg);
            if (stderr_cap < 1024 || stderr_cap > 4 * 1024 * 1024)
                return usage_error("--stderr-cap \"%s\": must be from 1K to 4M", value);
        }
    }
    if (!scheduler)
        return usage_error("--scheduler URL is required");
    /* several standby schedulers: A,B (ha.h) */
    for (const char *p = scheduler; *p;) {
        if (strncmp(p, "http://", 7) != 0 && strncmp(p, "https://", 8) != 0)
            return usage_error("--scheduler \"%s\": each must be an http:// or https:// URL "
                               "(several: comma-separated)", scheduler);
        p += strcspn(p, ",");
        if (*p == ',')
            p++;
    }

    char host[256];
    if (!node_id) {
        ps_daemon_hostname(host, sizeof host);
        node_id = host;
    }
    if (!ps_node_id_valid(node_id, PS_NODE_ID_MAX))
        return usage_error("--node-id \"%.64s\": must be 1..64 of [A-Za-z0-9._-]", node_id);

    struct ps_error err;
    ps_error_init(&err);
    struct ps_node_resource_args res;
    memset(&res, 0, sizeof res);
    if (resources_text && ps_node_parse_resources(resources_text, &res, &err) != 0)
        return usage_error("--resources: %s", err.msg);
    double cpu = res.has_cpu ? res.cpu : (double)ps_daemon_cpu_count();
    int64_t memory = res.has_memory ? res.memory_bytes : ps_daemon_physical_memory_bytes();
    int64_t slots = res.has_user_slots ? res.user_slots : 2 * (int64_t)ps_daemon_cpu_count();
    if (memory <= 0)
        return usage_error("cannot tell the machine's memory: give --resources memory=SIZE");
    if (start_port + port_count - 1 > 65535)
        return usage_error("--start-port %lld with --port-count %lld: the ports must end by "
                           "65535", start_port, port_count);

    char **tags = NULL;
    size_t tag_count = 0;
    if (ps_node_parse_tags(tags_text, &tags, &tag_count, &err) != 0)
        return usage_error("--tags: %s", err.msg);
    json_t *media = NULL;
    if (media_text && (media = parse_media(media_text, &err)) == NULL) {
        ps_node_tags_free(tags, tag_count);
        return usage_error("--disk-space-per-medium: %s", err.msg);
    }

    char default_work_dir[512];
    if (!work_dir) {
        snprintf(default_work_dir, sizeof default_work_dir, "/tmp/poolsched-node-%s", node_id);
        work_dir = default_work_dir;
    }

    char *secret = NULL;
    int rc = load_secret(secret_file, data_dir, &secret);
    if (rc) {
        ps_node_tags_free(tags, tag_count);
        return rc;
    }

    /* Before any thread exists (capture readers, curl), so all of them inherit the mask. */
    if (ps_daemon_signals_block(&err) != 0) {
        fprintf(stderr, "error: node: %s\n", err.msg);
        free(secret);
        ps_node_tags_free(tags, tag_count);
        return 1;
    }

    /* Random per start: names this agent's cgroups and marks its jobs' environments, and the
     * scheduler refuses a second live agent with the same node id by it. */
    char instance[32];
    if (ps_node_instance_id_new(instance, sizeof instance, &err) != 0) {
        fprintf(stderr, "error: node: %s\n", err.msg);
        free(secret);
        ps_node_tags_free(tags, tag_count);
        return 1;
    }
    struct ps_node_platform_config pcfg = {
        .node_id = node_id,
        .instance_id = instance,
        .guard = true,
        .work_dir = work_dir,
        .job_user = job_user,
        .user_slots = slots,
        .slot_uid_base = slot_uid_base,
        .stderr_cap_bytes = stderr_cap,
        .stdout_cap_bytes = 0,
        .disable_cgroups = no_cgroups,
        .keep_sandbox = keep_sandbox,
    };
    struct ps_node_runner runner;
    const char *summary = NULL;
    if (ps_node_runner_platform_new(&pcfg, &runner, &summary, &err) != 0) {
        fprintf(stderr, "error: node: %s\n", err.msg);
        free(secret);
        ps_node_tags_free(tags, tag_count);
        return 1;
    }
    fprintf(stderr, "node %s: %s\n", node_id, summary ? summary : "cgroups: unknown");
    fprintf(stderr, "node %s: %s\n", node_id, ps_node_runner_platform_users(&runner));
    if (!runner.caps.cpu_limit)
        fprintf(stderr, "node %s: no usable cpu cgroup: jobs run without CPU limits\n", node_id);

    struct ps_node_agent_config cfg;
    ps_node_agent_config_init(&cfg);
    cfg.scheduler_url = scheduler;
    cfg.token = secret;
    cfg.node_id = node_id;
    cfg.instance_id = instance;
    cfg.tags = (const char *const *)tags;
    cfg.tag_count = tag_count;
    cfg.cpu = cpu;
    cfg.memory_bytes = memory;
    cfg.user_slots = slots;
    cfg.media = media;
    cfg.gpu_count = res.has_gpu ? res.gpu : 0;
    cfg.cpu_to_vcpu_factor = vcpu_factor;
    if (!cpu_model) {
        ps_procfs_cpu_model("/proc", proc_cpu_model, sizeof proc_cpu_model);
        cpu_model = proc_cpu_model;
    }
    cfg.cpu_model = cpu_model;
    cfg.start_port = (int)start_port;
    cfg.port_count = (int)port_count;
    cfg.heartbeat_period_ms = heartbeat_ms;
    cfg.tick_ms = tick_ms;
    cfg.always_abort_on_memory_reserve_overdraft = always_abort;
    cfg.overdraft.cpu_overdraft_timeout_ms = cpu_overdraft_ms;
    cfg.overdraft.resource_adjustment_period_ms = adjustment_ms;
    cfg.verbose = verbose;
    cfg.long_poll = long_poll;
    rc = ps_node_agent_run(&cfg, &runner, &err);
    if (rc != 0)
        fprintf(stderr, "error: node: %s\n", err.msg);
    ps_node_runner_platform_free(&runner);
    free(secret);
    ps_node_tags_free(tags, tag_count);
    json_decref(media);
    return rc == 0 ? 0 : 1;
}
