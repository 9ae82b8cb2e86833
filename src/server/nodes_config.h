/* nodes_config.h — //sys/cluster_nodes/@config (nodes_config.c): the nodes' dynamic config
 * (core/node_dyncfg.h), read and set through Cypress, stored, and given to agents in their
 * heartbeat replies when theirs is older. Under svc->mu. */
#ifndef PS_SERVER_NODES_CONFIG_H
#define PS_SERVER_NODES_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;

bool ps_nodes_config_claims(const char *path);
int ps_nodes_config_get(struct ps_service *svc, const char *path, json_t **out,
                        struct ps_error *err);
/* The whole @config (value NULL: remove). Checked, or refused with nothing changed. */
int ps_nodes_config_set(struct ps_service *svc, const char *path, const json_t *value,
                        struct ps_error *err);
/* At load: the stored config and its version, if any. */
int ps_nodes_config_load(struct ps_service *svc, struct ps_error *err);
/* What a heartbeat reply carries for a node that has version node_version: 0 and nothing when
 * it is current, else sets *config (a new reference to the node's config, {} when none) and
 * *version. */
void ps_nodes_config_for_node(struct ps_service *svc, uint64_t node_version, json_t **config,
                              uint64_t *version);

#endif
