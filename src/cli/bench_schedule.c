/* bench_schedule.c — `poolsched bench schedule`: node heartbeats through the regular stage.
 *
 * Workload (from a seed): a cluster of N nodes (a tenth of them gpu nodes tagged "gpu"), a
 * pool tree of P pools in two levels (weights 1-4, some strong guarantees, FIFO leaves, leaves
 * with cpu limits, gpu leaves whose operations carry scheduling_tag_filter "gpu") and O
 * operations spread over the leaves with a heavy tail, each with effectively endless pending
 * jobs of one of several shapes. One fair share update (untimed) gives the snapshot its fair
 * shares; then the engine's heartbeat (ps_schedule_heartbeat) is timed:
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
 * demand and fair share from the start but are not runnable during fill and steady, so the
 * others fill the cluster beyond their fair shares. Then (untimed) they become runnable, a
 * starvation check runs (ps_starvation_update at 0 and after the starvation timeout) and every
 * operation's preemptible lists are built from the allocations running on the nodes (in start
 * order); then one round over all nodes, each heartbeat the regular stage followed by the
 * preemptive stages (ps_schedule_heartbeat + ps_preempt_heartbeat, no backoff: every heartbeat
 * is a preemptive one). The new allocation and the victims are applied untimed (victims end at
 * once). Reported: median thread CPU time of a preemptive heartbeat against the median of a
 * steady (regular) heartbeat, the ratio, and how many heartbeats found victims. Target: the
 * ratio <= 5.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench.h"
#include "cli/bench_rng.h"
#include "core/fair_share.h"
#include "core/formula.h"
#include "core/preempt.h"
#include "core/preemptible.h"
#include "core/schedule.h"
#include "core/starvation.h"
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

struct workload {
    struct ps_fs_element *elems;
    struct ps_fs_pool *fs_pools;   /* 1 + pools entries: element p <= pools names fs_pools[p] */
    struct ps_sched_operation *ops;
    int count, pools, top;
    char *names;
    struct ps_resources total;
    struct node *nodes;
    int node_count;
    struct ps_formula *gpu_filter;
    int64_t next_id;                      /* allocation ids, in start order */
    int *starving;                        /* element indices of the starving operations */
    int starving_count;
};

static void workload_release(struct workload *w)
{
    free(w->elems);
    free(w->fs_pools);
    free(w->ops);
    free(w->names);
    for (int i = 0; w->nodes && i < w->node_count; i++) {
        ps_sched_filter_cache_free(w->nodes[i].cache);
        free(w->nodes[i].allocs);
    }
    free(w->nodes);
    free(w->starving);
    ps_formula_free(w->gpu_filter);
}

