/* strategy.h — all pool trees of a cluster, its nodes and its operations (YTsaurus's
 * fair-share strategy, minus scheduling: the scheduler loop drives this model).
 *
 * Trees: named, created with a config; one may be the default tree (//sys/pool_trees/@default_tree),
 * used by operations whose spec has no pool_trees.
 *
 * Nodes: registered with tags and resource limits; a node joins the one tree whose
 * nodes_filter it matches. Matching two trees is refused with an error naming both; matching
 * none is accepted (the node is known and waits for a tree, see nodes.h). Trees are never
 * allowed to overlap: adding a tree or changing a nodes_filter that would make a registered
 * node match two trees is refused the same way.
 *
 * Operations: started with a user, a start time and a spec (op_spec.h); they join every tree
 * of spec.pool_trees (else the default tree), each with its per-tree settings. The start is
 * checked in every tree first, so a refusal in one tree leaves all trees untouched.
 * States: starting (inside the start call) -> pending (waiting for a max_running_operation_count
 * slot in every one of its trees) -> running (running in at least one tree: it schedules in the
 * trees where it runs and waits in the others, as upstream) -> completed / failed /
 * aborted (after ps_strategy_finish_operation; the operation leaves every tree and is kept,
 * with its final state, until ps_strategy_forget_operation).
 *
 * Events: each call that changes the strategy records the operations that became running
 * during it (ps_strategy_activated_*), so that the service and the simulator can log
 * "operation_running" without polling.
 */
#ifndef PS_CORE_STRATEGY_H
#define PS_CORE_STRATEGY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/nodes.h"
#include "core/op_spec.h"
#include "core/operation.h"
#include "core/pool_tree.h"
#include "core/resources.h"
#include "core/value.h"

enum ps_operation_state {
    PS_OP_STARTING = 0,
    PS_OP_PENDING = 1,
    PS_OP_RUNNING = 2,
    PS_OP_COMPLETED = 3,
    PS_OP_FAILED = 4,
    PS_OP_ABORTED = 5,
};

/* "starting", "pending", "running", "completed", "failed", "aborted". */
const char *ps_operation_state_name(enum ps_operation_state state);

struct ps_operation {
    char *id;                          /* owned */
    char *user;                        /* owned */
    int64_t start_time_ms;
    int64_t finish_time_ms;            /* -1 until finished */
    struct ps_operation_spec spec;     /* owned copy */
    enum ps_operation_state state;
    bool suspended;
    int tree_count;
    struct ps_tree_op **memberships;   /* one per tree, in pool_trees order (NULL: the tree was
                                          removed, ps_strategy_remove_tree); none once finished */
    char **tree_names;                 /* owned, parallel to memberships (kept after finish) */
    int index;                         /* private */
    void *host;                        /* the host's record of this operation (the service's
                                          struct ps_svc_op); never read by the engine */
};

/* The host record of the operation a tree membership belongs to (struct ps_operation.host), or
 * NULL. A membership's user_data is its struct ps_operation: hosts never write it. */
void *ps_tree_op_host(const struct ps_tree_op *member);

struct ps_strategy;

struct ps_strategy *ps_strategy_new(void);     /* NULL when out of memory */
void ps_strategy_free(struct ps_strategy *s);  /* NULL is a no-op; frees trees, nodes, operations */

/* ---- trees ------------------------------------------------------------------------------- */

/* template_pool_tree_config_map (tree_template.h): checks map (NULL or null: none) and puts
 * every tree, and every tree added later, under the templates matching its name. All or
 * nothing: a template error, or a tree whose config would break (a rule of its pools, a node
 * in two trees), refuses the whole map with the tree named. */
int ps_strategy_set_tree_templates(struct ps_strategy *s, const struct ps_value *map,
                                   struct ps_error *err);
