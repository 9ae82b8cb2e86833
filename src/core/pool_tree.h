/* pool_tree.h — one pool tree: its config, its pools, and the validation of every change.
 *
 * A tree has a name, a config (tree_config.h), a root pool `<Root>` and pools with names
 * unique within the tree. Pools are explicit (created by a user, configured through
 * pool_config.h) or ephemeral (created for an operation whose pool does not exist, see
 * operation.h; they vanish with their last operation).
 *
 * Every structural change (create, remove, move, set attribute, tree config) is validated
 * against the rest of the tree *before* it is applied; a refused change leaves the tree
 * exactly as it was. The rules are upstream's (the master's TSchedulerPool validation and
 * TPoolConfig::Validate):
 *   - pool-level rules of ps_pool_config_validate;
 *   - a strong guarantee for any resource needs one for the main resource (cpu);
 *   - for strong_guarantee_resources, integral_guarantees/burst_guarantee_resources and
 *     integral_guarantees/resource_flow, per resource: a child may set it only if its parent
 *     (other than the root) sets it, and the children's sum must not exceed the parent's;
 *   - an integral pool (guarantee_type burst or relaxed) cannot have children with integral
 *     resources;
 *   - a pool in fifo mode cannot have child pools;
 *   - a pool is at most PS_POOL_TREE_DEPTH_LIMIT levels below the root (the root's children
 *     are at depth 1), checked for its whole subtree when it is created or moved.
 * Messages name the pool(s) involved, the key and the values.
 *
 * Counts: operation_count (started: pending + running) and running_operation_count of a pool
 * include its whole subtree, so they propagate to every ancestor up to the root. Limits are
 * the pool's own or the tree's per-pool defaults; the root's are the tree's
 * max_operation_count and max_running_operation_count (semantics.md 2.1).
 *
 * Divergences from upstream, on purpose:
 *   - removing a pool with children or operations is refused (upstream turns it into an
 *     ephemeral pool); creating an explicit pool whose name is an ephemeral pool's converts
 *     that pool into an explicit one, as upstream does.
 *   - ephemeral pools cannot be configured, moved or be the parent of explicit pools (they
 *     are not Cypress objects upstream either).
 *
 * Ownership: the tree owns its pools and operation memberships; pointers to them stay valid
 * until the pool or operation is removed (ephemeral pools disappear when their last
 * operation is removed) or the tree is freed. Nodes are borrowed (nodes.h).
 */
#ifndef PS_CORE_POOL_TREE_H
#define PS_CORE_POOL_TREE_H

#include "core/historic_usage.h"
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/fair_share.h"
#include "core/formula.h"
#include "core/pool_config.h"
#include "core/resources.h"
#include "core/starvation.h"
#include "core/tree_config.h"
#include "core/value.h"

struct ps_pool_tree;
struct ps_tree_op;

/* Upstream's depth limit of a scheduler pool tree (the master's GetDepthLimit). */
#define PS_POOL_TREE_DEPTH_LIMIT 30

/* Dynamic characteristics of a pool or an operation in one tree (pool-characteristics.txt),
 * filled by ps_pool_tree_apply_fs (tree_fs.h) from the last fair share update. Ratios are
 * the largest component of the matching share (the dominant share). */
struct ps_element_dynamic {
    bool valid;                       /* false until an update included the element */
    double fair_share_ratio;          /* max component of fair_share.total */
    double usage_ratio;               /* max component of usage_share */
    double demand_ratio;              /* max component of demand_share */
    double guaranteed_ratio;          /* max component of the (adjusted) strong guarantee share */
    double min_share_ratio;           /* max component of the specified strong guarantee / total */
    int dominant_resource;            /* enum ps_resource */
    /* Upstream's dynamic satisfaction ratio after the update: an operation's local
     * satisfaction ratio (usage / fair share, ps_sched_satisfaction_ratio); a pool's the
     * minimum over its children holding operations, its own local ratio when none does. */
    double satisfaction_ratio;
    struct ps_fs_element_output fs;   /* everything the engine computed */
    /* Scheduling status and starvation (starvation.h), kept from one check to the next by
     * ps_pool_tree_apply_starvation (tree_starvation.h). */
    enum ps_sched_status status;
    enum ps_starvation_status starvation;
    int64_t below_fair_share_since_ms;   /* PS_STARVATION_NEVER: not below fair share */
    /* The settings the last check used (inherited from the parent where not specified). */
    double effective_tolerance;
    int64_t effective_timeout_ms;
    int64_t effective_aggressive_timeout_ms;
    bool effective_aggressive_starvation_enabled;
};

