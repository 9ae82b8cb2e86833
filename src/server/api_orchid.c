/* api_orchid.c — //sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/<tree>/
 * fair_share_info/{pools,operations}/<name>/<attribute>... and the same elements at upstream's
 * current //sys/scheduler/orchid/scheduler/pool_trees/<tree>/{pools,operations}/...: the results of each tree's last fair
 * share update and starvation check, as the pools and operations keep them (pool_tree.h,
 * struct ps_element_dynamic), so removed pools never leave dangling names behind.
 *
 * Each element has the output attributes of formats.md section 2 (fs_output.h's list, same
 * names and units: cpu in cores, volumes in resource x seconds) plus starvation_status, status,
 * satisfaction_ratio, running_operation_count and operation_count for pools, and pool,
 * starvation_status, status and satisfaction_ratio for operations.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/schedule.h"
#include "core/tree_config.h"
#include "core/tree_demand.h"
#include "io/json_value.h"
#include "server/alerts.h"
#include "server/api_cypress.h"
#include "server/api_json.h"
#include "server/node_health.h"
#include "server/op_tentative.h"
#include "server/sched_host.h"
#include "server/service_state.h"
#include "server/svc_ops.h"

static json_t *share_json(const struct ps_share *s)
{
    json_t *o = json_object();
    for (int i = 0; i < PS_RES_COUNT; i++)
        json_object_set_new(o, ps_resource_name(i), json_real(isfinite(s->v[i]) ? s->v[i] : 0));
    return o;
}

static json_t *volume_json(const struct ps_volume *v)
{
    json_t *o = json_object();
    for (int i = 0; i < PS_RES_COUNT; i++)
        json_object_set_new(o, ps_resource_name(i), json_real(isfinite(v->v[i]) ? v->v[i] : 0));
    return o;
}

json_t *ps_api_resources_json(const struct ps_resources *r)
{
    json_t *o = json_object();
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (r->v[i] >= PS_RES_INFINITE)
            continue;
        if (i == PS_RES_CPU)
            json_object_set_new(o, "cpu", json_real(ps_res_get(r, i)));
        else
            json_object_set_new(o, ps_resource_name(i), json_integer(r->v[i]));
    }
    return o;
}

static void put_real(json_t *o, const char *key, double x)
{
    json_object_set_new(o, key, json_real(isfinite(x) ? x : 0));
}

/* pool: what only pools have (NULL for an operation: zeros). */
static json_t *element_json(const struct ps_element_dynamic *d, const struct ps_fs_pool_output *pool)
{
    static const struct ps_fs_pool_output no_pool;
    const struct ps_fs_element_output *o = &d->fs;
    const struct ps_fs_pool_output *po = pool ? pool : &no_pool;
    const struct ps_detailed_fair_share *f = &o->fair_share;
    json_t *e = json_object();
    put_real(e, "fair_share_ratio", ps_share_max_component(f->total));
    put_real(e, "usage_ratio", ps_share_max_component(o->usage_share));
    put_real(e, "demand_ratio", ps_share_max_component(o->demand_share));
    const char *dom = ps_resource_name(o->dominant_resource);
    json_object_set_new(e, "dominant_resource", json_string(dom ? dom : "cpu"));
    json_object_set_new(e, "detailed_fair_share",
                        json_pack("{s:o, s:o, s:o, s:o}", "total", share_json(&f->total),
                                  "strong_guarantee", share_json(&f->strong_guarantee),
                                  "integral_guarantee", share_json(&f->integral_guarantee),
                                  "weight_proportional", share_json(&f->weight_proportional)));
    json_object_set_new(e, "demand_share", share_json(&o->demand_share));
    json_object_set_new(e, "usage_share", share_json(&o->usage_share));
    json_object_set_new(e, "limits_share", share_json(&o->limits_share));
    json_object_set_new(e, "strong_guarantee_share", share_json(&po->strong_guarantee_share));
    /* upstream's older name of the dominant strong guarantee share; 0 for an operation */
    put_real(e, "min_share_ratio", ps_share_max_component(po->strong_guarantee_share));
    json_object_set_new(e, "resource_limits", ps_api_resources_json(&o->resource_limits));
    put_real(e, "accumulated_resource_ratio_volume", po->accumulated_resource_ratio_volume);
    json_object_set_new(e, "accumulated_resource_volume", volume_json(&po->accumulated_resource_volume));
    json_object_set_new(e, "integral_pool_capacity", volume_json(&po->integral_pool_capacity));
    put_real(e, "specified_burst_ratio", po->specified_burst_ratio);
    put_real(e, "specified_resource_flow_ratio", po->specified_resource_flow_ratio);
    put_real(e, "total_burst_ratio", po->total_burst_ratio);
    put_real(e, "total_resource_flow_ratio", po->total_resource_flow_ratio);
    put_real(e, "estimated_burst_usage_duration_seconds", po->estimated_burst_usage_duration_seconds);
    put_real(e, "strong_guarantee_ratio", ps_share_max_component(f->strong_guarantee));
    put_real(e, "integral_guarantee_ratio", ps_share_max_component(f->integral_guarantee));
    put_real(e, "weight_proportional_ratio", ps_share_max_component(f->weight_proportional));
    json_object_set_new(e, "proposed_integral_share", share_json(&po->proposed_integral_share));
    json_object_set_new(e, "inferred_strong_guarantee_resources",
                        ps_api_resources_json(&po->inferred_strong_guarantee));
    /* upstream's orchid calls the same resources effective_strong_guarantee_resources */
    json_object_set_new(e, "effective_strong_guarantee_resources",
                        ps_api_resources_json(&po->inferred_strong_guarantee));
    put_real(e, "weight", o->weight);
    json_object_set_new(e, "fifo_index", json_integer(o->fifo_index));
    json_object_set_new(e, "starvation_status",
                        json_string(ps_starvation_status_name(d->starvation)));
    json_object_set_new(e, "status", json_string(ps_sched_status_name(d->status)));
    put_real(e, "satisfaction_ratio", d->satisfaction_ratio);
    put_real(e, "local_satisfaction_ratio",
             ps_sched_satisfaction_ratio(&o->usage_share, &f->total, &o->demand_share));
    json_object_set_new(e, "fair_share_computed", json_boolean(d->valid));
    put_real(e, "effective_fair_share_starvation_tolerance", d->effective_tolerance);
    json_object_set_new(e, "effective_fair_share_starvation_timeout",
                        json_integer(d->effective_timeout_ms));
    json_object_set_new(e, "effective_fair_share_aggressive_starvation_timeout",
                        json_integer(d->effective_aggressive_timeout_ms));
    json_object_set_new(e, "effective_aggressive_starvation_enabled",
                        json_boolean(d->effective_aggressive_starvation_enabled));
    return e;
}

