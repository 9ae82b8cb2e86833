/* preempt.h — preemptive scheduling stages and the choice of allocations to preempt.
 *
 * Three reasons to preempt (shared/reference/preemption.ru.txt, semantics.md 3.4):
 *   PS_PREEMPT_FOR_STARVING          to start an allocation of a starving operation
 *                                    (ps_preempt_heartbeat);
 *   PS_PREEMPT_RESOURCE_OVERCOMMIT   the node's resources shrank below its usage
 *                                    (ps_preempt_overcommit_victims);
 *   PS_PREEMPT_LIMITS_VIOLATED       an operation's or pool's resource_limits were lowered below
 *                                    its usage (ps_preempt_limits_victims).
 * Victims are always taken most preemptible class first, newest start first, then larger id
 * first: a total order, so the choice is deterministic.
 *
 * A heartbeat, as the caller (server / simulator) runs it:
 *   1. ps_schedule_heartbeat (regular stage) with a struct ps_sched_result;
 *   2. if ps_preempt_backoff_passed(last_ms, now_ms, config): ps_preempt_heartbeat with the same
 *      result. It runs the aggressively preemptive stage (operations whose lowest aggressively
 *      starving ancestor exists; resources: free + preemptible + aggressively preemptible
 *      allocations of the node) and, if that started nothing, the preemptive stage (lowest
 *      starving ancestor; free + preemptible). At most one allocation starts. If it ran any
 *      stage, set last_ms = now_ms for the node (the caller keeps it per node);
 *   3. start what result->allocations holds (ps_preemptible_add on the operation's lists);
 *   4. apply the victims: each one carries interrupt_timeout_ms. 0: abort the allocation now.
 *      Otherwise interrupt its job and abort it when the timeout (allocation_preemption_timeout,
 *      10 s; allocation_graceful_preemption_timeout, 60 s for operations in graceful
 *      preemption mode) expires if it has not finished. When a victim really ends call
 *      ps_sched_allocation_finished and ps_preemptible_remove. The new allocation may have to
 *      wait on the node until the victims have released their resources.
 *   The snapshot already counts the new allocation (usage, pending); victims keep their usage in
 *   the snapshot until they end. result->node_usage is the node usage with the new allocation
 *   and without the victims.
 *
 * Which allocations may be taken (AnalyzePreemptibleAllocations / FindPreemptionBlockingAncestor):
 * an allocation of class >= the stage's level (aggressive stage: aggressively_preemptible and
 * preemptible; preemptive stage: preemptible) is blocked by the first of:
 *   - its operation is in graceful preemption mode, or runs <= max_unpreemptible_running_
 *     allocation_count allocations (min of tree and spec; unset by default) -> the operation;
 *   - walking up from the operation to (not including) the root: an element that is not
 *     non_starving (with preemption_check_starvation), or (with preemption_check_satisfaction)
 *     whose local satisfaction (live usage) < threshold + 1.49e-8 (RatioComparisonPrecision), where the
 *     threshold is aggressive_preemption_satisfaction_threshold in the aggressive stage and
 *     preemption_satisfaction_threshold otherwise.
 * Unblocked allocations are preemptible for everybody. With enable_conditional_preemption an
 * allocation blocked at a pool P (not at its own operation) may be preempted by operations
 * inside P's subtree only: their available resources include P's "conditional discount".
 *
 * SSD priority preemption (tree ssd_priority_preemption; on for a node when enabled and the
 * node satisfies its node_tag_filter: node->ssd_priority_preemption). On such a node an
 * operation whose disk request is on one of medium_names (ps_preempt_operation.ssd) has the
 * SSD preemption priority matching its starvation (ssd_aggressive / ssd_normal), and its
 * allocations the SSD preemption levels (ssd_non_preemptible, ssd_aggressively_preemptible;
 * a preemptible one stays preemptible). Levels, lowest first: ssd_non_preemptible,
 * ssd_aggressively_preemptible, non_preemptible, aggressively_preemptible, preemptible. The
 * stages run, until one starts an allocation: SSD aggressively preemptive (ssd_aggressive
 * operations; victims from ssd_aggressively_preemptible up), SSD preemptive (ssd_normal;
 * victims from non_preemptible up: every allocation without an SSD request), then the two
 * above (aggressive, normal operations only). An operation takes part in the stage of its
 * priority only. In the SSD stages an allocation of a non-SSD level has no blocking ancestor
 * unless its operation is in graceful preemption mode (upstream ignores preemption-blocking
 * ancestors for SSD jobs).
 */