struct ps_pool {
    char *name;                        /* owned; "<Root>" for the root */
    struct ps_pool_config config;      /* the effective config, what the engine uses: the explicit
                                          config with its preset under it (pool_preset.h);
                                          read-only: change it through ps_pool_tree_set_pool_attr */
    struct ps_pool_config explicit_config;  /* what was set on the pool (Cypress's attributes,
                                          what the store keeps); meaningless for ephemeral pools
                                          and the root, see ps_pool_explicit_config */
    char *preset_issue;                /* owned: why the config_preset the pool names is not
                                          applied (pool_preset.h), NULL when it is or none */
    uint64_t config_version;           /* unique in the process: a new value whenever config is
                                          replaced (the service caches each pool's config JSON
                                          by it, persist.c) */
    struct ps_pool *parent;            /* NULL for the root */
    struct ps_pool_tree *tree;
    bool is_root;
    bool ephemeral;                    /* created for operations, vanishes when empty */
    bool ephemeral_in_default_parent;  /* a user-named pool: counts for max_ephemeral_pools_per_user */
    char *ephemeral_user;              /* the user an ephemeral pool was created for, else NULL */
    int64_t creation_seq;              /* creation order: the order of siblings */
    struct ps_formula *filter;         /* parsed scheduling_tag_filter, NULL when empty */

    int child_pool_count;
    int child_operation_count;         /* operations attached directly (pending or running) */
    int operation_count;               /* started operations in the subtree */
    int running_operation_count;       /* running operations in the subtree, lightweight
                                          ones excepted */
    int lightweight_running_operation_count;   /* running lightweight operations in the subtree */
    struct ps_resources usage;         /* usage of the running operations in the subtree, as of
                                          the last ps_pool_tree_update_pool_usage or build */

    /* Integral guarantee state carried from one fair share update to the next. */
    struct ps_volume accumulated_volume;
    struct ps_historic_usage historic_usage;   /* its parent infers weights from it */
    double last_integral_share_ratio;

    struct ps_element_dynamic dynamic;
    struct ps_fs_pool_output fs_pool;  /* what only pools have of the last update's results;
                                          valid with dynamic.valid */
    int fs_index;                      /* element index in the last build, -1 when none */
    int index;                         /* private: position in the tree's pool array */
};

/* ---- lifecycle --------------------------------------------------------------------------- */

/* A new tree named name (a pool-name-like identifier) with the default config updated by
 * config (a map of tree config keys; NULL for none). The map may also hold "pools", a list
 * of pools as in the scenario format, created with ps_pool_tree_create_pools. Returns NULL
 * with err set on a bad name, config or pool (PS_EINVAL, PS_ENOENT) or out of memory. */
struct ps_pool_tree *ps_pool_tree_new(const char *name, const struct ps_value *config,
                                      struct ps_error *err);
/* ps_pool_tree_new under templates (a map of tree config keys, ps_tree_templates_compile;
 * NULL for none): the tree's config is the defaults, then the templates, then config's keys,
 * which are the tree's explicit config. */
struct ps_pool_tree *ps_pool_tree_new_templated(const char *name, const struct ps_value *config,
                                                const struct ps_value *templates,
                                                struct ps_error *err);
/* Frees the tree with its pools and operation memberships. NULL is a no-op. A tree added to a
 * strategy belongs to it: remove it with ps_strategy_remove_tree instead. */
void ps_pool_tree_free(struct ps_pool_tree *tree);

const char *ps_pool_tree_name(const struct ps_pool_tree *tree);

