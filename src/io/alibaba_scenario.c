/* alibaba_scenario.c — the Alibaba GPU trace as a scenario; the rules are explained in
 * docs/alibaba-trace.md, which must change with this file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formula.h"
#include "core/resources.h"
#include "io/alibaba.h"

#define MIB ((int64_t)1024 * 1024)
#define MAX_TIME_SCALE 1000.0
#define MAX_COMPRESS 1000000.0
#define MAX_START_OFFSET_S ((int64_t)1 << 32)

static const struct {
    const char *name;
    const char *action;
} rules[PS_ALIBABA_RULE_COUNT] = {
    [PS_ALIBABA_BEFORE_START_OFFSET] = {"before_start_offset", "not selected (created before --start-offset)"},
    [PS_ALIBABA_BEYOND_LIMIT] = {"beyond_limit", "not selected (after the first --limit pods)"},
    [PS_ALIBABA_NEVER_SCHEDULED] = {"never_scheduled", "submitted with the median run time"},
    [PS_ALIBABA_DELETED_BEFORE_SCHEDULED] = {"deleted_before_scheduled", "submitted with the median run time"},
    [PS_ALIBABA_STILL_RUNNING] = {"still_running_at_end", "runs until the trace end"},
    [PS_ALIBABA_ZERO_LENGTH_RUN] = {"zero_length_run", "runs 1 s"},
    [PS_ALIBABA_SCHEDULED_BEFORE_CREATION] = {"scheduled_before_creation", "submitted at creation, runs from scheduling"},
    [PS_ALIBABA_FRACTIONAL_GPU] = {"fractional_gpu", "takes whole GPUs (rounded up)"},
    [PS_ALIBABA_GPU_SPEC_FILTER] = {"gpu_spec_filter", "gpu_spec becomes spec.scheduling_tag_filter"},
    [PS_ALIBABA_NO_NODE_FITS] = {"no_node_fits", "skipped: bigger than every node"},
    [PS_ALIBABA_NO_MATCHING_NODE_FITS] = {"no_matching_node_fits", "skipped: bigger than every node its gpu_spec allows"},
    [PS_ALIBABA_SCALED_TO_ZERO] = {"scaled_to_zero", "run time scaled below 1 ms: runs 1 ms"},
    [PS_ALIBABA_CPU_ONLY_NODE] = {"cpu_only_node", "node without model and GPU: tag " PS_ALIBABA_CPU_ONLY_TAG},
    [PS_ALIBABA_UNKNOWN_GPU_NODE] = {"unknown_gpu_node", "node without model but with GPUs: tag " PS_ALIBABA_UNKNOWN_GPU_TAG},
};

const char *ps_alibaba_rule_name(int rule)
{
    return rule >= 0 && rule < PS_ALIBABA_RULE_COUNT ? rules[rule].name : NULL;
}

const char *ps_alibaba_rule_action(int rule)
{
    return rule >= 0 && rule < PS_ALIBABA_RULE_COUNT ? rules[rule].action : NULL;
}

/* Pools by qos: weight and strong guarantee in percent of the cluster (cpu, memory, gpu). */
static const struct {
    const char *qos;
    const char *pool;
    int weight;
    int guarantee_percent;
} qos_pools[] = {
    {"LS", "ls", 4, 40},
    {"Guaranteed", "guaranteed", 4, 5},
    {"Burstable", "burstable", 2, 0},
    {"BE", "be", 1, 0},
};
#define QOS_POOL_COUNT (sizeof qos_pools / sizeof qos_pools[0])

/* ---- values ----------------------------------------------------------------------------- */

static int64_t cpu_hundredths(int64_t milli)
{
    return (milli + 5) / 10;   /* nearest hundredth, halves up */
}

static json_t *cpu_json(int64_t hundredths)
{
    if (hundredths % PS_CPU_SCALE == 0)
        return json_integer(hundredths / PS_CPU_SCALE);
    return json_real((double)hundredths / PS_CPU_SCALE);
}

static void format_cores(char *buf, size_t size, int64_t h)
{
    if (h % 100 == 0)
        snprintf(buf, size, "%lld", (long long)(h / 100));
    else if (h % 10 == 0)
        snprintf(buf, size, "%lld.%lld", (long long)(h / 100), (long long)(h % 100 / 10));
    else
        snprintf(buf, size, "%lld.%02lld", (long long)(h / 100), (long long)(h % 100));
}

