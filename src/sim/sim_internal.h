/* sim_internal.h — the simulator's state, shared by its files (sim.c, sim_sched.c, sim_jobs.c,
 * sim_output.c, sim_metrics.c) and by the code that plugs into it (sim.h lists the hooks).
 *
 * Indices, not pointers, name operations (sim->ops, scenario order), nodes (sim->nodes,
 * registration order = scenario order), trees (sim->trees, the strategy's creation order =
 * scenario order, sorted by name) and jobs (slots of sim->jobs). Every list is kept in an
 * order that depends only on the sequence of events, so outputs are deterministic.
 */
#ifndef PS_SIM_SIM_INTERNAL_H
#define PS_SIM_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/cpu_monitor.h"
#include "core/memory_reserve.h"
#include "core/node_ban.h"
#include "core/node_overdraft.h"
#include "core/pending.h"
#include "core/preempt.h"
#include "core/sched_inputs.h"
#include "core/schedule.h"
#include "core/strategy.h"
#include "core/strmap.h"
#include "core/tentative.h"
#include "core/tree_fs.h"
#include "core/tree_sched.h"
#include "core/value.h"
#include "io/scenario.h"
#include "io/textbuf.h"
#include "sim/event_queue.h"
#include "sim/sim.h"

/* Event kinds; at one millisecond they run in the order of their priority (enum below). */
enum sim_event {
    SIM_EV_JOB_END = 1,      /* a = job slot, b = job serial (stale when the job ended already) */
    SIM_EV_JOB_ABORT = 2,    /* a = job slot, b = serial: a preempted job's interrupt timeout */
    SIM_EV_SUBMIT = 3,       /* a = operation index */
    SIM_EV_FAIR_SHARE = 4,   /* every tree */
    SIM_EV_HEARTBEAT = 5,    /* a = node index */
    SIM_EV_SCENARIO = 6,     /* a = index into the scenario's events (sim_preempt.c) */
    SIM_EV_CPU_TICK = 7,     /* a = job slot, b = serial: a CPU monitor check (sim_resources.c) */
    SIM_EV_NODE_ADJUST = 8,  /* a = node index: its resource adjustment (sim_resources.c) */
    SIM_EV_JOB_WAIT = 9,     /* a = job slot, b = serial: a waiting job's waiting timeout */
};

enum sim_prio {
    SIM_PRIO_JOB_END = 0,
    SIM_PRIO_JOB_ABORT = 1,
    /* a heartbeat that reports a job's end (send_heartbeat_on_job_finished): the scheduler
     * learns of the end from it, so no submission or fair share update of its millisecond
     * comes first */
    SIM_PRIO_REPORTING_HEARTBEAT = 2,
    SIM_PRIO_SUBMIT = 3,
    SIM_PRIO_FAIR_SHARE = 4,
    SIM_PRIO_HEARTBEAT = 5,
    SIM_PRIO_CPU_TICK = 6,
    SIM_PRIO_NODE_ADJUST = 7,
};

/* What a pools.csv row shows of a pool (compared bitwise), and where the row's text is in
 * the tree's rows of build serial `build`: a pool whose values did not change since copies
 * its text instead of formatting it again. */
struct sim_pool_row {
    double values[8];
    int64_t running, count;
    int starvation;
    uint64_t build;                    /* 0: none */
    size_t at, len;
    uint32_t value_at[8], value_len[8]; /* each value's text in the row (offset from at) */
};

/* Fairness metrics of one pool of one tree (sim_metrics.c), integrated exactly over time:
 * usage and demand are live (every job start and end), the fair share is the last update's. */
struct sim_pool_stats {
    char *name;                        /* owned */
    int tree;
    struct ps_resources usage;         /* running operations of the subtree, live */
    struct ps_resources demand;        /* usage + pending jobs of those operations, live */
    double fair_share_ratio;           /* of the last update that included the pool, else 0 */
    uint64_t seen_update;              /* the update serial that last included the pool */
    int64_t last_ms;                   /* integrated up to here */
    double delay;                      /* integral of max(0, min(fs, demand) - usage), share x s */
    double usage_integral, fair_share_integral;   /* share x s, for the means */
    int64_t observed_ms;
    bool underserved;                  /* usage < min(fs, demand) x tolerance */
    int64_t underserved_since_ms;
    int64_t underserved_periods, underserved_ms, longest_underserved_ms;
    int64_t underserved_long_periods;  /* periods longer than the starvation timeout */
    int64_t preempted[3];              /* job_preempted of the subtree, per enum ps_preempt_reason */
    struct sim_pool_row row;           /* its pools.csv row of the tree's last build */
};

