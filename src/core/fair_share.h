/* fair_share.h — one fair share update of one pool tree (vector HDRF, YTsaurus semantics).
 *
 * The caller describes the tree as an array of elements: element 0 is the root `<Root>`; every
 * other element names its parent by index, and a parent always comes before its children
 * (parent < index), so a forward pass is top-down and a backward pass bottom-up. The order of
 * siblings in the array is their order as children (it breaks ties).
 *
 * Inputs are the `in` part of each element plus struct ps_fs_input; the engine writes the `out`
 * part and updates the integral state (`in.integral_state`) in place, exactly as one
 * TFairShareUpdateExecutor::Run() of YTsaurus (shared/spec/semantics.md section 1).
 *
 * Pure: no I/O, no clock, no randomness; the same input gives bit-identical output.
 * Buffers live in a struct ps_fs_update reused across updates, so a steady-state update does
 * not allocate.
 */
#ifndef PS_CORE_FAIR_SHARE_H
#define PS_CORE_FAIR_SHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/resources.h"

enum ps_element_kind { PS_ELEM_ROOT = 0, PS_ELEM_POOL = 1, PS_ELEM_OPERATION = 2 };

enum ps_sched_mode { PS_MODE_FAIR_SHARE = 0, PS_MODE_FIFO = 1 };

enum ps_guarantee_type { PS_GUARANTEE_NONE = 0, PS_GUARANTEE_BURST = 1, PS_GUARANTEE_RELAXED = 2 };

/* fifo_sort_parameters values. weight: higher first; start_time: earlier first;
 * pending_job_count: fewer first. */
enum ps_fifo_param { PS_FIFO_WEIGHT = 0, PS_FIFO_START_TIME = 1, PS_FIFO_PENDING_JOB_COUNT = 2 };
#define PS_FIFO_PARAM_MAX 3

/* Per-element inputs. Fields that do not apply to an element's kind are ignored. */
struct ps_fs_element_input {
    enum ps_element_kind kind;
    int parent;                    /* index of the parent, -1 for the root */
    const char *name;              /* pool name or operation id; borrowed, must outlive the update */

    /* pools and operations */
    double weight;                 /* > 0; default 1 */
    bool weight_specified;         /* false: weight may be inferred (semantics.md 1.2) */
    double max_share_ratio;        /* [0, 1]; default 1 */
    struct ps_resources resource_limits;  /* specified limits; PS_RES_INFINITE where unset */
    struct ps_resources filter_limits;    /* resources of the nodes matching the element's
                                             scheduling_tag_filter; PS_RES_INFINITE when none */

    /* pools (and the root) */
    enum ps_sched_mode mode;
    enum ps_fifo_param fifo_sort[PS_FIFO_PARAM_MAX];
    int fifo_sort_count;           /* 0: the default [weight, start_time] */
    struct ps_resources_opt strong_guarantee;  /* strong_guarantee_resources */
    enum ps_guarantee_type guarantee_type;     /* integral_guarantees/guarantee_type */
    struct ps_resources_opt resource_flow;     /* integral_guarantees/resource_flow */
    struct ps_resources_opt burst_guarantee;   /* integral_guarantees/burst_guarantee_resources */
    double relaxed_share_multiplier_limit;     /* 0: the tree's value; else in [1, 10] */
    bool can_accept_free_volume;               /* integral_guarantees/can_accept_free_volume;
                                                  default true */
    signed char should_distribute_free_volume_among_children; /* -1 (default): the tree's
                                                  value; 0 or 1 as configured */
    /* in/out: integral state carried from update to update */
    struct ps_volume accumulated_volume;       /* resource x seconds */
    double last_integral_share_ratio;

    /* operations */
    struct ps_resources demand;
    struct ps_resources usage;
    int64_t start_time_ms;
    int64_t pending_job_count;
    bool is_gang;
};

struct ps_detailed_fair_share {
    struct ps_share strong_guarantee;
    struct ps_share integral_guarantee;
    struct ps_share weight_proportional;
    struct ps_share total;
};

/* Per-element results of an update. */
struct ps_fs_element_output {
    struct ps_detailed_fair_share fair_share;
    struct ps_share usage_share;
    struct ps_share demand_share;
    struct ps_share limits_share;
    struct ps_share strong_guarantee_share;    /* after adjustment to limits and parent */
    struct ps_share proposed_integral_share;
    struct ps_resources resource_limits;       /* effective limits, capped by the total */
    struct ps_resources inferred_strong_guarantee;
    int dominant_resource;                     /* enum ps_resource */
    double weight;                             /* effective weight */
    int fifo_index;                            /* position among FIFO siblings, -1 otherwise */

    /* integral guarantees (zero for non-integral pools) */
    double specified_burst_ratio;
    double specified_resource_flow_ratio;
    double total_burst_ratio;
    double total_resource_flow_ratio;
    double accumulated_resource_ratio_volume;  /* share x seconds */
    struct ps_volume accumulated_resource_volume;
    struct ps_volume integral_pool_capacity;
    double estimated_burst_usage_duration_seconds;
};

struct ps_fs_element {
    struct ps_fs_element_input in;
    struct ps_fs_element_output out;
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

/* Runs one update over elems[0..count). Validates the structure (root first, parents before
 * children, kinds, ranges of weights and ratios) and returns PS_EINVAL with a message naming the
 * element and the key when it is wrong, leaving the outputs unspecified. Problems YTsaurus only
 * alerts on (guarantees overcommitted) are not errors: they are listed as alerts. */
int ps_fs_update_run(struct ps_fs_update *update, struct ps_fs_element *elems, int count,
                     const struct ps_fs_options *options, const struct ps_fs_input *input,
                     struct ps_error *err);

/* Alerts of the last run; strings owned by the update, valid until the next run or free. */
int ps_fs_update_alert_count(const struct ps_fs_update *update);
const char *ps_fs_update_alert(const struct ps_fs_update *update, int index);

/* Sets an element's input to the YTsaurus defaults for its kind (weight 1, max_share_ratio 1,
 * unlimited limits, fair_share mode, no guarantees) with the given parent and name. */
void ps_fs_element_input_init(struct ps_fs_element_input *in, enum ps_element_kind kind,
                              int parent, const char *name);

#endif
