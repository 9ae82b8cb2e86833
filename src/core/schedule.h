/* schedule.h — scheduling allocations on a node heartbeat (the regular stage).
 *
 * A scheduling snapshot (struct ps_sched_snapshot) mirrors one pool tree right after a fair
 * share update: the same element indices as the struct ps_fs_element array (0 is the root,
 * parent < child), each element's fair share, demand share, effective resource limits, FIFO
 * index, and a live resource usage that the caller keeps current between fair share updates
 * (allocation started / finished). Operations also carry what the scheduler needs to start
 * their next allocation: a scheduling tag filter, whether they are runnable, how many
 * allocations are pending and the resources of one allocation.
 *
 * A heartbeat (ps_schedule_heartbeat) runs the regular stage, as YTsaurus's
 * RegularMediumPriority stage (shared/spec/semantics.md 3.2, 3.4): repeatedly descend from the
 * root to the best active leaf, at each pool taking the active child with the lowest
 * satisfaction ratio, check that the leaf's next allocation fits the node's free resources and
 * the resource limits of the operation and every ancestor, and start it. An operation whose
 * allocation cannot start (filter mismatch, node too small, a limit) is deactivated for the
 * rest of the heartbeat, so the loop always terminates.
 *
 * Satisfaction ratios. An operation's ratio is its local satisfaction ratio (semantics 3.2)
 * computed from its live usage. A pool's ratio is the ratio of its best active child (the
 * minimum), and with use_pool_satisfaction_for_scheduling the minimum of that and the pool's
 * own local ratio, as YTsaurus's dynamic attributes. Ties are broken by a total order: FIFO
 * index, then start time, then element index. In FIFO pools with fifo_pool_scheduling_order =
 * fifo the children are ordered by (FIFO index, start time, element index) alone.
 *
 * Cost. Every pool keeps its *active* children (runnable, pending > 0, not deactivated in this
 * heartbeat; pools: with an active child) in a binary min-heap keyed by the order above. A
 * descent reads heap tops: O(depth). Starting an allocation changes usage on one path only, and
 * only that path is re-keyed: O(depth x log fan-out). Operations with nothing pending are not
 * in any heap, so a heartbeat never touches them; operations that surface but cannot run on
 * the node are removed for the heartbeat and put back at its end, so a heartbeat costs
 * O((allocations + skipped candidates) x depth x log fan-out), independent of the total number
 * of operations. The regular stage walks the active operations before each allocation (depth
 * first from the heaps' tops, stopping at the first one that can start): when none can (on a
 * full cluster, most stages, and most skips come after a stage's last allocation), the walk
 * records the descent's skips (in another order) without touching the heaps, O(active
 * operations); when the walk's first operation, the descent's next choice, can start, it
 * starts without the descent.
 *
 * One allocation shape per operation: an operation has one resource vector for its next
 * allocation and a count of pending allocations. Callers with several task groups of different
 * shapes set the shape of the group they want scheduled next (ps_sched_set_operation) between
 * heartbeats; several groups per operation inside one heartbeat are not supported yet.
 *
 * Pure and deterministic: no I/O, no clock, no randomness, no global state. A snapshot is not
 * thread-safe; one heartbeat at a time.
 */
#ifndef PS_CORE_SCHEDULE_H
#define PS_CORE_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/fair_share.h"
#include "core/formula.h"
#include "core/resources.h"

#define PS_SCHED_INFINITE_SATISFACTION 1e9   /* InfiniteSatisfactionRatio */

/* Evaluates a scheduling tag filter on a node's tags: normally ps_formula_eval. Kept as a
 * parameter so the engine does not decide how formulas are represented. */
typedef bool (*ps_sched_filter_fn)(const struct ps_formula *filter, const char *const *tags,
                                   int tag_count);

