/* snapshot.c — parsing and checking a fair-share snapshot (snapshot.h).
 *
 * Three passes: read every pool, operation and node on its own (types, ranges, unknown keys);
 * resolve the names (parents, pools of operations, duplicates, cycles) and order the pools
 * parents-first; then sum the resources of the nodes for the tree and for each tag filter.
 * Everything is checked before anything is handed out, so a bad file yields only an error.
 */
#include "io/snapshot.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/formula.h"
#include "core/op_spec.h"
#include "core/pool_config.h"
#include "core/tree_config.h"
#include "io/json_value.h"
#include "io/jsonval.h"

#define MAX_ELEMENTS (INT_MAX / 8)
#define TIME_MAX_MS INT64_C(9007199254740992)   /* 2^53: exact as a double */


struct pool_src {
    const char *name;          /* borrowed from the document */
    const char *parent;        /* NULL: <Root> */
    int parent_src;            /* index in pools, -1 for <Root> */
    int elem;                  /* element index once ordered, -1 before */
    struct ps_fs_element_input in;
    struct ps_fs_pool_input pin;
    struct ps_formula *filter;
};

struct op_src {
    const char *id;
    const char *pool;
    int pool_src;              /* index in pools, -1 for <Root> */
    struct ps_fs_element_input in;
    struct ps_formula *filter;
};

struct ctx {
    json_t *doc;
    struct ps_error *err;
    struct ps_snapshot *snap;
    struct ps_formula *tree_filter;
    bool forbid_ops_in_root;
    json_t *nodes;             /* NULL when total_resources is given */
    struct pool_src *pools;
    size_t pool_n;
    struct op_src *ops;
    size_t op_n;
};

static int oom(struct ps_error *err)
{
    return ps_error_set(err, PS_ENOMEM, "out of memory reading the snapshot");
}

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

static int add_note(struct ctx *c, const char *text)
{
    struct ps_snapshot *snap = c->snap;
    char **notes = realloc(snap->notes, (size_t)(snap->note_count + 1) * sizeof *notes);
    if (!notes)
        return oom(c->err);
    snap->notes = notes;
    if (!(notes[snap->note_count] = dup_string(text)))
        return oom(c->err);
    snap->note_count++;
    return 0;
}

/* ---- small value readers ---------------------------------------------------------------- */

/* A resource map member; leaves *out alone when absent. */
static int read_resources(struct ctx *c, const json_t *obj, const char *path, const char *key,
                          int64_t missing, struct ps_resources *out, unsigned *set)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    char where[256];
    ps_jv_join(where, sizeof where, path, key);
    return ps_jv_resources(v, where, missing, out, set, c->err);
}

/* Reads a name-like string member that must be present and non-empty. */
static int read_required_name(struct ctx *c, const json_t *obj, const char *path,
                              const char *key, const char **out)
{
    bool present;
    int rc = ps_jv_string(obj, path, key, out, &present, c->err);
    if (rc)
        return rc;
    if (!present)
        return ps_error_set(c->err, PS_EINVAL, "%s: missing key \"%s\"", path, key);
    if (!(*out)[0])
        return ps_error_set(c->err, PS_EINVAL, "%s.%s: must not be empty", path, key);
    return 0;
}

/* ---- the schema's readers --------------------------------------------------------------- */

/* Rewrites an error of the attribute layer ("weight: must be ...") into the snapshot's path
 * form ("pools[0].weight: must be ..."). */
static int at_path(struct ctx *c, const char *path, int rc)
{
    if (rc == 0 || !c->err || rc == PS_ENOMEM)
        return rc;
    char msg[PS_ERROR_MSG_MAX];
    size_t n = strlen(path);
    if (n + 1 >= sizeof msg)
        return rc;
    memcpy(msg, path, n);
    msg[n] = '.';
    size_t len = strnlen(c->err->msg, sizeof c->err->msg);
    if (len > sizeof msg - n - 2)
        len = sizeof msg - n - 2;
    memcpy(msg + n + 1, c->err->msg, len);
    msg[n + 1 + len] = '\0';
    memcpy(c->err->msg, msg, sizeof msg);
    return rc;
}

/* obj as a value map without the keys listed in skip (snapshot state, not configuration). */
static int config_map(struct ctx *c, const json_t *obj, const char *const *skip,
                      struct ps_value *out)
{
    struct ps_value all;
    int rc = ps_json_to_value(obj, &all, c->err);
    if (rc)
        return rc;
    rc = ps_value_map_without(&all, skip, out);
    ps_value_release(&all);
    return rc ? oom(c->err) : 0;
}

