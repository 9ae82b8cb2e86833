/* alerts.c — the scheduler's alerts (alerts.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/nodes.h"
#include "server/alerts.h"

#include "core/user_pools.h"
#include "server/api_json.h"
#include "server/service_state.h"

json_t *ps_alert_new(const char *alert_type, const char *message, json_t *attributes)
{
    json_t *attrs = attributes ? attributes : json_object();
    json_object_set_new(attrs, "alert_type", json_string(alert_type));
    return json_pack("{s:i, s:s, s:o}", "code", 1, "message", message, "attributes", attrs);
}

/* ---- guarantees overcommitted ----------------------------------------------------------- */

/* upstream's EErrorCode::PoolTreeGuaranteesOvercommit (yt/yt/library/vector_hdrf/public.h) */
#define POOL_TREE_GUARANTEES_OVERCOMMIT 29000

/* Upstream's check (ValidateAndAdjustSpecifiedGuarantees): the root's children's strong
 * guarantees plus every burst guarantee (resource flow) against the cluster. The engine scales
 * the root's strong guarantee and every burst ratio down by one factor when they do not fit;
 * the pools' outputs keep the specified values, so the check can be redone here. */
static void zero_total_alert(struct ps_pool_tree *tree, json_t *list, bool burst, json_t *pools,
                             int resource)
{
    char msg[256];
    snprintf(msg, sizeof msg, "Strong guarantees and %s exceed total cluster resources",
             burst ? "burst guarantees" : "resource flows");
    json_t *inner = json_pack("{s:i, s:s, s:{s:O, s:s}}", "code", POOL_TREE_GUARANTEES_OVERCOMMIT, "message", msg, "attributes",
                              "pools", pools, "resource", ps_resource_name(resource));
    char top[512];
    snprintf(top, sizeof top,
             "Found pool configuration issues during fair share update in tree \"%s\": "
             "%s (the cluster has no %s)", ps_pool_tree_name(tree), msg, ps_resource_name(resource));
    json_t *a = ps_alert_new("update_fair_share", top,
                             json_pack("{s:s, s:o}", "pool_tree", ps_pool_tree_name(tree), "pools", pools));
    json_object_set_new(a, "inner_errors", json_pack("[o]", inner));
    json_array_append_new(list, a);
}