static json_t *doubles_json(const struct ps_res_doubles *d)
{
    json_t *o = json_object();
    for (int i = 0; i < PS_RES_COUNT; i++)
        json_object_set_new(o, ps_resource_name(i), json_real(d->v[i]));
    return o;
}

static void put_promised(json_t *e, const struct ps_share *promised, const struct ps_resources *total)
{
    struct ps_res_doubles r;
    for (int i = 0; i < PS_RES_COUNT; i++)
        r.v[i] = promised->v[i] * ps_res_get(total, i);
    json_object_set_new(e, "promised_fair_share_resources", doubles_json(&r));
    put_real(e, "promised_dominant_fair_share", ps_share_max_component(*promised));
}

static const char *const guarantee_type_names[] = {"none", "burst", "relaxed"};

static json_t *pool_json(struct ps_pool *p, const struct ps_tree_demands *d)
{
    json_t *e = element_json(&p->dynamic, &p->fs_pool);
    int slot = p->is_root ? d->pool_count : p->index;
    json_object_set_new(e, "resource_demand", doubles_json(&d->pool_demand[slot]));
    json_object_set_new(e, "limited_resource_demand", doubles_json(&d->pool_limited[slot]));
    put_promised(e, &d->pool_promised[slot], &d->total);
    json_object_set_new(e, "resource_usage", ps_api_resources_json(&p->usage));
    struct ps_resources specified = ps_resources_opt_or_infinite(&p->config.resource_limits);
    json_object_set_new(e, "specified_resource_limits", ps_api_resources_json(&specified));
    /* the strong guarantee as the pool sets it (upstream's key), unset resources left out */
    struct ps_resources strong = ps_resources_opt_or_infinite(&p->config.strong_guarantee_resources);
    json_object_set_new(e, "strong_guarantee_resources", ps_api_resources_json(&strong));
    int gt = p->config.integral_guarantees.guarantee_type;
    json_object_set_new(e, "integral_guarantee_type",
                        json_string(gt >= 0 && gt < 3 ? guarantee_type_names[gt] : "none"));
    int order = p->config.fifo_pool_scheduling_order.set
                    ? (int)p->config.fifo_pool_scheduling_order.value
                    : ps_pool_tree_config(p->tree)->fifo_pool_scheduling_order;
    json_object_set_new(e, "effective_use_pool_satisfaction_for_scheduling",
                        json_boolean(ps_pool_use_satisfaction_for_scheduling(p)));
    /* allow_aggressive_preemption: the pool's own (null when unset), and the effective value */
    const struct ps_opt_bool *aggr = &p->config.allow_aggressive_preemption;
    json_object_set_new(e, "aggressive_preemption_allowed",
                        aggr->set ? json_boolean(aggr->value) : json_null());
    json_object_set_new(e, "effective_aggressive_preemption_allowed",
                        json_boolean(ps_pool_aggressive_preemption_allowed(p)));
    json_object_set_new(e, "effective_fifo_pool_scheduling_order",
                        json_string(order == PS_FIFO_ORDER_FIFO ? "fifo" : "satisfaction"));
    if (p->parent)
        json_object_set_new(e, "parent", json_string(p->parent->name));
    json_object_set_new(e, "mode", json_string(p->config.mode == PS_MODE_FIFO ? "fifo" : "fair_share"));
    /* the starvation settings the pool runs with: its own, its preset's, else inherited */
    put_real(e, "fair_share_starvation_tolerance", p->dynamic.effective_tolerance);
    json_object_set_new(e, "fair_share_starvation_timeout",
                        json_integer(p->dynamic.effective_timeout_ms));
    json_object_set_new(e, "config_preset", p->config.config_preset
                                                ? json_string(p->config.config_preset)
                                                : json_null());
    json_object_set_new(e, "is_ephemeral", json_boolean(p->ephemeral));
    json_object_set_new(e, "running_operation_count", json_integer(p->running_operation_count));
    json_object_set_new(e, "operation_count", json_integer(p->operation_count));
    json_object_set_new(e, "lightweight_running_operation_count",
                        json_integer(p->lightweight_running_operation_count));
    json_object_set_new(e, "lightweight_operations_enabled",
                        json_boolean(p->config.enable_lightweight_operations.set &&
                                     p->config.enable_lightweight_operations.value));
    json_object_set_new(e, "effective_lightweight_operations_enabled",
                        json_boolean(ps_pool_lightweight_enabled(p)));
    json_object_set_new(e, "max_running_operation_count",
                        json_integer(ps_pool_max_running_operations(p)));
    json_object_set_new(e, "max_operation_count", json_integer(ps_pool_max_operations(p)));
    return e;
}