/* floor(x * percent / 100) without overflow. */
static int64_t percent_of(int64_t x, int percent)
{
    return x / 100 * percent + x % 100 * percent / 100;
}

static int64_t scale_ms(int64_t seconds, double k)
{
    if (k == 1.0)
        return seconds * 1000;
    return llround((double)seconds * 1000.0 * k);
}

/* A start time: seconds after the origin, x time_scale, / compress, rounded to the ms. */
static int64_t start_ms(int64_t seconds, const struct ps_alibaba_options *o)
{
    if (o->compress == 1.0)
        return scale_ms(seconds, o->time_scale);
    return llround((double)seconds * 1000.0 * o->time_scale / o->compress);
}

/* ---- node groups ------------------------------------------------------------------------ */

struct group {
    const char *tag;
    int64_t cpu;          /* hundredths */
    int64_t memory_mib;
    int64_t gpu;
    int64_t count;
    char name[192];   /* "<tag>_c<cores>_m<memory>_g<gpu>"; tags have at most 64 characters */
};

static const char *node_tag(const struct ps_alibaba_node *n)
{
    if (n->model[0] != '\0')
        return n->model;
    return n->gpu > 0 ? PS_ALIBABA_UNKNOWN_GPU_TAG : PS_ALIBABA_CPU_ONLY_TAG;
}

