#include "bench/bench_workload.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_rng.h"

#define GIB ((int64_t)1 << 30)
#define DAY_MS ((int64_t)86400000)
#define NAME_MAX_LEN 16   /* "pool-10000000", "op-100000000" and the NUL fit */

/* One node of the synthetic cluster; every tenth node also has 8 gpus. */
#define NODE_USER_SLOTS 80
#define NODE_CPU (64 * PS_CPU_SCALE)
#define NODE_MEMORY (384 * GIB)
#define NODE_NETWORK 100
#define GPU_NODE_GPUS 8

/* How the cluster is loaded and promised (fractions of the total cpu). */
#define DEMAND_LOAD 1.5
#define USAGE_LOAD 0.95
#define STRONG_GUARANTEE_ROOT 0.55
#define BURST_GUARANTEE_TOTAL 0.15
#define RELAXED_FLOW_TOTAL 0.05

enum usage_class { CLASS_SATURATED, CLASS_PARTIAL, CLASS_STARVING };

/* Generator-only facts about a pool (index k is element 1 + k). */
struct pool_info {
    int level;                  /* 1..3 */
    int children;
    double fanout_weight;       /* how likely the pool is picked as a parent */
    double popularity;          /* how likely an operation lands in the pool itself */
    double subtree_popularity;
    enum usage_class usage_class;
    bool gpu;
    bool strong;
    bool integral;
    bool integral_below;        /* some descendant is integral */
    double child_guarantee_fraction;
    double guarantee_weight;
    double children_guarantee_weight;
};

/* Per-operation facts used while normalizing demand and usage. */
struct op_info {
    struct ps_resources job;    /* one job; user_slots 1 */
    int64_t jobs;
    int64_t running;
    bool gpu;
    bool fresh;                 /* submitted just now: nothing running */
};

struct gen {
    struct ps_bench_rng rng;
    struct ps_bench_fs_workload *w;
    struct pool_info *pools;
    struct op_info *ops;
    double *cumulative;         /* scratch for weighted sampling, pools entries */
    struct ps_resources gpu_nodes;
    struct ps_resources ssd_nodes;
};

static struct ps_fs_element *pool_elem(struct gen *g, int k)
{
    return &g->w->elems[1 + k];
}

/* Pool k's entry of the pools array: the element's index (entry 0 is the root's). */
static struct ps_fs_pool_input *pool_in(struct gen *g, int k)
{
    return &g->w->fs_pools[1 + k].in;
}

static struct ps_fs_element *op_elem(struct gen *g, int j)
{
    return &g->w->elems[1 + g->w->pools + j];
}

static int pool_of_elem(int elem)
{
    return elem - 1;   /* -1 for the root */
}

static struct ps_resources node_resources(int nodes, bool gpu)
{
    struct ps_resources r;
    r.v[PS_RES_USER_SLOTS] = (int64_t)NODE_USER_SLOTS * nodes;
    r.v[PS_RES_CPU] = (int64_t)NODE_CPU * nodes;
    r.v[PS_RES_GPU] = gpu ? (int64_t)GPU_NODE_GPUS * nodes : 0;
    r.v[PS_RES_MEMORY] = NODE_MEMORY * nodes;
    r.v[PS_RES_NETWORK] = (int64_t)NODE_NETWORK * nodes;
    return r;
}

static int64_t cpu_of_ratio(const struct gen *g, double ratio)
{
    return (int64_t)(ratio * (double)g->w->total.v[PS_RES_CPU]);
}

static int64_t memory_of_ratio(const struct gen *g, double ratio)
{
    return (int64_t)(ratio * (double)g->w->total.v[PS_RES_MEMORY]);
}

