#include "core/acl.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    unsigned bit;
} permissions[] = {
    {"read", PS_PERM_READ},         {"write", PS_PERM_WRITE},
    {"use", PS_PERM_USE},           {"administer", PS_PERM_ADMINISTER},
    {"create", PS_PERM_CREATE},     {"remove", PS_PERM_REMOVE},
    {"mount", PS_PERM_MOUNT},       {"manage", PS_PERM_MANAGE},
    {"modify_children", PS_PERM_MODIFY_CHILDREN},
};
#define PERMISSION_COUNT ((int)(sizeof permissions / sizeof *permissions))

static const char *const inheritance_names[] = {
    "object_and_descendants", "object_only", "descendants_only", "immediate_descendants_only",
};

const char *ps_permission_name(unsigned permission)
{
    for (int i = 0; i < PERMISSION_COUNT; i++)
        if (permissions[i].bit == permission)
            return permissions[i].name;
    return NULL;
}

int ps_permission_parse(const char *name, unsigned *out, struct ps_error *err)
{
    for (int i = 0; i < PERMISSION_COUNT; i++) {
        if (name && strcmp(name, permissions[i].name) == 0) {
            *out = permissions[i].bit;
            return 0;
        }
    }
    return ps_error_set(err, PS_EINVAL,
                        "unknown permission \"%s\": expected read, write, use, administer, "
                        "create, remove, mount, manage or modify_children",
                        name ? name : "(null)");
}

void ps_acl_release(struct ps_acl *acl)
{
    for (int i = 0; i < acl->count; i++) {
        for (int j = 0; j < acl->aces[i].subject_count; j++)
            free(acl->aces[i].subjects[j]);
        free(acl->aces[i].subjects);
    }
    free(acl->aces);
    acl->aces = NULL;
    acl->count = 0;
}

static int bad(struct ps_error *err, const char *key, int i, const char *field,
               const struct ps_value *v, const char *why)
{
    char buf[128];
    return ps_error_set(err, PS_EINVAL, "%s/%d%s%s: %s, got %s", key, i, field ? "/" : "",
                        field ? field : "", why, ps_value_describe(v, buf, sizeof buf));
}

static int parse_subjects(const struct ps_value *v, const char *key, int i, struct ps_ace *ace,
                          struct ps_error *err)
{
    if (!v || v->type != PS_VALUE_LIST)
        return bad(err, key, i, "subjects", v ? v : &(const struct ps_value){0},
                   "must be a list of user or group names");
    ace->subjects = calloc((size_t)v->count + 1, sizeof *ace->subjects);
    if (!ace->subjects)
        return PS_ENOMEM;
    for (int j = 0; j < v->count; j++) {
        const struct ps_value *s = &v->items[j];
        if (s->type != PS_VALUE_STRING || !*s->string)
            return bad(err, key, i, "subjects", s, "a subject must be a non-empty name");
        ace->subjects[j] = strdup(s->string);
        if (!ace->subjects[j])
            return PS_ENOMEM;
        ace->subject_count = j + 1;
    }
    return 0;
}

static int parse_permissions(const struct ps_value *v, const char *key, int i,
                             struct ps_ace *ace, struct ps_error *err)
{
    static const struct ps_value missing = {0};
    if (v && v->type == PS_VALUE_STRING) {
        if (ps_permission_parse(v->string, &ace->permissions, err) == 0)
            return 0;
        ps_error_prefix(err, "%s/%d/permissions", key, i);
        return PS_EINVAL;
    }
    if (!v || v->type != PS_VALUE_LIST)
        return bad(err, key, i, "permissions", v ? v : &missing,
                   "must be a list of permission names");
    for (int j = 0; j < v->count; j++) {
        unsigned bit = 0;
        const struct ps_value *p = &v->items[j];
        if (p->type != PS_VALUE_STRING)
            return bad(err, key, i, "permissions", p, "a permission must be a name");
        if (ps_permission_parse(p->string, &bit, err)) {
            ps_error_prefix(err, "%s/%d/permissions", key, i);
            return PS_EINVAL;
        }
        ace->permissions |= bit;
    }
    return 0;
}

static int parse_enum(const struct ps_value *v, const char *const *names, int n, int *out)
{
    for (int k = 0; v && v->type == PS_VALUE_STRING && k < n; k++) {
        if (strcmp(v->string, names[k]) == 0) {
            *out = k;
            return 0;
        }
    }
    return PS_EINVAL;
}

