/* acl.h — access control lists as YTsaurus has them: parsing, and the permission check.
 *
 * An ACL is a list of ACEs (access control entries), each
 *   {action: "allow" | "deny", subjects: [user or group names], permissions: [names],
 *    inheritance_mode: "object_and_descendants" (default) | "object_only" |
 *                      "descendants_only" | "immediate_descendants_only"}
 * with upstream's names: `permissions` may also be one name instead of a list, as upstream's
 * make_ace accepts. Permissions: read, write, use, administer, create, remove, mount, manage,
 * modify_children.
 *
 * The check (ps_acl_check), as upstream's security manager does it for one permission:
 *   - the user's subjects are the user itself, the built-in groups `everyone` and `users`
 *     (every user belongs to both), and every group that lists one of its subjects as a
 *     member, transitively (nested groups; cycles are harmless);
 *   - a member of `superusers` (`root` always is) is allowed everything without looking at
 *     ACLs;
 *   - the object's ACL is read, then its parent's, up the chain, stopping after the first
 *     object whose inherit_acl is false; at the object itself ACEs with object_only and
 *     object_and_descendants apply, at its parent also immediate_descendants_only, at every
 *     ancestor object_and_descendants and descendants_only;
 *   - an ACE matches when one of its subjects is one of the user's and it lists the
 *     permission; any matching deny wins, wherever it is; else a matching allow allows; else
 *     the answer is deny ("not allowed by any matching ACE").
 *
 * Pure: no I/O; the caller gives the chain of ACLs and the groups.
 */
#ifndef PS_CORE_ACL_H
#define PS_CORE_ACL_H

#include <stdbool.h>

#include "core/error.h"
#include "core/value.h"

/* upstream's EPermission bits */
enum ps_permission {
    PS_PERM_READ = 0x0001,
    PS_PERM_WRITE = 0x0002,
    PS_PERM_USE = 0x0004,
    PS_PERM_ADMINISTER = 0x0008,
    PS_PERM_CREATE = 0x0100,
    PS_PERM_REMOVE = 0x0200,
    PS_PERM_MOUNT = 0x0400,
    PS_PERM_MANAGE = 0x0800,
    PS_PERM_MODIFY_CHILDREN = 0x1000,
};

enum ps_acl_action { PS_ACL_ALLOW = 0, PS_ACL_DENY = 1 };

enum ps_acl_inheritance {
    PS_ACL_OBJECT_AND_DESCENDANTS = 0,
    PS_ACL_OBJECT_ONLY,
    PS_ACL_DESCENDANTS_ONLY,
    PS_ACL_IMMEDIATE_DESCENDANTS_ONLY,
};

#define PS_ACL_EVERYONE "everyone"
#define PS_ACL_USERS "users"
#define PS_ACL_SUPERUSERS "superusers"
#define PS_ACL_ROOT "root"

struct ps_ace {
    enum ps_acl_action action;
    int subject_count;
    char **subjects;               /* owned */
    unsigned permissions;          /* enum ps_permission bits */
    enum ps_acl_inheritance inheritance_mode;
};

struct ps_acl {
    int count;
    struct ps_ace *aces;           /* owned */
};

/* The name of one permission bit ("use"), or NULL. */
const char *ps_permission_name(unsigned permission);

/* Parses a permission name. Errors: PS_EINVAL naming the value and listing the valid ones. */
int ps_permission_parse(const char *name, unsigned *out, struct ps_error *err);

/* Parses an ACL (a list of ACE maps; null = empty) into *out (uninitialised on entry; holds
 * nothing on error). key names the attribute in messages
 * ("acl/0/action: ..."). Errors: PS_EINVAL naming the key, the value and the reason (unknown
 * ACE key, missing action/subjects/permissions, unknown permission, empty subject), PS_ENOMEM. */
int ps_acl_parse(const struct ps_value *v, const char *key, struct ps_acl *out,
                 struct ps_error *err);

