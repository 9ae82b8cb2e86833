/* tree_fs.h — a pool tree as the fair-share engine's element array, and the results back.
 *
 * One fair share update of a tree is:
 *
 *     struct ps_tree_fs fs;                 // once, reused by every update
 *     ps_tree_fs_init(&fs);
 *     ...
 *     ps_pool_tree_build_fs(tree, &fs, now_ms, err);          // tree -> fs.elems, fs.input
 *     ps_fs_update_run(update, fs.elems, fs.count, fs.fs_pools, fs.pool_count, &fs.options,
 *                      &fs.input, err);
 *     ps_pool_tree_apply_fs(tree, &fs, err);                  // results -> pools, operations
 *
 * The array (fair_share.h's contract): element 0 is the root; every parent comes before its
 * children (breadth-first); siblings are child pools in creation order, then operations by
 * start time, then id (a total order: ids are unique). Only running operations are included
 * (pending operations are disabled elements upstream). Every input is filled: weights,
 * max_share_ratio, specified resource_limits, filter limits from the tree's nodes
 * (nodes.h), mode and fifo_sort_parameters, strong and integral guarantees, the integral state
 * carried in the pools, and each operation's demand, usage, start time, pending job count and
 * gang flag. fs.options come from the tree config; fs.input has the tree's total resources,
 * now_ms and the time of the previous applied update.
 *
 * Mapping: fs.pools[i] / fs.ops[i] is the pool / operation of element i (the other is NULL);
 * pool->fs_index and op->fs_index give the element of a pool or operation (-1 when absent).
 * Element names point into the tree.
 *
 * The build borrows the tree: between build and apply the tree must not change (no pool or
 * operation added, removed or moved, no config change, no node change). apply refuses with
 * PS_ESTATE when it did; the scheduler then builds again. Operations' demand, usage and
 * pending job counts may be updated in between (they are read at build time).
 * A steady-state build does not allocate: buffers grow only when the tree does.
 *
 * Every such change bumps the tree's generation, so a build into fs last built from the same
 * tree at its current generation keeps that build's elements, their order, mapping and names
 * (fs.kept is then true; a caller may have pointed the names elsewhere, see tree_sched.c) and
 * writes every input again; the array is the same as a build from scratch would give.
 */
#ifndef PS_CORE_TREE_FS_H
#define PS_CORE_TREE_FS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/fair_share.h"
#include "core/operation.h"
#include "core/pool_tree.h"

struct ps_tree_fs_key;

struct ps_tree_fs {
    struct ps_fs_element *elems;
    struct ps_pool **pools;          /* per element: its pool, NULL for operations */
    struct ps_tree_op **ops;         /* per element: its operation, NULL for pools */
    int count;
    struct ps_fs_pool *fs_pools;     /* pool entries by pool index, the root's last */
    int pool_count;                  /* pools + 1 */
    struct ps_fs_options options;
    struct ps_fs_input input;
    bool kept;                       /* the last build kept the elements of the one before */

    /* private */
    int capacity;
    uint64_t generation;
    const struct ps_pool_tree *tree;
    int *first_child, *next_sibling; /* per pool index (root last) */
    int *op_begin, *op_end;          /* per pool index: its range in keys */
    int *op_base;                    /* per pool index: element of its first operation */
    int *queue;                      /* breadth-first queue of pool indices */
    struct ps_tree_fs_key *keys;     /* running operations by (pool, start time, id) */
    struct ps_tree_fs_key *keys_tmp; /* the sort's scratch */
    uint64_t *config_versions;       /* per element: the config_version of the pool its input was
                                        filled from, 0: none or a weight from historic usage */
    int pool_capacity, op_capacity;
};

void ps_tree_fs_init(struct ps_tree_fs *fs);
void ps_tree_fs_release(struct ps_tree_fs *fs);

/* Fills fs from the tree (see above). Returns 0 or PS_ENOMEM. */
int ps_pool_tree_build_fs(struct ps_pool_tree *tree, struct ps_tree_fs *fs, int64_t now_ms,
                          struct ps_error *err);

/* Copies the results of an update run on fs back into the tree: the integral state of every
 * pool (accumulated volume, last integral share ratio) for the next update, the dynamic
 * characteristics of every pool and running operation (pool_tree.h, struct
 * ps_element_dynamic), and now_ms as the previous update time. Operations that were not in
 * the build have their dynamic characteristics marked invalid. PS_ESTATE (and nothing
 * copied) when the tree changed since the build or fs was built from another tree. */
int ps_pool_tree_apply_fs(struct ps_pool_tree *tree, const struct ps_tree_fs *fs, struct ps_error *err);

#endif