/* Samples index i of [0, n) with probability weight_i / sum, from cumulative sums. */
static int sample_cumulative(struct gen *g, const double *cumulative, int n)
{
    double x = ps_bench_rng_unit(&g->rng) * cumulative[n - 1];
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cumulative[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int integer_cube_root(int n)
{
    int r = 1;
    while ((int64_t)(r + 1) * (r + 1) * (r + 1) <= n)
        r++;
    /* round to the nearer of r and r + 1 in the cube */
    int64_t below = n - (int64_t)r * r * r;
    int64_t above = (int64_t)(r + 1) * (r + 1) * (r + 1) - n;
    return above < below ? r + 1 : r;
}

/* ---- pools -------------------------------------------------------------------------------- */

static void build_levels(struct gen *g)
{
    struct ps_bench_fs_workload *w = g->w;
    int n1 = integer_cube_root(w->pools);
    int n2 = n1 * n1 < (w->pools - n1) / 2 ? n1 * n1 : (w->pools - n1) / 2;
    int n3 = w->pools - n1 - n2;
    int sizes[PS_BENCH_FS_LEVELS] = {n1, n2, n3};
    memcpy(w->summary.pools_per_level, sizes, sizeof sizes);

    static const double fanout[] = {1, 1, 1, 2, 2, 3, 5, 8};
    int first = 0;            /* first pool of the previous level */
    for (int level = 1, k = 0; level <= PS_BENCH_FS_LEVELS; level++) {
        int level_first = k;
        for (int i = 0; i < sizes[level - 1]; i++, k++) {
            int parent_elem = 0;
            if (level > 1) {
                int count = level_first - first;
                parent_elem = 1 + first + sample_cumulative(g, g->cumulative + first, count);
                g->pools[pool_of_elem(parent_elem)].children++;
            }
            char *name = w->names + (size_t)k * NAME_MAX_LEN;
            snprintf(name, NAME_MAX_LEN, "pool-%d", k);
            ps_fs_element_input_init(&pool_elem(g, k)->in, PS_ELEM_POOL, parent_elem, name);
            pool_elem(g, k)->in.pool = 1 + k;
            ps_fs_pool_input_init(pool_in(g, k));
            g->pools[k].level = level;
            g->pools[k].fanout_weight = PS_BENCH_PICK(&g->rng, fanout);
            g->cumulative[k] = g->pools[k].fanout_weight + (k > level_first ? g->cumulative[k - 1] : 0);
        }
        first = level_first;
    }
}

/* Where operations go: a heavy tail over the leaf pools, a quarter of them idle; a few inner
 * pools host operations of their own. */
static void assign_popularity(struct gen *g)
{
    static const double tail[] = {1, 1, 1, 2, 2, 3, 5, 8, 13, 21, 34};
    int n = g->w->pools;
    double sum = 0;
    for (int k = 0; k < n; k++) {
        struct pool_info *p = &g->pools[k];
        if (p->children == 0)
            p->popularity = ps_bench_rng_chance(&g->rng, 0.25) ? 0 : PS_BENCH_PICK(&g->rng, tail);
        else
            p->popularity = ps_bench_rng_chance(&g->rng, 0.1) ? 1 : 0;
        sum += p->popularity;
    }
    if (sum == 0)
        g->pools[n - 1].popularity = 1;
    for (int k = n - 1; k >= 0; k--) {
        struct pool_info *p = &g->pools[k];
        p->subtree_popularity += p->popularity;
        int parent = pool_of_elem(pool_elem(g, k)->in.parent);
        if (parent >= 0)
            g->pools[parent].subtree_popularity += p->subtree_popularity;
    }
}

static void configure_pool(struct gen *g, int k)
{
    static const double weights[] = {0.5, 2, 3, 5, 10};
    static const double limit_ratios[] = {0.005, 0.01, 0.02, 0.05, 0.1, 0.2};
    static const double max_share_ratios[] = {0.25, 0.5};
    static const enum ps_fifo_param fifo_orders[][2] = {
        {PS_FIFO_WEIGHT, PS_FIFO_START_TIME},
        {PS_FIFO_PENDING_JOB_COUNT, PS_FIFO_START_TIME},
        {PS_FIFO_START_TIME, PS_FIFO_WEIGHT},
    };
    struct pool_info *p = &g->pools[k];
    struct ps_fs_element_input *in = &pool_elem(g, k)->in;
    struct ps_bench_fs_summary *s = &g->w->summary;
    struct ps_bench_rng *rng = &g->rng;

    double r = ps_bench_rng_unit(rng);
    p->usage_class = r < 0.4 ? CLASS_SATURATED : r < 0.8 ? CLASS_PARTIAL : CLASS_STARVING;
    if (p->popularity > 0 && p->usage_class == CLASS_SATURATED)
        s->saturated_pools++;
    if (p->subtree_popularity == 0)
        s->idle_pools++;

    if (ps_bench_rng_chance(rng, 0.25)) {
        in->weight = PS_BENCH_PICK(rng, weights);
        in->weight_specified = true;
    }
    bool limited = false;
    if (ps_bench_rng_chance(rng, 0.1)) {
        double ratio = PS_BENCH_PICK(rng, limit_ratios);
        in->resource_limits.v[PS_RES_CPU] = cpu_of_ratio(g, ratio);
        if (ps_bench_rng_chance(rng, 0.5))
            in->resource_limits.v[PS_RES_MEMORY] = memory_of_ratio(g, ratio);
        limited = true;
    }
    if (ps_bench_rng_chance(rng, 0.03)) {
        in->max_share_ratio = PS_BENCH_PICK(rng, max_share_ratios);
        limited = true;
    }
    s->limited_pools += limited;

    if (p->children == 0 && p->popularity > 0) {
        /* ~5% of all pools are gpu pools and ~5% FIFO pools; both are leaves that run things. */
        if (ps_bench_rng_chance(rng, 0.07)) {
            p->gpu = true;
            in->filter_limits = g->gpu_nodes;
            s->gpu_pools++;
        }
        if (ps_bench_rng_chance(rng, 0.075)) {
            struct ps_fs_pool_input *pin = pool_in(g, k);
            pin->mode = PS_MODE_FIFO;
            int order = (int)ps_bench_rng_below(rng, 4);
            if (order < 3) {
                memcpy(pin->fifo_sort, fifo_orders[order], sizeof fifo_orders[order]);
                pin->fifo_sort_count = 2;
            }
            s->fifo_pools++;
        }
    }
}

/* ~10% of the pools get a strong guarantee; a pool's ancestors get one too, and children's
 * guarantees sum to 50-90% of their parent's, so the adjustment never has to scale them. */
static void assign_strong_guarantees(struct gen *g)
{
    static const double weights[] = {1, 1, 2, 3, 5};
    int n = g->w->pools;
    int target = n / 10, marked = 0;
    for (int64_t tries = 0; marked < target && tries < 100 * (int64_t)n; tries++) {
        int k = (int)ps_bench_rng_below(&g->rng, (uint64_t)n);
        while (k >= 0 && !g->pools[k].strong) {
            g->pools[k].strong = true;
            marked++;
            k = pool_of_elem(pool_elem(g, k)->in.parent);
        }
    }
    double root_children_weight = 0;
    for (int k = 0; k < n; k++) {
        struct pool_info *p = &g->pools[k];
        if (!p->strong)
            continue;
        p->guarantee_weight = PS_BENCH_PICK(&g->rng, weights);
        p->child_guarantee_fraction = ps_bench_rng_range(&g->rng, 0.5, 0.9);
        int parent = pool_of_elem(pool_elem(g, k)->in.parent);
        if (parent < 0)
            root_children_weight += p->guarantee_weight;
        else
            g->pools[parent].children_guarantee_weight += p->guarantee_weight;
    }
    /* Parents come before children, so one forward pass sees each parent's amount first. */
    double *ratio = g->cumulative;   /* reused: cpu ratio of each strong pool */
    for (int k = 0; k < n; k++) {
        struct pool_info *p = &g->pools[k];
        ratio[k] = 0;
        if (!p->strong)
            continue;
        struct ps_fs_element_input *in = &pool_elem(g, k)->in;
        struct ps_fs_pool_input *pin = pool_in(g, k);
        int parent = pool_of_elem(in->parent);
        double share = parent < 0
            ? STRONG_GUARANTEE_ROOT * p->guarantee_weight / root_children_weight
            : ratio[parent] * g->pools[parent].child_guarantee_fraction * p->guarantee_weight /
                  g->pools[parent].children_guarantee_weight;
        ratio[k] = share;
        pin->strong_guarantee.r.v[PS_RES_CPU] = cpu_of_ratio(g, share);
        pin->strong_guarantee.set |= 1u << PS_RES_CPU;
        /* Memory in the cluster's own proportion keeps children within their parents, as
         * the inferred memory of pools that only give cpu. */
        if (ps_bench_rng_chance(&g->rng, 0.5)) {
            pin->strong_guarantee.r.v[PS_RES_MEMORY] = memory_of_ratio(g, share);
            pin->strong_guarantee.set |= 1u << PS_RES_MEMORY;
        }
        g->w->summary.strong_guarantee_pools++;
        if (parent < 0)
            g->w->summary.strong_guarantee_cpu += share;
    }
}

static bool can_be_integral(struct gen *g, int k)
{
    if (g->pools[k].integral_below || g->pools[k].subtree_popularity == 0)
        return false;
    if (g->pools[k].level == 1 && g->w->pools >= 20)
        return false;
    for (int a = k; a >= 0; a = pool_of_elem(pool_elem(g, a)->in.parent))
        if (g->pools[a].integral)
            return false;
    return true;
}

static int pick_integral_pools(struct gen *g, int *chosen, int target)
{
    int n = g->w->pools, count = 0;
    for (int64_t tries = 0; count < target && tries < 50 * (int64_t)n; tries++) {
        int k = (int)ps_bench_rng_below(&g->rng, (uint64_t)n);
        if (!can_be_integral(g, k))
            continue;
        g->pools[k].integral = true;
        for (int a = pool_of_elem(pool_elem(g, k)->in.parent); a >= 0;
             a = pool_of_elem(pool_elem(g, a)->in.parent))
            g->pools[a].integral_below = true;
        chosen[count++] = k;
    }
    return count;
}

static void set_ratio_resources(struct gen *g, struct ps_resources_opt *opt, double ratio, bool memory)
{
    opt->r.v[PS_RES_CPU] = cpu_of_ratio(g, ratio);
    opt->set |= 1u << PS_RES_CPU;
    if (memory) {
        opt->r.v[PS_RES_MEMORY] = memory_of_ratio(g, ratio);
        opt->set |= 1u << PS_RES_MEMORY;
    }
}

/* The ratio of a config vector to the total, as the engine's GetMaxResourceRatio: the
 * largest over the resources given. */
static double max_ratio(const struct gen *g, const struct ps_resources_opt *opt)
{
    double ratio = 0;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (!((opt->set >> i) & 1u) || g->w->total.v[i] <= 0)
            continue;
        double r = (double)opt->r.v[i] / (double)g->w->total.v[i];
        ratio = r > ratio ? r : ratio;
    }
    return ratio;
}

/* A volume between empty and the pool's capacity (flow x 1 day), spread over every resource
 * in the cluster's proportion, as the engine accumulates it. */
static void set_accumulated_volume(struct gen *g, struct ps_fs_pool_input *in, double flow_ratio)
{
    static const double fills[] = {0, 0.02, 0.25, 0.6, 1.0, -1};
    double fill = PS_BENCH_PICK(&g->rng, fills);
    if (fill < 0)
        fill = ps_bench_rng_unit(&g->rng);
    double seconds = flow_ratio * 86400.0 * fill;
    for (int i = 0; i < PS_RES_COUNT; i++)
        in->accumulated_volume.v[i] = ps_res_get(&g->w->total, i) * seconds;
}

static int assign_integral_guarantees(struct gen *g)
{
    static const double weights[] = {1, 2, 3, 5};
    static const double flow_of_burst[] = {0.1, 0.2, 0.25, 0.5};
    static const double multipliers[] = {1.5, 2, 5};
    int n = g->w->pools;
    int target = n / 20;
    int *chosen = malloc(sizeof *chosen * (size_t)(2 * target + 1));
    if (!chosen)
        return PS_ENOMEM;
    struct ps_bench_fs_summary *s = &g->w->summary;
    int count = pick_integral_pools(g, chosen, 2 * target);
    /* The first half become burst pools, the rest relaxed ones. */
    int bursts = count < target ? (count + 1) / 2 : target;
    double weight[2] = {0, 0};
    double *w = g->cumulative;   /* reused: weight of each chosen pool */
    for (int i = 0; i < count; i++) {
        w[i] = PS_BENCH_PICK(&g->rng, weights);
        weight[i >= bursts] += w[i];
    }
    for (int i = 0; i < count; i++) {
        struct ps_fs_pool_input *in = pool_in(g, chosen[i]);
        bool memory = ps_bench_rng_chance(&g->rng, 0.3);
        double flow;
        if (i < bursts) {
            double burst = BURST_GUARANTEE_TOTAL * w[i] / weight[0];
            flow = burst * PS_BENCH_PICK(&g->rng, flow_of_burst);
            in->guarantee_type = PS_GUARANTEE_BURST;
            set_ratio_resources(g, &in->burst_guarantee, burst, memory);
            s->burst_pools++;
            s->burst_guarantee_cpu += burst;
        } else {
            flow = RELAXED_FLOW_TOTAL * w[i] / weight[1];
            in->guarantee_type = PS_GUARANTEE_RELAXED;
            if (ps_bench_rng_chance(&g->rng, 0.2))
                in->relaxed_share_multiplier_limit = PS_BENCH_PICK(&g->rng, multipliers);
            s->relaxed_pools++;
        }
        set_ratio_resources(g, &in->resource_flow, flow, memory);
        s->resource_flow_cpu += flow;
        set_accumulated_volume(g, in, max_ratio(g, &in->resource_flow));
    }
    free(chosen);
    return 0;
}

/* ---- operations --------------------------------------------------------------------------- */

static struct ps_resources job_shape(struct gen *g, bool gpu)
{
    static const int64_t small_cpu[] = {50, 100, 100, 100, 150, 200};
    static const int64_t medium_cpu[] = {200, 300, 400};
    static const int64_t fat_cpu[] = {100, 200, 400, 800};
    static const int64_t gpus[] = {1, 1, 2, 4, 8};
    struct ps_bench_rng *rng = &g->rng;
    struct ps_resources j = ps_resources_zero();
    j.v[PS_RES_USER_SLOTS] = 1;
    if (gpu) {
        j.v[PS_RES_GPU] = PS_BENCH_PICK(rng, gpus);
        j.v[PS_RES_CPU] = 8 * PS_CPU_SCALE * j.v[PS_RES_GPU];
        j.v[PS_RES_MEMORY] = 64 * GIB * j.v[PS_RES_GPU];
        j.v[PS_RES_NETWORK] = 4;
        return j;
    }
    double r = ps_bench_rng_unit(rng);
    if (r < 0.6) {          /* map and reduce jobs */
        j.v[PS_RES_CPU] = PS_BENCH_PICK(rng, small_cpu);
        j.v[PS_RES_MEMORY] = j.v[PS_RES_CPU] * (2 + (int64_t)ps_bench_rng_below(rng, 3)) * GIB / PS_CPU_SCALE;
        j.v[PS_RES_NETWORK] = (int64_t)ps_bench_rng_below(rng, 2);
    } else if (r < 0.85) {  /* multi-core jobs */
        j.v[PS_RES_CPU] = PS_BENCH_PICK(rng, medium_cpu);
        j.v[PS_RES_MEMORY] = j.v[PS_RES_CPU] * (4 + 2 * (int64_t)ps_bench_rng_below(rng, 3)) * GIB / PS_CPU_SCALE;
        j.v[PS_RES_NETWORK] = 1 + (int64_t)ps_bench_rng_below(rng, 2);
    } else if (r < 0.92) {  /* memory-heavy jobs: memory becomes the dominant resource */
        j.v[PS_RES_CPU] = PS_BENCH_PICK(rng, fat_cpu);
        j.v[PS_RES_MEMORY] = (16 + 16 * (int64_t)ps_bench_rng_below(rng, 3)) * GIB;
        j.v[PS_RES_NETWORK] = 2;
    } else {                /* tiny jobs: user slots become the dominant resource */
        j.v[PS_RES_CPU] = ps_bench_rng_chance(rng, 0.5) ? 10 : 25;
        j.v[PS_RES_MEMORY] = GIB / 2;
    }
    return j;
}

/* Job counts with a heavy tail: half the operations have under 64 jobs, a few have 10,000. */
static int64_t job_count(struct gen *g)
{
    static const int exponents[] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 11, 12, 13};
    int64_t base = (int64_t)1 << PS_BENCH_PICK(&g->rng, exponents);
    return base + (int64_t)ps_bench_rng_below(&g->rng, (uint64_t)base);
}