/* The map in force (an empty map when none). */
const struct ps_value *ps_strategy_tree_templates(const struct ps_strategy *s);
/* Tree config keys the scheduler's own config gives every tree (upstream's scheduler options
 * that poolsched keeps per tree, e.g. allowed_node_resources_overcommit_duration): beneath the
 * templates and the tree's explicit config. Applies to the trees present and to later ones;
 * all or nothing as ps_strategy_set_tree_templates. map NULL: none. */
int ps_strategy_set_tree_defaults(struct ps_strategy *s, const struct ps_value *map,
                                  struct ps_error *err);

/* Adds a tree with a config map (NULL: defaults). Refused when the name exists (PS_EEXIST),
 * the config is bad (PS_EINVAL) or a registered node would match two trees (PS_EINVAL,
 * naming the node and both trees). Registered nodes matching it join it. */
int ps_strategy_add_tree(struct ps_strategy *s, const char *name, const struct ps_value *config,
                         struct ps_error *err);
/* The moment the scheduler connected (upstream's connection time): for node_reconnection_timeout
 * after it, every tree treats scheduling tag filter limits as unlimited while nodes come back
 * (nodes.h). Applies to the trees present and to those added later. The service calls it at
 * start with its clock and again after a restart; the simulator with 0, the epoch, as upstream's
 * simulator does. */
void ps_strategy_set_connection_time(struct ps_strategy *s, int64_t connected_at_ms);

/* Removes a tree; refused (PS_ESTATE, naming one) while an operation runs only in it (the host
 * aborts those first, upstream's "No suitable fair-share trees to schedule operation").
 * Operations that also run in other trees lose it (upstream's erased trees): their membership
 * there becomes NULL and they go on in the others. Its nodes belong to no tree afterwards. If
 * it was the default tree there is no default tree. */
int ps_strategy_remove_tree(struct ps_strategy *s, const char *name, struct ps_error *err);
struct ps_pool_tree *ps_strategy_find_tree(const struct ps_strategy *s, const char *name);
/* Trees in creation order. */
int ps_strategy_tree_count(const struct ps_strategy *s);
struct ps_pool_tree *ps_strategy_tree_at(const struct ps_strategy *s, int index);
/* name NULL clears the default tree; an unknown name is PS_ENOENT. */
int ps_strategy_set_default_tree(struct ps_strategy *s, const char *name, struct ps_error *err);
const char *ps_strategy_default_tree(const struct ps_strategy *s);   /* NULL when none */

struct ps_pool_access;
/* Who may use which pools (pool_acl.h): the caller's groups and //sys/pool_trees' ACL, which
 * it keeps alive and unchanged while set (NULL: the defaults). */
void ps_strategy_set_access(struct ps_strategy *s, const struct ps_pool_access *access);
const struct ps_pool_access *ps_strategy_access(const struct ps_strategy *s);

/* ---- nodes ------------------------------------------------------------------------------- */

/* Registers a node, or re-registers it with new tags and limits (it may change tree). On
 * error (bad input, two matching trees) nothing changed. */
int ps_strategy_register_node(struct ps_strategy *s, const char *id, const char *const *tags,
                              int tag_count, const struct ps_resources *resource_limits,
                              struct ps_error *err);
int ps_strategy_unregister_node(struct ps_strategy *s, const char *id, struct ps_error *err);
struct ps_node *ps_strategy_find_node(const struct ps_strategy *s, const char *id);
/* Nodes in registration order. */
int ps_strategy_node_count(const struct ps_strategy *s);
/* How many distinct tag sets registered nodes have had: every node's tagset is below it. Ids
 * are never reused, so a result computed for a tag set (a filter's verdict) stays valid. */
int ps_strategy_tagset_count(const struct ps_strategy *s);
struct ps_node *ps_strategy_node_at(const struct ps_strategy *s, int index);

/* ---- operations -------------------------------------------------------------------------- */

