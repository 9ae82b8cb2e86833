/* what_if_metrics.h — what `poolsched what-if` compares (docs/what-if.md): the measures of one
 * simulated run, read back from its outputs, and the fidelity of the no-change replay against
 * the recorded event log. */
#ifndef PS_WHATIF_WHAT_IF_METRICS_H
#define PS_WHATIF_WHAT_IF_METRICS_H

#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "io/event_record.h"
#include "sim/sim.h"

/* A run's events, collected while it runs: ps_what_if_events_add is the simulator's
 * on_event (its ctx the collector), for pool tree tree; duration_ms the scenario's. NULL: out
 * of memory. */
struct ps_what_if_events;
struct ps_what_if_events *ps_what_if_events_new(const char *tree, int64_t duration_ms);
void ps_what_if_events_add(void *ctx, const struct ps_sim_event *ev);
void ps_what_if_events_free(struct ps_what_if_events *events);

/* The measures of the run of scenario (its nodes, its duration) whose events are in events
 * (collected while it ran) and whose pools.csv is in dir, for the collector's pool
 * tree, with fair share updates every period_ms:
 *   {"pools": {pool: M}, "users": {user: M}, "first_job": {operation: ms or null}}
 * with M: operations, wait_p50_ms, wait_p95_ms (submission to first job start; an operation
 * without a job by the end counts its whole wait until then; null for a pool with no operation,
 * one only in pools.csv), preempted_jobs, jobs_completed,
 * mean_usage (pools: the average of pools.csv's usage_ratio, the subtree included; users:
 * the dominant share of their running jobs over the nodes' total, averaged over 200 samples),
 * and for pools (from pools.csv) mean_fair_share and starving_ms (rows not non_starving x the
 * period). pools are tree's: an operation counts for the pool it ran in in tree (one in
 * several trees in each tree's report, with its jobs in tree only), one not in tree for no
 * pool; users count every operation and job.
 * Errors: PS_EIO naming the file, PS_ENOMEM. */
int ps_what_if_run_metrics(struct ps_what_if_events *events, const char *dir,
                           const json_t *scenario, int64_t period_ms, json_t **out,
                           struct ps_error *err);

/* Fidelity of the no-change replay (dir: its outputs) against the record:
 *   operation start error: for each operation submitted inside the window, |first job start in
 *     the replay - first job start in the record| (ms; a side without a start counts the end
 *     of the window); p50, p95, max;
 *   usage error: per pool of tree, the mean over samples (every duration/200 ms) of
 *     |replay usage share - recorded usage share|, the recorded share being the dominant share
 *     of the jobs running then in tree (every attempt, aborted ones included, of the pool's
 *     subtree) over the total then of tree's nodes (those its nodes_filter matches, following
 *     the scenario's tag and nodes_filter events); mean over pools and the worst pool.
 * In two steps, so that the record need not be kept while the replay runs:
 * ps_what_if_recorded_new takes what the fidelity needs from rec (scenario is the no-change
 * scenario: its nodes, pools and operations, borrowed until ps_what_if_recorded_free; since_ms
 * the window start), ps_what_if_fidelity compares it with the replay.
 * out: {"operations", "start_error_p50_ms", "start_error_p95_ms", "start_error_max_ms",
 *       "usage_error_mean", "usage_error_max", "usage_error_max_pool", "usage_error": {pool: e}}.
 * Errors: PS_EIO, PS_ENOMEM. */
struct ps_what_if_recorded;
int ps_what_if_recorded_new(const struct ps_event_record *rec, const json_t *scenario,
                            int64_t since_ms, const char *tree, struct ps_what_if_recorded **out,
                            struct ps_error *err);
void ps_what_if_recorded_free(struct ps_what_if_recorded *recorded);
int ps_what_if_fidelity(const struct ps_what_if_recorded *recorded, const json_t *replay_metrics,
                        const char *dir, json_t **out, struct ps_error *err);

#endif
