/* service.h — the scheduler daemon as its callers see it: start it on a configuration
 * (service_config.h), ask its port, stop it (service_life.c). The `scheduler` command, the
 * benchmarks' in-process scheduler (bench_hooks.c) and the tests start it here; the daemon's own
 * files include the rooms they use instead (docs/design.md, "The scheduler service"). */
#ifndef PS_SERVER_SERVICE_H
#define PS_SERVER_SERVICE_H

#include <stdint.h>

#include "core/error.h"
#include "server/service_config.h"

struct ps_service;

#define PS_SERVICE_DEFAULT_TREE "physical"
#define PS_SERVICE_CLUSTER_SECRET_FILE "cluster_secret"

/* Opens the data dir (store, tokens, secret), loads the state, starts HTTP and the engine loop.
 * Errors: PS_EIO (files, listen), PS_EINVAL (bad stored state), PS_ENOMEM. */
int ps_service_start(const struct ps_service_config *cfg, struct ps_service **out,
                     struct ps_error *err);
/* Stops HTTP and the loop, flushes the journal and frees. NULL is a no-op. */
void ps_service_stop(struct ps_service *svc);
uint16_t ps_service_port(const struct ps_service *svc);

#endif
