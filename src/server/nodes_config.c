/* nodes_config.c — //sys/cluster_nodes/@config, upstream's nodes' dynamic config: a map from a
 * node filter ("%true" only) to the config the nodes apply at run time (core/node_dyncfg.h:
 * job_resource_manager's cpu_to_vcpu_factor keys; other keys kept). Each change bumps
 * svc->nodes_config_version; a node's heartbeat names the version it applied and the reply
 * carries the config when that differs. Stored as meta/nodes_config with its version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/node_dyncfg.h"
#include "io/json_value.h"
#include "server/journal.h"
#include "server/nodes_config.h"
#include "server/persist.h"
#include "server/service_state.h"
#include "server/svc_log.h"

#define ROOT "//sys/cluster_nodes/@config"

bool ps_nodes_config_claims(const char *path)
{
    size_t k = strlen(ROOT);
    return path && strncmp(path, ROOT, k) == 0 && (path[k] == '\0' || path[k] == '/');
}

int ps_nodes_config_get(struct ps_service *svc, const char *path, json_t **out,
                        struct ps_error *err)
{
    json_t *v = svc->nodes_config ? svc->nodes_config : NULL;
    json_t *empty = v ? NULL : json_object();
    if (!v)
        v = empty;
    for (const char *p = path + strlen(ROOT); v && *p == '/';) {
        p++;
        size_t n = strcspn(p, "/");
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(n < 255 ? n : 255), p);
        v = json_is_object(v) ? json_object_get(v, key) : NULL;
        p += n;
    }
    *out = v ? json_incref(v) : NULL;
    json_decref(empty);
    if (!*out)
        return ps_error_set(err, PS_ENOENT, "attribute %s does not exist", path);
    return 0;
}

static void persist(struct ps_service *svc)
{
    if (svc->journal)
        ps_journal_put(svc->journal, "meta", "nodes_config",
                       json_pack("{s:O?, s:I}", "config", svc->nodes_config, "version",
                                 (json_int_t)svc->nodes_config_version));
}

static int check(const json_t *value, struct ps_error *err)
{
    struct ps_value v = ps_value_null();
    int rc = ps_json_to_value(value, &v, err);
    if (rc == 0)
        rc = ps_node_dyncfg_check(&v, err);
    ps_value_release(&v);
    return rc;
}

int ps_nodes_config_set(struct ps_service *svc, const char *path, const json_t *value,
                        struct ps_error *err)
{
    if (strcmp(path, ROOT) != 0)
        return ps_error_set(err, PS_EINVAL, "%s: set the whole " ROOT " (a map from a node filter "
                            "to a config)", path);
    if (value && json_is_null(value))
        value = NULL;
    int rc = value ? check(value, err) : 0;
    if (rc != 0)
        return rc;
    json_t *copy = value ? json_deep_copy(value) : NULL;
    if (value && !copy)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    json_decref(svc->nodes_config);
    svc->nodes_config = copy;
    svc->nodes_config_version++;
    persist(svc);
    ps_svc_log(svc, "info", "nodes_config_changed", "version=%llu",
               (unsigned long long)svc->nodes_config_version);
    return 0;
}

int ps_nodes_config_load(struct ps_service *svc, struct ps_error *err)
{
    json_t *doc = NULL;   /* stays NULL when never set */
    int rc = ps_persist_meta_get(svc, "nodes_config", &doc, err);
    json_t *config = json_object_get(doc, "config");
    if (config && json_is_null(config))
        config = NULL;
    if (rc == 0 && config)
        rc = check(config, err);
    if (rc == 0 && doc) {
        json_decref(svc->nodes_config);
        svc->nodes_config = config ? json_incref(config) : NULL;
        svc->nodes_config_version = (uint64_t)json_integer_value(json_object_get(doc, "version"));
    }
    if (rc != 0)
        ps_error_prefix(err, "stored " ROOT);
    json_decref(doc);
    return rc;
}

void ps_nodes_config_for_node(struct ps_service *svc, uint64_t node_version, json_t **config,
                              uint64_t *version)
{
    *config = NULL;
    *version = 0;
    if (node_version == svc->nodes_config_version)
        return;
    json_t *c = svc->nodes_config ? json_object_get(svc->nodes_config, "%true") : NULL;
    *config = c ? json_incref(c) : json_object();
    *version = svc->nodes_config_version;
}