static void place_operations(struct gen *g)
{
    struct ps_bench_fs_workload *w = g->w;
    int n = w->pools;
    for (int k = 0; k < n; k++)
        g->cumulative[k] = g->pools[k].popularity + (k > 0 ? g->cumulative[k - 1] : 0);
    for (int j = 0; j < w->operations; j++) {
        int k = sample_cumulative(g, g->cumulative, n);
        struct op_info *o = &g->ops[j];
        char *name = w->names + (size_t)(n + j) * NAME_MAX_LEN;
        snprintf(name, NAME_MAX_LEN, "op-%d", j);
        struct ps_fs_element_input *in = &op_elem(g, j)->in;
        ps_fs_element_input_init(in, PS_ELEM_OPERATION, 1 + k, name);
        o->gpu = g->pools[k].gpu;
        o->job = job_shape(g, o->gpu);
        o->jobs = job_count(g);
        o->fresh = ps_bench_rng_chance(&g->rng, 0.1);
        in->is_gang = ps_bench_rng_chance(&g->rng, o->gpu ? 0.3 : 0.03);
        in->start_time_ms = w->now_ms - 1 - (int64_t)ps_bench_rng_below(&g->rng, 7 * DAY_MS);
        if (ps_bench_rng_chance(&g->rng, 0.1)) {
            static const double weights[] = {0.5, 2, 3, 5, 10};
            in->weight = PS_BENCH_PICK(&g->rng, weights);
            in->weight_specified = true;
        }
        if (o->gpu)
            in->filter_limits = g->gpu_nodes;
        else if (ps_bench_rng_chance(&g->rng, 0.03))
            in->filter_limits = g->ssd_nodes;
        w->summary.gang_operations += in->is_gang;
    }
}

