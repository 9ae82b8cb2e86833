/* scenario_events.c — the top-level `events` list of a scenario (io/scenario.h,
 * docs/scenario.md): timed changes of node resources, pool attributes and operation
 * parameters. Every name is checked against what the scenario declares, so an event can never
 * refer to nothing; what a pool attribute or an operation parameter means stays the pool tree
 * module's business (checked when the simulator applies it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/jsonval.h"
#include "io/scenario.h"
#include "io/scenario_internal.h"

static const char *const node_keys[] = {"time", "type", "node", "group", "resource_limits", NULL};
static const char *const pool_keys[] = {"time", "type", "tree", "pool", "key", "value", NULL};
static const char *const op_keys[] = {"time", "type", "operation", "parameters", NULL};
static const char *const tags_keys[] = {"time", "type", "node", "group", "tags", NULL};
static const char *const tree_keys[] = {"time", "type", "tree", "key", "value", NULL};

/* "<group>-<index>" naming an existing node: sets *group and *index. */
static bool find_node(const struct ps_scenario *sc, const char *id, int64_t *group, int64_t *index)
{
    for (size_t g = 0; g < sc->node_group_count; g++) {
        const struct ps_scenario_node_group *ng = &sc->node_groups[g];
        size_t len = strlen(ng->name);
        if (strncmp(id, ng->name, len) != 0 || id[len] != '-')
            continue;
        const char *digits = id + len + 1;
        if (!*digits || strlen(digits) > 18 || (digits[0] == '0' && digits[1]))
            continue;
        int64_t k = 0;
        bool ok = true;
        for (const char *c = digits; *c; c++) {
            if (*c < '0' || *c > '9') {
                ok = false;
                break;
            }
            k = k * 10 + (*c - '0');
        }
        if (ok && k < ng->count) {
            *group = (int64_t)g;
            *index = k;
            return true;
        }
    }
    return false;
}

/* `node` or `group` (exactly one) into ev->group and ev->node (-1: the whole group). */
static int parse_node_target(const json_t *obj, const char *path, struct ps_scenario *sc,
                             struct ps_scenario_event *ev, struct ps_error *err)
{
    char where[PS_SCENARIO_PATH_MAX];
    int rc;
    const char *node = NULL, *group = NULL;
    if ((rc = ps_scenario_name(obj, path, "node", false, &node, err)) != 0 ||
        (rc = ps_scenario_name(obj, path, "group", false, &group, err)) != 0)
        return rc;
    if ((node != NULL) == (group != NULL))
        return ps_error_set(err, PS_EINVAL, "%s: give exactly one of \"node\" and \"group\"", path);
    ev->node = -1;
    if (node && !find_node(sc, node, &ev->group, &ev->node)) {
        ps_jv_join(where, sizeof where, path, "node");
        return ps_error_set(err, PS_EINVAL,
                            "%s: no node \"%s\" (nodes are named <group name>-<index>)", where, node);
    }
    if (group) {
        ev->group = -1;
        for (size_t g = 0; g < sc->node_group_count; g++)
            if (strcmp(sc->node_groups[g].name, group) == 0)
                ev->group = (int64_t)g;
        if (ev->group < 0) {
            ps_jv_join(where, sizeof where, path, "group");
            return ps_error_set(err, PS_EINVAL, "%s: no node group named \"%s\"", where, group);
        }
    }
    return 0;
}

static int parse_node_event(const json_t *obj, const char *path, struct ps_scenario *sc,
                            struct ps_scenario_event *ev, struct ps_error *err)
{
    char where[PS_SCENARIO_PATH_MAX];
    int rc = ps_jv_check_keys(obj, path, node_keys, err);
    if (rc != 0 || (rc = parse_node_target(obj, path, sc, ev, err)) != 0)
        return rc;
    if ((rc = ps_scenario_require(obj, path, "resource_limits", err)) != 0)
        return rc;
    ps_jv_join(where, sizeof where, path, "resource_limits");
    if ((rc = ps_jv_resources(json_object_get(obj, "resource_limits"), where, 0,
                              &ev->resource_limits, &ev->resource_set, err)) != 0)
        return rc;
    if (ev->resource_set == 0)
        return ps_error_set(err, PS_EINVAL, "%s: must name at least one resource", where);
    return 0;
}