/* The tree's structural change counter: bumped by every change of its operations (added,
 * removed, started, moved, updated), pools (created, removed, moved, reconfigured) and config.
 * A fair share input built at one generation only maps onto the tree at that generation. */
uint64_t ps_pool_tree_generation(const struct ps_pool_tree *tree);
const struct ps_tree_config *ps_pool_tree_config(const struct ps_pool_tree *tree);
/* The parsed nodes_filter (NULL when empty). Valid until the config changes. */
const struct ps_formula *ps_pool_tree_nodes_filter(const struct ps_pool_tree *tree);

/* Updates one tree config key (see tree_config.h) or a map of keys, validated against the
 * config and the pools (e.g. a new main_resource against every strong guarantee). When the
 * tree belongs to a strategy, a new nodes_filter is also checked against the registered
 * nodes (strategy.h). Raised per-pool defaults may let pending operations run (see
 * ps_pool_tree_last_started). A change of pool_config_presets derives every explicit pool's
 * effective config again. What is set joins the tree's explicit config (a top-level key set to
 * null leaves it, so a template's value applies again); the config is built anew from the
 * defaults, the templates and the explicit config. On error nothing changed. */
int ps_pool_tree_set_config(struct ps_pool_tree *tree, const char *key, const struct ps_value *value,
                            struct ps_error *err);
int ps_pool_tree_apply_config(struct ps_pool_tree *tree, const struct ps_value *map,
                              struct ps_error *err);

/* The tree object's custom attributes (a map): keys set on the tree that are neither tree
 * config keys nor pool settings, kept as given and read by nothing, as upstream's Cypress keeps
 * them on the pool tree object (a key inside @config must be a tree config key). */
const struct ps_value *ps_pool_tree_custom_attributes(const struct ps_pool_tree *tree);
/* Sets key (one attribute name) to a copy of value; NULL or null removes it. PS_EINVAL for a
 * key with '/' or a pool setting (upstream refuses pool attributes on a tree), PS_ENOMEM. On
 * error nothing changed. */
int ps_pool_tree_set_custom_attribute(struct ps_pool_tree *tree, const char *key,
                                      const struct ps_value *value, struct ps_error *err);

/* The keys set on the tree (canonical names, each with its whole value), which the store
 * keeps, and the templates under them (tree_template.h). Valid until the config changes. */
const struct ps_value *ps_pool_tree_explicit_config(const struct ps_pool_tree *tree);
const struct ps_value *ps_pool_tree_templates(const struct ps_pool_tree *tree);
/* Puts templates (a map of tree config keys, taken as a copy) under the tree's explicit
 * config; validated as a config change is (the same errors, nothing changed on error). */
int ps_pool_tree_set_templates(struct ps_pool_tree *tree, const struct ps_value *templates,
                               struct ps_error *err);

/* ---- pools ------------------------------------------------------------------------------- */

struct ps_pool *ps_pool_tree_root(struct ps_pool_tree *tree);
/* The pool named name ("<Root>" gives the root), or NULL. */
struct ps_pool *ps_pool_tree_find_pool(const struct ps_pool_tree *tree, const char *name);
/* Pools other than the root, in creation order (index 0 .. count-1). */
int ps_pool_tree_pool_count(const struct ps_pool_tree *tree);
struct ps_pool *ps_pool_tree_pool_at(const struct ps_pool_tree *tree, int index);

/* Creates an explicit pool under parent (NULL or "<Root>" for the root) with attributes attrs
 * (a map of pool config keys, NULL for defaults). Errors: PS_EINVAL (bad name, bad attribute,
 * tree rule), PS_ENOENT (no such parent), PS_EEXIST (an explicit pool of that name exists),
 * PS_ENOMEM. An ephemeral pool of that name becomes explicit (moved under parent, its
 * operations kept). */
int ps_pool_tree_create_pool(struct ps_pool_tree *tree, const char *name, const char *parent,
                             const struct ps_value *attrs, struct ps_error *err);

/* Creates the pools of a document: a list of maps {"name": ..., "parent": ... (default
 * "<Root>"), any pool config keys, and optionally "accumulated_resource_volume" (a map
 * resource -> resource x seconds, the integral state of snapshots)}. A child may be listed
 * before its parent; siblings are created in list order. Atomic: on error (prefixed
 * "pools[i]") the pools created by this call are removed again. */