/* jobs x fraction, rounded up or down at random so that small operations run something in
 * proportion too. */
static int64_t fraction_of(struct gen *g, int64_t jobs, double fraction)
{
    int64_t n = (int64_t)((double)jobs * fraction + ps_bench_rng_unit(&g->rng));
    return n < jobs ? n : jobs;
}

/* Scales the job counts of one group (gpu or not) so that its demand of `resource` is
 * `load` x the total. */
static void normalize_demand(struct gen *g, bool gpu, int resource, double load)
{
    double demand = 0;
    for (int j = 0; j < g->w->operations; j++)
        if (g->ops[j].gpu == gpu)
            demand += (double)g->ops[j].jobs * (double)g->ops[j].job.v[resource];
    if (demand <= 0)
        return;
    double factor = load * (double)g->w->total.v[resource] / demand;
    for (int j = 0; j < g->w->operations; j++) {
        struct op_info *o = &g->ops[j];
        if (o->gpu != gpu)
            continue;
        int64_t jobs = (int64_t)((double)o->jobs * factor + 0.5);
        o->jobs = jobs > 0 ? jobs : 1;
    }
}

static void scale_running(struct gen *g, bool gpu, double factor)
{
    if (factor >= 1)
        return;
    for (int j = 0; j < g->w->operations; j++) {
        struct op_info *o = &g->ops[j];
        if (o->gpu != gpu)
            continue;
        if (op_elem(g, j)->in.is_gang)
            o->running = ps_bench_rng_chance(&g->rng, factor) ? o->running : 0;
        else
            o->running = fraction_of(g, o->running, factor);
    }
}

