#include "server/security.h"

#include <stdlib.h>
#include <string.h>

#include "io/json_value.h"
#include "io/ypath.h"
#include "server/journal.h"
#include "server/service_state.h"
#include "server/svc_log.h"

struct sec_group {
    char *name;
    int count;
    char **members;                 /* owned */
};

struct ps_security {
    int user_count;
    char **users;                   /* created users (root is built in) */
    int removed_count;
    char **removed;                 /* removed users, not created again: their tokens fail */
    int group_count;
    struct sec_group *groups;       /* created groups and superusers */
    struct ps_acl root_acl;         /* //sys/pool_trees */
    /* the view core/acl.h reads, rebuilt after every change */
    struct ps_acl_group *view;
    struct ps_acl_groups view_groups;
    struct ps_pool_access access;
};

static const char *const builtin_groups[] = {PS_ACL_EVERYONE, PS_ACL_USERS, PS_ACL_SUPERUSERS};

static bool builtin_group(const char *name)
{
    for (size_t i = 0; i < sizeof builtin_groups / sizeof *builtin_groups; i++)
        if (strcmp(name, builtin_groups[i]) == 0)
            return true;
    return false;
}

static int find_user(const struct ps_security *sec, const char *name)
{
    for (int i = 0; i < sec->user_count; i++)
        if (strcmp(sec->users[i], name) == 0)
            return i;
    return -1;
}

static struct sec_group *find_group(const struct ps_security *sec, const char *name)
{
    for (int i = 0; i < sec->group_count; i++)
        if (strcmp(sec->groups[i].name, name) == 0)
            return &sec->groups[i];
    return NULL;
}

static bool builtin_user(const char *name)
{
    return strcmp(name, PS_ACL_ROOT) == 0 || strcmp(name, PS_SECURITY_ADMIN_USER) == 0;
}

static bool is_user(const struct ps_security *sec, const char *name)
{
    return builtin_user(name) || find_user(sec, name) >= 0;
}

static bool is_group(const struct ps_security *sec, const char *name)
{
    return builtin_group(name) || find_group(sec, name) != NULL;
}

static int rebuild_view(struct ps_security *sec)
{
    struct ps_acl_group *view = calloc((size_t)sec->group_count + 1, sizeof *view);
    if (!view)
        return PS_ENOMEM;
    for (int i = 0; i < sec->group_count; i++)
        view[i] = (struct ps_acl_group){sec->groups[i].name, sec->groups[i].count,
                                        (const char *const *)sec->groups[i].members};
    free(sec->view);
    sec->view = view;
    sec->view_groups = (struct ps_acl_groups){sec->group_count, view};
    sec->access = (struct ps_pool_access){&sec->view_groups, &sec->root_acl,
                                          sec->access.acting_superuser};
    return 0;
}

static int add_string(char ***items, int *count, const char *s)
{
    char **grown = realloc(*items, (size_t)(*count + 1) * sizeof **items);
    if (!grown)
        return PS_ENOMEM;
    *items = grown;
    if (!(grown[*count] = strdup(s)))
        return PS_ENOMEM;
    (*count)++;
    return 0;
}

static void drop_string(char **items, int *count, int i)
{
    free(items[i]);
    memmove(&items[i], &items[i + 1], (size_t)(*count - i - 1) * sizeof *items);
    (*count)--;
}

