/* bench_workload.h — synthetic pool trees for `poolsched bench fair-share`.
 *
 * Builds, from a seed, one pool tree as the engine's element array (src/core/fair_share.h)
 * that looks like a production tree of a 10,000-node cluster (shared/spec/performance.md):
 * pools in three levels with a skewed fan-out, operations spread over the pools with a
 * heavy-tailed popularity (a quarter of the leaf pools idle), demands with a heavy tail of job
 * counts and five kinds of job shapes (gpu jobs in gpu pools), usages from saturated to
 * starving, strong guarantees on ~10% of the pools that fit their parents' guarantees, ~5% burst
 * and ~5% relaxed integral pools (never nested) with accumulated volumes from empty to full,
 * FIFO pools, gang operations, resource limits, max_share_ratio and tag-filter limits.
 *
 * The whole cluster is overloaded the way production clusters are: demand is ~1.5x the cpu,
 * usage ~95% of it; guarantees stay within the cluster (strong 55%, burst 15%, relaxed flow 5%
 * of the cpu at the root), so the update exercises the normal paths, not the overcommit ones.
 *
 * Pure and deterministic: integer PRNG (bench_rng.h), no libm, no I/O. Elements come in
 * breadth-first order (root, level 1, level 2, level 3, then operations).
 */
#ifndef PS_BENCH_BENCH_WORKLOAD_H
#define PS_BENCH_BENCH_WORKLOAD_H

#include <stdint.h>

#include "core/error.h"
#include "core/fair_share.h"
#include "core/resources.h"

#define PS_BENCH_FS_LEVELS 3

struct ps_bench_fs_params {
    uint64_t seed;
    int pools;        /* 3 .. 10,000,000 (three levels need three pools) */
    int operations;   /* 1 .. 100,000,000 */
    int nodes;        /* 10 .. 10,000,000: the cluster the total resources describe */
};

/* What the generator produced, for the benchmark's report. Ratios are of the cluster total. */
struct ps_bench_fs_summary {
    int pools_per_level[PS_BENCH_FS_LEVELS];
    int strong_guarantee_pools;
    int burst_pools;
    int relaxed_pools;
    int fifo_pools;
    int limited_pools;        /* resource_limits or max_share_ratio < 1 */
    int gpu_pools;            /* filter limits: the gpu nodes */
    int idle_pools;           /* no operation anywhere in the subtree */
    int saturated_pools;      /* host operations that run everything they demand */
    int gang_operations;
    int pending_operations;   /* nothing running yet */
    struct ps_share demand;   /* sum over operations */
    struct ps_share usage;
    double strong_guarantee_cpu;  /* root children's strong guarantees */
    double burst_guarantee_cpu;   /* all burst pools */
    double resource_flow_cpu;     /* all integral pools */
};

struct ps_bench_fs_workload {
    struct ps_fs_element *elems;  /* count elements: [0] root, [1..pools] pools, operations */
    int count;
    struct ps_fs_pool *fs_pools;  /* pools + 1 entries: element k <= pools names fs_pools[k] */
    int pools;
    int operations;
    int nodes;
    struct ps_resources total;    /* total resource limits of the tree */
    int64_t now_ms;               /* the instant the usages and volumes describe */
    struct ps_bench_fs_summary summary;
    char *names;                  /* storage of the elements' names */
};

/* Builds the workload of params into *w. Returns PS_EINVAL (naming the parameter) when a
 * size is out of range and PS_ENOMEM when memory runs out; *w is then empty and releasing it
 * is a no-op. The same params always give the same elements, bit for bit. */
int ps_bench_fs_workload_init(struct ps_bench_fs_workload *w, const struct ps_bench_fs_params *params,
                              struct ps_error *err);

void ps_bench_fs_workload_release(struct ps_bench_fs_workload *w);

#endif
