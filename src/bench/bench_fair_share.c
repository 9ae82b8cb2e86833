/* bench_fair_share.c — `poolsched bench fair-share`: the fair share update's latency.
 *
 * Builds a synthetic tree (bench_workload.h), runs one untimed update to size the reusable
 * workspace, then R timed updates on the same struct ps_fs_update with now_ms advancing by
 * 1000 and previous_update_time set, as the service's periodic update does: integral volumes
 * are refilled and consumed and the workspace is in steady state (no allocation expected).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_workload.h"
#include "core/fair_share.h"
#include "core/isa.h"
#include "platform/clock.h"
#include "platform/memstat.h"

#define BENCH "fair-share"
#define UPDATE_PERIOD_MS 1000
#define SCALING_STEPS 3            /* n, 2n, 4n */
#define SCALING_TOLERANCE 1.25     /* noise and cache effects allowed over n log n growth */
#define MAX_ALERT_EXAMPLES 3

/* The two workloads of shared/spec/performance.md and their targets. */
static const struct {
    const char *name;
    int pools, operations, nodes, runs;
    double target_ms;
} workloads[] = {
    {"normal", 1000, 10000, 10000, 21, 20.0},
    {"large", 10000, 100000, 20000, 7, 250.0},
};

struct options {
    struct ps_bench_fs_params params;
    int runs;
    bool scaling;
    const char *workload;      /* "normal", "large" or "custom" */
    double target_ms;          /* 0: no target for a custom size */
};

/* --improved: the update runs with enable_improved_fair_share_by_fit_factor_computation. */
static bool improved_mode;
/* --memo: the update remembers functions between runs, as the scheduling loop's does. */
static bool memo_mode;

struct measurement {
    int elements;
    double build_ms;
    double first_run_ms;       /* untimed warm-up: sizes the workspace */
    struct ps_bench_stats wall_ms;
    struct ps_bench_stats cpu_ms;
    int64_t workspace_bytes;   /* heap the update kept after its first run; -1 unknown */
    int64_t steady_heap_growth_bytes;  /* heap kept across the timed runs; 0 expected */
    struct ps_fs_update_memory held;   /* the workspace by purpose, after the last run */
    int runs_with_heap_growth;  /* timed runs after which the heap in use had grown */
    int64_t peak_rss_bytes;
    uint64_t checksum;         /* of every element's fair share after the last run */
    json_t *alerts;            /* the first alerts of the last run */
    int alert_count;
};

static void print_help(void)
{
    printf("usage: poolsched bench fair-share [--seed N] [--pools P] [--operations O] [--nodes N]\n"
           "                                  [--runs R] [--large] [--scaling] [--improved]\n"
           "                                  [--memo] [--isa base|avx2|avx512]\n\n"
           "Times one fair share update of a synthetic pool tree built from the seed: pools in 3\n"
           "levels, 10%% with strong guarantees, 5%% burst and 5%% relaxed integral pools with\n"
           "accumulated volumes, FIFO pools, gang operations, all 5 resources, on a cluster of N nodes.\n\n"
           "  --seed N        workload seed (default 1)\n"
           "  --pools P       pools (default 1000; 10000 with --large)\n"
           "  --operations O  operations (default 10000; 100000 with --large)\n"
           "  --nodes N       cluster nodes (default 10000; 20000 with --large)\n"
           "  --runs R        timed updates after one warm-up (default 21; 7 with --large)\n"
           "  --large         the large workload: 10,000 pools, 100,000 operations\n"
           "  --scaling       also run sizes 2x and 4x and report the per-element cost growth\n"
           "  --improved      run with enable_improved_fair_share_by_fit_factor_computation\n"
           "  --memo          remember functions between updates, as the scheduling loop does\n"
           "                  (ps_fs_update_set_memo; the runs' inputs repeat but for the\n"
           "                  integral volumes, so this is its best case)\n"
           "  --isa LEVEL     use vector kernels up to LEVEL (default: what the CPU has); every\n"
           "                  level gives the same bits, only the speed differs\n\n"
           "Targets (shared/spec/performance.md): median <= 20 ms (default sizes), <= 250 ms\n"
           "(--large); other sizes have no target. Prints one JSON object on stdout.\n");
}

