/* node_health.c — consecutive node_error aborts, node bans, scheduler alerts, and the paths
 * //sys/cluster_nodes/<node>/@..., //sys/scheduler/@alerts and
 * //sys/scheduler/orchid/scheduler/nodes/<node> (node_health.h says why and how).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_nodes.h"
#include "core/resources.h"
#include "io/ypath.h"
#include "server/alerts.h"
#include "server/api_json.h"
#include "server/journal.h"
#include "server/node_health.h"
#include "server/node_tags.h"
#include "server/service_config.h"
#include "server/service_state.h"
#include "server/store_mirror.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"

#define ALERT_MESSAGE "Too many consecutive scheduler job abortions"

/* ---- config ----------------------------------------------------------------------------- */

void ps_node_health_config_init(struct ps_service_config *cfg)
{
    cfg->max_consecutive_job_aborts = 10;
    cfg->disable_jobs_timeout_ms = 600000;
    cfg->available_exec_nodes_check_period_ms = PS_AVAILABLE_EXEC_NODES_CHECK_PERIOD_MS;
    cfg->safe_scheduler_online_time_ms = PS_SAFE_SCHEDULER_ONLINE_TIME_MS;
    cfg->resource_demand_sanity_check_period_ms = PS_RESOURCE_DEMAND_SANITY_CHECK_PERIOD_MS;
    cfg->operation_hangup_check_period_ms = 60000;
    cfg->operation_hangup_due_to_limiting_ancestor_safe_timeout_ms = 300000;
    cfg->operation_hangup_safe_timeout_ms = 3600000;
    cfg->operation_hangup_min_schedule_job_attempts = 1000;
}

/* ---- bans ------------------------------------------------------------------------------- */

static void persist_ban(struct ps_service *svc, const struct ps_svc_node *n)
{
    if (!svc->journal)
        return;
    json_t *doc = NULL;
    if (n->banned)
        doc = json_pack("{s:b, s:b, s:s, s:I, s:I, s:s}", "banned", 1, "by_admin",
                        n->banned_by_admin, "ban_message", n->ban_message, "banned_at",
                        (json_int_t)n->banned_at_ms, "unban_at", (json_int_t)n->unban_at_ms,
                        "last_abort_error", n->last_abort_error);
    ps_journal_put(svc->journal, "node_ban", n->id, doc);   /* NULL: delete */
}

static void trees_dirty(struct ps_service *svc)
{
    for (int i = 0; i < svc->tree_count; i++)
        svc->trees[i]->dirty = true;
    pthread_cond_broadcast(&svc->loop_cv);
}

/* Takes the node out of scheduling now: user_slots 0 in the strategy, running jobs aborted
 * (the node hears of it at its next heartbeat, or in this one when it is being handled). */
static void ban(struct ps_service *svc, struct ps_svc_node *n, bool by_admin, const char *message,
                int64_t now_ms)
{
    n->banned = true;
    n->banned_by_admin = by_admin;
    n->banned_at_ms = now_ms;
    n->unban_at_ms = !by_admin && svc->cfg.disable_jobs_timeout_ms > 0
                         ? now_ms + svc->cfg.disable_jobs_timeout_ms
                         : 0;
    snprintf(n->ban_message, sizeof n->ban_message, "%s", message);
    if (n->registered && n->limits.v[PS_RES_USER_SLOTS] != 0) {
        struct ps_resources limits = n->limits;
        limits.v[PS_RES_USER_SLOTS] = 0;
        struct ps_error err;
        ps_error_init(&err);
        if (ps_node_tags_register(svc, n, &limits, &err) == 0)
            n->limits = limits;
        else
            ps_svc_log(svc, "error", "node_ban_failed", "node=%s error=\"%s\"", n->id, err.msg);
    }
    const char *reason = by_admin ? "node_banned" : "node_with_disabled_jobs";
    int aborted = 0;
    while (n->jobs) {
        struct ps_svc_job *j = n->jobs;
        ps_svc_job_preempt(svc, j, reason, NULL, 0, NULL, now_ms, NULL, NULL);
        if (n->jobs == j)   /* not finished (not running?): stop rather than loop */
            break;
        aborted++;
    }
    ps_svc_log(svc, "warning", "node_banned", "node=%s by=%s aborted_jobs=%d message=\"%s\"",
               n->id, by_admin ? "admin" : "scheduler", aborted, n->ban_message);
    persist_ban(svc, n);
    trees_dirty(svc);
}

