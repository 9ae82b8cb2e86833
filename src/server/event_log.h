/* event_log.h — the scheduler's event log, //sys/scheduler/event_log: operation, job and node
 * events as upstream's scheduler (and controller agent) event log records them.
 *
 * Rows (JSON objects) carry upstream's keys: timestamp (ms since the epoch here; the YTsaurus
 * face shows it as upstream's ISO time), event_type, and per type:
 *   operation_started: operation_id, operation_type, spec, authenticated_user, pool (in the
 *     default tree), scheduling_info_per_tree {tree: {pool}}, plus poolsched's task list for a
 *     replay (tasks: [{name, job_count, resource_limits}]);
 *   operation_completed / operation_failed / operation_aborted: those, and start_time,
 *     finish_time, error (absent when none), runtime_parameters, progress (job counts);
 *   job_started: job_id, operation_id, resource_limits, node_address, job_type, tree_id,
 *     task_name;
 *   job_completed / job_failed / job_aborted: those, start_time, finish_time, statistics,
 *     error (failed), reason (aborted), and for a preempted job preempted_for {operation_id,
 *     job_id} (job_id when the preemptor's job is known) and preemption_reason;
 *   runtime_parameters_info: operation_id, authenticated_user, runtime_parameters (after an
 *     update_op_parameters);
 *   operation_banned_in_tree: operation_id, tree_id (a tentative tree banned, op_tentative.c);
 *   pools_info: pools {tree: {pool: config, every key, and its parent}} after changes of the pool trees (at most
 *     one row a second);
 *   pool_trees_info (poolsched's, for a replay; written just before each pools_info row):
 *     trees {tree: its config, every key}, default_tree (null when none);
 *   node_registered, node_updated, node_offline (poolsched's, for a replay): node_address,
 *     tags, resource_limits;
 *   nodes_info (upstream's name; after the state rows' pools_info row, same timestamp): nodes
 *     {address: {tags, resource_limits}}, every node in scheduling;
 *   operations_info (poolsched's; after each nodes_info row, same timestamp): operations {id:
 *     operation_started's keys, start_time, runtime_parameters, each task's completed}, every
 *     operation not finished.
 * pool_trees_info, pools_info, nodes_info and operations_info are the state a replay starts
 * from: logged at start (and by a new leader), after every PS_EVENT_LOG_STATE_PARTS-th part of
 * the bound (at least PS_EVENT_LOG_STATE_MIN_ROWS rows) since the last ones once they are
 * nodes_info_logging_period (service config, upstream's name; default 30 s) old, and again as
 * soon as the bound drops the newest of them (svc->event_log_state_seq), each at most once a
 * second. So the rows before the log's first state rows, which a replay cannot start from, are
 * at most that part of the log, or the rows of that period when more. A change of the trees
 * logs pool_trees_info and pools_info alone: the nodes and operations follow from their rows.
 *
 * Writes: under svc->mu, a row becomes a journal record (kind "event", key its sequence number
 * zero-padded to 20 digits, so key order is row order) committed with the change that caused
 * it, in the same group commit: no write of its own on the hot path. The log keeps at most
 * event_log_max_row_count rows (service config; 0: no event log): each row past it appends a
 * delete of the oldest. The first and next sequence numbers are a "meta" document
 * (event_log) written with the rows. */
#ifndef PS_SERVER_EVENT_LOG_H
#define PS_SERVER_EVENT_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;
struct ps_svc_op;
struct ps_svc_job;
struct ps_svc_node;

#define PS_EVENT_LOG_PATH "//sys/scheduler/event_log"
#define PS_EVENT_LOG_DEFAULT_MAX_ROWS 100000
#define PS_EVENT_LOG_POOLS_INFO_PERIOD_MS 1000
#define PS_EVENT_LOG_STATE_PARTS 16
#define PS_EVENT_LOG_STATE_MIN_ROWS 64
#define PS_EVENT_LOG_NODES_INFO_PERIOD_MS 30000   /* upstream's nodes_info_logging_period */