struct sim_retry {                     /* a job of a task back to pending after an abort */
    int64_t index;
    int attempt;
    int64_t since_ms;
    struct ps_memory_overdraft_state overdraft;   /* the piece of work's overdraft history */
};

struct sim_task {
    /* first the fields a snapshot rebuild reads of every waiting operation (its pending count
     * and shape, sim_op_state): one cache line */
    const struct ps_scenario_task *spec;
    int64_t pending;                   /* job_count - fresh_next + retry_count */
    /* memory reserve (sim_resources.c); memory_on: the task requests memory */
    bool memory_on;
    /* sim_res_task_memory's last answer, a pure function of `memory` (changed only where
     * memory_version is bumped, sim_resources.c) and of overdraft_retries > 0: the shape is
     * asked for at every snapshot rebuild, and the digest quantiles walk every bucket. */
    bool memo_valid, memo_retrying;
    int64_t overdraft_retries;         /* pending retries with an overdraft history */
    uint64_t memory_version;
    uint64_t memo_version;
    int64_t memo_memory;
    int64_t fresh_next;                /* jobs [0, fresh_next) have started at least once */
    struct sim_retry *retry;           /* FIFO ring: aborted jobs, retried first */
    int64_t retry_head, retry_count, retry_cap;
    int64_t completed;
    struct ps_memory_task memory;
};

/* An operation's membership in one tree. */
struct sim_membership {
    int tree;                          /* sim tree index */
    struct ps_tree_op *m;              /* the tree's membership; NULL once the operation ended */
    int elem;                          /* its element in the tree's current snapshot, or -1 */
    struct ps_resources usage;         /* jobs running on the tree's nodes (mirrors m->usage) */
    struct ps_resources demand;        /* usage + the operation's pending demand, as in stats */
    /* The filter the scheduler checks on a node: the operation's scheduling_tag_filter and those
     * of its pools up to the root, as YTsaurus deactivates a pool on nodes its filter rejects
     * (the snapshot only knows operations' filters). NULL: none; borrowed from the membership
     * or a pool when only one applies, else the owned conjunction `combined`. */
    const struct ps_formula *filter;
    struct ps_formula *combined;
    struct sim_pool_stats **path;      /* stats of its pool up to <Root>; owned array */
    int path_len;
    bool in_stats;                     /* usage/demand are counted in the path's stats */
    /* what the last heartbeat that looked at it decided (reset by an allocation) */
    enum ps_sched_reason sched_reason;
    const char *limit_pool;            /* PS_SCHED_LIMITS: the pool (stats name), NULL: the
                                          operation's own limits */
    int limit_resource;
    int fits_task;                     /* task whose "fits some node" was cached, -1 */
    bool fits;
    struct ps_resources fed_shape;     /* the allocation shape in the snapshot */
    const char *fed_disk;              /* and its disk request's medium (a task's, or NULL) */
    struct ps_preemptible *lists;      /* running jobs by preemption class (sim_preempt.c) */
};

enum sim_op_state {
    SIM_OP_WAITING = 0,                /* not submitted yet */
    SIM_OP_PENDING,                    /* started, waiting for a running slot */
    SIM_OP_RUNNING,
    SIM_OP_COMPLETED,
    SIM_OP_FAILED,
};

