/* bench_schedule.c — `poolsched bench schedule`: node heartbeats through the scheduling loop.
 *
 * The benchmark is a host of the loop (core/tree_sched.h), as the service and the simulator
 * are. Workload (from a seed), built through the strategy: a cluster of N nodes (a tenth of
 * them gpu nodes tagged "gpu"), a pool tree of P pools in two levels (weights 1-4, some strong
 * guarantees, FIFO leaves, leaves with cpu limits, gpu leaves with scheduling_tag_filter "gpu")
 * and O operations spread over the leaves with a heavy tail, each with effectively endless
 * pending jobs of one of several shapes. One fair share update of the loop (timed apart) gives
 * the snapshot its fair shares; then ps_tree_sched_heartbeat is timed, the host's callbacks
 * (recording each started allocation) included:
 *   fill    one heartbeat per node, all nodes empty: many allocations per heartbeat;
 *   steady  R rounds over all nodes; before each heartbeat a quarter of the node's running
 *           allocations end (ps_sched_allocation_finished, untimed): the churn of jobs
 *           finishing, so a heartbeat starts a few allocations and then finds the node full.
 * Reported per phase: heartbeats and allocations per second of thread CPU time, and the wall
 * time of single heartbeats (median, p99). Targets (shared/spec/performance.md): >= 20,000
 * heartbeats/s and >= 100,000 allocations/s on one core.
 *
 * Preemptive heartbeats: S of the operations (every O/S-th; default 30%, so that the others'
 * usage above their fair shares leaves victims on most nodes) are starving. They have their
 * demand from the start but are not runnable during fill and steady, so the others fill the
 * cluster beyond their fair shares. Then (untimed) they become runnable, every operation gets
 * preemptible lists holding its running allocations (in start order), and two loop updates
 * (at 0 and after the starvation timeout) run the starvation check; then one round over all
 * nodes, each heartbeat the regular stage followed by the preemptive stages (no backoff: every
 * heartbeat is a preemptive one). Victims end at once, in the host's preempt callback (timed
 * with the heartbeat). Reported: median thread CPU time of a preemptive heartbeat against the
 * median of a steady (regular) heartbeat, the ratio, and how many heartbeats found victims.
 * Target: the ratio <= 5.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_rng.h"
#include "core/formula.h"
#include "core/preempt.h"
#include "core/preemptible.h"
#include "core/schedule.h"
#include "core/strategy.h"
#include "core/tree_config.h"
#include "core/tree_sched.h"
#include "core/tree_starvation.h"
#include "io/json_value.h"
#include "platform/clock.h"
#include "platform/memstat.h"

#define BENCH "schedule"
#define GIB ((int64_t)1 << 30)
#define PENDING_PER_OPERATION 1000000000

struct options {
    uint64_t seed;
    int nodes, operations, pools, rounds, starving;
};

struct node {
    bool gpu;
    struct ps_resources limits, usage;
    struct ps_sched_filter_cache *cache;
    struct ps_node_allocation *allocs;    /* running */
    int count, cap;
};

struct phase {
    int64_t heartbeats, allocations, candidates, skips;
    int64_t cpu_ns, wall_ns;
    double *samples_us;                   /* wall time of each heartbeat */
    double *cpu_samples_ns;               /* thread CPU time of each heartbeat */
};

static const char *const gpu_tags[] = {"dc1", "gpu"};
static const char *const cpu_tags[] = {"dc1"};

