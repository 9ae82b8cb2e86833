/* sim_report.h — a simulation's outputs in a directory and report.html beside them (docs/ui.md,
 * docs/simulate.md): `poolsched simulate`, and each run of a what-if (what_if.h). */
#ifndef PS_WHATIF_SIM_REPORT_H
#define PS_WHATIF_SIM_REPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "io/scenario.h"
#include "sim/sim.h"

/* Writes DIR/report.html from DIR/pools.csv, the times of the run's job_preempted events
 * (preempted_ms[0..preempted_count), as events.jsonl has them) and DIR/summary.json: one
 * self-contained page (uPlot, the web UI's charts.js and the data
 * inlined; no network, no other file) with the charts of the scheduler's charts page per pool
 * tree. A pools.csv over PS_SIM_REPORT_MAX_CSV bytes is not inlined: the page says to rerun
 * with --pools-period. Errors: PS_EIO (naming the file), PS_ENOMEM. */
#define PS_SIM_REPORT_MAX_CSV (64u << 20)
int ps_sim_write_report(const char *dir, const int64_t *preempted_ms, size_t preempted_count,
                        struct ps_error *err);

/* How ps_sim_write_dir runs; a zeroed struct is `poolsched simulate`'s behaviour. */
struct ps_sim_dir_options {
    int64_t pools_period_ms;    /* --pools-period: 0 a pools.csv row per fair share update */
    /* called with 2, 4, ..., 100 (percent of the scenario's duration simulated) */
    void (*progress)(void *ctx, int percent);
    void *progress_ctx;
    struct ps_sim_stats *stats; /* when not NULL, receives the run's totals */
    /* when not NULL and set (another thread may set it), the run stops at its next 1/50 of
     * the duration: PS_ESTATE "cancelled" */
    const atomic_bool *cancel;
    /* events.jsonl not written (a scheduler's what-if task: a week's is ~0.8 GB a run, in the
     * scheduler's data dir); the other outputs and report.html are the same */
    bool no_events;
    /* when not NULL, called with each event of events.jsonl, written or not (ps_sim_options) */
    void (*on_event)(void *ctx, const struct ps_sim_event *ev);
    void *on_event_ctx;
    const char *event_tree;
};

/* What `poolsched simulate` does after parsing (cmd_simulate.c): runs sc (borrowed) and writes
 * events.jsonl, pools.csv, operations.csv, summary.json and report.html into dir (created if
 * missing). shown names the scenario in messages (`<shown>: ...`). Errors: PS_EINVAL bad input
 * (no output left behind), PS_EIO naming the file, PS_ENOMEM, PS_ESTATE cancelled. */
int ps_sim_write_dir(const struct ps_scenario *sc, const char *shown, const char *dir,
                     const struct ps_sim_dir_options *o, struct ps_error *err);

#endif
