/* sched_config.h — //sys/scheduler/config (sched_config.c): template_pool_tree_config_map and
 * default_tentative_pool_trees, read and set through Cypress, stored, loaded before the trees.
 * Under svc->mu. */
#ifndef PS_SERVER_SCHED_CONFIG_H
#define PS_SERVER_SCHED_CONFIG_H

#include <stdbool.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;

bool ps_sched_config_claims(const char *path);
int ps_sched_config_get(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err);
/* value NULL: remove. Checked and applied to every tree, or refused with nothing changed. */
int ps_sched_config_set(struct ps_service *svc, const char *path, const json_t *value,
                        struct ps_error *err);
void ps_persist_sched_config(struct ps_service *svc);
/* At load, before the trees: the stored config, if any. */
int ps_sched_config_load(struct ps_service *svc, struct ps_error *err);

#endif