static void overcommit_alert(struct ps_pool_tree *tree, json_t *list, bool burst)
{
    struct ps_pool *root = ps_pool_tree_root(tree);
    if (!root->dynamic.valid)
        return;
    struct ps_resources total = ps_pool_tree_total_resources(tree);
    const struct ps_fs_pool_output *ro = &root->fs_pool;
    double extra = burst ? ro->total_burst_ratio : ro->total_resource_flow_ratio;
    double strong[PS_RES_COUNT] = {0};
    json_t *pools = json_array();
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        if (!p->dynamic.valid)
            continue;
        bool named = false;
        if (p->parent == root) {
            for (int r = 0; r < PS_RES_COUNT; r++) {
                double v = (double)p->fs_pool.inferred_strong_guarantee.v[r];
                strong[r] += v;
                named |= v > 0;
            }
        }
        const struct ps_fs_pool_output *po = &p->fs_pool;
        named |= (burst ? po->specified_burst_ratio : po->specified_resource_flow_ratio) > 0;
        if (named)
            json_array_append_new(pools, json_string(p->name));
    }
    /* The resource named is the most overcommitted one. Strong guarantees are given on the
     * tree's main_resource and inferred on the others in proportion, and a burst ratio is one
     * number for every resource, so the ratios usually tie: a tie goes to the main resource
     * (the one the guarantees were set on), not to the first resource in order. */
    int main_res = ps_pool_tree_config(tree)->main_resource;
    double ratio = 0;
    int worst = -1, missing = -1;   /* missing: a guaranteed resource the cluster has none of */
    for (int r = 0; r < PS_RES_COUNT; r++) {
        if (total.v[r] <= 0 && strong[r] > 0 && missing < 0)
            missing = r;
        if (total.v[r] <= 0 || total.v[r] >= PS_RES_INFINITE)
            continue;
        double x = (strong[r] + extra * (double)total.v[r]) / (double)total.v[r];
        bool tie = fabs(x - ratio) <= 1e-9 * fmax(1.0, ratio);
        if ((x > ratio && !tie) || (tie && r == main_res)) {
            ratio = x;
            worst = r;
        }
    }
    if (missing >= 0 && (worst < 0 || ratio <= 1 + 1e-9)) {
        /* upstream: the guarantees are not dominated by a zero total (no ratio to report) */
        zero_total_alert(tree, list, burst, pools, missing);
        return;
    }
    if (worst < 0 || ratio <= 1 + 1e-9) {
        json_decref(pools);
        return;
    }
    char msg[256];
    snprintf(msg, sizeof msg, "Strong guarantees and %s exceed total cluster resources",
             burst ? "burst guarantees" : "resource flows");
    json_t *inner = json_pack("{s:i, s:s, s:{s:O, s:f, s:f, s:s}}", "code", POOL_TREE_GUARANTEES_OVERCOMMIT, "message", msg,
                              "attributes", "pools", pools, "ratio", ratio, "scale_factor",
                              burst ? 1.0 / ratio : 1.0, "resource", ps_resource_name(worst));
    /* upstream's attributes of the error: the sums compared, per resource */
    struct ps_resources sum_strong = {0}, sum_extra = {0};
    for (int r = 0; r < PS_RES_COUNT; r++) {
        sum_strong.v[r] = ps_i64_of_double(round(strong[r]));   /* saturating, as the engine */
        if (total.v[r] < PS_RES_INFINITE)
            sum_extra.v[r] = ps_i64_of_double(round(extra * (double)total.v[r]));
    }
    json_t *ia = json_object_get(inner, "attributes");
    json_object_set_new(ia, "total_strong_guarantee_resources", ps_api_resources_json(&sum_strong));
    json_object_set_new(ia, burst ? "total_burst_resources" : "total_resource_flow",
                        ps_api_resources_json(&sum_extra));
    json_object_set_new(ia, "total_cluster_resources", ps_api_resources_json(&total));
    char top[512];
    snprintf(top, sizeof top,
             "Found pool configuration issues during fair share update in tree \"%s\": "
             "%s (%.3f of the cluster's %s%s)",
             ps_pool_tree_name(tree), msg, ratio, ps_resource_name(worst),
             burst ? "; strong and burst guarantees scaled down" : "");
    json_t *a = ps_alert_new("update_fair_share", top,
                             json_pack("{s:s, s:o, s:f, s:f}", "pool_tree", ps_pool_tree_name(tree),
                                       "pools", pools, "ratio", ratio, "scale_factor",
                                       burst ? 1.0 / ratio : 1.0));
    json_object_set_new(a, "inner_errors", json_pack("[o]", inner));
    json_array_append_new(list, a);
}

/* ---- default parent pool ---------------------------------------------------------------- */

static void default_parent_alert(struct ps_pool_tree *tree, json_t *list)
{
    const char *want = ps_pool_tree_config(tree)->default_parent_pool;
    if (!want || strcmp(want, "<Root>") == 0)
        return;
    struct ps_pool *p = ps_pool_tree_find_pool(tree, want);
    char msg[1024];
    if (!p || p->ephemeral)
        snprintf(msg, sizeof msg,
                 "Default parent pool \"%.256s\" in tree \"%.256s\" is not registered", want,
                 ps_pool_tree_name(tree));
    else if (p->config.mode == PS_MODE_FIFO)
        snprintf(msg, sizeof msg, "Failed to use pool \"%.256s\" in tree \"%.256s\" as default "
                 "parent pool because this pool is in FIFO mode", want, ps_pool_tree_name(tree));
    else
        return;
    json_array_append_new(list, ps_alert_new("invalid_default_parent_pool", msg,
                                             json_pack("{s:s, s:s, s:s}", "pool_tree",
                                                       ps_pool_tree_name(tree), "pool", want,
                                                       "ephemeral_pools_parent", "<Root>")));
}