/* Returns -1 to exit 0 (help), 2 on bad usage, 0 to run. */
static int parse_args(int argc, char **argv, struct options *o)
{
    long long seed = 1, pools = -1, operations = -1, nodes = -1, runs = -1;
    bool large = false;
    o->scaling = false;
    const struct ps_bench_int_opt ints[] = {
        {"--seed", 0, INT64_MAX, &seed},
        {"--pools", 3, 10000000, &pools},
        {"--operations", 1, 100000000, &operations},
        {"--nodes", 10, 10000000, &nodes},
        {"--runs", 1, 100000, &runs}
    };
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            print_help();
            return -1;
        } else if (strcmp(argv[i], "--large") == 0) {
            large = true;
        } else if (strcmp(argv[i], "--scaling") == 0) {
            o->scaling = true;
        } else if (strcmp(argv[i], "--improved") == 0) {
            improved_mode = true;
        } else if (strcmp(argv[i], "--memo") == 0) {
            memo_mode = true;
        } else if (strcmp(argv[i], "--isa") == 0) {
            if (i + 1 >= argc) {
                ps_bench_error(BENCH, "--isa needs a value: base, avx2 or avx512");
                return 2;
            }
            int level = ps_isa_parse(argv[i + 1]);
            if (level < 0) {
                ps_bench_error(BENCH, "--isa: '%s' is not one of base, avx2, avx512", argv[i + 1]);
                return 2;
            }
            ps_isa_cap((enum ps_isa)level);
            i++;
        } else if ((m = ps_bench_int_options(BENCH, argc, argv, &i, ints, (int)(sizeof ints / sizeof *ints))) != 0) {
            if (m < 0)
                return 2;
        } else {
            ps_bench_error(BENCH, "unknown option '%s' (see poolsched bench fair-share --help)", argv[i]);
            return 2;
        }
    }
    int w = large ? 1 : 0;
    bool custom = (pools >= 0 && pools != workloads[w].pools) ||
                  (operations >= 0 && operations != workloads[w].operations);
    o->params.seed = (uint64_t)seed;
    o->params.pools = pools >= 0 ? (int)pools : workloads[w].pools;
    o->params.operations = operations >= 0 ? (int)operations : workloads[w].operations;
    o->params.nodes = nodes >= 0 ? (int)nodes : workloads[w].nodes;
    o->runs = runs >= 0 ? (int)runs : workloads[w].runs;
    o->workload = custom ? "custom" : workloads[w].name;
    o->target_ms = custom ? 0 : workloads[w].target_ms;
    if (o->scaling && (int64_t)o->params.pools * 4 > 10000000) {
        ps_bench_error(BENCH, "--scaling: 4x %d pools is more than 10000000", o->params.pools);
        return 2;
    }
    if (o->scaling && (int64_t)o->params.operations * 4 > 100000000) {
        ps_bench_error(BENCH, "--scaling: 4x %d operations is more than 100000000", o->params.operations);
        return 2;
    }
    return 0;
}

static double ms_between(int64_t start_ns, int64_t end_ns)
{
    return (double)(end_ns - start_ns) / 1e6;
}

static void hash_bytes(uint64_t *h, const void *data, size_t size)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < size; i++) {
        *h ^= p[i];
        *h *= 0x100000001b3u;   /* FNV-1a */
    }
}

static uint64_t checksum_fair_shares(const struct ps_fs_element *elems, int count)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (int i = 0; i < count; i++)
        hash_bytes(&h, &elems[i].out.fair_share.total, sizeof elems[i].out.fair_share.total);
    return h;
}

static int64_t heap_delta(int64_t before, int64_t after)
{
    return before < 0 || after < 0 ? -1 : after - before;
}

static void collect_alerts(const struct ps_fs_update *update, struct measurement *m)
{
    m->alert_count = ps_fs_update_alert_count(update);
    m->alerts = json_array();
    for (int i = 0; i < m->alert_count && i < MAX_ALERT_EXAMPLES; i++)
        json_array_append_new(m->alerts, json_string(ps_fs_update_alert(update, i)));
}

