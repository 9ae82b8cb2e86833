/* svc_ops.h — the operations room (service.c, op_trees.c, svc_jobs.c): an operation's life
 * from its creation or restore to its finish, its tasks' job shapes and pending jobs, its trees
 * (schedule_in_single_tree) and the engine inputs it pushes at each change. All under svc->mu. */
#ifndef PS_SERVER_SVC_OPS_H
#define PS_SERVER_SVC_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "core/resources.h"

struct ps_service;
struct ps_svc_op;
struct ps_svc_task;
struct ps_svc_job;
struct ps_svc_node;
struct ps_svc_tree_state;
struct ps_pool_tree;

/* in_strategy false: a finished operation restored from the store (no tree membership).
 * restore: NULL for a start; the stored document of an active operation restored after a
 * restart (its pool_per_tree and running_per_tree: it goes back as it was, unchecked). */
int ps_svc_op_create(struct ps_service *svc, const char *id, const char *user, int64_t start_ms,
                     const json_t *spec, bool in_strategy, const json_t *restore,
                     struct ps_svc_op **out, struct ps_error *err);
void ps_svc_op_free(struct ps_svc_op *op);
/* schedule_in_single_tree (op_trees.c): sets op->erased_trees (chosen now, or restore's) and
 * *strategy_spec (a new reference: spec, or a copy without the erased trees). op's tasks must
 * be parsed. */
int ps_svc_op_trees(struct ps_service *svc, struct ps_svc_op *op, const json_t *spec,
                    const json_t *restore, json_t **strategy_spec, struct ps_error *err);
/* The slot of op's trees named tree, -1 when op is not (or no longer) in it. */
int ps_svc_op_tree_slot(const struct ps_svc_op *op, const char *tree);
void ps_svc_op_update_pools(struct ps_svc_op *op);
/* Logs operation_running for the operations the strategy just activated and stores them
 * (running now: a restart keeps them running). */
void ps_svc_log_activated(struct ps_service *svc);
void ps_svc_op_finish(struct ps_service *svc, struct ps_svc_op *op, const char *state,
                      const char *error, int64_t now_ms);
/* One job of the task: a user slot, its cpu_limit and the memory reserve the task's digest
 * gives a new job now. */
struct ps_resources ps_svc_task_shape(const struct ps_svc_task *t);
void ps_svc_task_reshape(struct ps_svc_task *t);
void ps_svc_op_refresh_state(struct ps_svc_op *op);
int64_t ps_svc_op_pending(const struct ps_svc_op *op);
void ps_svc_op_detach(struct ps_service *svc, struct ps_svc_op *op);
void ps_svc_op_update_shape(struct ps_service *svc, struct ps_svc_op *op);
/* Is node_id banned for op (ban_nodes_with_failed_jobs)? */
bool ps_svc_op_node_banned(const struct ps_svc_op *op, const char *node_id);
/* Every operation of tree forgets its element (-1), as before an update's results apply. */
void ps_svc_forget_elements(struct ps_service *svc, struct ps_pool_tree *tree);
/* Sets the engine's inputs in each of op's tree memberships (usage, demand, pending jobs,
 * suspended) from the operation as it is now: called wherever one of them changes (a job starts
 * or ends, a job is requeued, the memory digest moves, the operation is suspended or resumed,
 * restored), so that a fair share update reads them as they stand instead of a pass over every
 * operation under the lock (as the simulator's sim_op_demand_changed). */
void ps_svc_op_push_inputs(struct ps_svc_op *op);
/* Debug builds, before each update: every membership's inputs equal what the operation says
 * now; -1 and what is stale in what (a change that did not push). */
int ps_svc_check_engine_inputs(struct ps_service *svc, struct ps_pool_tree *tree, char *what,
                               size_t size);

#endif
