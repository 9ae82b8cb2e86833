/* scenario.h — the scenario file of `poolsched simulate` (shared/spec/formats.md section 3).
 *
 * ps_scenario_parse turns the JSON text into plain structs: numbers checked and converted to
 * poolsched units (cpu in hundredths of a core, memory in bytes, times in ms), names extracted,
 * defaults applied. Three parts stay JSON on purpose, because their meaning belongs to the pool
 * tree module and its table-driven attribute setters, not to this parser:
 *   - a pool tree's attributes (nodes_filter, fair_share_starvation_timeout, ...),
 *   - a pool's attributes (weight, strong_guarantee_resources, mode, ...),
 *   - an operation's spec (weight, resource_limits, job_cpu_monitor, ...).
 * They are checked for shape only (objects; pool name, parent and the spec's pool/pool_trees
 * are extracted and checked) and kept as json_t with a reference owned by the scenario; unknown
 * keys inside them are the pool tree module's business. Everywhere else an unknown key is an
 * error, so that a typo never passes silently:
 * `operations[0].tasks[0]: unknown key "job_cont" (did you mean "job_count"?)`.
 *
 * Extensions to formats.md section 3 accepted here (all optional; docs/scenario.md):
 *   - `duration` may be omitted: the simulation then runs until every operation has finished.
 *   - operations[].user defaults to "root".
 *   - tasks[].memory_limit defaults to the task's memory request, or to YTsaurus's default
 *     512 MiB when the task requests no memory; given, it must be positive.
 *   - tasks[].tmpfs_size: bytes of tmpfs the job mounts (YTsaurus user job spec `tmpfs_size`),
 *     default 0, at most memory_limit; it raises the memory digest's lower bound
 *     (shared/spec/semantics.md 5.2).
 *   - tasks[].interruptible: whether a preempted job is interrupted (and aborted only when the
 *     preemption timeout passes) or aborted at once; default false.
 *   - tasks[].max_memory_spread: per-job variation of the actual peak around max_memory
 *     (ps_scenario_job_max_memory); the top-level `seed` (default 0) seeds it.
 *   - events: a list of timed changes (set_node_resources, set_node_tags, set_pool_attribute,
 *     set_tree_attribute, update_operation), checked against the node groups, trees, pools and
 *     operations.
 *
 * Errors: PS_EINVAL with one message naming the JSON path, the value and the reason, e.g.
 * `operations[3].tasks[0].job_count: must be a positive integer, got -1`; PS_ENOMEM. On error
 * nothing is returned (*out is NULL) and nothing leaks.
 */
#ifndef PS_IO_SCENARIO_H
#define PS_IO_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "core/resources.h"

#define PS_SCENARIO_DEFAULT_HEARTBEAT_PERIOD_MS 5000
#define PS_SCENARIO_DEFAULT_FAIR_SHARE_UPDATE_PERIOD_MS 1000
#define PS_SCENARIO_DEFAULT_USER "root"
/* YTsaurus's default user job memory_limit (512 MiB), used when a task requests no memory. */
#define PS_SCENARIO_DEFAULT_MEMORY_LIMIT ((int64_t)512 * 1024 * 1024)
#define PS_SCENARIO_ROOT_POOL "<Root>"
/* Upper bounds that keep the simulator's arithmetic far from overflow. Resources and byte counts
 * follow io/jsonval.h (at most 1e18 stored units; cpu at most 1e16 cores), and the cluster's
 * total of each finite resource too. */
#define PS_SCENARIO_MAX_TIME_MS ((int64_t)1 << 53)   /* times and durations */
#define PS_SCENARIO_PATH_MAX 256                     /* JSON paths in messages are cut here */
#define PS_SCENARIO_MAX_NODES 1000000               /* total over all node groups */
#define PS_SCENARIO_MAX_JOB_COUNT 2147483647        /* per task, YTsaurus's int job counts */
/* tasks[].max_memory_spread is at most 1 (sigma of the log: the 95th percentile job peaks at
 * 5.2 x the median, the 5th at 0.19 x). */
#define PS_SCENARIO_MAX_MEMORY_SPREAD 1.0