static struct sec_group *add_group(struct ps_security *sec, const char *name)
{
    struct sec_group *grown = realloc(sec->groups, (size_t)(sec->group_count + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    sec->groups = grown;
    struct sec_group *g = &grown[sec->group_count];
    memset(g, 0, sizeof *g);
    if (!(g->name = strdup(name)))
        return NULL;
    sec->group_count++;
    return g;
}

struct ps_security *ps_security_new(void)
{
    struct ps_security *sec = calloc(1, sizeof *sec);
    if (!sec)
        return NULL;
    struct sec_group *su = add_group(sec, PS_ACL_SUPERUSERS);
    if (!su || add_string(&su->members, &su->count, PS_SECURITY_ADMIN_USER) != 0 ||
        ps_pool_trees_default_acl(&sec->root_acl) != 0 || rebuild_view(sec) != 0) {
        ps_security_free(sec);
        return NULL;
    }
    return sec;
}

void ps_security_free(struct ps_security *sec)
{
    if (!sec)
        return;
    for (int i = 0; i < sec->user_count; i++)
        free(sec->users[i]);
    free(sec->users);
    for (int i = 0; i < sec->removed_count; i++)
        free(sec->removed[i]);
    free(sec->removed);
    for (int i = 0; i < sec->group_count; i++) {
        for (int j = 0; j < sec->groups[i].count; j++)
            free(sec->groups[i].members[j]);
        free(sec->groups[i].members);
        free(sec->groups[i].name);
    }
    free(sec->groups);
    ps_acl_release(&sec->root_acl);
    free(sec->view);
    free(sec);
}

const struct ps_pool_access *ps_security_access(const struct ps_security *sec)
{
    return sec ? &sec->access : NULL;
}

void ps_security_set_caller(struct ps_security *sec, const struct ps_auth_identity *who)
{
    if (sec)
        sec->access.acting_superuser = who && who->role == PS_ROLE_ADMIN ? who->user : NULL;
}

static int find_removed(const struct ps_security *sec, const char *name)
{
    for (int i = 0; i < sec->removed_count; i++)
        if (strcmp(sec->removed[i], name) == 0)
            return i;
    return -1;
}

bool ps_security_user_removed(const struct ps_security *sec, const char *name)
{
    return sec && find_removed(sec, name) >= 0;
}

bool ps_security_superuser(const struct ps_security *sec, const struct ps_auth_identity *who)
{
    if (!who || who->role == PS_ROLE_ADMIN)
        return true;   /* in-process callers without an identity are the service itself */
    return ps_acl_superuser(sec ? &sec->view_groups : NULL, who->user);
}

/* ---- loading ------------------------------------------------------------------------------- */

struct load_ctx {
    struct ps_security *sec;
    const char *kind;
    int rc;
};

static int load_one(const char *key, const char *value, void *ctx)
{
    struct load_ctx *c = ctx;
    json_t *doc = json_loads(value, 0, NULL);
    int rc = 0;
    if (strcmp(c->kind, "user") == 0) {
        if (json_is_true(json_object_get(doc, "removed")))
            rc = add_string(&c->sec->removed, &c->sec->removed_count, key);
        else
            rc = add_string(&c->sec->users, &c->sec->user_count, key);
    } else if (strcmp(c->kind, "group") == 0) {
        struct sec_group *g = find_group(c->sec, key);
        if (!g)
            g = add_group(c->sec, key);
        if (!g)
            rc = PS_ENOMEM;
        size_t i;
        json_t *m;
        json_array_foreach(json_object_get(doc, "members"), i, m) {
            const char *name = json_string_value(m);
            if (rc == 0 && name && strcmp(name, PS_SECURITY_ADMIN_USER) != 0)
                rc = add_string(&g->members, &g->count, name);
        }
    } else if (strcmp(key, "//sys/pool_trees") == 0) {
        struct ps_value v;
        struct ps_acl acl;
        rc = ps_json_to_value(json_object_get(doc, "acl"), &v, NULL);
        if (rc == 0) {
            rc = ps_acl_parse(&v, "acl", &acl, NULL);
            ps_value_release(&v);
        }
        if (rc == 0) {
            ps_acl_release(&c->sec->root_acl);
            c->sec->root_acl = acl;
        }
    }
    json_decref(doc);
    c->rc = rc;
    return rc;
}

int ps_security_load(struct ps_store *store, struct ps_security **out, struct ps_error *err)
{
    *out = NULL;
    struct ps_security *sec = ps_security_new();
    if (!sec)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    static const char *const kinds[] = {"user", "group", "acl"};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        struct load_ctx c = {sec, kinds[k], 0};
        int rc = ps_store_list(store, kinds[k], NULL, load_one, &c, err);
        if (rc == 0 && c.rc != 0)
            rc = c.rc;
        if (rc != 0) {
            ps_security_free(sec);
            if (rc == PS_EINVAL || rc == PS_ENOMEM)
                return ps_error_set(err, PS_EIO, "the stored %s documents cannot be read",
                                    kinds[k]);
            return rc;
        }
    }
    if (rebuild_view(sec) != 0) {
        ps_security_free(sec);
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    }
    *out = sec;
    return 0;
}

/* ---- persisting ---------------------------------------------------------------------------- */

static void persist_group(struct ps_service *svc, const struct sec_group *g)
{
    json_t *members = json_array();
    for (int j = 0; j < g->count; j++)
        json_array_append_new(members, json_string(g->members[j]));
    ps_journal_put(svc->journal, "group", g->name, json_pack("{s:o}", "members", members));
}

/* ---- reading ------------------------------------------------------------------------------- */

static bool under(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool ps_security_claims(const char *path)
{
    return path && (under(path, "//sys/users") || under(path, "//sys/groups"));
}

/* Parses //sys/users[/<name>][/@attr] or //sys/groups/...: *users, name ("" for the map) and
 * attr ("" for none). */
static int parse_path(const char *path, bool *users, char *name, size_t name_cap, char *attr,
                      size_t attr_cap, struct ps_error *err)
{
    struct ps_ypath p;
    ps_ypath_init(&p);
    int rc = ps_ypath_parse(path, &p, err);
    if (rc == 0 && (p.node_count < 2 || p.node_count > 3 || p.attr_count > 1 || p.all_attrs))
        rc = ps_error_set(err, PS_ENOENT, "path %s does not exist", path);
    if (rc == 0) {
        *users = strcmp(p.nodes[1], "users") == 0;
        snprintf(name, name_cap, "%s", p.node_count == 3 ? p.nodes[2] : "");
        snprintf(attr, attr_cap, "%s", p.attr_count ? p.attrs[0] : "");
    }
    ps_ypath_release(&p);
    return rc;
}

static json_t *member_of(const struct ps_security *sec, const char *name)
{
    json_t *arr = json_array();
    for (int i = 0; i < sec->group_count; i++)
        for (int j = 0; j < sec->groups[i].count; j++)
            if (strcmp(sec->groups[i].members[j], name) == 0)
                json_array_append_new(arr, json_string(sec->groups[i].name));
    if (is_user(sec, name)) {
        json_array_append_new(arr, json_string(PS_ACL_USERS));
        json_array_append_new(arr, json_string(PS_ACL_EVERYONE));
    }
    return arr;
}

static json_t *object_attrs(const struct ps_security *sec, bool users, const char *name)
{
    json_t *o = json_pack("{s:s, s:s, s:o}", "name", name, "type", users ? "user" : "group",
                          "member_of", member_of(sec, name));
    if (!users) {
        json_t *members = json_array();
        const struct sec_group *g = find_group(sec, name);
        for (int j = 0; g && j < g->count; j++)
            json_array_append_new(members, json_string(g->members[j]));
        json_object_set_new(o, "members", members);
    }
    return o;
}

static json_t *names(const struct ps_security *sec, bool users)
{
    json_t *arr = json_array();
    if (users) {
        json_array_append_new(arr, json_string(PS_ACL_ROOT));
        json_array_append_new(arr, json_string(PS_SECURITY_ADMIN_USER));
        for (int i = 0; i < sec->user_count; i++)
            json_array_append_new(arr, json_string(sec->users[i]));
        return arr;
    }
    for (size_t i = 0; i < sizeof builtin_groups / sizeof *builtin_groups; i++)
        json_array_append_new(arr, json_string(builtin_groups[i]));
    for (int i = 0; i < sec->group_count; i++)
        if (!builtin_group(sec->groups[i].name))
            json_array_append_new(arr, json_string(sec->groups[i].name));
    return arr;
}

static int resolve_object(struct ps_service *svc, const char *path, bool *users, char *name,
                          char *attr, struct ps_error *err)
{
    int rc = parse_path(path, users, name, 256, attr, 64, err);
    if (rc == 0 && *name &&
        !(*users ? is_user(svc->security, name) : is_group(svc->security, name)))
        rc = ps_error_set(err, PS_ENOENT, "path %s does not exist: no %s \"%s\"", path,
                          *users ? "user" : "group", name);
    return rc;
}

int ps_security_get(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err)
{
    bool users;
    char name[256], attr[64];
    int rc = resolve_object(svc, path, &users, name, attr, err);
    if (rc != 0)
        return rc;
    if (!*name) {
        json_t *map = json_object(), *list = names(svc->security, users);
        size_t i;
        json_t *n;
        json_array_foreach(list, i, n)
            json_object_set_new(map, json_string_value(n), json_object());
        json_decref(list);
        *out = map;
        return 0;
    }
    if (!*attr) {
        *out = json_object();
        return 0;
    }
    json_t *attrs = object_attrs(svc->security, users, name);
    json_t *v = json_object_get(attrs, attr);
    if (!v) {
        json_decref(attrs);
        return ps_error_set(err, PS_ENOENT, "attribute \"%s\" of %s is not found", attr, path);
    }
    *out = json_incref(v);
    json_decref(attrs);
    return 0;
}

int ps_security_list(struct ps_service *svc, const char *path, json_t **out, struct ps_error *err)
{
    bool users;
    char name[256], attr[64];
    int rc = resolve_object(svc, path, &users, name, attr, err);
    if (rc == 0 && (*name || *attr))
        rc = ps_error_set(err, PS_EINVAL, "%s has no children to list", path);
    if (rc == 0)
        *out = names(svc->security, users);
    return rc;
}

bool ps_security_exists(struct ps_service *svc, const char *path)
{
    bool users;
    char name[256], attr[64];
    struct ps_error e;
    ps_error_init(&e);
    if (resolve_object(svc, path, &users, name, attr, &e) != 0)
        return false;
    if (!*attr)
        return true;
    json_t *attrs = object_attrs(svc->security, users, name);
    bool has = json_object_get(attrs, attr) != NULL;
    json_decref(attrs);
    return has;
}

/* ---- changing ------------------------------------------------------------------------------ */

int ps_security_require_superuser(struct ps_service *svc, const struct ps_auth_identity *who,
                                  const char *what, struct ps_error *err)
{
    if (ps_security_superuser(svc->security, who))
        return 0;
    return ps_error_set(err, PS_EPERM,
                        "Access denied for user \"%s\": %s needs a member of superusers",
                        who->user, what);
}

static int check_name(const char *type, const char *name, struct ps_error *err)
{
    if (!name || !*name)
        return ps_error_set(err, PS_EINVAL, "create %s needs attributes/name", type);
    if (strlen(name) > PS_AUTH_MAX_USER_LEN)
        return ps_error_set(err, PS_EINVAL, "name: \"%.40s...\" is longer than %d bytes", name,
                            PS_AUTH_MAX_USER_LEN);
    for (const char *p = name; *p; p++)
        if (*p == '/' || *p == '@' || *p == '&' || *p == '*' || *p == '[' || *p == '{' ||
            (unsigned char)*p <= ' ')
            return ps_error_set(err, PS_EINVAL,
                                "name: \"%s\" may not contain '%c' (a %s name is a path node)",
                                name, *p > ' ' ? *p : '?', type);
    return 0;
}

int ps_security_create(struct ps_service *svc, const struct ps_auth_identity *who,
                       const json_t *body, struct ps_error *err)
{
    const char *type = json_string_value(json_object_get(body, "type"));
    bool user = strcmp(type, "user") == 0;
    int rc = ps_security_require_superuser(svc, who, user ? "creating users" : "creating groups", err);
    if (rc != 0)
        return rc;
    const char *name = json_string_value(
        json_object_get(json_object_get(body, "attributes"), "name"));
    const char *path = json_string_value(json_object_get(body, "path"));
    char from_path[256], attr[64];
    bool users = user;
    if (!name && path) {
        if ((rc = parse_path(path, &users, from_path, sizeof from_path, attr, sizeof attr, err)))
            return rc;
        if (users != user || !*from_path || *attr)
            return ps_error_set(err, PS_EINVAL, "cannot create a %s at %s: expected //sys/%s/NAME",
                                type, path, user ? "users" : "groups");
        name = from_path;
    }
    if ((rc = check_name(type, name, err)) != 0)
        return rc;
    struct ps_security *sec = svc->security;
    if (is_user(sec, name) || is_group(sec, name)) {
        if (json_is_true(json_object_get(body, "ignore_existing")) &&
            (user ? is_user(sec, name) : is_group(sec, name)))
            return 0;
        return ps_error_set(err, PS_EEXIST, "%s \"%s\" already exists",
                            is_user(sec, name) ? "User" : "Group", name);
    }
    if (user) {
        if (add_string(&sec->users, &sec->user_count, name) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        int r = find_removed(sec, name);
        if (r >= 0)
            drop_string(sec->removed, &sec->removed_count, r);
        ps_journal_put(svc->journal, "user", name, json_object());
    } else {
        struct sec_group *g = add_group(sec, name);
        if (!g)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        persist_group(svc, g);
    }
    if (rebuild_view(sec) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ps_svc_log(svc, "info", user ? "user_created" : "group_created", "name=%s by=%s", name,
               who ? who->user : "-");
    return 0;
}

/* Removes name from every group's members (a removed user or group). */
static void forget_member(struct ps_service *svc, const char *name)
{
    struct ps_security *sec = svc->security;
    for (int i = 0; i < sec->group_count; i++) {
        struct sec_group *g = &sec->groups[i];
        for (int j = 0; j < g->count; j++)
            if (strcmp(g->members[j], name) == 0) {
                drop_string(g->members, &g->count, j);
                persist_group(svc, g);
                break;
            }
    }
}

int ps_security_remove(struct ps_service *svc, const struct ps_auth_identity *who,
                       const char *path, struct ps_error *err)
{
    int rc = ps_security_require_superuser(svc, who, "removing users and groups", err);
    bool users;
    char name[256], attr[64];
    if (rc == 0)
        rc = resolve_object(svc, path, &users, name, attr, err);
    if (rc != 0)
        return rc;
    if (!*name || *attr || builtin_user(name) || builtin_group(name))
        return ps_error_set(err, PS_EINVAL, "%s cannot be removed%s", path,
                            *name && !*attr ? ": it is built in" : "");
    struct ps_security *sec = svc->security;
    if (users) {
        /* remembered: as upstream, a removed user's tokens no longer authenticate */
        if (add_string(&sec->removed, &sec->removed_count, name) != 0)
            return ps_error_set(err, PS_ENOMEM, "out of memory");
        drop_string(sec->users, &sec->user_count, find_user(sec, name));
        ps_journal_put(svc->journal, "user", name, json_pack("{s:b}", "removed", 1));
    } else {
        struct sec_group *g = find_group(sec, name);
        for (int j = 0; j < g->count; j++)
            free(g->members[j]);
        free(g->members);
        free(g->name);
        memmove(g, g + 1, (size_t)(sec->group_count - (g - sec->groups) - 1) * sizeof *g);
        sec->group_count--;
        ps_journal_put(svc->journal, "group", name, NULL);
    }
    forget_member(svc, name);
    if (rebuild_view(sec) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ps_svc_log(svc, "info", users ? "user_removed" : "group_removed", "name=%s", name);
    return 0;
}

int ps_security_member(struct ps_service *svc, const struct ps_auth_identity *who, bool add,
                       const json_t *body, struct ps_error *err)
{
    int rc = ps_security_require_superuser(svc, who, "changing group members", err);
    if (rc != 0)
        return rc;
    const char *member = json_string_value(json_object_get(body, "member"));
    const char *group = json_string_value(json_object_get(body, "group"));
    if (!member || !group)
        return ps_error_set(err, PS_EINVAL, "missing parameter \"%s\"", member ? "group" : "member");
    struct ps_security *sec = svc->security;
    if (!is_group(sec, group))
        return ps_error_set(err, PS_ENOENT, "no such group \"%s\"", group);
    if (strcmp(group, PS_ACL_EVERYONE) == 0 || strcmp(group, PS_ACL_USERS) == 0)
        return ps_error_set(err, PS_EINVAL, "group \"%s\": every user is a member already", group);
    if (!is_user(sec, member) && !is_group(sec, member))
        return ps_error_set(err, PS_ENOENT, "no such subject \"%s\"", member);
    struct sec_group *g = find_group(sec, group);
    int at = -1;
    for (int j = 0; g && j < g->count; j++)
        if (strcmp(g->members[j], member) == 0)
            at = j;
    if (add && at >= 0)
        return ps_error_set(err, PS_EEXIST, "Member \"%s\" is already present in group \"%s\"",
                            member, group);
    if (!add && at < 0)
        return ps_error_set(err, PS_ENOENT, "Member \"%s\" is not present in group \"%s\"",
                            member, group);
    if (!add && strcmp(group, PS_ACL_SUPERUSERS) == 0 && strcmp(member, PS_SECURITY_ADMIN_USER) == 0)
        return ps_error_set(err, PS_EINVAL, "the bootstrap admin \"%s\" is always a member of %s",
                            member, group);
    if (add && is_group(sec, member) &&
        (strcmp(member, group) == 0 || ps_acl_member(&sec->view_groups, group, member)))
        return ps_error_set(err, PS_EINVAL,
                            "Adding group \"%s\" to group \"%s\" would produce a cycle", member,
                            group);
    if (add && add_string(&g->members, &g->count, member) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    if (!add)
        drop_string(g->members, &g->count, at);
    persist_group(svc, g);
    if (rebuild_view(sec) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    ps_svc_log(svc, "info", add ? "member_added" : "member_removed", "member=%s group=%s",
               member, group);
    return 0;
}

json_t *ps_security_root_acl(const struct ps_security *sec)
{
    struct ps_value v;
    if (ps_acl_to_value(&sec->root_acl, &v) != 0)
        return NULL;
    json_t *j = ps_value_to_json(&v);
    ps_value_release(&v);
    return j;
}

int ps_security_set_root_acl(struct ps_service *svc, const struct ps_auth_identity *who,
                             const json_t *value, struct ps_error *err)
{
    struct ps_security *sec = svc->security;
    int rc = 0;
    if (!ps_security_superuser(sec, who))
        rc = ps_pool_acl_require(&sec->access, NULL, NULL, who->user, PS_PERM_ADMINISTER, err);
    struct ps_value v;
    if (rc == 0 && (rc = ps_json_to_value(value, &v, err)) == 0) {
        struct ps_acl acl;
        if (v.type == PS_VALUE_NULL)
            rc = ps_pool_trees_default_acl(&acl);
        else
            rc = ps_acl_parse(&v, "acl", &acl, err);
        ps_value_release(&v);
        if (rc == 0) {
            ps_acl_release(&sec->root_acl);
            sec->root_acl = acl;
            json_t *shown = ps_security_root_acl(sec);
            ps_journal_put(svc->journal, "acl", "//sys/pool_trees",
                           json_pack("{s:o}", "acl", shown ? shown : json_array()));
            ps_svc_log(svc, "info", "config_changed", "path=//sys/pool_trees/@acl");
        }
    }
    return rc;
}