/* A scheduling tag filter of the tree, a pool or an operation, already checked by the table;
 * "" is none. */
static int parse_filter(struct ctx *c, const char *path, const char *text,
                        struct ps_formula **out)
{
    *out = NULL;
    if (!text || !text[0])
        return 0;
    int rc = ps_formula_parse(text, out, c->err);
    if (rc)
        ps_error_prefix(c->err, "%s", path);
    return rc;
}

/* ---- tree options ----------------------------------------------------------------------- */

/* The tree's keys are the tree config's (tree_config.h), read by its table. */
static int parse_tree(struct ctx *c, const json_t *tree)
{
    static const char *const none[] = {NULL};
    struct ps_value doc;
    struct ps_tree_config cfg;
    int rc = ps_jv_expect_object(tree, "tree", c->err);
    if (rc || (rc = config_map(c, tree, none, &doc)))
        return rc;
    if (ps_tree_config_init(&cfg) != 0) {
        ps_value_release(&doc);
        return oom(c->err);
    }
    rc = ps_tree_config_apply(&cfg, &doc, c->err);
    if (rc == 0)
        rc = ps_tree_config_validate(&cfg, c->err);
    ps_value_release(&doc);
    if (rc == 0) {
        ps_tree_config_fs_options(&cfg, &c->snap->options);
        c->forbid_ops_in_root = cfg.forbid_immediate_operations_in_root;
        rc = parse_filter(c, "tree.nodes_filter", cfg.nodes_filter, &c->tree_filter);
    } else {
        at_path(c, "tree", rc);
    }
    ps_tree_config_release(&cfg);
    return rc;
}

/* ---- pools ------------------------------------------------------------------------------ */

/* A pool's name: an explicit pool's (ps_pool_name_check), or an ephemeral pool's
 * `<pool>$<user>` whose parts follow the same rule, as the service names them. */
static int check_pool_name(struct ctx *c, const char *path, const char *name)
{
    char key[96];
    snprintf(key, sizeof key, "%s.name", path);
    const char *dollar = strchr(name, PS_EPHEMERAL_DELIMITER);
    if (!dollar)
        return ps_pool_name_check(key, name, c->err);
    size_t n = (size_t)(dollar - name);
    char pool[PS_POOL_NAME_MAX + 2];
    if (n > PS_POOL_NAME_MAX)
        n = PS_POOL_NAME_MAX + 1;
    memcpy(pool, name, n);
    pool[n] = '\0';
    int rc = ps_pool_name_check(key, pool, c->err);
    if (rc == 0)
        rc = ps_pool_name_check(key, dollar + 1, c->err);
    return rc;
}

/* A pool: name, parent and the integral state (accumulated_resource_volume,
 * last_integral_share_ratio) are the snapshot's; every other key is the pool config's
 * (pool_config.h), read by its table and turned into engine input as the service does. */
static int parse_pool(struct ctx *c, const json_t *obj, size_t index, struct pool_src *p)
{
    static const char *const state_keys[] = {"name", "parent", "accumulated_resource_volume",
                                             "last_integral_share_ratio", NULL};
    struct ps_error *err = c->err;
    char path[64];
    ps_jv_index(path, sizeof path, "pools", index);
    int rc;
    if ((rc = ps_jv_expect_object(obj, path, err)) ||
        (rc = read_required_name(c, obj, path, "name", &p->name)))
        return rc;
    if (strcmp(p->name, PS_SNAPSHOT_ROOT_NAME) == 0)
        return ps_error_set(err, PS_EINVAL, "%s.name: \"<Root>\" is the implicit root pool and "
                            "cannot be defined", path);
    if ((rc = check_pool_name(c, path, p->name)) ||
        (rc = ps_jv_string(obj, path, "parent", &p->parent, NULL, err)))
        return rc;
    if (p->parent && strcmp(p->parent, PS_SNAPSHOT_ROOT_NAME) == 0)
        p->parent = NULL;

    ps_fs_element_input_init(&p->in, PS_ELEM_POOL, -1, NULL);
    ps_fs_pool_input_init(&p->pin);
    if ((rc = ps_jv_double(obj, path, "last_integral_share_ratio", 0.0, 1.0,
                           "a number from 0 to 1", &p->pin.last_integral_share_ratio, NULL, err)))
        return rc;
    json_t *v;
    if ((v = json_object_get(obj, "accumulated_resource_volume"))) {
        char where[256];
        ps_jv_join(where, sizeof where, path, "accumulated_resource_volume");
        if ((rc = ps_jv_volume(v, where, &p->pin.accumulated_volume, err)))
            return rc;
    }
    struct ps_value doc;
    struct ps_pool_config cfg;
    if ((rc = config_map(c, obj, state_keys, &doc)))
        return rc;
    if (ps_pool_config_init(&cfg) != 0) {
        ps_value_release(&doc);
        return oom(err);
    }
    rc = ps_pool_config_apply(&cfg, &doc, err);
    if (rc == 0)   /* a snapshot holds settings only: a misspelt one is an error */
        rc = ps_attr_refuse_custom(&ps_pool_config_table, &cfg, err);
    if (rc == 0)
        rc = ps_pool_config_validate(&cfg, err);
    ps_value_release(&doc);
    if (rc == 0) {
        ps_pool_config_fs_input(&cfg, &p->in, &p->pin);
        char where[256];
        ps_jv_join(where, sizeof where, path, "scheduling_tag_filter");
        rc = parse_filter(c, where, cfg.scheduling_tag_filter, &p->filter);
    } else {
        at_path(c, path, rc);
    }
    ps_pool_config_release(&cfg);
    return rc;
}

