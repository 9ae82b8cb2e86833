/* security.h — users, groups and the ACL of //sys/pool_trees, as YTsaurus has them
 * (docs/api.md "Users, groups and ACLs"; the check itself is core/acl.h, on pools
 * core/pool_acl.h).
 *
 * Objects: //sys/users/<name> and //sys/groups/<name> (`create` with type user or group,
 * `remove`, `add_member`, `remove_member`), and the attribute //sys/pool_trees/@acl. Built-ins
 * as upstream's: the users root and admin (the bootstrap admin); the groups everyone and users
 * (every user is a member of both), superusers (root and admin are members, always; a member
 * is allowed everything). Users and groups share one namespace. A group may hold groups (no
 * cycles: refused as upstream does).
 *
 * Tokens and roles: a token belongs to a user (auth.h); a token of a removed user (kept in the
 * store as removed until created again) does not authenticate, as upstream's (api.c), while a
 * user never created is an ordinary one (tokens came before users). Its role maps onto this
 * model: admin acts as a member of superusers in every check the API makes; user is an
 * ordinary user (ACLs decide); node tokens reach only the node endpoints. The checks the
 * engine makes (the `use` check of an operation's start or pool change) see the request's
 * caller through ps_security_set_caller. check_permission answers from group membership
 * alone: it tells what a user may do, whatever token asks.
 *
 * Durable: each user, group and the root ACL is an object of the store (kinds "user",
 * "group", "acl"), journalled with the change. Everything here runs under svc->mu.
 */
#ifndef PS_SERVER_SECURITY_H
#define PS_SERVER_SECURITY_H

#include <stdbool.h>

#include <jansson.h>

#include "core/pool_acl.h"
#include "server/auth.h"
#include "server/store.h"

#define PS_SECURITY_ADMIN_USER "admin"

struct ps_security;
struct ps_service;

/* An empty model (built-ins only). NULL when out of memory. */
struct ps_security *ps_security_new(void);
void ps_security_free(struct ps_security *sec);

/* Reads the stored users, groups and root ACL into a fresh model. Errors: PS_EIO (a stored
 * document that is not one), those of the store. */
int ps_security_load(struct ps_store *store, struct ps_security **out, struct ps_error *err);

/* The groups and root ACL for core/pool_acl.h; valid until the next change of sec. */
const struct ps_pool_access *ps_security_access(const struct ps_security *sec);

/* Makes the access (ps_security_access) treat who as a superuser while its request runs, when
 * its token is an admin one (acting_superuser, core/pool_acl.h); NULL ends it. who must stay
 * alive until then. */
void ps_security_set_caller(struct ps_security *sec, const struct ps_auth_identity *who);

/* Whether name is a removed user (not created again since): its tokens fail to authenticate,
 * as upstream's (`No such user`). A user never created is not one. */
bool ps_security_user_removed(const struct ps_security *sec, const char *name);

/* Whether who is allowed everything: an admin token, or a member of superusers. */
bool ps_security_superuser(const struct ps_security *sec, const struct ps_auth_identity *who);

/* 0 when who is a superuser, else PS_EPERM: `Access denied for user "u": <what> needs a
 * member of superusers`. */
int ps_security_require_superuser(struct ps_service *svc, const struct ps_auth_identity *who,
                                  const char *what, struct ps_error *err);

/* Whether path names the users and groups (//sys/users..., //sys/groups...). */
bool ps_security_claims(const char *path);

/* get, list, exists on //sys/users[/<name>[/@...]] and //sys/groups[/<name>[/@members]]. */
int ps_security_get(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err);
int ps_security_list(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err);
bool ps_security_exists(struct ps_service *svc, const char *path);

/* create with type user or group (attributes/name, or path //sys/users/<name>);
 * Errors: PS_EPERM unless a superuser, PS_EINVAL for a bad name, PS_EEXIST. */
int ps_security_create(struct ps_service *svc, const struct ps_auth_identity *who,
                       const json_t *body, struct ps_error *err);
/* remove //sys/users/<name> or //sys/groups/<name> (built-ins refused). */
int ps_security_remove(struct ps_service *svc, const struct ps_auth_identity *who,
                       const char *path, struct ps_error *err);
/* add_member / remove_member {member, group}. */
int ps_security_member(struct ps_service *svc, const struct ps_auth_identity *who, bool add,
                       const json_t *body, struct ps_error *err);

/* //sys/pool_trees/@acl: the ACL as upstream shows it, and its replacement (administer on
 * //sys/pool_trees, i.e. superusers by default). */
json_t *ps_security_root_acl(const struct ps_security *sec);
int ps_security_set_root_acl(struct ps_service *svc, const struct ps_auth_identity *who,
                             const json_t *value, struct ps_error *err);

#endif