/* The event's pool tree: "tree" (NULL: the default one) must name one of the scenario's. */
static int event_tree(const struct ps_scenario *sc, const char *path, const char *tree,
                      struct ps_scenario_event *ev, const struct ps_scenario_tree **out,
                      struct ps_error *err)
{
    *out = ps_scenario_find_tree(sc, tree ? tree : sc->default_tree);
    if (!*out) {
        char where[PS_SCENARIO_PATH_MAX];
        ps_jv_join(where, sizeof where, path, "tree");
        return ps_error_set(err, PS_EINVAL, "%s: no pool tree named \"%s\" in pool_trees", where,
                            tree);
    }
    ev->tree = (*out)->name;
    return 0;
}

static int parse_pool_event(const json_t *obj, const char *path, struct ps_scenario *sc,
                            struct ps_scenario_event *ev, struct ps_error *err)
{
    char where[PS_SCENARIO_PATH_MAX];
    int rc = ps_jv_check_keys(obj, path, pool_keys, err);
    if (rc != 0)
        return rc;
    const char *tree = NULL, *pool = NULL, *key = NULL;
    if ((rc = ps_scenario_name(obj, path, "tree", false, &tree, err)) != 0 ||
        (rc = ps_scenario_name(obj, path, "pool", true, &pool, err)) != 0 ||
        (rc = ps_scenario_name(obj, path, "key", true, &key, err)) != 0 ||
        (rc = ps_scenario_require(obj, path, "value", err)) != 0)
        return rc;
    const struct ps_scenario_tree *t;
    if ((rc = event_tree(sc, path, tree, ev, &t, err)) != 0)
        return rc;
    bool found = false;
    for (size_t p = 0; p < t->pool_count && !found; p++)
        found = strcmp(t->pools[p].name, pool) == 0;
    if (!found) {
        ps_jv_join(where, sizeof where, path, "pool");
        return ps_error_set(err, PS_EINVAL,
                            "%s: no pool \"%s\" in pool tree \"%s\" (only pools listed in the tree "
                            "can be changed)",
                            where, pool, t->name);
    }
    if (!(ev->pool = ps_scenario_strdup(pool, err)) || !(ev->key = ps_scenario_strdup(key, err)))
        return PS_ENOMEM;
    ev->value = json_incref(json_object_get(obj, "value"));
    return 0;
}

static int parse_tags_event(const json_t *obj, const char *path, struct ps_scenario *sc,
                            struct ps_scenario_event *ev, struct ps_error *err)
{
    char where[PS_SCENARIO_PATH_MAX];
    int rc = ps_jv_check_keys(obj, path, tags_keys, err);
    if (rc != 0 || (rc = parse_node_target(obj, path, sc, ev, err)) != 0 ||
        (rc = ps_scenario_require(obj, path, "tags", err)) != 0)
        return rc;
    ps_jv_join(where, sizeof where, path, "tags");
    return ps_scenario_tags(json_object_get(obj, "tags"), where, &ev->tags, &ev->tag_count, err);
}

static int parse_tree_event(const json_t *obj, const char *path, struct ps_scenario *sc,
                            struct ps_scenario_event *ev, struct ps_error *err)
{
    int rc = ps_jv_check_keys(obj, path, tree_keys, err);
    if (rc != 0)
        return rc;
    const char *tree = NULL, *key = NULL;
    if ((rc = ps_scenario_name(obj, path, "tree", false, &tree, err)) != 0 ||
        (rc = ps_scenario_name(obj, path, "key", true, &key, err)) != 0 ||
        (rc = ps_scenario_require(obj, path, "value", err)) != 0)
        return rc;
    const struct ps_scenario_tree *t;
    if ((rc = event_tree(sc, path, tree, ev, &t, err)) != 0)
        return rc;
    if (!(ev->key = ps_scenario_strdup(key, err)))
        return PS_ENOMEM;
    ev->value = json_incref(json_object_get(obj, "value"));
    return 0;
}