/* Describes the cycle that pool `start` (which cannot reach <Root>) runs into. */
static int cycle_error(struct ctx *c, int start)
{
    int n = (int)c->pool_n;
    int *step = malloc((size_t)n * sizeof *step);
    if (!step)
        return oom(c->err);
    for (int i = 0; i < n; i++)
        step[i] = -1;
    int u = start, k = 0;
    while (step[u] < 0) {   /* every pool on the way has a parent pool: none reaches <Root> */
        step[u] = k++;
        u = c->pools[u].parent_src;
    }
    free(step);
    /* u is the first pool met twice: the cycle is u -> parent(u) -> ... -> u. */
    char text[PS_ERROR_MSG_MAX] = "";
    size_t used = 0;
    int v = u;
    do {
        char q[96];
        ps_jv_quote(q, sizeof q, c->pools[v].name);
        int w = snprintf(text + used, sizeof text - used, "%s -> ", q);
        if (w < 0 || (size_t)w >= sizeof text - used || used > 300) {
            snprintf(text + used, sizeof text - used, "... -> ");
            used = strlen(text);
            break;
        }
        used += (size_t)w;
        v = c->pools[v].parent_src;
    } while (v != u);
    char q[96];
    ps_jv_quote(q, sizeof q, c->pools[u].name);
    snprintf(text + used, sizeof text - used, "%s", q);
    char path[64];
    ps_jv_index(path, sizeof path, "pools", (size_t)u);
    return ps_error_set(c->err, PS_EINVAL, "%s.parent: parents form a cycle that never reaches "
                        "<Root>: %s", path, text);
}

/* Resolves parents and numbers the pools in preorder from <Root>: element 1 + k for the k-th
 * pool visited, children in list order. */
static int order_pools(struct ctx *c, json_t *by_name)
{
    int n = (int)c->pool_n;
    for (int i = 0; i < n; i++) {
        struct pool_src *p = &c->pools[i];
        p->parent_src = -1;
        p->elem = -1;
        if (!p->parent)
            continue;
        json_t *found = json_object_get(by_name, p->parent);
        if (!found) {
            char q[96], path[64];
            ps_jv_quote(q, sizeof q, p->parent);
            ps_jv_index(path, sizeof path, "pools", (size_t)i);
            return ps_error_set(c->err, PS_EINVAL, "%s.parent: no pool named %s", path, q);
        }
        p->parent_src = (int)json_integer_value(found);
    }
    /* Children of parent slot s (slot 0 is <Root>, slot i + 1 is pool i), in list order. */
    int *first = calloc((size_t)n + 2, sizeof *first);
    int *child = malloc(((size_t)n + 1) * sizeof *child);
    int *stack = malloc(((size_t)n + 1) * sizeof *stack);
    if (!first || !child || !stack) {
        free(first);
        free(child);
        free(stack);
        return oom(c->err);
    }
    for (int i = 0; i < n; i++)
        first[c->pools[i].parent_src + 2]++;
    for (int s = 0; s <= n; s++)
        first[s + 1] += first[s];
    for (int i = 0; i < n; i++)
        child[first[c->pools[i].parent_src + 1]++] = i;
    /* Now first[s] is the end of slot s's children; its start is first[s - 1] (0 for s = 0). */
    int top = 0, next_elem = 1;
    for (int k = first[0] - 1; k >= 0; k--)
        stack[top++] = child[k];
    while (top > 0) {
        int u = stack[--top];
        c->pools[u].elem = next_elem++;
        for (int k = first[u + 1] - 1; k >= first[u]; k--)
            stack[top++] = child[k];
    }
    free(first);
    free(child);
    free(stack);
    for (int i = 0; i < n; i++)
        if (c->pools[i].elem < 0)
            return cycle_error(c, i);
    return 0;
}