static int parse_ace(const struct ps_value *v, const char *key, int i, struct ps_ace *ace,
                     struct ps_error *err)
{
    static const char *const actions[] = {"allow", "deny"};
    static const struct ps_value missing = {0};
    if (v->type != PS_VALUE_MAP)
        return bad(err, key, i, NULL, v, "an ACE must be a map");
    for (int k = 0; k < v->count; k++) {
        const char *name = v->keys[k];
        if (strcmp(name, "action") && strcmp(name, "subjects") && strcmp(name, "permissions") &&
            strcmp(name, "inheritance_mode"))
            return bad(err, key, i, name, &v->items[k],
                       "unknown key of an ACE (expected action, subjects, permissions, "
                       "inheritance_mode)");
    }
    const struct ps_value *action = ps_value_find(v, "action");
    int a;
    if (parse_enum(action, actions, 2, &a))
        return bad(err, key, i, "action", action ? action : &missing,
                   "must be \"allow\" or \"deny\"");
    ace->action = (enum ps_acl_action)a;
    const struct ps_value *mode = ps_value_find(v, "inheritance_mode");
    int m = PS_ACL_OBJECT_AND_DESCENDANTS;
    if (mode && mode->type != PS_VALUE_NULL && parse_enum(mode, inheritance_names, 4, &m))
        return bad(err, key, i, "inheritance_mode", mode,
                   "must be object_and_descendants, object_only, descendants_only or "
                   "immediate_descendants_only");
    ace->inheritance_mode = (enum ps_acl_inheritance)m;
    int rc = parse_subjects(ps_value_find(v, "subjects"), key, i, ace, err);
    if (rc == 0)
        rc = parse_permissions(ps_value_find(v, "permissions"), key, i, ace, err);
    return rc;
}

int ps_acl_parse(const struct ps_value *v, const char *key, struct ps_acl *out,
                 struct ps_error *err)
{
    memset(out, 0, sizeof *out);
    if (!v || v->type == PS_VALUE_NULL)
        return 0;
    if (v->type != PS_VALUE_LIST) {
        char buf[128];
        return ps_error_set(err, PS_EINVAL, "%s: must be a list of ACEs, got %s", key,
                            ps_value_describe(v, buf, sizeof buf));
    }
    if (v->count == 0)
        return 0;
    out->aces = calloc((size_t)v->count, sizeof *out->aces);
    if (!out->aces)
        return PS_ENOMEM;
    for (int i = 0; i < v->count; i++) {
        out->count = i + 1;
        int rc = parse_ace(&v->items[i], key, i, &out->aces[i], err);
        if (rc) {
            ps_acl_release(out);
            return rc;
        }
    }
    return 0;
}

static int ace_to_value(const struct ps_ace *ace, struct ps_value *out)
{
    struct ps_value subjects = ps_value_list(), perms = ps_value_list();
    *out = ps_value_map();
    int rc = ps_value_put_string(out, "action", ace->action == PS_ACL_DENY ? "deny" : "allow");
    for (int j = 0; rc == 0 && j < ace->subject_count; j++) {
        struct ps_value s = ps_value_string(ace->subjects[j]);
        rc = s.type == PS_VALUE_STRING ? ps_value_append(&subjects, &s) : PS_ENOMEM;
    }
    for (int k = 0; rc == 0 && k < PERMISSION_COUNT; k++) {
        if (!(ace->permissions & permissions[k].bit))
            continue;
        struct ps_value s = ps_value_string(permissions[k].name);
        rc = s.type == PS_VALUE_STRING ? ps_value_append(&perms, &s) : PS_ENOMEM;
    }
    if (rc == 0)
        rc = ps_value_put(out, "subjects", &subjects);
    if (rc == 0)
        rc = ps_value_put(out, "permissions", &perms);
    if (rc == 0)
        rc = ps_value_put_string(out, "inheritance_mode",
                                 inheritance_names[ace->inheritance_mode]);
    if (rc) {
        ps_value_release(&subjects);
        ps_value_release(&perms);
        ps_value_release(out);
    }
    return rc;
}

int ps_acl_to_value(const struct ps_acl *acl, struct ps_value *out)
{
    *out = ps_value_list();
    for (int i = 0; i < acl->count; i++) {
        struct ps_value ace;
        int rc = ace_to_value(&acl->aces[i], &ace);
        if (rc == 0 && (rc = ps_value_append(out, &ace)) != 0)
            ps_value_release(&ace);
        if (rc) {
            ps_value_release(out);
            return rc;
        }
    }
    return 0;
}

