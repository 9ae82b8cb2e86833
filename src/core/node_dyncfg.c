/* node_dyncfg.c — the nodes' dynamic config (node_dyncfg.h). */
#include "core/node_dyncfg.h"

#include <stdio.h>
#include <string.h>

#define JRM "job_resource_manager"

static int bad(struct ps_error *err, const char *where, const struct ps_value *v,
               const char *reason)
{
    if (v->type == PS_VALUE_NUMBER)
        return ps_error_set(err, PS_EINVAL, "%s: %s, got %g", where, reason, v->number);
    if (v->type == PS_VALUE_STRING)
        return ps_error_set(err, PS_EINVAL, "%s: %s, got \"%s\"", where, reason, v->string);
    return ps_error_set(err, PS_EINVAL, "%s: %s, got a %s", where, reason,
                        ps_value_type_name(v->type));
}

static int check_factor(const struct ps_value *v, const char *where, struct ps_error *err)
{
    if (v->type != PS_VALUE_NUMBER || !(v->number > 0))
        return bad(err, where, v, "must be a number greater than 0");
    return 0;
}

static int check_jrm(const struct ps_value *jrm, struct ps_error *err)
{
    if (jrm->type != PS_VALUE_MAP)
        return bad(err, "%true/" JRM, jrm, "must be a map");
    const struct ps_value *v = ps_value_find(jrm, "cpu_to_vcpu_factor");
    int rc;
    if (v && v->type != PS_VALUE_NULL &&
        (rc = check_factor(v, "%true/" JRM "/cpu_to_vcpu_factor", err)) != 0)
        return rc;
    v = ps_value_find(jrm, "enable_cpu_to_vcpu_factor");
    if (v && v->type != PS_VALUE_NULL && v->type != PS_VALUE_BOOL)
        return bad(err, "%true/" JRM "/enable_cpu_to_vcpu_factor", v, "must be true or false");
    v = ps_value_find(jrm, "cpu_model_to_cpu_to_vcpu_factor");
    if (!v || v->type == PS_VALUE_NULL)
        return 0;
    if (v->type != PS_VALUE_MAP)
        return bad(err, "%true/" JRM "/cpu_model_to_cpu_to_vcpu_factor", v,
                   "must be a map from a cpu model to a factor");
    for (int i = 0; i < v->count; i++) {
        char where[256];
        snprintf(where, sizeof where, "%%true/" JRM "/cpu_model_to_cpu_to_vcpu_factor/%.120s",
                 v->keys[i]);
        if ((rc = check_factor(&v->items[i], where, err)) != 0)
            return rc;
    }
    return 0;
}

int ps_node_dyncfg_check(const struct ps_value *config, struct ps_error *err)
{
    if (config->type != PS_VALUE_MAP)
        return bad(err, "//sys/cluster_nodes/@config", config,
                   "must be a map from a node filter to a config");
    for (int i = 0; i < config->count; i++) {
        if (strcmp(config->keys[i], "%true") != 0)
            return ps_error_set(err, PS_EINVAL, "%s: unsupported node filter (poolsched applies "
                                "only \"%%true\", the config of every node)", config->keys[i]);
        int rc = ps_node_dyncfg_check_node(&config->items[i], err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int ps_node_dyncfg_check_node(const struct ps_value *node_config, struct ps_error *err)
{
    if (node_config->type != PS_VALUE_MAP)
        return bad(err, "%true", node_config, "must be a map");
    const struct ps_value *jrm = ps_value_find(node_config, JRM);
    return jrm ? check_jrm(jrm, err) : 0;
}

const struct ps_value *ps_node_dyncfg_for_node(const struct ps_value *config)
{
    return config ? ps_value_find(config, "%true") : NULL;
}

static double number_or(const struct ps_value *v, double dflt)
{
    return v && v->type == PS_VALUE_NUMBER ? v->number : dflt;
}

double ps_node_dyncfg_cpu_to_vcpu_factor(const struct ps_value *node_config, double static_factor,
                                         const char *cpu_model)
{
    const struct ps_value *jrm = node_config ? ps_value_find(node_config, JRM) : NULL;
    const struct ps_value *en = jrm ? ps_value_find(jrm, "enable_cpu_to_vcpu_factor") : NULL;
    if (!en || en->type != PS_VALUE_BOOL || !en->boolean)
        return static_factor > 0 ? static_factor : 1.0;
    double f = number_or(ps_value_find(jrm, "cpu_to_vcpu_factor"), 0);
    if (f > 0)
        return f;
    if (static_factor > 0)
        return static_factor;
    const struct ps_value *models = ps_value_find(jrm, "cpu_model_to_cpu_to_vcpu_factor");
    if (models && cpu_model && *cpu_model)
        f = number_or(ps_value_find(models, cpu_model), 0);
    return f > 0 ? f : 1.0;
}
