/* alerts.h — what operators look for: the scheduler's alerts, as YTsaurus's
 * //sys/scheduler/@alerts (a list of errors) and per tree in the orchid
 * (//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/<tree>/alerts).
 *
 * Every alert has the YTsaurus error shape {"code", "message", "attributes": {...}} with
 * attributes.alert_type naming the kind (upstream's ESchedulerAlertType, snake case) and, for
 * a tree's alerts, attributes.pool_tree. Alerts are computed when read, from the state the
 * last fair share update left in the tree (pool outputs, pool usage) and from the tree's
 * config, so an alert clears as soon as its condition is gone — no alert is stored:
 *   update_fair_share      strong and burst (or resource flow) guarantees exceed the cluster and
 *                          were scaled down; names the pools and the ratio (docs/api.md)
 *   invalid_default_parent_pool  the tree's default_parent_pool is not an explicit pool
 *                          (ephemeral pools then go under the root, as upstream)
 *   pool_usage_exceeds_limits    a pool's usage is above its resource_limits (a lowered
 *                          limit: the excess is being preempted)
 *   update_pools           a pool's config_preset names a preset of the tree's
 *                          pool_config_presets that is missing or invalid (pool_preset.h); one
 *                          inner error per pool, with upstream's reason
 *   node_jobs_disabled     a node banned for its consecutive job aborts (node_health.h)
 *   no_standby_scheduler   --ha: no standby polled the store in the last 2 s (ha.h; a
 *                          poolsched alert, not upstream's)
 * All under svc->mu. */
#ifndef PS_SERVER_ALERTS_H
#define PS_SERVER_ALERTS_H

#include <jansson.h>

#include "core/pool_tree.h"

struct ps_service;

/* YTsaurus error {"code": 1, "message", "attributes": attributes + alert_type} (steals
 * attributes, may be NULL). */
json_t *ps_alert_new(const char *alert_type, const char *message, json_t *attributes);
/* The alerts of one tree (a new list). */
json_t *ps_alerts_tree(struct ps_service *svc, struct ps_pool_tree *tree);
/* Every scheduler alert: each tree's, then the nodes' (a new list). */
json_t *ps_alerts_scheduler(struct ps_service *svc);
/* node_health.c: the node ban alerts (appended to list). */
void ps_node_health_alerts(struct ps_service *svc, json_t *list);

#endif