int ps_acl_copy(struct ps_acl *dst, const struct ps_acl *src)
{
    struct ps_value v;
    int rc = ps_acl_to_value(src, &v);
    if (rc)
        return rc;
    rc = ps_acl_parse(&v, "acl", dst, NULL);
    ps_value_release(&v);
    return rc;
}

/* The ACE index path names (0 <= index < count, or count for "end" when allow_end), and the
 * field after it (NULL for the whole ACE). -1 when it names none. */
static int path_index(const char *path, int count, bool allow_end, const char **field)
{
    size_t n = strcspn(path, "/");
    *field = path[n] == '/' ? path + n + 1 : NULL;
    if (allow_end && n == 3 && strncmp(path, "end", 3) == 0 && !*field)
        return count;
    int index = 0;
    for (size_t i = 0; i < n; i++) {
        if (path[i] < '0' || path[i] > '9' || index > 100000)
            return -1;
        index = index * 10 + (path[i] - '0');
    }
    if (n == 0 || index >= count || (*field && (!**field || strchr(*field, '/'))))
        return -1;
    return index;
}

int ps_acl_set_path(struct ps_acl *acl, const char *path, const struct ps_value *value,
                    const char *full, struct ps_error *err)
{
    const char *field;
    int index = path_index(path, acl->count, true, &field);
    if (index < 0)
        return ps_error_set(err, PS_EINVAL, "%s: no such ACE (the ACL has %d)", full, acl->count);
    static const struct ps_value null = {0};
    if (!value)
        value = &null;
    struct ps_value list;
    int rc = ps_acl_to_value(acl, &list);
    if (rc)
        return rc;
    struct ps_value next = ps_value_list(), copy;
    for (int i = 0; rc == 0 && i <= list.count; i++) {
        bool here = i == index;
        if (!here && i == list.count)
            break;
        if (here && !field && value->type == PS_VALUE_NULL)
            continue;   /* removed */
        rc = ps_value_copy(&copy, here && !field ? value : &list.items[i]);
        if (rc == 0 && here && field) {
            struct ps_value v;
            rc = value->type == PS_VALUE_NULL ? 0 : ps_value_copy(&v, value);
            if (rc == 0 && copy.type == PS_VALUE_MAP) {
                struct ps_value without;
                const char *const skip[] = {field, NULL};
                rc = ps_value_map_without(&copy, skip, &without);
                ps_value_release(&copy);
                copy = without;
                if (rc == 0 && value->type != PS_VALUE_NULL)
                    rc = ps_value_put(&copy, field, &v);
            }
        }
        if (rc == 0)
            rc = ps_value_append(&next, &copy);
    }
    struct ps_acl parsed;
    if (rc == 0 && (rc = ps_acl_parse(&next, full, &parsed, err)) == 0) {
        ps_acl_release(acl);
        *acl = parsed;
    }
    ps_value_release(&next);
    ps_value_release(&list);
    return rc;
}

int ps_acl_get_path(const struct ps_acl *acl, const char *path, struct ps_value *out,
                    const char *full, struct ps_error *err)
{
    const char *field;
    *out = ps_value_null();
    int index = path_index(path, acl->count, false, &field);
    if (index < 0)
        return ps_error_set(err, PS_EINVAL, "%s: no such ACE (the ACL has %d)", full, acl->count);
    struct ps_value ace;
    int rc = ace_to_value(&acl->aces[index], &ace);
    if (rc)
        return rc;
    const struct ps_value *part = field ? ps_value_find(&ace, field) : &ace;
    rc = part ? ps_value_copy(out, part)
              : ps_error_set(err, PS_EINVAL, "%s: an ACE has no key \"%s\"", full, field);
    ps_value_release(&ace);
    return rc;
}

/* ---- subjects ------------------------------------------------------------------------------ */

static const struct ps_acl_group *find_group(const struct ps_acl_groups *groups,
                                             const char *name)
{
    for (int i = 0; groups && i < groups->count; i++)
        if (strcmp(groups->groups[i].name, name) == 0)
            return &groups->groups[i];
    return NULL;
}

/* Whether `who` (user or group) is in group `g`, through at most `depth` levels of nesting
 * (the number of groups bounds any chain without a cycle). */
static bool in_group(const struct ps_acl_groups *groups, const char *who, const char *g,
                     int depth)
{
    if (strcmp(g, PS_ACL_EVERYONE) == 0 || strcmp(g, PS_ACL_USERS) == 0)
        return true;
    if (strcmp(g, PS_ACL_SUPERUSERS) == 0 && strcmp(who, PS_ACL_ROOT) == 0)
        return true;
    const struct ps_acl_group *group = find_group(groups, g);
    if (!group || depth < 0)
        return false;
    for (int i = 0; i < group->member_count; i++) {
        const char *m = group->members[i];
        if (strcmp(m, who) == 0)
            return true;
        if (find_group(groups, m) && in_group(groups, who, m, depth - 1))
            return true;
    }
    return false;
}

