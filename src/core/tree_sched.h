/* tree_sched.h — the scheduling loop of one pool tree, written once for every host: fair share
 * update (build, run, apply), starvation check, allocation classes, the scheduling snapshot,
 * the limits check, and node heartbeats (regular and preemptive stages, overcommit on node
 * shrink). The service, the simulator and `bench schedule` drive it through struct
 * ps_tree_host, as YTsaurus's simulator implements the strategy host and runs the real
 * strategy (docs/scheduling-loop.md gives the loop's rules).
 *
 * Per tree, the host keeps one struct ps_tree_sched and runs:
 *
 *   every fair_share_update_period:
 *       ps_tree_sched_update(ts, tree, now_ms, host, &changed, err)
 *     = build fs (tree_fs.h) -> ps_fs_update_run -> apply -> starvation build/update/apply ->
 *       preemptible lists updated with the new fair shares -> a new scheduling snapshot whose
 *       per-operation state host->op_state fills; then
 *       ps_tree_sched_limits_check(ts, host, err).
 *   on each node heartbeat:
 *       ps_tree_sched_heartbeat(ts, host, node, stages, now_ms, err)
 *     with stages.preemptive = ps_tree_sched_preempt_due(ts, &node_last_preempt_ms, now_ms).
 *   between updates, when an operation leaves the tree or its membership changes (pool moved,
 *   filter changed): ps_tree_sched_detach(ts, element) so the snapshot never reads it again;
 *   it comes back at the next update with its new element index. Between updates the host
 *   keeps the snapshot's operation state current (ps_sched_set_operation, allocation
 *   started / finished).
 *
 * Element indices are those of the last build (ts->fs): ts->user[i] is the operation's
 * user_data at the build (NULL for pools and detached operations), so a heartbeat's allocation
 * for element i maps back to the host's operation. ts->generation counts updates, so a host can
 * tell whether anything it skipped could have changed.
 *
 * Pure and deterministic as the rest of the engine: time comes in as now_ms. Not thread-safe.
 */
#ifndef PS_CORE_TREE_SCHED_H
#define PS_CORE_TREE_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/fair_share.h"
#include "core/operation.h"
#include "core/pool_tree.h"
#include "core/preempt.h"
#include "core/preemptible.h"
#include "core/schedule.h"
#include "core/starvation.h"
#include "core/strmap.h"
#include "core/tree_fs.h"

/* The host: whoever holds operations and allocations (the service, the simulator, a bench).
 * The loop calls it back; every callback may be NULL where the comment says so. Element
 * indices are those of the last update. Callbacks must not call back into the loop except
 * through the snapshot functions the comments name. */
struct ps_tree_host {
    void *ctx;
    /* Fills the scheduling state of one running operation of the build (element `element`):
     * *sched (allocation shape, disk request, pending count, runnable; filter is preset to the
     * effective filter; the loop sets regular_on_ssd_forbidden afterwards) and *preempt (preset: no lists, not graceful, -1). Returns the operation's
     * preemptible lists in this tree (the loop updates them with the new fair share), or
     * NULL. Required by ps_tree_sched_update. */
    struct ps_preemptible *(*op_state)(void *ctx, struct ps_tree_op *op, int element,
                                       struct ps_sched_operation *sched,
                                       struct ps_preempt_operation *preempt);
    /* The host changes op->state_version whenever anything its op_state would answer for op
     * changes: then an operation at the same element, with the same effective filter and
     * version as at the last update gets that update's answer again without the call. false:
     * op_state for every operation at every update. */
    bool op_state_versioned;
    /* The allocations running on node `node` (node < 0: on every node of the tree) whose
     * operations are in the snapshot, with element indices and `leaving` set for those already
     * preempted; *other receives the usage on that node of every other allocation (other
     * trees, detached operations; leaving ones excluded). The array is the host's, valid until
     * its next call. Required by the heartbeat and the limits check. */
    int (*allocations)(void *ctx, int64_t node, const struct ps_node_allocation **allocs,
                       int *count, struct ps_resources *other, struct ps_error *err);
    /* Starts an allocation of element (ts->user[element] names the operation) on node.
     * *started = false when the host cannot (the operation is gone): the loop gives the
     * resources back to the snapshot. */
    int (*start)(void *ctx, int64_t node, int element, struct ps_resources resources,
                 bool *started, struct ps_error *err);
    /* Optional: called once the starts of a heartbeat are done, before its victims, with the
     * stages' result (skips, per-operation reasons). */
    int (*scheduled)(void *ctx, int64_t node, const struct ps_sched_result *result,
                     struct ps_error *err);
    /* Preempts one victim: interrupt it with victim->interrupt_timeout_ms (0: abort now); the
     * loop gives every victim the tree's timeout, whether its job can use it is the host's
     * business (docs/scheduling-loop.md). victim->for_op: the element it makes room for, -1.
     * Allocation ids are the host's (from `allocations`). */
    int (*preempt)(void *ctx, const struct ps_preempt_victim *victim, struct ps_error *err);
};