/* Back into scheduling: its next heartbeat registers its real user_slots again. */
static void unban(struct ps_service *svc, struct ps_svc_node *n, const char *why)
{
    if (!n->banned && n->consecutive_job_aborts == 0)
        return;
    bool was = n->banned;
    n->banned = false;
    n->banned_by_admin = false;
    n->banned_at_ms = n->unban_at_ms = 0;
    n->ban_message[0] = '\0';
    n->consecutive_job_aborts = 0;
    if (was) {
        ps_svc_log(svc, "info", "node_unbanned", "node=%s by=%s", n->id, why);
        persist_ban(svc, n);
        trees_dirty(svc);
    }
}

void ps_node_health_heartbeat(struct ps_service *svc, struct ps_svc_node *node,
                              struct ps_resources *limits, int64_t now_ms)
{
    if (node->banned && node->unban_at_ms > 0 && now_ms >= node->unban_at_ms)
        unban(svc, node, "disable_jobs_timeout");
    if (node->banned)
        limits->v[PS_RES_USER_SLOTS] = 0;
}

const char *ps_node_health_abort_error(const json_t *record, const char *node_id, char *buf,
                                       size_t size)
{
    const char *reason = json_string_value(json_object_get(record, "abort_reason"));
    if (!reason || strcmp(reason, "node_error") != 0)
        return NULL;
    const char *msg = json_string_value(json_object_get(record, "stderr"));
    size_t len = msg ? strcspn(msg, "\n") : 0;
    if (len > 400)
        len = 400;
    if (len == 0)
        snprintf(buf, size, "Node \"%s\" could not start the job", node_id);
    else
        snprintf(buf, size, "Node \"%s\" could not start the job: %.*s", node_id, (int)len, msg);
    return buf;
}

void ps_node_health_job_finished(struct ps_service *svc, const struct ps_svc_job *job,
                                 int64_t now_ms)
{
    struct ps_svc_node *n = ps_svc_node_get(svc, job->node_id, false);
    if (!n)
        return;
    if (job->state == PS_JOB_COMPLETED || job->state == PS_JOB_FAILED) {
        n->consecutive_job_aborts = 0;   /* the node ran it */
        return;
    }
    if (!job->abort_reason || strcmp(job->abort_reason, "node_error") != 0)
        return;
    n->consecutive_job_aborts++;
    snprintf(n->last_abort_error, sizeof n->last_abort_error, "%s",
             job->error ? job->error : "node_error");
    int max = svc->cfg.max_consecutive_job_aborts;
    if (n->banned || max <= 0 || n->consecutive_job_aborts < max)
        return;
    char msg[sizeof n->ban_message];
    snprintf(msg, sizeof msg,
             ALERT_MESSAGE ": %d jobs in a row aborted with node_error "
             "(max_consecutive_job_aborts %d); last: %.300s",
             n->consecutive_job_aborts, max, n->last_abort_error);
    ban(svc, n, false, msg, now_ms);
}

/* ---- restart ---------------------------------------------------------------------------- */

struct load_ctx {
    struct ps_service *svc;
};

