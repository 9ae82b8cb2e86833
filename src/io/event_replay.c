/* event_replay.c — the event log as a scenario (event_replay.h; docs/what-if.md). */
#include "io/event_replay.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/event_record.h"
#include "io/jsonval.h"

#define ROOT_POOL "<Root>"
#define NO_JOB SIZE_MAX

/* A recorded job: its job_started row (or its end row when it started before the log's oldest
 * row) and its end row, as indexes into the record's jobs. */
struct replay_job {
    size_t start, end;   /* end NO_JOB while running */
};

/* What jobs of one task add up to. */
struct task_acc {
    int64_t n, ms;    /* jobs with time in the window (completed ones: task_means), their ms */
    int64_t started;  /* jobs done or running at until */
};

/* What one pass over the rows gathers; json members are owned. */
struct replay {
    const struct ps_event_replay_options *o;
    json_t *groups;      /* node groups, in order of first sight */
    json_t *node_index;  /* address -> index into groups */
    json_t *node_tags;   /* address -> the tags last seen */
    json_t *node_limits; /* address -> the resource limits last seen (offline: zero) */
    json_t *base_pools;  /* {tree: {pool: config}} as of since, plus pools seen later */
    json_t *cur_pools;   /* the last pools_info row's pools */
    json_t *base_trees;  /* {tree: config} as of since, plus trees seen later (pool_trees_info) */
    json_t *cur_trees;   /* the last pool_trees_info row's trees */
    json_t *rec_default; /* the last pool_trees_info row's default_tree */
    json_t *ops;         /* operation_started rows, in order */
    json_t *op_index;    /* id -> index into ops */
    json_t *op_ended;    /* id -> true for operations that ended at or before until */
    json_t *events;      /* [time, seq, event] */
    json_t *op_params;   /* id -> runtime_parameters of the last row at or before since */
    const struct ps_event_record *rec;
    struct replay_job *jobs;   /* recorded jobs, in order of their first row */
    size_t job_count;
    size_t *job_index;   /* job id (rec->job_ids) -> index into jobs, NO_JOB when none */
    struct task_acc *task_means;   /* task name (rec->task_names) -> completed jobs, every op */
    struct ps_error *err;
};

