/* tentative.h — tentative pool trees (upstream's tentative_pool_trees and the controller's
 * TTentativeTreeEligibility).
 *
 * An operation may name, besides its pool_trees, tentative pool trees: it also runs there, but
 * only as a trial. The spec keys:
 *   tentative_pool_trees              list of tree names; they must not intersect pool_trees,
 *                                     and pool_trees must be given ("Regular pool trees must
 *                                     be explicitly specified for tentative pool trees to work
 *                                     properly", "Regular and tentative pool trees must not
 *                                     intersect"); a missing one is an error ("Pool tree "x" not
 *                                     found") unless ignore_missing_pool_trees
 *   use_default_tentative_pool_trees  bool (false): without tentative_pool_trees, the scheduler
 *                                     config's default_tentative_pool_trees
 *   tentative_tree_eligibility        map (upstream's TTentativeTreeEligibilityConfig):
 *     sample_job_count                integer > 0 (10)
 *     max_tentative_job_duration_ratio number > 0 (10)
 *     min_job_duration                integer ms >= 0 (30000)
 *     ignore_missing_pool_trees       bool (false)
 *
 * Eligibility, per tentative tree (upstream's CanScheduleJob): until sample_job_count jobs
 * there have completed, at most (sample_job_count - completed) run there at once; a tree whose
 * jobs are slow is banned and takes no more jobs. A tree is slow (IsSlow) when at least
 * sample_job_count regular jobs have completed with a non-zero average duration, the tree's
 * average job duration is at least min_job_duration, and it is at least
 * max_tentative_job_duration_ratio times the regular average. The tree's average
 * (GetTentativeTreeAverageJobDuration) counts its completed jobs and, while they are fewer than
 * the sample, the time since its last job started as one more job. The check runs when any job completes and
 * periodically (upstream's check_tentative_tree_eligibility_period); the shell aborts a banned
 * tree's jobs (abort reason banned_in_tentative_tree) and erases the tree from the operation.
 */
#ifndef PS_CORE_TENTATIVE_H
#define PS_CORE_TENTATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/attr.h"
#include "core/error.h"

struct ps_tentative_eligibility_config {
    int sample_job_count;
    double max_tentative_job_duration_ratio;
    int64_t min_job_duration_ms;
    bool ignore_missing_pool_trees;
};

/* The keys of tentative_tree_eligibility, for the spec's table. */
extern const struct ps_attr_table ps_tentative_eligibility_table;
void ps_tentative_eligibility_init(struct ps_tentative_eligibility_config *cfg);

struct ps_tentative_tree {
    char *name;                     /* owned */
    int started, finished, completed;
    int64_t duration_sum_ms;        /* of its completed jobs */
    int64_t last_start_ms;          /* -1: no job started */
    bool banned;
};

/* One operation's eligibility state. */
struct ps_tentative_state {
    struct ps_tentative_eligibility_config cfg;
    struct ps_tentative_tree *trees;   /* owned */
    int count;
    int64_t regular_sum_ms;            /* completed jobs of the regular trees */
    int regular_count;
};

/* Sets up st for an operation's tentative trees (upstream's ParsePoolTrees): `listed` (its
 * tentative_pool_trees) when not empty, else, when use_default, `defaults` (duplicates once).
 * Trees for which exists() is false are left out when cfg->ignore_missing_pool_trees, else an
 * error. 0, PS_EINVAL, PS_ENOENT or PS_ENOMEM (then nothing to release). */
int ps_tentative_state_init(struct ps_tentative_state *st,
                            const struct ps_tentative_eligibility_config *cfg,
                            const struct ps_string_list *pool_trees,
                            const struct ps_string_list *listed, bool use_default,
                            const struct ps_string_list *defaults,
                            bool (*exists)(void *ctx, const char *tree), void *ctx,
                            struct ps_error *err);
void ps_tentative_state_release(struct ps_tentative_state *st);

/* Whether a vanilla operation (poolsched runs no other kind) joins tentative tree `tree` at its
 * start: not when the tree keeps vanilla operations out of its tentative trees (upstream's
 * NonTentativeOperationTypes of the tree), nor when the tree's pools refuse it (a count limit:
 * upstream's "Tentative tree is erased for operation because pool limits are violated"); then
 * false, and why says why (a tree left out by its type: why->code 0). tree may be NULL (gone):
 * true. */
struct ps_pool_tree;
struct ps_operation_spec;
bool ps_tentative_admit(const struct ps_pool_tree *tree, const char *tree_name, const char *op_id,
                        const char *user, const struct ps_operation_spec *spec,
                        struct ps_error *why);

/* The tree's entry, or NULL (tree is regular). */
struct ps_tentative_tree *ps_tentative_find(const struct ps_tentative_state *st, const char *tree);

/* Whether a job may start in tentative tree t now (upstream's CanScheduleJob). */
bool ps_tentative_can_schedule(const struct ps_tentative_state *st,
                               const struct ps_tentative_tree *t);

/* A job started in tree at now_ms (regular trees: nothing to count); the tree's last start is
 * the latest one counted. */
void ps_tentative_job_started(struct ps_tentative_state *st, const char *tree, int64_t now_ms);

/* A job of tree finished after duration_ms (completed or not). */
void ps_tentative_job_finished(struct ps_tentative_state *st, const char *tree, bool completed,
                               int64_t duration_ms);

/* Bans the slow trees that are not banned yet (FindAndBanSlowTentativeTrees); returns how many
 * were banned now and points newly[0..n) at them (newly has room for st->count). */
int ps_tentative_ban_slow(struct ps_tentative_state *st, int64_t now_ms,
                          struct ps_tentative_tree **newly);

#endif
