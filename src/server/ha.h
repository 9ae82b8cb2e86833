/* ha.h — standby schedulers on the PostgreSQL store (`poolsched scheduler --ha`; docs/ha.md).
 *
 * Off by default. With it, a scheduler first runs as a standby: it listens on its address and
 * answers GET /healthz 200 and GET /readyz 503 (with the leader's address and epoch), forwards
 * clients' requests to the leader (ha_forward.h) and answers node heartbeats, /metrics and what
 * it cannot forward 503 "not the leader" with the leader's address in the message and in the
 * X-Poolsched-Leader header; every poll period it tries to take the leader row (store.h: the
 * lease must have expired, judged by the database's clock). When it wins epoch E it stops the
 * standby listener, starts the service on the same address with its store fenced at E (loading
 * the state as a restart does: running jobs re-attach when their nodes heartbeat, they are not
 * started again), and renews the lease every lease/4. It steps down — exits with status
 * PS_HA_EXIT_DEPOSED, for its supervisor to start it again as a standby — when a write finds a
 * newer epoch, when a renewal is refused, or when no renewal has succeeded for a whole lease
 * (it can no longer prove it leads). */
#ifndef PS_SERVER_HA_H
#define PS_SERVER_HA_H

#include <signal.h>
#include <stdint.h>

#include "core/error.h"

#define PS_HA_EXIT_DEPOSED 75
#define PS_HA_DEFAULT_LEASE_MS 2000
#define PS_HA_POLL_MS 200

struct ps_service_config;
struct ps_service;
struct ps_ha;

/* Runs the standby until this instance wins the leader row (then 0: *out holds the election
 * for ps_ha_lead, cfg->port is the port the standby listened on, cfg->ha_epoch the epoch), or
 * until a signal of set arrives (then 1, *sig is it). Errors: the store's, the listener's. */
int ps_ha_standby(struct ps_service_config *cfg, const sigset_t *set, struct ps_ha **out,
                  int *sig, struct ps_error *err);

/* Leads: renews the lease on its own thread while svc serves (see the top for stepping down).
 * Errors: PS_EIO (no thread). */
int ps_ha_lead(struct ps_ha *ha, struct ps_service *svc, struct ps_error *err);

/* Stops renewing (the lease then runs out: a standby takes over after it) and frees. */
void ps_ha_free(struct ps_ha *ha);

/* Logs and exits PS_HA_EXIT_DEPOSED: a newer epoch leads. */
void ps_ha_step_down(struct ps_service *svc, const char *why) __attribute__((noreturn));

#endif
