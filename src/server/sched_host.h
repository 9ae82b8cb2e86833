/* sched_host.h — the service as the scheduling loop's host (sched_host.c, service.c;
 * core/tree_sched.h): one fair share update of a tree, the limits check after it, a node
 * heartbeat's scheduling, why an operation waits, and what the loop reads of an operation's
 * allocations. Used by the engine loop (engine_loop.c), the node protocol and the views.
 * Under svc->mu. */
#ifndef PS_SERVER_SCHED_HOST_H
#define PS_SERVER_SCHED_HOST_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;
struct ps_svc_tree_state;
struct ps_svc_node;
struct ps_pool_tree;
struct ps_tree_op;
struct ps_sched_operation;
struct ps_preempt_operation;
struct ps_preemptible;

/* One fair share update of ts through the loop, all under svc->mu (begin, run, finish).
 * Errors: as ps_tree_sched_update. */
int ps_svc_update_tree(struct ps_service *svc, struct ps_svc_tree_state *ts,
                       struct ps_pool_tree *tree, int64_t now_ms, int *starvation_changed,
                       struct ps_error *err);
/* The last phase of an update begun (ps_tree_sched_update_begin, under svc->mu) and run
 * (ps_tree_sched_update_run, without it) on ts: PS_ESTATE, and nothing changed, when the
 * tree's structure changed in between; else the results apply, the operations get their new
 * elements and a new snapshot. Under svc->mu. */
int ps_svc_update_finish(struct ps_service *svc, struct ps_svc_tree_state *ts,
                         struct ps_pool_tree *tree, int *starvation_changed,
                         struct ps_error *err);
/* After a fair share update of ts: the loop's limits check (victims with reason
 * resource_limits_violated). O(elements), plus O(running jobs) only while some element is
 * over. Errors are logged. */
void ps_svc_limits_check(struct ps_service *svc, struct ps_svc_tree_state *ts, int64_t now_ms);
/* A node heartbeat's scheduling on the node's tree through the loop: new jobs go to start_out
 * (ps_svc_start_entry), victims to interrupt or abort. */
int ps_svc_schedule_node(struct ps_service *svc, struct ps_svc_node *node, int64_t now_ms,
                         json_t *start_out, json_t *interrupt, json_t *abort, struct ps_error *err);
/* Why an operation with pending jobs waits, in the scheduler's view, for its membership to
 * (element: its element in ts's last update, -1): the rules of ps_pending_scheduler_reason, the
 * simulator's too. Fills info->reason, tree, pool, resource. */
struct ps_pending_info;
void ps_svc_pending_scheduler_reason(struct ps_service *svc, struct ps_svc_tree_state *ts,
                                     const struct ps_tree_op *to, int element,
                                     struct ps_pending_info *info);
struct ps_preemptible *ps_svc_sched_op_fn(void *ctx, struct ps_tree_op *op, int element,
                                          struct ps_sched_operation *sched,
                                          struct ps_preempt_operation *preempt);
/* The operation's running jobs in the tree of tree_op by preemption class (enum
 * ps_alloc_class, preemptible.h): counts[PS_ALLOC_CLASS_COUNT], zeros when unknown. */
void ps_svc_op_preemptible_counts(struct ps_tree_op *tree_op, int *counts);

#endif
