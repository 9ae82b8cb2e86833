/* sched_config.c — //sys/scheduler/config, the part of upstream's scheduler config that
 * changes at run time: template_pool_tree_config_map (core/tree_template.h) and
 * default_tentative_pool_trees (a list of tree names, for operations with
 * use_default_tentative_pool_trees: core/tentative.h). Read and written through Cypress (`get`,
 * `set`, `remove` of //sys/scheduler/config, .../<key> and
 * .../template_pool_tree_config_map/<name>); a change is
 * checked and applied to every tree at once or refused, and kept in the store as
 * meta/scheduler_config, which a restart applies before the trees are loaded. Under svc->mu. */
#include <stdlib.h>
#include <string.h>

#include "core/strategy.h"
#include "io/json_value.h"
#include "server/api_cypress.h"
#include "server/journal.h"
#include "server/persist.h"
#include "server/sched_config.h"
#include "server/service_state.h"
#include "server/svc_log.h"

#define ROOT "//sys/scheduler/config"
#define KEY "template_pool_tree_config_map"
#define TENTATIVE "default_tentative_pool_trees"
#define KEYS KEY " and " TENTATIVE

bool ps_sched_config_claims(const char *path)
{
    size_t k = strlen(ROOT);
    return path && strncmp(path, ROOT, k) == 0 && (path[k] == '\0' || path[k] == '/');
}

/* The part of the path after ROOT: "" (the whole config), KEY, or KEY/<template>; NULL when
 * it names anything else. *entry gets the template name or NULL. */
static const char *which(const char *path, const char **entry)
{
    const char *rest = path + strlen(ROOT);
    *entry = NULL;
    if (*rest == '\0')
        return "";
    rest++;
    if (strcmp(rest, TENTATIVE) == 0)
        return TENTATIVE;
    size_t k = strlen(KEY);
    if (strncmp(rest, KEY, k) != 0 || (rest[k] != '\0' && rest[k] != '/'))
        return NULL;
    if (rest[k] == '/') {
        *entry = rest + k + 1;
        if (!**entry || strchr(*entry, '/'))
            return NULL;
    }
    return KEY;
}

int ps_sched_config_get(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err)
{
    const char *entry;
    const char *part = which(path, &entry);
    *out = NULL;
    if (!part)
        return ps_error_set(err, PS_ENOENT, "path %s does not exist: //sys/scheduler/config has only "
                            KEYS, path);
    json_t *map = ps_value_to_json(ps_strategy_tree_templates(svc->strategy));
    if (!map)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (!*part) {
        *out = json_pack("{s:o}", KEY, map);
        if (*out && svc->default_tentative_pool_trees)
            json_object_set(*out, TENTATIVE, svc->default_tentative_pool_trees);
    } else if (strcmp(part, TENTATIVE) == 0) {
        json_decref(map);
        *out = svc->default_tentative_pool_trees ? json_incref(svc->default_tentative_pool_trees)
                                                 : NULL;
        if (!*out)
            return ps_error_set(err, PS_ENOENT, "path %s does not exist: " TENTATIVE " is not set",
                                path);
    } else if (!entry) {
        *out = map;
    } else {
        json_t *t = json_object_get(map, entry);
        *out = t ? json_incref(t) : NULL;
        json_decref(map);
        if (!*out)
            return ps_error_set(err, PS_ENOENT, "path %s does not exist: no template \"%s\"", path,
                                entry);
    }
    return *out ? 0 : ps_error_set(err, PS_ENOMEM, "out of memory");
}

void ps_persist_sched_config(struct ps_service *svc)
{
    if (svc->journal)
        ps_journal_put(svc->journal, "meta", "scheduler_config",
                       json_pack("{s:o, s:O?}", KEY,
                                 ps_value_to_json(ps_strategy_tree_templates(svc->strategy)),
                                 TENTATIVE, svc->default_tentative_pool_trees));
}

/* default_tentative_pool_trees: null (unset) or a list of tree names (a tree need not exist:
 * an operation's start names the missing one, as upstream). */