static void sum_usage(struct gen *g, bool gpu, double *usage)
{
    for (int i = 0; i < PS_RES_COUNT; i++)
        usage[i] = 0;
    for (int j = 0; j < g->w->operations; j++)
        if (g->ops[j].gpu == gpu)
            for (int i = 0; i < PS_RES_COUNT; i++)
                usage[i] += (double)g->ops[j].running * (double)g->ops[j].job.v[i];
}

/* Running jobs by the pool's class (saturated, partial, starving); gang operations run all
 * or nothing. Then the usages are scaled down until they fit USAGE_LOAD of every resource. */
static void assign_usage(struct gen *g)
{
    struct ps_bench_fs_workload *w = g->w;
    for (int j = 0; j < w->operations; j++) {
        struct op_info *o = &g->ops[j];
        struct ps_fs_element_input *in = &op_elem(g, j)->in;
        double fraction = 0;
        switch (g->pools[pool_of_elem(in->parent)].usage_class) {
        case CLASS_SATURATED: fraction = 1; break;
        case CLASS_PARTIAL: fraction = ps_bench_rng_range(&g->rng, 0.2, 0.9); break;
        case CLASS_STARVING: fraction = ps_bench_rng_range(&g->rng, 0, 0.1); break;
        }
        if (o->fresh)
            fraction = 0;
        if (in->is_gang)
            fraction = fraction >= 0.5 ? 1 : 0;
        o->running = fraction_of(g, o->jobs, fraction);
    }
    double gpu_usage[PS_RES_COUNT], other_usage[PS_RES_COUNT];
    sum_usage(g, true, gpu_usage);
    if (gpu_usage[PS_RES_GPU] > 0)
        scale_running(g, true, USAGE_LOAD * (double)w->total.v[PS_RES_GPU] / gpu_usage[PS_RES_GPU]);
    sum_usage(g, true, gpu_usage);
    sum_usage(g, false, other_usage);
    double factor = 1;
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (other_usage[i] <= 0)
            continue;
        double room = USAGE_LOAD * (double)w->total.v[i] - gpu_usage[i];
        double f = room > 0 ? room / other_usage[i] : 0;
        factor = f < factor ? f : factor;
    }
    scale_running(g, false, factor);
}