static void print_help(void)
{
    printf("usage: poolsched bench schedule [--seed N] [--nodes N] [--operations O] [--pools P]\n"
           "                                [--rounds R] [--starving S]\n\n"
           "Times node heartbeats (the regular scheduling stage) on a synthetic cluster: N nodes\n"
           "(10%% gpu nodes), P pools in two levels, O operations with endless pending jobs; a fill\n"
           "round from empty nodes, then R steady rounds where a quarter of each node's jobs end\n"
           "before its heartbeat. Then S operations, held back until now, starve, and one round of\n"
           "preemptive heartbeats (regular + preemptive stages) runs over the full nodes.\n\n"
           "  --seed N        workload seed (default 1)\n"
           "  --nodes N       nodes (default 10000)\n"
           "  --operations O  operations with pending jobs (default 1000)\n"
           "  --pools P       pools (default 100: 10 top-level pools and their leaves)\n"
           "  --rounds R      steady rounds over all nodes (default 5)\n"
           "  --starving S    starving operations among the O (default 3/10 of O; 0: no preemptive\n"
           "                  round)\n\n"
           "Targets (shared/spec/performance.md, default sizes): >= 20,000 heartbeats/s and\n"
           ">= 100,000 allocations/s on one core; a preemptive heartbeat costs <= 5x a regular one.\n"
           "Prints one JSON object on stdout.\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
    long long seed = 1, nodes = 10000, operations = 1000, pools = 100, rounds = 5, starving = -1;
    const struct ps_bench_int_opt ints[] = {
        {"--seed", 0, INT64_MAX, &seed},
        {"--nodes", 10, 1000000, &nodes},
        {"--operations", 1, 1000000, &operations},
        {"--pools", 2, 100000, &pools},
        {"--rounds", 1, 1000, &rounds},
        {"--starving", 0, 1000000, &starving}
    };
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_help();
            return -1;
        } else if ((m = ps_bench_int_options(BENCH, argc, argv, &i, ints, (int)(sizeof ints / sizeof *ints))) != 0) {
            if (m < 0)
                return 2;
        } else {
            ps_bench_error(BENCH, "unknown option '%s' (see poolsched bench schedule --help)", argv[i]);
            return 2;
        }
    }
    o->seed = (uint64_t)seed;
    o->nodes = (int)nodes;
    o->operations = (int)operations;
    o->pools = (int)pools;
    o->rounds = (int)rounds;
    if (starving > operations) {
        ps_bench_error(BENCH, "--starving: %lld is more than the %lld operations", starving, operations);
        return 2;
    }
    o->starving = starving < 0 ? (int)(operations * 3 / 10) : (int)starving;
    return 0;
}

static struct ps_resources res(int64_t slots, int64_t cores, int64_t memory, int64_t gpu)
{
    struct ps_resources r = ps_resources_zero();
    r.v[PS_RES_USER_SLOTS] = slots;
    r.v[PS_RES_CPU] = cores * PS_CPU_SCALE;
    r.v[PS_RES_MEMORY] = memory;
    r.v[PS_RES_GPU] = gpu;
    return r;
}

/* One operation as the bench host keeps it. */
struct bop {
    struct ps_operation *op;
    struct ps_tree_op *member;
    struct ps_resources shape;
    bool runnable;
    int element;                          /* in the loop's last update */
    struct ps_preemptible *lists;         /* the preemptive round only */
};

struct workload {
    struct ps_strategy *s;
    struct ps_pool_tree *tree;
    struct ps_tree_sched ts;
    struct bop *ops;
    int op_count;
    struct node *nodes;                   /* allocs[].op: the operation's index in ops */
    int node_count;
    struct ps_resources total;
    int64_t next_id;                      /* allocation ids, in start order */
    int *starving;                        /* indices into ops of the starving operations */
    int starving_count;
    int cur_node;                         /* the node of the heartbeat in progress */
    struct ps_node_allocation *scratch;   /* allocations handed to the loop */
    int scratch_cap;
};

static void workload_release(struct workload *w)
{
    ps_tree_sched_release(&w->ts);
    for (int i = 0; w->ops && i < w->op_count; i++)
        ps_preemptible_free(w->ops[i].lists);
    free(w->ops);
    for (int i = 0; w->nodes && i < w->node_count; i++) {
        ps_sched_filter_cache_free(w->nodes[i].cache);
        free(w->nodes[i].allocs);
    }
    free(w->nodes);
    free(w->starving);
    free(w->scratch);
    ps_strategy_free(w->s);
}

/* Applies a JSON text (built by the bench, so well-formed) as a value to fn's needs. */
static int value_of(const char *text, struct ps_value *out, struct ps_error *err)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j)
        return ps_error_set(err, PS_EINVAL, "bench: bad JSON %s", text);
    int rc = ps_json_to_value(j, out, err);
    json_decref(j);
    return rc;
}

static int add_pool(struct workload *w, const char *name, const char *parent, const char *attrs,
                    struct ps_error *err)
{
    struct ps_value v;
    int rc = value_of(attrs, &v, err);
    if (rc == 0) {
        rc = ps_pool_tree_create_pool(w->tree, name, parent, &v, err);
        ps_value_release(&v);
    }
    return rc;
}