static json_t *op_json(struct ps_tree_op *op, const struct ps_tree_demands *d)
{
    json_t *e = element_json(&op->dynamic, NULL);
    json_object_set_new(e, "resource_demand", doubles_json(&d->op_demand[op->index]));
    json_object_set_new(e, "limited_resource_demand", doubles_json(&d->op_limited[op->index]));
    put_promised(e, &d->op_promised[op->index], &d->total);
    json_object_set_new(e, "scheduling_index", json_integer(op->scheduling_index));
    /* the spec's, as a pool's above; it gives the operation no share (op_spec.h) */
    struct ps_resources strong = ps_resources_opt_or_infinite(&op->strong_guarantee_resources);
    json_object_set_new(e, "strong_guarantee_resources", ps_api_resources_json(&strong));
    const struct ps_svc_op *host = ps_tree_op_host(op);
    const char *tag = host && host->sop ? ps_pool_profiling_tag(op->pool, host->sop->spec.custom_profiling_tag)
                                        : NULL;
    json_object_set_new(e, "custom_profiling_tag", tag ? json_string(tag) : json_null());
    json_object_set_new(e, "scheduling_priority",
                        json_string(op->high_priority ? "high" : "medium"));
    json_object_set_new(e, "promised_guarantee_fair_share", share_json(&op->promised_guarantee_share));
    int counts[PS_ALLOC_CLASS_COUNT] = {0};
    ps_svc_op_preemptible_counts(op, counts);
    json_object_set_new(e, "preemptible_job_count", json_integer(counts[PS_ALLOC_PREEMPTIBLE]));
    json_object_set_new(e, "aggressively_preemptible_job_count",
                        json_integer(counts[PS_ALLOC_AGGRESSIVELY_PREEMPTIBLE]));
    const char *why = op->fifo_limited ? "fifo_schedulable_element_count_limit_reached"
                      : !op->running ? "is_not_running"
                      : op->suspended ? "suspended"
                      : op->pending_job_count <= 0 ? "no_pending_allocations" : NULL;
    json_object_set_new(e, "unschedulable_reason", why ? json_string(why) : json_null());
    json_object_set_new(e, "resource_usage", ps_api_resources_json(&op->usage));
    json_object_set_new(e, "specified_resource_limits", ps_api_resources_json(&op->resource_limits));
    json_object_set_new(e, "pool", json_string(op->pool ? op->pool->name : ""));
    json_object_set_new(e, "user", json_string(op->user));
    json_object_set_new(e, "running", json_boolean(op->running));
    json_object_set_new(e, "lightweight", json_boolean(op->running && op->lightweight));
    json_object_set_new(e, "pending_job_count", json_integer(op->pending_job_count));
    json_t *unsatisfied = json_object();
    for (int r = 0; r < PS_RES_COUNT; r++)
        json_object_set_new(unsatisfied, ps_resource_name(r),
                            json_integer(op->min_needed_resources_unsatisfied_count[r]));
    json_object_set_new(e, "min_needed_resources_unsatisfied_count", unsatisfied);
    int slot = host ? ps_svc_op_tree_slot(host, ps_pool_tree_name(op->tree)) : -1;
    json_object_set_new(e, "tentative", json_boolean(host && ps_svc_tentative_is(host, ps_pool_tree_name(op->tree))));
    json_object_set_new(e, "deactivation_reasons",
                        json_pack("{s:I}", "saturated_in_tentative_tree",
                                  (json_int_t)(slot >= 0 ? host->trees[slot].saturated_in_tentative_tree
                                                         : 0)));
    return e;
}

