/* event_log_state.h — what the event log's rows say of an operation (operation_info) and the
 * state rows nodes_info and operations_info (event_log.h), built from views: copies of what
 * they read, taken under svc->mu, so that the state rows, megabytes on a large cluster, are
 * built and dumped by the journal's writer off the lock (journal.h). Internal to the event log. */
#ifndef PS_SERVER_EVENT_LOG_STATE_H
#define PS_SERVER_EVENT_LOG_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/resources.h"
#include "server/journal.h"

struct ps_service;
struct ps_svc_op;

struct ps_event_task_view {
    char *name;
    int64_t job_count, completed;
    struct ps_resources shape;
};

/* An operation as its rows show it: strings copied, its documents shared (the operation
 * replaces them whole, never changes them in place: service_state.h). */
struct ps_event_op_view {
    char *id, *user;
    json_t *spec, *pool_per_tree, *runtime_options;   /* NULL when it has none */
    int64_t start_ms;
    int task_count;
    struct ps_event_task_view *tasks;
};

/* 0, or -1 out of memory (v then holds nothing) */
int ps_event_op_view_take(const struct ps_svc_op *op, struct ps_event_op_view *v);
void ps_event_op_view_release(struct ps_event_op_view *v);

/* upstream's BuildOperationInfoForEventLog (scheduler's and strategy's parts) into ev: the spec
 * without its tasks unless task_specs (their commands, environment and files are the bulk of a
 * spec and no replay runs them); the pool in default_tree (NULL: none) */
void ps_event_operation_info(const struct ps_event_op_view *v, const char *default_tree,
                             json_t *ev, bool task_specs);
/* A row's first keys: {timestamp: now_ms, event_type: type} */
json_t *ps_event_row(const char *type, int64_t now_ms);
/* {"scheduling_options_per_pool_tree": runtime_options} */
json_t *ps_event_runtime_parameters(json_t *runtime_options);
/* A node's tags and resource_limits into ev (a node row, or its entry in nodes_info). */
json_t *ps_event_node_fields(char *const *tags, int tag_count, const struct ps_resources *limits,
                             json_t *ev);

/* The state rows' nodes_info and operations_info at now_ms: the copy for renderer (NULL: out
 * of memory). */
void *ps_event_nodes_info_take(const struct ps_service *svc, int64_t now_ms);
void *ps_event_operations_info_take(const struct ps_service *svc, int64_t now_ms);
extern const struct ps_journal_renderer ps_event_nodes_info_renderer;
extern const struct ps_journal_renderer ps_event_operations_info_renderer;

#endif
