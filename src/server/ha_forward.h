/* ha_forward.h — a standby passes a client's request on to the leader (docs/ha.md).
 *
 * The request goes to http://LEADER<path>?<query> with its method, body and the headers that
 * carry its meaning (Authorization, Content-Type, Accept, Cookie, X-YT-*), plus
 * PS_HA_FORWARDED_BY naming this standby and X-Forwarded-For the client; the connection waits
 * at most PS_HA_FORWARD_CONNECT_MS to open and PS_HA_FORWARD_TIMEOUT_MS in all. The leader's
 * status, content type, body and headers (not the hop-by-hop ones) become the reply, with
 * PS_HA_FORWARDED_TO naming the leader. A request that already carries PS_HA_FORWARDED_BY is
 * never forwarded again (the caller checks: no loops between instances that disagree on who
 * leads). */
#ifndef PS_SERVER_HA_FORWARD_H
#define PS_SERVER_HA_FORWARD_H

#include "core/error.h"
#include "server/http_server.h"

#define PS_HA_FORWARDED_BY "X-Poolsched-Forwarded-By"
#define PS_HA_FORWARDED_TO "X-Poolsched-Forwarded-To"
#define PS_HA_FORWARD_CONNECT_MS 1000
#define PS_HA_FORWARD_TIMEOUT_MS 15000

/* Forwards req to leader ("host:port") on behalf of self ("host:port") and fills resp with the
 * leader's answer. give_up(ctx), asked every PS_HA_FORWARD_CHECK_MS while the leader has not
 * answered, ends the wait when nonzero (the leader changed, or this standby is taking over and
 * stops its listener). Errors (resp untouched): PS_EIO when the leader cannot be reached or
 * did not answer in time (the message names it and why), PS_ESTATE when give_up ended it;
 * PS_ENOMEM. */
#define PS_HA_FORWARD_CHECK_MS 50
int ps_ha_forward(const struct ps_http_request *req, const char *leader, const char *self,
                  int (*give_up)(void *ctx), void *ctx, struct ps_http_response *resp,
                  struct ps_error *err);

#endif