static int64_t ival(const json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

static const char *sval(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int bad_row(struct replay *r, size_t i, const char *key, const char *rule)
{
    return ps_error_set(r->err, PS_EINVAL, "event log row %zu: %s: %s", i, key, rule);
}

/* bad_row for the entry name of the map key (nodes.n1, operations.<id>) */
static int bad_entry(struct replay *r, size_t i, const char *key, const char *name,
                     const char *rule)
{
    char at[300];
    snprintf(at, sizeof at, "%s.%.256s", key, name);
    return bad_row(r, i, at, rule);
}

static json_t *zero_resources(void)
{
    return json_pack("{s:i, s:i, s:i, s:i, s:i}", "user_slots", 0, "cpu", 0, "gpu", 0, "memory",
                     0, "network", 0);
}

static void add_event(struct replay *r, int64_t t_ms, json_t *ev)
{
    json_object_set_new(ev, "time", json_integer(t_ms));
    json_array_append_new(r->events,
                          json_pack("[I, I, o]", (json_int_t)t_ms,
                                    (json_int_t)json_array_size(r->events), ev));
}

static json_t *node_id(const char *address)
{
    char *id = NULL;
    if (asprintf(&id, "%s-0", address) < 0)
        return NULL;
    json_t *s = json_string(id);
    free(id);
    return s;
}

/* A node row (node_registered, node_updated, node_offline), or a node's entry of nodes_info:
 * a row that repeats what the replay knows of the node adds nothing */
static int node_row(struct replay *r, size_t i, const json_t *row, const char *type, int64_t ts)
{
    const char *addr = sval(row, "node_address");
    const json_t *limits = json_object_get(row, "resource_limits");
    const json_t *tags = json_object_get(row, "tags");
    if (!addr || !*addr)
        return bad_row(r, i, "node_address", "must be a non-empty string");
    if (!json_is_object(limits))
        return bad_row(r, i, "resource_limits", "must be a map");
    if (tags && !json_is_array(tags))
        return bad_row(r, i, "tags", "must be a list of strings");
    bool offline = strcmp(type, "node_offline") == 0;
    json_t *now_limits = offline ? zero_resources() : json_deep_copy(limits);
    json_t *now_tags = tags ? json_deep_copy(tags) : json_array();
    json_t *idx = json_object_get(r->node_index, addr);
    bool in_window = ts > r->o->since_ms;
    if (idx && json_equal(json_object_get(r->node_limits, addr), now_limits) &&
        json_equal(json_object_get(r->node_tags, addr), now_tags)) {
        json_decref(now_limits);
        json_decref(now_tags);
        return 0;
    }
    if (!idx) {
        json_object_set_new(r->node_index, addr, json_integer((json_int_t)json_array_size(r->groups)));
        /* a node heartbeats as soon as a job of its ends (poolsched node, upstream's) */
        json_array_append_new(r->groups,
                              json_pack("{s:s, s:i, s:o, s:O, s:b}", "name", addr, "count", 1,
                                        "resource_limits", in_window ? zero_resources()
                                                                     : json_deep_copy(now_limits),
                                        "tags", now_tags, "send_heartbeat_on_job_finished", 1));
    } else if (!in_window) {
        json_t *g = json_array_get(r->groups, (size_t)json_integer_value(idx));
        json_object_set(g, "resource_limits", now_limits);
        json_object_set(g, "tags", now_tags);
    }
    if (in_window) {
        const json_t *last_tags = json_object_get(r->node_tags, addr);
        json_t *id = node_id(addr);
        add_event(r, ts - r->o->since_ms,
                  json_pack("{s:s, s:O, s:O}", "type", "set_node_resources", "node", id,
                            "resource_limits", now_limits));
        if (last_tags && !json_equal(last_tags, now_tags))
            add_event(r, ts - r->o->since_ms,
                      json_pack("{s:s, s:O, s:O}", "type", "set_node_tags", "node", id, "tags",
                                now_tags));
        json_decref(id);
    }
    json_object_set(r->node_tags, addr, now_tags);
    json_object_set(r->node_limits, addr, now_limits);
    json_decref(now_limits);
    json_decref(now_tags);
    return 0;
}

/* nodes_info (the scheduler's state rows, event_log.h): each node as a node row of its own, a
 * node the replay knows as it was left alone */
static int nodes_row(struct replay *r, size_t i, const json_t *row, int64_t ts)
{
    const json_t *nodes = json_object_get(row, "nodes");
    if (!json_is_object(nodes))
        return bad_row(r, i, "nodes", "must be a map {address: {tags, resource_limits}}");
    const char *addr;
    json_t *node;
    json_object_foreach((json_t *)nodes, addr, node) {
        if (!json_is_object(node))
            return bad_entry(r, i, "nodes", addr, "must be a map {tags, resource_limits}");
        json_t *one = json_deep_copy(node);
        if (one)
            json_object_set_new(one, "node_address", json_string(addr));
        int rc = one ? node_row(r, i, one, "node_updated", ts)
                     : ps_error_set(r->err, PS_ENOMEM, "out of memory");
        json_decref(one);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A pool's (tree's) config as scenario attributes: null values left out. */
static json_t *pool_attributes(const json_t *config)
{
    json_t *a = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)config, key, v)
        if (!json_is_null(v) && strcmp(key, "name") != 0)
            json_object_set(a, key, v);
    return a;
}

/* set_pool_attribute events (set_tree_attribute when pool is NULL) for the keys that differ */
static void diff_pool(struct replay *r, int64_t t_ms, const char *tree, const char *pool,
                      const json_t *old_cfg, const json_t *new_cfg)
{
    json_t *keys = ps_jv_key_union(old_cfg, new_cfg);
    const char *key;
    json_t *v;
    json_object_foreach(keys, key, v) {
        json_t *a = json_object_get(old_cfg, key), *b = json_object_get(new_cfg, key);
        bool a_null = !a || json_is_null(a), b_null = !b || json_is_null(b);
        if ((a_null && b_null) || (a && b && json_equal(a, b)))
            continue;
        if (pool && strcmp(key, "parent") == 0 &&
            (b_null || strcmp(json_string_value(b), ROOT_POOL) == 0))
            continue;   /* a move to the root cannot be said by set_pool_attribute */
        json_t *ev = json_pack("{s:s, s:s, s:s, s:O}", "type",
                               pool ? "set_pool_attribute" : "set_tree_attribute", "tree", tree,
                               "key", key, "value", b_null ? json_null() : b);
        if (pool)
            json_object_set_new(ev, "pool", json_string(pool));
        add_event(r, t_ms, ev);
    }
    json_decref(keys);
}

static int pools_row(struct replay *r, size_t i, const json_t *row, int64_t ts)
{
    const json_t *pools = json_object_get(row, "pools");
    if (!json_is_object(pools))
        return bad_row(r, i, "pools", "must be a map of pool trees");
    bool in_window = ts > r->o->since_ms;
    if (!r->base_pools || !in_window) {
        json_decref(r->base_pools);
        r->base_pools = json_deep_copy(pools);
    } else {
        const char *tree;
        json_t *tpools;
        json_object_foreach((json_t *)pools, tree, tpools) {
            json_t *base = json_object_get(r->base_pools, tree);
            if (!base)
                json_object_set_new(r->base_pools, tree, base = json_object());
            const json_t *cur = json_object_get(r->cur_pools, tree);
            const char *pool;
            json_t *cfg;
            json_object_foreach(tpools, pool, cfg) {
                const json_t *old = json_object_get(cur, pool);
                if (old)
                    diff_pool(r, ts - r->o->since_ms, tree, pool, old, cfg);
                if (!json_object_get(base, pool))
                    json_object_set(base, pool, cfg);
            }
        }
    }
    json_decref(r->cur_pools);
    r->cur_pools = json_deep_copy(pools);
    return 0;
}

/* pool_trees_info: the trees' configs as of since (else the first row in the window), later
 * changes as set_tree_attribute events, a tree first seen later with its first config */
static int trees_row(struct replay *r, size_t i, const json_t *row, int64_t ts)
{
    const json_t *trees = json_object_get(row, "trees");
    const json_t *def = json_object_get(row, "default_tree");
    const char *tree;
    json_t *cfg;
    if (!json_is_object(trees))
        return bad_row(r, i, "trees", "must be a map of pool tree configs");
    json_object_foreach((json_t *)trees, tree, cfg)
        if (!json_is_object(cfg)) {
            char key[300];
            snprintf(key, sizeof key, "trees/%s", tree);
            return bad_row(r, i, key, "must be a map (the pool tree's config)");
        }
    if (def && !json_is_null(def) && !json_is_string(def))
        return bad_row(r, i, "default_tree", "must be a pool tree name or null");
    /* before any node row, a change shows nowhere (no node, nothing runs): it is the start's
     * state, and the nodes to come are placed by the trees as they were when they came */
    if (!r->base_trees || ts <= r->o->since_ms || json_object_size(r->node_index) == 0) {
        json_decref(r->base_trees);
        r->base_trees = json_deep_copy(trees);
    } else {
        json_object_foreach((json_t *)trees, tree, cfg) {
            const json_t *old = json_object_get(r->cur_trees, tree);
            if (old)
                diff_pool(r, ts - r->o->since_ms, tree, NULL, old, cfg);
            if (!json_object_get(r->base_trees, tree))
                json_object_set(r->base_trees, tree, cfg);
        }
    }
    json_decref(r->cur_trees);
    r->cur_trees = json_deep_copy(trees);
    json_decref(r->rec_default);
    r->rec_default = json_is_string(def) ? json_incref((json_t *)def) : NULL;
    return 0;
}

static int op_row(struct replay *r, size_t i, const json_t *row, const char *type, int64_t ts)
{
    const char *id = sval(row, "operation_id");
    if (!id || !*id)
        return bad_row(r, i, "operation_id", "must be a non-empty string");
    if (strcmp(type, "operation_started") != 0) {
        json_object_set(r->op_ended, id, json_true());
        return 0;
    }
    if (!json_is_array(json_object_get(row, "tasks")))
        return bad_row(r, i, "tasks", "must be a list");
    json_t *copy = json_deep_copy(row);
    json_object_set_new(copy, "_time", json_integer(ts));
    json_object_set_new(r->op_index, id, json_integer((json_int_t)json_array_size(r->ops)));
    json_array_append_new(r->ops, copy);
    return 0;
}

/* operations_info (the scheduler's state rows, event_log.h): each operation the replay does not
 * know yet (its operation_started row dropped by the log's bound) as if that row were read,
 * submitted at its start_time, with the state's time and each task's completed jobs then
 * (op_tasks counts its jobs from there) */
static int ops_state_row(struct replay *r, size_t i, const json_t *row, int64_t ts)
{
    const json_t *ops = json_object_get(row, "operations");
    if (!json_is_object(ops))
        return bad_row(r, i, "operations", "must be a map {operation id: operation}");
    const char *id;
    json_t *op;
    json_object_foreach((json_t *)ops, id, op) {
        if (json_object_get(r->op_index, id))
            continue;
        if (!*id || !json_is_object(op) || !json_is_array(json_object_get(op, "tasks")) ||
            !json_is_integer(json_object_get(op, "start_time")))
            return bad_entry(r, i, "operations", id,
                             "must be a map with tasks (a list) and start_time (ms)");
        json_t *copy = json_deep_copy(op);
        json_object_set_new(copy, "operation_id", json_string(id));
        json_object_set(copy, "_time", json_object_get(op, "start_time"));
        json_object_set_new(copy, "_state_ms", json_integer(ts));
        json_object_set_new(r->op_index, id, json_integer((json_int_t)json_array_size(r->ops)));
        json_array_append_new(r->ops, copy);
        const json_t *p = json_object_get(op, "runtime_parameters");
        if (ts <= r->o->since_ms && json_is_object(p) && !json_object_get(r->op_params, id))
            json_object_set(r->op_params, id, (json_t *)p);
    }
    return 0;
}

static const char *const job_flaws[][2] = {
    [PS_EVENT_JOB_BAD_ID] = {"job_id", "must be a non-empty string"},
    [PS_EVENT_JOB_BAD_OPERATION] = {"operation_id", "must be a string"},
    [PS_EVENT_JOB_BAD_RESOURCES] = {"resource_limits", "must be a map"},
    [PS_EVENT_JOB_BAD_TIMES] = {"start_time",
                                "a job's end row needs start_time and finish_time (ms)"},
};

static int job_row(struct replay *r, const struct ps_event_job *job)
{
    if (job->timestamp > r->o->until_ms)
        return 0;
    if (job->flaw != PS_EVENT_JOB_OK)
        return bad_row(r, job->row, job_flaws[job->flaw][0], job_flaws[job->flaw][1]);
    size_t k = (size_t)(job - r->rec->jobs), *idx = &r->job_index[job->job];
    if (job->kind == PS_EVENT_JOB_STARTED || *idx == NO_JOB) {
        /* a new job; an end row alone: it started before the log's oldest row */
        r->jobs[r->job_count] = (struct replay_job){k, NO_JOB};
        *idx = r->job_count++;
    }
    if (job->kind != PS_EVENT_JOB_STARTED)
        r->jobs[*idx].end = k;
    return 0;
}

static void params_row(struct replay *r, const json_t *row, int64_t ts)
{
    const char *id = sval(row, "operation_id");
    const json_t *p = json_object_get(row, "runtime_parameters");
    if (!id || !json_is_object(p) ||
        !json_is_object(json_object_get(p, "scheduling_options_per_pool_tree")))
        return;
    if (ts <= r->o->since_ms)
        json_object_set(r->op_params, id, (json_t *)p);
    else
        add_event(r, ts - r->o->since_ms,
                  json_pack("{s:s, s:s, s:O}", "type", "update_operation", "operation", id,
                            "parameters", p));
}

/* Row i, any but a job row (those are the record's structs: job_row). */
static int read_row(struct replay *r, size_t i, const json_t *row)
{
    if (!json_is_object(row))
        return bad_row(r, i, "row", "must be a map");
    const char *type = sval(row, "event_type");
    const json_t *t = json_object_get(row, "timestamp");
    if (!type)
        return bad_row(r, i, "event_type", "must be a string");
    if (!json_is_integer(t) || json_integer_value(t) < 0)
        return bad_row(r, i, "timestamp", "must be ms since the epoch (an integer >= 0)");
    int64_t ts = (int64_t)json_integer_value(t);
    if (ts > r->o->until_ms)
        return 0;
    if (strncmp(type, "node_", 5) == 0)
        return node_row(r, i, row, type, ts);
    if (strcmp(type, "nodes_info") == 0)
        return nodes_row(r, i, row, ts);
    if (strcmp(type, "operations_info") == 0)
        return ops_state_row(r, i, row, ts);
    if (strcmp(type, "pools_info") == 0)
        return pools_row(r, i, row, ts);
    if (strcmp(type, "pool_trees_info") == 0)
        return trees_row(r, i, row, ts);
    if (strncmp(type, "operation_", 10) == 0)
        return op_row(r, i, row, type, ts);
    if (strcmp(type, "runtime_parameters_info") == 0)
        params_row(r, row, ts);
    return 0;
}

/* ---- building the scenario ------------------------------------------------------------- */

static json_t *tree_pools(const json_t *pools)
{
    /* parents before children: repeat passes over the listing, in its order */
    json_t *list = json_array(), *done = json_object();
    for (bool progress = true; progress;) {
        progress = false;
        const char *name;
        json_t *cfg;
        json_object_foreach((json_t *)pools, name, cfg) {
            const char *parent = sval(cfg, "parent");
            if (!parent || !json_object_get(pools, parent))
                parent = ROOT_POOL;
            if (json_object_get(done, name) ||
                (strcmp(parent, ROOT_POOL) != 0 && !json_object_get(done, parent)))
                continue;
            json_t *p = pool_attributes(cfg);
            json_object_set_new(p, "name", json_string(name));
            json_object_set_new(p, "parent", json_string(parent));
            json_array_append_new(list, p);
            json_object_set_new(done, name, json_true());
            progress = true;
        }
    }
    json_decref(done);
    return list;
}

static json_t *pool_trees(const struct replay *r)
{
    json_t *trees = json_object();
    const char *tree;
    json_t *pools;
    json_object_foreach(r->base_pools, tree, pools) {
        const json_t *attrs = json_object_get(r->base_trees, tree);   /* recorded, else given */
        if (!attrs)
            attrs = json_object_get(r->o->tree_attributes, tree);
        json_t *t = json_is_object(attrs) ? pool_attributes(attrs) : json_object();
        json_object_set_new(t, "pools", tree_pools(pools));
        json_object_set_new(trees, tree, t);
    }
    return trees;
}

/* One recorded job's contribution: its duration in the window, or <= 0 for none; *start: its
 * recorded start. */
static int64_t job_window_ms(const struct replay *r, const struct replay_job *job, bool *counts,
                             bool *done, int64_t *start_ms)
{
    const struct ps_event_job *end = job->end != NO_JOB ? &r->rec->jobs[job->end] : NULL;
    /* a job still running at until has only its job_started row: its timestamp is the start */
    int64_t start = end ? end->start_time : r->rec->jobs[job->start].timestamp;
    *start_ms = start;
    *done = end && end->kind == PS_EVENT_JOB_COMPLETED;
    *counts = !end || end->kind != PS_EVENT_JOB_ABORTED;
    if (!*counts)
        return 0;
    int64_t finish = end ? end->finish_time : r->o->until_ms;
    if (finish > r->o->until_ms)
        finish = r->o->until_ms;
    if (start < r->o->since_ms)
        start = r->o->since_ms;
    return finish - start;
}

static json_t *op_spec(const struct replay *r, const json_t *op)
{
    const json_t *spec = json_object_get(op, "spec");
    json_t *s = json_is_object(spec) ? json_deep_copy(spec) : json_object();
    json_object_del(s, "tasks");
    const json_t *per_tree = json_object_get(op, "scheduling_info_per_tree");
    if (!json_object_get(s, "pool_trees") && !json_object_get(s, "tentative_pool_trees") &&
        json_object_size(per_tree) > 0) {
        json_t *trees = json_array();   /* the trees it ran in, whatever the default tree */
        const char *tree;
        json_t *v;
        json_object_foreach((json_t *)per_tree, tree, v)
            json_array_append_new(trees, json_string(tree));
        json_object_set_new(s, "pool_trees", trees);
    }
    const json_t *p = json_object_get(r->op_params, sval(op, "operation_id"));
    if (p)
        json_object_set(s, "scheduling_options_per_pool_tree",
                        json_object_get(p, "scheduling_options_per_pool_tree"));
    return s;
}

#define NO_NAME (PS_EVENT_NONE - 1)   /* the task name "" when no job row has it */

/* A task name as the key of a job's task (a job without task_name counts as ""); NULL: none. */
static uint32_t task_key(const struct replay *r, const char *name)
{
    if (!name)
        return PS_EVENT_NONE;
    uint32_t k = ps_event_names_find(&r->rec->task_names, name);
    return k == PS_EVENT_NONE && !*name ? NO_NAME : k;
}

/* A job with time in the window: its task (index into the operation's tasks), recorded start,
 * row order and time in the window. */
struct job_time {
    size_t task, seq;
    int64_t start_ms, ms;
};

/* By task, then recorded start, then row order. */
static int cmp_job_time(const void *a, const void *b)
{
    const struct job_time *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    if (x->start_ms != y->start_ms)
        return x->start_ms < y->start_ms ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sums the jobs of one operation per task name: acc[i] for the first task i of keys[] (the
 * operation's task names, n of them) with the job's name; times[] (*time_count of them) gets
 * each job with time in the window, sorted by task and recorded start. An operation known from
 * state rows at state_ms (else INT64_MIN) counts as started the jobs completed after them: those
 * before are in its tasks' completed. */
static void add_jobs(const struct replay *r, const size_t *jobs, size_t job_count,
                     const uint32_t *keys, size_t n, int64_t state_ms, struct task_acc *acc,
                     struct job_time *times, size_t *time_count)
{
    uint32_t unnamed = task_key(r, "");
    for (size_t j = 0; j < job_count; j++) {
        const struct replay_job *job = &r->jobs[jobs[j]];
        uint32_t key = r->rec->jobs[job->start].task;
        key = key == PS_EVENT_NONE ? unnamed : key;
        size_t i = 0;
        while (i < n && keys[i] != key)
            i++;
        if (i == n)
            continue;
        bool counts, done;
        int64_t start;
        int64_t ms = job_window_ms(r, job, &counts, &done, &start);
        if (counts && (job->end == NO_JOB || (done && r->rec->jobs[job->end].timestamp > state_ms)))
            acc[i].started++;
        if (ms > 0) {
            acc[i].n++;
            acc[i].ms += ms;
            times[(*time_count)++] = (struct job_time){i, j, start, ms};
        }
    }
    qsort(times, *time_count, sizeof *times, cmp_job_time);
}

/* job_durations of task i: its jobs' times in the window in recorded start order (times[] as
 * add_jobs sorts them); NULL when it has none. */
static json_t *job_durations(const struct job_time *times, size_t time_count, size_t i)
{
    json_t *list = json_array();
    for (size_t k = 0; k < time_count; k++)
        if (times[k].task == i)
            json_array_append_new(list, json_integer((json_int_t)times[k].ms));
    if (json_array_size(list) == 0) {
        json_decref(list);
        return NULL;
    }
    return list;
}

/* The scenario tasks of op: its recorded tasks, in their order, each with the jobs that count
 * (completed, failed, running at until: their time in the window, as job_durations in recorded
 * start order; never started by until: the mean of the others, or when none ran, the mean of the
 * completed jobs of tasks of that name in every operation) and their mean duration. NULL when
 * nothing counts. */
static json_t *op_tasks(const struct replay *r, const json_t *op, const size_t *jobs,
                        size_t job_count)
{
    const json_t *list = json_object_get(op, "tasks");
    size_t n = json_array_size(list);
    uint32_t *keys = calloc(n ? n : 1, sizeof *keys);
    struct task_acc *acc = calloc(n ? n : 1, sizeof *acc);
    struct job_time *times = malloc((job_count ? job_count : 1) * sizeof *times);
    size_t time_count = 0;
    json_t *tasks = keys && acc && times ? json_array() : NULL;
    for (size_t i = 0; keys && i < n; i++)
        keys[i] = task_key(r, sval(json_array_get(list, i), "name"));
    const json_t *state = json_object_get(op, "_state_ms");
    if (tasks)
        add_jobs(r, jobs, job_count, keys, n, state ? json_integer_value(state) : INT64_MIN,
                 acc, times, &time_count);
    bool ended = json_object_get(r->op_ended, sval(op, "operation_id")) != NULL;
    for (size_t i = 0; tasks && i < n; i++) {
        const json_t *t = json_array_get(list, i);
        const char *name = sval(t, "name");
        size_t first = 0;   /* jobs count for the first task of a name */
        while (first < i && keys[first] != keys[i])
            first++;
        const struct task_acc *a = &acc[first];
        int64_t unstarted = ival(t, "job_count") - a->started - (state ? ival(t, "completed") : 0);
        unstarted = !ended && unstarted > 0 ? unstarted : 0;
        int64_t duration = a->n > 0 ? (a->ms + a->n / 2) / a->n : 0;
        uint32_t m = ps_event_names_find(&r->rec->task_names, name);
        if (a->n == 0 && unstarted > 0)   /* no job of it ran: the task name's mean elsewhere */
            duration = m != PS_EVENT_NONE && r->task_means[m].n > 0
                           ? r->task_means[m].ms / r->task_means[m].n : 0;
        if (!name || a->n + unstarted == 0 || duration <= 0 ||
            !json_is_object(json_object_get(t, "resource_limits")))
            continue;
        json_t *task = json_pack("{s:s, s:I, s:I, s:O}", "name", name, "job_count",
                                 (json_int_t)(a->n + unstarted), "duration", (json_int_t)duration,
                                 "resources", json_object_get(t, "resource_limits"));
        json_t *durations = job_durations(times, time_count, first);
        if (durations)
            json_object_set_new(task, "job_durations", durations);
        json_array_append_new(tasks, task);
    }
    free(keys);
    free(acc);
    free(times);
    if (json_array_size(tasks) == 0) {
        json_decref(tasks);
        return NULL;
    }
    return tasks;
}

/* The scenario operation of op, or NULL when it has no work in the window. */
static json_t *operation(const struct replay *r, const json_t *op, const size_t *jobs,
                         size_t job_count)
{
    json_t *tasks = op_tasks(r, op, jobs, job_count);
    if (!tasks)
        return NULL;
    int64_t ts = ival(op, "_time");
    bool before = ts <= r->o->since_ms;
    const char *user = sval(op, "authenticated_user");
    return json_pack("{s:s, s:I, s:s, s:o, s:o}", "id", sval(op, "operation_id"), "start_time",
                     (json_int_t)(before ? 0 : ts - r->o->since_ms), "user",
                     user && *user ? user : "root", "spec", op_spec(r, op), "tasks", tasks);
}

/* r->task_means from the completed jobs of every operation */
static void task_means(struct replay *r)
{
    for (size_t i = 0; i < r->job_count; i++) {
        const struct replay_job *job = &r->jobs[i];
        const struct ps_event_job *end = job->end != NO_JOB ? &r->rec->jobs[job->end] : NULL;
        uint32_t task = r->rec->jobs[job->start].task;
        if (task == PS_EVENT_NONE || !end || end->kind != PS_EVENT_JOB_COMPLETED)
            continue;
        r->task_means[task].n++;
        r->task_means[task].ms += end->finish_time - end->start_time;
    }
}

/* The jobs of each operation of r->ops, in row order: jobs[first[k] .. first[k + 1]). */
static int jobs_per_op(const struct replay *r, size_t **first, size_t **jobs)
{
    size_t ops = json_array_size(r->ops), n_ids = r->rec->operation_ids.count;
    size_t *op_of = malloc((n_ids ? n_ids : 1) * sizeof *op_of);   /* operation id -> op */
    *first = calloc(ops + 2, sizeof **first);
    *jobs = malloc((r->job_count ? r->job_count : 1) * sizeof **jobs);
    if (!op_of || !*first || !*jobs) {
        free(op_of);
        return PS_ENOMEM;
    }
    for (size_t i = 0; i < n_ids; i++) {
        const json_t *idx = json_object_get(r->op_index, r->rec->operation_ids.names[i]);
        op_of[i] = idx ? (size_t)json_integer_value(idx) : NO_JOB;
    }
    size_t *count = *first + 2;   /* counted at [k + 2], then moved to [k + 1] as they fill */
    for (size_t i = 0; i < r->job_count; i++) {
        size_t op = op_of[r->rec->jobs[r->jobs[i].start].operation];
        if (op != NO_JOB)
            count[op]++;
    }
    for (size_t k = 1; k <= ops; k++)
        (*first)[k + 1] += (*first)[k];
    for (size_t i = 0; i < r->job_count; i++) {
        size_t op = op_of[r->rec->jobs[r->jobs[i].start].operation];
        if (op != NO_JOB)
            (*jobs)[(*first)[op + 1]++] = i;
    }
    free(op_of);
    return 0;
}

static json_t *operations(struct replay *r)
{
    task_means(r);
    size_t *first = NULL, *jobs = NULL;
    if (jobs_per_op(r, &first, &jobs) != 0) {
        free(first);
        free(jobs);
        return NULL;
    }
    json_t *list = json_array(), *kept = json_object();
    size_t i;
    json_t *op;
    json_array_foreach(r->ops, i, op) {
        json_t *o = operation(r, op, jobs + first[i], first[i + 1] - first[i]);
        if (!o)
            continue;
        json_object_set_new(kept, sval(o, "id"), json_integer(ival(o, "start_time")));
        json_array_append_new(list, o);
    }
    free(first);
    free(jobs);
    /* update_operation events only for operations kept, and not before their submission */
    json_t *ev;
    json_array_foreach(r->events, i, ev) {
        json_t *e = json_array_get(ev, 2);
        if (strcmp(sval(e, "type"), "update_operation") != 0)
            continue;
        json_t *start = json_object_get(kept, sval(e, "operation"));
        if (!start || json_integer_value(start) > ival(e, "time"))
            json_object_set_new(e, "type", json_string("-"));
    }
    json_decref(kept);
    return list;
}

static int cmp_event(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    for (size_t k = 0; k < 2; k++) {
        json_int_t p = json_integer_value(json_array_get(x, k));
        json_int_t q = json_integer_value(json_array_get(y, k));
        if (p != q)
            return p < q ? -1 : 1;
    }
    return 0;
}

static json_t *sorted_events(const struct replay *r)
{
    size_t n = json_array_size(r->events);
    json_t **v = malloc((n ? n : 1) * sizeof *v);
    json_t *list = json_array();
    if (!v)
        return list;
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(r->events, i);
    qsort(v, n, sizeof *v, cmp_event);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v[i], 2);
        if (strcmp(sval(e, "type"), "-") != 0)
            json_array_append(list, e);
    }
    free(v);
    return list;
}

static void replay_release(struct replay *r)
{
    json_t *all[] = {r->groups, r->node_index, r->node_tags, r->node_limits, r->base_pools, r->cur_pools,
                     r->base_trees, r->cur_trees, r->rec_default, r->ops, r->op_index,
                     r->op_ended, r->events, r->op_params};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        json_decref(all[i]);
    free(r->jobs);
    free(r->job_index);
    free(r->task_means);
}

/* Every row of the record in order: job rows (structs) and the others (JSON) merged. */
static int read_rows(struct replay *r)
{
    const struct ps_event_record *rec = r->rec;
    size_t j = 0, k = 0;
    int rc = 0;
    while (rc == 0 && (j < rec->job_count || k < rec->other_count)) {
        bool other = k < rec->other_count &&
                     (j == rec->job_count || rec->others[k].row < rec->jobs[j].row);
        if (other) {
            rc = read_row(r, rec->others[k].row, rec->others[k].json);
            k++;
        } else {
            rc = job_row(r, &rec->jobs[j++]);
        }
    }
    return rc;
}

static int replay_init(struct replay *r, const struct ps_event_record *rec,
                       const struct ps_event_replay_options *opts, struct ps_error *err)
{
    size_t ids = rec->job_ids.count, tasks = rec->task_names.count;
    *r = (struct replay){.o = opts, .err = err, .rec = rec, .groups = json_array(),
                         .node_index = json_object(), .node_tags = json_object(),
                         .node_limits = json_object(),
                         .ops = json_array(), .op_index = json_object(), .op_ended = json_object(),
                         .events = json_array(), .op_params = json_object()};
    r->jobs = malloc((rec->job_count ? rec->job_count : 1) * sizeof *r->jobs);
    r->job_index = malloc((ids ? ids : 1) * sizeof *r->job_index);
    r->task_means = calloc(tasks ? tasks : 1, sizeof *r->task_means);
    if (!r->jobs || !r->job_index || !r->task_means || !r->groups || !r->node_index ||
        !r->node_tags || !r->node_limits || !r->ops || !r->op_index || !r->op_ended || !r->events || !r->op_params)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (size_t i = 0; i < ids; i++)
        r->job_index[i] = NO_JOB;
    return 0;
}

/* The scenario of r (read), its checks passed. */
static json_t *scenario(struct replay *r)
{
    const struct ps_event_replay_options *opts = r->o;
    json_t *ops = operations(r);
    json_t *sc = json_pack("{s:I, s:I, s:I, s:o, s:o, s:o}", "heartbeat_period",
                           (json_int_t)opts->heartbeat_period_ms, "fair_share_update_period",
                           (json_int_t)opts->fair_share_update_period_ms, "duration",
                           (json_int_t)(opts->until_ms - opts->since_ms), "node_groups",
                           json_deep_copy(r->groups), "pool_trees", pool_trees(r), "operations",
                           ops);
    const char *rec_def = json_string_value(r->rec_default);
    if (sc && opts->default_tree)
        json_object_set_new(sc, "default_tree", json_string(opts->default_tree));
    else if (sc && rec_def && json_object_get(r->base_pools, rec_def))
        json_object_set_new(sc, "default_tree", json_string(rec_def));
    else if (sc && json_object_size(r->base_pools) > 0)
        json_object_set_new(sc, "default_tree",
                            json_string(json_object_iter_key(json_object_iter(r->base_pools))));
    json_t *ev = sorted_events(r);
    if (sc && json_array_size(ev) > 0)
        json_object_set(sc, "events", ev);
    json_decref(ev);
    return sc;
}

int ps_event_replay_scenario(const struct ps_event_record *rec,
                             const struct ps_event_replay_options *opts, json_t **out,
                             struct ps_error *err)
{
    *out = NULL;
    if (opts->until_ms <= opts->since_ms)
        return ps_error_set(err, PS_EINVAL, "until: must be after since (%lld), got %lld",
                            (long long)opts->since_ms, (long long)opts->until_ms);
    struct replay r;
    int rc = replay_init(&r, rec, opts, err);
    if (rc == 0)
        rc = read_rows(&r);
    if (rc == 0 && !r.base_pools)
        rc = ps_error_set(err, PS_EINVAL,
                          "the event log has no pools_info row at or before until (%lld): "
                          "nothing says what the pool trees were",
                          (long long)opts->until_ms);
    if (rc == 0 && opts->default_tree && !json_object_get(r.base_pools, opts->default_tree))
        rc = ps_error_set(err, PS_EINVAL, "default tree \"%s\": not in the event log's pools_info",
                          opts->default_tree);
    if (rc == 0 && !(*out = scenario(&r)))
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    replay_release(&r);
    return rc;
}

/* ---- proposed changes -------------------------------------------------------------------- */

static int bad_path(struct ps_error *err, const char *path, const char *why)
{
    return ps_error_set(err, PS_EINVAL, "%s: %s", path, why);
}

/* Drops the recorded events that set this key of this tree (pool NULL) or pool. */
static void drop_events(json_t *sc, const char *tree, const char *pool, const char *key)
{
    json_t *events = json_object_get(sc, "events");
    for (size_t i = json_array_size(events); i-- > 0;) {
        json_t *e = json_array_get(events, i);
        const char *type = sval(e, "type");
        bool match = strcmp(type, pool ? "set_pool_attribute" : "set_tree_attribute") == 0 &&
                     sval(e, "tree") && strcmp(sval(e, "tree"), tree) == 0 &&
                     strcmp(sval(e, "key"), key) == 0 &&
                     (!pool || (sval(e, "pool") && strcmp(sval(e, "pool"), pool) == 0));
        if (match)
            json_array_remove(events, i);
    }
}

static json_t *find_pool(json_t *tree, const char *name)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(tree, "pools"), i, p)
        if (strcmp(sval(p, "name"), name) == 0)
            return p;
    return NULL;
}