/* Runs the warm-up and the timed updates over w. */
static int time_updates(struct ps_bench_fs_workload *w, int runs, struct measurement *m, struct ps_error *err)
{
    double *wall = malloc(sizeof *wall * (size_t)runs);
    double *cpu = malloc(sizeof *cpu * (size_t)runs);
    struct ps_fs_update *update = ps_fs_update_new();
    int rc = 0;
    if (!wall || !cpu || !update) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory for the update workspace");
        goto out;
    }
    ps_fs_update_set_memo(update, memo_mode);
    struct ps_fs_options options;
    ps_fs_options_init(&options);
    options.enable_improved_fair_share_by_fit_factor_computation = improved_mode;
    struct ps_fs_input input = {
        .total = w->total,
        .now_ms = w->now_ms,
        .previous_update_time_ms = w->now_ms - UPDATE_PERIOD_MS,
        .has_previous_update = true,
    };

    int64_t heap_before = ps_memstat_heap_in_use_bytes();
    int64_t start = ps_clock_monotonic_ns();
    rc = ps_fs_update_run(update, w->elems, w->count, w->fs_pools, w->pools + 1, &options, &input, err);
    m->first_run_ms = ms_between(start, ps_clock_monotonic_ns());
    if (rc != 0)
        goto out;
    int64_t heap_warm = ps_memstat_heap_in_use_bytes();
    m->workspace_bytes = heap_delta(heap_before, heap_warm);

    int64_t heap = heap_warm;
    for (int r = 0; r < runs && rc == 0; r++) {
        input.previous_update_time_ms = input.now_ms;
        input.now_ms += UPDATE_PERIOD_MS;
        int64_t wall_start = ps_clock_monotonic_ns();
        int64_t cpu_start = ps_clock_thread_cpu_ns();
        rc = ps_fs_update_run(update, w->elems, w->count, w->fs_pools, w->pools + 1, &options, &input, err);
        cpu[r] = ms_between(cpu_start, ps_clock_thread_cpu_ns());
        wall[r] = ms_between(wall_start, ps_clock_monotonic_ns());
        /* Outside the timed region: did this run keep more memory than the previous ones? */
        int64_t now_heap = ps_memstat_heap_in_use_bytes();
        m->runs_with_heap_growth += heap >= 0 && now_heap > heap;
        heap = now_heap > heap ? now_heap : heap;
    }
    if (rc != 0)
        goto out;
    m->steady_heap_growth_bytes = heap_delta(heap_warm, ps_memstat_heap_in_use_bytes());
    ps_bench_stats_compute(wall, runs, &m->wall_ms);
    ps_bench_stats_compute(cpu, runs, &m->cpu_ms);
    m->checksum = checksum_fair_shares(w->elems, w->count);
    ps_fs_update_memory(update, &m->held);
    collect_alerts(update, m);
out:
    if (rc != 0 && rc != PS_ENOMEM)
        ps_error_prefix(err, "the engine rejected the synthetic tree");
    ps_fs_update_free(update);
    free(wall);
    free(cpu);
    return rc;
}

/* Builds the workload of params and measures it; w stays built for the report. */
static int measure(const struct ps_bench_fs_params *params, int runs, struct ps_bench_fs_workload *w,
                   struct measurement *m, struct ps_error *err)
{
    memset(m, 0, sizeof *m);
    int64_t start = ps_clock_monotonic_ns();
    int rc = ps_bench_fs_workload_init(w, params, err);
    if (rc != 0)
        return rc;
    m->build_ms = ms_between(start, ps_clock_monotonic_ns());
    m->elements = w->count;
    rc = time_updates(w, runs, m, err);
    m->peak_rss_bytes = ps_memstat_peak_rss_bytes();
    return rc;
}

/* ---- the report ---------------------------------------------------------------------------- */

static json_t *share_json(const struct ps_share *s)
{
    json_t *o = json_object();
    for (int i = 0; i < PS_RES_COUNT; i++)
        json_object_set_new(o, ps_resource_name(i), json_real(s->v[i]));
    return o;
}

static json_t *resources_json(const struct ps_resources *r)
{
    json_t *o = json_object();
    for (int i = 0; i < PS_RES_COUNT; i++)
        json_object_set_new(o, ps_resource_name(i),
                            i == PS_RES_CPU ? json_real(ps_res_get(r, i)) : json_integer(r->v[i]));
    return o;
}

