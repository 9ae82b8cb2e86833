/* exec_nodes.h — an operation that no node can take fails, as upstream's controller agent
 * (CheckAvailableExecNodes): every available_exec_nodes_check_period, once the scheduler has
 * been online for safe_scheduler_online_time, a running operation for which no usable node of
 * any of its trees satisfies its effective scheduling_tag_filter fails with "No online nodes
 * match operation scheduling tag filter ..." — unless a matching node was seen earlier in its
 * life. The service (server/op_sanity.c) and the simulator (sim/sim_sched.c) both ask this,
 * and ps_exec_nodes_demand_fits (below). */
#ifndef PS_CORE_EXEC_NODES_H
#define PS_CORE_EXEC_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/strategy.h"

/* upstream's controller agent defaults */
#define PS_AVAILABLE_EXEC_NODES_CHECK_PERIOD_MS 5000
#define PS_SAFE_SCHEDULER_ONLINE_TIME_MS 600000
#define PS_RESOURCE_DEMAND_SANITY_CHECK_PERIOD_MS 15000

/* Whether the host counts a node (the service: registered and not banned). NULL: every node
 * registered in the strategy counts. */
typedef bool (*ps_exec_node_usable_fn)(const struct ps_node *node, void *ctx);

/* True when a usable node of one of op's trees satisfies its effective filter there, or when
 * that cannot be told (a membership gone, a filter that does not build). Otherwise false, and
 * msg (size bytes) receives the failure message, naming the filter, the trees, the operation
 * and safe_time_ms. */
bool ps_exec_nodes_available(const struct ps_strategy *s, const struct ps_operation *op,
                             ps_exec_node_usable_fn usable, void *ctx, int64_t safe_time_ms,
                             char *msg, size_t size);

/* The same test; when false, filter (fsize bytes) receives the effective filter's text and
 * trees (tsize) the operation's trees, quoted and comma-separated ("\"a\", \"b\""). */
bool ps_exec_nodes_find(const struct ps_strategy *s, const struct ps_operation *op,
                        ps_exec_node_usable_fn usable, void *ctx, char *filter, size_t fsize,
                        char *trees, size_t tsize);

/* The componentwise maximum of the resource limits of the usable nodes that satisfy op's
 * effective filter in its trees (upstream's GetMaxAvailableResources(filter), what its
 * CheckMinNeededResourcesSanity compares a task's needs with) into *max; returns how many such
 * nodes there are, or -1 when that cannot be told. */
int ps_exec_nodes_max_resources(const struct ps_strategy *s, const struct ps_operation *op,
                                ps_exec_node_usable_fn usable, void *ctx,
                                struct ps_resources *max);

/* Upstream's CheckMinNeededResourcesSanity (every resource_demand_sanity_check_period, after
 * safe_scheduler_online_time; both hosts ask it): false when the next job of op's task
 * task_name, needing *need, needs more of some resource than every usable node matching op's
 * filter has; msg (size bytes) then receives "No online node can satisfy the resource demand
 * ...". True when it fits, or when there is no such node at all or that cannot be told (that
 * is ps_exec_nodes_available's business). */
bool ps_exec_nodes_demand_fits(const struct ps_strategy *s, const struct ps_operation *op,
                               ps_exec_node_usable_fn usable, void *ctx, const char *task_name,
                               const struct ps_resources *need, char *msg, size_t size);

#endif
