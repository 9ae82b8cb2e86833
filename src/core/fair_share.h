/* fair_share.h — one fair share update of one pool tree (vector HDRF, YTsaurus semantics).
 *
 * The caller describes the tree as an array of elements: element 0 is the root `<Root>`; every
 * other element names its parent by index, and a parent always comes before its children
 * (parent < index), so a forward pass is top-down and a backward pass bottom-up. The order of
 * siblings in the array is their order as children (it breaks ties).
 *
 * What only pools and the root have (mode, guarantees, integral settings and state, and their
 * results) lives in a separate, caller-owned array of struct ps_fs_pool that each pool and the
 * root name by index (in.pool), so operations, most of the tree, carry none of it.
 *
 * Inputs are the `in` part of each element and pool plus struct ps_fs_input; the engine writes
 * the `out` parts and updates the integral state of integral pools (the pool's
 * `in.accumulated_volume` and `in.last_integral_share_ratio`) in place, exactly as one
 * TFairShareUpdateExecutor::Run() of YTsaurus (shared/spec/semantics.md section 1; the code of
 * fair_share_update.cpp wins over prose). Feed the same arrays to the next update to carry the
 * state.
 *
 * Reproduces upstream bit for bit: fit factors by bisection over IEEE bit patterns,
 * piecewise-linear functions with upstream's interpolation, builder merges and left
 * continuity, cpu in fixed point (hundredths, also in volumes), and shares as upstream's
 * FromJobResources with its current defaults: 0/0 -> 0 and x/0 -> 0 (total 0 means the
 * resource does not count).
 *
 * Not modelled (no inputs for them): priority strong guarantee tiers and donors (one tier),
 * promised guarantee fair share, FIFO reordering for guarantee utilisation, historic usage
 * weights, best allocation share (taken as 1).
 *
 * Pure: no I/O, no clock, no randomness; the same input gives bit-identical output.
 * Buffers live in a struct ps_fs_update reused across updates, so a steady-state update does
 * not allocate once the workspace has grown to the tree.
 */
#ifndef PS_CORE_FAIR_SHARE_H
#define PS_CORE_FAIR_SHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/resources.h"

/* Upstream's schedulable weight range [MinSchedulableWeight, MaxSchedulableWeight] =
 * [sqrt(DBL_EPSILON), 1/sqrt(DBL_EPSILON)] = [2^-26, 2^26] (exact): ratios of weights keep
 * their precision inside it. Every table that takes a weight (core/attr_common.h), the fair
 * share update's clamp and the CLI's help use these. */
#define PS_WEIGHT_MIN 1.4901161193847656e-08
#define PS_WEIGHT_MAX 67108864

enum ps_element_kind { PS_ELEM_ROOT = 0, PS_ELEM_POOL = 1, PS_ELEM_OPERATION = 2 };

enum ps_sched_mode { PS_MODE_FAIR_SHARE = 0, PS_MODE_FIFO = 1 };

enum ps_guarantee_type { PS_GUARANTEE_NONE = 0, PS_GUARANTEE_BURST = 1, PS_GUARANTEE_RELAXED = 2 };

/* fifo_sort_parameters values. weight: higher first; start_time: earlier first;
 * pending_job_count: fewer first. */
enum ps_fifo_param { PS_FIFO_WEIGHT = 0, PS_FIFO_START_TIME = 1, PS_FIFO_PENDING_JOB_COUNT = 2 };
#define PS_FIFO_PARAM_MAX 3

/* Per-element inputs: what pools, operations and the root have in common, and what only
 * operations have. What only pools and the root have is in their entry of the pools array
 * (struct ps_fs_pool), named by `pool`; operations carry none of it. */
struct ps_fs_element_input {
    enum ps_element_kind kind;
    int parent;                    /* index of the parent, -1 for the root */
    const char *name;              /* pool name or operation id; borrowed, must outlive the update */

    /* pools and operations */
    double weight;                 /* > 0; default 1 */
    bool weight_specified;         /* false: weight may be inferred (semantics.md 1.2) */
    bool is_gang;                  /* operations */
    int pool;                      /* root and pools: index of their entry in the pools array
                                      given to ps_fs_update_run, each its own; operations: -1 */
    double max_share_ratio;        /* [0, 1]; default 1 */
    struct ps_resources resource_limits;  /* specified limits; PS_RES_INFINITE where unset */
    struct ps_resources filter_limits;    /* resources of the nodes matching the element's
                                             scheduling_tag_filter; PS_RES_INFINITE when none */