static int parse_pools(struct ctx *c, const json_t *list, json_t *by_name)
{
    int rc = ps_jv_expect_array(list, "pools", c->err);
    if (rc)
        return rc;
    c->pool_n = json_array_size(list);
    if (c->pool_n > MAX_ELEMENTS)
        return ps_error_set(c->err, PS_EINVAL, "pools: too many pools (%zu)", c->pool_n);
    c->pools = calloc(c->pool_n ? c->pool_n : 1, sizeof *c->pools);
    if (!c->pools)
        return oom(c->err);
    for (size_t i = 0; i < c->pool_n && !rc; i++) {
        struct pool_src *p = &c->pools[i];
        if ((rc = parse_pool(c, json_array_get(list, i), i, p)))
            break;
        json_t *prev = json_object_get(by_name, p->name);
        if (prev) {
            char q[96];
            ps_jv_quote(q, sizeof q, p->name);
            rc = ps_error_set(c->err, PS_EINVAL, "pools[%zu].name: duplicate pool name %s "
                              "(first at pools[%lld])", i, q, (long long)json_integer_value(prev));
        } else if (json_object_set_new(by_name, p->name, json_integer((json_int_t)i))) {
            rc = oom(c->err);
        }
    }
    if (!rc)
        rc = order_pools(c, by_name);
    return rc;
}

/* ---- operations ------------------------------------------------------------------------- */

/* An operation: id, pool, start_time, demand, usage and pending_job_count (alias
 * pending_allocation_count) are the snapshot's state; every other key is the operation spec's
 * (op_spec.h: weight, max_share_ratio, resource_limits, scheduling_tag_filter, is_gang, ...),
 * read by its table. A key neither knows is an error here (a snapshot is checked whole). */
static int parse_op(struct ctx *c, const json_t *obj, size_t index, struct op_src *op)
{
    static const char *const state_keys[] = {"id", "pool", "start_time", "demand", "usage",
                                             "pending_job_count", "pending_allocation_count",
                                             NULL};
    struct ps_error *err = c->err;
    char path[64];
    ps_jv_index(path, sizeof path, "operations", index);
    int rc;
    if ((rc = ps_jv_expect_object(obj, path, err)) ||
        (rc = read_required_name(c, obj, path, "id", &op->id)) ||
        (rc = read_required_name(c, obj, path, "pool", &op->pool)))
        return rc;
    ps_fs_element_input_init(&op->in, PS_ELEM_OPERATION, -1, NULL);
    if (json_object_get(obj, "pending_job_count") && json_object_get(obj, "pending_allocation_count"))
        return ps_error_set(err, PS_EINVAL, "%s.pending_job_count and pending_allocation_count: "
                            "aliases of one key (pending_job_count), give only one", path);
    if ((rc = ps_jv_int(obj, path, "start_time", 0, TIME_MAX_MS,
                        "a whole number of milliseconds from 0 to 2^53", &op->in.start_time_ms,
                        NULL, err)) ||
        (rc = read_resources(c, obj, path, "demand", 0, &op->in.demand, NULL)) ||
        (rc = read_resources(c, obj, path, "usage", 0, &op->in.usage, NULL)) ||
        (rc = ps_jv_int(obj, path, "pending_job_count", 0, INT64_MAX, "a whole number >= 0",
                        &op->in.pending_job_count, NULL, err)) ||
        (rc = ps_jv_int(obj, path, "pending_allocation_count", 0, INT64_MAX,
                        "a whole number >= 0", &op->in.pending_job_count, NULL, err)))
        return rc;
    struct ps_value doc, unknown = ps_value_null();
    struct ps_operation_spec spec;
    if ((rc = config_map(c, obj, state_keys, &doc)))
        return rc;
    if (ps_operation_spec_init(&spec) != 0) {
        ps_value_release(&doc);
        return oom(err);
    }
    rc = ps_operation_spec_unrecognized(&doc, &unknown);
    if (rc == 0 && unknown.count > 0) {
        char q[96];
        ps_jv_quote(q, sizeof q, unknown.keys[0]);
        rc = ps_error_set(err, PS_EINVAL, "%s: unknown key %s of an operation", path, q);
    } else if (rc == 0) {
        rc = at_path(c, path, ps_operation_spec_apply(&spec, &doc, err));
    } else {
        rc = oom(err);
    }
    ps_value_release(&unknown);
    ps_value_release(&doc);
    if (rc == 0) {
        struct ps_tree_op_settings set;
        ps_operation_spec_settings(&spec, NULL, &set);
        op->in.weight_specified = set.weight.set;
        if (set.weight.set)
            op->in.weight = set.weight.value;
        if (set.max_share_ratio.set)
            op->in.max_share_ratio = set.max_share_ratio.value;
        op->in.resource_limits = ps_resources_opt_or_infinite(&set.resource_limits);
        op->in.is_gang = set.is_gang;
        op->in.strong_guarantee = set.strong_guarantee_resources;
        char where[256];
        ps_jv_join(where, sizeof where, path, "scheduling_tag_filter");
        rc = parse_filter(c, where, set.scheduling_tag_filter, &op->filter);
    }
    ps_operation_spec_release(&spec);
    return rc;
}