struct ps_scenario_node_group {
    char *name;                           /* given, or "group<i>" for the i-th group */
    int64_t count;                        /* >= 0 nodes, named "<name>-<index>" from 0 */
    struct ps_resources resource_limits;  /* a limits map: PS_RES_INFINITE where omitted */
    char **tags;                          /* tag_count strings, as listed (may repeat) */
    size_t tag_count;
    /* Upstream's exec_node/job_proxy/always_abort_on_memory_reserve_overdraft (false): a job
     * above its user job memory reserve is aborted (resource_overdraft) even when the node has
     * the free memory. */
    bool always_abort_on_memory_reserve_overdraft;
    /* disk_space_per_medium: each node's slot locations, medium name -> bytes (>= 0) */
    char **media;
    int64_t *medium_disk_space;
    size_t medium_count;
    /* Upstream's exec_node/job_controller cpu_overdraft_timeout (10 min) and
     * resource_adjustment_period (5 s): core/node_overdraft.h. */
    int64_t cpu_overdraft_timeout_ms;
    int64_t resource_adjustment_period_ms;
    /* fail_jobs_after (extension): a broken node, where every job fails this long after its
     * start unless it ends first (what ban_nodes_with_failed_jobs is for); -1: jobs do not
     * fail there. */
    int64_t fail_jobs_after_ms;
    /* job_duration_factor (extension, 1): slower (> 1) or faster hardware, where a job takes
     * its task's duration times this (what tentative pool trees' eligibility measures). */
    double job_duration_factor;
    /* heartbeat_phase (extension): the group's nodes heartbeat at this offset into each
     * heartbeat period (0 .. heartbeat_period - 1 ms), e.g. nodes that beat together as a
     * real cluster's may; -1: the default, phases spread over the period by node index. */
    int64_t heartbeat_phase_ms;
    /* send_heartbeat_on_job_finished (upstream's exec node setting, true there; false here,
     * the simulator's nodes beating only periodically unless asked): a node heartbeats as
     * soon as a job of its ends, and its next heartbeat comes a period after that one. */
    bool send_heartbeat_on_job_finished;
};

struct ps_scenario_pool {
    char *name;           /* unique within its tree, never "<Root>" */
    char *parent;         /* "<Root>" or another pool of the same tree; parents form no cycle */
    json_t *attributes;   /* the pool object without "name" and "parent"; owned (one reference) */
};

struct ps_scenario_tree {
    char *name;
    json_t *attributes;              /* the tree object without "pools"; owned (one reference) */
    struct ps_scenario_pool *pools;  /* in the order listed (the order of siblings) */
    size_t pool_count;
};

/* One step of a piecewise-constant CPU use: from offset_ms after the job's start, until the
 * next step, the job uses cpu hundredths of a core. */
struct ps_scenario_cpu_step {
    int64_t offset_ms;
    int64_t cpu;          /* hundredths of a core, >= 0 */
};

struct ps_scenario_task {
    char *name;                       /* unique within its operation */
    int64_t job_count;                /* > 0 */
    int64_t duration_ms;              /* > 0: the run time of each job beyond job_durations */
    int64_t *job_durations_ms;        /* job_durations (extension): job i (in first-start
                                         order) runs job_durations_ms[i] ms, each > 0; NULL
                                         when omitted */
    size_t job_duration_count;        /* 1..job_count; 0: every job runs duration_ms */
    struct ps_resources resources;    /* per job; omitted keys are 0 */
    int64_t memory_limit_bytes;       /* user job memory limit, > 0; default resources memory,
                                         or PS_SCENARIO_DEFAULT_MEMORY_LIMIT when that is 0 */
    int64_t tmpfs_size_bytes;         /* 0..memory_limit_bytes; default 0 */
    struct ps_scenario_cpu_step *cpu_usage;  /* ascending offsets from 0; NULL when omitted */
    size_t cpu_usage_count;                  /* 0: the job uses its full cpu request */
    int64_t max_memory_bytes;         /* actual peak memory; default resources memory */
    double max_memory_spread;         /* 0..PS_SCENARIO_MAX_MEMORY_SPREAD, default 0: every job
                                         peaks at max_memory; > 0: job i, attempt a peaks at
                                         ps_scenario_job_max_memory() (lognormal, median
                                         max_memory, sigma = spread) */
    bool interruptible;               /* a preempted job is interrupted first (default false:
                                         aborted at once, docs/scenario.md) */
    int64_t job_proxy_memory_bytes;   /* the job proxy's memory estimate, >= 0; default 0 */
    int64_t job_proxy_max_memory_bytes;   /* the job proxy's actual peak (footprint included);
                                             -1 when omitted: estimate + footprint */
    /* disk_request {disk_space, medium_name}: disk_space > 0 bytes on medium disk_medium
     * ("default" when medium_name is omitted); disk_medium NULL without a disk_request */
    char *disk_medium;
    int64_t disk_space;
};

struct ps_scenario_operation {
    char *id;                  /* unique */
    int64_t start_time_ms;     /* >= 0 */
    char *user;                /* default "root" */
    json_t *spec;              /* the whole spec object, {} when omitted; owned (one reference) */
    char *pool;                /* spec.pool, or NULL (the simulator picks the default) */
    char **pool_trees;         /* spec.pool_trees: existing trees, no repeats; NULL when omitted */
    size_t pool_tree_count;    /* 0: the default tree */
    struct ps_scenario_task *tasks;  /* at least one */
    size_t task_count;
};

/* Top-level `events` (docs/scenario.md): changes applied at a time during the simulation. */
enum ps_scenario_event_type {
    PS_SCENARIO_EV_SET_NODE_RESOURCES = 1,   /* node or group; resource_limits */
    PS_SCENARIO_EV_SET_POOL_ATTRIBUTE = 2,   /* tree, pool, key, value */
    PS_SCENARIO_EV_UPDATE_OPERATION = 3,     /* operation, parameters */
    PS_SCENARIO_EV_SET_NODE_TAGS = 4,        /* node or group; tags */
    PS_SCENARIO_EV_SET_TREE_ATTRIBUTE = 5,   /* tree, key, value */
};