    /* operations */
    struct ps_resources demand;
    struct ps_resources usage;
    int64_t start_time_ms;
    int64_t pending_job_count;
    /* The spec's strong_guarantee_resources. As upstream's current vector HDRF, an operation
     * gets no strong guarantee from it (its share stays zero: no guarantee tier); it only
     * takes part, as a child like any other, in its parent's inference of unspecified
     * resources (fs_guarantees.c), so it can lower its sibling pools' inferred guarantees. */
    struct ps_resources_opt strong_guarantee;
};

/* Inputs only pools and the root have (the root: mode and fifo_sort; its guarantees and
 * integral settings are ignored). */
struct ps_fs_pool_input {
    enum ps_sched_mode mode;
    enum ps_fifo_param fifo_sort[PS_FIFO_PARAM_MAX];
    int fifo_sort_count;           /* 0: the default [weight, start_time] */
    enum ps_guarantee_type guarantee_type;     /* integral_guarantees/guarantee_type */
    struct ps_resources_opt strong_guarantee;  /* strong_guarantee_resources */
    struct ps_resources_opt resource_flow;     /* integral_guarantees/resource_flow */
    struct ps_resources_opt burst_guarantee;   /* integral_guarantees/burst_guarantee_resources */
    double relaxed_share_multiplier_limit;     /* 0: the tree's value; else in [1, 10] */
    bool can_accept_free_volume;               /* integral_guarantees/can_accept_free_volume;
                                                  default true */
    signed char should_distribute_free_volume_among_children; /* -1 (default): the tree's
                                                  value; 0 or 1 as configured */
    signed char enable_fair_share_truncation_in_fifo_pool;    /* -1 (default): the tree's */
    /* Read by the scheduling snapshot (schedule.h), not by the update; 0 (also of a zeroed
     * entry) means unset: */
    signed char use_pool_satisfaction_for_scheduling;         /* 0: the parent's; 1 off, 2 on */
    signed char fifo_order;                                   /* 0: the tree's
                                                  fifo_pool_scheduling_order; 1 satisfaction,
                                                  2 fifo */
    /* in/out: integral state carried from update to update */
    struct ps_volume accumulated_volume;       /* resource x seconds */
    double last_integral_share_ratio;
};

struct ps_detailed_fair_share {
    struct ps_share strong_guarantee;
    struct ps_share integral_guarantee;
    struct ps_share weight_proportional;
    struct ps_share total;
};

/* Per-element results of an update. Shares are of the cluster total. */
struct ps_fs_element_output {
    /* total = strong_guarantee + integral_guarantee + weight_proportional; the root's total is
     * the sum of its children's. */
    struct ps_detailed_fair_share fair_share;
    struct ps_share usage_share;
    struct ps_share demand_share;
    struct ps_share limits_share;
    struct ps_resources resource_limits;       /* effective limits, capped by the total */
    double weight;                             /* effective weight */
    int dominant_resource;                     /* enum ps_resource */
    int fifo_index;                            /* position among FIFO siblings, -1 otherwise */
};

/* Results only pools and the root have. */
struct ps_fs_pool_output {
    struct ps_share strong_guarantee_share;    /* after adjustment to limits and parent */
    struct ps_share proposed_integral_share;
    struct ps_resources inferred_strong_guarantee;

    /* integral guarantees, as the scheduler's orchid shows them (zero for pools without an
     * integral guarantee type, except the totals, which every pool and the root have) */
    double specified_burst_ratio;              /* burst_guarantee_resources as a share (max over
                                                  resources), before any overcommit scaling */
    double specified_resource_flow_ratio;      /* resource_flow as a share */
    double total_burst_ratio;                  /* own + all descendants' */
    double total_resource_flow_ratio;          /* own + all descendants' */
    double accumulated_resource_ratio_volume;  /* share x seconds: min over resources with a
                                                  total of volume / total */
    struct ps_volume accumulated_resource_volume;  /* after this update */
    struct ps_volume integral_pool_capacity;   /* total x flow ratio x saturation period */
    double estimated_burst_usage_duration_seconds; /* ratio volume / (burst - flow ratio) when
                                                  burst > flow + 1e-4, else 0 */
};

struct ps_fs_element {
    struct ps_fs_element_input in;
    struct ps_fs_element_output out;
};

/* The entry of a pool or the root in the caller's pools array (element.in.pool). The caller
 * owns the array; its order is free (entries no element names are left alone). */
struct ps_fs_pool {
    struct ps_fs_pool_input in;
    struct ps_fs_pool_output out;
};

