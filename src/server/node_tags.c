/* node_tags.c — //sys/cluster_nodes/<node>/@user_tags and what a change of a node's tags does
 * (node_tags.h says what and why). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formula.h"
#include "server/alerts.h"
#include "server/journal.h"
#include "server/node_tags.h"
#include "server/persist.h"
#include "server/service_state.h"
#include "server/store_mirror.h"
#include "server/svc_jobs.h"
#include "server/svc_log.h"

#define MAX_USER_TAGS 64
#define MAX_TAG_LEN 256
#define STORE_KIND "node_user_tags"

/* The tags in a new array of borrowed pointers (*count of them); NULL when out of memory. */
static const char **effective(const struct ps_svc_node *n, int *count)
{
    const char **v = malloc((size_t)(n->tag_count + n->user_tag_count + 1) * sizeof *v);
    if (!v)
        return NULL;
    int k = 0;
    for (int i = 0; i < n->tag_count; i++)
        v[k++] = n->tags[i];
    for (int i = 0; i < n->user_tag_count; i++) {
        bool dup = false;
        for (int j = 0; j < k && !dup; j++)
            dup = strcmp(v[j], n->user_tags[i]) == 0;
        if (!dup)
            v[k++] = n->user_tags[i];
    }
    *count = k;
    return v;
}

json_t *ps_node_tags_json(const struct ps_svc_node *n)
{
    json_t *list = json_array();
    int count = 0;
    const char **v = effective(n, &count);
    for (int i = 0; v && i < count; i++)
        json_array_append_new(list, json_string(v[i]));
    free(v);
    return list;
}

json_t *ps_node_user_tags_json(const struct ps_svc_node *n)
{
    json_t *list = json_array();
    for (int i = 0; i < n->user_tag_count; i++)
        json_array_append_new(list, json_string(n->user_tags[i]));
    return list;
}

int ps_node_tags_register(struct ps_service *svc, struct ps_svc_node *n,
                          const struct ps_resources *limits, struct ps_error *err)
{
    int count = 0;
    const char **v = effective(n, &count);
    if (!v)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = ps_strategy_register_node(svc->strategy, n->id, v, count, limits, err);
    free(v);
    if (rc == PS_EINVAL)   /* the tags are valid: they match two trees */
        n->tree_conflict = true;
    if (rc == 0) {
        n->tree_conflict = false;
        ps_sched_filter_cache_clear(n->filter_cache);
    }
    return rc;
}

/* The tree a running job of the node was scheduled in, or NULL. */
static const char *job_tree(const struct ps_svc_job *j)
{
    const struct ps_operation *sop = j->op ? j->op->sop : NULL;
    return sop && j->tree_slot >= 0 && j->tree_slot < sop->tree_count ? sop->tree_names[j->tree_slot]
                                                                        : NULL;
}

void ps_node_tags_check_tree(struct ps_service *svc, struct ps_svc_node *n, int64_t now_ms)
{
    const struct ps_node *sn = n->registered ? ps_strategy_find_node(svc->strategy, n->id) : NULL;
    const char *tree = sn && sn->tree ? ps_pool_tree_name(sn->tree) : NULL;
    int aborted = 0;
    for (struct ps_svc_job *j = n->jobs, *next; j; j = next) {
        next = j->node_next;
        const char *jt = job_tree(j);
        if (j->state != PS_JOB_RUNNING || (tree && jt && strcmp(jt, tree) == 0))
            continue;
        ps_svc_job_finish(svc, j, PS_JOB_ABORTED, "Node has changed pool tree",
                          "node_fair_share_tree_changed", NULL, now_ms);
        ps_persist_job(svc, j);
        ps_persist_op(svc, j->op);
        aborted++;
    }
    if (aborted > 0) {
        ps_svc_log(svc, "info", "node_tree_changed", "node=%s tree=%s aborted_jobs=%d", n->id,
                   tree ? tree : "-", aborted);
        for (int i = 0; i < svc->tree_count; i++)
            svc->trees[i]->dirty = true;
        pthread_cond_broadcast(&svc->loop_cv);
    }
}

static void free_list(char **tags, int count)
{
    for (int i = 0; i < count; i++)
        free(tags[i]);
    free(tags);
}

void ps_node_tags_release(struct ps_svc_node *n)
{
    free_list(n->user_tags, n->user_tag_count);
    n->user_tags = NULL;
    n->user_tag_count = 0;
}

/* Reads a list of tags into a new array; PS_EINVAL naming `key`. */
static int read_list(const json_t *value, const char *key, char ***out, int *count,
                     struct ps_error *err)
{
    if (!json_is_array(value) || json_array_size(value) > MAX_USER_TAGS)
        return ps_error_set(err, PS_EINVAL, "%s: must be a list of at most %d tags", key,
                            MAX_USER_TAGS);
    size_t n = json_array_size(value);
    char **v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *t = json_array_get(value, i);
        if (!json_is_string(t) || json_string_length(t) == 0 ||
            json_string_length(t) > MAX_TAG_LEN || strlen(json_string_value(t)) != json_string_length(t)) {
            free_list(v, (int)i);
            return ps_error_set(err, PS_EINVAL, "%s[%zu]: must be a non-empty string of at most %d "
                                "bytes", key, i, MAX_TAG_LEN);
        }
        if (!(v[i] = strdup(json_string_value(t)))) {
            free_list(v, (int)i);
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
    }
    *out = v;
    *count = (int)n;
    return 0;
}