static struct ps_resources scaled(const struct ps_resources *job, int64_t count)
{
    struct ps_resources r;
    for (int i = 0; i < PS_RES_COUNT; i++)
        r.v[i] = job->v[i] * count;
    return r;
}

static void finish_operations(struct gen *g)
{
    static const double limit_fractions[] = {0.25, 0.5};
    struct ps_bench_fs_workload *w = g->w;
    struct ps_bench_fs_summary *s = &w->summary;
    double demand[PS_RES_COUNT] = {0}, usage[PS_RES_COUNT] = {0};
    for (int j = 0; j < w->operations; j++) {
        struct op_info *o = &g->ops[j];
        struct ps_fs_element_input *in = &op_elem(g, j)->in;
        in->demand = scaled(&o->job, o->jobs);
        in->usage = scaled(&o->job, o->running);
        in->pending_job_count = o->jobs - o->running;
        if (ps_bench_rng_chance(&g->rng, 0.05)) {
            int64_t cpu = (int64_t)((double)in->demand.v[PS_RES_CPU] * PS_BENCH_PICK(&g->rng, limit_fractions));
            in->resource_limits.v[PS_RES_CPU] = cpu > PS_CPU_SCALE ? cpu : PS_CPU_SCALE;
        }
        s->pending_operations += o->running == 0;
        for (int i = 0; i < PS_RES_COUNT; i++) {
            demand[i] += (double)in->demand.v[i];
            usage[i] += (double)in->usage.v[i];
        }
    }
    for (int i = 0; i < PS_RES_COUNT; i++) {
        double total = (double)w->total.v[i];
        s->demand.v[i] = total > 0 ? demand[i] / total : 0;
        s->usage.v[i] = total > 0 ? usage[i] / total : 0;
    }
}