static int check_tentative(const json_t *value, struct ps_error *err)
{
    if (!value || json_is_null(value))
        return 0;
    size_t i;
    json_t *x;
    if (!json_is_array(value))
        return ps_error_set(err, PS_EINVAL, "//sys/scheduler/config/" TENTATIVE
                            ": must be a list of pool tree names");
    json_array_foreach(value, i, x) if (!json_is_string(x) || !json_string_length(x))
        return ps_error_set(err, PS_EINVAL, "//sys/scheduler/config/" TENTATIVE
                            "/%zu: must be a non-empty string", i);
    return 0;
}

static void apply_tentative(struct ps_service *svc, const json_t *value)
{
    json_decref(svc->default_tentative_pool_trees);
    svc->default_tentative_pool_trees = value && !json_is_null(value) ? json_deep_copy(value)
                                                                      : NULL;
}

static int apply(struct ps_service *svc, const json_t *map, struct ps_error *err)
{
    struct ps_value v = ps_value_map();
    int rc = map ? ps_json_to_value(map, &v, err) : 0;
    if (rc != 0)
        return rc;
    rc = ps_strategy_set_tree_templates(svc->strategy, &v, err);
    ps_value_release(&v);
    return rc;
}

int ps_sched_config_set(struct ps_service *svc, const char *path, const json_t *value,
                        struct ps_error *err)
{
    const char *entry;
    const char *part = which(path, &entry);
    if (!part)
        return ps_error_set(err, PS_EINVAL, "%s: //sys/scheduler/config has only " KEYS, path);
    if (strcmp(part, TENTATIVE) == 0) {
        int rc = check_tentative(value, err);
        if (rc == 0) {
            apply_tentative(svc, value);
            ps_persist_sched_config(svc);
            ps_svc_log(svc, "info", "config_changed", "path=%s", path);
        }
        return rc;
    }
    json_t *map = NULL;
    const json_t *tentative = NULL;
    if (!*part) {   /* the whole config: a map with at most KEYS */
        if (value && !json_is_object(value))
            return ps_error_set(err, PS_EINVAL, "//sys/scheduler/config: must be a map");
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)value, k, x) if (strcmp(k, KEY) != 0 && strcmp(k, TENTATIVE) != 0)
            return ps_error_set(err, PS_EINVAL, "//sys/scheduler/config/%s: unknown key (poolsched "
                                "changes only " KEYS " at run time)", k);
        tentative = value ? json_object_get(value, TENTATIVE) : NULL;
        int rc = check_tentative(tentative, err);   /* before anything applies */
        if (rc != 0)
            return rc;
        map = value ? json_incref(json_object_get(value, KEY)) : NULL;
    } else if (!entry) {
        map = value ? json_incref((json_t *)value) : NULL;
    } else {
        map = ps_value_to_json(ps_strategy_tree_templates(svc->strategy));
        if (!map)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        if (value)
            json_object_set(map, entry, (json_t *)value);
        else
            json_object_del(map, entry);
    }
    if (!map || json_is_null(map)) {
        json_decref(map);
        map = json_object();
    }
    int rc = apply(svc, map, err);
    json_decref(map);
    if (rc != 0)
        return rc;
    if (!*part)
        apply_tentative(svc, tentative);
    ps_persist_sched_config(svc);
    for (int i = 0; i < ps_strategy_tree_count(svc->strategy); i++)
        ps_cypress_tree_changed(svc, ps_strategy_tree_at(svc->strategy, i));
    ps_svc_log(svc, "info", "config_changed", "path=%s", path);
    return 0;
}

int ps_sched_config_load(struct ps_service *svc, struct ps_error *err)
{
    json_t *doc = NULL;
    int rc = ps_persist_meta_get(svc, "scheduler_config", &doc, err);
    if (rc == 0 && !doc)
        return 0;   /* never set */
    if (rc == 0)
        rc = apply(svc, json_object_get(doc, KEY), err);
    if (rc == 0 && (rc = check_tentative(json_object_get(doc, TENTATIVE), err)) == 0)
        apply_tentative(svc, json_object_get(doc, TENTATIVE));
    json_decref(doc);
    if (rc != 0)
        ps_error_prefix(err, "stored //sys/scheduler/config");
    return rc;
}