static void persist(struct ps_service *svc, const struct ps_svc_node *n)
{
    if (!svc->journal)
        return;
    json_t *doc = n->user_tag_count > 0 ? json_pack("{s:o}", "user_tags", ps_node_user_tags_json(n))
                                        : NULL;
    ps_journal_put(svc->journal, STORE_KIND, n->id, doc);   /* NULL: delete */
}

int ps_node_tags_set(struct ps_service *svc, struct ps_svc_node *n, char **attrs, size_t attr_count,
                     const json_t *value, struct ps_error *err)
{
    bool append = attr_count == 2 && strcmp(attrs[1], "end") == 0;
    if (attr_count > 2 || (attr_count == 2 && !append))
        return ps_error_set(err, PS_EINVAL, "user_tags/%s: only \"end\" (append a tag) may follow "
                            "@user_tags", attrs[1]);
    char **tags = NULL;
    int count = 0, rc = 0;
    if (append) {
        if (!value)
            return ps_error_set(err, PS_EINVAL, "user_tags/end: cannot be removed");
        json_t *list = ps_node_user_tags_json(n);
        json_array_append(list, (json_t *)value);
        rc = read_list(list, "user_tags", &tags, &count, err);
        json_decref(list);
    } else if (value && !json_is_null(value)) {
        rc = read_list(value, "user_tags", &tags, &count, err);
    }
    if (rc != 0)
        return rc;
    ps_node_tags_release(n);
    n->user_tags = tags;
    n->user_tag_count = count;
    persist(svc, n);
    int64_t now = ps_svc_now_ms();
    if (n->registered) {
        struct ps_error e;
        ps_error_init(&e);
        if (ps_node_tags_register(svc, n, &n->limits, &e) != 0) {
            ps_svc_log(svc, "warning", "node_tags_update_failed", "node=%s error=\"%s\"", n->id,
                       e.msg);
            ps_svc_node_offline(svc, n, now);
        }
    }
    ps_svc_log(svc, "info", "node_user_tags", "node=%s user_tags=%d", n->id, count);
    ps_node_tags_check_tree(svc, n, now);
    for (int i = 0; i < svc->tree_count; i++)
        svc->trees[i]->dirty = true;
    pthread_cond_broadcast(&svc->loop_cv);
    return 0;
}

static json_t *conflict_error(struct ps_service *svc, const struct ps_svc_node *n)
{
    int count = 0;
    const char **v = effective(n, &count);
    json_t *trees = json_array();
    for (int t = 0; v && t < ps_strategy_tree_count(svc->strategy); t++) {
        const struct ps_pool_tree *tree = ps_strategy_tree_at(svc->strategy, t);
        if (ps_formula_eval(ps_pool_tree_nodes_filter(tree), v, count))
            json_array_append_new(trees, json_string(ps_pool_tree_name(tree)));
    }
    free(v);
    json_t *inner = json_pack("{s:i, s:s, s:{s:o}}", "code", 1, "message",
                              "Node belongs to more than one fair share tree", "attributes",
                              "matched_pool_trees", trees);
    return json_pack("{s:i, s:s, s:{s:s, s:s, s:o}, s:[o]}", "code", 1, "message",
                     "Node tags update failed", "attributes", "node_id", n->id, "address",
                     n->address, "tags", ps_node_tags_json(n), "inner_errors", inner);
}

void ps_node_tags_alerts(struct ps_service *svc, json_t *list)
{
    json_t *inner = json_array();
    int64_t now = ps_svc_now_ms();
    for (int i = 0; i < svc->node_count; i++) {
        const struct ps_svc_node *n = svc->node_list[i];
        /* a node that stopped trying (its agent gave up) is not reported forever */
        if (n->tree_conflict && n->last_seen_ms + svc->cfg.node_offline_timeout_ms >= now)
            json_array_append_new(inner, conflict_error(svc, n));
    }
    if (json_array_size(inner) == 0) {
        json_decref(inner);
        return;
    }
    json_t *alert = ps_alert_new("update_nodes_failed", "Failed to update some nodes", NULL);
    json_object_set_new(alert, "inner_errors", inner);
    json_array_append_new(list, alert);
}

struct load_ctx {
    struct ps_service *svc;
};

static int load_one(const char *key, const char *value, void *ctx)
{
    struct ps_service *svc = ((struct load_ctx *)ctx)->svc;
    json_t *doc = json_loads(value, 0, NULL);
    char **tags = NULL;
    int count = 0;
    struct ps_error e;
    ps_error_init(&e);
    if (doc && read_list(json_object_get(doc, "user_tags"), "user_tags", &tags, &count, &e) == 0) {
        struct ps_svc_node *n = ps_svc_node_get(svc, key, true);
        if (n) {
            ps_node_tags_release(n);
            n->user_tags = tags;
            n->user_tag_count = count;
        } else {
            free_list(tags, count);
        }
    }
    json_decref(doc);
    return 0;   /* a bad document tags nothing */
}

int ps_node_tags_reload(struct ps_service *svc, struct ps_error *err)
{
    for (int i = 0; i < svc->node_count; i++)
        ps_node_tags_release(svc->node_list[i]);
    struct load_ctx c = {svc};
    pthread_mutex_lock(&svc->store_mu);
    int rc = ps_store_list(ps_store_mirror_source(svc), STORE_KIND, NULL, load_one, &c, err);
    pthread_mutex_unlock(&svc->store_mu);
    if (rc != 0)
        ps_error_prefix(err, "cannot read the stored node user tags");
    return rc;
}