static json_t *pools_map(struct ps_pool_tree *tree, const struct ps_tree_demands *d)
{
    json_t *m = json_object();
    json_object_set_new(m, "<Root>", pool_json(ps_pool_tree_root(tree), d));
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        json_object_set_new(m, p->name, pool_json(p, d));
    }
    return m;
}

static json_t *ops_map(struct ps_pool_tree *tree, const struct ps_tree_demands *d)
{
    json_t *m = json_object();
    for (int i = 0; i < ps_pool_tree_operation_count(tree); i++) {
        struct ps_tree_op *op = ps_pool_tree_operation_at(tree, i);
        json_object_set_new(m, op->id, op_json(op, d));
    }
    return m;
}

/* user_to_ephemeral_pools: each user's ephemeral pools (created for the user's operations),
 * names sorted as the pool array keeps them. */
static json_t *user_to_ephemeral_pools(struct ps_pool_tree *tree)
{
    json_t *m = json_object();
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        if (!p->ephemeral || !p->ephemeral_user)
            continue;
        json_t *list = json_object_get(m, p->ephemeral_user);
        if (!list) {
            list = json_array();
            json_object_set_new(m, p->ephemeral_user, list);
        }
        json_array_append_new(list, json_string(p->name));
    }
    return m;
}

/* config: the tree's config as the scheduler uses it, after upstream's postprocessing:
 * non_preemptible_resource_usage_threshold's user_slots default to
 * max_unpreemptible_running_allocation_count (ps_tree_config_non_preemptible_threshold). */