/* Starts an operation whose spec document is spec_map (NULL: empty spec). On success *out
 * (may be NULL) is the operation, pending or running. Errors: PS_EINVAL (bad spec, unknown
 * pool_trees entry is PS_ENOENT, no tree at all), PS_EEXIST (id in use), and every refusal of
 * the trees (operation.h: PS_ELIMIT, PS_EPERM, PS_EINVAL), prefixed with the tree's name. */
int ps_strategy_start_operation(struct ps_strategy *s, const char *id, const char *user,
                                int64_t start_time_ms, const struct ps_value *spec_map,
                                struct ps_operation **out, struct ps_error *err);
/* The same with a parsed spec (copied). */
int ps_strategy_start_operation_spec(struct ps_strategy *s, const char *id, const char *user,
                                     int64_t start_time_ms, const struct ps_operation_spec *spec,
                                     struct ps_operation **out, struct ps_error *err);

/* Restores an active operation after a restart (ps_pool_tree_restore_operation in each of its
 * trees that still exists; PS_ENOENT when none does): restore(ctx, tree_name, &r) fills the
 * pool and running state it had in that tree (left {NULL, false}: the spec's pool, pending
 * until there is room). No admission checks. */
typedef void (*ps_strategy_restore_fn)(void *ctx, const char *tree_name,
                                       struct ps_tree_op_restore *r);
int ps_strategy_restore_operation(struct ps_strategy *s, const char *id, const char *user,
                                  int64_t start_time_ms, const struct ps_value *spec_map,
                                  ps_strategy_restore_fn restore, void *restore_ctx,
                                  struct ps_operation **out, struct ps_error *err);

/* Finishes an operation with final_state (completed, failed or aborted): it leaves every tree,
 * which may start pending operations (see activated). PS_ENOENT for an unknown id, PS_ESTATE
 * when already finished, PS_EINVAL for a non-final state. */
int ps_strategy_finish_operation(struct ps_strategy *s, const char *id,
                                 enum ps_operation_state final_state, int64_t now_ms,
                                 struct ps_error *err);
/* Drops a finished operation (PS_ESTATE while it is active). */
int ps_strategy_forget_operation(struct ps_strategy *s, const char *id, struct ps_error *err);

/* Suspends or resumes an active operation: it stays in its pools and counts, and reports the
 * pending reason "operation suspended". */
int ps_strategy_suspend_operation(struct ps_strategy *s, const char *id, bool suspended,
                                  struct ps_error *err);

/* update_op_parameters: applies params (a map of the spec's run-time keys: pool, weight,
 * max_share_ratio, resource_limits, scheduling_tag_filter, scheduling_options_per_pool_tree;
 * any other key is PS_EINVAL, ps_operation_spec_check_runtime) to the spec of an active
 * operation and to its memberships; a changed pool moves the operation (checked in every tree
 * first). On error nothing changed. */
int ps_strategy_update_operation(struct ps_strategy *s, const char *id, const struct ps_value *params,
                                 struct ps_error *err);

/* Takes a running operation out of one of its trees (upstream's UnregisterOperationFromTree,
 * e.g. a banned tentative tree): its membership there is gone (NULL, as a removed tree's), it
 * goes on in the others. PS_ENOENT (no such operation or not in tree), PS_ESTATE (its last
 * tree). */
int ps_strategy_erase_operation_tree(struct ps_strategy *s, const char *id, const char *tree,
                                     struct ps_error *err);
struct ps_operation *ps_strategy_find_operation(const struct ps_strategy *s, const char *id);
/* Operations (active and finished, not forgotten) in an order that depends only on the
 * sequence of calls. */
int ps_strategy_operation_count(const struct ps_strategy *s);
struct ps_operation *ps_strategy_operation_at(const struct ps_strategy *s, int index);
/* The membership of an operation in the tree named tree, or NULL. */
struct ps_tree_op *ps_operation_membership(const struct ps_operation *op, const char *tree);

/* Operations that became running during the last changing call. */
int ps_strategy_activated_count(const struct ps_strategy *s);
struct ps_operation *ps_strategy_activated(const struct ps_strategy *s, int index);

#endif