static int load_ban(const char *key, const char *value, void *ctx)
{
    struct ps_service *svc = ((struct load_ctx *)ctx)->svc;
    json_t *doc = json_loads(value, 0, NULL);
    if (!doc)
        return 0;   /* a bad document bans nothing */
    struct ps_svc_node *n = json_is_true(json_object_get(doc, "banned"))
                                ? ps_svc_node_get(svc, key, true)
                                : NULL;
    if (n) {
        n->banned = true;
        n->banned_by_admin = json_is_true(json_object_get(doc, "by_admin"));
        n->banned_at_ms = json_integer_value(json_object_get(doc, "banned_at"));
        n->unban_at_ms = json_integer_value(json_object_get(doc, "unban_at"));
        const char *m = json_string_value(json_object_get(doc, "ban_message"));
        snprintf(n->ban_message, sizeof n->ban_message, "%s", m ? m : "");
        m = json_string_value(json_object_get(doc, "last_abort_error"));
        snprintf(n->last_abort_error, sizeof n->last_abort_error, "%s", m ? m : "");
    }
    json_decref(doc);
    return 0;
}

int ps_node_health_start(struct ps_service *svc, struct ps_error *err)
{
    svc->started_ms = ps_svc_now_ms();
    return ps_node_health_reload(svc, err);
}

int ps_node_health_reload(struct ps_service *svc, struct ps_error *err)
{
    /* a ban whose record did not commit is not kept: the store has the acknowledged ones */
    for (int i = 0; i < svc->node_count; i++) {
        struct ps_svc_node *n = svc->node_list[i];
        n->banned = n->banned_by_admin = false;
        n->banned_at_ms = n->unban_at_ms = 0;
        n->ban_message[0] = '\0';
    }
    struct load_ctx c = {svc};
    pthread_mutex_lock(&svc->store_mu);
    int rc = ps_store_list(ps_store_mirror_source(svc), "node_ban", NULL, load_ban, &c, err);
    pthread_mutex_unlock(&svc->store_mu);
    if (rc != 0)
        ps_error_prefix(err, "cannot read the stored node bans");
    return rc == 0 ? ps_node_tags_reload(svc, err) : rc;
}

/* ---- paths ------------------------------------------------------------------------------ */

static json_t *alert_json(const struct ps_svc_node *n, int max)
{
    json_t *attrs = json_pack("{s:s, s:i, s:i, s:s, s:I, s:o}", "node", n->id,
                              "max_consecutive_job_aborts", max, "consecutive_job_aborts",
                              n->consecutive_job_aborts, "last_abort_error", n->last_abort_error,
                              "datetime", (json_int_t)n->banned_at_ms, "until",
                              n->unban_at_ms > 0 ? json_integer(n->unban_at_ms) : json_null());
    return ps_alert_new("node_jobs_disabled", "Scheduler jobs disabled on node: " ALERT_MESSAGE,
                        attrs);
}

static json_t *node_alerts(struct ps_service *svc, const struct ps_svc_node *n)
{
    json_t *a = json_array();
    if (n->banned && !n->banned_by_admin)
        json_array_append_new(a, alert_json(n, svc->cfg.max_consecutive_job_aborts));
    return a;
}

void ps_node_health_alerts(struct ps_service *svc, json_t *list)
{
    for (int i = 0; i < svc->node_count; i++) {
        const struct ps_svc_node *n = svc->node_list[i];
        if (n->banned && !n->banned_by_admin)
            json_array_append_new(list, alert_json(n, svc->cfg.max_consecutive_job_aborts));
    }
    ps_node_tags_alerts(svc, list);
}

/* Resources as the node itself shows them (upstream's //sys/cluster_nodes/<node>/@resource_*):
 * with a cpu_to_vcpu_factor, vcpu is what the scheduler counts and cpu the node's real cores,
 * vcpu / factor rounded to hundredths (upstream's TCpuResource). */
static json_t *node_resources_json(const struct ps_svc_node *n, const struct ps_resources *r,
                                   bool as_node)
{
    json_t *o = ps_api_resources_json(r);
    if (!as_node || n->cpu_to_vcpu_factor <= 0 || !o)
        return o;
    double vcpu = ps_res_get(r, PS_RES_CPU);
    json_object_set_new(o, "vcpu", json_real(vcpu));
    json_object_set_new(o, "cpu", json_real(ps_cpu_round(vcpu / n->cpu_to_vcpu_factor)));
    return o;
}

