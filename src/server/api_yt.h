/* api_yt.h — what the YTsaurus face (api_yt.c) shares with its reply shaping
 * (api_yt_shape.c). */
#ifndef PS_SERVER_API_YT_H
#define PS_SERVER_API_YT_H

#include <stdbool.h>

#include <jansson.h>

/* YTsaurus error codes (yt/yt/core, client/security_client, scheduler). */
enum {
    YT_GENERIC = 1,
    YT_UNAVAILABLE = 105,
    YT_RESOLVE = 500,
    YT_ALREADY_EXISTS = 501,
    YT_AUTHENTICATION = 900,
    YT_AUTHORIZATION = 901,
    YT_NO_SUCH_OPERATION = 1915,
    YT_INVALID_OPERATION_STATE = 1916,
    YT_NO_SUCH_JOB = 1918,
    YT_USER_JOB_FAILED = 1205,   /* job_proxy */
};

/* An operation of /api/v1 (get_operation, list_operations' items) as YTsaurus shows it, in
 * place, keeping poolsched's own keys; returns op. */
json_t *ps_yt_operation(json_t *op);

/* A job of /api/v1 as YTsaurus shows it (type, address, job_id, ISO times, error objects), in
 * place; returns job. */
json_t *ps_yt_job(json_t *job);
/* Cypress's system attribute name of a node poolsched serves, as the yt CLI's `list -l` reads
 * them: account "sys", owner "root", resource_usage (and recursive_resource_usage) of one node
 * holding no data, creation_time, modification_time and access_time the time the scheduler
 * loaded its state, loaded_ms (poolsched keeps no per-node times). NULL for another name. */
json_t *ps_yt_system_attribute(const char *name, int64_t loaded_ms);

/* The event log's rows (event_log.h) in place: timestamp, start_time and finish_time as ISO
 * times, as upstream's table holds them. */
void ps_yt_event_rows(json_t *rows);

/* Keeps only the listed keys of o (a YTsaurus `attributes` filter); no filter: all. */
void ps_yt_filter_keys(json_t *o, const json_t *attributes);

/* Whether an `attributes` filter of list_operations names a key only full operations have. */
bool ps_yt_wants_full_operations(const json_t *attributes);

/* list_operations' YTsaurus reply from /api/v1's (a new reference). */
json_t *ps_yt_list_operations(json_t *v1, const json_t *params);

#endif