static int build(struct workload *w, const struct options *o, struct ps_error *err)
{
    struct ps_bench_rng rng;
    ps_bench_rng_seed(&rng, o->seed);
    memset(w, 0, sizeof *w);
    w->node_count = o->nodes;
    w->nodes = calloc((size_t)o->nodes, sizeof *w->nodes);
    w->pools = o->pools;
    w->top = o->pools < 20 ? 1 : o->pools / 10;
    w->count = 1 + o->pools + o->operations;
    w->elems = calloc((size_t)w->count, sizeof *w->elems);
    w->fs_pools = calloc((size_t)o->pools + 1, sizeof *w->fs_pools);
    w->ops = calloc((size_t)w->count, sizeof *w->ops);
    w->names = calloc((size_t)w->count, 16);
    w->starving = calloc((size_t)(o->starving > 0 ? o->starving : 1), sizeof *w->starving);
    if (!w->nodes || !w->elems || !w->fs_pools || !w->ops || !w->names || !w->starving)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_formula_parse("gpu", &w->gpu_filter, err);
    if (rc != 0)
        return rc;
    struct ps_resources gpu_total = ps_resources_zero();
    for (int i = 0; i < o->nodes; i++) {
        struct node *n = &w->nodes[i];
        n->gpu = i % 10 == 9;
        n->limits = n->gpu ? res(64, 64, 512 * GIB, 8) : res(32, 32, 128 * GIB, 0);
        w->total = ps_resources_add(w->total, n->limits);
        if (n->gpu)
            gpu_total = ps_resources_add(gpu_total, n->limits);
        if (!(n->cache = ps_sched_filter_cache_new()))
            return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    /* Pools: elements 1..top are top-level pools, then the leaves, round-robin under them. */
    char *name = w->names;
    snprintf(name, 16, "<Root>");
    ps_fs_element_input_init(&w->elems[0].in, PS_ELEM_ROOT, -1, name);
    w->elems[0].in.pool = 0;
    ps_fs_pool_input_init(&w->fs_pools[0].in);
    bool *gpu_leaf = calloc((size_t)w->count, sizeof *gpu_leaf);
    if (!gpu_leaf)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (int p = 1; p <= o->pools; p++) {
        name = w->names + 16 * p;
        snprintf(name, 16, "pool%d", p);
        bool leaf = p > w->top;
        int parent = leaf ? 1 + (p - w->top - 1) % w->top : 0;
        struct ps_fs_element_input *in = &w->elems[p].in;
        ps_fs_element_input_init(in, PS_ELEM_POOL, parent, name);
        in->pool = p;
        struct ps_fs_pool_input *pin = &w->fs_pools[p].in;
        ps_fs_pool_input_init(pin);
        in->weight = (double)(1 + ps_bench_rng_below(&rng, 4));
        in->weight_specified = true;
        if (!leaf && ps_bench_rng_chance(&rng, 0.3)) {
            pin->strong_guarantee.set = 1u << PS_RES_CPU;
            pin->strong_guarantee.r.v[PS_RES_CPU] = w->total.v[PS_RES_CPU] / 20;
        }
        if (leaf) {
            double x = ps_bench_rng_unit(&rng);
            if (x < 0.1) {
                pin->mode = PS_MODE_FIFO;
            } else if (x < 0.2) {
                in->resource_limits.v[PS_RES_CPU] = w->total.v[PS_RES_CPU] / 50;
            } else if (x < 0.3) {
                gpu_leaf[p] = true;
                in->filter_limits = gpu_total;
            }
        }
    }
    /* Operations: heavy-tailed over the leaves; endless pending jobs of one shape. */
    static const int64_t cores[] = {1, 1, 2, 2, 4, 8};
    static const int64_t memory_gib[] = {2, 4, 4, 8, 16, 32};
    static const int64_t gpus[] = {1, 1, 2, 4, 8};
    int leaves = o->pools - w->top;
    for (int k = 0; k < o->operations; k++) {
        int e = 1 + o->pools + k;
        name = w->names + 16 * e;
        snprintf(name, 16, "op%d", k);
        double u = ps_bench_rng_unit(&rng);
        int leaf = w->top + 1 + (int)((double)leaves * u * u);   /* skewed to the first leaves */
        if (leaves <= 0)
            leaf = 0;
        struct ps_fs_element_input *in = &w->elems[e].in;
        ps_fs_element_input_init(in, PS_ELEM_OPERATION, leaf, name);
        in->weight = (double)(1 + ps_bench_rng_below(&rng, 3));
        in->start_time_ms = k;
        struct ps_sched_operation *so = &w->ops[e];
        so->runnable = true;
        so->pending_count = PENDING_PER_OPERATION;
        if (gpu_leaf[leaf]) {
            so->filter = w->gpu_filter;
            so->allocation = res(1, 8, 64 * GIB, PS_BENCH_PICK(&rng, gpus));
            in->filter_limits = gpu_total;
        } else {
            int pick = (int)ps_bench_rng_below(&rng, sizeof cores / sizeof *cores);
            so->allocation = res(1, cores[pick], memory_gib[pick] * GIB, 0);
        }
        in->pending_job_count = 1000;
        for (int r = 0; r < PS_RES_COUNT; r++)
            in->demand.v[r] = so->allocation.v[r] * 1000;
        /* Every (O/S)-th operation starves: held back (not runnable) until the preemptive round. */
        if (o->starving > 0 && k % (o->operations / o->starving) == 0 && w->starving_count < o->starving) {
            so->runnable = false;
            w->starving[w->starving_count++] = e;
        }
    }
    free(gpu_leaf);
    return 0;
}

/* Appends result's allocations to the node's running ones with new ids (and to the operations'
 * preemptible lists when lists is not NULL). */
static int append_allocations(struct workload *w, struct node *n, const struct ps_sched_result *result,
                              struct ps_preemptible **lists, struct ps_error *err)
{
    if (n->count + result->allocation_count > n->cap) {
        int cap = n->cap ? n->cap : 16;
        while (cap < n->count + result->allocation_count)
            cap *= 2;
        struct ps_node_allocation *grown = realloc(n->allocs, (size_t)cap * sizeof *grown);
        if (!grown)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        n->allocs = grown;
        n->cap = cap;
    }
    for (int k = 0; k < result->allocation_count; k++) {
        int64_t id = ++w->next_id;
        const struct ps_sched_allocation *a = &result->allocations[k];
        n->allocs[n->count++] = (struct ps_node_allocation){id, a->op, a->resources, id, false};
        if (lists) {
            int rc = ps_preemptible_add(lists[a->op], id, id, a->resources, err);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static int heartbeat(struct workload *w, struct ps_sched_snapshot *snap, int i,
                     struct ps_sched_result *result, struct phase *ph, struct ps_error *err)
{
    struct node *n = &w->nodes[i];
    struct ps_sched_node sn = {
        .id = i,
        .tags = n->gpu ? gpu_tags : cpu_tags,
        .tag_count = n->gpu ? 2 : 1,
        .limits = n->limits,
        .usage = n->usage,
        .filter_cache = n->cache,
    };
    int64_t c0 = ps_clock_thread_cpu_ns(), t0 = ps_clock_monotonic_ns();
    int rc = ps_schedule_heartbeat(snap, &sn, 0, result, err);
    int64_t t1 = ps_clock_monotonic_ns(), c1 = ps_clock_thread_cpu_ns();
    if (rc != 0)
        return rc;
    ph->samples_us[ph->heartbeats] = (double)(t1 - t0) / 1000.0;
    ph->cpu_samples_ns[ph->heartbeats] = (double)(c1 - c0);
    ph->heartbeats++;
    ph->cpu_ns += c1 - c0;
    ph->wall_ns += t1 - t0;
    ph->allocations += result->allocation_count;
    ph->candidates += result->candidates_considered;
    ph->skips += result->skip_count;
    n->usage = result->node_usage;
    return append_allocations(w, n, result, NULL, err);
}

/* A quarter of the node's running allocations end (untimed). */
static int churn(struct workload *w, struct ps_sched_snapshot *snap, int i, struct ps_bench_rng *rng,
                 struct ps_error *err)
{
    struct node *n = &w->nodes[i];
    int keep = 0;
    for (int k = 0; k < n->count; k++) {
        if (ps_bench_rng_below(rng, 4) == 0) {
            int rc = ps_sched_allocation_finished(snap, n->allocs[k].op, n->allocs[k].resources, err);
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
    struct ps_starvation_element *st;
    struct ps_preemptible **lists;          /* per element (operations) */
    struct ps_preempt_operation *pops;
    uint8_t *subtree_eligible;              /* per element, after the starvation check */
    struct ps_preempt_config config;
    int starving_operations, starving_pools, running;
    int64_t heartbeats, with_victims, victims, preempted_allocations, regular_allocations;
    int64_t aggressive_stage, preemptive_stage, candidates, skips;
    double *cpu_ns, *regular_cpu_ns, *stages_cpu_ns;   /* per heartbeat: all, regular stage, rest */
};

static void preemptive_release(struct preemptive *p, int count)
{
    for (int i = 0; p->lists && i < count; i++)
        ps_preemptible_free(p->lists[i]);
    free(p->lists);
    free(p->st);
    free(p->pops);
    free(p->subtree_eligible);
    free(p->cpu_ns);
    free(p->regular_cpu_ns);
    free(p->stages_cpu_ns);
}

static int by_id(const void *a, const void *b)
{
    int64_t x = ((const struct ps_node_allocation *)a)->id, y = ((const struct ps_node_allocation *)b)->id;
    return (x > y) - (x < y);
}

/* Untimed: the held-back operations become runnable, a starvation check, preemptible lists. */
static int preemptive_setup(struct workload *w, struct ps_sched_snapshot *snap, struct preemptive *p,
                            struct ps_error *err)
{
    int n = w->count;
    p->st = calloc((size_t)n, sizeof *p->st);
    p->lists = calloc((size_t)n, sizeof *p->lists);
    p->pops = calloc((size_t)n, sizeof *p->pops);
    p->subtree_eligible = calloc((size_t)n, 1);
    p->cpu_ns = malloc((size_t)w->node_count * sizeof(double));
    p->regular_cpu_ns = malloc((size_t)w->node_count * sizeof(double));
    p->stages_cpu_ns = malloc((size_t)w->node_count * sizeof(double));
    if (!p->st || !p->lists || !p->pops || !p->subtree_eligible || !p->cpu_ns || !p->regular_cpu_ns || !p->stages_cpu_ns)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc;
    for (int k = 0; k < w->starving_count; k++)
        if ((rc = ps_sched_set_runnable(snap, w->starving[k], true, err)) != 0)
            return rc;
    for (int i = 0; i < n; i++) {
        const struct ps_fs_element *e = &w->elems[i];
        ps_starvation_element_init(&p->st[i], e->in.kind, e->in.parent);
        p->st[i].fair_share = e->out.fair_share.total;
        p->st[i].demand_share = e->out.demand_share;
        struct ps_resources u = ps_sched_usage(snap, i);
        p->st[i].usage_share = ps_resources_to_share(&u, &w->total, 0.0, 0.0);
        if (e->in.kind == PS_ELEM_OPERATION)
            p->st[i].pending_count = ps_sched_pending(snap, i);
    }
    struct ps_starvation_config sc;
    ps_starvation_config_init(&sc);
    if ((rc = ps_starvation_update(p->st, n, &sc, 0, NULL, err)) != 0 ||
        (rc = ps_starvation_update(p->st, n, &sc, sc.timeout_ms + 1, NULL, err)) != 0)
        return rc;
    ps_preempt_subtree_eligible(snap, p->st, p->subtree_eligible);   /* once per check */
    for (int i = 0; i < n; i++) {
        if (p->st[i].starvation == PS_NON_STARVING)
            continue;
        if (w->elems[i].in.kind == PS_ELEM_OPERATION)
            p->starving_operations++;
        else
            p->starving_pools++;
    }
    ps_preempt_config_init(&p->config);
    struct ps_preemptible_config pc;
    ps_preemptible_config_init(&pc);
    pc.threshold = p->config.preemption_satisfaction_threshold;
    pc.aggressive_threshold = p->config.aggressive_preemption_satisfaction_threshold;
    pc.total = w->total;
    for (int i = 0; i < n; i++) {
        p->pops[i] = (struct ps_preempt_operation){NULL, false, -1};
        if (w->elems[i].in.kind != PS_ELEM_OPERATION)
            continue;
        if (!(p->lists[i] = ps_preemptible_new(&pc)))
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        ps_preemptible_update(p->lists[i], &w->elems[i].out.fair_share.total, &w->elems[i].out.demand_share,
                              &pc);
        p->pops[i].lists = p->lists[i];
    }
    /* The running allocations, added in start order as they would have been. */
    for (int i = 0; i < w->node_count; i++)
        p->running += w->nodes[i].count;
    struct ps_node_allocation *all = malloc((size_t)(p->running ? p->running : 1) * sizeof *all);
    if (!all)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int m = 0;
    for (int i = 0; i < w->node_count; i++)
        for (int k = 0; k < w->nodes[i].count; k++)
            all[m++] = w->nodes[i].allocs[k];
    qsort(all, (size_t)m, sizeof *all, by_id);
    rc = 0;
    for (int k = 0; rc == 0 && k < m; k++)
        rc = ps_preemptible_add(p->lists[all[k].op], all[k].id, all[k].start_time_ms, all[k].resources, err);
    free(all);
    return rc;
}

/* One preemptive heartbeat of node i: timed regular + preemptive stages, then (untimed) the
 * victims end and the new allocations start. */
static int preemptive_heartbeat(struct workload *w, struct ps_sched_snapshot *snap, struct preemptive *p,
                                int i, struct ps_sched_result *result, struct ps_preempt_result *pres,
                                struct ps_error *err)
{
    struct node *n = &w->nodes[i];
    struct ps_sched_node sn = {
        .id = i,
        .tags = n->gpu ? gpu_tags : cpu_tags,
        .tag_count = n->gpu ? 2 : 1,
        .limits = n->limits,
        .usage = n->usage,
        .filter_cache = n->cache,
    };
    struct ps_preempt_tree tree = {&p->config, p->st, p->pops, p->subtree_eligible};
    int64_t c0 = ps_clock_thread_cpu_ns();
    int rc = ps_schedule_heartbeat(snap, &sn, 0, result, err);
    int64_t c1 = ps_clock_thread_cpu_ns();
    int regular = result->allocation_count;
    if (rc == 0)
        rc = ps_preempt_heartbeat(snap, &tree, &sn, n->allocs, n->count, result, pres, err);
    int64_t c2 = ps_clock_thread_cpu_ns();
    if (rc != 0)
        return rc;
    p->cpu_ns[p->heartbeats] = (double)(c2 - c0);
    p->regular_cpu_ns[p->heartbeats] = (double)(c1 - c0);
    p->stages_cpu_ns[p->heartbeats] = (double)(c2 - c1);
    p->heartbeats++;
    p->regular_allocations += regular;
    p->preempted_allocations += result->allocation_count - regular;
    p->aggressive_stage += pres->stage == PS_STAGE_AGGRESSIVELY_PREEMPTIVE;
    p->preemptive_stage += pres->stage == PS_STAGE_PREEMPTIVE;
    p->with_victims += pres->victim_count > 0;
    p->candidates += result->candidates_considered;
    p->skips += result->skip_count;
    p->victims += pres->victim_count;
    for (int v = 0; v < pres->victim_count; v++) {
        const struct ps_preempt_victim *vic = &pres->victims[v];
        int k = 0;
        while (k < n->count && n->allocs[k].id != vic->allocation_id)
            k++;
        if (k == n->count)
            return ps_error_set(err, PS_EINVAL, "victim %lld is not on node %d", (long long)vic->allocation_id, i);
        if ((rc = ps_sched_allocation_finished(snap, vic->op, n->allocs[k].resources, err)) != 0 ||
            (rc = ps_preemptible_remove(p->lists[vic->op], vic->allocation_id, err)) != 0)
            return rc;
        n->allocs[k] = n->allocs[--n->count];
    }
    n->usage = result->node_usage;
    return append_allocations(w, n, result, p->lists, err);
}

static json_t *preemptive_json(struct preemptive *p, struct phase *steady, bool judge)
{
    struct ps_bench_stats all, reg, stages, base;
    int hb = (int)p->heartbeats;
    ps_bench_stats_compute(p->cpu_ns, hb, &all);
    ps_bench_stats_compute(p->regular_cpu_ns, hb, &reg);
    ps_bench_stats_compute(p->stages_cpu_ns, hb, &stages);
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
    json_object_set_new(o, "regular_stage_cpu_ns_median", json_real(reg.median));
    json_object_set_new(o, "preemptive_stages_cpu_ns_median", json_real(stages.median));
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
    struct ps_fs_update *update = NULL;
    struct ps_sched_snapshot *snap = NULL;
    struct ps_sched_result result;
    ps_sched_result_init(&result);
    struct phase fill = {0}, steady = {0};
    struct preemptive pre;
    memset(&pre, 0, sizeof pre);
    struct ps_preempt_result pres;
    ps_preempt_result_init(&pres);
    int64_t build_start = ps_clock_monotonic_ns();
    int rc = build(&w, &o, &err);
    int64_t fs_ns = 0, release_ns = 0;
    if (rc == 0 && !(update = ps_fs_update_new()))
        rc = ps_error_set(&err, PS_ENOMEM, "out of memory");
    if (rc == 0) {
        struct ps_fs_options fo;
        ps_fs_options_init(&fo);
        struct ps_fs_input input = {.total = w.total, .now_ms = 0};
        int64_t t0 = ps_clock_monotonic_ns();
        rc = ps_fs_update_run(update, w.elems, w.count, w.fs_pools, w.pools + 1, &fo, &input, &err);
        fs_ns = ps_clock_monotonic_ns() - t0;
    }
    if (rc == 0) {
        struct ps_sched_options so;
        ps_sched_options_init(&so);
        so.total = w.total;
        so.filter_eval = ps_formula_eval;
        so.generation = 1;
        rc = ps_sched_snapshot_new(w.elems, w.count, w.fs_pools, w.pools + 1, w.ops, &so, &snap, &err);
    }
    double build_ms = (double)(ps_clock_monotonic_ns() - build_start) / 1e6;
    fill.samples_us = malloc((size_t)o.nodes * sizeof(double));
    steady.samples_us = malloc((size_t)o.nodes * (size_t)o.rounds * sizeof(double));
    fill.cpu_samples_ns = malloc((size_t)o.nodes * sizeof(double));
    steady.cpu_samples_ns = malloc((size_t)o.nodes * (size_t)o.rounds * sizeof(double));
    if (rc == 0 && (!fill.samples_us || !steady.samples_us || !fill.cpu_samples_ns || !steady.cpu_samples_ns))
        rc = ps_error_set(&err, PS_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < o.nodes; i++)
        rc = heartbeat(&w, snap, i, &result, &fill, &err);
    struct ps_bench_rng rng;
    ps_bench_rng_seed(&rng, o.seed ^ 0x5eed);
    for (int r = 0; rc == 0 && r < o.rounds; r++) {
        for (int i = 0; rc == 0 && i < o.nodes; i++) {
            int64_t t0 = ps_clock_thread_cpu_ns();
            rc = churn(&w, snap, i, &rng, &err);
            release_ns += ps_clock_thread_cpu_ns() - t0;
            if (rc == 0)
                rc = heartbeat(&w, snap, i, &result, &steady, &err);
        }
    }
    if (rc == 0 && o.starving > 0)
        rc = preemptive_setup(&w, snap, &pre, &err);
    for (int i = 0; rc == 0 && o.starving > 0 && i < o.nodes; i++)
        rc = preemptive_heartbeat(&w, snap, &pre, i, &result, &pres, &err);
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
    preemptive_release(&pre, w.count);
    ps_preempt_result_release(&pres);
    ps_sched_result_release(&result);
    ps_sched_snapshot_free(snap);
    ps_fs_update_free(update);
    workload_release(&w);
    return code;
}
