/* starvation.h — scheduling status and starvation of pools and operations.
 *
 * After every fair share update the caller runs ps_starvation_update over the tree (same
 * element indices as the struct ps_fs_element array: 0 is the root, parent < child). It decides,
 * per element, as YTsaurus's GetStatusImpl / CheckForStarvationImpl (shared/spec/semantics.md
 * 3.1):
 *
 *   status      normal or below_fair_share: bound = min(fair_share x tolerance, demand_share),
 *               below iff bound strictly dominates the usage share on the non-blocked resources
 *               (blocked: fair_share_r >= demand_share_r; if all are blocked, on any resource).
 *               Operations use tolerance 1 when fair_share + 1e-4 >= demand everywhere, and an
 *               unschedulable operation is always normal.
 *   starvation  non_starving; starving once below fair share for strictly longer than the
 *               starvation timeout; aggressively_starving after the aggressive timeout when
 *               aggressive starvation is enabled. Recovery (normal) resets it at once.
 *
 * Effective settings: a pool takes its own value or its parent's (the root takes the tree
 * config). An operation's tolerance is min(parent, spec) and its timeouts max(parent, spec);
 * aggressive starvation follows the parent. Operation timeouts are scaled by
 * pending / allocation_count_preemption_timeout_coefficient when that ratio is below 1.
 * With enable_pool_starvation = false pools never starve. The root never starves.
 *
 * The lowest starving ancestor of an element is the element itself when it is not
 * non_starving, else its parent's; the aggressive one likewise with aggressively_starving.
 * The preemptive stages (preempt.h) read them.
 *
 * The persistent state (below_fair_share_since_ms) lives in the element and must be kept by the
 * caller from update to update (keep the array, or copy the field when rebuilding the tree).
 * Pure: time comes in as now_ms.
 */
#ifndef PS_CORE_STARVATION_H
#define PS_CORE_STARVATION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/fair_share.h"
#include "core/resources.h"

#define PS_STARVATION_NEVER INT64_MIN    /* below_fair_share_since_ms: not below fair share */

enum ps_sched_status { PS_STATUS_NORMAL = 0, PS_STATUS_BELOW_FAIR_SHARE = 1 };

enum ps_starvation_status {
    PS_NON_STARVING = 0,
    PS_STARVING = 1,
    PS_AGGRESSIVELY_STARVING = 2,
};

const char *ps_sched_status_name(enum ps_sched_status status);           /* "normal", ... */
const char *ps_starvation_status_name(enum ps_starvation_status status); /* "non_starving", ... */

/* Tree-wide settings (TStrategyTreeConfig). ps_starvation_config_init gives the defaults. */
struct ps_starvation_config {
    double tolerance;                          /* fair_share_starvation_tolerance, 0.8 */
    int64_t timeout_ms;                        /* fair_share_starvation_timeout, 30 s */
    int64_t aggressive_timeout_ms;             /* fair_share_aggressive_starvation_timeout, 120 s */
    bool enable_aggressive_starvation;         /* false */
    bool enable_pool_starvation;               /* true */
    double allocation_count_preemption_timeout_coefficient;   /* 1.0 */
};

void ps_starvation_config_init(struct ps_starvation_config *config);

/* Values specified on a pool or in an operation's spec; unset fields inherit. */
struct ps_starvation_settings {
    bool has_tolerance, has_timeout, has_aggressive_timeout, has_enable_aggressive;
    double tolerance;
    int64_t timeout_ms;
    int64_t aggressive_timeout_ms;
    bool enable_aggressive;                    /* pools only (operations follow the parent) */
};

struct ps_starvation_element {
    /* inputs */
    enum ps_element_kind kind;
    int parent;                                /* -1 for the root */
    struct ps_share fair_share;                /* out.fair_share.total of the update */
    struct ps_share demand_share;
    struct ps_share usage_share;               /* live usage / total */
    bool schedulable;                          /* operations: false -> always normal */
    int64_t pending_count;                     /* operations: pending allocations */
    struct ps_starvation_settings spec;
    /* persistent, in/out: PS_STARVATION_NEVER initially */
    int64_t below_fair_share_since_ms;
    /* outputs */
    enum ps_sched_status status;
    enum ps_starvation_status starvation;
    enum ps_starvation_status previous_starvation;   /* before this update */
    double effective_tolerance;
    int64_t effective_timeout_ms;
    int64_t effective_aggressive_timeout_ms;
    bool aggressive_enabled;
    int lowest_starving_ancestor;               /* element index or -1 */
    int lowest_aggressively_starving_ancestor;  /* element index or -1 */
};

/* Sets inputs to defaults (nothing specified, schedulable, never below fair share). */
void ps_starvation_element_init(struct ps_starvation_element *e, enum ps_element_kind kind,
                                int parent);

/* One starvation check over elems[0..count) at now_ms. Writes the outputs and updates
 * below_fair_share_since_ms. *changed_count (if not NULL) receives how many elements changed
 * their starvation status (starvation != previous_starvation): the caller emits
 * starvation_status_changed for those. Errors: PS_EINVAL (structure: root first, parents before
 * children; a tolerance outside [0, 10] or a negative timeout), with the element named. */
int ps_starvation_update(struct ps_starvation_element *elems, int count,
                         const struct ps_starvation_config *config, int64_t now_ms,
                         int *changed_count, struct ps_error *err);

/* The earliest time after after_ms at which ps_starvation_update over the same inputs would
 * change some element's starvation status with time alone (a starvation timeout expiring),
 * given elems as the last update at after_ms left them; INT64_MAX when none would. A caller
 * whose inputs did not change may skip the checks before it: they would change nothing. */
int64_t ps_starvation_next_change_ms(const struct ps_starvation_element *elems, int count,
                                     const struct ps_starvation_config *config,
                                     int64_t after_ms);

/* IsStrictlyDominatesNonBlocked(lhs, rhs) of semantics.md 3.1 for an element with the given
 * fair and demand shares. Used by the preemptible lists too. */
bool ps_strictly_dominates_non_blocked(const struct ps_share *fair, const struct ps_share *demand,
                                       const struct ps_share *lhs, const struct ps_share *rhs);

#endif
