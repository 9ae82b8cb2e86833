/* node_dyncfg.h — the nodes' dynamic config (upstream's //sys/cluster_nodes/@config): a map
 * from a node filter to the config of the nodes it matches. poolsched knows the filter "%true"
 * (every node) and, in that config, job_resource_manager's cpu_to_vcpu_factor,
 * enable_cpu_to_vcpu_factor and cpu_model_to_cpu_to_vcpu_factor; other keys are kept and
 * ignored (upstream's node keeps unrecognized options too). Pure. */
#ifndef PS_CORE_NODE_DYNCFG_H
#define PS_CORE_NODE_DYNCFG_H

#include "core/error.h"
#include "core/value.h"

/* Checks the whole @config (a map; "%true" its only filter). Errors (PS_EINVAL) name the key,
 * the value and the reason, e.g. "%true/job_resource_manager/cpu_to_vcpu_factor: must be a
 * number greater than 0, got -1". */
int ps_node_dyncfg_check(const struct ps_value *config, struct ps_error *err);

/* Checks one node's config (the "%true" entry), as ps_node_dyncfg_check. */
int ps_node_dyncfg_check_node(const struct ps_value *node_config, struct ps_error *err);

/* The config a node applies: config's "%true" entry (NULL when there is none). Borrowed. */
const struct ps_value *ps_node_dyncfg_for_node(const struct ps_value *config);

/* The factor of a node (upstream's GetCpuToVCpuFactor) from its applied dynamic config
 * (NULL: none), its static factor (--cpu-to-vcpu-factor; 0: none) and its cpu_model (NULL or
 * "": unknown). With enable_cpu_to_vcpu_factor: the dynamic cpu_to_vcpu_factor, else the
 * static one, else the cpu_model's entry of cpu_model_to_cpu_to_vcpu_factor, else 1. Without
 * it: the static factor (poolsched's agent applies its flag on its own), else 1. */
double ps_node_dyncfg_cpu_to_vcpu_factor(const struct ps_value *node_config, double static_factor,
                                         const char *cpu_model);

#endif