int ps_pool_tree_create_pools(struct ps_pool_tree *tree, const struct ps_value *pools,
                              struct ps_error *err);

/* Removes an explicit pool. One with operations stays as an ephemeral pool of that name until
 * they end (upstream's rule, ps_tree_pool_make_ephemeral). Refused (PS_ESTATE) while it has
 * explicit child pools (ephemeral ones stay with it), or for an ephemeral pool with operations;
 * PS_ENOENT when absent; PS_EINVAL for the root. */
int ps_pool_tree_remove_pool(struct ps_pool_tree *tree, const char *name, struct ps_error *err);

/* Moves a pool (with its subtree, operations and counts) under new_parent. Refused when the
 * new parent is the pool itself or a descendant, is ephemeral, or breaks a tree rule. Counts
 * move with the subtree; limits may end up oversubscribed, as upstream allows. */
int ps_pool_tree_move_pool(struct ps_pool_tree *tree, const char *name, const char *new_parent,
                           struct ps_error *err);

/* Moves an explicit pool with its subtree to another tree (Cypress's move across trees,
 * pool_move_tree.c): created in dst under new_parent (NULL or "<Root>") as new_name with the
 * attributes set on it, its descendants under it with theirs, then removed from src. All or
 * nothing. Refused: PS_ENOENT (no such pool or parent), PS_EINVAL (the root, an ephemeral
 * pool, a tree rule of dst), PS_EEXIST (a name of the subtree is taken in dst), PS_ESTATE
 * (operations in the subtree: they name their pool). The integral volumes start anew. */
int ps_pool_tree_move_pool_to_tree(struct ps_pool_tree *src, const char *name,
                                   struct ps_pool_tree *dst, const char *new_parent,
                                   const char *new_name, struct ps_error *err);

/* Renames an explicit pool (Cypress's set of @name, or a move to another name). Refused:
 * PS_ENOENT, PS_EINVAL (the root, an ephemeral pool, a bad name), PS_EEXIST (the name is taken
 * in the tree), PS_ESTATE (an operation in its subtree: operations name their pool). */
int ps_pool_tree_rename_pool(struct ps_pool_tree *tree, const char *name, const char *new_name,
                             struct ps_error *err);

/* upstream's transfer_pool_resources (pool_transfer.c): delta, a map of any of
 * strong_guarantee_resources, resource_flow, burst_guarantee_resources (resources >= 0),
 * max_operation_count and max_running_operation_count (integers >= 0), leaves the pools from
 * source up to their lowest common ancestor with destination and reaches those from
 * destination up to it; unset values count as 0. Either source or destination may be the root.
 * All or nothing: PS_ENOENT (a pool missing), PS_EINVAL (the same pool twice, an ephemeral
 * pool, a bad delta, a pool with less than the transfer takes, or a tree rule broken, naming
 * the pool), PS_ENOMEM. */
int ps_pool_tree_transfer_resources(struct ps_pool_tree *tree, const char *source,
                                    const char *destination, const struct ps_value *delta,
                                    struct ps_error *err);

/* Sets one attribute of an explicit pool (value NULL or null: back to the default), or a map
 * of attributes at once; validated against the whole tree first. Raised limits may let pending
 * operations run. The attribute goes into the pool's explicit config; its effective config is
 * derived again with the preset its config_preset names (pool_preset.h). */
int ps_pool_tree_set_pool_attr(struct ps_pool_tree *tree, const char *pool, const char *key,
                               const struct ps_value *value, struct ps_error *err);
int ps_pool_tree_apply_pool_attrs(struct ps_pool_tree *tree, const char *pool,
                                  const struct ps_value *map, struct ps_error *err);
/* Reads one attribute of a pool (explicit or ephemeral) into *out (owned): as set on the pool
 * (ps_pool_explicit_config), so without what a preset adds. */
int ps_pool_tree_get_pool_attr(const struct ps_pool_tree *tree, const char *pool, const char *key,
                               struct ps_value *out, struct ps_error *err);