/* A node as //sys/cluster_nodes/<node>/@ (as_node) and the orchid's nodes show it (list-nodes
 * reads it). */
static json_t *node_attrs(struct ps_service *svc, const struct ps_svc_node *n, bool as_node)
{
    json_t *tags = ps_node_tags_json(n);
    struct ps_resources usage = ps_resources_zero();
    for (const struct ps_svc_job *j = n->jobs; j; j = j->node_next)
        usage = ps_resources_add(usage, j->usage);
    const struct ps_node *sn = n->registered ? ps_strategy_find_node(svc->strategy, n->id) : NULL;
    const char *tree = sn && sn->tree ? ps_pool_tree_name(sn->tree) : NULL;
    json_t *a = json_pack("{s:b, s:s, s:o, s:s, s:i, s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:i, s:I}",
                     "banned", n->banned, "ban_message", n->ban_message, "alerts",
                     node_alerts(svc, n), "state", n->registered ? "online" : "offline",
                     "consecutive_job_aborts", n->consecutive_job_aborts, "last_abort_error",
                     n->last_abort_error, "tags", tags, "banned_by_admin",
                     json_boolean(n->banned_by_admin), "address", n->address, "tree",
                     tree ? json_string(tree) : json_null(), "resource_limits",
                     node_resources_json(n, &n->limits, as_node), "resource_usage",
                     node_resources_json(n, &usage, as_node), "running_job_count", n->job_count,
                     "last_heartbeat_time", (json_int_t)n->last_seen_ms);
    /* upstream's orchid: scheduler_state; @user_tags as Cypress keeps it */
    json_object_set_new(a, "user_tags", ps_node_user_tags_json(n));
    json_object_set_new(a, "scheduler_state", json_string(n->registered ? "online" : "offline"));
    if (n->cpu_to_vcpu_factor > 0)
        json_object_set_new(a, "cpu_to_vcpu_factor", json_real(n->cpu_to_vcpu_factor));
    if (a)
        json_object_set_new(a, "disk_space_per_medium",
                            n->media ? json_deep_copy(n->media) : json_object());
    return a;
}

static bool prefix_path(const char *path, const char *prefix)
{
    size_t k = strlen(prefix);
    return strncmp(path, prefix, k) == 0 && (path[k] == '\0' || path[k] == '/');
}

bool ps_node_health_claims(const char *path)
{
    return path && (prefix_path(path, "//sys/cluster_nodes") ||
                    strncmp(path, "//sys/scheduler/@", 17) == 0);
}

static int not_found(struct ps_error *err, const char *path, const char *why)
{
    return ps_error_set(err, PS_ENOENT, "path %s does not exist: %s", path, why);
}

/* A parsed claimed path: node NULL for //sys/cluster_nodes itself or //sys/scheduler. */
struct where {
    struct ps_ypath p;
    bool scheduler;
    struct ps_svc_node *node;
};

static int resolve(struct ps_service *svc, const char *path, struct where *w,
                   struct ps_error *err)
{
    memset(w, 0, sizeof *w);
    ps_ypath_init(&w->p);
    int rc = ps_ypath_parse(path, &w->p, err);
    if (rc != 0)
        return rc;
    w->scheduler = w->p.node_count == 2 && strcmp(w->p.nodes[1], "scheduler") == 0;
    if (w->scheduler)
        return 0;
    if (w->p.node_count > 3)
        return not_found(err, path, "a cluster node has no children");
    if (w->p.node_count == 3) {
        w->node = ps_svc_node_get(svc, w->p.nodes[2], false);
        if (!w->node) {
            char why[320];
            snprintf(why, sizeof why, "no cluster node \"%.256s\"", w->p.nodes[2]);
            return not_found(err, path, why);
        }
    }
    return 0;
}