/* Tree-wide options; ps_fs_options_init gives YTsaurus's defaults. */
struct ps_fs_options {
    int main_resource;                                  /* PS_RES_CPU */
    int64_t integral_pool_capacity_saturation_period_ms;/* 86400000 (1 day) */
    int64_t integral_smooth_period_ms;                  /* 60000 (1 min) */
    double relaxed_share_multiplier_limit;              /* 3 */
    bool enable_step_function_for_gang_operations;      /* true */
    bool enable_improved_fair_share_by_fit_factor_computation; /* false */
    double infer_weight_from_guarantees_share_multiplier;      /* 0: unset; else >= 1 */
    bool should_distribute_free_volume_among_children;         /* false */
    /* In a FIFO pool with truncation (the pool's enable_fair_share_truncation_in_fifo_pool, else
     * this), a gang operation whose fair share does not cover its demand gets fair share 0, and
     * every ancestor's fair share loses what its subtree lost (upstream's
     * TruncateFairShareInFifoPools: a gang operation either runs whole or frees its share). */
    bool enable_fair_share_truncation_in_fifo_pool;            /* false */
};

void ps_fs_options_init(struct ps_fs_options *options);

struct ps_fs_input {
    struct ps_resources total;         /* total resource limits of the tree */
    int64_t now_ms;
    int64_t previous_update_time_ms;
    bool has_previous_update;          /* false: no integral volume is refilled or consumed */
};

/* Reusable workspace of updates. */
struct ps_fs_update;

struct ps_fs_update *ps_fs_update_new(void);
void ps_fs_update_free(struct ps_fs_update *update);   /* NULL is a no-op */
/* Whether runs remember elements' fair share functions for the next run and take those whose
 * inputs kept their bits from it (off by default): for a caller whose tree changes little from
 * one run to the next, as the scheduling loop's. The outputs are the same bits either way; the
 * memory grows by the functions of one run (ps_fs_update_memory's memo). */
void ps_fs_update_set_memo(struct ps_fs_update *update, bool on);

/* Runs one update over elems[0..count), the root and every pool naming its own entry of
 * pools[0..pool_count) (so pool_count >= the number of pools and the root; entries no element
 * names are left alone). Validates the structure (root first, parents before children, kinds,
 * pool indexes, ranges of weights and ratios) and returns PS_EINVAL with a message naming the
 * element and the key when it is wrong, leaving the outputs unspecified. Problems YTsaurus only
 * alerts on (guarantees overcommitted) are not errors: they are listed as alerts.
 * An operation's demand below its usage is raised to the usage (upstream's demand covers the
 * usage by construction). Weights are kept within [sqrt(DBL_EPSILON), 1/sqrt(DBL_EPSILON)].
 * Returns PS_ENOMEM when memory runs out. */
int ps_fs_update_run(struct ps_fs_update *update, struct ps_fs_element *elems, int count,
                     struct ps_fs_pool *pools, int pool_count, const struct ps_fs_options *options,
                     const struct ps_fs_input *input, struct ps_error *err);

/* Heap bytes a workspace holds, by purpose (capacities, not just what the last run used). */
struct ps_fs_update_memory {
    int64_t elements;     /* per-element engine state (struct fs_elem) */
    int64_t pools;        /* the side table of pools and the root (integral and pool-only state) */
    int64_t indexes;      /* children lists, orders, stacks, per-pool scratch arrays */
    int64_t functions;    /* the arena of fair share functions kept through a run */
    int64_t scratch;      /* the arena of one element's temporaries */
    int64_t builders;     /* function builders and the function library's scratch buffers */
    int64_t memo;         /* functions remembered between runs (ps_fs_update_set_memo) */
    int64_t total;
};

void ps_fs_update_memory(const struct ps_fs_update *update, struct ps_fs_update_memory *out);

/* Alerts of the last run; strings owned by the update, valid until the next run or free. */
int ps_fs_update_alert_count(const struct ps_fs_update *update);
const char *ps_fs_update_alert(const struct ps_fs_update *update, int index);

/* Sets an element's input to the YTsaurus defaults (weight 1, max_share_ratio 1, unlimited
 * limits) with the given parent and name, and pool -1: a pool or the root then names its entry. */
void ps_fs_element_input_init(struct ps_fs_element_input *in, enum ps_element_kind kind,
                              int parent, const char *name);

/* Sets a pool's input to the YTsaurus defaults (fair_share mode, no guarantees, can accept free
 * volume, the tree's free volume distribution, no accumulated volume). */
void ps_fs_pool_input_init(struct ps_fs_pool_input *in);

#endif