static int build(struct workload *w, const struct options *o, struct ps_error *err)
{
    struct ps_bench_rng rng;
    ps_bench_rng_seed(&rng, o->seed);
    memset(w, 0, sizeof *w);
    w->node_count = o->nodes;
    w->op_count = o->operations;
    w->nodes = calloc((size_t)o->nodes, sizeof *w->nodes);
    w->ops = calloc((size_t)o->operations, sizeof *w->ops);
    w->starving = calloc((size_t)(o->starving > 0 ? o->starving : 1), sizeof *w->starving);
    if (!w->nodes || !w->ops || !w->starving || !(w->s = ps_strategy_new()))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_tree_sched_init(&w->ts, err);
    struct ps_value cfg;
    if (rc == 0)
        rc = value_of("{\"max_operation_count\": 1000000, \"max_operation_count_per_pool\": 1000000,"
                      " \"max_running_operation_count\": 1000000,"
                      " \"max_running_operation_count_per_pool\": 1000000}",
                      &cfg, err);
    if (rc != 0)
        return rc;
    rc = ps_strategy_add_tree(w->s, "physical", &cfg, err);
    ps_value_release(&cfg);
    if (rc != 0 || (rc = ps_strategy_set_default_tree(w->s, "physical", err)) != 0)
        return rc;
    w->tree = ps_strategy_find_tree(w->s, "physical");
    char name[32];
    for (int i = 0; i < o->nodes && rc == 0; i++) {
        struct node *n = &w->nodes[i];
        n->gpu = i % 10 == 9;
        n->limits = n->gpu ? res(64, 64, 512 * GIB, 8) : res(32, 32, 128 * GIB, 0);
        w->total = ps_resources_add(w->total, n->limits);
        if (!(n->cache = ps_sched_filter_cache_new()))
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        snprintf(name, sizeof name, "n%d", i);
        rc = ps_strategy_register_node(w->s, name, n->gpu ? gpu_tags : cpu_tags, n->gpu ? 2 : 1,
                                       &n->limits, err);
    }
    /* Pools: pool1..pool<top> are top-level pools, then the leaves, round-robin under them. */
    int top = o->pools < 20 ? 1 : o->pools / 10;
    int64_t cores = w->total.v[PS_RES_CPU] / PS_CPU_SCALE;
    bool *gpu_leaf = calloc((size_t)o->pools + 1, sizeof *gpu_leaf);
    if (!gpu_leaf)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (int p = 1; p <= o->pools && rc == 0; p++) {
        bool leaf = p > top;
        char parent[32], attrs[160];
        snprintf(name, sizeof name, "pool%d", p);
        snprintf(parent, sizeof parent, leaf ? "pool%d" : "<Root>", 1 + (p - top - 1) % top);
        int n = snprintf(attrs, sizeof attrs, "{\"weight\": %d", 1 + (int)ps_bench_rng_below(&rng, 4));
        if (!leaf && ps_bench_rng_chance(&rng, 0.3))
            n += snprintf(attrs + n, sizeof attrs - (size_t)n,
                          ", \"strong_guarantee_resources\": {\"cpu\": %lld}", (long long)(cores / 20));
        if (leaf) {
            double x = ps_bench_rng_unit(&rng);
            if (x < 0.1)
                n += snprintf(attrs + n, sizeof attrs - (size_t)n, ", \"mode\": \"fifo\"");
            else if (x < 0.2)
                n += snprintf(attrs + n, sizeof attrs - (size_t)n,
                              ", \"resource_limits\": {\"cpu\": %lld}", (long long)(cores / 50));
            else if (x < 0.3)
                n += snprintf(attrs + n, sizeof attrs - (size_t)n,
                              ", \"scheduling_tag_filter\": \"gpu\"");
            gpu_leaf[p] = x >= 0.2 && x < 0.3;
        }
        snprintf(attrs + n, sizeof attrs - (size_t)n, "}");
        rc = add_pool(w, name, parent, attrs, err);
    }
    /* Operations: heavy-tailed over the leaves; endless pending jobs of one shape. */
    static const int64_t op_cores[] = {1, 1, 2, 2, 4, 8};
    static const int64_t memory_gib[] = {2, 4, 4, 8, 16, 32};
    static const int64_t gpus[] = {1, 1, 2, 4, 8};
    int leaves = o->pools - top;
    for (int k = 0; k < o->operations && rc == 0; k++) {
        double u = ps_bench_rng_unit(&rng);
        int leaf = top + 1 + (int)((double)leaves * u * u);   /* skewed to the first leaves */
        if (leaves <= 0)
            leaf = 1;
        struct bop *b = &w->ops[k];
        char spec_text[96];
        snprintf(spec_text, sizeof spec_text, "{\"pool\": \"pool%d\", \"weight\": %d}", leaf,
                 1 + (int)ps_bench_rng_below(&rng, 3));
        if (gpu_leaf[leaf]) {
            b->shape = res(1, 8, 64 * GIB, PS_BENCH_PICK(&rng, gpus));
        } else {
            int pick = (int)ps_bench_rng_below(&rng, sizeof op_cores / sizeof *op_cores);
            b->shape = res(1, op_cores[pick], memory_gib[pick] * GIB, 0);
        }
        struct ps_value spec;
        if ((rc = value_of(spec_text, &spec, err)) != 0)
            break;
        snprintf(name, sizeof name, "op%d", k);
        rc = ps_strategy_start_operation(w->s, name, "bench", k, &spec, &b->op, err);
        ps_value_release(&spec);
        if (rc != 0)
            break;
        b->op->host = b;
        b->member = ps_operation_membership(b->op, "physical");
        b->element = -1;
        b->runnable = true;
        b->member->pending_job_count = 1000;
        for (int r = 0; r < PS_RES_COUNT; r++)
            b->member->demand.v[r] = b->shape.v[r] * 1000;
        /* Every (O/S)-th operation starves: held back (not runnable) until the preemptive round. */
        if (o->starving > 0 && k % (o->operations / o->starving) == 0 && w->starving_count < o->starving) {
            b->runnable = false;
            w->starving[w->starving_count++] = k;
        }
    }
    free(gpu_leaf);
    return rc;
}

