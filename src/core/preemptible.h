/* preemptible.h — one operation's running allocations split into preemption classes.
 *
 * YTsaurus keeps an operation's running allocations in three lists, in start order (the oldest
 * first): non_preemptible, then aggressively_preemptible, then preemptible, each with its total
 * usage (shared/spec/semantics.md 3.3). An allocation stays on the less preemptible side of a
 * boundary iff the usage of the allocations before it is strictly below the bound
 * (IsStrictlyDominatesNonBlocked against fair_share x threshold, or StrictlyDominates against
 * non_preemptible_resource_usage_threshold when one is configured). The allocation that
 * crosses a bound stays on the less preemptible side.
 *
 *   aggressive bound  = fair_share x aggressive_preemption_satisfaction_threshold
 *   preemptible bound = fair_share x preemption_satisfaction_threshold, or infinity when the
 *                       fair share equals the demand share (within 1e-9): such an operation
 *                       has nothing preemptible.
 *
 * A new allocation is appended to the preemptible list and the lists are rebalanced (two
 * iterations of NP|AP then AP|P), exactly as DoUpdatePreemptibleAllocationsList; removal and
 * usage changes rebalance too. Rebalancing moves only allocations near the boundaries, so
 * each change costs O(moved allocations).
 *
 * The caller keeps one struct ps_preemptible per operation and tells it:
 *   - after every fair share update: ps_preemptible_update (fair share, demand share, config);
 *   - when an allocation starts on a node: ps_preemptible_add (in start order);
 *   - when its usage changes (e.g. CPU reclaim): ps_preemptible_set_usage;
 *   - when it finishes, is aborted or its preemption completes: ps_preemptible_remove.
 * Allocation ids are caller-chosen int64 values, unique per operation.
 */
#ifndef PS_CORE_PREEMPTIBLE_H
#define PS_CORE_PREEMPTIBLE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/resources.h"

enum ps_alloc_class {
    PS_ALLOC_NON_PREEMPTIBLE = 0,
    PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE = 1,
    PS_ALLOC_PREEMPTIBLE = 2,
};
#define PS_ALLOC_CLASS_COUNT 3

/* "non_preemptible", "aggressively_preemptible", "preemptible"; "unknown" otherwise. */
const char *ps_alloc_class_name(int cls);

struct ps_preemptible_config {
    double aggressive_threshold;     /* aggressive_preemption_satisfaction_threshold, 0.2 */
    double threshold;                /* preemption_satisfaction_threshold, 1.0 */
    bool has_non_preemptible_usage_threshold;
    struct ps_resources non_preemptible_usage_threshold;   /* non_preemptible_resource_usage_
                                                               threshold (unset by default);
                                       keys not given must be PS_RES_INFINITE, as upstream */
    struct ps_resources total;       /* total resource limits of the tree (for shares) */
};

/* Defaults above; total is zero and must be set. */
void ps_preemptible_config_init(struct ps_preemptible_config *config);

struct ps_preemptible;

/* A new, empty set with a zero fair share (nothing is below a zero bound, so allocations are
 * preemptible until the first ps_preemptible_update). NULL on out of memory. */
struct ps_preemptible *ps_preemptible_new(const struct ps_preemptible_config *config);
void ps_preemptible_free(struct ps_preemptible *p);   /* NULL is a no-op */

/* New fair share / demand share / config after a fair share update; rebalances. */
void ps_preemptible_update(struct ps_preemptible *p, const struct ps_share *fair_share,
                           const struct ps_share *demand_share,
                           const struct ps_preemptible_config *config);

/* Errors: PS_EINVAL (duplicate id, negative usage), PS_ENOMEM. */
int ps_preemptible_add(struct ps_preemptible *p, int64_t id, int64_t start_time_ms,
                       struct ps_resources usage, struct ps_error *err);
/* Errors: PS_EINVAL (unknown id, negative usage). */
int ps_preemptible_set_usage(struct ps_preemptible *p, int64_t id, struct ps_resources usage,
                             struct ps_error *err);
int ps_preemptible_remove(struct ps_preemptible *p, int64_t id, struct ps_error *err);

/* The class of allocation id (enum ps_alloc_class), or -1 if unknown. */
int ps_preemptible_class(const struct ps_preemptible *p, int64_t id);
/* Where allocation id is kept (>= 0), or -1 if unknown: a hint for ps_preemptible_class_at,
 * valid until the allocation is removed. Hosts keep it with the allocation (struct
 * ps_node_allocation.slot), which saves the id lookup's cache misses when classes are read on
 * every heartbeat. */
int ps_preemptible_slot(const struct ps_preemptible *p, int64_t id);
/* ps_preemptible_class, reading slot when it holds allocation id; any other slot value (stale,
 * another list's, out of range) falls back to the lookup by id. */
int ps_preemptible_class_at(const struct ps_preemptible *p, int64_t id, int slot);
/* Start time and usage of a known allocation; false if unknown. */
bool ps_preemptible_get(const struct ps_preemptible *p, int64_t id, int64_t *start_time_ms,
                        struct ps_resources *usage);
int ps_preemptible_count(const struct ps_preemptible *p, enum ps_alloc_class cls);
struct ps_resources ps_preemptible_usage(const struct ps_preemptible *p, enum ps_alloc_class cls);
int ps_preemptible_running_count(const struct ps_preemptible *p);
/* Whether the operation can have preemptible allocations (fair share != demand share). */
bool ps_preemptible_is_preemptible(const struct ps_preemptible *p);

/* Ids of one class in list order (oldest first) into out[0..cap); returns the class size. */
int ps_preemptible_list(const struct ps_preemptible *p, enum ps_alloc_class cls, int64_t *out,
                        int cap);

#endif
