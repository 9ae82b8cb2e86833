/* sim_report.h — report.html beside a simulation's outputs (docs/ui.md, docs/simulate.md). */
#ifndef PS_CLI_SIM_REPORT_H
#define PS_CLI_SIM_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "io/scenario.h"

/* Writes DIR/report.html from DIR/pools.csv, DIR/events.jsonl (the job_preempted times) and
 * DIR/summary.json: one self-contained page (uPlot, the web UI's charts.js and the data
 * inlined; no network, no other file) with the charts of the scheduler's charts page per pool
 * tree. A pools.csv over PS_SIM_REPORT_MAX_CSV bytes is not inlined: the page says to rerun
 * with --pools-period. Errors: PS_EIO (naming the file), PS_ENOMEM. */
#define PS_SIM_REPORT_MAX_CSV (64u << 20)
int ps_sim_write_report(const char *dir, struct ps_error *err);

/* How ps_sim_write_dir runs; a zeroed struct is `poolsched simulate`'s behaviour. */
struct ps_sim_dir_options {
    int64_t pools_period_ms;    /* --pools-period: 0 a pools.csv row per fair share update */
    bool quiet;                 /* no "simulated ..." line on stderr */
    /* called with 2, 4, ..., 100 (percent of the scenario's duration simulated) */
    void (*progress)(void *ctx, int percent);
    void *progress_ctx;
};

/* What `poolsched simulate` does after parsing (cmd_simulate.c): runs sc (borrowed) and writes
 * events.jsonl, pools.csv, operations.csv, summary.json and report.html into dir (created if
 * missing). shown names the scenario in messages. Prints its errors (`error: <shown>: ...`) and
 * returns the exit code: 0, 2 bad input (no output left behind), 1 other failures. */
int ps_sim_write_dir(const struct ps_scenario *sc, const char *shown, const char *dir,
                     const struct ps_sim_dir_options *o);

#endif
