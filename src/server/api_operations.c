/* api_operations.c — start_op, get_operation, list_operations, abort_op, suspend_op,
 * resume_op, complete_op, update_op_parameters, list_jobs, get_job_stderr (docs/api.md).
 *
 * Who may do what: any authenticated user starts operations (`use` on the pool decides where)
 * and reads every operation (get_operation, list_operations); its jobs need `read`, changing it
 * `manage`, from the operation's ACL (op_acl below; superusers always may).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/attr.h"
#include "core/pending.h"
#include "io/json_value.h"
#include "platform/random.h"
#include "server/api_cypress.h"
#include "server/api_json.h"
#include "server/job_list.h"
#include "server/event_log.h"
#include "server/persist.h"
#include "server/sched_host.h"
#include "server/service_state.h"
#include "server/svc_log.h"
#include "server/svc_ops.h"

/* The pending reason of a pending operation, or of a running one that has jobs waiting, or
 * NULL. */
static json_t *pending_reason(struct ps_service *svc, const struct ps_svc_op *op)
{
    /* a pending operation may have no job waiting (moved to a pool at its running limit with
     * its last jobs running): it still says why it is pending */
    if (op->finished || !op->sop ||
        (ps_svc_op_pending(op) == 0 && op->sop->state != PS_OP_PENDING))
        return NULL;
    char text[1024] = "";
    size_t used = 0;
    for (int i = 0; i < op->sop->tree_count; i++) {
        struct ps_tree_op *to = op->sop->memberships ? op->sop->memberships[i] : NULL;
        struct ps_pool_tree *tree = to ? to->tree : NULL;
        if (!to || !tree)
            continue;
        struct ps_pending_info info;
        memset(&info, 0, sizeof info);
        ps_pool_tree_pending_reason(tree, to, &info);
        if (info.reason == PS_PENDING_NONE)
            ps_svc_pending_scheduler_reason(svc, ps_svc_tree(svc, op->sop->tree_names[i]), to,
                                            op->trees[i].element, &info);
        if (info.reason == PS_PENDING_NONE)
            continue;
        char one[512];
        ps_pending_format(&info, one, sizeof one);
        int n = snprintf(text + used, sizeof text - used, "%s%s%s%s", used ? "; " : "",
                         op->sop->tree_count > 1 ? op->sop->tree_names[i] : "",
                         op->sop->tree_count > 1 ? ": " : "", one);
        if (n > 0 && (size_t)n < sizeof text - used)
            used += (size_t)n;
    }
    return used ? json_string(text) : NULL;
}

/* The keys of an operation list_operations shows by default, without its specs (copying those
 * for 10,000 operations was most of the YTsaurus face's list_operations time): id, user, state,
 * times, pool_per_tree, suspended, progress, error, operation_type, and from the spec only
 * brief_spec ({pool, title} when set), and weight: the first tree's in runtime_parameters. */