struct sim_op {
    const struct ps_scenario_operation *sc;
    int index;                         /* scenario order */
    enum sim_op_state state;
    struct ps_operation *op;           /* the strategy's, once started */
    struct sim_task *tasks;
    int task_count;
    int cur_task;                      /* the task the snapshots schedule, -1: none pending */
    int64_t job_count, pending, running, completed;
    struct ps_resources pending_demand;   /* resources of all pending jobs */
    struct sim_membership *ms;
    int m_count;
    int64_t submit_ms, running_ms, finish_ms;   /* -1 until then */
    int64_t jobs_total_duration_ms, job_max_duration_ms;
    int64_t preempted_job_count, preempted_jobs_total_duration_ms, aborted_job_count;
    int64_t failed_job_count, max_failed_job_count;   /* the spec's, default 10 */
    char *unrecognized_spec;           /* compact JSON of the spec's unknown keys, or NULL */
    int active_pos;                    /* in sim->active, -1 */
    bool touched;                      /* in sim->touched during a heartbeat */
    char *error;                       /* operation_failed: why (owned) */
    bool exec_nodes_seen;              /* a node matching it was seen (core/exec_nodes.h) */
    /* its own node bans (core/node_ban.h): node id (borrowed) -> its sim_node */
    struct ps_node_ban_spec bans;
    struct ps_strmap banned_nodes;
    struct ps_tentative_state *tentative;   /* its tentative trees (sim_tentative.c), or NULL */
    /* pending reason, re-evaluated at fair share updates */
    enum ps_pending_reason reason;
    char *reason_msg;                  /* owned, NULL when none */
    /* what reason_msg was formatted from (core/pending.h's info: its numbers and its names,
     * owned): the same again gives the same text, which is not formatted again */
    struct sim_reason_key {
        int64_t count, limit;
        int resource;
        char *pool, *filter, *tree;
    } reason_key;
    int64_t reason_since_ms;
    /* CPU monitor (sim_resources.c): jobs tick when the spec has a job_cpu_monitor section */
    bool cpu_monitor;
    struct ps_cpu_monitor_config cpu_config;
};

enum sim_job_end_kind { SIM_END_COMPLETED = 0, SIM_END_FAILED, SIM_END_ABORTED };

struct sim_job {
    int64_t serial;                    /* unique per attempt; 0: free slot */
    int op, task, ms;                  /* operation, task, membership (its tree) */
    int64_t index;                     /* job index within the task */
    int attempt;
    int node;
    int node_pos;                      /* position in node->jobs */
    int64_t start_ms;
    int64_t end_ms;                    /* planned end (sim_job_plan_end) */
    enum sim_job_end_kind end_kind;    /* planned outcome */
    const char *end_reason;            /* SIM_END_FAILED: error; SIM_END_ABORTED: reason */
    struct ps_resources resources;     /* the allocation: requested resources, memory = reserve */
    bool preempting;                   /* job_preempted sent, abort pending */
    int lists_slot;                    /* its slot in its membership's lists (the stages' hint) */
    /* Waiting on its node for resources running jobs still hold (core/node_waiting.h): set at
     * its start when it does not fit; the heartbeat's end (its own victims gone) decides
     * whether it really waits (wait_armed: job_waiting sent, its timeout event queued). */
    bool waiting, wait_armed;
    int64_t wait_timeout_ms;
    int64_t next_free;                 /* free list link */
    /* sim_resources.c */
    struct ps_memory_job memory;       /* the reserve, when the task's memory_on */
    struct ps_memory_overdraft_state overdraft;
    int64_t memory_excess;             /* bytes above its reserve counted on the node */
    int64_t max_memory;                /* the user job's actual peak (ps_scenario_job_max_memory) */
    struct ps_cpu_monitor *cpu;        /* owned; NULL unless the operation monitors CPU */
};

struct sim_node {
    struct ps_node *node;              /* the strategy's */
    int group;                         /* scenario node group */
    int tree;                          /* sim tree index, -1: in no tree (never heartbeats) */
    struct ps_resources limits, usage;
    int64_t *jobs;                     /* running job slots */
    /* Their allocations as the loop reads them, position for position (sim_host.c's
     * allocations): kept at each change of a job, its element as of allocs_epoch. */
    struct ps_node_allocation *allocs;
    uint64_t allocs_epoch;
    int job_count, job_cap;
    int64_t phase_ms;                  /* the first heartbeat; then one a period after each */
    int64_t last_heartbeat_ms;         /* last heartbeat event delivered (INT64_MIN: none) */
    bool armed;                        /* a heartbeat event is queued */
    int64_t heartbeat_seq;             /* the queued heartbeat event's b; older ones are stale */
    uint64_t quiet_gen;                /* the tree generation at which it last started nothing */
    int64_t last_preemptive_ms;        /* last preemptive stages (PS_PREEMPT_NEVER: none) */
    int64_t preempt_seen_ms;           /* last heartbeat accounted for in last_preemptive_ms */
    uint64_t preempt_quiet_gen;        /* the generation at which the stages started nothing */
    int64_t memory_excess;             /* running jobs' use above their reserves, bytes */
    /* per medium of its group's disk_space_per_medium: the heartbeat's view (name, free
     * space = the group's limit minus the disk requests of its running jobs) */
    struct ps_sched_medium *media;
    int64_t overcommit_since_ms;       /* the loop's overcommit check (PS_NO_OVERCOMMIT) */
    int64_t cpu_overdraft_since_ms;    /* the node's own check (node_overdraft.h) */
    bool adjust_armed;                 /* a SIM_EV_NODE_ADJUST is queued */
    int waiting;                       /* its jobs with `waiting` set */
};