/* Which stages a heartbeat runs. The service runs the regular stage always and the
 * preemptive ones when ps_tree_sched_preempt_due says so; the simulator leaves out stages
 * that would start nothing (nothing changed since they last started nothing). */
struct ps_tree_heartbeat_stages {
    bool regular;
    bool preemptive;
};

struct ps_tree_sched_op_cache;

struct ps_tree_sched {
    struct ps_tree_fs fs;                      /* the last build (element indices) */
    struct ps_fs_update *update;               /* the update's workspace: phase run only */
    struct ps_tree_fs next;                    /* the update in flight (begin .. finish): the
                                                  double buffer; heartbeats keep reading fs */
    char *names, *next_names;                  /* owned copies of the element names of fs and
                                                  next (the tree may free its own meanwhile) */
    size_t names_cap, next_names_cap;
    int phase;                                 /* PS_TREE_UPDATE_IDLE / _BUILT / _RAN */
    int64_t next_now_ms;                       /* now_ms of the update in flight */
    struct ps_starvation_element *starvation;  /* per element, results of the last check */
    struct ps_sched_operation *sched_ops;      /* per element */
    struct ps_preempt_operation *preempt_ops;  /* per element */
    uint8_t *high_priority;                    /* per element: 1 for an operation the guarantee
                                                  priority stage serves (operation.h) */
    int high_priority_count;
    uint8_t *subtree_eligible;                 /* per element: ps_preempt_subtree_eligible of
                                                  the last check and snapshot */
    int *eligible_ops;                         /* ps_preempt_eligible_ops of subtree_eligible */
    double *weight_sums;                       /* per element: guarantee_priority's scratch */
    int eligible_op_count;
    struct ps_preempt_scratch *preempt_scratch;  /* the preemptive stages' buffers */
    void **user;                               /* per element: operation user_data or NULL */
    struct ps_formula **filters;               /* the effective filters the snapshot reads,
                                                  owned: never borrowed from the tree, so any
                                                  filter may change at run time */
    struct ps_strmap filter_copies;            /* text -> owned copy of a tree filter */
    int filter_count, filter_capacity;
    /* Per element: what the last updates derived from the configuration alone (the effective
     * filter, the preemptible config's thresholds, the pool walks' results), and in starvation
     * the elements' kinds, parents and specified settings. Valid while kept_tree keeps
     * kept_generation: every config or structural change bumps the generation (tree_fs.h),
     * so an entry whose operation is still the element's is exact. */
    struct ps_tree_sched_op_cache *op_cache;
    const struct ps_pool_tree *kept_tree;      /* NULL: nothing kept */
    uint64_t kept_generation;
    int capacity;
    struct ps_sched_snapshot *snap;            /* NULL before the first update */
    struct ps_sched_snapshot *spare_snap;      /* during an update's finish: the last snapshot,
                                                  no longer read, renewed into the next one */
    struct ps_sched_options options;
    struct ps_preempt_config preempt_config;
    struct ps_preemptible_config preemptible_config;
    int64_t overcommit_duration_ms;            /* allowed_node_resources_overcommit_duration of
                                                  the last update (15 s before the first) */
    uint64_t generation;                       /* bumped by every update */
    int64_t last_update_ms;                    /* INT64_MIN before the first update */
    bool any_starving;                         /* some operation has a starving (or aggressively
                                                  starving) ancestor after the last check */
    int alert_count;                           /* alerts of the last update */
    struct ps_sched_result result;             /* the last heartbeat's stages */
    struct ps_preempt_result victims;          /* scratch of the heartbeat and the checks */
    /* ssd_priority_preemption of the tree at the last update: the node_tag_filter (owned; NULL
     * when SSD priority preemption is off) that turns it on for a heartbeat's node
     * (ps_sched_node.ssd_priority_preemption). */
    struct ps_formula *ssd_filter;
    struct ps_node_allocation *allocs;         /* scratch: allocations offered to the stages */
    int alloc_cap;
    bool no_scheduling_index;                  /* set by a host that never shows operations'
                                                  scheduling_index: updates leave it -1 */
};

enum { PS_TREE_UPDATE_IDLE = 0, PS_TREE_UPDATE_BUILT = 1, PS_TREE_UPDATE_RAN = 2 };

int ps_tree_sched_init(struct ps_tree_sched *ts, struct ps_error *err);
void ps_tree_sched_release(struct ps_tree_sched *ts);

/* One fair share update and starvation check of tree at now_ms, and a new snapshot (see the
 * top): begin, run and finish in one go. *starvation_changed (may be NULL) receives how many elements changed their starvation
 * status. On error the previous snapshot stays. Errors: from the engine (PS_EINVAL naming the
 * element), PS_ENOMEM. */
int ps_tree_sched_update(struct ps_tree_sched *ts, struct ps_pool_tree *tree, int64_t now_ms,
                         const struct ps_tree_host *host, int *starvation_changed,
                         struct ps_error *err);