json_t *ps_svc_op_brief_json(const struct ps_svc_op *op)
{
    int64_t c[6] = {0};   /* total, pending, running, completed, failed, aborted */
    for (int i = 0; i < op->task_count; i++) {
        const struct ps_svc_task *t = &op->tasks[i];
        c[0] += t->job_count;
        c[1] += t->q_len;
        c[2] += t->running;
        c[3] += t->completed;
        c[4] += t->failed;
        c[5] += t->aborted;
    }
    /* copies, not references: the reply is used after the service lock is released */
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:o, s:b, s:s, s:{s:I, s:I, s:I, s:I, s:I, s:I}}",
                          "id", op->id, "user", op->user, "state", op->state ? op->state : "",
                          "start_time", (json_int_t)op->start_ms, "pool_per_tree",
                          op->pool_per_tree ? json_deep_copy(op->pool_per_tree) : json_object(),
                          "suspended",
                          op->suspended, "operation_type", "vanilla", "progress", "total",
                          (json_int_t)c[0], "pending", (json_int_t)c[1], "running",
                          (json_int_t)c[2], "completed", (json_int_t)c[3], "failed",
                          (json_int_t)c[4], "aborted", (json_int_t)c[5]);
    if (!o)
        return NULL;
    json_t *brief = json_object();
    static const char *const brief_keys[] = {"pool", "title"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(op->spec, brief_keys[i]);
        if (v)
            json_object_set_new(brief, brief_keys[i], json_deep_copy(v));
    }
    json_object_set_new(o, "brief_spec", brief);
    json_t *weight = NULL;   /* the current one: the first tree's runtime weight */
    const char *tree;
    json_t *options;
    json_object_foreach(op->runtime_options, tree, options) {
        weight = json_object_get(options, "weight");
        break;
    }
    if (!weight && !op->runtime_options)   /* a finished one after a restart */
        weight = json_object_get(op->spec, "weight");
    if (weight)
        json_object_set_new(o, "weight", json_deep_copy(weight));
    if (op->finish_ms >= 0)
        json_object_set_new(o, "finish_time", json_integer(op->finish_ms));
    if (op->error)
        json_object_set_new(o, "error", json_string(op->error));
    return o;
}

json_t *ps_svc_op_json(struct ps_service *svc, const struct ps_svc_op *op)
{
    int64_t total = 0, pending = 0, running = 0, completed = 0, failed = 0, aborted = 0;
    for (int i = 0; i < op->task_count; i++) {
        const struct ps_svc_task *t = &op->tasks[i];
        total += t->job_count;
        pending += t->q_len;
        running += t->running;
        completed += t->completed;
        failed += t->failed;
        aborted += t->aborted;
    }
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:o, s:o, s:o, s:b, s:{s:I, s:I, s:I, s:I, s:I, s:I}}",
                          "id", op->id, "user", op->user, "state", op->state ? op->state : "",
                          "start_time", (json_int_t)op->start_ms, "pool_per_tree",
                          op->pool_per_tree ? json_deep_copy(op->pool_per_tree) : json_object(),
                          "spec", json_deep_copy(op->spec),
                          "resulting_spec", json_deep_copy(op->resulting_spec), "suspended", op->suspended,
                          "progress", "total", (json_int_t)total, "pending", (json_int_t)pending,
                          "running", (json_int_t)running, "completed", (json_int_t)completed,
                          "failed", (json_int_t)failed, "aborted", (json_int_t)aborted);
    if (!o)
        return NULL;
    /* upstream's runtime_parameters: what update_op_parameters changed lives here (the spec
     * stays as submitted); per tree the pool, weight and resource_limits in effect */
    json_t *per_tree = op->runtime_options ? json_deep_copy(op->runtime_options) : json_object();
    if (!op->runtime_options) {   /* a finished operation after a restart: its pools */
        const char *tk;
        json_t *tv;
        json_object_foreach(op->pool_per_tree, tk, tv)
            json_object_set_new(per_tree, tk, json_pack("{s:O}", "pool", tv));
    }
    json_object_set_new(o, "runtime_parameters",
                        json_pack("{s:o, s:o}", "erased_trees",
                                  op->erased_trees ? json_incref(op->erased_trees) : json_array(),
                                  "scheduling_options_per_pool_tree", per_tree));
    if (op->finish_ms >= 0)
        json_object_set_new(o, "finish_time", json_integer(op->finish_ms));
    if (op->error)
        json_object_set_new(o, "error", json_string(op->error));
    json_t *pr = pending_reason(svc, op);
    if (pr)
        json_object_set_new(o, "pending_reason", pr);
    json_object_set_new(o, "operation_type", json_string("vanilla"));
    if (op->unrecognized_spec) {   /* upstream's operation alert and attribute of that name */
        json_object_set_new(o, "unrecognized_spec", json_deep_copy(op->unrecognized_spec));
        json_object_set_new(o, "alerts",
                            json_pack("{s:{s:i, s:s, s:{s:O, s:s}}}", "unrecognized_spec", "code", 1, "message",
                                      "Spec contains unrecognized options", "attributes",
                                      "unrecognized", op->unrecognized_spec, "alert_type", "unrecognized_spec"));
    }
    return o;
}

