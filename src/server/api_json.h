/* api_json.h — how the API shows resources, operations and jobs (api_orchid.c,
 * api_operations.c): the one JSON form of each, which the views, alerts, the event log and the
 * job archive share. */
#ifndef PS_SERVER_API_JSON_H
#define PS_SERVER_API_JSON_H

#include <jansson.h>

struct ps_service;
struct ps_svc_op;
struct ps_svc_job;
struct ps_resources;

/* Resources as the API shows them: cpu in cores, the others as integers, unlimited ones left
 * out (api_orchid.c). */
json_t *ps_api_resources_json(const struct ps_resources *r);
json_t *ps_svc_op_json(struct ps_service *svc, const struct ps_svc_op *op);
/* The brief form list_operations gives with "brief": true (no specs, no pending reason). */
json_t *ps_svc_op_brief_json(const struct ps_svc_op *op);
json_t *ps_svc_job_json(const struct ps_svc_job *job);

#endif
