/* what_if_start.c — start_what_if (what_if_task.h): the parameters checked, the inputs a
 * what-if needs read from the scheduler as `poolsched what-if` reads them through the API (the
 * event log paged back from until, every tree's config as it is now (for trees no
 * pool_trees_info row of the log describes), the default tree, the
 * cluster's heartbeat and fair share update periods), both scenarios built and checked, then
 * the task handed to its thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool_acl.h"
#include "server/event_log.h"
#include "server/api_cypress.h"
#include "server/security.h"
#include "server/service_state.h"
#include "server/svc_log.h"
#include "server/what_if_task_impl.h"

int ps_what_if_permitted(struct ps_service *svc, const struct ps_auth_identity *who,
                         const char *command, struct ps_error *err)
{
    int rc = 0;
    pthread_mutex_lock(&svc->mu);
    ps_security_set_caller(svc->security, who);
    const struct ps_pool_access *access = ps_security_access(svc->security);
    for (int i = 0; rc == 0 && i < ps_strategy_tree_count(svc->strategy); i++) {
        const struct ps_pool_tree *tree = ps_strategy_tree_at(svc->strategy, i);
        if (ps_pool_acl_check(access, tree, NULL, who->user, PS_PERM_READ) != PS_ACL_ALLOW)
            rc = ps_error_set(err, PS_EPERM, "%s: user \"%s\" has no read permission on pool "
                                             "tree \"%s\" (a what-if shows every pool's and "
                                             "user's figures)",
                              command, who->user, ps_pool_tree_name(tree));
    }
    ps_security_set_caller(svc->security, NULL);
    pthread_mutex_unlock(&svc->mu);
    return rc;
}

/* since or until: a time ago ("12h") or ms since the epoch (a number or its text) */
static int when_param(const json_t *body, const char *key, int64_t now, int64_t *out,
                      struct ps_error *err)
{
    const json_t *v = json_object_get(body, key);
    char text[64];
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = json_integer_value(v);
        return 0;
    }
    if (!json_is_string(v)) {
        char *shown = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        int rc = v ? ps_error_set(err, PS_EINVAL, "start_what_if: %s: must be a time ago (7d, "
                                                  "12h, 30m, 90s, 500ms) or ms since the epoch, "
                                                  "got %s", key, shown ? shown : "?")
                   : ps_error_set(err, PS_EINVAL, "start_what_if: missing parameter \"%s\"", key);
        free(shown);
        return rc;
    }
    snprintf(text, sizeof text, "start_what_if: %s", key);
    return ps_what_if_parse_when(json_string_value(v), text, now, out, err);
}

/* set {PATH: VALUE (null removes)} then remove [PATH]: [[path, value or null], ...] */
static int changes_param(const json_t *body, json_t *changes, struct ps_error *err)
{
    const json_t *set = json_object_get(body, "set"), *remove = json_object_get(body, "remove");
    if (set && !json_is_object(set))
        return ps_error_set(err, PS_EINVAL, "start_what_if: set: must be a map {PATH: VALUE}");
    if (remove && !json_is_array(remove))
        return ps_error_set(err, PS_EINVAL, "start_what_if: remove: must be a list of paths");
    const char *path;
    json_t *v;
    json_object_foreach((json_t *)set, path, v)
        json_array_append_new(changes, json_pack("[s, O]", path, v));
    size_t i;
    json_array_foreach(remove, i, v) {
        if (!json_is_string(v))
            return ps_error_set(err, PS_EINVAL, "start_what_if: remove: item %zu: must be a "
                                                "path (a string)", i);
        json_array_append_new(changes, json_pack("[O, n]", v));
    }
    return 0;
}

/* A page as ps_event_log_get answers a read by time alone: the rows' stored text, unparsed
 * (the collector reads a job row's text without making JSON values of it). */
