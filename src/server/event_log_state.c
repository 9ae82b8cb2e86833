/* event_log_state.c — an operation's fields of the event log's rows, and the state rows
 * nodes_info and operations_info rendered by the journal's writer (event_log_state.h). */
#include <stdlib.h>
#include <string.h>

#include "core/strategy.h"
#include "server/api_json.h"
#include "server/event_log_state.h"
#include "server/service_state.h"

static json_t *shared_or_null(json_t *v)
{
    return v ? json_incref(v) : json_null();
}

int ps_event_op_view_take(const struct ps_svc_op *op, struct ps_event_op_view *v)
{
    memset(v, 0, sizeof *v);
    v->id = strdup(op->id);
    v->user = strdup(op->user);
    v->tasks = calloc((size_t)(op->task_count > 0 ? op->task_count : 1), sizeof *v->tasks);
    /* Copies, not references: the journal's render thread drops the view without svc->mu, and
     * a reference count the request threads change under it is no count to drop there. */
    v->spec = op->spec ? json_deep_copy(op->spec) : NULL;
    v->pool_per_tree = op->pool_per_tree ? json_deep_copy(op->pool_per_tree) : NULL;
    v->runtime_options = op->runtime_options ? json_deep_copy(op->runtime_options) : NULL;
    v->start_ms = op->start_ms;
    bool ok = v->id && v->user && v->tasks && (!op->spec || v->spec) &&
              (!op->pool_per_tree || v->pool_per_tree) &&
              (!op->runtime_options || v->runtime_options);
    for (int i = 0; ok && i < op->task_count; i++) {
        const struct ps_svc_task *t = &op->tasks[i];
        v->tasks[i] = (struct ps_event_task_view){strdup(t->name), t->job_count, t->completed,
                                                  t->shape};
        v->task_count = i + 1;
        ok = v->tasks[i].name != NULL;
    }
    if (!ok)
        ps_event_op_view_release(v);
    return ok ? 0 : -1;
}

void ps_event_op_view_release(struct ps_event_op_view *v)
{
    free(v->id);
    free(v->user);
    json_decref(v->spec);
    json_decref(v->pool_per_tree);
    json_decref(v->runtime_options);
    for (int i = 0; i < v->task_count; i++)
        free(v->tasks[i].name);
    free(v->tasks);
    memset(v, 0, sizeof *v);
}

static json_t *spec_of(const struct ps_event_op_view *v, bool tasks)
{
    if (!json_is_object(v->spec) || tasks)
        return shared_or_null(v->spec);
    json_t *s = json_object();
    const char *k;
    json_t *x;
    json_object_foreach(v->spec, k, x)
        if (strcmp(k, "tasks") != 0)
            json_object_set(s, k, x);
    return s;
}

static json_t *tasks_json(const struct ps_event_op_view *v)
{
    json_t *a = json_array();
    for (int i = 0; i < v->task_count; i++) {
        const struct ps_event_task_view *t = &v->tasks[i];
        json_array_append_new(a, json_pack("{s:s, s:I, s:o}", "name", t->name, "job_count",
                                           (json_int_t)t->job_count, "resource_limits",
                                           ps_api_resources_json(&t->shape)));
    }
    return a;
}

void ps_event_operation_info(const struct ps_event_op_view *v, const char *default_tree,
                             json_t *ev, bool task_specs)
{
    json_object_set_new(ev, "operation_id", json_string(v->id));
    json_object_set_new(ev, "operation_type", json_string("vanilla"));
    json_object_set_new(ev, "spec", spec_of(v, task_specs));
    json_object_set_new(ev, "authenticated_user", json_string(v->user));
    json_t *pool = default_tree ? json_object_get(v->pool_per_tree, default_tree) : NULL;
    if (pool)
        json_object_set(ev, "pool", pool);
    json_t *per_tree = json_object();
    const char *tree;
    json_t *p;
    json_object_foreach(v->pool_per_tree, tree, p)
        json_object_set_new(per_tree, tree, json_pack("{s:O}", "pool", p));
    json_object_set_new(ev, "scheduling_info_per_tree", per_tree);
    json_object_set_new(ev, "tasks", tasks_json(v));
}

json_t *ps_event_runtime_parameters(json_t *runtime_options)
{
    return json_pack("{s:o}", "scheduling_options_per_pool_tree", shared_or_null(runtime_options));
}

json_t *ps_event_node_fields(char *const *tags, int tag_count, const struct ps_resources *limits,
                             json_t *ev)
{
    json_t *a = json_array();
    for (int i = 0; i < tag_count; i++)
        json_array_append_new(a, json_string(tags[i]));
    json_object_set_new(ev, "tags", a);
    json_object_set_new(ev, "resource_limits", ps_api_resources_json(limits));
    return ev;
}

/* ---- the state rows ---------------------------------------------------------------------- */

json_t *ps_event_row(const char *type, int64_t now_ms)
{
    return json_pack("{s:I, s:s}", "timestamp", (json_int_t)now_ms, "event_type", type);
}

/* The text of a state row {timestamp, event_type: type, field: entries (stolen)}; NULL when
 * it could not be built (entries NULL: out of memory) */