static json_t *config_json(const struct ps_pool_tree *tree)
{
    const struct ps_tree_config *cfg = ps_pool_tree_config(tree);
    struct ps_value v;
    if (ps_tree_config_to_value(cfg, &v) != 0)
        return NULL;
    json_t *j = ps_value_to_json(&v);
    ps_value_release(&v);
    struct ps_resources_opt t = ps_tree_config_non_preemptible_threshold(cfg);
    json_t *threshold = json_object();
    for (int r = 0; r < PS_RES_COUNT; r++)
        if (t.set & (1u << r))
            json_object_set_new(threshold, ps_resource_name(r), json_real(ps_res_get(&t.r, r)));
    if (!j || !threshold || json_object_set(j, "non_preemptible_resource_usage_threshold", threshold)) {
        json_decref(j);
        j = NULL;
    }
    json_decref(threshold);
    return j;
}

/* The tree's node: names[3..count) below it. */
static int tree_get(struct ps_service *svc, struct ps_pool_tree *tree,
                    const struct ps_tree_demands *d, char **names, size_t count, json_t **out,
                    struct ps_error *err);

static int missing(struct ps_error *err, char **names, size_t upto)
{
    char path[1024] = "//sys/scheduler/orchid";
    size_t used = strlen(path);
    for (size_t i = 0; i <= upto; i++) {
        int n = snprintf(path + used, sizeof path - used, "/%s", names[i]);
        if (n < 0 || (size_t)n >= sizeof path - used)
            break;
        used += (size_t)n;
    }
    return ps_error_set(err, PS_ENOENT, "path %s does not exist in the orchid", path);
}

/* *out = the node of root at names[from..count) (a new reference); takes root's reference. */
static int descend(json_t *root, char **names, size_t from, size_t count, json_t **out,
                   struct ps_error *err)
{
    json_t *cur = root;
    for (size_t i = from; i < count; i++) {
        json_t *next = json_is_object(cur) ? json_object_get(cur, names[i]) : NULL;
        if (!next) {
            json_decref(root);
            return missing(err, names, i);
        }
        cur = next;
    }
    *out = json_incref(cur);
    json_decref(root);
    return 0;
}

/* scheduler/service: upstream's (connected, last_connection_time, hostname: the scheduler
 * that serves and since when it does) and the standby schedulers' view (docs/ha.md): ha,
 * epoch, this leader's address and holder, the standbys that polled in the last 2 s. Times
 * are ms since the Unix epoch, as everywhere in /api/v1. */
static json_t *service_json(struct ps_service *svc)
{
    struct ps_store_leader l;
    pthread_mutex_lock(&svc->ha_mu);
    l = svc->ha_view;
    pthread_mutex_unlock(&svc->ha_mu);
    char host[256] = "";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    char address[96];
    snprintf(address, sizeof address, "%s:%d", svc->cfg.host, (int)svc->cfg.port);
    json_t *standbys = json_array();
    for (char *p = l.standby_addresses, *end; svc->cfg.ha && *p; p = *end ? end + 1 : end) {
        end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        json_array_append_new(standbys, json_stringn(p, (size_t)(end - p)));
    }
    bool known = svc->cfg.ha && l.epoch == svc->cfg.ha_epoch;
    return json_pack("{s:b, s:I, s:s, s:b, s:I, s:s, s:s, s:o}", "connected", 1,
                     "last_connection_time",
                     (json_int_t)(known ? l.since_ms : svc->started_ms), "hostname", host, "ha",
                     svc->cfg.ha, "epoch", (json_int_t)svc->cfg.ha_epoch, "address", address,
                     "holder", known ? l.holder : "", "standbys", standbys);
}