static int parse_ops(struct ctx *c, const json_t *list, json_t *pool_by_name)
{
    int rc = ps_jv_expect_array(list, "operations", c->err);
    if (rc)
        return rc;
    c->op_n = json_array_size(list);
    if (c->op_n > MAX_ELEMENTS)
        return ps_error_set(c->err, PS_EINVAL, "operations: too many operations (%zu)", c->op_n);
    c->ops = calloc(c->op_n ? c->op_n : 1, sizeof *c->ops);
    json_t *by_id = json_object();
    if (!c->ops || !by_id) {
        json_decref(by_id);
        return oom(c->err);
    }
    for (size_t i = 0; i < c->op_n && !rc; i++) {
        struct op_src *op = &c->ops[i];
        if ((rc = parse_op(c, json_array_get(list, i), i, op)))
            break;
        char q[96];
        json_t *prev = json_object_get(by_id, op->id);
        if (prev) {
            ps_jv_quote(q, sizeof q, op->id);
            rc = ps_error_set(c->err, PS_EINVAL, "operations[%zu].id: duplicate operation id %s "
                              "(first at operations[%lld])", i, q,
                              (long long)json_integer_value(prev));
            break;
        }
        if (json_object_set_new(by_id, op->id, json_integer((json_int_t)i))) {
            rc = oom(c->err);
            break;
        }
        op->pool_src = -1;
        if (strcmp(op->pool, PS_SNAPSHOT_ROOT_NAME) == 0) {
            if (c->forbid_ops_in_root)
                rc = ps_error_set(c->err, PS_EINVAL, "operations[%zu].pool: an operation cannot "
                                  "run in <Root> (tree.forbid_immediate_operations_in_root is "
                                  "true)", i);
            continue;
        }
        json_t *found = json_object_get(pool_by_name, op->pool);
        if (!found) {
            ps_jv_quote(q, sizeof q, op->pool);
            rc = ps_error_set(c->err, PS_EINVAL, "operations[%zu].pool: no pool named %s", i, q);
            break;
        }
        op->pool_src = (int)json_integer_value(found);
    }
    json_decref(by_id);
    return rc;
}

/* ---- nodes and filters ------------------------------------------------------------------ */

struct filter_group {
    const struct ps_formula *filter;   /* the first of the group's equal formulas */
    struct ps_resources sum;
};

static int add_checked(struct ctx *c, struct ps_resources *sum, const struct ps_resources *add)
{
    for (int i = 0; i < PS_RES_COUNT; i++) {
        if (sum->v[i] > PS_RES_INFINITE - 1 - add->v[i])
            return ps_error_set(c->err, PS_EINVAL, "nodes: the sum of resource_limits.%s over "
                                "the nodes is too large", ps_resource_name(i));
        sum->v[i] += add->v[i];
    }
    return 0;
}

static int compare_filters(const void *a, const void *b)
{
    const struct ps_formula *fa = *(const struct ps_formula *const *)a;
    const struct ps_formula *fb = *(const struct ps_formula *const *)b;
    return strcmp(ps_formula_text(fa), ps_formula_text(fb));
}