/* ---- user default parent pools ---------------------------------------------------------- */

/* A map accepted while its pools existed (user_pools.h) names a pool since removed or
 * renamed: its users' ephemeral pools go under default_parent_pool meanwhile. Upstream raises
 * this when it re-reads the map. */
static void user_pool_map_alert(struct ps_service *svc, struct ps_pool_tree *tree, json_t *list)
{
    if (!ps_pool_tree_config(tree)->use_user_default_parent_pool_map)
        return;
    struct ps_value map;
    if (ps_strategy_user_default_pools(svc->strategy, &map) != 0)
        return;
    json_t *inner = NULL;
    for (int i = 0; i < map.count; i++) {
        const char *want = map.items[i].string;
        const struct ps_pool *p = ps_pool_tree_find_pool(tree, want);
        if (p && !p->ephemeral)
            continue;
        if (!inner)
            inner = json_array();
        json_array_append_new(inner, ps_alert_new("update_user_to_default_pool_map",
                                                  "User default parent pool is missing in pool tree",
                                                  json_pack("{s:s, s:s, s:s}", "pool", want,
                                                            "pool_tree", ps_pool_tree_name(tree),
                                                            "user", map.keys[i])));
    }
    ps_value_release(&map);
    if (!inner)
        return;
    json_t *a = ps_alert_new("update_user_to_default_pool_map",
                             "Error updating mapping from user to default parent pool",
                             json_pack("{s:s}", "pool_tree", ps_pool_tree_name(tree)));
    json_object_set_new(a, "inner_errors", inner);
    json_array_append_new(list, a);
}

/* ---- pools whose config_preset cannot be applied --------------------------------------- */

/* One alert per tree, as upstream's update_pools alert, with an inner error per pool. */
static void preset_alert(struct ps_pool_tree *tree, json_t *list)
{
    json_t *inner = NULL;
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        const struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        if (!p->preset_issue)
            continue;
        char msg[512];
        snprintf(msg, sizeof msg, "Parsing configuration of pool \"%.256s\" failed", p->name);
        json_t *why = json_pack("{s:i, s:s, s:{}}", "code", 1, "message", p->preset_issue,
                                "attributes");
        json_t *e = json_pack("{s:i, s:s, s:{s:s, s:s}, s:[o]}", "code", 1, "message", msg,
                              "attributes", "pool", p->name, "config_preset",
                              p->explicit_config.config_preset ? p->explicit_config.config_preset : "",
                              "inner_errors", why);
        if (!inner)
            inner = json_array();
        json_array_append_new(inner, e);
    }
    if (!inner)
        return;
    char top[512];
    snprintf(top, sizeof top,
             "Found pool configuration issues in tree \"%.256s\"; the pools named are configured "
             "without their config_preset", ps_pool_tree_name(tree));
    json_t *a = ps_alert_new("update_pools", top,
                             json_pack("{s:s}", "pool_tree", ps_pool_tree_name(tree)));
    json_object_set_new(a, "inner_errors", inner);
    json_array_append_new(list, a);
}

/* ---- pools over their limits ------------------------------------------------------------ */

