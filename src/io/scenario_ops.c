/* scenario_ops.c — the operations and tasks of a scenario (io/scenario.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/jsonval.h"
#include "io/scenario.h"
#include "io/scenario_internal.h"

static const char *const task_keys[] = {"name", "job_count", "duration", "resources",
                                        "memory_limit", "cpu_usage", "max_memory", "tmpfs_size",
                                        "interruptible", "max_memory_spread", "job_proxy_memory",
                                        "job_proxy_max_memory", "disk_request", "job_durations",
                                        NULL};
static const char *const disk_request_keys[] = {"disk_space", "medium_name", NULL};
static const char *const operation_keys[] = {"id", "start_time", "user", "spec", "tasks", NULL};

#define MAX_BYTES PS_JV_RESOURCE_MAX

/* A task's per-job list: a non-empty array (omit: what omitting it means), *out a zeroed array
 * of as many elements of size bytes, *count their number. */
static int alloc_list(const json_t *list, const char *path, const char *omit, size_t size,
                      void **out, size_t *count, struct ps_error *err)
{
    int rc = ps_jv_expect_array(list, path, err);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(list);
    if (n == 0)
        return ps_error_set(err, PS_EINVAL, "%s: must not be empty (omit it %s)", path, omit);
    if (!(*out = calloc(n, size)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    *count = n;
    return 0;
}

/* cpu_usage: a non-empty list of [offset_ms, cores], offsets strictly ascending from 0. */
static int parse_cpu_usage(const json_t *list, const char *path, struct ps_scenario_task *task,
                           struct ps_error *err)
{
    void *steps = NULL;
    int rc = alloc_list(list, path, "to use the full cpu request", sizeof *task->cpu_usage,
                        &steps, &task->cpu_usage_count, err);
    task->cpu_usage = steps;
    if (rc != 0)
        return rc;
    size_t n = task->cpu_usage_count;
    for (size_t i = 0; i < n; i++) {
        char where[PS_SCENARIO_PATH_MAX], got[96];
        ps_jv_index(where, sizeof where, path, i);
        const json_t *step = json_array_get(list, i);
        const json_t *offset = json_array_get(step, 0), *cores = json_array_get(step, 1);
        /* a whole number, also when written as a real (29000.0) */
        double o = json_is_number(offset) ? json_number_value(offset) : -1;
        int64_t offset_ms = o == floor(o) && o >= 0 && o <= (double)PS_SCENARIO_MAX_TIME_MS
                                ? (int64_t)o
                                : -1;
        double x = json_is_number(cores) ? json_number_value(cores) : -1;
        if (!json_is_array(step) || json_array_size(step) != 2 || offset_ms < 0 ||
            offset_ms > PS_SCENARIO_MAX_TIME_MS || !(x >= 0 && x <= 1e16)) {
            ps_jv_describe(step, got, sizeof got);
            return ps_error_set(err, PS_EINVAL,
                                "%s: must be a pair [offset_ms, cores] of a non-negative integer "
                                "and a number of cores from 0 to 1e16, got %s",
                                where, got);
        }
        if (i == 0 && offset_ms != 0)
            return ps_error_set(err, PS_EINVAL,
                                "%s: the first offset must be 0 (the job's start), got %lld", where,
                                (long long)offset_ms);
        if (i > 0 && offset_ms <= task->cpu_usage[i - 1].offset_ms)
            return ps_error_set(err, PS_EINVAL,
                                "%s: offsets must be strictly ascending, got %lld after %lld", where,
                                (long long)offset_ms, (long long)task->cpu_usage[i - 1].offset_ms);
        task->cpu_usage[i].offset_ms = offset_ms;
        task->cpu_usage[i].cpu = ps_res_from_double(PS_RES_CPU, x);
    }
    return 0;
}

/* job_durations: a non-empty list of at most job_count positive integers (ms). */
static int parse_job_durations(const json_t *list, const char *path, struct ps_scenario_task *task,
                               struct ps_error *err)
{
    void *durations = NULL;
    int rc = alloc_list(list, path, "for every job to last duration",
                        sizeof *task->job_durations_ms, &durations, &task->job_duration_count,
                        err);
    task->job_durations_ms = durations;
    if (rc != 0)
        return rc;
    size_t n = task->job_duration_count;
    if ((int64_t)n > task->job_count)
        return ps_error_set(err, PS_EINVAL,
                            "%s: must have at most job_count (%lld) entries, got %zu", path,
                            (long long)task->job_count, n);
    for (size_t i = 0; i < n; i++) {
        char where[PS_SCENARIO_PATH_MAX];
        ps_jv_index(where, sizeof where, path, i);
        if ((rc = ps_jv_int_value(json_array_get(list, i), where, 1, PS_SCENARIO_MAX_TIME_MS,
                                  "a positive integer (ms)", &task->job_durations_ms[i], err)) != 0)
            return rc;
    }
    return 0;
}

static int check_job_count(int64_t job_count, const char *path, struct ps_error *err)
{
    if (job_count <= PS_SCENARIO_MAX_JOB_COUNT)
        return 0;
    return ps_error_set(err, PS_EINVAL, "%s.job_count: must be at most %d, got %lld", path,
                        PS_SCENARIO_MAX_JOB_COUNT, (long long)job_count);
}

static int parse_task(const json_t *obj, const char *path, size_t index,
                      struct ps_scenario_task *task, struct ps_error *err)
{
    char where[PS_SCENARIO_PATH_MAX];
    int rc = ps_jv_expect_object(obj, path, err);
    if (rc == 0)
        rc = ps_jv_check_keys(obj, path, task_keys, err);
    if (rc != 0)
        return rc;

    char def[32];
    snprintf(def, sizeof def, "task%zu", index);
    const char *name = def;
    if ((rc = ps_scenario_name(obj, path, "name", false, &name, err)) != 0)
        return rc;
    if (!(task->name = ps_scenario_strdup(name, err)))
        return PS_ENOMEM;

    if ((rc = ps_scenario_require(obj, path, "job_count", err)) != 0 ||
        (rc = ps_jv_int(obj, path, "job_count", 1, INT64_MAX, "a positive integer",
                        &task->job_count, NULL, err)) != 0 ||
        (rc = check_job_count(task->job_count, path, err)) != 0 ||
        (rc = ps_scenario_require(obj, path, "duration", err)) != 0 ||
        (rc = ps_jv_int(obj, path, "duration", 1, PS_SCENARIO_MAX_TIME_MS,
                        "a positive integer (ms)", &task->duration_ms, NULL, err)) != 0 ||
        (rc = ps_scenario_require(obj, path, "resources", err)) != 0)
        return rc;
    ps_jv_join(where, sizeof where, path, "resources");
    if ((rc = ps_jv_resources(json_object_get(obj, "resources"), where, 0, &task->resources, NULL,
                              err)) != 0)
        return rc;
    int64_t memory = task->resources.v[PS_RES_MEMORY];

    /* Positive either way: the memory digest divides by it (max_memory / memory_limit). */
    task->memory_limit_bytes = memory > 0 ? memory : PS_SCENARIO_DEFAULT_MEMORY_LIMIT;
    task->max_memory_bytes = memory;
    task->job_proxy_max_memory_bytes = -1;
    if ((rc = ps_jv_int(obj, path, "memory_limit", 1, MAX_BYTES,
                        "a positive integer (bytes)", &task->memory_limit_bytes, NULL, err)) != 0 ||
        (rc = ps_jv_int(obj, path, "max_memory", 0, MAX_BYTES, "a non-negative integer (bytes)",
                        &task->max_memory_bytes, NULL, err)) != 0 ||
        (rc = ps_jv_int(obj, path, "tmpfs_size", 0, MAX_BYTES, "a non-negative integer (bytes)",
                        &task->tmpfs_size_bytes, NULL, err)) != 0 ||
        (rc = ps_jv_bool(obj, path, "interruptible", &task->interruptible, NULL, err)) != 0 ||
        (rc = ps_jv_int(obj, path, "job_proxy_memory", 0, MAX_BYTES,
                        "a non-negative integer (bytes)", &task->job_proxy_memory_bytes, NULL,
                        err)) != 0 ||
        (rc = ps_jv_int(obj, path, "job_proxy_max_memory", 0, MAX_BYTES,
                        "a non-negative integer (bytes)", &task->job_proxy_max_memory_bytes, NULL,
                        err)) != 0 ||
        (rc = ps_jv_double(obj, path, "max_memory_spread", 0, PS_SCENARIO_MAX_MEMORY_SPREAD,
                           "a number from 0 to 1 (the sigma of the log of the job's peak)",
                           &task->max_memory_spread, NULL, err)) != 0)
        return rc;
    if (task->tmpfs_size_bytes > task->memory_limit_bytes) {
        ps_jv_join(where, sizeof where, path, "tmpfs_size");
        return ps_error_set(err, PS_EINVAL,
                            "%s: must be at most memory_limit (%lld), got %lld (tmpfs is part of "
                            "the job's memory)",
                            where, (long long)task->memory_limit_bytes,
                            (long long)task->tmpfs_size_bytes);
    }

    const json_t *disk = json_object_get(obj, "disk_request");
    if (disk) {
        ps_jv_join(where, sizeof where, path, "disk_request");
        const char *medium = "default";
        if ((rc = ps_jv_expect_object(disk, where, err)) != 0 ||
            (rc = ps_jv_check_keys(disk, where, disk_request_keys, err)) != 0 ||
            (rc = ps_scenario_require(disk, where, "disk_space", err)) != 0 ||
            (rc = ps_jv_int(disk, where, "disk_space", 1, MAX_BYTES,
                            "a positive integer (bytes)", &task->disk_space, NULL, err)) != 0 ||
            (rc = ps_scenario_name(disk, where, "medium_name", false, &medium, err)) != 0)
            return rc;
        if (!(task->disk_medium = ps_scenario_strdup(medium, err)))
            return PS_ENOMEM;
    }

    const json_t *usage = json_object_get(obj, "cpu_usage");
    if (usage) {
        ps_jv_join(where, sizeof where, path, "cpu_usage");
        if ((rc = parse_cpu_usage(usage, where, task, err)) != 0)
            return rc;
    }
    const json_t *durations = json_object_get(obj, "job_durations");
    if (durations) {
        ps_jv_join(where, sizeof where, path, "job_durations");
        if ((rc = parse_job_durations(durations, where, task, err)) != 0)
            return rc;
    }
    return 0;
}

/* ---- per-job peak memory ------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Folds a string (FNV-1a 64) and then mixes it into h. */
static uint64_t mix_str(uint64_t h, const char *s)
{
    uint64_t f = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        f = (f ^ (unsigned char)*s) * 0x100000001b3ULL;
    h ^= f;
    return splitmix64(&h);
}

static uint64_t mix_int(uint64_t h, uint64_t v)
{
    h ^= v;
    return splitmix64(&h);
}

/* A uniform double in (0, 1): the top 53 bits, plus half a step so that log() never sees 0. */
static double unit(uint64_t *state)
{
    return ((double)(splitmix64(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

int64_t ps_scenario_job_max_memory(uint64_t seed, const char *operation_id,
                                   const struct ps_scenario_task *task, int64_t index, int attempt)
{
    if (task->max_memory_spread <= 0 || task->max_memory_bytes <= 0)
        return task->max_memory_bytes;
    uint64_t h = mix_int(0x6d656d6f72790000ULL, seed);   /* "memory" */
    h = mix_str(h, operation_id);
    h = mix_str(h, task->name);
    h = mix_int(h, (uint64_t)index);
    h = mix_int(h, (uint64_t)(uint32_t)attempt);
    double u1 = unit(&h), u2 = unit(&h);
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    double peak = (double)task->max_memory_bytes * exp(task->max_memory_spread * z);
    if (!(peak < (double)MAX_BYTES))
        return MAX_BYTES;
    return (int64_t)llround(peak);
}

static int parse_pool_trees(const json_t *list, const char *path, const struct ps_scenario *sc,
                            struct ps_scenario_operation *op, struct ps_error *err)
{
    int rc = ps_jv_expect_array(list, path, err);
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
        char where[PS_SCENARIO_PATH_MAX], got[96];
        const json_t *v = json_array_get(list, i);
        ps_jv_index(where, sizeof where, path, i);
        if (!json_is_string(v)) {
            ps_jv_describe(v, got, sizeof got);
            return ps_error_set(err, PS_EINVAL, "%s: must be a tree name, got %s", where, got);
        }
        const char *name = json_string_value(v);
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
    char where[PS_SCENARIO_PATH_MAX];
    int rc = ps_jv_expect_object(spec, path, err);
    if (rc != 0)
        return rc;
    op->spec = json_incref(spec);
    const char *pool = NULL;
    if ((rc = ps_scenario_name(spec, path, "pool", false, &pool, err)) != 0)
        return rc;
    if (pool && strcmp(pool, PS_SCENARIO_ROOT_POOL) == 0) {
        ps_jv_join(where, sizeof where, path, "pool");
        return ps_error_set(err, PS_EINVAL, "%s: operations cannot run in %s directly; name a pool",
                            where, PS_SCENARIO_ROOT_POOL);
    }
    if (pool && !(op->pool = ps_scenario_strdup(pool, err)))
        return PS_ENOMEM;
    const json_t *trees = json_object_get(spec, "pool_trees");
    if (trees) {
        ps_jv_join(where, sizeof where, path, "pool_trees");
        if ((rc = parse_pool_trees(trees, where, sc, op, err)) != 0)
            return rc;
    }
    json_t *per_tree = json_object_get(spec, "scheduling_options_per_pool_tree");
    if (!per_tree)
        return 0;
    ps_jv_join(where, sizeof where, path, "scheduling_options_per_pool_tree");
    if ((rc = ps_jv_expect_object(per_tree, where, err)) != 0)
        return rc;
    const char *tree;
    json_t *options;
    json_object_foreach(per_tree, tree, options) {
        char tree_path[PS_SCENARIO_PATH_MAX];
        const char *ignored;
        ps_jv_join(tree_path, sizeof tree_path, where, tree);
        if (!ps_scenario_find_tree(sc, tree))
            return ps_error_set(err, PS_EINVAL, "%s: no pool tree named \"%s\" in pool_trees",
                                tree_path, tree);
        if ((rc = ps_jv_expect_object(options, tree_path, err)) != 0 ||
            (rc = ps_scenario_name(options, tree_path, "pool", false, &ignored, err)) != 0)
            return rc;
    }
    return 0;
}

static int parse_operation(json_t *obj, const char *path, const struct ps_scenario *sc,
                           struct ps_scenario_operation *op, struct ps_error *err)
{
    char where[PS_SCENARIO_PATH_MAX];
    int rc = ps_jv_expect_object(obj, path, err);
    if (rc == 0)
        rc = ps_jv_check_keys(obj, path, operation_keys, err);
    if (rc != 0)
        return rc;

    const char *id = NULL, *user = PS_SCENARIO_DEFAULT_USER;
    if ((rc = ps_scenario_name(obj, path, "id", true, &id, err)) != 0)
        return rc;
    if (!(op->id = ps_scenario_strdup(id, err)))
        return PS_ENOMEM;
    if ((rc = ps_scenario_require(obj, path, "start_time", err)) != 0 ||
        (rc = ps_jv_int(obj, path, "start_time", 0, PS_SCENARIO_MAX_TIME_MS,
                        "a non-negative integer (ms)", &op->start_time_ms, NULL, err)) != 0 ||
        (rc = ps_scenario_name(obj, path, "user", false, &user, err)) != 0)
        return rc;
    if (!(op->user = ps_scenario_strdup(user, err)))
        return PS_ENOMEM;

    ps_jv_join(where, sizeof where, path, "spec");
    json_t *spec = json_object_get(obj, "spec");
    if (spec) {
        if ((rc = parse_spec(spec, where, sc, op, err)) != 0)
            return rc;
    } else if (!(op->spec = json_object())) {
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }

    if ((rc = ps_scenario_require(obj, path, "tasks", err)) != 0)
        return rc;
    json_t *tasks = json_object_get(obj, "tasks");
    ps_jv_join(where, sizeof where, path, "tasks");
    if ((rc = ps_jv_expect_array(tasks, where, err)) != 0)
        return rc;
    size_t n = json_array_size(tasks);
    if (n == 0)
        return ps_error_set(err, PS_EINVAL, "%s: must have at least one task", where);
    if (!(op->tasks = calloc(n, sizeof *op->tasks)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    op->task_count = n;
    for (size_t i = 0; i < n; i++) {
        char task_path[PS_SCENARIO_PATH_MAX];
        ps_jv_index(task_path, sizeof task_path, where, i);
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
                                       "%s[%zu].name: duplicate task name \"%s\" (also tasks[%zu])",
                                       where, second, names[second], first)
                        : PS_ENOMEM;
    free(names);
    return rc;
}

int ps_scenario_parse_operations(const json_t *list, struct ps_scenario *sc, struct ps_error *err)
{
    int rc = ps_jv_expect_array(list, "operations", err);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(list);
    if (n == 0)
        return 0;
    if (!(sc->operations = calloc(n, sizeof *sc->operations)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    sc->operation_count = n;
    for (size_t i = 0; i < n; i++) {
        char path[PS_SCENARIO_PATH_MAX];
        ps_jv_index(path, sizeof path, "operations", i);
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
        free(op->tasks[i].disk_medium);
        free(op->tasks[i].cpu_usage);
        free(op->tasks[i].job_durations_ms);
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