struct sim_tree {
    struct ps_pool_tree *tree;         /* the strategy's */
    const char *name;
    /* The scheduling loop (core/tree_sched.h): fair share, starvation, snapshot (ts.snap, NULL
     * before the first update), preemption. The simulator is its host (sim_host.c). */
    struct ps_tree_sched ts;
    int *elem_op;                      /* per snapshot element: operation index, -1 for pools */
    int *elem_ms;                      /* per element: membership index in that operation */
    bool *elem_runnable;
    struct sim_pool_stats **elem_stats;   /* per element: pool stats, NULL for operations */
    /* per element: the pool whose stats an update looked up there and those stats, valid
     * while the tree keeps stats_generation (no pool added, removed, moved or renamed since) */
    struct sim_stats_slot {
        const struct ps_pool *pool;
        struct sim_pool_stats *stats;
    } *stats_cache;
    uint64_t stats_generation;
    /* elem_op, elem_ms and the memberships' elem map the elements of a build at
     * mapped_generation (valid while mapped): a build at the same generation has the same
     * operations at the same elements (every change of the tree's operations or structure
     * bumps it), so an update at that generation keeps the maps instead of making them anew. */
    uint64_t mapped_generation;
    bool mapped;
    int elem_cap;
    int64_t runnable_pending;          /* pending allocations of runnable operations */
    /* Componentwise minimum of the allocation shapes of runnable operations with pending jobs
     * since the last rebuild (it may stay below the current ones: then it only skips less). */
    struct ps_resources min_shape;
    uint64_t gen;                      /* bumped by every change of the scheduling state */
    bool dirty;                        /* changed since the last fair share update */
    bool timed;                        /* its volumes or weights change with time alone */
    int64_t update_due_ms;             /* the first update that time alone may change (a
                                          starvation timeout expiring); INT64_MAX: none */
    bool keep_heartbeats;              /* heartbeats never count as quiet (hooks) */
    int *nodes;                        /* node indices */
    int node_count, quiet_count;
    bool dormant;
    int *groups;                       /* scenario node groups whose nodes are in the tree */
    int group_count;
    /* the heartbeats' filter caches, one per tag set (ps_node.tagset): its nodes with equal
     * tags share the verdicts (sim_filter_cache) */
    struct ps_sched_filter_cache **caches;
    int cache_cap;
    struct ps_resources total, usage;  /* of the tree's nodes; usage live */
    /* The total the engine sees: a resource some node leaves unlimited (omitted in its limits)
     * counts 0 there, so nothing of it is shared (jobs of the tree may not request it). */
    struct ps_resources fs_total;
    /* The Pareto-maximal free resources of its nodes (covering min_spare), computed at most once
     * per fair share update for pending reasons. */
    struct ps_resources *frontier;
    int frontier_count, frontier_cap;
    uint64_t frontier_serial;
    double tolerance;                  /* fair_share_starvation_tolerance */
    int64_t starvation_timeout_ms;
    struct ps_strmap stats_by_name;
    struct sim_pool_stats **stats;     /* in order of first appearance */
    int stats_count, stats_cap;
    struct ps_textbuf rows;            /* pools.csv rows of the last update, without the time */
    struct ps_textbuf rows_prev;       /* those of the update before (sim_pool_row.at) */
    uint64_t rows_build;               /* serial of the last build of rows */
    struct sim_preempt_tree *pre;      /* starvation and preemption state (sim_preempt.c) */
};