static json_t *workload_json(const struct options *o, const struct ps_bench_fs_workload *w)
{
    const struct ps_bench_fs_summary *s = &w->summary;
    json_t *levels = json_array();
    for (int l = 0; l < PS_BENCH_FS_LEVELS; l++)
        json_array_append_new(levels, json_integer(s->pools_per_level[l]));
    return json_pack(
        "{s:s, s:I, s:i, s:i, s:i, s:i, s:o, s:i, s:i, s:o, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i,"
        " s:i, s:o, s:o, s:f, s:f, s:f}",
        "name", o->workload, "seed", (json_int_t)o->params.seed, "pools", w->pools,
        "operations", w->operations, "elements", w->count, "levels", PS_BENCH_FS_LEVELS,
        "pools_per_level", levels, "resources", PS_RES_COUNT, "nodes", w->nodes,
        "total_resources", resources_json(&w->total),
        "strong_guarantee_pools", s->strong_guarantee_pools, "burst_pools", s->burst_pools,
        "relaxed_pools", s->relaxed_pools, "fifo_pools", s->fifo_pools, "limited_pools", s->limited_pools,
        "gpu_pools", s->gpu_pools, "idle_pools", s->idle_pools, "saturated_pools", s->saturated_pools,
        "gang_operations", s->gang_operations, "pending_operations", s->pending_operations,
        "demand_ratio", share_json(&s->demand), "usage_ratio", share_json(&s->usage),
        "strong_guarantee_cpu_ratio", s->strong_guarantee_cpu, "burst_guarantee_cpu_ratio",
        s->burst_guarantee_cpu, "resource_flow_cpu_ratio", s->resource_flow_cpu);
}

static json_t *stats_json(const struct ps_bench_stats *s)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f}", "median", s->median, "p99", s->p99, "min", s->min,
                     "max", s->max, "mean", s->mean);
}

static json_t *bytes_or_null(int64_t bytes)
{
    return bytes < 0 ? json_null() : json_integer(bytes);
}

/* Where the workspace's bytes are, as the engine accounts them (capacities held). */
static json_t *workspace_breakdown_json(const struct ps_fs_update_memory *h)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "element_state_bytes", (json_int_t)h->elements,
                     "pool_table_bytes", (json_int_t)h->pools, "index_bytes", (json_int_t)h->indexes,
                     "function_arena_bytes", (json_int_t)h->functions, "scratch_arena_bytes",
                     (json_int_t)h->scratch, "builder_bytes", (json_int_t)h->builders, "memo_bytes", (json_int_t)h->memo, "accounted_bytes",
                     (json_int_t)h->total);
}

/* engine_bytes: the caller's elements and pool entries plus the heap the workspace holds in steady state (after
 * the warm-up and any growth during the timed runs), measured by the allocator. */
static json_t *memory_json(const struct measurement *m, const struct ps_bench_fs_workload *w)
{
    int64_t elements = (int64_t)w->count * (int64_t)sizeof(struct ps_fs_element);
    int64_t pool_entries = (int64_t)(w->pools + 1) * (int64_t)sizeof(struct ps_fs_pool);
    int64_t engine = elements + pool_entries + (m->workspace_bytes > 0 ? m->workspace_bytes : 0) +
                     (m->steady_heap_growth_bytes > 0 ? m->steady_heap_growth_bytes : 0);
    json_t *o = json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:I, s:f, s:o, s:i}", "peak_rss_bytes",
                          bytes_or_null(m->peak_rss_bytes), "element_bytes", (json_int_t)sizeof(struct ps_fs_element),
                          "element_input_bytes", (json_int_t)sizeof(struct ps_fs_element_input),
                          "element_output_bytes", (json_int_t)sizeof(struct ps_fs_element_output),
                          "elements_bytes", (json_int_t)elements, "pool_entry_bytes",
                          (json_int_t)sizeof(struct ps_fs_pool), "pool_entries_bytes", (json_int_t)pool_entries,
                          "workspace_bytes", bytes_or_null(m->workspace_bytes),
                          "workspace", workspace_breakdown_json(&m->held), "engine_bytes", (json_int_t)engine,
                          "engine_bytes_per_operation", (double)engine / w->operations,
                          "steady_heap_growth_bytes", bytes_or_null(m->steady_heap_growth_bytes),
                          "runs_with_heap_growth", m->runs_with_heap_growth);
    return o;
}

static double per_element_ns(const struct measurement *m)
{
    return m->wall_ms.median * 1e6 / m->elements;
}

static double cpu_per_element_ns(const struct measurement *m)
{
    return m->cpu_ms.median * 1e6 / m->elements;
}