static int parse_op_event(const json_t *obj, const char *path, struct ps_scenario *sc,
                          struct ps_scenario_event *ev, struct ps_error *err)
{
    char where[PS_SCENARIO_PATH_MAX];
    int rc = ps_jv_check_keys(obj, path, op_keys, err);
    if (rc != 0)
        return rc;
    const char *id = NULL;
    if ((rc = ps_scenario_name(obj, path, "operation", true, &id, err)) != 0 ||
        (rc = ps_scenario_require(obj, path, "parameters", err)) != 0)
        return rc;
    ev->operation = -1;
    for (size_t i = 0; i < sc->operation_count; i++)
        if (strcmp(sc->operations[i].id, id) == 0)
            ev->operation = (int64_t)i;
    if (ev->operation < 0) {
        ps_jv_join(where, sizeof where, path, "operation");
        return ps_error_set(err, PS_EINVAL, "%s: no operation \"%s\" in operations", where, id);
    }
    json_t *params = json_object_get(obj, "parameters");
    ps_jv_join(where, sizeof where, path, "parameters");
    if ((rc = ps_jv_expect_object(params, where, err)) != 0)
        return rc;
    ev->parameters = json_incref(params);
    return 0;
}

int ps_scenario_parse_events(const json_t *list, struct ps_scenario *sc, struct ps_error *err)
{
    int rc = ps_jv_expect_array(list, "events", err);
    if (rc != 0)
        return rc;
    size_t n = json_array_size(list);
    if (n == 0)
        return 0;
    if (!(sc->events = calloc(n, sizeof *sc->events)))
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    sc->event_count = n;
    for (size_t i = 0; i < n; i++) {
        char path[PS_SCENARIO_PATH_MAX];
        ps_jv_index(path, sizeof path, "events", i);
        const json_t *obj = json_array_get(list, i);
        struct ps_scenario_event *ev = &sc->events[i];
        ev->operation = -1;
        ev->group = -1;
        ev->node = -1;
        const char *type = NULL;
        if ((rc = ps_jv_expect_object(obj, path, err)) != 0 ||
            (rc = ps_scenario_require(obj, path, "time", err)) != 0 ||
            (rc = ps_jv_int(obj, path, "time", 0, PS_SCENARIO_MAX_TIME_MS,
                            "a non-negative integer (ms)", &ev->time_ms, NULL, err)) != 0 ||
            (rc = ps_scenario_name(obj, path, "type", true, &type, err)) != 0)
            return rc;
        if (strcmp(type, "set_node_resources") == 0) {
            ev->type = PS_SCENARIO_EV_SET_NODE_RESOURCES;
            rc = parse_node_event(obj, path, sc, ev, err);
        } else if (strcmp(type, "set_pool_attribute") == 0) {
            ev->type = PS_SCENARIO_EV_SET_POOL_ATTRIBUTE;
            rc = parse_pool_event(obj, path, sc, ev, err);
        } else if (strcmp(type, "update_operation") == 0) {
            ev->type = PS_SCENARIO_EV_UPDATE_OPERATION;
            rc = parse_op_event(obj, path, sc, ev, err);
        } else if (strcmp(type, "set_node_tags") == 0) {
            ev->type = PS_SCENARIO_EV_SET_NODE_TAGS;
            rc = parse_tags_event(obj, path, sc, ev, err);
        } else if (strcmp(type, "set_tree_attribute") == 0) {
            ev->type = PS_SCENARIO_EV_SET_TREE_ATTRIBUTE;
            rc = parse_tree_event(obj, path, sc, ev, err);
        } else {
            char where[PS_SCENARIO_PATH_MAX];
            ps_jv_join(where, sizeof where, path, "type");
            rc = ps_error_set(err, PS_EINVAL,
                              "%s: must be \"set_node_resources\", \"set_node_tags\", "
                              "\"set_pool_attribute\", \"set_tree_attribute\" or "
                              "\"update_operation\", got \"%s\"",
                              where, type);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

void ps_scenario_events_release(struct ps_scenario *sc)
{
    for (size_t i = 0; sc->events && i < sc->event_count; i++) {
        free(sc->events[i].pool);
        free(sc->events[i].key);
        for (size_t k = 0; k < sc->events[i].tag_count; k++)
            free(sc->events[i].tags[k]);
        free(sc->events[i].tags);
        json_decref(sc->events[i].value);
        json_decref(sc->events[i].parameters);
    }
    free(sc->events);
    sc->events = NULL;
    sc->event_count = 0;
}