/* upstream's GetEffectiveLightweightOperationsEnabled: enable_lightweight_operations in a pool in
 * fifo mode. Its (vanilla, so eligible) operations are lightweight: they run whatever the
 * max_running_operation_count of the pool and its ancestors, and count in
 * lightweight_running_operation_count instead of running_operation_count (max_operation_count
 * still counts them). Turning it on makes the pool's running operations lightweight and runs
 * its pending ones; turning it off counts its lightweight ones as regular again, over the limits
 * if need be, as upstream. */
bool ps_pool_lightweight_enabled(const struct ps_pool *pool);

/* The config as set on the pool (explicit pools), which get_pool_attr reads and a document
 * holds; the config itself for ephemeral pools and the root, which nobody configures. */
const struct ps_pool_config *ps_pool_explicit_config(const struct ps_pool *pool);

/* Effective operation-count limits of a pool (the root's are the tree's). */
int64_t ps_pool_max_running_operations(const struct ps_pool *pool);

/* An operation's custom_profiling_tag as upstream reports it: NULL when tag is NULL; tag when
 * allowed_profiling_tags of pool or one of its ancestors lists it; else "invalid". */
const char *ps_pool_profiling_tag(const struct ps_pool *pool, const char *tag);
int64_t ps_pool_max_operations(const struct ps_pool *pool);

/* upstream's EffectiveAggressivePreemptionAllowed of a pool: its own allow_aggressive_preemption,
 * else the nearest ancestor's, else true (the root's). */
bool ps_pool_aggressive_preemption_allowed(const struct ps_pool *pool);

/* A pool's effective use_pool_satisfaction_for_scheduling: its own, else the nearest
 * ancestor's (the root's included), else false. The scheduling snapshot inherits it the same way
 * along its elements (schedule.c). */
bool ps_pool_use_satisfaction_for_scheduling(const struct ps_pool *pool);

/* The parent ephemeral user pools are created under: default_parent_pool when it exists, is
 * explicit and is not in fifo mode, otherwise the root (upstream raises an alert and uses the
 * root too). A tree with use_user_default_parent_pool_map first tries the user's pool of the
 * strategy's map (ps_pool_tree_default_parent_for, user_pools.h). */
struct ps_pool *ps_pool_tree_default_parent(const struct ps_pool_tree *tree);

/* Dry runs (pool_tree_clone.c). dst is a fresh tree built from src's document (config and
 * explicit pools, ps_pool_tree_new); this copies into it what a document does not hold: src's
 * nodes (borrowed: free dst with ps_pool_tree_clone_free, never after the nodes), its
 * operations (in registration order, with demand, usage, pending job count and suspension) and
 * the state the next update reads (integral volumes, previous update time, starvation times).
 * Changing dst then never touches src. Errors: PS_ESTATE (dst not fresh), from
 * ps_pool_tree_add_operation, PS_ENOMEM. */
int ps_pool_tree_clone_state(struct ps_pool_tree *dst, const struct ps_pool_tree *src,
                             struct ps_error *err);
void ps_pool_tree_clone_free(struct ps_pool_tree *tree);
/* Makes tree the tree of each of its nodes (after a dry run, defensively: a copy never changes
 * a borrowed node's tree, since a tree lets go only of its own nodes; so a dry run of
 * nodes_filter keeps the copy's nodes and totals). */
void ps_pool_tree_reclaim_nodes(struct ps_pool_tree *tree);

/* Operations that became running during the last call that changed the tree (operation
 * start or finish, pool or config change). Valid until the next such call. */
int ps_pool_tree_last_started_count(const struct ps_pool_tree *tree);
struct ps_tree_op *ps_pool_tree_last_started(const struct ps_pool_tree *tree, int index);
/* Operations the last such call moved to another pool (out of the user subpools of a pool
 * that no longer has create_ephemeral_subpools). Valid until the next such call. */
int ps_pool_tree_last_moved_count(const struct ps_pool_tree *tree);
struct ps_tree_op *ps_pool_tree_last_moved(const struct ps_pool_tree *tree, int index);

#endif