static void over_limits_alerts(struct ps_pool_tree *tree, json_t *list)
{
    for (int i = 0; i < ps_pool_tree_pool_count(tree); i++) {
        struct ps_pool *p = ps_pool_tree_pool_at(tree, i);
        const struct ps_resources_opt *lim = &p->config.resource_limits;
        if (!lim->set)
            continue;
        json_t *over = NULL;
        for (int r = 0; r < PS_RES_COUNT; r++) {
            if (!(lim->set & (1u << r)) || p->usage.v[r] <= lim->r.v[r])
                continue;
            if (!over)
                over = json_array();
            json_array_append_new(over, json_string(ps_resource_name(r)));
        }
        if (!over)
            continue;
        struct ps_resources limits = ps_resources_zero();
        for (int r = 0; r < PS_RES_COUNT; r++)
            limits.v[r] = (lim->set & (1u << r)) ? lim->r.v[r] : PS_RES_INFINITE;
        char msg[1024];
        snprintf(msg, sizeof msg, "Pool \"%.256s\" in tree \"%.256s\" uses more than its "
                 "resource limits; the excess is being preempted", p->name,
                 ps_pool_tree_name(tree));
        json_array_append_new(list, ps_alert_new("pool_usage_exceeds_limits", msg,
                                                 json_pack("{s:s, s:s, s:o, s:o, s:o}",
                                                           "pool_tree", ps_pool_tree_name(tree),
                                                           "pool", p->name, "resources", over,
                                                           "resource_usage",
                                                           ps_api_resources_json(&p->usage),
                                                           "resource_limits",
                                                           ps_api_resources_json(&limits))));
    }
}

/* ---- SSD priority preemption media ------------------------------------------------------ */

/* Upstream checks ssd_priority_preemption/medium_names against the cluster's medium directory.
 * poolsched has no master: the known media are "default" and those some node reports in its
 * disk_space_per_medium. */
static bool medium_known(struct ps_service *svc, const char *name)
{
    if (strcmp(name, "default") == 0)
        return true;
    for (int i = 0; i < svc->node_count; i++)
        if (json_object_get(svc->node_list[i]->media, name))
            return true;
    return false;
}

static void ssd_media_alert(struct ps_service *svc, struct ps_pool_tree *tree, json_t *list)
{
    const struct ps_string_list *names = &ps_pool_tree_config(tree)->ssd_priority_preemption.medium_names;
    json_t *unknown = NULL;
    for (int i = 0; i < names->count; i++) {
        if (medium_known(svc, names->items[i]))
            continue;
        if (!unknown)
            unknown = json_array();
        json_array_append_new(unknown, json_string(names->items[i]));
    }
    if (unknown)
        json_array_append_new(list, ps_alert_new("update_ssd_priority_preemption_media",
                                                 "Config contains unknown SSD priority preemption media",
                                                 json_pack("{s:s, s:o}", "pool_tree",
                                                           ps_pool_tree_name(tree),
                                                           "unknown_medium_names", unknown)));
}

json_t *ps_alerts_tree(struct ps_service *svc, struct ps_pool_tree *tree)
{
    json_t *list = json_array();
    ssd_media_alert(svc, tree, list);
    overcommit_alert(tree, list, false);
    overcommit_alert(tree, list, true);
    default_parent_alert(tree, list);
    user_pool_map_alert(svc, tree, list);
    preset_alert(tree, list);
    over_limits_alerts(tree, list);
    return list;
}

/* --ha: a leader without a live standby has nobody to take over (ha.h). */
static void no_standby_alert(struct ps_service *svc, json_t *list)
{
    int n = __atomic_load_n(&svc->ha_standbys, __ATOMIC_RELAXED);
    if (!svc->cfg.ha || n != 0)
        return;
    json_array_append_new(list, ps_alert_new("no_standby_scheduler",
                                             "No standby scheduler is up: if this leader fails, "
                                             "nobody takes over (docs/ha.md)",
                                             json_pack("{s:I}", "epoch",
                                                       (json_int_t)svc->cfg.ha_epoch)));
}

json_t *ps_alerts_scheduler(struct ps_service *svc)
{
    json_t *list = json_array();
    for (int i = 0; i < ps_strategy_tree_count(svc->strategy); i++)
    {
        json_t *t = ps_alerts_tree(svc, ps_strategy_tree_at(svc->strategy, i));
        json_array_extend(list, t);
        json_decref(t);
    }
    ps_node_health_alerts(svc, list);
    no_standby_alert(svc, list);
    return list;
}