static int event_log_page(void *ctx, int64_t until_ms, int64_t upper_row, int limit,
                          json_t **page, int64_t *first_row, struct ps_error *err)
{
    struct ps_service *svc = ctx;
    json_t *body = json_pack("{s:s, s:I, s:i}", "path", PS_EVENT_LOG_PATH, "until",
                             (json_int_t)until_ms, "limit", limit);
    if (body && upper_row != PS_EVENT_NO_ROW &&
        json_object_set_new(body, "upper_row_index", json_integer(upper_row)) != 0) {
        json_decref(body);
        body = NULL;
    }
    if (!body)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    pthread_mutex_lock(&svc->mu);
    int rc = ps_event_log_get(svc, body, page, first_row, err);
    pthread_mutex_unlock(&svc->mu);
    json_decref(body);
    return rc;
}

/* {tree: its config now}, the default tree (strdup'ed, NULL when none) */
static int tree_configs(struct ps_service *svc, json_t **trees, char **default_tree,
                        struct ps_error *err)
{
    int rc = (*trees = json_object()) ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
    pthread_mutex_lock(&svc->mu);
    for (int i = 0; rc == 0 && i < ps_strategy_tree_count(svc->strategy); i++) {
        char path[512];
        const char *name = ps_pool_tree_name(ps_strategy_tree_at(svc->strategy, i));
        snprintf(path, sizeof path, "//sys/pool_trees/%s/@config", name);
        json_t *cfg = NULL;
        if ((rc = ps_cypress_get(svc, path, &cfg, err)) == 0)
            json_object_set_new(*trees, name, cfg);
    }
    const char *def = ps_strategy_default_tree(svc->strategy);
    *default_tree = def ? strdup(def) : NULL;
    pthread_mutex_unlock(&svc->mu);
    return rc;
}

/* The request's inputs read and both scenarios built and checked into *w. */
static int prepare(struct ps_service *svc, const json_t *body, struct ps_what_if **w,
                   struct ps_error *err)
{
    int64_t now = ps_svc_now_ms();
    struct ps_what_if_request q = {.until_ms = now,
                                   .heartbeat_period_ms = svc->cfg.heartbeat_period_ms,
                                   .fair_share_update_period_ms =
                                       svc->cfg.fair_share_update_period_ms};
    json_t *changes = json_array(), *trees = NULL;
    char *default_tree = NULL;
    int rc = changes ? when_param(body, "since", now, &q.since_ms, err)
                     : ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0 && json_object_get(body, "until"))
        rc = when_param(body, "until", now, &q.until_ms, err);
    if (rc == 0 && q.until_ms <= q.since_ms)
        rc = ps_error_set(err, PS_EINVAL, "start_what_if: until: must be after since (%lld ms "
                                          "since the epoch), got %lld",
                          (long long)q.since_ms, (long long)q.until_ms);
    if (rc == 0)
        rc = changes_param(body, changes, err);
    if (rc == 0)
        rc = tree_configs(svc, &trees, &default_tree, err);
    if (rc == 0)
        rc = ps_what_if_collect_rows(event_log_page, svc, q.until_ms, &q.record, err);
    /* ps_what_if_prepare takes q.record (NULL when collect_rows failed) */
    q.changes = changes;
    q.trees = trees;
    q.default_tree = default_tree;
    if (rc == 0 && (rc = ps_what_if_prepare(&q, w, err)) != 0)
        ps_error_prefix(err, "start_what_if");
    json_decref(changes);
    json_decref(trees);
    free(default_tree);
    return rc;
}

int ps_what_if_start(struct ps_service *svc, const json_t *body,
                     const struct ps_auth_identity *who, json_t **reply, struct ps_error *err)
{
    int rc = ps_what_if_permitted(svc, who, "start_what_if", err);
    struct ps_what_if *w = NULL;
    if (rc == 0)   /* refused before the event log is read; ps_what_if_tasks_add checks again */
        rc = ps_what_if_tasks_busy(svc->what_if, err);
    if (rc == 0)
        rc = prepare(svc, body, &w, err);
    char id[PS_WHAT_IF_ID_LEN + 1];
    if (rc == 0)
        rc = ps_what_if_tasks_add(svc->what_if, w, who->user, id, err);
    if (rc != 0)
        return rc;
    ps_svc_log(svc, "info", "what_if_started", "id=%s user=%s", id, who->user);
    *reply = json_pack("{s:s}", "id", id);
    return *reply ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}