int ps_event_replay_apply(json_t *scenario, const char *path, const json_t *value,
                          struct ps_error *err)
{
    static const char trees_prefix[] = "//sys/pool_trees/", pools_prefix[] = "//sys/pools/";
    char tree_name[256], pool_name[256];
    const char *rest;
    if (strncmp(path, trees_prefix, sizeof trees_prefix - 1) == 0) {
        rest = path + sizeof trees_prefix - 1;
        size_t n = strcspn(rest, "/");
        if (n == 0 || n >= sizeof tree_name)
            return bad_path(err, path, "no pool tree named");
        memcpy(tree_name, rest, n);
        tree_name[n] = '\0';
        rest += n;
    } else if (strncmp(path, pools_prefix, sizeof pools_prefix - 1) == 0) {
        const char *def = sval(scenario, "default_tree");
        snprintf(tree_name, sizeof tree_name, "%s", def ? def : "");
        rest = path + sizeof pools_prefix - 2;
    } else {
        return bad_path(err, path, "must be //sys/pool_trees/<tree>[/<pool>...]/@<attribute>");
    }
    const char *at = strstr(rest, "/@");
    if (!at || !at[2] || strchr(at + 2, '/'))
        return bad_path(err, path, "must end in /@<attribute>");
    const char *key = at + 2;
    json_t *tree = json_object_get(json_object_get(scenario, "pool_trees"), tree_name);
    if (!tree)
        return bad_path(err, path, "no such pool tree in the recorded window");
    if (at == rest) {   /* a tree attribute */
        if (strcmp(key, "pools") == 0)
            return bad_path(err, path, "pools is not a tree attribute");
        if (value)
            json_object_set(tree, key, (json_t *)value);
        else
            json_object_del(tree, key);
        drop_events(scenario, tree_name, NULL, key);
        return 0;
    }
    const char *last = at;
    while (last > rest && last[-1] != '/')
        last--;
    size_t n = (size_t)(at - last);
    if (n == 0 || n >= sizeof pool_name)
        return bad_path(err, path, "no pool named");
    memcpy(pool_name, last, n);
    pool_name[n] = '\0';
    json_t *pool = find_pool(tree, pool_name);
    if (!pool)
        return bad_path(err, path, "no such pool in the recorded window");
    if (strcmp(key, "name") == 0 || strcmp(key, "parent") == 0)
        return bad_path(err, path, "pools are not renamed or moved by what-if");
    if (value)
        json_object_set(pool, key, (json_t *)value);
    else
        json_object_del(pool, key);
    drop_events(scenario, tree_name, pool_name, key);
    return 0;
}
