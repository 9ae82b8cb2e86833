/* job_metrics.h — the jobs' metrics summed per pool (upstream's scheduler/pools/metrics/...):
 * what each job's statistics grew by, added to its pool and every ancestor, as /metrics
 * counters. Under svc->mu. */
#ifndef PS_SERVER_JOB_METRICS_H
#define PS_SERVER_JOB_METRICS_H

#include <jansson.h>

#include "core/error.h"

struct ps_service;
struct ps_svc_job;
struct ps_metrics;

/* Registers the pools' job metric counters, poolsched_pool_metrics_<name>_total{tree, pool}. */
int ps_svc_job_metrics_register(struct ps_service *svc, struct ps_metrics *r, struct ps_error *err);
/* Adds what job's metrics grew by in stats (a statistics map as a node reports it; a job
 * ending in state, or PS_JOB_RUNNING) to its pool's and its ancestors' counters. */
void ps_svc_job_metrics_update(struct ps_service *svc, struct ps_svc_job *job,
                               const json_t *stats, int state);

#endif