static char *state_text(const char *type, int64_t now_ms, const char *field, json_t *entries)
{
    json_t *ev = ps_event_row(type, now_ms);
    char *text = NULL;
    if (ev && entries && json_object_set(ev, field, entries) == 0)
        text = json_dumps(ev, JSON_COMPACT);
    json_decref(entries);
    json_decref(ev);
    return text;
}

struct node_view {
    char *id;
    char **tags;
    int tag_count;
    struct ps_resources limits;
};

struct nodes_copy {
    int64_t now_ms;
    int count;
    struct node_view *nodes;
};

static void nodes_drop(void *ctx)
{
    struct nodes_copy *c = ctx;
    for (int i = 0; i < c->count; i++) {
        for (int t = 0; t < c->nodes[i].tag_count; t++)
            free(c->nodes[i].tags[t]);
        free(c->nodes[i].tags);
        free(c->nodes[i].id);
    }
    free(c->nodes);
    free(c);
}

/* every node in scheduling (registered) */
void *ps_event_nodes_info_take(const struct ps_service *svc, int64_t now_ms)
{
    struct nodes_copy *c = calloc(1, sizeof *c);
    if (!c || !(c->nodes = calloc((size_t)svc->node_count + 1, sizeof *c->nodes))) {
        free(c);
        return NULL;
    }
    c->now_ms = now_ms;
    for (int i = 0; i < svc->node_count; i++) {
        const struct ps_svc_node *n = svc->node_list[i];
        if (!n->registered)
            continue;
        struct node_view *v = &c->nodes[c->count++];
        v->id = strdup(n->id);
        v->limits = n->limits;
        v->tags = calloc((size_t)n->tag_count + 1, sizeof *v->tags);
        bool ok = v->id && v->tags;
        for (int t = 0; ok && t < n->tag_count; t++) {
            v->tags[t] = strdup(n->tags[t]);
            v->tag_count = t + 1;
            ok = v->tags[t] != NULL;
        }
        if (!ok) {
            nodes_drop(c);
            return NULL;
        }
    }
    return c;
}

static char *nodes_text(void *ctx)
{
    const struct nodes_copy *c = ctx;
    json_t *nodes = json_object();
    for (int i = 0; nodes && i < c->count; i++) {
        const struct node_view *v = &c->nodes[i];
        json_object_set_new(nodes, v->id,
                            ps_event_node_fields(v->tags, v->tag_count, &v->limits, json_object()));
    }
    return state_text("nodes_info", c->now_ms, "nodes", nodes);
}

const struct ps_journal_renderer ps_event_nodes_info_renderer = {nodes_text, nodes_drop};

struct ops_copy {
    int64_t now_ms;
    char *default_tree;
    int count;
    struct ps_event_op_view *ops;
};

static void ops_drop(void *ctx)
{
    struct ops_copy *c = ctx;
    for (int i = 0; i < c->count; i++)
        ps_event_op_view_release(&c->ops[i]);
    free(c->ops);
    free(c->default_tree);
    free(c);
}

/* every operation not finished */
void *ps_event_operations_info_take(const struct ps_service *svc, int64_t now_ms)
{
    struct ops_copy *c = calloc(1, sizeof *c);
    if (!c || !(c->ops = calloc((size_t)svc->op_count + 1, sizeof *c->ops))) {
        free(c);
        return NULL;
    }
    c->now_ms = now_ms;
    const char *def = ps_strategy_default_tree(svc->strategy);
    bool ok = !def || (c->default_tree = strdup(def));
    for (int i = 0; ok && i < svc->op_count; i++) {
        if (svc->op_list[i]->finished)
            continue;
        ok = ps_event_op_view_take(svc->op_list[i], &c->ops[c->count]) == 0;
        c->count += ok;
    }
    if (!ok) {
        ops_drop(c);
        return NULL;
    }
    return c;
}

/* as its operation_started row has it, with its start_time, runtime_parameters and each task's
 * completed jobs so far: a replay starting here knows the operations whose started rows the
 * bound has dropped */
static char *ops_text(void *ctx)
{
    const struct ops_copy *c = ctx;
    json_t *ops = json_object();
    for (int i = 0; ops && i < c->count; i++) {
        const struct ps_event_op_view *v = &c->ops[i];
        json_t *o = json_object();
        if (!o) {
            json_decref(ops);
            return NULL;
        }
        ps_event_operation_info(v, c->default_tree, o, false);
        json_object_set_new(o, "start_time", json_integer(v->start_ms));
        json_object_set_new(o, "runtime_parameters", ps_event_runtime_parameters(v->runtime_options));
        json_t *tasks = json_object_get(o, "tasks");
        for (int t = 0; t < v->task_count; t++)
            json_object_set_new(json_array_get(tasks, (size_t)t), "completed",
                                json_integer(v->tasks[t].completed));
        json_object_set_new(ops, v->id, o);
    }
    return state_text("operations_info", c->now_ms, "operations", ops);
}

const struct ps_journal_renderer ps_event_operations_info_renderer = {ops_text, ops_drop};