struct ps_sched_options {
    struct ps_resources total;        /* cluster total of the tree (for usage shares) */
    bool fifo_order_in_fifo_pools;    /* fifo_pool_scheduling_order = fifo (default false:
                                         satisfaction) */
    bool use_pool_satisfaction;       /* use_pool_satisfaction_for_scheduling (default false) */
    struct ps_resources min_spare;    /* min_spare_allocation_resources_on_node: no allocation
                                         starts on a node whose free resources do not cover
                                         this. Default {1 slot, 1 cpu, 256 MiB}. */
    ps_sched_filter_fn filter_eval;   /* required when an operation has a filter */
    uint64_t generation;              /* identifies this build for per-node filter caches:
                                         use a new value for every new or rebuilt snapshot */
    /* Check in a heartbeat only the limits an element has of its own (default false: the fair
     * share's out.resource_limits). The snapshot checks then its specified resource_limits and
     * those its filter implies (in.resource_limits, in.filter_limits), as YTsaurus checks in a
     * heartbeat only the applied specified limits (GetLocalAvailableResourceLimits); the root
     * has none. The fair share's limits are also capped by the tree total: checked in a
     * heartbeat they would refuse every allocation of the preemptive stages on a full cluster,
     * where the victims still hold their resources. An element with max_share_ratio < 1 keeps
     * the fair share's limits: the ratio is a limit of its own. */
    bool specified_limits;
};

/* YTsaurus defaults (above); total is zero and must be set, filter_eval is NULL. */
void ps_sched_options_init(struct ps_sched_options *options);

/* What the scheduler needs to know about one operation. */
struct ps_sched_operation {
    const struct ps_formula *filter;  /* scheduling_tag_filter, borrowed, must outlive the
                                         snapshot; NULL: every node */
    bool runnable;                    /* running and not suspended */
    int64_t pending_count;            /* pending allocations, >= 0 */
    struct ps_resources allocation;   /* resources of one allocation; >= 0, not all zero */
    /* The allocation's disk request (vanilla task disk_request): disk_space bytes on medium
     * disk_medium (borrowed like filter; NULL: no disk request). It starts only on a node that
     * has the medium with that much free space (struct ps_sched_node media). */
    const char *disk_medium;
    int64_t disk_space;
    /* allow_regular_allocations_on_ssd_nodes is false in its pool or an ancestor and its disk
     * request is not on an SSD priority preemption medium: it starts nothing on a node where
     * SSD priority preemption is on (ps_sched_node.ssd_priority_preemption). */
    bool regular_on_ssd_forbidden;
};

/* Why an operation did not get an allocation (the last time it was looked at). */
enum ps_sched_reason {
    PS_SCHED_OK = 0,              /* got an allocation, or not looked at yet */
    PS_SCHED_NOT_RUNNABLE = 1,    /* not running or suspended */
    PS_SCHED_NO_PENDING = 2,      /* nothing pending */
    PS_SCHED_FILTER_MISMATCH = 3, /* the node does not satisfy scheduling_tag_filter */
    PS_SCHED_NODE_RESOURCES = 4,  /* the allocation does not fit the node's free resources */
    PS_SCHED_LIMITS = 5,          /* resource limits of the operation or an ancestor (element
                                     names which) would be exceeded */
    PS_SCHED_INELIGIBLE = 6,      /* excluded by the stage's eligibility predicate */
    PS_SCHED_DISK = 7,            /* the node lacks the medium or free disk space of the
                                     allocation's disk request */
    PS_SCHED_REGULAR_ON_SSD_FORBIDDEN = 8, /* regular_on_ssd_forbidden on an SSD node */
};

/* A short name ("filter_mismatch", ...). Never NULL. */
const char *ps_sched_reason_name(enum ps_sched_reason reason);

struct ps_sched_snapshot;