static json_t *scaling_json(const struct measurement *steps, const struct ps_bench_fs_params *params)
{
    json_t *sizes = json_array();
    bool ok = true;
    for (int s = 0; s < SCALING_STEPS; s++) {
        const struct measurement *m = &steps[s];
        json_t *step = json_pack("{s:i, s:i, s:i, s:f, s:f, s:f, s:f}", "pools", params[s].pools,
                                 "operations", params[s].operations, "elements", m->elements, "median_ms",
                                 m->wall_ms.median, "per_element_ns", per_element_ns(m), "cpu_median_ms",
                                 m->cpu_ms.median, "cpu_per_element_ns", cpu_per_element_ns(m));
        if (s > 0) {
            /* Per-element cost of n log n grows by log(2n)/log(n) when n doubles. Thread CPU
             * time, not wall time: on a shared machine waiting for a core is not cost. */
            double growth = cpu_per_element_ns(m) / cpu_per_element_ns(&steps[s - 1]);
            double bound = log((double)m->elements) / log((double)steps[s - 1].elements);
            ok = ok && growth <= bound * SCALING_TOLERANCE;
            json_object_set_new(step, "per_element_growth", json_real(growth));
            json_object_set_new(step, "nlogn_growth", json_real(bound));
        }
        json_array_append_new(sizes, step);
    }
    return json_pack("{s:o, s:f, s:b}", "sizes", sizes, "tolerance", SCALING_TOLERANCE,
                     "grows_no_faster_than_nlogn", ok);
}

static json_t *report_json(const struct options *o, const struct ps_bench_fs_workload *w,
                           struct measurement *m, json_t *scaling)
{
    char checksum[17];
    snprintf(checksum, sizeof checksum, "%016llx", (unsigned long long)m->checksum);
    json_t *target = o->target_ms > 0 ? json_real(o->target_ms) : json_null();
    json_t *meets = o->target_ms > 0 ? json_boolean(m->wall_ms.median <= o->target_ms) : json_null();
    json_t *report = json_pack(
        "{s:s, s:o, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:o, s:f, s:f, s:o, s:f, s:o, s:i, s:o, s:s}",
        "benchmark", BENCH, "workload", workload_json(o, w), "runs", m->wall_ms.count, "warmup_runs", 1,
        "median_ms", m->wall_ms.median, "p99_ms", m->wall_ms.p99, "min_ms", m->wall_ms.min,
        "max_ms", m->wall_ms.max, "mean_ms", m->wall_ms.mean, "per_element_ns", per_element_ns(m),
        "target_ms", target, "meets_target", meets, "first_run_ms", m->first_run_ms, "build_ms", m->build_ms,
        "cpu_ms", stats_json(&m->cpu_ms), "cpu_per_element_ns", cpu_per_element_ns(m), "memory", memory_json(m, w), "alerts", m->alert_count,
        "alert_examples", m->alerts, "checksum", checksum);
    m->alerts = NULL;   /* owned by the report now */
    if (report)
        json_object_set_new(report, "isa", json_pack("{s:s, s:s}", "used", ps_isa_name(ps_isa_level()),
                                                      "detected", ps_isa_name(ps_isa_detected())));
    if (report && scaling)
        json_object_set_new(report, "scaling", scaling);
    else
        json_decref(scaling);
    return report;
}

/* Measures sizes 2x and 4x of o->params after `base` (the 1x run). */
static int measure_scaling(const struct options *o, const struct measurement *base, json_t **out,
                           struct ps_error *err)
{
    struct measurement steps[SCALING_STEPS];
    struct ps_bench_fs_params params[SCALING_STEPS];
    steps[0] = *base;
    params[0] = o->params;
    for (int s = 1; s < SCALING_STEPS; s++) {
        params[s] = o->params;
        params[s].pools <<= s;
        params[s].operations <<= s;
        params[s].nodes = params[s].nodes << s < 10000000 ? params[s].nodes << s : 10000000;
        struct ps_bench_fs_workload w;
        int rc = measure(&params[s], o->runs, &w, &steps[s], err);
        json_decref(steps[s].alerts);
        ps_bench_fs_workload_release(&w);
        if (rc != 0)
            return rc;
    }
    *out = scaling_json(steps, params);
    return 0;
}

int ps_bench_fair_share(int argc, char **argv)
{
    struct options o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;

    struct ps_error err;
    ps_error_init(&err);
    struct ps_bench_fs_workload w;
    struct measurement m;
    json_t *scaling = NULL;
    rc = measure(&o.params, o.runs, &w, &m, &err);
    if (rc == 0 && o.scaling)
        rc = measure_scaling(&o, &m, &scaling, &err);
    if (rc != 0) {
        ps_bench_error(BENCH, "%s", err.msg);
        json_decref(m.alerts);
        ps_bench_fs_workload_release(&w);
        return 1;
    }
    rc = ps_bench_print_json(BENCH, report_json(&o, &w, &m, scaling));
    json_decref(m.alerts);
    ps_bench_fs_workload_release(&w);
    return rc;
}