/* ---- the host ----------------------------------------------------------------------------- */

static struct ps_preemptible *host_op_state(void *ctx, struct ps_tree_op *member, int element,
                                            struct ps_sched_operation *sched,
                                            struct ps_preempt_operation *preempt)
{
    (void)ctx;
    (void)preempt;
    struct bop *b = ps_tree_op_host(member);
    if (!b)
        return NULL;
    b->element = element;
    sched->allocation = b->shape;
    sched->pending_count = PENDING_PER_OPERATION;
    sched->runnable = b->runnable;
    return b->lists;
}

static int host_allocations(void *ctx, int64_t node, const struct ps_node_allocation **allocs,
                            int *count, struct ps_resources *other, struct ps_error *err)
{
    struct workload *w = ctx;
    struct node *n = &w->nodes[node];
    if (n->count > w->scratch_cap) {
        int cap = w->scratch_cap ? w->scratch_cap : 64;
        while (cap < n->count)
            cap *= 2;
        struct ps_node_allocation *grown = realloc(w->scratch, (size_t)cap * sizeof *grown);
        if (!grown)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        w->scratch = grown;
        w->scratch_cap = cap;
    }
    for (int k = 0; k < n->count; k++) {
        w->scratch[k] = n->allocs[k];
        w->scratch[k].op = w->ops[n->allocs[k].op].element;
    }
    *allocs = w->scratch;
    *count = n->count;
    *other = ps_resources_zero();
    return 0;
}

static int host_start(void *ctx, int64_t node, int element, struct ps_resources resources,
                      bool *started, struct ps_error *err)
{
    struct workload *w = ctx;
    struct node *n = &w->nodes[node];
    const struct ps_operation *op = w->ts.user[element];
    struct bop *b = op ? op->host : NULL;
    *started = b != NULL;
    if (!b)
        return 0;
    if (n->count == n->cap) {
        int cap = n->cap ? 2 * n->cap : 16;
        struct ps_node_allocation *grown = realloc(n->allocs, (size_t)cap * sizeof *grown);
        if (!grown)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        n->allocs = grown;
        n->cap = cap;
    }
    int64_t id = ++w->next_id;
    n->allocs[n->count++] = (struct ps_node_allocation){id, (int)(b - w->ops), resources, id, false, -1};
    n->usage = ps_resources_add(n->usage, resources);
    return b->lists ? ps_preemptible_add(b->lists, id, id, resources, err) : 0;
}