struct ps_scenario_event {
    int64_t time_ms;                  /* >= 0 */
    enum ps_scenario_event_type type;
    int64_t group;                    /* set_node_resources, set_node_tags: node group index */
    int64_t node;                     /* its node index within the group, -1: every node */
    struct ps_resources resource_limits;   /* given keys; the others keep their value */
    unsigned resource_set;            /* bit r: resource r given */
    char **tags;                      /* set_node_tags: the node's new tags (owned) */
    size_t tag_count;
    const char *tree;                 /* set_pool_attribute, set_tree_attribute: in trees[] */
    char *pool;                       /* an explicit pool of tree */
    char *key;                        /* attribute name */
    json_t *value;                    /* owned; JSON null: back to the default */
    int64_t operation;                /* update_operation: index into operations */
    json_t *parameters;               /* owned object */
};

struct ps_scenario {
    uint64_t seed;                        /* >= 0, default 0: the per-job draws (max_memory_spread) */
    int64_t heartbeat_period_ms;          /* > 0, default 5000 */
    int64_t fair_share_update_period_ms;  /* > 0, default 1000 */
    int64_t duration_ms;                  /* > 0, or 0 when omitted: until all operations end */
    /* the scheduler's keys of the exec-node check (core/exec_nodes.h), upstream's defaults */
    int64_t available_exec_nodes_check_period_ms;   /* >= 10, default 5000 */
    int64_t safe_scheduler_online_time_ms;          /* >= 0, default 600000 */
    int64_t resource_demand_sanity_check_period_ms; /* >= 10, default 15000 */
    struct ps_scenario_node_group *node_groups;  /* in the order listed */
    size_t node_group_count;
    int64_t node_count;                   /* sum of the groups' counts */
    struct ps_scenario_tree *trees;       /* sorted by name (strcmp), at least one */
    size_t tree_count;
    const char *default_tree;             /* points into trees[]; given, or the only tree */
    struct ps_scenario_operation *operations;  /* in the order listed */
    size_t operation_count;
    struct ps_scenario_event *events;    /* in the order listed; NULL when omitted */
    size_t event_count;
    /* The controller's memory reserve knobs (core/memory_reserve.h,
     * ps_memory_controller_config_table), as given; NULL when omitted. Owned (one reference);
     * the simulator applies and validates them at setup. */
    json_t *controller_agent;
};

/* Parses len bytes of JSON text (need not be NUL-terminated). On success returns 0 and *out
 * owns a new scenario (free with ps_scenario_free). On error returns PS_EINVAL or PS_ENOMEM,
 * sets *out to NULL and err to a message naming the JSON path, e.g.
 * `node_groups[1].resource_limits.cpu: must be a number of cores from 0 to 1e16, got "ten"` (the
 * messages of io/jsonval.h, shared with the snapshot parser); a JSON syntax
 * error names the line and column. Duplicate keys in an object are an error. */
int ps_scenario_parse(const char *text, size_t len, struct ps_scenario **out, struct ps_error *err);

void ps_scenario_free(struct ps_scenario *scenario);   /* NULL is a no-op */

/* The tree named name, or NULL; valid while the scenario lives. */
const struct ps_scenario_tree *ps_scenario_find_tree(const struct ps_scenario *scenario,
                                                     const char *name);

/* Writes the id of node `index` of group (`<name>-<index>`) into buf of size bytes,
 * NUL-terminated; returns the length it needs without the NUL (as snprintf), so a return
 * value >= size means buf was too small. index must be in [0, group->count). */
int ps_scenario_node_id(const struct ps_scenario_node_group *group, int64_t index, char *buf,
                        size_t size);

/* The actual peak memory (bytes) of attempt `attempt` of job `index` of task `task` of the
 * operation with id `operation_id`: task->max_memory_bytes when its spread is 0, else
 * max_memory x exp(spread x z) rounded to the nearest byte (capped at PS_JV_RESOURCE_MAX),
 * with z a standard normal deviate (Box-Muller) from two splitmix64 draws seeded by a hash of
 * (seed, operation id, task name, index, attempt). Pure: no global state, independent of the
 * order in which jobs start; the same inputs give the same bytes on every run. */
int64_t ps_scenario_job_max_memory(uint64_t seed, const char *operation_id,
                                   const struct ps_scenario_task *task, int64_t index, int attempt);

/* Formats a scenario document as JSON text the way poolsched writes scenarios: the top-level
 * keys in the document's order, one per line; a top-level list of objects (node_groups,
 * operations) with one element per line, on one line each (`{"id": "op0", ...}`); any other
 * value indented by 2. So a generated workload of thousands of operations stays readable and
 * diffable line by line. Reals are printed with 15 significant digits, which round-trips cpu's
 * 2 decimals exactly. Returns a malloc'ed NUL-terminated string ending in a newline, or NULL
 * when out of memory. Pure: the same document gives the same bytes (jansson keeps objects in
 * insertion order). */
char *ps_scenario_format(const json_t *doc);

#endif
