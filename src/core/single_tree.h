/* single_tree.h — schedule_in_single_tree: an operation that lists several pool_trees runs in
 * one of them, chosen when it starts (upstream TFairShareStrategy::ChooseBestSingleTreeForOperation);
 * the others are its erased trees.
 *
 * For each tree (in pool_trees order) with nodes, and whose pool for the operation exists
 * (an explicit pool, or an ephemeral one already there) and has a fair share update behind it:
 * model demand share = the pool's demand share + the operation's demand / the tree's total;
 * reserve share = the pool's strong guarantee share - model demand share; the tree's score is
 * the smallest component of the reserve share over the resources the tree has (total > 0). The
 * highest score wins (the first on ties). A tree where the operation would wait (its pool or an
 * ancestor at max_running_operation_count) is not a candidate (upstream ignores trees where the
 * operation is not running); with consider_guarantees_for_single_tree neither is a tree whose
 * pool has no strong guarantee. Without a candidate: the first tree without nodes or pool state
 * (upstream picks one of them at random; poolsched the first, so runs repeat), else the first
 * where it would wait; with consider_guarantees_for_single_tree, or when there is no tree at
 * all, PS_EINVAL "Found no best tree for operation". Pure: reads the trees' last fair share
 * results and operation counts. */
#ifndef PS_CORE_SINGLE_TREE_H
#define PS_CORE_SINGLE_TREE_H

#include "core/error.h"
#include "core/op_spec.h"
#include "core/resources.h"

struct ps_strategy;

/* *best = the index into spec->pool_trees of the chosen tree. user names the operation's
 * ephemeral pool when its spec gives none. Every listed tree must exist (PS_ENOENT). */
int ps_strategy_choose_single_tree(const struct ps_strategy *s, const struct ps_operation_spec *spec,
                                   const char *user, struct ps_resources demand, int *best,
                                   struct ps_error *err);

/* The tree option necessary_resources_for_operation (upstream's): PS_EINVAL "Operation has zero
 * demand for resources which are necessary in tree ..." naming those of them the operation's
 * demand (every job at its shape) has none of. */
struct ps_pool_tree;
int ps_pool_tree_check_necessary_resources(const struct ps_pool_tree *tree,
                                           struct ps_resources demand, struct ps_error *err);

#endif
