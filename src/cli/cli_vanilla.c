/* cli_vanilla.c — the spec of `poolsched vanilla` from its flags (cli_vanilla.h). */
#include "cli/cli_vanilla.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli_client.h"
#include "core/op_spec.h"

#define MAX_JOB_COUNT 1000000

static bool utf8_ok(const char *s)
{
    json_t *t = json_string(s);
    bool ok = t != NULL;
    json_decref(t);
    return ok;
}

/* A JSON string from a command-line argument, which must be UTF-8. */
static int put_string(json_t *obj, const char *key, const char *flag, const char *value,
                      struct ps_error *err)
{
    json_t *s = json_string(value);
    if (!s)
        return ps_error_set(err, PS_EINVAL, "%s: the value is not valid UTF-8", flag);
    if (json_object_set_new(obj, key, s) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

static int put_new(json_t *obj, const char *key, json_t *value, struct ps_error *err)
{
    if (!value || json_object_set_new(obj, key, value) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    return 0;
}

/* A YSON/JSON map given to flag. */
static int parse_map(const char *text, const char *flag, json_t **out, struct ps_error *err)
{
    if (ps_cli_parse_value(text, flag, out, err) != 0)
        return PS_EINVAL;
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return ps_error_set(err, PS_EINVAL, "%s: must be a map such as '{cpu=4}'", flag);
    }
    return 0;
}

static int pool_trees(const char *text, json_t *spec, struct ps_error *err)
{
    json_t *list = json_array();
    if (!list)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = put_new(spec, "pool_trees", list, err);
    const char *p = text;
    while (rc == 0) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[256];
        if (len == 0 || len >= sizeof name)
            return ps_error_set(err, PS_EINVAL, "--pool-trees: \"%.100s\" is not a comma-separated "
                                "list of tree names", text);
        memcpy(name, p, len);
        name[len] = '\0';
        size_t i;
        json_t *seen;
        json_array_foreach(list, i, seen) {
            if (strcmp(json_string_value(seen), name) == 0)
                return ps_error_set(err, PS_EINVAL, "--pool-trees: \"%s\" is named twice", name);
        }
        json_t *s = json_string(name);
        if (!s)
            return ps_error_set(err, PS_EINVAL, "--pool-trees: the value is not valid UTF-8");
        if (json_array_append_new(list, s) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        if (!comma)
            break;
        p = comma + 1;
    }
    return rc;
}

static int environment(const struct ps_cli_args *args, json_t *task, struct ps_error *err)
{
    json_t *env = NULL;
    for (size_t i = 0; i < args->count; i++) {
        const struct ps_cli_item *it = &args->items[i];
        if (!it->opt || strcmp(it->opt->name, "--env") != 0)
            continue;
        const char *eq = strchr(it->value, '=');
        if (!eq || eq == it->value)
            return ps_error_set(err, PS_EINVAL, "--env: \"%.100s\" is not NAME=VALUE", it->value);
        char name[256];
        size_t len = (size_t)(eq - it->value);
        if (len >= sizeof name)
            return ps_error_set(err, PS_EINVAL, "--env: the name in \"%.60s...\" is too long",
                                it->value);
        memcpy(name, it->value, len);
        name[len] = '\0';
        if (!utf8_ok(name))
            return ps_error_set(err, PS_EINVAL, "--env: the name is not valid UTF-8");
        if (!env) {
            env = json_object();
            if (put_new(task, "environment", env, err) != 0)
                return PS_ENOMEM;
        }
        if (json_object_get(env, name))
            return ps_error_set(err, PS_EINVAL, "--env: %s is given twice", name);
        int rc = put_string(env, name, "--env", eq + 1, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The task the flags describe; keys only for the flags given. */
static int task_from_flags(const struct ps_cli_args *args, json_t *task, struct ps_error *err)
{
    const char *v;
    int64_t n;
    int rc = 0;
    if ((v = ps_cli_args_get(args, "--command")) != NULL) {
        if (v[0] == '\0')
            return ps_error_set(err, PS_EINVAL, "--command: must not be empty");
        rc = put_string(task, "command", "--command", v, err);
    }
    if (rc == 0 && (v = ps_cli_args_get(args, "--job-count")) != NULL) {
        rc = ps_cli_parse_int(v, "--job-count", 1, MAX_JOB_COUNT, &n, err);
        if (rc == 0)
            rc = put_new(task, "job_count", json_integer(n), err);
    }
    if (rc == 0 && (v = ps_cli_args_get(args, "--cpu")) != NULL) {
        rc = ps_cli_parse_cpu(v, "--cpu", &n, err);
        if (rc == 0)
            rc = put_new(task, "cpu_limit", json_real((double)n / 100.0), err);
    }
    if (rc == 0 && (v = ps_cli_args_get(args, "--memory")) != NULL) {
        rc = ps_cli_parse_size(v, "--memory", &n, err);
        if (rc == 0 && n == 0)
            rc = ps_error_set(err, PS_EINVAL, "--memory: must be more than 0 bytes");
        if (rc == 0)
            rc = put_new(task, "memory_limit", json_integer(n), err);
    }
    if (rc == 0 && (v = ps_cli_args_get(args, "--tmpfs")) != NULL) {
        rc = ps_cli_parse_size(v, "--tmpfs", &n, err);
        if (rc == 0)
            rc = put_new(task, "tmpfs_size", json_integer(n), err);
    }
    if (rc == 0)
        rc = environment(args, task, err);
    return rc;
}

/* A number flag for spec key `key`: any finite number as text, then the spec table's range (the
 * one the scheduler applies), so the CLI refuses exactly what the scheduler would. */
static int spec_number(json_t *spec, const char *flag, const char *key, const char *text,
                       struct ps_error *err)
{
    double x;
    int rc = ps_cli_parse_number(text, flag, -1e308, false, 1e308, "a number", &x, err);
    if (rc != 0)
        return rc;
    struct ps_operation_spec check;
    if (ps_operation_spec_init(&check) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    struct ps_value value = ps_value_number(x);
    rc = ps_attr_set(&ps_operation_spec_table, &check, key, &value, err);
    ps_operation_spec_release(&check);
    if (rc != 0) {
        ps_error_prefix(err, "%s", flag);
        return rc;
    }
    return put_new(spec, key, json_real(x), err);
}

static int spec_from_flags(const struct ps_cli_args *args, const char *task_name, json_t *spec,
                           struct ps_error *err)
{
    const char *v;
    int rc = 0;
    if ((v = ps_cli_args_get(args, "--pool")) != NULL) {
        if (v[0] == '\0')
            return ps_error_set(err, PS_EINVAL, "--pool: must not be empty");
        rc = put_string(spec, "pool", "--pool", v, err);
    }
    if (rc == 0 && (v = ps_cli_args_get(args, "--pool-trees")) != NULL)
        rc = pool_trees(v, spec, err);
    if (rc == 0 && (v = ps_cli_args_get(args, "--weight")) != NULL)
        rc = spec_number(spec, "--weight", "weight", v, err);
    if (rc == 0 && (v = ps_cli_args_get(args, "--max-share-ratio")) != NULL)
        rc = spec_number(spec, "--max-share-ratio", "max_share_ratio", v, err);
    if (rc == 0 && (v = ps_cli_args_get(args, "--resource-limits")) != NULL) {
        json_t *limits = NULL;
        rc = parse_map(v, "--resource-limits", &limits, err);
        if (rc == 0)
            rc = put_new(spec, "resource_limits", limits, err);
    }
    if (rc != 0)
        return rc;
    json_t *task = json_object();
    if (!task)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    rc = task_from_flags(args, task, err);
    if (rc == 0 && json_object_size(task) > 0) {
        json_t *tasks = json_object();
        rc = put_new(spec, "tasks", tasks, err);
        if (rc == 0)
            rc = put_new(tasks, task_name, json_incref(task), err);
    }
    json_decref(task);
    return rc;
}

/* Merges src into dst: maps key by key, recursively; other values replace. */
static int merge(json_t *dst, const json_t *src, struct ps_error *err)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)src, key, value) {
        json_t *old = json_object_get(dst, key);
        if (json_is_object(old) && json_is_object(value)) {
            if (merge(old, value, err) != 0)
                return PS_ENOMEM;
        } else if (json_object_set(dst, key, value) != 0) {
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        }
    }
    return 0;
}

static int check_tasks(const json_t *spec, const char *task_name, struct ps_error *err)
{
    const json_t *tasks = json_object_get(spec, "tasks");
    if (!json_is_object(tasks) || json_object_size(tasks) == 0)
        return ps_error_set(err, PS_EINVAL, "--command and --job-count are required (or give "
                            "tasks in --spec)");
    const char *name;
    const json_t *task;
    json_object_foreach((json_t *)tasks, name, task) {
        bool flags_task = strcmp(name, task_name) == 0;
        if (!json_is_object(task))
            return ps_error_set(err, PS_EINVAL, "--spec: tasks.%.60s must be a map", name);
        const json_t *command = json_object_get(task, "command");
        if (!json_is_string(command) || json_string_length(command) == 0)
            return flags_task ? ps_error_set(err, PS_EINVAL, "--command is required (or give "
                                             "tasks.%.60s.command in --spec)", name)
                              : ps_error_set(err, PS_EINVAL, "--spec: tasks.%.60s.command must "
                                             "be a non-empty string", name);
        const json_t *count = json_object_get(task, "job_count");
        if (!json_is_integer(count) || json_integer_value(count) < 1)
            return flags_task ? ps_error_set(err, PS_EINVAL, "--job-count is required (or give "
                                             "tasks.%.60s.job_count in --spec)", name)
                              : ps_error_set(err, PS_EINVAL, "--spec: tasks.%.60s.job_count must "
                                             "be a positive integer", name);
    }
    return 0;
}

int ps_cli_vanilla_spec(const struct ps_cli_args *args, json_t **out, struct ps_error *err)
{
    *out = NULL;
    const char *task_name = ps_cli_args_get(args, "--task-name");
    if (!task_name)
        task_name = "task";
    if (task_name[0] == '\0' || !utf8_ok(task_name))
        return ps_error_set(err, PS_EINVAL, "--task-name: must be a non-empty UTF-8 name");
    json_t *spec = NULL;
    const char *base = ps_cli_args_get(args, "--spec");
    int rc = base ? parse_map(base, "--spec", &spec, err) : 0;
    if (rc == 0 && !spec && !(spec = json_object()))
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    json_t *flags = rc == 0 ? json_object() : NULL;
    if (rc == 0 && !flags)
        rc = ps_error_set(err, PS_ENOMEM, "out of memory");
    if (rc == 0)
        rc = spec_from_flags(args, task_name, flags, err);
    if (rc == 0)
        rc = merge(spec, flags, err);
    if (rc == 0)
        rc = check_tasks(spec, task_name, err);
    json_decref(flags);
    if (rc != 0) {
        json_decref(spec);
        return rc;
    }
    *out = spec;
    return 0;
}