/* The element filters, one per distinct text; elem_group[e] is element e's group or -1. */
static int group_filters(struct ctx *c, struct ps_formula **filters, int count,
                         struct filter_group **groups_out, int *group_count, int *elem_group)
{
    const struct ps_formula **sorted = malloc(((size_t)count + 1) * sizeof *sorted);
    struct filter_group *groups = calloc((size_t)count + 1, sizeof *groups);
    if (!sorted || !groups) {
        free(sorted);
        free(groups);
        return oom(c->err);
    }
    int n = 0, g = 0;
    for (int e = 0; e < count; e++)
        if (filters[e] && !ps_formula_is_empty(filters[e]))
            sorted[n++] = filters[e];
    qsort(sorted, (size_t)n, sizeof *sorted, compare_filters);
    for (int i = 0; i < n; i++)
        if (g == 0 || compare_filters(&groups[g - 1].filter, &sorted[i]) != 0)
            groups[g++].filter = sorted[i];
    for (int e = 0; e < count; e++) {
        elem_group[e] = -1;
        if (!filters[e] || ps_formula_is_empty(filters[e]))
            continue;
        int lo = 0, hi = g - 1;   /* binary search by text: the groups are sorted */
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            int cmp = strcmp(ps_formula_text(groups[mid].filter), ps_formula_text(filters[e]));
            if (cmp == 0) {
                elem_group[e] = mid;
                break;
            }
            if (cmp < 0)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
    }
    free(sorted);
    *groups_out = groups;
    *group_count = g;
    return 0;
}

static int parse_node(struct ctx *c, const json_t *obj, size_t index, json_t *by_id,
                      struct ps_resources *res, const char ***tags, size_t *tags_cap,
                      int *tag_count)
{
    static const char *const keys[] = {"id", "resource_limits", "tags", NULL};
    char path[64];
    ps_jv_index(path, sizeof path, "nodes", index);
    const char *id;
    int rc;
    if ((rc = ps_jv_expect_object(obj, path, c->err)) ||
        (rc = ps_jv_check_keys(obj, path, keys, c->err)) ||
        (rc = read_required_name(c, obj, path, "id", &id)))
        return rc;
    json_t *prev = json_object_get(by_id, id);
    if (prev) {
        char q[96];
        ps_jv_quote(q, sizeof q, id);
        return ps_error_set(c->err, PS_EINVAL, "%s.id: duplicate node id %s (first at "
                            "nodes[%lld])", path, q, (long long)json_integer_value(prev));
    }
    if (json_object_set_new(by_id, id, json_integer((json_int_t)index)))
        return oom(c->err);
    *res = ps_resources_zero();
    if ((rc = read_resources(c, obj, path, "resource_limits", 0, res, NULL)))
        return rc;
    *tag_count = 0;
    json_t *list = json_object_get(obj, "tags");
    if (!list)
        return 0;
    char where[256];
    ps_jv_join(where, sizeof where, path, "tags");
    if ((rc = ps_jv_expect_array(list, where, c->err)))
        return rc;
    size_t n = json_array_size(list);
    if (n > *tags_cap) {
        const char **grown = realloc(*tags, n * sizeof *grown);
        if (!grown)
            return oom(c->err);
        *tags = grown;
        *tags_cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(list, i);
        if (!json_is_string(t)) {
            char at[256], got[96];
            ps_jv_index(at, sizeof at, where, i);
            ps_jv_describe(t, got, sizeof got);
            return ps_error_set(c->err, PS_EINVAL, "%s: must be a string, got %s", at, got);
        }
        (*tags)[i] = json_string_value(t);
    }
    *tag_count = (int)n;
    return 0;
}

/* Sums the nodes into the total and into each element's filter_limits. */
static int apply_nodes(struct ctx *c, struct ps_formula **filters)
{
    struct ps_snapshot *snap = c->snap;
    int rc = ps_jv_expect_array(c->nodes, "nodes", c->err);
    if (rc)
        return rc;
    struct filter_group *groups = NULL;
    int group_count = 0;
    int *elem_group = malloc((size_t)snap->count * sizeof *elem_group);
    json_t *by_id = json_object();
    const char **tags = NULL;
    size_t tags_cap = 0;
    if (!elem_group || !by_id) {
        rc = oom(c->err);
        goto done;
    }
    if ((rc = group_filters(c, filters, snap->count, &groups, &group_count, elem_group)))
        goto done;
    struct ps_resources total = ps_resources_zero();
    size_t n = json_array_size(c->nodes);
    for (size_t i = 0; i < n; i++) {
        struct ps_resources res;
        int tag_count;
        if ((rc = parse_node(c, json_array_get(c->nodes, i), i, by_id, &res, &tags, &tags_cap,
                             &tag_count)))
            goto done;
        if (!ps_formula_eval(c->tree_filter, tags, tag_count))
            continue;
        snap->matched_node_count++;
        if ((rc = add_checked(c, &total, &res)))
            goto done;
        for (int g = 0; g < group_count; g++)
            if (ps_formula_eval(groups[g].filter, tags, tag_count) &&
                (rc = add_checked(c, &groups[g].sum, &res)))
                goto done;
    }
    snap->node_count = (int)n;
    snap->input.total = total;
    for (int e = 0; e < snap->count; e++)
        if (elem_group[e] >= 0)
            snap->elems[e].in.filter_limits = groups[elem_group[e]].sum;
done:
    free(groups);
    free(elem_group);
    free(tags);
    json_decref(by_id);
    return rc;
}