/* Builds a snapshot from a tree after a fair share update. Reads, per element: in.kind,
 * in.parent, in.pool (pools and the root: their entry's in.mode), in.start_time_ms, in.usage (operations; pool usage is the sum of its
 * operations), out.fair_share.total, out.demand_share, out.resource_limits (effective limits),
 * out.fifo_index. ops, when not NULL, is indexed like elems and gives every operation's
 * scheduling state (entries of pools are ignored); NULL leaves operations not runnable until
 * ps_sched_set_operation. Nothing is retained from elems or ops except the filters.
 * Errors: PS_EINVAL (structure: root first, parents before children, an operation with
 * children; a pool index outside pools[0..pool_count); bad operation entries), PS_ENOMEM. */
int ps_sched_snapshot_new(const struct ps_fs_element *elems, int count,
                          const struct ps_fs_pool *pools, int pool_count,
                          const struct ps_sched_operation *ops,
                          const struct ps_sched_options *options,
                          struct ps_sched_snapshot **out, struct ps_error *err);

/* The snapshot of another fair share update: the same as ps_sched_snapshot_new's (the old
 * snapshot's usage, pending counts, reasons and filters are not carried over), built in place
 * of *snap when it has the structure of elems (element count, kinds and parents: its buffers
 * and heap slices are kept), else in a new one (*snap is freed; NULL: none). On error *snap
 * is freed and set to NULL. Errors: those of ps_sched_snapshot_new. */
int ps_sched_snapshot_renew(const struct ps_fs_element *elems, int count,
                            const struct ps_fs_pool *pools, int pool_count,
                            const struct ps_sched_operation *ops,
                            const struct ps_sched_options *options,
                            struct ps_sched_snapshot **snap, struct ps_error *err);

void ps_sched_snapshot_free(struct ps_sched_snapshot *snap);   /* NULL is a no-op */

int ps_sched_snapshot_element_count(const struct ps_sched_snapshot *snap);

/* Replaces an operation's scheduling state. Errors: PS_EINVAL (not an operation, negative
 * pending, negative or all-zero allocation, filter without options.filter_eval). */
int ps_sched_set_operation(struct ps_sched_snapshot *snap, int op,
                           const struct ps_sched_operation *state, struct ps_error *err);
int ps_sched_set_pending(struct ps_sched_snapshot *snap, int op, int64_t pending_count,
                         struct ps_error *err);
int ps_sched_set_runnable(struct ps_sched_snapshot *snap, int op, bool runnable,
                          struct ps_error *err);

/* Usage between fair share updates. allocation_started adds usage to the operation and all
 * its ancestors (for allocations started outside ps_schedule_*, e.g. by another stage);
 * allocation_finished subtracts it; set_operation_usage replaces an operation's usage and moves
 * the difference through the ancestors. None of them changes the pending count.
 * Errors: PS_EINVAL (not an operation; usage that would become negative). */
int ps_sched_allocation_started(struct ps_sched_snapshot *snap, int op,
                                struct ps_resources resources, struct ps_error *err);
int ps_sched_allocation_finished(struct ps_sched_snapshot *snap, int op,
                                 struct ps_resources resources, struct ps_error *err);
int ps_sched_set_operation_usage(struct ps_sched_snapshot *snap, int op,
                                 struct ps_resources usage, struct ps_error *err);

/* Read-only views; index must be valid. */
int ps_sched_parent(const struct ps_sched_snapshot *snap, int element);   /* -1 for the root */
enum ps_element_kind ps_sched_kind(const struct ps_sched_snapshot *snap, int element);
struct ps_resources ps_sched_limits(const struct ps_sched_snapshot *snap, int element);
struct ps_resources ps_sched_usage(const struct ps_sched_snapshot *snap, int element);
double ps_sched_local_satisfaction(const struct ps_sched_snapshot *snap, int element);

/* Whether operation op is runnable with something pending (a stage may offer it the node). */
bool ps_sched_schedulable(const struct ps_sched_snapshot *s, int op);

/* The order in which the regular stage would surface the active operations if each took one
 * allocation and then left (upstream's scheduling_index): index[element] = 0, 1, ... for active
 * operations, -1 for every other element (index has one entry per element). The snapshot is
 * left as it was. */
