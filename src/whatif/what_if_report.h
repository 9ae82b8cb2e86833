/* what_if_report.h — the outputs of a what-if (docs/what-if.md): the one-screen text
 * summary, DIR/what-if.json and DIR/report.html (both runs side by side). */
#ifndef PS_WHATIF_WHAT_IF_REPORT_H
#define PS_WHATIF_WHAT_IF_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

/* The replay's tolerance (docs/what-if.md "Fidelity"): the no-change replay is trusted when
 * the mean over pools of the usage error is at most PS_WHAT_IF_USAGE_TOLERANCE (dominant share
 * points, 0..1) and the median operation start error at most
 * PS_WHAT_IF_START_TOLERANCE_HEARTBEATS heartbeat periods plus PS_WHAT_IF_START_TOLERANCE_MS. */
#define PS_WHAT_IF_USAGE_TOLERANCE 0.10
#define PS_WHAT_IF_START_TOLERANCE_HEARTBEATS 10
#define PS_WHAT_IF_START_TOLERANCE_MS 2000

struct ps_what_if_result {
    int64_t since_ms, until_ms;    /* the window replayed */
    int64_t requested_since_ms;    /* as asked: before since_ms when the record starts later */
    const char *tree;              /* the pool tree reported on */
    const json_t *changes;         /* [[path, value or null], ...] */
    const json_t *recorded, *changed;   /* ps_what_if_run_metrics of each run */
    const json_t *fidelity;        /* ps_what_if_fidelity of the recorded run */
    const json_t *scenario;        /* the no-change scenario */
};

/* Writes DIR/what-if.json and DIR/report.html; *json receives what-if.json's text and *text
 * the one-screen summary (each when not NULL; the caller frees). Errors: PS_EIO naming the
 * file, PS_ENOMEM. */
int ps_what_if_write(const struct ps_what_if_result *r, const char *dir, char **json,
                     char **text, struct ps_error *err);

#endif