/* Victims end at once. */
static int host_preempt(void *ctx, const struct ps_preempt_victim *v, struct ps_error *err)
{
    struct workload *w = ctx;
    struct node *n = &w->nodes[w->cur_node];
    int k = 0;
    while (k < n->count && n->allocs[k].id != v->allocation_id)
        k++;
    if (k == n->count)
        return ps_error_set(err, PS_EINVAL, "victim %lld is not on node %d",
                            (long long)v->allocation_id, w->cur_node);
    struct bop *b = &w->ops[n->allocs[k].op];
    int rc = ps_sched_allocation_finished(w->ts.snap, b->element, n->allocs[k].resources, err);
    if (rc == 0 && b->lists)
        rc = ps_preemptible_remove(b->lists, v->allocation_id, err);
    n->usage = ps_resources_sub(n->usage, n->allocs[k].resources);
    n->allocs[k] = n->allocs[--n->count];
    return rc;
}

static struct ps_tree_host loop_host(struct workload *w)
{
    return (struct ps_tree_host){.ctx = w,
                                 .op_state = host_op_state,
                                 .allocations = host_allocations,
                                 .start = host_start,
                                 .preempt = host_preempt};
}

static struct ps_sched_node sched_node(struct workload *w, int i)
{
    struct node *n = &w->nodes[i];
    return (struct ps_sched_node){.id = i,
                                  .tags = n->gpu ? gpu_tags : cpu_tags,
                                  .tag_count = n->gpu ? 2 : 1,
                                  .limits = n->limits,
                                  .usage = n->usage,
                                  .filter_cache = n->cache};
}

static int heartbeat(struct workload *w, int i, struct phase *ph, struct ps_error *err)
{
    struct ps_sched_node sn = sched_node(w, i);
    struct ps_tree_host host = loop_host(w);
    struct ps_tree_heartbeat_stages regular = {true, false};
    w->cur_node = i;
    int64_t c0 = ps_clock_thread_cpu_ns(), t0 = ps_clock_monotonic_ns();
    int rc = ps_tree_sched_heartbeat(&w->ts, &host, &sn, &regular, 0, err);
    int64_t t1 = ps_clock_monotonic_ns(), c1 = ps_clock_thread_cpu_ns();
    if (rc != 0)
        return rc;
    const struct ps_sched_result *result = &w->ts.result;
    ph->samples_us[ph->heartbeats] = (double)(t1 - t0) / 1000.0;
    ph->cpu_samples_ns[ph->heartbeats] = (double)(c1 - c0);
    ph->heartbeats++;
    ph->cpu_ns += c1 - c0;
    ph->wall_ns += t1 - t0;
    ph->allocations += result->allocation_count;
    ph->candidates += result->candidates_considered;
    ph->skips += result->skip_count;
    return 0;
}

/* A quarter of the node's running allocations end (untimed). */
static int churn(struct workload *w, int i, struct ps_bench_rng *rng, struct ps_error *err)
{
    struct node *n = &w->nodes[i];
    int keep = 0;
    for (int k = 0; k < n->count; k++) {
        if (ps_bench_rng_below(rng, 4) == 0) {
            int rc = ps_sched_allocation_finished(w->ts.snap, w->ops[n->allocs[k].op].element,
                                                  n->allocs[k].resources, err);
            if (rc != 0)
                return rc;
            n->usage = ps_resources_sub(n->usage, n->allocs[k].resources);
        } else {
            n->allocs[keep++] = n->allocs[k];
        }
    }
    n->count = keep;
    return 0;
}

/* ---- preemptive heartbeats ---------------------------------------------------------------- */

struct preemptive {
    int starving_operations, starving_pools, running;
    int64_t heartbeats, with_victims, victims, preempted_allocations, regular_allocations;
    int64_t aggressive_stage, preemptive_stage, candidates, skips;
    double *cpu_ns;                       /* per heartbeat */
};

static void preemptive_release(struct preemptive *p)
{
    free(p->cpu_ns);
}

static int by_id(const void *a, const void *b)
{
    int64_t x = ((const struct ps_node_allocation *)a)->id, y = ((const struct ps_node_allocation *)b)->id;
    return (x > y) - (x < y);
}

