/* tree_template.c — template_pool_tree_config_map (tree_template.h). */
#include "core/tree_template.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tree_config.h"

int ps_value_patch(struct ps_value *dst, const struct ps_value *src)
{
    if (dst->type != PS_VALUE_MAP || src->type != PS_VALUE_MAP) {
        struct ps_value copy;
        if (ps_value_copy(&copy, src) != 0)
            return PS_ENOMEM;
        ps_value_release(dst);
        *dst = copy;
        return 0;
    }
    for (int i = 0; i < src->count; i++) {
        struct ps_value *have = (struct ps_value *)ps_value_find(dst, src->keys[i]);
        if (have) {
            if (ps_value_patch(have, &src->items[i]) != 0)
                return PS_ENOMEM;
            continue;
        }
        struct ps_value copy;
        if (ps_value_copy(&copy, &src->items[i]) != 0 || ps_value_put(dst, src->keys[i], &copy) != 0)
            return PS_ENOMEM;
    }
    return 0;
}

/* Whether the whole of name matches filter (false for a filter that does not compile). */
static bool full_match(const char *filter, const char *name)
{
    size_t n = strlen(filter) + 5;
    char *anchored = malloc(n);
    if (!anchored)
        return false;
    snprintf(anchored, n, "^(%s)$", filter);
    regex_t re;
    bool ok = regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB) == 0;
    free(anchored);
    if (!ok)
        return false;
    ok = regexec(&re, name, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

static int check_one(const char *name, const struct ps_value *t, struct ps_error *err)
{
    if (t->type != PS_VALUE_MAP)
        return ps_error_set(err, PS_EINVAL, "template_pool_tree_config_map/%s: must be a map of "
                            "priority, filter and config, got a %s", name, ps_value_type_name(t->type));
    for (int i = 0; i < t->count; i++)
        if (strcmp(t->keys[i], "priority") != 0 && strcmp(t->keys[i], "filter") != 0 &&
            strcmp(t->keys[i], "config") != 0)
            return ps_error_set(err, PS_EINVAL, "template_pool_tree_config_map/%s/%s: unknown key "
                                "(expected priority, filter, config)", name, t->keys[i]);
    const struct ps_value *p = ps_value_find(t, "priority");
    if (!p || p->type != PS_VALUE_NUMBER || p->number != (double)(long long)p->number)
        return ps_error_set(err, PS_EINVAL, "template_pool_tree_config_map/%s/priority: must be "
                            "an integer", name);
    const struct ps_value *f = ps_value_find(t, "filter");
    if (f && f->type != PS_VALUE_NULL) {
        if (f->type != PS_VALUE_STRING)
            return ps_error_set(err, PS_EINVAL, "template_pool_tree_config_map/%s/filter: must be "
                                "a string", name);
        regex_t re;
        char anchored[1100];
        snprintf(anchored, sizeof anchored, "^(%s)$", f->string);
        if (strlen(f->string) > 1000 || regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB) != 0)
            return ps_error_set(err, PS_EINVAL, "template_pool_tree_config_map/%s/filter: \"%.200s\" "
                                "is not a valid regular expression", name, f->string);
        regfree(&re);
    }
    const struct ps_value *c = ps_value_find(t, "config");
    struct ps_tree_config cfg;
    if (ps_tree_config_init(&cfg) != 0)
        return ps_error_set(err, PS_ENOMEM, "out of memory");
    int rc = c && c->type != PS_VALUE_NULL ? ps_tree_config_apply(&cfg, c, err) : 0;
    ps_tree_config_release(&cfg);
    if (rc != 0)
        ps_error_prefix(err, "template_pool_tree_config_map/%s/config", name);
    return rc;
}

int ps_tree_templates_check(const struct ps_value *map, struct ps_error *err)
{
    if (!map || map->type == PS_VALUE_NULL)
        return 0;
    if (map->type != PS_VALUE_MAP)
        return ps_error_set(err, PS_EINVAL, "template_pool_tree_config_map: must be a map, got a %s",
                            ps_value_type_name(map->type));
    for (int i = 0; i < map->count; i++) {
        int rc = check_one(map->keys[i], &map->items[i], err);
        if (rc != 0)
            return rc;
        double pi = ps_value_find(&map->items[i], "priority")->number;
        for (int j = 0; j < i; j++)
            if (ps_value_find(&map->items[j], "priority")->number == pi)
                return ps_error_set(err, PS_EINVAL, "\"template_pool_tree_config_map\" has equal "
                                    "priority for templates \"%s\" and \"%s\" (priority %lld)",
                                    map->keys[j], map->keys[i], (long long)pi);
    }
    return 0;
}

int ps_tree_templates_compile(const struct ps_value *map, const char *tree_name, struct ps_value *out)
{
    *out = ps_value_map();
    if (!map || map->type != PS_VALUE_MAP)
        return 0;
    /* matching templates by priority (distinct after the check; name breaks ties anyway) */
    int *order = malloc(sizeof *order * (size_t)(map->count + 1));
    if (!order)
        return PS_ENOMEM;
    int n = 0;
    for (int i = 0; i < map->count; i++) {
        const struct ps_value *f = ps_value_find(&map->items[i], "filter");
        if (f && f->type == PS_VALUE_STRING && full_match(f->string, tree_name))
            order[n++] = i;
    }
    for (int a = 1; a < n; a++)   /* insertion sort: few templates */
        for (int b = a; b > 0; b--) {
            double pb = ps_value_find(&map->items[order[b]], "priority")->number;
            double pa = ps_value_find(&map->items[order[b - 1]], "priority")->number;
            if (pa < pb || (pa == pb && strcmp(map->keys[order[b - 1]], map->keys[order[b]]) < 0))
                break;
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    int rc = 0;
    for (int k = 0; rc == 0 && k < n; k++) {
        const struct ps_value *c = ps_value_find(&map->items[order[k]], "config");
        if (c && c->type == PS_VALUE_MAP)
            rc = ps_value_patch(out, c);
    }
    free(order);
    if (rc != 0)
        ps_value_release(out);
    return rc;
}