/* The same update in three phases, so that a host with a lock runs the expensive pure part
 * (ps_fs_update_run) without it, as YTsaurus runs its fair share update on a snapshot of the
 * tree in a background invoker while heartbeats use the previous snapshot:
 *
 *   begin  (under the host's lock): builds the update's input from the tree into ts->next, a
 *          second buffer the computation owns (element names copied: the tree may free its
 *          own). ts->fs, the snapshot and everything heartbeats read stay as they are.
 *   run    (no lock needed): ps_fs_update_run on ts->next. Touches only ts->next and
 *          ts->update; heartbeats, detach and update_lists may run meanwhile (they never read
 *          either). At most one update of a ts is in flight.
 *   finish (under the lock again): when the tree's structure changed since begin (its
 *          generation: operations added, removed, started or moved, pools created, removed,
 *          moved or reconfigured, config changes; or another tree object), PS_ESTATE and
 *          nothing is applied: the previous snapshot stays, the host builds again. Else
 *          ts->next becomes ts->fs and the rest of the update runs as ps_tree_sched_update's
 *          (apply, starvation at begin's now_ms, lists, snapshot). Usage, demand and pending
 *          counts changed in between are fine: the update computes on those read at begin,
 *          as upstream does; the new snapshot, which heartbeats schedule with, starts from the
 *          operations' usage at finish (the host keeps op->usage current).
 * ps_tree_sched_update_abort forgets an update in flight (no-op when none). */
int ps_tree_sched_update_begin(struct ps_tree_sched *ts, struct ps_pool_tree *tree,
                               int64_t now_ms, struct ps_error *err);
int ps_tree_sched_update_run(struct ps_tree_sched *ts, struct ps_error *err);
int ps_tree_sched_update_finish(struct ps_tree_sched *ts, struct ps_pool_tree *tree,
                                const struct ps_tree_host *host, int *starvation_changed,
                                struct ps_error *err);
void ps_tree_sched_update_abort(struct ps_tree_sched *ts);

/* Updates one operation's preemptible lists with its fair share of the last update (element
 * `element`, membership op), with the allocation class thresholds of the operation, else its
 * nearest pool that sets one, else the tree (ps_tree_op_preemptible_config), and makes them the
 * lists the stages read for it. ps_tree_sched_update does it for every list op_state returns;
 * a host that creates lists between updates calls it. No-op for an element out of range. */
void ps_tree_sched_update_lists(struct ps_tree_sched *ts, const struct ps_tree_op *op,
                                int element, struct ps_preemptible *lists);

/* The limits check (PS_PREEMPT_LIMITS_VIOLATED): when some element's usage exceeds its
 * snapshot limits, every allocation of the tree (host->allocations(-1)) is checked and the
 * victims go to host->preempt. Runs after every update; hosts call it right after
 * ps_tree_sched_update. Errors: from the host, PS_ENOMEM. */
int ps_tree_sched_limits_check(struct ps_tree_sched *ts, const struct ps_tree_host *host,
                               struct ps_error *err);

/* Whether the preemptive stages have work: some operation has a starving ancestor and some
 * runnable operation has pending allocations. */
bool ps_tree_sched_preempt_active(const struct ps_tree_sched *ts);

/* Whether a heartbeat of a node at now_ms runs the preemptive stages: active and the node's
 * backoff (*last_preempt_ms, PS_PREEMPT_NEVER at first) has passed. When true, the stages
 * count as run: *last_preempt_ms = now_ms. */
bool ps_tree_sched_preempt_due(const struct ps_tree_sched *ts, int64_t *last_preempt_ms,
                               int64_t now_ms);

/* Makes element (an operation of the last build) not runnable, without a filter, and forgets its
 * user_data. A no-op for an invalid index or without a snapshot. */
void ps_tree_sched_detach(struct ps_tree_sched *ts, int element);

/* One node heartbeat of the tree (the node's tree must be this one; the loop sets
 * node->ssd_priority_preemption itself, on a copy, from the tree's ssd_priority_preemption):
 *   1. the regular stage (stages->regular), then the aggressively preemptive and preemptive
 *      stages (stages->preemptive) on the node's allocations that are not leaving;
 *   2. host->start for each allocation, host->scheduled, host->preempt for each victim;
 *   3. the overcommit check, as upstream's: node->overcommit_since_ms (caller-owned, one per
 *      node) is when node->usage began to exceed node->limits (a node that shrank, a job whose
 *      CPU guarantee rose on a full node): set to now_ms at the first heartbeat that sees it,
 *      PS_NO_OVERCOMMIT again at the first that does not. Once it began more than the tree's
 *      allowed_node_resources_overcommit_duration ago (strictly), victims with reason
 *      resource_overcommit until the allocations that are not leaving fit the node's limits
 *      minus the usage of its other allocations (other trees). Without the field (NULL) the
 *      check never runs.
 * ts->result holds the stages' result and ts->victims their victims (or, when the overcommit
 * check ran, its victims) until the next call. Without a snapshot nothing
 * happens. Errors: from the host, PS_EINVAL, PS_ENOMEM. */
int ps_tree_sched_heartbeat(struct ps_tree_sched *ts, const struct ps_tree_host *host,
                            const struct ps_sched_node *node,
                            const struct ps_tree_heartbeat_stages *stages, int64_t now_ms,
                            struct ps_error *err);

#endif