/* Each records one event (under svc->mu). type: "operation_started", "operation_completed",
 * ...; job events take the type from the job's state. */
void ps_event_log_operation(struct ps_service *svc, const struct ps_svc_op *op, int64_t now_ms);
/* runtime_parameters_info after an update_op_parameters by user */
void ps_event_log_runtime_parameters(struct ps_service *svc, const struct ps_svc_op *op,
                                     const char *user, int64_t now_ms);
void ps_event_log_job(struct ps_service *svc, const struct ps_svc_job *job, int64_t now_ms);
void ps_event_log_banned_in_tree(struct ps_service *svc, const struct ps_svc_op *op,
                                 const char *tree, int64_t now_ms);
/* type: node_registered, node_updated (new resource limits), node_offline; when the trees
 * changed since the last pools_info row, pool_trees_info and pools_info rows go first, whatever
 * their period: a replay places the node by the trees as they were (io/event_replay.h) */
void ps_event_log_node(struct ps_service *svc, const struct ps_svc_node *node, const char *type,
                       int64_t now_ms);

/* The engine loop calls it, once the last rows are PS_EVENT_LOG_POOLS_INFO_PERIOD_MS old, so
 * that a burst of changes makes one row of each, not a copy of every pool's config per change
 * (as upstream logs pools_info after its periodic pool tree update). It logs the state rows
 * (pool_trees_info, pools_info, nodes_info, operations_info) when the log holds none (at start,
 * or the bound dropped them) or when a part of the bound was logged since the last ones (above)
 * and they are nodes_info_logging_period old; else pool_trees_info and pools_info alone when
 * the trees changed (svc->pools_info_due, set by every applied change of a pool, a tree or the
 * default tree). Under svc->mu; the rows are built of copies, dumped off the lock by the
 * journal's writer (journal.h). */
void ps_event_log_pools_info(struct ps_service *svc, int64_t now_ms);

/* Reads the sequence numbers back from the store (at start and after a reload). */
int ps_event_log_load(struct ps_service *svc, struct ps_error *err);

/* Frees what reads keep in memory (the blocks' timestamp spans); the next read builds it again. */
void ps_event_log_release(struct ps_service *svc);

/* Whether path is the event log. */
bool ps_event_log_claims(const char *path);

/* The parameters of a get of the event log besides path (api.c lets them through only for it). */
bool ps_event_log_param(const char *name);

/* get //sys/scheduler/event_log: the rows, oldest first, that match the request's filters:
 * operation_id, event_type (a string or a list of them), since (ms since the epoch: rows at or
 * after it), until (rows at or before it), upper_row_index (rows whose row index, their place
 * in the order the log was written, is below it), limit (at most this many, the newest of them;
 * default and cap 10000). *first_row: the row index of the oldest row returned (-1 when none):
 * a client pages back exactly by asking next for the rows below it (ps_event_page_back). Under
 * svc->mu. A read filtered by time alone (as `poolsched what-if` pages back) leaves each row as
 * its stored text, a JSON string: the caller passes *out to ps_event_log_parse once it has let
 * go of the lock (parsing was most of the time a page of 10,000 rows held it). Errors:
 * PS_EINVAL naming a bad filter, PS_EIO. */
int ps_event_log_get(struct ps_service *svc, const json_t *body, json_t **out,
                     int64_t *first_row, struct ps_error *err);

/* Replaces each stored text in rows (ps_event_log_get's) by the row it holds, in place. A read
 * hands over unparsed only texts that begin with the timestamp and a string event_type (as the
 * scheduler writes every row), so each is a row; one that is not after all (a duplicate
 * event_type key, written into the store from outside) is left out, having counted toward the
 * read's limit. Needs no lock. Errors: PS_ENOMEM. */
int ps_event_log_parse(json_t *rows, struct ps_error *err);

#endif
