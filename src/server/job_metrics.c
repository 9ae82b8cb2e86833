/* job_metrics.c — each pool's job metrics: upstream's TJobMetrics (server/lib/scheduler/
 * job_metrics.cpp), values read from jobs' statistics and summed per pool, exported as
 * scheduler/pools/metrics/<name> counters of the pool and of all its ancestors, the root
 * ("<Root>") included (upstream's TFairShareTreeProfileManager::ApplyJobMetricsDelta).
 *
 * A job's statistics arrive with the node's reports (a running job's CPU monitor statistics
 * every heartbeat, the final ones when it ends); each job remembers the values already counted,
 * so a report adds only what grew since (upstream's controller sends deltas the same way).
 * The metrics poolsched's jobs have statistics for: the CPU monitor's aggregates and the total
 * time (a running job reports none: its time counts when it ends), as upstream's
 * FromJobStatistics reads them:
 *   aggregated_smoothed_cpu_usage_x100   job_proxy/aggregated_smoothed_cpu_usage_x100
 *   aggregated_max_cpu_usage_x100        job_proxy/aggregated_max_cpu_usage_x100
 *   aggregated_preemptable_cpu_x100      job_proxy/aggregated_preemptable_cpu_x100
 *   aggregated_preemptible_cpu_x100      job_proxy/aggregated_preemptible_cpu_x100
 *   aggregated_preempted_cpu_x100        job_proxy/aggregated_preempted_cpu_x100
 *   total_time                           time/total
 *   total_time_completed, total_time_aborted   time/total of a completed (aborted) job
 * Counters never go down: a value below the counted one (a node restarted the job's monitor)
 * adds nothing. pool_gauges.c holds each pool's series, so they leave /metrics with the pool.
 */
#include <stdio.h>
#include <string.h>

#include "server/job_metrics.h"
#include "server/service_state.h"

static const struct {
    const char *name;   /* upstream's sensor: scheduler/pools/metrics/<name> */
    const char *stat;   /* the statistics key (the heartbeat's, without the leading '/') */
    int state;          /* counted only for jobs ending in this state; -1 any */
} METRICS[PS_JOB_METRIC_COUNT] = {
    {"aggregated_smoothed_cpu_usage_x100", "job_proxy/aggregated_smoothed_cpu_usage_x100", -1},
    {"aggregated_max_cpu_usage_x100", "job_proxy/aggregated_max_cpu_usage_x100", -1},
    {"aggregated_preemptable_cpu_x100", "job_proxy/aggregated_preemptable_cpu_x100", -1},
    {"aggregated_preemptible_cpu_x100", "job_proxy/aggregated_preemptible_cpu_x100", -1},
    {"aggregated_preempted_cpu_x100", "job_proxy/aggregated_preempted_cpu_x100", -1},
    {"total_time", "time/total", -1},
    {"total_time_completed", "time/total", PS_JOB_COMPLETED},
    {"total_time_aborted", "time/total", PS_JOB_ABORTED},
};

int ps_svc_job_metrics_register(struct ps_service *svc, struct ps_metrics *r, struct ps_error *err)
{
    static const char *const labels[] = {"tree", "pool"};
    for (int i = 0; i < PS_JOB_METRIC_COUNT; i++) {
        char name[128], help[160];
        snprintf(name, sizeof name, "poolsched_pool_metrics_%s_total", METRICS[i].name);
        snprintf(help, sizeof help, "Job metric %s summed over the jobs of a pool's subtree "
                 "(upstream scheduler/pools/metrics/%s)", METRICS[i].name, METRICS[i].name);
        int rc = ps_metrics_counter(r, name, help, 2, labels, &svc->f_job_metrics[i], err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The pool of job's operation in the tree that scheduled it, or NULL (its tree was removed). */
static const struct ps_pool *job_pool(const struct ps_svc_job *job)
{
    const struct ps_operation *sop = job->op->sop;
    if (!sop || !sop->memberships || job->tree_slot < 0 || job->tree_slot >= sop->tree_count)
        return NULL;
    const struct ps_tree_op *m = sop->memberships[job->tree_slot];
    return m ? m->pool : NULL;
}

void ps_svc_job_metrics_update(struct ps_service *svc, struct ps_svc_job *job,
                               const json_t *stats, int state)
{
    if (!json_is_object(stats))
        return;
    const struct ps_pool *pool = job_pool(job);
    for (int i = 0; i < PS_JOB_METRIC_COUNT; i++) {
        if (METRICS[i].state >= 0 && METRICS[i].state != state)
            continue;
        const json_t *v = json_object_get(stats, METRICS[i].stat);
        if (!json_is_integer(v) || json_integer_value(v) <= job->metrics[i])
            continue;
        int64_t delta = json_integer_value(v) - job->metrics[i];
        job->metrics[i] = json_integer_value(v);
        for (const struct ps_pool *p = pool; p && svc->f_job_metrics[i]; p = p->parent) {
            const char *labels[2] = {ps_pool_tree_name(p->tree), p->name};
            struct ps_metric *m;
            if (ps_metric_family_get(svc->f_job_metrics[i], labels, &m, NULL) == 0)
                ps_metric_add(m, (double)delta);
        }
    }
}