void ps_sched_scheduling_order(struct ps_sched_snapshot *snap, int *index);
int64_t ps_sched_pending(const struct ps_sched_snapshot *snap, int op);
/* Whether some runnable operation has pending allocations (outside a stage). O(1). */
bool ps_sched_any_pending(const struct ps_sched_snapshot *snap);

/* The last reason op could not get an allocation, PS_SCHED_OK if it got one since. For
 * PS_SCHED_LIMITS, *element (if not NULL) receives the index of the element whose limits
 * stopped it; otherwise -1. Reasons NOT_RUNNABLE and NO_PENDING are derived from the current
 * state. */
enum ps_sched_reason ps_sched_operation_reason(const struct ps_sched_snapshot *snap, int op,
                                               int *element);

/* The local satisfaction ratio of semantics.md 3.2 for one element: usage and fair share as
 * shares of the total, demand share for "blocked" resources. Exposed for the preemption stages
 * and for tests. */
double ps_sched_satisfaction_ratio(const struct ps_share *usage, const struct ps_share *fair,
                                   const struct ps_share *demand);

/* ---- per-node filter cache -------------------------------------------------------------- */

/* Remembers, for one node, which filters of a snapshot it satisfies, so repeated heartbeats do
 * not evaluate formulas again; nodes with equal tags in the same tree may share one (the
 * simulator keeps one per tree and ps_node.tagset). Tied to options.generation: a cache from
 * another generation is reset on use. Clear it when the node's tags change. */
struct ps_sched_filter_cache;
struct ps_sched_filter_cache *ps_sched_filter_cache_new(void);
void ps_sched_filter_cache_free(struct ps_sched_filter_cache *cache);   /* NULL is a no-op */
void ps_sched_filter_cache_clear(struct ps_sched_filter_cache *cache);

/* ---- heartbeats ------------------------------------------------------------------------- */

struct ps_sched_medium {
    const char *name;
    int64_t free;                     /* bytes */
};

struct ps_sched_node {
    int64_t id;
    const char *const *tags;          /* borrowed for the call */
    int tag_count;
    struct ps_resources limits;       /* resource limits of the node */
    struct ps_resources usage;        /* resources in use on the node before the heartbeat */
    struct ps_sched_filter_cache *filter_cache;  /* optional, caller-owned, one per node */
    /* The node's disk media (slot locations): name and free disk space (limit minus what its
     * running allocations requested). Borrowed for the call; none: no media. */
    const struct ps_sched_medium *media;
    int medium_count;
    /* SSD priority preemption is on for this node (the tree enables it and the node satisfies
     * its node_tag_filter); the loop sets it (tree_sched.h). */
    bool ssd_priority_preemption;
    /* optional, caller-owned, one per node: when usage began to exceed limits, or
     * PS_NO_OVERCOMMIT (ps_tree_sched_heartbeat's overcommit check) */
    int64_t *overcommit_since_ms;
};

#define PS_NO_OVERCOMMIT INT64_MIN

struct ps_sched_allocation {
    int op;                           /* element index */
    struct ps_resources resources;
};

struct ps_sched_skip {
    int op;
    enum ps_sched_reason reason;
    int element;                      /* PS_SCHED_LIMITS: whose limits; -1 otherwise */
    unsigned unsatisfied;             /* PS_SCHED_NODE_RESOURCES: bit 1 << r for each resource r
                                         the allocation needs more of than the node has free */
};

/* The result of one heartbeat; reuse it across heartbeats (the buffers are kept). */
struct ps_sched_result {
    struct ps_sched_allocation *allocations;   /* in start order */
    int allocation_count;
    struct ps_sched_skip *skips;               /* operations deactivated, in order */
    int skip_count;
    int64_t candidates_considered;             /* best leaves examined */
    struct ps_resources node_usage;            /* node usage after the heartbeat */
    int allocation_cap, skip_cap;              /* private */
};

