/* snapshot.h — the fair-share snapshot file (shared/spec/formats.md section 2) as engine input.
 *
 * ps_snapshot_parse reads the JSON text of a snapshot, checks all of it, and builds what
 * ps_fs_update_run takes: the element and pool arrays, the tree options and the update input. Nothing is
 * half-built: on any error there is no snapshot, and the message names the path, the value and
 * the reason, e.g. `pools[1].weight: must be a positive number from 1.4901161193847656e-08 to
 * 67108864, got "heavy"`.
 *
 * Element order: element 0 is `<Root>`; then the pools, parents before children and siblings in
 * the order of the "pools" list (a pool may be listed before its parent); then the operations in
 * the order of the "operations" list. So the children of a pool are its child pools, then its
 * operations, each group in list order.
 *
 * One schema per setting: the snapshot has no rules of its own for configuration keys.
 * - `tree` is a pool tree's config, read by the tree config's table (tree_config.h: every key
 *   and alias the service accepts, e.g. infer_weight_from_min_share_ratio_multiplier, with its
 *   range and default; keys that do not affect the fair share computation are accepted and
 *   unused). tree.nodes_filter filters the nodes; forbid_immediate_operations_in_root (true by
 *   default, as YTsaurus) refuses operations in `<Root>`.
 * - `pools[]`: name, parent, accumulated_resource_volume and last_integral_share_ratio (in
 *   [0, 1]: integral state carried from a previous update) are the snapshot's; every other key
 *   is the pool config's (pool_config.h), read by its table, checked by
 *   ps_pool_config_validate and turned into engine input by ps_pool_config_fs_input, as the
 *   service does. Names follow ps_pool_name_check; an ephemeral pool `<pool>$<user>` may be
 *   given, each part following the same rule. Pools and operations are separate namespaces.
 * - `operations[]`: id, pool, start_time, demand, usage and pending_job_count (alias
 *   pending_allocation_count) are the snapshot's state; weight, max_share_ratio,
 *   resource_limits, scheduling_tag_filter, is_gang and the other operation spec keys are read
 *   by the spec's table (op_spec.h). A key neither knows is an error (did you mean ...?).
 * - Errors of the tables carry the key path with `/` inside a key:
 *   `pools[0].integral_guarantees/relaxed_share_multiplier_limit: must be in [1, 10], got 11`.
 *   Two aliases of one key in one map are refused, naming both.
 * - Defaults are YTsaurus's; `now` defaults to 0.
 * - `nodes`: each node is {"id", "resource_limits", "tags"}; the node's resource_limits is what
 *   it has, so an omitted key there is 0 (not unlimited). The total is the sum over nodes
 *   matching tree.nodes_filter; an element's filter_limits is the sum over nodes matching both
 *   tree.nodes_filter and its scheduling_tag_filter (unlimited when it has none).
 * - With `total_resources`, a scheduling_tag_filter is checked but cannot limit anything; the
 *   snapshot keeps a note saying so (shown among the output's alerts).
 */
#ifndef PS_IO_SNAPSHOT_H
#define PS_IO_SNAPSHOT_H

#include <stddef.h>

#include "core/error.h"
#include "core/fair_share.h"

#define PS_SNAPSHOT_ROOT_NAME "<Root>"

struct ps_snapshot {
    struct ps_fs_element *elems;   /* count elements, ordered as described above */
    int count;
    int pool_count;                /* elements [0, pool_count) are <Root> and the pools */
    struct ps_fs_pool *pools;      /* pool_count entries: element i < pool_count names pools[i] */
    int *source_index;             /* per element: its index in "pools" or "operations"; -1 for
                                      the root */
    struct ps_fs_options options;
    struct ps_fs_input input;
    char **notes;                  /* one-line remarks about the input (ignored filters) */
    int note_count;
    int node_count;                /* nodes given, and those matching tree.nodes_filter */
    int matched_node_count;
};

/* Parses and checks text[0..len) (need not be NUL-terminated). On success *out owns a new
 * snapshot (free with ps_snapshot_free). Errors: PS_EINVAL for any bad input, with err naming
 * the path and the reason; PS_ENOMEM. */
int ps_snapshot_parse(const char *text, size_t len, struct ps_snapshot **out,
                      struct ps_error *err);

/* Frees the snapshot, its element names and notes. NULL is a no-op. */
void ps_snapshot_free(struct ps_snapshot *snap);

#endif
