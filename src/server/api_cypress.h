/* api_cypress.h — the Cypress face (api_cypress.c, api_orchid.c, api_operations.c): get, list,
 * exists, set, create, move, remove and dry runs on //sys/pool_trees and //sys/scheduler,
 * permission checks, and orchid. Under svc->mu. */
#ifndef PS_SERVER_API_CYPRESS_H
#define PS_SERVER_API_CYPRESS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/error.h"

struct ps_service;
struct ps_auth_identity;
struct ps_pool_tree;

int ps_cypress_get(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err);
int ps_cypress_list(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err);
int ps_cypress_exists(struct ps_service *svc, const char *path, bool *out, struct ps_error *err);
int ps_cypress_set(struct ps_service *svc, const struct ps_auth_identity *who, const char *path,
                   const json_t *value, struct ps_error *err);
int ps_cypress_create(struct ps_service *svc, const struct ps_auth_identity *who,
                      const json_t *body, struct ps_error *err);
/* move {source_path, destination_path} of a pool within its tree (admin; docs/api.md). */
int ps_cypress_move(struct ps_service *svc, const struct ps_auth_identity *who,
                    const json_t *body, struct ps_error *err);
/* transfer_pool_resources {source_pool, destination_pool, pool_tree (default: the default
 * tree), resource_delta} (admin; docs/api.md). */
int ps_cypress_transfer_pool_resources(struct ps_service *svc, const struct ps_auth_identity *who,
                                       const json_t *body, struct ps_error *err);
int ps_cypress_remove(struct ps_service *svc, const struct ps_auth_identity *who,
                      const char *path, struct ps_error *err);
/* set, create or remove with dry_run (docs/api.md "Dry run"): the same validation on a copy of
 * the tree, the fair share before and after as *reply, nothing applied or journalled. */
int ps_cypress_dry_run(struct ps_service *svc, const struct ps_auth_identity *who,
                       const char *command, const json_t *body, json_t **reply,
                       struct ps_error *err);
/* check_permission {user, permission, path} on //sys/pool_trees and below, or an operation
 * (//sys/operations/<id>): {"action": "allow" or "deny"} as upstream's, by the user's groups,
 * for any caller (api_cypress.c). */
int ps_cypress_check_permission(struct ps_service *svc, const json_t *body, json_t **reply,
                                struct ps_error *err);
/* Whether user has permission (one bit) on operation id by its ACL (api_operations.c).
 * Errors: PS_ENOENT (no such operation). */
int ps_api_op_permission(struct ps_service *svc, const char *id, const char *user,
                         unsigned permission, bool *allowed, struct ps_error *err);
int ps_orchid_get(struct ps_service *svc, char **names, size_t count, json_t **out,
                  struct ps_error *err);
/* api_cypress.c: after a tree changed (persist it, wake the loop, report started operations). */
void ps_cypress_tree_changed(struct ps_service *svc, struct ps_pool_tree *tree);

#endif
