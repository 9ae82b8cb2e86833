/* event_replay.h — the scheduler's event log (docs/api.md "Event log") as a simulator scenario
 * (docs/formats.md section 3), and proposed changes applied to it: the pure part of
 * `poolsched what-if` (docs/what-if.md). No I/O: rows (an event_record.h record) in, JSON out.
 *
 * The window [since_ms, until_ms] (ms since the epoch) becomes scenario time 0 .. until - since
 * (the scenario's duration). From the rows (oldest first; rows after until are ignored):
 *   - nodes: every node that registered at or before until is a node group of one node named
 *     after its address (node id "<address>-0"), with its resources and tags as of since; a
 *     node not online then starts with zero resources. Later node_registered / node_updated /
 *     node_offline rows (and nodes_info entries) become set_node_resources events (offline:
 *     zero resources), changed tags set_node_tags events, where they differ from what the
 *     node had;
 *   - pools: the pools_info row at or before since (else the first one in the window) gives the
 *     trees and their pools (keys with null values left out); later pools_info rows become
 *     set_pool_attribute events for the keys that changed; a pool that first appears later is
 *     listed from the start with its first config;
 *   - trees: the pool_trees_info rows (poolsched's) likewise give each tree's config (its
 *     nodes_filter puts each node in its tree), later changes as set_tree_attribute events, and
 *     the default tree; a tree no such row describes (a log written before them) takes
 *     tree_attributes below;
 *   - operations: each operation_started at or before until with work in the window (started
 *     in it, or with a job ending after since) is an operation at max(0, started - since), user
 *     authenticated_user, spec the recorded spec without "tasks" (the commands), with
 *     pool_trees the trees of scheduling_info_per_tree when the spec names none (so it runs in
 *     the trees it ran in, whatever the default tree); its work is its
 *     jobs that completed or failed in the window (a failed job ran and held its resources;
 *     the replay cannot know that it fails) and those still running at until, each with the
 *     part of its run time inside the window and its recorded resources; jobs aborted
 *     (preemption, node loss) are left out: the replay makes its own such decisions. The
 *     jobs that never started by until (of an operation that had not ended) are added. Each
 *     recorded task is one scenario task: its resources (operation_started's tasks), its
 *     jobs' mean duration in the window (when none ran: the mean of the completed jobs of
 *     tasks of that name in every operation; none: the task is left out);
 *   - runtime_parameters_info rows become update_operation events.
 * Times are whole ms; every list is in row order, so the same rows give the same scenario. */
#ifndef PS_IO_EVENT_REPLAY_H
#define PS_IO_EVENT_REPLAY_H

#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "io/event_record.h"

struct ps_event_replay_options {
    int64_t since_ms;                     /* window start, ms since the epoch */
    int64_t until_ms;                     /* window end, > since_ms */
    int64_t heartbeat_period_ms;          /* the service's, > 0 */
    int64_t fair_share_update_period_ms;  /* the service's, > 0 */
    /* NULL: the default tree of the last pool_trees_info row, else the first tree of the
     * pools_info row */
    const char *default_tree;
    /* {tree: attributes} (the trees' configs, as `get //sys/pool_trees/<tree>/@config` gives
     * them; keys with null values are left out) for the trees no pool_trees_info row
     * describes, or NULL: such trees have the defaults. Borrowed. */
    const json_t *tree_attributes;
};

/* The scenario (a new JSON object, caller decrefs) for the rows of rec (event log rows, oldest
 * first; io/event_record.h). Errors: PS_EINVAL (a window with until <= since; no pools_info row
 * at or before until: "the event log has no pools_info row ..."; a row whose keys do not have
 * the documented types, naming its index and key: "event log row 3: trees/gpu: must be a map
 * ..."), PS_ENOMEM. */
int ps_event_replay_scenario(const struct ps_event_record *rec,
                             const struct ps_event_replay_options *opts, json_t **out,
                             struct ps_error *err);

/* Applies one proposed change to scenario (as made above), from the start of the replay:
 * path is //sys/pool_trees/<tree>/@<key> (a tree attribute) or
 * //sys/pool_trees/<tree>/<pool>[/<pool>...]/@<key> (an attribute of the last pool named;
 * //sys/pools/... is the default tree); value the new value (borrowed), or NULL to remove the
 * attribute (back to its default). Recorded set_pool_attribute / set_tree_attribute events of
 * that key are dropped, so the change holds for the whole window. Errors: PS_EINVAL naming the
 * path (not of that shape, no such tree, no such pool), PS_ENOMEM. The value itself is checked
 * when the scenario is parsed and simulated. */
int ps_event_replay_apply(json_t *scenario, const char *path, const json_t *value,
                          struct ps_error *err);

#endif