static int pick_attr(json_t *attrs, const struct ps_ypath *p, const char *path, json_t **out,
                     struct ps_error *err)
{
    json_t *v = attrs;
    for (size_t i = 0; i < p->attr_count && v; i++)
        v = json_is_object(v) ? json_object_get(v, p->attrs[i]) : NULL;
    if (!v) {
        json_decref(attrs);
        return ps_error_set(err, PS_ENOENT, "attribute %s does not exist", path);
    }
    *out = json_incref(v);
    json_decref(attrs);
    return 0;
}

int ps_node_health_get(struct ps_service *svc, const char *path, json_t **out,
                       struct ps_error *err)
{
    struct where w;
    int rc = resolve(svc, path, &w, err);
    if (rc == 0) {
        bool attrs = w.p.all_attrs || w.p.attr_count > 0;
        if (w.scheduler) {
            rc = pick_attr(json_pack("{s:o}", "alerts", ps_alerts_scheduler(svc)), &w.p, path, out,
                           err);
        } else if (w.node) {
            rc = attrs ? pick_attr(node_attrs(svc, w.node, true), &w.p, path, out, err)
                       : ((*out = json_object()) ? 0 : PS_ENOMEM);
        } else if (attrs) {
            rc = ps_error_set(err, PS_ENOENT, "attribute %s does not exist: //sys/cluster_nodes "
                              "has no attributes", path);
        } else {
            json_t *m = json_object();
            for (int i = 0; i < svc->node_count; i++)
                json_object_set_new(m, svc->node_list[i]->id, json_object());
            *out = m;
        }
    }
    ps_ypath_release(&w.p);
    return rc;
}

int ps_node_health_set(struct ps_service *svc, const char *user, const char *path,
                       const json_t *value, struct ps_error *err)
{
    struct where w;
    int rc = resolve(svc, path, &w, err);
    if (rc == 0) {
        if (w.node && w.p.attr_count >= 1 && strcmp(w.p.attrs[0], "user_tags") == 0) {
            rc = ps_node_tags_set(svc, w.node, w.p.attrs, w.p.attr_count, value, err);
            ps_ypath_release(&w.p);
            return rc;
        }
        if (!w.node || w.p.attr_count != 1 || strcmp(w.p.attrs[0], "banned") != 0)
            rc = ps_error_set(err, PS_EINVAL, "%s is read-only: a cluster node's writable "
                              "attributes are @banned and @user_tags", path);
        else if (value && !json_is_boolean(value) && !json_is_null(value))
            rc = ps_error_set(err, PS_EINVAL, "banned: must be true or false");
    }
    if (rc == 0) {
        int64_t now = ps_svc_now_ms();
        if (value && json_is_true(value)) {
            char msg[300];
            snprintf(msg, sizeof msg, "Banned by %.200s", user ? user : "an admin");
            if (!w.node->banned || !w.node->banned_by_admin)
                ban(svc, w.node, true, msg, now);
        } else {
            unban(svc, w.node, user ? user : "admin");
        }
    }
    ps_ypath_release(&w.p);
    return rc;
}

int ps_node_health_orchid(struct ps_service *svc, char **names, size_t count, json_t **out,
                          struct ps_error *err)
{
    /* names[0] == "nodes" */
    if (count == 1) {
        json_t *m = json_object();
        for (int i = 0; i < svc->node_count; i++)
            json_object_set_new(m, svc->node_list[i]->id,
                                node_attrs(svc, svc->node_list[i], false));
        *out = m;
        return 0;
    }
    struct ps_svc_node *n = ps_svc_node_get(svc, names[1], false);
    if (!n)
        return ps_error_set(err, PS_ENOENT, "orchid: no node \"%.256s\"", names[1]);
    json_t *v = node_attrs(svc, n, false);
    for (size_t i = 2; i < count && v; i++) {
        json_t *c = json_is_object(v) ? json_incref(json_object_get(v, names[i])) : NULL;
        json_decref(v);
        v = c;
    }
    if (!v)
        return ps_error_set(err, PS_ENOENT, "orchid: node \"%.256s\" has no such attribute",
                            names[1]);
    *out = v;
    return 0;
}