#ifndef PS_CORE_PREEMPT_H
#define PS_CORE_PREEMPT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/preemptible.h"
#include "core/schedule.h"
#include "core/starvation.h"

struct ps_preempt_config {
    double preemption_satisfaction_threshold;             /* 1.0 */
    double aggressive_preemption_satisfaction_threshold;  /* 0.2 */
    bool enable_conditional_preemption;                   /* true */
    bool check_starvation;                                /* preemption_check_starvation, true */
    bool check_satisfaction;                              /* preemption_check_satisfaction, true */
    /* scheduling_preemption_priority_scope = operation_only: an operation's preemption
     * priority is its own starvation status, not its lowest (aggressively) starving ancestor's */
    bool priority_operation_only;                         /* false */
    int64_t preemptive_scheduling_backoff_ms;             /* 5 s */
    int64_t allocation_preemption_timeout_ms;             /* 10 s */
    int64_t allocation_graceful_preemption_timeout_ms;    /* 60 s */
    int max_unpreemptible_running_allocation_count;       /* -1: unset */
};

void ps_preempt_config_init(struct ps_preempt_config *config);

/* now_ms >= last_ms + backoff. last_ms = PS_PREEMPT_NEVER for a node that never ran one. */
#define PS_PREEMPT_NEVER INT64_MIN
bool ps_preempt_backoff_passed(int64_t last_ms, int64_t now_ms,
                               const struct ps_preempt_config *config);

/* Per element (same indices as the snapshot); entries of pools are ignored. */
struct ps_preempt_operation {
    const struct ps_preemptible *lists;   /* the operation's allocation classes; NULL: none */
    bool graceful;                        /* preemption_mode = graceful */
    int max_unpreemptible_running_allocation_count;   /* spec value, -1: unset */
    /* Not EffectiveAggressivePreemptionAllowed: its aggressively preemptible allocations count
     * as non-preemptible (a gang operation without allow_aggressive_preemption_for_gang_
     * operations, else the nearest pool setting allow_aggressive_preemption; default allowed). */
    bool aggressive_preemption_disallowed;
    /* Its disk request is on one of the tree's ssd_priority_preemption medium_names
     * (IsEligibleForSsdPriorityPreemption of its disk request media). */
    bool ssd;
};

/* Bits of the per-element subtree eligibility (ps_preempt_subtree_eligible): the element's
 * subtree holds an operation whose lowest starving / aggressively starving ancestor exists. */
#define PS_PREEMPT_SUBTREE_STARVING 1u
#define PS_PREEMPT_SUBTREE_AGGRESSIVELY_STARVING 2u

/* Everything the stages read besides the snapshot; all borrowed for the call. */
struct ps_preempt_tree {
    const struct ps_preempt_config *config;
    const struct ps_starvation_element *starvation;   /* results of ps_starvation_update */
    const struct ps_preempt_operation *ops;
    /* Optional: ps_preempt_subtree_eligible of snapshot and starvation, computed once after
     * each starvation check (it only changes then). NULL: every heartbeat computes it
     * (O(elements)). */
    const uint8_t *subtree_eligible;
    /* Optional, with subtree_eligible: ps_preempt_eligible_ops of the same check and snapshot.
     * The stages then settle a heartbeat where no eligible operation can start on the node
     * without the descent (ps_sched_stage.candidates). NULL: computed per heartbeat when
     * subtree_eligible is NULL, else not used. */
    const int *eligible_ops;
    int eligible_op_count;
    /* Optional: buffers ps_preempt_heartbeat reuses from one heartbeat to the next (the
     * per-element discounts stay zeroed between stages). NULL: allocated per heartbeat. */
    struct ps_preempt_scratch *scratch;
};

struct ps_preempt_scratch *ps_preempt_scratch_new(void);   /* NULL: out of memory */
void ps_preempt_scratch_free(struct ps_preempt_scratch *s);

/* Fills out[0 .. element count) with PS_PREEMPT_SUBTREE_* bits from the starvation results
 * (indexed like the snapshot). The stages use them to skip whole pools without eligible
 * operations, and to skip the aggressive stage when the root has none. */
void ps_preempt_subtree_eligible(const struct ps_sched_snapshot *snap,
                                 const struct ps_starvation_element *starvation,
                                 const struct ps_preempt_config *config, uint8_t *out);

