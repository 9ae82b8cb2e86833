/* user_pool_map.h — //sys/scheduler/user_to_default_pool: the scheduler's map of users to their
 * default parent pools (core/user_pools.h) in the Cypress face (user_pool_map.c says how).
 * Callers hold svc->mu. */
#ifndef PS_SERVER_USER_POOL_MAP_H
#define PS_SERVER_USER_POOL_MAP_H

#include <jansson.h>
#include <stdbool.h>

#include "core/error.h"

struct ps_service;

/* True for //sys/scheduler/user_to_default_pool and the paths below it. */
bool ps_user_pool_map_claims(const char *path);
/* The map, or one user's pool (PS_ENOENT when the map does not name the user); *out owned. */
int ps_user_pool_map_get(struct ps_service *svc, const char *path, json_t **out,
                         struct ps_error *err);
/* Sets the map (value null: empty) or one user's pool; value NULL removes the map's content or
 * one user (PS_ENOENT when absent). Validated by the engine first (PS_EINVAL naming the user,
 * the pool and the tree): a refused write changes nothing. Journalled, logged. */
int ps_user_pool_map_set(struct ps_service *svc, const char *path, const json_t *value,
                         struct ps_error *err);
/* Restores the stored map at start, after the trees and before the operations. */
int ps_user_pool_map_load(struct ps_service *svc, struct ps_error *err);

#endif