/* With total_resources there are no nodes to filter: say which filters cannot apply. */
static int note_unused_filters(struct ctx *c, struct ps_formula **filters)
{
    char text[PS_ERROR_MSG_MAX];
    char q[96];
    if (c->tree_filter && !ps_formula_is_empty(c->tree_filter)) {
        ps_jv_quote(q, sizeof q, ps_formula_text(c->tree_filter));
        snprintf(text, sizeof text, "tree.nodes_filter %s is not applied: the snapshot gives "
                 "total_resources, not nodes", q);
        int rc = add_note(c, text);
        if (rc)
            return rc;
    }
    for (int e = 0; e < c->snap->count; e++) {
        if (!filters[e] || ps_formula_is_empty(filters[e]))
            continue;
        const struct ps_fs_element_input *in = &c->snap->elems[e].in;
        char name[96];
        ps_jv_quote(name, sizeof name, in->name);
        ps_jv_quote(q, sizeof q, ps_formula_text(filters[e]));
        snprintf(text, sizeof text, "scheduling_tag_filter %s of %s %s is not applied: the "
                 "snapshot gives total_resources, not nodes", q,
                 in->kind == PS_ELEM_OPERATION ? "operation" : "pool", name);
        int rc = add_note(c, text);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- building the element array --------------------------------------------------------- */

static int build_elements(struct ctx *c, struct ps_formula **filters)
{
    struct ps_snapshot *snap = c->snap;
    for (int e = 0; e < snap->count; e++)
        snap->source_index[e] = -1;
    char *root_name = dup_string(PS_SNAPSHOT_ROOT_NAME);
    if (!root_name)
        return oom(c->err);
    ps_fs_element_input_init(&snap->elems[0].in, PS_ELEM_ROOT, -1, root_name);
    snap->elems[0].in.pool = 0;
    ps_fs_pool_input_init(&snap->pools[0].in);
    for (size_t i = 0; i < c->pool_n; i++) {
        struct pool_src *p = &c->pools[i];
        struct ps_fs_element *e = &snap->elems[p->elem];
        e->in = p->in;
        e->in.parent = p->parent_src < 0 ? 0 : c->pools[p->parent_src].elem;
        e->in.pool = p->elem;
        snap->pools[p->elem].in = p->pin;
        if (!(e->in.name = dup_string(p->name)))
            return oom(c->err);
        snap->source_index[p->elem] = (int)i;
        filters[p->elem] = p->filter;
    }
    for (size_t i = 0; i < c->op_n; i++) {
        struct op_src *op = &c->ops[i];
        int index = snap->pool_count + (int)i;
        struct ps_fs_element *e = &snap->elems[index];
        e->in = op->in;
        e->in.parent = op->pool_src < 0 ? 0 : c->pools[op->pool_src].elem;
        if (!(e->in.name = dup_string(op->id)))
            return oom(c->err);
        snap->source_index[index] = (int)i;
        filters[index] = op->filter;
    }
    return 0;
}

/* ---- the document ----------------------------------------------------------------------- */

static int parse_document(struct ctx *c)
{
    static const char *const keys[] = {"total_resources", "nodes", "now", "previous_update_time",
                                       "tree", "pools", "operations", NULL};
    struct ps_snapshot *snap = c->snap;
    json_t *doc = c->doc;
    int rc;
    if (!json_is_object(doc)) {
        char got[96];
        ps_jv_describe(doc, got, sizeof got);
        return ps_error_set(c->err, PS_EINVAL, "snapshot: the top level must be a JSON object, "
                            "got %s", got);
    }
    if ((rc = ps_jv_check_keys(doc, "", keys, c->err)))
        return rc;

    json_t *total = json_object_get(doc, "total_resources");
    c->nodes = json_object_get(doc, "nodes");
    if (total && c->nodes)
        return ps_error_set(c->err, PS_EINVAL, "snapshot: give either total_resources or nodes, "
                            "not both");
    if (!total && !c->nodes)
        return ps_error_set(c->err, PS_EINVAL, "snapshot: missing key \"total_resources\" (or "
                            "\"nodes\"): the cluster's resources are needed");
    if (total && (rc = ps_jv_resources(total, "total_resources", 0, &snap->input.total, NULL,
                                       c->err)))
        return rc;

    bool has_prev = false;
    snap->input.now_ms = 0;
    if ((rc = ps_jv_int(doc, "", "now", 0, TIME_MAX_MS,
                        "a whole number of milliseconds from 0 to 2^53", &snap->input.now_ms,
                        NULL, c->err)) ||
        (rc = ps_jv_int(doc, "", "previous_update_time", 0, TIME_MAX_MS,
                        "a whole number of milliseconds from 0 to 2^53",
                        &snap->input.previous_update_time_ms, &has_prev, c->err)))
        return rc;
    snap->input.has_previous_update = has_prev;
    if (has_prev && snap->input.previous_update_time_ms > snap->input.now_ms)
        return ps_error_set(c->err, PS_EINVAL, "previous_update_time: must not be after now "
                            "(%lld), got %lld", (long long)snap->input.now_ms,
                            (long long)snap->input.previous_update_time_ms);

    ps_fs_options_init(&snap->options);
    c->forbid_ops_in_root = true;
    json_t *tree = json_object_get(doc, "tree");
    if (tree && (rc = parse_tree(c, tree)))
        return rc;

    json_t *pools = json_object_get(doc, "pools");
    json_t *pool_by_name = json_object();
    if (!pool_by_name)
        return oom(c->err);
    if (pools)
        rc = parse_pools(c, pools, pool_by_name);
    json_t *ops = json_object_get(doc, "operations");
    if (!rc && ops)
        rc = parse_ops(c, ops, pool_by_name);
    json_decref(pool_by_name);
    if (rc)
        return rc;

    snap->pool_count = 1 + (int)c->pool_n;
    snap->count = snap->pool_count + (int)c->op_n;
    snap->elems = calloc((size_t)snap->count, sizeof *snap->elems);
    snap->pools = calloc((size_t)snap->pool_count, sizeof *snap->pools);
    snap->source_index = calloc((size_t)snap->count, sizeof *snap->source_index);
    struct ps_formula **filters = calloc((size_t)snap->count, sizeof *filters);
    if (!snap->elems || !snap->pools || !snap->source_index || !filters) {
        free(filters);
        return oom(c->err);
    }
    rc = build_elements(c, filters);
    if (!rc)
        rc = c->nodes ? apply_nodes(c, filters) : note_unused_filters(c, filters);
    free(filters);   /* the formulas themselves belong to c->pools and c->ops */
    return rc;
}

static void ctx_release(struct ctx *c)
{
    for (size_t i = 0; c->pools && i < c->pool_n; i++)
        ps_formula_free(c->pools[i].filter);
    for (size_t i = 0; c->ops && i < c->op_n; i++)
        ps_formula_free(c->ops[i].filter);
    free(c->pools);
    free(c->ops);
    ps_formula_free(c->tree_filter);
    json_decref(c->doc);
}

int ps_snapshot_parse(const char *text, size_t len, struct ps_snapshot **out,
                      struct ps_error *err)
{
    *out = NULL;
    struct ps_snapshot *snap = calloc(1, sizeof *snap);
    if (!snap)
        return oom(err);
    struct ctx c = {.err = err, .snap = snap};
    json_error_t jerr;
    size_t blank = 0;
    while (blank < len && (text[blank] == ' ' || text[blank] == '\t' || text[blank] == '\n' ||
                           text[blank] == '\r'))
        blank++;
    c.doc = blank == len ? NULL
                         : json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    int rc;
    if (blank == len) {
        rc = ps_error_set(err, PS_EINVAL, "snapshot: the input is empty, expected a JSON object");
    } else if (!c.doc) {
        /* jansson's text is prose that may quote input bytes: keep it on one line. */
        char reason[sizeof jerr.text];
        size_t n = 0;
        for (const char *p = jerr.text; *p && n + 1 < sizeof reason; p++)
            reason[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
        reason[n] = '\0';
        rc = ps_error_set(err, PS_EINVAL, "snapshot: not valid JSON at line %d, column %d: %s",
                          jerr.line, jerr.column, reason);
    } else {
        rc = parse_document(&c);
    }
    ctx_release(&c);
    if (rc) {
        ps_snapshot_free(snap);
        return rc;
    }
    *out = snap;
    return 0;
}

void ps_snapshot_free(struct ps_snapshot *snap)
{
    if (!snap)
        return;
    for (int e = 0; snap->elems && e < snap->count; e++)
        free((char *)snap->elems[e].in.name);
    free(snap->elems);
    free(snap->pools);
    free(snap->source_index);
    for (int i = 0; i < snap->note_count; i++)
        free(snap->notes[i]);
    free(snap->notes);
    free(snap);
}