static int compare_groups(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    int c = strcmp(x->tag, y->tag);
    if (c != 0)
        return c;
    if (x->cpu != y->cpu)
        return x->cpu < y->cpu ? -1 : 1;
    if (x->memory_mib != y->memory_mib)
        return x->memory_mib < y->memory_mib ? -1 : 1;
    return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

/* Groups the nodes by (tag, cpu, memory, gpu), sorted by that key. */
static struct group *build_groups(const struct ps_alibaba_trace *t, size_t *count,
                                  struct ps_alibaba_stats *stats)
{
    struct group *g = malloc(t->node_count * sizeof *g);
    if (!g)
        return NULL;
    for (size_t i = 0; i < t->node_count; i++) {
        const struct ps_alibaba_node *n = &t->nodes[i];
        g[i] = (struct group){node_tag(n), cpu_hundredths(n->cpu_milli), n->memory_mib, n->gpu, 1, ""};
        if (n->model[0] == '\0')
            stats->rule[n->gpu > 0 ? PS_ALIBABA_UNKNOWN_GPU_NODE : PS_ALIBABA_CPU_ONLY_NODE]++;
    }
    qsort(g, t->node_count, sizeof *g, compare_groups);
    size_t k = 0;
    for (size_t i = 0; i < t->node_count; i++) {
        if (k > 0 && compare_groups(&g[k - 1], &g[i]) == 0)
            g[k - 1].count++;
        else
            g[k++] = g[i];
    }
    for (size_t i = 0; i < k; i++) {
        char cores[32], memory[32];
        format_cores(cores, sizeof cores, g[i].cpu);
        if (g[i].memory_mib % 1024 == 0)
            snprintf(memory, sizeof memory, "%lldG", (long long)(g[i].memory_mib / 1024));
        else
            snprintf(memory, sizeof memory, "%lldM", (long long)g[i].memory_mib);
        snprintf(g[i].name, sizeof g[i].name, "%s_c%s_m%s_g%lld", g[i].tag, cores, memory,
                 (long long)g[i].gpu);
    }
    *count = k;
    return g;
}

static json_t *groups_json(const struct group *g, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++) {
        json_t *item = json_pack("{s:s, s:I, s:{s:o, s:I, s:I, s:I}, s:[s]}", "name", g[i].name,
                                 "count", (json_int_t)g[i].count, "resource_limits", "cpu",
                                 cpu_json(g[i].cpu), "memory",
                                 (json_int_t)(g[i].memory_mib * MIB), "gpu", (json_int_t)g[i].gpu,
                                 "user_slots", (json_int_t)PS_ALIBABA_NODE_USER_SLOTS, "tags",
                                 g[i].tag);
        if (!item || json_array_append_new(list, item) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

/* The tree's operation count limits, all set to `pods` (at least 1): a pod is an operation,
 * and Kubernetes limits pods only per node (user_slots), so no pod may be refused or held
 * back by YTsaurus's defaults (50 per pool, 2000 running in the tree) when many overlap. */
static const char *const operation_limits[] = {
    "max_operation_count", "max_operation_count_per_pool", "max_running_operation_count",
    "max_running_operation_count_per_pool"};

static json_t *tree_json(const struct group *g, size_t n, int64_t pods)
{
    int64_t cpu = 0, memory = 0, gpu = 0;
    for (size_t i = 0; i < n; i++) {
        cpu += g[i].cpu * g[i].count;
        memory += g[i].memory_mib * MIB * g[i].count;
        gpu += g[i].gpu * g[i].count;
    }
    json_t *pools = json_array();
    for (size_t i = 0; pools && i < QOS_POOL_COUNT; i++) {
        json_t *pool = json_pack("{s:s, s:i}", "name", qos_pools[i].pool, "weight",
                                 qos_pools[i].weight);
        int p = qos_pools[i].guarantee_percent;
        if (pool && p > 0 &&
            json_object_set_new(pool, "strong_guarantee_resources",
                                json_pack("{s:o, s:I, s:I}", "cpu", cpu_json(percent_of(cpu, p)),
                                          "memory", (json_int_t)percent_of(memory, p), "gpu",
                                          (json_int_t)percent_of(gpu, p))) != 0) {
            json_decref(pool);
            pool = NULL;
        }
        if (!pool || json_array_append_new(pools, pool) != 0) {
            json_decref(pools);
            return NULL;
        }
    }
    if (!pools)
        return NULL;
    json_t *tree = json_object();
    int failed = json_object_set_new(tree, "pools", pools);
    for (size_t i = 0; i < sizeof operation_limits / sizeof operation_limits[0]; i++)
        failed |= json_object_set_new(tree, operation_limits[i], json_integer(pods > 0 ? pods : 1));
    if (failed) {
        json_decref(tree);
        return NULL;
    }
    return json_pack("{s:o}", PS_ALIBABA_TREE, tree);
}

/* ---- pods ------------------------------------------------------------------------------- */

/* The run time of a pod in trace seconds by the rules; false when the trace does not tell
 * (the pod never ran) and the median applies. Fired rules are counted into rule when not NULL. */
static bool run_time(const struct ps_alibaba_pod *pod, int64_t trace_end, int64_t *rule,
                     int64_t *run_s)
{
    int64_t dummy[PS_ALIBABA_RULE_COUNT];
    if (!rule)
        rule = dummy;
    if (pod->scheduled_time == PS_ALIBABA_NO_TIME) {
        rule[PS_ALIBABA_NEVER_SCHEDULED]++;
        return false;
    }
    if (pod->scheduled_time < pod->creation_time)
        rule[PS_ALIBABA_SCHEDULED_BEFORE_CREATION]++;
    int64_t deletion = pod->deletion_time;
    if (deletion == PS_ALIBABA_NO_TIME || deletion == 0) {
        rule[PS_ALIBABA_STILL_RUNNING]++;
        deletion = trace_end;
    }
    if (deletion < pod->scheduled_time) {
        rule[PS_ALIBABA_DELETED_BEFORE_SCHEDULED]++;
        return false;
    }
    *run_s = deletion - pod->scheduled_time;
    if (*run_s == 0) {
        rule[PS_ALIBABA_ZERO_LENGTH_RUN]++;
        *run_s = 1;
    }
    return true;
}

static int compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The lower median of the run times of the pods that ran (1 s when none did). */
static int median_run(const struct ps_alibaba_trace *t, int64_t trace_end, int64_t *out)
{
    int64_t *runs = malloc((t->pod_count ? t->pod_count : 1) * sizeof *runs);
    if (!runs)
        return PS_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < t->pod_count; i++)
        if (run_time(&t->pods[i], trace_end, NULL, &runs[n]))
            n++;
    qsort(runs, n, sizeof *runs, compare_int64);
    *out = n ? runs[(n - 1) / 2] : 1;
    free(runs);
    return 0;
}

static int compare_pods(const void *a, const void *b)
{
    const struct ps_alibaba_pod *x = *(const struct ps_alibaba_pod *const *)a;
    const struct ps_alibaba_pod *y = *(const struct ps_alibaba_pod *const *)b;
    if (x->creation_time != y->creation_time)
        return x->creation_time < y->creation_time ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);   /* lines are unique */
}

static const char *pool_of(const char *qos)
{
    for (size_t i = 0; i < QOS_POOL_COUNT; i++)
        if (strcmp(qos_pools[i].qos, qos) == 0)
            return qos_pools[i].pool;
    return NULL;   /* the reader accepts only the qos values of the table */
}

struct context {
    const struct group *groups;
    size_t group_count;
    const struct ps_alibaba_options *opt;
    int64_t base_s;        /* creation time that becomes start_time 0 */
    int64_t trace_end_s;
    int64_t median_s;
    struct ps_alibaba_stats *stats;
    int64_t end_ms;        /* the latest start + duration written */
};

/* The operation of one pod, or *skip when no node can ever hold it. NULL with !*skip: OOM. */
static json_t *pod_operation(const struct ps_alibaba_pod *pod, struct context *c, bool *skip)
{
    int64_t *rule = c->stats->rule;
    int64_t cpu = cpu_hundredths(pod->cpu_milli);
    int64_t memory = pod->memory_mib * MIB;
    int64_t gpu = pod->num_gpu;
    bool fits = false, fits_filter = false;
    *skip = false;
    if (pod->gpu_milli < 1000 && (pod->num_gpu > 0 || pod->gpu_milli > 0)) {
        rule[PS_ALIBABA_FRACTIONAL_GPU]++;
        if (gpu == 0)
            gpu = 1;
    }
    for (size_t i = 0; i < c->group_count; i++) {
        const struct group *g = &c->groups[i];
        if (g->cpu >= cpu && g->memory_mib >= pod->memory_mib && g->gpu >= gpu) {
            fits = true;
            fits_filter = fits_filter || ps_formula_eval(pod->filter, &g->tag, 1);
        }
    }
    if (!fits || !fits_filter) {
        rule[fits ? PS_ALIBABA_NO_MATCHING_NODE_FITS : PS_ALIBABA_NO_NODE_FITS]++;
        *skip = true;
        return NULL;
    }
    int64_t run_s;
    if (!run_time(pod, c->trace_end_s, rule, &run_s))
        run_s = c->median_s;
    int64_t start = start_ms(pod->creation_time - c->base_s, c->opt);
    int64_t duration_ms = scale_ms(run_s, c->opt->time_scale);
    if (duration_ms < 1) {
        rule[PS_ALIBABA_SCALED_TO_ZERO]++;
        duration_ms = 1;
    }
    if (start + duration_ms > c->end_ms)
        c->end_ms = start + duration_ms;

    json_t *spec = json_pack("{s:s}", "pool", pool_of(pod->qos));
    if (spec && pod->gpu_spec[0] != '\0') {
        rule[PS_ALIBABA_GPU_SPEC_FILTER]++;
        if (json_object_set_new(spec, "scheduling_tag_filter", json_string(pod->gpu_spec)) != 0) {
            json_decref(spec);
            spec = NULL;
        }
    }
    json_t *task = json_pack("{s:s, s:i, s:I, s:{s:o, s:I, s:I, s:i}}", "name",
                             PS_ALIBABA_TASK_NAME, "job_count", 1, "duration",
                             (json_int_t)duration_ms, "resources", "cpu", cpu_json(cpu), "memory",
                             (json_int_t)memory, "gpu", (json_int_t)gpu, "user_slots", 1);
    /* memory_limit must be positive; a pod without memory gets the scenario's default. */
    if (task && memory > 0 && json_object_set_new(task, "memory_limit", json_integer(memory)) != 0) {
        json_decref(task);
        task = NULL;
    }
    if (!spec || !task) {
        json_decref(spec);
        json_decref(task);
        return NULL;
    }
    return json_pack("{s:s, s:I, s:s, s:o, s:[o]}", "id", pod->name, "start_time",
                     (json_int_t)start, "user", PS_ALIBABA_USER, "spec", spec, "tasks", task);
}

/* The operations of the selected pods, in creation order. */
static json_t *operations_json(const struct ps_alibaba_trace *t, struct context *c)
{
    struct ps_alibaba_stats *stats = c->stats;
    const struct ps_alibaba_pod **order = malloc((t->pod_count ? t->pod_count : 1) * sizeof *order);
    json_t *ops = json_array();
    if (!order || !ops)
        goto oom;
    for (size_t i = 0; i < t->pod_count; i++)
        order[i] = &t->pods[i];
    qsort(order, t->pod_count, sizeof *order, compare_pods);
    for (size_t i = 0; i < t->pod_count; i++) {
        const struct ps_alibaba_pod *pod = order[i];
        if (pod->creation_time < c->base_s) {
            stats->rule[PS_ALIBABA_BEFORE_START_OFFSET]++;
            continue;
        }
        if (c->opt->limit > 0 && stats->pods_selected == c->opt->limit) {
            stats->rule[PS_ALIBABA_BEYOND_LIMIT]++;
            continue;
        }
        stats->pods_selected++;
        bool skip;
        json_t *op = pod_operation(pod, c, &skip);
        if (skip)
            continue;
        if (!op || json_array_append_new(ops, op) != 0)
            goto oom;
        stats->operations++;
    }
    free(order);
    return ops;
oom:
    free(order);
    json_decref(ops);
    return NULL;
}

/* ---- the document ----------------------------------------------------------------------- */

static int check_options(const struct ps_alibaba_options *o, struct ps_error *err)
{
    if (o->limit < 0)
        return ps_error_set(err, PS_EINVAL, "--limit: must be a positive integer, got %lld",
                            (long long)o->limit);
    if (o->start_offset_s < 0 || o->start_offset_s > MAX_START_OFFSET_S)
        return ps_error_set(err, PS_EINVAL,
                            "--start-offset: must be a number of seconds in [0, %lld], got %lld",
                            (long long)MAX_START_OFFSET_S, (long long)o->start_offset_s);
    if (!(o->time_scale > 0.0 && o->time_scale <= MAX_TIME_SCALE))
        return ps_error_set(err, PS_EINVAL, "--time-scale: must be in (0, %g], got %g",
                            MAX_TIME_SCALE, o->time_scale);
    if (!(o->compress >= 1.0 && o->compress <= MAX_COMPRESS))
        return ps_error_set(err, PS_EINVAL, "--compress: must be in [1, %g], got %g",
                            MAX_COMPRESS, o->compress);
    return 0;
}

int ps_alibaba_to_scenario(const struct ps_alibaba_trace *t, const struct ps_alibaba_options *opt,
                           json_t **out, struct ps_alibaba_stats *stats, struct ps_error *err)
{
    *out = NULL;
    memset(stats, 0, sizeof *stats);
    int rc = check_options(opt, err);
    if (rc != 0)
        return rc;
    if (t->node_count == 0)
        return ps_error_set(err, PS_EINVAL, "the node list has no nodes");

    struct context c = {.opt = opt, .stats = stats};
    struct group *groups = build_groups(t, &c.group_count, stats);
    if (!groups)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    c.groups = groups;
    stats->nodes = (int64_t)t->node_count;
    stats->node_groups = (int64_t)c.group_count;
    stats->pods_read = (int64_t)t->pod_count;

    int64_t min_creation = 0;
    for (size_t i = 0; i < t->pod_count; i++) {
        const struct ps_alibaba_pod *p = &t->pods[i];
        if (i == 0 || p->creation_time < min_creation)
            min_creation = p->creation_time;
        int64_t latest = p->creation_time;
        if (p->scheduled_time > latest)
            latest = p->scheduled_time;
        if (p->deletion_time > latest)
            latest = p->deletion_time;
        if (latest > c.trace_end_s)
            c.trace_end_s = latest;
    }
    c.base_s = min_creation + opt->start_offset_s;
    stats->trace_end_s = c.trace_end_s;
    if (median_run(t, c.trace_end_s, &c.median_s) != 0) {
        free(groups);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    stats->median_run_s = c.median_s;

    json_t *node_groups = groups_json(groups, c.group_count);
    json_t *trees = tree_json(groups, c.group_count, (int64_t)t->pod_count);
    json_t *ops = operations_json(t, &c);
    free(groups);
    json_t *doc = NULL;
    if (!node_groups || !trees || !ops)
        goto oom;
    doc = json_pack("{s:i, s:i}", "heartbeat_period", 5000, "fair_share_update_period", 1000);
    if (!doc)
        goto oom;
    /* json_object_set_new takes the value's reference even when it fails. */
    int failed = 0;
    if (c.end_ms > 0)
        failed |= json_object_set_new(doc, "duration", json_integer(c.end_ms));
    failed |= json_object_set_new(doc, "node_groups", node_groups);
    failed |= json_object_set_new(doc, "default_tree", json_string(PS_ALIBABA_TREE));
    failed |= json_object_set_new(doc, "pool_trees", trees);
    failed |= json_object_set_new(doc, "operations", ops);
    node_groups = trees = ops = NULL;
    if (failed)
        goto oom;
    *out = doc;
    return 0;
oom:
    json_decref(doc);
    json_decref(node_groups);
    json_decref(trees);
    json_decref(ops);
    return ps_error_set(err, PS_ENOMEM, "out of memory");
}
