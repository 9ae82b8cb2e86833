/* alibaba.h — the Alibaba GPU cluster trace (clusterdata cluster-trace-gpu-v2023, the "openb"
 * CSV files, a copy in examples/alibaba/data) turned into a poolsched scenario.
 *
 * Two steps, both pure (the caller reads the files):
 *   1. ps_alibaba_read_nodes / ps_alibaba_read_pods check the CSV text strictly: a malformed
 *      file (missing column, wrong field count, a non-number where a number belongs, an empty
 *      required field, an unknown qos, an invalid gpu_spec, a repeated name) is an error naming
 *      the file and line. gpu_spec must be a valid scheduling_tag_filter (core/formula.h, at
 *      most 100 tokens as YTsaurus allows). Empty scheduled_time and deletion_time are allowed:
 *      they are quirks of the real trace, not malformations.
 *   2. ps_alibaba_to_scenario applies the documented rules (docs/alibaba-trace.md) to the
 *      quirks, deterministically, counts how often each rule fired, and builds the scenario
 *      document (docs/scenario.md).
 */
#ifndef PS_IO_ALIBABA_H
#define PS_IO_ALIBABA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "core/formula.h"

#define PS_ALIBABA_NO_TIME (-1)          /* an empty time field */
#define PS_ALIBABA_TREE "physical"
#define PS_ALIBABA_USER "alibaba"
#define PS_ALIBABA_CPU_ONLY_TAG "cpu_only"          /* nodes with an empty model and no GPU */
#define PS_ALIBABA_UNKNOWN_GPU_TAG "unknown_gpu"    /* nodes with an empty model but GPUs */
#define PS_ALIBABA_NODE_USER_SLOTS 110   /* Kubernetes' default maxPods per node */
#define PS_ALIBABA_TASK_NAME "pod"
#define PS_ALIBABA_MAX_MODEL 64          /* characters of a GPU model name (a node tag) */

/* One row of openb_node_list_all_node.csv. */
struct ps_alibaba_node {
    char *sn;
    int64_t cpu_milli;
    int64_t memory_mib;
    int64_t gpu;
    char *model;          /* "" when empty */
    long line;
};

/* One row of openb_pod_list_*.csv. Times are seconds from the trace's origin. */
struct ps_alibaba_pod {
    char *name;
    int64_t cpu_milli;
    int64_t memory_mib;
    int64_t num_gpu;
    int64_t gpu_milli;    /* 0..1000: the share of each GPU */
    char *gpu_spec;       /* "" when empty; else a tag formula, in the trace GPU models joined
                             by '|' (V100M16|V100M32) */
    struct ps_formula *filter;   /* gpu_spec parsed (owned); NULL when gpu_spec is empty */
    char *qos;            /* LS, Guaranteed, Burstable or BE */
    int64_t creation_time;
    int64_t deletion_time;    /* PS_ALIBABA_NO_TIME when empty */
    int64_t scheduled_time;   /* PS_ALIBABA_NO_TIME when empty */
    long line;
};

struct ps_alibaba_trace {
    struct ps_alibaba_node *nodes;
    size_t node_count;
    struct ps_alibaba_pod *pods;
    size_t pod_count;
};

/* Reads the node list (columns sn,cpu_milli,memory_mib,gpu,model; others ignored) into
 * trace->nodes, replacing what was there. source names the file in messages. Errors: PS_EINVAL
 * `<source>:<line>: <column>: <why>, got "<value>"`, PS_ENOMEM. On error trace->nodes is left
 * empty. */
int ps_alibaba_read_nodes(struct ps_alibaba_trace *trace, const char *text, size_t len,
                          const char *source, struct ps_error *err);

/* Reads a pod list (columns name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
 * pod_phase,creation_time,deletion_time,scheduled_time; others ignored) into trace->pods,
 * replacing what was there. Errors as ps_alibaba_read_nodes. */
int ps_alibaba_read_pods(struct ps_alibaba_trace *trace, const char *text, size_t len,
                         const char *source, struct ps_error *err);

/* Frees what trace owns and empties it (trace itself is the caller's). */
void ps_alibaba_trace_release(struct ps_alibaba_trace *trace);

/* The rules for the trace's quirks, in the order they apply to a pod (docs/alibaba-trace.md). */
enum ps_alibaba_rule {
    PS_ALIBABA_BEFORE_START_OFFSET,     /* created before --start-offset: not selected */
    PS_ALIBABA_BEYOND_LIMIT,            /* after the first --limit pods: not selected */
    PS_ALIBABA_FRACTIONAL_GPU,          /* gpu_milli < 1000: whole GPUs, rounded up */
    PS_ALIBABA_NO_NODE_FITS,            /* bigger than every node: skipped */
    PS_ALIBABA_NO_MATCHING_NODE_FITS,   /* bigger than every node its gpu_spec allows: skipped */
    PS_ALIBABA_NEVER_SCHEDULED,         /* empty scheduled_time: submitted, median run time */
    PS_ALIBABA_SCHEDULED_BEFORE_CREATION,/* scheduled < creation: submitted at creation anyway */
    PS_ALIBABA_STILL_RUNNING,           /* empty or 0 deletion_time: runs until the trace end */
    PS_ALIBABA_DELETED_BEFORE_SCHEDULED,/* deletion < scheduled: submitted, median run time */
    PS_ALIBABA_ZERO_LENGTH_RUN,         /* deletion == scheduled: runs 1 s */
    PS_ALIBABA_SCALED_TO_ZERO,          /* --time-scale made the run time < 1 ms: 1 ms */
    PS_ALIBABA_GPU_SPEC_FILTER,         /* gpu_spec: the operation's scheduling_tag_filter */
    PS_ALIBABA_CPU_ONLY_NODE,           /* node with empty model and no GPU: tag cpu_only */
    PS_ALIBABA_UNKNOWN_GPU_NODE,        /* node with empty model and GPUs: tag unknown_gpu */
    PS_ALIBABA_RULE_COUNT
};

/* A short snake_case name of the rule ("never_scheduled"), and one line saying what it does. */
const char *ps_alibaba_rule_name(int rule);
const char *ps_alibaba_rule_action(int rule);

struct ps_alibaba_options {
    int64_t limit;           /* > 0: only the first `limit` pods by creation time; 0: all */
    int64_t start_offset_s;  /* >= 0: only pods created at least this long after the first */
    double time_scale;       /* > 0: every start time and run time is multiplied by it */
    double compress;         /* >= 1: start times (after time_scale) are divided by it, run
                                times are kept: the same pods arrive closer together */
};

struct ps_alibaba_stats {
    int64_t rule[PS_ALIBABA_RULE_COUNT];   /* pods (or nodes) each rule applied to */
    int64_t pods_read;
    int64_t pods_selected;   /* after --start-offset and --limit */
    int64_t operations;      /* selected minus skipped */
    int64_t nodes;
    int64_t node_groups;
    int64_t median_run_s;    /* the run time given to pods that never ran */
    int64_t trace_end_s;     /* the latest time in the pod list */
};

/* Builds the scenario document from a trace with nodes (pods may be empty). *out receives a
 * new reference. Errors: PS_EINVAL for bad options or a trace without nodes, PS_ENOMEM.
 * Deterministic: the same trace and options give an equal document. */
int ps_alibaba_to_scenario(const struct ps_alibaba_trace *trace,
                           const struct ps_alibaba_options *options, json_t **out,
                           struct ps_alibaba_stats *stats, struct ps_error *err);

#endif
