/* svc_jobs.h — the jobs and nodes room (svc_jobs.c, api_nodes.c, service_life.c): a job's
 * start, report, finish and preemption, the node table (get, offline) and the entry a node is
 * told to start. Under svc->mu. */
#ifndef PS_SERVER_SVC_JOBS_H
#define PS_SERVER_SVC_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/resources.h"

struct ps_service;
struct ps_svc_op;
struct ps_svc_job;
struct ps_svc_node;
struct ps_memory_job_statistics;

struct ps_svc_job *ps_svc_job_start(struct ps_service *svc, struct ps_svc_op *op, int tree_slot,
                                    struct ps_resources alloc, const char *node_id, int64_t now_ms);
/* Ends a running job with a final state; updates progress, digests, the engine's usage and the
 * operation's state. requeue: put the job index back (aborted jobs). A failure at a node banned
 * for the operation ends as aborted (node_banned) with ignore_job_failures_at_banned_nodes; a
 * failure bans its node for the operation with ban_nodes_with_failed_jobs. */
void ps_svc_job_finish(struct ps_service *svc, struct ps_svc_job *job, int state,
                       const char *error, const char *abort_reason, json_t *statistics,
                       int64_t now_ms);
/* Applies one preemption victim to a running job (reason: the abort and interrupt reason,
 * "preemption" for every victim of the scheduling loop, as upstream's; preemption_reason, may be
 * NULL: why, for the log, e.g. "resource_overcommit"). timeout_ms 0: abort it now; else
 * interrupt it (once) and abort it at the deadline. The reply arrays (NULL outside a heartbeat)
 * receive the abort or interrupt; without them the node's next heartbeat is told (the job
 * reported running is aborted with the job's abort reason, or listed with its interrupt
 * deadline). */
void ps_svc_job_preempt(struct ps_service *svc, struct ps_svc_job *job, const char *reason,
                        const char *preemption_reason, int64_t timeout_ms, const char *for_op,
                        int64_t now_ms, json_t *interrupt, json_t *abort);
/* enum ps_preempt_reason -> the preemption reason the log names (preempted_for_starving_
 * operation, resource_overcommit, resource_limits_violated, ...) */
const char *ps_svc_preempt_reason(int reason);
/* The node-reported memory statistics of a job's statistics map (user_job/max_memory,
 * user_job/memory_reserve, job_proxy/max_memory; keys with or without a leading '/'). */
void ps_svc_read_memory_stats(const json_t *stats, struct ps_memory_job_statistics *out);
void ps_svc_job_learn(struct ps_svc_job *job);
void ps_svc_job_free(struct ps_svc_job *job);
int ps_svc_job_register(struct ps_service *svc, struct ps_svc_job *job);
void ps_svc_job_attach_node(struct ps_service *svc, struct ps_svc_job *job);
void ps_svc_job_set_guarantee(struct ps_service *svc, struct ps_svc_job *job, double cores);
/* The node protocol's entry for a job to start (svc_jobs.c). */
json_t *ps_svc_start_entry(const struct ps_svc_job *job);
/* {job_id, reason}: one entry of a heartbeat reply's jobs_to_abort. */
json_t *ps_svc_abort_entry(const char *id, const char *reason);
struct ps_svc_node *ps_svc_node_get(struct ps_service *svc, const char *id, bool create);
void ps_svc_node_offline(struct ps_service *svc, struct ps_svc_node *node, int64_t now_ms);

#endif