/* Untimed: the held-back operations become runnable, every operation gets its lists, and two
 * updates of the loop (at 0 and after the starvation timeout) run the starvation check. */
static int preemptive_setup(struct workload *w, struct preemptive *p, struct ps_error *err)
{
    if (!(p->cpu_ns = malloc((size_t)w->node_count * sizeof(double))))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (int k = 0; k < w->starving_count; k++)
        w->ops[w->starving[k]].runnable = true;
    for (int k = 0; k < w->op_count; k++) {
        struct bop *b = &w->ops[k];
        b->member->usage = ps_resources_zero();
        struct ps_preemptible_config pc;
        ps_tree_op_preemptible_config(b->member, &pc);
        if (!(b->lists = ps_preemptible_new(&pc)))
            return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    for (int i = 0; i < w->node_count; i++)
        p->running += w->nodes[i].count;
    struct ps_node_allocation *all = malloc((size_t)(p->running ? p->running : 1) * sizeof *all);
    if (!all)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int m = 0;
    for (int i = 0; i < w->node_count; i++)
        for (int k = 0; k < w->nodes[i].count; k++)
            all[m++] = w->nodes[i].allocs[k];
    qsort(all, (size_t)m, sizeof *all, by_id);   /* in start order, as they would have been */
    int rc = 0;
    for (int k = 0; rc == 0 && k < m; k++) {
        struct bop *b = &w->ops[all[k].op];
        b->member->usage = ps_resources_add(b->member->usage, all[k].resources);
        rc = ps_preemptible_add(b->lists, all[k].id, all[k].start_time_ms, all[k].resources, err);
    }
    free(all);
    for (int k = 0; rc == 0 && k < w->op_count; k++) {
        struct bop *b = &w->ops[k];
        for (int r = 0; r < PS_RES_COUNT; r++)
            b->member->demand.v[r] = b->member->usage.v[r] + b->shape.v[r] * 1000;
    }
    struct ps_tree_host host = loop_host(w);
    int64_t timeout = ps_pool_tree_config(w->tree)->fair_share_starvation_timeout_ms;
    if (rc == 0)
        rc = ps_tree_sched_update(&w->ts, w->tree, 0, &host, NULL, err);
    if (rc == 0)
        rc = ps_tree_sched_update(&w->ts, w->tree, timeout + 1, &host, NULL, err);
    for (int i = 0; rc == 0 && i < w->ts.fs.count; i++) {
        if (w->ts.starvation[i].starvation == PS_NON_STARVING)
            continue;
        if (w->ts.fs.ops[i])
            p->starving_operations++;
        else
            p->starving_pools++;
    }
    return rc;
}

/* One preemptive heartbeat of node i, timed: the regular and preemptive stages, the starts and
 * the victims (ending at once). */
static int preemptive_heartbeat(struct workload *w, struct preemptive *p, int i,
                                struct ps_error *err)
{
    struct ps_sched_node sn = sched_node(w, i);
    struct ps_tree_host host = loop_host(w);
    struct ps_tree_heartbeat_stages both = {true, true};
    w->cur_node = i;
    int64_t c0 = ps_clock_thread_cpu_ns();
    int rc = ps_tree_sched_heartbeat(&w->ts, &host, &sn, &both, 0, err);
    int64_t c1 = ps_clock_thread_cpu_ns();
    if (rc != 0)
        return rc;
    const struct ps_sched_result *result = &w->ts.result;
    const struct ps_preempt_result *pres = &w->ts.victims;
    int preempting = pres->stage != PS_STAGE_NONE;
    p->cpu_ns[p->heartbeats] = (double)(c1 - c0);
    p->heartbeats++;
    p->regular_allocations += result->allocation_count - preempting;
    p->preempted_allocations += preempting;
    p->aggressive_stage += pres->stage == PS_STAGE_AGGRESSIVELY_PREEMPTIVE;
    p->preemptive_stage += pres->stage == PS_STAGE_PREEMPTIVE;
    p->with_victims += pres->victim_count > 0;
    p->candidates += result->candidates_considered;
    p->skips += result->skip_count;
    p->victims += pres->victim_count;
    return 0;
}

static json_t *preemptive_json(struct preemptive *p, struct phase *steady, bool judge)
{
    struct ps_bench_stats all, base;
    int hb = (int)p->heartbeats;
    ps_bench_stats_compute(p->cpu_ns, hb, &all);
    ps_bench_stats_compute(steady->cpu_samples_ns, (int)steady->heartbeats, &base);
    double ratio = base.median > 0 ? all.median / base.median : 0;
    json_t *o = json_object();
    json_object_set_new(o, "starving_operations", json_integer(p->starving_operations));
    json_object_set_new(o, "starving_pools", json_integer(p->starving_pools));
    json_object_set_new(o, "running_allocations_at_start", json_integer(p->running));
    json_object_set_new(o, "heartbeats", json_integer(p->heartbeats));
    json_object_set_new(o, "heartbeats_with_victims", json_integer(p->with_victims));
    json_object_set_new(o, "aggressively_preemptive_stage_started", json_integer(p->aggressive_stage));
    json_object_set_new(o, "preemptive_stage_started", json_integer(p->preemptive_stage));
    json_object_set_new(o, "candidates_per_heartbeat", json_real((double)p->candidates / (double)hb));
    json_object_set_new(o, "skips_per_heartbeat", json_real((double)p->skips / (double)hb));
    json_object_set_new(o, "victims_per_heartbeat", json_real((double)p->victims / (double)hb));
    json_object_set_new(o, "regular_stage_allocations", json_integer(p->regular_allocations));
    json_object_set_new(o, "preempting_allocations", json_integer(p->preempted_allocations));
    json_object_set_new(o, "heartbeat_cpu_ns_median", json_real(all.median));
    json_object_set_new(o, "heartbeat_cpu_ns_p99", json_real(all.p99));
    json_object_set_new(o, "regular_heartbeat_cpu_ns_median", json_real(base.median));
    json_object_set_new(o, "preemptive_ratio", json_real(ratio));
    json_object_set_new(o, "target_ratio", json_real(5.0));
    json_object_set_new(o, "meets_target", judge ? json_boolean(ratio <= 5.0) : json_null());
    return o;
}

static json_t *phase_json(struct phase *ph, double target_hb, double target_alloc, bool judge)
{
    double cpu_s = (double)ph->cpu_ns / 1e9;
    double hb_rate = cpu_s > 0 ? (double)ph->heartbeats / cpu_s : 0;
    double alloc_rate = cpu_s > 0 ? (double)ph->allocations / cpu_s : 0;
    struct ps_bench_stats st;
    ps_bench_stats_compute(ph->samples_us, (int)ph->heartbeats, &st);
    json_t *o = json_object();
    json_object_set_new(o, "heartbeats", json_integer(ph->heartbeats));
    json_object_set_new(o, "allocations", json_integer(ph->allocations));
    json_object_set_new(o, "allocations_per_heartbeat", json_real((double)ph->allocations / (double)ph->heartbeats));
    json_object_set_new(o, "candidates_per_heartbeat", json_real((double)ph->candidates / (double)ph->heartbeats));
    json_object_set_new(o, "skips_per_heartbeat", json_real((double)ph->skips / (double)ph->heartbeats));
    json_object_set_new(o, "cpu_ms", json_real((double)ph->cpu_ns / 1e6));
    json_object_set_new(o, "wall_ms", json_real((double)ph->wall_ns / 1e6));
    json_object_set_new(o, "heartbeats_per_s", json_real(hb_rate));
    json_object_set_new(o, "allocations_per_s", json_real(alloc_rate));
    json_object_set_new(o, "heartbeat_us_median", json_real(st.median));
    json_object_set_new(o, "heartbeat_us_p99", json_real(st.p99));
    json_object_set_new(o, "heartbeat_us_max", json_real(st.max));
    if (judge) {
        json_object_set_new(o, "meets_heartbeat_target", json_boolean(hb_rate >= target_hb));
        json_object_set_new(o, "meets_allocation_target", json_boolean(alloc_rate >= target_alloc));
    }
    return o;
}

int ps_bench_schedule(int argc, char **argv)
{
    struct options o;
    int code = parse_args(argc, argv, &o);
    if (code != 0)
        return code < 0 ? 0 : code;
    struct ps_error err;
    ps_error_init(&err);
    struct workload w;
    struct phase fill = {0}, steady = {0};
    struct preemptive pre;
    memset(&pre, 0, sizeof pre);
    int64_t build_start = ps_clock_monotonic_ns();
    int rc = build(&w, &o, &err);
    int64_t fs_ns = 0, release_ns = 0;
    if (rc == 0) {
        struct ps_tree_host host = loop_host(&w);
        int64_t t0 = ps_clock_monotonic_ns();
        rc = ps_tree_sched_update(&w.ts, w.tree, 0, &host, NULL, &err);
        fs_ns = ps_clock_monotonic_ns() - t0;
    }
    double build_ms = (double)(ps_clock_monotonic_ns() - build_start - fs_ns) / 1e6;
    fill.samples_us = malloc((size_t)o.nodes * sizeof(double));
    steady.samples_us = malloc((size_t)o.nodes * (size_t)o.rounds * sizeof(double));
    fill.cpu_samples_ns = malloc((size_t)o.nodes * sizeof(double));
    steady.cpu_samples_ns = malloc((size_t)o.nodes * (size_t)o.rounds * sizeof(double));
    if (rc == 0 && (!fill.samples_us || !steady.samples_us || !fill.cpu_samples_ns || !steady.cpu_samples_ns))
        rc = ps_error_set(&err, PS_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < o.nodes; i++)
        rc = heartbeat(&w, i, &fill, &err);
    struct ps_bench_rng rng;
    ps_bench_rng_seed(&rng, o.seed ^ 0x5eed);
    for (int r = 0; rc == 0 && r < o.rounds; r++) {
        for (int i = 0; rc == 0 && i < o.nodes; i++) {
            int64_t t0 = ps_clock_thread_cpu_ns();
            rc = churn(&w, i, &rng, &err);
            release_ns += ps_clock_thread_cpu_ns() - t0;
            if (rc == 0)
                rc = heartbeat(&w, i, &steady, &err);
        }
    }
    if (rc == 0 && o.starving > 0)
        rc = preemptive_setup(&w, &pre, &err);
    for (int i = 0; rc == 0 && o.starving > 0 && i < o.nodes; i++)
        rc = preemptive_heartbeat(&w, &pre, i, &err);
    if (rc != 0) {
        ps_bench_error(BENCH, "%s", err.msg);
        code = 1;
    } else {
        bool defaults = o.nodes == 10000 && o.operations == 1000;
        bool judge_preemptive = defaults && o.starving == o.operations * 3 / 10;
        int64_t running = 0;
        for (int i = 0; i < o.nodes; i++)
            running += w.nodes[i].count;
        json_t *report = json_object();
        json_t *wl = json_object();
        json_object_set_new(wl, "seed", json_integer((json_int_t)o.seed));
        json_object_set_new(wl, "nodes", json_integer(o.nodes));
        json_object_set_new(wl, "gpu_nodes", json_integer(o.nodes / 10));
        json_object_set_new(wl, "pools", json_integer(o.pools));
        json_object_set_new(wl, "operations", json_integer(o.operations));
        json_object_set_new(wl, "rounds", json_integer(o.rounds));
        json_object_set_new(wl, "starving", json_integer(o.starving));
        json_object_set_new(report, "benchmark", json_string(BENCH));
        json_object_set_new(report, "workload", wl);
        json_object_set_new(report, "fill", phase_json(&fill, 20000, 100000, false));
        json_object_set_new(report, "steady", phase_json(&steady, 20000, 100000, defaults));
        if (o.starving > 0)
            json_object_set_new(report, "preemptive", preemptive_json(&pre, &steady, judge_preemptive));
        json_object_set_new(report, "release_cpu_ns_per_allocation",
                            json_real(steady.allocations ? (double)release_ns / (double)steady.allocations : 0));
        json_object_set_new(report, "running_allocations_at_end", json_integer(running));
        json_object_set_new(report, "fair_share_update_ms", json_real((double)fs_ns / 1e6));
        json_object_set_new(report, "build_ms", json_real(build_ms));
        json_object_set_new(report, "peak_rss_bytes", json_integer(ps_memstat_peak_rss_bytes()));
        code = ps_bench_print_json(BENCH, report);
    }
    free(fill.samples_us);
    free(steady.samples_us);
    free(fill.cpu_samples_ns);
    free(steady.cpu_samples_ns);
    preemptive_release(&pre);
    workload_release(&w);
    return code;
}
