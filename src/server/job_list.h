/* job_list.h — list_jobs' parameters and its page: YTsaurus's state filter, sort_field,
 * sort_order, offset and limit over an operation's jobs, and the state counts beside them
 * (docs/api.md "list_jobs"). */
#ifndef PS_SERVER_JOB_LIST_H
#define PS_SERVER_JOB_LIST_H

#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

/* body: the list_jobs request ({"operation_id", "state"?, "sort_field"?, "sort_order"?,
 * "offset"?, "limit"?}); jobs: every job of the operation in start order (consumed). On success
 * *reply = {"jobs": [the page], "state_counts": {state: n over every job, whatever the state
 * filter}, "job_count": jobs passing the filter}; now_ms is the clock of running jobs'
 * duration. Errors name the parameter, the value and the accepted ones; nothing is returned
 * then. */
int ps_job_list_page(const json_t *body, json_t *jobs, int64_t now_ms, json_t **reply,
                     struct ps_error *err);

#endif