/* ---- the whole tree ----------------------------------------------------------------------- */

static int check_params(const struct ps_bench_fs_params *p, struct ps_error *err)
{
    if (p->pools < 3 || p->pools > 10000000)
        return ps_error_set(err, PS_EINVAL, "pools: %d is out of range 3..10000000 (three levels need three pools)",
                            p->pools);
    if (p->operations < 1 || p->operations > 100000000)
        return ps_error_set(err, PS_EINVAL, "operations: %d is out of range 1..100000000", p->operations);
    if (p->nodes < 10 || p->nodes > 10000000)
        return ps_error_set(err, PS_EINVAL, "nodes: %d is out of range 10..10000000", p->nodes);
    return 0;
}

static int generate(struct gen *g)
{
    struct ps_bench_fs_workload *w = g->w;
    w->total = ps_resources_add(node_resources(w->nodes - w->nodes / 10, false),
                                node_resources(w->nodes / 10, true));
    g->gpu_nodes = node_resources(w->nodes / 10, true);
    g->ssd_nodes = node_resources(w->nodes * 3 / 10, false);
    ps_fs_element_input_init(&w->elems[0].in, PS_ELEM_ROOT, -1, "<Root>");
    w->elems[0].in.pool = 0;
    ps_fs_pool_input_init(&w->fs_pools[0].in);

    build_levels(g);
    assign_popularity(g);
    for (int k = 0; k < w->pools; k++)
        configure_pool(g, k);
    assign_strong_guarantees(g);
    int rc = assign_integral_guarantees(g);
    if (rc != 0)
        return rc;
    place_operations(g);
    normalize_demand(g, false, PS_RES_CPU, DEMAND_LOAD);
    normalize_demand(g, true, PS_RES_GPU, DEMAND_LOAD);
    assign_usage(g);
    finish_operations(g);
    return 0;
}

