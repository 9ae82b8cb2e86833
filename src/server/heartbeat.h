/* heartbeat.h — the node protocol's face (api_nodes.c, long_poll.c; docs/api.md "Nodes"): one
 * node heartbeat, and the long poll that holds a heartbeat with nothing to give until the
 * tree's next update may give it something. */
#ifndef PS_SERVER_HEARTBEAT_H
#define PS_SERVER_HEARTBEAT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;
struct ps_svc_tree_state;
struct ps_svc_node;
struct ps_http_request;
struct ps_http_response;

#define PS_SERVICE_MAX_STDERR_BYTES (64 * 1024)   /* a job's stderr tail kept from a report */

/* A long-poll heartbeat (docs/api.md, "Nodes"; long_poll.c): when the heartbeat would give
 * the node nothing, it is held until deadline_ns instead of answered. */
#define PS_SVC_MAX_WAIT_MS 3600000
struct ps_svc_hold {
    const struct ps_http_request *req;
    struct ps_http_response *resp;
    int64_t deadline_ns;           /* monotonic; 0: answer, do not hold */
    bool rerun;                    /* a released held heartbeat run again: counted once */
    uint64_t held_at;              /* rerun: the node's heartbeat_seq when it was held */
    bool held;                     /* out: held, *reply is NULL */
};
/* One node heartbeat (docs/api.md); remote_addr (may be NULL) is kept as the node's address.
 * hold NULL: answered at once. */
int ps_api_heartbeat_json(struct ps_service *svc, const json_t *req, const char *remote_addr,
                          struct ps_svc_hold *hold, json_t **reply, struct ps_error *err);
/* Under svc->mu, after a fair share update of ts (long_poll.c): releases held heartbeats of
 * the tree's nodes that may now get jobs. changed: the update follows changes. */
void ps_svc_long_poll_wake(struct ps_service *svc, struct ps_svc_tree_state *ts,
                           bool changed);
/* Under svc->mu, at the end of a heartbeat's processing (long_poll.c): holds it when the reply
 * would be empty. Returns whether it is held. */
bool ps_svc_long_poll_hold(struct ps_service *svc, struct ps_svc_node *node,
                           struct ps_svc_hold *hold);

#endif
