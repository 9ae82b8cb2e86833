/* scenario.c — the scenario document, node groups and pool trees (operations: scenario_ops.c). */
#include "io/scenario.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_nodes.h"
#include "core/node_overdraft.h"
#include "io/jsonval.h"
#include "io/scenario_internal.h"

char *ps_scenario_strdup(const char *s, struct ps_error *err)
{
    char *copy = strdup(s);
    if (!copy)
        ps_error_set(err, PS_ENOMEM, "out of memory");
    return copy;
}

int ps_scenario_require(const json_t *obj, const char *path, const char *key, struct ps_error *err)
{
    if (json_object_get(obj, key))
        return 0;
    char where[PS_SCENARIO_PATH_MAX];
    ps_jv_join(where, sizeof where, path, key);
    return ps_error_set(err, PS_EINVAL, "%s: required key is missing", where);
}

int ps_scenario_name(const json_t *obj, const char *path, const char *key, bool required,
                     const char **out, struct ps_error *err)
{
    const char *s = NULL;
    int rc = required ? ps_scenario_require(obj, path, key, err) : 0;
    if (rc == 0)
        rc = ps_jv_string(obj, path, key, &s, NULL, err);
    if (rc != 0 || !s)
        return rc;
    if (s[0] == '\0') {
        char where[PS_SCENARIO_PATH_MAX];
        ps_jv_join(where, sizeof where, path, key);
        return ps_error_set(err, PS_EINVAL, "%s: must be a non-empty string", where);
    }
    *out = s;
    return 0;
}

struct named {
    const char *name;
    size_t index;
};