json_t *ps_svc_job_json(const struct ps_svc_job *job)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:I, s:f, s:f, s:I, s:I}", "id",
                          job->id, "operation_id", job->op->id, "task_name",
                          job->op->tasks[job->task].name, "job_index", (json_int_t)job->job_index,
                          "state", ps_job_state_name(job->state), "node_id", job->node_id,
                          "start_time", (json_int_t)job->start_ms, "cpu_limit", job->cpu_limit,
                          "cpu_guarantee", job->cpu_guarantee, "memory_limit",
                          (json_int_t)job->mem.memory_limit_bytes, "memory_reserve",
                          (json_int_t)job->mem.user_job_memory_reserve_bytes);
    if (!o)
        return NULL;
    json_object_set_new(o, "scheduled_memory", json_integer(job->mem.memory_bytes));
    if (job->finish_ms >= 0)
        json_object_set_new(o, "finish_time", json_integer(job->finish_ms));
    if (job->error)
        json_object_set_new(o, "error", json_string(job->error));
    if (job->stderr_text && job->stderr_text[0])   /* as upstream: only when there is some */
        json_object_set_new(o, "stderr_size", json_integer((json_int_t)strlen(job->stderr_text)));
    if (job->abort_reason)
        json_object_set_new(o, "abort_reason", json_string(job->abort_reason));
    if (job->preemption_reason)
        json_object_set_new(o, "preemption_reason", json_string(job->preemption_reason));
    if (job->statistics)
        json_object_set_new(o, "statistics", json_deep_copy(job->statistics));
    if (job->exec_attributes)
        json_object_set_new(o, "exec_attributes", json_deep_copy(job->exec_attributes));
    if (job->interrupt_reason && job->state == PS_JOB_RUNNING)
        json_object_set_new(o, "interrupt_reason", json_string(job->interrupt_reason));
    return o;
}

static int find_op(struct ps_service *svc, const json_t *body, struct ps_svc_op **out,
                   struct ps_error *err)
{
    const char *id = json_string_value(json_object_get(body, "operation_id"));
    if (!id)
        return ps_error_set(err, PS_EINVAL, "missing parameter \"operation_id\"");
    *out = ps_svc_find_op(svc, id);
    if (!*out)
        return ps_error_set(err, PS_ENOENT, "operation \"%s\" does not exist", id);
    return 0;
}

/* The operation's ACL as upstream builds it: read and manage for its user (upstream's
 * add_authenticated_user_to_acl) and the spec's owners, then the spec's acl, or the one
 * update_op_parameters set last. The spec was validated at the start (op_spec.h). */
static int op_acl(const struct ps_svc_op *op, struct ps_acl *out)
{
    json_t *subjects = json_pack("[s]", op->user);
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(op->spec, "owners"), i, o)
        if (json_is_string(o))
            json_array_append(subjects, o);
    json_t *aces = json_pack("[{s:s, s:o, s:[s, s]}]", "action", "allow", "subjects", subjects,
                             "permissions", "read", "manage");
    const json_t *acl = op->parameters ? json_object_get(op->parameters, "acl") : NULL;
    if (!acl)
        acl = json_object_get(op->spec, "acl");
    if (json_is_array(acl))
        json_array_extend(aces, (json_t *)acl);
    struct ps_value v;
    int rc = aces ? ps_json_to_value(aces, &v, NULL) : PS_ENOMEM;
    json_decref(aces);
    if (rc == 0) {
        rc = ps_acl_parse(&v, "acl", out, NULL);
        ps_value_release(&v);
    }
    return rc;
}

