/* metrics.h — a small thread-safe Prometheus registry: counters, gauges and histograms with
 * labels, rendered in the text exposition format (version 0.0.4).
 *
 * A registry holds metric families (one name, one type, fixed label names); a family holds one
 * series per distinct tuple of label values. Families and series are created once and then
 * updated from any thread: keep the `struct ps_metric *` of a hot series instead of looking it
 * up on every update.
 *
 * Output is deterministic: families sorted by name, series by their label values (compared in
 * label order, bytewise), histogram buckets by bound. Numbers print as integers when integral
 * (below 1e15), otherwise with the shortest %g form that reads back to the same double;
 * infinities as +Inf/-Inf, NaN as NaN.
 *
 * Threads: every function may be called from any thread. Each family has its own mutex, so
 * updates of different families never contend; rendering locks one family at a time, so a
 * render is consistent within each family (a histogram's buckets, sum and count agree).
 */
#ifndef PS_SERVER_METRICS_H
#define PS_SERVER_METRICS_H

#include <stddef.h>

#include "core/error.h"

#define PS_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PS_METRICS_MAX_LABELS 8
#define PS_METRICS_MAX_SERIES 200000  /* per family: bounds memory if a label value runs wild */

enum ps_metric_type {
    PS_METRIC_COUNTER,
    PS_METRIC_GAUGE,
    PS_METRIC_HISTOGRAM,
};

struct ps_metrics;         /* the registry */
struct ps_metric_family;   /* one name; owned by the registry */
struct ps_metric;          /* one series of a family; owned by the registry */

int ps_metrics_new(struct ps_metrics **out, struct ps_error *err);

/* Frees the registry with its families and series. NULL is a no-op. */
void ps_metrics_free(struct ps_metrics *reg);

/* Registers a family, or returns the existing one if a family of that name was registered with
 * the same type, label names and buckets (so independent modules may share a registry).
 * name matches [a-zA-Z_:][a-zA-Z0-9_:]*; label names match [a-zA-Z_][a-zA-Z0-9_]*, do not start
 * with "__", are unique and, for histograms, are not "le". help is free text (escaped on output).
 * A family without labels gets its single series at once, so it renders as 0 before any update.
 * bounds: the histogram's finite upper bounds in strictly increasing order (a +Inf bucket is
 * implicit); ignored for counters and gauges.
 * The family stays valid until ps_metrics_free.
 * Errors: PS_EINVAL naming the bad name or bound, PS_EEXIST for the same name with a different
 * definition, PS_ENOMEM. */
int ps_metrics_register(struct ps_metrics *reg, enum ps_metric_type type, const char *name,
                        const char *help, size_t label_count, const char *const *label_names,
                        const double *bounds, size_t bound_count,
                        struct ps_metric_family **out, struct ps_error *err);

/* Shorthands for ps_metrics_register. */
int ps_metrics_counter(struct ps_metrics *reg, const char *name, const char *help,
                       size_t label_count, const char *const *label_names,
                       struct ps_metric_family **out, struct ps_error *err);
int ps_metrics_gauge(struct ps_metrics *reg, const char *name, const char *help,
                     size_t label_count, const char *const *label_names,
                     struct ps_metric_family **out, struct ps_error *err);
int ps_metrics_histogram(struct ps_metrics *reg, const char *name, const char *help,
                         size_t label_count, const char *const *label_names,
                         const double *bounds, size_t bound_count,
                         struct ps_metric_family **out, struct ps_error *err);

/* Finds or creates the series with these label values (label_count of them, in the order of the
 * family's label names; any UTF-8 text, escaped on output). label_values may be NULL for a
 * family without labels. The series stays valid until ps_metrics_free.
 * Errors: PS_EINVAL for a NULL value, PS_ELIMIT beyond PS_METRICS_MAX_SERIES, PS_ENOMEM. */
int ps_metric_family_get(struct ps_metric_family *fam, const char *const *label_values,
                         struct ps_metric **out, struct ps_error *err);

/* The series' value of label i (in the order of its family's label names). */
const char *ps_metric_label(const struct ps_metric *m, size_t i);

/* Removes the series from its family and frees it (a gauge of something gone: a removed pool);
 * the caller holds no other pointer to it. */
void ps_metric_remove(struct ps_metric *m);

/* Counter: adds delta (negative or NaN deltas are a caller bug and are ignored). Gauge: adds
 * delta (any sign). Histogram: not allowed (ignored). */
void ps_metric_add(struct ps_metric *m, double delta);

/* Gauge only: sets the value. */
void ps_metric_set(struct ps_metric *m, double value);

/* Histogram only: counts value into the first bucket whose bound is >= value (le semantics),
 * adds it to the sum and increments the count. NaN is ignored. */
void ps_metric_observe(struct ps_metric *m, double value);

/* The current value of a counter or gauge, or the observation count of a histogram. */
double ps_metric_value(struct ps_metric *m);

/* Renders the whole registry into a malloc'd NUL-terminated string (*out, owned by the caller;
 * *len excludes the NUL, len may be NULL). Errors: PS_ENOMEM. */
int ps_metrics_render(struct ps_metrics *reg, char **out, size_t *len, struct ps_error *err);

/* Writes the exposition form of v into buf (see above); returns buf. */
char *ps_metrics_format_double(double v, char buf[32]);

#endif