static int compare_named(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

bool ps_scenario_find_duplicate(const char *const *names, size_t n, size_t *first, size_t *second,
                                struct ps_error *err)
{
    if (n < 2)
        return false;
    struct named *sorted = malloc(n * sizeof *sorted);
    if (!sorted) {
        ps_error_set(err, PS_ENOMEM, "out of memory");
        *second = n;
        return true;
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = (struct named){names[i], i};
    qsort(sorted, n, sizeof *sorted, compare_named);
    bool found = false;
    for (size_t i = 0; i + 1 < n; i++) {
        /* sorted[i] starts a run of equal names when it differs from its predecessor; the run's
         * first two entries are the name's first two occurrences in list order. */
        if (i > 0 && strcmp(sorted[i - 1].name, sorted[i].name) == 0)
            continue;
        if (strcmp(sorted[i].name, sorted[i + 1].name) != 0)
            continue;
        if (!found || sorted[i + 1].index < *second) {
            *first = sorted[i].index;
            *second = sorted[i + 1].index;
            found = true;
        }
    }
    free(sorted);
    return found;
}

/* ---- node groups ------------------------------------------------------------------------ */

/* heartbeat_phase: an offset into the heartbeat period; -1 when not given */
static int parse_heartbeat_phase(const json_t *obj, const char *path, int64_t period_ms,
                                 int64_t *out, struct ps_error *err)
{
    char what[96];
    snprintf(what, sizeof what, "an integer (ms) from 0 to heartbeat_period - 1 (%lld)",
             (long long)(period_ms - 1));
    *out = -1;
    return ps_jv_int(obj, path, "heartbeat_phase", 0, period_ms - 1, what, out, NULL, err);
}

static int parse_node_group(json_t *obj, const char *path, size_t index, int64_t period_ms,
                            struct ps_scenario_node_group *g, struct ps_error *err)
{
    static const char *const keys[] = {"name", "count", "resource_limits", "tags",
                                       "always_abort_on_memory_reserve_overdraft",
                                       "disk_space_per_medium", "cpu_overdraft_timeout",
                                       "resource_adjustment_period", "fail_jobs_after",
                                       "job_duration_factor", "heartbeat_phase",
                                       "send_heartbeat_on_job_finished", NULL};
    char where[PS_SCENARIO_PATH_MAX];
    int rc = ps_jv_expect_object(obj, path, err);
    if (rc == 0)
        rc = ps_jv_check_keys(obj, path, keys, err);
    if (rc != 0)
        return rc;

    char def[32];
    snprintf(def, sizeof def, "group%zu", index);
    const char *name = def;
    if ((rc = ps_scenario_name(obj, path, "name", false, &name, err)) != 0)
        return rc;
    if (!(g->name = ps_scenario_strdup(name, err)))
        return PS_ENOMEM;

    if ((rc = ps_scenario_require(obj, path, "count", err)) != 0 ||
        (rc = ps_jv_int(obj, path, "count", 0, PS_SCENARIO_MAX_NODES,
                        "a whole number from 0 to 1000000", &g->count, NULL, err)) != 0)
        return rc;

    if ((rc = ps_scenario_require(obj, path, "resource_limits", err)) != 0)
        return rc;
    ps_jv_join(where, sizeof where, path, "resource_limits");
    if ((rc = ps_jv_resources(json_object_get(obj, "resource_limits"), where, PS_RES_INFINITE,
                              &g->resource_limits, NULL, err)) != 0)
        return rc;

    if ((rc = ps_jv_bool(obj, path, "always_abort_on_memory_reserve_overdraft",
                         &g->always_abort_on_memory_reserve_overdraft, NULL, err)) != 0)
        return rc;
    const json_t *media = json_object_get(obj, "disk_space_per_medium");
    if (media) {
        ps_jv_join(where, sizeof where, path, "disk_space_per_medium");
        if ((rc = ps_jv_expect_object(media, where, err)) != 0)
            return rc;
        size_t n = json_object_size(media);
        g->media = calloc(n ? n : 1, sizeof *g->media);
        g->medium_disk_space = calloc(n ? n : 1, sizeof *g->medium_disk_space);
        if (!g->media || !g->medium_disk_space)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        const char *medium;
        json_t *v;
        json_object_foreach((json_t *)media, medium, v) {
            size_t k = g->medium_count;
            if ((rc = ps_jv_int(media, where, medium, 0, INT64_MAX / 2,
                                "a non-negative integer (bytes)", &g->medium_disk_space[k], NULL,
                                err)) != 0)
                return rc;
            if (!(g->media[k] = ps_scenario_strdup(medium, err)))
                return PS_ENOMEM;
            g->medium_count++;
        }
    }
    g->cpu_overdraft_timeout_ms = PS_NODE_CPU_OVERDRAFT_TIMEOUT_MS;
    g->resource_adjustment_period_ms = PS_NODE_RESOURCE_ADJUSTMENT_PERIOD_MS;
    if ((rc = ps_jv_int(obj, path, "cpu_overdraft_timeout", 0, PS_SCENARIO_MAX_TIME_MS,
                        "a non-negative integer (ms)", &g->cpu_overdraft_timeout_ms, NULL,
                        err)) != 0 ||
        (rc = ps_jv_int(obj, path, "resource_adjustment_period", 1, PS_SCENARIO_MAX_TIME_MS,
                        "a positive integer (ms)", &g->resource_adjustment_period_ms, NULL,
                        err)) != 0)
        return rc;
    g->fail_jobs_after_ms = -1;
    if ((rc = ps_jv_int(obj, path, "fail_jobs_after", 0, PS_SCENARIO_MAX_TIME_MS,
                        "a non-negative integer (ms)", &g->fail_jobs_after_ms, NULL, err)) != 0)
        return rc;
    g->job_duration_factor = 1;
    if ((rc = ps_jv_double(obj, path, "job_duration_factor", 1e-3, 1e9,
                           "a number from 0.001 to 1e9", &g->job_duration_factor, NULL, err)) != 0)
        return rc;
    if ((rc = parse_heartbeat_phase(obj, path, period_ms, &g->heartbeat_phase_ms, err)) != 0 ||
        (rc = ps_jv_bool(obj, path, "send_heartbeat_on_job_finished",
                         &g->send_heartbeat_on_job_finished, NULL, err)) != 0)
        return rc;

    const json_t *tags = json_object_get(obj, "tags");
    if (!tags)
        return 0;
    ps_jv_join(where, sizeof where, path, "tags");
    return ps_scenario_tags(tags, where, &g->tags, &g->tag_count, err);
}

int ps_scenario_tags(const json_t *tags, const char *where, char ***out, size_t *count,
                     struct ps_error *err)
{
    int rc = ps_jv_expect_array(tags, where, err);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(tags);
    if (n == 0)
        return 0;
    *out = calloc(n, sizeof **out);
    if (!*out)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    *count = n;
    for (size_t i = 0; i < n; i++) {
        char tag_path[PS_SCENARIO_PATH_MAX];
        const json_t *tag = json_array_get(tags, i);
        ps_jv_index(tag_path, sizeof tag_path, where, i);
        if (!json_is_string(tag) || json_string_length(tag) == 0) {
            char got[96];
            ps_jv_describe(tag, got, sizeof got);
            return ps_error_set(err, PS_EINVAL, "%s: must be a non-empty string, got %s", tag_path,
                                got);
        }
        if (!((*out)[i] = ps_scenario_strdup(json_string_value(tag), err)))
            return PS_ENOMEM;
    }
    return 0;
}

/* The cluster's total of each finite resource must stay below PS_JV_RESOURCE_MAX, so that the
 * simulator's sums never overflow or reach "unlimited". */
static int check_totals(const struct ps_scenario *sc, struct ps_error *err)
{
    int64_t total[PS_RES_COUNT] = {0};
    for (size_t i = 0; i < sc->node_group_count; i++) {
        const struct ps_scenario_node_group *g = &sc->node_groups[i];
        for (int r = 0; r < PS_RES_COUNT; r++) {
            int64_t v = g->resource_limits.v[r];
            if (v == PS_RES_INFINITE || g->count == 0)
                continue;
            if (v > (PS_JV_RESOURCE_MAX - total[r]) / g->count)
                return ps_error_set(err, PS_EINVAL,
                                    "node_groups[%zu].resource_limits.%s: the cluster's total %s "
                                    "would exceed 1e18 stored units",
                                    i, ps_resource_name(r), ps_resource_name(r));
            total[r] += v * g->count;
        }
    }
    return 0;
}

static int parse_node_groups(json_t *list, struct ps_scenario *sc, struct ps_error *err)
{
    int rc = ps_jv_expect_array(list, "node_groups", err);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(list);
    if (n == 0)
        return 0;
    sc->node_groups = calloc(n, sizeof *sc->node_groups);
    if (!sc->node_groups)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    sc->node_group_count = n;
    for (size_t i = 0; i < n; i++) {
        char path[PS_SCENARIO_PATH_MAX];
        ps_jv_index(path, sizeof path, "node_groups", i);
        rc = parse_node_group(json_array_get(list, i), path, i, sc->heartbeat_period_ms,
                              &sc->node_groups[i], err);
        if (rc != 0)
            return rc;
        sc->node_count += sc->node_groups[i].count;
        if (sc->node_count > PS_SCENARIO_MAX_NODES)
            return ps_error_set(err, PS_EINVAL,
                                "%s.count: the node groups have more than %d nodes in total",
                                path, PS_SCENARIO_MAX_NODES);
    }
    const char **names = malloc(n * sizeof *names);
    if (!names)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        names[i] = sc->node_groups[i].name;
    size_t first, second;
    if (ps_scenario_find_duplicate(names, n, &first, &second, err))
        rc = second < n ? ps_error_set(err, PS_EINVAL,
                                       "node_groups[%zu].name: duplicate group name \"%s\" (also "
                                       "node_groups[%zu]); node ids <name>-<index> must be unique",
                                       second, names[second], first)
                        : PS_ENOMEM;
    free(names);
    return rc != 0 ? rc : check_totals(sc, err);
}

/* ---- pool trees ------------------------------------------------------------------------- */

static int parse_pool(json_t *obj, const char *path, struct ps_scenario_pool *pool,
                      struct ps_error *err)
{
    int rc = ps_jv_expect_object(obj, path, err);
    const char *name = NULL, *parent = PS_SCENARIO_ROOT_POOL;
    if (rc == 0)
        rc = ps_scenario_name(obj, path, "name", true, &name, err);
    if (rc != 0)
        return rc;
    if (strcmp(name, PS_SCENARIO_ROOT_POOL) == 0) {
        char where[PS_SCENARIO_PATH_MAX];
        ps_jv_join(where, sizeof where, path, "name");
        return ps_error_set(err, PS_EINVAL, "%s: \"%s\" is the name of the root, not a pool",
                            where, PS_SCENARIO_ROOT_POOL);
    }
    if ((rc = ps_scenario_name(obj, path, "parent", false, &parent, err)) != 0)
        return rc;
    if (!(pool->name = ps_scenario_strdup(name, err)) ||
        !(pool->parent = ps_scenario_strdup(parent, err)))
        return PS_ENOMEM;
    if (!(pool->attributes = json_copy(obj)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    json_object_del(pool->attributes, "name");
    json_object_del(pool->attributes, "parent");
    return 0;
}

/* The index of the pool named name in sorted (by name, names unique), or n when none. */
static size_t find_sorted(const struct named *sorted, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(sorted[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && strcmp(sorted[lo].name, name) == 0 ? sorted[lo].index : n;
}

/* Pool names are unique, every parent exists and the parents form a tree under <Root>. */
static int check_pools(struct ps_scenario_tree *tree, const char *path, struct ps_error *err)
{
    size_t n = tree->pool_count;
    if (n == 0)
        return 0;
    int rc = 0;
    const char **names = malloc(n * sizeof *names);
    struct named *sorted = malloc(n * sizeof *sorted);
    size_t *parent = malloc(n * sizeof *parent);   /* index of the parent pool, n for <Root> */
    unsigned char *state = calloc(n, 1);           /* 0 new, 1 on the current walk, 2 done */
    if (!names || !sorted || !parent || !state) {
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        names[i] = tree->pools[i].name;
    size_t first, second;
    if (ps_scenario_find_duplicate(names, n, &first, &second, err)) {
        rc = second < n ? ps_error_set(err, PS_EINVAL,
                                       "%s.pools[%zu].name: duplicate pool name \"%s\" (also pools[%zu])",
                                       path, second, names[second], first)
                        : PS_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = (struct named){names[i], i};
    qsort(sorted, n, sizeof *sorted, compare_named);
    for (size_t i = 0; i < n; i++) {
        const char *p = tree->pools[i].parent;
        if (strcmp(p, PS_SCENARIO_ROOT_POOL) == 0) {
            parent[i] = n;
            continue;
        }
        parent[i] = find_sorted(sorted, n, p);
        if (parent[i] == n) {
            rc = ps_error_set(err, PS_EINVAL,
                              "%s.pools[%zu].parent: no pool named \"%s\" in this tree", path, i, p);
            goto out;
        }
    }
    /* Walk up from each pool; meeting a pool of the current walk again is a cycle. */
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j < n && state[j] == 0) {
            state[j] = 1;
            j = parent[j];
        }
        if (j < n && state[j] == 1) {
            rc = ps_error_set(err, PS_EINVAL,
                              "%s.pools[%zu].parent: the ancestors of pool \"%s\" form a cycle "
                              "through \"%s\" and never reach %s",
                              path, i, names[i], names[j], PS_SCENARIO_ROOT_POOL);
            goto out;
        }
        for (j = i; j < n && state[j] == 1; j = parent[j])
            state[j] = 2;
    }
out:
    free(names);
    free(sorted);
    free(parent);
    free(state);
    return rc;
}

static int parse_tree(const char *name, json_t *obj, struct ps_scenario_tree *tree,
                      struct ps_error *err)
{
    char path[PS_SCENARIO_PATH_MAX], where[PS_SCENARIO_PATH_MAX];
    ps_jv_join(path, sizeof path, "pool_trees", name);
    if (!(tree->name = ps_scenario_strdup(name, err)))
        return PS_ENOMEM;
    if (name[0] == '\0')
        return ps_error_set(err, PS_EINVAL, "pool_trees: a tree name must not be empty");
    int rc = ps_jv_expect_object(obj, path, err);
    if (rc != 0)
        return rc;
    if (!(tree->attributes = json_copy(obj)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    json_object_del(tree->attributes, "pools");
    json_t *pools = json_object_get(obj, "pools");
    if (!pools)
        return 0;
    ps_jv_join(where, sizeof where, path, "pools");
    if ((rc = ps_jv_expect_array(pools, where, err)) != 0)
        return rc;
    size_t n = json_array_size(pools);
    if (n == 0)
        return 0;
    if (!(tree->pools = calloc(n, sizeof *tree->pools)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    tree->pool_count = n;
    for (size_t i = 0; i < n; i++) {
        char pool_path[PS_SCENARIO_PATH_MAX];
        ps_jv_index(pool_path, sizeof pool_path, where, i);
        if ((rc = parse_pool(json_array_get(pools, i), pool_path, &tree->pools[i], err)) != 0)
            return rc;
    }
    return check_pools(tree, path, err);
}

static int compare_trees(const void *a, const void *b)
{
    const struct ps_scenario_tree *x = a, *y = b;
    return strcmp(x->name, y->name);
}

static int parse_trees(json_t *obj, struct ps_scenario *sc, struct ps_error *err)
{
    int rc = ps_jv_expect_object(obj, "pool_trees", err);
    if (rc != 0)
        return rc;
    size_t n = json_object_size(obj);
    if (n == 0)
        return ps_error_set(err, PS_EINVAL, "pool_trees: must have at least one tree");
    if (!(sc->trees = calloc(n, sizeof *sc->trees)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    sc->tree_count = n;
    size_t i = 0;
    const char *name;
    json_t *tree;
    json_object_foreach(obj, name, tree) {
        if ((rc = parse_tree(name, tree, &sc->trees[i++], err)) != 0)
            return rc;
    }
    /* Keys of a JSON object are unique (the document is loaded with JSON_REJECT_DUPLICATES),
     * so names are a total order. */
    qsort(sc->trees, n, sizeof *sc->trees, compare_trees);
    return 0;
}

static int parse_default_tree(const json_t *root, struct ps_scenario *sc, struct ps_error *err)
{
    const char *name = NULL;
    int rc = ps_scenario_name(root, "", "default_tree", false, &name, err);
    if (rc != 0)
        return rc;
    if (!name) {
        if (sc->tree_count == 1) {
            sc->default_tree = sc->trees[0].name;
            return 0;
        }
        return ps_error_set(err, PS_EINVAL,
                            "default_tree: required key is missing (there are %zu pool trees)",
                            sc->tree_count);
    }
    const struct ps_scenario_tree *tree = ps_scenario_find_tree(sc, name);
    if (!tree)
        return ps_error_set(err, PS_EINVAL, "default_tree: no pool tree named \"%s\" in pool_trees",
                            name);
    sc->default_tree = tree->name;
    return 0;
}

/* ---- the document ----------------------------------------------------------------------- */

static int parse_document(json_t *root, struct ps_scenario *sc, struct ps_error *err)
{
    static const char *const keys[] = {"heartbeat_period", "fair_share_update_period", "duration",
                                       "node_groups", "default_tree", "pool_trees", "operations",
                                       "events", "seed", "controller_agent",
                                       "available_exec_nodes_check_period",
                                       "safe_scheduler_online_time",
                                       "resource_demand_sanity_check_period", NULL};
    /* "scenario" names the document itself in messages about its top level */
    int rc = ps_jv_expect_object(root, "scenario", err);
    if (rc == 0)
        rc = ps_jv_check_keys(root, "scenario", keys, err);
    if (rc != 0)
        return rc;

    sc->heartbeat_period_ms = PS_SCENARIO_DEFAULT_HEARTBEAT_PERIOD_MS;
    sc->fair_share_update_period_ms = PS_SCENARIO_DEFAULT_FAIR_SHARE_UPDATE_PERIOD_MS;
    sc->available_exec_nodes_check_period_ms = PS_AVAILABLE_EXEC_NODES_CHECK_PERIOD_MS;
    sc->safe_scheduler_online_time_ms = PS_SAFE_SCHEDULER_ONLINE_TIME_MS;
    sc->resource_demand_sanity_check_period_ms = PS_RESOURCE_DEMAND_SANITY_CHECK_PERIOD_MS;
    if ((rc = ps_jv_int(root, "", "heartbeat_period", 1, PS_SCENARIO_MAX_TIME_MS,
                        "a positive integer (ms)", &sc->heartbeat_period_ms, NULL, err)) != 0 ||
        (rc = ps_jv_int(root, "", "fair_share_update_period", 1, PS_SCENARIO_MAX_TIME_MS,
                        "a positive integer (ms)", &sc->fair_share_update_period_ms, NULL, err)) != 0 ||
        (rc = ps_jv_int(root, "", "duration", 1, PS_SCENARIO_MAX_TIME_MS,
                        "a positive integer (ms)", &sc->duration_ms, NULL, err)) != 0 ||
        (rc = ps_jv_int(root, "", "available_exec_nodes_check_period", 10,
                        PS_SCENARIO_MAX_TIME_MS, "an integer >= 10 (ms)",
                        &sc->available_exec_nodes_check_period_ms, NULL, err)) != 0 ||
        (rc = ps_jv_int(root, "", "safe_scheduler_online_time", 0, PS_SCENARIO_MAX_TIME_MS,
                        "an integer >= 0 (ms)", &sc->safe_scheduler_online_time_ms, NULL,
                        err)) != 0 ||
        (rc = ps_jv_int(root, "", "resource_demand_sanity_check_period", 10,
                        PS_SCENARIO_MAX_TIME_MS, "an integer >= 10 (ms)",
                        &sc->resource_demand_sanity_check_period_ms, NULL, err)) != 0)
        return rc;
    int64_t seed = 0;
    if ((rc = ps_jv_int(root, "", "seed", 0, INT64_MAX, "a non-negative integer", &seed, NULL,
                        err)) != 0)
        return rc;
    sc->seed = (uint64_t)seed;

    if ((rc = ps_scenario_require(root, "", "node_groups", err)) != 0 ||
        (rc = parse_node_groups(json_object_get(root, "node_groups"), sc, err)) != 0)
        return rc;
    if ((rc = ps_scenario_require(root, "", "pool_trees", err)) != 0 ||
        (rc = parse_trees(json_object_get(root, "pool_trees"), sc, err)) != 0)
        return rc;
    if ((rc = parse_default_tree(root, sc, err)) != 0)
        return rc;
    json_t *ops = json_object_get(root, "operations");
    if (ops && (rc = ps_scenario_parse_operations(ops, sc, err)) != 0)
        return rc;
    json_t *controller = json_object_get(root, "controller_agent");
    if (controller) {
        if ((rc = ps_jv_expect_object(controller, "controller_agent", err)) != 0)
            return rc;
        sc->controller_agent = json_incref(controller);
    }
    json_t *events = json_object_get(root, "events");
    return events ? ps_scenario_parse_events(events, sc, err) : 0;
}

int ps_scenario_parse(const char *text, size_t len, struct ps_scenario **out, struct ps_error *err)
{
    *out = NULL;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return ps_error_set(err, PS_EINVAL, "scenario: invalid JSON at line %d column %d: %s",
                            jerr.line, jerr.column, jerr.text);
    struct ps_scenario *sc = calloc(1, sizeof *sc);
    if (!sc) {
        json_decref(root);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    struct ps_error local;
    ps_error_init(&local);
    int rc = parse_document(root, sc, &local);
    json_decref(root);
    if (rc != 0) {
        /* keep the first error of the caller's err, as the convention says */
        ps_error_set(err, rc, "%s", local.msg);
        ps_scenario_free(sc);
        return rc;
    }
    *out = sc;
    return 0;
}

/* ---- release, lookups ------------------------------------------------------------------- */

static void tree_release(struct ps_scenario_tree *tree)
{
    for (size_t i = 0; i < tree->pool_count; i++) {
        free(tree->pools[i].name);
        free(tree->pools[i].parent);
        json_decref(tree->pools[i].attributes);
    }
    free(tree->pools);
    free(tree->name);
    json_decref(tree->attributes);
}

void ps_scenario_free(struct ps_scenario *sc)
{
    if (!sc)
        return;
    for (size_t i = 0; i < sc->node_group_count; i++) {
        struct ps_scenario_node_group *g = &sc->node_groups[i];
        for (size_t j = 0; j < g->tag_count; j++)
            free(g->tags[j]);
        free(g->tags);
        for (size_t j = 0; j < g->medium_count; j++)
            free(g->media[j]);
        free(g->media);
        free(g->medium_disk_space);
        free(g->name);
    }
    free(sc->node_groups);
    for (size_t i = 0; i < sc->tree_count; i++)
        tree_release(&sc->trees[i]);
    free(sc->trees);
    for (size_t i = 0; i < sc->operation_count; i++)
        ps_scenario_operation_release(&sc->operations[i]);
    free(sc->operations);
    ps_scenario_events_release(sc);
    json_decref(sc->controller_agent);
    free(sc);
}

const struct ps_scenario_tree *ps_scenario_find_tree(const struct ps_scenario *sc, const char *name)
{
    for (size_t i = 0; i < sc->tree_count; i++)
        if (sc->trees[i].name && strcmp(sc->trees[i].name, name) == 0)
            return &sc->trees[i];
    return NULL;
}

int ps_scenario_node_id(const struct ps_scenario_node_group *group, int64_t index, char *buf,
                        size_t size)
{
    return snprintf(buf, size, "%s-%" PRId64, group->name, index);
}
