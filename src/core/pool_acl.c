#include "core/pool_acl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool_tree_impl.h"

#define ROOT_NAME "node //sys/pool_trees"

static char default_subject[] = PS_ACL_USERS;
static char *default_subjects[] = {default_subject};
static struct ps_ace default_ace = {PS_ACL_ALLOW, 1, default_subjects, PS_PERM_USE,
                                    PS_ACL_OBJECT_AND_DESCENDANTS};
static const struct ps_acl default_root_acl = {1, &default_ace};

int ps_pool_trees_default_acl(struct ps_acl *out)
{
    return ps_acl_copy(out, &default_root_acl);
}

/* The object name of pool p (NULL: the tree) in tree: "node //sys/pool_trees/t/a/b". */
static char *object_name(const struct ps_pool_tree *tree, const struct ps_pool *p)
{
    size_t n = strlen(ROOT_NAME) + 2 + strlen(tree->name);
    for (const struct ps_pool *a = p; a && !a->is_root; a = a->parent)
        n += strlen(a->name) + 1;
    char *s = malloc(n);
    if (!s)
        return NULL;
    size_t end = n - 1;
    s[end] = '\0';
    for (const struct ps_pool *a = p; a && !a->is_root; a = a->parent) {
        size_t len = strlen(a->name);
        end -= len;
        memcpy(s + end, a->name, len);
        s[--end] = '/';
    }
    char *prefix = s;
    snprintf(prefix, end + 1, "%s/%s", ROOT_NAME, tree->name);
    if (p && !p->is_root)
        s[end] = '/';   /* snprintf ended the prefix where the first pool's slash goes */
    return s;
}

struct chain {
    struct ps_acl_object *objects;
    char **names;
    int count;
};

static void chain_release(struct chain *c)
{
    for (int i = 0; i < c->count; i++)
        free(c->names[i]);
    free(c->names);
    free(c->objects);
}

static void push(struct chain *c, const struct ps_acl *acl, bool inherit, char *name)
{
    c->names[c->count] = name;
    c->objects[c->count] = (struct ps_acl_object){acl, inherit, name ? name : ROOT_NAME};
    c->count++;
}

/* Returns 0 or PS_ENOMEM (then c holds nothing). A name that cannot be allocated is shown as
 * the root's. */
static int build(struct chain *c, const struct ps_pool_access *access,
                 const struct ps_pool_tree *tree, const struct ps_pool *pool)
{
    int depth = 2;
    for (const struct ps_pool *a = pool; tree && a && !a->is_root; a = a->parent)
        depth++;
    c->count = 0;
    c->objects = calloc((size_t)depth, sizeof *c->objects);
    c->names = calloc((size_t)depth, sizeof *c->names);
    if (!c->objects || !c->names) {
        chain_release(c);
        return PS_ENOMEM;
    }
    for (const struct ps_pool *a = pool; tree && a && !a->is_root; a = a->parent) {
        if (a->ephemeral)
            push(c, NULL, true, object_name(tree, a));
        else
            push(c, &a->config.acl, a->config.inherit_acl, object_name(tree, a));
    }
    if (tree)
        push(c, &tree->config.acl, tree->config.inherit_acl, object_name(tree, NULL));
    const struct ps_acl *root = access && access->pool_trees_acl ? access->pool_trees_acl
                                                                 : &default_root_acl;
    push(c, root, false, NULL);
    return 0;
}

static bool acting_superuser(const struct ps_pool_access *access, const char *user)
{
    return access && access->acting_superuser && strcmp(access->acting_superuser, user) == 0;
}

enum ps_acl_action ps_pool_acl_check(const struct ps_pool_access *access,
                                     const struct ps_pool_tree *tree, const struct ps_pool *pool,
                                     const char *user, unsigned permission)
{
    if (acting_superuser(access, user))
        return PS_ACL_ALLOW;
    struct chain c;
    if (build(&c, access, tree, pool) != 0)
        return PS_ACL_DENY;
    struct ps_acl_result r = ps_acl_check(c.objects, c.count, access ? access->groups : NULL,
                                          user, permission);
    chain_release(&c);
    return r.action;
}

int ps_pool_acl_effective(const struct ps_pool_access *access, const struct ps_pool_tree *tree,
                          const struct ps_pool *pool, struct ps_value *out)
{
    struct chain c;
    if (build(&c, access, tree, pool) != 0)
        return PS_ENOMEM;
    int rc = ps_acl_effective(c.objects, c.count, out);
    chain_release(&c);
    return rc;
}

int ps_pool_acl_require(const struct ps_pool_access *access, const struct ps_pool_tree *tree,
                        const struct ps_pool *pool, const char *user, unsigned permission,
                        struct ps_error *err)
{
    if (acting_superuser(access, user))
        return 0;
    struct chain c;
    if (build(&c, access, tree, pool) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory checking permissions");
    struct ps_acl_result r = ps_acl_check(c.objects, c.count, access ? access->groups : NULL,
                                          user, permission);
    int rc = 0;
    if (r.action == PS_ACL_DENY)
        rc = ps_acl_denied(err, user, permission, c.objects[0].name, &r);
    chain_release(&c);
    return rc;
}