void ps_sched_result_init(struct ps_sched_result *result);
void ps_sched_result_release(struct ps_sched_result *result);
void ps_sched_result_clear(struct ps_sched_result *result);   /* keeps the buffers */

/* Runs the regular stage for node: clears result, then starts allocations while candidates
 * remain and the node's free resources cover min_spare. Updates the snapshot (usage of the
 * operations and ancestors, pending counts, reasons). now_ms is accepted for the later stages
 * (backoffs); the regular stage does not use it. Errors: PS_EINVAL (bad node), PS_ENOMEM (the
 * snapshot and result stay consistent: what was started is in result). */
int ps_schedule_heartbeat(struct ps_sched_snapshot *snap, const struct ps_sched_node *node,
                          int64_t now_ms, struct ps_sched_result *result, struct ps_error *err);

/* ---- extension point for the preemptive stages ------------------------------------------ */

/* One scheduling stage. The regular stage is {extra = 0, eligible = NULL, max = 0}. A
 * preemptive stage passes the resources of preemptible allocations on the node as `extra`
 * (available = node limits - node usage + extra), an eligibility predicate selecting starving
 * operations, and max_allocations = 1; it then picks victims itself from result. Ineligible
 * operations are skipped lazily (only those that surface as best), with PS_SCHED_INELIGIBLE,
 * and do not overwrite the operation's last reason. */
struct ps_sched_stage {
    struct ps_resources extra;
    bool (*eligible)(void *ctx, const struct ps_sched_snapshot *snap, int op);
    void *ctx;
    int max_allocations;              /* 0: no limit */
    /* Optional per-operation extra resources on top of `extra` (conditional preemption: the
     * preemptible allocations that only operations inside some pool may take). NULL: none.
     * op_extra_bound must then be an upper bound of every op_extra value; it is only used to
     * decide whether the node can take any allocation at all (min_spare). */
    struct ps_resources (*op_extra)(void *ctx, const struct ps_sched_snapshot *snap, int op);
    struct ps_resources op_extra_bound;
    /* Optional (preemptive stages): the resources of the node's allocations that the stage may
     * preempt unconditionally and that belong to element's subtree, upstream's local
     * unconditional usage discount. The resource limits of the operation and its ancestors
     * are then checked against usage - discount + allocation, so the preempted allocations'
     * usage does not count against the limits they free (a full cluster's root limits
     * included). NULL: no discount (the regular stage). */
    struct ps_resources (*limit_discount)(void *ctx, const struct ps_sched_snapshot *snap,
                                          int element);
    /* Optional, per element (snapshot indices): a pool P with
     * (subtree_eligible[P] & subtree_eligible_mask) == 0 has no operation in its subtree that
     * `eligible` accepts; the stage then deactivates P as a whole when it surfaces instead of
     * its operations one by one (no skips are recorded for them). Entries of operations are not
     * read: `eligible` decides for them. Must agree with `eligible`, or operations are lost.
     * NULL: no pool is skipped. */
    const uint8_t *subtree_eligible;
    uint8_t subtree_eligible_mask;
    /* Optional: operations including every one `eligible` accepts (others in the list are
     * ignored), for stages that rarely start anything (the preemptive ones). The stage first
     * checks the active ones against the node without the descent; when none can start, the
     * result is the descent's without its work: a skip per active eligible operation (in list
     * order, none for ineligible operations) and nothing started. Else the descent runs as
     * without the list. NULL: a stage without `eligible` and `subtree_eligible` (the regular
     * one) does the same over every active operation (in depth-first order of the heaps)
     * before each allocation; other stages always descend. */
    const int *candidates;
    int candidate_count;
};

/* Runs one stage, appending to result (not clearing it; result->node_usage must hold the node
 * usage to start from: ps_schedule_heartbeat sets it from node->usage). */
int ps_schedule_stage(struct ps_sched_snapshot *snap, const struct ps_sched_node *node,
                      const struct ps_sched_stage *stage, struct ps_sched_result *result,
                      struct ps_error *err);

#endif