int ps_bench_fs_workload_init(struct ps_bench_fs_workload *w, const struct ps_bench_fs_params *params,
                              struct ps_error *err)
{
    memset(w, 0, sizeof *w);
    int rc = check_params(params, err);
    if (rc != 0)
        return rc;
    w->pools = params->pools;
    w->operations = params->operations;
    w->nodes = params->nodes;
    w->count = 1 + w->pools + w->operations;
    w->now_ms = 1700000000000;   /* an instant in 2023, so start times stay positive */

    struct gen g = {.w = w};
    ps_bench_rng_seed(&g.rng, params->seed);
    size_t names = (size_t)(w->pools + w->operations);
    w->elems = calloc((size_t)w->count, sizeof *w->elems);
    w->fs_pools = calloc((size_t)w->pools + 1, sizeof *w->fs_pools);
    w->names = calloc(names, NAME_MAX_LEN);
    g.pools = calloc((size_t)w->pools, sizeof *g.pools);
    g.ops = calloc((size_t)w->operations, sizeof *g.ops);
    g.cumulative = calloc((size_t)w->pools + 1, sizeof *g.cumulative);
    rc = w->elems && w->fs_pools && w->names && g.pools && g.ops && g.cumulative ? generate(&g) : PS_ENOMEM;
    free(g.pools);
    free(g.ops);
    free(g.cumulative);
    if (rc != 0) {
        ps_bench_fs_workload_release(w);
        return ps_error_set(err, rc, "out of memory building a tree of %d pools and %d operations",
                            params->pools, params->operations);
    }
    return 0;
}

void ps_bench_fs_workload_release(struct ps_bench_fs_workload *w)
{
    free(w->elems);
    free(w->fs_pools);
    free(w->names);
    memset(w, 0, sizeof *w);
}