/* operations/<id>: upstream's runtime progress of a running operation, per tree it runs in
 * (scheduling_info_per_pool_tree/<tree>: pool, tentative). */
static int operations_get(struct ps_service *svc, char **names, size_t count, json_t **out,
                          struct ps_error *err)
{
    json_t *all = json_object();
    for (int i = 0; all && i < svc->op_count; i++) {
        const struct ps_svc_op *op = svc->op_list[i];
        if (op->finished || !op->sop || (count > 2 && strcmp(op->id, names[2]) != 0))
            continue;
        json_t *per_tree = json_object();
        for (int k = 0; per_tree && k < op->sop->tree_count; k++) {
            const struct ps_tree_op *m = op->sop->memberships[k];
            if (m)
                json_object_set_new(per_tree, op->sop->tree_names[k],
                                    json_pack("{s:s, s:b}", "pool", m->pool ? m->pool->name : "",
                                              "tentative",
                                              ps_svc_tentative_is(op, op->sop->tree_names[k])));
        }
        json_object_set_new(all, op->id, json_pack("{s:{s:o}}", "progress",
                                                   "scheduling_info_per_pool_tree", per_tree));
    }
    if (!all)
        return ps_error_set(err, PS_ENOMEM, "out of memory reading the orchid");
    return descend(all, names, 2, count, out, err);
}