struct ps_sim {
    const struct ps_scenario *sc;
    struct ps_sim_options options;
    struct ps_strategy *strategy;
    struct sim_tree *trees;
    int tree_count;
    struct sim_node *nodes;
    int64_t node_count;
    struct sim_op *ops;
    int64_t op_count;
    struct ps_strmap op_by_id;
    struct sim_job *jobs;
    int64_t job_cap, job_free, next_serial;
    struct ps_event_queue queue;
    int64_t now;
    int64_t end_ms;                    /* the scenario's duration, or -1 */
    bool finished;
    const char *end_reason;
    int64_t real_events;               /* queued submit / job end / abort events */
    int64_t running_jobs;
    int heartbeat_node;                /* the node whose heartbeat runs, -1: none */
    int64_t last_progress_ms;
    int *active;                       /* submitted, not finished operations */
    int active_count;
    int *touched;                      /* operations given allocations in this heartbeat */
    int touched_count;
    int64_t *waits;                    /* wait of every started attempt, ms */
    int64_t wait_count, wait_cap;
    uint64_t snapshot_generation;
    uint64_t update_serial;
    uint64_t state_serial;             /* the last ps_tree_op.state_version given (sim_op_sync) */
    bool reasons_dirty;                /* a heartbeat changed what it recorded for a reason */
    int64_t next_pools_row_ms;
    int64_t next_exec_nodes_check_ms;  /* core/exec_nodes.h, at fair share updates */
    int64_t next_demand_check_ms;      /* the same, resource_demand_sanity_check_period */
    struct ps_textbuf line;            /* the output line being built */
    struct ps_textbuf events_out;      /* events.jsonl lines not yet handed to options.events */
    struct ps_textbuf pools_out;       /* pools.csv rows not yet handed to options.pools */
    struct ps_sim_event ev;            /* its fields, for options.on_event */
    char ev_job_id[512];
    struct sim_double_memo *double_memo;    /* sim_output.c: pools.csv numbers, formatted */
    int64_t reason_ms[PS_PENDING_REASON_COUNT];   /* operation x ms spent per top reason */
    struct ps_sim_stats stats;
    struct ps_node_allocation *host_allocs;   /* sim_host.c: allocations offered to the loop */
    uint64_t elem_epoch;               /* moves whenever a running membership's elem may change */
    int host_alloc_count, host_alloc_cap;
    struct ps_error io_error;          /* the first output failure */
    struct ps_memory_controller_config memory_controller;   /* the scenario's controller_agent */
    struct sim_res_stats {             /* sim_resources.c, for summary.json */
        int64_t memory_jobs_started, memory_jobs_completed, overdraft_aborts,
            memory_limit_failures;
        double reserve_byte_s, used_byte_s;   /* user job, completed jobs */
        double slack_sum;                     /* per completed job (reserve - used) / reserve */
        int64_t cpu_jobs, cpu_ticks, cpu_limit_changes;
        double preemptible_core_s;            /* aggregated (hard - soft), ended jobs */
    } res;
};

/* ---- sim.c ------------------------------------------------------------------------------ */
int sim_push(struct ps_sim *sim, int64_t time_ms, enum sim_event type, int64_t a, int64_t b);
int sim_push_heartbeat(struct ps_sim *sim, int64_t time_ms, int prio, int64_t node, int64_t seq);
/* Operations that became running in the last strategy call: events, stats, snapshots. */
int sim_process_activated(struct ps_sim *sim, struct ps_error *err);
void sim_progress(struct ps_sim *sim);
void sim_active_add(struct ps_sim *sim, int op);
void sim_active_remove(struct ps_sim *sim, int op);

/* ---- sim_sched.c ------------------------------------------------------------------------ */
int sim_fair_share_event(struct ps_sim *sim, struct ps_error *err);
int sim_heartbeat(struct ps_sim *sim, int node, struct ps_error *err);
/* Queues node's next heartbeat at t_ms, replacing one queued before (it goes stale). */
/* reporting: the heartbeat reports a job's end (SIM_PRIO_REPORTING_HEARTBEAT) */
int sim_arm_heartbeat(struct ps_sim *sim, int node, int64_t t_ms, bool reporting);
/* The tree's scheduling state changed: new generation; wakes dormant heartbeats. */
int sim_tree_changed(struct ps_sim *sim, int tree);
/* Nodes follow changed tags or nodes_filters (sim_sched.c). */
int sim_nodes_moved(struct ps_sim *sim, struct ps_error *err);
/* Brings an operation's entry in every snapshot in line with its tasks: runnable, pending count
 * and allocation shape of the current task. */
int sim_op_sync(struct ps_sim *sim, int op, struct ps_error *err);
/* The snapshot state of membership k of op: runnable, pending count and shape of the current
 * task, the loop's effective filter of its element. */
