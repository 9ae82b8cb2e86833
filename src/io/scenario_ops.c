/* scenario_ops.c — the operations and tasks of a scenario (io/scenario.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_check.h"
#include "io/scenario.h"
#include "io/scenario_internal.h"

static const char *const task_keys[] = {"name", "job_count", "duration", "resources",
                                        "memory_limit", "cpu_usage", "max_memory", "tmpfs_size",
                                        NULL};
static const char *const operation_keys[] = {"id", "start_time", "user", "spec", "tasks", NULL};

static int missing(const char *path, const char *key, struct ps_error *err)
{
    char where[PS_JSON_PATH_MAX];
    ps_json_path_key(where, path, key);
    return ps_error_set(err, PS_EINVAL, "%s: required key is missing", where);
}

/* cpu_usage: a non-empty list of [offset_ms, cores], offsets strictly ascending from 0. */
static int parse_cpu_usage(const json_t *list, const char *path, struct ps_scenario_task *task,
                           struct ps_error *err)
{
    int rc = ps_json_expect_array(list, path, err);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(list);
    if (n == 0)
        return ps_error_set(err, PS_EINVAL,
                            "%s: must not be empty (omit it to use the full cpu request)", path);
    if (!(task->cpu_usage = calloc(n, sizeof *task->cpu_usage)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    task->cpu_usage_count = n;
    for (size_t i = 0; i < n; i++) {
        char where[PS_JSON_PATH_MAX], elem[PS_JSON_PATH_MAX], got[64];
        ps_json_path_index(where, path, i);
        const json_t *step = json_array_get(list, i);
        if (!json_is_array(step) || json_array_size(step) != 2) {
            ps_json_describe(step, got, sizeof got);
            return ps_error_set(err, PS_EINVAL, "%s: must be a pair [offset_ms, cores], got %s",
                                where, got);
        }
        ps_json_path_index(elem, where, 0);
        int64_t offset;
        if ((rc = ps_json_get_int(json_array_get(step, 0), elem, 0, PS_JSON_MAX_INT, &offset, err)) != 0)
            return rc;
        if (i == 0 && offset != 0)
            return ps_error_set(err, PS_EINVAL,
                                "%s: the first offset must be 0 (the job's start), got %lld", elem,
                                (long long)offset);
        if (i > 0 && offset <= task->cpu_usage[i - 1].offset_ms)
            return ps_error_set(err, PS_EINVAL,
                                "%s: offsets must be strictly ascending, got %lld after %lld", elem,
                                (long long)offset, (long long)task->cpu_usage[i - 1].offset_ms);
        ps_json_path_index(elem, where, 1);
        double cores;
        if ((rc = ps_json_get_nonneg_number(json_array_get(step, 1), elem, PS_JSON_MAX_CPU_CORES,
                                            &cores, err)) != 0)
            return rc;
        task->cpu_usage[i].offset_ms = offset;
        task->cpu_usage[i].cpu = ps_res_from_double(PS_RES_CPU, cores);
    }
    return 0;
}

static int parse_task(const json_t *obj, const char *path, size_t index,
                      struct ps_scenario_task *task, struct ps_error *err)
{
    char where[PS_JSON_PATH_MAX];
    int rc = ps_json_expect_object(obj, path, err);
    if (rc == 0)
        rc = ps_json_check_keys(obj, path, task_keys, err);
    if (rc != 0)
        return rc;

    const json_t *v = json_object_get(obj, "name");
    if (v) {
        const char *s;
        ps_json_path_key(where, path, "name");
        if ((rc = ps_json_get_string(v, where, true, &s, err)) != 0)
            return rc;
        task->name = ps_scenario_strdup(s, err);
    } else {
        char def[32];
        snprintf(def, sizeof def, "task%zu", index);
        task->name = ps_scenario_strdup(def, err);
    }
    if (!task->name)
        return PS_ENOMEM;

    if (!(v = json_object_get(obj, "job_count")))
        return missing(path, "job_count", err);
    ps_json_path_key(where, path, "job_count");
    if ((rc = ps_json_get_int(v, where, 1, PS_SCENARIO_MAX_JOB_COUNT, &task->job_count, err)) != 0)
        return rc;

    if (!(v = json_object_get(obj, "duration")))
        return missing(path, "duration", err);
    ps_json_path_key(where, path, "duration");
    if ((rc = ps_json_get_int(v, where, 1, PS_JSON_MAX_INT, &task->duration_ms, err)) != 0)
        return rc;

    if (!(v = json_object_get(obj, "resources")))
        return missing(path, "resources", err);
    ps_json_path_key(where, path, "resources");
    if ((rc = ps_json_get_resources(v, where, false, &task->resources, err)) != 0)
        return rc;
    int64_t memory = task->resources.v[PS_RES_MEMORY];

    ps_json_path_key(where, path, "memory_limit");
    if ((v = json_object_get(obj, "memory_limit"))) {
        if ((rc = ps_json_get_int(v, where, 1, PS_JSON_MAX_INT, &task->memory_limit_bytes, err)) != 0)
            return rc;
    } else {
        /* Positive either way: the memory digest divides by it (max_memory / memory_limit). */
        task->memory_limit_bytes = memory > 0 ? memory : PS_SCENARIO_DEFAULT_MEMORY_LIMIT;
    }

    ps_json_path_key(where, path, "max_memory");
    task->max_memory_bytes = memory;
    if ((v = json_object_get(obj, "max_memory")) &&
        (rc = ps_json_get_int(v, where, 0, PS_JSON_MAX_INT, &task->max_memory_bytes, err)) != 0)
        return rc;

    ps_json_path_key(where, path, "tmpfs_size");
    if ((v = json_object_get(obj, "tmpfs_size"))) {
        if ((rc = ps_json_get_int(v, where, 0, PS_JSON_MAX_INT, &task->tmpfs_size_bytes, err)) != 0)
            return rc;
        if (task->tmpfs_size_bytes > task->memory_limit_bytes)
            return ps_error_set(err, PS_EINVAL,
                                "%s: must be at most memory_limit (%lld), got %lld (tmpfs is "
                                "part of the job's memory)",
                                where, (long long)task->memory_limit_bytes,
                                (long long)task->tmpfs_size_bytes);
    }

    if ((v = json_object_get(obj, "cpu_usage"))) {
        ps_json_path_key(where, path, "cpu_usage");
        if ((rc = parse_cpu_usage(v, where, task, err)) != 0)
            return rc;
    }
    return 0;
}

static int parse_pool_trees(const json_t *list, const char *path, const struct ps_scenario *sc,
                            struct ps_scenario_operation *op, struct ps_error *err)
{
    int rc = ps_json_expect_array(list, path, err);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(list);
    if (n == 0)
        return ps_error_set(err, PS_EINVAL,
                            "%s: must not be empty (omit it to use the default tree)", path);
    if (!(op->pool_trees = calloc(n, sizeof *op->pool_trees)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    op->pool_tree_count = n;
    for (size_t i = 0; i < n; i++) {
        char where[PS_JSON_PATH_MAX];
        const char *name;
        ps_json_path_index(where, path, i);
        if ((rc = ps_json_get_string(json_array_get(list, i), where, true, &name, err)) != 0)
            return rc;
        if (!ps_scenario_find_tree(sc, name))
            return ps_error_set(err, PS_EINVAL, "%s: no pool tree named \"%s\" in pool_trees",
                                where, name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(op->pool_trees[j], name) == 0)
                return ps_error_set(err, PS_EINVAL, "%s: tree \"%s\" is listed twice", where, name);
        if (!(op->pool_trees[i] = ps_scenario_strdup(name, err)))
            return PS_ENOMEM;
    }
    return 0;
}

/* The spec stays JSON (its attributes are the pool tree module's), but the keys the simulator
 * needs to place the operation are checked here: pool, pool_trees and the trees named in
 * scheduling_options_per_pool_tree. */
static int parse_spec(json_t *spec, const char *path, const struct ps_scenario *sc,
                      struct ps_scenario_operation *op, struct ps_error *err)
{
    char where[PS_JSON_PATH_MAX];
    int rc = ps_json_expect_object(spec, path, err);
    if (rc != 0)
        return rc;
    op->spec = json_incref(spec);
    const json_t *v;
    if ((v = json_object_get(spec, "pool"))) {
        const char *pool;
        ps_json_path_key(where, path, "pool");
        if ((rc = ps_json_get_string(v, where, true, &pool, err)) != 0)
            return rc;
        if (strcmp(pool, PS_SCENARIO_ROOT_POOL) == 0)
            return ps_error_set(err, PS_EINVAL,
                                "%s: operations cannot run in %s directly; name a pool", where,
                                PS_SCENARIO_ROOT_POOL);
        if (!(op->pool = ps_scenario_strdup(pool, err)))
            return PS_ENOMEM;
    }
    if ((v = json_object_get(spec, "pool_trees"))) {
        ps_json_path_key(where, path, "pool_trees");
        if ((rc = parse_pool_trees(v, where, sc, op, err)) != 0)
            return rc;
    }
    json_t *per_tree = json_object_get(spec, "scheduling_options_per_pool_tree");
    if (per_tree) {
        ps_json_path_key(where, path, "scheduling_options_per_pool_tree");
        if ((rc = ps_json_expect_object(per_tree, where, err)) != 0)
            return rc;
        const char *tree;
        json_t *options;
        json_object_foreach(per_tree, tree, options) {
            char tree_path[PS_JSON_PATH_MAX];
            ps_json_path_key(tree_path, where, tree);
            if (!ps_scenario_find_tree(sc, tree))
                return ps_error_set(err, PS_EINVAL, "%s: no pool tree named \"%s\" in pool_trees",
                                    tree_path, tree);
            if ((rc = ps_json_expect_object(options, tree_path, err)) != 0)
                return rc;
            const json_t *pool = json_object_get(options, "pool");
            const char *ignored;
            char pool_path[PS_JSON_PATH_MAX];
            ps_json_path_key(pool_path, tree_path, "pool");
            if (pool && (rc = ps_json_get_string(pool, pool_path, true, &ignored, err)) != 0)
                return rc;
        }
    }
    return 0;
}

static int parse_operation(json_t *obj, const char *path, const struct ps_scenario *sc,
                           struct ps_scenario_operation *op, struct ps_error *err)
{
    char where[PS_JSON_PATH_MAX];
    int rc = ps_json_expect_object(obj, path, err);
    if (rc == 0)
        rc = ps_json_check_keys(obj, path, operation_keys, err);
    if (rc != 0)
        return rc;

    const json_t *v;
    const char *s;
    if (!(v = json_object_get(obj, "id")))
        return missing(path, "id", err);
    ps_json_path_key(where, path, "id");
    if ((rc = ps_json_get_string(v, where, true, &s, err)) != 0)
        return rc;
    if (!(op->id = ps_scenario_strdup(s, err)))
        return PS_ENOMEM;

    if (!(v = json_object_get(obj, "start_time")))
        return missing(path, "start_time", err);
    ps_json_path_key(where, path, "start_time");
    if ((rc = ps_json_get_int(v, where, 0, PS_JSON_MAX_INT, &op->start_time_ms, err)) != 0)
        return rc;

    s = PS_SCENARIO_DEFAULT_USER;
    ps_json_path_key(where, path, "user");
    if ((v = json_object_get(obj, "user")) && (rc = ps_json_get_string(v, where, true, &s, err)) != 0)
        return rc;
    if (!(op->user = ps_scenario_strdup(s, err)))
        return PS_ENOMEM;

    ps_json_path_key(where, path, "spec");
    json_t *spec = json_object_get(obj, "spec");
    if (spec) {
        if ((rc = parse_spec(spec, where, sc, op, err)) != 0)
            return rc;
    } else if (!(op->spec = json_object())) {
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }

    json_t *tasks = json_object_get(obj, "tasks");
    if (!tasks)
        return missing(path, "tasks", err);
    ps_json_path_key(where, path, "tasks");
    if ((rc = ps_json_expect_array(tasks, where, err)) != 0)
        return rc;
    size_t n = json_array_size(tasks);
    if (n == 0)
        return ps_error_set(err, PS_EINVAL, "%s: must have at least one task", where);
    if (!(op->tasks = calloc(n, sizeof *op->tasks)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    op->task_count = n;
    for (size_t i = 0; i < n; i++) {
        char task_path[PS_JSON_PATH_MAX];
        ps_json_path_index(task_path, where, i);
        if ((rc = parse_task(json_array_get(tasks, i), task_path, i, &op->tasks[i], err)) != 0)
            return rc;
    }
    const char **names = malloc(n * sizeof *names);
    if (!names)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        names[i] = op->tasks[i].name;
    size_t first, second;
    if (ps_scenario_find_duplicate(names, n, &first, &second, err))
        rc = second < n ? ps_error_set(err, PS_EINVAL,
                                       "%s[%zu].name: duplicate task name \"%s\" (also %s[%zu])",
                                       where, second, names[second], "tasks", first)
                        : PS_ENOMEM;
    free(names);
    return rc;
}

int ps_scenario_parse_operations(const json_t *list, struct ps_scenario *sc, struct ps_error *err)
{
    int rc = ps_json_expect_array(list, "operations", err);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(list);
    if (n == 0)
        return 0;
    if (!(sc->operations = calloc(n, sizeof *sc->operations)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    sc->operation_count = n;
    for (size_t i = 0; i < n; i++) {
        char path[PS_JSON_PATH_MAX];
        ps_json_path_index(path, "operations", i);
        if ((rc = parse_operation(json_array_get(list, i), path, sc, &sc->operations[i], err)) != 0)
            return rc;
    }
    const char **ids = malloc(n * sizeof *ids);
    if (!ids)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        ids[i] = sc->operations[i].id;
    size_t first, second;
    if (ps_scenario_find_duplicate(ids, n, &first, &second, err))
        rc = second < n ? ps_error_set(err, PS_EINVAL,
                                       "operations[%zu].id: duplicate operation id \"%s\" (also "
                                       "operations[%zu])",
                                       second, ids[second], first)
                        : PS_ENOMEM;
    free(ids);
    return rc;
}

void ps_scenario_operation_release(struct ps_scenario_operation *op)
{
    for (size_t i = 0; i < op->task_count; i++) {
        free(op->tasks[i].name);
        free(op->tasks[i].cpu_usage);
    }
    free(op->tasks);
    for (size_t i = 0; i < op->pool_tree_count; i++)
        free(op->pool_trees[i]);
    free(op->pool_trees);
    free(op->pool);
    free(op->user);
    free(op->id);
    json_decref(op->spec);
}
