/* sim_report.h — report.html beside a simulation's outputs (docs/ui.md, docs/simulate.md). */
#ifndef PS_CLI_SIM_REPORT_H
#define PS_CLI_SIM_REPORT_H

#include "core/error.h"

/* Writes DIR/report.html from DIR/pools.csv, DIR/events.jsonl (the job_preempted times) and
 * DIR/summary.json: one self-contained page (uPlot, the web UI's charts.js and the data
 * inlined; no network, no other file) with the charts of the scheduler's charts page per pool
 * tree. A pools.csv over PS_SIM_REPORT_MAX_CSV bytes is not inlined: the page says to rerun
 * with --pools-period. Errors: PS_EIO (naming the file), PS_ENOMEM. */
#define PS_SIM_REPORT_MAX_CSV (64u << 20)
int ps_sim_write_report(const char *dir, struct ps_error *err);

#endif
