/* node_health.h — a broken node must not eat the cluster (issue 13), and operations that can
 * never run fail instead of waiting forever. docs/faults.md "Broken nodes" tells the story;
 * docs/api.md lists the keys and paths.
 *
 * Broken nodes (node_health.c). A node that cannot start jobs aborts each one with reason
 * node_error, at once, and the scheduler used to send it the next job straight away: one bad
 * node took most of the work of an operation and did none of it. Now every node counts its
 * node_error aborts in a row (a job that completes or fails resets the count; other aborts —
 * preemption, limits, the scheduler's own — leave it alone). At max_consecutive_job_aborts
 * (service config, default 10; 0 turns it off) the scheduler bans the node: it keeps
 * heartbeating and stays registered, but with user_slots 0, so nothing is scheduled there and
 * its slots leave the trees' totals (what YTsaurus's exec node does when its slot manager
 * raises TooManyConsecutiveJobAbortions: "Scheduler jobs disabled"). Its running jobs are
 * aborted with reason node_with_disabled_jobs and run elsewhere. The ban shows as
 * //sys/cluster_nodes/<node>/@banned = true with @ban_message and @alerts, and as a scheduler
 * alert in //sys/scheduler/@alerts. It lifts by itself after disable_jobs_timeout (default
 * 10 min, upstream's; 0 = never), or when an admin sets @banned false. An admin may also set
 * @banned true (reason node_banned for its jobs); such a ban lifts only by hand. Bans are
 * stored, so they survive a restart.
 * A node_error abort whose record has no "error" gets one from the node's message (the node
 * agent puts it in the record's stderr), so list_jobs says why the job could not start.
 *
 * Operations that can never run (op_sanity.c), checked by the engine loop:
 *   - no node matches: every available_exec_nodes_check_period (5 s), once the scheduler has
 *     been up safe_scheduler_online_time (10 min; nodes reconnect after a restart), a running
 *     operation for which no registered, unbanned node of any of its trees satisfies its
 *     effective scheduling_tag_filter fails with "No online nodes match operation scheduling
 *     tag filter" — unless a matching node was seen earlier in its life (upstream controller
 *     CheckAvailableExecNodes, which gives up only on operations that never saw one); with
 *     fail_on_all_nodes_banned, also once every such node is banned for the operation
 *     (ban_nodes_with_failed_jobs) with "All online nodes that match ... were banned";
 *   - no node can hold a job: every resource_demand_sanity_check_period (15 s), after
 *     safe_scheduler_online_time, a running operation with a task whose next job needs more of
 *     some resource than every usable node matching its filter has (the componentwise maximum
 *     of their resource_limits) fails with "No online node can satisfy the resource demand"
 *     (upstream controller CheckMinNeededResourcesSanity, error NoOnlineNodeToScheduleJob);
 *   - scheduling hung: every operation_hangup_check_period (1 min), a running operation fails
 *     with "Operation scheduling hung in all trees" when each of its trees holds it back by
 *     a limiting ancestor (its cheapest pending job exceeds the specified resource_limits of
 *     one of its pools, for operation_hangup_due_to_limiting_ancestor_safe_timeout, 5 min,
 *     since both its activation and the first time seen; off with the spec's or the tree's
 *     enable_limiting_ancestor_check) or because it is stuck (starving, nothing running or
 *     started there for operation_hangup_safe_timeout, 60 min, and passed over by more than
 *     operation_hangup_min_schedule_job_attempts, 1000, heartbeats since it last was not
 *     starving) — upstream's CheckOperationIsHung and CheckIsOperationStuck.
 * All under svc->mu.
 */
#ifndef PS_SERVER_NODE_HEALTH_H
#define PS_SERVER_NODE_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "core/resources.h"

struct ps_service;
struct ps_service_config;
struct ps_svc_node;
struct ps_svc_job;

/* ---- config ----------------------------------------------------------------------------- */
/* The defaults of the keys above; their names and ranges are entries of the scheduler
 * config's table (ps_service_config_apply, service.c). */
void ps_node_health_config_init(struct ps_service_config *cfg);

/* ---- life ------------------------------------------------------------------------------- */
/* After the state is loaded: notes the start time and restores the stored bans. */
int ps_node_health_start(struct ps_service *svc, struct ps_error *err);
/* Forgets every ban in memory and loads the stored ones again (after a failed commit rolled
 * the store back: ps_svc_state_reload). Errors: from the store. */
int ps_node_health_reload(struct ps_service *svc, struct ps_error *err);

/* ---- heartbeats ------------------------------------------------------------------------- */
/* Before the node's limits are compared and registered: lifts an expired scheduler ban and,
 * while the node is banned, sets *limits' user_slots to 0. */
void ps_node_health_heartbeat(struct ps_service *svc, struct ps_svc_node *node,
                              struct ps_resources *limits, int64_t now_ms);
/* The error of an aborted job's record when the node sent none: for node_error, the node's
 * message (its stderr, first line) in buf; else NULL. */
const char *ps_node_health_abort_error(const json_t *record, const char *node_id, char *buf,
                                       size_t size);
/* After a job the node reported finished: counts, and maybe bans the node. */
void ps_node_health_job_finished(struct ps_service *svc, const struct ps_svc_job *job,
                                 int64_t now_ms);

/* ---- paths ------------------------------------------------------------------------------ */
/* True for //sys/cluster_nodes[/...] and //sys/scheduler/@[...] (served here). */
bool ps_node_health_claims(const char *path);
int ps_node_health_get(struct ps_service *svc, const char *path, json_t **out,
                       struct ps_error *err);
/* value NULL: remove (an attribute goes back to its default). Admin only (checked by caller). */
int ps_node_health_set(struct ps_service *svc, const char *user, const char *path,
                       const json_t *value, struct ps_error *err);
/* //sys/scheduler/orchid/scheduler/nodes[/<node>[/<attr>]]: names after "scheduler". */
int ps_node_health_orchid(struct ps_service *svc, char **names, size_t count, json_t **out,
                          struct ps_error *err);

/* ---- operations (op_sanity.c) ----------------------------------------------------------- */
/* From the engine loop; does its checks when their periods have passed. */
void ps_op_sanity_check(struct ps_service *svc, int64_t now_ms);

#endif