/* Whether user has perm on op (superusers always). */
static struct ps_acl_result op_check(struct ps_service *svc, const struct ps_svc_op *op,
                                     const char *user, unsigned perm, const char *name)
{
    const struct ps_acl_groups *groups = ps_security_access(svc->security)->groups;
    struct ps_acl acl;
    if (ps_acl_superuser(groups, user))
        return (struct ps_acl_result){PS_ACL_ALLOW, NULL, NULL};
    if (op_acl(op, &acl) != 0)
        return (struct ps_acl_result){PS_ACL_DENY, NULL, NULL};
    struct ps_acl_object obj = {&acl, false, name};
    struct ps_acl_result r = ps_acl_check(&obj, 1, groups, user, perm);
    r.subject = NULL;   /* points into acl */
    r.object = r.object ? name : NULL;
    ps_acl_release(&acl);
    return r;
}

/* who's permission on op (docs/api.md "Users, groups and ACLs"): superusers always. */
static int require_op(struct ps_service *svc, const struct ps_svc_op *op,
                      const struct ps_auth_identity *who, unsigned perm, struct ps_error *err)
{
    if (ps_security_superuser(svc->security, who))
        return 0;
    char name[96];
    snprintf(name, sizeof name, "operation %s", op->id);
    struct ps_acl_result r = op_check(svc, op, who->user, perm, name);
    return r.action == PS_ACL_ALLOW ? 0 : ps_acl_denied(err, who->user, perm, name, &r);
}

int ps_api_op_permission(struct ps_service *svc, const char *id, const char *user,
                         unsigned permission, bool *allowed, struct ps_error *err)
{
    const struct ps_svc_op *op = ps_svc_find_op(svc, id);
    if (!op)
        return ps_error_set(err, PS_ENOENT, "operation \"%s\" does not exist", id);
    *allowed = op_check(svc, op, user, permission, "").action == PS_ACL_ALLOW;
    return 0;
}