/* The operation's tasks as core/sched_inputs.h reads them (sim_sched.c). */
struct ps_sched_tasks sim_op_tasks(const struct sim_op *o);
void sim_op_state(const struct ps_sim *sim, int op, int k, struct ps_sched_operation *st);

/* ---- sim_jobs.c ------------------------------------------------------------------------- */
int sim_op_init(struct ps_sim *sim, int op, struct ps_error *err);
void sim_op_release(struct sim_op *op);
int sim_submit(struct ps_sim *sim, int op, struct ps_error *err);
/* The resources of the next job of a task (memory = the reserve; today the request). */
struct ps_resources sim_task_job_resources(const struct ps_sim *sim, int op, int task);
/* Recomputes the pending demand and the demand of every membership (and the pools' stats). */
void sim_op_demand_changed(struct ps_sim *sim, int op);
int sim_job_start(struct ps_sim *sim, int op, int ms, int node, struct ps_resources resources,
                  struct ps_error *err);
/* The job's run time before its node group's job_duration_factor: its task's job_durations
 * entry for its index, else the task's duration. */
int64_t sim_job_duration_ms(const struct ps_sim *sim, const struct sim_job *job);
/* How and when a started job ends (memory checks go here). */
void sim_job_plan_end(struct ps_sim *sim, struct sim_job *job);
int sim_job_end_event(struct ps_sim *sim, int64_t slot, int64_t serial, struct ps_error *err);
int sim_job_abort(struct ps_sim *sim, int64_t slot, const char *reason, struct ps_error *err);
int sim_job_preempt(struct ps_sim *sim, int64_t slot, int for_op, const char *preemption_reason,
                    int64_t interrupt_timeout_ms, struct ps_error *err);
int sim_job_abort_event(struct ps_sim *sim, int64_t slot, int64_t serial, struct ps_error *err);
/* The node's waiting jobs (core/node_waiting.h): those that fit start, in arrival order (a job
 * still at its start instant just runs on), those past their timeout are aborted with
 * waiting_timeout, the rest wait (job_waiting, their timeout queued). */
int sim_node_waiting(struct ps_sim *sim, int node, struct ps_error *err);
/* At a job's start (sim_job_start): it waits when it does not fit beside the node's running
 * jobs (sim_waiting.c). */
void sim_job_wait_check(struct ps_sim *sim, int64_t slot);
int sim_job_wait_event(struct ps_sim *sim, int64_t slot, int64_t serial, struct ps_error *err);
/* Replaces a running job's resource usage (CPU guarantee changes): node, snapshot, operation
 * and pools follow. */
int sim_job_set_usage(struct ps_sim *sim, int64_t slot, struct ps_resources usage,
                      struct ps_error *err);
/* The job's element in its tree's current snapshot, or -1. */
int sim_job_element(const struct ps_sim *sim, const struct sim_job *job);
/* Actual CPU use (hundredths of a core) at offset_ms after the job's start: the task's
 * cpu_usage profile capped by the job's cpu; CPU time in core x ms over [0, offset_ms). */
int64_t sim_job_cpu_at(const struct ps_sim *sim, const struct sim_job *job, int64_t offset_ms);
int64_t sim_job_cpu_time_ms(const struct ps_sim *sim, const struct sim_job *job, int64_t offset_ms);
/* "<op id>/<task index>/<job index>/<attempt>". */
void sim_job_id(const struct ps_sim *sim, const struct sim_job *job, char *buf, size_t size);
int sim_op_finish(struct ps_sim *sim, int op, enum sim_op_state state, struct ps_error *err);
/* Fails a running operation: its running jobs are aborted (reason operation_failed), then it
 * finishes as failed with error. */
int sim_op_fail(struct ps_sim *sim, int op, const char *error, struct ps_error *err);
/* True when a running operation may yet fail for want of a matching node (it has not seen one
 * and none of its trees has one now) or of a node large enough for its next job
 * (sim_sched.c); the run does not end idle then. */
bool sim_exec_nodes_wait(struct ps_sim *sim);
/* Membership k of op changed its pool or its filters (its own or a pool's) at run time: its
 * pool statistics path, usage and demand there, and its effective filter follow. */
int sim_membership_moved(struct ps_sim *sim, int op, int k, struct ps_error *err);
/* The operation leaves its tree ms[k] (it finished, or a tentative tree banned it): out of the
 * pool statistics and the snapshot; ms[k].m becomes NULL. */