/* Fills out (room for the element count) with the operations whose subtree_eligible entry
 * (of ps_preempt_subtree_eligible) has any bit, in index order; returns their count. */
int ps_preempt_eligible_ops(const struct ps_sched_snapshot *snap, const uint8_t *subtree_eligible,
                            int *out);

/* One allocation running on the node. */
struct ps_node_allocation {
    int64_t id;
    int op;                               /* element index of its operation */
    struct ps_resources resources;
    int64_t start_time_ms;
    /* Already preempted and ending (interrupted, waiting for its timeout): the overcommit and
     * limits checks count its resources as released and never choose it again. Ignored by
     * ps_preempt_heartbeat. */
    bool leaving;
    /* Optional hint: ps_preemptible_slot of id in its operation's lists (the stages then read
     * its class without the lookup by id). Any value is safe: a slot that does not hold id is
     * ignored. */
    int slot;
};

enum ps_preempt_reason {
    PS_PREEMPT_FOR_STARVING = 0,
    PS_PREEMPT_RESOURCE_OVERCOMMIT = 1,
    PS_PREEMPT_LIMITS_VIOLATED = 2,
};
const char *ps_preempt_reason_name(enum ps_preempt_reason reason);

struct ps_preempt_victim {
    int64_t allocation_id;
    int op;                               /* the victim's operation */
    enum ps_preempt_reason reason;
    int for_op;                           /* FOR_STARVING: the operation it made room for; -1 */
    int element;                          /* LIMITS_VIOLATED: the element over its limits; -1 */
    int cls;                              /* enum ps_alloc_class of the victim (-1 unknown) */
    int64_t interrupt_timeout_ms;         /* 0: abort now; else interrupt, abort after this */
};

enum ps_preempt_stage {
    PS_STAGE_NONE = 0,
    PS_STAGE_AGGRESSIVELY_PREEMPTIVE = 1,
    PS_STAGE_PREEMPTIVE = 2,
    PS_STAGE_SSD_AGGRESSIVELY_PREEMPTIVE = 3,
    PS_STAGE_SSD_PREEMPTIVE = 4,
};

struct ps_preempt_result {
    struct ps_preempt_victim *victims;
    int victim_count;
    enum ps_preempt_stage stage;          /* the stage that started an allocation, or NONE */
    int victim_cap;                       /* private */
};

void ps_preempt_result_init(struct ps_preempt_result *r);
void ps_preempt_result_release(struct ps_preempt_result *r);

/* The preemptive stages for one node (see the top). Appends at most one allocation to sched
 * (whose node_usage must be current: after ps_schedule_heartbeat it is) and replaces the
 * victims in out. Does not check the backoff. allocs lists every allocation running on the node
 * (borrowed). Errors: PS_EINVAL (an allocation of an unknown operation), PS_ENOMEM. */
int ps_preempt_heartbeat(struct ps_sched_snapshot *snap, const struct ps_preempt_tree *tree,
                         const struct ps_sched_node *node, const struct ps_node_allocation *allocs,
                         int alloc_count, struct ps_sched_result *sched,
                         struct ps_preempt_result *out, struct ps_error *err);

/* Node shrink: victims (appended to out, reason RESOURCE_OVERCOMMIT) until the usage of allocs
 * (every op a valid index into tree->ops; leaving ones not counted)
 * fits node_limits. Errors: PS_ENOMEM. */
int ps_preempt_overcommit_victims(const struct ps_preempt_tree *tree,
                                  struct ps_resources node_limits,
                                  const struct ps_node_allocation *allocs, int alloc_count,
                                  struct ps_preempt_result *out, struct ps_error *err);

/* Lowered limits: walks allocs in victim order and preempts an allocation while its operation
 * or an ancestor has usage (the sum of its allocations in allocs that are not leaving and not
 * already chosen; allocs must list every allocation of the tree) above its effective
 * resource limits (reason LIMITS_VIOLATED, element = the lowest such element). Non-preemptible
 * allocations (their operation's lists) are never taken, as upstream preempts only jobs
 * preemptible in some stage: usage may stay above the limits. Appends to out.
 * Errors: PS_EINVAL (bad operation index), PS_ENOMEM. */
int ps_preempt_limits_victims(const struct ps_sched_snapshot *snap,
                              const struct ps_preempt_tree *tree,
                              const struct ps_node_allocation *allocs, int alloc_count,
                              struct ps_preempt_result *out, struct ps_error *err);

#endif