static int make_id(char out[40], struct ps_error *err)
{
    unsigned char b[16];
    int rc = ps_random_bytes(b, sizeof b, err);
    if (rc != 0)
        return rc;
    uint32_t w[4];
    for (int i = 0; i < 4; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
               (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    snprintf(out, 40, "%x-%x-%x-%x", w[0], w[1], w[2], w[3]);
    return 0;
}

static void wake_trees(struct ps_service *svc, struct ps_svc_op *op)
{
    if (op->sop)
        for (int i = 0; i < op->sop->tree_count; i++) {
            struct ps_svc_tree_state *ts = ps_svc_tree(svc, op->sop->tree_names[i]);
            if (ts)
                ts->dirty = true;
        }
    pthread_cond_broadcast(&svc->loop_cv);
}

static int start_op(struct ps_service *svc, const json_t *body, const struct ps_auth_identity *who,
                    json_t **reply, struct ps_error *err)
{
    const char *type = json_string_value(json_object_get(body, "operation_type"));
    if (type && strcmp(type, "vanilla") != 0)
        return ps_error_set(err, PS_EINVAL, "operation_type: only \"vanilla\" is supported, got \"%s\"", type);
    const json_t *spec = json_object_get(body, "spec");
    if (!spec)
        return ps_error_set(err, PS_EINVAL, "missing parameter \"spec\"");
    char id[40];
    int rc = make_id(id, err);
    if (rc != 0)
        return rc;
    struct ps_svc_op *op = NULL;
    if ((rc = ps_svc_op_create(svc, id, who->user, ps_svc_now_ms(), spec, true, NULL, &op, err)) != 0)
        return rc;
    ps_persist_op(svc, op);
    ps_event_log_operation(svc, op, op->start_ms);
    char *pools = json_dumps(op->pool_per_tree, JSON_COMPACT);
    ps_svc_log(svc, "info", "operation_started", "id=%s user=%s pool_per_tree=%s state=%s", id,
               who->user, pools ? pools : "{}", op->state);
    free(pools);
    wake_trees(svc, op);
    *reply = json_pack("{s:s}", "operation_id", id);
    return 0;
}

/* The filters of list_operations, through the attribute layer: types, the state's names and
 * the limit's range have one definition and one message shape
 * (`list_operations: state: must be one of pending, ..., got "runing"`). */
struct list_filter {
    char *pool;                    /* owned, NULL: any */
    char *user;                    /* owned, NULL: any */
    struct ps_opt_int state;       /* index into state_names */
    int64_t limit;
    bool brief;                    /* the brief form: no specs (ps_svc_op_brief_json) */
    char *filter;                  /* owned, NULL: any; a substring of the filter factors */
    bool counters;                 /* add the YTsaurus counters over every operation */
    struct ps_value access;        /* upstream's {subject, permissions}: operations on which
                                    * subject has every permission ({}: no filter) */
};

static const char *const state_names[] = {"pending", "running", "completed", "failed", "aborted"};

static int list_filter_init(void *obj)
{
    memset(obj, 0, sizeof(struct list_filter));
    ((struct list_filter *)obj)->limit = 100;
    ((struct list_filter *)obj)->access = ps_value_map();
    return 0;
}

static const struct ps_attr list_filter_attrs[] = {
    {.name = "pool", .kind = PS_ATTR_OPT_STRING, .offset = offsetof(struct list_filter, pool)},
    {.name = "user", .kind = PS_ATTR_OPT_STRING, .offset = offsetof(struct list_filter, user)},
    {.name = "state", .kind = PS_ATTR_OPT_ENUM, .offset = offsetof(struct list_filter, state),
     .enum_names = state_names, .enum_count = 5},
    {.name = "limit", .kind = PS_ATTR_INT, .offset = offsetof(struct list_filter, limit),
     .min = 1, .max = 10000},
    {.name = "brief", .kind = PS_ATTR_BOOL, .offset = offsetof(struct list_filter, brief)},
    {.name = "filter", .kind = PS_ATTR_OPT_STRING, .offset = offsetof(struct list_filter, filter)},
    {.name = "counters", .kind = PS_ATTR_BOOL, .offset = offsetof(struct list_filter, counters)},
    {.name = "access", .kind = PS_ATTR_MAP, .offset = offsetof(struct list_filter, access)},
};

/* The access filter's subject and permission bits; *subject NULL when there is none.
 * Errors: PS_EINVAL naming the key. */
static int access_filter(const struct ps_value *access, const char **subject, unsigned *perms,
                         struct ps_error *err)
{
    *subject = NULL;
    *perms = 0;
    if (access->count == 0)
        return 0;
    const struct ps_value *sv = ps_value_find(access, "subject");
    const struct ps_value *pv = ps_value_find(access, "permissions");
    if (!sv || sv->type != PS_VALUE_STRING || !pv || pv->type != PS_VALUE_LIST ||
        access->count != 2)
        return ps_error_set(err, PS_EINVAL,
                            "access: must be {subject: a user, permissions: [names]}");
    for (int i = 0; i < pv->count; i++) {
        unsigned bit;
        if (pv->items[i].type != PS_VALUE_STRING)
            return ps_error_set(err, PS_EINVAL, "access/permissions: must be a list of names");
        if (ps_permission_parse(pv->items[i].string, &bit, err) != 0) {
            ps_error_prefix(err, "access/permissions");
            return PS_EINVAL;
        }
        *perms |= bit;
    }
    *subject = sv->string;
    return 0;
}

static bool access_hit(struct ps_service *svc, const struct ps_svc_op *op, const char *subject,
                       unsigned perms)
{
    for (unsigned bit = 1; bit && bit <= perms; bit <<= 1)
        if ((perms & bit) && op_check(svc, op, subject, bit, "").action != PS_ACL_ALLOW)
            return false;
    return true;
}

static const struct ps_attr_table list_filter_table = {
    .what = "list_operations parameters",
    .attrs = list_filter_attrs,
    .count = (int)(sizeof list_filter_attrs / sizeof list_filter_attrs[0]),
    .size = sizeof(struct list_filter),
    .init = list_filter_init,
};

static bool in_pool(const struct ps_svc_op *op, const char *pool)
{
    const char *k;
    json_t *v;
    json_object_foreach(op->pool_per_tree, k, v)
        if (json_is_string(v) && strcmp(json_string_value(v), pool) == 0)
            return true;
    return false;
}

/* `filter`: a case-insensitive substring (want is lower case) of upstream's filter factors as
 * far as poolsched has them: id, user, state, type, pools and title. */
static bool filter_hit(const struct ps_svc_op *op, const char *want)
{
    char text[2048];
    size_t used = 0;
    const char *parts[5] = {op->id, op->user, op->state, "vanilla",
                            json_string_value(json_object_get(op->spec, "title"))};
    for (int i = 0; i < 5; i++)
        if (parts[i] && strlen(parts[i]) + 2 < sizeof text - used)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s\n", parts[i]);
    const char *k;
    json_t *v;
    json_object_foreach(op->pool_per_tree, k, v) {
        const char *p = json_string_value(v);
        if (p && strlen(p) + 2 < sizeof text - used)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s\n", p);
    }
    for (size_t i = 0; i < used; i++)
        text[i] = (char)tolower((unsigned char)text[i]);
    return strstr(text, want) != NULL;
}

static void count(json_t *counts, const char *key)
{
    json_t *n = json_object_get(counts, key);
    if (n)
        json_integer_set(n, json_integer_value(n) + 1);   /* in place: no allocation */
    else
        json_object_set_new(counts, key, json_integer(1));
}

/* Newest first (op_list is in start order) up to limit. With counters, upstream's counters too:
 * pool_counts, user_counts and state_counts each over the operations passing the other
 * filters (and `filter`), failed_jobs_count and total_count over those passing all. One pass
 * over the operations, no allocation per operation beyond the ones listed. */
static int list_operations(struct ps_service *svc, const json_t *body, json_t **reply,
                           struct ps_error *err)
{
    struct list_filter f;
    list_filter_init(&f);
    int rc = ps_attr_apply_json(&list_filter_table, &f, body, err);
    if (rc != 0) {
        ps_error_prefix(err, "list_operations");
        ps_attr_release(&list_filter_table, &f);
        return rc;
    }
    const char *pool = f.pool, *user = f.user, *subject;
    unsigned perms;
    if ((rc = access_filter(&f.access, &subject, &perms, err)) != 0) {
        ps_error_prefix(err, "list_operations");
        ps_attr_release(&list_filter_table, &f);
        return rc;
    }
    const char *state = f.state.set ? state_names[f.state.value] : NULL;
    char want[256] = "";
    if (f.filter) {
        snprintf(want, sizeof want, "%s", f.filter);
        for (char *w = want; *w; w++)
            *w = (char)tolower((unsigned char)*w);
    }
    json_t *arr = json_array();
    json_t *pools = json_object(), *users = json_object(), *states = json_object();
    int64_t total = 0, failed_jobs = 0;
    for (int i = svc->op_count - 1; i >= 0; i--) {
        struct ps_svc_op *op = svc->op_list[i];
        if (!f.counters && total >= f.limit)
            break;
        if (f.filter && !filter_hit(op, want))
            continue;
        if (subject && !access_hit(svc, op, subject, perms))
            continue;
        bool u = !user || strcmp(op->user, user) == 0;
        bool s = !state || (op->state && strcmp(op->state, state) == 0);
        bool p = !pool || in_pool(op, pool);
        if (f.counters) {
            if (u && s) {
                const char *k;
                json_t *v;
                json_object_foreach(op->pool_per_tree, k, v)
                    if (json_is_string(v))
                        count(pools, json_string_value(v));
            }
            if (p && s)
                count(users, op->user);
            if (p && u && op->state)
                count(states, op->state);
        }
        if (!(p && u && s))
            continue;
        if (++total <= f.limit)
            json_array_append_new(arr, f.brief ? ps_svc_op_brief_json(op) : ps_svc_op_json(svc, op));
        if (f.counters) {
            int64_t failed = 0;
            for (int t = 0; t < op->task_count; t++)
                failed += op->tasks[t].failed;
            failed_jobs += failed > 0;
        }
    }
    if (f.counters)
        *reply = json_pack("{s:o, s:o, s:o, s:o, s:I, s:I}", "operations", arr, "pool_counts",
                           pools, "user_counts", users, "state_counts", states,
                           "failed_jobs_count", (json_int_t)failed_jobs, "total_count",
                           (json_int_t)total);
    else {
        *reply = json_pack("{s:o}", "operations", arr);
        json_decref(pools);
        json_decref(users);
        json_decref(states);
    }
    ps_attr_release(&list_filter_table, &f);
    return 0;
}

static int update_params(struct ps_service *svc, struct ps_svc_op *op, const json_t *body,
                         struct ps_error *err)
{
    const json_t *params = json_object_get(body, "parameters");
    if (!json_is_object(params))
        return ps_error_set(err, PS_EINVAL, "parameters: must be a map");
    struct ps_value pv;
    int rc = ps_json_to_value(params, &pv, err);
    if (rc == 0 && (op->finished || !op->sop)) {
        ps_value_release(&pv);
        rc = ps_error_set(err, PS_ESTATE, "operation \"%s\" has already finished", op->id);
    }
    if (rc != 0)
        return rc;
    /* The snapshot keeps the old settings (it owns its filters) until the next update, which
     * wake_trees brings forward (docs/scheduling-loop.md). */
    rc = ps_strategy_update_operation(svc->strategy, op->id, &pv, err);
    ps_value_release(&pv);
    if (rc != 0)
        return rc;
    if (!op->parameters)
        op->parameters = json_object();
    /* stored for a restart; spec and resulting_spec stay as submitted (upstream): the values in
     * effect are in runtime_parameters */
    json_object_update(op->parameters, (json_t *)params);
    ps_svc_op_update_pools(op);
    ps_svc_op_refresh_state(op);
    ps_persist_op(svc, op);
    /* a move out of a pool at its running limit starts pending operations there */
    for (int i = 0; i < ps_strategy_activated_count(svc->strategy); i++) {
        struct ps_svc_op *a = ps_svc_find_op(svc, ps_strategy_activated(svc->strategy, i)->id);
        if (a && a != op) {
            ps_svc_op_refresh_state(a);
            ps_persist_op(svc, a);
            ps_svc_log(svc, "info", "operation_running", "id=%s", a->id);
            wake_trees(svc, a);
        }
    }
    char *text = json_dumps(params, JSON_COMPACT);
    ps_svc_log(svc, "info", "operation_updated", "id=%s parameters=%s", op->id, text ? text : "");
    free(text);
    wake_trees(svc, op);
    return 0;
}

/* Every job of the operation (finished ones leave memory once stored: the archive merges both),
 * then the page the parameters ask for (job_list.h). */
static int list_jobs(struct ps_service *svc, struct ps_svc_op *op, const json_t *body,
                     json_t **reply, struct ps_error *err)
{
    json_t *jobs = NULL;
    int rc = ps_job_archive_list(svc, op, &jobs, err);
    return rc != 0 ? rc : ps_job_list_page(body, jobs, ps_svc_now_ms(), reply, err);
}

int ps_api_op_command(struct ps_service *svc, const char *command, const json_t *body,
                      const struct ps_auth_identity *who, json_t **reply, struct ps_error *err,
                      bool *handled);
int ps_api_op_command(struct ps_service *svc, const char *command, const json_t *body,
                      const struct ps_auth_identity *who, json_t **reply, struct ps_error *err,
                      bool *handled)
{
    *handled = true;
    if (strcmp(command, "start_op") == 0)
        return start_op(svc, body, who, reply, err);
    if (strcmp(command, "list_operations") == 0)
        return list_operations(svc, body, reply, err);
    static const char *const op_commands[] = {"get_operation", "abort_op", "suspend_op",
                                              "resume_op", "complete_op", "update_op_parameters",
                                              "list_jobs", "get_job", "get_job_stderr", NULL};
    bool known = false;
    for (int i = 0; op_commands[i]; i++)
        known |= strcmp(op_commands[i], command) == 0;
    if (!known) {
        *handled = false;
        return 0;
    }
    struct ps_svc_op *op;
    int rc = find_op(svc, body, &op, err);
    if (rc != 0)
        return rc;
    if (strcmp(command, "get_operation") == 0) {
        *reply = ps_svc_op_json(svc, op);
        return 0;
    }
    /* jobs and their stderr need read; changes need manage (as upstream) */
    bool reads = strncmp(command, "list_jobs", 9) == 0 || strncmp(command, "get_job", 7) == 0;
    if ((rc = require_op(svc, op, who, reads ? PS_PERM_READ : PS_PERM_MANAGE, err)) != 0)
        return rc;
    if (strcmp(command, "list_jobs") == 0)
        return list_jobs(svc, op, body, reply, err);
    if (strcmp(command, "get_job") == 0) {
        const char *jid = json_string_value(json_object_get(body, "job_id"));
        if (!jid)
            return ps_error_set(err, PS_EINVAL, "missing parameter \"job_id\"");
        return ps_job_archive_get(svc, op, jid, reply, err);
    }
    if (strcmp(command, "get_job_stderr") == 0) {
        const char *jid = json_string_value(json_object_get(body, "job_id"));
        if (!jid)
            return ps_error_set(err, PS_EINVAL, "missing parameter \"job_id\"");
        struct ps_svc_job *j = ps_strmap_get(&svc->jobs, jid);
        if (!j)
            return ps_job_archive_stderr(svc, op, jid, reply, err);
        if (j->op != op)
            return ps_error_set(err, PS_ENOENT, "job \"%s\" of operation \"%s\" does not exist",
                                jid, op->id);
        *reply = json_pack("{s:s, s:b}", "stderr", j->stderr_text ? j->stderr_text : "",
                           "truncated", j->stderr_truncated);
        return 0;
    }
    if (strcmp(command, "update_op_parameters") == 0) {
        if ((rc = update_params(svc, op, body, err)) == 0) {
            ps_event_log_runtime_parameters(svc, op, who->user, ps_svc_now_ms());
            *reply = json_object();
        }
        return rc;
    }
    if (op->finished)
        return ps_error_set(err, PS_ESTATE, "operation \"%s\" has already %s", op->id, op->state);
    int64_t now = ps_svc_now_ms();
    if (strcmp(command, "abort_op") == 0 || strcmp(command, "complete_op") == 0) {
        bool abort = command[0] == 'a';
        char msg[300];
        snprintf(msg, sizeof msg, "%s by user \"%s\"", abort ? "aborted" : "completed", who->user);
        ps_svc_op_finish(svc, op, abort ? "aborted" : "completed", abort ? msg : NULL, now);
        wake_trees(svc, op);
    } else {
        bool suspend = strcmp(command, "suspend_op") == 0;
        if ((rc = ps_strategy_suspend_operation(svc->strategy, op->id, suspend, err)) != 0)
            return rc;
        op->suspended = suspend;
        ps_svc_op_update_shape(svc, op);
        ps_persist_op(svc, op);
        ps_svc_log(svc, "info", suspend ? "operation_suspended" : "operation_resumed", "id=%s",
                   op->id);
        wake_trees(svc, op);
    }
    *reply = json_object();
    return 0;
}