int ps_orchid_get(struct ps_service *svc, char **names, size_t count, json_t **out,
                  struct ps_error *err)
{
    if (count == 0) {
        *out = json_pack("{s:{s:{}, s:{}, s:{}, s:{}}}", "scheduler",
                         "scheduling_info_per_pool_tree", "pool_trees", "service", "operations");
        return 0;
    }
    if (strcmp(names[0], "scheduler") != 0)
        return missing(err, names, 0);
    if (count == 1) {
        *out = json_pack("{s:{}, s:{}, s:{}, s:{}}", "scheduling_info_per_pool_tree", "pool_trees",
                         "service", "operations");
        return 0;
    }
    if (strcmp(names[1], "service") == 0) {   /* which scheduler serves (docs/ha.md) */
        json_t *s = service_json(svc);
        if (!s)
            return ps_error_set(err, PS_ENOMEM, "out of memory reading the orchid");
        return descend(s, names, 2, count, out, err);
    }
    if (strcmp(names[1], "nodes") == 0)   /* node bans and alerts (node_health.h) */
        return ps_node_health_orchid(svc, names + 1, count - 1, out, err);
    if (strcmp(names[1], "operations") == 0)   /* operations/<id>/progress/... */
        return operations_get(svc, names, count, out, err);
    /* pool_trees/<tree>/{pools,operations,pool_count,...}: upstream's current layout, the
     * same elements as scheduling_info_per_pool_tree/<tree>/fair_share_info/... */
    bool current = strcmp(names[1], "pool_trees") == 0;
    if (!current && strcmp(names[1], "scheduling_info_per_pool_tree") != 0)
        return missing(err, names, 1);
    if (count == 2) {
        json_t *m = json_object();
        for (int i = 0; i < ps_strategy_tree_count(svc->strategy); i++)
            json_object_set_new(m, ps_pool_tree_name(ps_strategy_tree_at(svc->strategy, i)),
                                current ? json_object() : json_pack("{s:{}}", "fair_share_info"));
        *out = m;
        return 0;
    }
    struct ps_pool_tree *tree = ps_strategy_find_tree(svc->strategy, names[2]);
    if (!tree)
        return missing(err, names, 2);
    struct ps_tree_demands d;
    if (ps_tree_demands_compute(tree, &d) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory reading the orchid");
    int rc;
    if (current && count > 3 && (strcmp(names[3], "pools") == 0 ||
                                 strcmp(names[3], "operations") == 0 ||
                                 strcmp(names[3], "pool_count") == 0)) {
        char **old = malloc((count + 1) * sizeof *old);
        if (!old) {
            ps_tree_demands_release(&d);
            return ps_error_set(err, PS_ENOMEM, "out of memory reading the orchid");
        }
        memcpy(old, names, 3 * sizeof *old);
        old[3] = (char *)"fair_share_info";
        memcpy(old + 4, names + 3, (count - 3) * sizeof *old);
        rc = tree_get(svc, tree, &d, old, count + 1, out, err);
        free(old);
    } else {
        rc = tree_get(svc, tree, &d, names, count, out, err);
        if (rc == 0 && current && count == 3) {   /* the tree: its elements at the top */
            json_t *info = json_object_get(*out, "fair_share_info");
            json_object_update(*out, info);
            json_object_del(*out, "fair_share_info");
        }
    }
    ps_tree_demands_release(&d);
    return rc;
}

static int tree_get(struct ps_service *svc, struct ps_pool_tree *tree,
                    const struct ps_tree_demands *d, char **names, size_t count, json_t **out,
                    struct ps_error *err)
{
    json_t *cur;
    if (count == 3) {
        *out = json_pack("{s:{s:o, s:o, s:i}, s:o, s:o}", "fair_share_info", "pools",
                         pools_map(tree, d), "operations", ops_map(tree, d), "pool_count",
                         ps_pool_tree_pool_count(tree), "alerts",
                         ps_alerts_tree(svc, tree), "user_to_ephemeral_pools",
                         user_to_ephemeral_pools(tree));
        json_t *root = pool_json(ps_pool_tree_root(tree), d);
        for (int i = 0; i < 2 && *out && root; i++) {
            const char *key = i == 0 ? "resource_limits" : "resource_usage";
            json_object_set(*out, key, json_object_get(root, key));
        }
        json_decref(root);
        return 0;
    }
    if (strcmp(names[3], "alerts") == 0 && count == 4) {   /* alerts.h */
        *out = ps_alerts_tree(svc, tree);
        return 0;
    }
    if ((strcmp(names[3], "resource_limits") == 0 || strcmp(names[3], "resource_usage") == 0)) {
        /* the tree's (upstream's tree orchid): its root's, the tree's nodes' total and usage */
        json_t *root = pool_json(ps_pool_tree_root(tree), d);
        cur = root ? json_incref(json_object_get(root, names[3])) : NULL;
        json_decref(root);
        if (!cur)
            return ps_error_set(err, PS_ENOMEM, "out of memory reading the orchid");
        return descend(cur, names, 4, count, out, err);
    }
    bool is_config = strcmp(names[3], "config") == 0;
    if (is_config || strcmp(names[3], "user_to_ephemeral_pools") == 0) {
        cur = is_config ? config_json(tree) : user_to_ephemeral_pools(tree);
        if (!cur)
            return ps_error_set(err, PS_ENOMEM, "out of memory reading the orchid");
        return descend(cur, names, 4, count, out, err);
    }
    if (strcmp(names[3], "fair_share_info") != 0)
        return missing(err, names, 3);
    if (count == 4) {
        *out = json_pack("{s:o, s:o, s:i}", "pools", pools_map(tree, d), "operations",
                         ops_map(tree, d), "pool_count", ps_pool_tree_pool_count(tree));
        return 0;
    }
    if (strcmp(names[4], "pool_count") == 0 && count == 5) {   /* the root not counted */
        *out = json_integer(ps_pool_tree_pool_count(tree));
        return 0;
    }
    if (strcmp(names[4], "pools") == 0) {
        if (count == 5) {
            *out = pools_map(tree, d);
            return 0;
        }
        struct ps_pool *p = ps_pool_tree_find_pool(tree, names[5]);
        if (!p)
            return missing(err, names, 5);
        cur = pool_json(p, d);
    } else if (strcmp(names[4], "operations") == 0) {
        if (count == 5) {
            *out = ops_map(tree, d);
            return 0;
        }
        struct ps_tree_op *op = ps_pool_tree_find_operation(tree, names[5]);
        if (!op)
            return missing(err, names, 5);
        cur = op_json(op, d);
    } else {
        return missing(err, names, 4);
    }
    return descend(cur, names, 6, count, out, err);
}