int sim_membership_leave(struct ps_sim *sim, struct sim_op *o, int k, struct ps_error *err);

/* Tentative pool trees (sim_tentative.c, core/tentative.h). setup: at the submission, before
 * the strategy gets *spec_json (which it extends with the admitted trees); a refused start
 * (PS_EINVAL, PS_ENOENT) in why. */
int sim_tentative_setup(struct ps_sim *sim, struct sim_op *o, json_t **spec_json,
                        struct ps_error *why, struct ps_error *err);
void sim_tentative_release(struct sim_op *o);
bool sim_tentative_may_start(const struct sim_op *o, const char *tree);
void sim_tentative_job_started(struct sim_op *o, const char *tree, int64_t now_ms);
/* A job of op in tree ended; a completed one may ban slow trees. */
int sim_tentative_job_ended(struct ps_sim *sim, int op, const char *tree, bool completed,
                            int64_t duration_ms, struct ps_error *err);
/* The periodic check of every active operation (with the fair share updates). */
int sim_tentative_check(struct ps_sim *sim, struct ps_error *err);

/* ---- sim_host.c: the simulator as the host of the scheduling loop ------------------------ */
/* One fair share update of the tree through the loop, its limits check, and the element maps
 * (elem_op, elem_ms, elem_runnable, elem_stats, runnable_pending, min_shape, memberships'
 * elem). *starvation_changed as ps_tree_sched_update. */
int sim_host_update(struct ps_sim *sim, int tree, int *starvation_changed, struct ps_error *err);
/* One heartbeat of node through the loop (its tree has a snapshot): the stages asked for, the
 * starts (sim_job_start), pending-reason skips, victims, then overcommit. */
int sim_host_heartbeat(struct ps_sim *sim, int node, const struct ps_sched_node *sn,
                       const struct ps_tree_heartbeat_stages *stages, struct ps_error *err);
void sim_host_release(struct ps_sim *sim);
/* Re-reads the elements of the node's allocations (n->allocs) from its jobs' memberships, as of
 * sim->elem_epoch. */
void sim_node_allocs_refresh(struct ps_sim *sim, struct sim_node *n);

/* ---- sim_preempt.c ---------------------------------------------------------------------- */
struct sim_preempt_tree;
int sim_preempt_init(struct ps_sim *sim, struct ps_error *err);   /* after the trees and nodes */
void sim_preempt_release(struct ps_sim *sim);
/* After a fair share update of the loop: starvation events, update_due_ms. */
void sim_preempt_tree_updated(struct ps_sim *sim, int tree, int starvation_changed);
/* Whether the preemptive stages run on this node's heartbeat now (backoff passed, something
 * starving; moves the node's backoff time); *run: whether they must really be computed (false
 * when they started nothing at this generation already). */
bool sim_preempt_wanted(struct ps_sim *sim, int node, bool *run);
bool sim_preempt_active(const struct ps_sim *sim, int tree);
/* The tree goes dormant / wakes up: heartbeats skipped meanwhile still move each node's
 * backoff time exactly as if they had run (they would have started nothing). */
void sim_preempt_dormant(struct ps_sim *sim, int tree);
void sim_preempt_wake(struct ps_sim *sim, int tree);
/* Preempts a running job (counts it per pool and reason, then sim_job_preempt). */
int sim_preempt_victim(struct ps_sim *sim, int64_t slot, int for_op, enum ps_preempt_reason reason,
                       int64_t interrupt_timeout_ms, struct ps_error *err);
/* A job started / ended (finished, failed or aborted) / changed its usage: allocation classes. */
int sim_preempt_job_started(struct ps_sim *sim, int64_t slot, struct ps_error *err);
void sim_preempt_job_removed(struct ps_sim *sim, int64_t slot);
int sim_preempt_job_usage(struct ps_sim *sim, int64_t slot, struct ps_resources usage,
                          struct ps_error *err);
/* A scenario event (SIM_EV_SCENARIO). */
int sim_scenario_event(struct ps_sim *sim, int64_t index, struct ps_error *err);
int sim_scenario_events_check(struct ps_sim *sim, struct ps_error *err);
int sim_scenario_events_schedule(struct ps_sim *sim, struct ps_error *err);
/* ---- sim_resources.c (CPU monitor, memory reserve; sim.h hooks (b)) -------------------- */
/* The scenario's controller_agent section into sim->memory_controller (errors name
 * controller_agent/<key>). */