/* The ACL as upstream shows it: a list of maps with all four keys. Returns 0 or PS_ENOMEM. */
int ps_acl_to_value(const struct ps_acl *acl, struct ps_value *out);

/* Deep copy (dst uninitialised; holds nothing on failure). Returns 0 or PS_ENOMEM. */
int ps_acl_copy(struct ps_acl *dst, const struct ps_acl *src);

void ps_acl_release(struct ps_acl *acl);

/* Sets one part of acl as YPath reaches into a list: path "N" replaces ACE N (null removes
 * it), "end" appends, "N/field" sets one key of ACE N (action, subjects, permissions,
 * inheritance_mode). The result is checked as a whole; on error acl is unchanged. full names
 * the key in messages. Errors: PS_EINVAL (no such ACE, a bad result), PS_ENOMEM. */
int ps_acl_set_path(struct ps_acl *acl, const char *path, const struct ps_value *value,
                    const char *full, struct ps_error *err);

/* Reads "N" or "N/field" of acl into *out. Errors: PS_EINVAL when there is none. */
int ps_acl_get_path(const struct ps_acl *acl, const char *path, struct ps_value *out,
                    const char *full, struct ps_error *err);

/* A group: its name and its members (user or group names). */
struct ps_acl_group {
    const char *name;
    int member_count;
    const char *const *members;
};

/* Every group of the cluster (the built-ins everyone and users need not be listed: every user
 * is in them; superusers, when listed, adds members to root). */
struct ps_acl_groups {
    int count;
    const struct ps_acl_group *groups;
};

/* Whether subject (a user or group name) is `user` or a group user belongs to (directly,
 * through nested groups, or as a built-in). */
bool ps_acl_member(const struct ps_acl_groups *groups, const char *user, const char *subject);

/* Whether user is a superuser (root, or a member of superusers). */
bool ps_acl_superuser(const struct ps_acl_groups *groups, const char *user);

/* One object of the chain a check walks: its ACL, inherit_acl, and its name for messages
 * ("node //sys/pool_trees/t/p"). */
struct ps_acl_object {
    const struct ps_acl *acl;      /* NULL = empty */
    bool inherit_acl;
    const char *name;
};

struct ps_acl_result {
    enum ps_acl_action action;
    const char *object;            /* the object whose ACE decided (a deny's), or NULL */
    const char *subject;           /* the ACE's subject that matched, or NULL */
};

/* Checks permission (one bit) for user on chain[0], whose ancestors are chain[1..count)
 * (parent first). Never fails. */
struct ps_acl_result ps_acl_check(const struct ps_acl_object *chain, int count,
                                  const struct ps_acl_groups *groups, const char *user,
                                  unsigned permission);

/* The ACEs a check on chain (as ps_acl_check's) reads, in its order: those of chain[d] whose
 * inheritance_mode applies at depth d, up to the first object whose inherit_acl is false.
 * *d and *i start at 0; returns the next ACE (of chain[*d]), NULL after the last. */
const struct ps_ace *ps_acl_next(const struct ps_acl_object *chain, int count, int *d, int *i);

/* The effective ACL of chain[0]: the ACEs ps_acl_next walks, each as ps_acl_to_value shows it
 * plus "from", the name of the object it is set on ("node //sys/pool_trees/t/p"). Returns 0 or
 * PS_ENOMEM. */
int ps_acl_effective(const struct ps_acl_object *chain, int count, struct ps_value *out);

/* Sets err to upstream's authorization error for a denied result (PS_EPERM): `Access denied
 * for user "u": "use" permission for node //x is denied for "g" by ACE at node //y`, or `...
 * is not allowed by any matching ACE`. Returns PS_EPERM. */
int ps_acl_denied(struct ps_error *err, const char *user, unsigned permission,
                  const char *object, const struct ps_acl_result *result);

#endif
