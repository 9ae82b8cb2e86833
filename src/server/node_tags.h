/* node_tags.h — a node's tags as the pool trees see them, changed while the node runs.
 *
 * A node's tags are the ones its agent reports (`poolsched node --tag`) plus the ones an admin
 * sets in //sys/cluster_nodes/<node>/@user_tags (YTsaurus's attribute: `set` replaces the list,
 * `set .../@user_tags/end "x"` appends, `remove` empties it). @tags is the union, in that order
 * without repeats. The user tags are stored, so they survive a restart, and can be set for a
 * node that has been seen (a heartbeat, a ban or earlier user tags).
 *
 * Whenever a node's tags change (either source) or a nodes_filter changes, the node belongs to
 * the tree it now matches (upstream TFairShareStrategy::OnNodeChangedFairShareTree): its running
 * jobs of operations of another tree are aborted with reason node_fair_share_tree_changed (at
 * the change, or at the node's next heartbeat when a tree's nodes_filter moved it). Tags that
 * match two trees make the node offline for the scheduler — its jobs are aborted (node_offline),
 * it offers nothing, and its heartbeats are refused with 409 naming both trees — and raise the
 * scheduler alert update_nodes_failed ("Failed to update some nodes", upstream's, with one inner
 * error per node: "Node tags update failed" with node_id, address, tags, and inside it "Node
 * belongs to more than one fair share tree" with matched_pool_trees). Fixing the tags (or the
 * filters) brings the node back at its next heartbeat, and the alert clears; so does silence
 * for node_offline_timeout (an agent refused at its first heartbeat exits).
 *
 * //sys/cluster_nodes/<node>/@ and //sys/scheduler/orchid/scheduler/nodes/<node> show `tags`
 * (the union), `user_tags`, `tree` and `scheduler_state` (online / offline). All under svc->mu.
 */
#ifndef PS_SERVER_NODE_TAGS_H
#define PS_SERVER_NODE_TAGS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "core/resources.h"

struct ps_service;
struct ps_svc_node;

/* The node's tags (agent's, then user tags not among them) as a new JSON list. */
json_t *ps_node_tags_json(const struct ps_svc_node *n);
/* The user tags as a new JSON list. */
json_t *ps_node_user_tags_json(const struct ps_svc_node *n);
/* Registers (or re-registers) the node in the strategy with its tags and limits. PS_EINVAL when
 * the tags match two trees (err names both); then n->tree_conflict is set. */
int ps_node_tags_register(struct ps_service *svc, struct ps_svc_node *n,
                          const struct ps_resources *limits, struct ps_error *err);
/* Aborts the node's running jobs scheduled in a tree other than the node's tree now. */
void ps_node_tags_check_tree(struct ps_service *svc, struct ps_svc_node *n, int64_t now_ms);
/* set/remove of @user_tags (attrs = ["user_tags"] or ["user_tags", "end"]); value NULL removes.
 * PS_EINVAL naming the key on a bad value. */
int ps_node_tags_set(struct ps_service *svc, struct ps_svc_node *n, char **attrs, size_t attr_count,
                     const json_t *value, struct ps_error *err);
/* The update_nodes_failed alert, if any node's tags match two trees (appended to list). */
void ps_node_tags_alerts(struct ps_service *svc, json_t *list);
/* Loads the stored user tags (at start and after a rollback). */
int ps_node_tags_reload(struct ps_service *svc, struct ps_error *err);
/* Frees the node's user tags. */
void ps_node_tags_release(struct ps_svc_node *n);

#endif