int sim_res_init(struct ps_sim *sim, struct ps_error *err);
int sim_res_op_init(struct ps_sim *sim, int op, struct ps_error *err);
void sim_res_op_release(struct sim_op *op);
/* The memory of the task's next job: footprint + reserves (memory_reserve.h). */
int64_t sim_res_task_memory(const struct ps_sim *sim, int op, int task);
/* At job start, before its usage is counted: its reserve, overdraft history, resources. */
struct ps_resources sim_res_job_prepare(struct ps_sim *sim, struct sim_job *job,
                                        const struct ps_memory_overdraft_state *overdraft);
/* After the job is counted: its first CPU tick. */
int sim_res_job_started(struct ps_sim *sim, int64_t slot, struct ps_error *err);
void sim_res_plan_end(struct ps_sim *sim, struct sim_job *job);
/* Before the job's end event is written and its slot freed: samples, statistics, release. */
int sim_res_job_ending(struct ps_sim *sim, struct sim_job *job, enum sim_job_end_kind kind,
                       const char *reason, struct ps_error *err);
int sim_cpu_tick_event(struct ps_sim *sim, int64_t slot, int64_t serial, struct ps_error *err);
/* The node's CPU usage or limit changed: when its usage is above its cpu, its next resource
 * adjustment (a multiple of its group's resource_adjustment_period) is queued. */
int sim_res_node_changed(struct ps_sim *sim, int node, struct ps_error *err);
int sim_node_adjust_event(struct ps_sim *sim, int node, struct ps_error *err);
void sim_res_statistics(struct ps_sim *sim, const struct sim_job *job, struct ps_textbuf *b,
                        bool *first);
void sim_res_summary(struct ps_sim *sim, struct ps_textbuf *b);

/* ---- sim_output.c ----------------------------------------------------------------------- */
/* The outputs are built in io/textbuf.h's buffers; these add the simulator's number forms. */
/* Hands every byte of events_out and pools_out to their files. */
void sim_out_flush(struct ps_sim *sim);
void sim_text_double(struct ps_textbuf *b, double x);                /* round-trip */
/* The same text, remembered by bit pattern: pools.csv repeats most values update after update
 * and the shortest round-trip text costs up to three snprintf and strtod. */
void sim_text_double_memo(struct ps_sim *sim, struct ps_textbuf *b, double x);
void sim_text_amount(struct ps_textbuf *b, int resource, int64_t v); /* cpu as an exact decimal */
void sim_text_resources(struct ps_textbuf *b, const struct ps_resources *r);   /* JSON map */
/* events.jsonl: begin writes {"time":..,"event_type":"..", and key() the next `"key":`. */
void sim_ev_begin(struct ps_sim *sim, const char *type);
void sim_ev_key(struct ps_sim *sim, const char *key);
void sim_ev_end(struct ps_sim *sim);
void sim_ev_job(struct ps_sim *sim, const char *type, const struct sim_job *job);   /* begins */
void sim_ev_statistics(struct ps_sim *sim, const struct sim_job *job);
/* pools.csv */
void sim_pools_rows_build(struct ps_sim *sim, int tree);
void sim_pools_rows_write(struct ps_sim *sim);

void sim_reason_key_release(struct sim_reason_key *key);

/* ---- sim_metrics.c ---------------------------------------------------------------------- */
struct sim_pool_stats *sim_stats_get(struct ps_sim *sim, int tree, const char *pool);
void sim_stats_advance(struct ps_sim *sim, struct sim_pool_stats *st);
void sim_stats_set_fair_share(struct ps_sim *sim, struct sim_pool_stats *st, double ratio);
/* Adds (sign +1) or removes (-1) usage and demand along a path of stats. */
void sim_stats_add(struct ps_sim *sim, struct sim_pool_stats **path, int len,
                   const struct ps_resources *usage, const struct ps_resources *demand, int sign);
void sim_stats_finish(struct ps_sim *sim);
int sim_record_wait(struct ps_sim *sim, int64_t wait_ms);
/* Re-evaluates the top pending reason of an operation, emitting operation_pending on change. */
void sim_pending_reason_update(struct ps_sim *sim, int op, bool emit);
void sim_pending_reason_describe(struct ps_sim *sim, int op, struct ps_pending_info *info,
                                 char *msg, size_t size);

#endif
