/* pool_satisfaction.h — each pool's digest of its operations' satisfaction (upstream's
 * per-pool satisfaction digest, profiled as scheduler/pools/operation_satisfaction_distribution).
 *
 * After a fair share update, every operation of the update (dynamic.valid, fs_index >= 0) adds
 * its local satisfaction ratio (dynamic.satisfaction_ratio: usage / fair share, at most
 * InfiniteSatisfactionRatio 1e9) to the digest of its pool and of every ancestor up to the
 * root, so the root's digest holds all of the tree's operations. The digest is a histogram
 * digest configured by the tree's per_pool_satisfaction_digest (samples are clamped to its
 * bounds), read at per_pool_satisfaction_profiling_quantiles. Pure: reads the tree, allocates
 * its own scratch.
 */
#ifndef PS_CORE_POOL_SATISFACTION_H
#define PS_CORE_POOL_SATISFACTION_H

#include "core/error.h"
#include "core/pool_tree.h"

/* The quantiles of every pool's digest: out has (pool_count + 1) rows of quantile_count
 * values (per_pool_satisfaction_profiling_quantiles' count); row 0 is the root, row i + 1 is
 * ps_pool_tree_pool_at(tree, i). A pool without operations answers the empty digest's value
 * (default_value, else lower_bound). *out is malloc'ed (the caller frees it; NULL when there
 * are no quantiles). Errors: PS_ENOMEM, PS_EINVAL (a config that fails validation). */
int ps_pool_satisfaction_quantiles(const struct ps_pool_tree *tree, double **out, int *quantile_count,
                                   struct ps_error *err);

#endif