bool ps_acl_member(const struct ps_acl_groups *groups, const char *user, const char *subject)
{
    if (strcmp(user, subject) == 0)
        return true;
    return in_group(groups, user, subject, groups ? groups->count : 0);
}

bool ps_acl_superuser(const struct ps_acl_groups *groups, const char *user)
{
    return ps_acl_member(groups, user, PS_ACL_SUPERUSERS);
}

/* ---- the check ----------------------------------------------------------------------------- */

static bool applies_at(enum ps_acl_inheritance mode, int depth)
{
    switch (mode) {
    case PS_ACL_OBJECT_AND_DESCENDANTS: return true;
    case PS_ACL_OBJECT_ONLY: return depth == 0;
    case PS_ACL_DESCENDANTS_ONLY: return depth >= 1;
    case PS_ACL_IMMEDIATE_DESCENDANTS_ONLY: return depth == 1;
    }
    return false;
}

static const char *matching_subject(const struct ps_ace *ace, const struct ps_acl_groups *groups,
                                    const char *user)
{
    for (int j = 0; j < ace->subject_count; j++)
        if (ps_acl_member(groups, user, ace->subjects[j]))
            return ace->subjects[j];
    return NULL;
}

const struct ps_ace *ps_acl_next(const struct ps_acl_object *chain, int count, int *d, int *i)
{
    for (; *d < count; (*d)++, *i = 0) {
        const struct ps_acl *acl = chain[*d].acl;
        while (acl && *i < acl->count) {
            const struct ps_ace *ace = &acl->aces[(*i)++];
            if (applies_at(ace->inheritance_mode, *d))
                return ace;
        }
        if (!chain[*d].inherit_acl) {
            *d = count;
            break;
        }
    }
    return NULL;
}

struct ps_acl_result ps_acl_check(const struct ps_acl_object *chain, int count,
                                  const struct ps_acl_groups *groups, const char *user,
                                  unsigned permission)
{
    struct ps_acl_result deny = {PS_ACL_DENY, NULL, NULL};
    if (ps_acl_superuser(groups, user))
        return (struct ps_acl_result){PS_ACL_ALLOW, NULL, NULL};
    struct ps_acl_result allow = deny;
    bool allowed = false;
    int d = 0, i = 0;
    const struct ps_ace *ace;
    while ((ace = ps_acl_next(chain, count, &d, &i))) {
        if (!(ace->permissions & permission))
            continue;
        const char *subject = matching_subject(ace, groups, user);
        if (!subject)
            continue;
        if (ace->action == PS_ACL_DENY)
            return (struct ps_acl_result){PS_ACL_DENY, chain[d].name, subject};
        if (!allowed)
            allow = (struct ps_acl_result){PS_ACL_ALLOW, chain[d].name, subject};
        allowed = true;
    }
    return allowed ? allow : deny;
}

int ps_acl_effective(const struct ps_acl_object *chain, int count, struct ps_value *out)
{
    *out = ps_value_list();
    int d = 0, i = 0, rc = 0;
    const struct ps_ace *ace;
    while (rc == 0 && (ace = ps_acl_next(chain, count, &d, &i))) {
        struct ps_value v;
        if ((rc = ace_to_value(ace, &v)) != 0)
            break;
        if ((rc = ps_value_put_string(&v, "from", chain[d].name)) == 0)
            rc = ps_value_append(out, &v);
        if (rc != 0)
            ps_value_release(&v);
    }
    if (rc != 0)
        ps_value_release(out);
    return rc;
}

int ps_acl_denied(struct ps_error *err, const char *user, unsigned permission,
                  const char *object, const struct ps_acl_result *result)
{
    const char *perm = ps_permission_name(permission);
    if (result && result->object && result->subject)
        return ps_error_set(err, PS_EPERM,
                            "Access denied for user \"%s\": \"%s\" permission for %s is denied "
                            "for \"%s\" by ACE at %s",
                            user, perm ? perm : "?", object, result->subject, result->object);
    return ps_error_set(err, PS_EPERM,
                        "Access denied for user \"%s\": \"%s\" permission for %s is not allowed "
                        "by any matching ACE",
                        user, perm ? perm : "?", object);
}
