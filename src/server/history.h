/* history.h — a bounded history of each pool tree's fair share updates, for the web UI's
 * charts (docs/ui.md, docs/api.md "History").
 *
 * After every fair share update the service samples, per pool (and the root): fair share,
 * usage and demand (ratios of the cluster, as the orchid's *_ratio), the integral guarantee's
 * accumulated volume and its capacity (share x seconds: the min over resources of volume /
 * cluster total, as accumulated_resource_ratio_volume), and per tree the cluster usage (the
 * root's usage ratio) and the scheduler's preemption counter. Memory is fixed per series:
 * the last PS_HISTORY_RECENT_POINTS samples as taken, and before them PS_HISTORY_BUCKETS points
 * of PS_HISTORY_BUCKET_MS each (the mean of the samples in the bucket; the counter's last
 * value), i.e. a day at 5-minute resolution. A pool absent from the whole window is dropped.
 * Closed buckets are persisted (ps_history_restore after a restart); recent samples are not.
 *
 * Not thread-safe: the service calls both functions under svc->mu.
 */
#ifndef PS_SERVER_HISTORY_H
#define PS_SERVER_HISTORY_H

#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "core/pool_tree.h"

#define PS_HISTORY_RECENT_POINTS 240
#define PS_HISTORY_BUCKETS 288
#define PS_HISTORY_BUCKET_MS (5 * 60 * 1000)
#define PS_HISTORY_MAX_POOLS_REPLY 1000

struct ps_history;

int ps_history_new(struct ps_history **out);
void ps_history_free(struct ps_history *h);

/* The width of a bucket (PS_HISTORY_BUCKET_MS unless the config's history_bucket says
 * otherwise); before the first sample. */
void ps_history_set_bucket_ms(struct ps_history *h, int64_t bucket_ms);

/* Samples tree after its fair share update at now_ms; preemptions = the counter's value. When
 * the sample closes a bucket and closed is not NULL, *closed is that bucket as a record to
 * persist (owned by the caller; NULL if none, or out of memory). */
int ps_history_sample(struct ps_history *h, struct ps_pool_tree *tree, int64_t now_ms,
                      double preemptions, json_t **closed);

/* Persistence of the buckets (the service keeps them in the store's objects, kind "history"):
 * a record's key is "<tree>/<slot>", slot = bucket number modulo PS_HISTORY_BUCKETS, so a tree
 * keeps at most PS_HISTORY_BUCKETS rows, each new day's bucket replacing the same slot's. The
 * recent samples and the bucket open at a stop are not kept. */
char *ps_history_record_key(const char *tree, int64_t t, int64_t bucket_ms);   /* malloc'd */
int64_t ps_history_record_time(const json_t *record);
/* Loads records (a JSON array of them, any order) into an empty history: those of the last
 * PS_HISTORY_BUCKETS buckets before now_ms, oldest first. 0 or PS_ENOMEM. */
int ps_history_restore(struct ps_history *h, json_t *records, int64_t now_ms);

/* The reply of get_history for tree (its name): {"pool_tree", "times": [ms...],
 * "cluster_usage": [...], "preemptions": [...], "pools": {name: {"parent", "fair_share",
 * "usage", "demand", "integral_volume", "integral_capacity"}}} with null where a pool had no
 * value. pools: a JSON array of names, or NULL for the root and its children (as last seen).
 * Errors: PS_ENOENT for a tree never sampled; PS_EINVAL for bad pools; PS_ENOMEM. */
int ps_history_query(const struct ps_history *h, const char *tree, const json_t *pools,
                     json_t **out, struct ps_error *err);

#endif
